/*
 * blas.h - the one module that calls OpenBLAS (blas.c): level-3 products in
 * double and float for the reference executor and the all-pairs
 * comparisons. Row-major, no transposition flags beyond what callers need.
 * A large product is cut into pieces fixed by its shape and spread over
 * ETC_THREADS threads (core/parallel.h); OpenBLAS itself runs on one
 * (see blas.c), so a product's bits do not depend on the thread count.
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

/* Tests only: spread the pieces of later products over n threads (the
 * pieces stay the same). Not safe while a product runs. */
void etc_blas_threads_set_(unsigned n);
#endif
