"""The reference executor's first op family (src/reference/ops_{unary,binary,
reduce,norm,quant,create}.c) against Debian's torch 1.13 in float64, one op
call per case through build/tests/ref_op_eval (tests/refops.py): broadcasting,
negative dims, transposed data, empty and 0-d tensors, int and bool dtypes,
every attribute of each op, float32 mode, refusals; and the quantized ops
bit-exact against the real qcnn export (the torch oracle and the ExecuTorch
runtime's own debug buffer values)."""
import io
import json
import math
import os
import zipfile

import numpy as np
import torch

import common as C
import refops as R
from refops import t, i, f, b, s, none, ints, dtype as dt

torch.manual_seed(1234)
np.seterr(invalid="ignore")  # refops.close subtracts inf from inf before masking them
torch.set_default_dtype(torch.float64)  # Python-scalar and int/int results in float64

F64 = torch.float64
A = torch.ops.aten


def rn(*shape):
    return torch.randn(*shape, dtype=F64)


def ri(*shape, lo=-9, hi=10, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


# Cases are queued and run at the end on a few threads (each is one process of
# the tool); their checks are reported in the order they were written.
QUEUE = []


def case(label, target, args, inputs, expected, ref_dtype="float64", rel=None):
    if not isinstance(expected, (list, tuple)):
        expected = [expected]
    if rel is None:
        rel = 1e-12 if ref_dtype == "float64" else 1e-6
    QUEUE.append(("case", label, (target, args, inputs, len(expected), ref_dtype),
                  (list(expected), rel)))


def refuse(label, target, args, inputs, needle, n_out=1):
    QUEUE.append(("refuse", label, (target, args, inputs, n_out, "float64"), needle))


def q_target(label):
    return next(q[2][0] for q in QUEUE if q[1] == label)


def run_queue():
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(R.eval_case, *q[2]) for q in QUEUE]
        for (kind, label, _, want), fut in zip(QUEUE, futures):
            outs, why = fut.result()
            if kind == "refuse":
                # an op's refusal names the node and the op, then what it expected
                named = want == "not supported" or \
                    (why or "").startswith(f"node case ({q_target(label)})")
                C.check(label, outs is None and want in (why or "") and named, why)
                continue
            if outs is None:
                C.check(label, False, why)
                continue
            expected, rel = want
            bad = ""
            for k, (g, w) in enumerate(zip(outs, expected)):
                bad = R.close(g, w, rel)
                if bad:
                    bad = f"output {k}: {bad}"
                    break
            C.check(label, not bad, bad)
    QUEUE.clear()


# --- unary --------------------------------------------------------------------------

x = rn(4, 3).t()  # transposed data (the tool sees a contiguous copy)
pos = x.abs() + 0.1
e0 = torch.empty(0, 3, dtype=F64)
z0 = torch.tensor(-0.7, dtype=F64)
xi = ri(2, 5)
xb = torch.tensor([[True, False, True]])

FLOAT_UNARY = {
    "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "sigmoid": torch.sigmoid,
    "tanh": torch.tanh, "relu": torch.relu, "erf": torch.erf, "sin": torch.sin, "cos": torch.cos,
    "silu": torch.nn.functional.silu, "hardswish": torch.nn.functional.hardswish,
    "hardsigmoid": torch.nn.functional.hardsigmoid, "sign": torch.sign, "floor": torch.floor,
    "ceil": torch.ceil, "round": torch.round, "reciprocal": torch.reciprocal,
}
for name, fn in FLOAT_UNARY.items():
    target = f"aten.{name}.default"
    case(f"{name} transposed", target, [t("self", "x")], {"x": x}, fn(x))
    case(f"{name} empty", target, [t("self", "x")], {"x": e0}, fn(e0))
    case(f"{name} 0-d", target, [t("self", "x")], {"x": z0}, fn(z0))
for name, fn in {"log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt}.items():
    case(f"{name}", f"aten.{name}.default", [t("self", "x")], {"x": pos}, fn(pos))
    special = torch.tensor([0.0, -1.0, float("inf")], dtype=F64)
    case(f"{name} 0, -1, inf", f"aten.{name}.default", [t("self", "x")], {"x": special},
         fn(special))
# ints: kept (neg, abs, relu, sign, floor, ceil, round) or made float (exp, sigmoid, ...)
for name in ["neg", "abs", "relu", "sign", "floor", "ceil", "round", "exp", "sigmoid", "tanh",
             "erf", "reciprocal", "sqrt", "sin"]:
    xin = xi.abs() + 1 if name in ("sqrt", "reciprocal") else xi
    case(f"{name} int64", f"aten.{name}.default", [t("self", "x")], {"x": xin},
         getattr(torch, name)(xin))
case("neg int8 wraps", "aten.neg.default", [t("self", "x")],
     {"x": torch.tensor([-128, 5], dtype=torch.int8)}, -torch.tensor([-128, 5], dtype=torch.int8))
case("abs int32", "aten.abs.default", [t("self", "x")], {"x": xi.int()}, xi.int().abs())
case("sign bool", "aten.sign.default", [t("self", "x")], {"x": xb}, torch.sign(xb))
case("exp bool", "aten.exp.default", [t("self", "x")], {"x": xb}, torch.exp(xb))
nanx = torch.tensor([float("nan"), -0.0, 2.5, -2.5, 0.5, 1.5], dtype=F64)
for name in ["relu", "sign", "round", "floor", "abs", "sigmoid"]:
    case(f"{name} nan and halves", f"aten.{name}.default", [t("self", "x")], {"x": nanx},
         getattr(torch, name)(nanx))
big = torch.tensor([-800.0, 800.0, -40.0, 40.0], dtype=F64)
case("sigmoid saturates", "aten.sigmoid.default", [t("self", "x")], {"x": big}, torch.sigmoid(big))
case("silu saturates", "aten.silu.default", [t("self", "x")], {"x": big},
     torch.nn.functional.silu(big))

for approx in ["none", "tanh"]:
    case(f"gelu approximate={approx}", "aten.gelu.default",
         [t("self", "x"), s("approximate", approx)], {"x": x},
         torch.nn.functional.gelu(x, approximate=approx))
case("gelu default (the mlp's form: no approximate)", "aten.gelu.default", [t("self", "x")],
     {"x": x}, torch.nn.functional.gelu(x))
refuse("gelu bad approximate", "aten.gelu.default", [t("self", "x"), s("approximate", "erf")],
       {"x": x}, "approximate")
refuse("gelu int", "aten.gelu.default", [t("self", "x")], {"x": xi}, "floating-point")
refuse("neg bool", "aten.neg.default", [t("self", "x")], {"x": xb}, "aten.neg.default")
refuse("relu bool", "aten.relu.default", [t("self", "x")], {"x": xb}, "node case")

case("hardtanh default", "aten.hardtanh.default", [t("self", "x")], {"x": x * 2},
     torch.nn.functional.hardtanh(x * 2))
case("hardtanh -0.5, 0.3", "aten.hardtanh.default",
     [t("self", "x"), f("min_val", -0.5), f("max_val", 0.3)], {"x": x},
     torch.nn.functional.hardtanh(x, -0.5, 0.3))
case("hardtanh int", "aten.hardtanh.default", [t("self", "x"), i("min_val", -2), i("max_val", 3)],
     {"x": xi}, A.hardtanh(xi, -2, 3))
for slope in [None, 0.2, -1.5]:
    args = [t("self", "x")] + ([] if slope is None else [f("negative_slope", slope)])
    case(f"leaky_relu slope={slope}", "aten.leaky_relu.default", args, {"x": x},
         torch.nn.functional.leaky_relu(x, 0.01 if slope is None else slope))

case("clamp min and max", "aten.clamp.default", [t("self", "x"), f("min", -0.3), f("max", 0.4)],
     {"x": x}, torch.clamp(x, -0.3, 0.4))
case("clamp min only", "aten.clamp.default", [t("self", "x"), f("min", -0.3), none("max")],
     {"x": x}, torch.clamp(x, min=-0.3))
case("clamp max only", "aten.clamp.default", [t("self", "x"), none("min"), f("max", 0.1)],
     {"x": x}, torch.clamp(x, max=0.1))
case("clamp min > max", "aten.clamp.default", [t("self", "x"), f("min", 0.5), f("max", -0.5)],
     {"x": x}, torch.clamp(x, 0.5, -0.5))
case("clamp int with int bounds", "aten.clamp.default",
     [t("self", "x"), i("min", -3), i("max", 4)], {"x": xi.int()}, torch.clamp(xi.int(), -3, 4))
case("clamp int with a float bound promotes", "aten.clamp.default",
     [t("self", "x"), f("min", 2.5)], {"x": xi}, torch.clamp(xi, min=2.5))
case("clamp nan", "aten.clamp.default", [t("self", "x"), f("min", 0.0), f("max", 1.0)],
     {"x": nanx}, torch.clamp(nanx, 0.0, 1.0))
refuse("clamp without bounds", "aten.clamp.default", [t("self", "x"), none("min"), none("max")],
       {"x": x}, "min or max")
lo, hi = rn(3, 1) - 1, rn(4) + 1
case("clamp.Tensor broadcast", "aten.clamp.Tensor",
     [t("self", "x"), t("min", "lo"), t("max", "hi")], {"x": x, "lo": lo, "hi": hi},
     torch.clamp(x, lo, hi))
case("clamp.Tensor max only", "aten.clamp.Tensor", [t("self", "x"), none("min"), t("max", "hi")],
     {"x": x, "hi": hi}, torch.clamp(x, max=hi))
lo_i, hi_i = ri(2, 1, lo=-5, hi=0), ri(5, lo=0, hi=5)
case("clamp.Tensor int bounds", "aten.clamp.Tensor",
     [t("self", "x"), t("min", "lo"), t("max", "hi")], {"x": xi, "lo": lo_i, "hi": hi_i},
     torch.clamp(xi, lo_i, hi_i))

case("logical_not float", "aten.logical_not.default", [t("self", "x")],
     {"x": torch.tensor([0.0, -0.0, 2.0, float("nan")])},
     torch.logical_not(torch.tensor([0.0, -0.0, 2.0, float("nan")])))
case("logical_not int", "aten.logical_not.default", [t("self", "x")], {"x": xi},
     torch.logical_not(xi))
case("bitwise_not int", "aten.bitwise_not.default", [t("self", "x")], {"x": xi},
     torch.bitwise_not(xi))
case("bitwise_not uint8", "aten.bitwise_not.default", [t("self", "x")],
     {"x": torch.tensor([0, 7, 255], dtype=torch.uint8)},
     torch.bitwise_not(torch.tensor([0, 7, 255], dtype=torch.uint8)))
case("bitwise_not bool", "aten.bitwise_not.default", [t("self", "x")], {"x": xb},
     torch.bitwise_not(xb))
refuse("bitwise_not float", "aten.bitwise_not.default", [t("self", "x")], {"x": x},
       "integer or bool")

# --- binary -------------------------------------------------------------------------

a3, b2 = rn(3, 1, 4), rn(2, 4)
at = rn(4, 3).t()  # transposed
case("add broadcast", "aten.add.Tensor", [t("self", "a"), t("other", "b")], {"a": a3, "b": b2},
     a3 + b2)
case("add alpha 2.5", "aten.add.Tensor", [t("self", "a"), t("other", "b"), f("alpha", 2.5)],
     {"a": a3, "b": b2}, torch.add(a3, b2, alpha=2.5))
row = rn(4)
case("add transposed + row", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": at, "b": row}, at + row)
case("add empty", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": torch.empty(0, 4), "b": row}, torch.empty(0, 4) + row)
case("add 0-d + 0-d", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": z0, "b": torch.tensor(3.0)}, z0 + 3.0)
ia, ib = ri(3, 4), ri(4)
case("add int alpha 3", "aten.add.Tensor", [t("self", "a"), t("other", "b"), i("alpha", 3)],
     {"a": ia, "b": ib}, torch.add(ia, ib, alpha=3))
case("add int + float tensor", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": ia, "b": row}, ia + row)
u8, i8 = torch.tensor([200, 3, 255], dtype=torch.uint8), torch.tensor([-100, 7, 100], dtype=torch.int8)
case("add uint8 + int8 is int16", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": u8, "b": i8}, u8 + i8)
case("add int8 + int8 wraps", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": i8, "b": i8}, i8 + i8)
bb = torch.tensor([True, False, True])
case("add bool + bool", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": bb, "b": torch.tensor([True, False, False])}, bb + torch.tensor([True, False, False]))
case("add int32 + int64 0-d stays int32", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": ia.int(), "b": torch.tensor(5)}, ia.int() + torch.tensor(5))
case("add int + float 0-d is float", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": ia, "b": torch.tensor(0.5)}, ia + torch.tensor(0.5))
case("add.Scalar int + int keeps int32", "aten.add.Scalar", [t("self", "a"), i("other", 4)],
     {"a": ia.int()}, ia.int() + 4)
case("add.Scalar int + float is float", "aten.add.Scalar", [t("self", "a"), f("other", 0.25)],
     {"a": ia}, ia + 0.25)
case("add.Scalar alpha", "aten.add.Scalar", [t("self", "a"), f("other", 0.25), f("alpha", -2.0)],
     {"a": a3}, torch.add(a3, 0.25, alpha=-2.0))
case("add.Scalar bool + int", "aten.add.Scalar", [t("self", "a"), i("other", 2)], {"a": bb}, bb + 2)
refuse("add int with float alpha", "aten.add.Tensor",
       [t("self", "a"), t("other", "b"), f("alpha", 0.5)], {"a": ia, "b": ib}, "alpha")
refuse("add shapes that do not broadcast", "aten.add.Tensor", [t("self", "a"), t("other", "b")],
       {"a": rn(3, 4), "b": rn(3)}, "do not broadcast")
case("sub alpha", "aten.sub.Tensor", [t("self", "a"), t("other", "b"), f("alpha", 0.5)],
     {"a": a3, "b": b2}, torch.sub(a3, b2, alpha=0.5))
case("sub int", "aten.sub.Tensor", [t("self", "a"), t("other", "b")], {"a": ia, "b": ib}, ia - ib)
case("sub.Scalar", "aten.sub.Scalar", [t("self", "a"), f("other", 1.5)], {"a": a3}, a3 - 1.5)
refuse("sub bool", "aten.sub.Tensor", [t("self", "a"), t("other", "b")], {"a": bb, "b": bb},
       "bool")
case("rsub.Scalar", "aten.rsub.Scalar", [t("self", "a"), f("other", 1.5), f("alpha", 2.0)],
     {"a": a3}, torch.rsub(a3, 1.5, alpha=2.0))
case("rsub.Tensor", "aten.rsub.Tensor", [t("self", "a"), t("other", "b")], {"a": a3, "b": b2},
     torch.rsub(a3, b2))
case("mul broadcast", "aten.mul.Tensor", [t("self", "a"), t("other", "b")], {"a": a3, "b": b2},
     a3 * b2)
case("mul by a 0-d constant (tiny_transformer's form)", "aten.mul.Tensor",
     [t("self", "a"), t("other", "b")], {"a": a3, "b": torch.tensor(0.25)}, a3 * 0.25)
case("mul int", "aten.mul.Tensor", [t("self", "a"), t("other", "b")], {"a": ia, "b": ib}, ia * ib)
case("mul bool", "aten.mul.Tensor", [t("self", "a"), t("other", "b")], {"a": bb, "b": bb}, bb * bb)
case("mul.Scalar", "aten.mul.Scalar", [t("self", "a"), f("other", -3.0)], {"a": a3}, a3 * -3.0)
case("mul.Scalar int tensor float scalar", "aten.mul.Scalar", [t("self", "a"), f("other", 0.5)],
     {"a": ia}, ia * 0.5)
den = rn(3, 1, 4)
case("div true", "aten.div.Tensor", [t("self", "a"), t("other", "b")], {"a": b2, "b": den},
     b2 / den)
case("div int / int is float", "aten.div.Tensor", [t("self", "a"), t("other", "b")],
     {"a": ia, "b": ib.abs() + 1}, ia / (ib.abs() + 1))
case("div by zero gives inf/nan", "aten.div.Tensor", [t("self", "a"), t("other", "b")],
     {"a": torch.tensor([1.0, -1.0, 0.0]), "b": torch.zeros(3)},
     torch.tensor([1.0, -1.0, 0.0]) / torch.zeros(3))
fa = torch.tensor([7.0, -7.0, 7.5, -7.5, 0.0, -0.0, 6.0, 1e300])
fb = torch.tensor([2.0, 2.0, -2.0, -2.0, -3.0, 3.0, -3.0, 3.0])
ja = torch.tensor([7, -7, 7, -7, 0, 6, -6, 5])
jb = torch.tensor([2, 2, -2, -2, -3, -3, 3, 1])
for mode in ["trunc", "floor"]:
    case(f"div {mode} float", "aten.div.Tensor_mode",
         [t("self", "a"), t("other", "b"), s("rounding_mode", mode)], {"a": fa, "b": fb},
         torch.div(fa, fb, rounding_mode=mode))
    case(f"div {mode} random float", "aten.div.Tensor_mode",
         [t("self", "a"), t("other", "b"), s("rounding_mode", mode)], {"a": a3 * 10, "b": b2},
         torch.div(a3 * 10, b2, rounding_mode=mode))
    case(f"div {mode} int", "aten.div.Tensor_mode",
         [t("self", "a"), t("other", "b"), s("rounding_mode", mode)], {"a": ja, "b": jb},
         torch.div(ja, jb, rounding_mode=mode))
    case(f"div {mode} int8", "aten.div.Tensor_mode",
         [t("self", "a"), t("other", "b"), s("rounding_mode", mode)],
         {"a": ja.to(torch.int8), "b": jb.to(torch.int8)},
         torch.div(ja.to(torch.int8), jb.to(torch.int8), rounding_mode=mode))
    case(f"div.Scalar_mode {mode}", "aten.div.Scalar_mode",
         [t("self", "a"), i("other", -3), s("rounding_mode", mode)], {"a": ja},
         torch.div(ja, -3, rounding_mode=mode))
    refuse(f"div {mode} int by zero", "aten.div.Tensor_mode",
           [t("self", "a"), t("other", "b"), s("rounding_mode", mode)],
           {"a": ja, "b": torch.zeros(8, dtype=torch.int64)}, "division by zero")
case("div Tensor_mode None", "aten.div.Tensor_mode",
     [t("self", "a"), t("other", "b"), none("rounding_mode")], {"a": ja, "b": jb}, ja / jb)
case("div.Scalar", "aten.div.Scalar", [t("self", "a"), f("other", 4.0)], {"a": a3}, a3 / 4.0)
refuse("div bad mode", "aten.div.Tensor_mode",
       [t("self", "a"), t("other", "b"), s("rounding_mode", "round")], {"a": fa, "b": fb},
       "rounding_mode")
case("pow Tensor_Tensor", "aten.pow.Tensor_Tensor", [t("self", "a"), t("exponent", "b")],
     {"a": a3.abs(), "b": b2}, torch.pow(a3.abs(), b2))
case("pow Tensor_Tensor int", "aten.pow.Tensor_Tensor", [t("self", "a"), t("exponent", "b")],
     {"a": ja, "b": jb.abs()}, torch.pow(ja, jb.abs()))
case("pow int negative exponents", "aten.pow.Tensor_Tensor", [t("self", "a"), t("exponent", "b")],
     {"a": torch.tensor([1, -1, -1, 2, 0]), "b": torch.tensor([-3, -3, -2, -1, 2])},
     torch.pow(torch.tensor([1, -1, -1, 2, 0]), torch.tensor([-3, -3, -2, -1, 2])))
for ex in [2.0, 0.5, -1.0, 3.0, -0.5, 1.7]:
    case(f"pow Tensor_Scalar {ex}", "aten.pow.Tensor_Scalar", [t("self", "a"), f("exponent", ex)],
         {"a": a3.abs()}, torch.pow(a3.abs(), ex))
case("pow Tensor_Scalar int ** 3", "aten.pow.Tensor_Scalar", [t("self", "a"), i("exponent", 3)],
     {"a": ja}, torch.pow(ja, 3))
case("pow Tensor_Scalar int ** 0.5 is float", "aten.pow.Tensor_Scalar",
     [t("self", "a"), f("exponent", 0.5)], {"a": ja.abs()}, torch.pow(ja.abs(), 0.5))
refuse("pow int ** -2", "aten.pow.Tensor_Scalar", [t("self", "a"), i("exponent", -2)], {"a": ja},
       "negative")
case("pow.Scalar", "aten.pow.Scalar", [f("self", 2.0), t("exponent", "b")], {"b": b2},
     torch.pow(2.0, b2))
case("pow.Scalar int", "aten.pow.Scalar", [i("self", 3), t("exponent", "b")], {"b": jb.abs()},
     torch.pow(3, jb.abs()))
na = torch.tensor([1.0, float("nan"), 3.0, -0.0])
nb = torch.tensor([2.0, 0.0, float("nan"), 0.0])
for name in ["minimum", "maximum"]:
    fn = getattr(torch, name)
    case(f"{name} broadcast", f"aten.{name}.default", [t("self", "a"), t("other", "b")],
         {"a": a3, "b": b2}, fn(a3, b2))
    case(f"{name} nan", f"aten.{name}.default", [t("self", "a"), t("other", "b")],
         {"a": na, "b": nb}, fn(na, nb))
    case(f"{name} int", f"aten.{name}.default", [t("self", "a"), t("other", "b")],
         {"a": ia, "b": ib}, fn(ia, ib))
cond = torch.rand(3, 1, 4) > 0.5
wo = rn(4)
case("where broadcast", "aten.where.self", [t("condition", "c"), t("self", "a"), t("other", "b")],
     {"c": cond, "a": b2, "b": wo}, torch.where(cond, b2, wo))
case("where int/float promotes", "aten.where.self",
     [t("condition", "c"), t("self", "a"), t("other", "b")], {"c": cond, "a": ib, "b": wo},
     torch.where(cond, ib.double(), wo))
case("where int", "aten.where.self", [t("condition", "c"), t("self", "a"), t("other", "b")],
     {"c": cond, "a": ib, "b": ia}, torch.where(cond, ib, ia))
refuse("where float condition", "aten.where.self",
       [t("condition", "c"), t("self", "a"), t("other", "b")],
       {"c": rn(4), "a": ib, "b": ia}, "condition")
cmp_a = torch.tensor([[1.0, 2.0, float("nan"), 4.0]])
cmp_b = torch.tensor([[1.0], [3.0]])
for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    fn = getattr(torch, name)
    case(f"{name}.Tensor", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": cmp_a, "b": cmp_b}, fn(cmp_a, cmp_b))
    case(f"{name}.Tensor int", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": ia, "b": ib}, fn(ia, ib))
    case(f"{name}.Scalar", f"aten.{name}.Scalar", [t("self", "a"), f("other", 2.0)],
         {"a": cmp_a}, fn(cmp_a, 2.0))
    case(f"{name}.Scalar int vs 2.5", f"aten.{name}.Scalar", [t("self", "a"), f("other", 2.5)],
         {"a": ia}, fn(ia, 2.5))
la = torch.tensor([0.0, 1.0, -2.0, 0.0])
lb = torch.tensor([0, 0, 3, 5])
for name in ["logical_and", "logical_or", "logical_xor"]:
    fn = getattr(torch, name)
    case(f"{name}", f"aten.{name}.default", [t("self", "a"), t("other", "b")],
         {"a": la, "b": lb}, fn(la, lb))
    case(f"{name} broadcast bool", f"aten.{name}.default", [t("self", "a"), t("other", "b")],
         {"a": cond, "b": bb.reshape(1, 3, 1)}, fn(cond, bb.reshape(1, 3, 1)))
for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
    fn = getattr(torch, name)
    case(f"{name} int", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": ia, "b": ib}, fn(ia, ib))
    case(f"{name} bool", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": bb, "b": torch.tensor([True, True, False])}, fn(bb, torch.tensor([True, True, False])))
    case(f"{name}.Scalar", f"aten.{name}.Scalar", [t("self", "a"), i("other", 6)],
         {"a": ia.int()}, fn(ia.int(), 6))
refuse("bitwise_and float", "aten.bitwise_and.Tensor", [t("self", "a"), t("other", "b")],
       {"a": a3, "b": b2}, "integer or bool")

# --- reductions ----------------------------------------------------------------------

r4 = rn(2, 3, 4, 5)
rt = rn(5, 4).t()
for dims, keep in [([1], False), ([-1, 1], True), ([0, 2, 3], False), ([], False), ([-4], True)]:
    case(f"sum dims {dims} keepdim={keep}", "aten.sum.dim_IntList",
         [t("self", "x"), ints("dim", dims), b("keepdim", keep)], {"x": r4},
         torch.sum(r4, dims, keepdim=keep) if dims else torch.sum(r4))
    case(f"mean dims {dims} keepdim={keep}", "aten.mean.dim",
         [t("self", "x"), ints("dim", dims), b("keepdim", keep)], {"x": r4},
         torch.mean(r4, dims, keepdim=keep) if dims else torch.mean(r4))
    if dims:
        case(f"amax dims {dims} keepdim={keep}", "aten.amax.default",
             [t("self", "x"), ints("dim", dims), b("keepdim", keep)], {"x": r4},
             torch.amax(r4, dims, keepdim=keep))
        case(f"amin dims {dims} keepdim={keep}", "aten.amin.default",
             [t("self", "x"), ints("dim", dims), b("keepdim", keep)], {"x": r4},
             torch.amin(r4, dims, keepdim=keep))
case("sum None dim", "aten.sum.dim_IntList", [t("self", "x"), none("dim")], {"x": rt}, rt.sum())
case("sum transposed dim 0", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [0])],
     {"x": rt}, rt.sum(0))
case("sum int", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [1])], {"x": xi},
     xi.sum(1))
case("sum int32 is int64", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [0])],
     {"x": xi.int()}, xi.int().sum(0))
case("sum bool", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [1])],
     {"x": cond.reshape(3, 4)}, cond.reshape(3, 4).sum(1))
case("sum dtype float64 of int", "aten.sum.dim_IntList",
     [t("self", "x"), ints("dim", [1]), b("keepdim", True), dt("dtype", "float64")], {"x": xi},
     xi.sum(1, keepdim=True, dtype=F64))
case("sum of an empty dim", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [0])],
     {"x": e0}, e0.sum(0))
case("sum 0-d", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [0])], {"x": z0}, z0.sum(0))
big_r = rn(3, 1000, 200)  # 600000 reduced elements: offsets computed on the fly
case("sum over 600000 elements", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [2, 0, 1])],
     {"x": big_r}, big_r.sum())
case("amax over dims 0 and 1 of a large tensor", "aten.amax.default",
     [t("self", "x"), ints("dim", [0, 1]), b("keepdim", True)], {"x": big_r},
     torch.amax(big_r, [0, 1], keepdim=True))
infs = torch.tensor([[float("inf"), 1.0, 2.0], [float("inf"), float("-inf"), 0.0],
                     [-1e308, -1e308, 5.0]])
case("sum with inf, inf - inf and overflow", "aten.sum.dim_IntList",
     [t("self", "x"), ints("dim", [1])], {"x": infs}, infs.sum(1))
case("mean with inf", "aten.mean.dim", [t("self", "x"), ints("dim", [1])], {"x": infs},
     infs.mean(1))
case("cumsum with inf", "aten.cumsum.default", [t("self", "x"), i("dim", 1)], {"x": infs},
     torch.cumsum(infs, 1))
case("sum.default", "aten.sum.default", [t("self", "x")], {"x": r4}, r4.sum())
case("sum.default int", "aten.sum.default", [t("self", "x")], {"x": xi}, xi.sum())
case("sum cancellation", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [0])],
     {"x": torch.tensor([1e16, 1.0, -1e16, 3.0])}, torch.tensor(4.0))
case("mean dtype float64 of int", "aten.mean.dim",
     [t("self", "x"), ints("dim", [1]), b("keepdim", False), dt("dtype", "float64")], {"x": xi},
     xi.double().mean(1))
refuse("mean int", "aten.mean.dim", [t("self", "x"), ints("dim", [1])], {"x": xi},
       "floating-point")
refuse("sum dim out of range", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [4])],
       {"x": r4}, "out of range")
refuse("sum repeated dim", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [1, -3])],
       {"x": r4}, "twice")
case("amax int", "aten.amax.default", [t("self", "x"), ints("dim", [1])], {"x": xi},
     torch.amax(xi, 1))
case("amin bool", "aten.amin.default", [t("self", "x"), ints("dim", [1])],
     {"x": cond.reshape(3, 4)}, torch.amin(cond.reshape(3, 4), 1))
nan2 = torch.tensor([[1.0, float("nan"), 3.0], [2.0, 5.0, -1.0]])
case("amax nan", "aten.amax.default", [t("self", "x"), ints("dim", [1])], {"x": nan2},
     torch.amax(nan2, 1))
case("amax every dim", "aten.amax.default", [t("self", "x"), ints("dim", [])], {"x": r4},
     torch.amax(r4, []))
refuse("amax of an empty dim", "aten.amax.default", [t("self", "x"), ints("dim", [0])],
       {"x": e0}, "empty")
for corr in [None, 0, 1, 2, 1.5]:
    for dims, keep in [([1], False), ([0, -1], True), (None, False)]:
        args = [t("self", "x")] + ([none("dim")] if dims is None else [ints("dim", dims)])
        if corr is not None:
            args.append(f("correction", corr) if isinstance(corr, float) else i("correction", corr))
        args.append(b("keepdim", keep))
        if isinstance(corr, float):  # torch 1.13 takes an int correction: numpy's ddof
            want = torch.tensor(np.var(r4.numpy(), axis=None if dims is None else
                                           tuple(dims), ddof=corr, keepdims=keep))
        else:
            want = A.var.correction(r4, dims, correction=corr, keepdim=keep)
        case(f"var correction={corr} dims={dims} keepdim={keep}", "aten.var.correction", args,
             {"x": r4}, want)
v31 = rn(3, 1)
case("var single element correction 1 is nan", "aten.var.correction",
     [t("self", "x"), ints("dim", [1])], {"x": v31}, torch.var(v31, 1))
argx = torch.tensor([[1, 5, 5, 2], [7, 7, 0, 7], [-1, -3, -3, 4]])
for name in ["argmax", "argmin"]:
    fn = getattr(torch, name)
    for dim, keep in [(1, False), (0, True), (-1, True)]:
        case(f"{name} dim {dim} keepdim={keep}", f"aten.{name}.default",
             [t("self", "x"), i("dim", dim), b("keepdim", keep)], {"x": r4}, fn(r4, dim, keep))
    case(f"{name} ties take the first", f"aten.{name}.default",
         [t("self", "x"), i("dim", 1)], {"x": argx}, fn(argx, 1))
    case(f"{name} dim None", f"aten.{name}.default", [t("self", "x"), none("dim")], {"x": rt},
         fn(rt))
    case(f"{name} dim None keepdim", f"aten.{name}.default",
         [t("self", "x"), none("dim"), b("keepdim", True)], {"x": rt}, fn(rt, None, True))
    case(f"{name} nan", f"aten.{name}.default", [t("self", "x"), i("dim", 1)], {"x": nan2},
         fn(nan2, 1))
anyx = torch.tensor([[0, 0, 3], [0, 0, 0]])
case("any.dim", "aten.any.dim", [t("self", "x"), i("dim", 1)], {"x": anyx}, torch.any(anyx, 1))
case("any.dim keepdim float", "aten.any.dim", [t("self", "x"), i("dim", 0), b("keepdim", True)],
     {"x": anyx.double()}, torch.any(anyx.double(), 0, keepdim=True))
case("any.default", "aten.any.default", [t("self", "x")], {"x": anyx}, torch.any(anyx))
case("any.default empty", "aten.any.default", [t("self", "x")], {"x": e0}, torch.any(e0))
case("any.default uint8 is uint8", "aten.any.default", [t("self", "x")],
     {"x": anyx.to(torch.uint8)}, torch.any(anyx.to(torch.uint8)))
anyb = torch.rand(2, 3, 4) > 0.8
case("any.dims", "aten.any.dims", [t("self", "x"), ints("dim", [0, 2]), b("keepdim", False)],
     {"x": anyb}, torch.from_numpy(np.any(anyb.numpy(), axis=(0, 2))))
case("any.dims keepdim", "aten.any.dims", [t("self", "x"), ints("dim", [-1]), b("keepdim", True)],
     {"x": anyb}, torch.from_numpy(np.any(anyb.numpy(), axis=-1, keepdims=True)))
for name in ["max", "min"]:
    fn = getattr(torch, name)
    case(f"{name}.dim", f"aten.{name}.dim", [t("self", "x"), i("dim", 2)], {"x": r4},
         list(fn(r4, 2)))
    case(f"{name}.dim keepdim int ties", f"aten.{name}.dim",
         [t("self", "x"), i("dim", 1), b("keepdim", True)], {"x": argx},
         list(fn(argx, 1, keepdim=True)))
    case(f"{name}.dim nan", f"aten.{name}.dim", [t("self", "x"), i("dim", -1)], {"x": nan2},
         list(fn(nan2, -1)))
refuse("max.dim needs 2 outputs", "aten.max.dim", [t("self", "x"), i("dim", 1)], {"x": r4},
       "2 outputs", n_out=1)
sm = rn(3, 4, 5) * 5
for name, fn in [("_softmax", torch.softmax), ("_log_softmax", torch.log_softmax)]:
    for dim in [-1, 0, 1]:
        case(f"{name} dim {dim}", f"aten.{name}.default",
             [t("self", "x"), i("dim", dim), b("half_to_float", False)], {"x": sm}, fn(sm, dim))
    inf = torch.tensor([[0.0, float("-inf"), 1.0], [float("-inf")] * 3, [800.0, -800.0, 800.0]])
    case(f"{name} -inf and large", f"aten.{name}.default",
         [t("self", "x"), i("dim", 1), b("half_to_float", False)], {"x": inf}, fn(inf, 1))
    case(f"{name} transposed", f"aten.{name}.default",
         [t("self", "x"), i("dim", 0), b("half_to_float", False)], {"x": rt}, fn(rt, 0))
    case(f"{name} float32 mode", f"aten.{name}.default",
         [t("self", "x"), i("dim", -1), b("half_to_float", False)], {"x": sm.float()},
         fn(sm, -1), ref_dtype="float32")
    refuse(f"{name} half_to_float", f"aten.{name}.default",
           [t("self", "x"), i("dim", 1), b("half_to_float", True)], {"x": sm}, "half_to_float")
    refuse(f"{name} int", f"aten.{name}.default",
           [t("self", "x"), i("dim", 1), b("half_to_float", False)], {"x": xi}, "floating-point")

# --- normalization ------------------------------------------------------------------------

ln_x = rn(2, 3, 8) * 3 + 1
ln_w, ln_b = rn(8), rn(8)
for ns, w, bias in [([8], True, True), ([3, 8], True, False), ([8], False, False)]:
    wt = rn(*ns) if w else None
    bt = rn(*ns) if bias else None
    args = [t("input", "x"), ints("normalized_shape", ns),
            t("weight", "w") if w else none("weight"), t("bias", "b") if bias else none("bias"),
            f("eps", 1e-5)]
    inputs = {"x": ln_x}
    if w:
        inputs["w"] = wt
    if bias:
        inputs["b"] = bt
    case(f"native_layer_norm {ns} weight={w} bias={bias}", "aten.native_layer_norm.default", args,
         inputs, list(A.native_layer_norm(ln_x, ns, wt, bt, 1e-5)))
case("native_layer_norm float32 mode", "aten.native_layer_norm.default",
     [t("input", "x"), ints("normalized_shape", [8]), t("weight", "w"), t("bias", "b"),
      f("eps", 1e-5)], {"x": ln_x.float(), "w": ln_w.float(), "b": ln_b.float()},
     list(A.native_layer_norm(ln_x, [8], ln_w, ln_b, 1e-5)), ref_dtype="float32")
refuse("native_layer_norm shape mismatch", "aten.native_layer_norm.default",
       [t("input", "x"), ints("normalized_shape", [7]), none("weight"), none("bias"),
        f("eps", 1e-5)], {"x": ln_x}, "normalized_shape", n_out=3)
refuse("native_layer_norm weight shape", "aten.native_layer_norm.default",
       [t("input", "x"), ints("normalized_shape", [8]), t("weight", "w"), none("bias"),
        f("eps", 1e-5)], {"x": ln_x, "w": rn(4)}, "weight", n_out=3)
gn_x = rn(2, 6, 3, 4)
gw, gb = rn(6), rn(6)
for g in [1, 2, 3, 6]:
    case(f"native_group_norm groups={g}", "aten.native_group_norm.default",
         [t("input", "x"), t("weight", "w"), t("bias", "b"), i("N", 2), i("C", 6), i("HxW", 12),
          i("group", g), f("eps", 1e-5)], {"x": gn_x, "w": gw, "b": gb},
         list(A.native_group_norm(gn_x, gw, gb, 2, 6, 12, g, 1e-5)))
case("native_group_norm no affine", "aten.native_group_norm.default",
     [t("input", "x"), none("weight"), none("bias"), i("N", 2), i("C", 6), i("HxW", 12),
      i("group", 3), f("eps", 1e-3)], {"x": gn_x},
     list(A.native_group_norm(gn_x, None, None, 2, 6, 12, 3, 1e-3)))
refuse("native_group_norm bad group", "aten.native_group_norm.default",
       [t("input", "x"), none("weight"), none("bias"), i("N", 2), i("C", 6), i("HxW", 12),
        i("group", 4), f("eps", 1e-5)], {"x": gn_x}, "group", n_out=3)
bn_x = rn(2, 4, 5, 5) * 2 + 0.5
bw, bbias, rm, rv = rn(4), rn(4), rn(4), torch.rand(4) + 0.5
bn_eval = A.native_batch_norm(bn_x, bw, bbias, rm, rv, False, 0.1, 1e-5)
case("_native_batch_norm_legit_no_training (cnn's form)",
     "aten._native_batch_norm_legit_no_training.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), f("momentum", 0.0), f("eps", 1e-5)],
     {"x": bn_x, "w": bw, "b": bbias, "rm": rm, "rv": rv},
     [bn_eval[0], torch.empty(0), torch.empty(0)])
case("_native_batch_norm_legit_no_training 3-d, no weight",
     "aten._native_batch_norm_legit_no_training.default",
     [t("input", "x"), none("weight"), none("bias"), t("running_mean", "rm"),
      t("running_var", "rv"), f("momentum", 0.1), f("eps", 1e-3)],
     {"x": bn_x[:, :, 0], "rm": rm, "rv": rv},
     [A.native_batch_norm(bn_x[:, :, 0], None, None, rm, rv, False, 0.1, 1e-3)[0],
      torch.empty(0), torch.empty(0)])
case("_native_batch_norm_legit_no_training float32 mode",
     "aten._native_batch_norm_legit_no_training.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), f("momentum", 0.0), f("eps", 1e-5)],
     {"x": bn_x.float(), "w": bw.float(), "b": bbias.float(), "rm": rm.float(),
      "rv": rv.float()},
     [A.native_batch_norm(bn_x.float().double(), bw.float().double(), bbias.float().double(),
                          rm.float().double(), rv.float().double(), False, 0.1, 1e-5)[0],
      torch.empty(0), torch.empty(0)], ref_dtype="float32")
refuse("batch norm channel mismatch", "aten._native_batch_norm_legit_no_training.default",
       [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
        t("running_var", "rv"), f("momentum", 0.0), f("eps", 1e-5)],
       {"x": bn_x, "w": rn(3), "b": bbias, "rm": rm, "rv": rv}, "weight", n_out=3)
bn_train = A.native_batch_norm(bn_x, bw, bbias, None, None, True, 0.1, 1e-5)
case("_native_batch_norm_legit.no_stats", "aten._native_batch_norm_legit.no_stats",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), b("training", True),
      f("momentum", 0.1), f("eps", 1e-5)], {"x": bn_x, "w": bw, "b": bbias}, list(bn_train))
case("native_batch_norm eval", "aten.native_batch_norm.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), b("training", False), f("momentum", 0.1), f("eps", 1e-5)],
     {"x": bn_x, "w": bw, "b": bbias, "rm": rm, "rv": rv}, list(bn_eval))
case("native_batch_norm training", "aten.native_batch_norm.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), b("training", True), f("momentum", 0.1), f("eps", 1e-5)],
     {"x": bn_x, "w": bw, "b": bbias, "rm": rm.clone(), "rv": rv.clone()},
     list(A.native_batch_norm(bn_x, bw, bbias, rm.clone(), rv.clone(), True, 0.1, 1e-5)))
case("batch_norm eval", "aten.batch_norm.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), b("training", False), f("momentum", 0.1), f("eps", 1e-5),
      b("cudnn_enabled", False)],
     {"x": bn_x, "w": bw, "b": bbias, "rm": rm, "rv": rv},
     torch.batch_norm(bn_x, bw, bbias, rm, rv, False, 0.1, 1e-5, False))


def rms_np(xv, ns, w, eps):
    axes = tuple(range(xv.ndim - len(ns), xv.ndim))
    r = xv / np.sqrt(np.mean(xv * xv, axis=axes, keepdims=True) + eps)
    return r * w if w is not None else r


rx = ln_x.numpy()
case("rms_norm weight eps", "aten.rms_norm.default",
     [t("input", "x"), ints("normalized_shape", [8]), t("weight", "w"), f("eps", 1e-6)],
     {"x": ln_x, "w": ln_w}, torch.from_numpy(rms_np(rx, [8], ln_w.numpy(), 1e-6)))
case("rms_norm two dims, no weight, eps None", "aten.rms_norm.default",
     [t("input", "x"), ints("normalized_shape", [3, 8]), none("weight"), none("eps")],
     {"x": ln_x}, torch.from_numpy(rms_np(rx, [3, 8], None, np.finfo(np.float64).eps)))

# --- quantized_decomposed --------------------------------------------------------------


def q_np(xv, scale, zp, qmin, qmax, npdt):
    """_decomposed.py's quantize in float32: round(x * float32(1 / scale)) + zp, clamped."""
    inv = np.float32(1.0 / scale)
    v = np.rint(xv.astype(np.float32) * inv) + np.float32(zp)
    return np.clip(v, qmin, qmax).astype(npdt)


qx = torch.randn(3, 5, 4, dtype=torch.float32) * 2
ties = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 300.0, -300.0], dtype=torch.float32)
QD = "quantized_decomposed."
for label, xv, scale, zp, qmin, qmax, qdt, npdt in [
        ("int8", qx, 0.031431108713150024, 1, -128, 127, "int8", np.int8),
        ("uint8", qx, 0.02, 128, 0, 255, "uint8", np.uint8),
        ("int8 ties to even", ties, 1.0, 0, -128, 127, "int8", np.int8),
        ("int8 narrow range", qx, 0.01, -3, -127, 127, "int8", np.int8),
        ("int32", qx * 1000, 0.001, 7, -(2 ** 31), 2 ** 31 - 1, "int32", np.int32)]:
    want = q_np(xv.numpy(), scale, zp, qmin, qmax, npdt)
    qargs = [f("scale", scale), i("zero_point", zp), i("quant_min", qmin), i("quant_max", qmax),
             dt("dtype", qdt)]
    for mode in ["float64", "float32"]:
        case(f"quantize_per_tensor {label} ({mode})", QD + "quantize_per_tensor.default",
             [t("input", "x")] + qargs, {"x": xv}, torch.from_numpy(want), ref_dtype=mode)
    targs = [t("scale", "s"), t("zero_point", "z")] + qargs[2:]
    case(f"quantize_per_tensor.tensor {label}", QD + "quantize_per_tensor.tensor",
         [t("input", "x")] + targs,
         {"x": xv, "s": torch.tensor([scale]), "z": torch.tensor([zp])}, torch.from_numpy(want))
    deq = (want.astype(np.float32) - np.float32(zp)) * np.float32(scale)
    for mode in ["float64", "float32"]:
        case(f"dequantize_per_tensor {label} ({mode}) exact", QD + "dequantize_per_tensor.default",
             [t("input", "q")] + qargs, {"q": torch.from_numpy(want)},
             torch.from_numpy(deq.astype(np.float64)), ref_dtype=mode, rel=0.0)
    case(f"dequantize_per_tensor.tensor {label}", QD + "dequantize_per_tensor.tensor",
         [t("input", "q")] + targs,
         {"q": torch.from_numpy(want), "s": torch.tensor([scale]), "z": torch.tensor([zp])},
         torch.from_numpy(deq.astype(np.float64)), rel=0.0)
case("dequantize_per_tensor out_dtype float32", QD + "dequantize_per_tensor.default",
     [t("input", "q"), f("scale", 0.5), i("zero_point", 2), i("quant_min", -128),
      i("quant_max", 127), dt("dtype", "int8"), dt("out_dtype", "float32")],
     {"q": torch.tensor([-128, 0, 5, 127], dtype=torch.int8)},
     (torch.tensor([-128, 0, 5, 127]) - 2) * 0.5, rel=0.0)
refuse("dequantize_per_tensor dtype mismatch", QD + "dequantize_per_tensor.default",
       [t("input", "q"), f("scale", 0.5), i("zero_point", 2), i("quant_min", -128),
        i("quant_max", 127), dt("dtype", "int8")],
       {"q": torch.tensor([1, 2], dtype=torch.uint8)}, "expected dtype int8")
refuse("quantize_per_tensor quant range beyond dtype", QD + "quantize_per_tensor.default",
       [t("input", "x"), f("scale", 0.5), i("zero_point", 0), i("quant_min", -200),
        i("quant_max", 127), dt("dtype", "int8")], {"x": qx}, "quant_min")
refuse("quantize_per_tensor int input", QD + "quantize_per_tensor.default",
       [t("input", "x"), f("scale", 0.5), i("zero_point", 0), i("quant_min", -128),
        i("quant_max", 127), dt("dtype", "int8")], {"x": xi}, "float32")
refuse("quantize_per_tensor.tensor two scales", QD + "quantize_per_tensor.tensor",
       [t("input", "x"), t("scale", "s"), t("zero_point", "z"), i("quant_min", -128),
        i("quant_max", 127), dt("dtype", "int8")],
       {"x": qx, "s": torch.tensor([0.1, 0.2]), "z": torch.tensor([0])}, "one element")

pc_x = torch.randn(4, 3, 5, dtype=torch.float32)
for axis in [0, 1, -1]:
    n = pc_x.shape[axis]
    scales = (torch.rand(n, dtype=torch.float32) * 0.05 + 0.005)
    zps = torch.randint(-5, 5, (n,))
    sh = [1, 1, 1]
    sh[axis] = n
    inv = (np.float32(1.0) / scales.numpy()).reshape(sh)
    mine = np.clip(np.rint(pc_x.numpy() * inv) + zps.numpy().reshape(sh).astype(np.float32),
                   -128, 127).astype(np.int8)
    pargs = [t("scales", "s"), t("zero_points", "z"), i("axis", axis), i("quant_min", -128),
             i("quant_max", 127), dt("dtype", "int8")]
    case(f"quantize_per_channel axis {axis} (numpy float32 formula)",
         QD + "quantize_per_channel.default", [t("input", "x")] + pargs,
         {"x": pc_x, "s": scales, "z": zps}, torch.from_numpy(mine))
    deq = (mine.astype(np.float32) - zps.numpy().reshape(sh).astype(np.float32)) \
        * scales.numpy().reshape(sh)
    case(f"dequantize_per_channel axis {axis}", QD + "dequantize_per_channel.default",
         [t("input", "q")] + pargs, {"q": torch.from_numpy(mine), "s": scales, "z": zps},
         torch.from_numpy(deq.astype(np.float64)), rel=0.0)
    case(f"dequantize_per_channel axis {axis} no zero points",
         QD + "dequantize_per_channel.default", [t("input", "q"), pargs[0], none("zero_points")]
         + pargs[2:], {"q": torch.from_numpy(mine), "s": scales},
         torch.from_numpy((mine.astype(np.float32) * scales.numpy().reshape(sh))
                          .astype(np.float64)), rel=0.0)
refuse("quantize_per_channel scales of the wrong length", QD + "quantize_per_channel.default",
       [t("input", "x"), t("scales", "s"), t("zero_points", "z"), i("axis", 1),
        i("quant_min", -128), i("quant_max", 127), dt("dtype", "int8")],
       {"x": pc_x, "s": torch.ones(4), "z": torch.zeros(4, dtype=torch.int64)}, "scales")

def choose_np(xv, qmin, qmax, eps):
    """torch.ao's determine_qparams (per tensor affine) in float32, as choose_qparams.tensor."""
    mn, mx = np.float32(xv.min()), np.float32(xv.max())
    mneg, mpos = min(mn, np.float32(0)), max(mx, np.float32(0))
    scale = max(np.float32(mpos - mneg) / np.float32(qmax - qmin), np.float32(eps))
    zp = min(max(qmin - int(np.rint(np.float32(mneg / scale))), qmin), qmax)
    return torch.tensor([float(scale)]), torch.tensor([zp])


for label, xv in [("mixed", qx), ("positive", qx.abs() + 0.5), ("constant", torch.zeros(3, 3))]:
    for qmin, qmax, qdt in [(-128, 127, "int8"), (0, 255, "uint8")]:
        sc, zp = choose_np(xv.numpy(), qmin, qmax, 1.1920928955078125e-07)
        case(f"choose_qparams {label} {qdt}", QD + "choose_qparams.tensor",
             [t("input", "x"), i("quant_min", qmin), i("quant_max", qmax),
              f("eps", 1.1920928955078125e-07), dt("dtype", qdt)], {"x": xv.float()},
             [sc.double().reshape(1), zp.long().reshape(1)], rel=0.0)

# --- creation and copies ---------------------------------------------------------------------

case("full float", "aten.full.default", [ints("size", [2, 3]), f("fill_value", 1.5)], {},
     torch.full((2, 3), 1.5))
case("full int", "aten.full.default", [ints("size", [4]), i("fill_value", 7)], {},
     torch.full((4,), 7))
case("full bool", "aten.full.default", [ints("size", [2]), b("fill_value", True)], {},
     torch.full((2,), True))
case("full dtype int32", "aten.full.default",
     [ints("size", [2, 2]), f("fill_value", 3.0), dt("dtype", "int32")], {},
     torch.full((2, 2), 3.0, dtype=torch.int32))
case("full 0-d", "aten.full.default", [ints("size", []), f("fill_value", -2.0)], {},
     torch.full((), -2.0))
case("full empty", "aten.full.default", [ints("size", [0, 3]), f("fill_value", 1.0)], {},
     torch.full((0, 3), 1.0))
case("full float32 mode", "aten.full.default", [ints("size", [3]), f("fill_value", 0.1)], {},
     torch.full((3,), 0.1), ref_dtype="float32")
refuse("full negative size", "aten.full.default", [ints("size", [2, -1]), f("fill_value", 1.0)],
       {}, "expected sizes >= 0")
case("zeros", "aten.zeros.default", [ints("size", [2, 3])], {}, torch.zeros(2, 3))
case("ones int64", "aten.ones.default", [ints("size", [3]), dt("dtype", "int64")], {},
     torch.ones(3, dtype=torch.int64))
case("ones bool", "aten.ones.default", [ints("size", [3]), dt("dtype", "bool")], {},
     torch.ones(3, dtype=torch.bool))
case("zeros_like", "aten.zeros_like.default", [t("self", "x")], {"x": xi}, torch.zeros_like(xi))
case("ones_like dtype", "aten.ones_like.default", [t("self", "x"), dt("dtype", "float64")],
     {"x": xi}, torch.ones_like(xi, dtype=F64))
case("full_like", "aten.full_like.default", [t("self", "x"), f("fill_value", 2.5)], {"x": x},
     torch.full_like(x, 2.5))
case("full_like int tensor", "aten.full_like.default", [t("self", "x"), i("fill_value", -4)],
     {"x": xi.int()}, torch.full_like(xi.int(), -4))
case("arange int", "aten.arange.default", [i("end", 7)], {}, torch.arange(7))
case("arange float end", "aten.arange.default", [f("end", 2.5)], {}, torch.arange(2.5))
case("arange dtype", "aten.arange.default", [i("end", 5), dt("dtype", "float64")], {},
     torch.arange(5, dtype=F64))
case("arange.start_step int", "aten.arange.start_step",
     [i("start", -3), i("end", 10), i("step", 4)], {}, torch.arange(-3, 10, 4))
case("arange.start_step negative step", "aten.arange.start_step",
     [i("start", 5), i("end", -6), i("step", -3)], {}, torch.arange(5, -6, -3))
case("arange.start_step float", "aten.arange.start_step",
     [f("start", 0.1), f("end", 1.0), f("step", 0.2)], {}, torch.arange(0.1, 1.0, 0.2))
case("arange.start_step no step", "aten.arange.start_step", [i("start", 2), i("end", 6)], {},
     torch.arange(2, 6))
case("arange empty", "aten.arange.start_step", [i("start", 3), i("end", 3)], {},
     torch.arange(3, 3))
case("arange int64 beyond 2^53 is exact (Python's range)", "aten.arange.start_step",
     [i("start", -(2 ** 61)), i("end", 2 ** 61 + 1), i("step", 2 ** 60)], {},
     torch.tensor(list(range(-(2 ** 61), 2 ** 61 + 1, 2 ** 60))))
refuse("arange zero step", "aten.arange.start_step", [i("start", 0), i("end", 3), i("step", 0)],
       {}, "step")
case("scalar_tensor", "aten.scalar_tensor.default", [f("s", 2.5)], {}, torch.scalar_tensor(2.5))
case("scalar_tensor int is float", "aten.scalar_tensor.default", [i("s", 3)], {},
     torch.scalar_tensor(3))
case("scalar_tensor dtype int64", "aten.scalar_tensor.default", [i("s", 3), dt("dtype", "int64")],
     {}, torch.scalar_tensor(3, dtype=torch.int64))
conv = torch.tensor([-2.7, -0.5, 0.0, 0.5, 2.7, 100.9])
for d in ["int64", "int32", "int8", "uint8", "bool", "float32", "float64"]:
    tdt = getattr(torch, d)
    # float64 mode holds every float in float64: a cast to float32 keeps the value
    want = conv if tdt.is_floating_point else conv.to(tdt)
    case(f"_to_copy float -> {d}", "aten._to_copy.default", [t("self", "x"), dt("dtype", d)],
         {"x": conv}, want)
case("_to_copy int -> float", "aten._to_copy.default", [t("self", "x"), dt("dtype", "float32")],
     {"x": xi}, xi.double())
case("_to_copy int64 -> int8 wraps", "aten._to_copy.default", [t("self", "x"), dt("dtype", "int8")],
     {"x": torch.tensor([300, -129, 5])}, torch.tensor([300, -129, 5]).to(torch.int8))
case("_to_copy bool -> int", "aten._to_copy.default", [t("self", "x"), dt("dtype", "int64")],
     {"x": xb}, xb.long())
case("_to_copy no dtype", "aten._to_copy.default", [t("self", "x"), none("dtype")], {"x": xi}, xi)
for name in ["clone", "alias", "alias_copy", "detach_copy", "lift_fresh_copy"]:
    case(f"{name}", f"aten.{name}.default", [t("self", "x")], {"x": x}, x)
    case(f"{name} int", f"aten.{name}.default", [t("self", "x")], {"x": xi}, xi)
DO = "dim_order_ops._to_dim_order_copy.default"
case("_to_dim_order_copy contiguous", DO, [t("self", "x"), ints("dim_order", [0, 1])], {"x": x}, x)
case("_to_dim_order_copy dtype", DO, [t("self", "x"), dt("dtype", "int32"), none("dim_order")],
     {"x": x * 10}, (x * 10).to(torch.int32))
refuse("_to_dim_order_copy channels last", DO,
       [t("self", "x"), ints("dim_order", [0, 2, 3, 1])], {"x": r4}, "dim_order")

# --- more elementwise and reductions ------------------------------------------------------------

for name in ["expm1", "log1p", "log2", "log10", "tan", "atan", "asin", "acos", "sinh", "cosh",
             "trunc", "isnan", "isinf"]:
    xv = x.clamp(-0.9, 0.9) if name in ("asin", "acos", "log1p") else x
    xv = xv.abs() + 0.1 if name in ("log2", "log10") else xv
    case(f"{name}", f"aten.{name}.default", [t("self", "x")], {"x": xv}, getattr(torch, name)(xv))
special = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.0, -0.0])
for name in ["isnan", "isinf", "trunc", "expm1"]:
    case(f"{name} nan/inf", f"aten.{name}.default", [t("self", "x")], {"x": special},
         getattr(torch, name)(special))
case("isnan int", "aten.isnan.default", [t("self", "x")], {"x": xi}, torch.isnan(xi))
case("trunc int", "aten.trunc.default", [t("self", "x")], {"x": xi}, torch.trunc(xi))
case("elu default", "aten.elu.default", [t("self", "x")], {"x": x}, torch.nn.functional.elu(x))
case("elu alpha scale input_scale", "aten.elu.default",
     [t("self", "x"), f("alpha", 0.5), f("scale", 1.5), f("input_scale", 2.0)], {"x": x},
     A.elu(x, 0.5, 1.5, 2.0))
for name in ["fmod", "remainder"]:
    fn = getattr(torch, name)
    case(f"{name} float", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": fa, "b": fb}, fn(fa, fb))
    case(f"{name} broadcast", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": a3 * 5, "b": b2}, fn(a3 * 5, b2))
    case(f"{name} int", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
         {"a": ja, "b": jb}, fn(ja, jb))
    case(f"{name}.Scalar", f"aten.{name}.Scalar", [t("self", "a"), f("other", -1.5)],
         {"a": a3 * 5}, fn(a3 * 5, -1.5))
    refuse(f"{name} int by zero", f"aten.{name}.Tensor", [t("self", "a"), t("other", "b")],
           {"a": ja, "b": jb * 0}, "division by zero")
case("floor_divide int", "aten.floor_divide.default", [t("self", "a"), t("other", "b")],
     {"a": ja, "b": jb}, torch.div(ja, jb, rounding_mode="floor"))
case("floor_divide float", "aten.floor_divide.default", [t("self", "a"), t("other", "b")],
     {"a": fa, "b": fb}, torch.div(fa, fb, rounding_mode="floor"))
case("atan2", "aten.atan2.default", [t("self", "a"), t("other", "b")], {"a": a3, "b": b2},
     torch.atan2(a3, b2))
mk4 = torch.rand(4, 1) > 0.5
case("masked_fill.Scalar", "aten.masked_fill.Scalar",
     [t("self", "x"), t("mask", "m"), f("value", -2.5)], {"x": rt, "m": mk4},
     rt.masked_fill(mk4, -2.5))
xm = ri(4, 3)
case("masked_fill.Tensor int", "aten.masked_fill.Tensor",
     [t("self", "x"), t("mask", "m"), t("value", "v")],
     {"x": xm, "m": mk4, "v": torch.tensor(7)}, xm.masked_fill(mk4, torch.tensor(7)))
refuse("masked_fill mask that does not fit", "aten.masked_fill.Scalar",
       [t("self", "x"), t("mask", "m"), f("value", 0.0)], {"x": rt, "m": torch.rand(2, 3) > 0.5},
       "mask")
case("mean.default", "aten.mean.default", [t("self", "x")], {"x": r4}, r4.mean())
case("max.default", "aten.max.default", [t("self", "x")], {"x": r4}, r4.max())
case("min.default int", "aten.min.default", [t("self", "x")], {"x": xi}, xi.min())
case("max.default nan", "aten.max.default", [t("self", "x")], {"x": nan2}, nan2.max())
refuse("max.default empty", "aten.max.default", [t("self", "x")], {"x": e0}, "empty")
case("prod.dim_int", "aten.prod.dim_int", [t("self", "x"), i("dim", 1), b("keepdim", True)],
     {"x": r4}, r4.prod(1, keepdim=True))
case("prod.dim_int int", "aten.prod.dim_int", [t("self", "x"), i("dim", -1)], {"x": xi},
     xi.prod(-1))
case("prod.default", "aten.prod.default", [t("self", "x")], {"x": rt}, rt.prod())
case("std.correction", "aten.std.correction",
     [t("self", "x"), ints("dim", [1, 2]), i("correction", 1), b("keepdim", True)], {"x": r4},
     r4.std((1, 2), keepdim=True))
case("all.dim", "aten.all.dim", [t("self", "x"), i("dim", 1)], {"x": anyx}, torch.all(anyx, 1))
case("all.default", "aten.all.default", [t("self", "x")], {"x": anyx + 1}, torch.all(anyx + 1))
case("all.dims", "aten.all.dims", [t("self", "x"), ints("dim", [0, 2])], {"x": ~anyb},
     torch.from_numpy(np.all((~anyb).numpy(), axis=(0, 2))))
for dim in [0, -1]:
    case(f"cumsum dim {dim}", "aten.cumsum.default", [t("self", "x"), i("dim", dim)], {"x": r4},
         torch.cumsum(r4, dim))
case("cumsum int32 is int64", "aten.cumsum.default", [t("self", "x"), i("dim", 1)],
     {"x": xi.int()}, torch.cumsum(xi.int(), 1))
case("cumsum dtype", "aten.cumsum.default", [t("self", "x"), i("dim", 1), dt("dtype", "float64")],
     {"x": xi}, torch.cumsum(xi, 1, dtype=F64))

case("softplus", "aten.softplus.default", [t("self", "x")], {"x": x * 10},
     torch.nn.functional.softplus(x * 10))
case("softplus beta threshold", "aten.softplus.default",
     [t("self", "x"), f("beta", 2.0), f("threshold", 3.0)], {"x": x * 4},
     torch.nn.functional.softplus(x * 4, 2.0, 3.0))
case("mish", "aten.mish.default", [t("self", "x")], {"x": x * 10},
     torch.nn.functional.mish(x * 10))
case("fill.Scalar", "aten.fill.Scalar", [t("self", "x"), f("value", 0.75)], {"x": x},
     torch.full_like(x, 0.75))
case("fill.Scalar int", "aten.fill.Scalar", [t("self", "x"), i("value", -3)], {"x": xi.int()},
     torch.full_like(xi.int(), -3))
case("fill.Tensor", "aten.fill.Tensor", [t("self", "x"), t("value", "v")],
     {"x": x, "v": torch.tensor(2.5)}, torch.full_like(x, 2.5))
pw = torch.rand(3) * 0.5
pr_x = rn(2, 3, 4)
case("_prelu_kernel per channel", "aten._prelu_kernel.default",
     [t("self", "x"), t("weight", "w")], {"x": pr_x, "w": pw.reshape(3, 1)},
     torch.nn.functional.prelu(pr_x, pw))
for dims, keep in [([1], False), ([0, 2], True), ([], False)]:
    case(f"logsumexp dims {dims} keepdim={keep}", "aten.logsumexp.default",
         [t("self", "x"), ints("dim", dims), b("keepdim", keep)], {"x": sm},
         torch.logsumexp(sm, dims if dims else [0, 1, 2], keepdim=keep))
lse = torch.tensor([[float("-inf")] * 3, [float("inf"), 1.0, 2.0], [800.0, 800.0, -800.0]])
case("logsumexp -inf, inf, large", "aten.logsumexp.default", [t("self", "x"), ints("dim", [1])],
     {"x": lse}, torch.logsumexp(lse, 1))
for ordv in [2.0, 1.0, 3.0, 0.0, float("inf"), float("-inf"), -1.0, 0.5]:
    for dims, keep in [(None, False), ([1], True), ([0, -1], False)]:
        args = [t("self", "x"), f("ord", ordv)]
        args.append(none("dim") if dims is None else ints("dim", dims))
        args.append(b("keepdim", keep))
        case(f"linalg_vector_norm ord={ordv} dims={dims} keepdim={keep}",
             "aten.linalg_vector_norm.default", args, {"x": r4},
             A.linalg_vector_norm(r4, ordv, dims, keep))
# torch overflows to inf here; the reference scales by the largest magnitude
_o, _w = R.eval_case("aten.linalg_vector_norm.default", [t("self", "x")],
                     {"x": torch.tensor([3e200, 4e200])}, 1)
C.check("linalg_vector_norm of huge values does not overflow",
        _o is not None and abs(float(_o[0]) / 5e200 - 1) < 1e-15, _w or str(_o))
case("linalg_vector_norm zeros", "aten.linalg_vector_norm.default",
     [t("self", "x"), f("ord", -1.0)], {"x": torch.zeros(4)},
     A.linalg_vector_norm(torch.zeros(4), -1.0))
case("var_mean.correction", "aten.var_mean.correction",
     [t("self", "x"), ints("dim", [1, 3]), i("correction", 0), b("keepdim", True)], {"x": r4},
     list(A.var_mean.correction(r4, [1, 3], correction=0, keepdim=True)))
for dim in [-1, 0, 1]:
    gx = rn(4, 6, 2)
    case(f"glu dim {dim}", "aten.glu.default", [t("self", "x"), i("dim", dim)], {"x": gx},
         torch.nn.functional.glu(gx, dim))
refuse("glu odd size", "aten.glu.default", [t("self", "x"), i("dim", 0)], {"x": rn(3, 2)},
       "even size")
for dec in [0, 2, -1]:
    rx2 = x * 137.0
    case(f"round.decimals {dec}", "aten.round.decimals", [t("self", "x"), i("decimals", dec)],
         {"x": rx2}, torch.round(rx2, decimals=dec))
case("_native_batch_norm_legit.default eval", "aten._native_batch_norm_legit.default",
     [t("input", "x"), t("weight", "w"), t("bias", "b"), t("running_mean", "rm"),
      t("running_var", "rv"), b("training", False), f("momentum", 0.1), f("eps", 1e-5)],
     {"x": bn_x, "w": bw, "b": bbias, "rm": rm, "rv": rv}, list(bn_eval))
case("detach", "aten.detach.default", [t("self", "x")], {"x": x}, x)

# --- names: the table's aliases --------------------------------------------------------------------

case("alias aten::add.Tensor", "aten::add.Tensor", [t("self", "a"), t("other", "b")],
     {"a": a3, "b": b2}, a3 + b2)
case("alias aten.relu (bare = .default)", "aten.relu", [t("self", "x")], {"x": x}, torch.relu(x))
case("alias aten.add.out", "aten.add.out", [t("self", "a"), t("other", "b")], {"a": a3, "b": b2},
     a3 + b2)
case("alias aten._softmax.out", "aten._softmax.out",
     [t("self", "x"), i("dim", 1), b("half_to_float", False)], {"x": sm}, torch.softmax(sm, 1))
case("alias aten.sum.IntList_out", "aten.sum.IntList_out", [t("self", "x"), ints("dim", [1])],
     {"x": r4}, r4.sum(1))
case("alias aten.div.out_mode", "aten.div.out_mode",
     [t("self", "a"), t("other", "b"), s("rounding_mode", "floor")], {"a": fa, "b": fb},
     torch.div(fa, fb, rounding_mode="floor"))
case("alias aten.pow.Tensor_Scalar_out", "aten.pow.Tensor_Scalar_out",
     [t("self", "a"), f("exponent", 2.0)], {"a": a3}, a3 ** 2)
case("alias quantize_per_tensor.out", "quantized_decomposed::quantize_per_tensor.out",
     [t("input", "x"), f("scale", 0.1), i("zero_point", 0), i("quant_min", -128),
      i("quant_max", 127), dt("dtype", "int8")], {"x": qx},
     torch.from_numpy(q_np(qx.numpy(), 0.1, 0, -128, 127, np.int8)))
case("alias full edge target", "executorch.exir.dialects.edge.ops.aten.mul.Tensor",
     [t("self", "a"), t("other", "b")], {"a": a3, "b": b2}, a3 * b2)
refuse("unknown op", "aten.not_an_op.default", [t("self", "x")], {"x": x}, "not supported")

# --- float32 mode ----------------------------------------------------------------------------------

x32 = x.float()
for name, fn in [("exp", torch.exp), ("tanh", torch.tanh), ("sigmoid", torch.sigmoid),
                 ("relu", torch.relu)]:
    case(f"{name} float32 mode", f"aten.{name}.default", [t("self", "x")], {"x": x32},
         fn(x32.double()), ref_dtype="float32")
case("gelu float32 mode", "aten.gelu.default", [t("self", "x")], {"x": x32},
     torch.nn.functional.gelu(x32.double()), ref_dtype="float32")
case("add float32 mode is float32 arithmetic", "aten.add.Tensor",
     [t("self", "a"), t("other", "b")], {"a": a3.float(), "b": b2.float()},
     (a3.float() + b2.float()).double(), ref_dtype="float32", rel=0.0)
case("mul float32 mode is float32 arithmetic", "aten.mul.Tensor",
     [t("self", "a"), t("other", "b")], {"a": a3.float(), "b": b2.float()},
     (a3.float() * b2.float()).double(), ref_dtype="float32", rel=0.0)
case("div float32 mode is float32 arithmetic", "aten.div.Tensor",
     [t("self", "a"), t("other", "b")], {"a": b2.float(), "b": den.float()},
     (b2.float() / den.float()).double(), ref_dtype="float32", rel=0.0)
case("sum float32 mode", "aten.sum.dim_IntList", [t("self", "x"), ints("dim", [-1])],
     {"x": r4.float()}, r4.float().double().sum(-1), ref_dtype="float32")
case("mean float32 mode", "aten.mean.dim", [t("self", "x"), ints("dim", [1, 2])],
     {"x": r4.float()}, r4.float().double().mean((1, 2)), ref_dtype="float32")
case("var float32 mode", "aten.var.correction", [t("self", "x"), ints("dim", [1])],
     {"x": r4.float()}, r4.float().double().var(1), ref_dtype="float32")


def outputs_dtype(target, args, inputs, n, mode):
    outs, why = R.eval_case(target, args, inputs, n, mode)
    return None if outs is None else [o.dtype for o in outs]


C.check("float32 mode: float results are float32",
        outputs_dtype("aten.add.Tensor", [t("self", "a"), t("other", "b")],
                      {"a": a3, "b": b2}, 1, "float32") == [np.float32])
C.check("float64 mode: an int op stays int32",
        outputs_dtype("aten.add.Tensor", [t("self", "a"), t("other", "b")],
                      {"a": ia.int(), "b": ib.int()}, 1, "float64") == [np.int32])

# --- the real qcnn export: q/dq bit-exact against torch's oracle and the runtime ------------------

RX = os.path.join(C.DATA, "realexport")
with zipfile.ZipFile(os.path.join(RX, "qcnn.etrecord")) as zf:
    ep = json.loads(zf.read("edge_dialect_exported_program"))
    state = torch.load(io.BytesIO(zf.read("edge_dialect_exported_program_state_dict")))
oracle = np.load(os.path.join(RX, "qcnn_aot_f64.npz"))
io_npz = np.load(os.path.join(RX, "qcnn_io.npz"))
nodes = json.load(open(os.path.join(RX, "qcnn_nodes.json")))
events = json.load(open(os.path.join(RX, "oracle", "qcnn_events.json")))
debug = np.load(os.path.join(RX, "oracle", "qcnn_debug_data.npz"))
# runtime values by debug handle: the first execution's native_call event
runtime = {}
for blk in events["event_blocks"]:
    if blk["name"] != "Execute":
        continue
    for ev in blk["events"]:
        if ev["name"].startswith("native_call_") and ev["debug_data"]:
            runtime.setdefault(ev["debug_handles"], [debug[k] for k in ev["debug_data"]])
handle = nodes["node_to_debug_handle"]
views = {n["outputs"][0]["as_tensor"]["name"]: n["inputs"][0]["arg"]["as_tensor"]["name"]
         for n in ep["graph_module"]["graph"]["nodes"] if n["target"].endswith("view_copy.default")}


def ref_value(name):
    """The reference value of a graph value: the user input, a weight, a node output."""
    if name == "x":
        return io_npz["input0"]
    if name.startswith("b_") and name[2:] in state:
        return state[name[2:]].numpy()
    return oracle[name]


def runtime_value(name):
    """The runtime's value of a graph value (its debug buffer output), or None."""
    if name == "x":
        return io_npz["input0"]
    if name.startswith("b_") and name[2:] in state:
        return state[name[2:]].numpy()
    if name in views:  # et_view logs nothing: the view of its input's value
        return runtime_value(views[name]).reshape(oracle[name].shape)
    item = nodes["nodes"].get(name, {}).get("getitem_of")
    src, k = (item[0], item[1]) if item else (name, 0)
    vals = runtime.get(handle.get(src))
    return None if vals is None else vals[k]


n_real = n_runtime = 0
for node in ep["graph_module"]["graph"]["nodes"]:
    target = node["target"].replace("executorch.exir.dialects.edge.ops.", "")
    if not target.startswith("quantized_decomposed."):
        continue
    name = node["outputs"][0]["as_tensor"]["name"]
    names = [a["arg"]["as_tensor"]["name"] for a in node["inputs"] if "as_tensor" in a["arg"]]
    want = oracle[name]
    exact = 0.0
    for mode in ["float64", "float32"]:
        case(f"qcnn {name} vs torch oracle ({mode})", target, node["inputs"],
             {k: ref_value(k) for k in names}, [want], ref_dtype=mode, rel=exact)
    n_real += 1
    ins = {k: runtime_value(k) for k in names}
    rt_out = runtime.get(handle[name])
    if rt_out is not None and all(v is not None for v in ins.values()):
        case(f"qcnn {name} on the runtime's inputs vs the runtime's output", target,
             node["inputs"], ins, [rt_out[0]], ref_dtype="float32", rel=0.0)
        n_runtime += 1
C.check("qcnn: every q/dq node checked", n_real == 17, f"{n_real} nodes")
C.check("qcnn: runtime values found for the q/dq nodes", n_runtime == 17, f"{n_runtime} nodes")

# --- the real exports: every node of this op family against the float64 oracle --------------------

with open(os.path.join(C.SRC, "src", "reference", "ops_table.c")) as fh:
    table = fh.read()
MINE = set(line.split('"')[1] for line in
           table[table.index("/* ops-a"):table.index("/* end ops-a")].splitlines() if '{"' in line)


def graph_inputs(zf, ep):
    """Parameters, buffers and lifted constants by their graph names."""
    state = torch.load(io.BytesIO(zf.read("edge_dialect_exported_program_state_dict")))
    consts = torch.load(io.BytesIO(zf.read("edge_dialect_exported_program_constants")))
    by_name = {}
    for spec in ep["graph_module"]["signature"]["input_specs"]:
        for kind, target_key in [("parameter", "parameter_name"), ("buffer", "buffer_name"),
                                 ("tensor_constant", "tensor_constant_name")]:
            if kind in spec:
                target = spec[kind][target_key]
                val = state.get(target, consts.get(target))
                if val is not None:
                    by_name[spec[kind]["arg"]["name"]] = val.detach().numpy()
    return by_name


seen_ops = set()
for model in ["mlp", "cnn", "tiny_transformer", "qcnn"]:
    with zipfile.ZipFile(os.path.join(RX, f"{model}.etrecord")) as zf:
        mep = json.loads(zf.read("edge_dialect_exported_program"))
        weights = graph_inputs(zf, mep)
    mor = np.load(os.path.join(RX, f"{model}_aot_f64.npz"))
    mio = np.load(os.path.join(RX, f"{model}_io.npz"))
    mnodes = json.load(open(os.path.join(RX, f"{model}_nodes.json")))["nodes"]
    count = 0
    for node in mep["graph_module"]["graph"]["nodes"]:
        target = node["target"].replace("executorch.exir.dialects.edge.ops.", "")
        if target not in MINE:
            continue
        outs = [o["as_tensor"]["name"] for o in node["outputs"]]
        if len(outs) > 1:  # a tuple: its items' oracle keys
            entry = next(v for v in mnodes.values()
                         if v.get("tuple_items", {}).get("0") == outs[0])
            keys = [entry["tuple_items"][str(k)] for k in range(len(outs))]
        else:
            keys = outs
        names = [a["arg"]["as_tensor"]["name"] for a in node["inputs"] if "as_tensor" in a["arg"]]
        ins = {}
        for k in names:
            ins[k] = mio["input0"] if k == "x" else weights[k] if k in weights else mor[k]
        case(f"{model} {keys[0]} ({target}) vs the float64 oracle", target, node["inputs"], ins,
             [mor[k] for k in keys])
        seen_ops.add(target)
        count += 1
    C.check(f"{model}: nodes of this family found", count > 0, str(count))
for op in ["aten.relu.default", "aten.gelu.default", "aten.add.Tensor", "aten._softmax.default",
           "aten.native_layer_norm.default", "aten._native_batch_norm_legit_no_training.default",
           "aten.mul.Tensor", "aten.clone.default",
           "quantized_decomposed.quantize_per_tensor.default",
           "quantized_decomposed.dequantize_per_tensor.default",
           "quantized_decomposed.dequantize_per_channel.default"]:
    C.check(f"real graphs exercise {op}", op in seen_ops)

run_queue()
C.finish()
