#!/usr/bin/env python3
"""Profiling tables (--tables tax,memory,ops,modules,delegates), the
performance diff (--baseline-etdump, --max-regression, --min-event-time)
and the profiling plots (--plot).

Fixtures are written here as readable JSON and built into ETDumps by
flatc; the ETRecord by tests/etrecord_gen.py. Every expected number is
computed here from the durations written (float64 Python, numpy's linear
percentile reimplemented), never by running etcompare. The printed tables
are also checked byte for byte against golden/profile_*.txt
(ETC_REGENERATE=1 rewrites them).

Environment (set by ctest): ETCOMPARE, ETC_FLATC, ETC_SRC, ETC_WORK.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import etrecord_gen as G  # noqa: E402

import common  # noqa: E402
from common import ETC, FBS, FLATC, GOLD, REPORT_SCHEMA, SRC  # noqa: E402,F401

SCHEMA = json.load(open(REPORT_SCHEMA))
REGEN = os.environ.get("ETC_REGENERATE") == "1"
WORK = common.work_dir("profile")

passed = failed = 0


class Fail(Exception):
    pass


def ok(cond, what):
    if not cond:
        raise Fail(what)


def close(a, b, what, rel=1e-12):
    ok(isinstance(a, (int, float)) and (a == b or abs(a - b) <= rel * max(abs(a), abs(b))),
       f"{what}: got {a!r}, expected {b!r}")


def case(fn):
    global passed, failed
    try:
        fn()
        print(f"ok   {fn.__name__}")
        passed += 1
    except Fail as e:
        print(f"FAIL {fn.__name__}: {e}")
        failed += 1
    return fn


def run(args, env=None, code=0):
    p = subprocess.run([ETC] + args, capture_output=True, text=True, env=env)
    ok(p.returncode == code,
       f"etcompare {' '.join(args)}: exit {p.returncode}, expected {code}: {p.stderr}")
    return p


def report(args, code=0):
    out = os.path.join(WORK, "report.json")
    p = run(args + ["--json", out], code=code)
    rep = json.load(open(out))
    jsonschema.validate(rep, SCHEMA)
    return p, rep


def golden(name, text):
    path = os.path.join(GOLD, name)
    if REGEN:
        with open(path, "w") as f:
            f.write(text)
    ok(os.path.exists(path), f"golden {name} missing (ETC_REGENERATE=1 writes it)")
    want = open(path).read()
    ok(text == want, f"output differs from golden/{name}:\n{text}")


# --- fixtures ---------------------------------------------------------------------

def flatc(tag, doc):
    jpath = os.path.join(WORK, tag + ".json")
    with open(jpath, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([FLATC, "-b", "--size-prefixed", "-o", WORK, FBS, jpath],
                       capture_output=True, text=True)
    out = os.path.join(WORK, tag + ".etdp")
    if p.returncode or not os.path.exists(out):
        raise RuntimeError(f"flatc failed: {p.stderr}")
    return out


# The model: (name, instruction, chain, delegate id, [duration per run in ns])
MS = 1000000
MODEL = [
    ("native_call_convolution.out", 0, 0, None, [3 * MS, 5 * MS]),
    ("OPERATOR_CALL", 0, 0, None, [3100000, 5100000]),
    ("native_call_relu.out", 1, 0, None, [1 * MS, 1 * MS]),
    ("OPERATOR_CALL", 1, 0, None, [1050000, 1050000]),
    (None, 2, 0, 0, [500, 700]),
    (None, 2, 0, 1, [300, 300]),
    ("DELEGATE_CALL", 2, 0, None, [2 * MS, 4 * MS]),
    ("native_call_relu.out", 3, 0, None, [500000, 1500000]),
    ("OPERATOR_CALL", 3, 0, None, [550000, 1550000]),
    ("Method::execute", 0, -1, None, [10 * MS, 14 * MS]),
]
# per run: allocators and (allocator id, size) allocation events
ALLOCATORS = ["method_allocator", "planned_memory"]
ALLOCATIONS = [[(1, 64), (1, 32), (2, 1024)], [(1, 64)]]
NRUNS = 2


def model_etdump(tag="model"):
    runs = []
    for r in range(NRUNS):
        evs = [{"allocation_event": {"allocator_id": a, "allocation_size": s}}
               for a, s in ALLOCATIONS[r]]
        t = 2000
        for name, instr, chain, did, durs in MODEL:
            start = 1000 if name == "Method::execute" else t
            ev = {"chain_index": chain, "instruction_id": instr, "start_time": start,
                  "end_time": start + durs[r]}
            if name is not None:
                ev["name"] = name
            if did is not None:
                ev["delegate_debug_id_int"] = did
                ev["delegate_debug_metadata"] = []
            evs.append({"profile_event": ev})
            if name != "Method::execute":
                t += durs[r] + 100
        runs.append({"name": "Execute", "allocators": [{"name": a} for a in ALLOCATORS],
                     "events": evs})
    return flatc(tag, {"version": 0, "run_data": runs})


FEATURES = ("L__self___features", "features", "torch.nn.modules.container.Sequential")
FEAT0 = ("L__self___features_0", "features.0", "torch.nn.modules.conv.Conv2d")
FEAT1 = ("L__self___features_1", "features.1", "torch.nn.modules.activation.ReLU")
HEAD = ("L__self___head", "head", "model.Head")
HEAD_FC = ("L__self___head_fc", "head.fc", "torch.nn.modules.linear.Linear")
HEAD_ACT = ("L__self___head_act", "head.act", "torch.nn.modules.activation.GELU")
# handle -> (node name, op, module stack)
NODES = {
    1: ("aten_convolution_default", "aten.convolution.default", [FEATURES, FEAT0]),
    2: ("aten_relu_default", "aten.relu.default", [FEATURES, FEAT1]),
    3: ("aten_relu_default_1", "aten.relu.default", [HEAD]),
    6: ("aten_add_tensor", "aten.add.Tensor", [HEAD]),
    4: ("aten_linear_default", "aten.linear.default", [HEAD, HEAD_FC]),
    5: ("aten_gelu_default", "aten.gelu.default", [HEAD, HEAD_ACT]),
}
HANDLES = {0: [1], 1: [2], 2: [4, 5], 3: [3, 6]}  # instruction -> handles
DELEGATE = {0: [4], 1: [5]}  # delegate id -> handles (instruction 2)


def model_etrecord():
    path = os.path.join(WORK, "model.etrecord")
    nodes = [G.node(n, op, (), h, f'  File "m.py", line {h}, in forward\n    x\n', mods)
             for h, (n, op, mods) in NODES.items()]
    G.write_etrecord(
        path, programs={"forward": G.program(nodes)},
        debug_handle_map={"forward": {str(i): h for i, h in HANDLES.items()}},
        delegate_map={"forward": {"2": {"name": "XnnpackBackend", "delegate_map": {
            str(d): h for d, h in DELEGATE.items()}}}})
    return path


def ms(durs, delegated):
    """ns -> ms; delegated events are scaled alike, as the current upstream Inspector
    does by default (issue 13: they used to stay unscaled)."""
    return [d / 1e6 for d in durs]


def event_nodes(name, instr, did):
    """The graph nodes an event links to (upstream's rules, for this model)."""
    if name == "Method::execute":
        return []
    hs = DELEGATE[did] if did is not None else HANDLES[instr]
    return [NODES[h] for h in hs]


# --- tables --------------------------------------------------------------------------

def expected_tax():
    rows = []
    for r in range(NRUNS):
        ex = op = dc = 0.0
        for name, _, _, did, durs in MODEL:
            v = durs[r] / 1e6
            if did is not None:
                continue
            if name == "Method::execute":
                ex = v
            elif name.startswith("native_call_"):
                op += v
            elif name == "DELEGATE_CALL":
                dc += v
        rows.append((ex, op, dc, ex - op - dc, 100 * (ex - op - dc) / ex))
    return rows


@case
def tax_memory_ops_delegates_without_etrecord():
    dump = model_etdump()
    p, rep = report(["--etdump", dump, "--tables", "all"])
    prof = rep["profile"]
    ok(prof["unit"] == "ms", "unit")
    exp = expected_tax()
    close(prof["execute_total"], sum(r[0] for r in exp), "execute_total")
    (blk,) = prof["tax"]
    ok(blk["block"] == "Execute" and blk["operators_from"] == "native_call", "tax block")
    for r, want in zip(blk["runs"], exp):
        for key, v in zip(("execute", "operators", "delegate_calls", "tax", "tax_percent"),
                          want):
            close(r[key], v, f"run {r['run']} {key}")
    n = len(exp)
    for i, key in enumerate(("execute", "operators", "delegate_calls", "tax")):
        close(blk["mean"][key], sum(r[i] for r in exp) / n, f"mean {key}")
    close(blk["mean"]["tax_percent"],
          100 * (sum(r[3] for r in exp) / n) / (sum(r[0] for r in exp) / n), "mean tax %")
    close(blk["tax_p50"], common.percentile([r[3] for r in exp], 50), "tax p50")
    close(blk["tax_percent_p50"], common.percentile([r[4] for r in exp], 50), "tax % p50")
    # hand check of the same numbers: 10 - 4.5 - 2 = 3.5 ms and 14 - 7.5 - 4 = 2.5 ms
    close(blk["runs"][0]["tax"], 3.5, "run 0 tax by hand")
    close(blk["runs"][1]["tax"], 2.5, "run 1 tax by hand")
    close(blk["mean"]["tax_percent"], 25.0, "mean tax % by hand")

    mem = [(m["run"], m["allocator"], m["name"], m["count"], m["bytes"]) for m in prof["memory"]]
    want = []
    for r in range(NRUNS):
        for a, name in enumerate(ALLOCATORS, 1):
            sizes = [s for i, s in ALLOCATIONS[r] if i == a]
            want.append((r, a, name, len(sizes), sum(sizes)))
    ok(mem == want, f"memory rows {mem} != {want}")

    ok(prof["ops"]["key"] == "event_name", "ops key")
    samples = {}
    for name, _, _, did, durs in MODEL:
        if did is None and name.startswith("native_call_"):
            samples.setdefault(name, []).extend(ms(durs, False))
    total_exec = sum(r[0] for r in exp)
    want = sorted(samples.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    ok([o["name"] for o in prof["ops"]["rows"]] == [k for k, _ in want],
       f"ops order {[o['name'] for o in prof['ops']['rows']]}")
    for o, (k, v) in zip(prof["ops"]["rows"], want):
        ok(o["count"] == len(v), f"{k} count")
        close(o["total"], sum(v), f"{k} total")
        close(o["mean"], sum(v) / len(v), f"{k} mean")
        close(o["p50"], common.percentile(v, 50), f"{k} p50")
        close(o["share"], sum(v) / total_exec, f"{k} share")
    close(prof["ops"]["rows"][0]["total"], 8.0, "convolution total by hand")
    close(prof["ops"]["rows"][1]["p50"], 1.0, "relu p50 by hand ([0.5, 1, 1, 1.5])")

    (d,) = prof["delegates"]
    ok(d["backend"] == "(unknown)" and d["calls"] == 2 and d["backend_events"] == 4,
       f"delegates {d}")
    close(d["total"], 6.0, "delegate total")
    close(d["mean"], 3.0, "delegate mean")
    close(d["share"], 6.0 / 24.0, "delegate share")
    ok(prof["modules"] == [], "no modules without an ETRecord")
    ok("the modules table needs --etrecord" in p.stdout, "modules note in the table")
    golden("profile_model.tables.txt", p.stdout)


@case
def modules_and_op_types_with_etrecord():
    dump, rec = model_etdump("model_rec"), model_etrecord()
    p, rep = report(["--etdump", dump, "--etrecord", rec, "--tables",
                     "ops,modules,delegates"])
    prof = rep["profile"]
    ok("tax" not in prof and "memory" not in prof, "only the selected tables")
    ok(prof["ops"]["key"] == "op_type", "ops keyed by op type")
    samples = {}
    for name, instr, _, did, durs in MODEL:
        if did is None and name.startswith("native_call_"):
            key = ", ".join(op for _, op, _ in event_nodes(name, instr, did))
            samples.setdefault(key, []).extend(ms(durs, False))
    want = sorted(samples.items(), key=lambda kv: (-sum(kv[1]), kv[0]))
    got = [(o["name"], o["count"], o["total"], o["p50"]) for o in prof["ops"]["rows"]]
    ok([g[0] for g in got] == [k for k, _ in want], f"op types {got}")
    for g, (k, v) in zip(got, want):
        ok(g[1] == len(v), f"{k} count")
        close(g[2], sum(v), f"{k} total")
        close(g[3], common.percentile(v, 50), f"{k} p50")
    ok("aten.relu.default, aten.add.Tensor" in samples, "fused op types key")

    # find_total_for_module computed here: events (OPERATOR_CALL excluded) whose
    # nodes' module keys contain the name, each event once, average durations.
    totals = {}
    for name, instr, _, did, durs in MODEL:
        if name == "OPERATOR_CALL":
            continue
        avg = sum(ms(durs, did is not None)) / len(durs)
        keys = {f[0] for _, _, mods in event_nodes(name, instr, did) for f in mods}
        for k in {k2 for k2 in (f[0] for n in NODES.values() for f in n[2])}:
            if any(k in kk for kk in keys):
                t, c = totals.get(k, (0.0, 0))
                totals[k] = (t + avg, c + 1)
    mods = prof["modules"]
    order = [FEATURES, FEAT0, FEAT1, HEAD, HEAD_FC, HEAD_ACT]
    ok([m["key"] for m in mods] == [f[0] for f in order], f"module order {mods}")
    parents = {FEAT0[0]: 0, FEAT1[0]: 0, HEAD_FC[0]: 3, HEAD_ACT[0]: 3}
    exec_avg = sum(MODEL[-1][4]) / len(MODEL[-1][4]) / 1e6
    for m, f in zip(mods, order):
        ok((m["path"], m["type"]) == (f[1], f[2]), f"{f[0]} path/type")
        ok(m["parent"] == parents.get(f[0]), f"{f[0]} parent {m['parent']}")
        ok(m["depth"] == (1 if f[0] in parents else 0), f"{f[0]} depth")
        t, c = totals[f[0]]
        ok(m["events"] == c, f"{f[0]} events {m['events']} != {c}")
        close(m["total"], t, f"{f[0]} total")
        close(m["share"], t / exec_avg, f"{f[0]} share")
        # the same number as --module (upstream's find_total_for_module)
        q = run(["--etdump", dump, "--etrecord", rec, "--module", f[0], "--no-table"])
        mt = re.search(r"= (\S+) ms \((\d+) event", q.stdout)
        ok(mt and float(mt.group(1)) == m["total"] and int(mt.group(2)) == c,
           f"--module {f[0]}: {q.stdout!r} vs {m['total']}")
    close(totals[FEATURES[0]][0], 5.0, "features total by hand (4 + 1)")
    (d,) = prof["delegates"]
    ok(d["backend"] == "XnnpackBackend" and d["calls"] == 2, f"backend {d}")
    golden("profile_model_etrecord.tables.txt", p.stdout)


@case
def tsv_sections_and_default_unchanged():
    dump = model_etdump("model_tsv")
    out = os.path.join(WORK, "t.tsv")
    run(["--etdump", dump, "--tables", "profile,tax,ops", "--tsv", out, "--no-table"])
    text = open(out).read()
    ok(text.startswith("# profile\n\tevent_block_name\tevent_name"), "profile section first")
    sections = re.findall(r"^# (\w+)$", text, re.M)
    ok(sections == ["profile", "tax", "ops"], f"sections {sections}")
    tax = text.split("# tax\n")[1].split("\n\n")[0].splitlines()
    ok(tax[0].split("\t")[:3] == ["block", "run", "Method::execute (ms)"], f"tax header {tax[0]}")
    row0 = tax[1].split("\t")
    ok(row0[:2] == ["Execute", "0"] and float(row0[5]) == 3.5 and float(row0[6]) == 35.0,
       f"tax row {row0}")
    # the default (--tables profile) writes exactly what it wrote before
    plain, explicit = os.path.join(WORK, "a.tsv"), os.path.join(WORK, "b.tsv")
    a = run(["--etdump", dump, "--tsv", plain])
    b = run(["--etdump", dump, "--tsv", explicit, "--tables", "profile"])
    ok(a.stdout == b.stdout and open(plain).read() == open(explicit).read(),
       "--tables profile changes the output")
    ok(open(plain).read() == text.split("# profile\n")[1].split("\n# tax")[0],
       "profile section differs from the plain TSV")


@case
def real_tutorial_numbers():
    """tutorial.etdp decoded by flatc; tax and operator totals computed from its events."""
    src = os.path.join(SRC, "tests", "data", "tutorial.etdp")
    p = subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--size-prefixed",
                        "-o", WORK, FBS, "--", src], capture_output=True, text=True)
    ok(p.returncode == 0, f"flatc: {p.stderr}")
    doc = json.load(open(os.path.join(WORK, "tutorial.json")))
    (run_,) = [r for r in doc["run_data"] if r["name"] == "Execute"]
    dur = {}
    for e in run_["events"]:
        pe = e.get("profile_event")
        if pe:
            v = (int(pe["end_time"]) - int(pe["start_time"])) / 1e6
            dur.setdefault(pe["name"], []).append(v)
    (ex,) = dur.pop("Method::execute")
    ops = {k: v for k, v in dur.items() if k.startswith("native_call_")}
    op_total = sum(sum(v) for v in ops.values())
    _, rep = report(["--etdump", src, "--tables", "tax,ops", "--no-table"])
    (blk,) = rep["profile"]["tax"]
    close(blk["runs"][0]["execute"], ex, "tutorial execute")
    close(blk["runs"][0]["operators"], op_total, "tutorial operators", rel=1e-12)
    close(blk["runs"][0]["tax"], ex - op_total, "tutorial tax", rel=1e-9)
    got = {o["name"]: (o["count"], o["total"]) for o in rep["profile"]["ops"]["rows"]}
    ok(set(got) == set(ops), f"tutorial ops {sorted(got)}")
    for k, v in ops.items():
        ok(got[k][0] == len(v), f"{k} count")
        close(got[k][1], sum(v), f"{k} total", rel=1e-12)


@case
def usage_errors():
    dump = model_etdump("model_usage")
    run(["--etdump", dump, "--tables", "tax,bogus"], code=2)
    run(["--etdump", dump, "--tables", ""], code=2)
    run(["--etdump", dump, "--max-regression", "10"], code=2)
    run(["--etdump", dump, "--baseline-etdump", dump, "--max-regression", "x"], code=2)
    run(["--etdump", dump, "--baseline-etdump", os.path.join(WORK, "missing.etdp")], code=3)


# --- performance diff ------------------------------------------------------------------

# name -> per-run durations in ms; the current run slows native_call_mul.out by 30 %
BASE = {"native_call_add.out": [1.0, 1.1, 0.9], "native_call_mul.out": [2.0, 2.0, 2.0],
        "native_call_conv.out": [3.0, 3.2, 2.8], "native_call_tiny.out": [0.001] * 3}
CURRENT = dict(BASE, **{"native_call_mul.out": [2.6, 2.6, 2.6],
                        "native_call_tiny.out": [0.002] * 3})


def diff_etdump(tag, ops):
    runs = []
    for r in range(3):
        evs, t = [], 10000
        for i, (name, durs) in enumerate(ops.items()):
            d = round(durs[r] * MS)
            evs.append({"profile_event": {"name": name, "chain_index": 0, "instruction_id": i,
                                          "start_time": t, "end_time": t + d}})
            t += d
        evs.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                      "instruction_id": 0, "start_time": 9000,
                                      "end_time": t + 1000}})
        runs.append({"name": "Execute", "events": evs})
    return flatc(tag, {"version": 0, "run_data": runs})


def execute_p50(ops):
    per_run = [sum(round(d[r] * MS) for d in ops.values()) + 2000 for r in range(3)]
    return common.percentile([v / 1e6 for v in per_run], 50)


@case
def perf_diff_finds_the_slowdown():
    base, cur = diff_etdump("base", BASE), diff_etdump("current", CURRENT)
    args = ["--etdump", cur, "--baseline-etdump", base, "--no-table"]
    p, rep = report(args + ["--max-regression", "20", "--min-event-time", "0.01"], code=1)
    d = rep["perf_diff"]
    ok(d["matched"] == 5 and d["baseline_only"] == 0 and d["current_only"] == 0, f"{d}")
    first = d["rows"][0]
    ok(first["event_name"] == "native_call_mul.out", f"ranked first: {first['event_name']}")
    close(first["baseline_p50"], 2.0, "mul baseline p50")
    close(first["current_p50"], 2.6, "mul current p50")
    close(first["change_percent"], 100 * (2.6 - 2.0) / 2.0, "mul change %", rel=1e-9)
    close(first["ratio"], 1.3, "mul ratio", rel=1e-12)
    ok(first["failed"] and d["failures"] == 1, "only mul trips the 20 % gate")
    tiny = [r for r in d["rows"] if r["event_name"] == "native_call_tiny.out"][0]
    ok(tiny["below_min"] and not tiny["gated"] and d["rows"][-1] is not None
       and d["rows"][-1]["event_name"] == "native_call_tiny.out", "tiny event last, not gated")
    ex = [r for r in d["rows"] if r["is_execute"]][0]
    close(ex["baseline_p50"], execute_p50(BASE), "execute baseline p50")
    close(ex["current_p50"], execute_p50(CURRENT), "execute current p50")
    ok("performance gate FAILED: 1 event regresses more than 20%" in p.stderr and
       "native_call_mul.out +30.00%" in p.stderr, f"stderr {p.stderr}")
    ok(re.search(r"^Method::execute \(block Execute\): p50 [0-9.]+ -> [0-9.]+ ms \(\+",
                 p.stdout, re.M), f"Method::execute line: {p.stdout}")
    table_rows = [ln for ln in p.stdout.splitlines() if ln.startswith("│ Execute")]
    ok("native_call_mul.out" in table_rows[0] and "FAIL" in table_rows[0], "first table row")
    # a looser gate passes; a tighter one also catches Method::execute
    run(args + ["--max-regression", "40", "--min-event-time", "0.01"], code=0)
    _, rep = report(args + ["--max-regression", "5", "--min-event-time", "0.01"], code=1)
    failed_names = sorted(r["event_name"] for r in rep["perf_diff"]["rows"] if r["failed"])
    ok(failed_names == ["Method::execute", "native_call_mul.out"], f"failed {failed_names}")
    # without --min-event-time the tiny event (+100 %) is gated and ranks first
    _, rep = report(args + ["--max-regression", "20"], code=1)
    ok(rep["perf_diff"]["rows"][0]["event_name"] == "native_call_tiny.out", "tiny first")
    # no gate: the diff is shown, exit 0
    run(args, code=0)


# --- plots -----------------------------------------------------------------------------

@case
def plots_written_with_and_without_gnuplot():
    dump = model_etdump("model_plot")
    out = os.path.join(WORK, "plots")
    p = run(["--etdump", dump, "--plot", out, "--no-table"])
    names = ("ops_top", "ops_runs", "tax_runs", "timeline")
    for n in names:
        for ext in ("gp", "dat"):
            ok(os.path.exists(os.path.join(out, f"{n}.{ext}")), f"{n}.{ext} missing")
    if shutil.which("gnuplot"):
        for n in names:
            png = os.path.join(out, n + ".png")
            ok(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
               f"{n}.png")
    rows = [ln.split() for ln in open(os.path.join(out, "ops_top.dat"))
            if not ln.startswith("#")]
    # in seconds (the ticks carry SI prefixes): 8 ms and 4 ms
    ok([(r[0], round(float(r[1]) * 1e3, 9), r[2]) for r in rows] ==
       [("0", 8.0, '"native_call_convolution.out"'), ("1", 4.0, '"native_call_relu.out"')],
       f"ops_top.dat {rows}")
    rows = [ln.split() for ln in open(os.path.join(out, "ops_runs.dat"))
            if not ln.startswith("#")]
    # relu per run: 1 + 0.5 = 1.5 and 1 + 1.5 = 2.5
    ok([round(float(x) * 1e3, 9) for x in rows[1][1:6]] == [1.5, 1.75, 2.0, 2.25, 2.5],
       f"ops_runs {rows}")
    rows = [ln.split() for ln in open(os.path.join(out, "tax_runs.dat"))
            if not ln.startswith("#")]
    exp = expected_tax()
    ok([float(r[1]) for r in rows] == [e[4] for e in exp], f"tax_runs {rows}")
    spans = [ln.split() for ln in open(os.path.join(out, "timeline.dat"))
             if not ln.startswith("#")]
    ok(len(spans) == 8, f"timeline spans {len(spans)}")  # delegated events are left out
    ex = [s for s in spans if s[3] == '"Method::execute"'][0]
    close(float(ex[2]) - float(ex[1]), 10.0, "Method::execute span")
    # without gnuplot: the scripts and data, a note, exit 0
    out2 = os.path.join(WORK, "plots2")
    env = dict(os.environ, PATH=os.path.join(WORK, "empty"))
    p = run(["--etdump", dump, "--plot", out2, "--no-table"], env=env)
    ok("gnuplot not found" in p.stderr, f"note: {p.stderr}")
    ok(all(os.path.exists(os.path.join(out2, n + ".gp")) for n in names), "scripts")
    ok(not any(os.path.exists(os.path.join(out2, n + ".png")) for n in names), "no PNG")


print(f"{passed} passed, {failed} failed")
if failed == 0 and not os.environ.get("ETC_KEEP"):
    shutil.rmtree(WORK, ignore_errors=True)
sys.exit(1 if failed else 0)
