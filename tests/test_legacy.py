#!/usr/bin/env python3
"""--legacy-profile: the legacy profiler dump (prof_result.bin, FORMATS.md §7).

Dumps are written by tests/legacy_gen.py from the struct layout. The
expected tables are computed here in Python the way the old profiler tools
did (round((end - start) / divisor, 4), framework tax
round((exec - kernels) / exec, 4) * 100, allocation totals per allocator)
and compared cell by cell with the printed grids; one small table is
checked byte for byte for the layout. Rejected: iterations of one block
that differ (event count, names, allocations), every truncation of a dump,
a bad version, a count past its maximum, an undeclared allocator.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from legacy_gen import block  # noqa: E402
import common  # noqa: E402
from common import ETC  # noqa: E402


def check(cond, what):
    common.check(what, cond)


def etc(*args):
    return subprocess.run([ETC] + list(args), capture_output=True, text=True)


def tables(stdout):
    """[(title, header cells, [row cells])] from the printed grids."""
    out, title, rows = [], None, None
    for line in stdout.splitlines():
        if line.startswith("╒"):
            rows = []
        elif line.startswith("│"):
            rows.append([c.strip() for c in line.split("│")[1:-1]])
        elif line.startswith("╘"):
            out.append((title, rows[0], rows[1:]))
            rows = None
        elif rows is None and not line.startswith(("╞", "├")):
            title = line
    return out


def exec_events(base, k):
    """One iteration: Method::execute, two kernels, a delegate, a non-kernel."""
    return [("Method::execute", -1, 0, base, base + 5_000_000 + 1000 * k),
            ("native_call_add.out", 0, 1, base + 100, base + 1_234_567 + 37 * k),
            ("native_call_mul.out", 0, 2, base + 1_300_000, base + 2_000_123),
            ("delegate_execute", 1, 0, base + 2_100_000, base + 3_000_000 - 11 * k),
            ("OPERATOR_CALL", 0, 2, base + 1_299_000, base + 2_000_200)]


def main_dump():
    d = block("Default", [("Program::load_method", -1, 0, 10, 2_000_010)],
              [("method_allocator", 1), ("temp", 2)], [(1, 64), (2, 32), (1, 16)],
              max_prof=3, max_mem=5)
    its = []
    for k in range(3):
        ev = exec_events(10_000_000 * (k + 1) + 17 * k, k)
        its.append(ev)
        d += block("Execute", ev, [], [(2, 100), (1, 8)], max_alloc=2, max_prof=8)
    return d, its


def fmt(v):
    """str() of a float or int, as PrettyTable showed the values."""
    return repr(v) if isinstance(v, float) else str(v)


def duration(ev, scale):
    div = {"ns": 1_000_000, "us": 1000, "ms": 1, "cycles": 1}[scale]
    d = ev[4] - ev[3]
    return round(d / div, 4) if div != 1 else d


def expected_tax(its, scale):
    ex = max([duration(its[k][0], scale) for k in range(len(its))], [])
    kern = [sum(duration(it[i], scale) for i in (1, 2, 3)) for it in its]
    tax = [round((e - s) / e, 4) * 100 for e, s in zip(ex, kern)]
    return ex, kern, tax


def main():
    tmp = common.work_dir("legacy")
    try:
        data, its = main_dump()
        path = os.path.join(tmp, "prof_result.bin")
        with open(path, "wb") as f:
            f.write(data)
        for scale in ("ns", "us", "ms", "cycles"):
            args = ["--legacy-profile", path] + ([] if scale == "ns" else
                                                 ["--legacy-time-scale", scale])
            p = etc(*args)
            check(p.returncode == 0, f"{scale}: exit {p.returncode}: {p.stderr}")
            t = tables(p.stdout)
            unit = "cycles" if scale == "cycles" else "ms"
            check([x[0] for x in t] == [f"Default (1 iteration, {unit})",
                                        f"Execute (3 iterations, {unit})",
                                        f"Execute framework tax calculations ({unit})",
                                        "Default memory allocations (bytes)",
                                        "Execute memory allocations (bytes)"],
                  f"{scale}: table titles {[x[0] for x in t]}")
            if len(t) != 5:
                continue
            title, head, rows = t[1]
            check(head == ["Name", "Chain", "Instr", "Frame", "Iteration 0", "Iteration 1",
                           "Iteration 2"], f"{scale}: profile header {head}")
            want = [[e[0], str(e[1]), str(e[2]), ""] +
                    [fmt(duration(its[k][i], scale)) for k in range(3)]
                    for i, e in enumerate(its[0])]
            check(rows == want, f"{scale}: profile rows\n{rows}\n!=\n{want}")
            ex, kern, tax = expected_tax(its, scale)
            title, head, rows = t[2]
            check(head == ["", "Iteration 0", "Iteration 1", "Iteration 2"], f"{scale}: tax header")
            want = [["Model execution time"] + [fmt(v) for v in ex],
                    ["Time spent in kernels and delegates"] + [fmt(v) for v in kern],
                    ["Framework tax (%)"] + [fmt(v) for v in tax]]
            check(rows == want, f"{scale}: tax rows\n{rows}\n!=\n{want}")
            check(t[3][1] == ["Allocator name", "Total size of allocations done"], "memory header")
            check(t[3][2] == [["method_allocator", "80"], ["temp", "32"]],
                  f"Default memory {t[3][2]}")
            check(t[4][2] == [["temp", "100"], ["method_allocator", "8"]],
                  f"Execute memory {t[4][2]}")

        # the layout, byte for byte, for the smallest table
        p = etc("--legacy-profile", path)
        want = ("Default (1 iteration, ms)\n"
                "╒══════════════════════╤═════════╤═════════╤═════════╤═══════════════╕\n"
                "│ Name                 │   Chain │   Instr │ Frame   │   Iteration 0 │\n"
                "╞══════════════════════╪═════════╪═════════╪═════════╪═══════════════╡\n"
                "│ Program::load_method │      -1 │       0 │         │           2.0 │\n"
                "╘══════════════════════╧═════════╧═════════╧═════════╧═══════════════╛\n")
        check(p.stdout.startswith(want), "Default table layout:\n" + p.stdout[:len(want) + 50])
        # decimal alignment in a column mixing 5.0 and 1.2345
        check("│        5.0    │" in p.stdout and "│        1.2345 │" in p.stdout,
              "numbers aligned on the decimal point")

        # names: 32 bytes without NUL, and a name ending at the first NUL
        long = "n" * 32
        d = block(long, [(long, 3, 4, 0, 1_000_000)])
        raw = bytearray(block("B", [("abc", 0, 0, 0, 0)]))
        raw[64 + 3: 64 + 6] = b"\0zz"  # "abc\0zz..." -> "abc"
        d += bytes(raw)
        f2 = os.path.join(tmp, "names.bin")
        open(f2, "wb").write(d)
        p = etc("--legacy-profile", f2)
        t = tables(p.stdout)
        check(p.returncode == 0 and t[0][0].startswith(long + " (") and t[0][2][0][0] == long,
              f"32-byte names: {p.stdout[:200]} {p.stderr}")
        check(t[1][2][0][0] == "abc", f"name ends at the first NUL: {t[1][2]}")
        # control characters are shown escaped, in titles and cells
        f7 = os.path.join(tmp, "ctl.bin")
        open(f7, "wb").write(block("a\tb", [("x\ny", 0, 0, 0, 5)]))
        p = etc("--legacy-profile", f7)
        check(p.returncode == 0 and p.stdout.startswith("a\\x09b (1 iteration, ms)\n")
              and "│ x\\x0ay │" in p.stdout, f"control characters escaped: {p.stdout[:300]!r}")
        # no kernels: no framework tax table; empty memory tables still printed
        check(not any("framework tax" in x[0] for x in t), "no tax table without kernels")

        # Method::execute: the largest duration list (element by element) wins;
        # an execute time of 0 gives n/a
        d = b""
        for k, (a, b2) in enumerate([(4_000_000, 9_000_000), (4_000_000, 1_000_000)]):
            d += block("M", [("Method::execute", -1, 0, 0, a), ("Method::execute", -1, 0, 0, b2),
                             ("native_call_x", 0, 0, 0, 1_000_000)])
        d += block("Z", [("Method::execute", -1, 0, 5, 5), ("native_call_x", 0, 0, 0, 0)])
        f3 = os.path.join(tmp, "exec.bin")
        open(f3, "wb").write(d)
        p = etc("--legacy-profile", f3)
        t = {x[0]: x for x in tables(p.stdout)}
        rows = t["M framework tax calculations (ms)"][2]
        # lists [4.0, 4.0] and [9.0, 1.0]: max() picks [9.0, 1.0]
        check(rows[0] == ["Model execution time", "9.0", "1.0"], f"lexicographic max: {rows}")
        check(rows[2] == ["Framework tax (%)", fmt(round(8 / 9, 4) * 100), "0.0"], f"tax: {rows}")
        check(t["Z framework tax calculations (ms)"][2][2] == ["Framework tax (%)", "n/a"],
              "execute time 0 gives n/a")

        # mismatched iterations: exit 3 with the block, iteration and byte offset
        ev3 = its[0][:3]
        cases = [
            ("count", block("E", its[0]) + block("E", ev3),
             "block \"E\": iteration 1 (block 1 at byte 344) has 3 profiling entries but "
             "iteration 0 (block 0 at byte 0) has 5"),
            ("names", block("E", ev3) + block("E", [ev3[0], ev3[2], ev3[1]]),
             "byte 352: block \"E\": profiling entry 1 is \"native_call_mul.out\" in iteration 1"),
            ("allocs", block("E", ev3, [("a", 1)], [(1, 8)]) + block("E", ev3, [], [(1, 8), (1, 8)]),
             "has 2 memory allocations but iteration 0"),
            ("sizes", block("E", ev3, [("a", 1)], [(1, 8)]) + block("E", ev3, [], [(1, 9)]),
             "memory allocation 0 is 9 bytes from allocator 1 in iteration 1"),
        ]
        for name, blob, msg in cases:
            f4 = os.path.join(tmp, name + ".bin")
            open(f4, "wb").write(blob)
            p = etc("--legacy-profile", f4)
            check(p.returncode == 3 and msg in p.stderr and p.stdout == "",
                  f"mismatch {name}: exit {p.returncode}, stderr {p.stderr!r}")
            check("must" in p.stderr, f"mismatch {name}: says what must hold")

        # every truncation of a two-block dump is rejected cleanly
        first = block("A", its[0], [("a", 1)], [(1, 4)], max_prof=6)
        two = first + block("B", its[1])
        f5 = os.path.join(tmp, "trunc.bin")
        for n in range(len(two)):
            if n == len(first):
                continue  # a whole first block is a valid one-block dump
            open(f5, "wb").write(two[:n])
            p = etc("--legacy-profile", f5)
            ok = p.returncode == 3 and p.stdout == "" and \
                ("truncated legacy profile" in p.stderr or (n == 0 and "empty" in p.stderr))
            check(ok, f"truncated at {n}: exit {p.returncode} {p.stderr!r}")
            if not ok:
                break
        open(f5, "wb").write(two[:100])
        p = etc("--legacy-profile", f5)
        check("byte 0: truncated legacy profile: block 0 (\"A\") announces" in p.stderr,
              f"truncation message names the block and offset: {p.stderr}")

        # other corruptions
        bad = [("version", block("A", its[0], prof_ver=2), "prof_ver is 2, expected 1"),
               ("count", block("A", its[0], counts=(6, 0, 0)),
                "byte 40: block 0 (\"A\"): prof_entries is 6 but max_prof_entries is 5"),
               ("allocator", block("A", its[0], [("a", 1)], [(2, 4)]),
                "memory allocation 0 is from allocator 2, which no block declares"),
               ("huge", block("A", [], max_prof=0xFFFFFFFF, max_alloc=0xFFFFFFFF,
                              counts=(0, 0, 0), header_only=True), "announces")]
        for name, blob, msg in bad:
            f6 = os.path.join(tmp, "bad_" + name + ".bin")
            open(f6, "wb").write(blob)
            p = etc("--legacy-profile", f6)
            check(p.returncode == 3 and msg in p.stderr, f"{name}: {p.returncode} {p.stderr!r}")

        # usage
        for args, msg in [(["--legacy-profile", path, "--legacy-time-scale", "s"],
                           "--legacy-time-scale takes ns, us, ms or cycles, not 's'"),
                          (["--legacy-time-scale", "us"], "needs --legacy-profile"),
                          (["--legacy-profile", path, "--tsv", "x.tsv"], "need --etdump")]:
            p = etc(*args)
            check(p.returncode == 2 and msg in p.stderr, f"usage {args}: {p.returncode} {p.stderr}")
        p = etc("--legacy-profile", os.path.join(tmp, "missing.bin"))
        check(p.returncode == 3 and "missing.bin" in p.stderr, "missing file: exit 3")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return common.summary()


if __name__ == "__main__":
    sys.exit(main())
