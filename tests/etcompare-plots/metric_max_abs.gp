# metric_max_abs.gp - written by etcompare 0.1.0: the preamble below, then the "bars" template.
# Run it in this directory to make metric_max_abs.png from metric_max_abs.dat: gnuplot metric_max_abs.gp
datafile = 'metric_max_abs.dat'
if (!exists("outfile")) {
	outfile = 'metric_max_abs.png'
}
plot_width = 640
plot_height = 480
plot_title = 'max abs error per output'
plot_ylabel = 'max |actual − reference|'
n_points = 6
n_plottable = 6
n_capped = 0
n_failing = 0
y_lo = 0.001
y_hi = 0.10000000000000001
log_y = 1
has_threshold = 0
threshold = 0.0
threshold_label = ''
label_margin = 14
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# bars.gp - etcompare template: a bar chart of one metric, one bar per output.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_ylabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of bars
#   n_failing                  bars drawn red (failing); 0 draws all blue
#                              (grey when the metric is not gated: no threshold)
#   n_capped                   values drawn as a capped marker (inf, or 0 on a log axis)
#   y_lo, y_hi, log_y          value axis range, 1 for a logarithmic axis
#   has_threshold, threshold   1 and the threshold drawn as a line, or 0
#   threshold_label            the threshold line's text
#   label_margin               left margin (characters) so the first label fits
# Data columns: 1 index, 2 finite value (NaN otherwise), 3 label, 4 the
# capped marker's height (NaN otherwise), 5 1 when failing, 6 marker text.

set title plot_title
set ylabel plot_ylabel
unset xlabel
set grid ytics
set key below horizontal
set style fill solid 1.0 border -1
set boxwidth 0.7
set xrange [-0.5:n_points - 0.5]
set yrange [y_lo:y_hi]
if (log_y) {
	set logscale y
	set format y '%.0e'
}
set xtics rotate by 45 right nomirror
set ytics nomirror
set lmargin label_margin
if (has_threshold) {
	set arrow 1 from graph 0, first threshold to graph 1, first threshold nohead dt 2 lw 1.5 lc rgb '#ff7f0e' front
	set style textbox opaque noborder
	set label 1 threshold_label at graph 0.01, first threshold left offset 0, 0.7 tc rgb '#c55a00' front boxed
}
# only a gated metric (one with a threshold) is coloured pass/fail
pass_colour = has_threshold ? '#3b78b0' : '#808080'
# (gnuplot 5.4 crashes on a labels plot with no point: drawn only with markers)
if (n_capped > 0) {
	plot datafile using 1:($5 > 0 ? NaN : $2):xtic(3) with boxes lc rgb pass_colour title (n_failing > 0 ? 'pass' : ''), \
		'' using 1:($5 > 0 ? $2 : NaN) with boxes lc rgb '#d62728' title (n_failing > 0 ? 'fail' : ''), \
		'' using 1:4 with boxes fs pattern 4 lc rgb '#909090' title (log_y ? 'zero or inf, capped' : 'inf, capped'), \
		'' using 1:4 with points pt 9 ps 1.6 lc rgb '#505050' notitle, \
		'' using 1:4:6 with labels offset 0, 1.1 tc rgb '#303030' notitle
} else {
	plot datafile using 1:($5 > 0 ? NaN : $2):xtic(3) with boxes lc rgb pass_colour title (n_failing > 0 ? 'pass' : ''), \
		'' using 1:($5 > 0 ? $2 : NaN) with boxes lc rgb '#d62728' title (n_failing > 0 ? 'fail' : '')
}
set output
