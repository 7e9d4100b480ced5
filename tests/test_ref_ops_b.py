"""The reference executor's second op family (src/reference/ops_linalg.c,
ops_conv.c, ops_pool.c, ops_shape.c, ops_index.c) against Debian's
python3-torch 1.13 in float64: matrix products, convolution, pooling,
upsampling, shape and index ops, every attribute combination, broadcasting,
negative dims, non-contiguous inputs on the torch side, empty and 0-d
tensors where the op allows them, integer and bool dtypes (bit-exact),
float32 mode, and refusals naming node, op and shapes."""
import itertools
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import refops as R  # noqa: E402

torch.manual_seed(21)
D = torch.float64


def rn(*shape):
    return torch.randn(shape, dtype=D)


def ri(*shape, lo=-9, hi=10, dtype=torch.int64):
    return torch.randint(lo, hi, shape, dtype=dtype)


def opt_ts(name, names):
    return {"name": name, "arg": {"as_optional_tensors": [
        {"as_none": []} if n is None else {"as_tensor": {"name": n}} for n in names]}}


def outs_list(v):
    return list(v) if isinstance(v, (tuple, list)) else [v]


def case(label, target, args, inputs, expected, **kw):
    R.run_case(label, target, args, inputs, outs_list(expected), **kw)


def refuse(label, target, args, inputs, n_out, needles):
    outs, why = R.eval_case(target, args, inputs, n_out)
    ok = outs is None and all(n in (why or "") for n in needles)
    C.check(label, ok, why)


def linalg():
    a, b = rn(3, 4), rn(4, 5)
    case("mm", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")], {"a": a, "b": b},
         torch.mm(a, b))
    at, bt = rn(4, 3).t(), rn(5, 4).t()
    case("mm non-contiguous", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": at, "b": bt}, torch.mm(at, bt))
    for sa, sb in [((0, 4), (4, 5)), ((3, 0), (0, 5)), ((3, 4), (4, 0))]:
        x, y = rn(*sa), rn(*sb)
        case(f"mm empty {sa}x{sb}", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
             {"a": x, "b": y}, torch.mm(x, y))
    for dt in (torch.int64, torch.int32, torch.int8, torch.uint8):
        x, y = ri(5, 7, lo=0 if dt == torch.uint8 else -9, dtype=dt), ri(7, 3, lo=0, dtype=dt)
        case(f"mm {dt} exact", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
             {"a": x, "b": y}, torch.mm(x, y))
    big = ri(4, 6, lo=-2**40, hi=2**40)
    case("mm int64 wraps as torch", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": big, "b": big.t().contiguous()}, torch.mm(big, big.t()))
    case("mm float32 mode", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": a, "b": b}, torch.mm(a.float(), b.float()), ref_dtype="float32")
    refuse("mm mismatched inner dims", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
           {"a": rn(3, 4), "b": rn(5, 6)}, 1,
           ["node case", "aten.mm.default", "[3, 4]", "[5, 6]"])
    refuse("mm int and float", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
           {"a": ri(3, 4), "b": rn(4, 6)}, 1, ["aten.mm.default", "int64", "mat2"])
    refuse("mm rank 3", "aten.mm.default", [R.t("self", "a"), R.t("mat2", "b")],
           {"a": rn(2, 3, 4), "b": rn(4, 6)}, 1, ["rank 2", "[2, 3, 4]"])

    for sshape in [(5,), (1, 5), (3, 5), (3, 1), ()]:
        for beta, alpha in [(1, 1), (0.5, 2.0), (0, 1.5), (-1, -0.25)]:
            s = rn(*sshape)
            args = [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b")]
            if beta != 1:
                args.append(R.f("beta", beta) if isinstance(beta, float) else R.i("beta", beta))
            if alpha != 1:
                args.append(R.f("alpha", alpha))
            case(f"addmm self {list(sshape)} beta {beta} alpha {alpha}", "aten.addmm.default",
                 args, {"s": s, "a": a, "b": b}, torch.addmm(s, a, b, beta=beta, alpha=alpha))
    s = rn(5)
    s[2] = float("nan")
    case("addmm beta 0 ignores NaN in self", "aten.addmm.default",
         [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b"), R.i("beta", 0)],
         {"s": s, "a": a, "b": b}, torch.addmm(s, a, b, beta=0))
    si, ai, bi = ri(5), ri(3, 4), ri(4, 5)
    case("addmm int64 alpha beta", "aten.addmm.default",
         [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b"), R.i("beta", 3), R.i("alpha", -2)],
         {"s": si, "a": ai, "b": bi}, torch.addmm(si, ai, bi, beta=3, alpha=-2))
    case("addmm float32 mode", "aten.addmm.default",
         [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b")], {"s": s.nan_to_num(), "a": a,
                                                                  "b": b},
         torch.addmm(s.nan_to_num().float(), a.float(), b.float()), ref_dtype="float32")
    refuse("addmm self does not broadcast", "aten.addmm.default",
           [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b")],
           {"s": rn(4), "a": a, "b": b}, 1, ["self", "[4]", "[3, 5]"])

    x, y = rn(2, 3, 4), rn(2, 4, 5)
    case("bmm", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")], {"a": x, "b": y},
         torch.bmm(x, y))
    xt = rn(2, 4, 3).transpose(1, 2)
    case("bmm non-contiguous", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": xt, "b": y}, torch.bmm(xt, y))
    case("bmm empty batch", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": rn(0, 3, 4), "b": rn(0, 4, 5)}, torch.zeros(0, 3, 5, dtype=D))
    xi, yi = ri(3, 2, 4), ri(3, 4, 2)
    case("bmm int64", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")],
         {"a": xi, "b": yi}, torch.bmm(xi, yi))
    refuse("bmm batch mismatch", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")],
           {"a": rn(2, 3, 4), "b": rn(3, 4, 5)}, 1, ["[2, 3, 4]", "[3, 4, 5]"])
    refuse("bmm inner mismatch", "aten.bmm.default", [R.t("self", "a"), R.t("mat2", "b")],
           {"a": rn(2, 3, 4), "b": rn(2, 5, 5)}, 1, ["[2, 3, 4]", "[2, 5, 5]"])
    for sshape, beta, alpha in [((2, 3, 5), 1, 1), ((3, 5), 0.5, -1.5), ((1, 1, 5), 0, 2.0)]:
        s = rn(*sshape)
        case(f"baddbmm self {list(sshape)} beta {beta} alpha {alpha}", "aten.baddbmm.default",
             [R.t("self", "s"), R.t("batch1", "a"), R.t("batch2", "b"), R.f("beta", beta),
              R.f("alpha", alpha)], {"s": s, "a": x, "b": y},
             # torch 1.13's baddbmm reads uninitialized memory for beta 0 with a
             # broadcast self: the documented value (self ignored) instead
             torch.baddbmm(s, x, y, beta=beta, alpha=alpha) if beta else alpha * torch.bmm(x, y))

    w, bias = rn(6, 4), rn(6)
    for xs in [(4,), (3, 4), (2, 3, 4), (0, 4)]:
        xin = rn(*xs)
        case(f"linear input {list(xs)} with bias", "aten.linear.default",
             [R.t("input", "x"), R.t("weight", "w"), R.t("bias", "b")],
             {"x": xin, "w": w, "b": bias}, F.linear(xin, w, bias))
        case(f"linear input {list(xs)} bias None", "aten.linear.default",
             [R.t("input", "x"), R.t("weight", "w"), R.none("bias")], {"x": xin, "w": w},
             F.linear(xin, w))
    xin = rn(2, 3, 4)
    case("linear float32", "aten.linear.default",
         [R.t("input", "x"), R.t("weight", "w"), R.t("bias", "b")], {"x": xin, "w": w, "b": bias},
         F.linear(xin.float(), w.float(), bias.float()), ref_dtype="float32")
    refuse("linear in_features mismatch", "aten.linear.default",
           [R.t("input", "x"), R.t("weight", "w")], {"x": rn(3, 5), "w": w}, 1,
           ["[3, 5]", "[6, 4]"])

    shapes = [((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)),
              ((2, 1, 3, 4), (5, 4, 6)), ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)),
              ((2, 3, 4), (4,)), ((2, 3, 4), (1, 4, 2)), ((0, 3, 4), (4, 2))]
    for sa, sb in shapes:
        x, y = rn(*sa), rn(*sb)
        case(f"matmul {list(sa)} @ {list(sb)}", "aten.matmul.default",
             [R.t("self", "a"), R.t("other", "b")], {"a": x, "b": y}, torch.matmul(x, y))
    xi, yi = ri(2, 3, 4), ri(4, 2)
    case("matmul int64 batched", "aten.matmul.default", [R.t("self", "a"), R.t("other", "b")],
         {"a": xi, "b": yi}, torch.matmul(xi, yi))
    refuse("matmul batch dims do not broadcast", "aten.matmul.default",
           [R.t("self", "a"), R.t("other", "b")], {"a": rn(2, 3, 4), "b": rn(3, 4, 5)}, 1,
           ["do not broadcast"])
    refuse("matmul 0-d", "aten.matmul.default", [R.t("self", "a"), R.t("other", "b")],
           {"a": rn(), "b": rn(3)}, 1, ["at least one dimension"])
    m, v = rn(3, 4), rn(4)
    case("mv", "aten.mv.default", [R.t("self", "a"), R.t("vec", "b")], {"a": m, "b": v},
         torch.mv(m, v))
    case("dot", "aten.dot.default", [R.t("self", "a"), R.t("tensor", "b")], {"a": v, "b": v},
         torch.dot(v, v))


def sdpa_ref(q, k, v, mask=None, causal=False, scale=None):
    s = scale if scale is not None else 1 / math.sqrt(q.shape[-1])
    sc = q @ k.transpose(-2, -1) * s
    L, S = q.shape[-2], k.shape[-2]
    if causal:
        sc = sc.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
    if mask is not None:
        sc = sc.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else sc + mask
    lse = torch.logsumexp(sc, -1)
    return torch.softmax(sc, -1) @ v, lse


def attention():
    q, k, v = rn(2, 3, 5, 4), rn(2, 3, 6, 4), rn(2, 3, 6, 7)
    base = [R.t("query", "q"), R.t("key", "k"), R.t("value", "v")]
    tin = {"q": q, "k": k, "v": v}
    case("sdpa", "aten.scaled_dot_product_attention.default", base, tin, sdpa_ref(q, k, v)[0])
    case("sdpa scale", "aten.scaled_dot_product_attention.default",
         base + [R.f("scale", 0.3)], tin, sdpa_ref(q, k, v, scale=0.3)[0])
    qc = rn(2, 3, 6, 4)
    case("sdpa causal", "aten.scaled_dot_product_attention.default",
         base + [R.b("is_causal", True)], {"q": qc, "k": k, "v": v},
         sdpa_ref(qc, k, v, causal=True)[0])
    bm = torch.rand(5, 6) > 0.3
    bm[:, 0] = True
    case("sdpa bool mask", "aten.scaled_dot_product_attention.default",
         base + [R.t("attn_mask", "m")], dict(tin, m=bm), sdpa_ref(q, k, v, mask=bm)[0])
    fm = rn(3, 1, 6)
    case("sdpa float mask broadcast", "aten.scaled_dot_product_attention.default",
         base + [R.t("attn_mask", "m")], dict(tin, m=fm), sdpa_ref(q, k, v, mask=fm)[0])
    case("flash attention for cpu (output, logsumexp)",
         "aten._scaled_dot_product_flash_attention_for_cpu.default",
         base + [R.f("dropout_p", 0.0), R.b("is_causal", True)], {"q": qc, "k": k, "v": v},
         sdpa_ref(qc, k, v, causal=True))
    refuse("sdpa dropout refused", "aten.scaled_dot_product_attention.default",
           base + [R.f("dropout_p", 0.1)], tin, 1, ["dropout_p"])


def conv_case(label, x, w, b, stride, padding, dilation, transposed, out_pad, groups,
              ref_dtype="float64"):
    args = [R.t("input", "x"), R.t("weight", "w"), R.t("bias", "b") if b is not None else
            R.none("bias"), R.ints("stride", stride), R.ints("padding", padding),
            R.ints("dilation", dilation), R.b("transposed", transposed),
            R.ints("output_padding", out_pad), R.i("groups", groups)]
    nd = x.dim() - 2
    ex = lambda p: p * nd if len(p) == 1 else p  # noqa: E731
    if ref_dtype == "float32":
        x, w, b = x.float(), w.float(), b.float() if b is not None else None
    if transposed:
        fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
        want = fn(x, w, b, ex(stride), ex(padding), ex(out_pad), groups, ex(dilation))
    else:
        fn = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
        want = fn(x, w, b, ex(stride), ex(padding), ex(dilation), groups)
    inputs = {"x": x, "w": w}
    if b is not None:
        inputs["b"] = b
    case(label, "aten.convolution.default", args, inputs, want, ref_dtype=ref_dtype)


def convolution():
    x = rn(2, 4, 9, 8)
    for stride, pad, dil, groups, bias in itertools.product(
            [[1, 1], [2, 1]], [[0, 0], [1, 2]], [[1, 1], [2, 1]], [1, 2], [True, False]):
        w = rn(6, 4 // groups, 3, 2)
        conv_case(f"conv2d stride {stride} pad {pad} dil {dil} groups {groups} bias {bias}",
                  x, w, rn(6) if bias else None, stride, pad, dil, False, [0, 0], groups)
    conv_case("conv2d depthwise", x, rn(8, 1, 3, 3), rn(8), [1], [1], [1], False, [0], 4)
    conv_case("conv2d 1x1 (no im2col)", x, rn(5, 4, 1, 1), rn(5), [1, 1], [0, 0], [1, 1],
              False, [0, 0], 1)
    conv_case("conv2d 1x1 stride 2", x, rn(5, 4, 1, 1), None, [2, 2], [0, 0], [1, 1], False,
              [0, 0], 1)
    conv_case("conv2d single-value lists", x, rn(6, 4, 3, 3), rn(6), [2], [1], [1], False, [0], 1)
    xt = rn(2, 4, 8, 9).transpose(2, 3)
    conv_case("conv2d non-contiguous input", xt, rn(6, 4, 3, 3), rn(6), [1, 1], [1, 1], [1, 1],
              False, [0, 0], 1)
    conv_case("conv2d empty batch", rn(0, 4, 9, 8), rn(6, 4, 3, 3), rn(6), [1, 1], [1, 1],
              [1, 1], False, [0, 0], 1)
    conv_case("conv2d float32 mode", x, rn(6, 4, 3, 3), rn(6), [1, 1], [1, 1], [1, 1], False,
              [0, 0], 1, ref_dtype="float32")
    x1 = rn(2, 4, 17)
    conv_case("conv1d", x1, rn(6, 2, 3), rn(6), [2], [1], [2], False, [0], 2)
    conv_case("conv1d bias None", x1, rn(3, 4, 5), None, [1], [0], [1], False, [0], 1)
    x3 = rn(1, 2, 5, 6, 4)
    conv_case("conv3d", x3, rn(4, 2, 3, 2, 3), rn(4), [1, 2, 1], [1, 0, 1], [1, 1, 2], False,
              [0, 0, 0], 1)
    conv_case("conv3d groups", x3, rn(4, 1, 2, 2, 2), None, [2, 1, 1], [0, 1, 0], [1, 1, 1],
              False, [0, 0, 0], 2)
    xT = rn(2, 4, 5, 6)
    for stride, pad, opad, dil, groups, bias in [
            ([1, 1], [0, 0], [0, 0], [1, 1], 1, True), ([2, 2], [1, 1], [1, 1], [1, 1], 1, True),
            ([2, 3], [0, 1], [1, 2], [1, 1], 2, False), ([1, 2], [1, 0], [0, 1], [2, 2], 2, True),
            ([3, 1], [2, 0], [2, 0], [1, 3], 4, False)]:
        w = rn(4, 6 // groups if groups != 4 else 2, 3, 2)
        conv_case(f"conv_transpose2d stride {stride} pad {pad} out_pad {opad} dil {dil} "
                  f"groups {groups} bias {bias}", xT, w, rn(w.shape[1] * groups) if bias else None,
                  stride, pad, dil, True, opad, groups)
    conv_case("conv_transpose1d", rn(2, 4, 7), rn(4, 3, 4), rn(3), [3], [1], [1], True, [2], 1)
    conv_case("conv_transpose3d", rn(1, 2, 3, 4, 3), rn(2, 3, 2, 3, 2), rn(3), [2, 1, 2],
              [0, 1, 1], [1, 1, 1], True, [1, 0, 0], 1)
    # column matrices over 8 MB: built and multiplied in blocks that end mid-row
    conv_case("conv2d in column blocks", rn(1, 32, 96, 96), rn(8, 32, 3, 3), rn(8), [1, 1],
              [1, 1], [1, 1], False, [0, 0], 1)
    conv_case("conv3d in column blocks", rn(1, 8, 24, 24, 24), rn(4, 8, 3, 3, 3), None, [1],
              [1], [1], False, [0], 1)
    conv_case("conv_transpose2d in column blocks", rn(1, 32, 96, 96), rn(32, 16, 3, 3), rn(16),
              [2, 2], [1, 1], [1, 1], True, [1, 1], 1)
    base = lambda b: [R.t("input", "x"), R.t("weight", "w"), R.none("bias"),  # noqa: E731
                      R.ints("stride", [1, 1]), R.ints("padding", [0, 0]),
                      R.ints("dilation", [1, 1]), R.b("transposed", False),
                      R.ints("output_padding", [0, 0]), R.i("groups", b)]
    refuse("conv channel mismatch", "aten.convolution.default", base(1),
           {"x": rn(1, 3, 5, 5), "w": rn(2, 4, 3, 3)}, 1,
           ["node case", "aten.convolution.default", "[2, 4, 3, 3]", "[1, 3, 5, 5]"])
    refuse("conv kernel larger than input", "aten.convolution.default", base(1),
           {"x": rn(1, 4, 2, 2), "w": rn(2, 4, 3, 3)}, 1, ["smaller than the dilated kernel"])
    refuse("conv integer input", "aten.convolution.default", base(1),
           {"x": ri(1, 4, 5, 5), "w": ri(2, 4, 3, 3)}, 1, ["float"])


def pooling():
    x = rn(2, 3, 9, 8)
    x[0, 1, 2, 3] = float("nan")
    for k, s, p, d, cm in itertools.product([[2, 2], [3, 2]], [[], [1, 2]], [[0, 0], [1, 1]],
                                            [[1, 1], [2, 1]], [False, True]):
        args = [R.t("self", "x"), R.ints("kernel_size", k), R.ints("stride", s),
                R.ints("padding", p), R.ints("dilation", d), R.b("ceil_mode", cm)]
        want = F.max_pool2d(x, k, s or None, p, d, cm, return_indices=True)
        case(f"max_pool2d_with_indices k {k} s {s} p {p} d {d} ceil {cm}",
             "aten.max_pool2d_with_indices.default", args, {"x": x}, want)
    case("max_pool2d_with_indices kernel only (the graphs' form)",
         "aten.max_pool2d_with_indices.default", [R.t("self", "x"), R.ints("kernel_size", [2, 2])],
         {"x": x}, F.max_pool2d(x, 2, return_indices=True))
    x3 = rn(3, 7, 7)
    case("max_pool2d_with_indices 3-D input", "aten.max_pool2d_with_indices.default",
         [R.t("self", "x"), R.ints("kernel_size", [3]), R.ints("stride", [2]),
          R.ints("padding", [1])], {"x": x3}, F.max_pool2d(x3, 3, 2, 1, return_indices=True))
    ties = torch.randint(0, 3, (1, 2, 6, 6)).to(D)
    case("max_pool2d_with_indices ties: the first maximum", "aten.max_pool2d_with_indices.default",
         [R.t("self", "x"), R.ints("kernel_size", [3, 3]), R.ints("stride", [1, 1])],
         {"x": ties}, F.max_pool2d(ties, 3, 1, return_indices=True))
    xi = ties.to(torch.int64)
    vals, idx = F.max_pool2d(ties, 3, 1, return_indices=True)
    case("max_pool2d_with_indices int64 exact", "aten.max_pool2d_with_indices.default",
         [R.t("self", "x"), R.ints("kernel_size", [3, 3]), R.ints("stride", [1, 1])],
         {"x": xi}, [vals.to(torch.int64), idx])
    case("max_pool2d", "aten.max_pool2d.default",
         [R.t("self", "x"), R.ints("kernel_size", [3, 3]), R.ints("stride", [2, 2]),
          R.ints("padding", [1, 1]), R.ints("dilation", [1, 1]), R.b("ceil_mode", True)],
         {"x": x}, F.max_pool2d(x, 3, 2, 1, 1, True))
    case("max_pool2d float32", "aten.max_pool2d.default",
         [R.t("self", "x"), R.ints("kernel_size", [2, 2])], {"x": x},
         F.max_pool2d(x.float(), 2), ref_dtype="float32")
    refuse("max_pool2d padding over half the kernel", "aten.max_pool2d.default",
           [R.t("self", "x"), R.ints("kernel_size", [2, 2]), R.ints("stride", [2, 2]),
            R.ints("padding", [2, 2])], {"x": x}, 1, ["half the kernel"])

    x = rn(2, 3, 9, 8)
    # every combination of padding, ceil_mode, count_include_pad and divisor; kernel
    # and stride cycle through theirs
    for n, (p, cm, cip, div) in enumerate(itertools.product([[0, 0], [1, 1]], [False, True],
                                                            [True, False], [None, 5])):
        k, s = [[3, 3], [2, 3]][n % 2], [[], [2, 1]][n // 2 % 2]
        args = [R.t("self", "x"), R.ints("kernel_size", k), R.ints("stride", s),
                R.ints("padding", p), R.b("ceil_mode", cm), R.b("count_include_pad", cip)]
        args.append(R.i("divisor_override", div) if div else R.none("divisor_override"))
        case(f"avg_pool2d k {k} s {s} p {p} ceil {cm} include_pad {cip} divisor {div}",
             "aten.avg_pool2d.default", args, {"x": x},
             F.avg_pool2d(x, k, s or None, p, cm, cip, div))
    xi = ri(1, 2, 7, 7)
    case("avg_pool2d int64 (truncating division)", "aten.avg_pool2d.default",
         [R.t("self", "x"), R.ints("kernel_size", [3, 3]), R.ints("stride", [2, 2]),
          R.ints("padding", [1, 1]), R.b("ceil_mode", True)], {"x": xi},
         F.avg_pool2d(xi, 3, 2, 1, True))
    x3 = rn(3, 7, 9)
    case("avg_pool2d 3-D input", "aten.avg_pool2d.default",
         [R.t("self", "x"), R.ints("kernel_size", [2])], {"x": x3}, F.avg_pool2d(x3, 2))

    x1 = rn(2, 3, 11)
    x1[0, 0, 4] = float("nan")
    for k, s, p, d, cm in [([3], [], [0], [1], False), ([3], [2], [1], [2], True),
                           ([2], [3], [1], [1], True)]:
        args = [R.t("self", "x"), R.ints("kernel_size", k), R.ints("stride", s),
                R.ints("padding", p), R.ints("dilation", d), R.b("ceil_mode", cm)]
        case(f"max_pool1d k {k} s {s} p {p} d {d} ceil {cm}", "aten.max_pool1d.default", args,
             {"x": x1}, F.max_pool1d(x1, k, s or None, p, d, cm))
        case(f"max_pool1d_with_indices k {k} s {s} p {p} d {d} ceil {cm}",
             "aten.max_pool1d_with_indices.default", args, {"x": x1},
             F.max_pool1d(x1, k, s or None, p, d, cm, return_indices=True))
    x1 = rn(2, 3, 11)
    for k, s, p, cm, cip in [([3], [], [0], False, True), ([4], [3], [2], True, False),
                             ([2], [1], [1], True, True)]:
        case(f"avg_pool1d k {k} s {s} p {p} ceil {cm} include_pad {cip}",
             "aten.avg_pool1d.default",
             [R.t("self", "x"), R.ints("kernel_size", k), R.ints("stride", s),
              R.ints("padding", p), R.b("ceil_mode", cm), R.b("count_include_pad", cip)],
             {"x": x1}, F.avg_pool1d(x1, k, s or None, p, cm, cip))
    for osz in [[1], [4], [11], [15]]:
        case(f"adaptive_avg_pool1d {osz}", "aten.adaptive_avg_pool1d.default",
             [R.t("self", "x"), R.ints("output_size", osz)], {"x": x1},
             F.adaptive_avg_pool1d(x1, osz))
    case("adaptive_avg_pool1d 2-D input", "aten.adaptive_avg_pool1d.default",
         [R.t("self", "x"), R.ints("output_size", [5])], {"x": x1[0]},
         F.adaptive_avg_pool1d(x1[0], [5]))

    x = rn(2, 3, 7, 9)
    for osz in [[1, 1], [3, 2], [5, 7], [7, 9], [9, 11]]:
        for op in ["aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default"]:
            case(f"{op.split('.')[1]} {osz}", op, [R.t("self", "x"), R.ints("output_size", osz)],
                 {"x": x}, F.adaptive_avg_pool2d(x, osz))
    case("adaptive_avg_pool2d 3-D input", "aten.adaptive_avg_pool2d.default",
         [R.t("self", "x"), R.ints("output_size", [2, 4])], {"x": x[0]},
         F.adaptive_avg_pool2d(x[0], [2, 4]))


def upsampling():
    x = rn(2, 3, 5, 4)
    A = torch.ops.aten
    for size, scales in [([10, 8], None), ([7, 9], None), ([3, 2], None), ([5, 4], None),
                         (None, [2.0, 2.0]), (None, [1.5, 2.5]), (None, [0.6, 1.3]),
                         (None, [3.0, 1.0])]:
        args = [R.t("input", "x"), R.ints("output_size", size) if size else
                R.none("output_size"),
                R.floats("scale_factors", scales) if scales else R.none("scale_factors")]
        case(f"upsample_nearest2d.vec size {size} scales {scales}", "aten.upsample_nearest2d.vec",
             args, {"x": x}, A.upsample_nearest2d.vec(x, size, scales))
        for ac in [False, True]:
            args = [R.t("input", "x"), R.ints("output_size", size) if size else
                    R.none("output_size"), R.b("align_corners", ac),
                    R.floats("scale_factors", scales) if scales else R.none("scale_factors")]
            case(f"upsample_bilinear2d.vec size {size} scales {scales} align_corners {ac}",
                 "aten.upsample_bilinear2d.vec", args, {"x": x},
                 A.upsample_bilinear2d.vec(x, size, ac, scales))
        args = [R.t("input", "x"), R.ints("output_size", size) if size else
                R.none("output_size"),
                R.floats("scale_factors", scales) if scales else R.none("scale_factors")]
        case(f"_upsample_nearest_exact2d.vec size {size} scales {scales}",
             "aten._upsample_nearest_exact2d.vec", args, {"x": x},
             A._upsample_nearest_exact2d.vec(x, size, scales))
    case("_upsample_nearest_exact2d.default", "aten._upsample_nearest_exact2d.default",
         [R.t("self", "x"), R.ints("output_size", [8, 6]), R.f("scales_h", 1.7),
          R.f("scales_w", 1.5)], {"x": x}, A._upsample_nearest_exact2d.default(x, [8, 6], 1.7, 1.5))
    xu = torch.randint(0, 255, (1, 2, 3, 5), dtype=torch.uint8)
    case("upsample_nearest2d.vec uint8 exact", "aten.upsample_nearest2d.vec",
         [R.t("input", "x"), R.ints("output_size", [7, 8]), R.none("scale_factors")], {"x": xu},
         A.upsample_nearest2d.vec(xu, [7, 8], None))
    case("upsample_nearest2d.default", "aten.upsample_nearest2d.default",
         [R.t("self", "x"), R.ints("output_size", [11, 6])], {"x": x},
         A.upsample_nearest2d.default(x, [11, 6]))
    case("upsample_nearest2d.default scales", "aten.upsample_nearest2d.default",
         [R.t("self", "x"), R.ints("output_size", [8, 6]), R.f("scales_h", 1.7),
          R.f("scales_w", 1.5)], {"x": x}, A.upsample_nearest2d.default(x, [8, 6], 1.7, 1.5))
    for ac in [False, True]:
        case(f"upsample_bilinear2d.default align_corners {ac}",
             "aten.upsample_bilinear2d.default",
             [R.t("self", "x"), R.ints("output_size", [9, 7]), R.b("align_corners", ac)],
             {"x": x}, A.upsample_bilinear2d.default(x, [9, 7], ac))
    case("upsample_bilinear2d float32", "aten.upsample_bilinear2d.vec",
         [R.t("input", "x"), R.ints("output_size", [9, 7]), R.b("align_corners", False),
          R.none("scale_factors")], {"x": x},
         A.upsample_bilinear2d.vec(x.float(), [9, 7], False, None), ref_dtype="float32")
    refuse("upsample both size and scales", "aten.upsample_nearest2d.vec",
           [R.t("input", "x"), R.ints("output_size", [7, 8]), R.floats("scale_factors", [2, 2])],
           {"x": x}, 1, ["exactly one of output_size and scale_factors"])


def variants(dt, *ops):
    """An op's view and copy spellings share one function: every spelling in
    float, the copy variants alone for the other dtypes."""
    return list(ops) if dt == "f" else [o for o in ops if "copy" in o] or list(ops[-1:])


def sample(dt, *shape):
    if dt == "f":
        return rn(*shape)
    if dt == "b":
        return torch.rand(*shape) > 0.5
    if dt == "u8":
        return torch.randint(0, 255, shape, dtype=torch.uint8)
    return ri(*shape, lo=-1000, hi=1000, dtype=torch.int32 if dt == "i32" else torch.int64)


def shape_ops():
    for dt in ["f", "i64", "b", "u8"]:
        x = sample(dt, 2, 3, 4)
        xin = {"x": x}
        for op in variants(dt, "aten.view.default", "aten.view_copy.default",
                           "aten._unsafe_view.default"):
            case(f"{op} {dt} with -1", op, [R.t("self", "x"), R.ints("size", [4, -1])], xin,
                 x.reshape(4, -1))
        case(f"reshape {dt}", "aten.reshape.default", [R.t("self", "x"), R.ints("shape", [24])],
             xin, x.reshape(24))
        for op in variants(dt, "aten.permute.default", "aten.permute_copy.default"):
            case(f"{op} {dt} negative dims", op, [R.t("self", "x"), R.ints("dims", [-1, 0, 1])],
                 xin, x.permute(-1, 0, 1))
        for op in variants(dt, "aten.transpose.int", "aten.transpose_copy.int"):
            case(f"{op} {dt}", op, [R.t("self", "x"), R.i("dim0", -1), R.i("dim1", 0)], xin,
                 x.transpose(-1, 0))
        y = sample(dt, 3, 5)
        for op in variants(dt, "aten.t.default", "aten.t_copy.default"):
            case(f"{op} {dt}", op, [R.t("self", "x")], {"x": y}, y.t())
        e = sample(dt, 3, 1)
        for op in variants(dt, "aten.expand.default", "aten.expand_copy.default"):
            case(f"{op} {dt} new dims and -1", op, [R.t("self", "x"), R.ints("size", [2, -1, 4])],
                 {"x": e}, e.expand(2, -1, 4))
        s = sample(dt, 1, 3, 1, 2)
        for sfx in variants(dt, "squeeze", "squeeze_copy"):
            case(f"{sfx}.default {dt}", f"aten.{sfx}.default", [R.t("self", "x")], {"x": s},
                 s.squeeze())
            case(f"{sfx}.dim {dt} negative", f"aten.{sfx}.dim", [R.t("self", "x"), R.i("dim", -2)],
                 {"x": s}, s.squeeze(-2))
            case(f"{sfx}.dim {dt} not of size 1", f"aten.{sfx}.dim",
                 [R.t("self", "x"), R.i("dim", 1)], {"x": s}, s.squeeze(1))
            case(f"{sfx}.dims {dt}", f"aten.{sfx}.dims", [R.t("self", "x"), R.ints("dim", [0, 2])],
                 {"x": s}, s.squeeze(2).squeeze(0))
        for op in variants(dt, "aten.unsqueeze.default", "aten.unsqueeze_copy.default"):
            case(f"{op} {dt} dim -1", op, [R.t("self", "x"), R.i("dim", -1)], xin, x.unsqueeze(-1))
            case(f"{op} {dt} dim 1", op, [R.t("self", "x"), R.i("dim", 1)], xin, x.unsqueeze(1))
        case(f"flip {dt}", "aten.flip.default", [R.t("self", "x"), R.ints("dims", [0, -1])], xin,
             x.flip(0, -1))
        case(f"repeat {dt}", "aten.repeat.default",
             [R.t("self", "x"), R.ints("repeats", [2, 1, 3, 2])],
             xin, x.repeat(2, 1, 3, 2))
        for op in variants(dt, "aten.select.int", "aten.select_copy.int"):
            case(f"{op} {dt} negative index", op,
                 [R.t("self", "x"), R.i("dim", 1), R.i("index", -1)], xin, x.select(1, -1))
        parts = x.split([1, 2, 0], 1)
        for op in variants(dt, "aten.split_with_sizes.default",
                           "aten.split_with_sizes_copy.default"):
            case(f"{op} {dt}", op, [R.t("self", "x"), R.ints("split_sizes", [1, 2, 0]),
                                     R.i("dim", 1)], xin, parts)
        for op in variants(dt, "aten.split.Tensor", "aten.split_copy.Tensor"):
            case(f"{op} {dt} uneven", op, [R.t("self", "x"), R.i("split_size", 3), R.i("dim", -1)],
                 xin, x.split(3, -1))
        for op in variants(dt, "aten.unbind.int", "aten.unbind_copy.int"):
            case(f"{op} {dt}", op, [R.t("self", "x"), R.i("dim", 1)], xin, x.unbind(1))
        case(f"constant_pad_nd {dt}", "aten.constant_pad_nd.default",
             [R.t("self", "x"), R.ints("pad", [1, 2, -1, 0]), R.i("value", 1)], xin,
             F.pad(x, [1, 2, -1, 0], value=1))
        z = sample(dt, 2, 2, 4)
        case(f"cat {dt}", "aten.cat.default", [R.ts("tensors", ["a", "b"]), R.i("dim", 1)],
             {"a": x, "b": z}, torch.cat([x, z], 1))
        w = sample(dt, 2, 3, 4)
        case(f"stack {dt} dim -1", "aten.stack.default", [R.ts("tensors", ["a", "b"]),
                                                        R.i("dim", -1)],
             {"a": x, "b": w}, torch.stack([x, w], -1))

    x = rn(5, 6, 4)
    for dim, start, end, step in [(0, None, None, 1), (1, 1, 5, 2), (-1, -3, None, 1),
                                  (1, -100, 100, 3), (0, 4, 2, 1), (2, None, -1, 2),
                                  (1, 7, None, 1)]:
        args = [R.t("self", "x"), R.i("dim", dim),
                R.i("start", start) if start is not None else R.none("start"),
                R.i("end", end) if end is not None else R.none("end"), R.i("step", step)]
        sl = [slice(None)] * 3
        sl[dim] = slice(start, end, step)
        for op in ["aten.slice.Tensor", "aten.slice_copy.Tensor"]:
            case(f"{op} dim {dim} [{start}:{end}:{step}]", op, args, {"x": x}, x[tuple(sl)])
    case("slice defaults", "aten.slice.Tensor", [R.t("self", "x")], {"x": x}, x)
    case("narrow", "aten.narrow.default", [R.t("self", "x"), R.i("dim", 1), R.i("start", -4),
                                           R.i("length", 3)], {"x": x}, x.narrow(1, -4, 3))
    xt = rn(4, 6).t()
    case("view of a non-contiguous input", "aten.view_copy.default",
         [R.t("self", "x"), R.ints("size", [-1])], {"x": xt}, xt.reshape(-1))
    s0 = torch.tensor(3.5, dtype=D)
    case("view 0-d to [1, 1]", "aten.view.default", [R.t("self", "x"), R.ints("size", [1, 1])],
         {"x": s0}, s0.reshape(1, 1))
    case("view [1] to 0-d", "aten.view.default", [R.t("self", "x"), R.ints("size", [])],
         {"x": s0.reshape(1)}, s0)
    case("unsqueeze 0-d", "aten.unsqueeze.default", [R.t("self", "x"), R.i("dim", 0)], {"x": s0},
         s0.unsqueeze(0))
    case("squeeze 0-d", "aten.squeeze.dim", [R.t("self", "x"), R.i("dim", -1)], {"x": s0}, s0)
    case("expand 0-d", "aten.expand_copy.default", [R.t("self", "x"), R.ints("size", [2, 3])],
         {"x": s0}, s0.expand(2, 3))
    case("permute 0-d", "aten.permute_copy.default", [R.t("self", "x"), R.ints("dims", [])],
         {"x": s0}, s0)
    e = rn(0, 3)
    case("view empty", "aten.view_copy.default", [R.t("self", "x"), R.ints("size", [3, -1, 1])],
         {"x": e}, e.reshape(3, -1, 1))
    case("permute empty", "aten.permute_copy.default", [R.t("self", "x"), R.ints("dims", [1, 0])],
         {"x": e}, e.t())
    case("repeat with new leading dims and 0", "aten.repeat.default",
         [R.t("self", "x"), R.ints("repeats", [2, 0, 1])], {"x": rn(3, 2)},
         torch.zeros(2, 0, 2, dtype=D))
    a32, a64 = sample("i32", 2, 3), sample("i64", 1, 3)
    case("cat int32 + int64 promotes", "aten.cat.default", [R.ts("tensors", ["a", "b"])],
         {"a": a32, "b": a64}, torch.cat([a32, a64]))
    bb, uu = sample("b", 2, 3), sample("u8", 2, 3)
    case("cat bool + uint8 promotes", "aten.cat.default", [R.ts("tensors", ["a", "b"])],
         {"a": bb, "b": uu}, torch.cat([bb, uu]))
    fa, ia = rn(2, 3), sample("i64", 2, 3)
    case("cat float + int64 promotes to float", "aten.cat.default",
         [R.ts("tensors", ["a", "b"]), R.i("dim", -1)], {"a": fa, "b": ia}, torch.cat([fa, ia], -1))
    leg = torch.zeros(0, dtype=D)
    case("cat skips a legacy empty [0]", "aten.cat.default",
         [R.ts("tensors", ["a", "e", "b"]), R.i("dim", 1)], {"a": fa, "e": leg, "b": fa},
         torch.cat([fa, leg, fa], 1))
    case("stack 0-d", "aten.stack.default", [R.ts("tensors", ["a", "b"])],
         {"a": s0, "b": s0 * 2}, torch.stack([s0, s0 * 2]))
    case("split of an empty dim", "aten.split.Tensor", [R.t("self", "x"), R.i("split_size", 2)],
         {"x": e}, e.split(2))
    case("constant_pad_nd float value", "aten.constant_pad_nd.default",
         [R.t("self", "x"), R.ints("pad", [2, 1]), R.f("value", -0.5)], {"x": x},
         F.pad(x, [2, 1], value=-0.5))
    case("constant_pad_nd negative crops", "aten.constant_pad_nd.default",
         [R.t("self", "x"), R.ints("pad", [-1, -2, 0, 0, 1, -3])], {"x": x},
         F.pad(x, [-1, -2, 0, 0, 1, -3]))
    case("flip 0-d", "aten.flip.default", [R.t("self", "x"), R.ints("dims", [0])], {"x": s0}, s0)
    v = rn(2, 1)
    case("expand_copy float32 mode", "aten.expand_copy.default",
         [R.t("self", "x"), R.ints("size", [3, 2, 3])], {"x": v}, v.float().expand(3, 2, 3),
         ref_dtype="float32")
    refuse("view invalid size", "aten.view_copy.default",
           [R.t("self", "x"), R.ints("size", [7, -1])], {"x": x}, 1,
           ["node case", "aten.view_copy.default", "[7, -1]", "[5, 6, 4]"])
    refuse("expand invalid", "aten.expand_copy.default",
           [R.t("self", "x"), R.ints("size", [5, 2, 4])],
           {"x": x}, 1, ["[5, 6, 4]", "[5, 2, 4]"])
    refuse("cat shape mismatch", "aten.cat.default", [R.ts("tensors", ["a", "b"]), R.i("dim", 0)],
           {"a": rn(2, 3), "b": rn(2, 4)}, 1, ["[2, 4]", "[2, 3]"])
    refuse("split sizes do not sum", "aten.split_with_sizes_copy.default",
           [R.t("self", "x"), R.ints("split_sizes", [2, 2]), R.i("dim", 0)], {"x": x}, 2,
           ["sum to 4", "[5, 6, 4]"])
    refuse("permute repeated dim", "aten.permute_copy.default",
           [R.t("self", "x"), R.ints("dims", [0, 0, 1])], {"x": x}, 1, ["repeats dim 0"])
    refuse("select out of range", "aten.select_copy.int",
           [R.t("self", "x"), R.i("dim", 0), R.i("index", 5)], {"x": x}, 1, ["index 5"])
    refuse("dim out of range", "aten.transpose_copy.int",
           [R.t("self", "x"), R.i("dim0", 3), R.i("dim1", 0)], {"x": x}, 1,
           ["dim0 3 is out of range"])


def index_ops():
    for dt in ["f", "i64", "b"]:
        x = sample(dt, 4, 5, 3)
        for itype in [torch.int64, torch.int32]:
            idx = torch.tensor([3, 0, 0, 2], dtype=itype)
            case(f"index_select {dt} index {itype} dim -2", "aten.index_select.default",
                 [R.t("self", "x"), R.i("dim", -2), R.t("index", "i")], {"x": x, "i": idx},
                 x.index_select(-2, idx))
        idx0 = torch.tensor(2)
        case(f"index_select {dt} 0-d index", "aten.index_select.default",
             [R.t("self", "x"), R.i("dim", 0), R.t("index", "i")], {"x": x, "i": idx0},
             x.index_select(0, idx0))
        gi = torch.randint(0, 5, (3, 4, 2))
        case(f"gather {dt} dim 1 smaller index", "aten.gather.default",
             [R.t("self", "x"), R.i("dim", 1), R.t("index", "i")], {"x": x, "i": gi},
             torch.gather(x, 1, gi))
        i1 = torch.tensor([[0, -1, 2], [3, 3, -4]])
        case(f"index.Tensor {dt} one index, negative", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", ["i"])], {"x": x, "i": i1}, x[i1])
        ia, ib = torch.tensor([[0], [3]]), torch.tensor([1, 4, 0])
        case(f"index.Tensor {dt} two broadcast indices", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", ["a", "b"])], {"x": x, "a": ia, "b": ib},
             x[ia, ib])
        case(f"index.Tensor {dt} None then index (adjacent)", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", [None, "b"])], {"x": x, "b": ib}, x[:, ib])
        ic = torch.tensor([2, 0, 1])
        case(f"index.Tensor {dt} index, None, index (moved first)", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", ["a", None, "c"])],
             {"x": x, "a": torch.tensor([1, 0, 3]), "c": ic}, x[torch.tensor([1, 0, 3]), :, ic])
        m = torch.rand(4, 5) > 0.5
        case(f"index.Tensor {dt} bool mask", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", ["m"])], {"x": x, "m": m}, x[m])
        m1 = torch.tensor([True, False, True])
        case(f"index.Tensor {dt} None, None, bool mask", "aten.index.Tensor",
             [R.t("self", "x"), opt_ts("indices", [None, None, "m"])], {"x": x, "m": m1},
             x[:, :, m1])
    w = rn(10, 4)
    for ishape in [(5,), (2, 3), ()]:
        idx = torch.randint(0, 10, ishape)
        case(f"embedding indices {list(ishape)}", "aten.embedding.default",
             [R.t("weight", "w"), R.t("indices", "i")], {"w": w, "i": idx}, F.embedding(idx, w))
    case("embedding padding_idx", "aten.embedding.default",
         [R.t("weight", "w"), R.t("indices", "i"), R.i("padding_idx", 0)],
         {"w": w, "i": torch.tensor([0, 3])}, F.embedding(torch.tensor([0, 3]), w, padding_idx=0))
    case("gather float32 mode", "aten.gather.default",
         [R.t("self", "x"), R.i("dim", 0), R.t("index", "i")],
         {"x": w, "i": torch.tensor([[9, 0, 1, 2]])},
         torch.gather(w.float(), 0, torch.tensor([[9, 0, 1, 2]])), ref_dtype="float32")
    x = rn(4, 5)
    refuse("index_select out of range", "aten.index_select.default",
           [R.t("self", "x"), R.i("dim", 1), R.t("index", "i")],
           {"x": x, "i": torch.tensor([1, 5])}, 1, ["node case", "holds 5", "size 5"])
    s0 = torch.tensor(2.5, dtype=D)
    case("index_select 0-d self", "aten.index_select.default",
         [R.t("self", "x"), R.i("dim", 0), R.t("index", "i")], {"x": s0, "i": torch.tensor([0])},
         s0.index_select(0, torch.tensor([0])))
    refuse("index_select 0-d self, two indices", "aten.index_select.default",
           [R.t("self", "x"), R.i("dim", 0), R.t("index", "i")],
           {"x": s0, "i": torch.tensor([0, 0])}, 1, ["0-d self"])
    refuse("index_select float index", "aten.index_select.default",
           [R.t("self", "x"), R.i("dim", 1), R.t("index", "i")],
           {"x": x, "i": torch.tensor([1.0])}, 1, ["Long or Int", "float64"])
    refuse("embedding out of range", "aten.embedding.default",
           [R.t("weight", "w"), R.t("indices", "i")], {"w": w, "i": torch.tensor([10])}, 1,
           ["holds 10"])
    refuse("index.Tensor out of range", "aten.index.Tensor",
           [R.t("self", "x"), opt_ts("indices", ["i"])], {"x": x, "i": torch.tensor([-5])}, 1,
           ["holds -5"])
    refuse("index.Tensor too many indices", "aten.index.Tensor",
           [R.t("self", "x"), opt_ts("indices", ["i", "i", "i"])],
           {"x": x, "i": torch.tensor([0])}, 1, ["too many indices"])
    refuse("gather rank mismatch", "aten.gather.default",
           [R.t("self", "x"), R.i("dim", 0), R.t("index", "i")],
           {"x": x, "i": torch.tensor([0])}, 1, ["same number of dims"])


def scatter_ops():
    for dt in ["f", "i64", "b"]:
        x = sample(dt, 4, 5, 3)
        src = sample(dt, 4, 2, 3)
        want = x.clone()
        want[:, 1:5:2] = src
        for start, end in [(1, 5), (1, None), (-4, 100)]:
            args = [R.t("self", "x"), R.t("src", "s"), R.i("dim", 1),
                    R.i("start", start), R.i("end", end) if end is not None else R.none("end"),
                    R.i("step", 2)]
            case(f"slice_scatter {dt} [{start}:{end}:2]", "aten.slice_scatter.default", args,
                 {"x": x, "s": src}, want)
        src2 = sample(dt, 4, 3)
        want = x.clone()
        want[:, -2] = src2
        case(f"select_scatter {dt} negative index", "aten.select_scatter.default",
             [R.t("self", "x"), R.t("src", "s"), R.i("dim", 1), R.i("index", -2)],
             {"x": x, "s": src2}, want)
        idx = torch.tensor([0, 2, -1])
        vals = sample(dt, 3, 5, 3)
        case(f"index_put {dt}", "aten.index_put.default",
             [R.t("self", "x"), opt_ts("indices", ["i"]), R.t("values", "v"),
              R.b("accumulate", False)], {"x": x, "i": idx, "v": vals},
             x.index_put((idx,), vals))
        m = torch.rand(4, 5) > 0.5
        vs = sample(dt, 1)
        case(f"index_put {dt} bool mask, broadcast value", "aten.index_put.default",
             [R.t("self", "x"), opt_ts("indices", ["m"]), R.t("values", "v")],
             {"x": x, "m": m, "v": vs}, x.index_put((m,), vs))
        if dt != "b":
            # duplicates accumulate; None first keeps dim 0 in place
            dup = torch.tensor([1, 1, 4])
            v1 = sample(dt, 4, 3, 3)
            want = x.clone()
            for j, d in enumerate(dup.tolist()):
                want[:, d] += v1[:, j]
            case(f"index_put {dt} accumulate duplicates, None first", "aten.index_put.default",
                 [R.t("self", "x"), opt_ts("indices", [None, "i"]), R.t("values", "v"),
                  R.b("accumulate", True)], {"x": x, "i": dup, "v": v1}, want)
        for shifts, dims in [([2], []), ([-7], []), ([1, -2], [0, 2]), ([6], [-2])]:
            want = x.roll(shifts, dims) if dims else x.roll(shifts[0])
            case(f"roll {dt} shifts {shifts} dims {dims}", "aten.roll.default",
                 [R.t("self", "x"), R.ints("shifts", shifts), R.ints("dims", dims)], {"x": x},
                 want)
        p = sample(dt, 2, 3, 8, 2, 3)
        case(f"pixel_shuffle {dt}", "aten.pixel_shuffle.default",
             [R.t("self", "x"), R.i("upscale_factor", 2)], {"x": p}, F.pixel_shuffle(p, 2))
        u = sample(dt, 2, 3, 4, 6)
        case(f"pixel_unshuffle {dt}", "aten.pixel_unshuffle.default",
             [R.t("self", "x"), R.i("downscale_factor", 2)], {"x": u}, F.pixel_unshuffle(u, 2))
    for dt in ["f", "i64", "b"]:
        x = sample(dt, 4, 5, 3)
        for size, stride, off in [([3, 4], [5, 2], 1), ([2, 2, 2], [0, 15, 1], None),
                                  ([0, 3], [1, 1], 59)]:
            args = [R.t("self", "x"), R.ints("size", size), R.ints("stride", stride),
                    R.i("storage_offset", off) if off is not None else R.none("storage_offset")]
            case(f"as_strided_copy {dt} {size} {stride} {off}", "aten.as_strided_copy.default",
                 args, {"x": x}, torch.as_strided(x, size, stride, off or 0))
        for dim, size, step in [(1, 2, 1), (-1, 3, 2), (0, 4, 3), (1, 0, 1)]:
            for op in variants(dt, "aten.unfold.default", "aten.unfold_copy.default"):
                case(f"{op} {dt} dim {dim} size {size} step {step}", op,
                     [R.t("self", "x"), R.i("dimension", dim), R.i("size", size),
                      R.i("step", step)], {"x": x}, x.unfold(dim, size, step))
    x = rn(4, 5)
    refuse("as_strided beyond the input", "aten.as_strided_copy.default",
           [R.t("self", "x"), R.ints("size", [4, 5]), R.ints("stride", [5, 1]),
            R.i("storage_offset", 1)], {"x": x}, 1, ["element 20", "[4, 5]"])
    x = rn(4, 5)
    refuse("slice_scatter src shape", "aten.slice_scatter.default",
           [R.t("self", "x"), R.t("src", "s"), R.i("dim", 0), R.i("start", 0), R.i("end", 2)],
           {"x": x, "s": rn(3, 5)}, 1, ["[3, 5]", "[2, 5]"])
    refuse("index_put values do not broadcast", "aten.index_put.default",
           [R.t("self", "x"), opt_ts("indices", ["i"]), R.t("values", "v")],
           {"x": x, "i": torch.tensor([0, 1]), "v": rn(3)}, 1, ["[3]", "[2, 5]"])


# The ops of this family, for the real graphs' nodes.
OPS_B = {"aten.addmm.default", "aten.bmm.default", "aten.mm.default", "aten.convolution.default",
         "aten.max_pool2d_with_indices.default", "aten.view_copy.default",
         "aten.permute_copy.default", "aten.expand_copy.default",
         "aten.split_with_sizes_copy.default", "aten.linear.default", "aten.avg_pool2d.default",
         "aten.cat.default", "aten.slice_copy.Tensor", "aten.select_copy.int",
         "aten.unsqueeze_copy.default", "aten.squeeze_copy.dims", "aten.transpose_copy.int"}
EDGE = "executorch.exir.dialects.edge.ops."
REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "realexport")


def real_graphs():
    """Every node of this family in the four real Edge graphs, on the float64
    values of its inputs (upstream's fx Interpreter run, <m>_aot_f64.npz) and
    the record's weights, against that run's values of its outputs."""
    import io
    import json
    import re
    import zipfile
    seen = set()
    for m in ["cnn", "mlp", "qcnn", "tiny_transformer"]:
        z = zipfile.ZipFile(os.path.join(REAL, f"{m}.etrecord"))
        prog = json.loads(z.read("edge_dialect_exported_program"))
        aot = dict(np.load(os.path.join(REAL, f"{m}_aot_f64.npz")))
        sd = torch.load(io.BytesIO(z.read("edge_dialect_exported_program_state_dict")))
        consts = torch.load(io.BytesIO(z.read("edge_dialect_exported_program_constants")))
        values = dict(aot)
        for spec in prog["graph_module"]["signature"]["input_specs"]:
            for kind, key in [("parameter", "parameter_name"), ("buffer", "buffer_name"),
                              ("tensor_constant", "tensor_constant_name")]:
                if kind in spec:
                    src = sd if kind != "tensor_constant" else consts
                    t = src.get(spec[kind][key], consts.get(spec[kind][key]))
                    if t is not None:
                        t = t.detach()
                        values[spec[kind]["arg"]["name"]] = t.double() if t.is_floating_point() \
                            else t
        n_nodes = 0
        for node in prog["graph_module"]["graph"]["nodes"]:
            target = node["target"].replace(EDGE, "")
            if target not in OPS_B:
                continue
            names = []
            for o in node["outputs"]:
                names += [x["name"] for x in o["as_tensors"]] if "as_tensors" in o else \
                    [o["as_tensor"]["name"]]
            keys = [re.sub(r"_unused_(\d+)$", r".\1", nm) for nm in names]
            tensors = {}
            for a in node["inputs"]:
                for u in a["arg"].values():
                    for ref in (u if isinstance(u, list) else [u]):
                        if isinstance(ref, dict) and "name" in ref and ref["name"] in values:
                            tensors[ref["name"]] = values[ref["name"]]
            if not all(k in aot for k in keys):
                C.check(f"{m} {names[0]}: reference values present", False, keys)
                continue
            n_nodes += 1
            seen.add(target)
            R.run_case(f"real {m} {names[0]} ({target})", target, node["inputs"], tensors,
                       [aot[k] for k in keys])
        C.check(f"real {m}: nodes of this family found", n_nodes > 0, n_nodes)
    for t in ["aten.addmm.default", "aten.bmm.default", "aten.convolution.default",
              "aten.max_pool2d_with_indices.default", "aten.view_copy.default",
              "aten.permute_copy.default", "aten.expand_copy.default",
              "aten.split_with_sizes_copy.default"]:
        C.check(f"real graphs exercise {t}", t in seen)


def hostile_params():
    """Attribute values at the edge of int64: a clear refusal or torch's value, no crash."""
    big = 2**62
    x = rn(1, 2, 6, 6)
    conv = [R.t("input", "x"), R.t("weight", "w"), R.none("bias"), R.ints("stride", [big, 1]),
            R.ints("padding", [0, 0]), R.ints("dilation", [1, 1]), R.b("transposed", False),
            R.ints("output_padding", [0, 0]), R.i("groups", 1)]
    refuse("conv stride 2^62", "aten.convolution.default", conv, {"x": x, "w": rn(2, 2, 3, 3)},
           1, ["stride", "out of the supported range"])
    conv[3], conv[8] = R.ints("stride", [1, 1]), R.i("groups", big)
    refuse("conv groups 2^62", "aten.convolution.default", conv, {"x": x, "w": rn(2, 2, 3, 3)},
           1, ["groups"])
    refuse("max_pool kernel 2^62", "aten.max_pool2d_with_indices.default",
           [R.t("self", "x"), R.ints("kernel_size", [big, 2])], {"x": x}, 2, ["window parameter"])
    refuse("avg_pool padding -2^62", "aten.avg_pool2d.default",
           [R.t("self", "x"), R.ints("kernel_size", [2, 2]), R.ints("stride", [1, 1]),
            R.ints("padding", [-big, 0])], {"x": x}, 1, ["window parameter"])
    y = rn(5, 7)
    # (torch 1.13 itself overflows for a step near 2^63 and returns nothing)
    case("slice end 2^63-1, step 2^40", "aten.slice_copy.Tensor",
         [R.t("self", "x"), R.i("dim", 1), R.i("start", 1), R.i("end", 2**63 - 1),
          R.i("step", 2**40)], {"x": y}, y[:, 1::2**40])
    case("slice step 2^63-1 (one element)", "aten.slice_copy.Tensor",
         [R.t("self", "x"), R.i("dim", 1), R.i("start", 1), R.i("end", 2**63 - 1),
          R.i("step", 2**63 - 1)], {"x": y}, y[:, 1:2])
    case("split_size 2^63-1", "aten.split_copy.Tensor",
         [R.t("self", "x"), R.i("split_size", 2**63 - 1), R.i("dim", 1)], {"x": y},
         y.split(2**63 - 1, 1))
    refuse("narrow length 2^63-1", "aten.narrow.default",
           [R.t("self", "x"), R.i("dim", 1), R.i("start", 2), R.i("length", 2**63 - 1)],
           {"x": y}, 1, ["exceed dim 1"])
    refuse("split sizes summing past int64", "aten.split_with_sizes_copy.default",
           [R.t("self", "x"), R.ints("split_sizes", [3, 2**63 - 1]), R.i("dim", 1)], {"x": y}, 2,
           ["sum to more than 7"])
    refuse("repeat 2^62", "aten.repeat.default", [R.t("self", "x"), R.ints("repeats", [big, 3])],
           {"x": y}, 1, ["too large"])
    refuse("constant_pad_nd 2^62", "aten.constant_pad_nd.default",
           [R.t("self", "x"), R.ints("pad", [big, -big])], {"x": y}, 1, ["too large"])
    refuse("as_strided stride 2^40 x size 2^40", "aten.as_strided_copy.default",
           [R.t("self", "x"), R.ints("size", [2**40, 2]), R.ints("stride", [2**40, 1])],
           {"x": y}, 1, ["reach too far"])
    refuse("upsample scale 1e300", "aten.upsample_nearest2d.vec",
           [R.t("input", "x"), R.none("output_size"), R.floats("scale_factors", [1e300, 1.0])],
           {"x": x}, 1, ["no valid output size"])
    refuse("pixel_shuffle factor 2^32", "aten.pixel_shuffle.default",
           [R.t("self", "x"), R.i("upscale_factor", 2**32)], {"x": x}, 1, ["not divisible"])
    a = ri(2, 3)
    refuse("addmm int64 alpha 1e300", "aten.addmm.default",
           [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b"), R.f("alpha", 1e300)],
           {"s": ri(3), "a": a, "b": ri(3, 3)}, 1, ["alpha"])
    refuse("addmm int64 beta 0.5", "aten.addmm.default",
           [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b"), R.f("beta", 0.5)],
           {"s": ri(3), "a": a, "b": ri(3, 3)}, 1, ["must be integers"])


with C.harness():
    C.check("the tool is built", os.path.exists(R.TOOL), R.TOOL)
    linalg()
    attention()
    convolution()
    pooling()
    upsampling()
    shape_ops()
    index_ops()
    scatter_ops()
    real_graphs()
    hostile_params()
C.finish()
