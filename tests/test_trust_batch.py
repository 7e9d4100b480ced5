"""python3 -m etcompare.batch as a CI step (issue 22): the exit status of the
whole summary after --resume; inputs deduplicated by real path; a cut last
line dropped and redone with a warning; SIGTERM/SIGINT stop the pool with
exit 143/130, no traceback and no orphan worker; kill -9 at random points
then --resume analyses every input exactly once; an empty input set is
exit 3; --min_snr and --min-snr; -o into a missing folder is one line."""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import SRC, check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
EX = os.path.join(SRC, "examples")


def batch(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "etcompare.batch", *args], capture_output=True,
                       text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def start(*args):
    return subprocess.Popen([sys.executable, "-m", "etcompare.batch", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def runs_folder(d, n):
    f = os.path.join(d, "runs")
    os.makedirs(f)
    for i in range(n):
        shutil.copy(os.path.join(EX, "example.etdp"), os.path.join(f, f"r{i:03d}.etdp"))
        shutil.copy(os.path.join(EX, "example_debug.bin"), os.path.join(f, f"r{i:03d}.bin"))
        shutil.copy(os.path.join(EX, "example.etrecord"),
                    os.path.join(f, f"r{i:03d}.etrecord"))
    return f


def summary(path):
    out = []
    with open(path) as f:
        for ln in f:
            out.append(json.loads(ln))
    return out


def children_of(pid):
    """Processes whose parent is pid, or whose session is pid's (workers)."""
    # ps without the ASan runtime this test may run under (LD_PRELOAD): it can hang there
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    p = subprocess.run(["ps", "-eo", "pid,ppid,sid,args"], capture_output=True, text=True,
                       env=env, timeout=60)
    found = []
    for ln in p.stdout.splitlines()[1:]:
        parts = ln.split(None, 3)
        if len(parts) < 4:
            continue
        if (int(parts[1]) == pid or int(parts[2]) == pid) and int(parts[0]) != pid:
            found.append(ln)
    return found


def wait_gone(pid, secs=10.0):
    end = time.time() + secs
    while time.time() < end:
        left = children_of(pid)
        if not left:
            return []
        time.sleep(0.1)
    return children_of(pid)


def main():
    d = C.work_dir("trust-batch")
    n = 24
    f = runs_folder(d, n)
    out = os.path.join(d, "s.jsonl")
    # both spellings, the gate messages carry their numbers
    rc, _, err = batch(f, "-o", out, "--min_snr", "30", "--workers", "2")
    rows = summary(out)
    check("--min_snr accepted: every run a line, exit 1 (the example fails at 30 dB)",
          rc == 1 and len(rows) == n and all(r["status"] == "gate_failed" for r in rows),
          f"rc={rc} {err[-300:]}")
    check("batch gate messages carry their numbers (SNR in dB)",
          all(re.search(r"failed: 3 of 6 outputs \(worst: SNR 24.83 dB", r.get("message") or "")
              for r in rows), rows[0].get("message"))
    # --resume with nothing left: the exit status is the whole summary's
    rc, _, err = batch(f, "-o", out, "--min-snr", "30", "--resume")
    check("--resume with everything done: exit 1 from the summary's gate_failed lines",
          rc == 1 and "0 runs analysed" in err, f"rc={rc} {err}")
    # the same inputs spelled twice
    rc, o, err = batch("runs", "./runs/", os.path.join(".", "runs", "r000.etdp"), cwd=d)
    lines = [json.loads(ln) for ln in o.splitlines()]
    check("runs and ./runs/ analysed once each ETDump", len(lines) == n,
          f"{len(lines)} lines {err[-200:]}")
    # a cut last line: dropped, redone, warned
    with open(out) as fh:
        text = fh.read()
    cut = text[:-40]
    with open(out, "w") as fh:
        fh.write(cut)
    rc, _, err = batch(f, "-o", out, "--min-snr", "30", "--resume")
    rows = summary(out)
    check("cut last line: a warning, no traceback, the run redone",
          "dropped a cut" in err and "Traceback" not in err and len(rows) == n and
          len({r["etdump"] for r in rows}) == n, f"rc={rc} {err}")
    # an empty input set, an unwritable output
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    rc, _, err = batch(empty)
    check("a folder without ETDump: exit 3 with a message", rc == 3 and "no ETDump" in err and
          "Traceback" not in err, f"rc={rc} {err}")
    rc, _, err = batch(f, "-o", "/nonexistent/x.jsonl")
    check("-o /nonexistent/x.jsonl: one line, no traceback", rc in (3, 4) and
          len(err.strip().splitlines()) == 1 and "Traceback" not in err, f"rc={rc} {err}")
    # SIGTERM and SIGINT at a random point: exit 143/130, no traceback, no orphan
    many = runs_folder(os.path.join(d, "many"), 300)
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        o2 = os.path.join(d, f"sig{sig}.jsonl")
        p = start(many, "-o", o2, "--workers", "2")
        # a random point while the pool is at work: after the first lines
        want = random.randint(1, 20)
        t0 = time.time()
        while time.time() - t0 < 20 and p.poll() is None:
            if os.path.exists(o2) and sum(1 for _ in open(o2)) >= want:
                break
            time.sleep(0.01)
        os.kill(p.pid, sig)
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
        left = wait_gone(p.pid)
        check(f"signal {sig}: exit {code}, no traceback", p.returncode == code and
              "Traceback" not in err, f"rc={p.returncode} {err[-400:]}")
        check(f"signal {sig}: no worker left (ps)", not left, str(left))
        rows = summary(o2) if os.path.exists(o2) else []
        check(f"signal {sig}: only complete lines in the summary",
              all(isinstance(r, dict) for r in rows))
    # kill -9 at random points, then --resume: every input exactly once, no orphan
    o3 = os.path.join(d, "k9.jsonl")
    for k in range(3):
        p = start(f, "-o", o3, "--workers", "2", "--min-snr", "30",
                  *(["--resume"] if k else []))
        time.sleep(random.uniform(0.5, 1.5))
        os.kill(p.pid, signal.SIGKILL)
        p.communicate()
        left = wait_gone(p.pid)
        check(f"kill -9 #{k}: no worker left (ps)", not left, str(left))
    rc, _, err = batch(f, "-o", o3, "--resume", "--min-snr", "30")
    rows = summary(o3)
    names = sorted(r["etdump"] for r in rows)
    check("after kill -9 x3 and --resume: every input exactly once",
          len(names) == n and len(set(names)) == n, f"{len(names)} {err[-300:]}")
    check("after --resume: exit 1 from the whole summary", rc == 1, f"rc={rc}")
    C.finish(d)


main()
