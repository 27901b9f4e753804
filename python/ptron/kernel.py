"""The kernel (dual) perceptron."""
from ._classifier import PtronClassifier, _check_int, _check_positive


_NAMES = ("linear", "poly", "rbf")


class KernelPerceptron(PtronClassifier):
    """The kernel perceptron on ptron's kernel path (`ptron train --path kernel`): dual
    coefficients alpha, f = K alpha kept current; on a mistake at i, alpha_i += y_i. The Gram
    matrix is computed once when it fits cache_size, else kernel rows on demand behind an LRU
    row cache. Prediction touches only the support vectors.

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf"} or str, default "linear"
        x.z, (gamma x.z + coef0)^degree, or exp(-gamma |x - z|^2); or an expression by the
        closure rules of kernels, e.g. "2*rbf(gamma=0.5)+normalize(poly(degree=3))" (see
        `ptron help train`; the expression's own arguments, not degree/gamma/coef0, apply).
    degree : int, default 2
    gamma : {"scale", "auto"} or float, default "scale"
        poly and rbf: "scale" is 1 / (n_features X.var()), "auto" 1 / n_features (as
        scikit-learn's SVC); the model records the number used.
    coef0 : float, default 1
        The polynomial kernel's constant (>= 0 for a kernel).
    max_iter : int, default 10
        Epochs at most; stops at an epoch without a mistake.
    average : bool, default False
        The averaged kernel perceptron.
    shuffle : bool, default False
    cache_size : int or None, default None
        MiB for the Gram matrix or the row cache (`--cache-mb`); None: half of RAM.
    gram : {"auto", "full", "rows"}, default "auto"
        Storage of the kernel: the full Gram, rows on demand, or chosen by size (`--gram`).
    budget : int or None, default None
        At most this many support vectors (per class one-vs-rest; `--budget`): a mistake with
        the budget full first removes one at random. Not with average=True.
    random_state, fit_intercept, n_jobs :
        As for Perceptron.
    class_weight, probability :
        As for Perceptron (a class weight scales the dual step of its rows).

    More than two classes train one-vs-rest on one shared Gram. The model has no coef_ (it is
    a sum over support vectors).
    """

    def __init__(self, *, kernel="linear", degree=2, gamma="scale", coef0=1.0, max_iter=10,
                 average=False, shuffle=False, cache_size=None, gram="auto", budget=None,
                 random_state=None, fit_intercept=True, n_jobs=None, class_weight=None,
                 probability=False):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.max_iter = max_iter
        self.average = average
        self.shuffle = shuffle
        self.cache_size = cache_size
        self.gram = gram
        self.budget = budget
        self.random_state = random_state
        self.fit_intercept = fit_intercept
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.probability = probability

    def _c_params(self):
        _check_int("max_iter", self.max_iter, 1)
        if self.cache_size is not None:
            _check_int("cache_size", self.cache_size, 1)
        if self.budget is not None:
            _check_int("budget", self.budget, 1)
        return {
            "path": ("", "kernel"),
            # a name, else an expression (ptron train --kernel EXPR)
            "kernel": ("kernel", self.kernel if self.kernel in _NAMES else "expr"),
            "kernel_expr": ("kernel", "" if self.kernel in _NAMES else self.kernel),
            "degree": ("degree", self.degree),
            "gamma": ("gamma", self.gamma),
            "coef0": ("coef0", self.coef0),
            "variant": ("average", "averaged" if self.average else "classic"),
            "shuffle": ("shuffle", bool(self.shuffle)),
            "cache_mb": ("cache_size", self.cache_size or 0),
            "gram_storage": ("gram", self.gram),
            "budget": ("budget", self.budget or 0),
        }
