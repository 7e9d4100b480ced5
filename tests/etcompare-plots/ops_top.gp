# ops_top.gp - written by etcompare 0.1.0: the preamble below, then the "hbars" template.
# Run it in this directory to make ops_top.png from ops_top.dat: gnuplot ops_top.gp
datafile = 'ops_top.dat'
if (!exists("outfile")) {
	outfile = 'ops_top.png'
}
plot_width = 800
plot_height = 480
plot_title = 'top 5 op types by total time over all runs'
plot_xlabel = 'total time'
n_points = 5
value_tics = '(''0'' 0, ''100 µs'' 0.0001, ''200 µs'' 0.00020000000000000001, ''300 µs'' 0.00030000000000000003, ''400 µs'' 0.00040000000000000002)'
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

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
set output
