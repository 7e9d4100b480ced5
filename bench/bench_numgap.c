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
 * Usage: bench_numgap [--repeat R]
 */
#include "analysis/numgap_private.h"

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
	return 0;
}
