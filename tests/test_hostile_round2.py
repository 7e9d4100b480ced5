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
7. An ETRecord quantize_per_channel whose axis is as_float 1e300: the row
   says the axis is not a dimension (no undefined float-to-int conversion).
3. Devices, FIFOs and sockets as inputs: exit 3 "not a regular file"
   at once (a FIFO without a writer does not hang); standard input ("-")
   is read up to a cap.
"""
import os
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


def big_dump(d, stem, nbytes, events=1):
    """An ETDump with `events` debug events, all pointing at one float32
    tensor of nbytes at offset 0; the debug buffer is a sparse file."""
    n = nbytes // 4
    t = {"scalar_type": "FLOAT", "sizes": [n], "strides": [1], "offset": 0}
    evs = [E.dbg_event(t, i, output=True) for i in range(events)]
    evs.append(E.prof("Method::execute", 0, 0, 5000, chain=-1))
    etdp, dbg = H.write_etdump(d, stem, [{"name": "Execute", "events": evs}], b"", FLATC, FBS)
    with open(dbg, "wb") as f:
        f.truncate(nbytes + 16)
    return etdp, dbg


def case_sigbus(d):
    size = 1 << 31
    etdp, dbg = big_dump(d, "trunc", size)
    seen, died = [], []
    for delay in (0.05, 0.1, 0.2, 0.3, 0.5, 0.8):
        with open(dbg, "wb") as f:
            f.truncate(size + 16)
        p = subprocess.Popen([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--show-outputs",
                              "--no-table"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
    common.run_cases("hostile_round2", case_warnings, case_axis, case_special_files, case_sigbus)
