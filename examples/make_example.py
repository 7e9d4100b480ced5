#!/usr/bin/env python3
"""Writes the bundled example of `etcompare --example` (compiled into the
binary by cmake/embed.cmake): a small model run on a device that has a bug,
and the references that show it.

The model (seven operators, float32, input [1, 16]):

    class TinyNet(torch.nn.Module):                 # tiny_net.py
        def forward(self, x):
            h = self.fc1(x)                          # line 12  addmm      handle 1
            h = self.act(h)                          # line 13  relu       handle 2
            h = self.fc2(h)                          # line 14  addmm      handle 3
            h = self.norm(h)                         # line 15  layer_norm handle 4
            h = h + x                                # line 16  add        handle 5
            y = self.head(h)                         # line 17  addmm      handle 6
            return torch.softmax(y, -1)              # line 18  softmax    handle 7

The device's layer_norm kernel uses eps = 1e-2 instead of 1e-5 (the bug to
find); its matrix products round in float32 where the reference accumulates
in float64 (tiny, harmless differences). Files written to examples/:

  example.etdp              the device ETDump: 6 runs of the Execute block
                            (bundled inputs 0 and 1, three times each) with
                            operator timings, every operator's output and
                            the program output, plus a Default block (load
                            and init)
  example_debug.bin         its debug buffer (the tensors' bytes)
  example.etrecord          the ETRecord: the Edge program (ops, debug
                            handles, stack traces, modules) with its weights
                            and inputs (the reference executor runs it: the
                            numeric gap of `etcompare --example`), and the
                            reference outputs of both inputs
  example_intermediates.npz the AOT reference intermediates of input 0,
                            one array per debug handle ("1" ... "7")

Also, for the README's recipes (not compiled in):

  example_ref.etdp          a reference run: input 0 on the CPU (portable
  example_ref_debug.bin     kernels), with its debug buffer
  example_baseline.etdp     timings of the previous build, whose layer_norm
                            was faster (the performance diff's baseline)
  prof_result.bin           the same model under the pre-ETDump profiler

Input 0 has small activations, where the wrong eps matters: its outputs
fail --min-snr 30 and the numeric gap names layer_norm (tiny_net.py line
15) as the first diverging operator. Input 1 passes.

Needs numpy and flatc; run from anywhere: python3 examples/make_example.py
The output is deterministic (fixed seeds, fixed zip timestamps).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import etrecord_gen as G  # noqa: E402
import legacy_gen as L  # noqa: E402
import make_npz as NPZ  # noqa: E402

OUT_CHAIN = 18446744073709551615  # chain_index of program outputs
FILE = "/home/user/tiny_net/tiny_net.py"
SCALES = (0.15, 1.2)  # input magnitude of bundled inputs 0 and 1
REPEAT = 3  # each input runs 3 times (the timings vary, the values do not)
EPS_REF, EPS_DEVICE = 1e-5, 1e-2

# (node name, Edge op, runtime event name, source line, code, module (key, path, type))
OPS = [
    ("addmm", "aten.addmm.default", "native_call_addmm.out", 12, "h = self.fc1(x)",
     ("L__self___fc1", "fc1", "torch.nn.modules.linear.Linear")),
    ("relu", "aten.relu.default", "native_call_relu.out", 13, "h = self.act(h)",
     ("L__self___act", "act", "torch.nn.modules.activation.ReLU")),
    ("addmm_1", "aten.addmm.default", "native_call_addmm.out", 14, "h = self.fc2(h)",
     ("L__self___fc2", "fc2", "torch.nn.modules.linear.Linear")),
    ("native_layer_norm", "aten.native_layer_norm.default", "native_call_native_layer_norm.out",
     15, "h = self.norm(h)", ("L__self___norm", "norm", "torch.nn.modules.normalization.LayerNorm")),
    ("add", "aten.add.Tensor", "native_call_add.out", 16, "h = h + x", None),
    ("addmm_2", "aten.addmm.default", "native_call_addmm.out", 17, "y = self.head(h)",
     ("L__self___head", "head", "torch.nn.modules.linear.Linear")),
    ("_softmax", "aten._softmax.default", "native_call__softmax.out", 18,
     "return torch.softmax(y, -1)", None),
]
# typical kernel times on the device, ns (each run adds some jitter)
TIMES = [21000, 2500, 19000, 9500, 1800, 12000, 6400]


def weights():
    rng = np.random.default_rng(7)
    def lin(n_in, n_out):
        return (rng.normal(size=(n_in, n_out)) / np.sqrt(n_in), rng.normal(size=n_out) * 0.01)
    return {"fc1": lin(16, 16), "fc2": lin(16, 16), "head": lin(16, 8),
            "gamma": 1 + 0.1 * rng.normal(size=16), "beta": 0.05 * rng.normal(size=16)}


def forward(x, w, device):
    """The 7 intermediate outputs, float32. The reference accumulates in
    float64; the device in float32, with its layer_norm bug."""
    acc = np.float32 if device else np.float64
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731

    def linear(h, p):
        return f32(h.astype(acc) @ p[0].astype(np.float32).astype(acc) +
                   p[1].astype(np.float32).astype(acc))
    outs = []
    h = linear(x, w["fc1"]); outs.append(h)
    h = f32(np.maximum(h, 0)); outs.append(h)
    h = linear(h, w["fc2"]); outs.append(h)
    eps = EPS_DEVICE if device else EPS_REF
    hv = h.astype(acc)
    mu = hv.mean(-1, keepdims=True)
    var = ((hv - mu) ** 2).mean(-1, keepdims=True)
    h = f32((hv - mu) / np.sqrt(var + eps) * w["gamma"].astype(np.float32).astype(acc) +
            w["beta"].astype(np.float32).astype(acc))
    outs.append(h)
    h = f32(h + x); outs.append(h)
    y = linear(h, w["head"]); outs.append(y)
    e = np.exp(y.astype(acc) - y.astype(acc).max(-1, keepdims=True))
    outs.append(f32(e / e.sum(-1, keepdims=True)))
    return outs


def snr(ref, dev):
    ref, dev = ref.astype(np.float64), dev.astype(np.float64)
    err = ((dev - ref) ** 2).mean()
    return float("inf") if err == 0 else 10 * np.log10((ref ** 2).mean() / err)


class Dump:
    """The ETDump's runs as flatc JSON; tensors' bytes go to one debug buffer."""

    def __init__(self):
        self.buf = bytearray()
        self.runs = []

    def tensor(self, a):
        while len(self.buf) % 16:
            self.buf.append(0)
        off = len(self.buf)
        self.buf += a.astype("<f4").tobytes()
        shape = list(a.shape)
        strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
        return {"scalar_type": "FLOAT", "sizes": shape, "strides": strides, "offset": off}

    def write(self, stem):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, stem + ".json")
            with open(src, "w") as f:
                json.dump({"version": 0, "run_data": self.runs}, f)
            subprocess.run(["flatc", "-b", "--size-prefixed", "-o", tmp,
                            os.path.join(SRC, "schema", "etdump.fbs"), src], check=True)
            with open(os.path.join(tmp, stem + ".etdp"), "rb") as f:
                data = f.read()
        with open(os.path.join(HERE, stem + ".etdp"), "wb") as f:
            f.write(data)
        if self.buf:
            with open(os.path.join(HERE, stem + "_debug.bin"), "wb") as f:
                f.write(bytes(self.buf))


def execute_run(d, index, outs, rng, t, times=TIMES):
    """One run of the Execute block starting at t ns: each operator's timing
    and (unless outs is None) output, then the program output."""
    events, start = [], t
    t += 800
    for i, (_, _, event, *_rest) in enumerate(OPS):
        dur = int(times[i] * rng.uniform(0.92, 1.12))
        events.append({"profile_event": {"name": event, "chain_index": 0, "instruction_id": i,
                                         "start_time": t, "end_time": t + dur}})
        if outs is not None:
            events.append({"debug_event": {"chain_index": 0, "instruction_id": i,
                                           "debug_entry": {"val": "Tensor",
                                                           "tensor": d.tensor(outs[i])}}})
        t += dur + int(rng.uniform(300, 700))
    if outs is not None:
        events.append({"debug_event": {"chain_index": OUT_CHAIN, "instruction_id": 0,
                                       "debug_entry": {"val": "Tensor",
                                                       "tensor": d.tensor(outs[-1]),
                                                       "output": {"bool_val": True}}}})
    events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                     "instruction_id": 0, "start_time": start,
                                     "end_time": t + 500}})
    run = {"name": "Execute", "events": events}
    if index is not None:
        run["bundled_input_index"] = index
    return run


def reference_run(inputs, w):
    """The same model on the CPU with the portable kernels: input 0, once."""
    d = Dump()
    rng = np.random.default_rng(12)
    d.runs.append(execute_run(d, None, forward(inputs[0], w, device=False), rng, 100000,
                              [3 * t for t in TIMES]))
    d.write("example_ref")


def baseline_etdump(inputs):
    """Timings only of the previous build, whose layer_norm kernel was faster
    (the same runs and jitter as the device ETDump otherwise)."""
    noise = (0.98, 1.01, 1.02, None, 0.99, 1.01, 0.97)
    times = [int(t * f) if f else 5200 for t, f in zip(TIMES, noise)]
    device_etdump(inputs, None, "example_baseline", times)


def legacy_dump():
    """prof_result.bin of the same model on a runtime from before ETDump:
    a Default block (load) and 3 iterations of Execute."""
    rng = np.random.default_rng(14)
    data = L.block("Default", [("Program::load_method", -1, 0, 1000, 61000)],
                   [("method_allocator", 1), ("planned_memory", 2)], [(1, 512), (2, 1024)])
    t = 100000
    for _ in range(3):
        events, start = [], t
        t += 800
        for i, (_, _, event, *_rest) in enumerate(OPS):
            dur = int(TIMES[i] * rng.uniform(0.92, 1.12))
            events.append((event.replace("native_layer_norm", "layer_norm"), 0, i, t, t + dur))
            t += dur + int(rng.uniform(300, 700))
        events.insert(0, ("Method::execute", -1, 0, start, t + 500))
        data += L.block("Execute", events, [], [(2, 256)])
        t += 250000
    with open(os.path.join(HERE, "prof_result.bin"), "wb") as f:
        f.write(data)


def device_etdump(inputs, w, stem="example", times=TIMES):
    """The device's runs; without weights w, timings only (no debug data)."""
    rng = np.random.default_rng(11)
    d = Dump()
    d.runs.append({"name": "Default", "events": [
        {"profile_event": {"name": "Program::load_method", "chain_index": -1,
                           "instruction_id": 0, "start_time": 1000, "end_time": 61000}},
        {"profile_event": {"name": "Method::init", "chain_index": -1, "instruction_id": 0,
                           "start_time": 2000, "end_time": 58000}}]})
    t = 100000
    for rep in range(REPEAT):
        for k, x in enumerate(inputs):
            outs = forward(x, w, device=True) if w is not None else None
            d.runs.append(execute_run(d, k, outs, rng, t, times))
            t += 250000
    d.write(stem)


PARAMS = [("fc1_weight", "fc1.weight", lambda w: w["fc1"][0]), ("fc1_bias", "fc1.bias",
                                                                 lambda w: w["fc1"][1]),
          ("fc2_weight", "fc2.weight", lambda w: w["fc2"][0]), ("fc2_bias", "fc2.bias",
                                                                 lambda w: w["fc2"][1]),
          ("norm_weight", "norm.weight", lambda w: w["gamma"]), ("norm_bias", "norm.bias",
                                                                  lambda w: w["beta"]),
          ("head_weight", "head.weight", lambda w: w["head"][0]), ("head_bias", "head.bias",
                                                                   lambda w: w["head"][1])]


def tensor_value(shape):
    """A float32 value of the serialized graph (serde ScalarType FLOAT = 7)."""
    strides = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    return {"dtype": 7, "sizes": [{"as_int": n} for n in shape], "requires_grad": False,
            "device": {"type": "cpu"}, "strides": [{"as_int": n} for n in strides],
            "storage_offset": {"as_int": 0}, "layout": 7}


def etrecord(inputs, w):
    """The Edge program as torch.export serializes it, with its weights
    (state dict), its example inputs (input 0) and the representative
    inputs (both bundled inputs): what the reference executor needs to run
    the graph itself. The linear layers' weights are stored as [in, out]
    (the graph has no permute_copy nodes: one node per device op)."""
    args = {"addmm": [("self", "p_fc1_bias"), ("mat1", "x"), ("mat2", "p_fc1_weight")],
            "relu": [("self", "addmm")],
            "addmm_1": [("self", "p_fc2_bias"), ("mat1", "relu"), ("mat2", "p_fc2_weight")],
            "native_layer_norm": [("input", "addmm_1"), ("normalized_shape", [16]),
                                  ("weight", "p_norm_weight"), ("bias", "p_norm_bias"),
                                  ("eps", EPS_REF)],
            "add": [("self", "native_layer_norm"), ("other", "x")],
            "addmm_2": [("self", "p_head_bias"), ("mat1", "add"), ("mat2", "p_head_weight")],
            "_softmax": [("self", "addmm_2"), ("dim", -1), ("half_to_float", False)]}
    shapes = {"addmm": [1, 16], "relu": [1, 16], "addmm_1": [1, 16], "native_layer_norm": [1, 16],
              "native_layer_norm_unused_1": [1, 1], "native_layer_norm_unused_2": [1, 1],
              "add": [1, 16], "addmm_2": [1, 8], "_softmax": [1, 8], "x": [1, 16]}
    nodes = []
    for i, (name, op, _, line, code, module) in enumerate(OPS):
        frames = [(FILE, line, "forward", code)]
        mods = [("L__self__", "", "tiny_net.TinyNet")] + ([module] if module else [])
        n = G.node(name, op, inputs=args[name], handle=i + 1, trace=frames, modules=mods,
                   named=True)
        if name == "native_layer_norm":  # (out, mean, rstd): only the first is used
            n["outputs"] = [{"as_tensor": {"name": k}} for k in
                            ("native_layer_norm", "native_layer_norm_unused_1",
                             "native_layer_norm_unused_2")]
        nodes.append(n)
    state = {}
    for pname, key, get in PARAMS:
        a = np.asarray(get(w), dtype=np.float32)
        state[key] = G.Tensor("float32", [float(v) for v in a.ravel()], shape=list(a.shape))
        shapes["p_" + pname] = list(a.shape)
    prog = G.program(nodes)
    graph = prog["graph_module"]["graph"]
    graph["inputs"] = [{"as_tensor": {"name": "p_" + p}} for p, _, _ in PARAMS] + \
        [{"as_tensor": {"name": "x"}}]
    graph["outputs"] = [{"as_tensor": {"name": "_softmax"}}]
    graph["tensor_values"] = {k: tensor_value(v) for k, v in shapes.items()}
    prog["graph_module"]["signature"] = {
        "input_specs": [{"parameter": {"arg": {"name": "p_" + p}, "parameter_name": key}}
                        for p, key, _ in PARAMS] +
        [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}],
        "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "_softmax"}}}}]}

    def tensor(x):
        return G.Tensor("float32", [float(v) for v in x.ravel()], shape=list(x.shape))
    refs = [[G.Tensor("float32", [float(v) for v in forward(x, w, device=False)[-1].ravel()],
                      shape=[1, 8])] for x in inputs]
    members = G.etrecord_members(
        programs={"forward": prog}, siblings=False,
        debug_handle_map={"forward": {str(i): [i + 1] for i in range(len(OPS))}},
        num_outs_map={"forward": {str(i): 1 for i in range(len(OPS))}},
        reference_outputs={"forward": refs},
        representative_inputs=[[tensor(x)] for x in inputs])
    at = next(k for k, (name, _) in enumerate(members) if name.startswith(G.EDGE_MEMBER)) + 1
    member = members[at - 1][0]
    members[at:at] = [(member + "_state_dict", G.torch_save(state)),
                      (member + "_constants", G.torch_save({})),
                      (member + "_example_inputs", G.torch_save(((tensor(inputs[0]),), {})))]
    with open(os.path.join(HERE, "example.etrecord"), "wb") as f:
        f.write(G.zip_bytes(members))


def intermediates(x, w):
    members = []
    for i, a in enumerate(forward(x, w, device=False)):
        data = a.astype("<f4").tobytes()
        members.append((str(i + 1), NPZ.npy("<f4", tuple(a.shape), data)))
    NPZ.write_npz(os.path.join(HERE, "example_intermediates.npz"), members)


def main():
    w = weights()
    rng = np.random.default_rng(3)
    inputs = [np.asarray(rng.normal(size=(1, 16)) * s, dtype=np.float32) for s in SCALES]
    device_etdump(inputs, w)
    etrecord(inputs, w)
    intermediates(inputs[0], w)
    reference_run(inputs, w)
    baseline_etdump(inputs)
    legacy_dump()
    for k, x in enumerate(inputs):
        ref, dev = forward(x, w, False), forward(x, w, True)
        print(f"input {k}: SNR per op " +
              " ".join(f"{snr(r, d):.1f}" for r, d in zip(ref, dev)) + " dB")
    for name in ("example.etdp", "example_debug.bin", "example.etrecord",
                 "example_intermediates.npz", "example_ref.etdp", "example_ref_debug.bin",
                 "example_baseline.etdp", "prof_result.bin"):
        print(f"{name}: {os.path.getsize(os.path.join(HERE, name))} bytes")


if __name__ == "__main__":
    main()
