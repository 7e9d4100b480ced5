/*
 * perfdiff.c - the performance diff of perfdiff.h: the blocks of the two
 * ETDumps are paired first (pair_blocks, by name and rank among the blocks
 * of the same events, then among those left; quadratic in blocks, which
 * are few), then the baseline's compared events go into a hash table keyed
 * by (baseline block, event signature); each current event looks itself up
 * there (linear), then the rows are sorted by regression (n log n). Events
 * left without a counterpart go to a list of their own.
 * The table and JSON are in report/perfdiff.c.
 */
#include "etcompare/perfdiff.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>

#define NONE SIZE_MAX

struct etc_perfdiff {
	const etc_inspector *base, *cur;
	etc_perfdiff_options opt;
	etc_perfdiff_row *rows;
	size_t nrows, base_only, cur_only, failures;
	etc_perfdiff_unmatched *unmatched;
	size_t nunmatched;
	size_t ncur_blocks, nbase_blocks;
	size_t *pair;            /* per current block: its baseline block, or NONE */
	etc_perfdiff_match *how; /* per current block */
	bool *base_used;         /* per baseline block: a current block is compared with it */
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
	return a.len == b.len && (!a.len || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static bool is_execute(const etc_inspector_event *ev)
{
	return !ev->is_delegated_op && name_is(ev->name, "Method::execute");
}

/* Nanoseconds per unit; a cycle counts as 1 (cycles are never converted). */
static const double ns_per_unit[] = {1, 1e3, 1e6, 1e9, 1};

/* The p50 of ev in whole ticks of its shown unit's finest clock: each run's
 * duration times the nanoseconds per shown unit, rounded to an integer. The
 * durations were integer timestamp differences scaled once, so this undoes
 * the scaling exactly (below 2^51 ns, 26 days) and the change computed from
 * it does not depend on --target_time_scale: 0.0011 ms against 0.001 ms is
 * 1100 against 1000, exactly +10 %. */
static int tick_p50(const etc_inspector_event *ev, double *out)
{
	double f =
	    ns_per_unit[ev->time_scale >= 0 && ev->time_scale <= ETC_TIME_CYCLES ? ev->time_scale
	                                                                         : ETC_TIME_CYCLES];
	double small[16] = {0};
	double *v = ev->run_count <= 16 ? small : malloc(ev->run_count * sizeof *v);
	if (!v)
		return ETC_ERR_NOMEM;
	for (uint32_t i = 0; i < ev->run_count; i++)
		v[i] = nearbyint(ev->raw[i] * f);
	etc_perf_stats st;
	etc_perf_stats_compute(v, ev->run_count, &st);
	*out = st.p50;
	if (v != small)
		free(v);
	return 0;
}

/* An event of one side, with what identifies it. */
typedef struct key {
	size_t pb; /* the baseline block it is looked up in (NONE: none) */
	const etc_inspector_event *ev;
	size_t b, e;
	uint64_t hash;
	bool matched;  /* compared with an event of a paired block */
	bool fb_used;  /* baseline: compared with an event of a fallback block */
	size_t fb_gen; /* baseline: the fallback block that took it last, + 1 */
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
	h = (h ^ (uint64_t)k->pb) * 0x100000001b3ULL;
	h = hash_str(h, k->ev->name);
	h = (h ^ (uint32_t)k->ev->instruction_id) * 0x100000001b3ULL;
	h = (h ^ (uint32_t)k->ev->delegate_debug_id_int) * 0x100000001b3ULL;
	h = hash_str(h, k->ev->delegate_debug_id_str);
	return h ^ (h >> 31);
}

/* The Inspector's event signature. */
static bool sig_eq(const etc_inspector_event *a, const etc_inspector_event *b)
{
	return str_eq(a->name, b->name) && a->instruction_id == b->instruction_id &&
	       a->delegate_debug_id_int == b->delegate_debug_id_int &&
	       str_eq(a->delegate_debug_id_str, b->delegate_debug_id_str);
}

static bool key_eq(const key *a, const key *b)
{
	return a->hash == b->hash && a->pb == b->pb && sig_eq(a->ev, b->ev);
}

/* One side's compared events with their keys; those of block b are
 * keys[start[b] .. start[b + 1]). */
typedef struct side {
	const etc_inspector *in;
	size_t nblocks, n;
	key *keys;
	size_t *start;
} side;

static int collect(side *s, const etc_inspector *in, etc_error *err)
{
	size_t nb = etc_inspector_block_count(in), n = 0;
	for (size_t b = 0; b < nb; b++)
		n += etc_inspector_block(in, b)->event_count;
	s->in = in;
	s->nblocks = nb;
	s->keys = malloc((n ? n : 1) * sizeof *s->keys);
	s->start = malloc((nb + 1) * sizeof *s->start);
	if (!s->keys || !s->start)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	n = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		s->start[b] = n;
		bool native = false;
		for (size_t e = 0; e < blk->event_count && !native; e++)
			native = blk->events[e].name.len > 12 &&
			         !memcmp(blk->events[e].name.ptr, "native_call_", 12);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (!ev->has_perf || (native && name_is(ev->name, "OPERATOR_CALL")))
				continue;
			key *k = &s->keys[n++];
			memset(k, 0, sizeof *k);
			k->pb = b;
			k->ev = ev;
			k->b = b;
			k->e = e;
		}
	}
	s->start[nb] = n;
	s->n = n;
	return 0;
}

static void side_free(side *s)
{
	free(s->keys);
	free(s->start);
}

/* Do the blocks named `name` pair by input: every one of them, in both
 * ETDumps, has a bundled_input_index? */
static bool by_input(const side *base, const side *cur, etc_str name)
{
	const side *both[2] = {base, cur};
	for (int i = 0; i < 2; i++)
		for (size_t b = 0; b < both[i]->nblocks; b++) {
			const etc_event_block *blk = etc_inspector_block(both[i]->in, b);
			if (str_eq(blk->name, name) && blk->bundled_input_index < 0)
				return false;
		}
	return true;
}

/* Does block b of `in` have block c's name (and input, when `input`)? */
static bool same_group(const etc_inspector *in, size_t b, const etc_event_block *c, bool input)
{
	const etc_event_block *x = etc_inspector_block(in, b);
	return str_eq(x->name, c->name) &&
	       (!input || x->bundled_input_index == c->bundled_input_index);
}

/* How slow baseline block b is: its Method::execute p50, else the sum of its
 * compared events' p50. */
static double block_weight(const side *s, size_t b)
{
	double sum = 0;
	for (size_t i = s->start[b]; i < s->start[b + 1]; i++) {
		if (is_execute(s->keys[i].ev))
			return s->keys[i].ev->stats.p50;
		sum += s->keys[i].ev->stats.p50;
	}
	return sum;
}

/* Did blocks cb (current) and bb (baseline) log the same compared events in
 * the same order? */
static bool same_events(const side *cur, size_t cb, const side *base, size_t bb)
{
	size_t n = cur->start[cb + 1] - cur->start[cb];
	if (!n || n != base->start[bb + 1] - base->start[bb])
		return false;
	for (size_t i = 0; i < n; i++)
		if (!sig_eq(cur->keys[cur->start[cb] + i].ev, base->keys[base->start[bb] + i].ev))
			return false;
	return true;
}

/* A hash of block b's name and compared events' signatures, in order. */
static uint64_t block_sig(const side *s, size_t b)
{
	uint64_t h = hash_str(0xcbf29ce484222325ULL, etc_inspector_block(s->in, b)->name);
	for (size_t i = s->start[b]; i < s->start[b + 1]; i++) {
		key k = s->keys[i];
		k.pb = 0;
		h = (h ^ key_hash(&k)) * 0x100000001b3ULL;
	}
	return h;
}

/* The fallback of unpaired current block c: the slowest baseline block of
 * its name with the same events, or NONE. An earlier unpaired block with the
 * same events has the same answer: taken from it, so that many blocks of one
 * signature cost one search, not one each. */
static size_t fallback_of(const etc_perfdiff *d, const side *base, const side *cur, size_t c,
                          const uint64_t *bsig, const uint64_t *csig)
{
	for (size_t a = c; a-- > 0;)
		if (d->how[a] != ETC_PERFDIFF_PAIRED && csig[a] == csig[c] &&
		    str_eq(etc_inspector_block(cur->in, a)->name,
		           etc_inspector_block(cur->in, c)->name) &&
		    same_events(cur, c, cur, a))
			return d->pair[a];
	const etc_event_block *blk = etc_inspector_block(cur->in, c);
	size_t best = NONE;
	double w_best = -INFINITY;
	for (size_t b = 0; b < base->nblocks; b++) {
		if (bsig[b] != csig[c] || !same_group(base->in, b, blk, false) ||
		    !same_events(cur, c, base, b))
			continue;
		double w = block_weight(base, b);
		if (best == NONE || w > w_best) {
			best = b;
			w_best = w;
		}
	}
	return best;
}

/* Blocks with one name and the same compared events in the same order form
 * a class (two methods that share a block name do not). In the joint
 * numbering j (current block j < ncur, baseline block j - ncur after),
 * cls[j] is the first block of j's class; each block is checked against the
 * first block of each earlier class with its hash only. */
static void block_classes(const side *base, const side *cur, const uint64_t *bsig,
                          const uint64_t *csig, size_t *cls)
{
	size_t nc = cur->nblocks, n = nc + base->nblocks;
	for (size_t j = 0; j < n; j++) {
		const side *sj = j < nc ? cur : base;
		size_t bj = j < nc ? j : j - nc;
		uint64_t hj = j < nc ? csig[j] : bsig[j - nc];
		cls[j] = j;
		for (size_t r = 0; r < j; r++) {
			const side *sr = r < nc ? cur : base;
			size_t br = r < nc ? r : r - nc;
			if (cls[r] != r || (r < nc ? csig[r] : bsig[r - nc]) != hj ||
			    !str_eq(etc_inspector_block(sr->in, br)->name,
			            etc_inspector_block(sj->in, bj)->name) ||
			    !same_events(sj, bj, sr, br))
				continue;
			cls[j] = r;
			break;
		}
	}
}

/* Pairs the free current blocks (cfree) with the free baseline blocks
 * (bfree): the k-th free current block of a name (and input) with the k-th
 * free baseline block of it, counting with `cls` only the blocks of its
 * class. The free blocks are those not yet paired when the pass starts. */
static void pair_by_rank(etc_perfdiff *d, const side *base, const side *cur, const size_t *cls,
                         const bool *cfree, const bool *bfree)
{
	size_t nc = cur->nblocks;
	for (size_t c = 0; c < nc; c++) {
		if (!cfree[c])
			continue;
		const etc_event_block *blk = etc_inspector_block(cur->in, c);
		bool input = by_input(base, cur, blk->name);
		size_t rank = 0;
		for (size_t a = 0; a < c; a++)
			rank += cfree[a] && (!cls || cls[a] == cls[c]) &&
			        same_group(cur->in, a, blk, input);
		for (size_t b = 0; b < base->nblocks; b++)
			if (bfree[b] && (!cls || cls[nc + b] == cls[c]) &&
			    same_group(base->in, b, blk, input) && rank-- == 0) {
				d->pair[c] = b;
				d->how[c] = ETC_PERFDIFF_PAIRED;
				d->base_used[b] = true;
				break;
			}
	}
}

/* d->pair, d->how, d->base_used: see perfdiff.h. */
static int pair_blocks(etc_perfdiff *d, const side *base, const side *cur, etc_error *err)
{
	size_t nc = cur->nblocks, nb = base->nblocks;
	uint64_t *bsig = malloc((nb ? nb : 1) * sizeof *bsig);
	uint64_t *csig = malloc((nc ? nc : 1) * sizeof *csig);
	size_t *cls = calloc(nc + nb ? nc + nb : 1, sizeof *cls);
	bool *cfree = calloc(nc ? nc : 1, sizeof *cfree);
	bool *bfree = calloc(nb ? nb : 1, sizeof *bfree);
	if (!bsig || !csig || !cls || !cfree || !bfree) {
		free(bsig);
		free(csig);
		free(cls);
		free(cfree);
		free(bfree);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t b = 0; b < nb; b++)
		bsig[b] = block_sig(base, b);
	for (size_t c = 0; c < nc; c++) {
		csig[c] = block_sig(cur, c);
		d->pair[c] = NONE;
		d->how[c] = ETC_PERFDIFF_UNPAIRED;
	}
	/* by rank among the blocks of the same events first, so that a method
	 * is compared with itself whatever order the methods ran in; then the
	 * blocks left (whose events changed) by rank among those left */
	block_classes(base, cur, bsig, csig, cls);
	for (size_t c = 0; c < nc; c++)
		cfree[c] = true;
	for (size_t b = 0; b < nb; b++)
		bfree[b] = true;
	pair_by_rank(d, base, cur, cls, cfree, bfree);
	for (size_t c = 0; c < nc; c++)
		cfree[c] = d->how[c] == ETC_PERFDIFF_UNPAIRED;
	for (size_t b = 0; b < nb; b++)
		bfree[b] = !d->base_used[b];
	pair_by_rank(d, base, cur, NULL, cfree, bfree);
	for (size_t c = 0; c < nc; c++) {
		if (d->how[c] != ETC_PERFDIFF_UNPAIRED)
			continue;
		d->pair[c] = fallback_of(d, base, cur, c, bsig, csig);
		if (d->pair[c] != NONE) {
			d->how[c] = ETC_PERFDIFF_FALLBACK;
			d->base_used[d->pair[c]] = true;
		}
	}
	free(bsig);
	free(csig);
	free(cls);
	free(cfree);
	free(bfree);
	return 0;
}

static void unmatched_add(etc_perfdiff *d, const key *k, bool in_baseline, bool whole_block)
{
	const etc_inspector *in = in_baseline ? d->base : d->cur;
	etc_perfdiff_unmatched *u = &d->unmatched[d->nunmatched++];
	u->in_baseline = in_baseline;
	u->block = k->b;
	u->event = k->e;
	u->block_name = etc_inspector_block(in, k->b)->name;
	u->name = k->ev->name;
	u->instruction_id = k->ev->instruction_id;
	u->p50 = k->ev->stats.p50;
	u->is_execute = is_execute(k->ev);
	u->whole_block = whole_block;
	u->unit = k->ev->time_scale;
	u->below_min = !u->is_execute &&
	               u->unit == etc_inspector_options_get(in)->target_time_scale &&
	               u->p50 < d->opt.min_event_time;
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
	side bs = {0}, cs = {0};
	size_t cap = 16;
	uint32_t *table = NULL;
	int rc = collect(&bs, base, err);
	if (rc == 0)
		rc = collect(&cs, cur, err);
	while (rc == 0 && cap < 2 * bs.n + 2)
		cap *= 2;
	if (rc == 0) {
		d->ncur_blocks = cs.nblocks;
		d->nbase_blocks = bs.nblocks;
		d->pair = malloc((cs.nblocks ? cs.nblocks : 1) * sizeof *d->pair);
		d->how = malloc((cs.nblocks ? cs.nblocks : 1) * sizeof *d->how);
		d->base_used = calloc(bs.nblocks ? bs.nblocks : 1, sizeof *d->base_used);
		table = calloc(cap, sizeof *table);
		d->rows = calloc(cs.n ? cs.n : 1, sizeof *d->rows);
		if (!d->pair || !d->how || !d->base_used || !table || !d->rows)
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	if (rc < 0)
		goto done;
	if ((rc = pair_blocks(d, &bs, &cs, err)) < 0)
		goto done;
	for (size_t i = 0; i < bs.n; i++) {
		bs.keys[i].hash = key_hash(&bs.keys[i]);
		size_t s = (size_t)bs.keys[i].hash & (cap - 1);
		while (table[s])
			s = (s + 1) & (cap - 1);
		table[s] = (uint32_t)i + 1;
	}
	bool gate = !isnan(d->opt.max_regression);
	int target = etc_inspector_options_get(cur)->target_time_scale;
	for (size_t i = 0; i < cs.n; i++) {
		key *c = &cs.keys[i];
		c->pb = d->pair[c->b];
		if (c->pb == NONE)
			continue;
		bool fallback = d->how[c->b] == ETC_PERFDIFF_FALLBACK;
		c->hash = key_hash(c);
		size_t s = (size_t)c->hash & (cap - 1);
		key *m = NULL;
		/* a baseline event is taken once by a paired block, and once by
		 * each fallback block that is compared with its block */
		for (; table[s]; s = (s + 1) & (cap - 1)) {
			key *k = &bs.keys[table[s] - 1];
			if ((fallback ? k->fb_gen != c->b + 1 : !k->matched) && key_eq(k, c)) {
				m = k;
				break;
			}
		}
		if (!m)
			continue;
		c->matched = true;
		if (fallback) {
			m->fb_gen = c->b + 1;
			m->fb_used = true;
		} else {
			m->matched = true;
		}
		etc_perfdiff_row *r = &d->rows[d->nrows++];
		r->block = etc_inspector_block(cur, c->b)->name;
		r->name = c->ev->name;
		r->instruction_id = c->ev->instruction_id;
		r->base_block = m->b;
		r->base_event = m->e;
		r->cur_block = c->b;
		r->cur_event = c->e;
		r->base_p50 = m->ev->stats.p50;
		r->cur_p50 = c->ev->stats.p50;
		r->change = r->cur_p50 - r->base_p50;
		r->unit = c->ev->time_scale;
		/* ratio and change from the integer ticks, not the shown values */
		double bt = r->base_p50, ct = r->cur_p50;
		if (m->ev->time_scale == c->ev->time_scale && m->ev->run_count &&
		    c->ev->run_count && (tick_p50(m->ev, &bt) < 0 || tick_p50(c->ev, &ct) < 0)) {
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			goto done;
		}
		if (bt == 0 && ct == 0) {
			r->ratio = r->change_percent = NAN;
		} else {
			r->ratio = ct / bt;
			r->change_percent =
			    bt != 0 ? 100 * (ct - bt) / bt : (ct > bt ? INFINITY : -INFINITY);
		}
		r->is_execute = is_execute(c->ev);
		/* min_event_time is in the target unit: rows in another one (a
		 * backend's cycles) are gated on their change alone */
		r->below_min = !r->is_execute && r->unit == target &&
		               r->base_p50 < d->opt.min_event_time &&
		               r->cur_p50 < d->opt.min_event_time;
		r->gated = gate && !r->below_min;
		r->failed = r->gated && r->change_percent > d->opt.max_regression;
		r->fallback = fallback;
		d->failures += r->failed;
	}
	for (size_t i = 0; i < cs.n; i++)
		d->cur_only += !cs.keys[i].matched;
	for (size_t i = 0; i < bs.n; i++)
		d->base_only += !bs.keys[i].matched && !bs.keys[i].fb_used;
	if (d->cur_only + d->base_only &&
	    !(d->unmatched = malloc((d->cur_only + d->base_only) * sizeof *d->unmatched))) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < cs.n; i++)
		if (!cs.keys[i].matched)
			unmatched_add(d, &cs.keys[i], false, d->pair[cs.keys[i].b] == NONE);
	for (size_t i = 0; i < bs.n; i++)
		if (!bs.keys[i].matched && !bs.keys[i].fb_used)
			unmatched_add(d, &bs.keys[i], true, !d->base_used[bs.keys[i].b]);
	qsort(d->rows, d->nrows, sizeof *d->rows, cmp_row);
done:
	side_free(&bs);
	side_free(&cs);
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
	free(d->unmatched);
	free(d->pair);
	free(d->how);
	free(d->base_used);
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

etc_perfdiff_match etc_perfdiff_block_match(const etc_perfdiff *d, size_t cur_block,
                                            size_t *base_block)
{
	bool in = cur_block < d->ncur_blocks;
	if (base_block)
		*base_block = in ? d->pair[cur_block] : NONE;
	return in ? d->how[cur_block] : ETC_PERFDIFF_UNPAIRED;
}

bool etc_perfdiff_baseline_block_used(const etc_perfdiff *d, size_t base_block)
{
	return base_block < d->nbase_blocks && d->base_used[base_block];
}

size_t etc_perfdiff_unmatched_count(const etc_perfdiff *d)
{
	return d->nunmatched;
}

const etc_perfdiff_unmatched *etc_perfdiff_unmatched_at(const etc_perfdiff *d, size_t i)
{
	return i < d->nunmatched ? &d->unmatched[i] : NULL;
}
