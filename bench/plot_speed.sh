#!/bin/sh
# bench/plot_speed.sh - `--plot` on the bundled example against the analysis
# alone, side by side: median wall time of N runs each (issue 25's target:
# the plots within 3x the analysis plus 150 ms).
# Usage: bench/plot_speed.sh [ETCOMPARE] [N]
set -eu
etc=${1:-build/etcompare}
n=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
t() { /usr/bin/time -f %e "$@" >/dev/null 2>>"$dir/t" || true; }
: >"$dir/a"; : >"$dir/p"
for i in $(seq "$n"); do
	: >"$dir/t"; t "$etc" --example --no-table; tail -1 "$dir/t" >>"$dir/a"
	: >"$dir/t"; t "$etc" --example --no-table --plot "$dir/plots"; tail -1 "$dir/t" >>"$dir/p"
done
a=$(median <"$dir/a"); p=$(median <"$dir/p")
pngs=$(ls "$dir/plots"/*.png | wc -l)
echo "analysis alone: ${a} s; with --plot: ${p} s (${pngs} PNGs); target 3 x ${a} + 0.15 = $(awk "BEGIN{print 3*$a+0.15}") s"
