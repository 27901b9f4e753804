"""The same model as the CLI on the same data and options, and model files that go both ways
between Python and the CLI."""
import json
import os

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.pipeline import make_pipeline

import ptron


@pytest.fixture(scope="module")
def noisy(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "noisy.svm"
    cli("gen", "noisy", "-o", path, "--n", 400, "--d", 13, "--seed", 5, "--noise", 0.05)
    return path


@pytest.fixture(scope="module")
def blobs(cli, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "blobs.csv"
    cli("gen", "blobs", "-o", path, "--n", 300, "--d", 6, "--classes", 4, "--seed", 2)
    return path


def cli_model(cli, tmp_path, data, *options):
    out = tmp_path / "cli.model"
    cli("train", data, "-o", out, "--quiet", *options)
    return ptron.load_model(out)


LINEAR = [
    (ptron.Perceptron, "--epochs 5 --eta 0.5", dict(max_iter=5, eta0=0.5)),
    (ptron.Perceptron, "--margin 0.3 --epochs 7", dict(margin=0.3, max_iter=7)),
    (ptron.Perceptron, "--averaged --epochs 6 --shuffle --seed 9",
     dict(average=True, max_iter=6, shuffle=True, random_state=9)),
    (ptron.Perceptron, "--no-bias --epochs 4 --pass blocked", dict(fit_intercept=False, max_iter=4)),
    (ptron.BatchClassifier, "--path batch --loss hinge --lambda 0.01 --epochs 8",
     dict(loss="hinge", alpha=0.01, max_iter=8)),
    (ptron.BatchClassifier, "--path batch --batch-size 32 --schedule invsqrt --shuffle --seed 4 "
     "--eta 0.3", dict(batch_size=32, learning_rate="invsqrt", shuffle=True, random_state=4,
                       eta0=0.3)),
    (ptron.BatchClassifier, "--path batch --average-iterates --schedule pegasos --lambda 0.1 "
     "--loss squared", dict(average=True, learning_rate="pegasos", alpha=0.1, loss="squared")),
]


@pytest.mark.parametrize("cls, options, kwargs", LINEAR)
@pytest.mark.parametrize("layout", ["in place", "float64 copy"])
def test_linear_same_model(cli, tmp_path, noisy, cls, options, kwargs, layout):
    X, y = ptron.load_dataset(noisy)
    if layout == "float64 copy":
        X = np.array(X, dtype=np.float64)
    mine = cls(**kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, noisy, *options.split())
    assert type(theirs) is cls
    assert mine.get_params() == theirs.get_params() | {"random_state": mine.random_state}
    assert_array_equal(mine.coef_, theirs.coef_)
    assert_array_equal(mine.intercept_, theirs.intercept_)
    assert mine.n_iter_ == theirs.n_iter_
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))


@pytest.mark.parametrize("options, kwargs", [
    ("--voted --epochs 4", dict(voted=True, max_iter=4)),
])
def test_voted_same_decisions(cli, tmp_path, noisy, options, kwargs):
    X, y = ptron.load_dataset(noisy)
    mine = ptron.Perceptron(**kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, noisy, *options.split())
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))
    with pytest.raises(AttributeError, match="linear models only"):
        mine.coef_


@pytest.mark.parametrize("options, kwargs", [
    ("--path kernel --kernel rbf --gamma 0.5 --epochs 5", dict(kernel="rbf", gamma=0.5, max_iter=5)),
    ("--path kernel --kernel poly --degree 3 --coef0 0.5 --gram rows --averaged",
     dict(kernel="poly", degree=3, coef0=0.5, gram="rows", average=True)),
    ("--path kernel --kernel 2*rbf(gamma=0.5)+normalize(linear) --epochs 5",
     dict(kernel="2*rbf(gamma=0.5)+normalize(linear)", max_iter=5)),
    ("--path kernel --kernel rbf --budget 7 --seed 3",
     dict(kernel="rbf", budget=7, random_state=3)),
])
def test_kernel_same_decisions(cli, tmp_path, noisy, options, kwargs):
    X, y = ptron.load_dataset(noisy)
    mine = ptron.KernelPerceptron(**kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, noisy, *options.split())
    # gamma "scale" (the default) is resolved from the data: a model file records the number
    if mine.gamma == "scale":
        assert isinstance(theirs.gamma, float) and theirs.gamma > 0
        theirs.gamma = "scale"
    assert mine.get_params() == theirs.get_params() | {"random_state": mine.random_state}
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))
    assert_array_equal(mine.predict(X), theirs.predict(X))


@pytest.mark.parametrize("cls, options, kwargs", [
    (ptron.Perceptron, "--epochs 6", dict(max_iter=6)),
    (ptron.Perceptron, "--multiclass direct --epochs 6 --averaged",
     dict(multi_class="direct", max_iter=6, average=True)),
    (ptron.BatchClassifier, "--path batch --loss hinge --epochs 5", dict(loss="hinge", max_iter=5)),
])
def test_multiclass_same_model(cli, tmp_path, blobs, cls, options, kwargs):
    X, y = ptron.load_dataset(blobs)
    mine = cls(**kwargs).fit(X, y)
    theirs = cli_model(cli, tmp_path, blobs, *options.split())
    assert mine.coef_.shape == (4, 6)
    assert_array_equal(mine.coef_, theirs.coef_)
    assert_array_equal(mine.intercept_, theirs.intercept_)
    assert mine.decision_function(X).shape == (300, 4)
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))
    assert_array_equal(mine.classes_, [0, 1, 2, 3])


def test_kernel_multiclass_same_decisions(cli, tmp_path, blobs):
    X, y = ptron.load_dataset(blobs)
    mine = ptron.KernelPerceptron(kernel="rbf", gamma=0.2).fit(X, y)
    theirs = cli_model(cli, tmp_path, blobs, "--path", "kernel", "--kernel", "rbf", "--gamma", "0.2")
    assert_array_equal(mine.decision_function(X), theirs.decision_function(X))


@pytest.mark.parametrize("transformer, options", [
    (ptron.PolynomialExpansion(degree=2, coef0=0.5), ["--degree", "2", "--coef0", "0.5"]),
    (ptron.PolynomialExpansion(degree=3), ["--degree", "3"]),
    (ptron.RandomFourierFeatures(n_components=100, gamma=0.3, random_state=7),
     ["--rff", "100", "--gamma", "0.3", "--seed", "7"]),
])
def test_transformers_same_features(cli, tmp_path, noisy, transformer, options):
    out = tmp_path / "expanded.ptd"
    cli("expand", noisy, "-o", out, "--quiet", *options)
    X, y = ptron.load_dataset(noisy)
    theirs, y2 = ptron.load_dataset(out)
    mine = transformer.fit_transform(X)
    assert mine.dtype == np.float32
    assert mine.shape == theirs.shape == (400, transformer.n_output_features_)
    assert_array_equal(mine, theirs)
    assert_array_equal(y, y2)


def test_pipeline_equals_cli_expand(cli, tmp_path, noisy):
    # the CLI streams the expansion row by row; the pipeline materialises it: the same model
    X, y = ptron.load_dataset(noisy)
    pipe = make_pipeline(ptron.PolynomialExpansion(degree=2, coef0=1.0),
                         ptron.Perceptron(max_iter=8)).fit(X, y)
    theirs = cli_model(cli, tmp_path, noisy, "--expand", "poly:2", "--epochs", "8")
    assert_array_equal(pipe.decision_function(X), theirs.decision_function(X))
    with pytest.raises(AttributeError):
        theirs.coef_  # weights over the expanded features, not over X's


def predictions_of(cli, model, data, tmp_path):
    out = tmp_path / "pred.txt"
    r = cli("predict", model, data, "-o", out, "--json")
    return np.loadtxt(out, dtype=str), json.loads(r.stdout)


@pytest.mark.parametrize("estimator", [
    ptron.Perceptron(average=True), ptron.BatchClassifier(loss="hinge"),
    ptron.KernelPerceptron(kernel="rbf", gamma=0.3), ptron.Perceptron(multi_class="direct")])
def test_python_model_predicts_in_cli(cli, tmp_path, blobs, noisy, estimator):
    for data in (noisy, blobs):
        X, y = ptron.load_dataset(data)
        estimator.fit(X, y)
        path = tmp_path / "py.model"
        ptron.save_model(estimator, path)
        labels, report = predictions_of(cli, path, data, tmp_path)
        assert_array_equal(labels.astype(float), estimator.predict(X))
        assert report["accuracy"] == pytest.approx(estimator.score(X, y), abs=1e-8)  # %.9g


def test_cli_model_predicts_in_python(cli, tmp_path, blobs):
    X, y = ptron.load_dataset(blobs)
    model = tmp_path / "cli.model"
    cli("train", blobs, "-o", model, "--quiet", "--averaged", "--shuffle")
    labels, _ = predictions_of(cli, model, blobs, tmp_path)
    assert_array_equal(ptron.load_model(model).predict(X), labels.astype(float))


def test_text_labels_both_ways(cli, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(120, 3)
    names = np.array(["cat", "dog", "owl"])
    y = names[np.argmax(X, axis=1)]
    data = tmp_path / "animals.csv"
    with open(data, "w") as f:
        for label, row in zip(y, X):
            f.write(label + "," + ",".join("%.9g" % v for v in row) + "\n")
    X32, y_read = ptron.load_dataset(data)
    assert_array_equal(y_read, y)
    clf = ptron.Perceptron(max_iter=20).fit(X32, y_read)
    assert_array_equal(clf.classes_, names)
    path = tmp_path / "animals.model"
    ptron.save_model(clf, path)
    labels, _ = predictions_of(cli, path, data, tmp_path)
    assert_array_equal(labels, clf.predict(X32))
    back = ptron.load_model(path)
    assert_array_equal(back.classes_, names)
    assert_array_equal(back.predict(X32), clf.predict(X32))


def test_sparse_files_load_as_csr(cli, tmp_path):
    """A file the CLI reads sparse comes back as scipy CSR over the library's arrays (values in
    place, read-only), the same from LIBSVM and .ptd, with the CLI's non-zeros; a model fitted
    on it is the CLI's."""
    import scipy.sparse
    ptd, svm = tmp_path / "text.ptd", tmp_path / "text.svm"
    cli("gen", "sparse", "-o", ptd, "--n", 300, "--d", 2000, "--nnz", 12, "--seed", 4)
    cli("convert", ptd, "-o", svm)
    info = json.loads(cli("info", ptd, "--json").stdout)
    assert info["layout"] == "sparse"
    Xp, yp = ptron.load_dataset(ptd)
    Xs, ys = ptron.load_dataset(svm)
    for X in (Xp, Xs):
        assert scipy.sparse.isspmatrix_csr(X) and X.dtype == np.float32
        assert X.nnz == info["nnz"] and not X.data.flags.writeable
        assert X.has_sorted_indices
    assert Xp.shape == (300, 2000) and Xs.shape[0] == 300 and Xs.shape[1] <= 2000
    assert_array_equal(Xp.indptr, Xs.indptr)
    assert_array_equal(Xp.indices, Xs.indices)
    assert_array_equal(Xp.data, Xs.data)
    assert_array_equal(yp, ys)
    # the arrays outlive every other reference to the dataset
    data = Xp.data
    del Xp
    assert np.isfinite(data).all() and data.sum() > 0
    mine = ptron.Perceptron(max_iter=3).fit(Xs, ys)
    theirs = cli_model(cli, tmp_path, svm, "--epochs", "3", "--layout", "dense")
    assert_array_equal(mine.coef_, theirs.coef_)
    assert_array_equal(mine.intercept_, theirs.intercept_)
    # dense data still comes back as an array
    dense = tmp_path / "dense.svm"
    cli("gen", "noisy", "-o", dense, "--n", 20, "--d", 3)
    X, _ = ptron.load_dataset(dense)
    assert isinstance(X, np.ndarray)


@pytest.mark.parametrize("dtype", ["bf16", "u8"])
def test_compact_file_loads_as_float32(cli, tmp_path, dtype):
    """A .ptd stored as bf16 or u8 loads as the float32 values the library trains on: a u8 file
    of small integers holds them exactly, a bf16 one their bf16 rounding; the model the CLI
    trains on the compact file is the one Python trains on the loaded array."""
    src, out = tmp_path / "digits.ptd", tmp_path / ("digits-%s.ptd" % dtype)
    digits = os.path.join(os.path.dirname(__file__), "..", "..", "datasets", "digits.train.svm")
    cli("convert", digits, "-o", src, "--layout", "dense")
    cli("convert", src, "-o", out, "--dtype", dtype)
    X, y = ptron.load_dataset(out)
    X32, y32 = ptron.load_dataset(src)
    assert X.dtype == np.float32 and X.shape == X32.shape
    assert_array_equal(y, y32)
    assert_array_equal(X, X32)  # digits are integers 0..16: exact in both types
    mine = ptron.Perceptron(max_iter=3).fit(X, y)
    theirs = cli_model(cli, tmp_path, out, "--epochs", "3")
    assert_array_equal(mine.coef_, theirs.coef_)
