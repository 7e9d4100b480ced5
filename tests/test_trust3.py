"""Issue 22, the rest: blocks and runs addressable everywhere and the CI
contract for every option.

- the numeric gap compares every run of every block it is given (each
  run's own intermediate outputs, checked against numpy on a synthetic
  ETDump whose runs differ), one line per run, --json numeric_gap_runs,
  --run N to pick one (out of range: usage), the single-run output as
  before;
- --block takes a block's 0-based index (as Execute#2 names it) wherever
  it takes a name; an index out of range is a usage error and an unknown
  name exit 3, both listing the blocks;
- --graph and --module naming nothing exit 3, both with "did you mean";
- the man page (help2man) has its option headings and an EXIT STATUS
  section;
- the batch: Method::execute over every block, and the consistency checks
  turn an ETRecord or debug buffer of another run into that row's error."""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

import numpy as np  # noqa: E402

SRC = C.SRC
EX = os.path.join(SRC, "examples")
DUMP = os.path.join(EX, "example.etdp")
BUF = os.path.join(EX, "example_debug.bin")
REC = os.path.join(EX, "example.etrecord")
BASE = ["--etdump", DUMP, "--debug_buffer", BUF, "--etrecord", REC]
WORK = C.work_dir("trust3")


def run(*args):
    return C.run(*args)


def json_of(*args):
    out = os.path.join(WORK, "r.json")
    if os.path.exists(out):
        os.remove(out)
    rc, so, se = run(*args, "--json", out, "--no-table")
    return rc, (C.load_json(out) if os.path.exists(out) else {}), se


# --- 1. the numeric gap over every run ---------------------------------------------------

RUN_LINE = re.compile(r"numeric gap: (\S+) run (\d+) \(ETDump run (\d+)\): (.*)")

rc, so, se = run(*BASE, "--no-table", "--min-snr", "20")
lines = [RUN_LINE.search(ln).groups() for ln in se.splitlines() if RUN_LINE.search(ln)]
C.check("the example's gap compares its 6 runs (2 Execute blocks x 3)",
        "6 runs compared" in se and len(lines) == 6, se)
C.check("each run line names block, run and ETDump run (Execute#1: 1,3,5; Execute#2: 2,4,6)",
        [(b, int(r), int(e)) for b, r, e, _ in lines] ==
        [("Execute#1", 0, 1), ("Execute#1", 1, 3), ("Execute#1", 2, 5),
         ("Execute#2", 0, 2), ("Execute#2", 1, 4), ("Execute#2", 2, 6)], lines)
C.check("Execute#1's runs diverge at row 3 native_layer_norm, SNR 18.25 dB; Execute#2's pass",
        all("first divergence at row 3 native_layer_norm" in w and "SNR 18.25 dB" in w
            for b, _, _, w in lines if b == "Execute#1") and
        all(w == "7 intermediate outputs pass" for b, _, _, w in lines if b == "Execute#2"),
        lines)
C.check("a run that diverges gates the whole gap: exit 1", rc == 1, f"rc={rc}")

rc, rep, se = json_of(*BASE, "--min-snr", "20")
runs = rep.get("numeric_gap_runs") or []
C.check("--json numeric_gap_runs: one entry per run with block, run, etdump_run",
        [(r["block"], r["run"], r["etdump_run"]) for r in runs] ==
        [("Execute#1", 0, 1), ("Execute#1", 1, 3), ("Execute#1", 2, 5),
         ("Execute#2", 0, 2), ("Execute#2", 1, 4), ("Execute#2", 2, 6)], runs)
C.check("--json numeric_gap is the first run that diverges, and says which",
        (rep.get("numeric_gap") or {}).get("block") == "Execute#1" and
        rep["numeric_gap"].get("run") == 0 and rep["numeric_gap"].get("etdump_run") == 1,
        str(rep.get("numeric_gap", {}))[:300])
# each run's summary agrees with that run's own full gap (--block N --run K)
for r in runs:
    blk = r["block"].split("#")[1]
    _, one, _ = json_of(*BASE, "--min-snr", "20", "--block", blk, "--run", str(r["run"]))
    g = one.get("numeric_gap") or {}
    fd = g.get("first_divergence")
    same = (g.get("compared") == r["compared"] and g.get("failures") == r["failures"] and
            g.get("run") == r["run"] and g.get("etdump_run") == r["etdump_run"] and
            (fd is None) == (r["first_divergence"] is None))
    if fd is not None and same:
        row = g["rows"][fd]
        same = (r["first_divergence"]["row"] == fd and
                r["first_divergence"]["snr_db"] == row["metrics"]["snr"])
    C.check(f"{r['block']} run {r['run']}: its summary is its own gap's (--block {blk} "
            f"--run {r['run']})", same and "runs compared" not in _, f"{r} {str(g)[:300]}")

# the single-run output: the same table as the default's shown run, no per-run lines
t1, t6 = os.path.join(WORK, "one.tsv"), os.path.join(WORK, "six.tsv")
rc1, so1, se1 = run(*BASE, "--no-table", "--block", "1", "--run", "0", "--numgap-tsv", t1)
rc6, so6, se6 = run(*BASE, "--no-table", "--numgap-tsv", t6)
C.check("one run (--block 1 --run 0): no per-run lines, the same gap table and --numgap-tsv "
        "as the run the 6-run default shows", "runs compared" not in se1 and
        not RUN_LINE.search(se1) and so6 and so1.endswith(so6) and
        open(t1).read() == open(t6).read() and "the table shows Execute#1 run 0" in se6,
        se1[-400:])

rc, so, se = run(*BASE, "--no-table", "--run", "1")
lines = [RUN_LINE.search(ln).groups() for ln in se.splitlines() if RUN_LINE.search(ln)]
C.check("--run 1: run 1 of each block (ETDump runs 3 and 4)",
        rc == 0 and [(b, int(r), int(e)) for b, r, e, _ in lines] ==
        [("Execute#1", 1, 3), ("Execute#2", 1, 4)] and "(--run)" in se, se[-600:])
rc, so, se = run(*BASE, "--no-table", "--run", "3")
C.check("--run 3 out of range: usage (2), giving the range",
        rc == 2 and "--run 3" in se and "0 to 2" in se and "Execute#1" in se, f"rc={rc} {se}")
rc, so, se = run(*BASE, "--no-table", "--run", "x")
C.check("--run x: usage (2)", rc == 2 and "--run" in se, f"rc={rc} {se}")
rc, so, se = run(*BASE, "--no-table", "--no-reference-run", "--run", "0")
C.check("--run without a numeric gap (--no-reference-run): usage (2)", rc == 2, f"rc={rc} {se}")

# a reference ETDump of input 0 only: Execute#2 (input 1) is left out with a note
rc, so, se = run(*BASE, "--no-table", "--reference-etdump", os.path.join(EX, "example_ref.etdp"),
                 "--reference-debug-buffer", os.path.join(EX, "example_ref_debug.bin"))
C.check("--reference-etdump of input 0: Execute#1's 3 runs compared, Execute#2 left out "
        "with a note (no block of the same inputs), exit 0",
        rc == 0 and "3 runs compared" in se and "block Execute#2 (bundled_input_index 1) is "
        "not compared" in se, f"rc={rc} {se[-800:]}")


# Each run's own data: three runs of one block whose intermediate outputs
# differ (run 1's second op is off), against a one-run reference ETDump.
def tensor_ev(instr, offset):
    return {"debug_event": {"chain_index": 0, "instruction_id": instr, "debug_entry": {
        "val": "Tensor", "tensor": {"scalar_type": "FLOAT", "sizes": [4], "strides": [1],
                                    "offset": offset}}}}


def prof(name, instr, t0, t1):
    return {"profile_event": {"name": name, "chain_index": 0, "instruction_id": instr,
                              "start_time": t0, "end_time": t1}}


def one_run(base):
    return {"name": "Execute", "events": [
        tensor_ev(0, base), prof("native_call_add.out", 0, 0, 1000),
        tensor_ev(1, base + 16), prof("native_call_mul.out", 1, 1000, 2000)]}


ref0 = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
ref1 = np.array([0.25, 4.0, -1.5, 2.0], np.float32)
noise = np.array([0.01, -0.03, 0.02, 0.05], np.float32)
rt_vals = [(ref0, ref1), (ref0, ref1 + noise), (ref0, ref1)]
rt = C.flatc_build(WORK, "runs3", {"run_data": [one_run(32 * k) for k in range(3)]})
ref = C.flatc_build(WORK, "runs3_ref", {"run_data": [one_run(0)]})
rt_bin, ref_bin = os.path.join(WORK, "runs3.bin"), os.path.join(WORK, "runs3_ref.bin")
with open(rt_bin, "wb") as f:
    for a, b in rt_vals:
        f.write(a.tobytes() + b.tobytes())
with open(ref_bin, "wb") as f:
    f.write(ref0.tobytes() + ref1.tobytes())
a64, r64 = (ref1 + noise).astype(np.float64), ref1.astype(np.float64)
snr = 10 * np.log10(np.mean(r64 ** 2) / np.mean((a64 - r64) ** 2))
SYN = ["--etdump", rt, "--debug_buffer", rt_bin, "--reference-etdump", ref,
       "--reference-debug-buffer", ref_bin, "--min-snr", "60"]
rc, rep, se = json_of(*SYN)
runs = rep.get("numeric_gap_runs") or []
fds = [r["first_divergence"] for r in runs]
C.check("three runs of one block, each read from its own debug events: run 1 diverges at "
        f"row 1 at numpy's SNR {snr:.6g} dB, runs 0 and 2 pass, exit 1",
        rc == 1 and len(runs) == 3 and fds[0] is None and fds[2] is None and
        fds[1] is not None and fds[1]["row"] == 1 and
        abs(fds[1]["snr_db"] - snr) <= 1e-9 * abs(snr), f"rc={rc} {runs} {se[-500:]}")
C.check("--json numeric_gap holds run 1 (the one that diverges)",
        (rep.get("numeric_gap") or {}).get("run") == 1 and
        rep["numeric_gap"]["rows"][1]["metrics"]["snr"] == fds[1]["snr_db"]
        if fds[1:2] and fds[1] else False, str(rep.get("numeric_gap"))[:300])
rc, so, se = run(*SYN, "--no-table", "--run", "2")
C.check("--run 2 of the synthetic runs: only run 2, which passes: exit 0",
        rc == 0 and "runs compared" not in se and "intermediate outputs pass" in se,
        f"rc={rc} {se}")

# a run whose inputs none of the candidates reproduces (real cnn_mixed: run 1 ran the
# BundledProgram's test case 1, the ETRecord has only test case 0's inputs) is left
# out with a note, not reported as a divergence; with the .bpte it is compared
REAL = os.path.join(SRC, "tests", "data", "realexport")
MIXED = ["--etdump", os.path.join(REAL, "cnn_mixed.etdp"), "--debug_buffer",
         os.path.join(REAL, "cnn_mixed_debug.bin"), "--etrecord",
         os.path.join(REAL, "cnn.etrecord"), "--min-snr", "120", "--no-table"]
rc, so, se = run(*MIXED)
lines = [RUN_LINE.search(ln).groups() for ln in se.splitlines() if RUN_LINE.search(ln)]
C.check("real cnn_mixed: run 1 (other inputs) left out with a note, runs 0 and 2 pass, exit 0",
        rc == 0 and "Execute run 1 (ETDump run 2) is not compared: its program outputs "
        "match the ETRecord's reference_outputs[1]" in se and
        [(int(r), w) for _, r, _, w in lines] == [(0, "17 intermediate outputs pass"),
                                                  (2, "17 intermediate outputs pass")],
        f"rc={rc} {se[-900:]}")
rc, so, se = run(*MIXED, "--bundled-program", os.path.join(REAL, "cnn.bpte"))
lines = [RUN_LINE.search(ln).groups() for ln in se.splitlines() if RUN_LINE.search(ln)]
C.check("real cnn_mixed with its .bpte: all 3 runs compared and pass",
        rc == 0 and [int(r) for _, r, _, _ in lines] == [0, 1, 2] and
        all(w == "17 intermediate outputs pass" for *_, w in lines), f"rc={rc} {se[-900:]}")

# --- 2. --block by index -----------------------------------------------------------------

rc_a, rep_a, _ = json_of(*BASE, "--compare", "--block", "Execute#2")
rc_b, rep_b, _ = json_of(*BASE, "--compare", "--block", "2")
rows_a = (rep_a.get("accuracy") or {}).get("rows")
C.check("--block 2 compares what --block Execute#2 does (accuracy rows and numeric gap)",
        rows_a and rows_a == (rep_b.get("accuracy") or {}).get("rows") and
        rep_a.get("numeric_gap") == rep_b.get("numeric_gap") and
        rep_b["numeric_gap"]["block"] == "Execute#2" and
        {r["block"] for r in rep_b["numeric_gap_runs"]} == {"Execute#2"},
        f"{str(rows_a)[:200]} {str(rep_b.get('accuracy'))[:200]}")
rc, so, se = run(*BASE, "--no-table", "--block", "0")
C.check("--block 0 (Default, unique name) is that block: the gap says it logged nothing",
        'block "Default"' in se, se[-300:])
rc, so, se = run(*BASE, "--no-table", "--block", "9")
C.check("--block 9 out of range: usage (2) listing the blocks",
        rc == 2 and "0 Default, 1 Execute#1, 2 Execute#2" in se, f"rc={rc} {se}")
rc, so, se = run(*BASE, "--no-table", "--block", "Bogus")
C.check("--block Bogus: exit 3 listing the blocks",
        rc == 3 and "0 Default, 1 Execute#1, 2 Execute#2" in se, f"rc={rc} {se}")
rc, so, se = run(*BASE, "--no-table", "--block", "Exeute")
C.check("--block Exeute: exit 3, did you mean Execute?",
        rc == 3 and "did you mean Execute?" in se, f"rc={rc} {se}")

# --- 3. --graph and --module typos: the same exit code -----------------------------------

rc_g, _, se_g = run("--etrecord", REC, "--graph", "forwad")
rc_m, _, se_m = run("--etdump", DUMP, "--etrecord", REC, "--module", "Lnear")
C.check("--graph forwad and --module Lnear exit the same code, 3 (a name not in the inputs)",
        rc_g == rc_m == 3, f"graph {rc_g} {se_g} module {rc_m} {se_m}")
C.check("--graph forwad: did you mean forward?", "did you mean forward?" in se_g, se_g)
C.check("--module Lnear: the closest names (Linear first)", "closest: Linear" in se_m, se_m)
doc = open(os.path.join(SRC, "docs", "ci-gate.md")).read()
C.check("docs/ci-gate.md: exit 3 covers --graph and --module naming nothing",
        re.search(r"\| 3 \|[^\n]*--module[^\n]*--graph|\| 3 \|[^\n]*--graph[^\n]*--module", doc)
        is not None, "")

# --- 4. the man page ---------------------------------------------------------------------

h2m = shutil.which("help2man")
if not h2m:
    print("skip man page: help2man not installed (a declared dependency: "
          "scripts/install-deps.sh)")
else:
    out = os.path.join(WORK, "etcompare.1")
    p = subprocess.run(["cmake", f"-DETC={C.ETC}", f"-DHELP2MAN={h2m}",
                        f"-DINCLUDE={os.path.join(SRC, 'cmake', 'etcompare.h2m')}",
                        f"-DOUT={out}", "-P", os.path.join(SRC, "cmake", "manpage.cmake")],
                       capture_output=True, text=True)
    roff = open(out).read() if os.path.exists(out) else ""
    C.check("the man page builds (cmake/manpage.cmake with help2man)", p.returncode == 0 and
            roff, p.stderr[-500:])
    sections = re.findall(r'^\.SH "?([^"\n]+)"?$', roff, re.M)
    C.check("sections NAME, SYNOPSIS, DESCRIPTION, EXIT STATUS, EXAMPLES, SEE ALSO in order",
            sections == ["NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "EXAMPLES",
                         "SEE ALSO"], sections)
    heads = re.findall(r'^\.SS "([^"]+)"$', roff, re.M)
    C.check("option headings are subsections, --help's own (Inputs ... Numeric gap, General)",
            heads[:3] == ["Inputs:", "Timing:", "Output:"] and "General:" in heads and
            any(h.startswith("Numeric gap") for h in heads), heads)
    status = roff.split('.SH "EXIT STATUS"')[1].split(".SH")[0] if sections else ""
    C.check("EXIT STATUS: one entry per code 0 to 4",
            re.findall(r"^\.B (\d)$", status, re.M) == ["0", "1", "2", "3", "4"], status)
    desc = roff.split(".SH DESCRIPTION")[1].split('.SH "EXIT STATUS"')[0] if sections else ""
    C.check("the --help 'Exit status:' paragraph is not repeated in DESCRIPTION",
            "Exit status:" not in desc, "")
    C.check("--run and --block N are options of the page",
            re.search(r"^\.TP\n\\fB\\-\\-run\\fR N", roff, re.M) is not None and
            "\\fB\\-\\-block\\fR NAME|N" in roff, "")
    C.check("-h/--help sits under General: (not under Numeric gap)",
            roff.index('.SS "General:"') < roff.index("\\fB\\-\\-help\\fR"), "")
    if shutil.which("man"):
        page = subprocess.run(["man", "-l", out], capture_output=True, text=True,
                              env=dict(os.environ, MANWIDTH="80")).stdout
        C.check("man -l renders EXIT STATUS and the headings",
                "\nEXIT STATUS\n" in page and "   General:" in page and
                "   Inputs:" in page, page[:300])

# --- 5. the batch ------------------------------------------------------------------------

PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
LIB = os.path.join(os.path.dirname(os.path.abspath(C.ETC)), "libetcompare.so")
env = dict(os.environ, ETCOMPARE_LIBRARY=LIB,
           PYTHONPATH=os.pathsep.join([os.path.join(SRC, "python")] +
                                      [x for x in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                       if x]))
# a library built with AddressSanitizer loads only after its runtime (as test_python.setup)
ldd = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
asan = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines() if "libasan" in ln and "=>" in ln]
if asan:
    env.update(LD_PRELOAD=asan[0],
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
bdir = os.path.join(WORK, "batch")
os.makedirs(bdir, exist_ok=True)
for i in range(4):
    shutil.copy(DUMP, os.path.join(bdir, f"e{i}.etdp"))
OTHER_REC = os.path.join(SRC, "tests", "data", "pickle_refs", "refs_p4.etrecord")
OTHER_BUF = os.path.join(SRC, "tests", "data", "runs5_ops12.bin")
with open(os.path.join(bdir, "m.csv"), "w") as f:
    f.write("etdump,debug_buffer,etrecord,reference,reference_debug_buffer\n")
    f.write(f"e0.etdp,{BUF},{REC},,\n")
    f.write(f"e1.etdp,{BUF},{OTHER_REC},,\n")
    f.write(f"e2.etdp,{OTHER_BUF},{REC},,\n")
    f.write(f"e3.etdp,{BUF},{REC},{os.path.join(EX, 'example_ref.etdp')},"
            f"{os.path.join(EX, 'example_ref_debug.bin')}\n")
summ = os.path.join(bdir, "s.jsonl")
p = subprocess.run([PY, "-m", "etcompare.batch", "-o", summ, "--workers", "1", "--min-snr", "20",
                    os.path.join(bdir, "m.csv")], capture_output=True, text=True, env=env)
rows = {}
if os.path.exists(summ):
    for ln in open(summ):
        d = json.loads(ln)
        rows[os.path.basename(d["etdump"])] = d
C.check("batch: 4 rows, exit 3 (two rows' inputs do not belong together)",
        len(rows) == 4 and p.returncode == 3, f"rc={p.returncode} {p.stderr[-500:]}")
# Method::execute over every run of every block, from the CLI's raw durations
_, cli, _ = json_of("--etdump", DUMP)
raw = [x for b in cli.get("blocks", []) for e in b.get("events", [])
       if e.get("event_name") == "Method::execute" for x in (e.get("raw") or [])]
first_block = [x for b in cli.get("blocks", [])[:2] for e in b.get("events", [])
               if e.get("event_name") == "Method::execute" for x in (e.get("raw") or [])]
e0 = rows.get("e0.etdp", {})
C.check(f"batch execute_p50/avg over all {len(raw)} runs of every block (numpy)",
        len(raw) == 6 and e0.get("execute_p50") is not None and
        abs(e0["execute_p50"] - float(np.percentile(raw, 50))) < 1e-12 and
        abs(e0["execute_avg"] - float(np.mean(raw))) < 1e-12,
        f"{e0.get('execute_p50')} {e0.get('execute_avg')} raw={raw}")
C.check("(the first block's p50 alone would differ)",
        float(np.percentile(first_block, 50)) != float(np.percentile(raw, 50)), first_block)
e1, e2 = rows.get("e1.etdp", {}), rows.get("e2.etdp", {})
C.check("batch: an ETRecord of another model is that row's one-line error with the evidence",
        e1.get("status") == "error" and "do not belong together" in (e1.get("message") or "")
        and "debug_handle_map" in e1["message"] and "\n" not in e1["message"], e1)
C.check("batch: a debug buffer of another run is that row's error (references 2,496 of "
        "4,440 bytes)", e2.get("status") == "error" and
        "2,496 of 4,440 bytes" in (e2.get("message") or ""), e2)
C.check("batch: the summary counts them as errors, not gate failures",
        "2 error" in p.stderr and "1 gate_failed" in p.stderr, p.stderr[-300:])
e3 = rows.get("e3.etdp", {})
fd = e3.get("first_divergence") or {}
C.check("batch against a reference run: the blocks the reference ran (Execute#1) only, its "
        "first divergence names the block", e3.get("status") == "gate_failed" and
        fd.get("block") == "Execute#1" and fd.get("node") == "native_layer_norm" and
        "Execute#2" not in (e3.get("message") or ""), e3)
try:
    import jsonschema
    schema = json.load(open(os.path.join(SRC, "schema", "batch-summary.schema.json")))
    bad = []
    for d in rows.values():
        try:
            jsonschema.validate(d, schema)
        except jsonschema.ValidationError as e:
            bad.append(e.message)
    C.check("batch lines follow schema/batch-summary.schema.json", not bad, bad)
    rschema = json.load(open(os.path.join(SRC, "schema", "etcompare-report.schema.json")))
    _, rep, _ = json_of(*BASE, "--min-snr", "20")
    try:
        jsonschema.validate(rep, rschema)
        err = ""
    except jsonschema.ValidationError as e:
        err = e.message
    C.check("--json with numeric_gap_runs follows schema/etcompare-report.schema.json",
            not err and "numeric_gap_runs" in rep, err)
except ImportError:
    print("skip schema checks: python3-jsonschema not installed")

# a damaged weights member: the gate must not pass without its numeric gap
import zipfile  # noqa: E402

RX = os.path.join(SRC, "tests", "data", "realexport")
with zipfile.ZipFile(os.path.join(RX, "cnn.etrecord")) as z:
    info = z.getinfo("edge_dialect_exported_program_state_dict")
raw = bytearray(open(os.path.join(RX, "cnn.etrecord"), "rb").read())
nlen, xlen = struct.unpack_from("<HH", raw, info.header_offset + 26)
at = info.header_offset + 30 + nlen + xlen + info.compress_size // 2
raw[at] ^= 0x5A
bad = os.path.join(WORK, "cnn_damaged.etrecord")
open(bad, "wb").write(bytes(raw))
CNN = ["--etdump", os.path.join(RX, "cnn.etdp"), "--debug_buffer", os.path.join(RX, "cnn_debug.bin"),
       "--etrecord", bad, "--no-table"]
rc, so, se = run(*CNN, "--min-snr", "30")
C.check("damaged weights with a gate: exit 3 naming the member, its CRC and the way out",
        rc == 3 and "edge_dialect_exported_program_state_dict" in se and "CRC-32" in se and
        "--no-reference-run" in se, f"rc={rc} {se[-600:]}")
rc, so, se = run(*CNN)
C.check("damaged weights without a gate: a note says why there is no numeric gap, exit 0",
        rc == 0 and "note: no numeric gap from the ETRecord's graph" in se and
        "CRC-32" in se, f"rc={rc} {se[-600:]}")
rc, so, se = run(*CNN, "--min-snr", "30", "--no-reference-run")
C.check("damaged weights, --no-reference-run: the accuracy gate alone, exit 0",
        rc == 0 and "numeric gap" not in se, f"rc={rc} {se[-600:]}")

C.finish()
