"""Group summaries of `python3 -m etcompare.batch` (issue 26, item 1): the
runs of a device farm grouped by (model, input) and by device; the input is
the manifest's column, else the runtime's bundled_input_index, else the
ETRecord reference set the accuracy check paired the run's outputs with
(real runtimes write no bundled_input_index), else unknown (a warning: the
group may mix inputs). With --min-run-agreement a group is ok, gate_failed
or not_checked (a single run, or runs without an output: the matrix then
covers the runs that have it), and the batch prints each failed group.

For each (model, input) group, one JSON line (written to --group-summary,
by default OUTPUT.groups.jsonl) with:
  ops         per op (node, in execution order): the distribution over the
              group's runs of its cumulative SNR (and local SNR when the
              runs' numeric gap has one): min, median, p5, p95, and the
              worst run (etdump, block, run, bundled input index);
  by_device   the same per device;
  agreement   per program output: the runs x runs pairwise SNR matrix
              (run i against run j as reference) from one Gram matrix per
              element slice (etc_agreement_*: dsyrk, double accumulation),
              each run's agreement score (the median over the other runs j
              of min(snr[i][j], snr[j][i])), the outlier runs (score more
              than --outlier-margin dB below the median score) and the
              outlier devices (at least half of their runs outliers);
  op_agreement  the same per op output logged in the debug buffer by every
              run (intermediate outputs): lowest pairwise SNR, majority
              score, outlier runs and devices, worst first; the worst op's
              matrix (op_agreement_worst) and the first op with outlier
              runs (op_disagreement_enters);
  differing_ops  for each outlier device, the first op (execution order)
              whose median cumulative SNR on that device is more than
              --outlier-margin dB below the median of the other devices'
              medians: where the device's error enters.

The Gram sums are computed in element slices on the workers (the process
pool or Dask): a task reads the group's runs one at a time and keeps only
its slices of each, so a worker holds one run plus runs x slice values
(the slice is the output size over the run count, at least 65,536 values;
small op outputs are packed into one task up to that width);
the slices' sums are added in slice order, so the pool and Dask give
bit-identical matrices.
"""
import ctypes
import hashlib
import json
import math
import os
import sys

PRIVATE = "_farm"  # the per-run data a worker hands to the group reduction
MIN_SLICE = 65536


GIVEN = "_given"  # a spec's ETDump path as the user gave it (--device-from)
RUN_FILES = ("etdump", "debug_buffer", "etrecord", "reference", "reference_debug_buffer")


def run_key(run):
    """What tells a run (a spec or a summary line) from another: the real
    paths of its files, every column (two manifest rows may share an ETDump)."""
    return tuple(os.path.realpath(run[k]) if run.get(k) else None for k in RUN_FILES)


# --- per run (in the worker) -----------------------------------------------------------------

def record_digest(path):
    """SHA-256 of a file's bytes (the model's identity: the runs of one
    model have ETRecords of the same bytes, whatever their names)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_info(insp, gap, etrecord=None, paired=None):
    """The group data of one analysed run: its ETRecord's digest, its
    Execute block's bundled input index (else `paired`, the ETRecord
    reference set the accuracy check paired its first run with by content),
    output sizes, and per op (numeric gap row) the cumulative and local SNR."""
    info = {"input": None, "input_from": None, "block": None, "run": 0, "outputs": [],
            "ops": [], "etrecord_sha256": record_digest(etrecord) if etrecord else None}
    b = next((b for b in insp.event_blocks if b.name == "Execute" and b.run_count), None)
    if b is not None:
        info["block"] = b.index
        idx = b.bundled_input_index
        info["input"] = None if idx is None or idx < 0 else int(idx)
        if info["input"] is not None:
            info["input_from"] = "bundled_input_index"
        elif paired is not None:
            info["input"], info["input_from"] = int(paired), "content pairing"
        info["outputs"] = [None if x is None else int(_flat(x).size) for x in b.run_output]
        if insp._h.buf is not None:  # without its debug buffer a run logged no values
            info["op_outputs"] = op_outputs(b)
    if gap is not None:
        rows = gap.to_dict("records") if hasattr(gap, "to_dict") else gap
        for r in rows:
            node = (r.get("runtime_nodes") or ", ".join(r.get("aot_ops") or []) or
                    r.get("event_name") or f"instruction {r.get('instruction_id')}")
            info["ops"].append({"node": node,
                                "handle": [int(h) for h in (r.get("runtime_debug_handle") or ())],
                                "snr": _f(r.get("snr")), "local_snr": _f(r.get("local_snr"))})
    return info


def _op_events(block):
    """The events of `block` with intermediate outputs, each instruction (or
    delegate event) once as the numeric gap takes them (native_call_* and
    its OPERATOR_CALL carry the same debug data: the first), keyed by what
    the ETDump itself says, so a worker needs no ETRecord to find it:
    "instruction|delegate id|event name|occurrence" -> event."""
    out, seen, last = {}, {}, None
    for e in block.events:
        if not e._debug_count:
            continue
        ident = (e._instruction_id, e.delegate_debug_identifier)
        if last == ident:
            continue
        last = ident
        did = "" if e.delegate_debug_identifier is None else e.delegate_debug_identifier
        base = f"{e._instruction_id}|{did}|{e.name}"
        k = seen.get(base, 0)
        seen[base] = k + 1
        out[f"{base}|{k}"] = e
    return out


def op_outputs(block):
    """Per intermediate output of `block`'s first run (debug buffer): its key
    (op key and output position), element count, debug handles and node."""
    out = []
    for key, e in _op_events(block).items():
        for j, x in enumerate(e.debug_data):
            if x is None or not hasattr(x, "shape") and not hasattr(x, "detach"):
                continue  # a scalar: no matrix of one value
            nodes = [n for n in e.stack_traces]
            out.append({"key": key, "output": j, "size": int(_flat(x).size),
                        "instruction_id": e._instruction_id, "event": e.name,
                        "handle": [int(h) for h in (e.debug_handles or ())],
                        "node": ", ".join(nodes) or e.name})
    return out


def _f(v):
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return "nan" if math.isnan(v) else ("inf" if v == math.inf else
                                        "-inf" if v == -math.inf else v)


def _flat(x):
    import numpy as np
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x).reshape(-1)


# --- the agreement sums (a worker task) ------------------------------------------------------

def _lib():
    from ._lib import lib
    dll = lib.dll
    if not getattr(dll, "_farm_ready", False):
        P = ctypes.c_void_p
        D = ctypes.POINTER(ctypes.c_double)
        dll.etc_agreement_new.argtypes = [ctypes.c_size_t, ctypes.POINTER(P), P]
        dll.etc_agreement_new.restype = ctypes.c_int
        dll.etc_agreement_free.argtypes = [P]
        dll.etc_agreement_free.restype = None
        dll.etc_agreement_add_f32.argtypes = [P, P, ctypes.c_size_t, ctypes.c_size_t, P]
        dll.etc_agreement_add_f32.restype = ctypes.c_int
        dll.etc_agreement_sums.argtypes = [P, D, D, D, ctypes.POINTER(ctypes.c_size_t)]
        dll.etc_agreement_sums.restype = None
        dll.etc_agreement_add_sums.argtypes = [P, D, D, D, ctypes.c_size_t]
        dll.etc_agreement_add_sums.restype = None
        dll.etc_agreement_snr.argtypes = [P, D, P]
        dll.etc_agreement_snr.restype = ctypes.c_int
        dll._farm_ready = True
    return lib


def _new(n):
    from . import _lib as L
    lib = _lib()
    h = ctypes.c_void_p()
    err = L.new_error()
    L.check(lib.dll.etc_agreement_new(n, ctypes.byref(h), ctypes.byref(err)), err)
    return h


def _dp(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def sums_of_block(block):
    """The agreement sums (dist, res, norm, elements) of a runs x values
    float32 array, through etc_agreement_add_f32."""
    import numpy as np
    from . import _lib as L
    lib = _lib()
    block = np.require(block, dtype=np.float32, requirements=["C", "A"])
    n, k = block.shape
    h = _new(n)
    try:
        err = L.new_error()
        L.check(lib.dll.etc_agreement_add_f32(h, block.ctypes.data, k, k, ctypes.byref(err)),
                err)
        dist, res, norm = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n)
        el = ctypes.c_size_t()
        lib.dll.etc_agreement_sums(h, _dp(dist), _dp(res), _dp(norm), ctypes.byref(el))
        return dist, res, norm, el.value
    finally:
        lib.dll.etc_agreement_free(h)


def snr_matrix(sums):
    """The runs x runs SNR matrix of summed agreement sums."""
    import numpy as np
    from . import _lib as L
    lib = _lib()
    dist, res, norm, el = sums
    n = norm.size
    h = _new(n)
    try:
        # aligned copies where needed: arrays unpickled from a Dask worker
        # may sit at any byte offset of its message
        dist, res, norm = (np.require(x, dtype=np.float64, requirements=["C", "A"])
                           for x in (dist, res, norm))
        lib.dll.etc_agreement_add_sums(h, _dp(dist), _dp(res), _dp(norm), el)
        out = np.zeros((n, n))
        err = L.new_error()
        L.check(lib.dll.etc_agreement_snr(h, _dp(out), ctypes.byref(err)), err)
        return out
    finally:
        lib.dll.etc_agreement_free(h)


def _tensor_of(block, events, what):
    """The values of `what` in `block` (first run): ("output", k) a program
    output, ("op", key, j) output j of the op event of that key."""
    if what[0] == "output":
        return _flat(block.run_output[what[1]])
    e = events.get(what[1])
    if e is None:
        raise ValueError(f"no event {what[1]!r} (instruction|name|occurrence) in this run")
    data = e.debug_data
    if what[2] >= len(data):
        raise ValueError(f"event {what[1]!r} has {len(data)} intermediate outputs, "
                         f"not output {what[2]}")
    return _flat(data[what[2]])


def agreement_items(runs, items):
    """Slices [(what, lo, hi)] of each run (etdump, debug_buffer), the runs
    read one at a time (each once for all items): each slice's agreement
    sums, in the order of `items`."""
    import numpy as np
    from . import Inspector
    blocks = [np.zeros((len(runs), hi - lo), dtype=np.float32) for _, lo, hi in items]
    for i, (etdump, buf) in enumerate(runs):
        insp = Inspector(etdump_path=etdump, debug_buffer_path=buf)
        b = next(b for b in insp.event_blocks if b.name == "Execute" and b.run_count)
        events = _op_events(b) if any(w[0] == "op" for w, _, _ in items) else {}
        for blk, (what, lo, hi) in zip(blocks, items):
            x = _tensor_of(b, events, what)
            if x.size < hi:
                raise ValueError(f"{etdump}: {what[0]} {what[1:]} has {x.size} values, "
                                 f"the group's first run {hi} or more")
            blk[i] = x[lo:hi]
        insp._h.check()
        del insp, b, events
    return [sums_of_block(blk) for blk in blocks]


def agreement_task(runs, output, lo, hi):
    """Slice [lo, hi) of program output `output` of each run: its sums."""
    return agreement_items(runs, [(("output", output), lo, hi)])[0]


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


# --- the grouping and the summaries (in the main process) -------------------------------------

def path_parts(spec):
    """The components of the ETDump's path as the user gave it (typed, or
    the manifest's cell), not the absolute path the batch works with: what
    --device-from N indexes ("farm/pixel7/run_0.etdp": 1 is pixel7)."""
    return os.path.normpath(spec.get(GIVEN) or spec["etdump"]).split(os.sep)


def device_of(spec, device_from):
    if spec.get("device"):
        return spec["device"]
    if device_from is not None:
        parts = path_parts(spec)
        try:
            return parts[device_from]
        except IndexError:
            return ""
    return ""


def model_of(spec, info=None):
    """The model's key: the manifest's model column, else the digest of the
    ETRecord's bytes ("" without an ETRecord)."""
    if spec.get("model"):
        return spec["model"]
    digest = (info or {}).get("etrecord_sha256")
    return "sha256:" + digest if digest else ""


def input_source(spec, info):
    """Where a run's input label comes from: "manifest", "bundled_input_index",
    "content pairing", or None (unknown: the group may mix inputs)."""
    if spec.get("input") not in (None, ""):
        return "manifest"
    return (info or {}).get("input_from") if (info or {}).get("input") is not None else None


def input_of(spec, info):
    if spec.get("input") not in (None, ""):
        return str(spec["input"])
    return "" if info is None or info.get("input") is None else str(info["input"])


def _pct(xs, q):
    """Percentile q (0..100) by linear interpolation (numpy's default)."""
    xs = sorted(xs)
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    if xs[lo] == xs[hi]:
        return xs[lo]
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _val(v):
    if v is None:
        return None
    return float(v)


def _jnum(v):
    if v is None:
        return None
    return "nan" if math.isnan(v) else ("inf" if v == math.inf else
                                        "-inf" if v == -math.inf else v)


def distribution(samples):
    """samples: [(snr, where)] -> min, p5, median, p95 and the worst run
    (NaN counts as the worst)."""
    vals = [(_val(s), w) for s, w in samples if s is not None]
    if not vals:
        return None
    key = [(-math.inf if math.isnan(v) else v) for v, _ in vals]
    finite = sorted(k for k in key)
    worst = min(range(len(vals)), key=lambda i: key[i])
    return {"runs": len(vals), "min": _jnum(finite[0]), "p5": _jnum(_pct(finite, 5)),
            "median": _jnum(_pct(finite, 50)), "p95": _jnum(_pct(finite, 95)),
            "worst": dict(vals[worst][1], snr=_jnum(vals[worst][0]))}


def op_distributions(members):
    """Per op (execution order of the first run that has it): the
    cumulative and local SNR distributions over `members` [(spec, info)]."""
    order, samples = [], {}
    for spec, info in members:
        where = {"etdump": spec["etdump"], "block": info.get("block"), "run": info.get("run", 0),
                 "bundled_input_index": info.get("input")}
        for op in info.get("ops", ()):
            k = op["node"]
            if k not in samples:
                order.append(k)
                samples[k] = {"handle": op["handle"], "snr": [], "local_snr": []}
            for f in ("snr", "local_snr"):
                if op.get(f) is not None:
                    samples[k][f].append((op[f], where))
    out = []
    for k in order:
        s = samples[k]
        row = {"node": k, "handle": s["handle"], "cumulative": distribution(s["snr"])}
        if s["local_snr"]:
            row["local"] = distribution(s["local_snr"])
        out.append(row)
    return out


def outliers(snr, devices, margin):
    """Each run's score (median over j != i of min(snr_ij, snr_ji)), the
    outlier runs and the outlier devices."""
    import numpy as np
    n = snr.shape[0]
    sym = np.minimum(snr, snr.T)
    scores = []
    for i in range(n):
        others = [sym[i, j] for j in range(n) if j != i]
        scores.append(float(np.median(others)))
    finite = [s if not math.isnan(s) else -math.inf for s in scores]
    majority = float(np.median(finite))
    out_runs = [i for i, s in enumerate(finite)
                if s < majority - margin or (math.isinf(majority) and majority > 0 and
                                             not math.isinf(s))]
    per_dev = {}
    for i, d in enumerate(devices):
        per_dev.setdefault(d, []).append(i)
    out_devs = sorted(d for d, idx in per_dev.items()
                      if sum(1 for i in idx if i in out_runs) * 2 >= len(idx) and
                      any(i in out_runs for i in idx))
    return scores, majority, out_runs, out_devs


def differing_ops(members, device, margin):
    """The first op whose median cumulative SNR on `device` is more than
    `margin` dB below the median of the other devices' medians."""
    import numpy as np
    by_dev = {}
    for spec, info in members:
        by_dev.setdefault(spec["_device"], []).append((spec, info))
    if device not in by_dev or len(by_dev) < 2:
        return None
    med = {d: {r["node"]: r["cumulative"]["median"] for r in op_distributions(m)
               if r["cumulative"]} for d, m in by_dev.items()}
    for r in op_distributions(by_dev[device]):
        node = r["node"]
        mine = _val(med[device].get(node))
        others = [_val(med[d][node]) for d in med if d != device and node in med[d]]
        if mine is None or not others:
            continue
        base = float(np.median(others))
        if mine < base - margin or (math.isinf(base) and base > 0 and not math.isinf(mine)):
            return {"node": node, "handle": r["handle"], "device_median_snr": _jnum(mine),
                    "others_median_snr": _jnum(base)}
    return None


def plan(specs_infos):
    """(model, input) groups of the analysed runs: {key: [(spec, info)]}.
    Runs without a model column are grouped by their ETRecord's bytes, the
    group named after the first run's ETRecord file name, with the digest's
    first 12 hex digits when records of other bytes have that name too
    ("model.etrecord#1a2b3c4d5e6f")."""
    first = {}  # digest -> the file name of its first record
    for spec, info in specs_infos:
        m = model_of(spec, info)
        if m.startswith("sha256:") and not spec.get("model"):
            first.setdefault(m, os.path.basename(spec["etrecord"]))
    shared = [n for n in first.values()]
    names = {m: n if shared.count(n) == 1 else f"{n}#{m[7:19]}" for m, n in first.items()}
    groups = {}
    for spec, info in specs_infos:
        m = model_of(spec, info)
        model = spec["model"] if spec.get("model") else names.get(m, m)
        groups.setdefault((model, input_of(spec, info)), []).append((spec, info))
    return groups


def _slices(size, runs):
    step = max(MIN_SLICE, -(-size // runs))
    return [(lo, min(size, lo + step)) for lo in range(0, size, step)]


def agreement_items_of(members):
    """What a group's matrices are of: each program output, then each op's
    intermediate output, present with the same size in every run of the
    group: [(what, size)], what = ("output", k) or ("op", key, j)."""
    if len(members) < 2:
        return []
    out = []
    sizes = [m[1].get("outputs") or [] for m in members]
    for k in range(max(len(z) for z in sizes)):
        have = [z[k] for z in sizes if len(z) > k and z[k] is not None]
        if not have:
            continue
        size = max(set(have), key=lambda v: (have.count(v), -have.index(v)))
        idx = tuple(i for i, z in enumerate(sizes) if len(z) > k and z[k] == size)
        if len(idx) == len(members):
            out.append((("output", k), size))
        elif len(idx) >= 2:  # the runs that have it (a run without its debug buffer has not)
            out.append((("output", k, idx), size))
    ops = [{(o["key"], o["output"]): o["size"] for o in m[1].get("op_outputs") or ()}
           for m in members]
    for o in members[0][1].get("op_outputs") or ():
        k = (o["key"], o["output"])
        if o["size"] and all(z.get(k) == o["size"] for z in ops):
            out.append((("op", o["key"], o["output"]), o["size"]))
    return out


def agreement_tasks(members):
    """The worker tasks of a group: [(items, runs)], items [(what, lo, hi)]
    slices of its outputs and ops (agreement_items_of). A large tensor is
    cut in slices of max(MIN_SLICE, size / runs); small ones are packed
    together up to the largest slice's width, so that a task reads each run
    once for many ops and holds at most runs x that width values."""
    runs = [(s["etdump"], s.get("debug_buffer")) for s, _ in members]
    slices = [(what, lo, hi) for what, size in agreement_items_of(members)
              for lo, hi in _slices(size, len(members))]
    if not slices:
        return []
    budget = max(MIN_SLICE, max(hi - lo for _, lo, hi in slices))
    tasks = []
    # the items of every run first (packed as before), then each output that
    # only some runs have, over those runs
    subsets = [None] + sorted({sl[0][2] for sl in slices if sl[0][0] == "output" and
                               len(sl[0]) > 2})
    for sub in subsets:
        mine = [sl for sl in slices if (sl[0][2] if sl[0][0] == "output" and len(sl[0]) > 2
                                        else None) == sub]
        who = runs if sub is None else [runs[i] for i in sub]
        cur, width = [], 0
        for sl in mine:
            w = sl[2] - sl[1]
            if cur and width + w > budget:
                tasks.append((cur, who))
                cur, width = [], 0
            cur.append(sl)
            width += w
        if cur:
            tasks.append((cur, who))
    return tasks


def heatmap(path, snr, title):
    """A PNG heat map of the disagreement (-SNR dB; +inf SNR drawn as the
    best finite value) through etc_plot_heatmap."""
    import numpy as np
    from . import _lib as L
    from ._lib import lib
    dll = lib.dll
    dll.etc_plot_heatmap.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_uint64,
                                     ctypes.c_uint64, ctypes.c_char_p, ctypes.c_void_p]
    dll.etc_plot_heatmap.restype = ctypes.c_int
    m = np.array(snr, dtype=np.float64)
    fin = m[np.isfinite(m)]
    top = float(fin.max()) if fin.size else 0.0
    m = np.where(np.isposinf(m), top, m)
    m = np.ascontiguousarray(-m)
    err = L.new_error()
    # the path as the file system has it (names that are not UTF-8 kept, as
    # os.fsencode does); the title is text: what is not UTF-8 drawn as U+FFFD
    L.check(dll.etc_plot_heatmap(os.fsencode(path), m.ctypes.data, m.shape[0], m.shape[1],
                                 title.encode("utf-8", "replace"), ctypes.byref(err)), err)


def _min_pair(snr):
    """The lowest off-diagonal SNR (NaN first)."""
    n = snr.shape[0]
    vals = [float(snr[i, j]) for i in range(n) for j in range(n) if i != j]
    if not vals:
        return None
    return min(vals, key=lambda v: -math.inf if math.isnan(v) else v)


def _order(v):
    return math.inf if v is None else (-math.inf if math.isnan(v) else v)


def heatmap_stems(keys):
    """{(model, input): the part of its heat maps' file names}: the two
    labels made safe for a file name (_safe), and when that makes two
    groups' names equal ("a b" and "a_b", "model 1.etrecord" and
    "model_1.etrecord"), each of those groups' followed by the first 8 hex
    digits of the SHA-256 of its own labels: every group writes and names
    its own files."""
    stems = {k: f"{_safe(k[0])}_{_safe(k[1])}" for k in keys}

    def digest(k):
        raw = json.dumps([str(k[0]), str(k[1])]).encode("utf-8", "surrogateescape")
        return hashlib.sha256(raw).hexdigest()[:8]
    # two groups clash on an equal stem, or on a stem that begins another
    # ("a_b" and "a_b_op_c": an op's name completes it, "a_b" + "_op_c_op_d"
    # against "a_b_op_c" + "_op_d"); sorted, the stems a stem begins follow it
    clash = set()
    ordered = sorted(stems.items(), key=lambda kv: kv[1])
    for i, (k, st) in enumerate(ordered):
        for k2, st2 in ordered[i + 1:]:
            if not st2.startswith(st):
                break
            if st2 == st or st2.startswith(st + "_"):
                clash.update((k, k2))
    for k in clash:
        stems[k] = f"{stems[k]}_{digest(k)}"
    return stems


def op_agreement(key, members, sums, margin, min_agreement, heatmap_dir, stem=None):
    """Per op output: the agreement of the group's runs (the program
    outputs' code), worst (lowest pairwise SNR) first; the worst op's
    matrix; the first op in execution order with outlier runs (where the
    disagreement enters)."""
    model, inp = key
    devices = [s["_device"] for s, _ in members]
    meta = {(o["key"], o["output"]): o for o in members[0][1].get("op_outputs") or ()}
    handle_node = {tuple(op["handle"]): op["node"] for _, info in members[:1]
                   for op in info.get("ops", ()) if op.get("handle")}
    rows, mats, gate = [], [], []
    for what in [w for w in sums if w[0] == "op"]:  # execution order (agreement_items_of)
        o = meta[(what[1], what[2])]
        snr = snr_matrix(sums[what])
        scores, majority, out_runs, out_devs = outliers(snr, devices, margin)
        low = _min_pair(snr)
        row = {"op": handle_node.get(tuple(o["handle"]), o["node"]), "handle": o["handle"],
               "instruction_id": o["instruction_id"], "event": o["event"],
               "output": o["output"], "elements": o["size"],
               "min_pairwise_snr": _jnum(low), "majority_score": _jnum(majority),
               "outlier_runs": [{"etdump": members[i][0]["etdump"], "device": devices[i],
                                 "score": _jnum(scores[i])} for i in out_runs],
               "outlier_devices": out_devs}
        if min_agreement is not None:
            below = [i for i, sc in enumerate(scores) if math.isnan(sc) or sc < min_agreement]
            row["below_min_agreement"] = [members[i][0]["etdump"] for i in below]
            gate += below
        rows.append(row)
        mats.append((low, snr, scores))
    enters = next(({"op": r["op"], "handle": r["handle"], "output": r["output"],
                    "outlier_devices": r["outlier_devices"]} for r in rows
                   if r["outlier_runs"]), None)
    order = sorted(range(len(rows)), key=lambda i: (_order(mats[i][0]), i))
    worst = None
    if order:
        i = order[0]
        r = rows[i]
        worst = {"op": r["op"], "handle": r["handle"], "output": r["output"],
                 "min_pairwise_snr": r["min_pairwise_snr"],
                 "snr": [[_jnum(float(v)) for v in line] for line in mats[i][1]],
                 "scores": [_jnum(sc) for sc in mats[i][2]]}
        if heatmap_dir:
            os.makedirs(heatmap_dir, exist_ok=True)
            stem = stem or f"{_safe(model)}_{_safe(inp)}"
            name = f"agreement_{stem}_op_{_safe(r['op'])}_{r['output']}.png"
            heatmap(os.path.join(heatmap_dir, name), mats[i][1],
                    f"run agreement {model} input {inp} op {r['op']} output {r['output']}")
            worst["heatmap"] = os.path.join(heatmap_dir, name)
    return [rows[i] for i in order], worst, enters, bool(gate)


def summarize(key, members, sums_by_output, margin, min_agreement, heatmap_dir=None,
              op_gate=False, stem=None):
    """The JSON summary of one (model, input) group. sums_by_output:
    {("output", k) or k: sums, ("op", key, j): sums}; `stem`: the group's
    part of the heat maps' names (heatmap_stems)."""
    model, inp = key
    stem = stem or f"{_safe(model)}_{_safe(inp)}"
    devices = [s["_device"] for s, _ in members]
    doc = {"model": model, "input": inp, "runs": len(members),
           "devices": sorted(set(devices)),
           "etdumps": [s["etdump"] for s, _ in members],
           "ops": op_distributions(members),
           "by_device": {}, "agreement": [], "outlier_devices": [], "differing_ops": {},
           "status": "ok"}
    # where the input label comes from; runs of unknown input may be of any
    src = [input_source(s, i) for s, i in members]
    doc["input_from"] = sorted({x for x in src if x})
    doc["input_unknown"] = [s["etdump"] for (s, _), x in zip(members, src) if x is None]
    for d in doc["devices"]:
        doc["by_device"][d] = {"runs": devices.count(d),
                               "ops": op_distributions([m for m in members
                                                        if m[0]["_device"] == d])}
    worst_devices = set()
    outs, subset = {}, {}
    for w, v in sums_by_output.items():
        if not isinstance(w, tuple) or w[0] == "output":
            k = w[1] if isinstance(w, tuple) else w
            outs[k] = v
            subset[k] = (w[2] if isinstance(w, tuple) and len(w) > 2 else
                         tuple(range(len(members))))
    for k in sorted(outs):
        snr = snr_matrix(outs[k])
        idx = subset[k]  # the rows' runs: all, or those that have output k
        sub = [members[i] for i in idx]
        devs = [devices[i] for i in idx]
        scores, majority, out_runs, out_devs = outliers(snr, devs, margin)
        entry = {"output": k, "snr": [[_jnum(float(v)) for v in row] for row in snr],
                 "scores": [_jnum(s) for s in scores], "majority_score": _jnum(majority),
                 "outlier_runs": [{"etdump": sub[i][0]["etdump"], "device": devs[i],
                                   "score": _jnum(scores[i])} for i in out_runs],
                 "outlier_devices": out_devs}
        if len(idx) < len(members):
            entry["etdumps"] = [m[0]["etdump"] for m in sub]
            entry["runs_without_output"] = [m[0]["etdump"] for i, m in enumerate(members)
                                            if i not in idx]
        if min_agreement is not None:
            low = [i for i, s in enumerate(scores) if math.isnan(s) or s < min_agreement]
            entry["below_min_agreement"] = [sub[i][0]["etdump"] for i in low]
            if low:
                doc["status"] = "gate_failed"
        if heatmap_dir:
            os.makedirs(heatmap_dir, exist_ok=True)
            name = f"agreement_{stem}_out{k}.png"
            heatmap(os.path.join(heatmap_dir, name), snr,
                    f"run agreement {model} input {inp} output {k}")
            entry["heatmap"] = os.path.join(heatmap_dir, name)
        doc["agreement"].append(entry)
        worst_devices.update(out_devs)
    doc["outlier_devices"] = sorted(worst_devices)
    ops = {w: v for w, v in sums_by_output.items() if isinstance(w, tuple) and w[0] == "op"}
    rows, worst, enters, below = op_agreement(key, members, ops, margin, min_agreement,
                                              heatmap_dir, stem)
    doc["op_agreement"] = rows
    doc["op_agreement_worst"] = worst
    doc["op_disagreement_enters"] = enters
    if op_gate and below:
        doc["status"] = "gate_failed"
    if min_agreement is not None:
        gaps = unchecked(members, sums_by_output, op_gate)
        if gaps:
            doc["not_checked"] = gaps
            if doc["status"] == "ok":  # a gate that compared nothing never passes
                doc["status"] = "not_checked"
    for d in doc["outlier_devices"]:
        doc["differing_ops"][d] = differing_ops(members, d, margin)
    return doc


def unchecked(members, sums, op_gate=False):
    """What --min-run-agreement could not check in a group: one entry per
    program output (and with op_gate, per op output of the first run) that
    has no matrix, {output or op, runs: the ETDumps lacking it, why}; a
    group of one run has nothing to agree with."""
    if len(members) < 2:
        return [{"output": None, "runs": [members[0][0]["etdump"]] if members else [],
                 "why": "the group has a single run: no other run to agree with"}]
    have = {(w[1] if isinstance(w, tuple) else w): (w[2] if isinstance(w, tuple) and
                                                        len(w) > 2 else None)
            for w in sums if not isinstance(w, tuple) or w[0] == "output"}
    out = []
    sizes = [m[1].get("outputs") or [] for m in members]
    for k in range(max(len(z) for z in sizes)):
        if k in have and have[k] is not None:  # a matrix over the runs that have it
            out.append({"output": k, "runs": [m[0]["etdump"] for i, m in enumerate(members)
                                              if i not in have[k]],
                        "why": "no value of this output in these runs (no debug buffer, or "
                               "another size): the matrix covers the other runs"})
            continue
        if k in have:
            continue
        lack = [m[0]["etdump"] for m, z in zip(members, sizes) if len(z) <= k or z[k] is None]
        why = ("no value of this output in these runs (no debug buffer, or not logged)" if lack
               else "its size differs between the runs, or its matrix could not be computed "
                    "(agreement_errors)")
        out.append({"output": k, "runs": lack, "why": why})
    if op_gate:
        lack = [m[0]["etdump"] for m in members if not m[1].get("op_outputs")]
        if lack:
            out.append({"output": None, "op": "every op", "runs": lack,
                        "why": "no intermediate outputs (no debug buffer): the ops' agreement "
                               "covers no run of them"})
    return out


def group_label(doc):
    return f"{doc['model']}/{doc['input'] or chr(39) * 2}"


def group_verdicts(a, docs):
    """The groups' part of the batch's summary line ("groups: 1 of 2
    gate_failed, 1 not_checked") and one line per failed or unchecked
    group naming it, the gate and its worst run with its device."""
    failed = [d for d in docs if d.get("status") == "gate_failed"]
    unsure = [d for d in docs if d.get("status") == "not_checked"]
    text = f"groups: {len(failed)} of {len(docs)} gate_failed"
    if unsure:
        text += f", {len(unsure)} not_checked"
    lines = []
    gate = (f"--min-run-agreement {a.min_run_agreement:g}" if a.min_run_agreement is not None
            else "--min-run-agreement")
    for d in failed:
        worst = None  # (order, etdump, what, score as written)
        etdumps = d.get("etdumps") or []
        cands = []
        for e in d.get("agreement") or ():
            low = set(e.get("below_min_agreement") or ())
            rows = e.get("etdumps") or etdumps  # (a matrix over some of the runs)
            cands += [(rows[i], f"output {e['output']}", sc)
                      for i, sc in enumerate(e.get("scores") or ()) if rows[i] in low]
        for r in (d.get("op_agreement") or ()) if getattr(a, "op_agreement_gate", False) else ():
            low = set(r.get("below_min_agreement") or ())
            scored = {o["etdump"]: o["score"] for o in r.get("outlier_runs") or ()}
            # (an op's row keeps the scores of its outliers only)
            cands += [(e, f"op {r['op']}" if e in scored else
                       f"op {r['op']} (its majority score {r.get('majority_score')} dB)",
                       scored.get(e)) for e in sorted(low)]
        for e, what, sc in cands:
            v = _order(float(sc)) if sc is not None else math.inf  # "nan" first
            if worst is None or v < worst[0]:
                worst = (v, e, what, sc)
        where = ""
        if worst:
            dev = (d.get("_devices") or {}).get(worst[1], "")
            score = worst[3]
            score = f"{score:.4g}" if isinstance(score, float) else str(score)
            where = (f": worst {worst[1]}" + (f" (device {dev})" if dev else "") +
                     f", {worst[2]}" + (f", agreement score {score} dB"
                                        if worst[3] is not None else ""))
        lines.append(f"etcompare.batch: group {group_label(d)} failed {gate}{where}")
    for d in unsure[:10]:
        gaps = d.get("not_checked") or []
        what = "; ".join(
            (f"output {g['output']}: " if g.get("output") is not None else
             f"{g['op']}: " if g.get("op") else "") + g["why"] + (f" ({', '.join(g['runs'][:5])}"
                                 f"{' ...' if len(g['runs']) > 5 else ''})" if g["runs"] else "")
            for g in gaps[:3])
        lines.append(f"etcompare.batch: warning: group {group_label(d)}: {gate} not checked: "
                     f"{what}")
    if len(unsure) > 10:
        lines.append(f"etcompare.batch: warning: {len(unsure) - 10} more groups not checked "
                     f"(their status in the group summary)")
    return text, lines


def write_lines(path, lines):
    """The whole file at once: a regular file through PATH.tmp and a rename
    (never half written); a device or FIFO (/dev/null) written in place,
    never replaced by a regular file."""
    import stat
    text = "".join(ln + "\n" for ln in lines)
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False
    if special:
        with open(path, "w") as f:
            f.write(text)
        return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def _safe(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(s)) or "none"


def json_line(doc):
    return json.dumps(doc, sort_keys=False, allow_nan=False)


# --- the batch's side (batch.py calls these) --------------------------------------------------

def add_arguments(p):
    p.add_argument("--group-summary", metavar="FILE",
                   help="write one JSON line per (model, bundled input) group: per-op SNR "
                        "distributions, run/device agreement, outliers (batch_groups.py)")
    p.add_argument("--device-from", type=int, metavar="N",
                   help="the device label is path component N of the ETDump's path as given "
                        "(typed, or the manifest's cell; not made absolute: 0 the first, -2 its "
                        "folder) when the manifest has no 'device' column")
    # numbers checked as the CLI checks its thresholds (batch.parse_args)
    p.add_argument("--outlier-margin", default="10", metavar="DB",
                   help="a run or op is an outlier more than DB below the majority "
                        "(default 10)")
    p.add_argument("--min-run-agreement", metavar="DB",
                   help="gate: every run's median pairwise SNR against the other runs of its "
                        "group must be at least DB")
    p.add_argument("--op-agreement-gate", action="store_true",
                   help="--min-run-agreement also gates on each op's intermediate output "
                        "(default: the program outputs only)")
    p.add_argument("--agreement-heatmaps", metavar="DIR",
                   help="write a PNG heat map of each agreement matrix into DIR")


def strip_private(lines, infos):
    """The lines without the private group data, which goes to `infos`."""
    out = []
    for ln in lines:
        if PRIVATE not in ln:
            out.append(ln)
            continue
        d = json.loads(ln)
        infos[run_key(d)] = d.pop(PRIVATE)
        out.append(json.dumps(d))
    return out


def _slice_task(items, runs):
    """The sums of a task's slices, or the message of what went wrong (never
    raises: one unreadable run must not end the batch)."""
    try:
        return agreement_items(runs, items)
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def pool_mapper(workers):
    import concurrent.futures

    def mapper(fn, args):
        if not args:
            return []
        with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as ex:
            return list(ex.map(fn, *zip(*args)))
    return mapper


def reduce_all(a, specs, infos, mapper):
    """All group summaries, written to a.group_summary sorted by (model, input)."""
    members = []
    for s in specs:
        info = infos.get(run_key(s))
        if info is None:
            continue  # an error line: not in any group
        s = dict(s, _device=device_of(s, a.device_from))
        members.append((s, info))
    groups = plan(members)
    keys = sorted(groups)
    tasks, owner = [], []
    for key in keys:
        for t in agreement_tasks(groups[key]):
            tasks.append(t)
            owner.append(key)
    results = mapper(_slice_task, tasks) if tasks else []
    sums, errors = {}, {}
    for key, t, r in zip(owner, tasks, results):  # in slice order: deterministic sums
        for i, (what, _lo, _hi) in enumerate(t[0]):
            if isinstance(r, str):
                errors.setdefault(key, {})[what] = r
                continue
            per = sums.setdefault(key, {})
            per[what] = r[i] if what not in per else _add(per[what], r[i])
    for key, per in errors.items():
        for w in per:
            sums.get(key, {}).pop(w, None)
    lines, checked, docs = [], False, []
    a.group_docs = docs
    stems = heatmap_stems(keys)
    for key in keys:
        doc = summarize(key, groups[key], sums.get(key, {}), a.outlier_margin,
                        a.min_run_agreement, a.agreement_heatmaps,
                        op_gate=getattr(a, "op_agreement_gate", False), stem=stems[key])
        doc["agreement_errors"] = [
            {"output": w[1], "message": m} if w[0] == "output" else
            {"op_key": w[1], "output": w[2], "message": m}
            for w, m in sorted(errors.get(key, {}).items(), key=lambda x: str(x[0]))]
        if doc["status"] == "gate_failed":
            a.group_gate_failed = True
        checked = checked or bool(doc["agreement"] or doc["op_agreement"])
        lines.append(json_line(doc))
        doc["_devices"] = {s["etdump"]: s["_device"] for s, _ in groups[key]}
        docs.append(doc)
    mixed = [(key, d) for key, d in zip(keys, docs) if d["runs"] > 1 and d["input_unknown"]]
    for key, d in mixed[:10]:
        n = len(d["input_unknown"])
        print(f"etcompare.batch: warning: group {group_label(d)}: the input of {n} of its "
              f"{d['runs']} runs is unknown (no bundled_input_index, no manifest input column, "
              f"no ETRecord reference outputs to pair its outputs with), e.g. "
              f"{d['input_unknown'][0]}: the group may mix runs of different inputs, and its "
              f"agreement compare them as repeats; give the manifest's input column",
              file=sys.stderr)
    if len(mixed) > 10:
        print(f"etcompare.batch: warning: {len(mixed) - 10} more groups may mix inputs "
              f"(input_unknown in the group summary)", file=sys.stderr)
    if a.min_run_agreement is not None and not checked:
        print("etcompare.batch: warning: --min-run-agreement checked nothing: every group "
              "(runs of the same ETRecord content, or manifest model, and bundled input) has a "
              "single run or no output present with the same size in all its runs",
              file=sys.stderr)
    write_lines(a.group_summary, lines)
