"""The Python package (python/etcompare) kept in step with the C API it
mirrors, and the semantics that changed under it:

1. Layout: every struct mirrored in python/etcompare/_lib.py has, in order,
   the fields its typedef has in include/etcompare/*.h (a field added into
   padding changes no size, so sizes alone would miss it), every struct the
   library sizes (etc_struct_size in src/report/binding.c) is mirrored, and
   a mirror that disagrees with the library is an ImportError naming it.
2. Delegate timing: by default delegated events are scaled by target/source
   as upstream's default delegate_time_scale_converter (t / scale_factor on
   start and end); a user's converter replaces that scaling (no double
   scaling); tables stay the CLI's.
3. Numeric gap: aot_ops are graph node names, runtime_ops event names, gap
   the library's distance (L1 a sum), equal to the CLI's --numgap-tsv.
4. Accuracy: run numbers 0-based and equal to the CLI's --json.
"""
import ast
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.environ["ETC_SRC"], "tests"))
import test_python as T  # noqa: E402
from test_python import SRC, check, cli, setup  # noqa: E402

E = setup()
from etcompare import _lib  # noqa: E402
import numpy as np  # noqa: E402


def header_structs():
    """{name without etc_: [field names in order]} of the public typedefs."""
    out = {}
    inc = os.path.join(SRC, "include", "etcompare")
    for fn in sorted(os.listdir(inc)):
        with open(os.path.join(inc, fn)) as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r"typedef struct etc_(\w+)\s*\{(.*?)\}\s*etc_\1\s*;", text, re.S):
            fields = []
            for decl in m.group(2).split(";"):
                decl = " ".join(decl.split())
                if not decl:
                    continue
                fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)
                if fp:  # a function pointer
                    fields.append(fp.group(1))
                    continue
                for part in decl.split(","):
                    name = re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", part)
                    fields.append(name.group(1))
            out[m.group(1)] = fields
    return out


def test_layout(tmp):
    hdr = header_structs()
    mirrors = dict(_lib.EXACT, **_lib.PREFIX)
    for name, cls in sorted(mirrors.items()):
        mine = [f[0] for f in cls._fields_]
        check(f"layout: etc_{name} has the header's fields in order",
              hdr.get(name) == mine, f"header {hdr.get(name)} // package {mine}")
        check(f"layout: etc_{name} is {_lib.lib.stride[name]} bytes in the library",
              _lib.lib.struct_size(name.encode()) == _lib.lib.stride[name] and
              (name in _lib.PREFIX or _lib.lib.stride[name] == _lib.ctypes.sizeof(cls)))
    with open(os.path.join(SRC, "src", "report", "binding.c")) as f:
        sized = set(re.findall(r'\{"(\w+)", sizeof\(etc_\w+\)\}', f.read()))
    check("layout: every struct etc_struct_size knows is mirrored by the package",
          sized and sized <= set(mirrors), sorted(sized - set(mirrors)))
    # a mirror out of step with the library: the import fails, naming the struct
    pkg = os.path.join(tmp, "etcompare")
    shutil.copytree(os.path.join(SRC, "python", "etcompare"), pkg)
    path = os.path.join(pkg, "_lib.py")
    with open(path) as f:
        text = f.read()
    stale = text.replace('("output_count", c_uint32), ("outputs", POINTER(c_char_p))]', "]")
    check("layout: the stale-mirror probe edits etc_graph_node", stale != text)
    with open(path, "w") as f:
        f.write(stale)
    env = dict(os.environ, PYTHONPATH=tmp)
    p = subprocess.run([sys.executable, "-c", "import etcompare; etcompare.Inspector"],
                       env=env, capture_output=True, text=True)
    check("layout: a mirror that lost a header field is an ImportError naming the struct",
          p.returncode != 0 and "ImportError" in p.stderr and "etc_graph_node" in p.stderr and
          "different versions" in p.stderr, p.stderr[-400:])


def events(insp):
    return {e.name: e for e in insp.event_blocks[0].events}


def test_delegate_timing(tmp):
    import test_fixtures as TF
    etdp = TF.build_etdump(os.path.join(SRC, "tests", "fixtures", "delegate.json"), tmp)
    with open(os.path.join(SRC, "tests", "fixtures", "delegate.json")) as f:
        fx = json.load(f)
    # start/end of delegate id 7 in each run, from the fixture itself
    se = [(ev["profile_event"]["start_time"], ev["profile_event"]["end_time"])
          for run in fx["run_data"] for ev in run["events"]
          if ev.get("profile_event", {}).get("delegate_debug_id_int") == 7]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = E.Inspector(etdump_path=etdp)
        spelled = E.Inspector(etdump_path=etdp,
                              delegate_time_scale_converter=lambda n, t: t / 1e6)
        milli = E.Inspector(etdump_path=etdp, delegate_time_scale_converter=lambda n, t: t / 1e3)
        us_s = E.Inspector(etdump_path=etdp, source_time_scale="us", target_time_scale="s")
    upstream_default = [e / 1e6 - s / 1e6 for s, e in se]
    p, q, m = events(plain), events(spelled), events(milli)
    check("delegate timing: scaled by default as upstream's default converter (ns -> ms)",
          len(se) == 2 and p["7"].perf_data.raw == upstream_default,
          (p["7"].perf_data.raw, upstream_default))
    check("delegate timing: other source/target pairs too (us -> s)",
          events(us_s)["7"].perf_data.raw == upstream_default, events(us_s)["7"].perf_data.raw)
    # the default subtracts the integer timestamps, then scales (exact with
    # timestamps near 1e18, hostile7p #8); upstream's converter scales each
    # timestamp first: the same up to its rounding (3400/1e6 - 3000/1e6)
    def same(a, b):
        return len(a) == len(b) and all(abs(x - y) <= 1e-12 * abs(y) for x, y in zip(a, b))
    check("delegate timing: upstream's default converter, spelled out, changes nothing "
          "beyond its rounding",
          same(q["7"].perf_data.raw, p["7"].perf_data.raw) and
          same(q["conv_1"].perf_data.raw, p["conv_1"].perf_data.raw) and
          p["conv_1"].perf_data.raw == [(e - s) / 1e6 for s, e in ((3000, 3400), (3000, 3500))],
          (q["conv_1"].perf_data.raw, p["conv_1"].perf_data.raw))
    check("delegate timing: a converter replaces the default scaling (not applied twice)",
          m["7"].perf_data.raw == [e / 1e3 - s / 1e3 for s, e in se] and
          m["7"].perf_data.p50 == float(np.percentile(m["7"].perf_data.raw, 50)),
          m["7"].perf_data.raw)
    check("delegate timing: a converter leaves non-delegated events alone",
          m["native_call_relu.out"].perf_data.raw == p["native_call_relu.out"].perf_data.raw and
          m["DELEGATE_CALL"].perf_data.raw == p["DELEGATE_CALL"].perf_data.raw)
    rc, out, err = cli("--etdump", etdp)
    tables = []
    for insp in (plain, milli):
        import io
        buf = io.StringIO()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            insp.print_data_tabular(file=buf)
        tables.append((buf.getvalue(), [str(x.message) for x in w]))
    check("delegate timing: the table is the CLI's, with or without a converter",
          rc == 0 and tables[0][0] == out and tables[1][0] == out, err[-300:])
    check("delegate timing: with a converter the table says it shows the CLI's durations",
          any("delegate_time_scale_converter" in x for x in tables[1][1]) and not tables[0][1],
          tables[1][1])


def test_numgap_columns(tmp):
    import test_numgap as NG
    import make_npz as NPZ
    ref, dev = NG.chain(False), NG.chain(True)
    rec = NG.chain_etrecord(tmp)
    dev_etdp, dev_dbg = NG.chain_dump(tmp, "dev", dev)
    npz = os.path.join(tmp, "chain_ref.npz")
    NPZ.write_npz(npz, [(str(i + 1), NPZ.npy("<f4", NG.SHAPE, NPZ.encode("<f4", x)))
                        for i, x in enumerate(ref)])
    insp = E.Inspector(etdump_path=dev_etdp, debug_buffer_path=dev_dbg, etrecord=rec)
    graph = {n.debug_handle: n.name for n in insp.get_exported_program().nodes}
    for dist in ("mse", "l1", "snr"):
        tsv = os.path.join(tmp, f"gap_{dist}.tsv")
        rc, _out, err = cli("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                            "--reference-intermediates", npz, "--distance", dist, "--no-table",
                            "--numgap-tsv", tsv)
        with open(tsv, newline="") as f:
            t = list(csv.DictReader(f, delimiter="\t"))
        rows = T_records(insp.calculate_numeric_gap(distance=dist.upper(), reference=npz))
        check(f"numgap {dist}: the facade has the CLI's rows", rc == 0 and len(t) == len(rows)
              == NG.NOPS, (rc, len(t), len(rows), err[-300:]))
        check(f"numgap {dist}: gap lists equal the CLI's TSV",
              all(floats(a["gap"]) == b["gap"]
                  for a, b in zip(t, rows)), [(a["gap"], b["gap"]) for a, b in zip(t, rows)][:3])
        check(f"numgap {dist}: aot_ops are the graph's node names, as the TSV's",
              all(b["aot_ops"] == [graph[h] for h in b["aot_debug_handle"]] and
                  ast.literal_eval(a["aot_ops"]) == b["aot_ops"] for a, b in zip(t, rows)),
              [(a["aot_ops"], b["aot_ops"]) for a, b in zip(t, rows)][:3])
        check(f"numgap {dist}: runtime_ops are the runtime event names, as the TSV's",
              all(b["runtime_ops"] == [b["event_name"]] and b["event_name"].startswith(
                  "native_call_") and ast.literal_eval(a["runtime_ops"]) == b["runtime_ops"]
                  for a, b in zip(t, rows)), [b["runtime_ops"] for b in rows][:3])
        check(f"numgap {dist}: columns in the TSV's order",
              list(rows[0])[:8] == list(t[0])[:8], (list(rows[0])[:8], list(t[0])[:8]))
        if dist == "l1":
            bad = rows[NG.BAD]
            want = math.fsum(abs(float(a) - float(r)) for a, r in zip(dev[NG.BAD], ref[NG.BAD]))
            check("numgap l1: a sum of |a - r| (upstream), not the mean",
                  abs(bad["gap"][0] - want) <= 1e-12 * want and
                  abs(bad["l1"] * bad["count"] - want) <= 1e-9 * want, (bad["gap"], want))


def test_numgap_options(tmp):
    """quant_params=, force= and the graph nodes' literal arguments."""
    import test_numgap_real as NR
    G = NR.G
    r = NR.rng(5)
    ref1 = NR.f32(r.uniform(-2, 2, (2, 3, 4)))
    ref4 = NR.f32(r.uniform(-1, 1, (2, 4)))
    s4, z4 = [0.01, 0.02], [1, -2]
    q1, q4 = NR.quantize(ref1, 0.02, -5), NR.quantize(ref4, s4, z4, axis=0)
    nodes = [G.node("aten_convolution_default", "aten.convolution.default",
                    inputs=[("input", "x")], handle=1),
             NR.raw_node("dequantize_1", NR.DQPT,
                         [("input", "as_tensor", "aten_convolution_default"),
                          ("scale", "as_float", 0.02), ("zero_point", "as_int", -5),
                          ("quant_min", "as_int", -128), ("quant_max", "as_int", 127)]),
             G.node("aten_relu_default", "aten.relu.default", inputs=[("self", "dequantize_1")],
                    handle=2)]
    rec = os.path.join(tmp, "q.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1], "1": [2]}})
    dm = NR.Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("CHAR", q1)])
    dm.op(1, "native_call_relu.out", [dm.tensor("CHAR", q4)])
    etdp, dbg = dm.write(tmp, "q_dev")
    npz = NR.write_npz(os.path.join(tmp, "q.npz"), [("1", ref1), ("2", ref4)])
    qp = os.path.join(tmp, "qp.json")
    with open(qp, "w") as f:
        json.dump({"2": {"scale": s4, "zero_point": z4, "axis": 0}}, f)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
    rows = T_records(insp.calculate_numeric_gap(distance="SNR", reference=npz))
    check("numgap quant: from the ETRecord's dequantize node; without parameters, a row "
          "saying what it needs", len(rows) == 2 and rows[0]["quant_source"] == "etrecord" and
          rows[0]["gap"] == [NR.snr64(ref1, NR.dequant(q1, 0.02, -5))] and
          rows[1]["reason"].startswith("needs quantization parameters"),
          [(x["quant_source"], x["gap"], x["reason"]) for x in rows])
    rows = T_records(insp.calculate_numeric_gap(distance="SNR", reference=npz, quant_params=qp))
    want = NR.snr64(ref4, NR.dequant(q4, s4, z4, 0))
    check("numgap quant_params=: the file's per-channel entry, SNR as numpy's",
          len(rows) == 2 and rows[1]["quant_source"] == "quant-params" and
          NR.close(rows[1]["gap"][0], want), [(x["quant_source"], x["gap"]) for x in rows])
    node = {n.name: n for n in insp.get_exported_program().nodes}["dequantize_1"]
    check("graph: a node's literal arguments as (name, kind, value)",
          ("scale", "as_float", "0.02") in node.args and
          ("zero_point", "as_int", "-5") in node.args and node.args[0][0] == "input", node.args)
    try:
        insp.calculate_numeric_gap(reference=npz, layout="sideways")
        check("numgap layout=: a bad value raises", False)
    except E.Error as e:
        check("numgap layout=: a bad value raises etcompare.Error", "layout" in str(e), e)


def floats(text):
    """A TSV list of numbers, "[1.5, inf]", as floats (inf and nan included)."""
    return [float(x) for x in text.strip("[]").split(",") if x.strip()]


def T_records(df):
    return df.to_dict("records") if hasattr(df, "to_dict") else df


def test_runs(tmp):
    import test_accuracy as A
    etdp, dbg, rec = A.two_run_fixture(tmp, "two", A.A0, A.A1)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
    for pair_by in ("auto", "order", "all", "content"):
        js = os.path.join(tmp, f"acc_{pair_by}.json")
        rule = [] if pair_by == "auto" else ["--pair-by", pair_by]
        rc, _out, err = cli("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                            "--no-table", "--compare", *rule, "--json", js)
        with open(js) as f:
            want = [{k: r[k] for k in ("run", "etdump_run", "reference", "output", "status")}
                    for r in json.load(f)["accuracy"]["rows"]]
        got = [{k: r[k] for k in ("run", "etdump_run", "reference", "output", "status")}
               for r in insp.compare(pair_by=pair_by).rows]
        check(f"runs ({pair_by}): the facade's rows equal the CLI's --json, runs 0-based",
              rc in (0, 1) and got == want and got and got[0]["run"] == 0, (got, want, err[-200:]))


def main():
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        for t in (test_layout, test_delegate_timing, test_numgap_columns, test_numgap_options,
                  test_runs):
            d = os.path.join(tmp, t.__name__)
            os.makedirs(d)
            try:
                t(d)
            except Exception as e:
                import traceback
                traceback.print_exc()
                check(f"{t.__name__}: ran to the end", False, f"{type(e).__name__}: {e}")
    print(f"{T.passed} passed, {T.failed} failed")
    sys.exit(1 if T.failed or not T.passed else 0)


if __name__ == "__main__":
    main()
