#!/usr/bin/python3
"""pickle_refs_gen - writes tests/data/pickle_refs/: ETRecords whose
reference_outputs and representative_inputs are `pickle.dumps` bytes, as
every ExecuTorch release from Nov 2023 (#1243) to v1.3.0 wrote them, at
pickle protocols 2 to 5, plus one legacy (non-zip) torch.save file.

Needs the real PyTorch (Debian: python3-torch) and runs with /usr/bin/python3;
the test suite only reads the committed output. Run it again after changing
what it writes:  /usr/bin/python3 tests/pickle_refs_gen.py tests/data/pickle_refs

Written per protocol P:
  refs_pP.pkl       pickle.dumps(reference_outputs, protocol=P)
  inputs_pP.pkl     pickle.dumps(representative_inputs, protocol=P)
  refs_pP.etrecord  ETRecord (stored members, as upstream's ZipFile.writestr)
                    holding both, a one-node program and its debug_handle_map
and once:
  legacy.pt         torch.save(..., _use_new_zipfile_serialization=False)
  complex_p4.etrecord  a complex64 reference (not read: must be refused)
  MANIFEST.json     per file, every tensor leaf in walk order: path (as
                    --show-references prints it), dtype, shape, stride,
                    storage_offset, contiguous, values (float64, NaN/inf as
                    strings), sha256 of its row-major bytes, and which leaves
                    are the same Python object or share a storage
  MANIFEST.txt      the same tensors for the C unit test, one per line:
                    file <TAB> path <TAB> dtype <TAB> shape <TAB> stride <TAB>
                    storage_offset <TAB> contiguous <TAB> values (repr, space-separated)
"""
import hashlib
import json
import math
import os
import pickle
import sys

import torch

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import etrecord_gen as G  # noqa: E402  (zip layout only; its fake torch is never used)

PROTOCOLS = (2, 3, 4, 5)


def references():
    """reference_outputs: {method: [outputs of bundled input i]}, upstream's shape,
    plus a "zoo" method of nested dicts and lists with every dtype and view kind."""
    g = torch.Generator().manual_seed(13)
    base0 = torch.randn(4, 6, generator=g)
    r0 = base0[1:3, 2:5]                      # storage offset 8, strides (6, 1)
    base1 = torch.randn(3, 2, generator=g, dtype=torch.float32)
    r1 = base1.t()                            # strides (1, 2)
    grid = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    zoo = {
        "dtypes": {
            "float32": torch.tensor([1.5, -2.25, 3e-8, float("inf"), float("nan"), -0.0]),
            "float64": torch.tensor([math.pi, -1e300, 5e-324], dtype=torch.float64),
            "float16": torch.tensor([0.5, -65504.0, 6e-5, 1.0009765625], dtype=torch.float16),
            "bfloat16": torch.tensor([1.0, -3.140625, 1e30, -0.0078125], dtype=torch.bfloat16),
            "int8": torch.tensor([-128, 127, 0, -1], dtype=torch.int8),
            "int16": torch.tensor([-32768, 32767, 300], dtype=torch.int16),
            "int32": torch.tensor([-2**31, 2**31 - 1, 7], dtype=torch.int32),
            "int64": torch.tensor([-2**53, 2**53, -7], dtype=torch.int64),
            "uint8": torch.tensor([0, 255, 17], dtype=torch.uint8),
            "bool": torch.tensor([True, False, True]),
        },
        "views": [
            grid[1:3, 2:5],          # offset and row stride
            grid.t(),                # transposed
            grid[:, ::2],            # step
            grid[2],                 # a row: offset 12, contiguous
            torch.tensor([1.0, 2.0, 3.0]).expand(2, 3),  # stride 0
            torch.tensor(2.5),       # 0-dim
            torch.zeros(0, 3),       # empty
            grid.reshape(2, 3, 4)[:, 1:, ::3],  # 3-d, offset and steps
        ],
        "again": [grid, grid],      # one object twice: pickle memoizes it
    }
    return {"forward": [[r0], [r1]], "zoo": [[zoo]]}


def inputs():
    """representative_inputs: the first bundled input of "forward" (tensors and scalars)."""
    return [torch.tensor([[0.25, -1.0, 4.0]]), 3, 2.5, True,
            torch.tensor([5, -6], dtype=torch.int64)]


def leaves(obj, path=""):
    """(path, tensor) in the order etcompare walks them (dicts in insertion order)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(obj, torch.Tensor):
        yield path, obj


def num(v):
    if isinstance(v, bool):
        return float(v)
    v = float(v)
    return v if math.isfinite(v) else repr(v)


def describe(tensors):
    out, seen, storages = [], {}, {}
    for path, t in tensors:
        flat = t.reshape(-1)
        vals = [num(x) for x in (flat.tolist() if t.dtype != torch.bfloat16
                                 else flat.double().tolist())]
        dense = t.contiguous()
        raw = dense.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        entry = {"path": path, "dtype": str(t.dtype).replace("torch.", ""),
                 "shape": list(t.shape), "stride": list(t.stride()),
                 "storage_offset": t.storage_offset(), "contiguous": t.is_contiguous(),
                 "values": vals, "sha256": hashlib.sha256(raw).hexdigest()}
        if id(t) in seen:
            entry["same_object_as"] = seen[id(t)]
        seen.setdefault(id(t), path)
        key = t.storage().data_ptr() if t.numel() else None
        if key is not None and key in storages and storages[key] != path:
            entry["shares_storage_with"] = storages[key]
        if key is not None:
            storages.setdefault(key, path)
        out.append(entry)
    return out


def txt_line(fname, e):
    vals = " ".join(repr(float(v)) if not isinstance(v, str) else v for v in e["values"])
    return "\t".join([fname, e["path"], e["dtype"], ",".join(map(str, e["shape"])),
                      ",".join(map(str, e["stride"])), str(e["storage_offset"]),
                      "1" if e["contiguous"] else "0", vals])


def etrecord(path, refs_bytes, inputs_bytes):
    G.write_etrecord(path, siblings=False,
                     programs={"forward": G.program([G.node("add", "aten.add.Tensor",
                                                            handle=1)])},
                     debug_handle_map={"forward": {"0": [1]}},
                     reference_outputs=refs_bytes, representative_inputs=inputs_bytes)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    refs, ins = references(), inputs()
    manifest, lines = {}, []

    def record(fname, obj, what):
        d = describe(list(leaves(obj)))
        manifest[fname] = {"object": what, "tensors": d}
        lines.extend(txt_line(fname, e) for e in d)

    for p in PROTOCOLS:
        rb, ib = pickle.dumps(refs, protocol=p), pickle.dumps(ins, protocol=p)
        # what upstream's parse_etrecord gets back is what was saved
        assert all(torch.equal(a, b) or (a.isnan().any() and b.isnan().any())
                   for (_, a), (_, b) in zip(leaves(refs), leaves(pickle.loads(rb))))
        for name, data in ((f"refs_p{p}.pkl", rb), (f"inputs_p{p}.pkl", ib)):
            with open(os.path.join(outdir, name), "wb") as f:
                f.write(data)
        etrecord(os.path.join(outdir, f"refs_p{p}.etrecord"), rb, ib)
        record(f"refs_p{p}.pkl", refs, "reference_outputs")
        record(f"inputs_p{p}.pkl", ins, "representative_inputs")
    grid = torch.arange(12, dtype=torch.float64).reshape(3, 4)
    legacy = {"w": grid, "v": grid[1:, 1:3], "same": grid,
              "h": torch.tensor([1.5, -2.0], dtype=torch.float16)}
    torch.save(legacy, os.path.join(outdir, "legacy.pt"), _use_new_zipfile_serialization=False)
    record("legacy.pt", legacy, "torch.save, legacy format")
    cplx = {"forward": [[torch.tensor([1 + 2j, -3j], dtype=torch.complex64)]]}
    cb = pickle.dumps(cplx, protocol=4)
    etrecord(os.path.join(outdir, "complex_p4.etrecord"), cb, pickle.dumps([], protocol=4))
    manifest["_about"] = {"torch": torch.__version__, "python": sys.version.split()[0],
                          "generator": "tests/pickle_refs_gen.py"}
    with open(os.path.join(outdir, "MANIFEST.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    with open(os.path.join(outdir, "MANIFEST.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pickle_refs"))
