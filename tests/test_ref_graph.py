"""The reference executor on the real exports (tests/data/realexport/, see
/work/shared/fixtures/realexport/README.md): every node output of the Edge
graph of mlp, cnn, tiny_transformer and qcnn, run in float64 by
build/tests/ref_graph_dump, against the float64 torch.fx oracle
<m>_aot_f64.npz (test case 0 = the record's example inputs) and
<m>_aot_f64_tc1.npz (test case 1 = <m>_io.npz input1), relative L2 <= 1e-10;
integer outputs (max-pool indices, quantized values) exact. A node re-run
with its inputs replaced by copies of themselves (etc_refrun_eval) gives
the same values. float32 runs stay within float32 rounding.

Bad input: a state dict without a weight, inputs of the wrong shape or
dtype, an unknown op (the node is "not supported", its dependents
"skipped", the independent nodes still computed), a graph whose recorded
shape disagrees with the computed one."""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as C  # noqa: E402

TOOL = os.environ.get("ETC_REF_GRAPH_DUMP") or os.path.join(
    os.path.dirname(C.ETC), "tests", "ref_graph_dump")
REAL = os.path.join(C.DATA, "realexport")
MODELS = ["mlp", "cnn", "tiny_transformer", "qcnn"]
EDGE = "edge_dialect_exported_program"


def dump(rec, out, *args):
    """Runs the tool: (returncode, {node: (op, status, why, [outputs])}, stderr)."""
    p = subprocess.run([TOOL, rec, *args, out], capture_output=True, text=True)
    nodes = {}
    for line in p.stdout.splitlines():
        if line.startswith("# "):
            nodes["#graph"] = line[2:]
            continue
        name, op, status, why, outs, line_of = line.split("\t")
        nodes[name] = (op, status, why, outs.split(","), line_of)
    return p.returncode, nodes, p.stderr.strip()


def rel_l2(got, want):
    g, w = got.astype(np.float64), want.astype(np.float64)
    den = np.linalg.norm(w)
    num = np.linalg.norm(g - w)
    return num / den if den > 0 else num


def pairs(model, nodes):
    """(our output key, oracle key) for every node output of the graph."""
    with open(os.path.join(REAL, f"{model}_nodes.json")) as fh:
        fx = json.load(fh)["nodes"]
    by_first = {}
    for name, n in fx.items():
        if n["op"] == "call_function" and "tuple_items" in n:
            by_first[n["tuple_items"]["0"]] = n["tuple_items"]
    out = []
    for name, node in nodes.items():
        if name == "#graph":
            continue
        outs = node[3]
        if len(outs) == 1:
            out.append((outs[0], outs[0]))
        else:
            items = by_first.get(outs[0], {})
            for i, o in enumerate(outs):
                out.append((o, items.get(str(i), f"<no oracle for {o}>")))
    for k, n in fx.items():
        if n["op"] == "output":
            for i, key in n["tuple_items"].items():
                out.append((f"output.{i}", key))
    return out


def compare(label, model, got_path, oracle_path, nodes, rel=1e-10):
    with np.load(oracle_path) as z:
        oracle = {k: z[k] for k in z.keys()}
    with np.load(got_path) as z:
        got = {k: z[k] for k in z.keys()}
    worst, bad, n = 0.0, [], 0
    for ours, theirs in pairs(model, nodes):
        if theirs not in oracle or ours not in got:
            bad.append(f"{ours}/{theirs} missing")
            continue
        g, w = got[ours], oracle[theirs]
        n += 1
        if g.shape != w.shape:
            bad.append(f"{ours}: shape {g.shape} != {w.shape}")
        elif w.dtype.kind in "iub":
            if g.dtype != w.dtype or not np.array_equal(g, w):
                bad.append(f"{ours}: integers differ ({g.dtype} vs {w.dtype})")
        else:
            e = rel_l2(g, w)
            worst = max(worst, e)
            if not e <= rel:
                bad.append(f"{ours}: relative L2 {e:.3g}")
    covered = {k for _, k in pairs(model, nodes)}
    missing = [k for k in oracle if k not in covered and k not in ("x",)]
    C.check(f"{label}: every node output equals the float64 oracle ({n} outputs, worst {worst:.2g})",
            not bad and n > 0, "; ".join(bad[:6]))
    C.check(f"{label}: the oracle has no output we did not compare", not missing, missing)
    return got


def rewrite_member(src, dst, member, fn):
    """Copies the zip `src` to `dst` with member `member` replaced by fn(bytes)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == member:
                data = fn(data)
            zout.writestr(info, data)


def drop_weight(data, key):
    """A torch.save state dict without `key`, rewritten with Debian's torch."""
    import io
    import torch
    sd = torch.load(io.BytesIO(data))
    del sd[key]
    buf = io.BytesIO()
    torch.save(sd, buf)
    return buf.getvalue()


with C.harness():
    C.check("the tool is built", os.path.exists(TOOL), TOOL)
    work = tempfile.mkdtemp(prefix="refgraph-")

    for m in MODELS:
        rec = os.path.join(REAL, f"{m}.etrecord")
        out0 = os.path.join(work, f"{m}_0.npz")
        rc, nodes, err = dump(rec, out0, "--eval")
        C.check(f"{m}: the graph runs on the record's example inputs", rc == 0, err)
        if rc != 0:
            continue
        C.check(f"{m}: the default graph is the Edge program",
                nodes.pop("#graph", "") == EDGE + " forward")
        unlinked = [k for k, v in nodes.items() if v[4] == "-"]
        C.check(f"{m}: every node is linked to the record's node (source line)", not unlinked,
                unlinked)
        notdone = [f"{k}: {v[1]} {v[2]}" for k, v in nodes.items() if v[1] != "computed"]
        C.check(f"{m}: every node computed", not notdone, "; ".join(notdone[:5]))
        got = compare(f"{m} test case 0", m, out0, os.path.join(REAL, f"{m}_aot_f64.npz"), nodes)
        evals = [k for k in got if k.endswith("@eval")]
        diff = [k for k in evals if not np.array_equal(got[k], got[k[:-5]])]
        C.check(f"{m}: a node re-run on copies of its inputs gives its values ({len(evals)})",
                evals and not diff, diff[:5])

        # test case 1: the bundled input 1 from <m>_io.npz as "0"
        inp = os.path.join(work, f"{m}_in1.npz")
        with np.load(os.path.join(REAL, f"{m}_io.npz")) as z:
            x1 = z["input1"]
        np.savez(inp, **{"0": x1})
        out1 = os.path.join(work, f"{m}_1.npz")
        rc, nodes1, err = dump(rec, out1, "--inputs", inp)
        C.check(f"{m}: the graph runs on test case 1", rc == 0, err)
        if rc == 0:
            compare(f"{m} test case 1", m, out1, os.path.join(REAL, f"{m}_aot_f64_tc1.npz"), nodes1)

        # float32 arithmetic: float32 results, within float32 rounding of the f64 oracle
        out32 = os.path.join(work, f"{m}_f32.npz")
        rc, nodes32, err = dump(rec, out32, "--dtype", "float32")
        if rc == 0:
            with np.load(out32) as z, np.load(os.path.join(REAL, f"{m}_aot_f64.npz")) as o:
                f32 = [z[a].dtype == np.float32 for a, b in pairs(m, nodes32)
                       if a in z and o[b].dtype.kind == "f"]
                errs = [rel_l2(z[a], o[b]) for a, b in pairs(m, nodes32)
                        if a in z and o[b].dtype.kind == "f"]
            C.check(f"{m}: float32 run gives float32 values within 1e-5 (worst {max(errs):.2g})",
                    all(f32) and max(errs) < 1e-5)
        else:
            C.check(f"{m}: float32 run", False, err)

    # representative_inputs as upstream writes them (pickle.dumps of test case 0's
    # inputs, a list of tensors); here test case 1's, to tell them from the example inputs
    def add_member(src, dst, name, data):
        with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                zout.writestr(info, zin.read(info.filename))
            zout.writestr(name, data)

    import pickle
    import torch
    for m in ("mlp", "cnn"):
        with np.load(os.path.join(REAL, f"{m}_io.npz")) as z:
            x1 = torch.from_numpy(z["input1"].copy())
        rec = os.path.join(work, f"{m}_repr.etrecord")
        add_member(os.path.join(REAL, f"{m}.etrecord"), rec, "representative_inputs",
                   pickle.dumps([x1], protocol=4))
        outr = os.path.join(work, f"{m}_repr.npz")
        rc, nodes, err = dump(rec, outr, "--representative", "0")
        C.check(f"{m}: the graph runs on the record's representative inputs", rc == 0, err)
        if rc == 0:
            compare(f"{m} representative inputs", m, outr,
                    os.path.join(REAL, f"{m}_aot_f64_tc1.npz"), nodes)
        rc, _, err = dump(rec, outr, "--representative", "1")
        C.check(f"{m}: representative inputs have one set", rc == 1 and "no set 1" in err, err)

    # an exported_program whose debug handles cover the Edge program's is the default
    # graph (upstream's choice); without the handles the Edge program stays
    src = os.path.join(REAL, "cnn.etrecord")
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}

    def with_ep(dst, program):
        with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
            for n, data in members.items():
                zout.writestr(n, data)
            zout.writestr("exported_program", program)
            for suffix in ("_state_dict", "_constants", "_example_inputs"):
                zout.writestr("exported_program" + suffix, members[EDGE + suffix])

    ep = os.path.join(work, "ep.etrecord")
    with_ep(ep, members[EDGE])
    rc, nodes, err = dump(ep, os.path.join(work, "ep.npz"))
    C.check("a linked exported_program is the default graph",
            rc == 0 and nodes.get("#graph") == "exported_program forward", err or nodes.get("#graph"))
    if rc == 0:
        nodes.pop("#graph")
        compare("exported_program", "cnn", os.path.join(work, "ep.npz"),
                os.path.join(REAL, "cnn_aot_f64.npz"), nodes)
    j = json.loads(members[EDGE])
    for n in j["graph_module"]["graph"]["nodes"]:
        n["metadata"].pop("debug_handle", None)
    with_ep(ep, json.dumps(j).encode())
    rc, nodes, err = dump(ep, os.path.join(work, "ep.npz"))
    C.check("an exported_program without the debug handles is not",
            rc == 0 and nodes.get("#graph") == EDGE + " forward", err or nodes.get("#graph"))
    rc, nodes, err = dump(ep, os.path.join(work, "ep.npz"), "--graph", "exported_program")
    C.check("unless options.graph names it",
            rc == 0 and nodes.get("#graph") == "exported_program forward", err or nodes.get("#graph"))

    # a graph_map program, named in full or without its method
    gm = os.path.join(work, "graph_map.etrecord")
    with zipfile.ZipFile(gm, "w", zipfile.ZIP_STORED) as zout:
        for n, data in members.items():
            zout.writestr(n, data)
        for suffix in ("", "_state_dict", "_constants", "_example_inputs"):
            zout.writestr("edge_after_transform/forward" + suffix, members[EDGE + suffix])
    for name in ("edge_after_transform/forward", "edge_after_transform"):
        rc, nodes, err = dump(gm, os.path.join(work, "gm.npz"), "--graph", name)
        C.check(f"--graph {name} loads the graph_map program",
                rc == 0 and nodes.get("#graph") == "edge_after_transform/forward forward",
                err or nodes.get("#graph"))
    if rc == 0:
        nodes.pop("#graph")
        C.check("the graph_map program's nodes are linked to the record's",
                all(v[4] != "-" for v in nodes.values()), [v[4] for v in nodes.values()][:3])
        compare("graph_map program", "cnn", os.path.join(work, "gm.npz"),
                os.path.join(REAL, "cnn_aot_f64.npz"), nodes)

    # --- the fold of a weight's transpose --------------------------------------------
    # The classifier's permute_copy(fc.weight, [1, 0]) is folded at load straight
    # from the record, 16 rows at a time (refgraph_call.c, fold_transpose). The
    # same transpose spelled three other ways takes that path too and gives
    # every node output bit for bit; permute [0, 1] is no transpose, and its
    # output, checked against the graph's recorded shape, is refused.
    cnn = os.path.join(REAL, "cnn.etrecord")
    base_npz = os.path.join(work, "fold_base.npz")
    rc, base_nodes, err = dump(cnn, base_npz)
    C.check("cnn: the graph runs as exported", rc == 0, err)
    base = dict(np.load(base_npz))

    def respell(target, inputs):
        def fn(data):
            j = json.loads(data)
            for n in j["graph_module"]["graph"]["nodes"]:
                if n["target"].endswith("aten.permute_copy.default"):
                    n["target"] = "executorch.exir.dialects.edge.ops.aten." + target
                    n["inputs"] = n["inputs"][:1] + inputs
            return json.dumps(j).encode()
        return fn

    for label, target, inputs in (
            ("permute_copy dims [-1, -2]", "permute_copy.default",
             [{"name": "dims", "arg": {"as_ints": [-1, -2]}}]),
            ("t_copy", "t_copy.default", []),
            ("transpose_copy(0, -1)", "transpose_copy.int",
             [{"name": "dim0", "arg": {"as_int": 0}}, {"name": "dim1", "arg": {"as_int": -1}}])):
        rec = os.path.join(work, "fold.etrecord")
        got_npz = os.path.join(work, "fold.npz")
        rewrite_member(cnn, rec, EDGE, respell(target, inputs))
        rc, nodes, err = dump(rec, got_npz)
        got = dict(np.load(got_npz)) if rc == 0 else {}
        same = sorted(got) == sorted(base) and all(
            got[k].dtype == base[k].dtype and got[k].shape == base[k].shape and
            np.array_equal(got[k], base[k]) for k in base)
        C.check(f"the classifier's weight folded through {label}: every output bit for bit",
                rc == 0 and same and
                nodes.get("aten_permute_copy_default", ("", ""))[1] == "computed",
                err or [k for k in base if k not in got or not np.array_equal(got[k], base[k])])
    rec = os.path.join(work, "fold_one_dim.etrecord")
    rewrite_member(cnn, rec, EDGE, respell("transpose_copy.int",
                                           [{"name": "dim0", "arg": {"as_int": 1}}]))
    rc, nodes, err = dump(rec, os.path.join(work, "fold.npz"))
    perm = nodes.get("aten_permute_copy_default", ("", "", ""))
    C.check("transpose_copy with dim1 missing is not folded: the op's own message",
            rc == 0 and perm[1] == "failed" and "dim0 and dim1 are required" in perm[2], perm)
    rec = os.path.join(work, "fold_identity.etrecord")
    rewrite_member(cnn, rec, EDGE, respell("permute_copy.default",
                                           [{"name": "dims", "arg": {"as_ints": [0, 1]}}]))
    rc, nodes, err = dump(rec, os.path.join(work, "fold.npz"))
    perm = nodes.get("aten_permute_copy_default", ("", "", ""))
    C.check("permute_copy dims [0, 1] is not folded as a transpose: its shape is refused",
            rc == 0 and perm[1] == "failed" and "shape" in perm[2], perm)

    # --- bad input -----------------------------------------------------------------
    cnn = os.path.join(REAL, "cnn.etrecord")
    out = os.path.join(work, "bad.npz")

    nosd = os.path.join(work, "no_weight.etrecord")
    rewrite_member(cnn, nosd, EDGE + "_state_dict", lambda d: drop_weight(d, "conv2.weight"))
    rc, _, err = dump(nosd, out)
    C.check("a weight missing from the state dict is refused, naming weight and member",
            rc == 1 and "conv2.weight" in err and EDGE + "_state_dict" in err, err)

    wrongw = os.path.join(work, "wrong_weight.etrecord")

    def shrink(data):
        import io
        import torch
        sd = torch.load(io.BytesIO(data))
        sd["fc.weight"] = sd["fc.weight"][:, :128].clone()
        buf = io.BytesIO()
        torch.save(sd, buf)
        return buf.getvalue()
    rewrite_member(cnn, wrongw, EDGE + "_state_dict", shrink)
    rc, _, err = dump(wrongw, out)
    C.check("a weight of the wrong shape is refused with expected and actual",
            rc == 1 and "fc.weight" in err and "[10, 256]" in err and "[10, 128]" in err, err)

    # a strided (transposed-storage) weight gives the same values
    def strided(data):
        import io
        import torch
        sd = torch.load(io.BytesIO(data))
        sd["fc.weight"] = sd["fc.weight"].t().contiguous().t()
        sd["conv1.weight"] = sd["conv1.weight"].permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        buf = io.BytesIO()
        torch.save(sd, buf)
        return buf.getvalue()
    stri = os.path.join(work, "strided.etrecord")
    rewrite_member(cnn, stri, EDGE + "_state_dict", strided)
    rc, nodes, err = dump(stri, os.path.join(work, "strided.npz"))
    C.check("strided weights load", rc == 0, err)
    if rc == 0:
        nodes.pop("#graph", None)
        compare("strided weights", "cnn", os.path.join(work, "strided.npz"),
                os.path.join(REAL, "cnn_aot_f64.npz"), nodes)

    # a deflated state dict: the record inflates it, so its weights are
    # copied at load instead of read from the file for each op; both ways
    # give the oracle's values, in float64 and in float32
    defl = os.path.join(work, "deflated.etrecord")
    with zipfile.ZipFile(cnn) as zin, zipfile.ZipFile(defl, "w") as zout:
        for info in zin.infolist():
            deflate = info.filename == EDGE + "_state_dict"
            zout.writestr(info.filename, zin.read(info.filename),
                          zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED)
    with zipfile.ZipFile(defl) as z:
        C.check("the rewritten state dict is deflated",
                z.getinfo(EDGE + "_state_dict").compress_type == zipfile.ZIP_DEFLATED)
    rc, nodes, err = dump(defl, os.path.join(work, "deflated.npz"))
    C.check("a deflated state dict loads", rc == 0, err)
    if rc == 0:
        nodes.pop("#graph", None)
        compare("deflated state dict", "cnn", os.path.join(work, "deflated.npz"),
                os.path.join(REAL, "cnn_aot_f64.npz"), nodes)
    for label, rec in (("stored", cnn), ("deflated", defl)):
        rc, _, err = dump(rec, os.path.join(work, f"{label}32.npz"), "--dtype", "float32")
        C.check(f"{label} state dict, float32 run", rc == 0, err)
    if all(os.path.exists(os.path.join(work, f"{x}32.npz")) for x in ("stored", "deflated")):
        with np.load(os.path.join(work, "stored32.npz")) as a, \
                np.load(os.path.join(work, "deflated32.npz")) as b:
            same = sorted(a.keys()) == sorted(b.keys()) and all(
                a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a.keys())
            C.check("weights viewed in the file and copied at load give the same float32 bits",
                    same and len(a.keys()) > 0, sorted(a.keys())[:3])

    bad_in = os.path.join(work, "bad_shape.npz")
    np.savez(bad_in, **{"0": np.zeros((1, 3, 8, 8), np.float32)})
    rc, _, err = dump(cnn, out, "--inputs", bad_in)
    C.check("an input of the wrong shape is refused", rc == 1 and "[1, 3, 16, 16]" in err
            and "[1, 3, 8, 8]" in err and "input 0 (x)" in err, err)
    np.savez(bad_in, **{"0": np.zeros((1, 3, 16, 16), np.int64)})
    rc, _, err = dump(cnn, out, "--inputs", bad_in)
    C.check("an input of the wrong dtype is refused", rc == 1 and "int64" in err
            and "float32" in err, err)
    np.savez(bad_in, **{"0": np.zeros((1, 3, 16, 16)), "1": np.zeros(3)})
    rc, _, err = dump(cnn, out, "--inputs", bad_in)
    C.check("a wrong number of inputs is refused", rc == 1 and "takes 1 inputs" in err, err)

    # an unknown op: the node and its dependents are not computed, the others are
    def rename_op(data):
        j = json.loads(data)
        for n in j["graph_module"]["graph"]["nodes"]:
            if n["target"].endswith("aten.permute_copy.default"):
                n["target"] = "executorch.exir.dialects.edge.ops.aten.no_such_op.default"
        return json.dumps(j).encode()
    unk = os.path.join(work, "unknown_op.etrecord")
    rewrite_member(cnn, unk, EDGE, rename_op)
    rc, nodes, err = dump(unk, out)
    C.check("an unknown op does not fail the run", rc == 0, err)
    if rc == 0:
        st = {k: v[1] for k, v in nodes.items()}
        C.check("the unknown op's node is not supported",
                st.get("aten_permute_copy_default") == "unsupported" and
                "op aten.no_such_op.default is not supported" in nodes["aten_permute_copy_default"][2],
                nodes.get("aten_permute_copy_default"))
        C.check("its dependent is skipped, naming the input",
                st.get("aten_addmm_default") == "skipped" and
                "(node aten_permute_copy_default) was not computed" in nodes["aten_addmm_default"][2],
                nodes.get("aten_addmm_default"))
        C.check("and the dependent's dependent too", st.get("aten__softmax_default") == "skipped")
        C.check("independent nodes are computed",
                st.get("aten_convolution_default") == "computed" and
                st.get("aten_view_copy_default") == "computed", st)

    # a recorded shape that disagrees with the computed one
    def bad_meta(data):
        j = json.loads(data)
        tv = j["graph_module"]["graph"]["tensor_values"]
        tv["aten_relu_default"]["sizes"] = [{"as_int": 1}, {"as_int": 8}, {"as_int": 16},
                                            {"as_int": 15}]
        return json.dumps(j).encode()
    meta = os.path.join(work, "bad_meta.etrecord")
    rewrite_member(cnn, meta, EDGE, bad_meta)
    rc, nodes, err = dump(meta, out)
    C.check("a shape disagreeing with the graph fails the node only",
            rc == 0 and nodes["aten_relu_default"][1] == "failed" and
            "computed shape [1, 8, 16, 16] disagrees with the graph's [1, 8, 16, 15]"
            in nodes["aten_relu_default"][2] and nodes["getitem_1"][1] == "skipped",
            nodes.get("aten_relu_default"))

    # malformed graphs fail the load with the member named
    def dangling(data):
        j = json.loads(data)
        j["graph_module"]["graph"]["nodes"][2]["inputs"][0]["arg"]["as_tensor"]["name"] = "nowhere"
        return json.dumps(j).encode()
    dang = os.path.join(work, "dangling.etrecord")
    rewrite_member(cnn, dang, EDGE, dangling)
    rc, _, err = dump(dang, out)
    C.check("an argument naming no value is a format error", rc == 1 and "nowhere" in err, err)
    rewrite_member(cnn, dang, EDGE, lambda d: d[: len(d) // 2])
    rc, _, err = dump(dang, out)
    C.check("a truncated program is a format error", rc == 1 and "invalid JSON" in err
            and EDGE in err, err)
    rc, _, err = dump(cnn, out, "--graph", "no_such_graph")
    C.check("an unknown graph name is refused", rc == 1 and "no_such_graph" in err, err)

    # the 2023 layout (every union member written, tensor_values {"meta": ...})
    old = os.path.join(C.DATA, "etrecord_2023.bin")
    x = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.5
    y = np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2)
    np.savez(os.path.join(work, "old.npz"), **{"0": x, "1": y})
    rc, nodes, err = dump(old, out, "--inputs", os.path.join(work, "old.npz"))
    C.check("the 2023 record loads and runs", rc == 0 and nodes.pop("#graph", "") and nodes and
            all(v[1] == "computed" for v in nodes.values()), err or nodes)
    if rc == 0:
        with np.load(out) as z:
            C.check("the 2023 record's mul equals numpy",
                    np.array_equal(z["aten_mul_tensor"], x.astype(np.float64) * y), list(z.keys()))

C.finish(work)
