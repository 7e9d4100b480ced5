#!/usr/bin/env python3
"""Zip archives with bytes after the end of central directory record (EOCD):
an ETRecord and .npz files with zero or random bytes appended are read as
Python's zipfile and numpy.load read them (the archive ends where the EOCD's
comment does), give the same numbers as the files without the bytes, and a
warning names the file, the number of bytes and the archive's end. A zip
whose central directory is damaged, or whose EOCD found in the appended bytes
points outside the archive, still exits 3 with a message naming the file and
the byte.

Expected numbers come from the unpadded files (the CLI's --json output
compared byte for byte) and from numpy; the archive end from the EOCD found
here by hand.

Environment (set by ctest): ETCOMPARE, ETC_SRC, ETC_WORK.
"""
import io
import json
import os
import struct
import sys
import zipfile

import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import common as C  # noqa: E402
import test_python as T  # noqa: E402

REAL = os.path.join(C.DATA, "realexport")
M = "mlp"
BASE = ("--etdump", os.path.join(REAL, M + ".etdp"), "--debug_buffer",
        os.path.join(REAL, M + "_debug.bin"), "--no-table")


def eocd_end(data):
    """Where the archive ends: after the last EOCD's comment (found by hand)."""
    at = data.rfind(b"PK\x05\x06")
    return at + 22 + struct.unpack_from("<H", data, at + 20)[0]


def write(d, name, data):
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def gap_json(d, tag, *args):
    """(exit code, stderr, the --json report's text)."""
    out = os.path.join(d, tag + ".json")
    rc, _o, err = C.run(*BASE, *args, "--json", out)
    text = open(out).read() if os.path.exists(out) else ""
    return rc, err, text


def warning_lines(err):
    return [ln for ln in err.splitlines() if "after the zip archive's end" in ln]


def same_report(a, b, padded, plain):
    """The two --json texts are equal once the file names are (the padded
    file's name is the only difference allowed)."""
    return a and a.replace(padded, plain) == b.replace(padded, plain)


def test_etrecord(d):
    rec = os.path.join(REAL, M + ".etrecord")
    data = open(rec, "rb").read()
    end = eocd_end(data)
    C.check("the ETRecord ends at its EOCD's comment (the fixture has no trailing bytes)",
            end == len(data), f"{end} vs {len(data)}")
    rc0, err0, j0 = gap_json(d, "plain", "--etrecord", rec)
    C.check("the unpadded ETRecord: exit 0, a report, no zip warning",
            rc0 == 0 and j0 and not warning_lines(err0), f"rc={rc0} {err0[-300:]}")
    rng = np.random.default_rng(20261126)
    for kind, extra in (("zero", bytes(1000)), ("random", rng.bytes(1000)),
                        ("zero4096", bytes(4096))):
        if b"PK\x05\x06" in extra:  # a second EOCD would be another case
            extra = extra.replace(b"PK\x05\x06", b"PK\x05\x07")
        p = write(d, f"pad_{kind}.etrecord", data + extra)
        # Python's zipfile (upstream's ETRecord reader) reads it: the premise
        with zipfile.ZipFile(p) as z:
            py_ok = z.testzip() is None and "ETRECORD_V0" in z.namelist()
        rc, err, j = gap_json(d, "pad_" + kind, "--etrecord", p)
        w = warning_lines(err)
        want = (f"etcompare: warning: {p}: {len(extra)} bytes after the zip archive's end "
                f"(byte {end}) are ignored")
        C.check(f"ETRecord + {len(extra)} {kind} bytes: Python's zipfile reads it, etcompare "
                "exits 0", py_ok and rc == 0, f"rc={rc} {err[-400:]}")
        C.check(f"ETRecord + {len(extra)} {kind} bytes: one warning naming the file, the "
                "byte count and the archive's end", w == [want], f"{w} want {want!r}")
        C.check(f"ETRecord + {len(extra)} {kind} bytes: the --json report equals the "
                "unpadded file's", same_report(j, j0, p, rec), f"{len(j)} vs {len(j0)}")
        tsv = os.path.join(d, f"gap_{kind}.tsv")
        tsv0 = os.path.join(d, "gap_plain.tsv")
        C.run(*BASE, "--etrecord", rec, "--tsv", tsv0)
        C.run(*BASE, "--etrecord", p, "--tsv", tsv)
        a = open(tsv0, "rb").read() if os.path.exists(tsv0) else b""
        b = open(tsv, "rb").read() if os.path.exists(tsv) else b""
        C.check(f"ETRecord + {len(extra)} {kind} bytes: the numeric gap TSV is byte for byte "
                "the unpadded file's", a and a == b, f"{len(a)} vs {len(b)} bytes")


def test_npz(d):
    iofile = np.load(os.path.join(REAL, M + "_io.npz"))
    rec = os.path.join(REAL, M + ".etrecord")
    for compressed in (False, True):
        buf = io.BytesIO()
        (np.savez_compressed if compressed else np.savez)(buf, **{"0": iofile["input0"]})
        data = buf.getvalue()
        tag = "deflated" if compressed else "stored"
        plain = write(d, f"in_{tag}.npz", data)
        rc0, err0, j0 = gap_json(d, "in_" + tag, "--etrecord", rec, "--inputs", plain)
        C.check(f"--inputs {tag} .npz: exit 0, no zip warning",
                rc0 == 0 and j0 and not warning_lines(err0), f"rc={rc0} {err0[-300:]}")
        for kind, extra in (("zero", bytes(100)), ("random", np.random.default_rng(7).bytes(100))):
            p = write(d, f"in_{tag}_{kind}.npz", data + extra)
            back = np.load(p)["0"]
            C.check(f"{tag} .npz + 100 {kind} bytes: numpy.load reads the same array "
                    "(the premise)", np.array_equal(back, iofile["input0"]))
            rc, err, j = gap_json(d, f"in_{tag}_{kind}", "--etrecord", rec, "--inputs", p)
            want = (f"etcompare: warning: {p}: 100 bytes after the zip archive's end "
                    f"(byte {len(data)}) are ignored")
            C.check(f"--inputs {tag} .npz + 100 {kind} bytes: exit 0, one warning naming the "
                    "file and the byte", rc == 0 and warning_lines(err) == [want],
                    f"rc={rc} {warning_lines(err)} {err[-300:]}")
            C.check(f"--inputs {tag} .npz + 100 {kind} bytes: the --json report equals the "
                    "unpadded file's", same_report(j, j0, p, plain), f"{len(j)} vs {len(j0)}")
    # --reference-intermediates: an .npz of the AOT's float64 intermediates
    # (the float64 AOT values renamed to debug handles through <m>_nodes.json)
    z = np.load(os.path.join(REAL, M + "_aot_f64.npz"))
    n2h = json.load(open(os.path.join(REAL, M + "_nodes.json")))["node_to_debug_handle"]
    ref = os.path.join(d, "aot_by_handle.npz")
    np.savez(ref, **{str(h): z[name] for name, h in n2h.items()
                     if h is not None and name in z})
    data = open(ref, "rb").read()
    p = write(d, "aot_pad.npz", data + bytes(100))
    rc0, err0, j0 = gap_json(d, "aot", "--etrecord", rec, "--reference-intermediates", ref)
    rc, err, j = gap_json(d, "aot_pad", "--etrecord", rec, "--reference-intermediates", p)
    want = (f"etcompare: warning: {p}: 100 bytes after the zip archive's end (byte "
            f"{len(data)}) are ignored")
    C.check("--reference-intermediates .npz + 100 zero bytes: exit 0, the same report as "
            "the unpadded file, one warning",
            rc == rc0 == 0 and j0 and same_report(j, j0, p, ref) and warning_lines(err) == [want],
            f"rc={rc}/{rc0} {warning_lines(err)} {err[-300:]}")


def test_torchsave(d):
    """--reference-outputs a torch.save zip (the record's reference outputs
    saved again by torch.save) with bytes appended: the same comparison."""
    import pickle
    import torch
    rec = os.path.join(REAL, M + ".etrecord")
    with zipfile.ZipFile(rec) as z:
        outs = pickle.loads(z.read("reference_outputs"))
    plain = os.path.join(d, "ro.pt")
    torch.save(outs, plain)
    data = open(plain, "rb").read()
    padded = write(d, "ro_pad.pt", data + bytes(77))
    tsv = {}
    for p in (plain, padded):
        t = os.path.join(d, os.path.basename(p) + ".tsv")
        rc, _o, err = C.run(*BASE, "--etrecord", rec, "--reference-outputs", p, "--compare",
                            "--tsv", t)
        tsv[p] = (rc, warning_lines(err), open(t, "rb").read() if os.path.exists(t) else b"")
    want = (f"etcompare: warning: {padded}: 77 bytes after the zip archive's end "
            f"(byte {len(data)}) are ignored")
    C.check("--reference-outputs torch.save zip + 77 zero bytes: exit 0, the same TSV as "
            "the unpadded file, one warning",
            data[:2] == b"PK" and tsv[plain][0] == tsv[padded][0] == 0 and tsv[plain][1] == []
            and tsv[padded][1] == [want] and tsv[plain][2] and tsv[plain][2] == tsv[padded][2],
            (tsv[plain][:2], tsv[padded][:2]))


def test_damaged(d):
    rec = os.path.join(REAL, M + ".etrecord")
    data = open(rec, "rb").read()
    at = data.rfind(b"PK\x05\x06")
    n, cd_size, cd_off = struct.unpack_from("<HII", data, at + 10)

    def refused(tag, blob, *words):
        p = write(d, tag + ".etrecord", blob)
        rc, _o, err = C.run(*BASE, "--etrecord", p)
        C.check(f"{tag}: exit 3, the message names the file and says {words}",
                rc == 3 and f"etcompare: error: {p}: " in err and
                all(w in err for w in words) and "Zip archive inconsistent" not in err,
                f"rc={rc} {err[-400:]}")

    b = bytearray(data)
    b[cd_off:cd_off + 4] = b"XXXX"
    refused("cd_signature", bytes(b), f"byte {cd_off}:", "central directory entry 0",
            "write (export) or copy it again")
    b = bytearray(data)
    struct.pack_into("<HH", b, at + 8, n - 1, n - 1)
    refused("cd_count", bytes(b), "follow the %d entries the end record announces" % (n - 1),
            "another entry starts there", "copy it again")
    b = bytearray(data)
    struct.pack_into("<I", b, at + 16, cd_off + 10)
    refused("cd_offset", bytes(b), f"byte {at}:", "puts the central directory at",
            "copy it again")
    # an EOCD in the appended bytes is the archive's end record: its central
    # directory must lie before it, never past the file
    fake = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, 46, 10**9, 0)
    refused("fake_eocd_far", data + bytes(100) + fake, f"byte {len(data) + 100}:",
            "puts the central directory at [1000000000, +46)")
    fake = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, 46, len(data) + 90, 0)
    refused("fake_eocd_overlap", data + bytes(100) + fake,
            f"puts the central directory at [{len(data) + 90}, +46)")
    # the same for an .npz given to --inputs
    npz = io.BytesIO()
    np.savez(npz, **{"0": np.load(os.path.join(REAL, M + "_io.npz"))["input0"]})
    z = bytearray(npz.getvalue())
    zat = z.rfind(b"PK\x05\x06")
    zoff = struct.unpack_from("<I", z, zat + 16)[0]
    z[zoff:zoff + 4] = b"XXXX"
    p = write(d, "bad_cd.npz", bytes(z))
    rc, _o, err = C.run(*BASE, "--etrecord", rec, "--inputs", p)
    C.check("--inputs .npz with a damaged central directory: exit 3 naming the file and "
            "the byte", rc == 3 and f"{p}: byte {zoff}:" in err and "copy it again" in err,
            f"rc={rc} {err[-400:]}")
    # more than 64 KiB appended: no EOCD in reach (Python's zipfile refuses it too)
    p = write(d, "far.etrecord", data + bytes(70000))
    rc, _o, err = C.run(*BASE, "--etrecord", p)
    C.check("ETRecord + 70000 bytes: exit 3, the message says more than 64 KiB may follow",
            rc == 3 and p in err and "more than 64 KiB appended" in err, f"rc={rc} {err[-300:]}")
    C.check("ETRecord + 70000 bytes: Python's zipfile refuses it as well (the premise)",
            not zipfile.is_zipfile(p))


def test_python(d):
    """The Python package reads the padded files too and passes the warning
    on through warnings.warn (as the CLI prints it)."""
    rec = os.path.join(REAL, M + ".etrecord")
    data = open(rec, "rb").read()
    padded = write(d, "py_pad.etrecord", data + bytes(1000))
    z = np.load(os.path.join(REAL, M + "_aot_f64.npz"))
    n2h = json.load(open(os.path.join(REAL, M + "_nodes.json")))["node_to_debug_handle"]
    ref = os.path.join(d, "py_ref.npz")
    np.savez(ref, **{str(h): z[name] for name, h in n2h.items()
                     if h is not None and name in z})
    ref_data = open(ref, "rb").read()
    ref_pad = write(d, "py_ref_pad.npz", ref_data + bytes(100))

    def gap(etrecord, reference):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            insp = E.Inspector(etdump_path=BASE[1], debug_buffer_path=BASE[3],
                               etrecord=etrecord)
            df = insp.calculate_numeric_gap(distance="SNR", reference=reference)
        return [tuple(r.aot_ops) + (r.gap[0],) for r in df.itertuples()], \
            [str(x.message) for x in w if "after the zip archive's end" in str(x.message)]

    rows0, w0 = gap(rec, ref)
    rows, w = gap(padded, ref_pad)
    C.check("Python: the padded ETRecord and .npz give the unpadded files' numeric gap",
            rows0 and rows == rows0, f"{rows[:2]} vs {rows0[:2]}")
    C.check("Python: no zip warning for the unpadded files", w0 == [], w0)
    C.check("Python: warnings.warn names each padded file and its archive's end",
            w == [f"{padded}: 1000 bytes after the zip archive's end (byte {len(data)}) are "
                  "ignored",
                  f"{ref_pad}: 100 bytes after the zip archive's end (byte {len(ref_data)}) "
                  "are ignored"], w)


if __name__ == "__main__":
    E = T.setup()  # first: it may re-run this script under the ASan runtime
    C.run_cases("zip-trailing", test_etrecord, test_npz, test_torchsave, test_damaged,
                test_python)
