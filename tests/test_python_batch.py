"""python3 -m etcompare.batch (issue 16) over a folder of fixtures with one
corrupt file: a local process pool and a Dask LocalCluster of 2 worker
processes (on 127.0.0.1) give the same JSONL, sorted; the corrupt file is
one error line; the companions are found by name; every line validates
against schema/batch-summary.schema.json and its numbers equal the
facade's and numpy's; a CSV manifest gives the same lines; --resume skips
what is done. The Dask half is skipped, with the reason printed, when dask
or distributed is not importable."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import DATA, SRC, check, setup  # noqa: E402
import test_python as T  # noqa: E402

E = setup()
import common  # noqa: E402
import test_accuracy as A  # noqa: E402
import test_numgap as NG  # noqa: E402


def batch(*args):
    return common.run_bounded([sys.executable, "-m", "etcompare.batch", *args])


def lines(path):
    with open(path) as f:
        return [json.loads(ln) for ln in f]


def strip(rows):
    """The lines without their elapsed time (the only field that varies)."""
    return [json.dumps({k: v for k, v in r.items() if k != "elapsed_s"}) for r in rows]


def folder(d):
    f = os.path.join(d, "runs")
    os.makedirs(f)
    for name in ("runs5_ops12.etdp", "runs5_ops12.bin", "misaligned.etdp", "misaligned_debug.bin",
                 "tutorial.etdp"):
        shutil.copy(os.path.join(DATA, name), f)
    with open(os.path.join(DATA, "runs5_ops12.etdp"), "rb") as src:
        data = src.read()
    with open(os.path.join(f, "corrupt.etdp"), "wb") as out:
        out.write(data[:200])
    # a device run with its reference run and ETRecord (numeric gap, first divergence)
    ref, dev = NG.chain(False), NG.chain(True)
    shutil.copy(NG.chain_etrecord(d), os.path.join(f, "chain.etrecord"))
    NG.chain_dump(f, "chain", dev)
    NG.chain_dump(f, "chain.ref", ref)
    # a run with reference outputs in its ETRecord (accuracy)
    A.two_run_fixture(f, "two", A.A0, A.A1)
    return f, ref, dev


def main():
    work = os.environ.get("ETC_WORK")
    if work:
        os.makedirs(work, exist_ok=True)
    import jsonschema
    with open(os.path.join(SRC, "schema", "batch-summary.schema.json")) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    with tempfile.TemporaryDirectory(dir=work) as d:
        # Dask's worker directories and their locks in this test's folder, not
        # in a /tmp/dask-worker-space shared with other runs
        os.environ["DASK_TEMPORARY_DIRECTORY"] = d
        f, ref, dev = folder(d)
        pool = os.path.join(d, "pool.jsonl")
        rc, _out, err = batch("-o", pool, "--workers", "2", "--min-snr", "40", f)
        rows = lines(pool) if os.path.exists(pool) else []
        by = {os.path.basename(r["etdump"]): r for r in rows}
        check("batch pool: exit 3 (a bad input), one line per ETDump, sorted by path",
              rc == 3 and sorted(by) == ["chain.etdp", "corrupt.etdp", "misaligned.etdp",
                                         "runs5_ops12.etdp", "tutorial.etdp", "two.etdp"] and
              [r["etdump"] for r in rows] == sorted(r["etdump"] for r in rows), f"{rc} {err}")
        bad = [e.message for r in rows for e in validator.iter_errors(r)]
        check("batch pool: every line validates against the schema", rows and not bad, bad[:3])
        c = by.get("corrupt.etdp", {})
        check("batch pool: the corrupt file is an error line naming the file and byte",
              c.get("status") == "error" and "corrupt.etdp" in c.get("message", "") and
              "byte" in c.get("message", ""), c)
        # a threshold with nothing to compare is an error, as the CLI's usage error
        for name in ("runs5_ops12.etdp", "tutorial.etdp"):
            r = by.get(name, {})
            check(f"batch pool: {name}: --min-snr with no reference is an error line",
                  r.get("status") == "error" and
                  "the thresholds need something to compare" in r.get("message", ""), r)
        # the profiling figures: the same folder without thresholds
        plain = os.path.join(d, "plain.jsonl")
        batch("-o", plain, "--workers", "2", f)
        by_plain = {os.path.basename(r["etdump"]): r for r in lines(plain)}
        r5 = by_plain.get("runs5_ops12.etdp", {})
        insp = E.Inspector(etdump_path=os.path.join(DATA, "runs5_ops12.etdp"),
                           debug_buffer_path=os.path.join(DATA, "runs5_ops12.bin"))
        ex = next(e for e in insp.event_blocks[1].events if e.name == "Method::execute")
        check("batch pool: runs5_ops12: counts and Method::execute p50/avg are the facade's",
              r5.get("status") == "ok" and r5.get("blocks") == 2 and r5.get("runs") == 6 and
              r5.get("execute_p50") == ex.perf_data.p50 and
              r5.get("execute_avg") == ex.perf_data.avg and
              r5.get("debug_buffer", "").endswith("runs5_ops12.bin"), r5)
        check("batch pool: misaligned finds X_debug.bin, tutorial has none",
              by.get("misaligned.etdp", {}).get("debug_buffer", "").endswith(
                  "misaligned_debug.bin") and by.get("tutorial.etdp", {}).get("debug_buffer")
              is None and by_plain["tutorial.etdp"]["status"] == "ok")
        ch = by.get("chain.etdp", {})
        fd = ch.get("first_divergence") or {}
        m9 = A.metrics(ref[NG.BAD], dev[NG.BAD])
        mo = A.metrics(ref[-1], dev[-1])
        wo = ch.get("worst_output") or {}
        check("batch pool: the reference run is found by name, the first divergence is op 9",
              ch.get("status") == "gate_failed" and ch.get("reference", "").endswith(
                  "chain.ref.etdp") and ch.get("reference_debug_buffer", "").endswith(
                  "chain.ref_debug.bin") and ch.get("etrecord", "").endswith("chain.etrecord") and
              fd.get("handle") == [NG.BAD + 1] and fd.get("row") == NG.BAD and
              A.close(fd.get("snr"), m9["snr"]) and NG.op_name(NG.BAD) in fd.get("op", "") and
              fd.get("node") and fd.get("node") != fd.get("op"), ch)
        check("batch pool: the outputs against the reference run's, in float64",
              wo.get("outputs") == 1 and A.close(wo.get("snr"), mo["snr"]) and
              A.close(wo.get("mse"), mo["mse"]) and A.close(wo.get("cosine"), mo["cosine"]), wo)
        tw = by.get("two.etdp", {})
        m0, m1 = A.metrics(A.R0, A.A0), A.metrics(A.R1, A.A1)
        tw_w = tw.get("worst_output") or {}
        check("batch pool: the ETRecord's reference outputs: ok at 40 dB, worst SNR in float64",
              tw.get("status") == "ok" and tw_w.get("outputs") == 2 and
              A.close(tw_w.get("snr"), min(m0["snr"], m1["snr"])) and
              A.close(tw_w.get("mse"), max(m0["mse"], m1["mse"])), tw)
        # one worker gives the same lines
        one = os.path.join(d, "one.jsonl")
        batch("-o", one, "--workers", "1", "--min-snr", "40", f)
        check("batch pool: --workers 1 gives the same JSONL", strip(lines(one)) == strip(rows))
        # a manifest
        man = os.path.join(d, "manifest.csv")
        with open(man, "w") as m:
            m.write("etdump,debug_buffer,etrecord,reference,reference_debug_buffer\n")
            m.write("runs/runs5_ops12.etdp,runs/runs5_ops12.bin,,,\n")
            m.write("runs/chain.etdp,runs/chain_debug.bin,runs/chain.etrecord,runs/chain.ref.etdp,"
                    "runs/chain.ref_debug.bin\n")
        rc, out, err = batch("--min-snr", "40", man)
        got = strip(json.loads(ln) for ln in out.splitlines())
        check("batch manifest: the same lines as by naming convention, on stdout (exit 3: "
              "the run with nothing to compare)",
              rc == 3 and got == strip([by["chain.etdp"], by["runs5_ops12.etdp"]]),
              f"{rc} {err} {got}")
        # --resume: only what is missing is analysed
        res = os.path.join(d, "resume.jsonl")
        with open(res, "w") as o:
            o.write("".join(json.dumps(r) + "\n" for r in rows
                            if not r["etdump"].endswith("tutorial.etdp")))
        rc, _out, err = batch("-o", res, "--resume", "--min-snr", "40", "--workers", "2", f)
        check("batch --resume: analyses only the missing input, the summary is complete, sorted",
              "1 run analysed" in err and "5 skipped" in err and
              strip(lines(res)) == strip(rows), err)
        # Dask
        try:
            import dask  # noqa: F401
            import distributed  # noqa: F401
        except ImportError as e:
            print(f"skip batch on Dask: dask or distributed is not importable ({e}); "
                  "scripts/install-deps.sh --tests installs python3-dask and python3-distributed")
        else:
            dk = os.path.join(d, "dask.jsonl")
            rc, _out, err = batch("-o", dk, "--scheduler", "local", "--workers", "2",
                                  "--min-snr", "40", f)
            if not common.hung_under_asan(rc, "batch on a Dask LocalCluster"):
                check("batch Dask LocalCluster (2 worker processes): the pool's JSONL, sorted",
                      rc == 3 and os.path.exists(dk) and strip(lines(dk)) == strip(rows),
                      f"{rc} {err[-1500:]}")
            # an existing cluster by address
            code = (
                "import subprocess, sys\n"
                "from distributed import LocalCluster\n"
                "c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, "
                "host='127.0.0.1', dashboard_address=None)\n"
                f"p = subprocess.run([sys.executable, '-m', 'etcompare.batch', '-o', {dk + '2'!r}, "
                f"'--scheduler', c.scheduler_address, '--min-snr', '40', {f!r}])\n"
                "c.close()\n"
                "sys.exit(p.returncode)\n")
            rc, _out, err = common.run_bounded([sys.executable, "-c", code])
            if not common.hung_under_asan(rc, "batch on a running Dask cluster"):
                check("batch --scheduler tcp://127.0.0.1:PORT: the same JSONL from a running "
                      "cluster", rc == 3 and os.path.exists(dk + "2") and
                      strip(lines(dk + "2")) == strip(rows), err[-1500:])
        # a worker that dies (a crash in native code) costs one error line only;
        # in a process of its own, so that a hang there is bounded and shows its stacks
        code = (
            "import json, os\n"
            "import etcompare.batch as B\n"
            "real = B.analyze\n"
            "def crashing(spec, gate):\n"
            "    if spec['etdump'].endswith('misaligned.etdp'):\n"
            "        os._exit(9)\n"
            "    return real(spec, gate)\n"
            "B.analyze = crashing  # the pool's workers are forked with it\n"
            "got = []\n"
            f"B._run_pool(B._chunks(B.discover([{f!r}]), 2), {{'min_snr': 40.0}}, 2, got.extend)\n"
            "print(json.dumps(got))\n")
        rc, out, err = common.run_bounded([sys.executable, "-c", code])
        got = json.loads(out) if rc == 0 else []
        check("batch pool: the run with a dying worker ends (exit 0)", rc == 0, err[-1500:])
        got = sorted((json.loads(ln) for ln in got), key=lambda r: r["etdump"])
        dead = [r for r in got if "worker process died" in (r["message"] or "")]
        check("batch pool: a worker that dies is an error line for its ETDump only, the rest "
              "as before", [os.path.basename(r["etdump"]) for r in dead] == ["misaligned.etdp"] and
              strip(r for r in got if r not in dead) ==
              strip(r for r in rows if not r["etdump"].endswith("misaligned.etdp")) and
              not [e for r in dead for e in validator.iter_errors(r)], [r["message"] for r in dead])
        rc, _out, err = batch("--workers", "0", f)
        check("batch usage: --workers 0 is exit 2", rc == 2 and "--workers" in err, err)
    print(f"{T.passed} passed, {T.failed} failed")
    sys.exit(1 if T.failed or not T.passed else 0)


if __name__ == "__main__":
    main()
