#define _POSIX_C_SOURCE 200809L
/*
 * bench_numgap.c - how the numeric gap's handle matching scales: the
 * connected components of runtime and reference keys that share debug
 * handles (etc_numgap_components_, src/numgap.c), for 10k, 100k and 1M
 * handles. Runtime keys are groups of 1, 1 and 3 handles in turn (fused
 * delegate groups), reference keys one handle each, handles shuffled so the
 * sort has work to do. Upstream compares every runtime key with every
 * reference key (O(n^2)); here the cost per handle should stay about
 * constant. Test-side code: links the library's internal function.
 *
 * It also times the streaming readers of the quantized and channels-last
 * comparisons (src/analysis/values.c): 5,000 pairs of 64k elements, an
 * int8 [1, 16, 64, 64] NHWC-permuted tensor against float32 NCHW, per
 * tensor and per channel, through etc_metrics_compare, against the plain
 * float32 pass.
 *
 * Usage: bench_numgap [--repeat R]
 */
#include "analysis/numgap_private.h"
#include "analysis/values_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Fills an etc_tensor over `data` with the 4 sizes (little-endian int64s in `sizes_le`). */
static void make_tensor(etc_tensor *t, int st, const void *data, uint8_t *sizes_le,
                        const int64_t *sizes, size_t esize)
{
	memset(t, 0, sizeof *t);
	t->scalar_type = st;
	t->ndim = 4;
	t->numel = 1;
	for (int k = 0; k < 4; k++) {
		for (int b = 0; b < 8; b++)
			sizes_le[8 * k + b] = (uint8_t)((uint64_t)sizes[k] >> (8 * b));
		t->numel *= (uint64_t)sizes[k];
	}
	t->sizes_le = sizes_le;
	t->nbytes = t->numel * esize;
	t->data = data;
}

/* 5,000 comparisons of 64k elements through each reader: seconds of CPU. */
static int bench_readers(int repeat)
{
	enum { N = 1, C = 16, H = 64, W = 64, PAIRS = 5000 };
	const int64_t nchw[4] = {N, C, H, W}, nhwc[4] = {N, H, W, C};
	size_t n = (size_t)N * C * H * W;
	float *ref = malloc(n * sizeof *ref), *act = malloc(n * sizeof *act);
	int8_t *q = malloc(n);
	if (!ref || !act || !q)
		return 1;
	double scale[C], zp[C];
	for (int c = 0; c < C; c++)
		scale[c] = 0.01 * (c + 1), zp[c] = c % 5 - 2;
	for (size_t i = 0; i < n; i++) {
		ref[i] = (float)((double)(xorshift() % 2001) / 1000.0 - 1.0);
		act[i] = ref[i] + 1e-4f;
		q[i] = (int8_t)(xorshift() % 255 - 127);
	}
	uint8_t s1[32], s2[32], s3[32];
	etc_tensor tr, ta, tq;
	make_tensor(&tr, ETC_FLOAT, ref, s1, nchw, 4);
	make_tensor(&ta, ETC_FLOAT, act, s2, nchw, 4);
	make_tensor(&tq, ETC_CHAR, q, s3, nhwc, 1);
	static const char *const what[] = {"float32 against float32 (plain pass)",
	                                   "int8 per tensor against float32",
	                                   "int8 per channel, NHWC read as NCHW"};
	for (int mode = 0; mode < 3; mode++) {
		double best = 1e9;
		for (int r = 0; r < repeat; r++) {
			clock_t c0 = clock();
			for (int p = 0; p < PAIRS; p++) {
				etc_values vr, va, vq;
				etc_permuted perm;
				etc_dequant dq = {{0}, scale, zp, 1, 1};
				etc_values_from_tensor(&vr, &tr);
				if (mode == 0) {
					etc_values_from_tensor(&va, &ta);
				} else {
					etc_values_from_tensor(&vq, &tq);
					if (mode == 2) {
						char name[32];
						if (!etc_channels_last_match_(nhwc, nchw, 4, &perm,
						                              name, sizeof name))
							return 1;
						perm.base = vq;
						perm.t = &tq;
						etc_values_permuted_(&vq, &perm);
						dq.channels = C;
						dq.inner = (uint64_t)H * W;
					} else {
						vq.count = n;
					}
					dq.base = vq;
					etc_values_dequant_(&va, &dq);
				}
				etc_metrics m;
				if (etc_metrics_compare(&vr, &va, &m, NULL) < 0)
					return 1;
			}
			double c = (double)(clock() - c0) / CLOCKS_PER_SEC;
			if (c < best)
				best = c;
		}
		printf("readers: %d pairs of 64k, %s: best %.3f s CPU (%.2f ns per element)\n",
		       PAIRS, what[mode], best, best / ((double)PAIRS * (double)n) * 1e9);
	}
	free(ref);
	free(act);
	free(q);
	return 0;
}

int main(int argc, char **argv)
{
	int repeat = 5;
	if (argc == 3 && !strcmp(argv[1], "--repeat"))
		repeat = atoi(argv[2]);
	static const size_t sizes[] = {10000, 100000, 1000000};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t h = sizes[s];
		int64_t *ids = malloc(h * sizeof *ids), *refh = malloc(h * sizeof *refh);
		etc_ng_key *keys = malloc(2 * h * sizeof *keys);
		uint32_t *comp = malloc(2 * h * sizeof *comp);
		if (!ids || !refh || !keys || !comp)
			return 1;
		for (size_t i = 0; i < h; i++)
			ids[i] = (int64_t)i * 7 + 3; /* sparse handles */
		for (size_t i = h; i-- > 1;) {
			size_t j = xorshift() % (i + 1);
			int64_t t = ids[i];
			ids[i] = ids[j];
			ids[j] = t;
		}
		size_t n = 0;
		static const uint32_t group[] = {1, 1, 3};
		for (size_t i = 0, g = 0; i < h; g++) {
			uint32_t c = group[g % 3];
			if (c > h - i)
				c = (uint32_t)(h - i);
			keys[n++] = (etc_ng_key){ids + i, c};
			i += c;
		}
		size_t nrt = n;
		for (size_t i = 0; i < h; i++) {
			refh[i] = ids[(i * 2654435761u) % h];
			keys[n++] = (etc_ng_key){refh + i, 1};
		}
		double best = 1e9, best_cpu = 1e9;
		size_t nc = 0;
		for (int r = 0; r < repeat; r++) {
			double t0 = now();
			clock_t c0 = clock();
			if (etc_numgap_components_(keys, n, comp, &nc, NULL) < 0)
				return 1;
			double t = now() - t0, c = (double)(clock() - c0) / CLOCKS_PER_SEC;
			if (t < best)
				best = t;
			if (c < best_cpu)
				best_cpu = c;
		}
		printf(
		    "handles %7zu: %zu runtime keys, %zu reference keys, %zu groups: best %.4f s "
		    "wall, %.4f s CPU, %.0f ns CPU per handle\n",
		    h, nrt, n - nrt, nc, best, best_cpu, best_cpu / (double)h * 1e9);
		free(ids);
		free(refh);
		free(keys);
		free(comp);
	}
	return bench_readers(repeat);
}
