"""The Python package against a hostile user (third pass, findings of
/work/wt/pyfix3_findings.md): upstream's numbers where elements are NaN on
one side only (compare_results, the numeric gap's `gap`)."""
import math
import os
import shutil
import sys
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
warnings.filterwarnings("ignore", "Output Buffer not found")
RX = os.path.join(C.DATA, "realexport")
FILES = ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "mlp_io.npz", "mlp.bpte",
         "cnn.etdp", "cnn_debug.bin", "cnn.etrecord", "qcnn.etdp", "qcnn_debug.bin",
         "qcnn.etrecord")


def nan_compare_results(d):
    """Finding 6: a partly NaN run output is NaN (upstream's torch.mean of
    (a - b) ** 2 and the others), not a perfect inf / 0 / 1."""
    import numpy as np
    ref = np.arange(1, 9, dtype=np.float32)
    half = ref.copy()
    half[:4] = np.nan
    one = ref.copy()
    one[0] = np.nan
    for name, run in (("half NaN", half), ("one NaN", one)):
        got = E.compare_results(ref, run)
        check(f"compare_results, run {name} on one side: snr, mse and cosine are NaN",
              all(math.isnan(got[k][0]) for k in ("snr", "mse", "cosine_similarity")), got)
        got = E.compare_results(run, ref)
        check(f"compare_results, reference {name} on one side: NaN too",
              all(math.isnan(got[k][0]) for k in ("snr", "mse", "cosine_similarity")), got)
    got = E.compare_results([ref, ref], [ref + 1e-3, one])
    check("compare_results: only the output with one-sided NaN is NaN",
          not math.isnan(got["snr"][0]) and math.isnan(got["snr"][1]) and
          got["mse"][0] > 0, got)
    got = E.compare_results(half, half)
    check("compare_results: NaN at the same places on both sides keeps the library's numbers",
          got["snr"][0] == math.inf and got["mse"][0] == 0.0, got)


def main():
    d = C.work_dir("python-trust3")
    for case in (nan_compare_results,):
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        for f in FILES:
            shutil.copy(os.path.join(RX, f), os.path.join(sub, f))
        with C.harness(case.__name__):
            case(sub)
    C.finish(d)


main()
