"""Intermediate-output taps (issue 26, item 2): a tapped program's outputs laid
out the way upstream's tap pass lays them out (the model's own output first,
then one extra output per TapSpec, in output_index order), a TapSpec JSON
written by etcompare.taps.save_specs, an ETDump built with flatc and an
ETRecord from etrecord_gen.

A chain of four ops a -> b -> c -> d; the "device" perturbs op b, so b and
everything after it drift. Checked:
  * per-op rows, one per tap; FULL_TENSOR metrics equal float64 numpy;
  * the first divergence names op b (not c or d, which drift too);
  * the taps are not in the output table (1 output, not 5);
  * STATS against a reference holding the full tensors: the reference is
    reduced by etcompare, and every field equals numpy (float64) on the same
    float32 tensor (std unbiased like torch.std, p99_abs = numpy.quantile
    linear), and min/max/mean/abs_max equal upstream's eager DEFAULT_STATS
    (torch amin/amax/mean/abs().amax) in float64;
  * NaN in a run's STATS (nan_count > 0) is flagged on its own;
  * --max-stat-rel-diff per field; bad TapSpec files give a clear error;
  * the taps in --json, the HTML report (a taps table) and JUnit (testcases).
"""
import json
import math
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import numpy as np  # noqa: E402
import test_accuracy as A  # noqa: E402
sys.path.insert(0, os.path.join(C.SRC, "python"))
from etcompare import taps as TP  # noqa: E402

ALL = ["min", "max", "mean", "abs_max", "abs_mean", "std", "rms", "l1_norm", "l2_norm",
       "nan_count", "inf_count", "zero_count", "p99_abs"]


def np_stats(x, fields):
    x = np.asarray(x, dtype=np.float32).astype(np.float64).ravel()
    a = np.abs(x)
    v = {"min": x.min(), "max": x.max(), "mean": x.mean(), "abs_max": a.max(),
         "abs_mean": a.mean(), "std": x.std(ddof=1), "rms": math.sqrt((x * x).mean()),
         "l1_norm": a.sum(), "l2_norm": math.sqrt((x * x).sum()),
         "nan_count": float(np.isnan(x).sum()), "inf_count": float(np.isinf(x).sum()),
         "zero_count": float((x == 0).sum()), "p99_abs": np.quantile(a, 0.99)}
    return [float(v[f]) for f in fields]


def close(x, y, rel=1e-9):
    return x == y or abs(x - y) <= rel * max(abs(x), abs(y))


rng = np.random.default_rng(26)
SHAPE = (3, 17)
X0 = rng.standard_normal(SHAPE).astype(np.float32)
X1 = np.maximum(X0, 0).astype(np.float32)
X1[0, :3] = 0
X2 = (X1 * 1.5 - 0.25).astype(np.float32)
X3 = (X2 + X0).astype(np.float32)
# the device: op b perturbed, the error carried on
D1 = (X1 + rng.standard_normal(SHAPE).astype(np.float32) * 0.3).astype(np.float32)
D2 = (D1 * 1.5 - 0.25).astype(np.float32)
D3 = (D2 + X0).astype(np.float32)
STATS_B = ["min", "max", "mean", "abs_max"]  # upstream DEFAULT_STATS


def specs():
    return [
        {"node_name": "aten_conv_a", "op_target": "aten.convolution.default",
         "debug_handle": 1, "output_index": 1, "reducer_name": "FULL_TENSOR", "fields": [],
         "stack_trace": "File model.py, line 10, in forward: a = self.conv(x)",
         "reducer_node_name": None, "module_path": "conv", "module_class": "Conv2d"},
        {"node_name": "aten_relu_b", "op_target": "aten.relu.default", "debug_handle": 2,
         "output_index": 2, "reducer_name": "DEFAULT_STATS", "fields": STATS_B,
         "stack_trace": "File model.py, line 11, in forward: b = torch.relu(a)",
         "module_path": "", "module_class": None},
        {"node_name": "aten_linear_c", "op_target": "aten.linear.default", "debug_handle": 3,
         "output_index": 3, "reducer_name": "FULL_TENSOR", "fields": [],
         "stack_trace": None, "module_path": "fc", "module_class": "Linear"},
        {"node_name": "aten_add_d", "op_target": "aten.add.Tensor", "debug_handle": 4,
         "output_index": 4, "reducer_name": "ALL_STATS", "fields": ALL,
         "stack_trace": None, "module_path": None, "module_class": None},
    ]


def f32list(x):
    return [float(v) for v in np.asarray(x, dtype=np.float32).ravel()]


def build(d, stem, ref_full, device=True, nan_in_d=False):
    """ETDump + debug buffer of the device run, ETRecord whose reference_outputs
    hold the eager tapped program's outputs (stats vectors) or, with ref_full,
    the full tensors at the STATS taps."""
    d1, d2, d3 = (D1, D2, D3) if device else (X1, X2, X3)
    sd = np_stats(d3, ALL)
    if nan_in_d:
        sd[ALL.index("nan_count")] = 2.0
    dump = A.Dump()
    outs = [dump.tensor("FLOAT", f32list(d3), SHAPE),
            dump.tensor("FLOAT", f32list(X0), SHAPE),
            dump.tensor("FLOAT", f32list(np_stats(d1, STATS_B)), [4]),
            dump.tensor("FLOAT", f32list(d2), SHAPE),
            dump.tensor("FLOAT", f32list(sd), [len(ALL)])]
    dump.run(outs)
    etdp, dbg = dump.write(d, stem)
    T = A.T
    if ref_full:
        refs = [T(f32list(X3), list(SHAPE)), T(f32list(X0), list(SHAPE)),
                T(f32list(X1), list(SHAPE)), T(f32list(X2), list(SHAPE)),
                T(f32list(X3), list(SHAPE))]
    else:
        refs = [T(f32list(X3), list(SHAPE)), T(f32list(X0), list(SHAPE)),
                T(f32list(np_stats(X1, STATS_B)), [4]), T(f32list(X2), list(SHAPE)),
                T(f32list(np_stats(X3, ALL)), [len(ALL)])]
    rec = A.etrecord(d, stem, [refs])
    spec_path = TP.save_specs(specs(), os.path.join(d, stem + "_taps.json"))
    return etdp, dbg, rec, spec_path


def run_taps(d, stem, etdp, dbg, rec, spec, *extra):
    tj = os.path.join(d, stem + "_taps_out.json")
    rc, out, err = A.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                         "--tap-specs", spec, "--tap-json", tj, *extra)
    doc = C.load_json(tj) if os.path.exists(tj) else {}
    return rc, out, err, doc


def case_rows_and_divergence(d):
    etdp, dbg, rec, spec = build(d, "stats_ref", ref_full=False)
    C.check("save_specs round trip", TP.load_specs(spec)[1]["fields"] == STATS_B)
    rc, out, err, doc = run_taps(d, "stats_ref", etdp, dbg, rec, spec, "--min-snr", "40",
                                 "--max-stat-rel-diff", "1e-3")
    rows = doc.get("rows", [])
    C.check("one row per tap", [r["node_name"] for r in rows] ==
            ["aten_conv_a", "aten_relu_b", "aten_linear_c", "aten_add_d"], json.dumps(rows)[:400])
    C.check("kinds", [r["kind"] for r in rows] == ["FULL_TENSOR", "STATS", "FULL_TENSOR", "STATS"])
    fd = doc.get("first_divergence", [])
    C.check("first divergence names the perturbed op b",
            len(fd) == 1 and fd[0]["node_name"] == "aten_relu_b", json.dumps(fd))
    C.check("text names it too", "first divergence (block 0 run 0): aten_relu_b" in out, out[-600:])
    C.check("stack trace of the op shown", "b = torch.relu(a)" in out)
    C.check("rows a passes, b c d fail", [r["pass"] for r in rows] == [True, False, False, False],
            json.dumps([(r["node_name"], r["reason"]) for r in rows]))
    # FULL_TENSOR metrics against float64
    m = rows[2].get("metrics", {})
    ref, act = X2.astype(np.float64).ravel(), D2.astype(np.float64).ravel()
    e = act - ref
    snr = 10 * math.log10((ref * ref).mean() / (e * e).mean())
    cos = (ref * act).sum() / (np.linalg.norm(ref) * np.linalg.norm(act))
    C.check("FULL_TENSOR SNR/MSE/cosine = numpy",
            close(m.get("snr", 0), snr, 1e-9) and close(m.get("mse", 0), (e * e).mean(), 1e-9)
            and close(m.get("cosine", 0), cos, 1e-9), json.dumps(m))
    C.check("unperturbed FULL_TENSOR identical", rows[0].get("metrics", {}).get("identical") is True)
    # STATS field by field against the reference stats vector
    fb = rows[1].get("fields", [])
    exp_a, exp_r = np_stats(D1, STATS_B), np_stats(X1, STATS_B)
    ok = [f["name"] for f in fb] == STATS_B and all(
        close(f["actual"], float(np.float32(a)), 0) and close(f["reference"], float(np.float32(r)), 0)
        for f, a, r in zip(fb, exp_a, exp_r))
    C.check("STATS fields: actual and reference as stored", ok, json.dumps(fb))
    C.check("STATS rel_diff = |a-r|/|r|", all(
        close(f["rel_diff"], abs(f["actual"] - f["reference"]) / abs(f["reference"]), 1e-12)
        if f["reference"] != 0 else close(f["rel_diff"], abs(f["actual"]), 1e-12)
        for f in fb), json.dumps(fb))
    C.check("reference not reduced when it holds the stats", rows[1]["reference_reduced"] is False)
    C.check("taps left out of the output table", "1 outputs" in err and "5 outputs" not in err
            and "of 1 outputs" in err, err)
    C.check("gate fails (exit 1)", rc == 1, f"rc={rc} {err}")


def case_full_reference_reduced(d):
    etdp, dbg, rec, spec = build(d, "full_ref", ref_full=True, device=False)
    rc, out, err, doc = run_taps(d, "full_ref", etdp, dbg, rec, spec)
    rows = doc.get("rows", [])
    C.check("four rows", len(rows) == 4, json.dumps(doc)[:300])
    if len(rows) < 4:
        return
    for row, x, fields in ((rows[1], X1, STATS_B), (rows[3], X3, ALL)):
        C.check(f"{row['node_name']}: reference reduced", row["reference_reduced"] is True)
        exp = np_stats(x, fields)
        got = {f["name"]: f["reference"] for f in row.get("fields", [])}
        bad = [(k, got.get(k), e) for k, e in zip(fields, exp) if not close(got.get(k, math.nan), e)]
        C.check(f"{row['node_name']}: every STATS formula = numpy float64", not bad, repr(bad))
    # upstream's eager DEFAULT_STATS (torch, on the float32 tensor), in float64
    # (etrecord_gen stands in a module for torch here: ask a clean interpreter)
    code = ("import sys, json, torch\n"
            "t = torch.tensor(json.loads(sys.stdin.read()), dtype=torch.float32)"
            ".to(torch.float64)\n"
            "print(json.dumps([t.amin().item(), t.amax().item(), t.mean().item(),"
            " t.abs().amax().item(), t.std().item()]))")
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(f32list(X3)),
                       capture_output=True, text=True)
    up = json.loads(p.stdout) if p.returncode == 0 else None
    got = {f["name"]: f["reference"] for f in rows[3]["fields"]}
    C.check("min/max/mean/abs_max/std = torch (upstream _eager_stats formulas)",
            up is not None and all(close(got[k], v) for k, v in
                                   zip(["min", "max", "mean", "abs_max", "std"], up)),
            f"{got} {up} {p.stderr[-300:]}")
    C.check("no perturbation: every tap passes", all(r["pass"] for r in rows) and rc == 0,
            f"rc={rc} " + json.dumps([r["reason"] for r in rows]))


def case_nan_flag(d):
    etdp, dbg, rec, spec = build(d, "nan", ref_full=False, device=False, nan_in_d=True)
    rc, out, err, doc = run_taps(d, "nan", etdp, dbg, rec, spec)
    rows = doc.get("rows", [])
    C.check("NaN count flagged without any threshold",
            len(rows) == 4 and rows[3]["nonfinite"] and not rows[3]["pass"]
            and all(r["pass"] for r in rows[:3]), json.dumps([(r["nonfinite"], r["reason"]) for r in rows]))
    C.check("NaN flag fails the run", rc == 1, f"rc={rc}")


def case_per_field_threshold(d):
    etdp, dbg, rec, spec = build(d, "field", ref_full=False)
    rc, out, err, doc = run_taps(d, "field", etdp, dbg, rec, spec,
                                 "--max-stat-rel-diff", "min=1e9,max=1e9,mean=1e9,abs_max=1e9")
    rows = doc.get("rows", [])
    C.check("per-field thresholds: op b passes when its fields are allowed to drift",
            len(rows) == 4 and rows[1]["pass"], json.dumps(rows[1] if rows else doc)[:400])
    rc, out, err, doc = run_taps(d, "field", etdp, dbg, rec, spec, "--max-stat-rel-diff",
                                 "mean=1e-3")
    rows = doc.get("rows", [])
    C.check("only the mean gated", len(rows) == 4 and not rows[1]["pass"] and
            [f["name"] for f in rows[1]["fields"] if f["fail"]] == ["mean"],
            json.dumps(rows[1] if rows else doc)[:600])
    rc, out, err = A.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                         "--tap-specs", spec, "--max-stat-rel-diff", "bogus=1")
    C.check("unknown field: usage error", rc == 2 and "unknown field 'bogus'" in err, err)


def case_bad_specs(d):
    etdp, dbg, rec, spec = build(d, "bad", ref_full=False)
    for name, text, msg in (
            ("not a list", "{}", "JSON list"),
            ("no output_index", '[{"node_name": "x"}]', "output_index"),
            ("unknown stat", '[{"node_name": "x", "output_index": 1, "fields": ["median"]}]',
             "median"),
            ("repeated index", '[{"node_name": "x", "output_index": 1},'
                               '{"node_name": "y", "output_index": 1}]', "share output_index 1"),
            ("truncated", '[{"node_name": "x"', "")):
        p = os.path.join(d, "bad.json")
        with open(p, "w") as f:
            f.write(text)
        rc, out, err = A.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                             "--tap-specs", p)
        C.check(f"bad TapSpec file ({name}): exit 3 with a message",
                rc == 3 and "bad.json" in err and msg in err, f"rc={rc} {err}")


def case_library_stats(d):
    """etcompare.taps.stats (etc_tap_stats) on odd tensors against numpy."""
    sys.modules.pop("torch", None)  # etrecord_gen's stand-in: the package must not see it
    r = np.random.default_rng(7)
    cases = {"one": np.float32([2.5]), "neg": -np.abs(r.standard_normal(101)).astype(np.float32),
             "zeros": np.zeros(10, np.float32), "big": (r.standard_normal(3000) * 1e3).astype(np.float32)}
    bad = []
    for name, x in cases.items():
        got = TP.stats(x)
        exp = np_stats(x, ALL) if name != "one" else None
        for k in ALL:
            e = (exp[ALL.index(k)] if exp else
                 {"std": math.nan}.get(k, np_stats(np.float32([2.5, 2.5]), [k])[0]))
            if k in ("l1_norm", "nan_count", "zero_count") and name == "one":
                e = {"l1_norm": 2.5, "nan_count": 0.0, "zero_count": 0.0}[k]
            if k == "l2_norm" and name == "one":
                e = 2.5
            if not (close(got[k], e) or (math.isnan(got[k]) and math.isnan(e))):
                bad.append((name, k, got[k], e))
    x = np.float32([1, np.nan, -np.inf, 0, 3])
    got = TP.stats(x, ["nan_count", "inf_count", "zero_count", "min", "max"])
    C.check("NaN and Inf counted; min/max propagate NaN like torch.amin/amax",
            got["nan_count"] == 1 and got["inf_count"] == 1 and got["zero_count"] == 1 and
            math.isnan(got["min"]) and math.isnan(got["max"]), repr(got))
    C.check("library STATS = numpy on odd tensors (one element, all negative, zeros, 3000)",
            not bad, repr(bad[:5]))
    try:
        TP.stats(x, ["median"])
        C.check("unknown field refused", False)
    except ValueError as e:
        C.check("unknown field refused", "median" in str(e))


def case_reports(d):
    """Taps in --json ("taps", the same object as --tap-json), the HTML report
    (a taps table, failing rows first) and JUnit (one testcase per tap; the
    failing ones as failures with the fields that fail; the accuracy suite
    without the tap outputs)."""
    import xml.etree.ElementTree as ET
    etdp, dbg, rec, spec = build(d, "reports", ref_full=False)
    js, rep, ju = (os.path.join(d, "reports." + e) for e in ("json", "html", "xml"))
    rc, out, err, doc = run_taps(d, "reports", etdp, dbg, rec, spec, "--min-snr", "40",
                                 "--max-stat-rel-diff", "1e-3", "--json", js, "--report", rep,
                                 "--junit", ju)
    C.check("reports: gate fails (exit 1), no internal disagreement",
            rc == 1 and "internal error" not in err, f"rc={rc} {err[-800:]}")
    full = C.load_json(js) if os.path.exists(js) else {}
    A.validate("taps --json", full)
    taps = full.get("taps") or {}
    C.check("--json carries the taps: the rows of --tap-json",
            taps.get("rows") == doc.get("rows") and taps.get("failures") == 3 and
            taps.get("first_divergence") == doc.get("first_divergence"),
            json.dumps(taps)[:600])
    m = next((r.get("metrics", {}) for r in taps.get("rows", [])
              if r["node_name"] == "aten_linear_c"), {})
    ref, act = X2.astype(np.float64).ravel(), D2.astype(np.float64).ravel()
    snr = 10 * math.log10((ref * ref).mean() / ((act - ref) ** 2).mean())
    C.check("--json: the FULL_TENSOR tap's SNR = numpy", close(m.get("snr", 0), snr, 1e-9),
            json.dumps(m))
    html = open(rep, encoding="utf-8").read() if os.path.exists(rep) else ""
    C.check("HTML: a taps section and table", 'id="taps"' in html and 'id="taps-table"' in html,
            html[:200])
    body = html.split('id="taps-table"')[-1].split("</table>")[0]
    order = [n for n in ("aten_relu_b", "aten_linear_c", "aten_add_d", "aten_conv_a")
             if n in body]
    C.check("HTML: every tap, the failing ones first",
            order == ["aten_relu_b", "aten_linear_c", "aten_add_d", "aten_conv_a"] and
            body.index("aten_conv_a") > body.index("aten_add_d") and
            body.count('<tr class="fail">') == 3 and body.count('<tr class="pass">') == 1, body[:800])
    C.check("HTML: the first divergence names op b",
            "First divergence (block 0 run 0): <b>aten_relu_b</b>" in html, "")
    try:
        root = ET.parse(ju).getroot()
    except Exception as e:  # noqa: BLE001
        C.check("JUnit parses", False, repr(e))
        return
    suites = {s.get("name").split(":")[0]: s for s in root.iter("testsuite")}
    ts = suites.get("etcompare taps")
    C.check("JUnit: a taps suite of 4 testcases, 3 failures",
            ts is not None and ts.get("tests") == "4" and ts.get("failures") == "3" and
            len(ts.findall("testcase")) == 4, ET.tostring(root, encoding="unicode")[:800])
    if ts is not None:
        cases = {c.get("name"): c for c in ts.findall("testcase")}
        b = cases.get("tap 2: aten_relu_b (STATS)")
        fb = b.find("failure") if b is not None else None
        C.check("JUnit: the STATS tap fails with its failing fields",
                fb is not None and fb.get("type") == "STATS" and "min: actual" in (fb.text or ""),
                ET.tostring(b, encoding="unicode") if b is not None else str(list(cases)))
        c = cases.get("tap 3: aten_linear_c (FULL_TENSOR)")
        C.check("JUnit: the FULL_TENSOR tap below the gate fails",
                c is not None and c.find("failure") is not None and
                c.find("failure").get("type") == "FULL_TENSOR", str(list(cases)))
        a = cases.get("tap 1: aten_conv_a (FULL_TENSOR)")
        C.check("JUnit: the passing tap passes", a is not None and a.find("failure") is None,
                str(list(cases)))
    acc = suites.get("etcompare accuracy")
    C.check("JUnit: the accuracy suite holds the model's output only",
            acc is not None and acc.get("tests") == "1" and len(acc.findall("testcase")) == 1,
            ET.tostring(acc, encoding="unicode")[:600] if acc is not None else "")
    C.check("JUnit: the total failure count is the taps' plus the outputs'",
            root.get("failures") == str(3 + int(acc.get("failures") if acc is not None else 0)),
            root.get("failures"))


def main():
    d = C.work_dir("taps")
    case_library_stats(d)
    for case in (case_rows_and_divergence, case_full_reference_reduced, case_nan_flag,
                 case_per_field_threshold, case_bad_specs, case_reports):
        case(d)
    C.finish()


if __name__ == "__main__":
    main()
