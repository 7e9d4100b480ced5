#!/usr/bin/python3
"""etcompare on files from a real ExecuTorch v0.5.0 export and C++ runtime
(tests/data/realexport/, see its README), against what upstream's own code
made of exactly these files (tests/data/realexport/oracle/).

Models mlp, cnn, tiny_transformer, qcnn (ETDumps of 3 executions written by
ETDumpGen, debug buffer, ETRecord) and cnn_example_runner (1 execution
written by the unmodified upstream example_runner, with cnn.etrecord). For
each:

1. Tables: the CLI's table is upstream v0.5.0's print_data_tabular line by
   line once the last column (start_time, which the current Inspector has
   and v0.5.0 did not) is dropped; Python's print_data_tabular is the CLI's
   text. The TSV's rows and Python's to_dataframe() hold upstream's
   to_dataframe() values: names, raw durations, statistics (exact floats:
   the same ETDump timings), op types, traces, modules.
2. Linking: every event names the op types, stack traces and module
   hierarchy upstream names (exact strings; upstream's node keys end in
   "_", a TensorBoard workaround of devtools/debug_format/et_schema.py).
3. Values: every Event.debug_data, run_output and reference_output is
   upstream's tensor (dtype, shape, every value) from oracle/<m>_debug_data.npz;
   batch norm's zero-size outputs are empty float32 arrays; the
   transformer's split_with_sizes_copy is one list of 3 arrays, checked
   against the bytes at the offsets upstream's ETDump decoding gives.
   reference_output is upstream's reference_outputs[-1] (test case 1), not
   the input that ran (test case 0): the facade keeps upstream's quirk.
4. ETDump decoding: every event of every run of the CLI's --json "runs" is
   upstream's deserialize_from_etdump_flatcc (oracle/<m>_etdump.json).
"""
import ast
import csv
import io
import json
import os
import re
import sys
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import test_python as T  # noqa: E402

E = T.setup()
import numpy as np  # noqa: E402

D = os.path.join(C.DATA, "realexport")
O = os.path.join(D, "oracle")
# (name of the oracle files and the ETDump, ETRecord's model)
RUNS = [("mlp", "mlp"), ("cnn", "cnn"), ("tiny_transformer", "tiny_transformer"),
        ("qcnn", "qcnn"), ("cnn_example_runner", "cnn")]
FRAMEWORK = ("Method::init", "Program::load_method", "Method::execute")
SCALAR_TYPES = {0: "BYTE", 1: "CHAR", 2: "SHORT", 3: "INT", 4: "LONG", 5: "HALF", 6: "FLOAT",
                7: "DOUBLE", 11: "BOOL"}
GRID = "│╤╪┼╧╒╕╞╡├┤╘╛"


def paths(run, model):
    return (os.path.join(D, run + ".etdp"), os.path.join(D, model + ".etrecord"),
            os.path.join(D, run + "_debug.bin"))


def inspector(run, model):
    etdp, rec, buf = paths(run, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return E.Inspector(etdump_path=etdp, etrecord=rec, debug_buffer_path=buf)


def first_diff(got, want):
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"item {i}: got {a!r:.300} want {b!r:.300}"
    return f"lengths {len(got)} vs {len(want)}" if len(got) != len(want) else ""


def drop_last_column(line):
    """A fancy_grid line without its last column: cut at the last inner
    column separator and close the line with the line's own end."""
    cuts = [i for i, ch in enumerate(line) if ch in GRID]
    if len(cuts) < 3:
        return line
    return line[:cuts[-2]] + line[-1]


def underscored(d):
    """Our node-keyed dict as upstream keys it (node name + "_")."""
    return {k + "_": v for k, v in d.items()}


def modules_as_json(mh):
    """module_hierarchy with tuples as the oracle's JSON has them (lists)."""
    return {k + "_": ({m: list(t) for m, t in v.items()} if v else v) for k, v in mh.items()}


# --- 1. tables ------------------------------------------------------------------------

def check_tables(run, model, insp):
    etdp, rec, buf = paths(run, model)
    p = C.call("--etdump", etdp, "--etrecord", rec, "--debug_buffer", buf, "--no-reference-run")
    C.check(f"{run}: table exit 0", p.returncode == 0, p.stderr)
    # prim ops (et_view) have no debug_handle_map entry by design: no warning for them
    C.check(f"{run}: no warning on the real files", p.stderr == "", p.stderr[:300])
    C.check(f"{run}: Python Inspector.warnings empty", insp.warnings == [], insp.warnings[:2])
    lines = p.stdout.splitlines()
    want = open(os.path.join(O, run + "_tabular.txt"), encoding="utf-8").read().splitlines()
    C.check(f"{run}: the table's last column is start_time (current upstream; v0.5.0 has none)",
            len(lines) > 1 and lines[1].rstrip("│ ").endswith("start_time"), lines[1:2])
    got = [drop_last_column(ln) for ln in lines]
    C.check(f"{run}: table without start_time == upstream v0.5.0 print_data_tabular, "
            f"{len(want)} lines", got == want, first_diff(got, want))
    out = io.StringIO()
    insp.print_data_tabular(file=out)
    C.check(f"{run}: Python print_data_tabular == the CLI's table", out.getvalue() == p.stdout,
            first_diff(out.getvalue().splitlines(), lines))
    return p.stdout


def oracle_frame(run):
    with open(os.path.join(O, run + "_dataframe.csv"), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return rows


def check_tsv(run, model, frame):
    etdp, rec, buf = paths(run, model)
    tsv = os.path.join(WORK, run + ".tsv")
    p = C.call("--etdump", etdp, "--etrecord", rec, "--debug_buffer", buf, "--no-table",
               "--tsv", tsv)
    C.check(f"{run}: --tsv exit 0", p.returncode == 0, p.stderr)
    with open(tsv, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    shown = [r for r in frame if r["event_name"] != "OPERATOR_CALL"]
    C.check(f"{run}: TSV rows are upstream's frame without OPERATOR_CALL, numbered from 0 "
            f"({len(rows)} rows)", len(rows) == len(shown) and
            [r[""] for r in rows] == [str(i) for i in range(len(rows))], len(rows))
    errs = []
    for r, w in zip(rows, shown):
        for col in ("event_block_name", "event_name", "p10 (ms)", "p50 (ms)", "p90 (ms)",
                    "avg (ms)", "min (ms)", "max (ms)", "op_types", "is_delegated_op",
                    "delegate_backend_name"):
            if r[col] != w[col]:
                errs.append(f"row {r['']} {col}: {r[col]!r} vs upstream {w[col]!r}")
        for col in ("stack_traces", "module_hierarchy"):
            if underscored(ast.literal_eval(r[col])) != ast.literal_eval(w[col]):
                errs.append(f"row {r['']} {col}: {r[col]!r:.200} vs upstream {w[col]!r:.200}")
    C.check(f"{run}: TSV cells (times to the last digit, ops, traces, modules) == upstream's "
            f"to_dataframe", not errs, errs[:3])


def check_dataframe(run, insp, frame):
    events = [e for b in json.load(open(os.path.join(O, run + "_events.json")))["event_blocks"]
              for e in b["events"]]
    df = insp.to_dataframe()
    want_cols = [c for c in frame[0] if c]
    C.check(f"{run}: to_dataframe columns: upstream v0.5.0's, then start_time",
            list(df.columns) == want_cols + ["start_time"], list(df.columns))
    C.check(f"{run}: to_dataframe has upstream's {len(frame)} rows", len(df) == len(frame),
            len(df))
    errs = []
    for i, w in enumerate(frame[:len(df)]):
        g = df.iloc[i]
        for col in ("event_block_name", "event_name"):
            if g[col] != w[col]:
                errs.append(f"row {i} {col}: {g[col]!r} vs {w[col]!r}")
        if list(g["raw"]) != ast.literal_eval(w["raw"]):
            errs.append(f"row {i} raw: {g['raw']} vs {w['raw']}")
        for col in ("p10 (ms)", "p50 (ms)", "p90 (ms)", "avg (ms)", "min (ms)", "max (ms)"):
            if repr(float(g[col])) != w[col]:
                errs.append(f"row {i} {col}: {g[col]!r} vs {w[col]}")
        if str(g["op_types"]) != w["op_types"]:
            errs.append(f"row {i} op_types: {g['op_types']!r} vs {w['op_types']}")
        if underscored(g["stack_traces"]) != ast.literal_eval(w["stack_traces"]):
            errs.append(f"row {i} stack_traces: {g['stack_traces']!r:.200}")
        if underscored(g["module_hierarchy"]) != ast.literal_eval(w["module_hierarchy"]):
            errs.append(f"row {i} module_hierarchy: {g['module_hierarchy']!r:.200}")
        if str(g["is_delegated_op"]) != w["is_delegated_op"]:
            errs.append(f"row {i} is_delegated_op")
        for col in ("delegate_debug_identifier", "delegate_backend_name"):
            if not (g[col] is None or g[col] != g[col]) or w[col] != "":
                errs.append(f"row {i} {col}: {g[col]!r} vs {w[col]!r}")
        if len(g["debug_data"]) != len(events[i]["debug_data"]):
            errs.append(f"row {i} debug_data: {len(g['debug_data'])} items")
    C.check(f"{run}: to_dataframe cells == upstream's to_dataframe (raw and statistics exact, "
            f"ops, traces, modules, debug_data counts, {len(frame)} rows)", not errs, errs[:3])


# --- 2. linking and 3. values ----------------------------------------------------------

def tensor_equal(got, want):
    return (isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
            and np.array_equal(got, want, equal_nan=True))


def check_events(run, model, insp, etdump):
    oracle = json.load(open(os.path.join(O, run + "_events.json")))
    npz = np.load(os.path.join(O, run + "_debug_data.npz"))
    dmap = json.load(io.TextIOWrapper(__import__("zipfile").ZipFile(
        paths(run, model)[1]).open("debug_handle_map")))["forward"]
    blocks = insp.event_blocks
    C.check(f"{run}: upstream's {len(oracle['event_blocks'])} EventBlocks",
            [b.name for b in blocks] == [b["name"] for b in oracle["event_blocks"]],
            [b.name for b in blocks])
    link_errs, value_errs, n_events, n_tensors = [], [], 0, 0
    lists = []
    for bi, (b, wb) in enumerate(zip(blocks, oracle["event_blocks"])):
        if b.bundled_input_index != wb["bundled_input_index"]:
            link_errs.append(f"block {bi} bundled_input_index {b.bundled_input_index}")
        if len(b.events) != len(wb["events"]):
            link_errs.append(f"block {bi}: {len(b.events)} events vs {len(wb['events'])}")
        for ei, (e, w) in enumerate(zip(b.events, wb["events"])):
            n_events += 1
            where = f"block {bi} event {ei} {e.name}"
            if e.name != w["name"] or e._instruction_id != w["instruction_id"]:
                link_errs.append(f"{where}: name/instruction {e._instruction_id} vs {w}")
            if e.name in FRAMEWORK:
                # upstream looks up instruction_id 0 for framework events and
                # shows that handle; etcompare links them to nothing (both: no ops)
                if e.debug_handles is not None or w["debug_handles"] != dmap.get("0"):
                    link_errs.append(f"{where}: framework handles {e.debug_handles}")
            else:
                want_h = None if w["debug_handles"] is None else [w["debug_handles"]]
                if e.debug_handles != want_h:
                    link_errs.append(f"{where}: handles {e.debug_handles} vs {want_h}")
            if e.op_types != w["op_types"]:
                link_errs.append(f"{where}: op_types {e.op_types} vs {w['op_types']}")
            if underscored(e.stack_traces) != w["stack_traces"]:
                link_errs.append(f"{where}: stack_traces {e.stack_traces} vs {w['stack_traces']}")
            if modules_as_json(e.module_hierarchy) != w["module_hierarchy"]:
                link_errs.append(f"{where}: module_hierarchy {e.module_hierarchy}")
            if (e.is_delegated_op, e.delegate_backend_name, e.delegate_debug_identifier) != \
                    (w["is_delegated_op"], w["delegate_backend_name"],
                     w["delegate_debug_identifier"]):
                link_errs.append(f"{where}: delegate fields")
            if list(e.perf_data.raw) != w["perf_raw_ms"]:
                link_errs.append(f"{where}: raw {e.perf_data.raw} vs {w['perf_raw_ms']}")
            dd = e.debug_data
            if len(dd) != len(w["debug_data"]):
                value_errs.append(f"{where}: {len(dd)} debug_data vs {len(w['debug_data'])}")
                continue
            for k, (got, ref) in enumerate(zip(dd, w["debug_data"])):
                n_tensors += 1
                if ref in npz:
                    if not tensor_equal(got, npz[ref]):
                        value_errs.append(f"{where} debug_data[{k}]: {type(got).__name__} "
                                          f"{getattr(got, 'shape', '')} vs {npz[ref].shape}")
                else:  # a TensorList: the oracle has only its repr
                    lists.append((where, e._instruction_id, got, ref))
        for kind, got_list in (("run_output", b.run_output), ("reference_output",
                                                              b.reference_output)):
            want = wb[kind]
            if len(got_list or []) != len(want) or not all(
                    tensor_equal(g, npz[r]) for g, r in zip(got_list, want)):
                value_errs.append(f"block {bi} {kind}")
            n_tensors += len(want)
    C.check(f"{run}: linking of all {n_events} events == upstream's (handles, op types, stack "
            f"traces, module hierarchy, raw times)", not link_errs, link_errs[:3])
    C.check(f"{run}: {n_tensors} debug_data/run_output/reference_output values == upstream's "
            f"tensors (dtype, shape, every value)", not value_errs, value_errs[:3])
    return oracle, npz, lists


def check_empty_outputs(run, insp):
    """Batch norm logs outputs 1 and 2 with sizes [0] and offset -1."""
    evs = [e for e in insp.event_blocks[1].events
           if "batch_norm" in e.name or (e.op_types and "batch_norm" in e.op_types[0])]
    ok = bool(evs)
    for e in evs:
        dd = e.debug_data
        ok = ok and len(dd) == 3 and all(
            isinstance(a, np.ndarray) and a.shape == (0,) and a.dtype == np.float32
            for a in dd[1:]) and dd[0].ndim == 4
    C.check(f"{run}: batch norm's zero-size outputs are empty float32 arrays of shape (0,), "
            f"as upstream's ({len(evs)} events)", ok,
            [[(type(a).__name__, getattr(a, "shape", None)) for a in e.debug_data] for e in evs])
    if not ok:
        return
    empty = evs[0].debug_data[1]
    C.check(f"{run}: the empty array is read-only, as every debug buffer view",
            not empty.flags.writeable)
    m = E.compare_results([empty], [evs[0].debug_data[2]])
    C.check(f"{run}: an empty output against an empty reference compares nothing: SNR, MSE "
            f"and cosine NaN (no division by zero)",
            all(len(v) == 1 and v[0] != v[0] for v in m.values()), m)


def check_tensor_list(run, lists, etdump):
    """split_with_sizes_copy: one TensorList of 3 tensors. Upstream's value is
    a list of 3 tensors (the oracle stores its repr); the exact values are the
    bytes at the offsets of upstream's ETDump decoding."""
    raw = open(paths(run, run)[2], "rb").read()
    entries = [ev["debug_event"] for ev in etdump["run_data"][1]["events"]
               if ev["debug_event"] and ev["debug_event"]["debug_entry"]["tensor_list"]]
    C.check(f"{run}: upstream logs one TensorList DebugEvent (split_with_sizes_copy)",
            len(entries) == 1, len(entries))
    C.check(f"{run}: the TensorList is on 2 events (native_call and OPERATOR_CALL)",
            len(lists) == 2, [x[0] for x in lists])
    tl = entries[0]["debug_entry"]["tensor_list"]["tensors"] if entries else []
    for where, instr, got, ref in lists:
        want = [np.frombuffer(raw, dtype="<f4", count=int(np.prod(t["sizes"])),
                              offset=t["offset"]).reshape(t["sizes"]) for t in tl]
        C.check(f"{run}: {where}: debug_data item is a list of 3 float32 arrays of "
                f"upstream's shapes, values == the debug buffer's bytes",
                isinstance(got, list) and len(got) == 3 and len(want) == 3 and
                all(tensor_equal(g, w) for g, w in zip(got, want)),
                [getattr(g, "shape", g) for g in (got if isinstance(got, list) else [got])])
        nums = [float(x) for x in re.findall(r"-?\d+\.\d+e[+-]\d+|-?\d+\.\d+", ref)]
        flat = np.concatenate([g.reshape(-1) for g in got]).astype(np.float64) \
            if isinstance(got, list) else np.zeros(0)
        C.check(f"{run}: {where}: upstream's repr is a list of 3 tensors with these values "
                f"(4 significant digits)",
                ref.startswith("[tensor(") and ref.count("tensor(") == 3 and
                len(nums) == flat.size and np.allclose(nums, flat, rtol=6e-4, atol=6e-5),
                f"{len(nums)} numbers vs {flat.size}")


def check_reference_output(run, model, insp):
    """EventBlock.reference_output keeps upstream's quirk: with
    bundled_input_index -1 (ETDumpGen never writes one) it is
    reference_outputs["forward"][-1], the last test case, not the input that
    ran (test case 0)."""
    io_npz = np.load(os.path.join(D, model + "_io.npz"))
    blk = insp.event_blocks[1]
    ref = blk.reference_output
    C.check(f"{run}: bundled_input_index is -1 (the runtime never writes it)",
            blk.bundled_input_index == -1, blk.bundled_input_index)
    C.check(f"{run}: reference_output is upstream's reference_outputs[-1] = expected1 "
            f"(test case 1)", ref is not None and len(ref) == 1 and
            np.array_equal(ref[0], io_npz["expected1"]), ref)
    C.check(f"{run}: ... which is not the output of the input that ran (expected0)",
            ref is not None and not np.array_equal(ref[0], io_npz["expected0"]))


# --- 4. ETDump decoding ------------------------------------------------------------------

def norm_oracle_event(ev):
    """upstream's dataclass JSON -> the shape of etcompare's --json "runs"."""
    if ev["profile_event"]:
        p = dict(ev["profile_event"])
        p["delegate_debug_id_str"] = p["delegate_debug_id_str"] or ""
        return {"profile_event": p}
    d = ev["debug_event"]
    if d is None:
        return {"allocation_event": ev["allocation_event"]}
    e = d["debug_entry"]
    ts = [e["tensor"]] if e["tensor"] else (e["tensor_list"]["tensors"] if e["tensor_list"]
                                            else [])
    return {"debug_event": {
        "chain_index": d["chain_index"], "instruction_id": d["instruction_id"],
        "delegate_debug_id_int": d["delegate_debug_id_int"],
        "delegate_debug_id_str": d["delegate_debug_id_str"] or "", "name": d["name"] or "",
        "debug_entry": {"val": e["val"], "output": e["output"]["bool_val"] if e["output"] else None,
                        "tensors": [{"scalar_type": SCALAR_TYPES.get(t["scalar_type"]),
                                     "sizes": t["sizes"], "strides": t["strides"],
                                     "offset": t["offset"]} for t in ts]}}}


def check_etdump(run, model, etdump):
    etdp, _, buf = paths(run, model)
    out = os.path.join(WORK, run + ".json")
    p = C.call("--etdump", etdp, "--debug_buffer", buf, "--no-table", "--json", out)
    C.check(f"{run}: --json exit 0", p.returncode == 0, p.stderr)
    runs = C.load_json(out).get("runs", [])
    C.check(f"{run}: {len(etdump['run_data'])} runs decoded (Default + executions), names and "
            f"bundled_input_index -1", [(r["name"], r["bundled_input_index"]) for r in runs] ==
            [(r["name"], r["bundled_input_index"]) for r in etdump["run_data"]],
            [(r.get("name"), r.get("bundled_input_index")) for r in runs])
    errs, n = [], 0
    for ri, (r, w) in enumerate(zip(runs, etdump["run_data"])):
        if len(r["events"]) != len(w["events"]):
            errs.append(f"run {ri}: {len(r['events'])} events vs {len(w['events'])}")
        for ei, (g, want) in enumerate(zip(r["events"], w["events"])):
            n += 1
            want = norm_oracle_event(want)
            if "debug_event" in g and "debug_entry" in g["debug_event"]:
                # the value fields an Int/Bool/Double entry would carry are absent here
                g = json.loads(json.dumps(g))
                for k in ("int_value", "float_value", "double_value", "bool_value"):
                    g["debug_event"]["debug_entry"].pop(k, None)
            if g != want:
                errs.append(f"run {ri} event {ei}: {json.dumps(g)[:300]} vs "
                            f"{json.dumps(want)[:300]}")
    C.check(f"{run}: all {n} decoded events == upstream's deserialization (names, chain and "
            f"instruction ids, delegate ids, times, tensor scalar types, sizes, strides, "
            f"offsets, output flags)", not errs and n > 0, errs[:2])
    return runs


def check_layout_facts(run, etdump):
    """What the README says about the runtime's layout, on upstream's decoding."""
    execs = etdump["run_data"][1:]
    for r in execs[:1]:
        evs = r["events"]
        dbg = [e["debug_event"] for e in evs if e["debug_event"]]
        outs = [d for d in dbg if d["debug_entry"]["output"]]
        C.check(f"{run}: program-output DebugEvents are last in the run, chain_index 2^64-1, "
                f"instruction 0, output.bool_val true",
                outs and all(d["chain_index"] == C.OUT_CHAIN and d["instruction_id"] == 0
                             for d in outs) and evs[-len(outs):] ==
                [e for e in evs if e["debug_event"] in outs])
        pe = [e["profile_event"] for e in evs if e["profile_event"]]
        C.check(f"{run}: Method::execute is the last profile event (chain -1, instruction 0)",
                pe and pe[-1]["name"] == "Method::execute" and pe[-1]["chain_index"] == -1 and
                pe[-1]["instruction_id"] == 0)
    offs = [t["offset"] for r in execs for e in r["events"] if e["debug_event"]
            for t in ([e["debug_event"]["debug_entry"]["tensor"]] if
                      e["debug_event"]["debug_entry"]["tensor"] else
                      e["debug_event"]["debug_entry"]["tensor_list"]["tensors"])
            if t["offset"] >= 0]
    mods = sorted({o % 64 for o in offs})
    want = [16] if run == "cnn_example_runner" else [48]
    C.check(f"{run}: debug buffer offsets are 64-aligned in absolute address: all ≡ {want[0]} "
            f"(mod 64)", mods == want, mods)
    raw = open(os.path.join(D, run + "_debug.bin"), "rb").read()
    size = {0: 1, 1: 1, 4: 8, 6: 4}
    end = max(t["offset"] + int(np.prod(t["sizes"])) * size[t["scalar_type"]]
              for r in execs for e in r["events"] if e["debug_event"]
              for t in ([e["debug_event"]["debug_entry"]["tensor"]] if
                        e["debug_event"]["debug_entry"]["tensor"] else
                        e["debug_event"]["debug_entry"]["tensor_list"]["tensors"])
              if t["offset"] >= 0)
    C.check(f"{run}: the debug buffer is the whole allocation, zero padded after the last "
            f"tensor's end ({end} of {len(raw)} bytes)",
            len(raw) > end and raw[end:].count(0) == len(raw) - end, (len(raw), end))


def check_cli_empty(run, model):
    etdp, rec, buf = paths(run, model)
    p = C.call("--etdump", etdp, "--debug_buffer", buf, "--no-table", "--show-outputs")
    empties = [ln for ln in p.stdout.splitlines() if "Tensor float32 [0]" in ln]
    C.check(f"{run}: --show-outputs prints batch norm's empty outputs as '(empty)  []', "
            f"no statistics", p.returncode == 0 and empties and
            all(ln.strip().endswith("Tensor float32 [0]  (empty)  []") for ln in empties),
            empties[:2])
    rep = C.load_json(os.path.join(WORK, run + ".json"))
    ts = [t for b in rep.get("blocks", []) for e in b["events"] for v in e["debug_data"] or []
          for t in v.get("tensors", []) if t["numel"] == 0]
    C.check(f"{run}: --json: empty tensors have has_data true, offset -1 and no statistics",
            ts and all(t["has_data"] and t["offset"] == -1 and t["shape"] == [0] and
                       "min" not in t and "values" not in t for t in ts), ts[:2])


def check_no_tuple_leaks(run, model, insp):
    """Nodes returning a tuple are named as torch's deserializer names them."""
    g = insp.get_exported_program()
    names = [n.name for n in g.nodes]
    C.check(f"{run}: no graph node is named after a tuple item (getitem...)",
            not [n for n in names if n.startswith("getitem")], names)
    if run != "tiny_transformer":
        return
    split = g.node_for_handle(21)
    C.check(f"{run}: split_with_sizes_copy is aten_split_with_sizes_copy_default, outputs "
            f"getitem_1..3 (the names its users' inputs give)",
            [(n.name, n.outputs) for n in split] ==
            [("aten_split_with_sizes_copy_default", ["getitem_1", "getitem_2", "getitem_3"])],
            [(n.name, n.outputs) for n in split])
    ln = [(n.name, n.outputs[0]) for n in g.nodes if n.target == "aten.native_layer_norm.default"]
    C.check(f"{run}: the two layer norms are aten_native_layer_norm_default and ..._1 (FX's "
            f"numbering), returning getitem and getitem_4",
            ln == [("aten_native_layer_norm_default", "getitem"),
                   ("aten_native_layer_norm_default_1", "getitem_4")], ln)
    p = C.call("--etrecord", paths(run, model)[1], "--graph")
    C.check(f"{run}: --graph shows a tuple node's item names",
            "  aten_split_with_sizes_copy_default (getitem_1, getitem_2, getitem_3) = "
            "aten.split_with_sizes_copy.default(self=aten_view_copy_default_1," in p.stdout,
            p.stdout[:500])
    C.check(f"{run}: Python Graph describe() is the CLI's --graph", g.describe() == p.stdout)


def main():
    global WORK
    WORK = C.work_dir("realexport")
    with C.harness():
        for run, model in RUNS:
            insp = inspector(run, model)
            etdump = json.load(open(os.path.join(O, run + "_etdump.json")))
            check_tables(run, model, insp)
            frame = oracle_frame(run)
            check_tsv(run, model, frame)
            check_dataframe(run, insp, frame)
            _, _, lists = check_events(run, model, insp, etdump)
            if model == "tiny_transformer":
                check_tensor_list(run, lists, etdump)
            if model == "cnn":
                check_empty_outputs(run, insp)
            check_reference_output(run, model, insp)
            check_etdump(run, model, etdump)
            check_layout_facts(run, etdump)
            if model == "cnn":
                check_cli_empty(run, model)
            check_no_tuple_leaks(run, model, insp)
    C.finish(WORK)


if __name__ == "__main__":
    main()
