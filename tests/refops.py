"""The op tests' harness: one op call of the reference executor against
Debian's python3-torch in float64.

A case is one graph node as torch.export's serializer writes it (the target
and the `inputs` list of {"name", "arg"} with as_tensor / as_int / as_floats
/ ... unions), its input tensors by name, and the expected outputs computed
with torch. run_case writes them to a temporary folder and runs the tool
build/tests/ref_op_eval (tests/tools/ref_op_eval.c):

    ref_op_eval CASE.json INPUTS.npz OUT.npz

CASE.json = {"target": "aten.add.Tensor", "inputs": [...serde arguments...],
             "outputs": <number of outputs>, "dtype": "float64" | "float32"}
INPUTS.npz holds every tensor the arguments name; OUT.npz receives "0",
"1", ... The tool exits 0 with the outputs, or non-zero with one line on
stderr (an op the library refuses: the message names node and op).

Checks: float outputs by relative L2 error (<= 1e-12 in float64), integer
and bool outputs bit-exact, shapes and dtypes equal.

    import refops as R
    x = torch.randn(3, 4, dtype=torch.float64)
    R.run_case("add broadcast", "aten.add.Tensor",
               [R.t("self", "x"), R.t("other", "y"), R.f("alpha", 2.0)],
               {"x": x, "y": y}, [torch.add(x, y, alpha=2.0)])
"""
import json
import os
import subprocess
import tempfile

import numpy as np

import common as C

TOOL = os.environ.get("ETC_REF_OP_EVAL") or os.path.join(os.path.dirname(C.ETC), "tests", "ref_op_eval")


def t(name, tensor):
    return {"name": name, "arg": {"as_tensor": {"name": tensor}}}


def ts(name, tensors):
    return {"name": name, "arg": {"as_tensors": [{"name": x} for x in tensors]}}


def i(name, v):
    return {"name": name, "arg": {"as_int": int(v)}}


def ints(name, v):
    return {"name": name, "arg": {"as_ints": [int(x) for x in v]}}


def f(name, v):
    return {"name": name, "arg": {"as_float": float(v)}}


def floats(name, v):
    return {"name": name, "arg": {"as_floats": [float(x) for x in v]}}


def b(name, v):
    return {"name": name, "arg": {"as_bool": bool(v)}}


def s(name, v):
    return {"name": name, "arg": {"as_string": v}}


def none(name):
    return {"name": name, "arg": {"as_none": []}}


# torch.export serde ScalarType codes (torch/_export/serde/schema.py)
SERDE_DTYPE = {"uint8": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "float16": 6,
               "float32": 7, "float64": 8, "bool": 12, "bfloat16": 13}


def dtype(name, v):
    return {"name": name, "arg": {"as_scalar_type": SERDE_DTYPE[v]}}


def _np(x):
    try:
        import torch
        if isinstance(x, torch.Tensor):
            return x.detach().contiguous().numpy()
    except ImportError:
        pass
    return np.asarray(x)


def eval_case(target, args, inputs, n_out, ref_dtype="float64"):
    """Runs the tool; returns (list of numpy outputs, None) or (None, stderr)."""
    with tempfile.TemporaryDirectory(prefix="refops-") as d:
        case = os.path.join(d, "case.json")
        with open(case, "w") as fh:
            json.dump({"target": target, "inputs": args, "outputs": n_out, "dtype": ref_dtype}, fh)
        np.savez(os.path.join(d, "in.npz"), **{k: _np(v) for k, v in inputs.items()})
        out = os.path.join(d, "out.npz")
        p = subprocess.run([TOOL, case, os.path.join(d, "in.npz"), out], capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr.strip()
        with np.load(out) as z:
            return [z[str(k)] for k in range(n_out)], None


def close(got, want, rel=1e-12):
    """'' when got matches want, else why not."""
    want = _np(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} != {list(want.shape)}"
    if want.dtype.kind in "fc":
        if got.dtype.kind != "f":
            return f"dtype {got.dtype} for a float result"
        g, w = got.astype(np.float64), want.astype(np.float64)
        same_nan = np.array_equal(np.isnan(g), np.isnan(w))
        fin = np.isfinite(w)
        if not same_nan or not np.array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)]):
            return "NaN/Inf pattern differs"
        num = np.linalg.norm((g - w)[fin])
        den = np.linalg.norm(w[fin])
        err = num / den if den > 0 else num
        return "" if err <= rel else f"relative L2 error {err:.3g} > {rel:g}"
    if got.dtype != want.dtype and not (want.dtype == np.bool_ and got.dtype == np.bool_):
        return f"dtype {got.dtype} != {want.dtype}"
    return "" if np.array_equal(got, want) else "integer values differ"


def run_case(label, target, args, inputs, expected, ref_dtype="float64", rel=None):
    """One check: the op's outputs against `expected` (a list of tensors)."""
    outs, why = eval_case(target, args, inputs, len(expected), ref_dtype)
    if outs is None:
        return C.check(label, False, why)
    if rel is None:
        rel = 1e-12 if ref_dtype == "float64" else 1e-6
    for k, (g, w) in enumerate(zip(outs, expected)):
        bad = close(g, w, rel)
        if bad:
            return C.check(label, False, f"output {k}: {bad}")
    return C.check(label, True)


def refuses(label, target, args, inputs, n_out, needle):
    """One check: the tool refuses the call with a message containing needle."""
    outs, why = eval_case(target, args, inputs, n_out)
    return C.check(label, outs is None and needle in (why or ""), why)
