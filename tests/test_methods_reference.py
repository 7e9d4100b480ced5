"""Every method with the reference run from the ETRecord (issue 26, item 3:
"a two-method record (forward, decode) gives a numeric gap per method"), no
reference ETDump: a two-method ETRecord built from two real exports
(tests/data/realexport: the mlp's Edge program, weights and example inputs
as `forward`, the cnn's as `decode`; debug_handle_map {"forward": mlp's,
"decode": cnn's}) and one ETDump holding the mlp's first Execute run as
block "forward" and the cnn's as block "decode" (one debug buffer: the
cnn's tensors moved past the mlp's). In decode, the output of one op is
scaled by 1.01 in the debug buffer (a broken kernel).

  * the main command alone runs the numeric gap once per method, each from
    that method's own graph, weights and inputs, under its own heading;
  * per method (--json: numeric_gap, then numeric_gap_more), every row's
    cumulative SNR equals numpy's float64 SNR of the runtime tensor against
    <model>_aot_f64.npz (0.01 dB), and forward passes --min-snr 60 while
    decode's first divergence is the scaled op; JUnit has one numeric-gap
    suite per method and its failure count is the exit status's.
"""
import ast
import json
import math
import os
import subprocess
import sys
import zipfile

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import etrecord_gen as G  # noqa: E402
import test_numgap_reference as R  # noqa: E402

REAL = R.REAL
METHODS = {"forward": "mlp", "decode": "cnn"}
EDGE = "edge_dialect_exported_program"


def decode_etdump(d, m):
    subprocess.run([C.FLATC, "--json", "--raw-binary", "--size-prefixed", "--strict-json",
                    "-o", d, C.FBS, "--", os.path.join(REAL, f"{m}.etdp")], check=True,
                   capture_output=True)
    with open(os.path.join(d, f"{m}.json")) as f:
        return json.load(f)


ELSIZE = {"FLOAT": 4, "DOUBLE": 8, "INT": 4, "LONG": 8, "BYTE": 1, "CHAR": 1, "SHORT": 2,
          "HALF": 2, "BOOL": 1}


def tensors(obj):
    if isinstance(obj, dict):
        if "offset" in obj and "scalar_type" in obj:
            yield obj
        for v in obj.values():
            yield from tensors(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from tensors(v)


def repack(run, data, buf):
    """Copies the run's tensors from `data` to the end of `buf` (16-aligned,
    shared offsets stay shared) and rewrites their offsets."""
    moved = {}
    for t in tensors(run):
        n = int(np.prod(t["sizes"])) * ELSIZE[t["scalar_type"]]
        key = (t["offset"], n)
        if key not in moved:
            while len(buf) % 16:
                buf.append(0)
            moved[key] = len(buf)
            buf += data[t["offset"]:t["offset"] + n]
        t["offset"] = moved[key]


def record(d):
    members = [("ETRECORD_V0", b"")]
    dhm, dm = {}, {}
    for meth, m in METHODS.items():
        with zipfile.ZipFile(os.path.join(REAL, f"{m}.etrecord")) as z:
            for suffix in ("", "_state_dict", "_constants", "_example_inputs"):
                members.append((f"{EDGE}/{meth}{suffix}", z.read(EDGE + suffix)))
            dhm[meth] = json.loads(z.read("debug_handle_map"))["forward"]
            dm[meth] = {}
    members += [("debug_handle_map", json.dumps(dhm).encode()),
                ("delegate_map", json.dumps(dm).encode())]
    path = os.path.join(d, "two_real.etrecord")
    with open(path, "wb") as f:
        f.write(G.zip_bytes(members))
    return path


def dump(d, bad_instr, stem="two"):
    """The ETDump of the two methods and its debug buffer; decode's tensor of
    instruction `bad_instr` scaled by 1.01. Returns the paths and the
    decode tensor's (offset, count)."""
    runs, buf = [], bytearray()
    scaled = None
    for meth, m in METHODS.items():
        doc = decode_etdump(d, m)
        run = next(r for r in doc["run_data"] if r["name"] == "Execute")
        with open(os.path.join(REAL, f"{m}_debug.bin"), "rb") as f:
            data = f.read()
        repack(run, data, buf)
        run["name"] = meth
        runs.append(run)
        if meth == "decode":
            for e in run["events"]:
                de = e.get("debug_event")
                if de and de.get("instruction_id") == bad_instr and \
                        de.get("debug_entry", {}).get("val") == "Tensor" and \
                        not de["debug_entry"].get("output"):
                    t = de["debug_entry"]["tensor"]
                    n = int(np.prod(t["sizes"]))
                    a = np.frombuffer(bytes(buf[t["offset"]:t["offset"] + 4 * n]), np.float32)
                    buf[t["offset"]:t["offset"] + 4 * n] = (a * np.float32(1.01)).astype(
                        np.float32).tobytes()
                    scaled = (t["offset"], n)
    src = os.path.join(d, stem + ".json")
    with open(src, "w") as f:
        json.dump({"run_data": runs}, f)
    subprocess.run([C.FLATC, "-b", "--size-prefixed", "-o", d, C.FBS, src], check=True,
                   capture_output=True)
    dbg = os.path.join(d, stem + "_debug.bin")
    with open(dbg, "wb") as f:
        f.write(bytes(buf))
    return os.path.join(d, stem + ".etdp"), dbg, scaled


def expected(m, scale_handles=None):
    """{(handles, output): numpy SNR} of model m's runtime against its oracle;
    the event whose handles are `scale_handles` scaled by 1.01."""
    by_handle, z = R.oracle(m)
    want = {}
    for _name, hs, data in R.runtime_events(m):
        node = by_handle.get(max(hs))
        if not node:
            continue
        for i, a in enumerate(data):
            if scale_handles is not None and sorted(hs) == sorted(scale_handles):
                a = (a.astype(np.float32) * np.float32(1.01)).astype(np.float32)
            items = node[1].get("tuple_items")
            key = items.get(str(i)) if items else (node[0] if i == 0 else None)
            if key is None or key not in z.files:
                continue
            want[(tuple(sorted(hs)), i)] = R.snr64(z[key], a) if a.size else math.nan
    return want


def compare_rows(label, rows, want):
    bad, n = [], 0
    for r in rows:
        k = (tuple(sorted(r["runtime_debug_handle"])), r["output"])
        if k not in want:
            continue
        n += 1
        got, exp = R.num(r.get("cumulative_snr")), want[k]
        if not ((math.isinf(got) and math.isinf(exp)) or
                (math.isnan(got) and math.isnan(exp)) or abs(got - exp) <= 0.01):
            bad.append((k, r.get("aot_ops"), got, exp))
    C.check(f"{label}: cumulative SNR per row = numpy float64 against the oracle (0.01 dB)",
            n > 0 and n >= 0.9 * len(want) and not bad, f"compared {n} of {len(want)}: {bad[:4]}")


def main():
    d = C.work_dir("methods_ref")
    rec = record(d)
    with zipfile.ZipFile(os.path.join(REAL, "cnn.etrecord")) as z:
        cnn_dhm = json.loads(z.read("debug_handle_map"))["forward"]
    bad_instr = 2  # decode's third instruction: a convolution's successor in the cnn
    etdp, dbg, scaled = dump(d, bad_instr)
    C.check("the generator scaled one decode tensor", scaled is not None, "")
    base = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec]
    rc, out, err = C.run(*base, "--min-snr", "60")
    C.check("the main command alone: a numeric gap per method, each under its heading",
            "numeric gap of method forward (EventBlock forward)" in out and
            "numeric gap of method decode (EventBlock decode)" in out, out[-1500:] + err[-1500:])
    C.check("every method runs from its own graph (no reference ETDump, no note of failure)",
            "no numeric gap" not in err and "error" not in err.lower(), err[-1500:])
    C.check("forward passes, decode's first divergence fails the gate (exit 1)",
            rc == 1 and "intermediate outputs pass" in err and "first divergence" in err,
            f"rc={rc} {err[-1500:]}")
    hs = cnn_dhm[str(bad_instr)]
    hs = hs if isinstance(hs, list) else [hs]
    js, ju = os.path.join(d, "two_report.json"), os.path.join(d, "two_junit.xml")
    tsv = os.path.join(d, "two_numgap.tsv")
    rc, out, err = C.run(*base, "--min-snr", "60", "--json", js, "--no-table",
                         "--numgap-tsv", tsv)
    C.check("--json of both methods: exit 1 (decode diverges)", rc == 1, f"rc={rc} {err[-800:]}")
    rc2, tsv_out, _ = C.run(*base, "--min-snr", "60", "--no-table", "--numgap-tsv", "-")
    doc = C.load_json(js) if os.path.exists(js) else {}
    R.validate("two methods", doc)
    more = doc.get("numeric_gap_more") or []
    gaps = {"forward": doc.get("numeric_gap") or {},
            "decode": (more[0].get("numeric_gap") or {}) if more else {}}
    C.check("--json: forward's gap, then decode's in numeric_gap_more",
            len(more) == 1 and more[0].get("name") == "decode", json.dumps(more)[:300])
    # --numgap-tsv holds the gap shown (forward's), written once: a file and
    # "-" alike (decode's rows used to overwrite the file's)
    lines = open(tsv).read().splitlines() if os.path.exists(tsv) else []
    head = lines[0].split("\t") if lines else []
    col = head.index("runtime_debug_handle") if "runtime_debug_handle" in head else 0
    fwd = gaps["forward"].get("rows", [])
    C.check("--numgap-tsv FILE with two methods: forward's rows (the gap shown), "
            "one header, not decode's",
            len(lines) == 1 + len(fwd) and fwd and
            [list(ast.literal_eval(ln.split("\t")[col])) for ln in lines[1:]] ==
            [list(r["runtime_debug_handle"]) for r in fwd],
            f"{len(lines)} lines, {len(fwd)} forward rows: {lines[1:3]} / {[r['runtime_debug_handle'] for r in fwd[:2]]}")
    C.check("--numgap-tsv - gives the same bytes as the file", rc2 == 1 and
            tsv_out == open(tsv).read(), f"rc={rc2} {tsv_out[:200]}")
    for meth, m in METHODS.items():
        ng = gaps[meth]
        rows = ng.get("rows", [])
        compare_rows(meth, rows, expected(m, hs if meth == "decode" else None))
        C.check(f"{meth}: the rows are that method's (its block)",
                ng.get("block") == meth and rows, f"block={ng.get('block')} rows={len(rows)}")
        if meth == "forward":
            C.check("forward: passes --min-snr 60", ng.get("failures") == 0, ng.get("failures"))
        else:
            fd = ng.get("first_divergence")
            row = rows[fd] if isinstance(fd, int) and 0 <= fd < len(rows) else {}
            C.check("decode: the first divergence is the scaled op (its debug handles)",
                    sorted(row.get("runtime_debug_handle", [])) == sorted(hs),
                    f"fd={fd} row={json.dumps(row)[:300]} handles={hs}")
    # JUnit of every method's gap (against the unperturbed run as reference ETDump)
    import xml.etree.ElementTree as ET
    ref_etdp, ref_dbg, _ = dump(d, -1, "ref")
    rc, out, err = C.run(*base, "--reference-etdump", ref_etdp, "--reference-debug-buffer",
                         ref_dbg, "--min-snr", "60", "--junit", ju, "--no-table")
    C.check("JUnit run: exit 1, no internal disagreement between the gate and JUnit",
            rc == 1 and "internal error" not in err, f"rc={rc} {err[-800:]}")
    try:
        root = ET.parse(ju).getroot()
    except Exception as e:  # noqa: BLE001
        C.check("JUnit parses", False, repr(e))
        root = None
    if root is not None:
        suites = {s.get("name"): s for s in root.iter("testsuite")}
        f, dsu = suites.get("etcompare numeric gap: forward"), suites.get(
            "etcompare numeric gap: decode")
        C.check("JUnit: one numeric-gap suite per method, decode's failures counted",
                f is not None and dsu is not None and f.get("failures") == "0" and
                dsu.get("failures") == "1" and
                root.get("failures") == dsu.get("failures"), str(list(suites)))
    C.finish()


if __name__ == "__main__":
    main()
