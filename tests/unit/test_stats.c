/*
 * test_stats.c - etc_perf_stats_compute against numpy's definitions,
 * evaluated by hand in IEEE double arithmetic (no numpy involved).
 *
 * numpy.percentile(a, q) with the default method "linear":
 *   s = sorted(a); h = (q / 100) * (n - 1)   (q/100 is the double 0.1, 0.5, 0.9)
 *   i = floor(h); g = h - i; if i >= n-1 the result is s[n-1]; else
 *   a = s[i], b = s[i+1], d = b - a and numpy's _lerp gives
 *   g >= 0.5 ? b - d * (1 - g) : a + d * g       (each step rounded to double)
 * numpy.mean(a) = (0.0 + pairwise_sum(a)) / n where pairwise_sum is
 *   n < 8:     (-0.0 + a0) + a1 + ...           left to right
 *   n <= 128:  eight lanes r[j] = a[j] + a[j+8] + a[j+16] + ... over the
 *              first n - n%8 elements, then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
 *              then the n%8 leftovers added left to right
 *   n > 128:   m = n/2 rounded down to a multiple of 8;
 *              pairwise_sum(a[0:m]) + pairwise_sum(a[m:n])
 * The cases with 1e16 make pairwise summation differ from both a naive
 * left-to-right sum and an exact sum (both given for contrast), so only the
 * numpy order passes. The derivation of each expectation is written next
 * to it.
 */
#include "check.h"

#include "etcompare/inspector.h"
#include "core/internal.h"

#include <stdlib.h>

static void expect(const char *name, const double *v, size_t n, double p10, double p50, double p90,
                   double avg, double mn, double mx)
{
	etc_perf_stats s;
	double *copy = malloc(n * sizeof *copy);
	memcpy(copy, v, n * sizeof *copy);
	memset(&s, 0xAB, sizeof s);
	etc_perf_stats_compute(v, n, &s);
	int before = check_failures;
	CHECK_DOUBLE_EXACT(s.p10, p10);
	CHECK_DOUBLE_EXACT(s.p50, p50);
	CHECK_DOUBLE_EXACT(s.p90, p90);
	CHECK_DOUBLE_EXACT(s.avg, avg);
	CHECK_DOUBLE_EXACT(s.min, mn);
	CHECK_DOUBLE_EXACT(s.max, mx);
	/* The input is const: it must be left in its (unsorted) order. */
	CHECK(memcmp(copy, v, n * sizeof *copy) == 0);
	if (check_failures != before)
		fprintf(stderr, "  ... in case %s\n", name);
	free(copy);
}

int main(void)
{
	/* n = 1: every statistic is the value; h = 0 so i >= n-1. */
	static const double n1[] = {3.5};
	expect("n1", n1, 1, 3.5, 3.5, 3.5, 3.5, 3.5, 3.5);

	/* n = 2, sorted {0.1, 0.3}, d = 0.3 - 0.1 = 0.19999999999999998.
	 * p10: h = 0.1, g = 0.1 < 0.5: 0.1 + d * 0.1 = 0.12000000000000001.
	 * p50: h = 0.5, g = 0.5: 0.3 - d * 0.5 = 0.2.
	 * p90: h = 0.9, g = 0.9: 0.3 - d * (1 - 0.9) = 0.3 - d * 0.09999999999999998
	 *      = 0.27999999999999997 (the other branch, 0.1 + d * 0.9, would give 0.28).
	 * avg: (-0.0 + 0.3 + 0.1) / 2 = 0.4 / 2 = 0.2. */
	static const double n2[] = {0.3, 0.1};
	expect("n2", n2, 2, 0.12000000000000001, 0.2, 0.27999999999999997, 0.2, 0.1, 0.3);

	/* n = 5, sorted 1..5.
	 * p10: h = 0.4: 1 + 1 * 0.4 = 1.4.  p50: h = 2.0: 3 + 0 = 3.
	 * p90: h = 0.9 * 4 = 3.6, g = 0.6000000000000001: 5 - 1 * 0.3999999999999999 = 4.6.
	 * avg: 15 / 5 = 3. */
	static const double n5[] = {5, 1, 4, 2, 3};
	expect("n5", n5, 5, 1.4, 3.0, 4.6, 3.0, 1.0, 5.0);

	/* n = 10: 1e16 then nine 1.0 (ulp of 1e16 is 2, ties to even).
	 * p10: h = 0.9, i = 0: s[0] = s[1] = 1, so 1.  p50: 1.
	 * p90: h = 0.9 * 9 = 8.1, i = 8, g = 0.0999999999999996 < 0.5:
	 *      1 + (1e16 - 1) * g = 1 + 999999999999996.5 = 999999999999997.5.
	 * sum: lanes r = a[0..7] (no second row: 10 - 10%8 = 8);
	 *      (1e16 + 1) = 1e16, (1+1) = 2 -> 1e16 + 2; (2 + 2) = 4 -> 1e16 + 6;
	 *      + a8 = 1e16 + 7 -> 1e16 + 8 (tie to even); + a9 = 1e16 + 9 -> 1e16 + 8.
	 * avg: 10000000000000008 / 10 = 1000000000000000.8
	 * (naive left-to-right: 1e16 / 10 = 1e15; exact: 1000000000000000.9 ->
	 * 1000000000000000.8 too, the n = 200 and n = 129 cases separate those). */
	static const double n10[] = {1e16, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	expect("n10", n10, 10, 1.0, 1.0, 999999999999997.5, 1000000000000000.8, 1.0, 1e16);

	/* n = 17, v[i] = 0.1 * (i + 1) (0.1 .. 1.7000000000000002), given
	 * reversed. Sorted s[1] = 0.2, s[2] = 0.30000000000000004, s[8] = 0.9,
	 * s[14] = 1.5, s[15] = 1.6.
	 * p10: h = 1.6, g = 0.6000000000000001: s2 - (s2 - s1) * 0.3999999999999999 = 0.26.
	 * p50: h = 8: 0.9.
	 * p90: h = 14.4, g = 0.40000000000000036: 1.5 + 0.10000000000000009 * g = 1.54.
	 * sum (of the reversed order): lanes r[j] = v[j] + v[j+8], then
	 * ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) = 15.2, plus the leftover v[16] = 0.1
	 * gives 15.299999999999999; avg = 15.299999999999999 / 17 = 0.8999999999999999
	 * (naive left to right: 15.3 / 17 = 0.9). */
	double n17[17];
	for (int i = 0; i < 17; i++)
		n17[16 - i] = 0.1 * (i + 1);
	expect("n17", n17, 17, 0.26, 0.9, 1.54, 0.8999999999999999, 0.1, 1.7000000000000002);

	/* n = 129 (one over the block size): v[64] = 1e16, v[i] = 0.3 for i % 3 == 0,
	 * else 1.0. Split at m = 64: pairwise(v[0:64]) + pairwise(v[64:129]).
	 * Percentiles: 43 values are 0.3, 85 are 1.0, one is 1e16;
	 * p10: h = 12.8 -> s[12], s[13] both 0.3; p50: h = 64 -> 1.0;
	 * p90: h = 115.2 -> 1.0.
	 * avg: 77519379844961.95 (naive 77519379844961.61, exact 77519379844962.0). */
	double n129[129];
	for (int i = 0; i < 129; i++)
		n129[i] = i == 64 ? 1e16 : (i % 3 == 0 ? 0.3 : 1.0);
	expect("n129", n129, 129, 0.3, 1.0, 1.0, 77519379844961.95, 0.3, 1e16);

	/* n = 200, a permutation of 1..200: v[i] = (37 i mod 200) + 1.
	 * p10: h = 0.1 * 199 = 19.900000000000002, i = 19, g = 0.9000000000000021:
	 *      21 - 1 * (1 - g) = 20.900000000000002.
	 * p50: h = 99.5, g = 0.5: 101 - 0.5 = 100.5.
	 * p90: h = 179.1, g = 0.09999999999999432: 180 + g = 180.1.
	 * avg: integer sums are exact: 20100 / 200 = 100.5. */
	double n200[200];
	for (int i = 0; i < 200; i++)
		n200[i] = (double)((i * 37) % 200 + 1);
	expect("n200", n200, 200, 20.900000000000002, 100.5, 180.1, 100.5, 1.0, 200.0);

	/* n = 200 again: v[0] = 1e16, then 0.1 at odd and 1.0 at even indices.
	 * Split at m = 96 (100 rounded down to a multiple of 8):
	 * pairwise(v[0:96]) + pairwise(v[96:200]), each with eight lanes.
	 * p10: 0.1 (100 values of 0.1); p50: h = 99.5 between s[99] = 0.1 and
	 * s[100] = 1.0, g = 0.5: 1.0 - 0.9 * 0.5 = 0.55; p90: 1.0.
	 * avg: 50000000000000.5 (naive left to right 50000000000000.0,
	 * exact 50000000000000.55). */
	double n200b[200];
	for (int i = 0; i < 200; i++)
		n200b[i] = i == 0 ? 1e16 : (i % 2 ? 0.1 : 1.0);
	expect("n200b", n200b, 200, 0.1, 0.55, 1.0, 50000000000000.5, 0.1, 1e16);

	/* Negative values and duplicates: sorted {-4, -1, -1, 2, 7}.
	 * p10: h = 0.4: -4 + 3 * 0.4 = -2.8 (3 * 0.4 = 1.2000000000000002,
	 * -4 + that = -2.8). p50: -1. p90: h = 3.6, g = 0.6000000000000001:
	 * 7 - 5 * 0.3999999999999999 = 7 - 1.9999999999999996 = 5.0.
	 * avg: (-0.0 + 2 - 1 + 7 - 4 - 1) / 5 = 0.6. */
	static const double neg[] = {2, -1, 7, -4, -1};
	expect("neg", neg, 5, -2.8, -1.0, 5.0, 0.6, -4.0, 7.0);

	/* The quickselect percentile (profile tables) equals the sorted one, on
	 * random arrays with many ties, every size from 1 to 300. */
	unsigned seed = 12345;
	for (size_t n = 1; n <= 300; n++) {
		double *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
		CHECK(v && w);
		if (!v || !w)
			break;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = (double)((seed >> 16) % (n / 3 + 2)) * 0.1;
		}
		for (int q = 0; q <= 100; q += 5) {
			memcpy(w, v, n * sizeof *v);
			etc_sort_doubles_(w, n);
			double want = etc_percentile_sorted_(w, n, q);
			memcpy(w, v, n * sizeof *v);
			CHECK(etc_percentile_select_(w, n, q) == want);
		}
		free(v);
		free(w);
	}

	return check_report("test_stats");
}
