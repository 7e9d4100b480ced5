/*
 * report_grid.c - a small table of text and number cells, rendered as a
 * box-drawing grid or as TSV, for the summaries that have no upstream look
 * to reproduce (profiling summaries, performance diff). The Inspector's own
 * table keeps tabulate's exact rules in report_table.c.
 */
#include "internal.h"
#include "report_private.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

enum { GRID_TEXT, GRID_NUM };

struct etc_grid_cell {
	int kind;
	double v;
	size_t at, len; /* text: bytes in g->text */
};

void etc_grid_init_(etc_grid *g, size_t ncols, const char *const *headers, const bool *right)
{
	memset(g, 0, sizeof *g);
	g->ncols = ncols;
	g->headers = headers;
	g->right = right;
}

void etc_grid_free_(etc_grid *g)
{
	free(g->cells);
	etc_sbuf_free(&g->text);
	memset(g, 0, sizeof *g);
}

static struct etc_grid_cell *next_cell(etc_grid *g)
{
	if (g->ncells == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct etc_grid_cell *c = realloc(g->cells, cap * sizeof *c);
		if (!c) {
			g->failed = true;
			return NULL;
		}
		g->cells = c;
		g->cap = cap;
	}
	return &g->cells[g->ncells++];
}

void etc_grid_text_(etc_grid *g, const char *s)
{
	struct etc_grid_cell *c = next_cell(g);
	if (!c)
		return;
	c->kind = GRID_TEXT;
	c->at = g->text.len;
	/* Control characters would break the grid and the TSV: shown escaped,
	 * as the Inspector's table does. */
	for (const char *p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch == 0x7f)
			etc_sbuf_printf(&g->text, "\\x%02x", ch);
		else
			etc_sbuf_put(&g->text, p, 1);
	}
	c->len = g->text.len - c->at;
	if (g->text.failed)
		g->failed = true;
}

void etc_grid_textf_(etc_grid *g, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	etc_grid_text_(g, buf);
}

void etc_grid_num_(etc_grid *g, double v)
{
	struct etc_grid_cell *c = next_cell(g);
	if (!c)
		return;
	c->kind = GRID_NUM;
	c->v = v;
}

void etc_grid_uint_(etc_grid *g, uint64_t v)
{
	etc_grid_textf_(g, "%llu", (unsigned long long)v);
}

/* The table text of a cell into buf (numbers) or a pointer into g->text. */
static const char *cell_text(const etc_grid *g, const struct etc_grid_cell *c, char *buf,
                             size_t *len)
{
	if (c->kind == GRID_TEXT) {
		*len = c->len;
		return g->text.p + c->at;
	}
	if (isnan(c->v)) {
		*len = 1;
		return "-";
	}
	*len = etc_fmt_g(buf, c->v);
	return buf;
}

/* Display width: code points (continuation bytes do not count). */
static size_t width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

static void pad(FILE *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc(' ', f);
}

static void put_cell(FILE *f, const char *s, size_t len, size_t w, bool right)
{
	size_t cw = width(s, len);
	fputs(" ", f);
	if (right)
		pad(f, w - cw);
	fwrite(s, 1, len, f);
	if (!right)
		pad(f, w - cw);
	fputs(" │", f);
}

int etc_grid_write_(const etc_grid *g, FILE *f)
{
	size_t nc = g->ncols;
	size_t *w = calloc(nc ? nc : 1, sizeof *w);
	if (!w || g->failed) {
		free(w);
		return ETC_ERR_NOMEM;
	}
	char buf[ETC_FMT_NUM];
	for (size_t c = 0; c < nc; c++)
		w[c] = width(g->headers[c], strlen(g->headers[c]));
	for (size_t i = 0; i < g->ncells; i++) {
		size_t len;
		const char *s = cell_text(g, &g->cells[i], buf, &len);
		size_t cw = width(s, len);
		if (cw > w[i % nc])
			w[i % nc] = cw;
	}
	static const char *const rules[3][4] = {
	    {"╒", "═", "╤", "╕"}, {"╞", "═", "╪", "╡"}, {"╘", "═", "╧", "╛"}};
	for (int line = 0; line < 3; line++) {
		if (line == 2) {
			for (size_t i = 0; i < g->ncells; i++) {
				if (i % nc == 0)
					fputs("│", f);
				size_t len;
				const char *s = cell_text(g, &g->cells[i], buf, &len);
				put_cell(f, s, len, w[i % nc], g->right[i % nc]);
				if (i % nc == nc - 1)
					fputc('\n', f);
			}
		}
		fputs(rules[line][0], f);
		for (size_t c = 0; c < nc; c++) {
			for (size_t k = 0; k < w[c] + 2; k++)
				fputs(rules[line][1], f);
			fputs(c + 1 < nc ? rules[line][2] : rules[line][3], f);
		}
		fputc('\n', f);
		if (line == 0) {
			fputs("│", f);
			for (size_t c = 0; c < nc; c++)
				put_cell(f, g->headers[c], strlen(g->headers[c]), w[c],
				         g->right[c]);
			fputc('\n', f);
		}
	}
	free(w);
	return ferror(f) ? ETC_ERR_IO : 0;
}

/* A TSV field (headers are constants; cells were escaped when added). */
static void put_field(FILE *f, const char *s, size_t n)
{
	fwrite(s, 1, n, f);
}

int etc_grid_write_tsv_(const etc_grid *g, FILE *f)
{
	if (g->failed)
		return ETC_ERR_NOMEM;
	size_t nc = g->ncols;
	for (size_t c = 0; c < nc; c++) {
		put_field(f, g->headers[c], strlen(g->headers[c]));
		fputc(c + 1 < nc ? '\t' : '\n', f);
	}
	char buf[ETC_FMT_NUM];
	for (size_t i = 0; i < g->ncells; i++) {
		const struct etc_grid_cell *c = &g->cells[i];
		if (c->kind == GRID_TEXT)
			put_field(f, g->text.p + c->at, c->len);
		else if (!isnan(c->v))
			fwrite(buf, 1, etc_fmt_repr(buf, c->v), f);
		fputc(i % nc == nc - 1 ? '\n' : '\t', f);
	}
	return ferror(f) ? ETC_ERR_IO : 0;
}
