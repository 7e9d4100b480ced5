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


def gap_json(d, tag, *args):
    js = os.path.join(d, f"{tag}.json")
    rc, out, err = C.run(*args, "--json", js)
    doc = C.load_json(js)
    return rc, out, err, doc.get("numeric_gap") or {}


def test_real(d):
    for m in MODELS:
        rc, out, err, ng = gap_json(
            d, m, "--etdump", os.path.join(REAL, f"{m}.etdp"), "--debug_buffer",
            os.path.join(REAL, f"{m}_debug.bin"), "--etrecord",
            os.path.join(REAL, f"{m}.etrecord"), "--min-snr", "60", "--no-table")
        rows = ng.get("rows", [])
        # the accuracy gate pairs the program outputs with reference_outputs; the
        # runtime never writes bundled_input_index, so its 3 runs of test case 0 may
        # be paired with test case 1 (the pairing is another helper's): only the
        # numeric gap's verdict is checked here
        acc_only = rc == 1 and "accuracy gate FAILED" in err and "first divergence" not in err
        C.check(f"{m}: the main command alone gives a numeric gap that passes --min-snr 60",
                (rc == 0 or acc_only) and rows and ng.get("failures") == 0 and
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
                want[(tuple(sorted(hs)), i)] = snr64(z[key], a)
        for r in rows:
            k = (tuple(sorted(r["runtime_debug_handle"])), r["output"])
            if k not in want:
                continue
            n += 1
            got, exp = num(r.get("cumulative_snr")), want[k]
            ok = (math.isinf(got) and math.isinf(exp)) or abs(got - exp) <= 0.01
            if not ok:
                bad.append((k, r["aot_ops"], got, exp))
        C.check(f"{m}: cumulative SNR per handle = numpy's against {m}_aot_f64.npz (0.01 dB)",
                n >= len(want) * 0.9 and n > 0 and not bad,
                f"compared {n} of {len(want)}: {bad[:5]}")
        loc = [r for r in rows if r.get("local_snr") is not None]
        C.check(f"{m}: every compared row has a local SNR (re-run on the runtime's inputs)",
                len(loc) >= n and all(num(r["local_snr"]) > 60 for r in loc),
                [(r["aot_ops"], r.get("local_snr"), r.get("local_note")) for r in rows
                 if r.get("local_snr") is None or num(r["local_snr"]) <= 60][:5])


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
    head = open(tsv).readline().rstrip("\n").split("\t") if os.path.exists(tsv) else []
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
    C.check("ranking: on the bundled example the layer_norm (the bug) is ranked first",
            first and "native_layer_norm" in first[0], sect[:800])


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
                test_bisect)
