/*
 * test_pairing.c - content pairing (src/analysis/pairing.c): the blocked
 * Gram-term scores against a naive double computation, with blocks smaller
 * than the data (tails in both directions), outputs of several lengths, a
 * candidate of another shape, twins, NaN, zero vectors, outputs without
 * data and the partly comparable fallback; and the sketch of large outputs
 * against the exact method where the sketch would mislead (differences
 * outside the sampled elements, errors concentrated where it does not look,
 * a near tie), with far candidates' bounds checked against their exact SNR;
 * and etc_pair_infer_compare_ (the confirmation fused with the comparisons)
 * against etc_pair_infer_ on all of these: the same choices, ambiguity,
 * margins and confirmed candidates, and each set's comparison with its best
 * equal, bit for bit, to etc_metrics_compare's.
 */
#include "analysis/pairing.h"
#include "check.h"

#include <string.h>
#include <zlib.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define NOUT 2
static const size_t LEN[NOUT] = {7, 3};

typedef struct vecset {
	double v[NOUT][8];
	etc_values vals[NOUT];
	const char *shapes[NOUT];
	etc_pair_set set;
} vecset;

static uint64_t rng = 12345;
static double rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

static void vecset_init(vecset *s, const double *base, double noise)
{
	for (size_t p = 0, at = 0; p < NOUT; p++) {
		for (size_t j = 0; j < LEN[p]; j++, at++)
			s->v[p][j] = (base ? base[at] : rnd()) + noise * rnd();
		etc_values_from_doubles(&s->vals[p], s->v[p], LEN[p]);
		s->shapes[p] = p == 0 ? "[7]" : "[3]";
	}
	s->set.outputs = s->vals;
	s->set.raw = NULL;
	s->set.shapes = s->shapes;
	s->set.count = NOUT;
	s->set.crc = NULL;
}

/* SNR and cosine pooled over the outputs, the direct way. */
static void naive(const vecset *a, const vecset *r, double *snr, double *cos)
{
	double rr = 0, aa = 0, ra = 0, ee = 0;
	for (size_t p = 0; p < NOUT; p++)
		for (size_t j = 0; j < LEN[p]; j++) {
			double x = a->v[p][j], y = r->v[p][j];
			rr += y * y, aa += x * x, ra += x * y, ee += (x - y) * (x - y);
		}
	*snr = ee == 0 ? INFINITY : 10 * log10(rr / ee);
	*cos = ra / sqrt(aa * rr);
}

static bool near(double x, double y, double rel)
{
	if (isinf(x) || isinf(y))
		return x == y;
	return fabs(x - y) <= rel * fmax(fabs(x), fabs(y));
}

/* A comparison equal, bit for bit, to etc_metrics_compare's. */
static void check_same_metrics(const etc_metrics *x, const etc_values *ref, const etc_values *act)
{
	etc_metrics y;
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_metrics_compare(ref, act, &y, &err) == 0);
	CHECK(x->count == y.count && x->max_abs_index == y.max_abs_index &&
	      x->nan_count == y.nan_count && x->mismatch_count == y.mismatch_count &&
	      x->identical == y.identical && x->notes == y.notes);
	CHECK(memcmp(&x->snr_db, &y.snr_db, sizeof y.snr_db) == 0);
	CHECK(memcmp(&x->mse, &y.mse, sizeof y.mse) == 0);
	CHECK(memcmp(&x->cosine, &y.cosine, sizeof y.cosine) == 0);
	CHECK(memcmp(&x->max_abs, &y.max_abs, sizeof y.max_abs) == 0);
	CHECK(memcmp(&x->max_rel, &y.max_rel, sizeof y.max_rel) == 0);
}

/*
 * etc_pair_infer_compare_ against etc_pair_infer_'s scores and choices (sc,
 * ch) on the same sets: the same choices, ambiguity and confirmed
 * candidates, the confirmed scores and margins to 1e-9, the same bounds; and
 * every set's comparison with its best that of etc_metrics_compare.
 */
static void check_fused(const etc_pair_set *sets, size_t n, const etc_pair_set *cands, size_t m,
                        const etc_pair_options *o, const etc_pair_score *sc,
                        const etc_pair_choice *ch)
{
	size_t nout = 0;
	for (size_t i = 0; i < n; i++)
		nout += sets[i].count;
	etc_pair_score *fs = calloc(n * m + 1, sizeof *fs);
	etc_pair_choice *fc = calloc(n + 1, sizeof *fc);
	etc_metrics *met = calloc(nout + 1, sizeof *met);
	bool *cmp = calloc(nout + 1, sizeof *cmp);
	etc_error err;
	etc_error_clear(&err);
	CHECK(fs && fc && met && cmp);
	if (!fs || !fc || !met || !cmp)
		goto out;
	CHECK(etc_pair_infer_compare_(sets, n, cands, m, o, fs, fc, met, cmp, &err) == 0);
	for (size_t i = 0, at = 0; i < n; at += sets[i++].count) {
		CHECK(fc[i].best == ch[i].best && fc[i].second == ch[i].second);
		CHECK(fc[i].ambiguous == ch[i].ambiguous && fc[i].confirmed == ch[i].confirmed);
		CHECK(fc[i].usable == ch[i].usable && fc[i].partial == ch[i].partial);
		CHECK(fc[i].second_estimated == ch[i].second_estimated);
		CHECK(near(fc[i].margin_db, ch[i].margin_db, 1e-9) ||
		      fabs(fc[i].margin_db - ch[i].margin_db) < 1e-9);
		CHECK(fc[i].others_below_db == ch[i].others_below_db);
		for (size_t k = 0; k < m; k++) {
			const etc_pair_score *f = &fs[i * m + k], *e = &sc[i * m + k];
			CHECK(f->estimated == e->estimated && f->usable == e->usable);
			CHECK(isnan(e->snr_db) ? isnan(f->snr_db)
			                       : near(f->snr_db, e->snr_db, 1e-9));
			CHECK(isnan(e->cosine) ? isnan(f->cosine)
			                       : near(f->cosine, e->cosine, 1e-12) ||
			                             fabs(f->cosine - e->cosine) < 1e-12);
			if (e->estimated)
				CHECK_DOUBLE_EXACT(f->bound_db, e->bound_db);
		}
		const etc_pair_set *a = &sets[i];
		const etc_pair_set *b = ch[i].best >= 0 ? &cands[ch[i].best] : NULL;
		for (size_t p = 0; p < a->count; p++) {
			bool want = b && p < b->count && a->outputs[p].read && b->outputs[p].read &&
			            a->outputs[p].count == b->outputs[p].count;
			CHECK(cmp[at + p] == want);
			if (want && cmp[at + p])
				check_same_metrics(&met[at + p], &b->outputs[p], &a->outputs[p]);
		}
	}
out:
	free(fs), free(fc), free(met), free(cmp);
}

static void test_scores(void)
{
	enum { N = 5, M = 4 };
	vecset refs[M], runs[N];
	double base[M][10];
	for (size_t k = 0; k < M; k++) {
		for (size_t j = 0; j < 10; j++)
			base[k][j] = rnd();
		vecset_init(&refs[k], base[k], 0);
	}
	refs[3].shapes[0] = "[1, 7]"; /* same count, other shape: no candidate */
	const size_t truth[N] = {2, 0, 1, 2, 0};
	for (size_t i = 0; i < N; i++)
		vecset_init(&runs[i], base[truth[i]], 1e-3 * (double)(i + 1));
	etc_pair_set sets[N], cands[M];
	for (size_t i = 0; i < N; i++)
		sets[i] = runs[i].set;
	for (size_t k = 0; k < M; k++)
		cands[k] = refs[k].set;
	etc_pair_options o;
	etc_pair_options_init_(&o);
	o.block_sets = 2;  /* 5 runs: blocks of 2, 2, 1 */
	o.block_elems = 3; /* 7 elements: 3, 3, 1 */
	etc_pair_score sc[N * M];
	etc_pair_choice ch[N];
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_pair_infer_(sets, N, cands, M, &o, sc, ch, &err) == 0);
	check_fused(sets, N, cands, M, &o, sc, ch); /* no sketch: compared after */
	for (size_t i = 0; i < N; i++) {
		CHECK(ch[i].best == (long)truth[i]);
		CHECK(!ch[i].ambiguous);
		CHECK(ch[i].usable == 3);
		CHECK(!sc[i * M + 3].usable && sc[i * M + 3].partial);
		double best = -INFINITY, second = -INFINITY;
		for (size_t k = 0; k < 3; k++) {
			double snr, cos;
			naive(&runs[i], &refs[k], &snr, &cos);
			CHECK(sc[i * M + k].usable);
			CHECK(near(sc[i * M + k].snr_db, snr, 1e-9));
			CHECK(near(sc[i * M + k].cosine, cos, 1e-12));
			if (snr > best)
				second = best, best = snr;
			else if (snr > second)
				second = snr;
		}
		CHECK(near(ch[i].margin_db, best - second, 1e-9));
	}
}

static void test_edges(void)
{
	etc_pair_options o;
	etc_pair_options_init_(&o);
	etc_error err;
	etc_error_clear(&err);
	double base[10];
	for (size_t j = 0; j < 10; j++)
		base[j] = rnd();
	/* twins: margin 0, ambiguous, the first of them chosen */
	vecset r0, r1, a;
	vecset_init(&r0, base, 0);
	vecset_init(&r1, base, 0);
	vecset_init(&a, base, 1e-9);
	etc_pair_set c2[2] = {r0.set, r1.set};
	etc_pair_score sc[2];
	etc_pair_choice ch;
	CHECK(etc_pair_infer_(&a.set, 1, c2, 2, &o, sc, &ch, &err) == 0);
	CHECK(ch.best == 0 && ch.second == 1 && ch.margin_db == 0 && ch.ambiguous);
	CHECK(sc[0].refined && sc[1].refined);
	/* identical: +inf; a NaN in a candidate: NaN ranks below, but it cannot be
	 * ranked, so the choice is ambiguous with margin 0 (not a sure +inf) */
	vecset_init(&a, base, 0);
	r0.v[1][2] = NAN;
	CHECK(etc_pair_infer_(&a.set, 1, c2, 2, &o, sc, &ch, &err) == 0);
	CHECK(ch.best == 1 && isinf(sc[1].snr_db) && isnan(sc[0].snr_db));
	CHECK(ch.margin_db == 0 && ch.ambiguous);
	/* zero reference, non-zero run: -inf; zeros against zeros: +inf */
	vecset z, zr;
	vecset_init(&z, NULL, 0);
	vecset_init(&zr, NULL, 0);
	for (size_t p = 0; p < NOUT; p++)
		for (size_t j = 0; j < LEN[p]; j++)
			z.v[p][j] = zr.v[p][j] = 0;
	etc_pair_set cz[1] = {zr.set};
	CHECK(etc_pair_infer_(&a.set, 1, cz, 1, &o, sc, &ch, &err) == 0);
	CHECK(sc[0].snr_db == -INFINITY && ch.ambiguous); /* below the 0 dB floor */
	CHECK(etc_pair_infer_(&z.set, 1, cz, 1, &o, sc, &ch, &err) == 0);
	CHECK(sc[0].snr_db == INFINITY && !ch.ambiguous);
	/* an output without data is left out of the score */
	vecset_init(&r0, base, 0);
	vecset_init(&a, base, 1e-3);
	a.vals[1].read = NULL;
	etc_pair_set c1[1] = {r0.set};
	CHECK(etc_pair_infer_(&a.set, 1, c1, 1, &o, sc, &ch, &err) == 0);
	double ee = 0, rr = 0;
	for (size_t j = 0; j < LEN[0]; j++)
		ee += (a.v[0][j] - r0.v[0][j]) * (a.v[0][j] - r0.v[0][j]),
		    rr += r0.v[0][j] * r0.v[0][j];
	CHECK(near(sc[0].snr_db, 10 * log10(rr / ee), 1e-9));
	/* no candidate has every output: ranked on the agreeing output */
	a.vals[1].read = r0.vals[0].read;
	vecset other;
	vecset_init(&other, NULL, 0);
	r0.shapes[1] = "[1, 3]";
	other.shapes[1] = "[1, 3]";
	etc_pair_set cp[2] = {other.set, r0.set};
	CHECK(etc_pair_infer_(&a.set, 1, cp, 2, &o, sc, &ch, &err) == 0);
	CHECK(ch.partial && ch.usable == 0 && ch.best == 1 && sc[1].partial && !sc[1].usable);
	/* no output agrees at all: no choice */
	r0.shapes[0] = "[7, 1]";
	other.shapes[0] = "[7, 1]";
	etc_pair_set cn[2] = {other.set, r0.set};
	CHECK(etc_pair_infer_(&a.set, 1, cn, 2, &o, sc, &ch, &err) == 0);
	CHECK(ch.best == -1 && ch.ambiguous);
}

/* Identical sets are scored once, and every one gets the scores. */
static void test_identical(void)
{
	etc_pair_options o;
	etc_pair_options_init_(&o);
	o.block_elems = 2;
	etc_error err;
	etc_error_clear(&err);
	double b0[10], b1[10];
	for (size_t j = 0; j < 10; j++)
		b0[j] = rnd(), b1[j] = rnd();
	vecset r[2], s[4];
	vecset_init(&r[0], b0, 0);
	vecset_init(&r[1], b1, 0);
	vecset_init(&s[0], b1, 1e-3);
	s[1] = s[0];
	s[1].set.outputs = s[1].vals;
	for (size_t p = 0; p < NOUT; p++)
		etc_values_from_doubles(&s[1].vals[p], s[1].v[p], LEN[p]);
	vecset_init(&s[2], b0, 1e-3);
	s[3] = s[1];
	s[3].set.outputs = s[3].vals;
	for (size_t p = 0; p < NOUT; p++)
		etc_values_from_doubles(&s[3].vals[p], s[3].v[p], LEN[p]);
	s[3].v[1][2] += 1e-12; /* one value apart: not identical */
	etc_pair_set sets[4] = {s[0].set, s[1].set, s[2].set, s[3].set};
	etc_pair_set cands[2] = {r[0].set, r[1].set};
	etc_pair_score sc[8];
	etc_pair_choice ch[4];
	CHECK(etc_pair_infer_(sets, 4, cands, 2, &o, sc, ch, &err) == 0);
	check_fused(sets, 4, cands, 2, &o, sc, ch); /* twins get the comparison of the first */
	CHECK(ch[0].best == 1 && ch[1].best == 1 && ch[2].best == 0 && ch[3].best == 1);
	for (size_t k = 0; k < 2; k++) {
		double snr, cos;
		naive(&s[1], &r[k], &snr, &cos);
		CHECK_DOUBLE_EXACT(sc[2 + k].snr_db, sc[k].snr_db);
		CHECK(near(sc[2 + k].snr_db, snr, 1e-9));
		naive(&s[3], &r[k], &snr, &cos);
		CHECK(near(sc[6 + k].snr_db, snr, 1e-9));
		CHECK(sc[6 + k].snr_db != sc[k].snr_db);
	}
}

/* --- the sketch: one output of BIG elements, sampled SKETCH of them --- */
#define BIG    4096
#define SKETCH 64

typedef struct bigset {
	double v[BIG];
	etc_values val;
	etc_pair_set set;
} bigset;

static void bigset_wrap(bigset *s)
{
	etc_values_from_doubles(&s->val, s->v, BIG);
	s->set = (etc_pair_set){&s->val, NULL, NULL, 1, NULL};
}

static void big_naive(const bigset *a, const bigset *r, double *snr, double *cos)
{
	double rr = 0, aa = 0, ra = 0, ee = 0;
	for (size_t j = 0; j < BIG; j++) {
		double x = a->v[j], y = r->v[j];
		rr += y * y, aa += x * x, ra += x * y, ee += (x - y) * (x - y);
	}
	*snr = ee == 0 ? INFINITY : 10 * log10(rr / ee);
	*cos = ra / sqrt(aa * rr);
}

/*
 * Runs the sketch and the exact method on the same data: same choice,
 * same ambiguity, the exact numbers for every confirmed candidate, and for
 * the others a bound at or above their exact SNR and below the best by
 * more than the margin. Returns the sketch's choice of set 0.
 */
static bool near_or_nan(double x, double y, double rel)
{
	return isnan(x) ? isnan(y) : near(x, y, rel);
}

static etc_pair_choice sketch_vs_exact(const bigset *runs, size_t n, const bigset *refs, size_t m)
{
	etc_pair_set sets[4], cands[8];
	for (size_t i = 0; i < n; i++)
		sets[i] = runs[i].set;
	for (size_t k = 0; k < m; k++)
		cands[k] = refs[k].set;
	etc_pair_options o;
	etc_pair_options_init_(&o);
	o.sketch_elems = SKETCH;
	o.block_elems = 1000; /* blocks with a tail, in the sketch and the exact passes */
	etc_pair_score sc[32], ex[32];
	etc_pair_choice ch[4], ec[4];
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_pair_infer_(sets, n, cands, m, &o, sc, ch, &err) == 0);
	check_fused(sets, n, cands, m, &o, sc, ch);
	o.exact = true;
	CHECK(etc_pair_infer_(sets, n, cands, m, &o, ex, ec, &err) == 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(ch[i].best == ec[i].best);
		CHECK(ch[i].ambiguous == ec[i].ambiguous);
		CHECK(ec[i].confirmed == m && isinf(ec[i].others_below_db));
		CHECK(ch[i].confirmed >= 2 && ch[i].confirmed <= m);
		double others = -INFINITY;
		for (size_t k = 0; k < m; k++) {
			const etc_pair_score *s = &sc[i * m + k], *e = &ex[i * m + k];
			double snr, cos;
			big_naive(&runs[i], &refs[k], &snr, &cos);
			CHECK(near_or_nan(e->snr_db, snr, 1e-9));
			CHECK(!e->estimated);
			if (s->estimated) {
				CHECK(s->bound_db >= snr);
				CHECK(s->bound_db <
				      ex[i * m + (size_t)ec[i].best].snr_db - o.min_margin_db);
				others = fmax(others, s->bound_db);
			} else {
				CHECK(near_or_nan(s->snr_db, snr, 1e-9));
				CHECK(near_or_nan(s->cosine, cos, 1e-12));
			}
		}
		CHECK(ch[i].others_below_db == others);
		/* the runner-up is the exact one whenever it was confirmed */
		if (!sc[i * m + (size_t)ec[i].second].estimated) {
			CHECK(ch[i].second == ec[i].second);
			CHECK(near_or_nan(ch[i].margin_db, ec[i].margin_db, 1e-9));
		}
	}
	return ch[0];
}

static void test_sketch(void)
{
	static bigset refs[8], runs[4];
	for (size_t k = 0; k < 8; k++) {
		for (size_t j = 0; j < BIG; j++)
			refs[k].v[j] = rnd();
		bigset_wrap(&refs[k]);
	}
	/* refs 1 and 2 equal ref 0 but for a few elements: a sketch of 64 in
	 * 4096 most likely sees three equal candidates */
	for (size_t j = 0; j < BIG; j++)
		refs[1].v[j] = refs[2].v[j] = refs[0].v[j];
	refs[1].v[1000] += 0.3, refs[1].v[3001] -= 0.2;
	refs[2].v[17] += 0.05;
	for (size_t j = 0; j < BIG; j++) {
		runs[0].v[j] = refs[1].v[j] + 1e-6 * rnd(); /* ref 1 */
		runs[1].v[j] = refs[5].v[j] + 1e-3 * rnd(); /* ref 5, the others far */
	}
	for (size_t j = 0; j < BIG; j++) {
		runs[2].v[j] = refs[3].v[j] + 1e-4 * rnd();
		runs[3].v[j] = refs[6].v[j] + 1e-2 * rnd();
	}
	for (size_t i = 0; i < 4; i++)
		bigset_wrap(&runs[i]);
	/* four runs, each far from all but its own reference */
	etc_pair_choice c = sketch_vs_exact(runs, 4, refs, 8);
	CHECK(c.best == 1 && !c.ambiguous);
	c = sketch_vs_exact(&runs[1], 1, refs, 8);
	CHECK(c.best == 5 && c.confirmed == 2 && c.others_below_db < 30); /* the rest proven far */
	/* confirm_top 1: only the best is scored exactly, the runner-up is the
	 * sketch's first other and the margin the proven lower bound */
	etc_pair_options o1;
	etc_pair_options_init_(&o1);
	o1.sketch_elems = SKETCH;
	o1.confirm_top = 1;
	etc_pair_set cands[8];
	for (size_t k = 0; k < 8; k++)
		cands[k] = refs[k].set;
	etc_pair_score s1[8];
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_pair_infer_(&runs[1].set, 1, cands, 8, &o1, s1, &c, &err) == 0);
	check_fused(&runs[1].set, 1, cands, 8, &o1, s1, &c);
	double snr, cos;
	big_naive(&runs[1], &refs[5], &snr, &cos);
	CHECK(c.best == 5 && c.confirmed == 1 && c.second_estimated && c.second >= 0 &&
	      c.second != 5 && !c.ambiguous && !s1[5].estimated && s1[c.second].estimated);
	CHECK(near(s1[5].snr_db, snr, 1e-9));
	CHECK(c.margin_db == s1[5].snr_db - c.others_below_db && c.margin_db > 1);
	for (size_t k = 0; k < 8; k++) {
		big_naive(&runs[1], &refs[k], &snr, &cos);
		CHECK(k == 5 || (s1[k].estimated && s1[k].bound_db >= snr));
	}

	/* a lone candidate: confirmed by one pass that also sums r^2 (no energy
	 * pass), exact against the naive sums; doubles through the read
	 * functions, and the same values as dense float32 bytes */
	static bigset lone_runs[2], lone_ref;
	static float fr[BIG], fa[2][BIG];
	for (size_t j = 0; j < BIG; j++) {
		fr[j] = (float)rnd();
		lone_ref.v[j] = fr[j];
		for (size_t i = 0; i < 2; i++) {
			fa[i][j] = (float)(fr[j] + (i ? 1e-2 : 1e-4) * rnd());
			lone_runs[i].v[j] = fa[i][j];
		}
	}
	bigset_wrap(&lone_ref);
	uint8_t sizes[8] = {BIG & 0xFF, BIG >> 8};
	etc_tensor tr = {.scalar_type = ETC_FLOAT,
	                 .ndim = 1,
	                 .sizes_le = sizes,
	                 .numel = BIG,
	                 .nbytes = 4 * BIG,
	                 .data = (const uint8_t *)fr};
	etc_tensor ta[2] = {tr, tr};
	etc_values vr, va[2];
	etc_pair_raw rr_raw = {(const uint8_t *)fr, 4 * BIG}, ra_raw[2];
	etc_values_from_tensor(&vr, &tr);
	etc_pair_set fref = {&vr, &rr_raw, NULL, 1, NULL}, fruns[2], druns[2];
	for (size_t i = 0; i < 2; i++) {
		bigset_wrap(&lone_runs[i]);
		druns[i] = lone_runs[i].set;
		ta[i].data = (const uint8_t *)fa[i];
		etc_values_from_tensor(&va[i], &ta[i]);
		ra_raw[i] = (etc_pair_raw){(const uint8_t *)fa[i], 4 * BIG};
		fruns[i] = (etc_pair_set){&va[i], &ra_raw[i], NULL, 1, NULL};
	}
	etc_pair_options ol;
	etc_pair_options_init_(&ol);
	ol.sketch_elems = SKETCH;
	ol.block_elems = 1000;
	/* one run (its pass split over the threads) and two (a thread each) */
	for (int v = 0; v < 4; v++) { /* doubles, float32; one run, two */
		size_t nr = (size_t)(v / 2 + 1);
		etc_pair_score sl[2];
		etc_pair_choice cl[2];
		CHECK(etc_pair_infer_(v % 2 ? fruns : druns, nr, v % 2 ? &fref : &lone_ref.set, 1,
		                      &ol, sl, cl, &err) == 0);
		check_fused(v % 2 ? fruns : druns, nr, v % 2 ? &fref : &lone_ref.set, 1, &ol, sl,
		            cl);
		for (size_t i = 0; i < nr; i++) {
			big_naive(&lone_runs[i], &lone_ref, &snr, &cos);
			CHECK(cl[i].best == 0 && cl[i].second < 0 && cl[i].confirmed == 1);
			CHECK(!sl[i].estimated && near(sl[i].snr_db, snr, 1e-9) &&
			      near(sl[i].cosine, cos, 1e-12));
		}
	}

	/* errors where the sketch does not look: refs 0 and 1 are the run but
	 * for three elements each (about 20 dB), ref 2 the run with small noise
	 * everywhere (about 60 dB). The sketch sees 0 and 1 as equal to the run
	 * and confirms them first; ref 2's bound then forces its confirmation. */
	static bigset trap[4], run;
	for (size_t j = 0; j < BIG; j++)
		run.v[j] = rnd();
	bigset_wrap(&run);
	for (size_t k = 0; k < 4; k++) {
		for (size_t j = 0; j < BIG; j++)
			trap[k].v[j] = k < 2 ? run.v[j] : k == 2 ? run.v[j] + 1e-3 * rnd() : rnd();
		bigset_wrap(&trap[k]);
	}
	for (size_t q = 0; q < 3; q++)
		trap[0].v[5 + 1361 * q] += 1, trap[1].v[700 + 1201 * q] -= 1;
	c = sketch_vs_exact(&run, 1, trap, 4);
	CHECK(c.best == 2 && !c.ambiguous && c.confirmed >= 3);

	/* a near tie: two candidates 0.3 dB apart (noise energies 1 : 1.07) */
	static bigset tie[3], r2;
	for (size_t j = 0; j < BIG; j++)
		r2.v[j] = rnd();
	bigset_wrap(&r2);
	for (size_t j = 0; j < BIG; j++) {
		double d = 1e-2 * rnd();
		tie[0].v[j] = r2.v[j] + d;
		tie[1].v[j] = r2.v[j] - 1.035 * d;
		tie[2].v[j] = rnd();
	}
	for (size_t k = 0; k < 3; k++)
		bigset_wrap(&tie[k]);
	c = sketch_vs_exact(&r2, 1, tie, 3);
	CHECK(c.best == 0 && c.second == 1 && c.ambiguous && c.margin_db < 1);

	/* the same near tie in float32 tensors: the runner-up's error energy
	 * summed by the float32 kernel in the read of the run that compares it
	 * with the best (check_fused); its numbers against the naive sums */
	static float tf[4][BIG];
	static bigset tb[4];
	for (size_t j = 0; j < BIG; j++) {
		double d = 1e-2 * rnd();
		tf[0][j] = (float)rnd();
		tf[1][j] = (float)(tf[0][j] + d);
		tf[2][j] = (float)rnd();
		tf[3][j] = (float)(tf[0][j] + 0.49 * d + 1e-5 * rnd()); /* the run */
	}
	etc_tensor tt[4];
	etc_values tv[4];
	etc_pair_raw traw[4];
	etc_pair_set tset[4];
	for (size_t k = 0; k < 4; k++) {
		tt[k] = tr;
		tt[k].data = (const uint8_t *)tf[k];
		etc_values_from_tensor(&tv[k], &tt[k]);
		traw[k] = (etc_pair_raw){(const uint8_t *)tf[k], 4 * BIG};
		tset[k] = (etc_pair_set){&tv[k], &traw[k], NULL, 1, NULL};
		for (size_t j = 0; j < BIG; j++)
			tb[k].v[j] = tf[k][j];
	}
	etc_pair_score ts[3];
	etc_pair_choice tc;
	CHECK(etc_pair_infer_(&tset[3], 1, tset, 3, &ol, ts, &tc, &err) == 0);
	CHECK(tc.best == 0 && tc.second == 1 && tc.ambiguous && tc.margin_db > 0.2 &&
	      tc.margin_db < 0.5);
	for (size_t k = 0; k < 2; k++) {
		big_naive(&tb[3], &tb[k], &snr, &cos);
		CHECK(!ts[k].estimated && near(ts[k].snr_db, snr, 1e-9));
	}
	check_fused(&tset[3], 1, tset, 3, &ol, ts, &tc);
	/* the comparison with the best continues its pending CRC-32 (the
	 * caller's .npz check); the runner-up, read only for its error energy,
	 * and a far candidate are left to the caller */
	etc_pair_crc tcrc[3];
	etc_pair_set tcands[3];
	for (size_t k = 0; k < 3; k++) {
		tcrc[k] = (etc_pair_crc){7, true, false};
		tcands[k] = tset[k];
		tcands[k].crc = &tcrc[k];
	}
	etc_metrics tm;
	bool tcmp;
	CHECK(etc_pair_infer_compare_(&tset[3], 1, tcands, 3, &ol, ts, &tc, &tm, &tcmp, &err) == 0);
	CHECK(tc.best == 0 && tcmp && tcrc[0].done && !tcrc[1].done && !tcrc[2].done);
	CHECK(tcrc[0].crc == (uint32_t)crc32(7, (const Bytef *)tf[0], 4 * BIG));

	/* a NaN in the run: every score NaN, every candidate confirmed */
	r2.v[99] = NAN;
	c = sketch_vs_exact(&r2, 1, tie, 3);
	CHECK(c.confirmed == 3 && c.ambiguous);
}

int main(void)
{
	CHECK_GROUP(test_scores);
	CHECK_GROUP(test_edges);
	CHECK_GROUP(test_identical);
	CHECK_GROUP(test_sketch);
	return check_report("test_pairing");
}
