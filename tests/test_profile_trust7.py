#!/usr/bin/env python3
"""The performance diff and delegated durations (hostile pass 7p, findings
1, 2, 3 and 8).

1: a kernel at exactly +10 % (1000 -> 1100 ns) passed --max-regression 10 in
   ns but failed in us, ms and s: the change % was computed from the p50s
   after their conversion to the shown unit. Now it comes from the integer
   ticks: the verdict and the change % are the same in every unit, exactly
   PCT passes, anything above fails.
2: a delegated event kept in its backend's cycles was shown under a "(ms)"
   header and compared with --min-event-time (ms). Now the table has a unit
   column, the JSON rows a unit, and --min-event-time applies only to rows
   in the target unit.
3: two methods writing "Execute" blocks, run in the opposite order in the
   baseline, were compared method against the other method (a +400 %
   regression that does not exist). Now blocks pair by rank among blocks of
   the same events first.
5: --trace with --delegate-time-scale drew delegated events with the ETDump's
   clock, contradicting the tables without a word: now warned of.
10: with --delegate-time-scale QnnBackend=cycles the table/TSV header said
   "(us; delegated: cycles)" over XNNPACK's rows in us too. Now it names the
   backends in cycles when other delegated rows are in the target unit.
8: with absolute timestamps near 1.7e18 ns, delegated durations of
   1000/1001/1002 ticks came out as 1024 (start and end scaled to double,
   then subtracted). Now the integer difference is scaled.

ETDumps are written here as JSON and built by flatc; every expected number
is computed here from the integer durations written, never by running
etcompare.
"""
import json
import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import etrecord_gen as G  # noqa: E402

PER_S = {"ns": 1e9, "us": 1e6, "ms": 1e3, "s": 1.0}


def pe(name, s, e, instr, chain=0, did=None):
    d = {"chain_index": chain, "instruction_id": instr, "start_time": s, "end_time": e}
    if name is not None:
        d["name"] = name
    if did is not None:
        d["delegate_debug_id_int"] = did
        d["delegate_debug_metadata"] = []
    return {"profile_event": d}


def run_of(ops, t0=1_000_000, overhead=50, delegate=None):
    """One Execute run: ops = [(name, ticks)] back to back, then Method::execute
    around them; delegate = backend ticks of delegate event 7 inside a
    DELEGATE_CALL of 2000 ticks (instruction len(ops))."""
    evs, t = [], t0
    for i, (name, d) in enumerate(ops):
        evs.append(pe(name, t, t + d, i))
        t += d
    if delegate is not None:
        evs.append(pe(None, 5, 5 + delegate, len(ops), did=7))
        evs.append(pe("DELEGATE_CALL", t, t + 2000, len(ops)))
        t += 2000
    evs.append(pe("Method::execute", t0 - overhead, t, 0, chain=-1))
    return {"name": "Execute", "events": evs}


def etdump(d, tag, runs):
    return C.flatc_build(d, tag, {"version": 0, "run_data": runs})


def diff(d, tag, cur, base, *more):
    js = os.path.join(d, tag + ".json")
    rc, out, err = C.run("--etdump", cur, "--baseline-etdump", base, "--json", js,
                         "--no-table", *more)
    rep = C.load_json(js)
    C.check_schema(tag, rep)
    return rc, out, err, rep.get("perf_diff", {})


def row(pd, name, block=None):
    rs = [r for r in pd.get("rows", []) if r["event_name"] == name and
          (block is None or r["block_index"] == block)]
    return rs[0] if len(rs) == 1 else None


# --- finding 1 -------------------------------------------------------------

# ticks (ns) per run of three ops; Method::execute adds 50 ns of overhead
F1_BASE = [[("native_call_a.out", 1000), ("native_call_b.out", 1000),
            ("native_call_c.out", 30000)]] * 3
F1_CUR = [[("native_call_a.out", a), ("native_call_b.out", 1101),
           ("native_call_c.out", 33000)] for a in (1100, 1110, 1090)]


def pct(base, cur):
    return 100 * (cur - base) / base


def case_boundary_every_unit(d):
    base = etdump(d, "f1_base", [run_of(r) for r in F1_BASE])
    cur = etdump(d, "f1_cur", [run_of(r) for r in F1_CUR])
    p50 = {}
    for i, name in enumerate(["native_call_a.out", "native_call_b.out", "native_call_c.out"]):
        b = C.percentile([r[i][1] for r in F1_BASE], 50)
        c = C.percentile([r[i][1] for r in F1_CUR], 50)
        p50[name] = (b, c, pct(b, c))
    ex_b = C.percentile([sum(x for _, x in r) + 50 for r in F1_BASE], 50)
    ex_c = C.percentile([sum(x for _, x in r) + 50 for r in F1_CUR], 50)
    want_ex = pct(ex_b, ex_c)
    C.check("inputs: a and c are exactly +10 %, b +10.1 %, Method::execute below 10 %",
            p50["native_call_a.out"][2] == 10 and p50["native_call_c.out"][2] == 10 and
            abs(p50["native_call_b.out"][2] - 10.1) < 1e-9 and want_ex < 10,
            f"{p50} {want_ex}")
    for unit in ("ns", "us", "ms", "s"):
        rc, out, err, pd = diff(d, f"f1_{unit}", cur, base, "--max-regression", "10",
                                "--target_time_scale", unit)
        C.check(f"{unit}: exit 1, one failure (b at +10.1 %), not a and c at exactly +10 %",
                rc == 1 and pd.get("failures") == 1, f"rc={rc} {err}")
        for name, (b, c, want) in p50.items():
            r = row(pd, name)
            C.check(f"{unit}: {name}: change_percent {want} computed from the ticks, "
                    f"{'FAIL' if want > 10 else 'ok'}",
                    r is not None and r["change_percent"] == want and
                    r["failed"] == (want > 10) and r["gated"] and
                    r["ratio"] == c / b and r.get("unit") == unit, str(r))
            C.check(f"{unit}: {name}: p50s in the unit shown",
                    r is not None and abs(r["baseline_p50"] - b / 1e9 * PER_S[unit]) <=
                    1e-12 * b / 1e9 * PER_S[unit] and
                    abs(r["current_p50"] - c / 1e9 * PER_S[unit]) <=
                    1e-12 * c / 1e9 * PER_S[unit], str(r))
        r = row(pd, "Method::execute")
        C.check(f"{unit}: Method::execute change {want_ex} from the ticks",
                r is not None and r["change_percent"] == want_ex and not r["failed"], str(r))
        # the table prints +10.00 (a failing row would show more digits)
        rc, out, err = C.run("--etdump", cur, "--baseline-etdump", base, "--no-table",
                             "--max-regression", "10", "--target_time_scale", unit)
        lines = [ln for ln in out.splitlines() if "native_call_a.out" in ln]
        C.check(f"{unit}: table: a at +10.00, ok",
                len(lines) == 1 and "+10.00 " in lines[0] and " ok " in lines[0] and
                "FAIL" not in lines[0], out)
        lines = [ln for ln in out.splitlines() if "native_call_b.out" in ln]
        C.check(f"{unit}: table: b at +10.10, FAIL",
                len(lines) == 1 and "+10.10" in lines[0] and "FAIL" in lines[0], out)
    # a gate of 10.1 lets b (exactly +10.1 % in ticks: 1101 / 1000) pass in every unit
    for unit in ("ns", "ms", "s"):
        rc, out, err, pd = diff(d, f"f1b_{unit}", cur, base, "--max-regression", "10.1",
                                "--target_time_scale", unit)
        r = row(pd, "native_call_b.out")
        C.check(f"{unit}: --max-regression 10.1: b (1000 -> 1101) passes, exit 0",
                rc == 0 and r is not None and not r["failed"] and
                r["change_percent"] == pct(1000, 1101), f"rc={rc} {r} {err}")


# --- finding 8 -------------------------------------------------------------

BIG = 1732650000123456789  # CLOCK_REALTIME-like ns (2024-11-26)
F8_TICKS = [1000, 1001, 1002]


def case_large_timestamps(d):
    runs = []
    for r, dur in enumerate(F8_TICKS):
        t = BIG + r * 10**7
        runs.append({"name": "Execute", "events": [
            pe(None, t + 100, t + 100 + dur, 0, did=0),
            pe("native_call_a.out", t + 5000, t + 5000 + dur, 1),
            pe("DELEGATE_CALL", t + 50, t + 1200, 0),
            pe("Method::execute", t, t + 7000, 0, chain=-1)]})
    path = etdump(d, "f8", runs)
    cases = [("ns", None, "ns", 1.0), ("us", None, "us", 1e3), ("ms", None, "ms", 1e6),
             ("s", None, "s", 1e9), ("ms", "cycles", "cycles", 1.0),
             ("ns", "ns", "ns", 1.0), ("ms", "us", "ms", 1e3)]
    for target, dscale, shown, factor in cases:
        args = ["--etdump", path, "--tables", "profile", "--no-table", "--json", "-",
                "--target_time_scale", target]
        if dscale:
            args += ["--delegate-time-scale", dscale]
        rc, out, err = C.run(*args)
        try:
            evs = json.loads(out)["blocks"][0]["events"]
        except (ValueError, KeyError, IndexError):
            evs = []
        dl = [e for e in evs if e.get("is_delegated_op")]
        want = [t / factor for t in F8_TICKS]
        tag = f"target {target}" + (f", delegated in {dscale}" if dscale else "")
        C.check(f"{tag}: delegate durations of 1000/1001/1002 ticks exact ({want}, {shown})",
                rc == 0 and len(dl) == 1 and dl[0]["raw"] == want and dl[0].get("unit") == shown,
                f"rc={rc} {dl} {err}")
        if dl:
            C.check(f"{tag}: its p50 and max", dl[0]["p50"] == C.percentile(want, 50) and
                    dl[0]["max"] == want[-1], str(dl[0]))


# --- finding 3 -------------------------------------------------------------

def method(k, a=None):
    """M1: a 1000, b 500; M2: a 5000 (or `a`), c 100. Both instruction 0 = a."""
    if k == 1:
        return [("native_call_a.out", a or 1000), ("native_call_b.out", 500)]
    return [("native_call_a.out", a or 5000), ("native_call_c.out", 100)]


def case_methods_other_order(d):
    base = etdump(d, "f3_base", [run_of(method(k)) for k in (1, 1, 2, 2)])
    cur = etdump(d, "f3_cur", [run_of(method(k)) for k in (2, 2, 1, 1)])
    rc, out, err, pd = diff(d, "f3", cur, base, "--max-regression", "10",
                            "--target_time_scale", "ns")
    rows = pd.get("rows", [])
    C.check("same methods in the other order: exit 0, no failure",
            rc == 0 and pd.get("failures") == 0, f"rc={rc} {err} {out}")
    C.check("6 rows, every one +0 % (each method compared with itself), nothing unmatched",
            len(rows) == 6 and all(r["change_percent"] == 0 for r in rows) and
            not pd.get("unmatched") and not any(r["fallback"] for r in rows), str(rows))
    # current block 0 is M2 (base block 1), current block 1 is M1 (base block 0)
    pairs = {(r["block_index"], r["baseline_block_index"]) for r in rows}
    C.check("current block 0 (M2) with baseline block 1, block 1 (M1) with block 0",
            pairs == {(0, 1), (1, 0)}, str(pairs))
    a = row(pd, "native_call_a.out", 0)
    C.check("M2's native_call_a.out: 5000 -> 5000 ns",
            a is not None and a["baseline_p50"] == 5000 and a["current_p50"] == 5000, str(a))

    # a real regression of M2 (+12 %) is found, against M2's own numbers
    cur2 = etdump(d, "f3_cur2", [run_of(method(k, 5600 if k == 2 else None))
                                 for k in (2, 2, 1, 1)])
    rc, out, err, pd = diff(d, "f3b", cur2, base, "--max-regression", "10",
                            "--target_time_scale", "ns")
    a = row(pd, "native_call_a.out", 0)
    C.check("M2's kernel 5000 -> 5600 ns: +12 % against M2, FAIL, exit 1",
            rc == 1 and a is not None and a["baseline_p50"] == 5000 and
            a["change_percent"] == pct(5000, 5600) and a["failed"], f"rc={rc} {a}")
    a1 = row(pd, "native_call_a.out", 1)
    C.check("M1's kernel: 1000 -> 1000, ok", a1 is not None and a1["change_percent"] == 0 and
            not a1["failed"], str(a1))

    # blocks whose events changed still pair by rank among those left over
    m1x = method(1) + [("native_call_d.out", 10)]
    base3 = etdump(d, "f3_base3", [run_of(method(1)), run_of(method(2))])
    cur3 = etdump(d, "f3_cur3", [run_of(m1x), run_of(method(2))])
    rc, out, err, pd = diff(d, "f3c", cur3, base3, "--max-regression", "10",
                            "--target_time_scale", "ns")
    rows = pd.get("rows", [])
    pairs = {(r["block_index"], r["baseline_block_index"]) for r in rows}
    un = pd.get("unmatched", [])
    C.check("M1 with an added op pairs with M1 (left over), M2 with M2; the new op unmatched",
            rc == 0 and pairs == {(0, 0), (1, 1)} and len(rows) == 6 and
            not any(r["fallback"] for r in rows) and len(un) == 1 and
            un[0]["event_name"] == "native_call_d.out" and un[0]["side"] == "current",
            f"rc={rc} {pairs} {un} {err}")


# --- finding 2 -------------------------------------------------------------

def case_cycles_rows(d):
    ops = [("native_call_a.out", 1000)]
    base = etdump(d, "f2_base", [run_of(ops, delegate=100)] * 3)
    cur = etdump(d, "f2_cur", [run_of(ops, delegate=300)] * 3)
    rc, out, err, pd = diff(d, "f2", cur, base, "--max-regression", "10",
                            "--delegate-time-scale", "cycles", "--min-event-time", "0.01")
    r = row(pd, "7")
    C.check("the delegated row is in cycles (JSON unit), 100 -> 300, +200 %, gated, FAIL",
            rc == 1 and r is not None and r.get("unit") == "cycles" and r["baseline_p50"] == 100 and
            r["current_p50"] == 300 and r["change_percent"] == pct(100, 300) and
            r["gated"] and not r["below_min"] and r["failed"], f"rc={rc} {r}")
    a = row(pd, "native_call_a.out")
    C.check("the operator row is in ms, below --min-event-time 0.01 ms (0.001 ms)",
            a is not None and a.get("unit") == "ms" and a["below_min"] and not a["gated"], str(a))
    # a large --min-event-time (ms) does not swallow the cycles row
    rc, out, err, pd = diff(d, "f2b", cur, base, "--max-regression", "10",
                            "--delegate-time-scale", "cycles", "--min-event-time", "1000")
    r = row(pd, "7")
    C.check("--min-event-time 1000 (ms): the 300-cycle row is still gated and fails",
            rc == 1 and r is not None and not r["below_min"] and r["failed"], f"rc={rc} {r}")
    rc, out, err = C.run("--etdump", cur, "--baseline-etdump", base, "--no-table",
                         "--max-regression", "10", "--delegate-time-scale", "cycles",
                         "--min-event-time", "0.01")
    hdr = [ln for ln in out.splitlines() if "baseline p50" in ln]
    seven = [ln for ln in out.splitlines() if ln.startswith("│ Execute │ 7 ")]
    C.check("table: no '(ms)' header over the cycles row; a unit column says cycles",
            len(hdr) == 1 and "(ms)" not in hdr[0] and "│ unit" in hdr[0] and
            len(seven) == 1 and "│ cycles │" in seven[0], out)
    C.check("table: the gate line says cycles rows are gated whatever their time",
            "events in cycles whatever their time" in out, out)
    # without cycles rows the table keeps its units in the headers
    rc, out, err = C.run("--etdump", cur, "--baseline-etdump", base, "--no-table",
                         "--max-regression", "1000")
    hdr = [ln for ln in out.splitlines() if "baseline p50" in ln]
    C.check("delegated events scaled to ms: headers '(ms)', no unit column",
            len(hdr) == 1 and "baseline p50 (ms)" in hdr[0] and "│ unit" not in hdr[0], out)


# --- finding 10 ------------------------------------------------------------

def case_header_names_backend(d):
    er = os.path.join(d, "two_backends.etrecord")
    nodes = [G.node("conv", "aten.convolution.default", (), 1),
             G.node("bn", "aten.batch_norm.default", (), 2),
             G.node("relu", "aten.relu.default", (), 3)]
    G.write_etrecord(er, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1, 2], "2": [3]}},
                     delegate_map={"forward": {
                         "0": {"name": "XnnpackBackend", "delegate_map": {"0": [1], "1": [2]}},
                         "2": {"name": "QnnBackend", "delegate_map": {"0": [3]}}}})
    runs = []
    for r in range(3):
        t = r * 10**6
        runs.append({"name": "Execute", "events": [
            pe(None, t + 100, t + 2100, 0, did=0), pe(None, t + 3000, t + 3500, 0, did=1),
            pe("DELEGATE_CALL", t + 50, t + 8000, 0),
            pe(None, t + 8100, t + 8400, 2, did=0), pe("DELEGATE_CALL", t + 8050, t + 8450, 2),
            pe("Method::execute", t, t + 9000, 0, chain=-1)]})
    path = etdump(d, "f10", runs)

    def tsv(scale):
        rc, out, err = C.run("--etdump", path, "--etrecord", er, "--tables", "profile",
                             "--target_time_scale", "us", "--delegate-time-scale", scale,
                             "--tsv", "-", "--no-table")
        lines = out.splitlines()
        hdr = lines[0].split("\t") if lines else []
        rows = {}
        for ln in lines[1:]:
            f = ln.split("\t")
            if len(f) == len(hdr) and "delegate_backend_name" in hdr and "event_name" in hdr:
                rows[(f[hdr.index("delegate_backend_name")],
                      f[hdr.index("event_name")])] = f
        return rc, hdr, rows, err

    rc, hdr, rows, err = tsv("QnnBackend=cycles")
    p50 = [h for h in hdr if h.startswith("p50")]
    C.check("QnnBackend=cycles: the header names the backend in cycles, not every delegate",
            rc == 0 and p50 == ["p50 (us; QnnBackend: cycles)"], f"rc={rc} {hdr} {err}")
    i = hdr.index(p50[0]) if p50 else 0
    want = {("XnnpackBackend", "0"): 2000 / 1e3, ("XnnpackBackend", "1"): 500 / 1e3,
            ("QnnBackend", "0"): 300.0}
    got = {k: float(rows[k][i]) for k in want if k in rows}
    C.check("the rows: XNNPACK's 2000 and 500 ns in us, QNN's 300 cycles", got == want,
            f"{got} {rows.keys()}")
    rc, hdr, rows, err = tsv("cycles")
    C.check("every delegate in cycles: '(us; delegated: cycles)' as before",
            rc == 0 and "p50 (us; delegated: cycles)" in hdr, f"rc={rc} {hdr} {err}")


# --- finding 5 -------------------------------------------------------------

def case_trace_warns(d):
    path = etdump(d, "f5", [run_of([("native_call_a.out", 1000)], delegate=3000)] * 2)
    tr = os.path.join(d, "f5_trace.json")
    rc, out, err = C.run("--etdump", path, "--tables", "profile", "--delegate-time-scale",
                         "us", "--trace", tr)
    trace = C.load_json(tr)
    durs = [e.get("dur") for e in trace.get("traceEvents", []) if e.get("cat") == "delegate"]
    C.check("--trace with --delegate-time-scale: warned that the trace does not follow it",
            rc == 0 and "--trace does not follow --delegate-time-scale" in err, f"rc={rc} {err}")
    C.check("the trace itself: delegate event of 3000 ticks read as ns (3 us), as said",
            durs == [3000 / 1e3] * 2, str(durs))
    rc, out, err = C.run("--etdump", path, "--tables", "profile", "--trace", tr)
    C.check("--trace alone: no such warning", rc == 0 and "delegate-time-scale" not in err,
            f"rc={rc} {err}")


C.run_cases("trust7p", case_boundary_every_unit, case_large_timestamps,
            case_methods_other_order, case_cycles_rows, case_header_names_backend,
            case_trace_warns)
