"""The Python package against a hostile user (second pass): objects that own
library handles refuse deep copies and pickles (a copy freed the handles
twice; an unpickled one read another process's addresses), so a
multiprocessing Pool given an Inspector raises at once instead of hanging;
save_data_to_tsv refuses to overwrite the Inspector's own inputs (also
through hard and symbolic links); the Inspector refuses an ETRecord or a
debug buffer of another model as the CLI does (force=True: a warning), and
the numeric gap a bundled_program= of another model;
thresholds the CLI refuses are refused (NaN, inf, out of range);
get_exported_program() refuses an ETRecord replaced since it was opened;
flags take only bools; a file truncated in place is named as changed; the
numeric gap's rows carry their attrs without pandas.

The calls that crashed are run in child processes: a regression is a failed
check with the child's exit status, not a dead test."""
import json
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

# the child's prelude: the package of this checkout on this build's library
# (setup() exported ETCOMPARE_LIBRARY and PYTHONPATH)
PRELUDE = """
import copy, json, pickle, sys
import etcompare
from etcompare import Inspector
D = sys.argv[1]
def insp():
    return Inspector(etdump_path=D + "/mlp.etdp", debug_buffer_path=D + "/mlp_debug.bin",
                     etrecord=D + "/mlp.etrecord")
def outcome(fn):
    try:
        fn()
        return "ok"
    except BaseException as e:
        return f"{type(e).__name__}: {e}"
"""


def child(d, body, limit=120):
    """Runs PRELUDE + body in a new interpreter on work dir d: (exit status,
    the JSON its last stdout line holds, stderr)."""
    path = os.path.join(d, "child.py")
    with open(path, "w") as f:
        f.write(PRELUDE + body)
    rc, out, err = C.run_bounded([sys.executable, path, d], limit)
    lines = (out or "").strip().splitlines()
    try:
        doc = json.loads(lines[-1]) if lines else {}
    except ValueError:
        doc = {}
    return rc, doc, (err or "")[-1500:]


def raises(fn, exc, *words):
    """(True, message) when fn() raises `exc` whose message has every word."""
    try:
        fn()
    except exc as e:
        msg = str(e)
        return all(w in msg for w in words), msg
    except BaseException as e:
        return False, f"{type(e).__name__}: {e}"
    return False, "no exception"


def copies(d):
    body = r"""
i = insp()
b = i.event_blocks[1]
e = b.events[2]
ep = i.get_exported_program()
acc = i.compare(min_snr=30)
rec = etcompare.ETRecord(D + "/mlp.etrecord")
objs = {"Inspector": i, "EventBlock": b, "Event": e, "Graph": ep, "AccuracyResult": acc,
        "ETRecord": rec, "ETRecord program": rec.get_exported_program()}
res = {}
for name, o in objs.items():
    res["deepcopy " + name] = outcome(lambda: copy.deepcopy(o))
    res["pickle " + name] = outcome(lambda: pickle.dumps(o))
    res["deepcopy [" + name + "]"] = outcome(lambda: copy.deepcopy({"x": [o]}))
c = copy.copy(i)
res["copy shares"] = c._h is i._h and c.event_blocks[1].events[2].name == e.name
del c
import gc; gc.collect()
res["original after copy"] = bool(i.event_blocks[1].events[0].perf_data.p50 > 0)
arr = e.debug_data[0]
res["array pickles"] = bool((pickle.loads(pickle.dumps(arr)) == arr).all())
res["array deepcopies"] = bool((copy.deepcopy(arr) == arr).all())
res["perf pickles"] = bool(pickle.loads(pickle.dumps(e.perf_data)).p50 == e.perf_data.p50)
gap = i.calculate_numeric_gap("SNR")
res["gap pickles"] = len(pickle.loads(pickle.dumps(gap))) == len(gap)
res["rows deepcopy"] = copy.deepcopy(acc.rows) == acc.rows
print(json.dumps(res))
"""
    rc, doc, err = child(d, body)
    check("deep copies and pickles: the child ends normally (no double free, no segfault)",
          rc == 0 and doc, f"rc={rc} {err}")
    for name in ("Inspector", "EventBlock", "Event", "Graph", "AccuracyResult", "ETRecord",
                 "ETRecord program"):
        for how in ("deepcopy ", "pickle ", "deepcopy ["):
            key = how + name + ("]" if how == "deepcopy [" else "")
            got = doc.get(key, "")
            check(f"{key}: TypeError saying it holds open files",
                  got.startswith("TypeError:") and "holds open files" in got and
                  "cannot be deep-copied or pickled" in got, got)
    got = doc.get("deepcopy Inspector", "")
    check("the Inspector's message says what to do",
          "make a new Inspector from the same paths" in got, got)
    for key in ("copy shares", "original after copy", "array pickles", "array deepcopies",
                "perf pickles", "gap pickles", "rows deepcopy"):
        check(f"kept: {key}", doc.get(key) is True, doc.get(key))


def pool(d):
    body = r"""
import multiprocessing as mp, time
def work(x):
    return x.find_total_for_module("fc1")
if __name__ == "__main__":
    i = insp()
    t0 = time.monotonic()
    with mp.get_context("spawn").Pool(1) as p:
        r = outcome(lambda: p.map(work, [i]))
    print(json.dumps({"map": r, "seconds": time.monotonic() - t0}))
"""
    rc, doc, err = child(d, body, limit=90)
    got = doc.get("map", "")
    check("Pool(spawn).map over [inspector]: TypeError at once, no hang",
          rc == 0 and got.startswith("TypeError:") and "holds open files" in got and
          doc.get("seconds", 99) < 60, f"rc={rc} {doc} {err}")


def outputs(d):
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                    debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                    etrecord=os.path.join(d, "mlp.etrecord"))
    arr = i.event_blocks[1].events[2].debug_data[0]
    before = arr.copy()
    buf = os.path.join(d, "mlp_debug.bin")
    with open(buf, "rb") as f:
        data = f.read()
    ok, msg = raises(lambda: i.save_data_to_tsv(buf), E.Error, buf, "debug buffer")
    check("save_data_to_tsv(its debug buffer): Error naming the path and its role", ok, msg)
    hard = os.path.join(d, "hard.tsv")
    os.link(buf, hard)
    ok, msg = raises(lambda: i.save_data_to_tsv(hard), E.Error, hard, "debug buffer")
    check("save_data_to_tsv through a hard link to the debug buffer: refused", ok, msg)
    sym = os.path.join(d, "sym.tsv")
    os.symlink(os.path.join(d, "mlp.etrecord"), sym)
    ok, msg = raises(lambda: i.save_data_to_tsv(sym), E.Error, sym, "ETRecord")
    check("save_data_to_tsv through a symlink to the ETRecord: refused", ok, msg)
    with open(os.path.join(d, "mlp.etdp"), "a") as f:
        ok, msg = raises(lambda: i.save_data_to_tsv(f), E.Error, "ETDump")
    check("save_data_to_tsv(an open file of the ETDump): refused", ok, msg)
    with open(buf, "rb") as f:
        same = f.read() == data
    check("the inputs are unchanged, and the arrays handed out",
          same and (arr == before).all() and os.path.getsize(os.path.join(d, "mlp.etdp")) ==
          os.path.getsize(os.path.join(RX, "mlp.etdp")))
    out = os.path.join(d, "out.tsv")
    i.save_data_to_tsv(out)
    check("save_data_to_tsv to another path still writes", os.path.getsize(out) > 0)


def belonging(d):
    mlp, cnn = os.path.join(d, "mlp.etdp"), os.path.join(d, "cnn.etrecord")
    ok, msg = raises(lambda: E.Inspector(etdump_path=mlp, etrecord=cnn), E.MismatchError,
                     "do not belong together", mlp, cnn, "force=True")
    check("an ETRecord of another model: MismatchError naming both files, as the CLI", ok, msg)
    cbuf = os.path.join(d, "cnn_debug.bin")
    ok, msg = raises(lambda: E.Inspector(etdump_path=mlp, debug_buffer_path=cbuf),
                     E.MismatchError, "do not belong together", mlp, cbuf)
    check("a debug buffer of another model: MismatchError naming both files", ok, msg)
    rc, _out, err = C.run("--etdump", mlp, "--etrecord", cnn)
    check("(the CLI refuses the same pair, exit 3)", rc == 3 and "do not belong" in err, err)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            i = E.Inspector(etdump_path=mlp, etrecord=cnn, debug_buffer_path=cbuf, force=True)
            n = len(i.event_blocks)
        except Exception as e:
            n = repr(e)
    said = [str(x.message) for x in w if "do not belong together" in str(x.message)]
    check("force=True: compared anyway, with a warning per check", n == 2 and len(said) == 2,
          f"{n} {said}")
    ok, msg = raises(lambda: E.Inspector(etdump_path=mlp, force="yes"), TypeError, "force")
    check("force= takes a bool", ok, msg)
    # a .bpte of another model, as the CLI's --bundled-program (exit 3 there)
    q = {k: os.path.join(RX, "qcnn" + k) for k in (".etdp", "_debug.bin", ".etrecord")}
    other, own = os.path.join(RX, "cnn.bpte"), os.path.join(RX, "qcnn.bpte")
    i = E.Inspector(etdump_path=q[".etdp"], debug_buffer_path=q["_debug.bin"],
                    etrecord=q[".etrecord"], bundled_program=other)
    ok, msg = raises(lambda: i.calculate_numeric_gap("SNR"), E.Error, "do not belong together",
                     q[".etdp"], other, "kernel calls are not its program's", "force=True")
    check("bundled_program= of another model: the numeric gap refuses it, naming both files",
          ok, msg)
    i = E.Inspector(etdump_path=q[".etdp"], debug_buffer_path=q["_debug.bin"],
                    etrecord=q[".etrecord"], bundled_program=own)
    ok, msg = raises(lambda: i.calculate_numeric_gap("SNR"), E.Error)
    check("bundled_program= of the run's own model: the numeric gap runs",
          msg == "no exception", msg)


def thresholds(d):
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                    debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                    etrecord=os.path.join(d, "mlp.etrecord"))
    nan, inf = float("nan"), float("inf")
    bad = [("min_snr", nan, "finite number"), ("min_snr", inf, "finite"),
           ("min_snr", "abc", "number"), ("max_mse", -1, ">= 0"), ("max_mse", nan, ">= 0"),
           ("max_abs", inf, ">= 0"), ("max_abs", -0.5, ">= 0"), ("min_cosine", 2, "-1 to 1"),
           ("min_cosine", nan, "-1 to 1"), ("min_snr", True, "number")]
    for name, v, rule in bad:
        ok, msg = raises(lambda: i.compare(**{name: v}), ValueError, name, rule)
        check(f"compare({name}={v!r}): ValueError naming it and the rule", ok, msg)
        ok, msg = raises(lambda: i.calculate_numeric_gap(**{name: v}), ValueError, name, rule)
        check(f"calculate_numeric_gap({name}={v!r}): ValueError", ok, msg)
    r = i.compare(min_snr=30, max_mse=0, min_cosine=-1, max_abs=0.5)
    check("values in range are taken (max_mse=0, min_cosine=-1)", len(r.rows) > 0, r)
    check("compare(min_cosine=1) runs", len(i.compare(min_cosine=1).rows) > 0)


def exported_program(d):
    rec = os.path.join(d, "rec.etrecord")
    shutil.copy(os.path.join(RX, "mlp.etrecord"), rec)
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"), etrecord=rec)
    early = i.get_exported_program()
    before = str(i.get_exported_program())
    other = os.path.join(d, "other.etrecord")
    shutil.copy(os.path.join(RX, "cnn.etrecord"), other)
    os.replace(other, rec)
    # the program is read from the mapping of the file opened (pyfix4,
    # finding 21): the replacement changes nothing, no other program shows
    after = str(i.get_exported_program())
    check("get_exported_program() after the ETRecord was replaced: the program opened, not "
          "the new file's", "ExportedProgram" in before and after == before and
          "convolution" not in after, after[:300])
    check("a program got before the replacement: its own nodes, not another program's",
          [n.name for n in early.graph_module.graph.nodes] ==
          [n.name for n in i.get_exported_program().graph_module.graph.nodes] and
          "convolution" not in str(early))
    r2 = E.ETRecord(os.path.join(d, "mlp.etrecord"))
    ep = r2.get_exported_program()
    shutil.copy(os.path.join(RX, "cnn.etrecord"), other)
    os.replace(other, os.path.join(d, "mlp.etrecord"))
    check("etcompare.ETRecord: the same", str(ep) == before, str(ep)[:300])
    # rewritten in place (same inode, new bytes): the mapping would show them
    rec = os.path.join(d, "rec2.etrecord")
    shutil.copy(os.path.join(RX, "mlp.etrecord"), rec)
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"), etrecord=rec)
    with open(rec, "r+b") as f:
        f.seek(0, 2)
        f.write(b"\0" * 16)
    ok, msg = raises(lambda: str(i.get_exported_program()), E.Error, rec, "changed")
    check("the ETRecord rewritten in place: Error naming it", ok, msg)


def minor(d):
    i = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                    debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                    etrecord=os.path.join(d, "mlp.etrecord"))
    ok, msg = raises(lambda: i.calculate_numeric_gap(keep_reference_values="no"), TypeError,
                     "keep_reference_values")
    check("keep_reference_values='no': TypeError", ok, msg)
    ok, msg = raises(lambda: i.calculate_numeric_gap(force=1), TypeError, "force")
    check("calculate_numeric_gap(force=1): TypeError", ok, msg)
    ok, msg = raises(lambda: i.find_total_for_module(None), TypeError, "module_name")
    check("find_total_for_module(None): TypeError naming module_name", ok, msg)
    # truncated in place while the Inspector holds them
    for name, call in (("numeric gap", lambda j: j.calculate_numeric_gap()),
                       ("compare", lambda j: j.compare(min_snr=30))):
        for f in ("mlp.etdp", "mlp.etrecord"):
            t = os.path.join(d, f"t-{name.replace(' ', '_')}-{f}")
            shutil.rmtree(t, ignore_errors=True)
            os.makedirs(t)
            for g in ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord"):
                shutil.copy(os.path.join(RX, g), os.path.join(t, g))
            j = E.Inspector(etdump_path=os.path.join(t, "mlp.etdp"),
                            debug_buffer_path=os.path.join(t, "mlp_debug.bin"),
                            etrecord=os.path.join(t, "mlp.etrecord"))
            j.event_blocks
            os.truncate(os.path.join(t, f), 0)
            ok, msg = raises(lambda: call(j), E.Error, os.path.join(t, f),
                             "changed while being read")
            check(f"{name} after {f} was truncated in place: the changed file is named", ok, msg)
    rc, doc, err = child(d, r"""
sys.modules["pandas"] = None
rows = insp().calculate_numeric_gap("SNR")
fd = rows.attrs.get("first_divergence", "missing")
print(json.dumps({"type": type(rows).__name__, "list": isinstance(rows, list),
                  "n": len(rows), "keys": sorted(rows.attrs),
                  "fd": fd if fd is None or isinstance(fd, int) else repr(fd),
                  "pickles": pickle.loads(pickle.dumps(rows)).attrs == rows.attrs}))
""")
    check("without pandas: a list of dicts whose attrs has first_divergence, unmatched, ...",
          rc == 0 and doc.get("list") and doc.get("n", 0) > 0 and
          {"first_divergence", "unmatched", "alignment"} <= set(doc.get("keys", [])) and
          doc.get("fd") != "missing" and doc.get("pickles"), f"rc={rc} {doc} {err}")


def main():
    d = C.work_dir("python-trust2")
    for case in (copies, pool, outputs, belonging, thresholds, exported_program, minor):
        # fresh copies per case: one case's failure leaves the next one's inputs whole
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        for f in ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "cnn.etrecord", "cnn_debug.bin"):
            shutil.copy(os.path.join(RX, f), os.path.join(sub, f))
        with C.harness(case.__name__):
            case(sub)
    C.finish(d)


main()
