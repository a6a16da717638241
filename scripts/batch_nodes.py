#!/usr/bin/env python3
"""Batch sizes and step times from a graph run directory's metrics.jsonl
(train.log_every: 1): per run, the nodes of the sampled batches and the
step time, and over all runs the step time per 1,000 nodes by batch size."""
import json, collections, statistics, sys

if len(sys.argv) != 2:
    sys.exit("usage: scripts/batch_nodes.py DIR/metrics.jsonl (a graph run with train.log_every: 1)")
recs = collections.defaultdict(list)
try:
    with open(sys.argv[1]) as f:
        for no, line in enumerate(f, 1):
            try:
                m = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit("%s:%d: not a JSON record: %s" % (sys.argv[1], no, e))
            if m.get("event") is None and "batch_nodes" in m:
                recs[m["run"]].append(m)
except OSError as e:
    sys.exit("batch_nodes.py: %s" % e)
if not recs or any(len(rs) < 3 for rs in recs.values()):
    sys.exit("%s: want step records with batch_nodes, three or more a run (a graph method, train.log_every: 1)" % sys.argv[1])
print("| run | steps | batch nodes: mean | median | 90th pct | max | training s | ms/step | corr(step ms, nodes) |")
print("|---|---|---|---|---|---|---|---|---|")
pts = []
for run, rs in recs.items():
    bn = [r["batch_nodes"] for r in rs]
    dt = [(b["seconds"] - a["seconds"]) * 1000 for a, b in zip(rs, rs[1:])]
    x = bn[1:]
    mx, my = statistics.mean(x), statistics.mean(dt)
    cov = sum((a - mx) * (b - my) for a, b in zip(x, dt)) / len(x)
    corr = cov / (statistics.pstdev(x) * statistics.pstdev(dt))
    pts += list(zip(x, dt))
    print("| %s | %d | %.0f | %.0f | %.0f | %d | %.1f | %.1f | %.2f |" % (
        run, len(rs), statistics.mean(bn), statistics.median(bn), sorted(bn)[int(0.9 * len(bn))], max(bn),
        rs[-1]["seconds"], statistics.mean(dt), corr))
print()
print("| batch nodes | steps (all runs) | median ms/step | median ms per 1,000 nodes |")
print("|---|---|---|---|")
for lo, hi in [(0, 40e3), (40e3, 60e3), (60e3, 80e3), (80e3, 120e3), (120e3, 180e3), (180e3, 1e9)]:
    p = [(n, t) for n, t in pts if lo <= n < hi]
    if p:
        print("| %s | %d | %.1f | %.2f |" % ("%.0fk–%s" % (lo / 1e3, "%.0fk" % (hi / 1e3) if hi < 1e9 else ""), len(p),
                                            statistics.median([t for _, t in p]), statistics.median([t / n * 1000 for n, t in p])))
