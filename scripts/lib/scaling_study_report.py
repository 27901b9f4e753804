"""The scaling study's analysis: medians and quartiles, the rule that names a faster method, the
findings, study.md and the figures (PNG and PDF). scripts/scaling-study writes study.csv and
study.json and calls report(); `scripts/scaling-study --replot` calls it alone.

The rule: at a point, method A is faster than method B when A's third quartile of time is below
B's first quartile (their interquartile ranges do not overlap); a method killed at the time limit
(or skipped after such a kill) is slower than one that finished under it. Otherwise there is no
clear winner at that point. A crossover along a sweep is the smallest x from which one method is
faster at every larger x measured, when the other was faster somewhere below it.
"""
import csv
import json
import os
import textwrap
from math import comb

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
import matplotlib.transforms as mtransforms  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

FIELDS = ["sweep", "method", "d", "n", "n_test", "degree", "rff_dim", "gamma", "features",
          "status", "reps", "fit_s_median", "fit_s_q1", "fit_s_q3", "fit_s_min", "fit_s_max",
          "fit_s_runs", "wall_s_median", "wall_s_runs", "train_s_median", "expand_s_median",
          "write_s_median", "peak_rss_mib", "materialise_mib", "epochs", "updates",
          "train_accuracy", "test_accuracy", "test_accuracy_q1", "test_accuracy_q3", "isa",
          "note"]

STYLE = {  # colour, marker, legend label
    "materialised": ("tab:blue", "o", "materialised (ptron expand, then train)"),
    "streamed": ("tab:orange", "s", "streamed (train --expand D)"),
    "kernel": ("tab:green", "^", "kernel path, polynomial kernel"),
    "rff-streamed": ("tab:purple", "D", "random Fourier features (train --expand rff:D)"),
    "rbf-kernel": ("tab:green", "^", "kernel path, RBF kernel"),
}


def quartiles(xs):
    """(25th, 50th, 75th) percentiles, linearly interpolated (numpy's default)."""
    s = sorted(xs)

    def pct(p):
        k = (len(s) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)
    return pct(0.25), pct(0.5), pct(0.75)


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(out):
    with open(os.path.join(out, "study.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("d", "n", "degree", "rff_dim", "features"):
            r[k] = int(r[k]) if r.get(k, "") != "" else None
    with open(os.path.join(out, "study.json")) as f:
        meta = json.load(f)
    return rows, meta


def pick(rows, sweep, method, **fixed):
    """{x: row} of one method in one sweep with the fixed coordinates given."""
    return [r for r in rows if r["sweep"] == sweep and r["method"] == method and
            all(r[k] == v for k, v in fixed.items())]


def by(rows, key):
    return {r[key]: r for r in rows}


# ------------------------------------------------------------------------------ the rule

def slow_by_limit(r):
    """Killed at the limit, or skipped after a smaller point of its series was."""
    return r["status"] == "timeout" or (r["status"] == "skipped" and
                                        r["note"].startswith("timeout"))


def faster(a, b, limit):
    """The name of the method that is faster at this point, None for no clear winner, 'n/a'
    where the two cannot be compared (refused, unavailable)."""
    if a is None or b is None:
        return "n/a"
    if a["status"] == "ok" and b["status"] == "ok":
        if num(a["fit_s_q3"]) < num(b["fit_s_q1"]):
            return a["method"]
        if num(b["fit_s_q3"]) < num(a["fit_s_q1"]):
            return b["method"]
        return None
    for x, y in ((a, b), (b, a)):
        if x["status"] == "ok" and slow_by_limit(y):
            return x["method"] if num(x["fit_s_q3"]) < limit else None
    for x, y in ((a, b), (b, a)):
        if x["status"] == "ok" and y["status"] in ("refused", "skipped"):
            return "only " + x["method"]
    return "n/a"


def fmt_x(key, x):
    return f"{x:,}"


def xs_text(key, xs):
    name = {"degree": "D", "n": "n", "rff_dim": "D"}[key]
    if len(xs) == 1:
        return f"{name} = {fmt_x(key, xs[0])}"
    return f"{name} = {fmt_x(key, xs[0])}-{fmt_x(key, xs[-1])}"


def compare(a_rows, b_rows, key, limit, names):
    """The verdict at each x, grouped into runs, and the crossover the rule finds."""
    A, B = by(a_rows, key), by(b_rows, key)
    xs = sorted(set(A) | set(B))
    verdicts = [(x, faster(A.get(x), B.get(x), limit)) for x in xs]
    groups = []
    for x, v in verdicts:
        if groups and groups[-1][0] == v:
            groups[-1][1].append(x)
        else:
            groups.append((v, [x]))
    parts = []
    for v, g in groups:
        if v is None:
            parts.append(f"no clear winner at {xs_text(key, g)}")
        elif v == "n/a":
            parts.append(f"not comparable at {xs_text(key, g)}")
        elif v.startswith("only "):
            parts.append(f"only the {names[v[5:]]} ran at {xs_text(key, g)} (the other was "
                         f"refused)")
        else:
            parts.append(f"{names[v]} faster at {xs_text(key, g)}")
    decided = [(x, v) for x, v in verdicts if v != "n/a" and not (v or "").startswith("only ")]
    cross = None
    if decided and decided[-1][1] is not None:
        last = decided[-1][1]
        i = len(decided) - 1
        while i > 0 and decided[i - 1][1] == last:
            i -= 1
        if any(v not in (None, last) for _, v in decided[:i]):
            cross = (last, decided[i][0])
    return parts, cross, verdicts


# ------------------------------------------------------------------------------ findings

def findings(rows, meta):
    g, limit = meta["grid"], meta["timeout"]
    half_ram = meta["mem_gib"] * 2**30 / 2
    F = {}
    names = {"streamed": "streamed expansion", "kernel": "kernel path",
             "materialised": "materialised expansion",
             "rff-streamed": "RFF", "rbf-kernel": "RBF kernel path"}

    def series_text(pairs, sweep, key, fixed_list):
        out = []
        for fixed in fixed_list:
            a = pick(rows, sweep, pairs[0], **fixed)
            b = pick(rows, sweep, pairs[1], **fixed)
            parts, cross, _ = compare(a, b, key, limit, names)
            label = ", ".join(f"{k} = {v:,}" if k == "n" else f"{'D' if k == 'degree' else k} = {v}"
                              for k, v in fixed.items())
            txt = f"- {label}: " + "; ".join(parts)
            if cross:
                txt += (f". **Crossover: the {names[cross[0]]} is faster from "
                        f"{xs_text(key, [cross[1]])} on.**")
            else:
                txt += ". No crossover."
            out.append(txt)
        return out

    F["sk_degree"] = series_text(("streamed", "kernel"), "degree", "degree",
                                 [dict(d=d, n=g["n_fixed"]) for d in g["dims"]])
    F["sk_n"] = series_text(("streamed", "kernel"), "n", "n",
                            [dict(d=g["d_fixed"], degree=D) for D in g["degrees"]])
    lru = sorted({r["n"] for r in rows if r["sweep"] in ("n", "rff-n")
                  and r["method"] in ("kernel", "rbf-kernel") and "LRU" in r["note"]})
    if lru:
        F["sk_n"].append(
            f"- At n = {', '.join(f'{n:,}' for n in lru)} the Gram matrix is over --cache-mb "
            f"(its default, half of RAM): the kernel path computed its rows behind an LRU cache "
            f"(the runs listed at the end), which is where its time and memory jump.")
    F["ms_degree"] = series_text(("materialised", "streamed"), "degree", "degree",
                                 [dict(d=d, n=g["n_fixed"]) for d in g["dims"]])
    F["ms_n"] = series_text(("materialised", "streamed"), "n", "n",
                            [dict(d=g["d_fixed"], degree=D) for D in g["degrees"]])
    rbf = [r for r in rows if r["sweep"] == "rff-dim" and r["method"] == "rbf-kernel"]
    rff = sorted(pick(rows, "rff-dim", "rff-streamed"), key=lambda r: r["rff_dim"])
    lines = []
    if rbf and rbf[0]["status"] == "ok":
        k = rbf[0]
        ka = num(k["test_accuracy"])
        lines.append(f"- RBF kernel path (gamma = {k['gamma']}): held-out accuracy {ka:.4f}, "
                     f"time {num(k['fit_s_median']):.4g} s (IQR {num(k['fit_s_q1']):.4g}-"
                     f"{num(k['fit_s_q3']):.4g}).")
        close = [r for r in rff if r["status"] == "ok" and num(r["test_accuracy"]) is not None
                 and num(r["test_accuracy"]) >= ka - 0.01]
        lines.append("- RFF (median over its runs' draws of the random features) reaches the "
                     "kernel's held-out accuracy within 1 point from D = "
                     + (f"{close[0]['rff_dim']:,}" if close else "- (never in this sweep)") + ".")
        # the one kernel run against each number of random features
        parts, cross, _ = compare(rff, [dict(k, rff_dim=r["rff_dim"]) for r in rff], "rff_dim",
                                  limit, names)
        txt = "- Time, RFF against the kernel path: " + "; ".join(parts)
        txt += (f". **Crossover: the {names[cross[0]]} is faster from {xs_text('rff_dim', [cross[1]])}"
                f" on.**" if cross else ". No crossover.")
        lines.append(txt)
    else:
        lines.append("- The RBF kernel path did not run: " + (rbf[0]["note"] if rbf else "absent"))
    best = max((r for r in rff if num(r["test_accuracy"]) is not None),
               key=lambda r: num(r["test_accuracy"]), default=None)
    if best:
        lines.append(f"- Best RFF held-out accuracy (median) {num(best['test_accuracy']):.4f} "
                     f"(IQR {num(best['test_accuracy_q1']):.4f}-{num(best['test_accuracy_q3']):.4f}"
                     f") at D = {best['rff_dim']:,}.")
    F["rff_dim"] = lines
    F["rff_n"] = series_text(("rff-streamed", "rbf-kernel"), "rff-n", "n",
                             [dict(d=g["rff_d"])])
    # memory
    mem = []
    for d in g["dims"]:
        ma = sorted(pick(rows, "degree", "materialised", d=d, n=g["n_fixed"]),
                    key=lambda r: r["degree"])
        refused = [r for r in ma if r["status"] == "refused"]
        n = g["n_fixed"]
        txt = f"- d = {d}, n = {n:,}: "
        if refused:
            r = refused[0]
            txt += (f"refused from D = {r['degree']} on ({r['features']:,} features, "
                    f"{num(r['materialise_mib']):,.0f} MiB > --mem-mb {meta['mem_mb']})")
        else:
            txt += f"never refused at --mem-mb {meta['mem_mb']} for D <= {max(g['degrees'])}"
        # where the defaults refuse: --max-features (10,000,000) or half of RAM, whichever first
        first = next((D for D in range(1, 40)
                      if comb(d + D, D) > 10_000_000
                      or n * ((comb(d + D, D) + 15) // 16 * 16) * 4 > half_ram), None)
        if first:
            f_ = comb(d + first, first)
            b = n * ((f_ + 15) // 16 * 16) * 4
            why = ("over --max-features' default 10,000,000" if f_ > 10_000_000 else
                   f"{b / 2**30:,.1f} GiB, over half of RAM ({half_ram / 2**30:.1f} GiB)")
            txt += f"; the defaults refuse from D = {first} ({f_:,} features: {why})"
        mem.append(txt + ".")
    F["mem_refused"] = mem
    poly = ("materialised", "streamed", "kernel")

    def at(sweep, fixed, key):
        """The peak RSS of each method at the largest x where the materialised run finished."""
        rs = [r for m in poly for r in pick(rows, sweep, m, **fixed)]
        xs = [r[key] for r in rs if r["method"] == "materialised" and r["status"] == "ok"]
        if not xs:
            return None
        x = max(xs)
        here = {r["method"]: r for r in rs if r[key] == x}
        where = ", ".join(f"{'D' if k == 'degree' else k} = {v:,}" for k, v in
                          dict(fixed, **{key: x}).items())
        ma = here["materialised"]
        parts = [f"materialised {num(ma['peak_rss_mib']):,.1f} MiB (its expanded matrix: "
                 f"{num(ma['materialise_mib']):,.1f} MiB predicted by `ptron expand`)"]
        parts += [f"{m} {num(here[m]['peak_rss_mib']):,.1f} MiB" for m in poly[1:]
                  if m in here and here[m]["status"] == "ok"]
        return f"- {where} ({ma['features']:,} features): " + ", ".join(parts) + "."
    F["mem_at"] = [t for t in (at("degree", dict(d=g["mem_d"], n=g["n_fixed"]), "degree"),
                               at("n", dict(d=g["d_fixed"], degree=max(g["degrees"])), "n"))
                   if t]
    ratios = [num(r["peak_rss_mib"]) / num(r["materialise_mib"]) for r in rows
              if r["method"] == "materialised" and r["status"] == "ok"
              and num(r["materialise_mib"]) and num(r["materialise_mib"]) >= 64]
    if ratios:
        F["mem_at"].append(
            f"- Materialised, wherever the expanded matrix is 64 MiB or more: peak RSS / "
            f"predicted bytes = {min(ratios):.2f}-{max(ratios):.2f} (the training maps the .ptd "
            f"it reads; below that, the process's own ~5 MiB dominates).")
    for m in ("streamed", "kernel", "rff-streamed", "rbf-kernel"):
        v = [num(r["peak_rss_mib"]) for r in rows if r["method"] == m and r["status"] == "ok"]
        if v:
            F["mem_at"].append(f"- {m}: peak RSS {min(v):,.1f}-{max(v):,.1f} MiB over every "
                               f"point it ran.")
    return F


# ------------------------------------------------------------------------------ study.md

def caption(meta):
    """The machine and the run, on every figure."""
    threads = f"{meta['threads']} thread" + ("s" if meta["threads"] != 1 else "")
    return (f"{meta['cpu']}, {meta['cores']} cores; ISA {meta['isa']}; {threads}; "
            f"ptron {meta['commit']}; {meta['started']}; 1-min load average "
            f"{meta['load_min']:.1f}-{meta['load_max']:.1f}.")


def time_note(meta):
    reps = (f"{meta['reps']} runs" if meta.get("reps") else "5-15 runs (more for short ones)")
    return (f"Time: ptron's own seconds (--json), load + expansion (materialised: + write) + "
            f"training; medians of {reps} a point, bars: interquartile range.")


def fmt(v, nd=4):
    x = num(v)
    if x is None:
        return "" if v is None else str(v)
    if abs(x) >= 1000 or (float(x).is_integer() and abs(x) >= 1):
        return f"{x:,.0f}"
    return f"{x:.{nd}g}"


def table(f, rows, x="degree"):
    f.write(f"| d | n | {'D' if x == 'degree' else 'RFF D'} | features | method | status | runs | "
            "time s (median) | IQR s | wall s | peak MiB | expanded MiB | epochs | updates | "
            "test acc (IQR) |\n")
    f.write("|" + "---|" * 15 + "\n")
    for r in rows:
        ok = r["status"] == "ok"
        st = r["status"] if ok else f"**{r['status']}**"
        iqr = f"{num(r['fit_s_q1']):.4g}-{num(r['fit_s_q3']):.4g}" if ok else ""
        D = r[x] if r[x] is not None else ""
        mib = fmt(r["materialise_mib"], 3) if r["method"] == "materialised" else ""
        acc = fmt(r["test_accuracy"], 4)
        if num(r["test_accuracy_q1"]) is not None and r["test_accuracy_q1"] != r["test_accuracy_q3"]:
            acc += f" ({num(r['test_accuracy_q1']):.4g}-{num(r['test_accuracy_q3']):.4g})"
        f.write(f"| {r['d']} | {r['n']:,} | {D} | {fmt(r['features'])} | {r['method']} | {st} | "
                f"{r['reps']} | {fmt(r['fit_s_median'])} | {iqr} | {fmt(r['wall_s_median'], 3)} | "
                f"{fmt(r['peak_rss_mib'], 3)} | {mib} | {r['epochs']} | {r['updates']} | "
                f"{acc} |\n")
    f.write("\n")


FIGURES = [
    ("study_time_vs_degree", "Time against the degree D, one panel per input dimension d"),
    ("study_time_vs_n", "Time against the sample count n, one panel per degree D"),
    ("study_memory", "Peak memory of each method, and the materialised matrix's predicted bytes"),
    ("study_rff", "Random Fourier features against the RBF kernel path"),
]


def write_markdown(out, rows, meta, F):
    g = meta["grid"]
    with open(os.path.join(out, "study.md"), "w") as f:
        f.write("# Scaling study: polynomial expansion, kernel path, random Fourier features\n\n")
        f.write(f"Generated by `{meta['command']}` in {meta['seconds']:.0f} s. Machine and run: "
                f"{caption(meta)} {time_note(meta)} The 1-minute load average was {meta['load_start']:.1f} at the "
                f"start, {meta['load_end']:.1f} at the end and {meta['load_median']:.1f} (median) "
                f"over the points: the machine is shared, hence the repetitions and the rule "
                f"below. `{meta['version']}`.\n\n")
        f.write("## How it was measured\n\n")
        f.write(
            f"- Data: `ptron gen circle --d d --n n --seed 1`, held-out rows from `--test-out` "
            f"(`--test-n {g['n_test']}`). Points inside or outside a sphere: a degree D >= 2 "
            f"expansion separates them, D = 1 does not (about half right without a bias).\n"
            f"- Methods, all on `--no-bias --epochs {meta['epochs']}`, no shuffle, "
            f"`--threads {meta['threads']}`: **materialised** `ptron expand --degree D --coef0 1 "
            f"--mem-mb {meta['mem_mb']}` then `ptron train` on the .ptd; **streamed** `ptron "
            f"train --expand D --coef0 1`; **kernel** `ptron train --path kernel --kernel poly "
            f"--degree D --gamma 1 --coef0 1` (the same kernel (1 + x.z)^D, so the three make the "
            f"same mistakes up to rounding); **RFF** `ptron train --expand rff:D --gamma G` "
            f"against the **RBF kernel** path `--kernel rbf --gamma G`, G = 1/d.\n"
            f"- Time: ptron's own clocks from `--json` at full precision, load + train seconds "
            f"(materialised: the expansion's load + expand + write seconds plus the training's "
            f"load + train seconds). Wall time (time.perf_counter_ns around each process, which "
            f"adds process start and the model's write) and peak RSS (`/usr/bin/time -f %M` of each process) "
            f"are in the tables and study.csv. Each point ran 15 times when its first run took "
            f"under 50 ms, 7 times under 2 s, else 5 (`--quick`: 3), the methods of a point "
            f"taking turns; the figures plot the median with the interquartile range; study.csv "
            f"has every run. RFF draws its random features from `--seed r` in run r, so its "
            f"held-out accuracy is a median over the draws, with its quartiles; the other "
            f"methods are deterministic.\n"
            + ("- One thread (`--threads 1`, `OMP_NUM_THREADS=1`): the study compares methods; on "
               "a shared machine a second thread that waits for a core stalls the first at every "
               "barrier (the kernel path at d = 8, n = 2,000, D = 3 took 0.07-0.22 s on 2 "
               "threads against 0.003-0.025 s on 1, under a load of 6 on the 2 cores).\n" if meta["threads"] == 1 else "")
            + f"- A command is killed after {meta['timeout']:g} s and the larger points of its "
            f"series are skipped; so are those after a refusal (`--mem-mb`, `--max-features`).\n"
            f"- **The rule** for \"faster\": at a point, A is faster than B when A's third "
            f"quartile is below B's first (the interquartile ranges do not overlap); a method "
            f"killed at the limit is slower than one that finished. Otherwise: no clear winner "
            f"at that point. A **crossover** is the smallest x from which one method is faster "
            f"at every larger x measured, the other having been faster somewhere below it.\n\n")
        f.write("## Findings\n\n")
        f.write("### Streamed expansion against the polynomial kernel path (Figures 1 and 2)\n\n"
                "Where the work goes: the streamed expansion expands every row it visits into "
                "C(d + D, D) features and takes their dot product with w, so its time grows with "
                "the features at every visit. The kernel path keeps every row's margin, so a "
                "visit costs O(1) and a mistake one kernel row, n kernel values of d "
                "multiply-adds each, whatever D (src/train_kernel.c): its time grows with the "
                "mistakes times n d, and with D only through the mistakes made. Under the Gram's "
                "budget (4 n^2 bytes within --cache-mb, by default half of RAM) the kernel path "
                "may build the whole Gram; over it, rows are computed behind an LRU cache whose "
                "memory must be touched. What the rule finds:\n\n"
                f"Against the degree (n = {g['n_fixed']:,}, Figure 1):\n\n")
        f.write("\n".join(F["sk_degree"]) + "\n\n")
        f.write(f"Against the sample count (d = {g['d_fixed']}, Figure 2):\n\n")
        f.write("\n".join(F["sk_n"]) + "\n\n")
        f.write("### Materialised against streamed\n\n"
                "The materialised time adds writing the expanded .ptd and loading it; the "
                "training pass itself reads precomputed rows instead of expanding them.\n\n")
        f.write(f"Against the degree (n = {g['n_fixed']:,}):\n\n" + "\n".join(F["ms_degree"])
                + "\n\n")
        f.write(f"Against the sample count (d = {g['d_fixed']}):\n\n" + "\n".join(F["ms_n"])
                + "\n\n")
        f.write("### Memory (Figure 3)\n\n")
        f.write("\n".join(F["mem_at"]) + "\n\nWhere the budget rules materialisation out:\n\n")
        f.write("\n".join(F["mem_refused"]) + "\n\n")
        f.write(f"### Random Fourier features against the RBF kernel path (Figure 4)\n\n"
                f"d = {g['rff_d']}, n = {g['rff_n']:,}, against the number of random features:"
                f"\n\n")
        f.write("\n".join(F["rff_dim"]) + "\n\n")
        f.write(f"RFF with D = {g['rff_dim_fixed']:,} against the kernel path, by sample count "
                f"(d = {g['rff_d']}):\n\n")
        f.write("\n".join(F["rff_n"]) + "\n\n")
        f.write("## Figures\n\n")
        for i, (name, what) in enumerate(FIGURES, 1):
            f.write(f"{i}. `{name}.png` (vector: `{name}.pdf`): {what}.\n")
        f.write("\n")
        for sweep, title, x in (
                ("degree", f"Degree against input dimension (n = {g['n_fixed']:,})", "degree"),
                ("n", f"Sample count against degree (d = {g['d_fixed']})", "degree"),
                ("rff-dim", f"Random features against the RBF kernel (d = {g['rff_d']}, "
                            f"n = {g['rff_n']:,})", "rff_dim"),
                ("rff-n", f"RFF (D = {g['rff_dim_fixed']:,}) and the RBF kernel against the "
                          f"sample count (d = {g['rff_d']})", "rff_dim")):
            f.write(f"## {title}\n\n")
            table(f, [r for r in rows if r["sweep"] == sweep], x)
        notes = [r for r in rows if r["note"]]
        if notes:
            f.write("## Runs that did not finish, and notes\n\n")
            seen = set()
            for r in notes:
                key = (r["method"], r["status"], r["note"][:50])
                if key not in seen:
                    seen.add(key)
                    D = next((x for x in (r["degree"], r["rff_dim"]) if x is not None), "-")
                    f.write(f"- {r['method']} d={r['d']} n={r['n']:,} D={D}: {r['status']}: "
                            f"{r['note']}\n")


# ------------------------------------------------------------------------------ figures

def figure_setup():
    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8,
                         "pdf.fonttype": 42, "savefig.dpi": 150})


def finish(fig, out, name, title, meta, handles, note=""):
    """The title, the legend under the panels and the machine's line under the legend; saved as
    PNG and PDF with nothing cut (bbox_inches="tight")."""
    fig.suptitle(title, fontsize=11)
    y = -0.01
    if handles:
        ncol = 2 if len(handles) == 4 else min(3, len(handles))
        leg = fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                         ncol=ncol, frameon=False)
        fig.canvas.draw()
        y = leg.get_window_extent().transformed(fig.transFigure.inverted()).y0
    width = int(fig.get_figwidth() * 23)  # characters of 7.5 pt text across the figure
    text = "\n".join(textwrap.fill(t, width) for t in (caption(meta), note) if t)
    fig.text(0.5, y, text, ha="center", va="top", fontsize=7.5, color="0.25", linespacing=1.4)
    for ext in ("png", "pdf"):
        fig.savefig(os.path.join(out, f"{name}.{ext}"), bbox_inches="tight", pad_inches=0.08)
    plt.close(fig)


def series_plot(ax, rs, key, method, limit, label=True, transform_x=None):
    """Medians with interquartile bars; a cross at the limit where a run was killed, an open
    triangle at the top where one was refused."""
    c, mk, lab = STYLE[method]
    ok = sorted((r for r in rs if r["status"] == "ok"), key=lambda r: r[key])
    if ok:
        xs = [r[key] for r in ok]
        med = [num(r["fit_s_median"]) for r in ok]
        lo = [m - num(r["fit_s_q1"]) for m, r in zip(med, ok)]
        hi = [num(r["fit_s_q3"]) - m for m, r in zip(med, ok)]
        ax.errorbar(xs, med, yerr=[lo, hi], fmt=mk + "-", color=c, ms=4, lw=1.2, capsize=2.5,
                    elinewidth=1, label=lab if label else None)
    top = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for r in rs:
        if r["status"] == "timeout":
            ax.plot([r[key]], [limit], marker="x", color=c, ms=7, mew=1.6, ls="none")
        elif r["status"] == "refused":
            ax.plot([r[key]], [0.95], marker="v", mfc="none", color=c, ms=7, mew=1.3, ls="none",
                    transform=top)


def status_handles(rows, limit):
    h = []
    if any(r["status"] == "timeout" for r in rows):
        h.append(Line2D([], [], marker="x", color="0.3", ls="none", ms=7, mew=1.6,
                        label=f"killed at the {limit:g} s limit"))
    if any(r["status"] == "refused" for r in rows):
        h.append(Line2D([], [], marker="v", mfc="none", color="0.3", ls="none", ms=7,
                        label="refused (memory budget or --max-features)"))
    return h


def limit_lines(axes, rows, limit):
    """A dotted line at the time limit, where something was killed at it."""
    if any(r["status"] == "timeout" for r in rows):
        for ax in axes:
            ax.axhline(limit, color="0.6", lw=0.8, ls=":")


def method_handles(methods):
    return [Line2D([], [], color=STYLE[m][0], marker=STYLE[m][1], ms=5, label=STYLE[m][2])
            for m in methods]


def n_ticks(ax, ns):
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ns))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _: f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"))


def degree_ticks(ax, degrees):
    ax.xaxis.set_major_locator(FixedLocator(degrees))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(min(degrees) - 0.4, max(degrees) + 0.4)


def value_axis(ax, values, axis="y"):
    """Linear from 0 when the values span less than a decade, log otherwise, with plain numbers
    (0.1, 1, 10, 100) as labels."""
    v = [x for x in values if x and x > 0]
    a = ax.yaxis if axis == "y" else ax.xaxis
    if v and max(v) / min(v) > 10:
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
        a.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,g}"))
    elif v:
        (ax.set_ylim if axis == "y" else ax.set_xlim)(0, max(v) * 1.12)


def grid_axes(k, w=3.3, h=2.6, sharey=True):
    ncol = min(3, k)
    nrow = (k + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(w * ncol, h * nrow + 0.6), sharey=sharey,
                             layout="constrained", squeeze=False)
    axes = [a for row in axes for a in row]
    for a in axes[k:]:
        a.set_visible(False)
    return fig, axes[:k]


def plots(out, rows, meta):
    figure_setup()
    g, limit = meta["grid"], meta["timeout"]
    poly = ("materialised", "streamed", "kernel")

    # 1. time against degree, a panel per d
    fig, axes = grid_axes(len(g["dims"]))
    used = []
    for ax, d in zip(axes, g["dims"]):
        for m in poly:
            rs = pick(rows, "degree", m, d=d, n=g["n_fixed"])
            series_plot(ax, rs, "degree", m, limit, label=False)
            used += rs
        ax.set_yscale("log")
        degree_ticks(ax, g["degrees"])
        ax.set_title(f"d = {d}")
        ax.grid(alpha=0.3, which="major")
    limit_lines(axes, used, limit)
    for ax in axes:
        ax.set_xlabel("degree D")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("time to train (s)")
    finish(fig, out, "study_time_vs_degree",
           f"Polynomial expansion against the kernel path: time against the degree "
           f"(n = {g['n_fixed']:,}, circle data)", meta,
           method_handles(poly) + status_handles(used, limit), time_note(meta))

    # 2. time against n, a panel per degree
    fig, axes = grid_axes(len(g["degrees"]))
    used = []
    for ax, D in zip(axes, g["degrees"]):
        for m in poly:
            rs = pick(rows, "n", m, d=g["d_fixed"], degree=D)
            series_plot(ax, rs, "n", m, limit, label=False)
            used += rs
        ax.set_yscale("log")
        n_ticks(ax, g["ns"])
        ax.set_title(f"D = {D}")
        ax.grid(alpha=0.3, which="major")
        ax.set_xlabel("samples n")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel("time to train (s)")
    limit_lines(axes, used, limit)
    finish(fig, out, "study_time_vs_n",
           f"Polynomial expansion against the kernel path: time against the sample count "
           f"(d = {g['d_fixed']}, circle data)", meta,
           method_handles(poly) + status_handles(used, limit), time_note(meta))

    # 3. memory
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.3), layout="constrained")
    a1, a2, a3 = axes
    rs1 = [r for m in poly for r in pick(rows, "degree", m, d=g["mem_d"], n=g["n_fixed"])]
    Dmem = max(g["degrees"])
    rs2 = [r for m in poly for r in pick(rows, "n", m, d=g["d_fixed"], degree=Dmem)]
    for ax, rs, key in ((a1, rs1, "degree"), (a2, rs2, "n")):
        vals = []
        for m in poly:
            c, mk, _ = STYLE[m]
            ok = sorted((r for r in rs if r["method"] == m and r["status"] == "ok"),
                        key=lambda r: r[key])
            ax.plot([r[key] for r in ok], [num(r["peak_rss_mib"]) for r in ok], mk + "-",
                    color=c, ms=4, lw=1.2)
            vals += [num(r["peak_rss_mib"]) for r in ok]
        pred = sorted((r for r in rs if r["method"] == "materialised"
                       and num(r["materialise_mib"])), key=lambda r: r[key])
        pred = [r for r in pred if r["status"] in ("ok", "refused")]
        ax.plot([r[key] for r in pred], [num(r["materialise_mib"]) for r in pred], "--",
                color=STYLE["materialised"][0], lw=1, alpha=0.8)
        vals += [num(r["materialise_mib"]) for r in pred]
        value_axis(ax, vals)
        ax.set_ylabel("peak RSS (MiB)")
        ax.grid(alpha=0.3)
    a1.set_title(f"against the degree (d = {g['mem_d']}, n = {g['n_fixed']:,})")
    a1.set_xlabel("degree D")
    degree_ticks(a1, g["degrees"])
    a2.set_title(f"against the sample count (d = {g['d_fixed']}, D = {Dmem})")
    a2.set_xlabel("samples n")
    n_ticks(a2, g["ns"])
    ma = [r for r in rows if r["method"] == "materialised" and r["status"] == "ok"
          and r["sweep"] in ("degree", "n")]
    xs = [num(r["materialise_mib"]) for r in ma]
    ys = [num(r["peak_rss_mib"]) for r in ma]
    a3.scatter(xs, ys, s=14, color=STYLE["materialised"][0])
    if xs:
        lo, hi = min(xs + ys) * 0.8, max(xs + ys) * 1.25
        a3.plot([lo, hi], [lo, hi], "--", color=STYLE["materialised"][0], lw=1, alpha=0.8)
    value_axis(a3, xs + ys, "x")
    value_axis(a3, xs + ys, "y")
    a3.set_xlabel("predicted bytes of the expanded matrix (MiB)")
    a3.set_ylabel("measured peak RSS (MiB)")
    a3.set_title("materialised: measured against predicted")
    a3.grid(alpha=0.3)
    finish(fig, out, "study_memory", "Peak memory (resident set) of each method", meta,
           method_handles(poly) + [Line2D([], [], ls="--", color=STYLE["materialised"][0],
                                          label="predicted bytes of the expanded matrix "
                                                "(ptron expand)")],
           "Peak RSS: the largest over a point's runs and processes (/usr/bin/time %M); "
           "materialised: max of expand and train.")

    # 4. RFF against the RBF kernel
    fig, axes = plt.subplots(1, 3, figsize=(10.5, 3.3), layout="constrained")
    a1, a2, a3 = axes
    rff = sorted((r for r in pick(rows, "rff-dim", "rff-streamed") if r["status"] == "ok"),
                 key=lambda r: r["rff_dim"])
    rbf = [r for r in pick(rows, "rff-dim", "rbf-kernel") if r["status"] == "ok"]
    cr, mr, _ = STYLE["rff-streamed"]
    ck = STYLE["rbf-kernel"][0]
    acc = [num(r["test_accuracy"]) for r in rff]
    a1.errorbar([r["rff_dim"] for r in rff], acc,
                yerr=[[a - num(r["test_accuracy_q1"]) for a, r in zip(acc, rff)],
                      [num(r["test_accuracy_q3"]) - a for a, r in zip(acc, rff)]],
                fmt=mr + "-", color=cr, ms=4, lw=1.2, capsize=2.5, elinewidth=1)
    if rbf:
        a1.axhline(num(rbf[0]["test_accuracy"]), color=ck, ls="--", lw=1.2)
        k = rbf[0]
        a2.axhspan(num(k["fit_s_q1"]), num(k["fit_s_q3"]), color=ck, alpha=0.2, lw=0)
        a2.axhline(num(k["fit_s_median"]), color=ck, ls="--", lw=1.2)
    series_plot(a2, pick(rows, "rff-dim", "rff-streamed"), "rff_dim", "rff-streamed", limit)
    for a in (a1, a2):
        a.set_xscale("log", base=2)
        a.xaxis.set_major_locator(FixedLocator(g["rff_dims"]))
        a.xaxis.set_minor_locator(NullLocator())
        a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        a.tick_params(axis="x", labelrotation=45)
        a.set_xlabel("random features D")
        a.grid(alpha=0.3)
    a1.set_ylabel("held-out accuracy")
    a1.set_title(f"accuracy (d = {g['rff_d']}, n = {g['rff_n']:,}; RFF over seeds)")
    a2.set_yscale("log")
    a2.set_ylabel("time to train (s)")
    a2.set_title(f"time (d = {g['rff_d']}, n = {g['rff_n']:,})")
    rff_n = pick(rows, "rff-n", "rff-streamed") + pick(rows, "rff-n", "rbf-kernel")
    for m in ("rff-streamed", "rbf-kernel"):
        series_plot(a3, pick(rows, "rff-n", m), "n", m, limit)
    limit_lines([a3], rff_n, limit)
    a3.set_yscale("log")
    n_ticks(a3, g["rff_ns"])
    a3.set_xlabel("samples n")
    a3.set_ylabel("time to train (s)")
    a3.set_title(f"time against n (RFF D = {g['rff_dim_fixed']:,}, d = {g['rff_d']})")
    a3.grid(alpha=0.3)
    hk = Line2D([], [], color=ck, marker=STYLE["rbf-kernel"][1], ls="--", ms=5,
                label=STYLE["rbf-kernel"][2] + " (band: IQR)")
    finish(fig, out, "study_rff",
           "Random Fourier features against the RBF kernel path (gamma = 1/d)", meta,
           method_handles(["rff-streamed"]) + [hk] +
           status_handles(rff_n, limit), time_note(meta))


def report(out):
    rows, meta = load(out)
    F = findings(rows, meta)
    write_markdown(out, rows, meta, F)
    plots(out, rows, meta)
    for k in ("sk_degree", "sk_n", "rff_dim"):
        print("\n".join(F[k]))
