"""The reference run of calculate_numeric_gap() without reference=: the
ETRecord's graph run by the library's reference executor (reference.h) on
the run's inputs, chosen as the CLI chooses them (src/cli/cmd_numgap.c):
the Inspector's inputs=; else the test case of the block's
bundled_input_index (bundled_program=, else the record's
representative_inputs); else, of the bundled test cases, the record's
example inputs and representative inputs, the one whose reference run
reproduces the most of the run's intermediate outputs, then its program
outputs best (the library's etc_numgap_inputs_match)."""
import ctypes
import math
import os
import warnings

from . import _lib
from ._errors import Error, MismatchError
from ._lib import lib

# numpy dtype kind+size -> etc_scalar_type
_SCALAR = {"u1": 0, "i1": 1, "i2": 2, "i4": 3, "i8": 4, "f2": 5, "f4": 6, "f8": 7, "b1": 11}


class _Inputs(_lib.Owner):
    """One candidate set of inputs: a ctypes array of etc_reftensor and what
    keeps its data alive."""
    _what, _fix = "the reference run's inputs", "call calculate_numeric_gap() again"

    def __init__(self, name, tensors, count, keep=(), owned=None):
        self.name, self.tensors, self.count = name, tensors, count
        self.keep, self.owned = list(keep), owned

    def __del__(self):
        if lib is not None and self.owned:
            lib.refinputs_free(self.owned)


class RefRun(_lib.Owner):
    """Owns the loaded graph, the bundled program and the chosen inputs."""
    _what, _fix = "the reference run", "call calculate_numeric_gap() again"

    def __init__(self):
        self.graph = self.bundled = None
        self.inputs = None
        self.notes = []

    def __del__(self):
        if lib is None:
            return
        self.inputs = None
        lib.refgraph_free(self.graph)
        lib.bundled_free(self.bundled)


def _owned(ptr, name):
    return _Inputs(name, lib.refinputs_tensors(ptr), lib.refinputs_count(ptr), owned=ptr)


def _from_arrays(arrays, name):
    import numpy as np
    arr = (_lib.RefTensor * max(len(arrays), 1))()
    keep = []
    for i, a in enumerate(arrays):
        if hasattr(a, "detach"):  # a torch tensor
            a = a.detach().cpu().numpy()
        a = np.ascontiguousarray(a)
        code = _SCALAR.get(f"{a.dtype.kind}{a.dtype.itemsize}")
        if code is None:
            raise Error(f"inputs[{i}]: dtype {a.dtype} is not supported by the reference run",
                        "usage error")
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        keep += [a, shape]
        arr[i].dtype, arr[i].rank, arr[i].numel = code, a.ndim, a.size
        arr[i].shape = ctypes.addressof(shape) if a.ndim else None
        arr[i].data = a.ctypes.data if a.size else None
    return _Inputs(name, ctypes.addressof(arr), len(arrays), keep + [arr])


def _from_file(g, path):
    err = _lib.new_error()
    p, out = ctypes.c_void_p(), ctypes.c_void_p()
    path_b = _lib.path_arg(path)
    if os.fsdecode(path).endswith(".npz"):
        _lib.check(lib.npz_open(ctypes.byref(p), path_b, ctypes.byref(err)), err)
        _lib.warn_opened("npz", p.value, stacklevel=5)
        try:
            _lib.check(lib.refinputs_from_npz(ctypes.byref(out), g, p, ctypes.byref(err)), err)
        finally:
            lib.npz_free(p)
    else:
        _lib.check(lib.torchsave_open(ctypes.byref(p), path_b, ctypes.byref(err)), err)
        _lib.warn_opened("torchsave", p.value, stacklevel=5)
        try:
            _lib.check(lib.refinputs_from_torchsave(ctypes.byref(out), g, p, ctypes.byref(err)),
                       err)
        finally:
            lib.torchsave_free(p)
    return _owned(out.value, os.fsdecode(path))


def _bundled_case(bp, g, tc):
    m = lib.bundled_method_find(bp, lib.refgraph_method(g))
    if m < 0 or tc >= lib.bundled_test_case_count(bp, m):
        return None
    n = lib.bundled_value_count(bp, m, tc, False)
    arr = (_lib.RefTensor * max(n, 1))()
    err = _lib.new_error()
    for i in range(n):
        if lib.bundled_tensor(bp, m, tc, False, i, ctypes.byref(arr[i]), ctypes.byref(err)) < 0:
            return None
    return _Inputs(f"BundledProgram test case {tc}", ctypes.addressof(arr), n, [arr])


def _record_case(g, rec, which, index):
    err = _lib.new_error()
    out = ctypes.c_void_p()
    if lib.refinputs_from_record(ctypes.byref(out), g, rec, which, index, ctypes.byref(err)) < 0:
        return None
    return _owned(out.value, f"ETRecord's {which.decode()}[{index}]")


def open_run(insp, block, reference_graph, dtype, method):
    """A RefRun with the graph loaded and the inputs chosen; raises Error
    (the library's message) when the graph cannot run."""
    h = insp._h
    if not h.etrecord:
        raise Error("calculate_numeric_gap without reference= runs the ETRecord's graph: give "
                    "etrecord= (or reference=: an .npz of AOT intermediates or an Inspector)",
                    "usage error")
    if dtype not in ("float32", "float64"):
        raise Error(f"reference_dtype must be float32 or float64, not '{dtype}'", "usage error")
    run = RefRun()
    err = _lib.new_error()
    go = _lib.options("refgraph_options", lib.refgraph_options_init)
    gname = reference_graph.encode() if reference_graph else None
    mname = method.encode() if method else None
    go.graph, go.method = gname, mname
    go.dtype = 1 if dtype == "float32" else 0
    p = ctypes.c_void_p()
    _lib.check(lib.refgraph_load(ctypes.byref(p), h.etrecord, ctypes.byref(go),
                                 ctypes.byref(err)), err)
    run.graph = p.value
    if insp._bundled_program is not None:
        bp = ctypes.c_void_p()
        _lib.check(lib.bundled_open(ctypes.byref(bp), _lib.path_arg(insp._bundled_program),
                                    ctypes.byref(err)), err)
        run.bundled = bp.value
        _bundled_belongs(insp, run.bundled)
    run.inputs = _choose(insp, run, block)
    return run


def _bundled_belongs(insp, bp):
    """The CLI's check of --bundled-program (consistency.h): the program the
    .bpte embeds is the one the ETDump's runs executed. MismatchError, or a
    warning with force=True."""
    err = _lib.new_error()
    try:
        _lib.check(lib.check_bundled_program(insp._h.insp, bp, b"bundled_program=",
                                             ctypes.byref(err)), err)
    except Error as e:
        if e.status != "mismatch":
            raise
        if not insp._force:
            raise type(e)(e.message + " (or force=True to compare anyway)", e.status, e.file,
                          e.offset) from None
        warnings.warn(e.message + " (force=True: compared anyway)", stacklevel=4)


def _choose(insp, run, block):
    g, rec, bp = run.graph, insp._h.etrecord, run.bundled
    given = insp._inputs
    if given is not None:
        if isinstance(given, (str, bytes, os.PathLike)):
            return _from_file(g, given)
        return _from_arrays(list(given), "inputs=")
    blk = next((b for b in insp.event_blocks if b.name == block), None)
    idx = blk.bundled_input_index if blk is not None else -1
    if idx >= 0 and bp:
        c = _bundled_case(bp, g, idx)
        if c is not None:
            return c
    if idx >= 0 and lib.etrecord_representative_inputs(rec):
        c = _record_case(g, rec, b"representative_inputs", idx)
        if c is not None:
            return c
    cands = []
    tc = 0
    while bp:
        c = _bundled_case(bp, g, tc)
        if c is None:
            break
        cands.append(c)
        tc += 1
    c = _record_case(g, rec, b"example_inputs", 0)
    if c is not None:
        cands.append(c)
    k = 0
    while lib.etrecord_representative_inputs(rec):
        c = _record_case(g, rec, b"representative_inputs", k)
        if c is None:
            break
        cands.append(c)
        k += 1
    if not cands:
        raise Error("no inputs for the reference run (no representative_inputs, no example "
                    "inputs, no bundled_program=): give inputs= (a list of arrays, an .npz with "
                    "arrays \"0\", \"1\", ... or a torch.save list)", "format error")
    if len(cands) == 1:
        _other_test_case(insp, run, block, cands[0], None)
        return cands[0]
    # the library's ranking (the CLI's): the run's intermediate outputs each
    # candidate reproduces first, then its program outputs
    best, best_m = cands[0], _lib.NumgapMatch(-1, math.nan)
    for c in cands:
        m = _lib.NumgapMatch(-1, math.nan)
        err = _lib.new_error()
        lib.numgap_inputs_match(insp._h.insp, block.encode(), g, c.tensors, c.count,
                                ctypes.byref(m), ctypes.byref(err))
        if c is cands[0] or lib.numgap_match_better(ctypes.byref(m), ctypes.byref(best_m)):
            best, best_m = c, m
    run.notes.append(f"reference run on the {best.name}: of {len(cands)} candidate inputs, it "
                     f"reproduces the most of the run's intermediate outputs "
                     f"({best_m.reproduced}) and its program outputs at SNR {best_m.snr:.4g} dB")
    _other_test_case(insp, run, block, best, best_m.snr)
    return best


def _other_test_case(insp, run, block, cand, snr):
    """The CLI's rule (cmd_numgap.c other_test_case): inputs guessed among
    candidates whose reference run does not reproduce the run's program
    outputs (below 20 dB) while the ETRecord's reference outputs of some test
    case do (20 dB or more, and 20 dB better) are not the run's: the gap on
    them would make up a divergence at the first op. MismatchError, or a
    warning with force=True."""
    h = insp._h
    b = ctypes.c_size_t(0)
    if not lib.etrecord_reference_outputs(h.etrecord) or \
            not lib.inspector_block_find(h.insp, block.encode(), ctypes.byref(b)):
        return
    err = _lib.new_error()
    if snr is None or math.isnan(snr):
        s = ctypes.c_double(math.nan)
        if lib.numgap_inputs_score(h.insp, block.encode(), run.graph, cand.tensors, cand.count,
                                   ctypes.byref(s), ctypes.byref(err)) < 0:
            return
        snr = s.value
    rec, k = ctypes.c_double(math.nan), ctypes.c_long(-1)
    if lib.numgap_record_outputs_score_at(h.insp, b.value, 0, h.etrecord, None,
                                          ctypes.byref(rec), ctypes.byref(k),
                                          ctypes.byref(err)) < 0:
        return
    if not (k.value >= 0 and snr < 20 and rec.value >= 20 and rec.value >= snr + 20):
        return
    msg = (f"the run's program outputs match the ETRecord's reference_outputs[{k.value}] "
           f"(SNR {rec.value:.4g} dB), but the reference run on the {cand.name} reproduces "
           f"them at SNR {snr:.4g} dB: the run was made with other inputs, which the ETRecord "
           f"does not have; give them (bundled_program=, inputs=)")
    if not insp._force:
        raise MismatchError(msg + " (or force=True to compare anyway)", "mismatch")
    warnings.warn(msg + " (force=True: compared anyway)", stacklevel=4)
