"""Inputs that belong together and the CI contract (issue 22): an ETRecord
of another model, a debug buffer of another run or reference outputs of
another program are refused (exit 3) in every mode before any verdict, with
both files and the evidence named, --force warns; every real export is
accepted; exit 3/4 still write the JUnit and HTML reports; data on
stdout stays clean; --compare without a threshold passes nothing."""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

EX = os.path.join(C.SRC, "examples")
ETDP = os.path.join(EX, "example.etdp")
DBG = os.path.join(EX, "example_debug.bin")
REC = os.path.join(EX, "example.etrecord")
OTHER_REC = os.path.join(C.DATA, "pickle_refs", "refs_p4.etrecord")
OTHER_BUF = os.path.join(C.DATA, "runs5_ops12.bin")
REAL = os.path.join(C.DATA, "realexport")
# (ETDump, debug buffer, ETRecord) of every real export
REAL_SETS = [("cnn", "cnn", "cnn"), ("cnn_mixed", "cnn_mixed", "cnn"),
             ("cnn_example_runner", "cnn_example_runner", "cnn"), ("mlp", "mlp", "mlp"),
             ("qcnn", "qcnn", "qcnn"), ("tiny_transformer", "tiny_transformer",
                                        "tiny_transformer")]


def real(dump, buf, rec):
    return [os.path.join(REAL, dump + ".etdp"), os.path.join(REAL, buf + "_debug.bin"),
            os.path.join(REAL, rec + ".etrecord")]


def no_verdict(err):
    return "gate FAILED" not in err and "outputs pass" not in err


def case_wrong_etrecord(d):
    for mode, extra in [("accuracy", ["--min-snr", "30"]), ("profile", []),
                        ("numgap", ["--reference-etdump", ETDP, "--reference-debug-buffer",
                                    DBG, "--min-snr", "30"])]:
        rc, out, err = C.run("--etdump", ETDP, "--debug_buffer", DBG, "--etrecord", OTHER_REC,
                             *extra)
        C.check(f"wrong ETRecord ({mode}): exit 3", rc == 3, f"rc={rc} {err}")
        C.check(f"wrong ETRecord ({mode}): one message naming both files and the fix",
                "do not belong together" in err and "example.etdp" in err and
                "refs_p4.etrecord" in err and "--force" in err, err)
        C.check(f"wrong ETRecord ({mode}): evidence (instructions without entry)",
                re.search(r"\d+ of the \d+ kernel calls have no debug_handle_map entry", err)
                or re.search(r"instruction \d+ `native_call_\w+\.out` is `[\w.]+`", err), err)
        C.check(f"wrong ETRecord ({mode}): no verdict, no table before it",
                no_verdict(err) and out == "", out + err)
    rc, out, err = C.run("--etdump", ETDP, "--debug_buffer", DBG, "--etrecord", OTHER_REC,
                         "--no-table", "--force")
    C.check("wrong ETRecord --force: a warning, the run goes on", rc == 0 and
            "warning:" in err and "--force: compared anyway" in err, f"rc={rc} {err}")
    # a real record of another real model: the event names disagree with the op types
    dump, buf, _ = real("mlp", "mlp", "mlp")
    rc, _, err = C.run("--etdump", dump, "--debug_buffer", buf, "--etrecord",
                       os.path.join(REAL, "cnn.etrecord"), "--compare", "--no-table")
    C.check("real mlp ETDump with the cnn ETRecord: exit 3, op named",
            rc == 3 and re.search(r"instruction 0 `native_call_permute_copy.out` is "
                                  r"`aten.convolution.default` in this record", err),
            f"rc={rc} {err}")


def case_wrong_buffer(d):
    rc, out, err = C.run("--etdump", ETDP, "--debug_buffer", OTHER_BUF, "--etrecord", REC,
                         "--min-snr", "30")
    size = os.path.getsize(OTHER_BUF)
    C.check("wrong debug buffer: exit 3", rc == 3, f"rc={rc} {err}")
    C.check("wrong debug buffer: both files, bytes referenced of the size, the fix",
            "example.etdp" in err and "runs5_ops12.bin" in err and
            f"of {size:,} bytes" in err and "--debug_buffer" in err, err)
    C.check("wrong debug buffer: no verdict before it", no_verdict(err) and out == "", err)
    # a real buffer of another real model, same ranges inside it: its data between them
    dump, _, rec = real("cnn", "cnn", "cnn")
    rc, _, err = C.run("--etdump", dump, "--debug_buffer", os.path.join(REAL, "mlp_debug.bin"),
                       "--etrecord", rec, "--compare", "--no-table")
    C.check("real cnn ETDump with the mlp buffer: exit 3 (non-zero data between tensors)",
            rc == 3 and "between its tensors" in err, f"rc={rc} {err}")
    # a zero tail is the runtime's padding: accepted
    tail = os.path.join(d, "padded.bin")
    with open(DBG, "rb") as f, open(tail, "wb") as g:
        g.write(f.read() + bytes(100000))
    rc, _, err = C.run("--etdump", ETDP, "--debug_buffer", tail, "--etrecord", REC,
                       "--min-snr", "30", "--no-table")
    C.check("buffer zero-padded after the last tensor: accepted", rc in (0, 1) and
            "belong" not in err, f"rc={rc} {err}")
    dirty = os.path.join(d, "dirty.bin")
    with open(DBG, "rb") as f, open(dirty, "wb") as g:
        g.write(f.read() + bytes(4096) + b"\x01" * 64)
    rc, _, err = C.run("--etdump", ETDP, "--debug_buffer", dirty, "--etrecord", REC,
                       "--min-snr", "30", "--no-table")
    C.check("non-zero bytes well after the last tensor: exit 3", rc == 3 and
            "64 non-zero bytes" in err, f"rc={rc} {err}")


def case_real_accepted(d):
    for dump, buf, rec in REAL_SETS:
        for extra in (["--compare"], ["--min-snr", "0"], []):
            rc, _, err = C.run("--etdump", *real(dump, buf, rec)[:1], "--debug_buffer",
                               real(dump, buf, rec)[1], "--etrecord", real(dump, buf, rec)[2],
                               "--no-table", *extra)
            C.check(f"real {dump} {' '.join(extra) or 'profile'}: accepted",
                    rc in (0, 1) and "belong together" not in err, f"rc={rc} {err}")


def case_error_artifacts(d):
    junit, report = os.path.join(d, "e.xml"), os.path.join(d, "e.html")
    rc, _, err = C.run("--etdump", ETDP, "--debug_buffer", OTHER_BUF, "--etrecord", REC,
                       "--min-snr", "30", "--junit", junit, "--report", report)
    C.check("exit 3 with --junit --report: exit 3", rc == 3, f"rc={rc} {err}")
    try:
        root = ET.parse(junit).getroot()
        errors = root.findall(".//testcase/error")
        C.check("exit 3: the JUnit file has one <error> testcase with the message",
                root.get("errors") == "1" and len(errors) == 1 and
                "do not belong together" in errors[0].get("message", ""), ET.tostring(root))
    except (OSError, ET.ParseError) as e:
        C.check("exit 3: the JUnit file is written and parses", False, repr(e))
    with open(junit, "rb") as f:
        C.check("the JUnit file ends with a newline", f.read().endswith(b"\n"))
    html = open(report, encoding="utf-8").read() if os.path.exists(report) else ""
    C.check("exit 3: the HTML report has the error and the inputs",
            "do not belong together" in html and "runs5_ops12.bin" in html and
            "example.etdp" in html, html[:200])
    # an unreadable input file is exit 3 too
    missing = os.path.join(d, "missing.etdp")
    rc, _, err = C.run("--etdump", missing, "--debug_buffer", DBG, "--junit", junit,
                       "--report", report)
    root = ET.parse(junit).getroot()
    C.check("missing ETDump: exit 3 and a JUnit <error>", rc == 3 and
            root.get("errors") == "1", f"rc={rc} {err}")


def case_stdout_data(d):
    for flag in ("--json", "--tsv", "--csv", "--junit"):
        p = subprocess.run(f"'{C.ETC}' --etdump '{ETDP}' --debug_buffer '{DBG}' --etrecord "
                           f"'{REC}' --min-snr 10 {flag} -", shell=True, capture_output=True,
                           text=True)
        out = p.stdout
        ok = False
        if flag == "--json":
            try:
                json.loads(out)
                ok = True
            except ValueError:
                pass
        elif flag == "--junit":
            try:
                ET.fromstring(out)
                ok = True
            except ET.ParseError:
                pass
        else:
            sep = "\t" if flag == "--tsv" else ","
            lines = out.splitlines()
            ok = bool(lines) and all(sep in ln for ln in lines) and "=====" not in out
        C.check(f"{flag} -: stdout holds only the data (tables on stderr)", ok, out[:300])
        C.check(f"{flag} -: the accuracy table went to stderr", "SNR" in p.stderr or
                "snr" in p.stderr.lower(), p.stderr[:300])
    p = subprocess.run(f"'{C.ETC}' --etdump '{ETDP}' --debug_buffer '{DBG}' --json - | "
                       f"{sys.executable} -m json.tool", shell=True, capture_output=True,
                       text=True)
    C.check("--json - | python3 -m json.tool works", p.returncode == 0, p.stderr[-300:])
    # the numeric gap's TSV too: written once stdout carries data again
    p = subprocess.run([C.ETC, "--etdump", ETDP, "--debug_buffer", DBG, "--etrecord", REC,
                        "--no-table", "--numgap-tsv", "-"], capture_output=True, text=True)
    rows = [ln.split("\t") for ln in p.stdout.splitlines()]
    C.check("--numgap-tsv -: stdout holds the gap's TSV, a header and one row per output",
            len(rows) > 2 and rows[0][:2] == ["aot_debug_handle", "aot_ops"] and
            all(len(r) == len(rows[0]) for r in rows) and "Numeric gap" in p.stderr,
            p.stdout[:300] + p.stderr[-300:])


def case_compare_no_gate(d):
    rc, out, err = C.run("--etdump", ETDP, "--debug_buffer", DBG, "--etrecord", REC,
                         "--compare")
    C.check("--compare without a threshold: exit 0", rc == 0, f"rc={rc}")
    acc = [ln for ln in out.splitlines() if ln.startswith("│ Execute#")]
    C.check("--compare without a threshold: rows say 'no gate', never 'pass'",
            len(acc) == 6 and all("no gate" in ln and not re.search(r"\bpass\b", ln)
                                  for ln in acc), out)
    line = [ln for ln in err.splitlines() if ln.startswith("etcompare: accuracy")]
    C.check("--compare without a threshold: the summary says no gate, not 'pass'",
            len(line) == 1 and "no gate" in line[0] and "pass" not in line[0] and
            "outputs pass" not in out, err)


def case_blocks(d):
    # the accuracy gate alone (the numeric gap of the reference run is off)
    base = ["--etdump", ETDP, "--debug_buffer", DBG, "--etrecord", REC, "--min-snr", "30",
            "--no-reference-run"]
    rc, out, err = C.run(*base)
    C.check("two Execute blocks: the table names them Execute#1 and Execute#2",
            "Execute#1" in out and "Execute#2" in out, out)
    C.check("two Execute blocks: an 'etdump run' column beside the block's run",
            "etdump run" in out, out)
    C.check("worst output named unambiguously (block#index, ETDump run)",
            re.search(r"worst: Execute#\d run \d ref \d output \d \(ETDump run \d\)", err),
            err)
    rc2, out2, err2 = C.run(*base, "--block", "Execute#2")
    C.check("--block Execute#2 accepted: only that block's 3 runs, which pass",
            rc2 == 0 and "Execute#1" not in out2 and out2.count("Execute#2 ") >= 3 and
            "3 of 3 outputs pass" in err2, f"rc={rc2} {out2} {err2}")
    rc3, _, err3 = C.run(*base, "--block", "Execute#1")
    C.check("--block Execute#1: its runs fail the gate (24.8 dB), exit 1",
            rc3 == 1 and "3 of 3 outputs fail" in err3, f"rc={rc3} {err3}")
    rc4, _, err4 = C.run(*base, "--block", "Execute#9")
    C.check("--block Execute#9 (no such block): exit 3", rc4 == 3, f"rc={rc4} {err4}")


def complete(*words):
    """What build/etcompare.bash offers after `etcompare WORDS...`."""
    comp = os.path.join(os.path.dirname(C.ETC), "etcompare.bash")
    script = (f"source '{comp}'; COMP_WORDS=(etcompare {' '.join(words)}); "
              f"COMP_CWORD={len(words)}; _etcompare; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    return sorted(p.stdout.split())


def case_small(d):
    C.check("completion: --distance offers mse, l1, snr",
            complete("--distance", "") == ["l1", "mse", "snr"], complete("--distance", ""))
    C.check("completion: --tables offers the table names",
            "memory" in complete("--tables", "") and "delegates" in complete("--tables", ""),
            complete("--tables", ""))
    C.check("completion: --metrics offers the metric names",
            "max_rel" in complete("--metrics", "") and "l1" in complete("--metrics", ""),
            complete("--metrics", ""))
    C.check("completion: the _ spellings (--min_snr, --debug_buffer)",
            "--min_snr" in complete("--min_") and "--reference_etdump" in complete("--ref"),
            complete("--min_"))
    rc, out, err = C.run()
    C.check("a bare etcompare: usage, exit 2", rc == 2 and "usage: etcompare" in err and
            out == "", f"rc={rc} {err}")
    rc, _, err = C.run("--etdump", ETDP, "--min-snr", "30", "--min_snr", "20")
    C.check("a repeated threshold is a usage error", rc == 2 and "given twice" in err, err)
    for again in (["--etdump", ETDP], ["--debug_buffer", DBG], ["--json", "a.json"],
                  ["--plot", "p1"]):
        rc, _, err = C.run("--etdump", ETDP, "--debug_buffer", DBG, "--json", "b.json",
                           "--plot", "p2", *again)
        C.check(f"a repeated {again[0]} is a usage error naming both values", rc == 2 and
                f"{again[0]} is given twice" in err and
                (again[0] == "--plot" or "then '" in err), f"rc={rc} {err}")
    rc, _, err = C.run("--etdump", os.path.join(REAL, "cnn.etdp"), "--debug_buffer",
                       os.path.join(REAL, "cnn_debug.bin"), "--etrecord",
                       os.path.join(REAL, "cnn.etrecord"), "--reference-graph",
                       "exported_program", "--no-table")
    C.check("--reference-graph naming a graph the record lacks: exit 3 (a name not in the "
            "inputs), the ones it has are listed",
            rc == 3 and 'no graph "exported_program" for method "forward"; it has: '
            "edge_dialect_exported_program" in err, f"rc={rc} {err[-300:]}")
    # messages that name the file and the fix
    d = C.work_dir("trust_messages")
    import numpy as np
    bad = os.path.join(d, "bad_in.npz")
    np.savez(bad, **{"0": np.zeros((4, 32), np.float32)})
    cnn = [os.path.join(REAL, f) for f in ("cnn.etdp", "cnn_debug.bin", "cnn.etrecord")]
    rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer", cnn[1], "--etrecord", cnn[2],
                       "--inputs", bad, "--no-table")
    C.check("--inputs of the wrong shape: the option and the file are named",
            rc == 3 and f"--inputs {bad}: input 0 (x): the graph expects shape" in err,
            f"rc={rc} {err[-300:]}")
    obj = os.path.join(d, "obj.json")
    open(obj, "w").write('{"a": 1}')
    rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer", cnn[1], "--etrecord", cnn[2],
                       "--tap-specs", obj, "--no-table")
    C.check("--tap-specs holding an object: what the file must hold, not 'invalid JSON'",
            rc != 0 and "must hold a JSON list of TapSpec objects" in err and
            "invalid JSON" not in err, f"rc={rc} {err[-300:]}")
    io = np.load(os.path.join(REAL, "cnn_io.npz"))
    for tc, warn in ((1, True), (0, False)):
        f = os.path.join(d, f"in_tc{tc}.npz")
        np.savez(f, **{"0": io[f"input{tc}"].astype(np.float32)})
        js = os.path.join(d, f"tc{tc}.json")
        page = os.path.join(d, f"tc{tc}.html")
        rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer", cnn[1], "--etrecord", cnn[2],
                           "--inputs", f, "--no-table", "--json", js, "--report", page)
        html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
        C.check(f"--inputs of test case {tc}: the HTML report "
                f"{'shows the warning' if warn else 'shows no warning'}",
                ('<p class="warn">warning: the first op that reads only' in html) == warn and html,
                html[:200])
        said = "already disagrees with the runtime" in err and "not this run's" in err
        rep = json.load(open(js)) if os.path.exists(js) else {}
        ws = rep.get("numeric_gap", {}).get("warnings", [])
        C.check(f"--inputs of test case {tc}: the JSON's numeric_gap "
                f"{'has the warning' if warn else 'has no warnings key'}",
                (len(ws) == 1 and "not this run's" in ws[0]) if warn
                else ("numeric_gap" in rep and "warnings" not in rep["numeric_gap"]), ws)
        try:
            import jsonschema
            with open(C.REPORT_SCHEMA) as fs:
                errs = list(jsonschema.Draft202012Validator(json.load(fs)).iter_errors(rep))
            C.check(f"--inputs of test case {tc}: the JSON validates against the schema",
                    not errs, [e.message[:200] for e in errs[:2]])
        except ImportError:
            C.check("jsonschema importable", False)
        C.check(f"--inputs of test case {tc} (the run used 0): "
                f"{'a warning that the inputs or weights are not the run' if warn else 'no warning'}",
                said == warn and rc == (1 if warn else 0), f"rc={rc} {err[-400:]}")
    q = [os.path.join(REAL, f) for f in ("qcnn.etdp", "qcnn_debug.bin", "qcnn.etrecord")]
    ref = ["--reference-etdump", q[0], "--reference-debug-buffer", q[1],
           "--reference-etrecord", q[2]]
    rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer", cnn[1], "--etrecord", cnn[2],
                       *ref, "--no-table")
    C.check("a reference run of another program whose handles align (qcnn for cnn): exit 3, "
            "not a divergence", rc == 3 and "are not of the same program: 7 of the 9 outputs"
            in err and "first divergence" not in err, f"rc={rc} {err[-400:]}")
    rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer", cnn[1], "--etrecord", cnn[2],
                       *ref, "--no-table", "--force")
    C.check("the same with --force: a warning, compared anyway",
            rc == 1 and "(--force: compared anyway)" in err, f"rc={rc} {err[-300:]}")
    rc, _, err = C.run("--etdump", cnn[0], "--baseline-etdump", os.path.join(REAL, "mlp.etdp"),
                       "--max-regression", "10", "--no-table")
    C.check("a baseline ETDump of another program: exit 3, not a regression", rc == 3 and
            "the baseline does not look like a run of the same program" in err and
            "FAILED" not in err, f"rc={rc} {err[-300:]}")
    rc, _, err = C.run("--etdump", cnn[0], "--baseline-etdump", cnn[0], "--max-regression",
                       "10", "--no-table")
    C.check("the same program's ETDump as the baseline: no such error", rc == 0 and
            "does not look like" not in err, f"rc={rc} {err[-300:]}")
    cut = os.path.join(d, "cut.etrecord")
    open(cut, "wb").write(open(cnn[2], "rb").read()[:48000])
    rc, _, err = C.run("--etdump", cnn[0], "--etrecord", cut, "--no-table")
    C.check("a truncated ETRecord: the message says it may be truncated",
            rc != 0 and "truncated" in err, f"rc={rc} {err[-300:]}")
    rc, _, err = C.run("--etdump", cnn[0], "--debug_buffer",
                       os.path.join(REAL, "cnn_example_runner_debug.bin"), "--no-table")
    C.check("a debug buffer of another run: the fix is named",
            rc != 0 and "give the debug buffer the runtime wrote with this ETDump" in err,
            f"rc={rc} {err[-300:]}")
    rc, _, err = C.run("--etdump", os.path.join(REAL, "cnn.etdp"), "--debug_buffer",
                       os.path.join(REAL, "cnn_debug.bin"), "--etrecord",
                       os.path.join(REAL, "cnn.etrecord"), "--block", "Default", "--min-snr",
                       "30", "--no-table")
    C.check("--block naming a block without outputs: exit 3 naming the blocks, no gate verdict",
            rc == 3 and 'block "Default" logged no program outputs' in err and
            "1 Execute" in err and "FAILED" not in err, f"rc={rc} {err[-300:]}")
    rc, _, err = C.run("--etdump", ETDP, "--plot", "-")
    C.check("--plot -: a usage error that says a folder is written", rc == 2 and
            "cannot write to standard output" in err, f"rc={rc} {err}")
    rc, _, err = C.run("--etdump", ETDP, "--debug_buffer", DBG, "--plot", ETDP)
    C.check("--plot naming an input: usage error before any work", rc == 2 and
            "input file" in err, f"rc={rc} {err}")


C.run_cases("trust", case_small, case_blocks, case_wrong_etrecord, case_wrong_buffer, case_real_accepted,
            case_error_artifacts, case_stdout_data, case_compare_no_gate)
