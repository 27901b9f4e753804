"""The notebook example runs and says what the notebook found."""
import os
import re
import subprocess
import sys

from conftest import REPO


def test_notebook_example():
    script = os.path.join(REPO, "python", "examples", "notebook_perceptron.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert re.search(r"random start: \d+ epochs, .* training accuracy 1\.00", out), out
    # the notebook's own loop and ptron make the same corrections from w = 0
    m = re.search(r"from zero: notebook loop (\d+) epochs, ptron (\d+); largest weight "
                  r"difference (\S+)", out)
    assert m and m.group(1) == m.group(2) and float(m.group(3)) == 0.0, out
    assert "batch perceptron criterion: training accuracy 1.00" in out
