/*
 * report_table.c - the profiling rows and their three renderings:
 *
 *  - table: tabulate 0.8.9's fancy_grid as the Inspector prints it. Column
 *    type is the most generic of its cells (bool < int < float < text);
 *    int/float columns are right-aligned on the decimal point, others left;
 *    floats use format(v, "g"); each column is at least its header + 2 wide.
 *  - TSV/CSV: pandas to_csv: index first, floats as repr(), None as "",
 *    minimal quoting.
 *
 * Rows named like OPERATOR_CALL are hidden, as upstream does.
 */
#include "etcompare/report.h"
#include "core/fmt.h"
#include "report/report_private.h"
#include "core/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

enum cell_kind { CELL_NONE, CELL_BOOL, CELL_INT, CELL_FLOAT, CELL_TEXT };

#define NSTATS  6
#define MAXCOLS 20

typedef struct row_ctx {
	const etc_inspector *insp;
	const etc_report_options *opt;
	size_t block, event; /* cursor */
	size_t index;        /* printed row number */
	bool metadata_column;
	bool link_columns; /* TSV/CSV with an ETRecord: handles, traces, modules */
} row_ctx;

typedef struct cell {
	int kind;
	double f;    /* CELL_FLOAT */
	etc_sbuf *s; /* CELL_TEXT/INT/BOOL rendered text */
} cell;

static bool hidden(const etc_inspector_event *ev)
{
	static const char key[] = "OPERATOR_CALL";
	size_t k = sizeof key - 1;
	for (size_t i = 0; i + k <= ev->name.len; i++)
		if (memcmp(ev->name.ptr + i, key, k) == 0)
			return true;
	return false;
}

static bool next_event(row_ctx *c, const etc_event_block **bo, const etc_inspector_event **eo)
{
	size_t nb = etc_inspector_block_count(c->insp);
	while (c->block < nb) {
		const etc_event_block *b = etc_inspector_block(c->insp, c->block);
		while (c->event < b->event_count) {
			const etc_inspector_event *ev = &b->events[c->event++];
			if (!hidden(ev)) {
				*bo = b;
				*eo = ev;
				return true;
			}
		}
		c->block++;
		c->event = 0;
	}
	return false;
}

static bool any_metadata(const etc_inspector *insp)
{
	for (size_t i = 0; i < etc_inspector_block_count(insp); i++) {
		const etc_event_block *b = etc_inspector_block(insp, i);
		for (size_t e = 0; e < b->event_count; e++)
			if (b->events[e].metadata && !hidden(&b->events[e]))
				return true;
	}
	return false;
}

enum { UNIT_NAMES = 3 };

/* Appends to buf the backends of the shown delegated events in unit u,
 * "QnnBackend" or "A/B", "(unknown)" for an event of no known backend, at
 * most UNIT_NAMES names and then "/others". */
static size_t backends_in(const etc_inspector *insp, int u, char *buf, size_t cap, size_t n)
{
	const char *names[UNIT_NAMES];
	size_t k = 0;
	bool more = false;
	for (size_t i = 0; i < etc_inspector_block_count(insp); i++) {
		const etc_event_block *b = etc_inspector_block(insp, i);
		for (size_t e = 0; e < b->event_count; e++) {
			const etc_inspector_event *ev = &b->events[e];
			if (!ev->has_perf || hidden(ev) || ev->time_scale != u)
				continue;
			const char *nm =
			    ev->delegate_backend_name ? ev->delegate_backend_name : "(unknown)";
			bool seen = false;
			for (size_t j = 0; j < k && !seen; j++)
				seen = strcmp(names[j], nm) == 0;
			if (seen)
				continue;
			if (k < UNIT_NAMES)
				names[k++] = nm;
			else
				more = true;
		}
	}
	for (size_t j = 0; j < k && n < cap; j++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%.40s", j ? "/" : "", names[j]);
	if (more && n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "/others");
	return n;
}

/*
 * "ms", or "ms; delegated: cycles" when delegated rows were logged in a unit
 * that does not convert to the target (--delegate-time-scale cycles). When
 * other delegated rows are in the target unit (BACKEND=cycles for one
 * backend only), the header names the backends in cycles instead:
 * "us; QnnBackend: cycles", so that XNNPACK's microseconds are not read as
 * cycles.
 */
static void units_text(const etc_inspector *insp, char *buf, size_t cap)
{
	int target = etc_inspector_options_get(insp)->target_time_scale;
	unsigned others = 0;
	bool delegated_in_target = false;
	for (size_t i = 0; i < etc_inspector_block_count(insp); i++) {
		const etc_event_block *b = etc_inspector_block(insp, i);
		for (size_t e = 0; e < b->event_count; e++) {
			const etc_inspector_event *ev = &b->events[e];
			if (!ev->has_perf || hidden(ev))
				continue;
			if (ev->time_scale != target)
				others |= 1u << ev->time_scale;
			else if (ev->is_delegated_op)
				delegated_in_target = true;
		}
	}
	size_t n = (size_t)snprintf(buf, cap, "%s", etc_time_scale_name(target));
	size_t base = n;
	for (int u = 0; u <= ETC_TIME_CYCLES && n < cap; u++) {
		if (!(others & (1u << u)))
			continue;
		if (delegated_in_target) {
			n += (size_t)snprintf(buf + n, cap - n, "; ");
			if (n < cap)
				n = backends_in(insp, u, buf, cap, n);
			if (n < cap)
				n += (size_t)snprintf(buf + n, cap - n, ": %s",
				                      etc_time_scale_name(u));
		} else {
			n += (size_t)snprintf(buf + n, cap - n, "%s%s",
			                      n == base ? "; delegated: " : "/",
			                      etc_time_scale_name(u));
		}
	}
}

static size_t headers(const row_ctx *c, etc_sbuf *h)
{
	static const char *const stats[NSTATS] = {"p10", "p50", "p90", "avg", "min", "max"};
	char unit[256];
	units_text(c->insp, unit, sizeof unit);
	size_t n = 0;
	etc_sbuf_reset(&h[n++]);
	etc_sbuf_puts(&h[n++], "event_block_name");
	etc_sbuf_puts(&h[n++], "event_name");
	for (int i = 0; i < NSTATS; i++) {
		if (c->opt->include_units)
			etc_sbuf_printf(&h[n++], "%s (%s)", stats[i], unit);
		else
			etc_sbuf_puts(&h[n++], stats[i]);
	}
	etc_sbuf_puts(&h[n++], "op_types");
	etc_sbuf_puts(&h[n++], "is_delegated_op");
	etc_sbuf_puts(&h[n++], "delegate_backend_name");
	etc_sbuf_puts(&h[n++], "start_time");
	if (c->metadata_column)
		etc_sbuf_puts(&h[n++], "delegate_debug_metadata");
	if (c->link_columns) {
		etc_sbuf_puts(&h[n++], "debug_handles");
		etc_sbuf_puts(&h[n++], "stack_traces");
		etc_sbuf_puts(&h[n++], "module_hierarchy");
	}
	return n;
}

static void text(cell *c, int kind, const char *s, size_t n)
{
	c->kind = kind;
	etc_sbuf_reset(c->s);
	etc_sbuf_put(c->s, s, n);
}

/* The metadata of one run as Python shows bytes decoded to str. */
static void metadata_cell(etc_sbuf *s, const etc_inspector_event *ev)
{
	etc_sbuf_puts(s, "[");
	for (uint32_t k = 0; k < ev->run_count; k++) {
		if (k)
			etc_sbuf_puts(s, ", ");
		etc_sbuf_pyrepr_str(s, (const char *)ev->metadata[k], ev->metadata_len[k]);
	}
	etc_sbuf_puts(s, "]");
}

/* upstream: the list repr, or "['a', 'b' ... 'z'] (n total)" from 5 ops on. */
static void op_types_cell(etc_sbuf *s, const etc_inspector_event *ev)
{
	uint32_t n = ev->node_count;
	etc_sbuf_reset(s);
	if (n >= 5) {
		etc_sbuf_printf(s, "['%s', '%s' ... '%s'] (%u total)", ev->nodes[0]->op,
		                ev->nodes[1]->op, ev->nodes[n - 1]->op, n);
		return;
	}
	etc_sbuf_puts(s, "[");
	for (uint32_t k = 0; k < n; k++) {
		if (k)
			etc_sbuf_puts(s, ", ");
		etc_sbuf_pyrepr_str(s, ev->nodes[k]->op, strlen(ev->nodes[k]->op));
	}
	etc_sbuf_puts(s, "]");
}

/* debug_handles, stack_traces and module_hierarchy as Python reprs. */
static void link_cells(cell *c, const etc_inspector_event *ev)
{
	for (int i = 0; i < 3; i++) {
		c[i].kind = CELL_TEXT;
		etc_sbuf_reset(c[i].s);
	}
	if (!ev->debug_handle_count) {
		c[0].kind = CELL_NONE;
	} else {
		etc_sbuf_puts(c[0].s, "[");
		for (uint32_t k = 0; k < ev->debug_handle_count; k++)
			etc_sbuf_printf(c[0].s, k ? ", %lld" : "%lld",
			                (long long)ev->debug_handles[k]);
		etc_sbuf_puts(c[0].s, "]");
	}
	etc_sbuf_puts(c[1].s, "{");
	etc_sbuf_puts(c[2].s, "{");
	for (uint32_t k = 0; k < ev->node_count; k++) {
		const etc_graph_node *nd = ev->nodes[k];
		const char *sep = k ? ", " : "";
		etc_sbuf_puts(c[1].s, sep);
		etc_sbuf_pyrepr_str(c[1].s, nd->name, strlen(nd->name));
		etc_sbuf_puts(c[1].s, ": ");
		etc_sbuf_pyrepr_str(c[1].s, nd->stack_trace, strlen(nd->stack_trace));
		etc_sbuf_puts(c[2].s, sep);
		etc_sbuf_pyrepr_str(c[2].s, nd->name, strlen(nd->name));
		etc_sbuf_puts(c[2].s, ": {");
		for (uint32_t f = 0; f < nd->module_depth; f++) {
			const etc_module_frame *fr = &nd->modules[f];
			etc_sbuf_puts(c[2].s, f ? ", " : "");
			etc_sbuf_pyrepr_str(c[2].s, fr->key, strlen(fr->key));
			etc_sbuf_puts(c[2].s, ": (");
			etc_sbuf_pyrepr_str(c[2].s, fr->path, strlen(fr->path));
			etc_sbuf_puts(c[2].s, ", ");
			etc_sbuf_pyrepr_str(c[2].s, fr->type, strlen(fr->type));
			etc_sbuf_puts(c[2].s, ")");
		}
		etc_sbuf_puts(c[2].s, "}");
	}
	etc_sbuf_puts(c[1].s, "}");
	etc_sbuf_puts(c[2].s, "}");
}

/* Appends v in decimal: printf costs too much for 10 start times x 3 passes x every row. */
static void put_u64(etc_sbuf *s, uint64_t v)
{
	char buf[24];
	size_t i = sizeof buf;
	do
		buf[--i] = (char)('0' + v % 10);
	while (v /= 10);
	etc_sbuf_put(s, buf + i, sizeof buf - i);
}

/* Fills the cells of the next visible row; false at the end. */
static bool next_row(row_ctx *c, cell *cells, size_t *ncells)
{
	const etc_event_block *b;
	const etc_inspector_event *ev;
	if (!next_event(c, &b, &ev))
		return false;
	size_t n = 0;
	cells[n].kind = CELL_INT;
	etc_sbuf_reset(cells[n].s);
	put_u64(cells[n++].s, c->index++);
	text(&cells[n++], CELL_TEXT, b->name.ptr, b->name.len);
	text(&cells[n++], CELL_TEXT, ev->name.ptr, ev->name.len);
	const double st[NSTATS] = {ev->stats.p10, ev->stats.p50, ev->stats.p90,
	                           ev->stats.avg, ev->stats.min, ev->stats.max};
	for (int i = 0; i < NSTATS; i++, n++) {
		cells[n].kind = ev->has_perf ? CELL_FLOAT : CELL_NONE;
		cells[n].f = st[i];
	}
	cells[n].kind = CELL_TEXT;
	op_types_cell(cells[n++].s, ev);
	if (ev->is_delegated_op)
		text(&cells[n++], CELL_BOOL, "True", 4);
	else
		text(&cells[n++], CELL_BOOL, "False", 5);
	if (ev->delegate_backend_name)
		text(&cells[n++], CELL_TEXT, ev->delegate_backend_name,
		     strlen(ev->delegate_backend_name));
	else
		cells[n++].kind = CELL_NONE;
	if (ev->has_perf) {
		cell *t = &cells[n++];
		t->kind = CELL_TEXT;
		etc_sbuf_reset(t->s);
		etc_sbuf_puts(t->s, "[");
		for (uint32_t k = 0; k < ev->run_count; k++) {
			if (k)
				etc_sbuf_put(t->s, ", ", 2);
			put_u64(t->s, ev->start_times[k]);
		}
		etc_sbuf_puts(t->s, "]");
	} else {
		cells[n++].kind = CELL_NONE;
	}
	if (c->metadata_column) {
		cell *t = &cells[n++];
		if (ev->metadata) {
			t->kind = CELL_TEXT;
			etc_sbuf_reset(t->s);
			metadata_cell(t->s, ev);
		} else {
			t->kind = CELL_NONE;
		}
	}
	if (c->link_columns) {
		link_cells(&cells[n], ev);
		n += 3;
	}
	*ncells = n;
	return true;
}

/* --- tabulate ------------------------------------------------------------- */

/* Display width: code points (continuation bytes do not count). */
static size_t width(const char *s, size_t n)
{
	size_t w = 0;
	for (size_t i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

/* tabulate's _afterpoint on a formatted number. */
static int afterpoint(const char *s, size_t n, bool is_int)
{
	if (is_int)
		return -1;
	const char *p = NULL;
	for (size_t i = n; i-- > 0;)
		if (s[i] == '.') {
			p = s + i;
			break;
		}
	if (!p)
		for (size_t i = n; i-- > 0;)
			if (s[i] == 'e' || s[i] == 'E') {
				p = s + i;
				break;
			}
	return p ? (int)(n - (size_t)(p - s) - 1) : -1;
}

/* Is a formatted float an integer literal to Python's int()? ("1", "-3") */
static bool looks_int(const char *s, size_t n)
{
	size_t i = (n && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
	if (i == n)
		return false;
	for (; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* tabulate applies its number parsing to str cells too. */
static int text_kind(const char *s, size_t n)
{
	if (n == 0)
		return CELL_TEXT;
	if (looks_int(s, n))
		return CELL_INT;
	char *end;
	char tmp[64];
	if (n >= sizeof tmp)
		return CELL_TEXT;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	strtod(tmp, &end);
	return (*end == '\0' && !strchr(tmp, 'x') && !strchr(tmp, 'X')) ? CELL_FLOAT : CELL_TEXT;
}

typedef struct colinfo {
	int kind;     /* most generic cell kind */
	size_t width; /* final width */
	int maxdec;   /* decimal alignment */
	size_t maxw;  /* widest aligned cell */
} colinfo;

/* Renders one cell's text as tabulate would before padding. */
static void render_cell(const cell *c, int colkind, etc_sbuf *out)
{
	char num[ETC_FMT_NUM];
	etc_sbuf_reset(out);
	if (c->kind == CELL_NONE)
		return;
	if (c->kind == CELL_FLOAT) {
		etc_sbuf_put(out, num, etc_fmt_g(num, c->f));
		return;
	}
	if (colkind == CELL_FLOAT && (c->kind == CELL_TEXT || c->kind == CELL_INT) &&
	    text_kind(c->s->p, c->s->len) != CELL_TEXT) {
		etc_sbuf_put(out, num, etc_fmt_g(num, strtod(c->s->p, NULL)));
		return;
	}
	/* Control characters would break the grid; show them escaped. */
	etc_sbuf_term_str(out, c->s->p, c->s->len);
}

static int cell_kind_for_type(const cell *c)
{
	if (c->kind == CELL_TEXT)
		return text_kind(c->s->p, c->s->len);
	return c->kind;
}

/* Builds a rule line ("╞════╪═══╡") once; rows reuse it. */
static void rule(etc_sbuf *out, const colinfo *cols, size_t n, const char *l, const char *fill,
                 const char *mid, const char *r)
{
	etc_sbuf_reset(out);
	etc_sbuf_puts(out, l);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < cols[i].width + 2; k++)
			etc_sbuf_puts(out, fill);
		etc_sbuf_puts(out, i + 1 < n ? mid : r);
	}
	etc_sbuf_puts(out, "\n");
}

static void pad(FILE *f, size_t n)
{
	static const char spaces[64] =
	    "                                                                ";
	while (n) {
		size_t k = n < sizeof spaces ? n : sizeof spaces;
		fwrite(spaces, 1, k, f);
		n -= k;
	}
}

static bool numeric(int kind)
{
	return kind == CELL_INT || kind == CELL_FLOAT;
}

/* Writes one aligned cell (without the surrounding padding). */
static void put_aligned(FILE *f, const colinfo *ci, const etc_sbuf *txt, bool is_header)
{
	size_t w = width(txt->p ? txt->p : "", txt->len);
	if (!numeric(ci->kind)) {
		fwrite(txt->p ? txt->p : "", 1, txt->len, f);
		pad(f, ci->width - w);
		return;
	}
	if (is_header) {
		pad(f, ci->width - w);
		fwrite(txt->p ? txt->p : "", 1, txt->len, f);
		return;
	}
	int dec = afterpoint(txt->p ? txt->p : "", txt->len,
	                     txt->len ? looks_int(txt->p, txt->len) : false);
	size_t trail = txt->len ? (size_t)(ci->maxdec - dec) : 0;
	if (!txt->len)
		trail = 0;
	pad(f, ci->width - w - trail);
	fwrite(txt->p ? txt->p : "", 1, txt->len, f);
	pad(f, trail);
}

/* Final column widths: decimal-aligned parts, then at least the header + 2. */
static void finish_widths(colinfo *cols, const long *intw, const etc_sbuf *hdr, size_t ncols)
{
	for (size_t i = 0; i < ncols; i++) {
		if (intw[i] >= 0 && (size_t)(intw[i] + cols[i].maxdec) > cols[i].maxw)
			cols[i].maxw = (size_t)(intw[i] + cols[i].maxdec);
		size_t minw = width(hdr[i].p ? hdr[i].p : "", hdr[i].len) + 2;
		cols[i].width = cols[i].maxw > minw ? cols[i].maxw : minw;
	}
}

/* The four rules of a grid, and the top rule and header row printed. */
static void grid_head(FILE *f, const colinfo *cols, const etc_sbuf *hdr, size_t ncols,
                      etc_sbuf *top, etc_sbuf *head, etc_sbuf *between, etc_sbuf *bottom)
{
	rule(top, cols, ncols, "╒", "═", "╤", "╕");
	rule(head, cols, ncols, "╞", "═", "╪", "╡");
	rule(between, cols, ncols, "├", "─", "┼", "┤");
	rule(bottom, cols, ncols, "╘", "═", "╧", "╛");
	fwrite(top->p, 1, top->len, f);
	fputs("│", f);
	for (size_t i = 0; i < ncols; i++) {
		fputc(' ', f);
		put_aligned(f, &cols[i], &hdr[i], true);
		fputs(" │", f);
	}
	fputc('\n', f);
}

static int cells_alloc(cell *cells, etc_sbuf *bufs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memset(&bufs[i], 0, sizeof bufs[i]);
		cells[i].s = &bufs[i];
	}
	return 0;
}

static void cells_free(etc_sbuf *bufs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		etc_sbuf_free(&bufs[i]);
}

int etc_report_table(FILE *f, const etc_inspector *insp, const etc_report_options *opt,
                     etc_error *err)
{
	if (!f || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_table: NULL %s",
		                !f ? "out" : "insp");
	etc_report_options o;
	if (!opt)
		etc_report_options_init(&o), opt = &o;
	cell cells[MAXCOLS];
	etc_sbuf bufs[MAXCOLS], hdr[MAXCOLS], txt = {0};
	colinfo cols[MAXCOLS];
	row_ctx c = {insp, opt, 0, 0, 0, false, false};
	c.metadata_column = opt->include_delegate_debug_data && any_metadata(insp);
	cells_alloc(cells, bufs, MAXCOLS);
	memset(hdr, 0, sizeof hdr);
	size_t ncols = headers(&c, hdr), n;

	/* Pass 1: column kinds. */
	for (size_t i = 0; i < ncols; i++)
		cols[i] = (colinfo){CELL_BOOL, 0, -1, 0};
	size_t nrows = 0;
	while (next_row(&c, cells, &n)) {
		for (size_t i = 0; i < ncols; i++) {
			int k = cell_kind_for_type(&cells[i]);
			if (k > cols[i].kind)
				cols[i].kind = k;
		}
		nrows++;
	}
	/* Pass 2: widths. A number padded to the common decimal point is
	 * (width - its decimals) + the column's most decimals wide, so one pass
	 * can track both maxima. The statistics' texts are kept for pass 3:
	 * formatting them twice cost a tenth of a large table's time. */
	long intw[MAXCOLS];
	for (size_t i = 0; i < ncols; i++)
		intw[i] = -1;
	char(*stat_text)[NSTATS][16] = malloc((nrows ? nrows : 1) * sizeof *stat_text);
	size_t row = 0;
	c = (row_ctx){insp, opt, 0, 0, 0, c.metadata_column, false};
	while (next_row(&c, cells, &n)) {
		for (size_t i = 0; i < ncols; i++) {
			render_cell(&cells[i], cols[i].kind, &txt);
			if (stat_text && i >= 3 && i < 3 + NSTATS)
				memcpy(stat_text[row][i - 3], txt.p ? txt.p : "",
				       txt.len < 16 ? txt.len + 1 : 1);
			size_t w = width(txt.p ? txt.p : "", txt.len);
			if (numeric(cols[i].kind) && txt.len) {
				int d = afterpoint(txt.p, txt.len, looks_int(txt.p, txt.len));
				if (d > cols[i].maxdec)
					cols[i].maxdec = d;
				if ((long)w - d > intw[i])
					intw[i] = (long)w - d;
			} else if (w > cols[i].maxw) {
				cols[i].maxw = w;
			}
		}
		row++;
	}
	finish_widths(cols, intw, hdr, ncols);

	/* Pass 3: print. */
	etc_sbuf top = {0}, head = {0}, between = {0}, bottom = {0};
	grid_head(f, cols, hdr, ncols, &top, &head, &between, &bottom);
	c = (row_ctx){insp, opt, 0, 0, 0, c.metadata_column, false};
	size_t r = 0;
	if (nrows == 0)
		fwrite(bottom.p, 1, bottom.len, f);
	else
		fwrite(head.p, 1, head.len, f);
	while (next_row(&c, cells, &n)) {
		fputs("│", f);
		for (size_t i = 0; i < ncols; i++) {
			if (stat_text && i >= 3 && i < 3 + NSTATS && stat_text[r][i - 3][0]) {
				etc_sbuf_reset(&txt);
				etc_sbuf_puts(&txt, stat_text[r][i - 3]);
			} else {
				render_cell(&cells[i], cols[i].kind, &txt);
			}
			fputc(' ', f);
			put_aligned(f, &cols[i], &txt, false);
			fputs(" │", f);
		}
		fputc('\n', f);
		const etc_sbuf *line = ++r < nrows ? &between : &bottom;
		fwrite(line->p, 1, line->len, f);
	}
	free(stat_text);
	etc_sbuf_free(&top);
	etc_sbuf_free(&head);
	etc_sbuf_free(&between);
	etc_sbuf_free(&bottom);
	cells_free(bufs, MAXCOLS);
	cells_free(hdr, MAXCOLS);
	etc_sbuf_free(&txt);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the table");
	return 0;
}

/* --- TSV / CSV -------------------------------------------------------------- */

void etc_csv_field_(FILE *f, const char *s, size_t n, char sep)
{
	/* NUL and invalid UTF-8 become U+FFFD, as text decoded with
	 * errors="replace" (pandas' reader would stop a field at a NUL). */
	etc_sbuf clean = {0};
	bool plain = true;
	for (size_t i = 0; i < n && plain; i++)
		plain = s[i] != 0 && (unsigned char)s[i] < 0x80;
	if (!plain) {
		etc_sbuf_csv_text(&clean, s, n);
		if (!clean.failed)
			s = clean.p, n = clean.len;
	}
	bool quote = false;
	for (size_t i = 0; i < n && !quote; i++)
		quote = s[i] == sep || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!quote) {
		fwrite(s, 1, n, f);
	} else {
		fputc('"', f);
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '"')
				fputc('"', f);
			fputc(s[i], f);
		}
		fputc('"', f);
	}
	etc_sbuf_free(&clean);
}

/* Walks the table for a visitor: the headers, then each row's cells. The
 * TSV and CSV add the link columns (handles, traces, modules: `links`);
 * the terminal's columns, which the HTML report shows, do not. */
static void walk(const etc_inspector *insp, const etc_report_options *opt, bool links,
                 const etc_table_visitor *v)
{
	etc_report_options o;
	if (!opt)
		etc_report_options_init(&o), opt = &o;
	cell cells[MAXCOLS];
	etc_sbuf bufs[MAXCOLS], hdr[MAXCOLS];
	row_ctx c = {insp, opt, 0, 0, 0, false, false};
	c.metadata_column = opt->include_delegate_debug_data && any_metadata(insp);
	c.link_columns = links && etc_inspector_etrecord(insp) != NULL;
	cells_alloc(cells, bufs, MAXCOLS);
	memset(hdr, 0, sizeof hdr);
	size_t ncols = headers(&c, hdr), n;
	for (size_t i = 0; i < ncols; i++)
		v->header(v->ctx, i, hdr[i].p ? hdr[i].p : "", hdr[i].len);
	while (next_row(&c, cells, &n)) {
		v->row(v->ctx, true);
		for (size_t i = 0; i < n; i++) {
			const cell *x = &cells[i];
			bool number = x->kind == CELL_FLOAT || x->kind == CELL_INT;
			if (x->kind == CELL_NONE)
				v->cell(v->ctx, i, false, NAN, "", 0);
			else if (x->kind == CELL_FLOAT)
				v->cell(v->ctx, i, true, x->f, NULL, 0);
			else
				v->cell(v->ctx, i, number,
				        number && x->s->p ? strtod(x->s->p, NULL) : NAN,
				        x->s->p ? x->s->p : "", x->s->len);
		}
		v->row(v->ctx, false);
	}
	cells_free(bufs, MAXCOLS);
	cells_free(hdr, MAXCOLS);
}

int etc_report_table_visit_(const etc_inspector *insp, const etc_report_options *opt,
                            const etc_table_visitor *v)
{
	walk(insp, opt, false, v);
	return 0;
}

/* The TSV/CSV writer as a visitor: fields as pandas writes them, floats as repr(). */
typedef struct separated_ctx {
	FILE *f;
	char sep;
} separated_ctx;

static void sep_header(void *ctx, size_t col, const char *s, size_t n)
{
	separated_ctx *x = ctx;
	if (col)
		fputc(x->sep, x->f);
	etc_csv_field_(x->f, s, n, x->sep);
}

/* a row starts on a line of its own: the header's or the last row's ends */
static void sep_row(void *ctx, bool start)
{
	separated_ctx *x = ctx;
	if (start)
		fputc('\n', x->f);
}

static void sep_cell(void *ctx, size_t col, bool is_num, double v, const char *s, size_t n)
{
	(void)is_num;
	separated_ctx *x = ctx;
	if (col)
		fputc(x->sep, x->f);
	if (s) {
		etc_csv_field_(x->f, s, n, x->sep);
	} else {
		char num[ETC_FMT_NUM];
		fwrite(num, 1, etc_fmt_repr(num, v), x->f);
	}
}

static int separated(FILE *f, const etc_inspector *insp, const etc_report_options *opt, char sep,
                     etc_error *err)
{
	separated_ctx x = {f, sep};
	etc_table_visitor v = {&x, sep_header, sep_row, sep_cell};
	walk(insp, opt, true, &v);
	fputc('\n', f);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the table");
	return 0;
}

int etc_report_tsv(FILE *f, const etc_inspector *insp, const etc_report_options *opt,
                   etc_error *err)
{
	if (!f || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_tsv: NULL %s",
		                !f ? "out" : "insp");
	return separated(f, insp, opt, '\t', err);
}

int etc_report_csv(FILE *f, const etc_inspector *insp, const etc_report_options *opt,
                   etc_error *err)
{
	if (!f || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_csv: NULL %s",
		                !f ? "out" : "insp");
	return separated(f, insp, opt, ',', err);
}

void etc_report_options_init(etc_report_options *opt)
{
	opt->include_units = true;
	opt->include_delegate_debug_data = false;
	opt->max_values = 8;
	opt->accuracy = NULL;
	opt->numgap = NULL;
	opt->numgap_dist = NULL;
	opt->taps = NULL;
	opt->numgap_more = NULL;
	opt->numgap_more_names = NULL;
	opt->numgap_more_count = 0;
	opt->profile = NULL;
	opt->profile_tables = 0;
	opt->perfdiff = NULL;
	opt->numgap_runs = NULL;
	opt->numgap_run_count = 0;
}

void etc_format_double(char buf[40], double v)
{
	etc_fmt_repr(buf, v);
}

/* --- generic grids (the legacy profiler's tables) -------------------------- */

void etc_tabulate_init_(etc_tabulate *g, size_t ncols)
{
	memset(g, 0, sizeof *g);
	g->ncols = ncols;
}

void etc_tabulate_free_(etc_tabulate *g)
{
	etc_sbuf_free(&g->text);
	free(g->ends);
	memset(g, 0, sizeof *g);
}

void etc_tabulate_cell_(etc_tabulate *g, const char *s, size_t n)
{
	if (g->failed)
		return;
	if (g->count == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		size_t *p = cap > SIZE_MAX / sizeof *p ? NULL : realloc(g->ends, cap * sizeof *p);
		if (!p) {
			g->failed = 1;
			return;
		}
		g->ends = p;
		g->cap = cap;
	}
	etc_sbuf_put(&g->text, s, n);
	if (g->text.failed) {
		g->failed = 1;
		return;
	}
	g->ends[g->count++] = g->text.len;
}

void etc_tabulate_cellf_(etc_tabulate *g, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	etc_tabulate_cell_(g, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static void grid_cell_text(const etc_tabulate *g, size_t i, etc_sbuf *out)
{
	size_t start = i ? g->ends[i - 1] : 0;
	cell c = {CELL_TEXT, 0, NULL};
	etc_sbuf view = {g->text.p ? g->text.p + start : (char *)"", g->ends[i] - start,
	                 g->ends[i] - start, 0};
	c.s = &view;
	render_cell(&c, CELL_TEXT, out);
}

int etc_tabulate_write_(FILE *f, const etc_tabulate *g, const char *const *headers, etc_error *err)
{
	if (g->failed)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory building a table");
	size_t ncols = g->ncols, nrows = ncols ? g->count / ncols : 0;
	colinfo *cols = calloc(ncols ? ncols : 1, sizeof *cols);
	long *intw = calloc(ncols ? ncols : 1, sizeof *intw);
	etc_sbuf *hdr = calloc(ncols ? ncols : 1, sizeof *hdr);
	etc_sbuf txt = {0};
	if (!cols || !intw || !hdr) {
		free(cols);
		free(intw);
		free(hdr);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory printing a table");
	}
	/* Column kind: numeric when every non-empty cell reads as a number. */
	for (size_t i = 0; i < ncols; i++) {
		cols[i] = (colinfo){CELL_BOOL, 0, -1, 0};
		intw[i] = -1;
		etc_sbuf_puts(&hdr[i], headers[i]);
	}
	for (size_t r = 0; r < nrows; r++)
		for (size_t i = 0; i < ncols; i++) {
			grid_cell_text(g, r * ncols + i, &txt);
			int k = txt.len ? text_kind(txt.p, txt.len) : CELL_BOOL;
			if (k > cols[i].kind)
				cols[i].kind = k;
		}
	for (size_t r = 0; r < nrows; r++)
		for (size_t i = 0; i < ncols; i++) {
			grid_cell_text(g, r * ncols + i, &txt);
			size_t w = width(txt.p ? txt.p : "", txt.len);
			if (numeric(cols[i].kind) && txt.len) {
				int d = afterpoint(txt.p, txt.len, looks_int(txt.p, txt.len));
				if (d > cols[i].maxdec)
					cols[i].maxdec = d;
				if ((long)w - d > intw[i])
					intw[i] = (long)w - d;
			} else if (w > cols[i].maxw) {
				cols[i].maxw = w;
			}
		}
	finish_widths(cols, intw, hdr, ncols);
	etc_sbuf top = {0}, head = {0}, between = {0}, bottom = {0};
	grid_head(f, cols, hdr, ncols, &top, &head, &between, &bottom);
	const etc_sbuf *line = nrows ? &head : &bottom;
	fwrite(line->p, 1, line->len, f);
	for (size_t r = 0; r < nrows; r++) {
		fputs("│", f);
		for (size_t i = 0; i < ncols; i++) {
			grid_cell_text(g, r * ncols + i, &txt);
			fputc(' ', f);
			put_aligned(f, &cols[i], &txt, false);
			fputs(" │", f);
		}
		fputc('\n', f);
		line = r + 1 < nrows ? &between : &bottom;
		fwrite(line->p, 1, line->len, f);
	}
	etc_sbuf_free(&top);
	etc_sbuf_free(&head);
	etc_sbuf_free(&between);
	etc_sbuf_free(&bottom);
	cells_free(hdr, ncols);
	etc_sbuf_free(&txt);
	free(hdr);
	free(cols);
	free(intw);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the table");
	return 0;
}
