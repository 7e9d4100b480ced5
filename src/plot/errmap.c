/*
 * errmap.c - the heat map of |actual - reference|: a title with the largest
 * error and where it is, axis labels, a labelled colour bar. The matrix is
 * max-pooled here in one chunked pass (at most MAP_MAX x MAP_MAX cells are
 * written), so one bad element always shows; small maps get large square
 * cells. The map's place in the PNG is fixed by the layout the caller can
 * query (etc_plot_error_map_layout), so a cell's pixels are known.
 *
 * gnuplot adds nothing to a grid of coloured cells, so the PNG is drawn here
 * with libpng (map, frame, ticks, colour bar, title and labels in the
 * built-in font of font.c; the title is also the PNG's Title text), at once
 * and without a gnuplot process; the .dat and the .gp of the "heatmap"
 * template are written beside it all the same, and gnuplot remakes the same
 * map from them.
 */
#include "etcompare/plot.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_MAX           240 /* map cells a side */
#define AREA_W            720 /* the largest map in pixels */
#define AREA_H            560
#define CELL_MAX          64
#define SIDE_MIN          40 /* the thinnest map side in pixels */
#define MARGIN_LEFT       100
#define MARGIN_RIGHT      160 /* colour bar, its ticks and its label */
#define MARGIN_TOP        84  /* three title lines */
#define MARGIN_BOTTOM     60
#define WIDTH_MIN         640
#define MARGIN_RIGHT_FLAT 40
#define BAR_BELOW_UNDER   160 /* maps less tall than this get the bar below */
#define BAR_BELOW_SPACE   64

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

int etc_plot_error_map_layout(uint64_t rows, uint64_t cols, etc_heatmap_layout *out, etc_error *err)
{
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_error_map_layout: out is NULL");
	if (rows == 0 || cols == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "heat map of %llu x %llu: nothing to draw",
		                (unsigned long long)rows, (unsigned long long)cols);
	if (rows > UINT64_MAX / cols)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "heat map of %llu x %llu: too large",
		                (unsigned long long)rows, (unsigned long long)cols);
	etc_heatmap_layout l = {0};
	l.block_rows = ceil_div(rows, MAP_MAX);
	l.block_cols = ceil_div(cols, MAP_MAX);
	l.map_rows = (uint32_t)ceil_div(rows, l.block_rows);
	l.map_cols = (uint32_t)ceil_div(cols, l.block_cols);
	uint32_t cw = AREA_W / l.map_cols, ch = AREA_H / l.map_rows;
	uint32_t cell = cw < ch ? cw : ch;
	cell = cell > CELL_MAX ? CELL_MAX : cell < 1 ? 1 : cell;
	l.cell_w = l.cell_h = cell;
	/* A long thin strip keeps a readable thickness. */
	if (l.map_rows * l.cell_h < SIDE_MIN)
		l.cell_h = (SIDE_MIN + l.map_rows - 1) / l.map_rows;
	if (l.map_cols * l.cell_w < SIDE_MIN)
		l.cell_w = (SIDE_MIN + l.map_cols - 1) / l.map_cols;
	uint32_t mw = l.map_cols * l.cell_w, mh = l.map_rows * l.cell_h;
	/* A flat map gets its colour bar below it, a tall one on its right. */
	bool below = mh < BAR_BELOW_UNDER;
	uint32_t right = below ? MARGIN_RIGHT_FLAT : MARGIN_RIGHT;
	uint32_t bottom = below ? MARGIN_BOTTOM + BAR_BELOW_SPACE : MARGIN_BOTTOM;
	uint32_t need_w = MARGIN_LEFT + mw + right, need_h = MARGIN_TOP + mh + bottom;
	l.width = need_w < WIDTH_MIN ? WIDTH_MIN : need_w;
	l.height = need_h;
	l.map_x = MARGIN_LEFT + (l.width - need_w) / 2;
	l.map_y = MARGIN_TOP;
	if (below) {
		l.bar_w = mw < 240 ? 240 : mw > 480 ? 480 : mw;
		l.bar_h = 14;
		l.bar_x = l.map_x + mw / 2 > l.bar_w / 2 ? l.map_x + mw / 2 - l.bar_w / 2 : 10;
		l.bar_y = l.map_y + mh + MARGIN_BOTTOM;
	} else {
		l.bar_x = l.map_x + mw + 16;
		l.bar_y = l.map_y;
		l.bar_w = 18;
		l.bar_h = mh;
	}
	*out = l;
	return 0;
}

typedef struct errmap {
	etc_heatmap_layout l;
	double *cells; /* map_rows x map_cols, NaN: no finite value */
	double max;
	double scale_max; /* the shared top of the colour scale, or 0 */
	uint64_t max_row, max_col, nonfinite;
	const char *xlabel, *ylabel, *cblabel;
	const char *title; /* the full title, for the PNG's Title text */
} errmap;

static int pool(errmap *m, etc_plot_read_fn read, void *ctx, uint64_t rows, uint64_t cols,
                etc_error *err)
{
	double *buf = malloc(PLOT_CHUNK * sizeof *buf);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t nc = (size_t)m->l.map_rows * m->l.map_cols;
	for (size_t i = 0; i < nc; i++)
		m->cells[i] = NAN;
	m->max = -1;
	uint64_t total = rows * cols;
	for (uint64_t first = 0; first < total;) {
		size_t k = total - first < PLOT_CHUNK ? (size_t)(total - first) : PLOT_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			uint64_t at = first + i, r = at / cols, c = at % cols;
			double v = fabs(buf[i]);
			if (!isfinite(v)) {
				m->nonfinite++;
				continue;
			}
			double *cell = &m->cells[(size_t)(r / m->l.block_rows) * m->l.map_cols +
			                         (size_t)(c / m->l.block_cols)];
			if (isnan(*cell) || v > *cell)
				*cell = v;
			if (v > m->max) {
				m->max = v;
				m->max_row = r;
				m->max_col = c;
			}
		}
		first += k;
	}
	free(buf);
	return 0;
}

static void map_dat(FILE *f, const void *ctx)
{
	const errmap *m = ctx;
	fputs("# the max-pooled map: one line per map row, one value per map column\n", f);
	for (uint32_t r = 0; r < m->l.map_rows; r++) {
		for (uint32_t c = 0; c < m->l.map_cols; c++) {
			double v = m->cells[(size_t)r * m->l.map_cols + c];
			if (c)
				fputc(' ', f);
			if (isnan(v))
				fputs("NaN", f);
			else
				fprintf(f, "%.9g", v);
		}
		fputc('\n', f);
	}
}

static double tic_step(uint64_t n)
{
	double raw = (double)n / 8, step = 1;
	while (step < raw) {
		if (step * 2 >= raw)
			return step * 2;
		if (step * 5 >= raw)
			return step * 5;
		step *= 10;
	}
	return step;
}

static void map_vars(FILE *f, const void *ctx)
{
	const errmap *m = ctx;
	const etc_heatmap_layout *l = &m->l;
	double w = l->width, h = l->height;
	etc_plot_var_str_(f, "plot_xlabel", m->xlabel);
	etc_plot_var_str_(f, "plot_ylabel", m->ylabel);
	etc_plot_var_str_(f, "plot_cblabel", m->cblabel);
	etc_plot_var_int_(f, "map_rows", l->map_rows);
	etc_plot_var_int_(f, "map_cols", l->map_cols);
	etc_plot_var_int_(f, "block_rows", (long long)l->block_rows);
	etc_plot_var_int_(f, "block_cols", (long long)l->block_cols);
	etc_plot_var_num_(f, "map_left", l->map_x / w);
	etc_plot_var_num_(f, "map_right", (l->map_x + l->map_cols * l->cell_w) / w);
	etc_plot_var_num_(f, "map_top", 1 - l->map_y / h);
	etc_plot_var_num_(f, "map_bottom", 1 - (l->map_y + l->map_rows * l->cell_h) / h);
	etc_plot_var_int_(f, "cb_below", l->bar_h < l->bar_w);
	etc_plot_var_num_(f, "cb_x", l->bar_x / w);
	etc_plot_var_num_(f, "cb_y", 1 - (l->bar_y + l->bar_h) / h);
	etc_plot_var_num_(f, "cb_w", l->bar_w / w);
	etc_plot_var_num_(f, "cb_h", l->bar_h / h);
	double top = m->max > 0 ? m->max : 1.0;
	if (m->scale_max > top) /* one scale for every map of an output */
		top = m->scale_max;
	etc_plot_var_num_(f, "cb_max", top);
	etc_plot_var_num_(f, "xtic_step", tic_step(l->map_cols * l->block_cols));
	etc_plot_var_num_(f, "ytic_step", tic_step(l->map_rows * l->block_rows));
}

/* ---- the PNG, drawn natively on the same layout ---- */

#define TICK_LEN 4
#define TEXT_H   7 /* the font's glyph height */
#define TEXT_GAP 4

typedef struct errmap_png {
	const errmap *m;
	double top;            /* the value drawn yellow */
	uint32_t xstep, ystep; /* tick spacing in map cells (0: none) */
	char lo[24], hi[24];
	char title[3][200]; /* its lines */
} errmap_png;

static void px_set(uint8_t *row, uint32_t w, uint32_t x, const uint8_t *c)
{
	if (x < w)
		memcpy(row + 3 * (size_t)x, c, 3);
}

/* Tick labels: the source index of map cell k along an axis. */
static void index_label(char *buf, size_t cap, uint64_t v)
{
	snprintf(buf, cap, "%llu", (unsigned long long)v);
}

static uint32_t centred(uint32_t mid, const char *text)
{
	uint32_t w = etc_plot_text_width_(text, 1);
	return mid > w / 2 ? mid - w / 2 : 0;
}

static void errmap_text(const errmap_png *p, uint8_t *row, uint32_t y)
{
	const errmap *m = p->m;
	const etc_heatmap_layout *l = &m->l;
	uint32_t W = l->width;
	uint32_t mw = l->map_cols * l->cell_w, mh = l->map_rows * l->cell_h;
	uint32_t x0 = l->map_x, y0 = l->map_y;
	/* the title, centred over the whole image */
	for (uint32_t k = 0; k < 3 && p->title[k][0]; k++)
		etc_plot_text_row_(row, W, centred(W / 2, p->title[k]), 16 + k * PLOT_GLYPH_LINE,
		                   p->title[k], 1, y);
	/* row indices left of the map, column indices and the x label below */
	for (uint32_t r = 0; p->ystep && r < l->map_rows; r += p->ystep) {
		char lab[24];
		index_label(lab, sizeof lab, (uint64_t)r * l->block_rows);
		uint32_t len = etc_plot_text_width_(lab, 1);
		uint32_t cy = y0 + r * l->cell_h + l->cell_h / 2;
		if (x0 > TICK_LEN + TEXT_GAP + len)
			etc_plot_text_row_(row, W, x0 - 1 - TICK_LEN - TEXT_GAP - len,
			                   cy - TEXT_H / 2, lab, 1, y);
	}
	uint32_t ty = y0 + mh + TICK_LEN + TEXT_GAP;
	for (uint32_t c = 0; p->xstep && c < l->map_cols; c += p->xstep) {
		char lab[24];
		index_label(lab, sizeof lab, (uint64_t)c * l->block_cols);
		etc_plot_text_row_(row, W, centred(x0 + c * l->cell_w + l->cell_w / 2, lab), ty,
		                   lab, 1, y);
	}
	etc_plot_text_row_(row, W, centred(x0 + mw / 2, m->xlabel), ty + TEXT_H + 8, m->xlabel, 1,
	                   y);
	/* the y label up the left side, centred on the map */
	uint32_t yl = etc_plot_text_width_(m->ylabel, 1);
	etc_plot_text_up_row_(row, W, x0 > 60 ? x0 - 60 : 2, y0 + mh / 2 + yl / 2, m->ylabel, y);
	/* the colour bar's end values and its label */
	uint32_t bx = l->bar_x, by = l->bar_y, bw = l->bar_w, bh = l->bar_h;
	if (bh < bw) {
		uint32_t vy = by + bh + TICK_LEN + TEXT_GAP;
		etc_plot_text_row_(row, W, centred(bx, p->lo), vy, p->lo, 1, y);
		etc_plot_text_row_(row, W, centred(bx + bw - 1, p->hi), vy, p->hi, 1, y);
		etc_plot_text_row_(row, W, centred(bx + bw / 2, m->cblabel), vy + TEXT_H + 6,
		                   m->cblabel, 1, y);
	} else {
		uint32_t tx = bx + bw + TICK_LEN + TEXT_GAP;
		etc_plot_text_row_(row, W, tx, by - TEXT_H / 2, p->hi, 1, y);
		etc_plot_text_row_(row, W, tx, by + bh - 1 - TEXT_H / 2, p->lo, 1, y);
		uint32_t lw = etc_plot_text_width_(p->hi, 1);
		uint32_t cl = etc_plot_text_width_(m->cblabel, 1);
		etc_plot_text_up_row_(row, W, tx + lw + 10, by + bh / 2 + cl / 2, m->cblabel, y);
	}
}

static void errmap_row(const void *ctx, uint8_t *row, uint32_t y)
{
	const errmap_png *p = ctx;
	const errmap *m = p->m;
	const etc_heatmap_layout *l = &m->l;
	static const uint8_t black[3] = {0, 0, 0};
	uint32_t W = l->width;
	memset(row, 255, (size_t)W * 3);
	uint32_t mw = l->map_cols * l->cell_w, mh = l->map_rows * l->cell_h;
	uint32_t x0 = l->map_x, y0 = l->map_y;
	/* the map and its frame */
	if (y + 1 == y0 || y == y0 + mh) {
		for (uint32_t x = x0 - 1; x <= x0 + mw; x++)
			px_set(row, W, x, black);
	} else if (y >= y0 && y < y0 + mh) {
		px_set(row, W, x0 - 1, black);
		px_set(row, W, x0 + mw, black);
		const double *cells = m->cells + (size_t)((y - y0) / l->cell_h) * l->map_cols;
		for (uint32_t c = 0; c < l->map_cols; c++) {
			uint8_t px[3] = {255, 255, 255}; /* no finite value: left out */
			if (!isnan(cells[c]))
				etc_plot_scale_rgb_(cells[c] / p->top, px);
			for (uint32_t s = 0; s < l->cell_w; s++)
				px_set(row, W, x0 + c * l->cell_w + s, px);
		}
		/* row ticks on the left, at the middle of their cell */
		uint32_t r = (y - y0) / l->cell_h, in = (y - y0) % l->cell_h;
		if (p->ystep && r % p->ystep == 0 && in == l->cell_h / 2)
			for (uint32_t t = 1; t <= TICK_LEN; t++)
				px_set(row, W, x0 - 1 - t, black);
	}
	/* column ticks below the map */
	if (y > y0 + mh && y <= y0 + mh + TICK_LEN)
		for (uint32_t c = 0; p->xstep && c < l->map_cols; c += p->xstep)
			px_set(row, W, x0 + c * l->cell_w + l->cell_w / 2, black);
	/* the colour bar: 0 to top, left to right below the map or bottom to top
	 * on its right, with its frame and end ticks */
	bool below = l->bar_h < l->bar_w;
	uint32_t bx = l->bar_x, by = l->bar_y, bw = l->bar_w, bh = l->bar_h;
	if (y + 1 == by || y == by + bh) {
		for (uint32_t x = bx - 1; x <= bx + bw; x++)
			px_set(row, W, x, black);
	} else if (y >= by && y < by + bh) {
		px_set(row, W, bx - 1, black);
		px_set(row, W, bx + bw, black);
		for (uint32_t x = 0; x < bw; x++) {
			uint8_t px[3];
			double t = below ? (bw > 1 ? (double)x / (bw - 1) : 1)
			                 : (bh > 1 ? (double)(by + bh - 1 - y) / (bh - 1) : 1);
			etc_plot_scale_rgb_(t, px);
			px_set(row, W, bx + x, px);
		}
		if (!below && (y == by || y == by + bh - 1))
			for (uint32_t t = 1; t <= TICK_LEN; t++)
				px_set(row, W, bx + bw + t, black);
	}
	if (below && y > by + bh && y <= by + bh + TICK_LEN) {
		px_set(row, W, bx, black);
		px_set(row, W, bx + bw - 1, black);
	}
	errmap_text(p, row, y);
}

/* Every `step` map cells so that labels of `chars` characters do not touch. */
static uint32_t tick_every(double step_src, uint64_t block, uint32_t cell_px, uint32_t chars)
{
	uint64_t k = (uint64_t)ceil(step_src / (double)block);
	k = k < 1 ? 1 : k;
	while (k * cell_px < (uint64_t)chars * PLOT_GLYPH_ADV + 6 && k < UINT32_MAX / 2)
		k *= 2;
	return (uint32_t)k;
}

static int errmap_write_png(const char *path, const etc_plot_options *o, const void *ctx,
                            etc_error *err)
{
	const errmap *m = ctx;
	const etc_heatmap_layout *l = &m->l;
	errmap_png p = {.m = m, .top = m->max > 0 ? m->max : 1.0};
	if (m->scale_max > p.top)
		p.top = m->scale_max;
	snprintf(p.lo, sizeof p.lo, "0");
	snprintf(p.hi, sizeof p.hi, "%.4g", p.top);
	/* the title's lines (at most three drawn) */
	const char *t = m->title ? m->title : "";
	for (size_t k = 0; k < 3 && *t; k++) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) : strlen(t);
		snprintf(p.title[k], sizeof p.title[k], "%.*s", (int)n, t);
		t = nl ? nl + 1 : t + n;
	}
	char cols_max[24];
	index_label(cols_max, sizeof cols_max, (uint64_t)l->map_cols * l->block_cols);
	p.xstep = tick_every(tic_step(l->map_cols * l->block_cols), l->block_cols, l->cell_w,
	                     (uint32_t)strlen(cols_max));
	p.ystep = tick_every(tic_step(l->map_rows * l->block_rows), l->block_rows, l->cell_h, 1);
	while (p.ystep * l->cell_h < TEXT_H + 3)
		p.ystep *= 2;
	char desc[700];
	snprintf(desc, sizeof desc,
	         "x: %s, y: %s; colour: %s, 0 (dark purple) to %.17g (yellow); map of %u x %u "
	         "cells, each the largest finite value of %llu x %llu elements; non-finite cells "
	         "white",
	         m->xlabel, m->ylabel, m->cblabel, p.top, l->map_rows, l->map_cols,
	         (unsigned long long)l->block_rows, (unsigned long long)l->block_cols);
	return etc_plot_png_rows_(o ? o->batch : NULL, path, l->width, l->height, errmap_row, &p,
	                          m->title, desc, err);
}

int etc_plot_error_map(const etc_plot_options *o, const char *name, const char *title,
                       const char *xlabel, const char *ylabel, const char *cblabel,
                       etc_plot_read_fn read, void *ctx, uint64_t rows, uint64_t cols,
                       etc_plot_result *res, etc_error *err)
{
	ETC_TRY(etc_plot_check_name_(name, err));
	if (!read)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_error_map: no values");
	errmap m = {0};
	ETC_TRY(etc_plot_error_map_layout(rows, cols, &m.l, err));
	m.xlabel = xlabel ? xlabel : "column";
	m.ylabel = ylabel ? ylabel : "row";
	m.cblabel = cblabel ? cblabel : "|actual \xe2\x88\x92 reference|";
	double sm = etc_plot_style_of_(o)->scale_max;
	m.scale_max = sm > 0 && isfinite(sm) ? sm : 0;
	m.cells = malloc((size_t)m.l.map_rows * m.l.map_cols * sizeof *m.cells);
	if (!m.cells)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = pool(&m, read, ctx, rows, cols, err);
	char full[512];
	if (rc == 0) {
		int k = snprintf(full, sizeof full, "%s\n", title ? title : "");
		if (k < 0 || (size_t)k >= sizeof full)
			k = (int)strlen(full);
		size_t at = (size_t)k;
		if (m.max > 0)
			snprintf(full + at, sizeof full - at, "max %.4g at row %llu, column %llu",
			         m.max, (unsigned long long)m.max_row,
			         (unsigned long long)m.max_col);
		else if (m.max == 0)
			snprintf(full + at, sizeof full - at, "all zero");
		else
			snprintf(full + at, sizeof full - at, "no finite value");
		if (m.nonfinite) {
			size_t n = strlen(full);
			snprintf(full + n, sizeof full - n, "; %llu non-finite (white)",
			         (unsigned long long)m.nonfinite);
		}
		if (m.l.block_rows > 1 || m.l.block_cols > 1) {
			size_t n = strlen(full);
			snprintf(full + n, sizeof full - n, "; max of %llu x %llu blocks",
			         (unsigned long long)m.l.block_rows,
			         (unsigned long long)m.l.block_cols);
		}
		plot_job j = etc_plot_job_init_(o, name, "heatmap", full);
		j.width = (int)m.l.width;
		j.height = (int)m.l.height;
		j.write_dat = map_dat;
		j.write_vars = map_vars;
		j.write_png = errmap_write_png;
		m.title = full;
		j.ctx = &m;
		rc = etc_plot_job_run_(&j, res, err);
	}
	free(m.cells);
	return rc;
}
