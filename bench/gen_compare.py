#!/usr/bin/env python3
"""Writes d.etdp (one Execute run whose program output is a 1 GiB float32
tensor), debug.bin (its data, a few values perturbed) and ref.npz (the
reference, stored) into the current directory, for the end-to-end
comparison benchmark of bench/run.sh. Test-side code, stdlib only.
usage: gen_compare.py FLATC SCHEMA"""
import sys
import json, struct, subprocess, zipfile, os
N = 1024 * 1024 * 1024 // 4  # 1 GiB of float32
block = struct.pack("<1024f", *[i * 0.001 for i in range(1024)])
act = bytearray(block * (N // 1024))
ref = bytes(act)
# perturb a few values in the actual output
for pos in range(0, len(act), 4 * 1000003):
    act[pos:pos + 4] = struct.pack("<f", struct.unpack("<f", act[pos:pos + 4])[0] + 1e-3)
open("debug.bin", "wb").write(act)
doc = {"run_data": [{"name": "Execute", "events": [
    {"profile_event": {"name": "native_call_add.out", "chain_index": 0, "instruction_id": 0, "start_time": 1, "end_time": 2}},
    {"debug_event": {"chain_index": 18446744073709551615, "instruction_id": 0, "debug_entry": {
        "val": "Tensor", "tensor": {"scalar_type": "FLOAT", "sizes": [N // 1024, 1024], "strides": [1024, 1], "offset": 0},
        "output": {"bool_val": True}}}}]}]}
json.dump(doc, open("d.json", "w"))
subprocess.run([sys.argv[1], "-b", "--size-prefixed", sys.argv[2], "d.json"], check=True)
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 1024), }" % (N // 1024)
hdr = hdr + " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + ref
with zipfile.ZipFile("ref.npz", "w", zipfile.ZIP_STORED) as z:
    z.writestr("0.0.npy", npy)
