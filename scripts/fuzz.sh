#!/bin/sh
# Runs a libFuzzer target (tests/fuzz/fuzz_<target>.c) for SECONDS seconds.
#   scripts/fuzz.sh TARGET SECONDS [RUNS]   e.g. scripts/fuzz.sh etdump 1800
#   scripts/fuzz.sh all SECONDS [RUNS]      every target, one after the other
# It stops after SECONDS, or after RUNS executions when given.
# Builds build-fuzz/ with clang (-DETC_FUZZ=ON -DETC_SANITIZE=ON: libFuzzer +
# ASan + UBSan, leak detection on) when needed. New inputs go to
# build-fuzz/corpus/<target>/ (the seeds in tests/fuzz/corpus/<target>/ are
# read, never written); a crash, hang or leak is saved in
# build-fuzz/artifacts/<target>/ and the script exits 1: minimize it, copy it
# to tests/fuzz/crashers/<target>/ and fix it (ctest replays that folder).
# FUZZ_MERGE=1 afterwards merges the new coverage into tests/fuzz/corpus/.
# The log is build-fuzz/fuzz-<target>.log; the last line printed is
#   <target>: <runs> executions in <s> s, cov <n> ft <n>, <k> findings
set -eu
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 TARGET|all SECONDS [RUNS]" >&2; exit 2; }
target=$1 seconds=$2 runs_max=${3:--1}
build=${FUZZ_BUILD:-build-fuzz}

if [ ! -f "$build/CMakeCache.txt" ]; then
	CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_FUZZ=ON \
		-DETC_SANITIZE=ON -DETC_BUILD_BENCH=OFF >/dev/null
fi

if [ "$target" = all ]; then
	status=0
	for src in tests/fuzz/fuzz_*.c; do
		t=$(basename "$src" .c)
		"$0" "${t#fuzz_}" "$seconds" "$runs_max" || status=1
	done
	exit $status
fi

[ -f "tests/fuzz/fuzz_$target.c" ] || { echo "$0: no target tests/fuzz/fuzz_$target.c" >&2; exit 2; }
cmake --build "$build" -j2 --target "fuzz_$target" >/dev/null
mkdir -p "$build/corpus/$target" "$build/artifacts/$target" "tests/fuzz/corpus/$target"
log="$build/fuzz-$target.log"
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -runs="$runs_max" -timeout=10 -rss_limit_mb=2048 \
	-malloc_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$build/artifacts/$target/" \
	"$build/corpus/$target" "tests/fuzz/corpus/$target" >"$log" 2>&1 || status=1

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -n 1 | awk '{print $5}')
last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
findings=$(find "$build/artifacts/$target" -type f | wc -l)
echo "$target: ${runs:-?} executions in ${took:-?} s, cov ${cov:-?} ft ${ft:-?}, $findings findings"

if [ "${FUZZ_MERGE:-0}" = 1 ]; then
	"$build/tests/fuzz/fuzz_$target" -merge=1 "tests/fuzz/corpus/$target" \
		"$build/corpus/$target" >>"$log" 2>&1
fi
exit $status
