#!/bin/sh
# Installs what is missing, builds etcompare and runs the whole test suite
# twice: a normal build, then one with AddressSanitizer and
# UndefinedBehaviorSanitizer; a subset once more with clang's ASan + UBSan
# and -fsanitize=float-cast-overflow; then builds (tests and benchmarks included)
# with gcc Release (-O3) and clang Release, where other warnings show up.
# Every build has -DETC_WERROR=ON. No arguments. Exits non-zero on any
# failure or warning.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --tests
jobs=$(nproc)

echo "== build and test (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure --timeout 900 -j"$jobs")

echo "== build and test (ASan + UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DETC_SANITIZE=ON -DETC_BUILD_BENCH=OFF -DETC_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure --timeout 900 -j"$jobs")

echo "== clang ASan + UBSan with -fsanitize=float-cast-overflow (gcc has no such check)"
# A subset, to keep the time reasonable: the unit tests, every fuzz corpus
# replay, and the hostile-input, escaping and numeric-gap tests (where input
# numbers are converted to integers).
CC=clang cmake -S . -B build-asan-clang -DCMAKE_BUILD_TYPE=Debug -DETC_SANITIZE=ON \
	-DETC_BUILD_BENCH=OFF -DETC_WERROR=ON >/dev/null
cmake --build build-asan-clang -j"$jobs"
(cd build-asan-clang && export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 &&
	ctest --output-on-failure --timeout 900 -j"$jobs" -L 'unit|fuzz' &&
	ctest --output-on-failure --timeout 900 -j"$jobs" -R 'hostile|escape|numgap_real|quant')

echo "== build only: gcc Release (-O3), warnings are errors"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DETC_WERROR=ON >/dev/null
cmake --build build-release -j"$jobs"

echo "== build only: clang Release, warnings are errors"
CC=clang cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DETC_WERROR=ON >/dev/null
cmake --build build-clang -j"$jobs"

echo "== reentrancy under ThreadSanitizer (8 threads)"
./scripts/tsan.sh
