#!/usr/bin/env python3
"""ETRecord tests: the real 2023 record (tests/data/etrecord_2023.bin),
ETRecords written here by tests/etrecord_gen.py (stdlib zipfile/json/pickle
only) linked to ETDumps that flatc builds from JSON written here, and bad
ETRecords.

Expected links are written by hand per event from upstream's Inspector
rules (debug_handle_map by instruction id; delegated events through
delegate_map by delegate id: an exact string id, else the last key that is
a substring of str(id) -- for int ids the loop runs even after an exact hit;
backend name on delegated events and DELEGATE_CALL; framework events not
linked). Module totals and reference-output lines are computed here from
the values written.

Environment (set by ctest): ETCOMPARE, ETC_FLATC, ETC_SRC, ETC_WORK.
Prints one line per case and "N passed, M failed" at the end; exits
non-zero on any failure. Cases listed in KNOWN_BUGS print KNOWN-BUG while
they fail (not counted as failures) and FIXED once they pass.
"""
import ast
import csv
import io
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import etrecord_gen as G  # noqa: E402

import common  # noqa: E402
from common import DATA, ETC, FBS, FLATC, SRC  # noqa: E402,F401

REAL = os.path.join(DATA, "etrecord_2023.bin")
TUTORIAL = os.path.join(DATA, "tutorial.etdp")

WORK = common.work_dir("etrecord")

# Cases that fail because of a known bug outside this test's files (none
# now: the delegate-id matching and debug_handle overflow bugs are fixed, and
# their cases fail like any other).
KNOWN_BUGS = {}


# --- running -------------------------------------------------------------------

class Fail(Exception):
    pass


def path(name):
    return os.path.join(WORK, name)


def write(name, data):
    p = path(name)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


def run(argv):
    p = subprocess.run([ETC] + argv, capture_output=True, timeout=60)
    p.stdout = p.stdout.decode("utf-8", "replace")
    p.stderr = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        raise Fail(f"killed by signal {-p.returncode}: {p.stderr.strip()[-500:]}")
    if "Sanitizer" in p.stderr or "runtime error" in p.stderr:
        raise Fail(f"sanitizer report: {p.stderr.strip()[-800:]}")
    return p


def expect_exit(p, code, *needles):
    if p.returncode != code:
        raise Fail(f"exit {p.returncode}, expected {code}; stderr: {p.stderr.strip()[:400]}")
    for n in needles:
        if isinstance(n, re.Pattern):
            if not n.search(p.stderr):
                raise Fail(f"stderr lacks /{n.pattern}/: {p.stderr.strip()[:400]}")
        elif n not in p.stderr:
            raise Fail(f"stderr lacks {n!r}: {p.stderr.strip()[:400]}")


def eq(actual, expected, what):
    if actual != expected:
        raise Fail(f"{what}: expected {expected!r}, got {actual!r}")


def ok(cond, what):
    if not cond:
        raise Fail(what)


_validator = []


def schema_check(rep):
    """Validates a report against schema/etcompare-report.schema.json (needs jsonschema)."""
    if not _validator:
        try:
            import jsonschema
            with open(os.path.join(SRC, "schema", "etcompare-report.schema.json")) as f:
                schema = json.load(f)
            cls = jsonschema.validators.validator_for(schema)
            _validator.append(cls(schema))
        except ImportError:
            _validator.append(None)
    v = _validator[0]
    if v is None:
        return
    errs = sorted(v.iter_errors(rep), key=lambda e: list(e.absolute_path))
    if errs:
        e = errs[0]
        raise Fail(f"schema: at /{'/'.join(str(x) for x in e.absolute_path)}: {e.message[:200]}")


def etcompare_json(argv, tag, code=0, tsv=False):
    """Runs with --json (and --tsv) into temp files; returns (proc, report, tsv rows)."""
    jp, tp = path(tag + ".report.json"), path(tag + ".tsv")
    for f in (jp, tp):
        if os.path.exists(f):
            os.remove(f)
    p = run(argv + ["--json", jp] + (["--tsv", tp] if tsv else []))
    expect_exit(p, code)
    if code != 0:
        ok(not os.path.exists(jp), "--json written although etcompare failed")
        return p, None, None
    with open(jp) as f:
        rep = json.load(f)
    schema_check(rep)
    for w in rep["warnings"]:
        ok(f"etcompare: warning: {w}" in p.stderr, f"warning not on stderr: {w}")
    rows = None
    if tsv:
        with open(tp, newline="") as f:
            rows = list(csv.reader(f, delimiter="\t"))
    return p, rep, rows


def flatc_etdump(tag, runs):
    """ETDump from runs = [[event, ...], ...] (each a list of etdump.fbs Event dicts)."""
    doc = {"version": 0, "run_data": [{"name": "Execute", "events": evs} for evs in runs]}
    jpath = path(tag + ".json")
    with open(jpath, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([FLATC, "-b", "--size-prefixed", "-o", WORK, FBS, jpath],
                       capture_output=True, text=True)
    out = path(tag + ".etdp")
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc failed: {p.stderr.strip()}")
    return out


def profile(name, instr, start, dur, did=None, chain=0):
    ev = {"chain_index": chain, "instruction_id": instr, "start_time": start,
          "end_time": start + dur}
    if name is not None:
        ev["name"] = name
    if isinstance(did, int):
        ev["delegate_debug_id_int"] = did
    elif isinstance(did, str):
        ev["delegate_debug_id_str"] = did
    return {"profile_event": ev}


def etdump_from_specs(tag, specs):
    """specs: [(name, instr, delegate id, [duration per run], chain)]; one run per duration."""
    nruns = len(specs[0][3])
    runs = []
    for r in range(nruns):
        evs, t = [], 1000
        for name, instr, did, durs, chain in specs:
            evs.append(profile(name, instr, t, durs[r], did, chain))
            t += durs[r] + 10
        runs.append(evs)
    return flatc_etdump(tag, runs)


def events_by_name(rep):
    out = {}
    for b in rep["blocks"]:
        for e in b["events"]:
            ok(e["event_name"] not in out, f"event name {e['event_name']} twice")
            out[e["event_name"]] = e
    return out


def op_types_cell(ops):
    """upstream's op_types cell: the list repr, or the short form from 5 ops on."""
    if len(ops) >= 5:
        return f"['{ops[0]}', '{ops[1]}' ... '{ops[-1]}'] ({len(ops)} total)"
    return repr(list(ops))


# --- the generated model -----------------------------------------------------------

ROOT = ("L__self__", "", "torch.nn.Module")
CONV1 = ("L__self___conv1", "conv1", "torch.nn.modules.conv.Conv2d")
BLOCK = ("L__self___block", "block", "model.Block")
BLOCK_RELU = ("L__self___block_relu", "block.relu", "torch.nn.modules.activation.ReLU")
HEAD = ("L__self___layers_0_head", "getattr(L['self'].layers, '0').head", "model.Head")
LOWERED = ("L__self___lowered", "lowered", "model.Lowered")


class N:
    """A node of the test model: what is written and what is expected back."""

    def __init__(self, name, op, handle, mods, trace, inputs=(), named=False):
        self.name, self.op, self.handle, self.mods = name, op, handle, mods
        self.trace = G.trace_str(trace)
        self.inputs, self.named = inputs, named

    def json(self):
        return G.node(self.name, self.op, self.inputs, self.handle, self.trace, self.mods,
                      source_fn=f"{self.name},{self.op}", named=self.named)


def fr(line, code="y = f(x)", file="/src/proj/model.py", fn="forward"):
    return (file, line, fn, code)


NODES = [
    N("aten_convolution_default", "aten.convolution.default", 1, [ROOT, CONV1], [fr(10)],
      inputs=[("input", "x"), ("weight", "p_conv1_weight"), ("bias", None),
              ("stride", [1, 1])]),
    N("aten_relu_default", "aten.relu.default", 2, [ROOT, BLOCK, BLOCK_RELU],
      [fr(30), fr(5, "return self.relu(x)", "/src/proj/block.py")]),
    N("aten_mul_tensor", "aten.mul.Tensor", 3, [ROOT, BLOCK], [fr(12)],
      inputs=[("self", "aten_relu_default"), ("other", 2)]),
    N("aten_add_tensor", "aten.add.Tensor", 3, [ROOT, BLOCK], [fr(12)]),
    N("aten_view_copy_default", "aten.view_copy.default", None, [ROOT], [fr(13)]),
    N("aten_sub_tensor", "aten.sub.Tensor", 10, [ROOT, HEAD], [fr(20)], named=True),
    N("aten_div_tensor", "aten.div.Tensor", 11, [ROOT, HEAD], [fr(21)], named=True),
    N("aten_exp_default", "aten.exp.default", 12, [ROOT, HEAD], [fr(22)], named=True),
    N("aten_log_default", "aten.log.default", 13, [ROOT, HEAD], [fr(23)], named=True),
    N("aten_tanh_default", "aten.tanh.default", 14, [ROOT, HEAD], [fr(24)], named=True),
    N("aten_linear_default", "aten.linear.default", 20, [ROOT, LOWERED], [fr(40)]),
    N("aten_gelu_default", "aten.gelu.default", 21, [ROOT, LOWERED], [fr(41)]),
    N("aten__softmax_default", "aten._softmax.default", 22, [ROOT, LOWERED], [fr(42)]),
    N("aten_mean_dim", "aten.mean.dim", 23, [ROOT, LOWERED], [fr(43)]),
]

HANDLE_MAP = {"0": 1, "1": [2], "2": [3], "3": [10, 11, 12, 13], "4": [10, 11, 12, 13, 14],
              "5": [20, 21, 22, 23], "6": [99], "8": [2]}
DELEGATE_MAP = {"5": {"name": "BackendX",
                      "delegate_map": {"0": [20], "1": [21, 22], "conv_block": [23],
                                       "add": [21], "fused": [22]}}}
NUM_OUTS = {"0": 1, "1": 1, "2": 2, "5": 3}

# (event name written, instruction, delegate id, durations of two runs, chain)
SPECS = [
    ("native_call_convolution.out", 0, None, [1000000, 3000000], 0),
    ("native_call_relu.out", 1, None, [250000, 350000], 0),
    ("OPERATOR_CALL", 2, None, [500000, 700000], 0),
    ("native_call_mul.out", 2, None, [400000, 600001], 0),
    ("native_call_head4", 3, None, [10000, 30000], 0),
    ("native_call_head5", 4, None, [20000, 40000], 0),
    ("DELEGATE_CALL", 5, None, [2000000, 2200000], 0),
    (None, 5, 0, [300, 500], 0),
    (None, 5, 1, [700, 900], 0),
    (None, 5, "conv_block", [11, 13], 0),
    (None, 5, "fused_add_2", [17, 19], 0),
    (None, 5, "unknown", [23, 29], 0),
    ("native_call_nothing", 6, None, [5000, 7000], 0),
    ("native_call_missing", 7, None, [6000, 8000], 0),
    (None, 8, 3, [31, 37], 0),
    ("Method::execute", 0, None, [9000000, 9500000], 1),
]


def event_name(spec):
    return spec[0] if spec[2] is None else str(spec[2])


# event name -> (debug handles or None, backend or None, num_outputs or None)
EXPECTED = {
    "native_call_convolution.out": ([1], None, 1),
    "native_call_relu.out": ([2], None, 1),
    "OPERATOR_CALL": ([3], None, 2),
    "native_call_mul.out": ([3], None, 2),
    "native_call_head4": ([10, 11, 12, 13], None, None),
    "native_call_head5": ([10, 11, 12, 13, 14], None, None),
    "DELEGATE_CALL": ([20, 21, 22, 23], "BackendX", 3),
    "0": ([20], "BackendX", 3),
    "1": ([21, 22], "BackendX", 3),
    "conv_block": ([23], "BackendX", 3),
    "fused_add_2": ([22], "BackendX", 3),  # "add" and "fused" are substrings: the last wins
    "unknown": (None, "BackendX", 3),
    "native_call_nothing": ([99], None, None),
    "native_call_missing": (None, None, None),
    "3": ([2], None, None),  # no delegate_map entry: debug_handle_map's, with a warning
    "Method::execute": (None, None, None),  # framework event: not linked
}


def nodes_for(handles, nodes=NODES):
    return [n for h in (handles or []) for n in nodes if n.handle == h]


def check_event_links(ev, handles, backend, nouts, nodes, what):
    sel = nodes_for(handles, nodes)
    eq(ev["debug_handles"], handles, f"{what}: debug_handles")
    eq(ev["op_types"], [n.op for n in sel], f"{what}: op_types")
    eq(ev["delegate_backend_name"], backend, f"{what}: delegate_backend_name")
    eq(ev["stack_traces"], {n.name: n.trace for n in sel}, f"{what}: stack_traces")
    eq(ev["module_hierarchy"],
       {n.name: [{"key": k, "path": p, "type": t} for k, p, t in n.mods] for n in sel},
       f"{what}: module_hierarchy")
    eq(ev["num_outputs"], nouts, f"{what}: num_outputs")


def main_record(name="main.etrecord", **over):
    kw = dict(programs={"forward": G.program(n.json() for n in NODES)},
              graph_map={"aten_dialect_output/forward": G.program([])},
              debug_handle_map={"forward": HANDLE_MAP}, delegate_map={"forward": DELEGATE_MAP},
              num_outs_map={"forward": NUM_OUTS}, export_graph_id=140234)
    kw.update(over)
    p = path(name)
    G.write_etrecord(p, **kw)
    return p


_main = {}


def main_inputs():
    if not _main:
        _main["rec"] = main_record()
        _main["dump"] = etdump_from_specs("main", SPECS)
    return _main["rec"], _main["dump"]


# --- cases ---------------------------------------------------------------------------

CASES = []


def case(label):
    def deco(fn):
        CASES.append((label, fn))
        return fn
    return deco


REAL_GRAPH = [
    'Edge program "forward" (1 nodes), single-program ETRecord layout',
    "     0  aten_mul_tensor = aten.mul.Tensor(self=arg0_1, other=arg1_1)  debug_handle=2"
    "  model.py:18",
    "Other graphs (graph_map): aten_dialect_output/forward",
]


@case("real 2023 record: --graph")
def _():
    for argv in (["--graph"], ["--graph", "forward"], ["--graph=forward"]):
        p = run(["--etrecord", REAL] + argv)
        if argv == ["--graph=forward"] and p.returncode == 2:
            continue  # the --opt=value spelling is optional
        expect_exit(p, 0)
        eq(p.stdout.splitlines(), REAL_GRAPH, f"{argv} stdout")
    p = run(["--etrecord", REAL, "--graph", "backward"])
    expect_exit(p, 3, "backward")


@case("real 2023 record: empty maps with tutorial.etdp")
def _():
    p, rep, rows = etcompare_json(["--etdump", TUTORIAL, "--etrecord", REAL], "real", tsv=True)
    eq(rep["etrecord"]["single_program_layout"], True, "single_program_layout")
    eq(rep["etrecord"]["methods"], ["forward"], "methods")
    eq(len(rep["warnings"]), 1, f"warnings {rep['warnings']}")
    ok("debug_handle_map" in rep["warnings"][0] and "empty" in rep["warnings"][0],
       f"warning {rep['warnings'][0]!r}")
    n = 0
    for b in rep["blocks"]:
        for e in b["events"]:
            n += 1
            eq((e["op_types"], e["debug_handles"], e["delegate_backend_name"]), ([], None, None),
               f"event {e['event_name']}")
    ok(n > 10, f"only {n} events")
    h = rows[0]
    ok(h[-3:] == ["debug_handles", "stack_traces", "module_hierarchy"], f"tsv header {h}")


@case("real 2023 record: --show-references")
def _():
    p = run(["--etrecord", REAL, "--show-references"])
    expect_exit(p, 0)
    eq(p.stdout.splitlines(), ["reference_outputs: none in this ETRecord",
                               "representative_inputs: none in this ETRecord"], "stdout")


@case("linked events (JSON, event by event)")
def _():
    rec, dump = main_inputs()
    p, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], "main")
    eq(rep["etrecord"]["methods"], ["forward"], "methods")
    eq(rep["etrecord"]["single_program_layout"], False, "single_program_layout")
    eq(rep["etrecord"]["export_graph_id"], "140234", "export_graph_id")
    evs = events_by_name(rep)
    eq(sorted(evs), sorted(EXPECTED), "event names")
    for name, (handles, backend, nouts) in EXPECTED.items():
        check_event_links(evs[name], handles, backend, nouts, NODES, name)
    w = rep["warnings"]
    eq(len(w), 2, f"warnings {w}")
    ok(any("instruction 7" in x and "debug_handle_map" in x for x in w),
       f"no warning for instruction 7: {w}")
    ok(any("delegate_map" in x and "instruction 8" in x for x in w),
       f"no warning for instruction 8: {w}")


@case("linked events: table and TSV columns")
def _():
    rec, dump = main_inputs()
    p, rep, rows = etcompare_json(["--etdump", dump, "--etrecord", rec], "main-tsv", tsv=True)
    header = rows[0]
    col = {h: i for i, h in enumerate(header)}
    for c in ("op_types", "delegate_backend_name", "debug_handles", "stack_traces",
              "module_hierarchy"):
        ok(c in col, f"tsv has no {c} column: {header}")
    seen = set()
    for r in rows[1:]:
        name = r[col["event_name"]]
        ok(name != "OPERATOR_CALL", "OPERATOR_CALL row in the TSV")
        handles, backend, _ = EXPECTED[name]
        sel = nodes_for(handles)
        ops = [n.op for n in sel]
        eq(r[col["op_types"]], op_types_cell(ops), f"{name}: tsv op_types")
        eq(r[col["delegate_backend_name"]], backend or "", f"{name}: tsv backend")
        eq(r[col["debug_handles"]], str(handles) if handles is not None else "",
           f"{name}: tsv debug_handles")
        eq(ast.literal_eval(r[col["stack_traces"]]), {n.name: n.trace for n in sel},
           f"{name}: tsv stack_traces")
        eq(ast.literal_eval(r[col["module_hierarchy"]]),
           {n.name: {k: (pa, t) for k, pa, t in n.mods} for n in sel},
           f"{name}: tsv module_hierarchy")
        if len(ops) in (4, 5) or name == "native_call_mul.out":
            ok(op_types_cell(ops) in p.stdout, f"table lacks {op_types_cell(ops)!r}")
        seen.add(name)
    eq(seen, set(EXPECTED) - {"OPERATOR_CALL"}, "tsv rows")
    ok("['aten.sub.Tensor', 'aten.div.Tensor' ... 'aten.tanh.default'] (5 total)" in p.stdout,
       "table lacks the short form of 5 op types")
    # without an ETRecord the extra columns are absent
    _, _, rows = etcompare_json(["--etdump", dump], "main-norec", tsv=True)
    for c in ("debug_handles", "stack_traces", "module_hierarchy"):
        ok(c not in rows[0], f"tsv without --etrecord has {c}")


def module_total(rep, key):
    """find_total_for_module computed from the durations written (not the report)."""
    by_name = {event_name(s): s for s in SPECS}
    total, count = 0.0, 0
    for b in rep["blocks"]:
        for e in b["events"]:
            name = e["event_name"]
            if name == "OPERATOR_CALL":
                continue
            handles = EXPECTED[name][0]
            if not any(key in k for n in nodes_for(handles) for k, _, _ in n.mods):
                continue
            spec = by_name[name]
            raw = [d / 1e6 for d in spec[3]]  # delegated events are scaled too (issue 13)
            s = 0.0
            for v in raw:
                s += v
            total += s / len(raw)
            count += 1
    return total, count


@case("--module totals")
def _():
    rec, dump = main_inputs()
    for key, want_count in (("block", 3), ("lowered", 5), ("conv1", 1), ("L__self__", 11), ("layers_0", 2)):
        p, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec, "--module", key,
                                    "--no-table"], "module-" + key)
        total, count = module_total(rep, key)
        eq(count, want_count, f"{key}: events counted here")
        m = re.search(r'find_total_for_module\("([^"]*)"\) = (\S+) ms \((\d+) events?\)',
                      p.stdout)
        ok(m, f"{key}: no find_total_for_module line in {p.stdout!r}")
        eq(m.group(1), key, "module name")
        eq(int(m.group(3)), count, f"{key}: event count")
        got = float(m.group(2))
        ok(math.isclose(got, total, rel_tol=1e-12, abs_tol=1e-15),
           f"{key}: total {got!r}, expected {total!r}")
    p = run(["--etdump", dump, "--module", "block"])
    expect_exit(p, 2, "--module")
    # issue 13: a name that matches nothing is an input error listing close names
    p = run(["--etdump", dump, "--etrecord", rec, "--module", "no_such_module"])
    expect_exit(p, 3, "the closest:")


# two methods ----------------------------------------------------------------------

DEC_NODES = [
    N("aten_embedding_default", "aten.embedding.default", 5, [ROOT], [fr(60)],
      inputs=[("weight", "p_emb"), ("indices", "tokens")]),
    N("aten_bmm_default", "aten.bmm.default", 6, [ROOT], [fr(61, file="/src/dec.py")],
      inputs=[("self", "aten_embedding_default"), ("mat2", "p_w")], named=True),
]
FWD_NODES = NODES[:2]


def two_method_record():
    p = path("two.etrecord")
    if not os.path.exists(p):
        G.write_etrecord(
            p, programs={"forward": G.program(n.json() for n in FWD_NODES),
                         "decode": G.program(n.json() for n in DEC_NODES)},
            debug_handle_map={"forward": {"0": [1], "1": [2]}, "decode": {"0": [5], "1": 6}},
            delegate_map={"forward": {}, "decode": {}},
            num_outs_map={"forward": {"0": 1}, "decode": {"1": 4}},
            graph_map={"base/forward": G.program([]), "base/decode": G.program([])})
    return p


@case("two-method record: --method")
def _():
    rec = two_method_record()
    dump = etdump_from_specs("two", [("op_a", 0, None, [1000, 2000], 0),
                                     ("op_b", 1, None, [3000, 4000], 0)])
    _, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], "two-fwd")
    eq(rep["etrecord"]["methods"], ["forward", "decode"], "methods")
    eq(rep["etrecord"]["method"], "forward", "method")
    evs = events_by_name(rep)
    check_event_links(evs["op_a"], [1], None, 1, FWD_NODES, "forward op_a")
    check_event_links(evs["op_b"], [2], None, None, FWD_NODES, "forward op_b")
    _, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec, "--method", "decode"],
                               "two-dec")
    eq(rep["etrecord"]["method"], "decode", "method")
    evs = events_by_name(rep)
    check_event_links(evs["op_a"], [5], None, None, DEC_NODES, "decode op_a")
    check_event_links(evs["op_b"], [6], None, 4, DEC_NODES, "decode op_b")
    p = run(["--etdump", dump, "--etrecord", rec, "--method", "encode"])
    # a name not in the inputs: exit 3 (docs/ci-gate.md), what the record has
    expect_exit(p, 3, '"encode"', "forward, decode")
    p = run(["--etdump", dump, "--etrecord", rec, "--method", "Decode"])
    expect_exit(p, 3, '"Decode"', "did you mean decode?")


@case("two-method record: --graph METHOD")
def _():
    rec = two_method_record()
    p = run(["--etrecord", rec, "--graph", "decode"])
    expect_exit(p, 0)
    eq(p.stdout.splitlines(), [
        'Edge program "decode" (2 nodes)',
        "     0  aten_embedding_default = aten.embedding.default(weight=p_emb, indices=tokens)"
        "  debug_handle=5  model.py:60  []",
        "     1  aten_bmm_default = aten.bmm.default(self=aten_embedding_default, mat2=p_w)"
        "  debug_handle=6  dec.py:61  []",
        "Other graphs (graph_map): base/forward base/decode",
    ], "--graph decode")
    p = run(["--etrecord", rec, "--graph"])
    expect_exit(p, 0)
    eq(p.stdout.splitlines()[:3], [
        'Edge program "forward" (2 nodes)',
        "     0  aten_convolution_default = aten.convolution.default(input=x, "
        "weight=p_conv1_weight, bias=None, stride=[1, 1])  debug_handle=1  model.py:10  [conv1]",
        "     1  aten_relu_default = aten.relu.default()  debug_handle=2  block.py:5  "
        "[block.relu]",
    ], "--graph (forward)")
    p = run(["--etrecord", rec, "--graph", "encode"])
    expect_exit(p, 3, '"encode"', "forward, decode")


@case("legacy layout with flat maps")
def _():
    rec = path("legacy.etrecord")
    G.write_etrecord(rec, legacy=True, programs={"forward": G.program(n.json() for n in NODES)},
                     debug_handle_map={"0": [1], "1": 2, "5": [20, 21, 22, 23]},
                     delegate_map={"5": {"name": "BackendY",
                                         "delegate_map": {"0": [20], "1": [21, 22]}}},
                     num_outs_map={"0": 1})
    dump = etdump_from_specs("legacy", [
        ("conv", 0, None, [1000, 2000], 0), ("relu", 1, None, [1000, 2000], 0),
        ("DELEGATE_CALL", 5, None, [1000, 2000], 0), (None, 5, 1, [5, 6], 0)])
    _, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], "legacy")
    eq(rep["etrecord"]["single_program_layout"], True, "single_program_layout")
    eq(rep["etrecord"]["methods"], ["forward"], "methods")
    eq(rep["warnings"], [], "warnings")
    evs = events_by_name(rep)
    check_event_links(evs["conv"], [1], None, 1, NODES, "conv")
    check_event_links(evs["relu"], [2], None, None, NODES, "relu")
    check_event_links(evs["DELEGATE_CALL"], [20, 21, 22, 23], "BackendY", None, NODES,
                      "DELEGATE_CALL")
    check_event_links(evs["1"], [21, 22], "BackendY", None, NODES, "delegate 1")


def delegate_case(tag, dmap, did, handles):
    nodes = [N(f"n{h}", f"aten.op{h}.default", h, [ROOT], [fr(h)]) for h in range(1, 6)]
    rec = path(tag + ".etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(n.json() for n in nodes)},
                     debug_handle_map={"forward": {"2": [5]}},
                     delegate_map={"forward": {"2": {"name": "B", "delegate_map": dmap}}})
    dump = etdump_from_specs(tag, [(None, 2, did, [7, 9], 0)])
    _, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], tag)
    check_event_links(events_by_name(rep)[str(did)], handles, "B", None, nodes, f"id {did!r}")


@case("delegate string id: exact key beats a later substring key")
def _():
    delegate_case("dstr", {"fused_add": [1], "add": [2]}, "fused_add", [1])


@case("delegate int id: substring fallback")
def _():
    delegate_case("dint", {"x": [1], "4": [2], "2": [3]}, 42, [3])


@case("delegate int id: exact key then a later substring key")
def _():
    delegate_case("dint2", {"15": [1], "5": [2]}, 15, [2])


@case("delegate string id longer than 31 characters")
def _():
    long_id = "encoder_layer_12_self_attention_qkv_projection"
    delegate_case("dlong", {"other": [1], long_id: [2]}, long_id, [2])


@case("map strings with brackets and escaped quotes (depth pre-scan)")
def _():
    backend = 'Back\\end"X' + "[" * 100 + "{" * 100
    nodes = [N("n1", "aten.op1.default", 1, [ROOT], [fr(1)])]
    rec = path("bracketname.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(n.json() for n in nodes)},
                     debug_handle_map={"forward": {"2": [1]}},
                     delegate_map={"forward": {"2": {"name": backend,
                                                     "delegate_map": {"7": [1]}}}})
    dump = etdump_from_specs("bracketname", [(None, 2, 7, [7, 9], 0)])
    _, rep, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], "bracketname")
    check_event_links(events_by_name(rep)["7"], [1], backend, None, nodes, "id 7")


@case("record that does not belong (exit 3)")
def _():
    rec = main_record("foreign.etrecord", debug_handle_map={"forward": {"100": [1], "101": [2]}},
                      delegate_map={"forward": {}}, num_outs_map=None)
    _, dump = main_inputs()
    p, _, _ = etcompare_json(["--etdump", dump, "--etrecord", rec], "foreign", code=3)
    expect_exit(p, 3, "does not belong", "foreign.etrecord")


# references -------------------------------------------------------------------------

def g6(v):
    return "%.6g" % v


def ref_line(label, dtype, shape, values, strided=False, maxv=8):
    """Integers print exactly (int64 beyond 2^53 too), bools as True/False."""
    s = f"  {label}: Tensor {dtype} [{', '.join(str(x) for x in shape)}]"
    if not values:
        return s + "  (empty)"
    nums = [float(v) for v in values]
    total = 0.0
    for v in nums:
        total += v
    if dtype in ("int64", "uint64"):
        lo, hi = str(min(values)), str(max(values))
    else:
        lo, hi = g6(min(nums)), g6(max(nums))
    s += f"  min={lo} max={hi} mean={g6(total / len(nums))}"
    if strided:
        s += " (strided view)"

    def show(v):
        if dtype == "bool":
            return "True" if v else "False"
        return str(int(v)) if dtype in ("int64", "uint64") else g6(float(v))
    shown = ", ".join(show(v) for v in values[:maxv])
    if len(nums) > maxv:
        shown += f", ... ({len(nums) - maxv} more)"
    return s + f"  [{shown}]"


@case("--show-references (torch.save writer)")
def _():
    a_vals = [1.5, -2.0, 3.25, 0.0, 100.0, -0.125]
    a = G.Tensor("float32", a_vals, shape=[2, 3])
    at = G.Tensor("float32", storage=a.storage, shape=[3, 2], stride=[1, 3])
    at_vals = [a_vals[r + 3 * c] for r in range(3) for c in range(2)]
    b_vals = [7, -8, 9, 1 << 40]
    b = G.Tensor("int64", b_vals, shape=[4])
    c = G.Tensor("float32", [0.5], shape=[])
    d_vals = [float(i) * 0.25 for i in range(10)]
    d = G.Tensor("float32", d_vals, shape=[10])
    e = G.Tensor("float32", [], shape=[0, 3])
    sl = G.Tensor("int64", storage=b.storage, shape=[2], stride=[1], offset=2)
    x = G.Tensor("bool", [True, False, True], shape=[3])
    y = G.Tensor("float64", [0.1, 1e-300], shape=[1, 2])
    refs = {"forward": [[a, b, at], [c]], "decode": [[[d, e], sl]]}
    rec = path("refs.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(n.json() for n in NODES[:1])},
                     debug_handle_map={"forward": {"0": [1]}}, reference_outputs=refs,
                     representative_inputs=[x, y])
    p = run(["--etrecord", rec, "--show-references"])
    expect_exit(p, 0)
    want = [
        "reference_outputs:",
        ref_line("forward[0][0]", "float32", [2, 3], a_vals),
        ref_line("forward[0][1]", "int64", [4], b_vals),
        ref_line("forward[0][2]", "float32", [3, 2], at_vals, strided=True),
        ref_line("forward[1][0]", "float32", [], [0.5]),
        ref_line("decode[0][0][0]", "float32", [10], d_vals),
        ref_line("decode[0][0][1]", "float32", [0, 3], []),
        ref_line("decode[0][1]", "int64", [2], b_vals[2:]),
        "representative_inputs:",
        ref_line("[0]", "bool", [3], [1, 0, 1]),
        ref_line("[1]", "float64", [1, 2], [0.1, 1e-300]),
    ]
    eq(p.stdout.splitlines(), want, "--show-references")
    p = run(["--etrecord", rec, "--show-references", "--max-values", "2"])
    expect_exit(p, 0)
    ok(ref_line("decode[0][0][0]", "float32", [10], d_vals, maxv=2) in p.stdout.splitlines(),
       f"--max-values 2: {p.stdout!r}")
    # newer torch members and storages written in reverse key order read the same
    rec2 = path("refs2.etrecord")
    G.write_etrecord(rec2, programs={"forward": G.program(n.json() for n in NODES[:1])},
                     reference_outputs=G.torch_save(refs, byteorder=True, format_version=True,
                                                    reverse_storages=True))
    p2 = run(["--etrecord", rec2, "--show-references"])
    expect_exit(p2, 0)
    eq(p2.stdout.splitlines()[:8], want[:8], "byteorder/.format_version archive")


# bad input ---------------------------------------------------------------------------------

def bad(tag, data, *needles, code=3):
    rec = write(tag + ".etrecord", data)
    _, dump = main_inputs()
    for argv in (["--etdump", dump, "--etrecord", rec], ["--etrecord", rec, "--graph"]):
        p = run(argv)
        expect_exit(p, code, "etcompare: error:", *needles)
        ok(p.stdout == "" or "--graph" not in argv, f"--graph printed {p.stdout[:200]!r}")
    return p


def members(**over):
    kw = dict(programs={"forward": G.program(n.json() for n in NODES[:4])},
              debug_handle_map={"forward": {"0": [1]}}, delegate_map={"forward": {}})
    kw.update(over)
    return G.etrecord_members(**kw)


@case("bad: not a zip")
def _():
    bad("notzip", b"this is not a zip archive at all\n" * 10, "notzip.etrecord")
    bad("empty", b"", "empty.etrecord")


@case("bad: zip without ETRECORD_V0")
def _():
    bad("noident", G.zip_bytes(members(identifier=False)), "ETRECORD_V0")


@case("bad: truncated zip")
def _():
    data = G.zip_bytes(members())
    n = len(data)
    for cut in sorted({1, 4, 30, n // 3, n // 2, n - 100, n - 23, n - 22, n - 1}):
        try:
            bad(f"trunc{cut}", data[:cut], f"trunc{cut}.etrecord")
        except Fail as e:
            raise Fail(f"cut at {cut} of {n}: {e}")


@case("bad: invalid JSON in debug_handle_map")
def _():
    text = '{"forward": {\n  "0": [1,, 2]}}'
    p = bad("badjson", G.zip_bytes(members(debug_handle_map=text)),
            "debug_handle_map", re.compile(r"line 2, column \d+"))


@case("bad: maps of the wrong shape")
def _():
    for tag, kw, needle in [
        ("shape-list", dict(debug_handle_map=[1, 2]), "debug_handle_map"),
        ("shape-str", dict(debug_handle_map={"forward": {"0": [1, "x"]}}), "debug_handle_map"),
        ("shape-meth", dict(debug_handle_map={"forward": [1]}), "debug_handle_map"),
        ("shape-key", dict(debug_handle_map={"forward": {"zero": [1]}}), "debug_handle_map"),
        ("shape-handle", dict(debug_handle_map={"forward": {"0": 1.5}}), "debug_handle_map"),
        ("shape-deleg", dict(delegate_map={"forward": {"0": [1]}}), "delegate_map"),
        ("shape-deleg2", dict(delegate_map={"forward": {"0": {"name": "B", "delegate_map": [1]}}}),
         "delegate_map"),
        ("shape-deleg3", dict(delegate_map={"forward": {"0": {"name": 7}}}), "delegate_map"),
        ("shape-outs", dict(num_outs_map={"forward": {"0": "one"}}),
         "instruction_id_to_num_outs_map"),
        ("key-lead0", dict(debug_handle_map={"forward": {"07": [1]}}), "debug_handle_map"),
        ("key-space", dict(debug_handle_map={"forward": {" 5": [1]}}), "debug_handle_map"),
        ("key-plus", dict(debug_handle_map={"forward": {"+5": [1]}}), "debug_handle_map"),
        ("key-big", dict(debug_handle_map={"forward": {"2147483648": [1]}}), "debug_handle_map"),
        ("key-deleg", dict(delegate_map={"forward": {"x1": {"name": "B"}}}), "delegate_map"),
        ("dup-key", dict(debug_handle_map='{"forward": {"0": [1], "0": [2]}}'),
         "debug_handle_map"),
    ]:
        try:
            bad(tag, G.zip_bytes(members(**kw)), needle)
        except Fail as e:
            raise Fail(f"{tag}: {e}")


@case("bad: Edge programs")
def _():
    m = "edge_dialect_exported_program/forward"
    nodes = [n.json() for n in NODES[:3]]
    notarget = [dict(x) for x in nodes]
    del notarget[1]["target"]
    abc = json.loads(json.dumps(nodes))
    abc[2]["metadata"]["debug_handle"] = "abc"
    for tag, prog, needles in [
        ("nonodes", {"graph_module": {"graph": {}}}, [m, "nodes"]),
        ("nodesobj", {"graph_module": {"graph": {"nodes": {}}}}, [m, "nodes"]),
        ("notarget", G.program(notarget), [m, "node 1", "target"]),
        ("abc", G.program(abc), [m, "node 2", '"abc"']),
        ("progjson", '{"graph_module": ', [m, "invalid JSON"]),
        ("metalist", G.program([dict(nodes[0], metadata=[1])]), [m, "metadata"]),
        ("neghandle", G.program([G.node("a", "aten.abs.default", handle="-3")]), [m, '"-3"']),
        ("gmlist", {"graph_module": [1]}, [m, '"graph"']),
        ("toplist", [1, 2], [m, "not a JSON object"]),
        ("nodenum", G.program([5]), [m, "node 0"]),
        ("targetnum", G.program([dict(nodes[0], target=5)]), [m, "target"]),
    ]:
        try:
            bad(tag, G.zip_bytes(members(programs={"forward": prog})), *needles)
        except Fail as e:
            raise Fail(f"{tag}: {e}")


@case("bad: debug_handle beyond int64")
def _():
    m = "edge_dialect_exported_program/forward"
    for tag, h, as_int in (("hugestr", "99999999999999999999", False),
                           ("hugeint", 99999999999999999999, True)):
        prog = G.program([G.node("a", "aten.abs.default", handle=h, handle_as_int=as_int)])
        bad(tag, G.zip_bytes(members(programs={"forward": prog})), m, "debug_handle")


@case("bad: two members with the same name")
def _():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate
        data = G.zip_bytes(members(extra=[("debug_handle_map", b'{"forward": {"0": [2]}}')]))
    bad("dupmember", data, "dupmember.etrecord")


@case("bad: member named edge_dialect_exported_program/ (no method)")
def _():
    extra = [("edge_dialect_exported_program/", b"{}")]
    bad("emptymethod", G.zip_bytes(members(extra=extra)), "edge_dialect_exported_program/",
        "method")


@case("bad: JSON nested 100 deep")
def _():
    deep = "[" * 100 + "]" * 100
    bad("deepmap", G.zip_bytes(members(debug_handle_map='{"forward": {"0": ' + deep + "}}")),
        "debug_handle_map", "nested deeper than 64")
    prog = json.dumps(G.program(n.json() for n in NODES[:1]))
    prog = prog[:-1] + ', "extra": ' + deep + "}"
    bad("deepprog", G.zip_bytes(members(programs={"forward": prog})),
        "edge_dialect_exported_program/forward", "nested deeper than 64")
    # 64 levels pass the depth check (and then fail the shape check), 65 do not
    for depth, needle in ((64, "non-integer"), (65, "nested deeper than 64")):
        k = depth - 2
        text = '{"forward": {"0": ' + "[" * k + "]" * k + "}}"
        bad(f"depth{depth}", G.zip_bytes(members(debug_handle_map=text)), "debug_handle_map",
            needle)
    # brackets inside strings (also after escaped quotes) do not count
    trace = 'File "/x/m.py", line 3, in f\n  s = "\\"' + "[" * 200 + '"\n'
    prog = G.program([G.node("a", "aten.abs.default", handle=1, trace=trace)])
    rec = write("strbrackets.etrecord", G.zip_bytes(members(programs={"forward": prog})))
    p = run(["--etrecord", rec, "--graph"])
    expect_exit(p, 0)
    ok("a = aten.abs.default()  debug_handle=1  m.py:3" in p.stdout, f"--graph: {p.stdout!r}")


@case("bad: reference_outputs pickle naming os.system")
def _():
    marker = path("pwned")
    for glob in (b"os\nsystem", b"posix\nsystem", b"builtins\neval", b"subprocess\ncall"):
        cmd = f"touch {marker}".encode()
        pkl = (b"\x80\x02c" + glob + b"\nq\x00X" + len(cmd).to_bytes(4, "little") + cmd +
               b"\x85R.")
        arch = G.torch_save({}, pickle_bytes=pkl)
        for member in ("reference_outputs", "representative_inputs"):
            tag = "evil-" + glob.split(b"\n")[0].decode() + "-" + member
            p = bad(tag, G.zip_bytes(members(**{member: arch})), member,
                    glob.replace(b"\n", b".").decode())
            ok("forbidden" in p.stderr or "not allowed" in p.stderr,
               f"{tag}: message does not say the GLOBAL is refused: {p.stderr.strip()}")
            ok(not os.path.exists(marker), f"{tag}: the pickle was executed")


@case("reference_outputs as upstream's pickle.dumps stream (before v1.3): read, no warning")
def _():
    raw = pickle.dumps({"forward": [[1.0, 2.0]]}, protocol=4)
    rec = write("rawpickle.etrecord", G.zip_bytes(members(reference_outputs=raw)))
    _, dump = main_inputs()
    # this record's debug_handle_map has instruction 0 alone: not main.etdp's own
    # record (issue 22 refuses it), so --force; the reference outputs are the point
    for argv in (["--etdump", dump, "--etrecord", rec, "--force"], ["--etrecord", rec, "--graph"],
                 ["--etrecord", rec, "--show-references"]):
        p = run(argv)
        expect_exit(p, 0)
        ok("pickle.dumps" not in p.stderr, p.stderr[:300])
    ok("forward[0][0]: float 1\n" in p.stdout and "forward[0][1]: float 2\n" in p.stdout,
       p.stdout[:300])


@case("review fixes: duplicate programs, graph_map --graph, as_none, higher-order ops")
def _():
    prog = G.program([G.node("n1", "aten.relu.default", [("x", "arg0")], handle=1)])
    dup = G.zip_bytes(members(programs={"forward": prog}) +
                      [("edge_dialect_exported_program", json.dumps(prog).encode())])
    p = run(["--etrecord", write("dup.etrecord", dup), "--graph"])
    expect_exit(p, 3, "two Edge programs for method \"forward\"")
    odd = G.program([
        {"target": "aten.linear.default", "inputs": [{"name": "bias", "arg": {"as_none": []}},
                                                     {"name": "w", "arg": {"as_none": True}}],
         "outputs": [{"as_tensor": {"name": "lin"}}], "metadata": {"debug_handle": "1"}},
        {"target": "torch.ops.higher_order.executorch_call_delegate", "inputs": [],
         "outputs": [{"as_tensor": {"name": "call"}}], "metadata": {"debug_handle": "2"}},
        {"target": "torch.ops.aten.mul.Tensor", "inputs": [],
         "outputs": [{"as_tensor": {"name": "m"}}], "metadata": {}}])
    rec = write("odd.etrecord", G.zip_bytes(members(
        programs={"forward": odd}, graph_map={"aten_dialect_output/forward": prog})))
    p = run(["--etrecord", rec, "--graph"])
    expect_exit(p, 0)
    ok("lin = aten.linear.default(bias=None, w=None)" in p.stdout, p.stdout)
    ok("call = executorch_call_delegate()" in p.stdout, p.stdout)
    ok("m = mul.Tensor()" in p.stdout, p.stdout)
    p = run(["--etrecord", rec, "--graph", "aten_dialect_output/forward"])
    expect_exit(p, 0)
    ok(p.stdout.startswith('Graph "aten_dialect_output/forward" (1 nodes)') and
       "n1 = aten.relu.default(x=arg0)  debug_handle=1" in p.stdout, p.stdout)
    p = run(["--etrecord", rec, "--graph", "nope"])
    expect_exit(p, 3, "forward", "aten_dialect_output/forward")


@case("review fixes: flat maps follow the only program; --method selects --graph")
def _():
    dec = G.program([G.node("d1", "aten.tanh.default", [("x", "arg0")], handle=5)])
    rec = write("flatdecode.etrecord", G.zip_bytes(members(
        programs={"decode": dec}, debug_handle_map={"0": [5]}, delegate_map={})))
    p = run(["--etrecord", rec, "--graph"])
    expect_exit(p, 0)
    ok(p.stdout.startswith('Edge program "decode" (1 nodes)'), p.stdout)
    two = write("twoprog.etrecord", G.zip_bytes(members(
        programs={"forward": G.program([G.node("f1", "aten.relu.default", handle=1)]),
                  "decode": dec})))
    p = run(["--etrecord", two, "--method", "decode", "--graph"])
    expect_exit(p, 0)
    ok(p.stdout.startswith('Edge program "decode"'), p.stdout)


@case("bad: reference_outputs that is neither torch.save nor readable")
def _():
    raw2 = pickle.dumps({"forward": [[1.0, 2.0]]}, protocol=2)[:-3]
    bad("rawpickle2", G.zip_bytes(members(reference_outputs=raw2)), "reference_outputs")
    bad("emptyref", G.zip_bytes(members(reference_outputs=b"")), "reference_outputs")


def nested_bomb(n, padding):
    """A deflated ETRecord whose reference_outputs is a torch.save archive with
    a deflated storage of n zero bytes and a stored padding member of zeros:
    the padding raises the inner archive's own inflation allowance (a ratio
    of its size) while the outer deflate shrinks it to almost nothing."""
    class Zeros(G.Storage):
        def __init__(self):
            self.dtype = "uint8"

        @property
        def numel(self):
            return n

    pkl, _ = G.torch_pickle({"out": G.Tensor("uint8", storage=Zeros(), shape=[n])})

    def zipped(items):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name, data, comp in items:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = comp
                z.writestr(info, data)
        return buf.getvalue()

    inner = zipped([("archive/data.pkl", pkl, zipfile.ZIP_STORED),
                    ("archive/data/0", bytes(n), zipfile.ZIP_DEFLATED),
                    ("archive/padding", bytes(padding), zipfile.ZIP_STORED),
                    ("archive/version", b"3\n", zipfile.ZIP_STORED)])
    return zipped([(m, d, zipfile.ZIP_DEFLATED) for m, d in members(reference_outputs=inner)])


@case("bad: zip bomb nested in reference_outputs (budget of the outer file)")
def _():
    # 250 MiB from a ~3.5 KB file: each archive alone is within its ratio.
    data = nested_bomb(250 << 20, 1 << 20)
    ok(len(data) < 8192, f"the bomb is {len(data)} bytes")
    rec = write("nestedbomb.etrecord", data)
    p = run(["--etrecord", rec, "--show-references"])
    expect_exit(p, 3, "etcompare: error:", "reference_outputs", "archive/data/0",
                "262144000 bytes", "zip bomb")
    # The same layout with a storage the outer budget allows is read.
    rec = write("nestedsmall.etrecord", nested_bomb(256 << 10, 1 << 20))
    p = run(["--etrecord", rec, "--show-references"])
    expect_exit(p, 0)
    ok("uint8 [262144]" in p.stdout, p.stdout[:500])


@case("bad: member size differs from the declared size")
def _():
    for comp, tag in ((zipfile.ZIP_STORED, "stored"), (zipfile.ZIP_DEFLATED, "deflated")):
        data = G.zip_bytes(members(debug_handle_map={"forward": {"0": [1], "1": [1, 2, 3]}}),
                           comp)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            info = z.getinfo("debug_handle_map")
        for delta in (-3, 5):
            for which in ("usize", "csize", "both"):
                if comp == zipfile.ZIP_DEFLATED and which == "csize" and delta > 0:
                    continue  # the deflate stream ends first: the member reads fine
                us = info.file_size + delta if which != "csize" else None
                cs = info.compress_size + delta if which != "usize" else None
                for where in (("local", "central"), ("central",), ("local",)):
                    t = f"size-{tag}-{which}{delta:+d}-{'-'.join(where)}"
                    patched = G.patch_member_sizes(data, "debug_handle_map", usize=us, csize=cs,
                                                   where=where)
                    # one header alone: libzip's consistency check refuses the archive
                    # before the member is looked at, so only the file is named
                    needle = "debug_handle_map" if len(where) == 2 else t + ".etrecord"
                    try:
                        bad(t, patched, needle)
                    except Fail as e:
                        raise Fail(f"{t}: {e}")


# --- main -----------------------------------------------------------------------------------


@case("nodes returning a tuple or list are named as torch's deserializer names them")
def _():
    def multi(op, outputs, inputs=(), handle=None, target=None):
        n = G.node("unused", op, inputs, handle=handle, target=target)
        n["outputs"] = outputs
        return n

    def t(name):
        return {"as_tensor": {"name": name}}

    prog = G.program([
        multi("aten.native_layer_norm.default", [t("getitem"), t("ln_unused_1"), t("ln_unused_2")],
              [("input", "x")], handle=1),
        multi("aten.split_with_sizes_copy.default",
              [{"as_tensors": [{"name": "getitem_1"}, {"name": "getitem_2"}]}],
              [("self", "getitem")], handle=2),
        # an explicit name that FX's numbering must step over
        G.node("aten_native_layer_norm_default_1", "aten.relu.default", [("self", "getitem_1")],
               handle=3),
        multi("aten.native_layer_norm.default", [t("getitem_3"), t("u1"), t("u2")],
              [("input", "getitem_2")], handle=4),
        # 2023 records write every union member, the unset ones null
        multi("aten.max_pool2d_with_indices.default",
              [{"as_tensor": t("getitem_4")["as_tensor"], "as_tensors": None},
               {"as_tensor": t("getitem_5")["as_tensor"], "as_tensors": None}],
              [("self", "getitem_3")], handle=5),
        multi("aten.add.Tensor", [{"as_tensor": {"name": "single"}, "as_tensors": None}],
              [("self", "getitem_4")], handle=6),
        multi("", [t("getitem_6"), t("getitem_7")], [("x", "single")], handle=7,
              target="torch.ops.higher_order.executorch_call_delegate"),
        multi("aten.native_layer_norm.default", [], [("input", "x")], handle=8),
    ])
    rec = write("tuples.etrecord", G.zip_bytes(members(programs={"forward": prog})))
    p = run(["--etrecord", rec, "--graph"])
    expect_exit(p, 0)
    for line in ("0  aten_native_layer_norm_default (getitem, ln_unused_1, ln_unused_2) = "
                 "aten.native_layer_norm.default(input=x)",
                 "1  aten_split_with_sizes_copy_default (getitem_1, getitem_2) = "
                 "aten.split_with_sizes_copy.default(self=getitem)",
                 "2  aten_native_layer_norm_default_1 = aten.relu.default(self=getitem_1)",
                 "3  aten_native_layer_norm_default_2 (getitem_3, u1, u2) = ",
                 "4  aten_max_pool2d_with_indices_default (getitem_4, getitem_5) = ",
                 "5  single = aten.add.Tensor(self=getitem_4)",
                 "6  executorch_call_delegate (getitem_6, getitem_7) = executorch_call_delegate(",
                 "7  aten_native_layer_norm_default_3 = aten.native_layer_norm.default(input=x)"):
        ok(line in p.stdout, f"{line!r} not in {p.stdout}")



def main():
    passed = failed = known = 0
    for label, fn in CASES:
        try:
            fn()
            err = None
        except Fail as e:
            err = str(e)
        except Exception as e:  # a broken case is a failure, not a crash
            err = f"{type(e).__name__}: {e}"
        if label in KNOWN_BUGS:
            if err:
                known += 1
                print(f"KNOWN-BUG {label}: {KNOWN_BUGS[label]} ({err[:300]})", flush=True)
            else:
                passed += 1
                print(f"FIXED {label}: remove it from KNOWN_BUGS", flush=True)
            continue
        if err:
            failed += 1
            print(f"FAIL {label}: {err[:2000]}", flush=True)
        else:
            passed += 1
            print(f"ok   {label}", flush=True)
    if failed == 0:
        shutil.rmtree(WORK, ignore_errors=True)
    if known:
        print(f"{known} known bugs (see KNOWN_BUGS)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
