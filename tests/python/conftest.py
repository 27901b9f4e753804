"""Shared fixtures: the repository's package first on the path, the CLI beside the library,
and no test may skip or be expected to fail (either counts as a failure here)."""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped:
        why = getattr(report, "wasxfail", None) or report.longrepr
        report.outcome = "failed"
        report.longrepr = "a skipped or xfailed test is a failure in this suite: %s" % (why,)


class Cli:
    """Runs the ptron program: PTRON_BIN, else the build tree's."""

    def __init__(self):
        self.path = os.environ.get("PTRON_BIN") or os.path.join(REPO, "build", "src", "ptron")
        assert os.access(self.path, os.X_OK), "the ptron CLI is not built at %s" % self.path

    def __call__(self, *args, check=True):
        r = subprocess.run([self.path] + [str(a) for a in args], capture_output=True, text=True)
        if check:
            assert r.returncode == 0, "ptron %s: exit %d\n%s" % (" ".join(map(str, args)),
                                                                  r.returncode, r.stderr)
        return r


@pytest.fixture(scope="session")
def cli():
    return Cli()
