"""The peers table of scripts/compare-peers from the JSON its runs left in WORKDIR.

usage: compare_peers_report.py WORKDIR OUT EPOCHS N CIRCLE_N GAMMA PAGE
"""
import json, os, re, sys
work, out, E, n, cn, gamma, page = sys.argv[1:8]
def load(name):
    try:
        with open(os.path.join(work, name)) as f:
            return json.load(f)
    except Exception as e:
        return {"error": str(e)}
def median_run(k, key):
    runs = [load(f"ptron_{k}.{r}.json") for r in (1, 2, 3)]
    ok = sorted((j for j in runs if key in j), key=lambda j: j[key])
    return ok[len(ok) // 2] if ok else runs[0]
P = {"svm": median_run("svm", "load_seconds"), "kernel": load("ptron_kernel.json")}
for k in ("online", "online_seq", "batch"):
    P[k] = median_run(k, "train_seconds")
S = load("sklearn.json")
C = load("c.json")
SP = load("sparse.json")
res = {"epochs": int(E), "n": int(n), "circle_n": int(cn), "gamma": float(gamma),
       "ptron": P, "sklearn": S, "peers": C, "sparse": SP}
with open(os.path.join(out, "peers.json"), "w") as f:
    json.dump(res, f, indent=1)

def per_epoch(j):
    return j["train_seconds"] / max(1, j["epochs_run"]) if "train_seconds" in j else None
def first_epoch(j):
    e = j.get("seconds_per_epoch") or []
    return e[0] if e else None
def later_epochs(j):
    # the median of epochs 2..E (a few mistakes each, X streamed once each)
    e = sorted((j.get("seconds_per_epoch") or [])[1:])
    return e[len(e) // 2] if e else None
def fmt(x, unit=""):
    return "n/a" if x is None else f"{x:.4g}{unit}"
def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.3g}x"
def acc(x):
    return "n/a" if x is None else f"{100 * float(x):.2f}%"

L = []
L.append(f"Data: `ptron gen separable --n {n} --d 256 --seed 1` as LIBSVM text "
         f"({os.path.getsize(os.path.join(work, 'sep.svm')) / 1e6:.0f} MB) and .ptd; "
         f"`ptron gen circle --n {cn} --d 16 --seed 1`. E = {E} epochs. ptron runs and sklearn "
         "fits: the median of three; the whole-program peers (liblinear, libsvm) and the loads "
         "of sklearn: one run. The ratio column is the peer's time over ptron's, so above 1 "
         "means ptron is faster.")
L.append("")
L.append("| comparison | ptron | peer | peer time / ptron time | ptron accuracy | peer accuracy |")
L.append("| --- | --- | --- | --- | --- | --- |")
po, ps, pb = P["online"], P["online_seq"], P["batch"]
sp, sh = S.get("perceptron", {}), S.get("sgd_hinge", {})
def row(what, pt, pj, peer_name, peer_t, pacc, peer_acc):
    L.append(f"| {what} | {fmt(pt, ' s')} | {peer_name}: {fmt(peer_t, ' s')} | {ratio(peer_t, pt)} "
             f"| {acc(pacc)} | {acc(peer_acc)} |")
row("perceptron epoch (online, auto pass, 2 threads)", per_epoch(po), po,
    "sklearn Perceptron, fit/E", sp.get("seconds_per_epoch"), po.get("train_accuracy"),
    sp.get("train_accuracy"))
row("perceptron epoch (online, sequential, 1 thread)", per_epoch(ps), ps,
    "sklearn Perceptron, fit/E", sp.get("seconds_per_epoch"), ps.get("train_accuracy"),
    sp.get("train_accuracy"))
row(f"perceptron, first epoch (online, sequential, 1 thread; from w = 0: "
    f"{(ps.get('mistakes_per_epoch') or ['?'])[0]} mistakes)", first_epoch(ps), ps,
    "sklearn Perceptron, fit with max_iter=1", sp.get("first_epoch_seconds"), None, None)
row("perceptron, later epoch (online, sequential, 1 thread; median of epochs 2..E)", later_epochs(ps), ps,
    "sklearn Perceptron, (fit(E) - fit(1)) / (E - 1)", sp.get("later_epoch_seconds"), None, None)
row("perceptron, later epoch (online, auto pass, 2 threads; median of epochs 2..E)", later_epochs(po), po,
    "sklearn Perceptron, (fit(E) - fit(1)) / (E - 1)", sp.get("later_epoch_seconds"), None, None)
row("hinge epoch (batch, lambda 1e-4)", per_epoch(pb), pb,
    "sklearn SGDClassifier(hinge), fit/E", sh.get("seconds_per_epoch"), pb.get("train_accuracy"),
    sh.get("train_accuracy"))
ll = C.get("liblinear", {})
ll_load = ll.get("parse_predict_seconds")
ll_train = None if ll.get("train_and_load_seconds") is None or ll_load is None else \
    max(0.0, ll["train_and_load_seconds"] - ll_load)
row(f"linear training, each to its own stopping rule (ptron online: {E} epochs max)",
    po.get("train_seconds"), po,
    "liblinear-train -s 3 (hinge, dual CD) minus its parse", ll_train, po.get("train_accuracy"),
    None if ll.get("train_accuracy") is None else ll["train_accuracy"] / 100)
row("load LIBSVM text", P["svm"].get("load_seconds"), P["svm"], "sklearn load_svmlight_file",
    S.get("load_seconds"), None, None)
row("load LIBSVM text", P["svm"].get("load_seconds"), P["svm"],
    "liblinear parse (liblinear-predict)", ll_load, None, None)
row("load .ptd (ptron) vs LIBSVM text (sklearn)", po.get("load_seconds"), po,
    "sklearn load_svmlight_file", S.get("load_seconds"), None, None)
sv = C.get("libsvm", {})
pk = P["kernel"]
if "train_seconds" in pk:
    row(f"RBF kernel, gamma {gamma}, circle n = {cn}", pk["train_seconds"], pk,
        "libsvm svm-train -t 2 -m 2000", sv.get("train_seconds"), pk.get("train_accuracy"),
        None if sv.get("train_accuracy") is None else sv["train_accuracy"] / 100)
else:
    L.append(f"| RBF kernel, gamma {gamma}, circle n = {cn} | skipped: "
             f"{str(pk.get('error', 'no result')).replace('|', '/')} | libsvm svm-train -t 2 -m 2000: "
             f"{fmt(sv.get('train_seconds'), ' s')} | n/a | n/a | "
             f"{acc(None if sv.get('train_accuracy') is None else sv['train_accuracy'] / 100)} |")
L.append("")
L.append(f"libsvm: {sv.get('n_sv')} support vectors. sklearn fits dense float64 arrays "
         "(its fastest layout; the load is timed apart). LIBLINEAR's parse is timed as "
         "liblinear-predict on the training file (it parses each line and predicts as it reads).")

# The sparse set (compare_peers_sparse.py): whole programs, one run each.
def mib(x):
    return "n/a" if x is None else f"{x:.0f} MiB"
L.append("")
L.append(f"Sparse: `ptron gen sparse --n {SP.get('n')} --seed 1` (rcv1-like, 47,236 features, "
         f"~50 non-zeros a row; {SP.get('held_out')} held-out rows), {E} epochs for the "
         "perceptrons, each program whole under /usr/bin/time (its load included), one run; "
         f"load average {SP.get('load_average', 0):.1f}. Peak memory is the maxrss; "
         "scikit-learn's includes the interpreter and its imports.")
L.append("")
L.append("| trainer | wall | peak memory | peak / LIBLINEAR's | held-out accuracy |")
L.append("| --- | --- | --- | --- | --- |")
llp = SP.get("liblinear", {}).get("peak_mib")
for key, what in (("ptron_classic", "ptron train (online)"),
                  ("ptron_averaged", "ptron train --averaged"),
                  ("liblinear", "liblinear-train -s 3 -B 1"),
                  ("sklearn_perceptron", "scikit-learn Perceptron (scipy CSR)"),
                  ("libsvm_linear_subset", f"libsvm svm-train -t 0, first {SP.get('libsvm_n')} rows"),
                  ("ptron_averaged_subset", f"ptron --averaged, first {SP.get('libsvm_n')} rows")):
    j = SP.get(key, {})
    if "error" in j:
        L.append(f"| {what} | {str(j['error']).replace('|', '/')} | | | |")
        continue
    pk = j.get("peak_mib")
    L.append(f"| {what} | {fmt(j.get('wall_seconds'), ' s')} | {mib(pk)} | "
             f"{'n/a' if pk is None or not llp else f'{pk / llp:.2f}x'} | "
             f"{acc(j.get('held_out_accuracy'))} |")
md = "\n".join(L) + "\n"
with open(os.path.join(out, "peers.md"), "w") as f:
    f.write(md)

# Into the machine's performance page between the markers (appended when there are none).
res_path = page
begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
section = f"{begin}\n{md}{end}"
text = open(res_path).read() if os.path.exists(res_path) else "# Performance\n"
if begin in text and end in text:
    text = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda m: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n## Against the peers\n\n" + section + "\n"
with open(res_path, "w") as f:
    f.write(text)
print(md)
