"""Upstream's view of an ETRecord program, without PyTorch: the node list
torch.fx gives the deserialized program (placeholder, call_function,
getitem, output nodes) and ExportedProgram.__str__'s printout.

Read from the program's serialized graph (the ETRecord member the library
parses), for what the library does not keep: the graph's inputs and
outputs, the graph signature, the range constraints and every value's
shape and dtype. The printout follows torch.fx's verbose code generation
(GraphModule.print_readable) as torch.export.ExportedProgram.__str__ calls
it, with what the serialized graph says.
"""
import json
import zipfile

EDGE_MEMBER = "edge_dialect_exported_program"

# serialized ScalarType -> torch.utils._dtype_abbrs spelling / torch dtype name
_ABBR = {1: "u8", 2: "i8", 3: "i16", 4: "i32", 5: "i64", 6: "f16", 7: "f32", 8: "f64",
         9: "c32", 10: "c64", 11: "c128", 12: "b8", 13: "bf16", 28: "u16", 29: "u32", 30: "u64",
         24: "f8e4m3fn", 25: "f8e5m2"}
_DTYPE = {1: "uint8", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "float16", 7: "float32",
          8: "float64", 9: "complex32", 10: "complex64", 11: "complex128", 12: "bool",
          13: "bfloat16", 28: "uint16", 29: "uint32", 30: "uint64", 24: "float8_e4m3fn",
          25: "float8_e5m2"}
_MEMORY_FORMAT = {1: "contiguous_format", 2: "channels_last", 3: "channels_last_3d",
                  4: "preserve_format"}
_LAYOUT = {1: "sparse_coo", 2: "sparse_csr", 3: "sparse_csc", 4: "sparse_bsr", 5: "sparse_bsc",
           6: "_mkldnn", 7: "strided"}
_INPUT_KINDS = {"user_input": ("USER_INPUT", None), "parameter": ("PARAMETER", "parameter_name"),
                "buffer": ("BUFFER", "buffer_name"),
                "tensor_constant": ("CONSTANT_TENSOR", "tensor_constant_name"),
                "custom_obj": ("CUSTOM_OBJ", "custom_obj_name"), "token": ("TOKEN", None),
                "constant_input": ("USER_INPUT", None)}
_OUTPUT_KINDS = {"user_output": ("USER_OUTPUT", None), "loss_output": ("LOSS_OUTPUT", None),
                 "buffer_mutation": ("BUFFER_MUTATION", "buffer_name"),
                 "parameter_mutation": ("PARAMETER_MUTATION", "parameter_name"),
                 "gradient_to_parameter": ("GRADIENT_TO_PARAMETER", "parameter_name"),
                 "gradient_to_user_input": ("GRADIENT_TO_USER_INPUT", "user_input_name"),
                 "user_input_mutation": ("USER_INPUT_MUTATION", "user_input_name"),
                 "token": ("TOKEN", None)}
GETITEM = "<built-in function getitem>"  # str(operator.getitem), upstream's node.target


def load_program(member, graph_name=None, method=None):
    """The serialized program (JSON) of method `method` or graph_map
    program `graph_name` of an ETRecord, or None. `member(name)`: the bytes
    of the record's zip member `name`, None when it has none (read from the
    library's mapping of the file: the program is the one the nodes came
    from, also when the path was deleted or replaced since)."""
    try:
        if graph_name is not None:
            data = member(graph_name)
        else:
            data = member(f"{EDGE_MEMBER}/{method}") if method else None
            if data is None:
                data = member(EDGE_MEMBER)
        if data is None:
            return None
        doc = json.loads(data)
    except Exception:  # noqa: BLE001  (any unreadable member: the caller falls back)
        return None
    return doc if isinstance(doc, dict) and "graph_module" in doc else None


class FxNode:
    """A node as torch.fx has it: name, op ("placeholder", "call_function",
    "get_attr", "output"), target, args, meta."""

    def __init__(self, name, op, target, args=(), meta=None, source=None):
        self.name, self.op, self.target, self.args = name, op, target, tuple(args)
        self.kwargs = {}
        self._meta = meta or {}
        self.source = source  # the library's node for call_function nodes of the program
        self.val = None  # a TensorMeta of the record's tensor_values, set by FxProgram
        self.users = {}  # torch.fx's: {user node: None}, in graph order
        self.all_input_nodes = []
        self.prev = self.next = None

    @property
    def meta(self):
        m = dict(self.source.meta) if self.source is not None else dict(self._meta)
        if self.val is not None:
            m["val"] = self.val
        return m

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    def __repr__(self):
        return self.name


def _arg_repr(arg, nodes):
    """An argument as torch.fx's code generation writes it."""
    if not isinstance(arg, dict) or not arg:
        return repr(arg)
    kind, v = _union(arg)
    if kind == "as_none":
        return "None"
    if kind == "as_tensor" or kind == "as_custom_obj" or kind == "as_graph":
        return v["name"] if isinstance(v, dict) else str(v)
    if kind in ("as_tensors", "as_optional_tensors"):
        return "[" + ", ".join(
            (x["name"] if "name" in x else _arg_repr(x, nodes)) for x in v) + "]"
    if kind in ("as_sym_int", "as_sym_float", "as_sym_bool"):
        return str(_union(v)[1]) if isinstance(v, dict) else str(v)
    if kind in ("as_int", "as_bool"):
        return repr(v)
    if kind == "as_float":
        return repr(float(v))
    if kind in ("as_ints", "as_bools", "as_strings"):
        return repr(list(v))
    if kind == "as_floats":
        return "[" + ", ".join(repr(float(x)) for x in v) + "]"
    if kind in ("as_sym_ints", "as_sym_floats", "as_sym_bools"):
        return "[" + ", ".join(_arg_repr({"as_sym_int": x}, nodes) for x in v) + "]"
    if kind == "as_string":
        return repr(v)
    if kind == "as_scalar_type":
        return "torch." + _DTYPE.get(v, str(v))
    if kind == "as_memory_format":
        return "torch." + _MEMORY_FORMAT.get(v, str(v))
    if kind == "as_layout":
        return "torch." + _LAYOUT.get(v, str(v))
    if kind == "as_device":
        idx = v.get("index")
        return f"device(type='{v.get('type')}'" + (f", index={idx})" if idx is not None else ")")
    return repr(v)


def _size_repr(s):
    if isinstance(s, dict):
        if s.get("as_int") is not None:
            return str(s["as_int"])
        e = s.get("as_expr")
        if isinstance(e, dict):
            return str(e.get("expr_str", e))
        return str(e)
    return str(s)


def _annotation(tv):
    """torch.fx's verbose annotation of a tensor value: f32[4, 32]."""
    if not isinstance(tv, dict):
        return None
    if isinstance(tv.get("meta"), dict):  # the 2023 layout: {"meta": {...}}
        tv = tv["meta"]
    return (_ABBR.get(tv.get("dtype"), "?") + "[" +
            ", ".join(_size_repr(s) for s in tv.get("sizes", [])) + "]")


def _parse_stack_trace(st):
    """(file, line, function, code) of the innermost frame, as torch.fx's
    _parse_stack_trace reads it, or None."""
    import re
    if not st:
        return None
    lines = st.strip().split("\n")
    pat = re.compile(r'^File "(.+)", line (\d+), in (.+)$')
    for i in range(len(lines) - 2, -1, -1):
        m = pat.match(lines[i].strip())
        if m:
            return m.group(1), m.group(2), m.group(3), lines[i + 1].strip()
    return None


class TensorMeta:
    """node.meta["val"] of a tensor node: its shape and dtype from the
    record's tensor_values (upstream's is a torch FakeTensor; this is not
    a tensor): `shape` a tuple (ints; a symbolic size as its text), `dtype`
    torch's name ("torch.float32"), size(), dim(), str() "f32[4, 32]"."""

    def __init__(self, tv):
        if isinstance(tv.get("meta"), dict):
            tv = tv["meta"]
        sizes = []
        for sz in tv.get("sizes", []):
            v = sz.get("as_int") if isinstance(sz, dict) else sz
            sizes.append(v if isinstance(v, int) else _size_repr(sz))
        self.shape = tuple(sizes)
        self.dtype = "torch." + _DTYPE.get(tv.get("dtype"), "unknown")
        self._text = _annotation(tv)

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return len(self.shape)

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"TensorMeta(shape={self.shape!r}, dtype={self.dtype})"


class FxProgram:
    """The deserialized program's nodes, signature and range constraints."""

    def __init__(self, doc, lib_nodes):
        gm = doc["graph_module"]
        g = gm["graph"]
        self.tensor_values = g.get("tensor_values", {})
        self.signature = gm.get("signature", {})
        self.range_constraints = doc.get("range_constraints", {})
        by_output = {}
        for n in lib_nodes:
            for o in n.outputs:
                by_output.setdefault(o, n)
            by_output.setdefault(n.name, n)
        self.nodes = []
        self._calls = {}  # fx name -> (target printout, serialized inputs)
        byname = {}
        for inp in g.get("inputs", []):
            name = _arg_name(inp)
            byname[name] = FxNode(name, "placeholder", name)
            self.nodes.append(byname[name])
        for sn in g.get("nodes", []):
            outs = sn.get("outputs", [])
            first = _arg_name(outs[0]) if outs else None
            if first is None and outs and outs[0].get("as_tensors"):
                first = _arg_name(outs[0]["as_tensors"][0])  # a list: its first item's name
            lib = by_output.get(first) if first else None
            name = lib.name if lib is not None else (first or sn.get("target", "node"))
            target = sn.get("target", "")
            # str(node.target): an Edge op or torch op by its overload name
            short = (target.split("edge.ops.", 1)[1] if "edge.ops." in target else
                     target[len("torch.ops."):] if target.startswith("torch.ops.") else target)
            ser_inputs = list(sn.get("inputs", []))
            if target.endswith("executorch_call_delegate") and ser_inputs and \
                    ser_inputs[0].get("arg", {}).get("as_string") is not None:
                # the lowered module: a get_attr node, as the deserializer makes it
                mod = ser_inputs[0].get("name", "lowered_module")
                byname[mod] = FxNode(mod, "get_attr", mod)
                self.nodes.append(byname[mod])
                ser_inputs[0] = {"name": mod, "arg": {"as_tensor": {"name": mod}}}
            node = FxNode(name, "call_function", short,
                          [_arg_value(i.get("arg"), byname) for i in ser_inputs],
                          _metadata(sn.get("metadata", {})), lib)
            self.nodes.append(node)
            byname[name] = node
            self._calls[name] = (target, ser_inputs)
            items = outs
            if len(outs) == 1 and outs[0].get("as_tensors") is not None:
                items = [{"as_tensor": t} for t in outs[0]["as_tensors"]]
            elif len(outs) == 1 and outs[0].get("as_tensor") is not None and \
                    (lib is None or len(lib.outputs) <= 1):
                continue
            for k, item in enumerate(items):
                iname = _arg_name(item)
                if iname is None or item.get("as_tensor") is None:
                    continue
                byname[iname] = FxNode(iname, "call_function", GETITEM, (node, k), node.meta)
                self.nodes.append(byname[iname])
        self.outputs = [_arg_value(o, byname) for o in g.get("outputs", [])]
        self.nodes.append(FxNode("output", "output", "output", (tuple(self.outputs),)))
        # torch.fx's navigation: inputs, users, prev/next in graph order; and
        # meta["val"]'s shape and dtype where the record has the tensor
        for k, n in enumerate(self.nodes):
            n.prev = self.nodes[k - 1] if k else None
            n.next = self.nodes[k + 1] if k + 1 < len(self.nodes) else None
            seen = []
            for ref in _node_refs(n):
                src = byname.get(ref)
                if src is not None and src is not n and src not in seen:
                    seen.append(src)
            n.all_input_nodes = seen
            for src in seen:
                src.users[n] = None
            tv = self.tensor_values.get(n.name)
            if isinstance(tv, dict):
                n.val = TensorMeta(tv)

    def signature_str(self):
        ins, outs = [], []
        for spec in self.signature.get("input_specs", []):
            kind, v = _union(spec)
            label, tkey = _INPUT_KINDS.get(kind, (kind.upper(), None))
            s = f"{_arg_name(v.get('arg', {})) or ''}: {label}"
            if tkey and v.get(tkey) is not None:
                s += f" target='{v[tkey]}'"
            if kind == "buffer":
                s += f" persistent={bool(v.get('persistent'))}"
            ins.append(s)
        for spec in self.signature.get("output_specs", []):
            kind, v = _union(spec)
            label, tkey = _OUTPUT_KINDS.get(kind, (kind.upper(), None))
            s = f"{_arg_name(v.get('arg', {})) or ''}: {label}"
            if tkey and v.get(tkey) is not None:
                s += f" target='{v[tkey]}'"
            outs.append(s)
        return GraphSignature("\n# inputs\n" + "\n".join(ins) + "\n\n# outputs\n" +
                              "\n".join(outs) + "\n", self.signature)

    def range_constraints_str(self):
        parts = []
        for sym, r in self.range_constraints.items():
            lo, hi = r.get("min_val"), r.get("max_val")
            parts.append(f"{sym}: VR[{'-int_oo' if lo is None else lo}, "
                         f"{'int_oo' if hi is None else hi}]")
        return "{" + ", ".join(parts) + "}"

    def python_code(self):
        """The forward function as torch.fx's verbose code generation
        writes it (GraphModule.print_readable)."""
        users = {n.name: 0 for n in self.nodes}
        inputs_of = {}
        for n in self.nodes:
            ins = []
            for a in _node_refs(n):
                if a not in ins:
                    ins.append(a)
            inputs_of[n.name] = ins
            for a in ins:
                users[a] += 1
        last_use, seen = {}, set()
        for n in reversed(self.nodes):
            for a in inputs_of[n.name]:
                if a not in seen:
                    seen.add(a)
                    last_use.setdefault(n.name, []).append(a)
        free, body, prev = [], [], None
        for n in self.nodes:
            if n.op not in ("placeholder", "output"):
                parsed = _parse_stack_trace(n.stack_trace)
                st = (f"File: {parsed[0]}:{parsed[1]} in {parsed[2]}, code: {parsed[3]}"
                      if parsed else "No stacktrace found for following nodes")
                summary = f"\n# {st}\n"
                if summary != prev:
                    prev = summary
                    body.append(summary)
            tv = self.tensor_values.get(n.name)
            ann = f': "{_annotation(tv)}"' if tv is not None else ""
            if n.op == "placeholder":
                free.append(f"{n.name}{ann}")
                continue
            if n.op == "get_attr":
                body.append(f"{n.name} = self.{n.target}")
                dead = [n.name] if users[n.name] == 0 else []
                body.append(";  " + " = ".join(dead + ["None"]) + "\n" if dead else "\n")
                continue
            if n.op == "output":
                outs = [_value_repr(o) for o in n.args[0]]
                body.append("return (" + ", ".join(outs) + ("," if len(outs) == 1 else "") + ")")
                body.append("\n")
                continue
            if n.target == GETITEM:
                body.append(f"{n.name}{ann} = {n.args[0].name}[{n.args[1]}]")
            else:
                target, _ser = self._calls[n.name]
                fn = _global_name(target)
                args = ", ".join(_value_repr(a) for a in n.args)
                body.append(f"{n.name}{ann} = {fn}({args})")
            dead = list(last_use.get(n.name, []))
            if users[n.name] == 0:
                dead.append(n.name)
            body.append(";  " + " = ".join(dead + ["None"]) + "\n" if dead else "\n")
        code = "".join(body).split("\n")
        code = "\n".join(code).lstrip("\n")
        code = "\n".join("    " + ln for ln in code.split("\n"))
        return f"def forward({', '.join(['self'] + free)}):\n{code}"

    def print_readable(self):
        src = "class GraphModule(torch.nn.Module):\n" + self.python_code()
        first, *rest = src.split("\n")
        return "\n".join([first] + ["    " + ln for ln in rest])

    def __str__(self):
        gm = self.print_readable().replace("\n", "\n    ")
        sig = self.signature_str().replace("\n", "\n    ")
        return (f"ExportedProgram:\n    {gm}\nGraph signature: {sig}\n"
                f"Range constraints: {self.range_constraints_str()}\n")


class GraphSignature(str):
    """The program's graph signature: prints as upstream's
    ExportGraphSignature does, and has its properties, read from the
    serialized input and output specs: user_inputs and user_outputs (names);
    parameters, buffers, lifted_tensor_constants, non_persistent_buffers
    (targets); inputs_to_parameters, inputs_to_buffers,
    inputs_to_lifted_tensor_constants, buffers_to_mutate,
    user_inputs_to_mutate (name -> target)."""

    # property: (outputs' specs?, spec kind, target key; None: the arg names)
    _LISTS = {"user_inputs": (False, ("user_input", "constant_input"), None),
              "user_outputs": (True, ("user_output",), None),
              "parameters": (False, ("parameter",), "parameter_name"),
              "buffers": (False, ("buffer",), "buffer_name"),
              "lifted_tensor_constants": (False, ("tensor_constant",), "tensor_constant_name")}
    _MAPS = {"inputs_to_parameters": (False, "parameter", "parameter_name"),
             "inputs_to_buffers": (False, "buffer", "buffer_name"),
             "inputs_to_lifted_tensor_constants": (False, "tensor_constant",
                                                   "tensor_constant_name"),
             "buffers_to_mutate": (True, "buffer_mutation", "buffer_name"),
             "user_inputs_to_mutate": (True, "user_input_mutation", "user_input_name")}

    def __new__(cls, text, signature):
        self = super().__new__(cls, text)
        self._specs = ([_union(x) for x in signature.get("input_specs", [])],
                       [_union(x) for x in signature.get("output_specs", [])])
        return self

    def __getattr__(self, name):
        if name in self._LISTS:
            outs, kinds, key = self._LISTS[name]
            got = [_arg_name(v.get("arg", {})) if key is None else v.get(key)
                   for k, v in self._specs[outs] if k in kinds]
            return tuple(got) if key is None else got  # upstream: names a tuple
        if name in self._MAPS:
            outs, kind, key = self._MAPS[name]
            return {_arg_name(v.get("arg", {})): v.get(key) for k, v in self._specs[outs]
                    if k == kind}
        raise AttributeError(f"'GraphSignature' object has no attribute {name!r}")

    @property
    def non_persistent_buffers(self):
        return [v.get("buffer_name") for k, v in self._specs[0]
                if k == "buffer" and not v.get("persistent")]

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._LISTS) | set(self._MAPS))


def _union(d):
    """(member, value) of a serialized union: its one key, or in the 2023
    layout (every member present, the unset ones null) the member set."""
    if len(d) == 1:
        return next(iter(d.items()))
    for k, v in d.items():
        if v is not None and k != "as_none":
            return k, v
    return "as_none", None


def _global_name(target):
    """The name torch.fx's code gives a call's target: torch's own operators
    by their qualified name, others (Edge ops: module
    executorch.exir.dialects.edge._ops, which the serializer writes as
    ...edge.ops) as a global named after it."""
    if target.startswith("torch."):
        return target
    for dialect in ("edge", "backend"):
        pre = f"executorch.exir.dialects.{dialect}.ops."
        if target.startswith(pre):
            target = f"executorch.exir.dialects.{dialect}._ops." + target[len(pre):]
    return "".join(c if c.isalnum() or c == "_" else "_" for c in target)


def _arg_name(arg):
    if not isinstance(arg, dict):
        return None
    if "name" in arg and isinstance(arg["name"], str):
        return arg["name"]
    for k in ("as_tensor", "as_sym_int", "as_sym_float", "as_sym_bool", "as_custom_obj",
              "as_token"):
        v = arg.get(k)
        if isinstance(v, dict):
            if "name" in v:
                return v["name"]
            k2, x = _union(v)
            return x if k2 == "as_name" else None
    return None


def _node_refs(n):
    """Names of the nodes among n's arguments, in order."""
    out = []

    def walk(a):
        if isinstance(a, FxNode):
            out.append(a.name)
        elif isinstance(a, (list, tuple)):
            for x in a:
                walk(x)
    walk(list(n.args))
    return out


def _arg_value(arg, byname):
    """A serialized argument as upstream's node.args holds it: the node for
    a tensor, lists of them, Python values for constants (a dtype, memory
    format, layout or device as torch spells it, e.g. "torch.int8")."""
    if not isinstance(arg, dict) or not arg:
        return arg
    kind, v = _union(arg)
    if kind in ("as_tensor", "as_custom_obj", "as_graph"):
        name = v.get("name") if isinstance(v, dict) else v
        return byname.get(name, name)
    if kind in ("as_tensors", "as_optional_tensors"):
        return [byname.get(x["name"], x["name"]) if "name" in x else _arg_value(x, byname)
                for x in v]
    if kind in ("as_sym_int", "as_sym_float", "as_sym_bool"):
        if isinstance(v, dict):
            k, x = _union(v)
            return byname.get(x, x) if k == "as_name" else x
        return v
    if kind == "as_none":
        return None
    if kind in ("as_int", "as_bool", "as_string", "as_ints", "as_bools", "as_strings"):
        return v
    if kind == "as_float":
        return float(v)
    if kind == "as_floats":
        return [float(x) for x in v]
    return _Literal(_arg_repr(arg, {}))


class _Literal(str):
    """A constant torch spells as code (torch.int8, device(type='cpu')):
    its repr is that spelling."""

    def __repr__(self):
        return str(self)


def _value_repr(v):
    if isinstance(v, FxNode):
        return v.name
    if isinstance(v, list):
        return "[" + ", ".join(_value_repr(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_value_repr(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def _metadata(md):
    dh = md.get("debug_handle")
    try:
        dh = int(dh) if dh is not None else None
    except ValueError:
        pass
    return {"debug_handle": dh, "stack_trace": md.get("stack_trace")}
