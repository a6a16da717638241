#!/usr/bin/env python3
"""Generate the embedding fixtures of eval's scikit-learn agreement tests.

Writes embed2.csv (2 classes) and embed3.csv (3 classes): 300 rows of 16
float32-representable values each, moderately overlapping Gaussian
mixtures, with columns label, fold, x0..x15. `fold` is the outer test fold of
sklearn's StratifiedKFold(10, shuffle=True, random_state=0), stored so that
the Go test can use exactly the same outer folds.

Run with Debian's python3 (python3-numpy, python3-sklearn):
    /usr/bin/python3 gen_fixture.py && /usr/bin/python3 sklearn_reference.py
"""
import numpy as np
from sklearn.model_selection import StratifiedKFold

D = 16


def mixture(rng, n, centers, scale):
    comp = rng.integers(0, len(centers), size=n)
    return centers[comp] + scale * rng.standard_normal((n, D))


def make(rng, counts, spread):
    centers = [spread * rng.standard_normal((2, D)) for _ in counts]
    xs, ys = [], []
    for c, n in enumerate(counts):
        xs.append(mixture(rng, n, centers[c], 1.0 + 0.2 * c))
        ys.append(np.full(n, c))
    x = np.concatenate(xs).astype(np.float32)
    y = np.concatenate(ys)
    perm = rng.permutation(len(y))
    return x[perm], y[perm]


def write(path, x, y):
    folds = np.empty(len(y), dtype=int)
    skf = StratifiedKFold(n_splits=10, shuffle=True, random_state=0)
    for f, (_, test) in enumerate(skf.split(x, y)):
        folds[test] = f
    with open(path, "w") as fh:
        fh.write("label,fold," + ",".join("x%d" % j for j in range(D)) + "\n")
        for i in range(len(y)):
            vals = ",".join(repr(float(v)) for v in x[i])
            fh.write("%d,%d,%s\n" % (y[i], folds[i], vals))


def main():
    rng = np.random.default_rng(20240611)
    x, y = make(rng, [170, 130], 0.45)
    write("embed2.csv", x, y)
    x, y = make(rng, [120, 100, 80], 0.45)
    write("embed3.csv", x, y)


if __name__ == "__main__":
    main()
