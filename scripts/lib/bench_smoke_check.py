"""The checks of scripts/test-extra.d/bench-smoke on its JSON outputs.

usage: bench_smoke_check.py suite BENCH.json   the suite's smoke run: no benchmark failed, and
                                               at least 50 ran
       bench_smoke_check.py cli BENCH.json     `ptron bench --json` on the tiny file: every path
                                               ran, with sane figures
Exits non-zero (with the reason on stderr) when a check fails.
"""
import json
import sys


def check_suite(path):
    runs = json.load(open(path))["benchmarks"]
    bad = [b for b in runs if b.get("error_occurred")]
    for b in bad:
        print(f"bench-smoke: {b['name']}: {b.get('error_message')}", file=sys.stderr)
    print(f"bench-smoke: {len(runs) - len(bad)} benchmarks ran, {len(bad)} failed", file=sys.stderr)
    return 1 if bad or len(runs) < 50 else 0


def check_cli(path):
    j = json.load(open(path))
    assert j["n"] == 300 and j["d"] == 8, j
    assert sorted(j["paths"]) == ["batch", "kernel", "online"], j
    for name, r in j["paths"].items():
        assert r["status"] == "ok", (name, r)
        assert r["train_seconds"] >= 0 and 0 <= r["train_accuracy"] <= 1, (name, r)
    return 0


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("suite", "cli"):
        print(__doc__, file=sys.stderr)
        return 2
    return check_suite(sys.argv[2]) if sys.argv[1] == "suite" else check_cli(sys.argv[2])


if __name__ == "__main__":
    sys.exit(main())
