# ops_runs.gp - written by etcompare 0.1.0: the preamble below, then the "boxes" template.
# Run it in this directory to make ops_runs.png from ops_runs.dat: gnuplot ops_runs.gp
datafile = 'ops_runs.dat'
if (!exists("outfile")) {
	outfile = 'ops_runs.png'
}
plot_width = 640
plot_height = 480
plot_title = 'time per run of the top 5 op types, block Execute (3 runs)'
plot_ylabel = 'time per run'
n_points = 5
points_only = 0
y_lo = 0.0
y_hi = 5.8276800000000011e-05
value_tics = '(''0'' 0, ''20 µs'' 2.0000000000000002e-05, ''40 µs'' 4.0000000000000003e-05, ''60 µs'' 6.0000000000000008e-05)'
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# boxes.gp - etcompare template: one box plot per group (e.g. the per-run
# times of an operator): whiskers at min and max, box from p25 to p75, a
# line at the median; with fewer than 3 values per group, the values as
# points instead.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_ylabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of boxes
#   points_only                1: a bar at the median with min and max as points, no box
#                              (one or two runs: a lone dot would not read as a time)
#   y_lo, y_hi                 the time axis range: from 0 (times start at zero)
#   value_tics                 '' or the value ticks as a gnuplot list, labelled with
#                              SI prefixes (e.g. ('0' 0, '0.5 ms' 0.0005, '1 ms' 0.001))
# Data columns: 1 index, 2 min, 3 p25, 4 median, 5 p75, 6 max, 7 label.

set title plot_title
set ylabel plot_ylabel
unset xlabel
set grid ytics
unset key
set boxwidth 0.5
set style fill solid 0.4 border -1
set xrange [-0.5:n_points - 0.5]
set yrange [y_lo:y_hi]
set xtics rotate by 30 right nomirror
set lmargin 24
set ytics nomirror
if (strlen(value_tics) > 0) {
	eval('set ytics ' . value_tics)
}
if (points_only) {
	plot datafile using 1:4:xtic(7) with boxes lc rgb '#3b78b0' notitle, \
		'' using 1:2 with points pt 7 ps 1.0 lc rgb '#1f3f60' notitle, \
		'' using 1:6 with points pt 7 ps 1.0 lc rgb '#1f3f60' notitle
} else {
	plot datafile using 1:3:2:6:5:xtic(7) with candlesticks whiskerbars 0.5 lc rgb '#3b78b0' notitle, \
		'' using 1:4:4:4:4 with candlesticks lt -1 lw 2 notitle
}
set output
