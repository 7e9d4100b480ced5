#!/usr/bin/env python3
"""fuzz_manifest.py - the batch manifest parser (etcompare.batch.from_manifest)
under a seeded random mutation loop: atheris (libFuzzer for Python) is not
available here, so this is a plain loop of byte mutations of seed manifests
(flips, inserts of CSV-significant and hostile bytes - quotes, commas, CR,
NUL, invalid UTF-8, U+202E, huge fields - deletions, splices, line
duplication). Each mutant must parse into a list of run specs (dicts with
exactly the manifest's columns, etdump set, every value None or a str path)
or fail with SystemExit carrying a message that names the manifest; any other
exception, a hang, or a wrong spec is a finding: it is saved under
build/fuzz-manifest/ and the script exits 1.

  fuzz_manifest.py [--seconds S] [--runs N] [--seed K]
Prints: manifest: <runs> executions in <s> s, <k> findings
"""
import argparse
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "python"))
from etcompare import batch  # noqa: E402

SEEDS = [
    b"etdump,debug_buffer,etrecord,reference,reference_debug_buffer\n"
    b"a.etdp,a_debug.bin,a.etrecord,a.ref.etdp,a.ref_debug.bin\n"
    b"b.etdp,,,,\n",
    b"etdump\nrun1/x.etdp\n/abs/y.etdump\n",
    b"etrecord,etdump\nm.etrecord,\"q,uoted.etdp\"\n\"\",z.etdp\n",
    b"etdump,reference\r\nx.etdp,refs.npz\r\n",
    b"etdump,extra\nx.etdp,1\n",
    b"",
]
HOSTILE = [b'"', b",", b"\r", b"\n", b"\x00", b"\xff", b"\xe2\x80\xae", b"\x1b[2J", b"../",
           b"etdump", b"\"\"", b"a" * 200000, b"\t", b"\xef\xbb\xbf"]


def mutate(rnd, data):
    data = bytearray(data)
    for _ in range(rnd.randint(1, 6)):
        op = rnd.randrange(6)
        at = rnd.randint(0, len(data))
        if op == 0 and data:
            data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
        elif op == 1:
            data[at:at] = rnd.choice(HOSTILE)
        elif op == 2 and data:
            end = min(len(data), at + rnd.randint(1, 16))
            del data[at:end]
        elif op == 3:
            other = rnd.choice(SEEDS)
            k = rnd.randint(0, len(other))
            data[at:] = other[k:]
        elif op == 4:
            lines = bytes(data).split(b"\n")
            if lines:
                line = rnd.choice(lines)
                data[at:at] = line + b"\n"
        else:
            data[at:at] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
    return bytes(data)


def check_one(path, data):
    try:
        specs = batch.from_manifest(path)
    except SystemExit as e:
        msg = str(e.code if e.code is not None else "")
        if path not in msg:
            return f"SystemExit without the manifest's name: {msg[:200]!r}"
        return None
    except Exception as e:  # noqa: BLE001 - any other exception is the finding
        return f"{type(e).__name__}: {e}"
    if not isinstance(specs, list):
        return f"not a list: {type(specs).__name__}"
    for s in specs:
        if set(s) != set(batch.FIELDS):
            return f"spec keys {sorted(s)}"
        if not s["etdump"]:
            return "a spec without etdump"
        if any(v is not None and not isinstance(v, str) for v in s.values()):
            return f"non-str value in {s!r}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--runs", type=int, default=-1)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--out", default=os.path.join(SRC, "build", "fuzz-manifest"))
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    findings = 0
    runs = 0
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "manifest.csv")
        pool = list(SEEDS)
        while time.monotonic() - t0 < a.seconds and (a.runs < 0 or runs < a.runs):
            data = mutate(rnd, rnd.choice(pool))
            with open(path, "wb") as f:
                f.write(data)
            why = check_one(path, data)
            runs += 1
            if why:
                findings += 1
                os.makedirs(a.out, exist_ok=True)
                name = os.path.join(a.out, f"finding-{findings}.csv")
                with open(name, "wb") as f:
                    f.write(data)
                print(f"finding {findings}: {why} (saved as {name})", file=sys.stderr)
                if findings >= 5:
                    break
            elif len(pool) < 200 and rnd.random() < 0.01:
                pool.append(data)  # keep some mutants as new seeds
    took = time.monotonic() - t0
    print(f"manifest: {runs} executions in {took:.0f} s, {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
