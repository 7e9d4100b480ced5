#!/usr/bin/env python3
"""badinput-table.py - the table of bad inputs tried (docs/hardening.md), derived from
the tests: it runs them against a build and counts per category.

  tests/test_badinput.py      one row per case group (ETDump, debug buffer,
                              usage); count = cases, each a CLI run that
                              must exit 3 (2 for usage) naming the problem
  tests/test_etrecord.py      the "bad: ..." cases (ETRecords)
  tests/test_output_safety.py failed writes, bad input, hostile names
  tests/test_large.py         the out-of-bounds tensor above 4 GiB
  tests/test_zip_trailing.py  zips with bytes after their end, damaged ones
  unit tests                  the CHECK_GROUP groups of malformed input
                              (count = checks; one check can cover a loop
                              of many inputs, e.g. every truncation)
  fuzz replays                the corpus and past-crasher files that ctest
                              replays through the fuzz targets

Usage: scripts/badinput-table.py [BUILD_DIR]   (default build)
Prints the table and rewrites the block between the markers
<!-- badinput-table:begin --> and <!-- badinput-table:end --> in docs/hardening.md.
Exits 1 when any counted check failed (the table then says so).
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
ENV = dict(os.environ, ETCOMPARE=os.path.join(BUILD, "etcompare"), ETC_SRC=ROOT,
           ETC_FLATC=shutil.which("flatc") or "flatc",
           ETC_WORK=os.path.join(BUILD, "tests", "work"))

# unit test binary -> {group function: category}
UNIT = {
    "test_flatbuf": {
        "test_header": "ETDump (unit): size prefix, identifier, root offset",
        "test_tables": "ETDump (unit): table offsets and vtables",
        "test_vectors_strings": "ETDump (unit): vectors and strings",
        "test_schema": "ETDump (unit): schema violations",
        "test_budget": "ETDump (unit): verification budget (reference bombs)",
        "test_truncation": "ETDump (unit): every truncation",
    },
    "test_torchsave": {
        "test_forbidden_globals": "torch.save: globals outside the allow-list (os.system, ...)",
        "test_opcodes": "torch.save: pickle opcodes, malformed arguments",
        "test_limits": "torch.save: pickle stack, memo and nesting bounds",
        "test_tensor_checks": "torch.save: tensor shapes, strides, storage bounds",
        "test_truncated_and_corrupt": "torch.save: truncated and corrupt archives",
        "test_mutated_pickles": "torch.save: random pickle mutations",
        "test_deflate": "torch.save: deflated members, zip bomb",
    },
    "test_npz": {
        "test_unsupported_npz": ".npz: unsupported dtypes",
        "test_headers": ".npy: malformed headers, shapes, sizes",
        "test_zips": ".npz: malformed zips, size mismatches, inflation cap",
        "test_trailing": ".npz: bytes after the end record, an end record in them",
        "test_robustness": ".npz/.npy: every truncation and byte mutation",
    },
}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, env=ENV, cwd=BUILD, **kw)


def result(ok, bad, what):
    return what if bad == 0 else f"**{bad} FAILED**"


def main():
    rows, failures = [], 0

    p = run([PY, os.path.join(ROOT, "tests", "test_badinput.py")])
    for m in re.finditer(r"^(ok  |FAIL) (.+): (\d+) passed, (\d+) failed$", p.stdout, re.M):
        name, ok, bad = m.group(2), int(m.group(3)), int(m.group(4))
        failures += bad
        what = "exit 2, usage message" if name == "usage errors" else \
            "exit 3, message names file, offset, field"
        rows.append((f"ETDump / debug buffer: {name}", ok + bad, "cases",
                     result(ok, bad, what)))

    p = run([PY, os.path.join(ROOT, "tests", "test_etrecord.py")])
    ok = len(re.findall(r"^ok   bad: ", p.stdout, re.M))
    bad = len(re.findall(r"^FAIL bad: ", p.stdout, re.M))
    failures += bad
    rows.append(("ETRecord: not a zip, truncated, bad JSON, deep JSON, wrong maps, "
                 "size mismatch, forbidden pickle globals", ok + bad, "cases",
                 result(ok, bad, "exit 3, message names member and problem")))

    p = run([PY, os.path.join(ROOT, "tests", "test_output_safety.py")])
    m = re.search(r"^(\d+) passed, (\d+) failed$", p.stdout, re.M)
    ok, bad = (int(m.group(1)), int(m.group(2))) if m else (0, 1)
    failures += bad
    rows.append(("output files: failed writes, bad input, names from inputs", ok + bad,
                 "checks", result(ok, bad, "exit 4 / 3, existing files untouched, "
                                           "no path from inside an input")))

    p = run([PY, os.path.join(ROOT, "tests", "test_large.py")])
    ok = len(re.findall(r"^ok   ", p.stdout, re.M))
    bad = len(re.findall(r"^FAIL ", p.stdout, re.M))
    failures += bad
    rows.append(("large inputs: > 4 GiB debug buffer, ZIP64 ETRecords, tensor past the end",
                 ok + bad, "checks", result(ok, bad, "read correctly; out of bounds: exit 3")))

    p = run([os.path.join(BUILD, "tests", "test_legacy")])
    m = re.search(r"(\d+) checks, (\d+) failed", p.stdout + p.stderr)
    n, bad = (int(m.group(1)), int(m.group(2))) if m else (0, 1)
    q = run([PY, os.path.join(ROOT, "tests", "test_legacy.py")])
    bad += q.returncode != 0
    failures += bad
    rows.append(("legacy profiler dumps: every truncation, byte corruption sweep, bad "
                 "version, counts past the maximum, mismatched iterations (unit + CLI)",
                 n, "checks", result(n - bad, bad, "exit 3 / error status, message names "
                                                     "file, offset, block")))

    p = run([PY, os.path.join(ROOT, "tests", "test_numgap.py")])
    m = re.search(r"^(\d+) passed, (\d+) failed$", p.stdout, re.M)
    ok, bad = (int(m.group(1)), int(m.group(2))) if m else (0, 1)
    failures += bad
    rows.append(("numeric gap (whole test file, with bad .npz names, corrupt members, "
                 "nothing aligned, programs that differ)", ok + bad, "checks",
                 result(ok, bad, "exit 3 naming the problem; no silent pass")))

    p = run([PY, os.path.join(ROOT, "tests", "test_zip_trailing.py")])
    m = re.search(r"^(\d+) passed, (\d+) failed$", p.stdout, re.M)
    ok, bad = (int(m.group(1)), int(m.group(2))) if m else (0, 1)
    failures += bad
    rows.append(("zip (ETRecord, .npz, torch.save): bytes appended after the end record (zeros, random, "
                 "past 64 KiB), damaged central directories, an end record in appended bytes "
                 "pointing outside the archive", ok + bad, "checks",
                 result(ok, bad, "read as the unpadded file with a warning naming file and "
                                 "byte; damaged: exit 3 naming file, byte, what to do")))

    for binary, groups in UNIT.items():
        p = run([os.path.join(BUILD, "tests", binary)])
        found = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
                 re.finditer(r"^group (\w+): (\d+) checks, (\d+) failed$", p.stdout, re.M)}
        for fn, category in groups.items():
            n, bad = found.get(fn, (0, 1))
            failures += bad
            rows.append((category, n, "checks",
                         result(n - bad, bad, "error status + message, no crash")))

    for target in sorted(os.listdir(os.path.join(ROOT, "tests", "fuzz", "corpus"))):
        counts = []
        for kind in ("corpus", "crashers"):
            d = os.path.join(ROOT, "tests", "fuzz", kind, target)
            counts.append(len([f for f in os.listdir(d) if not f.startswith(".")])
                          if os.path.isdir(d) else 0)
        exe = os.path.join(BUILD, "tests", "fuzz", f"fuzz_{target}_replay")
        dirs = [os.path.join(ROOT, "tests", "fuzz", k, target) for k in ("corpus", "crashers")]
        p = run([exe] + [d for d in dirs if os.path.isdir(d)])
        bad = 0 if p.returncode == 0 else 1
        failures += bad
        rows.append((f"fuzz replay `{target}`: {counts[0]} corpus + {counts[1]} past crashers",
                     sum(counts), "inputs",
                     result(0, bad, "no crash, leak or sanitizer report")))

    lines = ["| category | count | of | result |", "|---|---:|---|---|"]
    lines += [f"| {c} | {n} | {unit} | {r} |" for c, n, unit, r in rows]
    total = sum(n for _, n, _, _ in rows)
    lines.append(f"| **total** | **{total}** | | "
                 f"{'all pass' if failures == 0 else f'**{failures} failed**'} |")
    table = "\n".join(lines)
    print(table)

    readme = os.path.join(ROOT, "docs", "hardening.md")
    text = open(readme).read()
    begin, end = "<!-- badinput-table:begin -->", "<!-- badinput-table:end -->"
    if begin in text and end in text:
        text = (text[:text.index(begin) + len(begin)] + "\n" + table + "\n" +
                text[text.index(end):])
        with open(readme, "w") as f:
            f.write(text)
    else:
        print(f"docs/hardening.md has no {begin} ... {end} block: not updated",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
