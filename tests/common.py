"""Helpers shared by the tests/test_*.py scripts: where things are, running
etcompare, building ETDumps with flatc, and the check counters with the
summary line that ends every test.

ctest sets ETCOMPARE, ETC_SRC, ETC_FLATC and ETC_WORK; run by hand, the
paths default to this checkout and build/etcompare.

    import common as C
    C.check("the table names the op", "aten.add" in out, out)
    C.finish(work)   # "N passed, M failed", exits non-zero on a failure
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("ETC_SRC") or os.path.dirname(HERE))
ETC = os.environ.get("ETCOMPARE") or os.path.join(SRC, "build", "etcompare")
FLATC = os.environ.get("ETC_FLATC") or "flatc"
DATA = os.path.join(SRC, "tests", "data")
GOLD = os.path.join(SRC, "golden")
FBS = os.path.join(SRC, "schema", "etdump.fbs")
REPORT_SCHEMA = os.path.join(SRC, "schema", "etcompare-report.schema.json")
OUT_CHAIN = 18446744073709551615  # chain_index of the program outputs' events

passed = failed = 0


def check(name, cond, detail=""):
    """One check line ("ok   name" or "FAIL name detail"); returns cond."""
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")
    return bool(cond)


def summary():
    """Print the summary line; the exit status: 1 on a failure or if nothing
    was checked (a test that asserts nothing is a defect)."""
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def finish(work=None):
    """summary(), remove the work directory when everything passed (keep it
    for a look otherwise), and exit with the summary's status."""
    code = summary()
    if work and code == 0:
        shutil.rmtree(work, ignore_errors=True)
    elif work:
        print(f"work files kept in {work}")
    sys.exit(code)


def run(*args, timeout=None):
    """etcompare ARGS -> (exit code, stdout, stderr) as text."""
    p = subprocess.run([ETC, *args], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def call(*args, text=True, **kw):
    """etcompare ARGS -> subprocess.CompletedProcess (text or bytes)."""
    return subprocess.run([ETC, *args], capture_output=True, text=text, **kw)


def load_json(path):
    """The parsed file, or {"_error": why} when it is missing or not JSON."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"_error": str(e)}


def work_dir(tag):
    """A fresh directory under $ETC_WORK (the build tree under ctest)."""
    base = os.environ.get("ETC_WORK")
    if base:
        os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=tag + "-", dir=base)


def flatc_build(tmp, name, doc):
    """tmp/name.etdp, size-prefixed, built by flatc from the JSON document doc."""
    src = os.path.join(tmp, name + ".json")
    with open(src, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([FLATC, "-b", "--size-prefixed", "-o", tmp, FBS, src],
                       capture_output=True, text=True)
    out = os.path.join(tmp, name + ".etdp")  # the schema's file_extension
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc failed on {src}: {p.stderr}")
    return out
