"""python3 -m etcompare.batch against a hostile user, round 3 (findings of
/work/wt/pyfix3_findings.md): a reference run that is the run itself is
named in a warning;
--agreement-heatmaps with names that are not UTF-8 or that collide;
--resume from another directory, with other thresholds, with --group-summary;
manifest rows lost or changed without a word (finding 18)."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_python import SRC, check, setup  # noqa: E402
import common as C  # noqa: E402

E = setup()

RX = os.path.join(SRC, "tests", "data", "realexport")


def batch(*args, cwd=None):
    p = subprocess.run([sys.executable, "-m", "etcompare.batch", *args], capture_output=True,
                       text=True, cwd=cwd, timeout=600)
    return p.returncode, p.stdout, p.stderr


def lines(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def run_files(d, name, model="mlp"):
    """d/name.etdp, name_debug.bin and name.etrecord copied from realexport's model."""
    os.makedirs(d, exist_ok=True)
    for suf in (".etdp", "_debug.bin", ".etrecord"):
        shutil.copy(os.path.join(RX, model + suf), os.path.join(d, name + suf))
    return os.path.join(d, name + ".etdp")


def case_self_reference(d):
    """Finding 12: a manifest row whose reference and reference_debug_buffer
    are the run's own files (also through a link) gets a warning naming
    the run; a row with a real reference run does not."""
    r0 = run_files(d, "r0")
    r1 = run_files(d, "r1")
    os.link(os.path.join(d, "r1_debug.bin"), os.path.join(d, "r1_link.bin"))
    man = os.path.join(d, "m.csv")
    with open(man, "w") as f:
        f.write("etdump,debug_buffer,etrecord,reference,reference_debug_buffer\n")
        f.write("r0.etdp,r0_debug.bin,r0.etrecord,r0.etdp,r0_debug.bin\n")
        f.write("r1.etdp,r1_debug.bin,r1.etrecord,r1.etdp,r1_link.bin\n")
    rc, out, err = batch("--min-snr", "30", "--workers", "1", man)
    warned = [ln for ln in err.splitlines() if "the reference run is the run itself" in ln]
    check("a row whose reference is the run itself: a warning line each, naming the run",
          len(warned) == 2 and r0 in warned[0] and r1 in warned[1] and
          all(ln.startswith("etcompare.batch: warning: ") for ln in warned), err[-800:])
    check("... the runs are still analysed (the lines as before)",
          rc == 0 and [x["status"] for x in lines(out)] == ["ok", "ok"], f"rc={rc} {out[-400:]}")
    ref = run_files(d, "r2.ref")
    r2 = run_files(d, "r2")
    os.replace(os.path.join(d, "r2.ref_debug.bin"), os.path.join(d, "r2.ref.bin"))
    rc, out, err = batch("--workers", "1", r2)
    check("a reference run of its own files (X.ref.etdp, X.ref.bin): no such warning",
          rc == 0 and "the reference run is the run itself" not in err and
          lines(out)[0]["reference"] == ref, f"rc={rc} {err[-600:]} {out[-300:]}")


def case_heatmap_names(d):
    """Findings 1 and 2: --agreement-heatmaps with an ETRecord or a folder
    whose name is not UTF-8 writes its heat maps (it crashed with exit 1);
    two groups whose names differ only in characters a file name cannot
    keep ("a b", "a_b") each write and name their own heat map."""
    bd = os.fsencode(d)
    runs = os.path.join(bd, b"runs")
    os.makedirs(runs)
    rows = [b"etdump,debug_buffer,etrecord"]
    for k in range(3):
        for suf in (".etdp", "_debug.bin"):
            shutil.copy(os.path.join(RX, "mlp" + suf),
                        os.path.join(runs, b"r%d" % k + suf.encode()))
        shutil.copy(os.path.join(RX, "mlp.etrecord"), os.path.join(runs, b"r%d\xff.etrecord" % k))
        rows.append(b"runs/r%d.etdp,runs/r%d_debug.bin,runs/r%d\xff.etrecord" % (k, k, k))
    with open(os.path.join(bd, b"m.csv"), "wb") as f:
        f.write(b"\n".join(rows) + b"\n")
    for label, heat in (("an ETRecord name", b"hm"), ("the heat-map folder's name", b"hm\xff")):
        p = subprocess.run([sys.executable, "-m", "etcompare.batch", "--workers", "1", "-o",
                            b"s.jsonl", "--group-summary", b"g.jsonl", "--agreement-heatmaps",
                            heat, b"m.csv"], cwd=bd, capture_output=True, timeout=600)
        err = p.stderr.decode(errors="replace")
        try:
            groups = [json.loads(ln) for ln in open(os.path.join(bd, b"g.jsonl"))]
        except OSError:
            groups = []
        maps = [os.fsencode(a["heatmap"]) for g in groups for a in g["agreement"]]
        check(f"--agreement-heatmaps, {label} not UTF-8: exit 0, no traceback",
              p.returncode == 0 and "Traceback" not in err, f"rc={p.returncode} {err[-800:]}")
        check(f"... the group summary names heat maps that exist in {heat!r}",
              maps and all(os.path.isfile(os.path.join(bd, m)) and
                           m.startswith(heat + b"/") for m in maps), (maps, err[-300:]))
        if os.path.exists(os.path.join(bd, b"g.jsonl")):
            os.unlink(os.path.join(bd, b"g.jsonl"))

    c = os.path.join(d, "collide")
    os.makedirs(c)
    with open(os.path.join(c, "m.csv"), "w") as f:
        f.write("etdump,debug_buffer,model\n")
        for model, name in (("mlp", "a b"), ("cnn", "a_b")):
            for k in range(3):
                etdp = run_files(c, f"{model}{k}", model)
                f.write(f"{etdp},{etdp[:-5]}_debug.bin,{name}\n")
    for name in ("a b", "a_b"):  # each group alone, for its own heat map
        with open(os.path.join(c, f"only {name}.csv"), "w") as f:
            f.writelines([ln for ln in open(os.path.join(c, "m.csv"))
                          if ln.startswith("etdump") or ln.rstrip("\n").endswith("," + name)])
    rc, out, err = batch("--workers", "1", "-o", "s.jsonl", "--group-summary", "g.jsonl",
                         "--agreement-heatmaps", "hm", "m.csv", cwd=c)
    groups = {g["model"]: g for g in map(json.loads, open(os.path.join(c, "g.jsonl")))}
    named = {m: [a["heatmap"] for a in g["agreement"]] for m, g in groups.items()}
    ops = {m: (g.get("op_agreement_worst") or {}).get("heatmap") for m, g in groups.items()}
    check("two groups whose safe names collide: each summary names other heat-map files",
          rc == 0 and set(groups) == {"a b", "a_b"} and named["a b"] and named["a_b"] and
          not set(named["a b"]) & set(named["a_b"]) and ops["a b"] != ops["a_b"],
          f"rc={rc} {named} {ops} {err[-400:]}")
    for name in ("a b", "a_b"):
        sub = os.path.join(c, "solo " + name)
        os.makedirs(sub)
        rc, out, err = batch("--workers", "1", "-o", os.path.join(sub, "s.jsonl"),
                             "--group-summary", os.path.join(sub, "g.jsonl"),
                             "--agreement-heatmaps", os.path.join(sub, "hm"),
                             f"only {name}.csv", cwd=c)
        solo = [json.loads(ln) for ln in open(os.path.join(sub, "g.jsonl"))][0]
        mine = os.path.join(c, named[name][0])
        with open(mine, "rb") as f1, open(solo["agreement"][0]["heatmap"], "rb") as f2:
            same = f1.read() == f2.read()
        check(f"group {name!r}: the heat map its summary names is its own matrix (the same "
              "bytes as the group's heat map alone)", same, (mine, solo["agreement"][0]))


def case_resume_cwd(d):
    """Finding 5: a folder input's lines name absolute paths, so --resume
    from another working directory finds them (every run was analysed
    again, and the summary had each run twice)."""
    proj = os.path.join(d, "proj")
    for k in range(2):
        run_files(os.path.join(proj, "runs"), f"r{k}")
    other = os.path.join(d, "other")
    os.makedirs(other)
    rc, out, err = batch("--workers", "1", "-o", "../s.jsonl", "runs", cwd=proj)
    first = [json.loads(ln) for ln in open(os.path.join(d, "s.jsonl"))]
    check("a folder given relative: the lines name the files by absolute paths",
          rc == 0 and len(first) == 2 and
          all(os.path.isabs(x[k]) for x in first for k in ("etdump", "debug_buffer", "etrecord")),
          f"rc={rc} {[x['etdump'] for x in first]} {err[-300:]}")
    rc, out, err = batch("--workers", "1", "-o", "../s.jsonl", "--resume", "../proj/runs",
                         cwd=other)
    after = [json.loads(ln) for ln in open(os.path.join(d, "s.jsonl"))]
    check("--resume from another directory: nothing analysed again, one line per run",
          rc == 0 and "0 runs analysed" in err and "2 skipped" in err and len(after) == 2,
          f"rc={rc} {len(after)} lines {err[-300:]}")
    rc, out, err = batch("--workers", "1", os.path.join("runs", "r0.etdp"), cwd=proj)
    check("an ETDump given relative: its line's paths are absolute",
          rc == 0 and lines(out)[0]["etdump"] == os.path.join(proj, "runs", "r0.etdp"),
          f"rc={rc} {out[-300:]}")


def case_resume_gate(d):
    """Finding 4: each line records the gate it was judged by; --resume
    with other thresholds is refused (exit 2, naming both), the summary
    untouched; with the same thresholds it goes on."""
    runs = os.path.join(d, "runs")
    for k in range(2):
        run_files(runs, f"r{k}")
    out_path = os.path.join(d, "s.jsonl")
    rc, out, err = batch("--workers", "1", "--min-snr", "30", "-o", out_path, runs)
    rows = [json.loads(ln) for ln in open(out_path)]
    check("each line records its gate",
          rc == 0 and all(r.get("gate") == {"min_snr": 30.0} for r in rows), rows)
    rc, out, err = batch("--workers", "1", runs)
    check("a batch without thresholds records gate {}",
          rc == 0 and all(r.get("gate") == {} for r in lines(out)), out[-300:])
    run_files(runs, "r2")
    before = open(out_path).read()
    for args, want in ((["--min-snr", "200"], "--min-snr 200.0"), ([], "no gate"),
                       (["--min-snr", "30", "--max-mse", "1"], "--max-mse 1.0")):
        rc, out, err = batch("--workers", "1", *args, "-o", out_path, "--resume", runs)
        check(f"--resume with {args or 'no thresholds'} after --min-snr 30: exit 2, one line "
              "naming both gates, the summary untouched",
              rc == 2 and len(err.strip().splitlines()) == 1 and "--min-snr 30.0" in err and
              want in err and out_path in err and open(out_path).read() == before,
              f"rc={rc} {err[-500:]}")
    rc, out, err = batch("--workers", "1", "--min-snr", "30", "-o", out_path, "--resume", runs)
    rows = [json.loads(ln) for ln in open(out_path)]
    check("--resume with the same thresholds: the new run analysed, every line that gate",
          rc == 0 and "1 run analysed" in err and len(rows) == 3 and
          all(r["gate"] == {"min_snr": 30.0} for r in rows), f"rc={rc} {err[-300:]}")
    # a summary of an older etcompare.batch (no gate recorded): kept, with a warning
    with open(out_path, "w") as f:
        for r in rows[:2]:
            r.pop("gate")
            f.write(json.dumps(r) + "\n")
    rc, out, err = batch("--workers", "1", "--min-snr", "30", "-o", out_path, "--resume", runs)
    check("--resume on lines that record no gate: a warning, the batch goes on",
          rc == 0 and "2 lines record no gate" in err and "1 run analysed" in err,
          f"rc={rc} {err[-400:]}")
    import jsonschema
    schema = json.load(open(os.path.join(SRC, "schema", "batch-summary.schema.json")))
    bad = []
    for r in [json.loads(ln) for ln in open(out_path)][2:]:
        try:
            jsonschema.validate(r, schema)
        except jsonschema.ValidationError as e:
            bad.append(str(e)[:300])
    check("lines with gate follow schema/batch-summary.schema.json", not bad, bad)


def case_resume_groups(d):
    """Finding 3: --resume with --group-summary would summarize the runs of
    this invocation only (a 4-run group reported as 1 run): refused, exit 2,
    one line saying why and what to do."""
    runs = os.path.join(d, "runs")
    for k in range(3):
        run_files(runs, f"r{k}")
    out_path, groups = os.path.join(d, "s.jsonl"), os.path.join(d, "g.jsonl")
    rc, out, err = batch("--workers", "1", "-o", out_path, "--group-summary", groups, runs)
    before = open(groups).read()
    run_files(runs, "r3")
    rc, out, err = batch("--workers", "1", "-o", out_path, "--resume", "--group-summary",
                         groups, runs)
    check("--resume --group-summary: exit 2, one line naming both options, the group "
          "summary untouched",
          rc == 2 and len(err.strip().splitlines()) == 1 and "--resume" in err and
          "--group-summary" in err and open(groups).read() == before, f"rc={rc} {err[-400:]}")


def case_output_options(d):
    """Finding 19: --group-summary - (a file named "-" was written, while
    -o - is stdout) is refused; --agreement-heatmaps, --device-from,
    --min-run-agreement and --op-agreement-gate without --group-summary
    (ignored without a word) are refused; --device-from out of range for a
    path (every device "") is refused before any run, naming the path."""
    runs = os.path.join(d, "runs")
    for k in range(2):
        run_files(runs, f"r{k}")
    rc, out, err = batch("--workers", "1", "-o", "-", "--group-summary", "-", runs, cwd=d)
    check("--group-summary -: exit 2, one line naming the option, no file '-'",
          rc == 2 and len(err.strip().splitlines()) == 1 and "--group-summary -" in err and
          not out and not os.path.exists(os.path.join(d, "-")), f"rc={rc} {err[-400:]}")
    for opts in (["--agreement-heatmaps", "hm"], ["--device-from", "-2"],
                 ["--min-run-agreement", "30"], ["--op-agreement-gate"]):
        rc, out, err = batch("--workers", "1", "-o", "s.jsonl", *opts, runs, cwd=d)
        check(f"{opts[0]} without --group-summary: exit 2, one line naming both options, "
              "nothing written",
              rc == 2 and len(err.strip().splitlines()) == 1 and opts[0] in err and
              "--group-summary" in err and not os.path.exists(os.path.join(d, "s.jsonl")) and
              not os.path.exists(os.path.join(d, "hm")), f"rc={rc} {err[-400:]}")
    for n in ("99", "-99"):
        rc, out, err = batch("--workers", "1", "-o", "s.jsonl", "--group-summary", "g.jsonl",
                             "--device-from", n, runs, cwd=d)
        check(f"--device-from {n}, out of range: exit 2 before any run, naming a path",
              rc == 2 and len(err.strip().splitlines()) == 1 and f"--device-from {n}" in err and
              os.path.join(runs, "r0.etdp") in err and
              not os.path.exists(os.path.join(d, "s.jsonl")), f"rc={rc} {err[-400:]}")
    rc, out, err = batch("--workers", "1", "-o", "s.jsonl", "--group-summary", "g.jsonl",
                         "--device-from", "-2", runs, cwd=d)
    devices = [json.loads(ln)["devices"] for ln in open(os.path.join(d, "g.jsonl"))]
    check("--device-from -2 (in range): exit 0, the folder is the device",
          rc == 0 and devices == [["runs"]],
          f"rc={rc} {devices} {err[-300:]}")


def case_heatmap_stems(d):
    """A group's heat-map stem that begins another's ("a_b", "a_b_op_c")
    lets an op's name complete it: such stems get their digest too, so no
    two groups' heat maps can share a file name."""
    from etcompare.batch_groups import heatmap_stems
    keys = [("a", "b"), ("a", "b_op_c"), ("x", "y"), ("a b", "b")]
    st = heatmap_stems(keys)
    names = {}
    for k in keys:
        for op, out in (("c_op_d", 0), ("d", 0), ("e", 1)):
            names.setdefault(f"agreement_{st[k]}_op_{op}_{out}.png", set()).add(k)
        names.setdefault(f"agreement_{st[k]}_out0.png", set()).add(k)
    check("heat-map stems: no file name shared by two groups, an unrelated group keeps "
          "its plain stem",
          all(len(v) == 1 for v in names.values()) and st[("x", "y")] == "x_y", str(st))


def case_manifest_rows(d):
    """Finding 18: a duplicated column, a row with more cells than the
    header, a row without its etdump are exit 3 naming the manifest and the
    line; a blank line is skipped; the same manifest given twice is read
    once, with a warning (not "line 2 repeats line 2")."""
    etdp = run_files(d, "r0")
    man = os.path.join(d, "m.csv")
    for text, want in (("etdump,model,model\nr0.etdp,a,b\n", "the column 'model' is in the "
                        "header twice"),
                       ("etdump,model\nr0.etdp,a,extra\n", "line 2: 3 cells, but the header "
                        "has 2 columns"),
                       ("etdump,model\n,a\n", "line 2: no etdump in a row whose other cells "
                        "are filled")):
        open(man, "w").write(text)
        rc, out, err = batch("--workers", "1", man)
        check(f"manifest {text.splitlines()[1]!r}: exit 3, one line naming it ({want[:30]}...)",
              rc == 3 and len(err.strip().splitlines()) == 1 and man in err and want in err
              and not out, f"rc={rc} {err[-400:]}")
    open(man, "w").write("etdump,model\n\nr0.etdp,a\n,\n")
    rc, out, err = batch("--workers", "1", man, man)
    check("blank lines skipped; the manifest given twice: read once, a warning saying so",
          rc == 0 and len(lines(out)) == 1 and f"the manifest {man} is given twice" in err and
          "repeats" not in err, f"rc={rc} {err[-400:]}")
    del etdp


def main():
    d = C.work_dir("batch-trust3")
    for case in (case_self_reference, case_heatmap_names, case_resume_cwd, case_resume_gate,
                 case_resume_groups, case_output_options, case_manifest_rows,
                 case_heatmap_stems):
        sub = os.path.join(d, case.__name__)
        os.makedirs(sub)
        with C.harness(case.__name__):
            case(sub)
    C.finish(d)


main()
