#!/usr/bin/env python3
"""The batch manifest parser under tests/fuzz/fuzz_manifest.py's seeded
mutation loop (a short replay: 3000 mutants of the fixed seed; the long runs
are in docs/hardening.md): every mutant parses into run specs or is a
SystemExit naming the manifest, never another exception. Before issue 23 a
byte that is not UTF-8 raised UnicodeDecodeError and a NUL byte csv.Error."""
import os
import subprocess
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
import common  # noqa: E402
from common import check  # noqa: E402


def case_manifest(d):
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "fuzz", "fuzz_manifest.py"),
                        "--seconds", "120", "--runs", "3000", "--out", d],
                       capture_output=True, text=True, timeout=300)
    check("manifest mutants: no finding (exit 0)", p.returncode == 0, p.stderr[-600:])
    check("manifest mutants: all 3000 ran", "manifest: 3000 executions" in p.stdout, p.stdout)
    # the cases found first, kept as a replay
    from etcompare import batch
    for name, data in (("not UTF-8", b"etdump\nx\xff.etdp\n"),
                       ("NUL", b"etdump\nx\x00.etdp\n"),
                       ("huge field", b"etdump\n\"" + b"a" * 300000 + b"\"\n")):
        path = os.path.join(d, "m.csv")
        with open(path, "wb") as f:
            f.write(data)
        try:
            specs = batch.from_manifest(path)
            ok = all(isinstance(s["etdump"], str) for s in specs)
            detail = specs[:1]
        except SystemExit as e:
            ok = path in str(e.code)
            detail = str(e.code)[:200]
        except Exception as e:  # noqa: BLE001
            ok, detail = False, f"{type(e).__name__}: {e}"
        check(f"manifest with {name}: run specs or a message naming the manifest", ok, detail)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(SRC, "python"))
    common.run_cases("batch_manifest_fuzz", case_manifest)
