"""Second hostile-user pass, the CLI's part: a report that cannot be
written names its file (a device such as /dev/full too); a performance diff
tells blocks of one name apart ("Execute#2", as --block takes it, and
block_index in the JSON, which the report schema accepts); a change beyond
the gate never prints as the gate's own value; a threshold of -0 reads 0;
--inputs of another test case is named as the likely cause when the first
op that differs reads a logged weight move equal to the reference's (mlp:
permute_copy, then addmm), not only when it reads no logged output; a
reference run of other inputs (paired by order) gets the same warning,
naming the run; an ETC_THREADS the library cannot read is named, not
silently replaced by every core; a .bpte of another model is refused
(exit 3) before any verdict, naming both files and the first kernel call
its program does not make (--force warns), and every real run with its own
.bpte passes the check."""
import json
import os
import subprocess
import sys

import jsonschema

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

EX = os.path.join(C.SRC, "examples")
ETDP = os.path.join(EX, "example.etdp")
REAL = os.path.join(C.DATA, "realexport")
MLP = ["--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer",
       os.path.join(REAL, "mlp_debug.bin"), "--etrecord", os.path.join(REAL, "mlp.etrecord")]


def case_device_full(d):
    if not os.path.exists("/dev/full"):
        C.check("/dev/full exists (skipped otherwise)", True)
        return
    rc, out, err = C.run("--etdump", ETDP, "--tsv", "/dev/full", "--no-table")
    C.check("--tsv /dev/full: exit 4 naming the file and the cause",
            rc == 4 and "/dev/full: cannot write: No space left on device" in err,
            f"rc={rc} {err}")
    with open("/dev/full", "w") as full:
        p = subprocess.run([C.ETC, "--etdump", ETDP, "--tsv", "-", "--no-table"], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    C.check("--tsv - onto a full device: exit 4 naming standard output",
            p.returncode == 4 and "<stdout>: cannot write: No space left on device" in p.stderr,
            f"rc={p.returncode} {p.stderr}")


def case_perfdiff_blocks(d):
    js = os.path.join(d, "pd.json")
    rc, out, err = C.run("--etdump", ETDP, "--baseline-etdump", ETDP, "--no-table", "--json", js)
    C.check("perf diff of the example against itself: exit 0", rc == 0, f"rc={rc} {err}")
    execute_lines = [ln for ln in out.splitlines() if ln.startswith("Method::execute")]
    C.check("the two Execute blocks' Method::execute lines say which block",
            len(execute_lines) == 2 and "block Execute#1)" in execute_lines[0] and
            "block Execute#2)" in execute_lines[1], "\n".join(execute_lines))
    C.check("table rows carry Execute#1 and Execute#2; Default (one block) stays bare",
            "│ Execute#1 " in out and "│ Execute#2 " in out and "│ Default " in out and
            "│ Default#" not in out, out[:2000])
    rep = C.load_json(js)
    rows = rep.get("perf_diff", {}).get("rows", [])
    C.check("JSON rows: block_index tells the blocks apart",
            sorted({(r["block"], r["block_index"]) for r in rows}) ==
            [("Default", 0), ("Execute", 1), ("Execute", 2)], str(rows[:3]))
    with open(C.REPORT_SCHEMA) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(rep, schema)
        ok = True
    except jsonschema.ValidationError as e:
        ok, why = False, str(e)[:400]
    C.check("the report with block_index validates against the schema", ok,
            "" if ok else why)
    page = os.path.join(d, "pd.html")
    rc, out, err = C.run("--etdump", ETDP, "--baseline-etdump",
                         os.path.join(EX, "example_baseline.etdp"), "--max-regression", "10",
                         "--no-table", "--report", page)
    html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    C.check("the HTML banner names the worst regression's block (Execute#2), its table rows "
            "the blocks",
            rc == 1 and "(worst: Execute#2 native_call_native_layer_norm.out +82.72 %)" in html
            and "<td>Execute#1</td>" in html and "<td>Execute#2</td>" in html, html[:400])
    C.check("stderr: the gate's worst names Execute#2",
            "worst: Execute#2 native_call_native_layer_norm.out +82.72%" in err, err)


def case_pct_beyond_gate(d):
    # cnn_mixed against cnn: max_pool2d regresses +1.2134...%
    args = ["--etdump", os.path.join(REAL, "cnn_mixed.etdp"), "--baseline-etdump",
            os.path.join(REAL, "cnn.etdp"), "--no-table"]
    js = os.path.join(d, "pct.json")
    rc, out, err = C.run(*args, "--json", js)
    rows = C.load_json(js).get("perf_diff", {}).get("rows", [])
    pool = [r for r in rows if "max_pool2d" in r["event_name"] and r["instruction_id"] == 3]
    C.check("the max_pool2d row's change is 1.21-1.215% (the case's premise)",
            len(pool) == 1 and 1.21 < pool[0]["change_percent"] < 1.215, str(pool))
    rc, out, err = C.run(*args, "--max-regression", "1.21")
    line = [ln for ln in out.splitlines() if "max_pool2d" in ln and "│     3 │" in ln]
    C.check("gate 1.21: the failing row prints +1.213, not the gate's +1.21",
            rc == 1 and len(line) == 1 and "+1.213 " in line[0] and "FAIL" in line[0],
            f"rc={rc} {line}")
    rc, out, err = C.run(*args, "--max-regression", "42.37")
    C.check("gate 42.37: the worst (+42.376) prints +42.38 with 2 decimals",
            rc == 1 and "+42.38%" in err, err)


def case_negative_zero(d):
    rc, out, err = C.run(*MLP, "--max-abs", "-0", "--no-table")
    C.check("--max-abs -0: the verdicts say 'above 0', never '-0'",
            rc == 1 and "above 0 at" in out and "above -0" not in out + err,
            f"rc={rc} {out[-600:]}")


def case_other_inputs_after_logged_permute(d):
    import numpy as np
    io = np.load(os.path.join(REAL, "mlp_io.npz"))
    for tc, warn in ((1, True), (0, False)):
        f = os.path.join(d, f"mlp_in{tc}.npz")
        np.savez(f, **{"0": io[f"input{tc}"].astype(np.float32)})
        rc, out, err = C.run(*MLP, "--inputs", f, "--no-table")
        said = ("row 1 aten_addmm_default (aten.addmm.default), already disagrees with the "
                "runtime" in err and "not this run's" in err and "--inputs FILE" in err)
        C.check(f"mlp, --inputs of test case {tc}: "
                f"{'the warning names addmm and the likely cause' if warn else 'no warning'}",
                rc == 0 and said == warn and ("the first op that reads only" in err) == warn,
                f"rc={rc} {err[-700:]}")


def case_reference_run_of_other_inputs(d):
    cnn = ["--etdump", os.path.join(REAL, "cnn.etdp"), "--debug_buffer",
           os.path.join(REAL, "cnn_debug.bin"), "--etrecord", os.path.join(REAL, "cnn.etrecord")]
    rc, out, err = C.run(*cnn, "--reference-etdump", os.path.join(REAL, "cnn_mixed.etdp"),
                         "--reference-debug-buffer", os.path.join(REAL, "cnn_mixed_debug.bin"),
                         "--min-snr", "30", "--no-table")
    warns = [ln for ln in err.splitlines() if "the reference ran other inputs" in ln]
    C.check("cnn against cnn_mixed (run 1 of other inputs): one warning, naming run 1, the "
            "first op and the likely cause",
            rc == 1 and len(warns) == 1 and
            warns[0].startswith("etcompare: warning: Execute run 1 (ETDump run 2): the first "
                                "compared op, row 0 aten_convolution_default") and
            "already disagrees with the reference run" in warns[0], f"rc={rc} {warns}")
    rc, out, err = C.run(*cnn, "--reference-etdump", os.path.join(REAL, "cnn.etdp"),
                         "--reference-debug-buffer", os.path.join(REAL, "cnn_debug.bin"),
                         "--min-snr", "30", "--no-table")
    C.check("cnn against itself: no such warning",
            rc == 0 and "ran other inputs" not in err, f"rc={rc} {err[-400:]}")


def case_threads_env(d):
    n = min(os.sysconf("SC_NPROCESSORS_ONLN"), 8)
    used = f"using {n} thread{'' if n == 1 else 's'} (the online processors, at most 8)"
    for v, warn in (("0", True), ("abc", True), ("1000", True), ("65", True), ("-1", True),
                    ("2x", True), ("2", False), ("64", False), ("", False)):
        p = subprocess.run([C.ETC, "--etdump", ETDP, "--no-table", "--tsv", os.devnull],
                           capture_output=True, text=True, env=dict(os.environ, ETC_THREADS=v))
        said = (f"warning: ETC_THREADS={v} is not a number from 1 to 64: {used}" in p.stderr)
        C.check(f"ETC_THREADS={v!r}: {'a warning says it is not used' if warn else 'no warning'}",
                p.returncode == 0 and said == warn and ("ETC_THREADS" in p.stderr) == warn,
                p.stderr)


def case_bundled_program_of_another_model(d):
    def files(m, rec=None):
        return ["--etdump", os.path.join(REAL, m + ".etdp"), "--debug_buffer",
                os.path.join(REAL, m + "_debug.bin")] + (
                    ["--etrecord", os.path.join(REAL, rec + ".etrecord")] if rec else [])
    for run, bpte in (("qcnn", "cnn"), ("cnn", "qcnn"), ("mlp", "tiny_transformer"),
                      ("tiny_transformer", "mlp")):
        rc, out, err = C.run(*files(run), "--bundled-program",
                             os.path.join(REAL, bpte + ".bpte"), "--min-snr", "30", "--no-table")
        C.check(f"{run}'s run with {bpte}.bpte: exit 3 naming both files and the first kernel "
                "call its program does not make, no verdict",
                rc == 3 and f"ETDump {os.path.join(REAL, run + '.etdp')} and BundledProgram "
                f"{os.path.join(REAL, bpte + '.bpte')} do not belong together" in err and
                "kernel calls are not its program's (first: instruction" in err and
                "--bundled-program" in err and "gate FAILED" not in err and out == "",
                f"rc={rc} {err[-500:]}")
    rc, out, err = C.run(*files("qcnn"), "--bundled-program", os.path.join(REAL, "cnn.bpte"),
                         "--no-table", "--force")
    C.check("--force: a warning, the comparison goes on",
            rc == 0 and "warning:" in err and "do not belong together" in err and
            "(--force: compared anyway)" in err, f"rc={rc} {err[-300:]}")
    for run, bpte in (("cnn", "cnn"), ("cnn_mixed", "cnn"), ("cnn_example_runner", "cnn"),
                      ("mlp", "mlp"), ("qcnn", "qcnn"), ("tiny_transformer", "tiny_transformer")):
        rc, out, err = C.run(*files(run, bpte), "--bundled-program",
                             os.path.join(REAL, bpte + ".bpte"), "--min-snr", "30", "--no-table")
        C.check(f"{run}'s run with its own {bpte}.bpte: exit 0, no mismatch",
                rc == 0 and "belong together" not in err, f"rc={rc} {err[-300:]}")


if __name__ == "__main__":
    C.run_cases("trust-cli2", case_device_full, case_perfdiff_blocks, case_pct_beyond_gate,
                case_negative_zero, case_other_inputs_after_logged_permute,
                case_reference_run_of_other_inputs, case_threads_env,
                case_bundled_program_of_another_model)
