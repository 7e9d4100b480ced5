"""A device farm (issue 26, item 1): 200 ETDumps of a 6-op chain (4
bundled inputs x 5 devices x 10 runs), each with intermediate outputs,
its program output and a per-run jitter of 1e-5 on every op (threads,
drivers); device "xiaomi13" has a perturbed kernel at op 3, which every
later op inherits. A reference run per input (exact float32 chain) and a
generated ETRecord (tests/etrecord_gen.py). ETDumps are written by one
flatc call over all JSON documents.

python3 -m etcompare.batch --group-summary must:
1. write one summary per (model, bundled input) group: 4 lines, each
   naming "xiaomi13" as the only outlier device, op3 as its differing op,
   and the per-op cumulative SNR distribution (min, median, p95, worst run)
   equal to numpy's over the same float32 values;
2. give the pairwise agreement matrix (Gram matrix through
   etc_agreement_*) equal to the fused pairwise pass (compare_results, i.e.
   etc_metrics, on each pair) to 1e-9 relative, +inf on the diagonal;
3. give the same summaries through a Dask LocalCluster as through the
   process pool (skipped with the reason when dask is missing);
4. fail the gate --min-run-agreement 60 (exit 1) naming exactly the
   xiaomi13 runs, and pass --min-run-agreement 20;
5. take the device from a path component (--device-from -2) when the
   manifest has no device column (same outliers), and write a PNG heat map;
6. give the same agreement per op (each op's intermediate output in the
   debug buffer): xiaomi13 the outlier of op3 and of the ops that inherit
   its error, op3 where the disagreement enters, min pairwise SNR and the
   worst op's matrix equal to numpy float64 (1e-9), and the gate
   --op-agreement-gate naming the xiaomi13 runs for op3..op5 only.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402
import test_python as T  # noqa: E402

E = setup()
import numpy as np  # noqa: E402
import etrecord_gen as G  # noqa: E402
import test_accuracy as A  # noqa: E402
import test_numgap as NG  # noqa: E402
import common as C  # noqa: E402

NOPS, BAD, SHAPE = 6, 3, (8, 16)
INPUTS = 4
DEVICES = ["galaxy-s23", "moto-g", "oneplus11", "pixel7", "xiaomi13"]
OUTLIER = "xiaomi13"
RUNS = 10
OPS = ["aten.linear.default", "aten.relu.default", "aten.add.Tensor", "aten.mul.Tensor"]


def op_name(i):
    return OPS[i % len(OPS)]


def chain(inp, device=None, run=0):
    """The float32 outputs of the ops; a device run adds a 1e-5 jitter to
    each op, the outlier device also a fixed error at op BAD."""
    x0 = np.random.default_rng(100 + inp).uniform(-1, 1, SHAPE[0] * SHAPE[1]).astype(np.float32)
    jit = None if device is None else np.random.default_rng(
        [inp, DEVICES.index(device), run])
    bad = np.random.default_rng(7 + inp).uniform(-0.02, 0.02, x0.size).astype(np.float32)
    k = np.arange(x0.size)
    outs, x = [], x0
    for i in range(NOPS):
        x = (np.float32(0.9) * x + np.float32(0.05) * np.sin(i + k).astype(np.float32)).astype(
            np.float32)
        if jit is not None:
            x = (x * (1 + jit.uniform(-1e-5, 1e-5, x.size))).astype(np.float32)
            if device == OUTLIER and i == BAD:
                x = (x + bad).astype(np.float32)
        outs.append(x)
    return outs


class FarmDump(NG.Dump):
    """NG.Dump whose write() leaves the JSON for one flatc call over all."""

    def write_json(self, d, stem, output, index):
        events = list(self.events)
        events.append({"debug_event": {"chain_index": C.OUT_CHAIN, "instruction_id": 0,
                                       "debug_entry": {"val": "Tensor", "tensor": output,
                                                       "output": {"bool_val": True}}}})
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                         "instruction_id": 0, "start_time": 1,
                                         "end_time": self.t + 1}})
        doc = {"version": 0, "run_data": [{"name": "Execute", "events": events,
                                           "bundled_input_index": index}]}
        src = os.path.join(d, stem + ".json")
        with open(src, "w") as f:
            json.dump(doc, f)
        dbg = os.path.join(d, stem + "_debug.bin")
        with open(dbg, "wb") as f:
            f.write(bytes(self.buf) + b"\0" * 16)
        return src, os.path.join(d, stem + ".etdp"), dbg


def dump(d, stem, outs, index):
    dm = FarmDump()
    for i, x in enumerate(outs):
        dm.op(i, f"native_call_{op_name(i).split('.')[1]}.out",
              [dm.tensor("FLOAT", x.tolist(), SHAPE)])
    return dm.write_json(d, stem, dm.tensor("FLOAT", outs[-1].tolist(), SHAPE), index)


def etrecord(d):
    nodes = [G.node(f"op{i}", op_name(i), inputs=[("self", f"op{i - 1}" if i else "x")],
                    handle=i + 1) for i in range(NOPS)]
    path = os.path.join(d, "chain.etrecord")
    G.write_etrecord(path, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 1] for i in range(NOPS)}},
                     num_outs_map={"forward": {str(i): 1 for i in range(NOPS)}})
    return path


def farm(d):
    """Writes the farm; returns the manifest rows and the values {etdump: outs}."""
    rec = etrecord(d)
    jsons, rows, values = [], [], {}
    refs = {}
    for inp in range(INPUTS):
        src, etdp, dbg = dump(d, f"ref_{inp}", chain(inp), inp)
        jsons.append(src)
        refs[inp] = (etdp, dbg)
    for dev in DEVICES:
        sub = os.path.join(d, dev)
        os.makedirs(sub, exist_ok=True)
        for inp in range(INPUTS):
            for r in range(RUNS):
                outs = chain(inp, dev, r)
                src, etdp, dbg = dump(sub, f"run_{inp}_{r}", outs, inp)
                jsons.append(src)
                values[etdp] = outs
                rows.append({"etdump": etdp, "debug_buffer": dbg, "etrecord": rec,
                             "reference": refs[inp][0], "reference_debug_buffer": refs[inp][1],
                             "device": dev, "inp": inp})
    # one flatc per folder (its -o): all of a folder's documents at once
    by_dir = {}
    for src in jsons:
        by_dir.setdefault(os.path.dirname(src), []).append(src)
    for out_dir, srcs in by_dir.items():
        subprocess.run([C.FLATC, "-b", "--size-prefixed", "-o", out_dir, C.FBS, *srcs],
                       check=True, capture_output=True)
        for s in srcs:
            stem = os.path.splitext(s)[0]
            os.replace(stem + ".bin", stem + ".etdp") if os.path.exists(stem + ".bin") else None
            os.remove(s)
    return rows, values, refs


def manifest(path, rows, device_column=True):
    cols = ["etdump", "debug_buffer", "etrecord", "reference", "reference_debug_buffer"]
    if device_column:
        cols.append("device")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def batch(*args):
    return C.run_bounded([sys.executable, "-m", "etcompare.batch", *args])


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(ln) for ln in f]


def num(v):
    return float(v) if isinstance(v, str) else v


def close(a, b, rel=1e-9):
    a, b = num(a), num(b)
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def snr64(run, ref):
    run, ref = run.astype(np.float64), ref.astype(np.float64)
    dd = float(np.sum((run - ref) ** 2))
    return math.inf if dd == 0 else 10 * math.log10(float(np.sum(ref ** 2)) / dd)


def pairwise64(xs):
    """numpy float64 pairwise SNR: [i][j] = run i against run j as reference."""
    return [[math.inf if i == j else snr64(a, b) for j, b in enumerate(xs)]
            for i, a in enumerate(xs)]


def check_op_agreement(groups, values):
    """The per-op agreement (each op's intermediate output in the debug
    buffer) against numpy float64."""
    ok_names, ok_out, ok_min, bad = True, True, True, []
    enters, worst_ok, gap_ok = [], True, True
    for g in groups:
        rows = {o["op"]: o for o in g.get("op_agreement", [])}
        members = g["etdumps"]
        xiaomi = sorted(e for e in members if f"{os.sep}{OUTLIER}{os.sep}" in e)
        if sorted(rows) != [f"op{i}" for i in range(NOPS)] or any(
                rows[f"op{i}"]["handle"] != [i + 1] or rows[f"op{i}"]["output"] != 0 or
                rows[f"op{i}"]["elements"] != SHAPE[0] * SHAPE[1] for i in range(NOPS)):
            ok_names = False
            bad.append(("names", g["input"], sorted(rows)))
            continue
        for i in range(NOPS):
            o = rows[f"op{i}"]
            runs = sorted(r["etdump"] for r in o["outlier_runs"])
            want = (xiaomi, [OUTLIER]) if i >= BAD else ([], [])
            if (runs, o["outlier_devices"]) != want:
                ok_out = False
                bad.append(("outliers", g["input"], i, len(runs), o["outlier_devices"]))
            m = pairwise64([values[e][i] for e in members])
            low = min(m[a][b] for a in range(len(m)) for b in range(len(m)) if a != b)
            if not close(o["min_pairwise_snr"], low, 1e-9):
                ok_min = False
                bad.append(("min", g["input"], i, o["min_pairwise_snr"], low))
        ordered = [num(o["min_pairwise_snr"]) for o in g["op_agreement"]]
        # worst first; the perturbed op and the two that inherit its error
        # are each > 50 dB below the three before it
        worst3 = sorted(o["op"] for o in g["op_agreement"][:3])
        if ordered != sorted(ordered) or worst3 != [f"op{i}" for i in range(BAD, NOPS)]:
            gap_ok = False
        if max(ordered[:3]) > min(ordered[3:]) - 50:
            gap_ok = False
        enters.append((g.get("op_disagreement_enters") or {}).get("op"))
        w = g.get("op_agreement_worst") or {}
        k = int(w.get("op", "op-1")[2:]) if str(w.get("op", "")).startswith("op") else -1
        if k != int(g["op_agreement"][0]["op"][2:]):
            worst_ok = False
            continue
        m = pairwise64([values[e][k] for e in members])
        for a in range(len(m)):
            for b in range(len(m)):
                if not close(w["snr"][a][b], m[a][b], 1e-9):
                    worst_ok = False
                    bad.append(("matrix", g["input"], k, a, b, w["snr"][a][b], m[a][b]))
    check("op agreement: one entry per op (op0..op5, handle i+1, output 0, 128 elements) "
          "in every group", ok_names and groups, bad[:3])
    check("op agreement: op3..op5's outlier runs are exactly xiaomi13's, the only outlier "
          "device; op0..op2 have none", ok_out and ok_names and groups, bad[:3])
    check("op agreement: min pairwise SNR of every op equals numpy float64's (1e-9)",
          ok_min and ok_names and groups, bad[:3])
    check("op agreement: sorted worst first; op3..op5 the three worst, > 50 dB below "
          "op0..op2", gap_ok and ok_names and groups,
          [[(o["op"], o["min_pairwise_snr"]) for o in g["op_agreement"]] for g in groups][:1])
    check("op agreement: the disagreement enters at op3 (the perturbed op) in every group",
          enters == ["op3"] * INPUTS, enters)
    check("op agreement: the worst op's matrix equals numpy float64 pairwise SNR "
          "(1e-9 relative, 50 x 50, +inf diagonal) in every group",
          worst_ok and ok_names and groups, bad[:3])


def check_task_plan():
    """agreement_tasks without a farm: a large output cut in slices, the
    small op outputs packed into one task, an op some run did not log (no
    debug buffer) left out."""
    from etcompare import batch_groups as BG
    ops = [{"key": f"{i}||native_call_x|0", "output": 0, "size": 128} for i in range(6)]

    def member(name, op_outputs):
        return ({"etdump": name, "debug_buffer": name + ".bin"},
                {"outputs": [200000], "op_outputs": op_outputs})
    members = [member("a", ops), member("b", ops), member("c", ops)]
    tasks = BG.agreement_tasks(members)
    items = [it for t, _runs in tasks for it in t]
    want = [(("output", 0), 0, 66667), (("output", 0), 66667, 133334),
            (("output", 0), 133334, 200000)] + [(("op", o["key"], 0), 0, 128) for o in ops]
    check("task plan: 3 slices of the 200,000-value output, then the 6 small ops in one task",
          items == want and [len(t) for t, _ in tasks] == [1, 1, 1, 6] and
          all(r == [("a", "a.bin"), ("b", "b.bin"), ("c", "c.bin")] for _, r in tasks),
          [len(t) for t, _ in tasks])
    members[1] = member("b", ops[:2])  # ops 2..5 not logged by run b
    members.append(({"etdump": "d", "debug_buffer": None}, {"outputs": [200000]}))
    items = [it[0] for t, _ in BG.agreement_tasks(members) for it in t]
    check("task plan: an op not logged by every run of the group has no matrix (no error)",
          items == [("output", 0)] * 4, items)  # 4 runs: slices of 65,536


def main():
    check_task_plan()
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as d:
        # Dask's worker directories and their locks in this test's folder, not
        # in a /tmp/dask-worker-space shared with other runs
        os.environ["DASK_TEMPORARY_DIRECTORY"] = d
        rows, values, refs = farm(d)
        check("farm: 200 ETDumps written", len(rows) == 200 and
              all(os.path.exists(r["etdump"]) for r in rows), len(rows))
        man = os.path.join(d, "farm.csv")
        manifest(man, rows)
        out, grp = os.path.join(d, "pool.jsonl"), os.path.join(d, "pool.groups.jsonl")
        heat = os.path.join(d, "heat")
        rc, _o, err = batch("-o", out, "--workers", "2", "--group-summary", grp,
                            "--agreement-heatmaps", heat, man)
        lines, groups = read_lines(out), read_lines(grp)
        check("pool: exit 0, 200 run lines without private data",
              rc == 0 and len(lines) == 200 and not any("_farm" in ln for ln in lines),
              f"{rc} {err[-2000:]}")
        check("pool: one summary per (model, bundled input) group",
              [(g["model"], g["input"], g["runs"]) for g in groups] ==
              [("chain.etrecord", str(i), 50) for i in range(INPUTS)],
              [(g.get("model"), g.get("input"), g.get("runs")) for g in groups])
        check("pool: xiaomi13 is the only outlier device of every group",
              groups and all(g["outlier_devices"] == [OUTLIER] for g in groups),
              [g.get("outlier_devices") for g in groups])
        check("pool: op3 (handle 4) is the op whose error distribution differs on xiaomi13",
              groups and all((g["differing_ops"].get(OUTLIER) or {}).get("node") == "op3" and
                             g["differing_ops"][OUTLIER]["handle"] == [4] for g in groups),
              [g.get("differing_ops") for g in groups])
        # the per-op distributions against numpy
        ok, bad = True, []
        for g in groups:
            members = g["etdumps"]
            inp = int(g["input"])
            ref = chain(inp)
            for i, op in enumerate(g["ops"]):
                s = np.array([snr64(values[e][i], ref[i]) for e in members])
                c = op["cumulative"]
                worst = members[int(np.argmin(s))]
                want = (float(s.min()), float(np.percentile(s, 50)), float(np.percentile(s, 95)),
                        float(np.percentile(s, 5)))
                got = (c["min"], c["median"], c["p95"], c["p5"])
                if op["node"] != f"op{i}" or not all(close(x, y, 1e-9)
                                                     for x, y in zip(got, want)) or \
                        c["worst"]["etdump"] != worst or c["worst"]["bundled_input_index"] != inp:
                    ok = False
                    bad.append((g["input"], op["node"], got, want, c["worst"], worst))
        check("pool: per-op cumulative SNR min/p5/median/p95 and worst run equal numpy's "
              "(1e-9)", ok and groups, bad[:3])
        dev_ok = all(g["by_device"][OUTLIER]["ops"][BAD]["cumulative"]["median"] < 60 and
                     g["by_device"]["pixel7"]["ops"][BAD]["cumulative"]["median"] > 80
                     for g in groups)
        check("pool: per-device distributions: op3 ~40 dB on xiaomi13, >80 dB on pixel7",
              dev_ok and groups)
        # the Gram-matrix agreement against the fused pairwise pass
        g = groups[0] if groups else None
        worst_rel, n_pairs, bad = 0.0, 0, []
        if g:
            snr = g["agreement"][0]["snr"]
            members = g["etdumps"]
            for i, a in enumerate(members):
                for j, b in enumerate(members):
                    if i == j:
                        if num(snr[i][j]) != math.inf:
                            bad.append((i, j, snr[i][j]))
                        continue
                    want = E.compare_results([values[b][-1]], [values[a][-1]])["snr"][0]
                    got = num(snr[i][j])
                    n_pairs += 1
                    if not close(got, want, 1e-9):
                        bad.append((i, j, got, want))
                    elif math.isfinite(want):
                        worst_rel = max(worst_rel, abs(got - want) / abs(want))
        check(f"agreement: {n_pairs} pairs of the Gram matrix equal etc_metrics' fused pass "
              f"to 1e-9 relative (worst {worst_rel:.1e}), +inf on the diagonal",
              g and n_pairs == 50 * 49 and not bad, bad[:3])
        check("agreement: xiaomi13's runs are the outlier runs (10 of 50)",
              g and sorted(r["etdump"] for r in g["agreement"][0]["outlier_runs"]) ==
              sorted(e for e in g["etdumps"] if f"{os.sep}{OUTLIER}{os.sep}" in e))
        check_op_agreement(groups, values)
        png = (g or {}).get("agreement", [{}])[0].get("heatmap")
        check("agreement: a PNG heat map of the matrix",
              png and os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
              png)
        png = ((g or {}).get("op_agreement_worst") or {}).get("heatmap")
        check("op agreement: a PNG heat map of the worst op's matrix",
              png and os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
              png)

        # 3. Dask
        try:
            import dask  # noqa: F401
            import distributed  # noqa: F401
            have_dask = True
        except ImportError as e:
            have_dask = False
            print(f"skip: Dask half ({e})")
        if have_dask:
            dout, dgrp = os.path.join(d, "dask.jsonl"), os.path.join(d, "dask.groups.jsonl")
            rc, _o, err = batch("-o", dout, "--workers", "2", "--scheduler", "local",
                                "--group-summary", dgrp, "--agreement-heatmaps", heat, man)
            if not C.hung_under_asan(rc, "the batch on a Dask LocalCluster"):
                check("dask: exit 0 and the same group summaries as the pool (op agreement too)",
                      rc == 0 and read_lines(dgrp) == groups and groups, f"{rc} {err[-1500:]}")

        # 4. the gate
        g60 = os.path.join(d, "g60.jsonl")
        rc, _o, err = batch("-o", os.path.join(d, "g60_runs.jsonl"), "--workers", "2",
                            "--group-summary", g60, "--min-run-agreement", "60",
                            "--op-agreement-gate", man)
        low = sorted(e for x in read_lines(g60) for e in x["agreement"][0]["below_min_agreement"])
        check("gate: --min-run-agreement 60 exits 1 naming exactly the 40 xiaomi13 runs",
              rc == 1 and low == sorted(r["etdump"] for r in rows if r["device"] == OUTLIER),
              f"{rc} {len(low)} {err[-500:]}")
        xiaomi = sorted(r["etdump"] for r in rows if r["device"] == OUTLIER)
        per_op = {}
        for x in read_lines(g60):
            for o in x["op_agreement"]:
                per_op.setdefault(o["op"], []).extend(o.get("below_min_agreement") or [])
        check("gate --op-agreement-gate: ops op3..op5 below 60 dB on exactly the xiaomi13 "
              "runs, op0..op2 on none",
              sorted(per_op) == [f"op{i}" for i in range(NOPS)] and
              all(sorted(per_op[f"op{i}"]) == (xiaomi if i >= BAD else [])
                  for i in range(NOPS)), {k: len(v) for k, v in per_op.items()})
        rc, _o, err = batch("-o", os.path.join(d, "g20_runs.jsonl"), "--workers", "2",
                            "--group-summary", os.path.join(d, "g20.jsonl"),
                            "--min-run-agreement", "20", "--op-agreement-gate", man)
        check("gate: --min-run-agreement 20 passes (exit 0)", rc == 0, f"{rc} {err[-500:]}")

        # 5. the device from the path
        man2 = os.path.join(d, "farm_nodev.csv")
        manifest(man2, rows, device_column=False)
        p2 = os.path.join(d, "path.groups.jsonl")
        rc, _o, err = batch("-o", os.path.join(d, "path.jsonl"), "--workers", "2",
                            "--group-summary", p2, "--device-from", "-2", man2)
        got = read_lines(p2)
        check("--device-from -2: the folder is the device, same outliers and op",
              rc == 0 and len(got) == INPUTS and
              all(x["outlier_devices"] == [OUTLIER] and x["devices"] == DEVICES and
                  x["differing_ops"][OUTLIER]["node"] == "op3" for x in got),
              f"{rc} {err[-500:]} {[x.get('outlier_devices') for x in got]}")
    sys.exit(1 if T.failed or not T.passed else 0)


if __name__ == "__main__":
    main()
