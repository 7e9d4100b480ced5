/*
 * ops_b_util.c - the helpers of the matrix, convolution, pooling, shape and
 * index ops (see ops_b_util.h).
 */
#include "reference/ops_b_util.h"
#include "core/blas.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

int refb_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s is missing", name);
	if (a->kind != REF_ARG_TENSOR || !a->t)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected a tensor, given %s",
		                name, ref_arg_kind_name(a->kind));
	*out = a->t;
	return 0;
}

int refb_opt_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*out = NULL;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_TENSOR)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected a tensor or None, given %s", name,
		                ref_arg_kind_name(a->kind));
	*out = a->t;
	return 0;
}

int refb_tensors(const ref_call *c, const char *name, int pos, bool allow_none,
                 const ref_tensor *const **out, size_t *n)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s is missing", name);
	if (a->kind != REF_ARG_TENSORS && a->kind != REF_ARG_OPT_TENSORS)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected a tensor list, given %s", name,
		                ref_arg_kind_name(a->kind));
	for (size_t i = 0; i < a->n; i++)
		if (!a->ts[i] && !allow_none)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "argument %s: entry %zu is None, expected a tensor", name,
			                i);
	*out = a->ts;
	*n = a->n;
	return 0;
}

int refb_int(const ref_call *c, const char *name, int pos, int64_t def, int64_t *out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*out = def;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_INT && a->kind != REF_ARG_BOOL)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected an int, given %s", name,
		                ref_arg_kind_name(a->kind));
	*out = a->i;
	return 0;
}

int refb_opt_int(const ref_call *c, const char *name, int pos, bool *has, int64_t *out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*has = false;
	*out = 0;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_INT)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected an int or None, given %s", name,
		                ref_arg_kind_name(a->kind));
	*has = true;
	*out = a->i;
	return 0;
}

int refb_ints(const ref_call *c, const char *name, int pos, const int64_t *def, size_t ndef,
              int64_t *out, size_t *n)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	const int64_t *src = def;
	size_t cnt = ndef;
	if (a && a->kind == REF_ARG_INT) {
		src = &a->i;
		cnt = 1;
	} else if (a && (a->kind == REF_ARG_INTS || a->kind == REF_ARG_BOOLS)) {
		src = a->ints;
		cnt = a->n;
	} else if (a) {
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected an int list, given %s",
		                name, ref_arg_kind_name(a->kind));
	}
	if (cnt > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "argument %s has %zu entries, at most %d are supported", name, cnt,
		                ETC_REF_MAX_RANK);
	for (size_t i = 0; i < cnt; i++)
		out[i] = src[i];
	*n = cnt;
	return 0;
}

int refb_bool(const ref_call *c, const char *name, int pos, bool def, bool *out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*out = def;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_BOOL && a->kind != REF_ARG_INT)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected a bool, given %s", name,
		                ref_arg_kind_name(a->kind));
	*out = a->i != 0;
	return 0;
}

int refb_scalar(const ref_call *c, const char *name, int pos, double def, double *out)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*out = def;
	if (!a)
		return 0;
	if (a->kind == REF_ARG_FLOAT)
		*out = a->f;
	else if (a->kind == REF_ARG_INT || a->kind == REF_ARG_BOOL)
		*out = (double)a->i;
	else
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected a number, given %s",
		                name, ref_arg_kind_name(a->kind));
	return 0;
}

int refb_floats(const ref_call *c, const char *name, int pos, double *out, size_t *n)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*n = 0;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_FLOATS)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected a float list or None, given %s", name,
		                ref_arg_kind_name(a->kind));
	if (a->n > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "argument %s has %zu entries", name, a->n);
	for (size_t i = 0; i < a->n; i++)
		out[i] = a->floats[i];
	*n = a->n;
	return 0;
}

int refb_check_param(const ref_call *c, const char *what, int64_t v)
{
	if (v < -ETC_REF_PARAM_MAX || v > ETC_REF_PARAM_MAX)
		return ref_fail(c, ETC_ERR_LIMIT, "%s %" PRId64 " is out of the supported range",
		                what, v);
	return 0;
}

int refb_nouts(const ref_call *c, uint32_t n)
{
	if (c->nouts != n)
		return ref_fail(c, ETC_ERR_MISMATCH, "the op has %u outputs, the graph gives %u", n,
		                c->nouts);
	return 0;
}

int refb_dim(const ref_call *c, int64_t dim, uint32_t rank, const char *what, uint32_t *out)
{
	int64_t r = rank ? rank : 1;
	if (dim < -r || dim >= r)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "%s %" PRId64 " is out of range for a tensor of rank %u (expected "
		                "[%" PRId64 ", %" PRId64 "])",
		                what, dim, rank, -r, r - 1);
	*out = (uint32_t)(dim < 0 ? dim + r : dim);
	return 0;
}

void refb_strides(uint32_t rank, const int64_t *shape, int64_t *strides)
{
	int64_t s = 1;
	for (uint32_t d = rank; d-- > 0;) {
		strides[d] = s;
		s *= shape[d];
	}
}

size_t refb_elem_size(int dtype)
{
	return etc_scalar_type_size(dtype);
}

static void copy_run(char *dst, const char *src, size_t es, int64_t n, int64_t stride)
{
	if (stride == 1) {
		memcpy(dst, src, (size_t)n * es);
		return;
	}
	switch (es) {
	case 8:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 8 * i, src + 8 * stride * i, 8);
		break;
	case 4:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 4 * i, src + 4 * stride * i, 4);
		break;
	case 2:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + 2 * i, src + 2 * stride * i, 2);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + es * (size_t)i, src + (int64_t)es * stride * i, es);
		break;
	}
}

void refb_strided_copy(void *dst, const void *src, size_t es, uint32_t rank, const int64_t *shape,
                       const int64_t *strides, int64_t offset)
{
	const char *s = (const char *)src;
	char *d = (char *)dst;
	for (uint32_t k = 0; k < rank; k++)
		if (shape[k] == 0)
			return;
	if (rank == 0) {
		memcpy(d, s + offset * (int64_t)es, es);
		return;
	}
	/* Merge dims that are contiguous with each other in the source. */
	int64_t sh[2 * ETC_REF_MAX_RANK], st[2 * ETC_REF_MAX_RANK];
	uint32_t r = 0;
	for (uint32_t k = 0; k < rank; k++) {
		if (shape[k] == 1)
			continue;
		if (r > 0 && st[r - 1] == strides[k] * shape[k]) {
			sh[r - 1] *= shape[k];
			st[r - 1] = strides[k];
		} else {
			sh[r] = shape[k];
			st[r] = strides[k];
			r++;
		}
	}
	if (r == 0) {
		memcpy(d, s + offset * (int64_t)es, es);
		return;
	}
	int64_t idx[2 * ETC_REF_MAX_RANK] = {0};
	int64_t inner = sh[r - 1], istride = st[r - 1];
	int64_t pos = offset;
	for (;;) {
		copy_run(d, s + pos * (int64_t)es, es, inner, istride);
		d += (size_t)inner * es;
		uint32_t k = r - 1;
		for (;;) {
			if (k == 0)
				return;
			k--;
			idx[k]++;
			pos += st[k];
			if (idx[k] < sh[k])
				break;
			pos -= st[k] * sh[k];
			idx[k] = 0;
		}
	}
}

bool refb_is_exact(int dtype)
{
	return !ref_dtype_is_float(dtype);
}

static int int_rank(int dtype)
{
	switch (dtype) {
	case ETC_CHAR:
		return 1;
	case ETC_SHORT:
		return 2;
	case ETC_INT:
		return 3;
	case ETC_LONG:
		return 4;
	default:
		return 0;
	}
}

int refb_promote(int a, int b, int float_dtype)
{
	if (a == b)
		return a;
	if (ref_dtype_is_float(a) || ref_dtype_is_float(b))
		return float_dtype;
	if (a == ETC_BOOL)
		return b;
	if (b == ETC_BOOL)
		return a;
	if (a == ETC_BYTE || b == ETC_BYTE) {
		int other = a == ETC_BYTE ? b : a;
		return other == ETC_CHAR ? ETC_SHORT : other;
	}
	return int_rank(a) > int_rank(b) ? a : b;
}

int refb_as_float(const ref_call *c, const ref_tensor *x, ref_tensor *tmp, const ref_tensor **out)
{
	memset(tmp, 0, sizeof *tmp);
	if (x->dtype == c->float_dtype) {
		*out = x;
		return 0;
	}
	etc_reftensor v = ref_tensor_view(x);
	int rc = ref_tensor_convert(tmp, &v, c->float_dtype, c->err);
	if (rc < 0)
		return rc;
	*out = tmp;
	return 0;
}

static void gemm_int(int dtype, bool ta, bool tb, size_t m, size_t n, size_t k, int64_t alpha,
                     const void *a, size_t lda, const void *b, size_t ldb, int64_t beta, void *cm,
                     size_t ldc)
{
	ref_tensor ta_ = {.dtype = dtype, .data = (void *)a, .borrowed = true};
	ref_tensor tb_ = {.dtype = dtype, .data = (void *)b, .borrowed = true};
	ref_tensor tc_ = {.dtype = dtype, .data = cm, .borrowed = true};
	/* Unsigned arithmetic: wraps as torch's integer kernels do, without UB. */
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++) {
			uint64_t acc = 0;
			for (size_t p = 0; p < k; p++) {
				size_t ia = ta ? p * lda + i : i * lda + p;
				size_t ib = tb ? j * ldb + p : p * ldb + j;
				acc +=
				    (uint64_t)ref_get_i(&ta_, ia) * (uint64_t)ref_get_i(&tb_, ib);
			}
			uint64_t v = acc * (uint64_t)alpha;
			if (beta != 0)
				v += (uint64_t)beta * (uint64_t)ref_get_i(&tc_, i * ldc + j);
			ref_set_i(&tc_, i * ldc + j, (int64_t)v);
		}
}

int refb_gemm(const ref_call *c, int dtype, bool ta, bool tb, size_t m, size_t n, size_t k,
              double alpha, const void *a, size_t lda, const void *b, size_t ldb, double beta,
              void *cm, size_t ldc)
{
	if (m == 0 || n == 0)
		return 0;
	if (!ref_dtype_is_float(dtype)) {
		/* torch takes alpha and beta of an integer product as integers */
		if (!(fabs(alpha) < 9.0e18) || !(fabs(beta) < 9.0e18) || alpha != trunc(alpha) ||
		    beta != trunc(beta))
			return ref_fail(
			    c, ETC_ERR_MISMATCH,
			    "alpha %g and beta %g of an integer product must be integers", alpha,
			    beta);
		gemm_int(dtype, ta, tb, m, n, k, (int64_t)alpha, a, lda, b, ldb, (int64_t)beta, cm,
		         ldc);
		return 0;
	}
	if (m > INT_MAX || n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX ||
	    ldc > INT_MAX)
		return ref_fail(c, ETC_ERR_LIMIT,
		                "matrix product of %zu x %zu x %zu exceeds OpenBLAS's int sizes", m,
		                n, k);
	if (k == 0) {
		/* C = beta * C; BLAS would need lda >= 1 for an empty operand. */
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < n; j++) {
				if (dtype == ETC_DOUBLE) {
					double *p = (double *)cm + i * ldc + j;
					*p = beta == 0 ? 0 : beta * *p;
				} else {
					float *p = (float *)cm + i * ldc + j;
					*p = beta == 0 ? 0 : (float)beta * *p;
				}
			}
		return 0;
	}
	/* With beta 0 OpenBLAS stores the product without reading C (NaN there
	 * does not propagate), as torch's addmm ignores self. */
	if (dtype == ETC_DOUBLE)
		etc_blas_dgemm(ta, tb, m, n, k, alpha, (const double *)a, lda, (const double *)b,
		               ldb, beta, (double *)cm, ldc);
	else
		etc_blas_sgemm(ta, tb, m, n, k, (float)alpha, (const float *)a, lda,
		               (const float *)b, ldb, (float)beta, (float *)cm, ldc);
	return 0;
}

int refb_broadcast(const ref_call *c, const char *what, uint32_t ra, const int64_t *sa, uint32_t rb,
                   const int64_t *sb, uint32_t *rout, int64_t *out)
{
	uint32_t r = ra > rb ? ra : rb;
	for (uint32_t k = 0; k < r; k++) {
		int64_t x = k < r - ra ? 1 : sa[k - (r - ra)];
		int64_t y = k < r - rb ? 1 : sb[k - (r - rb)];
		if (x != y && x != 1 && y != 1) {
			char b1[160], b2[160];
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "%s: shapes %s and %s do not broadcast (dim %u: %" PRId64
			                " vs %" PRId64 ")",
			                what, ref_shape_str(b1, sizeof b1, ra, sa),
			                ref_shape_str(b2, sizeof b2, rb, sb), k, x, y);
		}
		out[k] = x == 1 ? y : x;
	}
	*rout = r;
	return 0;
}

void refb_broadcast_copy(void *dst, const ref_tensor *x, uint32_t rank, const int64_t *shape)
{
	int64_t xs[ETC_REF_MAX_RANK], st[ETC_REF_MAX_RANK];
	refb_strides(x->rank, x->shape, xs);
	for (uint32_t k = 0; k < rank; k++) {
		int64_t kx = (int64_t)k - (int64_t)(rank - x->rank);
		st[k] = kx < 0 || x->shape[kx] == 1 ? 0 : xs[kx];
	}
	refb_strided_copy(dst, x->data, refb_elem_size(x->dtype), rank, shape, st, 0);
}
