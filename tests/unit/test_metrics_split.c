/*
 * test_metrics_split.c - the comparison's thread split changes no bit:
 * tensors spanning several segments (with NaN, infinities, a late maximum
 * and a zero reference here and there) give the same metrics, bit for bit,
 * with 1, 2, 3 and 8 threads and the ETC_THREADS default, through every
 * float32 kernel, the 64-bit integer path and the double path; the CRC-32
 * folded into the pass equals the CRC-32 of the bytes; a tensor whose
 * maximum error appears in two segments reports the first.
 */
#include "check.h"
#include "tensor_view.h"

#include "analysis/metrics_private.h"
#include "core/internal.h"
#include "core/parallel.h"

#include <stdint.h>
#include <stdlib.h>

/* Defined (not exported) in src/analysis/metrics.c. */
int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads);

/* Enough elements for several 2^18-element segments and a partial last one. */
#define N ((size_t)(4u << 18) + 12345)

static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

static void same_bits(const char *what, const etc_metrics *a, const etc_metrics *b)
{
	int before = check_failures;
	CHECK(memcmp(&a->snr_db, &b->snr_db, sizeof(double)) == 0);
	CHECK(memcmp(&a->mse, &b->mse, sizeof(double)) == 0);
	CHECK(memcmp(&a->cosine, &b->cosine, sizeof(double)) == 0);
	CHECK(memcmp(&a->l1, &b->l1, sizeof(double)) == 0);
	CHECK(memcmp(&a->max_abs, &b->max_abs, sizeof(double)) == 0);
	CHECK(memcmp(&a->max_rel, &b->max_rel, sizeof(double)) == 0);
	CHECK(a->max_abs_index == b->max_abs_index);
	CHECK(a->count == b->count && a->nan_count == b->nan_count &&
	      a->nan_mismatch_count == b->nan_mismatch_count &&
	      a->mismatch_count == b->mismatch_count && a->notes == b->notes);
	if (check_failures != before)
		fprintf(stderr, "  ... in %s\n", what);
}

/* Every thread count against one thread, for one pair of sources. */
static void all_thread_counts(const char *name, const etc_values *r, const etc_values *a,
                              int kernel)
{
	static const unsigned counts[] = {2, 3, 8, 0};
	etc_metrics one, m;
	etc_error err;
	char what[128];
	CHECK(etc_metrics_compare_threads_(r, a, &one, &err, kernel, 1) == 0);
	for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
		CHECK(etc_metrics_compare_threads_(r, a, &m, &err, kernel, counts[k]) == 0);
		snprintf(what, sizeof what, "%s, kernel %d, %u threads", name, kernel, counts[k]);
		same_bits(what, &one, &m);
	}
	printf("%s, kernel %d: SNR %.6f dB, max abs %g at %llu, %llu NaN: same bits on "
	       "1/2/3/8 threads\n",
	       name, kernel, one.snr_db, one.max_abs, (unsigned long long)one.max_abs_index,
	       (unsigned long long)one.nan_count);
}

static void test_float32(void)
{
	float *r = malloc(N * sizeof *r), *a = malloc(N * sizeof *a);
	uint64_t s = 11;
	for (size_t i = 0; i < N; i++) {
		r[i] = (float)((double)next(&s) / 2147483648.0 - 1.0);
		a[i] = r[i] + (float)(((double)next(&s) / 2147483648.0 - 1.0) * 1e-5);
	}
	r[1000] = a[1000] = NAN;      /* both sides NaN */
	a[300000] = NAN;              /* one side only, second segment */
	r[700000] = 0;                /* relative error skips it */
	a[600000] = r[600000] + 0.5f; /* the largest error, third segment ... */
	a[800000] = r[800000] + 0.5f; /* ... and again in the fourth: the first counts */
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_FLOAT, r, N);
	view_values(&va, &xa, ETC_FLOAT, a, N);
	for (int k = 0; k <= 3; k++)
		all_thread_counts("float32", &xr, &xa, k);

	etc_metrics m;
	CHECK(etc_metrics_compare_threads_(&xr, &xa, &m, NULL, 3, 2) == 0);
	CHECK(m.nan_count == 2 && m.nan_mismatch_count == 1);
	CHECK(m.max_abs_index == 600000 && m.max_abs >= 0.49);

	/* the CRC folded into the pass, from a non-zero starting value */
	uint32_t want = etc_crc32(etc_crc32(0, (const uint8_t *)"prefix", 6), (const uint8_t *)r,
	                          N * sizeof *r);
	uint32_t crc = etc_crc32(0, (const uint8_t *)"prefix", 6);
	bool done = false;
	CHECK(etc_metrics_compare_crc_(&xr, &xa, &m, &crc, &done, NULL) == 0);
	CHECK(done && crc == want);
	printf("float32: CRC-32 folded into the threaded pass %s the bytes' CRC-32\n",
	       done && crc == want ? "equals" : "DIFFERS FROM");
	free(r);
	free(a);
}

static void test_int64_and_double(void)
{
	int64_t *ri = malloc(N * sizeof *ri), *ai = malloc(N * sizeof *ai);
	double *rd = malloc(N * sizeof *rd), *ad = malloc(N * sizeof *ad);
	uint64_t s = 5;
	for (size_t i = 0; i < N; i++) {
		ri[i] = (int64_t)next(&s) - (1 << 30);
		ai[i] = ri[i] + (int64_t)(next(&s) % 5) - 2;
		rd[i] = (double)next(&s) / 3.0;
		ad[i] = rd[i] * (1 + 1e-9);
	}
	rd[400000] = NAN;
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_LONG, ri, N);
	view_values(&va, &xa, ETC_LONG, ai, N);
	all_thread_counts("int64", &xr, &xa, 3);
	etc_values_from_doubles(&xr, rd, N);
	etc_values_from_doubles(&xa, ad, N);
	all_thread_counts("float64", &xr, &xa, 3);
	free(ri);
	free(ai);
	free(rd);
	free(ad);
}

/* The split itself: every item exactly once, whatever the thread count. */
static void mark(void *ctx, size_t begin, size_t end)
{
	unsigned char *seen = ctx;
	for (size_t i = begin; i < end; i++)
		seen[i]++;
}

static void test_parallel_for(void)
{
	unsigned char seen[1000];
	for (unsigned t = 1; t <= 9; t++) {
		for (size_t n = 0; n <= 1000; n += 97) {
			memset(seen, 0, sizeof seen);
			etc_parallel_for_(n, t, mark, seen);
			size_t once = 0;
			for (size_t i = 0; i < n; i++)
				once += seen[i] == 1;
			CHECK(once == n);
		}
	}
	CHECK(etc_thread_count_() >= 1);
}

int main(void)
{
	CHECK_GROUP(test_parallel_for);
	CHECK_GROUP(test_float32);
	CHECK_GROUP(test_int64_and_double);
	return check_report("test_metrics_split");
}
