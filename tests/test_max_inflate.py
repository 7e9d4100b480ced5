#!/usr/bin/env python3
"""The read budget of a debug buffer (issue 23, "reads multiplied"): a
small ETDump whose 64 debug events point at overlapping, not identical,
ranges of one 8 MiB tensor (each starts 4 bytes after the last) would read
64 x 8 MiB. Identical ranges are read once (test_hostile_round2), but these
are all different, so the total is capped: by default at 16x the debug
buffer's size, at least 64 MiB. Checked:
- the CLI (--show-outputs, --json, the profiling table alone) stops with
  exit 3 and a message naming the debug buffer, the total, the cap and
  --max-inflate;
- --max-inflate none, 64x and a byte count lift or move the cap; a bad
  value is a usage error (exit 2) before any file is read;
- the numeric gap's reference debug buffer is capped too;
- Python: Inspector raises etcompare.Error with the same message, and
  max_inflate= lifts it; the same ranges read again (30 numeric gaps) are
  counted once; the batch reports the run as its error line, and its
  --max-inflate lifts the cap;
- the budget stays far below the cap for every real file in
  tests/data/realexport (the numeric gap against itself) and the example.
"""
import glob
import json
import os
import subprocess
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "python"))
import hostile as H  # noqa: E402
import common as C  # noqa: E402
from common import ETC, FBS, FLATC  # noqa: E402
import test_escape as E  # noqa: E402
import test_sigbus_python as S  # noqa: E402

PY = sys.executable
MIB = 1 << 20


def overlapping(d, stem, nbytes=8 * MIB, events=64):
    """An ETDump whose events each point at nbytes of float32 starting 4 x i
    bytes into the debug buffer (nbytes + 4 x events long, sparse)."""
    evs = []
    for i in range(events):
        t = {"scalar_type": "FLOAT", "sizes": [nbytes // 4], "strides": [1], "offset": 4 * i}
        evs.append(E.dbg_event(t, i))
    evs.append(E.prof("Method::execute", 0, 0, 5000, chain=-1))
    etdp, dbg = H.write_etdump(d, stem, [{"name": "Execute", "events": evs}], b"", FLATC, FBS)
    with open(dbg, "wb") as f:
        f.truncate(nbytes + 4 * events)
    return etdp, dbg


def case_cli(d):
    etdp, dbg = overlapping(d, "over")
    size = os.path.getsize(dbg)
    cap = 16 * size
    for label, extra in (("--show-outputs", ["--show-outputs", "--no-table"]),
                         ("--json", ["--json", os.path.join(d, "o.json"), "--no-table"]),
                         ("the table alone", [])):
        p = C.call("--etdump", etdp, "--debug_buffer", dbg, *extra, timeout=120)
        C.check(f"overlapping ranges, {label}: exit 3", p.returncode == 3,
                (p.returncode, p.stderr[-400:]))
        err = p.stderr
        C.check(f"overlapping ranges, {label}: the message names the file, the cap and the option",
                dbg in err and f"over the cap of {cap} bytes" in err and "--max-inflate" in err
                and "16x the file's" in err and "come to " in err, err[-600:])
        C.check(f"overlapping ranges, {label}: one line, no crash", err.count("\n") <= 2, err)
    for spec in ("none", "64x", "1G"):
        p = C.call("--etdump", etdp, "--debug_buffer", dbg, "--show-outputs", "--no-table",
                   "--max-inflate", spec, timeout=300)
        C.check(f"--max-inflate {spec}: lifts the cap (exit 0)", p.returncode == 0,
                (p.returncode, p.stderr[-400:]))
        C.check(f"--max-inflate {spec}: every event shown", p.stdout.count("float32") >= 64,
                p.stdout[-300:])
    p = C.call("--etdump", etdp, "--debug_buffer", dbg, "--show-outputs", "--no-table",
               "--max-inflate", "32M")
    C.check("--max-inflate 32M: a lower cap, exit 3 naming it (no guess at overlapping "
            "data: the user set it)",
            p.returncode == 3 and "over the cap of 33554432 bytes (set to 32M)" in p.stderr
            and "overlapping data" not in p.stderr and "sets a higher cap" in p.stderr,
            (p.returncode, p.stderr[-400:]))
    for bad in ("0", "-5", "12Q", "x", "0x", "abc", "1.5G", " 2x"):
        p = C.call("--etdump", etdp, "--debug_buffer", dbg, "--max-inflate", bad)
        C.check(f"--max-inflate '{bad}': usage error (exit 2) naming the forms",
                p.returncode == 2 and "--max-inflate" in p.stderr and "FACTORx" in p.stderr,
                (p.returncode, p.stderr[-300:]))
    h = C.call("--help").stdout
    C.check("--help documents --max-inflate", "--max-inflate BYTES|FACTORx|none" in h, h[-200:])
    # the numeric gap: the reference run's debug buffer has the same budget
    small = os.path.join(d, "small")
    os.makedirs(small, exist_ok=True)
    ok_etdp, ok_dbg = overlapping(small, "one", events=1)
    p = C.call("--etdump", ok_etdp, "--debug_buffer", ok_dbg, "--reference-etdump", etdp,
               "--reference-debug-buffer", dbg, "--no-table", timeout=120)
    C.check("numeric gap: an overlapping reference debug buffer is exit 3 naming it",
            p.returncode == 3 and dbg in p.stderr and "--max-inflate" in p.stderr,
            (p.returncode, p.stderr[-400:]))


def case_python(d):
    etdp, dbg = overlapping(d, "pyover")
    code = f"""
import sys, warnings
sys.path.insert(0, {os.path.join(SRC, 'python')!r})
import etcompare
try:
    etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r})
    print("NO ERROR")
except etcompare.Error as e:
    print("ERROR", e.status, "|", e)
i = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r}, max_inflate="none")
n = sum(1 for b in i.event_blocks for e in b.events for x in e.debug_data if x is not None)
print("LIFTED", n)
i = etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r}, max_inflate=1 << 40)
print("BYTES OK")
try:
    etcompare.Inspector(etdump_path={etdp!r}, debug_buffer_path={dbg!r}, max_inflate="lots")
except etcompare.Error as e:
    print("BAD", e.status, "|", e)
"""
    okd = os.path.join(d, "okrun")
    os.makedirs(okd, exist_ok=True)
    ok_etdp, ok_dbg = overlapping(okd, "fine", events=2)
    code += f"""
# rereading never counts again: 30 numeric gaps under a cap just above one read
a = etcompare.Inspector(etdump_path={ok_etdp!r}, debug_buffer_path={ok_dbg!r}, max_inflate="17M")
r = etcompare.Inspector(etdump_path={ok_etdp!r}, debug_buffer_path={ok_dbg!r}, max_inflate="17M")
for _ in range(30):
    a.calculate_numeric_gap(reference=r)
print("REREAD OK")
"""
    p = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300,
                       env=S.py_env())
    out = p.stdout
    C.check("Python: the default cap raises etcompare.Error (limit exceeded) naming the file",
            "ERROR limit exceeded |" in out and dbg in out and "max_inflate=" in out,
            (out, p.stderr[-500:]))
    C.check("Python: max_inflate='none' lifts it", "LIFTED 64" in out, (out, p.stderr[-500:]))
    C.check("Python: max_inflate=BYTES", "BYTES OK" in out, out)
    C.check("Python: a bad max_inflate is a usage error", "BAD usage error |" in out, out)
    C.check("Python: the same ranges read again and again are counted once",
            "REREAD OK" in out, (out, p.stderr[-500:]))
    # the batch: that run's one error line, the others fine
    manifest = os.path.join(d, "runs.csv")
    with open(manifest, "w") as f:
        f.write("etdump,debug_buffer\n")
        f.write(f"{etdp},{dbg}\n{ok_etdp},{ok_dbg}\n")
    p = subprocess.run([PY, "-m", "etcompare.batch", manifest, "--workers", "1"],
                       capture_output=True, text=True, timeout=300,
                       env=S.py_env())
    rows = C.json_lines(p.stdout, "etdump")
    bad, good = rows.get(etdp, {}), rows.get(ok_etdp, {})
    C.check("batch: the overlapping run is its error line naming the cap",
            bad.get("status") == "error" and "--max-inflate" in (bad.get("message") or ""),
            (bad, p.stderr[-300:]))
    C.check("batch: the other run is fine", good.get("status") == "ok", good)
    p = subprocess.run([PY, "-m", "etcompare.batch", manifest, "--workers", "1",
                        "--max-inflate", "none"], capture_output=True, text=True, timeout=300,
                       env=S.py_env())
    st = sorted(json.loads(ln).get("status") for ln in p.stdout.splitlines() if ln.strip())
    C.check("batch --max-inflate none: both runs ok", st == ["ok", "ok"] and p.returncode == 0,
            (st, p.returncode, p.stderr[-300:]))
    p = subprocess.run([PY, "-m", "etcompare.batch", manifest, "--max-inflate", "0x"],
                       capture_output=True, text=True, timeout=60, env=S.py_env())
    C.check("batch --max-inflate 0x: a usage error (exit 2) before any run",
            p.returncode == 2 and "--max-inflate" in p.stderr and not p.stdout,
            (p.returncode, p.stderr[-300:]))


def case_real(d):
    real = os.path.join(SRC, "tests", "data", "realexport")
    pairs = []
    for etdp in sorted(glob.glob(os.path.join(real, "*.etdp"))):
        stem = etdp[:-5]
        for dbg in (stem + ".bin", stem + "_debug.bin", stem + ".debug.bin"):
            if os.path.exists(dbg):
                pairs.append((etdp, dbg))
                break
    C.check("real files: some ETDumps with a debug buffer to check", pairs, real)
    for etdp, dbg in pairs:
        # the tightest cap the defaults could meet: the buffer read 4 times
        size = os.path.getsize(dbg)
        p = C.call("--etdump", etdp, "--debug_buffer", dbg, "--show-outputs", "--json",
                   os.path.join(d, "r.json"), "--reference-etdump", etdp,
                   "--reference-debug-buffer", dbg, "--max-inflate", str(max(4 * size, 1)),
                   timeout=300)
        C.check(f"real {os.path.basename(etdp)}: all readers within 4x the buffer's size",
                p.returncode in (0, 1) and "--max-inflate" not in p.stderr,
                (p.returncode, p.stderr[-400:]))
    p = C.call("--example", "--show-outputs", timeout=120)
    C.check("the example: within the default cap", p.returncode in (0, 1)
            and "--max-inflate" not in p.stderr, (p.returncode, p.stderr[-300:]))


if __name__ == "__main__":
    C.run_cases("max_inflate", case_cli, case_python, case_real)
