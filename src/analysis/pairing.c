/*
 * pairing.c - the content pairing of pairing.h: every set against every
 * candidate from one blocked matrix product per output. The loop is
 * element blocks outside, set blocks inside, so that each candidate's and
 * each set's values are read and converted to double exactly once; the
 * Gram terms of a block of sets against all candidates are one dgemm.
 */
#include "analysis/pairing.h"
#include "core/blas.h"
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
	size_t n, m, nb, kb;
	double *a, *b;             /* nb x kb and m x kb blocks */
	double *gram;              /* the group's sets x candidates */
	size_t *si, *ci;           /* the group's members */
	double *aa, *rr;           /* per vector and output: sum of squares */
	const size_t *aoff, *roff; /* first output's slot of each set / candidate */
	double *ra;                /* n x m, pooled over outputs */
} work;

/*
 * The Gram terms of output p for the sets and candidates whose output p has
 * `len` elements: ns x mc blocked products, accumulated into w->ra.
 */
static void gram_group(work *w, size_t p, uint64_t len, size_t ns, size_t mc)
{
	memset(w->gram, 0, ns * mc * sizeof *w->gram);
	for (uint64_t k0 = 0; k0 < len; k0 += w->kb) {
		size_t kk = (size_t)(len - k0 < w->kb ? len - k0 : w->kb);
		for (size_t c = 0; c < mc; c++) {
			size_t k = w->ci[c];
			w->rr[w->roff[k] + p] +=
			    convert(&w->cands[k].outputs[p], k0, kk, w->b + c * w->kb);
		}
		for (size_t s0 = 0; s0 < ns; s0 += w->nb) {
			size_t nbb = ns - s0 < w->nb ? ns - s0 : w->nb;
			for (size_t s = 0; s < nbb; s++) {
				size_t i = w->si[s0 + s];
				w->aa[w->aoff[i] + p] +=
				    convert(&w->sets[i].outputs[p], k0, kk, w->a + s * w->kb);
			}
			etc_blas_dgemm(false, true, nbb, mc, kk, 1.0, w->a, w->kb, w->b, w->kb, 1.0,
			               w->gram + s0 * mc, mc);
		}
	}
	for (size_t s = 0; s < ns; s++)
		for (size_t c = 0; c < mc; c++)
			if (output_agrees(&w->sets[w->si[s]], &w->cands[w->ci[c]], p))
				w->ra[w->si[s] * w->m + w->ci[c]] += w->gram[s * mc + c];
}

/* sum (a - r)^2 over the outputs both sides have data for, directly. */
static double direct_noise(const work *w, const etc_pair_set *a, const etc_pair_set *r)
{
	double noise = 0;
	for (size_t p = 0; p < a->count; p++) {
		if (!has_data(a, p) || !has_data(r, p) || !output_agrees(a, r, p))
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
		if (!has_data(a, p) || !has_data(r, p) || !output_agrees(a, r, p))
			continue;
		aa += w->aa[w->aoff[i] + p];
		rr += w->rr[w->roff[k] + p];
		compared++;
	}
	double ra = w->ra[i * w->m + k];
	s->signal = rr;
	s->noise = aa - 2 * ra + rr;
	s->refined = false;
	if (!compared) {
		s->snr_db = s->cosine = s->noise = NAN;
		return;
	}
	if (!isnan(s->noise) && s->noise <= REFINE_BELOW * (aa + rr)) {
		s->noise = direct_noise(w, a, r);
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
}

static void choose(const etc_pair_score *row, size_t m, const etc_pair_options *o,
                   etc_pair_choice *c)
{
	c->best = c->second = -1;
	c->usable = 0;
	for (size_t k = 0; k < m; k++)
		c->usable += row[k].usable;
	c->partial = c->usable == 0;
	for (size_t k = 0; k < m; k++) {
		if (!(c->partial ? row[k].partial : row[k].usable))
			continue;
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
			c->margin_db = isnan(b) ? 0 : INFINITY;
		else
			c->margin_db = b - s;
		if (isnan(c->margin_db))
			c->margin_db = 0; /* inf - inf: two candidates equal the set */
	}
	double best = c->best >= 0 ? row[c->best].snr_db : NAN;
	c->ambiguous = c->best < 0 || isnan(best) || best < o->floor_db ||
	               (c->second >= 0 && c->margin_db < o->min_margin_db);
}

static int infer(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                 const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                 etc_error *err)
{
	work w;
	memset(&w, 0, sizeof w);
	w.sets = sets, w.cands = cands, w.n = n, w.m = m;
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
	bool *done = calloc(m + 1, sizeof *done);
	int rc = 0;
	if (!aoff || !roff || !w.aa || !w.rr || !w.ra || !w.gram || !w.si || !w.ci || !w.a ||
	    !w.b || !done) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < m; k++) {
			etc_pair_score *sc = &scores[i * m + k];
			memset(sc, 0, sizeof *sc);
			sc->usable = sets[i].count == cands[k].count;
			for (size_t p = 0; p < sets[i].count || p < cands[k].count; p++) {
				bool agrees = output_agrees(&sets[i], &cands[k], p);
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
	free(w.si), free(w.ci), free(w.a), free(w.b), free(done);
	return rc;
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

static uint64_t set_hash(const etc_pair_set *s, double *buf, size_t kb)
{
	uint64_t h = mix(0, s->count);
	for (size_t p = 0; p < s->count; p++) {
		const etc_values *v = &s->outputs[p];
		h = mix(h, v->count);
		h = mix(h, v->read != NULL);
		h = mix(h, (uint64_t)v->scalar_type);
		for (const char *c = s->shapes && s->shapes[p] ? s->shapes[p] : ""; *c; c++)
			h = mix(h, (unsigned char)*c);
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

int etc_pair_infer_(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                    const etc_pair_options *opt, etc_pair_score *scores, etc_pair_choice *choice,
                    etc_error *err)
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
	int rc = 0;
	if (!hash || !rep || !slot || !uniq || !a || !b) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	size_t nu = 0;
	for (size_t i = 0; i < n; i++) {
		hash[i] = set_hash(&sets[i], a, kb);
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
		rc = infer(sets, n, cands, m, opt, scores, choice, err);
		goto out;
	}
	us = malloc((nu * m + 1) * sizeof *us);
	uc = malloc((nu + 1) * sizeof *uc);
	if (!us || !uc) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (content pairing)");
		goto out;
	}
	if ((rc = infer(uniq, nu, cands, m, opt, us, uc, err)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		memcpy(&scores[i * m], &us[slot[i] * m], m * sizeof *scores);
		choice[i] = uc[slot[i]];
	}
out:
	free(hash), free(rep), free(slot), free(uniq), free(a), free(b), free(us), free(uc);
	return rc;
}
