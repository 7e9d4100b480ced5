#!/usr/bin/env python3
"""Hostile and odd inputs (issue 14), each with what must happen now:
1. --show-references on an ETRecord whose pickle reuses lists through the
   memo (a DAG of depth 63, 2^63 leaves when expanded) prints each shared
   object once and then "<same as #k>", within bounds of bytes and time; a
   list wider than the node budget ends with "... (N more not shown)".
2. Exit codes: reference_outputs with an unsupported pickle protocol and a
   threshold given is bad input (exit 3, before any table), not exit 2.
3. TSV and CSV carry no NUL and no invalid UTF-8: both become U+FFFD, as
   pandas writes text decoded with errors="replace"; pandas reads the whole
   name back.
4. An .npz array of shape (0, 2**40, 2**40) (no element) is accepted.
5. A zip declaring a 4 GiB stored member in a small file: exit 3 naming the
   member and its size.
6. A full disk during --plot (here RLIMIT_FSIZE, so gnuplot's PNG is cut
   short): exit 4 with a message that says so, and no cut PNG left.
"""
import io
import os
import re
import resource
import signal
import struct
import subprocess
import sys
import time
import zlib

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
import test_escape as E  # noqa: E402
from test_accuracy import OUT_CHAIN, check  # noqa: E402


def case_memo_dag(d):
    shared = [A.T([1.0, 2.0])]
    for _ in range(63):
        shared = [shared, shared]
    rec = os.path.join(d, "dag.etrecord")
    data = G.write_etrecord(rec, programs={"forward": G.program([G.node("a", "aten.add.Tensor",
                                                                        handle=1)])},
                            reference_outputs={"forward": shared})
    check("memo DAG: the ETRecord is small", len(data) < 30000, len(data))
    t0 = time.monotonic()
    try:
        p = subprocess.run([ETC, "--etrecord", rec, "--show-references"], capture_output=True,
                           timeout=30)
    except subprocess.TimeoutExpired:
        check("memo DAG: --show-references ends", False, "still printing after 30 s")
        return
    took = time.monotonic() - t0
    out = p.stdout
    check("memo DAG: exit 0", p.returncode == 0, p.stderr[-300:])
    check("memo DAG: under 64 KB printed", len(out) < 65536, len(out))
    check("memo DAG: under 5 s", took < 5, f"{took:.1f} s")
    check("memo DAG: shared lists printed once, then referred to",
          b"<same as #" in out and b": #1 list" in out, out[:500])
    check("memo DAG: the depth budget says what it left out",
          b"nested deeper than 32 levels: not shown" in out, out[-500:])
    defs = re.findall(rb": #(\d+) ", out)
    check("memo DAG: each shared list is numbered once, down to the depth budget",
          len(defs) == len(set(defs)) and len(defs) >= 30, defs)
    wide = os.path.join(d, "wide.etrecord")
    G.write_etrecord(wide, programs={"forward": G.program([G.node("a", "aten.add.Tensor",
                                                                  handle=1)])},
                     reference_outputs={"forward": list(range(5000))})
    p = subprocess.run([ETC, "--etrecord", wide, "--show-references"], capture_output=True)
    lines = p.stdout.decode().splitlines()
    shown = sum(1 for ln in lines if ln.startswith("  forward["))
    more = [ln for ln in lines if ln.startswith("  \u2026 (")]
    check("wide list: the node budget ends the listing with the count left out",
          len(more) == 1 and more[0] == f"  \u2026 ({5000 - shown} more not shown)", more)
    check("wide list: at most the budget of lines", len(lines) < 2010, len(lines))


def case_exit_codes(d):
    etdp, dbg, _ = A.two_run_fixture(d, "ex", A.A0, A.A1)
    rec = os.path.join(d, "proto9.etrecord")
    G.write_etrecord(rec, programs={"forward": G.program([G.node("add", "aten.add.Tensor",
                                                                 handle=1)])},
                     debug_handle_map={"forward": {"0": [1]}},
                     reference_outputs=G.torch_save([1], pickle_bytes=b"\x80\x09N."))
    for flags in (["--min-snr", "10"], ["--compare"], ["--min-cosine", "0.5", "--no-table"]):
        p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                            *flags], capture_output=True, text=True)
        check(f"unreadable reference_outputs with {' '.join(flags)}: exit 3",
              p.returncode == 3, f"rc={p.returncode} {p.stderr}")
        check(f"unreadable reference_outputs with {' '.join(flags)}: says why",
              "reference_outputs cannot be read" in p.stderr and "protocol" in p.stderr,
              p.stderr)
        check(f"unreadable reference_outputs with {' '.join(flags)}: no table first",
              p.stdout == "", p.stdout[:200])


def case_tsv(d):
    import pandas as pd
    dm = A.Dump()
    name = "a\x00b\tc" + H.PLACEHOLDER + "\u202ez"
    runs = [{"name": "Execute", "events": [E.prof(name, 0, 100, 200),
                                            E.prof("Method::execute", 0, 50, 300, chain=-1)]}]
    etdp, _ = H.write_etdump(d, "tsv", runs, dm.buf, FLATC, FBS)
    want = "a\ufffdb\tc\ufffd\u202ez"
    for flag, sep in (("--tsv", "\t"), ("--csv", ",")):
        out = os.path.join(d, "names" + flag[2:])
        p = subprocess.run([ETC, "--etdump", etdp, flag, out, "--no-table"], capture_output=True)
        data = open(out, "rb").read() if os.path.exists(out) else b""
        check(f"{flag}: written (exit 0)", p.returncode == 0, p.stderr)
        check(f"{flag}: no NUL byte", b"\x00" not in data)
        try:
            data.decode("utf-8")
            utf8 = True
        except UnicodeDecodeError:
            utf8 = False
        check(f"{flag}: valid UTF-8", utf8)
        if not utf8:
            continue
        df = pd.read_csv(io.BytesIO(data), sep=sep)
        names = list(df["event_name"])
        check(f"{flag}: pandas reads the whole name, NUL and bad byte as U+FFFD",
              want in names, repr(names))
        # and the field is what pandas itself writes for that text
        ref = io.StringIO()
        pd.DataFrame({"event_name": [want]}).to_csv(ref, sep=sep, index=False)
        field = ref.getvalue().splitlines()[1] if "\n" in ref.getvalue() else ""
        check(f"{flag}: the field is byte for byte what pandas writes",
              field.encode() in data, f"{field!r}")


def case_npz_empty(d):
    etdp, dbg, _ = A.two_run_fixture(d, "empty", A.A0, A.A1)
    npz = os.path.join(d, "empty.npz")
    arr = NPZ.npy("<f4", (0, 2 ** 40, 2 ** 40), b"")
    NPZ.write_npz(npz, [("0.0", arr), ("1.0", arr)])
    p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                        npz, "--compare", "--no-table"], capture_output=True, text=True)
    # read without a parse error: its shape fits no output, so it is refused
    # as the reference of another program (exit 3, issue 22)
    check("npz (0, 2**40, 2**40): read (no input error)", p.returncode in (0, 1) or
          (p.returncode == 3 and "do not belong together" in p.stderr),
          f"rc={p.returncode} {p.stderr}")
    check("npz (0, 2**40, 2**40): compared as a shape mismatch",
          "shape" in p.stderr or p.returncode == 1, p.stderr)


def zip_4g(name=b"0.0.npy", declared=1 << 32):
    """A zip whose one stored member declares `declared` bytes (ZIP64) but holds 6."""
    data = b"\x93NUMPY"
    crc = zlib.crc32(data)
    x64 = struct.pack("<HHQQ", 1, 16, declared, declared)
    local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 0, 0, 0x21, crc, 0xffffffff,
                        0xffffffff, len(name), len(x64)) + name + x64 + data
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 0, 0, 0x21, crc,
                          0xffffffff, 0xffffffff, len(name), len(x64), 0, 0, 0, 0,
                          0) + name + x64
    eocd = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 1, 1, len(central), len(local), 0)
    return local + central + eocd


def case_zip_4g(d):
    etdp, dbg, _ = A.two_run_fixture(d, "z", A.A0, A.A1)
    npz = os.path.join(d, "big.npz")
    with open(npz, "wb") as f:
        f.write(zip_4g())
    p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--reference-outputs",
                        npz, "--compare"], capture_output=True, text=True)
    check("zip with a 4 GiB stored member: exit 3", p.returncode == 3, p.stderr)
    check("zip with a 4 GiB stored member: names the member and its size",
          "0.0.npy" in p.stderr and "4294967296 bytes" in p.stderr, p.stderr)


def case_plot_full_disk(d):
    etdp, dbg, rec = A.two_run_fixture(d, "pl", A.A0, A.A1)
    out = os.path.join(d, "plots")

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
    p = subprocess.run([ETC, "--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                        "--plot", out, "--no-table", "--min-snr", "1"], capture_output=True,
                       text=True, preexec_fn=small_files)
    if "gnuplot not found" in p.stderr:
        print("skip full disk during --plot: no gnuplot")
        return
    check("full disk during --plot: exit 4", p.returncode == 4, p.stderr)
    check("full disk during --plot: says what happened",
          "disk full" in p.stderr and "(no message)" not in p.stderr, p.stderr[-400:])
    cut = []
    for f in os.listdir(out) if os.path.isdir(out) else []:
        if f.endswith(".png"):
            with open(os.path.join(out, f), "rb") as fh:
                if not fh.read().endswith(b"IEND\xaeB`\x82"):
                    cut.append(f)
    check("full disk during --plot: no cut PNG left", not cut, cut)


def main():
    common.run_cases("hostile-inputs", case_memo_dag, case_exit_codes, case_tsv,
                     case_npz_empty, case_zip_4g, case_plot_full_disk)


if __name__ == "__main__":
    main()
