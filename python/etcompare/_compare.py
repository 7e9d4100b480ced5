"""Output comparison: upstream's compare_results() at full precision, and
Inspector.compare(), the library's accuracy gate (etcompare/accuracy.h)."""
import ctypes
import math
import os

from . import _lib, _tensor
from ._errors import MismatchError
from ._lib import Error, lib

_ROW_PASS, _ROW_FAIL, _ROW_SHAPE_MISMATCH, _ROW_NO_DATA = 0, 1, 4, 6  # etc_row_status
_PAIR = {"auto": 0, "index": 1, "order": 2, "all": 3, "content": 4}
_METRICS = {"snr": "snr_db", "mse": "mse", "cosine_similarity": "cosine"}


def _flat(x):
    """A tensor-like (numpy array, torch tensor, list, scalar) as float64
    numpy data, flattened, C-contiguous."""
    np = _tensor._np()
    if hasattr(x, "detach"):  # torch.Tensor without importing torch
        x = x.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1))


def metrics_of(reference, actual):
    """The library's metrics (etc_metrics) of `actual` against `reference`."""
    r, a = _flat(reference), _flat(actual)
    vr, va, m = _lib.Values(), _lib.Values(), _lib.Metrics()
    dp = ctypes.POINTER(ctypes.c_double)
    lib.values_from_doubles(ctypes.byref(vr), r.ctypes.data_as(dp), r.size)
    lib.values_from_doubles(ctypes.byref(va), a.ctypes.data_as(dp), a.size)
    err = _lib.new_error()
    _lib.check(lib.metrics_compare(ctypes.byref(vr), ctypes.byref(va), ctypes.byref(m),
                                   ctypes.byref(err)), err)
    return m


def _wanted(metrics):
    """The metric names of compare_results(metrics=): None for all, one
    name, or a list of names; an unknown name is an Error naming the valid
    ones (a typo such as "cosine" silently dropped the metric)."""
    if metrics is None:
        return list(_METRICS)
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        names = list(metrics)
    except TypeError:
        raise TypeError("compare_results: metrics must be a list of names (snr, mse, "
                        f"cosine_similarity) or one name, not {metrics!r}") from None
    bad = [m for m in names if not isinstance(m, str) or m not in _METRICS]
    if bad:
        raise Error(f"compare_results: unknown metric {bad[0]!r} in metrics=: give any of "
                    + ", ".join(_METRICS), "usage error")
    return [k for k in _METRICS if k in names]


def compare_results(reference_output, run_output, metrics=None, plot=False, plot_dir=None):
    """Upstream's compare_results: each pair of outputs compared, returned as
    {"snr": [...], "mse": [...], "cosine_similarity": [...]}, one value per
    output, at full precision (upstream rounds to 2 decimals). An output
    with a NaN element (on either side) gets NaN for every metric, as
    upstream's torch arithmetic gives (Inspector.compare() leaves out NaN
    at the same place on both sides, and fails the output for NaN on one
    side only).

    plot=True draws the CLI's accuracy plots through the library into
    `plot_dir` (default: a new temporary directory): a bar chart per metric
    (one bar per output), an error histogram per output (gnuplot) and a heat
    map of |run - reference| for every output of two or more dimensions;
    the PNG paths are returned under the extra key "plots". Without plot,
    each metric's values are printed as upstream prints them (the name, a
    rule of 20 "-", one "index value" line per output)."""
    wanted = _wanted(metrics)
    out = _metrics(reference_output, run_output, wanted)
    if plot:
        out["plots"] = _plots(reference_output, run_output, out, plot_dir)
        return out
    for name in wanted:
        print(name)
        print("-" * 20)
        for index, value in enumerate(out[name]):
            print(f"{index:<5}{value:>8.5f}")
        print("\n")
    return out


def quiet_compare_results(reference_output, run_output, metrics=None):
    """compare_results(plot=False) without its printout (for the batch
    reports, whose standard output is JSON lines)."""
    return _metrics(reference_output, run_output, _wanted(metrics))


def _metrics(reference_output, run_output, wanted):
    out = {k: [] for k in wanted}
    if not isinstance(reference_output, (list, tuple)):
        reference_output = [reference_output]
    if not isinstance(run_output, (list, tuple)):
        run_output = [run_output]
    if len(reference_output) != len(run_output):
        raise Error(f"compare_results: {len(reference_output)} reference outputs but "
                    f"{len(run_output)} run outputs", "mismatch")
    for ref, res in zip(reference_output, run_output):
        m = metrics_of(ref, res)
        # the library's metrics leave out NaN positions (compare() fails the
        # one-sided ones); upstream's torch.mean((a - b) ** 2) and the others
        # are NaN wherever either side has a NaN, and a partly NaN output
        # must not score better than a fully NaN one
        has_nan = m.nan_count > 0
        for k in wanted:
            out[k].append(math.nan if has_nan else getattr(m, _METRICS[k]))
    return out


class _Acc(_lib.Owner):
    _what, _fix = "a compare() result's library objects", "call compare() again"

    def __init__(self):
        self.acc = self.ts = self.npz = None
        self.keep = []

    def __del__(self):
        if lib is None:
            return
        lib.accuracy_free(self.acc)
        lib.torchsave_free(self.ts)
        lib.npz_free(self.npz)


_METRIC_FIELDS = ("count", "snr_db", "mse", "cosine", "l1", "max_abs", "max_rel", "max_abs_index",
                  "nan_count", "nan_mismatch_count", "mismatch_count", "identical", "exact")


class AccuracyResult(_lib.View):
    """The outcome of Inspector.compare(): `passed` (every output paired and
    within the thresholds), `rows` (one dict per output pair), `failures`,
    `worst` (the row with the lowest SNR) and str() the CLI's grid."""
    _what = "a compare() result (AccuracyResult)"
    _fix = "its rows, passed and failures are plain values: copy or pickle those"

    def __init__(self, owner, insp):
        self._o, self._insp = owner, insp
        acc = owner.acc
        self.rows = []
        for i in range(lib.accuracy_row_count(acc)):
            r = lib.accuracy_row_at(acc, i).contents
            b = lib.inspector_block(insp._h.insp, r.block).contents
            unpaired = r.etdump_run == 0xFFFFFFFF  # a reference no run used (CLI: null)
            row = {"block": b.name.text(), "run": None if unpaired else r.run,
                   "etdump_run": None if unpaired else r.etdump_run,
                   "reference": r.reference if r.reference >= 0 else None, "output": r.output,
                   "shape": _lib.cstr(r.shape), "reference_shape": _lib.cstr(r.reference_shape),
                   "dtype": _lib.cstr(r.dtype), "reference_dtype": _lib.cstr(r.reference_dtype),
                   "status": _lib.cstr(lib.row_status_str(r.status)),
                   "reason": _lib.cstr(r.reason)}
            # every row has every key: None where the pair was not compared
            # (a missing output, a shape mismatch; `status` and `reason` say why)
            row.update({("snr" if k == "snr_db" else k): getattr(r.metrics, k)
                        if r.has_metrics else None for k in _METRIC_FIELDS})
            self.rows.append(row)
        self.failures = lib.accuracy_failures(acc)
        self.passed = self.failures == 0 and bool(self.rows)
        w = lib.accuracy_worst(acc)
        self.worst = self.rows[w] if w >= 0 else None
        self.pairing = _lib.cstr(lib.accuracy_pair_note(acc))

    def __bool__(self):
        return self.passed

    def __str__(self):
        err = _lib.new_error()
        return _lib.capture(lambda f: _lib.check(
            lib.report_accuracy(f, self._o.acc, self._insp._h.insp, 0x1 | 0x2 | 0x4 | 0x10,
                                ctypes.byref(err)), err))

    def __repr__(self):
        return (f"AccuracyResult(passed={self.passed}, outputs={len(self.rows)}, "
                f"failures={self.failures})")


def _another_program(acc, insp):
    """The CLI's check of reference outputs of another program (etcompare.c,
    check_references): not one output could be compared, and some have a
    shape that fits no reference. The message naming both files, else None."""
    n = lib.accuracy_row_count(acc)
    bad = None
    for i in range(n):
        r = lib.accuracy_row_at(acc, i).contents
        if r.has_metrics or r.status in (_ROW_PASS, _ROW_FAIL, _ROW_NO_DATA):
            return None
        if bad is None and r.status == _ROW_SHAPE_MISMATCH:
            bad = (r.run, r.output, _lib.cstr(r.shape), _lib.cstr(r.reference_shape))
    if bad is None:
        return None
    dump = _lib.cstr(lib.etdump_name(insp._h.etdump))
    return (f"ETDump {dump} and {_lib.cstr(lib.accuracy_reference_source(acc))} do not belong "
            f"together: none of the {n} outputs can be compared (first: run {bad[0]} output "
            f"{bad[1]}: shape {bad[2]} against reference {bad[3]}); give the reference outputs "
            "of this program (reference=, or an ETRecord with reference_outputs)")


def accuracy(insp, reference, thresholds, block, method, pair_by, force):
    thresholds = {k: _lib.threshold(k, v) for k, v in thresholds.items()}
    h = insp._h
    if not h.buf:
        raise Error("compare() needs the debug buffer (debug_buffer_path=...): the outputs' "
                    "values are there", "usage error")
    o = _Acc()
    o.keep.append(h)
    err = _lib.new_error()
    refs = _lib.options("reference_set", None)
    if reference is not None:
        path = os.fspath(reference)
        p = ctypes.c_void_p()
        if path.endswith((".npz", ".npy")):
            _lib.check(lib.npz_open(ctypes.byref(p), _lib.path_arg(path), ctypes.byref(err)), err)
            o.npz = refs.npz = p.value
            _lib.warn_opened("npz", p.value, stacklevel=4)
        else:
            _lib.check(lib.torchsave_open(ctypes.byref(p), _lib.path_arg(path), ctypes.byref(err)),
                       err)
            o.ts = refs.torchsave = p.value
            _lib.warn_opened("torchsave", p.value, stacklevel=4)
        name = path.encode()
    elif h.etrecord and lib.etrecord_reference_outputs(h.etrecord):
        refs.torchsave = lib.etrecord_reference_outputs(h.etrecord)
        name = b"ETRecord reference_outputs"
    else:
        raise Error("compare() needs reference outputs: reference=FILE (.npz or torch.save) or "
                    "an ETRecord that has them", "usage error")
    o.keep.append(name)
    refs.name = name
    opt = _lib.options("accuracy_options", lib.accuracy_options_init)
    blk = block.encode()
    meth = method.encode() if method else None
    o.keep += [blk, meth]
    opt.block = blk
    if meth:
        opt.method = meth
    if pair_by not in _PAIR:
        raise Error(f"pair_by must be auto, index, order, content or all, not '{pair_by}'",
                    "usage error")
    opt.pair_by = _PAIR[pair_by]
    for k, v in thresholds.items():
        if v is not None:
            setattr(opt, k, v)
    p = ctypes.c_void_p()
    _lib.check(lib.accuracy_run(ctypes.byref(p), h.insp, ctypes.byref(refs), ctypes.byref(opt),
                                ctypes.byref(err)), err)
    o.acc = p.value
    wrong = _another_program(o.acc, insp)
    if wrong:
        if not force:
            raise MismatchError(wrong + " (or force=True to compare anyway)", "mismatch",
                                os.fsdecode(path) if reference is not None else "")
        import warnings
        warnings.warn(wrong + " (force=True: compared anyway)", stacklevel=4)
    return AccuracyResult(o, insp)


def _plots(reference_output, run_output, values, plot_dir):
    """The plots as a plot set of the library's (etc_plot_set_begin /
    commit), as the CLI's --plot DIR: made in a temporary folder inside
    `plot_dir`, then moved in whole; a file of the same name that the
    folder's index.txt does not name (not written by etcompare) is never
    replaced (etcompare.Error naming it, nothing moved), and the plots of the
    previous set that this one did not make again are removed."""
    import tempfile

    import numpy as np
    if not isinstance(reference_output, (list, tuple)):
        reference_output = [reference_output]
    if not isinstance(run_output, (list, tuple)):
        run_output = [run_output]
    if plot_dir is None:
        plot_dir = tempfile.mkdtemp(prefix="etcompare_")
    elif not isinstance(plot_dir, (str, bytes, os.PathLike)):
        raise TypeError(f"compare_results: plot_dir must be a path (str, bytes or "
                        f"os.PathLike), not {plot_dir!r}")
    dir_b = _lib.path_arg(plot_dir)  # bytes and paths that are not UTF-8 as they are
    err = _lib.new_error()
    batch = ctypes.c_void_p()
    _lib.check(lib.plot_batch_create(ctypes.byref(batch), ctypes.byref(err)), err)
    tmp = ctypes.c_void_p()
    keep = []
    try:
        _lib.check(lib.plot_set_begin(batch, dir_b, ctypes.byref(tmp), ctypes.byref(err)), err)
        opt = _lib.PlotOptions()
        opt.dir = ctypes.cast(tmp, ctypes.c_char_p).value
        opt.batch = batch
        res = _lib.PlotResult()
        n = len(reference_output)
        labels = (ctypes.c_char_p * n)(*[f"output {i}".encode() for i in range(n)])
        for key, vals in values.items():
            arr = (ctypes.c_double * n)(*[float(v) for v in vals])
            _lib.check(lib.plot_bars(ctypes.byref(opt), key.encode(), key.encode(), key.encode(),
                                     n, labels, arr, ctypes.byref(res), ctypes.byref(err)), err)
        for i, (ref, run) in enumerate(zip(reference_output, run_output)):
            r = np.asarray(ref.detach().cpu().numpy() if hasattr(ref, "detach") else ref,
                           np.float64)
            a = np.asarray(run.detach().cpu().numpy() if hasattr(run, "detach") else run,
                           np.float64)
            e = np.ascontiguousarray((a - r.reshape(a.shape)).ravel())
            if not e.size:
                continue
            dp = ctypes.POINTER(ctypes.c_double)
            _lib.check(lib.plot_histogram(ctypes.byref(opt), f"error_{i}".encode(),
                                          f"output {i}: run - reference".encode(),
                                          e.ctypes.data_as(dp), e.size, 0, ctypes.byref(res),
                                          ctypes.byref(err)), err)
            if a.ndim >= 2:
                ab = np.ascontiguousarray(np.abs(e))

                def read(_ctx, first, count, dst, _err, ab=ab):
                    ctypes.memmove(dst, ab.ctypes.data + first * 8, count * 8)
                    return 0
                fn = _lib.PlotReadFn(read)
                keep.append(fn)
                _lib.check(lib.plot_error_map(ctypes.byref(opt), f"heatmap_{i}".encode(),
                                              f"output {i}: |run - reference|".encode(), None,
                                              None, None, fn, None, a.size // a.shape[-1],
                                              a.shape[-1], ctypes.byref(res),
                                              ctypes.byref(err)), err)
        _lib.check(lib.plot_batch_run(batch, ctypes.byref(opt), ctypes.byref(res),
                                      ctypes.byref(err)), err)
        _lib.check(lib.plot_batch_write_index(batch, tmp, ctypes.byref(err)), err)
        try:
            _lib.check(lib.plot_set_commit(batch, tmp, dir_b, ctypes.byref(err)), err)
        except Error as e:  # the library's words are the CLI's
            raise type(e)(e.message.replace("give --plot another folder",
                                            "give plot_dir= another folder"),
                          e.status, e.file, e.offset) from None
        written = []
        for k in range(lib.plot_batch_count(batch)):
            item = lib.plot_batch_item(batch, k).contents
            if item.made and item.png:
                written.append(item.png if isinstance(os.fspath(plot_dir), bytes)
                               else os.fsdecode(item.png))
    finally:
        if tmp.value:
            lib.plot_set_discard(tmp)
            _lib.libc.free(tmp)
        lib.plot_batch_free(batch)
    if res.gnuplot_missing:
        import warnings
        warnings.warn("gnuplot not found: the .gp and .dat files are written, the bar charts "
                      "and histograms have no PNG", stacklevel=3)
    return sorted(p for p in written if os.path.exists(p))
