"""get_exported_program(): the ETRecord's Edge program as upstream's
ExportedProgram shows it: nodes with torch.fx's op kinds and targets,
meta["debug_handle"] and meta["stack_trace"], and ExportedProgram's printout
(_fx.py); the library's op nodes with their arguments and modules."""
import ctypes
import os

from . import _lib
from ._lib import Error, lib


class Node:
    """One node of an Edge program graph."""

    def __init__(self, n):
        self.name = _lib.cstr(n.name)
        # torch.fx's kind of node; str(node.target) of upstream's Edge op
        # ("aten.addmm.default"); the serialized target in full
        self.op = "call_function"
        self.target = _lib.cstr(n.op)
        self.qualified_target = _lib.cstr(n.target)
        self.inputs = _lib.cstr(n.inputs)
        # the names of its outputs: its own for one tensor, "getitem", ... for
        # the items of a tuple or list (the names its users' inputs give)
        self.outputs = [_lib.cstr(n.outputs[k]) for k in range(n.output_count)]
        self.debug_handle = n.debug_handle if n.debug_handle >= 0 else None
        self.stack_trace = _lib.cstr(n.stack_trace) or None
        self.source_line = _lib.cstr(n.source_line) or None
        # the node's inputs as serialized: (name, kind, value), e.g.
        # ("scale", "as_float", "0.5"); kind is the argument union's member
        self.args = [(_lib.cstr(a.name), _lib.cstr(a.kind), _lib.cstr(a.value))
                     for a in (_lib.at(n.args, j, _lib.GraphArg, "graph_arg")
                               for j in range(n.arg_count))]
        self.module_hierarchy = {}
        for j in range(n.module_depth):
            fr = _lib.at(n.modules, j, _lib.ModuleFrame, "module_frame")
            self.module_hierarchy[_lib.cstr(fr.key)] = (_lib.cstr(fr.path), _lib.cstr(fr.type))

    @property
    def meta(self):
        """Upstream's node.meta keys that users read: debug_handle,
        stack_trace and nn_module_stack ({key: (path, type)})."""
        return {"debug_handle": self.debug_handle, "stack_trace": self.stack_trace,
                "nn_module_stack": dict(self.module_hierarchy)}

    @property
    def module(self):
        """The innermost module path, e.g. "body.layer3" ("" at the root)."""
        return list(self.module_hierarchy.values())[-1][0] if self.module_hierarchy else ""

    def __repr__(self):
        return (f"Node(name={self.name!r}, target={self.target!r}, inputs={self.inputs!r}, "
                f"debug_handle={self.debug_handle!r})")


class _FxGraph:
    """upstream's ep.graph_module / ep.graph: .graph, .nodes in torch.fx's
    order and kinds (placeholders, call_function ops and getitems, output),
    print_readable() and str() as torch prints them."""

    def __init__(self, prog):
        self._prog = prog
        self.nodes = prog.nodes

    @property
    def graph(self):
        return self

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)

    def find_nodes(self, *, op, target=None):
        return [n for n in self.nodes if n.op == op and (target is None or
                                                         str(n.target) == str(target))]

    def print_readable(self, print_output=True):
        text = self._prog.print_readable()
        if print_output:
            print(text)
        return text

    def __str__(self):
        return self._prog.print_readable()


class Graph(_lib.View):
    """One program of the ETRecord, as upstream's ExportedProgram: str()
    prints ExportedProgram's printout, graph_module.graph.nodes are
    torch.fx's nodes. `nodes` are the program's operator nodes in graph
    order (getitems are their tuple node's `outputs`), with the library's
    reading of their arguments and modules; describe() is the CLI's
    `--graph` printout."""
    _what = "an exported program (etcompare.Graph)"
    _fix = "call get_exported_program() again where it is needed"

    def __init__(self, handles, graph=None, method=None):
        self._h = handles
        self._fx = None
        self._graph_name = graph
        rec = handles.etrecord
        err = _lib.new_error()
        if graph is None:
            m = (lib.etrecord_method_index(rec, method.encode()) if method
                 else lib.etrecord_default_method(rec))
            if m < 0:
                raise Error(f"the ETRecord has no program for method '{method or 'forward'}'",
                            "usage error")
            self.name = _lib.cstr(lib.etrecord_method(rec, m))
            self._arg = self.name.encode()
            self.nodes = [Node(lib.etrecord_node(rec, m, i).contents)
                          for i in range(lib.etrecord_node_count(rec, m))]
        else:
            ptr, count = ctypes.c_void_p(), ctypes.c_size_t()
            _lib.check(lib.etrecord_graph_nodes(rec, graph.encode(), ctypes.byref(ptr),
                                                ctypes.byref(count), ctypes.byref(err)), err)
            self.name = graph
            self._arg = graph.encode()
            self.nodes = [Node(_lib.at(ptr.value, i, _lib.GraphNode, "graph_node"))
                          for i in range(count.value)]

    def _program(self):
        """The torch.fx view, read from the ETRecord's serialized program on
        first use; None when it cannot be read (then the op nodes stand in)."""
        if self._fx is None:
            from . import _fx
            self._unchanged()
            doc = _fx.load_program(self._member, self._graph_name,
                                   None if self._graph_name else self.name)
            self._unchanged()  # not rewritten while it was read
            try:
                self._fx = _fx.FxProgram(doc, self.nodes) if doc is not None else False
            except (KeyError, TypeError, ValueError, AttributeError, IndexError):
                self._fx = False  # a layout this reading does not know: the op nodes only
        return self._fx or None

    def _member(self, name):
        """The bytes of the ETRecord's zip member `name` from the library's
        mapping, None when it has none or it cannot be read."""
        rec, key = self._h.etrecord, name.encode()
        if not lib.etrecord_has_member(rec, key):
            return None
        data, size, err = ctypes.c_void_p(), ctypes.c_size_t(), _lib.new_error()
        if lib.etrecord_member(rec, key, ctypes.byref(data), ctypes.byref(size),
                               ctypes.byref(err)) < 0 or not data.value:
            return None
        return ctypes.string_at(data.value, size.value)

    def _unchanged(self):
        """The program is read from the library's mapping of the ETRecord:
        Error when the file was rewritten in place since it was opened (the
        mapping would show the new bytes beside nodes read from the old);
        deleted or replaced by another file is not an error (the mapping
        still holds the file as opened)."""
        _lib.check_rewritten(self._h.etrecord_path, self._h.etrecord_id, "ETRecord",
                             "open it again (a new Inspector or etcompare.ETRecord)")

    # upstream's ExportedProgram path to the nodes:
    # ep.graph_module.graph.nodes and ep.graph.nodes
    @property
    def graph_module(self):
        prog = self._program()
        return _FxGraph(prog) if prog is not None else self

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def graph_signature(self):
        prog = self._program()
        return prog.signature_str() if prog is not None else None

    @property
    def range_constraints(self):
        prog = self._program()
        return dict(prog.range_constraints) if prog is not None else {}

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self):
        return len(self.nodes)

    def node_for_handle(self, handle):
        """The nodes carrying debug handle `handle`."""
        return [n for n in self.nodes if n.debug_handle == handle]

    def describe(self):
        """The CLI's `--graph` printout: one line per node."""
        err = _lib.new_error()
        return _lib.capture(lambda f: _lib.check(lib.report_graph(f, self._h.etrecord, self._arg,
                                                                  ctypes.byref(err)), err))

    def __str__(self):
        prog = self._program()
        return str(prog) if prog is not None else self.describe()

    def __repr__(self):
        return f"<etcompare.Graph {self.name}: {len(self.nodes)} nodes>"

    def print_readable(self, print_output=True):
        """The GraphModule's code as torch.fx prints it."""
        prog = self._program()
        text = prog.print_readable() if prog is not None else self.describe()
        if print_output:
            print(text)
        return text


class _Rec(_lib.Owner):
    """The library's ETRecord behind an etcompare.ETRecord."""
    _what, _fix = "an ETRecord's library objects", "open the path again"
    etrecord = etrecord_path = etrecord_id = None

    def __del__(self):
        if lib is not None:
            lib.etrecord_free(self.etrecord)


def exported_program(handles, graph, method):
    """get_exported_program of an Inspector or an ETRecord: the Edge program
    of `method` (None: the record's default) when `graph` is None; else
    method `graph` (as the CLI's --graph METHOD), else graph_map program
    `graph`, else None with a logged warning naming what the record has."""
    if graph is None:
        return Graph(handles, None, method)
    _lib.text("get_exported_program: graph", graph,
              "a method name or a graph_map name, or None for the Edge program")
    rec = handles.etrecord
    if lib.etrecord_method_index(rec, graph.encode()) >= 0:
        return Graph(handles, None, graph)
    names = [_lib.cstr(lib.etrecord_graph_name(rec, i))
             for i in range(lib.etrecord_graph_count(rec))]
    if graph in names:
        return Graph(handles, graph, method)
    import logging
    methods = [_lib.cstr(lib.etrecord_method(rec, i)) for i in range(lib.etrecord_method_count(rec))]
    logging.getLogger("etcompare").warning(
        "get_exported_program: no graph '%s' in the ETRecord; available: %s", graph,
        ", ".join(methods + names) or "none")
    return None


class ETRecord(_lib.View):
    """An ETRecord file opened by the library: its methods and graph names,
    and its programs as printable graphs. Inspector(etrecord=...) takes it
    as it takes a path. Upstream's attributes edge_dialect_program,
    graph_map, exported_program and export_graph_id are read-only
    properties holding etcompare's Graph objects (not torch programs)."""
    _what, _fix = "an etcompare.ETRecord", "make a new one from the same path"

    def __init__(self, path=None, etrecord_path=None):
        if (path is None) == (etrecord_path is None):
            raise TypeError("ETRecord(path) or ETRecord(etrecord_path=path): give the "
                            "ETRecord file's path once")
        path = path if etrecord_path is None else etrecord_path
        if not isinstance(path, (str, bytes, os.PathLike)):
            raise TypeError(f"etrecord_path= is the path of a file (str, bytes or os.PathLike), "
                            f"not {type(path).__name__}")
        path = _lib.absolute(path)  # an os.chdir later does not change the file
        self._path = os.fspath(path)
        self._h = _Rec()
        self._h.etrecord_path = self._path
        err = _lib.new_error()
        p = ctypes.c_void_p()
        _lib.check(lib.etrecord_open(ctypes.byref(p), _lib.path_arg(path), ctypes.byref(err)),
                   err)
        self._h.etrecord = p.value
        _lib.warn_opened("etrecord", p.value)
        self._h.etrecord_id = _lib.file_id(path)

    @property
    def methods(self):
        rec = self._h.etrecord
        return [_lib.cstr(lib.etrecord_method(rec, i)) for i in range(lib.etrecord_method_count(rec))]

    @property
    def graph_names(self):
        rec = self._h.etrecord
        return [_lib.cstr(lib.etrecord_graph_name(rec, i))
                for i in range(lib.etrecord_graph_count(rec))]

    def get_exported_program(self, graph=None):
        """The Edge program of method `graph` (default the record's), or
        graph_map program `graph`; None (with a logged warning listing the
        record's methods and graphs) for a name it does not have, as
        Inspector.get_exported_program and upstream's graph_map.get."""
        return exported_program(self._h, graph, None)

    @property
    def edge_dialect_program(self):
        """Upstream's attribute: the Edge program (a Graph), or for a record
        of several methods a dict method -> Graph, as upstream's."""
        methods = self.methods
        if len(methods) > 1:
            return {m: Graph(self._h, None, m) for m in methods}
        return Graph(self._h, None, None)

    @property
    def graph_map(self):
        """Upstream's attribute: {graph_map name: Graph} of the record's
        graph_map programs ({} when it has none)."""
        return {n: Graph(self._h, n, None) for n in self.graph_names}

    @property
    def exported_program(self):
        """Upstream's attribute: the ATen program (member
        "exported_program") as a Graph, None when the record has none."""
        if "exported_program" not in self.graph_names:
            return None
        return Graph(self._h, "exported_program", None)

    @property
    def export_graph_id(self):
        """Upstream's attribute: the record's export_graph_id (an int), None
        when it has none."""
        import json
        rec, key = self._h.etrecord, b"export_graph_id"
        if not lib.etrecord_has_member(rec, key):
            return None
        data, size, err = ctypes.c_void_p(), ctypes.c_size_t(), _lib.new_error()
        _lib.check(lib.etrecord_member(rec, key, ctypes.byref(data), ctypes.byref(size),
                                       ctypes.byref(err)), err)
        if not data.value:
            return None
        try:
            return json.loads(ctypes.string_at(data.value, size.value))
        except ValueError:
            return None

    def __repr__(self):
        return f"<etcompare.ETRecord {self._path}>"


def parse_etrecord(etrecord_path):
    """Upstream's parse_etrecord: the ETRecord at `etrecord_path` (an
    etcompare.ETRecord, which Inspector(etrecord=...) takes)."""
    return ETRecord(etrecord_path=etrecord_path)
