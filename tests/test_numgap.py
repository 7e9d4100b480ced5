"""Numeric gap (issue 5), end to end: flatc-built ETDumps whose intermediate
outputs go to debug buffers written with struct, a generated ETRecord, and
.npz reference intermediates written by tests/data/npz/make_npz.py.

1. A 22-op chain run twice: the "device" run perturbs op 9's output and
   every later op inherits the error. etcompare must name op 9 (handle 10)
   with its stack trace and exit 1; the reference against itself passes
   (exit 0). Every row's metrics are recomputed in float64 (math.fsum, the
   accuracy tests' metrics()) from the float32 values written and compared
   with --json and
   --numgap-tsv. The same pair aligned without an ETRecord (instruction id
   and output position) gives the same answer; two different programs
   without an ETRecord are an error asking for --etrecord.
2. Grouping: a fused delegate event covering handles 3,4,5 against
   reference arrays "3", "4", "5"; a multi-output instruction; two runtime
   events sharing a handle (the one with the largest handle wins); a "12,13"
   group; handles on one side only. Each expected pair is checked one by one.
3. The .npz path with float32 and float16 arrays, .npy format 1.0 and 2.0.
4. Regressions from the review of issue 5: the compared item of a group is
   the one with the largest debug handle whatever the file order; nothing
   aligned is an error; a corrupt .npz member is exit 3 naming it; extra
   reference items of a group are listed; array names need matching
   brackets; reference ops come from the reference's ETRecord; debug-only
   ETDumps are named by instruction id.
"""
import csv
import json
import math
import os
import random
import struct
import sys
import tempfile

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True  # import the helpers without writing into the source tree
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import etrecord_gen as G  # noqa: E402
import make_npz as NPZ  # noqa: E402
# the accuracy tests' helpers: check() and its counters, float32/float16
# rounding, the independent float64 metrics, running etcompare, the schema
from test_accuracy import OUT_CHAIN, check, f16, f32, metrics, run  # noqa: E402
import test_accuracy as A  # noqa: E402


def num(v):
    """A JSON metric as a float ("inf", "-inf" and "nan" are strings there)."""
    return float(v) if isinstance(v, str) else v


def close(x, y, rel=1e-12):
    return A.close(num(x), y, rel)


def load_json(path):
    return A.load_json(path) if os.path.exists(path) else {}


def schema_ok(name, doc):
    A.validate(name, doc)


# --- ETDump writer ------------------------------------------------------------------

class Dump(A.Dump):
    """One Execute run whose instructions log intermediate outputs (the
    accuracy tests' writer: tensor() packs values into the debug buffer)."""

    def __init__(self):
        super().__init__()
        self.events = []
        self.t = 1000

    def op(self, instr, name, tensors, delegate=None):
        """An instruction that logs `tensors` (one Tensor, or a TensorList)."""
        dbg = {"chain_index": 0, "instruction_id": instr}
        if len(tensors) == 1:
            dbg["debug_entry"] = {"val": "Tensor", "tensor": tensors[0]}
        else:
            dbg["debug_entry"] = {"val": "TensorList", "tensor_list": {"tensors": tensors}}
        prof = {"chain_index": 0, "instruction_id": instr, "start_time": self.t,
                "end_time": self.t + 500}
        self.t += 1000
        if delegate is not None:
            dbg["delegate_debug_id_int"] = delegate
            prof["delegate_debug_id_int"] = delegate
            prof["delegate_debug_metadata"] = []
            self.events += [{"debug_event": dbg}, {"profile_event": prof}]
            return
        prof["name"] = name
        op_call = dict(prof, name="OPERATOR_CALL")
        self.events += [{"debug_event": dbg}, {"profile_event": prof},
                        {"profile_event": op_call}]

    def profile_only(self, instr, name):
        self.events.append({"profile_event": {"name": name, "chain_index": 0,
                                              "instruction_id": instr, "start_time": self.t,
                                              "end_time": self.t + 10}})
        self.t += 100

    def write(self, d, stem, output=None):
        events = list(self.events)
        if output is not None:
            events.append({"debug_event": {"chain_index": OUT_CHAIN, "instruction_id": 0,
                                           "debug_entry": {"val": "Tensor", "tensor": output,
                                                           "output": {"bool_val": True}}}})
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                         "instruction_id": 0, "start_time": 1,
                                         "end_time": self.t + 1}})
        self.runs = [{"name": "Execute", "events": events}]
        return super().write(d, stem)


# --- 1. the 22-op chain ------------------------------------------------------------------

NOPS, BAD, SHAPE = 22, 9, (4, 8)
OPS = ["aten.linear.default", "aten.relu.default", "aten.add.Tensor", "aten.mul.Tensor"]


def op_name(i):
    return OPS[i % len(OPS)]


def chain(perturb):
    """The intermediate outputs of op 0..NOPS-1 in float32; with `perturb`,
    op BAD's output gets an error that every later op inherits."""
    rnd = random.Random(5)
    x = [f32(rnd.uniform(-1, 1)) for _ in range(SHAPE[0] * SHAPE[1])]
    noise = random.Random(99)
    outs = []
    for i in range(NOPS):
        x = [f32(0.9 * v + 0.05 * math.sin(i + k)) for k, v in enumerate(x)]
        if perturb and i == BAD:
            x = [f32(v + noise.uniform(-0.05, 0.05)) for v in x]
        outs.append(x)
    return outs


def trace(i):
    return G.trace_str([("/home/me/model.py", 40, "forward", "return self.body(x)"),
                        ("/home/me/model.py", 100 + i, "body", f"x = self.layer{i}(x)")])


def chain_etrecord(d):
    nodes = [G.node(f"op{i}", op_name(i), inputs=[("self", f"op{i - 1}" if i else "x")],
                    handle=i + 1, trace=trace(i),
                    modules=[("L__self___body", "body", "model.Body"),
                             (f"L__self___layer{i}", f"body.layer{i}",
                              "torch.nn.modules.linear.Linear")])
             for i in range(NOPS)]
    path = os.path.join(d, "chain.etrecord")
    G.write_etrecord(path, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 1] for i in range(NOPS)}},
                     num_outs_map={"forward": {str(i): 1 for i in range(NOPS)}})
    return path


def chain_dump(d, stem, outs, swap=False):
    dm = Dump()
    for i, x in enumerate(outs):
        name = f"native_call_{op_name(i).split('.')[1]}.out"
        if swap and i == 3:
            name = "native_call_sub.out"  # another program
        dm.op(i, name, [dm.tensor("FLOAT", x, SHAPE)])
    return dm.write(d, stem, output=dm.tensor("FLOAT", outs[-1], SHAPE))


def test_chain(d):
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    ref_etdp, ref_dbg = chain_dump(d, "ref", ref)
    dev_etdp, dev_dbg = chain_dump(d, "dev", dev)
    js, tsv = os.path.join(d, "chain.json"), os.path.join(d, "chain.tsv")
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--min-snr", "40", "--no-table", "--json", js, "--numgap-tsv", tsv)
    check("chain: divergence exits 1", rc == 1, f"rc={rc} {err}")
    check("chain: stderr names op 9, its op and source line",
          "first divergence at row 9 of 22" in err and op_name(BAD) in err and
          " at model.py:109: SNR" in err, err)
    check("chain: table marks the first divergence once",
          out.count("FIRST DIVERGENCE") == 1 and "First divergence: row 9" in out, out[-2000:])
    check("chain: full stack trace and module below the table",
          "x = self.layer9(x)" in out and "return self.body(x)" in out and
          "body / body.layer9 (torch.nn.modules.linear.Linear)" in out, out[-1500:])
    doc = load_json(js)
    schema_ok("chain", doc)
    ng = doc.get("numeric_gap") or {}
    rows = ng.get("rows", [])
    check("chain: 22 rows in execution order, aligned by handle",
          len(rows) == NOPS and ng.get("alignment") == "debug_handle" and
          [r["runtime_debug_handle"] for r in rows] == [[i + 1] for i in range(NOPS)],
          json.dumps(ng)[:400])
    check("chain: first_divergence 9", ng.get("first_divergence") == BAD)
    bad = []
    for i, r in enumerate(rows):
        exp = metrics(ref[i], dev[i])
        m = r.get("metrics") or {}
        for k in ("mse", "snr", "cosine", "max_abs", "l1"):
            if not close(m.get(k), exp[k]):
                bad.append(f"row {i} {k}: {m.get(k)} vs {exp[k]}")
        want = "pass" if i < BAD else "FAIL"
        if r["status"] != want or r["first_divergence"] != (i == BAD):
            bad.append(f"row {i} status {r['status']}")
        # upstream's columns: aot_ops are FX node names, runtime_ops event names
        if (r["runtime_op_types"] != op_name(i) or r["aot_ops"] != [f"op{i}"] or
                r["runtime_ops"] != [f"native_call_{op_name(i).split('.')[1]}.out"]):
            bad.append(f"row {i} ops {r['runtime_ops']}/{r['aot_ops']}")
        if len(r["gap"] or []) != 1 or not close(r["gap"][0], exp["mse"]):
            bad.append(f"row {i} gap")
    check("chain: every row's metrics match float64, pass before 9, fail from 9 on",
          not bad, "; ".join(bad[:5]))
    r9 = rows[BAD] if len(rows) > BAD else {}
    check("chain: row 9 carries upstream's stacktraces and source line",
          r9.get("stacktraces", {}).get("op9", "").endswith(
              "x = self.layer9(x)\n") and r9.get("source_line", "").endswith("model.py:109"),
          json.dumps(r9)[:500])
    with open(tsv, newline="") as f:
        table = list(csv.reader(f, delimiter="\t"))  # pandas-style quoting
    head = table[0] if table else []
    check("chain: TSV has upstream's columns first",
          head[:8] == ["aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops",
                       "runtime_debug_handle", "runtime_intermediate_output", "gap",
                       "stacktraces"], head[:8])
    t9 = dict(zip(head, table[1 + BAD])) if len(table) > 1 + BAD else {}
    check("chain: TSV row 9", len(table) == 1 + NOPS and
          t9.get("runtime_debug_handle") == "(10,)" and
          "line 109, in body" in t9.get("stacktraces", "") and
          t9.get("first_divergence") == "True" and
          close(float(t9.get("snr", "nan")), metrics(ref[BAD], dev[BAD])["snr"]) and
          t9.get("runtime_intermediate_output", "").startswith("float32 [4, 8]"), t9)

    # the unperturbed pair passes
    rc, out, err = run("--etdump", ref_etdp, "--debug_buffer", ref_dbg, "--etrecord", rec,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--min-snr", "40", "--no-table")
    check("chain: reference against itself exits 0", rc == 0 and "FIRST" not in out,
          f"rc={rc} {err}")
    check("chain: identical rows say so", out.count("pass (identical)") == NOPS)

    # same program without an ETRecord: instruction id and output position
    js2 = os.path.join(d, "chain_noetr.json")
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--min-snr", "40", "--no-table", "--json", js2)
    doc = load_json(js2)
    ng = doc.get("numeric_gap") or {}
    check("chain: without ETRecord, aligned by instruction, same divergence",
          rc == 1 and ng.get("alignment") == "instruction" and
          ng.get("first_divergence") == BAD and len(ng.get("rows", [])) == NOPS,
          f"rc={rc} {err} {json.dumps(ng)[:300]}")
    # another program without an ETRecord: a clear error asking for --etrecord
    oth_etdp, oth_dbg = chain_dump(d, "other", ref, swap=True)
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                       "--reference-etdump", oth_etdp, "--reference-debug-buffer", oth_dbg,
                       "--no-table")
    check("chain: different programs without ETRecord: exit 3 asking for --etrecord",
          rc == 3 and "--etrecord" in err and "instruction 3" in err, f"rc={rc} {err}")
    # thresholds with a numeric-gap reference are not a usage error; --plot works
    plots = os.path.join(d, "plots")
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--min-snr", "40", "--min-cosine", "0.999", "--no-table", "--plot",
                       plots)
    files = set(os.listdir(plots)) if os.path.isdir(plots) else set()
    check("chain: --plot writes the SNR chart, cosine lines and the diverging op's error plots",
          rc == 1 and {"numgap_chart.gp", "numgap_chart.dat", "numgap_cosine.gp",
                       "numgap_first_divergence_heatmap.png",
                       "numgap_first_divergence_error_hist.dat"} <= files,
          f"rc={rc} {err} {sorted(files)}")
    if "numgap_chart.gp" in files:
        with open(os.path.join(plots, "numgap_chart.gp")) as f:
            gp = f.read()
        check("chain: SNR chart draws the threshold and marks op 9 (first divergence)",
              "threshold = 40" in gp and "first_div = 9" in gp, gp[:900])
    # .npz reference intermediates of the same chain, float32, .npy 1.0
    npz = os.path.join(d, "chain_ref.npz")
    NPZ.write_npz(npz, [(str(i + 1), NPZ.npy("<f4", SHAPE, NPZ.encode("<f4", x)))
                        for i, x in enumerate(ref)])
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--min-snr", "40", "--no-table")
    check("chain: .npz reference finds op 9 too", rc == 1 and "row 9 of 22" in err,
          f"rc={rc} {err}")
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                       "--reference-intermediates", npz, "--no-table")
    check("chain: .npz without --etrecord is a usage error", rc == 2 and "--etrecord" in err,
          f"rc={rc} {err}")
    # bad input: a truncated reference debug buffer, a big-endian array, flags apart
    short = os.path.join(d, "short_debug.bin")
    with open(ref_dbg, "rb") as f, open(short, "wb") as g:
        g.write(f.read()[:1000])
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", short,
                       "--no-table")
    check("chain: truncated reference debug buffer: exit 3 naming it",
          rc == 3 and "short_debug.bin" in err, f"rc={rc} {err}")
    be = os.path.join(d, "bigendian.npz")
    NPZ.write_npz(be, [(str(i + 1), NPZ.npy("<f4" if i else ">f4", SHAPE,
                                            struct.pack(("<" if i else ">") + "32f", *x)))
                       for i, x in enumerate(ref)])
    js3 = os.path.join(d, "be.json")
    rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-intermediates", be, "--no-table", "--json", js3)
    rows = (load_json(js3).get("numeric_gap") or {}).get(
        "rows", [])
    check("chain: an unsupported reference array is a 'no data' row naming its descr",
          rc == 1 and rows and rows[0]["status"] == "no data" and ">f4" in rows[0]["reason"] and
          all(r["status"] == "pass" for r in rows[1:BAD]), f"rc={rc} {err} {rows[:1]}")
    for args, what in ((["--reference-etdump", ref_etdp], "--reference-debug-buffer"),
                       (["--reference-debug-buffer", ref_dbg], "--reference-etdump"),
                       (["--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--reference-intermediates", npz], "cannot be combined")):
        rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, *args)
        check(f"chain: usage error: {what}", rc == 2 and what in err, f"rc={rc} {err}")


# --- 2. grouping -----------------------------------------------------------------------------

def vals(n, seed):
    rnd = random.Random(seed)
    return [f32(rnd.uniform(-2, 2)) for _ in range(n)]


def test_grouping(d):
    dm = Dump()
    v = {k: vals(6, k) for k in range(40)}
    dm.op(0, "native_call_conv.out", [dm.tensor("FLOAT", v[1], [2, 3])])          # handle 1
    dm.profile_only(1, "DELEGATE_CALL")
    dm.op(1, None, [dm.tensor("FLOAT", v[5], [6])], delegate=0)                    # handles 3,4,5
    dm.op(2, "native_call_split.out", [dm.tensor("FLOAT", v[20], [2, 3]),          # handle 6, 2 outputs
                                       dm.tensor("FLOAT", v[6], [6])])
    dm.op(3, "native_call_relu.out", [dm.tensor("FLOAT", v[7], [6])])              # handle 7: no ref
    dm.op(4, "native_call_add.out", [dm.tensor("FLOAT", v[9], [6])])               # handles 9,10
    dm.op(5, "native_call_mul.out", [dm.tensor("FLOAT", v[11], [6])])              # handles 10,11
    dm.op(6, "native_call_gelu.out", [dm.tensor("FLOAT", v[12], [3, 2])])          # handles 12,13
    dm.op(7, "native_call_tanh.out", [dm.tensor("FLOAT", v[14], [6])])             # no handle at all
    etdp, dbg = dm.write(d, "group")
    rec = os.path.join(d, "group.etrecord")
    names = {1: "conv", 3: "linear", 4: "relu", 5: "add", 6: "split", 7: "relu",
             8: "sigmoid", 9: "add", 10: "mul", 11: "mul", 12: "gelu", 13: "gelu"}
    nodes = [G.node(f"n{h}", f"aten.{op}.default", handle=h,
                    trace=G.trace_str([("m.py", h, "forward", f"op{h}")]))
             for h, op in names.items()]
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1], "1": [3, 4, 5], "2": [6], "3": [7], "4": [9, 10],
                                                   "5": [10, 11], "6": [12, 13]}},
                     delegate_map={"forward": {"1": {"name": "XnnpackBackend",
                                                     "delegate_map": {"0": [3, 4, 5]}}}},
                     num_outs_map={"forward": {"0": 1, "2": 2, "3": 1, "4": 1, "5": 1,
                                               "6": 1}})
    ref = {"1": (v[1], [2, 3]), "3": (v[30][:3], [3]), "4": (v[31][:2], [2]),
           "5": ([f32(x + 0.05) for x in v[5]], [6]), "6": (v[6], [6]),
           "8": (v[8], [6]), "9": (v[9], [6]), "11": (v[11], [6]),
           "12,13": (v[12], [3, 2])}
    npz = os.path.join(d, "group.npz")
    NPZ.write_npz(npz, [(k, NPZ.npy("<f4", tuple(sh), NPZ.encode("<f4", x)))
                        for k, (x, sh) in ref.items()])
    js = os.path.join(d, "group.json")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--min-snr", "40", "--no-table",
                       "--json", js)
    doc = load_json(js)
    schema_ok("group", doc)
    ng = doc.get("numeric_gap") or {}
    rows = ng.get("rows", [])
    got = [(r["runtime_debug_handle"], r["aot_debug_handle"], r["event_name"], r["output"],
            r["merged_items"]) for r in rows]
    want = [([1], [1], "native_call_conv.out", 0, 1),
            ([3, 4, 5], [3, 4, 5], "0", 0, 1),
            ([6], [6], "native_call_split.out", 1, 1),
            ([9, 10, 11], [9, 11], "native_call_mul.out", 0, 2),
            ([12, 13], [12, 13], "native_call_gelu.out", 0, 1)]
    check("group: rows pair exactly the expected groups", got == want,
          f"\n got {got}\nwant {want}\n{err}")
    if len(rows) == 5:
        r = rows[1]
        exp = metrics([f32(x + 0.05) for x in v[5]], v[5])
        check("group: fused delegate group compared with reference handle 5 (the last)",
              r["reference_shape"] == "[6]" and close(r["metrics"]["mse"], exp["mse"]) and
              r["runtime_op_types"] == "aten.linear.default, aten.relu.default, aten.add.default",
              json.dumps(r)[:400])
        check("group: multi-output instruction picks the output matching shape and dtype",
              rows[2]["shape"] == "[6]" and rows[2]["metrics"]["identical"], rows[2])
        check("group: overlapping runtime keys merged, later instruction wins",
              rows[3]["runtime_op_types"] == "aten.add.default, aten.mul.default" and
              rows[3]["metrics"]["identical"], rows[3])
        check("group: identical pairs pass, first divergence is the delegate group",
              ng.get("first_divergence") == 1 and rc == 1 and
              [x["status"] for x in rows] == ["pass", "FAIL", "pass", "pass", "pass"],
              f"rc={rc} {[x['status'] for x in rows]}")
    un = {(u["side"], tuple(u["debug_handle"]), u["name"]): u["reason"]
          for u in ng.get("unmatched", [])}
    check("group: unmatched listed with reasons", set(un) == {
        ("runtime", (6,), "native_call_split.out"),
        ("runtime", (7,), "native_call_relu.out"),
        ("runtime", (), "native_call_tanh.out"),
        ("reference", (8,), "8"),
        # reference arrays of a group other than the one compared
        ("reference", (3,), "3"), ("reference", (4,), "4"), ("reference", (9,), "9")},
        sorted(un))
    check("group: reference arrays merged into a group say which array was compared",
          un.get(("reference", (3,), "3"), "").startswith(
              'merged into the group of handles (3,4,5): compared with array "5" instead') and
          un.get(("reference", (9,), "9"), "").startswith(
              'merged into the group of handles (9,11): compared with array "11" instead'),
          str(un))
    check("group: reasons say why",
          "no reference output shares debug handle(s) 7" in
          un.get(("runtime", (7,), "native_call_relu.out"), "") and
          "instruction 7 has no debug handle" in
          un.get(("runtime", (), "native_call_tanh.out"), "") and
          "no runtime intermediate output shares debug handle(s) 8" in
          un.get(("reference", (8,), "8"), "") and
          "output 0 of 2: not compared" in un.get(("runtime", (6,), "native_call_split.out"), ""),
          str(un))
    check("group: unmatched printed below the table",
          "Unmatched intermediate outputs (7):" in out and "native_call_tanh.out" in out, out)
    # a bad array name is an input error naming it
    bad = os.path.join(d, "badname.npz")
    NPZ.write_npz(bad, [("conv1", NPZ.npy("<f4", (1,), NPZ.encode("<f4", [1.0])))])
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", bad, "--no-table")
    check("group: array not named by handles: exit 3 naming it",
          rc == 3 and "\"conv1\"" in err, f"rc={rc} {err}")


def test_multi_output_by_position(d):
    """Two ETDumps of one program, an instruction logging a TensorList of
    two on both sides: two rows, output 0 with 0 and 1 with 1."""
    a0, a1, b1 = vals(4, 1), vals(6, 2), vals(6, 3)
    sides = {}
    for stem, second in (("mo_dev", b1), ("mo_ref", a1)):
        dm = Dump()
        dm.op(0, "native_call_split.out", [dm.tensor("FLOAT", a0, [4]), dm.tensor("FLOAT", second, [2, 3])])
        sides[stem] = dm.write(d, stem)
    js = os.path.join(d, "mo.json")
    rc, out, err = run("--etdump", sides["mo_dev"][0], "--debug_buffer", sides["mo_dev"][1],
                       "--reference-etdump", sides["mo_ref"][0], "--reference-debug-buffer",
                       sides["mo_ref"][1], "--max-abs", "0", "--no-table", "--json", js)
    rows = (load_json(js).get("numeric_gap") or {}).get("rows", [])
    exp = metrics(a1, b1)
    check("multi-output by position: two rows, second differs, first divergence there",
          rc == 1 and [(r["output"], r["reference_output"], r["status"]) for r in rows] ==
          [(0, 0, "pass"), (1, 1, "FAIL")] and close(rows[1]["metrics"]["mse"], exp["mse"]),
          f"rc={rc} {err} {rows}")


# --- 3. .npz dtypes and header versions ----------------------------------------------------

def test_npz_kinds(d):
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    dev_etdp, dev_dbg = chain_dump(d, "dev2", dev)
    for descr, version, conv in (("<f4", (1, 0), f32), ("<f4", (2, 0), f32),
                                 ("<f2", (1, 0), f16), ("<f2", (2, 0), f16)):
        tag = f"{descr[1:]}_v{version[0]}"
        refv = [[conv(x) for x in o] for o in ref]
        npz = os.path.join(d, f"ref_{tag}.npz")
        NPZ.write_npz(npz, [(str(i + 1), NPZ.npy(descr, SHAPE, NPZ.encode(descr, x), version))
                            for i, x in enumerate(refv)])
        js = os.path.join(d, f"npz_{tag}.json")
        rc, out, err = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--min-snr", "40", "--no-table",
                           "--json", js)
        doc = load_json(js)
        rows = (doc.get("numeric_gap") or {}).get("rows", [])
        bad = []
        for i, r in enumerate(rows):
            exp = metrics(refv[i], dev[i])
            m = r.get("metrics") or {}
            if not (close(m.get("snr"), exp["snr"]) and close(m.get("mse"), exp["mse"])):
                bad.append(f"row {i}: {m.get('snr')} vs {exp['snr']}")
            if r["reference_dtype"] != ("float16" if descr == "<f2" else "float32"):
                bad.append(f"row {i} dtype {r['reference_dtype']}")
        check(f"npz {tag}: 22 rows, metrics match float64, divergence at 9",
              rc == 1 and len(rows) == NOPS and not bad and
              doc["numeric_gap"]["first_divergence"] == BAD,
              f"rc={rc} {err} {bad[:3]}")


# --- 4. regressions from the review ------------------------------------------------------

def fused(d, stem, handles, out):
    """A run of one delegate event covering `handles` that logs `out` ([6])."""
    dm = Dump()
    dm.profile_only(0, "DELEGATE_CALL")
    dm.op(0, None, [dm.tensor("FLOAT", out, [6])], delegate=0)
    etdp, dbg = dm.write(d, stem)
    rec = os.path.join(d, stem + ".etrecord")
    nodes = [G.node(f"n{h}", f"aten.op{h}.default", handle=h) for h in handles]
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": list(handles)}},
                     delegate_map={"forward": {"0": {"name": "X",
                                                     "delegate_map": {"0": list(handles)}}}})
    return etdp, dbg, rec


def write_arrays(path, items):
    """items: (name, values, shape), float32, in this file order."""
    NPZ.write_npz(path, [(k, NPZ.npy("<f4", tuple(sh), NPZ.encode("<f4", x)))
                         for k, x, sh in items])
    return path


def gap(d, tag, *args):
    js = os.path.join(d, tag + ".json")
    rc, out, err = run(*args, "--no-table", "--json", js)
    return rc, out, err, (load_json(js).get("numeric_gap") or {})


def test_group_output_choice(d):
    """Finding 1: a group is compared with its item of the largest debug
    handle, whatever the order of the arrays in the .npz."""
    v5 = vals(6, 5)
    etdp, dbg, rec = fused(d, "fz", (3, 4, 5), v5)
    arrays = {"3": (vals(3, 30), [3]), "4": (vals(2, 31), [2]), "5": (v5, [6])}
    for order in (["3", "4", "5"], ["5", "3", "4"], ["4", "5", "3"]):
        tag = "fz_" + "".join(order)
        npz = write_arrays(os.path.join(d, tag + ".npz"),
                           [(k,) + arrays[k] for k in order])
        rc, out, err, ng = gap(d, tag, "--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                               rec, "--reference-intermediates", npz, "--max-abs", "0")
        rows = ng.get("rows", [])
        un = {u["name"]: u["reason"] for u in ng.get("unmatched", [])}
        check(f"group output: arrays in order {order}: compared with \"5\" (identical)",
              rc == 0 and len(rows) == 1 and rows[0]["reference_shape"] == "[6]" and
              rows[0]["metrics"]["identical"] and rows[0]["aot_debug_handle"] == [3, 4, 5],
              f"rc={rc} {err} {rows}")
        check(f"group output: arrays in order {order}: \"3\" and \"4\" listed as merged",
              set(un) == {"3", "4"} and all('compared with array "5" instead' in r
                                            for r in un.values()), un)
    # keys "10", "11", "9" sorted as strings: the last in the file is "9"
    v11 = vals(6, 11)
    etdp, dbg, rec = fused(d, "fz2", (9, 10, 11), v11)
    npz = write_arrays(os.path.join(d, "fz2.npz"), [("10", vals(4, 40), [4]), ("11", v11, [6]),
                                                   ("9", vals(5, 41), [5])])
    rc, out, err, ng = gap(d, "fz2", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--max-abs", "0")
    rows = ng.get("rows", [])
    check("group output: string-sorted keys 10, 11, 9: compared with \"11\"",
          rc == 0 and len(rows) == 1 and rows[0]["reference_shape"] == "[6]" and
          rows[0]["metrics"]["identical"], f"rc={rc} {err} {rows}")
    # runtime side: instruction 0 (handles 8, 9) and instruction 1 (7, 8) merge;
    # 9 is the largest handle, so instruction 0's output stands for the group,
    # although it ran first. Instructions 2 and 3 both have handle 20: a tie,
    # the later instruction wins.
    a, b, c, e = vals(6, 50), vals(6, 51), vals(6, 52), vals(6, 53)
    dm = Dump()
    # kernel names contain their op's name (a record that does not fit is refused)
    dm.op(0, "native_call_op8.out", [dm.tensor("FLOAT", a, [6])])
    dm.op(1, "native_call_op7.out", [dm.tensor("FLOAT", b, [6])])
    dm.op(2, "native_call_op20.out", [dm.tensor("FLOAT", c, [6])])
    dm.op(3, "native_call_op20.out", [dm.tensor("FLOAT", e, [6])])
    etdp, dbg = dm.write(d, "rtmax")
    rec = os.path.join(d, "rtmax.etrecord")
    nodes = [G.node(f"n{h}", f"aten.op{h}.default", handle=h) for h in (7, 8, 9, 20)]
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [8, 9], "1": [7, 8], "2": [20],
                                                   "3": [20]}})
    npz = write_arrays(os.path.join(d, "rtmax.npz"), [("7,8,9", a, [6]), ("20", e, [6])])
    rc, out, err, ng = gap(d, "rtmax", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                           rec, "--reference-intermediates", npz, "--max-abs", "0")
    got = [(r["event_name"], r["merged_items"], r["metrics"]["identical"])
           for r in ng.get("rows", [])]
    check("group output: runtime items merge; the largest handle, then the later, wins",
          rc == 0 and got == [("native_call_op8.out", 2, True), ("native_call_op20.out", 2, True)]
          and [r["instruction_id"] for r in ng.get("rows", [])] == [0, 3],
          f"rc={rc} {err} {got}")


def test_nothing_aligned(d):
    """Finding 2: a run where nothing is compared must not pass."""
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    etdp, dbg = chain_dump(d, "na_dev", dev)
    npz = write_arrays(os.path.join(d, "na.npz"),
                       [(str(i + 100), x, SHAPE) for i, x in enumerate(ref)])
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--no-table")
    check("nothing aligned (.npz): exit 3 saying why, with counts and handle ranges",
          rc == 3 and "no reference output shares a debug handle with any runtime output" in err
          and "22 runtime intermediate outputs, debug handles 1..22" in err and
          "22 reference outputs, debug handles 100..121" in err and
          "wrong ETRecord or .npz?" in err and "pass" not in err, f"rc={rc} {err}")
    # a reference ETDump whose own ETRecord keys it by other handles
    ref_etdp, ref_dbg = chain_dump(d, "na_ref", ref)
    other = os.path.join(d, "na_other.etrecord")
    nodes = [G.node(f"op{i}", op_name(i), handle=i + 200) for i in range(NOPS)]
    G.write_etrecord(other, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 200] for i in range(NOPS)}})
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--reference-etrecord", other, "--no-table")
    check("nothing aligned (ETDump): exit 3", rc == 3 and "debug handles 200..221" in err,
          f"rc={rc} {err}")


def corrupt(path, member):
    """Flips one bit in the data of `member` of a stored .npz."""
    with open(path, "rb") as f:
        b = bytearray(f.read())
    i = b.find(member.encode())
    j = b.find(b"\x93NUMPY", i)
    hlen = struct.unpack("<H", bytes(b[j + 8:j + 10]))[0]  # .npy 1.0
    b[j + 10 + hlen + 5] ^= 0x40
    with open(path, "wb") as f:
        f.write(b)


def test_npz_crc(d):
    """Finding 3: a corrupt .npz member is bad input (exit 3 naming the
    member) whether its array is compared, not comparable or unmatched."""
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    etdp, dbg = chain_dump(d, "crc_dev", dev)
    base = [(str(i + 1), x, SHAPE) for i, x in enumerate(ref)]
    # (what, arrays, member to corrupt, first divergence when intact)
    cases = (("compared", base, "1.npy", BAD),
             ("unmatched", base + [("99", ref[0], SHAPE)], "99.npy", BAD),
             ("shape mismatch", base[:2] + [("3", ref[2], (2, 16))] + base[3:], "3.npy", 2))
    for what, items, member, first in cases:
        npz = write_arrays(os.path.join(d, "crc_%s.npz" % what.replace(" ", "_")), items)
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--min-snr", "40", "--no-table")
        check(f"npz crc: intact archive ({what}) is compared (exit 1 at row {first})",
              rc == 1 and f"row {first} of 22" in err, f"rc={rc} {err}")
        corrupt(npz, member)
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--min-snr", "40", "--no-table")
        check(f"npz crc: corrupt member ({what}): exit 3 naming {member}, no report",
              rc == 3 and f"member {member}: CRC-32" in err and "FIRST DIVERGENCE" not in out,
              f"rc={rc} {err}")


def test_extra_reference_items(d):
    """Finding 4: reference items of a matched group other than the compared
    one are listed as unmatched with the reason, never dropped."""
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    etdp, dbg = chain_dump(d, "ex_dev", dev)
    items = [(str(i + 1), x, SHAPE) for i, x in enumerate(ref) if i != BAD]
    # "10" and "(10,)" are the same handle: a tie, the later array is compared
    items += [("10", dev[BAD], SHAPE), ("(10,)", ref[BAD], SHAPE)]
    npz = write_arrays(os.path.join(d, "ex.npz"), items)
    tsv = os.path.join(d, "ex.tsv")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--min-snr", "40", "--no-table",
                       "--json", os.path.join(d, "ex.json"), "--numgap-tsv", tsv)
    ng = load_json(os.path.join(d, "ex.json")).get("numeric_gap") or {}
    rows = ng.get("rows", [])
    exp = metrics(ref[BAD], dev[BAD])
    check("extra items: handle 10 compared with \"(10,)\" (the later), divergence at 9",
          rc == 1 and len(rows) == NOPS and ng.get("first_divergence") == BAD and
          close(rows[BAD]["metrics"]["snr"], exp["snr"]), f"rc={rc} {err}")
    want = 'merged into the group of handles (10): compared with array "(10,)" instead'
    un = ng.get("unmatched", [])
    check("extra items: \"10\" listed in JSON with the reason",
          [(u["side"], u["name"], u["debug_handle"], u["reason"]) for u in un] ==
          [("reference", "10", [10], want)], un)
    check("extra items: listed below the table",
          "Unmatched intermediate outputs (1):" in out and "reference 10 handles (10,)" in out
          and want in out, out[-800:])
    with open(tsv, newline="") as f:
        table = list(csv.reader(f, delimiter="\t"))
    head = table[0] if table else []
    extra = [dict(zip(head, r)) for r in table[1:] if dict(zip(head, r)).get("status", "")
             .startswith("unmatched")]
    check("extra items: listed in the TSV",
          len(extra) == 1 and extra[0]["status"] == "unmatched reference" and
          extra[0]["aot_debug_handle"] == "(10,)" and extra[0]["reason"] == want, extra)


def test_reference_etrecord(d):
    """Finding 6: reference ops come from the reference's ETRecord; and
    (finding 4) a reference ETDump logging a handle twice lists the item
    not compared."""
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    etdp, dbg = chain_dump(d, "re_dev", dev)
    ref_etdp, ref_dbg = chain_dump(d, "re_ref", ref)

    def ref_record(path, dhm):
        nodes = [G.node(f"op{i}", "refns." + op_name(i).split(".")[1], handle=i + 1)
                 for i in range(NOPS)]
        G.write_etrecord(path, programs={"forward": G.program(nodes)},
                         debug_handle_map={"forward": dhm})
        return path

    other = ref_record(os.path.join(d, "re_other.etrecord"),
                       {str(i): [i + 1] for i in range(NOPS)})
    rc, out, err, ng = gap(d, "re", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                           "--reference-etrecord", other, "--min-snr", "40")
    rows = ng.get("rows", [])
    check("reference etrecord: aot op types from it, runtime op types from the runtime's",
          rc == 1 and len(rows) == NOPS and
          [r["aot_op_types"] for r in rows] == ["refns." + op_name(i).split(".")[1]
                                                for i in range(NOPS)] and
          [r["runtime_op_types"] for r in rows] == [op_name(i) for i in range(NOPS)],
          f"rc={rc} {err} {[r['aot_ops'] for r in rows[:3]]}")
    # instructions 0 and 1 of the reference both log handle 1
    dhm = {str(i): [i + 1] for i in range(NOPS)}
    dhm["1"] = [1]
    twice = ref_record(os.path.join(d, "re_twice.etrecord"), dhm)
    # instruction 1 (native_call_relu.out) is then linked to a linear node: refused...
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                       "--reference-etrecord", twice, "--min-snr", "40")
    check("reference record that contradicts its event names: exit 3 naming the flag",
          rc == 3 and "--reference-etrecord" in err and "re_ref.etdp" in err and
          "native_call_relu.out" in err, f"rc={rc} {err}")
    # ... unless forced, with the warning
    rc, out, err, ng = gap(d, "re2", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                           "--reference-etrecord", twice, "--min-snr", "40", "--force")
    check("--force: compared anyway, with a warning", "warning:" in err and "--force" in err,
          err)
    rows = ng.get("rows", [])
    un = {(u["side"], u["name"]): u for u in ng.get("unmatched", [])}
    exp = metrics(ref[1], dev[0])
    check("reference logs handle 1 twice: row 0 compares with the later (instruction 1)",
          rc == 1 and len(rows) == NOPS - 1 and rows[0]["runtime_debug_handle"] == [1] and
          close(rows[0]["metrics"]["mse"], exp["mse"]), f"rc={rc} {err} {rows[:1]}")
    u = un.get(("reference", "native_call_linear.out"), {})
    check("reference logs handle 1 twice: instruction 0 listed, ops from its ETRecord",
          set(un) == {("reference", "native_call_linear.out"), ("runtime", "native_call_relu.out")}
          and u.get("reason") == "merged into the group of handles (1): compared with "
          "instruction 1 (native_call_relu.out) instead" and u.get("instruction_id") == 0 and
          u.get("ops") == "refns.linear", f"{un}")


def test_names_brackets(d):
    """Finding 5: brackets must match; too many handles says so."""
    ref, dev = chain(False), chain(True)
    rec = chain_etrecord(d)
    etdp, dbg = chain_dump(d, "nb_dev", dev)
    for i, name in enumerate(["(12", "[12)", "12)", "(12]", "[12", "((12))"]):
        npz = write_arrays(os.path.join(d, f"nb_bad{i}.npz"), [(name, ref[11], SHAPE)])
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--no-table")
        check(f"names: {name!r} is not named by debug handles (exit 3)",
              rc == 3 and f'array "{name}" is not named by debug handles' in err,
              f"rc={rc} {err}")
    for i, name in enumerate(["12", "(12)", "[12]", "(12,)", "[12, ]"]):
        npz = write_arrays(os.path.join(d, f"nb_ok{i}.npz"), [(name, ref[11], SHAPE)])
        rc, out, err, ng = gap(d, f"nb_ok{i}", "--etdump", etdp, "--debug_buffer", dbg,
                               "--etrecord", rec, "--reference-intermediates", npz)
        rows = ng.get("rows", [])
        check(f"names: {name!r} is handle 12",
              rc == 0 and len(rows) == 1 and rows[0]["aot_debug_handle"] == [12],
              f"rc={rc} {err}")
    # 4096 handles are accepted (one group of all 22 ops), 4097 are too many
    npz = write_arrays(os.path.join(d, "nb_4096.npz"),
                       [(",".join(str(h) for h in range(1, 4097)), ref[-1], SHAPE)])
    rc, out, err, ng = gap(d, "nb_4096", "--etdump", etdp, "--debug_buffer", dbg,
                           "--etrecord", rec, "--reference-intermediates", npz)
    rows = ng.get("rows", [])
    check("names: 4096 handles: one group of all ops, compared with the last op",
          rc == 0 and len(rows) == 1 and rows[0]["merged_items"] == NOPS and
          rows[0]["event_name"] == "native_call_relu.out", f"rc={rc} {err}")
    npz = write_arrays(os.path.join(d, "nb_4097.npz"),
                       [(",".join(str(h) for h in range(1, 4098)), ref[-1], SHAPE)])
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--no-table")
    check("names: 4097 handles: exit 3 saying more than 4096",
          rc == 3 and "named by more than 4096 debug handles" in err and
          "is not named by" not in err, f"rc={rc} {err}")


def test_debug_only_names(d):
    """Finding 8: without names (debug events only, no ETRecord) the
    instruction id names the diverging output."""
    x, y = vals(6, 1), vals(6, 2)

    def mk(stem, outs):
        dm = Dump()
        for i, v in enumerate(outs):
            dm.events.append({"debug_event": {
                "chain_index": 0, "instruction_id": i,
                "debug_entry": {"val": "Tensor", "tensor": dm.tensor("FLOAT", v, [6])}}})
        return dm.write(d, stem)

    a, b = mk("do_dev", [x, y]), mk("do_ref", [x, x])
    rc, out, err = run("--etdump", a[0], "--debug_buffer", a[1], "--reference-etdump", b[0],
                       "--reference-debug-buffer", b[1], "--max-abs", "0", "--no-table")
    check("debug-only: stderr names instruction 1",
          rc == 1 and "first divergence at row 1 of 2: instruction 1: max abs" in err and
          "()" not in err, f"rc={rc} {err}")
    check("debug-only: table and summary name the instruction",
          "First divergence: row 1, instruction 1 (debug handles (), instruction 1)" in out and
          "│ 1 │ -    │ instruction 1 │" in out, out[-1200:])


def main():
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    # issue 13: every case once with each spelling of the long options
    for A.SPELLING in ("-", "_"):
        print(f"# every long option spelled with '{A.SPELLING}'")
        with tempfile.TemporaryDirectory(dir=work) as d:
            test_chain(d)
            test_grouping(d)
            test_multi_output_by_position(d)
            test_npz_kinds(d)
            test_group_output_choice(d)
            test_nothing_aligned(d)
            test_npz_crc(d)
            test_extra_reference_items(d)
            test_reference_etrecord(d)
            test_names_brackets(d)
            test_debug_only_names(d)
    print(f"{A.passed} passed, {A.failed} failed")
    sys.exit(1 if A.failed or not A.passed else 0)


if __name__ == "__main__":
    main()
