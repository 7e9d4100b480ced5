"""The op harness tool build/tests/ref_op_eval (tests/refops.py's contract):
aten.relu.default in float64 and float32 against numpy, integer inputs kept
exact, Python's non-finite JSON tokens read, and clear refusals (an unknown
op, a tensor name missing from the inputs, a malformed case)."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import refops as R  # noqa: E402

rng = np.random.default_rng(21)
x = rng.standard_normal((3, 4, 5))
x[0, 0, 0] = np.nan
x[0, 0, 1] = -np.inf

with C.harness():
    C.check("the tool is built", os.path.exists(R.TOOL), R.TOOL)

    outs, why = R.eval_case("aten.relu.default", [R.t("self", "x")], {"x": x}, 1)
    C.check("relu float64 runs", outs is not None, why)
    if outs is not None:
        want = np.where(np.isnan(x), x, np.maximum(x, 0.0))
        C.check("relu float64 dtype", outs[0].dtype == np.float64, outs[0].dtype)
        C.check("relu float64 values (NaN kept)", np.array_equal(outs[0], want, equal_nan=True))

    # float32 input, float64 case: converted to float64 exactly
    x32 = x.astype(np.float32)
    R.run_case("relu float32 input in a float64 case", "aten.relu.default",
               [R.t("self", "x")], {"x": x32}, [np.maximum(x32.astype(np.float64), 0)])
    # float32 case: float32 result
    outs, why = R.eval_case("aten.relu.default", [R.t("self", "x")], {"x": x}, 1, "float32")
    C.check("relu float32 result dtype", outs is not None and outs[0].dtype == np.float32, why)

    # integers keep their dtype
    xi = rng.integers(-100, 100, size=(7,), dtype=np.int64)
    R.run_case("relu int64 exact", "aten.relu.default", [R.t("self", "x")], {"x": xi},
               [np.maximum(xi, 0)])
    # a 0-dim tensor and the fully qualified Edge target
    R.run_case("relu 0-dim, Edge target", "executorch.exir.dialects.edge.ops.aten.relu.default",
               [R.t("self", "x")], {"x": np.array(-2.5)}, [np.array(0.0)])

    R.refuses("unknown op", "aten.no_such_op.default", [R.t("self", "x")], {"x": x}, 1,
              "op aten.no_such_op.default is not supported")
    R.refuses("unknown tensor name", "aten.relu.default", [R.t("self", "y")], {"x": x}, 1,
              "names tensor \"y\"")
    R.refuses("wrong argument kind", "aten.relu.default", [R.i("self", 3)], {"x": x}, 1,
              "self")

    with tempfile.TemporaryDirectory(prefix="refops-") as d:
        np.savez(os.path.join(d, "in.npz"), x=x)

        def raw(text):
            with open(os.path.join(d, "case.json"), "w") as fh:
                fh.write(text)
            return subprocess.run([R.TOOL, os.path.join(d, "case.json"), os.path.join(d, "in.npz"),
                                   os.path.join(d, "out.npz")], capture_output=True, text=True)

        # json.dumps writes Infinity / NaN bare: the decoder must read them
        p = raw(json.dumps({"target": "aten.relu.default", "dtype": "float64", "outputs": 1,
                            "inputs": [R.t("self", "x"), R.f("unused", float("inf"))]}))
        C.check("bare Infinity in the case JSON", p.returncode == 0, p.stderr)
        # a 2023-style union: every member written, the unset ones null
        u = {"as_none": None, "as_tensor": {"name": "x"}, "as_int": None, "as_ints": None}
        p = raw(json.dumps({"target": "aten.relu.default", "dtype": "float64", "outputs": 1,
                            "inputs": [{"name": "self", "arg": u}]}))
        C.check("2023 union with null members", p.returncode == 0, p.stderr)
        p = raw("{not json")
        C.check("malformed case: exit 1, one line",
                p.returncode == 1 and "invalid JSON" in p.stderr and p.stderr.count("\n") == 1,
                p.stderr)
        p = raw(json.dumps({"target": "aten.relu.default", "outputs": 1,
                            "inputs": [{"name": "self", "arg": {"as_tensors": 5}}]}))
        C.check("malformed argument refused", p.returncode == 1 and "self" in p.stderr, p.stderr)

C.finish()
