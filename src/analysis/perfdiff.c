/*
 * perfdiff.c - the performance diff of perfdiff.h: the baseline's compared
 * events go into a hash table keyed by (block name, block rank, event
 * signature); each current event looks itself up there (linear), then the
 * rows are sorted by regression (n log n).
 * The table and JSON are in report/perfdiff.c.
 */
#include "etcompare/perfdiff.h"
#include "core/internal.h"

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
	if (out)
		*out = NULL;
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
