"""The bundled example (examples/make_example.py, compiled into the CLI):
`etcompare --example` runs the whole flow on it and shows what a user has to
see: the profiling table, the accuracy comparison with its verdict (input 0
fails --min-snr 30 in its 3 runs, input 1 passes), the numeric gap naming
layer_norm at tiny_net.py:15 as the first diverging operator, and the plots.
It exits 0 (a demo that ran), says a real run would exit 1, and honours the
options given with it."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import ETC, check  # noqa: E402


def run_in(cwd, *args):
    p = subprocess.run([ETC, *args], capture_output=True, text=True, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def plot_written(d, stem):
    """gnuplot may be missing: then the .gp script and its data stand in."""
    return os.path.exists(os.path.join(d, stem + ".png")) or \
        os.path.exists(os.path.join(d, stem + ".gp"))


def main():
    work = common.work_dir("example")
    rc, out, err = run_in(work, "--example")
    check("--example exits 0", rc == 0, f"rc={rc} {err}")
    check("profiling table: the operators with percentiles over runs",
          "p50 (ms)" in out and "native_call_native_layer_norm.out" in out and
          "['aten.native_layer_norm.default']" in out and "Method::execute" in out, out[:2000])
    # the two blocks are Execute#1 and Execute#2, with the ETDump's run beside each run
    rows = [ln for ln in out.splitlines() if ln.startswith("│ Execute#")]
    verdicts = [(ln.split("│")[2].strip(), ln.split("│")[4].strip(), ln.split("│")[-2].strip())
                for ln in rows]
    # two blocks "Execute" (inputs 0 and 1, not merged), runs numbered from 0 in each
    want = [(str(r // 2), str(r % 2), "pass" if r % 2 else "FAIL: SNR 24.83 dB below 30 dB")
            for r in range(6)]
    check("accuracy table: the 3 runs of input 0 fail, the 3 of input 1 pass",
          verdicts == want and "3 of 6 outputs pass" in out, f"{verdicts}")
    check("accuracy verdict on stderr",
          "etcompare: accuracy gate FAILED: 3 of 6 outputs fail" in err, err)
    check("numeric gap: first diverging op with its source line and stack trace",
          "First divergence: row 3, node native_layer_norm: aten.native_layer_norm.default" in out and
          'File "/home/user/tiny_net/tiny_net.py", line 15, in forward' in out and
          "h = self.norm(h)" in out, out[-1500:])
    check("numeric gap verdict on stderr names the op and tiny_net.py:15",
          "first divergence at row 3 of 7: native_layer_norm aten.native_layer_norm.default "
          "(native_call_native_layer_norm.out) at tiny_net.py:15" in err, err)
    check("the ops before layer_norm pass",
          out.count("FIRST DIVERGENCE") == 1 and "tiny_net.py:14 │ pass" in out, out[-3000:])
    check("says the exit status a real run would have",
          "example: exit status 0 (on your own files this verdict exits 1)" in err, err)
    plots = os.path.join(work, "etcompare-plots")
    missing = [s for s in ("metric_snr", "numgap_chart", "numgap_first_divergence_heatmap",
                           "ops_top", "timeline") if not plot_written(plots, s)]
    check("plots written to ./etcompare-plots", not missing, f"missing {missing}")

    # a bare etcompare prints the usage, exits 2 and writes nothing (issue 22)
    bare = os.path.join(work, "bare")
    os.makedirs(bare)
    rc, out, err = run_in(bare)
    check("bare etcompare: usage, exit 2, nothing written",
          rc == 2 and "usage: etcompare" in err and "--example" in err and
          not os.listdir(bare), f"rc={rc} {err}")

    # options given win: a looser gate passes, --plot DIR, --no-table
    mine = os.path.join(work, "mine")
    rc, out, err = run_in(work, "--example", "--min-snr", "10", "--plot", mine, "--no-table")
    check("--example --min-snr 10: everything passes, exit 0",
          rc == 0 and "accuracy: 6 of 6 outputs pass" in err and
          "numeric gap: 7 intermediate outputs pass" in err and "p50 (ms)" not in out,
          f"rc={rc} {err}")
    check("--example --plot DIR writes there", plot_written(mine, "numgap_chart"))
    # with an output option the example only supplies the inputs: the result
    # is the same command's on its files (examples/), numeric gap included
    tsv = os.path.join(work, "t.tsv")
    rc, out, err = run_in(work, "--example", "--tsv", tsv, "--no-table")
    ex = os.path.join(common.SRC, "examples")
    files = ["--etdump", os.path.join(ex, "example.etdp"), "--debug_buffer",
             os.path.join(ex, "example_debug.bin"), "--etrecord",
             os.path.join(ex, "example.etrecord")]
    tsv2 = os.path.join(work, "t2.tsv")
    files += ["--min-snr", "30"]
    rc2, out2, err2 = run_in(work, *files, "--tsv", tsv2, "--no-table")
    tail = "etcompare: example: exit status 0 (on your own files this verdict exits 1)\n"
    check("--example --tsv FILE: the TSV (linked to the ETRecord), no plots, the same TSV "
          "and verdicts as on the example's files at --min-snr 30",
          rc == 0 and rc2 == 1 and os.path.exists(tsv) and "aten.native_layer_norm.default" in
          open(tsv).read() and open(tsv).read() == open(tsv2).read() and
          "accuracy gate FAILED" in err and err == err2 + tail and
          "first divergence at row 3" in err and
          not os.path.exists(os.path.join(work, "etcompare-plots-tsv")),
          f"rc={rc} rc2={rc2} {err} ---- {err2}")
    # one gate whatever is written: --numgap-tsv alone and with --json agree
    ta, tb = os.path.join(work, "a.tsv"), os.path.join(work, "b.tsv")
    run_in(work, "--example", "--numgap-tsv", ta, "--no-table")
    run_in(work, "--example", "--numgap-tsv", tb, "--json", os.path.join(work, "b.json"),
           "--no-table")
    check("--example: --numgap-tsv says the same with and without --json (FAIL at row 3)",
          os.path.exists(ta) and os.path.exists(tb) and open(ta).read() == open(tb).read() and
          "\tFAIL\t" in open(ta).read(), "")
    rc, out, err = run_in(work, "--example", "--json", "-", "--no-table")
    rc2, out2, err2 = run_in(work, *files, "--json", "-", "--no-table")
    import json
    j, j2 = json.loads(out), json.loads(out2)
    check("--example --json -: the numeric gap is in the JSON, as on the example's files",
          rc == 0 and j["numeric_gap"] is not None and
          j["numeric_gap"]["rows"] == j2["numeric_gap"]["rows"] and
          j["numeric_gap"]["first_divergence"] == j2["numeric_gap"]["first_divergence"],
          f"rc={rc} {str(j.get('numeric_gap'))[:200]}")
    rc, out, err = run_in(work, "--example", "--etdump", "x.etdp")
    check("--example with --etdump is a usage error", rc == 2, f"rc={rc} {err}")
    common.finish(work)


if __name__ == "__main__":
    main()
