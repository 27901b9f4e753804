#!/usr/bin/python3
"""The mistake bound of iterative parameter mixing on more than two classes, from a reference
separator: a converged one-process model of the same data (tests/mpi/mpi.sh).

usage: multiclass_bound.py MODEL DATA.csv ovr|direct

x~ = (1, x) (the model's rows are the bias, then the weights), R = max |x~|.
  ovr:    class c's problem has the margin g_c = min_i y_ic (W_c . x~_i) / |W_c| of the
          reference's row c, and its serial bound (R / g_c)^2; prints their sum.
  direct: the multiclass perceptron (Kesler's construction: a mistake adds a vector of norm
          <= sqrt(2) R), with g = min_i (W_y . x~_i - max_{r != y} W_r . x~_i) / |W|_F:
          prints 2 (R / g)^2.
With uniform mixing on P ranks, the updates stay within P times the printed bound (McDonald,
Hall and Mann 2010, Theorem 3, per binary problem, and for the multiclass perceptron).
Exits 1 if the reference does not separate the data.
"""
import sys

import numpy as np


def main():
    model, data, mode = sys.argv[1:4]
    lines = open(model).read().split("\n")
    labels = [float(v) for v in next(l for l in lines if l.startswith("labels ")).split()[1:]]
    start = lines.index("W") + 1
    W = np.array([[float(v) for v in l.split()] for l in lines[start:start + len(labels)]])
    D = np.loadtxt(data, delimiter=",", ndmin=2)
    y = np.array([labels.index(v) for v in D[:, 0]])
    X = np.hstack([np.ones((len(D), 1)), D[:, 1:]])
    R = np.sqrt((X * X).sum(axis=1)).max()
    S = X @ W.T
    if mode == "ovr":
        bound = 0.0
        for c in range(len(labels)):
            yc = np.where(y == c, 1.0, -1.0)
            g = (yc * S[:, c]).min() / np.linalg.norm(W[c])
            if g <= 0:
                sys.exit(f"class {labels[c]}: the reference does not separate (margin {g})")
            bound += (R / g) ** 2
    else:
        own = S[np.arange(len(y)), y]
        S[np.arange(len(y)), y] = -np.inf
        g = (own - S.max(axis=1)).min() / np.linalg.norm(W)
        if g <= 0:
            sys.exit(f"the reference does not separate (margin {g})")
        bound = 2.0 * (R / g) ** 2
    print(f"{bound:.6g}")


main()
