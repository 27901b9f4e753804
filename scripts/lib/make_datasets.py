"""Regenerates datasets/*.svm and datasets/sklearn_reference.tsv from the data Debian's
python3-sklearn ships (run through scripts/make-datasets, from the repository root).
"""
import numpy as np
from sklearn import datasets
from sklearn.linear_model import Perceptron

loaders = {
    "breast_cancer": datasets.load_breast_cancer,  # 569 x 30, 2 classes
    "iris": datasets.load_iris,                    # 150 x 4, 3 classes
    "wine": datasets.load_wine,                    # 178 x 13, 3 classes
    "digits": datasets.load_digits,                # 1797 x 64 (8x8 images), 10 classes
}

def write_svm(path, X, y):
    with open(path, "w") as f:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{np.float32(v):.9g}" for j, v in enumerate(row) if v != 0)
            f.write(f"{int(label)} {feats}\n".rstrip() + "\n")

# scikit-learn's Perceptron keeps the last iterate, whose test accuracy swings from one epoch
# budget to the next; the reference is its accuracy at each budget and their mean.
budgets = [5, 10, 20, 50, 100]
ref = ["# dataset\ttrain\ttest\tclasses\t" + "\t".join(f"acc_{e}_epochs" for e in budgets) + "\tmean"]
for name, load in loaders.items():
    d = load()
    X, y = d.data.astype(np.float32), d.target
    # a fixed split: 75% train, 25% test, from one permutation with seed 0
    perm = np.random.RandomState(0).permutation(len(y))
    cut = len(y) * 3 // 4
    tr, te = perm[:cut], perm[cut:]
    write_svm(f"datasets/{name}.train.svm", X[tr], y[tr])
    write_svm(f"datasets/{name}.test.svm", X[te], y[te])
    # scikit-learn's Perceptron on the same split, same order (no shuffling), eta0=1, on dense
    # arrays (for sparse input it decays the intercept's step by 0.01, another algorithm)
    accs = []
    for e in budgets:
        clf = Perceptron(eta0=1.0, shuffle=False, tol=None, max_iter=e, random_state=0)
        clf.fit(X[tr].astype(np.float64), y[tr])
        accs.append(clf.score(X[te].astype(np.float64), y[te]))
    ref.append(f"{name}\t{len(tr)}\t{len(te)}\t{len(np.unique(y))}\t" +
               "\t".join(f"{a:.6f}" for a in accs) + f"\t{np.mean(accs):.6f}")
    print(f"{name}: {len(tr)} train, {len(te)} test, {X.shape[1]} features, "
          f"{len(np.unique(y))} classes; sklearn Perceptron (OvR) test accuracy at "
          + ", ".join(f"{e}: {a:.4f}" for e, a in zip(budgets, accs)) + f"; mean {np.mean(accs):.4f}")
open("datasets/sklearn_reference.tsv", "w").write("\n".join(ref) + "\n")
