# boxes.gp - etcompare template: one box plot per group (e.g. the per-run
# times of an operator): whiskers at min and max, box from p25 to p75, a
# line at the median.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_ylabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of boxes
# Data columns: 1 index, 2 min, 3 p25, 4 median, 5 p75, 6 max, 7 label.

set title plot_title
set ylabel plot_ylabel
unset xlabel
set grid ytics
unset key
set boxwidth 0.5
set style fill solid 0.4 border -1
set xrange [-0.5:n_points - 0.5]
set xtics rotate by 30 right nomirror
set lmargin 24
set ytics nomirror
plot datafile using 1:3:2:6:5:xtic(7) with candlesticks whiskerbars 0.5 lc rgb '#3b78b0' notitle, \
	'' using 1:4:4:4:4 with candlesticks lt -1 lw 2 notitle
