#!/usr/bin/env bash
# bench/run.sh - etcompare benchmarks. Builds nothing: takes the build
# directory from $BUILD (default ./build, configured with ETC_BUILD_BENCH=ON
# and preferably -DCMAKE_BUILD_TYPE=RelWithDebInfo or Release).
#
#   a. TSV: 10 runs x 100,000 events, parse + group + write TSV
#      (--etdump f --tsv out --no-table). Targets: wall < 1 s and peak
#      RSS < 2 x ETDump size + 50 MB.
#   b. Scaling: 10k, 100k and 1M events in total (10 runs each): time per
#      event should stay about constant.
#   e. --trace: the case-a ETDump exported as a Chrome trace. Target < 2 s.

#   g. --tables all on the 1M events of case a (every profiling table,
#      printed). Target: wall < 1.5 s. Also the summaries alone and the
#      performance diff of two such ETDumps (no target).
#   c. --show-outputs over a 1 GiB float32 debug buffer (64 tensors of 4M
#      floats, page cache warmed first). Target >= 4 GB/s of debug buffer.
#   g. Numeric gap: 5,000 intermediate outputs of 64k float32 on each side
#      (2.4 GiB of debug buffers, page cache warm). Target < 2 s.
#   h. Numeric gap by debug handle with 10k and 100k handles per side (end
#      to end), and the handle matching alone at 10k, 100k and 1M handles.
#
# Each case runs $REPEAT times (default 3); the table shows the fastest wall
# time and the largest peak RSS, measured with bench/peakrss (wait4 rusage:
# the same numbers as GNU time's %e and %M, with millisecond wall time) or
# GNU time when the wrapper is not built. CPU = user + sys of the fastest
# run: when the machine is busy, wall time is inflated, CPU time much less.
#
# Environment: BUILD, REPEAT, WORK (scratch directory for the ~1.2 GB of
# generated inputs; default a new directory under ${TMPDIR:-/tmp}, removed at
# the end unless KEEP=1), SKIP_BIG=1 skips case c.
# Output: a markdown table on stdout, also written to bench/RESULTS.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${BUILD:-./build}
if [[ ! -d $build && -z ${BUILD:-} && -d $here/../build ]]; then
	build=$here/../build
fi
if [[ ! -d $build ]]; then
	echo "run.sh: build directory $build not found (set BUILD)" >&2
	exit 2
fi
build=$(cd "$build" && pwd)
etc=$build/etcompare
gen=$build/bench/gen_etdump
peakrss=$build/bench/peakrss
for tool in "$etc" "$gen"; do
	if [[ ! -x $tool ]]; then
		echo "run.sh: $tool not found: build first (cmake -DETC_BUILD_BENCH=ON)" >&2
		exit 2
	fi
done
repeat=${REPEAT:-3}

if [[ -n ${WORK:-} ]]; then
	work=$WORK
	mkdir -p "$work"
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/etc-bench.XXXXXX")
	if [[ -z ${KEEP:-} ]]; then
		trap 'rm -rf "$work"' EXIT
	fi
fi

# bench/peakrss (getrusage, like GNU time's %e/%M but with millisecond wall
# time) when built; else GNU time (package "time"); TIMER=gnu forces GNU time.
if [[ -x $peakrss && ${TIMER:-} != gnu ]]; then
	timer=("$peakrss" -o "$work/time.txt")
	timer_name="bench/peakrss (wait4 rusage)"
elif [[ -x /usr/bin/time ]] && /usr/bin/time -f '%e' true >/dev/null 2>&1; then
	timer=(/usr/bin/time -o "$work/time.txt" -f '%e s %M KB %U user %S sys')
	timer_name="GNU time"
else
	echo "run.sh: neither $peakrss nor GNU time is available" >&2
	exit 2
fi

# measure CMD...: runs CMD $repeat times; sets best_wall, best_cpu, max_rss_kb.
measure() {
	best_wall= best_cpu= max_rss_kb=0
	local i wall rss user sys
	for ((i = 0; i < repeat; i++)); do
		if ! "${timer[@]}" "$@" >/dev/null 2>"$work/stderr.txt"; then
			echo "run.sh: command failed: $*" >&2
			cat "$work/stderr.txt" >&2
			exit 1
		fi
		read -r wall _ rss _ user _ sys _ <"$work/time.txt"
		if [[ -z $best_wall ]] || awk -v a="$wall" -v b="$best_wall" 'BEGIN{exit !(a < b)}'; then
			best_wall=$wall
			best_cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')
		fi
		if ((rss > max_rss_kb)); then
			max_rss_kb=$rss
		fi
	done
}

# generate NAME ARGS...: runs gen_etdump; sets gen_events (total events).
generate() {
	local name=$1
	shift
	"$gen" "$@" --etdump "$work/$name.etdp" 2>"$work/gen.txt"
	gen_events=$(sed -n 's/.* \([0-9][0-9]*\) events total.*/\1/p' "$work/gen.txt")
}

size_of() { stat -c %s "$1"; }
mb() { awk -v b="$1" 'BEGIN{printf "%.1f", b / 1048576}'; }
kb_to_mb() { awk -v k="$1" 'BEGIN{printf "%.1f", k / 1024}'; }

# CPU time stolen by the hypervisor or taken by other processes skews wall
# times; the share of busy/stolen CPU during the run goes into the header.
cpu_stat() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8, $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat 2>/dev/null; }
read -r busy0 steal0 total0 < <(cpu_stat || echo "0 0 0")

rows=()
notes=()
row() { rows+=("| $1 | $2 | $3 | $4 | $5 | $6 | $7 |"); }

# --- a + b: TSV at three sizes ------------------------------------------------
for per_run in 1000 10000 100000; do
	name=tsv_$per_run
	generate "$name" --runs 10 --events "$per_run" --seed 7
	f=$work/$name.etdp
	bytes=$(size_of "$f")
	measure "$etc" --etdump "$f" --tsv "$work/$name.tsv" --no-table
	# (GNU time has 10 ms resolution: a 0.00 s run gets no rate)
	us_per_event=$(awk -v w="$best_wall" -v n="$gen_events" 'BEGIN{if (w > 0) printf "%.3f", w / n * 1e6; else printf "?"}')
	mev=$(awk -v w="$best_wall" -v n="$gen_events" 'BEGIN{if (w > 0) printf "%.2f", n / w / 1e6; else printf "?"}')
	label=$(awk -v n="$gen_events" 'BEGIN{if (n >= 950000) printf "%.0fM", n / 1e6; else printf "%.0fk", n / 1e3}')
	target="-" verdict="-"
	if ((per_run == 100000)); then
		limit_kb=$(((2 * bytes + 50 * 1048576) / 1024))
		target="< 1 s, < $(kb_to_mb "$limit_kb") MB"
		if awk -v w="$best_wall" 'BEGIN{exit !(w < 1)}' && ((max_rss_kb < limit_kb)); then
			verdict=PASS
		else
			verdict=FAIL
		fi
	fi
	row "TSV, 10 runs, $label events" "$(mb "$bytes") MB ETDump, $gen_events events" \
		"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" \
		"$mev M events/s, $us_per_event us/event" "$target" "$verdict"
	rm -f "$work/$name.tsv"
done
notes+=("TSV rows: the 1M-event case is case a; the three TSV rows together are the scaling case b (us/event should stay about constant).")

# --- a': the same 1M events with the table printed as well (the default) ----
f=$work/tsv_100000.etdp
measure "$etc" --etdump "$f" --tsv "$work/table.tsv"
row "table + TSV, 10 runs, 1M events" "$(mb "$(size_of "$f")") MB ETDump" \
	"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" "-" "-" "-"
rm -f "$work/table.tsv"

# --- e: the same 1M events exported as a Chrome trace (--trace) -------------
measure "$etc" --etdump "$f" --trace "$work/trace.json" --no-table
trace_mb=$(mb "$(size_of "$work/trace.json")")
mev=$(awk -v w="$best_wall" -v n="$gen_events" 'BEGIN{if (w > 0) printf "%.2f", n / w / 1e6; else printf "?"}')
verdict=$(awk -v w="$best_wall" 'BEGIN{print (w < 2) ? "PASS" : "FAIL"}')
row "Chrome trace, 10 runs, 1M events" "$(mb "$(size_of "$f")") MB ETDump -> $trace_mb MB JSON" \
	"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" "$mev M events/s" "< 2 s" "$verdict"
notes+=("Chrome trace: written streaming straight from the ETDump (no Inspector when the trace is the only output); debug events are counted in the input but have no trace event.")
rm -f "$work/trace.json"

# --- g: every profiling table of the same 1M events (--tables all: the
# Inspector's table, framework tax, memory, operators, modules, delegates),
# printed; then the summaries alone; then the performance diff against a
# second ETDump of the same shape (other seed) --------------------------------
measure "$etc" --etdump "$f" --tables all
verdict=FAIL
if awk -v w="$best_wall" 'BEGIN{exit !(w < 1.5)}'; then verdict=PASS; fi
row "--tables all, 10 runs, 1M events" "$(mb "$(size_of "$f")") MB ETDump" \
	"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" "-" "< 1.5 s" "$verdict"
measure "$etc" --etdump "$f" --tables tax,memory,ops,modules,delegates
row "--tables tax,memory,ops,modules,delegates (no Inspector table), 1M events" \
	"$(mb "$(size_of "$f")") MB ETDump" "$best_wall ($best_cpu CPU)" \
	"$(kb_to_mb "$max_rss_kb")" "-" "-" "-"
"$gen" --runs 10 --events 100000 --seed 8 --etdump "$work/base.etdp" 2>/dev/null
measure "$etc" --etdump "$f" --baseline-etdump "$work/base.etdp" --no-table
row "performance diff, 1M vs 1M events" "2 x $(mb "$(size_of "$f")") MB ETDump" \
	"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" "-" "-" "-"
rm -f "$work/base.etdp"
notes+=("--tables all prints the Inspector's table (50k rows) and the summaries; the modules table is empty without an ETRecord. The performance diff prints one row per matched event (50k).")

# --- d: ETRecord of 50,000 nodes linked to a 100,000-event ETDump -----------
py=$(command -v /usr/bin/python3 || command -v python3)
"$py" "$here/gen_etrecord.py" 50000 "$work/big.etrecord"
"$gen" --runs 1 --events 100000 --numel 0 --seed 7 --etdump "$work/link.etdp" 2>"$work/gen.txt"
measure "$etc" --etdump "$work/link.etdp" --etrecord "$work/big.etrecord" --no-table
verdict=$(awk -v w="$best_wall" 'BEGIN{print (w < 1) ? "PASS" : "FAIL"}')
row "ETRecord load + link, 50,000 nodes, 100k events" \
	"$(mb "$(size_of "$work/big.etrecord")") MB ETRecord" "$best_wall ($best_cpu CPU)" \
	"$(kb_to_mb "$max_rss_kb")" "-" "< 1 s" "$verdict"
notes+=("The ETRecord case uses the verbose 2023 serializer style (every argument-union key written, unused ones null), the largest form of an Edge program.")
rm -f "$work/big.etrecord" "$work/link.etdp"

# --- c: --show-outputs over 1 GiB ----------------------------------------------
if [[ -z ${SKIP_BIG:-} ]]; then
	name=outputs_1g
	"$gen" --runs 1 --events 193 --numel 4194304 --seed 7 --etdump "$work/$name.etdp" \
		--debug-buffer "$work/$name.bin" 2>"$work/gen.txt"
	dbytes=$(size_of "$work/$name.bin")
	cat "$work/$name.bin" >/dev/null # warm the page cache
	"$etc" --etdump "$work/$name.etdp" --debug_buffer "$work/$name.bin" --show-outputs \
		--no-table >/dev/null
	measure "$etc" --etdump "$work/$name.etdp" --debug_buffer "$work/$name.bin" \
		--show-outputs --no-table
	gbs=$(awk -v b="$dbytes" -v w="$best_wall" 'BEGIN{if (w > 0) printf "%.2f", b / w / 1e9; else printf "0"}')
	verdict=$(awk -v g="$gbs" 'BEGIN{print (g >= 4) ? "PASS" : "FAIL"}')
	row "--show-outputs, 64 x 4M float32" "$(mb "$dbytes") MB debug buffer" \
		"$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" "$gbs GB/s" ">= 4 GB/s" "$verdict"
	notes+=("--show-outputs lists each intermediate output under both native_call_* and OPERATOR_CALL of its instruction; the second listing reuses the first summary. GB/s counts the buffer once. Peak RSS includes the mapped debug buffer.")
	rm -f "$work/$name.bin" "$work/$name.etdp"
fi

# --- e: a 1 GiB reference output in an ETRecord, read in place ---------------
if [[ -z ${SKIP_BIG:-} ]]; then
	"$py" "$here/gen_bigref.py" 1024 "$work/bigref.etrecord"
	rbytes=$(size_of "$work/bigref.etrecord")
	cat "$work/bigref.etrecord" >/dev/null # warm the page cache
	measure "$etc" --etrecord "$work/bigref.etrecord" --show-references --max-values 4
	heap_mb=$(awk -v r="$max_rss_kb" -v b="$rbytes" 'BEGIN{printf "%.1f", (r * 1024 - b) / 1048576}')
	verdict=$(awk -v h="$heap_mb" 'BEGIN{print (h < 64) ? "PASS" : "FAIL"}')
	row "ETRecord with a 1 GiB reference output, --show-references" \
		"$(mb "$rbytes") MB ETRecord" "$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" \
		"$heap_mb MB beyond the mapped file" "no copy of the tensor bytes" "$verdict"
	notes+=("The 1 GiB reference is verified (CRC-32) and summarized in place: peak RSS is the mapped file plus the heap shown; no copy of the tensor bytes is made.")
	rm -f "$work/bigref.etrecord"
fi

# --- f: accuracy comparison of two 1 GiB float32 outputs, end to end --------
if [[ -z ${SKIP_BIG:-} ]]; then
	(cd "$work" && "$py" "$here/gen_compare.py" "$(command -v flatc)" "$here/../schema/etdump.fbs")
	cat "$work/debug.bin" "$work/ref.npz" >/dev/null # warm the page cache
	OPENBLAS_NUM_THREADS=1 measure "$etc" --etdump "$work/d.etdp" --debug_buffer "$work/debug.bin" \
		--reference-outputs "$work/ref.npz" --no-table --min-snr 60
	cbytes=$(($(size_of "$work/debug.bin") + $(size_of "$work/ref.npz")))
	gbs=$(awk -v b="$cbytes" -v w="$best_wall" 'BEGIN{if (w > 0) printf "%.2f", b / w / 1e9; else printf "0"}')
	row "accuracy: 1 GiB output vs 1 GiB .npz reference, end to end, 1 BLAS thread" \
		"$(mb "$cbytes") MB of input" "$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" \
		"$gbs GB/s" ">= 4 GB/s" "$(awk -v g="$gbs" 'BEGIN{print (g >= 4) ? "PASS" : "FAIL"}')"
	if [[ -x $build/bench/bench_metrics ]]; then
		metrics_line=$(OPENBLAS_NUM_THREADS=1 "$build/bench/bench_metrics" --repeat 3 2>&1 | grep "1 thread")
		notes+=("etc_metrics_compare alone (bench/bench_metrics, 2 x 1 GiB float32, 1 BLAS thread): $metrics_line")
	fi
	notes+=("End to end, the reference member's CRC-32 is checked in the comparison's own pass (VPCLMULQDQ carry-less multiplication): the reference is read once.")
	rm -f "$work/debug.bin" "$work/ref.npz" "$work/d.etdp" "$work/d.json"
fi

# --- g: numeric gap, 5,000 intermediate outputs of 64k float32 on each side --
if [[ -z ${SKIP_BIG:-} ]]; then
	"$gen" --runs 1 --events 15001 --numel 65536 --seed 1 --etdump "$work/ng_dev.etdp" \
		--debug-buffer "$work/ng_dev.bin" 2>"$work/gen.txt"
	"$gen" --runs 1 --events 15001 --numel 65536 --seed 2 --noise-ppm 1000 \
		--etdump "$work/ng_ref.etdp" --debug-buffer "$work/ng_ref.bin" 2>"$work/gen.txt"
	cat "$work/ng_dev.bin" "$work/ng_ref.bin" >/dev/null # warm the page cache
	OPENBLAS_NUM_THREADS=1 measure "$etc" --etdump "$work/ng_dev.etdp" --debug_buffer "$work/ng_dev.bin" \
		--reference-etdump "$work/ng_ref.etdp" --reference-debug-buffer "$work/ng_ref.bin" \
		--no-table --min-snr 40
	nbytes=$(($(size_of "$work/ng_dev.bin") + $(size_of "$work/ng_ref.bin")))
	gbs=$(awk -v b="$nbytes" -v w="$best_wall" 'BEGIN{if (w > 0) printf "%.2f", b / w / 1e9; else printf "0"}')
	row "numeric gap: 5,000 x 64k float32 intermediates on each side, 1 BLAS thread" \
		"$(mb "$nbytes") MB of debug buffers" "$best_wall ($best_cpu CPU)" "$(kb_to_mb "$max_rss_kb")" \
		"$gbs GB/s" "< 2 s" "$(awk -v w="$best_wall" 'BEGIN{print (w < 2) ? "PASS" : "FAIL"}')"
	notes+=("Numeric gap: the reference run adds uniform noise of 1e-3 to every value (SNR about 78 dB); both sides aligned by instruction (same program, no ETRecord); peak RSS includes both mapped debug buffers.")
	rm -f "$work"/ng_dev.* "$work"/ng_ref.*
fi

# --- h: numeric gap by debug handle, 10k and 100k handles, end to end --------
for nh in 10000 100000; do
	"$py" "$here/gen_etrecord.py" "$nh" "$work/h.etrecord"
	"$gen" --runs 1 --events $((3 * nh + 1)) --numel 16 --seed 1 --etdump "$work/h.etdp" \
		--debug-buffer "$work/h.bin" 2>"$work/gen.txt"
	"$gen" --runs 1 --events $((3 * nh + 1)) --numel 16 --seed 3 --noise-ppm 1000 \
		--etdump "$work/h_ref.etdp" --debug-buffer "$work/h_ref.bin" 2>"$work/gen.txt"
	measure "$etc" --etdump "$work/h.etdp" --debug_buffer "$work/h.bin" --etrecord "$work/h.etrecord" \
		--reference-etdump "$work/h_ref.etdp" --reference-debug-buffer "$work/h_ref.bin" --no-table
	row "numeric gap by debug handle, $((nh / 1000))k handles each side, end to end" \
		"ETRecord of $nh nodes, 2 ETDumps of $((3 * nh)) events" "$best_wall ($best_cpu CPU)" \
		"$(kb_to_mb "$max_rss_kb")" "-" "-" "-"
	rm -f "$work"/h.* "$work"/h_ref.*
done
if [[ -x $build/bench/bench_numgap ]]; then
	while IFS= read -r line; do
		notes+=("Handle matching alone (bench/bench_numgap, sort + union-find): $line")
	done < <("$build/bench/bench_numgap" --repeat 3)
fi
notes+=("Numeric gap by handle: the end-to-end rows include reading the ETRecord and both ETDumps, linking both and printing the 10k/100k-row table; the matching itself is the bench_numgap lines (CPU per handle grows only with log n and cache misses, never with n).")

build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
read -r busy1 steal1 total1 < <(cpu_stat || echo "0 0 0")
machine_load=$(awk -v b="$((busy1 - busy0))" -v s="$((steal1 - steal0))" -v t="$((total1 - total0))" \
	'BEGIN{if (t > 0) printf "CPU busy %.0f%% (all processes), stolen by the hypervisor %.0f%%", 100 * b / t, 100 * s / t; else printf "unknown"}')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
load=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
{
	echo "# etcompare benchmark results"
	echo
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') with bench/run.sh on $(nproc) cores (${cpu:-unknown CPU}),"
	echo "$(($(awk '/MemTotal/{print $2}' /proc/meminfo) / 1048576)) GiB RAM; during the run: $machine_load; load average at the end: $load."
	echo "Build: CMAKE_BUILD_TYPE=${build_type:-unknown}. Timer: $timer_name; best wall time of $repeat runs"
	echo "(CPU = user + sys of that run), largest peak RSS."
	echo
	echo "| case | input | wall s | peak RSS MB | throughput | target | result |"
	echo "|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	for n in "${notes[@]}"; do
		echo "- $n"
	done
} | tee "$here/RESULTS.md"
