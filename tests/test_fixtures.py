#!/usr/bin/env python3
"""Fixture tests: readable ETDumps in tests/fixtures/*.json are encoded with
`flatc -b --size-prefixed schema/etdump.fbs` at test time, the debug buffer
is written here with `struct` from the values listed in the fixture's
sidecar (X.expect.json), and etcompare's output is checked against the
sidecar's expectations.

Sidecar keys (all optional unless noted):
  buffer       [{"offset", "dtype" (schema name), "values", "bits"?}]: debug
               buffer contents; "bits" gives raw bytes (float8 kinds) and
               "values" what they decode to ("nan"/"inf"/"-inf" for
               non-finite numbers, as in the report)
  buffer_size  pad the debug buffer with zeros to this size
  report       false: etcompare rejects the file, no report exists
  cases        (required) list of:
    name, args (extra CLI arguments), exit (default 0),
    debug_buffer (default true when a buffer is listed),
    stderr / stdout_has / stdout_lacks / table_has / table_lacks: substrings,
    warnings     exact list (in order) of prefixes of report["warnings"],
    report       subset of the --json report: dicts match on the keys given,
                 lists match in length and element by element, {} matches
                 only {}, numbers match exactly; in an event, "elapsed"
                 lists clock differences that the test scales itself,
    tsv_rows     [[event_block_name, event_name], ...] of the --tsv output,
    tsv_header_has / tsv_header_lacks: column names,
    all_buffer_seen  every buffer entry must be shown by some tensor.

Checks made on every report, whatever the sidecar says: it validates
against schema/etcompare-report.schema.json; p10/p50/p90/avg/min/max of
every event equal numpy's linear-interpolation percentiles of its raw
durations (computed here); every tensor with data shows the values written
at its offset, with min/max/mean/nan_count computed here; each block has one
program_outputs and allocators entry per run; program outputs are flagged
output true and intermediate outputs false; every warning is on stderr.
"""
import glob
import json
import math
import os
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from common import ETC, FBS, FLATC, REPORT_SCHEMA, SRC, work_dir  # noqa: E402,F401

FIXTURES = os.path.join(SRC, "tests", "fixtures")

# schema name -> (struct code, element size, name in the report)
DTYPES = {
    "BYTE": ("B", 1, "uint8"),
    "CHAR": ("b", 1, "int8"),
    "SHORT": ("h", 2, "int16"),
    "INT": ("i", 4, "int32"),
    "LONG": ("q", 8, "int64"),
    "HALF": ("e", 2, "float16"),
    "FLOAT": ("f", 4, "float32"),
    "DOUBLE": ("d", 8, "float64"),
    "BOOL": ("?", 1, "bool"),
    "QINT8": ("b", 1, "qint8"),
    "QUINT8": ("B", 1, "quint8"),
    "QINT32": ("i", 4, "qint32"),
    "BFLOAT16": ("bf16", 2, "bfloat16"),
    "BITS16": ("H", 2, "bits16"),
    "FLOAT8E5M2": (None, 1, "float8_e5m2"),
    "FLOAT8E4M3FN": (None, 1, "float8_e4m3fn"),
    "FLOAT8E5M2FNUZ": (None, 1, "float8_e5m2fnuz"),
    "FLOAT8E4M3FNUZ": (None, 1, "float8_e4m3fnuz"),
    "UINT16": ("H", 2, "uint16"),
    "UINT32": ("I", 4, "uint32"),
    "UINT64": ("Q", 8, "uint64"),
}
TIME_SCALE = {"ns": 1000000000, "us": 1000000, "ms": 1000, "s": 1, "cycles": 1}
STATS = ("p10", "p50", "p90", "avg", "min", "max")


# --- helpers shared with test_roundtrip.py -----------------------------------

def fixture_paths():
    return sorted(p for p in glob.glob(os.path.join(FIXTURES, "*.json"))
                  if not p.endswith(".expect.json"))


def sidecar_path(fixture):
    return fixture[:-len(".json")] + ".expect.json"


def build_etdump(fixture, outdir):
    """Encodes fixture JSON with flatc; returns the .etdp path."""
    p = subprocess.run([FLATC, "-b", "--size-prefixed", "-o", outdir, FBS, fixture],
                       capture_output=True, text=True)
    out = os.path.join(outdir, os.path.basename(fixture)[:-len(".json")] + ".etdp")
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc failed on {fixture}: {p.stderr.strip()}")
    return out


def load_validator():
    """A jsonschema validator for the report; raises if the schema is unusable."""
    import jsonschema
    with open(REPORT_SCHEMA) as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_errors(validator, report):
    errs = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
    return [f"schema: at /{'/'.join(str(x) for x in e.absolute_path)}: {e.message[:200]}"
            for e in errs[:5]]


def run_etcompare(argv):
    """Runs etcompare; stdout/stderr decoded as UTF-8 (bad bytes replaced)."""
    p = subprocess.run([ETC] + argv, capture_output=True, timeout=60)
    p.stdout = p.stdout.decode("utf-8", "replace")
    p.stderr = p.stderr.decode("utf-8", "replace")
    return p


def num(v):
    """Expected number as a double ("nan"/"inf"/"-inf" strings allowed)."""
    if isinstance(v, str):
        return float(v)
    return float(v)


def report_num(x):
    """How the report writes a number: non-finite doubles as "nan"/"inf"/"-inf"."""
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


# --- independent computations ----------------------------------------------

def np_lerp(a, b, t):
    # numpy's _lerp: a + (b-a)*t, evaluated from b for t >= 0.5
    d = b - a
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def np_percentile(values, q):
    s = sorted(values)
    h = (len(s) - 1) * (q / 100)
    lo = math.floor(h)
    hi = min(lo + 1, len(s) - 1)
    return np_lerp(s[lo], s[hi], h - lo)


def expected_stats(raw):
    total = 0.0
    for v in raw:
        total += v
    return {"p10": np_percentile(raw, 10), "p50": np_percentile(raw, 50),
            "p90": np_percentile(raw, 90), "avg": total / len(raw),
            "min": min(raw), "max": max(raw)}


def encode_entry(e):
    dt = e["dtype"]
    code, size, _ = DTYPES[dt]
    vals = e["values"]
    if "bits" in e:
        assert size == 1 and len(e["bits"]) == len(vals), f"bad bits for {dt}"
        return bytes(e["bits"])
    out = b""
    for v in vals:
        if code == "bf16":
            b = struct.pack("<f", num(v))
            assert b[:2] == b"\0\0", f"{v} is not a bfloat16 value"
            out += b[2:]
        elif code in ("e", "f"):
            b = struct.pack("<" + code, num(v))
            back = struct.unpack("<" + code, b)[0]
            assert back == num(v) or math.isnan(back), f"{v} is not exact in {dt}"
            out += b
        elif code == "d":
            out += struct.pack("<d", num(v))
        elif code == "?":
            out += struct.pack("<?", bool(v))
        else:
            out += struct.pack("<" + code, int(v))
    return out


def write_buffer(entries, size, path):
    data = bytearray(size or 0)
    for e in entries:
        b = encode_entry(e)
        end = e["offset"] + len(b)
        if end > len(data):
            data.extend(b"\0" * (end - len(data)))
        data[e["offset"]:end] = b
    with open(path, "wb") as f:
        f.write(bytes(data))


# --- matching --------------------------------------------------------------

def same_num(exp, act):
    if isinstance(act, bool) or not isinstance(act, (int, float, str)):
        return False
    if isinstance(exp, str) or isinstance(act, str):
        return isinstance(exp, str) and isinstance(act, str) and exp == act
    if isinstance(exp, int) and isinstance(act, int):
        return exp == act
    e, a = float(exp), float(act)
    if math.isnan(e):
        return math.isnan(a)
    return e == a and math.copysign(1, e) == math.copysign(1, a)


def match(exp, act, path, errs, factor):
    if isinstance(exp, dict):
        if not isinstance(act, dict):
            errs.append(f"{path}: expected an object, got {act!r:.80}")
            return
        if not exp and act:
            errs.append(f"{path}: expected {{}}, got {act!r:.120}")
        for k, v in exp.items():
            if k == "elapsed":
                raw = act.get("raw")
                want = [x / factor for x in v]
                if not isinstance(raw, list) or len(raw) != len(want) or \
                        not all(same_num(w, r) for w, r in zip(want, raw)):
                    errs.append(f"{path}.raw: expected {want} (elapsed {v} / {factor}), got {raw}")
                continue
            if k not in act:
                errs.append(f"{path}: missing key {k!r}")
                continue
            match(v, act[k], f"{path}.{k}", errs, factor)
    elif isinstance(exp, list):
        if not isinstance(act, list) or len(act) != len(exp):
            errs.append(f"{path}: expected {len(exp)} items, got {act!r:.200}")
            return
        for i, (e, a) in enumerate(zip(exp, act)):
            match(e, a, f"{path}[{i}]", errs, factor)
    elif exp is None or isinstance(exp, bool):
        if act is not exp:
            errs.append(f"{path}: expected {exp!r}, got {act!r:.80}")
    elif isinstance(exp, (int, float)):
        if not same_num(exp, act):
            errs.append(f"{path}: expected {exp!r}, got {act!r:.80}")
    elif isinstance(exp, str):
        if act != exp:
            errs.append(f"{path}: expected {exp!r}, got {act!r:.80}")
    else:
        errs.append(f"{path}: bad expectation {exp!r}")


# --- generic report checks --------------------------------------------------

def check_tensor(t, path, entries, seen, max_values, errs):
    if not t.get("has_data"):
        for k in ("values", "min", "max", "mean", "nan_count"):
            if k in t:
                errs.append(f"{path}: tensor without data has {k!r}")
        return
    if entries is None:
        errs.append(f"{path}: has_data true but no debug buffer was given")
        return
    if t["numel"] == 0:  # an empty tensor has data (none), whatever its offset, and no stats
        for k in ("values", "min", "max", "mean", "nan_count"):
            if k in t:
                errs.append(f"{path}: empty tensor has {k!r}")
        return
    e = entries.get(t["offset"])
    if e is None:
        errs.append(f"{path}: no buffer entry at offset {t['offset']}")
        return
    seen.add(t["offset"])
    code, size, name = DTYPES[e["dtype"]]
    vals = [num(v) for v in e["values"]]
    if t["dtype"] != name:
        errs.append(f"{path}: dtype {t['dtype']!r}, buffer entry is {name!r}")
    if t["numel"] != len(vals) or t["nbytes"] != len(vals) * size:
        errs.append(f"{path}: numel/nbytes {t['numel']}/{t['nbytes']}, expected "
                    f"{len(vals)}/{len(vals) * size}")
        return
    shown = t.get("values", [])
    want = [report_num(v) for v in vals[:max_values]]
    if len(shown) != len(want) or not all(same_num(w, s) for w, s in zip(want, shown)):
        errs.append(f"{path}.values: expected {want}, got {shown}")
    finite = [v for v in vals if not math.isnan(v)]
    total = 0.0
    for v in finite:
        total += v
    exp = {"nan_count": len(vals) - len(finite),
           "min": min(finite) if finite else math.nan,
           "max": max(finite) if finite else math.nan,
           "mean": total / len(finite) if finite else math.nan}
    for k, v in exp.items():
        got = t.get(k)
        w = report_num(v)
        if not same_num(w, got):
            errs.append(f"{path}.{k}: expected {w}, got {got!r}")


def check_value(v, path, output, entries, seen, max_values, errs):
    if v.get("output") is not output:
        errs.append(f"{path}: output flag {v.get('output')!r}, expected {output}")
    for i, t in enumerate(v.get("tensors", [])):
        check_tensor(t, f"{path}.tensors[{i}]", entries, seen, max_values, errs)


def check_report(rep, entries, seen, max_values, stderr, errs):
    for w in rep["warnings"][:20]:
        if f"etcompare: warning: {w}" not in stderr:
            errs.append(f"warning not on stderr: {w}")
    for bi, b in enumerate(rep["blocks"]):
        bp = f"blocks[{bi}]"
        n = len(b["runs"])
        # runs 0-based within the block, as upstream's lists; etdump_run their run_data index
        for key in ("program_outputs", "allocators"):
            if [(p["run"], p["etdump_run"]) for p in b[key]] != list(enumerate(b["runs"])):
                errs.append(f"{bp}.{key}: runs {[(p['run'], p['etdump_run']) for p in b[key]]}"
                            f" != {list(enumerate(b['runs']))}")
        for k, po in enumerate(b["program_outputs"]):
            for j, v in enumerate(po["outputs"]):
                check_value(v, f"{bp}.program_outputs[{k}].outputs[{j}]", True, entries, seen,
                            max_values, errs)
        for ei, ev in enumerate(b["events"]):
            ep = f"{bp}.events[{ei}]"
            if ev["index"] != ei:
                errs.append(f"{ep}.index is {ev['index']}")
            for j, v in enumerate(ev["debug_data"]):
                check_value(v, f"{ep}.debug_data[{j}]", False, entries, seen, max_values, errs)
            raw = ev["raw"]
            if raw is None:
                for k in STATS + ("start_time",):
                    if ev[k] is not None:
                        errs.append(f"{ep}.{k}: {ev[k]!r} without raw durations")
                continue
            if len(raw) != n or len(ev["start_time"]) != n:
                errs.append(f"{ep}: {len(raw)} durations for {n} runs")
                continue
            want = expected_stats(raw)
            for k in STATS:
                exact = k != "avg" or n < 8  # numpy sums 8+ values pairwise
                ok = same_num(want[k], ev[k]) if exact else \
                    math.isclose(want[k], ev[k], rel_tol=1e-12)
                if not ok:
                    errs.append(f"{ep} ({ev['event_name']}).{k}: expected {want[k]!r} "
                                f"(numpy linear over {raw}), got {ev[k]!r}")


def check_tsv(text, rep, case, errs):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        errs.append("tsv: empty")
        return
    header = lines[0].split("\t")
    unit = rep["target_time_scale"]
    want_cols = ["", "event_block_name", "event_name"] + [f"{s} ({unit})" for s in STATS]
    if header[:len(want_cols)] != want_cols:
        errs.append(f"tsv: header {header}")
        return
    for c in case.get("tsv_header_has", []):
        if c not in header:
            errs.append(f"tsv: no column {c!r}")
    for c in case.get("tsv_header_lacks", []):
        if c in header:
            errs.append(f"tsv: unexpected column {c!r}")
    rows = [ln.split("\t") for ln in lines[1:]]
    shown = [(b["name"], e) for b in rep["blocks"] for e in b["events"]
             if e["event_name"] != "OPERATOR_CALL"]
    if "tsv_rows" in case and [r[1:3] for r in rows] != case["tsv_rows"]:
        errs.append(f"tsv: rows {[r[1:3] for r in rows]}, expected {case['tsv_rows']}")
    if len(rows) != len(shown):
        errs.append(f"tsv: {len(rows)} rows, report has {len(shown)} non-OPERATOR_CALL events")
        return
    deleg = header.index("is_delegated_op")
    for i, (r, (bname, e)) in enumerate(zip(rows, shown)):
        if len(r) != len(header) or r[0] != str(i) or r[1] != bname or r[2] != e["event_name"]:
            errs.append(f"tsv row {i}: {r}")
            continue
        for j, s in enumerate(STATS):
            cell = r[3 + j]
            if e[s] is None:
                if cell != "":
                    errs.append(f"tsv row {i} {s}: {cell!r} for an event without durations")
            elif cell == "" or float(cell) != e[s]:
                errs.append(f"tsv row {i} {s}: {cell!r} != report {e[s]!r}")
        if r[deleg] != ("True" if e["is_delegated_op"] else "False"):
            errs.append(f"tsv row {i} is_delegated_op: {r[deleg]!r}")


# --- running ----------------------------------------------------------------

ASSERTING_KEYS = ("report", "warnings", "stderr", "stdout_has", "stdout_lacks", "table_has",
                  "table_lacks", "tsv_rows", "tsv_header_has", "all_buffer_seen")


def run_case(name, etdp, bufpath, entries, case, validator, tmp):
    errs = []
    if not any(k in case for k in ASSERTING_KEYS):
        return ["case asserts nothing"]
    args = list(case.get("args", []))
    use_buf = bufpath is not None and case.get("debug_buffer", True)
    jpath = os.path.join(tmp, f"{name}.report.json")
    tpath = os.path.join(tmp, f"{name}.tsv")
    want_tsv = any(k in case for k in ("tsv_rows", "tsv_header_has", "tsv_header_lacks"))
    argv = ["--etdump", etdp] + (["--debug_buffer", bufpath] if use_buf else []) + args
    argv += ["--json", jpath] + (["--tsv", tpath] if want_tsv else [])
    p = run_etcompare(argv)
    want_exit = case.get("exit", 0)
    if p.returncode != want_exit:
        errs.append(f"exit {p.returncode}, expected {want_exit}; stderr: {p.stderr.strip()[:300]}")
    for s in case.get("stderr", []):
        if s not in p.stderr:
            errs.append(f"stderr lacks {s!r}: {p.stderr.strip()[:300]}")
    for s in case.get("stdout_has", []) + case.get("table_has", []):
        if s not in p.stdout:
            errs.append(f"stdout lacks {s!r}")
    for s in case.get("stdout_lacks", []) + case.get("table_lacks", []):
        if s in p.stdout:
            errs.append(f"stdout has {s!r}")
    if want_exit != 0:
        for f in (jpath, tpath):
            if os.path.exists(f):
                errs.append(f"{os.path.basename(f)} written although etcompare failed")
        return errs
    if p.returncode != 0:
        return errs
    try:
        with open(jpath) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        return errs + [f"--json output unreadable: {e}"]
    errs += schema_errors(validator, rep)
    if errs:
        return errs
    max_values = 8
    if "--max-values" in args:
        max_values = int(args[args.index("--max-values") + 1])
    seen = set()
    check_report(rep, entries if use_buf else None, seen, max_values, p.stderr, errs)
    if case.get("all_buffer_seen") and entries and seen != set(entries):
        errs.append(f"buffer entries never shown: {sorted(set(entries) - seen)}")
    if "warnings" in case:
        w = rep["warnings"]
        if len(w) != len(case["warnings"]) or \
                not all(a.startswith(e) for e, a in zip(case["warnings"], w)):
            errs.append(f"warnings {w}, expected {case['warnings']}")
    src = args[args.index("--source_time_scale") + 1] if "--source_time_scale" in args else "ns"
    tgt = args[args.index("--target_time_scale") + 1] if "--target_time_scale" in args else "ms"
    if "report" in case:
        match(case["report"], rep, "report", errs, TIME_SCALE[src] / TIME_SCALE[tgt])
    if want_tsv:
        try:
            with open(tpath, "rb") as f:
                check_tsv(f.read().decode("utf-8", "replace"), rep, case, errs)
        except OSError as e:
            errs.append(f"tsv not written: {e}")
    return errs


def main():
    passed = failed = 0
    try:
        validator = load_validator()
    except Exception as e:  # an unusable schema fails every case below
        print(f"FAIL schema: {REPORT_SCHEMA}: {e}")
        validator = None
        failed += 1
    tmp = work_dir("fixtures")
    fixtures = fixture_paths()
    if not fixtures:
        print("FAIL no fixtures found in " + FIXTURES)
        failed += 1
    for fx in fixtures:
        base = os.path.basename(fx)[:-len(".json")]
        try:
            with open(sidecar_path(fx)) as f:
                side = json.load(f)
            etdp = build_etdump(fx, tmp)
            entries = {e["offset"]: e for e in side.get("buffer", [])} or None
            bufpath = None
            if entries:
                bufpath = os.path.join(tmp, base + ".debug.bin")
                write_buffer(side["buffer"], side.get("buffer_size"), bufpath)
        except Exception as e:
            print(f"FAIL {base}: setup: {e}")
            failed += 1
            continue
        if not side.get("cases"):
            print(f"FAIL {base}: sidecar has no cases")
            failed += 1
        for case in side.get("cases", []):
            label = f"{base}/{case['name']}"
            if validator is None:
                errs = ["no usable report schema"]
            else:
                try:
                    errs = run_case(label.replace("/", "_"), etdp, bufpath, entries, case,
                                    validator, tmp)
                except Exception as e:
                    errs = [f"{type(e).__name__}: {e}"]
            if errs:
                failed += 1
                print(f"FAIL {label}")
                for e in errs[:12]:
                    print(f"       {e}")
                if len(errs) > 12:
                    print(f"       ... {len(errs) - 12} more")
            else:
                passed += 1
                print(f"ok   {label}")
    if failed == 0:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"(files kept in {tmp})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
