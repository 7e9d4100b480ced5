"""python3 -m etcompare.batch for a CI engineer wiring a device farm (hostile
pass 6, findings 2, 3, 5, 6, 7, 8, 9, 14, 15, 16): group verdicts on stderr,
groups keyed by what the runs ran (content pairing), every run compared
against a reference run, one physical run given twice, device outputs
(-o on a private null device), --resume after a companion file changed,
--device-from on the path as given, a run without outputs in a gated group,
sub-folders and upper-case suffixes, numbers with a leading blank.

Every input is built here from tests/data/realexport and examples/."""
import json
import os
import shutil
import stat
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import ETC, SRC, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
RX = os.path.join(SRC, "tests", "data", "realexport")
EX = os.path.join(SRC, "examples")


def batch(*args, cwd=None, timeout=600):
    p = subprocess.run([sys.executable, "-m", "etcompare.batch", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def lines(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def read_lines(path):
    with open(path) as f:
        return lines(f.read())


def run_files(d, name, model="cnn", debug=True):
    """d/name.etdp (+ name_debug.bin) + name.etrecord: copies of realexport's model."""
    os.makedirs(d, exist_ok=True)
    for suf in (".etdp", "_debug.bin", ".etrecord"):
        if suf == "_debug.bin" and not debug:
            continue
        shutil.copy(os.path.join(RX, model + suf), os.path.join(d, name + suf))
    return os.path.join(d, name + ".etdp")


def snr(ref, x):
    ref, x = np.asarray(ref, np.float64).ravel(), np.asarray(x, np.float64).ravel()
    return 10 * np.log10(np.sum(ref ** 2) / np.sum((x - ref) ** 2))


def test_case_1_run(d, name):
    """d/name.*: cnn_mixed without its first Execute run (so its runs are test
    case 1, then 0), its debug buffer with the dropped run's tensors (the
    first 56,560 bytes) zeroed: a device that ran test case 1 first."""
    os.makedirs(d, exist_ok=True)
    dec = os.path.join(d, "dec")
    subprocess.run([C.FLATC, "--json", "--strict-json", "--size-prefixed", "--raw-binary",
                    "--defaults-json", "-o", dec, C.FBS, "--",
                    os.path.join(RX, "cnn_mixed.etdp")], check=True, capture_output=True)
    with open(os.path.join(dec, "cnn_mixed.json")) as f:
        doc = json.load(f)
    assert [r["name"] for r in doc["run_data"]] == ["Default"] + ["Execute"] * 3
    del doc["run_data"][1]
    out = C.flatc_build(dec, name, doc)
    shutil.move(out, os.path.join(d, name + ".etdp"))
    buf = bytearray(open(os.path.join(RX, "cnn_mixed_debug.bin"), "rb").read())
    buf[:56560] = bytes(56560)  # the dropped run's tensors
    open(os.path.join(d, name + "_debug.bin"), "wb").write(buf)
    shutil.copy(os.path.join(RX, "cnn.etrecord"), os.path.join(d, name + ".etrecord"))
    return os.path.join(d, name + ".etdp")


def perturbed_run(d, name):
    """d/name.*: cnn with every copy of its program output's bytes in the
    debug buffer replaced by 1.5 x + 0.01 (a device with a wrong kernel)."""
    etdp = run_files(d, name)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=os.path.join(d, name + "_debug.bin"))
    b = next(b for b in insp.event_blocks if b.name == "Execute")
    x = np.array(b.run_output[0], dtype=np.float32).ravel()  # a copy: the file changes
    del insp, b
    bad = (1.5 * x + np.float32(0.01)).astype(np.float32)
    path = os.path.join(d, name + "_debug.bin")
    raw = open(path, "rb").read()
    n = raw.count(x.tobytes())
    raw = raw.replace(x.tobytes(), bad.tobytes())
    with open(path + ".new", "wb") as f:
        f.write(raw)
    os.replace(path + ".new", path)
    return etdp, x, bad, n


def case_groups(d):
    """Findings 2, 3 and 9: devA ran test case 0 twice, devB test case 1 (no
    bundled_input_index, as real runtimes), devE test case 0 with a wrong
    output. Groups by the content pairing: devB alone in input 1, never an
    outlier; devE fails the agreement gate of input 0 and stderr says so."""
    farm = os.path.join(d, "farm")
    run_files(os.path.join(farm, "devA"), "run_0")
    run_files(os.path.join(farm, "devA"), "run_1")
    tc1 = test_case_1_run(os.path.join(farm, "devB"), "run_0")
    _e, good, bad, copies = perturbed_run(os.path.join(farm, "devE"), "run_0")
    C.check("setup: the perturbed device's output found in its debug buffer", copies >= 1,
            copies)
    # independently: devB's first run ran test case 1 (its outputs match expected1)
    io = np.load(os.path.join(RX, "cnn_io.npz"))
    insp = E.Inspector(etdump_path=tc1, debug_buffer_path=tc1[:-5] + "_debug.bin")
    out0 = next(b for b in insp.event_blocks if b.name == "Execute").run_output[0]
    s1, s0 = snr(io["expected1"], out0), snr(io["expected0"], out0)
    C.check("setup: devB's first run ran test case 1 (numpy: SNR against expected1 >> "
            "expected0)", s1 > 100 and s0 < 20, f"{s1} {s0}")
    del insp
    g = os.path.join(d, "groups.jsonl")
    rc, out, err = batch("--workers", "2", "-o", "runs.jsonl", "--group-summary", g,
                         "--device-from", "1", "--min-run-agreement", "60",
                         "farm/devA", "farm/devB", "farm/devE", cwd=d)
    docs = {x["input"]: x for x in read_lines(g)}
    empty = {"runs": 0, "etdumps": [], "devices": [], "agreement": [], "outlier_devices": [],
             "input_from": [], "status": None}
    for k in ("0", "1"):  # (what the old batch lacked: failed checks, not a crash)
        docs.setdefault(k, dict(empty))
    runs = read_lines(os.path.join(d, "runs.jsonl"))
    C.check("finding 3: runs grouped by the content pairing: input 0 = devA x2 + devE, "
            "input 1 = devB alone",
            sorted(docs) == ["0", "1"] and docs["0"]["runs"] == 3 and
            docs["1"]["etdumps"] == [tc1] and docs["1"]["input_from"] == ["content pairing"]
            and docs["0"]["devices"] == ["devA", "devE"],
            f"rc={rc} {[(k, v['runs'], v['devices']) for k, v in docs.items()]} {err[-600:]}")
    named = [o["device"] for x in docs.values() for a in x["agreement"]
             for o in a["outlier_runs"]]
    C.check("finding 3: the correct device that ran test case 1 is never an outlier; the wrong "
            "one is", "devB" not in named and "devE" in named and
            docs["0"]["outlier_devices"] == ["devE"], named)
    # the score of devE: the median over devA's two runs of min(snr_ij, snr_ji) (numpy)
    want = min(snr(good, bad), snr(bad, good))
    a0 = (docs["0"]["agreement"] or [{"scores": []}])[0]
    dev_e = os.path.join(farm, "devE", "run_0.etdp")
    i = docs["0"]["etdumps"].index(dev_e) if dev_e in docs["0"]["etdumps"] else None
    C.check("the group's agreement score of devE equals numpy's SNR of its output against "
            "devA's", i is not None and abs(a0["scores"][i] - want) < 1e-6 * abs(want),
            f"{a0['scores']} {want}")
    summary = [ln for ln in err.splitlines() if "runs analysed" in ln]
    C.check("finding 2: the summary line counts the failed groups",
            len(summary) == 1 and summary[0].endswith("groups: 1 of 2 gate_failed, "
                                                      "1 not_checked"), err[-800:])
    failed = [ln for ln in err.splitlines() if " failed --min-run-agreement" in ln]
    C.check("finding 2: one line names the failed group, the gate, the worst run, its device "
            "and its score (4 digits of numpy's)",
            len(failed) == 1 and "group run_0.etrecord/0 failed --min-run-agreement 60" in
            failed[0] and os.path.join(farm, "devE", "run_0.etdp") in failed[0] and
            "(device devE)" in failed[0] and f"agreement score {want:.4g} dB" in failed[0],
            failed)
    C.check("finding 2: exit 1 agrees with the failed group; every run line ok",
            rc == 1 and [r["status"] for r in runs] == ["ok"] * 4, f"rc={rc}")
    C.check("finding 14: the single-run group of test case 1 is not_checked, with a warning "
            "naming it", docs["1"]["status"] == "not_checked" and any(
                "group run_0.etrecord/1: --min-run-agreement 60 not checked" in ln and tc1 in ln
                for ln in err.splitlines()), err[-600:])
    # finding 9: --device-from indexes the path as typed
    C.check("finding 9: --device-from 1 on farm/devA/run_0.etdp is devA (the path as given)",
            docs["0"]["devices"] == ["devA", "devE"] and docs["1"]["devices"] == ["devB"],
            [x["devices"] for x in docs.values()])
    rc, _o, err = batch("--workers", "2", "-o", "runs.jsonl", "--group-summary", g,
                        "--device-from", "0", "farm/devA", "farm/devB", cwd=d)
    C.check("finding 9: --device-from 0 gives every run 'farm': a warning saying so",
            rc == 0 and "--device-from 0 gives every one of the 3 runs the same device 'farm'"
            in err and all(x["devices"] == ["farm"] for x in read_lines(g)), err[-500:])
    C.check("finding 9: --help says the path as given",
            "as given" in subprocess.run([sys.executable, "-m", "etcompare.batch", "--help"],
                                         capture_output=True, text=True).stdout, "")
    return farm


def case_missing_outputs(d, farm):
    """Finding 14: a run without its debug buffer in a gated group (the
    manifest's input column puts it there) no longer hides devE's failure:
    the matrix covers the runs that have the output."""
    run_files(os.path.join(farm, "devC"), "run_0", debug=False)
    man = os.path.join(d, "m14.csv")
    with open(man, "w") as f:
        f.write("etdump,debug_buffer,etrecord,device,input\n")
        for dev, k, dbg in (("devA", 0, 1), ("devA", 1, 1), ("devE", 0, 1), ("devC", 0, 0)):
            base = f"farm/{dev}/run_{k}"
            f.write(f"{base}.etdp,{base + '_debug.bin' if dbg else ''},{base}.etrecord,"
                    f"{dev},tc0\n")
    g = os.path.join(d, "g14.jsonl")
    rc, _o, err = batch("--workers", "2", "-o", os.path.join(d, "r14.jsonl"),
                        "--group-summary", g, "--min-run-agreement", "60", man)
    docs = read_lines(g)
    devc = os.path.join(farm, "devC", "run_0.etdp")
    a = docs[0]["agreement"] if len(docs) == 1 else []
    C.check("finding 14: one group of 4 runs; output 0's matrix over the 3 runs that have it",
            len(docs) == 1 and docs[0]["runs"] == 4 and len(a) == 1 and
            len(a[0]["snr"]) == 3 and a[0]["runs_without_output"] == [devc],
            f"rc={rc} {[(x['runs'], len(x['agreement'])) for x in docs]} {err[-500:]}")
    C.check("finding 14: the group fails (devE below 60 dB), exit 1, not ok",
            rc == 1 and docs[0]["status"] == "gate_failed" and
            a[0]["outlier_runs"][0]["device"] == "devE" and
            any("not checked" not in ln and "(device devE)" in ln for ln in err.splitlines()),
            f"rc={rc} {docs[0]['status'] if docs else None} {err[-500:]}")
    C.check("finding 14: the run without outputs is named in the group's not_checked list",
            docs[0].get("not_checked") and docs[0]["not_checked"][0]["runs"] == [devc],
            docs[0].get("not_checked"))


def case_reference_runs(d):
    """Finding 5: with X.ref.etdp + X.ref.bin, the third run of the ETDump is
    compared too: gate_failed with etcompare's numbers, outputs of 3 runs."""
    f = os.path.join(d, "refrun")
    os.makedirs(f)
    shutil.copy(os.path.join(RX, "mlp.etdp"), os.path.join(f, "m.etdp"))
    shutil.copy(os.path.join(RX, "mlp.etrecord"), os.path.join(f, "m.etrecord"))
    shutil.copy(os.path.join(RX, "mlp.etdp"), os.path.join(f, "m.ref.etdp"))
    shutil.copy(os.path.join(RX, "mlp_debug.bin"), os.path.join(f, "m.ref.bin"))
    buf = bytearray(open(os.path.join(RX, "mlp_debug.bin"), "rb").read())
    for off in (97968, 98160, 98352):  # run 3's last addmm, softmax and program output
        x = np.frombuffer(bytes(buf[off:off + 160]), dtype=np.float32)
        buf[off:off + 160] = (1.5 * x + np.float32(0.01)).astype(np.float32).tobytes()
    open(os.path.join(f, "m.bin"), "wb").write(buf)
    x = np.frombuffer(open(os.path.join(RX, "mlp_debug.bin"), "rb").read()[98352:98352 + 160],
                      dtype=np.float32)
    want = snr(x, (1.5 * x + np.float32(0.01)).astype(np.float32))
    rc, out, err = batch("--workers", "1", "--min-snr", "60", f)
    r = lines(out)[0] if out.strip() else {}
    w = r.get("worst_output") or {}
    C.check("finding 5: the third run's output compared: gate_failed, exit 1, 3 outputs "
            "(one per run), the worst SNR numpy's",
            rc == 1 and r.get("status") == "gate_failed" and w.get("outputs") == 3 and
            abs(w["snr"] - want) < 1e-6 * abs(want), f"rc={rc} {w} {want} {err[-300:]}")
    js = os.path.join(d, "cli.json")
    p = subprocess.run([ETC, "--etdump", os.path.join(f, "m.etdp"), "--debug_buffer",
                        os.path.join(f, "m.bin"), "--etrecord", os.path.join(f, "m.etrecord"),
                        "--reference-etdump", os.path.join(f, "m.ref.etdp"),
                        "--reference-debug-buffer", os.path.join(f, "m.ref.bin"),
                        "--min-snr", "60", "--no-table", "--json", js],
                       capture_output=True, text=True)
    doc = C.load_json(js)
    rows = doc["numeric_gap"]["rows"]
    first = next(i for i, x in enumerate(rows) if x["status"] != "pass")
    fd = r.get("first_divergence") or {}
    C.check("finding 5: the first divergence is etcompare's (its run, row, SNR)",
            p.returncode == 1 and fd.get("block") == "Execute run 2" and fd.get("row") ==
            first and abs(fd["snr"] - rows[first]["metrics"]["snr"]) < 1e-9 *
            abs(fd["snr"]), f"{fd} {first} {rows[first].get('metrics')} {p.stderr[-300:]}")
    a = np.frombuffer(open(os.path.join(RX, "mlp_debug.bin"), "rb").read()[97968:97968 + 160],
                      dtype=np.float32)
    want2 = snr(a, (1.5 * a + np.float32(0.01)).astype(np.float32))
    C.check("finding 5: ... at the perturbed addmm of run 3, its SNR numpy's",
            fd.get("node") == "aten_addmm_default_2" and abs(fd["snr"] - want2) < 1e-6 * want2,
            f"{fd} {want2}")


def case_twice(d):
    """Finding 6: the same runs given by a folder and a labelled manifest row:
    analysed once, with the row's labels, a warning naming both sources."""
    f = os.path.join(d, "twice", "pixel7")
    run_files(f, "run_0")
    run_files(f, "run_1")
    man = os.path.join(d, "twice", "m.csv")
    with open(man, "w") as fh:
        fh.write("etdump,debug_buffer,etrecord,device\n")
        for k in (0, 1):
            fh.write(f"pixel7/run_{k}.etdp,pixel7/run_{k}_debug.bin,pixel7/run_{k}.etrecord,"
                     f"p7\n")
    g = os.path.join(d, "g6.jsonl")
    rc, out, err = batch("--workers", "2", "--group-summary", g, f, man)
    docs = read_lines(g)
    warned = [ln for ln in err.splitlines() if "the same run" in ln]
    C.check("finding 6: 2 lines for 2 runs; the group has 2 runs of device p7 (the row's label)",
            rc == 0 and len(lines(out)) == 2 and [(x["runs"], x["devices"]) for x in docs]
            == [(2, ["p7"])], f"rc={rc} {[(x['runs'], x['devices']) for x in docs]}")
    C.check("finding 6: a warning per run naming both sources, keeping the row's labels",
            len(warned) == 2 and f"{man} line 2" in warned[0] and
            os.path.join(f, "run_0.etdp") in warned[0] and "with the labels of" in warned[0],
            err[-600:])


def case_null_device(d):
    """Finding 7: -o on a private null device: exit 1 for the failing run,
    the device still a device."""
    f = os.path.join(d, "nul")
    os.makedirs(f)
    shutil.copy(os.path.join(RX, "mlp.etdp"), os.path.join(f, "m.etdp"))
    shutil.copy(os.path.join(RX, "mlp.etrecord"), os.path.join(f, "m.etrecord"))
    buf = bytearray(open(os.path.join(RX, "mlp_debug.bin"), "rb").read())
    x = np.frombuffer(bytes(buf[98352:98352 + 160]), dtype=np.float32)
    buf[98352:98352 + 160] = (1.5 * x + np.float32(0.01)).astype(np.float32).tobytes()
    open(os.path.join(f, "m.bin"), "wb").write(buf)
    node = os.path.join(d, "nulldev")
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as e:
        print(f"note: mknod not permitted here ({e}): the -o device checks are skipped")
        node = None
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    if node:
        rc, _o, err = batch("--workers", "1", "--min-snr", "60", "-o", node, f)
        C.check("finding 7: -o NULLDEV: exit 1 (the run failed), the device still a character "
                "device", rc == 1 and stat.S_ISCHR(os.stat(node).st_mode) and
                "0 ok, 1 gate_failed, 0 error); summary: 0 ok, 1 gate_failed" in err,
                f"rc={rc} {err[-300:]}")
        rc, _o, err = batch("--workers", "1", "--min-snr", "60", "-o", node, "--group-summary",
                            node, f)
        C.check("finding 7: -o and --group-summary both the device: exit 1, still a device",
                rc == 1 and stat.S_ISCHR(os.stat(node).st_mode), f"rc={rc} {err[-300:]}")
        rc, _o, err = batch("--workers", "1", "--min-snr", "60", "-o", node, "--resume", f)
        C.check("finding 7: --resume on a device: exit 2, one line", rc == 2 and
                "not a regular file" in err, f"rc={rc} {err[-300:]}")
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
    try:  # (a batch that reads its FIFO output back would wait for ever)
        rc, _o, err = batch("--workers", "1", "--min-snr", "60", "-o", fifo, f, timeout=120)
        got = lines(reader.communicate(timeout=60)[0])
    finally:
        reader.kill()
        reader.wait()
    C.check("finding 7: -o FIFO: the sorted lines written through it once, exit 1, still a FIFO",
            rc == 1 and [x["status"] for x in got] == ["gate_failed"] and
            stat.S_ISFIFO(os.stat(fifo).st_mode), f"rc={rc} {got} {err[-300:]}")


def case_resume(d):
    """Finding 8: --resume after the missing debug buffer arrived: the error
    line of that ETDump replaced by its new line, one verdict per ETDump."""
    f = os.path.join(d, "res")
    run_files(f, "a", model="mlp", debug=False)
    run_files(f, "b")
    out = os.path.join(d, "res.jsonl")
    rc1, _o, _e = batch("--workers", "1", "--min-snr", "60", "-o", out, f)
    shutil.copy(os.path.join(RX, "mlp_debug.bin"), os.path.join(f, "a_debug.bin"))
    rc2, _o, err = batch("--workers", "1", "--min-snr", "60", "-o", out, "--resume", f)
    r = read_lines(out)
    C.check("finding 8: first batch exit 3 (a has no debug buffer), after --resume exit 0",
            rc1 == 3 and rc2 == 0, f"{rc1} {rc2} {err[-400:]}")
    C.check("finding 8: one line per ETDump, a's the new ok line with its debug buffer",
            [(os.path.basename(x["etdump"]), x["status"]) for x in r] ==
            [("a.etdp", "ok"), ("b.etdp", "ok")] and
            r[0]["debug_buffer"] == os.path.join(f, "a_debug.bin"), r)
    C.check("finding 8: the summary counts one verdict per ETDump; a warning says what was "
            "replaced", "summary: 2 ok, 0 gate_failed, 0 error" in err and
            "replaced by the run analysed again" in err, err[-500:])


def case_folders(d):
    """Finding 15: sub-folders with ETDumps noted; an upper-case suffix read."""
    f = os.path.join(d, "farm2")
    run_files(f, "run_0")
    run_files(os.path.join(f, "pixel7"), "run_0")
    run_files(os.path.join(f, "pixel8"), "run_1")
    rc, out, err = batch("--workers", "1", f)
    C.check("finding 15: a note names the sub-folders and their ETDump count; 1 line",
            rc == 0 and len(lines(out)) == 1 and "note: " in err and
            "2 ETDumps in its sub-folders" in err and os.path.join(f, "pixel7") in err, err)
    rc, out, err = batch("--workers", "1", f, os.path.join(f, "pixel7"), os.path.join(f, "pixel8"))
    C.check("finding 15: no note when the sub-folders are inputs too; 3 lines",
            rc == 0 and len(lines(out)) == 3 and "note: " not in err, err)
    g = os.path.join(d, "flat")
    run_files(g, "run_0")
    up = run_files(g, "RUN_1")
    os.rename(up, os.path.join(g, "RUN_1.ETDP"))
    rc, out, err = batch("--workers", "1", "--min-snr", "100", g)
    got = sorted(os.path.basename(x["etdump"]) for x in lines(out))
    C.check("finding 15: RUN_1.ETDP read as an ETDump, with its companions",
            rc == 0 and got == ["RUN_1.ETDP", "run_0.etdp"] and
            all(x["debug_buffer"] and x["status"] == "ok" for x in lines(out)), f"{got} {err}")


def case_numbers():
    """Finding 16: a leading blank is refused as etcompare refuses it."""
    for arg in ("--min-snr= 30", "--outlier-margin= 5"):
        rc, _o, err = batch(arg, os.path.join(EX, "example.etdp"))
        C.check(f"finding 16: {arg!r}: exit 2, the CLI's words", rc == 2 and
                "takes a number" in err and "not ' " in err, f"rc={rc} {err}")
    p = subprocess.run([ETC, "--etdump", os.path.join(EX, "example.etdp"), "--min-snr", " 30"],
                       capture_output=True, text=True)
    C.check("finding 16: etcompare refuses it too (exit 2)", p.returncode == 2, p.stderr)


def main():
    d = C.work_dir("batch_trust6")
    farm = os.path.join(d, "farm")
    # each case under its own harness: a crash is a failed check, the others still run
    with C.harness("the group cases"):
        farm = case_groups(d)
    with C.harness("the missing outputs case"):
        case_missing_outputs(d, farm)
    for case in (case_reference_runs, case_twice, case_null_device, case_resume, case_folders):
        with C.harness(case.__name__):
            case(d)
    with C.harness("case_numbers"):
        case_numbers()
    C.finish(d)


if __name__ == "__main__":
    main()
