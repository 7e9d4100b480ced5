#!/usr/bin/env python3
"""Every file etcompare writes (--tsv, --csv, --json, --junit, --plot: .dat,
.gp, bar-chart and heat-map PNGs) goes to a temporary file in the same
directory that is renamed into place, so that:
  - a write that fails half way (here: the file size limit, RLIMIT_FSIZE,
    makes every write past 16 bytes fail with EFBIG) exits 4 and leaves the
    file that was there untouched, with no temporary file left behind;
  - a run that fails on bad input (exit 3) leaves every output untouched,
    except the JUnit file, which then holds the error (issue 22);
  - names from inside the inputs (an EventBlock called "../../../escape/x",
    ETRecord members called "../x") never become paths: every file written
    lies in the directories named on the command line, with a plain name.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import zipfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import DATA, ETC, FBS, FLATC, check, summary  # noqa: E402

RECORD = os.path.join(DATA, "example_refs.etrecord")
PRECIOUS = b"precious\n"


def small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))


def run(args, limit=False):
    return subprocess.run([ETC, *args], capture_output=True, text=True,
                          preexec_fn=small_files if limit else None)


def tree(root):
    """{relative path: bytes} of every file under root."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def etdump_named(tmp, block):
    """runs5_ops12 with its Execute runs renamed to `block`."""
    with open(os.path.join(DATA, "runs5_ops12.json")) as f:
        d = json.load(f)
    for r in d["run_data"]:
        if r["name"] == "Execute":
            r["name"] = block
    js = os.path.join(tmp, "named.json")
    with open(js, "w") as f:
        json.dump(d, f)
    p = subprocess.run([FLATC, "-b", "--size-prefixed", "-o", tmp, FBS, js],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return os.path.join(tmp, "named.etdp")


# The writers, each with its flag and the files it makes in `out`.
PLOT_FILES = ["metric_snr.dat", "metric_snr.gp", "metric_snr.png",
              "heatmap_Execute_run0_out1.dat", "heatmap_Execute_run0_out1.png"]
WRITERS = [("tsv", ["--tsv"], ["t.tsv"]), ("csv", ["--csv"], ["t.csv"]),
           ("json", ["--json"], ["t.json"]), ("junit", ["--junit"], ["t.xml"]),
           ("plot", ["--plot"], PLOT_FILES)]


def writer_args(out, flag, files):
    if flag == ["--plot"]:
        return ["--plot", os.path.join(out, "plots")], [os.path.join(out, "plots", f)
                                                        for f in files]
    path = os.path.join(out, files[0])
    return flag + [path], [path]


def base_args():
    return ["--etdump", os.path.join(DATA, "runs5_ops12.etdp"),
            "--debug_buffer", os.path.join(DATA, "runs5_ops12.bin"),
            "--etrecord", RECORD, "--no-table", "--compare"]


def plant(paths):
    for p in paths:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(PRECIOUS)


def leftovers(root):
    return [p for p in tree(root) if os.path.basename(p).startswith(".")]


def write_failures(tmp):
    for name, flag, files in WRITERS:
        out = os.path.join(tmp, "fail_" + name)
        os.makedirs(out)
        args, paths = writer_args(out, flag, files)
        # Without the limit the files are written (and are longer than 16 bytes).
        p = run(base_args() + args)
        check(f"{name}: written normally", p.returncode == 0 and all(
            os.path.getsize(x) > 16 for x in paths), p.stderr)
        plant(paths)
        p = run(base_args() + args, limit=True)
        check(f"{name}: failed write exits 4", p.returncode == 4, f"{p.returncode} {p.stderr}")
        check(f"{name}: message names the file", "cannot write" in p.stderr
              or "File too large" in p.stderr, p.stderr)
        kept = [x for x in paths if open(x, "rb").read() == PRECIOUS]
        if name == "plot":
            # Plots are written one after the other: the first write fails, so
            # no file may have been replaced.
            check(f"{name}: every existing file untouched", len(kept) == len(paths),
                  str(set(paths) - set(kept)))
        else:
            check(f"{name}: existing file untouched", len(kept) == len(paths))
        check(f"{name}: no temporary file left", not leftovers(out), str(leftovers(out)))


def untouched_but_junit(after, before):
    """Every output as before, and t.xml a JUnit <error> testcase."""
    junit = after.get("t.xml", b"")
    rest = {k: v for k, v in after.items() if k != "t.xml"}
    return rest == {k: v for k, v in before.items() if k != "t.xml"} and \
        b"<error" in junit and b'errors="1"' in junit


def bad_input(tmp):
    out = os.path.join(tmp, "bad")
    os.makedirs(out)
    args, paths = [], []
    for _, flag, files in WRITERS:
        a, p = writer_args(out, flag, files)
        args += a
        paths += p
    plant(paths)
    with open(RECORD, "rb") as f:
        data = f.read()
    cut = os.path.join(tmp, "cut.etrecord")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    a = base_args()
    a[a.index(RECORD)] = cut
    before = tree(out)
    p = run(a + args)
    check("truncated ETRecord: exit 3", p.returncode == 3, f"{p.returncode} {p.stderr}")
    check("truncated ETRecord: every output untouched, the JUnit file holds the error",
          untouched_but_junit(tree(out), before))
    bad_dump = os.path.join(tmp, "bad.etdp")
    with open(bad_dump, "wb") as f:
        f.write(b"\x10\x00\x00\x00" + b"\xff" * 60)
    a = base_args()
    a[a.index("--etdump") + 1] = bad_dump
    p = run(a + args)
    check("corrupt ETDump: exit 3", p.returncode == 3, f"{p.returncode} {p.stderr}")
    check("corrupt ETDump: every output untouched, the JUnit file holds the error",
          untouched_but_junit(tree(out), before))


def hostile_names(tmp):
    root = os.path.join(tmp, "names")
    work = os.path.join(root, "a", "b", "c")
    os.makedirs(work)
    block = "../../../escape/x"
    etdp = etdump_named(root, block)
    # An ETRecord with members whose names are paths.
    with zipfile.ZipFile(RECORD) as z:
        members = [(i.filename, z.read(i)) for i in z.infolist()]
    rec = os.path.join(root, "names.etrecord")
    with zipfile.ZipFile(rec, "w") as z:
        for n, d in members + [("../../../escape/member", b"x"), ("/tmp/abs_member", b"y")]:
            z.writestr(n, d)
    before = set(tree(root))
    p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer",
                        os.path.join(DATA, "runs5_ops12.bin"), "--etrecord", rec, "--block", block,
                        "--no-table", "--json", "r.json", "--tsv", "r.tsv", "--junit", "r.xml",
                        "--plot", "plots"], cwd=work, capture_output=True, text=True)
    check("hostile block name: compared (exit 0)", p.returncode == 0, p.stderr)
    made = set(tree(root)) - before
    rel = os.path.relpath(work, root)
    outside = [m for m in made if not m.startswith(rel + os.sep)]
    check("hostile names: nothing written outside the named outputs", not outside, str(outside))
    check("hostile names: no 'escape' directory", not os.path.exists(os.path.join(tmp, "escape"))
          and not os.path.exists(os.path.join(root, "escape")))
    plots = [m for m in made if m.startswith(os.path.join(rel, "plots") + os.sep)]
    bad = [m for m in plots if os.sep in os.path.relpath(m, os.path.join(rel, "plots"))
           or not all(c.isalnum() or c in "._-" for c in os.path.basename(m))]
    check("hostile names: plots made, all plain names in the plot directory",
          len(plots) >= 5 and not bad, f"{plots} {bad}")
    check("hostile names: the block's slashes become _ in plot names",
          any(m.endswith("heatmap_.._.._.._escape_x_run0_out0.png") for m in plots), str(sorted(plots)))
    check("no member of the ETRecord was written", not os.path.exists("/tmp/abs_member"))


def main():
    tmp = common.work_dir("outsafe")
    try:
        write_failures(tmp)
        bad_input(tmp)
        hostile_names(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
