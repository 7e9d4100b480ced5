"""The numeric gap from the ETRecord alone: the main command runs the
record's own graph with the reference executor and compares every logged
intermediate output with it (cumulative SNR), re-runs each op on the
runtime's own inputs (local SNR), and ranks "where the error enters".

1. Real files (tests/data/realexport, upstream v0.5.0 export and runtime):
   `--etdump E --debug_buffer D --etrecord R` alone gives, per logged
   output, a cumulative SNR equal (0.01 dB) to numpy's float64 SNR of the
   runtime tensor against <m>_aot_f64.npz (the README's mapping: handle ->
   node of <m>_nodes.json -> npz key, tuple items by tuple_items); exit 0
   at --min-snr 60.
2. Bisect: the mlp's debug buffer with its gelu output scaled by 1.05 and
   everything downstream recomputed in float32 from it (as a broken gelu
   kernel would leave it): the main command alone names gelu as the first
   divergence and ranks it first by local error; exit 1.
3. The ranking without a reference graph: on the bundled example (a
   reference ETDump) the layer_norm (18.25 dB) is ranked above the first
   addmm (142.9 dB, +inf dB drop), by the noise power each adds (numpy).
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

REAL = os.path.join(C.DATA, "realexport")
EX = os.path.join(C.SRC, "examples")
MODELS = ("mlp", "cnn", "tiny_transformer", "qcnn")
G_MEMBER = "edge_dialect_exported_program/forward"  # the example's program member


def snr64(ref, act):
    ref = np.asarray(ref, dtype=np.float64).ravel()
    act = np.asarray(act, dtype=np.float64).ravel()
    err = np.mean((act - ref) ** 2) if ref.size else 0.0
    if err == 0:
        return math.inf
    return 10 * math.log10(np.mean(ref ** 2) / err)


def num(v):
    """A JSON number of the report ("inf", "nan" are strings there)."""
    if v is None:
        return math.nan
    return float(v)


def runtime_events(m, debug=None):
    """[(debug handles, [numpy outputs])] of the first Execute run, via the
    package's reader of the debug buffer."""
    sys.path.insert(0, os.path.join(C.SRC, "python"))
    import etcompare
    insp = etcompare.Inspector(etdump_path=os.path.join(REAL, f"{m}.etdp"),
                               debug_buffer_path=debug or os.path.join(REAL, f"{m}_debug.bin"),
                               etrecord=os.path.join(REAL, f"{m}.etrecord"))
    out = []
    for b in insp.event_blocks:
        if b.name != "Execute":
            continue
        for e in b.events:
            if e.name == "OPERATOR_CALL" or not e.debug_handles:
                continue
            data = [np.array(x) for x in e.debug_data if isinstance(x, np.ndarray)]
            if data:
                out.append((e.name, list(e.debug_handles), data))
    return out


def oracle(m):
    """{(handles tuple, output): reference array} by the README's rule."""
    nodes = C.load_json(os.path.join(REAL, f"{m}_nodes.json"))["nodes"]
    by_handle = {}
    for name, nd in nodes.items():
        if nd.get("op") == "call_function" and "getitem_of" not in nd and \
                nd.get("debug_handle") is not None:
            by_handle[nd["debug_handle"]] = (name, nd)
    z = np.load(os.path.join(REAL, f"{m}_aot_f64.npz"))
    return by_handle, z


VALIDATOR = []


def validate(name, doc):
    """The report validates against schema/etcompare-report.schema.json."""
    import jsonschema
    if not VALIDATOR:
        with open(C.REPORT_SCHEMA) as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        VALIDATOR.append(cls(schema))
    errs = sorted(VALIDATOR[0].iter_errors(doc), key=lambda e: list(e.path))
    C.check(f"{name}: the JSON validates against the schema", not errs,
            "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errs[:3]))


def gap_json(d, tag, *args):
    js = os.path.join(d, f"{tag}.json")
    rc, out, err = C.run(*args, "--json", js)
    doc = C.load_json(js)
    if tag in ("bisect", "mlp", "qcnn", "standin"):
        validate(tag, doc)
    return rc, out, err, doc.get("numeric_gap") or {}


def test_real(d):
    for m in MODELS:
        rc, out, err, ng = gap_json(
            d, m, "--etdump", os.path.join(REAL, f"{m}.etdp"), "--debug_buffer",
            os.path.join(REAL, f"{m}_debug.bin"), "--etrecord",
            os.path.join(REAL, f"{m}.etrecord"), "--min-snr", "60", "--no-table")
        rows = ng.get("rows", [])
        C.check(f"{m}: the main command alone gives a numeric gap that passes --min-snr 60 "
                "(exit 0)",
                rc == 0 and rows and ng.get("failures") == 0 and
                "intermediate outputs pass" in err and "Where the error enters" in out,
                f"rc={rc} rows={len(rows)} {err[-1500:]}")
        by_handle, z = oracle(m)
        want, bad, n = {}, [], 0
        for name, hs, data in runtime_events(m):
            node = by_handle.get(max(hs))
            if not node:
                continue
            for i, a in enumerate(data):
                items = node[1].get("tuple_items")
                key = items.get(str(i)) if items else (node[0] if i == 0 else None)
                if key is None or key not in z.files:
                    continue
                # an empty output (batch norm's unused ones) has no SNR
                want[(tuple(sorted(hs)), i)] = snr64(z[key], a) if a.size else math.nan
        for r in rows:
            k = (tuple(sorted(r["runtime_debug_handle"])), r["output"])
            if k not in want:
                continue
            n += 1
            got, exp = num(r.get("cumulative_snr")), want[k]
            ok = ((math.isinf(got) and math.isinf(exp)) or (math.isnan(got) and math.isnan(exp))
                  or abs(got - exp) <= 0.01)
            if not ok:
                bad.append((k, r["aot_ops"], got, exp))
        C.check(f"{m}: cumulative SNR per handle = numpy's against {m}_aot_f64.npz (0.01 dB)",
                n >= len(want) * 0.9 and n > 0 and not bad,
                f"compared {n} of {len(want)}: {bad[:5]}")
        # unlogged producers (view_copy, et_view) are re-run on the runtime's values:
        # no input of a logged op is a stand-in from the reference
        C.check(f"{m}: every local re-run reads the runtime's values (no stand-ins)",
                rows and all(r.get("local_standins") == 0 and r.get("local_note") == ""
                             for r in rows),
                [(r["aot_ops"], r.get("local_note")) for r in rows if r.get("local_note")][:3])
        loc = [r for r in rows if r.get("local_snr") is not None]
        empty = sum(1 for r in rows if r.get("shape") in ([0], "[0]"))
        C.check(f"{m}: every compared non-empty row has a local SNR (re-run on the runtime's "
                "inputs)",
                len(loc) >= n - empty and all(num(r["local_snr"]) > 60 for r in loc),
                [(r["aot_ops"], r.get("local_snr"), r.get("local_note")) for r in rows
                 if r.get("shape") not in ([0], "[0]") and
                 (r.get("local_snr") is None or num(r["local_snr"]) <= 60)][:5])


def test_inputs(d):
    """--inputs, and the BundledProgram's test cases as input candidates."""
    io = np.load(os.path.join(REAL, "mlp_io.npz"))
    base = ("--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer",
            os.path.join(REAL, "mlp_debug.bin"), "--etrecord", os.path.join(REAL, "mlp.etrecord"),
            "--min-snr", "60", "--no-table")
    rc0, _o, _e, ng0 = gap_json(d, "default", *base)
    snr0 = {(tuple(r["runtime_debug_handle"]), r["output"]): r["cumulative_snr"]
            for r in ng0.get("rows", [])}
    right, wrong = os.path.join(d, "in0.npz"), os.path.join(d, "in1.npz")
    np.savez(right, **{"0": io["input0"]})
    np.savez(wrong, **{"0": io["input1"]})
    rc, _o, err, ng = gap_json(d, "right", *base, "--inputs", right)
    snr = {(tuple(r["runtime_debug_handle"]), r["output"]): r["cumulative_snr"]
           for r in ng.get("rows", [])}
    C.check("--inputs FILE.npz with the run's input: the same gap as the record's inputs",
            rc == rc0 == 0 and snr == snr0 and snr, f"rc={rc} {err[-400:]}")
    rc, _o, err, ng = gap_json(d, "wrong", *base, "--inputs", wrong)
    C.check("--inputs with another input: the gap says so (first row below 60 dB, exit 1)",
            rc == 1 and ng.get("failures", 0) > 0 and "first divergence" in err, f"rc={rc}")
    rc, _o, err, ng = gap_json(d, "bpte", *base, "--bundled-program",
                               os.path.join(REAL, "mlp.bpte"))
    snr = {(tuple(r["runtime_debug_handle"]), r["output"]): r["cumulative_snr"]
           for r in ng.get("rows", [])}
    C.check("--bundled-program: its test cases are candidates, test case 0 (the one run) wins "
            "by the program outputs",
            rc == 0 and "BundledProgram's test case 0: of 3 candidate inputs" in err and
            snr == snr0, err[-600:])
    rc, _o, err = C.run(*base, "--inputs", os.path.join(d, "missing.npz"))
    C.check("--inputs with a missing file: exit 3 naming it", rc == 3 and "missing.npz" in err,
            f"rc={rc} {err}")
    # a record without inputs: a note naming --inputs, no gap; an error when asked for
    old = os.path.join(C.DATA, "etrecord_2023.bin")
    dev = ("--etdump", os.path.join(EX, "example.etdp"), "--debug_buffer",
           os.path.join(EX, "example_debug.bin"), "--no-table")
    rc, out, err = C.run(*dev, "--etrecord", old)
    C.check("a record without inputs: exit 0, a note that names --inputs, no numeric gap",
            rc == 0 and "note: no numeric gap" in err and "--inputs FILE" in err and
            "Numeric gap" not in out, f"rc={rc} {err[-400:]}")
    rc, out, err = C.run(*dev, "--etrecord", old, "--numgap-tsv", os.path.join(d, "x.tsv"))
    C.check("the same with --numgap-tsv (the gap asked for): exit 3, naming --inputs",
            rc == 3 and "--inputs FILE" in err and not os.path.exists(os.path.join(d, "x.tsv")),
            f"rc={rc} {err[-400:]}")
    rc, out, err = C.run(*dev, "--numgap-tsv", os.path.join(d, "y.tsv"))
    C.check("--numgap-tsv without --etrecord: a usage error naming --etrecord",
            rc == 2 and "--etrecord" in err, f"rc={rc} {err[-300:]}")
    rc, out, err = C.run(*dev, "--etrecord", os.path.join(EX, "example.etrecord"),
                         "--reference-dtype", "float16")
    C.check("--reference-dtype float16: a usage error", rc == 2 and "float64" in err, err)
    rc, out, err = C.run("--reference-ops")
    ops = out.split()
    C.check("--reference-ops lists the executor's ops",
            rc == 0 and "aten.addmm.default" in ops and "aten.native_layer_norm.default" in ops
            and len(ops) > 50 and err == "", out[:200])
    rc, out2, err = C.run("--reference-ops", *dev)
    C.check("--reference-ops with files: the same list, and a note that they are not read",
            rc == 0 and out2 == out and "the files given are not read" in err, err)


def test_standin(d):
    """An op whose producer the runtime did not log (and that cannot be re-run
    on runtime values) is re-run with the reference's value standing in, and
    its row says so."""
    import zipfile
    src = os.path.join(EX, "example.etrecord")
    rec = os.path.join(d, "unlinked_addmm.etrecord")
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(rec, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "debug_handle_map":
                m = json.loads(data)
                del m["forward"]["0"]  # instruction 0 (the first addmm): no handle
                data = json.dumps(m).encode()
            zout.writestr(info, data)
    rc, out, err, ng = gap_json(d, "standin", "--etdump", os.path.join(EX, "example.etdp"),
                                "--debug_buffer", os.path.join(EX, "example_debug.bin"),
                                "--etrecord", rec, "--min-snr", "30", "--no-table")
    rows = ng.get("rows", [])
    relu = next((r for r in rows if r["runtime_nodes"] == "relu"), {})
    C.check("stand-in: relu's input (the unlinked addmm) comes from the reference, and the "
            "row says so",
            relu.get("local_inputs") == 1 and relu.get("local_standins") == 1 and
            "inputs: 1 of 1 from the reference (node addmm not logged)" in
            relu.get("local_note", ""), (rc, relu.get("local_note"), err[-300:]))
    nxt = next((r for r in rows if r["runtime_nodes"] == "addmm_1"), {})
    C.check("stand-in: the next op reads the runtime's relu (no stand-in)",
            nxt.get("local_standins") == 0 and nxt.get("local_note") == "", nxt.get("local_note"))


def test_unsupported(d):
    """An op the reference executor lacks: its row and those after it have no
    cumulative error, but every op fed by the runtime's logged values still
    gets its local error, so the layer_norm bug is still ranked first."""
    import zipfile
    rec = os.path.join(d, "unsupported.etrecord")
    with zipfile.ZipFile(os.path.join(EX, "example.etrecord")) as zin, \
            zipfile.ZipFile(rec, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == G_MEMBER:
                j = json.loads(data)
                for n in j["graph_module"]["graph"]["nodes"]:
                    n["target"] = n["target"].replace("aten.relu.default", "aten.relu.nosuch")
                data = json.dumps(j).encode()
            zout.writestr(info, data)
    dev = ("--etdump", os.path.join(EX, "example.etdp"), "--debug_buffer",
           os.path.join(EX, "example_debug.bin"), "--etrecord", rec, "--no-table")
    rc, out, err, ng = gap_json(d, "unsupported", *dev)
    rows = {r["runtime_nodes"]: r for r in ng.get("rows", [])}
    relu, ln = rows.get("relu", {}), rows.get("native_layer_norm", {})
    i1 = out.find("Where the error enters")
    first = [ln_ for ln_ in out[i1:].splitlines() if ln_.strip().startswith("1.")]
    C.check("unsupported op: its row says so; the layer_norm still has its local SNR and is "
            "ranked first; no threshold: exit 0 with a note",
            rc == 0 and relu.get("status") == "no data" and "not supported" in relu["reason"]
            and abs(num(ln.get("local_snr")) - 18.25) < 0.01 and ln.get("cumulative_snr") is None
            and first and "native_layer_norm" in first[0] and "gates only with a threshold" in err,
            (rc, relu.get("reason"), ln.get("local_snr"), first, err[-300:]))
    rc, out, err = C.run(*dev, "--min-snr", "30", "--junit", os.path.join(d, "u.xml"))
    C.check("unsupported op with --min-snr: exit 1, the JUnit report agrees",
            rc == 1 and "internal error" not in err and os.path.exists(os.path.join(d, "u.xml")),
            (rc, err[-300:]))


def gelu32(x):
    from math import erf
    v = np.vectorize(lambda t: 0.5 * t * (1 + erf(t / math.sqrt(2))))
    return v(x.astype(np.float64)).astype(np.float32)


def softmax32(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def test_bisect(d):
    ev = runtime_events("mlp")
    ops = [name for name, _h, _d in ev]
    # mlp: permute, addmm, relu, permute, addmm, gelu, add, permute, addmm, softmax
    gi = next(i for i, n in enumerate(ops) if "gelu" in n)
    ai, pi, mi, si = gi + 1, gi + 2, gi + 3, gi + 4
    relu = next(dd[-1] for n, _h, dd in ev if "relu" in n)
    fc2, gelu, add, w3t, fc3, soft = (ev[gi - 1][2][-1], ev[gi][2][-1], ev[ai][2][-1],
                                      ev[pi][2][-1], ev[mi][2][-1], ev[si][2][-1])
    C.check("bisect: the mlp's add is relu + gelu, its last addmm bias + add @ W3^T (float32)",
            "add" in ops[ai] and "addmm" in ops[mi] and "softmax" in ops[si] and
            np.array_equal(add, (relu + gelu).astype(np.float32)) and
            (fc3.astype(np.float64) - add.astype(np.float64) @ w3t).std(0).max() < 1e-5, ops)
    bias3 = (fc3.astype(np.float64) - add.astype(np.float64) @ w3t.astype(np.float64)).mean(0)
    # the broken gelu kernel: 5% too large; everything after it computed from its output
    gelu_p = (gelu32(fc2) * np.float32(1.05)).astype(np.float32)
    add_p = (relu + gelu_p).astype(np.float32)
    fc3_p = (add_p @ w3t + bias3.astype(np.float32)).astype(np.float32)
    soft_p = softmax32(fc3_p)
    with open(os.path.join(REAL, "mlp_debug.bin"), "rb") as f:
        buf = f.read()
    for old, new in ((gelu, gelu_p), (add, add_p), (fc3, fc3_p), (soft, soft_p)):
        ob, nb = old.astype("<f4").tobytes(), new.astype("<f4").tobytes()
        C.check("bisect: the tensor is in the debug buffer", buf.count(ob) >= 1, len(ob))
        buf = buf.replace(ob, nb)  # every iteration, and the program output
    dbg = os.path.join(d, "mlp_broken_debug.bin")
    with open(dbg, "wb") as f:
        f.write(buf)
    rc, out, err, ng = gap_json(d, "bisect", "--etdump", os.path.join(REAL, "mlp.etdp"),
                                "--debug_buffer", dbg, "--etrecord",
                                os.path.join(REAL, "mlp.etrecord"), "--min-snr", "40",
                                "--no-table")
    rows = ng.get("rows", [])
    first = next((r for r in rows if r.get("first_divergence")), None)
    C.check("bisect: exit 1, the numeric gap's first divergence is the gelu",
            rc == 1 and first and "gelu" in first["runtime_op_types"] and
            "first divergence at row" in err and "gelu" in err.split("first divergence")[1][:200],
            f"rc={rc} {first and first['runtime_op_types']} {err[-800:]}")
    i1 = out.find("Where the error enters")
    sect = out[i1:i1 + 1500] if i1 >= 0 else ""
    lines = [ln for ln in sect.splitlines() if ln.strip().startswith("1.")]
    C.check("bisect: 'where the error enters' ranks the gelu first, by its local SNR",
            lines and "gelu" in lines[0] and "local SNR" in lines[0], sect[:900])
    g = next((r for r in rows if "gelu" in r["runtime_op_types"]), {})
    exp_local = snr64(gelu32(fc2), gelu_p)
    C.check("bisect: the gelu's local SNR is numpy's (re-run on the runtime's own input)",
            abs(num(g.get("local_snr")) - exp_local) <= 0.05, (g.get("local_snr"), exp_local))
    down = [r for r in rows if r["runtime_op_types"] in ("aten.add.Tensor", "aten.addmm.default",
                                                         "aten._softmax.default")
            and rows.index(r) > rows.index(g)] if g else []
    C.check("bisect: the ops after it fail cumulatively but are exact locally (> 60 dB)",
            down and all(num(r["cumulative_snr"]) < 40 for r in down[:1]) and
            all(num(r["local_snr"]) > 60 for r in down),
            [(r["runtime_op_types"], r.get("cumulative_snr"), r.get("local_snr"),
              r.get("local_note")) for r in down])
    tsv = os.path.join(d, "bisect.tsv")
    rc2, _o, e2 = C.run("--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer", dbg,
                        "--etrecord", os.path.join(REAL, "mlp.etrecord"), "--numgap-tsv", tsv,
                        "--no-table")
    lines = open(tsv).read().splitlines() if os.path.exists(tsv) else []
    head = lines[0].split("\t") if lines else []
    C.check("bisect: every TSV line has the header's fields",
            len(lines) > 1 and all(len(ln.split("\t")) == len(head) for ln in lines),
            [len(ln.split("\t")) for ln in lines])
    C.check("bisect: --numgap-tsv has upstream's columns and cumulative_snr, local_snr",
            head[:3] == ["aot_debug_handle", "aot_ops", "aot_intermediate_output"] and
            "cumulative_snr" in head and "local_snr" in head and "local_note" in head,
            f"rc={rc2} {head} {e2[-300:]}")
    rc3, out3, _e3 = C.run("--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer", dbg,
                           "--etrecord", os.path.join(REAL, "mlp.etrecord"),
                           "--no-reference-run", "--no-table")
    C.check("bisect: --no-reference-run turns the numeric gap off",
            rc3 == 0 and "Numeric gap" not in out3, f"rc={rc3}")


def test_ranking_example(d):
    rc, out, err = C.run("--example")
    i1 = out.find("Where the error enters")
    sect = out[i1:i1 + 1200] if i1 >= 0 else ""
    first = [ln for ln in sect.splitlines() if ln.strip().startswith("1.")]
    C.check("ranking: on the bundled example (the ETRecord alone) the layer_norm (the bug) "
            "is ranked first by its local SNR",
            rc == 0 and first and "native_layer_norm" in first[0] and "local SNR" in first[0]
            and "example_intermediates" not in out + err, sect[:800])
    html = os.path.join(d, "example.html")
    rc, _o, err = C.run("--example", "--no-table", "--report", html)
    text = open(html, encoding="utf-8").read() if os.path.exists(html) else ""
    i = text.find('<ol id="enters">')
    C.check("ranking: the HTML report's 'where the error enters' and its local SNR column",
            rc == 0 and i > 0 and "native_layer_norm" in text[i:i + 200] and
            "local SNR" in text[i:i + 300] and "<th" in text and ">local SNR<" in text,
            text[i:i + 300])


def test_ranking_noise(d):
    # a reference ETDump (no reference graph): ranked by the noise power an op adds
    rc, out, err, ng = gap_json(
        d, "refdump", "--etdump", os.path.join(EX, "example.etdp"), "--debug_buffer",
        os.path.join(EX, "example_debug.bin"), "--etrecord", os.path.join(EX, "example.etrecord"),
        "--reference-etdump", os.path.join(EX, "example_ref.etdp"), "--reference-debug-buffer",
        os.path.join(EX, "example_ref_debug.bin"), "--min-snr", "30", "--no-table")
    rows = ng.get("rows", [])
    snr = [num(r["cumulative_snr"]) for r in rows]
    # the example's graph is a chain: each op's producer is the previous row (add also reads x)
    noise = [10 ** (-s / 10) - (10 ** (-snr[i - 1] / 10) if i else 0.0)
             for i, s in enumerate(snr)]
    got = [num(r.get("noise_added")) for r in rows]
    C.check("ranking: noise_added = 10^(-snr/10) minus the producer's (numpy)",
            len(rows) == 7 and all(abs(a - b) <= 1e-12 + 1e-9 * abs(b)
                                   for a, b in zip(got, noise)), (got, noise))
    i1 = out.find("Where the error enters")
    sect = out[i1:i1 + 1500] if i1 >= 0 else ""
    ranked = [ln.split("(")[0].split()[-1] for ln in sect.splitlines()
              if ln.strip()[:2] in ("1.", "2.", "3.", "4.", "5.")]
    C.check("ranking: native_layer_norm (18.25 dB) first, the addmm at 142.9 dB (+inf dB "
            "drop) after it; local SNR absent without a graph",
            rc == 1 and ranked and ranked[0] == "native_layer_norm" and "addmm" in ranked and
            ranked.index("addmm") > 0 and all(r.get("local_snr") is None for r in rows),
            sect[:900])


if __name__ == "__main__":
    C.run_cases("numgap_reference", test_ranking_example, test_ranking_noise, test_real,
                test_bisect, test_inputs, test_standin, test_unsupported)
