/*
 * blas.c - OpenBLAS behind three calls. The first call sets OpenBLAS's
 * thread count to etc_thread_count_() (ETC_THREADS) capped at the online
 * processors, once per process: openblas_set_num_threads is not safe to
 * call while another thread is in a BLAS call, and the library's defaults
 * would take every core.
 *
 * OpenBLAS's pool threads busy-wait for a while after each GEMM before
 * they sleep (measured on MobileNetV2's reference run, 2 threads on 2
 * cores: 15-40 ms of CPU in the 200 ms after the run). etc_blas_rest_, called
 * by each caller once its batch of products is done (not after each graph
 * run: starting the threads again costs 4-8 ms of CPU and more of wall
 * time per run on a loaded machine), stops them
 * (OpenBLAS's blas_thread_shutdown_, found at run time: other BLAS builds
 * lack it); OpenBLAS starts them again at the next threaded product. Every
 * call holds a read lock and the shutdown the write lock, taken only if
 * free: a product in flight on another thread is never disturbed, and that
 * thread's own caller rests the pool when it is done. Products that other
 * code in the process starts on the same OpenBLAS (numpy linked to the
 * system's libopenblas, in another thread) are not under that lock, and a
 * shutdown during one of them could hang its join: so the rest is done only
 * when ETC_BLAS_REST=1, which the etcompare program sets for itself (it is
 * then OpenBLAS's only user); a library user may set it too.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "core/blas.h"
#include "core/parallel.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

void openblas_set_num_threads(int num_threads);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_rwlock_t in_use = PTHREAD_RWLOCK_INITIALIZER;
static atomic_bool busy; /* a product ran since the pool last rested */
static int (*shutdown_fn)(void);
static unsigned threads = 1;
static bool rest_allowed; /* ETC_BLAS_REST=1 */

/* ETC_THREADS, but never more than the online processors. */
static void set_threads(void)
{
	unsigned n = etc_thread_count_();
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores >= 1 && (unsigned long)cores < n)
		n = (unsigned)cores;
	openblas_set_num_threads((int)n);
	threads = n;
	/* the POSIX way to read a function pointer from dlsym */
	*(void **)&shutdown_fn = dlsym(RTLD_DEFAULT, "blas_thread_shutdown_");
	const char *rest = getenv("ETC_BLAS_REST");
	rest_allowed = rest && rest[0] == '1' && rest[1] == '\0';
}

static void enter(void)
{
	pthread_once(&once, set_threads);
	pthread_rwlock_rdlock(&in_use);
	atomic_store(&busy, true);
}

static void leave(void)
{
	pthread_rwlock_unlock(&in_use);
}

void etc_blas_rest_(void)
{
	if (!atomic_load(&busy) || threads < 2 || !shutdown_fn || !rest_allowed)
		return;
	if (pthread_rwlock_trywrlock(&in_use) != 0)
		return; /* a product is running: its caller rests the pool after it */
	if (atomic_exchange(&busy, false))
		shutdown_fn();
	pthread_rwlock_unlock(&in_use);
}

void etc_blas_dgemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
                    size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	enter();
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
	leave();
}

void etc_blas_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                    size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	enter();
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
	            (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
	leave();
}

void etc_blas_dsyrk(size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
                    double *c, size_t ldc)
{
	if (n == 0)
		return;
	enter();
	cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)k, alpha, a, (int)lda,
	            beta, c, (int)ldc);
	leave();
}
