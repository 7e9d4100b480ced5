/*
 * etcompare/plot.h - plots of the accuracy comparison and of the profile:
 * bar charts, error histograms, line plots, box plots and timelines drawn
 * by gnuplot, and heat maps of the absolute
 * error written directly as PNG.
 *
 * gnuplot plots. Each call writes, atomically (temporary file + rename),
 *   <dir>/<name>.dat  the data, one row per bar, bin or point;
 *   <dir>/<name>.gp   a self-contained gnuplot script: a preamble that sets
 *                     the variables listed with each template, then the
 *                     template text itself;
 * and then runs gnuplot as a child process (no shell; stdout is /dev/null;
 * stdin a pipe that gives it `cd <dir>` and `load '<name>.gp'`; its stderr
 * is captured for the error message) to make <dir>/<name>.png, through a
 * temporary file renamed into place. The script picks the pngcairo terminal when the gnuplot that
 * runs it has one (GPVAL_TERMINALS) and the libgd png terminal otherwise, so
 * `cd <dir> && gnuplot <name>.gp` makes the same PNG later or elsewhere.
 *
 * Templates. The built-in templates are C string constants kept identical,
 * byte for byte, to the files plots/<kind>.gp of the source tree (bars,
 * histogram, lines, hbars, boxes, timeline, heatmap; a unit test compares
 * them; plots/gen_templates.py writes src/plot/templates.c from them), so the
 * library needs no data files at run time. etc_plot_options.template_dir
 * names a directory holding <kind>.gp files to use instead (for example the
 * source tree's plots/ while editing a template).
 *
 * Names. `name` becomes the file names and must be 1 to 128 characters of
 * [A-Za-z0-9_.-], not starting with '.'; anything else is ETC_ERR_USAGE and
 * nothing is written. Labels and titles are free text: in the script they
 * are single-quoted gnuplot strings (' doubled), in the data double-quoted
 * strings (\ doubled, " becomes '); control characters become spaces, and
 * the terminal is set noenhanced so that ^ _ @ { } print as themselves.
 *
 * Missing gnuplot. When the program named by etc_plot_options.gnuplot (or
 * "gnuplot" on PATH) cannot be found or executed, the .gp and .dat files are
 * still written, no PNG is made, the call returns 0 and sets
 * etc_plot_result.gnuplot_missing; the caller says so once. When gnuplot runs
 * but fails, the call returns ETC_ERR_IO with the first line gnuplot printed.
 *
 * Batches. One gnuplot process per core for an etcompare run: with
 * etc_plot_options.batch set, the calls only write the scripts; one
 * etc_plot_batch_run shares them out to one gnuplot per core, their expected
 * times (image sizes) about even (each
 * reads a combined script as its standard input, so an error costs only
 * that plot) and renames each PNG into place. Without a batch, each call is
 * a batch of one. Heat maps need no gnuplot: their PNG is drawn with libpng
 * at once, beside the same .gp and .dat (gnuplot remakes it from them).
 *
 * Results accumulate: each call adds to pngs_written and scripts_written and
 * only ever sets gnuplot_missing, so one zero-initialised etc_plot_result can
 * be passed to every call of a run. It may be NULL.
 *
 * Non-finite values: in bar charts and line plots a NaN is not drawn (its
 * label says "nan"); +inf and -inf are drawn in grey, capped just beyond the
 * finite range, and labelled "+inf"/"-inf". Histograms count non-finite
 * errors apart and say how many were left out.
 */
#ifndef ETCOMPARE_PLOT_H
#define ETCOMPARE_PLOT_H

#include "common.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etc_plot_batch etc_plot_batch;

/**
 * The look of one plot, for the calls that use it (others ignore it).
 * Zero-initialise, then set threshold to NAN unless one is drawn.
 */
typedef struct etc_plot_style {
	double threshold; /**< bars: a dashed line at this value, with its text; NaN: none */
	const char *threshold_label; /**< the line's text; NULL: "threshold <value>" */
	const bool *failing; /**< bars and lines: n flags, true draws the bar red; NULL: none */
	bool log_scale;      /**< bars, lines: logarithmic value axis; values <= 0 drawn as a
	                          capped marker "0" */
	const char *si_unit; /**< hbars, boxes: values in this base unit ("s"), ticks with SI
	                          prefixes (50 us); NULL: plain numbers */
	bool points_only;    /**< boxes: a bar at the median, min and max as points, no box
	                          (fewer than 3 samples) */
	double scale_max;    /**< error maps: the top of the colour scale, shared by the maps
	                          of one output across runs; 0 or NaN: the map's largest value
	                          (the larger of the two is used) */
} etc_plot_style;

/** Where and how to plot. NULL options mean all defaults. */
typedef struct etc_plot_options {
	const char *dir;     /**< output directory, created (with parents) if missing; NULL = "." */
	const char *gnuplot; /**< gnuplot executable: a path, or NULL for "gnuplot" on PATH */
	const char *template_dir; /**< directory of <kind>.gp templates; NULL = built-in */
	/**
	 * NULL: each call runs gnuplot at once. Otherwise each call writes its
	 * .gp and .dat and queues the plot here; etc_plot_batch_run then makes
	 * every PNG with one gnuplot process per core (ETC_THREADS or the online
	 * processors). Heat maps (etc_plot_error_map) are drawn natively at once
	 * and queued as made.
	 */
	etc_plot_batch *batch;
	const etc_plot_style *style; /**< NULL: the default look */
} etc_plot_options;

/** What the plot calls did; accumulated over calls (see above). */
typedef struct etc_plot_result {
	int pngs_written;     /**< PNG files made by gnuplot */
	int scripts_written;  /**< .gp scripts written (each with its .dat) */
	bool gnuplot_missing; /**< set when gnuplot could not be run */
} etc_plot_result;

/**
 * Supplies `count` consecutive values starting at element `first` into
 * `dst` (for a tensor: flat, row-major). Returns 0 or a negative etc_status
 * after filling `err`; the plot call then fails with that status. `count`
 * is at most 16384 per call.
 */
typedef int (*etc_plot_read_fn)(void *ctx, uint64_t first, size_t count, double *dst,
                                etc_error *err);

/**
 * The built-in text of template `kind` ("bars", "histogram", "lines",
 * "hbars", "boxes", "timeline", "heatmap", "scatter" or "numgap_chart"),
 * identical to plots/<kind>.gp; NULL for any other kind.
 */
ETC_API const char *etc_plot_template(const char *kind);

/**
 * A bar chart of one metric, one bar per output: bar i is `values[i]`
 * labelled `labels[i]` (labels NULL: the index). Call once per metric.
 * The PNG is W x 480 pixels, W = 160 + 40 n clamped to [640, 4096].
 * Template "bars": variables datafile, outfile, plot_title, plot_ylabel,
 * plot_width, plot_height, n_points, n_plottable, n_capped; data columns
 * index, finite value or NaN, label, capped infinite value or NaN.
 * @param n  number of bars, at least 1
 */
ETC_API int etc_plot_bars(const etc_plot_options *o, const char *name, const char *title,
                          const char *ylabel, size_t n, const char *const *labels,
                          const double *values, etc_plot_result *res, etc_error *err);

/**
 * A histogram of the signed error (actual - reference) of one output, in
 * `bins` equal bins (0 = 50, at most 100000) over the range of the finite
 * errors. Only the bins are written, not the errors. The PNG is 800 x 480.
 * Template "histogram": variables datafile, outfile, plot_title,
 * plot_xlabel, plot_width, plot_height, n_values, n_nonfinite, hist_lo,
 * hist_hi, bin_width, err_mean, err_std; data columns bin centre, count,
 * bin low edge, bin high edge.
 */
ETC_API int etc_plot_histogram(const etc_plot_options *o, const char *name, const char *title,
                               const double *errors, size_t n, size_t bins, etc_plot_result *res,
                               etc_error *err);

/**
 * etc_plot_histogram with the `n` errors supplied by `read` in chunks, so
 * that no array of the whole output is needed; they are read twice (range,
 * then bins). Memory stays under 1 MiB whatever `n`.
 */
ETC_API int etc_plot_histogram_read(const etc_plot_options *o, const char *name, const char *title,
                                    etc_plot_read_fn read, void *ctx, uint64_t n, size_t bins,
                                    etc_plot_result *res, etc_error *err);

/**
 * A line plot along execution order: point i is `values[i]` for operator
 * `labels[i]` (x tick labels shown when n <= 40), a dashed horizontal line at
 * `threshold` (NaN: none) and a dashed red vertical line at index `marked`
 * labelled with its label (-1: none; otherwise it must be < n).
 * The PNG is W x 480 pixels, W = 160 + 12 n clamped to [800, 4096].
 * Template "lines": the variables of "bars" plus plot_xlabel,
 * has_threshold, threshold, marked, marked_label; the data columns of "bars".
 */
ETC_API int etc_plot_lines(const etc_plot_options *o, const char *name, const char *title,
                           const char *ylabel, size_t n, const char *const *labels,
                           const double *values, double threshold, long marked,
                           etc_plot_result *res, etc_error *err);

/**
 * One point per item, x against y (e.g. an op's share of Method::execute
 * time against its SNR), both axes from 0 (or below, for negative values);
 * kind[i]: 0 a plain point, 1 a hot spot, 2 a culprit, 3 both; points of a
 * kind other than 0 are labelled with labels[i] (wrapped, never cut). The
 * style's threshold (NaN: none) is a dashed line at y = threshold with its
 * threshold_label. Points with a non-finite x or y are left out.
 * Template "scatter".
 */
ETC_API int etc_plot_scatter(const etc_plot_options *o, const char *name, const char *title,
                             const char *xlabel, const char *ylabel, size_t n,
                             const char *const *labels, const double *x, const double *y,
                             const unsigned char *kind, etc_plot_result *res, etc_error *err);

/**
 * The numeric gap in one chart: x the n ops in execution order labelled
 * labels[i] (node name, op type beneath; tick labels when n <= 40, wrapped,
 * never cut), y the SNR in dB from 0 (or from the lowest value when one is
 * negative): cumulative[i] (the reference chain from the model's inputs)
 * as a line with points, local[i] (the op re-run on the runtime's own
 * inputs; NULL: none) as bars. NaN is not drawn; +inf (identical) is drawn
 * in grey capped above the largest finite value (-inf below the lowest),
 * the key saying where. A
 * dashed line at `threshold` (NaN: none; the style's threshold_label, else
 * "min SNR <value> dB"); the op `culprit` (where the error enters; -1:
 * none) marked as etc_plot_scatter marks a culprit, a red triangle, and
 * labelled; a dashed red vertical line at `first` (the first divergence;
 * -1: none), labelled. culprit and first must be below n.
 * The PNG is W x 640, W = 200 + 48 n clamped to [1000, 4096]; beyond 40
 * ops (no tick labels) W x 520, W = 200 + 12 n clamped alike. Template "numgap_chart": see
 * plots/numgap_chart.gp for its variables and data columns.
 */
ETC_API int etc_plot_numgap_chart(const etc_plot_options *o, const char *name, const char *title,
                                  size_t n, const char *const *labels, const double *cumulative,
                                  const double *local, double threshold, long culprit, long first,
                                  etc_plot_result *res, etc_error *err);

/**
 * A line over a sequence (e.g. one point per run): etc_plot_lines with the
 * x axis labelled `xlabel`, no threshold and no marked point. One value
 * (one run) is drawn as a bar from 0 (etc_plot_bars), not a lone dot.
 */
ETC_API int etc_plot_trend(const etc_plot_options *o, const char *name, const char *title,
                           const char *xlabel, const char *ylabel, size_t n,
                           const char *const *labels, const double *values, etc_plot_result *res,
                           etc_error *err);

/**
 * Horizontal bars, bar 0 on top: bar i is `values[i]` labelled `labels[i]`.
 * The PNG is 800 x 480. Template "hbars": variables datafile, outfile,
 * plot_title, plot_xlabel, plot_width, plot_height, n_points; data columns
 * row, value (NaN when not finite), label.
 */
ETC_API int etc_plot_hbars(const etc_plot_options *o, const char *name, const char *title,
                           const char *xlabel, size_t n, const char *const *labels,
                           const double *values, etc_plot_result *res, etc_error *err);

/** The five numbers of one box of a box plot. */
typedef struct etc_plot_box {
	double min, q1, median, q3, max;
} etc_plot_box;

/**
 * Box plots, one per group: whiskers at min and max, the box from q1 to q3,
 * a line at the median. The PNG is W x 480, W = 160 + 60 n clamped to
 * [640, 4096]. Template "boxes": variables datafile, outfile, plot_title,
 * plot_ylabel, plot_width, plot_height, n_points; data columns index, min,
 * q1, median, q3, max, label.
 */
ETC_API int etc_plot_boxes(const etc_plot_options *o, const char *name, const char *title,
                           const char *ylabel, size_t n, const char *const *labels,
                           const etc_plot_box *boxes, etc_plot_result *res, etc_error *err);

/** One bar of a timeline: lane index, start and end on the x axis. */
typedef struct etc_plot_span {
	uint32_t lane;
	double start, end;
} etc_plot_span;

/**
 * A Gantt-style timeline: one lane per label (lane 0 on top), one bar per
 * span. The PNG is 1200 x 480. Template "timeline": variables datafile,
 * outfile, plot_title, plot_xlabel, plot_width, plot_height, n_lanes,
 * n_spans; data columns lane, start, end, lane label. ETC_ERR_USAGE when a
 * span names a lane >= n_lanes.
 */
ETC_API int etc_plot_timeline(const etc_plot_options *o, const char *name, const char *title,
                              const char *xlabel, size_t n_lanes, const char *const *lane_labels,
                              size_t n, const etc_plot_span *spans, etc_plot_result *res,
                              etc_error *err);

/**
 * Where a heat map's cells land in its PNG (see etc_plot_heatmap). Source
 * cell (r, c) is pooled into map cell (r / block_rows, c / block_cols),
 * drawn as the cell_w x cell_h pixels whose top-left corner is
 * (map_x + (c / block_cols) * cell_w, map_y + (r / block_rows) * cell_h).
 */
typedef struct etc_heatmap_layout {
	uint64_t block_rows, block_cols;     /**< source cells max-pooled into one map cell */
	uint32_t map_rows, map_cols;         /**< map cells, each at most 1024 */
	uint32_t cell_w, cell_h;             /**< pixels per map cell (small maps are enlarged) */
	uint32_t map_x, map_y;               /**< top-left pixel of the map */
	uint32_t bar_x, bar_y, bar_w, bar_h; /**< the colour scale bar */
	uint32_t width, height;              /**< the whole image */
} etc_heatmap_layout;

/**
 * Computes the layout of a rows x cols heat map. Returns ETC_ERR_USAGE when
 * rows or cols is 0 or rows * cols overflows.
 */
ETC_API int etc_plot_heatmap_layout(uint64_t rows, uint64_t cols, etc_heatmap_layout *out,
                                    etc_error *err);

/**
 * Writes `png_path` (atomically; its directory must exist): a heat map of the
 * rows x cols matrix `abs_err` (row-major; a tensor's last two dimensions,
 * the others flattened into rows) on a white background, with a colour
 * scale bar on the right. Matrices beyond 1024 cells a side are max-pooled
 * down to at most 1024 x 1024 map cells, so the worst error always shows;
 * small ones are enlarged (cells of up to 64 pixels). The colour scale is
 * linear from the smallest to the largest pooled finite value: dark purple
 * (68,1,84) through blue and green to yellow (253,231,37) at the largest,
 * i.e. a cell holding the largest error is exactly (253,231,37). A map cell
 * containing a NaN or infinite value is magenta (255,0,255). The bar's ends
 * are labelled with the largest (top) and smallest value in a built-in
 * 3x5 pixel digit font (digits . - + e only); the title and the range are
 * also stored as PNG tEXt chunks ("Title", "Description"), since no text
 * font is built in.
 */
ETC_API int etc_plot_heatmap(const char *png_path, const double *abs_err, uint64_t rows,
                             uint64_t cols, const char *title, etc_error *err);

/**
 * etc_plot_heatmap with the rows * cols values supplied by `read` in flat
 * row-major chunks (one pass). Memory: at most 8 MiB for the pooled map plus
 * a 128 KiB chunk, whatever the matrix size.
 */
ETC_API int etc_plot_heatmap_read(const char *png_path, etc_plot_read_fn read, void *ctx,
                                  uint64_t rows, uint64_t cols, const char *title, etc_error *err);

/** One queued plot: its name, title and PNG path; made once its PNG exists. */
typedef struct etc_plot_item {
	const char *name, *title, *png;
	bool made;
} etc_plot_item;

ETC_API int etc_plot_batch_create(etc_plot_batch **out, etc_error *err);
/** Frees the batch; gnuplots started ahead and never fed are ended. */
ETC_API void etc_plot_batch_free(etc_plot_batch *b);
/**
 * Optional: starts the batch's gnuplot processes now (o->gnuplot, or
 * "gnuplot" on PATH; one per core), each loading its fonts and PNG
 * terminal (some 40 ms) while the caller goes on with its analysis;
 * etc_plot_batch_run then feeds them the plots instead of starting its own.
 * They read nothing but what etc_plot_batch_run gives them and write no
 * file. A gnuplot that cannot be found or started is not an error here
 * (etc_plot_batch_run reports it as it would). Returns 0.
 */
ETC_API int etc_plot_batch_start(etc_plot_batch *b, const etc_plot_options *o, etc_error *err);
/**
 * Runs gnuplot (o->gnuplot, or "gnuplot" on PATH) on every queued plot not
 * made yet: one process per core (at most one per plot), each fed a share
 * of the plots by a thread. Without gnuplot: returns 0 and sets res->gnuplot_missing.
 * When some plots fail, the others are still made and the first failure is
 * returned (ETC_ERR_IO, with gnuplot's error line and the plot's .gp path).
 */
ETC_API int etc_plot_batch_run(etc_plot_batch *b, const etc_plot_options *o, etc_plot_result *res,
                               etc_error *err);
ETC_API size_t etc_plot_batch_count(const etc_plot_batch *b);
ETC_API const etc_plot_item *etc_plot_batch_item(const etc_plot_batch *b, size_t i);
/** A line for the index (e.g. the outputs that got no plot and why); at most 64 kept. */
ETC_API int etc_plot_batch_note(etc_plot_batch *b, const char *text, etc_error *err);
ETC_API size_t etc_plot_batch_note_count(const etc_plot_batch *b);
ETC_API const char *etc_plot_batch_note_at(const etc_plot_batch *b, size_t i);
/**
 * Writes <dir>/index.txt: one line per queued plot (<name>.png, or <name>.gp
 * when no PNG was made, a tab, its title), then "note: " and each note.
 * First the plots the previous index.txt of <dir> named (written there by
 * etcompare) that this batch did not write again are removed with their .gp
 * and .dat, so the folder holds exactly what the new index lists; no file
 * the index does not name is touched. The batch's files in <dir> and the
 * index get one modification time, and a later batch removes a stale
 * plot's file only while it still has the index's time (one the user
 * changed since is kept).
 */
ETC_API int etc_plot_batch_write_index(const etc_plot_batch *b, const char *dir, etc_error *err);

/**
 * A plot set is all or nothing: etc_plot_set_begin creates `dir` (with its
 * parents) and in it an empty temporary folder "<dir>/.etcompare-plots.XXXXXX"
 * (same file system), returned in *tmp (malloc'ed; the caller frees it). The
 * plots and their index are written there (etc_plot_options.dir = *tmp,
 * .batch = b; etc_plot_batch_write_index(b, *tmp)); the files of batch `b`
 * in that folder are written without an fsync each (it is private until the
 * commit). etc_plot_set_commit flushes their file system once (syncfs),
 * then checks that no file it would replace is one it must not
 * (etc_plot_batch_protect), renames each plot's .dat, .gp and PNG into `dir`, removes the previous
 * set's plots this one did not write again (as etc_plot_batch_write_index says), renames index.txt
 * last and removes the temporary folder; the items' png paths then name `dir`. Nothing is written
 * in `dir` before the commit, and the commit only renames and unlinks, so a full disk while the set
 * is made leaves the previous set whole. etc_plot_set_discard removes the temporary folder and
 * everything in it (a failed run: `dir` keeps its previous set).
 */
ETC_API int etc_plot_set_begin(etc_plot_batch *b, const char *dir, char **tmp, etc_error *err);
/**
 * A file the plots of `b` must never replace or remove (e.g. each input of
 * the run): its identity (device, inode) is recorded; a path that does not
 * exist is ignored. etc_plot_set_commit refuses (ETC_ERR_USAGE, nothing
 * moved, the file named) to replace such a file, a file that the folder's
 * own index.txt does not name (etcompare did not write it) or an index.txt
 * etcompare did not write; the removal of a previous set's plots skips it.
 * At most 64 per batch (ETC_ERR_LIMIT).
 */
ETC_API int etc_plot_batch_protect(etc_plot_batch *b, const char *path, etc_error *err);
/**
 * Before a run: ETC_ERR_USAGE, the file named, when `dir` holds an
 * index.txt that etcompare did not write (etc_plot_set_commit would refuse
 * to replace it); 0 otherwise, also when `dir` does not exist yet.
 */
ETC_API int etc_plot_dir_check(const char *dir, etc_error *err);
ETC_API int etc_plot_set_commit(etc_plot_batch *b, const char *tmp, const char *dir,
                                etc_error *err);
ETC_API void etc_plot_set_discard(const char *tmp);

/**
 * The layout of etc_plot_error_map's PNG for a rows x cols matrix: matrices
 * beyond 240 cells a side are max-pooled in blocks; map cells are square,
 * 1 to 64 pixels, as large as fits 720 x 560 (a side thinner than 40 pixels
 * is stretched to 40); the PNG is at least 640 x 280 with the map centred
 * in the space left of the colour bar. bar_* is where gnuplot is expected
 * to draw the colour bar. ETC_ERR_USAGE when rows or cols is 0 or
 * rows * cols overflows.
 */
ETC_API int etc_plot_error_map_layout(uint64_t rows, uint64_t cols, etc_heatmap_layout *out,
                                      etc_error *err);

/**
 * A heat map of |v| for the rows x cols values supplied by `read` (flat,
 * row-major; a tensor's last two dimensions, the others flattened into
 * rows), drawn at once with libpng, no gnuplot (its .gp, template
 * "heatmap", and .dat are written beside it: gnuplot remakes it from them;
 * with a batch the plot is queued as made): the map pooled as
 * etc_plot_error_map_layout says, each map cell the largest finite |v| of
 * its block; colours from dark purple (68,1,84) at 0 to yellow (253,231,37)
 * at the largest value; non-finite values are left out (white) and counted
 * in the title. The title is `title`, then a line "max M at row R, column
 * C"; the axes are labelled `xlabel` and `ylabel` (NULL: "column", "row"),
 * the colour bar `cblabel` (NULL: "|actual − reference|"), in a built-in
 * 5 x 7 pixel ASCII font (U+2212 as '-', other non-ASCII characters as '?';
 * the exact title is the PNG's Title text). The .dat holds the pooled map
 * only.
 */
ETC_API int etc_plot_error_map(const etc_plot_options *o, const char *name, const char *title,
                               const char *xlabel, const char *ylabel, const char *cblabel,
                               etc_plot_read_fn read, void *ctx, uint64_t rows, uint64_t cols,
                               etc_plot_result *res, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
