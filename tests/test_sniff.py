"""Inputs are recognised by their content (issue 13, src/format/sniff.c): a
file given to the wrong option is exit 3 with "this looks like X; did you
mean --option FILE?" (or what it is when no option takes it), before any
table; a debug buffer that is an ETDump, a zip or JSON is refused the same
way, while real debug buffers are never mistaken for anything."""
import gzip
import json
import os
import struct
import subprocess
import sys
import zipfile

SRC = os.environ["ETC_SRC"]
FLATC = os.environ["ETC_FLATC"]
FBS = os.path.join(SRC, "schema", "etdump.fbs")
DATA = os.path.join(SRC, "tests", "data")
sys.dont_write_bytecode = True  # import the helpers without writing into the source tree
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, os.path.join(DATA, "npz"))
import common  # noqa: E402
import test_accuracy as A  # noqa: E402
from test_accuracy import check, run  # noqa: E402
from legacy_gen import block  # noqa: E402

ETDP = os.path.join(DATA, "runs5_ops12.etdp")
DBG = os.path.join(DATA, "runs5_ops12.bin")
REC = os.path.join(DATA, "example_refs.etrecord")
REC_2023 = os.path.join(DATA, "etrecord_2023.bin")
NPZ = os.path.join(DATA, "npz", "arrays_v1.npz")
NPY = os.path.join(DATA, "npz", "single_f4.npy")
PT = os.path.join(DATA, "torchsave", "list_of_tensors.pt")
JSON_ETDUMP = os.path.join(DATA, "runs5_ops12.json")


def make_files(d):
    f = {}
    f["gz"] = os.path.join(d, "run.etdp.gz")
    with open(ETDP, "rb") as src, gzip.open(f["gz"], "wb") as dst:
        dst.write(src.read())
    # a plain (not size-prefixed) ETDump: identifier at byte 4
    subprocess.run([FLATC, "-b", "-o", d, FBS, JSON_ETDUMP], check=True, capture_output=True)
    f["plain"] = os.path.join(d, "runs5_ops12.etdp")
    f["legacy"] = os.path.join(d, "prof_result.bin")
    with open(f["legacy"], "wb") as out:
        out.write(block("Execute", [("native_call_add.out", 0, 0, 10, 20)]))
    f["zip"] = os.path.join(d, "other.zip")
    with zipfile.ZipFile(f["zip"], "w") as z:
        z.writestr("readme.txt", "hello")
    f["json_list"] = os.path.join(d, "list.json")
    with open(f["json_list"], "w") as out:
        json.dump([1, 2, 3], out)
    f["pte"] = os.path.join(d, "model.pte")
    with open(f["pte"], "wb") as out:
        out.write(struct.pack("<I", 32) + b"ET12" + b"\0" * 56)
    # debug buffers that merely start like something: floats, with '{' and 'P' bytes
    with open(DBG, "rb") as src:
        real = src.read()
    for key, head in (("floaty", b"{\x00\x80\x3f"), ("pk", b"PK\x00\x00")):
        f[key] = os.path.join(d, key + ".bin")
        with open(f[key], "wb") as out:
            out.write(head + real[len(head):])
    return f


def wrong_option(f):
    cases = [
        ("ETRecord as --etdump", ["--etdump", REC], "this looks like an ETRecord; did you mean "
                                                   "--etrecord FILE?"),
        ("2023 ETRecord as --etdump", ["--etdump", REC_2023], "did you mean --etrecord FILE?"),
        (".json as --etdump", ["--etdump", JSON_ETDUMP], "this looks like a JSON text, not an "
                                                        "ETDump (an ETDump written as JSON"),
        (".gz as --etdump", ["--etdump", f["gz"]], "this looks like gzip-compressed data, not an "
                                                   "ETDump (decompress it first"),
        (".pte as --etdump", ["--etdump", f["pte"]], "this looks like an ExecuTorch program"),
        (".npz as --etdump", ["--etdump", NPZ], "did you mean --reference-outputs FILE?"),
        ("legacy dump as --etdump", ["--etdump", f["legacy"]],
         "this looks like a legacy profiler dump; did you mean --legacy-profile FILE?"),
        ("ETDump as --debug_buffer", ["--etdump", ETDP, "--debug_buffer", ETDP],
         "this looks like an ETDump; did you mean --etdump FILE?"),
        ("plain ETDump as --debug_buffer", ["--etdump", ETDP, "--debug_buffer", f["plain"]],
         "this looks like an ETDump"),
        ("ETRecord as --debug_buffer", ["--etdump", ETDP, "--debug_buffer", REC],
         "this looks like an ETRecord"),
        ("zip as --debug_buffer", ["--etdump", ETDP, "--debug_buffer", f["zip"]],
         "this looks like a zip archive, not a debug buffer"),
        ("JSON as --debug_buffer", ["--etdump", ETDP, "--debug_buffer", f["json_list"]],
         "this looks like a JSON text, not a debug buffer"),
        ("ETRecord as --reference-outputs", ["--etdump", ETDP, "--debug_buffer", DBG,
                                             "--reference-outputs", REC],
         "this looks like an ETRecord; did you mean --etrecord FILE?"),
        ("ETDump as --reference-outputs", ["--etdump", ETDP, "--debug_buffer", DBG,
                                           "--reference-outputs", ETDP],
         "did you mean --etdump FILE?"),
        ("ETDump as --legacy-profile", ["--legacy-profile", ETDP],
         "this looks like an ETDump; did you mean --etdump FILE?"),
        ("ETDump as --etrecord", ["--etdump", ETDP, "--etrecord", ETDP],
         "did you mean --etdump FILE?"),
        ("torch.save as --etrecord", ["--etdump", ETDP, "--etrecord", PT],
         "this looks like a torch.save archive; did you mean --reference-outputs FILE?"),
        ("ETRecord as --reference-etdump", ["--etdump", ETDP, "--debug_buffer", DBG,
                                            "--reference-etdump", REC,
                                            "--reference-debug-buffer", DBG],
         "(given as --reference-etdump): this looks like an ETRecord"),
        ("ETDump as --reference-debug-buffer", ["--etdump", ETDP, "--debug_buffer", DBG,
                                                "--reference-etdump", ETDP,
                                                "--reference-debug-buffer", ETDP],
         "(given as --reference-debug-buffer): this looks like an ETDump"),
        ("ETRecord as --reference-intermediates", ["--etdump", ETDP, "--debug_buffer", DBG,
                                                   "--etrecord", REC,
                                                   "--reference-intermediates", REC],
         "did you mean --etrecord FILE?"),
        ("ETRecord as --baseline-etdump", ["--etdump", ETDP, "--baseline-etdump", REC],
         "(given as --baseline-etdump): this looks like an ETRecord"),
    ]
    for label, args, needle in cases:
        rc, out, err = run(*args)
        check(f"sniff: {label} -> exit 3, named, no table",
              rc == 3 and needle in err and out == "", f"rc={rc} out={out[:120]!r} err={err}")


def right_option(f):
    """Files of the right kind, and debug buffers that only start like something."""
    for label, args in (
            ("real debug buffer", ["--etdump", ETDP, "--debug_buffer", DBG]),
            ("misaligned real-writer buffer", ["--etdump", os.path.join(DATA, "misaligned.etdp"),
                                               "--debug_buffer",
                                               os.path.join(DATA, "misaligned_debug.bin")]),
            ("buffer starting with '{'", ["--etdump", ETDP, "--debug_buffer", f["floaty"]]),
            ("buffer starting with 'PK'", ["--etdump", ETDP, "--debug_buffer", f["pk"]]),
            ("plain ETDump as --etdump", ["--etdump", f["plain"]]),
            ("2023 ETRecord as --etrecord", ["--etrecord", REC_2023, "--graph"]),
            ("legacy dump as --legacy-profile", ["--legacy-profile", f["legacy"]]),
            ("npz as --reference-outputs", ["--etdump", ETDP, "--debug_buffer", DBG,
                                            "--reference-outputs", NPZ, "--no-table"]),
            ("npy as --reference-outputs", ["--etdump", ETDP, "--debug_buffer", DBG,
                                            "--reference-outputs", NPY, "--no-table"]),
            ("pt as --reference-outputs", ["--etdump", ETDP, "--debug_buffer", DBG,
                                           "--reference-outputs", PT, "--no-table"])):
        rc, out, err = run(*args)
        # read and parsed: its shapes fit no output of this ETDump, so it is
        # refused as the references of another program (exit 3, issue 22)
        check(f"sniff: {label} is read (exit 0 or 1, or refused as another program's)",
              "this looks like" not in err and (rc in (0, 1) or (
                  rc == 3 and "do not belong together" in err)), f"rc={rc} {err}")
    # pipes are read once, by their parser: not sniffed
    with open(ETDP, "rb") as src:
        p = subprocess.run([A.ETC, "--etdump", "/dev/stdin", "--no-table"], stdin=src,
                           capture_output=True)
    check("sniff: an ETDump on a pipe still reads", p.returncode == 0, p.stderr.decode())


def main():
    d = common.work_dir("sniff")
    with common.harness():
        f = make_files(d)
        wrong_option(f)
        right_option(f)
    common.finish(d)


if __name__ == "__main__":
    main()
