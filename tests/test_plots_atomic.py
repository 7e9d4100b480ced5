"""A plot set is all or nothing, made on every core, with native heat maps
(issue 23, "on a full disk no partial plot set is left"; issue 25 item 5):

  - full disk: a plot folder on a small tmpfs (mounted here when run as root;
    otherwise the file size limit RLIMIT_FSIZE stands in for it) holds the
    example's set; the disk is filled and a run with other inputs fails with
    exit 4 and says so: every file of the previous set is byte for byte as
    it was, the user's file too, and no temporary folder or file is left;
    with room again the same run replaces the set, removes the plots only
    the previous set had, and index.txt lists exactly the PNGs there;
  - a gnuplot that makes some PNGs and then fails (a fake first on PATH):
    exit 4, the previous set whole, nothing left behind;
  - gnuplot fed in parallel: ETC_THREADS=1 starts one gnuplot, ETC_THREADS=2
    two, and both make the same PNGs with the same index;
  - heat maps need no gnuplot: their .gp is not in any script gnuplot is fed,
    yet their PNG is there beside its .gp and .dat, the size the layout in
    the .gp says, and the hottest cell is at the element the title names.
"""
import hashlib
import os
import re
import resource
import shutil
import subprocess

import common as C

HOT = (253, 231, 37)


def snapshot(folder):
    """{name: sha256} of every entry of folder (hidden ones included)."""
    out = {}
    for n in sorted(os.listdir(folder)):
        p = os.path.join(folder, n)
        out[n] = hashlib.sha256(open(p, "rb").read()).hexdigest() if os.path.isfile(p) else "dir"
    return out


def index_pngs(folder):
    return sorted(ln.split("\t")[0] for ln in open(os.path.join(folder, "index.txt"),
                                                   encoding="utf-8")
                  if ln.endswith("\n") and "\t" in ln and not ln.startswith(("#", "note: ")))


def other_inputs():
    """A run whose plot set differs from the example's (profiling and accuracy
    of tests/data)."""
    return ["--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"), "--debug_buffer",
            os.path.join(C.DATA, "runs5_ops12.bin"), "--etrecord",
            os.path.join(C.DATA, "example_refs.etrecord"), "--compare", "--no-table"]


def try_mount(path, size):
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path],
                       capture_output=True, text=True)
    return p.returncode == 0


def fill(folder, room):
    """Fills the file system of folder but `room` bytes: one file written
    until ENOSPC, then cut short by `room` (some plots fit, not all)."""
    filler = os.path.join(folder, "filler")
    with open(filler, "wb", buffering=0) as f:
        chunk = b"\0" * 4096
        try:
            while True:
                f.write(chunk)
        except OSError:
            pass
    size = os.path.getsize(filler)
    os.truncate(filler, max(0, size - room))
    return filler


def case_full_disk(d):
    small = os.path.join(d, "small")
    mounted = try_mount(small, "4m")
    os.makedirs(small, exist_ok=True)
    try:
        pdir = os.path.join(small, "plots")
        p = C.call("--example", "--no-table", "--plot", pdir)
        C.check("full disk: the first set is written (exit 0)", p.returncode == 0, p.stderr[-400:])
        open(os.path.join(pdir, "mine.txt"), "w").write("the user's own file\n")
        before = snapshot(pdir)
        C.check("full disk: the first set has heat maps and an index",
                "index.txt" in before and any(n.startswith("heatmap_") for n in before),
                str(sorted(before)))
        if mounted:
            filler = fill(small, 48 * 1024)
            p = C.call(*other_inputs(), "--plot", pdir)
            how = "tmpfs full"
        else:
            print("note: not root or no mount: RLIMIT_FSIZE stands in for the full disk")
            filler = None

            def small_files():
                resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
            p = subprocess.run([C.ETC, *other_inputs(), "--plot", pdir], capture_output=True,
                               text=True, preexec_fn=small_files)
            how = "file size limit"
        C.check(f"full disk ({how}): exit 4", p.returncode == 4, (p.returncode, p.stderr[-600:]))
        C.check(f"full disk ({how}): the error says nothing was replaced",
                "no plot was replaced" in p.stderr, p.stderr[-600:])
        after = snapshot(pdir)
        C.check(f"full disk ({how}): the previous set is byte for byte as it was, the user's "
                "file too, nothing added", after == before,
                str(sorted(set(after.items()) ^ set(before.items())))[:600])
        if filler:
            os.unlink(filler)
        p = C.call(*other_inputs(), "--plot", pdir)
        C.check("full disk, room again: the new set is written (exit 0)", p.returncode == 0,
                p.stderr[-400:])
        names = set(os.listdir(pdir))
        pngs = sorted(n for n in names if n.endswith(".png"))
        C.check("room again: the new set replaced the old (no numeric-gap plot of the "
                "example left)", not any(n.startswith(("numgap_", "time_error")) for n in names)
                and "mine.txt" in names, str(sorted(names)))
        C.check("room again: index.txt lists exactly the PNGs there", index_pngs(pdir) == pngs,
                f"{index_pngs(pdir)} vs {pngs}")
        C.check("room again: no hidden file or folder left",
                not [n for n in names if n.startswith(".")], str(sorted(names)))
    finally:
        if mounted:
            subprocess.run(["umount", small], capture_output=True)


# Follows the combined script: a whole PNG for the first plot it is given,
# then exits 1 with a message (as a gnuplot that fails half way).
FAKE_HALF = """#!/usr/bin/python3
import os, re, struct, sys, zlib
def png():
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = zlib.compress(b"\\0\\xff\\x00\\x00")
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))
cwd = "."
for line in sys.stdin:
    m = re.match(r"cd '(.*)'", line)
    if m:
        cwd = m.group(1)
    m = re.match(r"outfile = '(.*)'", line)
    if m:
        with open(os.path.join(cwd, m.group(1)), "wb") as f:
            f.write(png())
        sys.stderr.write("gnuplot: fake failure half way\\n")
        sys.exit(1)
"""


def case_gnuplot_half(d):
    pdir = os.path.join(d, "half")
    p = C.call("--example", "--no-table", "--plot", pdir)
    C.check("gnuplot fails half way: the first set is written", p.returncode == 0, p.stderr[-300:])
    before = snapshot(pdir)
    bindir = os.path.join(d, "fakebin-half")
    os.makedirs(bindir)
    with open(os.path.join(bindir, "gnuplot"), "w") as f:
        f.write(FAKE_HALF)
    os.chmod(os.path.join(bindir, "gnuplot"), 0o755)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    p = subprocess.run([C.ETC, *other_inputs(), "--plot", pdir], capture_output=True, text=True,
                       env=env, timeout=300)
    C.check("gnuplot fails half way: exit 4 with gnuplot's message",
            p.returncode == 4 and "fake failure half way" in p.stderr,
            (p.returncode, p.stderr[-500:]))
    C.check("gnuplot fails half way: the previous set is whole, nothing left behind",
            snapshot(pdir) == before, str(sorted(set(snapshot(pdir)) ^ set(before))))


def gnuplot_logger(d, tag):
    """A `gnuplot` that logs each start and the script it is fed, then runs
    the real one on that script."""
    real = shutil.which("gnuplot")
    bindir = os.path.join(d, "bin-" + tag)
    os.makedirs(bindir)
    log = os.path.join(d, tag + ".starts")
    fed = os.path.join(d, tag + ".fed")
    with open(os.path.join(bindir, "gnuplot"), "w") as f:
        f.write(f"#!/bin/sh\necho start >> '{log}'\ntee -a '{fed}' | exec '{real}' \"$@\"\n")
    os.chmod(os.path.join(bindir, "gnuplot"), 0o755)
    return bindir, log, fed


def case_parallel(d):
    if not shutil.which("gnuplot"):
        print("skip parallel: gnuplot not found")
        return
    sets = {}
    for threads in ("1", "2"):
        bindir, log, fed = gnuplot_logger(d, "t" + threads)
        pdir = os.path.join(d, "par" + threads)
        env = dict(os.environ, ETC_THREADS=threads,
                   PATH=bindir + os.pathsep + os.environ["PATH"])
        p = subprocess.run([C.ETC, "--example", "--no-table", "--plot", pdir],
                           capture_output=True, text=True, env=env, timeout=300)
        starts = open(log).read().count("start") if os.path.exists(log) else 0
        C.check(f"ETC_THREADS={threads}: {threads} gnuplot process(es) for the run",
                p.returncode == 0 and starts == int(threads), (p.returncode, starts,
                                                               p.stderr[-300:]))
        script = open(fed).read() if os.path.exists(fed) else ""
        names = sorted(os.listdir(pdir))
        maps = [n for n in names if "heatmap" in n and n.endswith(".png")]
        C.check(f"ETC_THREADS={threads}: heat maps made without gnuplot, .gp and .dat beside",
                maps and "heatmap" not in script and "load 'numgap_chart.gp'" in script and
                all(m[:-4] + ".gp" in names and m[:-4] + ".dat" in names for m in maps),
                f"{maps} {re.findall(r'load .*', script)[:20]}")
        idx = open(os.path.join(pdir, "index.txt"), encoding="utf-8").read()
        sets[threads] = ([n for n in names if n.endswith(".png")], idx)
    C.check("1 and 2 gnuplot processes make the same PNGs and the same index",
            sets["1"] == sets["2"], str(sets)[:800])
    heat_map_pixels(os.path.join(d, "par2"))


def heat_map_pixels(pdir):
    """The native heat maps follow the layout their .gp states."""
    for name in sorted(n[:-4] for n in os.listdir(pdir) if "heatmap" in n and n.endswith(".png")):
        v = C.gp_vars(os.path.join(pdir, name + ".gp"))
        w, h, rows = C.decode_png(os.path.join(pdir, name + ".png"))
        C.check(f"{name}: the PNG is the size the .gp says",
                (w, h) == (int(v["plot_width"]), int(v["plot_height"])), f"{w}x{h} {v}")
        m = re.search(r"at row (\d+), column (\d+)", v["plot_title"])
        mr, mc = int(v["map_rows"]), int(v["map_cols"])
        x0, x1 = float(v["map_left"]) * w, float(v["map_right"]) * w
        y0, y1 = (1 - float(v["map_top"])) * h, (1 - float(v["map_bottom"])) * h
        br, bc = int(v["block_rows"]), int(v["block_cols"])

        def cell(r, c):
            return rows[int(y0 + (r + 0.5) * (y1 - y0) / mr)][int(x0 + (c + 0.5) * (x1 - x0) / mc)]
        if not m:
            C.check(f"{name}: the title names the largest error", False, v["plot_title"])
            continue
        r, c = int(m.group(1)) // br, int(m.group(2)) // bc
        cmax = float(v["cb_max"])
        # the title's max is the top of the scale unless a shared scale is larger
        tmax = float(re.search(r"max ([0-9.e+-]+) at", v["plot_title"]).group(1))
        want_hot = abs(tmax - cmax) <= 1e-3 * cmax
        got = cell(r, c)
        C.check(f"{name}: the cell of the largest error is "
                f"{'the hottest colour' if want_hot else 'hotter than every other'}",
                all(abs(a - b) <= 6 for a, b in zip(got, HOT)) if want_hot else
                all(sum(got) >= sum(cell(rr, cc)) - 6 for rr in range(mr) for cc in range(mc)),
                f"{got} at {r},{c}")


C.run_cases("plots_atomic", case_full_disk, case_gnuplot_half, case_parallel)
