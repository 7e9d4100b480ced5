/*
 * ops_b_util.h - what the matrix, convolution, pooling, shape and index ops
 * (ops_linalg.c, ops_conv.c, ops_pool.c, ops_shape.c, ops_index.c) share:
 * typed argument access with the schema's defaults, dimension wrapping,
 * strided copies, dtype promotion and the one GEMM entry point (OpenBLAS
 * for floats, an exact loop for integers).
 */
#ifndef ETC_REF_OPS_B_UTIL_H
#define ETC_REF_OPS_B_UTIL_H

#include "reference/ref_op.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The tensor argument `name` (or positional `pos`); fails when absent or not
 * a tensor. */
int refb_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **out);
/* The same for an optional tensor: *out is NULL when absent or None. */
int refb_opt_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **out);
/* A list of tensors (as_tensors; None entries refused unless `allow_none`). */
int refb_tensors(const ref_call *c, const char *name, int pos, bool allow_none,
                 const ref_tensor *const **out, size_t *n);
/* An int argument, `def` when absent. */
int refb_int(const ref_call *c, const char *name, int pos, int64_t def, int64_t *out);
/* An optional int: *has is false when absent or None. */
int refb_opt_int(const ref_call *c, const char *name, int pos, bool *has, int64_t *out);
/* An int list (a single int is a list of one); `def`/`ndef` when absent. At
 * most ETC_REF_MAX_RANK entries. */
int refb_ints(const ref_call *c, const char *name, int pos, const int64_t *def, size_t ndef,
              int64_t *out, size_t *n);
/* A bool (as_bool or an int 0/1), `def` when absent. */
int refb_bool(const ref_call *c, const char *name, int pos, bool def, bool *out);
/* A Scalar (float, int or bool) as double, `def` when absent. */
int refb_scalar(const ref_call *c, const char *name, int pos, double def, double *out);
/* An optional float list (as_floats): *n is 0 when absent. */
int refb_floats(const ref_call *c, const char *name, int pos, double *out, size_t *n);

/* The largest repeat count, padding or strided size/stride the ops accept:
 * a sum with any tensor dim (< 2^37) stays far below 2^63. */
#define ETC_REF_SIZE_MAX ((int64_t)1 << 40)
/* The largest stride, padding, dilation or kernel size of a convolution or
 * a pooling window: times any tensor dim (< 2^37) it stays below 2^63. */
#define ETC_REF_PARAM_MAX ((int64_t)1 << 24)
/* Fails with ETC_ERR_LIMIT naming `what` unless |v| <= ETC_REF_PARAM_MAX. */
int refb_check_param(const ref_call *c, const char *what, int64_t v);

/* Fails unless the graph gives the node `n` outputs. */
int refb_nouts(const ref_call *c, uint32_t n);
/* Wraps dim into [0, rank) (rank 0 accepts -1 and 0 as dim 0, as torch). */
int refb_dim(const ref_call *c, int64_t dim, uint32_t rank, const char *what, uint32_t *out);

/* Element strides of a contiguous shape. */
void refb_strides(uint32_t rank, const int64_t *shape, int64_t *strides);
/*
 * dst (contiguous, `rank`/`shape`) = src[offset + sum_d i_d * strides[d]]:
 * the copy behind every view op (strides may be 0 or negative). Elements of
 * `es` bytes; rank <= 2 * ETC_REF_MAX_RANK.
 */
void refb_strided_copy(void *dst, const void *src, size_t es, uint32_t rank, const int64_t *shape,
                       const int64_t *strides, int64_t offset);
/* The size of one element of dtype in bytes. */
size_t refb_elem_size(int dtype);

/* torch's promote_types for the reference (floats are `float_dtype`). */
int refb_promote(int a, int b, int float_dtype);
/* Reports whether dtype is an integer or bool dtype. */
bool refb_is_exact(int dtype);
/* A float tensor's data in `float_dtype`: `x` itself when it already is,
 * else converted into *tmp (freed by the caller with ref_tensor_free). */
int refb_as_float(const ref_call *c, const ref_tensor *x, ref_tensor *tmp, const ref_tensor **out);

/*
 * C[m x n] = alpha * op(A) * op(B) + beta * C (row-major, leading dimensions
 * lda/ldb/ldc) in `dtype`: OpenBLAS for ETC_DOUBLE/ETC_FLOAT, an exact
 * wrapping int64 loop for integers (torch's integer matmul). beta 0 ignores
 * C's values.
 */
int refb_gemm(const ref_call *c, int dtype, bool ta, bool tb, size_t m, size_t n, size_t k,
              double alpha, const void *a, size_t lda, const void *b, size_t ldb, double beta,
              void *cm, size_t ldc);

/*
 * The broadcast of two shapes (numpy rules); fails naming both shapes and
 * `what`.
 */
int refb_broadcast(const ref_call *c, const char *what, uint32_t ra, const int64_t *sa, uint32_t rb,
                   const int64_t *sb, uint32_t *rout, int64_t *out);
/* Copies x broadcast to (rank, shape) into dst (contiguous, of x's dtype). */
void refb_broadcast_copy(void *dst, const ref_tensor *x, uint32_t rank, const int64_t *shape);

#endif
