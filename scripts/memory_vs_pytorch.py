#!/usr/bin/python3
"""Peak memory of a GraphCL or MVGRL run, Go against PyTorch, on the same graphs.

`make memory-vs-pytorch` (not part of `make test` or CI). The graphs are the
dataset of a Go config (default scripts/standin-reddit-graphcl.yaml, a
generated stand-in of REDDIT-BINARY's size; scripts/standin-reddit-mvgrl.yaml
for MVGRL), written in the TU format by `go run ./cmd/train -config C
-export-tu DIR`, so that both sides read the very same graphs. Then, one
after the other, each under /usr/bin/time (its maximum resident set size, %M):

  - Go: one run of the config (seed 0, the Uniform sampler, its epochs and
    batch size; evaluation with 2 outer and 2 inner folds);
  - PyTorch: the same number of steps of the same method, then the
    embeddings of every graph in evaluation mode, 128 graphs at a time (no
    SVM). GraphCL: the GIN (the config's width and depth, BatchNorm, sum
    pooling, head), InfoNCE τ 0.2 and views (the graph; one of GraphCL's four
    augmentations) of scripts/bench_vs_pytorch.py. MVGRL (train/mvgrl.go):
    both views of every graph computed once (Â and its PPR diffusion with the
    config's α, eps and top_k, from the dense inverse as MVGRL's
    compute_ppr) and kept as PyG keeps edges (int64 edge_index, float32
    weights); two GCN encoders (Linear, sparse propagation, bias, PReLU),
    per-layer sum pooling, MVGRL's node and graph heads, InfoGraph's JSD
    local-global loss across the views.
  Adam with the config's learning rate on both sides.

Features as the Go side's "auto" (one-hot node labels, else a constant 1 per
node) or "auto-degree" (one-hot capped degrees where there are no labels).
2 threads a side by default.

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


def torch_child(args):
    """The PyTorch run (a child process, so that its peak is its own)."""
    torch.set_num_threads(args.threads)
    cfg = json.loads(args.cfg)
    graphs, d_in = bv.parse_tu(args.tu, os.path.basename(args.tu.rstrip("/")), cfg["features"], cfg["max_degree"])
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    run = mvgrl_run if cfg["method"] == "mvgrl" else graphcl_run
    out = run(graphs, d_in, cfg, args, rng)
    out.update({"graphs": len(graphs), "nodes": int(sum(g.n for g in graphs)), "d_in": d_in, "steps": args.steps})
    print(json.dumps(out))


def graphcl_run(graphs, d_in, cfg, args, rng):
    model = bv.GIN(d_in, hidden=cfg["hidden"], layers=cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
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
    return {"loss": float(loss), "train_s": train_s, "emb": list(torch.cat(embs).shape)}


# ---------------------------------------------------------------- MVGRL (train/mvgrl.go)
# The model, views, packing and loss are bench_vs_pytorch's (bv.MVGRL, written
# from kavehhassani/mvgrl).


def mvgrl_run(graphs, d_in, cfg, args, rng):
    t0 = time.perf_counter()
    views = [bv.mvgrl_views(g, cfg["alpha"], cfg["eps"], cfg["top_k"]) for g in graphs]
    views_s = time.perf_counter() - t0
    model = bv.MVGRL(d_in, cfg["hidden"], cfg["layers"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    t0 = time.perf_counter()
    for _ in range(args.steps):
        idx = rng.integers(len(graphs), size=args.batch)
        x, (a1, a2), batch = bv.mvgrl_pack([graphs[i] for i in idx], [views[i] for i in idx])
        l1, g1, l2, g2 = model(x, a1, a2, batch, len(idx))
        loss = bv.local_global_jsd(l1, g2, batch) + bv.local_global_jsd(l2, g1, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    train_s = time.perf_counter() - t0
    embs = []
    with torch.no_grad():
        for lo in range(0, len(graphs), 128):
            gs = graphs[lo:lo + 128]
            x, (a1, a2), batch = bv.mvgrl_pack(gs, views[lo:lo + 128])
            _, g1, _, g2 = model(x, a1, a2, batch, len(gs))
            embs.append(g1 + g2)
    return {"loss": float(loss), "train_s": train_s, "views_s": views_s,
            "nnz_diffusion": int(sum(v[1][1].numel() for v in views)), "emb": list(torch.cat(embs).shape)}


def printed_config(text):
    """The scalar keys of `cmd/train -print-config` as a flat dict of dotted
    paths (lists are skipped): enough for the settings used here."""
    out, stack = {}, []
    for line in text.splitlines():
        m = re.match(r"^( *)([A-Za-z_]+):(?: (.*))?$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 2
        stack = stack[:depth] + [m.group(2)]
        if m.group(3) is not None:
            out[".".join(stack)] = m.group(3).strip('"')
    return out


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
    ap.add_argument("--cfg", help=argparse.SUPPRESS)
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
        pc = printed_config(subprocess.run([binary, "-config", args.config, "-print-config"],
                                           capture_output=True, text=True, check=True).stdout)
        method = pc.get("method", "graphcl")
        if method not in ("graphcl", "mvgrl"):
            bv.die("%s: method %s; this script runs graphcl and mvgrl" % (args.config, method))
        batch = int(pc["train.batch_size"])
        cfg = {"method": method, "features": pc.get("data.features", "auto"), "max_degree": int(pc.get("data.max_degree", 0)),
               "lr": float(pc["train.lr"]), "hidden": int(pc.get("model.hidden", 32)), "layers": int(pc.get("model.layers", 3)),
               "alpha": float(pc.get("model.diffusion.alpha", 0.2)), "eps": float(pc.get("model.diffusion.eps", 1e-4)),
               "top_k": int(pc.get("model.diffusion.top_k", 0))}
        p = subprocess.run([binary, "-config", args.config, "-export-tu", os.path.join(work, "tu")],
                           capture_output=True, text=True)
        if p.returncode != 0:
            bv.die("export failed: %s" % p.stderr)
        tu = p.stderr.strip().split("TU dataset: ")[-1]

        env = dict(os.environ, GOMAXPROCS=str(args.threads))
        go_rss, _, go_s = timed([binary, "-config", args.config, "-out", os.path.join(work, "go-run"),
                                 "-set", "seeds=[0]", "-set", "samplers=[{kind: uniform}]",
                                 "-set", "eval.folds=2", "-set", "eval.inner_folds=2"], env)
        res = json.load(open(os.path.join(work, "go-run", "results.json")))
        # The Go run's step count (its epochs of ⌈N/B⌉ batches) for PyTorch.
        with open(os.path.join(work, "go-run", "metrics.jsonl")) as f:
            steps = max(json.loads(line).get("step", 0) for line in f if line.strip())
        pt_rss, out, pt_s = timed([sys.executable, os.path.abspath(__file__), "--torch-child", "--tu", tu,
                                   "--steps", str(steps), "--batch", str(batch), "--threads", str(args.threads),
                                   "--cfg", json.dumps(cfg)])
        pt = json.loads(out.strip().splitlines()[-1])
        base_rss, _, _ = timed([sys.executable, "-c", "import numpy, torch; torch.set_num_threads(%d); torch.zeros(1) + 1" % args.threads])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=bv.REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=bv.REPO, capture_output=True, text=True).stdout.strip()
    gov = subprocess.run([args.go, "version"], capture_output=True, text=True).stdout.strip()
    info = {"started": started.isoformat(timespec="seconds"), "config": os.path.relpath(args.config, bv.REPO), "method": method,
            "commit": commit + (" (uncommitted changes)" if dirty else ""), "go": gov,
            "torch": torch.__version__, "python": platform.python_version(), "threads": args.threads,
            "graphs": pt["graphs"], "nodes": pt["nodes"], "steps": steps, "batch": batch,
            "go_peak_rss": go_rss, "go_seconds": go_s, "go_run_max_rss": res.get("results", [{}])[0].get("max_rss"),
            "torch_peak_rss": pt_rss, "torch_import_rss": base_rss, "torch_seconds": pt_s, "torch_train_seconds": pt["train_s"],
            "load_average_end": os.getloadavg(), "torch_child": pt}
    gb = lambda b: "%.2f GB" % (b / 1e9)  # noqa: E731
    md = ["# Peak memory of a%s run, Go vs PyTorch (`make memory-vs-pytorch`)" % (" GraphCL" if method == "graphcl" else "n MVGRL"), "",
          "Started %s; config `%s` (%d graphs, %d nodes; %d steps of %d graphs); commit %s; %s; PyTorch %s; %d threads a side." % (
              info["started"], info["config"], info["graphs"], info["nodes"], steps, batch, info["commit"], gov, info["torch"], args.threads), "",
          "| side | peak RSS (/usr/bin/time %M) | wall time | what ran |", "|---|---|---|---|",
          "| Go | **%s** | %.0f s | `cmd/train`, one run of the config (seed 0, Uniform): training, then the SVM protocol with 2×2 folds |" % (gb(go_rss), go_s),
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
