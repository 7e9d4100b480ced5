"""The numeric gap over the runs of one ETDump (issue 26, item 1): the gap
compares every run of every block of the gap's name (each block one run
here: its own bundled input, its own intermediate outputs); `--all-runs`
keeps every run's gap (--json "numeric_gap_more", one JUnit suite each) and
adds, per op, the distribution of its SNR over the runs (min, p5, median,
p95, worst run) and the run-to-run agreement of its runtime values within
an input (--json "numeric_gap_distribution").

The farm: 6 runs of a 4-op program in one ETDump, inputs 0 (runs 0-3) and
1 (runs 4-5); each run adds its own small noise to every op, and run 2 (a
"device" with a broken kernel) adds large noise to op 2. The reference
ETDump has the same blocks with the exact values. Every figure of the
--json "numeric_gap_distribution" object is recomputed with numpy in float64 (SNR
of the float32 values, np.percentile's linear method, the worst run, the
pairwise SNR matrix of the runtime values and its outlier); the HTML report
holds one band per op, the median line and the worst marks, and headless
Chromium renders it. Also: one reference run against the blocks of its input, --all-runs
without a numeric gap (usage error), and --all-runs from the ETRecord's own
graph on the real mlp export (two blocks, one with its relu scaled): each
block's cumulative SNR against numpy's float64 oracle, and the cumulative
and local distributions equal to the runs' own rows.
"""
import json
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
os.environ.setdefault("ETC_SRC", C.SRC)
import test_numgap as N  # noqa: E402

SHAPE = (4, 8)
NOPS = 4
OPNAMES = ["linear", "relu", "add", "mul"]
INPUTS = [0, 0, 0, 0, 1, 1]
BAD_RUN, BAD_OP = 2, 2


def exact(inp):
    rnd = np.random.default_rng(100 + inp)
    x = rnd.uniform(-1, 1, SHAPE[0] * SHAPE[1]).astype(np.float32)
    outs = []
    for i in range(NOPS):
        x = (np.float32(0.8) * x + np.float32(0.1 * math.cos(i + 1))).astype(np.float32)
        outs.append(x.copy())
    return outs


def runtime(k):
    outs = exact(INPUTS[k])
    rnd = np.random.default_rng(7 + k)
    res = []
    for i, x in enumerate(outs):
        scale = 0.05 if (k == BAD_RUN and i == BAD_OP) else 1e-4 * (1 + k + i)
        res.append((x + rnd.uniform(-scale, scale, x.size)).astype(np.float32))
    return res


def dump(d, stem, values):
    """One run per entry of `values`, each its own block: run k logs an extra
    profile-only event (instruction 100 + k) so that no two runs merge."""
    dm = N.Dump()
    runs = []
    for k, outs in enumerate(values):
        dm.events, dm.t = [], 1000
        for i, x in enumerate(outs):
            dm.op(i, f"native_call_{OPNAMES[i]}.out",
                  [dm.tensor("FLOAT", [float(v) for v in x], SHAPE)])
        dm.profile_only(100 + k, f"marker_{k}")
        dm.events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                            "instruction_id": 0, "start_time": 1,
                                            "end_time": dm.t + 1}})
        runs.append({"name": "Execute", "events": dm.events,
                     "bundled_input_index": INPUTS[k]})
    dm.runs = runs
    return N.A.Dump.write(dm, d, stem)


def snr(ref, act):
    ref = np.asarray(ref, np.float64)
    act = np.asarray(act, np.float64)
    e = np.sum((act - ref) ** 2)
    return math.inf if e == 0 else 10 * math.log10(np.sum(ref ** 2) / e)


def num(v):
    return float(v) if isinstance(v, str) else v


def close(a, b, rel=1e-9):
    a = num(a)
    return (math.isinf(a) and a == b) or abs(a - b) <= rel * max(1.0, abs(b))


def med2(v):
    """numpy's median, where an interpolation towards +inf is +inf (numgap_dist.h)."""
    v = sorted(v)
    pos = 0.5 * (len(v) - 1)
    lo = int(math.floor(pos))
    t = pos - lo
    if t == 0 or lo + 1 >= len(v):
        return v[lo]
    if math.isinf(v[lo]) or math.isinf(v[lo + 1]):
        return v[lo] if v[lo] == v[lo + 1] else v[lo + 1]
    return float(np.percentile(v, 50))


def all_gaps(doc):
    """numeric_gap and numeric_gap_more's gaps, in block order."""
    gaps = [doc.get("numeric_gap") or {}] + [m["numeric_gap"] for m in
                                             doc.get("numeric_gap_more") or []]
    return sorted(gaps, key=lambda g: (int(g.get("block", "#0").rpartition("#")[2] or 0),
                                       g.get("run", 0)))


def case_graph(d):
    """--all-runs from the ETRecord's own graph (no reference ETDump): the real
    mlp export's first Execute run twice in one ETDump (bundled inputs 0 and
    1, so two blocks), the second with its relu output (instruction 2)
    scaled by 1.01. Each block's cumulative SNR per op = numpy float64
    against the oracle; the distribution's min/median/max of both errors =
    those of the two runs' own rows."""
    import test_methods_reference as MR
    R = MR.R
    doc = MR.decode_etdump(d, "mlp")
    base = next(r for r in doc["run_data"] if r["name"] == "Execute")
    with open(os.path.join(R.REAL, "mlp_debug.bin"), "rb") as f:
        data = f.read()
    buf, runs, scaled_handles = bytearray(), [], None
    for k in range(2):
        run = json.loads(json.dumps(base))
        MR.repack(run, data, buf)
        run["bundled_input_index"] = k
        if k == 1:
            for e in run["events"]:
                de = e.get("debug_event")
                if de and de.get("instruction_id") == 2 and not de["debug_entry"].get("output"):
                    t = de["debug_entry"]["tensor"]
                    m = int(np.prod(t["sizes"]))
                    a = np.frombuffer(bytes(buf[t["offset"]:t["offset"] + 4 * m]), np.float32)
                    buf[t["offset"]:t["offset"] + 4 * m] = (a * np.float32(1.01)).astype(
                        np.float32).tobytes()
        runs.append(run)
    src = os.path.join(d, "mlp2.json")
    with open(src, "w") as f:
        json.dump({"run_data": runs}, f)
    import subprocess
    subprocess.run([C.FLATC, "-b", "--size-prefixed", "-o", d, C.FBS, src], check=True,
                   capture_output=True)
    dbg = os.path.join(d, "mlp2_debug.bin")
    with open(dbg, "wb") as f:
        f.write(bytes(buf))
    import zipfile
    with zipfile.ZipFile(os.path.join(R.REAL, "mlp.etrecord")) as z:
        hs = json.loads(z.read("debug_handle_map"))["forward"]["2"]
    hs = hs if isinstance(hs, list) else [hs]
    js = os.path.join(d, "mlp2_out.json")
    rc, out, err = C.run("--etdump", os.path.join(d, "mlp2.etdp"), "--debug_buffer", dbg,
                         "--etrecord", os.path.join(R.REAL, "mlp.etrecord"), "--all-runs",
                         "--json", js, "--no-table")
    doc = C.load_json(js) if os.path.exists(js) else {}
    gaps = all_gaps(doc)
    C.check("graph --all-runs: a gap per block from the ETRecord's graph",
            rc == 0 and len(gaps) == 2 and all(g.get("rows") for g in gaps),
            f"rc={rc} {err[-800:]}")
    if len(gaps) != 2:
        return
    for k, g in enumerate(gaps):
        MR.compare_rows(f"graph --all-runs block {k}", g["rows"],
                        MR.expected("mlp", hs if k == 1 else None))
    dist = doc.get("numeric_gap_distribution") or {}
    ops = dist.get("ops", [])
    ok_c = ok_l = bool(ops)
    nloc = 0
    for op in ops:
        vals = {}
        for field in ("cumulative_snr", "local_snr"):
            v = []
            for g in gaps:
                for r in g["rows"]:
                    if ",".join(str(h) for h in r["runtime_debug_handle"]) == op["handles"] and \
                            r["output"] == op["output"] and r.get(field) is not None:
                        v.append(num(r[field]))
            vals[field] = v
        for field, key in (("cumulative_snr", "c"), ("local_snr", "l")):
            st, v = op[field], vals[field]
            good = st["count"] == len(v) and (not v or (
                close(st["min"], min(v)) and close(st["max"], max(v)) and
                close(st["median"], med2(v))))
            if key == "c":
                ok_c &= good
            else:
                ok_l &= good
                nloc += len(v)
    C.check("graph --all-runs: the cumulative distribution = the runs' own rows", ok_c,
            json.dumps(ops)[:600])
    C.check("graph --all-runs: the local distribution = the runs' own local SNRs",
            ok_l and nloc > 0, f"{nloc} local values")
    relu = next((op for op in ops if op["handles"] == ",".join(map(str, hs))), {})
    C.check("graph --all-runs: the scaled op's worst run is block 1",
            (relu.get("cumulative_snr") or {}).get("worst", {}).get("block") == "Execute#1",
            json.dumps(relu)[:400])


def main():
    d = C.work_dir("farm_cli")
    n = len(INPUTS)
    dev = [runtime(k) for k in range(n)]
    ref = [exact(INPUTS[k]) for k in range(n)]
    dev_etdp, dev_dbg = dump(d, "dev", dev)
    ref_etdp, ref_dbg = dump(d, "ref", ref)
    js, rep = os.path.join(d, "runs.json"), os.path.join(d, "runs.html")
    ju = os.path.join(d, "runs.xml")
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                         "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--all-runs", "--min-snr", "30", "--json", js, "--report", rep,
                         "--junit", ju)
    C.check("the gate and JUnit agree", "internal error" not in err, err[-800:])
    import xml.etree.ElementTree as ET
    try:
        root = ET.parse(ju).getroot()
        suites = [s for s in root.iter("testsuite") if "numeric gap" in s.get("name")]
        # the shown run (the first that diverges) first, then the others in order
        C.check("JUnit: one numeric-gap suite per run, the broken run's op the one failure",
                [s.get("name") for s in suites] ==
                [f"etcompare numeric gap: Execute#{k}" for k in
                 [BAD_RUN] + [k for k in range(n) if k != BAD_RUN]] and
                [s.get("failures") for s in suites] == ["1"] + ["0"] * (n - 1) and
                root.get("failures") == "1",
                ET.tostring(root, encoding="unicode")[:600])
    except Exception as e:  # noqa: BLE001
        C.check("JUnit parses", False, repr(e))
    C.check("--all-runs: one line per run, each named", all(
        f"numeric gap: Execute#{k} run 0 (ETDump run {k})" in err for k in range(n)),
        out[-2000:] + err)
    C.check("--all-runs: the distribution's summary is printed",
            f"numeric gap over {n} runs" in out, out[-2000:])
    C.check("the broken run fails the gate (exit 1)", rc == 1, f"rc={rc} {err[-1500:]}")
    doc = C.load_json(js)
    N.schema_ok("all-runs json", doc)
    more = doc.get("numeric_gap_more") or []
    C.check("json: every run's own gap (numeric_gap: the first that diverges, then "
            "numeric_gap_more)",
            (doc.get("numeric_gap") or {}).get("block") == f"Execute#{BAD_RUN}" and
            [m["name"] for m in more] == [f"Execute#{k}" for k in range(n) if k != BAD_RUN],
            json.dumps([m["name"] for m in more]))
    C.check("json: numeric_gap_runs: every run in brief, the broken one diverges",
            [(r["block"], r["first_divergence"] is not None)
             for r in doc.get("numeric_gap_runs") or []] ==
            [(f"Execute#{k}", k == BAD_RUN) for k in range(n)], "")
    g = doc.get("numeric_gap_distribution") or {}
    C.check("json: numeric_gap_distribution with every run", g.get("run_count") == n and
            [r["block"] for r in g.get("runs", [])] == [f"Execute#{k}" for k in range(n)] and
            [r["bundled_input_index"] for r in g.get("runs", [])] == INPUTS, json.dumps(g)[:800])
    ops = g.get("ops", [])
    C.check("json: one entry per op", len(ops) == NOPS, json.dumps(ops)[:500])
    for i, op in enumerate(ops[:NOPS]):
        v = np.array([snr(ref[k][i], dev[k][i]) for k in range(n)])
        c = op["cumulative_snr"]
        want = {"min": v.min(), "p5": np.percentile(v, 5), "median": np.percentile(v, 50),
                "p95": np.percentile(v, 95), "max": v.max()}
        C.check(f"op {i}: min, p5, median, p95, max of the SNR over the runs = numpy "
                "(1e-9 relative)", c["count"] == n and all(close(c[k], w) for k, w in
                                                           want.items()),
                f"{c} vs {want}")
        worst = int(np.argmin(v))
        C.check(f"op {i}: the worst run is named (file, block, run, bundled input)",
                c["worst"]["run_index"] == worst and c["worst"]["block"] == f"Execute#{worst}"
                and c["worst"]["file"] == dev_etdp and c["worst"]["run"] == worst and
                c["worst"]["bundled_input_index"] == INPUTS[worst], f"{c['worst']} vs {worst}")
        C.check(f"op {i}: no local error without a reference graph",
                op["local_snr"]["count"] == 0 and op["local_snr"]["worst"] is None, op["local_snr"])
        # run-to-run agreement of the runtime values within each input
        lo, out_run, out_med = math.inf, None, math.inf
        for inp in sorted(set(INPUTS)):
            ks = [k for k in range(n) if INPUTS[k] == inp]
            for a in ks:
                row = [snr(dev[b][i], dev[a][i]) for b in ks if b != a]
                lo = min(lo, min(row))
                med = float(np.percentile(row, 50))
                if med < out_med:
                    out_med, out_run = med, a
        ag = op["agreement"] or {}
        C.check(f"op {i}: run agreement: lowest pairwise SNR = numpy (1e-6 relative)",
                ag and close(ag["min_pairwise_snr"], lo, 1e-6), f"{ag} vs {lo}")
        C.check(f"op {i}: run agreement: the outlier run is the numpy one",
                ag and ag["outlier_run_index"] == out_run and
                close(ag["outlier_median_snr"], out_med, 1e-6), f"{ag} vs {out_run} {out_med}")
    bad = ops[BAD_OP]["cumulative_snr"]["worst"] if len(ops) > BAD_OP else {}
    C.check("the broken run is the worst of the broken op",
            bad.get("run_index") == BAD_RUN, bad)
    C.check("the broken run is the agreement outlier of the broken op",
            len(ops) > BAD_OP and (ops[BAD_OP]["agreement"] or {}).get("outlier_run_index")
            == BAD_RUN, ops[BAD_OP] if len(ops) > BAD_OP else ops)
    # the HTML report: one band chart of the cumulative error, its table
    html = open(rep, encoding="utf-8").read() if os.path.exists(rep) else ""
    C.check("html: the band chart section", f"Numeric gap over {n} runs" in html and
            "<svg" in html, html[:300])
    C.check("html: one p5-p95 band, one worst mark per op",
            html.count('class="p5p95"') == NOPS and html.count('class="worst"') == NOPS,
            str(html.count('class="p5p95"')) + " bands")
    C.check("html: the median line through every op",
            html.count('class="median"') == 1 and
            len(html.split('class="median"')[1].split('points="')[1].split('"')[0].split())
            == NOPS, "")
    C.check("html: the worst mark names the run",
            f"block Execute#{BAD_RUN} run {BAD_RUN} bundled input 0" in html, "")
    C.check("html: the per-op table", html.count("<tr><td>") >= NOPS and
            'id="numgap-runs-table"' in html, "")
    # without --all-runs: one gap, no distribution
    js2 = os.path.join(d, "one.json")
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                         "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--json", js2)
    doc2 = C.load_json(js2)
    C.check("without --all-runs: every run in brief, no distribution, no further gaps",
            len(doc2.get("numeric_gap_runs") or []) == n and
            "numeric_gap_distribution" not in doc2 and "numeric_gap_more" not in doc2, "")
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                         "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--all-runs", "--block", "Nope")
    C.check("--all-runs with an unknown block: exit 3 naming it (as without --all-runs)",
            rc == 3 and '"Nope"' in err, f"rc={rc} {err}")
    # a reference ETDump of one run (input 0): the device blocks of input 0 against it
    # (the others have no reference block of their inputs: left out, with a note)
    one_etdp, one_dbg = dump(d, "ref_one", [exact(0)])
    js3 = os.path.join(d, "one_ref.json")
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg,
                         "--reference-etdump", one_etdp, "--reference-debug-buffer", one_dbg,
                         "--all-runs", "--json", js3, "--no-table")
    doc3 = C.load_json(js3)
    gaps = all_gaps(doc3)
    zero = [k for k in range(n) if INPUTS[k] == 0]
    ok = len(gaps) == len(zero) and all(
        close(r["cumulative_snr"], snr(exact(0)[i], dev[k][i]))
        for g, k in zip(gaps, zero)
        for i, r in enumerate(g.get("rows", [])))
    C.check("--all-runs against a reference ETDump of one run: every input-0 block against "
            "its Execute block (SNR = numpy)", rc in (0, 1) and ok and
            all(len(g.get("rows", [])) == NOPS for g in gaps), f"rc={rc} {err[-600:]}")
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--all-runs")
    C.check("--all-runs without a numeric gap: usage error saying what it needs",
            rc == 2 and "--all-runs belongs to the numeric gap" in err, f"rc={rc} {err}")
    try:
        import test_report_html as R
        shot = R.case_chromium(d, rep)
        if shot:
            print(f"screenshot: {shot}")
    except Exception as e:  # noqa: BLE001
        C.check("chromium screenshot ran", False, repr(e))
    case_graph(d)
    C.finish()


if __name__ == "__main__":
    main()
