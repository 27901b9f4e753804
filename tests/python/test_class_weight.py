"""class_weight= on the three classifiers: the CLI's --class-weight model on the same data,
"balanced" as scikit-learn computes it, dense and scipy.sparse rows alike, and clear refusals."""
import numpy as np
import pytest
import scipy.sparse
from numpy.testing import assert_array_equal
from sklearn.utils.class_weight import compute_class_weight

import ptron


@pytest.fixture(scope="module")
def unbalanced(cli, tmp_path_factory):
    """Two classes (-1 and 1), noisy, a third of the -1 rows kept (written as LIBSVM text)."""
    path = tmp_path_factory.mktemp("data") / "unbalanced.svm"
    cli("gen", "noisy", "-o", path, "--n", 400, "--d", 9, "--seed", 11, "--noise", 0.08)
    X, y = ptron.load_dataset(path)
    keep = (y == 1) | (np.arange(len(y)) % 3 == 0)  # a third of the -1 rows
    lines = ["%d %s" % (label, " ".join("%d:%.9g" % (j + 1, v) for j, v in enumerate(row)))
             for row, label in zip(X[keep], y[keep])]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def blobs(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "blobs.csv"
    cli("gen", "blobs", "-o", path, "--n", 300, "--d", 6, "--classes", 4, "--seed", 2)
    return path


def cli_model(cli, tmp_path, data, options):
    out = tmp_path / "cli.model"
    cli("train", data, "-o", out, "--quiet", *options.split())
    return ptron.load_model(out)


# (estimator, CLI options, keyword arguments): one of each path and variant
RUNS = [
    (ptron.Perceptron, "--epochs 6", dict(max_iter=6)),
    (ptron.Perceptron, "--averaged --shuffle --seed 4 --margin 0.2",
     dict(average=True, shuffle=True, random_state=4, margin=0.2)),
    (ptron.BatchClassifier, "--path batch --loss hinge --lambda 0.01 --epochs 8",
     dict(loss="hinge", alpha=0.01, max_iter=8)),
    (ptron.KernelPerceptron, "--path kernel --kernel rbf --gamma 0.5 --epochs 5",
     dict(kernel="rbf", gamma=0.5, max_iter=5)),
]


@pytest.mark.parametrize("cls, options, kwargs", RUNS)
@pytest.mark.parametrize("spec, weight", [("-1:3.5", {-1: 3.5}), ("1:0.25,-1:2", {1: 0.25, -1: 2}),
                                          ("balanced", "balanced")])
def test_same_model_as_cli(cli, tmp_path, unbalanced, cls, options, kwargs, spec, weight):
    X, y = ptron.load_dataset(unbalanced)
    mine = cls(class_weight=weight, **kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, unbalanced, options + " --class-weight " + spec)
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))
    if cls is not ptron.KernelPerceptron:
        assert_array_equal(mine.coef_, theirs.coef_)
        assert_array_equal(mine.intercept_, theirs.intercept_)
    # and the weights change the model: the unweighted one differs
    plain = cls(**kwargs).fit(X, y)
    assert not np.array_equal(plain.decision_function(X), mine.decision_function(X))


@pytest.mark.parametrize("cls, options, kwargs", [
    (ptron.Perceptron, "--epochs 6", dict(max_iter=6)),
    (ptron.Perceptron, "--multiclass direct --epochs 6", dict(multi_class="direct", max_iter=6)),
    (ptron.BatchClassifier, "--path batch --loss hinge --epochs 5", dict(loss="hinge", max_iter=5)),
    (ptron.KernelPerceptron, "--path kernel --kernel rbf --gamma 0.2",
     dict(kernel="rbf", gamma=0.2)),
])
def test_multiclass_same_model_as_cli(cli, tmp_path, blobs, cls, options, kwargs):
    """More than two classes: one-vs-rest weighs each row by its own class in every binary
    problem, the multiclass perceptron scales the update of a row by its class's weight
    (include/ptron.h); the binding hands the same weights to the same library."""
    X, y = ptron.load_dataset(blobs)
    mine = cls(class_weight={0: 2.0, 3: 0.5}, **kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, blobs, options + " --class-weight 0:2,3:0.5")
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))
    assert_array_equal(mine.predict(X), theirs.predict(X))


@pytest.mark.parametrize("cls", [ptron.Perceptron, ptron.BatchClassifier,
                                 ptron.KernelPerceptron])
@pytest.mark.parametrize("classes", [2, 3])
def test_balanced_is_sklearns_dict(cls, classes):
    """'balanced' is n / (K n_k), the dict scikit-learn's compute_class_weight gives."""
    rng = np.random.RandomState(3)
    X = rng.uniform(-1, 1, (250, 5))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [0.4, 0.7][:classes - 1]) * 5 - 2  # unbalanced
    labels = np.unique(y)
    assert len(labels) == classes and len(set(np.bincount(y + 2)[labels + 2])) == classes
    table = dict(zip(labels, compute_class_weight("balanced", classes=labels, y=y)))
    balanced = cls(class_weight="balanced", random_state=0).fit(X, y)
    explicit = cls(class_weight=table, random_state=0).fit(X, y)
    assert_array_equal(balanced.decision_function(X), explicit.decision_function(X))


@pytest.mark.parametrize("cls", [ptron.Perceptron, ptron.BatchClassifier,
                                 ptron.KernelPerceptron])
@pytest.mark.parametrize("weight", [{-8: 3.0}, "balanced"])
def test_sparse_rows_same_as_dense(cls, weight):
    """scipy.sparse input (the library's sparse layout) takes class weights as dense input
    does: the same model, and not the unweighted one."""
    rng = np.random.RandomState(5)
    X = rng.uniform(-1, 1, (300, 40)) * (rng.rand(300, 40) < 0.2)
    y = np.where(X @ rng.randn(40) + 0.4 > 0, 3, -8)
    y[rng.rand(300) < 0.08] = -8  # noise, and more -8 rows
    S = scipy.sparse.csr_matrix(X.astype(np.float32))
    dense = cls(class_weight=weight, random_state=1).fit(X, y)
    sparse = cls(class_weight=weight, random_state=1).fit(S, y)
    assert ptron._data.Dataset(S).matrix is None  # really the sparse layout
    assert_array_equal(sparse.predict(S), dense.predict(X))
    # the same sums in another order (the sparse kernels skip zeros): float rounding apart
    scale = np.abs(dense.decision_function(X)).max()
    np.testing.assert_allclose(sparse.decision_function(S), dense.decision_function(X),
                               rtol=1e-5, atol=1e-5 * scale)
    plain = cls(random_state=1).fit(S, y)
    assert not np.array_equal(plain.decision_function(S), sparse.decision_function(S))


def test_text_labels_and_partial_fit():
    rng = np.random.RandomState(8)
    X = rng.uniform(-1, 1, (200, 4))
    y = np.where(X[:, 0] > 0.3, "spam", "ham")
    w = {"spam": 4.0}
    clf = ptron.Perceptron(class_weight=w, max_iter=1).fit(X, y)
    assert_array_equal(clf.classes_, ["ham", "spam"])
    # one epoch in two chunks, no shuffle: the same weights as one fit epoch
    part = ptron.Perceptron(class_weight=w)
    part.partial_fit(X[:120], y[:120], classes=["ham", "spam"]).partial_fit(X[120:], y[120:])
    assert_array_equal(part.coef_, clf.coef_)
    assert_array_equal(part.intercept_, clf.intercept_)
    assert not np.array_equal(ptron.Perceptron(max_iter=1).fit(X, y).coef_, clf.coef_)


def test_refusals():
    X = np.random.RandomState(0).uniform(-1, 1, (50, 3))
    y = np.where(X[:, 0] > 0, 1, 0)
    for weight, match in [({2: 1.0}, r"labels the data does not have: \[2\]"),
                          ({1: 0.0}, "class 1 must be a positive finite"),
                          ({0: -2.0}, "class 0 must be a positive finite"),
                          ({0: float("nan")}, "class 0 must be a positive finite"),
                          ({0: 1e-50}, "float32"),
                          ("auto", "must be None, 'balanced' or a dict"),
                          ([1.0, 2.0], "must be None, 'balanced' or a dict")]:
        for cls in (ptron.Perceptron, ptron.BatchClassifier, ptron.KernelPerceptron):
            with pytest.raises(ValueError, match=match):
                cls(class_weight=weight).fit(X, y)
    with pytest.raises(ValueError, match="not supported by partial_fit"):
        ptron.Perceptron(class_weight="balanced").partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="not supported by partial_fit"):
        ptron.BatchClassifier(class_weight="balanced").partial_fit(X, y, classes=[0, 1])
