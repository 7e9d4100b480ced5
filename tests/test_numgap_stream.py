"""The numeric gap from the ETRecord's graph without every reference output
kept (etc_numgap_options.drop_reference_values, what the CLI asks for):
each node's outputs are compared with the runtime's as it runs and only
summarized. On the real files (tests/data/realexport) and the bundled
example, through the library (ctypes):

1. the gap's TSV and JSON reports are byte-identical to the gap that keeps
   every reference output (the default, the Python API's);
2. a dropped row gives no reference tensor but a preview: its first values
   are the kept tensor's first values and its summary (min, max, mean, NaN
   count) numpy's of the kept tensor;
3. the rows keep no reference tensor but the first divergence's (the
   first-divergence plots read it) and those read through a layout or a
   dequantization: none of the others when every row passes, the first
   divergence's under a gate that fails them all; the keeping gap keeps
   them all; an int64 preview gives the exact min and max;
4. Inspector.calculate_numeric_gap(keep_reference_values=False) gives the
   same gaps, aot_intermediate_output None but on the first divergence.
5. The same on a MobileNetV2 (bench/gen_mobilenet.py) whose classifier's
   transpose the reference holds as the record's bytes (read through
   strides when streaming), with noise on the runtime's logged permute so
   that its metrics and summary are not trivial.
"""
import ctypes
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402

E = setup()
import numpy as np  # noqa: E402
import common as C  # noqa: E402
from etcompare import _lib, _tensor  # noqa: E402
from etcompare._lib import lib  # noqa: E402
from etcompare._refrun import open_run  # noqa: E402

REAL = os.path.join(C.DATA, "realexport")
EX = os.path.join(C.SRC, "examples")
MODELS = ("mlp", "cnn", "tiny_transformer", "qcnn")


class Summary(ctypes.Structure):
    _fields_ = [("count", ctypes.c_uint64), ("nan_count", ctypes.c_uint64),
                ("inf_count", ctypes.c_uint64), ("min", ctypes.c_double),
                ("max", ctypes.c_double), ("mean", ctypes.c_double)]


def gap(insp, run, drop, min_snr=None):
    ref = _lib.options("numgap_reference", None)
    ref.graph = run.graph
    ref.inputs = run.inputs.tensors
    ref.input_count = run.inputs.count
    opt = _lib.options("numgap_options", lib.numgap_options_init)
    opt.drop_reference_values = drop
    if min_snr is not None:
        opt.min_snr = min_snr
    err = _lib.new_error()
    p = ctypes.c_void_p()
    _lib.check(lib.numgap_run(ctypes.byref(p), insp._h.insp, ctypes.byref(ref),
                              ctypes.byref(opt), ctypes.byref(err)), err)
    return p.value


def reports(ng):
    err = _lib.new_error()
    tsv = _lib.capture(lambda f: _lib.check(lib.report_numgap_tsv(f, ng, ctypes.byref(err)), err))
    js = _lib.capture(lambda f: _lib.check(lib.report_numgap_json(f, ng, ctypes.byref(err)), err))
    return tsv, js


def array(t, owner):
    return np.array(_tensor.tensor_array(t.contents, owner), copy=True).ravel()


def case(label, insp, run):
    for min_snr in (None, 200.0):
        tag = f"{label}{'' if min_snr is None else ' --min-snr 200'}"
        keep = gap(insp, run, False, min_snr)
        drop = gap(insp, run, True, min_snr)
        try:
            tk, jk = reports(keep)
            td, jd = reports(drop)
            check(f"{tag}: TSV identical", tk == td and len(tk) > 0)
            check(f"{tag}: JSON identical", jk == jd and len(jk) > 0)
            n = lib.numgap_row_count(keep)
            first = lib.numgap_first_divergence(drop)
            rows = json.loads(jd)["rows"]
            # kept by design: read after alignment
            late = {i for i, r in enumerate(rows) if r["layout"] or r["quant_source"]}
            kept_keep = kept_drop = previews = wide = 0
            bad = []
            for i in range(n):
                rk = lib.numgap_row_reference_tensor(keep, i)
                rd = lib.numgap_row_reference_tensor(drop, i)
                s = Summary()
                ext = (ctypes.c_uint64 * 2)()
                pv = lib.numgap_row_reference_preview(drop, i, ctypes.byref(s), ext)
                kept_keep += bool(rk)
                kept_drop += bool(rd)
                if rd and i != first and i not in late:
                    bad.append(f"row {i} kept ({rows[i]['reference_dtype']})")
                if not pv:
                    continue
                previews += 1
                if rd or not rk:
                    bad.append(f"row {i}: preview and tensor")
                    continue
                full = array(rk, keep)
                k = min(full.size, 8)
                head = np.ctypeslib.as_array(
                    ctypes.cast(pv.contents.data, ctypes.POINTER(ctypes.c_double)),
                    shape=(k,)) if pv.contents.scalar_type == 7 and k else None
                if head is not None and not np.array_equal(head, full[:k]):
                    bad.append(f"row {i}: first values")
                if full.dtype == np.int64 and full.size:
                    wide += 1
                    if (np.array(ext, dtype=np.uint64).view(np.int64).tolist() !=
                            [full.min(), full.max()]):
                        bad.append(f"row {i}: int64 extremes {list(ext)}")
                if pv.contents.numel != full.size:
                    bad.append(f"row {i}: numel {pv.contents.numel} != {full.size}")
                if full.size:
                    f64 = full.astype(np.float64)
                    fin = f64[~np.isnan(f64)]
                    scale = np.abs(fin).max() if fin.size else 0.0
                    if s.nan_count != f64.size - fin.size or (fin.size and (
                            s.min != fin.min() or s.max != fin.max() or
                            abs(s.mean - fin.mean()) > 1e-12 * scale)):
                        bad.append(f"row {i}: summary {s.min} {s.max} {s.mean} against "
                                   f"{fin.min()} {fin.max()} {fin.mean()}")
            check(f"{tag}: previews match the kept tensors (first values, summary)",
                  not bad, bad[:5])
            check(f"{tag}: the keeping gap keeps its compared rows' tensors",
                  kept_keep > 0 and kept_keep == previews + kept_drop,
                  f"{kept_keep} kept, {previews} previews, {kept_drop} kept when dropping")
            if label in ("cnn", "qcnn"):
                check(f"{tag}: int64 outputs (max_pool2d's indices) previewed", wide > 0)
            if min_snr is None and first < 0:
                check(f"{tag}: no reference tensor kept when every row passes",
                      kept_drop == len(late), f"{kept_drop} kept, {len(late)} by design")
            if min_snr is not None:
                check(f"{tag}: a failing gate keeps the first divergence's tensor alone",
                      first >= 0 and kept_drop == len(late | {first}) and
                      bool(lib.numgap_row_reference_tensor(drop, first)),
                      f"first {first}, {kept_drop} kept, {len(late)} by design")
        finally:
            lib.numgap_free(keep)
            lib.numgap_free(drop)


def transposed():
    d = C.work_dir("numgap_stream_mv2")
    gen = os.path.join(C.SRC, "bench", "gen_mobilenet.py")
    p = subprocess.run([sys.executable, gen, d, "--width", "0.25", "--size", "16",
                        "--classes", "64", "--stem", "t"], capture_output=True, text=True)
    check("gen_mobilenet writes the MobileNetV2 files", p.returncode == 0, p.stderr[-300:])
    if p.returncode:
        return
    rec, dbg = os.path.join(d, "t.etrecord"), os.path.join(d, "t_debug.bin")
    insp = E.Inspector(etdump_path=os.path.join(d, "t.etdp"), debug_buffer_path=dbg,
                       etrecord=rec)
    run = open_run(insp, "Execute", None, "float64", insp._method)
    keep = gap(insp, run, False)
    rows = json.loads(reports(keep)[1])["rows"]
    perm = [i for i, r in enumerate(rows) if r["aot_ops"] == ["aten_permute_copy_default"]]
    w_t = (array(lib.numgap_row_reference_tensor(keep, perm[0]), keep) if len(perm) == 1
           else np.zeros(0, np.float32))
    lib.numgap_free(keep)
    raw = bytearray(open(dbg, "rb").read())
    at = bytes(raw).find(w_t.tobytes()) if w_t.size else -1
    check("the permute (64 x 1280 classifier weight, transposed) is logged by the runtime",
          w_t.dtype == np.float32 and w_t.size == 64 * 1280 and at >= 0)
    if at < 0:
        return
    noisy = w_t + np.random.default_rng(7).normal(0, 1e-4, w_t.size).astype(np.float32)
    raw[at:at + noisy.nbytes] = noisy.tobytes()
    dbg2 = os.path.join(d, "t_debug_noisy.bin")
    with open(dbg2, "wb") as f:
        f.write(raw)
    insp = E.Inspector(etdump_path=os.path.join(d, "t.etdp"), debug_buffer_path=dbg2,
                       etrecord=rec)
    run = open_run(insp, "Execute", None, "float64", insp._method)
    case("mobilenet, transposed weight", insp, run)


def main():
    with C.harness():
        for m in MODELS:
            insp = E.Inspector(etdump_path=os.path.join(REAL, f"{m}.etdp"),
                               debug_buffer_path=os.path.join(REAL, f"{m}_debug.bin"),
                               etrecord=os.path.join(REAL, f"{m}.etrecord"))
            run = open_run(insp, "Execute", None, "float64", insp._method)
            case(m, insp, run)
        insp = E.Inspector(etdump_path=os.path.join(EX, "example.etdp"),
                           debug_buffer_path=os.path.join(EX, "example_debug.bin"),
                           etrecord=os.path.join(EX, "example.etrecord"))
        run = open_run(insp, "Execute", None, "float64", insp._method)
        case("example", insp, run)
        transposed()
        # the Python API's option
        insp = E.Inspector(etdump_path=os.path.join(REAL, "cnn.etdp"),
                           debug_buffer_path=os.path.join(REAL, "cnn_debug.bin"),
                           etrecord=os.path.join(REAL, "cnn.etrecord"))
        a = insp.calculate_numeric_gap("MSE", reference_dtype="float64", min_snr=200)
        b = insp.calculate_numeric_gap("MSE", reference_dtype="float64", min_snr=200,
                                       keep_reference_values=False)
        check("keep_reference_values=False: the same gaps",
              len(a) == len(b) and all(np.array_equal(x, y, equal_nan=True)
                                       for x, y in zip(a["gap"], b["gap"])))
        fd = b.attrs["first_divergence"]
        kept, others = [], []
        for i, v in enumerate(b["aot_intermediate_output"]):
            for x in (v if isinstance(v, list) else [v]):
                if x is not None:
                    (kept if i == fd else others).append((i, str(np.asarray(x).dtype)))
        check("keep_reference_values=False: aot_intermediate_output on the first divergence "
              "alone", fd is not None and kept and not others, (kept, others))
        check("the default keeps every aot_intermediate_output",
              all(v is not None for v in a["aot_intermediate_output"]))
    C.finish()


main()
