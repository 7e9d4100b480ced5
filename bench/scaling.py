#!/usr/bin/env python3
"""bench/scaling.py - hostile shapes at size N and 4N: the time of a run
must grow about 4x (linear), never 16x (quadratic).

  runs      N runs of 10 events (grouping of runs into EventBlocks)
  long      1 run of N events
  delegate  one delegate instruction with N delegated events (int ids) and a
            delegate_map of N ids (resolving each id against the map)
  handles   one instruction whose debug_handle_map entry lists N handles,
            each naming one graph node (deduplicating the linked nodes)

Usage: BUILD=build-x bench/scaling.py [N_events N_delegate]
(defaults 250000 and 25000). Prints a markdown table: shape, N, CPU seconds
at N and at 4N (best of 3), ratio.
"""
import json
import os
import subprocess
import sys
import resource
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests"))
import etrecord_gen as G  # noqa: E402

BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(SRC, "build")))
ETC = os.path.join(BUILD, "etcompare")
GEN = os.path.join(BUILD, "bench", "gen_etdump")
FBS = os.path.join(SRC, "schema", "etdump.fbs")


def best(args, n=3):
    """Least CPU time (user + sys) of n runs: wall time is meaningless on a
    shared machine, CPU time much less affected."""
    t = []
    for _ in range(n):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run([ETC, *args], capture_output=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"etcompare {args}: exit {p.returncode}: {p.stderr[-500:]}")
    return min(t)


def flatc(tmp, name, events):
    js = os.path.join(tmp, name + ".json")
    with open(js, "w") as f:
        json.dump({"version": 0, "run_data": [{"name": "Execute", "events": events}]}, f)
    subprocess.run(["flatc", "-b", "--size-prefixed", "-o", tmp, FBS, js], check=True)
    os.unlink(js)
    return os.path.join(tmp, name + ".etdp")


def shape_runs(tmp, n):
    p = os.path.join(tmp, f"runs{n}.etdp")
    subprocess.run([GEN, "--runs", str(n // 10), "--events", "10", "--numel", "0",
                    "--etdump", p], check=True, capture_output=True)
    return ["--etdump", p, "--no-table", "--tsv", "/dev/null"]


def shape_long(tmp, n):
    p = os.path.join(tmp, f"long{n}.etdp")
    subprocess.run([GEN, "--runs", "1", "--events", str(n), "--numel", "0", "--etdump", p],
                   check=True, capture_output=True)
    return ["--etdump", p, "--no-table", "--tsv", "/dev/null"]


def shape_delegate(tmp, n):
    ev = [{"profile_event": {"chain_index": 0, "instruction_id": 0, "delegate_debug_id_int": i,
                             "start_time": i, "end_time": i + 1}} for i in range(n)]
    ev.append({"profile_event": {"name": "DELEGATE_CALL", "chain_index": 0, "instruction_id": 0,
                                 "start_time": 0, "end_time": n + 1}})
    dump = flatc(tmp, f"delegate{n}", ev)
    nodes = [G.node(f"n{i}", "aten.add.Tensor", handle=i + 1) for i in range(16)]
    rec = os.path.join(tmp, f"delegate{n}.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1]}},
                     delegate_map={"forward": {"0": {"name": "B", "delegate_map": {
                         str(i): [i % 16 + 1] for i in range(n)}}}})
    return ["--etdump", dump, "--etrecord", rec, "--no-table", "--tsv", "/dev/null"]


def shape_handles(tmp, n):
    dump = flatc(tmp, f"handles{n}", [{"profile_event": {
        "name": "native_call_add.out", "chain_index": 0, "instruction_id": 0,
        "start_time": 0, "end_time": 1}}])
    nodes = [G.node(f"n{i}", "aten.add.Tensor", handle=i + 1) for i in range(n)]
    rec = os.path.join(tmp, f"handles{n}.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": list(range(1, n + 1))}})
    return ["--etdump", dump, "--etrecord", rec, "--no-table", "--tsv", "/dev/null"]


def main():
    n_events = int(sys.argv[1]) if len(sys.argv) > 1 else 250000
    n_small = int(sys.argv[2]) if len(sys.argv) > 2 else 25000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn, n in (("runs", shape_runs, n_events), ("long", shape_long, n_events),
                            ("delegate", shape_delegate, n_small),
                            ("handles", shape_handles, n_small)):
            t1 = best(fn(tmp, n))
            t4 = best(fn(tmp, 4 * n))
            rows.append((name, n, t1, t4, t4 / t1))
    print("| shape | N | CPU at N (s) | CPU at 4N (s) | ratio (linear 4, quadratic 16) |")
    print("|---|---|---|---|---|")
    for name, n, t1, t4, r in rows:
        print(f"| {name} | {n} | {t1:.3f} | {t4:.3f} | {r:.1f} |")


if __name__ == "__main__":
    main()
