#define _POSIX_C_SOURCE 200809L
/*
 * bench_pairing.c - pairing by content against pairing by order, side by
 * side in one run: N runs of one float32 output of E elements each, M
 * reference sets; run i is reference (7 i + 3) mod M plus float32-sized
 * noise (about 120 dB, so the chosen pairs take the exact direct pass as on
 * real files).
 *   order:    N comparisons (etc_metrics_compare of run i with reference i
 *             mod M): what --pair-by order does;
 *   content:  etc_pair_infer_compare_ (src/analysis/pairing.c: the runs x
 *             references product on a sketch of each output, then per run
 *             the comparison with the sketch's best, which confirms it,
 *             with the runner-up's error energy summed in the same read of
 *             the run, and the direct pass over any other candidate that
 *             may matter): the N comparisons of the chosen pairs come out
 *             of the inference, as in --pair-by content (accuracy.c).
 *   --separate 1: etc_pair_infer_ and then the N comparisons (the
 *             previous way: the runner-up and the best confirmed by a pass
 *             of their own); its inference alone is printed too. Every run must be paired with its
 * reference (exit 1 otherwise). Inputs live in anonymous memory (N x E x 4
 * bytes: 4 GiB for the defaults). Each repeat measures order and content
 * back to back; the median of the --repeat ratios is printed with the
 * wall-clock and the process CPU time of both (on a shared machine the
 * CPU time is the steadier cost: waiting for a core is not counted).
 *
 * Usage: bench_pairing [--runs N] [--refs M] [--elems E] [--distinct D]
 *                      [--repeat K] [--block-sets B] [--block-elems L]
 *                      [--sketch-elems S] [--confirm-top 1|2] [--exact 1]
 *                      [--separate 1]
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

static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int by_value(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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
	/* as the etcompare program does: OpenBLAS's pool is stopped once the
	 * products are done (core/blas.c), not left spinning beside the passes */
	setenv("ETC_BLAS_REST", "1", 0);
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
	po.sketch_elems = arg(argc, argv, "--sketch-elems", 0);
	po.confirm_top = arg(argc, argv, "--confirm-top", 2);
	po.exact = arg(argc, argv, "--exact", 0) != 0;
	bool separate = arg(argc, argv, "--separate", 0) != 0;

	float *refs = malloc(m * e * sizeof *refs), *runs = malloc(n * e * sizeof *runs);
	etc_tensor *tr = malloc(m * sizeof *tr), *ta = malloc(n * sizeof *ta);
	etc_values *vr = malloc(m * sizeof *vr), *va = malloc(n * sizeof *va);
	etc_pair_set *sr = malloc(m * sizeof *sr), *sa = malloc(n * sizeof *sa);
	etc_pair_raw *raw = malloc(n * sizeof *raw), *rawr = malloc(m * sizeof *rawr);
	etc_pair_score *scores = malloc(n * m * sizeof *scores);
	etc_pair_choice *choice = malloc(n * sizeof *choice);
	etc_metrics *metrics = malloc(n * sizeof *metrics);
	bool *compared = malloc(n * sizeof *compared);
	if (!refs || !runs || !raw || !rawr || !tr || !ta || !vr || !va || !sr || !sa || !scores ||
	    !choice || !metrics || !compared) {
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
		rawr[k] = (etc_pair_raw){refs + k * e, e * sizeof *refs};
		sr[k] = (etc_pair_set){&vr[k], &rawr[k], NULL, 1, NULL};
	}
	for (size_t i = 0; i < n; i++) {
		make_tensor(&ta[i], runs + i * e, e);
		etc_values_from_tensor(&va[i], &ta[i]);
		raw[i] = (etc_pair_raw){runs + i * e, e * sizeof *runs};
		sa[i] = (etc_pair_set){&va[i], &raw[i], NULL, 1, NULL};
	}
	printf("bench_pairing: %zu runs (%zu distinct) x %zu reference sets of %zu float32 "
	       "elements (%.2f GiB of runs, %.2f GiB of references; generated in %.1f s)\n",
	       n, distinct, m, e, (double)(n * e * 4) / (1 << 30), (double)(m * e * 4) / (1 << 30),
	       now() - t0);

	etc_error err;
	etc_error_clear(&err);
	etc_metrics met;
	double best_order = INFINITY, best_infer = INFINITY, best_content = INFINITY;
	double *wall_ratio = calloc(repeat + 1, sizeof *wall_ratio);
	double *cpu_ratio = calloc(repeat + 1, sizeof *cpu_ratio);
	if (!wall_ratio || !cpu_ratio)
		return 1;
	volatile double sink = 0;
	for (size_t rep = 0; rep < repeat; rep++) {
		double t = now(), c = cpu();
		for (size_t i = 0; i < n; i++) {
			if (etc_metrics_compare(&vr[i % m], &va[i], &met, &err) < 0) {
				fprintf(stderr, "bench_pairing: %s\n", err.message);
				return 1;
			}
			sink += met.snr_db;
		}
		double order = now() - t, order_cpu = cpu() - c;
		t = now(), c = cpu();
		int rc = separate ? etc_pair_infer_(sa, n, sr, m, &po, scores, choice, &err)
		                  : etc_pair_infer_compare_(sa, n, sr, m, &po, scores, choice,
		                                            metrics, compared, &err);
		if (rc < 0) {
			fprintf(stderr, "bench_pairing: %s\n", err.message);
			return 1;
		}
		double infer = now() - t;
		for (size_t i = 0; i < n; i++) {
			if (!separate) {
				if (!compared[i]) {
					fprintf(stderr, "bench_pairing: run %zu not compared\n", i);
					return 1;
				}
				sink += metrics[i].snr_db;
				continue;
			}
			if (etc_metrics_compare(&vr[choice[i].best], &va[i], &met, &err) < 0)
				return 1;
			sink += met.snr_db;
		}
		double content = now() - t, content_cpu = cpu() - c;
		wall_ratio[rep] = content / order;
		cpu_ratio[rep] = content_cpu / order_cpu;
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
		printf("  repeat %zu: order %.3f s, content %.3f s (inference %.3f s) = %.2fx; "
		       "CPU: order %.3f s, content %.3f s = %.2fx\n",
		       rep, order, content, infer, content / order, order_cpu, content_cpu,
		       content_cpu / order_cpu);
		if (order < best_order)
			best_order = order;
		if (infer < best_infer)
			best_infer = infer;
		if (content < best_content)
			best_content = content;
	}
	size_t refined = 0, estimated = 0;
	for (size_t i = 0; i < n * m; i++)
		refined += scores[i].refined, estimated += scores[i].estimated;
	printf("order pairing   (%zu comparisons):            %.3f s\n", n, best_order);
	printf("content pairing (inference + %zu comparisons): %.3f s = %.2fx order\n", n,
	       best_content, best_content / best_order);
	printf("  %s: %.3f s = %.2fx order (%zu pairs scored exactly over all "
	       "elements, %zu left at the sketch's estimate)\n",
	       separate ? "inference alone" : "inference with the comparisons", best_infer,
	       best_infer / best_order, refined, estimated);
	printf("median of %zu repeats: content / order = %.2fx wall-clock, %.2fx CPU time\n",
	       repeat, median(wall_ratio, repeat), median(cpu_ratio, repeat));
	printf("  smallest margin %.1f dB; sink %g\n", choice[0].margin_db, sink);
	free(refs), free(runs), free(tr), free(ta), free(vr), free(va), free(sr), free(sa);
	free(scores), free(choice), free(metrics), free(compared), free(raw), free(rawr),
	    free(wall_ratio), free(cpu_ratio);
	return 0;
}
