"""python3 -m etcompare.batch against a hostile user, round 2: outputs that
are inputs (by device and inode: hard and symbolic links too) or each other
refused before any run (exit 2); every number checked with etcompare's own
rules and words (src/cli/args.c); a gate that had nothing to compare is an
error line, never "ok"; manifest columns case-insensitive, a BOM and ';'
taken, an unknown column refused; rows sharing an ETDump all analysed, only
identical rows once with a warning; groups by the ETRecord's bytes, not its
file name; reference outputs or a reference run of another model named as
such; --scheduler and --resume mistakes one line each with the documented
exit status; a dangling *.etdp link is an error line; list.CSV a manifest."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import SRC, check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()
import numpy as np  # noqa: E402

RX = os.path.join(SRC, "tests", "data", "realexport")


def batch(*args, cwd=None, env=None):
    p = subprocess.run([sys.executable, "-m", "etcompare.batch", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=600,
                       env=None if env is None else dict(os.environ, **env))
    return p.returncode, p.stdout, p.stderr


def lines(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run_files(d, name, model="mlp", buffer=True, record=True):
    """d/name.etdp (+ name_debug.bin, name.etrecord) copied from realexport's model."""
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(RX, model + ".etdp"), os.path.join(d, name + ".etdp"))
    if buffer:
        shutil.copy(os.path.join(RX, model + "_debug.bin"), os.path.join(d, name + "_debug.bin"))
    if record:
        shutil.copy(os.path.join(RX, model + ".etrecord"), os.path.join(d, name + ".etrecord"))
    return os.path.join(d, name + ".etdp")


def one_line_error(rc, err, code):
    # usage errors (argparse's) and input errors carry one prefix
    return (rc == code and "Traceback" not in err and len(err.strip().splitlines()) == 1
            and err.startswith("etcompare.batch: error: "))


def case_outputs(d):
    """B1, B2, B3: an output that is an input, or another output."""
    f = os.path.join(d, "out")
    etdp = run_files(f, "mlp")
    buf, rec = os.path.join(f, "mlp_debug.bin"), os.path.join(f, "mlp.etrecord")
    man = os.path.join(f, "m.csv")
    with open(man, "w") as fh:
        fh.write("etdump\nmlp.etdp\n")
    os.link(etdp, os.path.join(d, "hard.jsonl"))
    os.symlink(buf, os.path.join(d, "soft.jsonl"))
    before = {p: digest(p) for p in (etdp, buf, rec, man)}
    for args, path, what in (
            (["-o", etdp, etdp], etdp, "an ETDump"),
            (["-o", buf, etdp], buf, "debug_buffer"),
            (["-o", man, man], man, "a manifest"),
            (["-o", os.path.join(d, "hard.jsonl"), f], etdp, "ETDump"),
            (["-o", os.path.join(d, "soft.jsonl"), f], buf, "debug_buffer"),
            (["--group-summary", rec, f], rec, "etrecord"),
            (["-o", os.path.join(d, "s.jsonl"), "--group-summary", etdp, man], etdp, "ETDump"),
            (["--agreement-heatmaps", rec, "--group-summary", os.path.join(d, "g.jsonl"), f],
             rec, "etrecord")):
        rc, out, err = batch(*args)
        check(f"{' '.join(os.path.basename(a) for a in args[:2])}: refused, exit 2, naming "
              f"{os.path.basename(path)} ({what})",
              one_line_error(rc, err, 2) and path in err and what in err and not out,
              f"rc={rc} {err[-400:]}")
    check("outputs that are inputs: every input file unchanged",
          all(digest(p) == h for p, h in before.items()))
    # an input in the heat-map folder under a heat map's name
    heat = os.path.join(d, "heat")
    os.makedirs(heat)
    lookalike = os.path.join(heat, "agreement_mlp_0_out0.png")
    shutil.copyfile(rec, lookalike)
    with open(os.path.join(d, "heat.csv"), "w") as fh:
        fh.write(f"etdump,etrecord\n{etdp},{lookalike}\n")
    rc, out, err = batch("--agreement-heatmaps", heat, "--group-summary",
                         os.path.join(d, "g2.jsonl"), os.path.join(d, "heat.csv"))
    check("an input named like a heat map in --agreement-heatmaps: refused, exit 2, named",
          one_line_error(rc, err, 2) and lookalike in err and "heat map" in err and not out
          and digest(lookalike) == before[rec], f"rc={rc} {err[-400:]}")
    x = os.path.join(d, "x.jsonl")
    rc, out, err = batch("-o", x, "--group-summary", x, f)
    check("-o X --group-summary X: exit 2, give each output its own file, nothing written",
          one_line_error(rc, err, 2) and "give each output its own file" in err and
          not os.path.exists(x), f"rc={rc} {err[-400:]}")
    rc, out, err = batch("-o", d, f)
    check("-o a folder: exit 4 before any run, one line", one_line_error(rc, err, 4) and
          "is a directory" in err, f"rc={rc} {err[-400:]}")
    rc, out, err = batch("--group-summary", os.path.join(d, "no", "g.jsonl"), f)
    check("--group-summary in a missing folder: exit 4 before any run (no run line printed)",
          one_line_error(rc, err, 4) and "does not exist" in err and not out,
          f"rc={rc} {err[-400:]}")


def case_numbers(d):
    """C2: the CLI's rules and words for every number of the batch."""
    etdp = run_files(os.path.join(d, "num"), "mlp")
    etc = os.environ.get("ETCOMPARE") or os.path.join(SRC, "build", "etcompare")
    for opt, v, what in (("--min-snr", "nan", "a number (dB)"),
                         ("--min-snr", "-inf", "a number (dB)"),
                         ("--min-snr", "0x10", "a number (dB)"),
                         ("--max-mse", "inf", "a number >= 0"),
                         ("--max-mse", "-1", "a number >= 0"),
                         ("--min-cosine", "nan", "a number from -1 to 1"),
                         ("--min-cosine", "2", "a number from -1 to 1"),
                         ("--max-abs", "nan", "a number >= 0"),
                         ("--min-run-agreement", "nan", "a number (dB)"),
                         ("--outlier-margin", "-5", "a number >= 0 (dB)"),
                         ("--outlier-margin", "inf", "a number >= 0 (dB)")):
        rc, out, err = batch(f"{opt}={v}", etdp)
        words = f"{opt} takes {what}, not '{v}'"
        check(f"batch {opt}={v}: exit 2, '{words}'", one_line_error(rc, err, 2) and words in err
              and not out, f"rc={rc} {err[-300:]}")
        if opt in ("--min-snr", "--max-mse", "--min-cosine", "--max-abs") and os.path.exists(etc):
            p = subprocess.run([etc, "--etdump", etdp, f"{opt}={v}"], capture_output=True,
                               text=True)
            check(f"the CLI's words for {opt}={v} are the batch's", p.returncode == 2 and
                  words in p.stderr, p.stderr[-300:])
    rc, out, err = batch("--min-snr=-5", "--max-mse", "0", "--min-cosine", "1", "--max-abs",
                         "1e3", "--outlier-margin", "0", etdp)
    check("numbers within the CLI's ranges taken", rc in (0, 1) and len(lines(out)) == 1,
          f"rc={rc} {err[-300:]}")


def case_nothing_compared(d):
    """C3: a gate with nothing to compare is never "ok"; an unknown column."""
    f = os.path.join(d, "nobin")
    run_files(f, "nobin", buffer=False)
    rc, out, err = batch("--min-snr", "30", f)
    r = lines(out)
    check("--min-snr with no debug buffer: an error line naming the ETDump and the debug "
          "buffer, exit 3", rc == 3 and len(r) == 1 and r[0]["status"] == "error" and
          "nobin.etdp" in r[0]["message"] and "debug buffer" in r[0]["message"] and
          "need something to compare" in r[0]["message"], f"rc={rc} {r} {err[-300:]}")
    rc, out, err = batch(f)
    check("without a gate the same run is ok (profile only)",
          rc == 0 and lines(out)[0]["status"] == "ok", f"rc={rc} {err[-300:]}")
    man = os.path.join(d, "only.csv")
    with open(man, "w") as fh:
        fh.write(f"etdump\n{os.path.join(RX, 'mlp.etdp')}\n")
    rc, out, err = batch("--min-snr", "30", man)
    r = lines(out)
    check("a manifest row with only the etdump cell and a gate: error, exit 3",
          rc == 3 and len(r) == 1 and r[0]["status"] == "error", f"rc={rc} {r}")
    typo = os.path.join(d, "typo.csv")
    with open(typo, "w") as fh:
        fh.write(f"etdump,debgu_buffer\n{os.path.join(RX, 'mlp.etdp')},"
                 f"{os.path.join(RX, 'mlp_debug.bin')}\n")
    rc, out, err = batch("--min-snr", "30", typo)
    check("a manifest column typo: exit 3 naming the column and the known ones, no run",
          one_line_error(rc, err, 3) and "'debgu_buffer'" in err and "debug_buffer," in err
          and not out, f"rc={rc} {err[-300:]}")


def case_manifests(d):
    """D1, D2, D11: BOM, case, ';', an empty manifest, list.CSV, dangling links."""
    mlp = os.path.join(RX, "mlp.etdp")
    buf = os.path.join(RX, "mlp_debug.bin")
    for name, data in (("bom.csv", f"\ufeffetdump,debug_buffer\r\n{mlp},{buf}\r\n"),
                       ("case.csv", f"ETDump,Debug_Buffer\n{mlp},{buf}\n"),
                       ("semi.csv", f"etdump;debug_buffer\n{mlp};{buf}\n"),
                       ("list.CSV", f"etdump,debug_buffer\n{mlp},{buf}\n")):
        path = os.path.join(d, name)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(data)
        rc, out, err = batch(path)
        r = lines(out)
        check(f"manifest {name}: read, its run with its debug buffer",
              rc == 0 and len(r) == 1 and r[0]["etdump"] == mlp and r[0]["debug_buffer"] == buf,
              f"rc={rc} {out[:200]} {err[-300:]}")
    empty = os.path.join(d, "empty.csv")
    open(empty, "w").close()
    rc, out, err = batch(empty)
    check("an empty manifest: exit 3 (an input error, not a gate failure), one line",
          one_line_error(rc, err, 3) and "empty.csv" in err, f"rc={rc} {err}")
    f = os.path.join(d, "links")
    run_files(f, "ok")
    os.symlink(os.path.join(f, "nowhere.etdp"), os.path.join(f, "gone.etdp"))
    rc, out, err = batch(f)
    r = {os.path.basename(x["etdump"]): x for x in lines(out)}
    check("a dangling *.etdp link in a folder: an error line for it, exit 3",
          rc == 3 and r.get("gone.etdp", {}).get("status") == "error" and
          r.get("ok.etdp", {}).get("status") == "ok", f"rc={rc} {r}")


def case_rows(d):
    """C4: rows sharing an ETDump; identical rows once, with a warning."""
    f = os.path.join(d, "rows")
    os.makedirs(f)
    for n in ("mlp.etdp", "mlp_debug.bin", "mlp.etrecord", "cnn.etrecord", "cnn_debug.bin"):
        shutil.copy(os.path.join(RX, n), f)
    man = os.path.join(f, "dup.csv")
    with open(man, "w") as fh:
        fh.write("etdump,debug_buffer,etrecord\n"
                 "mlp.etdp,mlp_debug.bin,cnn.etrecord\n"
                 "mlp.etdp,mlp_debug.bin,mlp.etrecord\n"
                 "mlp.etdp,cnn_debug.bin,mlp.etrecord\n"
                 "./mlp.etdp,mlp_debug.bin,mlp.etrecord\n")
    out = os.path.join(d, "rows.jsonl")
    rc, _o, err = batch("-o", out, man)
    with open(out) as fh:
        r = lines(fh.read())
    combos = sorted((os.path.basename(x["debug_buffer"]), os.path.basename(x["etrecord"]))
                    for x in r)
    check("3 distinct rows of one ETDump: 3 lines, each with its own files",
          combos == [("cnn_debug.bin", "mlp.etrecord"), ("mlp_debug.bin", "cnn.etrecord"),
                     ("mlp_debug.bin", "mlp.etrecord")], f"{combos} {err[-300:]}")
    check("the identical row (line 5) dropped with a warning naming line 5 and line 3",
          "line 5 repeats line 3" in err, err[-400:])
    rc2, _o, err = batch("-o", out, "--resume", man)
    check("--resume with every row done: nothing analysed again",
          "0 runs analysed" in err and rc2 == rc, f"rc={rc2} {err[-300:]}")


def case_groups(d):
    """C5: groups by the ETRecord's bytes."""
    f = os.path.join(d, "copies")
    for i in range(3):
        run_files(f, f"r{i}")
    g = os.path.join(d, "g.jsonl")
    rc, _o, err = batch("--group-summary", g, f)
    with open(g) as fh:
        groups = lines(fh.read())
    check("3 runs of one model, each with its X.etrecord copy: one group of 3 runs",
          [(x["runs"], x["model"]) for x in groups] == [(3, "r0.etrecord")] and
          groups[0]["agreement"], f"rc={rc} {[(x['runs'], x['model']) for x in groups]}")
    m = os.path.join(d, "models")
    for sub, model in (("m1", "mlp"), ("m2", "cnn")):
        run_files(os.path.join(m, sub), "a", model=model)
        os.rename(os.path.join(m, sub, "a.etrecord"), os.path.join(m, sub, "model.etrecord"))
    man = os.path.join(m, "m.csv")
    with open(man, "w") as fh:
        fh.write("etdump,debug_buffer,etrecord\nm1/a.etdp,m1/a_debug.bin,m1/model.etrecord\n"
                 "m2/a.etdp,m2/a_debug.bin,m2/model.etrecord\n")
    rc, _o, err = batch("--group-summary", g, "--min-run-agreement", "60",
                        "--op-agreement-gate", man)
    with open(g) as fh:
        groups = lines(fh.read())
    names = sorted(x["model"] for x in groups)
    want = sorted(f"model.etrecord#{digest(os.path.join(m, s, 'model.etrecord'))[:12]}"
                  for s in ("m1", "m2"))
    check("two models whose records are both model.etrecord: two groups, named with the "
          "record's digest", names == want, f"{names} {want}")
    check("an agreement gate over single-run groups: a warning that it checked nothing",
          "--min-run-agreement checked nothing" in err, err[-400:])


def case_references(d):
    """C6, D6: reference outputs or a reference run of another model."""
    f = os.path.join(d, "refs")
    etdp = run_files(f, "c")
    z = np.load(os.path.join(RX, "qcnn_io.npz"))
    np.savez(os.path.join(f, "c.ref.npz"), z["expected0"])
    rc, out, err = batch(etdp)
    r = lines(out)
    check("reference outputs of another model (.ref.npz): an error line, they do not belong "
          "together, exit 3", rc == 3 and r and r[0]["status"] == "error" and
          "do not belong together" in r[0]["message"] and "c.ref.npz" in r[0]["message"],
          f"rc={rc} {r}")
    g = os.path.join(d, "refrun")
    etdp = run_files(g, "b", model="qcnn")
    shutil.copy(os.path.join(RX, "cnn.etdp"), os.path.join(g, "b.ref.etdp"))
    shutil.copy(os.path.join(RX, "cnn_debug.bin"), os.path.join(g, "b.ref_debug.bin"))
    rc, out, err = batch(etdp)
    r = lines(out)
    msg = r[0]["message"] if r else ""
    check("a reference run of another model: the message names the reference ETDump and the "
          "reference column, not the etrecord column",
          rc == 3 and "b.ref.etdp" in msg and "reference column" in msg and
          "(the etrecord column)" not in msg, f"rc={rc} {msg}")


def case_scheduler_resume(d):
    """D3, D4, D5: --scheduler and --resume mistakes."""
    etdp = run_files(os.path.join(d, "sch"), "mlp")
    rc, out, err = batch("--scheduler", "bogus", etdp)
    check("--scheduler bogus: exit 2, one line naming the value and tcp://HOST:PORT",
          one_line_error(rc, err, 2) and "bogus" in err and "tcp://HOST:PORT" in err,
          f"rc={rc} {err[-600:]}")
    try:
        import distributed  # noqa: F401
        have_dask = True
    except ImportError:
        have_dask = False
    if have_dask:
        rc, out, err = batch("--scheduler", "tcp://127.0.0.1:1", etdp,
                             env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s",
                                  "DASK_TEMPORARY_DIRECTORY": d})
        check("--scheduler with no scheduler there: exit 3, one line naming the address",
              one_line_error(rc, err, 3) and "tcp://127.0.0.1:1" in err and
              ": :" not in err, f"rc={rc} {err[-600:]}")
        # Dask's own timeout left at its default (30 s): a refused address
        # fails at once, saying so
        t0 = time.monotonic()
        rc, out, err = batch("--scheduler", "tcp://127.0.0.1:1", etdp,
                             env={"DASK_TEMPORARY_DIRECTORY": d})
        took = time.monotonic() - t0
        check("--scheduler where nothing listens: exit 3 at once (not after Dask's 30 s), "
              "naming the refusal",
              one_line_error(rc, err, 3) and "Connection refused" in err and took < 15,
              f"rc={rc} took {took:.1f} s {err[-600:]}")
    else:
        print("skip --scheduler tcp://127.0.0.1:1: distributed is not importable")
    binary = os.path.join(d, "bin.jsonl")
    data = bytes(range(256)) * 8
    with open(binary, "wb") as fh:
        fh.write(data)
    rc, out, err = batch("-o", binary, "--resume", etdp)
    with open(binary, "rb") as fh:
        kept = fh.read() == data
    check("--resume with a binary -o file: exit 3, one line naming it, the file untouched",
          one_line_error(rc, err, 3) and binary in err and "etcompare.batch" in err and kept,
          f"rc={rc} {err[-600:]}")
    other = os.path.join(d, "other.jsonl")
    with open(other, "w") as fh:
        fh.write("a,b\n1,2\n3,4\n")
    rc, out, err = batch("-o", other, "--resume", etdp)
    with open(other) as fh:
        kept = fh.read() == "a,b\n1,2\n3,4\n"
    check("--resume with a text file that is no summary: exit 3, the file untouched",
          one_line_error(rc, err, 3) and other in err and kept, f"rc={rc} {err[-600:]}")


def main():
    d = C.work_dir("batch-trust2")
    for case in (case_outputs, case_numbers, case_nothing_compared, case_manifests, case_rows,
                 case_groups, case_references, case_scheduler_resume):
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        case(sub)
    C.finish(d)


main()
