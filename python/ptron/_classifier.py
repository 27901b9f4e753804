"""What the three classifiers share: scikit-learn's fit / partial_fit / predict /
decision_function over one trained pt_model, labels of any kind, pickling through the model
file's bytes."""
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets

from ._data import Dataset
from ._model import Model
from ._train import TrainParams, platt_fit, seed_of, threads_of, train

# What X may be: dense arrays of any numeric dtype (copied into ptron's layout unless already
# in it) or scipy.sparse (handed over as CSR, never densified). NaN and infinity are refused by
# the library in the same pass that counts the non-zeros.
_X_CHECKS = dict(accept_sparse="csr", dtype="numeric", force_all_finite=False)

# Platt scaling's folds, as `ptron train --proba` (from the run's seed).
PLATT_FOLDS = 5


def _check_int(name, value, low):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < low:
        raise ValueError("%s must be an integer >= %d (got %r)" % (name, low, value))


def _check_positive(name, value, allow_zero=False):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        raise ValueError("%s must be a %s finite number (got %r)"
                         % (name, "non-negative" if allow_zero else "positive", value))


def class_weights(class_weight, classes, index):
    """The weight of each class (float32, in the order of classes) for class_weight: None (no
    weights: None), "balanced" (n / (K n_k) over the rows' class indices `index`, as
    scikit-learn's and `ptron train --class-weight balanced`) or a dict {label: weight}
    (labels not named weigh 1, as scikit-learn's)."""
    if class_weight is None:
        return None
    K = len(classes)
    if isinstance(class_weight, str) and class_weight == "balanced":
        count = np.bincount(index, minlength=K)
        if np.any(count == 0):
            raise ValueError("class_weight='balanced' needs rows of every class; none of %r"
                             % (list(classes[count == 0]),))
        w = len(index) / (K * count.astype(np.float64))
    elif isinstance(class_weight, dict):
        w = np.ones(K)
        named = 0
        for k, label in enumerate(classes):
            if label in class_weight:
                w[k] = class_weight[label]
                named += 1
        if named != len(class_weight):
            known = set(classes.tolist())
            unknown = [c for c in class_weight if c not in known]
            raise ValueError("class_weight names labels the data does not have: %r (classes: "
                             "%r)" % (unknown, list(classes)))
    else:
        raise ValueError("class_weight must be None, 'balanced' or a dict {label: weight} "
                         "(got %r)" % (class_weight,))
    w32 = w.astype(np.float32)
    bad = ~(np.isfinite(w32) & (w32 > 0))
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ValueError("class_weight: the weight of class %r must be a positive finite "
                         "float32 (got %r)" % (classes[k], w[k]))
    return w32


def _classes_of(y):
    """(the distinct labels, sorted; each label's index among them) of a 1-D y: as
    np.unique(y, return_inverse=True), and without sorting y when it holds few distinct numbers
    (a pass over y per class), as classification labels mostly do."""
    if y.dtype.kind in "biuf" and y.size:
        found, rest = [], y
        while rest.size and len(found) < 16:
            low = rest.min()
            found.append(low)
            rest = rest[rest > low]
        if not rest.size:
            classes = np.array(found, dtype=y.dtype)
            if len(classes) == 2:
                return classes, (y == classes[1]).astype(np.intp)
            return classes, np.searchsorted(classes, y)
    return np.unique(y, return_inverse=True)


class PtronClassifier(ClassifierMixin, BaseEstimator):
    """Base of ptron's classifiers (not used directly). Subclasses give _c_params()."""

    # -------------------------------------------------------------------------- fitting

    def fit(self, X, y):
        """Train on X (n_samples, n_features) and labels y (any two or more distinct values,
        numbers or strings). With warm_start=True and a model already fitted on the same
        classes, features and fit_intercept, training starts from its weights."""
        previous = getattr(self, "_model", None) if getattr(self, "warm_start", False) else None
        previous_classes = getattr(self, "classes_", None)
        X, y = self._validate_data(X, y, reset=True, **_X_CHECKS)
        classes, index = _classes_of(y)
        check_classification_targets(classes)  # the same verdict as on y, one sort less
        self._check_classes(classes)
        self._check_probability(classes)
        init = None
        if (previous is not None and np.array_equal(previous_classes, classes)
                and previous.n_features == X.shape[1]
                and previous.params()["bias"] == ("1" if self.fit_intercept else "0")):
            init = previous  # else a fresh start: the weights would not fit the data
        self.classes_ = classes
        self._train(X, index, self.max_iter, init)
        return self

    def _check_classes(self, classes):
        if len(classes) < 2:
            raise ValueError("%s needs samples of at least 2 classes in the data, but the data "
                             "contains only one class: %r" % (type(self).__name__, classes[0]))

    def _check_probability(self, classes):
        if not getattr(self, "probability", False):
            return
        if len(classes) != 2:
            raise ValueError("probability=True: Platt scaling gives probabilities for two "
                             "classes; the data has %d (decision_function gives each class's "
                             "score)" % len(classes))
        if getattr(self, "early_stopping", False):
            raise ValueError("probability=True fits Platt scaling on models trained for "
                             "max_iter epochs, not on early stopping's: set one of them False")

    def _train(self, X, index, epochs, init):
        weights = class_weights(getattr(self, "class_weight", None), self.classes_, index)
        X, index, monitor = self._monitor(X, index)
        data = Dataset(X)
        data.set_classes(self.classes_, index)
        values = self._c_params()
        seed = seed_of(self.random_state)
        values["epochs"] = ("max_iter", epochs)
        values["seed"] = ("random_state", seed)
        values["threads"] = ("n_jobs", threads_of(self.n_jobs))
        values["bias"] = ("fit_intercept", bool(self.fit_intercept))
        start = getattr(self, "init", "zero")
        if start not in ("zero", "random"):
            raise ValueError("init must be 'zero' or 'random' (got %r)" % (start,))
        if init is None and start == "random":
            values["init_random"] = ("init", True)
        params = TrainParams(values)
        params.set_class_weight(weights)
        if init is not None:
            params.set_init(init)
        if monitor is not None:
            params.set_epoch_hook(monitor.on_epoch)
        model = train(data, params)
        self.n_iter_ = model.epochs_run
        if monitor is not None:
            model = monitor.finish(self, model)
        if getattr(self, "probability", False):
            # as `ptron train --proba`: the sigmoid fitted on out-of-fold scores, each fold's
            # model trained as this one (class weights included; a warm start's init is not)
            model.set_platt(*platt_fit(data, params, PLATT_FOLDS, seed))
        self._model = model

    def _monitor(self, X, index):
        """(training rows, their classes, an epoch monitor or None): early stopping's hook."""
        return X, index, None

    # ------------------------------------------------------------------------- predicting

    def _fitted_model(self):
        model = getattr(self, "_model", None)
        if model is None:
            raise NotFittedError("This %s instance is not fitted yet. Call 'fit' with "
                                 "appropriate arguments before using this estimator."
                                 % type(self).__name__)
        return model

    def _data(self, X):
        model = self._fitted_model()
        X = self._validate_data(X, reset=False, **_X_CHECKS)
        return model, Dataset(X)

    def decision_function(self, X):
        """Scores: shape (n_samples,) for two classes (>= 0 predicts classes_[1]: ptron's
        sigma(0) = +1), (n_samples, n_classes) for more (the first highest wins). float32."""
        model, data = self._data(X)
        return model.decision(data)

    def predict(self, X):
        """The predicted label of every row."""
        model, data = self._data(X)
        return self.classes_[model.predict_index(data)]

    def _has_proba(self):
        if not getattr(self, "probability", False):
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Probabilities of classes_[0] and classes_[1], shape (n_samples, 2), float64: Platt's
        sigmoid 1 / (1 + exp(A f + B)) of the decision value f, A and B fitted by fit on
        5-fold out-of-fold decision values (as `ptron train --proba`). As scikit-learn's SVC,
        the most probable class may differ from predict's near the boundary."""
        model, data = self._data(X)
        if model.platt() is None:
            raise NotFittedError("predict_proba is not available: this %s was fitted with "
                                 "probability=False" % type(self).__name__)
        p = model.proba(data)
        return np.column_stack([1.0 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        """The logarithm of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    # ----------------------------------------------------------------------- attributes

    def _coef(self):
        model = self._fitted_model()
        c = model.coef(self.n_features_in_)
        if c is None:
            raise AttributeError("coef_ and intercept_ exist for linear models only (this is a "
                                 "%s model)" % model.params()["path"])
        return c

    @property
    def coef_(self):
        """Weights: shape (1, n_features) for two classes, (n_classes, n_features) for more. A
        copy of the trained model's (float32): changing it does not change predictions."""
        return self._coef()[0]

    @property
    def intercept_(self):
        """Bias weights: shape (1,) or (n_classes,), float32 (zeros with fit_intercept=False)."""
        return self._coef()[1]

    # ------------------------------------------------------------------------- pickling

    def __getstate__(self):
        state = dict(super().__getstate__())
        model = state.pop("_model", None)
        if model is not None:
            state["_model_bytes"] = model.to_bytes()  # the model file, checksum and all
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_model_bytes", None)
        super().__setstate__(state)
        if data is not None:
            self._model = Model.from_bytes(data, "pickled %s" % type(self).__name__)

    def _more_tags(self):
        return {"X_types": ["2darray", "sparse"]}

    # ------------------------------------------------------------------------ partial_fit

    def _partial_fit(self, X, y, classes):
        if getattr(self, "probability", False):
            raise ValueError("partial_fit does not fit probabilities (Platt scaling needs the "
                             "whole data): set probability=False, or use fit")
        if isinstance(getattr(self, "class_weight", None), str):
            raise ValueError("class_weight=%r is not supported by partial_fit (a chunk's class "
                             "counts are not the data's): pass a dict, e.g. from "
                             "sklearn.utils.class_weight.compute_class_weight('balanced', "
                             "classes=classes, y=y) on a large enough sample of y"
                             % (self.class_weight,))
        first = getattr(self, "_model", None) is None
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            table = np.unique(classes)
            self._check_classes(table)
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError("classes=%r is not the same as on the first call to partial_fit "
                             "(%r)" % (classes, self.classes_))
        else:
            table = self.classes_
        X, y = self._validate_data(X, y, reset=first, **_X_CHECKS)
        check_classification_targets(y)
        index = np.searchsorted(table, y)
        if np.any(index >= len(table)) or np.any(table[np.minimum(index, len(table) - 1)] != y):
            unknown = np.setdiff1d(np.unique(y), table)
            raise ValueError("labels %r are not in classes %r" % (unknown, table))
        self.classes_ = table
        self._train(X, index, 1, None if first else self._model)
        return self
