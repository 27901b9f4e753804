"""Finding and loading libptron, the C prototypes, and ptron's errors as Python exceptions.

Only functions declared in include/ptron.h are bound. Every call goes through ctypes.CDLL,
which releases the GIL for the duration of the call, so training runs while other Python
threads go on.
"""
import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, c_char_p, c_double, c_int, c_int32, c_size_t,
                    c_uint64, c_void_p)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    """Where to look for libptron.so, in order: PTRON_LIB, the library this package was
    installed beside (recorded by meson install, or by the wheel's build relative to this
    directory), the repository's build/src/, then the system loader's search path."""
    env = os.environ.get("PTRON_LIB")
    if env:
        return [("PTRON_LIB", env)]
    found = []
    try:
        from . import _installed  # written by meson install, absent in the source tree
        found.append(("installed", os.path.normpath(os.path.join(_HERE, _installed.LIBRARY))))
    except ImportError:
        pass
    repo = os.path.dirname(os.path.dirname(_HERE))
    found.append(("build tree", os.path.join(repo, "build", "src", "libptron.so")))
    system = ctypes.util.find_library("ptron")
    if system:
        found.append(("system", system))
    return found


def _load():
    tried = []
    for where, path in _candidates():
        if where not in ("PTRON_LIB", "system") and not os.path.exists(path):
            tried.append("%s (%s: no such file)" % (path, where))
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            if where == "PTRON_LIB":
                raise ImportError("PTRON_LIB=%s cannot be loaded: %s" % (path, e)) from e
            tried.append("%s (%s: %s)" % (path, where, e))
    raise ImportError("libptron.so not found; build it (meson setup build && ninja -C build) or "
                      "set PTRON_LIB to its path. Tried: " + "; ".join(tried))


lib, library_path = _load()

# The opaque handles are plain pointers.
_ds = c_void_p
_model = c_void_p
_params = c_void_p
_status = c_int

EPOCH_FN = CFUNCTYPE(c_int, c_void_p, c_int, c_size_t, c_void_p)

_PROTOTYPES = {
    "pt_strerror": (c_char_p, [c_int]),
    "pt_last_error": (c_char_p, []),
    "pt_stop_create": (c_void_p, []),
    "pt_stop_free": (None, [c_void_p]),
    "pt_stop_request": (None, [c_void_p]),
    # datasets
    "pt_dataset_wrap": (_status, [c_void_p, c_size_t, c_size_t, c_size_t, POINTER(_ds)]),
    "pt_dataset_wrap_csr": (_status, [c_size_t, c_size_t, c_void_p, c_void_p, c_void_p,
                                      POINTER(_ds)]),
    "pt_dataset_read": (_status, [c_char_p, c_void_p, POINTER(_ds)]),
    "pt_dataset_free": (None, [_ds]),
    "pt_dataset_n": (c_size_t, [_ds]),
    "pt_dataset_d": (c_size_t, [_ds]),
    "pt_dataset_stride": (c_size_t, [_ds]),
    "pt_dataset_matrix": (c_void_p, [_ds]),
    "pt_dataset_layout": (c_int, [_ds]),
    "pt_dataset_dtype": (c_int, [_ds]),
    "pt_dataset_to_dtype": (_status, [_ds, c_int, c_size_t, POINTER(_ds)]),
    "pt_dataset_csr": (_status, [_ds, POINTER(c_void_p), POINTER(c_void_p), POINTER(c_void_p)]),
    "pt_dataset_nclass": (c_size_t, [_ds]),
    "pt_dataset_classes": (c_void_p, [_ds]),
    "pt_dataset_row": (c_void_p, [_ds, c_size_t]),
    "pt_dataset_class_value": (c_double, [_ds, c_size_t]),
    "pt_dataset_class_name": (c_char_p, [_ds, c_size_t]),
    "pt_dataset_set_classes": (_status, [_ds, c_size_t, c_void_p, c_void_p, c_void_p]),
    # parameters
    "pt_train_params_create": (_params, []),
    "pt_train_params_free": (None, [_params]),
    "pt_train_params_set": (_status, [_params, c_char_p, c_char_p]),
    "pt_train_params_get": (_status, [_params, c_char_p, c_char_p, c_size_t]),
    "pt_train_params_key": (c_char_p, [c_size_t]),
    "pt_train_params_set_epoch_hook": (None, [_params, EPOCH_FN, c_void_p]),
    "pt_train_params_set_stop": (None, [_params, c_void_p]),
    "pt_train_params_set_init": (None, [_params, _model]),
    "pt_train_params_set_class_weight": (None, [_params, c_void_p, c_size_t]),
    "pt_expand_params_create": (c_void_p, []),
    "pt_expand_params_free": (None, [c_void_p]),
    "pt_expand_params_set": (_status, [c_void_p, c_char_p, c_char_p]),
    "pt_expand_dim": (c_size_t, [c_void_p, c_size_t]),
    "pt_expand": (_status, [_ds, c_void_p, POINTER(_ds)]),
    # training
    "pt_train": (_status, [_ds, _params, POINTER(_model), c_void_p]),
    "pt_platt_fit": (_status, [_ds, _params, c_size_t, c_uint64, POINTER(c_double),
                               POINTER(c_double)]),
    # models
    "pt_model_free": (None, [_model]),
    "pt_model_clone": (_model, [_model]),
    "pt_model_save": (_status, [_model, c_char_p]),
    "pt_model_load": (_status, [c_char_p, POINTER(_model)]),
    "pt_model_save_buffer": (_status, [_model, POINTER(c_void_p), POINTER(c_size_t)]),
    "pt_model_load_buffer": (_status, [c_char_p, c_size_t, c_char_p, POINTER(_model)]),
    "pt_buffer_free": (None, [c_void_p]),
    "pt_model_get_params": (None, [_model, _params]),
    "pt_model_nclass": (c_size_t, [_model]),
    "pt_model_features": (c_size_t, [_model]),
    "pt_model_epochs_run": (c_int, [_model]),
    "pt_model_class_value": (c_double, [_model, c_size_t]),
    "pt_model_class_name": (c_char_p, [_model, c_size_t]),
    "pt_model_weights": (c_void_p, [_model, POINTER(ctypes.c_float)]),
    "pt_model_class_weights": (c_void_p, [_model, c_size_t, POINTER(ctypes.c_float)]),
    "pt_model_scores": (_status, [_model, _ds, c_void_p]),
    "pt_model_class_scores": (_status, [_model, _ds, c_void_p]),
    "pt_model_predict_class": (_status, [_model, _ds, c_void_p]),
    "pt_model_set_platt": (_status, [_model, c_double, c_double]),
    "pt_model_platt": (c_int, [_model, POINTER(c_double), POINTER(c_double)]),
    "pt_model_proba": (_status, [_model, _ds, c_void_p]),
}


def _bind():
    missing = []
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        fn.restype = restype
        fn.argtypes = argtypes
    if missing:
        raise ImportError("%s lacks %s: it is older than this package; rebuild it or point "
                          "PTRON_LIB at a current one" % (library_path, ", ".join(missing)))


_bind()

# ------------------------------------------------------------------------------- errors

PT_OK = 0
PT_ERR_INVALID, PT_ERR_IO, PT_ERR_PARSE, PT_ERR_FORMAT, PT_ERR_CHECKSUM = 1, 2, 3, 4, 5
PT_ERR_VERSION, PT_ERR_NOMEM, PT_ERR_LIMIT, PT_ERR_LABELS, PT_ERR_UNSUPPORTED = 6, 7, 8, 9, 10
PT_ERR_NUMERIC, PT_ERR_INTERRUPTED = 11, 12


class PtronError(Exception):
    """An error reported by libptron. `status` is its pt_status code, `reason` the short
    description (pt_strerror) and the message ptron's detailed one (pt_last_error)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.reason = lib.pt_strerror(status).decode()


class PtronValueError(PtronError, ValueError):
    """Bad input or parameters: invalid values, unparsable or damaged files, unsuitable labels,
    non-finite numbers, an option the chosen path does not support."""


class PtronOSError(PtronError, OSError):
    """A file could not be opened, read or written."""


class PtronMemoryError(PtronError, MemoryError):
    """An allocation failed, or a memory budget would be exceeded (the message says how much
    is needed and which parameter raises the budget)."""


def error_for(status, message=None):
    """The exception for a pt_status; message defaults to pt_last_error() of this thread."""
    if message is None:
        message = (lib.pt_last_error() or b"").decode(errors="replace")
    if not message:
        message = lib.pt_strerror(status).decode()
    if status == PT_ERR_IO:
        return PtronOSError(status, message)
    if status in (PT_ERR_NOMEM, PT_ERR_LIMIT):
        return PtronMemoryError(status, message)
    if status == PT_ERR_INTERRUPTED:
        return KeyboardInterrupt(message)
    return PtronValueError(status, message)


def check(status):
    """Raise the exception for a failed call (status != PT_OK)."""
    if status != PT_OK:
        raise error_for(status)


def text(s):
    """str -> bytes for the C strings ptron takes (file paths via os.fsencode)."""
    return s if isinstance(s, bytes) else str(s).encode()
