"""python3 -m etcompare.batch against a hostile user, round 3 (findings of
/work/wt/pyfix3_findings.md): a reference run that is the run itself is
named in a warning."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import SRC, check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()

RX = os.path.join(SRC, "tests", "data", "realexport")


def batch(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "etcompare.batch", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def lines(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def run_files(d, name, model="mlp"):
    """d/name.etdp, name_debug.bin and name.etrecord copied from realexport's model."""
    os.makedirs(d, exist_ok=True)
    for suf in (".etdp", "_debug.bin", ".etrecord"):
        shutil.copy(os.path.join(RX, model + suf), os.path.join(d, name + suf))
    return os.path.join(d, name + ".etdp")


def case_self_reference(d):
    """Finding 12: a manifest row whose reference and reference_debug_buffer
    are the run's own files (also through a link) gets a warning naming
    the run; a row with a real reference run does not."""
    r0 = run_files(d, "r0")
    r1 = run_files(d, "r1")
    os.link(os.path.join(d, "r1_debug.bin"), os.path.join(d, "r1_link.bin"))
    man = os.path.join(d, "m.csv")
    with open(man, "w") as f:
        f.write("etdump,debug_buffer,etrecord,reference,reference_debug_buffer\n")
        f.write("r0.etdp,r0_debug.bin,r0.etrecord,r0.etdp,r0_debug.bin\n")
        f.write("r1.etdp,r1_debug.bin,r1.etrecord,r1.etdp,r1_link.bin\n")
    rc, out, err = batch("--min-snr", "30", "--workers", "1", man)
    warned = [ln for ln in err.splitlines() if "the reference run is the run itself" in ln]
    check("a row whose reference is the run itself: a warning line each, naming the run",
          len(warned) == 2 and r0 in warned[0] and r1 in warned[1] and
          all(ln.startswith("etcompare.batch: warning: ") for ln in warned), err[-800:])
    check("... the runs are still analysed (the lines as before)",
          rc == 0 and [x["status"] for x in lines(out)] == ["ok", "ok"], f"rc={rc} {out[-400:]}")
    ref = run_files(d, "r2.ref")
    r2 = run_files(d, "r2")
    os.replace(os.path.join(d, "r2.ref_debug.bin"), os.path.join(d, "r2.ref.bin"))
    rc, out, err = batch("--workers", "1", r2)
    check("a reference run of its own files (X.ref.etdp, X.ref.bin): no such warning",
          rc == 0 and "the reference run is the run itself" not in err and
          lines(out)[0]["reference"] == ref, f"rc={rc} {err[-600:]} {out[-300:]}")


def main():
    d = C.work_dir("batch-trust3")
    for case in (case_self_reference,):
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        with C.harness(case.__name__):
            case(sub)
    C.finish(d)


main()
