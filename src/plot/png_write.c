/*
 * png_write.c - heat maps of |actual - reference| written directly with
 * libpng: one streaming pass max-pools the matrix into at most 1024 x 1024
 * map cells, then the image (map, colour scale bar, min/max labels in a
 * built-in 3x5 digit font) is rendered row by row. Layout and colours are
 * documented in include/etcompare/plot.h.
 */
#include "etcompare/plot.h"
#include "etcompare/output.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#define HM_MAX_CELLS   1024
#define HM_MARGIN      8
#define HM_GAP         12
#define HM_BAR_W       16
#define HM_BAR_MIN_H   120
#define HM_MIN_SIDE    32
#define HM_TARGET      512
#define HM_MAX_CELL_PX 64
#define HM_FONT_SCALE  2
#define HM_GLYPH_ADV   (4 * HM_FONT_SCALE)
#define HM_GLYPH_H     (5 * HM_FONT_SCALE)
#define HM_LABEL_CHARS 10
#define HM_TICK        3
#define HM_LABEL_GAP   4
#define HM_CHUNK       16384

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

int etc_plot_heatmap_layout(uint64_t rows, uint64_t cols, etc_heatmap_layout *out, etc_error *err)
{
	uint64_t total;
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_heatmap_layout: out is NULL");
	if (rows == 0 || cols == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "heat map of an empty matrix (%llu x %llu)",
		                (unsigned long long)rows, (unsigned long long)cols);
	if (!etc_mul_u64(rows, cols, &total))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "heat map of %llu x %llu values overflows",
		                (unsigned long long)rows, (unsigned long long)cols);
	etc_heatmap_layout l = {0};
	l.block_rows = ceil_div(rows, HM_MAX_CELLS);
	l.block_cols = ceil_div(cols, HM_MAX_CELLS);
	l.map_rows = (uint32_t)ceil_div(rows, l.block_rows);
	l.map_cols = (uint32_t)ceil_div(cols, l.block_cols);
	uint32_t big = l.map_rows > l.map_cols ? l.map_rows : l.map_cols;
	uint32_t s = HM_TARGET / big;
	s = s < 1 ? 1 : s > HM_MAX_CELL_PX ? HM_MAX_CELL_PX : s;
	l.cell_w = l.cell_h = s;
	/* A thin matrix (one row, say) still gets a visible strip. */
	if (l.map_rows * l.cell_h < HM_MIN_SIDE)
		l.cell_h = (uint32_t)ceil_div(HM_MIN_SIDE, l.map_rows);
	if (l.map_cols * l.cell_w < HM_MIN_SIDE)
		l.cell_w = (uint32_t)ceil_div(HM_MIN_SIDE, l.map_cols);
	uint32_t map_w = l.map_cols * l.cell_w, map_h = l.map_rows * l.cell_h;
	l.map_x = HM_MARGIN;
	l.map_y = HM_MARGIN;
	l.bar_x = l.map_x + map_w + HM_GAP;
	l.bar_y = HM_MARGIN;
	l.bar_w = HM_BAR_W;
	l.bar_h = map_h > HM_BAR_MIN_H ? map_h : HM_BAR_MIN_H;
	l.width = l.bar_x + l.bar_w + 1 + HM_TICK + HM_LABEL_GAP + HM_LABEL_CHARS * HM_GLYPH_ADV +
	          HM_MARGIN;
	l.height = HM_MARGIN + (map_h > l.bar_h ? map_h : l.bar_h) + HM_MARGIN;
	*out = l;
	return 0;
}

/* ---- colours and the digit font ---- */

/* The colour scale: five points, linear between them (viridis-like). */
static const uint8_t scale_pts[5][3] = {
    {68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37},
};

void etc_plot_scale_rgb_(double t, uint8_t *px)
{
	if (!(t > 0))
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * 4;
	int i = (int)x;
	if (i > 3)
		i = 3;
	double f = x - i;
	for (int k = 0; k < 3; k++) {
		double a = scale_pts[i][k], b = scale_pts[i + 1][k];
		px[k] = (uint8_t)lround(a + (b - a) * f);
	}
}

/* 3x5 glyphs, one row per byte, bit 2 = left column. */
static const struct {
	char c;
	uint8_t rows[5];
} glyphs[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
    {'+', {0, 2, 7, 2, 0}}, {'e', {2, 5, 7, 4, 3}},
};

static const uint8_t *glyph(char c)
{
	for (size_t i = 0; i < sizeof glyphs / sizeof glyphs[0]; i++)
		if (glyphs[i].c == c)
			return glyphs[i].rows;
	return NULL;
}

static void put_px(uint8_t *row, uint32_t width, uint32_t x, uint8_t r, uint8_t g, uint8_t b)
{
	if (x < width) {
		row[3 * x] = r;
		row[3 * x + 1] = g;
		row[3 * x + 2] = b;
	}
}

void etc_plot_digits_row_(uint8_t *row, uint32_t width, uint32_t x0, uint32_t y0, const char *text,
                          uint32_t y)
{
	if (y < y0 || y >= y0 + HM_GLYPH_H)
		return;
	uint32_t gy = (y - y0) / HM_FONT_SCALE;
	for (uint32_t i = 0; text[i] && i < HM_LABEL_CHARS; i++) {
		const uint8_t *g = glyph(text[i]);
		if (!g)
			continue;
		for (uint32_t bit = 0; bit < 3; bit++) {
			if (!(g[gy] & (4u >> bit)))
				continue;
			for (uint32_t s = 0; s < HM_FONT_SCALE; s++)
				put_px(row, width, x0 + i * HM_GLYPH_ADV + bit * HM_FONT_SCALE + s,
				       0, 0, 0);
		}
	}
}

/* ---- pooling ---- */

typedef struct heatmap {
	etc_heatmap_layout l;
	double *grid; /* map_rows x map_cols pooled maxima; NaN = non-finite */
	bool has_finite;
	double vmin, vmax;
	uint64_t nonfinite_cells;
	char min_label[24], max_label[24];
} heatmap;

static int pool(heatmap *h, etc_plot_read_fn read, void *ctx, uint64_t rows, uint64_t cols,
                etc_error *err)
{
	const etc_heatmap_layout *l = &h->l;
	size_t cells = (size_t)l->map_rows * l->map_cols;
	h->grid = malloc(cells * sizeof *h->grid);
	double *buf = malloc(HM_CHUNK * sizeof *buf);
	if (!h->grid || !buf) {
		free(buf);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < cells; i++)
		h->grid[i] = -INFINITY;
	uint64_t total = rows * cols; /* checked by the layout */
	uint64_t c = 0, cin = 0, rin = 0;
	uint32_t orow = 0, ocol = 0;
	for (uint64_t first = 0; first < total;) {
		size_t k = total - first < HM_CHUNK ? (size_t)(total - first) : HM_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			double v = buf[i];
			double *g = &h->grid[(size_t)orow * l->map_cols + ocol];
			if (!isfinite(v))
				*g = NAN;
			else if (v > *g)
				*g = v;
			if (++cin == l->block_cols) {
				cin = 0;
				ocol++;
			}
			if (++c == cols) {
				c = cin = 0;
				ocol = 0;
				if (++rin == l->block_rows) {
					rin = 0;
					orow++;
				}
			}
		}
		first += k;
	}
	free(buf);
	h->vmin = INFINITY;
	h->vmax = -INFINITY;
	for (size_t i = 0; i < cells; i++) {
		double v = h->grid[i];
		if (isnan(v)) {
			h->nonfinite_cells++;
			continue;
		}
		h->has_finite = true;
		h->vmin = v < h->vmin ? v : h->vmin;
		h->vmax = v > h->vmax ? v : h->vmax;
	}
	if (h->has_finite) {
		snprintf(h->min_label, sizeof h->min_label, "%.3g", h->vmin);
		snprintf(h->max_label, sizeof h->max_label, "%.3g", h->vmax);
	}
	return 0;
}

/* 0 at vmin, exactly 1 at vmax; halved to stay finite over any range. */
static double scale_t(const heatmap *h, double v)
{
	double span = h->vmax / 2 - h->vmin / 2;
	return span > 0 ? (v / 2 - h->vmin / 2) / span : 0;
}

static void render_row(const heatmap *h, uint8_t *row, uint32_t y)
{
	const etc_heatmap_layout *l = &h->l;
	uint32_t W = l->width;
	memset(row, 255, (size_t)W * 3);
	uint32_t map_w = l->map_cols * l->cell_w, map_h = l->map_rows * l->cell_h;
	/* The map and its 1-pixel black frame. */
	if (y + 1 >= l->map_y && y <= l->map_y + map_h) {
		if (y + 1 == l->map_y || y == l->map_y + map_h) {
			for (uint32_t x = l->map_x - 1; x <= l->map_x + map_w; x++)
				put_px(row, W, x, 0, 0, 0);
		} else {
			put_px(row, W, l->map_x - 1, 0, 0, 0);
			put_px(row, W, l->map_x + map_w, 0, 0, 0);
			const double *g =
			    h->grid + (size_t)((y - l->map_y) / l->cell_h) * l->map_cols;
			for (uint32_t gc = 0; gc < l->map_cols; gc++) {
				uint8_t px[3] = {255, 0, 255};
				if (!isnan(g[gc]))
					etc_plot_scale_rgb_(scale_t(h, g[gc]), px);
				uint8_t *p = row + 3 * (size_t)(l->map_x + gc * l->cell_w);
				for (uint32_t s = 0; s < l->cell_w; s++, p += 3)
					memcpy(p, px, 3);
			}
		}
	}
	/* The colour bar, its frame, end ticks and labels. */
	if (y + 1 >= l->bar_y && y <= l->bar_y + l->bar_h) {
		if (y + 1 == l->bar_y || y == l->bar_y + l->bar_h) {
			for (uint32_t x = l->bar_x - 1; x <= l->bar_x + l->bar_w; x++)
				put_px(row, W, x, 0, 0, 0);
		} else {
			put_px(row, W, l->bar_x - 1, 0, 0, 0);
			put_px(row, W, l->bar_x + l->bar_w, 0, 0, 0);
			uint32_t from_bottom = l->bar_y + l->bar_h - 1 - y;
			uint8_t px[3] = {192, 192, 192}; /* no finite value: no scale */
			if (h->has_finite)
				etc_plot_scale_rgb_(
				    l->bar_h > 1 ? (double)from_bottom / (l->bar_h - 1) : 1, px);
			for (uint32_t x = 0; x < l->bar_w; x++)
				put_px(row, W, l->bar_x + x, px[0], px[1], px[2]);
			if (h->has_finite && (y == l->bar_y || from_bottom == 0))
				for (uint32_t t = 1; t <= HM_TICK; t++)
					put_px(row, W, l->bar_x + l->bar_w + t, 0, 0, 0);
		}
	}
	if (h->has_finite) {
		/* each label centred on its tick, clear of it (the margin above the
		 * bar and below it holds the half glyph that sticks out) */
		uint32_t tx = l->bar_x + l->bar_w + 1 + HM_TICK + HM_LABEL_GAP;
		etc_plot_digits_row_(row, W, tx, l->bar_y - HM_GLYPH_H / 2, h->max_label, y);
		etc_plot_digits_row_(row, W, tx, l->bar_y + l->bar_h - 1 - HM_GLYPH_H / 2,
		                     h->min_label, y);
	}
}

/* ---- libpng ---- */

typedef struct png_ctx {
	char msg[256];
} png_ctx;

static void png_error_cb(png_structp png, png_const_charp msg)
{
	png_ctx *c = png_get_error_ptr(png);
	etc_strlcpy(c->msg, msg ? msg : "libpng error", sizeof c->msg);
	png_longjmp(png, 1);
}

static void png_warning_cb(png_structp png, png_const_charp msg)
{
	(void)png; /* the library never prints */
	(void)msg;
}

int etc_plot_png_rows_(const etc_plot_batch *b, const char *path, uint32_t width, uint32_t height,
                       etc_plot_row_fn row_fn, const void *ctx, const char *title, const char *desc,
                       etc_error *err)
{
	plot_out out;
	ETC_TRY(etc_plot_out_open_(&out, b, path, err));
	png_ctx pc = {{0}};
	uint8_t *row = malloc((size_t)width * 3);
	png_structp png =
	    png_create_write_struct(PNG_LIBPNG_VER_STRING, &pc, png_error_cb, png_warning_cb);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	if (!row || !png || !info) {
		png_destroy_write_struct(&png, &info);
		free(row);
		etc_plot_out_abort_(&out);
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	}
	char software[64];
	snprintf(software, sizeof software, "etcompare %s", ETC_VERSION_STRING);
	png_text text[3];
	memset(text, 0, sizeof text);
	text[0].compression = PNG_ITXT_COMPRESSION_NONE; /* UTF-8 */
	text[0].key = "Title";
	text[0].text = (char *)(title ? title : "");
	text[1].compression = PNG_TEXT_COMPRESSION_NONE;
	text[1].key = "Description";
	text[1].text = (char *)(desc ? desc : "");
	text[2].compression = PNG_TEXT_COMPRESSION_NONE;
	text[2].key = "Software";
	text[2].text = software;
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		free(row);
		etc_plot_out_abort_(&out);
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot write PNG: %s", pc.msg);
	}
	png_init_io(png, out.f);
	png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
	             PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_set_text(png, info, text, 3);
	/* the images drawn here are blocks of one colour with some text: the
	 * Paeth filter and run-length deflate take a third of the time of
	 * libpng's defaults (every filter tried on every row, then zlib level
	 * 6), for files some 1.5 times as large (a heat map of the example:
	 * 5.2 KB against 3.5) */
	png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_PAETH);
	png_set_compression_strategy(png, Z_RLE);
	png_write_info(png, info);
	for (uint32_t y = 0; y < height; y++) {
		row_fn(ctx, row, y);
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	return etc_plot_out_commit_(&out, err);
}

static void heatmap_row(const void *ctx, uint8_t *row, uint32_t y)
{
	render_row(ctx, row, y);
}

static int write_png(const char *path, const heatmap *h, const char *title, uint64_t rows,
                     uint64_t cols, etc_error *err)
{
	char desc[512];
	snprintf(desc, sizeof desc,
	         "|actual - reference| of %llu x %llu values, max-pooled in blocks of %llu x %llu "
	         "into %u x %u cells; colour scale %.17g (dark purple) to %.17g (yellow); %llu "
	         "non-finite cells (magenta)",
	         (unsigned long long)rows, (unsigned long long)cols,
	         (unsigned long long)h->l.block_rows, (unsigned long long)h->l.block_cols,
	         h->l.map_rows, h->l.map_cols, h->has_finite ? h->vmin : NAN,
	         h->has_finite ? h->vmax : NAN, (unsigned long long)h->nonfinite_cells);
	return etc_plot_png_rows_(NULL, path, h->l.width, h->l.height, heatmap_row, h, title, desc,
	                          err);
}

int etc_plot_heatmap_read(const char *png_path, etc_plot_read_fn read, void *ctx, uint64_t rows,
                          uint64_t cols, const char *title, etc_error *err)
{
	if (!png_path || !*png_path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_heatmap: empty path");
	if (!read)
		return etc_fail(err, ETC_ERR_USAGE, png_path, -1, "etc_plot_heatmap: no values");
	heatmap h = {0};
	ETC_TRY(etc_plot_heatmap_layout(rows, cols, &h.l, err));
	int rc = pool(&h, read, ctx, rows, cols, err);
	if (rc == 0)
		rc = write_png(png_path, &h, title, rows, cols, err);
	free(h.grid);
	return rc;
}

int etc_plot_heatmap(const char *png_path, const double *abs_err, uint64_t rows, uint64_t cols,
                     const char *title, etc_error *err)
{
	if (!abs_err)
		return etc_fail(err, ETC_ERR_USAGE, png_path, -1,
		                "etc_plot_heatmap: abs_err is NULL");
	return etc_plot_heatmap_read(png_path, etc_plot_read_doubles_, (void *)abs_err, rows, cols,
	                             title, err);
}
