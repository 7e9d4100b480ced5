#!/usr/bin/env python3
"""Large inputs: a debug buffer over 4 GiB (a sparse file: the holes read as
zeros and take no disk space) with tensors above the 4 GiB mark, and ZIP64
ETRecords: members with ZIP64 extra fields, more than 65535 members (ZIP64
end of central directory), and members that lie after a 4 GiB sparse
padding member (64-bit offsets in the central directory and the ZIP64 end
record). Expected values are the ones written here; the ZIP64 records must
give the same linked report and comparison as the plain zip they repack.
"""
import json
import os
import shutil
import struct
import sys
import zipfile
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import DATA, check, flatc_build  # noqa: E402

GiB4 = 1 << 32


def run(*args):
    return common.call(*args)


def tensor_event(offset, sizes, output=False, instruction=0):
    e = {"chain_index": 18446744073709551615 if output else 0, "instruction_id": instruction,
         "debug_entry": {"val": "Tensor",
                         "tensor": {"scalar_type": "FLOAT", "sizes": sizes,
                                    "strides": [1] * len(sizes), "offset": offset}}}
    if output:
        e["debug_entry"]["output"] = {"bool_val": True}
    return {"debug_event": e}


def build_etdump(tmp, name, events):
    return flatc_build(tmp, name, {"version": 0, "run_data": [{"name": "Execute", "events": events}]})


def npy(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
            struct.pack(f"<{len(values)}f", *values))


def debug_buffer_cases(tmp):
    size = GiB4 + (1 << 20)
    high = GiB4 + 64            # an intermediate output above 4 GiB
    out_at = GiB4 + 4096        # the program output above 4 GiB
    low = 128                   # one below, in the same file
    inter = [1.5, -2.25, 3.0, 0.5]
    output = [0.25, -0.75, 8.0, 1e6]
    below = [7.0, -7.0]
    buf = os.path.join(tmp, "big_debug.bin")
    with open(buf, "wb") as f:
        f.truncate(size)
        for at, vals in ((high, inter), (out_at, output), (low, below)):
            f.seek(at)
            f.write(struct.pack(f"<{len(vals)}f", *vals))
    check("debug buffer is sparse (uses < 1 MiB on disk)",
          os.stat(buf).st_blocks * 512 < (1 << 20), str(os.stat(buf).st_blocks))
    etdp = build_etdump(tmp, "big", [
        tensor_event(high, [2, 2]),
        {"profile_event": {"name": "native_call_add.out", "chain_index": 0, "instruction_id": 0,
                           "start_time": 1000, "end_time": 3000}},
        tensor_event(low, [2], instruction=1),
        {"profile_event": {"name": "native_call_mul.out", "chain_index": 0, "instruction_id": 1,
                           "start_time": 3000, "end_time": 4000}},
        tensor_event(out_at, [4], output=True)])
    rep = os.path.join(tmp, "big.json")
    p = run("--etdump", etdp, "--debug_buffer", buf, "--no-table", "--json", rep)
    check("debug buffer > 4 GiB: exit 0", p.returncode == 0, p.stderr)
    if p.returncode == 0:
        r = json.load(open(rep))
        check("debug buffer size reported", r["debug_buffer"]["size"] == size,
              str(r["debug_buffer"]))
        ev = {e["event_name"]: e for e in r["blocks"][0]["events"]}
        t = ev["native_call_add.out"]["debug_data"][0]["tensors"][0]
        check("tensor at offset 2^32+64: offset", t["offset"] == high, str(t))
        check("tensor at offset 2^32+64: values", t["values"] == inter, str(t))
        check("tensor at offset 2^32+64: min/max/mean",
              (t["min"], t["max"], t["mean"]) == (-2.25, 3.0, sum(inter) / 4), str(t))
        t = ev["native_call_mul.out"]["debug_data"][0]["tensors"][0]
        check("tensor below 4 GiB in the same buffer", t["values"] == below, str(t))
        o = r["blocks"][0]["program_outputs"][0]["outputs"][0]["tensors"][0]
        check("program output at 2^32+4096", o["offset"] == out_at and o["values"] == output,
              str(o))
    # The comparison reads the output above 4 GiB.
    ref = os.path.join(tmp, "ref.npz")
    with zipfile.ZipFile(ref, "w") as z:
        z.writestr("0.0.npy", npy(output))
    p = run("--etdump", etdp, "--debug_buffer", buf, "--no-table", "--reference-outputs", ref,
            "--min-snr", "100", "--json", rep)
    check("comparison above 4 GiB: identical output passes", p.returncode == 0, p.stderr)
    if p.returncode == 0:
        row = json.load(open(rep))["accuracy"]["rows"][0]
        check("comparison above 4 GiB: identical, mse 0",
              row["metrics"]["identical"] and row["metrics"]["mse"] == 0, str(row))
    off = [v + 1.0 for v in output]
    with zipfile.ZipFile(ref, "w") as z:
        z.writestr("0.0.npy", npy(off))
    p = run("--etdump", etdp, "--debug_buffer", buf, "--no-table", "--reference-outputs", ref,
            "--max-mse", "0.5", "--json", rep)
    check("comparison above 4 GiB: mse 1 fails the gate", p.returncode == 1, p.stderr)
    if os.path.exists(rep):
        row = json.load(open(rep))["accuracy"]["rows"][0]
        check("comparison above 4 GiB: mse is 1", row["metrics"]["mse"] == 1.0, str(row))
    # A tensor that starts inside the buffer and ends past it, above 4 GiB.
    bad = build_etdump(tmp, "big_bad", [tensor_event(size - 8, [4]),
                                        {"profile_event": {"name": "op", "chain_index": 0,
                                                           "instruction_id": 0,
                                                           "start_time": 1, "end_time": 2}}])
    p = run("--etdump", bad, "--debug_buffer", buf, "--no-table", "--show-outputs")
    check("tensor past the end of a > 4 GiB buffer: exit 3", p.returncode == 3,
          f"{p.returncode} {p.stderr}")
    check("... the message names the offset", str(size - 8) in p.stderr, p.stderr)
    os.unlink(buf)


# --- ZIP64 ------------------------------------------------------------------------

def members_of(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def zip_forced64(path, members):
    """Every member with a ZIP64 extra field in its local header."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            with z.open(info, "w", force_zip64=True) as w:
                w.write(data)


def zip_many(path, members, extra):
    """More than 65535 members: Python writes the ZIP64 end records."""
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
        for i in range(extra):
            z.writestr(zipfile.ZipInfo(f"padding/{i}", date_time=(1980, 1, 1, 0, 0, 0)), b"")


def crc_of_zeros(n):
    chunk = bytes(64 << 20)
    crc = 0
    while n:
        k = min(n, len(chunk))
        crc = zlib.crc32(chunk[:k] if k < len(chunk) else chunk, crc)
        n -= k
    return crc


def zip_after_hole(path, members, hole):
    """A STORED member of `hole` zero bytes (a hole in a sparse file) first,
    so that every other member starts above 4 GiB; every size and offset is
    in ZIP64 extra fields, and the end records are ZIP64."""
    central = []
    with open(path, "wb") as f:
        for name, data in [("padding.bin", None)] + members:
            offset = f.tell()
            size = hole if data is None else len(data)
            crc = crc_of_zeros(hole) if data is None else zlib.crc32(data)
            n = name.encode()
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0x21, crc,
                                0xFFFFFFFF, 0xFFFFFFFF, len(n), 20) + n +
                    struct.pack("<HHQQ", 1, 16, size, size))
            if data is None:
                f.seek(hole, 1)
            else:
                f.write(data)
            central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0,
                                       0x21, crc, 0xFFFFFFFF, 0xFFFFFFFF, len(n), 28, 0, 0, 0,
                                       0, 0xFFFFFFFF) + n +
                           struct.pack("<HHQQQ", 1, 24, size, size, offset))
        cd_at = f.tell()
        cd = b"".join(central)
        f.write(cd)
        eocd64_at = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(central),
                            len(central), len(cd), cd_at))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, eocd64_at, 1))
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                            0xFFFFFFFF, 0))


def linked_report(tmp, tag, record):
    rep = os.path.join(tmp, tag + ".json")
    p = run("--etdump", os.path.join(DATA, "runs5_ops12.etdp"),
            "--debug_buffer", os.path.join(DATA, "runs5_ops12.bin"), "--etrecord", record,
            "--no-table", "--compare", "--json", rep)
    if p.returncode != 0 or not os.path.exists(rep):
        return p, None
    r = json.load(open(rep))
    r["etrecord"].pop("path")
    r["accuracy"].pop("reference_source", None)  # names the record's path
    return p, {k: r[k] for k in ("etrecord", "blocks", "accuracy", "warnings")}


def zip64_cases(tmp):
    plain = os.path.join(DATA, "example_refs.etrecord")
    members = members_of(plain)
    p, want = linked_report(tmp, "plain", plain)
    check("plain ETRecord links and compares", want is not None, p.stderr)
    if want is None:
        return
    ops = {op for e in want["blocks"][1]["events"] for op in e["op_types"]}
    check("plain ETRecord: operator types linked", "aten.convolution.default" in ops, str(ops))
    check("plain ETRecord: 10 outputs compared",
          want["accuracy"]["outputs"] == 10 and len(want["accuracy"]["rows"]) == 10,
          str(want["accuracy"]["outputs"]))

    forced = os.path.join(tmp, "forced64.etrecord")
    zip_forced64(forced, members)
    with open(forced, "rb") as f:
        raw = f.read()
    check("forced ZIP64: local headers carry ZIP64 extra fields",
          raw.count(b"\x01\x00\x10\x00") >= len(members))
    p, got = linked_report(tmp, "forced64", forced)
    check("forced ZIP64 ETRecord: same report as the plain zip", got == want, p.stderr)

    many = os.path.join(tmp, "many.etrecord")
    zip_many(many, members, 70000)
    with open(many, "rb") as f:
        f.seek(-200, 2)
        tail = f.read()
    check("70000 members: ZIP64 end of central directory written", b"PK\x06\x06" in tail)
    p, got = linked_report(tmp, "many", many)
    check("ZIP64 ETRecord with 70000 members: same report", got == want, p.stderr)

    hole = os.path.join(tmp, "above4g.etrecord")
    zip_after_hole(hole, members, GiB4 + 4096)
    with zipfile.ZipFile(hole) as z:  # Python agrees the archive is well formed
        check("members above 4 GiB: Python reads them back",
              [(i.filename, z.read(i)) for i in z.infolist()[1:]] == members)
        check("members above 4 GiB: offsets above 2^32",
              all(i.header_offset > GiB4 for i in z.infolist()[1:]))
    check("members above 4 GiB: archive is sparse",
          os.stat(hole).st_blocks * 512 < (64 << 20), str(os.stat(hole).st_blocks))
    p, got = linked_report(tmp, "above4g", hole)
    check("ETRecord members above 4 GiB: same report", got == want, p.stderr)
    os.unlink(hole)


def main():
    tmp = common.work_dir("large")
    try:
        debug_buffer_cases(tmp)
        zip64_cases(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return common.summary()


if __name__ == "__main__":
    sys.exit(main())
