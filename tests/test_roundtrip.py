#!/usr/bin/env python3
"""Round trip: etcompare's decoded event list (the `runs` section of --json,
written by raw_event_json in src/report/json.c) must agree field by field
with an independent decoder, Debian's flatc:

    flatc --json --strict-json --raw-binary [--size-prefixed] \
          schema/etdump.fbs -- FILE

flatc leaves out fields equal to their schema default; they are filled in
here from schema/etdump.fbs (instruction_id -1, bundled_input_index -1,
scalar_type BYTE, ...). An absent optional table or vector is null in the
report (debug_entry, delegate_debug_metadata, Value.output); an absent
string is "". Top-level version, run_count and event_count are compared too.

Inputs: every tests/fixtures/*.json, encoded both size-prefixed and plain,
and every tests/data/*.etdp. For fixtures the report is also compared with
the fixture's own JSON source, which keeps full precision: flatc prints
floats in fixed notation with 6 (float) or 15 (double) decimals, so against
flatc a Float/Double field matches when the report's value printed the
same way gives the same decimal number.

Every report is validated against schema/etcompare-report.schema.json.
Fixtures whose sidecar says "report": false are rejected by etcompare
(exit 3, no report) and only that is checked.
"""
import decimal
import glob
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_fixtures as tf  # noqa: E402  (shared helpers; its main() does not run)

DATA = os.path.join(tf.SRC, "tests", "data")


class Real:
    """A float (bits=32) or double (bits=64) field of the reference."""

    def __init__(self, v, bits):
        self.v, self.bits = v, bits

    def __repr__(self):
        return f"Real({self.v!r}, {self.bits})"


def nonfinite(x):
    """'nan'/'inf'/'-inf' for a non-finite reference token, else None."""
    if isinstance(x, str):
        s = x.strip().lower()
        return "nan" if s in ("nan", "-nan", "+nan") else s.lstrip("+")
    if isinstance(x, (float, decimal.Decimal)) and (x != x or x in (float("inf"), float("-inf"))):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return None


def real_matches(ref, got, source):
    nf = nonfinite(ref.v)
    if nf is not None:
        return got == nf
    if isinstance(got, str) or isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    if source == "flatc":
        digits = 6 if ref.bits == 32 else 15
        return decimal.Decimal(f"{float(got):.{digits}f}") == decimal.Decimal(str(ref.v))
    want = float(decimal.Decimal(str(ref.v)))
    if ref.bits == 32:
        want = struct.unpack("<f", struct.pack("<f", want))[0]
    return float(got) == want and math.copysign(1, float(got)) == math.copysign(1, want)


# --- reference (flatc output or fixture source) -> report shape ---------------

def norm_tensor(t):
    return {"scalar_type": t.get("scalar_type", "BYTE"), "sizes": t.get("sizes", []),
            "strides": t.get("strides", []), "offset": t.get("offset", 0)}


def norm_value(v):
    if v is None:
        return None
    val = v.get("val", "Null")
    out = {"val": val,
           "output": v["output"].get("bool_val", False) if "output" in v else None}
    if val == "Int":
        out["int_val"] = v.get("int_value", {}).get("int_val", 0)
    elif val == "Bool":
        out["bool_val"] = v.get("bool_value", {}).get("bool_val", False)
    elif val == "Float":
        out["float_val"] = Real(v.get("float_value", {}).get("float_val", 0), 32)
    elif val == "Double":
        out["double_val"] = Real(v.get("double_value", {}).get("double_val", 0), 64)
    elif val == "Tensor":
        out["tensors"] = [norm_tensor(v["tensor"])] if "tensor" in v else []
    elif val == "TensorList":
        out["tensors"] = [norm_tensor(t) for t in v.get("tensor_list", {}).get("tensors", [])]
    return out


def norm_event(e):
    if "profile_event" in e:
        p = e["profile_event"]
        return {"profile_event": {
            "name": p.get("name", ""), "chain_index": p.get("chain_index", 0),
            "instruction_id": p.get("instruction_id", -1),
            "delegate_debug_id_int": p.get("delegate_debug_id_int", -1),
            "delegate_debug_id_str": p.get("delegate_debug_id_str", ""),
            "delegate_debug_metadata": p.get("delegate_debug_metadata"),
            "start_time": p.get("start_time", 0), "end_time": p.get("end_time", 0)}}
    if "allocation_event" in e:
        a = e["allocation_event"]
        return {"allocation_event": {"allocator_id": a.get("allocator_id", 0),
                                     "allocation_size": a.get("allocation_size", 0)}}
    if "debug_event" in e:
        d = e["debug_event"]
        return {"debug_event": {
            "chain_index": d.get("chain_index", 0), "instruction_id": d.get("instruction_id", -1),
            "delegate_debug_id_int": d.get("delegate_debug_id_int", -1),
            "delegate_debug_id_str": d.get("delegate_debug_id_str", ""),
            "name": d.get("name", ""), "debug_entry": norm_value(d.get("debug_entry"))}}
    return {}


def norm_run(r):
    return {"name": r.get("name", ""), "bundled_input_index": r.get("bundled_input_index", -1),
            "allocators": [a.get("name", "") for a in r.get("allocators", [])],
            "events": [norm_event(e) for e in r.get("events", [])]}


def compare(exp, act, path, errs, source):
    if len(errs) > 20:
        return
    if isinstance(exp, Real):
        if not real_matches(exp, act, source):
            errs.append(f"{path}: {source} has {exp.v}, report has {act!r}")
    elif isinstance(exp, dict):
        if not isinstance(act, dict):
            errs.append(f"{path}: expected an object, report has {act!r:.80}")
            return
        if set(exp) != set(act):
            errs.append(f"{path}: keys {sorted(act)}, expected {sorted(exp)}")
        for k in exp:
            if k in act:
                compare(exp[k], act[k], f"{path}.{k}", errs, source)
    elif isinstance(exp, list):
        if not isinstance(act, list) or len(exp) != len(act):
            errs.append(f"{path}: {source} has {len(exp)} items, report has {act!r:.120}")
            return
        for i, (e, a) in enumerate(zip(exp, act)):
            compare(e, a, f"{path}[{i}]", errs, source)
    elif exp is None or isinstance(exp, bool):
        if act is not exp:
            errs.append(f"{path}: {source} has {exp!r}, report has {act!r:.80}")
    elif isinstance(exp, int):
        if isinstance(act, bool) or not isinstance(act, int) or act != exp:
            errs.append(f"{path}: {source} has {exp!r}, report has {act!r:.80}")
    elif isinstance(exp, str):
        if act != exp:
            errs.append(f"{path}: {source} has {exp!r}, report has {act!r:.80}")
    else:
        errs.append(f"{path}: unexpected {source} value {exp!r:.80} ({type(exp).__name__})")


def compare_dump(ref, rep, source, errs):
    runs = ref.get("run_data", [])
    head = rep["etdump"]
    if head["version"] != ref.get("version", 0):
        errs.append(f"etdump.version {head['version']}, {source} {ref.get('version', 0)}")
    if head["run_count"] != len(runs):
        errs.append(f"etdump.run_count {head['run_count']}, {source} {len(runs)}")
    total = sum(len(r.get("events", [])) for r in runs)
    if head["event_count"] != total:
        errs.append(f"etdump.event_count {head['event_count']}, {source} {total}")
    compare([norm_run(r) for r in runs], rep["runs"], "runs", errs, source)


# --- decoding ----------------------------------------------------------------

BARE = re.compile(r'^(\s*"[A-Za-z_]+": )([-+]?(?:nan|inf))(,?)\s*$', re.M)


def load_ref_json(path):
    """JSON with floats kept as Decimal; flatc's bare nan/inf become strings."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return json.loads(BARE.sub(r'\1"\2"\3', text), parse_float=decimal.Decimal)


def is_size_prefixed(path):
    with open(path, "rb") as f:
        head = f.read(4)
    return len(head) == 4 and struct.unpack("<I", head)[0] == os.path.getsize(path) - 4


def flatc_decode(path, outdir):
    prefixed = is_size_prefixed(path)
    argv = [tf.FLATC, "--json", "--strict-json", "--raw-binary"]
    argv += ["--size-prefixed"] if prefixed else []
    argv += ["-o", outdir, tf.FBS, "--", path]
    p = subprocess.run(argv, capture_output=True, text=True)
    out = os.path.join(outdir, os.path.splitext(os.path.basename(path))[0] + ".json")
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc cannot decode {path}: {p.stderr.strip()}")
    return load_ref_json(out), prefixed


def report_of(etdp, tmp, validator, label, errs):
    jpath = os.path.join(tmp, label + ".report.json")
    p = tf.run_etcompare(["--etdump", etdp, "--no-table", "--json", jpath])
    if p.returncode != 0:
        errs.append(f"etcompare exit {p.returncode}: {p.stderr.strip()[:300]}")
        return None
    with open(jpath, encoding="utf-8") as f:
        rep = json.load(f)
    errs += tf.schema_errors(validator, rep)
    return rep


def main():
    passed = failed = 0

    def record(label, errs):
        nonlocal passed, failed
        if errs:
            failed += 1
            print(f"FAIL {label}")
            for e in errs[:12]:
                print(f"       {e}")
        else:
            passed += 1
            print(f"ok   {label}")

    try:
        validator = tf.load_validator()
    except Exception as e:
        record(f"schema {tf.REPORT_SCHEMA}", [str(e)])
        print(f"{passed} passed, {failed} failed")
        return 1
    tmp = tf.work_dir("roundtrip")
    plain_dir = os.path.join(tmp, "plain")
    dec_dir = os.path.join(tmp, "decoded")
    os.makedirs(plain_dir)
    os.makedirs(dec_dir)

    fixtures = tf.fixture_paths()
    if not fixtures:
        record("fixtures", ["no fixtures in " + tf.FIXTURES])
    for fx in fixtures:
        base = os.path.basename(fx)[:-len(".json")]
        try:
            with open(tf.sidecar_path(fx)) as f:
                wants_report = json.load(f).get("report", True)
            src = load_ref_json(fx)
            etdp = tf.build_etdump(fx, tmp)
            p = subprocess.run([tf.FLATC, "-b", "-o", plain_dir, tf.FBS, fx],
                               capture_output=True, text=True)
            plain = os.path.join(plain_dir, base + ".etdp")
            if p.returncode != 0:
                raise RuntimeError(f"flatc (plain) failed: {p.stderr.strip()}")
        except Exception as e:
            record(base, [f"setup: {e}"])
            continue
        for variant, path, want_prefix in (("size-prefixed", etdp, True), ("plain", plain, False)):
            label = f"{base} ({variant}) vs flatc"
            errs = []
            try:
                ref, prefixed = flatc_decode(path, dec_dir)
                if prefixed != want_prefix:
                    errs.append(f"size prefix detection says {prefixed}")
                if not wants_report:
                    r = tf.run_etcompare(["--etdump", path, "--no-table", "--json",
                                          os.path.join(tmp, "none.json")])
                    if r.returncode != 3 or os.path.exists(os.path.join(tmp, "none.json")):
                        errs.append(f"expected a rejection (exit 3, no report), got "
                                    f"exit {r.returncode}")
                    label = f"{base} ({variant}) rejected; flatc decodes it"
                else:
                    rep = report_of(path, tmp, validator, f"{base}-{variant}", errs)
                    if rep is not None:
                        if rep["etdump"]["size_prefixed"] is not want_prefix:
                            errs.append(f"etdump.size_prefixed is {rep['etdump']['size_prefixed']}")
                        compare_dump(ref, rep, "flatc", errs)
                        if variant == "size-prefixed":
                            serrs = []
                            compare_dump(src, rep, "fixture", serrs)
                            record(f"{base} vs its JSON source", serrs)
            except Exception as e:
                errs.append(f"{type(e).__name__}: {e}")
            record(label, errs)

    for etdp in sorted(glob.glob(os.path.join(DATA, "*.etdp"))):
        base = os.path.basename(etdp)
        errs = []
        try:
            ref, _ = flatc_decode(etdp, dec_dir)
            rep = report_of(etdp, tmp, validator, "data-" + base, errs)
            if rep is not None:
                compare_dump(ref, rep, "flatc", errs)
        except Exception as e:
            errs.append(f"{type(e).__name__}: {e}")
        record(f"tests/data/{base} vs flatc", errs)

    if failed == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"(files kept in {tmp})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
