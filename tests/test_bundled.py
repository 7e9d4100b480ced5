"""BundledProgram files (issues 20 and 21): the reader and --bundled-program.

1. The real files of tests/data/realexport (upstream's serializer): decoded
   by flatc with schema/bundled_program_schema.fbs, every test case's inputs
   and expected outputs equal <m>_io.npz's input<k>/expected<k> bit for bit
   (the library's own reading of them is tests/unit/test_bundled.c).
2. --bundled-program on the real ETDumps: the expected outputs are the
   references (test case k = reference k; the runtime writes no
   bundled_input_index, so runs pair by order), the report names the source,
   the metrics equal those of the same values given as an .npz, a bpte whose
   expected output 0 is swapped changes exactly row 0, and the bpte wins over
   the ETRecord's reference_outputs.
3. Hostile files built with flatc from readable JSON (and a few patched
   bytes): truncated, offsets out of range, data shorter than the sizes say,
   unknown scalar or value type, sizes whose product overflows, negative
   sizes, a dim order that is no permutation, another schema version, a
   method that is not there, outputs that disagree in number or shape with
   the runs': exit 3 with the message, never a crash.
4. The content sniffer: a .bpte given to another option is named, with the
   hint "did you mean --bundled-program FILE?".

Run with --seeds DIR to write the fixtures as fuzz seeds instead.
"""
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

BFBS = os.path.join(C.SRC, "schema", "bundled_program_schema.fbs")
REAL = os.path.join(C.SRC, "tests", "data", "realexport")
MODELS = ("mlp", "cnn", "tiny_transformer", "qcnn")


def flatc_bpte(tmp, name, doc):
    """tmp/name.bpte built by flatc from the JSON document doc."""
    src = os.path.join(tmp, name + ".json")
    with open(src, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([C.FLATC, "-b", "-o", tmp, BFBS, src], capture_output=True, text=True)
    out = os.path.join(tmp, name + ".bpte")
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"flatc failed on {src}: {p.stderr}")
    return out


def decode(tmp, path):
    """The JSON flatc decodes from a .bpte (the schema's reading of it)."""
    p = subprocess.run([C.FLATC, "--json", "--strict-json", "--raw-binary", "-o", tmp, BFBS,
                        "--", path], capture_output=True, text=True)
    out = os.path.join(tmp, os.path.basename(path)[:-len(".bpte")] + ".json")
    if p.returncode != 0:
        raise RuntimeError(f"flatc cannot decode {path}: {p.stderr}")
    with open(out) as f:
        return json.load(f)


def tensor(values, sizes, dtype="FLOAT", np_dtype="<f4", dim_order=None, data=None):
    raw = np.asarray(values, dtype=np_dtype).tobytes() if data is None else data
    val = {"scalar_type": dtype, "sizes": list(sizes), "data": list(raw)}
    val["dim_order"] = list(range(len(sizes))) if dim_order is None else dim_order
    return {"val_type": "Tensor", "val": val}


def program(suites, version=2):
    return {"version": version, "program": list(b"\0\0\0\0ET12" + bytes(24)),
            "method_test_suites": [{"method_name": m, "test_cases": tcs} for m, tcs in suites]}


def small_doc():
    """Two test cases of every value kind."""
    tcs = []
    for k in range(2):
        tcs.append({"inputs": [tensor([k, 1.5, -2, 3, 4, 5], [2, 3]),
                               {"val_type": "Int", "val": {"int_val": -7 - k}},
                               {"val_type": "Bool", "val": {"bool_val": True}},
                               {"val_type": "Double", "val": {"double_val": 2.5}}],
                    "expected_outputs": [tensor([k] * 6, [2, 3])]})
    return program([("forward", tcs)])


# --- the library's reading, through ctypes ----------------------------------------

class Tensor(ctypes.Structure):
    _fields_ = [("scalar_type", ctypes.c_int), ("ndim", ctypes.c_uint32),
                ("nstrides", ctypes.c_uint32), ("sizes_le", ctypes.c_void_p),
                ("strides_le", ctypes.c_void_p), ("offset", ctypes.c_int64),
                ("numel", ctypes.c_uint64), ("nbytes", ctypes.c_uint64),
                ("data", ctypes.c_void_p)]


class Value(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("tensor", Tensor), ("dim_order", ctypes.c_void_p),
                ("dim_order_len", ctypes.c_uint32), ("row_major", ctypes.c_bool),
                ("int_val", ctypes.c_int64), ("bool_val", ctypes.c_bool),
                ("double_val", ctypes.c_double), ("offset", ctypes.c_uint64)]


class RefTensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_uint32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("numel", ctypes.c_uint64),
                ("data", ctypes.c_void_p)]


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("offset", ctypes.c_int64),
                ("file", ctypes.c_char * 256), ("message", ctypes.c_char * 1024)]


LIB = os.path.join(os.path.dirname(os.path.abspath(C.ETC)), "libetcompare.so")


def asan_reexec():
    """A library built with AddressSanitizer loads only under its runtime:
    re-run this script with it preloaded (as tests/test_python.py does)."""
    if not os.path.exists(LIB) or "ETC_ASAN_REEXEC" in os.environ:
        return
    ldd = subprocess.run(["ldd", LIB], capture_output=True, text=True).stdout
    asan = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines()
            if "libasan" in ln and "=>" in ln]
    if asan:
        env = dict(os.environ, LD_PRELOAD=asan[0], ETC_ASAN_REEXEC="1",
                   ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def library():
    lib = ctypes.CDLL(LIB)
    P, S = ctypes.c_void_p, ctypes.c_size_t
    lib.etc_bundled_open.argtypes = [ctypes.POINTER(P), ctypes.c_char_p, ctypes.POINTER(Error)]
    lib.etc_bundled_free.argtypes = [P]
    lib.etc_bundled_method_count.argtypes = [P]
    lib.etc_bundled_method_count.restype = S
    lib.etc_bundled_test_case_count.argtypes = [P, S]
    lib.etc_bundled_test_case_count.restype = S
    lib.etc_bundled_value_count.argtypes = [P, S, S, ctypes.c_bool]
    lib.etc_bundled_value_count.restype = S
    lib.etc_bundled_get.argtypes = [P, S, S, ctypes.c_bool, S, ctypes.POINTER(Value),
                                    ctypes.POINTER(Error)]
    lib.etc_bundled_tensor.argtypes = [P, S, S, ctypes.c_bool, S, ctypes.POINTER(RefTensor),
                                       ctypes.POINTER(Error)]
    return lib


def read_all(lib, path):
    """[(test case, side, index, Value, numpy array or None, etc_bundled_tensor's
    status, its message)] of suite 0 as the library reads them."""
    bp, err = ctypes.c_void_p(), Error()
    rc = lib.etc_bundled_open(ctypes.byref(bp), path.encode(), ctypes.byref(err))
    if rc != 0:
        raise RuntimeError(err.message.decode())
    out = []
    dtypes = {6: "<f4", 4: "<i8", 7: "<f8"}
    for tc in range(lib.etc_bundled_test_case_count(bp, 0)):
        for side in (False, True):
            for i in range(lib.etc_bundled_value_count(bp, 0, tc, side)):
                v, rt = Value(), RefTensor()
                lib.etc_bundled_get(bp, 0, tc, side, i, ctypes.byref(v), ctypes.byref(err))
                arr = None
                if v.kind == 1:
                    t = v.tensor
                    shape = [ctypes.c_int64.from_address(t.sizes_le + 8 * k).value
                             for k in range(t.ndim)]
                    raw = ctypes.string_at(t.data, t.nbytes) if t.nbytes else b""
                    if t.scalar_type in dtypes and 0 not in shape:
                        arr = np.frombuffer(raw, dtype=dtypes[t.scalar_type]).reshape(shape)
                    else:
                        arr = ("empty", tuple(shape))  # numpy refuses such shapes
                rc = lib.etc_bundled_tensor(bp, 0, tc, side, i, ctypes.byref(rt),
                                            ctypes.byref(err))
                out.append((tc, side, i, v, arr, rc, err.message.decode() if rc else "",
                            (rt.dtype, rt.rank, rt.numel) if rc == 0 else None))
    lib.etc_bundled_free(bp)
    return out


def library_reads(d):
    """The library's views equal <m>_io.npz bit for bit, and every value kind decodes."""
    lib = library()
    for m in MODELS:
        io = np.load(os.path.join(REAL, m + "_io.npz"))
        vals = read_all(lib, os.path.join(REAL, m + ".bpte"))
        C.check(f"{m}: the library reads 2 test cases of one input and one output",
                [(tc, side, i) for tc, side, i, *_ in vals] ==
                [(0, False, 0), (0, True, 0), (1, False, 0), (1, True, 0)])
        for tc, side, i, v, arr, rc, msg, rt in vals:
            want = io[("expected" if side else "input") + str(tc)]
            C.check(f"{m}: test case {tc} {'expected' if side else 'input'}: the view equals "
                    "the .npz bit for bit", arr is not None and arr.shape == want.shape
                    and arr.tobytes() == want.astype("<f4").tobytes() and v.row_major)
            C.check(f"{m}: test case {tc}: as a reference tensor",
                    rc == 0 and rt == (6, want.ndim, want.size), (rc, msg, rt))
    doc = small_doc()
    for tc in doc["method_test_suites"][0]["test_cases"]:
        tc["inputs"] += [tensor([], [0, 2147483647, 2147483647], data=b""),
                         tensor([1, 2, 3, 4, 5, 6], [2, 3], dtype="LONG", np_dtype="<i8",
                                dim_order=[1, 0]),
                         {"val_type": "Int", "val": {"int_val": -(2 ** 63)}}]
    vals = read_all(lib, flatc_bpte(d, "kinds", doc))
    ins = {(tc, i): (v, arr, rc, msg) for tc, side, i, v, arr, rc, msg, _ in vals if not side}
    v, arr, rc, _ = ins[(1, 0)]
    C.check("float tensor: values as written",
            arr is not None and arr.tolist() == [[1, 1.5, -2], [3, 4, 5]])
    v, _, rc, msg = ins[(0, 1)]
    C.check("Int -7", v.kind == 2 and v.int_val == -7 and rc == -6 and
            "test case 0 of method forward: input 1 is an Int, not a tensor" in msg, msg)
    v, _, rc, msg = ins[(0, 2)]
    C.check("Bool true", v.kind == 3 and v.bool_val and rc == -6 and "a Bool" in msg)
    v, _, rc, msg = ins[(0, 3)]
    C.check("Double 2.5", v.kind == 4 and v.double_val == 2.5 and "a Double" in msg)
    v, arr, rc, msg = ins[(0, 4)]
    C.check("a size 0 beside huge ones: no elements, no data",
            v.kind == 1 and v.tensor.numel == 0 and v.tensor.nbytes == 0 and rc == 0
            and arr == ("empty", (0, 2147483647, 2147483647)))
    v, arr, rc, msg = ins[(0, 5)]
    C.check("dim order 1, 0: read, not row-major; no reference tensor",
            v.kind == 1 and not v.row_major and v.dim_order_len == 2 and rc == -6
            and "only row-major tensors" in msg, msg)
    v, _, _, _ = ins[(1, 6)]
    C.check("Int -2^63", v.kind == 2 and v.int_val == -(2 ** 63))


# --- a tiny FlatBuffer walker, to patch bytes flatc would not write -------------

def u32(b, p):
    return struct.unpack_from("<I", b, p)[0]


def field(b, table, slot):
    """Absolute position of field `slot` of the table at `table` (0 when absent)."""
    vt = table - struct.unpack_from("<i", b, table)[0]
    vlen = struct.unpack_from("<H", b, vt)[0]
    at = 4 + 2 * slot
    off = struct.unpack_from("<H", b, vt + at)[0] if at < vlen else 0
    return table + off if off else 0


def ref(b, pos):
    return pos + u32(b, pos)


def first_value(b):
    """(Value table, its Tensor table) of input 0 of test case 0 of suite 0."""
    root = ref(b, 0)
    suite = ref(b, ref(b, field(b, root, 1)) + 4)
    case = ref(b, ref(b, field(b, suite, 1)) + 4)
    value = ref(b, ref(b, field(b, case, 0)) + 4)
    return value, ref(b, field(b, value, 1))


def patched(tmp, name, src, fn):
    with open(src, "rb") as f:
        b = bytearray(f.read())
    fn(b)
    out = os.path.join(tmp, name + ".bpte")
    with open(out, "wb") as f:
        f.write(b)
    return out


# --- the cases ----------------------------------------------------------------

def real_files_decode(d):
    """flatc's reading of upstream's files equals <m>_io.npz bit for bit."""
    for m in MODELS:
        doc = decode(d, os.path.join(REAL, m + ".bpte"))
        io = np.load(os.path.join(REAL, m + "_io.npz"))
        suites = doc["method_test_suites"]
        C.check(f"{m}: one suite, forward, 2 test cases, version 2",
                len(suites) == 1 and suites[0]["method_name"] == "forward"
                and len(suites[0]["test_cases"]) == 2 and doc["version"] == 2)
        for k, tc in enumerate(suites[0]["test_cases"]):
            for side, key in (("inputs", "input"), ("expected_outputs", "expected")):
                a = io[f"{key}{k}"]
                vals = tc[side]
                v = vals[0]["val"] if len(vals) == 1 else {}
                C.check(f"{m}: test case {k} {side}: one float tensor of shape {a.shape}",
                        len(vals) == 1 and vals[0]["val_type"] == "Tensor"
                        and v.get("scalar_type") == "FLOAT"
                        and tuple(v.get("sizes", ())) == a.shape
                        and v.get("dim_order") == list(range(a.ndim)))
                C.check(f"{m}: test case {k} {side}: data equals {key}{k} bit for bit",
                        bytes(v.get("data", [])) == a.astype("<f4").tobytes())


SOURCES = {}  # tag -> the JSON report's accuracy.reference_source


def accuracy_json(d, tag, *args):
    out = os.path.join(d, tag + ".json")
    code, so, se = C.run(*args, "--json", out, "--no-table")
    acc = C.load_json(out).get("accuracy") or {}
    SOURCES[tag] = acc.get("reference_source")
    return code, so, se, acc.get("rows", [])


def run_args(m):
    return ["--etdump", os.path.join(REAL, m + ".etdp"),
            "--debug_buffer", os.path.join(REAL, m + "_debug.bin")]


def metric_keys(row):
    return {k: (row.get("metrics") or {}).get(k) for k in ("mse", "snr", "cosine", "max_abs")}


def snr(row):
    """The row's SNR as a number ("inf" for identical values), NaN when none."""
    v = (row.get("metrics") or {}).get("snr")
    return float(v) if v is not None else float("nan")


def cli_real(d):
    for m in MODELS:
        bp = os.path.join(REAL, m + ".bpte")
        io = np.load(os.path.join(REAL, m + "_io.npz"))
        code, so, se, rows = accuracy_json(d, m, *run_args(m), "--bundled-program", bp)
        # the runs carry no bundled_input_index, so they pair by content: all
        # three ran test case 0
        C.check(f"{m}: --bundled-program compares; every run passes (exit 0)",
                code == 0, se)
        source = f"the expected outputs of method forward in {bp} (BundledProgram, 2 test cases)"
        C.check(f"{m}: the report names the source", f"reference outputs: {source}" in so, so)
        C.check(f"{m}: so does the JSON report", SOURCES.get(m) == source, SOURCES.get(m))
        compared = [r for r in rows if r.get("reference") in (0, 1)]
        C.check(f"{m}: runs 0, 1, 2 compared with test case 0 (pairing by content)",
                [(r.get("run"), r.get("reference")) for r in compared] == [(0, 0), (1, 0), (2, 0)]
                and len(rows) == 3, rows)
        C.check(f"{m}: run 0 (it ran test case 0) matches expected output 0",
                rows and rows[0].get("status") == "pass"
                and snr(rows[0]) > 60, rows[:1])
        # the same values as an .npz: the same metrics, to the bit
        npz = os.path.join(d, m + "_refs.npz")
        np.savez(npz, **{"0.0": io["expected0"], "1.0": io["expected1"]})
        _, _, _, nrows = accuracy_json(d, m + "_npz", *run_args(m), "--reference-outputs", npz)
        C.check(f"{m}: an .npz is named as such in the JSON report",
                SOURCES.get(m + "_npz") == f"the .npz reference outputs in {npz}",
                SOURCES.get(m + "_npz"))
        C.check(f"{m}: metrics equal those against {m}_io.npz's expected outputs",
                len(nrows) == len(rows)
                and all(metric_keys(a) == metric_keys(b) for a, b in zip(rows, nrows)),
                (rows, nrows))

    # a bpte whose expected output 0 is test case 1's: row 0 changes, as the npz says
    m = "mlp"
    doc = decode(d, os.path.join(REAL, m + ".bpte"))
    tcs = doc["method_test_suites"][0]["test_cases"]
    tcs[0]["expected_outputs"] = tcs[1]["expected_outputs"]
    swapped = flatc_bpte(d, "mlp_swapped", doc)
    io = np.load(os.path.join(REAL, m + "_io.npz"))
    npz = os.path.join(d, "swapped_refs.npz")
    np.savez(npz, **{"0.0": io["expected1"], "1.0": io["expected1"]})
    _, _, _, rows = accuracy_json(d, "swapped", *run_args(m), "--bundled-program", swapped)
    _, _, _, nrows = accuracy_json(d, "swapped_npz", *run_args(m), "--reference-outputs", npz)
    C.check("swapped bpte: the values come from the file (row 0 as against expected1)",
            rows and nrows and metric_keys(rows[0]) == metric_keys(nrows[0])
            and snr(rows[0]) < 40, (rows[:1], nrows[:1]))

    # with the ETRecord too: the bpte wins, and stderr says so
    rec = os.path.join(REAL, "mlp.etrecord")
    code, so, se, rows = accuracy_json(d, "both", *run_args(m), "--etrecord", rec,
                                       "--bundled-program", swapped)
    C.check("bpte and ETRecord: the bpte's references are used",
            rows and metric_keys(rows[0]) == metric_keys(nrows[0]), rows[:1])
    C.check("bpte and ETRecord: a note says the ETRecord's are not used",
            "the ETRecord's reference_outputs are not used" in se, se)
    C.check("bpte and ETRecord: the JSON report names the bpte",
            "in " + swapped + " (BundledProgram" in (SOURCES.get("both") or ""),
            SOURCES.get("both"))
    _, _, _, rrows = accuracy_json(d, "etrecord", *run_args(m), "--etrecord", rec, "--compare")
    C.check("the ETRecord alone: its torch.save references are named",
            SOURCES.get("etrecord") == f"the torch.save reference outputs in {rec}",
            SOURCES.get("etrecord"))
    C.check("the ETRecord alone still gives its own references (run 0 passes)",
            rrows and rrows[0].get("status") == "pass"
            and metric_keys(rrows[0]) != metric_keys(rows[0]), rrows[:1])
    code, so, se = C.run(*run_args(m), "--bundled-program", swapped, "--reference-outputs", npz)
    C.check("--bundled-program with --reference-outputs: usage error",
            code == 2 and "give one" in se, se)


def shared_cases(d, n):
    """A hand-laid BundledProgram whose suite lists the same empty test case
    table n times (no writer shares tables; flatc cannot write it)."""
    b = bytearray(struct.pack("<I", 16) + b"BP08")
    b += struct.pack("<HHHH", 8, 8, 0, 4)            # 8: root vtable (slot 1 at +4)
    b += struct.pack("<iI", 16 - 8, 24 - 20)         # 16: root table -> suites at 24
    b += struct.pack("<II", 1, 40 - 28)              # 24: suites vector -> suite at 40
    b += struct.pack("<HHHH", 8, 12, 4, 8)           # 32: suite vtable
    cases_at = 64
    b += struct.pack("<iII", 40 - 32, 52 - 44, cases_at - 48)  # 40: suite table
    b += struct.pack("<I", 7) + b"forward\0"         # 52: method name
    table = cases_at + 4 + 4 * n + 4                  # after the vector and a vtable
    b += struct.pack("<I", n)
    for i in range(n):
        b += struct.pack("<I", table - (cases_at + 4 + 4 * i))
    b += struct.pack("<HH", 4, 4)                     # the empty test case's vtable
    b += struct.pack("<i", 4)                         # the shared table
    path = os.path.join(d, "shared_cases.bpte")
    with open(path, "wb") as f:
        f.write(b)
    return path


def hostile_files(d):
    """(name, path, expected message) for every hostile file."""
    real = os.path.join(REAL, "mlp.bpte")
    with open(real, "rb") as f:
        data = f.read()
    cases = []
    cut = os.path.join(d, "truncated.bpte")
    with open(cut, "wb") as f:
        f.write(data[:1000])
    cases.append(("truncated", cut, "runs past the buffer end"))
    cases.append(("root offset out of range",
                  patched(d, "root_offset", real,
                          lambda b: struct.pack_into("<I", b, 0, 0xFFFFFF00)),
                  "BundledProgram (root offset): offset 4294967040 points outside the buffer"))

    def far_sizes(b):
        _, t = first_value(b)
        struct.pack_into("<I", b, field(b, t, 1), 0x7FFFFFF0)
    cases.append(("sizes offset out of range", patched(d, "sizes_offset", real, far_sizes),
                  "test case 0 of method forward: input 0: Tensor.sizes: offset"))

    def short(doc):
        v = doc["method_test_suites"][0]["test_cases"][1]["inputs"][0]
        v["val"]["sizes"] = [1, 3, 16, 16]
        v["val"]["dim_order"] = [0, 1, 2, 3]
        v["val"]["data"] = [0] * 3000
    doc = small_doc()
    short(doc)
    cases.append(("data shorter than the sizes", flatc_bpte(d, "short_data", doc),
                  "test case 1 of method forward: input 0: data holds 3000 bytes, sizes "
                  "[1, 3, 16, 16] of float32 need 3072"))
    doc = small_doc()
    doc["method_test_suites"][0]["test_cases"][0]["expected_outputs"][0]["val"][
        "scalar_type"] = 99
    cases.append(("unknown scalar type", flatc_bpte(d, "scalar_type", doc),
                  "test case 0 of method forward: expected output 0: unknown scalar type 99"))
    doc = small_doc()
    doc["method_test_suites"][0]["test_cases"][0]["inputs"][0] = tensor(
        [], [2147483647, 2147483647], dtype="DOUBLE", data=b"")
    cases.append(("byte size overflowing 64 bits", flatc_bpte(d, "huge", doc),
                  "input 0: sizes [2147483647, 2147483647] of float64: "
                  "the byte size overflows 64 bits"))
    doc = small_doc()
    doc["method_test_suites"][0]["test_cases"][0]["inputs"][0] = tensor(
        [], [2147483647] * 5, data=b"")
    cases.append(("element count overflowing 64 bits", flatc_bpte(d, "huge_numel", doc),
                  "the product of the sizes overflows 64 bits"))
    doc = small_doc()
    doc["method_test_suites"][0]["test_cases"][0]["inputs"][0] = tensor([], [2, -1, 3],
                                                                        data=b"")
    cases.append(("negative size", flatc_bpte(d, "negative", doc), "size 1 is negative (-1)"))
    doc = small_doc()
    doc["method_test_suites"][0]["test_cases"][0]["inputs"][0]["val"]["dim_order"] = [0, 0]
    cases.append(("dim order no permutation", flatc_bpte(d, "dim_order", doc),
                  "dim_order is not a permutation of the 2 dimensions: entry 1 is 0"))
    small = flatc_bpte(d, "small", small_doc())

    def union_type(b):
        v, _ = first_value(b)
        b[field(b, v, 0)] = 9
    cases.append(("unknown value type", patched(d, "union_type", small, union_type),
                  "input 0: unknown value type 9 (Tensor 1, Int 2, Bool 3, Double 4)"))
    cases.append(("test cases sharing one table", shared_cases(d, 1000),
                  "method forward: more test cases or values in all than the file can hold "
                  "(shared tables)"))
    cases.append(("schema BP07", patched(d, "bp07", small, lambda b: b.__setitem__(
        slice(4, 8), b"BP07")), "BundledProgram schema \"BP07\": etcompare reads \"BP08\""))
    return cases


def cli_hostile(d):
    cases = hostile_files(d)
    for name, path, want in cases:
        code, so, se = C.run(*run_args("mlp"), "--bundled-program", path)
        C.check(f"hostile {name}: exit 3", code == 3, (code, se))
        C.check(f"hostile {name}: the message says where and what",
                want in se and path in se and "Traceback" not in se, se)
        C.check(f"hostile {name}: checked before any work (no table)", so == "", so)


def cli_mismatch(d):
    """A bpte that is another program's: clear errors, exit 3."""
    mlp = decode(d, os.path.join(REAL, "mlp.bpte"))
    tcs = mlp["method_test_suites"][0]["test_cases"]
    two = json.loads(json.dumps(mlp))
    for tc in two["method_test_suites"][0]["test_cases"]:
        tc["expected_outputs"] = tc["expected_outputs"] * 2
    path = flatc_bpte(d, "two_outputs", two)
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", path)
    C.check("two expected outputs against one: exit 3", code == 3, se)
    C.check("two expected outputs against one: says so",
            "test case 0 of method forward has 2 expected outputs, run 0 of block "
            "\"Execute\" has 1 program output: the BundledProgram is not the program this "
            "ETDump ran" in se, se)
    shape = json.loads(json.dumps(mlp))
    for tc in shape["method_test_suites"][0]["test_cases"]:
        v = tc["expected_outputs"][0]["val"]
        v["sizes"] = [10, 4]
    path = flatc_bpte(d, "other_shape", shape)
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", path)
    C.check("an expected output of another shape: exit 3 naming both shapes",
            code == 3 and "expected output 0 has shape [10, 4], output 0 of run 0 of block "
            "\"Execute\" has shape [4, 10]" in se, se)
    other = json.loads(json.dumps(mlp))
    other["method_test_suites"] = [{"method_name": "encode", "test_cases": tcs},
                                   {"method_name": "decode", "test_cases": tcs}]
    path = flatc_bpte(d, "methods", other)
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", path)
    C.check("no suite for the method: exit 3 listing the file's methods",
            code == 3 and "the BundledProgram has no test suite for method \"forward\" "
            "(its methods: encode, decode)" in se and "reference outputs:" not in so, se)
    one = json.loads(json.dumps(mlp))
    one["method_test_suites"][0]["method_name"] = "encode"
    path = flatc_bpte(d, "encode", one)
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", path)
    C.check("one suite: it is used whatever its name", code == 0 and "method encode" in so,
            (code, so, se))
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", path, "--method", "forward")
    C.check("one suite, --method forward: exit 3",
            code == 3 and "no test suite for method \"forward\" (its methods: encode)" in se, se)


def cli_valid_extras(d):
    """Inputs of every kind and an empty tensor with huge other sizes are valid."""
    mlp = decode(d, os.path.join(REAL, "mlp.bpte"))
    for tc in mlp["method_test_suites"][0]["test_cases"]:
        tc["inputs"] += [tensor([], [0, 2147483647, 2147483647, 2147483647], data=b""),
                         {"val_type": "Int", "val": {"int_val": -(2 ** 63)}},
                         {"val_type": "Bool", "val": {"bool_val": True}},
                         {"val_type": "Double", "val": {"double_val": -0.5}},
                         tensor([1, 2, 3, 4, 5, 6], [2, 3], dtype="LONG", np_dtype="<i8",
                                dim_order=[1, 0])]
    path = flatc_bpte(d, "extras", mlp)
    _, _, _, rows = accuracy_json(d, "extras", *run_args("mlp"), "--bundled-program", path)
    _, _, _, base = accuracy_json(d, "base", *run_args("mlp"), "--bundled-program",
                                  os.path.join(REAL, "mlp.bpte"))
    C.check("extra inputs (scalars, an empty tensor, a column-major one) change nothing",
            rows and [metric_keys(r) for r in rows] == [metric_keys(r) for r in base],
            (rows, base))


def cli_sniff(d):
    bp = os.path.join(REAL, "mlp.bpte")
    hint = "this looks like an ExecuTorch BundledProgram (.bpte); did you mean " \
           "--bundled-program FILE?"
    for opt in ("--etdump", "--etrecord", "--reference-outputs"):
        args = [opt, bp] if opt == "--etdump" else [*run_args("mlp"), opt, bp]
        code, so, se = C.run(*args)
        C.check(f".bpte given as {opt}: exit 3 with the hint", code == 3 and hint in se, se)
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", os.path.join(REAL, "mlp.etdp"))
    C.check("an ETDump as --bundled-program: named", code == 3 and
            "this looks like an ETDump; did you mean --etdump FILE?" in se, se)
    pte = os.path.join(d, "model.pte")
    with open(pte, "wb") as f:
        f.write(struct.pack("<I", 32) + b"ET12" + bytes(56))
    code, so, se = C.run(*run_args("mlp"), "--bundled-program", pte)
    C.check("a .pte as --bundled-program: the hint says what it takes",
            code == 3 and "(--bundled-program takes the .bpte that bundles the program with "
            "its test cases)" in se, se)
    code, so, se = C.run("--help")
    C.check("--help documents --bundled-program", "--bundled-program FILE.bpte" in so)


def write_seeds(out):
    """The hostile and small fixtures as fuzz seeds (tests/fuzz/corpus/bpte)."""
    d = C.work_dir("bpte-seeds")
    os.makedirs(out, exist_ok=True)
    files = [("small", flatc_bpte(d, "small", small_doc()))]
    # shaped like the bundled example run the fuzz target compares with
    tcs = [{"inputs": [tensor([k] * 6, [1, 6])],
            "expected_outputs": [tensor([k] * 6, [1, 6]), tensor([-k] * 6, [1, 6])]}
           for k in range(5)]
    files.append(("example_shaped", flatc_bpte(d, "example_shaped", program([("forward", tcs)]))))
    files += [(os.path.basename(p)[:-5], p) for _, p, _ in hostile_files(d)]
    for name, p in files:
        if os.path.getsize(p) <= 8192:
            shutil.copy(p, os.path.join(out, "seed_flatc_" + name))
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--seeds":
        write_seeds(sys.argv[2])
        sys.exit(0)
    asan_reexec()
    C.run_cases("bundled", real_files_decode, library_reads, cli_real, cli_hostile, cli_mismatch,
                cli_valid_extras, cli_sniff)
