#!/usr/bin/env python3
"""Memory per batch worker (issue 26: "memory per worker within 2x of one
run's inputs"): `python3 -m etcompare.batch --group-summary` over a farm of
RUNS ETDumps of one input (DEVICES devices), each logging one intermediate
output and the program output of N float32 values, with a reference ETDump
of the same size, run twice: with N large and with N = 1,024 (the
baseline: interpreter, numpy, the library, the pool). The peak RSS
(VmHWM) of every process of the batch is sampled from /proc every 20 ms;
a worker's cost of the data is its peak with the large farm less its peak
with the tiny one, set against one run's inputs (ETDump + debug buffer +
reference ETDump + reference debug buffer).

Usage: bench/bench_farm_memory.py [--elems N] [--runs R] [--workers W] [--dir D]
Timings and sizes go to stdout; nothing is asserted (bench/, not tests/).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FBS = os.path.join(SRC, "schema", "etdump.fbs")


def write_run(d, stem, values, index, flatc):
    """An ETDump of one Execute run: instruction 0 logs values[0], the
    program output is values[1]; its debug buffer holds both."""
    buf = bytearray()
    tensors = []
    for v in values:
        while len(buf) % 16:
            buf.append(0)
        tensors.append({"scalar_type": "FLOAT", "sizes": [int(v.size)], "strides": [1],
                        "offset": len(buf)})
        buf += v.astype(np.float32).tobytes()
    events = [{"debug_event": {"chain_index": 0, "instruction_id": 0,
                               "debug_entry": {"val": "Tensor", "tensor": tensors[0]}}},
              {"profile_event": {"name": "native_call_add.out", "chain_index": 0,
                                 "instruction_id": 0, "start_time": 100, "end_time": 200}},
              {"debug_event": {"chain_index": 18446744073709551615, "instruction_id": 0,
                               "debug_entry": {"val": "Tensor", "tensor": tensors[1],
                                               "output": {"bool_val": True}}}},
              {"profile_event": {"name": "Method::execute", "chain_index": -1,
                                 "instruction_id": 0, "start_time": 50, "end_time": 300}}]
    src = os.path.join(d, stem + ".json")
    with open(src, "w") as f:
        json.dump({"version": 0, "run_data": [{"name": "Execute", "events": events,
                                               "bundled_input_index": index}]}, f)
    subprocess.run([flatc, "-b", "--size-prefixed", "-o", d, FBS, src], check=True,
                   capture_output=True)
    os.remove(src)
    dbg = os.path.join(d, stem + "_debug.bin")
    with open(dbg, "wb") as f:
        f.write(bytes(buf))
    return os.path.join(d, stem + ".etdp"), dbg


def farm(d, n, runs, devices, flatc):
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = (x * np.float32(0.5)).astype(np.float32)
    ref = write_run(d, "ref", [x, y], 0, flatc)
    rows = []
    for r in range(runs):
        j = rng.uniform(-1e-5, 1e-5, n).astype(np.float32)
        etdp, dbg = write_run(d, f"run{r}", [x + j, y + j], 0, flatc)
        rows.append({"etdump": etdp, "debug_buffer": dbg, "reference": ref[0],
                     "reference_debug_buffer": ref[1], "device": f"dev{r % devices}"})
    man = os.path.join(d, "farm.csv")
    with open(man, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    one = sum(os.path.getsize(p) for p in (rows[0]["etdump"], rows[0]["debug_buffer"],
                                             ref[0], ref[1]))
    return man, one


def tree(root):
    """The pids of root and its descendants."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("VmHWM:"):
                    return int(ln.split()[1]) * 1024
    except OSError:
        pass
    return 0


def batch(man, out_dir, workers):
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
    out = os.path.join(out_dir, "summary.jsonl")
    cmd = [sys.executable, "-m", "etcompare.batch", man, "-o", out, "--workers", str(workers),
           "--group-summary", os.path.join(out_dir, "groups.jsonl")]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peaks = {}
    while p.poll() is None:
        for pid in tree(p.pid):
            h = hwm(pid)
            if h:
                peaks[pid] = max(peaks.get(pid, 0), h)
        time.sleep(0.02)
    _, err = p.communicate()
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"batch failed ({p.returncode}): {err.decode()[-2000:]}")
    main = peaks.pop(p.pid, 0)
    return main, sorted(peaks.values(), reverse=True), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elems", type=int, default=4 << 20)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--flatc", default=os.environ.get("ETC_FLATC", "flatc"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        res = {}
        for tag, n in (("tiny", 1024), ("large", a.elems)):
            man, one = farm(os.path.join(d, tag), n, a.runs, a.devices, a.flatc)
            main_rss, workers, wall = batch(man, os.path.join(d, tag), a.workers)
            res[tag] = (one, main_rss, workers, wall)
            print(f"{tag}: {a.runs} runs x {n} float32 values (2 tensors a run), one run's "
                  f"inputs {one / 2**20:.2f} MiB; main process peak {main_rss / 2**20:.1f} MiB; "
                  f"worker peaks {[round(w / 2**20, 1) for w in workers]} MiB; {wall:.2f} s")
        one = res["large"][0]
        base = max(res["tiny"][2]) if res["tiny"][2] else 0
        top = max(res["large"][2]) if res["large"][2] else 0
        print(f"worker data cost: {(top - base) / 2**20:.1f} MiB = "
              f"{(top - base) / one:.2f}x one run's inputs ({one / 2**20:.1f} MiB)")
        print(f"main process data cost: {(res['large'][1] - res['tiny'][1]) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
