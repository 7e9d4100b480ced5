/*
 * pairing.c - the content pairing of pairing.h: every set against every
 * candidate from one blocked matrix product per output. The loop is
 * element blocks outside, set blocks inside, so that each candidate's and
 * each set's values are read and converted to double exactly once; the
 * Gram terms of a block of sets against all candidates are one dgemm.
 * Large outputs are scored on a sketch first and the candidates that may
 * matter confirmed by a direct pass (see sketch_infer).
 */
#include "analysis/pairing.h"
#include "analysis/metrics_kernels.h"
#include "analysis/metrics_private.h"
#include "core/blas.h"
#include "core/parallel.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Below this fraction of sum a^2 + sum r^2 the Gram difference may have
 * cancelled to noise (dgemm of 1 Mi elements: ~1e-13 typical, 1e-10 worst):
 * the error energy is then summed directly. */
#define REFINE_BELOW 1e-7

void etc_pair_options_init_(etc_pair_options *o)
{
	o->min_margin_db = 1.0;
	o->floor_db = 0.0;
	o->block_sets = 0;
	o->block_elems = 0;
	o->sketch_elems = 0;
	o->exact = false;
	o->confirm_top = 2;
}

static bool has_data(const etc_pair_set *s, size_t p)
{
	return p < s->count && s->outputs[p].read != NULL;
}

/* Output p of both: same element count and shape (a NULL shape: count only). */
static bool output_agrees(const etc_pair_set *a, const etc_pair_set *b, size_t p)
{
	if (p >= a->count || p >= b->count || a->outputs[p].count != b->outputs[p].count)
		return false;
	return !(a->shapes && b->shapes && a->shapes[p] && b->shapes[p] &&
	         strcmp(a->shapes[p], b->shapes[p]) != 0);
}

/* Converts `len` values of v from `start` into dst and returns their sum of squares. */
static double convert(const etc_values *v, uint64_t start, size_t len, double *dst)
{
	v->read(v->src, start, len, dst);
	/* four partial sums: one chain of dependent adds would bound the loop */
	double s[4] = {0, 0, 0, 0};
	size_t j = 0;
	for (; j + 4 <= len; j += 4)
		for (size_t q = 0; q < 4; q++)
			s[q] += dst[j + q] * dst[j + q];
	for (; j < len; j++)
		s[0] += dst[j] * dst[j];
	return (s[0] + s[1]) + (s[2] + s[3]);
}

typedef struct work {
	const etc_pair_set *sets, *cands;
	const etc_pair_set *osets, *ocands; /* whose sizes and shapes decide agreement */
	size_t n, m, nb, kb;
	double *a, *b;             /* nb x kb and m x kb blocks */
	double *gram;              /* the group's sets x candidates */
	size_t *si, *ci;           /* the group's members */
	double *aa, *rr;           /* per vector and output: sum of squares */
	const size_t *aoff, *roff; /* first output's slot of each set / candidate */
	double *ra;                /* n x m, pooled over outputs */
	double *sq;                /* per row of a block: its sum of squares */
} work;

/* Rows [begin, end) of a block: row s holds elements [k0, k0 + kk) of output
 * p of vector idx[s] (a set or a candidate), sq[s] their sum of squares. */
typedef struct convert_job {
	const etc_pair_set *owners;
	const size_t *idx;
	size_t p, kk, ld;
	uint64_t k0;
	double *dst, *sq;
} convert_job;

static void convert_range(void *ctx, size_t begin, size_t end)
{
	const convert_job *j = ctx;
	for (size_t s = begin; s < end; s++)
		j->sq[s] =
		    convert(&j->owners[j->idx[s]].outputs[j->p], j->k0, j->kk, j->dst + s * j->ld);
}

/* Below this many elements a block is converted on the calling thread. */
#define CONVERT_SPLIT ((size_t)1 << 16)

/*
 * The rows of a block over the threads: converting reads each vector at
 * scattered places (a sketch: one cache and TLB miss per chunk), which the
 * product's own threads do not share. Each row's sum goes to its own slot,
 * so the bits do not depend on the threads.
 */
static void convert_rows(const work *w, const etc_pair_set *owners, const size_t *idx, size_t count,
                         size_t p, uint64_t k0, size_t kk, double *dst)
{
	convert_job j = {owners, idx, p, kk, w->kb, k0, dst, w->sq};
	unsigned threads = count * kk >= CONVERT_SPLIT ? etc_thread_count_() : 1;
	etc_parallel_for_(count, threads, convert_range, &j);
}

/*
 * The Gram terms of output p for the sets and candidates whose output p has
 * `len` elements: ns x mc blocked products, accumulated into w->ra.
 */
static void gram_group(work *w, size_t p, uint64_t len, size_t ns, size_t mc)
{
	memset(w->gram, 0, ns * mc * sizeof *w->gram);
	for (uint64_t k0 = 0; k0 < len; k0 += w->kb) {
		size_t kk = (size_t)(len - k0 < w->kb ? len - k0 : w->kb);
		convert_rows(w, w->cands, w->ci, mc, p, k0, kk, w->b);
		for (size_t c = 0; c < mc; c++)
			w->rr[w->roff[w->ci[c]] + p] += w->sq[c];
		for (size_t s0 = 0; s0 < ns; s0 += w->nb) {
			size_t nbb = ns - s0 < w->nb ? ns - s0 : w->nb;
			convert_rows(w, w->sets, w->si + s0, nbb, p, k0, kk, w->a);
			for (size_t s = 0; s < nbb; s++)
				w->aa[w->aoff[w->si[s0 + s]] + p] += w->sq[s];
			etc_blas_dgemm(false, true, nbb, mc, kk, 1.0, w->a, w->kb, w->b, w->kb, 1.0,
			               w->gram + s0 * mc, mc);
		}
	}
	for (size_t s = 0; s < ns; s++)
		for (size_t c = 0; c < mc; c++)
			if (output_agrees(&w->osets[w->si[s]], &w->ocands[w->ci[c]], p))
				w->ra[w->si[s] * w->m + w->ci[c]] += w->gram[s * mc + c];
}

/* sum (a - r)^2 over the outputs both sides have data for, directly. */
static double direct_noise(const work *w, size_t i, size_t k)
{
	const etc_pair_set *a = &w->sets[i], *r = &w->cands[k];
	double noise = 0;
	for (size_t p = 0; p < a->count; p++) {
		if (!has_data(a, p) || !has_data(r, p) ||
		    !output_agrees(&w->osets[i], &w->ocands[k], p))
			continue;
		uint64_t len = a->outputs[p].count;
		for (uint64_t k0 = 0; k0 < len; k0 += w->kb) {
			size_t kk = (size_t)(len - k0 < w->kb ? len - k0 : w->kb);
			a->outputs[p].read(a->outputs[p].src, k0, kk, w->a);
			r->outputs[p].read(r->outputs[p].src, k0, kk, w->b);
			double s[4] = {0, 0, 0, 0};
			size_t j = 0;
			for (; j + 4 <= kk; j += 4)
				for (size_t q = 0; q < 4; q++) {
					double d = w->a[j + q] - w->b[j + q];
					s[q] += d * d;
				}
			for (; j < kk; j++) {
				double d = w->a[j] - w->b[j];
				s[0] += d * d;
			}
			noise += (s[0] + s[1]) + (s[2] + s[3]);
		}
	}
	return noise;
}

/* NaN ranks below every number. */
static bool better(double x, double y)
{
	if (isnan(y))
		return !isnan(x);
	return x > y;
}

static void score_pair(const work *w, size_t i, size_t k, etc_pair_score *s)
{
	const etc_pair_set *a = &w->sets[i], *r = &w->cands[k];
	double aa = 0, rr = 0;
	size_t compared = 0;
	for (size_t p = 0; p < a->count; p++) {
		if (!has_data(a, p) || !has_data(r, p) ||
		    !output_agrees(&w->osets[i], &w->ocands[k], p))
			continue;
		aa += w->aa[w->aoff[i] + p];
		rr += w->rr[w->roff[k] + p];
		compared++;
	}
	double ra = w->ra[i * w->m + k];
	s->signal = rr;
	s->noise = aa - 2 * ra + rr;
	s->refined = false;
	s->estimated = false;
	if (!compared) {
		s->snr_db = s->cosine = s->noise = NAN;
		return;
	}
	if (!isnan(s->noise) && s->noise <= REFINE_BELOW * (aa + rr)) {
		s->noise = direct_noise(w, i, k);
		s->refined = true;
	}
	if (isnan(s->noise))
		s->snr_db = NAN;
	else if (s->noise == 0)
		s->snr_db = INFINITY; /* equal values, zeros included */
	else if (rr == 0)
		s->snr_db = -INFINITY;
	else
		s->snr_db = 10 * log10(rr / s->noise);
	if (aa == 0 || rr == 0)
		s->cosine = NAN;
	else if (s->refined)
		s->cosine = (aa + rr - s->noise) / (2 * sqrt(aa) * sqrt(rr));
	else
		s->cosine = ra / (sqrt(aa) * sqrt(rr));
	s->bound_db = s->snr_db;
}

static void choose(const etc_pair_score *row, size_t m, const etc_pair_options *o,
                   etc_pair_choice *c)
{
	c->best = c->second = -1;
	c->usable = 0;
	for (size_t k = 0; k < m; k++)
		c->usable += row[k].usable;
	c->partial = c->usable == 0;
	c->confirmed = 0;
	c->others_below_db = -INFINITY;
	/* a candidate scored NaN (NaN or inf values on a side) cannot be ranked:
	 * it may be the right one, so the choice is not sure */
	bool unranked = false;
	for (size_t k = 0; k < m; k++) {
		if (!(c->partial ? row[k].partial : row[k].usable))
			continue;
		if (!row[k].estimated && isnan(row[k].snr_db))
			unranked = true;
		if (row[k].estimated) {
			if (!(row[k].bound_db <= c->others_below_db))
				c->others_below_db = row[k].bound_db;
			continue;
		}
		c->confirmed++;
		double v = row[k].snr_db;
		if (c->best < 0 || better(v, row[c->best].snr_db)) {
			c->second = c->best;
			c->best = (long)k;
		} else if (c->second < 0 || better(v, row[c->second].snr_db)) {
			c->second = (long)k;
		}
	}
	c->margin_db = INFINITY;
	if (c->best >= 0 && c->second >= 0) {
		double b = row[c->best].snr_db, s = row[c->second].snr_db;
		if (isnan(s))
			c->margin_db = 0; /* the runner-up could not be scored */
		else
			c->margin_db = b - s;
		if (isnan(c->margin_db))
			c->margin_db = 0; /* inf - inf: two candidates equal the set */
	}
	/* no confirmed runner-up (confirm_top 1), but unconfirmed ones: the
	 * first of them on the estimate, and the margin proven for all of them */
	c->second_estimated = false;
	for (size_t k = 0; c->best >= 0 && c->second < 0 && k < m; k++)
		if ((c->partial ? row[k].partial : row[k].usable) && row[k].estimated &&
		    (!c->second_estimated || better(row[k].snr_db, row[c->second].snr_db)))
			c->second = (long)k, c->second_estimated = true;
	if (c->second_estimated) {
		c->margin_db = row[c->best].snr_db - c->others_below_db;
		if (isnan(c->margin_db))
			c->margin_db = 0;
	}
	double best = c->best >= 0 ? row[c->best].snr_db : NAN;
	c->ambiguous = c->best < 0 || isnan(best) || best < o->floor_db || unranked ||
	               (c->second >= 0 && c->margin_db < o->min_margin_db);
}

/* sets and cands give the values; osets and ocands (the same, or the
 * outputs the values were sketched from) decide which outputs agree. */
static int infer(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                 const etc_pair_set *osets, const etc_pair_set *ocands, const etc_pair_options *opt,
                 etc_pair_score *scores, etc_pair_choice *choice, etc_error *err)
{
	work w;
	memset(&w, 0, sizeof w);
	w.sets = sets, w.cands = cands, w.n = n, w.m = m;
	w.osets = osets, w.ocands = ocands;
	w.nb = opt->block_sets ? opt->block_sets : 128;
	w.kb = opt->block_elems ? opt->block_elems : 4096;
	size_t na = 0, nr = 0, maxout = 0;
	size_t *aoff = malloc((n + 1) * sizeof *aoff), *roff = malloc((m + 1) * sizeof *roff);
	for (size_t i = 0; aoff && i < n; i++) {
		aoff[i] = na;
		na += sets[i].count;
		if (sets[i].count > maxout)
			maxout = sets[i].count;
	}
	for (size_t k = 0; roff && k < m; k++) {
		roff[k] = nr;
		nr += cands[k].count;
	}
	w.aoff = aoff, w.roff = roff;
	w.aa = calloc(na + 1, sizeof *w.aa);
	w.rr = calloc(nr + 1, sizeof *w.rr);
	w.ra = calloc(n * m + 1, sizeof *w.ra);
	w.gram = malloc((n * m + 1) * sizeof *w.gram);
	w.si = malloc((n + 1) * sizeof *w.si);
	w.ci = malloc((m + 1) * sizeof *w.ci);
	w.a = malloc(w.nb * w.kb * sizeof *w.a);
	w.b = malloc(((m > 1 ? m : 1) * w.kb) * sizeof *w.b);
	w.sq = malloc(((m > w.nb ? m : w.nb) + 1) * sizeof *w.sq);
	bool *done = calloc(m + 1, sizeof *done);
	int rc = 0;
	if (!aoff || !roff || !w.aa || !w.rr || !w.ra || !w.gram || !w.si || !w.ci || !w.a ||
	    !w.b || !w.sq || !done) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < m; k++) {
			etc_pair_score *sc = &scores[i * m + k];
			memset(sc, 0, sizeof *sc);
			sc->usable = sets[i].count == cands[k].count;
			for (size_t p = 0; p < sets[i].count || p < cands[k].count; p++) {
				bool agrees = output_agrees(&osets[i], &ocands[k], p);
				sc->usable &= agrees;
				sc->partial |= agrees;
			}
		}
	/* output by output; within one, the candidates grouped by element count
	 * (a set joins the group of its own count) */
	for (size_t p = 0; p < maxout; p++) {
		memset(done, 0, m * sizeof *done);
		for (size_t k0 = 0; k0 < m; k0++) {
			if (done[k0] || !has_data(&cands[k0], p))
				continue;
			uint64_t len = cands[k0].outputs[p].count;
			size_t mc = 0, ns = 0;
			for (size_t k = k0; k < m; k++)
				if (!done[k] && has_data(&cands[k], p) &&
				    cands[k].outputs[p].count == len) {
					done[k] = true;
					w.ci[mc++] = k;
				}
			for (size_t i = 0; i < n; i++)
				if (has_data(&sets[i], p) && sets[i].outputs[p].count == len)
					w.si[ns++] = i;
			if (ns && len)
				gram_group(&w, p, len, ns, mc);
		}
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < m; k++)
			if (scores[i * m + k].partial || scores[i * m + k].usable)
				score_pair(&w, i, k, &scores[i * m + k]);
		choose(&scores[i * m], m, opt, &choice[i]);
	}
out:
	free(aoff), free(roff), free(w.aa), free(w.rr), free(w.ra), free(w.gram);
	free(w.si), free(w.ci), free(w.a), free(w.b), free(w.sq), free(done);
	return rc;
}

/* --- the sketch ----------------------------------------------------------------
 * Exact scores of every set against every candidate cost sets x candidates x
 * elements multiply-adds (1e11 for 1,000 runs x 100 references of 1 Mi
 * elements). Large outputs are therefore scored first on a fixed selection
 * of their elements: chunks of CHUNK consecutive elements (a 64-byte cache line
 * of float32), one per stride of
 * count / chunks elements at a jitter within the stride that depends only on
 * the chunk's index, so that sets and candidates of one size select the same
 * elements. The Gram terms over the selection J give, per (set, candidate):
 *   - an estimate, the SNR over J, that only decides what to confirm first;
 *   - a proven bound: sum_J (a - r)^2 <= sum_all (a - r)^2 and the signal
 *     sum r^2 is summed exactly over all elements, so
 *     SNR_exact <= 10 log10(sum_all r^2 / sum_J (a - r)^2).
 * Each set's top SKETCH_TOP candidates on the estimate, and any within
 * min_margin_db + SKETCH_SLACK_DB of the top, are confirmed by one direct pass
 * over all their elements (the set's values read once); then every other
 * candidate whose bound is not below the exact best by more than
 * min_margin_db is confirmed too, until none is left. A candidate never
 * confirmed is thus proven not to be the best and not to be within
 * min_margin_db of it: the choice and its ambiguity are those of the exact
 * method, whatever the data outside J. The sketch only decides the cost.
 * (A NaN or infinite value gives a NaN or infinite bound, which is never
 * below the best: confirmed. An exact SNR that is NaN ranks below every
 * number, so the argument holds for it too.) The bound of a far candidate
 * is its exact SNR plus about 10 log10(count / sampled) dB (24 dB for 1 Mi
 * elements sampled 4 Ki): only runs whose best is below that confirm more
 * than the first candidates, and then cost up to the exact method. */

#define CHUNK           16
#define SKETCH_TOP      2 /* at most; opt->confirm_top */
#define SKETCH_SLACK_DB 6.0
/* The Gram error energy is relatively exact to 1e-3 where it is not refined
 * (it is then at least 1e-7 of energies it errs by ~1e-10 of): a bound on it
 * loses 1 %. The direct sums err by far less than 1e-9. */
#define GRAM_LOW   0.99
#define DIRECT_LOW (1 - 1e-9)

typedef struct sketch_src {
	const etc_values *v;
	uint64_t chunks;
	const uint8_t *bytes; /* the dense bytes of the values (prefetched), or NULL */
	size_t esize;         /* bytes per element */
} sketch_src;

/* Chunks requested ahead: each is a cache and TLB miss of its own (one per
 * 16 KiB of a 1 Mi-element output), so the reads wait on memory latency. */
#define SKETCH_AHEAD 8

static uint64_t chunk_start(uint64_t count, uint64_t chunks, uint64_t c)
{
	uint64_t lo = c * count / chunks, hi = (c + 1) * count / chunks;
	uint64_t h = (c + 1) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 29;
	return lo + h % (hi - lo - CHUNK + 1); /* hi - lo >= CHUNK: count > chunks x CHUNK */
}

static void sketch_read(const void *src, uint64_t start, size_t n, double *dst)
{
	const sketch_src *s = src;
	while (n) {
		uint64_t c = start / CHUNK, off = start % CHUNK;
		if (s->bytes && c + SKETCH_AHEAD < s->chunks)
			__builtin_prefetch(s->bytes + s->esize * chunk_start(s->v->count, s->chunks,
			                                                     c + SKETCH_AHEAD));
		size_t take = (size_t)(CHUNK - off < n ? CHUNK - off : n);
		s->v->read(s->v->src, chunk_start(s->v->count, s->chunks, c) + off, take, dst);
		start += take, dst += take, n -= take;
	}
}

static sketch_src sketch_source(const etc_pair_set *s, size_t p, uint64_t chunks)
{
	const etc_values *v = &s->outputs[p];
	sketch_src src = {v, chunks, NULL, 0};
	if (s->raw && s->raw[p].data && v->count && s->raw[p].size % v->count == 0) {
		src.bytes = s->raw[p].data;
		src.esize = s->raw[p].size / v->count;
	}
	return src;
}

/* The sketch of set s: its large outputs sampled, the others as they are. */
static void sketch_set(const etc_pair_set *s, uint64_t chunks, etc_values *vals, sketch_src *src,
                       etc_pair_set *out)
{
	for (size_t p = 0; p < s->count; p++) {
		vals[p] = s->outputs[p];
		if (s->outputs[p].read && s->outputs[p].count > chunks * CHUNK) {
			src[p] = sketch_source(s, p, chunks);
			vals[p].count = chunks * CHUNK;
			vals[p].read = sketch_read;
			vals[p].src = &src[p];
		}
	}
	*out = (etc_pair_set){vals, NULL, s->shapes, s->count, NULL};
}

/* The exact sums of one set against several candidates, all elements. */
typedef struct exact_sums {
	double aa, rr, ee; /* sum ra = (aa + rr - ee) / 2 */
	size_t compared;
} exact_sums;

/* Dense float32 bytes of output p, or NULL. */
static const uint8_t *raw_f32(const etc_pair_set *s, size_t p)
{
	if (!s->raw || !s->raw[p].data || s->outputs[p].scalar_type != ETC_FLOAT ||
	    s->raw[p].size != 4 * s->outputs[p].count)
		return NULL;
	return s->raw[p].data;
}

/* The float32 sums of the exact pass, from raw bytes, in double: sum a^2
 * of n values, and sum (a - r)^2 of n pairs. (sum r^2 is each candidate's
 * energy, already summed; sum ra follows from the three.) */
typedef struct f32_sums {
	double (*sq)(const uint8_t *ap, size_t n);
	double (*dd)(const uint8_t *ap, const uint8_t *rp, size_t n);
	/* sq(a) and dd(a, r1), dd(a, r2) in one read of a, the same bits */
	void (*sq_dd2)(const uint8_t *ap, const uint8_t *r1, const uint8_t *r2, size_t n,
	               double *aa, double *e1, double *e2);
	/* sum (a - r)^2, and sum r^2 into *rr: a lone candidate, no energy pass */
	double (*ddrr)(const uint8_t *ap, const uint8_t *rp, size_t n, double *rr);
} f32_sums;

static double f32_at(const uint8_t *p)
{
	float f;
	memcpy(&f, p, sizeof f);
	return f;
}

static double sq_generic(const uint8_t *ap, size_t n)
{
	double s[4] = {0, 0, 0, 0};
	for (size_t j = 0; j < n; j++)
		s[j % 4] += f32_at(ap + 4 * j) * f32_at(ap + 4 * j);
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/* sum (a - r)^2: the comparison's own kernel (metrics_kernels.c), same bits */
static double dd_generic(const uint8_t *ap, const uint8_t *rp, size_t n)
{
	return etc_metrics_pick_dd_(KERNEL_GENERIC)(rp, ap, n);
}

static void sq_dd2_generic(const uint8_t *ap, const uint8_t *r1, const uint8_t *r2, size_t n,
                           double *aa, double *e1, double *e2)
{
	*aa = sq_generic(ap, n);
	*e1 = dd_generic(ap, r1, n);
	*e2 = dd_generic(ap, r2, n);
}

static double ddrr_generic(const uint8_t *ap, const uint8_t *rp, size_t n, double *rr)
{
	double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
	for (size_t j = 0; j < n; j++) {
		double r = f32_at(rp + 4 * j), d = f32_at(ap + 4 * j) - r;
		s[j % 4] += d * d;
		q[j % 4] += r * r;
	}
	*rr = (q[0] + q[1]) + (q[2] + q[3]);
	return (s[0] + s[1]) + (s[2] + s[3]);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define PAIR_X86 1

__attribute__((target("avx2,fma"))) static double hsum4(__m256d v)
{
	double x[4];
	_mm256_storeu_pd(x, v);
	return (x[0] + x[1]) + (x[2] + x[3]);
}

/* converted in registers, two accumulators */
__attribute__((target("avx2,fma"))) static double sq_avx2(const uint8_t *ap, size_t n)
{
	const float *fa = (const float *)(const void *)ap;
	__m256d s0 = _mm256_setzero_pd(), s1 = s0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		/* a page ahead: the hardware prefetchers stop at page boundaries */
		_mm_prefetch((const char *)(fa + i) + 4096, _MM_HINT_T0);
		__m256d a0 = _mm256_cvtps_pd(_mm_loadu_ps(fa + i));
		__m256d a1 = _mm256_cvtps_pd(_mm_loadu_ps(fa + i + 4));
		s0 = _mm256_fmadd_pd(a0, a0, s0), s1 = _mm256_fmadd_pd(a1, a1, s1);
	}
	return hsum4(_mm256_add_pd(s0, s1)) + sq_generic(ap + 4 * i, n - i);
}

static double dd_avx2(const uint8_t *ap, const uint8_t *rp, size_t n)
{
	return etc_metrics_pick_dd_(KERNEL_AVX2)(rp, ap, n);
}

/* sq_avx2 and dd_avx2 of two candidates fused: each sum takes the same
 * operations in the same order as there (the same bits), a read once */
__attribute__((target("avx2,fma"))) static void sq_dd2_avx2(const uint8_t *ap, const uint8_t *r1,
                                                            const uint8_t *r2, size_t n, double *aa,
                                                            double *e1, double *e2)
{
	const float *fa = (const float *)(const void *)ap;
	const float *f1 = (const float *)(const void *)r1, *f2 = (const float *)(const void *)r2;
	__m256d q0 = _mm256_setzero_pd(), q1 = q0, s0 = q0, s1 = q0, t0 = q0, t1 = q0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		_mm_prefetch((const char *)(fa + i) + 4096, _MM_HINT_T0);
		_mm_prefetch((const char *)(f1 + i) + 4096, _MM_HINT_T0);
		_mm_prefetch((const char *)(f2 + i) + 4096, _MM_HINT_T0);
		__m256d a0 = _mm256_cvtps_pd(_mm_loadu_ps(fa + i));
		__m256d a1 = _mm256_cvtps_pd(_mm_loadu_ps(fa + i + 4));
		q0 = _mm256_fmadd_pd(a0, a0, q0), q1 = _mm256_fmadd_pd(a1, a1, q1);
		__m256d d0 = _mm256_sub_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(f1 + i)));
		__m256d d1 = _mm256_sub_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(f1 + i + 4)));
		s0 = _mm256_fmadd_pd(d0, d0, s0), s1 = _mm256_fmadd_pd(d1, d1, s1);
		__m256d g0 = _mm256_sub_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(f2 + i)));
		__m256d g1 = _mm256_sub_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(f2 + i + 4)));
		t0 = _mm256_fmadd_pd(g0, g0, t0), t1 = _mm256_fmadd_pd(g1, g1, t1);
	}
	*aa = hsum4(_mm256_add_pd(q0, q1)) + sq_generic(ap + 4 * i, n - i);
	*e1 = hsum4(_mm256_add_pd(s0, s1)) + dd_generic(ap + 4 * i, r1 + 4 * i, n - i);
	*e2 = hsum4(_mm256_add_pd(t0, t1)) + dd_generic(ap + 4 * i, r2 + 4 * i, n - i);
}

__attribute__((target("avx2,fma"))) static double ddrr_avx2(const uint8_t *ap, const uint8_t *rp,
                                                            size_t n, double *rr)
{
	const float *fa = (const float *)(const void *)ap, *fr = (const float *)(const void *)rp;
	__m256d s0 = _mm256_setzero_pd(), s1 = s0, q0 = s0, q1 = s0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		_mm_prefetch((const char *)(fr + i) + 4096, _MM_HINT_T0);
		_mm_prefetch((const char *)(fa + i) + 4096, _MM_HINT_T0);
		__m256d r0 = _mm256_cvtps_pd(_mm_loadu_ps(fr + i));
		__m256d r1 = _mm256_cvtps_pd(_mm_loadu_ps(fr + i + 4));
		__m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(fa + i)), r0);
		__m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(fa + i + 4)), r1);
		s0 = _mm256_fmadd_pd(d0, d0, s0), s1 = _mm256_fmadd_pd(d1, d1, s1);
		q0 = _mm256_fmadd_pd(r0, r0, q0), q1 = _mm256_fmadd_pd(r1, r1, q1);
	}
	double tail_rr;
	double ee =
	    hsum4(_mm256_add_pd(s0, s1)) + ddrr_generic(ap + 4 * i, rp + 4 * i, n - i, &tail_rr);
	*rr = hsum4(_mm256_add_pd(q0, q1)) + tail_rr;
	return ee;
}
#endif

static f32_sums pick_sums(void)
{
#ifdef PAIR_X86
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return (f32_sums){sq_avx2, dd_avx2, sq_dd2_avx2, ddrr_avx2};
#endif
	return (f32_sums){sq_generic, dd_generic, sq_dd2_generic, ddrr_generic};
}

/* Zeroes the sums of set a against the listed candidates, counts the
 * outputs each pair compares and takes sum r^2 from the candidates'
 * energies (energy[coff[k] + p]: summed as the exact method sums them). */
static void exact_start(const etc_pair_set *a, const etc_pair_set *cands, const size_t *list,
                        size_t nl, const double *energy, const size_t *coff, exact_sums *sum)
{
	memset(sum, 0, nl * sizeof *sum);
	for (size_t p = 0; p < a->count; p++)
		for (size_t l = 0; has_data(a, p) && l < nl; l++)
			if (has_data(&cands[list[l]], p) && output_agrees(a, &cands[list[l]], p)) {
				sum[l].compared++;
				if (energy) /* else summed by the exact pass itself */
					sum[l].rr += energy[coff[list[l]] + p];
			}
}

/* Elements [k0, k0 + kk) of output p of set a against the listed
 * candidates, added to the sums: the set's block read once, each
 * candidate's once. Dense float32 pairs are summed straight from their
 * bytes (in double, converted in registers); any other pair through the
 * read functions and the double buffers (kb >= kk elements). */
static void exact_block(const etc_pair_set *a, size_t p, uint64_t k0, size_t kk,
                        const etc_pair_set *cands, const size_t *list, size_t nl, const f32_sums *f,
                        bool with_rr, double *bufa, double *bufr, exact_sums *sum)
{
	const etc_values *v = &a->outputs[p];
	const uint8_t *fa = raw_f32(a, p);
	bool have_aa = false, read = false;
	double aa = 0;
	/* the first two dense candidates (the usual list: the sketch's top two)
	   in one read of the set's block */
	long pair[2] = {-1, -1};
	/* (not when the candidates' energy is summed here: sq_dd2 has no rr) */
	for (size_t l = 0; fa && !with_rr && l < nl && pair[1] < 0; l++) {
		const etc_pair_set *r = &cands[list[l]];
		if (has_data(r, p) && output_agrees(a, r, p) && raw_f32(r, p))
			pair[pair[0] < 0 ? 0 : 1] = (long)l;
	}
	if (pair[1] >= 0) {
		double e1, e2;
		f->sq_dd2(fa + 4 * k0, raw_f32(&cands[list[pair[0]]], p) + 4 * k0,
		          raw_f32(&cands[list[pair[1]]], p) + 4 * k0, kk, &aa, &e1, &e2);
		have_aa = true;
		sum[pair[0]].aa += aa, sum[pair[0]].ee += e1;
		sum[pair[1]].aa += aa, sum[pair[1]].ee += e2;
	}
	for (size_t l = 0; l < nl; l++) {
		const etc_pair_set *r = &cands[list[l]];
		if (!has_data(r, p) || !output_agrees(a, r, p) ||
		    (pair[1] >= 0 && ((long)l == pair[0] || (long)l == pair[1])))
			continue;
		const uint8_t *fr = raw_f32(r, p);
		if (fa && fr) {
			if (!have_aa)
				aa = f->sq(fa + 4 * k0, kk), have_aa = true;
			sum[l].aa += aa;
			if (with_rr) {
				double rr;
				sum[l].ee += f->ddrr(fa + 4 * k0, fr + 4 * k0, kk, &rr);
				sum[l].rr += rr;
			} else {
				sum[l].ee += f->dd(fa + 4 * k0, fr + 4 * k0, kk);
			}
			continue;
		}
		if (!read) {
			v->read(v->src, k0, kk, bufa);
			read = true;
		}
		if (!have_aa) {
			double s[4] = {0, 0, 0, 0};
			for (size_t j = 0; j < kk; j++)
				s[j % 4] += bufa[j] * bufa[j];
			aa = (s[0] + s[1]) + (s[2] + s[3]), have_aa = true;
		}
		r->outputs[p].read(r->outputs[p].src, k0, kk, bufr);
		double ee[4] = {0, 0, 0, 0}, rr[4] = {0, 0, 0, 0};
		for (size_t j = 0; j < kk; j++) {
			double d = bufa[j] - bufr[j];
			ee[j % 4] += d * d;
			rr[j % 4] += bufr[j] * bufr[j];
		}
		if (with_rr)
			sum[l].rr += (rr[0] + rr[1]) + (rr[2] + rr[3]);
		sum[l].aa += aa;
		sum[l].ee += (ee[0] + ee[1]) + (ee[2] + ee[3]);
	}
}

/* One set against a few candidates, all elements (the later rounds). */
static void exact_pass(const etc_pair_set *a, const etc_pair_set *cands, const size_t *list,
                       size_t nl, size_t kb, const f32_sums *f, const double *energy,
                       const size_t *coff, double *bufa, double *bufr, exact_sums *sum)
{
	exact_start(a, cands, list, nl, energy, coff, sum);
	for (size_t p = 0; p < a->count; p++)
		for (uint64_t k0 = 0; has_data(a, p) && k0 < a->outputs[p].count; k0 += kb)
			exact_block(
			    a, p, k0,
			    (size_t)(a->outputs[p].count - k0 < kb ? a->outputs[p].count - k0 : kb),
			    cands, list, nl, f, !energy, bufa, bufr, sum);
}

/* The exact score from the direct sums (as score_pair, refined). */
static void exact_score(const exact_sums *x, etc_pair_score *s)
{
	s->signal = x->rr;
	s->noise = x->ee;
	s->refined = true;
	s->estimated = false;
	if (!x->compared) {
		s->snr_db = s->cosine = s->noise = s->bound_db = NAN;
		return;
	}
	if (isnan(x->ee))
		s->snr_db = NAN;
	else if (x->ee == 0)
		s->snr_db = INFINITY;
	else if (x->rr == 0)
		s->snr_db = -INFINITY;
	else
		s->snr_db = 10 * log10(x->rr / x->ee);
	s->cosine = x->aa == 0 || x->rr == 0
	                ? NAN
	                : (x->aa + x->rr - x->ee) / (2 * sqrt(x->aa) * sqrt(x->rr));
	s->bound_db = s->snr_db;
}

static bool any_large(const etc_pair_set *s, size_t n, uint64_t limit)
{
	for (size_t i = 0; i < n; i++)
		for (size_t p = 0; p < s[i].count; p++)
			if (s[i].outputs[p].read && s[i].outputs[p].count > limit)
				return true;
	return false;
}

/* What the confirmation of a range of sets shares (read only, but for its
 * own sets' rows, choices and `failed`). */
typedef struct confirm_ctx {
	const etc_pair_set *sets, *cands;
	size_t n, m, kb;
	const size_t *off; /* first output slot of each set, then each candidate */
	/* candidates' sum r^2 over all elements, per output; NULL for a lone
	 * candidate, which is always confirmed: its exact pass sums r^2 too */
	const double *energy;
	const etc_pair_options *opt;
	f32_sums f32;
	etc_pair_score *scores;
	etc_pair_choice *choice;
	bool *failed; /* per set: out of memory */
	/* etc_pair_infer_compare_: the comparisons, at off[i] + p for set i */
	etc_metrics *metrics;
	bool *compared;
} confirm_ctx;

/* Set i's bounds (all candidates) and the first candidates to confirm;
 * first[0] and first[1] (NULL: not wanted) the first two on the sketch. */
static size_t confirm_first(const confirm_ctx *x, size_t i, double *bound, size_t *list,
                            long *first)
{
	const etc_pair_set *a = &x->sets[i];
	size_t m = x->m;
	etc_pair_score *row = &x->scores[i * m];
	bool any_usable = false;
	for (size_t k = 0; k < m; k++)
		any_usable |= row[k].usable;
	long top[SKETCH_TOP];
	size_t ntop = x->opt->confirm_top == 1 ? 1 : SKETCH_TOP;
	for (size_t t = 0; t < SKETCH_TOP; t++)
		top[t] = -1;
	for (size_t k = 0; k < m; k++) {
		if (!row[k].usable && !row[k].partial)
			continue;
		double rr = 0;
		for (size_t p = 0; p < a->count; p++)
			if (has_data(a, p) && has_data(&x->cands[k], p) &&
			    output_agrees(a, &x->cands[k], p) && x->energy)
				rr += x->energy[x->off[x->n + k] + p];
		double low = row[k].noise * (row[k].refined ? DIRECT_LOW : GRAM_LOW);
		bound[k] =
		    low > 0 ? 10 * log10(rr * (1 + 1e-9) / low) : (low == 0 ? INFINITY : NAN);
		row[k].estimated = true;
		row[k].bound_db = bound[k];
		bool rank =
		    any_usable ? row[k].usable : row[k].partial; /* the others: sketch only */
		for (size_t t = 0; rank && t < ntop; t++)
			if (top[t] < 0 || better(row[k].snr_db, row[top[t]].snr_db)) {
				memmove(top + t + 1, top + t, (ntop - 1 - t) * sizeof *top);
				top[t] = (long)k;
				break;
			}
	}
	size_t nl = 0;
	double band =
	    top[0] >= 0 ? row[top[0]].snr_db - x->opt->min_margin_db - SKETCH_SLACK_DB : NAN;
	for (size_t k = 0; k < m; k++)
		if ((any_usable ? row[k].usable : row[k].partial) &&
		    (row[k].snr_db >= band || (long)k == top[0] || (long)k == top[1]))
			list[nl++] = k;
	if (first)
		first[0] = top[0], first[1] = top[1];
	return nl;
}

/* The first round's exact scores of set i, then further rounds until every
 * candidate left is proven more than min_margin_db below the exact best. */
static void confirm_rest(const confirm_ctx *x, size_t i, const double *bound, size_t *list,
                         size_t nl, exact_sums *sums, double *bufa, double *bufr)
{
	size_t m = x->m;
	etc_pair_score *row = &x->scores[i * m];
	bool any_usable = false;
	for (size_t k = 0; k < m; k++)
		any_usable |= row[k].usable;
	while (nl) {
		for (size_t l = 0; l < nl; l++)
			exact_score(&sums[l], &row[list[l]]);
		/* the exact best so far, and who may still beat it or come within the margin */
		long best = -1;
		for (size_t k = 0; k < m; k++)
			if ((any_usable ? row[k].usable : row[k].partial) && !row[k].estimated &&
			    (best < 0 || better(row[k].snr_db, row[best].snr_db)))
				best = (long)k;
		double clear = row[best].snr_db - x->opt->min_margin_db;
		nl = 0;
		for (size_t k = 0; k < m; k++)
			if ((any_usable ? row[k].usable : row[k].partial) && row[k].estimated &&
			    !(bound[k] < clear))
				list[nl++] = k;
		if (nl)
			exact_pass(&x->sets[i], x->cands, list, nl, x->kb, &x->f32, x->energy,
			           x->off + x->n, bufa, bufr, sums);
	}
	choose(row, m, x->opt, &x->choice[i]);
}

/*
 * The first round of a lone set (content pairing of one run, where the sets
 * would leave every core but one idle) is cut into fixed pieces of whole
 * blocks, spread over the threads; the pieces' sums are added in order, so
 * the bits do not depend on the thread count.
 */
#define CONFIRM_PIECE ((uint64_t)1 << 20)

typedef struct piece_ctx {
	const confirm_ctx *x;
	const etc_pair_set *a;
	const size_t *list;
	size_t nl;
	uint64_t per;        /* elements a piece, whole blocks */
	const size_t *first; /* the first piece of each output, then the count */
	exact_sums *part;    /* nl sums a piece */
	bool *failed;        /* per piece: out of memory */
} piece_ctx;

static void piece_range(void *ctx, size_t begin, size_t end)
{
	const piece_ctx *c = ctx;
	const confirm_ctx *x = c->x;
	double *bufa = malloc(x->kb * sizeof *bufa), *bufr = malloc(x->kb * sizeof *bufr);
	size_t p = 0;
	for (size_t q = begin; q < end; q++) {
		exact_sums *sum = c->part + q * c->nl;
		memset(sum, 0, c->nl * sizeof *sum);
		c->failed[q] = !bufa || !bufr;
		if (c->failed[q])
			continue;
		while (c->first[p + 1] <= q)
			p++;
		uint64_t count = c->a->outputs[p].count;
		uint64_t k0 = (q - c->first[p]) * c->per;
		uint64_t stop = count - k0 < c->per ? count : k0 + c->per;
		for (; k0 < stop; k0 += x->kb)
			exact_block(c->a, p, k0, (size_t)(stop - k0 < x->kb ? stop - k0 : x->kb),
			            x->cands, c->list, c->nl, &x->f32, !x->energy, bufa, bufr, sum);
	}
	free(bufa), free(bufr);
}

/* The first round of set a (x->n == 1) over the threads; false: out of memory. */
static bool first_round_split(const confirm_ctx *x, const etc_pair_set *a, const size_t *list,
                              size_t nl, exact_sums *sums)
{
	uint64_t per = (CONFIRM_PIECE + x->kb - 1) / x->kb * x->kb;
	size_t *first = malloc((a->count + 1) * sizeof *first);
	if (!first)
		return false;
	size_t np = 0;
	for (size_t p = 0; p < a->count; p++) {
		first[p] = np;
		if (has_data(a, p))
			np += (size_t)((a->outputs[p].count + per - 1) / per);
	}
	first[a->count] = np;
	exact_sums *part = malloc((np * nl + 1) * sizeof *part);
	bool *failed = calloc(np + 1, sizeof *failed), ok = part && failed;
	if (ok) {
		piece_ctx c = {x, a, list, nl, per, first, part, failed};
		etc_parallel_for_(np, np > 1 ? etc_thread_count_() : 1, piece_range, &c);
		for (size_t q = 0; q < np; q++) {
			ok = ok && !failed[q];
			for (size_t l = 0; l < nl; l++) {
				sums[l].aa += part[q * nl + l].aa;
				sums[l].ee += part[q * nl + l].ee;
				sums[l].rr += part[q * nl + l].rr;
			}
		}
	}
	free(first), free(part), free(failed);
	return ok;
}

/*
 * A range of sets. The first round is blocked like the product: element
 * blocks outside, the sets inside, so that the blocks of the candidates in
 * use (100 x 16 KiB at 4,096 elements) stay in the cache from one set to
 * the next and each set costs about one read of its own values.
 */
static void confirm_range(void *ctx, size_t begin, size_t end)
{
	const confirm_ctx *x = ctx;
	size_t m = x->m, ns = end - begin;
	double *bufa = malloc(x->kb * sizeof *bufa), *bufr = malloc(x->kb * sizeof *bufr);
	double *bound = malloc((ns * m + 1) * sizeof *bound);
	size_t *list = malloc((ns * m + 1) * sizeof *list), *nl = malloc((ns + 1) * sizeof *nl);
	exact_sums *sums = malloc((ns * m + 1) * sizeof *sums);
	bool nomem = !bufa || !bufr || !bound || !list || !nl || !sums;
	for (size_t i = begin; i < end; i++)
		x->failed[i] = nomem;
	if (nomem)
		goto out;
	size_t maxout = 0;
	for (size_t s = 0; s < ns; s++) {
		const etc_pair_set *a = &x->sets[begin + s];
		nl[s] = confirm_first(x, begin + s, bound + s * m, list + s * m, NULL);
		exact_start(a, x->cands, list + s * m, nl[s], x->energy, x->off + x->n,
		            sums + s * m);
		maxout = a->count > maxout ? a->count : maxout;
	}
	if (x->n == 1) {
		if (!first_round_split(x, &x->sets[begin], list, nl[0], sums)) {
			x->failed[begin] = true;
			goto out;
		}
		maxout = 0; /* done */
	}
	for (size_t p = 0; p < maxout; p++) {
		uint64_t len = 0;
		for (size_t s = 0; s < ns; s++)
			if (has_data(&x->sets[begin + s], p) &&
			    x->sets[begin + s].outputs[p].count > len)
				len = x->sets[begin + s].outputs[p].count;
		for (uint64_t k0 = 0; k0 < len; k0 += x->kb)
			for (size_t s = 0; s < ns; s++) {
				const etc_pair_set *a = &x->sets[begin + s];
				if (!has_data(a, p) || a->outputs[p].count <= k0)
					continue;
				uint64_t left = a->outputs[p].count - k0;
				exact_block(a, p, k0, (size_t)(left < x->kb ? left : x->kb),
				            x->cands, list + s * m, nl[s], &x->f32, !x->energy,
				            bufa, bufr, sums + s * m);
			}
	}
	for (size_t s = 0; s < ns; s++)
		confirm_rest(x, begin + s, bound + s * m, list + s * m, nl[s], sums + s * m, bufa,
		             bufr);
out:
	free(bufa), free(bufr), free(bound), free(list), free(nl), free(sums);
}

/* --- the confirmation fused with the comparisons ----------------------------------
 * etc_pair_infer_compare_ returns, beside the choice, the comparison of each
 * set's outputs with its best's (what accuracy reports for the run). The
 * comparison of the sketch's best sums (a - r)^2, a^2 and r^2 over all
 * elements anyway: the exact confirmation of that candidate. So the first
 * round compares each set with the sketch's best and, in the same read of
 * the set's values, sums (a - r)^2 of the sketch's second
 * (etc_metrics_compare_sums_); the other candidates of the first round (close
 * on the sketch) take the direct pass. The rounds after it are those of
 * confirm_rest. The comparison leaves NaN positions out and counts equal
 * infinities as no error, the direct sums do not: a comparison that saw
 * either gives way to the direct pass for the whole round (the scores are
 * then those of etc_pair_infer_). When the exact scores choose another best
 * than the sketch's, the set is compared again with it. Sets go one after
 * the other, each comparison over the threads, as the comparisons of the
 * runs would. */

/* Output p of set a against candidate c's, the CRC of c's output continued
 * when it is pending and still to do; with extra, sum (a - x)^2 too. */
static int compare_output(const etc_pair_set *a, const etc_pair_set *c, size_t p,
                          const etc_values *extra, etc_metrics *met, etc_metrics_sums *su,
                          etc_error *err)
{
	etc_pair_crc *crc = c->crc && c->crc[p].pending && !c->crc[p].done ? &c->crc[p] : NULL;
	uint32_t value = crc ? crc->crc : 0;
	bool done = false;
	ETC_TRY(etc_metrics_compare_sums_(&c->outputs[p], &a->outputs[p], extra, met, su,
	                                  KERNEL_BEST, 0, crc ? &value : NULL, &done, err));
	if (crc && done)
		crc->crc = value, crc->done = true;
	return 0;
}

/* Set a's comparisons with candidate c (NULL: none), output by output. */
static int compare_with(const etc_pair_set *a, const etc_pair_set *c, etc_metrics *met, bool *cmp,
                        etc_error *err)
{
	for (size_t p = 0; p < a->count; p++) {
		cmp[p] = c && has_data(a, p) && has_data(c, p) && output_agrees(a, c, p);
		etc_metrics_sums su;
		if (cmp[p])
			ETC_TRY(compare_output(a, c, p, NULL, &met[p], &su, err));
	}
	return 0;
}

/*
 * The first round of set i for list[0] (the sketch's best) and list[1] (the
 * next, if any) from the comparisons with list[0], the rest of the list by
 * the direct pass. *direct: the sums cannot stand for the direct ones (see
 * above), the round must be done again by the direct pass.
 */
static int fused_round(const confirm_ctx *x, size_t i, const size_t *list, size_t nl,
                       exact_sums *sums, double *bufa, double *bufr, bool *direct, etc_error *err)
{
	const etc_pair_set *a = &x->sets[i], *b = &x->cands[list[0]];
	const etc_pair_set *s2 = nl > 1 ? &x->cands[list[1]] : NULL;
	etc_metrics *met = x->metrics + x->off[i];
	bool *cmp = x->compared + x->off[i];
	exact_start(a, x->cands, list, nl < 2 ? nl : 2, x->energy, x->off + x->n, sums);
	for (size_t p = 0; p < a->count; p++) {
		cmp[p] = false;
		bool bp = has_data(a, p) && has_data(b, p) && output_agrees(a, b, p);
		bool sp = s2 && has_data(a, p) && has_data(s2, p) && output_agrees(a, s2, p);
		if (!bp) {
			*direct |= sp; /* a^2 of this output is not summed */
			continue;
		}
		etc_metrics_sums su;
		ETC_TRY(compare_output(a, b, p, sp ? &s2->outputs[p] : NULL, &met[p], &su, err));
		cmp[p] = true;
		*direct |= met[p].nan_count || (met[p].notes & ETC_METRICS_INFINITE);
		sums[0].aa += su.aa, sums[0].ee += su.dd;
		if (!x->energy) /* a lone candidate: its energy is this sum */
			sums[0].rr += su.rr;
		if (sp)
			sums[1].aa += su.aa, sums[1].ee += su.xx;
	}
	if (nl > 2)
		exact_pass(a, x->cands, list + 2, nl - 2, x->kb, &x->f32, x->energy, x->off + x->n,
		           bufa, bufr, sums + 2);
	return 0;
}

/* Set i, fused: the first round, confirm_rest, the comparisons with the best. */
static int fused_confirm(const confirm_ctx *x, size_t i, double *bound, size_t *list,
                         exact_sums *sums, double *bufa, double *bufr, etc_error *err)
{
	long first[2];
	size_t nl = confirm_first(x, i, bound, list, first);
	const etc_pair_set *a = &x->sets[i];
	long compared = -1;
	bool direct = first[0] < 0;
	if (!direct) {
		/* the sketch's first two at the head of the list */
		for (size_t t = 0; t < 2 && first[t] >= 0; t++)
			for (size_t l = t; l < nl; l++)
				if ((long)list[l] == first[t]) {
					size_t k = list[t];
					list[t] = list[l], list[l] = k;
					break;
				}
		ETC_TRY(fused_round(x, i, list, nl, sums, bufa, bufr, &direct, err));
		compared = first[0];
	}
	if (direct)
		exact_pass(a, x->cands, list, nl, x->kb, &x->f32, x->energy, x->off + x->n, bufa,
		           bufr, sums);
	confirm_rest(x, i, bound, list, nl, sums, bufa, bufr);
	long best = x->choice[i].best;
	if (best != compared)
		ETC_TRY(compare_with(a, best >= 0 ? &x->cands[best] : NULL, x->metrics + x->off[i],
		                     x->compared + x->off[i], err));
	return 0;
}

/*
 * Every set, one after the other, each comparison split over the threads
 * as the comparisons of the runs are (accuracy.c, --pair-by order). Taking
 * sets in parallel instead, each comparison on one thread, cost less CPU
 * (no thread started per comparison) but more wall-clock time on the
 * loaded 2-core machine, where the scheduler favours the threads that
 * sleep and wake at each comparison (docs/benchmarks.md).
 */
static int fused_sets(const confirm_ctx *x, etc_error *err)
{
	size_t m = x->m;
	double *bufa = malloc(x->kb * sizeof *bufa), *bufr = malloc(x->kb * sizeof *bufr);
	double *bound = malloc((m + 1) * sizeof *bound);
	size_t *list = malloc((m + 1) * sizeof *list);
	exact_sums *sums = malloc((m + 1) * sizeof *sums);
	int rc = 0;
	if (!bufa || !bufr || !bound || !list || !sums)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
	for (size_t i = 0; rc == 0 && i < x->n; i++)
		rc = fused_confirm(x, i, bound, list, sums, bufa, bufr, err);
	free(bufa), free(bufr), free(bound), free(list), free(sums);
	return rc;
}

/*
 * The energies (sum r^2) of the candidates' outputs are summed in fixed
 * pieces over the threads and the pieces added in order, so the bits do not
 * depend on the thread count; dense float32 pieces straight from the bytes.
 */
#define ENERGY_PIECE ((uint64_t)1 << 20)

typedef struct energy_piece {
	const etc_values *v;
	const uint8_t *raw; /* dense float32 bytes of the output, or NULL */
	size_t slot;        /* in the energies */
	uint64_t start;
	size_t len;
	double sum;
	bool nomem;
} energy_piece;

typedef struct energy_ctx {
	energy_piece *pc;
	size_t kb;
	f32_sums f;
} energy_ctx;

static void energy_range(void *ctx, size_t begin, size_t end)
{
	const energy_ctx *x = ctx;
	double *buf = NULL;
	for (size_t i = begin; i < end; i++) {
		energy_piece *pc = &x->pc[i];
		pc->sum = 0;
		if (pc->raw) {
			pc->sum = x->f.sq(pc->raw + 4 * pc->start, pc->len);
			continue;
		}
		if (!buf && !(buf = malloc(x->kb * sizeof *buf))) {
			pc->nomem = true;
			continue;
		}
		for (size_t k0 = 0; k0 < pc->len; k0 += x->kb) {
			size_t kk = pc->len - k0 < x->kb ? pc->len - k0 : x->kb;
			pc->sum += convert(pc->v, pc->start + k0, kk, buf);
		}
	}
	free(buf);
}

/* energy[coff[k] + p] = sum r^2 of output p of candidate k. */
static int energies(const etc_pair_set *cands, size_t m, const size_t *coff, size_t kb,
                    double *energy, etc_error *err)
{
	size_t np = 0;
	for (size_t k = 0; k < m; k++)
		for (size_t p = 0; p < cands[k].count; p++)
			if (cands[k].outputs[p].read)
				np += (size_t)((cands[k].outputs[p].count + ENERGY_PIECE - 1) /
				               ENERGY_PIECE);
	energy_piece *pc = calloc(np + 1, sizeof *pc);
	if (!pc)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
	size_t i = 0;
	for (size_t k = 0; k < m; k++)
		for (size_t p = 0; p < cands[k].count; p++) {
			const etc_values *v = &cands[k].outputs[p];
			for (uint64_t k0 = 0; v->read && k0 < v->count; k0 += ENERGY_PIECE)
				pc[i++] = (energy_piece){v,
				                         raw_f32(&cands[k], p),
				                         coff[k] + p,
				                         k0,
				                         (size_t)(v->count - k0 < ENERGY_PIECE
				                                      ? v->count - k0
				                                      : ENERGY_PIECE),
				                         0,
				                         false};
		}
	energy_ctx x = {pc, kb, pick_sums()};
	etc_parallel_for_(np, np > 1 ? etc_thread_count_() : 1, energy_range, &x);
	bool nomem = false;
	for (i = 0; i < np; i++) {
		nomem = nomem || pc[i].nomem;
		energy[pc[i].slot] += pc[i].sum;
	}
	free(pc);
	if (nomem)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
	return 0;
}

static int sketch_infer(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                        uint64_t chunks, const etc_pair_options *opt, etc_pair_score *scores,
                        etc_pair_choice *choice, etc_metrics *met, bool *cmp, etc_error *err)
{
	size_t kb = opt->block_elems ? opt->block_elems : 4096;
	size_t nv = 0, *off = malloc((n + m + 1) * sizeof *off);
	for (size_t i = 0; off && i < n + m; i++) {
		off[i] = nv;
		nv += i < n ? sets[i].count : cands[i - n].count;
	}
	etc_values *vals = malloc((nv + 1) * sizeof *vals);
	sketch_src *src = malloc((nv + 1) * sizeof *src);
	etc_pair_set *sk = malloc((n + m + 1) * sizeof *sk);
	double *energy = calloc(nv + 1, sizeof *energy);
	bool *failed = calloc(n + 1, sizeof *failed);
	int rc = 0;
	if (!off || !vals || !src || !sk || !energy || !failed) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	for (size_t i = 0; i < n + m; i++)
		sketch_set(i < n ? &sets[i] : &cands[i - n], chunks, vals + off[i], src + off[i],
		           &sk[i]);
	if (m > 1 && (rc = energies(cands, m, off + n, kb, energy, err)) < 0)
		goto out;
	if ((rc = infer(sk, n, sk + n, m, sets, cands, opt, scores, choice, err)) < 0)
		goto out;
	confirm_ctx x = {.sets = sets,
	                 .cands = cands,
	                 .n = n,
	                 .m = m,
	                 .kb = kb,
	                 .off = off,
	                 .energy = m > 1 ? energy : NULL,
	                 .opt = opt,
	                 .f32 = pick_sums(),
	                 .scores = scores,
	                 .choice = choice,
	                 .failed = failed,
	                 .metrics = met,
	                 .compared = cmp};
	if (met) {
		rc = fused_sets(&x, err);
		goto out;
	}
	/* sets are independent: each thread confirms a range of them (the read
	 * functions of values are pure, as the threaded comparisons require) */
	etc_parallel_for_(n, etc_thread_count_(), confirm_range, &x);
	for (size_t i = 0; i < n; i++)
		if (failed[i]) {
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
			              "out of memory (content pairing)");
			goto out;
		}
out:
	free(off), free(vals), free(src), free(sk), free(energy), free(failed);
	return rc;
}

static uint64_t sketch_chunks(const etc_pair_options *opt)
{
	uint64_t chunks = (opt->sketch_elems ? opt->sketch_elems : 4096) / CHUNK;
	return chunks ? chunks : 1;
}

/* The exact scores, or the sketch and its confirmation where outputs are
 * large; with met, the comparisons with the best (at the sets' first output
 * slots, in order). */
static int score_sets(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                      const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                      etc_metrics *met, bool *cmp, etc_error *err)
{
	uint64_t chunks = sketch_chunks(opt);
	if (!opt->exact &&
	    (any_large(sets, n, chunks * CHUNK) || any_large(cands, m, chunks * CHUNK)))
		return sketch_infer(sets, n, cands, m, chunks, opt, scores, choice, met, cmp, err);
	ETC_TRY(infer(sets, n, cands, m, sets, cands, opt, scores, choice, err));
	for (size_t i = 0, at = 0; met && i < n; at += sets[i++].count)
		ETC_TRY(compare_with(&sets[i], choice[i].best >= 0 ? &cands[choice[i].best] : NULL,
		                     met + at, cmp + at, err));
	return 0;
}

/* --- identical sets ---------------------------------------------------------------
 * The same input run again gives bit-identical outputs on deterministic
 * kernels (the benchmarking loop; the corpus's three runs of test case 0).
 * Such sets are found by a hash of their values and shapes, confirmed by a
 * full comparison, and scored once. */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
	return h * 0xBF58476D1CE4E5B9ULL;
}

/* Eight FNV-style lanes (xor, multiply) over 8-byte words: no long chain of
 * dependent multiplies. A prefilter: equality is checked. */
static uint64_t lanes_hash(uint64_t h, const uint8_t *p, size_t words)
{
	uint64_t lane[8];
	for (size_t q = 0; q < 8; q++)
		lane[q] = h + q;
	size_t j = 0;
	for (; j + 8 <= words; j += 8)
		for (size_t q = 0; q < 8; q++) {
			uint64_t bits;
			memcpy(&bits, p + 8 * (j + q), sizeof bits);
			lane[q] = (lane[q] ^ bits) * 0x100000001B3ULL;
		}
	for (; j < words; j++) {
		uint64_t bits;
		memcpy(&bits, p + 8 * j, sizeof bits);
		lane[0] = (lane[0] ^ bits) * 0x100000001B3ULL;
	}
	for (size_t q = 0; q < 8; q++)
		h = mix(h, lane[q]);
	return h;
}

static uint64_t raw_hash(uint64_t h, const void *data, size_t size)
{
	const uint8_t *p = data;
	h = lanes_hash(mix(h, size), p, size / 8);
	for (size_t i = size / 8 * 8; i < size; i++)
		h = mix(h, p[i]);
	return h;
}

/* A prefilter, so any function of the values will do: outputs longer
 * than `sampled` elements are hashed on their sketch (distinct runs then
 * cost no full read; equal hashes are confirmed on every element). */
static uint64_t set_hash(const etc_pair_set *s, double *buf, size_t kb, uint64_t chunks)
{
	uint64_t h = mix(0, s->count);
	for (size_t p = 0; p < s->count; p++) {
		const etc_values *v = &s->outputs[p];
		h = mix(h, v->count);
		h = mix(h, v->read != NULL);
		h = mix(h, (uint64_t)v->scalar_type);
		for (const char *c = s->shapes && s->shapes[p] ? s->shapes[p] : ""; *c; c++)
			h = mix(h, (unsigned char)*c);
		if (chunks && v->read && v->count > chunks * CHUNK) {
			sketch_src src = sketch_source(s, p, chunks);
			for (uint64_t k0 = 0; k0 < chunks * CHUNK; k0 += kb) {
				size_t kk =
				    (size_t)(chunks * CHUNK - k0 < kb ? chunks * CHUNK - k0 : kb);
				sketch_read(&src, k0, kk, buf);
				h = lanes_hash(h, (const uint8_t *)buf, kk);
			}
			continue;
		}
		if (s->raw && s->raw[p].data) {
			h = raw_hash(h, s->raw[p].data, s->raw[p].size);
			continue;
		}
		for (uint64_t k0 = 0; v->read && k0 < v->count; k0 += kb) {
			size_t kk = (size_t)(v->count - k0 < kb ? v->count - k0 : kb);
			v->read(v->src, k0, kk, buf);
			h = lanes_hash(h, (const uint8_t *)buf, kk);
		}
	}
	return h;
}

static bool sets_equal(const etc_pair_set *x, const etc_pair_set *y, double *a, double *b,
                       size_t kb)
{
	if (x->count != y->count)
		return false;
	for (size_t p = 0; p < x->count; p++) {
		const etc_values *u = &x->outputs[p], *v = &y->outputs[p];
		const char *su = x->shapes && x->shapes[p] ? x->shapes[p] : "";
		const char *sv = y->shapes && y->shapes[p] ? y->shapes[p] : "";
		if (u->count != v->count || (u->read == NULL) != (v->read == NULL) ||
		    strcmp(su, sv))
			return false;
		for (uint64_t k0 = 0; u->read && k0 < u->count; k0 += kb) {
			size_t kk = (size_t)(u->count - k0 < kb ? u->count - k0 : kb);
			u->read(u->src, k0, kk, a);
			v->read(v->src, k0, kk, b);
			if (memcmp(a, b, kk * sizeof *a) != 0)
				return false;
		}
	}
	return true;
}

static int pair_infer(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                      const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                      etc_metrics *met, bool *cmp, etc_error *err)
{
	etc_pair_options defaults;
	if (!opt) {
		etc_pair_options_init_(&defaults);
		opt = &defaults;
	}
	if ((n && (!sets || !scores || !choice)) || (m && !cands))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_pair_infer_: sets, scores and choices are required");
	size_t kb = opt->block_elems ? opt->block_elems : 4096;
	uint64_t *hash = malloc((n + 1) * sizeof *hash);
	size_t *rep = malloc((n + 1) * sizeof *rep), *slot = malloc((n + 1) * sizeof *slot);
	etc_pair_set *uniq = malloc((n + 1) * sizeof *uniq);
	double *a = malloc(kb * sizeof *a), *b = malloc(kb * sizeof *b);
	etc_pair_score *us = NULL;
	etc_pair_choice *uc = NULL;
	size_t *at = NULL, *uat = NULL; /* first output slot of each set, each unique set */
	etc_metrics *um = NULL;
	bool *ucmp = NULL;
	int rc = 0;
	if (!hash || !rep || !slot || !uniq || !a || !b) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	size_t nu = 0;
	for (size_t i = 0; i < n; i++) {
		hash[i] = set_hash(&sets[i], a, kb, opt->exact ? 0 : sketch_chunks(opt));
		rep[i] = i;
		for (size_t j = 0; j < i && rep[i] == i; j++)
			if (rep[j] == j && hash[j] == hash[i] &&
			    sets_equal(&sets[j], &sets[i], a, b, kb))
				rep[i] = j;
		if (rep[i] == i) {
			slot[i] = nu;
			uniq[nu++] = sets[i];
		} else {
			slot[i] = slot[rep[i]];
		}
	}
	if (nu == n) {
		rc = score_sets(sets, n, cands, m, opt, scores, choice, met, cmp, err);
		goto out;
	}
	us = malloc((nu * m + 1) * sizeof *us);
	uc = malloc((nu + 1) * sizeof *uc);
	at = malloc((n + 1) * sizeof *at);
	uat = malloc((nu + 1) * sizeof *uat);
	if (!us || !uc || !at || !uat) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	size_t nout = 0, unout = 0;
	for (size_t i = 0; i < n; i++)
		at[i] = nout, nout += sets[i].count;
	for (size_t u = 0; u < nu; u++)
		uat[u] = unout, unout += uniq[u].count;
	um = met ? malloc((unout + 1) * sizeof *um) : NULL;
	ucmp = met ? malloc((unout + 1) * sizeof *ucmp) : NULL;
	if (met && (!um || !ucmp)) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	if ((rc = score_sets(uniq, nu, cands, m, opt, us, uc, um, ucmp, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		memcpy(&scores[i * m], &us[slot[i] * m], m * sizeof *scores);
		choice[i] = uc[slot[i]];
		if (met) { /* the same values against the same candidate */
			memcpy(met + at[i], um + uat[slot[i]], sets[i].count * sizeof *met);
			memcpy(cmp + at[i], ucmp + uat[slot[i]], sets[i].count * sizeof *cmp);
		}
	}
out:
	free(hash), free(rep), free(slot), free(uniq), free(a), free(b), free(us), free(uc);
	free(at), free(uat), free(um), free(ucmp);
	return rc;
}

int etc_pair_infer_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                    const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                    etc_error *err)
{
	return pair_infer(sets, n, cands, m, opt, scores, choice, NULL, NULL, err);
}

int etc_pair_infer_compare_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                            const etc_pair_options *opt, etc_pair_score *scores,
                            etc_pair_choice *choice, etc_metrics *metrics, bool *compared,
                            etc_error *err)
{
	if (n && (!metrics || !compared))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_pair_infer_compare_: metrics and compared are required");
	return pair_infer(sets, n, cands, m, opt, scores, choice, metrics, compared, err);
}
