"""Inspector(..., tensor_type="torch"): torch tensors that share the debug
buffer's file pages (zero-copy) and whose writes are safe.

A 32 MiB float32 tensor in a debug buffer built here:
- it is a torch.Tensor with the numpy view's values, and torch does not
  warn about a non-writable array;
- zero-copy: its data lies in a private mapping of the debug buffer file, at
  the same file offset as the numpy view's data in the library's mapping,
  and reading all of it grows the process's anonymous memory (RssAnon) by
  far less than its size, where a copy (clone) grows it by the size;
- a write copies only the page it touches (RssAnon), changes that tensor
  (the one Event.debug_data keeps), and never the file, the library's
  mapping (the same Inspector's numpy view, its results) or another
  Inspector's tensors;
- the tensor keeps its mapping after the Inspector is gone;
- run_output and reference_output (the ETRecord's) are torch tensors too.
"""
import gc
import hashlib
import os
import sys
import warnings

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402
import test_python as T  # noqa: E402

E = T.setup()
import numpy as np  # noqa: E402

N = 8 << 20          # floats: 32 MiB
OFFSET = 4096 + 64   # the tensor's offset in the debug buffer
OUT_OFFSET = 64      # the program output's


def rss_anon():
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("RssAnon:"):
                return int(ln.split()[1]) * 1024
    return None


def file_offset(path, addr, nbytes):
    for lo, hi, off, perms in C.file_maps(path):
        if lo <= addr and addr + nbytes <= hi:
            return off + addr - lo, perms
    return None, None


def build(tmp):
    values = np.arange(N, dtype=np.float32) * np.float32(0.5)
    buf = os.path.join(tmp, "big_debug.bin")
    with open(buf, "wb") as f:
        f.write(b"\0" * OUT_OFFSET)
        f.write(np.array([1.0, 2.0, 3.0], np.float32).tobytes())
        f.write(b"\0" * (OFFSET - OUT_OFFSET - 12))
        f.write(values.tobytes())
    events = [
        {"debug_event": {"chain_index": 0, "instruction_id": 0, "debug_entry": {
            "val": "Tensor", "tensor": {"scalar_type": "FLOAT", "sizes": [N], "strides": [1],
                                        "offset": OFFSET}}}},
        {"profile_event": {"name": "native_call_relu.out", "chain_index": 0, "instruction_id": 0,
                           "start_time": 1000, "end_time": 3000}},
        {"debug_event": {"chain_index": C.OUT_CHAIN, "instruction_id": 1, "debug_entry": {
            "val": "Tensor", "output": {"bool_val": True},
            "tensor": {"scalar_type": "FLOAT", "sizes": [3], "strides": [1],
                       "offset": OUT_OFFSET}}}}]
    etdp = C.flatc_build(tmp, "big", {"version": 0,
                                      "run_data": [{"name": "Execute", "events": events}]})
    return etdp, buf, values


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    tmp = C.work_dir("python_torch")
    etdp, buf, values = build(tmp)
    try:
        import torch
    except ImportError:
        print("torch is not importable: only the ImportError is tested")
        try:
            E.Inspector(etdump_path=etdp, debug_buffer_path=buf, tensor_type="torch")
            raised = False
        except ImportError:
            raised = True
        C.check("torch missing: Inspector(tensor_type='torch') raises ImportError", raised)
        C.finish(tmp)
        return
    digest = sha(buf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        insp = E.Inspector(etdump_path=etdp, debug_buffer_path=buf, tensor_type="torch")
        ev = insp.event_blocks[0].events[0]
        t = ev.debug_data[0]
        out = insp.event_blocks[0].run_output[0]
    C.check("torch: debug_data[0] is a torch.Tensor of the buffer's values",
            isinstance(t, torch.Tensor) and t.dtype == torch.float32 and t.shape == (N,) and
            np.array_equal(t.numpy(), values))
    C.check("torch: no warning (torch warns on a non-writable numpy array)",
            not [w for w in caught if "writ" in str(w.message)], [str(w.message) for w in caught])
    C.check("torch: run_output is a torch.Tensor", isinstance(out, torch.Tensor) and
            out.tolist() == [1.0, 2.0, 3.0], out)
    C.check("torch: Event.debug_data is one list (the same tensor on every access)",
            ev.debug_data[0] is t)
    # the library's own view of the same bytes (the numpy path)
    lib_view = E._tensor.values(ev._debug_ptr, 0, ev._debug_count, insp._h.buf, insp._h)[0]
    lib_addr = lib_view.__array_interface__["data"][0]
    off_t, perms_t = file_offset(buf, t.data_ptr(), N * 4)
    off_n, perms_n = file_offset(buf, lib_addr, N * 4)
    C.check("zero copy: the tensor's data is the debug buffer file's bytes at the tensor's "
            "offset (a private mapping of the file), as the library's numpy view",
            off_t == OFFSET and off_n == OFFSET and perms_t.endswith("p"),
            (off_t, perms_t, off_n, perms_n, hex(t.data_ptr()), C.file_maps(buf)))
    C.check("zero copy: the library's mapping stays read-only, the tensor's is copy-on-write",
            perms_n.startswith("r-") and perms_t.startswith("rw"), (perms_n, perms_t))
    gc.collect()
    before = rss_anon()
    # every page read (a value each 2 KiB) with no large temporary: under
    # ASan freed temporaries stay in its quarantine and would count
    total = float(t[::512].double().sum())
    grown = rss_anon() - before
    C.check("zero copy: reading all 32 MiB grows RssAnon by < 4 MiB (file pages, not a copy)",
            grown < (4 << 20) and total == float(values[::512].astype(np.float64).sum()),
            f"grown {grown} bytes")
    before = rss_anon()
    copy = t.clone()
    grown_copy = rss_anon() - before
    C.check("the measure tells a copy: clone() grows RssAnon by >= 28 MiB",
            grown_copy >= (28 << 20), f"grown {grown_copy} bytes")
    del copy
    gc.collect()

    # writes: one page copied; the file, the library and other Inspectors unchanged
    before = rss_anon()
    t[0] = 42.0
    t[1] = -1.0
    grown_w = rss_anon() - before
    C.check("write: the tensor changes", t[0].item() == 42.0 and t[1].item() == -1.0)
    C.check("write: copy-on-write copies the page written (RssAnon grows < 1 MiB)",
            grown_w < (1 << 20), f"grown {grown_w} bytes")
    C.check("write: the file is unchanged", sha(buf) == digest)
    C.check("write: the library's mapping (its numpy view of the same bytes) is unchanged",
            lib_view[0] == 0.0 and lib_view[1] == 0.5, lib_view[:2])
    C.check("write: the tensor of the same Inspector is the one written",
            insp.event_blocks[0].events[0].debug_data[0][0].item() == 42.0)
    other = E.Inspector(etdump_path=etdp, debug_buffer_path=buf, tensor_type="torch")
    t2 = other.event_blocks[0].events[0].debug_data[0]
    C.check("write: another Inspector's tensor of the same file is unchanged",
            t2[0].item() == 0.0 and t2[1].item() == 0.5)
    df = insp.to_dataframe()
    C.check("write: the Inspector's own results are unchanged (its frame's p50)",
            df["p50 (ms)"].tolist()[0] == other.to_dataframe()["p50 (ms)"].tolist()[0])
    res = E.compare_results([out], [other.event_blocks[0].run_output[0]])
    C.check("compare_results takes the torch tensors", res["snr"][0] == float("inf") or
            res["snr"][0] > 300, res)
    del insp, ev, lib_view, other, t2, df
    gc.collect()
    C.check("lifetime: the tensor keeps its mapping after the Inspector is gone",
            t[0].item() == 42.0 and t[2].item() == 1.0 and
            file_offset(buf, t.data_ptr(), N * 4)[0] == OFFSET)
    del t, out
    gc.collect()
    C.check("lifetime: the mappings go with the last tensor", C.file_maps(buf) == [],
            C.file_maps(buf))

    # reference_output from the ETRecord (a stored zip member): a torch
    # tensor with the numpy values, in the ETRecord's file pages
    D = os.path.join(C.DATA, "realexport")
    args = dict(etdump_path=os.path.join(D, "mlp.etdp"), etrecord=os.path.join(D, "mlp.etrecord"),
                debug_buffer_path=os.path.join(D, "mlp_debug.bin"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tn, nn = E.Inspector(tensor_type="torch", **args), E.Inspector(**args)
    bt = [b for b in tn.event_blocks if b.run_output][0]
    bn = [b for b in nn.event_blocks if b.run_output][0]
    ref_t, ref_n = bt.reference_output[0], bn.reference_output[0]
    C.check("mlp: reference_output is a torch.Tensor with the numpy values",
            isinstance(ref_t, torch.Tensor) and np.array_equal(ref_t.numpy(), ref_n))
    C.check("mlp: reference_output is zero-copy (in the ETRecord's file pages)",
            file_offset(args["etrecord"], ref_t.data_ptr(), ref_t.numel() * ref_t.element_size())[0]
            is not None)
    C.check("mlp: run_output is a torch.Tensor with the numpy values",
            isinstance(bt.run_output[0], torch.Tensor) and
            np.array_equal(bt.run_output[0].numpy(), bn.run_output[0]))
    C.finish(tmp)


if __name__ == "__main__":
    main()
