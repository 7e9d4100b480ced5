/*
 * test_blas.c - the products' pieces (src/core/blas.c): a double product
 * cut over 1, 2, 3 or 8 threads has the bits of the whole product by one
 * OpenBLAS call, for every transposition, odd strides, beta 0 and not, cuts
 * along rows and along columns, and lengths that are no multiple of the
 * pieces; a float product has the same bits whatever the thread count; both
 * agree with a product summed in long double. The Gram product (dsyrk), cut
 * into bands of rows, has the same bits whatever the thread count, agrees
 * with long double and writes nothing below the diagonal.
 */
#include "check.h"

#include "core/blas.h"

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t seed = 0x9e3779b97f4a7c15u;

static double uniform(void)
{
	seed = seed * 6364136223846793005u + 1442695040888963407u;
	return (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

typedef struct shape {
	size_t m, n, k;
	bool ta, tb;
	size_t pad; /* added to every leading dimension */
	double beta;
} shape;

/* Leading dimensions and element counts of A, B and C. */
typedef struct sizes {
	size_t lda, ldb, ldc, na, nb, nc;
} sizes;

static sizes sizes_of(const shape *s)
{
	sizes z;
	z.lda = (s->ta ? s->m : s->k) + s->pad;
	z.ldb = (s->tb ? s->k : s->n) + s->pad;
	z.ldc = s->n + s->pad;
	z.na = (s->ta ? s->k : s->m) * z.lda;
	z.nb = (s->tb ? s->n : s->k) * z.ldb;
	z.nc = s->m * z.ldc;
	return z;
}

static double *random_doubles(size_t n)
{
	double *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = uniform();
	return x;
}

static float *random_floats(size_t n)
{
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)uniform();
	return x;
}

/* op(X)[r][c] of a row-major X with leading dimension ld */
static double at(const double *x, bool t, size_t ld, size_t r, size_t c)
{
	return t ? x[c * ld + r] : x[r * ld + c];
}

static void one_double(const shape *s)
{
	sizes z = sizes_of(s);
	size_t lda = z.lda, ldb = z.ldb, ldc = z.ldc;
	double *a = random_doubles(z.na), *b = random_doubles(z.nb), *c0 = random_doubles(z.nc);
	double *whole = malloc(z.nc * sizeof *whole), *cut = malloc(z.nc * sizeof *cut);
	memcpy(whole, c0, s->m * ldc * sizeof *whole);
	/* etc_blas has set OpenBLAS to one thread: this is the whole product */
	cblas_dgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans,
	            s->tb ? CblasTrans : CblasNoTrans, (int)s->m, (int)s->n, (int)s->k, 0.75, a,
	            (int)lda, b, (int)ldb, s->beta, whole, (int)ldc);
	static const unsigned counts[] = {1, 2, 3, 8};
	for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
		etc_blas_threads_set_(counts[t]);
		memcpy(cut, c0, s->m * ldc * sizeof *cut);
		etc_blas_dgemm(s->ta, s->tb, s->m, s->n, s->k, 0.75, a, lda, b, ldb, s->beta, cut,
		               ldc);
		CHECK(memcmp(cut, whole, s->m * ldc * sizeof *cut) == 0);
	}
	/* a few elements against a sum in long double: the offsets are right */
	double worst = 0;
	for (size_t q = 0; q < 64; q++) {
		size_t i = (q * 7919) % s->m, j = (q * 104729) % s->n;
		long double sum = 0, mag = 0;
		for (size_t l = 0; l < s->k; l++) {
			long double p =
			    (long double)at(a, s->ta, lda, i, l) * at(b, s->tb, ldb, l, j);
			sum += p;
			mag += fabsl(p);
		}
		double want = (double)(0.75L * sum + (long double)s->beta * c0[i * ldc + j]);
		/* against the sum of magnitudes: the error bound of a dot product */
		double e = fabs(cut[i * ldc + j] - want) / (double)(0.75L * mag + fabsl(s->beta));
		if (e > worst)
			worst = e;
	}
	CHECK(worst < 1e-12);
	free(a), free(b), free(c0), free(whole), free(cut);
}

static void one_float(const shape *s)
{
	sizes z = sizes_of(s);
	size_t lda = z.lda, ldb = z.ldb, ldc = z.ldc;
	float *a = random_floats(z.na), *b = random_floats(z.nb), *c0 = random_floats(z.nc);
	float *first = malloc(z.nc * sizeof *first), *cut = malloc(z.nc * sizeof *cut);
	static const unsigned counts[] = {1, 2, 3, 8};
	for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
		etc_blas_threads_set_(counts[t]);
		float *c = t == 0 ? first : cut;
		memcpy(c, c0, s->m * ldc * sizeof *c);
		etc_blas_sgemm(s->ta, s->tb, s->m, s->n, s->k, 0.75f, a, lda, b, ldb,
		               (float)s->beta, c, ldc);
		if (t > 0)
			CHECK(memcmp(cut, first, s->m * ldc * sizeof *cut) == 0);
	}
	double worst = 0;
	for (size_t q = 0; q < 64; q++) {
		size_t i = (q * 7919) % s->m, j = (q * 104729) % s->n;
		double sum = 0, mag = 0;
		for (size_t l = 0; l < s->k; l++) {
			double x = (s->ta ? a[l * lda + i] : a[i * lda + l]);
			double y = (s->tb ? b[j * ldb + l] : b[l * ldb + j]);
			sum += x * y;
			mag += fabs(x * y);
		}
		double want = 0.75 * sum + s->beta * c0[i * ldc + j];
		double e = fabs(first[i * ldc + j] - want) / (0.75 * mag + fabs(s->beta) + 1e-30);
		if (e > worst)
			worst = e;
	}
	CHECK(worst < 1e-5);
	free(a), free(b), free(c0), free(first), free(cut);
}

static void one_gram(size_t n, size_t k, size_t pad, double beta)
{
	size_t lda = k + pad, ldc = n + pad;
	double *a = random_doubles(n * lda), *c0 = random_doubles(n * ldc);
	double *first = malloc(n * ldc * sizeof *first), *c = malloc(n * ldc * sizeof *c);
	static const unsigned counts[] = {1, 2, 3, 8};
	for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
		etc_blas_threads_set_(counts[t]);
		double *out = t == 0 ? first : c;
		memcpy(out, c0, n * ldc * sizeof *out);
		etc_blas_dsyrk(n, k, 0.5, a, lda, beta, out, ldc);
		if (t > 0)
			CHECK(memcmp(c, first, n * ldc * sizeof *c) == 0);
	}
	bool below_kept = true;
	double worst = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			if (j < i) {
				below_kept = below_kept && first[i * ldc + j] == c0[i * ldc + j];
				continue;
			}
			if ((i * 31 + j * 17) % 97 != 0)
				continue;
			long double sum = 0, mag = 0;
			for (size_t l = 0; l < k; l++) {
				long double p = (long double)a[i * lda + l] * a[j * lda + l];
				sum += p;
				mag += fabsl(p);
			}
			double want = (double)(0.5L * sum + (long double)beta * c0[i * ldc + j]);
			double e =
			    fabs(first[i * ldc + j] - want) / (double)(0.5L * mag + fabsl(beta));
			if (e > worst)
				worst = e;
		}
	CHECK(below_kept);
	CHECK(worst < 1e-12);
	free(a), free(c0), free(first), free(c);
}

int main(void)
{
	/* the first product sets OpenBLAS to one thread */
	double x = 2, y = 3, z = 0;
	etc_blas_dgemm(false, false, 1, 1, 1, 1.0, &x, 1, &y, 1, 0.0, &z, 1);
	CHECK(z == 6);
	const shape shapes[] = {
	    /* cut along columns (n the longer), n no multiple of the pieces */
	    {96, 1531, 97, false, false, 0, 0.0},
	    {96, 1531, 97, true, true, 3, 0.5},
	    /* cut along rows */
	    {1203, 70, 129, false, true, 1, 1.0},
	    {1203, 70, 129, true, false, 5, 0.0},
	    /* square-ish, every transposition */
	    {301, 299, 211, false, false, 2, -1.0},
	    {301, 299, 211, true, false, 0, 0.0},
	    {301, 299, 211, false, true, 7, 1.0},
	    {301, 299, 211, true, true, 1, 0.25},
	    /* too small to cut: whole on the calling thread */
	    {17, 33, 9, true, false, 1, 1.0},
	    /* a long k, few rows: cut along the 200 columns */
	    {8, 200, 6000, false, true, 0, 0.0},
	};
	for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		one_double(&shapes[i]);
		one_float(&shapes[i]);
	}
	/* random shapes large enough to be cut, cut anywhere */
	for (int r = 0; r < 24; r++) {
		shape s = {130 + (size_t)((uniform() + 1) * 300),
		           130 + (size_t)((uniform() + 1) * 300),
		           0,
		           uniform() > 0,
		           uniform() > 0,
		           (size_t)((uniform() + 1) * 2),
		           0.5};
		s.k = 10000000 / (s.m * s.n) + 1 + (size_t)((uniform() + 1) * 40);
		one_double(&s);
		one_float(&s);
	}
	one_gram(300, 301, 3, 0.0); /* cut into bands */
	one_gram(1000, 40, 0, 1.0); /* 4 bands */
	one_gram(50, 70, 1, 0.5);   /* whole */
	return check_report("test_blas");
}
