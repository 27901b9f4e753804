"""A trained pt_model: scoring, weights, bytes and files."""
import ctypes
import os

import numpy as np

from ._lib import check, lib

_PARAM_TEXT = 64


class Model:
    """Owns one pt_model handle (freed with this object)."""

    def __init__(self, handle):
        if not handle:
            raise ValueError("no model")
        self.handle = handle

    def __del__(self):
        if getattr(self, "handle", None):
            lib.pt_model_free(self.handle)
            self.handle = None

    # ------------------------------------------------------------------ bytes and files

    def to_bytes(self):
        """The model file's bytes (what save writes, checksum included)."""
        buf, length = ctypes.c_void_p(), ctypes.c_size_t()
        check(lib.pt_model_save_buffer(self.handle, ctypes.byref(buf), ctypes.byref(length)))
        try:
            return ctypes.string_at(buf, length.value)
        finally:
            lib.pt_buffer_free(buf)

    @classmethod
    def from_bytes(cls, data, name="model"):
        handle = ctypes.c_void_p()
        check(lib.pt_model_load_buffer(data, len(data), name.encode(), ctypes.byref(handle)))
        return cls(handle.value)

    def save(self, path):
        check(lib.pt_model_save(self.handle, os.fsencode(path)))

    @classmethod
    def load(cls, path):
        handle = ctypes.c_void_p()
        check(lib.pt_model_load(os.fsencode(path), ctypes.byref(handle)))
        return cls(handle.value)

    def clone(self):
        handle = lib.pt_model_clone(self.handle)
        if not handle:
            check(7)  # PT_ERR_NOMEM with the library's message
        return Model(handle)

    # -------------------------------------------------------------------------- reading

    @property
    def nclass(self):
        return lib.pt_model_nclass(self.handle)

    @property
    def n_features(self):
        return lib.pt_model_features(self.handle)

    @property
    def epochs_run(self):
        return lib.pt_model_epochs_run(self.handle)

    def params(self):
        """The training parameters the model records, {name: text} (pt_train_params_get)."""
        if getattr(self, "_params", None) is None:
            self._params = self._read_params()
        return dict(self._params)

    def _read_params(self):
        p = lib.pt_train_params_create()
        if not p:
            check(7)
        try:
            lib.pt_model_get_params(self.handle, p)
            out = {}
            buf = ctypes.create_string_buffer(_PARAM_TEXT)
            for key in _train_param_keys():
                check(lib.pt_train_params_get(p, key, buf, _PARAM_TEXT))
                out[key.decode()] = buf.value.decode()
            return out
        finally:
            lib.pt_train_params_free(p)

    def classes(self):
        """The class labels, ascending: float64 values, or str for text labels."""
        k = self.nclass
        if k and lib.pt_model_class_name(self.handle, 0) is not None:
            return np.array([lib.pt_model_class_name(self.handle, c).decode() for c in range(k)])
        return np.array([lib.pt_model_class_value(self.handle, c) for c in range(k)], np.float64)

    def coef(self, d):
        """(coef, intercept) of a linear model over d features: float32 arrays of shape (1, d)
        and (1,) for two classes, (K, d) and (K,) for K > 2 (copies); None for kernel models
        models trained on a feature expansion, and voted ones (whose decision is a vote)."""
        p = self.params()
        if p["expand.kind"] != "none" or p["variant"] == "voted":
            return None  # weights over the expanded features, or one of many voting vectors
        k = self.nclass
        b = ctypes.c_float()
        if k <= 2:
            ptr = lib.pt_model_weights(self.handle, ctypes.byref(b))
            if not ptr:
                return None
            w = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), (d,))
            return w.reshape(1, d).copy(), np.array([b.value], np.float32)
        coef = np.empty((k, d), np.float32)
        intercept = np.empty(k, np.float32)
        for c in range(k):
            ptr = lib.pt_model_class_weights(self.handle, c, ctypes.byref(b))
            if not ptr:
                return None
            coef[c] = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), (d,))
            intercept[c] = b.value
        return coef, intercept

    # -------------------------------------------------------------------------- scoring

    def decision(self, data):
        """Scores of a Dataset: (n,) for two classes, (n, K) for more (float32)."""
        k = self.nclass
        if k <= 2:
            out = np.empty(data.n, np.float32)
            check(lib.pt_model_scores(self.handle, data.handle, out.ctypes.data))
        else:
            out = np.empty((data.n, k), np.float32)
            check(lib.pt_model_class_scores(self.handle, data.handle, out.ctypes.data))
        return out

    def platt(self):
        """Platt's (A, B) of a two-class model fitted for probabilities, else None."""
        a, b = ctypes.c_double(), ctypes.c_double()
        if not lib.pt_model_platt(self.handle, ctypes.byref(a), ctypes.byref(b)):
            return None
        return a.value, b.value

    def set_platt(self, a, b):
        check(lib.pt_model_set_platt(self.handle, a, b))

    def proba(self, data):
        """Each row's probability of the +1 class (the larger label) by the model's Platt
        sigmoid: (n,) float64."""
        out = np.empty(data.n, np.float64)
        check(lib.pt_model_proba(self.handle, data.handle, out.ctypes.data))
        return out

    def predict_index(self, data):
        """The predicted class index of each row of a Dataset (int32)."""
        out = np.empty(data.n, np.int32)
        check(lib.pt_model_predict_class(self.handle, data.handle, out.ctypes.data))
        return out


def _train_param_keys():
    keys, i = [], 0
    while True:
        k = lib.pt_train_params_key(i)
        if k is None:
            return keys
        keys.append(k)
        i += 1
