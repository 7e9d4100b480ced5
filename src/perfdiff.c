/*
 * perfdiff.c - the performance diff of perfdiff.h: the baseline's compared
 * events go into a hash table keyed by (block name, block rank, event
 * signature); each current event looks itself up there (linear), then the
 * rows are sorted by regression (n log n). Also the diff's table and its
 * object in the --json report.
 */
#include "etcompare/perfdiff.h"
#include "internal.h"
#include "report_private.h"

#include <math.h>
#include <stdlib.h>

struct etc_perfdiff {
	const etc_inspector *base, *cur;
	etc_perfdiff_options opt;
	etc_perfdiff_row *rows;
	size_t nrows, base_only, cur_only, failures;
};

void etc_perfdiff_options_init(etc_perfdiff_options *opt)
{
	opt->max_regression = NAN;
	opt->min_event_time = 0;
}

static bool name_is(etc_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.ptr, lit, n) == 0;
}

static bool str_eq(etc_str a, etc_str b)
{
	return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

/* An event of one side, with what identifies it. */
typedef struct key {
	etc_str block;
	uint32_t rank; /* among blocks of that name */
	const etc_inspector_event *ev;
	size_t b, e;
	uint64_t hash;
	bool matched;
} key;

static uint64_t hash_str(uint64_t h, etc_str s)
{
	for (size_t i = 0; i < s.len; i++)
		h = (h ^ (uint8_t)s.ptr[i]) * 0x100000001b3ULL;
	return (h ^ s.len) * 0x100000001b3ULL;
}

static uint64_t key_hash(const key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	h = hash_str(h, k->block);
	h = (h ^ k->rank) * 0x100000001b3ULL;
	h = hash_str(h, k->ev->name);
	h = (h ^ (uint32_t)k->ev->instruction_id) * 0x100000001b3ULL;
	h = (h ^ (uint32_t)k->ev->delegate_debug_id_int) * 0x100000001b3ULL;
	h = hash_str(h, k->ev->delegate_debug_id_str);
	return h ^ (h >> 31);
}

static bool key_eq(const key *a, const key *b)
{
	return a->hash == b->hash && a->rank == b->rank && str_eq(a->block, b->block) &&
	       str_eq(a->ev->name, b->ev->name) && a->ev->instruction_id == b->ev->instruction_id &&
	       a->ev->delegate_debug_id_int == b->ev->delegate_debug_id_int &&
	       str_eq(a->ev->delegate_debug_id_str, b->ev->delegate_debug_id_str);
}

/* The compared events of `in`, with keys. */
static int collect(const etc_inspector *in, key **out, size_t *n_out, etc_error *err)
{
	size_t nb = etc_inspector_block_count(in), n = 0;
	for (size_t b = 0; b < nb; b++)
		n += etc_inspector_block(in, b)->event_count;
	key *keys = malloc((n ? n : 1) * sizeof *keys);
	uint32_t *rank = calloc(nb ? nb : 1, sizeof *rank);
	if (!keys || !rank) {
		free(keys);
		free(rank);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	n = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		/* blocks are few: a quadratic rank is fine */
		for (size_t a = 0; a < b; a++)
			if (str_eq(etc_inspector_block(in, a)->name, blk->name))
				rank[b]++;
		bool native = false;
		for (size_t e = 0; e < blk->event_count && !native; e++)
			native = blk->events[e].name.len > 12 &&
			         !memcmp(blk->events[e].name.ptr, "native_call_", 12);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (!ev->has_perf || (native && name_is(ev->name, "OPERATOR_CALL")))
				continue;
			key *k = &keys[n++];
			k->block = blk->name;
			k->rank = rank[b];
			k->ev = ev;
			k->b = b;
			k->e = e;
			k->matched = false;
			k->hash = key_hash(k);
		}
	}
	free(rank);
	*out = keys;
	*n_out = n;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const etc_perfdiff_row *x = a, *y = b;
	if (x->below_min != y->below_min)
		return x->below_min ? 1 : -1;
	bool xn = isnan(x->change_percent), yn = isnan(y->change_percent);
	if (xn != yn)
		return xn ? 1 : -1;
	if (!xn && x->change_percent != y->change_percent)
		return x->change_percent < y->change_percent ? 1 : -1;
	if (x->change != y->change)
		return x->change < y->change ? 1 : -1;
	if (x->cur_block != y->cur_block)
		return x->cur_block < y->cur_block ? -1 : 1;
	return (x->cur_event > y->cur_event) - (x->cur_event < y->cur_event);
}

int etc_perfdiff_create(etc_perfdiff **out, const etc_inspector *base, const etc_inspector *cur,
                        const etc_perfdiff_options *opt, etc_error *err)
{
	if (!out || !base || !cur)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_perfdiff_create: NULL argument");
	if (etc_inspector_options_get(base)->target_time_scale !=
	    etc_inspector_options_get(cur)->target_time_scale)
		return etc_fail(
		    err, ETC_ERR_USAGE, NULL, -1,
		    "the baseline and the current ETDump are reported in different units");
	etc_perfdiff *d = calloc(1, sizeof *d);
	if (!d)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	d->base = base;
	d->cur = cur;
	if (opt)
		d->opt = *opt;
	else
		etc_perfdiff_options_init(&d->opt);
	key *bk = NULL, *ck = NULL;
	size_t nb = 0, nc = 0, cap = 16;
	uint32_t *table = NULL;
	int rc = collect(base, &bk, &nb, err);
	if (rc == 0)
		rc = collect(cur, &ck, &nc, err);
	while (rc == 0 && cap < 2 * nb + 2)
		cap *= 2;
	if (rc == 0 && (!(table = calloc(cap, sizeof *table)) ||
	                !(d->rows = calloc(nc ? nc : 1, sizeof *d->rows))))
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < nb; i++) {
		size_t s = (size_t)bk[i].hash & (cap - 1);
		while (table[s])
			s = (s + 1) & (cap - 1);
		table[s] = (uint32_t)i + 1;
	}
	bool gate = !isnan(d->opt.max_regression);
	for (size_t i = 0; i < nc; i++) {
		const key *c = &ck[i];
		size_t s = (size_t)c->hash & (cap - 1);
		key *m = NULL;
		for (; table[s]; s = (s + 1) & (cap - 1)) {
			key *k = &bk[table[s] - 1];
			if (!k->matched && key_eq(k, c)) {
				m = k;
				break;
			}
		}
		if (!m) {
			d->cur_only++;
			continue;
		}
		m->matched = true;
		etc_perfdiff_row *r = &d->rows[d->nrows++];
		r->block = c->block;
		r->name = c->ev->name;
		r->instruction_id = c->ev->instruction_id;
		r->base_block = m->b;
		r->base_event = m->e;
		r->cur_block = c->b;
		r->cur_event = c->e;
		r->base_p50 = m->ev->stats.p50;
		r->cur_p50 = c->ev->stats.p50;
		r->change = r->cur_p50 - r->base_p50;
		if (r->base_p50 == 0 && r->cur_p50 == 0) {
			r->ratio = r->change_percent = NAN;
		} else {
			r->ratio = r->cur_p50 / r->base_p50;
			r->change_percent = r->base_p50 != 0
			                        ? 100 * r->change / r->base_p50
			                        : (r->change > 0 ? INFINITY : -INFINITY);
		}
		r->is_execute = !c->ev->is_delegated_op && name_is(c->ev->name, "Method::execute");
		r->below_min = !r->is_execute && r->base_p50 < d->opt.min_event_time &&
		               r->cur_p50 < d->opt.min_event_time;
		r->gated = gate && !r->below_min;
		r->failed = r->gated && r->change_percent > d->opt.max_regression;
		d->failures += r->failed;
	}
	for (size_t i = 0; i < nb; i++)
		d->base_only += !bk[i].matched;
	qsort(d->rows, d->nrows, sizeof *d->rows, cmp_row);
done:
	free(bk);
	free(ck);
	free(table);
	if (rc < 0) {
		etc_perfdiff_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void etc_perfdiff_free(etc_perfdiff *d)
{
	if (!d)
		return;
	free(d->rows);
	free(d);
}

size_t etc_perfdiff_row_count(const etc_perfdiff *d)
{
	return d->nrows;
}

const etc_perfdiff_row *etc_perfdiff_row_at(const etc_perfdiff *d, size_t i)
{
	return i < d->nrows ? &d->rows[i] : NULL;
}

size_t etc_perfdiff_baseline_only(const etc_perfdiff *d)
{
	return d->base_only;
}

size_t etc_perfdiff_current_only(const etc_perfdiff *d)
{
	return d->cur_only;
}

size_t etc_perfdiff_failures(const etc_perfdiff *d)
{
	return d->failures;
}

const etc_perfdiff_options *etc_perfdiff_options_get(const etc_perfdiff *d)
{
	return &d->opt;
}

const etc_inspector *etc_perfdiff_baseline(const etc_perfdiff *d)
{
	return d->base;
}

const etc_inspector *etc_perfdiff_current(const etc_perfdiff *d)
{
	return d->cur;
}

/* --- reports -------------------------------------------------------------------- */

static const char *gate_word(const etc_perfdiff_row *r)
{
	return r->failed ? "FAIL" : r->gated ? "ok" : r->below_min ? "below min" : "-";
}

static void pct_text(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (isinf(v))
		snprintf(buf, cap, v > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, cap, "%+.2f", v);
}

int etc_report_perfdiff(FILE *f, const etc_perfdiff *d, size_t max_rows, etc_error *err)
{
	const char *unit =
	    etc_time_scale_name(etc_inspector_options_get(d->cur)->target_time_scale);
	char hdr[9][64];
	const char *hp[9];
	static const bool right[9] = {false, false, true, true, true, true, true, true, false};
	snprintf(hdr[0], sizeof hdr[0], "block");
	snprintf(hdr[1], sizeof hdr[1], "event");
	snprintf(hdr[2], sizeof hdr[2], "instr");
	snprintf(hdr[3], sizeof hdr[3], "baseline p50 (%s)", unit);
	snprintf(hdr[4], sizeof hdr[4], "current p50 (%s)", unit);
	snprintf(hdr[5], sizeof hdr[5], "change (%s)", unit);
	snprintf(hdr[6], sizeof hdr[6], "ratio");
	snprintf(hdr[7], sizeof hdr[7], "change %%");
	snprintf(hdr[8], sizeof hdr[8], "gate");
	for (int i = 0; i < 9; i++)
		hp[i] = hdr[i];
	etc_grid g;
	etc_grid_init_(&g, 9, hp, right);
	size_t n = max_rows && max_rows < d->nrows ? max_rows : d->nrows;
	for (size_t i = 0; i < n; i++) {
		const etc_perfdiff_row *r = &d->rows[i];
		char pct[32];
		etc_grid_textf_(&g, "%.*s", (int)(r->block.len > 100 ? 100 : r->block.len),
		                r->block.ptr);
		etc_grid_textf_(&g, "%.*s", (int)(r->name.len > 200 ? 200 : r->name.len),
		                r->name.ptr);
		etc_grid_textf_(&g, "%d", r->instruction_id);
		etc_grid_num_(&g, r->base_p50);
		etc_grid_num_(&g, r->cur_p50);
		etc_grid_num_(&g, r->change);
		etc_grid_num_(&g, r->ratio);
		pct_text(pct, sizeof pct, r->change_percent);
		etc_grid_text_(&g, pct);
		etc_grid_text_(&g, gate_word(r));
	}
	int rc = n ? etc_grid_write_(&g, f) : 0;
	etc_grid_free_(&g);
	if (rc == ETC_ERR_NOMEM)
		return etc_fail(err, rc, NULL, -1, "out of memory");
	if (n < d->nrows)
		fprintf(f, "(%zu more events not shown)\n", d->nrows - n);
	for (size_t i = 0; i < d->nrows; i++) {
		const etc_perfdiff_row *r = &d->rows[i];
		if (!r->is_execute)
			continue;
		char a[ETC_FMT_NUM], b[ETC_FMT_NUM], pct[32];
		etc_fmt_g(a, r->base_p50);
		etc_fmt_g(b, r->cur_p50);
		pct_text(pct, sizeof pct, r->change_percent);
		fprintf(f, "Method::execute (block %.*s): p50 %s -> %s %s (%s%%)%s\n",
		        (int)(r->block.len > 100 ? 100 : r->block.len), r->block.ptr, a, b, unit,
		        pct, r->failed ? ": regression beyond the gate" : "");
	}
	fprintf(f, "%zu events matched, %zu only in the baseline, %zu only in the current ETDump",
	        d->nrows, d->base_only, d->cur_only);
	if (!isnan(d->opt.max_regression)) {
		char mx[ETC_FMT_NUM], mn[ETC_FMT_NUM];
		etc_fmt_g(mx, d->opt.max_regression);
		etc_fmt_g(mn, d->opt.min_event_time);
		fprintf(f,
		        "; gate: %zu event%s regress%s more than %s%% (Method::execute and events "
		        "from %s %s)",
		        d->failures, d->failures == 1 ? "" : "s", d->failures == 1 ? "es" : "", mx,
		        mn, unit);
	}
	fputc('\n', f);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the performance diff");
	return 0;
}

void etc_perfdiff_json_(etc_sbuf *b, const etc_perfdiff *d)
{
	const char *unit =
	    etc_time_scale_name(etc_inspector_options_get(d->cur)->target_time_scale);
	const char *bn = etc_etdump_name(etc_inspector_etdump(d->base));
	etc_sbuf_puts(b, "{\"baseline\": ");
	etc_sbuf_json_str(b, bn, strlen(bn));
	etc_sbuf_puts(b, ", \"unit\": ");
	etc_sbuf_json_str(b, unit, strlen(unit));
	etc_sbuf_puts(b, ", \"max_regression\": ");
	if (isnan(d->opt.max_regression))
		etc_sbuf_puts(b, "null");
	else
		etc_json_num_(b, d->opt.max_regression);
	etc_sbuf_puts(b, ", \"min_event_time\": ");
	etc_json_num_(b, d->opt.min_event_time);
	etc_sbuf_printf(b,
	                ", \"matched\": %zu, \"baseline_only\": %zu, \"current_only\": %zu, "
	                "\"failures\": %zu,\n    \"rows\": [",
	                d->nrows, d->base_only, d->cur_only, d->failures);
	for (size_t i = 0; i < d->nrows; i++) {
		const etc_perfdiff_row *r = &d->rows[i];
		etc_sbuf_puts(b, i ? ",\n      {\"block\": " : "\n      {\"block\": ");
		etc_sbuf_json_str(b, r->block.ptr, r->block.len);
		etc_sbuf_puts(b, ", \"event_name\": ");
		etc_sbuf_json_str(b, r->name.ptr, r->name.len);
		etc_sbuf_printf(b,
		                ", \"instruction_id\": %d, \"baseline_p50\": ", r->instruction_id);
		etc_json_num_(b, r->base_p50);
		etc_sbuf_puts(b, ", \"current_p50\": ");
		etc_json_num_(b, r->cur_p50);
		etc_sbuf_puts(b, ", \"change\": ");
		etc_json_num_(b, r->change);
		etc_sbuf_puts(b, ", \"ratio\": ");
		etc_json_num_(b, r->ratio);
		etc_sbuf_puts(b, ", \"change_percent\": ");
		etc_json_num_(b, r->change_percent);
		etc_sbuf_printf(b,
		                ", \"is_execute\": %s, \"below_min\": %s, \"gated\": %s, "
		                "\"failed\": %s}",
		                r->is_execute ? "true" : "false", r->below_min ? "true" : "false",
		                r->gated ? "true" : "false", r->failed ? "true" : "false");
	}
	etc_sbuf_puts(b, "]}");
}
