"""Tensors as numpy arrays: zero-copy, read-only views into the mapped
debug buffer (or .npz, or torch.save archive), whose `base` chain keeps the
library objects that own the mapping alive; scalars as Python values. With
tensor_type="torch": torch tensors over a copy-on-write mapping of the same
file (as_type).

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


def as_type(a, tensor_type, owner=None):
    """An array as the caller asked for it: the numpy view itself, or a
    torch tensor sharing its memory (torch.from_numpy, zero-copy).

    torch has no read-only tensors, and a write into the library's
    read-only mapping would kill the process. So a torch tensor views the
    same file bytes through a second, copy-on-write mapping of the file
    (see _CowFiles): reading shares the page cache with the library's
    mapping, a write copies the page it touches into private memory. The
    file, the library's mapping (what the Inspector and the numeric gap
    compute on) and other Inspectors never see the write. Memory that is
    not a file's (a member
    inflated from a compressed archive, the reference run's outputs, the
    float32 conversion of bfloat16 or float8) is copied once."""
    if a is None or tensor_type == "numpy":
        return a
    import torch
    return torch.from_numpy(_writable(a, owner))


class _CowFiles:
    """The copy-on-write mappings of the files an owner's arrays view, one
    per file, and the process's file mappings (/proc/self/maps) they are
    located with. Kept on the owner of the library objects, so that all
    tensors of one Inspector share one mapping per file."""

    def __init__(self):
        self.regions = []  # (start, end, file offset, major, minor, inode, path), sorted
        self.maps = {}     # (major, minor, inode) -> mmap.mmap (ACCESS_COPY)

    def _read_regions(self):
        out = []
        try:
            with open("/proc/self/maps") as f:
                for ln in f:
                    parts = ln.split(maxsplit=5)
                    if len(parts) < 5:
                        continue
                    lo, hi = (int(x, 16) for x in parts[0].split("-"))
                    path = parts[5].rstrip("\n") if len(parts) == 6 else ""
                    if parts[4] == "0" or not path.startswith("/") or \
                            path.endswith(" (deleted)"):
                        # memory that is no file's (heap, anonymous): known,
                        # so that a lookup there does not read the maps again
                        out.append((lo, hi, 0, 0, 0, 0, ""))
                        continue
                    major, minor = (int(x, 16) for x in parts[3].split(":"))
                    out.append((lo, hi, int(parts[2], 16), major, minor, int(parts[4]), path))
        except OSError:
            pass
        out.sort()
        self.regions = out

    def _find(self, lo, hi):
        import bisect
        for attempt in range(2):
            k = bisect.bisect_right(self.regions, (lo, float("inf"))) - 1
            if k >= 0 and self.regions[k][0] <= lo and hi <= self.regions[k][1]:
                return self.regions[k]
            if attempt == 0:
                self._read_regions()  # a mapping opened since the last look
        return None

    def locate(self, lo, hi):
        """The copy-on-write mapping of the file the library maps at
        [lo, hi) and the file offset of lo, or None when that memory is not
        a file's (or the file cannot be opened again as the same file)."""
        import mmap
        import os
        reg = self._find(lo, hi)
        if reg is None or not reg[5]:
            return None
        start, _end, off, major, minor, inode, path = reg
        key = (major, minor, inode)
        mm = self.maps.get(key)
        if mm is None:
            try:
                with open(path, "rb") as f:
                    st = os.fstat(f.fileno())
                    # the path may name another file now (replaced since the
                    # library mapped it): only the same inode will do
                    if (st.st_ino, os.major(st.st_dev), os.minor(st.st_dev)) != (inode, major,
                                                                                  minor):
                        return None
                    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
            except (OSError, ValueError):
                return None
            if not _watch(mm, lo):
                mm.close()
                return None
            self.maps[key] = mm
        file_off = off + (lo - start)
        if file_off + (hi - lo) > len(mm):
            return None
        return mm, file_off


def _watch(mm, library_addr):
    """Has the library's SIGBUS handler watch the copy-on-write mapping `mm`
    as the library's own mapping at library_addr (a file truncated under a
    torch tensor reads zeros and is marked, instead of killing the
    process), until mm is unmapped. False when it cannot (then no view)."""
    import weakref
    probe = ctypes.c_char.from_buffer(mm)
    addr = ctypes.addressof(probe)
    del probe  # no export left: mm can be closed
    err = _lib.new_error()
    if lib.guard_watch_copy(addr, len(mm), library_addr, ctypes.byref(err)) < 0:
        return False
    weakref.finalize(mm, lib.guard_unwatch_copy, addr)
    return True


def _writable(a, owner):
    """`a` as a writable numpy array for torch.from_numpy: `a` itself when
    it owns its memory, else the same bytes of the file through the owner's
    copy-on-write mapping (same shape and strides), else a copy."""
    np = _np()
    if a.flags.writeable:
        return a
    if a.size == 0:
        return np.zeros(a.shape, dtype=a.dtype)
    cow = getattr(owner, "_cow_files", None) if owner is not None else None
    if cow is None and owner is not None:
        cow = _CowFiles()
        try:
            owner._cow_files = cow
        except AttributeError:
            pass
    lo, hi = np.byte_bounds(a)
    found = cow.locate(lo, hi) if cow is not None else None
    if found is None:
        return np.array(a)
    mm, file_off = found
    # the maps are read once per owner: make sure the mapping found is still
    # the one the library's view is in (same bytes at both ends), else copy
    n = min(16, hi - lo)
    if ctypes.string_at(lo, n) != mm[file_off:file_off + n] or \
            ctypes.string_at(hi - n, n) != mm[file_off + (hi - lo) - n:file_off + (hi - lo)]:
        return np.array(a)
    addr = a.__array_interface__["data"][0]
    return np.ndarray(a.shape, dtype=a.dtype, buffer=mm, offset=file_off + (addr - lo),
                      strides=a.strides)


def as_type_all(values, tensor_type, owner=None):
    """as_type over debug data or outputs: arrays and lists of arrays;
    scalars kept."""
    if tensor_type == "numpy":
        return values
    out = []
    for v in values:
        if isinstance(v, list):
            out.append([as_type(x, tensor_type, owner) if hasattr(x, "dtype") else x for x in v])
        else:
            out.append(as_type(v, tensor_type, owner) if hasattr(v, "dtype") else v)
    return out
