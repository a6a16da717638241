#!/usr/bin/python3
"""Peak memory of a GraphCL run, Go against PyTorch, on the same graphs.

`make memory-vs-pytorch` (not part of `make test` or CI). The graphs are the
dataset of a Go config (default scripts/standin-reddit-graphcl.yaml, a
generated stand-in of REDDIT-BINARY's size), written in the TU format by
`go run ./cmd/train -config C -export-tu DIR`, so that both sides read the
very same graphs. Then, one after the other, each under /usr/bin/time
(its maximum resident set size, %M):

  - Go: the config's run (GraphCL, its epochs and batch size; evaluation
    with 2 outer and 2 inner folds, -set eval.folds=2 -set eval.inner_folds=2);
  - PyTorch: the same number of GraphCL steps (GIN 3×32, BatchNorm, sum
    pooling, head 96-96-96, InfoNCE τ 0.2, Adam lr 0.01; view 1 the graph,
    view 2 one of GraphCL's four augmentations: the model, loss and views of
    scripts/bench_vs_pytorch.py), then the embeddings of every graph in
    evaluation mode, 128 graphs at a time (no SVM).

Features as the Go side's "auto": one-hot node labels where the dataset has
them, else a constant 1 per node. 2 threads a side by default.

Usage: /usr/bin/python3 scripts/memory_vs_pytorch.py [--config C] [--out DIR]
Writes DIR/<time>/results.md and results.json (default runs/memory-vs-pytorch).
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no scripts/__pycache__ in the work tree
import bench_vs_pytorch as bv  # noqa: E402  (numpy, torch, the GIN, views and loss)

np, torch = bv.np, bv.torch


def read_tu_dir(d, name):
    """A TU dataset as the Go reader gives it (see bench_vs_pytorch.read_tu),
    with "auto" features: one-hot node labels, or a constant 1 per node."""
    f = lambda k: os.path.join(d, "%s_%s.txt" % (name, k))  # noqa: E731
    for k in ("A", "graph_indicator", "graph_labels"):
        if not os.path.isfile(f(k)):
            bv.die("%s not found: expected a TU dataset written by `go run ./cmd/train -export-tu`" % f(k))
    ind = bv.read_ints(f("graph_indicator")) - 1
    n_nodes, n_graphs = ind.size, int(ind.max()) + 1
    a = bv.read_ints(f("A"))
    if a.size % 2:
        bv.die("%s: expected pairs 'u, v'" % f("A"))
    a = a.reshape(-1, 2) - 1
    if os.path.isfile(f("node_labels")):
        nlab = bv.read_ints(f("node_labels"))
        nlab = nlab - nlab.min()
        d_in = int(nlab.max()) + 1
    else:
        nlab, d_in = None, 1
    start = np.searchsorted(ind, np.arange(n_graphs + 1))
    u, v = np.minimum(a[:, 0], a[:, 1]), np.maximum(a[:, 0], a[:, 1])
    key = np.unique(u * n_nodes + v)
    u, v = key // n_nodes, key % n_nodes
    eg = ind[u]
    estart = np.searchsorted(eg, np.arange(n_graphs + 1))
    graphs = []
    for g in range(n_graphs):
        lo, hi = start[g], start[g + 1]
        e = np.stack([u[estart[g]:estart[g + 1]] - lo, v[estart[g]:estart[g + 1]] - lo], 1)
        if nlab is None:
            x = np.ones((hi - lo, 1), dtype=np.float32)
        else:
            x = np.zeros((hi - lo, d_in), dtype=np.float32)
            x[np.arange(hi - lo), nlab[lo:hi]] = 1
        graphs.append(bv.Graph(hi - lo, e, x))
    return graphs, d_in


def torch_child(args):
    """The PyTorch run (a child process, so that its peak is its own)."""
    torch.set_num_threads(args.threads)
    graphs, d_in = read_tu_dir(args.tu, os.path.basename(args.tu.rstrip("/")))
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = bv.GIN(d_in)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    t0 = time.perf_counter()
    model.train()
    for _ in range(args.steps):
        idx = rng.integers(len(graphs), size=args.batch)
        b1 = bv.pack([graphs[i] for i in idx])
        b2 = bv.pack([bv.random4(graphs[i], rng) for i in idx])
        loss = bv.graphcl_loss(model(*b1), model(*b2))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    train_s = time.perf_counter() - t0
    model.eval()
    embs = []
    with torch.no_grad():
        for lo in range(0, len(graphs), 128):
            embs.append(model(*bv.pack(graphs[lo:lo + 128])))
    emb = torch.cat(embs)
    print(json.dumps({"graphs": len(graphs), "nodes": int(sum(g.n for g in graphs)), "d_in": d_in,
                      "steps": args.steps, "loss": float(loss), "train_s": train_s, "emb": list(emb.shape)}))


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time -f %M; returns (peak RSS bytes, stdout, seconds)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%M"] + cmd, capture_output=True, text=True, env=env)
        sec = time.perf_counter() - t0
        if p.returncode != 0:
            bv.die("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
        kb = int(tf.read().split()[-1])
    return kb * 1024, p.stdout, sec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=os.path.join(HERE, "standin-reddit-graphcl.yaml"))
    ap.add_argument("--go", default="go")
    ap.add_argument("--out", default=os.path.join(bv.REPO, "runs", "memory-vs-pytorch"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--torch-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tu", help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.torch_child:
        return torch_child(args)
    if not os.path.exists("/usr/bin/time"):
        bv.die("needs /usr/bin/time (apt-get install time)")

    started = datetime.datetime.now()
    work = tempfile.mkdtemp(prefix="memory-vs-pytorch-")
    try:
        binary = os.path.join(work, "train")
        subprocess.run([args.go, "build", "-o", binary, "./cmd/train"], cwd=bv.REPO, check=True)
        cfg = subprocess.run([binary, "-config", args.config, "-print-config"], capture_output=True, text=True, check=True).stdout
        batch = int(re.search(r"(?m)^\s+batch_size: (\d+)", cfg).group(1))
        p = subprocess.run([binary, "-config", args.config, "-export-tu", os.path.join(work, "tu")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            bv.die("export failed: %s" % p.stderr)
        tu = p.stderr.strip().split("TU dataset: ")[-1]

        env = dict(os.environ, GOMAXPROCS=str(args.threads))
        go_rss, _, go_s = timed([binary, "-config", args.config, "-out", os.path.join(work, "go-run"),
                                 "-set", "eval.folds=2", "-set", "eval.inner_folds=2"], env)
        res = json.load(open(os.path.join(work, "go-run", "results.json")))
        # The Go run's step count (its epochs of ⌈N/B⌉ batches) for PyTorch.
        with open(os.path.join(work, "go-run", "metrics.jsonl")) as f:
            steps = max(json.loads(line).get("step", 0) for line in f if line.strip())
        pt_rss, out, pt_s = timed([sys.executable, os.path.abspath(__file__), "--torch-child", "--tu", tu,
                                   "--steps", str(steps), "--batch", str(batch), "--threads", str(args.threads)])
        pt = json.loads(out.strip().splitlines()[-1])
        base_rss, _, _ = timed([sys.executable, "-c", "import numpy, torch; torch.set_num_threads(%d); torch.zeros(1) + 1" % args.threads])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=bv.REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=bv.REPO, capture_output=True, text=True).stdout.strip()
    gov = subprocess.run([args.go, "version"], capture_output=True, text=True).stdout.strip()
    info = {"started": started.isoformat(timespec="seconds"), "config": os.path.relpath(args.config, bv.REPO),
            "commit": commit + (" (uncommitted changes)" if dirty else ""), "go": gov,
            "torch": torch.__version__, "python": platform.python_version(), "threads": args.threads,
            "graphs": pt["graphs"], "nodes": pt["nodes"], "steps": steps, "batch": batch,
            "go_peak_rss": go_rss, "go_seconds": go_s, "go_run_max_rss": res.get("results", [{}])[0].get("max_rss"),
            "torch_peak_rss": pt_rss, "torch_import_rss": base_rss, "torch_seconds": pt_s, "torch_train_seconds": pt["train_s"],
            "load_average_end": os.getloadavg()}
    gb = lambda b: "%.2f GB" % (b / 1e9)  # noqa: E731
    md = ["# Peak memory of a GraphCL run, Go vs PyTorch (`make memory-vs-pytorch`)", "",
          "Started %s; config `%s` (%d graphs, %d nodes; %d steps of %d graphs); commit %s; %s; PyTorch %s; %d threads a side." % (
              info["started"], info["config"], info["graphs"], info["nodes"], steps, batch, info["commit"], gov, info["torch"], args.threads), "",
          "| side | peak RSS (/usr/bin/time %M) | wall time | what ran |", "|---|---|---|---|",
          "| Go | **%s** | %.0f s | `cmd/train` on the config: training, then the SVM protocol with 2×2 folds |" % (gb(go_rss), go_s),
          "| PyTorch | **%s** | %.0f s (training %.0f s) | the same steps, then the embeddings of every graph (no SVM) |" % (gb(pt_rss), pt_s, pt["train_s"]),
          "| (PyTorch's floor) | %s | | `import numpy, torch` and one tensor op |" % gb(base_rss), "",
          "Go / PyTorch peak: **%.2f**." % (go_rss / pt_rss), ""]
    out_dir = os.path.join(args.out, started.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(info, f, indent=1)
    print("\n".join(md))
    print("written: %s" % os.path.join(out_dir, "results.md"))


if __name__ == "__main__":
    main()
