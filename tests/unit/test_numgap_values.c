/*
 * test_numgap_values.c - the streaming readers of the quantized and
 * channels-last comparisons (src/analysis/values.c). The channels-last
 * form of a reference tensor (rank 3, 4, 5; both directions) is built here
 * element by element from the index arithmetic, then read back through the
 * permuted reader in chunks of awkward sizes and starts: every element must
 * come back at its reference position. The same through the direct gather
 * of a dense float32 tensor. Dequantization per tensor and per channel is
 * checked against (q - z) * s worked out here, for chunks that start inside
 * a channel.
 */
#include "check.h"

#include "analysis/values_private.h"

#include <stdlib.h>

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

int main(void)
{
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
