"""Sixth hostile pass (a CI engineer wiring etcompare into a device farm):
the main command's verdicts, exit codes and CI artifacts where they
disagreed.

- A real run of test case 1, alone in its ETDump: the record has only test
  case 0's inputs, so the reference run on them made up a divergence at the
  first op (exit 1). The run's outputs match the record's reference_outputs[1];
  it is now left out with a note naming that set, exit 0, and still compared
  (passing) with the .bpte that has its inputs.
- `--plot` naming a regular file: found after the gates (exit 4, the JUnit
  without the gates' failures); now before any work, exit 4 with the JUnit's
  error.
- `--compare` without a threshold: the HTML report's verdict was a green
  "OK ... no divergence" and the numeric gap's rows said "pass" (an 18 dB
  layer_norm included); now "NO GATE" drawn neutral and "no gate" rows.
- An output in a missing folder (exit 4 before the run) left no --junit and
  no --report; both are now written with the error.
- `--example --junit`: exits 1 as its JUnit says; --help and the README say so.
- A quantized tensor compared code for code: a code flipped at a rounding
  boundary failed every gate ("exact comparison"), and the SNR of codes
  counted the zero point as signal. Two int8 tensors of a quantize node are
  now compared dequantized with the node's scale and zero point (numpy
  checks the SNR); a --quant-params entry that contradicts the ETRecord's
  node, a zero point outside int8 and an entry for a float output are said.
- An event signature repeated within a run (a loop in the program) is kept
  once per run, as upstream's Inspector keeps it: now said on stderr.
- An instruction that logs only OPERATOR_CALL (a prim op) beside native_call_*
  events was booked as framework tax; operator time is now chosen per
  instruction.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import setup  # noqa: E402
import common as C  # noqa: E402

etcompare = setup()

R = os.path.join(C.DATA, "realexport")


def decode(tmp, path):
    """The ETDump at `path` as a JSON document (flatc)."""
    p = subprocess.run([C.FLATC, "--json", "--strict-json", "--size-prefixed", "--raw-binary",
                        "--defaults-json", "-o", tmp, C.FBS, "--", path],
                       capture_output=True, text=True)
    out = os.path.join(tmp, os.path.splitext(os.path.basename(path))[0] + ".json")
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc could not decode {path}: {p.stderr}")
    return C.load_json(out)


def tc1_alone(tmp):
    """cnn_mixed's second Execute run (test case 1) alone: its ETDump and a
    debug buffer holding only that run's tensors."""
    doc = decode(tmp, os.path.join(R, "cnn_mixed.etdp"))
    runs = doc["run_data"]
    doc["run_data"] = [runs[0], runs[2]]  # Default, then the test case 1 run
    etdp = C.flatc_build(tmp, "tc1", doc)
    size = {"FLOAT": 4, "LONG": 8, "INT": 4, "DOUBLE": 8, "BYTE": 1, "CHAR": 1, "BOOL": 1}
    spans = []
    for e in runs[2].get("events", []):
        t = ((e.get("debug_event") or {}).get("debug_entry") or {}).get("tensor")
        if t and t["offset"] >= 0:  # -1: an empty tensor, no bytes
            n = 1
            for k in t["sizes"]:
                n *= k
            spans.append((t["offset"], t["offset"] + n * size[t["scalar_type"]]))
    with open(os.path.join(R, "cnn_mixed_debug.bin"), "rb") as f:
        buf = bytearray(f.read())
    out = bytearray(len(buf))
    for lo, hi in spans:
        out[lo:hi] = buf[lo:hi]
    buf = out
    dbg = os.path.join(tmp, "tc1_debug.bin")
    with open(dbg, "wb") as f:
        f.write(buf)
    return etdp, dbg


def case_unknown_inputs(tmp):
    etdp, dbg = tc1_alone(tmp)
    junit = os.path.join(tmp, "tc1.xml")
    rc, out, err = C.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                         os.path.join(R, "cnn.etrecord"), "--min-snr", "100", "--no-table",
                         "--junit", junit)
    C.check("tc1 alone: the accuracy gate passes and the run is not a divergence (exit 0)",
            rc == 0, f"rc={rc}\n{err[-3000:]}")
    C.check("tc1 alone: no first divergence is reported", "first divergence" not in err, err)
    C.check("tc1 alone: the note names the reference set the run matches",
            "reference_outputs[1]" in err and "is not compared" in err, err)
    C.check("tc1 alone: the note says how to give the inputs",
            "--bundled-program" in err, err)
    C.check("tc1 alone: the summary says no run was compared",
            "numeric gap: no run compared" in err, err)
    with open(junit) as f:
        xml = f.read()
    root = re.search(r"<testsuites [^>]*>", xml)
    C.check("tc1 alone: the JUnit has no failure and no numeric-gap suite",
            root and 'failures="0"' in root.group(0) and "etcompare numeric gap" not in xml,
            xml[:600])
    rc, out, err = C.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                         os.path.join(R, "cnn.etrecord"), "--bundled-program",
                         os.path.join(R, "cnn.bpte"), "--min-snr", "100", "--no-table")
    C.check("tc1 alone with its .bpte: every intermediate output compared and passing",
            rc == 0 and "17 intermediate outputs pass" in err, f"rc={rc}\n{err[-2000:]}")
    # the unmodified three-run ETDump: the tc1 run left out by the same rule
    rc, out, err = C.run("--etdump", os.path.join(R, "cnn_mixed.etdp"), "--debug_buffer",
                         os.path.join(R, "cnn_mixed_debug.bin"), "--etrecord",
                         os.path.join(R, "cnn.etrecord"), "--min-snr", "100", "--no-table")
    C.check("cnn_mixed: runs 0 and 2 compared, run 1 left out, exit 0",
            rc == 0 and "2 runs compared" in err and "Execute run 1 (ETDump run 2) is not "
            "compared" in err, f"rc={rc}\n{err[-2000:]}")


def case_unknown_inputs_python(tmp):
    """The Python package's calculate_numeric_gap, same rule: MismatchError
    (a warning and the gap with force=True), and the gap with the .bpte."""
    d = os.path.join(tmp, "py")
    os.makedirs(d)
    etdp, dbg = tc1_alone(d)
    rec = os.path.join(R, "cnn.etrecord")
    insp = etcompare.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
    try:
        insp.calculate_numeric_gap()
        C.check("python tc1 alone: calculate_numeric_gap refuses the guessed inputs", False,
                "no error")
    except etcompare.MismatchError as e:
        C.check("python tc1 alone: MismatchError naming reference_outputs[1] and the way out",
                "reference_outputs[1]" in str(e) and "bundled_program=" in str(e), str(e))
    import warnings
    insp = etcompare.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec,
                               force=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = insp.calculate_numeric_gap()
    C.check("python tc1 alone, force=True: a warning and the gap anyway",
            any("reference_outputs[1]" in str(x.message) for x in w) and len(df) > 0,
            [str(x.message) for x in w])
    insp = etcompare.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec,
                               bundled_program=os.path.join(R, "cnn.bpte"))
    df = insp.calculate_numeric_gap()
    gaps = [float(x) for g in df["gap"] for x in (g if isinstance(g, (list, tuple)) else [g])]
    C.check("python tc1 alone with bundled_program=: the gap is small everywhere",
            gaps and max(gaps) < 1e-6, gaps)


EX = ["--etdump", os.path.join(C.SRC, "examples", "example.etdp"), "--debug_buffer",
      os.path.join(C.SRC, "examples", "example_debug.bin"), "--etrecord",
      os.path.join(C.SRC, "examples", "example.etrecord")]


def junit_root(path):
    with open(path) as f:
        m = re.search(r"<testsuites [^>]*>", f.read())
    return m.group(0) if m else ""


def case_plot_file(tmp):
    plotfile = os.path.join(tmp, "plotfile")
    with open(plotfile, "w") as f:
        f.write("mine\n")
    junit, js = os.path.join(tmp, "pf.xml"), os.path.join(tmp, "pf.json")
    rc, out, err = C.run(*EX, "--min-snr", "30", "--no-table", "--plot", plotfile,
                         "--junit", junit, "--json", js)
    C.check("--plot FILE: exit 4 before any work (no gate verdict printed)",
            rc == 4 and "gate FAILED" not in err and "accuracy" not in err and
            "not a directory" in err, f"rc={rc}\n{err[-1500:]}")
    C.check("--plot FILE: the JUnit holds the error", 'errors="1"' in junit_root(junit),
            junit_root(junit))
    with open(plotfile) as f:
        C.check("--plot FILE: the file is untouched", f.read() == "mine\n")
    rc, out, err = C.run(*EX, "--min-snr", "30", "--no-table", "--plot",
                         os.path.join(plotfile, "sub"))
    C.check("--plot FILE/sub: exit 4 naming the file in the path",
            rc == 4 and "a part of its path is a file" in err, f"rc={rc}\n{err[-800:]}")



def case_late_plot_error(tmp):
    """A plot that fails after the gates ran (a folder in the way of a PNG,
    found only when the plots are moved in): the gates' verdict stays."""
    for thr, want_rc, want_fail in (("30", 1, True), ("10", 4, False)):
        d = os.path.join(tmp, "late" + thr)
        os.makedirs(os.path.join(d, "metric_snr.png"))
        junit = os.path.join(tmp, f"late{thr}.xml")
        rc, out, err = C.run(*EX, "--min-snr", thr, "--no-table", "--plot", d, "--junit", junit)
        root = junit_root(junit)
        with open(junit) as f:
            xml = f.read()
        C.check(f"late plot error, --min-snr {thr}: exit {want_rc}",
                rc == want_rc and "metric_snr.png" in err, f"rc={rc}\n{err[-800:]}")
        C.check(f"late plot error, --min-snr {thr}: the JUnit keeps the gates and adds the "
                f"error", 'errors="1"' in root and ('failures="0"' not in root) == want_fail and
                "etcompare accuracy" in xml and "metric_snr.png" in xml, root)


def case_ungated_report(tmp):
    rep, js = os.path.join(tmp, "cmp.html"), os.path.join(tmp, "cmp.json")
    rc, out, err = C.run(*EX, "--compare", "--report", rep, "--json", js)
    C.check("--compare alone: exit 0", rc == 0, f"rc={rc}\n{err[-1500:]}")
    with open(rep, encoding="utf-8") as f:
        html = f.read()
    v = re.search(r'<div class="verdict ([a-z]+)" id="verdict">([^<]*)', html)
    C.check("--compare alone: the report's verdict is neutral, NO GATE",
            v and v.group(1) == "none" and v.group(2).startswith("NO GATE:") and
            "no gate" in v.group(2), v.groups() if v else html[:400])
    C.check("--compare alone: the numeric gap section says nothing was gated",
            "No divergence." not in html and "No threshold given: nothing gated" in html)
    rows = re.findall(r'<td class="st">([^<]*)</td></tr>', html)
    C.check("--compare alone: no table row of the report says pass",
            rows and not any(r.startswith("pass") for r in rows) and
            sum(r.startswith("no gate") for r in rows) >= 13, rows)
    table = [ln for ln in out.splitlines()
             if "native_layer_norm" in ln and "float32 vs float64" in ln]
    C.check("--compare alone: the terminal's numeric-gap row of the 18 dB layer_norm says "
            "no gate", table and "no gate" in table[0] and "pass" not in table[0], table)
    C.check("--compare alone: the stderr run lines say no threshold, not pass",
            "7 intermediate outputs compared, no threshold" in err and
            "intermediate outputs pass" not in err, err[-1500:])
    rc, out, err = C.run(*EX, "--min-snr", "10", "--report", rep)
    with open(rep, encoding="utf-8") as f:
        html = f.read()
    v = re.search(r'<div class="verdict ([a-z]+)" id="verdict">([^<]*)', html)
    C.check("--min-snr 10 (all pass): the verdict is a green OK and rows say pass",
            rc == 0 and v and v.group(1) == "pass" and v.group(2).startswith("OK:") and
            "7 intermediate outputs pass" in err, (rc, v.groups() if v else None))


def case_early_output_error(tmp):
    junit, rep = os.path.join(tmp, "nj.xml"), os.path.join(tmp, "r.html")
    rc, out, err = C.run(*EX, "--min-snr", "30", "--no-table", "--tsv",
                         os.path.join(tmp, "nodir", "r.tsv"), "--junit", junit, "--report", rep)
    C.check("output in a missing folder: exit 4", rc == 4, f"rc={rc}\n{err}")
    C.check("output in a missing folder: the JUnit is written with the error",
            os.path.exists(junit) and 'errors="1"' in junit_root(junit) and
            "nodir" in open(junit).read(), err)
    C.check("output in a missing folder: the report is written with the error",
            os.path.exists(rep) and "nodir" in open(rep, encoding="utf-8").read(), err)
    j2 = os.path.join(tmp, "nodir2", "j.xml")
    rc, out, err = C.run(*EX, "--min-snr", "30", "--no-table", "--junit", j2)
    C.check("the JUnit itself in a missing folder: exit 4, said once",
            rc == 4 and err.count("cannot create output file") == 1, err)
    j3 = os.path.join(tmp, "j3.xml")
    rc, out, err = C.run("--etdump", os.path.join(tmp, "missing.etdp"), "--debug_buffer",
                         EX[3], "--etrecord", EX[5], "--min-snr", "30", "--junit", j3)
    C.check("a missing ETDump: exit 3 and the JUnit holds the error",
            rc == 3 and os.path.exists(j3) and "missing.etdp" in open(j3).read(), err)


def case_example_junit(tmp):
    junit = os.path.join(tmp, "ex.xml")
    rc, out, err = C.run("--example", "--no-table", "--junit", junit)
    rc0, _, _ = C.run("--example", "--no-table")
    rc2, help_text, _ = C.run("--help")
    C.check("--example --junit exits 1 as its JUnit's failures say; without --junit 0",
            rc == 1 and "failures=\"0\"" not in junit_root(junit) and rc0 == 0, (rc, rc0))
    C.check("--help says --example exits 1 with --junit", "1 with --junit" in help_text,
            help_text[:2000])


def qcnn_quantize_output(tmp):
    """(debug buffer bytes, offset, count) of run 0's int8 output of the
    quantize node of debug handle 21 (instruction 7) in the real qcnn run."""
    doc = decode(tmp, os.path.join(R, "qcnn.etdp"))
    ev = [e["debug_event"] for e in doc["run_data"][1]["events"]
          if e.get("debug_event") and e["debug_event"]["instruction_id"] == 7]
    t = ev[0]["debug_entry"]["tensor"]
    n = 1
    for k in t["sizes"]:
        n *= k
    with open(os.path.join(R, "qcnn_debug.bin"), "rb") as f:
        return bytearray(f.read()), t["offset"], n, t["scalar_type"]


def case_quantized(tmp):
    import numpy as np
    d = os.path.join(tmp, "q")
    os.makedirs(d)
    buf, off, n, st = qcnn_quantize_output(d)
    C.check("qcnn: instruction 7 logs an int8 tensor", st == "CHAR" and n == 2048, (st, n))
    zp = -128  # the node's: quantize_per_tensor(scale=0.00879..., zero_point=-128)
    orig = np.frombuffer(bytes(buf[off:off + n]), dtype=np.int8).astype(np.float64)
    args = ["--etdump", os.path.join(R, "qcnn.etdp"), "--etrecord",
            os.path.join(R, "qcnn.etrecord"), "--no-table", "--run", "0"]

    def run_with(codes, *more):
        b = bytearray(buf)
        b[off:off + n] = codes.astype(np.int8).tobytes()
        path = os.path.join(d, "pert.bin")
        with open(path, "wb") as f:
            f.write(b)
        return C.run(*args, "--debug_buffer", path, *more)

    def row7(out):
        rows = [ln for ln in out.splitlines() if ln.startswith("│  7 │")]
        return [c.strip() for c in rows[0].split("│")] if rows else []

    # one code flipped by one: a rounding boundary, not a broken kernel
    flip = orig.copy()
    flip[1399] += 1
    rc, out, err = run_with(flip, "--min-snr", "30")
    want = 10 * np.log10(np.sum((orig - zp) ** 2) / 1.0)
    r = row7(out)
    C.check("one int8 code flipped: --min-snr 30 passes (exit 0), no exact-comparison failure",
            rc == 0 and "exact comparison" not in out + err, f"rc={rc}\n{err[-1200:]}")
    C.check("one int8 code flipped: the row's SNR is numpy's in real units",
            r and abs(float(r[8]) - want) < 1e-3 and "deq. etrecord" in r[-2], (r, want))
    # +5 codes on 20 values: the SNR of real values, not of codes
    plus = orig.copy()
    plus[:20] += 5
    rc, out, err = run_with(plus)
    r = row7(out)
    real = 10 * np.log10(np.sum((orig - zp) ** 2) / np.sum((plus - orig) ** 2))
    codes = 10 * np.log10(np.sum(orig ** 2) / np.sum((plus - orig) ** 2))
    C.check("+5 codes on 20 values: SNR of the dequantized values (numpy), not of the codes",
            r and abs(float(r[8]) - real) < 1e-3 and abs(real - codes) > 5, (r, real, codes))
    # --quant-params mistakes are said
    qp = os.path.join(d, "qp.json")
    with open(qp, "w") as f:
        f.write('{"21": {"scale": 0.004309975542128086, "zero_point": -128}}')
    rc, out, err = run_with(orig, "--quant-params", qp)
    C.check("--quant-params contradicting the ETRecord's quantize node: a warning naming both",
            "--quant-params says scale 0.00430997554" in err and "0.008793961" in err, err[-1500:])
    with open(qp, "w") as f:
        f.write('{"21": {"scale": 0.008793961256742477, "zero_point": 200}}')
    rc, out, err = run_with(orig, "--quant-params", qp)
    C.check("--quant-params zero point 200 for an int8 tensor: a warning",
            "zero point 200 is outside int8's range" in err, err[-1500:])
    with open(qp, "w") as f:
        f.write('{"19": {"scale": 0.1, "zero_point": 0}}')
    rc, out, err = run_with(orig, "--quant-params", qp)
    C.check("--quant-params entry for a float output: said not used",
            "names no compared integer output's debug handles (\"19\")" in err, err[-1500:])


def case_quantized_local_input(tmp):
    """A fused relu+quantize kernel logs int8 codes under the relu's handle:
    the next op's local re-run reads their real values (it was fed the codes
    as floats: local SNR 9.6 dB for an exact op, ranked first)."""
    d = os.path.join(tmp, "qlocal")
    os.makedirs(d)
    doc = decode(d, os.path.join(R, "qcnn.etdp"))
    evs = [e["debug_event"] for e in doc["run_data"][1]["events"] if e.get("debug_event")]
    relu = [e for e in evs if e["instruction_id"] == 6][0]["debug_entry"]["tensor"]
    quant = [e for e in evs if e["instruction_id"] == 7][0]["debug_entry"]["tensor"]
    with open(os.path.join(R, "qcnn_debug.bin"), "rb") as f:
        buf = bytearray(f.read())
    buf[relu["offset"]:relu["offset"] + 2048] = buf[quant["offset"]:quant["offset"] + 2048]
    relu["scalar_type"] = "CHAR"
    etdp = C.flatc_build(d, "fused", doc)
    dbg = os.path.join(d, "fused_debug.bin")
    with open(dbg, "wb") as f:
        f.write(buf)
    rc, out, err = C.run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                         os.path.join(R, "qcnn.etrecord"), "--no-table", "--run", "0", "--force")
    rows = {ln.split("│")[1].strip(): [c.strip() for c in ln.split("│")]
            for ln in out.splitlines() if ln.startswith("│ ") and "│" in ln[2:]}
    r7 = rows.get("7", [])
    C.check("int8 codes logged under the relu: the quantize's local SNR is +inf (its kernel "
            "is exact on the relu's real values)", r7 and r7[9] == "+inf", (r7, err[-800:]))
    first = [ln for ln in out.splitlines() if ln.startswith("  1. ")]
    C.check("int8 codes logged under the relu: the quantize is not ranked first",
            first and "row 7 " not in first[0], first)


def profile_event(name, start, end, instr):
    """A framework profile event of chain 0 (an ETDump JSON event)."""
    return {"profile_event": {"name": name, "chain_index": 0, "instruction_id": instr,
                              "delegate_debug_id_int": -1, "start_time": start,
                              "end_time": end}}


def case_repeated_event(tmp):
    """An instruction that runs three times in one run (a loop): the tables
    keep its latest call, as upstream's Inspector; now said on stderr."""
    runs = []
    for r in range(2):
        t = r * 10 ** 6
        x, ev = t + 100, []
        for _ in range(3):
            ev += [profile_event("native_call_a.out", x, x + 1000, 0), profile_event("OPERATOR_CALL", x - 10, x + 1010, 0)]
            x += 1100
        ev.append(profile_event("Method::execute", t, x + 100, 0))
        runs.append({"name": "Execute", "events": ev})
    etdp = C.flatc_build(tmp, "loop", {"version": 0, "run_data": runs})
    rc, out, err = C.run("--etdump", etdp, "--tables", "tax", "--target_time_scale", "ns")
    C.check("a repeated event: exit 0 and a warning naming it and --trace",
            rc == 0 and 'event "native_call_a.out" (instruction 0) occurred more than once' in err
            and "--trace shows every call" in err, f"rc={rc}\n{err}")
    C.check("a repeated event: said once per ETDump", err.count("occurred more than once") == 1,
            err)


def case_operator_call_only(tmp):
    """An instruction that logs only OPERATOR_CALL (a prim op, a kernel
    registered without codegen) beside one with native_call_*: its time is
    operator time, not framework tax, and it is in the ops table."""
    runs = []
    for r in range(2):
        t = r * 10 ** 6
        ev = [profile_event("native_call_a.out", t + 100, t + 1100, 0),
              profile_event("OPERATOR_CALL", t + 95, t + 1105, 0),
              profile_event("OPERATOR_CALL", t + 1150, t + 6150, 1),
              profile_event("Method::execute", t, t + 6200, 0)]
        runs.append({"name": "Execute", "events": ev})
    etdp = C.flatc_build(tmp, "prim", {"version": 0, "run_data": runs})
    js = os.path.join(tmp, "prim.json")
    rc, out, err = C.run("--etdump", etdp, "--tables", "tax,ops", "--target_time_scale", "ns",
                         "--json", js)
    doc = C.load_json(js)
    tax = [ln for ln in out.splitlines() if ln.startswith("│ Execute │    0 │")]
    cells = [c.strip() for c in tax[0].split("│")] if tax else []
    # by hand: operators 1000 (native_call of instruction 0) + 5000 (instruction 1's
    # OPERATOR_CALL) = 6000 of Method::execute's 6200: a tax of 200 ns
    C.check("OPERATOR_CALL-only instruction: operators 6000 ns, framework tax 200 ns",
            cells[3:7] == ["6200", "6000", "0", "200"], (cells, out[-1500:]))
    C.check("OPERATOR_CALL-only instruction: in the ops table (5000 ns each run)",
            any(ln.startswith("│ OPERATOR_CALL") and "10000" in ln for ln in out.splitlines()),
            out[-1500:])
    runs = ((doc.get("profile") or {}).get("tax") or [{}])[0].get("runs", [])
    C.check("OPERATOR_CALL-only instruction: the JSON agrees (operators 6000, tax 200 ns)",
            [(x["operators"], round(x["tax"], 6)) for x in runs] == [(6000, 200), (6000, 200)],
            runs)


def case_module_cycles(tmp):
    """A module whose events are backend cycles: no "% of Method::execute"
    (it divided cycles by microseconds: 5555 %)."""
    import zipfile
    rec = os.path.join(tmp, "deleg.etrecord")
    with zipfile.ZipFile(os.path.join(R, "cnn.etrecord")) as zi, \
            zipfile.ZipFile(rec, "w", zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            data = zi.read(info.filename)
            if info.filename == "delegate_map":
                data = json.dumps({"forward": {"0": {"name": "XnnpackBackend", "delegate_map":
                                                     {"0": [18], "1": [19]}}}}).encode()
            zo.writestr(info.filename, data)

    def pe(name, start, end, instr, did=-1):
        d = {"chain_index": 0, "instruction_id": instr, "delegate_debug_id_int": did,
             "start_time": start, "end_time": end}
        if name:
            d["name"] = name
        if did != -1:
            d["delegate_debug_metadata"] = []
        return {"profile_event": d}
    runs = []
    for r in range(3):
        t = r * 10 ** 6
        runs.append({"name": "Execute", "events": [
            pe(None, t + 100, t + 100 + 2000 * (r + 1), 0, did=0),
            pe(None, t + 3000, t + 3500, 0, did=1),
            pe("DELEGATE_CALL", t + 50, t + 8000, 0),
            pe("native_call_relu.out", t + 8100, t + 8300, 2),
            profile_event("OPERATOR_CALL", t + 8050, t + 8350, 2),
            pe("Method::execute", t, t + 9000, 0)]})
    etdp = C.flatc_build(tmp, "deleg", {"version": 0, "run_data": runs})
    js = os.path.join(tmp, "deleg.json")
    rc, out, err = C.run("--etdump", etdp, "--etrecord", rec, "--tables", "modules",
                         "--target_time_scale", "us", "--delegate-time-scale", "cycles",
                         "--json", js)
    rows = [ln for ln in out.splitlines() if ln.startswith("│   bn1")]
    C.check("a module of backend cycles: its % of Method::execute is '-', not 5555",
            rc == 0 and rows and rows[0].rstrip("│ ").endswith("-") and "5555" not in out,
            f"rc={rc}\n{out[-1200:]}\n{err[-600:]}")
    mods = ((C.load_json(js).get("profile") or {}).get("modules") or [])
    bn1 = [m for m in mods if m.get("path") == "bn1"]
    C.check("a module of backend cycles: its JSON share is NaN (the JSON says \"nan\")",
            bn1 and bn1[0].get("share") in (None, "nan") and bn1[0].get("total") == 500, bn1 or mods)
    rc, out, err = C.run("--etdump", etdp, "--etrecord", rec, "--no-table", "--module", "bn1",
                         "--target_time_scale", "us", "--delegate-time-scale", "cycles")
    C.check("--module over backend cycles: the sum (upstream's) and a note that it mixes units",
            rc == 0 and 'find_total_for_module("bn1") = 500.0 us' in out and
            "this sum may mix units" in err, f"rc={rc}\n{out}\n{err}")
    rc, out, err = C.run("--etdump", etdp, "--etrecord", rec, "--no-table", "--module", "bn1",
                         "--target_time_scale", "us")
    C.check("--module without cycles: 0.5 us and no note",
            'find_total_for_module("bn1") = 0.5 us' in out and "mix units" not in err,
            f"{out}\n{err}")


if __name__ == "__main__":
    C.run_cases("trust6", case_unknown_inputs, case_unknown_inputs_python, case_plot_file,
                case_late_plot_error, case_ungated_report, case_early_output_error, case_example_junit,
                case_quantized, case_quantized_local_input,
                case_repeated_event, case_operator_call_only,
                case_module_cycles)
