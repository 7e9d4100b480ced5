"""Helpers shared by the tests/test_*.py scripts: where things are, running
etcompare, building ETDumps with flatc, and the check counters with the
summary line that ends every test.

ctest sets ETCOMPARE, ETC_SRC, ETC_FLATC and ETC_WORK; run by hand, the
paths default to this checkout and build/etcompare.

    import common as C
    C.check("the table names the op", "aten.add" in out, out)
    C.finish(work)   # "N passed, M failed", exits non-zero on a failure
"""
import contextlib
import faulthandler
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import traceback
import zlib

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

# A test that hangs prints every thread's stack and exits 1 before ctest's
# --timeout (900 s in scripts/test.sh) kills it without a word. ETC_WATCHDOG
# changes the delay (seconds; 0 turns it off).
# It exits at once (os._exit): no cleanup runs, which is why it is the last
# resort behind run_bounded's per-step limit.
try:
    _watchdog = float(os.environ.get("ETC_WATCHDOG") or 840)
except ValueError:
    _watchdog = 840.0
if _watchdog > 0:
    faulthandler.dump_traceback_later(_watchdog, exit=True)


def check(name, cond, detail=""):
    """One check line ("ok   name" or "FAIL name detail"); returns cond."""
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}", flush=True)
    else:
        failed += 1
        print(f"FAIL {name} {detail}", flush=True)
    return bool(cond)


def run_bounded(argv, limit=300):
    """argv's exit status, stdout and stderr. A run that is not done in
    `limit` seconds gets SIGABRT, so that Python's faulthandler prints where
    each of its threads waits, and exit status None."""
    env = dict(os.environ, PYTHONFAULTHANDLER="1")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGABRT)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        try:  # its worker processes too, which hold the pipes open
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:  # (one in a session of its own would hold them still)
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = "", "(no output: a process outside its group holds the pipes open)"
        print(f"TIMEOUT after {limit} s: {argv}\n{err[-6000:]}", flush=True)
        return None, out, err


def hung_under_asan(rc, step):
    """True for a step that run_bounded stopped (rc None) in a test re-run
    under ASan's preloaded runtime (test_python.setup): a note, after the
    stacks run_bounded printed, not a failure. Only the Dask steps use it:
    Dask's worker processes under the preload are third-party code the
    sanitizers do not check, and the plain build checks the same steps
    without it (one such step hung CI once, 2026-11-26, without a trace)."""
    if rc is None and os.environ.get("ETC_ASAN_REEXEC"):
        print(f"note: {step}: did not finish under ASan's preloaded runtime; not counted "
              "(the plain build checks it)", flush=True)
        return True
    return False


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


@contextlib.contextmanager
def harness(label="test harness"):
    """with harness(): cases... -- a crash in the harness is a failed check
    (after its traceback), not a pass."""
    try:
        yield
    except Exception as e:
        traceback.print_exc()
        check(f"{label} ran to the end", False, repr(e))


def run_cases_on_copies(tag, src, files, cases):
    """A test's main(): each case(sub) in a folder of its own under one
    work_dir(tag), holding fresh copies of `files` from `src`, under
    harness(), then finish()."""
    d = work_dir(tag)
    for case in cases:
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        for f in files:
            shutil.copy(os.path.join(src, f), os.path.join(sub, f))
        with harness(case.__name__):
            case(sub)
    finish(d)


def run_cases(tag, *cases):
    """A test's main(): each case(d) in one fresh work_dir(tag), under
    harness(), then finish()."""
    d = work_dir(tag)
    with harness():
        for case in cases:
            case(d)
    finish(d)


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


def json_lines(text, key):
    """The JSON objects of `text`, one per line (the batch's output), by their
    `key` field; lines that are not JSON are skipped."""
    rows = {}
    for ln in text.splitlines():
        try:
            r = json.loads(ln)
            rows[r.get(key)] = r
        except ValueError:
            pass
    return rows


def file_maps(path):
    """(start, end, file offset, perms) of this process's mappings of `path`."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as f:
        for ln in f:
            parts = ln.split(maxsplit=5)
            if len(parts) == 6 and parts[5].strip() == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi, int(parts[2], 16), parts[1]))
    return out


def work_dir(tag):
    """A fresh directory under $ETC_WORK (the build tree under ctest)."""
    base = os.environ.get("ETC_WORK")
    if base:
        os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=tag + "-", dir=base)


def check_schema(tag, doc):
    """A check that the JSON report `doc` validates against the report's schema."""
    import jsonschema
    with open(REPORT_SCHEMA) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(doc, schema)
        valid = ""
    except jsonschema.ValidationError as e:
        valid = str(e)[:400]
    check(f"{tag}: the JSON report validates against the schema", not valid, valid)


def percentile(vals, q):
    """numpy's default (linear) percentile, as the profiling tables compute it."""
    s = sorted(vals)
    h = (len(s) - 1) * q / 100
    i = int(h)
    if i + 1 >= len(s):
        return s[-1]
    return s[i] + (s[i + 1] - s[i]) * (h - i)


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


def png_read(path):
    """(IHDR fields, rows) of a PNG, or None when the file is not one. IHDR:
    (width, height, bit depth, colour type, compression, filter, interlace);
    rows: lists of pixels, each a tuple of its channel bytes, for 8-bit
    non-interlaced images (None for the others)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, ihdr, idat = 8, None, b""
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if not ihdr:
        return None
    w, h, depth, ctype, _, _, interlace = ihdr
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or not bpp or interlace:
        return ihdr, None
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - bpp] if x >= bpp else 0
            up = prev[x]
            ul = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + left) & 255
            elif ft == 2:
                line[x] = (line[x] + up) & 255
            elif ft == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif ft == 4:
                p = left + up - ul
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - ul)
                pr = left if pa <= pb and pa <= pc else (up if pb <= pc else ul)
                line[x] = (line[x] + pr) & 255
        rows.append([tuple(line[x:x + bpp]) for x in range(0, stride, bpp)])
        prev = line
    return ihdr, rows


def decode_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA PNG."""
    png = png_read(path)
    assert png, path
    ihdr, rows = png
    assert rows is not None and ihdr[3] in (2, 6), ihdr
    return ihdr[0], ihdr[1], [[px[:3] for px in row] for row in rows]


def gp_vars(path):
    """The variables a plot's .gp preamble sets (`name = value`), the first
    assignment of each."""
    out = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^([a-z_]+) = (.*)$", line.rstrip("\n"))
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out
