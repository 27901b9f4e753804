"""The measurements of scripts/compare-python; prints JSON on stdout.

usage: compare_python.py DATA.ptd EPOCHS ROUNDS PTRON WORKDIR
"""
import json
import subprocess
import sys
import time
import warnings

import numpy as np
import sklearn
from sklearn.linear_model import Perceptron

import ptron

warnings.filterwarnings("ignore")
path, E, R, cli, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]

X_file, y = ptron.load_dataset(path)
X = np.array(X_file)  # a plain float32 array, as a user has one (numpy's alignment, no padding)
X_padded = ptron.padded(X)  # the same values in ptron's layout (one copy, made once)
assert X.dtype == np.float32 and X.shape[1] == 256


def fit_seconds(make, data):
    clf = make()
    t0 = time.perf_counter()
    clf.fit(data, y)
    return time.perf_counter() - t0, clf


def cli_seconds():
    r = subprocess.run([cli, "train", path, "-o", work + "/m", "--epochs", str(E), "--json"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def median(v):
    return float(np.median(v))


runs = {"ptron_in_place": [], "ptron_copy": [], "sklearn": [], "cli_train_seconds": []}
for r in range(R):
    t, mine = fit_seconds(lambda: ptron.Perceptron(max_iter=E), X_padded)
    runs["ptron_in_place"].append(t)
    t, mine_copy = fit_seconds(lambda: ptron.Perceptron(max_iter=E), X)
    runs["ptron_copy"].append(t)
    t, theirs = fit_seconds(lambda: Perceptron(max_iter=E, eta0=1.0, shuffle=False, tol=None), X)
    runs["sklearn"].append(t)
    report = cli_seconds()
    runs["cli_train_seconds"].append(report["train_seconds"])

assert np.array_equal(mine.coef_, mine_copy.coef_)
res = {
    "n": int(X.shape[0]), "d": int(X.shape[1]), "epochs": E, "rounds": R,
    "sklearn_version": sklearn.__version__, "threads": report["threads"], "isa": report["isa"],
    "seconds": {k: median(v) for k, v in runs.items()},
    "all_seconds": runs,
    "epochs_run": {"ptron": int(mine.n_iter_), "sklearn": int(theirs.n_iter_),
                   "cli": report["epochs_run"]},
    "train_accuracy": {"ptron": float(mine.score(X_padded, y)),
                       "sklearn": float(theirs.score(X, y)), "cli": report["train_accuracy"]},
}
# Ratios within each round (its measurements run back to back, in the same phase of a shared
# machine), then their median over the rounds.
ratios = {
    "sklearn_over_ptron_in_place": ("sklearn", "ptron_in_place"),
    "sklearn_over_ptron_copy": ("sklearn", "ptron_copy"),
    "python_in_place_over_cli_train": ("ptron_in_place", "cli_train_seconds"),
    "python_copy_over_cli_train": ("ptron_copy", "cli_train_seconds"),
}
res["ratios"] = {name: median([a / b for a, b in zip(runs[top], runs[bottom])])
                 for name, (top, bottom) in ratios.items()}
print(json.dumps(res, indent=1))
