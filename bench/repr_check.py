#!/usr/bin/python3
"""Checks etc_fmt_repr (src/core/fmt.c) against Python's repr(float).

Usage: repr_check.py BUILD_DIR/bench/repr_driver [SEED]
Generates about 500,000 doubles (random bit patterns over the whole range,
typical durations, decimal-looking values, every power of two and its
neighbours, integers near 2^52..2^63, round-half-even ties, subnormals),
runs the driver on them and reports every mismatch. Not part of ctest: run
it after touching the formatter.
"""
import random
import struct
import subprocess
import sys


def bits(x):
    return struct.unpack('<Q', struct.pack('<d', x))[0]


def from_bits(b):
    return struct.unpack('<d', struct.pack('<Q', b))[0]


def values(seed):
    rnd = random.Random(seed)
    out = []
    for _ in range(100000):  # any finite double
        x = from_bits(rnd.getrandbits(64))
        if x == x and abs(x) != float('inf'):
            out.append(x)
    for _ in range(100000):
        out.append(rnd.uniform(-1, 1) * 10 ** rnd.randint(-7, 17))
    for _ in range(100000):  # durations: integer ns / 1e3, 1e6, 1e9
        out.append(rnd.randint(1, 10 ** 9) / 10 ** rnd.choice([3, 6, 9]))
    for _ in range(50000):
        out.append(rnd.randint(1, 10 ** 7) / 10 ** rnd.randint(0, 12) * rnd.choice([1, 3, 7]))
    for e in range(-1074, 1024):  # powers of two: asymmetric rounding intervals
        b = bits(2.0 ** e)
        for d in (-3, -2, -1, 0, 1, 2, 3):
            if 0 < b + d < 0x7ff0000000000000:
                out.append(from_bits(b + d))
    for k in range(52, 64):
        for j in range(-300, 300):
            out.append(float(2 ** k + j * 2 ** (k - 52)))
    for e in range(40, 56):  # ties at the shortest length (round half even)
        for j in range(400):
            out.append(float(2 ** e) + j * 0.25)
    for i in range(1, 20000):
        out += [i / 10.0, i / 100.0, i / 1000.0, i * 1e-6, float(i), i * 0.1 ** 7]
    for j in range(-324, 309):
        for m in ('1', '2', '5', '9.999', '1.5', '123456789012345678'):
            x = float(f'{m}e{j}')
            if x != float('inf'):
                out.append(x)
    out += [5e-324, 1.7976931348623157e308, 2.2250738585072014e-308,
            2.225073858507201e-308, 0.0, -0.0, float('inf'), float('-inf'), float('nan')]
    out += [-x for x in out[:50000]]
    return out


def main():
    driver = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    vals = values(seed)
    inp = ''.join('%016x\n' % bits(x) for x in vals)
    got = subprocess.run([driver], input=inp, capture_output=True, text=True,
                         check=True).stdout.split('\n')
    bad = 0
    for x, g in zip(vals, got):
        if repr(x) != g:
            bad += 1
            if bad <= 20:
                print(f'MISMATCH {x.hex()}: python {x!r} etcompare {g}')
    print(f'{len(vals)} values, {bad} mismatches')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
