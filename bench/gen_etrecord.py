#!/usr/bin/env python3
"""Writes a large ETRecord for benchmarks (test-side code, stdlib only).

usage: gen_etrecord.py NODES OUT.etrecord

The Edge program has NODES call_function nodes in the verbose serializer
style of real 2023 records (every argument-union key present, unused ones
null), each with a stack trace, an nn_module_stack of three modules and a
debug handle; debug_handle_map maps instruction i to handle i, matching the
instruction ids bench/gen_etdump writes."""
import json
import sys
import zipfile

UNION = ["as_none", "as_tensor", "as_tensors", "as_int", "as_ints", "as_float", "as_floats",
         "as_string", "as_strings", "as_sym_int", "as_sym_ints", "as_scalar_type",
         "as_memory_format", "as_layout", "as_device", "as_bool", "as_bools", "as_sym_bool",
         "as_sym_bools", "as_graph", "as_optional_tensors", "as_custom_obj"]
# the kernels bench/gen_etdump names its instructions after, in its order
# (native_call_<op>.out): etcompare refuses a record whose ops contradict them
OPS = ["aten.convolution.default", "aten.add.Tensor", "aten.mul.Tensor", "aten.relu.default",
       "aten.addmm.default", "aten.linear.default", "aten._softmax.default",
       "aten.native_layer_norm.default", "aten.view_copy.default", "aten.permute_copy.default",
       "aten.bmm.default", "aten.gelu.default", "aten.mean.dim", "aten.sub.Tensor",
       "aten.div.Tensor", "aten.clone.default"]


def arg(**kw):
    a = {k: None for k in UNION}
    a.update(kw)
    return a


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    nodes = []
    for i in range(n):
        op = OPS[i % len(OPS)]
        prev = "arg0_1" if i == 0 else f"node_{i - 1}"
        nodes.append({
            "target": "executorch.exir.dialects.edge.ops." + op,
            "inputs": [{"name": "self", "arg": arg(as_tensor={"name": prev})},
                       {"name": "other", "arg": arg(as_int=i)}],
            "outputs": [arg(as_tensor={"name": f"node_{i}"})],
            "metadata": {
                "stack_trace": f'  File "/src/model.py", line {10 + i % 500}, in forward\n'
                               f'    x = self.block{i % 64}(x)\n',
                "nn_module_stack": f"L__self__,,torch.nn.Module;L__self___block{i % 64},"
                                   f"block{i % 64},model.Block;L__self___block{i % 64}_conv,"
                                   f"block{i % 64}.conv,torch.nn.modules.conv.Conv2d",
                "source_fn_stack": "conv,torch.nn.modules.conv.Conv2d",
                "debug_handle": str(i + 1),
            },
        })
    program = {"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": nodes},
                                "signature": {}, "module_call_graph": []},
               "schema_version": 1}
    handles = {"forward": {str(i): i + 1 for i in range(n)}}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("ETRECORD_V0", b"")
        z.writestr("edge_dialect_exported_program", json.dumps(program))
        z.writestr("debug_handle_map", json.dumps(handles))
        z.writestr("delegate_map", json.dumps({"forward": {}}))
        z.writestr("instruction_id_to_num_outs_map",
                   json.dumps({"forward": {str(i): 1 for i in range(n)}}))


if __name__ == "__main__":
    main()
