"""The command line catches its user's mistakes before any work (issue 13):
every option value is checked before a file is read (the message names the
option and the value, exit 2, nothing on stdout), an unknown option gets a
"did you mean", and every long option takes both spellings ('_' and '-',
upstream's tools use underscores)."""
import os
import sys

SRC = os.environ["ETC_SRC"]
sys.dont_write_bytecode = True  # import the helpers without writing into the source tree
sys.path.insert(0, os.path.join(SRC, "tests"))
import common  # noqa: E402
from test_accuracy import Dump, T, check, etrecord, run  # noqa: E402

R0 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def bad_values(d, etdp, dbg, rec):
    base = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec]
    cases = [
        (["--min-snr", "abc"], "--min-snr takes a number (dB), not 'abc'"),
        (["--min-snr", "nan"], "--min-snr takes a number (dB), not 'nan'"),
        (["--min-snr", "1e999"], "--min-snr takes a number (dB), not '1e999'"),
        (["--min-snr", "0x10"], "--min-snr takes a number (dB), not '0x10'"),
        (["--metrics", "snr,foo"], "--metrics takes a list of snr,mse,cosine,l1,max_abs,max_rel, "
                                   "not 'snr,foo'"),
        (["--min-cosine", "2"], "--min-cosine takes a number from -1 to 1, not '2'"),
        (["--min-cosine", "-1.5"], "--min-cosine takes a number from -1 to 1, not '-1.5'"),
        (["--max-mse", "-1"], "--max-mse takes a number >= 0, not '-1'"),
        (["--max-abs", "inf"], "--max-abs takes a number >= 0, not 'inf'"),
        (["--pair-by", "name"], "--pair-by takes index, order, content or all, not 'name'"),
        (["--tables", "profile,taxes"], "--tables takes a list of"),
        (["--source_time_scale", "parsecs"], "--source_time_scale takes ns, us, ms, s or cycles, "
                                             "not 'parsecs'"),
        (["--delegate-time-scale", "fortnights"], "--delegate-time-scale takes UNIT or "
                                                  "BACKEND=UNIT"),
        (["--delegate-time-scale", "XnnpackBackend=hours"], "not 'XnnpackBackend=hours'"),
        (["--delegate-time-scale", "=us"], "not '=us'"),
        (["--baseline-etdump", etdp, "--max-regression", "-5"],
         "--max-regression takes a number >= 0 (percent), not '-5'"),
        (["--baseline-etdump", etdp, "--min-event-time", "soon"],
         "--min-event-time takes a number >= 0, not 'soon'"),
        (["--legacy-profile", etdp, "--legacy-time-scale", "s"],
         "--legacy-time-scale takes ns, us, ms or cycles, not 's'"),
        (["--max-values", "-3"], "--max-values takes a number from 0 to 1000000, not '-3'"),
        (["--plot", os.path.join(d, "pl"), "--report", os.path.join(d, "pl", "r.html")],
         "is the --plot folder or inside it, which is replaced whole"),
        (["--plot", os.path.join(d, "pl2") + "/", "--report", os.path.join(d, "pl2")],
         "is the --plot folder or inside it, which is replaced whole"),
    ]
    for extra, needle in cases:
        rc, out, err = run(*base, *extra)
        check(f"options: {' '.join(extra[-2:])} -> exit 2 naming option and value, no table",
              rc == 2 and needle in err and out == "", f"rc={rc} out={out[:200]!r} err={err}")
    # before any file is read: the ETDump does not even exist
    missing = os.path.join(d, "no-such.etdp")
    for extra in (["--min-snr", "abc"], ["--min-cosine", "2"], ["--metrics", "psnr"]):
        rc, out, err = run("--etdump", missing, *extra)
        check(f"options: {' '.join(extra)} is checked before the files (exit 2, not 3)",
              rc == 2 and "no-such.etdp" not in err, f"rc={rc} {err}")
    # thresholds with nothing to compare: said before the table
    rc, out, err = run("--etdump", etdp, "--debug_buffer", dbg, "--min-snr", "40")
    check("options: thresholds without references -> exit 2 before any table",
          rc == 2 and out == "" and "the thresholds need something to compare" in err,
          f"rc={rc} {out[:100]!r} {err}")
    for label, extra, needle in (
            ("--compare", ["--etrecord", rec, "--compare"], "the comparison needs --debug_buffer"),
            ("a numeric gap", ["--reference-etdump", etdp, "--reference-debug-buffer", dbg],
             "the numeric gap needs --debug_buffer")):
        rc, out, err = run("--etdump", etdp, *extra)
        check(f"options: {label} without --debug_buffer -> exit 2 before any table",
              rc == 2 and out == "" and needle in err, f"rc={rc} {out[:100]!r} {err}")
    # the edges of the ranges are values
    for extra in (["--min-cosine", "1"], ["--min-cosine", "-1"], ["--max-mse", "0"],
                  ["--min-snr", "-5"], ["--max-abs", "0"]):
        rc, out, err = run(*base, "--no-table", *extra)
        check(f"options: {' '.join(extra)} is accepted", rc in (0, 1), f"rc={rc} {err}")


def suggestions(etdp):
    for typed, want in (("--tvs", "--tsv"), ("--debug-bufer", "--debug_buffer"),
                        ("--min-snrr", "--min-snr"), ("--refrence-outputs", "--reference-outputs"),
                        ("--etrecrod", "--etrecord"), ("--pair_bye", "--pair-by"),
                        ("--delegate-timescale", "--delegate-time-scale")):
        rc, out, err = run("--etdump", etdp, typed, "x")
        check(f"options: {typed} -> did you mean {want}?",
              rc == 2 and f"unknown option '{typed}' (did you mean {want}?)" in err, err)
    rc, out, err = run("--etdump", etdp, "--frobnicate")
    check("options: a name far from every option gets no suggestion",
          rc == 2 and "unknown option '--frobnicate'" in err and "did you mean" not in err, err)
    rc, out, err = run("--etdump", etdp, "--tvs=out.tsv")
    check("options: --tvs=FILE names the option without its value",
          rc == 2 and "unknown option '--tvs' (did you mean --tsv?)" in err, err)


def spellings(d, etdp, dbg, rec):
    ref = ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec, "--min-snr", "60",
           "--metrics", "snr,l1", "--no-table"]
    rc0, out0, err0 = run(*ref)
    for label, args in (
            ("underscores", ["--etdump", etdp, "--debug_buffer", dbg, "--etrecord", rec,
                             "--min_snr", "60", "--metrics", "snr,l1", "--no_table"]),
            ("hyphens", ["--etdump", etdp, "--debug-buffer", dbg, "--etrecord", rec,
                         "--min-snr", "60", "--metrics", "snr,l1", "--no-table"]),
            ("aliases", ["--etdump-path", etdp, "--debug-buffer-path", dbg, "--etrecord_path",
                         rec, "--min_snr=60", "--metrics=snr,l1", "--no_table"])):
        rc, out, err = run(*args)
        check(f"options: the {label} spelling gives the same result",
              (rc, out) == (rc0, out0) and rc0 == 0 and "SNR" in out, f"rc={rc} {err}")
    js = os.path.join(d, "sp.json")
    rc, out, err = run("--etdump", etdp, "--debug-buffer", dbg, "--etrecord", rec,
                       "--show_outputs", "--include-delegate-debug-data", "--compare-results",
                       "--json", js, "--max_values", "2", "--pair_by", "order")
    check("options: flags and valued options in the other spelling",
          rc == 0 and "pairing by order" in out and os.path.exists(js), f"rc={rc} {err}")
    rc, out, err = run("--etdump", etdp, "--strict=yes")
    check("options: a flag given a value is a usage error",
          rc == 2 and "'--strict' takes no value" in err, err)


def main():
    d = common.work_dir("options")
    with common.harness():
        dump = Dump()
        dump.run([dump.tensor("FLOAT", R0, [6])])
        etdp, dbg = dump.write(d, "opts")
        rec = etrecord(d, "opts", [[T(R0)]])
        bad_values(d, etdp, dbg, rec)
        suggestions(etdp)
        spellings(d, etdp, dbg, rec)
    common.finish(d)


if __name__ == "__main__":
    main()
