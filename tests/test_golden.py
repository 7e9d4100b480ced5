"""CLI golden tests: each case runs etcompare and compares stdout and any
written file byte for byte with golden/, plus the exit code.

The goldens of tutorial, runs5_ops12 and misaligned are the upstream
Inspector's own print_data_tabular / save_data_to_tsv output.
Set ETC_REGENERATE=1 to rewrite the goldens that etcompare owns
(never the upstream ones, which are listed in UPSTREAM)."""
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA, ETC, GOLD, check, summary  # noqa: E402

UPSTREAM = {"tutorial.table.txt", "tutorial.tsv", "runs5_ops12.table.txt", "runs5_ops12.tsv",
            "misaligned.table.txt", "misaligned.tsv"}

CASES = [
    # name, args (relative to tests/data), stdout golden, {written file: golden}
    ("tutorial", ["--etdump", "tutorial.etdp", "--tsv", "{out}"], "tutorial.table.txt",
     "tutorial.tsv"),
    ("tutorial-aliases", ["--etdump_path", "tutorial.etdp", "--tsv_path", "{out}"],
     "tutorial.table.txt", "tutorial.tsv"),
    ("runs5", ["--etdump", "runs5_ops12.etdp", "--debug_buffer", "runs5_ops12.bin",
               "--tsv", "{out}"], "runs5_ops12.table.txt", "runs5_ops12.tsv"),
    ("misaligned", ["--etdump", "misaligned.etdp", "--debug_buffer_path",
                    "misaligned_debug.bin", "--tsv", "{out}"], "misaligned.table.txt",
     "misaligned.tsv"),
    ("misaligned-outputs", ["--etdump", "misaligned.etdp", "--debug_buffer",
                            "misaligned_debug.bin", "--no-table", "--show-outputs"],
     "misaligned.outputs.txt", None),
    ("runs5-outputs", ["--etdump", "runs5_ops12.etdp", "--debug_buffer", "runs5_ops12.bin",
                       "--no-table", "--show-outputs", "--max-values", "3"],
     "runs5_ops12.outputs.txt", None),
    ("tutorial-us", ["--etdump", "tutorial.etdp", "--target_time_scale", "us", "--csv",
                     "{out}", "--no-table"], None, "tutorial.us.csv"),
    # --tables profile (the default) is today's output, byte for byte
    ("tutorial-tables-profile", ["--etdump", "tutorial.etdp", "--tables", "profile", "--tsv",
                                 "{out}"], "tutorial.table.txt", "tutorial.tsv"),
    # the profiling summaries of the real runtime's ETDump (numbers checked by hand in
    # tests/test_profile.py's model; here the look and the real file)
    ("tutorial-tables", ["--etdump", "tutorial.etdp", "--tables", "tax,memory,ops,delegates",
                         "--tsv", "{out}"], "tutorial.tables.txt", "tutorial.tables.tsv"),
]

regen = os.environ.get("ETC_REGENERATE") == "1"
for name, args, out_gold, file_gold in CASES:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "written")
        argv = [ETC] + [a.replace("{out}", out) if a == "{out}" else
                        (os.path.join(DATA, a) if os.path.exists(os.path.join(DATA, a)) else a)
                        for a in args]
        p = subprocess.run(argv, capture_output=True)
        checks = []
        if out_gold:
            checks.append((out_gold, p.stdout))
        if file_gold:
            data = open(out, "rb").read() if os.path.exists(out) else b"<not written>"
            checks.append((file_gold, data))
        if not check(f"{name}: exit 0", p.returncode == 0, f"exit {p.returncode}: {p.stderr.decode()}"):
            continue
        for gold, got in checks:
            path = os.path.join(GOLD, gold)
            if regen and gold not in UPSTREAM:
                open(path, "wb").write(got)
            want = open(path, "rb").read() if os.path.exists(path) else None
            check(f"{name}: golden/{gold}", got == want, "output differs")
sys.exit(summary())
