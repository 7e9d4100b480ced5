"""Inspector.calculate_numeric_gap (python/etcompare, issue 16) on the
numeric-gap fixtures of tests/test_numgap.py (a 22-op chain whose device
run goes wrong at op 9), for the three distances and both kinds of
reference (an .npz of AOT intermediates keyed by debug handle, and the
Inspector of a reference run): upstream's columns first, one row per op in
execution order, gap values against numpy float64, the intermediate
outputs as zero-copy arrays, the first divergence; the list-of-dicts form
without pandas; errors."""
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402
import test_python as T  # noqa: E402

E = setup()
import numpy as np  # noqa: E402
import test_numgap as NG  # noqa: E402
import make_npz as NPZ  # noqa: E402

# the library's --numgap-tsv order (upstream's current calculate_numeric_gap
# could not be read; its comparator frame has aot_ops, aot_intermediate_output,
# runtime_ops, runtime_intermediate_output, gap in this order)
UPSTREAM = ["aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops",
            "runtime_debug_handle", "runtime_intermediate_output", "gap", "stacktraces"]


def expected_gap(r, a, distance):
    r = np.asarray(r, dtype=np.float64)
    a = np.asarray(a, dtype=np.float64)
    d = a - r
    if distance == "MSE":
        return float(np.mean(d * d))
    if distance == "L1":
        return float(np.sum(np.abs(d)))
    noise = np.mean(d * d)
    return math.inf if noise == 0 else float(10 * np.log10(np.mean(r * r) / noise))


def close(x, y, rel=1e-12):
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= rel * max(abs(x), abs(y)) or x == y


def records(df):
    return df.to_dict("records") if hasattr(df, "to_dict") else df


def main():
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as d:
        ref, dev = NG.chain(False), NG.chain(True)
        rec = NG.chain_etrecord(d)
        ref_etdp, ref_dbg = NG.chain_dump(d, "ref", ref)
        dev_etdp, dev_dbg = NG.chain_dump(d, "dev", dev)
        npz = os.path.join(d, "chain_ref.npz")
        NPZ.write_npz(npz, [(str(i + 1), NPZ.npy("<f4", NG.SHAPE, NPZ.encode("<f4", x)))
                            for i, x in enumerate(ref)])
        insp = E.Inspector(etdump_path=dev_etdp, debug_buffer_path=dev_dbg, etrecord=rec)
        rinsp = E.Inspector(etdump_path=ref_etdp, debug_buffer_path=ref_dbg, etrecord=rec)
        for rname, reference in (("npz", npz), ("inspector", rinsp)):
            for dist in ("MSE", "L1", "SNR"):
                tag = f"numgap {rname} {dist}"
                df = insp.calculate_numeric_gap(distance=dist, reference=reference, min_snr=40)
                rows = records(df)
                cols = list(df.columns) if hasattr(df, "columns") else list(rows[0])
                check(f"{tag}: upstream's columns first, then etcompare's",
                      cols[:8] == UPSTREAM and "snr" in cols and "status" in cols, cols)
                check(f"{tag}: one row per op in execution order",
                      [r["runtime_debug_handle"] for r in rows] ==
                      [(i + 1,) for i in range(NG.NOPS)] and
                      [r["aot_debug_handle"] for r in rows] == [(i + 1,) for i in range(NG.NOPS)],
                      [r["runtime_debug_handle"] for r in rows][:4])
                bad = []
                for i, r in enumerate(rows):
                    want = expected_gap(ref[i], dev[i], dist)
                    if len(r["gap"]) != 1 or not close(r["gap"][0], want):
                        bad.append(f"row {i}: {r['gap']} vs {want}")
                check(f"{tag}: every gap equals numpy float64", not bad, bad[:3])
                bad = []
                for i, r in enumerate(rows):
                    a, b = r["runtime_intermediate_output"], r["aot_intermediate_output"]
                    if not (isinstance(a, np.ndarray) and a.shape == NG.SHAPE and
                            a.reshape(-1).tolist() == dev[i] and not a.flags.writeable and
                            isinstance(b, np.ndarray) and b.reshape(-1).tolist() == ref[i]):
                        bad.append(i)
                check(f"{tag}: intermediate outputs are the runtime's and the reference's "
                      f"values, read-only arrays", not bad, bad[:5])
                firsts = [i for i, r in enumerate(rows) if r["first_divergence"]]
                check(f"{tag}: the first divergence is op {NG.BAD}, failing from there on",
                      firsts == [NG.BAD] and
                      all(r["status"] == ("pass" if i < NG.BAD else "FAIL")
                          for i, r in enumerate(rows)), firsts)
                check(f"{tag}: stacktraces as upstream (event name -> trace)",
                      any(v.endswith("x = self.layer9(x)\n")
                          for v in rows[NG.BAD]["stacktraces"].values()),
                      rows[NG.BAD]["stacktraces"])
                if hasattr(df, "attrs"):
                    check(f"{tag}: attrs name the first divergence",
                          df.attrs.get("first_divergence") == NG.BAD, df.attrs)
        # the arrays outlive the Inspector and the gap
        df = insp.calculate_numeric_gap(reference=npz)
        arr = records(df)[3]["aot_intermediate_output"]
        del df
        import gc
        gc.collect()
        check("numgap: an .npz array outlives the numeric gap",
              arr.reshape(-1).tolist() == ref[3])
        # without pandas: a list of dicts with the same rows
        code = ("import sys; sys.modules['pandas'] = None; import etcompare as E; "
                f"i = E.Inspector(etdump_path={dev_etdp!r}, debug_buffer_path={dev_dbg!r}, "
                f"etrecord={rec!r}); rows = i.calculate_numeric_gap(distance='L1', "
                f"reference={npz!r}); print(isinstance(rows, list), len(rows), rows[9]['gap'][0], "
                "rows.attrs['first_divergence'])")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        out = p.stdout.split()
        check("numgap without pandas: a list of dicts, the same values, attrs as the "
              "DataFrame's",
              p.returncode == 0 and out[:2] == ["True", str(NG.NOPS)] and
              out[3:] == ["None"] and
              close(float(out[2]), expected_gap(ref[9], dev[9], "L1")), p.stdout + p.stderr[-400:])
        # errors
        for kw, what in (({"distance": "L2", "reference": npz}, "distance"),
                         ({}, "reference=")):
            try:
                insp.calculate_numeric_gap(**kw)
                check(f"numgap errors: {what}", False)
            except E.Error as e:
                check(f"numgap errors: bad {what} raises etcompare.Error", what in str(e), e)
        plain = E.Inspector(etdump_path=dev_etdp, debug_buffer_path=dev_dbg)
        try:
            plain.calculate_numeric_gap(reference=npz)
            check("numgap errors: an .npz without an ETRecord raises", False)
        except E.Error as e:
            check("numgap errors: an .npz without an ETRecord raises the library's message",
                  "ETRecord" in str(e) or "etrecord" in str(e), e)
    print(f"{T.passed} passed, {T.failed} failed")
    sys.exit(1 if T.failed or not T.passed else 0)


if __name__ == "__main__":
    main()
