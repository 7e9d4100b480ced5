#!/usr/bin/env python3
"""The performance diff's unmatched blocks and events, and a baseline that is
the run itself (hostile pass 6, findings 4 and 13).

4: a current ETDump with one more Execute block than its baseline (an input
   the baseline did not run, 5x slower) passed --max-regression (exit 0): its
   events were only counted. Now such a block is compared with the slowest
   baseline block of its name that logged the same events (a "fallback",
   gated, said on stderr); a block with no such baseline block, and a
   baseline block the current ETDump lacks, are listed (terminal, JSON,
   HTML, JUnit skipped testcases) and warned of. Blocks with a
   bundled_input_index on both sides pair by input, not by rank.
13: --baseline-etdump naming the current ETDump (same file or a byte copy)
   is warned of.

ETDumps are written here as JSON and built by flatc; every expected p50
and change is computed here from the durations written (numpy's linear
percentile, float64), never by running etcompare.
"""
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

MS = 1_000_000  # ticks (ns) per ms: the default time scales
EX = os.path.join(C.SRC, "examples")

# op name -> duration (ms) of one run; Method::execute lasts their sum + 0.1 ms
OPS3 = ["native_call_addmm.out", "native_call_relu.out", "native_call_add.out"]
IN0 = [[1.0, 0.2, 0.5], [1.2, 0.2, 0.5]]  # two runs of input 0
IN1 = [[2.0, 0.4, 1.0], [2.0, 0.4, 1.0]]  # two runs of input 1 (the slower input)
IN2 = [[10.0, 2.0, 5.0]]                  # input 2: 5x input 1's time
OVERHEAD = 0.1
T0 = 1_000_000  # start of the first op (ticks)


def ticks(ms):
    return round(ms * MS)


def run_of(bii, names, durs):
    evs, t = [], T0
    for i, (name, d) in enumerate(zip(names, durs)):
        evs.append({"profile_event": {"name": name, "chain_index": 0, "instruction_id": i,
                                      "start_time": t, "end_time": t + ticks(d)}})
        t += ticks(d)
    evs.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                  "instruction_id": 0, "start_time": T0 - ticks(OVERHEAD),
                                  "end_time": t}})
    r = {"name": "Execute", "events": evs}
    if bii is not None:
        r["bundled_input_index"] = bii
    return r


def execute_ms(durs):
    return (sum(ticks(d) for d in durs) + ticks(OVERHEAD)) / MS


def etdump(d, tag, runs):
    return C.flatc_build(d, tag, {"version": 0, "run_data": runs})


def runs_of(bii, block, names=OPS3):
    return [run_of(bii, names, durs) for durs in block]


def block_p50(block):
    """p50 per event of a block's runs (ops, then Method::execute)."""
    per_event = list(zip(*[[ticks(x) / MS for x in durs] + [execute_ms(durs)]
                           for durs in block]))
    return [C.percentile(list(v), 50) for v in per_event]


def close(a, b, rel=1e-9):
    return isinstance(a, (int, float)) and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def diff(d, tag, cur, base, *more):
    js, xml = os.path.join(d, tag + ".json"), os.path.join(d, tag + ".xml")
    rc, out, err = C.run("--etdump", cur, "--baseline-etdump", base, "--no-table",
                         "--json", js, "--junit", xml, *more)
    rep = C.load_json(js)
    C.check_schema(tag, rep)
    junit = ET.parse(xml).getroot() if os.path.exists(xml) else None
    return rc, out, err, rep.get("perf_diff", {}), junit


def perf_suite(junit):
    for s in (junit if junit is not None else []):
        if s.get("name", "").startswith("etcompare performance gate"):
            return s
    return None


def baseline_two_inputs(d):
    """The baseline: inputs 0 and 1, two runs each, interleaved."""
    return etdump(d, "fb_base", runs_of(0, IN0[:1]) + runs_of(1, IN1[:1]) +
                  runs_of(0, IN0[1:]) + runs_of(1, IN1[1:]))


def case_extra_block_fallback(d):
    """The farm's current run has input 2, which the baseline never ran, 5x
    slower: compared with the baseline's slowest block of the same events
    (input 1's), the gate fails."""
    base = baseline_two_inputs(d)
    cur = etdump(d, "fb_cur", runs_of(0, IN0[:1]) + runs_of(1, IN1[:1]) +
                 runs_of(0, IN0[1:]) + runs_of(1, IN1[1:]) + runs_of(2, IN2))
    rc, out, err, pd, junit = diff(d, "fallback", cur, base, "--max-regression", "10")
    C.check("extra 5x slower block: the gate fails (exit 1)", rc == 1, f"rc={rc} {err}")
    rows = pd.get("rows", [])
    extra = [r for r in rows if r["block_index"] == 2]
    want_base, want_cur = block_p50(IN1), block_p50(IN2)
    C.check("its 4 events are compared, each a fallback row against baseline block 1 "
            "(input 1: the slowest baseline block of the same events, not input 0's)",
            len(extra) == 4 and all(r.get("fallback") and r.get("baseline_block_index") == 1
                                    for r in extra), str(extra))
    ex = [r for r in extra if r["event_name"] == "Method::execute"]
    C.check("its Method::execute: baseline p50 of input 1, current p50 5x, change and FAIL",
            len(ex) == 1 and close(ex[0]["baseline_p50"], want_base[3]) and
            close(ex[0]["current_p50"], want_cur[3]) and
            close(ex[0]["change_percent"],
                  100 * (want_cur[3] - want_base[3]) / want_base[3]) and ex[0]["failed"],
            f"{ex} want {want_base[3]} -> {want_cur[3]}")
    others = [r for r in rows if r["block_index"] != 2]
    C.check("the blocks of inputs 0 and 1 pair with their own (no fallback, +0 %)",
            len(others) == 8 and not any(r.get("fallback") or r["failed"] for r in others) and
            all(r.get("baseline_block_index") == r["block_index"] for r in others), str(others))
    C.check("counts: 12 matched, nothing unmatched, 4 failures",
            pd.get("matched") == 12 and pd.get("current_only") == 0 and
            pd.get("baseline_only") == 0 and pd.get("unmatched") == [] and
            pd.get("failures") == 4, str({k: pd.get(k) for k in ("matched", "failures")}))
    C.check("stderr names the block and the baseline block it was compared with",
            "warning: block Execute#2 (input 2) of the current ETDump has no baseline block "
            "of its own" in err and "compared with the baseline's Execute#1 (input 1)" in err,
            err)
    C.check("the gate's verdict says the worst is against a fallback block",
            re.search(r"performance gate FAILED: 4 events regress more than 10%; worst: "
                      r"Execute#2 \S+ \+[0-9.]+% \(against the baseline's Execute#1\)", err),
            err)
    C.check("stdout: the Method::execute line names both blocks",
            "Method::execute (block Execute#2, against the baseline's Execute#1): p50 3.5 -> "
            "17.1 ms" in out and "12 events matched (4 against a fallback baseline block)"
            in out, out[-800:])
    suite = perf_suite(junit)
    cases = [] if suite is None else suite.findall("testcase")
    fails = [c for c in cases if c.find("failure") is not None]
    C.check("JUnit: 12 testcases, 4 failures, all in Execute#2, each saying fallback",
            suite is not None and suite.get("tests") == "12" and suite.get("failures") == "4"
            and len(fails) == 4 and all(c.get("classname") == "Execute#2" and
                                        "compared with the baseline's Execute#1 (fallback"
                                        in c.find("failure").get("message") for c in fails),
            "" if suite is None else ET.tostring(suite, encoding="unicode")[:1500])
    page = os.path.join(d, "fallback.html")
    rc2, _, err2 = C.run("--etdump", cur, "--baseline-etdump", base, "--no-table",
                         "--max-regression", "10", "--report", page)
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    C.check("HTML: the fallback rows name the baseline block",
            rc2 == 1 and "<td>Execute#2 (baseline Execute#1)</td>" in html, err2)


def case_pair_by_input(d):
    """A current ETDump that ran only input 1: paired with the baseline's
    input-1 block (rank would pick input 0's); input 0's block is listed as
    not compared."""
    base = baseline_two_inputs(d)
    cur = etdump(d, "in1_cur", runs_of(1, IN1))
    rc, out, err, pd, junit = diff(d, "byinput", cur, base, "--max-regression", "10")
    rows = pd.get("rows", [])
    want = block_p50(IN1)
    ex = [r for r in rows if r["event_name"] == "Method::execute"]
    C.check("input 1 pairs with the baseline's input-1 block: exit 0, +0 %",
            rc == 0 and len(rows) == 4 and all(r.get("baseline_block_index") == 1 and
                                               not r.get("fallback") for r in rows) and
            len(ex) == 1 and close(ex[0]["baseline_p50"], want[3]) and
            close(ex[0]["change_percent"], 0.0), f"rc={rc} {rows} {err}")
    un = pd.get("unmatched", [])
    want0 = block_p50(IN0)
    C.check("the baseline's input-0 block is listed: 4 events, whole block, with p50s",
            [(u.get("side"), u.get("block_index"), u.get("bundled_input_index"), u.get("event_name"),
              u.get("whole_block")) for u in un] ==
            [("baseline", 0, 0, n, True) for n in OPS3 + ["Method::execute"]] and
            all(close(u.get("p50"), w) for u, w in zip(un, want0)), str(un))
    C.check("stderr warns of the baseline's block the current ETDump did not run",
            "warning: 4 events of the baseline have no counterpart in the current ETDump and "
            "were not compared (the gate did not check them): block Execute#0 (input 0): all "
            "its 4 events, Method::execute p50 " in err, err)
    C.check("stdout: a 'not compared' line for it",
            "not compared: block Execute#0 (input 0) of the baseline has no counterpart in the "
            "current ETDump: its 4 events: Method::execute (p50 " in out and
            "0 only in the current ETDump" in out and "4 only in the baseline" in out,
            out[-800:])
    suite = perf_suite(junit)
    skipped = [] if suite is None else [c for c in suite.findall("testcase")
                                        if c.find("skipped") is not None]
    C.check("JUnit: 4 passing testcases and 4 skipped ones (classname baseline.Execute#0) "
            "with the reason",
            suite is not None and suite.get("tests") == "8" and suite.get("skipped") == "4"
            and suite.get("failures") == "0" and len(skipped) == 4 and
            all(c.get("classname") == "baseline.Execute#0" and
                "block Execute#0 (input 0) of the baseline has no counterpart in the current "
                "ETDump" in c.find("skipped").get("message") for c in skipped) and
            junit.get("tests") == "8",
            "" if suite is None else ET.tostring(suite, encoding="unicode")[:1500])


# six ops in the baseline's only path; the current ETDump also took another
# path (A, B, G) once, 5x slower: a block of other events, no fallback
OPS6 = ["native_call_%s.out" % n for n in ("a", "b", "c", "d", "e", "f")]
PATH = [[1.0, 0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 0.5, 0.5, 0.5, 0.5, 0.5]]
OTHER = ["native_call_a.out", "native_call_b.out", "native_call_g.out"]
OTHER_DURS = [[5.0, 2.5, 0.004]]


def case_unmatched_block(d):
    base = etdump(d, "um_base", runs_of(None, PATH, OPS6))
    cur = etdump(d, "um_cur", runs_of(None, PATH, OPS6) + runs_of(None, OTHER_DURS, OTHER))
    rc, out, err, pd, junit = diff(d, "unmatched", cur, base, "--max-regression", "10",
                                   "--min-event-time", "0.01")
    un = pd.get("unmatched", [])
    want = block_p50(OTHER_DURS)
    C.check("a block of other events: not gated (exit 0), its 4 events listed as current-only, "
            "whole block, with their p50s",
            rc == 0 and [(u.get("side"), u.get("block_index"), u.get("event_name"), u.get("whole_block"))
                         for u in un] ==
            [("current", 1, n, True) for n in OTHER + ["Method::execute"]] and
            all(close(u.get("p50"), w) for u, w in zip(un, want)) and
            pd.get("current_only") == 4 and pd.get("baseline_only") == 0, f"rc={rc} {un}")
    C.check("the tiny event (below --min-event-time) is marked below_min, the others not",
            [u.get("below_min") for u in un] == [False, False, True, False], str(un))
    C.check("stderr warns loudly, with the block's Method::execute p50",
            "warning: 4 events of the current ETDump have no counterpart in the baseline and "
            "were not compared (the gate did not check them): block Execute#1: all its 4 "
            "events, Method::execute p50 7.604 ms; give a baseline recorded with the same "
            "inputs" in err, err)
    C.check("stdout: the 'not compared' line lists the events, Method::execute first",
            "not compared: block Execute#1 of the current ETDump has no counterpart in the "
            "baseline: its 4 events: Method::execute (p50 7.604 ms), native_call_a.out, "
            "native_call_b.out, native_call_g.out" in out, out[-800:])
    suite = perf_suite(junit)
    skipped = [] if suite is None else [c for c in suite.findall("testcase")
                                        if c.find("skipped") is not None]
    C.check("JUnit: the 3 events the gate would check are skipped testcases of Execute#1 "
            "(the tiny one is not), none failed",
            suite is not None and suite.get("skipped") == "3" and
            suite.get("failures") == "0" and
            sorted(c.get("name").split(" (")[0] for c in skipped) ==
            ["Method::execute", "native_call_a.out", "native_call_b.out"] and
            all(c.get("classname") == "Execute#1" for c in skipped) and
            any("current p50 7.604" in c.find("skipped").get("message") for c in skipped),
            "" if suite is None else ET.tostring(suite, encoding="unicode")[-1500:])
    page = os.path.join(d, "unmatched.html")
    C.run("--etdump", cur, "--baseline-etdump", base, "--no-table", "--report", page)
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    table = re.search(r'<table class="sortable" id="perfdiff_unmatched">(.*?)</table>', html,
                      re.S)
    rows = re.findall(r"<tr><td>current</td><td>Execute#1</td><td>([^<]+)</td>",
                      table.group(1)) if table else []
    C.check("HTML: a 'not compared' table lists the 4 events", rows == OTHER +
            ["Method::execute"] and "4 events not compared" in html, str(rows))


def case_self_baseline(d):
    """Finding 13: the baseline is the current ETDump itself."""
    dump = etdump(d, "self", runs_of(0, IN0) + runs_of(1, IN1))
    rc, out, err = C.run("--etdump", dump, "--baseline-etdump", dump, "--max-regression", "10",
                         "--no-table")
    C.check("same file: exit 0 and a warning that the gate compared the run with itself",
            rc == 0 and f"warning: --baseline-etdump {dump} is the run's own ETDump: every "
            "event compares equal with itself, so the performance gate compared the run with "
            "itself" in err, f"rc={rc} {err}")
    copy = os.path.join(d, "copy.etdp")
    shutil.copyfile(dump, copy)
    rc, out, err = C.run("--etdump", dump, "--baseline-etdump", copy, "--max-regression", "10",
                         "--no-table")
    C.check("a byte-identical copy: warned of as such",
            rc == 0 and f"--baseline-etdump {copy} is the run's own ETDump (a byte-identical "
            "copy)" in err, f"rc={rc} {err}")
    link = os.path.join(d, "link.etdp")
    os.link(dump, link)
    rc, out, err = C.run("--etdump", link, "--baseline-etdump", dump, "--no-table")
    C.check("a hard link (same inode), without a gate: warned of",
            rc == 0 and "is the run's own ETDump:" in err, f"rc={rc} {err}")
    other = etdump(d, "other", runs_of(0, IN0) + runs_of(1, [[2.0, 0.4, 1.1]] * 2))
    rc, out, err = C.run("--etdump", other, "--baseline-etdump", dump, "--no-table")
    C.check("another run of the same program: no such warning",
            rc == 0 and "run's own ETDump" not in err and "warning" not in err,
            f"rc={rc} {err}")


def case_readme_example_unchanged(d):
    """The README's example: every block pairs, nothing unmatched, no warning."""
    rc, out, err = C.run("--etdump", os.path.join(EX, "example.etdp"), "--baseline-etdump",
                         os.path.join(EX, "example_baseline.etdp"), "--max-regression", "10",
                         "--no-table")
    C.check("example vs example_baseline: exit 1, 18 matched, no 'not compared', no warning",
            rc == 1 and "18 events matched, 0 only in the baseline, 0 only in the current "
            "ETDump; gate: 2 events regress more than 10%" in out and
            "not compared" not in out and "warning" not in err, f"rc={rc} {out[-600:]} {err}")


def main():
    d = C.work_dir("perfdiff-trust6")
    for case in (case_extra_block_fallback, case_pair_by_input, case_unmatched_block,
                 case_self_baseline, case_readme_example_unchanged):
        with C.harness(case.__name__):
            case(d)
    C.finish(d)


if __name__ == "__main__":
    main()
