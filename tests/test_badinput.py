"""Bad-input tests: corrupt, truncated and crafted ETDumps, broken debug
buffers, missing files and usage errors.

Each case runs the CLI and checks the exit status (3 for invalid input, 2 for
usage errors), that it did not die of a signal or a sanitizer report, and
that stderr names what is wrong: the file, the byte offset and the
table/field. Crafted inputs are made at test time, either by patching bytes
of tests/data files or of buffers flatc builds from JSON, or with the small
FlatBuffer builder below; patch positions and expected byte offsets are
found by walking the buffer with the small reader below, never hard-coded.

Environment (set by ctest): ETCOMPARE (the CLI), ETC_SRC (repository root),
ETC_FLATC, ETC_WORK (scratch folder). Prints one line per case group and
"N passed, M failed" at the end; exits non-zero on any failure.
"""
import concurrent.futures
import json
import os
import random
import re
import shutil
import struct
import subprocess
import sys

ETC = os.environ["ETCOMPARE"]
SRC = os.environ["ETC_SRC"]
FLATC = os.environ.get("ETC_FLATC", "flatc")
WORK = os.path.join(os.environ.get("ETC_WORK", "/tmp"), "badinput")
DATA = os.path.join(SRC, "tests", "data")
SCHEMA = os.path.join(SRC, "schema", "etdump.fbs")
JOBS = max(2, min(8, os.cpu_count() or 2))

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

passed = failed = 0
_group = None
_group_counts = [0, 0]


def group(name):
    """Starts a case group; the previous one prints its summary line."""
    global _group
    end_group()
    _group = name
    _group_counts[:] = [0, 0]


def end_group():
    if _group is not None:
        ok, bad = _group_counts
        print(f"{'FAIL' if bad else 'ok  '} {_group}: {ok} passed, {bad} failed", flush=True)


def record(ok, label, detail=""):
    global passed, failed
    if ok:
        passed += 1
        _group_counts[0] += 1
    else:
        failed += 1
        _group_counts[1] += 1
        print(f"  FAIL {label}: {detail}", flush=True)


def run(args, timeout=120):
    return subprocess.run([ETC] + args, capture_output=True, timeout=timeout)


def problems(p, code, needles):
    """Returns a list of what is wrong with the finished process p."""
    err = p.stderr.decode("utf-8", "replace")
    out = []
    if p.returncode < 0:
        out.append(f"killed by signal {-p.returncode}")
    elif p.returncode != code:
        out.append(f"exit {p.returncode}, want {code}")
    if "Sanitizer" in err or "runtime error" in err:
        out.append("sanitizer report")
    for n in needles:
        if isinstance(n, re.Pattern):
            if not n.search(err):
                out.append(f"stderr lacks /{n.pattern}/")
        elif n not in err:
            out.append(f"stderr lacks {n!r}")
    if out:
        out.append("stderr: " + err.strip()[-600:])
    return out


def expect(label, args, code, *needles):
    p = run(args)
    bad = problems(p, code, needles)
    record(not bad, label, "; ".join(bad))
    return p


def write(name, data):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(name):
    with open(os.path.join(DATA, name), "rb") as f:
        return f.read()


# --- a minimal FlatBuffer reader (positions are file offsets) ---------------

class FB:
    """Walks an ETDump: `base` is 4 for a size-prefixed file, else 0."""

    def __init__(self, data, base):
        self.d = bytes(data)
        self.base = base

    def u8(self, p): return self.d[p]
    def u16(self, p): return struct.unpack_from("<H", self.d, p)[0]
    def u32(self, p): return struct.unpack_from("<I", self.d, p)[0]
    def i32(self, p): return struct.unpack_from("<i", self.d, p)[0]
    def i64(self, p): return struct.unpack_from("<q", self.d, p)[0]

    def root(self):
        return self.base + self.u32(self.base)

    def vtable(self, t):
        return t - self.i32(t)

    def field(self, t, slot):
        vt = self.vtable(t)
        if 4 + 2 * slot + 2 > self.u16(vt):
            return None
        off = self.u16(vt + 4 + 2 * slot)
        return t + off if off else None

    def ref(self, t, slot):
        f = self.field(t, slot)
        return f + self.u32(f) if f is not None else None

    def vector(self, v):
        """(count, first element position) of the vector at v."""
        return self.u32(v), v + 4

    def refs(self, t, slot):
        """Targets of a vector-of-tables field."""
        v = self.ref(t, slot)
        if v is None:
            return []
        n, first = self.vector(v)
        return [first + 4 * i + self.u32(first + 4 * i) for i in range(n)]

    # ETDump schema (slot numbers as in schema/etdump.fbs)
    def runs(self):
        return self.refs(self.root(), 1)

    def events(self, run):
        return self.refs(run, 3)

    def debug_value(self, event):
        dbg = self.ref(event, 2)
        return self.ref(dbg, 2) if dbg is not None else None

    def tensors(self, value):
        """Tensor table positions of a Value (Tensor or TensorList)."""
        t = self.ref(value, 1)
        if t is not None:
            return [t]
        lst = self.ref(value, 2)
        return self.refs(lst, 0) if lst is not None else []

    def tensor_info(self, t):
        f = self.field(t, 0)
        st = struct.unpack_from("<b", self.d, f)[0] if f is not None else 0
        sizes = []
        v = self.ref(t, 1)
        if v is not None:
            n, first = self.vector(v)
            sizes = [self.i64(first + 8 * i) for i in range(n)]
        f = self.field(t, 3)
        off = self.i64(f) if f is not None else 0
        return st, sizes, off


ELEM_SIZE = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 12: 1, 13: 1, 14: 4,
             15: 2, 16: 1, 17: 1, 22: 2, 23: 1, 24: 1, 25: 1, 26: 1, 27: 2, 28: 4, 29: 8}


def flatc_build(name, doc):
    """Builds a size-prefixed ETDump from a JSON document with flatc."""
    jpath = os.path.join(WORK, name + ".json")
    with open(jpath, "w") as f:
        json.dump(doc, f)
    outdir = os.path.join(WORK, name + ".out")
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([FLATC, "-b", "--size-prefixed", "-o", outdir, SCHEMA, jpath], check=True)
    built = [x for x in os.listdir(outdir)]
    assert len(built) == 1, built
    path = os.path.join(WORK, name + ".etdp")
    os.replace(os.path.join(outdir, built[0]), path)
    with open(path, "rb") as f:
        return path, f.read()


def flatc_decode(path):
    outdir = os.path.join(WORK, "decoded")
    os.makedirs(outdir, exist_ok=True)
    subprocess.run([FLATC, "--json", "--strict-json", "--raw-binary", "--size-prefixed",
                    "-o", outdir, SCHEMA, "--", path], check=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    with open(os.path.join(outdir, stem + ".json")) as f:
        return json.load(f)


def patched(data, pos, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, pos, value)
    return bytes(b)


MIS = read("misaligned.etdp")
MIS_PLAIN = MIS[4:]
MIS_DEBUG = os.path.join(DATA, "misaligned_debug.bin")
TABLE_RE = re.compile(r"byte \d+: (ETDump|RunData|Allocator|Event|ProfileEvent|"
                      r"AllocationEvent|DebugEvent|Value|Tensor|TensorList)\b")


def at(path, pos):
    """The message prefix naming a file and a byte offset."""
    return f"{path}: byte {pos}: "


# --- truncation at every length -------------------------------------------

def truncation(label, data):
    group(f"truncated {label} misaligned.etdp at every length 0..{len(data) - 1}")
    paths = []
    for n in range(len(data)):
        paths.append((n, write(f"trunc_{label}_{n}.etdp", data[:n])))

    def one(item):
        n, path = item
        return n, path, run(["--etdump", path])

    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        results = list(ex.map(one, paths))
    for n, path, p in results:
        needles = [path + ": "]
        if n < 8:
            needles.append(f"file of {n} bytes is too short")
        elif label == "size-prefixed":
            if n < 12:
                needles += [at(path, 4), 'file identifier "ED00"']
            else:
                needles += [at(path, 0), "truncated ETDump: the size prefix announces "
                            f"{len(data) - 4} bytes but only {n - 4} follow it"]
        else:
            needles.append(TABLE_RE)
        bad = problems(p, 3, needles)
        record(not bad, f"length {n}", "; ".join(bad))
        if not bad:
            os.unlink(path)


truncation("size-prefixed", MIS)
truncation("plain", MIS_PLAIN)

# --- header: identifier, root offset --------------------------------------

group("identifier and root offset")
fb = FB(MIS, 4)
p = write("badid.etdp", MIS[:8] + b"XD00" + MIS[12:])
expect("wrong identifier (size-prefixed)", ["--etdump", p], 3, at(p, 4),
       'not an ETDump: file identifier "ED00" found neither at byte 8')
p = write("badid_plain.etdp", MIS_PLAIN[:4] + b"ED01" + MIS_PLAIN[8:])
expect("wrong identifier (plain)", ["--etdump", p], 3, at(p, 4), "file identifier")
p = write("zeros.etdp", bytes(64))
expect("all zeros", ["--etdump", p], 3, at(p, 4), "file identifier")
for val, what in ((len(MIS) - 4, "offset %d" % (len(MIS) - 4)), (0xFFFFFFFF, "offset 4294967295"),
                  (0, "offset 0")):
    p = write(f"root_{val}.etdp", patched(MIS, 4, "<I", val))
    expect(f"root offset {val} (size-prefixed)", ["--etdump", p], 3, at(p, 4),
           f"ETDump (root offset): {what} points outside the buffer")
p = write("root_plain.etdp", patched(MIS_PLAIN, 0, "<I", len(MIS_PLAIN) + 100))
expect("root offset past the end (plain)", ["--etdump", p], 3, at(p, 0),
       "ETDump (root offset)", "points outside the buffer")
# Root offset leaving fewer than 4 bytes for the table's soffset.
p = write("root_end.etdp", patched(MIS, 4, "<I", len(MIS) - 4 - 2))
expect("root table at the last 2 bytes", ["--etdump", p], 3, at(p, len(MIS) - 2),
       "ETDump: table starts outside the buffer")

# --- tables and vtables ---------------------------------------------------

group("table offsets and vtables")
root = fb.root()
runs_vec = fb.ref(root, 1)
run0, run1 = fb.runs()[:2]
# A RunData reference pointing past the end of the buffer.
elem = runs_vec + 4 + 4
p = write("run_ref.etdp", patched(MIS, elem, "<I", len(MIS)))
expect("RunData offset outside the buffer", ["--etdump", p], 3, at(p, elem),
       "ETDump.run_data (run 1): offset", "points outside the buffer")
# Table soffsets: vtable before the buffer start, past its end, at INT32_MIN.
for val, label in ((root - 4 + 1, "before the start"), (-(len(MIS)), "past the end"),
                   (-0x80000000, "INT32_MIN")):
    p = write(f"vt_{label.replace(' ', '_')}.etdp", patched(MIS, root, "<i", val))
    expect(f"ETDump vtable {label}", ["--etdump", p], 3, at(p, root), "ETDump: vtable at",
           "lies outside the buffer")
p = write("vt_run.etdp", patched(MIS, run1, "<i", 0x7FFFFFFF))
expect("RunData vtable outside", ["--etdump", p], 3, at(p, run1),
       "RunData (run 1): vtable at", "lies outside the buffer")
# Odd and too small vtable sizes; vtable and table sizes past the end.
vt = fb.vtable(run0)
for size, text in ((7, "vtable size 7 is invalid"), (3, "vtable size 3 is invalid"),
                   (0, "vtable size 0 is invalid"),
                   (0xFFFE, "vtable of 65534 bytes runs past the buffer end")):
    p = write(f"vtsize_{size}.etdp", patched(MIS, vt, "<H", size))
    expect(f"RunData vtable size {size}", ["--etdump", p], 3, at(p, run0),
           "RunData (run 0): " + text)
p = write("tblsize.etdp", patched(MIS, vt + 2, "<H", 0xFFFF))
expect("RunData table size past the end", ["--etdump", p], 3, at(p, run0),
       "table of 65535 bytes runs past the buffer end")
# A field whose bytes lie outside its table: ProfileEvent.end_time at the table's end.
ev = fb.events(run0)[0]
prof = fb.ref(ev, 0)
pvt = fb.vtable(prof)
tbl_len = fb.u16(pvt + 2)
p = write("field_out.etdp", patched(MIS, pvt + 4 + 2 * 7, "<H", tbl_len - 4))
expect("ProfileEvent.end_time outside its table", ["--etdump", p], 3, at(p, prof),
       "ProfileEvent.end_time (run 0, event 0): field at table offset")

# --- vectors and strings --------------------------------------------------

group("vectors and strings")
ev_vec = fb.ref(run1, 3)
for count in (0xFFFFFFFF, 0x40000000, len(fb.events(run1)) + 1000):
    p = write(f"veclen_{count}.etdp", patched(MIS, ev_vec, "<I", count))
    expect(f"RunData.events count {count:#x}", ["--etdump", p], 3, at(p, ev_vec),
           f"RunData.events (run 1): vector of {count} elements ({4 * count} bytes) runs "
           "past the buffer end")
p = write("runvec.etdp", patched(MIS, runs_vec, "<I", 0xFFFFFFFF))
expect("ETDump.run_data count 0xffffffff", ["--etdump", p], 3, at(p, runs_vec),
       "ETDump.run_data: vector of 4294967295 elements")
value = fb.debug_value(fb.events(run1)[0])
tensor = fb.tensors(value)[0]
sizes_vec = fb.ref(tensor, 1)
p = write("sizesvec.etdp", patched(MIS, sizes_vec, "<I", 0x20000000))
expect("Tensor.sizes count 2^29", ["--etdump", p], 3, at(p, sizes_vec),
       "Tensor.sizes (run 1, event 0): vector of 536870912 elements")
# Strings: the last run's name; its NUL is the file's last byte.
name_pos = fb.ref(run0, 0)
name_len = fb.u32(name_pos)
b = bytearray(MIS)
b[name_pos + 4 + name_len] = ord("X")
p = write("nonul.etdp", bytes(b))
expect("string not NUL-terminated", ["--etdump", p], 3, at(p, name_pos),
       f"RunData.name (run 0): string of {name_len} bytes is not NUL-terminated")
p = write("strlen.etdp", patched(MIS, name_pos, "<I", 0xFFFFFFFF))
expect("string length 0xffffffff", ["--etdump", p], 3, at(p, name_pos),
       "RunData.name (run 0): string of 4294967295 bytes runs past the buffer end")
pname = fb.ref(prof, 0)
plen = fb.u32(pname)
b = bytearray(MIS)
b[pname + 4 + plen] = ord("!")
p = write("nonul_prof.etdp", bytes(b))
expect("ProfileEvent.name not NUL-terminated", ["--etdump", p], 3, at(p, pname),
       f"ProfileEvent.name (run 0, event 0): string of {plen} bytes is not NUL-terminated")

# --- schema rules (inputs built by flatc) ---------------------------------

group("tensor sizes, offsets and value types")
DOC = flatc_decode(os.path.join(DATA, "misaligned.etdp"))


def with_tensor(name, **changes):
    """misaligned with the first debug event's tensor changed; returns path, FB, tensor pos."""
    doc = json.loads(json.dumps(DOC))
    for ev in doc["run_data"][1]["events"]:
        if "debug_event" in ev:
            ev["debug_event"]["debug_entry"]["tensor"].update(changes)
            break
    path, data = flatc_build(name, doc)
    f = FB(data, 4)
    r1 = f.runs()[1]
    ev_index = next(i for i, e in enumerate(f.events(r1)) if f.ref(e, 2) is not None)
    t = f.tensors(f.debug_value(f.events(r1)[ev_index]))[0]
    return path, f, t, ev_index


path, f, t, e = with_tensor("sizes_overflow", sizes=[4294967296, 4294967296])
expect("sizes whose product overflows 64 bits", ["--etdump", path], 3,
       at(path, f.ref(t, 1)),
       f"Tensor.sizes (run 1, event {e}): the product of the sizes overflows 64 bits")
path, f, t, e = with_tensor("sizes_overflow3", sizes=[3, 6148914691236517206, 1])
expect("sizes 3 * (2^64/3 + 1)", ["--etdump", path], 3, at(path, f.ref(t, 1)),
       "the product of the sizes overflows 64 bits")
path, f, t, e = with_tensor("bytes_overflow", sizes=[2147483648, 2147483648])  # 2^62 floats
expect("element count fits but bytes overflow", ["--etdump", path], 3, at(path, t),
       f"Tensor (run 1, event {e}): data size of 4611686018427387904 elements of float32 "
       "overflows 64 bits")
path, f, t, e = with_tensor("sizes_negative", sizes=[2, -1])
expect("negative size", ["--etdump", path], 3, at(path, f.ref(t, 1) + 4 + 8),
       f"Tensor.sizes (run 1, event {e}): size 1 is negative (-1)")
path, f, t, e = with_tensor("sizes_min", sizes=[-9223372036854775808])
expect("size INT64_MIN", ["--etdump", path], 3, at(path, f.ref(t, 1) + 4),
       "size 0 is negative (-9223372036854775808)")
for off in (-2, -9223372036854775808):
    path, f, t, e = with_tensor(f"offset_{off}", offset=off)
    expect(f"offset {off}", ["--etdump", path], 3, at(path, f.field(t, 3)),
           f"Tensor.offset (run 1, event {e}): offset {off} is negative")
# Offset -1 (no data) and zero-size dimensions are valid.
path, f, t, e = with_tensor("offset_m1", offset=-1, sizes=[0, 9223372036854775807])
expect("offset -1 with an empty tensor is valid", ["--etdump", path, "--debug_buffer",
                                                   MIS_DEBUG, "--show-outputs"], 0)
# Unknown Value.val: patch the byte of the first debug event's Value.
val_field = fb.field(value, 0)
for code in (8, 100, -1):
    p = write(f"val_{code}.etdp", patched(MIS, val_field, "<b", code))
    expect(f"unknown Value.val {code}", ["--etdump", p], 3, at(p, val_field),
           f"Value.val (run 1, event 0): unknown value type {code}")
p = write("val_list.etdp", patched(MIS, val_field, "<b", 6))
expect("Value.val TensorList without a list", ["--etdump", p], 3, at(p, value),
       "Value (run 1, event 0): val is TensorList but the tensor list is missing")
# An unknown scalar type verifies but cannot be read: a warning naming the
# tensor, the profiling table is still printed (exit 0), and --show-outputs
# shows the shape without values.
st_field = fb.field(tensor, 0)
p = write("scalar_9.etdp", patched(MIS, st_field, "<b", 9))
q = expect("unknown scalar type with a debug buffer",
           ["--etdump", p, "--debug_buffer", MIS_DEBUG, "--show-outputs"],
           0, at(p, tensor), "unsupported scalar type 9", "its values are not shown")
record(b"native_call_add.out" in q.stdout and b"scalar type 9 [3]  (unsupported scalar type" in q.stdout,
       "unknown scalar type: table and shape still shown", q.stdout.decode(errors="replace")[-300:])

group("events with several kinds set")
for kinds in (("profile_event", "debug_event"), ("profile_event", "allocation_event"),
              ("allocation_event", "debug_event"),
              ("profile_event", "allocation_event", "debug_event")):
    doc = json.loads(json.dumps(DOC))
    evs = doc["run_data"][1]["events"]
    ev = {}
    prof_ev = next(x["profile_event"] for x in evs if "profile_event" in x)
    dbg_ev = next(x["debug_event"] for x in evs if "debug_event" in x)
    for k in kinds:
        ev[k] = {"profile_event": prof_ev, "debug_event": dbg_ev,
                 "allocation_event": {"allocator_id": 1, "allocation_size": 64}}[k]
    evs.insert(3, ev)
    path, data = flatc_build("two_" + "_".join(k.split("_")[0] for k in kinds), doc)
    f = FB(data, 4)
    epos = f.events(f.runs()[1])[3]
    expect(" + ".join(kinds), ["--etdump", path], 3, at(path, epos),
           f"Event (run 1, event 3): {len(kinds)} of profile_event, allocation_event and "
           "debug_event are set; exactly one is allowed")

# --- debug buffer and files -----------------------------------------------

group("debug buffer and missing files")
R5 = os.path.join(DATA, "runs5_ops12.etdp")
r5 = FB(read("runs5_ops12.etdp"), 4)
bin_data = read("runs5_ops12.bin")
extents = []  # (end, offset, run, event, tensor)
for ri, rp in enumerate(r5.runs()):
    for ei, ep in enumerate(r5.events(rp)):
        if r5.ref(ep, 2) is None:
            continue
        v = r5.debug_value(ep)
        for ti, tp in enumerate(r5.tensors(v) if v is not None else []):
            st, sizes, off = r5.tensor_info(tp)
            numel = 1
            for s in sizes:
                numel *= s
            if off >= 0 and numel:
                extents.append((off + numel * ELEM_SIZE[st], off, ri, ei, ti))
assert extents and max(e[0] for e in extents) <= len(bin_data)
for cut in (len(bin_data) - 1, len(bin_data) // 2, 1, 0):
    p = write(f"runs5_{cut}.bin", bin_data[:cut])
    r = expect(f"runs5_ops12 with the debug buffer cut to {cut} bytes",
               ["--etdump", R5, "--debug_buffer", p], 3,
               "tensor data [", f"lies past the end of the debug buffer ({cut} bytes)")
    # The tensor named must be one that really does not fit, at its own offset.
    m = re.search(r": byte (\d+): run (\d+), event (\d+), tensor (\d+): tensor data \[(\d+), (\d+)\)",
                  r.stderr.decode())
    ok = False
    if m:
        off, run_i, ev_i, t_i, lo, hi = (int(x) for x in m.groups())
        ok = (any(e == (hi, off, run_i, ev_i, t_i) for e in extents) and hi > cut and lo == off
              and f"{p}: byte {off}: " in r.stderr.decode())
    record(ok, f"cut {cut}: names a tensor that does not fit", r.stderr.decode().strip())
missing = os.path.join(WORK, "no-such-dir", "missing.etdp")
expect("missing ETDump", ["--etdump", missing], 3, f"{missing}: cannot open",
       "No such file or directory")
missing_bin = os.path.join(WORK, "missing.bin")
expect("missing debug buffer", ["--etdump", R5, "--debug_buffer", missing_bin], 3,
       f"{missing_bin}: cannot open", "No such file or directory")
expect("directory as ETDump", ["--etdump", WORK], 3, f"{WORK}: is a directory")
expect("directory as debug buffer", ["--etdump", R5, "--debug_buffer", WORK], 3,
       f"{WORK}: is a directory")
p = write("empty.etdp", b"")
expect("empty ETDump", ["--etdump", p], 3, f"{p}: file of 0 bytes is too short")
if os.path.exists("/dev/null"):
    expect("/dev/null as ETDump", ["--etdump", "/dev/null"], 3, "not a regular file")

# --- a reference bomb -----------------------------------------------------


class Builder:
    """Lays a FlatBuffer out front to back; references point forward."""

    def __init__(self):
        self.b = bytearray()

    def alloc(self, size, align=1):
        while len(self.b) % align:
            self.b.append(0)
        pos = len(self.b)
        self.b += bytes(size)
        return pos

    def put(self, fmt, pos, v):
        struct.pack_into(fmt, self.b, pos, v)

    def vtable(self, tbl_len, offs):
        pos = self.alloc(4 + 2 * len(offs), 2)
        struct.pack_into(f"<HH{len(offs)}H", self.b, pos, 4 + 2 * len(offs), tbl_len, *offs)
        return pos

    def table(self, vt, tbl_len):
        pos = self.alloc(tbl_len, 8)
        self.put("<i", pos, pos - vt)
        return pos

    def ref(self, at, target):
        self.put("<I", at, target - at)

    def vector(self, count, esz):
        while (len(self.b) + 4) % 4:
            self.b.append(0)
        pos = self.alloc(4 + count * esz)
        self.put("<I", pos, count)
        return pos


group("reference bomb (verification budget)")
N = 20000
B = Builder()
B.alloc(8)
B.b[4:8] = b"ED00"
root = B.table(B.vtable(12, [0, 8]), 12)
B.ref(0, root)
runs = B.vector(1, 4)
B.ref(root + 8, runs)
run_t = B.table(B.vtable(16, [0, 0, 0, 12]), 16)
B.ref(runs + 4, run_t)
events = B.vector(N, 4)
B.ref(run_t + 12, events)
event = B.table(B.vtable(8, [0, 0, 4]), 8)
for i in range(N):
    B.ref(events + 4 + 4 * i, event)
dbg = B.table(B.vtable(8, [0, 0, 4]), 8)
B.ref(event + 4, dbg)
val = B.table(B.vtable(12, [4, 0, 8]), 12)
B.ref(dbg + 4, val)
B.b[val + 4] = 6  # TensorList
lst = B.table(B.vtable(8, [4]), 8)
B.ref(val + 8, lst)
tensors = B.vector(N, 4)
B.ref(lst + 4, tensors)
tensor = B.table(B.vtable(4, []), 4)
for i in range(N):
    B.ref(tensors + 4 + 4 * i, tensor)
p = write("bomb.etdp", bytes(B.b))
expect(f"{N} events x {N} tensor references", ["--etdump", p], 3, p + ": byte ",
       "verification budget exhausted")
# The same structure with few references is a valid (if odd) ETDump.
struct.pack_into("<I", B.b, events, 3)
struct.pack_into("<I", B.b, tensors, 2)
p = write("bomb_small.etdp", bytes(B.b))
expect("3 events x 2 tensor references", ["--etdump", p, "--show-outputs"], 0)

# --- random mutations -----------------------------------------------------

group("random mutations (300 mutants, seed 20240611)")
rng = random.Random(20240611)
mutants = []
for i in range(300):
    d = bytearray(MIS if i % 3 else MIS_PLAIN)
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(4)
        pos = rng.randrange(len(d))
        if kind == 0:
            d[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:
            d[pos] = rng.randrange(256)
        elif kind == 2:
            d[pos] = rng.choice((0x00, 0xFF, 0x7F, 0x80))
        else:
            pos &= ~3
            if pos + 4 <= len(d):
                d[pos:pos + 4] = rng.choice((b"\xff\xff\xff\xff", b"\0\0\0\0",
                                             b"\xff\xff\xff\x7f",
                                             struct.pack("<I", rng.randrange(len(d)))))
    mutants.append((i, write(f"mut_{i}.etdp", bytes(d))))


def run_mutant(item):
    i, path = item
    args = ["--etdump", path, "--debug_buffer", MIS_DEBUG, "--show-outputs",
            "--json", path + ".json", "--tsv", path + ".tsv"]
    return i, path, run(args)


with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
    results = list(ex.map(run_mutant, mutants))
codes = {}
for i, path, p in results:
    codes[p.returncode] = codes.get(p.returncode, 0) + 1
    err = p.stderr.decode("utf-8", "replace")
    bad = []
    if p.returncode not in (0, 3):
        bad.append(f"exit {p.returncode}")
    if "Sanitizer" in err or "runtime error" in err:
        bad.append("sanitizer report")
    if p.returncode == 3 and not re.search(r"etcompare: error: (%s|%s): byte \d+: " % (
            re.escape(path), re.escape(MIS_DEBUG)), err):
        bad.append("message does not name the file and byte")
    record(not bad, f"mutant {i} ({path})", "; ".join(bad) + " " + err.strip()[-600:])
    if not bad:
        for x in (path, path + ".json", path + ".tsv"):
            if os.path.exists(x):
                os.unlink(x)
print(f"     exit codes: {dict(sorted(codes.items()))}")

# --- usage errors ---------------------------------------------------------

group("usage errors")
MISP = os.path.join(DATA, "misaligned.etdp")
expect("unknown option", ["--bogus"], 2, "unknown option '--bogus'", "Try 'etcompare --help'")
expect("unknown option after valid ones", ["--etdump", MISP, "--tvs", "x"], 2,
       "unknown option '--tvs'")
expect("missing option value", ["--etdump"], 2, "option '--etdump' needs a value")
expect("missing value at the end", ["--etdump", MISP, "--tsv"], 2,
       "option '--tsv' needs a value")
expect("empty option value", ["--etdump="], 2, "option '--etdump' has an empty value")
expect("bad source time scale", ["--etdump", MISP, "--source_time_scale", "parsecs"], 2,
       "--source_time_scale takes ns, us, ms, s or cycles, not 'parsecs'")
expect("bad target time scale", ["--etdump", MISP, "--target_time_scale=MS"], 2,
       "--target_time_scale takes ns, us, ms, s or cycles, not 'MS'")
expect("cycles on one side only", ["--etdump", MISP, "--source_time_scale", "cycles"], 2,
       "for cycles both --source_time_scale and --target_time_scale have to be cycles")
expect("--example with --etdump", ["--example", "--etdump", "x"], 2,
       "--example and --etdump cannot be combined")
expect("--debug_buffer without --etdump", ["--debug_buffer", MIS_DEBUG], 2,
       "--debug_buffer needs --etdump")
expect("negative --max-values", ["--etdump", MISP, "--max-values", "-1"], 2,
       "--max-values takes a number")
expect("positional argument", [MISP], 2, "unexpected argument")
# Usage errors win over unreadable inputs: nothing is opened.
expect("usage error with a missing file", ["--etdump", missing, "--bogus"], 2,
       "unknown option '--bogus'")

end_group()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
