"""The linear classifiers: the online perceptron and the batch subgradient path."""
import numpy as np

from ._classifier import PtronClassifier, _check_int, _check_positive
from ._data import Dataset
from ._train import seed_of


class Perceptron(PtronClassifier):
    """The perceptron on ptron's online path (`ptron train --path online`).

    One sample at a time: if y (w.x + b) <= margin, then w += eta0 y x (and b += eta0 y).
    Training stops after max_iter epochs or at an epoch without a mistake.

    Parameters
    ----------
    max_iter : int, default 10
        Epochs at most (`--epochs`; ptron's default, not scikit-learn's 1000).
    eta0 : float, default 1
        Learning rate (`--eta`).
    margin : float, default 0
        Update when y w.x <= margin: 0 is Rosenblatt's perceptron, > 0 the margin perceptron.
    average : bool, default False
        The averaged perceptron: the model is the average of all iterates (`--averaged`).
    voted : bool, default False
        Freund and Schapire's voted perceptron (`--voted`): every intermediate vector votes,
        weighted by how long it survived; the model then has no single coef_.
    shuffle : bool, default False
        Shuffle the order of the samples each epoch (from random_state; `--shuffle`).
    random_state : int, RandomState or None, default None
        An int is ptron's seed (`--seed`); None or a RandomState draws one.
    fit_intercept : bool, default True
        Learn a bias (False: `--no-bias`).
    multi_class : {"ovr", "direct"}, default "ovr"
        More than two classes: one-vs-rest, or the multiclass perceptron (one weight vector per
        class; on a mistake add eta0 x to the true class and subtract it from the predicted).
    early_stopping : bool, default False
        Hold out validation_fraction of the data (stratified) and stop when its accuracy has not
        improved for n_iter_no_change epochs; the model is the best epoch's (as the CLI's
        `--test --early-stop`). Needs two classes or multi_class="direct".
    validation_fraction : float, default 0.1
    n_iter_no_change : int, default 5
    warm_start : bool, default False
        fit starts from the previous fit's weights (same classes and features).
    init : {"zero", "random"}, default "zero"
        Where a fit that is not a warm start begins: w = 0 (the classic perceptron), or each
        weight and bias uniform in [0, 1) drawn from random_state (the perceptron notebook;
        `--init random`).
    n_jobs : int or None, default None
        Threads: None or -1 all cores (ptron's default), k > 0 k threads. The model does not
        depend on it.
    class_weight : None, "balanced" or dict {label: weight}, default None
        A row of class k counts w_k times (`--class-weight`): its update (or loss term, or dual
        step) is scaled by w_k. "balanced" is n / (n_classes n_k), as scikit-learn's; a dict
        leaves the classes it does not name at 1. Weights must be positive; partial_fit takes
        a dict only.
    probability : bool, default False
        Two classes: fit also fits Platt's sigmoid on 5-fold out-of-fold decision values (from
        random_state; `ptron train --proba`), which predict_proba uses (5 more trainings).
        False: predict_proba does not exist, as scikit-learn's SVC.

    Attributes
    ----------
    classes_, coef_, intercept_, n_iter_ (epochs run), n_features_in_, feature_names_in_;
    with early stopping validation_scores_ (held-out accuracy per epoch) and best_iteration_.
    """

    def __init__(self, *, max_iter=10, eta0=1.0, margin=0.0, average=False, voted=False,
                 shuffle=False, random_state=None, fit_intercept=True, multi_class="ovr",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=5,
                 warm_start=False, init="zero", n_jobs=None, class_weight=None,
                 probability=False):
        self.max_iter = max_iter
        self.eta0 = eta0
        self.margin = margin
        self.average = average
        self.voted = voted
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.multi_class = multi_class
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start = warm_start
        self.init = init
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.probability = probability

    def _variant(self):
        if self.average and self.voted:
            raise ValueError("average and voted exclude each other")
        return "averaged" if self.average else "voted" if self.voted else "classic"

    def _c_params(self):
        _check_int("max_iter", self.max_iter, 1)
        _check_positive("eta0", self.eta0)
        return {
            "path": ("", "online"),
            "eta": ("eta0", self.eta0),
            "margin": ("margin", self.margin),
            "variant": ("average/voted", self._variant()),
            "shuffle": ("shuffle", bool(self.shuffle)),
            "multiclass": ("multi_class", self.multi_class),
        }

    def partial_fit(self, X, y, classes=None):
        """One epoch over X, y, starting from the current weights. classes (all the labels)
        is needed on the first call. Over chunks in order, without shuffle, the classic and
        margin perceptron end exactly where one fit epoch over their concatenation ends; the
        averaged and voted variants restart their average (or votes) each call."""
        if self.early_stopping:
            raise ValueError("partial_fit does not stop early: set early_stopping=False")
        return self._partial_fit(X, y, classes)

    def _monitor(self, X, index):
        if not self.early_stopping:
            return X, index, None
        from sklearn.model_selection import train_test_split
        _check_int("n_iter_no_change", self.n_iter_no_change, 1)
        if not 0 < self.validation_fraction < 1:
            raise ValueError("validation_fraction must be in (0, 1) (got %r)"
                             % (self.validation_fraction,))
        if len(self.classes_) > 2 and self.multi_class != "direct":
            raise ValueError("early_stopping needs the model after every epoch: two classes, or "
                             "multi_class='direct' (one-vs-rest trains its classes apart)")
        X_tr, X_val, i_tr, i_val = train_test_split(
            X, index, test_size=self.validation_fraction, stratify=index,
            random_state=seed_of(self.random_state))
        if len(np.unique(i_tr)) < len(self.classes_):
            raise ValueError("early_stopping: the training part lacks a class; lower "
                             "validation_fraction or give more samples")
        return X_tr, i_tr, _HeldOut(X_val, i_val, self.n_iter_no_change)


class _HeldOut:
    """Held-out accuracy after each epoch; stops after `patience` epochs without improvement
    and keeps the best epoch's model (a clone of the snapshot the library passes)."""

    def __init__(self, X, index, patience):
        from ._lib import lib
        self._lib = lib
        self.data = Dataset(X)
        self.index = np.asarray(index, np.int32)
        self.patience = patience
        self.scores = []
        self.best = None

    def on_epoch(self, handle, epoch, mistakes):
        from ._lib import check
        from ._model import Model
        pred = np.empty(self.data.n, np.int32)
        check(self._lib.pt_model_predict_class(handle, self.data.handle, pred.ctypes.data))
        score = float(np.mean(pred == self.index))
        self.scores.append(score)
        if self.best is None or score > self.best[0]:
            clone = self._lib.pt_model_clone(handle)
            if not clone:
                raise MemoryError("cannot copy the model of epoch %d" % epoch)
            self.best = (score, epoch, Model(clone))
        return epoch - self.best[1] >= self.patience

    def finish(self, estimator, model):
        if self.best is None:
            raise RuntimeError("early stopping saw no epoch: this path gave no per-epoch model")
        estimator.validation_scores_ = np.array(self.scores)
        estimator.best_iteration_ = self.best[1]
        estimator.n_iter_ = len(self.scores)
        return self.best[2]


class BatchClassifier(PtronClassifier):
    """A linear classifier on ptron's batch path (`ptron train --path batch`): full-batch or
    mini-batch subgradient descent, w -= eta_t (X^T g / n + alpha w), one BLAS-speed pass over
    X (or two sgemv calls) per iteration.

    Parameters
    ----------
    loss : {"perceptron", "hinge", "squared"}, default "perceptron"
        max(0, -y w.x), max(0, 1 - y w.x), or (1 - y w.x)^2 (`--loss`).
    alpha : float, default 0
        L2 regularisation strength (`--lambda`).
    learning_rate : {"constant", "invsqrt", "pegasos"}, default "constant"
        Step schedule: eta0, eta0 / sqrt(t), or 1 / (alpha t) (pegasos needs alpha > 0).
    eta0 : float, default 1
        Initial step (`--eta`).
    batch_size : int or None, default 256
        Rows per mini-batch; None is the full batch (`--batch-size`, whose default this is).
    max_iter : int, default 10
        Epochs at most (passes over the data).
    tol : float, default 0
        Stop when the objective changes by less than tol (relative); 0 never.
    average : bool, default True
        Return the average of the iterates (`--average-iterates`, the CLI's default too;
        `--last-iterate` is False). Averaged mini-batches are the default because a full
        batch takes one step an epoch and Pegasos' early steps (1/(alpha t)) make its bias
        swing from side to side for the first 1/alpha steps (`ptron help train`).
    shuffle : bool, default False
        Shuffle the mini-batches' order each epoch (from random_state).
    random_state, fit_intercept, warm_start, init, n_jobs :
        As for Perceptron. n_jobs sets the BLAS and OpenMP threads of the call.
    class_weight, probability :
        As for Perceptron (class weights scale each row's loss term and subgradient).

    More than two classes train one-vs-rest.
    """

    def __init__(self, *, loss="perceptron", alpha=0.0, learning_rate="constant", eta0=1.0,
                 batch_size=256, max_iter=10, tol=0.0, average=True, shuffle=False,
                 random_state=None, fit_intercept=True, warm_start=False, init="zero",
                 n_jobs=None, class_weight=None, probability=False):
        self.loss = loss
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.tol = tol
        self.average = average
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.warm_start = warm_start
        self.init = init
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.probability = probability

    def _c_params(self):
        _check_int("max_iter", self.max_iter, 1)
        _check_positive("eta0", self.eta0)
        _check_positive("alpha", self.alpha, allow_zero=True)
        _check_positive("tol", self.tol, allow_zero=True)
        if self.batch_size is not None:
            _check_int("batch_size", self.batch_size, 1)
        return {
            "path": ("", "batch"),
            "loss": ("loss", self.loss),
            "lambda": ("alpha", self.alpha),
            "schedule": ("learning_rate", self.learning_rate),
            "eta": ("eta0", self.eta0),
            "batch_size": ("batch_size", self.batch_size or 0),
            "tol": ("tol", self.tol),
            "average_iterates": ("average", bool(self.average)),
            "shuffle": ("shuffle", bool(self.shuffle)),
        }

    def partial_fit(self, X, y, classes=None):
        """One epoch over X, y (every mini-batch once) from the current weights; classes (all
        the labels) is needed on the first call. The step schedule restarts each call."""
        return self._partial_fit(X, y, classes)
