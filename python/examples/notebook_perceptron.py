#!/usr/bin/python3
"""The perceptron notebook's experiment (docs/theory.md, The lecture notes), with
ptron: the same data, the augmented vectors (the bias), a random start, the single-sample
correction with epsilon = 1 until an epoch makes no update; then the notebook's own loop from
w = 0 beside ptron's, the batch rule, and the least-squares criterion for data that is not
separable.

    PYTHONPATH=python /usr/bin/python3 python/examples/notebook_perceptron.py
"""
import numpy as np

import ptron

rng = np.random.RandomState(0)
data = rng.random_sample((100, 2))
labels = data[:, 0] * 0.7 + data[:, 1] * 0.4 > 0.5
print("class sizes:", np.sum(~labels), np.sum(labels))

# The notebook's algorithm in one call: augmented vectors (fit_intercept), a random start
# (init="random": every weight uniform in [0, 1), as np.random.random_sample), a += x on a
# mistake, stop at an epoch with no update.
clf = ptron.Perceptron(init="random", random_state=1, max_iter=1000).fit(data, labels)
(a0, a1), d = clf.coef_[0], clf.intercept_[0]
print("random start: %d epochs, d = %.4f, a0 = %.4f, a1 = %.4f, training accuracy %.2f"
      % (clf.n_iter_, d, a0, a1, clf.score(data, labels)))
print("boundary from (0, %.3f) to (%.3f, 0); the notebook's guess: (0.15, 1.0) to (0.7, 0.0)"
      % (-d / a1, -d / a0))

# The notebook's loop itself (flipped augmented vectors), from a = 0, against ptron from w = 0.
x32 = data.astype(np.float32)  # ptron computes in float32
flipped = np.concatenate([np.ones((100, 1), np.float32), x32], axis=1)
flipped[~labels] = -flipped[~labels]
a = np.zeros(3, np.float32)
for epoch in range(1000):
    nchanged = 0
    for i in range(len(flipped)):
        if np.dot(a, flipped[i]) > 0:
            continue
        a += flipped[i]
        nchanged += 1
    if nchanged == 0:
        break
zero = ptron.Perceptron(max_iter=1000).fit(data, labels)
mine = np.concatenate([zero.intercept_, zero.coef_[0]])
print("from zero: notebook loop %d epochs, ptron %d; largest weight difference %.3g"
      % (epoch + 1, zero.n_iter_, np.max(np.abs(mine - a))))

# Batch correction: w += eta * (sum of the misclassified x) / n, every epoch (the perceptron
# criterion J_p by full-batch subgradient steps).
batch = ptron.BatchClassifier(loss="perceptron", eta0=1.0, max_iter=500, batch_size=None,
                              average=False).fit(data, labels)
print("batch perceptron criterion: training accuracy %.2f after %d iterations"
      % (batch.score(data, labels), batch.n_iter_))

# Not separable (10% of the labels flipped): the least-squares criterion sum (a.x - c)^2.
noisy = labels ^ (rng.random_sample(100) < 0.1)
lsq = ptron.BatchClassifier(loss="squared", eta0=0.1, max_iter=500, batch_size=None,
                            average=False).fit(data, noisy)
print("least squares on noisy labels: training accuracy %.2f, accuracy on the clean labels %.2f"
      % (lsq.score(data, noisy), lsq.score(data, labels)))
