"""The Python package (python/etcompare, issue 16) against the CLI and the
library: the facade's blocks, events, perf stats, start times, debug data
and run outputs equal the CLI's --json on every fixture; its tables and
TSVs equal the CLI's and the upstream Inspector's goldens byte for byte;
tensors are zero-copy read-only views of the mapped debug buffer that
outlive the Inspector; errors are etcompare.Error with the library's
message; the ETRecord link, get_exported_program, find_total_for_module,
compare_results and Inspector.compare against independent float64 values.

Runs under Debian's /usr/bin/python3 with numpy (pandas for to_dataframe).
The library is the libetcompare.so beside $ETCOMPARE; when it was built with
AddressSanitizer the test re-runs itself with the ASan runtime preloaded.
"""
import gc
import io
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings

SRC = os.environ["ETC_SRC"]
ETC = os.environ["ETCOMPARE"]
DATA = os.path.join(SRC, "tests", "data")
GOLD = os.path.join(SRC, "golden")
PYDIR = os.path.join(SRC, "python")
LIB = os.path.join(os.path.dirname(os.path.abspath(ETC)), "libetcompare.so")
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def setup():
    """Points the package at the library of this build (ETCOMPARE_LIBRARY),
    re-executing under the ASan runtime when the library needs it, and
    returns the imported package."""
    if os.path.exists(LIB):
        os.environ["ETCOMPARE_LIBRARY"] = LIB
        ldd = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
        asan = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines()
                if "libasan" in ln and "=>" in ln]
        if asan and "ETC_ASAN_REEXEC" not in os.environ:
            env = dict(os.environ, LD_PRELOAD=asan[0], ETC_ASAN_REEXEC="1",
                       # the interpreter's own allocations are not leaks of ours:
                       # detect_leaks=0 last, so that it wins over the caller's
                       ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
            print(f"note: the library is built with AddressSanitizer: re-running with "
                  f"LD_PRELOAD={asan[0]}")
            sys.stdout.flush()
            os.execve(sys.executable, [sys.executable] + sys.argv, env)
    sys.path.insert(0, PYDIR)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [PYDIR] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(SRC, "tests"))
    import etcompare
    return etcompare


def check(name, cond, detail=""):
    """common.check with the detail cut to 600 characters."""
    return common.check(name, cond, str(detail)[:600])


def __getattr__(name):
    """test_python.passed / .failed: the live counters of common.check()."""
    if name in ("passed", "failed"):
        return getattr(common, name)
    raise AttributeError(name)


def cli(*args):
    p = subprocess.run([ETC, *args], capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def cli_json(tmp, args):
    out = os.path.join(tmp, "cli.json")
    if os.path.exists(out):
        os.remove(out)
    rc, _o, err = cli(*args, "--no-table", "--json", out, "--max-values", "1000000")
    if rc not in (0, 1):
        return None, err
    with open(out) as f:
        return json.load(f), err


def jnum(v):
    return float(v) if isinstance(v, str) else v


def same(a, b):
    """Numbers equal exactly (NaN equal to NaN); JSON strings for non-finite."""
    a, b = jnum(a), jnum(b)
    if isinstance(a, float) and isinstance(b, (int, float)) and math.isnan(a):
        return math.isnan(b)
    return a == b


def flat(x):
    import numpy as np
    return np.asarray(x).reshape(-1).tolist()


def value_diff(got, want, path):
    """A facade value (array, list, scalar) against the report's value."""
    kind = want["type"]
    if kind in ("Tensor", "TensorList"):
        arrays = got if kind == "TensorList" else [got]
        if not isinstance(arrays, list) or len(arrays) != len(want["tensors"]):
            return [f"{path}: {len(want['tensors'])} tensors expected, got {type(got)}"]
        errs = []
        for k, (arr, t) in enumerate(zip(arrays, want["tensors"])):
            if not t["has_data"]:
                if arr is not None:
                    errs.append(f"{path}[{k}]: no data expected")
                continue
            if arr is None or list(arr.shape) != t["shape"]:
                errs.append(f"{path}[{k}]: shape {None if arr is None else arr.shape} vs "
                            f"{t['shape']}")
                continue
            vals = flat(arr)
            if not t["numel"]:  # an empty tensor: no values to list
                if vals or arr.dtype.name != t["dtype"]:
                    errs.append(f"{path}[{k}]: an empty {t['dtype']} array expected, got {arr!r}")
                continue
            if len(vals) != len(t["values"]) or not all(same(x, y) for x, y in
                                                        zip(t["values"], vals)):
                errs.append(f"{path}[{k}]: values differ: {vals[:4]} vs {t['values'][:4]}")
        return errs
    exp = {"Int": "int", "Bool": "bool", "Double": "double", "Float": "float"}.get(kind)
    if exp is None:
        return [] if got is None else [f"{path}: None expected for {kind}"]
    wv = want.get("value")
    return [] if same(got, wv) else [f"{path}: {got!r} vs {wv!r}"]


def facade_diff(insp, rep):
    """Every difference between the facade and the CLI's --json report."""
    errs = []
    blocks = insp.event_blocks
    if len(blocks) != len(rep["blocks"]):
        return [f"{len(blocks)} blocks vs {len(rep['blocks'])}"]
    for b, rb in zip(blocks, rep["blocks"]):
        where = f"block {rb['name']}"
        want_index = -1 if rb["bundled_input_index"] is None else rb["bundled_input_index"]
        if (b.name, b.bundled_input_index, b.runs) != (rb["name"], want_index, rb["runs"]):
            errs.append(f"{where}: {(b.name, b.bundled_input_index, b.runs)}")
        if len(b.events) != len(rb["events"]):
            errs.append(f"{where}: {len(b.events)} events vs {len(rb['events'])}")
            continue
        for e, re_ in zip(b.events, rb["events"]):
            w = f"{where} event {re_['index']} {re_['event_name']}"
            if e.name != re_["event_name"]:
                errs.append(f"{w}: name {e.name!r}")
            for k in ("delegate_debug_identifier", "is_delegated_op", "delegate_backend_name",
                      "debug_handles", "num_outputs", "op_types"):
                want = re_.get(k)
                if k == "num_outputs" and want is None:
                    want = 1  # the CLI's null (no map entry) is upstream's default 1
                if getattr(e, k) != want:
                    errs.append(f"{w}: {k} {getattr(e, k)!r} vs {want!r}")
            if re_.get("raw") is None:
                if e.perf_data is not None:
                    errs.append(f"{w}: perf_data without raw")
            else:
                p = e.perf_data
                if p is None or len(p.raw) != len(re_["raw"]) or \
                        not all(same(x, y) for x, y in zip(re_["raw"], p.raw)):
                    errs.append(f"{w}: raw {p and p.raw} vs {re_['raw']}")
                for s in ("p10", "p50", "p90", "avg", "min", "max"):
                    if p is None or not same(re_[s], getattr(p, s)):
                        errs.append(f"{w}: {s} {p and getattr(p, s)} vs {re_[s]}")
                if e.start_time != re_.get("start_time"):
                    errs.append(f"{w}: start_time {e.start_time} vs {re_.get('start_time')}")
            st = {k: v or "" for k, v in e.stack_traces.items()}
            if st != re_.get("stack_traces", {}):
                errs.append(f"{w}: stack_traces")
            mh = {k: [{"key": a, "path": pth, "type": t} for a, (pth, t) in (v or {}).items()]
                  for k, v in e.module_hierarchy.items()}
            if mh != re_.get("module_hierarchy", {}):
                errs.append(f"{w}: module_hierarchy {mh} vs {re_.get('module_hierarchy')}")
            dd = re_.get("debug_data") or []
            if len(e.debug_data) != len(dd):
                errs.append(f"{w}: {len(e.debug_data)} debug values vs {len(dd)}")
            else:
                for k, (got, want) in enumerate(zip(e.debug_data, dd)):
                    errs += value_diff(got, want, f"{w} debug_data[{k}]")
        for k, po in enumerate(rb["program_outputs"]):
            got = b.run_outputs(k)
            if len(got) != len(po["outputs"]):
                errs.append(f"{where} run {k}: {len(got)} outputs vs {len(po['outputs'])}")
                continue
            for j, (g, want) in enumerate(zip(got, po["outputs"])):
                errs += value_diff(g, want, f"{where} run {k} output {j}")
        if rb["program_outputs"] and b.run_output is not None:
            if len(b.run_output) != len(rb["program_outputs"][0]["outputs"]):
                errs.append(f"{where}: run_output is not run 0's outputs")
    return errs


# --- fixtures ----------------------------------------------------------------------------------

def fixtures(tmp):
    """(name, etdump, debug buffer or None, expected error or None) for
    tests/data and every tests/fixtures/*.json (built with flatc)."""
    import test_fixtures as TF
    out = [("tutorial", os.path.join(DATA, "tutorial.etdp"), None, False),
           ("runs5_ops12", os.path.join(DATA, "runs5_ops12.etdp"),
            os.path.join(DATA, "runs5_ops12.bin"), False),
           ("misaligned", os.path.join(DATA, "misaligned.etdp"),
            os.path.join(DATA, "misaligned_debug.bin"), False)]
    for fx in TF.fixture_paths():
        base = os.path.basename(fx)[:-len(".json")]
        with open(TF.sidecar_path(fx)) as f:
            side = json.load(f)
        etdp = TF.build_etdump(fx, tmp)
        buf = None
        if side.get("buffer"):
            buf = os.path.join(tmp, base + ".debug.bin")
            TF.write_buffer(side["buffer"], side.get("buffer_size"), buf)
        out.append((base, etdp, buf, side.get("report") is False))
    return out


def test_fixtures(E, tmp):
    for name, etdp, buf, bad in fixtures(tmp):
        args = ["--etdump", etdp] + (["--debug_buffer", buf] if buf else [])
        rep, err = cli_json(tmp, args)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                insp = E.Inspector(etdump_path=etdp, debug_buffer_path=buf)
        except E.Error as e:
            check(f"{name}: the facade raises the CLI's error", rep is None and str(e) in err,
                  f"{e} / {err}")
            continue
        if rep is None:
            check(f"{name}: the CLI rejects it but the facade does not", False, err)
            continue
        errs = facade_diff(insp, rep)
        check(f"{name}: blocks, events, perf stats, start times, debug data and run outputs "
              f"equal the CLI's", not errs, "; ".join(errs[:6]))
        rc, table, _e = cli(*args)
        got = io.StringIO()
        insp.print_data_tabular(file=got)
        check(f"{name}: print_data_tabular is the CLI's table", got.getvalue() == table)
        tsv = os.path.join(tmp, "cli.tsv")
        cli(*args, "--no-table", "--tsv", tsv)
        mine = os.path.join(tmp, "py.tsv")
        insp.save_data_to_tsv(mine)
        with open(tsv, "rb") as f, open(mine, "rb") as g:
            check(f"{name}: save_data_to_tsv is the CLI's TSV", f.read() == g.read())
        check(f"{name}: warnings are the library's",
              all(w in err for w in insp.warnings))


def test_goldens(E, tmp):
    """The upstream Inspector's own print_data_tabular / save_data_to_tsv."""
    for name, etdp, buf in (("tutorial", "tutorial.etdp", None),
                            ("runs5_ops12", "runs5_ops12.etdp", "runs5_ops12.bin"),
                            ("misaligned", "misaligned.etdp", "misaligned_debug.bin")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            insp = E.Inspector(etdump_path=os.path.join(DATA, etdp),
                               debug_buffer_path=buf and os.path.join(DATA, buf))
        out = io.StringIO()
        insp.print_data_tabular(file=out)
        with open(os.path.join(GOLD, name + ".table.txt"), encoding="utf-8") as f:
            check(f"golden: {name} print_data_tabular equals upstream's table",
                  out.getvalue() == f.read())
        path = os.path.join(tmp, name + ".tsv")
        insp.save_data_to_tsv(path)
        buf2 = io.StringIO()
        insp.save_data_to_tsv(buf2)
        with open(os.path.join(GOLD, name + ".tsv"), "rb") as f:
            want = f.read()
        with open(path, "rb") as f:
            check(f"golden: {name} save_data_to_tsv equals upstream's TSV", f.read() == want)
        check(f"golden: {name} save_data_to_tsv to an open file",
              buf2.getvalue().encode() == want)


def mapped_ranges(path):
    return [(lo, hi) for lo, hi, _, _ in common.file_maps(path)]


def test_zero_copy(E, tmp):
    import numpy as np
    etdp, bufp = os.path.join(DATA, "runs5_ops12.etdp"), os.path.join(DATA, "runs5_ops12.bin")
    rep, _ = cli_json(tmp, ["--etdump", etdp, "--debug_buffer", bufp])
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=bufp)
    ev = insp.event_blocks[1].events[1]
    arr = ev.debug_data[0]
    t = rep["blocks"][1]["events"][1]["debug_data"][0]["tensors"][0]
    with open(bufp, "rb") as f:
        f.seek(t["offset"])
        want = struct.unpack(f"<{t['numel']}f", f.read(4 * t["numel"]))
    check("zero copy: the array holds the buffer's values",
          isinstance(arr, np.ndarray) and arr.dtype == np.float32 and
          flat(arr) == list(want) and list(arr.shape) == t["shape"])
    gc.collect()  # earlier tests' Inspectors of the same file
    ranges = mapped_ranges(bufp)
    addr = arr.__array_interface__["data"][0]
    check("zero copy: the array's data is inside the debug buffer's mapping",
          any(lo <= addr and addr + arr.nbytes <= hi for lo, hi in ranges),
          f"{addr:#x} {[(hex(a), hex(b)) for a, b in ranges]}")
    base, chain = arr, []
    while base is not None and not hasattr(base, "_owner"):
        chain.append(type(base).__name__)
        nxt = getattr(base, "base", None)
        base = nxt if nxt is not None else getattr(base, "obj", None)
    check("zero copy: arr.base chain ends at the owner of the library objects",
          base is not None and base._owner is insp._h, chain)
    check("zero copy: read-only", not arr.flags.writeable)
    try:
        arr[0] = 1.0
        ro = False
    except ValueError:
        ro = True
    try:
        arr.flags.writeable = True
        ro = False
    except ValueError:
        pass
    check("zero copy: writing or making it writeable raises ValueError", ro)
    out0 = insp.event_blocks[1].run_output[0]
    del insp, ev
    gc.collect()
    check("zero copy: the data outlives the Inspector object (mapping kept, values intact)",
          mapped_ranges(bufp) == ranges and flat(arr) == list(want) and
          out0.shape == (1, 6), (mapped_ranges(bufp), ranges, flat(arr)[:3], want[:3], out0.shape))
    del arr, base, out0
    gc.collect()
    check("zero copy: the mapping goes with the last array", mapped_ranges(bufp) == [],
          mapped_ranges(bufp))


def test_errors_and_options(E, tmp):
    bad = os.path.join(tmp, "corrupt.etdp")
    with open(os.path.join(DATA, "runs5_ops12.etdp"), "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[:300])
    rc, _o, err = cli("--etdump", bad)
    try:
        E.Inspector(etdump_path=bad)
        check("errors: a corrupt ETDump raises", False)
    except E.Error as e:
        check("errors: a corrupt ETDump raises etcompare.Error (a ValueError) with the CLI's "
              "message: file and byte offset",
              isinstance(e, ValueError) and str(e) in err and bad in str(e) and "byte" in str(e)
              and e.file == bad and e.offset >= 0 and e.status == "format error",
              f"{e!r} {e.file} {e.offset} / {err}")
    for kw, what in (({}, "neither path nor data"),
                     ({"etdump_path": bad, "etdump_data": b"x"}, "both path and data"),
                     ({"etdump_path": os.path.join(tmp, "missing.etdp")}, "missing file")):
        try:
            E.Inspector(**kw)
            check(f"errors: {what} raises", False)
        except E.Error as e:
            check(f"errors: {what} raises etcompare.Error", isinstance(e, ValueError) and
                  (what != "missing file" or "missing.etdp" in str(e)), e)
    try:
        E.Inspector(etdump_path=os.path.join(DATA, "tutorial.etdp"), source_time_scale="cycles",
                    debug_buffer_path=os.path.join(DATA, "runs5_ops12.bin"),
                    target_time_scale="ms")
        check("errors: cycles against ms raises", False)
    except E.Error as e:
        check("errors: cycles against ms raises etcompare.Error", "cycles" in str(e), e)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        insp = E.Inspector(etdump_data=data)
        check("etdump_data: warns that there is no debug buffer, as upstream",
              any("Output Buffer not found" in str(x.message) for x in w))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = E.Inspector(etdump_path=os.path.join(DATA, "runs5_ops12.etdp"))
    a, b = io.StringIO(), io.StringIO()
    insp.print_data_tabular(file=a)
    ref.print_data_tabular(file=b)
    check("etdump_data: the same table as etdump_path", a.getvalue() == b.getvalue())
    # time scales: strings and the enum, against the CLI
    tut = os.path.join(DATA, "tutorial.etdp")
    rep, _ = cli_json(tmp, ["--etdump", tut, "--target_time_scale", "us"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = E.Inspector(etdump_path=tut, target_time_scale="us")
        t = E.Inspector(etdump_path=tut, target_time_scale=E.TimeScale.US)
    errs = facade_diff(s, rep) + facade_diff(t, rep)
    check("time scale: 'us' and TimeScale.US give the CLI's --target_time_scale us", not errs,
          errs[:3])
    check("TimeScale has upstream's members",
          [m.name for m in E.TimeScale] == ["NS", "US", "MS", "S", "CYCLES"] and
          E.TimeScale.MS.value == "ms")
    # to_dataframe: upstream's columns
    try:
        import pandas  # noqa: F401
    except ImportError:
        print("skip to_dataframe: pandas is not importable")
        return
    df = ref.to_dataframe()
    cols = ["event_block_name", "event_name", "raw", "p10 (ms)", "p50 (ms)", "p90 (ms)",
            "avg (ms)", "min (ms)", "max (ms)", "op_types", "delegate_debug_identifier",
            "stack_traces", "module_hierarchy", "is_delegated_op", "delegate_backend_name",
            "debug_data", "start_time"]
    evs = [e for b in ref.event_blocks for e in b.events]
    check("to_dataframe: upstream's columns, one row per event",
          list(df.columns) == cols and len(df) == len(evs), list(df.columns))
    check("to_dataframe: values are the events'",
          all(df["p50 (ms)"][i] == e.perf_data.p50 and df["raw"][i] == e.perf_data.raw and
              df["event_name"][i] == e.name for i, e in enumerate(evs)))
    check("to_dataframe(include_units=False): bare column names",
          "p50" in ref.to_dataframe(include_units=False).columns)


def test_etrecord(E, tmp):
    import test_numgap as NG
    rec = NG.chain_etrecord(tmp)
    dev = NG.chain(True)
    etdp, dbg = NG.chain_dump(tmp, "dev", dev)
    args = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec]
    rep, err = cli_json(tmp, args)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
    errs = facade_diff(insp, rep) if rep else [err]
    check("etrecord: op types, debug handles, stack traces, module hierarchy, num_outputs "
          "equal the CLI's", not errs, errs[:5])
    ev = next(e for e in insp.event_blocks[0].events if e.name == "native_call_relu.out" and
              e.debug_handles == [10])
    check("etrecord: an event's upstream fields",
          ev.op_types == ["aten.relu.default"] and
          ev.stack_traces["op9"].endswith("x = self.layer9(x)\n") and
          ev.module_hierarchy["op9"]["L__self___layer9"] ==
          ("body.layer9", "torch.nn.modules.linear.Linear") and ev.num_outputs == 1,
          ev)
    rc, out, _e = cli(*args, "--no-table", "--module", "L__self___layer3")
    total = insp.find_total_for_module("L__self___layer3")
    check("etrecord: find_total_for_module equals the CLI's --module",
          rc == 0 and f"= {total!r} ms" in out and total > 0, f"{total!r} {out}")
    want = sum(e.perf_data.avg for e in insp.event_blocks[0].events
               if e.name != "OPERATOR_CALL" and e.perf_data and
               any("L__self___body" in k for h in e.module_hierarchy.values() for k in (h or {})))
    check("etrecord: find_total_for_module is upstream's sum",
          math.isclose(insp.find_total_for_module("L__self___body"), want, rel_tol=1e-12))
    g = insp.get_exported_program()
    rc, out, _e = cli("--etrecord", rec, "--graph")
    check("get_exported_program: describe() is the CLI's --graph", rc == 0 and
          g.describe() == out, g.describe()[:300] + " // " + out[:300])
    check("get_exported_program: str() is upstream's ExportedProgram printout",
          str(g).startswith("ExportedProgram:\n    class GraphModule(torch.nn.Module):\n"
                            "        def forward(self") and "\nGraph signature: " in str(g),
          str(g)[:300])
    old = E.ETRecord(os.path.join(DATA, "etrecord_2023.bin")).get_exported_program()
    fx = [(n.name, n.op, str(n.target)) for n in old.graph_module.graph.nodes]
    check("get_exported_program: the 2023 layout as torch.fx's nodes and ExportedProgram's "
          "printout", fx == [("arg0_1", "placeholder", "arg0_1"),
                             ("arg1_1", "placeholder", "arg1_1"),
                             ("aten_mul_tensor", "call_function", "aten.mul.Tensor"),
                             ("output", "output", "output")] and
          str(old).split("\n")[2:5:2] == [
              '        def forward(self, arg0_1: "f32[3, 2]", arg1_1: "f32[3, 2]"):',
              '            aten_mul_tensor: "f32[3, 2]" = executorch_exir_dialects_edge__ops_aten_mul'
              '_Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None'], (fx, str(old)[:400]))
    ops = [n for n in g.nodes if n.debug_handle is not None]
    check("get_exported_program: nodes with name, op, inputs, handle, stack trace, module",
          [n.debug_handle for n in ops] == list(range(1, NG.NOPS + 1)) and
          ops[9].name == "op9" and ops[9].op == "call_function" and ops[9].target == NG.op_name(9) and "op8" in ops[9].inputs and
          ops[9].stack_trace.endswith("x = self.layer9(x)\n") and ops[9].module == "body.layer9",
          [repr(n) for n in ops[:2]])
    no_rec = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        check("get_exported_program: None without an ETRecord, with upstream's warning",
              no_rec.get_exported_program() is None and w)


def test_compare(E, tmp):
    import numpy as np
    import test_accuracy as A
    etdp, dbg, rec = A.two_run_fixture(tmp, "two", A.A0, A.A1)
    insp = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
    b = insp.event_blocks[0]
    ref = b.reference_output
    check("reference_output: upstream's reference_outputs[forward][-1] for the runtime's -1",
          b.bundled_input_index == -1 and isinstance(ref, list) and len(ref) == 1 and
          flat(ref[0]) == A.R1 and ref[0].shape == (2, 3), ref)
    res = E.compare_results([np.array(A.R0), np.array(A.R1)],
                            [b.run_outputs(0)[0], b.run_outputs(1)[0]])
    exp = [A.metrics(A.R0, A.A0), A.metrics(A.R1, A.A1)]
    check("compare_results: upstream's dict shape",
          sorted(res) == ["cosine_similarity", "mse", "snr"] and
          all(len(v) == 2 for v in res.values()), res)
    check("compare_results: full-precision values equal float64",
          all(A.close(res["snr"][k], exp[k]["snr"]) and A.close(res["mse"][k], exp[k]["mse"]) and
              A.close(res["cosine_similarity"][k], exp[k]["cosine"]) for k in range(2)),
          (res, exp))
    same_ = E.compare_results(np.array(A.R0), np.array(A.R0))
    check("compare_results: identical tensors give SNR inf, MSE 0, cosine 1",
          same_ == {"snr": [math.inf], "mse": [0.0], "cosine_similarity": [1.0]}, same_)
    r = insp.compare(min_snr=60)
    check("compare: passes at 60 dB with rows, worst and metrics equal float64",
          r.passed and bool(r) and len(r.rows) == 2 and r.failures == 0 and
          A.close(r.rows[0]["snr"], exp[0]["snr"]) and
          r.worst["snr"] == min(exp[0]["snr"], exp[1]["snr"]) or
          A.close(r.worst["snr"], min(exp[0]["snr"], exp[1]["snr"])), r.rows)
    r = insp.compare(min_snr=200)
    check("compare: fails at 200 dB, str() is the CLI's grid",
          not r.passed and r.failures == 2 and "FAIL" in str(r), str(r))
    rc, out, _e = cli("--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--no-table",
                      "--compare", "--min-snr", "200")
    check("compare: the grid equals the CLI's --compare output", str(r) in out,
          out[:400] + " // " + str(r)[:400])
    # the README's three-line pytest test
    def test_model_accuracy():
        insp = E.Inspector(etdump_path=etdp, debug_buffer_path=dbg, etrecord=rec)
        assert insp.compare(min_snr=60).passed
    test_model_accuracy()
    check("compare: the three-line pytest accuracy test passes", True)
    npz = os.path.join(tmp, "refs.npz")
    np.savez(npz, **{"0.0": np.array(A.R0, np.float32).reshape(2, 3),
                     "1.0": np.array(A.R1, np.float32).reshape(2, 3)})
    r2 = insp.compare(reference=npz, min_snr=60)
    check("compare: an .npz reference gives the same rows",
          r2.passed and [x["snr"] for x in r2.rows] == [x["snr"] for x in
                                                       insp.compare(min_snr=60).rows])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nobuf = E.Inspector(etdump_path=etdp)
        nobuf.compare()
        check("compare: without a debug buffer raises", False)
    except E.Error as e:
        check("compare: without a debug buffer raises etcompare.Error naming it",
              "debug buffer" in str(e), e)


def test_converter(E, tmp):
    """delegate_time_scale_converter applies to delegated events only, on
    their raw start and end times, as upstream."""
    import test_fixtures as TF
    etdp = TF.build_etdump(os.path.join(SRC, "tests", "fixtures", "delegate.json"), tmp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = E.Inspector(etdump_path=etdp)
        conv = E.Inspector(etdump_path=etdp,
                           delegate_time_scale_converter=lambda name, t: t * 2 if name == "7"
                           else t / 1000)
    p = {e.name: e for e in plain.event_blocks[0].events}
    c = {e.name: e for e in conv.event_blocks[0].events}
    check("converter: delegated events use it on start and end times (upstream)",
          c["7"].perf_data.raw == [3000, 4000] and
          c["conv_1"].perf_data.raw == [3400 / 1000 - 3000 / 1000, 3500 / 1000 - 3000 / 1000] and
          c["7"].perf_data.p50 == 3500 and c["7"].perf_data.max == 4000,
          (c["7"].perf_data.raw, c["conv_1"].perf_data.raw))
    check("converter: other events keep the time scale",
          c["native_call_relu.out"].perf_data.raw == p["native_call_relu.out"].perf_data.raw ==
          [0.25, 0.5] and c["DELEGATE_CALL"].perf_data.raw == p["DELEGATE_CALL"].perf_data.raw)
    check("delegate: upstream's identifiers, names and metadata (bytes)",
          p["7"].delegate_debug_identifier == 7 and p["7"].is_delegated_op and
          p["conv_1"].delegate_debug_identifier == "conv_1" and
          p["fused_add"].name == "fused_add" and
          p["7"].delegate_debug_metadatas == [b"\x01\x02\x03", b"\x04\x05"],
          p["7"].delegate_debug_metadatas)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = E.Inspector(etdump_path=etdp, delegate_metadata_parser=lambda m: {"n": len(m)})
    q = {e.name: e for e in parsed.event_blocks[0].events}
    check("delegate_metadata_parser: parses delegated events' metadata, as upstream",
          q["7"].delegate_debug_metadatas == {"n": 2} and
          q["7"].raw_delegate_debug_metadatas == [b"\x01\x02\x03", b"\x04\x05"] and
          q["DELEGATE_CALL"].delegate_debug_metadatas == [])


def test_pip(E, tmp):
    """pip install ./python works offline: no index, default build isolation."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        print("skip pip install: python3 -m pip is not available (Debian python3-pip)")
        return
    target = os.path.join(tmp, "site")
    src = os.path.join(tmp, "src")
    shutil.copytree(PYDIR, src, ignore=shutil.ignore_patterns("__pycache__", "build"))
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                        "--disable-pip-version-check", "--target", target, src],
                       capture_output=True, text=True)
    check("pip install ./python: offline, no build isolation needed", p.returncode == 0,
          p.stdout[-500:] + p.stderr[-800:])
    code = "import etcompare, sys; print(etcompare.__file__); print(etcompare.Inspector)"
    q = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=target), cwd=tmp)
    check("pip install ./python: the installed package imports and loads the library",
          q.returncode == 0 and q.stdout.startswith(os.path.join(target, "etcompare")) and
          os.path.exists(os.path.join(target, "bin", "etcompare-batch")), q.stdout + q.stderr)


def test_loading(E, tmp):
    check("library: found through ETCOMPARE_LIBRARY",
          os.environ.get("ETCOMPARE_LIBRARY") in (None, E.library_path), E.library_path)
    code = "import etcompare; print(etcompare.library_path)"
    env = dict(os.environ, ETCOMPARE_LIBRARY=os.path.join(tmp, "nowhere.so"))
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    check("library: a wrong ETCOMPARE_LIBRARY is an ImportError naming it",
          p.returncode != 0 and "ImportError" in p.stderr and "nowhere.so" in p.stderr,
          p.stderr[-300:])
    if not os.path.exists(LIB):
        print(f"skip library lookup: no {LIB}")
        return
    pkg = os.path.join(tmp, "site", "etcompare")
    shutil.copytree(os.path.join(PYDIR, "etcompare"), pkg)
    shutil.copy(LIB, os.path.join(pkg, "libetcompare.so"))
    env = {k: v for k, v in os.environ.items() if k != "ETCOMPARE_LIBRARY"}
    env["PYTHONPATH"] = os.path.join(tmp, "site")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    check("library: found in the package directory",
          p.returncode == 0 and p.stdout.strip() == os.path.join(pkg, "libetcompare.so"),
          p.stdout + p.stderr[-300:])
    if os.path.exists(os.path.join(SRC, "build", "libetcompare.so")):
        env["PYTHONPATH"] = PYDIR
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        check("library: found in the checkout's build/ with PYTHONPATH=python",
              p.returncode == 0 and p.stdout.strip() ==
              os.path.join(SRC, "build", "libetcompare.so"), p.stdout + p.stderr[-300:])
    else:
        print("skip checkout lookup: no build/libetcompare.so in the checkout")


def main():
    E = setup()
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        for t in (test_loading, test_pip, test_converter, test_fixtures, test_goldens,
                  test_zero_copy, test_errors_and_options, test_etrecord, test_compare):
            d = os.path.join(tmp, t.__name__)
            os.makedirs(d)
            with common.harness(f"{t.__name__}:"):
                t(E, d)
    sys.exit(common.summary())


if __name__ == "__main__":
    main()
