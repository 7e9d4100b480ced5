/*
 * test_agreement.c - the run-agreement matrix of agreement.h against the
 * direct float64 sums of every pair (to 1e-9 relative), whatever the block
 * cut or the merging of partial accumulators; equal runs are +inf, a zero
 * reference -inf (NaN when both are zero), and bad calls are errors.
 */
#include "check.h"
#include "etcompare/agreement.h"

#include <math.h>
#include <stdlib.h>

#define RUNS  7
#define ELEMS 1000

static float x[RUNS][ELEMS];

static double direct(int i, int j)
{
	double rr = 0, dd = 0;
	for (int t = 0; t < ELEMS; t++) {
		double d = (double)x[i][t] - (double)x[j][t];
		rr += (double)x[j][t] * x[j][t];
		dd += d * d;
	}
	if (dd == 0)
		return rr == 0 ? NAN : INFINITY;
	if (rr == 0)
		return -INFINITY;
	return 10.0 * log10(rr / dd);
}

static int close_rel(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return fabs(a - b) <= 1e-9 * fmax(fabs(b), 1.0); /* 0 dB: absolute */
}

static void fill(void)
{
	srand(11);
	for (int t = 0; t < ELEMS; t++) {
		float base = (float)rand() / (float)RAND_MAX - 0.5f;
		for (int i = 0; i < RUNS; i++)
			x[i][t] = base * (1.0f + 1e-4f * ((float)rand() / (float)RAND_MAX - 0.5f));
		x[3][t] += 0.01f;  /* the outlier */
		x[5][t] = x[4][t]; /* equal runs */
	}
	for (int t = 0; t < ELEMS; t++)
		x[6][t] = 0; /* an all-zero run */
}

static void check_matrix(etc_agreement *ag)
{
	double snr[RUNS * RUNS];
	etc_error err = {0};
	CHECK(etc_agreement_snr(ag, snr, &err) == ETC_OK);
	for (int i = 0; i < RUNS; i++)
		for (int j = 0; j < RUNS; j++) {
			double want = i == j ? (direct(j, j)) : direct(i, j);
			if (!close_rel(snr[i * RUNS + j], want)) {
				CHECK(0);
				fprintf(stderr, "snr[%d][%d] = %.17g, direct %.17g\n", i, j,
				        snr[i * RUNS + j], want);
			}
		}
	CHECK(isinf(snr[4 * RUNS + 5]) && snr[4 * RUNS + 5] > 0);
	CHECK(isinf(snr[0 * RUNS + 6]) && snr[0 * RUNS + 6] < 0);
	CHECK(isnan(snr[6 * RUNS + 6]));
}

static void one_block(void)
{
	etc_agreement *ag;
	etc_error err = {0};
	CHECK(etc_agreement_new(RUNS, &ag, &err) == ETC_OK);
	CHECK(etc_agreement_add_f32(ag, &x[0][0], ELEMS, ELEMS, &err) == ETC_OK);
	check_matrix(ag);
	etc_agreement_free(ag);
}

static void blocks_and_merge(void)
{
	etc_error err = {0};
	etc_agreement *a, *b;
	CHECK(etc_agreement_new(RUNS, &a, &err) == ETC_OK);
	CHECK(etc_agreement_new(RUNS, &b, &err) == ETC_OK);
	/* uneven blocks: 1, 99, 300 into a; the rest into b */
	size_t cuts[] = {0, 1, 100, 400, 1000};
	for (int k = 0; k < 4; k++)
		CHECK(etc_agreement_add_f32(k < 3 ? a : b, &x[0][cuts[k]], ELEMS,
		                            cuts[k + 1] - cuts[k], &err) == ETC_OK);
	CHECK(etc_agreement_merge(a, b, &err) == ETC_OK);
	check_matrix(a);
	size_t el = 0;
	etc_agreement_sums(a, NULL, NULL, NULL, &el);
	CHECK(el == ELEMS);
	etc_agreement_free(a);
	etc_agreement_free(b);
}

static void errors(void)
{
	etc_error err = {0};
	etc_agreement *ag = (etc_agreement *)1, *other;
	CHECK(etc_agreement_new(1, &ag, &err) == ETC_ERR_USAGE && ag == NULL);
	CHECK(etc_agreement_new(3, &ag, &err) == ETC_OK);
	double snr[9];
	CHECK(etc_agreement_snr(ag, snr, &err) == ETC_ERR_USAGE);
	CHECK(etc_agreement_add_f32(ag, &x[0][0], 5, 10, &err) == ETC_ERR_USAGE);
	CHECK(etc_agreement_new(4, &other, &err) == ETC_OK);
	CHECK(etc_agreement_merge(ag, other, &err) == ETC_ERR_MISMATCH);
	etc_agreement_free(other);
	etc_agreement_free(ag);
}

int main(void)
{
	fill();
	CHECK_GROUP(one_block);
	CHECK_GROUP(blocks_and_merge);
	CHECK_GROUP(errors);
	return check_report("test_agreement");
}
