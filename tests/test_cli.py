"""CLI regressions found in review: option values never swallow the next
option, a forgotten --etdump is a usage error (not the bundled example
written into the user's file), delegate metadata that is empty in the first
merged run and set in a later one, and 64-bit integers beyond 2^53 shown
exactly."""
import json
import os
import struct
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DATA, check, flatc_build as build, summary  # noqa: E402
from common import call as _call  # noqa: E402

TUTORIAL = os.path.join(DATA, "tutorial.etdp")


def run(*args):
    return _call(*args, text=False)


def prof(name, instr, start, end, **kw):
    ev = {"name": name, "chain_index": 0, "instruction_id": instr, "start_time": start,
          "end_time": end}
    ev.update(kw)
    return {"profile_event": ev}


with tempfile.TemporaryDirectory() as tmp:
    # 1. An option's value is never the next option.
    for opt in ("--tsv", "--json", "--csv", "--debug_buffer", "--etrecord"):
        p = run("--etdump", TUTORIAL, opt, "--show-outputs")
        check(f"{opt} followed by an option is a missing value",
              p.returncode == 2 and f"option '{opt}' needs a value".encode() in p.stderr,
              p.stderr.decode())
    check("no file named like an option was written", not os.path.exists("--show-outputs"))
    out = os.path.join(tmp, "--odd.tsv")
    p = run("--etdump", TUTORIAL, "--no-table", f"--tsv={out}")
    check("--opt=VALUE still takes a value starting with dashes",
          p.returncode == 0 and os.path.exists(out))

    # 2. Forgetting --etdump is a usage error once other options are given.
    target = os.path.join(tmp, "report.tsv")
    p = run("--tsv", target)
    check("--tsv without --etdump exits 2", p.returncode == 2 and b"no --etdump" in p.stderr)
    check("and writes nothing", not os.path.exists(target))
    p = run()
    check("bare etcompare: usage on stderr, exit 2 (the example is --example)",
          p.returncode == 2 and b"usage: etcompare --etdump" in p.stderr and
          b"--example" in p.stderr and p.stdout == b"")

    # 3. Delegate metadata: empty vector in run 1, bytes in run 2 (merged).
    def run_data(meta):
        return {"name": "Execute", "events": [
            prof("", 0, 100, 150, delegate_debug_id_int=3, delegate_debug_metadata=meta),
            prof("Method::execute", 0, 90, 200, chain_index=-1)]}
    doc = {"run_data": [run_data([]), run_data([104, 105])]}
    f = build(tmp, "meta_mix", doc)
    tsv = os.path.join(tmp, "meta.tsv")
    p = run("--etdump", f, "--include_delegate_debug_data", "--tsv", tsv)
    check("metadata empty then set: exit 0", p.returncode == 0, p.stderr.decode())
    rows = open(tsv).read().splitlines() if os.path.exists(tsv) else []
    check("metadata column shows both runs", len(rows) > 1 and rows[1].endswith("['', 'hi']"),
          str(rows[:2]))

    # 4. int64 and uint64 beyond 2^53 are exact in --json and --show-outputs.
    big = [9007199254740993, -9223372036854775807, 5]
    ubig = [18446744073709551615, 9007199254740993]
    buf = struct.pack("<3q", *big) + b"\0" * 8 + struct.pack("<2Q", *ubig)
    dbg = os.path.join(tmp, "ints_debug.bin")
    open(dbg, "wb").write(buf)

    def tensor_event(instr, st, n, off):
        return {"debug_event": {"chain_index": 0, "instruction_id": instr, "debug_entry": {
            "val": "Tensor", "tensor": {"scalar_type": st, "sizes": [n], "strides": [1],
                                        "offset": off}}}}
    doc = {"run_data": [{"name": "Execute", "events": [
        tensor_event(0, "LONG", 3, 0), prof("native_call_a.out", 0, 10, 20),
        tensor_event(1, "UINT64", 2, 32), prof("native_call_b.out", 1, 30, 40)]}]}
    f = build(tmp, "ints", doc)
    js = os.path.join(tmp, "ints.json")
    p = run("--etdump", f, "--debug_buffer", dbg, "--no-table", "--show-outputs", "--json", js)
    check("int64 run: exit 0", p.returncode == 0, p.stderr.decode())
    text = open(js).read() if os.path.exists(js) else ""
    rep = json.loads(text) if text else {}
    t0 = rep["blocks"][0]["events"][0]["debug_data"][0]["tensors"][0] if rep else {}
    t1 = rep["blocks"][0]["events"][1]["debug_data"][0]["tensors"][0] if rep else {}
    check("json int64 values exact", t0.get("values") == big, str(t0.get("values")))
    check("json int64 min/max exact", t0.get("min") == min(big) and t0.get("max") == max(big))
    check("json uint64 values exact", t1.get("values") == ubig, str(t1.get("values")))
    check("json uint64 max exact", t1.get("max") == max(ubig))
    check("show-outputs int64 exact", b"[9007199254740993, -9223372036854775807, 5]" in p.stdout,
          p.stdout.decode())
    check("show-outputs uint64 max exact", b"max=18446744073709551615" in p.stdout)

    # --max-values 0 prints no stray comma.
    p = run("--etdump", f, "--debug_buffer", dbg, "--no-table", "--show-outputs",
            "--max-values", "0")
    check("--max-values 0", b"[... (3 values)]" in p.stdout, p.stdout.decode())

sys.exit(summary())
