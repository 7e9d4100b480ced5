"""etrecord_gen - writes ETRecords and torch.save archives for the tests,
with Python's standard library only (zipfile, json, pickle, struct).

ETRecord layout (FORMATS.md §4, plus upstream's single-program layout):
  ETRECORD_V0                          empty identifier
  edge_dialect_exported_program/<m>    Edge program JSON of method m (or, with
                                       legacy=True, one `edge_dialect_exported_program`)
  <member>_state_dict, _constants, _example_inputs   torch.save siblings
  <name>/<method>                      graph_map programs
  debug_handle_map, delegate_map, instruction_id_to_num_outs_map   JSON
  export_graph_id                      JSON int
  reference_outputs, representative_inputs   torch.save archives

torch.save archives (FORMATS.md §5) are written by a small writer built on
the standard `pickle` module (protocol 2): a fake `torch` package is put in
sys.modules so that the pickler emits the same GLOBALs torch does
(torch._utils._rebuild_tensor_v2, torch.FloatStorage, ...,
collections.OrderedDict), storages become persistent ids
('storage', <storage type>, key, 'cpu', numel) and their bytes go to
`<top>/data/<key>`.

Typical use:
    from etrecord_gen import Tensor, Storage, torch_save, node, program, write_etrecord
    ref = {"forward": [[Tensor("float32", [1.5, -2.0], shape=[2])]]}
    write_etrecord(path, programs={"forward": program([node("mul", "aten.mul.Tensor", handle=1)])},
                   debug_handle_map={"forward": {"0": [1]}}, reference_outputs=ref)
Any member may also be given as bytes or str, written as is (for bad input).
"""
import collections
import io
import json
import pickle
import struct
import sys
import types
import zipfile

EDGE_MEMBER = "edge_dialect_exported_program"
EDGE_OPS = "executorch.exir.dialects.edge.ops."

# dtype -> (struct code, element size, storage type name)
DTYPES = {
    "float32": ("f", 4, "FloatStorage"),
    "float64": ("d", 8, "DoubleStorage"),
    "float16": ("e", 2, "HalfStorage"),
    "bfloat16": ("bf16", 2, "BFloat16Storage"),
    "uint8": ("B", 1, "ByteStorage"),
    "int8": ("b", 1, "CharStorage"),
    "int16": ("h", 2, "ShortStorage"),
    "int32": ("i", 4, "IntStorage"),
    "int64": ("q", 8, "LongStorage"),
    "bool": ("?", 1, "BoolStorage"),
}


# --- the fake torch package ------------------------------------------------

def _install_fake_torch():
    """Registers modules `torch` and `torch._utils` holding just what the
    pickler has to name; returns (rebuild_tensor_v2, {storage name: class})."""
    mod = sys.modules.get("torch")
    if mod is not None and not getattr(mod, "_etrecord_gen_fake", False):
        raise RuntimeError("a real torch module is imported; etrecord_gen needs its own fake")
    if mod is None:
        mod = types.ModuleType("torch")
        mod._etrecord_gen_fake = True
        utils = types.ModuleType("torch._utils")

        def _rebuild_tensor_v2(*args):  # named by the pickle, never called here
            raise RuntimeError("not callable")

        _rebuild_tensor_v2.__module__ = "torch._utils"
        _rebuild_tensor_v2.__qualname__ = "_rebuild_tensor_v2"
        utils._rebuild_tensor_v2 = _rebuild_tensor_v2
        mod._utils = utils
        for _, _, sname in DTYPES.values():
            cls = type(sname, (), {"__module__": "torch"})
            setattr(mod, sname, cls)
        sys.modules["torch"] = mod
        sys.modules["torch._utils"] = utils
    return mod._utils._rebuild_tensor_v2, {s: getattr(mod, s) for _, _, s in DTYPES.values()}


def encode(dtype, values):
    """Little-endian bytes of `values` as `dtype`."""
    code, _, _ = DTYPES[dtype]
    out = bytearray()
    for v in values:
        if code == "bf16":
            out += struct.pack("<f", float(v))[2:]
        elif code in ("f", "d", "e"):
            out += struct.pack("<" + code, float(v))
        elif code == "?":
            out += struct.pack("<?", bool(v))
        else:
            out += struct.pack("<" + code, int(v))
    return bytes(out)


class Storage:
    """A typed storage: `values` are its elements (numel = len(values)).
    The same Storage object given to several tensors is saved once."""

    def __init__(self, dtype, values):
        self.dtype = dtype
        self.values = list(values)

    @property
    def numel(self):
        return len(self.values)

    def data(self):
        return encode(self.dtype, self.values)


class Tensor:
    """A tensor to save: either `values` (a contiguous new storage, shape
    defaults to [len(values)]; shape [] is a 0-dim tensor) or an existing
    `storage` viewed with shape/stride/offset."""

    def __init__(self, dtype, values=None, shape=None, stride=None, offset=0, storage=None,
                 requires_grad=False):
        if storage is None:
            storage = Storage(dtype, values if values is not None else [])
        self.storage = storage
        self.dtype = storage.dtype
        if shape is None:
            shape = [storage.numel]
        self.shape = list(shape)
        if stride is None:
            stride, acc = [], 1
            for s in reversed(self.shape):
                stride.insert(0, acc)
                acc *= s
        self.stride = list(stride)
        self.offset = offset
        self.requires_grad = requires_grad

    def __reduce_ex__(self, protocol):
        rebuild, _ = _install_fake_torch()
        return (rebuild, (self.storage, self.offset, tuple(self.shape), tuple(self.stride),
                          self.requires_grad, collections.OrderedDict()))


class _Pickler(pickle.Pickler):
    def __init__(self, f, storage_types):
        super().__init__(f, protocol=2)
        self.storage_types = storage_types
        self.keys = {}      # id(storage) -> key
        self.storages = []  # (key, storage) in first-use order

    def persistent_id(self, obj):
        if not isinstance(obj, Storage):
            return None
        key = self.keys.get(id(obj))
        if key is None:
            key = str(len(self.storages))
            self.keys[id(obj)] = key
            self.storages.append((key, obj))
        stype = self.storage_types[DTYPES[obj.dtype][2]]
        return ("storage", stype, key, "cpu", obj.numel)


def torch_pickle(obj):
    """(data.pkl bytes, [(key, Storage)]) for `obj`."""
    _, stypes = _install_fake_torch()
    buf = io.BytesIO()
    p = _Pickler(buf, stypes)
    p.dump(obj)
    return buf.getvalue(), p.storages


def zip_bytes(members, compression=zipfile.ZIP_STORED):
    """A zip of [(name, bytes)] in that order."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = compression
            z.writestr(info, data)
    return buf.getvalue()


def torch_save(obj, top="archive", byteorder=False, format_version=False, pickle_bytes=None,
               reverse_storages=False):
    """The bytes torch.save(obj, BytesIO) would write (for in-memory saves
    the top folder is `archive`). `pickle_bytes` replaces data.pkl (crafted
    pickles); `reverse_storages` writes storages in reverse key order."""
    pkl, storages = torch_pickle(obj)
    if pickle_bytes is not None:
        pkl = pickle_bytes
    members = [(f"{top}/data.pkl", pkl)]
    if byteorder:
        members.append((f"{top}/byteorder", b"little"))
    data = [(f"{top}/data/{k}", s.data()) for k, s in storages]
    members += list(reversed(data)) if reverse_storages else data
    members.append((f"{top}/version", b"3\n"))
    if format_version:
        members.append((f"{top}/.format_version", b"1"))
    return zip_bytes(members)


# --- Edge programs ------------------------------------------------------------

def modules_str(frames):
    """nn_module_stack as serialized: "key,path,type;key,path,type"."""
    return ";".join(",".join(f) for f in frames)


def trace_str(frames):
    """A Python stack trace from [(file, line, function, code)]."""
    return "".join(f'  File "{f}", line {ln}, in {fn}\n    {code}\n' for f, ln, fn, code in frames)


def _arg(v):
    if v is None:
        return {"as_none": None}
    if isinstance(v, bool):
        return {"as_bool": v}
    if isinstance(v, int):
        return {"as_int": v}
    if isinstance(v, float):
        return {"as_float": v}
    if isinstance(v, list):
        return {"as_ints": v} if all(isinstance(x, int) for x in v) else \
            {"as_tensors": [{"name": x} for x in v]}
    return {"as_tensor": {"name": v}}


def node(name, op, inputs=(), handle=None, trace=None, modules=None, source_fn=None,
         named=False, target=None, handle_as_int=False):
    """A serialized graph node. `op` is the short name ("aten.mul.Tensor")
    unless `target` is given; `inputs` are (arg name, value) with str values
    taken as tensor names; `named` also writes the node's "name" field;
    `trace` is a string or frames for trace_str; `modules` frames for
    modules_str."""
    meta = {}
    if trace is not None:
        meta["stack_trace"] = trace if isinstance(trace, str) else trace_str(trace)
    if modules is not None:
        meta["nn_module_stack"] = modules if isinstance(modules, str) else modules_str(modules)
    if source_fn is not None:
        meta["source_fn_stack"] = source_fn
    if handle is not None:
        meta["debug_handle"] = handle if handle_as_int else str(handle)
    n = {"target": target if target is not None else EDGE_OPS + op,
         "inputs": [{"name": k, "arg": _arg(v)} for k, v in inputs],
         "outputs": [{"as_tensor": {"name": name}}],
         "metadata": meta}
    if named:
        n["name"] = name
    return n


def program(nodes):
    """An Edge program JSON object around graph nodes."""
    return {"graph_module": {"graph": {"nodes": list(nodes)}}, "schema_version": "1"}


# --- the ETRecord ---------------------------------------------------------------

def _json_member(v):
    if isinstance(v, (bytes, str)):
        return v.encode() if isinstance(v, str) else v
    return json.dumps(v).encode()


def _save_member(v):
    if isinstance(v, bytes):
        return v
    return torch_save(v)


def etrecord_members(programs=None, legacy=False, siblings=True, graph_map=None,
                     debug_handle_map=None, delegate_map=None, num_outs_map=None,
                     export_graph_id=None, reference_outputs=None, representative_inputs=None,
                     identifier=True, extra=()):
    """The [(name, bytes)] of an ETRecord, in upstream's member order.
    programs: {method: program dict | bytes | str}; with legacy=True exactly
    one, written as `edge_dialect_exported_program`. Maps are JSON values or
    raw text. reference_outputs / representative_inputs: objects for
    torch_save, or raw bytes. extra: further (name, bytes) members."""
    m = []
    if identifier:
        m.append(("ETRECORD_V0", b""))
    for gname, data in (graph_map or {}).items():
        m.append((gname, _json_member(data)))
        if siblings:
            m.append((gname + "_state_dict", torch_save({})))
    for meth, prog in (programs or {}).items():
        name = EDGE_MEMBER if legacy else f"{EDGE_MEMBER}/{meth}"
        m.append((name, _json_member(prog)))
        if siblings:
            m.append((name + "_state_dict", torch_save(collections.OrderedDict())))
            m.append((name + "_constants", torch_save({})))
            m.append((name + "_example_inputs", b""))
    for member, v in (("debug_handle_map", debug_handle_map), ("delegate_map", delegate_map),
                      ("instruction_id_to_num_outs_map", num_outs_map),
                      ("export_graph_id", export_graph_id)):
        if v is not None:
            m.append((member, _json_member(v)))
    if reference_outputs is not None:
        m.append(("reference_outputs", _save_member(reference_outputs)))
    if representative_inputs is not None:
        m.append(("representative_inputs", _save_member(representative_inputs)))
    m += list(extra)
    return m


def write_etrecord(path, compression=zipfile.ZIP_STORED, **kw):
    """Writes an ETRecord zip (see etrecord_members) to `path`; returns its bytes."""
    data = zip_bytes(etrecord_members(**kw), compression)
    with open(path, "wb") as f:
        f.write(data)
    return data


# --- zip surgery for bad input ----------------------------------------------------

def patch_member_sizes(data, member, usize=None, csize=None, where=("local", "central")):
    """Rewrites the declared sizes of `member` in its local header and/or its
    central directory entry (32-bit fields; the zip must not be ZIP64)."""
    # signature -> (header name, name length at, name at, csize at, usize at)
    layout = {b"PK\x03\x04": ("local", 26, 30, 18, 22),
              b"PK\x01\x02": ("central", 28, 46, 20, 24)}
    out = bytearray(data)
    name = member.encode()
    found = set()
    i = out.find(b"PK")
    while i >= 0:
        hdr = layout.get(bytes(out[i:i + 4]))
        if hdr:
            kind, nlen_at, name_at, cs_at, us_at = hdr
            nlen = struct.unpack_from("<H", out, i + nlen_at)[0]
            if out[i + name_at:i + name_at + nlen] == name:
                found.add(kind)
                if kind in where:
                    if csize is not None:
                        struct.pack_into("<I", out, i + cs_at, csize)
                    if usize is not None:
                        struct.pack_into("<I", out, i + us_at, usize)
        i = out.find(b"PK", i + 4)
    if found != {"local", "central"}:
        raise ValueError(f"member {member}: headers found: {sorted(found)}")
    return bytes(out)
