/*
 * report_grid.c - a small table of text and number cells, rendered as a
 * box-drawing grid or as TSV, for the summaries that have no upstream look
 * to reproduce (profiling summaries, performance diff). The Inspector's own
 * table keeps tabulate's exact rules in report_table.c.
 */
#include "core/internal.h"
#include "report/report_private.h"

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
	/* kept as given: the grid escapes for the terminal, the TSV as pandas */
	etc_sbuf_puts(&g->text, s);
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

bool etc_grid_cell_(const etc_grid *g, size_t i, double *v, const char **s, size_t *len)
{
	const struct etc_grid_cell *c = &g->cells[i];
	if (c->kind == GRID_NUM) {
		*v = c->v;
		return true;
	}
	*s = g->text.p ? g->text.p + c->at : "";
	*len = c->len;
	return false;
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

/* Rendered by etc_grid_print_ (the accuracy table's look), cells made NUL-terminated. */
int etc_grid_write_(const etc_grid *g, FILE *f)
{
	size_t nc = g->ncols, n = g->ncells;
	if (g->failed || !nc)
		return g->failed ? ETC_ERR_NOMEM : 0;
	const char **cells = malloc((n ? n : 1) * sizeof *cells);
	size_t *at = malloc((n ? n : 1) * sizeof *at);
	etc_sbuf text = {0};
	char buf[ETC_FMT_NUM];
	int rc = cells && at ? 0 : ETC_ERR_NOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		size_t len;
		const char *s = cell_text(g, &g->cells[i], buf, &len);
		at[i] = text.len;
		etc_sbuf_put(&text, s, len);
		etc_sbuf_put(&text, "", 1);
	}
	if (rc == 0 && text.failed)
		rc = ETC_ERR_NOMEM;
	for (size_t i = 0; i < n && rc == 0; i++)
		cells[i] = text.p + at[i];
	if (rc == 0)
		rc = etc_grid_print_(f, nc, g->headers, g->right, n / nc, cells);
	free(cells);
	free(at);
	etc_sbuf_free(&text);
	if (rc < 0)
		return rc;
	return ferror(f) ? ETC_ERR_IO : 0;
}

/* A TSV field as pandas writes it. */
static void put_field(FILE *f, const char *s, size_t n)
{
	etc_csv_field_(f, s, n, '\t');
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
