# timeline.gp - written by etcompare 0.1.0: the preamble below, then the "timeline" template.
# Run it in this directory to make timeline.png from timeline.dat: gnuplot timeline.gp
datafile = 'timeline.dat'
if (!exists("outfile")) {
	outfile = 'timeline.png'
}
plot_width = 1200
plot_height = 480
plot_title = 'timeline of block Execute, run 0'
plot_xlabel = 'time since the first event (µs)'
n_lanes = 6
n_spans = 8
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# timeline.gp - etcompare template: a Gantt-style timeline of one run, one
# lane per event name, one bar from the start to the end of each event.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_lanes                    number of lanes
#   n_spans                    number of bars
# Data columns: 1 lane (0 on top), 2 start, 3 end, 4 lane label.

set title plot_title
set xlabel plot_xlabel
unset ylabel
set grid xtics
set xrange [0:*]
unset key
set style fill solid 0.8 border -1
set yrange [n_lanes - 0.5:-0.5]
set ytics nomirror
set xtics nomirror
plot datafile using (($2 + $3) / 2):1:(($3 - $2) / 2):(0.35):ytic(4) with boxxyerror lc rgb '#3b78b0' notitle
set output
