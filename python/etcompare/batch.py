"""python3 -m etcompare.batch: one summary line per ETDump, for the
thousands of runs a device farm produces.

    python3 -m etcompare.batch [-o summary.jsonl] [--workers N]
                               [--scheduler local|tcp://HOST:PORT] [--resume]
                               [--min-snr DB] [--max-mse X] [--min-cosine X]
                               [--max-abs X] INPUT...

An INPUT is an ETDump, a folder (its own *.etdp and *.etdump files, any
case; a note names sub-folders that hold ETDumps), or a CSV manifest with
the columns etdump,debug_buffer,etrecord,reference,reference_debug_buffer
(and device,input,model; relative paths are relative to the manifest). Beside an ETDump X.etdp the
other files are found by name (docs/python.md):
  debug buffer          X.bin, X_debug.bin or X.debug.bin
  ETRecord              X.etrecord or X_etrecord.bin
  reference run         X.ref.etdp, with its debug buffer X.ref.bin or X.ref_debug.bin
  reference outputs     X.ref.npz, X.ref.pt or X.ref.pth (when there is no reference run)

Each line (schema/batch-summary.schema.json) has the inputs, the status
(ok, gate_failed, or error with its message), block and run counts,
Method::execute p50/avg, the worst output SNR, MSE and cosine, the first
divergence (node, handle, SNR) against a reference run and the elapsed
time. With a reference run every run of every Execute block is compared.
One bad file is an error line, never the end of the batch (also one
that kills its worker process). Lines are
written as runs complete and sorted by ETDump path at the end (an -o that
is a device or FIFO is written once, in place); --resume
skips the inputs already in the summary and replaces the line of an
ETDump whose other files changed.

Without --scheduler the runs go to a local process pool of --workers
processes; --scheduler local starts a Dask LocalCluster of --workers worker
processes; --scheduler tcp://HOST:PORT submits to a running Dask cluster
(whose workers must see the same paths, e.g. shared storage, and have
etcompare installed).

--group-summary FILE adds one line per (model, input) group: per-op
SNR distributions, run/device agreement matrices and outliers
(batch_groups.py, docs/farm.md; --device-from, --min-run-agreement).

Exit status: 0 all ok, 1 some run failed the gate, 2 usage (a value, an
output that is an input or another output), 3 some input was bad, 4 an
output cannot be written (docs/farm.md).
"""
import signal


class _Stop(Exception):
    """SIGINT or SIGTERM: stop the pool, keep the complete lines."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum, frame):
    raise _Stop(signum)


if __name__ == "__main__":  # before the imports: a signal at any point is a clean stop
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

import argparse
import concurrent.futures
import csv
import json
import math
import os
import re
import socket
import sys
import time
import warnings

ETDUMP_SUFFIXES = (".etdp", ".etdump")
FIELDS = ("etdump", "debug_buffer", "etrecord", "reference", "reference_debug_buffer")
OUTPUT_REFERENCE_SUFFIXES = (".npz", ".npy", ".pt", ".pth")
GROUP_FIELDS = ("device", "input", "model")


# --- inputs ----------------------------------------------------------------------------------

def _first(*paths, present=None):
    """The first of `paths` that exists (in `present`, a set of the folder's
    paths, when given: one listing instead of a stat per name)."""
    if present is not None:
        return next((p for p in paths if p in present), None)
    return next((p for p in paths if os.path.isfile(p)), None)


def _stem(path):
    base, ext = os.path.splitext(path)
    return base if ext.lower() in ETDUMP_SUFFIXES else path


def _is_etdump_name(path):
    """An ETDump's file name in a folder: .etdp or .etdump, in any case (as
    the manifest's .csv; etcompare itself sniffs the content)."""
    return path.lower().endswith(ETDUMP_SUFFIXES)


def _nested_etdumps(folder, given=()):
    """{sub-folder: ETDumps in it or below} of a batch folder's sub-folders
    (links to folders not followed; folders in `given`, real paths of the
    batch's folder inputs, left out): the batch reads a folder's own files
    only, and says which runs below it it leaves out."""
    out = {}
    with os.scandir(folder) as it:
        subs = sorted(e.path for e in it if e.is_dir(follow_symlinks=False))
    for sub in subs:
        n = 0
        if os.path.realpath(sub) in given:
            continue
        for root, dirs, files in os.walk(sub):
            dirs[:] = [x for x in dirs if os.path.realpath(os.path.join(root, x)) not in given]
            n += sum(1 for f in files if _is_etdump_name(f) and
                     not _is_reference_name(os.path.join(root, f)))
        if n:
            out[sub] = n
    return out


def by_convention(etdump, present=None):
    """The run of ETDump `etdump` with its companions found by name."""
    s = _stem(etdump)
    spec = {"etdump": etdump,
            "debug_buffer": _first(s + ".bin", s + "_debug.bin", s + ".debug.bin",
                                   present=present),
            "etrecord": _first(s + ".etrecord", s + "_etrecord.bin", present=present),
            "reference": _first(s + ".ref.etdp", s + ".ref.etdump", present=present),
            "reference_debug_buffer": None}
    if spec["reference"]:
        spec["reference_debug_buffer"] = _first(s + ".ref.bin", s + ".ref_debug.bin",
                                                present=present)
    else:
        spec["reference"] = _first(*(s + ".ref" + x for x in OUTPUT_REFERENCE_SUFFIXES),
                                   present=present)
    return spec


def _is_reference_name(path):
    return _stem(path).endswith(".ref")


class _Fail(SystemExit):
    """A usage (exit 2), input (3) or output (4) error found before or
    outside the runs: one line on stderr naming the file and the fix
    (main prints it; a SystemExit whose code is the message, as before)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _columns(line):
    """The manifest's separator: ',' (also ';' or a tab when the header has
    that and no ',', as a spreadsheet may write it)."""
    for sep in (",", ";", "\t"):
        if sep in line:
            return sep
    return ","


def from_manifest(path, lines=None, given=None):
    """The run specs of a CSV manifest. Paths are bytes on Linux: names that
    are not UTF-8 are kept (surrogateescape, as os.fsdecode does); a manifest
    that is not CSV (a NUL byte, a field past the csv module's limit, a quote
    left open), without the etdump column or with a column of another name is
    _Fail (exit 3) naming the manifest and the line. A UTF-8 BOM (a
    spreadsheet's "CSV UTF-8") and the columns' case are ignored. `lines`,
    a list, gets each spec's line number; `given`, a list, its etdump cell
    as written."""
    base = os.path.dirname(os.path.abspath(path))
    known = FIELDS + GROUP_FIELDS
    out = []
    with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as f:
        sep = _columns(f.readline())
        f.seek(0)  # (utf-8-sig skips the BOM again)
        rows = csv.reader(f, delimiter=sep)
        try:
            header = [h.strip().lower() for h in next(rows, [])]
            if "etdump" not in header:
                raise _Fail(f"{path}: a manifest needs a header line with the columns "
                            f"{','.join(FIELDS)} (etdump at least)", 3)
            unknown = [h for h in header if h and h not in known]
            if unknown:
                raise _Fail(f"{path}: unknown column {unknown[0]!r} in the header; the "
                            f"columns are {', '.join(known)}", 3)
            twice = [h for i, h in enumerate(header) if h and h in header[:i]]
            if twice:  # which of the two counts would be a guess
                raise _Fail(f"{path}: the column {twice[0]!r} is in the header twice: give "
                            f"each column once", 3)
            for cells in rows:
                if not any(c.strip() for c in cells):
                    continue  # a blank line
                if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
                    raise _Fail(f"{path}: line {rows.line_num}: {len(cells)} cells, but the "
                                f"header has {len(header)} columns: quote a path that holds "
                                f"'{sep}', or add the column to the header", 3)
                row = dict(zip(header, cells))
                if not (row.get("etdump") or "").strip():
                    raise _Fail(f"{path}: line {rows.line_num}: no etdump in a row whose other "
                                f"cells are filled: give the run's ETDump, or remove the "
                                f"line", 3)
                spec = {}
                for k in FIELDS:
                    v = (row.get(k) or "").strip()
                    spec[k] = os.path.normpath(os.path.join(base, v)) if v else None
                for k in GROUP_FIELDS:  # labels of the group summaries (batch_groups.py)
                    v = (row.get(k) or "").strip()
                    if v:
                        spec[k] = v
                if spec["etdump"]:
                    out.append(spec)
                    if lines is not None:
                        lines.append(rows.line_num)
                    if given is not None:  # the etdump cell as written (--device-from)
                        given.append(row["etdump"].strip())
        except (csv.Error, ValueError) as e:
            raise _Fail(f"{path}: line {rows.line_num}: not a CSV manifest: {e}", 3) from None
    return out


def _is_manifest(path):
    return path.lower().endswith(".csv")


def discover(inputs):
    specs, where = [], []  # where: (manifest, line) of each spec, or None
    manifests = {}  # _file_id: the path it was given as first
    for path in inputs:
        if os.path.isdir(path):
            with os.scandir(path) as it:
                # a dangling link too: its run is an error line, not left out unsaid
                present = {e.path for e in it if e.is_file() or e.is_symlink()}
            for full in sorted(present):
                if _is_etdump_name(full) and not _is_reference_name(full):
                    specs.append(dict(by_convention(full, present), _given=full))
            nested = _nested_etdumps(path, {os.path.realpath(x) for x in inputs
                                            if os.path.isdir(x)})
            if nested:
                total = sum(nested.values())
                names = ", ".join(f"{d} ({n})" for d, n in list(nested.items())[:5])
                print(f"etcompare.batch: note: {path}: {total} ETDump"
                      f"{'' if total == 1 else 's'} in its sub-folders {names}"
                      f"{' ...' if len(nested) > 5 else ''} not analysed: a folder INPUT is "
                      f"its own files only; give the sub-folders as inputs too (e.g. "
                      f"{os.path.join(path, '*')}) or a manifest", file=sys.stderr)
        elif _is_manifest(path):
            key = _file_id(path)
            if key in manifests:  # also through another name or a link
                first = manifests[key]
                print(f"etcompare.batch: warning: the manifest {path} is given twice"
                      f"{'' if first == path else f' (as {first} too)'}: read once",
                      file=sys.stderr)
                continue
            manifests[key] = path
            lines, cells = [], []
            specs.extend(dict(sp, _given=c) for sp, c in
                         zip(from_manifest(path, lines, cells), cells))
            where += [None] * (len(specs) - len(lines) - len(where)) + [(path, n) for n in lines]
            continue
        else:
            specs.append(dict(by_convention(path), _given=path))
        where += [None] * (len(specs) - len(where))
    # every path absolute (a manifest's already are): the summary's lines name
    # the files wherever it is read from, and --resume from another working
    # directory finds the runs it has (run_key)
    for s in specs:
        for k in FIELDS:
            if s.get(k):
                s[k] = os.path.abspath(s[k])
    # the same run spelled twice (runs and ./runs/, a link, a manifest's line
    # repeated, a folder and a manifest row naming its files) is analysed
    # once; rows that share only the ETDump are all analysed
    from .batch_groups import run_key
    seen, unique = {}, []  # run_key -> (index in unique, where)

    def source(s, at):
        return f"{at[0]} line {at[1]}" if at else f"the input {s.get('_given') or s['etdump']}"

    def labels(s):
        return {k: s[k] for k in GROUP_FIELDS if s.get(k)}

    for s, at in zip(specs, where):
        key = run_key(s)
        if key not in seen:
            seen[key] = (len(unique), at)
            unique.append(s)
            continue
        i, was = seen[key]
        first = unique[i]
        mine, theirs = labels(s), labels(first)
        if mine == theirs:
            if at:
                was = (f"line {was[1]}" if was and was[0] == at[0] else
                       f"{was[0]} line {was[1]}" if was else
                       f"the ETDump {s['etdump']} given before")
                print(f"etcompare.batch: warning: {at[0]}: line {at[1]} repeats {was} (the same "
                      f"files in every column): analysed once", file=sys.stderr)
            continue
        # one physical run given twice with other labels (a folder and a
        # labelled manifest row): counted twice it would vote twice in its
        # group's agreement; the labelled spec is kept
        if mine and not theirs:
            unique[i], seen[key] = s, (i, at)
            keep = source(s, at)
        else:
            keep = source(first, was)
        text = ", ".join(f"{k} {v!r}" for k, v in (theirs if keep == source(first, was)
                                                    else mine).items()) or "no labels"
        print(f"etcompare.batch: warning: {s['etdump']}: the same run (the same files in every "
              f"column) is given by {source(first, was)} and by {source(s, at)}: analysed "
              f"once, with the labels of {keep} ({text})", file=sys.stderr)
    return unique


# --- one run ---------------------------------------------------------------------------------

def _num(v):
    """A float for JSON: non-finite values as the strings the report uses."""
    if v is None:
        return None
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _worst(rows):
    """Lowest SNR and cosine, highest MSE over compared outputs."""
    rows = [r for r in rows if r.get("snr") is not None]
    if not rows:
        return None

    def low(x):  # NaN counts as the worst value
        return -math.inf if math.isnan(x) else x

    def high(x):
        return math.inf if math.isnan(x) else x
    return {"snr": _num(min((r["snr"] for r in rows), key=low)),
            "mse": _num(max((r["mse"] for r in rows), key=high)),
            "cosine": _num(min((r["cosine"] for r in rows), key=low)),
            "outputs": len(rows)}


def _fails(m, gate):
    """True when metrics `m` (snr, mse, cosine, max_abs) fail a threshold."""
    def bad(v, lim, lower_is_bad):
        if lim is None:
            return False
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return True
        return v < lim if lower_is_bad else v > lim
    return (bad(m.get("snr"), gate.get("min_snr"), True) or
            bad(m.get("mse"), gate.get("max_mse"), False) or
            bad(m.get("cosine"), gate.get("min_cosine"), True) or
            bad(m.get("max_abs"), gate.get("max_abs"), False))


def _numbers(m):
    """The deciding numbers of a failure, for the message: 'SNR 24.83 dB, ...'."""
    parts = []
    for key, label, unit in (("snr", "SNR", " dB"), ("mse", "MSE", ""),
                             ("cosine", "cosine", ""), ("max_abs", "max abs", "")):
        v = m.get(key) if hasattr(m, "get") else None
        if isinstance(v, (int, float)):
            parts.append(f"{label} {v:.4g}{unit}")
        elif isinstance(v, str):
            parts.append(f"{label} {v}{unit}")
    return ", ".join(parts) or "no metrics"


def _execute_stats(insp):
    """Method::execute p50 and mean over every run of every block (numpy's
    linear percentile, as the Inspector's), not the first block's alone."""
    raw = []
    for b in insp.event_blocks:
        for e in b.events:
            if e.name == "Method::execute" and e.perf_data is not None:
                raw += [float(x) for x in e.perf_data.raw]
    raw = [x for x in raw if not math.isnan(x)]
    if not raw:
        return None, None
    import numpy as np
    return float(np.percentile(raw, 50)), float(np.mean(raw))


def _execute_blocks(insp):
    """The Execute blocks with runs, each with the name --block takes
    ("Execute#2" when another block has its name)."""
    blocks = [b for b in insp.event_blocks if b.name == "Execute" and b.run_count]
    shared = sum(b.name == "Execute" for b in insp.event_blocks) > 1
    return [(f"Execute#{b.index}" if shared else "Execute", b) for b in blocks]


def _paired_blocks(insp, rinsp):
    """(label, block, reference block) for each Execute block of insp whose
    inputs the reference run also ran (etc_numgap_reference_block: the same
    bundled_input_index, or the same position when either has none); the
    first Execute block always pairs with the reference's first."""
    from ._lib import lib
    refs = {b.index: b for b in rinsp.event_blocks}
    first_ref = next((b for _, b in _execute_blocks(rinsp)), None)
    out = []
    for k, (label, b) in enumerate(_execute_blocks(insp)):
        i = lib.numgap_reference_block(insp._h.insp, b.index, rinsp._h.insp)
        rb = refs.get(i) if i >= 0 else (first_ref if k == 0 else None)
        if rb is not None and rb.name == "Execute":
            out.append((label, b, rb))
    return out


def _changed(*inspectors):
    """The message of the first of the inspectors' files found truncated
    while it was read (zeros read since), else None."""
    from ._lib import Error
    for i in inspectors:
        try:
            if i is not None:
                i._h.check()
        except Error as e:
            return str(e)
    return None


def _batch_inspector(**kw):
    """An Inspector whose belonging the batch checks itself (_belong), with
    messages that name the manifest's columns rather than keyword arguments."""
    from . import Inspector

    class _Unchecked(Inspector):
        def _check_belonging(self):
            pass

    return _Unchecked(**kw)


def _belong(insp, what, reference=None):
    """The library's consistency checks (consistency.h, the CLI's exit 3):
    an ETRecord or a debug buffer that does not belong to its ETDump raises
    Error with the evidence. For the reference run (`reference`, its ETDump)
    a record that does not fit is the reference's fault: the message names
    it and the reference column."""
    from ._lib import Error, lib, new_error, check
    import ctypes
    h = insp._h
    if h.insp is None:
        return
    for fn, flag in ((lib.check_etrecord, "the etrecord column"),
                     (lib.check_debug_buffer, what)):
        err = new_error()
        try:
            check(fn(h.insp, flag.encode(), ctypes.byref(err)), err)
        except Error as e:
            if reference is None or fn is not lib.check_etrecord:
                raise
            why = str(e).split("; give the ETRecord")[0]
            raise _RunError(f"the reference run is not a run of this model: {why}; give the "
                             f"reference run of the program of this ETRecord (the reference "
                             f"column, or X.ref.etdp beside X.etdp), not {reference}") from None


class _RunError(Exception):
    """A run's error line with this message as it is."""


def _nothing_compared(spec):
    """The message of a run that a threshold was given for but that had
    nothing to compare (the CLI's usage error, a run's error here)."""
    s = _stem(spec["etdump"])
    if not spec.get("debug_buffer"):
        why = (f"no debug buffer (the outputs' values): give {s}.bin, {s}_debug.bin or "
               f"{s}.debug.bin beside it, or the manifest's debug_buffer column")
    elif spec.get("reference"):
        why = (f"no output or op in common with its reference {spec['reference']}: give the "
               f"reference run's debug buffer ({s}.ref.bin, or the reference_debug_buffer "
               f"column) or a reference run of the same inputs")
    else:
        rec = spec.get("etrecord")
        why = ((f"no reference: its ETRecord {rec} has no reference outputs" if rec else
                "no reference: no ETRecord") +
               f", no reference run or outputs; give {s}.ref.etdp (with {s}.ref.bin), "
               f"{s}.ref.npz, or the manifest's reference column")
    return (f"the thresholds need something to compare, and {spec['etdump']} has {why}")


def _mismatch(acc, etdump, ref):
    """The CLI's check of reference outputs of another program: no output
    could be compared and some have another shape (exit 3 there)."""
    rows = acc.rows
    if any(r.get("snr") is not None or r.get("status") in ("pass", "FAIL", "no data")
           for r in rows):
        return None
    bad = next((r for r in rows if r.get("status") == "shape mismatch"), None)
    if bad is None:
        return None
    return (f"ETDump {etdump} and {ref or 'the reference outputs of its ETRecord'} do not "
            f"belong together: none of the {len(rows)} outputs can be compared (first: run "
            f"{bad['run']} output {bad['output']}: shape {bad['shape']} against reference "
            f"{bad['reference_shape']}); give the reference outputs of this program (the "
            f"reference column, X.ref.npz beside X.etdp, or the ETRecord's)")


def _first_divergence(gap):
    rows = gap.to_dict("records") if hasattr(gap, "to_dict") else gap
    for i, r in enumerate(rows):
        if r.get("status") != "pass":
            # the graph node(s) a user looks up (issue 12), else the event
            node = (r.get("runtime_nodes") or ", ".join(r.get("aot_ops") or []) or
                    r.get("event_name") or f"instruction {r.get('instruction_id')}")
            return {"row": i, "node": node, "op": r.get("runtime_op_types") or "",
                    "event": r.get("event_name") or "",
                    "handle": list(r.get("runtime_debug_handle") or ()),
                    "snr": _num(r.get("snr")), "status": r.get("status")}
    return None


def _line(spec, gate, status="ok", message=None):
    """A summary line's fields before the run's numbers are in."""
    out = {k: spec.get(k) for k in FIELDS}
    out.update({"status": status, "message": message, "blocks": None, "runs": None,
                "time_unit": "ms", "execute_p50": None, "execute_avg": None,
                "worst_output": None, "first_divergence": None,
                # the thresholds the status is judged by ({} for none): --resume
                # refuses to add lines judged by others (_same_gate)
                "gate": dict(gate)})
    return out


def analyze(spec, gate, groups=False):
    """The summary of one run: never raises (a bad input is an error line)."""
    from ._compare import quiet_compare_results as compare_results  # no printout
    from ._lib import Error
    t0 = time.perf_counter()
    out = _line(spec, gate)
    failed = []
    gap = insp = rinsp = acc = None
    compared = False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            insp = _batch_inspector(etdump_path=spec["etdump"],
                                    debug_buffer_path=spec.get("debug_buffer"),
                                    etrecord=spec.get("etrecord"),
                                    max_inflate=spec.get("max_inflate"))
            _belong(insp, "debug_buffer")
            blocks = insp.event_blocks
            out["blocks"] = len(blocks)
            out["runs"] = sum(b.run_count for b in blocks)
            p50, avg = _execute_stats(insp)
            out["execute_p50"], out["execute_avg"] = _num(p50), _num(avg)
            ref = spec.get("reference")
            has_buffer = bool(spec.get("debug_buffer"))
            if ref and not ref.endswith(OUTPUT_REFERENCE_SUFFIXES):
                rinsp = _batch_inspector(etdump_path=ref,
                                         debug_buffer_path=spec.get("reference_debug_buffer"),
                                         etrecord=spec.get("etrecord"),
                                         max_inflate=spec.get("max_inflate"))
                _belong(rinsp, "reference_debug_buffer", reference=ref)
                rows = _outputs_against_run(insp, rinsp, compare_results)
                compared = bool(rows)
                out["worst_output"] = _worst(rows)
                failed += [f"{r['block']} output {r['output']} ({_numbers(r)})" for r in rows
                           if _fails(r, gate)]
                if has_buffer and spec.get("reference_debug_buffer"):
                    # every run of every Execute block, as etcompare's numeric
                    # gap: the first that diverges is the line's
                    paired = _paired_blocks(insp, rinsp)
                    if not paired:  # (the library's own message for no pair)
                        gap = insp.calculate_numeric_gap(reference=rinsp, block="Execute",
                                                         **gate)
                    for label, b, _rb in paired:
                        for run in range(b.run_count):
                            if run == 0:
                                g = insp.calculate_numeric_gap(reference=rinsp, block=label,
                                                               **gate)
                                gap = g if gap is None else gap
                            else:
                                g = _gap_at(insp, rinsp, b, run, label, gate)
                            compared = True
                            fd = _first_divergence(g)
                            if fd:
                                fd["block"] = _run_label(label, b, run)
                                if run == 0:
                                    gap = g
                                out["first_divergence"] = fd
                                break
                        if out["first_divergence"]:
                            break
                    if out["first_divergence"]:
                        fd = out["first_divergence"]
                        failed.append(f"first divergence ({_numbers(fd)})"
                                      if isinstance(fd, dict) else "first divergence")
            elif has_buffer and (ref or _has_references(insp)):
                # force: the batch's own message (_mismatch) names its fixes
                acc = insp.compare(reference=ref, force=True, **gate)
                wrong = _mismatch(acc, spec["etdump"], ref)
                if wrong:
                    raise _RunError(wrong)
                compared = any(r.get("snr") is not None for r in acc.rows)
                out["worst_output"] = _worst(acc.rows)
                if not acc.passed:
                    w = out["worst_output"]
                    failed.append(f"{acc.failures} of {len(acc.rows)} outputs" +
                                  (f" (worst: {_numbers(w)})" if isinstance(w, dict) else ""))
            if gate and not compared:  # never "ok" for a gate that checked nothing
                raise _RunError(_nothing_compared(spec))
            if groups:
                from .batch_groups import PRIVATE, run_info
                if ref and acc is None and has_buffer and _has_references(insp):
                    try:  # (a reference run: the pairing of the group's input only)
                        acc = insp.compare(force=True)
                    except Exception:
                        acc = None
                paired = _paired_input(acc) if acc is not None and (
                    not ref or not ref.endswith(OUTPUT_REFERENCE_SUFFIXES)) else None
                out[PRIVATE] = run_info(insp, gap, spec.get("etrecord"), paired)
            # a file truncated while it was read (zeros read since): this
            # run's error line, whatever was computed from it
            insp._h.check()
            if rinsp is not None:
                rinsp._h.check()
    except Error as e:
        # a file truncated underfoot explains whatever failed after it
        out["status"], out["message"] = "error", _changed(insp, rinsp) or str(e)
    except _RunError as e:
        out["status"], out["message"] = "error", str(e)
    except Exception as e:  # a run must never end the batch
        out["status"], out["message"] = "error", (_changed(insp, rinsp) or
                                                  f"{type(e).__name__}: {e}")
    if out["status"] == "ok" and failed:
        out["status"], out["message"] = "gate_failed", "failed: " + ", ".join(failed)
    out["elapsed_s"] = round(time.perf_counter() - t0, 6)
    return out


def _paired_input(acc):
    """The ETRecord reference set (test case) the accuracy check's pairing
    gave the first run of the first Execute block: the group's input when
    the runtime wrote no bundled_input_index (batch_groups.input_of)."""
    for r in acc.rows:
        if r.get("block") == "Execute" and r.get("run") == 0 and r.get("reference") is not None:
            return int(r["reference"])
    return None


def _has_references(insp):
    from ._lib import lib
    h = insp._h
    return bool(h.etrecord and lib.etrecord_reference_outputs(h.etrecord))


def _run_label(label, b, run):
    """How a line names run `run` (0-based) of block `b`: the block's name
    for its first run (as before every run was compared), "Execute run 2"
    for a later one (docs/farm.md)."""
    return label if run == 0 else f"{label} run {run}"


def _outputs_against_run(insp, rinsp, compare_results):
    """Program outputs of every run of every Execute block against the
    reference run's block of the same inputs (_paired_blocks): its run of
    the same number when it has one, else its first (as etc_numgap_run_at
    pairs them), output by output."""
    rows = []
    for label, b, rb in _paired_blocks(insp, rinsp):
        for run in range(b.run_count):
            mine = b.run_output if run == 0 else b.run_outputs(run)
            ref = rb.run_outputs(run) if run < rb.run_count else rb.run_output
            for k, (x, y) in enumerate(zip(mine, ref)):
                if x is None or y is None:
                    continue
                m = compare_results([y], [x])
                rows.append({"output": k, "block": _run_label(label, b, run),
                             "snr": m["snr"][0], "mse": m["mse"][0],
                             "cosine": m["cosine_similarity"][0]})
    return rows


def _gap_at(insp, rinsp, b, run, label, gate):
    """The numeric gap of run `run` (>= 1) of block `b` against the reference
    run (etc_numgap_run_at: the reference block of the same inputs, its run
    of that number or its first), as rows of calculate_numeric_gap's form
    (first-divergence fields only: no tensors kept)."""
    import ctypes
    from . import _lib as L
    from ._lib import lib
    from ._numgap import _upstream_rows
    P = ctypes.c_void_p
    fn = lib.dll.etc_numgap_run_at
    fn.argtypes = [ctypes.POINTER(P), P, ctypes.c_size_t, ctypes.c_uint32, P, P, P]
    fn.restype = ctypes.c_int
    ref = L.options("numgap_reference", None)
    ref.insp = rinsp._h.insp
    name = next((p for role, p, _f in rinsp._h.data_ids if role == "ETDump"), "reference")
    name_b = os.fsencode(name)
    ref.name = name_b
    opt = L.options("numgap_options", lib.numgap_options_init)
    blk = label.encode()
    opt.block = blk
    for k, v in gate.items():
        setattr(opt, k, float(v))
    opt.drop_reference_values = True
    err = L.new_error()
    out = P()
    L.check(fn(ctypes.byref(out), insp._h.insp, b.index, run, ctypes.addressof(ref),
               ctypes.addressof(opt), ctypes.addressof(err)), err)
    try:
        text = L.capture(lambda f: L.check(lib.report_numgap_json(f, out.value,
                                                                  ctypes.byref(err)), err))
    finally:
        lib.numgap_free(out.value)
    doc = json.loads(text)
    return _upstream_rows(doc, [(None, None)] * len(doc["rows"]))


def analyze_chunk(specs, gate, groups=False):
    return [json.dumps(analyze(s, gate, True) if groups else analyze(s, gate)) for s in specs]


# --- the batch -------------------------------------------------------------------------------

def _chunks(specs, workers):
    size = max(1, min(64, len(specs) // (workers * 8) or 1))
    return [specs[i:i + size] for i in range(0, len(specs), size)]


def _died(spec, why, gate):
    out = _line(spec, gate, "error", f"the worker process died analysing it ({why})")
    out["elapsed_s"] = 0.0
    return json.dumps(out)


def _die_with_parent():
    """Worker initializer: the kernel kills the worker when the batch dies
    (even by kill -9), so no worker is left writing results nobody reads."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the batch


def _kill_pool(ex):
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):
            pass
    ex.shutdown(wait=False, cancel_futures=True)


def _pool_round(chunks, gate, workers, emit, groups=False):
    """One pool over the chunks; the specs of chunks a dead worker took down."""
    failed = []
    ex = concurrent.futures.ProcessPoolExecutor(max_workers=workers,
                                                initializer=_die_with_parent)
    try:
        extra = (True,) if groups else ()  # (the two-argument form stays callable as before)
        futures = {ex.submit(analyze_chunk, c, gate, *extra): c for c in chunks}
        for f in concurrent.futures.as_completed(futures):
            try:
                emit(f.result())
            except concurrent.futures.process.BrokenProcessPool:
                failed.extend(futures[f])
    except BaseException:
        _kill_pool(ex)
        raise
    ex.shutdown(wait=True)
    return failed


def _run_pool(chunks, gate, workers, emit, groups=False):
    """Chunks on a process pool. A worker that dies (a crash in native code)
    breaks the pool: the chunks it took down run again one ETDump per chunk
    on a fresh pool of the same size, and only what breaks that pool too runs
    alone, so only the ETDump that kills a worker becomes an error line."""
    extra = (True,) if groups else ()
    failed = _pool_round(chunks, gate, workers, emit, groups)
    if failed:
        failed = _pool_round([[s] for s in failed], gate, workers, emit, groups)
    for spec in failed:
        ex = concurrent.futures.ProcessPoolExecutor(max_workers=1, initializer=_die_with_parent)
        try:
            emit(ex.submit(analyze_chunk, [spec], gate, *extra).result())
        except concurrent.futures.process.BrokenProcessPool as e:
            emit([_died(spec, e, gate)])
        except BaseException:
            _kill_pool(ex)
            raise
        ex.shutdown(wait=True)


def _probe_scheduler(scheduler):
    """Fails at once where nothing listens at a tcp:// address: Dask's
    Client retries a refused connection for its whole timeout (30 s)."""
    m = _ADDRESS.fullmatch(scheduler)
    if not m or (m.group(2) or "tcp") != "tcp":
        return
    host = m.group(3).strip("[]")
    try:
        socket.create_connection((host, int(m.group(4))), timeout=10).close()
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise _Fail(f"--scheduler {scheduler}: no Dask scheduler answers at that address "
                    f"({why}); start one (dask-scheduler) or give its address, or leave "
                    f"--scheduler out for the local process pool", 3) from None


def _run_dask(chunks, gate, workers, scheduler, emit, groups=False, then=None):
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:  # (parse_args checked it)
        raise _Fail(f"--scheduler needs Dask (Debian python3-dask and python3-distributed): "
                    f"{e}", 2) from None
    # worker processes import etcompare from where this one did
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    cluster = None
    if scheduler == "local":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    else:
        _probe_scheduler(scheduler)
        try:
            client = Client(scheduler)
        except (OSError, TimeoutError) as e:
            raise _Fail(f"--scheduler {scheduler}: no Dask scheduler answers at that address "
                        f"({e}); start one (dask-scheduler) or give its address, or leave "
                        f"--scheduler out for the local process pool", 3) from None
    try:
        extra = {"groups": True} if groups else {}
        futures = client.map(analyze_chunk, chunks, gate=gate, pure=False, **extra)
        index = {f.key: c for f, c in zip(futures, chunks)}
        for f in as_completed(futures):
            try:
                emit(f.result())
            except Exception as e:  # e.g. KilledWorker: the chunk killed its workers
                failed = index[f.key]
                if len(failed) == 1:
                    emit([_died(failed[0], f"{type(e).__name__}: {e}", gate)])
                else:  # find which ETDump: one task each
                    more = client.map(analyze_chunk, [[s] for s in failed], gate=gate,
                                      pure=False, **extra)
                    index.update({g.key: [s] for g, s in zip(more, failed)})
                    for g in more:
                        try:
                            emit(g.result())
                        except Exception as e2:
                            emit([_died(index[g.key][0], f"{type(e2).__name__}: {e2}", gate)])
        if then is not None:  # the group reduction, on the same workers
            then(lambda fn, args: client.gather(client.map(fn, *zip(*args), pure=False)))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _gate_text(gate):
    if not isinstance(gate, dict):
        return f"the gate {gate!r}"
    return " ".join(f"{NUMBERS[k][0]} {gate[k]!r}" for k in NUMBERS if k in gate) or "no gate"


def _same_gate(path, earlier, gate):
    """--resume goes on with a summary whose verdicts were made with the
    thresholds of this batch: _Fail (exit 2) naming both when a line says
    another gate; lines that record none (an etcompare.batch from before
    the gate was recorded) keep their verdicts, with a warning."""
    unknown = 0
    for i, d in enumerate(earlier):
        was = d.get("gate")
        if was is None:
            unknown += 1
        elif was != gate:
            raise _Fail(f"{path}: --resume: its line {i + 1} ({d.get('etdump')}) was judged "
                        f"with {_gate_text(was)}, this batch has {_gate_text(gate)}: one "
                        f"summary would judge the same numbers by two gates; give the same "
                        f"thresholds as that batch, or another -o without --resume", 2)
    if unknown:
        print(f"etcompare.batch: warning: {path}: {unknown} "
              f"{'lines record' if unknown > 1 else 'line records'} no gate (written by an "
              f"older etcompare.batch): kept as they are, whatever gate they were judged by",
              file=sys.stderr)


def _key(line):
    try:
        return (json.loads(line).get("etdump") or "", line)
    except ValueError:
        return ("", line)


def _read_lines(path, repair=False):
    """The summary's complete lines. With repair (--resume), a last line that
    does not parse (a run cut by kill -9 mid-write) is dropped from the file
    with a warning, and its input is analysed again; a file that is not a
    summary of etcompare.batch (not UTF-8, or another line that is not one
    run's JSON object) is _Fail, exit 3, and is left as it is."""
    if not os.path.exists(path):
        return []
    try:
        with open(path, encoding="utf-8") as f:
            raw = [ln.rstrip("\n") for ln in f if ln.strip()]
    except UnicodeDecodeError:
        raw = None
    if raw is None and repair:
        raise _Fail(f"{path}: not a JSONL summary written by etcompare.batch (not UTF-8 "
                    f"text): --resume goes on with the -o file of an earlier batch; give that "
                    f"file, or another -o without --resume", 3)
    good = []
    for i, ln in enumerate(raw):
        try:
            d = json.loads(ln)
            if isinstance(d, dict) and (not repair or "etdump" in d and "status" in d):
                good.append(ln)
                continue
        except ValueError:
            pass
        if repair and i < len(raw) - 1:
            raise _Fail(f"{path}: line {i + 1} is not a line of a summary written by "
                        f"etcompare.batch: --resume goes on with the -o file of an earlier "
                        f"batch; give that file, or another -o without --resume", 3)
        if repair:
            print(f"etcompare.batch: warning: {path}: dropped a cut or invalid line "
                  f"({ln[:60]!r}...); its input is analysed again", file=sys.stderr)
    if repair and len(good) != len(raw):
        with open(path + ".tmp", "w") as f:
            f.write("".join(ln + "\n" for ln in good))
        os.replace(path + ".tmp", path)
    return good


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, with the prefix of every other error
        self.exit(2, f"etcompare.batch: error: {message}\n")


def _inflate_spec_ok(v):
    """A --max-inflate value as etcompare takes it (checked here, before any
    worker starts, not once per run)."""
    if v == "none":
        return True
    m = re.fullmatch(r"([0-9]+)([KMGTkmgt]?)", v)
    if m:
        return int(m.group(1)) > 0
    if v[-1:] in ("x", "X") and v[:1] not in (" ", "+", "-"):
        try:
            f = float(v[:-1])
        except ValueError:
            return False
        return f > 0 and math.isfinite(f)
    return False


# the numbers of the options, checked as etcompare checks its own (src/cli/args.c,
# check_number): decimal, finite, within [lo, hi]
_INF = math.inf
NUMBERS = {"min_snr": ("--min-snr", -_INF, _INF, "a number (dB)"),
           "max_mse": ("--max-mse", 0, _INF, "a number >= 0"),
           "min_cosine": ("--min-cosine", -1, 1, "a number from -1 to 1"),
           "max_abs": ("--max-abs", 0, _INF, "a number >= 0"),
           "outlier_margin": ("--outlier-margin", 0, _INF, "a number >= 0 (dB)"),
           "min_run_agreement": ("--min-run-agreement", -_INF, _INF, "a number (dB)")}
# no blank before the number either: strtod would skip it, check_number refuses it
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


def _number(v, lo, hi):
    """float(v) when strtod would read all of v as a finite decimal number
    in [lo, hi] without ERANGE, else None."""
    m = _DECIMAL.fullmatch(v)
    if not m:
        return None
    x = float(v)
    if not math.isfinite(x) or x < lo or x > hi or (x == 0 and m.group(1).strip("0.")):
        return None  # (the last: an underflow to 0, strtod's ERANGE)
    return x


_ADDRESS = re.compile(r"((tcp|tls|ucx|ws|wss)://)?([\w.-]+|\[[0-9A-Fa-f:.]+\]):([0-9]{1,5})")


def parse_args(argv):
    p = _Parser(prog="python3 -m etcompare.batch",
                description="One JSON summary line per ETDump "
                            "(schema/batch-summary.schema.json).")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="ETDump, folder of ETDumps, or CSV manifest")
    p.add_argument("-o", "--output", default="-", help="summary JSONL file (default: stdout)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="worker processes (default: the CPU count)")
    p.add_argument("--scheduler", help="'local' (a Dask LocalCluster) or the address of a "
                                       "Dask scheduler, e.g. tcp://10.0.0.5:8786")
    p.add_argument("--resume", action="store_true",
                   help="skip inputs already in the summary (-o)")
    for name in ("min-snr", "max-mse", "min-cosine", "max-abs"):
        # both spellings, as the CLI takes them
        p.add_argument("--" + name, "--" + name.replace("-", "_"),
                       help="accuracy gate threshold")
    p.add_argument("--max-inflate", metavar="BYTES|FACTORx|none",
                   help="cap on the tensor bytes read from each debug buffer, as etcompare's "
                        "(default 16x its size, at least 64 MiB)")
    from .batch_groups import add_arguments
    add_arguments(p)
    a = p.parse_args(argv)
    for key, (option, lo, hi, what) in NUMBERS.items():
        v = getattr(a, key)
        if v is not None:
            x = _number(v, lo, hi)
            if x is None:  # the CLI's words
                p.error(f"{option} takes {what}, not '{v}'")
            setattr(a, key, x)
    if a.workers < 1:
        p.error("--workers must be at least 1")
    if a.resume and a.output == "-":
        p.error("--resume needs -o FILE")
    if a.resume and a.group_summary:
        p.error("--resume with --group-summary: the groups need every run's per-op data, "
                "which the -o file does not keep, so they would cover only the runs analysed "
                "now; run the batch without --resume for the group summary (or --resume "
                "without --group-summary)")
    if a.group_summary == "-":
        p.error("--group-summary -: the group summary is written to a file only (stdout is "
                "-o's, the run lines); give --group-summary FILE")
    if not a.group_summary:
        for option, given in (("--agreement-heatmaps", a.agreement_heatmaps is not None),
                              ("--device-from", a.device_from is not None),
                              ("--min-run-agreement", a.min_run_agreement is not None),
                              ("--op-agreement-gate", a.op_agreement_gate)):
            if given:
                p.error(f"{option} applies to the group summary, which is not written: add "
                        f"--group-summary FILE (without it {option} would be ignored)")
    if a.max_inflate is not None and not _inflate_spec_ok(a.max_inflate):
        p.error(f"--max-inflate {a.max_inflate}: give BYTES (K, M, G or T allowed), FACTORx "
                "(times the debug buffer's size) or none")
    if a.scheduler is not None:
        m = _ADDRESS.fullmatch(a.scheduler)
        if a.scheduler != "local" and not (m and 0 < int(m.group(4)) < 65536):
            p.error(f"--scheduler {a.scheduler}: give 'local' (a Dask cluster on this "
                    f"machine) or a Dask scheduler's address, tcp://HOST:PORT")
        try:
            import distributed  # noqa: F401
        except ImportError as e:
            p.error(f"--scheduler needs Dask (Debian python3-dask and python3-distributed, "
                    f"or pip install distributed): {e}")
    return a


def _file_id(path):
    """What a path names: (device, inode) of an existing file (hard links
    and symbolic links are the same file), else its real path."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except OSError:
        return os.path.realpath(path)


def _same_file(a, b):
    """True when paths a and b (None: not given) name one file (_file_id)."""
    return a is not None and b is not None and _file_id(a) == _file_id(b)


def warn_self_references(specs, limit=10):
    """A warning line for each run whose reference run is the run itself
    (its reference ETDump and reference debug buffer are the run's own
    files, also under another name or through a link): every op compares
    equal and the gate passes having checked nothing (a copy-paste in a
    manifest). The first `limit` are named, then how many more."""
    same = []
    for s in specs:
        ref = s.get("reference")
        if not ref or ref.endswith(OUTPUT_REFERENCE_SUFFIXES):
            continue
        rdb, db = s.get("reference_debug_buffer"), s.get("debug_buffer")
        if _same_file(ref, s["etdump"]) and (rdb == db or _same_file(rdb, db)):
            same.append(s)
    for s in same[:limit]:
        print(f"etcompare.batch: warning: {s['etdump']}: the reference run is the run itself "
              f"(reference {s['reference']}"
              + (f", reference_debug_buffer {s['reference_debug_buffer']}"
                 if s.get("reference_debug_buffer") else "") +
              "): every op compares equal (SNR inf) and the gate passes without checking "
              "anything; give the reference run's files (the manifest's reference and "
              "reference_debug_buffer columns, or X.ref.etdp and X.ref.bin beside X.etdp)",
              file=sys.stderr)
    if len(same) > limit:
        print(f"etcompare.batch: warning: {len(same) - limit} more runs whose reference run "
              f"is the run itself", file=sys.stderr)
    return same


def _batch_inputs(a, specs):
    """(path, what it is) of every file the batch reads."""
    for path in a.inputs:
        if not os.path.isdir(path):
            yield path, ("a manifest" if _is_manifest(path) else "an ETDump") + " given"
    for s in specs:
        for k in FIELDS:
            if s.get(k):
                yield s[k], (f"the {k} of the run of {s['etdump']}" if k != "etdump" else
                             "an ETDump of the batch")


def check_outputs(a, specs):
    """Every output refused before any run when it is an input of the batch
    (exit 2, as etcompare's etc_output_check), another output (exit 2), or
    cannot be written (exit 4): a mistake costs no analysis and no file."""
    outs = []
    for option, path in (("-o", a.output), ("--group-summary", a.group_summary)):
        if path and path != "-":
            outs.append((path, option))
            if not _special(path):  # a device or FIFO is written in place, no .tmp
                outs.append((path + ".tmp", f"the temporary file of {option}"))
    ids = {}
    for path, option in outs:
        other = ids.setdefault(_file_id(path), (path, option))
        if other != (path, option) and not _special(path):  # (-o and the groups to /dev/null)
            raise _Fail(f"{path} ({option}) and {other[0]} ({other[1]}) are the same file: "
                        f"give each output its own file", 2)
    heat = a.agreement_heatmaps
    heat_id = _file_id(heat) if heat else None
    for path, what in _batch_inputs(a, specs):
        i = _file_id(path)
        if i in ids:
            out, option = ids[i]
            raise _Fail(f"the output {out} ({option}) is {path}, {what}: it would be "
                        f"overwritten; give the output another name", 2)
        if i == heat_id:
            raise _Fail(f"--agreement-heatmaps {heat}: this is {path}, {what}, not a folder "
                        f"for the heat maps", 2)
        base = os.path.basename(path)
        if (heat and base.startswith("agreement_") and base.endswith(".png") and
                os.path.realpath(os.path.dirname(path) or ".") == os.path.realpath(heat)):
            raise _Fail(f"{path}, {what}, is in --agreement-heatmaps {heat} under a heat "
                        f"map's name (agreement_*.png): a heat map could overwrite it; "
                        f"give the heat maps a folder of their own", 2)
    for path, option in [o for o in outs if not o[1].startswith("the temporary file")]:
        if os.path.isdir(path):
            raise _Fail(f"{path} ({option}): is a directory, not an output file", 4)
        if _special(path):  # written in place (no .tmp beside it): itself writable
            if not os.access(path, os.W_OK):
                raise _Fail(f"{path} ({option}): cannot write it (permission denied)", 4)
            continue
        folder = os.path.dirname(path) or "."
        if not os.path.isdir(folder):
            raise _Fail(f"{path} ({option}): cannot create the file: its folder {folder} "
                        f"does not exist", 4)
        if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and
                                                        not os.access(path, os.W_OK)):
            raise _Fail(f"{path} ({option}): cannot write it (permission denied)", 4)
    if heat and os.path.exists(heat) and not os.path.isdir(heat):
        raise _Fail(f"--agreement-heatmaps {heat}: not a folder", 4)


def check_device_from(specs, device_from):
    """--device-from N names a path component (of the path as given, not
    made absolute) of every ETDump whose device the manifest does not give:
    else a usage error (exit 2) before any run, naming the first path (it
    silently gave such runs the device ""). A warning when it gives every
    such run one label (more than one run) or some run an empty one."""
    from .batch_groups import GIVEN, path_parts
    labels = []
    for spec in specs:
        if spec.get("device"):
            continue
        parts = path_parts(spec)
        given = spec.get(GIVEN) or spec["etdump"]
        if not -len(parts) <= device_from < len(parts):
            raise _Fail(f"--device-from {device_from}: {given} has {len(parts)} path "
                        f"components ({', '.join(repr(x) for x in parts)}), so none is number "
                        f"{device_from}; give N from {-len(parts)} to {len(parts) - 1} (-2 is "
                        f"the ETDump's folder), or the manifest's device column", 2)
        labels.append((parts[device_from], given))
    empty = [g for x, g in labels if not x]
    if empty:
        print(f"etcompare.batch: warning: --device-from {device_from} gives {len(empty)} "
              f"run{'' if len(empty) == 1 else 's'} an empty device label (e.g. {empty[0]}: "
              f"component {device_from} of the path as given); choose another N (-2 is the "
              f"ETDump's folder)", file=sys.stderr)
    elif len(labels) > 1 and len({x for x, _ in labels}) == 1:
        print(f"etcompare.batch: warning: --device-from {device_from} gives every one of the "
              f"{len(labels)} runs the same device {labels[0][0]!r} (e.g. {labels[0][1]}): the "
              f"per-device summaries cannot tell devices apart; choose the component that names "
              f"the device (-2 is the ETDump's folder)", file=sys.stderr)


def _run(a):
    # one process per CPU already: numpy's BLAS threads and libetcompare's
    # comparison threads in each would only compete (set before any process
    # of the batch imports numpy or loads the library)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("ETC_THREADS", "1")
    gate = {k: getattr(a, k) for k in ("min_snr", "max_mse", "min_cosine", "max_abs")
            if getattr(a, k) is not None}
    specs = discover(a.inputs)
    check_outputs(a, specs)
    if a.group_summary and a.device_from is not None:
        check_device_from(specs, a.device_from)
    warn_self_references(specs)
    if a.max_inflate is not None:
        for s in specs:
            s["max_inflate"] = a.max_inflate
    if not specs:
        print("etcompare.batch: error: no ETDump (.etdp, .etdump) in "
              + ", ".join(a.inputs), file=sys.stderr)
        return 3
    to_file = a.output != "-"
    # a device, a FIFO...: written in place once, at the end, never replaced
    # by a regular file (os.replace of -o /dev/null turned the node into one)
    regular = to_file and not _special(a.output)
    from .batch_groups import run_key
    done, kept = set(), []
    if a.resume:
        if to_file and not regular:
            raise _Fail(f"{a.output} (-o): --resume reads the summary of an earlier batch "
                        f"back, and this is not a regular file; give the -o file of that "
                        f"batch", 2)
        raw = _read_lines(a.output, repair=True)
        earlier = [json.loads(ln) for ln in raw]
        _same_gate(a.output, earlier, gate)
        kept, stale = _still_valid(raw, earlier, specs)
        if stale:
            print(f"etcompare.batch: warning: {a.output}: --resume: {len(stale)} earlier "
                  f"line{'' if len(stale) == 1 else 's'} of an ETDump whose other files "
                  f"changed (debug buffer, ETRecord or reference) replaced by the run analysed "
                  f"again: " + "; ".join(stale[:5]) + (" ..." if len(stale) > 5 else ""),
                  file=sys.stderr)
        done = {run_key(json.loads(ln)) for ln in kept}
    todo = [s for s in specs if run_key(s) not in done]
    collected = []
    sink = open(a.output, "a" if a.resume else "w") if regular else None
    groups = bool(a.group_summary)
    infos = {}  # etdump -> the run's group data (batch_groups.run_info)

    def emit(lines):
        if groups:
            from .batch_groups import strip_private
            lines = strip_private(lines, infos)
        collected.extend(lines)
        if sink:
            sink.write("".join(ln + "\n" for ln in lines))
            sink.flush()

    stopped = None
    try:
        chunks = _chunks(todo, a.workers)
        if not chunks:
            pass
        elif a.scheduler:
            then = None
            if groups:
                from .batch_groups import reduce_all

                def then(mapper):
                    reduce_all(a, specs, infos, mapper)
            _run_dask(chunks, gate, a.workers, a.scheduler, emit, groups, then)
        else:
            _run_pool(chunks, gate, a.workers, emit, groups)
            if groups:
                from .batch_groups import pool_mapper, reduce_all
                reduce_all(a, specs, infos, pool_mapper(a.workers))
    except _Stop as e:
        stopped = e.signum
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if sink:
            sink.close()
    # the lines of this batch: the ones just produced, and with --resume the
    # earlier ones still valid (read before any run); never the -o file read
    # back (a device reads back nothing, a FIFO blocks)
    lines = kept + collected
    lines.sort(key=_key)
    text = "".join(ln + "\n" for ln in lines)
    if regular:
        tmp = a.output + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.output)
    elif to_file:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if stopped is not None:
        name = "SIGINT" if stopped == signal.SIGINT else "SIGTERM"
        print(f"etcompare.batch: stopped by {name}: {len(collected)} runs analysed and "
              f"written; --resume goes on", file=sys.stderr)
        return 130 if stopped == signal.SIGINT else 143
    # the verdict of the whole summary, also of lines an earlier run wrote
    statuses = [json.loads(ln).get("status") for ln in lines]
    n = len(collected)
    msg = f"etcompare.batch: {n} run{'' if n == 1 else 's'} analysed (" + ", ".join(
        f"{[json.loads(ln).get('status') for ln in collected].count(s)} {s}"
        for s in ("ok", "gate_failed", "error")) + ")"
    if a.resume:
        msg += f"; {len(specs) - len(todo)} skipped, already in {a.output}"
    msg += "; summary: " + ", ".join(f"{statuses.count(s)} {s}"
                                     for s in ("ok", "gate_failed", "error"))
    docs = getattr(a, "group_docs", None) if groups else None
    if docs is not None:
        from .batch_groups import group_verdicts
        text, failed_lines = group_verdicts(a, docs)
        msg += "; " + text
    print(msg, file=sys.stderr)
    if docs is not None:
        for ln in failed_lines:
            print(ln, file=sys.stderr)
        if any(d.get("status") == "gate_failed" for d in docs):
            statuses.append("gate_failed")
    return 3 if "error" in statuses else 1 if "gate_failed" in statuses else 0


def _special(path):
    """True when `path` exists and is not a regular file (a character or
    block device such as /dev/null, a FIFO, a socket)."""
    import stat
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _still_valid(raw, earlier, specs):
    """--resume: the earlier lines kept, and a note for each dropped. A line
    is dropped when its ETDump is one of this batch's but no run of the
    batch has its files (a debug buffer or ETRecord added, removed or
    renamed since): the run with the current files is analysed again and its
    line replaces the old one, so each ETDump has the verdict of its files."""
    from .batch_groups import run_key
    current = {run_key(s) for s in specs}
    dumps = {os.path.realpath(s["etdump"]) for s in specs}
    kept, stale = [], []
    for ln, d in zip(raw, earlier):
        e = d.get("etdump")
        if run_key(d) not in current and e and os.path.realpath(e) in dumps:
            stale.append(f"{e} ({d.get('status')}, debug_buffer {d.get('debug_buffer')}, "
                         f"etrecord {d.get('etrecord')})")
        else:
            kept.append(ln)
    return kept, stale


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    try:
        return _run(a)
    except _Stop as e:  # a signal outside the pool's loop
        return 130 if e.signum == signal.SIGINT else 143
    except _Fail as e:
        print(f"etcompare.batch: error: {e.code}", file=sys.stderr)
        return e.status
    except OSError as e:  # every error one line, no traceback
        name = e.filename
        print(f"etcompare.batch: error: {name + ': ' if name else ''}{e.strerror or e}",
              file=sys.stderr)
        outs = [p for p in (a.output, a.group_summary) if p and p != "-"]
        written = name and (name in outs + [p + ".tmp" for p in outs] or a.agreement_heatmaps
                            and name.startswith(os.path.join(a.agreement_heatmaps, "")))
        return 4 if written else 3


if __name__ == "__main__":
    try:
        sys.exit(main())
    except _Stop as e:  # before main's own handling began
        sys.exit(130 if e.signum == signal.SIGINT else 143)
