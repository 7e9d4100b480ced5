#!/usr/bin/python3
"""make_npz.py - writes the .npz / .npy fixtures of tests/unit/test_npz.c.

numpy is not needed (nor used): this is a small writer of the .npy format
(numpy/lib/format.py's documented layout) on the Python standard library,
and the archives are laid out as numpy.savez / numpy.savez_compressed lay
them out: a zipfile.ZipFile whose members `<name>.npy` are written through
ZipFile.open(..., 'w', force_zip64=True), so the local headers carry the
ZIP64 extra field numpy's archives have. Timestamps are fixed so that the
output is reproducible.

A .npy is: b'\\x93NUMPY', major, minor, the header length (uint16 LE for
1.0, uint32 LE for 2.0/3.0), the header - repr-style dict
"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" followed, as
numpy does, by spare spaces for the growth axis, then spaces and a final
'\\n' so that the data starts at a multiple of 64 - and the data in C order.

Files (run `python3 make_npz.py` in this folder to regenerate them):
  arrays_v1.npz        every ARRAYS entry, format 1.0, stored (savez)
  arrays_v2.npz        the same with format 2.0 headers
  arrays_v3.npz        the same with format 3.0 (UTF-8) headers
  arrays_deflated.npz  the same, format 1.0, ZIP_DEFLATED (savez_compressed)
  single_f4.npy        one float32 array, format 1.0 (numpy.save)
  single_f2_v2.npy     one float16 array, format 2.0
  empty.npz            an archive without members (numpy.savez() with no arrays)
  unsupported.npz      well-formed arrays etcompare refuses (big-endian,
                       fortran_order True, object, structured) and one it reads

The values in ARRAYS are repeated, as literals, in tests/unit/test_npz.c.
"""
import math
import os
import pickle
import struct
import zipfile

INF, NAN = math.inf, math.nan

# name -> (descr, shape, values in C order); struct codes per descr below.
ARRAYS = [
    ("f4", "<f4", (2, 4), [1.5, -2.25, 0.0, -0.0, 2.0**-149, 3.4028234663852886e38, INF, NAN]),
    ("f2", "<f2", (2, 4), [1.0, -2.5, 65504.0, 2.0**-24, -0.0, INF, -INF, NAN]),
    ("f8", "<f8", (3,), [0.1, -1e308, 5e-324]),
    ("i1", "|i1", (4,), [-128, 127, 0, -1]),
    ("i2", "<i2", (2, 2), [-32768, 32767, 1, -1]),
    ("i4", "<i4", (2, 2), [-2**31, 2**31 - 1, 7, -7]),
    ("i8", "<i8", (3,), [-2**63, 2**63 - 1, 123456789012345]),
    ("u1", "|u1", (3,), [0, 255, 7]),
    ("u2", "<u2", (2,), [0, 65535]),
    ("u4", "<u4", (2,), [0, 2**32 - 1]),
    ("u8", "<u8", (3,), [0, 2**64 - 1, 2**53 + 1]),
    ("b1", "|b1", (2, 2), [True, False, False, True]),
    ("scalar", "<f4", (), [42.5]),
    ("empty", "<f4", (0, 3), []),
    ("multi", "<f4", (2, 3, 4), [i * 0.5 - 3.0 for i in range(24)]),
    ("12", "<f4", (2,), [1.0, 2.0]),
    ("12,13", "<f2", (3,), [0.5, 0.25, -4.0]),
    ("zeros", "<f4", (256,), [0.0] * 256),
]

CODES = {"f2": "e", "f4": "f", "f8": "d", "i1": "b", "i2": "h", "i4": "i", "i8": "q",
         "u1": "B", "u2": "H", "u4": "I", "u8": "Q", "b1": "?"}


def header_text(descr, fortran_order, shape):
    """The dict literal as numpy writes it: sorted keys, repr values, ', ' after each."""
    d = {"descr": descr, "fortran_order": fortran_order, "shape": shape}
    text = "{" + "".join("%r: %r, " % (k, d[k]) for k in sorted(d)) + "}"
    if shape:  # numpy leaves room for the growth axis to reach 21 digits
        text += " " * (21 - len(repr(shape[-1 if fortran_order else 0])))
    return text


def npy(descr, shape, data, version=(1, 0), fortran_order=False):
    """The bytes of a .npy file holding `data` (already encoded)."""
    enc = "utf8" if version == (3, 0) else "latin1"
    head = header_text(descr, fortran_order, shape).encode(enc)
    fmt = "<H" if version == (1, 0) else "<I"
    prefix = 6 + 2 + struct.calcsize(fmt)
    pad = (-(prefix + len(head) + 1)) % 64
    head += b" " * pad + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(fmt, len(head)) + head + data


def encode(descr, values):
    return struct.pack("<%d%s" % (len(values), CODES[descr[1:]]), *values)


def write_npz(path, members, compression=zipfile.ZIP_STORED):
    """members: list of (name, bytes); written as numpy.savez writes them."""
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in members:
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            info.external_attr = 0o600 << 16
            with zf.open(info, "w", force_zip64=True) as f:
                f.write(data)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = lambda name: os.path.join(here, name)

    def members(version):
        return [(n, npy(d, s, encode(d, v), version)) for n, d, s, v in ARRAYS]

    write_npz(out("arrays_v1.npz"), members((1, 0)))
    write_npz(out("arrays_v2.npz"), members((2, 0)))
    write_npz(out("arrays_v3.npz"), members((3, 0)))
    write_npz(out("arrays_deflated.npz"), members((1, 0)), zipfile.ZIP_DEFLATED)

    with open(out("single_f4.npy"), "wb") as f:
        f.write(npy("<f4", (2, 2), encode("<f4", [0.5, -1.0, 3.0, 1e-3])))
    with open(out("single_f2_v2.npy"), "wb") as f:
        f.write(npy("<f2", (3,), encode("<f2", [1.0, -0.5, 2048.0]), (2, 0)))

    write_npz(out("empty.npz"), [])

    big = struct.pack(">3f", 1.0, 2.0, 3.0)
    fortran = encode("<f4", [1.0, 4.0, 2.0, 5.0, 3.0, 6.0])  # (2, 3) in column order
    objects = pickle.dumps([1, "two"], protocol=3)
    fields = struct.pack("<fi", 1.5, 7)
    write_npz(out("unsupported.npz"), [
        ("big", npy(">f4", (3,), big)),
        ("fortran", npy("<f4", (2, 3), fortran, fortran_order=True)),
        ("object", npy("|O", (2,), objects)),
        ("structured", npy([("a", "<f4"), ("b", "<i4")], (1,), fields)),
        ("ok", npy("<i4", (2,), encode("<i4", [5, -5]))),
    ])


if __name__ == "__main__":
    main()
