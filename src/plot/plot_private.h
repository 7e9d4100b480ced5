/*
 * plot_private.h - what the files of the plot layer share: one plot as a
 * job (.dat and .gp writers, its size), the text helpers for gnuplot
 * scripts and data, and the queue of scripts run by one gnuplot process.
 */
#ifndef ETC_PLOT_PRIVATE_H
#define ETC_PLOT_PRIVATE_H

#include "etcompare/plot.h"
#include "etcompare/output.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PLOT_NAME_MAX 128
#define PLOT_CHUNK    16384
#define PLOT_HEIGHT   480

/* An etc_plot_read_fn over a plain array of doubles: ctx is the array. */
int etc_plot_read_doubles_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err);

/* One gnuplot plot: <dir>/<name>.dat and .gp from template `kind`. */
typedef struct plot_job {
	const etc_plot_options *o;
	const char *dir, *name, *kind, *title;
	int width, height;
	void (*write_dat)(FILE *f, const void *ctx);
	void (*write_vars)(FILE *f, const void *ctx);
	/* set: the PNG is drawn natively into this path at once (gnuplot adds
	 * nothing), the .dat and .gp still written to remake or restyle it */
	int (*write_png)(const char *png_path, const etc_plot_options *o, const void *ctx,
	                 etc_error *err);
	const void *ctx;
} plot_job;

plot_job etc_plot_job_init_(const etc_plot_options *o, const char *name, const char *kind,
                            const char *title);

/*
 * Writes the .dat and the .gp of `j`, then queues it in o->batch, or (no
 * batch) runs gnuplot on it at once through a batch of one.
 */
int etc_plot_job_run_(const plot_job *j, etc_plot_result *res, etc_error *err);

/* The look asked for by the caller (o->style), or the defaults. */
const etc_plot_style *etc_plot_style_of_(const etc_plot_options *o);

/* Queues <dir>/<name>.gp (already written) to make <dir>/<name>.png, a
 * width x height image (its expected cost, to share the plots out among the
 * gnuplot processes; 0 x 0 when not known). */
int etc_plot_batch_add_(etc_plot_batch *b, const char *dir, const char *name, const char *title,
                        int width, int height, etc_error *err);

/* Row y (width * 3 bytes of RGB) of an image drawn natively. */
typedef void (*etc_plot_row_fn)(const void *ctx, uint8_t *row, uint32_t y);

/* Writes an 8-bit RGB PNG through etc_output (atomic), its rows from row_fn,
 * with tEXt chunks Title, Description and Software (png_write.c). */
int etc_plot_png_rows_(const etc_plot_batch *b, const char *path, uint32_t width, uint32_t height,
                       etc_plot_row_fn row_fn, const void *ctx, const char *title, const char *desc,
                       etc_error *err);

/* The heat maps' colour scale at t in [0, 1]: dark purple (68,1,84) through
 * blue and green to yellow (253,231,37), as gnuplot's palette in heatmap.gp. */
void etc_plot_scale_rgb_(double t, uint8_t *px);

/* Row y of `text` (digits . - + e; at most 10) in the built-in digit font,
 * black, top-left corner at (x0, y0); 8 px a glyph, 10 px tall. */
void etc_plot_digits_row_(uint8_t *row, uint32_t width, uint32_t x0, uint32_t y0, const char *text,
                          uint32_t y);

/* The built-in 5 x 7 font (font.c): a glyph every PLOT_GLYPH_ADV pixels
 * (times `scale`), PLOT_GLYPH_LINE pixels a line; black text. */
#define PLOT_GLYPH_ADV  6
#define PLOT_GLYPH_LINE 10
uint32_t etc_plot_text_width_(const char *text, uint32_t scale);
/* Row y of `text` with its top-left corner at (x0, y0). */
void etc_plot_text_row_(uint8_t *row, uint32_t width, uint32_t x0, uint32_t y0, const char *text,
                        uint32_t scale, uint32_t y);
/* Row y of `text` turned a quarter left (read bottom to top) in the 7
 * columns from x0, its first character ending at row y_base. */
void etc_plot_text_up_row_(uint8_t *row, uint32_t width, uint32_t x0, uint32_t y_base,
                           const char *text, uint32_t y);

/*
 * A plot's file. Inside the temporary folder of a plot set (etc_plot_set_begin
 * with this batch) it is a plain file: the folder is private until the set
 * is flushed once (syncfs) and moved in whole. Anywhere else it is an atomic
 * etc_output (temporary file, fsync, rename).
 */
typedef struct plot_out {
	etc_output *out;
	FILE *f;
	char *path; /* plain file only */
} plot_out;
int etc_plot_out_open_(plot_out *po, const etc_plot_batch *b, const char *path, etc_error *err);
int etc_plot_out_commit_(plot_out *po, etc_error *err);
void etc_plot_out_abort_(plot_out *po);

/* Is `path` inside the temporary folder of b's plot set? */
bool etc_plot_batch_in_set_(const etc_plot_batch *b, const char *path);

/* Adds a plot whose PNG was made already (drawn natively, not by gnuplot). */
int etc_plot_batch_add_made_(etc_plot_batch *b, const char *dir, const char *name,
                             const char *title, etc_error *err);

/* Text for gnuplot: a single-quoted string, a data-file string (the label,
 * then `suffix`), a float gnuplot reads as a float, "var = value" lines. */
void etc_plot_put_gp_str_(FILE *f, const char *s);
void etc_plot_put_dat_str_(FILE *f, const char *s, const char *suffix);
void etc_plot_put_num_(FILE *f, double v);
void etc_plot_var_str_(FILE *f, const char *var, const char *s);
void etc_plot_var_num_(FILE *f, const char *var, double v);
void etc_plot_var_int_(FILE *f, const char *var, long long v);

/* value_tics = '' or a list of ticks from about lo to hi labelled with SI
 * prefixes of `unit` (NULL: '') */
void etc_plot_var_si_tics_(FILE *f, const char *unit, double lo, double hi);

/* `s` with its lines longer than `max` characters broken (after a '.', '_'
 * or ' ' when there is one), never cut: the labels of every per-op plot. */
void etc_plot_wrap_label_(const char *s, size_t max, char *buf, size_t cap);

long long etc_plot_clamp_(uint64_t v, long long lo, long long hi);

/* "<dir>/<prefix><name><ext>", malloc'ed; NULL when out of memory. */
char *etc_plot_join_(const char *dir, const char *prefix, const char *name, const char *ext);

/* mkdir -p */
int etc_plot_make_dirs_(const char *dir, etc_error *err);

int etc_plot_check_name_(const char *name, etc_error *err);

#endif
