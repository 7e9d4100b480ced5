#!/bin/sh
# Installs what is missing, builds etcompare and runs it on the bundled
# example (an ETDump with 5 merged runs and its debug buffer, compiled into
# the binary). No arguments. Extra arguments are passed to etcompare.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target etcompare_cli >/dev/null
exec ./build/etcompare --example --show-outputs --max-values 4 "$@"
