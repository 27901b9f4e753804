"""numpy arrays as ptron datasets: in place when the layout allows it, else one copy.

ptron's dense layout is row-major float32 with each row padded by zeros to the next multiple
of 16 floats (64 bytes) and every row 64-byte aligned. A float32 array already laid out so (as
returned by ptron.empty, ptron.padded, ptron.load_dataset and the transformers, or any array
with unit column stride, 64-byte aligned rows d rounded up to 16 floats apart, and zeros in
the padding) is handed to the library in place. Anything else (other dtypes,
unaligned or non-contiguous arrays) is copied once into that layout, converting to float32 in
the same pass. scipy.sparse matrices go to the library's sparse layout (CSR) without
densifying: their column indices are used in place, their values too when float32.
"""
import ctypes
import os

import numpy as np

from ._lib import check, error_for, lib, text, PtronMemoryError, PT_ERR_LIMIT

ALIGN_BYTES = 64
ALIGN_FLOATS = 16


def stride_for(d):
    """Floats per padded row for d features (at least 16)."""
    return max(1, -(-d // ALIGN_FLOATS)) * ALIGN_FLOATS


def memory_budget():
    """The budget for a copy into ptron's layout: half of physical memory, as the library's
    own default (pt_read_options.mem_budget_bytes)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError):
        return 8 << 30


def _check_budget(n, d):
    need = n * stride_for(d) * 4
    budget = memory_budget()
    if need > budget:
        raise PtronMemoryError(
            PT_ERR_LIMIT,
            "%d rows x %d features need %.1f MiB in ptron's padded float32 layout, over the memory "
            "budget of %.1f MiB (half of RAM); use fewer rows or features" % (
                n, d, need / 2**20, budget / 2**20))


def _aligned(n, stride):
    """An uninitialised (n, stride) float32 array whose rows are 64-byte aligned."""
    nbytes = n * stride * 4
    raw = np.empty(nbytes + ALIGN_BYTES, dtype=np.uint8)
    off = (-raw.ctypes.data) % ALIGN_BYTES
    return raw[off:off + nbytes].view(np.float32).reshape(n, stride)


def empty(n, d):
    """A writable (n, d) float32 array in ptron's layout (rows padded with zeros to a multiple of
    16 floats, 64-byte aligned), uninitialised: fill it and every estimator uses it in place."""
    _check_budget(n, d)
    buf = _aligned(n, stride_for(d))
    buf[:, d:] = 0
    return buf[:, :d]


def padded(X):
    """X (array-like or scipy.sparse, 2-D) copied once into ptron's layout as float32, so that
    repeated fits and predictions use it in place instead of copying it each time."""
    if _is_sparse(X):
        X = X.tocsr()
        out = empty(*X.shape)
        _densify(X, out)
        return out
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError("expected a 2-D array, got %d dimensions" % X.ndim)
    out = empty(*X.shape)
    np.copyto(out, X, casting="unsafe")
    return out


def _is_sparse(X):
    try:
        import scipy.sparse
    except ImportError:  # pragma: no cover - scipy comes with scikit-learn
        return False
    return scipy.sparse.issparse(X)


def _densify(X, out, rows=4096):
    """CSR X into the dense out, a block of rows at a time (bounded scratch memory)."""
    for i in range(0, X.shape[0], rows):
        out[i:i + rows] = X[i:i + rows].toarray()


def _top_array(X):
    """The ndarray at the root of X's chain of views (it spans the whole buffer)."""
    top = X
    while isinstance(top.base, np.ndarray):
        top = top.base
    return top


def in_place_stride(X):
    """The row stride in floats if the library can use X where it is, else None."""
    if not isinstance(X, np.ndarray) or X.dtype != np.float32 or X.ndim != 2:
        return None
    n, d = X.shape
    if n == 0 or d == 0:
        return None
    row_bytes = X.strides[0] if n > 1 else stride_for(d) * 4
    if (d > 1 and X.strides[1] != 4) or row_bytes <= 0 or row_bytes % ALIGN_BYTES:
        return None
    stride = row_bytes // 4
    if stride != stride_for(d) or X.ctypes.data % ALIGN_BYTES:
        return None  # the library's weights and loops are sized by stride_for(d)
    if stride > d:
        # the padding must exist (inside the buffer) and be zero: the SIMD loops read it
        lo, hi = np.byte_bounds(_top_array(X))
        if X.ctypes.data + n * row_bytes > hi:
            return None
        full = np.lib.stride_tricks.as_strided(X, (n, stride), (row_bytes, 4))
        if np.any(full[:, d:]):
            return None
    return stride


def _csr_arrays(X):
    """(indptr uint64, indices uint32, data float32) of scipy matrix X in canonical CSR form
    (indices sorted and distinct in each row, as pt_csr_check wants). The column indices are
    scipy's own array, reinterpreted, and the values too when they are float32 already: only
    the row offsets (n + 1 numbers) are always copied."""
    given = X
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # sorts the indices too
    indices = X.indices
    if indices.dtype.itemsize == 4 and indices.dtype.kind == "i":
        indices = indices.view(np.uint32)  # scipy's indices are >= 0
    indices = np.ascontiguousarray(indices, dtype=np.uint32)
    data = np.ascontiguousarray(X.data, dtype=np.float32)
    indptr = np.ascontiguousarray(X.indptr, dtype=np.uint64)
    return indptr, indices, data, not np.may_share_memory(data, given.data)


class Dataset:
    """A pt_dataset over a float32 matrix, or over CSR arrays (scipy.sparse input: the sparse
    layout, never densified), that this object keeps alive.

    `copied` says whether building it took a copy of the values."""

    def __init__(self, X):
        if _is_sparse(X):
            self._wrap_csr(X)
            return
        stride = in_place_stride(X)
        if stride is None:
            buf = empty(*X.shape)
            np.copyto(buf, X, casting="unsafe")
            self.copied = True
        else:
            buf = X
            self.copied = False
        n, d = buf.shape
        row_bytes = buf.strides[0] if n > 1 else stride_for(d) * 4
        self.matrix = buf
        self._n = n
        self.handle = ctypes.c_void_p()
        status = lib.pt_dataset_wrap(buf.ctypes.data if n else None, n, d,
                                     row_bytes // 4 if n else stride_for(d),
                                     ctypes.byref(self.handle))
        if status:
            self.handle = None
            raise error_for(status)

    def _wrap_csr(self, X):
        n, d = X.shape
        indptr, indices, data, self.copied = _csr_arrays(X)
        self.matrix = None
        self.csr = (indptr, indices, data)  # the library reads these in place
        self._n = n
        self.handle = ctypes.c_void_p()
        status = lib.pt_dataset_wrap_csr(n, d, indptr.ctypes.data, indices.ctypes.data,
                                         data.ctypes.data, ctypes.byref(self.handle))
        if status:
            self.handle = None
            raise error_for(status)

    @property
    def n(self):
        return self._n if self.matrix is None else self.matrix.shape[0]

    def set_classes(self, classes, index):
        """Label the rows: index[i] is row i's class, classes the table (numbers or strings)."""
        index = np.ascontiguousarray(index, dtype=np.int32)
        values, names = class_table(classes)
        if names is not None:
            arr = (ctypes.c_char_p * len(names))(*names)
            check(lib.pt_dataset_set_classes(self.handle, len(names), None, arr,
                                             index.ctypes.data))
        else:
            check(lib.pt_dataset_set_classes(self.handle, len(values), values.ctypes.data, None,
                                             index.ctypes.data))

    def __del__(self):
        if getattr(self, "handle", None):
            lib.pt_dataset_free(self.handle)
            self.handle = None


def class_table(classes):
    """(values, names) for pt_dataset_set_classes: float64 values for numeric classes, else
    the classes' text as UTF-8 (strcmp order is then code point order, as numpy sorts)."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "biuf":
        values = np.ascontiguousarray(classes, dtype=np.float64)
        if np.any(values[1:] <= values[:-1]) or not np.all(np.isfinite(values)):
            raise ValueError("class labels %r are not distinct finite numbers as float64"
                             % (classes,))
        return values, None
    names = [text(c) for c in classes]
    if any(b"\0" in s for s in names) or any(a >= b for a, b in zip(names, names[1:])):
        raise ValueError("class labels %r: each must be text without NUL, distinct, and sorted"
                         % (classes,))
    return None, names


class _Owner:
    """Keeps a library-owned pt_dataset alive while numpy arrays look at its matrix."""

    def __init__(self, handle):
        self.handle = handle
        n, stride = lib.pt_dataset_n(handle), lib.pt_dataset_stride(handle)
        ptr = lib.pt_dataset_matrix(handle)
        # a .ptd file is mapped read-only (pt_dataset_row gives NULL); the rest is ours to write
        readonly = n > 0 and not lib.pt_dataset_row(handle, 0)
        self.__array_interface__ = {
            "shape": (n, stride), "typestr": "<f4", "version": 3,
            # numpy wants a pointer even for no rows
            "data": (ptr or ctypes.addressof(_EMPTY), readonly),
        }

    def __del__(self):
        lib.pt_dataset_free(self.handle)


_EMPTY = ctypes.c_float()


def matrix_view(handle):
    """The (n, d) float32 view of a library-owned dataset's matrix, owning the dataset."""
    d = lib.pt_dataset_d(handle)
    return np.asarray(_Owner(handle))[:, :d]


PT_LAYOUT_SPARSE = 1
PT_DTYPE_F32 = 0


class _Freer:
    """Frees a library-owned pt_dataset when the last array looking at it goes."""

    def __init__(self, handle):
        self.handle = handle

    def __del__(self):
        lib.pt_dataset_free(self.handle)


class _ReadOnlyView:
    """One of a sparse dataset's arrays as numpy sees it, keeping the dataset alive."""

    def __init__(self, owner, ptr, count, typestr):
        self.owner = owner
        self.__array_interface__ = {
            "shape": (count,), "typestr": typestr, "version": 3,
            "data": (ptr or ctypes.addressof(_EMPTY), True),
        }


def csr_view(handle):
    """A library-owned sparse dataset as a scipy.sparse CSR matrix, owning the dataset: the
    values are its float32 array, read-only, in place (a .ptd file's mapping); the row offsets
    and column indices are copied once into the signed index type scipy wants (int32 when
    they fit, else int64)."""
    import scipy.sparse
    n, d = lib.pt_dataset_n(handle), lib.pt_dataset_d(handle)
    rowptr, col, val = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    try:
        check(lib.pt_dataset_csr(handle, ctypes.byref(rowptr), ctypes.byref(col),
                                 ctypes.byref(val)))
    except BaseException:
        lib.pt_dataset_free(handle)
        raise
    owner = _Freer(handle)
    indptr = np.asarray(_ReadOnlyView(owner, rowptr.value, n + 1, "<u8"))
    entries = int(indptr[-1])
    indices = np.asarray(_ReadOnlyView(owner, col.value, entries, "<u4"))
    data = np.asarray(_ReadOnlyView(owner, val.value, entries, "<f4"))
    index = np.int32 if max(d, entries) < 2**31 else np.int64
    X = scipy.sparse.csr_matrix((data, indices.astype(index), indptr.astype(index)),
                                shape=(n, d), copy=False)
    X.has_sorted_indices = True  # the library's rows are in increasing column order
    return X


def labels_of(handle):
    """The label of every row of a library-owned dataset: float64 values, or str for text."""
    n, k = lib.pt_dataset_n(handle), lib.pt_dataset_nclass(handle)
    if k and lib.pt_dataset_class_name(handle, 0) is not None:
        table = np.array([lib.pt_dataset_class_name(handle, c).decode() for c in range(k)])
    else:
        table = np.array([lib.pt_dataset_class_value(handle, c) for c in range(k)], np.float64)
    if n == 0:
        return np.empty(0, table.dtype)
    cls = np.ctypeslib.as_array(ctypes.cast(lib.pt_dataset_classes(handle),
                                            ctypes.POINTER(ctypes.c_int32)), (n,))
    return table[cls]


def load_dataset(path):
    """Read a dataset file as the CLI does (LIBSVM, CSV, their gzip, or ptron's .ptd, by
    extension, in the layout `--layout auto` picks): returns (X, y). X is, for the dense
    layout, an (n, d) float32 array in ptron's layout, used in place by every estimator (for a
    .ptd file, its read-only mapping); for the sparse layout (fewer than 1/4 of the values
    non-zero, or a sparse .ptd file), a scipy.sparse CSR matrix over the library's float32
    values (read-only, in place); a .ptd file stored as bf16 or u8 gives a float32 copy of its
    values. y holds the labels (float64, or str for a CSV whose labels
    are words)."""
    handle = ctypes.c_void_p()
    check(lib.pt_dataset_read(os.fsencode(path), None, ctypes.byref(handle)))
    try:
        y = labels_of(handle)
    except BaseException:
        lib.pt_dataset_free(handle)
        raise
    if lib.pt_dataset_layout(handle) == PT_LAYOUT_SPARSE:
        return csr_view(handle), y
    if lib.pt_dataset_dtype(handle) != PT_DTYPE_F32:
        # compact storage (convert --dtype bf16|u8): numpy gets the float32 values, a copy
        wide = ctypes.c_void_p()
        status = lib.pt_dataset_to_dtype(handle, PT_DTYPE_F32, 0, ctypes.byref(wide))
        lib.pt_dataset_free(handle)
        check(status)
        handle = wide
    return matrix_view(handle), y
