"""Explicit feature maps as scikit-learn transformers: the polynomial expansion whose dot
products are the polynomial kernel's, and random Fourier features for the RBF kernel."""
import ctypes

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._classifier import _X_CHECKS, _check_int, _check_positive
from ._data import Dataset, matrix_view
from ._lib import PtronValueError, check, lib
from ._train import param_text, seed_of


class _Expansion(TransformerMixin, BaseEstimator):
    """pt_expand over a numpy array. The output is float32 in ptron's layout, so an estimator
    after it in a pipeline uses it in place."""

    def _values(self):
        raise NotImplementedError

    def _params(self, values):
        p = lib.pt_expand_params_create()
        if not p:
            raise MemoryError("cannot allocate expansion parameters")
        handle = ctypes.c_void_p(p)
        try:
            for cname, (pyname, value) in values.items():
                status = lib.pt_expand_params_set(handle, cname.encode(), param_text(value).encode())
                if status:
                    raise PtronValueError(status, "%s=%r: %s" % (pyname, value,
                                                                 lib.pt_last_error().decode()))
        except BaseException:
            lib.pt_expand_params_free(handle)
            raise
        return handle

    def fit(self, X, y=None):
        """Record the number of input features (and draw the seed, for random features)."""
        X = self._validate_data(X, reset=True, **_X_CHECKS)
        Dataset(X)  # the library's checks (NaN and infinity refused), as transform will do
        self._fit_params()
        handle = self._params(self._values())
        try:
            dim = lib.pt_expand_dim(handle, self.n_features_in_)
        finally:
            lib.pt_expand_params_free(handle)
        if dim >= 2**63:
            raise ValueError("the expansion of %d features has more features than fit in memory"
                             % self.n_features_in_)
        self.n_output_features_ = int(dim)
        return self

    def _fit_params(self):
        pass

    def transform(self, X):
        """The expanded rows: (n_samples, n_output_features_) float32. Refused before
        allocating when the output exceeds 10,000,000 features or half of RAM."""
        check_is_fitted(self, "n_output_features_")
        X = self._validate_data(X, reset=False, **_X_CHECKS)
        data = Dataset(X)
        handle = self._params(self._values())
        out = ctypes.c_void_p()
        try:
            check(lib.pt_expand(data.handle, handle, ctypes.byref(out)))
        finally:
            lib.pt_expand_params_free(handle)
        return matrix_view(out)

    def _more_tags(self):
        return {"X_types": ["2darray", "sparse"], "preserves_dtype": [np.float32]}


class PolynomialExpansion(_Expansion):
    """All monomials of degree <= degree, scaled by multinomial square roots so that
    phi(x).phi(z) = (coef0 + x.z)^degree exactly (`ptron expand --degree`): a linear model on
    the output is the polynomial kernel's. C(d + degree, degree) output features.

    Parameters
    ----------
    degree : int, default 2
    coef0 : float, default 1
        The constant c >= 0 (0 keeps only the monomials of degree exactly `degree`).
    """

    def __init__(self, *, degree=2, coef0=1.0):
        self.degree = degree
        self.coef0 = coef0

    def _values(self):
        _check_int("degree", self.degree, 1)
        return {"kind": ("", "poly"), "degree": ("degree", self.degree),
                "coef0": ("coef0", self.coef0)}


class RandomFourierFeatures(_Expansion):
    """Random Fourier features for the RBF kernel exp(-gamma |x - z|^2) (`ptron expand --rff`):
    z(x) = sqrt(2 / D) cos(W x + b), W ~ N(0, 2 gamma I), b ~ U[0, 2 pi), D = n_components.
    Like scikit-learn's RBFSampler; W and b come from ptron's generator, so the same
    random_state gives the same features as the CLI's --seed.

    Parameters
    ----------
    n_components : int, default 1024
    gamma : float, default 1
    random_state : int, RandomState or None, default None
        An int is ptron's seed; None or a RandomState draws one at fit (kept in seed_).
    """

    def __init__(self, *, n_components=1024, gamma=1.0, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    def _fit_params(self):
        self.seed_ = seed_of(self.random_state)

    def _values(self):
        _check_int("n_components", self.n_components, 1)
        _check_positive("gamma", self.gamma)
        return {"kind": ("", "rff"), "rff_dim": ("n_components", self.n_components),
                "gamma": ("gamma", self.gamma),
                "seed": ("random_state", getattr(self, "seed_", 0))}
