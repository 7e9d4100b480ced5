# numgap_chart.gp - etcompare template: the numeric gap in one chart, the
# cumulative SNR (the reference chain from the model's inputs) and the local
# SNR (each op re-run on the runtime's own inputs) of every op in execution
# order, the gate, the first divergence and where the error enters.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel, plot_ylabel   free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of ops
#   has_local                  1 when a local SNR was computed for some op
#   y_lo, y_hi                 the SNR axis range (it holds 0 and the caps)
#   cap_cum_title, cap_loc_title   the key texts of identical (+inf dB)
#                              cumulative and local values drawn capped at the
#                              top, -inf at the bottom ('' when there is none)
#   has_threshold, threshold, threshold_label   the gate (--min-snr)
#   label_margin               left margin (characters) so the first tick label fits
#   culprit, culprit_label     index and label of where the error enters, or -1
#   culprit_y                  the height of its marker
#   first_div, first_label     index and label of the first divergence, or -1
# Data columns: 1 index, 2 cumulative SNR (finite, NaN otherwise), 3 local
# SNR (finite, NaN otherwise), 4 label (node name, op type beneath),
# 5 cumulative SNR capped (infinite values only), 6 local SNR capped,
# 7 the culprit's marker height (NaN on the other rows).

set title plot_title
set xlabel plot_xlabel
set ylabel plot_ylabel
set grid ytics
set key below horizontal maxrows 2
set xrange [-0.5:n_points - 0.5]
set yrange [y_lo:y_hi]
set ytics nomirror
set style fill solid 0.45 border lc rgb '#6b9ac4'
set boxwidth 0.55
if (n_points <= 40) {
	set lmargin label_margin
}
if (has_threshold) {
	set label 1 threshold_label at graph 0.005, first threshold left offset 0.5, 0.6 tc rgb '#c55a00' front
}
if (first_div >= 0) {
	set arrow 2 from first first_div, graph 0 to first first_div, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728' front
	if (first_div < n_points / 2.0) {
		set label 2 first_label at first first_div, graph 0.97 left offset 0.5, 0 tc rgb '#d62728' front
	} else {
		set label 2 first_label at first first_div, graph 0.97 right offset -0.5, 0 tc rgb '#d62728' front
	}
}
if (culprit >= 0) {
	set style textbox opaque noborder
	if (culprit < n_points / 2.0) {
		set label 3 culprit_label at first culprit, first culprit_y left offset 1.5, 1.2 tc rgb '#d62728' boxed front
	} else {
		set label 3 culprit_label at first culprit, first culprit_y right offset -1.5, 1.2 tc rgb '#d62728' boxed front
	}
}
local_title = has_local ? 'local SNR (op on the runtime''s inputs)' : ''
if (n_points <= 40) {
	if (n_points > 12) {
		set xtics rotate by 90 right nomirror
	} else {
		set xtics rotate by 30 right nomirror
	}
	plot datafile using 1:3 with boxes lc rgb '#9ecae1' title local_title, \
		'' using 1:6 with boxes fs pattern 4 lc rgb '#a0a0a0' title cap_loc_title, \
		'' using 1:2:xtic(4) with linespoints pt 7 ps 0.9 lw 2 lc rgb '#1f4e79' title 'cumulative SNR (from the model''s inputs)', \
		'' using 1:5 with points pt 9 ps 1.3 lc rgb '#a0a0a0' title cap_cum_title, \
		'' using 1:7 with points pt 9 ps 2.0 lc rgb '#d62728' title 'culprit (error enters)', \
		(has_threshold ? threshold : NaN) with lines dt 2 lw 1.5 lc rgb '#ff7f0e' notitle
} else {
	set xtics nomirror
	plot datafile using 1:3 with boxes lc rgb '#9ecae1' title local_title, \
		'' using 1:6 with boxes fs pattern 4 lc rgb '#a0a0a0' title cap_loc_title, \
		'' using 1:2 with linespoints pt 7 ps 0.5 lw 1.5 lc rgb '#1f4e79' title 'cumulative SNR (from the model''s inputs)', \
		'' using 1:5 with points pt 9 ps 1.0 lc rgb '#a0a0a0' title cap_cum_title, \
		'' using 1:7 with points pt 9 ps 2.0 lc rgb '#d62728' title 'culprit (error enters)', \
		(has_threshold ? threshold : NaN) with lines dt 2 lw 1.5 lc rgb '#ff7f0e' notitle
}
