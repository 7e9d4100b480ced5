#!/usr/bin/env python3
"""The main command, third hostile pass: mistakes that gave a silent wrong
result, a hang or a misleading message.

- --inputs wins over the runs' bundled_input_index (it was never read when
  the runs carried one, and the first run's inputs were reused for every
  later block); a path that cannot be opened is exit 3; one file for runs
  of different bundled inputs is exit 3 naming --block.
- A damaged *_example_inputs member of the ETRecord is the record's damage
  (exit 3 under a threshold, as damaged weights are), not "no example
  inputs" and a gate passed without its numeric gap.
- Options that would be skipped without a word are refused: --legacy-profile
  with the ETDump's options, --example with files of its own, two inputs
  on standard input, an empty --plot or --graph; --method and
  --reference-graph naming nothing in the record are exit 3 (a name not in
  the inputs), with "did you mean" and the JUnit still written.
- --quant-params is read as every input is (a FIFO is refused, not waited
  on forever) and checked: a scale <= 0, a zero point that is no integer,
  an unknown key, an entry that does not fit its output are exit 3 naming
  the file and the entry; an entry no output uses is a warning.
- A reference run that is the run itself (--reference-etdump the run's own
  files) is a warning: every op compares equal with itself.
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

EX = os.path.join(C.SRC, "examples")
EXAMPLE = ["--etdump", os.path.join(EX, "example.etdp"), "--debug_buffer",
           os.path.join(EX, "example_debug.bin"), "--etrecord",
           os.path.join(EX, "example.etrecord")]
REAL = os.path.join(C.DATA, "realexport")


def case_inputs_win(d):
    missing = os.path.join(d, "missing.npz")
    rc, out, err = C.run(*EXAMPLE, "--min-snr", "30", "--no-table", "--inputs", missing)
    C.check("--inputs that cannot be opened: exit 3 naming it (runs with a "
            "bundled_input_index)", rc == 3 and f"{missing}: cannot open" in err,
            f"rc={rc} {err[-400:]}")
    zeros = os.path.join(d, "zeros.npz")
    np.savez(zeros, **{"0": np.zeros((1, 16), np.float32)})
    rc, out, err = C.run(*EXAMPLE, "--min-snr", "30", "--no-table", "--inputs", zeros)
    C.check("one --inputs file for runs of two bundled inputs: exit 3, naming both and "
            "--block", rc == 3 and "ran different bundled inputs (Execute#1: "
            "bundled_input_index 0, Execute#2: 1): give --block NAME" in err,
            f"rc={rc} {err[-400:]}")
    # the file is read: zeros are not the run's inputs, so the first op disagrees
    rc, out, err = C.run(*EXAMPLE, "--block", "Execute#2", "--min-snr", "30", "--no-table",
                         "--inputs", zeros)
    C.check("--block Execute#2 --inputs zeros: the file's inputs are run (the first op "
            "disagrees with the runtime), not the record's representative_inputs[1]",
            rc == 1 and "row 0 addmm (aten.addmm.default), already disagrees" in err and
            "representative_inputs[1]" not in err, f"rc={rc} {err[-600:]}")
    right = os.path.join(d, "rep1.npz")
    np.savez(right, **{"0": representative_input(1)})
    rc, out, err = C.run(*EXAMPLE, "--block", "Execute#2", "--min-snr", "30", "--no-table",
                         "--inputs", right)
    C.check("--block Execute#2 --inputs (its representative inputs): exit 0, no warning",
            rc == 0 and "warning" not in err, f"rc={rc} {err[-600:]}")


def damaged_member(src, member, dst):
    """A copy of ETRecord src with one byte of the member's data flipped
    (its CRC-32 then disagrees)."""
    import zipfile
    data = bytearray(open(src, "rb").read())
    with zipfile.ZipFile(src) as z:
        info = z.getinfo(member)
    name_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(data[info.header_offset + 28:info.header_offset + 30], "little")
    at = info.header_offset + 30 + name_len + extra_len + info.compress_size // 2
    data[at] ^= 0x10
    open(dst, "wb").write(bytes(data))


def case_damaged_example_inputs(d):
    rec = os.path.join(d, "cnn_exin.etrecord")
    member = "edge_dialect_exported_program_example_inputs"
    damaged_member(os.path.join(REAL, "cnn.etrecord"), member, rec)
    run = ["--etdump", os.path.join(REAL, "cnn.etdp"), "--debug_buffer",
           os.path.join(REAL, "cnn_debug.bin"), "--etrecord", rec, "--no-table"]
    rc, out, err = C.run(*run, "--min-snr", "30")
    C.check("damaged example inputs under --min-snr: exit 3 naming the member and its CRC",
            rc == 3 and f"member {member}: CRC-32" in err and "--no-reference-run" in err and
            "no example inputs" not in err, f"rc={rc} {err[-500:]}")
    rc, out, err = C.run(*run)
    C.check("damaged example inputs, no threshold: a note naming the damage, exit 0",
            rc == 0 and "note: no numeric gap from the ETRecord's graph" in err and
            f"member {member}: CRC-32" in err and "no example inputs" not in err,
            f"rc={rc} {err[-500:]}")


def case_usage_mistakes(d):
    legacy = os.path.join(EX, "prof_result.bin")
    for opt in (["--baseline-etdump", os.path.join(d, "none.etdp")], ["--max-regression", "1"],
                ["--plot"], ["--plot=" + os.path.join(d, "p")], ["--source_time_scale", "us"],
                ["--delegate-time-scale", "us"]):
        rc, out, err = C.run("--legacy-profile", legacy, *opt)
        name = opt[0].split("=")[0]
        C.check(f"--legacy-profile {name}: exit 2, '{name} needs --etdump'",
                rc == 2 and f"{name} needs --etdump" in err and out == "",
                f"rc={rc} {err[-300:]}")
    C.check("--legacy-profile --plot DIR: no folder made",
            not os.path.exists(os.path.join(d, "p")))
    rec = os.path.join(REAL, "mlp.etrecord")
    for opt in (["--etrecord", rec], ["--graph"], ["--show-references"],
                ["--legacy-profile", legacy]):
        rc, out, err = C.run("--example", *opt)
        C.check(f"--example {opt[0]}: exit 2, cannot be combined",
                rc == 2 and f"--example and {opt[0]} cannot be combined" in err,
                f"rc={rc} {err[-300:]}")
    etdp = os.path.join(REAL, "mlp.etdp")
    p = subprocess.run([C.ETC, "--etdump", "-", "--debug_buffer", "-", "--no-table"],
                         input=open(etdp, "rb").read(), capture_output=True)
    C.check("--etdump - --debug_buffer -: exit 2, one input on standard input",
            p.returncode == 2 and b"only one input may be - (standard input)" in p.stderr,
            p.stderr[-300:])
    for opt in ("--plot=", "--graph="):
        rc, out, err = C.run("--etdump", etdp, "--etrecord", rec, opt, "--no-table")
        C.check(f"{opt} (empty): exit 2, 'has an empty value'",
                rc == 2 and f"option '{opt[:-1]}' has an empty value" in err,
                f"rc={rc} {err[-300:]}")
    run = ["--etdump", etdp, "--debug_buffer", os.path.join(REAL, "mlp_debug.bin"),
           "--etrecord", rec, "--no-table"]
    rc, out, err = C.run(*run, "--method", "Forward")
    C.check("--method Forward: exit 3, did you mean forward?",
            rc == 3 and 'no method "Forward"' in err and "did you mean forward?" in err,
            f"rc={rc} {err[-300:]}")
    junit = os.path.join(d, "j.xml")
    rc, out, err = C.run(*run, "--min-snr", "30", "--reference-graph", "bogus", "--junit",
                         junit)
    C.check("--reference-graph bogus: exit 3 naming what the record has, JUnit written",
            rc == 3 and 'no graph "bogus"' in err and "it has: " in err and
            os.path.exists(junit), f"rc={rc} {err[-300:]}")
    rc, out, err = C.run("--etrecord", rec, "--show-references", "--method", "bogus")
    C.check("--show-references --method bogus: exit 3, not ignored",
            rc == 3 and 'no method "bogus"' in err and out == "", f"rc={rc} {err[-300:]}")


def case_quant_params(d):
    run = ["--etdump", os.path.join(REAL, "qcnn.etdp"), "--debug_buffer",
           os.path.join(REAL, "qcnn_debug.bin"), "--etrecord",
           os.path.join(REAL, "qcnn.etrecord"), "--min-snr", "30", "--no-table"]
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    try:
        p = subprocess.run([C.ETC, *run, "--quant-params", fifo], capture_output=True,
                           text=True, timeout=60)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, "hung"
    C.check("--quant-params FIFO: exit 3, not a regular file (no hang)",
            rc == 3 and "not a regular file (a FIFO)" in err, f"rc={rc} {err[-300:]}")
    ref = os.path.join(d, "qref.npz")
    with np.load(os.path.join(REAL, "qcnn_aot_f64.npz")) as z:
        np.savez(ref, **{"17": z["quantized_decomposed_dequantize_per_tensor_default"]})
    qp = os.path.join(d, "qp.json")
    for text, want in (('{"17": {"scale": 0, "zero_point": 0}}', "scale 0: a scale must be"),
                       ('{"17": {"scale": -1}}', "a scale must be greater than 0"),
                       ('{"17": {"scale": 1, "zero_point": 0.5}}', "a zero point is an integer"),
                       ('{"17": {"scale": 1, "zero_point": 3e10}}', "outside a zero point's int32"),
                       ('{"17": {"scale": [1, 2], "axis": 64}}', "at most 64 dimensions"),
                       ('{"17": {"scale": 1, "zero_pt": 3}}', 'unknown key "zero_pt"'),
                       ('{"17": {"scale": [1, 2], "zero_point": [0], "axis": 2}}',
                        "the entry for debug handle 17 (row 0, native_call_quantize_per_tensor"
                        ".out): quantization parameters do not fit: 2 channels along axis 2")):
        open(qp, "w").write(text)
        rc, out, err = C.run(*run, "--reference-intermediates", ref, "--quant-params", qp)
        C.check(f"--quant-params {text}: exit 3 naming the file and the entry",
                rc == 3 and f"{qp}: " in err and want in err, f"rc={rc} {err[-400:]}")
    open(qp, "w").write('{"999": {"scale": 1, "zero_point": 0}}')
    rc, out, err = C.run(*run, "--reference-intermediates", ref, "--quant-params", qp)
    C.check("--quant-params naming a handle no output has: a warning says it is not used",
            rc == 0 and f'{qp}: 1 entry names no compared integer output\'s debug handles '
            '("999")'
            in err, f"rc={rc} {err[-400:]}")


def case_self_reference(d):
    etdp, buf = os.path.join(REAL, "cnn.etdp"), os.path.join(REAL, "cnn_debug.bin")
    link = os.path.join(d, "same.etdp")
    os.link(etdp, link) if os.stat(etdp).st_dev == os.stat(d).st_dev else os.symlink(etdp, link)
    run = ["--etdump", etdp, "--debug_buffer", buf, "--no-table", "--min-snr", "30"]
    rc, out, err = C.run(*run, "--reference-etdump", link, "--reference-debug-buffer", buf)
    C.check("--reference-etdump the run's own (a link to it): a warning, every op equal",
            rc == 0 and "is the run's own ETDump (and --reference-debug-buffer its debug "
            "buffer): every op compares equal with itself" in err, f"rc={rc} {err[-400:]}")
    rc, out, err = C.run(*run, "--reference-etdump", os.path.join(REAL, "cnn_mixed.etdp"),
                         "--reference-debug-buffer", os.path.join(REAL, "cnn_mixed_debug.bin"))
    C.check("another run as the reference: no such warning",
            "is the run's own ETDump" not in err, f"rc={rc} {err[-400:]}")


def case_number_nits(d):
    run = ["--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer",
           os.path.join(REAL, "mlp_debug.bin"), "--etrecord",
           os.path.join(REAL, "mlp.etrecord"), "--no-table"]
    for v in (" 60", "60 ", "\t60"):
        rc, out, err = C.run(*run, "--min-snr", v)
        C.check(f"--min-snr {v!r}: exit 2 (blanks before the number as after it)",
                rc == 2 and "--min-snr takes a number (dB), not '" + v.replace("\t", "\\x09")
                + "'" in err,
                f"rc={rc} {err[-300:]}")
    hostile = "a\x1b[31mb" * 2000
    rc, out, err = C.run(*run, "--min-snr", hostile)
    C.check("--min-snr with escape sequences, 18 KB long: exit 2, the value escaped and cut",
            rc == 2 and "\x1b" not in err and "a\\x1b[31mb" in err and len(err) < 1200,
            f"rc={rc} {len(err)} {err[:200]!r}")
    rc, out, err = C.run(*run, "--max-mse", "1e-400")
    C.check("--max-mse 1e-400: exit 2, beyond the range of a double (it is a number)",
            rc == 2 and "not '1e-400' (beyond the range of a double" in err,
            f"rc={rc} {err[-300:]}")
    rc, out, err = C.run(*run, "--inputs", os.path.join(REAL, "mlp.etrecord"))
    C.check("--inputs an ETRecord: exit 3, did you mean --etrecord",
            rc == 3 and "(given as --inputs): this looks like an ETRecord; did you mean "
            "--etrecord FILE?" in err, f"rc={rc} {err[-300:]}")


def case_delegate_scale_twice(d):
    etdp = os.path.join(REAL, "mlp.etdp")
    for first, second, who in (("us", "us", "every backend"), ("us", "ms", "every backend"),
                               ("XNN=us", "XNN=ms", "backend XNN")):
        rc, out, err = C.run("--etdump", etdp, "--etrecord", os.path.join(REAL, "mlp.etrecord"),
                             "--delegate-time-scale", first, "--delegate-time-scale", second,
                             "--no-table")
        C.check(f"--delegate-time-scale {first} then {second}: exit 2, given twice for {who}",
                rc == 2 and f"given twice for {who}" in err, f"rc={rc} {err[-300:]}")


def case_npz_reference_names(d):
    run = ["--etdump", os.path.join(REAL, "mlp.etdp"), "--debug_buffer",
           os.path.join(REAL, "mlp_debug.bin"), "--no-table"]
    z = np.zeros((4, 10), np.float32)
    for name, arrays, want in (
            ("mixed", {"0.0": z, "x": z}, 'array "x" is not named "k.j" (reference k, output '
             'j) as 1 other is'),
            ("from1", {"1.0": z}, 'array "1.0" has no array "0.0" before it: references '
             'must be numbered from 0')):
        f = os.path.join(d, name + ".npz")
        np.savez(f, **arrays)
        rc, out, err = C.run(*run, "--reference-outputs", f)
        C.check(f".npz reference outputs {sorted(arrays)}: exit 3, {want[:40]}...",
                rc == 3 and want in err, f"rc={rc} {err[-300:]}")


def case_unusable_example_inputs(d):
    """Example inputs that are there but not usable (an empty member, as
    torch writes for a program without them; an int) are not damage: the
    representative inputs are tried next, as before."""
    import io
    import zipfile
    import torch
    seven = io.BytesIO()
    torch.save(7, seven)
    src = os.path.join(REAL, "cnn.etrecord")
    member = "edge_dialect_exported_program_example_inputs"
    with zipfile.ZipFile(src) as z:
        orig = z.read(member)
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    for name, data in (("empty", b""), ("int", seven.getvalue())):
        rec = os.path.join(d, f"cnn_{name}.etrecord")
        with zipfile.ZipFile(rec, "w") as out:
            for n, b in items:
                out.writestr(n, data if n == member else b)
            out.writestr("representative_inputs", orig)
        rc, out, err = C.run("--etdump", os.path.join(REAL, "cnn.etdp"), "--debug_buffer",
                             os.path.join(REAL, "cnn_debug.bin"), "--etrecord", rec,
                             "--no-table", "--min-snr", "30")
        C.check(f"example inputs {name}, representative inputs there: the gap is computed "
                "from them, exit 0",
                rc == 0 and "17 intermediate outputs pass" in err and "no numeric gap" not in err,
                f"rc={rc} {err[-400:]}")


def representative_input(i):
    """representative_inputs[i][0] of the example's ETRecord (torch.load)."""
    import io
    import zipfile
    import torch
    with zipfile.ZipFile(os.path.join(EX, "example.etrecord")) as z:
        x = torch.load(io.BytesIO(z.read("representative_inputs")))
    return x[i][0].numpy().astype(np.float32)


if __name__ == "__main__":
    C.run_cases("trust-cli3", case_inputs_win, case_damaged_example_inputs,
                case_usage_mistakes, case_quant_params, case_self_reference,
                case_number_nits, case_delegate_scale_twice,
                case_npz_reference_names, case_unusable_example_inputs)
