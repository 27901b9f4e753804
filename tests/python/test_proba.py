"""predict_proba with probability=True: Platt scaling as `ptron train --proba` fits it (the same
sigmoid and the same probabilities as `ptron predict --proba`), and no predict_proba otherwise,
as scikit-learn's SVC."""
import pickle

import numpy as np
import pytest
import scipy.sparse
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.exceptions import NotFittedError

import ptron


@pytest.fixture(scope="module")
def noisy(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "noisy.svm"
    cli("gen", "noisy", "-o", path, "--n", 300, "--d", 8, "--seed", 7, "--noise", 0.1)
    return path


def cli_proba(cli, tmp_path, data, options):
    """The CLI's model trained with --proba and its `predict --proba` column, as text."""
    model, out = tmp_path / "cli.model", tmp_path / "cli.proba"
    cli("train", data, "-o", model, "--quiet", "--proba", *options.split())
    cli("predict", model, data, "-o", tmp_path / "cli.pred", "--proba", out)
    lines = out.read_text().splitlines()
    assert lines[0] == "# 1"  # the probability of the +1 class: classes_[1]
    return ptron.load_model(model), lines[1:]


RUNS = [
    (ptron.Perceptron, "--epochs 5 --seed 3", dict(max_iter=5, random_state=3)),
    (ptron.Perceptron, "--averaged --shuffle --seed 8", dict(average=True, shuffle=True,
                                                            random_state=8)),
    (ptron.Perceptron, "--voted --epochs 4 --seed 1", dict(voted=True, max_iter=4,
                                                          random_state=1)),
    (ptron.BatchClassifier, "--path batch --loss hinge --lambda 0.01 --seed 2",
     dict(loss="hinge", alpha=0.01, random_state=2)),
    (ptron.KernelPerceptron, "--path kernel --kernel rbf --gamma 0.5 --epochs 4 --seed 5",
     dict(kernel="rbf", gamma=0.5, max_iter=4, random_state=5)),
    (ptron.Perceptron, "--epochs 5 --seed 3 --class-weight -1:2.5",
     dict(max_iter=5, random_state=3, class_weight={-1: 2.5})),
]


@pytest.mark.parametrize("cls, options, kwargs", RUNS)
def test_same_probabilities_as_cli(cli, tmp_path, noisy, cls, options, kwargs):
    X, y = ptron.load_dataset(noisy)
    mine = cls(probability=True, **kwargs).fit(X, y)
    theirs, lines = cli_proba(cli, tmp_path, noisy, options)
    assert theirs.probability and type(theirs) is cls
    assert mine._model.platt() == theirs._model.platt()  # the same A and B, bit for bit
    P = mine.predict_proba(X)
    assert P.shape == (len(y), 2) and P.dtype == np.float64
    assert ["%.9g" % p for p in P[:, 1]] == lines
    assert_array_equal(P, theirs.predict_proba(X))
    assert_array_equal(P.sum(axis=1), np.ones(len(y)))
    assert_array_equal(mine.predict_log_proba(X), np.log(P))
    # a sigmoid of the decision value: its order, and a model file the CLI predicts with
    f = mine.decision_function(X)
    a, _ = mine._model.platt()
    assert a < 0 and np.all(np.diff(P[np.argsort(f, kind="stable"), 1]) >= 0)
    ptron.save_model(mine, tmp_path / "py.model")
    cli("predict", tmp_path / "py.model", noisy, "-o", tmp_path / "py.pred",
        "--proba", tmp_path / "py.proba")
    assert (tmp_path / "py.proba").read_text().splitlines()[1:] == lines


def test_seed_and_pickle(noisy):
    X, y = ptron.load_dataset(noisy)
    a = ptron.Perceptron(probability=True, random_state=4).fit(X, y)
    b = ptron.Perceptron(probability=True, random_state=4).fit(X, y)
    c = ptron.Perceptron(probability=True, random_state=5).fit(X, y)
    assert a._model.platt() == b._model.platt() != c._model.platt()  # folds from the seed
    back = pickle.loads(pickle.dumps(a))
    assert_array_equal(back.predict_proba(X), a.predict_proba(X))
    # the probabilities leave the model's decisions as they were
    assert_array_equal(a.decision_function(X), ptron.Perceptron(random_state=4).fit(X, y)
                       .decision_function(X))


@pytest.mark.parametrize("cls", [ptron.Perceptron, ptron.BatchClassifier,
                                 ptron.KernelPerceptron])
def test_no_predict_proba_without_probability(cls, noisy):
    X, y = ptron.load_dataset(noisy)
    clf = cls().fit(X, y)
    assert not hasattr(clf, "predict_proba") and not hasattr(clf, "predict_log_proba")
    with pytest.raises(AttributeError, match="not available when probability=False"):
        clf.predict_proba(X)
    clf.set_params(probability=True)  # without a new fit there is no sigmoid
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        clf.predict_proba(X)
    with pytest.raises(NotFittedError):
        cls(probability=True).predict_proba(X)


def test_refusals(noisy):
    X, y = ptron.load_dataset(noisy)
    three = np.where(X[:, 0] > 0.2, 2, np.where(X[:, 0] < -0.2, 1, 0))
    for cls in (ptron.Perceptron, ptron.BatchClassifier, ptron.KernelPerceptron):
        with pytest.raises(ValueError, match="for two classes; the data has 3"):
            cls(probability=True).fit(X, three)
        if hasattr(cls, "partial_fit"):
            with pytest.raises(ValueError, match="partial_fit does not fit probabilities"):
                cls(probability=True).partial_fit(X, y, classes=[-1, 1])
    with pytest.raises(ValueError, match="not on early stopping's"):
        ptron.Perceptron(probability=True, early_stopping=True).fit(X, y)
    with pytest.raises(ptron.PtronValueError, match=r"probability=True \(Platt scaling on 5 "
                       r"folds\): cross-validation needs 2 to n = 4 folds"):
        ptron.Perceptron(probability=True).fit(X[:4], y[:4])  # fewer rows than 5 folds


@pytest.mark.parametrize("cls", [ptron.Perceptron, ptron.BatchClassifier,
                                 ptron.KernelPerceptron])
def test_sparse_rows(cls):
    """scipy.sparse X (the library's sparse layout): the folds and the sigmoid as on dense X,
    to float rounding (the sparse kernels add in another order)."""
    rng = np.random.RandomState(0)
    X = rng.randn(200, 30) * (rng.rand(200, 30) < 0.2)
    y = np.where(X[:, 0] + 0.3 * rng.randn(200) > 0, 1, 0)
    S = scipy.sparse.csr_matrix(X)
    sparse = cls(probability=True, random_state=1, class_weight="balanced").fit(S, y)
    dense = cls(probability=True, random_state=1, class_weight="balanced").fit(X, y)
    assert_allclose(sparse._model.platt(), dense._model.platt(), rtol=1e-5)
    assert_allclose(sparse.predict_proba(S), dense.predict_proba(X), atol=1e-5)
