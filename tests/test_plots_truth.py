#!/usr/bin/env python3
"""Plots that cannot mislead (issue 25), checked from the gnuplot scripts and
data etcompare writes beside each PNG, not from pixels: every plot kind of
the bundled example, tests/data (accuracy with an ETRecord, profiling only)
and a performance diff:

  - time and percentage axes hold zero (tax per run, time per run, the
    time-and-error scatter); one run is a bar, not a lone dot;
  - only gated metrics are coloured pass/fail (the others have no threshold
    and no failing row) and, unless named by --metrics, only SNR and the
    gated metrics get a bar chart;
  - one heat map per distinct (block, output, reference), failing first, and
    every map of one output on one colour scale named in the colour bar;
  - labels are never cut (no "…"); per-op plots show the node name with the
    op type beneath;
  - where time and error go: the culprit (first divergence) and hot spots
    labelled, x from 0; the performance diff has its gate line and the
    failing regressions red;
  - a plot folder stays true: a second run removes the plots the first one
    wrote (named by its index.txt), keeps a file of the user's, and the
    index lists exactly the PNGs there.
"""
import os
import shutil
import re
import subprocess

import common as C


def num(v):
    return float(v)


def dat_rows(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        rows.append(line.rstrip("\n"))
    return rows


def plot(args, d, name):
    pdir = os.path.join(d, name)
    p = subprocess.run([C.ETC] + args + ["--no-table", "--plot", pdir], capture_output=True,
                       text=True, cwd=d)
    return p, pdir


def index_pngs(pdir):
    names = []
    for line in open(os.path.join(pdir, "index.txt"), encoding="utf-8"):
        if line.startswith("#") or line.startswith("note: "):
            continue
        names.append(line.split("\t")[0])
    return names


def example(d):
    p, pdir = plot(["--example"], d, "ex")
    C.check("example: --plot runs", p.returncode == 0, p.stderr)
    files = set(os.listdir(pdir))
    pngs = sorted(f for f in files if f.endswith(".png"))
    C.check("example: every PNG has its .gp and .dat beside it",
            all(f[:-4] + ".gp" in files and f[:-4] + ".dat" in files for f in pngs), str(pngs))
    C.check("example: index.txt lists exactly the PNGs there",
            sorted(index_pngs(pdir)) == pngs, f"{index_pngs(pdir)} vs {pngs}")
    # zero on time and percentage axes
    for name in ("tax_runs", "ops_runs"):
        v = C.gp_vars(os.path.join(pdir, name + ".gp"))
        C.check(f"example: {name} value axis starts at 0", num(v["y_lo"]) == 0.0
                and num(v["y_hi"]) > 0, str(v.get("y_lo")))
    C.check("example: the lines template sets the y range it is given",
            "set yrange [y_lo:y_hi]" in open(os.path.join(pdir, "tax_runs.gp")).read())
    # only gated metrics coloured: the example gates SNR only; by default an
    # ungated metric gets no bar chart, asked for by --metrics it is grey
    mets = [f for f in pngs if f.startswith("metric_")]
    C.check("example: one metric bar chart by default, the gated SNR's",
            mets == ["metric_snr.png"], str(mets))
    p2, pdir2 = plot(["--example", "--metrics", "snr,mse,cosine,max_abs"], d, "example_metrics")
    gated = {}
    for f in sorted(os.listdir(pdir2)) if os.path.isdir(pdir2) else []:
        if f.startswith("metric_") and f.endswith(".png"):
            v = C.gp_vars(os.path.join(pdir2, f[:-4] + ".gp"))
            rows = dat_rows(os.path.join(pdir2, f[:-4] + ".dat"))
            fails = sum(1 for r in rows if re.match(r"^\S+ \S+ \".*\" \S+ 1 ", r))
            gated[f] = (v["has_threshold"], fails)
    C.check("example: SNR is gated and its failing outputs are red",
            gated.get("metric_snr.png", ("0", 0))[0] == "1" and gated["metric_snr.png"][1] > 0,
            str(gated))
    C.check("example --metrics snr,mse,cosine,max_abs: the ungated metrics have no threshold "
            "and no red bar",
            all(t == "0" and n == 0 for f, (t, n) in gated.items() if f != "metric_snr.png")
            and len(gated) == 4, str(gated) + p2.stderr[-300:])
    # heat maps: distinct (output, reference), one scale per output
    maps = [f for f in pngs if f.startswith("heatmap_")]
    keys = [re.sub(r"_run\d+", "", m) for m in maps]
    C.check("example: no duplicate heat maps (one per output and reference)",
            len(maps) == 2 and len(set(keys)) == len(keys), str(maps))
    scales = {C.gp_vars(os.path.join(pdir, m[:-4] + ".gp"))["cb_max"] for m in maps}
    C.check("example: the heat maps of output 0 share one colour scale", len(scales) == 1,
            str(scales))
    cbl = [C.gp_vars(os.path.join(pdir, m[:-4] + ".gp"))["plot_cblabel"] for m in maps]
    C.check("example: the colour bar names the shared scale",
            all("one scale for out 0" in c for c in cbl), str(cbl))
    # the failing map first: the index order is the drawing order
    first = index_pngs(pdir)
    hm = [n for n in first if n.startswith("heatmap_")]
    C.check("example: the failing reference's map comes first (ref 0 fails at 0.018)",
            hm and "_ref0_" in hm[0], str(hm))
    # labels uncut, node name with op type beneath
    cut = [f for f in files if f.endswith(".dat") and "\u2026" in open(os.path.join(pdir, f),
                                                                         encoding="utf-8").read()]
    C.check("example: no label is cut (no ellipsis in any .dat)", not cut, str(cut))
    # long lines wrap after '.', '_' or ' ' (never cut): undo those breaks
    unwrap = lambda t: re.sub(r"([._ ])\\n", r"\1", t)
    snr = unwrap(open(os.path.join(pdir, "numgap_chart.dat"), encoding="utf-8").read())
    te = unwrap(open(os.path.join(pdir, "time_error.dat"), encoding="utf-8").read())
    C.check("example: numgap chart labels are node name, op type beneath",
            '"3 native_layer_norm\\naten.native_layer_norm.default"' in snr, snr[:400])
    C.check("example: the time-and-error plot uses the same labels",
            '"3 native_layer_norm\\naten.native_layer_norm.default"' in te, te[:400])
    # the chart draws the SNR and marks where the error enters: no separate
    # SNR or SNR-drop plot says it again
    C.check("example: no numgap_snr or numgap_snr_drop beside numgap_chart",
            "numgap_chart.png" in files and
            not any(f.startswith(("numgap_snr.", "numgap_snr_drop.")) for f in files),
            str(sorted(files)))
    # the cosine is not gated in the example: no numgap_cosine (the numeric
    # gap test draws it with --min-cosine)
    C.check("example: no numgap_cosine without --min-cosine",
            not any(f.startswith("numgap_cosine.") for f in files), str(sorted(files)))
    # where time and error go
    C.check("example: the time-and-error plot is made", "time_error.png" in files)
    v = C.gp_vars(os.path.join(pdir, "time_error.gp"))
    rows = dat_rows(os.path.join(pdir, "time_error.dat"))
    C.check("example: time share axis from 0", num(v["x_lo"]) == 0 and num(v["y_lo"]) <= 0,
            str(v))
    culprit = [r for r in rows if r.split(" ")[2] in ("2", "3")]
    hot = [r for r in rows if r.split(" ")[2] in ("1", "3")]
    C.check("example: the first divergence (native_layer_norm) is labelled a culprit",
            any("native_layer_norm" in r for r in culprit), "\n".join(rows))
    C.check("example: hot spots labelled (the ops with the most time)", len(hot) >= 1)
    xs = [float(r.split(" ")[0]) for r in rows]
    C.check("example: time shares are percentages of Method::execute (0..100, sum <= 100)",
            all(0 <= x <= 100 for x in xs) and sum(xs) <= 100.0001, str(xs))
    tl = C.gp_vars(os.path.join(pdir, "timeline.gp"))
    ends = [float(r.split(" ")[2]) for r in dat_rows(os.path.join(pdir, "timeline.dat"))]
    C.check("example: the timeline's unit is chosen from the data and named on the axis",
            tl["plot_xlabel"] == "'time since the first event (\u00b5s)'" and 1 <= max(ends) < 1000,
            f"{tl['plot_xlabel']} {max(ends)}")
    C.check("example: one-run-free check: numgap_chart has the threshold line",
            C.gp_vars(os.path.join(pdir, "numgap_chart.gp"))["has_threshold"] == "1")
    return pdir


def changed(d, pdir):
    """A stale plot's file is removed only while it has the time etcompare
    gave its set (index.txt's): one the user changed since, or a folder
    whose files were copied without their times, keeps it."""
    etdp = os.path.join(C.DATA, "runs5_ops12.etdp")
    kept = os.path.join(d, "kept")
    shutil.copytree(pdir, kept, copy_function=shutil.copy2)  # times kept
    edited = os.path.join(kept, "metric_snr.png")
    open(edited, "wb").write(b"the user's annotated copy")
    before = set(os.listdir(kept))
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", kept],
                       capture_output=True, text=True)
    after = set(os.listdir(kept))
    C.check("changed: a stale plot the user rewrote is kept, its unchanged script and data "
            "removed, like every other stale plot",
            p.returncode == 0 and os.path.exists(edited) and
            open(edited, "rb").read() == b"the user's annotated copy" and
            "metric_snr.gp" not in after and "metric_snr.dat" not in after and
            not any(f.startswith("heatmap_") for f in after) and
            any(f.startswith("heatmap_") for f in before),
            f"rc={p.returncode} {sorted(after)} {p.stderr[-300:]}")
    bare = os.path.join(d, "copied")
    shutil.copytree(pdir, bare, copy_function=shutil.copyfile)  # new times, index too
    old = set(os.listdir(bare))
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", bare],
                       capture_output=True, text=True)
    C.check("changed: in a folder copied without its times, nothing of the old set is "
            "removed (no file is provably etcompare's)",
            p.returncode == 0 and old - {"index.txt"} <= set(os.listdir(bare)),
            f"rc={p.returncode} {sorted(old - set(os.listdir(bare)))} {p.stderr[-300:]}")
    # what is kept stays listed: the folder holds what the index lists, and a
    # later run that makes those plots again replaces them (no exit 4 saying
    # etcompare did not write them)
    for folder, what in ((kept, "the edited plot"), (bare, "the copied set")):
        listed = set(index_pngs(folder))
        pngs = {f for f in os.listdir(folder) if f.endswith(".png")}
        C.check(f"changed: {what} kept is listed in index.txt, which lists exactly the PNGs",
                listed == pngs and "metric_snr.png" in listed, f"{sorted(listed ^ pngs)}")
        p = subprocess.run([C.ETC, "--example", "--no-table", "--plot", folder],
                           capture_output=True, text=True)
        C.check(f"changed: then --example into it again: exit 0, its plots replaced",
                p.returncode == 0 and
                open(os.path.join(folder, "metric_snr.png"), "rb").read()[:4] == b"\x89PNG",
                f"rc={p.returncode} {p.stderr[-300:]}")


def stale(d, pdir):
    changed(d, pdir)
    mine = os.path.join(pdir, "mine.png")
    open(mine, "wb").write(b"user file")
    before = set(os.listdir(pdir))
    p = subprocess.run([C.ETC, "--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"),
                        "--no-table", "--plot", pdir], capture_output=True, text=True)
    after = set(os.listdir(pdir))
    C.check("stale: second run into the folder runs", p.returncode == 0, p.stderr)
    C.check("stale: the user's file is kept", "mine.png" in after)
    gone = {f for f in before if f.startswith(("heatmap_", "metric_", "numgap_", "time_error"))}
    C.check("stale: the first run's accuracy and numeric-gap plots are removed",
            gone and not (gone & after), str(sorted(gone & after)))
    pngs = sorted(f for f in after if f.endswith(".png") and f != "mine.png")
    C.check("stale: index.txt lists exactly the plots there",
            sorted(index_pngs(pdir)) == pngs, f"{index_pngs(pdir)} vs {pngs}")
    C.check("stale: no .gp or .dat without its plot",
            all(f[:-3] + ".png" in after for f in after if f.endswith(".gp")))
    # a folder without an etcompare index: nothing removed
    other = os.path.join(d, "other")
    os.makedirs(other)
    open(os.path.join(other, "index.txt"), "w").write("metric_snr.png\tmine\n")
    open(os.path.join(other, "metric_snr.gp"), "w").write("# mine\n")
    open(os.path.join(other, "keep.png"), "w").write("x")
    p = subprocess.run([C.ETC, "--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"),
                        "--no-table", "--plot", other], capture_output=True, text=True)
    C.check("stale: an index.txt etcompare did not write names nothing to remove",
            open(os.path.join(other, "metric_snr.gp")).read() == "# mine\n"
            and os.path.exists(os.path.join(other, "keep.png")))
    C.check("stale: a folder whose index.txt etcompare did not write is refused before "
            "the run (exit 2, the file named), the index kept",
            p.returncode == 2 and "other/index.txt: not an etcompare index" in p.stderr and
            open(os.path.join(other, "index.txt")).read() == "metric_snr.png\tmine\n",
            f"rc={p.returncode} {p.stderr[-300:]}")
    protect(d)


def protect(d):
    """No plot replaces a file etcompare did not write, nor an input of the run."""
    etdp = os.path.join(C.DATA, "runs5_ops12.etdp")
    # the user's own file under a plot's name, in a folder etcompare never wrote to
    own = os.path.join(d, "own")
    os.makedirs(own)
    open(os.path.join(own, "ops_top.png"), "wb").write(b"mine")
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", own],
                       capture_output=True, text=True)
    C.check("protect: a user's ops_top.png is not replaced (exit 4, the file named)",
            p.returncode == 4 and "own/ops_top.png: the plot of the same name would replace "
            "this file, which etcompare did not write" in p.stderr and
            open(os.path.join(own, "ops_top.png"), "rb").read() == b"mine" and
            sorted(os.listdir(own)) == ["ops_top.png"],
            f"rc={p.returncode} {p.stderr[-300:]} {sorted(os.listdir(own))}")
    # inputs inside the plot folder under the names of plots
    coll = os.path.join(d, "coll")
    os.makedirs(coll)
    src = {"timeline.dat": etdp, "ops_top.png": os.path.join(C.DATA, "runs5_ops12.bin")}
    for name, f in src.items():
        shutil.copyfile(f, os.path.join(coll, name))
    p = subprocess.run([C.ETC, "--etdump", os.path.join(coll, "timeline.dat"),
                        "--debug_buffer", os.path.join(coll, "ops_top.png"), "--no-table",
                        "--plot", coll], capture_output=True, text=True)
    same = all(open(os.path.join(coll, n), "rb").read() == open(f, "rb").read()
               for n, f in src.items())
    C.check("protect: inputs named like plots in the plot folder are not replaced",
            p.returncode == 4 and same and "input of the run" in p.stderr,
            f"rc={p.returncode} {p.stderr[-300:]}")
    # after a run of its own there: a forged index naming an input removes nothing
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", own + "2"],
                       capture_output=True, text=True)
    idx = os.path.join(own + "2", "index.txt")
    shutil.copyfile(os.path.join(C.DATA, "runs5_ops12.bin"), os.path.join(own + "2", "in.png"))
    with open(idx, "a") as f:
        f.write("in.png\tnot a plot of this run\n")
    p = subprocess.run([C.ETC, "--etdump", etdp, "--debug_buffer",
                        os.path.join(own + "2", "in.png"), "--no-table", "--plot", own + "2"],
                       capture_output=True, text=True)
    C.check("protect: a previous index naming an input does not remove it",
            p.returncode == 0 and os.path.exists(os.path.join(own + "2", "in.png")),
            f"rc={p.returncode} {p.stderr[-300:]}")
    # without gnuplot the index names the timeline by its script: the user's
    # timeline.png (older than the script) is neither removed nor replaced
    u = os.path.join(d, "nognuplot")
    os.makedirs(u)
    mine_png = os.path.join(u, "timeline.png")
    open(mine_png, "wb").write(b"mine")
    os.utime(mine_png, (1e9, 1e9))
    bare = dict(os.environ, PATH="/nonexistent")
    for k in range(2):
        p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", u],
                           capture_output=True, text=True, env=bare)
        C.check(f"protect: run {k + 1} without gnuplot keeps the user's timeline.png",
                p.returncode == 0 and open(mine_png, "rb").read() == b"mine" and
                "timeline.gp\t" in open(os.path.join(u, "index.txt")).read(),
                f"rc={p.returncode} {p.stderr[-300:]}")
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", u],
                       capture_output=True, text=True)
    C.check("protect: then with gnuplot, the PNG etcompare never wrote is not replaced",
            p.returncode == 4 and open(mine_png, "rb").read() == b"mine" and
            "timeline.png" in p.stderr, f"rc={p.returncode} {p.stderr[-300:]}")
    # a PNG remade from etcompare's script (newer than it) is etcompare's
    os.remove(mine_png)
    open(mine_png, "wb").write(b"remade by gnuplot timeline.gp")
    p = subprocess.run([C.ETC, "--etdump", etdp, "--no-table", "--plot", u],
                       capture_output=True, text=True)
    C.check("protect: a PNG made from etcompare's script after it is replaced by the new plot",
            p.returncode == 0 and open(mine_png, "rb").read()[:4] == b"\x89PNG",
            f"rc={p.returncode} {p.stderr[-300:]}")


def data_accuracy(d):
    p, pdir = plot(["--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"), "--debug_buffer",
                    os.path.join(C.DATA, "runs5_ops12.bin"), "--etrecord",
                    os.path.join(C.DATA, "example_refs.etrecord"), "--compare"], d, "data")
    C.check("tests/data: --plot with the ETRecord runs", p.returncode == 0, p.stderr)
    files = os.listdir(pdir)
    maps = [f for f in files if f.startswith("heatmap_") and f.endswith(".png")]
    outs = [re.sub(r"_run\d+", "", m) for m in maps]
    C.check("tests/data: 5 runs, one heat map per output (no duplicates)",
            len(maps) >= 1 and len(set(outs)) == len(outs), str(maps))
    for m in maps:
        t = C.gp_vars(os.path.join(pdir, m[:-4] + ".gp"))["plot_title"]
        C.check(f"tests/data: {m} says it is the worst of 5 runs", "worst of 5 runs" in t, t)
    for name in ("ops_runs", "tax_runs"):
        v = C.gp_vars(os.path.join(pdir, name + ".gp"))
        C.check(f"tests/data: {name} from 0", num(v["y_lo"]) == 0.0, str(v.get("y_lo")))


def one_run(d):
    p, pdir = plot(["--etdump", os.path.join(C.DATA, "misaligned.etdp")], d, "one")
    C.check("one run: --plot runs", p.returncode == 0, p.stderr)
    gp = os.path.join(pdir, "tax_runs.gp")
    if os.path.exists(gp):
        text = open(gp, encoding="utf-8").read()
        C.check("one run: the tax is a bar (bars template), from 0",
                "bars.gp - etcompare template" in text and num(C.gp_vars(gp)["y_lo"]) == 0.0)
    gp = os.path.join(pdir, "ops_runs.gp")
    if os.path.exists(gp):
        v = C.gp_vars(gp)
        C.check("one run: time per run drawn as bars at the median from 0",
                v["points_only"] == "1" and num(v["y_lo"]) == 0.0 and
                "using 1:4:xtic(7) with boxes" in open(gp).read())
    C.check("one run: a profile-only plot folder has a tax plot", os.path.exists(
        os.path.join(pdir, "tax_runs.gp")), str(os.listdir(pdir)))


def perf_diff(d):
    # tutorial.etdp is another program's ETDump: --force (the refusal is test_trust.py's)
    p, pdir = plot(["--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"), "--baseline-etdump",
                    os.path.join(C.DATA, "tutorial.etdp"), "--max-regression", "5", "--force"],
                   d, "diff")
    C.check("perf diff: --plot draws perf_diff", os.path.exists(os.path.join(pdir, "perf_diff.png")),
            p.stderr)
    v = C.gp_vars(os.path.join(pdir, "perf_diff.gp"))
    rows = dat_rows(os.path.join(pdir, "perf_diff.dat"))
    C.check("perf diff: the gate is a line at +5 %", v["has_threshold"] == "1" and
            num(v["threshold"]) == 5.0 and "max regression +5" in v["threshold_label"], str(v))
    red = [r for r in rows if re.match(r"^\S+ (\S+) \".*\" \S+ 1 ", r)]
    C.check("perf diff: the regressions beyond the gate are red",
            red and all(float(r.split(" ")[1]) > 5 for r in red), "\n".join(rows))
    C.check("perf diff: the change axis holds 0", num(v["y_lo"]) <= 0)
    out = os.path.join(d, "diff.html")
    p = subprocess.run([C.ETC, "--etdump", os.path.join(C.DATA, "runs5_ops12.etdp"),
                        "--baseline-etdump", os.path.join(C.DATA, "tutorial.etdp"),
                        "--max-regression", "5", "--no-table", "--report", out, "--force"],
                       capture_output=True, text=True)
    html = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    m = re.search(r'id="verdict">([^<]*)', html)
    C.check("perf diff: the banner names the worst regression and its block",
            m and "performance: 1 regression (worst: Execute Method::execute +" in m.group(1),
            m.group(1) if m else html[:300])


def banner(d):
    out = os.path.join(d, "ex.html")
    subprocess.run([C.ETC, "--example", "--no-table", "--report", out], capture_output=True)
    html = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
    m = re.search(r'id="verdict">([^<]*)', html)
    C.check("example: the banner names the worst failing output as the terminal does "
            "(Execute#1: two blocks share the name)",
            m and "(worst: Execute#1 run 0 ref 0 output 0 (ETDump run 1), SNR 24.83 dB)"
            in m.group(1),
            m.group(1) if m else html[:300])


def main():
    d = C.work_dir("plots_truth")
    pdir = example(d)
    stale(d, pdir)
    data_accuracy(d)
    one_run(d)
    perf_diff(d)
    banner(d)
    return C.finish(d)


if __name__ == "__main__":
    raise SystemExit(main())
