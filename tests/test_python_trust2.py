"""The Python package against a hostile user (second pass): objects that own
library handles refuse deep copies and pickles (a copy freed the handles
twice; an unpickled one read another process's addresses), so a
multiprocessing Pool given an Inspector raises at once instead of hanging.

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
res["original after copy"] = i.event_blocks[1].events[0].perf_data.p50 > 0
arr = e.debug_data[0]
res["array pickles"] = bool((pickle.loads(pickle.dumps(arr)) == arr).all())
res["array deepcopies"] = bool((copy.deepcopy(arr) == arr).all())
res["perf pickles"] = pickle.loads(pickle.dumps(e.perf_data)).p50 == e.perf_data.p50
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


def main():
    d = C.work_dir("python-trust2")
    for case in (copies, pool):
        # fresh copies per case: one case's failure leaves the next one's inputs whole
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        for f in ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "cnn.etrecord", "cnn_debug.bin"):
            shutil.copy(os.path.join(RX, f), os.path.join(sub, f))
        with C.harness(case.__name__):
            case(sub)
    C.finish(d)


main()
