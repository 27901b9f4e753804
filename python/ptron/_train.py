"""Training parameters by name and the pt_train call (interruptible with Ctrl-C)."""
import ctypes
import numbers
import os
import threading

import numpy as np

from ._lib import EPOCH_FN, PtronValueError, error_for, lib
from ._model import Model


def param_text(value):
    """A Python value as the text pt_train_params_set reads."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # shortest text that reads back as the same double
    return str(value)


class TrainParams:
    """A pt_train_params built by name. values: {C name: (Python name, value)}; a refused value
    raises ValueError naming the Python parameter and quoting ptron's message."""

    def __init__(self, values):
        self.handle = lib.pt_train_params_create()
        if not self.handle:
            raise MemoryError("cannot allocate training parameters")
        self._keep = []  # objects the struct points at (callbacks, init models)
        for cname, (pyname, value) in values.items():
            status = lib.pt_train_params_set(self.handle, cname.encode(), param_text(value).encode())
            if status:
                raise PtronValueError(status, "%s=%r: %s" % (pyname, value,
                                                             lib.pt_last_error().decode()))

    def set_init(self, model):
        """Start from model's weights (a warm start): same features, same classes."""
        lib.pt_train_params_set_init(self.handle, model.handle)
        self._keep.append(model)

    def set_class_weight(self, weights):
        """A weight for each class, in class index order (float32, each finite and > 0), or
        None for none; the array is kept alive with these parameters."""
        if weights is None:
            lib.pt_train_params_set_class_weight(self.handle, None, 0)
            return
        w = np.ascontiguousarray(weights, dtype=np.float32)
        self._keep.append(w)
        lib.pt_train_params_set_class_weight(self.handle, w.ctypes.data, w.size)

    def set_epoch_hook(self, fn):
        """fn(model_handle, epoch, mistakes) -> bool (True stops training), called after each
        epoch on the paths that take snapshots. An exception in fn stops training and is
        raised by train()."""
        errors = []

        def hook(m, epoch, mistakes, user):
            try:
                return 1 if fn(m, epoch, mistakes) else 0
            except BaseException as e:  # noqa: B902 - re-raised by train()
                errors.append(e)
                return 1

        cfn = EPOCH_FN(hook)
        lib.pt_train_params_set_epoch_hook(self.handle, cfn, None)
        self._keep.append(cfn)
        self.hook_errors = errors

    def __del__(self):
        if getattr(self, "handle", None):
            lib.pt_train_params_free(self.handle)
            self.handle = None


def _call(data, params):
    """pt_train in this thread: (status, model handle or None, message)."""
    handle = ctypes.c_void_p()
    status = lib.pt_train(data.handle, params.handle, ctypes.byref(handle), None)
    message = lib.pt_last_error().decode(errors="replace") if status else ""
    return status, handle.value, message


def _interruptible(params, call, discard=None):
    """call() -> (status, result, message), run with a stop token on params. The library call
    releases the GIL. On the main thread it runs in a helper thread, so that Ctrl-C
    (KeyboardInterrupt) reaches Python at once: the stop token then stops the call at its next
    sample, discard(result) frees what it made, and the interrupt is raised."""
    stop = lib.pt_stop_create()
    if not stop:
        raise MemoryError("cannot allocate a stop token")
    try:
        lib.pt_train_params_set_stop(params.handle, stop)
        if threading.current_thread() is not threading.main_thread():
            return call()
        result = []
        worker = threading.Thread(target=lambda: result.append(call()), name="ptron-train",
                                  daemon=True)
        worker.start()
        try:
            worker.join()
        except KeyboardInterrupt:
            lib.pt_stop_request(stop)
            worker.join()
            if result and discard is not None:
                discard(result[0][1])
            raise
        return result[0]
    finally:
        lib.pt_train_params_set_stop(params.handle, None)
        lib.pt_stop_free(stop)


def _free_model(handle):
    if handle:
        lib.pt_model_free(handle)


def train(data, params):
    """Train on a Dataset with TrainParams; returns a Model. Interruptible with Ctrl-C (see
    _interruptible)."""
    status, handle, message = _interruptible(params, lambda: _call(data, params), _free_model)
    errors = getattr(params, "hook_errors", None)
    if errors:
        _free_model(handle)
        raise errors[0]
    if status:
        _free_model(handle)
        raise error_for(status, message)
    return Model(handle)


def platt_fit(data, params, folds, seed):
    """Platt's (A, B) for a two-class run on a Dataset, fitted to out-of-fold decision values
    (pt_platt_fit: `folds` stratified folds from seed, each model trained as params says), as
    `ptron train --proba` does with 5 folds and --seed. Interruptible as train."""
    def call():
        a, b = ctypes.c_double(), ctypes.c_double()
        status = lib.pt_platt_fit(data.handle, params.handle, folds, seed, ctypes.byref(a),
                                  ctypes.byref(b))
        message = lib.pt_last_error().decode(errors="replace") if status else ""
        return status, (a.value, b.value), message

    status, ab, message = _interruptible(params, call)
    if status:
        raise error_for(status, "probability=True (Platt scaling on %d folds): %s"
                        % (folds, message))
    return ab


def seed_of(random_state):
    """ptron's seed for a scikit-learn random_state: an int is the seed itself (so
    random_state=7 is the CLI's --seed 7); None or a RandomState draws one."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError("random_state must be >= 0 (got %d)" % random_state)
        return int(random_state)
    from sklearn.utils import check_random_state
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def threads_of(n_jobs):
    """ptron's thread count for n_jobs: None or -1 all cores (ptron's default), k > 0 k
    threads, k < -1 all but |k| - 1 (joblib's rule)."""
    if n_jobs is None or n_jobs == -1:
        return 0
    if not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError("n_jobs must be None or a non-zero integer (got %r)" % (n_jobs,))
    if n_jobs > 0:
        return int(n_jobs)
    return max(1, (os.cpu_count() or 1) + 1 + int(n_jobs))
