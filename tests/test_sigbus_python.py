#!/usr/bin/env python3
"""A mapped debug buffer truncated by another process while Python reads it
(issue 23, item 1, the Python half; the CLI's is in test_hostile_round2).
Before, the interpreter died with SIGBUS, and a batch worker with it.
Checked, each in a fresh interpreter:
1. a zero-copy numpy view of a 64 MiB tensor, read after a helper process
   truncated the file to 4 KB: the read gives zeros (not the file, and the
   interpreter lives), and the next etcompare access of the Inspector
   (Event.debug_data, print_data_tabular, calculate_numeric_gap) raises
   etcompare.Error "FILE: changed while being read"; an Inspector on
   another file is not affected; a file opened again afresh is fine;
   the same with tensor_type="torch" (the package's copy-on-write view of
   the file is watched by the library's handler too);
2. the library reading a 192 MiB tensor (the numeric gap against an intact
   copy) while a helper truncates it 20 ms to 0.4 s in: never a dead
   interpreter, and each call either finishes before the truncation with
   the right numbers or raises etcompare.Error naming the file (at least
   one is cut mid-read);
3. python3 -m etcompare.batch with a row whose debug buffer is truncated
   by a helper process while the worker analyses it: that run's one error
   line names the file ("changed while being read"), the other row is ok,
   the batch exits 3 (no "worker process died").
Under ASan the runs leave SIGBUS to etcompare (handle_sigbus=0).
"""
import os
import subprocess
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
import hostile as H  # noqa: E402
import common as C  # noqa: E402
from common import ETC, FBS, FLATC  # noqa: E402
import test_escape as E  # noqa: E402

PY = sys.executable
PYDIR = os.path.join(SRC, "python")
LIB = os.path.join(os.path.dirname(os.path.abspath(ETC)), "libetcompare.so")
MIB = 1 << 20


def py_env():
    """The environment of a Python run on this build's library: the ASan
    runtime preloaded when the library needs it, SIGBUS left to etcompare
    (ASan takes it for itself otherwise) and no leak check (the
    interpreter's own allocations)."""
    env = dict(os.environ, ETCOMPARE_LIBRARY=LIB, PYTHONPATH=PYDIR)
    ldd = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
    asan = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines()
            if "libasan" in ln and "=>" in ln]
    if asan:
        env["LD_PRELOAD"] = asan[0]
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                               ":handle_sigbus=0:detect_leaks=0").lstrip(":")
    return env


def big_dump(d, stem, nbytes, tail=True):
    """An ETDump with an intermediate output and a program output both at a
    float32 tensor of nbytes at offset 0 of a sparse debug buffer whose
    last 10 elements are 1..10 (so zeros read after the truncation are told
    apart from the file)."""
    t = {"scalar_type": "FLOAT", "sizes": [nbytes // 4], "strides": [1], "offset": 0}
    evs = [E.dbg_event(t, 0), E.dbg_event(t, 1, output=True),
           E.prof("Method::execute", 0, 0, 5000, chain=-1)]
    etdp, dbg = H.write_etdump(d, stem, [{"name": "Execute", "events": evs}], b"", FLATC, FBS)
    restore(dbg, nbytes, tail)
    return etdp, dbg


def restore(dbg, nbytes, tail=True):
    with open(dbg, "wb") as f:
        f.truncate(nbytes + 16)
        if tail:
            import struct
            f.seek(nbytes - 40)
            f.write(struct.pack("<10f", *range(1, 11)))


def python(code, timeout=300):
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=timeout,
                       env=py_env())
    return p.returncode, p.stdout, p.stderr


HELPER = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
          "'import os, sys; os.truncate(sys.argv[1], 4096)', {path!r}], check=True)")


def case_view(d):
    etdp, dbg = big_dump(d, "view", 64 * MIB)
    other_etdp, other_dbg = big_dump(d, "other", 1 * MIB)
    code = f"""
import subprocess, sys
import etcompare
i = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r})
o = etcompare.Inspector(etdump_path={other_etdp!r}, debug_buffer_path={other_dbg!r})
ev = i.event_blocks[0].events[0]
arr = ev.debug_data[0]
print("BEFORE", arr[-10:].tolist(), type(arr).__name__, arr.base is not None)
{HELPER.format(path=dbg)}
print("AFTER", arr[-10:].tolist(), float(arr[-1000:].sum()))
print("ALIVE")
def attempt(label, fn):
    try:
        fn()
        print(label, "NO ERROR")
    except etcompare.Error as e:
        print(label, "ERROR", e.status, "|", e.file, "|", e)
attempt("DEBUG_DATA", lambda: ev.debug_data)
attempt("RUN_OUTPUT", lambda: i.event_blocks[0].run_output)
attempt("TABLE", lambda: i.print_data_tabular(file=open("/dev/null", "w")))
attempt("GAP", lambda: i.calculate_numeric_gap(reference=o))
attempt("OTHER", lambda: o.event_blocks[0].events[0].debug_data)
print("OTHER_TAIL", o.event_blocks[0].events[0].debug_data[0][-3:].tolist())
del i, ev, arr
import gc; gc.collect()
try:
    j = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r})
    j.event_blocks[0].events[0].debug_data
    print("REOPEN NO ERROR")
except etcompare.Error as e:
    print("REOPEN ERROR |", e)
"""
    rc, out, err = python(code)
    C.check("view: the interpreter lives (exit 0, no signal)", rc == 0, (rc, out, err[-800:]))
    C.check("view: read before the truncation: the file's values",
            "BEFORE [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0] ndarray True" in out,
            out)
    C.check("view: read after the truncation: zeros (documented), the process goes on",
            "AFTER [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] 0.0" in out
            and "ALIVE" in out, out)
    for label in ("DEBUG_DATA", "RUN_OUTPUT", "TABLE", "GAP"):
        line = next((ln for ln in out.splitlines() if ln.startswith(label + " ")), "")
        C.check(f"view: then {label.lower()} raises etcompare.Error naming the file",
                line.startswith(label + " ERROR I/O error |") and dbg in line
                and "changed while being read" in line, line or out)
    C.check("view: an Inspector on another file is not affected",
            "OTHER NO ERROR" in out and "OTHER_TAIL [8.0, 9.0, 10.0]" in out, out)
    C.check("view: the truncated file opened again afresh is an ordinary error "
            "(its tensor lies past the new end), not 'changed'",
            "REOPEN ERROR |" in out and "changed while being read" not in
            out.split("REOPEN")[-1] and "past the end" in out.split("REOPEN")[-1], out)


def case_torch(d):
    """tensor_type="torch": the tensor views the file through the package's
    own copy-on-write mapping, which the library's handler watches too."""
    etdp, dbg = big_dump(d, "torchview", 16 * MIB)
    code = f"""
import subprocess, sys
try:
    import torch
except ImportError:
    print("NO TORCH"); sys.exit(0)
import etcompare
i = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r}, tensor_type="torch")
ev = i.event_blocks[0].events[0]
t = ev.debug_data[0]
print("BEFORE", t[-3:].tolist(), type(t).__name__)
{HELPER.format(path=dbg)}
print("AFTER", t[-3:].tolist(), float(t[-5000:].sum()))
try:
    ev.debug_data
    print("NO ERROR")
except etcompare.Error as e:
    print("ERROR |", e)
"""
    rc, out, err = python(code)
    if "NO TORCH" in out:
        C.check("torch: not installed here, nothing to view (the numpy cases cover the rest)",
                rc == 0, err[-300:])
        return
    C.check("torch: the interpreter lives", rc == 0, (rc, out, err[-800:]))
    C.check("torch: the file's values before", "BEFORE [8.0, 9.0, 10.0] Tensor" in out, out)
    C.check("torch: zeros after the truncation", "AFTER [0.0, 0.0, 0.0] 0.0" in out, out)
    C.check("torch: then debug_data raises etcompare.Error naming the file",
            "ERROR |" in out and dbg in out and "changed while being read" in out, out)


def case_library_mid_read(d):
    size = 192 * MIB
    etdp, dbg = big_dump(d, "mid", size)
    ref_etdp, ref_dbg = big_dump(d, "midref", size)
    delays = (0.02, 0.05, 0.1, 0.2, 0.4)
    code = f"""
import subprocess, sys, time
import etcompare
ref = etcompare.Inspector(etdump_path={ref_etdp!r}, debug_buffer_path={ref_dbg!r})
for delay in {delays!r}:
    with open({dbg!r}, "r+b") as f:  # whole again, the tail 1..10 included
        f.truncate({size + 16})
        import struct
        f.seek({size - 40})
        f.write(struct.pack("<10f", *range(1, 11)))
    i = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r})
    helper = subprocess.Popen([sys.executable, "-c",
                               "import os, sys, time; time.sleep(float(sys.argv[2]));"
                               "os.truncate(sys.argv[1], 4096)", {dbg!r}, str(delay)])
    try:
        gap = i.calculate_numeric_gap(reference=ref, distance="MSE")
        rows = gap.to_dict("records") if hasattr(gap, "to_dict") else gap
        print("DONE", delay, [r.get("gap") for r in rows])
    except etcompare.Error as e:
        print("CUT", delay, "|", e)
    helper.wait()
    del i
print("ALIVE")
"""
    rc, out, err = python(code, timeout=600)
    C.check("mid-read: the interpreter lives through every truncation", rc == 0 and "ALIVE" in out,
            (rc, out[-600:], err[-800:]))
    cut = [ln for ln in out.splitlines() if ln.startswith("CUT")]
    done = [ln for ln in out.splitlines() if ln.startswith("DONE")]
    C.check("mid-read: each run finished or raised", len(cut) + len(done) == len(delays),
            out[-600:])
    C.check("mid-read: at least one cut mid-read", cut, out[-600:])
    for ln in cut:
        C.check(f"mid-read: {ln.split('|')[0].strip()}: etcompare.Error naming the file",
                dbg in ln and "changed while being read" in ln, ln)
    for ln in done:  # finished before the truncation: the right gap (same data: 0)
        C.check(f"mid-read: {ln.split('[')[0].strip()}: finished first with the right gap",
                "[[0.0]]" in ln or "[0.0]" in ln, ln)


def case_batch(d):
    size = 64 * MIB
    etdp, dbg = big_dump(d, "batchcut", size)
    ref_etdp, ref_dbg = big_dump(d, "batchref", size)
    ok_etdp, ok_dbg = big_dump(d, "batchok", 1 * MIB)
    manifest = os.path.join(d, "runs.csv")
    with open(manifest, "w") as f:
        f.write("etdump,debug_buffer,reference,reference_debug_buffer\n")
        f.write(f"{etdp},{dbg},{ref_etdp},{ref_dbg}\n")
        f.write(f"{ok_etdp},{ok_dbg},{ok_etdp},{ok_dbg}\n")
    # The worker (forked from this driver, so it has the hook) opens the
    # run's Inspector, then a helper process truncates its debug buffer;
    # the analysis goes on to read it.
    code = f"""
import subprocess, sys
import etcompare._inspector as I
import etcompare.batch as B
orig = I.Inspector.__init__
def init(self, *a, **k):
    orig(self, *a, **k)
    if k.get("debug_buffer_path") == {dbg!r}:
        {HELPER.format(path=dbg)}
I.Inspector.__init__ = init
sys.exit(B.main([{manifest!r}, "--workers", "2"]))
"""
    rc, out, err = python(code, timeout=600)
    rows = C.json_lines(out, "etdump")
    bad, good = rows.get(etdp, {}), rows.get(ok_etdp, {})
    msg = bad.get("message") or ""
    C.check("batch: the truncated run is its error line naming the file",
            bad.get("status") == "error" and "changed while being read" in msg and dbg in msg,
            (bad, err[-600:]))
    C.check("batch: the worker did not die", "worker process died" not in msg, msg)
    C.check("batch: the other run is ok", good.get("status") == "ok", (good, err[-400:]))
    C.check("batch: exit 3 (an error line)", rc == 3, (rc, err[-400:]))


if __name__ == "__main__":
    C.run_cases("sigbus_python", case_view, case_torch, case_library_mid_read, case_batch)
