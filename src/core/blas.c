/*
 * blas.c - OpenBLAS behind three calls, each product on OpenBLAS's calling
 * thread. A product large enough to gain from more threads is cut here into
 * pieces of its rows or of its columns, and the pieces are spread over
 * etc_thread_count_() threads (at most the online processors). OpenBLAS's
 * own threads are set to one, once per process, at the first call, because:
 * - the pieces depend on the product's shape alone, so its bits do not
 *   depend on the thread count; OpenBLAS cuts a product by its threads,
 *   and a double product's last bits changed with them. Cut at multiples of
 *   PIECE_ALIGN rows or columns, a double product has the bits of the whole
 *   one (tests/unit/test_blas.c); a float product's bits depend on the cut,
 *   which is why the cut is fixed;
 * - OpenBLAS 0.3.21 sets its threads per process, not per product, and
 *   gave a second thread to every product above 262,144 multiply-adds. The
 *   reference run of a model of MobileNetV2's size (products of at most
 *   1.5 M) was no faster for it and held the second thread's packing
 *   buffers (1.6 MiB of its peak); below 2 x SPLIT_MACS a product stays whole;
 * - OpenBLAS's pool threads busy-wait after each threaded product.
 * OpenBLAS starts its pool when the library is loaded, and the pool spins
 * for about 100 ms of CPU before it sleeps. With ETC_BLAS_REST=1, which the
 * etcompare program sets for itself (it is then OpenBLAS's only user), the
 * first call stops the pool (OpenBLAS's blas_thread_shutdown_, found at run
 * time: other BLAS builds lack it); with one thread OpenBLAS never starts it
 * again. A library user's process may have another user of the same
 * OpenBLAS (numpy, in another thread) inside a threaded product, which a
 * shutdown could hang, so the library alone does not stop it. Setting one
 * thread is process-wide too: numpy in the same process then multiplies on
 * one thread (docs/internals.md).
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "core/blas.h"
#include "core/parallel.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

/*
 * A piece has at least this many multiply-adds: below twice as many a
 * product runs whole on the calling thread. Starting a thread and packing
 * the other operand again per piece ate the second core's gain below about
 * 8 M (2 threads on Zen 3, best of 40: 1.28 x the whole product's time at
 * 2.1 M, 0.82-1.29 x at 4.7 M, 0.77-0.98 x at 8.4 M, 0.6-0.7 x from 16 M).
 */
#define SPLIT_MACS 4194304.0
#define MAX_PIECES 8
#define PIECE_MIN  64 /* rows or columns in a piece, at least */
/*
 * Pieces are cut at multiples of this. A cut at a multiple of 4 kept a
 * double product's bits on Zen 3 (OpenBLAS's Haswell kernels, 4 x 8 tiles)
 * and cuts elsewhere did not; 64 is a multiple of the larger tiles of other
 * kernels too. tests/unit/test_blas.c checks it on the machine it runs on.
 */
#define PIECE_ALIGN 64

static pthread_once_t once = PTHREAD_ONCE_INIT;
static unsigned threads = 1;

static void set_up(void)
{
	openblas_set_num_threads(1);
	unsigned n = etc_thread_count_();
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores >= 1 && (unsigned long)cores < n)
		n = (unsigned)cores;
	threads = n;
	const char *rest = getenv("ETC_BLAS_REST");
	if (rest && rest[0] == '1' && rest[1] == '\0') {
		int (*shutdown_fn)(void);
		/* the POSIX way to read a function pointer from dlsym */
		*(void **)&shutdown_fn = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
		if (shutdown_fn)
			shutdown_fn();
	}
}

/*
 * The pieces of an m x n x k product: cut along the longer of m and n into
 * at most MAX_PIECES pieces of `*step` rows or columns (the last may be
 * shorter), each of at least PIECE_MIN and a multiple of PIECE_ALIGN.
 * Returns the number of pieces; 1 keeps the product whole.
 */
static size_t pieces_of(size_t m, size_t n, size_t k, bool *along_m, size_t *step)
{
	size_t d = m > n ? m : n;
	*along_m = m > n;
	*step = d;
	double macs = (double)m * (double)n * (double)k;
	if (macs < 2 * SPLIT_MACS || d < 2 * PIECE_MIN)
		return 1;
	size_t p = macs / SPLIT_MACS >= MAX_PIECES ? MAX_PIECES : (size_t)(macs / SPLIT_MACS);
	if (p > d / PIECE_MIN)
		p = d / PIECE_MIN;
	size_t s = (d + p - 1) / p;
	s = (s + PIECE_ALIGN - 1) / PIECE_ALIGN * PIECE_ALIGN;
	*step = s;
	return (d + s - 1) / s;
}

/* One product, cut or whole; `dbl` picks the double or the float fields. */
typedef struct gemm_job {
	bool dbl, ta, tb, along_m;
	size_t m, n, k, lda, ldb, ldc, step;
	double alpha, beta;
	const void *a, *b;
	void *c;
} gemm_job;

static void gemm_call(const gemm_job *j, size_t m, size_t n, const void *a, const void *b, void *c)
{
	enum CBLAS_TRANSPOSE ta = j->ta ? CblasTrans : CblasNoTrans;
	enum CBLAS_TRANSPOSE tb = j->tb ? CblasTrans : CblasNoTrans;
	if (j->dbl)
		cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)j->k, j->alpha, a,
		            (int)j->lda, b, (int)j->ldb, j->beta, c, (int)j->ldc);
	else
		cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)j->k, (float)j->alpha, a,
		            (int)j->lda, b, (int)j->ldb, (float)j->beta, c, (int)j->ldc);
}

/* Pieces [begin, end): rows of op(A) and C, or columns of op(B) and C. */
static void gemm_pieces(void *ctx, size_t begin, size_t end)
{
	const gemm_job *j = ctx;
	size_t size = j->dbl ? sizeof(double) : sizeof(float);
	size_t d = j->along_m ? j->m : j->n;
	for (size_t p = begin; p < end; p++) {
		size_t s = p * j->step, len = d - s < j->step ? d - s : j->step;
		if (j->along_m) {
			/* row s of op(A): row s of A, or column s of a transposed A */
			size_t a_off = j->ta ? s : s * j->lda;
			gemm_call(j, len, j->n, (const char *)j->a + a_off * size, j->b,
			          (char *)j->c + s * j->ldc * size);
		} else {
			size_t b_off = j->tb ? s * j->ldb : s;
			gemm_call(j, j->m, len, j->a, (const char *)j->b + b_off * size,
			          (char *)j->c + s * size);
		}
	}
}

static void gemm(bool dbl, bool ta, bool tb, size_t m, size_t n, size_t k, double alpha,
                 const void *a, size_t lda, const void *b, size_t ldb, double beta, void *c,
                 size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	pthread_once(&once, set_up);
	gemm_job j = {dbl, ta, tb, false, m, n, k, lda, ldb, ldc, 0, alpha, beta, a, b, c};
	size_t pieces = pieces_of(m, n, k, &j.along_m, &j.step);
	if (pieces == 1)
		gemm_call(&j, m, n, a, b, c);
	else
		etc_parallel_for_(pieces, threads, gemm_pieces, &j);
}

void etc_blas_dgemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
                    size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
	gemm(true, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void etc_blas_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                    size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
	gemm(false, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void etc_blas_threads_set_(unsigned n)
{
	pthread_once(&once, set_up);
	threads = n ? n : 1;
}

/*
 * The Gram product, cut into bands of rows of C: a band's square on the
 * diagonal by dsyrk, the rest of its rows (to the right) by dgemm. The
 * bands' rows are chosen so that each holds about the same share of the
 * upper triangle, and depend on the shape alone.
 */
typedef struct syrk_job {
	size_t n, k, lda, ldc;
	double alpha, beta;
	const double *a;
	double *c;
	size_t rows[MAX_PIECES + 1];
} syrk_job;

static void syrk_bands(void *ctx, size_t begin, size_t end)
{
	const syrk_job *j = ctx;
	for (size_t p = begin; p < end; p++) {
		size_t r0 = j->rows[p], r1 = j->rows[p + 1];
		const double *ar = j->a + r0 * j->lda;
		cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)(r1 - r0), (int)j->k,
		            j->alpha, ar, (int)j->lda, j->beta, j->c + r0 * j->ldc + r0,
		            (int)j->ldc);
		if (r1 < j->n)
			cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(r1 - r0),
			            (int)(j->n - r1), (int)j->k, j->alpha, ar, (int)j->lda,
			            j->a + r1 * j->lda, (int)j->lda, j->beta,
			            j->c + r0 * j->ldc + r1, (int)j->ldc);
	}
}

void etc_blas_dsyrk(size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
                    double *c, size_t ldc)
{
	if (n == 0)
		return;
	pthread_once(&once, set_up);
	double macs = (double)n * (double)n * (double)k / 2;
	size_t p = macs / SPLIT_MACS >= MAX_PIECES ? MAX_PIECES : (size_t)(macs / SPLIT_MACS);
	if (p > n / PIECE_MIN)
		p = n / PIECE_MIN;
	if (p < 2) {
		cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)k, alpha, a,
		            (int)lda, beta, c, (int)ldc);
		return;
	}
	syrk_job j = {
	    .n = n, .k = k, .lda = lda, .ldc = ldc, .alpha = alpha, .beta = beta, .a = a, .c = c};
	/* rows [0, r) hold r (n - (r - 1) / 2) elements of the upper triangle:
	   about a fraction q of it from r = n (1 - sqrt(1 - q)) */
	j.rows[0] = 0;
	for (size_t q = 1; q < p; q++) {
		size_t r = (size_t)((double)n * (1.0 - sqrt(1.0 - (double)q / (double)p)));
		j.rows[q] = r > j.rows[q - 1] ? r : j.rows[q - 1] + 1;
	}
	j.rows[p] = n;
	etc_parallel_for_(p, threads, syrk_bands, &j);
}
