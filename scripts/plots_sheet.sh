#!/bin/sh
# scripts/plots_sheet.sh - docs/plots.png: a contact sheet of the bundled
# example's plots (etcompare --example --plot), drawn by gnuplot itself.
# Usage: scripts/plots_sheet.sh [ETCOMPARE] [OUT.png]
set -eu
etc=${1:-build/etcompare}
out=${2:-docs/plots.png}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$etc" --example --no-table --plot "$dir/p" >/dev/null 2>&1 || true
# three plots a row, as many rows as it takes (400 pixels each)
n=$(ls "$dir"/p/*.png | wc -l)
rows=$(((n + 2) / 3))
{
	echo "set term pngcairo size 1800,$((rows * 400)) font ',9'"
	echo "set out '$dir/sheet.png'"
	echo "set multiplot layout $rows,3 margins 0.005,0.995,0.005,0.995 spacing 0.006"
	echo "unset border; unset tics; unset key; set size ratio -1"
	for f in "$dir"/p/*.png; do
		b=$(basename "$f")
		echo "set title '$b' noenhanced offset 0,-0.8"
		echo "plot '$f' binary filetype=png with rgbimage"
	done
	echo "unset multiplot"
} >"$dir/sheet.gp"
gnuplot "$dir/sheet.gp"
cp "$dir/sheet.png" "$out"
