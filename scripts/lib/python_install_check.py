"""The check of scripts/test-extra.d/python-install and python-pip: the installed package,
imported from the install directory with no PTRON_LIB, loads the library its record names and
trains.

usage: python_install_check.py LIBRARY SITE_DIR
  (run by a python that imports ptron from SITE_DIR: PYTHONPATH=SITE_DIR, or a venv's python)
"""
import sys

import numpy as np

import ptron


def main():
    library, site = sys.argv[1], sys.argv[2]
    assert ptron.__file__.startswith(site), ptron.__file__
    assert ptron.library_path == library, ptron.library_path
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    clf = ptron.Perceptron().fit(X, [1, -1])
    assert list(clf.predict(X)) == [1, -1]
    assert clf.coef_.tolist() == [[1.0, -1.0]]  # the worked example of the notes on separable data
    return 0


if __name__ == "__main__":
    sys.exit(main())
