"""A large weight's transpose is never copied (src/reference/refgraph_call.c,
fold_transpose; ref_op.h, "transposed"): a MobileNetV2 classifier (64 x
1280 float32, above the 256 KiB at which products widen a weight by blocks)
from bench/gen_mobilenet.py, run by the reference executor in float64.

- The folded permute_copy's output, handed to a callback, is the weight's
  transpose bit for bit, float32 (ref_tensor_dense).
- addmm reads the transposed bytes where they lie and gives the same bits
  as the same addmm on dense inputs (etc_refrun_eval with every input
  replaced by a copy: the path without the view), and numpy's float64
  product within 1e-12.
- In float32 mode (no blocks) and through the main command (the numeric
  gap compares the permute with the runtime's: SNR inf) the same holds.
- The numeric gap reads the permute's output where it lies (strided,
  etc_refrun_output_layout): its summary and first values are W.T's; with
  one element of the runtime's logged permute changed, the row fails with
  max |d| at that element's row-major index (the first divergence keeps a
  dense copy)."""
import io
import os
import subprocess
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

TOOL = os.environ.get("ETC_REF_GRAPH_DUMP") or os.path.join(
    os.path.dirname(C.ETC), "tests", "ref_graph_dump")
GEN = os.path.join(C.SRC, "bench", "gen_mobilenet.py")
PERM, ADDMM, VIEW = "aten_permute_copy_default", "aten_addmm_default", "aten_view_copy_default"


def rel_l2(got, want):
    want = np.asarray(want, np.float64)
    d = np.linalg.norm(want)
    return np.linalg.norm(np.asarray(got, np.float64) - want) / (d if d else 1.0)


def weights(rec):
    import torch
    with zipfile.ZipFile(rec) as z:
        sd = torch.load(io.BytesIO(z.read("edge_dialect_exported_program_state_dict")))
    return (sd["classifier.1.weight"].detach().numpy(), sd["classifier.1.bias"].detach().numpy())


def preview_ok(cell, want):
    """'float32 [R, C]  min=.. max=.. mean=..  [v0, v1, ...]' against want."""
    try:
        stats = dict(kv.split("=") for kv in cell.split("  ")[1].split())
        first = [float(v) for v in cell.split("[")[2].split(",")[:4]]
    except (IndexError, ValueError):
        return False
    w64 = want.astype(np.float64)
    close = [np.isclose(float(stats["min"]), w64.min(), rtol=1e-5),
             np.isclose(float(stats["max"]), w64.max(), rtol=1e-5),
             np.isclose(float(stats["mean"]), w64.mean(), rtol=1e-4, atol=1e-9)]
    return all(close) and np.allclose(first, w64.ravel()[:4], rtol=1e-5)


def dump(rec, out, *args):
    env = dict(os.environ, ETC_THREADS="1")
    p = subprocess.run([TOOL, rec, *args, out], capture_output=True, text=True, env=env)
    return p.returncode, p.stderr.strip()


def main():
    d = C.work_dir("ref_transposed")
    with C.harness():
        p = subprocess.run([sys.executable, GEN, d, "--width", "0.25", "--size", "16",
                            "--classes", "64", "--stem", "t"], capture_output=True, text=True)
        C.check("gen_mobilenet writes the files", p.returncode == 0, p.stderr[-500:])
        rec = os.path.join(d, "t.etrecord")
        w, b = weights(rec)
        C.check("the classifier's weight is above the blocks' threshold (256 KiB as float64)",
                w.dtype == np.float32 and w.size * 8 > 256 << 10, w.shape)
        out = os.path.join(d, "f64.npz")
        rc, err = dump(rec, out, "--eval")
        C.check("float64: the graph runs", rc == 0, err)
        z = dict(np.load(out)) if rc == 0 else {}
        perm = z.get(PERM)
        C.check("float64: the folded permute is the weight's transpose, float32, bit for bit",
                perm is not None and perm.dtype == np.float32 and perm.shape == w.T.shape and
                np.array_equal(perm, w.T), None if perm is None else (perm.dtype, perm.shape))
        C.check("float64: --eval of the permute (the folded values) is the same",
                z.get(PERM + "@eval") is not None and np.array_equal(z[PERM + "@eval"], w.T))
        got, again = z.get(ADDMM), z.get(ADDMM + "@eval")
        C.check("float64: addmm on the transposed bytes = addmm on dense copies, bit for bit",
                got is not None and again is not None and got.dtype == np.float64 and
                np.array_equal(got, again),
                None if got is None or again is None else np.abs(got - again).max())
        x = z.get(VIEW)
        want = None if x is None else x.astype(np.float64) @ w.T.astype(np.float64) + b
        e = rel_l2(got, want) if got is not None and want is not None else None
        C.check("float64: addmm within 1e-12 of numpy's float64 product", e is not None and
                e <= 1e-12, e)

        out32 = os.path.join(d, "f32.npz")
        rc, err = dump(rec, out32, "--dtype", "float32")
        C.check("float32: the graph runs", rc == 0, err)
        z32 = dict(np.load(out32)) if rc == 0 else {}
        C.check("float32: the permute is the weight's transpose",
                z32.get(PERM) is not None and np.array_equal(z32[PERM], w.T))
        g32 = z32.get(ADDMM)
        x32 = z32.get(VIEW)
        e32 = (rel_l2(g32, x32.astype(np.float64) @ w.T.astype(np.float64) + b)
               if g32 is not None and x32 is not None else None)
        C.check("float32: addmm within 1e-6 of the float64 product", e32 is not None and
                e32 <= 1e-6, e32)

        rc, tsv, err = C.run("--etdump", os.path.join(d, "t.etdp"), "--debug_buffer",
                             os.path.join(d, "t_debug.bin"), "--etrecord", rec,
                             "--numgap-tsv", "-")
        rows = [ln.split("\t") for ln in tsv.splitlines()]
        head = rows[0] if rows else []
        perm_rows = [r for r in rows[1:] if PERM in r[1]] if "snr" in head else []
        C.check("main command: the permute's row against the runtime's, SNR inf",
                rc == 0 and len(perm_rows) == 1 and perm_rows[0][head.index("snr")] == "inf",
                f"rc={rc} {err[-300:]} {perm_rows}")
        cell = perm_rows[0][head.index("aot_intermediate_output")] if perm_rows else ""
        C.check("main command: the permute's summary (strided read) is W.T's",
                preview_ok(cell, w.T), cell[:200])

        # the runtime's permute with one element changed: the row fails there
        dbg = os.path.join(d, "t_debug.bin")
        raw = bytearray(open(dbg, "rb").read())
        at = bytes(raw).find(np.ascontiguousarray(w.T).tobytes())
        C.check("the runtime logged the permute's values (found in the debug buffer)", at >= 0)
        r, c = 5, 37
        flat = r * w.T.shape[1] + c
        bad = np.ascontiguousarray(w.T).copy()
        bad[r, c] += 100.0
        raw[at:at + bad.nbytes] = bad.tobytes()
        dbg2 = os.path.join(d, "t_debug_bad.bin")
        with open(dbg2, "wb") as f:
            f.write(raw)
        js = os.path.join(d, "bad.json")
        rc, _, err = C.run("--etdump", os.path.join(d, "t.etdp"), "--debug_buffer", dbg2,
                           "--etrecord", rec, "--json", js, "--no-table", "--min-snr", "40")
        rows, fd = [], None
        if os.path.exists(js):
            import json
            with open(js) as f:
                ng = json.load(f).get("numeric_gap", {})
            rows = [x for x in ng.get("rows", []) if PERM in json.dumps(x.get("aot_ops"))]
            fd = ng.get("first_divergence")
            fd = ng["rows"][fd] if isinstance(fd, int) and fd < len(ng["rows"]) else None
        row = rows[0] if len(rows) == 1 else {}
        C.check("one element changed: exit 1, the permute's row fails", rc == 1 and
                row.get("status") == "FAIL", f"rc={rc} {err[-300:]} {row.get('status')}")
        m = row.get("metrics", row)
        C.check("one element changed: max |d| 100 at its row-major index",
                m.get("max_abs_index") == flat and abs(m.get("max_abs", 0) - 100.0) < 1e-3,
                (m.get("max_abs_index"), m.get("max_abs"), flat))
        C.check("one element changed: the permute is the first divergence",
                fd is not None and fd.get("aot_ops") == [PERM] and
                fd.get("first_divergence") is True, str(fd)[:300])
    C.finish(d)


if __name__ == "__main__":
    main()
