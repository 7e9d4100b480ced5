"""The Python package against upstream's Inspector (fourth hostile pass,
/work/wt/hostile5.md): Event.num_outputs, delegate debug metadata as bytes
(parsed once, a dict one column per key), SNR of two all-zero outputs, the
reference_graph_name keyword, distance names with spaces, OSError-compatible
missing files and directories, TypeErrors naming the keyword, one error
prefix, numpy.float64 statistics, save_data_to_tsv's columns, compression
and binary handles, a custom comparator's frame and its preprocessing()
validation, and the two methods upstream has that etcompare lacked."""
import errno
import gzip
import io
import json
import math
import os
import shutil
import sys
import warnings
import zipfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
warnings.filterwarnings("ignore", "Output Buffer not found")
RX = os.path.join(C.DATA, "realexport")
FILES = ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "mlp_io.npz")
# upstream's devtools/inspector/_inspector_utils.py
EXCLUDED_COLUMNS_WHEN_PRINTING = ["raw", "delegate_debug_identifier", "stack_traces",
                                  "module_hierarchy", "debug_data"]
EXCLUDED_EVENTS_WHEN_PRINTING = {"OPERATOR_CALL"}


def mlp(d, **kw):
    return E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"),
                       etrecord=os.path.join(d, "mlp.etrecord"), **kw)


def delegate_etdump(d):
    import test_fixtures as TF
    return TF.build_etdump(os.path.join(C.SRC, "tests", "fixtures", "delegate.json"), d)


def num_outputs(d):
    """F5: upstream's num_outputs is an int, 1 unless the ETRecord's
    instruction_id_to_num_outs_map says otherwise."""
    plain = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"))
    evs = [e for b in mlp(d).event_blocks for e in b.events]
    check("num_outputs: 1 on every event, with and without an ETRecord without the map "
          "(upstream's default), never None",
          all(type(e.num_outputs) is int and e.num_outputs == 1 for e in evs) and
          all(e.num_outputs == 1 for b in plain.event_blocks for e in b.events),
          sorted({repr(e.num_outputs) for e in evs}))
    target = next(e for e in evs if e._instruction_id is not None and e.op_types)
    rec = os.path.join(d, "outs.etrecord")
    shutil.copy(os.path.join(d, "mlp.etrecord"), rec)
    with zipfile.ZipFile(rec, "a") as z:
        z.writestr("instruction_id_to_num_outs_map",
                   json.dumps({"forward": {str(target._instruction_id): 2}}))
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"), etrecord=rec)
    got = {(e.name, e._instruction_id): e.num_outputs
           for b in insp.event_blocks for e in b.events}
    # upstream sets it on every event of the instruction (its OPERATOR_CALL too);
    # framework events are not linked by etcompare (docs/python.md): 1
    fw = ("Method::init", "Program::load_method", "Method::execute")
    mine = [v for (n, i), v in got.items() if i == target._instruction_id and n not in fw]
    others = [v for (n, i), v in got.items() if i != target._instruction_id or n in fw]
    check("num_outputs: the map's value for its instruction's events, 1 for the others",
          mine and set(mine) == {2} and others and set(others) == {1}, got)


def metadata_bytes(d):
    """F10, F11, F9: delegate debug metadata is the ETDump's bytes (0xff
    kept), the parser runs once per event, a dict is one column per key."""
    etdp = delegate_etdump(d)
    calls = []

    def binary(metas):  # written for upstream: indexes bytes
        calls.append(1)
        return {"first_byte": [m[0] if m else None for m in metas],
                "length": [len(m) for m in metas]}
    raw = {e.name: e for e in E.Inspector(etdump_path=etdp).event_blocks[0].events}
    check("raw_delegate_debug_metadatas: the ETDump's bytes ([1,2,3], [4,5]; [255] and '' "
          "for a run without, as upstream)",
          raw["7"].raw_delegate_debug_metadatas == [b"\x01\x02\x03", b"\x04\x05"] and
          raw["fused_add"].raw_delegate_debug_metadatas == [b"\xff", ""] and
          raw["7"].delegate_debug_metadatas == [b"\x01\x02\x03", b"\x04\x05"],
          (raw["7"].raw_delegate_debug_metadatas, raw["fused_add"].raw_delegate_debug_metadatas))
    texts = [getattr(raw[n], "delegate_debug_metadata_texts", None) for n in ("7", "fused_add")]
    check("delegate_debug_metadata_texts: the bytes decoded (etcompare's text view)",
          texts == [["\x01\x02\x03", "\x04\x05"], ["\ufffd", ""]], texts)
    insp = E.Inspector(etdump_path=etdp, delegate_metadata_parser=binary)
    ev = {e.name: e for e in insp.event_blocks[0].events}
    first = ev["7"].delegate_debug_metadatas
    check("a binary parser gets bytes: first bytes 1 and 4, 0xff of fused_add",
          first == {"first_byte": [1, 4], "length": [3, 2]} and
          ev["fused_add"].delegate_debug_metadatas["first_byte"] == [255, None], first)
    again = [ev["7"].delegate_debug_metadatas for _ in range(3)]
    check("the parser runs once per event (upstream's cached_property): the same object",
          len(calls) == 2 and all(a is first for a in again), len(calls))
    import pandas as pd
    df = insp.to_dataframe(include_delegate_debug_data=True)
    rows = {n: i for i, n in enumerate(df["event_name"])}
    blk = insp.event_blocks[0].to_dataframe(True, True)
    check("to_dataframe(include_delegate_debug_data=True) (and EventBlock's): a parser's dict "
          "is one column per key (upstream's pd.Series(metadata)), no delegate_debug_metadata "
          "column", "first_byte" in df.columns and "length" in df.columns and
          "delegate_debug_metadata" not in df.columns and
          df["first_byte"][rows["7"]] == [1, 4] and df["length"][rows["fused_add"]] == [1, 0] and
          pd.isna(df["first_byte"][rows["DELEGATE_CALL"]]) and
          list(blk.columns) == list(df.columns), list(df.columns))
    odd = E.Inspector(etdump_path=etdp, delegate_metadata_parser=lambda m: "text")
    try:
        odd.to_dataframe(include_delegate_debug_data=True)
        got = "no error"
    except ValueError as e:
        got = str(e)
    check("a parser returning neither a list nor a dict: upstream's ValueError",
          got.startswith("Unexpected type for delegate_debug_metadata"), got)


def snr_zero(d):
    """F16: SNR of two identical all-zero outputs is NaN (upstream's
    10 log10(0 / 0)), as compare_results gives."""
    import numpy as np
    z = np.zeros(16, dtype=np.float32)
    got = E.SNRComparator().element_compare(z, z)
    ref = E.compare_results([z], [z])["snr"][0]
    one = np.ones(16, dtype=np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = [10 * np.log10(np.mean(a.astype(np.float64) ** 2) /
                              np.mean((a.astype(np.float64) - b) ** 2))
                for a, b in ((z, z), (one, one), (z, one))]
    others = [E.SNRComparator().element_compare(one, one),
              E.SNRComparator().element_compare(z, one)]
    check("SNRComparator(zeros, zeros): NaN as upstream's formula and compare_results; "
          "identical non-zero +inf, zeros vs ones -inf (the formula's too)",
          math.isnan(got) and math.isnan(ref) and math.isnan(want[0]) and
          others == [math.inf, -math.inf] == want[1:], (got, ref, others, want))


def reference_graph_name(d):
    """F1: upstream's reference_graph_name keyword: its default and a method
    name link as before; another name is an etcompare.Error naming it."""
    base = [e.debug_handles for b in mlp(d).event_blocks for e in b.events]
    named = [e.debug_handles for b in mlp(d, reference_graph_name="edge_dialect_graph_module")
             .event_blocks for e in b.events]
    meth = [e.debug_handles for b in mlp(d, reference_graph_name="forward")
            .event_blocks for e in b.events]
    check("reference_graph_name: upstream's default and the method name give the same link",
          base == named == meth and any(base), base[:3])
    try:
        mlp(d, reference_graph_name="nope")
        got = "no error"
    except E.Error as e:
        got = str(e)
    check("reference_graph_name: an unknown graph is an Error naming the keyword and the "
          "accepted names", "reference_graph_name=\"nope\"" in got and "forward" in got, got)


def distance_strip(d):
    """F3: the distance name stripped, as upstream's distance.strip().upper()."""
    insp = mlp(d)
    want = insp.calculate_numeric_gap("SNR")["gap"].tolist()
    got = [insp.calculate_numeric_gap(x)["gap"].tolist() for x in (" SNR ", "snr\n")]
    check("calculate_numeric_gap(' SNR ') and ('snr\\n'): the SNR frame",
          got[0] == want and got[1] == want and len(want) > 3, got)


def inspector_error(**kw):
    """What Inspector(**kw) raises, or None."""
    try:
        E.Inspector(**kw)
    except Exception as x:  # noqa: BLE001
        return x
    return None


def os_errors(d):
    """F7: a missing file: FileNotFoundError with errno, strerror and
    filename as open()'s; a directory: IsADirectoryError (an OSError), both
    still etcompare.Error."""
    etdp, buf = os.path.join(d, "mlp.etdp"), os.path.join(d, "mlp_debug.bin")
    missing = os.path.join(d, "nope.bin")
    for kw in (dict(etdump_path=missing), dict(etdump_path=etdp, debug_buffer_path=missing),
               dict(etdump_path=etdp, debug_buffer_path=buf, etrecord=missing)):
        key, e = list(kw)[-1], inspector_error(**kw)
        check(f"missing {key}: FileNotFoundError with errno ENOENT, strerror and filename",
              isinstance(e, FileNotFoundError) and isinstance(e, E.Error) and
              e.errno == errno.ENOENT and e.filename == missing and
              e.strerror == os.strerror(errno.ENOENT) and "nope.bin" in str(e),
              (type(e), getattr(e, "errno", None), getattr(e, "filename", None)))
    for kw in (dict(etdump_path=d), dict(etdump_path=etdp, debug_buffer_path=d),
               dict(etdump_path=etdp, debug_buffer_path=buf, etrecord=d)):
        key, e = list(kw)[-1], inspector_error(**kw)
        check(f"a directory as {key}: IsADirectoryError (OSError, EISDIR, filename), still "
              "an etcompare.Error", isinstance(e, IsADirectoryError) and
              isinstance(e, E.Error) and e.errno == errno.EISDIR and e.filename == d,
              (type(e), getattr(e, "errno", None), str(e)))


def keyword_types(d):
    """F8: a path keyword of the wrong type: TypeError naming the keyword."""
    for key in ("etdump_path", "debug_buffer_path", "bundled_program"):
        kw = {"etdump_path": os.path.join(d, "mlp.etdp"), key: 123}
        try:
            E.Inspector(**kw)
            got = "no error"
        except TypeError as e:
            got = str(e)
        check(f"{key}=123: TypeError naming {key}", got.startswith(key + "=") and "int" in got,
              got)


def one_prefix(d):
    """F19: calculate_numeric_gap() without an ETRecord says its clause once."""
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"),
                       debug_buffer_path=os.path.join(d, "mlp_debug.bin"))
    try:
        insp.calculate_numeric_gap()
        got = "no error"
    except E.Error as e:
        got = str(e)
    check("numeric gap without an ETRecord: the reason said once",
          got.count("runs the ETRecord's graph") == 1 and "etrecord=" in got, got)


def perf_types(d):
    """F20: p10/p50/p90/avg are numpy.float64 (np.percentile / np.mean)."""
    import numpy as np
    p = next(e.perf_data for b in mlp(d).event_blocks for e in b.events if e.perf_data)
    vals = {k: getattr(p, k) for k in ("p10", "p50", "p90", "avg")}
    want = {"p10": np.percentile(p.raw, 10), "p50": np.percentile(p.raw, 50),
            "p90": np.percentile(p.raw, 90), "avg": np.mean(p.raw)}
    check("PerfData p10/p50/p90/avg: numpy.float64 equal to numpy's",
          all(type(v) is np.float64 for v in vals.values()) and
          all(abs(vals[k] - want[k]) <= 1e-12 * max(1.0, abs(want[k])) for k in want) and
          p.p50.round(3) == round(float(want["p50"]), 3), vals)


def tsv_columns(d):
    """F12: save_data_to_tsv with an ETRecord writes upstream's columns:
    to_dataframe() minus EXCLUDED_COLUMNS_WHEN_PRINTING, byte for byte what
    upstream's df.to_csv(file, sep="\\t") writes from the same frame."""
    insp = mlp(d)
    out = os.path.join(d, "p.tsv")
    insp.save_data_to_tsv(out)
    with open(out, "rb") as f:
        got = f.read()
    df = insp.to_dataframe().drop(columns=EXCLUDED_COLUMNS_WHEN_PRINTING)
    for name in EXCLUDED_EVENTS_WHEN_PRINTING:
        df = df[~df["event_name"].str.contains(name)]
    df = df.reset_index(drop=True)
    buf = io.StringIO()
    df.to_csv(buf, sep="\t")
    want = buf.getvalue().encode()
    header = got.split(b"\n", 1)[0].split(b"\t")
    check("save_data_to_tsv with an ETRecord: upstream's header, no debug_handles, "
          "stack_traces or module_hierarchy",
          header == want.split(b"\n", 1)[0].split(b"\t") and b"debug_handles" not in header,
          header)
    check("save_data_to_tsv with an ETRecord: upstream's bytes (pandas to_csv of the frame)",
          got == want, (got[:300], want[:300]))


def tsv_targets(d):
    """F13: a .gz path is gzip (pandas' compression="infer"), a binary
    handle takes the same bytes."""
    insp = mlp(d)
    plain = os.path.join(d, "p.tsv")
    insp.save_data_to_tsv(plain)
    with open(plain, "rb") as f:
        want = f.read()
    gz = os.path.join(d, "p.tsv.gz")
    insp.save_data_to_tsv(gz)
    with open(gz, "rb") as f:
        magic = f.read(2)
    try:
        with gzip.open(gz, "rb") as f:
            unz = f.read()
    except OSError as e:
        unz = e
    check("save_data_to_tsv('x.tsv.gz'): gzip holding the TSV", magic == b"\x1f\x8b" and
          unz == want, magic)
    b = io.BytesIO()
    try:
        insp.save_data_to_tsv(b)
        with open(os.path.join(d, "b.tsv"), "wb") as f:
            insp.save_data_to_tsv(f)
        with open(os.path.join(d, "b.tsv"), "rb") as f:
            filed = f.read()
    except TypeError as e:
        filed = e
    check("save_data_to_tsv(binary handle): the TSV's UTF-8 bytes", b.getvalue() == want ==
          filed, b.getvalue()[:100])


class Spy(E.NumericalComparatorBase):
    def element_compare(self, a, b):
        import numpy as np
        return float(np.max(np.abs(np.asarray(a, dtype=np.float64) -
                                   np.asarray(b, dtype=np.float64))))


class BadList(Spy):
    def preprocessing(self, mapping):
        return list(mapping.items())


class BadHandle(Spy):
    def preprocessing(self, mapping):
        return {(tuple(str(x) for x in k[0]), k[1]): v for k, v in mapping.items()}


def custom_frame(d):
    """F14, F15: a custom comparator's frame has upstream's columns (the
    handles from compare(), stacktraces added after it); a malformed
    preprocessing() output raises upstream's TypeError / ValueError."""
    insp = mlp(d)
    mse = insp.calculate_numeric_gap("MSE")
    spy = insp.calculate_numeric_gap(Spy())
    cols = ["aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops",
            "runtime_debug_handle", "runtime_intermediate_output", "gap", "stacktraces"]
    check("custom comparator: upstream's columns (handles and stacktraces kept)",
          list(spy.columns) == cols, list(spy.columns))
    same = all(k in spy.columns for k in cols) and \
        list(spy["aot_debug_handle"]) == list(mse["aot_debug_handle"]) and \
        list(spy["runtime_debug_handle"]) == list(mse["runtime_debug_handle"]) and \
        list(spy["stacktraces"]) == list(mse["stacktraces"]) and \
        any(v for st in spy["stacktraces"] for v in st.values())
    check("custom comparator: the same handles and stack traces as the built-in frame",
          same, list(spy.get("stacktraces", []))[:2])
    for cls, exc, text in ((BadList, TypeError, "preprocessing() must return a dict, got list"),
                           (BadHandle, ValueError, "Invalid AOT debug handle in key")):
        try:
            insp.calculate_numeric_gap(cls())
            got = "no error"
        except exc as e:
            got = str(e)
        except Exception as e:  # noqa: BLE001
            got = f"{type(e).__name__}: {e}"
        check(f"preprocessing() of {cls.__name__}: upstream's {exc.__name__}", text in got, got)


def upstream_methods(d):
    """F2: write_tensorboard_artifact is upstream's no-op;
    get_vgf_neural_statistics a NotImplementedError naming the bytes."""
    insp = mlp(d)
    r = getattr(insp, "write_tensorboard_artifact", lambda p: "missing")(os.path.join(d, "tb"))
    try:
        insp.get_vgf_neural_statistics()
        got = "no error"
    except (NotImplementedError, AttributeError) as e:
        got = f"{type(e).__name__}: {e}"
    check("write_tensorboard_artifact: a no-op as upstream's (nothing written)",
          r is None and not os.path.exists(os.path.join(d, "tb")))
    check("get_vgf_neural_statistics: NotImplementedError naming raw_delegate_debug_metadatas",
          got.startswith("NotImplementedError") and "raw_delegate_debug_metadatas" in got, got)


def etrecord_api(d):
    """F6: upstream's parse_etrecord and ETRecord attributes, on etcompare's
    objects."""
    rec = os.path.join(d, "mlp.etrecord")
    try:
        r = E.parse_etrecord(rec)
        kw = E.ETRecord(etrecord_path=rec)
    except (AttributeError, TypeError) as e:
        check("parse_etrecord(path) and ETRecord(etrecord_path=)", False, e)
        return
    insp = E.Inspector(etdump_path=os.path.join(d, "mlp.etdp"), etrecord=r)
    check("parse_etrecord: an ETRecord whose edge_dialect_program prints as "
          "get_exported_program(); Inspector(etrecord=) takes it",
          isinstance(r, E.ETRecord) and isinstance(kw, E.ETRecord) and
          str(r.edge_dialect_program) == str(insp.get_exported_program()) and
          "addmm" in str(r.edge_dialect_program) and
          any(e.op_types for b in insp.event_blocks for e in b.events))
    extra = os.path.join(d, "id.etrecord")
    shutil.copy(rec, extra)
    with zipfile.ZipFile(extra, "a") as z:
        z.writestr("export_graph_id", "140234")
    x = E.parse_etrecord(extra)
    check("ETRecord: graph_map {} (the record has none), exported_program None, "
          "export_graph_id the member's int",
          r.graph_map == {} and r.exported_program is None and r.export_graph_id is None and
          x.export_graph_id == 140234, (r.graph_map, x.export_graph_id))


def dataclass_idioms(d):
    """F4: upstream's dataclass idioms: Event / EventBlock built by keyword
    (upstream's own tests do), dataclasses.fields / asdict / replace on the
    Inspector's events and blocks."""
    import dataclasses
    import numpy as np
    insp = mlp(d)
    blk = insp.event_blocks[1]
    ev = blk.events[0]
    try:
        names = [f.name for f in dataclasses.fields(ev)]
        got = dataclasses.asdict(ev)
        new = dataclasses.replace(ev, name="renamed")
        made = E.EventBlock(name="b", events=[E.Event(name="x", perf_data=E.PerfData([1.0, 3.0]))])
        nblk = dataclasses.replace(blk, name="other")
        err = None
    except TypeError as e:
        err = e
    check("dataclasses.fields/asdict/replace on an Inspector's Event and EventBlock; "
          "Event/EventBlock by keyword", err is None and
          names[:6] == ["name", "perf_data", "op_types", "delegate_debug_identifier",
                        "debug_handles", "num_outputs"] and
          got["name"] == ev.name and got["num_outputs"] == 1 and
          np.array_equal(got["debug_data"][0], ev.debug_data[0]) and
          new.name == "renamed" and new.op_types == ev.op_types and
          np.array_equal(new.debug_data[0], ev.debug_data[0]) and
          nblk.name == "other" and len(nblk.events) == len(blk.events) and
          made.to_dataframe()["avg"].tolist() == [2.0], err)


def compare_results_print(d):
    """F18: compare_results(plot=False) prints each metric as upstream's
    (name, 20 "-", "index value" lines, a blank line)."""
    import contextlib
    import numpy as np
    ref = np.arange(1, 9, dtype=np.float32)
    run = ref + np.float32(0.01)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        got = E.compare_results([ref, ref], [run, ref])
    want = ""
    for name in ("snr", "mse", "cosine_similarity"):
        want += name + "\n" + "-" * 20 + "\n"
        for i, v in enumerate(got[name]):
            want += f"{i:<5}{v:>8.5f}" + "\n"
        want += "\n\n"
    check("compare_results prints upstream's per-metric tables", buf.getvalue() == want and
          "mse\n----" in want, buf.getvalue()[:200])


def fx_navigation(d):
    """F17: exported-program nodes carry meta["val"] (shape and dtype of the
    record's tensor_values) and torch.fx's users / all_input_nodes / next."""
    insp = mlp(d)
    nodes = list(insp.get_exported_program().graph.nodes)
    with zipfile.ZipFile(os.path.join(d, "mlp.etrecord")) as z:
        g = json.loads(z.read("edge_dialect_exported_program"))["graph_module"]["graph"]
    tv = g["tensor_values"]
    shapes = {n.name: tuple(getattr(n.meta.get("val"), "shape", ()) or ()) for n in nodes
              if n.name in tv}
    want = {k: tuple(s_["as_int"] for s_ in (v.get("meta", v))["sizes"]) for k, v in tv.items()
            if k in shapes}
    check("meta['val']: the record's shape and dtype on every tensor node",
          shapes == want and len(shapes) >= 10 and
          all(str(n.meta["val"].dtype) == "torch.float32" for n in nodes if n.name in tv),
          (shapes, want))
    try:
        links = all(n in i.users for n in nodes for i in n.all_input_nodes) and \
            all(u.all_input_nodes.count(n) == 1 for n in nodes for u in n.users) and \
            all(a.next is b and b.prev is a for a, b in zip(nodes, nodes[1:]))
        addmm = [n for n in nodes if "addmm" in str(n.target)]
        ok = links and addmm and all(len(n.all_input_nodes) == 3 for n in addmm)
        err = [len(n.all_input_nodes) for n in addmm]
    except AttributeError as e:
        ok, err = False, e
    check("users / all_input_nodes / prev / next link the nodes as torch.fx's (addmm: 3 "
          "inputs)", ok, err)


def main():
    cases = (num_outputs, metadata_bytes, snr_zero, reference_graph_name, distance_strip,
             os_errors, keyword_types, one_prefix, perf_types, tsv_columns, tsv_targets,
             custom_frame, upstream_methods, etrecord_api, dataclass_idioms,
             compare_results_print, fx_navigation)
    C.run_cases_on_copies("python-trust4", RX, FILES, cases)


main()
