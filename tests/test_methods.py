"""Every method (issue 26, item 3): a two-method ETRecord (forward, decode:
edge_dialect_exported_program/<method>, debug_handle_map {"forward": ...,
"decode": ...}, each method with its own debug-handle space) and ETDumps
with one EventBlock per method, named after it. The numeric gap runs once
per method, each block linked to its own method's maps: the device perturbs
decode's op 1, so forward passes (identical) and decode's first divergence
is row 1, named by decode's node (not forward's node with the same handle).
"""
import math
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
os.environ.setdefault("ETC_SRC", C.SRC)
import test_numgap as N  # noqa: E402
G = N.G

SHAPE = (4, 8)
METHODS = {"forward": ["aten.linear.default", "aten.relu.default", "aten.add.Tensor",
                       "aten.mul.Tensor"],
           "decode": ["aten.mm.default", "aten.gelu.default", "aten.sub.Tensor"]}
BAD_METHOD, BAD = "decode", 1


def values(method, perturb):
    rnd = random.Random(len(method))
    x = [N.f32(rnd.uniform(-1, 1)) for _ in range(SHAPE[0] * SHAPE[1])]
    noise = random.Random(7)
    outs = []
    for i in range(len(METHODS[method])):
        x = [N.f32(0.8 * v + 0.1 * math.cos(i + k)) for k, v in enumerate(x)]
        if perturb and method == BAD_METHOD and i == BAD:
            x = [N.f32(v + noise.uniform(-0.05, 0.05)) for v in x]
        outs.append(x)
    return outs


def record(d, refs=False):
    programs, dhm = {}, {}
    for m, ops in METHODS.items():
        nodes = [G.node(f"{m}_op{i}", op, inputs=[("self", f"{m}_op{i - 1}" if i else "x")],
                        handle=i + 1,
                        trace=G.trace_str([("/m/model.py", 10 + i, m, f"y{i} = {m}{i}(x)")]))
                 for i, op in enumerate(ops)]
        programs[m] = G.program(nodes)
        dhm[m] = {str(i): [i + 1] for i in range(len(ops))}
    path = os.path.join(d, "two.etrecord")
    kw = {}
    if refs:  # the eager outputs of each method: its last op's value
        kw["reference_outputs"] = {m: [[G.Tensor("float32", values(m, False)[-1],
                                                  shape=list(SHAPE))]] for m in METHODS}
        path = os.path.join(d, "two_refs.etrecord")
    G.write_etrecord(path, programs=programs, debug_handle_map=dhm, **kw)
    return path


def dump(d, stem, perturb):
    dm = N.Dump()
    runs = []
    for m, ops in METHODS.items():
        dm.events, dm.t = [], 1000
        for i, x in enumerate(values(m, perturb)):
            dm.op(i, f"native_call_{ops[i].split('.')[1]}.out",
                  [dm.tensor("FLOAT", x, SHAPE)])
        out = dm.tensor("FLOAT", values(m, perturb)[-1], SHAPE)
        dm.events.append({"debug_event": {"chain_index": N.OUT_CHAIN, "instruction_id": 0,
                                          "debug_entry": {"val": "Tensor", "tensor": out,
                                                          "output": {"bool_val": True}}}})
        dm.events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                            "instruction_id": 0, "start_time": 1,
                                            "end_time": dm.t + 1}})
        runs.append({"name": m, "events": dm.events})
    dm.runs = runs
    return N.A.Dump.write(dm, d, stem)


def main():
    d = C.work_dir("methods")
    rec = record(d)
    ref_etdp, ref_dbg = dump(d, "ref", False)
    dev_etdp, dev_dbg = dump(d, "dev", True)
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                         "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--min-snr", "40")
    C.check("a numeric gap per method, each under its heading",
            "numeric gap of method forward (EventBlock forward)" in out and
            "numeric gap of method decode (EventBlock decode)" in out, out[-1500:] + err)
    fwd = out.split("numeric gap of method decode")[0]
    dec = out.split("numeric gap of method decode")[-1]
    C.check("forward: every intermediate identical", fwd.count("pass (identical)") == 4, fwd[-1500:])
    C.check("forward passes on its own", "numeric gap: 4 intermediate outputs pass" in err, err)
    C.check("decode: first divergence at its op 1, named by decode's graph",
            "first divergence at row 1 of 3: decode_op1" in err and "gelu" in err, err)
    C.check("decode's rows are linked to decode's nodes",
            "decode_op0" in dec and "forward_op0" not in dec, dec[-1500:])
    C.check("the perturbed method fails the gate", rc == 1, f"rc={rc} {err}")
    rc, out, err = N.run("--etdump", ref_etdp, "--debug_buffer", ref_dbg, "--etrecord", rec,
                         "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                         "--min-snr", "40")
    C.check("both methods against themselves: exit 0, 7 identical rows",
            rc == 0 and out.count("pass (identical)") == 7, f"rc={rc} {err}")
    # the accuracy pairing per method: each block against its method's references
    rec2 = record(d, refs=True)
    rc, out, err = N.run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec2,
                         "--compare", "--min-snr", "40")
    C.check("accuracy per method, each under its heading",
            "accuracy of method forward (EventBlock forward)" in out and
            "accuracy of method decode (EventBlock decode)" in out, out + err)
    fwd = out.split("accuracy of method decode")[0]
    dec = out.split("accuracy of method decode")[-1]
    C.check("forward's output passes against forward's reference",
            "pass (identical)" in fwd and "1 of 1 outputs pass" in fwd, fwd)
    C.check("decode's output fails against decode's reference",
            "FAIL" in dec and "0 of 1 outputs pass" in dec, dec)
    C.check("the gate fails for decode", rc == 1 and "accuracy gate FAILED" in err, f"rc={rc} {err}")
    C.finish()


if __name__ == "__main__":
    main()
