"""Reference values for eval/spearman_test.go (TestSpearmanScipy).

Run with Debian's python3-scipy (SciPy 1.10.1, NumPy 1.24.2 when recorded):
    /usr/bin/python3 eval/testdata/spearman_reference.py
It prints the inputs (with many ties) and scipy's rankdata / spearmanr /
pearsonr results; the test holds a copy of the printed numbers.
"""
import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20240601)
x = np.round(rng.normal(size=25), 1)          # ties from rounding
y = rng.integers(0, 6, size=25).astype(float)  # heavy ties, like STS gold scores
y[:5] = x[:5] * 2                              # some agreement
print("# scipy", scipy.__version__, "numpy", np.__version__)
print("x =", ", ".join(repr(float(v)) for v in x))
print("y =", ", ".join(repr(float(v)) for v in y))
print("rank_x =", ", ".join(repr(float(v)) for v in stats.rankdata(x)))
print("spearman =", repr(float(stats.spearmanr(x, y).correlation)))
print("pearson =", repr(float(stats.pearsonr(x, y)[0])))
