#!/usr/bin/python3
"""How often a graph's nearest neighbours in an embedding are copies of it.

Reads a TU dataset in the GIN text format (NAME.txt or NAME.txt.gz) and one
or more N×d embeddings (.npy, rows in dataset order, as `go run ./cmd/train
-embed RUN -o FILE.npy` writes them). A graph's signature is its node count
and sorted degree sequence (equal for isomorphic graphs; two graphs of equal
signature need not be isomorphic). For each embedding and K it prints, over
every graph's K nearest neighbours by cosine (itself excluded): the share
with the graph's signature, with its label, and with cosine above 0.9999;
and, as the baseline a uniform batch gives, the same shares for a random
other graph. Needs numpy (Debian's python3-numpy); not part of the Go
framework.

Usage: scripts/neighbour_duplicates.py DATASET.txt.gz EMB.npy [EMB.npy ...] [-k 10,100]
"""
import argparse
import gzip

import numpy as np


def read_gin(path):
    op = gzip.open if path.endswith(".gz") else open
    sigs, labels = [], []
    with op(path, "rt") as f:
        n = int(f.readline())
        for _ in range(n):
            nodes, label = map(int, f.readline().split()[:2])
            degs = sorted(int(f.readline().split()[1]) for _ in range(nodes))
            sigs.append((nodes, tuple(degs)))
            labels.append(label)
    ids = {s: i for i, s in enumerate(dict.fromkeys(sigs))}
    return np.array([ids[s] for s in sigs]), np.array(labels)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset")
    ap.add_argument("embeddings", nargs="+")
    ap.add_argument("-k", default="10,100", help="comma-separated K values")
    a = ap.parse_args()
    sig, lab = read_gin(a.dataset)
    n = len(sig)
    cnt = np.bincount(sig)
    same_sig = ((cnt[sig] - 1) / (n - 1)).mean()
    lcnt = np.bincount(lab)
    same_lab = ((lcnt[lab] - 1) / (n - 1)).mean()
    print(f"{a.dataset}: {n} graphs, {len(cnt)} signatures, {int((cnt[sig] > 1).sum())} graphs share theirs, largest group {cnt.max()}")
    print(f"random other graph: same signature {100 * same_sig:.2f}%, same label {100 * same_lab:.1f}%")
    for path in a.embeddings:
        e = np.load(path).astype(np.float64)
        if e.shape[0] != n:
            raise SystemExit(f"{path}: {e.shape[0]} rows, the dataset has {n} graphs")
        e /= np.linalg.norm(e, axis=1, keepdims=True) + 1e-12
        s = e @ e.T
        np.fill_diagonal(s, -np.inf)
        for k in map(int, a.k.split(",")):
            nb = np.argpartition(-s, k, axis=1)[:, :k]
            rows = np.arange(n)[:, None]
            print(f"{path} K={k}: same signature {100 * (sig[nb] == sig[:, None]).mean():.1f}%, "
                  f"same label {100 * (lab[nb] == lab[:, None]).mean():.1f}%, "
                  f"cosine > 0.9999 {100 * (s[rows, nb] > 0.9999).mean():.1f}%")


if __name__ == "__main__":
    main()
