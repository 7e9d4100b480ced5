#!/bin/sh
# Builds etcompare without sanitizers (build-valgrind/, -DETC_VALGRIND=ON)
# and runs the `valgrind` ctest label: every unit test, every fuzz corpus
# and crasher replay, and a sample of CLI invocations under
# valgrind --leak-check=full, failing on any error or leak. No arguments.
# (CI keeps ASan/UBSan in scripts/test.sh; this is the slower, separate check.)
set -eu
cd "$(dirname "$0")/.."
build=${VALGRIND_BUILD:-build-valgrind}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_VALGRIND=ON -DETC_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j2
(cd "$build" && ctest --output-on-failure -j2 -L valgrind)
