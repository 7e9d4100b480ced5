#!/usr/bin/env python3
"""Terminal-safe text (issue 14): every name read from an input file that
reaches stdout or stderr goes through one escaping function. Each path is
fed a name holding ESC, BEL, CR, LF, DEL, C1 controls (NEL, CSI), a bidi
override, a zero-width space and (in ETDump names) a byte that is not
UTF-8, in fixtures built by flatc, a generated ETRecord and an .npz, and
the bytes written are checked: the escapes (\\x1b, \\u202e, \\xff) are
there, the raw bytes are not, and no line of output is forged.

Paths: the profiling table; --show-outputs "Block N" and event lines; the
debug-data mismatch warnings; the accuracy table, its pairing note and the
stderr "worst:" line; the numeric gap's table, its first-divergence detail
(stack trace, module path) and its stderr summary; --graph node names and
args; the performance diff's table and "worst:" line; error messages that
quote .npz array names and file names.
"""
import os
import struct
import subprocess
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(SRC, "tests", "data", "npz"))
import etrecord_gen as G  # noqa: E402
import hostile as H  # noqa: E402
import make_npz as NPZ  # noqa: E402
import common  # noqa: E402
from common import ETC, FBS, FLATC  # noqa: E402
import test_accuracy as A  # noqa: E402
from test_accuracy import OUT_CHAIN, check  # noqa: E402


def run(*args):
    p = subprocess.run([ETC, *args], capture_output=True)
    return p.returncode, p.stdout, p.stderr


def clean(label, data, expect=None):
    """No forbidden raw byte, no forged line, and the escaped name when given."""
    found = H.raw_bytes_found(data)
    check(f"{label}: no raw control, C1, bidi, zero-width or invalid byte", not found,
          f"{found} in {data[:300]!r}")
    check(f"{label}: no forged line", not H.forged_line(data), repr(data[:300]))
    if expect is not None:
        check(f"{label}: shows the name escaped", expect.encode() in data,
              f"{expect!r} not in {data[:600]!r}")


def prof(name, instr, t0, t1, chain=0):
    return {"profile_event": {"name": name, "chain_index": chain, "instruction_id": instr,
                              "start_time": t0, "end_time": t1}}


def dbg_event(t, instr=0, chain=0, output=False):
    entry = {"val": "Tensor", "tensor": t}
    if output:
        entry["output"] = {"bool_val": True}
    return {"debug_event": {"chain_index": chain, "instruction_id": instr, "debug_entry": entry}}


def case_inspector(d):
    """Two runs of a block and an event with hostile names, different data."""
    dm = A.Dump()
    runs = []
    for vals in ([1.0, 2.0], [3.0, 4.0]):
        t = dm.tensor("FLOAT", vals, [2])
        runs.append({"name": H.FULL, "events": [
            dbg_event(t), prof(H.FULL, 0, 1000, 1500),
            dbg_event(t, 0, OUT_CHAIN, output=True),
            prof("Method::execute", 0, 900, 1600, chain=-1)]})
    etdp, dbg = H.write_etdump(d, "insp", runs, dm.buf, FLATC, FBS)
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--show-outputs")
    check("inspector: exit 0", rc == 0, err.decode(errors="replace"))
    clean("profiling table and --show-outputs (stdout)", out, H.ESCAPED)
    check("--show-outputs: Block line escaped",
          f'Block 0 "{H.ESCAPED}"'.encode() in out, repr(out[-800:]))
    check("--show-outputs: event line escaped",
          f"event 0 {H.ESCAPED} (instruction 0)".encode() in out, repr(out[-800:]))
    clean("debug-data mismatch warnings (stderr)", err, H.ESCAPED)
    check("mismatch warning is there", b"logged different debug data" in err, repr(err))
    return etdp, dbg


def case_accuracy(d):
    """A failing comparison of a hostile block against an .npz whose file name
    and array names are hostile too."""
    dm = A.Dump()
    t = dm.tensor("FLOAT", [1.0, 2.0, 3.0], [3])
    runs = [{"name": H.FULL, "events": [dbg_event(t, 0, OUT_CHAIN, output=True),
                                         prof("Method::execute", 0, 1, 9, chain=-1)]}]
    etdp, dbg = H.write_etdump(d, "acc", runs, dm.buf, FLATC, FBS)
    refs = os.path.join(d.encode(), b"refs" + H.FULL_BYTES + b".npz")
    NPZ.write_npz(refs.decode(errors="surrogateescape"),
                  [("0.0", A.npy32([1.5, 2.0, 3.0], [3]))])
    rc, out, err = run(b"--etdump", etdp.encode(), b"--debug_buffer", dbg.encode(),
                       b"--reference-outputs", refs, b"--block", H.FULL_BYTES,
                       b"--min-snr", b"200")
    check("accuracy: gate fails (exit 1)", rc == 1, err.decode(errors="replace"))
    clean("accuracy table and pairing note (stdout)", out, H.ESCAPED)
    clean("accuracy 'worst:' line (stderr)", err, f"worst: {H.ESCAPED} run 0 output 0")
    # the file name itself in an error message
    rc, out, err = run(b"--etdump", os.path.join(d.encode(), b"none" + H.FULL_BYTES + b".etdp"))
    check("missing ETDump with a hostile name: exit 3", rc == 3, repr(err))
    clean("error quoting a file name (stderr)", err, H.ESCAPED)


def trace(path):
    return G.trace_str([(path, 7, "forward", "return self.body(x)")])


HOSTILE_PY = "m\x1b[2J\x07\u0085\u202e\u200b.py"  # a file name in a stack trace
ESCAPED_PY = "m\\x1b[2J\\x07\\u0085\\u202e\\u200b.py"


def numgap_fixture(d):
    nodes = [G.node(f"op{i}", "aten.add.Tensor", inputs=[("self", f"op{i - 1}" if i else "x")],
                    handle=i + 1, trace=trace(HOSTILE_PY),
                    modules=[("L__self___body", H.VALID, "model.Body")])
             for i in range(2)]
    rec = os.path.join(d, "ng.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1], "1": [2]}})

    def dump(stem, second):
        dm = A.Dump()
        events = []
        for i, vals in enumerate(([1.0, 2.0], second)):
            t = dm.tensor("FLOAT", vals, [2])
            # "add" in the name: the event runs the op its ETRecord node says
            events += [dbg_event(t, i), prof("add " + H.FULL, i, 1000 * i, 1000 * i + 500)]
        events.append(prof("Method::execute", 0, 0, 5000, chain=-1))
        return H.write_etdump(d, stem, [{"name": "Execute", "events": events}], dm.buf, FLATC,
                              FBS)
    return rec, dump("ref", [3.0, 4.0]), dump("dev", [3.5, 4.0])


def case_numgap(d):
    rec, (ref, ref_dbg), (dev, dev_dbg) = numgap_fixture(d)
    rc, out, err = run("--etdump", dev, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-etdump", ref, "--reference-debug-buffer", ref_dbg,
                       "--min-snr", "100", "--no-table")
    check("numeric gap: diverges (exit 1)", rc == 1, err.decode(errors="replace"))
    clean("numeric gap detail (stdout)", out, H.ESCAPED)
    check("numeric gap detail: stack trace escaped", ESCAPED_PY.encode() in out, repr(out))
    check("numeric gap detail: module path escaped",
          f"module: {H.ESCAPED_VALID}".encode() in out, repr(out[-1500:]))
    clean("numeric gap summary (stderr)", err, ESCAPED_PY)
    # reference intermediates whose array name is not a debug handle: quoted in the error
    bad = os.path.join(d, "badnames.npz")
    ascii_name = "n\x1b[2J\x07\r\nFAKE pass\x7f"  # zip names without the UTF-8 flag
    NPZ.write_npz(bad, [("1", A.npy32([1.0, 2.0], [2])), (ascii_name, A.npy32([1.0, 2.0], [2]))])
    rc, out, err = run("--etdump", dev, "--debug_buffer", dev_dbg, "--etrecord", rec,
                       "--reference-intermediates", bad, "--no-table")
    check("npz array name: an input error (exit 3)", rc == 3,
          f"rc={rc} {err.decode(errors='replace')}")
    clean("error quoting an .npz array name (stderr)", err,
          "n\\x1b[2J\\x07\\x0d\\x0aFAKE pass\\x7f")


def case_graph(d):
    nodes = [G.node(H.VALID, "aten.add.Tensor", inputs=[("self", "x")], handle=1, named=True,
                    trace=trace(HOSTILE_PY), modules=[("L__self___m", H.VALID, "T")]),
             G.node("y", "aten.mul.Tensor", inputs=[("self", H.VALID)], handle=2, named=True)]
    rec = os.path.join(d, "graph.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program(nodes)},
                     debug_handle_map={"forward": {"0": [1, 2]}})
    rc, out, err = run("--etrecord", rec, "--graph")
    check("--graph: exit 0", rc == 0, err.decode(errors="replace"))
    clean("--graph node names, args, source and module (stdout)", out, H.ESCAPED_VALID)
    check("--graph: the node's line is one line", out.count(b"aten.mul") == 1 and
          out.count(b"\n") == 3, repr(out))


def case_perfdiff(d):
    def dump(stem, dt):
        runs = [{"name": H.FULL, "events": [prof(H.FULL, 0, 1000, 1000 + dt),
                                             prof("Method::execute", 0, 0, 2000 + dt,
                                                  chain=-1)]}]
        return H.write_etdump(d, stem, runs, b"", FLATC, FBS)[0]
    base, cur = dump("base", 1000), dump("cur", 3000)
    rc, out, err = run("--etdump", cur, "--baseline-etdump", base, "--max-regression", "1")
    check("performance gate: fails (exit 1)", rc == 1, err.decode(errors="replace"))
    clean("performance diff (stdout)", out, H.ESCAPED)
    clean("performance gate 'worst:' line (stderr)", err, f"worst: {H.ESCAPED} {H.ESCAPED}")


def main():
    common.run_cases("escape", case_inspector, case_accuracy, case_numgap,
                     case_graph, case_perfdiff)


if __name__ == "__main__":
    main()
