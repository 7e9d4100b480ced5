"""The Python package against a hostile user (third pass, findings of
/work/wt/pyfix3_findings.md): upstream's numbers where elements are NaN on
one side only (compare_results, the numeric gap's `gap`)."""
import math
import os
import shutil
import sys
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
warnings.filterwarnings("ignore", "Output Buffer not found")
RX = os.path.join(C.DATA, "realexport")
FILES = ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "mlp_io.npz", "mlp.bpte",
         "cnn.etdp", "cnn_debug.bin", "cnn.etrecord", "qcnn.etdp", "qcnn_debug.bin",
         "qcnn.etrecord", "cnn_io.npz")


def nan_compare_results(d):
    """Finding 6: a partly NaN run output is NaN (upstream's torch.mean of
    (a - b) ** 2 and the others), not a perfect inf / 0 / 1."""
    import numpy as np
    ref = np.arange(1, 9, dtype=np.float32)
    half = ref.copy()
    half[:4] = np.nan
    one = ref.copy()
    one[0] = np.nan
    for name, run in (("half NaN", half), ("one NaN", one)):
        got = E.compare_results(ref, run)
        check(f"compare_results, run {name} on one side: snr, mse and cosine are NaN",
              all(math.isnan(got[k][0]) for k in ("snr", "mse", "cosine_similarity")), got)
        got = E.compare_results(run, ref)
        check(f"compare_results, reference {name} on one side: NaN too",
              all(math.isnan(got[k][0]) for k in ("snr", "mse", "cosine_similarity")), got)
    got = E.compare_results([ref, ref], [ref + 1e-3, one])
    check("compare_results: only the output with one-sided NaN is NaN",
          not math.isnan(got["snr"][0]) and math.isnan(got["snr"][1]) and
          got["mse"][0] > 0, got)
    got = E.compare_results(half, half)
    check("compare_results: NaN at the same places on both sides is NaN too (upstream's "
          "torch.mean over every element)",
          all(math.isnan(got[k][0]) for k in ("snr", "mse", "cosine_similarity")), got)
    insp_like = E.compare_results(ref, ref)
    check("compare_results: without NaN, identical outputs: inf, 0, 1",
          insp_like["snr"][0] == math.inf and insp_like["mse"][0] == 0.0, insp_like)


def nan_gap(d):
    """Finding 7: the numeric gap's `gap` (upstream's column) is NaN where
    elements are NaN on one side only, as upstream's comparators give;
    etcompare's own columns keep the NaN-free numbers and the FAIL."""
    import numpy as np
    x = np.load(os.path.join(d, "mlp_io.npz"))["input0"].copy()
    x[0, 0] = np.nan
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                       etrecord=os.path.join(d, "mlp.etrecord"), inputs=[x])
    for dist, col in (("SNR", "snr"), ("MSE", "mse"), ("L1", "l1")):
        for keep in (True, False):
            df = insp.calculate_numeric_gap(dist, keep_reference_values=keep)
            rows = df.to_dict("records") if hasattr(df, "to_dict") else list(df)
            one = [r for r in rows if "NaN on one side only" in str(r["reason"])]
            other = [r for r in rows if r not in one]
            check(f"{dist} keep={keep}: rows with one-sided NaN have gap NaN",
                  one and all(math.isnan(g) for r in one for g in r["gap"]),
                  [(r["aot_ops"], r["gap"]) for r in rows])
            check(f"{dist} keep={keep}: ... and keep their NaN-free {col} and status FAIL",
                  all(math.isfinite(r[col]) and r["status"] == "FAIL" for r in one),
                  [(r[col], r["status"]) for r in one])
            check(f"{dist} keep={keep}: the other rows' gap is a number",
                  other and all(not math.isnan(g) for r in other for g in r["gap"]),
                  [(r["aot_ops"], r["gap"]) for r in other])


def chdir(d):
    """Finding 10: relative path keywords are made absolute at construction,
    so an os.chdir later changes nothing (it opened another folder's
    inputs.npz and model.bpte, and called the ETRecord changed)."""
    import numpy as np
    a, b = os.path.join(d, "a"), os.path.join(d, "b")
    for sub, m in ((a, "mlp"), (b, "cnn")):
        os.makedirs(sub)
        for suf in (".etdp", "_debug.bin", ".etrecord", ".bpte"):
            shutil.copy(os.path.join(RX, m + suf), os.path.join(sub, "model" + suf))
    x = np.load(os.path.join(d, "mlp_io.npz"))["input0"]
    np.savez(os.path.join(a, "inputs.npz"), **{"0": x})
    np.savez(os.path.join(b, "inputs.npz"),
             **{"0": np.random.RandomState(0).randn(*x.shape).astype(x.dtype)})
    here = os.getcwd()
    try:
        os.chdir(a)
        made = {
            "str": E.Inspector(etdump_path="model.etdp", debug_buffer_path="model_debug.bin",
                               etrecord="model.etrecord", bundled_program="model.bpte"),
            "bytes": E.Inspector(etdump_path=b"model.etdp", debug_buffer_path=b"model_debug.bin",
                                 etrecord=b"model.etrecord", bundled_program=b"model.bpte"),
            "ETRecord": E.Inspector(etdump_path="model.etdp", debug_buffer_path="model_debug.bin",
                                    etrecord=E.ETRecord("model.etrecord"), inputs="inputs.npz"),
            "inputs bytes": E.Inspector(etdump_path="model.etdp",
                                        debug_buffer_path="model_debug.bin",
                                        etrecord="model.etrecord", inputs=b"inputs.npz"),
        }
        rec = E.ETRecord("model.etrecord")
        before = {k: list(i.calculate_numeric_gap("SNR")["gap"]) for k, i in made.items()}
        os.chdir(b)
        for k, i in made.items():
            try:
                after = list(i.calculate_numeric_gap("SNR")["gap"])
            except Exception as e:
                after = repr(e)
            check(f"{k} paths: the numeric gap after os.chdir is the one before",
                  after == before[k], f"{before[k]} -> {after}")
            try:
                text = str(i.get_exported_program())
            except Exception as e:
                text = repr(e)
            check(f"{k} paths: get_exported_program() after os.chdir prints the program",
                  "GraphModule" in text and "changed" not in text, text[:300])
        try:
            text = str(rec.get_exported_program())
        except Exception as e:
            text = repr(e)
        check("etcompare.ETRecord(relative): its program prints after os.chdir",
              "GraphModule" in text, text[:300])
        check("etcompare.ETRecord(relative): repr names the absolute path",
              os.path.join(a, "model.etrecord") in repr(rec), repr(rec))
    finally:
        os.chdir(here)


def comparator_reuse(d):
    """Finding 8: one comparator instance used for two Inspectors:
    self.inspector is replaced by the Inspector of each call (its
    get_reference_graph() is that model's), and stays it after the call."""
    import numpy as np

    class Seen(E.NumericalComparatorBase):
        def element_compare(self, a, b):
            self.seen.add(os.path.basename(self.inspector._h.etrecord_path))
            self.graphs.add(len(self.inspector.get_reference_graph().nodes))
            return float(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))

    cmp_ = Seen()
    insps = {m: E.Inspector(etdump_path=os.path.join(d, m + ".etdp"),
                            debug_buffer_path=os.path.join(d, m + "_debug.bin"),
                            etrecord=os.path.join(d, m + ".etrecord")) for m in ("mlp", "qcnn")}
    nodes = {m: len(i.get_reference_graph().nodes) for m, i in insps.items()}
    for m in ("mlp", "qcnn", "mlp"):
        cmp_.seen, cmp_.graphs = set(), set()
        insps[m].calculate_numeric_gap(distance=cmp_)
        check(f"{m}: the comparator's self.inspector is {m}'s Inspector",
              cmp_.seen == {m + ".etrecord"}, cmp_.seen)
        check(f"{m}: ... and get_reference_graph() is {m}'s graph",
              cmp_.graphs == {nodes[m]}, f"{cmp_.graphs} vs {nodes[m]}")
        check(f"{m}: after the call the comparator's inspector is still {m}'s (the last)",
              cmp_.inspector is insps[m], cmp_.inspector)
    mine = Seen(inspector=insps["mlp"])
    mine.seen, mine.graphs = set(), set()
    insps["qcnn"].calculate_numeric_gap(distance=mine)
    check("a comparator made with inspector=mlp, used on qcnn: qcnn's during the call",
          mine.seen == {"qcnn.etrecord"}, mine.seen)
    check("... and qcnn's after it", mine.inspector is insps["qcnn"], mine.inspector)


def rewritten(d):
    """Finding 9: a debug buffer or ETDump rewritten in place (same inode,
    new size or mtime) between two calls is an Error naming the file, as
    a replaced ETRecord is; deleted or replaced by a rename it is not (the
    mapping still holds the file as opened)."""
    import time
    import numpy as np

    def insp():
        return E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                           debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                           etrecord=os.path.join(d, "mlp.etrecord"))

    def outcome(fn):
        try:
            fn()
            return "ok"
        except E.Error as e:
            return str(e)

    buf = os.path.join(d, "mlp_debug.bin")
    raw = np.fromfile(buf, dtype=np.uint8)
    f32 = raw[: raw.size // 4 * 4].view(np.float32).copy()
    ok = np.isfinite(f32) & (np.abs(f32) > 1e-30) & (np.abs(f32) < 1e30)
    f32[ok] *= 1.01
    other = raw.copy()
    other[: raw.size // 4 * 4] = f32.view(np.uint8)

    i = insp()
    before = list(i.calculate_numeric_gap("SNR")["gap"])
    ino = os.stat(buf).st_ino
    time.sleep(0.05)  # past the file system's time stamp granularity
    with open(buf, "r+b") as f:  # in place: same inode, same size
        f.write(other.tobytes())
    check("the rewrite kept the inode", os.stat(buf).st_ino == ino)
    for what, fn in (("calculate_numeric_gap", lambda: i.calculate_numeric_gap("SNR")),
                     ("compare", lambda: i.compare()),
                     ("debug_data", lambda: i.event_blocks[1].events[1].debug_data)):
        got = outcome(fn)
        check(f"debug buffer rewritten in place: {what} raises 'changed since it was opened' "
              "naming the file", buf in got and "changed since it was opened" in got, got)
    j = insp()
    check("a new Inspector on the rewritten buffer reads it without an error",
          outcome(lambda: j.calculate_numeric_gap("SNR")) == "ok")

    etdp = os.path.join(d, "mlp.etdp")
    i = insp()
    data = open(etdp, "rb").read()
    time.sleep(0.05)
    with open(etdp, "wb") as f:  # cp over it: O_TRUNC then write
        f.write(data)
    got = outcome(lambda: i.event_blocks)
    check("ETDump rewritten in place: event_blocks raises naming it",
          etdp in got and "ETDump changed since it was opened" in got, got)
    got = outcome(lambda: i.print_data_tabular(file=open(os.devnull, "w")))
    check("... print_data_tabular too", etdp in got and "changed since" in got, got)

    i = insp()
    before = list(i.calculate_numeric_gap("SNR")["gap"])
    os.unlink(buf)
    got = outcome(lambda: i.calculate_numeric_gap("SNR"))
    check("a deleted debug buffer is not 'changed': the gap still works", got == "ok", got)
    shutil.copy(os.path.join(RX, "mlp_debug.bin"), buf)
    i = insp()
    before = list(i.calculate_numeric_gap("SNR")["gap"])
    tmp = os.path.join(d, "new.bin")
    other.tofile(tmp)
    time.sleep(0.05)
    os.replace(tmp, buf)
    try:
        after = list(i.calculate_numeric_gap("SNR")["gap"])
    except E.Error as e:
        after = str(e)
    check("a debug buffer replaced by a rename is not 'changed': the mapped file's numbers",
          after == before, f"{before} -> {after}")


def self_reference(d):
    """Finding 12: reference= that is the run itself (the same Inspector, or
    one of the same ETDump and debug buffer, also through a link) warns
    that every op compares equal; a real reference run does not."""
    def insp(etdp="mlp.etdp", buf="mlp_debug.bin"):
        return E.Inspector(etdump_path=os.path.join(d, etdp),
                           debug_buffer_path=os.path.join(d, buf),
                           etrecord=os.path.join(d, "mlp.etrecord"))

    os.link(os.path.join(d, "mlp.etdp"), os.path.join(d, "link.etdp"))
    os.symlink(os.path.join(d, "mlp_debug.bin"), os.path.join(d, "link_debug.bin"))
    shutil.copy(os.path.join(d, "mlp_debug.bin"), os.path.join(d, "copy_debug.bin"))
    i = insp()
    for what, ref, warned in (("reference=insp", i, True),
                              ("another Inspector of the same files", insp(), True),
                              ("the same files through a hard and a symbolic link",
                               insp("link.etdp", "link_debug.bin"), True),
                              ("the same ETDump with a copy of the buffer",
                               insp("mlp.etdp", "copy_debug.bin"), False)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            i.calculate_numeric_gap("SNR", reference=ref)
        msgs = [str(x.message) for x in w if "reference= is this run itself" in str(x.message)]
        if warned:
            check(f"{what}: a warning says the reference is the run itself and names its files",
                  len(msgs) == 1 and os.path.join(d, "mlp.etdp") in msgs[0] and
                  "every op compares equal" in msgs[0], [str(x.message) for x in w])
            check(f"{what}: the warning points at the caller's line",
                  all(x.filename == __file__ for x in w
                      if "reference= is this run itself" in str(x.message)),
                  [x.filename for x in w])
        else:
            check(f"{what}: no such warning", not msgs, msgs)


def reference_name(d):
    """Finding 20: a reference Inspector of another model is named by its
    ETDump ("the reference /.../qcnn.etdp"), not "the reference reference
    inspector"."""
    cnn = E.Inspector(etdump_path=os.path.join(d, "cnn.etdp"),
                      debug_buffer_path=os.path.join(d, "cnn_debug.bin"),
                      etrecord=os.path.join(d, "cnn.etrecord"))
    q = E.Inspector(etdump_path=os.path.join(d, "qcnn.etdp"),
                    debug_buffer_path=os.path.join(d, "qcnn_debug.bin"),
                    etrecord=os.path.join(d, "qcnn.etrecord"))
    try:
        cnn.calculate_numeric_gap("SNR", reference=q)
        msg = "no error"
    except E.MismatchError as e:
        msg = str(e)
    check("reference=Inspector of another model: the message names its ETDump, once",
          "the reference " + os.path.join(d, "qcnn.etdp") in msg and
          "reference reference" not in msg, msg)


def other_model_reference(d):
    """Finding 14: reference outputs of another model in compare() are a
    MismatchError naming both files, as the CLI's exit 3 "do not belong
    together" (it was a plain passed=False, a model regression in a gate);
    force=True (compare's or the Inspector's) makes it a warning."""
    def mlp(**kw):
        return E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                           debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                           etrecord=os.path.join(d, "mlp.etrecord"), **kw)
    other = os.path.join(d, "cnn_io.npz")
    try:
        mlp().compare(reference=other, min_snr=30)
        msg = "no error"
    except E.MismatchError as e:
        msg = str(e)
    check("compare(reference=another model's outputs): MismatchError naming both files and "
          "force=True", os.path.join(d, "mlp.etdp") in msg and other in msg and
          "do not belong together" in msg and "force=True" in msg, msg)
    for name, insp, kw in (("compare(force=True)", mlp(), {"force": True}),
                           ("Inspector(force=True)", mlp(force=True), {})):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            res = insp.compare(reference=other, min_snr=30, **kw)
        check(f"{name}: a warning naming the files, the result (not passed)",
              not res.passed and any("do not belong together" in str(x.message) and
                                     other in str(x.message) for x in w),
              [str(x.message)[:200] for x in w])
    try:
        mlp().compare(reference=other, force="yes")
        msg = "no error"
    except TypeError as e:
        msg = str(e)
    check("compare(force='yes'): TypeError naming force", "force" in msg, msg)
    res = mlp().compare(min_snr=30)
    check("compare() against the ETRecord's own reference outputs: no error, passed",
          res.passed, repr(res))


def converter_module(d):
    """Finding 13: find_total_for_module with a delegate_time_scale_converter
    resolves the name as without one (the library's path, key, type, then
    part of a key): on a model with no delegated event the totals are the
    same, and an unknown name is still a MismatchError (it was upstream's
    substring loop: "Linear" 0.0, a typo 0.0)."""
    kw = dict(etdump_path=os.path.join(d, "mlp.etdp"),
              debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
              etrecord=os.path.join(d, "mlp.etrecord"))
    a = E.Inspector(**kw)
    b = E.Inspector(**kw, delegate_time_scale_converter=lambda name, t: t / 1e6)
    check("mlp has no delegated event",
          not any(e.is_delegated_op for blk in a.event_blocks for e in blk.events))
    for name in ("fc1", "Linear", "MLP", "fc", "L__self___fc1"):
        x, y = a.find_total_for_module(name), b.find_total_for_module(name)
        check(f"find_total_for_module({name!r}): the same with a converter", x > 0 and x == y,
              (x, y))
    for insp, how in ((a, "without"), (b, "with")):
        try:
            got = insp.find_total_for_module("nonexistent")
        except E.MismatchError as e:
            got = str(e)
        check(f"find_total_for_module('nonexistent') {how} a converter: MismatchError with "
              "close names", isinstance(got, str) and "the closest" in got, got)


def str_keywords(d):
    """Finding 17: keywords that take a str raise a TypeError naming the
    keyword for bytes, a number or None (it was AttributeError 'encode' from
    inside the package); strict="no" is refused as force="no" is (it meant
    True); method=0 is refused (it meant the default method); a NUL in a
    name is refused (finding 26: "fc1\\0zz" gave fc1's total)."""
    kw = dict(etdump_path=os.path.join(d, "mlp.etdp"),
              debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
              etrecord=os.path.join(d, "mlp.etrecord"))
    i = E.Inspector(**kw)
    cases = [("method", lambda: E.Inspector(**kw, method=b"forward")),
             ("method", lambda: E.Inspector(**kw, method=0)),
             ("strict", lambda: E.Inspector(**kw, strict="no")),
             ("graph", lambda: i.get_exported_program(5)),
             ("graph", lambda: i.get_exported_program(b"forward")),
             ("block", lambda: i.calculate_numeric_gap(block=None)),
             ("block", lambda: i.calculate_numeric_gap(block=b"Execute")),
             ("reference_graph", lambda: i.calculate_numeric_gap(reference_graph=5)),
             ("block", lambda: i.compare(block=None)),
             ("method", lambda: i.compare(method=5)),
             ("module_name", lambda: i.find_total_for_module(b"fc1"))]
    for word, fn in cases:
        try:
            fn()
            got = "no error"
        except TypeError as e:
            got = str(e)
        except Exception as e:
            got = f"{type(e).__name__}: {e}"
        check(f"{word} of the wrong type: TypeError naming it", f"{word} must be" in got, got)
    try:
        i.find_total_for_module("fc1\0zz")
        got = "no error"
    except E.Error as e:
        got = str(e)
    check("find_total_for_module('fc1\\0zz'): an error naming the NUL, not fc1's total",
          "NUL" in got, got)
    import numpy as np
    check("strict=True, numpy.bool_ and method='forward' still work",
          E.Inspector(**kw, strict=np.bool_(True), method="forward")._strict is True and
          i.compare(method="forward").rows and i.get_exported_program("forward") is not None)


def etrecord_unknown_graph(d):
    """Finding 23: etcompare.ETRecord.get_exported_program("nope") returns
    None with a logged warning listing the record's methods and graphs, as
    Inspector.get_exported_program and upstream's graph_map.get (it raised
    "it has: none" for a record with method forward)."""
    import logging

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__()
            self.records = []

        def emit(self, record):
            self.records.append(record.getMessage())
    keep = Keep()
    log = logging.getLogger("etcompare")
    log.addHandler(keep)
    try:
        rec = E.ETRecord(os.path.join(d, "mlp.etrecord"))
        got = rec.get_exported_program("nope")
    finally:
        log.removeHandler(keep)
    check("ETRecord.get_exported_program('nope'): None, a warning listing 'forward'",
          got is None and any("'nope'" in m and "forward" in m for m in keep.records),
          (got, keep.records))
    check("ETRecord.get_exported_program('forward') and (): the Edge program",
          rec.get_exported_program("forward").nodes and rec.get_exported_program().nodes)
    try:
        rec.get_exported_program(5)
        msg = "no error"
    except TypeError as e:
        msg = str(e)
    check("ETRecord.get_exported_program(5): TypeError naming graph", "graph must be" in msg, msg)


def deleted_etrecord(d):
    """Finding 21: an ETRecord deleted after the Inspector (or an
    etcompare.ETRecord) opened it is not "replaced or rewritten": the
    program is read from the mapping of the file opened, and prints."""
    rec = os.path.join(d, "del.etrecord")
    shutil.copy(os.path.join(d, "mlp.etrecord"), rec)
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"), etrecord=rec)
    r = E.ETRecord(rec)
    want = str(E.ETRecord(os.path.join(d, "mlp.etrecord")).get_exported_program())
    ep = i.get_exported_program()
    os.unlink(rec)
    for who, fn in (("Inspector", lambda: str(ep)),
                    ("Inspector, a new get_exported_program()",
                     lambda: str(i.get_exported_program())),
                    ("etcompare.ETRecord", lambda: str(r.get_exported_program()))):
        try:
            got = fn()
        except E.Error as e:
            got = str(e)
        check(f"{who}: the ETRecord deleted, str() is the program opened",
              "ExportedProgram" in want and got == want, got[:300])


def messages(d):
    """Finding 22: etdump_data=5 is a TypeError naming the keyword (bytes(5)
    made 5 NULs: "file of 5 bytes"); etdump_path="" names the keyword; a bare
    array or a dict for inputs= says a list of arrays is expected (it said
    "4 were given" or "dtype <U1"); a comparator class says to give an
    instance; upstream's TimeScale (another Enum, values "us") is taken."""
    import enum
    import numpy as np
    etdp, dbg, rec = (os.path.join(d, f) for f in ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord"))
    x = np.load(os.path.join(d, "mlp_io.npz"))["input0"]

    def error(fn):
        try:
            fn()
            return "no error"
        except Exception as e:  # noqa: BLE001
            return f"{type(e).__name__}: {e}"
    got = error(lambda: E.Inspector(etdump_data=5))
    check("etdump_data=5: TypeError naming etdump_data, bytes-like",
          got.startswith("TypeError") and "etdump_data" in got and "bytes-like" in got, got)
    with open(etdp, "rb") as f:
        raw = f.read()
    check("etdump_data as bytes, bytearray and memoryview still work",
          all(len(E.Inspector(etdump_data=v).event_blocks) ==
              len(E.Inspector(etdump_path=etdp).event_blocks)
              for v in (raw, bytearray(raw), memoryview(raw))))
    got = error(lambda: E.Inspector(etdump_path=""))
    check("etdump_path='': names the keyword", "etdump_path is an empty path" in got, got)
    for label, v in (("a bare array", x), ("a dict", {"0": x})):
        got = error(lambda: E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec,
                                        inputs=v))
        check(f"inputs= {label}: TypeError saying a list of arrays, one per graph input",
              got.startswith("TypeError") and "list of arrays, one per graph input" in got, got)
    ok = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec, inputs=[x])
    check("inputs=[x] still works", len(ok.calculate_numeric_gap("SNR")) > 0)
    got = error(lambda: ok.calculate_numeric_gap(distance=E.SNRComparator))
    check("distance=SNRComparator (the class): give an instance",
          "SNRComparator()" in got and "instance" in got, got)

    class TimeScale(enum.Enum):  # upstream's, executorch.devtools.inspector.TimeScale
        NS = "ns"
        US = "us"
        MS = "ms"
        S = "s"
        CYCLES = "cycles"
    a = E.Inspector(etdump_path=etdp, target_time_scale=TimeScale.US)
    b = E.Inspector(etdump_path=etdp, target_time_scale="us")
    check("upstream's TimeScale.US is taken as 'us'",
          a.event_blocks[1].events[0].perf_data.p50 == b.event_blocks[1].events[0].perf_data.p50)
    Other = enum.Enum("Other", {"US": 7})
    check("another Enum's member by its name (US)",
          E.Inspector(etdump_path=etdp, target_time_scale=Other.US)._target_time_scale ==
          E.TimeScale.US)
    Bad = enum.Enum("Bad", {"HOURS": "h"})
    got = error(lambda: E.Inspector(etdump_path=etdp, target_time_scale=Bad.HOURS))
    check("an Enum member that is no time scale: an error listing the scales",
          "unknown time scale" in got and "ns, us, ms, s or cycles" in got, got)


def metrics_names(d):
    """Finding 25: compare_results(metrics=) with an unknown name ("cosine",
    "bogus") raises naming the valid ones (it returned {} or dropped the
    metric); a str is one name, not matched by substring ("sn" was taken
    as snr's part of "snr")."""
    import numpy as np
    a = np.arange(1, 9, dtype=np.float32)
    b = a + 1e-3
    for bad in (["cosine"], ["bogus"], ["snr", "cosine"], "sn", "cosine"):
        try:
            got = E.compare_results(a, b, metrics=bad)
        except E.Error as e:
            got = str(e)
        check(f"metrics={bad!r}: an error naming the valid metrics",
              isinstance(got, str) and "snr, mse, cosine_similarity" in got, got)
    got = E.compare_results(a, b, metrics="snr")
    check("metrics='snr': the one metric", list(got) == ["snr"], got)
    got = E.compare_results(a, b, metrics=["mse", "cosine_similarity"])
    check("metrics=[mse, cosine_similarity]: those two", list(got) == ["mse", "cosine_similarity"],
          got)
    check("metrics=None: all three",
          list(E.compare_results(a, b)) == ["snr", "mse", "cosine_similarity"])


def plot_dir(d):
    """Findings 15 and 16: compare_results(plot=True, plot_dir=DIR) is the
    CLI's --plot DIR plot set: a user's file of a plot's name is not
    replaced (an error naming it, nothing moved), a rerun with fewer outputs
    removes the plots it no longer makes, and plot_dir may be bytes, an
    os.PathLike or a str that is not UTF-8 (AttributeError and
    UnicodeEncodeError before)."""
    import pathlib
    import numpy as np
    rng = np.random.RandomState(0)
    ref = [rng.randn(4, 8), rng.randn(3, 5)]
    run = [r + 0.01 * rng.randn(*r.shape) for r in ref]
    mine = os.path.join(d, "mine")
    os.makedirs(mine)
    for name in ("heatmap_0.png", "snr.gp"):
        with open(os.path.join(mine, name), "wb") as f:
            f.write(b"MY OWN FILE")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gnuplot may be missing
        try:
            E.compare_results(ref, run, plot=True, plot_dir=mine)
            msg = "no error"
        except E.Error as e:
            msg = str(e)
        kept = all(open(os.path.join(mine, n), "rb").read() == b"MY OWN FILE"
                   for n in ("heatmap_0.png", "snr.gp"))
        check("a user's file of a plot's name: an error naming it and plot_dir=, the file kept, "
              "no plot moved in", ("heatmap_0.png" in msg or "snr.gp" in msg) and
              "plot_dir=" in msg and kept and
              sorted(os.listdir(mine)) == ["heatmap_0.png", "snr.gp"], msg)
        p = os.path.join(d, "p")
        first = E.compare_results(ref, run, plot=True, plot_dir=p)["plots"]
        again = E.compare_results(ref[:1], run[:1], plot=True, plot_dir=p)["plots"]
        left = {f for f in os.listdir(p) if f.endswith(".png")}
        check("a rerun with one output: the second output's plots are removed",
              os.path.join(p, "heatmap_1.png") in first and
              "heatmap_1.png" not in left and "error_1.png" not in left and
              {os.path.basename(x) for x in again} == left, (first, again, left))
        for label, where in (("bytes", os.fsencode(os.path.join(d, "b"))),
                             ("os.PathLike", pathlib.Path(d, "l")),
                             ("a str that is not UTF-8",
                              os.fsdecode(os.fsencode(d) + b"/x\xff"))):
            try:
                got = E.compare_results(ref, run, plot=True, plot_dir=where)["plots"]
            except Exception as e:  # noqa: BLE001
                got = f"{type(e).__name__}: {e}"
            check(f"plot_dir as {label}: the heat maps are drawn there",
                  isinstance(got, list) and
                  os.path.exists(os.path.join(os.fsdecode(where), "heatmap_0.png")) and
                  all(os.path.exists(x) for x in got), got)


def distance_name(d):
    """Finding 24: a huge or control-character distance name is echoed
    escaped and cut, not whole and raw."""
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                       etrecord=os.path.join(d, "mlp.etrecord"))
    for name in ("x" * 1000000, "a\x1b[31mb"):
        try:
            insp.calculate_numeric_gap(distance=name)
            msg = "no error"
        except E.Error as e:
            msg = str(e)
        check(f"distance={name[:12]!r}...: an error, escaped, under 300 characters",
              "distance must be one of MSE, L1, SNR" in msg and len(msg) < 300 and
              "\x1b" not in msg, f"{len(msg)} {msg[:200]!r}")


def swapped_debug_buffer(d):
    """Finding 22: an ETDump, an ETRecord or an .npz given as
    debug_buffer_path is refused with the keyword that takes it (the CLI
    refuses them as --debug_buffer); it was read as raw tensor bytes."""
    etdp = os.path.join(d, "mlp.etdp")
    for f, kw in (("mlp.etdp", "etdump_path="), ("mlp.etrecord", "etrecord="),
                  ("mlp_io.npz", "reference_outputs= or inputs=")):
        try:
            E.Inspector(etdump_path=etdp, debug_buffer_path=os.path.join(d, f))
            msg = "no error"
        except E.Error as e:
            msg = str(e)
        check(f"debug_buffer_path={f}: an error, did you mean {kw}?",
              "(given as debug_buffer_path)" in msg and f"did you mean {kw}?" in msg, msg)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=os.path.join(d, "mlp_debug.bin"))
    check("debug_buffer_path=the debug buffer: accepted", insp is not None)


def graph_signature(d):
    """Finding 26: ep.graph_signature has upstream's ExportGraphSignature
    properties (it was text: user_inputs raised AttributeError), checked
    against the specs read straight from the record's JSON; it still prints
    as before."""
    import json
    import zipfile
    for model in ("mlp", "cnn", "qcnn"):
        rec = os.path.join(d, model + ".etrecord")
        insp = E.Inspector(etdump_path=os.path.join(d, model + ".etdp"),
                           debug_buffer_path=os.path.join(d, model + "_debug.bin"), etrecord=rec)
        sig = insp.get_exported_program().graph_signature
        with zipfile.ZipFile(rec) as z:
            spec = json.loads(z.read("edge_dialect_exported_program"))["graph_module"]["signature"]

        def one(u):
            return next((k, v) for k, v in u.items() if v is not None)
        ins = [one(x) for x in spec["input_specs"]]
        outs = [one(x) for x in spec["output_specs"]]

        def name(v):  # a TensorArgument {"name"}, or a union holding one
            a = v["arg"]
            return a["name"] if "name" in a else next(
                x["name"] for x in a.values() if isinstance(x, dict) and "name" in x)
        want = {
            "user_inputs": tuple(name(v) for k, v in ins if k == "user_input"),
            "user_outputs": tuple(name(v) for k, v in outs if k == "user_output"),
            "parameters": [v["parameter_name"] for k, v in ins if k == "parameter"],
            "buffers": [v["buffer_name"] for k, v in ins if k == "buffer"],
            "inputs_to_parameters": {name(v): v["parameter_name"] for k, v in ins
                                     if k == "parameter"},
            "inputs_to_buffers": {name(v): v["buffer_name"] for k, v in ins if k == "buffer"},
            "lifted_tensor_constants": [v["tensor_constant_name"] for k, v in ins
                                        if k == "tensor_constant"],
        }
        got = {k: getattr(sig, k) for k in want}
        check(f"{model}: graph_signature's properties match the record's specs",
              got == want and want["user_inputs"] and want["parameters"], f"{got} vs {want}")
        check(f"{model}: graph_signature still prints its text",
              isinstance(sig, str) and "# inputs" in str(sig))


def rows_keys(d):
    """Finding 26: every compare().rows entry has every key, None where the
    pair was not compared (rows[i]["snr"] raised KeyError there)."""
    import numpy as np
    ref = os.path.join(d, "two.npz")
    with np.load(os.path.join(d, "mlp_io.npz")) as z:
        out = z["expected0"]
    np.savez(ref, **{"0": out, "1": out})  # a second output the run does not have
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"))
    rows = insp.compare(ref).rows
    keys = [set(r) for r in rows]
    missing = [r for r in rows if r["status"] != "pass"]
    check("compare().rows: every row has the same keys; a row not compared has snr None",
          len(set(map(frozenset, keys))) == 1 and missing and
          all(r["snr"] is None and r["mse"] is None for r in missing),
          f"{[sorted(k) for k in keys][:2]} {[(r['status'], r.get('snr')) for r in rows]}")


def main():
    cases = (nan_compare_results, nan_gap, chdir, comparator_reuse, rewritten, self_reference,
             reference_name, other_model_reference, converter_module, str_keywords,
             etrecord_unknown_graph, deleted_etrecord, messages, metrics_names, plot_dir,
             distance_name, swapped_debug_buffer, graph_signature, rows_keys)
    C.run_cases_on_copies("python-trust3", RX, FILES, cases)


main()
