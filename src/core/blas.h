/*
 * blas.h - the one module that calls OpenBLAS (blas.c): level-3 products in
 * double and float for the reference executor and the all-pairs
 * comparisons. Row-major, no transposition flags beyond what callers need.
 * The thread count follows ETC_THREADS (core/parallel.h); OpenBLAS's own
 * threads are set once per process and never left spinning (see blas.c).
 */
#ifndef ETC_BLAS_H
#define ETC_BLAS_H

#include <stdbool.h>
#include <stddef.h>

/* C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, row-major;
 * lda/ldb/ldc are row strides; ta/tb transpose A/B as stored. */
void etc_blas_dgemm(bool ta, bool tb, size_t m, size_t n, size_t k, double alpha, const double *a,
                    size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc);
void etc_blas_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                    size_t lda, const float *b, size_t ldb, float beta, float *c, size_t ldc);
/* C[n x n] (upper triangle) = alpha * A[n x k] * A^T + beta * C, row-major. */
void etc_blas_dsyrk(size_t n, size_t k, double alpha, const double *a, size_t lda, double beta,
                    double *c, size_t ldc);

/* Stops OpenBLAS's pool threads, which busy-wait for a while after each
 * product, unless a product is running on another thread; the next
 * threaded product starts them again. Called by each user of the products
 * once its batch is done (the numeric gap's reference run, a pairing, an
 * agreement matrix). Only with ETC_BLAS_REST=1 (set by the etcompare
 * program): see blas.c. */
void etc_blas_rest_(void);
#endif
