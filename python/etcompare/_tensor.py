"""Tensors as numpy arrays: zero-copy, read-only views into the mapped
debug buffer (or .npz, or torch.save archive), whose `base` chain keeps the
library objects that own the mapping alive; scalars as Python values.

numpy is imported on first use, so that `import etcompare` and the tables
stay fast.
"""
import ctypes
import struct

from . import _lib
from ._lib import lib

# etc_scalar_type -> numpy dtype of the stored elements. bfloat16 and the
# float8 kinds have no numpy dtype: they are converted (copied) to float32.
_DTYPES = {0: "u1", 1: "i1", 2: "<i2", 3: "<i4", 4: "<i8", 5: "<f2", 6: "<f4", 7: "<f8", 11: "?",
           12: "i1", 13: "u1", 14: "<i4", 16: "u1", 17: "u1", 22: "<u2", 27: "<u2", 28: "<u4",
           29: "<u8"}
_CONVERTED = {15, 23, 24, 25, 26}


def _np():
    import numpy
    return numpy


def shape_of(t):
    if not t.ndim:
        return ()
    return struct.unpack(f"<{t.ndim}q", ctypes.string_at(t.sizes_le, 8 * t.ndim))


def view(addr, nbytes, dtype, shape, owner, strides=None):
    """A read-only numpy array over `nbytes` at `addr`, kept alive by `owner`."""
    np = _np()
    if nbytes == 0:  # an empty tensor (ETDumpGen logs some with offset -1): no bytes to view
        arr = np.zeros(shape, dtype=dtype)
        arr.flags.writeable = False
        return arr
    raw = (ctypes.c_char * nbytes).from_address(addr)
    raw._owner = owner  # the array's base chain ends here, holding the library objects
    arr = np.frombuffer(memoryview(raw).toreadonly(), dtype=dtype)
    if strides is None:
        return arr.reshape(shape)
    return np.lib.stride_tricks.as_strided(arr, shape=shape, strides=strides, writeable=False)


def tensor_array(t, owner):
    """An etc_tensor as a numpy array, or None when it has no data (no
    debug buffer was given)."""
    if not t.data:
        return None
    shape = shape_of(t)
    if t.scalar_type in _CONVERTED:
        np = _np()
        out = np.empty(t.numel, dtype=np.float64)
        lib.tensor_to_double(ctypes.byref(t), 0, t.numel,
                             out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        return out.astype(np.float32).reshape(shape)
    return view(t.data, t.nbytes, _DTYPES[t.scalar_type], shape, owner)


def pytensor_array(pt, owner):
    """A torch.save tensor (reference output) as a numpy array: a view of its
    storage with its strides (zero-copy, also for non-contiguous tensors)."""
    t = pt.tensor
    if t.scalar_type in _CONVERTED or pt.storage is None:
        return tensor_array(t, owner) if t.data else None
    dtype = _np().dtype(_DTYPES[t.scalar_type])
    shape = shape_of(t)
    strides = struct.unpack(f"<{t.nstrides}q", ctypes.string_at(t.strides_le, 8 * t.nstrides)) \
        if t.nstrides else ()
    if pt.contiguous and t.data:
        return view(t.data, t.nbytes, dtype, shape, owner)
    start = pt.storage + pt.storage_offset * dtype.itemsize
    return view(start, pt.storage_nbytes - pt.storage_offset * dtype.itemsize, dtype, shape, owner,
                tuple(s * dtype.itemsize for s in strides))


def value(v, buf, owner):
    """One etc_value (debug data or program output) as upstream inflates it:
    Tensor -> array, TensorList -> list of arrays, Int/Bool/Float/Double/String
    -> Python value, Null -> None."""
    kind = v.type
    if kind == 1:
        return int(v.int_val)
    if kind == 2:
        return bool(v.bool_val)
    if kind == 3:
        return float(v.float_val)
    if kind == 4:
        return float(v.double_val)
    if kind in (5, 6):
        err = _lib.new_error()
        out = []
        for i in range(v.tensor_count):
            t = _lib.Tensor()
            _lib.check(lib.value_tensor(ctypes.byref(v), i, buf, ctypes.byref(t),
                                        ctypes.byref(err)), err)
            out.append(tensor_array(t, owner))
        return out[0] if kind == 5 and len(out) == 1 else out
    return None


def values(ptr, start, end, buf, owner):
    return [value(_lib.at(ptr, i, _lib.Value, "value"), buf, owner) for i in range(start, end)]


class _Hashable:
    cls = None


def _hashable_cls():
    if _Hashable.cls is None:
        np = _np()

        class HashableArray(np.ndarray):
            """A numpy array usable as a dict key (by identity), as torch
            tensors are in upstream's comparator mapping."""
            __hash__ = object.__hash__

        _Hashable.cls = HashableArray
    return _Hashable.cls


def hashable(a, tensor_type="numpy"):
    """`a` usable as a dict key: torch tensors already are; numpy arrays
    become a HashableArray view (zero-copy)."""
    if a is None or tensor_type == "torch" or not hasattr(a, "view"):
        return a
    return a.view(_hashable_cls())


def as_type(a, tensor_type):
    """An array as the caller asked for it: the numpy view itself, or a
    torch tensor. torch has no read-only tensors and the debug buffer is
    mapped read-only, so a torch tensor owns a copy of the values (writes
    change the copy, never the file or what the Inspector computes on)."""
    if a is None or tensor_type == "numpy":
        return a
    import torch
    return torch.from_numpy(_np().array(a))


def as_type_all(values, tensor_type):
    """as_type over debug data: arrays and lists of arrays; scalars kept."""
    out = []
    for v in values:
        if isinstance(v, list):
            out.append([as_type(x, tensor_type) if hasattr(x, "dtype") else x for x in v])
        else:
            out.append(as_type(v, tensor_type) if hasattr(v, "dtype") else v)
    return out
