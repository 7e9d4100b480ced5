#!/usr/bin/python3
"""pickle.dumps references end to end: ETRecords as ExecuTorch wrote them
from Nov 2023 (#1243) until v1.3.0, whose reference_outputs and
representative_inputs are pickle.dumps bytes, at protocols 2 to 5.

The files are tests/data/pickle_refs/, written by tests/pickle_refs_gen.py
with the real PyTorch (values in its MANIFEST.json). Checks:
  - --show-references prints every tensor torch saved (path, dtype, shape,
    values) and the scalars of representative_inputs, with no warning;
  - the accuracy comparison of an ETDump against those references gives the
    metrics computed here in float64 from torch's values;
  - hostile streams (a GLOBAL outside the whitelist in the pickle or in the
    embedded legacy torch.save stream, truncation, a wrong element count, a
    storage key nobody names, complex tensors) exit 3 with the file, the byte
    offset and the reason, and nothing is ever executed.
"""
import json
import os
import re
import pickle
import struct
import sys
import tempfile

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
import etrecord_gen as G  # noqa: E402
from test_accuracy import Dump, acc_rows, check, check_metrics, load_json, run  # noqa: E402
import test_accuracy  # noqa: E402

DATA = os.path.join(SRC, "tests", "data", "pickle_refs")
with open(os.path.join(DATA, "MANIFEST.json")) as f:
    MANIFEST = json.load(f)
PROTOCOLS = (2, 3, 4, 5)


def fmt(v, dtype):
    """A value as --show-references prints it (%.6g; integers as integers, issue
    22; bool as True/False)."""
    if isinstance(v, str):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[v]
    if dtype == "bool":
        return "True" if v else "False"
    if dtype in ("int64", "int32", "int16", "int8", "uint8", "uint16", "uint32"):
        return str(int(v))
    return "%.6g" % v


def show_references(d):
    for p in PROTOCOLS:
        rec = os.path.join(DATA, f"refs_p{p}.etrecord")
        rc, out, err = run("--etrecord", rec, "--show-references", "--max-values", "64")
        check(f"show p{p}: exit 0, no warning", rc == 0 and "warning" not in err, err[:300])
        lines = {ln.split(": ", 1)[0].strip(): ln.split(": ", 1)[1]
                 for ln in out.splitlines() if ln.startswith("  ") and ": " in ln}
        # an object the pickle shares (memo) is printed once as "#k ..." and
        # then as "<same as #k>": both stand for the same tensor here
        labelled = {}
        for k, v in list(lines.items()):
            m = re.match(r"#(\d+) (.*)", v)
            if m:
                labelled[m.group(1)] = lines[k] = m.group(2)
        for k, v in list(lines.items()):
            m = re.fullmatch(r"<same as #(\d+)>", v)
            if m and m.group(1) in labelled:
                lines[k] = labelled[m.group(1)]
        bad = []
        for part in ("refs", "inputs"):
            for t in MANIFEST[f"{part}_p{p}.pkl"]["tensors"]:
                got = lines.get(t["path"], "")
                head = f"Tensor {t['dtype']} [{', '.join(map(str, t['shape']))}]"
                if not got.startswith(head):
                    bad.append(f"{t['path']}: {got!r} lacks {head!r}")
                    continue
                if t["values"]:
                    want = "[" + ", ".join(fmt(v, t["dtype"]) for v in t["values"]) + "]"
                    if not got.endswith(want):
                        bad.append(f"{t['path']}: {got!r} does not end with {want!r}")
                elif "(empty)" not in got:
                    bad.append(f"{t['path']}: {got!r} not empty")
                if not t["contiguous"] and t["values"] and "(strided view)" not in got:
                    bad.append(f"{t['path']}: not marked as a strided view")
        n = sum(len(MANIFEST[f"{k}_p{p}.pkl"]["tensors"]) for k in ("refs", "inputs"))
        check(f"show p{p}: {n} tensors with dtype, shape and values as torch saved them",
              not bad, "; ".join(bad[:4]))
        check(f"show p{p}: representative_inputs scalars",
              lines.get("[1]") == "int 3" and lines.get("[2]") == "float 2.5" and
              lines.get("[3]") == "bool True", str({k: lines.get(k) for k in ("[1]", "[2]", "[3]")}))


def accuracy(d):
    refs = [MANIFEST[f"refs_p{PROTOCOLS[0]}.pkl"]["tensors"][i] for i in (0, 1)]
    check("accuracy: forward[0][0] and forward[1][0] are strided float32 views",
          [r["path"] for r in refs] == ["forward[0][0]", "forward[1][0]"] and
          all(not r["contiguous"] and r["dtype"] == "float32" for r in refs))
    f32 = test_accuracy.f32
    errs = ((1e-5, -2e-5, 3e-5, 0.0, -1e-5, 5e-6), (-4e-5, 1e-5, 0.0, 2e-5, 1e-5, -3e-5))
    acts = [[f32(x + e) for x, e in zip(r["values"], es)] for r, es in zip(refs, errs)]
    dump = Dump()
    for a in acts:
        dump.run([dump.tensor("FLOAT", a, [2, 3])])
    etdp, dbg = dump.write(d, "pickle_refs")
    for p in PROTOCOLS:
        rec = os.path.join(DATA, f"refs_p{p}.etrecord")
        js = os.path.join(d, f"p{p}.json")
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--min-snr", "40", "--json", js)
        check(f"accuracy p{p}: exit 0, 2 of 2 outputs pass",
              rc == 0 and "2 of 2 outputs pass" in err, err[-400:])
        rows = acc_rows(load_json(js))
        check(f"accuracy p{p}: two rows", len(rows) == 2, json.dumps(rows)[:300])
        for i, row in enumerate(rows[:2]):
            check_metrics(f"accuracy p{p} row {i}", row, refs[i]["values"], acts[i])
            check(f"accuracy p{p} row {i}: reference shape/dtype",
                  row.get("reference_shape") == "[2, 3]" and
                  row.get("reference_dtype") == "float32", json.dumps(row)[:300])
    # the bare pickle.dumps file as --reference-outputs gives the same rows
    for p in (2, 5):
        js = os.path.join(d, f"bare{p}.json")
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                           os.path.join(DATA, f"refs_p{p}.pkl"), "--min-snr", "40", "--json", js)
        rows = acc_rows(load_json(js)) if rc == 0 else []
        check(f"--reference-outputs refs_p{p}.pkl: exit 0, two rows",
              rc == 0 and len(rows) == 2, err[-300:])
        for i, row in enumerate(rows[:2]):
            check_metrics(f"--reference-outputs refs_p{p}.pkl row {i}", row, refs[i]["values"],
                          acts[i])


# --- hostile streams ---------------------------------------------------------------

def etrecord(d, name, refs):
    path = os.path.join(d, name + ".etrecord")
    G.write_etrecord(path, siblings=False,
                     programs={"forward": G.program([G.node("add", "aten.add.Tensor",
                                                            handle=1)])},
                     debug_handle_map={"forward": {"0": [1]}}, reference_outputs=refs)
    return path


def expect_bad(d, name, refs, *needles):
    rec = etrecord(d, name, refs)
    rc, out, err = run("--etrecord", rec, "--show-references")
    want = [f"{rec}:reference_outputs: byte "] + list(needles)
    missing = [n for n in want if n not in err]
    check(f"bad {name}: exit 3, message names file, byte offset, reason",
          rc == 3 and not missing and out == "", f"rc {rc} missing {missing}: {err.strip()}")
    return err


def first_stream(data):
    """(start, length) of the first legacy stream inside a BINBYTES."""
    s = data.index(b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46")
    assert data[s - 5:s - 4] == b"B"
    return s, struct.unpack("<I", data[s - 4:s])[0]


def hostile(d):
    marker = os.path.join(d, "executed")
    # a GLOBAL outside the whitelist, both spellings, never executed
    cmd = f"touch {marker}".encode()
    p2 = b"\x80\x02cos\nsystem\nX" + struct.pack("<I", len(cmd)) + cmd + b"\x85R."
    expect_bad(d, "global_os_system", p2, "byte 2: forbidden GLOBAL os.system",
               "nothing was executed")
    p4 = (b"\x80\x04\x8c\x08builtins\x94\x8c\x04exec\x94\x93\x94\x8c" + bytes([len(cmd)]) +
          cmd + b"\x94\x85\x94R\x94.")
    expect_bad(d, "stack_global_exec", p4, "byte 20: pickle byte 20: forbidden GLOBAL builtins.exec")
    good = open(os.path.join(DATA, "refs_p4.pkl"), "rb").read()
    s, n = first_stream(good)
    g = good.index(b"ctorch\nFloatStorage\n", s)
    evil = good[:g] + b"cos\nsystem\n" + b"\n" * 9 + good[g + 20:]
    expect_bad(d, "inner_global", evil,
               f"pickle byte {s}: torch.storage._load_from_bytes stream byte {g - s}: "
               "forbidden GLOBAL os.system")
    check("hostile: nothing was executed", not os.path.exists(marker))
    # truncated: the outer pickle, and the legacy stream inside it
    expect_bad(d, "truncated", good[:s + 50], "byte 2: pickle byte 2: FRAME needs")
    p3 = open(os.path.join(DATA, "refs_p3.pkl"), "rb").read()
    s3, n3 = first_stream(p3)
    expect_bad(d, "truncated_p3", p3[:s3 + 50], f"pickle byte {s3 - 5}: BINBYTES needs {n3}")
    cut = p3[:s3 - 4] + struct.pack("<I", n3 - 10) + p3[s3:s3 + n3 - 10] + p3[s3 + n3:]
    expect_bad(d, "truncated_storage", cut, "needs 96 bytes (24 float32 elements)",
               "the stream ends after 86")
    # element counts: one more than the persistent id says, and an absurd one
    count_at = s + n - 96 - 8
    assert struct.unpack("<Q", good[count_at:count_at + 8])[0] == 24
    for name, value in (("count_25", 25), ("count_huge", 2**64 - 1)):
        bad = good[:count_at] + struct.pack("<Q", value) + good[count_at + 8:]
        expect_bad(d, name, bad,
                   f"stream byte {count_at - s}: storage '",
                   f"has {value} elements here but its persistent id at byte")
    # a storage key that no persistent id names
    keys = good.index(b"]q\x00X", s)
    k = keys + 8
    bad = good[:k] + (b"8" if good[k:k + 1] == b"9" else b"9") + good[k + 1:]
    expect_bad(d, "missing_key", bad, "is listed but no persistent id names it")


def persid_claims(d):
    """The persistent id's element count is checked before any byte is used."""
    good = open(os.path.join(DATA, "refs_p4.pkl"), "rb").read()
    s, n = first_stream(good)
    pid = good.index(b"K\x18N", s)  # BININT1 24, NONE: numel and view_metadata
    bad = good[:pid] + b"K\x19N" + good[pid + 3:]
    expect_bad(d, "persid_numel", bad, f"stream byte {n - 104}: storage '",
               "has 24 elements here but its persistent id at byte")
    cplx = open(os.path.join(DATA, "complex_p4.etrecord"), "rb").read()
    path = os.path.join(d, "complex.etrecord")
    with open(path, "wb") as f:
        f.write(cplx)
    rc, out, err = run("--etrecord", path, "--show-references")
    check("complex64 reference: exit 3, says complex is not supported",
          rc == 3 and "torch.ComplexFloatStorage" in err and "complex tensors are not supported"
          in err, err.strip())


def legacy_stream(obj=None, keys=("k",), data=((2, b"\0\0\x80?\0\0\0@"),), version=1001,
                  little=True, magic=0x1950A86A20F9469CFC6C, view=b"N"):
    """A legacy torch.save stream by hand: magic, version, sys info, object, keys, storages."""
    if obj is None:
        obj = (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x00k"
               b"X\x03\x00\x00\x00cpuK\x02" + view + b"tQ.")
    out = pickle.dumps(magic, protocol=2) + pickle.dumps(version, protocol=2)
    out += pickle.dumps({"protocol_version": 1001, "little_endian": little,
                         "type_sizes": {"short": 2, "int": 4, "long": 8}}, protocol=2)
    out += obj + pickle.dumps(list(keys), protocol=2)
    for count, raw in data:
        out += struct.pack("<Q", count) + raw
    return out


def load_from_bytes(stream):
    """pickle.dumps-style protocol 3: _rebuild_tensor_v2(_load_from_bytes(stream), 0, (2,), (1,), ...)."""
    return (b"\x80\x03ctorch._utils\n_rebuild_tensor_v2\n(ctorch.storage\n_load_from_bytes\nB" +
            struct.pack("<I", len(stream)) + stream +
            b"\x85RK\x00K\x02\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR\x85.")


def legacy_variants(d):
    """Each rule of the legacy stream, one broken at a time."""
    rec = etrecord(d, "legacy_ok", load_from_bytes(legacy_stream()))
    rc, out, err = run("--etrecord", rec, "--show-references")
    check("legacy stream by hand: read", rc == 0 and "[0]: Tensor float32 [2]" in out and
          "[1, 2]" in out, out + err)
    at = 2 + len("ctorch._utils\n_rebuild_tensor_v2\n(ctorch.storage\n_load_from_bytes\nB") + 4
    base = f"pickle byte {at}: torch.storage._load_from_bytes stream byte "
    expect_bad(d, "legacy_magic", load_from_bytes(legacy_stream(magic=12345)),
               base + "0: not a legacy torch.save stream: the first pickle is a int")
    expect_bad(d, "legacy_twice", load_from_bytes(legacy_stream(keys=("k", "k"))),
               "storage key 'k' is listed twice")
    expect_bad(d, "legacy_unlisted", load_from_bytes(legacy_stream(keys=())),
               "storage 'k' is not in the list of storage keys at byte")
    expect_bad(d, "legacy_trailing",
               load_from_bytes(legacy_stream(data=((2, b"\0\0\x80?\0\0\0@xyz"),))),
               "3 bytes after the last storage")
    expect_bad(d, "legacy_no_count", load_from_bytes(legacy_stream(data=((2, b""),))[:-8]),
               "the stream ends before the element count of storage 'k' (0 of 8 bytes left)")
    nested = (b"\x80\x02ctorch.storage\n_load_from_bytes\nc_codecs\nencode\nX\x01\x00\x00\x00a"
              b"X\x06\x00\x00\x00latin1\x86R\x85R.")
    expect_bad(d, "legacy_nested", load_from_bytes(legacy_stream(obj=nested, keys=(), data=())),
               "torch.storage._load_from_bytes inside a legacy torch.save stream")
    # declared unsupported: a warning, the record is still read, no references
    for name, stream, text in (
            ("legacy_version", legacy_stream(version=1000),
             "legacy torch.save protocol version 1000 (only 1001 is read)"),
            ("legacy_big_endian", legacy_stream(little=False), "saved on a big-endian machine"),
            ("legacy_view", legacy_stream(view=b"X\x01\x00\x00\x00kK\x00K\x08\x87"),
             "storage views (view_metadata tuple")):
        rec = etrecord(d, name, load_from_bytes(stream))
        rc, out, err = run("--etrecord", rec, "--show-references")
        check(f"{name}: a warning naming it, no references, exit 0",
              rc == 0 and text in err and "etcompare: warning:" in err and
              "reference_outputs: none in this ETRecord" in out, err.strip())


def main():
    with tempfile.TemporaryDirectory() as d:
        for fn in (show_references, accuracy, hostile, persid_claims, legacy_variants):
            try:
                fn(d)
            except Exception as e:  # a crash of the test is a failed check, not a skip
                check(f"{fn.__name__} ran", False, repr(e))
    print(f"{test_accuracy.passed} passed, {test_accuracy.failed} failed")
    sys.exit(1 if test_accuracy.failed else 0)


if __name__ == "__main__":
    main()
