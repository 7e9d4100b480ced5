"""TapSpec lists for ``etcompare --tap-specs FILE.json``.

Upstream's intermediate-output tap pass (executorch.devtools.intermediate_output_tap)
returns a list of ``TapSpec`` dataclasses mapping the extra program outputs
back to the tapped ops. ``save_specs`` writes that list as the JSON the CLI
reads: ``[dataclasses.asdict(s) for s in specs]`` (tuples become lists).
"""
import dataclasses
import json

KEYS = ("node_name", "op_target", "output_index", "reducer_name", "fields",
        "stack_trace", "module_path", "module_class")


def _as_dict(spec):
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        d = dataclasses.asdict(spec)
    elif isinstance(spec, dict):
        d = dict(spec)
    else:
        raise TypeError(f"a TapSpec must be a dataclass or a dict, not {type(spec).__name__}")
    for k in ("node_name", "output_index"):
        if d.get(k) is None:
            raise ValueError(f"a TapSpec needs {k!r}: {d!r}")
    d["fields"] = list(d.get("fields") or ())
    return d


def save_specs(specs, path):
    """Writes TapSpecs (dataclasses or dicts) to ``path`` as a JSON list."""
    out = [_as_dict(s) for s in specs]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    return path


def load_specs(path):
    """Reads a TapSpec JSON list back as dicts."""
    with open(path, encoding="utf-8") as f:
        specs = json.load(f)
    if not isinstance(specs, list):
        raise ValueError(f"{path}: a TapSpec file holds a JSON list")
    return specs


FIELDS = ("min", "max", "mean", "abs_max", "abs_mean", "std", "rms", "l1_norm", "l2_norm",
          "nan_count", "inf_count", "zero_count", "p99_abs")


def stats(x, fields=FIELDS):
    """The library's STATS reduction (etc_tap_stats, the formulas of
    docs/taps.md) of a tensor or array: {field: value} in float64."""
    import ctypes
    from . import _lib
    from ._compare import _flat
    names = list(fields)
    ids = []
    for f in names:
        if f not in FIELDS:
            raise ValueError(f"unknown STATS field {f!r}; known: {', '.join(FIELDS)}")
        ids.append(FIELDS.index(f))
    flat = _flat(x)
    dll = _lib.lib.dll
    dp = ctypes.POINTER(ctypes.c_double)
    dll.etc_values_from_doubles.restype = None
    dll.etc_values_from_doubles.argtypes = [ctypes.POINTER(_lib.Values), dp, ctypes.c_uint64]
    dll.etc_tap_stats.restype = ctypes.c_int
    dll.etc_tap_stats.argtypes = [ctypes.POINTER(_lib.Values), ctypes.POINTER(ctypes.c_int),
                                  ctypes.c_size_t, dp, ctypes.c_void_p]
    v = _lib.Values()
    dll.etc_values_from_doubles(ctypes.byref(v), flat.ctypes.data_as(dp), flat.size)
    fid = (ctypes.c_int * max(len(ids), 1))(*ids)
    out = (ctypes.c_double * max(len(ids), 1))()
    err = _lib.new_error()
    _lib.check(dll.etc_tap_stats(ctypes.byref(v), fid, len(ids), out,
                                 ctypes.cast(ctypes.byref(err), ctypes.c_void_p)), err)
    return {f: out[i] for i, f in enumerate(names)}
