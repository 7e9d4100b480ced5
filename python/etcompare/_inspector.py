"""The upstream Inspector API (executorch.devtools.Inspector) on libetcompare:
Inspector, EventBlock, Event, PerfData and TimeScale, spelled and shaped as
upstream's devtools/inspector/_inspector.py.
"""
import contextlib
import ctypes
import dataclasses
import enum
import io
import os
import sys
import warnings

from . import _lib, _tensor
from ._lib import Error, lib

EDGE_DIALECT_GRAPH_KEY = "edge_dialect_graph_module"  # upstream's reference_graph_name default
RESERVED_FRAMEWORK_EVENT_NAMES = ("Method::init", "Program::load_method", "Method::execute")


class TimeScale(enum.Enum):
    """Upstream's TimeScale: the unit of timestamps and durations."""
    NS = "ns"
    US = "us"
    MS = "ms"
    S = "s"
    CYCLES = "cycles"


def _scale(v, what):
    name = v.value if isinstance(v, TimeScale) else str(v)
    out = ctypes.c_int()
    if lib.time_scale_parse(name.encode(), ctypes.byref(out)) < 0:
        raise Error(f"{what}: unknown time scale '{name}' (ns, us, ms, s or cycles)",
                    "usage error")
    return out.value


def _hinted(rc, err, path, expected, keyword_for):
    """Raises the library's error with the CLI's hint for swapped files."""
    try:
        _lib.check(rc, err)
    except Error as e:
        hint = _lib.swapped_hint(path, expected, keyword_for)
        if not hint:
            raise
        raise type(e)(e.message + hint, e.status, e.file, e.offset) from None


_FIX = "make a new Inspector from the same paths"

# what a debug buffer (raw bytes) cannot be by accident, and the keyword
# that takes it: the CLI refuses the same kinds given as --debug_buffer
_SWAPPED = {"ETDump": "etdump_path", "ETRecord": "etrecord",
            ".npz": "reference_outputs= or inputs", "torch.save": "reference_outputs= or inputs"}


def _not_a_debug_buffer(path):
    """Raises etcompare.Error when the file at `path` is an ETDump, an
    ETRecord, an .npz or a torch.save archive: a swapped argument would
    otherwise be read as raw tensor bytes."""
    hint = _lib.swapped_hint(path, "debug buffer", _SWAPPED)
    if hint:
        raise Error(f"{os.fsdecode(path)} (given as debug_buffer_path): not a debug "
                    f"buffer{hint}", "format error", os.fsdecode(path))


class _Handles(_lib.Owner):
    """The library objects behind one Inspector. Numpy arrays handed out hold
    a reference to this object, so the mapping lives as long as they do."""
    _what, _fix = "an Inspector's library objects", _FIX

    def __init__(self):
        self.etdump = self.buf = self.etrecord = self.insp = None
        self.etrecord_path = None  # for the in-place rewrite check of get_exported_program()
        self.etrecord_id = None  # its _lib.file_id when opened (a replaced file is refused)
        self.inputs = []  # (role, path, _lib.file_id when opened): what no output may overwrite
        self.table_insp = None  # the CLI-scaled twin of insp, for tables with a converter
        self.data = None  # bytes given as etdump_data (the dump points into them)
        self.tensor_type = "numpy"
        self.paths = []  # the files mapped, as given to the library (check)
        self.data_ids = []  # (role, path, _lib.file_id when opened): ETDump, debug buffer

    def check(self):
        """Raises etcompare.Error when a file behind these objects was
        truncated while it was read (_lib.check_files), or when the ETDump
        or the debug buffer was rewritten in place since it was opened (the
        mapping would show the new bytes): one os.stat per file."""
        _lib.check_files(self.paths)
        for role, path, fid in self.data_ids:
            _lib.check_rewritten(path, fid, role, _FIX)

    def __del__(self):
        if lib is None:  # interpreter shutdown
            return
        lib.inspector_free(self.table_insp)
        lib.inspector_free(self.insp)
        lib.etrecord_free(self.etrecord)
        lib.debug_buffer_free(self.buf)
        lib.etdump_free(self.etdump)


class PerfData:
    """Durations of one event, one per run (`raw`), and their statistics
    (numpy's percentile with linear interpolation, mean, min, max)."""

    def __init__(self, raw, stats=None):
        self.raw = raw
        self._stats = stats

    def _stat(self, name):
        if self._stats is not None:
            return getattr(self._stats, name)
        st = _lib.PerfStats()
        _perf_stats(self.raw, st)
        self._stats = st
        return getattr(st, name)

    # numpy.float64 as upstream's np.percentile / np.mean (min and max are
    # Python's min() / max() of raw there: floats)
    p10 = property(lambda self: _f64(self._stat("p10")))
    p50 = property(lambda self: _f64(self._stat("p50")))
    p90 = property(lambda self: _f64(self._stat("p90")))
    avg = property(lambda self: _f64(self._stat("avg")))
    min = property(lambda self: self._stat("min"))
    max = property(lambda self: self._stat("max"))

    def __repr__(self):
        return f"PerfData(raw={self.raw!r})"


def _f64(v):
    import numpy as np
    return np.float64(v)


def _perf_stats(raw, out):
    fn = lib.dll.etc_perf_stats_compute
    fn.restype, fn.argtypes = None, [ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
                                    ctypes.POINTER(_lib.PerfStats)]
    arr = (ctypes.c_double * len(raw))(*raw)
    fn(arr, len(raw), ctypes.byref(out))


def _truncated(ops):
    if len(ops) < 5:
        return ops
    return f"['{ops[0]}', '{ops[1]}' ... '{ops[-1]}'] ({len(ops)} total)"


class Event(_lib.View):
    """One event of an EventBlock (upstream's Event): an operator instance
    with its durations over the block's runs, its intermediate outputs and
    what the ETRecord says about it. Built by keyword with upstream's
    fields (Event(name="add", perf_data=PerfData([1.0]))); the Inspector's
    events view the library's. dataclasses.fields, asdict and replace
    work on both (upstream's fields)."""
    _what, _fix = "an Event", _FIX + " (its arrays and perf_data can be pickled)"

    def __init__(self, name, perf_data=None, op_types=None, delegate_debug_identifier=None,
                 debug_handles=None, num_outputs=1, stack_traces=None, module_hierarchy=None,
                 is_delegated_op=None, delegate_backend_name=None,
                 _delegate_debug_metadatas=None, debug_data=None, _instruction_id=None,
                 _delegate_metadata_parser=None, _delegate_time_scale_converter=None,
                 _start_time=None):
        self._h = None
        self.name = name
        self.perf_data = perf_data
        self.op_types = [] if op_types is None else op_types
        self.delegate_debug_identifier = delegate_debug_identifier
        self.debug_handles = debug_handles
        self.num_outputs = num_outputs
        self.stack_traces = {} if stack_traces is None else stack_traces
        self.module_hierarchy = {} if module_hierarchy is None else module_hierarchy
        self.is_delegated_op = is_delegated_op
        self.delegate_backend_name = delegate_backend_name
        self._delegate_debug_metadatas = ([] if _delegate_debug_metadatas is None
                                          else _delegate_debug_metadatas)
        self._debug_data = [] if debug_data is None else debug_data
        self._debug_ptr, self._debug_count = None, 0
        self._instruction_id = _instruction_id
        self._parser = _delegate_metadata_parser
        self._converter = _delegate_time_scale_converter
        self._start_time = _start_time
        self._nodes = []

    @classmethod
    def _from_library(cls, block, ev, handles, converter=None, parser=None):
        self = object.__new__(cls)
        self._library_init(block, ev, handles, converter, parser)
        return self

    # upstream's dataclass field names, for dataclasses.asdict / replace
    _delegate_metadata_parser = property(lambda self: self._parser)
    _delegate_time_scale_converter = property(lambda self: self._converter)

    def _library_init(self, block, ev, handles, converter=None, parser=None):
        self._h = handles
        self._converter = converter
        self._parser = parser
        self.name = ev.name.text()
        self._instruction_id = ev.instruction_id if ev.instruction_id >= 0 else None
        if ev.delegate_debug_id_int >= 0:
            self.delegate_debug_identifier = ev.delegate_debug_id_int
        else:
            self.delegate_debug_identifier = ev.delegate_debug_id_str.text() or None
        self.is_delegated_op = bool(ev.is_delegated_op)
        n = ev.run_count
        if ev.has_perf:
            raw = ev.raw[:n]
            stats = _lib.PerfStats.from_buffer_copy(ev.stats)
            self._start_time = [int(x) for x in ev.start_times[:n]]
            if converter is not None and self.is_delegated_op:
                # with a converter the library leaves delegated durations in the
                # ETDump's ticks (Inspector.__init__), so end = start + raw, and
                # the converter replaces the default scaling, as upstream
                raw = [_elapsed(converter(self.name, s), converter(self.name, s + round(r)))
                       for s, r in zip(self._start_time, raw)]
                stats = None
            self.perf_data = PerfData(list(raw), stats)
        else:
            self.perf_data = None
            self._start_time = None
        self._delegate_debug_metadatas = []
        if ev.metadata:
            # upstream's list: the ETDump's bytes of each run, "" for a run without
            metas = [ctypes.string_at(ev.metadata[k], ev.metadata_len[k])
                     if ev.metadata[k] and ev.metadata_len[k] else "" for k in range(n)]
            if any(metas):
                self._delegate_debug_metadatas = metas
        self.debug_handles = (list(ev.debug_handles[:ev.debug_handle_count])
                              if ev.debug_handles else None)
        self.op_types, self.stack_traces, self.module_hierarchy = [], {}, {}
        self._nodes = []
        for k in range(ev.node_count):
            node = _lib.GraphNode.from_address(ev.nodes[k])
            name = _lib.cstr(node.name)
            self._nodes.append(node)
            self.stack_traces[name] = _lib.cstr(node.stack_trace) or None
            frames = {}
            for j in range(node.module_depth):
                fr = _lib.at(node.modules, j, _lib.ModuleFrame, "module_frame")
                frames[_lib.cstr(fr.key)] = (_lib.cstr(fr.path), _lib.cstr(fr.type))
            self.module_hierarchy[name] = frames or None
            if node.op:
                self.op_types.append(_lib.cstr(node.op))
        self.delegate_backend_name = (ev.delegate_backend_name.decode("utf-8", "replace")
                                      if ev.delegate_backend_name is not None else None)
        # upstream: instruction_id_to_num_outs_map.get(instruction_id, 1), else 1
        self.num_outputs = int(ev.num_outputs) if ev.num_outputs >= 0 else 1
        self._debug_ptr, self._debug_count = ev.debug, ev.debug_count
        self._debug_data = None

    @property
    def debug_data(self):
        """Intermediate outputs of the block's first run: numpy arrays
        (zero-copy views into the debug buffer), or torch tensors with
        tensor_type="torch", and Python scalars."""
        if self._h is None:  # built by keyword
            return self._debug_data
        if self._debug_data is None:
            self._debug_data = _tensor.values(self._debug_ptr, 0, self._debug_count, self._h.buf,
                                              self._h) if self._debug_count else []
            if self._h.tensor_type == "torch":
                self._debug_data = _tensor.as_type_all(self._debug_data, "torch", self._h)
        self._h.check()  # a truncated debug buffer: an Error, not zeros taken for data
        return self._debug_data

    @debug_data.setter
    def debug_data(self, value):
        self._debug_data = value

    @property
    def start_time(self):
        return self._start_time

    @property
    def delegate_debug_metadatas(self):
        """Parsed by delegate_metadata_parser when one was given (delegated
        events only), else the raw bytes, as upstream; the parser runs once
        per event (upstream's cached_property)."""
        if not self.is_delegated_op or self._parser is None:
            return self._delegate_debug_metadatas
        if not hasattr(self, "_parsed_metadatas"):
            self._parsed_metadatas = self._parser(self._delegate_debug_metadatas)
        return self._parsed_metadatas

    @property
    def raw_delegate_debug_metadatas(self):
        """The ETDump's delegate debug metadata of each run: bytes, as
        upstream ("" for a run that logged none)."""
        return self._delegate_debug_metadatas

    @property
    def delegate_debug_metadata_texts(self):
        """Beyond upstream: raw_delegate_debug_metadatas decoded as UTF-8
        (invalid bytes as U+FFFD), for metadata that is text."""
        return [m.decode("utf-8", "replace") if isinstance(m, bytes) else m
                for m in self._delegate_debug_metadatas]

    def asdict(self, _units=""):
        p = self.perf_data
        return {
            "event_name": self.name,
            "raw": [p.raw if p else None],
            "p10" + _units: p.p10 if p else None,
            "p50" + _units: p.p50 if p else None,
            "p90" + _units: p.p90 if p else None,
            "avg" + _units: p.avg if p else None,
            "min" + _units: p.min if p else None,
            "max" + _units: p.max if p else None,
            "op_types": [_truncated(self.op_types)],
            "delegate_debug_identifier": self.delegate_debug_identifier,
            "stack_traces": [self.stack_traces],
            "module_hierarchy": [self.module_hierarchy],
            "is_delegated_op": self.is_delegated_op,
            "delegate_backend_name": self.delegate_backend_name,
            "debug_data": [self.debug_data],
            "start_time": [self._start_time],
        }

    def to_dataframe(self, _units=""):
        import pandas as pd
        return pd.DataFrame(self.asdict(_units=_units))

    def __repr__(self):
        return (f"Event(name={self.name!r}, perf_data={self.perf_data!r}, "
                f"op_types={self.op_types!r}, debug_handles={self.debug_handles!r})")


@dataclasses.dataclass
class _EventFields:
    """Upstream's Event fields, in upstream's order (its @dataclass)."""
    name: str
    perf_data: object = None
    op_types: list = dataclasses.field(default_factory=list)
    delegate_debug_identifier: object = None
    debug_handles: object = None
    num_outputs: int = 1
    stack_traces: dict = dataclasses.field(default_factory=dict)
    module_hierarchy: dict = dataclasses.field(default_factory=dict)
    is_delegated_op: object = None
    delegate_backend_name: object = None
    _delegate_debug_metadatas: list = dataclasses.field(default_factory=list)
    debug_data: list = dataclasses.field(default_factory=list)
    _instruction_id: object = None
    _delegate_metadata_parser: object = None
    _delegate_time_scale_converter: object = None
    _start_time: object = None


@dataclasses.dataclass
class _EventBlockFields:
    """Upstream's EventBlock fields, in upstream's order."""
    name: str
    events: list = dataclasses.field(default_factory=list)
    source_time_scale: object = TimeScale.NS
    target_time_scale: object = TimeScale.MS
    bundled_input_index: object = None
    run_output: object = None
    reference_output: object = None


def _elapsed(start, end):
    max_uint32 = 2 ** 32 - 1
    if start > end:
        if start > max_uint32 or end > max_uint32:
            raise Error(f"Expected start_time ({start}) and end_time ({end}) to be less than "
                        f"{max_uint32} for cases where there is wrap-around of time values.")
        return (max_uint32 - start) + end
    return end - start


class EventBlock(_lib.View):
    """A group of runs with the same signature (upstream's EventBlock).
    Built by keyword with upstream's fields (EventBlock(name="Execute",
    events=[...])); the Inspector's blocks view the library's.
    dataclasses.fields, asdict and replace work on both."""
    _what, _fix = "an EventBlock", _FIX + " (its arrays and perf_data can be pickled)"

    def __init__(self, name, events=None, source_time_scale=TimeScale.NS,
                 target_time_scale=TimeScale.MS, bundled_input_index=None, run_output=None,
                 reference_output=None):
        self._h = self._b = None
        self.index = None
        self.name = name
        self._events = [] if events is None else events
        self.source_time_scale, self.target_time_scale = source_time_scale, target_time_scale
        self.bundled_input_index = bundled_input_index
        self._run_output = run_output
        self.reference_output = reference_output
        self._converter = self._parser = None

    @classmethod
    def _from_library(cls, index, b, handles, source, target, converter=None, reference=None,
                      parser=None):
        self = object.__new__(cls)
        self._library_init(index, b, handles, source, target, converter, reference, parser)
        return self

    def _library_init(self, index, b, handles, source, target, converter, reference, parser):
        self._h = handles
        self._b = b
        self.index = index
        self.name = b.name.text()
        self.source_time_scale, self.target_time_scale = source, target
        # upstream keeps the writer's value: -1 when the runtime omitted it
        self.bundled_input_index = b.bundled_input_index
        self.reference_output = reference
        self._converter = converter
        self._parser = parser
        self._events = None
        self._run_output = None

    @property
    def events(self):
        if self._events is None:
            b = self._b
            self._events = [
                Event._from_library(self, _lib.at(b.events, i, _lib.InspectorEvent,
                                                  "inspector_event"),
                                    self._h, self._converter, self._parser)
                for i in range(b.event_count)]
        return self._events

    @events.setter
    def events(self, value):
        self._events = value

    @property
    def run_count(self):
        return self._b.run_count if self._b is not None else None

    @property
    def runs(self):
        """The ETDump run_data index of each run merged into this block."""
        return list(self._b.runs[:self._b.run_count]) if self._b is not None else []

    def run_outputs(self, run=0):
        """Program outputs of run `run` of the block (upstream's run_output is run 0's)."""
        b = self._b
        if b is None:
            raise IndexError(f"block {self.name} was built by keyword: its run_output only")
        if not 0 <= run < b.run_count:
            raise IndexError(f"block {self.name} has {b.run_count} runs")
        start, end = b.output_start[run], b.output_start[run + 1]
        out = _tensor.as_type_all(_tensor.values(b.outputs, start, end, self._h.buf, self._h),
                                  self._h.tensor_type, self._h)
        self._h.check()
        return out

    @property
    def run_output(self):
        if self._b is None:  # built by keyword
            return self._run_output
        if self._run_output is None:
            self._run_output = self.run_outputs(0) if self._b.run_count else []
        self._h.check()
        return self._run_output

    @run_output.setter
    def run_output(self, value):
        self._run_output = value

    def to_dataframe(self, include_units=False, include_delegate_debug_data=False):
        import pandas as pd
        units = f" ({TimeScale(self.target_time_scale).value})" if include_units else ""
        rows = []
        for e in self.events:
            d = e.asdict(_units=units)
            row = {"event_block_name": self.name}
            row.update({k: (v[0] if isinstance(v, list) else v) for k, v in d.items()})
            rows.append(row)
        df = pd.DataFrame(rows)
        if include_delegate_debug_data:
            # upstream's columns: a list is one "delegate_debug_metadata" cell,
            # a dict (a parser's) one column per key
            extra = []
            for e in self.events:
                meta = e.delegate_debug_metadatas
                if meta is not None and len(meta) > 0:
                    if isinstance(meta, list):
                        extra.append(pd.Series([meta], index=["delegate_debug_metadata"]))
                    elif isinstance(meta, dict):
                        extra.append(pd.Series(meta))
                    else:
                        raise ValueError(f"Unexpected type for delegate_debug_metadata: "
                                         f"{type(meta)}")
                else:
                    extra.append(pd.Series(dtype=object))
            if any(not x.empty for x in extra):
                df = pd.concat([df, pd.DataFrame(extra)], axis=1)
        return df

    def __repr__(self):
        return f"EventBlock(name={self.name!r}, events={len(self.events)})"


# the library's TSV columns upstream's save_data_to_tsv drops (its
# EXCLUDED_COLUMNS_WHEN_PRINTING) or does not have
_NOT_UPSTREAM_TSV = ("debug_handles", "stack_traces", "module_hierarchy")


def _upstream_tsv(text):
    """The library's TSV (csv quoting, as pandas writes it) without the
    columns upstream's save_data_to_tsv does not write; rewritten only
    when one of them is there."""
    import csv
    head = text.split("\n", 1)[0].split("\t")
    if not any(c in head for c in _NOT_UPSTREAM_TSV):
        return text
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter="\t"))
    keep = [i for i, c in enumerate(rows[0]) if c not in _NOT_UPSTREAM_TSV]
    out = io.StringIO(newline="")
    w = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for r in rows:
        w.writerow([r[i] for i in keep if i < len(r)])
    return out.getvalue()


def _write_path(file, text):
    """`text` to the path `file`, compressed as pandas' compression="infer"
    does for its suffix."""
    name = os.fsdecode(file)
    data = text.encode("utf-8")
    low = name.lower()
    if low.endswith(".gz"):
        import gzip
        with gzip.open(file, "wb") as f:
            f.write(data)
    elif low.endswith(".bz2"):
        import bz2
        with bz2.open(file, "wb") as f:
            f.write(data)
    elif low.endswith(".xz"):
        import lzma
        with lzma.open(file, "wb") as f:
            f.write(data)
    elif low.endswith(".zip"):
        import zipfile
        with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(os.path.basename(name)[:-4], data)
    elif low.endswith((".zst", ".tar")) or ".tar." in low:
        raise Error(f"{name}: save_data_to_tsv writes .gz, .bz2, .xz and .zip compressed files, "
                    "not this one; give another suffix", "usage error", name)
    else:
        with open(file, "wb") as f:
            f.write(data)


def _module_matches(key, path, typ, name, how):
    """The library's frame_matches (src/analysis/profile.c): `name` as a
    module path (1), an nn_module_stack key (2), a type or its last dotted
    component (3), else part of a key (4, upstream's)."""
    if how == 1:
        return bool(path) and path == name
    if how == 2:
        return key == name
    if how == 3:
        return bool(typ) and name in (typ, typ.rsplit(".", 1)[-1])
    return name in key


def _typename(v):
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _tscale(v):
    """A TimeScale from a member, a str ("us"), or another Enum's member by
    its value or name (upstream's executorch.devtools.inspector.TimeScale.US,
    whose value is "us")."""
    if isinstance(v, TimeScale):
        return v
    if isinstance(v, enum.Enum):
        for key in (v.value, v.name):
            if isinstance(key, str) and key.lower() in TimeScale._value2member_map_:
                return TimeScale(key.lower())
        raise Error(f"unknown time scale {v!r} (ns, us, ms, s or cycles)", "usage error")
    try:
        return TimeScale(str(v).lower())
    except ValueError:
        raise Error(f"unknown time scale '{v}' (ns, us, ms, s or cycles)", "usage error") from None


class Inspector(_lib.View):
    """Upstream's Inspector on libetcompare.

    Inspector(etdump_path=None, etdump_data=None, etrecord=None,
              source_time_scale=TimeScale.NS, target_time_scale=TimeScale.MS,
              debug_buffer_path=None, delegate_metadata_parser=None,
              delegate_time_scale_converter=None, enable_module_hierarchy=False,
              reference_graph_name="edge_dialect_graph_module")

    reference_graph_name: upstream's default or an ETRecord method name (the
    Edge program the events are linked to); another graph is an Error.

    Beyond upstream: `method` (the ETRecord method, default "forward"),
    `strict` (merged runs with different debug data are an error) and
    `max_inflate` (the cap on the tensor bytes read from the debug buffer,
    as the CLI's --max-inflate: bytes, "8G", "64x" its size or "none";
    default 16x its size, at least 64 MiB) and `force` (an ETRecord or a
    debug buffer that does not belong to the ETDump is a warning instead of
    an etcompare.MismatchError, as the CLI's --force).

    An Inspector cannot be deep-copied or pickled (it holds open files and
    the library's objects; copy.copy shares them).

    A mapped file truncated by another process while it is read raises
    etcompare.Error "FILE: changed while being read" from the next call
    that reads it (a numpy view read directly in between reads zeros). The
    ETDump or the debug buffer rewritten in place (same inode, another size
    or modification time) raises etcompare.Error "FILE: the debug buffer
    changed since it was opened" from the next call that reads it.
    """
    _what, _fix = "an Inspector", _FIX

    def __init__(self, etdump_path=None, etdump_data=None, etrecord=None,
                 source_time_scale=TimeScale.NS, target_time_scale=TimeScale.MS,
                 debug_buffer_path=None, delegate_metadata_parser=None,
                 delegate_time_scale_converter=None, enable_module_hierarchy=False,
                 method=None, strict=False, bundled_program=None, inputs=None,
                 tensor_type="numpy", max_inflate=None, force=False,
                 reference_graph_name=EDGE_DIALECT_GRAPH_KEY):
        if tensor_type not in ("numpy", "torch"):
            raise Error(f"tensor_type must be 'numpy' or 'torch', not '{tensor_type}'",
                        "usage error")
        if tensor_type == "torch":
            import torch  # noqa: F401  (an ImportError now, not at the first tensor)
        self._tensor_type = tensor_type
        self._force = _lib.flag("force", force)
        for name, v in (("etdump_path", etdump_path), ("debug_buffer_path", debug_buffer_path),
                        ("etrecord", etrecord), ("bundled_program", bundled_program),
                        ("inputs", inputs)):
            if name in ("etdump_path", "debug_buffer_path", "bundled_program") and \
                    v is not None and not isinstance(v, (str, bytes, os.PathLike)):
                raise TypeError(f"{name}= is the path of a file (str, bytes or os.PathLike), "
                                f"not {_typename(v)}")
            if isinstance(v, (str, bytes)) and not v:
                raise Error(f"{name} is an empty path: give the file's path, or leave {name} "
                            "out", "usage error")
        if inputs is not None and not isinstance(inputs, (str, bytes, os.PathLike)) and (
                hasattr(inputs, "shape") or hasattr(inputs, "keys") or
                not hasattr(inputs, "__iter__")):
            raise TypeError("inputs= is a list of arrays, one per graph input (inputs=[x] for "
                            "a model of one input), or the path of an .npz or torch.save "
                            f"file; not a {_typename(inputs)}")
        if etdump_data is not None:
            try:
                etdump_data = bytes(memoryview(etdump_data))
            except TypeError:
                raise TypeError("etdump_data must be bytes-like (the ETDump's contents, e.g. "
                                "open(path, 'rb').read()), not "
                                f"{type(etdump_data).__name__}; a path is etdump_path=") from None
        # every path made absolute now: the files are read again later (the
        # reference run's inputs, the bundled program, the ETRecord's
        # program), and an os.chdir in between must not change which
        etdump_path, debug_buffer_path, bundled_program, inputs = (
            _lib.absolute(p) for p in (etdump_path, debug_buffer_path, bundled_program, inputs))
        if hasattr(etrecord, "_path") and hasattr(etrecord, "graph_names"):
            etrecord = etrecord._path  # an etcompare.ETRecord: opened again, owned here
        etrecord = _lib.absolute(etrecord)
        self._bundled_program = bundled_program
        self._inputs = inputs
        if (etdump_path is None) == (etdump_data is None):
            raise Error("Expecting exactly one of etdump_path or etdump_data to be specified.",
                        "usage error")
        self._source_time_scale = _tscale(source_time_scale)
        self._target_time_scale = _tscale(target_time_scale)
        if (self._source_time_scale == TimeScale.CYCLES) != \
                (self._target_time_scale == TimeScale.CYCLES):
            from ._errors import MismatchError  # upstream: RuntimeError
            raise MismatchError("For TimeScale in cycles both the source and target time scale "
                                "have to be in cycles.", "usage error")
        h = self._h = _Handles()
        h.tensor_type = tensor_type
        err = _lib.new_error()
        p = ctypes.c_void_p()
        if etdump_path is not None:
            h.paths.append(_lib.path_arg(etdump_path))
            rc = lib.etdump_open(ctypes.byref(p), _lib.path_arg(etdump_path), ctypes.byref(err))
            if rc < 0:
                _hinted(rc, err, etdump_path, "ETDump",
                        {"ETRecord": "etrecord", "BundledProgram": "bundled_program"})
        else:
            h.data = bytes(etdump_data)
            _lib.check(lib.etdump_wrap(ctypes.byref(p), ctypes.c_char_p(h.data), len(h.data),
                                       b"etdump_data", ctypes.byref(err)), err)
        h.etdump = p.value
        h.inputs.append(("ETDump", etdump_path))
        if etdump_path is not None:
            h.data_ids.append(("ETDump", etdump_path, _lib.file_id(etdump_path)))
        if debug_buffer_path is not None:
            _not_a_debug_buffer(debug_buffer_path)
            p = ctypes.c_void_p()
            _lib.check(lib.debug_buffer_open(ctypes.byref(p), _lib.path_arg(debug_buffer_path),
                                             ctypes.byref(err)), err)
            h.buf = p.value
            h.paths.append(_lib.path_arg(debug_buffer_path))
            h.inputs.append(("debug buffer", debug_buffer_path))
            h.data_ids.append(("debug buffer", debug_buffer_path, _lib.file_id(debug_buffer_path)))
            if max_inflate is not None:
                _lib.check(lib.debug_buffer_set_max_inflate(h.buf, _lib.inflate_spec(max_inflate),
                                                            ctypes.byref(err)), err)
        else:
            warnings.warn("Output Buffer not found. Tensor Debug Data will not be available.",
                          stacklevel=2)
        self._method = _lib.text("method", method, "an ETRecord method name, e.g. \"forward\"",
                                 optional=True)
        self._strict = _lib.flag("strict", strict)
        if etrecord is not None:
            if not isinstance(etrecord, (str, bytes, os.PathLike)):
                raise TypeError("Unsupported ETRecord type: give the path of the ETRecord file "
                                "or an etcompare.ETRecord")
            p = ctypes.c_void_p()
            h.paths.append(_lib.path_arg(etrecord))
            rc = lib.etrecord_open(ctypes.byref(p), _lib.path_arg(etrecord), ctypes.byref(err))
            if rc < 0:
                _hinted(rc, err, etrecord, "ETRecord",
                        {"ETDump": "etdump_path", "BundledProgram": "bundled_program"})
            h.etrecord = p.value
            _lib.warn_opened("etrecord", p.value, stacklevel=4)
            h.etrecord_path = os.fspath(etrecord)
            h.etrecord_id = _lib.file_id(etrecord)
            h.inputs.append(("ETRecord", etrecord))
        if h.etrecord:
            self._method = self._reference_graph_method(reference_graph_name)
        for role, path in (("bundled program", bundled_program), ("inputs", inputs)):
            if isinstance(path, (str, bytes, os.PathLike)):
                h.inputs.append((role, path))
        h.inputs = [(role, os.fsdecode(path), _lib.file_id(path)) for role, path in h.inputs
                    if path is not None]
        # The library scales delegated events by target/source by default, as
        # upstream's default converter. A user's converter replaces that
        # scaling: the library then keeps them in the ETDump's ticks (their
        # unit declared as the target's) and Event applies the converter.
        h.insp = self._create(ticks=delegate_time_scale_converter is not None)
        h.check()
        self._check_belonging()
        self._converter = delegate_time_scale_converter
        self._parser = delegate_metadata_parser
        self._event_blocks = None

    def _reference_graph_method(self, name):
        """Upstream's reference_graph_name (the graph whose nodes the events
        are linked to) as the ETRecord method to link: upstream's default
        (the Edge dialect program), or a method name of the record."""
        name = _lib.text("reference_graph_name", name,
                         f"\"{EDGE_DIALECT_GRAPH_KEY}\" or an ETRecord method name")
        if name in (EDGE_DIALECT_GRAPH_KEY, "edge_dialect_exported_program"):
            return self._method
        rec = self._h.etrecord
        methods = [lib.etrecord_method(rec, i).decode("utf-8", "replace")
                   for i in range(lib.etrecord_method_count(rec))]
        if name in methods and self._method in (None, name):
            return name
        if name in methods:
            raise Error(f"reference_graph_name=\"{name}\" and method=\"{self._method}\" name "
                        "two methods: give one of them", "usage error")
        raise Error(f"reference_graph_name=\"{name}\": etcompare links events to the Edge "
                    f"dialect program of an ETRecord method: give \"{EDGE_DIALECT_GRAPH_KEY}\" "
                    f"(upstream's default) or a method name ({', '.join(methods) or 'none'}); "
                    "other graph_map graphs are read by get_exported_program(graph) and "
                    "calculate_numeric_gap(reference_graph=)", "usage error")

    def _check_belonging(self):
        """The CLI's consistency checks (consistency.h): an ETRecord of
        another model or a debug buffer of another run gives numbers that
        look like a regression. MismatchError, or a warning with force=True."""
        for fn, fix in ((lib.check_etrecord, b"etrecord="),
                        (lib.check_debug_buffer, b"debug_buffer_path=")):
            err = _lib.new_error()
            try:
                _lib.check(fn(self._h.insp, fix, ctypes.byref(err)), err)
            except Error as e:
                if e.status != "mismatch":
                    raise
                if not self._force:
                    raise type(e)(e.message + " (or force=True to compare anyway)", e.status,
                                  e.file, e.offset) from None
                warnings.warn(e.message + " (force=True: compared anyway)", stacklevel=3)
            self._h.check()

    @contextlib.contextmanager
    def _reading(self, *others):
        """A call that reads the mapped files: when one of them was truncated
        underfoot, the Error naming it replaces whatever the call raised (an
        empty block, invalid JSON) or returned. `others`: Inspectors or
        paths read too."""
        def changed():
            self._h.check()
            for o in others:
                if hasattr(o, "_h"):
                    o._h.check()
                elif isinstance(o, (str, bytes, os.PathLike)):
                    _lib.check_files([_lib.path_arg(o)])
        try:
            yield
        except Exception:
            changed()
            raise
        changed()

    def _check_output(self, file):
        """Refuses to write `file` (a path or an open file) when it is one of
        this Inspector's inputs, also through a hard or symbolic link, as
        the CLI does: the arrays handed out view those files."""
        if isinstance(file, (str, bytes, os.PathLike)):
            out, name = _lib.file_id(file), os.fsdecode(file)
        else:
            try:
                st = os.fstat(file.fileno())
            except (AttributeError, OSError, ValueError):
                return
            out, name = (st.st_dev, st.st_ino), getattr(file, "name", "the output file")
        for role, path, fid in self._h.inputs:
            if out is not None and fid is not None and out[:2] == fid[:2]:
                raise Error(f"{name}: is this Inspector's {role} input ({path}): writing it "
                            "would change the data read from it; give another output path",
                            "usage error", name)

    def _create(self, ticks):
        """A library inspector of this ETDump, linked to the ETRecord, owned
        by self._h; `ticks`: delegated durations unscaled."""
        h = self._h
        err = _lib.new_error()
        opt = _lib.options("inspector_options", lib.inspector_options_init)
        opt.source_time_scale = _scale(self._source_time_scale, "source_time_scale")
        opt.target_time_scale = _scale(self._target_time_scale, "target_time_scale")
        opt.strict = self._strict
        if ticks:
            opt.delegate_time_scale = opt.target_time_scale
        p = ctypes.c_void_p()
        _lib.check(lib.inspector_create(ctypes.byref(p), h.etdump, h.buf, ctypes.byref(opt),
                                        ctypes.byref(err)), err)
        insp = p.value
        if h.etrecord:
            rc = lib.inspector_link(insp, h.etrecord,
                                    self._method.encode() if self._method else None,
                                    ctypes.byref(err))
            if rc < 0:
                lib.inspector_free(insp)
                _lib.check(rc, err)
        return insp

    # --- the data ------------------------------------------------------------------------

    @property
    def event_blocks(self):
        if self._event_blocks is None:
            h = self._h
            self._event_blocks = [
                EventBlock._from_library(i, lib.inspector_block(h.insp, i).contents, h,
                                         self._source_time_scale, self._target_time_scale,
                                         self._converter, parser=self._parser)
                for i in range(lib.inspector_block_count(h.insp))]
            self._attach_references(self._event_blocks)
        self._h.check()
        return self._event_blocks

    def _attach_references(self, blocks):
        """reference_output of each block as upstream: the ETRecord's
        reference_outputs[method][bundled_input_index] with Python indexing,
        so the runtime's -1 (index not written) is the last reference."""
        h = self._h
        if not h.etrecord or not lib.etrecord_reference_outputs(h.etrecord):
            return
        method = (self._method or "forward").encode()
        count = None
        for b in blocks:
            idx = b.bundled_input_index
            if idx < 0:
                if count is None:
                    count = 0
                    while count < 1 << 16 and self._reference(method, count) is not None:
                        count += 1
                idx += count
            if idx >= 0:
                b.reference_output = self._reference(method, idx)

    def _reference(self, method, index):
        h = self._h
        err = _lib.new_error()
        count = ctypes.c_size_t()
        if lib.etrecord_reference(h.etrecord, method, index, None, 0, ctypes.byref(count),
                                  ctypes.byref(err)) < 0:
            return None
        ptrs = (ctypes.c_void_p * max(count.value, 1))()
        if lib.etrecord_reference(h.etrecord, method, index, ptrs, count.value,
                                  ctypes.byref(count), ctypes.byref(err)) < 0:
            return None
        return _tensor.as_type_all([_tensor.pytensor_array(_lib.PyTensor.from_address(ptrs[k]), h)
                                    for k in range(count.value)], h.tensor_type, h)

    @property
    def warnings(self):
        """The library's warnings (e.g. merged runs whose debug data differ)."""
        h = self._h
        return [lib.inspector_warning(h.insp, i).decode("utf-8", "replace")
                for i in range(lib.inspector_warning_count(h.insp))]

    def _report_options(self, include_units=True, include_delegate_debug_data=False):
        opt = _lib.options("report_options", lib.report_options_init)
        opt.include_units = bool(include_units)
        opt.include_delegate_debug_data = bool(include_delegate_debug_data)
        return opt

    # --- upstream's methods -----------------------------------------------------------------

    def to_dataframe(self, include_units=True, include_delegate_debug_data=False):
        import pandas as pd
        frames = [b.to_dataframe(include_units, include_delegate_debug_data)
                  for b in self.event_blocks]
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)

    def _text(self, fn, include_units, include_delegate_debug_data):
        insp = self._h.insp
        if self._converter is not None:
            warnings.warn("print_data_tabular/save_data_to_tsv print the CLI's durations "
                          "(delegated events scaled by target/source): "
                          "delegate_time_scale_converter only changes Event.perf_data",
                          stacklevel=3)
            if self._h.table_insp is None:
                self._h.table_insp = self._create(ticks=False)
            insp = self._h.table_insp
        opt = self._report_options(include_units, include_delegate_debug_data)
        err = _lib.new_error()
        with self._reading():
            return _lib.capture(lambda f: _lib.check(fn(f, insp, ctypes.byref(opt),
                                                        ctypes.byref(err)), err))

    def print_data_tabular(self, file=None, include_units=True, include_delegate_debug_data=False):
        """The profiling table, as upstream prints it (and the CLI)."""
        text = self._text(lib.report_table, include_units, include_delegate_debug_data)
        (file or sys.stdout).write(text)

    def save_data_to_tsv(self, file, include_units=True, include_delegate_debug_data=False):
        """The same rows as TSV, as upstream's pandas to_csv(file, sep="\\t"):
        upstream's columns only; `file` a path (".gz", ".bz2", ".xz" and
        ".zip" compressed, as pandas infers) or an open text or binary
        file."""
        self._check_output(file)
        text = _upstream_tsv(self._text(lib.report_tsv, include_units,
                                        include_delegate_debug_data))
        if isinstance(file, (str, bytes, os.PathLike)):
            _write_path(file, text)
        elif isinstance(file, (io.RawIOBase, io.BufferedIOBase)) or "b" in getattr(file, "mode",
                                                                                  ""):
            file.write(text.encode("utf-8"))
        else:
            file.write(text)

    def find_total_for_module(self, module_name):
        """Sum of the average times of the events inside module `module_name`,
        the name resolved as the CLI's --module: a module path ("body.fc1"),
        an nn_module_stack key, a type ("LayerNorm"), else part of a key (as
        upstream). An unknown name raises etcompare.Error with close names.
        Without an ETRecord: 0.0, as upstream."""
        _lib.text("find_total_for_module: module_name", module_name,
                  "a module path, an nn_module_stack key or a module type")
        if not self._h.etrecord:
            return 0.0
        # the library resolves the name (and refuses one that matches nothing);
        # with a converter the durations are Event.perf_data's, summed over the
        # events the library's resolution matches
        err = _lib.new_error()
        total, count, match = ctypes.c_double(), ctypes.c_size_t(), ctypes.c_int()
        with self._reading():
            _lib.check(lib.profile_module_total(self._h.insp, module_name.encode(),
                                                ctypes.byref(total), ctypes.byref(count),
                                                ctypes.byref(match), ctypes.byref(err)), err)
        if self._converter is None:
            return total.value
        return sum(e.perf_data.avg for block in self.event_blocks for e in block.events
                   if e.name != "OPERATOR_CALL" and e.perf_data is not None and
                   any(_module_matches(key, path, typ, module_name, match.value)
                       for frames in e.module_hierarchy.values() if frames
                       for key, (path, typ) in frames.items()))

    def get_op_list(self, event_block, show_delegated_ops=True):
        return {}  # upstream: not implemented

    def write_tensorboard_artifact(self, path):
        """Upstream's placeholder: does nothing (not implemented there)."""
        return None

    def get_vgf_neural_statistics(self):
        """Upstream parses the VGF backend's neural accelerator statistics
        from the delegate debug metadata; etcompare does not implement that
        format: NotImplementedError. The bytes are in each Event's
        raw_delegate_debug_metadatas (give them to upstream's
        executorch.devtools.inspector.vgf_neural_statistics parser)."""
        raise NotImplementedError(
            "get_vgf_neural_statistics: etcompare does not parse the VGF backend's neural "
            "statistics; read each Event's raw_delegate_debug_metadatas (bytes) and give them "
            "to upstream's parse_vgf_neural_statistics_delegate_metadata")

    def get_exported_program(self, graph=None):
        """The ETRecord's Edge program (or graph_map program `graph`): a
        printable Graph whose nodes carry name, op, inputs, handle, stack
        trace and module. None without an ETRecord (upstream logs a warning)."""
        if not self._h.etrecord:
            warnings.warn("Exported program is only available when a valid etrecord_path was "
                          "provided at the time of Inspector construction", stacklevel=2)
            return None
        from ._graph import exported_program
        return exported_program(self._h, graph, self._method)

    def get_reference_graph(self, graph=None):
        """The graph the numeric gap's reference run executes (upstream's
        get_reference_graph): a Graph whose nodes carry name, target,
        args (scale, zero point, ...) and debug handle."""
        return self.get_exported_program(graph)

    def calculate_numeric_gap(self, distance="MSE", disable_debug_handle_valdiation=False,
                              reference_graph=None, reference=None, block="Execute",
                              reference_dtype="float32", **thresholds):
        """Intermediate outputs against a reference, op by op (upstream's
        calculate_numeric_gap). `reference`: an .npz of AOT intermediates keyed
        by debug handle ("12", "12,13"), or another Inspector (a reference run
        with its debug buffer). Keywords: the thresholds min_snr, max_mse,
        min_cosine, max_abs; quant_params (a JSON file, as --quant-params);
        layout ("auto" or "none"); force (an ETRecord that does not fit its
        ETDump is a warning); keep_reference_values (default True; False:
        the reference graph's outputs are compared as they are computed and
        not kept, aot_intermediate_output is None (one None per output on
        a row of several) but for the first
        divergence, memory as the CLI's). Returns a pandas DataFrame (a list of dicts
        without pandas) with upstream's columns first.

        Without reference=, as upstream: the ETRecord's graph (reference_graph,
        default upstream's) run by the library's reference executor in
        reference_dtype (float32 as upstream's AOT values; "float64" for
        the CLI's default) on the run's inputs (inputs=, bundled_program=,
        else the record's). `distance` may be a NumericalComparatorBase:
        its compare() gets the aligned pairs, as upstream's."""
        from ._numgap import numeric_gap
        block = _lib.text("block", block, "an event block name, e.g. \"Execute\"")
        reference_graph = _lib.text("reference_graph", reference_graph,
                                    "a graph_map name or a method name", optional=True)
        with self._reading(reference):
            return numeric_gap(self, distance, reference, block, thresholds, reference_graph,
                               reference_dtype, disable_debug_handle_valdiation)

    def compare(self, reference=None, min_snr=None, max_mse=None, min_cosine=None, max_abs=None,
                block="Execute", method=None, pair_by="auto", force=None):
        """Program outputs against reference outputs (an .npz, a torch.save
        file, or None for the ETRecord's reference_outputs) with the accuracy
        gate: an AccuracyResult whose `passed` says whether every output
        passed. Reference outputs of another program (not one output can be
        compared, and some have another shape) raise etcompare.MismatchError
        naming both files, as the CLI's exit 3; `force` (default: the
        Inspector's force=) makes that a warning."""
        force = self._force if force is None else _lib.flag("force", force)
        block = _lib.text("block", block, "an event block name, e.g. \"Execute\"")
        method = _lib.text("method", method, "an ETRecord method name", optional=True)
        from ._compare import accuracy
        with self._reading(reference):
            return accuracy(self, reference, dict(min_snr=min_snr, max_mse=max_mse,
                                                  min_cosine=min_cosine, max_abs=max_abs),
                            block, self._method if method is None else method, pair_by, force)


# dataclasses.fields / asdict / replace see upstream's fields on these classes
# (is_dataclass is True); __init__, __eq__ and __repr__ stay etcompare's
for _cls, _fields in ((Event, _EventFields), (EventBlock, _EventBlockFields)):
    _cls.__dataclass_fields__ = _fields.__dataclass_fields__
    _cls.__dataclass_params__ = _fields.__dataclass_params__
