"""Plots that answer their question at a glance (issue 15), checked on the
PNG pixels (decoded by tests/common.py), the .gp variables and the files made,
on the 12-output sample (tests/plot_sample.py: output 3 fails at about 78 dB
against --min-snr 90, output 7 passes, output 5 has one element, the others
are identical):
  - metric_snr: red bars for the failing outputs, reaching well above the
    axis; blue for the passing one; the range holds every finite value; the
    threshold drawn with its value; capped markers say "inf";
  - metric_cosine: 1 - cosine on a log axis;
  - heat map of output 3: the cell of its largest error is the hottest colour
    (253, 231, 37), another cell is not; title with the max and where;
  - no heat map and no histogram for identical outputs (said once in
    index.txt), no histogram for 16 elements or fewer;
  - one gnuplot process per core for the whole --plot run (a counting
    wrapper, ETC_THREADS=2);
  - ops_runs with one run: points, "1 run"; ops_top ticks with SI prefixes.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ["ETC_SRC"]
ETC = os.environ["ETCOMPARE"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
import common  # noqa: E402
from common import decode_png  # noqa: E402,F401 (test_report_html imports it from here)
from test_accuracy import check  # noqa: E402
import test_accuracy as A  # noqa: E402
from plot_sample import BAD, BAD_AT, make_sample  # noqa: E402

HOT = (253, 231, 37)
RED = (214, 39, 40)
BLUE = (59, 120, 176)


def near(p, q, tol=3):
    return all(abs(a - b) <= tol for a, b in zip(p, q))


def gp_vars(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^(\w+) = (.*)$", line.rstrip("\n"))
            if m:
                out[m.group(1)] = m.group(2)
    return out


def gnuplot_counter(d):
    """A `gnuplot` that logs each start to d/starts and runs the real one."""
    real = shutil.which("gnuplot")
    bindir = os.path.join(d, "bin")
    os.makedirs(bindir, exist_ok=True)
    log = os.path.join(d, "starts")
    with open(os.path.join(bindir, "gnuplot"), "w") as f:
        f.write(f"#!/bin/sh\necho start >> '{log}'\nexec '{real}' \"$@\"\n")
    os.chmod(os.path.join(bindir, "gnuplot"), 0o755)
    return bindir, log


def case_sample(d):
    etdp, dbg, rec = make_sample(d)
    pdir = os.path.join(d, "plots")
    bindir, log = gnuplot_counter(d)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               ETC_THREADS="2")
    p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                        "--min-snr", "90", "--metrics", "snr,mse,cosine,max_abs", "--no-table",
                        "--plot", pdir], capture_output=True,
                       text=True, env=env)
    check("sample: the gate fails (exit 1)", p.returncode == 1, p.stderr)
    names = set(os.listdir(pdir)) if os.path.isdir(pdir) else set()
    pngs = sorted(n for n in names if n.endswith(".png"))
    starts = open(log).read().count("start") if os.path.exists(log) else 0
    check("one gnuplot process per core (ETC_THREADS=2) for the whole --plot run",
          starts == 2, f"{starts} starts for {len(pngs)} PNGs")
    check("a .gp and .dat per PNG", all(n[:-4] + ".gp" in names and n[:-4] + ".dat" in names
                                         for n in pngs), str(sorted(names)))
    check("no temporary file left", not [n for n in names if n.startswith(".")], str(names))

    # files: identical outputs get nothing, small ones no histogram
    hist = sorted(n for n in pngs if n.startswith("error_hist_"))
    maps = sorted(n for n in pngs if n.startswith("heatmap_"))
    check("histograms only for outputs with errors and > 16 elements",
          hist == ["error_hist_Execute_run0_out3.png", "error_hist_Execute_run0_out7.png"],
          str(hist))
    check("heat maps only for outputs with errors (2-D and more)",
          maps == ["heatmap_Execute_run0_out3.png", "heatmap_Execute_run0_out7.png"],
          str(maps))
    check("no histogram file for an identical output",
          not [n for n in names if n.startswith("error_hist_Execute_run0_out0.")], str(names))
    index = open(os.path.join(pdir, "index.txt")).read() if "index.txt" in names else ""
    check("index.txt says once which outputs are identical",
          index.count("identical to the reference") == 1 and "run 0 out 0," in index, index)
    check("singular and plural: no '1 runs' / '1 outputs'",
          not re.search(r"\b1 (runs|outputs|op types|operators)\b", index), index)

    # metric_snr: red failing bars above the axis, blue passing bar, threshold, inf markers
    v = gp_vars(os.path.join(pdir, "metric_snr.gp"))
    check("metric_snr: threshold 90 drawn with its value",
          v.get("has_threshold") == "1" and float(v.get("threshold", 0)) == 90 and
          "90" in v.get("threshold_label", ""), str(v))
    dat = [ln for ln in open(os.path.join(pdir, "metric_snr.dat")) if not ln.startswith("#")]
    finite = [float(ln.split()[1]) for ln in dat if ln.split()[1] != "NaN"]
    check("metric_snr: y range holds every finite value with margin",
          float(v["y_lo"]) <= min(0, min(finite)) and float(v["y_hi"]) > max(finite) * 1.05,
          f"{v.get('y_lo')} {v.get('y_hi')} {finite}")
    check("metric_snr: infinite values carry an 'inf' marker",
          sum('"inf"' in ln for ln in dat) == 9, "".join(dat))
    w, h, rows = decode_png(os.path.join(pdir, "metric_snr.png"))
    red = [(x, y) for y in range(h) for x in range(w) if near(rows[y][x], RED)]
    blue = [(x, y) for y in range(h) for x in range(w) if near(rows[y][x], BLUE)]
    check("metric_snr: failing bars are red, with height",
          len(red) > 2000 and max(y for _, y in red) - min(y for _, y in red) > 100,
          f"{len(red)} red pixels")
    # bars 3 and 5 are red, bar 7 blue: columns left of the blue bar
    if red and blue:
        # bars are columns of many red pixels; the key's sample is short
        count = {}
        for x, _ in red:
            count[x] = count.get(x, 0) + 1
        rx = sorted(x for x, k in count.items() if k > 20)
        bcount = {}
        for x, _ in blue:
            bcount[x] = bcount.get(x, 0) + 1
        bx = sorted(x for x, k in bcount.items() if k > 20)
        check("metric_snr: red columns (bars 3, 5) left of the blue one (bar 7)",
              bx and rx and max(rx) < min(bx) and len(rx) > 30, f"{rx} {bx}")
        # the red bar of output 3 (78 dB) reaches above 40% of the way to the top
        col = [y for x, y in red if x == rx[len(rx) // 4]]
        check("metric_snr: the failing 78 dB bar is tall (not cut by the axis range)",
              max(col) - min(col) > 0.25 * h, f"{min(col)}..{max(col)} of {h}")

    # cosine: 1 - cos on a log axis
    v = gp_vars(os.path.join(pdir, "metric_cosine.gp"))
    dat = [ln.split() for ln in open(os.path.join(pdir, "metric_cosine.dat"))
           if not ln.startswith("#")]
    check("metric_cosine: log axis of 1 - cosine",
          v.get("log_y") == "1" and "1 \u2212 cosine" in v.get("plot_ylabel", "") and
          dat[3][1] != "NaN" and 0 < float(dat[3][1]) < 1e-3, f"{v.get('log_y')} {dat[3]}")

    # heat map: the hottest pixel at the known error position
    gp = os.path.join(pdir, "heatmap_Execute_run0_out3.gp")
    v = gp_vars(gp)
    w, h, rows = decode_png(os.path.join(pdir, "heatmap_Execute_run0_out3.png"))
    mr, mc = int(v["map_rows"]), int(v["map_cols"])
    x0, x1 = float(v["map_left"]) * w, float(v["map_right"]) * w
    y0, y1 = (1 - float(v["map_top"])) * h, (1 - float(v["map_bottom"])) * h

    def cell(r, c):
        return rows[int(y0 + (r + 0.5) * (y1 - y0) / mr)][int(x0 + (c + 0.5) * (x1 - x0) / mc)]

    check("heat map: 4 x 64 cells, wider than tall, no empty band (aspect kept)",
          (mr, mc) == (4, 64) and (x1 - x0) / (y1 - y0) > 10 and h < 320, f"{w}x{h}")
    check("heat map: the cell of the largest error is the hottest colour",
          near(cell(*BAD_AT), HOT, 6), str(cell(*BAD_AT)))
    check("heat map: another cell is not", not near(cell(0, 0), HOT, 40), str(cell(0, 0)))
    check("heat map: title with shape, max and where; axes and colour bar labelled",
          "[4, 64]" in v.get("plot_title", "") and
          f"at row {BAD_AT[0]}, column {BAD_AT[1]}" in v.get("plot_title", "") and
          "dim 1 (64)" in v.get("plot_xlabel", "") and "dim 0 (4)" in v.get("plot_ylabel", "") and
          "reference|" in v.get("plot_cblabel", ""), str(v)[:400])
    hot = sum(1 for y in range(h) for x in range(w) if near(rows[y][x], HOT, 6))
    check("heat map: the bad element is visible (a block of hot pixels)", hot >= 36, str(hot))

    # histogram: statistics in the title, not in a box over the bars
    gp = open(os.path.join(pdir, "error_hist_Execute_run0_out3.gp")).read()
    check("histogram: statistics in the title", "set title plot_title . \"\\n\" . stats_line"
          in gp and "set label 1" not in gp, gp[-800:])

    # profiling plots of one run: points, singular, SI ticks
    v = gp_vars(os.path.join(pdir, "ops_runs.gp"))
    check("ops_runs with 1 run: points, '1 run'",
          v.get("points_only") == "1" and "(1 run:" in v.get("plot_title", ""), str(v)[:300])
    v = gp_vars(os.path.join(pdir, "ops_top.gp"))
    check("ops_top: ticks with SI prefixes", re.search(r"''\d+(\.\d+)? (ns|\xb5s|ms)''",
                                                       v.get("value_tics", "")) is not None,
          v.get("value_tics", ""))
    return pdir


def case_ops_with_etrecord(d):
    """With an ETRecord the ops are op types: OPERATOR_CALL is not added to the
    kernel's time (it was counted twice): 5 runs x min <= total <= 5 x max."""
    pdir = os.path.join(d, "ops")
    data = os.path.join(SRC, "tests", "data")
    p = subprocess.run([ETC, "--etdump", os.path.join(data, "runs5_ops12.etdp"), "--etrecord",
                        os.path.join(data, "example_refs.etrecord"), "--no-table", "--plot",
                        pdir], capture_output=True, text=True)
    check("ops with ETRecord: exit 0", p.returncode == 0, p.stderr)
    top = {ln.split('"')[1]: float(ln.split()[1]) for ln in open(os.path.join(pdir, "ops_top.dat"))
           if not ln.startswith("#")}
    runs = [ln for ln in open(os.path.join(pdir, "ops_runs.dat")) if not ln.startswith("#")]
    bad = []
    for ln in runs:
        f = ln.split()
        name = ln.split('"')[1]
        lo, hi = float(f[1]), float(f[5])
        if not (5 * lo <= top[name] * (1 + 1e-9) and top[name] <= 5 * hi * (1 + 1e-9)):
            bad.append((name, lo, hi, top[name]))
    check("ops with ETRecord: per-run times add up to the total (no double count)",
          runs and not bad, str(bad))
    v = gp_vars(os.path.join(pdir, "ops_runs.gp"))
    check("ops with 5 runs: box plots, '5 runs'",
          v.get("points_only") == "0" and "(5 runs)" in v.get("plot_title", ""), str(v)[:300])


def case_remake(pdir):
    """Each plot can be remade alone from its .gp and .dat."""
    if not shutil.which("gnuplot"):
        print("skip remake: gnuplot not found")
        return
    p = subprocess.run(["gnuplot", "-e", "outfile='again.png'", "heatmap_Execute_run0_out3.gp"],
                       cwd=pdir, capture_output=True, text=True)
    check("a heat map's .gp remakes it alone", p.returncode == 0 and os.path.getsize(
        os.path.join(pdir, "again.png")) > 1000, p.stderr)


def case_single_row(d):
    """A [1, 16] tensor (the example's first divergence): gnuplot draws no
    image of one row, so the map is drawn as boxes; its hottest cell is
    where the title says the largest error is."""
    pdir = os.path.join(d, "row")
    rc, out, err = A.run("--example", "--no-table", "--plot", pdir)
    gp = os.path.join(pdir, "numgap_first_divergence_heatmap.gp")
    v = gp_vars(gp)
    m = re.search(r"at row (\d+), column (\d+)", v.get("plot_title", ""))
    check("one-row heat map: written with its largest error named",
          rc == 0 and v.get("map_rows") == "1" and m is not None, f"{rc} {err[-300:]} {v}")
    if m is None:
        return
    w, h, rows = decode_png(os.path.join(pdir, "numgap_first_divergence_heatmap.png"))
    mc = int(v["map_cols"])
    x0, x1 = float(v["map_left"]) * w, float(v["map_right"]) * w
    y = int(((1 - float(v["map_top"])) + (1 - float(v["map_bottom"]))) / 2 * h)

    def cell(c):
        return rows[y][int(x0 + (c + 0.5) * (x1 - x0) / mc)]

    bad = int(m.group(2))
    check("one-row heat map: the cell of the largest error is the hottest colour",
          near(cell(bad), HOT, 6), str(cell(bad)))
    others = [c for c in range(mc) if c != bad]
    check("one-row heat map: every other cell is drawn and not the hottest",
          all(not near(cell(c), (255, 255, 255), 3) and not near(cell(c), HOT, 6)
              for c in others), str([cell(c) for c in others]))


def main():
    if not shutil.which("gnuplot"):
        print("SKIP test_plots: gnuplot not found (the plots need it)")
        return 0
    work = os.environ.get("ETC_WORK", tempfile.gettempdir())
    os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as d:
        pdir = case_sample(d)
        case_remake(pdir)
        case_ops_with_etrecord(d)
        case_single_row(d)
    return common.summary()


if __name__ == "__main__":
    sys.exit(main())
