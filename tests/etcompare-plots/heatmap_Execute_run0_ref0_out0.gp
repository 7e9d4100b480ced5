# heatmap_Execute_run0_ref0_out0.gp - written by etcompare 0.1.0: the preamble below, then the "heatmap" template.
# Run it in this directory to make heatmap_Execute_run0_ref0_out0.png from heatmap_Execute_run0_ref0_out0.dat: gnuplot heatmap_Execute_run0_ref0_out0.gp
datafile = 'heatmap_Execute_run0_ref0_out0.dat'
if (!exists("outfile")) {
	outfile = 'heatmap_Execute_run0_ref0_out0.png'
}
plot_width = 652
plot_height = 272
plot_title = '|actual − reference|, run 0 ref 0 out 0 (worst of 3 runs) [1, 8]'."\n".'max 0.01798 at row 0, column 1'
plot_xlabel = 'dim 1 (8)'
plot_ylabel = 'dim 0 (1)'
plot_cblabel = '|actual − reference|, one scale for out 0 (0 to 0.01798)'
map_rows = 1
map_cols = 8
block_rows = 1
block_cols = 1
map_left = 0.15337423312883436
map_right = 0.93865030674846628
map_top = 0.69117647058823528
map_bottom = 0.45588235294117652
cb_below = 1
cb_x = 0.17791411042944785
cb_y = 0.18382352941176472
cb_w = 0.73619631901840488
cb_h = 0.051470588235294115
cb_max = 0.017977476119995117
xtic_step = 1.0
ytic_step = 1.0
set encoding utf8
if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {
	set terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'
} else {
	set terminal png size plot_width, plot_height noenhanced
}
set output outfile

# heatmap.gp - etcompare template: a heat map of |actual - reference| of one
# output (its last two dimensions; the others flattened into rows), max-pooled
# in blocks when large, so that one bad element stays visible.
#
# etcompare writes <name>.gp as a preamble that sets the variables below,
# picks the PNG terminal and opens the output, followed by this text:
#   datafile, outfile          data file and PNG file names
#   plot_title, plot_xlabel, plot_ylabel, plot_cblabel   free text
#   plot_width, plot_height    PNG size in pixels
#   map_rows, map_cols         cells of the map (after pooling)
#   block_rows, block_cols     source elements per map cell
#   map_left, map_right, map_top, map_bottom   the map's edges (screen fractions)
#   cb_max                     the top of the colour bar: the largest finite value, or
#                              the scale shared by every map of one output (larger)
#   cb_below, cb_x, cb_y, cb_w, cb_h   1 for a horizontal colour bar below the
#                              map (else on its right), its box (screen fractions)
#   xtic_step, ytic_step       tick spacing in source elements
# Data: the map as a matrix, one line per map row, a value per map column.

set title plot_title
set xlabel plot_xlabel
set ylabel plot_ylabel
set cblabel plot_cblabel
unset key
set lmargin at screen map_left
set rmargin at screen map_right
set tmargin at screen map_top
set bmargin at screen map_bottom
set xrange [-0.5 * block_cols:(map_cols - 0.5) * block_cols]
set yrange [(map_rows - 0.5) * block_rows:-0.5 * block_rows]
set cbrange [0:cb_max]
set xtics xtic_step out nomirror
set ytics ytic_step out nomirror
set cbtics out
if (cb_below) {
	set colorbox user horizontal origin screen cb_x, screen cb_y size screen cb_w, screen cb_h
	set cblabel offset 0, 0.3
} else {
	set colorbox user vertical origin screen cb_x, screen cb_y size screen cb_w, screen cb_h
}
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
# gnuplot draws no image of a single row or column: boxes then, one per cell
if (map_rows < 2 || map_cols < 2) {
	plot datafile matrix using ($1 * block_cols):($2 * block_rows):(0.5 * block_cols):(0.5 * block_rows):3 \
	    with boxxy fs solid 1.0 noborder lc palette notitle
} else {
	plot datafile matrix using ($1 * block_cols):($2 * block_rows):3 with image notitle
}
set output
