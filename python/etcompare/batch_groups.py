"""Group summaries of `python3 -m etcompare.batch` (issue 26, item 1): the
runs of a device farm grouped by (model, bundled input) and by device.

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
  differing_ops  for each outlier device, the first op (execution order)
              whose median cumulative SNR on that device is more than
              --outlier-margin dB below the median of the other devices'
              medians: where the device's error enters.

The Gram sums are computed in element slices on the workers (the process
pool or Dask): a slice task reads the group's runs one at a time and keeps
only its slice of each, so a worker holds one run plus runs x slice values
(the slice is the output size over the run count, at least 65,536 values);
the slices' sums are added in slice order, so the pool and Dask give
bit-identical matrices.
"""
import ctypes
import json
import math
import os

PRIVATE = "_farm"  # the per-run data a worker hands to the group reduction
MIN_SLICE = 65536


# --- per run (in the worker) -----------------------------------------------------------------

def run_info(insp, gap):
    """The group data of one analysed run: its Execute block's bundled input
    index, output sizes, and per op (numeric gap row) the cumulative and
    local SNR."""
    info = {"input": None, "block": None, "run": 0, "outputs": [], "ops": []}
    b = next((b for b in insp.event_blocks if b.name == "Execute" and b.run_count), None)
    if b is not None:
        info["block"] = b.index
        idx = b.bundled_input_index
        info["input"] = None if idx is None or idx < 0 else int(idx)
        info["outputs"] = [None if x is None else int(_flat(x).size) for x in b.run_output]
    if gap is not None:
        rows = gap.to_dict("records") if hasattr(gap, "to_dict") else gap
        for r in rows:
            node = (r.get("runtime_nodes") or ", ".join(r.get("aot_ops") or []) or
                    r.get("event_name") or f"instruction {r.get('instruction_id')}")
            info["ops"].append({"node": node,
                                "handle": [int(h) for h in (r.get("runtime_debug_handle") or ())],
                                "snr": _f(r.get("snr")), "local_snr": _f(r.get("local_snr"))})
    return info


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


def agreement_task(runs, output, lo, hi):
    """Slice [lo, hi) of program output `output` of each run (etdump,
    debug_buffer), read one run at a time: the slice's agreement sums."""
    import numpy as np
    from . import Inspector
    block = np.zeros((len(runs), hi - lo), dtype=np.float32)
    for i, (etdump, buf) in enumerate(runs):
        insp = Inspector(etdump_path=etdump, debug_buffer_path=buf)
        b = next(b for b in insp.event_blocks if b.name == "Execute" and b.run_count)
        block[i] = _flat(b.run_output[output])[lo:hi]
        del insp, b
    return sums_of_block(block)


def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3])


# --- the grouping and the summaries (in the main process) -------------------------------------

def device_of(spec, device_from):
    if spec.get("device"):
        return spec["device"]
    if device_from is not None:
        parts = os.path.normpath(spec["etdump"]).split(os.sep)
        try:
            return parts[device_from]
        except IndexError:
            return ""
    return ""


def model_of(spec):
    if spec.get("model"):
        return spec["model"]
    return os.path.basename(spec["etrecord"]) if spec.get("etrecord") else ""


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
    """(model, input) groups of the analysed runs: {key: [(spec, info)]}."""
    groups = {}
    for spec, info in specs_infos:
        groups.setdefault((model_of(spec), input_of(spec, info)), []).append((spec, info))
    return groups


def agreement_tasks(members):
    """The slice tasks of each program output of a group: [(output, runs, lo, hi)]."""
    sizes = [m[1].get("outputs") or [] for m in members]
    if len(members) < 2 or not sizes[0]:
        return []
    tasks = []
    runs = [(s["etdump"], s.get("debug_buffer")) for s, _ in members]
    for k, size in enumerate(sizes[0]):
        if size is None or any(len(z) <= k or z[k] != size for z in sizes):
            continue
        step = max(MIN_SLICE, -(-size // len(members)))
        for lo in range(0, size, step):
            tasks.append((k, runs, lo, min(size, lo + step)))
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
    L.check(dll.etc_plot_heatmap(path.encode(), m.ctypes.data, m.shape[0], m.shape[1],
                                 title.encode(), ctypes.byref(err)), err)


def summarize(key, members, sums_by_output, margin, min_agreement, heatmap_dir=None):
    """The JSON summary of one (model, input) group."""
    model, inp = key
    devices = [s["_device"] for s, _ in members]
    doc = {"model": model, "input": inp, "runs": len(members),
           "devices": sorted(set(devices)),
           "etdumps": [s["etdump"] for s, _ in members],
           "ops": op_distributions(members),
           "by_device": {}, "agreement": [], "outlier_devices": [], "differing_ops": {},
           "status": "ok"}
    for d in doc["devices"]:
        doc["by_device"][d] = {"runs": devices.count(d),
                               "ops": op_distributions([m for m in members
                                                        if m[0]["_device"] == d])}
    worst_devices = set()
    for k in sorted(sums_by_output):
        snr = snr_matrix(sums_by_output[k])
        scores, majority, out_runs, out_devs = outliers(snr, devices, margin)
        entry = {"output": k, "snr": [[_jnum(float(v)) for v in row] for row in snr],
                 "scores": [_jnum(s) for s in scores], "majority_score": _jnum(majority),
                 "outlier_runs": [{"etdump": members[i][0]["etdump"], "device": devices[i],
                                   "score": _jnum(scores[i])} for i in out_runs],
                 "outlier_devices": out_devs}
        if min_agreement is not None:
            low = [i for i, s in enumerate(scores) if math.isnan(s) or s < min_agreement]
            entry["below_min_agreement"] = [members[i][0]["etdump"] for i in low]
            if low:
                doc["status"] = "gate_failed"
        if heatmap_dir:
            os.makedirs(heatmap_dir, exist_ok=True)
            name = f"agreement_{_safe(model)}_{_safe(inp)}_out{k}.png"
            heatmap(os.path.join(heatmap_dir, name), snr,
                    f"run agreement {model} input {inp} output {k}")
            entry["heatmap"] = os.path.join(heatmap_dir, name)
        doc["agreement"].append(entry)
        worst_devices.update(out_devs)
    doc["outlier_devices"] = sorted(worst_devices)
    for d in doc["outlier_devices"]:
        doc["differing_ops"][d] = differing_ops(members, d, margin)
    return doc


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
                   help="the device label is path component N of the ETDump (0 the first, "
                        "-2 its folder) when the manifest has no 'device' column")
    p.add_argument("--outlier-margin", type=float, default=10.0, metavar="DB",
                   help="a run or op is an outlier more than DB below the majority "
                        "(default 10)")
    p.add_argument("--min-run-agreement", type=float, metavar="DB",
                   help="gate: every run's median pairwise SNR against the other runs of its "
                        "group must be at least DB")
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
        infos[d["etdump"]] = d.pop(PRIVATE)
        out.append(json.dumps(d))
    return out


def _slice_task(output, runs, lo, hi):
    """A slice's sums, or the message of what went wrong (never raises: one
    unreadable run must not end the batch)."""
    try:
        return agreement_task(runs, output, lo, hi)
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
        info = infos.get(s["etdump"])
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
        if isinstance(r, str):
            errors.setdefault(key, {})[t[0]] = r
            continue
        per = sums.setdefault(key, {})
        per[t[0]] = r if t[0] not in per else _add(per[t[0]], r)
    for key, per in errors.items():
        for k in per:
            sums.get(key, {}).pop(k, None)
    lines = []
    for key in keys:
        doc = summarize(key, groups[key], sums.get(key, {}), a.outlier_margin,
                        a.min_run_agreement, a.agreement_heatmaps)
        doc["agreement_errors"] = [{"output": k, "message": m}
                                   for k, m in sorted(errors.get(key, {}).items())]
        if doc["status"] == "gate_failed":
            a.group_gate_failed = True
        lines.append(json_line(doc))
    tmp = a.group_summary + ".tmp"
    with open(tmp, "w") as f:
        f.write("".join(ln + "\n" for ln in lines))
    os.replace(tmp, a.group_summary)
