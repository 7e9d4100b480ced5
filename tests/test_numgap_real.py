#!/usr/bin/python3
"""Numeric gap on the models people debug on phones (issue 12), end to end:
ETDumps built by flatc from readable JSON, debug buffers written here,
ETRecords by tests/etrecord_gen.py, .npz references by
tests/data/npz/make_npz.py. Every expected number is computed here with
numpy in float64.

1. Delegates: an XNNPACK-like partition logs five inner per-op outputs (by
   delegate id, mapped through the ETRecord's delegate_map); the third is
   perturbed. The first divergence is that op's node and the DELEGATE_CALL
   row is absent. Without inner debug data the DELEGATE_CALL keeps its fused
   group and its logged input is never taken as its output.
2. Quantization: int8 runtime outputs against float32 references,
   dequantized with the ETRecord's quantize/dequantize nodes (per tensor, per
   channel) and with a --quant-params file (one per-channel entry); SNRs
   against numpy. An int8 output without parameters says what it needs.
3. Layout: NHWC runtime against NCHW reference: identical after the
   permutation; one perturbed element is reported at its NCHW index.
4. SNR drop: a DAG with a residual branch where two ops introduce error:
   the top two drops are those two ops; drops checked against numpy.
5. --distance mse|l1|snr against numpy; the TSV read back with csv and
   checked against upstream's column semantics.
6. Mismatched records: a reference ETDump keyed by a record that is not its
   own is exit 3 naming the file and the flag; --force goes on. Event names
   that contradict the linked ops are refused; kernels named differently
   but containing their op pass.
7. Upstream keeps, per handle, the event with the largest instruction id:
   etcompare compares the later event of a group (execution order).
"""
import ast
import csv
import json
import math
import os
import sys
import tempfile

import numpy as np

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import etrecord_gen as G  # noqa: E402
import make_npz as NPZ  # noqa: E402
import common as C  # noqa: E402
from test_accuracy import OUT_CHAIN, check, run  # noqa: E402
import test_accuracy as A  # noqa: E402

NP_DTYPE = {"FLOAT": "<f4", "CHAR": "<i1", "BYTE": "<u1", "INT": "<i4"}


class Dump(A.Dump):
    """One Execute run of explicit events; tensors from numpy arrays."""

    def __init__(self):
        super().__init__()
        self.events = []
        self.t = 1000

    def tensor(self, dtype, arr, shape=None):
        arr = np.asarray(arr)
        shape = list(shape if shape is not None else arr.shape)
        while len(self.buf) % 16:
            self.buf.append(0)
        off = len(self.buf)
        self.buf += np.ascontiguousarray(arr, dtype=NP_DTYPE[dtype]).tobytes()
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
        return {"scalar_type": dtype, "sizes": shape, "strides": strides, "offset": off}

    def _debug(self, instr, tensors, delegate=None):
        dbg = {"chain_index": 0, "instruction_id": instr}
        if isinstance(delegate, str):
            dbg["delegate_debug_id_str"] = delegate
        elif delegate is not None:
            dbg["delegate_debug_id_int"] = delegate
        if len(tensors) == 1:
            dbg["debug_entry"] = {"val": "Tensor", "tensor": tensors[0]}
        else:
            dbg["debug_entry"] = {"val": "TensorList", "tensor_list": {"tensors": tensors}}
        return {"debug_event": dbg}

    def _profile(self, instr, name=None, delegate=None):
        p = {"chain_index": 0, "instruction_id": instr, "start_time": self.t,
             "end_time": self.t + 500}
        self.t += 1000
        if name is not None:
            p["name"] = name
        if delegate is not None:
            p["delegate_debug_id_str" if isinstance(delegate, str) else
              "delegate_debug_id_int"] = delegate
            p["delegate_debug_metadata"] = []
        return {"profile_event": p}

    def op(self, instr, name, tensors):
        """A kernel call: its outputs, native_call_<op>, OPERATOR_CALL."""
        self.events += [self._debug(instr, tensors), self._profile(instr, name),
                        self._profile(instr, "OPERATOR_CALL")]

    def delegate_op(self, instr, did, tensors=None):
        """An event inside a delegate, named by its delegate id."""
        if tensors:
            self.events.append(self._debug(instr, tensors, did))
        self.events.append(self._profile(instr, None, did))

    def delegate_call(self, instr, tensors):
        """The DELEGATE_CALL: the runtime logs every argument, inputs first."""
        for t in tensors:
            self.events.append(self._debug(instr, [t]))
        self.events.append(self._profile(instr, "DELEGATE_CALL"))

    def write(self, d, stem):
        events = list(self.events)
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                         "instruction_id": 0, "start_time": 1,
                                         "end_time": self.t + 1}})
        self.runs = [{"name": "Execute", "events": events}]
        return super().write(d, stem)


def f32(a):
    return np.asarray(a, dtype=np.float32)


def snr64(ref, act):
    ref = np.asarray(ref, dtype=np.float64).ravel()
    act = np.asarray(act, dtype=np.float64).ravel()
    e = np.sum((act - ref) ** 2)
    return math.inf if e == 0 else 10 * math.log10(np.sum(ref ** 2) / e)


def close(x, y, rel=1e-9):
    x = float(x) if isinstance(x, str) else x
    if x is None or y is None:
        return False
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= rel * max(abs(x), abs(y), 1e-300)


def write_npz(path, items):
    """items: (name, float32 array) in file order."""
    NPZ.write_npz(path, [(k, NPZ.npy("<f4", tuple(np.shape(x)), f32(x).tobytes()))
                         for k, x in items])
    return path


def ng_offset(d, npz, name):
    """Byte offset of array `name`'s data in the .npz (as the JSON reports it)."""
    import zipfile
    with zipfile.ZipFile(npz) as z:
        info = z.getinfo(name + ".npy")
        with open(npz, "rb") as f:
            f.seek(info.header_offset + 26)
            ln, le = np.frombuffer(f.read(4), "<u2")
            f.seek(info.header_offset + 30 + ln + le)
            head = f.read(10)
        hl = int(np.frombuffer(head[8:10], "<u2")[0])
        return info.header_offset + 30 + int(ln) + int(le) + 10 + hl


def gap(d, tag, *args):
    js = os.path.join(d, tag + ".json")
    rc, out, err = run(*args, "--json", js)
    doc = A.load_json(js) if os.path.exists(js) else {}
    return rc, out, err, (doc.get("numeric_gap") or {})


def trace(name, line):
    return G.trace_str([("/home/me/model.py", 20, "forward", "return self.net(x)"),
                        ("/home/me/model.py", line, "net", f"y = {name}(x)")])


def rng(seed):
    return np.random.default_rng(seed)


# --- 1. delegates ----------------------------------------------------------------------

DEL_OPS = ["aten.convolution.default", "aten.relu.default", "aten.add.Tensor",
           "aten.mul.Tensor", "aten.hardtanh.default"]


def delegate_record(d, stem):
    nodes = [G.node(f"op_{h}", DEL_OPS[h - 1], inputs=[("self", f"op_{h - 1}" if h > 1 else "x")],
                    handle=h, trace=trace(f"layer{h}", 30 + h)) for h in range(1, 6)]
    path = os.path.join(d, stem + ".etrecord")
    G.write_etrecord(path, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1, 2, 3, 4, 5]}},
                     delegate_map={"forward": {"0": {
                         "name": "XnnpackBackend",
                         "delegate_map": {str(k): [k + 1] for k in range(5)}}}})
    return path


def test_delegate(d):
    r = rng(1)
    x = f32(r.uniform(-1, 1, (2, 8)))
    ref = []
    v = x
    for _ in range(5):
        v = f32(np.tanh(v * 1.1 + 0.1))
        ref.append(v)
    act = [a.copy() for a in ref]
    act[2] = f32(act[2] + r.uniform(-0.02, 0.02, act[2].shape))
    for k in (3, 4):  # later ops inherit the error
        act[k] = f32(np.tanh(act[k - 1] * 1.1 + 0.1))
    rec = delegate_record(d, "del")
    npz = write_npz(os.path.join(d, "del.npz"), [(str(h + 1), ref[h]) for h in range(5)])
    dm = Dump()
    for k in range(5):
        dm.delegate_op(0, k, [dm.tensor("FLOAT", act[k])])
    dm.delegate_call(0, [dm.tensor("FLOAT", x), dm.tensor("FLOAT", act[4])])
    etdp, dbg = dm.write(d, "del_dev")
    rc, out, err, ng = gap(d, "del", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--min-snr", "60")
    rows = ng.get("rows", [])
    check("delegate: five inner rows, one per op, in execution order",
          [r_["aot_debug_handle"] for r_ in rows] == [[1], [2], [3], [4], [5]] and
          [r_["runtime_ops"] for r_ in rows] == [[str(k)] for k in range(5)],
          f"rc={rc} {err} {[(r_['aot_debug_handle'], r_['runtime_ops']) for r_ in rows]}")
    check("delegate: the DELEGATE_CALL row is absent (its backend's inner events carry data)",
          all(r_["event_name"] != "DELEGATE_CALL" for r_ in rows) and
          not [u for u in ng.get("unmatched", []) if u["name"] == "DELEGATE_CALL"],
          json.dumps(ng.get("unmatched")))
    fd = ng.get("first_divergence")
    row = rows[fd] if isinstance(fd, int) and fd < len(rows) else {}
    check("delegate: first divergence is the third inner op's node op_3",
          rc == 1 and fd == 2 and row.get("aot_ops") == ["op_3"] and
          row.get("runtime_nodes") == "op_3" and
          row.get("runtime_op_types") == "aten.add.Tensor" and
          row.get("delegate_backend") == "XnnpackBackend", f"rc={rc} fd={fd} {row}")
    check("delegate: SNRs of the inner ops match numpy",
          all(close(rows[k]["metrics"]["snr"], snr64(ref[k], act[k])) for k in range(5)),
          [(rows[k]["metrics"]["snr"], snr64(ref[k], act[k])) for k in range(len(rows))])
    check("delegate: the first-divergence block names node, op type, event, handles, source",
          "First divergence: row 2, node op_3: aten.add.Tensor (debug handles (3,), "
          "XnnpackBackend event 2, instruction 0)" in out and "source: model.py:33" in out, out[-1500:])
    check("delegate: the verdict on stderr names the node",
          "first divergence at row 2 of 5: op_3 aten.add.Tensor (XnnpackBackend event 2) at "
          "model.py:33"
          in err, err)

    # string delegate ids: "conv" and "add" are keys, "block0/relu" contains the key "relu"
    srec = os.path.join(d, "del_str.etrecord")
    nodes = [G.node(f"op_{h}", DEL_OPS[h - 1], handle=h) for h in range(1, 4)]
    G.write_etrecord(srec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1, 2, 3]}},
                     delegate_map={"forward": {"0": {
                         "name": "QnnBackend",
                         "delegate_map": {"conv": [1], "relu": [2], "add": [3]}}}})
    dm = Dump()
    for did, k in (("conv", 0), ("block0/relu", 1), ("add", 2)):
        dm.delegate_op(0, did, [dm.tensor("FLOAT", act[k])])
    dm.delegate_call(0, [dm.tensor("FLOAT", x), dm.tensor("FLOAT", act[2])])
    etdp, dbg = dm.write(d, "del_str")
    rc, out, err, ng = gap(d, "del_str", "--etdump", etdp, "--debug_buffer", dbg,
                           "--etrecord", srec, "--reference-intermediates", npz,
                           "--min-snr", "60")
    rows = ng.get("rows", [])
    check("delegate (string ids, substring fallback): three inner rows, first divergence op_3",
          [x_["runtime_ops"] for x_ in rows] == [["conv"], ["block0/relu"], ["add"]] and
          [x_["aot_ops"] for x_ in rows] == [["op_1"], ["op_2"], ["op_3"]] and
          ng.get("first_divergence") == 2 and rc == 1, f"rc={rc} {err} {rows and rows[0]}")

    # the same partition without inner debug data: the DELEGATE_CALL keeps the fused group
    dm = Dump()
    for k in range(5):
        dm.delegate_op(0, k)
    dm.delegate_call(0, [dm.tensor("FLOAT", x), dm.tensor("FLOAT", ref[4])])
    etdp, dbg = dm.write(d, "del_fused")
    rc, out, err, ng = gap(d, "del_fused", "--etdump", etdp, "--debug_buffer", dbg,
                           "--etrecord", rec, "--reference-intermediates", npz)
    rows = ng.get("rows", [])
    check("delegate without inner data: one fused row, the DELEGATE_CALL against handle 5",
          rc == 0 and len(rows) == 1 and rows[0]["event_name"] == "DELEGATE_CALL" and
          rows[0]["aot_debug_handle"] == [1, 2, 3, 4, 5] and
          rows[0]["runtime_debug_handle"] == [1, 2, 3, 4, 5] and
          rows[0]["aot_intermediate_output"]["offset"] == ng_offset(d, npz, "5"),
          f"rc={rc} {err} {rows}")
    check("delegate without inner data: its logged input is not taken as its output",
          len(rows) == 1 and rows[0]["metrics"]["identical"] and rows[0]["output"] == 0,
          rows[:1])


# --- 2. quantization --------------------------------------------------------------------

QPT = "quantized_decomposed.quantize_per_tensor.default"
DQPT = "quantized_decomposed.dequantize_per_tensor.default"
QPC = "quantized_decomposed.quantize_per_channel.default"


def raw_node(name, target_op, args, handle=None):
    """A node with literal arguments: args are (name, union key, value)."""
    n = G.node(name, target_op, handle=handle)
    n["inputs"] = [{"name": k, "arg": ({kind: v} if kind != "as_tensor" else
                                       {"as_tensor": {"name": v}})} for k, kind, v in args]
    return n


def quantize(x, s, z, axis=None):
    x = np.asarray(x, dtype=np.float64)
    if axis is None:
        return np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    shp = [1] * x.ndim
    shp[axis] = -1
    s_ = np.asarray(s).reshape(shp)
    z_ = np.asarray(z).reshape(shp)
    return np.clip(np.round(x / s_) + z_, -128, 127).astype(np.int8)


def dequant(q, s, z, axis=None):
    q = q.astype(np.float64)
    if axis is None:
        return (q - z) * s
    shp = [1] * q.ndim
    shp[axis] = -1
    return (q - np.asarray(z, dtype=np.float64).reshape(shp)) * \
        np.asarray(s, dtype=np.float64).reshape(shp)


def test_quant(d):
    r = rng(2)
    # handle 1: a conv whose single user dequantizes it (scale 0.02, zero point -5)
    # handle 2: quantize_per_tensor itself (scale 0.05, zero point 3)
    # handle 3: quantize_per_channel with literal lists along axis 1
    # handle 4: a relu whose int8 output has no parameters anywhere
    ref1 = f32(r.uniform(-2, 2, (2, 3, 4)))
    ref2 = f32(r.uniform(-3, 3, (2, 6)))
    ref3 = f32(r.uniform(-1, 1, (2, 3, 5)))
    ref4 = f32(r.uniform(0, 1, (8,)))
    s3, z3 = [0.01, 0.02, 0.03], [0, 2, -1]
    q1, q2 = quantize(ref1, 0.02, -5), quantize(ref2, 0.05, 3)
    q3, q4 = quantize(ref3, s3, z3, axis=1), quantize(ref4, 0.01, 0)
    nodes = [
        G.node("aten_convolution_default", "aten.convolution.default",
               inputs=[("input", "x")], handle=1),
        raw_node("dequantize_1", DQPT, [("input", "as_tensor", "aten_convolution_default"),
                                        ("scale", "as_float", 0.02),
                                        ("zero_point", "as_int", -5),
                                        ("quant_min", "as_int", -128),
                                        ("quant_max", "as_int", 127)]),
        raw_node("quantize_2", QPT, [("input", "as_tensor", "dequantize_1"),
                                     ("scale", "as_float", 0.05), ("zero_point", "as_int", 3),
                                     ("quant_min", "as_int", -128),
                                     ("quant_max", "as_int", 127)], handle=2),
        raw_node("quantize_3", QPC, [("input", "as_tensor", "quantize_2"),
                                     ("scales", "as_floats", s3),
                                     ("zero_points", "as_ints", z3),
                                     ("axis", "as_int", 1),
                                     ("quant_min", "as_int", -128),
                                     ("quant_max", "as_int", 127)], handle=3),
        G.node("aten_relu_default", "aten.relu.default", inputs=[("self", "quantize_3")],
               handle=4),
    ]
    rec = os.path.join(d, "q.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 1] for i in range(4)}})
    dm = Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("CHAR", q1)])
    dm.op(1, "native_call_quantize_per_tensor.out", [dm.tensor("CHAR", q2)])
    dm.op(2, "native_call_quantize_per_channel.out", [dm.tensor("CHAR", q3)])
    dm.op(3, "native_call_relu.out", [dm.tensor("CHAR", q4)])
    etdp, dbg = dm.write(d, "q_dev")
    npz = write_npz(os.path.join(d, "q.npz"), [("1", ref1), ("2", ref2), ("3", ref3),
                                                ("4", ref4)])
    rc, out, err, ng = gap(d, "q", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz)
    rows = ng.get("rows", [])
    exp = [snr64(ref1, dequant(q1, 0.02, -5)), snr64(ref2, dequant(q2, 0.05, 3)),
           snr64(ref3, dequant(q3, s3, z3, axis=1))]
    got = [(x["quant_source"], x["metrics"] and x["metrics"]["snr"]) for x in rows]
    check("quant (ETRecord): int8 dequantized by the user's dequantize, the node's own "
          "quantize, and a per-channel quantize; SNRs match numpy",
          len(rows) == 4 and all(rows[k]["quant_source"] == "etrecord" and
                                 close(rows[k]["metrics"]["snr"], exp[k]) for k in range(3)),
          f"rc={rc} {err} {got} want {exp}")
    check("quant (ETRecord): the row says which node gave the parameters",
          len(rows) == 4 and "dequantize_1" in rows[0]["quant"] and
          "quantize_2" in rows[1]["quant"] and "per channel (3) along axis 1" in rows[2]["quant"],
          [x["quant"] for x in rows])
    check("quant: an int8 output without parameters is not compared and says what it needs",
          len(rows) == 4 and rows[3]["status"] == "dtype mismatch" and
          rows[3]["reason"].startswith("needs quantization parameters (--quant-params)"),
          rows[3:] and rows[3]["reason"])

    # a --quant-params file: handle 1 per tensor, handle 4 per channel along axis 0
    q4b_s, q4b_z = [0.01, 0.02], [1, -2]
    ref4b = f32(r.uniform(-1, 1, (2, 4)))
    q4b = quantize(ref4b, q4b_s, q4b_z, axis=0)
    dm = Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("CHAR", q1)])
    dm.op(3, "native_call_relu.out", [dm.tensor("CHAR", q4b)])
    etdp, dbg = dm.write(d, "qf_dev")
    npz = write_npz(os.path.join(d, "qf.npz"), [("1", ref1), ("4", ref4b)])
    qp = os.path.join(d, "qp.json")
    with open(qp, "w") as f:
        json.dump({"1": {"scale": 0.02, "zero_point": -5},
                   "(4,)": {"scale": q4b_s, "zero_point": q4b_z, "axis": 0}}, f)
    rc, out, err, ng = gap(d, "qf", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--quant-params", qp)
    rows = ng.get("rows", [])
    exp = [snr64(ref1, dequant(q1, 0.02, -5)), snr64(ref4b, dequant(q4b, q4b_s, q4b_z, 0))]
    check("quant (--quant-params): per tensor and per channel entries, SNRs match numpy",
          rc == 0 and len(rows) == 2 and
          all(rows[k]["quant_source"] == "quant-params" and
              close(rows[k]["metrics"]["snr"], exp[k]) for k in range(2)),
          f"rc={rc} {err} {[(x['quant_source'], x['metrics']) for x in rows]} want {exp}")
    check("quant (--quant-params): the table marks the dequantized rows",
          "deq. quant-params]" in out, out[-800:])
    bad = os.path.join(d, "qp_bad.json")
    with open(bad, "w") as f:
        json.dump({"4": {"scale": [0.1, 0.2], "zero_point": [0, 0]}}, f)
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--quant-params", bad)
    check("quant: a per-channel entry without axis is exit 3 naming the file and key",
          rc == 3 and "qp_bad.json" in err and "axis" in err and '"4"' in err, f"rc={rc} {err}")


# --- 3. layout ----------------------------------------------------------------------------

def test_layout(d):
    r = rng(3)
    ref = f32(r.uniform(-1, 1, (1, 3, 4, 5)))  # NCHW
    nhwc = np.ascontiguousarray(ref.transpose(0, 2, 3, 1))
    rec = os.path.join(d, "lay.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(
        [G.node("aten_convolution_default", "aten.convolution.default", handle=1)])},
        debug_handle_map={"forward": {"0": [1]}})
    npz = write_npz(os.path.join(d, "lay.npz"), [("1", ref)])
    dm = Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("FLOAT", nhwc)])
    etdp, dbg = dm.write(d, "lay_dev")
    rc, out, err, ng = gap(d, "lay", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--max-abs", "0")
    rows = ng.get("rows", [])
    check("layout: NHWC against NCHW is identical after the permutation",
          rc == 0 and len(rows) == 1 and rows[0]["metrics"]["identical"] and
          rows[0]["layout"] == "NHWC->NCHW", f"rc={rc} {err} {rows}")
    pert = nhwc.copy()
    n, c, h, w = 0, 2, 1, 3
    pert[n, h, w, c] += np.float32(0.5)
    dm = Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("FLOAT", pert)])
    etdp, dbg = dm.write(d, "lay_dev2")
    rc, out, err, ng = gap(d, "lay2", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--max-abs", "0")
    rows = ng.get("rows", [])
    want = int(np.ravel_multi_index((n, c, h, w), ref.shape))
    m = rows[0]["metrics"] if rows else {}
    check("layout: a perturbed element is reported at its NCHW index",
          rc == 1 and m.get("max_abs_index") == want and m.get("mismatch_count") == 1 and
          close(m.get("snr"), snr64(ref, pert.transpose(0, 3, 1, 2))),
          f"rc={rc} want index {want}: {m}")
    rc, out, err, ng = gap(d, "lay3", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--layout", "none")
    rows = ng.get("rows", [])
    check("layout: --layout none leaves a shape mismatch",
          rc == 1 and rows and rows[0]["status"] == "shape mismatch", f"rc={rc} {rows}")
    # two such rows: the same elements, so not taken for another program
    rec2 = os.path.join(d, "lay2.etrecord")
    G.write_etrecord(rec2, programs={"forward": G.program(
        [G.node("aten_convolution_default", "aten.convolution.default", handle=1),
         G.node("aten_convolution_default_1", "aten.convolution.default", handle=2)])},
        debug_handle_map={"forward": {"0": [1], "1": [2]}})
    npz2 = write_npz(os.path.join(d, "lay2.npz"), [("1", ref), ("2", ref)])
    dm = Dump()
    dm.op(0, "native_call_convolution.out", [dm.tensor("FLOAT", nhwc)])
    dm.op(1, "native_call_convolution.out", [dm.tensor("FLOAT", nhwc)])
    etdp, dbg = dm.write(d, "lay_dev3")
    rc, out, err, ng = gap(d, "lay4", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord",
                           rec2, "--reference-intermediates", npz2, "--layout", "none")
    rows = ng.get("rows", [])
    check("layout: --layout none on two channels-last rows: shape mismatches, not another "
          "program", rc == 1 and len(rows) == 2 and
          all(x["status"] == "shape mismatch" for x in rows) and "same program" not in err,
          f"rc={rc} {err[-300:]} {rows}")


# --- 4. SNR drop on a DAG with a residual branch ------------------------------------------

def test_snr_drop(d):
    r = rng(4)
    x = r.uniform(-1, 1, (4, 16))
    # a = conv(x); b = relu(a) + error; c = mul(b); e = add(a, c) (residual);
    # f = hardtanh(e) + error; g = mul(f)
    names = ["a", "b", "c", "e", "f", "g"]
    ops = {"a": "aten.convolution.default", "b": "aten.relu.default", "c": "aten.mul.Tensor",
           "e": "aten.add.Tensor", "f": "aten.hardtanh.default", "g": "aten.mul.Scalar"}
    ins = {"a": ["x"], "b": ["a"], "c": ["b"], "e": ["a", "c"], "f": ["e"], "g": ["f"]}

    def forward(noisy):
        v = {}
        v["a"] = f32(x * 0.8 + 0.1)
        v["b"] = f32(np.maximum(v["a"], 0) * 1.0)
        if noisy:
            v["b"] = f32(v["b"] + rng(40).normal(0, 0.01, v["b"].shape))
        v["c"] = f32(v["b"] * 1.5)
        v["e"] = f32(v["a"] + v["c"])
        v["f"] = f32(np.clip(v["e"], -1, 1))
        if noisy:
            v["f"] = f32(v["f"] + rng(41).normal(0, 0.05, v["f"].shape))
        v["g"] = f32(v["f"] * 2.0)
        return v

    ref, act = forward(False), forward(True)
    nodes = [G.node(f"node_{k}", ops[k],
                    inputs=[(f"arg{j}", f"node_{p}" if p != "x" else "x")
                            for j, p in enumerate(ins[k])],
                    handle=i + 1, trace=trace(k, 50 + i)) for i, k in enumerate(names)]
    rec = os.path.join(d, "dag.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 1] for i in range(6)}})
    kern = {"a": "convolution", "b": "relu", "c": "mul", "e": "add", "f": "hardtanh",
            "g": "mul"}
    dm = Dump()
    for i, k in enumerate(names):
        dm.op(i, f"native_call_{kern[k]}.out", [dm.tensor("FLOAT", act[k])])
    etdp, dbg = dm.write(d, "dag_dev")
    npz = write_npz(os.path.join(d, "dag.npz"), [(str(i + 1), ref[k])
                                                 for i, k in enumerate(names)])
    tsv = os.path.join(d, "dag.tsv")
    plots = os.path.join(d, "dag_plots")
    rc, out, err, ng = gap(d, "dag", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--numgap-tsv", tsv,
                           "--plot", plots)
    rows = ng.get("rows", [])
    snr = {k: snr64(ref[k], act[k]) for k in names}
    want = {}
    for k in names:
        lo = min([snr[p] if p != "x" else math.inf for p in ins[k]])
        want[k] = 0.0 if math.isinf(lo) and math.isinf(snr[k]) else lo - snr[k]
    got = {x["runtime_nodes"][5:]: x["snr_drop"] for x in rows}
    bad = [k for k in names if not close(got.get(k), want[k], 1e-9)]
    check("snr drop: every row's drop is its inputs' lowest SNR minus its own (numpy)",
          not bad and got.get("a") == 0, f"{got} want {want}")
    order = sorted(rows, key=lambda x: -(math.inf if x["snr_drop"] == "inf" else
                                         (x["snr_drop"] if x["snr_drop"] is not None
                                          else -math.inf)))
    check("snr drop: the top two drops are the two ops that introduce error (b, then f)",
          [x["runtime_nodes"] for x in order[:2]] == ["node_b", "node_f"] and
          got.get("b") == "inf", [(x["runtime_nodes"], x["snr_drop"]) for x in order])
    # "where the error enters" ranks by the noise power an op adds (not the dB
    # drop): 10^(-snr/10) minus the largest of its producers'
    noise = {k: 10 ** (-snr[k] / 10) - max([10 ** (-snr[p] / 10) if p != "x" else 0.0
                                            for p in ins[k]]) for k in names}
    gotn = {x["runtime_nodes"][5:]: x["noise_added"] for x in rows}
    check("snr drop: noise_added is the op's error-to-signal ratio minus its inputs' (numpy)",
          all(gotn.get(k) is not None and abs(float(gotn[k]) - noise[k]) <= 1e-12
              for k in names), f"{gotn} want {noise}")
    i1 = out.find("Where the error enters")
    sect = out[i1:] if i1 >= 0 else ""
    check("snr drop: 'where the error enters' lists node_f (most added noise) then node_b "
          "(+inf dB drop, less noise) with source lines",
          noise["f"] > noise["b"] > 0 and
          sect.find("1. row 4 node_f (aten.hardtanh.default): adds noise") > 0 and
          sect.find("2. row 1 node_b (aten.relu.default): adds noise") > 0 and
          "SNR drop +inf dB" in sect and "at model.py:54" in sect, sect[:600])
    with open(tsv, newline="") as f:
        t = list(csv.DictReader(f, delimiter="\t"))
    check("snr drop: in the TSV too", len(t) == 6 and t[1]["snr_drop"] == "inf" and
          close(float(t[4]["snr_drop"]), want["f"], 1e-9), [x.get("snr_drop") for x in t])
    # the chart marks where the error enters (the first of that list): it
    # replaces the separate SNR-drop plot
    png = os.path.join(plots, "numgap_chart.png")
    gp = C.gp_vars(os.path.join(plots, "numgap_chart.gp")) if os.path.exists(png) else {}
    check("snr drop: --plot's numgap_chart marks row 4 node_f as the culprit, no "
          "numgap_snr_drop.png",
          os.path.exists(png) and os.path.getsize(png) > 1000 and gp.get("culprit") == "4" and
          "node_f" in gp.get("culprit_label", "") and
          not os.path.exists(os.path.join(plots, "numgap_snr_drop.png")), str(gp)[:600])


# --- 5. distances and upstream's columns ---------------------------------------------------

def test_distance_tsv(d):
    r = rng(5)
    ops = ["aten.linear.default", "aten.relu.default", "aten.add.Tensor"]
    ref = [f32(r.uniform(-1, 1, (3, 7))) for _ in ops]
    act = [f32(x + r.normal(0, 0.01 * (i + 1), x.shape)) for i, x in enumerate(ref)]
    nodes = [G.node(f"aten_{op.split('.')[1]}_{i}", op, handle=i + 1,
                    trace=trace(op.split(".")[1], 70 + i)) for i, op in enumerate(ops)]
    rec = os.path.join(d, "dist.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {str(i): [i + 1] for i in range(3)}})
    dm = Dump()
    for i, op in enumerate(ops):
        dm.op(i, f"native_call_{op.split('.')[1]}.out", [dm.tensor("FLOAT", act[i])])
    etdp, dbg = dm.write(d, "dist_dev")
    npz = write_npz(os.path.join(d, "dist.npz"), [(str(i + 1), x) for i, x in enumerate(ref)])
    a64 = [x.astype(np.float64) for x in act]
    r64 = [x.astype(np.float64) for x in ref]
    want = {"mse": [float(np.mean((a - b) ** 2)) for a, b in zip(a64, r64)],
            "l1": [float(np.sum(np.abs(a - b))) for a, b in zip(a64, r64)],
            "snr": [snr64(b, a) for a, b in zip(a64, r64)]}
    for dist in ("mse", "l1", "snr"):
        tsv = os.path.join(d, f"dist_{dist}.tsv")
        rc, out, err, ng = gap(d, "dist_" + dist, "--etdump", etdp, "--debug_buffer", dbg,
                               "--etrecord", rec, "--reference-intermediates", npz,
                               "--distance", dist, "--numgap-tsv", tsv)
        with open(tsv, newline="") as f:
            t = list(csv.DictReader(f, delimiter="\t"))
        gaps = [ast.literal_eval(x["gap"]) for x in t]
        jg = [x["gap"] for x in ng.get("rows", [])]
        check(f"--distance {dist}: gap lists match numpy (TSV and JSON)",
              rc == 0 and len(gaps) == 3 and
              all(len(g) == 1 and close(g[0], w, 1e-9) for g, w in zip(gaps, want[dist])) and
              all(len(g) == 1 and close(g[0], w, 1e-9) for g, w in zip(jg, want[dist])) and
              ng.get("distance") == dist, f"rc={rc} {err} {gaps} {jg} want {want[dist]}")
    row = t[1] if len(t) > 1 else {}
    st = ast.literal_eval(row.get("stacktraces", "{}"))
    check("TSV: upstream's columns first, in upstream's order",
          list(t[0].keys())[:8] == ["aot_debug_handle", "aot_ops", "aot_intermediate_output",
                                    "runtime_ops", "runtime_debug_handle",
                                    "runtime_intermediate_output", "gap", "stacktraces"],
          list(t[0].keys())[:8] if t else [])
    check("TSV: aot_ops are FX node names, runtime_ops event names, handles tuples",
          ast.literal_eval(row.get("aot_ops", "[]")) == ["aten_relu_1"] and
          ast.literal_eval(row.get("runtime_ops", "[]")) == ["native_call_relu.out"] and
          ast.literal_eval(row.get("aot_debug_handle", "()")) == (2,) and
          ast.literal_eval(row.get("runtime_debug_handle", "()")) == (2,), row)
    check("TSV: stacktraces maps every AOT node name to its stack trace",
          list(st) == ["aten_relu_1"] and st["aten_relu_1"].endswith("y = relu(x)\n"), st)
    check("TSV: etcompare's own columns follow (op types, snr)",
          row.get("runtime_op_types") == "aten.relu.default" and
          close(float(row.get("snr", "nan")), want["snr"][1], 1e-9), row)
    # an L1 sum is not the metrics' mean
    check("--distance l1 is the sum (count x the metrics' mean l1)",
          close(want["l1"][0] / 21, float(t[0]["l1"]), 1e-9), t[0].get("l1"))
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--reference-intermediates", npz, "--distance", "cosine")
    check("--distance cosine is a usage error", rc == 2 and "--distance" in err, err)


# --- 6. records that do not belong --------------------------------------------------------

def test_mismatched_record(d):
    r = rng(6)
    rec = delegate_record(d, "mm")  # the fused-delegate device record
    vals = [f32(r.uniform(-1, 1, (4,))) for _ in range(5)]
    kern = ["convolution", "relu", "add", "mul", "hardtanh"]
    ref = Dump()  # the unfused reference run: five portable kernels
    for i in range(5):
        ref.op(i, f"native_call_{kern[i]}.out", [ref.tensor("FLOAT", vals[i])])
    ref_etdp, ref_dbg = ref.write(d, "mm_ref")
    dev = Dump()
    for k in range(5):
        dev.delegate_op(0, k, [dev.tensor("FLOAT", vals[k])])
    dev.delegate_call(0, [dev.tensor("FLOAT", vals[4])])
    etdp, dbg = dev.write(d, "mm_dev")
    args = ("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--reference-etdump",
            ref_etdp, "--reference-debug-buffer", ref_dbg)
    rc, out, err = run(*args)
    check("mismatched record: the reference keyed by the device's record is exit 3 naming "
          "the file and --reference-etrecord",
          rc == 3 and "mm_ref.etdp" in err and "--reference-etrecord" in err and
          "4 of the 5" in err and "FIRST DIVERGENCE" not in out, f"rc={rc} {err}")
    rc, out, err = run(*args, "--force")
    check("mismatched record: --force compares anyway with a warning",
          rc in (0, 1) and "warning:" in err and "--reference-etrecord" in err and
          "Numeric gap:" in out, f"rc={rc} {err}")

    def names_case(tag, kernel, op):
        rec2 = os.path.join(d, tag + ".etrecord")
        G.write_etrecord(rec2, programs={"forward": G.program(
            [G.node("n1", op, handle=1)])}, debug_handle_map={"forward": {"0": [1]}})
        dm = Dump()
        dm.op(0, kernel, [dm.tensor("FLOAT", vals[0])])
        e, b = dm.write(d, tag)
        npz = write_npz(os.path.join(d, tag + ".npz"), [("1", vals[0])])
        return run("--etdump", e, "--debug_buffer", b, "--etrecord", rec2,
                   "--reference-intermediates", npz)

    rc, out, err = names_case("mm_tanh", "native_call_mul.out", "aten.tanh.default")
    check("mismatched record: native_call_mul.out linked to aten.tanh.default is exit 3 "
          "naming --etrecord", rc == 3 and "--etrecord" in err and "aten.tanh.default" in err and
          "mm_tanh.etdp" in err, f"rc={rc} {err}")
    rc, out, err = names_case("mm_qmul", "native_call_quantized_mul_scalar.out",
                              "aten.mul.Scalar")
    check("kernel named differently but containing its op passes (quantized_mul_scalar)",
          rc == 0, f"rc={rc} {err}")
    rc, out, err = names_case("mm_pool", "native_call_max_pool2d_with_indices.out",
                              "aten.max_pool2d_with_indices")
    check("kernel named differently but containing its op passes (max_pool2d_with_indices)",
          rc == 0, f"rc={rc} {err}")


# --- 7. one handle, two events ---------------------------------------------------------------

def test_largest_instruction(d):
    r = rng(7)
    early, late = f32(r.uniform(-1, 1, (5,))), f32(r.uniform(-1, 1, (5,)))
    rec = os.path.join(d, "li.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(
        [G.node("aten_add_tensor", "aten.add.Tensor", handle=4)])},
        debug_handle_map={"forward": {"3": [4], "5": [4]}})
    dm = Dump()
    dm.op(3, "native_call_add.out", [dm.tensor("FLOAT", early)])
    dm.op(5, "native_call_add.out", [dm.tensor("FLOAT", late)])
    etdp, dbg = dm.write(d, "li_dev")
    npz = write_npz(os.path.join(d, "li.npz"), [("4", late)])
    rc, out, err, ng = gap(d, "li", "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--reference-intermediates", npz, "--max-abs", "0")
    rows = ng.get("rows", [])
    check("one handle, two events: the later (largest instruction id, as upstream) is compared",
          rc == 0 and len(rows) == 1 and rows[0]["instruction_id"] == 5 and
          rows[0]["merged_items"] == 2 and rows[0]["metrics"]["identical"],
          f"rc={rc} {err} {rows}")


def main():
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    keep = os.environ.get("ETC_KEEP")  # a folder to keep the fixtures in, for a look
    with tempfile.TemporaryDirectory(dir=work) as d:
        d = keep or d
        for t in (test_delegate, test_quant, test_layout, test_snr_drop, test_distance_tsv,
                  test_mismatched_record, test_largest_instruction):
            t(d)
    print(f"{A.passed} passed, {A.failed} failed")
    sys.exit(1 if A.failed or not A.passed else 0)


if __name__ == "__main__":
    main()
