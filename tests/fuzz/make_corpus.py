#!/usr/bin/env python3
"""make_corpus.py - writes the seed corpora of the fuzz targets into
tests/fuzz/corpus/<target>/ from the test fixtures: the ETDumps and debug
buffers of tests/data/, the flatc-encoded tests/fixtures/*.json, ETRecords
and torch.save archives from tests/etrecord_gen.py, and the .npz/.npy files
of tests/data/npz/. Run it again after adding fixtures; it only adds and
overwrites its own seed_* files (libFuzzer's additions stay).

Usage: make_corpus.py [flatc]
"""
import glob
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests"))
import etrecord_gen as G  # noqa: E402
import test_fixtures as F  # noqa: E402

CORPUS = os.path.join(HERE, "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def etdump_input(etdp, debug=b""):
    """The etdump target's input: uint32 length, ETDump, debug buffer."""
    return struct.pack("<I", len(etdp)) + etdp + debug


def etdump_seeds(flatc):
    data = os.path.join(SRC, "tests", "data")
    for stem, debug in (("runs5_ops12", "runs5_ops12.bin"), ("misaligned", "misaligned_debug.bin"),
                        ("tutorial", None)):
        etdp = read(os.path.join(data, stem + ".etdp"))
        put("etdump", stem, etdump_input(etdp, read(os.path.join(data, debug)) if debug else b""))
    F.FLATC = flatc
    with tempfile.TemporaryDirectory() as tmp:
        for fixture in F.fixture_paths():
            stem = os.path.basename(fixture)[:-len(".json")]
            etdp = read(F.build_etdump(fixture, tmp))
            side = F.sidecar_path(fixture)
            debug = b""
            if os.path.exists(side):
                import json
                with open(side) as f:
                    spec = json.load(f)
                if spec.get("buffer") or spec.get("buffer_size"):
                    p = os.path.join(tmp, stem + ".bin")
                    F.write_buffer(spec.get("buffer", []), spec.get("buffer_size"), p)
                    debug = read(p)
            put("etdump", "fixture_" + stem, etdump_input(etdp, debug))


def records():
    """(name, ETRecord bytes): the layouts the tests use, linked to the
    bundled example (12 instructions, 5 runs of two float32 [1, 6] outputs)."""
    ops = ["add", "convolution", "relu", "mul", "addmm", "permute_copy", "max_pool2d",
           "view_copy", "_softmax", "native_layer_norm", "add", "convolution"]
    frames = [("/src/model.py", 10 + i, "forward", f"x = self.op{i}(x)") for i in range(3)]
    mods = [("L__self__", "", "model.Net"), ("L__self___conv1", "conv1", "torch.nn.Conv2d")]
    nodes = [G.node(f"aten_{op}_{i}", f"aten.{op}.default", inputs=[("self", f"x{i}"), ("k", 2)],
                    handle=i + 1, trace=frames, modules=mods, source_fn=f"[['{op}', 'fn']]")
             for i, op in enumerate(ops)]
    prog = G.program(nodes)
    refs = {"forward": [[G.Tensor("float32", [0.5 * k + j for j in range(6)], shape=[1, 6]),
                         G.Tensor("float32", [-1.0 * k - j for j in range(6)], shape=[1, 6])]
                        for k in range(5)]}
    dmap = {"forward": {str(i): [i + 1] for i in range(12)}}
    delegate = {"forward": {"4": {"name": "XnnpackBackend",
                                  "delegate_map": {"0": [5], "fused_op": [5, 6]}}}}
    outs = {"forward": {str(i): 1 for i in range(12)}}
    full = dict(programs={"forward": prog}, debug_handle_map=dmap, delegate_map=delegate,
                num_outs_map=outs, export_graph_id=12345, reference_outputs=refs,
                representative_inputs=[[G.Tensor("float32", [1, 2, 3, 4], shape=[2, 2])]],
                graph_map={"aten_dialect_output/forward": prog})
    yield "full", G.zip_bytes(G.etrecord_members(**full))
    yield "full_deflated", G.zip_bytes(G.etrecord_members(**full), zipfile.ZIP_DEFLATED)
    yield "legacy", G.zip_bytes(G.etrecord_members(
        legacy=True, programs={"forward": prog}, debug_handle_map=dmap["forward"],
        delegate_map=delegate["forward"]))
    yield "two_methods", G.zip_bytes(G.etrecord_members(
        programs={"forward": prog, "encode": G.program(nodes[:3])},
        debug_handle_map={"forward": dmap["forward"], "encode": {"0": [1]}}))
    yield "maps_only", G.zip_bytes(G.etrecord_members(debug_handle_map=dmap, siblings=False))
    yield "empty", G.zip_bytes(G.etrecord_members())
    yield "2023", read(os.path.join(SRC, "tests", "data", "etrecord_2023.bin"))
    # references as pickle.dumps bytes (ExecuTorch before v1.3)
    yield "pickle_refs_p4", read(os.path.join(SRC, "tests", "data", "pickle_refs",
                                              "refs_p4.etrecord"))


def torchsave_seeds():
    for p in sorted(glob.glob(os.path.join(SRC, "tests", "data", "torchsave", "*.pt"))):
        put("torchsave", os.path.basename(p)[:-3], read(p))
    s = G.Storage("float32", [float(i) for i in range(12)])
    put("torchsave", "strided", G.torch_save(
        {"t": G.Tensor("float32", storage=s, shape=[3, 2], stride=[1, 3], offset=1),
         "u": G.Tensor("float32", storage=s, shape=[2, 2], stride=[0, 1])}))
    put("torchsave", "dtypes", G.torch_save(
        [G.Tensor(dt, [1, 0, 1], shape=[3]) for dt in G.DTYPES]))
    # pickle.dumps of tensors (protocols 2 and 4) and a legacy non-zip torch.save file
    for name in ("refs_p2.pkl", "refs_p4.pkl", "inputs_p5.pkl", "legacy.pt"):
        put("torchsave", "pickle_" + name.replace(".", "_"),
            read(os.path.join(SRC, "tests", "data", "pickle_refs", name)))


def legacy_seeds():
    import legacy_gen as L
    ev = [("Method::execute", -1, 0, 100, 900), ("native_call_add.out", 0, 1, 150, 400),
          ("delegate_execute", 0, 2, 420, 800)]
    alloc = [("planned", 0), ("scratch", 1)]
    mem = [(0, 64), (1, 16), (0, 32)]
    one = L.block("forward", ev, alloc, mem)
    put("legacy", "one_block", one)
    put("legacy", "two_iterations", one + L.block("forward", ev, alloc, mem))
    put("legacy", "spare_slots", L.block("init", ev[:1], max_prof=4, max_alloc=2, max_mem=3) +
        L.block("forward", ev, alloc, mem))


def cli_seeds():
    """Command lines from the README and the tests, NUL-separated."""
    lines = [
        ["--etdump", "a.etdp", "--debug_buffer", "d.bin", "--etrecord", "m.etrecord", "--plot"],
        ["--etdump=a.etdp", "--tsv", "out.tsv", "--json=-", "--max-values", "3"],
        ["--etdump", "a.etdp", "--reference-outputs", "r.npz", "--min-snr", "40",
         "--max-mse", "1e-3", "--metrics", "snr,mse,cosine", "--junit", "j.xml",
         "--pair-by", "order", "--block", "Execute"],
        ["--etdump", "a.etdp", "--debug_buffer", "d.bin", "--etrecord", "m.etrecord",
         "--reference-etdump", "b.etdp", "--reference-debug-buffer", "e.bin",
         "--min-cosine", "0.99", "--numgap-tsv", "g.tsv"],
        ["--etdump", "a.etdp", "--tables", "all", "--baseline-etdump", "b.etdp",
         "--max-regression", "20", "--min-event-time", "0.01"],
        ["--legacy-profile", "prof_result.bin", "--legacy-time-scale", "us"],
        ["--etdump", "a.etdp", "--trace", "t.json", "--source_time_scale", "cycles",
         "--target_time_scale", "cycles"],
        ["--etrecord", "m.etrecord", "--graph", "forward"],
        ["--etrecord_path", "m.etrecord", "--show-references"],
        ["--help"], ["--version"], ["--example", "--no-table", "--show-outputs"],
        ["--etdump", "a.etdp", "--compare_results", "--plot=out", "--module", "layer1"],
    ]
    for i, line in enumerate(lines):
        put("cli", "line%02d" % i, b"\0".join(a.encode() for a in line))


def derived_seeds():
    """Seeds of the targets of issue 23, from the seeds above: the ETDump
    inputs for html and trace (same layout), pairs of ETDumps for perfdiff,
    the ETRecords for numgap, the --quant-params files of
    tests/test_numgap_real.py for quantparams, and plot inputs made of the
    numbers and names a report plots."""
    import json
    import random
    dumps = sorted(glob.glob(os.path.join(CORPUS, "etdump", "seed_*")))
    parts = []
    for p in dumps:
        data = read(p)
        if len(data) < 4:
            continue
        n = struct.unpack("<I", data[:4])[0]
        parts.append((os.path.basename(p)[5:], data, data[4:4 + n]))
    for name, data, etdp in parts:
        put("html", name, data)
        put("trace", name, data)
    for k, (name, _, a) in enumerate(parts):
        b = parts[(k + 1) % len(parts)][2]
        put("perfdiff", name, struct.pack("<I", len(a)) + a + b)
        put("perfdiff", name + "_self", struct.pack("<I", len(a)) + a + a)
    for p in sorted(glob.glob(os.path.join(CORPUS, "etrecord", "seed_*"))):
        put("numgap", os.path.basename(p)[5:], read(p))
    quant = [{"1": {"scale": 0.02, "zero_point": -5},
              "(4,)": {"scale": [0.01, 0.02], "zero_point": [1, -2], "axis": 0}},
             {"4": {"scale": [0.1, 0.2], "zero_point": [0, 0]}},
             {"1,2": {"scale": 1e-300, "zero_point": 2 ** 40, "axis": 1e300}},
             {"0": {"scale": 0.5, "zero_point": 0, "quant_min": -128, "quant_max": 127}},
             [], {}, {"x": 1}]
    for k, q in enumerate(quant):
        put("quantparams", f"q{k}", json.dumps(q).encode())
    rnd = random.Random(23)
    specials = [0.0, -0.0, 1.0, -1.0, 1e-300, 1e300, float("inf"), float("-inf"), float("nan"),
                5e-324, 65504.0, 3.4e38]
    for k in range(16):
        lab = rnd.choice([b"conv", b"a'b\"c", b"x\ny", b"`id`", b"\xe2\x80\xae"]).ljust(8, b"_")
        body = b""
        for _ in range(rnd.randint(0, 40)):
            v = rnd.choice(specials) if rnd.random() < 0.3 else rnd.uniform(-1e3, 1e3)
            body += struct.pack("<d", v) + lab[:8]
        put("plot", f"p{k}", bytes([rnd.randrange(256), 7]) + body)


def main():
    flatc = sys.argv[1] if len(sys.argv) > 1 else (shutil.which("flatc") or "flatc")
    etdump_seeds(flatc)
    for name, data in records():
        put("etrecord", name, data)
    torchsave_seeds()
    legacy_seeds()
    cli_seeds()
    derived_seeds()
    for p in sorted(glob.glob(os.path.join(SRC, "tests", "data", "npz", "*.np[yz]"))):
        put("npz", os.path.basename(p).replace(".", "_"), read(p))
    for t in sorted(os.listdir(CORPUS)):
        print(t, len(os.listdir(os.path.join(CORPUS, t))))


if __name__ == "__main__":
    if sys.argv[1:] == ["--derived"]:  # only the seeds made from other seeds
        derived_seeds()
    else:
        main()
