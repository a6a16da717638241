"""The published BatchSampler code's approach (THUDM/BatchSampler main.py, as
summarised in ../shared/notes/reference-implementations.md), timed on CPU for
the side-by-side with cmd/batchsampler in docs/sampler-service.md:

  graph: for every instance, M candidates drawn uniformly with replacement,
         scored by exp(cos/τ) with torch on CPU, top-K kept (torch.topk);
  walk:  a Python loop — uniform neighbour choice, restart to the start node
         with probability α, stop at B distinct instances.

Usage (Debian's python3-torch):
  /usr/bin/python3 scripts/published_sampler_bench.py -n 50000 -d 128 -m 1000 -k 100 -b 256
It writes the embeddings it used to -emb (an .npy the Go command reads), so
both sides run on the same matrix."""
import argparse, os, random, time

import numpy as np
import torch


def build_graph(z, m, k, tau, chunk):
    n = z.shape[0]
    z = torch.nn.functional.normalize(z, dim=1)
    nbrs = torch.empty((n, k), dtype=torch.int64)
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        cand = torch.randint(0, n, (hi - lo, m))                  # with replacement, self possible
        sim = torch.einsum("bd,bmd->bm", z[lo:hi], z[cand])       # cosine of each candidate
        score = torch.exp(sim / tau)
        top = torch.topk(score, k, dim=1).indices
        nbrs[lo:hi] = torch.gather(cand, 1, top)
    return nbrs


def walk(adj, start, b, alpha, rng):
    seen, order, cur = set([start]), [start], start
    while len(order) < b:
        if rng.random() < alpha:
            cur = start
        else:
            cur = adj[cur][rng.randrange(len(adj[cur]))]
        if cur not in seen:
            seen.add(cur)
            order.append(cur)
    return order


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=50000)
    p.add_argument("-d", type=int, default=128)
    p.add_argument("-m", type=int, default=1000)
    p.add_argument("-k", type=int, default=100)
    p.add_argument("-b", type=int, default=256)
    p.add_argument("-alpha", type=float, default=0.2)
    p.add_argument("-tau", type=float, default=0.5)
    p.add_argument("-chunk", type=int, default=1000)
    p.add_argument("-batches", type=int, default=200)
    p.add_argument("-emb", default="")
    p.add_argument("-threads", type=int, default=os.cpu_count(), help="torch threads (Debian's torch starts with 1)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    z = torch.randn(a.n, a.d)
    if a.emb:
        np.save(a.emb, z.numpy())
    t = time.perf_counter()
    nbrs = build_graph(z, a.m, a.k, a.tau, a.chunk)
    tg = time.perf_counter() - t
    adj = nbrs.tolist()
    rng = random.Random(0)
    t = time.perf_counter()
    for _ in range(a.batches):
        walk(adj, rng.randrange(a.n), a.b, a.alpha, rng)
    tw = (time.perf_counter() - t) / a.batches
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads: N={a.n} d={a.d} M={a.m} K={a.k} B={a.b}")
    print(f"graph build: {tg:.2f} s")
    print(f"walk: {tw*1e3:.3f} ms per batch of {a.b} (mean of {a.batches})")


if __name__ == "__main__":
    main()
