"""The sparse section of scripts/compare-peers: ptron, LIBLINEAR, libsvm and scikit-learn on the
same rcv1-like LIBSVM file (`ptron gen sparse --n N --seed 1 --test-out T --test-n N/4`:
47,236 features, ~50 non-zeros a row); prints JSON on stdout.

Each trainer is its own process under /usr/bin/time (wall seconds, peak resident memory: the
kernel's maxrss, what `/usr/bin/time -v` prints as "Maximum resident set size"); held-out
accuracy on T:
  - ptron train S --epochs E (the online path, layout auto: sparse), classic and --averaged;
    ptron predict on T;
  - liblinear-train -s 3 -B 1 (hinge, dual coordinate descent), liblinear-predict on T;
  - scikit-learn: load_svmlight_file (scipy CSR) and Perceptron(max_iter=E, tol=None,
    shuffle=False) in one python3 process (its peak includes the interpreter and imports);
  - libsvm svm-train -t 0 (linear kernel) on the first LIBSVM_N rows of S only: an SMO solver
    over n rows does not finish on 200,000 here; ptron --averaged on the same rows beside it.

usage: compare_peers_sparse.py PTRON WORKDIR N EPOCHS LIBSVM_N
"""
import json
import os
import subprocess
import sys

ptron, work, n, E, libsvm_n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
    int(sys.argv[5])
S, T, Ssub = (os.path.join(work, f) for f in ("rcv1like.svm", "rcv1like-test.svm", "sub.svm"))
subprocess.run([ptron, "gen", "sparse", "--n", str(n), "--seed", "1", "-o", S, "--test-out", T,
                "--test-n", str(n // 4)], check=True, stdout=subprocess.DEVNULL)
with open(S) as f, open(Ssub, "w") as g:
    for i, line in enumerate(f):
        if i >= libsvm_n:
            break
        g.write(line)


def timed(cmd, timeout=None):
    """wall seconds, peak RSS in MiB and stdout of cmd (None, None, error on failure)."""
    tf = os.path.join(work, "time.txt")
    try:
        p = subprocess.run(["/usr/bin/time", "-o", tf, "-f", "%e %M"] + cmd, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, None, f"did not finish in {timeout} s"
    if p.returncode != 0:
        return None, None, (p.stderr.strip() or f"exit {p.returncode}")[-300:]
    wall, kb = open(tf).read().split()[-2:]
    return float(wall), int(kb) / 1024.0, p.stdout


def accuracy_from(text):
    for tok in text.replace("(", " ").split():
        if tok.endswith("%"):
            return float(tok[:-1]) / 100
    return None


def ptron_side(data, extra, name):
    model = os.path.join(work, name + ".model")
    wall, mib, out = timed([ptron, "train", data, "-o", model, "--epochs", str(E), "--json"] +
                           extra)
    if wall is None:
        return {"error": out}
    j = json.loads(out)
    _, _, pred = timed([ptron, "predict", model, T, "--json"])
    acc = json.loads(pred).get("accuracy") if pred and pred.lstrip().startswith("{") else None
    return {"wall_seconds": wall, "peak_mib": mib, "train_seconds": j.get("train_seconds"),
            "load_seconds": j.get("load_seconds"), "layout": j.get("layout"),
            "threads": j.get("threads"), "epochs_run": j.get("epochs_run"),
            "held_out_accuracy": acc}


res = {"n": n, "held_out": n // 4, "d": 47236, "epochs": E, "libsvm_n": libsvm_n,
       "file_mb": os.path.getsize(S) / 1e6}
res["ptron_classic"] = ptron_side(S, [], "classic")
res["ptron_averaged"] = ptron_side(S, ["--averaged"], "averaged")

wall, mib, out = timed(["liblinear-train", "-s", "3", "-B", "1", "-q", S,
                        os.path.join(work, "ll.model")])
ll = {"wall_seconds": wall, "peak_mib": mib} if wall is not None else {"error": out}
if wall is not None:
    _, _, out = timed(["liblinear-predict", T, os.path.join(work, "ll.model"),
                       os.path.join(work, "ll.pred")])
    ll["held_out_accuracy"] = accuracy_from(out or "")
res["liblinear"] = ll

SK = f"""
import json, time, warnings
warnings.filterwarnings("ignore")
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Perceptron
t0 = time.perf_counter()
X, y = load_svmlight_file({S!r}, n_features=47236)
Xt, yt = load_svmlight_file({T!r}, n_features=47236)
t1 = time.perf_counter()
clf = Perceptron(max_iter={E}, tol=None, shuffle=False).fit(X, y)
t2 = time.perf_counter()
print(json.dumps({{"load_seconds": t1 - t0, "fit_seconds": t2 - t1,
                  "held_out_accuracy": clf.score(Xt, yt)}}))
"""
wall, mib, out = timed(["/usr/bin/python3", "-c", SK])
res["sklearn_perceptron"] = dict(json.loads(out), wall_seconds=wall, peak_mib=mib) \
    if wall is not None else {"error": out}

wall, mib, out = timed(["svm-train", "-t", "0", "-m", "200", "-q", Ssub,
                        os.path.join(work, "svm.model")], timeout=1200)
sv = {"wall_seconds": wall, "peak_mib": mib, "rows": libsvm_n} if wall is not None else \
    {"error": out, "rows": libsvm_n}
if wall is not None:
    # its prediction is a kernel sum over the support vectors a row: minutes on N/4 rows
    _, _, out = timed(["svm-predict", T, os.path.join(work, "svm.model"),
                       os.path.join(work, "svm.pred")], timeout=1200)
    sv["held_out_accuracy"] = accuracy_from(out or "")
    with open(os.path.join(work, "svm.model")) as f:
        sv["support_vectors"] = next((int(x.split()[1]) for x in f if x.startswith("total_sv")),
                                     None)
res["libsvm_linear_subset"] = sv
res["ptron_averaged_subset"] = ptron_side(Ssub, ["--averaged"], "subset")
res["load_average"] = os.getloadavg()[0]
print(json.dumps(res, indent=1))
