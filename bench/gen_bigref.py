#!/usr/bin/env python3
"""Writes an ETRecord whose reference_outputs hold one float32 tensor of
MIB mebibytes (stored, as torch.save writes): checks that large references
are read in place. usage: gen_bigref.py MIB OUT.etrecord (test-side code)."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import etrecord_gen as G  # noqa: E402


class RawStorage(G.Storage):
    """A storage given as bytes, without a Python list of its values."""

    def __init__(self, dtype, data, itemsize):
        self.dtype = dtype
        self.raw = data
        self.itemsize = itemsize
        self.values = None

    @property
    def numel(self):
        return len(self.raw) // self.itemsize

    def data(self):
        return self.raw


def main():
    mib, out = int(sys.argv[1]), sys.argv[2]
    n = mib * 1024 * 1024 // 4
    # a ramp, so min/max/mean are known: 0 .. n-1 in float32 (exact below 2^24 only)
    block = struct.pack("<1024f", *range(1024))
    raw = block * (n // 1024)
    storage = RawStorage("float32", raw, 4)
    ref = {"forward": [[G.Tensor("float32", storage=storage, shape=[n])]]}
    G.write_etrecord(out, programs={"forward": G.program([])}, legacy=True,
                     debug_handle_map={"forward": {}}, reference_outputs=ref)


if __name__ == "__main__":
    main()
