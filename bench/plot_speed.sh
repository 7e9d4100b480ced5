#!/bin/sh
# bench/plot_speed.sh - `--plot` on the bundled example against the analysis
# alone, side by side (issue 25's target: the plots within 3x the analysis
# plus 150 ms). The three commands run in turn, N times each, interleaved so
# that the machine's load falls on all of them alike:
#   A  the example's analysis alone: its files (examples/, the same bytes the
#      binary embeds) with the options --example sets, no plot
#   P  the same with --plot DIR
#   E  `etcompare --example --no-table --plot DIR` (the example as users run it)
#   B  with BASELINE (another build, e.g. main's): its P, in the same turns
# Printed: the median wall time (and CPU time, children included) of each,
# the target 3 x A + 0.15 s, the load average before and after.
# Usage: bench/plot_speed.sh [ETCOMPARE] [N] [BASELINE]   (run from the source tree)
set -eu
etc=${1:-build/etcompare}
n=${2:-7}
base=${3:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ex=examples
args="--etdump $ex/example.etdp --debug_buffer $ex/example_debug.bin --etrecord $ex/example.etrecord --min-snr 30 --no-table"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# one run: wall and user+sys seconds (children included) appended to $dir/$1
t() {
	tag=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$dir/t" "$@" >/dev/null 2>&1 || true
	tail -1 "$dir/t" >>"$dir/$tag"
}
: >"$dir/A"; : >"$dir/P"; : >"$dir/E"; : >"$dir/B"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# shellcheck disable=SC2086
for i in $(seq "$n"); do
	t A "$etc" $args
	t P "$etc" $args --plot "$dir/plots"
	t E "$etc" --example --no-table --plot "$dir/plots-example"
	if [ -n "$base" ]; then
		t B "$base" $args --plot "$dir/plots-base"
	fi
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
wall() { awk '{print $1}' "$dir/$1" | median; }
cpu() { awk '{print $2 + $3}' "$dir/$1" | median; }
pngs=$(ls "$dir/plots"/*.png | wc -l)
a=$(wall A)
echo "etcompare: $etc; $n runs each, interleaved; $(nproc) cores; load average $load0 before, $load1 after"
echo "A analysis alone:            wall ${a} s (median), cpu $(cpu A) s"
echo "P the same with --plot DIR:  wall $(wall P) s, cpu $(cpu P) s ($pngs PNGs)"
echo "E --example --plot DIR:      wall $(wall E) s, cpu $(cpu E) s"
if [ -n "$base" ]; then
	echo "B baseline $base --plot DIR: wall $(wall B) s, cpu $(cpu B) s ($(ls "$dir/plots-base"/*.png | wc -l) PNGs)"
fi
echo "target 3 x A + 0.15 s = $(awk "BEGIN{print 3*$a+0.15}") s"
echo "walls A: $(awk '{printf "%s ", $1}' "$dir/A")"
echo "walls P: $(awk '{printf "%s ", $1}' "$dir/P")"
echo "walls E: $(awk '{printf "%s ", $1}' "$dir/E")"
if [ -n "$base" ]; then
	echo "walls B: $(awk '{printf "%s ", $1}' "$dir/B")"
fi
