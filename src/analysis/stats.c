/*
 * stats.c - percentile statistics reproducing numpy bit for bit, because the
 * TSV prints 17 significant digits and users diff it against upstream.
 *   percentile: sorted a, h = (q/100) * (n-1), i = floor(h), g = h - i,
 *               numpy's _lerp: g >= 0.5 ? b - (b-a)*(1-g) : a + (b-a)*g
 *   mean:       np.add.reduce (identity 0 + pairwise summation) / n
 */
#include "etcompare/inspector.h"
#include "core/internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * Sorts ascending. Small arrays (the usual case: one value per run) use an
 * insertion sort; it is stable, like glibc's merge-sort qsort, so equal
 * values (0.0 and -0.0) keep their order and the result is the same. Arrays
 * with NaN (unordered, so the order depends on the algorithm) and large ones
 * keep qsort.
 */
static void sort_values(double *s, size_t n)
{
	bool nan = false;
	for (size_t i = 0; i < n; i++)
		nan |= s[i] != s[i];
	if (n > 64 || nan) {
		qsort(s, n, sizeof *s, cmp_double);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double x = s[i];
		size_t j = i;
		while (j > 0 && s[j - 1] > x) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
}

/* numpy's pairwise_sum for contiguous doubles (PW_BLOCKSIZE 128, unroll 8). */
static double pairwise_sum(const double *a, size_t n)
{
	if (n < 8) {
		double res = -0.0;
		for (size_t i = 0; i < n; i++)
			res += a[i];
		return res;
	}
	if (n <= 128) {
		double r[8];
		size_t i;
		for (int j = 0; j < 8; j++)
			r[j] = a[j];
		for (i = 8; i < n - (n % 8); i += 8)
			for (int j = 0; j < 8; j++)
				r[j] += a[i + j];
		double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	size_t n2 = n / 2;
	n2 -= n2 % 8;
	return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

static double lerp_at(const double *s, size_t n, double q)
{
	double h = q * (double)(n - 1);
	double fl = floor(h);
	size_t i = (size_t)fl;
	if (i >= n - 1)
		return s[n - 1];
	double g = h - fl, a = s[i], b = s[i + 1], d = b - a;
	return g >= 0.5 ? b - d * (1 - g) : a + d * g;
}

void etc_perf_stats_compute(const double *values, size_t n, etc_perf_stats *out)
{
	double small[64];
	double *s = n <= 64 ? small : malloc(n * sizeof *s);
	if (!s) {
		/* Unsortable without memory: report what needs no copy. */
		out->p10 = out->p50 = out->p90 = NAN;
		s = (double *)values;
	} else {
		memcpy(s, values, n * sizeof *s);
		sort_values(s, n);
		out->p10 = lerp_at(s, n, 10.0 / 100);
		out->p50 = lerp_at(s, n, 50.0 / 100);
		out->p90 = lerp_at(s, n, 90.0 / 100);
	}
	out->avg = (0.0 + pairwise_sum(values, n)) / (double)n;
	double mn = values[0], mx = values[0];
	for (size_t i = 1; i < n; i++) {
		mn = values[i] < mn ? values[i] : mn;
		mx = values[i] > mx ? values[i] : mx;
	}
	out->min = mn;
	out->max = mx;
	if (s != small && s != values)
		free(s);
}

double etc_percentile_sorted_(const double *sorted, size_t n, double q)
{
	return n ? lerp_at(sorted, n, q / 100) : NAN;
}

void etc_sort_doubles_(double *v, size_t n)
{
	sort_values(v, n);
}

/* Moves the k-th smallest of v[0..n) to v[k], smaller ones before it, larger after. */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2;
		/* median of three as the pivot */
		double a = v[lo], b = v[mid], c = v[hi];
		double pivot =
		    a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

double etc_percentile_select_(double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	double h = q / 100 * (double)(n - 1);
	double fl = floor(h);
	size_t i = (size_t)fl;
	if (i >= n - 1) {
		double mx = v[0];
		for (size_t k = 1; k < n; k++)
			mx = v[k] > mx ? v[k] : mx;
		return mx;
	}
	select_kth(v, n, i);
	double a = v[i], b = v[i + 1];
	for (size_t k = i + 2; k < n; k++)
		b = v[k] < b ? v[k] : b;
	double g = h - fl, d = b - a;
	return g >= 0.5 ? b - d * (1 - g) : a + d * g;
}
