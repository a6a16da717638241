"""Reference orders for TestReverseCuthillMcKeeSciPy (sampler/global_test.go).

Regenerate with: /usr/bin/python3 sampler/testdata/rcm_scipy.py > sampler/testdata/rcm_scipy.json
(SciPy's scipy.sparse.csgraph.reverse_cuthill_mckee on random undirected
graphs, some disconnected; a graph is kept only when numpy's argsort of the
degrees equals the stable argsort, so that the order of the BFS seeds does
not depend on how numpy breaks ties.)
"""
import json

import numpy as np
import scipy
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import reverse_cuthill_mckee

rng = np.random.default_rng(36)
out = []
while len(out) < 40:
    n = int(rng.integers(5, 60))
    p = float(rng.uniform(0.03, 0.3))
    a = np.triu(rng.random((n, n)) < p, 1)
    a = a | a.T
    deg = a.sum(axis=1)
    if not np.array_equal(np.argsort(deg), np.argsort(deg, kind="stable")):
        continue
    m = csr_matrix(a.astype(np.int8))
    m.sort_indices()
    order = reverse_cuthill_mckee(m, symmetric_mode=True)
    i, j = np.nonzero(np.triu(a, 1))
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    bw = int(np.max(np.abs(pos[i] - pos[j]))) if len(i) else 0
    out.append({"n": n, "edges": [[int(x), int(y)] for x, y in zip(i, j)], "order": [int(x) for x in order], "bandwidth": bw})
print(json.dumps({"scipy": scipy.__version__, "numpy": np.__version__, "graphs": out}))
