"""The 12-output sample of the plot and HTML report tests (issue 15): one run
of a flatc-built ETDump with 12 program outputs and an ETRecord holding their
references. Output 3, a [4, 64] tensor, is perturbed everywhere by 1e-4
relative plus one element (row 2, column 41) by 0.002: SNR about 80 dB, below
a --min-snr of 90. Output 7 ([8, 8]) is perturbed at 1e-7 relative (passes);
output 5 is a 1-element tensor with an error; the others are identical.

    make_sample(d, stem, name=...) -> (etdp, debug buffer, etrecord, info)
"""
import math
import os
import sys

sys.dont_write_bytecode = True
from test_accuracy import Dump, T, etrecord, f32  # noqa: E402

SHAPES = [[2, 3], [16], [4, 8], [4, 64], [3, 3], [1], [2, 3, 16], [8, 8], [6], [32],
          [2, 2], [5, 7]]
BAD = 3
BAD_AT = (2, 41)


def ref_values(i, n):
    return [f32(math.sin(0.37 * k + i) * (1 + i / 4)) for k in range(n)]


def make_sample(d, stem="sample", block="Execute"):
    dump = Dump()
    outs, refs = [], []
    for i, shape in enumerate(SHAPES):
        n = math.prod(shape)
        r = ref_values(i, n)
        a = list(r)
        if i == BAD:
            a = [f32(x * (1 + 1e-4 * math.cos(k))) for k, x in enumerate(r)]
            k = BAD_AT[0] * shape[1] + BAD_AT[1]
            a[k] = f32(a[k] + 0.002)
        elif i == 7:
            a = [f32(x * (1 + 1e-7 * ((k % 3) - 1))) for k, x in enumerate(r)]
        elif i == 5:
            a = [f32(r[0] + 0.5)]
        outs.append(dump.tensor("FLOAT", a, shape))
        refs.append(T(r, shape))
    dump.run(outs, name=block)
    etdp, dbg = dump.write(d, stem)
    rec = etrecord(d, stem, [refs])
    return etdp, dbg, rec
