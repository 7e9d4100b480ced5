# time_error.gp - written by etcompare 0.1.0: the preamble below, then the "scatter" template.
# Run it in this directory to make time_error.png from time_error.dat: gnuplot time_error.gp
datafile = 'time_error.dat'
if (!exists("outfile")) {
	outfile = 'time_error.png'
}
plot_width = 1000
plot_height = 600
plot_title = 'where time and error go: each op''s share of Method::execute (p50 0.07463 ms) against its local SNR'
plot_xlabel = 'share of Method::execute time (%, p50)'
plot_ylabel = 'local SNR (dB; identical drawn at 179)'
n_points = 7
x_lo = 0.0
x_hi = 35.913488596467722
y_lo = 0.0
y_hi = 200.4432924623494
has_threshold = 1
threshold = 30.0
threshold_label = 'min SNR 30 dB'
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# scatter.gp - etcompare template: one point per operator, two quantities
# against each other (e.g. its share of Method::execute time against its
# SNR), the points that matter labelled with their names.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel, plot_ylabel   free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of points
#   x_lo, x_hi, y_lo, y_hi     the axis ranges (a percentage axis from 0)
#   has_threshold, threshold, threshold_label   a dashed line at y = threshold
# Data columns: 1 x, 2 y, 3 kind (0 plain, 1 hot spot, 2 culprit, 3 both),
# 4 label ("" for plain points).

set title plot_title
set xlabel plot_xlabel
set ylabel plot_ylabel
set grid
set key below horizontal
set xrange [x_lo:x_hi]
set yrange [y_lo:y_hi]
set ytics nomirror
set xtics nomirror
if (has_threshold) {
	set arrow 1 from graph 0, first threshold to graph 1, first threshold nohead dt 2 lw 1.5 lc rgb '#ff7f0e' front
	set label 1 threshold_label at graph 0.01, first threshold left offset 0, 0.7 tc rgb '#c55a00' front
}
plot datafile using 1:($3 == 0 ? $2 : NaN) with points pt 7 ps 1.0 lc rgb '#3b78b0' title 'op', \
	'' using 1:($3 == 1 ? $2 : NaN) with points pt 5 ps 1.4 lc rgb '#ff7f0e' title 'hot spot (most time)', \
	'' using 1:($3 >= 2 ? $2 : NaN) with points pt 9 ps 2.0 lc rgb '#d62728' title 'culprit (error enters)', \
	'' using 1:2:($3 > 0 ? stringcolumn(4) : '') with labels left offset 1, 0.6 font ',9' tc rgb '#303030' notitle
set output
