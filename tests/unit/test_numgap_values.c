/*
 * test_numgap_values.c - the streaming readers of the quantized and
 * channels-last comparisons (src/analysis/values.c). The channels-last
 * form of a reference tensor (rank 3, 4, 5; both directions) is built here
 * element by element from the index arithmetic, then read back through the
 * permuted reader in chunks of awkward sizes and starts: every element must
 * come back at its reference position. The same through the direct gather
 * of a dense float32 tensor. Dequantization per tensor and per channel is
 * checked against (q - z) * s worked out here, for chunks that start inside
 * a channel. A float32 matrix held transposed (the reference executor's
 * large weights) and read through strides as float32 (as_f32): its
 * elements come back bit for bit, and the metrics and the summary over it
 * are the bits of those over its dense transpose, on 1 and 2 threads.
 */
#include "check.h"
#include "tensor_view.h"

#include "analysis/values_private.h"
#include "format/tensor_private.h"

#include <stdint.h>
#include <stdlib.h>

int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads);

/* The reference index of channels-last element (n, spatial..., c). */
static void case_rank(uint32_t rank, const int64_t *ref_sizes)
{
	/* actual = channels-last of ref: sizes (N, D1.., C) */
	int64_t act_sizes[5];
	act_sizes[0] = ref_sizes[0];
	for (uint32_t k = 1; k + 1 < rank; k++)
		act_sizes[k] = ref_sizes[k + 1];
	act_sizes[rank - 1] = ref_sizes[1];
	uint64_t n = 1;
	for (uint32_t k = 0; k < rank; k++)
		n *= (uint64_t)ref_sizes[k];
	double *act = malloc(n * sizeof *act), *got = malloc(n * sizeof *got);
	float *actf = malloc(n * sizeof *actf);
	CHECK(act && got && actf);
	if (!act || !got || !actf)
		return;
	/* act[flat(a)] = reference flat index of the same element */
	for (uint64_t i = 0; i < n; i++) {
		int64_t ai[5], rest = (int64_t)i;
		for (uint32_t k = rank; k-- > 0;) {
			ai[k] = rest % act_sizes[k];
			rest /= act_sizes[k];
		}
		int64_t ri[5];
		ri[0] = ai[0];
		ri[1] = ai[rank - 1];
		for (uint32_t k = 2; k < rank; k++)
			ri[k] = ai[k - 1];
		int64_t flat = 0;
		for (uint32_t k = 0; k < rank; k++)
			flat = flat * ref_sizes[k] + ri[k];
		act[i] = (double)flat;
		actf[i] = (float)flat;
	}
	etc_permuted p;
	char name[32];
	CHECK(etc_channels_last_match_(act_sizes, ref_sizes, rank, &p, name, sizeof name) == 1);
	static const char *const want[] = {"NLC->NCL", "NHWC->NCHW", "NDHWC->NCDHW"};
	CHECK_STR(name, want[rank - 3]);
	/* through the source's reader, element by element, and by direct gather */
	uint8_t sizes_le[40];
	for (uint32_t k = 0; k < rank; k++)
		for (int b = 0; b < 8; b++)
			sizes_le[8 * k + b] = (uint8_t)((uint64_t)act_sizes[k] >> (8 * b));
	etc_tensor t = {ETC_FLOAT, rank, 0, sizes_le, NULL, 0, n, 4 * n, (const uint8_t *)actf};
	static const size_t chunks[] = {1, 3, 7, 64, 1000};
	for (int mode = 0; mode < 2; mode++) {
		etc_values base, v;
		if (mode == 0) {
			etc_values_from_doubles(&base, act, n);
			p.t = NULL;
		} else {
			etc_values_from_tensor(&base, &t);
			p.t = &t;
		}
		p.base = base;
		etc_values_permuted_(&v, &p);
		CHECK(v.count == n);
		for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
			memset(got, 0xff, n * sizeof *got);
			for (uint64_t s = 0; s < n; s += chunks[c]) {
				size_t m = (size_t)(n - s < chunks[c] ? n - s : chunks[c]);
				v.read(v.src, s, m, got + s);
			}
			uint64_t bad = 0;
			for (uint64_t i = 0; i < n; i++)
				bad += got[i] != (double)i;
			if (bad)
				fprintf(stderr, "rank %u mode %d chunk %zu: %llu misplaced\n", rank,
				        mode, chunks[c], (unsigned long long)bad);
			CHECK(bad == 0);
		}
	}
	/* the other direction: the reference is channels-last of the actual */
	CHECK(etc_channels_last_match_(ref_sizes, act_sizes, rank, &p, name, sizeof name) == 1);
	/* at rank 3 both directions swap the last two dims: the first name is kept */
	static const char *const back[] = {"NLC->NCL", "NCHW->NHWC", "NCDHW->NDHWC"};
	CHECK_STR(name, back[rank - 3]);
	free(act);
	free(got);
	free(actf);
}

static void dequant(void)
{
	enum { C = 3, INNER = 5, OUTER = 4 };
	const uint64_t n = OUTER * C * INNER;
	double q[OUTER * C * INNER], got[OUTER * C * INNER];
	for (uint64_t i = 0; i < n; i++)
		q[i] = (double)((int)(i * 37 % 255) - 127);
	double s[C] = {0.5, 0.25, 0.125}, z[C] = {3, -2, 0};
	etc_dequant d = {{0}, s, z, C, INNER};
	etc_values_from_doubles(&d.base, q, n);
	etc_values v;
	etc_values_dequant_(&v, &d);
	CHECK(v.scalar_type == ETC_DOUBLE && v.count == n);
	static const size_t chunks[] = {1, 4, 7, 60};
	for (size_t c = 0; c < 4; c++) {
		for (uint64_t st = 0; st < n; st += chunks[c])
			v.read(v.src, st, (size_t)(n - st < chunks[c] ? n - st : chunks[c]),
			       got + st);
		uint64_t bad = 0;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t ch = i / INNER % C;
			bad += got[i] != (q[i] - z[ch]) * s[ch];
		}
		CHECK(bad == 0);
	}
	/* per tensor */
	etc_dequant one = {{0}, s + 1, z + 1, 1, 1};
	etc_values_from_doubles(&one.base, q, n);
	etc_values_dequant_(&v, &one);
	v.read(v.src, 5, 9, got);
	for (int i = 0; i < 9; i++)
		CHECK(got[i] == (q[5 + i] - z[1]) * s[1]);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 32);
}

/* Values of every kind a kernel must get right: wide exponents, zeros of
 * both signs, subnormals, infinities, a NaN with a payload, ties. */
static float awkward(uint64_t i)
{
	uint32_t k = rng() % 8192, bits; /* rare: most chunks take the float32 kernels */
	float f;
	switch (k) {
	case 0:
		return 0.0f;
	case 1:
		return -0.0f;
	case 2:
		return INFINITY;
	case 3:
		return -INFINITY;
	case 4:
		bits = 0x7fc01234u; /* a NaN with a payload */
		memcpy(&f, &bits, 4);
		return f;
	case 5:
		bits = rng() % 0x7fffffu + 1; /* subnormal */
		memcpy(&f, &bits, 4);
		return f;
	case 6:
		return 0.75f; /* ties for max |d| */
	default:
		return ((float)rng() / 4294967296.0f - 0.5f) *
		       (float)ldexp(1.0, (int)(i % 40) - 20);
	}
}

static bool same_metrics(const etc_metrics *a, const etc_metrics *b)
{
	const double x[] = {a->snr_db, a->mse, a->cosine, a->l1, a->max_abs, a->max_rel};
	const double y[] = {b->snr_db, b->mse, b->cosine, b->l1, b->max_abs, b->max_rel};
	for (int i = 0; i < 6; i++)
		if (memcmp(&x[i], &y[i], 8) != 0 && !(isnan(x[i]) && isnan(y[i])))
			return false;
	return a->count == b->count && a->max_abs_index == b->max_abs_index &&
	       a->nan_count == b->nan_count && a->mismatch_count == b->mismatch_count &&
	       a->notes == b->notes && a->identical == b->identical;
}

/* A rows x cols float32 matrix stored as its transpose (cols x rows). */
static void transposed(uint64_t rows, uint64_t cols, bool special)
{
	uint64_t n = rows * cols;
	float *store = malloc(n * 4), *dense = malloc(n * 4), *act = malloc(n * 4);
	float *got = malloc(n * 4);
	if (!store || !dense || !act || !got) {
		CHECK(!"out of memory");
		free(store), free(dense), free(act), free(got);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		/* full mantissas: the sums round, and their order shows */
		store[i] = special ? awkward(i) : (float)rng() / 4294967296.0f - 0.5f;
		act[i] = special && rng() % 4096 == 0
		             ? awkward(i)
		             : store[i] * (1.0f + ((float)rng() / 4294967296.0f - 0.5f) / 256);
	}
	for (uint64_t r = 0; r < rows; r++)
		for (uint64_t c = 0; c < cols; c++)
			dense[r * cols + c] = store[c * rows + r];
	view vs, vd, va;
	etc_values ds, dd, da, pv;
	view_values(&vs, &ds, ETC_FLOAT, store, n);
	view_values(&vd, &dd, ETC_FLOAT, dense, n);
	view_values(&va, &da, ETC_FLOAT, act, n);
	etc_permuted pm;
	memset(&pm, 0, sizeof pm);
	pm.base = ds;
	pm.t = &vs.t;
	pm.ndim = 2;
	pm.sizes[0] = (int64_t)rows;
	pm.sizes[1] = (int64_t)cols;
	pm.stride[0] = 1;
	pm.stride[1] = (int64_t)rows;
	pm.as_f32 = true;
	etc_values_permuted_(&pv, &pm);
	CHECK(etc_values_is_f32_gather_(&pv));
	/* the elements in pieces of awkward sizes and starts */
	static const size_t pieces[] = {1, 3, 17, 4096, 100003};
	for (size_t k = 0; k < 5; k++) {
		for (uint64_t st = 0; st < n; st += pieces[k])
			etc_values_gather_f32_(
			    &pv, st, (size_t)(n - st < pieces[k] ? n - st : pieces[k]), got + st);
		CHECK(memcmp(got, dense, n * 4) == 0);
	}
	/* the metrics, through the float32 path, as over the dense copy */
	etc_error err;
	for (unsigned threads = 1; threads <= 2; threads++) {
		etc_metrics m1, m2;
		CHECK(etc_metrics_compare_threads_(&dd, &da, &m1, &err, 3, threads) == 0);
		CHECK(etc_metrics_compare_threads_(&pv, &da, &m2, &err, 3, threads) == 0);
		CHECK(same_metrics(&m1, &m2));
	}
	etc_metrics m3, m4;
	CHECK(etc_metrics_compare(&dd, &da, &m3, &err) == 0);
	CHECK(etc_metrics_compare(&pv, &da, &m4, &err) == 0);
	CHECK(same_metrics(&m3, &m4));
	/* the summary, read in pieces in row-major order, as over the dense copy */
	etc_tensor_summary s1, s2;
	etc_tensor_summarize(&vd.t, &s1);
	etc_summarize_read_(pv.read, pv.src, n, &s2);
	CHECK(s1.count == s2.count && s1.nan_count == s2.nan_count && s1.inf_count == s2.inf_count);
	CHECK(memcmp(&s1.min, &s2.min, 8) == 0 || (isnan(s1.min) && isnan(s2.min)));
	CHECK(memcmp(&s1.max, &s2.max, 8) == 0 || (isnan(s1.max) && isnan(s2.max)));
	CHECK(memcmp(&s1.mean, &s2.mean, 8) == 0 || (isnan(s1.mean) && isnan(s2.mean)));
	free(store), free(dense), free(act), free(got);
}

int main(void)
{
	transposed(1, 1, false);
	transposed(7, 5, true);
	transposed(33, 17, true);
	transposed(1000, 1280 / 4, false);
	transposed(700, 600, true); /* 420,000: two segments of the metrics */
	transposed(1, 300000, false);
	transposed(300000, 1, true);
	const int64_t r3[] = {2, 3, 5}, r4[] = {2, 3, 4, 5}, r5[] = {1, 3, 2, 4, 5};
	case_rank(3, r3);
	case_rank(4, r4);
	case_rank(5, r5);
	/* not a permutation, the same shape, rank 2 or 6: no match */
	etc_permuted p;
	char name[32];
	const int64_t a[] = {1, 4, 5, 3}, b[] = {1, 3, 5, 4}, c[] = {1, 3, 4, 5};
	CHECK(etc_channels_last_match_(b, c, 4, &p, name, sizeof name) == 0);
	CHECK(etc_channels_last_match_(c, c, 4, &p, name, sizeof name) == 0);
	CHECK(etc_channels_last_match_(a, c, 2, &p, name, sizeof name) == 0);
	dequant();
	return check_report("test_numgap_values");
}
