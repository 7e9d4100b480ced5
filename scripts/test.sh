#!/bin/sh
# Installs what is missing, builds etcompare and runs the whole test suite
# twice: a normal build, then one with AddressSanitizer and
# UndefinedBehaviorSanitizer. No arguments. Exits non-zero on any failure.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --tests
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== build and test (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DETC_SANITIZE=ON -DETC_BUILD_BENCH=OFF -DETC_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")

echo "== reentrancy under ThreadSanitizer (8 threads)"
./scripts/tsan.sh
