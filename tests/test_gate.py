"""The gate and the messages users read (issue 13): pairing of runs with
references (one reference for several runs, --pair-by index|order|all,
unpaired items as failing rows), runs numbered 0-based in every view,
failure reasons that print the deciding quantity, delegate timing as the
current upstream Inspector (scaled by default; --delegate-time-scale UNIT
or BACKEND=UNIT, cycles labelled), --module by path, key or type, and the
--plot notes."""
import json
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SRC = os.environ["ETC_SRC"]
FLATC = os.environ["ETC_FLATC"]
FBS = os.path.join(SRC, "schema", "etdump.fbs")
sys.dont_write_bytecode = True  # import the helpers without writing into the source tree
sys.path.insert(0, os.path.join(SRC, "tests"))
import etrecord_gen as G  # noqa: E402
import common  # noqa: E402
import test_accuracy as A  # noqa: E402
from test_accuracy import Dump, T, acc_rows, check, etrecord, load_json, run  # noqa: E402

R0 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
R1 = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
NEAR = [1.0, 2.0, 3.0, 4.0, 5.0, 6.000001]


def rows_of(d, stem, *args):
    js = os.path.join(d, stem + ".json")
    rc, out, err = run(*args, "--json", js)
    rep = load_json(js) if os.path.exists(js) else {}
    return rc, out, err, rep.get("accuracy") or {}, acc_rows(rep)


# --- pairing --------------------------------------------------------------------------

def pairing(d):
    dump = Dump()
    for _ in range(3):  # the same input run 3 times
        dump.run([dump.tensor("FLOAT", R0, [6])])
    etdp, dbg = dump.write(d, "three")
    rec1 = etrecord(d, "one_ref", [[T(R0)]])
    rc, out, err, acc, rows = rows_of(d, "three", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec1, "--min-snr", "60")
    check("pairing: 3 runs, 1 reference set: exit 0, every run compared with reference 0",
          rc == 0 and [(r["run"], r["reference"], r["status"]) for r in rows] ==
          [(0, 0, "pass"), (1, 0, "pass"), (2, 0, "pass")], f"rc={rc} {err} {rows}")
    # issue 20: no run carries an index, so the default is content (the one
    # reference set is every run's only candidate)
    check("pairing: the report says so (table note and JSON)",
          "pairing by content" in out and "references by run: 0, 0, 0" in out and
          acc.get("pair_by") == "content" and "3 runs" in acc.get("note", ""),
          out[-300:] + json.dumps(acc)[:300])
    # --pair-by all with two references: every run with reference 0, the other
    # set is not a failure (the user chose reference 0 for every run)
    rec2 = etrecord(d, "two_refs", [[T(R0)], [T(R1)]])
    rc, out, err, acc, rows = rows_of(d, "all2", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec2, "--pair-by", "all")
    check("pairing: --pair-by all: runs 0-2 with reference 0, reference 1 not a failing row",
          rc == 0 and [(r["run"], r["reference"], r["status"]) for r in rows] ==
          [(0, 0, "pass"), (1, 0, "pass"), (2, 0, "pass")],
          f"rc={rc} {rows}")
    check("pairing: --pair-by all is said to be forced",
          acc.get("pair_by") == "all" and "(--pair-by)" in acc.get("note", ""), str(acc)[:300])
    # order: 3 runs, 2 references: run 2 fails as unpaired
    rc, out, err, acc, rows = rows_of(d, "order32", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec2, "--pair-by", "order")
    check("pairing: --pair-by order, 3 runs and 2 references: run 2 is a failing row, exit 1",
          rc == 1 and [(r["run"], r["reference"], r["status"]) for r in rows][2] ==
          (2, None, "missing reference") and "no reference set 2 (there are 2)" in
          rows[2]["reason"], f"rc={rc} {rows}")
    # order: 2 runs, 3 references: reference 2 fails as unpaired
    dump = Dump()
    for _ in range(2):
        dump.run([dump.tensor("FLOAT", R0, [6])])
    etdp2, dbg2 = dump.write(d, "two")
    rec3 = etrecord(d, "three_refs", [[T(R0)], [T(R0)], [T(R0)]])
    rc, out, err, acc, rows = rows_of(d, "order23", "--etdump", etdp2, "--debug_buffer", dbg2,
                                      "--etrecord", rec3, "--compare", "--pair-by", "order")
    check("pairing: 2 runs, 3 references (order): reference 2 is a failing row",
          rc == 1 and acc.get("pair_by") == "order" and
          [(r["run"], r["reference"], r["status"]) for r in rows] ==
          [(0, 0, "pass"), (1, 1, "pass"), (None, 2, "missing output")] and
          "no run 2 of block" in rows[2]["reason"], f"rc={rc} {rows}")
    check("pairing: the note gives both counts", "2 runs, 3 reference sets" in out, out[-300:])
    # issue 20: by default (content) the three equal references are ambiguous
    # candidates; the runs are gated on the first, unmatched sets are no failure
    rc, out, err, acc, rows = rows_of(d, "content23", "--etdump", etdp2, "--debug_buffer",
                                      dbg2, "--etrecord", rec3, "--compare")
    check("pairing: 2 runs, 3 equal references (auto = content): ambiguous, gated on 0",
          rc == 0 and acc.get("pair_by") == "content" and
          [(r["run"], r["reference"], r["status"]) for r in rows] ==
          [(0, 0, "pass"), (1, 0, "pass")] and "AMBIGUOUS" in out and
          "2 runs, 3 reference sets" in out, f"rc={rc} {rows} {out[-400:]}")
    # an .npz of one reference: every run against it
    npz = os.path.join(d, "one.npz")
    sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
    import make_npz as NPZ
    NPZ.write_npz(npz, [("out0.npy", A.npy32(R0, [6]))])
    rc, out, err, acc, rows = rows_of(d, "npz1", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--reference-outputs", npz)
    check("pairing: a plain .npz (one reference) against 3 runs: 3 passing rows",
          rc == 0 and len(rows) == 3 and acc.get("pair_by") == "content", f"rc={rc} {err}")


# --- 0-based runs ------------------------------------------------------------------------

def zero_based(d):
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [6])], name="Method::init")  # a run of another block
    for a in (R0, R1, R0):
        dump.run([dump.tensor("FLOAT", a, [6])])
    etdp, dbg = dump.write(d, "zb")
    rec = etrecord(d, "zb", [[T(R0)], [T(R0)], [T(R0)]])
    ju = os.path.join(d, "zb.xml")
    pdir = os.path.join(d, "zb_plots")
    rc, out, err, acc, rows = rows_of(d, "zb", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec, "--min-snr", "60", "--junit", ju,
                                      "--plot", pdir)
    exe = [ln for ln in out.splitlines() if ln.startswith("│ Execute")]
    runs = [ln.split("│")[2].strip() for ln in exe]
    check("0-based: the accuracy table numbers the Execute runs 0, 1, 2 (not their ETDump "
          "positions 1-3)", runs == ["0", "1", "2"], f"{runs}\n{out}")
    check("0-based: JSON run 0-2, etdump_run 1-3",
          [(r.get("run"), r.get("etdump_run")) for r in rows] == [(0, 1), (1, 2), (2, 3)],
          str(rows))
    check("0-based: the gate line names run 1 (the failing one)",
          "worst: Execute run 1 output 0" in err, err)
    try:
        names = [tc.get("classname") for tc in ET.parse(ju).getroot().iter("testcase")]
    except (ET.ParseError, OSError) as e:
        names = [repr(e)]
    check("0-based: JUnit classnames Execute.run0-2", names[:3] == ["Execute.run0", "Execute.run1",
                                                                    "Execute.run2"], str(names))
    try:
        with open(os.path.join(pdir, "metric_snr.dat")) as f:
            bars = f.read()
    except OSError as e:
        bars = repr(e)
    check("0-based: plot labels name run 0-2",
          '"run 0 out 0"' in bars and '"run 2 out 0"' in bars and "run 3" not in bars, bars)
    check("0-based: the merge warning speaks of runs 1 and 0 of the block",
          "program outputs of run 1 differ from those of run 0" in err and
          "run 2 differ from those of run 1" not in err, err)


# --- failure reasons -------------------------------------------------------------------------

def reasons(d):
    dump = Dump()
    dump.run([dump.tensor("FLOAT", NEAR, [6])])
    etdp, dbg = dump.write(d, "near")
    rec = etrecord(d, "near", [[T(R0)]])
    rc, out, err, acc, rows = rows_of(d, "near", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec, "--min-cosine", "0.9999999999999999")
    reason = rows[0]["reason"] if rows else ""
    m = re.match(r"1 - cosine = (\S+) above (\S+)$", reason)
    check("reasons: near 1, the cosine gate prints 1 - cosine against 1 - threshold",
          rc == 1 and m and m.group(1) != m.group(2) and float(m.group(1)) > float(m.group(2)),
          f"rc={rc} {reason!r}")
    cos = rows[0]["metrics"]["cosine"] if rows else 0
    if m:
        check("reasons: 1 - cosine is printed to its digits",
              math.isclose(float(m.group(1)), 1 - cos, rel_tol=1e-3), f"{m.group(1)} vs {1 - cos}")
    snr = rows[0]["metrics"]["snr"] if rows else 0
    thr = repr(snr + 1e-9)  # a threshold a hair above the SNR
    rc, out, err, acc, rows = rows_of(d, "near2", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec, "--min-snr", thr)
    reason = rows[0]["reason"] if rows else ""
    m = re.match(r"SNR (\S+) dB below (\S+) dB$", reason)
    check("reasons: an SNR a hair below the threshold prints two different numbers",
          rc == 1 and m and m.group(1) != m.group(2) and float(m.group(1)) < float(m.group(2)),
          f"rc={rc} {reason!r}")
    check("reasons: the stderr verdict carries the same numbers", reason and reason in err, err)
    rc, out, err, acc, rows = rows_of(d, "near3", "--etdump", etdp, "--debug_buffer", dbg,
                                      "--etrecord", rec, "--max-abs", "9.5e-7")
    reason = rows[0]["reason"] if rows else ""
    m = re.match(r"max abs error (\S+) above (\S+) at index 5$", reason)
    check("reasons: max abs error and its threshold differ in print",
          rc == 1 and m and m.group(1) != m.group(2), f"rc={rc} {reason!r}")


# --- delegate timing -----------------------------------------------------------------------

# (name or None, instruction, delegate id, [start, end]) of one run; times in ns
DELEGATE_EVENTS = [
    ("native_call_add.out", 0, None, (1000, 2001000)),
    (None, 1, 0, (2002000, 2002600)),            # XnnpackBackend, 600 ticks
    ("DELEGATE_CALL", 1, None, (2001500, 2003000)),
    (None, 2, "vk_conv", (3000000, 3000250)),    # VulkanBackend, 250 ticks
    ("DELEGATE_CALL", 2, None, (2999000, 3001000)),
    ("Method::execute", 0, None, (500, 4000500)),
]
FC = ("L__self___encoder_proj", "encoder.proj", "torch.nn.modules.linear.Linear")
ENC = ("L__self___encoder", "encoder", "model.Encoder")
DEC = ("L__self___decoder", "decoder", "model.Decoder")


def delegate_model(d):
    evs = []
    for name, instr, did, (s, e) in DELEGATE_EVENTS:
        ev = {"chain_index": 0 if name != "Method::execute" else -1, "instruction_id": instr,
              "start_time": s, "end_time": e}
        if name:
            ev["name"] = name
        if isinstance(did, int):
            ev["delegate_debug_id_int"] = did
        elif did:
            ev["delegate_debug_id_str"] = did
        evs.append({"profile_event": ev})
    src = os.path.join(d, "deleg_src.json")
    with open(src, "w") as f:
        json.dump({"version": 0, "run_data": [{"name": "Execute", "events": evs}]}, f)
    subprocess.run([FLATC, "-b", "--size-prefixed", "-o", d, FBS, src], check=True,
                   capture_output=True)
    etdp = os.path.join(d, "deleg_src.etdp")
    rec = os.path.join(d, "deleg.etrecord")
    nodes = [G.node("aten_add", "aten.add.Tensor", (), 1, None, [ENC]),
             G.node("aten_linear", "aten.linear.default", (), 2, None, [ENC, FC]),
             G.node("aten_conv", "aten.convolution.default", (), 3, None, [DEC])]
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1], "1": [2], "2": [3]}},
                     delegate_map={"forward": {
                         "1": {"name": "XnnpackBackend", "delegate_map": {"0": [2]}},
                         "2": {"name": "VulkanBackend", "delegate_map": {"vk_conv": [3]}}}})
    return etdp, rec


def events_by_name(rep):
    return {e["event_name"]: e for b in rep.get("blocks", []) for e in b["events"]}


def delegate_timing(d, etdp, rec):
    js = os.path.join(d, "deleg.json")
    rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--json", js)
    ev = events_by_name(load_json(js))
    # upstream scales both timestamps, then subtracts; etcompare subtracts the
    # integers, then scales (exact with timestamps near 1e18, hostile7p #8):
    # the same up to upstream's rounding
    want0 = (2002600 - 2002000) / 1e6
    up0, up1 = 2002600 / 1e6 - 2002000 / 1e6, 3000250 / 1e6 - 3000000 / 1e6
    check("delegates: scaled to ms by default, as upstream's default converter",
          rc == 0 and ev.get("0", {}).get("raw") == [want0] and
          abs(want0 - up0) <= 1e-12 * up0 and
          ev["0"].get("unit") == "ms" and ev.get("vk_conv", {}).get("raw") ==
          [(3000250 - 3000000) / 1e6] and abs(250 / 1e6 - up1) <= 1e-12 * up1,
          f"rc={rc} {err} {ev.get('0')}")
    check("delegates: the table header stays (ms) when every row is in ms",
          "p50 (ms)" in out and "delegated:" not in out, out[:400])
    rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--json", js,
                       "--delegate-time-scale", "cycles")
    ev = events_by_name(load_json(js))
    check("delegates: --delegate-time-scale cycles: delegated rows stay in cycles, said so",
          rc == 0 and ev["0"]["raw"] == [600.0] and ev["0"]["unit"] == "cycles" and
          ev["vk_conv"]["raw"] == [250.0] and ev["DELEGATE_CALL"]["unit"] == "ms" and
          "p50 (ms; delegated: cycles)" in out, f"rc={rc} {err} {out[:500]}")
    rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--json", js,
                       "--delegate-time-scale", "XnnpackBackend=cycles",
                       "--delegate_time_scale", "VulkanBackend=us")
    ev = events_by_name(load_json(js))
    check("delegates: BACKEND=UNIT per backend: Xnnpack in cycles, Vulkan us -> ms",
          rc == 0 and ev["0"]["raw"] == [600.0] and ev["0"]["unit"] == "cycles" and
          ev["vk_conv"]["unit"] == "ms" and
          ev["vk_conv"]["raw"] == [3000250 / 1e3 - 3000000 / 1e3], f"rc={rc} {err} {ev}")
    tsv = os.path.join(d, "deleg.tsv")
    rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--tsv", tsv, "--no-table",
                       "--delegate-time-scale", "cycles")
    header = open(tsv).readline() if os.path.exists(tsv) else ""
    check("delegates: the TSV header says cycles too", "p50 (ms; delegated: cycles)" in header,
          header)
    rc, out, err = run("--etdump", etdp, "--delegate-time-scale", "XnnpackBackend=cycles")
    check("delegates: BACKEND=UNIT without --etrecord is a usage error",
          rc == 2 and "needs --etrecord" in err, err)
    rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--delegate-time-scale",
                       "XNNPACKBackend=cycles")
    check("delegates: a BACKEND no delegated event has is exit 3 naming the backends seen",
          rc == 3 and out == "" and 'no delegated event of backend "XNNPACKBackend"' in err and
          "XnnpackBackend, VulkanBackend" in err, f"rc={rc} {err}")


# --- --module -----------------------------------------------------------------------------------

def module(d, etdp, rec):
    def total(name):
        rc, out, err = run("--etdump", etdp, "--etrecord", rec, "--module", name, "--no-table")
        m = re.search(r'= (\S+) ms \((\d+) events?\) \[([^\]]*)\]', out)
        return rc, (float(m.group(1)), int(m.group(2)), m.group(3)) if m else None, err
    # instruction 1: its delegated event (handle 2 by delegate_map) and its DELEGATE_CALL
    # (handle 2 by debug_handle_map), as upstream links them
    linear = (2002600 / 1e6 - 2002000 / 1e6) + (2003000 - 2001500) / 1e6
    for name, want, how in (("encoder.proj", (linear, 2), "module path"),
                            ("L__self___encoder_proj", (linear, 2), "module stack key"),
                            ("torch.nn.modules.linear.Linear", (linear, 2), "module type"),
                            ("Linear", (linear, 2), "module type"),
                            ("encoder", (2.0 + linear, 3), "module path"),
                            ("proj", (linear, 2), "part of a module stack key")):
        rc, got, err = total(name)
        check(f"--module {name}: {want[1]} event(s), matched as {how}",
              rc == 0 and got and math.isclose(got[0], want[0], rel_tol=1e-12) and
              got[1] == want[1] and got[2] == how, f"rc={rc} {got} {err}")
    rc, got, err = total("encoder.prj")
    check("--module: a name that matches nothing is exit 3 with close names",
          rc == 3 and "no module \"encoder.prj\"" in err and
          err.split("the closest: ")[-1].split(", ")[0] == "encoder.proj" and
          len(err.split("the closest: ")[-1].split(", ")) <= 5, f"rc={rc} {err}")


# --- notes -----------------------------------------------------------------------------------

def notes(d, etdp):
    pdir = os.path.join(d, "noteplots")
    rc, out, err = run("--etdump", etdp, "--plot", pdir, "--no-table")
    n = len(os.listdir(pdir)) if os.path.isdir(pdir) else -1
    check("notes: --plot without --debug_buffer says the comparison plots need it",
          rc == 0 and "the comparison plots" in err and "need the debug buffer" in err, err)
    check("notes: --plot ends with the folder and the number of files written",
          err.rstrip().splitlines()[-1:] == [f"etcompare: plots: {n} files written to "
                                               f"{pdir}/ ({sum(f.endswith('.png') for f in os.listdir(pdir))} PNG)"]
          if n > 0 else False, err)
    rc, out, err = run("--etdump", etdp, "--plot", pdir, "--no-table")
    check("notes: a second run into the same folder counts the files it rewrote",
          f"plots: {n} files written" in err, err)


def main():
    d = common.work_dir("gate")
    etdp, rec = delegate_model(d)
    for name, section in (("pairing", lambda: pairing(d)), ("0-based", lambda: zero_based(d)),
                          ("reasons", lambda: reasons(d)),
                          ("delegates", lambda: delegate_timing(d, etdp, rec)),
                          ("module", lambda: module(d, etdp, rec)),
                          ("notes", lambda: notes(d, etdp))):
        with common.harness(f"{name}: the test"):
            section()
    common.finish(d)


if __name__ == "__main__":
    main()
