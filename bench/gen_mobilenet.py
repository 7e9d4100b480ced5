#!/usr/bin/python3
"""gen_mobilenet.py - a MobileNetV2 as the files of a real ExecuTorch export
and run, for the reference executor's benchmarks (test-side code).

usage: gen_mobilenet.py OUTDIR [--width 0.5] [--size 64] [--classes 1000]
                        [--seed 1] [--runs 1] [--stem mv2]

Writes, in OUTDIR:
  <stem>.etrecord    an ETRecord in the layout of the v0.5.0 records in the
                     corpus (tests/data/realexport, docs/FORMATS.md): members
                     ETRECORD_V0, edge_dialect_exported_program (torch.export
                     serde JSON, schema 5.3, EDGE verifier: placeholders,
                     nodes with "target", "inputs" [{"name", "arg"}],
                     "outputs", metadata stack_trace / nn_module_stack /
                     source_fn_stack / torch_fn / debug_handle, tensor_values
                     with every value's shape and dtype, the signature's
                     parameters, buffers and user input, module_call_graph),
                     its _state_dict / _constants / _example_inputs
                     torch.save archives, reference_outputs (pickle of
                     {"forward": [[output]]}), debug_handle_map and
                     delegate_map; all members STORED.
  <stem>.etdp        the ETDump a v0.5.0 runtime would write for `runs`
  <stem>_debug.bin   executions, with its debug buffer: per kernel call one
                     DebugEvent per output tensor, native_call_<op>.out and
                     OPERATOR_CALL; Method::execute; the program output
                     DebugEvent last. Values are torch float32 eager, op by
                     op; durations are the eager ops' own (ns).
  <stem>_io.npz      "input" and "output" (the nn.Module's float32 output).

The graph is what torch.export + to_edge make of torchvision's MobileNetV2
in eval mode, without delegate: convolution (depthwise ones with groups =
channels), _native_batch_norm_legit_no_training NOT folded (three outputs:
the result, getitem'd, and two unused [0]-sized tensors, as the cnn record
has them), hardtanh(0, 6) for ReLU6, add.Tensor for the residuals, mean.dim
over [-1, -2] with keepdim for the global pooling, view_copy to [1, C],
permute_copy + addmm for the classifier (dropout is gone in eval). Debug
handles number the FX graph's nodes from 1, placeholders and getitems
included, as upstream does; view_copy becomes et_view at runtime, which
logs nothing and has no debug_handle_map entry (cnn instruction 8).

Uses Debian's python3-torch 1.13 (no torch.export) to compute the weights,
the batch-norm statistics (running averages over random batches in train
mode), the eager values and the torch.save archives. The weights are
random with a fixed seed: every number is reproducible; the bytes are too,
except the storage key in reference_outputs (a memory address, as in real
records) and the ETDump's durations.

--check DIR compares the Edge program's JSON layout (every key path, key
order and leaf type) with the real .etrecord files in DIR.
"""
import argparse
import collections
import inspect
import io
import json
import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
FBS = os.path.join(HERE, "..", "schema", "etdump.fbs")
EDGE = "executorch.exir.dialects.edge.ops."
OUT_CHAIN = 2**64 - 1
F32, I64 = 7, 5  # torch.export serde ScalarType codes
ET_FLOAT = 6     # ExecuTorch ScalarType of float in the ETDump


def make_divisible(v, divisor=8, min_value=None):
    """torchvision's _make_divisible."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


# --- the eager model (torchvision's MobileNetV2 structure) --------------------

class ConvBNReLU(nn.Sequential):
    def __init__(self, inp, oup, kernel=3, stride=1, groups=1, relu=True):
        layers = [nn.Conv2d(inp, oup, kernel, stride, (kernel - 1) // 2, groups=groups,
                            bias=False), nn.BatchNorm2d(oup)]
        if relu:
            layers.append(nn.ReLU6(inplace=False))
        super().__init__(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(inp, hidden, kernel=1))
        layers += [ConvBNReLU(hidden, hidden, stride=stride, groups=hidden),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False), nn.BatchNorm2d(oup)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
               [6, 160, 3, 2], [6, 320, 1, 1]]

    def __init__(self, width=0.5, classes=1000):
        super().__init__()
        inp = make_divisible(32 * width)
        self.last_channel = make_divisible(1280 * max(1.0, width))
        features = [ConvBNReLU(3, inp, stride=2)]
        for t, c, n, s in self.SETTING:
            oup = make_divisible(c * width)
            for i in range(n):
                features.append(InvertedResidual(inp, oup, s if i == 0 else 1, t))
                inp = oup
        features.append(ConvBNReLU(inp, self.last_channel, kernel=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(self.last_channel, classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        return self.classifier(x)


def build_model(width, classes, seed):
    """The model with torchvision's initialisation, then batch-norm running
    statistics averaged over 8 random batches (train mode, cumulative)."""
    torch.manual_seed(seed)
    m = MobileNetV2(width, classes)
    for mod in m.modules():
        if isinstance(mod, nn.Conv2d):
            nn.init.kaiming_normal_(mod.weight, mode="fan_out")
        elif isinstance(mod, nn.BatchNorm2d):
            nn.init.uniform_(mod.weight, 0.5, 1.5)
            nn.init.normal_(mod.bias, 0.0, 0.1)
            mod.momentum = None  # cumulative average
        elif isinstance(mod, nn.Linear):
            nn.init.normal_(mod.weight, 0, 0.01)
            nn.init.normal_(mod.bias, 0, 0.01)
    m.train()
    with torch.no_grad():
        for _ in range(8):
            m(torch.randn(4, 3, 64, 64))
    m.eval()
    return m


# --- the Edge graph -------------------------------------------------------------

def _line_of(obj, text):
    """(file, line) of the first source line of `obj` containing `text`."""
    lines, start = inspect.getsourcelines(obj)
    for i, ln in enumerate(lines):
        if text in ln:
            return start + i, ln.strip()
    return start, lines[0].strip()


def _frame(obj, text):
    line, code = _line_of(obj, text)
    return f'  File "bench/gen_mobilenet.py", line {line}, in forward\n    {code}\n'


def _tensor_meta(shape, dtype=F32, requires_grad=True):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.insert(0, acc)
        acc *= s
    return {"dtype": dtype, "sizes": [{"as_int": s} for s in shape],
            "requires_grad": requires_grad, "device": {"type": "cpu"},
            "strides": [{"as_int": s} for s in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def _t(name, tensor):
    return {"name": name, "arg": {"as_tensor": {"name": tensor}}}


def _ints(name, v):
    return {"name": name, "arg": {"as_ints": [int(x) for x in v]}}


class Graph:
    """Builds the serialized Edge graph and computes, op by op in torch
    float32 eager, the value of every node (what the runtime logs)."""

    def __init__(self, model):
        self.model = model
        self.state = collections.OrderedDict()  # parameter/buffer fqn -> tensor
        self.specs = []          # signature input_specs
        self.inputs = []         # graph inputs
        self.tensor_values = {}
        self.nodes = []          # serialized nodes
        self.values = {}         # value name -> torch tensor
        self.calls = []          # (node index, op, [output values], seconds)
        self.counts = collections.Counter()
        self.getitems = 0
        self.modules = []        # fqns seen, module_call_graph order
        for fqn, p in model.named_parameters():
            self._placeholder("p_" + fqn.replace(".", "_"), fqn, p, "parameter")
        for fqn, b in model.named_buffers():
            self._placeholder("b_" + fqn.replace(".", "_"), fqn, b, "buffer")
        self.handle = len(self.inputs)  # debug handles count placeholders from 1

    def _placeholder(self, name, fqn, t, kind):
        self.inputs.append({"as_tensor": {"name": name}})
        dtype = I64 if t.dtype == torch.int64 else F32
        self.tensor_values[name] = _tensor_meta(list(t.shape), dtype, kind == "parameter")
        if kind == "parameter":
            self.specs.append({"parameter": {"arg": {"name": name}, "parameter_name": fqn}})
        else:
            self.specs.append({"buffer": {"arg": {"name": name}, "buffer_name": fqn,
                                          "persistent": True}})
        self.state[fqn] = t
        self.values[name] = t.detach()

    def user_input(self, name, x):
        self.inputs.append({"as_tensor": {"name": name}})
        self.specs.append({"user_input": {"arg": {"as_tensor": {"name": name}}}})
        self.tensor_values[name] = _tensor_meta(list(x.shape), F32, False)
        self.values[name] = x
        self.handle += 1

    def _name(self, op):
        base = op.replace(".", "_").lower()
        k = self.counts[base]
        self.counts[base] += 1
        return base if k == 0 else f"{base}_{k}"

    def call(self, op, args, fn, meta, n_out=1, getitem=(0,)):
        """Appends node `op` (short name "aten.convolution.default") with
        serialized `args`; fn() computes its outputs (a tensor or a tuple).
        Output i is named getitem_k when i is in `getitem` and the op has
        several outputs (a getitem node, with its own debug handle), else
        <node>_unused_i. Returns the output names."""
        name = self._name(op)
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        outs = list(out) if isinstance(out, tuple) else [out]
        assert len(outs) == n_out, (op, len(outs))
        self.handle += 1
        handle = self.handle
        names = []
        for i, o in enumerate(outs):
            if n_out == 1:
                oname = name
            elif i in getitem:
                oname = "getitem" if self.getitems == 0 else f"getitem_{self.getitems}"
                self.getitems += 1
                self.handle += 1
            else:
                oname = f"{name}_unused_{i}"
            names.append(oname)
            used = n_out == 1 or i in getitem
            self.tensor_values[oname] = _tensor_meta(list(o.shape), F32, used)
            self.values[oname] = o
        md = dict(meta)
        md["debug_handle"] = str(handle)
        self.nodes.append({"target": EDGE + op, "inputs": args,
                           "outputs": [{"as_tensor": {"name": n}} for n in names],
                           "metadata": md})
        self.calls.append((len(self.nodes) - 1, op, outs, dt))
        return names

    def module(self, fqn):
        if fqn not in self.modules:
            self.modules.append(fqn)


def _stack(chain):
    """nn_module_stack from [(fqn, module)] outermost first."""
    parts = ["L__self__,,bench.gen_mobilenet.MobileNetV2"]
    for fqn, mod in chain:
        key = "L__self___" + fqn.replace(".", "_")
        cls = type(mod)
        parts.append(f"{key},{fqn},{cls.__module__}.{cls.__qualname__}"
                     .replace("__main__.", "bench.gen_mobilenet."))
    return ";".join(parts)


def trace_graph(model, x):
    """Walks the model's forward as the exporter would and returns the Graph."""
    g = Graph(model)
    g.user_input("x", x)
    v = g.values
    counters = collections.Counter()

    def fn_meta(chain, trace, source, torch_fn):
        counters[torch_fn] += 1
        return {"stack_trace": trace, "nn_module_stack": _stack(chain),
                "source_fn_stack": source,
                "torch_fn": f"{torch_fn}_{counters[torch_fn]};{TORCH_FN[torch_fn]}"}

    def conv(xn, fqn, mod, chain, trace):
        g.module(fqn)
        w = "p_" + fqn.replace(".", "_") + "_weight"
        args = [_t("input", xn), _t("weight", w),
                {"name": "bias", "arg": {"as_none": []}},
                _ints("stride", mod.stride), _ints("padding", mod.padding),
                _ints("dilation", mod.dilation),
                {"name": "transposed", "arg": {"as_bool": False}},
                _ints("output_padding", [0, 0]),
                {"name": "groups", "arg": {"as_int": mod.groups}}]
        src = "l__self___" + fqn.replace(".", "_") + ",torch.nn.modules.conv.Conv2d"
        meta = fn_meta(chain + [(fqn, mod)], trace, src, "conv2d")
        return g.call("aten.convolution.default", args, lambda: torch.ops.aten.convolution(
            v[xn], v[w], None, list(mod.stride), list(mod.padding), list(mod.dilation), False,
            [0, 0], mod.groups), meta)[0]

    def bn(xn, fqn, mod, chain, trace):
        g.module(fqn)
        p = "p_" + fqn.replace(".", "_")
        b = "b_" + fqn.replace(".", "_")
        args = [_t("input", xn), _t("weight", p + "_weight"), _t("bias", p + "_bias"),
                _t("running_mean", b + "_running_mean"), _t("running_var", b + "_running_var"),
                {"name": "momentum", "arg": {"as_float": 0.0}},
                {"name": "eps", "arg": {"as_float": mod.eps}}]
        src = "l__self___" + fqn.replace(".", "_") + ",torch.nn.modules.batchnorm.BatchNorm2d"
        meta = fn_meta(chain + [(fqn, mod)], trace, src, "batch_norm")
        empty = torch.empty(0)

        def compute():
            y = F.batch_norm(v[xn], v[b + "_running_mean"], v[b + "_running_var"],
                             v[p + "_weight"], v[p + "_bias"], False, 0.0, mod.eps)
            return (y, empty, empty)

        return g.call("aten._native_batch_norm_legit_no_training.default", args, compute,
                      meta, n_out=3)[0]

    def relu6(xn, chain, trace, fqn, mod):
        args = [_t("self", xn), {"name": "min_val", "arg": {"as_float": 0.0}},
                {"name": "max_val", "arg": {"as_float": 6.0}}]
        src = "l__self___" + fqn.replace(".", "_") + ",torch.nn.modules.activation.ReLU6"
        meta = fn_meta(chain + [(fqn, mod)], trace, src, "hardtanh")
        return g.call("aten.hardtanh.default", args, lambda: F.hardtanh(v[xn], 0.0, 6.0),
                      meta)[0]

    def conv_bn_relu(xn, fqn, seq, chain, trace):
        chain = chain + [(fqn, seq)]
        xn = conv(xn, f"{fqn}.0", seq[0], chain, trace)
        xn = bn(xn, f"{fqn}.1", seq[1], chain, trace)
        if len(seq) > 2:
            xn = relu6(xn, chain, trace, f"{fqn}.2", seq[2])
        return xn

    root_trace = _frame(MobileNetV2.forward, "self.features(x)")
    res_trace = _frame(InvertedResidual.forward, "return x + self.conv(x)")
    nores_trace = _frame(InvertedResidual.forward, "return self.conv(x)")
    xn = "x"
    feats = model.features
    chain0 = [("features", feats)]
    for i, blk in enumerate(feats):
        fqn = f"features.{i}"
        if isinstance(blk, ConvBNReLU):
            xn = conv_bn_relu(xn, fqn, blk, chain0, root_trace)
            continue
        chain = chain0 + [(fqn, blk), (fqn + ".conv", blk.conv)]
        trace = root_trace + (res_trace if blk.use_res_connect else nores_trace)
        inp = xn
        layers = list(blk.conv)
        for j, layer in enumerate(layers):
            lf = f"{fqn}.conv.{j}"
            if isinstance(layer, ConvBNReLU):
                xn = conv_bn_relu(xn, lf, layer, chain, trace)
            elif isinstance(layer, nn.Conv2d):
                xn = conv(xn, lf, layer, chain, trace)
            else:
                xn = bn(xn, lf, layer, chain, trace)
        if blk.use_res_connect:
            meta = fn_meta(chain[:-1], trace, "add,<built-in function add>", "add")
            xn = g.call("aten.add.Tensor", [_t("self", inp), _t("other", xn)],
                        lambda a=inp, b=xn: torch.add(v[a], v[b]), meta)[0]
    pool_trace = _frame(MobileNetV2.forward, "adaptive_avg_pool2d")
    meta = fn_meta([], pool_trace, "adaptive_avg_pool2d,torch.nn.functional.adaptive_avg_pool2d",
                   "adaptive_avg_pool2d")
    xn = g.call("aten.mean.dim", [_t("self", xn), _ints("dim", [-1, -2]),
                                  {"name": "keepdim", "arg": {"as_bool": True}}],
                lambda a=xn: torch.mean(v[a], [-1, -2], keepdim=True), meta)[0]
    flat_trace = _frame(MobileNetV2.forward, "torch.flatten")
    meta = fn_meta([], flat_trace, "flatten,torch.flatten", "flatten")
    c = model.last_channel
    xn = g.call("aten.view_copy.default", [_t("self", xn), _ints("size", [1, c])],
                lambda a=xn: v[a].reshape(1, c).clone(), meta)[0]
    lin = model.classifier[1]
    chain = [("classifier", model.classifier), ("classifier.1", lin)]
    g.module("classifier.1")
    lin_trace = _frame(MobileNetV2.forward, "self.classifier(x)")
    src = "l__self___classifier_1,torch.nn.modules.linear.Linear"
    meta = fn_meta(chain, lin_trace, src, "linear")
    counters["linear"] -= 1  # permute_copy and addmm come from the same linear call
    wt = g.call("aten.permute_copy.default", [_t("self", "p_classifier_1_weight"),
                                             _ints("dims", [1, 0])],
                lambda: v["p_classifier_1_weight"].permute(1, 0).contiguous(), meta)[0]
    meta = fn_meta(chain, lin_trace, src, "linear")
    out = g.call("aten.addmm.default", [_t("self", "p_classifier_1_bias"), _t("mat1", xn),
                                        _t("mat2", wt)],
                 lambda a=xn: torch.addmm(v["p_classifier_1_bias"], v[a], v[wt]), meta)[0]
    g.output = out
    return g


TORCH_FN = {"conv2d": "builtin_function_or_method.conv2d",
            "batch_norm": "function.batch_norm", "hardtanh": "function.hardtanh",
            "add": "builtin_function_or_method.add",
            "adaptive_avg_pool2d": "function.adaptive_avg_pool2d",
            "flatten": "builtin_function_or_method.flatten",
            "linear": "builtin_function_or_method.linear"}


def program_json(g):
    in_spec = json.dumps([1, {"type": "builtins.tuple", "context": "null", "children_spec": [
        {"type": "builtins.tuple", "context": "null", "children_spec": [
            {"type": None, "context": None, "children_spec": []}]},
        {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])
    out_spec = json.dumps([1, {"type": None, "context": None, "children_spec": []}])
    mcg = [{"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": in_spec,
                                     "out_spec": out_spec}}]
    mcg += [{"fqn": f} for f in g.modules]
    return {
        "graph_module": {
            "graph": {"inputs": g.inputs, "outputs": [{"as_tensor": {"name": g.output}}],
                      "nodes": g.nodes, "tensor_values": g.tensor_values,
                      "sym_int_values": {}, "sym_bool_values": {},
                      "is_single_tensor_return": False, "custom_obj_values": {}},
            "signature": {"input_specs": g.specs, "output_specs": [
                {"user_output": {"arg": {"as_tensor": {"name": g.output}}}}]},
            "module_call_graph": mcg},
        "opset_version": {"aten": 10}, "range_constraints": {},
        "schema_version": {"major": 5, "minor": 3}, "dialect": "", "verifiers": ["EDGE"]}


# --- files ------------------------------------------------------------------------

def torch_save_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def kernel_name(op):
    """native_call_<kernel>.out of an Edge op ("aten.mean.dim" -> mean.out)."""
    base = op.split(".")[1]
    return f"native_call_{base}.out"


def write_etdump(g, path, dbg_path, runs):
    """The ETDump and debug buffer of `runs` executions (flatc from JSON)."""
    buf = bytearray()

    def put(t):
        t = t.detach().contiguous()
        shape = list(t.shape)
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
        if t.numel() == 0:
            off = -1
        else:
            # ETDumpGen aligns to 64 in absolute address; the runner's buffer
            # started at 16 mod 64, so offsets are 48 mod 64
            pad = (48 - len(buf)) % 64
            buf.extend(b"\0" * pad)
            off = len(buf)
            buf.extend(t.numpy().astype("<f4").tobytes())
        return {"scalar_type": ET_FLOAT, "sizes": shape, "strides": strides, "offset": off}

    handle_map = {}
    run_data = [{"name": "Default", "events": [
        {"profile_event": {"name": "Method::init", "chain_index": -1, "instruction_id": 0,
                           "start_time": 450000, "end_time": 492000}},
        {"profile_event": {"name": "Program::load_method", "chain_index": -1,
                           "instruction_id": 0, "start_time": 445000, "end_time": 495000}}]}]
    instr = 0
    plan = []  # (instruction, op, outputs, seconds) of the kernel calls
    for idx, op, outs, dt in g.calls:
        if op != "aten.view_copy.default":  # et_view: no kernel call, no events
            handle_map[str(instr)] = int(g.nodes[idx]["metadata"]["debug_handle"])
            plan.append((instr, op, outs, dt))
        instr += 1
    for _ in range(runs):
        t = 500000
        start = t
        events = []
        for ins, op, outs, dt in plan:
            for o in outs:
                events.append({"debug_event": {"chain_index": 0, "instruction_id": ins,
                                               "debug_entry": {"val": "Tensor",
                                                               "tensor": put(o)}}})
            ns = max(1000, int(dt * 1e9))
            events.append({"profile_event": {"name": kernel_name(op), "chain_index": 0,
                                             "instruction_id": ins, "start_time": t + 500,
                                             "end_time": t + 500 + ns}})
            events.append({"profile_event": {"name": "OPERATOR_CALL", "chain_index": 0,
                                             "instruction_id": ins, "start_time": t,
                                             "end_time": t + 1000 + ns}})
            t += 1500 + ns
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                         "instruction_id": 0, "start_time": start,
                                         "end_time": t}})
        out = put(g.values[g.output])
        events.append({"debug_event": {"chain_index": OUT_CHAIN, "instruction_id": 0,
                                       "debug_entry": {"val": "Tensor", "tensor": out,
                                                       "output": {"bool_val": True}}}})
        run_data.append({"name": "Execute", "events": events})
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "etdump.json")
        with open(src, "w") as f:
            json.dump({"version": 0, "run_data": run_data}, f)
        p = subprocess.run(["flatc", "-b", "--size-prefixed", "-o", tmp, FBS, src],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"gen_mobilenet: flatc failed: {p.stderr}")
        with open(os.path.join(tmp, "etdump.etdp"), "rb") as f:
            data = f.read()
    with open(path, "wb") as f:
        f.write(data)
    buf.extend(b"\0" * 64)  # the runner writes the whole buffer, zero padded
    with open(dbg_path, "wb") as f:
        f.write(bytes(buf))
    return handle_map


def write_etrecord(path, g, x, ref_out, handle_map):
    members = [("ETRECORD_V0", b""),
               ("edge_dialect_exported_program", json.dumps(program_json(g)).encode()),
               ("edge_dialect_exported_program_state_dict", torch_save_bytes(dict(g.state))),
               ("edge_dialect_exported_program_constants", torch_save_bytes({})),
               ("edge_dialect_exported_program_example_inputs", torch_save_bytes(((x,), {}))),
               ("reference_outputs", pickle.dumps({"forward": [[ref_out]]}, protocol=4)),
               ("debug_handle_map", json.dumps({"forward": handle_map}).encode()),
               ("delegate_map", json.dumps({"forward": {}}).encode())]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            z.writestr(info, data)


def _layout(v, path, out):
    """path -> set of key tuples (dicts) or type names (leaves); the keys of
    tensor_values (value names) are not compared, their entries are."""
    if isinstance(v, dict):
        generic = path.endswith("tensor_values")
        if not generic:
            out.setdefault(path, set()).add(tuple(v.keys()))
        for k, x in v.items():
            _layout(x, path + "/" + ("*" if generic else k), out)
    elif isinstance(v, list):
        for x in v:
            _layout(x, path + "[]", out)
    else:
        out.setdefault(path, set()).add(type(v).__name__)
    return out


def check_layout(path, real_dir):
    """Compares the Edge program JSON of `path` with the real records in
    `real_dir`: every key path, key order and leaf type must occur in one of
    them. Only a None argument ({"as_none": []}, conv without bias) has no
    real example in the corpus. Returns the number of other differences."""
    def load(p):
        with zipfile.ZipFile(p) as z:
            return json.loads(z.read("edge_dialect_exported_program"))
    real = {}
    for name in sorted(os.listdir(real_dir)):
        if name.endswith(".etrecord"):
            for k, v in _layout(load(os.path.join(real_dir, name)), "", {}).items():
                real.setdefault(k, set()).update(v)
    if not real:
        sys.exit(f"gen_mobilenet: no .etrecord in {real_dir}")
    bad = 0
    for k, v in sorted(_layout(load(path), "", {}).items()):
        extra = v - real.get(k, set())
        if extra == {("as_none",)} and k.endswith("/inputs[]/arg"):
            continue
        if extra:
            print(f"layout: {k}: {sorted(extra)} not in the real records", file=sys.stderr)
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--width", type=float, default=0.5)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--stem", default="mv2")
    ap.add_argument("--check", metavar="DIR",
                    help="compare the JSON layout with the real .etrecord files in DIR")
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.outdir, exist_ok=True)
    model = build_model(a.width, a.classes, a.seed)
    torch.manual_seed(a.seed + 1000)
    x = torch.randn(1, 3, a.size, a.size)
    with torch.no_grad():
        ref_out = model(x)
        g = trace_graph(model, x)
    got = g.values[g.output]
    err = (got - ref_out).abs().max().item() / ref_out.abs().max().item()
    if not err < 1e-5:
        sys.exit(f"gen_mobilenet: the op-by-op graph disagrees with the module: {err:.3g}")
    stem = os.path.join(a.outdir, a.stem)
    hmap = write_etdump(g, stem + ".etdp", stem + "_debug.bin", a.runs)
    write_etrecord(stem + ".etrecord", g, x, ref_out, hmap)
    np.savez(stem + "_io.npz", input=x.numpy(), output=ref_out.numpy())
    n_w = sum(t.numel() for t in g.state.values())
    acts = [o.numel() for _, _, outs, _ in g.calls for o in outs]
    print(f"{stem}.etrecord: {len(g.nodes)} nodes, {len(hmap)} kernel calls, {n_w} weights, "
          f"largest activation {max(acts)} elements, op-by-op vs module {err:.2g}")
    if a.check and check_layout(stem + ".etrecord", a.check):
        sys.exit("gen_mobilenet: the Edge program's layout differs from the real records")


if __name__ == "__main__":
    main()
