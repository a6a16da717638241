#!/usr/bin/env python3
"""Record scikit-learn / SciPy reference values for eval's Go tests.

Reads embed2.csv and embed3.csv (see gen_fixture.py) and writes
sklearn_reference.json with, per dataset:
  * "protocol": GraphCL's svc_classify(search=True) on the stored outer folds:
    per fold the C chosen by GridSearchCV(SVC(), C grid, cv=5,
    scoring="accuracy"), its mean_test_score per C, the refit's gamma and
    test accuracy, and np.mean / np.std of the fold accuracies;
  * "plain": single SVC fits on rows [0, 200) at fixed C and gamma (and one
    with gamma="scale"): decision_function (shape "ovo") and predictions on
    rows [200, 300), dual_coef_, intercept_, support_, n_support_, _gamma;
  * "skf": sklearn's unshuffled StratifiedKFold test-fold ids;
and SciPy references for the paired tests. Go tests read only the JSON.

Run with Debian's python3 (apt-get install python3-sklearn python3-scipy):
    /usr/bin/python3 sklearn_reference.py
"""
import json

import numpy as np
import scipy
import scipy.stats
import sklearn
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

CS = [0.001, 0.01, 0.1, 1, 10, 100, 1000]


def load(path):
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    y = a[:, 0].astype(int)
    folds = a[:, 1].astype(int)
    x = a[:, 2:].astype(np.float32)  # GraphCL's embeddings are float32
    return x, y, folds


def protocol(x, y, folds):
    out = {"chosen_c": [], "fold_acc": [], "inner_mean": [], "gamma": []}
    accs = []
    for f in range(folds.max() + 1):
        train, test = np.where(folds != f)[0], np.where(folds == f)[0]
        gs = GridSearchCV(SVC(), {"C": CS}, cv=5, scoring="accuracy", verbose=0)
        gs.fit(x[train], y[train])
        acc = accuracy_score(y[test], gs.predict(x[test]))
        accs.append(acc)
        out["chosen_c"].append(gs.best_params_["C"])
        out["fold_acc"].append(acc)
        out["inner_mean"].append([float(v) for v in gs.cv_results_["mean_test_score"]])
        out["gamma"].append(gs.best_estimator_._gamma)
    out["mean"] = float(np.mean(accs))
    out["std"] = float(np.std(accs))
    return out


def plain(x, y, c, gamma):
    clf = SVC(C=c, gamma=gamma, decision_function_shape="ovo")
    clf.fit(x[:200], y[:200])
    dec = clf.decision_function(x[200:])
    return {
        "C": c,
        "gamma_param": gamma if isinstance(gamma, float) else 0.0,
        "gamma": clf._gamma,
        # One row per sample; for two classes a single column.
        "decision": dec.reshape(len(dec), -1).tolist(),
        "predict": clf.predict(x[200:]).tolist(),
        "dual_coef": clf.dual_coef_.tolist(),
        "intercept": clf.intercept_.tolist(),
        "support": clf.support_.tolist(),
        "n_support": clf.n_support_.tolist(),
    }


def skf_ids(y, k):
    ids = np.empty(len(y), dtype=int)
    for f, (_, test) in enumerate(StratifiedKFold(n_splits=k).split(np.zeros(len(y)), y)):
        ids[test] = f
    return ids.tolist()


def main():
    ref = {
        "versions": {"sklearn": sklearn.__version__, "numpy": np.__version__, "scipy": scipy.__version__},
        "cs": CS,
        "datasets": {},
    }
    for name in ["embed2", "embed3"]:
        x, y, folds = load(name + ".csv")
        ref["datasets"][name] = {
            "protocol": protocol(x, y, folds),
            "plain": [plain(x, y, 1.0, 0.05), plain(x, y, 100.0, 0.1), plain(x, y, 10.0, "scale")],
            "skf10": skf_ids(y, 10),
        }
    # Unbalanced 3-class labels whose first-appearance order (7, 2, 5) is not
    # the sorted order.
    rng = np.random.default_rng(7)
    yu = np.array([7] * 23 + [2] * 11 + [5] * 6)
    yu = yu[rng.permutation(len(yu))]
    yu[0], yu[1], yu[2] = 7, 2, 5
    ref["skf_unbalanced"] = {"y": yu.tolist(), "k3": skf_ids(yu, 3), "k5": skf_ids(yu, 5), "k6": skf_ids(yu, 6)}

    # Statistics references.
    a = rng.normal(0.75, 0.02, size=12)
    b = a - rng.normal(0.01, 0.015, size=12)
    a60 = rng.normal(0.7, 0.05, size=60)
    b60 = a60 - rng.normal(0.005, 0.02, size=60)
    at = np.array([0.71, 0.72, 0.70, 0.74, 0.73, 0.71, 0.75, 0.69, 0.72, 0.70, 0.76, 0.68])
    bt = np.array([0.70, 0.70, 0.71, 0.72, 0.72, 0.70, 0.73, 0.70, 0.71, 0.71, 0.74, 0.69])
    st = {}
    for key, (u, v) in {"n12": (a, b), "n60": (a60, b60), "ties": (at, bt)}.items():
        t = scipy.stats.ttest_rel(u, v)
        method = "approx" if key == "ties" else "auto"
        w = scipy.stats.wilcoxon(u, v, method=method) if key == "ties" else scipy.stats.wilcoxon(u, v)
        st[key] = {
            "a": u.tolist(), "b": v.tolist(),
            "t": float(t.statistic), "t_p": float(t.pvalue),
            "w": float(w.statistic), "w_p": float(w.pvalue),
            "mean_a": float(np.mean(u)), "std_a": float(np.std(u)),
        }
    ref["stats"] = st
    with open("sklearn_reference.json", "w") as fh:
        json.dump(ref, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
