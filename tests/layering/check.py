#!/usr/bin/env python3
"""Layering check: a source file in src/<layer>/ may include only headers of
its own layer or of a lower one (src/README.md), and the public headers.
The CLI includes only the public API and its own folder. Exits 1 naming
every offending #include."""
import os
import re
import sys

LAYERS = ["core", "format", "reference", "analysis", "report", "plot", "cli"]
# Public headers whose functions a layer implements: a lower layer may not
# include them (the output-file layer, etcompare/output.h, is in core so that
# plot/ writes its files without reaching into report/).
PUBLIC_OWNER = {"etcompare/report.h": "report", "etcompare/html.h": "report"}
# ... and the upper layers a layer may still include that way
PUBLIC_ALLOWED = {"plot": set()}
src = os.path.join(os.environ.get("ETC_SRC", os.path.join(os.path.dirname(__file__), "..", "..")), "src")
bad = []
seen = 0
for layer in LAYERS:
    rank = LAYERS.index(layer)
    folder = os.path.join(src, layer)
    for name in sorted(os.listdir(folder)):
        if not name.endswith((".c", ".h")):
            continue
        seen += 1
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                if inc.startswith("etcompare/"):
                    owner = PUBLIC_OWNER.get(inc)
                    if owner and layer != "cli" and owner != layer and (
                            LAYERS.index(owner) > rank or layer in PUBLIC_ALLOWED):
                        bad.append(f"src/{layer}/{name}:{no}: {layer} must not include {inc} "
                                   f"(the {owner} layer's API)")
                    continue
                if layer == "cli":
                    if "/" in inc:
                        bad.append(f"src/cli/{name}:{no}: the CLI includes only the public API and src/cli: {inc}")
                    continue
                target = inc.split("/")[0] if "/" in inc else None
                if target not in LAYERS:
                    bad.append(f"src/{layer}/{name}:{no}: include with its layer folder: {inc}")
                elif LAYERS.index(target) > rank:
                    bad.append(f"src/{layer}/{name}:{no}: {layer} must not include the upper layer {target}: {inc}")
                elif not os.path.exists(os.path.join(src, inc)):
                    bad.append(f"src/{layer}/{name}:{no}: no such header: {inc}")
strays = [n for n in os.listdir(src) if n.endswith((".c", ".h"))]
for n in strays:
    bad.append(f"src/{n}: every source file belongs to a layer folder")
for b in bad:
    print(b)
print(f"layering: {seen} files, {len(bad)} violations")
sys.exit(1 if bad else 0)
