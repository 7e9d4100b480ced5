"""The numeric gap in one chart (issue 21 item 6, numgap_chart.png), checked
from the gnuplot data and script etcompare writes beside the PNG, not from
pixels:

1. The bundled example (a reference run from the ETRecord, so every op has a
   cumulative and a local SNR): both series in the .dat equal the
   --numgap-tsv rows (cumulative_snr, local_snr); an identical local SNR (+inf) is not
   drawn as a value but capped above every finite one, and the key says
   where; the culprit marked is the first op by this test's own ranking
   ("failing ops first, lowest local SNR first", from the TSV rows) and
   the terminal's "Where the error enters" 1.; the first divergence and the
   gate (--min-snr) are drawn; the SNR axis holds 0 and every value; labels
   are node name with the op type beneath, never cut.
2. A 22-op chain against a reference ETDump (no reference graph, so no local
   SNR) whose op 9 and everything after it carry noise louder than the
   signal: the cumulative SNR in the .dat equals SNR recomputed here in
   float64 from the values written; the ops before 9 are identical (+inf,
   capped); the axis goes below 0 down to the lowest SNR; the culprit is the
   op adding the most noise (noise_added, from the JSON), i.e. op 9.
"""
import csv
import json
import math
import os
import random
import re
import subprocess
import sys

import common as C

sys.dont_write_bytecode = True
import test_accuracy as A  # noqa: E402  (float64 metrics)
import test_numgap as N  # noqa: E402  (the 22-op chain)


def gp_str(v):
    """A gnuplot string of the preamble ('a'."\\n".'b') as text."""
    parts = re.findall(r"'((?:[^']|'')*)'|(\"\\n\")", v)
    return "".join(p[0].replace("''", "'") if not p[1] else "\n" for p in parts)


def dat_rows(path):
    """(index, cumulative, local, label, cum capped, local capped, culprit y)."""
    rows = []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'^(\d+) (\S+) (\S+) "((?:[^"\\]|\\.)*)" (\S+) (\S+) (\S+)$', line.rstrip("\n"))
        C.check(f"{os.path.basename(path)}: a row of 7 columns", m, line)
        if m:
            g = m.groups()
            label = g[3].replace("\\n", "\n").replace("\\\\", "\\")
            rows.append((int(g[0]), float(g[1]), float(g[2]), label, float(g[4]), float(g[5]),
                         float(g[6])))
    return rows


def snr_of(v):
    """A JSON or TSV number ("inf" a string in both, "" or None when missing)."""
    if v is None or v == "":
        return math.nan
    return float(v)


def same(a, b, rel=1e-12):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def unwrap(label):
    """The label without the breaks the plot adds after '.', '_' or ' '."""
    return re.sub(r"([._ ])\n", r"\1", label)


def check_axis(tag, v, rows):
    values = [x for r in rows for x in (r[1], r[2], r[4], r[5]) if not math.isnan(x)]
    lo, hi = float(v["y_lo"]), float(v["y_hi"])
    C.check(f"{tag}: the SNR axis holds 0 and every value drawn",
            lo <= 0 <= hi and all(lo <= x <= hi for x in values),
            f"[{lo}, {hi}] {min(values)}..{max(values)}")
    if min(values) >= 0:
        C.check(f"{tag}: the SNR axis starts at 0", lo == 0.0, str(lo))
    else:
        C.check(f"{tag}: the SNR axis goes down to the lowest (negative) SNR",
                lo <= min(values) and lo > 2 * min(values) - 1, f"{lo} vs {min(values)}")


def example(d):
    tsv = os.path.join(d, "ex.tsv")
    pdir = os.path.join(d, "ex")
    # the example gates at --min-snr 30 itself
    p = subprocess.run([C.ETC, "--example", "--numgap-tsv", tsv, "--plot", pdir],
                       capture_output=True, text=True, cwd=d)
    C.check("example: --plot runs", p.returncode == 0, p.stderr)
    gp, dat = os.path.join(pdir, "numgap_chart.gp"), os.path.join(pdir, "numgap_chart.dat")
    C.check("example: numgap_chart.png, .gp and .dat written",
            all(os.path.exists(os.path.join(pdir, "numgap_chart" + e))
                for e in (".png", ".gp", ".dat")), str(sorted(os.listdir(pdir))))
    if not os.path.exists(dat) or not os.path.exists(tsv):
        return
    with open(tsv, newline="", encoding="utf-8") as f:
        jr = [r for r in csv.DictReader(f, delimiter="\t") if not r["status"].startswith("unmatched")]
    for r in jr:
        r["first_divergence"] = r["first_divergence"] == "True"
        r["status"] = r["status"].lower()
    rows, v = dat_rows(dat), C.gp_vars(gp)
    C.check("example: one point per numeric gap row", len(rows) == len(jr) == 7,
            f"{len(rows)} vs {len(jr)}")
    cum = [snr_of(r["cumulative_snr"]) for r in jr]
    loc = [snr_of(r.get("local_snr")) for r in jr]
    C.check("example: every op has a local SNR (reference run from the ETRecord)",
            all(not math.isnan(x) for x in loc) and v["has_local"] == "1", str(loc))
    finite = [x for x in cum + loc if math.isfinite(x)]
    C.check("example: the cumulative series is the TSV's cumulative_snr",
            all(same(r[1], c if math.isfinite(c) else math.nan) for r, c in zip(rows, cum)),
            str([(r[1], c) for r, c in zip(rows, cum)]))
    C.check("example: the local series is the TSV's local_snr",
            all(same(r[2], x if math.isfinite(x) else math.nan) for r, x in zip(rows, loc)),
            str([(r[2], x) for r, x in zip(rows, loc)]))
    inf = [i for i, x in enumerate(loc) if x == math.inf]
    C.check("example: the identical local SNR (relu, +inf) is capped above every finite value",
            inf and all(rows[i][5] > max(finite) and math.isnan(rows[i][2]) for i in inf) and
            all(math.isnan(r[5]) for i, r in enumerate(rows) if i not in inf),
            str([rows[i] for i in inf]))
    C.check("example: the key says where identical values are drawn",
            f"at {rows[inf[0]][5]:.4g}" in gp_str(v["cap_loc_title"]) if inf else False,
            v.get("cap_loc_title"))
    # the ranking, recomputed from the TSV: failing ops first, lowest local SNR first
    ranked = sorted((i for i in range(len(jr)) if math.isfinite(loc[i])),
                    key=lambda i: (jr[i]["status"] == "pass", loc[i], i))
    term = re.search(r"^  1\. row (\d+) ", p.stdout, re.M)
    C.check("example: the ranked first op is native_layer_norm (row 3), as the terminal says",
            ranked[0] == 3 and term and int(term.group(1)) == 3, f"{ranked} {p.stdout[-600:]}")
    culprit = [r[0] for r in rows if not math.isnan(r[6])]
    C.check("example: the culprit marker is on the ranked first op, at its local SNR",
            culprit == [ranked[0]] and same(rows[ranked[0]][6], loc[ranked[0]]) and
            int(v["culprit"]) == ranked[0], f"{culprit} {v.get('culprit')}")
    node = jr[ranked[0]]["runtime_nodes"]
    C.check("example: the culprit's label names the ranked first op",
            gp_str(v["culprit_label"]) == f"error enters: {ranked[0]} {node}",
            v.get("culprit_label"))
    first = [i for i, r in enumerate(jr) if r.get("first_divergence")]
    C.check("example: the first divergence is drawn at the TSV's first divergence",
            first and int(v["first_div"]) == first[0] and
            gp_str(v["first_label"]) == f"first divergence: {first[0]} "
                                         f"{jr[first[0]]['runtime_nodes']}",
            f"{first} {v.get('first_div')} {v.get('first_label')}")
    C.check("example: the gate line at --min-snr 30",
            v["has_threshold"] == "1" and float(v["threshold"]) == 30.0 and
            gp_str(v["threshold_label"]) == "min SNR 30 dB", str(v.get("threshold")))
    check_axis("example", v, rows)
    C.check("example: labels are node name, op type beneath (as the other per-op plots)",
            all(unwrap(r[3]) == f"{i} {jr[i]['runtime_nodes']}\n{jr[i]['runtime_op_types']}"
                for i, r in enumerate(rows)), str([r[3] for r in rows]))
    C.check("example: no label is cut", "\u2026" not in open(dat, encoding="utf-8").read())
    tpl = open(gp, encoding="utf-8").read()
    C.check("example: the culprit is marked as in time_error (red triangle, same key text)",
            "using 1:7 with points pt 9 ps 2.0 lc rgb '#d62728' title 'culprit (error enters)'"
            in tpl and "pt 9 ps 2.0 lc rgb '#d62728' title 'culprit (error enters)'" in
            open(os.path.join(pdir, "time_error.gp"), encoding="utf-8").read())
    C.check("example: both series are plotted (local bars, cumulative line)",
            "using 1:3 with boxes" in tpl and "using 1:2:xtic(4) with linespoints" in tpl)
    listed = [line.split("\t")[0] for line in open(os.path.join(pdir, "index.txt"),
                                                     encoding="utf-8")
              if not line.startswith(("#", "note: "))]
    C.check("example: index.txt lists the chart first, before the heat maps",
            listed and listed[0] == "numgap_chart.png" and
            any(n.startswith("heatmap_") for n in listed), str(listed))


def chain(d):
    ref = N.chain(False)
    # N.chain's ops, op BAD's output with noise about 30 times the signal's
    # amplitude, which every later op inherits (as a broken kernel's would be)
    noise = random.Random(7)
    dev, x = [], None
    for i, r in enumerate(ref):
        if i < N.BAD:
            x = r
        else:
            x = [A.f32(0.9 * v + 0.05 * math.sin(i + k)) for k, v in enumerate(x)]
            if i == N.BAD:
                x = [A.f32(v + noise.uniform(-30, 30)) for v in x]
        dev.append(x)
    rec = N.chain_etrecord(d)
    ref_etdp, ref_dbg = N.chain_dump(d, "ref", ref)
    dev_etdp, dev_dbg = N.chain_dump(d, "dev", dev)
    js, pdir = os.path.join(d, "chain.json"), os.path.join(d, "chain")
    p = subprocess.run([C.ETC, "--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
                        "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
                        "--min-snr", "40", "--no-table", "--json", js, "--plot", pdir],
                       capture_output=True, text=True)
    C.check("chain: exit 1 (the gate fails), plots written", p.returncode == 1, p.stderr)
    dat, gp = os.path.join(pdir, "numgap_chart.dat"), os.path.join(pdir, "numgap_chart.gp")
    if not os.path.exists(dat):
        C.check("chain: numgap_chart.dat written", False)
        return
    rows, v = dat_rows(dat), C.gp_vars(gp)
    jr = json.load(open(js))["numeric_gap"]["rows"]
    want = [A.metrics([float(x) for x in r], [float(x) for x in a])["snr"]
            for r, a in zip(ref, dev)]
    C.check("chain: a point per op", len(rows) == N.NOPS == len(jr), str(len(rows)))
    C.check("chain: the cumulative series is the SNR recomputed in float64 (1e-9)",
            all(same(r[1], w if math.isfinite(w) else math.nan, 1e-9)
                for r, w in zip(rows, want)),
            str([(r[1], w) for r, w in zip(rows, want)][:12]))
    C.check("chain: no reference graph, no local SNR (no bars)",
            v["has_local"] == "0" and all(math.isnan(r[2]) and math.isnan(r[5]) for r in rows))
    C.check("chain: the ops before 9 are identical, drawn capped above the finite values",
            all(math.isnan(r[1]) and r[4] > max(x for x in want if math.isfinite(x))
                for r in rows[:N.BAD]) and
            all(math.isnan(r[4]) for r in rows[N.BAD:]) and v["cap_cum_title"] != "''",
            str(rows[:2]))
    C.check("chain: noise louder than the signal gives a negative SNR",
            min(w for w in want if math.isfinite(w)) < 0, str(want[N.BAD:]))
    check_axis("chain", v, rows)
    noise_added = [snr_of(r.get("noise_added")) for r in jr]
    ranked = sorted((i for i in range(len(jr)) if noise_added[i] > 0),
                    key=lambda i: (jr[i]["status"] == "pass", -noise_added[i], i))
    culprit = [r[0] for r in rows if not math.isnan(r[6])]
    C.check("chain: the culprit is the op adding the most noise (op 9), at its cumulative SNR",
            ranked and ranked[0] == N.BAD and culprit == [N.BAD] and
            same(rows[N.BAD][6], want[N.BAD], 1e-9) and int(v["culprit"]) == N.BAD,
            f"{ranked[:3]} {culprit}")
    C.check("chain: the first divergence is op 9", int(v["first_div"]) == N.BAD, v["first_div"])


def main():
    d = C.work_dir("numgap_chart")
    with C.harness():
        example(d)
    with C.harness():
        chain(d)
    C.finish(d)


if __name__ == "__main__":
    main()
