#!/usr/bin/python3
"""bench_reference.py - the reference executor's speed and memory against
torch 1.13 eager on the same models and inputs, measured in one run.

usage: bench/bench_reference.py [--build DIR] [--repeat N] [--threads T]
                                [--work DIR] [--main-args ARGS] [--keep]

Models: the four real records of the corpus (bench/data/realexport: mlp,
cnn, tiny_transformer, qcnn; upstream v0.5.0 exports) and MobileNetV2 of
width 0.5 on a 1x3x64x64 input, generated into the work directory by
bench/gen_mobilenet.py (ETRecord + runtime ETDump + debug buffer).

Per model:
- reference float64: build/bench/ref_run (the public API: open, load, an
  untimed run, then runs of etc_refgraph_run with a no-op callback on the
  record's example inputs); its load time; its peak RSS (VmHWM, and
  bench/peakrss's wait4 rusage: the larger).
- torch float32 eager, the rival: forward passes under
  torch.inference_mode() after 3 warm-up passes, torch.set_num_threads(T).
- The two alternate in ROUNDS rounds of REPEAT / ROUNDS runs each, so that
  both see the same machine load; the figures are the medians of all runs.
  MobileNetV2: the nn.Module (bench/gen_mobilenet.py) with the record's
  state dict. The corpus models have no module here, so their rival is the
  record's own Edge graph run op by op with torch.ops.aten in float32 (a
  Python loop over the nodes: what torch eager does, op for op; the
  interpreter's overhead is measured by running it on MobileNetV2 too).
  torch float64 (the same interpreter with every float in double: the
  reference's arithmetic) is given alongside.
- memory: peak RSS of ref_run against weights (float tensors counted as
  float64, as the reference holds them) + 3 x the largest activation (the
  largest output of a node that depends on the user input, float64).
- MobileNetV2 only: the main command
  `etcompare --etdump mv2.etdp --debug_buffer mv2_debug.bin --etrecord
  mv2.etrecord ARGS` (ARGS from --main-args: what turns the reference run
  on), best and median wall time of N runs under bench/peakrss.

T defaults to ETC_THREADS or 2. Prints a markdown report on stdout.
"""
import argparse
import datetime
import io
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_mobilenet as GM  # noqa: E402

CORPUS = ["mlp", "cnn", "tiny_transformer", "qcnn"]
EDGE = "executorch.exir.dialects.edge.ops."
SERDE_DTYPE = {1: torch.uint8, 2: torch.int8, 3: torch.int16, 4: torch.int32, 5: torch.int64,
               6: torch.float16, 7: torch.float32, 8: torch.float64, 12: torch.bool,
               13: torch.bfloat16}
MEMORY_FORMAT = {0: torch.contiguous_format, 1: torch.contiguous_format,
                 2: torch.channels_last, 3: torch.channels_last_3d,
                 4: torch.preserve_format}


# --- the records --------------------------------------------------------------

class Record:
    """An ETRecord's Edge program, weights and example inputs (torch)."""

    def __init__(self, path):
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            member = "edge_dialect_exported_program"
            if member not in names:  # the per-method layout
                member = next(n for n in names if n.startswith(member + "/")
                              and not n.endswith(("_state_dict", "_constants",
                                                  "_example_inputs")))
            self.program = json.loads(z.read(member))
            self.state = torch.load(io.BytesIO(z.read(member + "_state_dict")))
            consts = member + "_constants"
            self.constants = torch.load(io.BytesIO(z.read(consts))) if consts in names else {}
            args, kwargs = torch.load(io.BytesIO(z.read(member + "_example_inputs")))
            self.inputs = list(args)
        gm = self.program["graph_module"]
        self.graph = gm["graph"]
        self.specs = gm["signature"]["input_specs"]
        self.outputs = gm["signature"]["output_specs"]
        self.size = os.path.getsize(path)

    def weights_bytes(self):
        """Bytes of every parameter, buffer and constant, floats as float64."""
        total = 0
        for t in list(self.state.values()) + list(self.constants.values()):
            if isinstance(t, torch.Tensor):
                total += t.numel() * (8 if t.is_floating_point() else t.element_size())
        return total


def _q_per_tensor(x, scale, zp, qmin, qmax, dtype):
    x = x.to(torch.float32)
    return torch.clamp(torch.round(x * (1.0 / scale)) + zp, qmin, qmax).to(dtype)


def _dq_per_tensor(x, scale, zp, qmin, qmax, dtype):
    return (x.to(torch.float32) - zp) * scale


def _dq_per_channel(x, scales, zps, axis, qmin, qmax, dtype):
    shape = [1] * x.dim()
    shape[axis] = -1
    return (x.to(torch.float32) - zps.reshape(shape)) * scales.to(torch.float32).reshape(shape)


def _bn_no_training(input, weight, bias, running_mean, running_var, momentum, eps):
    out = torch.ops.aten.native_batch_norm(input, weight, bias, running_mean, running_var,
                                           False, momentum, eps)[0]
    empty = input.new_empty(0)
    return out, empty, empty


SPECIAL = {
    "aten._native_batch_norm_legit_no_training.default": _bn_no_training,
    "quantized_decomposed.quantize_per_tensor.default": _q_per_tensor,
    "quantized_decomposed.dequantize_per_tensor.default": _dq_per_tensor,
    "quantized_decomposed.dequantize_per_channel.default": _dq_per_channel,
}
# q/dq compute in float32 as their definitions do; their float outputs are
# given back in the interpreter's dtype
QUANT = {k for k in SPECIAL if k.startswith("quantized_decomposed")}


class Interpreter:
    """The Edge graph run node by node with torch ops in `dtype`."""

    def __init__(self, rec, dtype):
        self.dtype = dtype
        self.env = {}
        for spec in rec.specs:
            kind, body = next(iter(spec.items()))
            if kind == "parameter":
                t = rec.state[body["parameter_name"]]
            elif kind == "buffer":
                t = rec.state[body["buffer_name"]]
            elif kind == "tensor_constant":
                t = rec.constants[body["tensor_constant_name"]]
            else:
                continue
            self.env[body["arg"]["name"]] = self._cast(t.detach())
        self.user = [next(iter(s.values()))["arg"]["as_tensor"]["name"]
                     for s in rec.specs if "user_input" in s]
        self.calls = []
        for n in rec.graph["nodes"]:
            op = n["target"][len(EDGE):] if n["target"].startswith(EDGE) else n["target"]
            if op in SPECIAL:
                fn, kwonly = SPECIAL[op], set()  # positional, in the serialized order
            else:
                ns, name, overload = op.split(".")
                fn = getattr(getattr(getattr(torch.ops, ns), name), overload)
                kwonly = {x.name for x in fn._schema.arguments if x.kwarg_only}
            outs = []
            for o in n["outputs"]:
                if "as_tensor" in o:
                    outs.append(o["as_tensor"]["name"])
                elif "as_tensors" in o:
                    outs.append([t["name"] for t in o["as_tensors"]])
                else:
                    outs.append(None)
            self.calls.append((op, fn, n["inputs"], kwonly, outs))
        self.outputs = [next(iter(s.values()))["arg"]["as_tensor"]["name"] for s in rec.outputs]

    def _cast(self, t):
        return t.to(self.dtype) if t.is_floating_point() else t

    def _arg(self, a):
        kind, v = next(iter(a.items()))
        if kind == "as_tensor":
            return self.env[v["name"]]
        if kind == "as_tensors":
            return [self.env[x["name"]] for x in v]
        if kind == "as_none":
            return None
        if kind == "as_scalar_type":
            return SERDE_DTYPE[v]
        if kind == "as_memory_format":
            return MEMORY_FORMAT[v]
        return v

    def run(self, inputs):
        env = self.env
        for name, x in zip(self.user, inputs):
            env[name] = self._cast(x)
        for op, fn, args, kwonly, outs in self.calls:
            pos, kw = [], {}
            for a in args:
                v = self._arg(a["arg"])
                if op in QUANT and isinstance(v, torch.Tensor) and v.is_floating_point():
                    v = v.to(torch.float32)
                if a["name"] in kwonly:
                    kw[a["name"]] = v
                else:
                    pos.append(v)
            r = fn(*pos, **kw)
            if op in QUANT and r.is_floating_point():
                r = r.to(self.dtype)
            if len(outs) == 1 and not isinstance(outs[0], list):
                env[outs[0]] = r
                continue
            if len(outs) == 1:  # a tensor list
                r, outs = list(r), outs[0]
            for name, t in zip(outs, r):
                if name is not None:
                    env[name] = t
        return [env[o] for o in self.outputs]


# --- timing --------------------------------------------------------------------

def time_fn(fn, repeat):
    """(wall ms, process CPU ms) of each of `repeat` calls of fn."""
    ms, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return ms, cpu


class TorchRival:
    """The torch runs of one model, by key: "rival@T" and "rival@1" (the
    MobileNetV2 nn.Module, or the record's graph with torch ops in float32,
    with T threads and with one), "f32_graph@T" (MobileNetV2 only) and
    "f64_graph@T" (the graph in float64)."""

    def __init__(self, rec, threads, module=None):
        x = rec.inputs
        f32 = Interpreter(rec, torch.float32)
        f64 = Interpreter(rec, torch.float64)
        rival = (lambda: module(x[0])) if module is not None else (lambda: f32.run(x))
        self.runs = [(f"rival@{threads}", threads, rival), ("rival@1", 1, rival),
                     (f"f64_graph@{threads}", threads, lambda: f64.run(x))]
        if module is not None:
            self.runs.append((f"f32_graph@{threads}", threads, lambda: f32.run(x)))
        self.ms = {k: [] for k, _, _ in self.runs}
        self.cpu = {k: [] for k, _, _ in self.runs}
        with torch.inference_mode():
            for _, t, fn in self.runs:  # warm-up
                torch.set_num_threads(t)
                for _ in range(3):
                    fn()

    def round(self, repeat):
        with torch.inference_mode():
            for k, t, fn in self.runs:
                torch.set_num_threads(t)
                ms, cpu = time_fn(fn, repeat)
                self.ms[k] += ms
                self.cpu[k] += cpu


def run_timed(peakrss, cmd, env):
    """(stdout, wall s, peak RSS kB) of one run of cmd under bench/peakrss."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as tf:
        p = subprocess.run([peakrss, "-o", tf.name] + cmd, capture_output=True, text=True,
                           env=env)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
        f = tf.read().split()
    return p.stdout, float(f[0]), int(f[2]), p.stderr, float(f[4]) + float(f[6])


def ref_run(build, peakrss, path, repeat, env):
    out, wall, rss, err, _ = run_timed(peakrss, [os.path.join(build, "bench", "ref_run"), path,
                                              "--repeat", str(repeat)], env)
    kv = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    kv["peakrss_kb"] = rss
    kv["stderr"] = err.strip()
    return kv


def mb(b):
    return f"{b / 1048576:.1f}"


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return model, os.cpu_count()


def cpu_busy(prev=None):
    """(busy, total) jiffies from /proc/stat; with prev, the busy share since."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy, total = v[0] + v[1] + v[2] + v[5] + v[6] + v[7], sum(v[:8])
    if prev is None:
        return busy, total
    return 100.0 * (busy - prev[0]) / max(1, total - prev[1])


def write_docs(path, report):
    """Replaces the body of the "### Figures" section of `path` with `report`."""
    with open(path) as f:
        text = f.read().split("\n")
    try:
        start = text.index("### Figures")
    except ValueError:
        sys.exit(f"bench_reference: no \"### Figures\" heading in {path}")
    end = next((i for i in range(start + 1, len(text)) if text[i].startswith("#")), len(text))
    text[start + 1:end] = [""] + report.split("\n") + [""]
    with open(path, "w") as f:
        f.write("\n".join(text))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--repeat", type=int, default=30, help="runs per model and side")
    ap.add_argument("--rounds", type=int, default=6,
                    help="alternations of the reference and torch per model")
    ap.add_argument("--threads", type=int,
                    default=int(os.environ.get("ETC_THREADS") or 2))
    ap.add_argument("--work")
    ap.add_argument("--main-args", default="",
                    help="arguments that make the main command run the reference")
    ap.add_argument("--main-repeat", type=int, default=7)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--docs", metavar="FILE",
                    help="also write the report into FILE's \"### Figures\" section (up to "
                         "the next heading), e.g. docs/benchmarks.md")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    peakrss = os.path.join(build, "bench", "peakrss")
    etc = os.path.join(build, "etcompare")
    for tool in (peakrss, os.path.join(build, "bench", "ref_run"), etc):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench_reference: {tool} not found: build first (ETC_BUILD_BENCH=ON)")
    work = a.work or tempfile.mkdtemp(prefix="etc-bench-ref.")
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(a.threads)
    env = dict(os.environ, ETC_THREADS=str(a.threads))
    t_start = cpu_busy()

    # the generated record's JSON layout is checked against the real ones
    p = subprocess.run([sys.executable, os.path.join(HERE, "gen_mobilenet.py"), work,
                        "--check", os.path.join(HERE, "data", "realexport")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_reference: gen_mobilenet.py failed: {p.stderr.strip()}")
    models = [(m, os.path.join(HERE, "data", "realexport", m + ".etrecord")) for m in CORPUS]
    models.append(("MobileNetV2-0.5 64x64", os.path.join(work, "mv2.etrecord")))

    rows, mem_rows, notes = [], [], []
    goal_speed = goal_speed_1 = mem_all_ok = True
    per_round = max(1, a.repeat // a.rounds)
    for name, path in models:
        rec = Record(path)
        module = None
        if name.startswith("MobileNetV2"):
            module = GM.MobileNetV2(0.5, 1000)
            module.load_state_dict(rec.state)
            module.eval()
        rival = TorchRival(rec, a.threads, module)
        # rounds alternate the reference and torch so that both see the same
        # load; each side runs with T threads and with one
        counts = (a.threads, 1) if a.threads != 1 else (1,)
        ref_ms = {t: [] for t in counts}
        ref_cpu = {t: [] for t in counts}
        load_ms, load_cpu, hwm_kb, r = [], [], 0, None
        for _ in range(a.rounds):
            for t in counts:
                r = ref_run(build, peakrss, path, per_round, dict(env, ETC_THREADS=str(t)))
                ref_ms[t] += [float(v) for v in r["run_all_ms"].split(",")]
                ref_cpu[t] += [float(v) for v in r["run_all_cpu_ms"].split(",")]
                load_ms.append(float(r["load_ms"]))
                load_cpu.append(float(r["load_cpu_ms"]))
                hwm_kb = max(hwm_kb, int(r["hwm_kb"]), int(r["peakrss_kb"]))
            rival.round(per_round)
        if r["stderr"]:
            notes.append(f"{name}: ref_run says: {r['stderr']}")
        med = statistics.median
        tm = {k: med(v) for k, v in rival.ms.items()}
        tc = {k: med(v) for k, v in rival.cpu.items()}
        complete = int(r["computed"]) == int(r["nodes"])
        what = "nn.Module" if module is not None else "graph, aten ops"
        cells, verdicts = [], []
        for t in counts:
            ref, rc = med(ref_ms[t]), med(ref_cpu[t])
            key = f"rival@{t}"
            ratio, cpu_ratio = ref / tm[key], rc / tc[key]
            ok = ratio <= 2.0 and complete
            if t == a.threads:
                goal_speed = goal_speed and ok
            else:
                goal_speed_1 = goal_speed_1 and ok
            cells.append(f"{ref:.3f} (CPU {rc:.3f}) | {tm[key]:.3f} (CPU {tc[key]:.3f}) | "
                         f"**{ratio:.2f} x** (CPU {cpu_ratio:.2f} x)")
            verdicts.append(f"{t}: {'met' if ok else 'MISSED'}")
        extra = f"; float32 graph {tm[f'f32_graph@{a.threads}']:.3f}" if module is not None else ""
        rows.append(f"| {name} ({what}) | {r['nodes']} ({r['computed']} computed) | "
                    + " | ".join(cells) +
                    f" | {tm[f'f64_graph@{a.threads}']:.3f}{extra} | {med(load_ms):.1f} (CPU "
                    f"{med(load_cpu):.1f}) | {', '.join(verdicts)} |")
        if not complete:
            notes.append(f"{name}: only {r['computed']} of {r['nodes']} nodes computed "
                         f"(unsupported: {r['unsupported_ops'] or '-'}, skipped "
                         f"{r['skipped']}, failed {r['failed']}): the time is not comparable")
        w = rec.weights_bytes()
        act = int(r["largest_activation_bytes"])
        target = w + 3 * act
        hwm = hwm_kb * 1024
        base = int(r["rss_base_kb"]) * 1024
        # the executor's own memory: the peak beyond the process before it
        # opened the record (program, libc, OpenBLAS: the same for any model)
        mem_ok = hwm - base <= target
        heap = int(r["anon_end_kb"]) * 1024
        files = int(r["file_end_kb"]) * 1024
        mem_rows.append(f"| {name} | {mb(w)} | {mb(act)} | {mb(int(r['largest_output_bytes']))} "
                        f"| {mb(target)} | {mb(hwm)} | {mb(base)} | **{mb(hwm - base)}** | "
                        f"{mb(heap)} / {mb(files)} | {mb(rec.size)} | "
                        f"{'met' if mem_ok else 'MISSED'} |")
        mem_all_ok = mem_all_ok and mem_ok

    # the main command on the MobileNetV2 files
    stem = os.path.join(work, "mv2")
    cmd = [etc, "--etdump", stem + ".etdp", "--debug_buffer", stem + "_debug.bin",
           "--etrecord", stem + ".etrecord"] + shlex.split(a.main_args)
    main = {}
    for label, extra in (("with", []), ("without", ["--no-reference-run"])):
        walls, cpus, rss = [], [], 0
        for _ in range(a.main_repeat):
            _, wall, kb, _, cpu = run_timed(peakrss, cmd + extra, env)
            walls.append(wall)
            cpus.append(cpu)
            rss = max(rss, kb)
        main[label] = (min(walls), statistics.median(walls), statistics.median(cpus), rss)
    busy = cpu_busy(t_start)

    model_name, cores = machine()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rel_cmd = " ".join(["etcompare"] + [os.path.basename(c) if c.startswith(work) else c
                                         for c in cmd[1:]])
    lines = []

    def out(text=""):
        print(text)
        lines.append(text)

    out(f"Measured {when} by bench/bench_reference.py on {cores} cores ({model_name}), "
          f"{platform.python_implementation()} {platform.python_version()}, torch "
          f"{torch.__version__}; each side with {a.threads} threads (ETC_THREADS, "
          f"torch.set_num_threads) and with one; median of {per_round * a.rounds} runs per "
          f"side and thread count in {a.rounds} alternating rounds (3 warm-up runs for torch, "
          f"an untimed first run for the reference); CPU busy during the benchmark "
          f"{busy:.0f}% (all processes), load average "
          f"{os.getloadavg()[0]:.1f}.")
    out()
    head = "| model (torch side) | nodes |"
    for t in (a.threads, 1) if a.threads != 1 else (1,):
        th = "thread" if t == 1 else "threads"
        head += (f" reference float64 ms, {t} {th} | torch float32 eager ms, {t} {th} | "
                 f"reference / torch, {t} {th} |")
    head += f" torch float64 (graph), {a.threads} threads | reference load ms | within 2 x |"
    out(head)
    out("|" + "---|" * (head.count("|") - 1))
    out("\n".join(rows))
    out()
    out("| model | weights MiB (float64) | largest activation MiB | largest node output MiB "
          "| target: weights + 3 x activation MiB | peak RSS MiB | RSS before opening the "
          "record | peak - before | heap / mapped files at the end | ETRecord file MiB | "
          "peak - before <= target |")
    out("|---|---|---|---|---|---|---|---|---|---|---|")
    out("\n".join(mem_rows))
    out()
    best, med_wall, med_cpu, rss = main["with"]
    verdict = "met" if med_wall < 1.0 else "MISSED"
    nb, nmed, ncpu, nrss = main["without"]
    out(f"Main command on the MobileNetV2 files: `{rel_cmd}` (numeric gap against the "
          f"float64 reference run): median {med_wall:.3f} s wall (best {best:.3f}), "
          f"{med_cpu:.3f} s CPU, of {a.main_repeat} runs; peak RSS {rss / 1024:.1f} MiB: "
          f"target < 1 s **{verdict}**. The same with --no-reference-run: median "
          f"{nmed:.3f} s wall (best {nb:.3f}), {ncpu:.3f} s CPU, peak RSS {nrss / 1024:.1f} MiB.")
    out(f"Speed goal (reference float64 within 2 x torch float32 eager, every model): "
          f"with {a.threads} threads on both sides **{'met' if goal_speed else 'MISSED'}**"
          + (f", with one thread on both sides **{'met' if goal_speed_1 else 'MISSED'}**"
             if a.threads != 1 else "") + ". Memory goal (peak - before <= weights + "
          f"3 x largest activation, every model): **{'met' if mem_all_ok else 'MISSED'}**.")
    for n in notes:
        out(f"- {n}")
    if a.docs:
        write_docs(a.docs, "\n".join(lines))
    if not a.keep and not a.work:
        for f in os.listdir(work):
            os.unlink(os.path.join(work, f))
        os.rmdir(work)


if __name__ == "__main__":
    main()
