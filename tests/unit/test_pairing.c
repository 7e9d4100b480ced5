/*
 * test_pairing.c - content pairing (src/analysis/pairing.c): the blocked
 * Gram-term scores against a naive double computation, with blocks smaller
 * than the data (tails in both directions), outputs of several lengths, a
 * candidate of another shape, twins, NaN, zero vectors, outputs without
 * data and the partly comparable fallback.
 */
#include "analysis/pairing.h"
#include "check.h"

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
	/* identical: +inf; a NaN in a candidate: NaN ranks below */
	vecset_init(&a, base, 0);
	r0.v[1][2] = NAN;
	CHECK(etc_pair_infer_(&a.set, 1, c2, 2, &o, sc, &ch, &err) == 0);
	CHECK(ch.best == 1 && isinf(sc[1].snr_db) && isnan(sc[0].snr_db));
	CHECK(isinf(ch.margin_db) && !ch.ambiguous);
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

int main(void)
{
	CHECK_GROUP(test_scores);
	CHECK_GROUP(test_edges);
	CHECK_GROUP(test_identical);
	return check_report("test_pairing");
}
