"""--report FILE.html (issue 15): one self-contained HTML file, parsed with
html.parser:
  - no external src/href (plots are data: PNG), one inline script only;
  - strings from inputs are escaped: an ETDump block named <script>... and an
    input file named <img src=x onerror=...> appear as text, never as tags;
  - the failing output with its SNR (as --json gives it), failing rows first;
  - the numeric gap's diverging node, its source line and stack trace;
  - every mode: accuracy, numeric gap, profiling only, perf diff, the
    bundled example; without gnuplot the tables are there and it says so;
  - the bundled example (two blocks named "Execute", one per bundled input):
    the accuracy rows are the terminal's (0-based run within the block, ref,
    verdict), failing first; "where the error enters" is the terminal's list
    (top 5 by snr_drop); the first divergence names its node as the terminal
    does; --plot writes one heat map per distinct (output, reference), the
    worst run (ref in the name, and the block's position with --pair-by
    all), one-row maps drawn;
  - the numeric gap's chart (cumulative and local SNR per op) is in the
    numeric gap section, once, before the plots and their heat maps;
  - the tax, memory and module tables and the Inspector's table are HTML
    tables (sortable, numbers right-aligned, units in the headers), not
    preformatted terminal text, and their numbers are the --json
    profile's and the --tsv table's;
  - headless Chromium renders it (skipped, saying why, without chromium):
    the screenshot is not blank.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SRC = os.environ["ETC_SRC"]
ETC = os.environ["ETCOMPARE"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
from test_accuracy import check  # noqa: E402
import test_accuracy as A  # noqa: E402
from plot_sample import BAD, make_sample  # noqa: E402
from test_plots import decode_png  # noqa: E402
import common as C  # noqa: E402  (flatc_build)

DATA = os.path.join(SRC, "tests", "data")
EVIL_BLOCK = "Ex<script>alert(1)</script>"
EVIL_FILE = "<img src=x onerror=alert(2)>.etdp"


class Doc(HTMLParser):
    """Tags with attributes, the text, and per-row cell texts of each table."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.tables = [], [], {}
        self._table = self._row = self._cell = None
        self._row_class = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "table":
            self._table = a.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = []
            self._row_class = a.get("class", "")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._table].append((self._row_class, self._row))
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def parse(path):
    d = Doc()
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    d.feed(raw)
    d.raw = raw
    d.all_text = "".join(d.text)
    return d


def terminal_first(out):
    """'First divergence: row 3, node X: op' from the terminal's numeric gap."""
    m = re.search(r"^First divergence: (row \d+, .*?) \(debug handles", out, re.M)
    return "First divergence: " + m.group(1) if m else None


def html_first(doc):
    m = re.search(r'<div class="verdict fail" id="first-divergence">(.*?)</div>', doc.raw)
    return html.unescape(re.sub(r"<[^>]*>", "", m.group(1))) if m else None


def terminal_drops(out):
    """The lines of the terminal's 'Where the error enters' list, without '1. '."""
    i = out.find("Where the error enters")
    if i < 0:
        return []
    lines = []
    for line in out[i:].splitlines()[1:]:
        m = re.match(r"  \d+\. (row .*)$", line)
        if not m:
            break
        lines.append(m.group(1))
    return lines


def html_drops(doc):
    """Each item of the HTML's 'where the error enters' list: its first line."""
    m = re.search(r'<ol id="enters">(.*?)</ol>', doc.raw, re.S)
    if not m:
        return []
    items = re.findall(r"<li>(.*?)(?:<div|<details|</li>)", m.group(1), re.S)
    return [html.unescape(re.sub(r"<[^>]*>", "", x)).strip() for x in items]


def same_drops(name, term, doc):
    want, got = terminal_drops(term), html_drops(doc)
    check(f"{name}: 'where the error enters' in the HTML is the terminal's list "
          f"(top {len(want)} by SNR drop)", want and got == want, f"html {got} terminal {want}")


def terminal_accuracy(out):
    """(block, run, ref, output, verdict) of each row of the terminal's accuracy grid."""
    rows, cols = [], None
    for line in out.splitlines():
        if not line.startswith("│"):
            if cols and rows:
                break
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cols is None:
            if cells[:5] == ["block", "run", "etdump run", "ref", "output"]:
                cols = cells
            continue
        rows.append((cells[0], cells[1], cells[3], cells[4], cells[-1]))
    return cols, rows


def self_contained(name, d):
    ext = [(t, a) for t, a in d.tags for k in ("src", "href")
           if k in a and not (a[k] or "").startswith(("data:", "#"))]
    check(f"{name}: no external src/href", not ext, str(ext[:3]))
    scripts = [a for t, a in d.tags if t == "script"]
    check(f"{name}: one inline script, no src", len(scripts) == 1 and "src" not in scripts[0],
          str(scripts))
    check(f"{name}: no <link>, no <iframe>, no <object>",
          not [t for t, _ in d.tags if t in ("link", "iframe", "object", "embed")])


def run(*args, env=None):
    return subprocess.run([ETC, *args], capture_output=True, text=True, env=env)


def case_accuracy(d):
    etdp, dbg, rec = make_sample(d, "evil", block=EVIL_BLOCK)
    evil = os.path.join(d, EVIL_FILE)
    shutil.copyfile(etdp, evil)
    out, js = os.path.join(d, "acc.html"), os.path.join(d, "acc.json")
    p = run("--etdump", evil, "--debug_buffer", dbg, "--etrecord", rec, "--block", EVIL_BLOCK,
            "--min-snr", "90", "--no-table", "--json", js, "--report", out)
    check("accuracy: exit 1 (the gate fails) and the report written",
          p.returncode == 1 and os.path.exists(out), p.stderr)
    if not os.path.exists(out):
        return
    doc = parse(out)
    self_contained("accuracy", doc)
    check("accuracy: the <script> block name is text, escaped in the source",
          EVIL_BLOCK in doc.all_text and "&lt;script&gt;alert(1)" in doc.raw and
          "<script>alert(1)" not in doc.raw, "")
    check("accuracy: the <img> file name is text, not an element",
          EVIL_FILE in doc.all_text and not [a for t, a in doc.tags if t == "img" and
                                             a.get("src") == "x"])
    with open(js) as f:
        rows = json.load(f)["accuracy"]["rows"]
    snr = rows[BAD]["metrics"]["snr"]
    table = doc.tables.get("accuracy", [])[1:]
    first = table[0][1] if table else []
    check("accuracy: failing rows first, the failing output with its SNR",
          table and table[0][0] == "bad" and first[4] == str(BAD) and
          abs(float(first[7]) - snr) < 1e-4 * abs(snr) and "FAIL" in first[11],
          f"{first} {snr}")
    check("accuracy: passing rows after the failing ones",
          [c for c, _ in table] == sorted([c for c, _ in table], key=lambda c: c != "bad"))
    verdict = [a for t, a in doc.tags if a.get("id") == "verdict"]
    check("accuracy: the verdict says FAILED", verdict and "FAILED: accuracy: 2 of 12 outputs"
          in doc.all_text, doc.all_text[:300])
    check("accuracy: the exact command line", "--min-snr 90" in doc.all_text and
          "--report" in doc.all_text)
    imgs = [a for t, a in doc.tags if t == "img"]
    check("accuracy: plots embedded as data: PNG",
          len(imgs) >= 8 and all(a["src"].startswith("data:image/png;base64,") for a in imgs),
          str(len(imgs)))
    check("accuracy: inputs with sizes and checksums",
          len(doc.tables.get("inputs", [])) == 4 and str(os.path.getsize(evil)) in doc.all_text)
    return out


def case_numgap(d):
    import test_numgap as N
    ref, dev = N.chain(False), N.chain(True)
    rec = N.chain_etrecord(d)
    ref_etdp, ref_dbg = N.chain_dump(d, "ref", ref)
    dev_etdp, dev_dbg = N.chain_dump(d, "dev", dev)
    out = os.path.join(d, "ng.html")
    p = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
            "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
            "--min-snr", "40", "--no-table", "--report", out)
    check("numgap: exit 1 and the report written", p.returncode == 1 and os.path.exists(out),
          p.stderr)
    if not os.path.exists(out):
        return
    doc = parse(out)
    self_contained("numgap", doc)
    op = N.op_name(N.BAD)
    term = run("--etdump", dev_etdp, "--debug_buffer", dev_dbg, "--etrecord", rec,
               "--reference-etdump", ref_etdp, "--reference-debug-buffer", ref_dbg,
               "--min-snr", "40", "--no-table").stdout
    want = terminal_first(term)
    got = html_first(doc)
    check("numgap: the first divergence named by node, row and op, as the terminal names it",
          want and got == want and f"row {N.BAD}, node " in got and op in got,
          f"html {got!r} terminal {want!r}")
    same_drops("numgap", term, doc)
    check("numgap: source line and stack trace in collapsible details",
          f"line {100 + N.BAD}" in doc.all_text and
          [t for t, _ in doc.tags if t == "details"], "")
    rows = doc.tables.get("numgap", [])[1:]
    check("numgap: a row per compared op, the first divergence marked bad",
          len(rows) == N.NOPS and rows[N.BAD][0] == "bad", str(len(rows)))


def case_modes(d):
    out = os.path.join(d, "prof.html")
    p = run("--etdump", os.path.join(DATA, "runs5_ops12.etdp"), "--no-table", "--report", out)
    doc = parse(out) if os.path.exists(out) else None
    check("profiling only: exit 0, operators table, plots",
          p.returncode == 0 and doc and "ops" in doc.tables and len(doc.tables["ops"]) > 5 and
          "profile only" in doc.all_text, p.stderr)
    if doc:
        self_contained("profiling only", doc)
    out = os.path.join(d, "diff.html")
    et = os.path.join(DATA, "runs5_ops12.etdp")
    p = run("--etdump", et, "--baseline-etdump", et, "--no-table", "--report", out)
    doc = parse(out) if os.path.exists(out) else None
    check("perf diff: exit 0 and its section",
          p.returncode == 0 and doc and "Performance diff" in doc.all_text and
          "Method::execute" in doc.all_text, p.stderr)
    out = os.path.join(d, "example.html")
    p = run("--example", "--no-table", "--report", out)
    doc = parse(out) if os.path.exists(out) else None
    check("--example --report: exit 0, self-contained", p.returncode == 0 and doc is not None,
          p.stderr)
    if doc:
        self_contained("example", doc)
    p = run("--etrecord", os.path.join(DATA, "example_refs.etrecord"), "--graph", "--report",
            os.path.join(d, "none.html"))
    check("--report without an ETDump: usage error (exit 2), nothing written",
          p.returncode == 2 and "--report needs --etdump" in p.stderr and
          not os.path.exists(os.path.join(d, "none.html")), p.stderr)
    # without gnuplot: the tables, and the report says there are no plots
    out = os.path.join(d, "nognuplot.html")
    etdp, dbg, rec = make_sample(d, "nog")
    p = run("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table",
            "--report", out, env=dict(os.environ, PATH="/nonexistent", TMPDIR=d))
    doc = parse(out) if os.path.exists(out) else None
    # heat maps are drawn without gnuplot (libpng): the only images then
    imgs = [a.get("alt", "") for t, a in doc.tags if t == "img"] if doc else []
    check("no gnuplot: exit 0, tables, says so, no image but the heat maps",
          p.returncode == 0 and doc and "accuracy" in doc.tables and
          "gnuplot was not found" in doc.all_text and
          all("reference|" in alt for alt in imgs), (p.stderr, imgs))
    check("no gnuplot: no temporary plot directory left",
          not [n for n in os.listdir(d) if n.startswith("etcompare-report-")])
    return os.path.join(d, "example.html")


def case_example(d):
    """The bundled example: two blocks named "Execute" (one per bundled
    input), runs 0..2 each. The HTML shows the terminal's rows and names."""
    out, pdir = os.path.join(d, "ex.html"), os.path.join(d, "explots")
    p = subprocess.run([ETC, "--example", "--no-table", "--report", out, "--plot", pdir],
                       capture_output=True, text=True, cwd=d)
    check("example: exit 0, report and plots written",
          p.returncode == 0 and os.path.exists(out) and os.path.isdir(pdir), p.stderr)
    if p.returncode != 0 or not os.path.exists(out):
        return
    doc = parse(out)
    cols, term = terminal_accuracy(p.stdout)
    table = doc.tables.get("accuracy", [])
    head = table[0][1] if table else []
    check("example: the HTML accuracy table has the terminal's run and ref columns",
          head[:5] == ["block", "run", "etdump run", "ref", "output"] and cols is not None,
          str(head))
    got = [(c[0], c[1], c[3], c[4], c[11]) for _, c in table[1:]]
    want = [r for r in term if r[4] != "pass" and not r[4].startswith("pass ")] + \
           [r for r in term if r[4] == "pass" or r[4].startswith("pass ")]
    check("example: HTML rows = terminal rows (0-based run within the block, ref, "
          "verdict), failing first", len(term) == 6 and got == want,
          f"html {got} terminal {term}")
    check("example: runs 0..2 against refs 0 and 1, never the ETDump's run_data index",
          sorted({(r[1], r[2]) for r in got}) ==
          [(str(a), str(b)) for a in range(3) for b in range(2)], str(got))
    same_drops("example", p.stdout, doc)
    want = terminal_first(p.stdout)
    check("example: the first divergence names its node like the terminal",
          want and html_first(doc) == want and "node native_layer_norm" in want,
          f"{html_first(doc)!r} vs {want!r}")
    # the chart of the numeric gap: in its section, before the plots (heat maps)
    ng_at, plots_at = doc.raw.find("<h2>Numeric gap"), doc.raw.find("<h2>Plots")
    chart_at = doc.raw.find('<figure class="wide" id="numgap-chart"><img')
    heat_at = min([doc.raw.find(c) for c in re.findall(r"<figcaption>[^<]*\|actual",
                                                        doc.raw)] or [-1])
    check("example: the numeric gap's chart is in its section, before the plots and the "
          "heat maps", 0 <= ng_at < chart_at and (plots_at < 0 or chart_at < plots_at) and
          chart_at < heat_at, f"{ng_at} {chart_at} {plots_at} {heat_at}")
    chart = re.search(r'id="numgap-chart"><img alt="([^"]*)" src="data:image/png;base64,',
                      doc.raw)
    check("example: the chart is an embedded PNG, shown once (not again in the plots)",
          chart and doc.raw.count("cumulative and local SNR of each op") == 2,
          str(doc.raw.count("cumulative and local SNR of each op")))
    verdict = "".join(doc.text)
    check("example: the verdict names the diverging node",
          "first divergence at row 3, node native_layer_norm" in verdict, verdict[:400])
    check("example: the stderr 'worst:' names the reference (two blocks named Execute)",
          re.search(r"worst: Execute#\d run 0 ref 0 output 0 \(ETDump run \d\)", p.stderr),
          p.stderr)
    # one heat map per distinct (output, reference) that differs: the worst of
    # the runs sharing the reference, the failing ones first
    differ = [r for r in term if "identical" not in r[4]]
    pairs = sorted({(b, f, o) for b, r, f, o, _ in differ})
    maps = sorted(n for n in os.listdir(pdir) if n.startswith("heatmap_") and n.endswith(".png"))
    check("example: --plot writes one heat map per distinct (output, reference): 2 of 6 rows",
          len(differ) == 6 and len(pairs) == 2 and len(maps) == 2 and
          sorted(re.sub(r"_run\d", "", m) for m in maps) ==
          sorted(f"heatmap_{b.split('#')[0]}_ref{f}_out{o}.png" for b, f, o in pairs), f"{maps} vs {pairs}")
    caps = [c for c in re.findall(r"<figcaption>(.*?)</figcaption>", doc.raw, re.S)
            if "heatmap" in c or "|actual" in c]
    check("example: the HTML embeds 2 heat maps, each the worst of 3 runs",
          len(caps) == 2 and len(set(caps)) == 2 and all("worst of 3 runs" in c for c in caps),
          str(caps))
    # --pair-by all: both "Execute" blocks against reference 0: one (output, reference)
    pdir2 = os.path.join(d, "explots_all")
    p2 = subprocess.run([ETC, "--example", "--no-table", "--pair-by", "all", "--plot", pdir2],
                        capture_output=True, text=True, cwd=d)
    maps2 = sorted(n for n in os.listdir(pdir2) if n.startswith("heatmap_") and
                   n.endswith(".png")) if os.path.isdir(pdir2) else []
    check("example --pair-by all: one heat map (one output, one reference), named by the block's position",
          len(maps2) == 1 and all(re.match(r"heatmap_Execute_block\d+_run\d_ref0_out0\.png$", n)
                                  for n in maps2), str(maps2))
    check("example --pair-by all: the 'worst:' names the block's position",
          re.search(r"worst: Execute#\d+ run \d ref 0 output 0", p2.stderr)
          is not None, p2.stderr)
    for n in maps[:1]:
        # a [1, 8] output: gnuplot draws no image of one row, so boxes are drawn
        w, h, rows = decode_png(os.path.join(pdir, n))
        hot = sum(1 for y in range(h) for x in range(w)
                  if all(abs(a - b) <= 12 for a, b in zip(rows[y][x][:3], (253, 231, 37))))
        check("example: a one-row heat map shows its cells (the hottest colour is there)",
              hot > 1000, f"{n}: {hot} hot pixels (the colour bar alone has about 90)")
        gp = open(os.path.join(pdir, n[:-4] + ".gp"), encoding="utf-8").read()
        check("example: a heat map's title names run, ref and output",
              re.search(r"run \d ref \d out 0", gp) is not None, gp[:600])


def cells_of(raw, table_id):
    """[(class, text)] of every <td> of the table, in order."""
    m = re.search(r'<table class="sortable" id="%s">(.*?)</table>' % table_id, raw, re.S)
    if not m:
        return []
    return [(c or "", html.unescape(re.sub(r"<[^>]*>", "", t)))
            for c, t in re.findall(r'<td(?: class="([^"]*)")?[^>]*>(.*?)</td>', m.group(1),
                                   re.S)]


def is_number(t):
    try:
        float(t)
        return True
    except ValueError:
        return False


def case_profile_tables(d):
    """--tables tax,memory,modules: HTML tables whose numbers are the --json
    profile's, right-aligned; the memory table of an ETDump with allocators."""
    out, js = os.path.join(d, "tables.html"), os.path.join(d, "tables.json")
    p = run("--example", "--no-table", "--tables", "tax,memory,modules", "--report", out)
    doc = parse(out) if os.path.exists(out) else None
    check("profile tables: the example's report written", p.returncode == 0 and doc, p.stderr)
    if not doc:
        return
    check("profile tables: no preformatted terminal table (box drawing, '== tax')",
          not re.search(r"<pre>[^<]*(framework tax|╒|│)", doc.raw), "")
    # the Inspector's table (collapsed): an HTML table with the --tsv rows
    tsv = os.path.join(d, "inspector.tsv")
    subprocess.run([ETC, "--example", "--no-table", "--tsv", tsv], capture_output=True)
    want = [line.rstrip("\n").split("\t") for line in open(tsv, encoding="utf-8")] \
        if os.path.exists(tsv) else []
    got = [r[1] for r in doc.tables.get("inspector", [])]
    check("profile tables: the Inspector's table is an HTML table with the --tsv rows "
          "(event names, p50 to 6 digits)",
          len(want) > 3 and len(got) == len(want) and got[0][:10] == want[0][:10] and
          all(g[2] == w[2] and abs(float(g[4]) - float(w[4])) <= 1e-5 * abs(float(w[4]))
              for g, w in zip(got[1:], want[1:])), f"{got[:3]} vs {want[:3]}")
    cells = cells_of(doc.raw, "inspector")
    check("profile tables: the Inspector's numbers right-aligned",
          cells and all("n" in c.split() for c, t in cells if is_number(t)), str(cells[:14]))
    for tid in ("tax", "modules"):
        rows = doc.tables.get(tid, [])
        cells = cells_of(doc.raw, tid)
        nums = [(c, t) for c, t in cells if is_number(t)]
        check(f"profile tables: {tid} is a sortable HTML table with numbers right-aligned",
              len(rows) > 2 and nums and all("n" in c.split() for c, _ in nums),
              str(cells[:12]))
    head = doc.tables.get("tax", [("", [])])[0][1]
    check("profile tables: the tax table's headers carry the units",
          "Method::execute (ms)" in head and "framework tax (ms)" in head and "tax %" in head,
          str(head))
    # the numbers against --json (the same run, the same profile)
    subprocess.run([ETC, "--example", "--no-table", "--tables", "tax,memory,modules", "--json",
                    js], capture_output=True)
    prof = json.load(open(js)).get("profile", {}) if os.path.exists(js) else {}
    want = [m["total"] for m in prof.get("modules", [])]
    got = [float(r[1][3]) for r in doc.tables.get("modules", [])[1:]]
    check("profile tables: the modules' totals are the --json profile's (6 digits)",
          want and len(got) == len(want) and
          all(abs(a - b) <= 1e-5 * abs(b) for a, b in zip(got, want)), f"{got} vs {want}")
    # an ETDump with allocators: the memory table
    runs = [{"name": "Execute", "allocators": [{"name": "method_allocator"},
                                                 {"name": "planned <memory>"}],
             "events": [{"allocation_event": {"allocator_id": a, "allocation_size": n}}
                        for a, n in ((1, 64), (1, 32), (2, 1024))] +
             [{"profile_event": {"name": "Method::execute", "chain_index": -1,
                                 "instruction_id": 0, "start_time": 1000,
                                 "end_time": 9000}}]}]
    etdp = C.flatc_build(d, "alloc", {"version": 0, "run_data": runs})
    out = os.path.join(d, "memory.html")
    p = run("--etdump", etdp, "--no-table", "--tables", "memory", "--report", out)
    doc = parse(out) if os.path.exists(out) else None
    rows = [r[1] for r in doc.tables.get("memory", [])[1:]] if doc else []
    check("profile tables: the memory table as HTML rows (allocator, name, count, bytes), "
          "names escaped", p.returncode == 0 and
          [(r[2], r[3], r[4], r[5]) for r in rows] ==
          [("1", "method_allocator", "2", "96"), ("2", "planned <memory>", "1", "1024")] and
          "planned &lt;memory&gt;" in doc.raw, f"{rows} {p.stderr}")
    cells = cells_of(doc.raw, "memory") if doc else []
    check("profile tables: the memory table's counts and bytes right-aligned",
          cells and all("n" in c.split() for c, t in cells if is_number(t)), str(cells))


def case_perfdiff(d):
    """A perf diff that fails its gate: an HTML table, FAIL rows first and
    highlighted, units in the headers, its plot embedded."""
    out = os.path.join(d, "perfdiff_gate.html")
    # another program's ETDump as the baseline: --force (the refusal is test_trust.py's)
    p = run("--etdump", os.path.join(DATA, "runs5_ops12.etdp"), "--baseline-etdump",
            os.path.join(DATA, "tutorial.etdp"), "--max-regression", "5", "--no-table",
            "--report", out, "--force")
    doc = parse(out) if os.path.exists(out) else None
    rows = doc.tables.get("perfdiff", []) if doc else []
    check("perf diff gate: the diff is an HTML table", len(rows) > 1, p.stderr)
    body = rows[1:]
    check("perf diff gate: FAIL rows first and highlighted",
          body and body[0][0] == "bad" and any("FAIL" in c for c in body[0][1]) and
          [c for c, _ in body] == sorted([c for c, _ in body], key=lambda c: c != "bad"),
          str(body[:3]))
    check("perf diff gate: the header names the unit",
          rows and any("p50 (ms)" in c or "p50 (us)" in c or "p50 (" in c for c in rows[0][1]),
          str(rows[:1]))
    check("perf diff gate: its plot is embedded",
          doc is not None and "performance diff: p50 change" in doc.all_text)
    return out


def case_chromium(d, path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("SKIP chromium: no chromium on PATH (Debian package chromium; "
              "scripts/install-deps.sh --tests installs it)")
        return
    if not path or not os.path.exists(path):
        check("chromium: a report to render", False)
        return
    shot = os.path.join(d, os.path.basename(path) + ".shot.png")
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        f"--screenshot={shot}", "--window-size=1280,1600",
                        "file://" + os.path.abspath(path)], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, HOME=d))
    check("chromium: screenshot written", os.path.exists(shot), p.stderr[-500:])
    if not os.path.exists(shot):
        return
    w, h, rows = decode_png(shot)
    px = [rows[y][x] for y in range(0, h, 4) for x in range(0, w, 4)]
    dark = sum(1 for q in px if sum(q) < 600)
    colours = len(set(px))
    check("chromium: the screenshot is not blank (text and colours)",
          (w, h) == (1280, 1600) and dark > 0.01 * len(px) and colours > 50,
          f"{w}x{h} dark {dark} of {len(px)}, {colours} colours")
    return shot


def case_sort_nan(d, path):
    """The report's own sorting script, run by Chromium on a column holding
    NaN and infinities: numbers in order both ways, NaN last both ways (a
    NaN compared as equal to every number left the order inconsistent)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe or not path or not os.path.exists(path):
        print("SKIP chromium sort: no chromium on PATH or no report")
        return
    html = open(path, encoding="utf-8").read()
    m = re.search(r"<script>(.*?)</script>", html, re.S)
    check("sort: the report has its sorting script", m is not None)
    if not m:
        return
    vals = ["3", "NaN", "1", "Infinity", "2", "NaN", "-Infinity"]
    cells = "".join(f'<tr><td data-v="{v}">{v}</td></tr>' for v in vals)
    page = os.path.join(d, "sort.html")
    out = {}
    for clicks in (1, 2):
        with open(page, "w", encoding="utf-8") as f:
            f.write('<!DOCTYPE html><html><body><table class="sortable"><thead><tr><th>v</th>'
                    f"</tr></thead><tbody>{cells}</tbody></table><script>{m.group(1)}"
                    f"</script><script>for(var k=0;k<{clicks};k++)"
                    "document.querySelector('th').click();</script></body></html>")
        p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                            "file://" + os.path.abspath(page)], capture_output=True, text=True,
                           timeout=120, env=dict(os.environ, HOME=d))
        out[clicks] = re.findall(r'<td data-v="([^"]*)"', p.stdout)
    check("sort: ascending, NaN last",
          out[1] == ["-Infinity", "1", "2", "3", "Infinity", "NaN", "NaN"], str(out[1]))
    check("sort: descending, NaN last",
          out[2] == ["Infinity", "3", "2", "1", "-Infinity", "NaN", "NaN"], str(out[2]))


def main():
    work = os.environ.get("ETC_WORK", tempfile.gettempdir())
    os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as d:
        acc = case_accuracy(d)
        case_numgap(d)
        case_modes(d)
        case_example(d)
        case_profile_tables(d)
        case_chromium(d, acc)
        case_sort_nan(d, acc)
        # the perf diff's highlighted FAIL rows (#fdecec) show in the screenshot
        shot = case_chromium(d, case_perfdiff(d))
        if shot:
            w, h, rows = decode_png(shot)
            pink = sum(1 for y in range(0, h, 2) for x in range(0, w, 2)
                       if tuple(rows[y][x][:3]) == (0xfd, 0xec, 0xec))
            check("chromium: the perf diff's FAIL rows are highlighted", pink > 500, str(pink))
    print(f"{A.passed} passed, {A.failed} failed")
    return 1 if A.failed else 0


if __name__ == "__main__":
    sys.exit(main())
