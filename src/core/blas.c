/*
 * blas.c - OpenBLAS behind three calls. The first call sets OpenBLAS's
 * thread count to etc_thread_count_() (ETC_THREADS), once per process:
 * openblas_set_num_threads is not safe to call while another thread is in
 * a BLAS call, and the library's defaults would take every core.
 */
#include "core/blas.h"
#include "core/parallel.h"

#include <cblas.h>
#include <pthread.h>

void openblas_set_num_threads(int num_threads);

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void set_threads(void)
{
	openblas_set_num_threads((int)etc_thread_count_());
}

void etc_blas_dgemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
                    size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	pthread_once(&once, set_threads);
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void etc_blas_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                    size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	pthread_once(&once, set_threads);
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void etc_blas_dsyrk(size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
                    double *c, size_t ldc)
{
	if (n == 0)
		return;
	pthread_once(&once, set_threads);
	cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)k, alpha, a, (int)lda,
	            beta, c, (int)ldc);
}
