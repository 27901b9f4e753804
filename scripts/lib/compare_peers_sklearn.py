"""scikit-learn's side of scripts/compare-peers: its Perceptron and SGDClassifier fits on the same
file, alternating with ptron's runs; prints JSON on stdout.

usage: compare_peers_sklearn.py DATA.svm EPOCHS PTRON WORKDIR
"""
import json, os, subprocess, sys, time, warnings
import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Perceptron, SGDClassifier
warnings.filterwarnings("ignore")
path, E, ptron, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
t0 = time.perf_counter()
X, y = load_svmlight_file(path, n_features=256)
load = time.perf_counter() - t0
Xd = np.ascontiguousarray(X.toarray())  # dense float64: sklearn's fastest layout for SGD
res = {"load_seconds": load, "n": X.shape[0], "d": X.shape[1]}
def ptron_runs(r):
    # ptron's online runs, one of each, between the fits
    ptd = os.path.join(work, "sep.ptd")
    for name, extra in [("online", []), ("online_seq", ["--pass", "sequential", "--threads", "1"])]:
        with open(os.path.join(work, f"ptron_{name}.{r + 1}.json"), "w") as f:
            subprocess.run([ptron, "train", ptd, "-o", os.path.join(work, "m_" + name), "--epochs", str(E),
                            "--json"] + extra, stdout=f, check=True)
def fit_seconds(clf):
    t0 = time.perf_counter()
    clf.fit(Xd, y)
    return time.perf_counter() - t0
def median(v):
    return sorted(v)[len(v) // 2]
for name, make in [("perceptron", lambda E: Perceptron(eta0=1, shuffle=False, tol=None, max_iter=E)),
                   ("sgd_hinge", lambda E: SGDClassifier(loss="hinge", shuffle=False, tol=None,
                                                         max_iter=E))]:
    # three rounds, the median of each (as for ptron); a round: ptron's perceptron runs, then
    # a fit of E epochs and one of a single epoch (the first epoch apart, and with it the cost
    # of an epoch past the first, (fit(E) - fit(1)) / (E - 1), to set beside ptron's)
    fits, ones = [], []
    for r in range(3):
        if name == "perceptron":
            ptron_runs(r)
        clf = make(E)
        fits.append(fit_seconds(clf))
        if E > 1:
            ones.append(fit_seconds(make(1)))
    fit = median(fits)
    res[name] = {"fit_seconds": fit, "epochs": int(clf.n_iter_),
                 "seconds_per_epoch": fit / max(1, int(clf.n_iter_)),
                 "train_accuracy": float(clf.score(Xd, y))}
    if ones and int(clf.n_iter_) == E:
        res[name]["first_epoch_seconds"] = median(ones)
        res[name]["later_epoch_seconds"] = (fit - median(ones)) / (E - 1)
print(json.dumps(res))
