#define _POSIX_C_SOURCE 200809L
/*
 * bench_agreement.c - the run-agreement matrix (agreement.h: one Gram
 * matrix per element block, dsyrk) against the same pairs done by the
 * fused pairwise pass (etc_metrics_compare of every pair: N(N-1)/2
 * passes), side by side in one run. N runs of one float32 output of E
 * elements; value (i, t) is a stateless hash of (i, t) (a base signal,
 * float32-sized noise per run, and every 10th run a "device" error), so
 * that any element block of any run is made on demand: the Gram side holds
 * only N x block values, as a worker reading its slice of each run does.
 *
 *   gram:   for each block of B elements, N x B float32 made, then
 *           etc_agreement_add_f32; then etc_agreement_snr (the full matrix).
 *           The time to make the blocks alone is printed too.
 *   fused:  etc_metrics_compare of P sampled pairs (both runs made in full
 *           first, not timed), extrapolated to N(N-1)/2 pairs (and to
 *           N(N-1) for the full, asymmetric matrix the Gram side gives);
 *           the sampled pairs' SNR is checked against the Gram matrix's.
 * Peak RSS is read after the Gram side (before the fused side allocates).
 *
 * Usage: bench_agreement [--runs N] [--elems E] [--block B] [--pairs P]
 */
#include "etcompare/agreement.h"
#include "etcompare/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static double unit(uint64_t h)
{
	return (double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static float value(size_t run, size_t t)
{
	double base = unit(mix(t));
	double v = base * (1.0 + 1e-6 * unit(mix(((uint64_t)run << 32) ^ t ^ 0x5555)));
	if (run % 10 == 7)
		v += 1e-3 * unit(mix(t ^ 0xabcdefULL));
	return (float)v;
}

static long peak_kib(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

static void make_tensor(etc_tensor *t, const float *data, uint64_t n)
{
	memset(t, 0, sizeof *t);
	t->scalar_type = ETC_FLOAT;
	t->numel = n;
	t->nbytes = n * 4;
	t->data = (const uint8_t *)data;
}

int main(int argc, char **argv)
{
	size_t n = 1000, e = 1u << 20, blk = 256, pairs = 200;
	for (int i = 1; i + 1 < argc; i += 2) {
		size_t v = strtoull(argv[i + 1], NULL, 10);
		if (!strcmp(argv[i], "--runs"))
			n = v;
		else if (!strcmp(argv[i], "--elems"))
			e = v;
		else if (!strcmp(argv[i], "--block"))
			blk = v;
		else if (!strcmp(argv[i], "--pairs"))
			pairs = v;
		else {
			fprintf(stderr, "bench_agreement: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	etc_error err = {0};
	long rss0 = peak_kib();

	/* making the blocks alone */
	float *block = malloc(n * blk * sizeof(float));
	if (!block)
		return 1;
	double t0 = now();
	volatile float sink = 0;
	for (size_t lo = 0; lo < e; lo += blk) {
		size_t c = e - lo < blk ? e - lo : blk;
		for (size_t i = 0; i < n; i++)
			for (size_t t = 0; t < c; t++)
				block[i * c + t] = value(i, lo + t);
		sink += block[0];
	}
	double t_make = now() - t0;

	etc_agreement *ag;
	if (etc_agreement_new(n, &ag, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	t0 = now();
	for (size_t lo = 0; lo < e; lo += blk) {
		size_t c = e - lo < blk ? e - lo : blk;
		for (size_t i = 0; i < n; i++)
			for (size_t t = 0; t < c; t++)
				block[i * c + t] = value(i, lo + t);
		if (etc_agreement_add_f32(ag, block, c, c, &err) < 0) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
	}
	double *snr = malloc(n * n * sizeof(double));
	if (!snr || etc_agreement_snr(ag, snr, &err) < 0)
		return 1;
	double t_gram = now() - t0;
	long rss_gram = peak_kib();
	free(block);

	/* fused pairwise pass on sampled pairs */
	float *a = malloc(e * sizeof(float)), *r = malloc(e * sizeof(float));
	if (!a || !r)
		return 1;
	double t_fused = 0, worst_rel = 0;
	uint64_t h = 12345;
	for (size_t p = 0; p < pairs; p++) {
		h = mix(h);
		size_t i = h % n, j = (h >> 32) % n;
		if (i == j)
			j = (j + 1) % n;
		for (size_t t = 0; t < e; t++) {
			a[t] = value(i, t);
			r[t] = value(j, t);
		}
		etc_tensor ta, tr;
		make_tensor(&ta, a, e);
		make_tensor(&tr, r, e);
		etc_values va, vr;
		etc_values_from_tensor(&va, &ta);
		etc_values_from_tensor(&vr, &tr);
		etc_metrics m;
		double s = now();
		if (etc_metrics_compare(&vr, &va, &m, &err) < 0) {
			fprintf(stderr, "%s\n", err.message);
			return 1;
		}
		t_fused += now() - s;
		double g = snr[i * n + j];
		double rel = fabs(g - m.snr_db) / fabs(m.snr_db);
		if (!(rel <= worst_rel))
			worst_rel = rel;
	}
	double per_pair = t_fused / (double)pairs;
	double half = (double)n * (double)(n - 1) / 2.0;
	printf("runs %zu x %zu float32 (%.1f MiB a run), block %zu elements\n", n, e,
	       (double)e * 4 / 1048576.0, blk);
	printf("gram (dsyrk, incl. making blocks): %.2f s; making the blocks alone: %.2f s; "
	       "gram compute: %.2f s\n",
	       t_gram, t_make, t_gram - t_make);
	printf("fused pairwise: %.4f s a pair over %zu sampled pairs; N(N-1)/2 = %.0f pairs "
	       "extrapolated: %.1f s (full asymmetric matrix N(N-1): %.1f s)\n",
	       per_pair, pairs, half, per_pair * half, per_pair * 2 * half);
	printf("speed-up (gram compute vs fused N(N-1)/2): %.1fx\n",
	       per_pair * half / (t_gram - t_make));
	printf("sampled pairs: worst relative SNR difference gram vs fused %.2e\n", worst_rel);
	printf("peak RSS: %.1f MiB at start, %.1f MiB after the gram side (one run: %.1f MiB; "
	       "of which the N x N matrices: %.1f MiB)\n",
	       rss0 / 1024.0, rss_gram / 1024.0, (double)e * 4 / 1048576.0,
	       4.0 * (double)n * (double)n * 8 / 1048576.0);
	etc_agreement_free(ag);
	free(snr);
	free(a);
	free(r);
	(void)sink;
	return worst_rel <= 1e-9 ? 0 : 1;
}
