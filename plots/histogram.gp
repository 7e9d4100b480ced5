# histogram.gp - etcompare template: a histogram of the error of one output.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel    free text
#   plot_width, plot_height    PNG size in pixels
#   n_values                   number of errors
#   n_nonfinite                NaN or infinite errors, not in any bin
#   hist_lo, hist_hi           range of the bins
#   bin_width                  width of one bin
#   err_mean, err_std          mean and standard deviation of the finite errors
# Data columns: 1 bin centre, 2 count, 3 bin low edge, 4 bin high edge.

stats_line = sprintf('n = %d, mean = %.4g, std = %.4g', n_values - n_nonfinite, err_mean, err_std)
if (n_nonfinite > 0) {
	stats_line = stats_line . sprintf(' (%d non-finite not shown)', n_nonfinite)
}
set title plot_title . "\n" . stats_line
set xlabel plot_xlabel
set ylabel 'count'
set grid ytics
unset key
set style fill solid 1.0 border -1
set boxwidth bin_width absolute
set xrange [hist_lo:hist_hi]
set yrange [0:*]
set xtics nomirror
set ytics nomirror
plot datafile using 1:2 with boxes lc rgb '#3b78b0' notitle
