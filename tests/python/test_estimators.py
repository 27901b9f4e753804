"""The estimators' own behaviour: pickling, partial_fit, warm starts, early stopping, labels,
errors, and the data paths (in place or one copy)."""
import ctypes
import os
import pickle
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.model_selection import train_test_split

import ptron
from ptron._data import Dataset


def separable(n=300, d=7, seed=0, classes=2):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (n, d))
    if classes == 2:
        y = np.where(X @ np.arange(1, d + 1) + 0.3 > 0, 3, -8)  # labels other than -1/+1
    else:
        y = np.argmax(X[:, :classes], axis=1) * 10
    return X, y


def noisy(n=300, d=7, seed=1):
    X, y = separable(n, d, seed)
    flip = np.random.RandomState(seed).rand(n) < 0.1
    return X, np.where(flip, np.where(y == 3, -8, 3), y)


ALL = [ptron.Perceptron(), ptron.Perceptron(average=True), ptron.Perceptron(multi_class="direct"),
       ptron.BatchClassifier(loss="hinge", alpha=0.01),
       ptron.KernelPerceptron(kernel="rbf", gamma=0.5), ptron.KernelPerceptron(kernel="poly")]
CASES = [(e, k) for e in ALL for k in (2, 3)] + [(ptron.Perceptron(voted=True), 2)]


@pytest.mark.parametrize("estimator, classes", CASES, ids=repr)
def test_pickle_round_trip(estimator, classes):
    X, y = separable(classes=classes)
    clf = estimator.fit(X, y)
    blob = pickle.dumps(clf)
    assert b"ptron-model " in blob and b"\nchecksum " in blob  # the model file, not a pointer
    back = pickle.loads(blob)
    assert back is not clf and back._model.handle != clf._model.handle
    assert_array_equal(back.predict(X), clf.predict(X))
    assert_array_equal(back.decision_function(X), clf.decision_function(X))
    assert_array_equal(back.classes_, clf.classes_)
    assert back.get_params() == clf.get_params()
    assert back.n_iter_ == clf.n_iter_
    if hasattr(clf, "coef_") and not clf.get_params().get("voted"):
        assert_array_equal(back.coef_, clf.coef_)
    del clf  # the copy owns its own model
    assert_array_equal(back.predict(X[:5]), back.predict(X)[:5])


def test_pickle_unfitted_and_damaged():
    back = pickle.loads(pickle.dumps(ptron.Perceptron(eta0=0.5)))
    assert back.eta0 == 0.5 and not hasattr(back, "classes_")
    X, y = separable()
    state = ptron.Perceptron().fit(X, y).__getstate__()
    data = bytearray(state["_model_bytes"])
    data[len(data) // 2] ^= 1
    state["_model_bytes"] = bytes(data)
    with pytest.raises(ptron.PtronValueError, match="pickled Perceptron: checksum mismatch"):
        ptron.Perceptron().__setstate__(state)


@pytest.mark.parametrize("kwargs", [dict(), dict(margin=0.5, eta0=0.25),
                                    dict(multi_class="direct"), dict(n_jobs=1)])
@pytest.mark.parametrize("classes", [2, 4])
def test_partial_fit_equals_one_epoch(kwargs, classes):
    """Chunks in order, one epoch each from the weights before: the classic and margin
    perceptron end where one epoch over the concatenation ends (a chunk may lack a class)."""
    X, y = noisy(400, 9) if classes == 2 else separable(400, 9, classes=classes)
    order = np.argsort(y, kind="stable") if classes == 4 else np.arange(len(y))
    X, y = X[order], y[order]  # sorted: most chunks see one class only
    whole = ptron.Perceptron(max_iter=1, **kwargs).fit(X, y)
    parts = ptron.Perceptron(**kwargs)
    for start, stop in [(0, 1), (1, 90), (90, 91), (91, 250), (250, 400)]:
        parts.partial_fit(X[start:stop], y[start:stop], classes=np.unique(y))
    assert_array_equal(parts.coef_, whole.coef_)
    assert_array_equal(parts.intercept_, whole.intercept_)
    assert np.any(whole.coef_ != 0)


def test_partial_fit_batch_minibatches():
    """The batch path over chunks that are whole mini-batches, constant steps: the same steps
    as one epoch over the concatenation."""
    X, y = noisy(320, 6)
    kwargs = dict(batch_size=16, loss="hinge", alpha=0.001, eta0=0.1, average=False)
    whole = ptron.BatchClassifier(max_iter=1, **kwargs).fit(X, y)
    parts = ptron.BatchClassifier(**kwargs)
    for start in range(0, 320, 64):
        parts.partial_fit(X[start:start + 64], y[start:start + 64], classes=[-8, 3])
    assert_array_equal(parts.coef_, whole.coef_)
    assert_array_equal(parts.intercept_, whole.intercept_)


def test_partial_fit_refusals():
    X, y = separable()
    clf = ptron.Perceptron()
    with pytest.raises(ValueError, match="classes must be passed on the first call"):
        clf.partial_fit(X, y)
    clf.partial_fit(X, y, classes=[-8, 3])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X, np.full(len(y), 5))
    with pytest.raises(ValueError, match="not the same as on the first call"):
        clf.partial_fit(X, y, classes=[-8, 3, 5])
    with pytest.raises(ValueError, match="X has 6 features, but Perceptron is expecting 7"):
        clf.partial_fit(X[:, :6], y)
    with pytest.raises(ValueError, match="early_stopping"):
        ptron.Perceptron(early_stopping=True).partial_fit(X, y, classes=[-8, 3])
    assert not hasattr(ptron.KernelPerceptron(), "partial_fit")


def test_warm_start_continues():
    X, y = noisy()
    two = ptron.Perceptron(max_iter=2).fit(X, y)
    warm = ptron.Perceptron(max_iter=1, warm_start=True).fit(X, y).fit(X, y)
    assert_array_equal(warm.coef_, two.coef_)
    cold = ptron.Perceptron(max_iter=1).fit(X, y).fit(X, y)
    assert not np.array_equal(cold.coef_, two.coef_)
    # other classes: a fresh start
    X3, y3 = separable(classes=3)
    assert_array_equal(ptron.Perceptron(max_iter=1, warm_start=True).fit(X, y).fit(X3, y3).coef_,
                       ptron.Perceptron(max_iter=1).fit(X3, y3).coef_)


@pytest.mark.parametrize("kwargs", [dict(), dict(average=True), dict(multi_class="direct")])
def test_early_stopping_keeps_best_epoch(kwargs):
    X, y = noisy(600, 8) if not kwargs.get("multi_class") else separable(600, 8, classes=3)
    clf = ptron.Perceptron(early_stopping=True, n_iter_no_change=3, max_iter=40,
                           random_state=11, **kwargs).fit(X, y)
    scores = clf.validation_scores_
    best = clf.best_iteration_
    assert len(scores) == clf.n_iter_
    assert scores[best - 1] == max(scores) and best == np.argmax(scores) + 1
    assert clf.n_iter_ == 40 or clf.n_iter_ - best == 3
    # the model is that epoch's: the same as training best epochs on the same split
    index = np.unique(y, return_inverse=True)[1]
    X_tr, X_val, i_tr, i_val = train_test_split(X, index, test_size=0.1, stratify=index,
                                                random_state=11)
    ref = ptron.Perceptron(max_iter=best, **kwargs).fit(X_tr, clf.classes_[i_tr])
    assert_array_equal(clf.coef_, ref.coef_)
    assert clf.score(X_val, clf.classes_[i_val]) == scores[best - 1]
    X3, y3 = separable(classes=3)
    with pytest.raises(ValueError, match="multi_class='direct'"):
        ptron.Perceptron(early_stopping=True).fit(X3, y3)


def test_labels_of_any_kind():
    X, y = separable()
    for labels in (y, y.astype(np.float32), np.where(y > 0, "yes", "no"), y > 0,
                   np.where(y > 0, 2**40, -(2**40))):
        clf = ptron.Perceptron(max_iter=1000).fit(X, labels)
        assert_array_equal(clf.classes_, np.unique(labels))
        assert clf.score(X, labels) == 1.0
        assert clf.predict(X).dtype == np.asarray(labels).dtype
    with pytest.raises(ValueError, match="only one class"):
        ptron.Perceptron().fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="Unknown label type"):
        ptron.Perceptron().fit(X, np.linspace(0, 1, len(X)))


def test_errors_carry_ptron_messages(tmp_path):
    X, y = separable()
    bad = np.array(X)
    bad[4, 2] = np.nan
    with pytest.raises(ptron.PtronValueError, match=r"row 5, feature 3: NaN or infinity"):
        ptron.Perceptron().fit(bad, y)
    clf = ptron.Perceptron().fit(X, y)
    bad[4, 2] = -np.inf
    with pytest.raises(ValueError, match=r"row 5, feature 3: NaN or infinity"):
        clf.predict(bad)
    inplace = ptron.padded(bad)
    assert not Dataset(ptron.padded(X)).copied
    with pytest.raises(ValueError, match=r"row 5, feature 3: NaN or infinity"):
        clf.decision_function(inplace)
    with pytest.raises(ValueError, match="row 5, feature 3"):
        ptron.PolynomialExpansion().fit(X).transform(bad)
    # parameters: the Python name, and ptron's message
    with pytest.raises(ValueError, match=r"eta0 must be a positive finite number \(got -1\)"):
        ptron.Perceptron(eta0=-1).fit(X, y)
    with pytest.raises(ValueError, match=r"multi_class='best': multiclass: unknown value 'best' "
                                         r"\(ovr, direct\)"):
        ptron.Perceptron(multi_class="best").fit(X, y)
    with pytest.raises(ValueError, match=r"kernel='cubic'.*\(linear, poly, rbf\)"):
        ptron.KernelPerceptron(kernel="cubic").fit(X, y)
    with pytest.raises(ptron.PtronValueError, match="gamma"):
        ptron.KernelPerceptron(kernel="rbf", gamma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="average and voted"):
        ptron.Perceptron(average=True, voted=True).fit(X, y)
    # files: OSError for what cannot be opened, ValueError with file:line for bad contents
    missing = tmp_path / "missing.svm"
    with pytest.raises(ptron.PtronOSError, match=str(missing)) as e:
        ptron.load_dataset(missing)
    assert isinstance(e.value, OSError)
    broken = tmp_path / "broken.svm"
    broken.write_text("1 1:0.5\n-1 0:1\n")
    with pytest.raises(ptron.PtronValueError, match=str(broken) + ":2:"):
        ptron.load_dataset(broken)
    with pytest.raises(ptron.PtronValueError, match="not a ptron model"):
        ptron.load_model(broken)


def test_memory_budget_named_before_allocating():
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float64), (10**9, 10**5), (0, 0))
    with pytest.raises(ptron.PtronMemoryError, match="MiB in ptron's padded float32 layout, over "
                                                     "the memory budget") as e:
        ptron.padded(huge)
    assert isinstance(e.value, MemoryError)
    X = np.ones((10, 3000))
    with pytest.raises(ptron.PtronMemoryError, match="features"):
        ptron.PolynomialExpansion(degree=3).fit(X).transform(X)


def test_in_place_or_one_copy():
    X, y = separable(200, 32)
    X32 = ptron.padded(X)
    assert X32.dtype == np.float32 and X32.ctypes.data % 64 == 0
    data = Dataset(X32)
    assert not data.copied and data.matrix is X32  # the library reads X32's own memory
    padded13 = ptron.padded(X[:, :13])
    assert padded13.strides == (64, 4) and not Dataset(padded13).copied
    readonly = ptron.padded(X)
    readonly.setflags(write=False)
    assert not Dataset(readonly).copied
    # copied: other dtypes, unaligned rows, padding that holds data, strided rows, sparse
    unaligned = np.empty(200 * 32 + 1, np.float32)[1:].reshape(200, 32)
    unaligned[:] = X
    wide = ptron.empty(200, 32)  # 13 features with zeros after them, but rows 32 floats apart
    wide[:] = 0
    wide[:, :13] = X[:, :13]
    cases = [X, unaligned, X32[:, :13], wide[:, :13], X32[::2], np.asfortranarray(X32),
             scipy.sparse.csr_matrix(X), scipy.sparse.csc_matrix(X32)]
    for case in cases:
        assert Dataset(case).copied
    ref = ptron.Perceptron().fit(X32, y)
    for Xc, yc in [(X, y), (unaligned, y), (X32.astype(np.float64), y)]:
        assert_array_equal(ptron.Perceptron().fit(Xc, yc).coef_, ref.coef_)
    # scipy CSR trains on the sparse layout: the same updates, sums in another order
    assert_allclose(ptron.Perceptron().fit(scipy.sparse.csr_matrix(X), y).coef_, ref.coef_,
                    rtol=1e-5, atol=1e-5)
    sub = ptron.Perceptron().fit(X32[:, :13], y)
    assert_array_equal(ptron.Perceptron().fit(padded13, y).coef_, sub.coef_)
    assert_array_equal(ptron.Perceptron().fit(wide[:, :13], y).coef_, sub.coef_)
    assert_array_equal(ptron.Perceptron().fit(X32[::2], y[::2]).coef_,
                       ptron.Perceptron().fit(X[::2], y[::2]).coef_)


def test_sparse_input_is_not_densified():
    """scipy.sparse goes to the library as CSR: float32 CSR is used in place, and a matrix whose
    dense copy would need 80 GB trains and predicts in memory proportional to its non-zeros."""
    rng = np.random.default_rng(7)
    n, d = 2000, 10_000_000
    rows = np.repeat(np.arange(n), 5)
    cols = rng.integers(0, d, n * 5)
    X = scipy.sparse.csr_matrix((rng.standard_normal(n * 5).astype(np.float32), (rows, cols)),
                                shape=(n, d))
    X.sum_duplicates()
    data = Dataset(X)
    assert data.matrix is None and not data.copied and data.n == n
    assert ptron._lib.lib.pt_dataset_layout(data.handle) == 1  # PT_LAYOUT_SPARSE
    w = np.zeros(d, np.float32)
    w[cols[:2000]] = 1.0
    y = np.where(X @ w >= 0, 1, -1)
    clf = ptron.Perceptron(max_iter=20).fit(X, y)
    assert clf.coef_.shape == (1, d)
    assert np.mean(clf.predict(X) == y) > 0.95
    unsorted = scipy.sparse.csr_matrix((np.array([1.0, 2.0]), np.array([5, 1]),
                                        np.array([0, 2])), shape=(1, 8))
    assert not unsorted.has_canonical_format
    assert Dataset(unsorted).copied  # put in canonical order on a copy, never in place


def test_empty_is_zero_padded():
    A = ptron.empty(5, 3)
    assert A.shape == (5, 3) and A.strides == (64, 4) and A.flags.writeable
    full = np.lib.stride_tricks.as_strided(A, (5, 16), (64, 4))
    assert not np.any(full[:, 3:])


def test_load_dataset_in_place(cli, tmp_path):
    path = tmp_path / "d.ptd"
    cli("gen", "separable", "-o", path, "--n", 100, "--d", 20)
    X, y = ptron.load_dataset(path)
    assert X.shape == (100, 20) and not X.flags.writeable  # the file's read-only mapping
    assert not Dataset(X).copied
    assert set(np.unique(y)) == {-1.0, 1.0}
    svm = tmp_path / "d.svm"
    cli("convert", path, "-o", svm)
    X2, y2 = ptron.load_dataset(svm)
    assert X2.flags.writeable and not Dataset(X2).copied
    assert_array_equal(X, X2)
    assert_array_equal(y, y2)
    del X, X2  # the arrays own their datasets: freeing them must not crash


def test_transform_output_in_place():
    X, y = separable(100, 5)
    Z = ptron.RandomFourierFeatures(n_components=40, random_state=3).fit_transform(X)
    assert Z.shape == (100, 40) and Z.dtype == np.float32 and Z.flags.writeable
    assert not Dataset(Z).copied
    Z2 = ptron.RandomFourierFeatures(n_components=40, random_state=3).fit(X[:7]).transform(X)
    assert_array_equal(Z, Z2)
    rff = ptron.RandomFourierFeatures(n_components=40).fit(X)
    assert_array_equal(rff.transform(X), rff.transform(X))  # the drawn seed is kept
    assert_array_equal(rff.transform(X),
                       ptron.RandomFourierFeatures(n_components=40, random_state=rff.seed_)
                       .fit_transform(X))
    P = ptron.PolynomialExpansion(degree=2, coef0=2.0).fit_transform(X)
    assert P.shape == (100, 21)
    # phi(x).phi(z) = (coef0 + x.z)^2
    X32 = X.astype(np.float32).astype(np.float64)
    assert np.allclose(P.astype(np.float64) @ P.T.astype(np.float64), (2 + X32 @ X32.T) ** 2,
                       rtol=1e-5, atol=1e-5)


def test_library_releases_the_gil():
    # ctypes.CDLL (not PyDLL) drops the GIL around every foreign call, training included
    from ptron import _lib
    assert type(_lib.lib) is ctypes.CDLL


def test_ctrl_c_stops_training():
    """SIGINT during a fit raises KeyboardInterrupt: the run asked for (10^7 epochs on
    non-separable data, hours) cannot end before the signal, so only the interrupt ends it."""
    X, y = noisy(2000, 16)
    clf = ptron.Perceptron(max_iter=10**7)
    killer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    killer.start()
    with pytest.raises(KeyboardInterrupt):
        clf.fit(X, y)
    killer.join()
    assert getattr(clf, "_model", None) is None
    # the interrupted call does not leave a stop request behind
    assert ptron.Perceptron(max_iter=3).fit(X, y).n_iter_ == 3


def test_library_lookup(tmp_path):
    code = "import ptron; print(ptron.library_path)"
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ptron.__file__)))
    env["PTRON_LIB"] = str(tmp_path / "nowhere" / "libptron.so")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "PTRON_LIB=" in r.stderr and "cannot be loaded" in r.stderr
    env["PTRON_LIB"] = ptron.library_path
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == ptron.library_path
