#!/bin/sh
# Installs what is missing, builds the etcompare CLI and runs it on the
# bundled example (examples/, compiled into the binary): a device ETDump with
# 6 runs and its debug buffer, an ETRecord with reference outputs and AOT
# reference intermediates in which one operator diverges. It prints the
# profiling table, the accuracy comparison and its verdict, the numeric gap
# with the first diverging operator and its source line, and writes the
# plots to ./etcompare-plots. Exits 0 when the example ran (the verdict is
# printed, not returned). Extra arguments are passed to etcompare.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# the CLI, and the shared library the Python package loads (README's recipe)
cmake --build build -j"$(nproc)" --target etcompare_cli etcompare_shared >/dev/null
exec ./build/etcompare --example "$@"
