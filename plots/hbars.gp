# hbars.gp - etcompare template: horizontal bars, the first row on top
# (e.g. the operators that take the most time).
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of bars
#   value_tics                 '' or the value ticks as a gnuplot list, labelled with
#                              SI prefixes (e.g. ('0' 0, '0.5 ms' 0.0005, '1 ms' 0.001))
# Data columns: 1 row (0 on top), 2 value (NaN when not finite), 3 label.

set title plot_title
set xlabel plot_xlabel
unset ylabel
set grid xtics
unset key
set style fill solid 1.0 border -1
set yrange [n_points - 0.5:-0.5]
set xrange [0:*]
set offsets 0, graph 0.05, 0, 0
set ytics nomirror
set xtics nomirror
if (strlen(value_tics) > 0) {
	eval('set xtics ' . value_tics)
}
plot datafile using (0.5 * $2):1:(0.5 * $2):(0.35):ytic(3) with boxxyerror lc rgb '#3b78b0' notitle
