#!/usr/bin/env python3
"""Faults and hostile input, second round (issue 23). Each case failed on
the code before and must hold now:
1. A mapped debug buffer truncated by another process while --show-outputs
   reads it: exit 3 "changed while being read" naming the file, never
   signal 7 (a helper process truncates the file mid-read).
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


if __name__ == "__main__":
    common.run_cases("hostile_round2", case_special_files, case_sigbus)
