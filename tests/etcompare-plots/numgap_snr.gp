# numgap_snr.gp - written by etcompare 0.1.0: the preamble below, then the "lines" template.
# Run it in this directory to make numgap_snr.png from numgap_snr.dat: gnuplot numgap_snr.gp
datafile = 'numgap_snr.dat'
if (!exists("outfile")) {
	outfile = 'numgap_snr.png'
}
plot_width = 800
plot_height = 480
plot_title = 'SNR of each intermediate output, execution order'
plot_xlabel = 'operator (execution order)'
plot_ylabel = 'SNR (dB)'
n_points = 7
n_plottable = 7
n_capped = 0
n_failing = 0
y_lo = 0.0
y_hi = 159.80267542165311
log_y = 0
has_threshold = 1
threshold = 30.0
threshold_label = 'threshold 30'
label_margin = 19
marked = 3
marked_label = '3 native_layer_norm'."\n".'aten.native_layer_norm.'."\n".'default'
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# lines.gp - etcompare template: a metric along execution order, with a
# threshold line and one marked operator (where the outputs diverge).
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel, plot_ylabel   free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of operators
#   n_plottable                points with a finite or capped value
#   n_capped                   infinite values (and zeros on a log axis), capped in grey
#   has_threshold, threshold   1 and the threshold value, or 0
#   threshold_label            the threshold's key text
#   label_margin               left margin (characters) so the first tick label fits
#   marked, marked_label       index and label of the marked operator, or -1
#   log_y                      1 for a logarithmic value axis (values <= 0 capped)
#   y_lo, y_hi                 the value axis range (linear axes: it holds 0)
# Data columns: 1 index, 2 finite value (NaN otherwise), 3 label,
# 4 infinite value capped just beyond the finite range (NaN otherwise).

set title plot_title
set xlabel plot_xlabel
set ylabel plot_ylabel
set grid
set key outside top center horizontal
set xrange [-0.5:n_points - 0.5]
set ytics nomirror
if (n_points <= 40) {
	set lmargin label_margin
}
if (log_y) {
	set logscale y
	set format y '%.0e'
}
if (n_plottable == 0 && !has_threshold) {
	set yrange [log_y ? 1e-12 : 0:1]
} else {
	if (!log_y) {
		set yrange [y_lo:y_hi]
	}
}
cap_title = n_capped > 0 ? (log_y ? 'zero or infinite (capped)' : 'infinite (capped)') : ''
if (marked >= 0) {
	set arrow 1 from marked, graph 0 to marked, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728' front
	if (marked < n_points / 2.0) {
		set label 1 marked_label at marked, graph 0.96 left offset 0.5, 0 tc rgb '#d62728' front
	} else {
		set label 1 marked_label at marked, graph 0.96 right offset -0.5, 0 tc rgb '#d62728' front
	}
}
thr_title = has_threshold ? threshold_label : ''
if (n_points <= 40) {
	set xtics rotate by 30 right nomirror
	plot datafile using 1:2:xtic(3) with linespoints pt 7 ps 0.6 lc rgb '#3b78b0' title plot_ylabel, \
		'' using 1:4 with points pt 9 ps 1.2 lc rgb '#a0a0a0' title cap_title, \
		(has_threshold ? threshold : NaN) with lines dt 2 lc rgb '#ff7f0e' title thr_title
} else {
	set xtics nomirror
	plot datafile using 1:2 with linespoints pt 7 ps 0.4 lc rgb '#3b78b0' title plot_ylabel, \
		'' using 1:4 with points pt 9 ps 1.2 lc rgb '#a0a0a0' title cap_title, \
		(has_threshold ? threshold : NaN) with lines dt 2 lc rgb '#ff7f0e' title thr_title
}
set output
