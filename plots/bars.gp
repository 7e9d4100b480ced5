# bars.gp - etcompare template: a bar chart of one metric, one bar per output.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_ylabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_points                   number of bars
#   n_plottable                bars with a finite or capped value
#   n_capped                   infinite values, drawn capped in grey
# Data columns: 1 index, 2 finite value (NaN otherwise), 3 label,
# 4 infinite value capped just beyond the finite range (NaN otherwise).

set title plot_title
set ylabel plot_ylabel
unset xlabel
set grid ytics
set key top right
set style fill solid 1.0 border -1
set boxwidth 0.7
set xrange [-0.5:n_points - 0.5]
set xtics rotate by 30 right nomirror
set ytics nomirror
if (n_plottable == 0) {
	set yrange [0:1]
}
plot datafile using 1:2:xtic(3) with boxes lc rgb '#3b78b0' notitle, \
	'' using 1:4 with boxes lc rgb '#a0a0a0' title (n_capped > 0 ? 'infinite (capped)' : '')
