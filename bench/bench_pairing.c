#define _POSIX_C_SOURCE 200809L
/*
 * bench_pairing.c - pairing by content against pairing by order, side by
 * side in one run: N runs of one float32 output of E elements each, M
 * reference sets; run i is reference (7 i + 3) mod M plus float32-sized
 * noise (about 120 dB, so the chosen pairs take the exact direct pass as on
 * real files).
 *   order:    N comparisons (etc_metrics_compare of run i with reference i
 *             mod M): what --pair-by order does;
 *   content:  etc_pair_infer_ (src/analysis/pairing.c: blocked dgemm of
 *             runs x references, the sums of squares, the direct pass for
 *             the chosen pairs), then the same N comparisons of the chosen
 *             pairs: what --pair-by content does.
 * The inference alone is printed too. Every run must be paired with its
 * reference (exit 1 otherwise). Inputs live in anonymous memory (N x E x 4
 * bytes: 4 GiB for the defaults). The best of --repeat runs is kept.
 *
 * Usage: bench_pairing [--runs N] [--refs M] [--elems E] [--distinct D]
 *                      [--repeat K] [--block-sets B] [--block-elems L]
 */
#include "analysis/pairing.h"
#include "etcompare/metrics.h"

#include <math.h>
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

/* uniform in [-1, 1) */
static float uniform(void)
{
	return (float)((double)(xorshift() >> 11) / 4503599627370496.0 - 1.0);
}

static void make_tensor(etc_tensor *t, const float *data, uint64_t n)
{
	memset(t, 0, sizeof *t);
	t->scalar_type = ETC_FLOAT;
	t->numel = n;
	t->nbytes = n * 4;
	t->data = (const uint8_t *)data;
}

static size_t arg(int argc, char **argv, const char *name, size_t def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], name))
			return (size_t)strtoull(argv[i + 1], NULL, 10);
	return def;
}

int main(int argc, char **argv)
{
	size_t n = arg(argc, argv, "--runs", 1000), m = arg(argc, argv, "--refs", 100);
	size_t e = arg(argc, argv, "--elems", (size_t)1 << 20);
	size_t repeat = arg(argc, argv, "--repeat", 3);
	size_t distinct = arg(argc, argv, "--distinct", n);
	if (!distinct || distinct > n)
		distinct = n;
	etc_pair_options po;
	etc_pair_options_init_(&po);
	po.block_sets = arg(argc, argv, "--block-sets", 0);
	po.block_elems = arg(argc, argv, "--block-elems", 0);

	float *refs = malloc(m * e * sizeof *refs), *runs = malloc(n * e * sizeof *runs);
	etc_tensor *tr = malloc(m * sizeof *tr), *ta = malloc(n * sizeof *ta);
	etc_values *vr = malloc(m * sizeof *vr), *va = malloc(n * sizeof *va);
	etc_pair_set *sr = malloc(m * sizeof *sr), *sa = malloc(n * sizeof *sa);
	etc_pair_raw *raw = malloc(n * sizeof *raw);
	etc_pair_score *scores = malloc(n * m * sizeof *scores);
	etc_pair_choice *choice = malloc(n * sizeof *choice);
	if (!refs || !runs || !raw || !tr || !ta || !vr || !va || !sr || !sa || !scores ||
	    !choice) {
		fprintf(stderr, "bench_pairing: out of memory\n");
		return 1;
	}
	double t0 = now();
	for (size_t j = 0; j < m * e; j++)
		refs[j] = uniform();
	for (size_t i = 0; i < n; i++) {
		const float *r = refs + ((7 * (i % distinct) + 3) % m) * e;
		float *a = runs + i * e;
		if (i >= distinct)
			memcpy(a, runs + (i % distinct) * e, e * sizeof *a);
		else
			for (size_t j = 0; j < e; j++)
				a[j] = r[j] + 1e-6f * uniform();
	}
	for (size_t k = 0; k < m; k++) {
		make_tensor(&tr[k], refs + k * e, e);
		etc_values_from_tensor(&vr[k], &tr[k]);
		sr[k] = (etc_pair_set){&vr[k], NULL, NULL, 1};
	}
	for (size_t i = 0; i < n; i++) {
		make_tensor(&ta[i], runs + i * e, e);
		etc_values_from_tensor(&va[i], &ta[i]);
		raw[i] = (etc_pair_raw){runs + i * e, e * sizeof *runs};
		sa[i] = (etc_pair_set){&va[i], &raw[i], NULL, 1};
	}
	printf("bench_pairing: %zu runs (%zu distinct) x %zu reference sets of %zu float32 "
	       "elements (%.2f GiB of runs, %.2f GiB of references; generated in %.1f s)\n",
	       n, distinct, m, e, (double)(n * e * 4) / (1 << 30), (double)(m * e * 4) / (1 << 30),
	       now() - t0);

	etc_error err;
	etc_error_clear(&err);
	etc_metrics met;
	double best_order = INFINITY, best_infer = INFINITY, best_content = INFINITY;
	volatile double sink = 0;
	for (size_t rep = 0; rep < repeat; rep++) {
		double t = now();
		for (size_t i = 0; i < n; i++) {
			if (etc_metrics_compare(&vr[i % m], &va[i], &met, &err) < 0) {
				fprintf(stderr, "bench_pairing: %s\n", err.message);
				return 1;
			}
			sink += met.snr_db;
		}
		double order = now() - t;
		t = now();
		if (etc_pair_infer_(sa, n, sr, m, &po, scores, choice, &err) < 0) {
			fprintf(stderr, "bench_pairing: %s\n", err.message);
			return 1;
		}
		double infer = now() - t;
		for (size_t i = 0; i < n; i++) {
			if (etc_metrics_compare(&vr[choice[i].best], &va[i], &met, &err) < 0)
				return 1;
			sink += met.snr_db;
		}
		double content = now() - t;
		for (size_t i = 0; i < n; i++)
			if (choice[i].best != (long)((7 * (i % distinct) + 3) % m) ||
			    choice[i].ambiguous) {
				fprintf(stderr,
				        "bench_pairing: run %zu paired with %ld (ambiguous %d), "
				        "not %zu\n",
				        i, choice[i].best, choice[i].ambiguous,
				        (7 * (i % distinct) + 3) % m);
				return 1;
			}
		printf("  repeat %zu: order %.3f s, content %.3f s (inference %.3f s)\n", rep,
		       order, content, infer);
		if (order < best_order)
			best_order = order;
		if (infer < best_infer)
			best_infer = infer;
		if (content < best_content)
			best_content = content;
	}
	size_t refined = 0;
	for (size_t i = 0; i < n * m; i++)
		refined += scores[i].refined;
	double gflop = 2.0 * (double)distinct * (double)m * (double)e / 1e9;
	printf("order pairing   (%zu comparisons):            %.3f s\n", n, best_order);
	printf("content pairing (inference + %zu comparisons): %.3f s = %.2fx order\n", n,
	       best_content, best_content / best_order);
	printf("  inference alone: %.3f s = %.2fx order (%.0f GFLOP of dgemm: %.1f GFLOP/s; "
	       "%zu pairs refined directly)\n",
	       best_infer, best_infer / best_order, gflop, gflop / best_infer, refined);
	printf("  smallest margin %.1f dB; sink %g\n", choice[0].margin_db, sink);
	free(refs), free(runs), free(tr), free(ta), free(vr), free(va), free(sr), free(sa);
	free(scores), free(choice), free(raw);
	return 0;
}
