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
