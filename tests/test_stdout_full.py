#!/usr/bin/env python3
"""Every job of the CLI that prints on standard output, with standard output
on /dev/full (a full disk): exit 4 and "etcompare: error: cannot write to
standard output", never a success with the printout lost.

The ETRecord-only jobs (--graph, --show-references) left without checking
standard output: a printout that fits the stdio buffer was lost at exit with
exit 0 and no message; --reference-ops was exit 4 without a message; --help
and --version exit 0. Each job is first run with a readable standard output
(it prints something and succeeds), then on /dev/full.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

EX = os.path.join(C.SRC, "examples")
ETDP = os.path.join(EX, "example.etdp")
DEBUG = os.path.join(EX, "example_debug.bin")
REC = os.path.join(EX, "example.etrecord")
EXAMPLE = ["--etdump", ETDP, "--debug_buffer", DEBUG, "--etrecord", REC]
MESSAGE = "etcompare: error: cannot write to standard output"

JOBS = [
    ("--help", ["--help"]),
    ("--version", ["--version"]),
    ("-h", ["-h"]),
    ("--reference-ops", ["--reference-ops"]),
    ("--graph", ["--etrecord", REC, "--graph"]),
    ("--show-references", ["--etrecord", REC, "--show-references"]),
    ("--graph and --show-references", ["--etrecord", REC, "--graph", "--show-references"]),
    ("profile table", ["--etdump", ETDP]),
    ("--tables tax", ["--etdump", ETDP, "--tables", "tax"]),
    ("--tables all", ["--etdump", ETDP, "--etrecord", REC, "--tables", "all"]),
    ("--show-outputs", ["--etdump", ETDP, "--debug_buffer", DEBUG, "--show-outputs",
                        "--no-table"]),
    ("performance diff", ["--etdump", ETDP, "--baseline-etdump",
                          os.path.join(EX, "example_baseline.etdp")]),
    ("accuracy", EXAMPLE + ["--compare", "--no-table", "--no-reference-run"]),
    ("accuracy gate", EXAMPLE + ["--min-snr", "1", "--no-table"]),
    ("numeric gap (ETRecord graph)", EXAMPLE + ["--no-table"]),
    ("numeric gap (reference run)",
     EXAMPLE + ["--no-table", "--reference-etdump", os.path.join(EX, "example_ref.etdp"),
                "--reference-debug-buffer", os.path.join(EX, "example_ref_debug.bin")]),
    ("--legacy-profile", ["--legacy-profile", os.path.join(EX, "prof_result.bin")]),
    ("--example --no-table", ["--example", "--no-table"]),
    ("--example", ["--example"]),
]


def run(argv, cwd, stdout):
    p = subprocess.run([C.ETC, *argv], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                       timeout=600)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


def main():
    if not os.path.exists("/dev/full"):
        C.check("/dev/full exists (skipped otherwise)", True)
        C.finish()
    with tempfile.TemporaryDirectory() as tmp:
        for name, argv in JOBS:
            cwd = os.path.join(tmp, name.replace(" ", "_").replace("/", "_"))
            os.makedirs(cwd)
            rc, out, err = run(argv, cwd, subprocess.PIPE)
            C.check(f"{name}: prints and succeeds with a readable standard output "
                    f"(exit {rc})", rc in (0, 1) and len(out) > 0, err[-400:])
            with open("/dev/full", "w") as full:
                frc, _, ferr = run(argv, cwd, full)
            C.check(f"{name}: exit 4 on a full standard output (got {frc})", frc == 4,
                    ferr[-400:])
            C.check(f"{name}: says it cannot write to standard output, once",
                    ferr.count(MESSAGE) == 1, ferr[-400:])
        # a run that prints nothing on standard output is not failed by it
        with open("/dev/full", "w") as full:
            rc, _, err = run(["--etdump", ETDP, "--no-table"], tmp, full)
        C.check(f"--no-table alone: nothing printed, exit 0 (got {rc})",
                rc == 0 and MESSAGE not in err, err[-400:])
    C.finish()


if __name__ == "__main__":
    main()
