"""Accuracy comparison and CI gate, end to end (issue 4): flatc-built ETDumps
with program outputs, a debug buffer written with struct, reference outputs
from a generated ETRecord, a standalone torch.save file or an .npz, and the
table, --json (validated against the schema), --junit and --plot outputs.

Every metric is recomputed here in float64 (math.fsum) from the exact
float32 values written, and compared with the --json numbers:
  MSE = mean(d^2), SNR = 10 log10(mean(r^2) / mean(d^2)), d = a - r,
  cosine = sum(r a) / (|r| |a|), L1 = mean|d|, max abs = max|d| (first index),
  max rel = max |d|/|r| over r != 0.
"""
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # import the helpers without writing into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The shared helpers (tests/common.py); other tests import them from here too.
import common  # noqa: E402
from common import (ETC, FBS, FLATC, OUT_CHAIN, REPORT_SCHEMA, SRC, check,  # noqa: E402,F401
                    load_json)
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import etrecord_gen as G  # noqa: E402
import make_npz as NPZ  # noqa: E402

REL = 1e-12


def __getattr__(name):
    """test_accuracy.passed / .failed: the live counters of common.check()."""
    if name in ("passed", "failed"):
        return getattr(common, name)
    raise AttributeError(name)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def close(x, y, rel=REL):
    if isinstance(x, str) or isinstance(y, str):
        return x == y
    if x is None or y is None:
        return False
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= rel * max(abs(x), abs(y)) or x == y


# --- independent float64 metrics ------------------------------------------------

def metrics(r, a):
    n = len(r)
    d = [x - y for x, y in zip(a, r)]  # exact for float32 inputs
    ee = math.fsum(x * x for x in d)
    rr = math.fsum(x * x for x in r)
    aa = math.fsum(x * x for x in a)
    ra = math.fsum(x * y for x, y in zip(r, a))
    mabs = max(abs(x) for x in d)
    rels = [abs(x) / abs(y) for x, y in zip(d, r) if y != 0]
    return {
        "count": n,
        "mse": ee / n,
        "snr": math.inf if ee == 0 else 10 * math.log10((rr / n) / (ee / n)),
        "cosine": ra / (math.sqrt(rr) * math.sqrt(aa)),
        "l1": math.fsum(abs(x) for x in d) / n,
        "max_abs": mabs,
        "max_abs_index": [abs(x) for x in d].index(mabs),
        "max_rel": max(rels) if rels else 0.0,
        "mismatch_count": sum(1 for x in d if x != 0),
    }


def check_metrics(name, row, r, a, keys=("mse", "snr", "cosine", "l1", "max_abs", "max_rel"),
                  rel=REL):
    m = (row or {}).get("metrics")
    if not m:
        check(f"{name}: metrics present", False, json.dumps(row))
        return
    exp = metrics(r, a)
    bad = []
    for k in keys:
        got = m.get(k)
        got_v = math.inf if got == "inf" else got
        if not close(got_v, exp[k], rel):
            bad.append(f"{k}: got {got!r} expected {exp[k]!r}")
    for k in ("count", "max_abs_index", "mismatch_count"):
        if m.get(k) != exp[k]:
            bad.append(f"{k}: got {m.get(k)!r} expected {exp[k]!r}")
    check(f"{name}: metrics match float64", not bad, "; ".join(bad))


# --- ETDump + debug buffer --------------------------------------------------------

SCALAR = {"FLOAT": "<f", "DOUBLE": "<d", "HALF": "<e", "LONG": "<q", "INT": "<i",
          "BOOL": "<?", "BYTE": "<B"}


class Dump:
    """Runs of program outputs; tensors' bytes go to one debug buffer."""

    def __init__(self):
        self.buf = bytearray()
        self.runs = []

    def tensor(self, dtype, values, shape=None):
        shape = list(shape if shape is not None else [len(values)])
        while len(self.buf) % 16:
            self.buf.append(0)
        off = len(self.buf)
        code = SCALAR[dtype]
        for v in values:
            self.buf += struct.pack(code, v)
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
        return {"scalar_type": dtype, "sizes": shape, "strides": strides, "offset": off}

    def run(self, outputs, index=None, name="Execute"):
        """outputs: tensor dicts (Tensor), lists of them (TensorList), or
        ("Int", v) / ("Double", v) scalars."""
        events = [{"profile_event": {"name": "native_call_add.out", "chain_index": 0,
                                     "instruction_id": 0, "start_time": 100,
                                     "end_time": 200}}]
        for o in outputs:
            if isinstance(o, list):
                entry = {"val": "TensorList", "tensor_list": {"tensors": o}}
            elif isinstance(o, tuple):
                kind, v = o
                key = {"Int": ("int_value", "int_val"),
                       "Double": ("double_value", "double_val")}[kind]
                entry = {"val": kind, key[0]: {key[1]: v}}
            else:
                entry = {"val": "Tensor", "tensor": o}
            entry["output"] = {"bool_val": True}
            events.append({"debug_event": {"chain_index": OUT_CHAIN, "instruction_id": 0,
                                           "debug_entry": entry}})
        events.append({"profile_event": {"name": "Method::execute", "chain_index": -1,
                                         "instruction_id": 0, "start_time": 50,
                                         "end_time": 300}})
        rd = {"name": name, "events": events}
        if index is not None:
            rd["bundled_input_index"] = index
        self.runs.append(rd)

    def write(self, d, stem):
        os.makedirs(os.path.join(d, "flatc"), exist_ok=True)
        src = os.path.join(d, "flatc", stem + ".json")  # not to clash with --json outputs
        with open(src, "w") as f:
            json.dump({"version": 0, "run_data": self.runs}, f)
        subprocess.run([FLATC, "-b", "--size-prefixed", "-o", d, FBS, src], check=True,
                       capture_output=True)
        dbg = os.path.join(d, stem + "_debug.bin")
        with open(dbg, "wb") as f:
            f.write(bytes(self.buf) + b"\0" * 16)
        return os.path.join(d, stem + ".etdp"), dbg


def etrecord(d, stem, refs):
    """An ETRecord with one program and reference_outputs {"forward": refs}."""
    path = os.path.join(d, stem + ".etrecord")
    G.write_etrecord(path,
                     programs={"forward": G.program([G.node("add", "aten.add.Tensor",
                                                            handle=1)])},
                     debug_handle_map={"forward": {"0": [1]}},
                     reference_outputs={"forward": refs})
    return path


def T(values, shape=None, dtype="float32"):
    return G.Tensor(dtype, values, shape=shape)


# None: options as written; "-" or "_": every long option respelled with it (issue 13:
# both spellings are accepted, and main() runs every case with each)
SPELLING = None


def respell(a):
    if SPELLING is None or not a.startswith("--"):
        return a
    name, eq, value = a.partition("=")
    return "--" + name[2:].replace("_" if SPELLING == "-" else "-", SPELLING) + eq + value


def run(*args):
    p = subprocess.run([ETC, *map(respell, args)], capture_output=True)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def acc_rows(rep):
    return ((rep or {}).get("accuracy") or {}).get("rows") or []


VALIDATOR = None


def validate(name, rep):
    global VALIDATOR
    try:
        import jsonschema
    except ImportError:
        check(f"{name}: jsonschema importable", False)
        return
    if VALIDATOR is None:
        with open(REPORT_SCHEMA) as f:
            schema = json.load(f)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        VALIDATOR = cls(schema)
    errs = sorted(VALIDATOR.iter_errors(rep), key=lambda e: list(e.path))
    check(f"{name}: JSON validates against the schema", not errs,
          "; ".join(f"{list(e.path)}: {e.message[:200]}" for e in errs[:3]))


# --- PNG -------------------------------------------------------------------------

def png_info(path):
    """(width, height, bit depth, colour type, distinct pixel count or None)."""
    png = common.png_read(path)
    if not png:
        return None
    (w, h, depth, ctype, _, _, _), rows = png
    distinct = None if rows is None else len({px for row in rows for px in row})
    return w, h, depth, ctype, distinct


# --- the cases -------------------------------------------------------------------

R0 = [f32(x) for x in (0.5, -1.25, 3.0, 0.125, 2.75, -0.375)]
R1 = [f32(x) for x in (1.5, 2.0, -0.75, 4.0, -3.25, 0.625)]
# actual outputs: small, known errors (exact float32 values)
A0 = [f32(x + e) for x, e in zip(R0, (1e-5, -2e-5, 3e-5, 0.0, -1e-5, 5e-6))]
A1 = [f32(x + e) for x, e in zip(R1, (-4e-5, 1e-5, 0.0, 2e-5, 1e-5, -3e-5))]


def two_run_fixture(d, stem, a0, a1, shape=(2, 3)):
    dump = Dump()
    dump.run([dump.tensor("FLOAT", a0, shape)])
    dump.run([dump.tensor("FLOAT", a1, shape)])
    etdp, dbg = dump.write(d, stem)
    rec = etrecord(d, stem, [[T(R0, list(shape))], [T(R1, list(shape))]])
    return etdp, dbg, rec


def case_pass(d):
    etdp, dbg, rec = two_run_fixture(d, "pass", A0, A1)
    js = os.path.join(d, "pass.json")
    ju = os.path.join(d, "pass.xml")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--min-snr", "60", "--json", js, "--junit", ju)
    check("1 pass: exit 0", rc == 0, err)
    check("1 pass: stderr summary", "accuracy: 2 of 2 outputs pass" in err, err)
    # issue 20: without a bundled_input_index the default pairs by content
    check("1 pass: table says pairing by content",
          "pairing by content" in out and "no bundled_input_index" in out and
          "references by run: 0, 1" in out, out[-600:])
    check("1 pass: table has two pass rows", out.count(" pass ") >= 2, out[-800:])
    rep = load_json(js)
    acc = rep.get("accuracy") or {}
    check("1 pass: json pair_by content", acc.get("pair_by") == "content",
          json.dumps(acc)[:300])
    check("1 pass: json outputs 2 failures 0",
          acc.get("outputs") == 2 and acc.get("failures") == 0)
    rows = acc_rows(rep)
    check("1 pass: two rows, references 0 and 1, status pass",
          [(r.get("reference"), r.get("status")) for r in rows] == [(0, "pass"), (1, "pass")],
          json.dumps(rows)[:400])
    check("1 pass: runs are run_data 0 and 1", [r.get("run") for r in rows] == [0, 1])
    if len(rows) == 2:
        check_metrics("1 pass row 0", rows[0], R0, A0)
        check_metrics("1 pass row 1", rows[1], R1, A1)
        check("1 pass: shape/dtype strings",
              rows[0].get("shape") == "[2, 3]" and rows[0].get("dtype") == "float32" and
              rows[0].get("reference_shape") == "[2, 3]" and
              rows[0].get("reference_dtype") == "float32", json.dumps(rows[0])[:300])
    exp_worst = 0 if metrics(R0, A0)["snr"] < metrics(R1, A1)["snr"] else 1
    check("1 pass: worst is the lowest SNR row", acc.get("worst") == exp_worst,
          f"{acc.get('worst')} vs {exp_worst}")
    validate("1 pass", rep)
    try:
        root = ET.parse(ju).getroot()
        suite = root.find("testsuite") if root.tag == "testsuites" else root
        check("1 pass: junit 2 tests 0 failures",
              suite.get("tests") == "2" and suite.get("failures") == "0" and
              not suite.findall(".//failure"), ET.tostring(root)[:300])
    except (OSError, ET.ParseError) as e:
        check("1 pass: junit parses", False, str(e))
    # --compare_results alias and --compare with no gate: exit 0
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--compare_results", "--no-table")
    check("1 pass: --compare_results alias compares",
          rc == 0 and "2 outputs compared, no gate" in err,
          err)
    return etdp, dbg, rec


def case_fail(d):
    bad = list(A1)
    bad[4] = f32(bad[4] + 0.5)  # SNR of output 1 drops far below 60 dB
    etdp, dbg, rec = two_run_fixture(d, "fail", A0, bad)
    js = os.path.join(d, "fail.json")
    ju = os.path.join(d, "fail.xml")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--min-snr", "60", "--json", js, "--junit", ju)
    check("2 fail: exit 1", rc == 1, err)
    check("2 fail: stderr says gate FAILED, 1 of 2",
          "accuracy gate FAILED: 1 of 2 outputs fail" in err, err)
    check("2 fail: stderr names the worst output (run 1 output 0)",
          "worst: Execute run 1 output 0" in err and "SNR" in err, err)
    exp = metrics(R1, bad)
    rows = acc_rows(load_json(js))
    check("2 fail: json statuses pass, FAIL",
          [r.get("status") for r in rows] == ["pass", "FAIL"], json.dumps(rows)[:300])
    if len(rows) == 2:
        check_metrics("2 fail row 1", rows[1], R1, bad)
        check("2 fail: reason gives the SNR and the threshold",
              "below 60 dB" in rows[1].get("reason", "") and
              "%.4g" % exp["snr"] in rows[1].get("reason", ""), rows[1].get("reason"))
    try:
        root = ET.parse(ju).getroot()
        suite = root.find("testsuite") if root.tag == "testsuites" else root
        check("2 fail: junit testsuite tests=2 failures=1",
              suite.get("tests") == "2" and suite.get("failures") == "1",
              str(suite.attrib))
        cases = suite.findall("testcase")
        check("2 fail: junit one testcase per output", len(cases) == 2)
        failing = [c for c in cases if c.find("failure") is not None]
        check("2 fail: the failing testcase is run 1 output 0",
              len(failing) == 1 and failing[0].get("classname") == "Execute.run1" and
              failing[0].get("name") == "output 0",
              str([c.attrib for c in failing]))
        if failing:
            fe = failing[0].find("failure")
            check("2 fail: <failure> carries the reason",
                  fe.get("type") == "FAIL" and "below 60 dB" in (fe.get("message") or ""),
                  str(fe.attrib))
    except (OSError, ET.ParseError) as e:
        check("2 fail: junit parses", False, str(e))
    # the other gates on the same data
    for flag, value, ok in (("--max-mse", repr(exp["mse"] * 1.01), True),
                            ("--max-mse", repr(exp["mse"] * 0.99), False),
                            ("--min-cosine", "0.9999999", False),
                            ("--max-abs", "0.6", True),
                            ("--max-abs", "0.4", False)):
        rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                         "--no-table", flag, value)
        check(f"2 fail: {flag} {value} -> exit {0 if ok else 1}", rc == (0 if ok else 1), err)


def case_json_schema(d, etdp, dbg, rec):
    js = os.path.join(d, "schema.json")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table",
                     "--compare", "--json", js)
    rep = load_json(js)
    check("3 json: exit 0", rc == 0, err)
    validate("3 json", rep)
    rows = acc_rows(rep)
    keys = ("mse", "snr", "cosine", "l1", "max_abs", "max_rel")
    if len(rows) == 2:
        check_metrics("3 json row 0", rows[0], R0, A0, keys)
        check_metrics("3 json row 1", rows[1], R1, A1, keys)
        m = rows[0]["metrics"]
        check("3 json: identical false, exact false, nan_count 0",
              m.get("identical") is False and m.get("exact") is False and
              m.get("nan_count") == 0, json.dumps(m))
    else:
        check("3 json: two rows", False, json.dumps(rep.get("accuracy"))[:300])
    # no comparison: accuracy null and still valid
    js2 = os.path.join(d, "noacc.json")
    run("--etdump", etdp, "--debug_buffer", dbg, "--no-table", "--json", js2)
    rep2 = load_json(js2)
    check("3 json: without --compare accuracy is null",
          "accuracy" in rep2 and rep2["accuracy"] is None)
    validate("3 json (no comparison)", rep2)


def case_near_identical(d):
    n = 3000  # over several BLAS chunks
    r = [f32(1.0 + (k % 997) / 1000.0) * (-1 if k % 3 == 0 else 1) for k in range(n)]
    a = [f32(x * (1 + 1e-7)) for x in r]
    check("4 near: every float32 value differs", all(x != y for x, y in zip(r, a)))
    dump = Dump()
    dump.run([dump.tensor("FLOAT", a, [n]), dump.tensor("FLOAT", r, [n])])
    etdp, dbg = dump.write(d, "near")
    rec = etrecord(d, "near", [[T(r), T(r)]])
    js = os.path.join(d, "near.json")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--json", js, "--min-snr", "100", "--min-cosine", "0.9999999")
    check("4 near: exit 0", rc == 0, err)
    rows = acc_rows(load_json(js))
    exp = metrics(r, a)
    check("4 near: expected SNR above 130 dB", 130 < exp["snr"] < 150, str(exp["snr"]))
    if len(rows) == 2:
        snr = rows[0]["metrics"].get("snr") if rows[0].get("metrics") else None
        check("4 near: finite SNR within 0.01 dB of float64",
              isinstance(snr, float) and abs(snr - exp["snr"]) < 0.01,
              f"{snr} vs {exp['snr']}")
        check_metrics("4 near row 0", rows[0], r, a, ("mse", "l1", "max_abs", "max_rel"))
        check_metrics("4 near row 0 (snr, 1e-9)", rows[0], r, a, ("snr", "cosine"), 1e-9)
        m = rows[1].get("metrics") or {}
        check("4 identical: SNR is the string inf", m.get("snr") == "inf", json.dumps(m))
        check("4 identical: cosine exactly 1, mse/max_abs 0, identical true",
              m.get("cosine") == 1 and m.get("mse") == 0 and m.get("max_abs") == 0 and
              m.get("identical") is True and m.get("mismatch_count") == 0, json.dumps(m))
        check("4 identical: verdict 'pass (identical)' in the table",
              out.count("pass (identical)") == 1, out[-800:])
    else:
        check("4 near: two rows", False, json.dumps(rows)[:300])


def case_pair_by_index(d):
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R1, [6])], index=1)  # run 0 ran bundled input 1
    dump.run([dump.tensor("FLOAT", R0, [6])], index=0)
    etdp, dbg = dump.write(d, "index")
    rec = etrecord(d, "index", [[T(R0)], [T(R1)]])
    js = os.path.join(d, "index.json")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--json", js, "--min-snr", "60")
    acc = load_json(js).get("accuracy") or {}
    rows = acc.get("rows") or []
    check("5 index: exit 0", rc == 0, err)
    check("5 index: pair_by index", acc.get("pair_by") == "index", str(acc.get("pair_by")))
    check("5 index: run 0 -> reference 1, run 1 -> reference 0",
          sorted((r.get("etdump_run"), r.get("reference")) for r in rows) == [(0, 1), (1, 0)],
          json.dumps(rows)[:400])
    check("5 index: both identical",
          all((r.get("metrics") or {}).get("identical") for r in rows) and len(rows) == 2)
    check("5 index: table says bundled_input_index", "bundled_input_index" in out, out[-400:])
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--json", js, "--min-snr", "60", "--pair-by", "order")
    acc = load_json(js).get("accuracy") or {}
    rows = acc.get("rows") or []
    check("5 order forced: exit 1 (wrong pairs)", rc == 1, err)
    check("5 order forced: pair_by order, note says forced",
          acc.get("pair_by") == "order" and "--pair-by" in acc.get("note", ""),
          json.dumps(acc)[:300])
    check("5 order forced: run 0 -> reference 0, run 1 -> reference 1",
          sorted((r.get("etdump_run"), r.get("reference")) for r in rows) == [(0, 0), (1, 1)],
          json.dumps(rows)[:400])
    if len(rows) == 2:
        byrun = {r["etdump_run"]: r for r in rows}
        check_metrics("5 order forced run 0", byrun.get(0), R0, R1)
    # a run without an index when pairing by index: reported, not skipped
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [6])], index=0)
    dump.run([dump.tensor("FLOAT", R1, [6])])
    etdp2, dbg2 = dump.write(d, "index_missing")
    rc, out, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--etrecord", rec,
                       "--compare", "--json", js)
    rows = acc_rows(load_json(js))
    st = sorted(((r.get("etdump_run") if r.get("etdump_run") is not None else 99), r.get("status"),
                 r.get("reason")) for r in rows)
    check("5 index: run without index is a 'missing reference' row, exit 1",
          rc == 1 and len(st) == 3 and st[0][1] == "pass" and
          st[1][1] == "missing reference" and "no bundled_input_index" in st[1][2],
          f"rc={rc} {st}")
    check("5 index: the reference no run used is a 'missing output' row",
          len(st) == 3 and st[2][1] == "missing output" and
          "no run of block \"Execute\" has bundled_input_index 1" in st[2][2], f"{st}")
    # index beyond the references
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [6])], index=5)
    etdp3, dbg3 = dump.write(d, "index_far")
    rc, out, err = run("--etdump", etdp3, "--debug_buffer", dbg3, "--etrecord", rec,
                       "--compare", "--json", js)
    rows = acc_rows(load_json(js))
    check("5 index: index 5 of 2 references is a missing reference row",
          rc == 1 and len(rows) == 3 and rows[0].get("status") == "missing reference" and
          "no reference set 5 (there are 2)" in rows[0].get("reason", ""), json.dumps(rows))
    check("5 index: references 0 and 1, unused, are 'missing output' rows",
          [(r.get("run"), r.get("reference"), r.get("status")) for r in rows[1:]] ==
          [(None, 0, "missing output"), (None, 1, "missing output")], json.dumps(rows))


def case_count_mismatch(d):
    dump = Dump()
    for a in (A0, A1, A0):
        dump.run([dump.tensor("FLOAT", a, [6])])
    etdp, dbg = dump.write(d, "count")
    rec = etrecord(d, "count", [[T(R0)], [T(R1)]])
    js = os.path.join(d, "count.json")
    # issue 20: the counts differ and no run has an index: each run is paired
    # with the reference its outputs match (0, 1, 0), nothing is unpaired
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--compare", "--json", js)
    rows = acc_rows(load_json(js))
    check("6 count: by content (default): runs 0, 1, 2 with references 0, 1, 0, exit 0",
          rc == 0 and [(r.get("run"), r.get("reference")) for r in rows] ==
          [(0, 0), (1, 1), (2, 0)], f"rc={rc} {err} {rows}")
    check("6 count: the note has both counts",
          "3 runs" in out and "2 reference sets" in out, out[-300:])
    # issue 13: forced order: the unpaired run is a failing row
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--pair-by", "order", "--json", js)
    rows = acc_rows(load_json(js))
    check("6 count: --pair-by order: exit 1, the unpaired run 2 is a 'missing reference' row",
          rc == 1 and len(rows) == 3 and rows[2].get("run") == 2 and
          rows[2].get("status") == "missing reference", f"rc={rc} {err} {rows}")
    check("6 count: forced order also exit 1 with both counts",
          rc == 1 and "3 runs" in out and "2 reference" in out, err)
    # the three merged runs keep their own outputs: with 3 references all pass
    rec3 = etrecord(d, "count3", [[T(A0)], [T(A1)], [T(A0)]])
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec3,
                       "--compare", "--json", js)
    rows = acc_rows(load_json(js))
    check("6 count: 3 merged runs keep 3 distinct outputs (all identical to refs)",
          rc == 0 and len(rows) == 3 and
          all((r.get("metrics") or {}).get("identical") for r in rows), f"{rc} {err}")


def case_missing_rows(d):
    dump = Dump()
    # run 0: a tensor and a TensorList of two: 3 outputs; run 1: 1 output
    dump.run([dump.tensor("FLOAT", R0[:3], [3]),
              [dump.tensor("FLOAT", R0[3:], [3]), dump.tensor("FLOAT", R1[:2], [2])]])
    dump.run([dump.tensor("FLOAT", R1, [6])])
    etdp, dbg = dump.write(d, "missing")
    rec = etrecord(d, "missing", [
        [T(R0[:3]), T(R0[3:]), T(R1[:2])],   # 3 tensors: TensorList flattened
        [T(R1), T(R0)],                      # 2 references against 1 output
    ])
    js = os.path.join(d, "missing.json")
    ju = os.path.join(d, "missing.xml")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--json", js, "--junit", ju)
    rows = acc_rows(load_json(js))
    got = [(r.get("run"), r.get("output"), r.get("status")) for r in rows]
    check("7 TensorList counted as its tensors: run 0 has 3 passing rows",
          got[:3] == [(0, 0, "pass"), (0, 1, "pass"), (0, 2, "pass")], str(got))
    check("7 missing output row for the second reference of run 1",
          got[3:] == [(1, 0, "pass"), (1, 1, "missing output")], str(got))
    check("7 missing output: exit 1", rc == 1, err)
    if len(rows) == 5:
        check("7 missing output: reason and reference shape",
              rows[4].get("reason") == "the run has 1 outputs, reference 1 has 2" and
              rows[4].get("reference_shape") == "[6]" and rows[4].get("metrics") is None,
              json.dumps(rows[4]))
    check("7 missing output row in the table", "missing output" in out, out[-600:])
    # now the run has more outputs than its reference
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [6]), dump.tensor("FLOAT", R1, [2, 3])])
    etdp2, dbg2 = dump.write(d, "missref")
    rec2 = etrecord(d, "missref", [[T(R0)]])
    rc, out, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--etrecord", rec2,
                       "--json", js, "--junit", ju)
    rows = acc_rows(load_json(js))
    got = [(r.get("output"), r.get("status")) for r in rows]
    check("7 missing reference: rows pass + missing reference, exit 1",
          rc == 1 and got == [(0, "pass"), (1, "missing reference")], f"{rc} {got}")
    if len(rows) == 2:
        check("7 missing reference: reason, shape, dtype",
              rows[1].get("reason") == "reference 0 has 1 outputs, the run 2" and
              rows[1].get("shape") == "[2, 3]" and rows[1].get("dtype") == "float32",
              json.dumps(rows[1]))
    check("7 missing reference: stderr names it",
          "1 of 2 outputs fail; worst: Execute run 0 output 1 (ETDump run 0): reference 0 has "
          "1 outputs" in err,
          err)
    try:
        suite = ET.parse(ju).getroot().find("testsuite")
        f = suite.findall(".//failure")
        check("7 junit: missing reference is a failure",
              suite.get("failures") == "1" and len(f) == 1 and
              f[0].get("type") == "missing reference", ET.tostring(suite)[:400])
    except (OSError, ET.ParseError, AttributeError) as e:
        check("7 junit parses", False, str(e))


def case_shape_and_ints(d):
    ints_r = [3, -7, 2**40 + 1, 0]
    ints_a = [3, -7, 2**40 + 3, 0]   # differs by 2 at index 2
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [2, 3]),          # reference is [3, 2]
              dump.tensor("LONG", ints_a, [4]),
              dump.tensor("LONG", ints_r, [4]),
              dump.tensor("FLOAT", R0[:4], [4]),          # against int64: dtype mismatch
              dump.tensor("HALF", [f16(x) for x in R1], [6]),  # float16 vs float32
              ("Int", 7),                                 # scalar vs python int
              ("Double", 0.25)])                          # scalar vs 0-dim float32
    etdp, dbg = dump.write(d, "shapes")
    rec = etrecord(d, "shapes", [[T(R0, [3, 2]), T(ints_r, dtype="int64"),
                                  T(ints_r, dtype="int64"), T([1, 2, 3, 4], dtype="int64"),
                                  T(R1), 7, T([0.25], shape=[])]])
    js = os.path.join(d, "shapes.json")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--compare", "--json", js)
    rows = acc_rows(load_json(js))
    st = [r.get("status") for r in rows]
    check("8 statuses: shape mismatch, FAIL, pass, dtype mismatch, pass, pass, pass",
          st == ["shape mismatch", "FAIL", "pass", "dtype mismatch", "pass", "pass", "pass"],
          str(st))
    check("8 exit 1", rc == 1, err)
    if len(rows) == 7:
        check("8 shape mismatch reason",
              rows[0].get("reason") == "shape [2, 3] against reference [3, 2]" and
              rows[0].get("metrics") is None, json.dumps(rows[0]))
        m = rows[1].get("metrics") or {}
        check("8 int64 exact: mismatch 1 of 4, max_abs 2 at 2, exact true",
              m.get("exact") is True and m.get("mismatch_count") == 1 and
              m.get("count") == 4 and m.get("max_abs") == 2 and m.get("max_abs_index") == 2,
              json.dumps(m))
        check("8 int64 reason", rows[1].get("reason") == "1 of 4 values differ (exact comparison)",
              rows[1].get("reason"))
        m2 = rows[2].get("metrics") or {}
        check("8 int64 equal: identical", m2.get("identical") is True and m2.get("exact"))
        check("8 dtype mismatch reason",
              rows[3].get("reason") == "dtype float32 against reference int64",
              rows[3].get("reason"))
        check("8 float16 vs float32: dtypes", rows[4].get("dtype") == "float16" and
              rows[4].get("reference_dtype") == "float32", json.dumps(rows[4])[:300])
        check_metrics("8 float16 vs float32", rows[4], R1, [f16(x) for x in R1])
        check("8 scalar int: identical exact",
              (rows[5].get("metrics") or {}).get("identical") is True and
              (rows[5].get("metrics") or {}).get("exact") is True, json.dumps(rows[5]))
        check("8 scalar double vs 0-dim: identical",
              (rows[6].get("metrics") or {}).get("identical") is True, json.dumps(rows[6]))
    # --max-abs allows the integer difference but not the shape or dtype rows
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--json", js, "--max-abs", "2")
    st = [r.get("status") for r in acc_rows(load_json(js))]
    check("8 --max-abs 2: int row passes, mismatch rows still fail",
          rc == 1 and st[1:3] == ["pass", "pass"] and st[0] == "shape mismatch", str(st))
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--json", js, "--max-abs", "1.5")
    st = [r.get("status") for r in acc_rows(load_json(js))]
    check("8 --max-abs 1.5: int row FAIL", st[1:2] == ["FAIL"], str(st))
    # only exact int outputs, all equal apart from one: gate alone decides
    dump = Dump()
    dump.run([dump.tensor("LONG", ints_a, [4])])
    etdp2, dbg2 = dump.write(d, "ints")
    rec2 = etrecord(d, "ints", [[T(ints_r, dtype="int64")]])
    rc, _, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--etrecord", rec2,
                     "--no-table", "--compare")
    check("8 ints differ, no threshold: exit 1", rc == 1 and "exact comparison" in err, err)
    rc, _, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--etrecord", rec2,
                     "--no-table", "--max-abs", "2")
    check("8 ints differ, --max-abs 2: exit 0", rc == 0, err)


def npy32(values, shape):
    return NPZ.npy("<f4", tuple(shape), NPZ.encode("<f4", values))


def case_reference_files(d, etdp, dbg):
    js = os.path.join(d, "ref.json")

    def try_refs(label, path, expect_rc=0):
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs", path,
                           "--json", js, "--no-table", "--min-snr", "60")
        rows = acc_rows(load_json(js)) if rc in (0, 1) else []
        check(f"9 {label}: exit {expect_rc}", rc == expect_rc, f"rc={rc} {err}")
        return rows, err

    for label, obj, top in (("torch.save list", [[T(R0, [2, 3])], [T(R1, [2, 3])]], "refs"),
                            ("torch.save {method: list}",
                             {"forward": [[T(R0, [2, 3])], [T(R1, [2, 3])]]}, "archive")):
        pt = os.path.join(d, "refs_%d.pt" % len(label))
        with open(pt, "wb") as f:
            f.write(G.torch_save(obj, top=top))
        rows, _ = try_refs(label, pt)
        check(f"9 {label}: 2 rows pass", [r.get("status") for r in rows] == ["pass", "pass"],
              json.dumps(rows)[:300])
        if len(rows) == 2:
            check_metrics(f"9 {label} row 1", rows[1], R1, A1)
    # npz with "k.j" names; members written in reverse so order does not matter
    npz = os.path.join(d, "refs.npz")
    NPZ.write_npz(npz, [("1.0", npy32(R1, [2, 3])), ("0.0", npy32(R0, [2, 3]))])
    rows, _ = try_refs("npz k.j", npz)
    check("9 npz k.j: references 0 and 1",
          [(r.get("reference"), r.get("status")) for r in rows] == [(0, "pass"), (1, "pass")],
          json.dumps(rows)[:300])
    if len(rows) == 2:
        check_metrics("9 npz row 0", rows[0], R0, A0)
        check_metrics("9 npz row 1", rows[1], R1, A1)
    # plain single-reference npz against a one-run ETDump with two outputs
    dump = Dump()
    dump.run([dump.tensor("FLOAT", A0, [2, 3]), dump.tensor("FLOAT", A1, [6])])
    etdp1, dbg1 = dump.write(d, "single")
    plain = os.path.join(d, "plain.npz")
    NPZ.write_npz(plain, [("arr_0", npy32(R0, [2, 3])), ("arr_1", npy32(R1, [6]))])
    rc, out, err = run("--etdump", etdp1, "--debug_buffer", dbg1, "--reference-outputs", plain,
                       "--json", js, "--no-table")
    rows = acc_rows(load_json(js))
    check("9 plain npz: exit 0, two rows from reference 0",
          rc == 0 and [(r.get("reference"), r.get("output")) for r in rows] == [(0, 0), (0, 1)],
          f"{rc} {err} {json.dumps(rows)[:300]}")
    if len(rows) == 2:
        check_metrics("9 plain npz row 0", rows[0], R0, A0)
        check_metrics("9 plain npz row 1", rows[1], R1, A1)
    # plain npz is one reference: both runs are compared with it (issue 13)
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs", plain,
                       "--no-table")
    # issue 20: one reference set is the only candidate of content pairing
    check("9 plain npz vs 2 runs: every run against reference 0, said in the note",
          rc in (0, 1) and "2 runs" in out and "pairing by content" in out and
          "references by run: 0, 0" in out, out[-300:] + err)
    # --reference-outputs wins over the ETRecord's references
    rec = etrecord(d, "other", [[T(R1, [2, 3])], [T(R0, [2, 3])]])
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--reference-outputs", npz, "--no-table", "--json", js)
    rows = acc_rows(load_json(js))
    check("9 --reference-outputs overrides the ETRecord",
          rc == 0 and all((r.get("metrics") or {}).get("snr", 0) != "inf" for r in rows) and
          len(rows) == 2 and close(rows[0]["metrics"]["mse"], metrics(R0, A0)["mse"]),
          f"{rc} {err}")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg,
                     "--reference-outputs", os.path.join(d, "absent.npz"), "--no-table")
    check("9 missing reference file: exit 3", rc == 3, err)

    # A corrupt byte in a stored member's data: the CRC-32 is checked in the
    # comparison's own pass, and the run fails instead of reporting numbers.
    # Members: the compared float32 pair (fused check), an int32 one (checked
    # apart) and one no output pairs with (checked all the same).
    dump = Dump()
    dump.run([dump.tensor("FLOAT", A0, [2, 3]), dump.tensor("INT", [1, 2, 3], [3])])
    etdp2, dbg2 = dump.write(d, "crc")
    ints = struct.pack("<3i", 1, 2, 3)
    members = [("0.0", npy32(R0, [2, 3])), ("0.1", NPZ.npy("<i4", (3,), ints, (1, 0))),
               ("0.2", npy32([7.0], [1]))]
    good = os.path.join(d, "crc_good.npz")
    NPZ.write_npz(good, members)
    rc, _, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--reference-outputs", good,
                     "--no-table")
    check("9 crc: the intact archive compares (exit 1 for the unpaired 0.2, no CRC error)",
          rc == 1 and "CRC-32" not in err, f"{rc} {err}")
    blob = open(good, "rb").read()
    for k, (name, data) in enumerate(members):
        at = blob.index(data) + len(data) - 1  # the last data byte of the member
        bad = os.path.join(d, "crc_bad%d.npz" % k)
        with open(bad, "wb") as f:
            f.write(blob[:at] + bytes([blob[at] ^ 0x40]) + blob[at + 1:])
        rc, out, err = run("--etdump", etdp2, "--debug_buffer", dbg2, "--reference-outputs",
                           bad, "--no-table")
        check(f"9 crc: a flipped data byte in {name}.npy: exit 3 naming the member",
              rc == 3 and f"member {name}.npy: CRC-32" in err and "expected" in err and
              "outputs pass" not in err, f"{rc} {err}")


def case_plots(d):
    dump = Dump()
    a2 = list(R0)
    a2[4] = f32(a2[4] + 0.25)  # one known error at row 1, column 1
    dump.run([dump.tensor("FLOAT", a2, [2, 3]), dump.tensor("FLOAT", A1, [6])])
    etdp, dbg = dump.write(d, "plot")
    rec = etrecord(d, "plot", [[T(R0, [2, 3]), T(R1)]])
    pdir = os.path.join(d, "plots")
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--no-table", "--plot", pdir)
    check("10 plot: exit 0", rc == 0, err)
    names = sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []
    # 6 elements each: no histogram (issue 15: only above 16 elements)
    want = ["metric_snr.png", "heatmap_Execute_run0_out0.png"]
    missing = [w for w in want if w not in names]
    check("10 plot: expected PNGs exist", not missing, f"missing {missing} in {names}")
    # by default an ungated metric has no bar chart (the table has it)
    check("10 plot: no bar chart of an ungated metric by default",
          not [n for n in names if n.startswith("metric_") and n != "metric_snr.png" and
               n.endswith(".png")], str(names))
    check("10 plot: no heat map for the 1-D output",
          "heatmap_Execute_run0_out1.png" not in names, str(names))
    for w in want:
        p = os.path.join(pdir, w)
        if not os.path.exists(p):
            continue
        info = png_info(p)
        check(f"10 plot: {w} is a PNG with size > 0",
              info is not None and info[0] > 0 and info[1] > 0, str(info))
        if info and info[4] is not None:
            check(f"10 plot: {w} is not uniform", info[4] > 1, str(info))
    # --plot=DIR form, and the default directory is never used here
    pdir2 = os.path.join(d, "plots2")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--no-table", "--plot=" + pdir2)
    check("10 plot: --plot=DIR writes there",
          rc == 0 and os.path.exists(os.path.join(pdir2, "metric_snr.png")), err)
    # --metrics chooses the bar charts as it chooses the table's columns
    pdir4 = os.path.join(d, "plots4")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--no-table", "--metrics", "l1,max_rel", "--plot", pdir4)
    names4 = sorted(n for n in os.listdir(pdir4) if n.startswith("metric_")) \
        if os.path.isdir(pdir4) else []
    check("10 plot --metrics l1,max_rel: exactly those bar charts",
          rc == 0 and [n for n in names4 if n.endswith(".png")] ==
          ["metric_l1.png", "metric_max_rel.png"], f"{rc} {err} {names4}")
    # a gated metric is drawn without --metrics
    pdir5 = os.path.join(d, "plots5")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                     "--no-table", "--max-abs", "1", "--plot", pdir5)
    names5 = sorted(n for n in os.listdir(pdir5) if n.startswith("metric_") and
                    n.endswith(".png")) if os.path.isdir(pdir5) else []
    check("10 plot --max-abs 1: SNR and the gated max abs bar charts",
          rc == 0 and names5 == ["metric_max_abs.png", "metric_snr.png"], f"{rc} {err} {names5}")
    # identical outputs: SNR inf bars, but no heat map (issue 15)
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [2, 3])])
    etdp3, dbg3 = dump.write(d, "plot_same")
    rec3 = etrecord(d, "plot_same", [[T(R0, [2, 3])]])
    pdir3 = os.path.join(d, "plots3")
    rc, _, err = run("--etdump", etdp3, "--debug_buffer", dbg3, "--etrecord", rec3,
                     "--no-table", "--plot", pdir3)
    names3 = sorted(os.listdir(pdir3)) if os.path.isdir(pdir3) else []
    check("10 plot identical: exit 0, bars and no heat map",
          rc == 0 and "metric_snr.png" in names3 and
          "heatmap_Execute_run0_out0.png" not in names3, f"{rc} {err} {names3}")


def run_on_tty(*args):
    """Runs etcompare with stderr on a pseudo-terminal; returns (rc, stderr text)."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([ETC, *map(respell, args)], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not b:
            break
        chunks.append(b)
    os.close(master)
    return p.wait(), b"".join(chunks).decode(errors="replace")


def case_progress_and_gnuplot(d):
    # Progress: a bar on stderr when it is a terminal and the debug buffer is
    # over 256 MiB (a sparse file here), never otherwise.
    dump = Dump()
    dump.run([dump.tensor("FLOAT", R0, [2, 3])])
    etdp, dbg = dump.write(d, "progress")
    npz = os.path.join(d, "progress.npz")
    NPZ.write_npz(npz, [("0.0", npy32(R0, [2, 3]))])
    args = ["--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs", npz, "--no-table"]
    rc, err = run_on_tty(*args)
    check("13 progress: small buffer on a terminal: exit 0 and no bar",
          rc == 0 and "comparing [" not in err, repr(err[:300]))
    big = os.path.join(d, "progress_big.bin")
    shutil.copyfile(dbg, big)
    os.truncate(big, (257 << 20))
    args[3] = big
    rc, err = run_on_tty(*args)
    check("13 progress: 257 MiB buffer on a terminal: a bar with percent and throughput",
          rc == 0 and "\rcomparing [" in err and "100%" in err and "GB/s" in err and
          "#" * 40 in err, repr(err[:300]))
    rc, _, err = run(*args)
    check("13 progress: not a terminal: no bar", rc == 0 and "comparing [" not in err,
          repr(err[:300]))

    # Without gnuplot: said once; the .gp scripts and .dat data are written for
    # later (the heat map too: gnuplot draws it since issue 15).
    rec = etrecord(d, "nognuplot", [[T(R1, [2, 3])]])
    pdir = os.path.join(d, "plots_nognuplot")
    p = subprocess.run([ETC, *map(respell, ["--etdump", etdp, "--debug_buffer", dbg,
                                            "--etrecord", rec, "--no-table", "--plot", pdir])],
                       capture_output=True,
                       env={"PATH": "/nonexistent"})
    err = p.stderr.decode(errors="replace")
    names = sorted(os.listdir(pdir)) if os.path.isdir(pdir) else []
    check("13 no gnuplot: exit 0, the note once",
          p.returncode == 0 and err.count("gnuplot not found") == 1, err)
    # heat maps are drawn with libpng (no gnuplot needed); every other plot
    # keeps its script and data for later
    check("13 no gnuplot: .gp and .dat written, PNGs only for the heat maps",
          "metric_snr.gp" in names and "metric_snr.dat" in names and
          "heatmap_Execute_run0_out0.gp" in names and
          "heatmap_Execute_run0_out0.png" in names and
          [n for n in names if n.endswith(".png")] == ["heatmap_Execute_run0_out0.png"],
          str(names))
    gp = os.path.join(pdir, "metric_snr.gp")
    if os.path.exists(gp) and shutil.which("gnuplot"):
        q = subprocess.run(["gnuplot", "-e", "outfile='later.png'", "metric_snr.gp"], cwd=pdir,
                           capture_output=True)
        check("13 no gnuplot: the saved script makes the plot later",
              q.returncode == 0 and os.path.getsize(os.path.join(pdir, "later.png")) > 0,
              q.stderr.decode(errors="replace"))


def case_usage(d, etdp, dbg, rec):
    base = ["--etdump", etdp, "--no-table"]
    for label, args, needle in (
            ("--compare without --debug_buffer", base + ["--etrecord", rec, "--compare"],
             "--debug_buffer"),
            ("--min-snr without --debug_buffer", base + ["--etrecord", rec, "--min-snr", "5"],
             "--debug_buffer"),
            ("--compare without references", base + ["--debug_buffer", dbg, "--compare"],
             "reference outputs"),
            ("--pair-by bad", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                      "--pair-by", "name"], "--pair-by"),
            ("--metrics bad", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                      "--metrics", "snr,psnr"], "--metrics"),
            ("--metrics empty item", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                             "--metrics", "snr,,mse"], "--metrics"),
            ("--metrics trailing comma", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                                 "--metrics", "snr,"], "--metrics"),
            ("--min-snr abc", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                      "--min-snr", "abc"], "--min-snr"),
            ("--max-mse nan", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                      "--max-mse", "nan"], "--max-mse"),
            ("--min-snr missing value", base + ["--debug_buffer", dbg, "--etrecord", rec,
                                                "--min-snr"], "--min-snr"),
            ("--compare without --etdump", ["--compare"], "--etdump")):
        js = os.path.join(d, "usage.json")
        rc, out, err = run(*args, "--json", js) if "--etdump" in args else run(*args)
        check(f"11 usage: {label} -> exit 2", rc == 2 and needle in err, f"rc={rc} {err}")
        if os.path.exists(js):
            check(f"11 usage: {label} wrote no JSON", False)
            os.unlink(js)
    # --metrics chooses the table's columns; a negative threshold is a value
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                       "--no-table", "--metrics", "l1,max_rel", "--min-snr", "-5")
    header = [ln for ln in out.splitlines() if "verdict" in ln]
    check("11 --metrics l1,max_rel: only those columns",
          rc == 0 and header and "L1" in header[0] and "max rel" in header[0] and
          "SNR" not in header[0] and "MSE" not in header[0], f"{rc} {err} {header}")


def case_special_values(d):
    """NaN, infinities, all-zero references, 64-bit integers, bool, strided
    references, outputs without data, block names needing XML escapes, and
    the orphan arrays of an .npz: the gate and the report stay right."""
    nan, inf = math.nan, math.inf

    def one(stem, outs, refs, *extra):
        dump = Dump()
        dump.run([dump.tensor(*o) for o in outs])
        etdp, dbg = dump.write(d, stem)
        rec = etrecord(d, stem, [refs])
        js = os.path.join(d, stem + ".out.json")
        rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                           "--compare", "--json", js, *extra)
        rep = load_json(js)
        return rc, out, err, acc_rows(rep), (rep.get("accuracy") or {})

    rc, _, err, rows, _ = one("nan_one_side", [("FLOAT", [1.0, nan, 3.0], [3])],
                              [T([1.0, 2.0, 3.0])], "--min-snr", "60")
    m = (rows[0].get("metrics") or {}) if rows else {}
    check("12 NaN in the output only: nan_count 1, not identical",
          m.get("nan_count") == 1 and m.get("identical") is False, json.dumps(m))
    check("12 NaN in the output only fails the --min-snr gate (exit 1)",
          rc == 1 and rows and rows[0].get("status") == "FAIL", f"rc={rc} {err}")
    rc, _, err, rows, _ = one("nan_both", [("FLOAT", [1.0, nan, 3.0], [3])],
                              [T([1.0, nan, 3.0])], "--min-snr", "60")
    m = (rows[0].get("metrics") or {}) if rows else {}
    check("12 NaN at the same position: pass, identical, note",
          rc == 0 and m.get("identical") is True and m.get("nan_count") == 1 and
          m.get("count") == 2 and "NaN" in m.get("notes", ""), f"rc={rc} {json.dumps(m)}")
    rc, _, err, rows, _ = one("inf_both", [("FLOAT", [inf, -2.0], [2])], [T([inf, -2.0])],
                              "--min-snr", "60")
    check("12 +inf against +inf is equal: pass",
          rc == 0 and rows and (rows[0].get("metrics") or {}).get("identical") is True, err)
    rc, _, err, rows, _ = one("zero_ref", [("FLOAT", [0.0, 1.0], [2])], [T([0.0, 0.0])],
                              "--min-snr", "60")
    m = (rows[0].get("metrics") or {}) if rows else {}
    check("12 all-zero reference: SNR -inf, FAIL", rc == 1 and m.get("snr") == "-inf",
          json.dumps(m))
    check("12 all-zero reference: the JSON note says so",
          "reference is all zero" in m.get("notes", ""), repr(m.get("notes")))
    rc, _, err, rows, acc = one("worst_nan", [("FLOAT", [0.0, 0.0], [2]),
                                              ("FLOAT", [1.0, 3.0], [2]),
                                              ("FLOAT", [1.0, 2.125], [2])],
                                [T([0.0, 0.0]), T([1.0, 2.0]), T([1.0, 2.0])])
    check("12 worst is the lowest SNR, not an undefined (NaN) SNR row",
          acc.get("worst") == 1 and "worst: Execute run 0 output 1" in err,
          f"worst={acc.get('worst')} {err}")
    big = 2 ** 53
    rc, _, err, rows, _ = one("int64_big", [("LONG", [big + 1, -5], [2])],
                              [T([big, -5], dtype="int64")], "--max-abs", "0.5")
    m = (rows[0].get("metrics") or {}) if rows else {}
    check("12 int64 2^53+1 vs 2^53: one mismatch, max abs 1, FAIL under --max-abs 0.5",
          rc == 1 and m.get("mismatch_count") == 1 and m.get("max_abs") == 1 and
          m.get("exact") is True, f"rc={rc} {json.dumps(m)}")
    rc, _, err, rows, _ = one("bools", [("BOOL", [True, False, True], [3])],
                              [T([True, True, True], dtype="bool")])
    m = (rows[0].get("metrics") or {}) if rows else {}
    check("12 bool compared exactly: 1 of 3 differ, FAIL",
          rc == 1 and m.get("exact") is True and m.get("mismatch_count") == 1 and
          rows[0].get("reason") == "1 of 3 values differ (exact comparison)",
          f"rc={rc} {json.dumps(rows)[:300]}")
    rc, _, err, rows, _ = one("int32_int64", [("INT", [7, -9], [2])],
                              [T([7, -9], dtype="int64")])
    check("12 int32 against int64 reference: exact, identical, pass",
          rc == 0 and rows and (rows[0].get("metrics") or {}).get("exact") is True, err)
    st = G.Storage("float32", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    view = G.Tensor("float32", storage=st, shape=[3, 2], stride=[1, 3])  # a transpose
    rc, _, err, rows, _ = one("strided", [("FLOAT", [1.0, 4.0, 2.0, 5.0, 3.0, 7.0], [3, 2])],
                              [view])
    if rows:
        check_metrics("12 strided reference read in logical order", rows[0],
                      [1.0, 4.0, 2.0, 5.0, 3.0, 6.0], [1.0, 4.0, 2.0, 5.0, 3.0, 7.0])
    # an output whose tensor has no data
    dump = Dump()
    t = dump.tensor("FLOAT", [1.0], [1])
    t["offset"] = -1
    dump.run([t])
    etdp, dbg = dump.write(d, "nodata")
    rec = etrecord(d, "nodata", [[T([1.0])]])
    js = os.path.join(d, "nodata.out.json")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--compare",
                     "--no-table", "--json", js)
    rows = acc_rows(load_json(js))
    check("12 output without data: 'no data' row, exit 1",
          rc == 1 and [r.get("status") for r in rows] == ["no data"], f"rc={rc} {err}")
    # --block with a name that needs escaping in XML; another block is ignored
    name = 'Ex<&"\'>'
    dump = Dump()
    dump.run([dump.tensor("FLOAT", [1.0, 2.0], [2])], name=name)
    dump.run([dump.tensor("FLOAT", [1.0, 2.5], [2])])
    etdp, dbg = dump.write(d, "blockname")
    rec = etrecord(d, "blockname", [[T([1.0, 2.0])]])
    ju = os.path.join(d, "blockname.xml")
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table",
                     "--block", name, "--junit", ju, "--min-snr", "60")
    try:
        cases = ET.parse(ju).getroot().findall(".//testcase")
        check("12 --block NAME: one testcase, class name escaped and read back",
              rc == 0 and len(cases) == 1 and cases[0].get("classname") == name + ".run0",
              f"rc={rc} {[c.attrib for c in cases]}")
    except (OSError, ET.ParseError) as e:
        check("12 --block NAME: junit parses", False, str(e))
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table",
                     "--block", "Nope")
    check("12 --block without runs: exit 3", rc == 3 and '"Nope"' in err, err)
    # an .npz array that belongs to no output position is never silently ignored
    dump = Dump()
    dump.run([dump.tensor("FLOAT", [1.0], [1])])
    etdp, dbg = dump.write(d, "npzgap")
    npz = os.path.join(d, "gap.npz")
    NPZ.write_npz(npz, [("0.0", npy32([1.0], [1])), ("0.2", npy32([2.0], [1]))])
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs", npz,
                     "--no-table", "--json", js)
    check("12 npz '0.0' + '0.2': array 0.2 is reported, not dropped (exit 3 naming 0.1)",
          rc == 3 and 'array "0.2" has no array "0.1" before it' in err, f"rc={rc} {err}")
    # many references and outputs, members in scrambled order: each run finds its own
    dump = Dump()
    R = [[float(10 * k + j + 1) for j in range(3)] for k in range(40)]
    for k in range(40):
        dump.run([dump.tensor("FLOAT", [R[k][j]], [1]) for j in range(3)])
    etdp, dbg = dump.write(d, "npzmany")
    members = [("%d.%d" % (k, j), npy32([R[k][j]], [1])) for k in range(40) for j in range(3)]
    members = members[1::2] + members[::2]
    npz = os.path.join(d, "many.npz")
    NPZ.write_npz(npz, members)
    rc, _, err = run("--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs", npz,
                     "--no-table", "--json", js)
    rows = acc_rows(load_json(js)) if rc == 0 else []
    check("12 npz 40 references x 3 outputs, scrambled: 120 identical pairs in order",
          rc == 0 and len(rows) == 120 and
          all(r["reference"] == i // 3 and r["output"] == i % 3 and r["status"] == "pass" and
              r["metrics"]["snr"] == "inf" for i, r in enumerate(rows)),
          f"rc={rc} {err} {json.dumps(rows[:2])}")


def main():
    top = common.work_dir("accuracy")
    global SPELLING
    with common.harness():
        for SPELLING in ("-", "_"):
            print(f"# every long option spelled with '{SPELLING}'")
            d = os.path.join(top, "hyphens" if SPELLING == "-" else "underscores")
            os.makedirs(d)
            etdp, dbg, rec = case_pass(d)
            case_fail(d)
            case_json_schema(d, etdp, dbg, rec)
            case_near_identical(d)
            case_pair_by_index(d)
            case_count_mismatch(d)
            case_missing_rows(d)
            case_shape_and_ints(d)
            case_reference_files(d, etdp, dbg)
            case_plots(d)
            case_usage(d, etdp, dbg, rec)
            case_special_values(d)
            case_progress_and_gnuplot(d)
    common.finish(top)


if __name__ == "__main__":
    main()
