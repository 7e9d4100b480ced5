"""calculate_numeric_gap(): the library's numeric gap (etcompare/numgap.h)
as upstream's DataFrame. The rows come from the library's JSON
(etc_report_numgap_json), so every column it provides is returned; the
mapping to upstream's columns is in `_upstream_rows` alone."""
import ctypes
import json
import math
import os
import warnings

from . import _lib, _tensor
from ._lib import Error, lib

DISTANCES = ("MSE", "L1", "SNR")
# The order of the library's --numgap-tsv (upstream's comparator frame has
# aot_ops, aot_intermediate_output, runtime_ops, runtime_intermediate_output,
# gap in this order; the handles and stacktraces are placed as the TSV does).
UPSTREAM_COLUMNS = ["aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops",
                    "runtime_debug_handle", "runtime_intermediate_output", "gap", "stacktraces"]


class _Gap(_lib.Owner):
    """Owns an etc_numgap and what it was computed from."""
    _what, _fix = "a numeric gap's library objects", "call calculate_numeric_gap() again"

    def __init__(self):
        self.ng = self.npz = None
        self.keep = []

    def __del__(self):
        if lib is None:
            return
        lib.numgap_free(self.ng)
        lib.npz_free(self.npz)


def _num(v):
    """A JSON number of the library ("nan", "inf", "-inf" are strings there)."""
    if v is None:
        return math.nan
    return float(v)


def _gap(r):
    """The library's gap of one output pair: already upstream's distance
    (L1 the sum of |a - r|), a one-element list; NaN when not compared, and
    NaN, as upstream's torch comparators give, when an element is NaN on
    either side (the library's distance leaves NaN positions out; its snr,
    mse, ... columns keep that NaN-free value, and `status` fails a pair
    with NaN on one side only)."""
    g = r.get("gap")
    if (r.get("metrics") or {}).get("nan_count"):
        return math.nan
    return _num(g[0]) if g else math.nan


def _upstream_rows(doc, arrays):
    """Library rows (one per compared output pair) -> upstream rows (one per
    matched group, `gap` a list with one value per output), upstream's
    columns first, then etcompare's from the group's first failing output
    (else its first)."""
    groups = []
    for i, r in enumerate(doc["rows"]):
        key = (tuple(r["aot_debug_handle"]), tuple(r["runtime_debug_handle"]), r["event_name"],
               r["instruction_id"])
        if groups and groups[-1][0] == key:
            groups[-1][1].append((i, r))
        else:
            groups.append((key, [(i, r)]))
    out = []
    for _key, members in groups:
        first = members[0][1]
        shown = next((r for _i, r in members if r["status"] != "pass"), first)
        aot = [arrays[i][1] for i, _r in members]
        rt = [arrays[i][0] for i, _r in members]
        row = {
            "aot_debug_handle": tuple(first["aot_debug_handle"]),
            "aot_ops": _ops(first["aot_ops"]),
            "aot_intermediate_output": aot[0] if len(aot) == 1 else aot,
            "runtime_ops": _ops(first["runtime_ops"]),
            "runtime_debug_handle": tuple(first["runtime_debug_handle"]),
            "runtime_intermediate_output": rt[0] if len(rt) == 1 else rt,
            "gap": [_gap(r) for _i, r in members],
            "stacktraces": first["stacktraces"],
        }
        for k, v in shown.items():
            if k in row or k in ("aot_debug_handle", "runtime_debug_handle"):
                continue
            if k == "metrics":
                for mk, mv in (v or {}).items():
                    row[mk] = float(mv) if mv in ("nan", "inf", "-inf") else mv
            else:
                row[k] = v
        row["outputs"] = len(members)
        out.append(row)
    return out


def _ops(s):
    return [x for x in s.split(", ") if x] if isinstance(s, str) else s


def _distance(insp, distance):
    """(library distance name, the comparator to run in Python or None)."""
    from ._comparator import BUILTIN, NumericalComparatorBase, is_plain_builtin
    if isinstance(distance, NumericalComparatorBase):
        if is_plain_builtin(distance):
            return type(distance).distance, None
        return "MSE", distance
    if isinstance(distance, type) and issubclass(distance, NumericalComparatorBase):
        raise TypeError(f"distance={distance.__name__} is the comparator class: give an "
                        f"instance, distance={distance.__name__}()")
    dist = str(distance).strip().upper()  # as upstream: " SNR " and "mse\n" are names
    if dist not in BUILTIN:
        shown = repr(distance)  # escaped; a long value cut
        raise Error(f"distance must be one of MSE, L1, SNR or a NumericalComparatorBase, not "
                    f"{shown if len(shown) <= 80 else shown[:60] + '...' + shown[-8:]}",
                    "usage error")
    return dist, None


def _same_run(insp, other):
    """True when Inspector `other` is `insp`, or reads the same ETDump and
    debug buffer files (the same device and inode when they were opened,
    also through another name or a link)."""
    if other is insp or other._h is insp._h:
        return True

    def ids(h):
        return {role: fid[:2] for role, _p, fid in h.data_ids if fid is not None}
    mine = ids(insp._h)
    return "ETDump" in mine and mine == ids(other._h)


def numeric_gap(insp, distance, reference, block, thresholds, reference_graph=None,
                reference_dtype="float32", disable_debug_handle_valdiation=False):
    # the keywords first: a wrong one is said before the reference graph runs
    limits = {k: _lib.threshold(k, thresholds.pop(k, None))
              for k in ("min_snr", "max_mse", "min_cosine", "max_abs")}
    # upstream's disable_debug_handle_valdiation (sic): an ETRecord whose
    # handles do not fit the ETDump is a warning, as the CLI's --force
    # (Inspector(force=True) is the CLI's --force for every check)
    force = (_lib.flag("force", thresholds.pop("force", False)) or
             _lib.flag("disable_debug_handle_valdiation", disable_debug_handle_valdiation) or
             insp._force)
    # keep_reference_values=False: the reference graph's outputs are compared
    # as they are computed and not kept (aot_intermediate_output None but for
    # the first divergence), as the CLI does
    keep = _lib.flag("keep_reference_values", thresholds.pop("keep_reference_values", True))
    quant = thresholds.pop("quant_params", None)
    layout = thresholds.pop("layout", "auto")
    if layout not in ("auto", "none"):
        raise Error(f"layout must be auto or none, not '{layout}'", "usage error")
    if thresholds:
        raise TypeError(f"unexpected argument(s): {', '.join(thresholds)}")
    dist, comparator = _distance(insp, distance)
    g = _Gap()
    g.keep.append(insp._h)
    err = _lib.new_error()
    ref = _lib.options("numgap_reference", None)
    if reference is None:
        from ._refrun import open_run
        try:
            run = open_run(insp, block, reference_graph, reference_dtype, insp._method)
        except Error as e:
            prefix = "calculate_numeric_gap without reference= runs the ETRecord's graph"
            if e.message.startswith(prefix):  # said once, not twice
                raise
            # the class stays (a MismatchError is still one)
            raise type(e)(f"{prefix} (as upstream): {e.message}", e.status, e.file,
                          e.offset) from None
        g.keep.append(run)
        ref.graph = run.graph
        ref.inputs = run.inputs.tensors
        ref.input_count = run.inputs.count
        name = _lib.cstr(lib.etrecord_name(insp._h.etrecord)) or "ETRecord"
        g.notes = run.notes
    elif hasattr(reference, "_h") and hasattr(reference, "event_blocks"):
        if _same_run(insp, reference):
            files = ", ".join(os.fsdecode(p) for _r, p, _f in insp._h.data_ids) or "etdump_data"
            warnings.warn(f"calculate_numeric_gap: reference= is this run itself ({files}): "
                          "every op compares equal (SNR inf, MSE 0) and says nothing about the "
                          "run; give the Inspector of a reference run (another device, or "
                          "the CPU), or no reference= for the ETRecord's graph", stacklevel=3)
        ref.insp = reference._h.insp
        g.keep.append(reference._h)
        # the library says "the reference NAME": the reference run's ETDump
        name = next((p for role, p, _f in reference._h.data_ids if role == "ETDump"),
                    "Inspector of etdump_data")
    else:
        p = ctypes.c_void_p()
        _lib.check(lib.npz_open(ctypes.byref(p), _lib.path_arg(reference), ctypes.byref(err)), err)
        g.npz = ref.npz = p.value
        _lib.warn_opened("npz", p.value, stacklevel=4)
        name = os.fspath(reference)
    name_b = os.fsencode(name)  # a path that is not UTF-8 kept as the file system has it
    g.keep.append(name_b)
    ref.name = name_b
    opt = _lib.options("numgap_options", lib.numgap_options_init)
    blk = block.encode()
    opt.block = blk
    dist_code = ctypes.c_int()
    _lib.check(lib.numgap_distance_parse(dist.lower().encode(), ctypes.byref(dist_code)), err)
    opt.distance = dist_code.value
    for k, v in limits.items():
        if v is not None:
            setattr(opt, k, v)
    # issue 12's options, as the CLI's --quant-params, --layout and --force
    if quant is not None:
        qp = _lib.path_arg(quant)
        g.keep.append(qp)
        opt.quant_params = qp
    opt.layout = 0 if layout == "auto" else 1
    opt.force = force
    opt.drop_reference_values = not keep
    p = ctypes.c_void_p()
    _lib.check(lib.numgap_run(ctypes.byref(p), insp._h.insp, ctypes.byref(ref), ctypes.byref(opt),
                              ctypes.byref(err)), err)
    if g.npz:  # a truncated reference .npz: an Error, not zeros compared
        _lib.check_files([_lib.path_arg(reference)])
    g.ng = p.value
    text = _lib.capture(lambda f: _lib.check(lib.report_numgap_json(f, g.ng, ctypes.byref(err)),
                                             err))
    doc = json.loads(text)
    arrays = []
    for i in range(len(doc["rows"])):
        t = lib.numgap_row_tensor(g.ng, i)
        r = lib.numgap_row_reference_tensor(g.ng, i)
        arrays.append((_tensor.as_type(_tensor.tensor_array(t.contents, g) if t else None,
                                       insp._tensor_type, g),
                       _tensor.as_type(_tensor.tensor_array(r.contents, g) if r else None,
                                       insp._tensor_type, g)))
    rows = _upstream_rows(doc, arrays)
    if comparator is not None:
        # self.inspector is this call's Inspector, also for a comparator used
        # before on another Inspector (its get_reference_graph() is this
        # model's); it stays so after the call, as the last one it ran for
        comparator.inspector = insp
        return _custom(comparator, rows, insp._tensor_type)
    attrs = {"first_divergence": next((i for i, r in enumerate(rows)
                                       if r.get("first_divergence")), None),
             "unmatched": doc.get("unmatched", []), "alignment": doc.get("alignment"),
             "notes": list(getattr(g, "notes", []))}
    try:
        import pandas as pd
    except ImportError:
        return GapRows(rows, attrs)
    df = pd.DataFrame(rows)
    df.attrs.update(attrs)
    return df


class GapRows(list):
    """calculate_numeric_gap's rows without pandas: a list of dicts whose
    `attrs` holds what the DataFrame's attrs hold (first_divergence,
    unmatched, alignment, notes)."""

    def __init__(self, rows=(), attrs=None):
        super().__init__(rows)
        self.attrs = dict(attrs or {})


def _custom(comparator, rows, tensor_type):
    """Upstream's path for a comparator: the aligned pairs as its mapping
    {(aot_debug_handle, aot_output): (runtime_debug_handle, runtime_output)},
    the op names by handle, and its compare()."""
    mapping, aot_names, rt_names = {}, {}, {}
    for r in rows:
        aot, rt = r["aot_intermediate_output"], r["runtime_intermediate_output"]
        if isinstance(aot, list):
            aot = [_tensor.hashable(x, tensor_type) for x in aot]
            rt = [_tensor.hashable(x, tensor_type) for x in rt]
            aot, rt = tuple(aot), tuple(rt)
        else:
            aot, rt = _tensor.hashable(aot, tensor_type), _tensor.hashable(rt, tensor_type)
        mapping[(r["aot_debug_handle"], aot)] = (r["runtime_debug_handle"], rt)
        aot_names[r["aot_debug_handle"]] = list(r["aot_ops"])
        rt_names[r["runtime_debug_handle"]] = list(r["runtime_ops"])
    traces = {}
    for r in rows:
        for op, trace in (r.get("stacktraces") or {}).items():
            traces.setdefault(op, trace)
    out = comparator.compare(mapping, aot_names, rt_names)

    def stacktraces(ops):  # upstream's column, added after any comparator's frame
        return {op: traces.get(op) for op in ops}
    if hasattr(out, "columns") and len(out) > 0 and "aot_ops" in out.columns:
        out["stacktraces"] = out["aot_ops"].apply(stacktraces)
    elif isinstance(out, list):
        for row in out:
            if isinstance(row, dict) and "aot_ops" in row:
                row["stacktraces"] = stacktraces(row["aot_ops"])
    return out
