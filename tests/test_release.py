#!/usr/bin/env python3
"""
test_release.py - the Inspector hands each collated run's pages of a mapped
ETDump back to the kernel (src/format/etdump.c, etc_etdump_release_run_).
The results must not change: an ETDump of many runs spanning many pages
gives the same table, TSV and profiling tables whether it is mapped (pages
released, names read back from the page cache when printed) or read from a
pipe (a copy in memory, nothing released), and the event names, block
names, durations and start times in the TSV are the ones written.
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
SRC = os.environ.get("ETC_SRC") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tests"))
from common import ETC, check, finish, flatc_build, work_dir  # noqa: E402

OPS = 800  # events per run of block Execute: over 64 KiB, released (Other: half)
PAD = "x" * 80  # long names: the strings, not only the tables, fill the pages


def op_name(k):
    return f"native_call_op_{k:04d}_{PAD}.out"


def execute_run(block, r, ops):
    """One run: per operator a profile event; run r's op k lasts 1000 + 7k + r ns."""
    events = []
    for k in range(ops):
        start = 1_000_000 * (r + 1) + 10_000 * k
        events.append({"profile_event": {
            "name": op_name(k), "chain_index": 0, "instruction_id": k,
            "start_time": start, "end_time": start + 1000 + 7 * k + r}})
    events.append({"debug_event": {"chain_index": 0, "instruction_id": ops,
                                   "debug_entry": {"val": "Int", "int_value": {"int_val": r % 1}}}})
    return {"name": block, "events": events}


def document():
    runs = [{"name": "Default", "events": [
        {"profile_event": {"name": "Method::init", "chain_index": -1, "instruction_id": 0,
                           "start_time": 5, "end_time": 105}}]}]
    # Two blocks, their runs interleaved: block A runs 0, 2, 4...; block B
    # (fewer operators) runs 1, 3, 5...
    for r in range(12):
        runs.append(execute_run("Execute" if r % 2 == 0 else "Other", r, OPS if r % 2 == 0 else OPS // 2))
    return {"version": 0, "run_data": runs}


def cli(*args, stdin=None):
    p = subprocess.run([ETC, *args], input=stdin, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def expected_rows():
    """(block, name, min ns, max ns, start times) per event, as upstream's
    DataFrame lists them (a debug-only event has neither name nor times)."""
    rows = [("Default", "Method::init", 100, 100, [5])]
    for block, first, ops in (("Execute", 0, OPS), ("Other", 1, OPS // 2)):
        rs = list(range(first, 12, 2))
        for k in range(ops):
            rows.append((block, op_name(k), 1000 + 7 * k + rs[0], 1000 + 7 * k + rs[-1],
                         [1_000_000 * (r + 1) + 10_000 * k for r in rs]))
        rows.append((block, "", None, None, None))  # the debug event: no name, no time
    return rows


def main():
    d = work_dir("release")
    etdp = flatc_build(d, "runs", document())
    size = os.path.getsize(etdp)
    check("the runs span 64 KiB on average (pages released)", size > 13 * 65536, f"{size} bytes")
    with open(etdp, "rb") as f:
        data = f.read()

    mapped_tsv = os.path.join(d, "mapped.tsv")
    piped_tsv = os.path.join(d, "piped.tsv")
    rc1, out1, err1 = cli("--etdump", etdp, "--tsv", mapped_tsv)
    rc2, out2, err2 = cli("--etdump", "/dev/stdin", "--tsv", piped_tsv, stdin=data)
    check("mapped run exits 0", rc1 == 0, err1.decode(errors="replace"))
    check("piped run exits 0", rc2 == 0, err2.decode(errors="replace"))
    check("same table, mapped (released) and piped (copied)", out1 == out2 and len(out1) > 0)
    with open(mapped_tsv, "rb") as f:
        t1 = f.read()
    with open(piped_tsv, "rb") as f:
        t2 = f.read()
    check("same TSV, mapped and piped", t1 == t2 and len(t1) > 0)

    lines = t1.decode().rstrip("\n").split("\n")
    head = lines[0].split("\t")
    rows = [ln.split("\t") for ln in lines[1:]]
    want = expected_rows()
    check("one TSV row per event", len(rows) == len(want), f"{len(rows)} != {len(want)}")
    col = {name: i for i, name in enumerate(head)}
    bad = []
    for got, (block, name, lo, hi, starts) in zip(rows, want):
        if got[col["event_block_name"]] != block or got[col["event_name"]] != name:
            bad.append((got[:3], block, name))
        elif lo is None:
            if got[col["min (ms)"]] != "" or got[col["start_time"]] != "":
                bad.append((got[:3], "no times expected"))
        elif (float(got[col["min (ms)"]]) != lo / 1e6 or float(got[col["max (ms)"]]) != hi / 1e6
              or got[col["start_time"]] != "[" + ", ".join(map(str, starts)) + "]"):
            bad.append((got[:3], lo, hi))
    check("names, durations and start times as written", not bad, str(bad[:3]))

    # The profiling tables read the ETDump again after the Inspector released it.
    rc1, out1, _ = cli("--etdump", etdp, "--tables", "all")
    rc2, out2, _ = cli("--etdump", "/dev/stdin", "--tables", "all", stdin=data)
    check("--tables all: same output, mapped and piped", rc1 == 0 and rc2 == 0 and out1 == out2)
    check("--tables all names the operators", op_name(OPS - 1).encode() in out1)
    finish(d)


if __name__ == "__main__":
    main()
