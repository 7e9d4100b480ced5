#!/bin/sh
# Builds etcompare with ThreadSanitizer (build-tsan/, -DETC_TSAN=ON) and runs
# the reentrancy test under it: 8 threads parsing and comparing the same
# files at once, then sharing opened inputs (tests/unit/test_threads.c).
# Exits non-zero on a data race or a failed check. No arguments.
# tests/tsan.supp lists the one suppression (glibc's tzset, called by libzip).
set -eu
cd "$(dirname "$0")/.."
build=${TSAN_BUILD:-build-tsan}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_TSAN=ON -DETC_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j2 --target test_threads
TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1} suppressions=$PWD/tests/tsan.supp" \
	"$build/tests/test_threads"
