#!/usr/bin/env python3
"""Faults and hostile input, second round (issue 23). Each case failed on
the code before and must hold now:
1. A mapped debug buffer truncated by another process while --show-outputs
   reads it: exit 3 "changed while being read" naming the file, never
   signal 7 (a helper process truncates the file mid-read).
5. The numeric gap's --force warning (an ETRecord that does not fit its
   ETDump) quoting an event named native_call_ESC[2J ESC]0;PWN BEL mul.out
   and an ETRecord op aten.ESC[31mtanh U+202E.default: stderr carries
   the escapes, no raw control or bidi character; so do the ETRecord's,
   the inspector's and the delegate-scale warnings.
6. gnuplot, with a fake `gnuplot` first on PATH: one that never exits is
   killed after ETC_GNUPLOT_TIMEOUT x (plots + 3) s with a message naming
   the plot, and no temporary file is left; etcompare killed by SIGTERM
   while it waits leaves no temporary file either (plot folder and TMPDIR);
   one that exits 1 with a message is reported with its status and message
   (not "disk full"); a non-PNG file ending in IEND is not renamed to .png,
   and the HTML report is still written with a note.
8. --report alone: a failing gnuplot, or a TMPDIR where no folder can be
   made, is a warning (exit 0) and the report is written.
4. Reads multiplied: 64 debug events alternating between one 256 MiB tensor
   and a small one (so that a cache of the last tensor misses every time):
   --show-outputs, --json and the numeric gap against itself each take at
   most 2x the time (+0.5 s of start-up noise, best of two) and 2x the peak
   RSS of one event reading that tensor once.
2. Shapes that differ deep inside a long rank: runtime [1]*38+[2,3] against
   reference [1]*38+[3,2] (same flat data), and the same at rank 64, are a
   shape mismatch in the accuracy gate and in the numeric gap (never exit 0);
   the printed shape elides its middle with a marker instead of cutting.
7. An ETRecord quantize_per_channel whose axis is as_float 1e300: the row
   says the axis is not a dimension (no undefined float-to-int conversion).
3. Devices, FIFOs and sockets as inputs: exit 3 "not a regular file"
   at once (a FIFO without a writer does not hang), in the CLI and as the
   batch's error lines; standard input ("-") is read up to a cap.
"""
import os
import signal
import socket
import subprocess
import sys
import time

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
import hostile as H  # noqa: E402
import common  # noqa: E402
from common import ETC, FBS, FLATC  # noqa: E402
import test_escape as E  # noqa: E402
from test_accuracy import check  # noqa: E402


def big_dump(d, stem, nbytes, events=1, output=True, interleave=False):
    """An ETDump with `events` debug events, all pointing at one float32
    tensor of nbytes at offset 0 (with `interleave`, every other event is a
    4-element tensor past it instead); the debug buffer is a sparse file."""
    n = nbytes // 4
    t = {"scalar_type": "FLOAT", "sizes": [n], "strides": [1], "offset": 0}
    tiny = {"scalar_type": "FLOAT", "sizes": [4], "strides": [1], "offset": nbytes}
    evs = [E.dbg_event(tiny if interleave and i % 2 else t, i, output=output)
           for i in range(events)]
    evs.append(E.prof("Method::execute", 0, 0, 5000, chain=-1))
    etdp, dbg = H.write_etdump(d, stem, [{"name": "Execute", "events": evs}], b"", FLATC, FBS)
    with open(dbg, "wb") as f:
        f.truncate(nbytes + 16)
    return etdp, dbg


def case_sigbus(d):
    size = 1 << 31
    etdp, dbg = big_dump(d, "trunc", size)
    seen, died = [], []
    # AddressSanitizer takes SIGBUS for itself (handle_sigbus=1): leave it to
    # etcompare's own recovery point, which is what is tested. The recovery
    # jumps past the clean-up to exit 3 at once, so what was allocated is not
    # freed (the process ends): no leak check for these runs.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") +
                           ":handle_sigbus=0:detect_leaks=0").lstrip(":")
    for delay in (0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        with open(dbg, "wb") as f:
            f.truncate(size + 16)
        p = subprocess.Popen([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--show-outputs",
                              "--no-table"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=env)
        # the helper process: truncates the file to 4 KB while it is read
        helper = subprocess.Popen([sys.executable, "-c",
                                   "import os,sys,time; time.sleep(float(sys.argv[2]));"
                                   "os.truncate(sys.argv[1], 4096)", dbg, str(delay)])
        _, err = p.communicate(timeout=120)
        helper.wait()
        if p.returncode < 0:
            died.append((delay, -p.returncode))
        if b"changed while being read" in err:
            seen.append((delay, p.returncode, err))
    check("truncated underfoot: never killed by a signal", not died, died)
    check("truncated underfoot: caught mid-read at least once", seen, "no run was cut")
    for delay, rc, err in seen:
        check(f"truncated after {delay} s: exit 3", rc == 3, rc)
        check(f"truncated after {delay} s: the message names the debug buffer",
              dbg.encode() in err and b"error:" in err, err)


def case_special_files(d):
    etdp, dbg = big_dump(d, "small", 64)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    sock_path = os.path.join(d, "sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(sock_path)
    for label, path in (("/dev/zero", "/dev/zero"), ("a FIFO", fifo), ("/dev/null", "/dev/null"),
                        ("a socket", sock_path)):
        for flag, args in (("--debug_buffer", ["--etdump", etdp, "--debug_buffer", path,
                                               "--show-outputs", "--no-table"]),
                           ("--etdump", ["--etdump", path, "--no-table"])):
            t0 = time.monotonic()
            try:
                p = subprocess.run([ETC, *args], capture_output=True, timeout=20)
            except subprocess.TimeoutExpired:
                check(f"{flag} {label}: ends", False, "still running after 20 s")
                continue
            took = time.monotonic() - t0
            check(f"{flag} {label}: exit 3", p.returncode == 3, (p.returncode, p.stderr))
            check(f"{flag} {label}: 'not a regular file'", b"not a regular file" in p.stderr,
                  p.stderr)
            check(f"{flag} {label}: at once (< 5 s)", took < 5, took)
    s.close()
    # the batch: a manifest row with /dev/zero or a FIFO is that run's error line
    man = os.path.join(d, "special.csv")
    with open(man, "w") as f:
        f.write(f"etdump,debug_buffer\n/dev/zero,\n{fifo},\n{etdp},/dev/zero\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
    try:
        p = subprocess.run([sys.executable, "-m", "etcompare.batch", "--workers", "1", man],
                           capture_output=True, text=True, env=env, timeout=120)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
        check("batch with /dev/zero and a FIFO: three error lines, nothing hangs",
              len(lines) == 3 and all('"status": "error"' in ln and "not a regular file" in ln
                                      for ln in lines), p.stdout[-800:] + p.stderr[-400:])
    except subprocess.TimeoutExpired:
        check("batch with /dev/zero and a FIFO: ends", False, "still running after 120 s")
    # standard input: read, and capped
    with open(dbg, "rb") as f:
        p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", "-", "--show-outputs",
                            "--no-table"], stdin=f, capture_output=True, timeout=20)
    check("--debug_buffer - from a file on stdin: exit 0", p.returncode == 0, p.stderr)
    with open("/dev/zero", "rb") as f:
        p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", "-", "--show-outputs",
                            "--no-table"], stdin=f, capture_output=True, timeout=120)
    check("--debug_buffer - fed without end: exit 3", p.returncode == 3, p.stderr)
    check("--debug_buffer - fed without end: the cap is named",
          b"standard input is larger than 1024 MiB" in p.stderr, p.stderr)


def case_warnings(d):
    import etrecord_gen as G
    import test_accuracy as A
    ev_name = "native_call_\x1b[2J\x1b]0;PWN\x07mul.out"
    op = "aten.\x1b[31mtanh\u202e.default"
    nodes = [G.node(f"n{i}", op, inputs=[("self", f"n{i - 1}" if i else "x")], handle=i + 1)
             for i in range(2)]
    rec = os.path.join(d, "warn.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1], "1": [2]}})
    dm = A.Dump()
    events = []
    for i in range(2):
        t = dm.tensor("FLOAT", [1.0, 2.0 + i], [2])
        events += [E.dbg_event(t, i), E.prof(ev_name, i, 1000 * i, 1000 * i + 500)]
    events.append(E.prof("Method::execute", 0, 0, 5000, chain=-1))
    etdp, dbg = H.write_etdump(d, "warn", [{"name": "Execute", "events": events}], dm.buf,
                               FLATC, FBS)
    base = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--reference-etdump",
            etdp, "--reference-debug-buffer", dbg, "--no-table"]
    p = subprocess.run([ETC, *base, "--force"], capture_output=True)
    err = p.stderr
    check("--force warning: emitted", b"warning:" in err and b"--force" in err, err)
    check("--force warning: no raw control, C1, bidi or invalid byte on stderr",
          not H.raw_bytes_found(err), repr(err[:600]))
    check("--force warning: the event name shown escaped",
          b"native_call_\\x1b[2J\\x1b]0;PWN\\x07mul.out" in err, repr(err[:600]))
    check("--force warning: the op shown escaped", b"aten.\\x1b[31mtanh\\u202e.default" in err,
          repr(err[:600]))
    p = subprocess.run([ETC, *base], capture_output=True)
    check("without --force: the same message as an error, escaped",
          p.returncode == 3 and not H.raw_bytes_found(p.stderr) and b"\\u202e" in p.stderr,
          (p.returncode, p.stderr[:600]))


FAKE_HANG = """#!/bin/sh
exec sleep 1000
"""
FAKE_FAIL = """#!/bin/sh
cat >/dev/null
echo "gnuplot: fake failure: cannot open display" >&2
exit 1
"""
# Follows the combined script: writes a file that ends like a PNG but is not one.
FAKE_NOT_PNG = """#!/usr/bin/python3
import os, re, sys
cwd, out = ".", None
for line in sys.stdin:
    m = re.match(r"print '(.*)'", line)
    if m:
        sys.stderr.write(m.group(1) + "\\n")
    m = re.match(r"cd '(.*)'", line)
    if m:
        cwd = m.group(1)
    m = re.match(r"outfile = '(.*)'", line)
    if m:
        with open(os.path.join(cwd, m.group(1)), "wb") as f:
            f.write(b"<html>not a png</html>" + b"IEND\\xaeB`\\x82")
"""


def fake_gnuplot(d, name, text):
    bindir = os.path.join(d, "fakebin-" + name)
    os.makedirs(bindir, exist_ok=True)
    path = os.path.join(bindir, "gnuplot")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])


def temp_left(folder):
    return [f for f in os.listdir(folder) if f.startswith(".") or "XXXX" in f
            or f.startswith("etcompare-report-")] if os.path.isdir(folder) else []


def case_gnuplot(d):
    import test_accuracy as A
    etdp, dbg, rec = A.two_run_fixture(d, "gp", A.A0, A.A1)
    base = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table"]
    # 1. a gnuplot that never exits
    env = fake_gnuplot(d, "hang", FAKE_HANG)
    env["ETC_GNUPLOT_TIMEOUT"] = "1"
    out = os.path.join(d, "plots-hang")
    t0 = time.monotonic()
    try:
        p = subprocess.run([ETC, *base, "--plot", out], capture_output=True, text=True, env=env,
                           timeout=120)
    except subprocess.TimeoutExpired:
        check("hanging gnuplot: etcompare ends", False, "still waiting after 120 s")
        return
    took = time.monotonic() - t0
    check("hanging gnuplot: exit 4", p.returncode == 4, (p.returncode, p.stderr[-400:]))
    check("hanging gnuplot: killed with a message naming the plot",
          "did not finish within" in p.stderr and "killed while it made plot " in p.stderr,
          p.stderr[-400:])
    check("hanging gnuplot: the timeout is scaled to the plots (1 s each + 3)", took < 90, took)
    check("hanging gnuplot: no temporary file left in the plot folder", not temp_left(out),
          temp_left(out))
    # 2. etcompare killed while gnuplot hangs: no temporary file in the plot folder or TMPDIR
    env["ETC_GNUPLOT_TIMEOUT"] = "600"
    tmpdir = os.path.join(d, "tmp-kill")
    os.makedirs(tmpdir, exist_ok=True)
    env["TMPDIR"] = tmpdir
    for label, args, folder in (("--plot", ["--plot", os.path.join(d, "plots-kill")],
                                 os.path.join(d, "plots-kill")),
                                ("--report alone", ["--report", os.path.join(d, "k.html")],
                                 tmpdir)):
        old_html = os.path.join(d, "k.html")
        with open(old_html, "w") as f:
            f.write("OLD report\n")
        p = subprocess.Popen([ETC, *base, *args], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env)
        time.sleep(2.5)
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            check(f"SIGTERM during gnuplot ({label}): etcompare ends", False, "hung")
            continue
        check(f"SIGTERM during gnuplot ({label}): ended by the signal",
              p.returncode == -signal.SIGTERM, (p.returncode, err[-300:]))
        check(f"SIGTERM during gnuplot ({label}): no temporary file left",
              not temp_left(folder), temp_left(folder))
        if "--report" in args:
            check("SIGTERM during gnuplot (--report alone): the old report is kept, not "
                  "replaced by one missing its plots",
                  open(old_html).read() == "OLD report\n" and b"report is not written" in err,
                  err[-300:])
    # 3. a gnuplot that exits 1 with a message
    env = fake_gnuplot(d, "fail", FAKE_FAIL)
    out = os.path.join(d, "plots-fail")
    p = subprocess.run([ETC, *base, "--plot", out], capture_output=True, text=True, env=env,
                       timeout=120)
    check("gnuplot exits 1: exit 4", p.returncode == 4, (p.returncode, p.stderr[-400:]))
    check("gnuplot exits 1: its status and stderr are reported",
          "exited with status 1" in p.stderr and "fake failure: cannot open display" in p.stderr,
          p.stderr[-400:])
    check("gnuplot exits 1: not blamed on the disk", "disk full" not in p.stderr, p.stderr[-400:])
    check("gnuplot exits 1: no temporary file left", not temp_left(out), temp_left(out))
    # 8. --report alone with that gnuplot: a warning, and the report
    html = os.path.join(d, "fail.html")
    p = subprocess.run([ETC, *base, "--report", html], capture_output=True, text=True, env=env,
                       timeout=120)
    check("--report alone, gnuplot fails: exit 0", p.returncode == 0,
          (p.returncode, p.stderr[-400:]))
    check("--report alone, gnuplot fails: a warning", "warning:" in p.stderr, p.stderr[-400:])
    page = open(html, encoding="utf-8").read() if os.path.exists(html) else ""
    check("--report alone, gnuplot fails: the report is written with a note",
          "left out" in page and "exited with status 1" in page, page[-300:])
    # 4. a non-PNG that ends in IEND
    env = fake_gnuplot(d, "notpng", FAKE_NOT_PNG)
    out = os.path.join(d, "plots-notpng")
    html = os.path.join(d, "notpng.html")
    p = subprocess.run([ETC, *base, "--plot", out, "--report", html], capture_output=True,
                       text=True, env=env, timeout=120)
    pngs = [f for f in os.listdir(out) if f.endswith(".png")] if os.path.isdir(out) else []
    check("non-PNG from gnuplot: never renamed to .png", not pngs, pngs)
    check("non-PNG from gnuplot: the report is written all the same", os.path.exists(html),
          p.stderr[-400:])
    page = open(html, encoding="utf-8").read() if os.path.exists(html) else ""
    check("non-PNG from gnuplot: the report says the plots were left out",
          "left out" in page and "not a PNG" in page, page[-300:])
    check("non-PNG from gnuplot: no temporary file left", not temp_left(out), temp_left(out))
    # 8. --report alone with a TMPDIR where nothing can be created (a file, so
    # that it holds for root too)
    notdir = os.path.join(d, "tmp-is-a-file")
    with open(notdir, "w") as f:
        f.write("x")
    env = dict(os.environ, TMPDIR=notdir)
    html = os.path.join(d, "rotmp.html")
    p = subprocess.run([ETC, *base, "--report", html], capture_output=True, text=True, env=env,
                       timeout=120)
    check("--report alone, no temporary folder possible: exit 0 (a warning)", p.returncode == 0,
          (p.returncode, p.stderr[-400:]))
    check("--report alone, no temporary folder possible: the report is written",
          os.path.exists(html) and "warning:" in p.stderr, p.stderr[-400:])


def timed(args):
    """(seconds, peak RSS in KB, exit code) of etcompare ARGS, best of two."""
    best = None
    for _ in range(2):
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", ETC, *args], capture_output=True)
        took = time.monotonic() - t0
        rss = int(p.stderr.decode().strip().splitlines()[-1])
        if best is None or took < best[0]:
            best = (took, rss, p.returncode)
    return best


def case_aliasing(d):
    size = 1 << 28
    one = big_dump(d, "alias1", size, events=1, output=False)
    many = big_dump(d, "alias64", size, events=64, output=False, interleave=True)
    for label, extra in (("--show-outputs", ["--show-outputs"]),
                         ("--json", ["--json", os.devnull]),
                         ("numeric gap against itself", ["--reference-etdump", None,
                                                         "--reference-debug-buffer", None])):
        res = []
        for etdp, dbg in (one, many):
            args = [a if a is not None else None for a in extra]
            if label.startswith("numeric"):
                args = ["--reference-etdump", etdp, "--reference-debug-buffer", dbg]
            res.append(timed(["--etdump", etdp, "--debug_buffer", dbg, "--no-table", *args]))
        (t1, r1, c1), (t64, r64, c64) = res
        check(f"aliasing {label}: both run (exit 0)", c1 == 0 and c64 == 0, (c1, c64))
        check(f"aliasing {label}: 64 events on one tensor within 2x the time of one",
              t64 <= 2 * t1 + 0.5, f"{t64:.2f} s vs {t1:.2f} s")
        check(f"aliasing {label}: within 2x the peak RSS of one", r64 <= 2 * r1 + 8192,
              f"{r64} KB vs {r1} KB")


def case_shapes(d):
    sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
    import make_npz as NPZ
    import test_accuracy as A
    vals = [float(v) for v in range(6)]
    for rank in (40, 64):
        act_shape = [1] * (rank - 2) + [2, 3]
        ref_shape = [1] * (rank - 2) + [3, 2]
        # accuracy gate: a program output against a reference .npz
        dm = A.Dump()
        t = dm.tensor("FLOAT", vals, act_shape)
        runs = [{"name": "Execute", "events": [E.dbg_event(t, 0, A.OUT_CHAIN, output=True),
                                               E.prof("Method::execute", 0, 1, 9, chain=-1)]}]
        etdp, dbg = H.write_etdump(d, f"shape{rank}", runs, dm.buf, FLATC, FBS)
        refs = os.path.join(d, f"shape{rank}.npz")
        NPZ.write_npz(refs, [("0.0", A.npy32(vals, ref_shape))])
        # no output fits its reference: refused as references of another program
        # (exit 3, the shapes elided with a marker, never cut); --force compares
        p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                            refs, "--min-snr", "10"], capture_output=True, text=True)
        check(f"rank {rank} accuracy: no output fits: exit 3, the shapes elided with a marker",
              p.returncode == 3 and "\u2026" in p.stderr and "do not belong" in p.stderr,
              (p.returncode, p.stderr[-400:]))
        p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                            refs, "--min-snr", "10", "--force"], capture_output=True, text=True)
        check(f"rank {rank} accuracy --force: [..,2,3] against [..,3,2] does not pass (exit 1)",
              p.returncode == 1, (p.returncode, p.stderr[-300:]))
        check(f"rank {rank} accuracy: a shape mismatch", "shape" in p.stdout + p.stderr,
              p.stdout[-600:])
        check(f"rank {rank} accuracy: the printed shape elides the middle with a marker",
              "\u2026" in p.stdout and "more" in p.stdout, p.stdout[-600:])
        js = os.path.join(d, f"shape{rank}.json")
        subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                        refs, "--min-snr", "10", "--no-table", "--force", "--json", js],
                       capture_output=True)
        import json
        try:
            rows = json.load(open(js))["accuracy"]["rows"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            rows = [{"error": repr(e)}]
        want = "[" + ", ".join(str(x) for x in act_shape) + "]"
        want_ref = "[" + ", ".join(str(x) for x in ref_shape) + "]"
        check(f"rank {rank} accuracy JSON: the whole shapes, not elided",
              rows and rows[0].get("shape") == want and rows[0].get("reference_shape") == want_ref,
              rows[:1])
        # numeric gap: an intermediate output against a reference ETDump
        out = {}
        for side, shape in (("rt", act_shape), ("ref", ref_shape)):
            dm = A.Dump()
            t = dm.tensor("FLOAT", vals, shape)
            evs = [E.dbg_event(t, 0), E.prof("native_call_add.out", 0, 10, 20),
                   E.prof("Method::execute", 0, 0, 50, chain=-1)]
            out[side] = H.write_etdump(d, f"gap{rank}{side}", [{"name": "Execute", "events": evs}],
                                       dm.buf, FLATC, FBS)
        p = subprocess.run([ETC, "--etdump", out["rt"][0], "--debug_buffer", out["rt"][1],
                            "--reference-etdump", out["ref"][0], "--reference-debug-buffer",
                            out["ref"][1], "--min-snr", "10", "--no-table"],
                           capture_output=True, text=True)
        check(f"rank {rank} numeric gap: [..,2,3] against [..,3,2] is not a pass (exit != 0)",
              p.returncode != 0, (p.returncode, p.stdout[-300:], p.stderr[-300:]))
        check(f"rank {rank} numeric gap: reported as a shape mismatch",
              "shape" in p.stdout + p.stderr and p.returncode in (1, 3),
              (p.returncode, p.stdout[-300:], p.stderr[-300:]))


def case_axis(d):
    import numpy as np
    import etrecord_gen as G
    import test_numgap_real as R
    ref = R.f32(np.linspace(-1, 1, 30).reshape(2, 3, 5))
    s3, z3 = [0.01, 0.02, 0.03], [0, 2, -1]
    q = R.quantize(ref, s3, z3, axis=1)
    for label, kind, axis in (("as_float 1e300", "as_float", 1e300),
                              ("as_float -1e300", "as_float", -1e300),
                              ("as_float 1.5", "as_float", 1.5),
                              ("as_int 2**62", "as_int", 2 ** 62)):
        nodes = [R.raw_node("quantize_1", R.QPC, [("input", "as_tensor", "x"),
                                                  ("scales", "as_floats", s3),
                                                  ("zero_points", "as_ints", z3),
                                                  ("axis", kind, axis),
                                                  ("quant_min", "as_int", -128),
                                                  ("quant_max", "as_int", 127),
                                                  ("dtype", "as_scalar_type", 1)], handle=1)]
        rec = os.path.join(d, "axis.etrecord")
        G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                         debug_handle_map={"forward": {"0": [1]}})
        dm = R.Dump()
        dm.op(0, "native_call_quantize_per_channel.out", [dm.tensor("CHAR", q)])
        etdp, dbg = dm.write(d, "axis_dev")
        npz = R.write_npz(os.path.join(d, "axis.npz"), [("1", ref)]) or os.path.join(d, "axis.npz")
        rc, out, err, ng = R.gap(d, "axis", "--etdump", etdp, "--debug_buffer", dbg,
                                 "--etrecord", rec, "--reference-intermediates", npz)
        rows = ng.get("rows", [])
        check(f"quantize axis {label}: not killed, a result", rc in (0, 1, 3), (rc, err))
        check(f"quantize axis {label}: the row says the axis is not a dimension",
              len(rows) == 1 and "is not a dimension" in (rows[0].get("reason") or ""),
              (rc, err[-300:], rows and rows[0].get("reason")))


if __name__ == "__main__":
    common.run_cases("hostile_round2", case_shapes, case_aliasing, case_gnuplot, case_warnings, case_axis, case_special_files, case_sigbus)
