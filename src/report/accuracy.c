/*
 * report_accuracy.c - the accuracy comparison for people and for CI: a grid
 * (one row per block, run, reference and output), the JSON object embedded
 * in the --json report and JUnit XML (one testcase per output).
 */
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>

/* Which metric columns to show: names of --metrics. */
static const struct {
	const char *name, *header;
} metric_cols[] = {{"snr", "SNR (dB)"}, {"mse", "MSE"},         {"cosine", "cosine"},
                   {"l1", "L1"},        {"max_abs", "max abs"}, {"max_rel", "max rel"}};
#define NMETRICS (sizeof metric_cols / sizeof metric_cols[0])

int etc_metric_mask_parse(const char *list, unsigned *mask)
{
	if (!mask)
		return ETC_ERR_USAGE;
	*mask = 0;
	if (!list)
		return ETC_ERR_USAGE;
	const char *p = list;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 0 || (e && e[1] == '\0'))
			return ETC_ERR_USAGE; /* "snr,,mse" and "snr," name nothing */
		size_t i;
		for (i = 0; i < NMETRICS; i++)
			if (strlen(metric_cols[i].name) == n && !memcmp(metric_cols[i].name, p, n))
				break;
		if (i == NMETRICS)
			return ETC_ERR_USAGE;
		*mask |= 1u << i;
		p += n + (e ? 1 : 0);
	}
	return *mask ? 0 : ETC_ERR_USAGE;
}

static double metric_value(const etc_metrics *m, size_t i)
{
	const double v[NMETRICS] = {m->snr_db, m->mse, m->cosine, m->l1, m->max_abs, m->max_rel};
	return v[i];
}

void etc_fmt_metric_(char *buf, size_t cap, double v)
{
	if (isinf(v))
		snprintf(buf, cap, v > 0 ? "inf" : "-inf");
	else if (isnan(v))
		snprintf(buf, cap, "nan");
	else
		snprintf(buf, cap, "%.6g", v);
}

/* Display width of UTF-8 text: one column per code point. */
static size_t text_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static void pad(FILE *f, size_t n)
{
	static const char spaces[] = "                                ";
	for (; n > sizeof spaces - 1; n -= sizeof spaces - 1)
		fwrite(spaces, 1, sizeof spaces - 1, f);
	fwrite(spaces, 1, n, f);
}

static void grid_cell(FILE *f, const char *s, size_t w, bool right)
{
	size_t n = w - text_width(s);
	fputc(' ', f);
	if (right)
		pad(f, n);
	fputs(s, f);
	if (!right)
		pad(f, n);
	fputs(" │", f);
}

int etc_grid_print_(FILE *f, size_t nc, const char *const *hdr, const bool *right, size_t n,
                    const char *const *cells)
{
	/* Cells quote names from files: escaped for the terminal first. */
	size_t *w = calloc(nc ? nc : 1, sizeof *w), *at = malloc((n * nc + 1) * sizeof *at);
	const char **esc = malloc((n * nc + 1) * sizeof *esc);
	etc_sbuf text = {0};
	for (size_t i = 0; at && i < n * nc; i++) {
		at[i] = text.len;
		etc_sbuf_term_str(&text, cells[i], strlen(cells[i]));
		etc_sbuf_put(&text, "", 1);
	}
	if (!w || !at || !esc || text.failed) {
		free(w), free(at), free(esc), etc_sbuf_free(&text);
		return ETC_ERR_NOMEM;
	}
	for (size_t i = 0; i < n * nc; i++)
		esc[i] = text.p + at[i];
	cells = esc;
	for (size_t c = 0; c < nc; c++)
		w[c] = text_width(hdr[c]);
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < nc; c++) {
			size_t l = text_width(cells[i * nc + c]);
			if (l > w[c])
				w[c] = l;
		}
	static const char *const rules[3][4] = {
	    {"╒", "═", "╤", "╕"}, {"╞", "═", "╪", "╡"}, {"╘", "═", "╧", "╛"}};
	for (int line = 0; line < 3; line++) {
		if (line == 2) {
			for (size_t i = 0; i < n; i++) {
				fputs("│", f);
				for (size_t c = 0; c < nc; c++)
					grid_cell(f, cells[i * nc + c], w[c], right[c]);
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
				grid_cell(f, hdr[c], w[c], right[c]);
			fputc('\n', f);
		}
	}
	free(w), free(at), free(esc), etc_sbuf_free(&text);
	return 0;
}

#define COLS 16

int etc_report_accuracy(FILE *f, const etc_accuracy *acc, const etc_inspector *insp,
                        unsigned metric_mask, etc_error *err)
{
	if (!f || !acc || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_accuracy: NULL %s",
		                !f     ? "out"
		                : !acc ? "acc"
		                       : "insp");
	const char *hdr[COLS];
	bool right[COLS];
	size_t nc = 0;
	hdr[nc] = "block", right[nc++] = false;
	hdr[nc] = "run", right[nc++] = true;
	hdr[nc] = "etdump run", right[nc++] = true;
	hdr[nc] = "ref", right[nc++] = true;
	hdr[nc] = "output", right[nc++] = true;
	hdr[nc] = "shape", right[nc++] = false;
	hdr[nc] = "dtype", right[nc++] = false;
	for (size_t i = 0; i < NMETRICS; i++)
		if (metric_mask & (1u << i))
			hdr[nc] = metric_cols[i].header, right[nc++] = true;
	hdr[nc] = "verdict", right[nc++] = false;
	size_t n = etc_accuracy_row_count(acc);
	bool gated = etc_accuracy_gated(acc);
	char(*cells)[COLS][112] = calloc(n ? n : 1, sizeof *cells);
	if (!cells)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t k = 0; /* rows shown: taps have their own table (taps.h) */
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		if (etc_accuracy_row_is_tap(acc, i))
			continue;
		char(*row)[112] = cells[k++];
		const etc_event_block *b = etc_inspector_block(insp, r->block);
		size_t c = 0;
		if (etc_inspector_block_name_shared(insp, r->block))
			snprintf(row[c++], 112, "%.*s#%u", (int)b->name.len, b->name.ptr, r->block);
		else
			snprintf(row[c++], 112, "%.*s", (int)b->name.len, b->name.ptr);
		if (r->etdump_run == UINT32_MAX) { /* a reference no run used */
			snprintf(row[c++], 112, "-");
			snprintf(row[c++], 112, "-");
		} else {
			snprintf(row[c++], 112, "%u", r->run);
			snprintf(row[c++], 112, "%u", r->etdump_run);
		}
		if (r->reference >= 0)
			snprintf(row[c++], 112, "%d", r->reference);
		else
			snprintf(row[c++], 112, "-");
		snprintf(row[c++], 112, "%u", r->output);
		snprintf(row[c++], 112, "%s", *r->shape ? r->shape : r->reference_shape);
		snprintf(row[c++], 112, "%s", *r->dtype ? r->dtype : r->reference_dtype);
		for (size_t m = 0; m < NMETRICS; m++) {
			if (!(metric_mask & (1u << m)))
				continue;
			if (r->has_metrics)
				etc_fmt_metric_(row[c++], 112, metric_value(&r->metrics, m));
			else
				snprintf(row[c++], 112, "-");
		}
		if (r->status == ETC_ROW_PASS && !gated)
			snprintf(row[c++], 112, "%s", /* --compare alone judges nothing */
			         r->has_metrics && r->metrics.identical ? "no gate (identical)"
			                                                : "no gate");
		else if (r->status == ETC_ROW_PASS)
			snprintf(row[c++], 112, "%s",
			         r->has_metrics && r->metrics.identical ? "pass (identical)"
			                                                : "pass");
		else
			snprintf(row[c++], 112, "%s: %.90s", etc_row_status_str(r->status),
			         r->reason);
	}
	const char **ptrs = malloc((n ? n : 1) * nc * sizeof *ptrs);
	if (!ptrs) {
		free(cells);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < k; i++)
		for (size_t c = 0; c < nc; c++)
			ptrs[i * nc + c] = cells[i][c];
	etc_grid_print_(f, nc, hdr, right, k, ptrs);
	free(ptrs);
	char note[1024];
	if (gated)
		fprintf(f, "%s; %zu of %zu outputs pass\n",
		        etc_text_safe(note, sizeof note, etc_accuracy_pair_note(acc)),
		        k - etc_accuracy_failures(acc), k);
	else
		fprintf(f, "%s; %zu outputs compared, no gate\n",
		        etc_text_safe(note, sizeof note, etc_accuracy_pair_note(acc)), k);
	free(cells);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the accuracy table");
	return 0;
}

void etc_metrics_json_(etc_sbuf *b, const etc_metrics *m)
{
	etc_sbuf_printf(b, "{\"count\": %llu", (unsigned long long)m->count);
	for (size_t k = 0; k < NMETRICS; k++) {
		etc_sbuf_printf(b, ", \"%s\": ", metric_cols[k].name);
		etc_json_num_(b, metric_value(m, k));
	}
	etc_sbuf_printf(b,
	                ", \"max_abs_index\": %llu, \"nan_count\": %llu, "
	                "\"nan_mismatch_count\": %llu, \"mismatch_count\": %llu, "
	                "\"identical\": %s, \"exact\": %s, \"notes\": ",
	                (unsigned long long)m->max_abs_index, (unsigned long long)m->nan_count,
	                (unsigned long long)m->nan_mismatch_count,
	                (unsigned long long)m->mismatch_count, m->identical ? "true" : "false",
	                m->exact ? "true" : "false");
	/* every note, "; "-separated */
	char notes[256] = "";
	size_t nl = 0;
	for (unsigned bit = 1; bit && nl < sizeof notes; bit <<= 1)
		if (m->notes & bit)
			nl += (size_t)snprintf(notes + nl, sizeof notes - nl, "%s%s",
			                       nl ? "; " : "", etc_metrics_note_str(bit));
	etc_sbuf_json_str(b, notes, strlen(notes) < sizeof notes ? strlen(notes) : 0);
	etc_sbuf_puts(b, "}");
}

/* "pairing": how each run was paired by content, with every candidate's score. */
static void pairing_json(etc_sbuf *b, const etc_accuracy *acc, const etc_inspector *insp)
{
	size_t n = etc_accuracy_pairing_count(acc), m = etc_accuracy_reference_count(acc);
	etc_sbuf_puts(b, ", \"pairing\": [");
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_pairing *p = etc_accuracy_pairing_at(acc, i);
		const etc_event_block *blk = etc_inspector_block(insp, p->block);
		etc_sbuf_puts(b, i ? ",\n      {\"block\": " : "\n      {\"block\": ");
		etc_sbuf_json_str(b, blk->name.ptr, blk->name.len);
		etc_sbuf_printf(b, ", \"run\": %u, \"etdump_run\": %u, \"reference\": ", p->run,
		                p->etdump_run);
		if (p->reference >= 0)
			etc_sbuf_printf(b, "%d", p->reference);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_puts(b, ", \"snr\": ");
		etc_json_num_(b, p->snr_db);
		etc_sbuf_puts(b, ", \"cosine\": ");
		etc_json_num_(b, p->cosine);
		etc_sbuf_puts(b, ", \"second\": ");
		if (p->second >= 0)
			etc_sbuf_printf(b, "%d", p->second);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_puts(b, ", \"second_snr\": ");
		etc_json_num_(b, p->second_snr_db);
		etc_sbuf_puts(b, ", \"margin_db\": ");
		etc_json_num_(b, p->margin_db);
		etc_sbuf_printf(b, ", \"ambiguous\": %s, \"candidates\": [",
		                p->ambiguous ? "true" : "false");
		size_t shown = 0;
		for (size_t k = 0; k < m; k++) {
			double snr, cos;
			if (!etc_accuracy_pairing_score(acc, i, k, &snr, &cos))
				continue;
			etc_sbuf_printf(b, "%s{\"reference\": %zu, \"snr\": ", shown++ ? ", " : "",
			                k);
			etc_json_num_(b, snr);
			etc_sbuf_puts(b, ", \"cosine\": ");
			etc_json_num_(b, cos);
			double bound;
			if (etc_accuracy_pairing_score_estimated(acc, i, k, &bound)) {
				/* a large output ranked on its sketch: proven far, not scored
				 * exactly */
				etc_sbuf_puts(b, ", \"estimated\": true, \"snr_bound\": ");
				etc_json_num_(b, bound);
			}
			etc_sbuf_puts(b, "}");
		}
		etc_sbuf_puts(b, "]}");
	}
	etc_sbuf_puts(b, "]");
}

void etc_accuracy_json_(etc_sbuf *b, const etc_accuracy *acc, const etc_inspector *insp)
{
	int rule = etc_accuracy_pair_rule(acc);
	etc_sbuf_printf(b, "{\"pair_by\": \"%s\", \"note\": ",
	                rule == ETC_PAIR_ORDER     ? "order"
	                : rule == ETC_PAIR_ALL     ? "all"
	                : rule == ETC_PAIR_CONTENT ? "content"
	                                           : "index");
	etc_sbuf_json_str(b, etc_accuracy_pair_note(acc), strlen(etc_accuracy_pair_note(acc)));
	const char *source = etc_accuracy_reference_source(acc);
	etc_sbuf_puts(b, ", \"reference_source\": ");
	etc_sbuf_json_str(b, source, strlen(source));
	if (rule == ETC_PAIR_CONTENT)
		pairing_json(b, acc, insp);
	size_t n = etc_accuracy_row_count(acc);
	etc_sbuf_printf(b, ", \"outputs\": %zu, \"failures\": %zu, \"worst\": ", n,
	                etc_accuracy_failures(acc));
	long worst = etc_accuracy_worst(acc);
	if (worst >= 0)
		etc_sbuf_printf(b, "%ld", worst);
	else
		etc_sbuf_puts(b, "null");
	etc_sbuf_puts(b, ", \"rows\": [");
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		const etc_event_block *blk = etc_inspector_block(insp, r->block);
		etc_sbuf_puts(b, i ? ",\n      {\"block\": " : "\n      {\"block\": ");
		etc_sbuf_json_str(b, blk->name.ptr, blk->name.len);
		if (r->etdump_run == UINT32_MAX)
			etc_sbuf_puts(b, ", \"run\": null, \"etdump_run\": null, \"reference\": ");
		else
			etc_sbuf_printf(b, ", \"run\": %u, \"etdump_run\": %u, \"reference\": ",
			                r->run, r->etdump_run);
		if (r->reference >= 0)
			etc_sbuf_printf(b, "%d", r->reference);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_printf(b, ", \"output\": %u, \"status\": \"%s\", \"reason\": ", r->output,
		                etc_row_status_str(r->status));
		etc_sbuf_json_str(b, r->reason, strlen(r->reason));
		/* the whole shape: the row's text elides the middle of a long one */
		char full[1600];
		etc_accuracy_row_shape_full(acc, i, false, full, sizeof full);
		etc_sbuf_puts(b, ", \"shape\": ");
		etc_sbuf_json_str(b, full, strlen(full));
		etc_sbuf_puts(b, ", \"dtype\": ");
		etc_sbuf_json_str(b, r->dtype, strlen(r->dtype));
		etc_sbuf_puts(b, ", \"reference_shape\": ");
		etc_accuracy_row_shape_full(acc, i, true, full, sizeof full);
		etc_sbuf_json_str(b, full, strlen(full));
		etc_sbuf_puts(b, ", \"reference_dtype\": ");
		etc_sbuf_json_str(b, r->reference_dtype, strlen(r->reference_dtype));
		etc_sbuf_puts(b, ", \"metrics\": ");
		if (!r->has_metrics) {
			etc_sbuf_puts(b, "null}");
			continue;
		}
		etc_metrics_json_(b, &r->metrics);
		etc_sbuf_puts(b, "}");
	}
	etc_sbuf_puts(b, "]}");
}

/* --- plots ------------------------------------------------------------------ */

/* Reads actual - reference (or its magnitude) in chunks for the plot module. */
int etc_plot_read_diff_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err)
{
	etc_diff_ctx *d = ctx;
	double tmp[1024];
	(void)err;
	for (size_t done = 0; done < count;) {
		size_t n = count - done < 1024 ? count - done : 1024;
		d->a.read(d->a.src, first + done, n, dst + done);
		d->r.read(d->r.src, first + done, n, tmp);
		for (size_t i = 0; i < n; i++) {
			double e = dst[done + i] - tmp[i];
			dst[done + i] = d->absolute ? fabs(e) : e;
		}
		done += n;
	}
	return 0;
}

static bool same_block_name(const etc_inspector *insp, uint32_t a, uint32_t b)
{
	const etc_event_block *x = etc_inspector_block(insp, a), *y = etc_inspector_block(insp, b);
	return x->name.len == y->name.len && !memcmp(x->name.ptr, y->name.ptr, x->name.len);
}

/* The run a row shows: UINT32_MAX for a reference no run used ("-"). */
static uint32_t shown_run(const etc_accuracy_row *r)
{
	return r->etdump_run == UINT32_MAX ? UINT32_MAX : r->run;
}

unsigned etc_report_accuracy_id_parts(const etc_accuracy *acc, const etc_inspector *insp)
{
	size_t n = etc_accuracy_row_count(acc);
	/* rows come block by block: a name repeats when two blocks share it */
	bool repeats = false;
	for (size_t i = 1; i < n && !repeats; i++) {
		uint32_t b = etc_accuracy_row_at(acc, i)->block;
		if (b == etc_accuracy_row_at(acc, i - 1)->block)
			continue;
		for (size_t j = 0; j < i && !repeats; j++) {
			uint32_t c = etc_accuracy_row_at(acc, j)->block;
			repeats = c != b && same_block_name(insp, b, c);
		}
	}
	if (!repeats)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *a = etc_accuracy_row_at(acc, i);
		for (size_t j = i + 1; j < n; j++) {
			const etc_accuracy_row *b = etc_accuracy_row_at(acc, j);
			if (a->block != b->block && shown_run(a) == shown_run(b) &&
			    a->output == b->output && a->reference == b->reference &&
			    same_block_name(insp, a->block, b->block))
				return ETC_ACCURACY_ID_REF | ETC_ACCURACY_ID_BLOCK;
		}
	}
	return ETC_ACCURACY_ID_REF;
}

/*
 * The plot label ("run 0 ref 1 out 0", the block's name first when the rows
 * come from differently named blocks) and the file name part
 * ("Execute_run0_ref1_out0") of row r: the terminal table's columns, with
 * the parts etc_report_accuracy_id_parts asks for.
 */
static void plot_ident(char *label, size_t lcap, char *file, size_t fcap, const etc_event_block *b,
                       const etc_accuracy_row *r, unsigned parts, bool with_name)
{
	int nl = (int)(b->name.len > 24 ? 24 : b->name.len),
	    nf = (int)(b->name.len > 32 ? 32 : b->name.len);
	char blk[24] = "", blkf[24] = "", ref[24] = "", reff[24] = "";
	if (parts & ETC_ACCURACY_ID_BLOCK) {
		snprintf(blk, sizeof blk, " (block %u)", r->block);
		snprintf(blkf, sizeof blkf, "_block%u", r->block);
	}
	if ((parts & ETC_ACCURACY_ID_REF) && r->reference >= 0) {
		snprintf(ref, sizeof ref, " ref %d", r->reference);
		snprintf(reff, sizeof reff, "_ref%d", r->reference);
	}
	if (with_name || (parts & ETC_ACCURACY_ID_BLOCK))
		snprintf(label, lcap, "%.*s%s run %u%s out %u", nl, b->name.ptr, blk, r->run, ref,
		         r->output);
	else
		snprintf(label, lcap, "run %u%s out %u", r->run, ref, r->output);
	snprintf(file, fcap, "%.*s%s_run%u%s_out%u", nf, b->name.ptr, blkf, r->run, reff,
	         r->output);
	for (char *c = file; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' || *c == '.'))
			*c = '_';
}

/* The axis labels of a heat map of `t`: its last two dimensions. */
static void map_axes(const etc_tensor *t, char *x, char *y, size_t cap)
{
	uint32_t d = t->ndim;
	snprintf(x, cap, "dim %u (%lld)", d - 1, (long long)etc_tensor_size(t, d - 1));
	if (d == 2)
		snprintf(y, cap, "dim 0 (%lld)", (long long)etc_tensor_size(t, 0));
	else
		snprintf(y, cap, "dims 0-%u flattened (%llu)", d - 2,
		         (unsigned long long)(t->numel / (uint64_t)etc_tensor_size(t, d - 1)));
}

/* "; largest at [1, 0, 123, 77]" for a flat index of a tensor of 3 or more
 * dimensions (the heat map's rows flatten the leading ones); "" otherwise. */
static void where_text(const etc_tensor *t, uint64_t flat, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (t->ndim < 3 || flat >= t->numel || cap < 32)
		return;
	uint64_t idx[16];
	uint32_t d = t->ndim > 16 ? 16 : t->ndim;
	for (uint32_t i = d; i-- > 0;) {
		uint64_t size = (uint64_t)etc_tensor_size(t, i);
		idx[i] = size ? flat % size : 0;
		flat = size ? flat / size : 0;
	}
	size_t at = (size_t)snprintf(buf, cap, "\nlargest at element [");
	for (uint32_t i = 0; i < d && at < cap; i++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%llu", i ? ", " : "",
		                       (unsigned long long)idx[i]);
	if (at < cap)
		snprintf(buf + at, cap - at, "]");
}

/* Does metric m of `v` fail threshold `thr` (NaN: not gated, never fails)? */
static bool metric_fails(size_t m, double v, double thr, const etc_accuracy_row *r)
{
	(void)r;
	if (isnan(thr))
		return false; /* not gated: drawn neutral, never "fail" */
	if (m == 0)
		return !(v >= thr);
	if (m == 2)
		return !(v <= thr); /* drawn as 1 - cosine */
	return !(v <= thr);
}

int etc_report_accuracy_plots(const etc_plot_options *o, const etc_accuracy *acc, unsigned metrics,
                              const etc_inspector *insp, etc_plot_result *res, etc_error *err)
{
	size_t n = etc_accuracy_row_count(acc), k = 0;
	const etc_accuracy_options *ao = etc_accuracy_options_get(acc);
	const char **labels = calloc(n ? n : 1, sizeof *labels);
	char(*names)[112] = calloc(n ? n : 1, sizeof *names);
	char(*texts)[112] = calloc(n ? n : 1, sizeof *texts);
	double *vals = calloc(n ? n : 1, sizeof *vals);
	bool *failing = calloc(n ? n : 1, sizeof *failing);
	size_t *rows = calloc(n ? n : 1, sizeof *rows);
	size_t *group = calloc(n ? n : 1, sizeof *group);
	size_t *members = calloc(n ? n : 1, sizeof *members);
	etc_sbuf same = {0}, tiny = {0};
	size_t nsame = 0, ntiny = 0;
	int rc = 0;
	if (!labels || !names || !texts || !vals || !failing || !rows || !group || !members) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	/* the block's name in labels only when the rows' blocks are named differently */
	bool many_names = false;
	for (size_t i = 1; i < n && !many_names; i++)
		many_names = !same_block_name(insp, etc_accuracy_row_at(acc, i)->block,
		                              etc_accuracy_row_at(acc, 0)->block);
	unsigned parts = etc_report_accuracy_id_parts(acc, insp);
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		if (!r->has_metrics)
			continue;
		plot_ident(texts[k], sizeof texts[k], names[k], sizeof names[k],
		           etc_inspector_block(insp, r->block), r, parts, many_names);
		labels[k] = texts[k];
		rows[k++] = i;
	}
	static const struct {
		size_t index;
		const char *file, *title, *ylabel, *thr_fmt;
		bool log;
	} bars[] = {{0, "metric_snr", "SNR per output", "SNR (dB)", "min SNR %.6g dB", false},
	            {1, "metric_mse", "MSE per output", "MSE (log scale)", "max MSE %.6g", true},
	            {2, "metric_cosine", "1 \xe2\x88\x92 cosine similarity per output",
	             "1 \xe2\x88\x92 cosine (log scale)", "min cosine %.9g", true},
	            {3, "metric_l1", "mean abs error per output",
	             "mean |actual \xe2\x88\x92 reference|", NULL, true},
	            {4, "metric_max_abs", "max abs error per output",
	             "max |actual \xe2\x88\x92 reference|", "max abs %.6g", true},
	            {5, "metric_max_rel", "max relative error per output",
	             "max |actual \xe2\x88\x92 reference| / |reference|", NULL, true}};
	/* the default set (no --metrics): SNR, the others only when gated; an
	 * ungated metric's bars (grey) say less than the SNR's and the table
	 * has its values. Named in --metrics: drawn. */
	bool by_default = !metrics;
	if (!metrics)
		metrics = 0x1 | 0x2 | 0x4 | 0x10;
	const double thresholds[6] = {ao->min_snr, ao->max_mse, ao->min_cosine,
	                              NAN,         ao->max_abs, NAN};
	for (size_t m = 0; m < sizeof bars / sizeof bars[0] && rc == 0 && k; m++) {
		size_t mi = bars[m].index;
		if (!(metrics & (1u << mi)) || (by_default && mi != 0 && isnan(thresholds[mi])))
			continue;
		double thr = thresholds[mi];
		if (mi == 2 && !isnan(thr))
			thr = 1 - thr;
		for (size_t j = 0; j < k; j++) {
			const etc_accuracy_row *r = etc_accuracy_row_at(acc, rows[j]);
			vals[j] = metric_value(&r->metrics, mi);
			if (mi == 2)
				vals[j] = 1 - vals[j];
			failing[j] = metric_fails(mi, vals[j], thr, r);
		}
		char thr_text[96] = "";
		if (!isnan(thr) && bars[m].thr_fmt)
			snprintf(thr_text, sizeof thr_text, bars[m].thr_fmt, thresholds[mi]);
		etc_plot_style st = {thr, thr_text, failing, bars[m].log, NULL, false, 0};
		etc_plot_options po = *o;
		po.style = &st;
		rc = etc_plot_bars(&po, bars[m].file, bars[m].title, bars[m].ylabel, k, labels,
		                   vals, res, err);
	}
	/*
	 * One heat map and histogram per distinct (block name, output, reference):
	 * runs against the same reference draw the worst run only (failing
	 * first, then the largest error), failing groups first; every map of an
	 * output shares one colour scale, the largest error of that output.
	 */
	size_t ngroups = 0;
	for (size_t j = 0; j < k && rc == 0; j++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, rows[j]);
		if (r->metrics.identical) {
			etc_sbuf_printf(&same, "%s%s", nsame++ ? ", " : "", labels[j]);
			continue;
		}
		size_t g = 0;
		for (; g < ngroups; g++) {
			const etc_accuracy_row *q = etc_accuracy_row_at(acc, rows[group[g]]);
			if (q->output == r->output && q->reference == r->reference &&
			    same_block_name(insp, q->block, r->block))
				break;
		}
		if (g == ngroups) {
			group[ngroups] = j;
			members[ngroups++] = 1;
			continue;
		}
		members[g]++;
		const etc_accuracy_row *q = etc_accuracy_row_at(acc, rows[group[g]]);
		bool rf = r->status == ETC_ROW_FAIL, qf = q->status == ETC_ROW_FAIL;
		if (rf > qf || (rf == qf && r->metrics.max_abs > q->metrics.max_abs))
			group[g] = j;
	}
	/* failing groups first, each side in table order */
	for (size_t a = 1; a < ngroups; a++)
		for (size_t b = a; b > 0; b--) {
			bool fb = etc_accuracy_row_at(acc, rows[group[b]])->status == ETC_ROW_FAIL,
			     fa = etc_accuracy_row_at(acc, rows[group[b - 1]])->status ==
			          ETC_ROW_FAIL;
			if (!(fb && !fa))
				break;
			size_t t = group[b], c = members[b];
			group[b] = group[b - 1];
			members[b] = members[b - 1];
			group[b - 1] = t;
			members[b - 1] = c;
		}
	for (size_t g = 0; g < ngroups && rc == 0; g++) {
		size_t j = group[g];
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, rows[j]);
		etc_diff_ctx d;
		char name[160], title[400], xl[64], yl[64], runs[48] = "";
		if (etc_accuracy_row_values(acc, rows[j], &d.a, &d.r) < 0 || !d.a.count)
			continue;
		if (members[g] > 1)
			snprintf(runs, sizeof runs, " (worst of %zu runs)", members[g]);
		const etc_tensor *t = etc_accuracy_row_tensor(acc, rows[j]);
		if (d.a.count > 16) {
			d.absolute = false;
			snprintf(name, sizeof name, "error_hist_%s", names[j]);
			snprintf(title, sizeof title, "actual \xe2\x88\x92 reference, %s%s %s",
			         labels[j], runs, r->shape);
			rc = etc_plot_histogram_read(o, name, title, etc_plot_read_diff_, &d,
			                             d.a.count, 50, res, err);
		} else {
			etc_sbuf_printf(&tiny, "%s%s", ntiny++ ? ", " : "", labels[j]);
		}
		if (rc < 0 || !t || t->ndim < 2 || !etc_tensor_size(t, t->ndim - 1))
			continue;
		double scale = 0;
		for (size_t i = 0; i < k; i++) {
			const etc_accuracy_row *q = etc_accuracy_row_at(acc, rows[i]);
			if (q->output == r->output && same_block_name(insp, q->block, r->block) &&
			    isfinite(q->metrics.max_abs) && q->metrics.max_abs > scale)
				scale = q->metrics.max_abs;
		}
		uint64_t cols = (uint64_t)etc_tensor_size(t, t->ndim - 1);
		snprintf(name, sizeof name, "heatmap_%s", names[j]);
		char where[96], cbl[96];
		where_text(t, r->metrics.max_abs_index, where, sizeof where);
		snprintf(title, sizeof title, "|actual \xe2\x88\x92 reference|, %s%s %s%s",
		         labels[j], runs, r->shape, where);
		snprintf(cbl, sizeof cbl,
		         "|actual \xe2\x88\x92 reference|, one scale for out %u (0 to %.4g)",
		         r->output, scale);
		map_axes(t, xl, yl, sizeof xl);
		d.absolute = true;
		etc_plot_style st = {NAN, NULL, NULL, false, NULL, false, scale};
		etc_plot_options po = *o;
		po.style = &st;
		rc = etc_plot_error_map(&po, name, title, xl, yl, cbl, etc_plot_read_diff_, &d,
		                        t->numel / cols, cols, res, err);
	}
	if (rc == 0 && o && o->batch && nsame) {
		char line[1024];
		snprintf(line, sizeof line,
		         "identical to the reference (no heat map, no histogram): %s",
		         same.p ? same.p : "");
		rc = etc_plot_batch_note(o->batch, line, err);
	}
	if (rc == 0 && o && o->batch && ntiny) {
		char line[1024];
		snprintf(line, sizeof line, "16 elements or fewer (no histogram): %s",
		         tiny.p ? tiny.p : "");
		rc = etc_plot_batch_note(o->batch, line, err);
	}
done:
	etc_sbuf_free(&same);
	etc_sbuf_free(&tiny);
	free(labels);
	free(names);
	free(texts);
	free(vals);
	free(failing);
	free(rows);
	free(group);
	free(members);
	return rc;
}
