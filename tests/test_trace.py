#!/usr/bin/env python3
"""--trace: the Chrome Trace Event Format export.

An ETDump is written here as readable JSON and encoded with flatc: two
runs with nested framework/operator events, delegate events (int and str
ids), allocations and debug events, one 32-bit clock wrap. The trace file
is parsed with json and checked: event counts per phase and per track,
microsecond timestamps and durations computed here from the nanosecond
clock, proper nesting of the complete events of every thread, delegate
events on their own track, allocation counters accumulating per allocator.
Also: other time scales, the example, a bad clock rejected without leaving
a file, and the file replaced atomically.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import common  # noqa: E402
from common import FBS, FLATC, SRC  # noqa: E402


def check(cond, what):
    common.check(what, cond)


def pe(name, chain, instr, start, end, **kw):
    d = {"name": name, "chain_index": chain, "instruction_id": instr,
         "start_time": start, "end_time": end}
    d.update(kw)
    return {"profile_event": d}


def run_events(base):
    """One Execute run: Method::execute around two ops (native_call inside
    OPERATOR_CALL) and a delegate call whose backend logged two events."""
    return [
        {"debug_event": {"chain_index": 0, "instruction_id": 0,
                         "debug_entry": {"val": "Int", "int_value": {"int_val": 3}}}},
        {"allocation_event": {"allocator_id": 1, "allocation_size": 100}},
        pe("native_call_add.out", 0, 0, base + 1100, base + 1900),
        pe("OPERATOR_CALL", 0, 0, base + 1000, base + 2000),
        {"allocation_event": {"allocator_id": 2, "allocation_size": 4096}},
        {"allocation_event": {"allocator_id": 1, "allocation_size": 28}},
        pe("native_call_mul.out", 0, 1, base + 2101, base + 2999),
        pe("OPERATOR_CALL", 0, 1, base + 2100, base + 3000),
        pe("", 0, 2, base + 3100, base + 3400, delegate_debug_id_int=7,
           delegate_debug_metadata=[1, 2, 3]),
        pe("", 0, 2, base + 3400, base + 3950, delegate_debug_id_str="conv\"1\u00e9",
           delegate_debug_metadata=[]),
        pe("DELEGATE_CALL", 0, 2, base + 3050, base + 4000),
        pe("Method::execute", -1, 0, base + 500, base + 4500),
    ]


FIXTURE = {
    "run_data": [
        {"name": "Default", "events": [
            pe("Program::load_method", -1, 0, 100, 433),
            pe("Method::init", -1, 0, 110, 220),
        ]},
        {"name": "Execute", "allocators": [{"name": "method_allocator"}, {"name": "planned"}],
         "events": run_events(10_000)},
        {"name": "Execute", "allocators": [{"name": "method_allocator"}, {"name": "planned"}],
         "events": run_events(50_000_123)},
        # a clock that wrapped: start near 2^32, end small
        {"name": "Wrap", "events": [pe("native_call_x.out", 0, 0, 4294967000, 200)]},
    ]
}


build = common.flatc_build  # tmp/name.etdp from a JSON document
etc = common.call  # etcompare ARGS -> CompletedProcess (text)


def us(ns):
    """ns -> us exactly as a float (the trace writes exact decimals)."""
    return ns / 1000


def nesting_ok(events):
    """Complete events of one thread must be disjoint or nested."""
    spans = sorted(((e["ts"], -e["dur"], e["ts"] + e["dur"], e["name"]) for e in events))
    stack = []
    for ts, _, end, name in spans:
        while stack and stack[-1][0] <= ts:
            stack.pop()
        if stack and end > stack[-1][0] + 1e-9:
            return f"{name} [{ts}, {end}] overlaps {stack[-1][1]} ending at {stack[-1][0]}"
        stack.append((end, name))
    return None


def main():
    tmp = common.work_dir("trace")
    try:
        dump = build(tmp, "trace", FIXTURE)
        out = os.path.join(tmp, "t.json")
        p = etc("--etdump", dump, "--trace", out, "--no-table")
        check(p.returncode == 0, f"--trace exit {p.returncode}: {p.stderr}")
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        ev = doc["traceEvents"]
        check(doc.get("displayTimeUnit") == "ns", "displayTimeUnit")
        X = [e for e in ev if e["ph"] == "X"]
        C = [e for e in ev if e["ph"] == "C"]
        M = [e for e in ev if e["ph"] == "M"]
        check(len(ev) == len(X) + len(C) + len(M), "only X, C and M events")
        # 2 (Default) + 8 + 8 (Execute x2; 8 profile events each) + 1 (Wrap)
        check(len(X) == 19, f"19 complete events, got {len(X)}")
        check(len(C) == 6, f"6 counter events, got {len(C)}")
        check({e["pid"] for e in ev} == {1}, "one process for one ETDump")
        procs = [e for e in M if e["name"] == "process_name"]
        check(len(procs) == 1 and procs[0]["args"]["name"] == dump, "process named after the file")
        threads = {e["tid"]: e["args"]["name"] for e in M if e["name"] == "thread_name"}
        check(threads == {1: "run 0: Default", 3: "run 1: Execute", 4: "run 1: Execute (delegate)",
                          5: "run 2: Execute", 6: "run 2: Execute (delegate)", 7: "run 3: Wrap"},
              f"thread names {threads}")

        # durations and start times, in microseconds from the ns clock
        expect = []
        for r, base in ((1, 10_000), (2, 50_000_123)):
            for e in run_events(base):
                if "profile_event" not in e:
                    continue
                d = e["profile_event"]
                deleg = "delegate_debug_id_int" in d or "delegate_debug_id_str" in d
                name = (d.get("delegate_debug_id_str") or str(d.get("delegate_debug_id_int"))) \
                    if deleg else d["name"]
                tid = 2 * r + (2 if deleg else 1)
                expect.append((tid, name, us(d["start_time"]), us(d["end_time"] - d["start_time"])))
        expect = [(1, "Program::load_method", 0.1, 0.333), (1, "Method::init", 0.11, 0.11)] + expect
        # the wrap: (2^32 - 1 - start) + end, as the Inspector computes it
        expect.append((7, "native_call_x.out", us(4294967000), us((2**32 - 1 - 4294967000) + 200)))
        got = [(e["tid"], e["name"], e["ts"], e["dur"]) for e in X]
        check(len(got) == len(expect), "complete event count")
        for g, x in zip(got, expect):
            check(g[:2] == x[:2] and abs(g[2] - x[2]) < 1e-9 and abs(g[3] - x[3]) < 1e-9,
                  f"event {g} != expected {x}")
        # exact decimals: no float noise in the text
        with open(out, encoding="utf-8") as f:
            text = f.read()
        check('"ts": 50003.223,' in text, "ts written as an exact decimal (50003.223)")
        check('"dur": 0.333,' in text, "dur written as an exact decimal (0.333)")

        cats = {e["name"]: e["cat"] for e in X}
        check(cats["Method::execute"] == "framework" and cats["native_call_add.out"] == "operator"
              and cats["7"] == "delegate", f"categories {cats}")
        deleg = [e for e in X if e["tid"] in (4, 6)]
        check(len(deleg) == 4 and all(e["cat"] == "delegate" for e in deleg),
              "delegate events on the delegate tracks")
        check(all(e["cat"] != "delegate" for e in X if e["tid"] % 2 == 1),
              "no delegate event on an operator track")
        d7 = [e for e in deleg if e["name"] == "7"][0]
        check(d7["args"] == {"chain_index": 0, "instruction_id": 2, "delegate_debug_id": 7,
                             "metadata_bytes": 3}, f"delegate args {d7['args']}")
        check(any(e["name"] == "conv\"1\u00e9" for e in deleg), "string delegate id escaped, UTF-8 kept")

        for tid in sorted({e["tid"] for e in X}):
            bad = nesting_ok([e for e in X if e["tid"] == tid])
            check(bad is None, f"tid {tid} nesting: {bad}")

        # counters: bytes so far per allocator, at the latest end time seen
        # (before any, at the start of the first profile event in the run)
        c1 = [(e["name"], e["ts"], e["args"]["bytes"]) for e in C if e["name"].startswith("run 1:")]
        check(c1 == [("run 1: method_allocator", us(11_100), 100),
                     ("run 1: planned", us(12_000), 4096),
                     ("run 1: method_allocator", us(12_000), 128)], f"counters of run 1: {c1}")
        check(all(e["pid"] == 1 and "tid" not in e for e in C), "counters are per process")

        # other source scales: us -> same numbers, ms -> x1000, cycles -> as us
        for scale, factor in (("us", 1), ("ms", 1000), ("cycles", 1)):
            p = etc("--etdump", dump, "--trace", out, "--no-table", "--source_time_scale", scale,
                    "--target_time_scale", scale if scale == "cycles" else "ms")
            check(p.returncode == 0, f"{scale}: exit {p.returncode} {p.stderr}")
            with open(out) as f:
                X2 = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
            check(X2[0]["ts"] == 100 * factor and X2[0]["dur"] == 333 * factor,
                  f"{scale}: load_method ts/dur {X2[0]['ts']}/{X2[0]['dur']}")

        # the runtime's own ETDump, decoded independently by flatc
        real = os.path.join(SRC, "tests", "data", "tutorial.etdp")
        p = subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--size-prefixed",
                            "-o", tmp, FBS, "--", real], capture_output=True, text=True)
        check(p.returncode == 0, "flatc decodes tutorial.etdp")
        with open(os.path.join(tmp, "tutorial.json")) as f:
            runs = json.load(f)["run_data"]
        p = etc("--etdump", real, "--trace", out, "--no-table")
        check(p.returncode == 0, f"tutorial trace exit {p.returncode}")
        with open(out) as f:
            XR = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        want = [(2 * r + 1, e["profile_event"]["name"], e["profile_event"]["start_time"] / 1000,
                 (e["profile_event"]["end_time"] - e["profile_event"]["start_time"]) / 1000)
                for r, run in enumerate(runs) for e in run["events"] if "profile_event" in e]
        check(len(XR) == len(want) == 31, f"tutorial: {len(XR)} complete events, want {len(want)}")
        check(all(g["tid"] == w[0] and g["name"] == w[1] and abs(g["ts"] - w[2]) < 1e-9 and
                  abs(g["dur"] - w[3]) < 1e-9 for g, w in zip(XR, want)),
              "tutorial: names, start times and durations")
        for tid in (1, 3):
            bad = nesting_ok([e for e in XR if e["tid"] == tid])
            check(bad is None, f"tutorial tid {tid} nesting: {bad}")

        # stdout, and the example
        p = etc("--example", "--trace", "-", "--no-table")
        check(p.returncode == 0, "example trace exit")
        doc = json.loads(p.stdout)
        check(sum(e["ph"] == "X" for e in doc["traceEvents"]) > 0, "example has complete events")

        # a start after the end that is no 32-bit wrap: exit 3, no file left
        bad = build(tmp, "bad", {"run_data": [{"name": "x", "events": [
            pe("a", 0, 0, 1, 2), pe("b", 0, 1, 2**40, 5)]}]})
        out2 = os.path.join(tmp, "bad_trace.json")
        p = etc("--etdump", bad, "--trace", out2, "--no-table", "--source_time_scale", "us",
                "--target_time_scale", "ms")
        # (trace alone: the trace writer itself applies the Inspector's clock rule)
        check(p.returncode == 3 and "not a clock wrap" in p.stderr, f"bad clock: {p.returncode} {p.stderr}")
        check(not os.path.exists(out2), "no trace file left behind")
        check(not [n for n in os.listdir(tmp) if n.startswith(".bad_trace")], "no temporary file left")

        # --trace needs a value
        p = etc("--etdump", dump, "--trace")
        check(p.returncode == 2, "--trace without a value is a usage error")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return common.summary()


if __name__ == "__main__":
    sys.exit(main())
