#!/usr/bin/python3
"""Image-like ten-class data at MNIST's shape (28 x 28 = 784 features in [0, 1]) from the
shipped 8 x 8 digits: each row is one of the digits of a split (datasets/digits.train.svm for
the training rows, digits.test.svm for the test rows, so no held-out row comes from a digit
the training rows saw) upsampled to 20 x 20, put at MNIST's place (centred in 28 x 28) under a
random small rotation, scale and shift, blurred a little, with pixel noise, clipped to [0, 1].

Usage (Debian's python3 with numpy and scipy):
  scripts/make_digits784.py --n 60000 --test-n 10000 --seed 1 -o d784.svm --test-out d784t.svm
Writes LIBSVM text (non-zeros only); `ptron convert F --layout dense -o F.ptd` makes the dense
binary file the kernel path's benchmark reads.
"""
import argparse
import numpy as np
from scipy import ndimage


def read_svm(path):
    X, y = [], []
    for line in open(path):
        parts = line.split()
        row = np.zeros(64, np.float32)
        for t in parts[1:]:
            j, v = t.split(":")
            row[int(j) - 1] = float(v)
        X.append(row.reshape(8, 8) / 16.0)
        y.append(int(parts[0]))
    return np.array(X), np.array(y)


def make(src, labels, n, rng):
    out = np.empty((n, 784), np.float32)
    pick = rng.integers(0, len(labels), n)
    for r, s in enumerate(pick):
        img = ndimage.zoom(src[s], 2.5, order=1)  # 20 x 20
        angle = rng.uniform(-12.0, 12.0)
        img = ndimage.rotate(img, angle, reshape=False, order=1)
        scale = rng.uniform(0.85, 1.1)
        canvas = np.zeros((28, 28), np.float32)
        big = ndimage.zoom(img, scale, order=1)
        h = min(big.shape[0], 28)
        dy, dx = rng.integers(-2, 3, 2)
        y0 = max(0, min(28 - h, (28 - h) // 2 + dy))
        x0 = max(0, min(28 - h, (28 - h) // 2 + dx))
        canvas[y0:y0 + h, x0:x0 + h] = big[:h, :h]
        canvas = ndimage.gaussian_filter(canvas, rng.uniform(0.3, 0.8))
        canvas += rng.normal(0.0, 0.03, canvas.shape) * (canvas > 0.05)
        out[r] = np.clip(canvas, 0.0, 1.0).ravel()
    out[out < 0.02] = 0.0
    return out, labels[pick]


def write_svm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            nz = np.nonzero(row)[0]
            f.write(f"{int(label)} " + " ".join(f"{j + 1}:{row[j]:.4g}" for j in nz) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60000)
    ap.add_argument("--test-n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", required=True)
    ap.add_argument("--test-out", required=True)
    ap.add_argument("--digits", default="datasets")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    for split, n, path in (("train", a.n, a.o), ("test", a.test_n, a.test_out)):
        src, lab = read_svm(f"{a.digits}/digits.{split}.svm")
        X, y = make(src, lab, n, rng)
        write_svm(path, X, y)
        print(f"{path}: {n} rows x 784, {np.count_nonzero(X) / X.size:.1%} non-zero, "
              f"classes {np.bincount(y, minlength=10).tolist()}")


if __name__ == "__main__":
    main()
