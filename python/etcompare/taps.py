"""TapSpec lists for ``etcompare --tap-specs FILE.json``.

Upstream's intermediate-output tap pass (executorch.devtools.intermediate_output_tap)
returns a list of ``TapSpec`` dataclasses mapping the extra program outputs
back to the tapped ops. ``save_specs`` writes that list as the JSON the CLI
reads: ``[dataclasses.asdict(s) for s in specs]`` (tuples become lists).
"""
import dataclasses
import json

KEYS = ("node_name", "op_target", "output_index", "reducer_name", "fields",
        "stack_trace", "module_path", "module_class")


def _as_dict(spec):
    if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
        d = dataclasses.asdict(spec)
    elif isinstance(spec, dict):
        d = dict(spec)
    else:
        raise TypeError(f"a TapSpec must be a dataclass or a dict, not {type(spec).__name__}")
    for k in ("node_name", "output_index"):
        if d.get(k) is None:
            raise ValueError(f"a TapSpec needs {k!r}: {d!r}")
    d["fields"] = list(d.get("fields") or ())
    return d


def save_specs(specs, path):
    """Writes TapSpecs (dataclasses or dicts) to ``path`` as a JSON list."""
    out = [_as_dict(s) for s in specs]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    return path


def load_specs(path):
    """Reads a TapSpec JSON list back as dicts."""
    with open(path, encoding="utf-8") as f:
        specs = json.load(f)
    if not isinstance(specs, list):
        raise ValueError(f"{path}: a TapSpec file holds a JSON list")
    return specs
