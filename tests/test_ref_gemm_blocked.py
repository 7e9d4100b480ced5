"""Matrix products on a float32 weight in a float64 reference
(src/reference/ops_linalg.c, gemm_b): a weight whose float64 copy would
exceed 256 KiB is widened a block of columns at a time, one dgemm per
block. Checked against torch in float64 on the widened weight (relative L2
<= 1e-12) and bit for bit against the same product with the weight given
in float64 (one dgemm on the whole of it), with 1, 2 and 3 threads: a
product large enough to be cut into pieces over the threads
(src/core/blas.c) keeps the bits of the whole one, so neither the blocks
nor ETC_THREADS change a bit. mm, addmm (beta, alpha, broadcast self),
linear (weight [n, k], batched input, bias and none), for column counts
that are and are not multiples of the block, products cut along their
rows and along their columns, and a weight below the threshold."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import refops as R  # noqa: E402

torch.manual_seed(2132)
D = torch.float64


def run(target, args, inputs, keep32, threads):
    """The op's one output (numpy), or None and the tool's message."""
    with tempfile.TemporaryDirectory(prefix="refgemm-") as d:
        case = os.path.join(d, "case.json")
        with open(case, "w") as fh:
            json.dump({"target": target, "inputs": args, "outputs": 1, "dtype": "float64",
                       "keep_float32": keep32}, fh)
        np.savez(os.path.join(d, "in.npz"),
                 **{k: v.detach().contiguous().numpy() for k, v in inputs.items()})
        out = os.path.join(d, "out.npz")
        p = subprocess.run([R.TOOL, case, os.path.join(d, "in.npz"), out], capture_output=True,
                           text=True, env=dict(os.environ, ETC_THREADS=str(threads)))
        if p.returncode != 0:
            return None, p.stderr.strip()
        with np.load(out) as z:
            return z["0"], ""


def check(label, target, args, inputs, weight, expected):
    """inputs[weight] is float32: blocked (kept float32) vs whole (widened
    by the tool) vs torch float64."""
    C.check(f"{label}: the weight is float32", inputs[weight].dtype == torch.float32)
    want = expected.numpy()
    whole1, why1 = run(target, args, inputs, False, 1)
    for threads in (1, 2, 3):
        blocked, why = run(target, args, inputs, True, threads)
        if blocked is None:
            C.check(f"{label}, {threads} thread(s)", False, why)
            continue
        err = np.linalg.norm(blocked - want) / np.linalg.norm(want)
        C.check(f"{label}, {threads} thread(s): float64, against torch float64 relative L2 "
                f"{err:.2g} <= 1e-12", blocked.dtype == np.float64 and err <= 1e-12)
        C.check(f"{label}, {threads} thread(s): bit-identical to one dgemm on the whole "
                "widened weight on 1 thread",
                whole1 is not None and blocked.shape == whole1.shape and
                np.array_equal(blocked.view(np.uint64), whole1.view(np.uint64)),
                why1 or f"{int(np.sum(blocked != whole1))} elements differ")
        if threads > 1:
            whole, why = run(target, args, inputs, False, threads)
            C.check(f"{label}, {threads} threads: the whole product has the bits of 1 thread's",
                    whole is not None and whole1 is not None and
                    np.array_equal(whole.view(np.uint64), whole1.view(np.uint64)),
                    why or "bits differ")


def main():
    mm_args = [R.t("self", "a"), R.t("mat2", "b")]
    # k 1280: 16 columns a block (the classifier of MobileNetV2); k 700: 32
    # 64 x 1280 x 1000: 82 M multiply-adds, cut into pieces of columns when whole
    for m, k, n in [(1, 1280, 1000), (3, 1280, 300), (5, 700, 123), (2, 700, 32), (4, 64, 17),
                    (64, 1280, 1000)]:
        a, b = torch.randn(m, k, dtype=D), torch.randn(k, n, dtype=torch.float32)
        check(f"mm {m}x{k} @ float32 {k}x{n}", "aten.mm.default", mm_args,
              {"a": a, "b": b}, "b", torch.mm(a, b.double()))
    addmm_args = [R.t("self", "s"), R.t("mat1", "a"), R.t("mat2", "b"), R.f("beta", 0.5),
                  R.f("alpha", -1.5)]
    for m, k, n, sshape in [(1, 1280, 1000, (1000,)), (3, 300, 257, (3, 257)),
                            (2, 1280, 40, (1, 40))]:
        s, a = torch.randn(*sshape, dtype=D), torch.randn(m, k, dtype=D)
        b = torch.randn(k, n, dtype=torch.float32)
        check(f"addmm {m}x{k} @ float32 {k}x{n} + self {list(sshape)}", "aten.addmm.default",
              addmm_args, {"s": s, "a": a, "b": b}, "b",
              torch.addmm(s, a, b.double(), beta=0.5, alpha=-1.5))
    # [8, 64, 512] x [384, 512]: 100 M multiply-adds, cut into pieces of rows
    for xs, n, k, with_bias in [((1, 1280), 1000, 1280, True), ((2, 3, 640), 77, 640, False),
                                ((4, 256), 130, 256, True), ((8, 64, 512), 384, 512, True)]:
        x, w = torch.randn(*xs, dtype=D), torch.randn(n, k, dtype=torch.float32)
        bias = torch.randn(n, dtype=D)
        args = [R.t("input", "x"), R.t("weight", "w"),
                R.t("bias", "b") if with_bias else R.none("bias")]
        inputs = {"x": x, "w": w, "b": bias} if with_bias else {"x": x, "w": w}
        check(f"linear {list(xs)} float32 weight [{n}, {k}] bias {with_bias}",
              "aten.linear.default", args, inputs, "w",
              F.linear(x, w.double(), bias if with_bias else None))
    C.finish()


if __name__ == "__main__":
    main()
