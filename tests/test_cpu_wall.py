#!/usr/bin/python3
"""No core spins: etcompare's CPU time (user + sys, every thread) stays
within 1.3 x its wall time plus 50 ms, on the table-only path and with the
float64 reference run (OpenBLAS linked, two threads). OpenBLAS starts a
thread pool when the library is loaded and its idle threads may busy-wait;
a spinning pool shows as CPU time above wall time. A ratio, not a timing:
a loaded machine only makes the wall time longer.
"""
import os
import resource
import subprocess
import time

import common as C

EX = os.path.join(C.SRC, "examples")
ETDUMP = os.path.join(EX, "example.etdp")
DEBUG = os.path.join(EX, "example_debug.bin")
RECORD = os.path.join(EX, "example.etrecord")


def cpu_and_wall(args, runs=3):
    """Sum over `runs` runs of (CPU s, wall s, worst exit code)."""
    env = dict(os.environ, ETC_THREADS="2")
    cpu = wall = 0.0
    worst = 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        p = subprocess.run([C.ETC, *args], capture_output=True, env=env)
        wall += time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        worst = max(worst, p.returncode)
    return cpu, wall, worst


CASES = [
    ("table only", ["--etdump", ETDUMP, "--debug_buffer", DEBUG]),
    ("with the reference run", ["--etdump", ETDUMP, "--debug_buffer", DEBUG, "--etrecord",
                                RECORD]),
]
for name, args in CASES:
    cpu, wall, code = cpu_and_wall(args)
    C.check(f"{name}: it ran (exit {code})", code in (0, 1), code)
    C.check(f"{name}: CPU {cpu * 1e3:.0f} ms <= 1.3 x wall {wall * 1e3:.0f} ms + 50 ms",
            cpu <= 1.3 * wall + 0.05, f"cpu={cpu:.3f} wall={wall:.3f}")

C.finish()
