"""Loading libetcompare and describing its C API to ctypes.

The library is looked for, in order: the file named by ETCOMPARE_LIBRARY;
a libetcompare.so* in this package's directory; the checkout's build/
(python/../build); the system loader path. The public structs are mirrored
here field by field (include/etcompare/*.h); at load time each mirror's size
is checked against the library's own etc_struct_size, so a library built
from other headers is an ImportError, never a wrong number.
"""
import ctypes
import math
import os

from ._errors import Error, error_for

c_int, c_uint32, c_int32, c_int64, c_uint64 = (ctypes.c_int, ctypes.c_uint32, ctypes.c_int32,
                                               ctypes.c_int64, ctypes.c_uint64)
c_bool, c_double, c_float = ctypes.c_bool, ctypes.c_double, ctypes.c_float
c_size_t = ctypes.c_size_t
c_char_p, c_void_p, POINTER = ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER


# --- mirrors of the public structs --------------------------------------------------------

class EtcError(ctypes.Structure):
    _fields_ = [("status", c_int), ("offset", c_int64), ("file", ctypes.c_char * 256),
                ("message", ctypes.c_char * 1024)]


class NumgapMatch(ctypes.Structure):
    """etc_numgap_match: how well candidate inputs reproduce a run."""
    _fields_ = [("reproduced", ctypes.c_long), ("snr", c_double)]


class EtcStr(ctypes.Structure):
    _fields_ = [("ptr", c_void_p), ("len", c_size_t)]

    def text(self):
        return ctypes.string_at(self.ptr, self.len).decode("utf-8", "replace") if self.len else ""


class Run(ctypes.Structure):
    _fields_ = [("name", EtcStr), ("bundled_input_index", c_int32), ("allocator_count", c_uint32),
                ("event_count", c_uint32)]


class PerfStats(ctypes.Structure):
    _fields_ = [(k, c_double) for k in ("p10", "p50", "p90", "avg", "min", "max")]


class Value(ctypes.Structure):
    _fields_ = [("type", c_int), ("is_output", c_bool), ("has_output", c_bool),
                ("int_val", c_int64), ("bool_val", c_bool), ("float_val", c_float),
                ("double_val", c_double), ("tensor_count", c_uint32), ("dump_", c_void_p),
                ("tensors_pos_", c_size_t), ("run_", c_uint32), ("event_", c_uint32)]


class Tensor(ctypes.Structure):
    _fields_ = [("scalar_type", c_int), ("ndim", c_uint32), ("nstrides", c_uint32),
                ("sizes_le", c_void_p), ("strides_le", c_void_p), ("offset", c_int64),
                ("numel", c_uint64), ("nbytes", c_uint64), ("data", c_void_p)]


class PyTensor(ctypes.Structure):
    _fields_ = [("tensor", Tensor), ("storage", c_void_p), ("storage_nbytes", c_uint64),
                ("storage_offset", c_int64), ("storage_key", c_char_p), ("location", c_char_p),
                ("contiguous", c_bool), ("is_parameter", c_bool), ("requires_grad", c_bool)]


class ModuleFrame(ctypes.Structure):
    _fields_ = [("key", c_char_p), ("path", c_char_p), ("type", c_char_p)]


class GraphArg(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("kind", c_char_p), ("value", c_char_p)]


class GraphNode(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("target", c_char_p), ("op", c_char_p), ("inputs", c_char_p),
                ("debug_handle", c_int64), ("stack_trace", c_char_p),
                ("source_fn_stack", c_char_p), ("nn_module_stack", c_char_p),
                ("module_depth", c_uint32), ("modules", c_void_p), ("source_line", c_char_p),
                ("arg_count", c_uint32), ("args", c_void_p),
                ("output_count", c_uint32), ("outputs", POINTER(c_char_p))]


class InspectorEvent(ctypes.Structure):
    _fields_ = [("name", EtcStr), ("instruction_id", c_int32), ("delegate_debug_id_int", c_int32),
                ("delegate_debug_id_str", EtcStr), ("is_delegated_op", c_bool),
                ("has_perf", c_bool), ("run_count", c_uint32), ("raw", POINTER(c_double)),
                ("start_times", POINTER(c_uint64)), ("stats", PerfStats),
                ("time_scale", c_int), ("metadata", POINTER(c_void_p)),
                ("metadata_len", POINTER(c_uint32)),
                ("debug_count", c_uint32), ("debug", c_void_p), ("first_run_event", c_uint32),
                ("debug_handle_count", c_uint32), ("debug_handles", POINTER(c_int64)),
                ("node_count", c_uint32), ("nodes", POINTER(c_void_p)),
                ("delegate_backend_name", c_char_p), ("num_outputs", c_int64)]


class AllocatorUsage(ctypes.Structure):
    _fields_ = [("name", EtcStr), ("count", c_uint64), ("bytes", c_uint64)]


class EventBlock(ctypes.Structure):
    _fields_ = [("name", EtcStr), ("bundled_input_index", c_int32), ("run_count", c_uint32),
                ("runs", POINTER(c_uint32)), ("event_count", c_size_t), ("events", c_void_p),
                ("outputs", c_void_p), ("output_start", POINTER(c_uint32)),
                ("allocators", c_void_p), ("alloc_start", POINTER(c_uint32))]


# int (*delegate_time_scale_of)(void *ctx, int32_t instruction_id)
DelegateTimeScaleOf = ctypes.CFUNCTYPE(c_int, c_void_p, c_int32)


class InspectorOptions(ctypes.Structure):
    _fields_ = [("source_time_scale", c_int), ("target_time_scale", c_int), ("strict", c_bool),
                ("delegate_time_scale", c_int), ("delegate_time_scale_of", DelegateTimeScaleOf),
                ("delegate_time_scale_ctx", c_void_p)]


class Metrics(ctypes.Structure):
    _fields_ = [("count", c_uint64), ("snr_db", c_double), ("mse", c_double), ("cosine", c_double),
                ("l1", c_double), ("max_abs", c_double), ("max_rel", c_double),
                ("max_abs_index", c_uint64), ("nan_count", c_uint64),
                ("nan_mismatch_count", c_uint64), ("mismatch_count", c_uint64),
                ("identical", c_bool), ("exact", c_bool), ("notes", ctypes.c_uint)]


class Values(ctypes.Structure):
    _fields_ = [("count", c_uint64), ("scalar_type", c_int), ("read", c_void_p), ("src", c_void_p)]


class ReferenceSet(ctypes.Structure):
    _fields_ = [("torchsave", c_void_p), ("npz", c_void_p), ("name", c_char_p),
                ("bundled", c_void_p)]


class AccuracyOptions(ctypes.Structure):
    _fields_ = [("block", c_char_p), ("method", c_char_p), ("pair_by", c_int),
                ("min_snr", c_double), ("max_mse", c_double), ("min_cosine", c_double),
                ("max_abs", c_double), ("progress", c_void_p), ("progress_ctx", c_void_p),
                ("pair_min_margin_db", c_double), ("pair_floor_db", c_double),
                ("strict_pairing", c_bool)]


class AccuracyRow(ctypes.Structure):
    _fields_ = [("block", c_uint32), ("run", c_uint32), ("etdump_run", c_uint32),
                ("reference", c_int32), ("output", c_uint32), ("shape", ctypes.c_char * 96),
                ("reference_shape", ctypes.c_char * 96), ("dtype", c_char_p),
                ("reference_dtype", c_char_p), ("has_metrics", c_bool), ("metrics", Metrics),
                ("status", c_int), ("reason", ctypes.c_char * 160)]


class NumgapReference(ctypes.Structure):
    _fields_ = [("insp", c_void_p), ("npz", c_void_p), ("name", c_char_p), ("graph", c_void_p),
                ("inputs", c_void_p), ("input_count", c_size_t)]


class NumgapOptions(ctypes.Structure):
    _fields_ = [("block", c_char_p), ("min_snr", c_double), ("max_mse", c_double),
                ("min_cosine", c_double), ("max_abs", c_double), ("distance", c_int),
                ("layout", c_int), ("quant_params", c_char_p), ("force", c_bool),
                ("drop_reference_values", c_bool), ("score_program_outputs", c_bool)]


class ReportOptions(ctypes.Structure):
    _fields_ = [("include_units", c_bool), ("include_delegate_debug_data", c_bool),
                ("max_values", c_uint32), ("accuracy", c_void_p), ("numgap", c_void_p),
                ("profile", c_void_p), ("profile_tables", ctypes.c_uint), ("perfdiff", c_void_p),
                ("numgap_runs", c_void_p), ("numgap_run_count", c_size_t),
                ("numgap_dist", c_void_p), ("numgap_more", c_void_p),
                ("numgap_more_names", c_void_p), ("numgap_more_count", ctypes.c_size_t),
                ("taps", c_void_p)]


# Structs read in arrays or whole: their size must be the library's exactly.
EXACT = {"error": EtcError, "str": EtcStr, "run": Run, "value": Value, "tensor": Tensor, "pytensor": PyTensor,
         "module_frame": ModuleFrame, "graph_arg": GraphArg, "graph_node": GraphNode,
         "inspector_event": InspectorEvent,
         "allocator_usage": AllocatorUsage, "event_block": EventBlock, "metrics": Metrics,
         "values": Values, "accuracy_row": AccuracyRow, "perf_stats": PerfStats}
# Option structs: filled by the library's *_init in a buffer of the library's
# size; only their leading fields are set here, so the library may add fields.
class RefgraphOptions(ctypes.Structure):
    _fields_ = [("graph", c_char_p), ("method", c_char_p), ("dtype", c_int)]


class RefTensor(ctypes.Structure):
    _fields_ = [("dtype", c_int), ("rank", c_uint32), ("shape", c_void_p), ("numel", c_uint64),
                ("data", c_void_p)]


EXACT["reftensor"] = RefTensor


class PlotOptions(ctypes.Structure):
    _fields_ = [("dir", c_char_p), ("gnuplot", c_char_p), ("template_dir", c_char_p),
                ("batch", c_void_p), ("style", c_void_p)]


class PlotResult(ctypes.Structure):
    _fields_ = [("pngs_written", c_int), ("scripts_written", c_int),
                ("gnuplot_missing", c_bool)]


class PlotItem(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("title", c_char_p), ("png", c_char_p), ("made", c_bool)]


# etc_plot_read_fn: int (*)(void *ctx, uint64_t first, size_t count, double *dst, etc_error *)
PlotReadFn = ctypes.CFUNCTYPE(c_int, c_void_p, c_uint64, c_size_t, POINTER(c_double),
                              c_void_p)

EXACT["plot_options"] = PlotOptions
EXACT["plot_result"] = PlotResult
EXACT["plot_item"] = PlotItem

PREFIX = {"refgraph_options": RefgraphOptions, "inspector_options": InspectorOptions, "accuracy_options": AccuracyOptions,
          "numgap_options": NumgapOptions, "report_options": ReportOptions,
          "reference_set": ReferenceSet, "numgap_reference": NumgapReference}

# (name, restype, argtypes): the functions this package calls.
_P = c_void_p
_PP = POINTER(c_void_p)
_E = POINTER(EtcError)
FUNCTIONS = [
    ("etc_version", c_char_p, []),
    ("etc_status_str", c_char_p, [c_int]),
    ("etc_struct_size", c_size_t, [c_char_p]),
    ("etc_time_scale_parse", c_int, [c_char_p, POINTER(c_int)]),
    ("etc_time_scale_name", c_char_p, [c_int]),
    ("etc_etdump_open", c_int, [_PP, c_char_p, _E]),
    ("etc_etdump_wrap", c_int, [_PP, c_void_p, c_size_t, c_char_p, _E]),
    ("etc_etdump_free", None, [_P]),
    ("etc_etdump_name", c_char_p, [_P]),
    ("etc_etdump_run_count", c_uint32, [_P]),
    ("etc_debug_buffer_open", c_int, [_PP, c_char_p, _E]),
    ("etc_debug_buffer_free", None, [_P]),
    ("etc_debug_buffer_size", c_uint64, [_P]),
    ("etc_debug_buffer_set_max_inflate", c_int, [_P, c_char_p, _E]),
    ("etc_guard_install_process_handler", c_int, [_E]),
    ("etc_guard_check_file", c_int, [c_char_p, _E]),
    ("etc_guard_watch_copy", c_int, [c_void_p, c_size_t, c_void_p, _E]),
    ("etc_guard_unwatch_copy", None, [c_void_p]),
    ("etc_etrecord_open", c_int, [_PP, c_char_p, _E]),
    ("etc_etrecord_free", None, [_P]),
    ("etc_etrecord_method_index", c_int, [_P, c_char_p]),
    ("etc_etrecord_default_method", c_int, [_P]),
    ("etc_etrecord_name", c_char_p, [_P]),
    ("etc_etrecord_method_count", c_size_t, [_P]),
    ("etc_plot_bars", c_int, [_P, c_char_p, c_char_p, c_char_p, c_size_t, POINTER(c_char_p),
                              POINTER(c_double), _P, _E]),
    ("etc_plot_histogram", c_int, [_P, c_char_p, c_char_p, POINTER(c_double), c_size_t,
                                   c_size_t, _P, _E]),
    ("etc_plot_heatmap", c_int, [c_char_p, POINTER(c_double), c_uint64, c_uint64, c_char_p,
                                 _E]),
    ("etc_plot_error_map", c_int, [_P, c_char_p, c_char_p, c_char_p, c_char_p, c_char_p,
                                   _P, _P, c_uint64, c_uint64, _P, _E]),
    ("etc_plot_batch_create", c_int, [_PP, _E]),
    ("etc_plot_batch_free", None, [_P]),
    ("etc_plot_batch_run", c_int, [_P, _P, _P, _E]),
    ("etc_plot_batch_count", c_size_t, [_P]),
    ("etc_plot_batch_item", POINTER(PlotItem), [_P, c_size_t]),
    ("etc_plot_batch_write_index", c_int, [_P, c_void_p, _E]),
    ("etc_plot_set_begin", c_int, [_P, c_char_p, POINTER(c_void_p), _E]),
    ("etc_plot_set_commit", c_int, [_P, c_void_p, c_char_p, _E]),
    ("etc_plot_set_discard", None, [c_void_p]),
    ("etc_sniff_file", c_int, [c_char_p, POINTER(c_int), _E]),
    ("etc_file_kind_name", c_char_p, [c_int]),
    ("etc_profile_module_total", c_int, [_P, c_char_p, POINTER(c_double), POINTER(c_size_t),
                                         POINTER(c_int), _E]),
    ("etc_etrecord_method", c_char_p, [_P, c_size_t]),
    ("etc_etrecord_node_count", c_size_t, [_P, c_size_t]),
    ("etc_etrecord_node", POINTER(GraphNode), [_P, c_size_t, c_size_t]),
    ("etc_etrecord_graph_nodes", c_int, [_P, c_char_p, POINTER(c_void_p), POINTER(c_size_t), _E]),
    ("etc_etrecord_graph_count", c_size_t, [_P]),
    ("etc_etrecord_graph_name", c_char_p, [_P, c_size_t]),
    ("etc_etrecord_reference_outputs", c_void_p, [_P]),
    ("etc_etrecord_reference", c_int, [_P, c_char_p, c_size_t, POINTER(c_void_p), c_size_t,
                                       POINTER(c_size_t), _E]),
    ("etc_inspector_options_init", None, [_P]),
    ("etc_inspector_create", c_int, [_PP, _P, _P, _P, _E]),
    ("etc_inspector_free", None, [_P]),
    ("etc_inspector_link", c_int, [_P, _P, c_char_p, _E]),
    ("etc_inspector_block_count", c_size_t, [_P]),
    ("etc_inspector_block", POINTER(EventBlock), [_P, c_size_t]),
    ("etc_inspector_module_total", c_double, [_P, c_char_p, POINTER(c_size_t)]),
    ("etc_inspector_warning_count", c_size_t, [_P]),
    ("etc_inspector_warning", c_char_p, [_P, c_size_t]),
    ("etc_value_tensor", c_int, [_P, c_uint32, _P, POINTER(Tensor), _E]),
    ("etc_tensor_to_double", None, [_P, c_uint64, c_size_t, POINTER(c_double)]),
    ("etc_report_options_init", None, [_P]),
    ("etc_report_table", c_int, [_P, _P, _P, _E]),
    ("etc_report_tsv", c_int, [_P, _P, _P, _E]),
    ("etc_report_graph", c_int, [_P, _P, c_char_p, _E]),
    ("etc_report_accuracy", c_int, [_P, _P, _P, ctypes.c_uint, _E]),
    ("etc_report_numgap", c_int, [_P, _P, _E]),
    ("etc_report_numgap_json", c_int, [_P, _P, _E]),
    ("etc_report_numgap_tsv", c_int, [_P, _P, _E]),
    ("etc_torchsave_open", c_int, [_PP, c_char_p, _E]),
    ("etc_torchsave_free", None, [_P]),
    ("etc_npz_open", c_int, [_PP, c_char_p, _E]),
    ("etc_npz_free", None, [_P]),
    ("etc_npz_warning", c_char_p, [_P]),
    ("etc_torchsave_warning", c_char_p, [_P]),
    ("etc_etrecord_warning_count", c_size_t, [_P]),
    ("etc_etrecord_warning", c_char_p, [_P, c_size_t]),
    # the reference run (reference.h) and its inputs
    ("etc_refgraph_options_init", None, [_P]),
    ("etc_refgraph_load", c_int, [_PP, _P, _P, _E]),
    ("etc_refgraph_free", None, [_P]),
    ("etc_refgraph_name", c_char_p, [_P]),
    ("etc_refgraph_method", c_char_p, [_P]),
    ("etc_refinputs_from_record", c_int, [_PP, _P, _P, c_char_p, c_size_t, _E]),
    ("etc_refinputs_from_npz", c_int, [_PP, _P, _P, _E]),
    ("etc_refinputs_from_torchsave", c_int, [_PP, _P, _P, _E]),
    ("etc_refinputs_count", c_size_t, [_P]),
    ("etc_refinputs_tensors", _P, [_P]),
    ("etc_refinputs_free", None, [_P]),
    ("etc_torchsave_open", c_int, [_PP, c_char_p, _E]),
    ("etc_torchsave_free", None, [_P]),
    ("etc_etrecord_representative_inputs", _P, [_P]),
    ("etc_etrecord_has_member", c_bool, [_P, c_char_p]),
    ("etc_etrecord_member", c_int, [_P, c_char_p, POINTER(c_void_p), POINTER(c_size_t), _E]),
    ("etc_numgap_inputs_score", c_int, [_P, c_char_p, _P, _P, c_size_t, POINTER(c_double), _E]),
    ("etc_numgap_inputs_match", c_int,
     [_P, c_char_p, _P, _P, c_size_t, POINTER(NumgapMatch), _E]),
    ("etc_numgap_match_better", c_bool, [POINTER(NumgapMatch), POINTER(NumgapMatch)]),
    ("etc_numgap_record_outputs_score_at", c_int,
     [_P, c_size_t, ctypes.c_uint32, _P, c_char_p, POINTER(c_double),
      POINTER(ctypes.c_long), _E]),
    ("etc_inspector_block_find", _P, [_P, c_char_p, POINTER(c_size_t)]),
    ("etc_check_etrecord", c_int, [_P, c_char_p, _E]),
    ("etc_numgap_reference_block", ctypes.c_long, [_P, c_size_t, _P]),
    ("etc_check_debug_buffer", c_int, [_P, c_char_p, _E]),
    ("etc_check_bundled_program", c_int, [_P, _P, c_char_p, _E]),
    ("etc_bundled_open", c_int, [_PP, c_char_p, _E]),
    ("etc_bundled_free", None, [_P]),
    ("etc_bundled_method_find", ctypes.c_long, [_P, c_char_p]),
    ("etc_bundled_test_case_count", c_size_t, [_P, c_size_t]),
    ("etc_bundled_value_count", c_size_t, [_P, c_size_t, c_size_t, c_bool]),
    ("etc_bundled_tensor", c_int, [_P, c_size_t, c_size_t, c_bool, c_size_t, POINTER(RefTensor),
                                   _E]),
    ("etc_accuracy_options_init", None, [_P]),
    ("etc_accuracy_run", c_int, [_PP, _P, _P, _P, _E]),
    ("etc_accuracy_free", None, [_P]),
    ("etc_accuracy_row_count", c_size_t, [_P]),
    ("etc_accuracy_row_at", POINTER(AccuracyRow), [_P, c_size_t]),
    ("etc_accuracy_failures", c_size_t, [_P]),
    ("etc_accuracy_worst", ctypes.c_long, [_P]),
    ("etc_accuracy_pair_note", c_char_p, [_P]),
    ("etc_accuracy_reference_source", c_char_p, [_P]),
    ("etc_row_status_str", c_char_p, [c_int]),
    ("etc_numgap_options_init", None, [_P]),
    ("etc_numgap_distance_parse", c_int, [c_char_p, POINTER(c_int)]),
    ("etc_numgap_run", c_int, [_PP, _P, _P, _P, _E]),
    ("etc_numgap_free", None, [_P]),
    ("etc_numgap_row_count", c_size_t, [_P]),
    ("etc_numgap_row_tensor", POINTER(Tensor), [_P, c_size_t]),
    ("etc_numgap_row_reference_tensor", POINTER(Tensor), [_P, c_size_t]),
    ("etc_numgap_row_reference_preview", POINTER(Tensor), [_P, c_size_t, _P, _P]),
    ("etc_numgap_first_divergence", ctypes.c_long, [_P]),
    ("etc_values_from_doubles", None, [POINTER(Values), POINTER(c_double), c_uint64]),
    ("etc_metrics_compare", c_int, [POINTER(Values), POINTER(Values), POINTER(Metrics), _E]),
]


def _candidates():
    env = os.environ.get("ETCOMPARE_LIBRARY")
    if env:
        yield env, "ETCOMPARE_LIBRARY"
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(here)):
        if name.startswith("libetcompare.so"):
            yield os.path.join(here, name), "the package directory"
    build = os.path.join(os.path.dirname(os.path.dirname(here)), "build")
    for name in ("libetcompare.so", "libetcompare.so.0"):
        if os.path.exists(os.path.join(build, name)):
            yield os.path.join(build, name), "the checkout's build/"
    import ctypes.util  # only here: it costs imports at every start
    found = ctypes.util.find_library("etcompare")
    for name in ([found] if found else []) + ["libetcompare.so.0", "libetcompare.so"]:
        yield name, "the system loader path"


class _Lib:
    """The loaded library: its functions as attributes, plus the path and
    the sizes of its structs (`stride`)."""

    def __init__(self):
        tried = []
        dll = None
        for path, where in _candidates():
            try:
                dll = ctypes.CDLL(path)
                self.path, self.found_in = path, where
                break
            except OSError as e:
                tried.append(f"{path} ({where}): {e}")
        if dll is None:
            raise ImportError("etcompare: cannot load libetcompare: build it "
                              "(cmake --build build) or set ETCOMPARE_LIBRARY; tried " +
                              "; ".join(tried))
        self.dll = dll
        for name, res, args in FUNCTIONS:
            try:
                fn = getattr(dll, name)
            except AttributeError:
                raise ImportError(f"etcompare: {self.path} has no {name}: the library is older "
                                  "than this package")
            fn.restype, fn.argtypes = res, args
            setattr(self, name[4:], fn)
        self.stride = {}
        for name, struct in list(EXACT.items()) + list(PREFIX.items()):
            size = self.struct_size(name.encode())
            mine = ctypes.sizeof(struct)
            if name in EXACT and size != mine or size < mine:
                raise ImportError(f"etcompare: {self.path}: struct etc_{name} is {size} bytes "
                                  f"there but {mine} in this package: the package and the "
                                  "library come from different versions")
            self.stride[name] = size
        self.version = self.version().decode()


lib = _Lib()
# A file truncated by another process while a numpy view (or the library)
# reads its mapping would end the interpreter with SIGBUS: the library's
# process handler gives the read zero pages instead and marks the file, and
# check_files (called after every call that reads a mapped file, and by the
# tensor accessors) turns the mark into etcompare.Error.
_install_err = EtcError()
if lib.guard_install_process_handler(ctypes.byref(_install_err)) < 0:
    raise ImportError("etcompare: " + _install_err.message.decode("utf-8", "replace"))
libc = ctypes.CDLL(None)
libc.open_memstream.restype = c_void_p
libc.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
libc.fclose.argtypes = [c_void_p]
libc.fflush.argtypes = [c_void_p]
libc.free.argtypes = [c_void_p]
STATUS = {0: "ok", -1: "usage error", -2: "I/O error", -3: "format error", -4: "out of memory",
          -5: "limit exceeded", -6: "unsupported", -7: "mismatch"}


def new_error():
    return EtcError()


def check(rc, err):
    """Raises Error with the library's message when `rc` is a failure."""
    if rc < 0:
        msg = err.message.decode("utf-8", "replace") or lib.status_str(rc).decode()
        raise error_for(msg, lib.status_str(rc).decode(), err.file.decode("utf-8", "replace"),
                        err.offset)
    return rc


def warn_opened(kind, handle, stacklevel=3):
    """warnings.warn each warning of a file just opened (kind "npz",
    "torchsave" or "etrecord"), as the CLI prints them: bytes after a zip
    archive's end that were ignored, reference outputs it cannot read."""
    import warnings
    if not handle:
        return
    if kind == "etrecord":
        msgs = [lib.etrecord_warning(handle, i) for i in range(lib.etrecord_warning_count(handle))]
    else:
        msgs = [getattr(lib, kind + "_warning")(handle)]
    for m in msgs:
        if m:
            warnings.warn(m.decode("utf-8", "replace"), stacklevel=stacklevel)


def check_files(paths):
    """Raises Error "FILE: changed while being read ..." when one of the
    mapped files at `paths` (bytes, as given to the library) was truncated
    while it was read (a read of it since saw zeros, not the file)."""
    err = None
    for p in paths:
        if p is None:
            continue
        if err is None:
            err = new_error()
        check(lib.guard_check_file(p, ctypes.byref(err)), err)


class Owner:
    """Base of the objects that own library handles (raw pointers freed by
    __del__): a copy or an unpickled object would free them a second time,
    or in another process read memory that is not there. Copying and
    pickling raise TypeError instead."""
    _what = "this etcompare object"
    _fix = "make a new one from the same files"

    def _refuse(self, *_args):
        raise TypeError(f"{self._what} holds open files and cannot be copied, deep-copied or "
                        f"pickled; {self._fix}")

    __copy__ = __deepcopy__ = __reduce_ex__ = __reduce__ = _refuse


class View(Owner):
    """Base of the objects that lead to an Owner (an Inspector, its blocks
    and events, a Graph, ...): copy.copy shares the owner, as a reference
    does; a deep copy or a pickle raises TypeError."""

    def _refuse(self, *_args):
        raise TypeError(f"{self._what} holds open files and cannot be deep-copied or pickled; "
                        f"{self._fix}")

    __deepcopy__ = __reduce_ex__ = __reduce__ = _refuse

    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new


def file_id(path):
    """(st_dev, st_ino, st_size, st_mtime_ns) of the file at `path`, None
    when it cannot be read."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def check_rewritten(path, fid, role, fix):
    """Raises Error "PATH: the ROLE changed since it was opened" when the
    file at `path` is still the one opened (same device and inode: its
    mapping shows what is in it now) but its size or modification time is
    not `fid`'s: rewritten in place (cp over it, a new capture written to
    the same name). A file deleted or replaced by another (renamed over it)
    since is not an error: the mapping still holds the file as opened."""
    if fid is None:
        return
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if (st.st_dev, st.st_ino) != fid[:2] or (st.st_size, st.st_mtime_ns) == fid[2:]:
        return
    name = os.fsdecode(path)
    if st.st_size < fid[2]:  # the guard's words for a truncated mapping (check_files)
        raise Error(f"{name}: changed while being read (truncated by another process?): the "
                    f"{role} is {st.st_size} bytes, {fid[2]} when it was opened; {fix}",
                    "I/O error", name)
    raise Error(f"{name}: the {role} changed since it was opened (modified in place: "
                f"{fid[2]} bytes then, {st.st_size} now, a later modification time): its data "
                f"may no longer be what was read before; {fix}", "I/O error", name)


def flag(name, v):
    """A keyword that takes True or False: "no" or 0 are not taken for one."""
    if not isinstance(v, bool) and type(v).__name__ != "bool_":  # numpy.bool_ too
        raise TypeError(f"{name} must be True or False, not {v!r}")
    return bool(v)


def text(name, v, what, optional=False):
    """A keyword that takes a str (`what` says which, for the message): None
    when `optional` and not given; TypeError naming the keyword for another
    type (bytes, a number: it raised AttributeError 'encode' from inside),
    ValueError for a NUL in it (the library would read the name up to it)."""
    if v is None and optional:
        return None
    if not isinstance(v, str):
        raise TypeError(f"{name} must be a str ({what}), not {v!r}")
    if "\0" in v:
        raise Error(f"{name}: {v!r} holds a NUL character; give {what} without it",
                    "usage error")
    return v


# The thresholds' rules are the CLI's (src/cli/args.c, check_values): a finite
# number within [lo, hi].
_THRESHOLDS = {"min_snr": (-math.inf, math.inf, "a finite number (dB)"),
               "max_mse": (0.0, math.inf, "a finite number >= 0"),
               "min_cosine": (-1.0, 1.0, "a number from -1 to 1"),
               "max_abs": (0.0, math.inf, "a finite number >= 0")}


def threshold(name, v):
    """Threshold `name` as a float, None when not given; Error (a ValueError)
    naming it and the rule for a value the CLI refuses (NaN, inf, out of
    range, not a number)."""
    if v is None:
        return None
    lo, hi, what = _THRESHOLDS[name]
    try:
        x = math.nan if isinstance(v, bool) else float(v)
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and lo <= x <= hi):
        raise Error(f"{name} takes {what}, not {v!r}", "usage error")
    return x


def inflate_spec(v):
    """max_inflate= as the library's --max-inflate spec: None (the default
    cap), an int (bytes), "none", "8G" or "64x"."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise Error(f"max_inflate must be a byte count, 'FACTORx' or 'none', not {v!r}",
                    "usage error")
    return str(v).encode()


def options(name, init):
    """A library options struct: a zeroed buffer of the library's size, filled
    by its *_init, seen through the mirror of its leading fields."""
    buf = (ctypes.c_char * lib.stride[name])()
    if init is not None:
        init(buf)
    view = PREFIX[name].from_buffer(buf)
    view._buf = buf  # the view keeps the buffer alive
    return view


def at(ptr, i, struct, name):
    """Element i of a library array of `struct` starting at address `ptr`."""
    return struct.from_address(ptr + i * lib.stride[name])


def cstr(p):
    return p.decode("utf-8", "replace") if p else ""


def capture(write):
    """Runs write(FILE *) into memory and returns the text written."""
    buf, size = c_void_p(), c_size_t()
    f = libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise MemoryError("open_memstream failed")
    try:
        write(f)
    finally:
        libc.fclose(f)
        text = ctypes.string_at(buf, size.value) if buf.value else b""
        libc.free(buf)
    return text.decode("utf-8", "replace")


def path_arg(p):
    return os.fsencode(os.fspath(p))


def absolute(p):
    """A path keyword made absolute when it is given (os.path.abspath, str
    or bytes kept as given, an os.PathLike as its os.fspath), so that an
    os.chdir later does not make it name another file; anything else
    (None, "", a value of the wrong type) is returned as it is, for the
    caller's own check."""
    if isinstance(p, (str, bytes, os.PathLike)):
        p = os.fspath(p)
        if p:
            return os.path.abspath(p)
    return p


def swapped_hint(path, expected, keyword_for):
    """" (this file is an ETRecord: did you mean etrecord=?)" when the file at
    `path` is of another kind that another keyword takes; "" otherwise.
    `keyword_for`: {kind name: keyword}."""
    kind, err = c_int(), new_error()
    try:
        if lib.sniff_file(path_arg(path), ctypes.byref(kind), ctypes.byref(err)) < 0:
            return ""
    except (TypeError, ValueError):
        return ""
    name = (lib.file_kind_name(kind.value) or b"").decode()
    for what, keyword in keyword_for.items():
        if what in name and expected not in name:
            return f" (this file is {name}: did you mean {keyword}=?)"
    return ""
