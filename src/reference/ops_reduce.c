/*
 * ops_reduce.c - reductions over dims (sum, mean, amax/amin, var, argmax/
 * argmin, any, max/min with indices) and softmax / log_softmax. Float sums
 * are compensated (Neumaier) in double whatever the reference dtype, and
 * rounded once into it.
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <math.h>

/* A compensated sum. */
typedef struct ksum {
	double s, c;
} ksum;

static void ksum_add(ksum *k, double v)
{
	double t = k->s + v;
	if (fabs(k->s) >= fabs(v))
		k->c += (k->s - t) + v;
	else
		k->c += (v - t) + k->s;
	k->s = t;
}

static double ksum_get(const ksum *k)
{
	/* An infinite sum has a NaN compensation (inf - inf): the sum is the answer. */
	return isfinite(k->s) ? k->s + k->c : k->s;
}

/* Reads self, dim (int list or int; absent/None/[] = every dim) and keepdim,
 * and sets up the reduction. */
static int reduce_args(ref_call *c, const char *dim_name, int dim_pos, int keep_pos,
                       const ref_tensor **x, ref_reduce *r)
{
	const int64_t *dims;
	size_t n;
	int64_t one;
	bool keepdim;
	ETC_TRY(ref_arg_tensor(c, "self", 0, x));
	ETC_TRY(ref_arg_ints(c, dim_name, dim_pos, false, &dims, &n, &one));
	ETC_TRY(ref_arg_bool_or(c, "keepdim", keep_pos, false, &keepdim));
	return ref_reduce_init(r, c, *x, dims, n, keepdim);
}

static int need_nonempty(ref_call *c, const ref_reduce *r, const char *what)
{
	if (r->inner == 0 && r->outer > 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "%s of an empty reduction is undefined (a reduced dim has size 0)",
		                what);
	return 0;
}

/* sum.dim_IntList(self, dim, keepdim=False, *, dtype=None), sum.default(self, *, dtype) */
static int sum_impl(ref_call *c, bool with_dims)
{
	const ref_tensor *x;
	ref_reduce r;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	if (with_dims) {
		ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	} else {
		ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
		ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, false));
	}
	int rc = ref_arg_dtype_or_none(c, "dtype", with_dims ? 3 : 1, &dtype);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	int od = dtype >= 0                                   ? ref_hold_dtype(c, dtype)
	         : ref_dtype_kind(x->dtype) == REF_KIND_FLOAT ? c->float_dtype
	                                                      : ETC_LONG;
	ref_tensor *o = &c->outs[0];
	rc = ref_tensor_alloc(o, od, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		if (fl) {
			ksum k = {0, 0};
			for (uint64_t j = 0; j < r.inner; j++)
				ksum_add(&k, ref_get_f(x, base + ref_reduce_at(&r, j)));
			ref_set_f(o, i, ksum_get(&k));
		} else {
			uint64_t s = 0;
			for (uint64_t j = 0; j < r.inner; j++)
				s += (uint64_t)ref_get_i(x, base + ref_reduce_at(&r, j));
			ref_set_i(o, i, (int64_t)s);
		}
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_sum_dim(ref_call *c)
{
	return sum_impl(c, true);
}

int ref_op_sum(ref_call *c)
{
	return sum_impl(c, false);
}

/* mean.dim(self, dim, keepdim=False, *, dtype=None): floats only. */
int ref_op_mean_dim(ref_call *c)
{
	const ref_tensor *x;
	ref_reduce r;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	int rc = ref_arg_dtype_or_none(c, "dtype", 3, &dtype);
	if (rc == 0 && ref_dtype_kind(dtype >= 0 ? dtype : x->dtype) != REF_KIND_FLOAT)
		rc = ref_fail(c, ETC_ERR_UNSUPPORTED,
		              "expected a floating-point input or dtype, got %s",
		              etc_scalar_type_name(dtype >= 0 ? dtype : x->dtype));
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], c->float_dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		ksum k = {0, 0};
		for (uint64_t j = 0; j < r.inner; j++)
			ksum_add(&k, ref_get_f(x, base + ref_reduce_at(&r, j)));
		ref_set_f(&c->outs[0], i, ksum_get(&k) / (double)r.inner);
	}
	ref_reduce_free(&r);
	return 0;
}

/* amax / amin(self, dim=[], keepdim=False): NaN propagates. */
static int amax_like(ref_call *c, bool is_max)
{
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	int rc = need_nonempty(c, &r, is_max ? "amax" : "amin");
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], x->dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	bool fl = ref_dtype_kind(x->dtype) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		if (fl) {
			double m = ref_get_f(x, base + ref_reduce_at(&r, 0));
			for (uint64_t j = 1; j < r.inner && m == m; j++) {
				double v = ref_get_f(x, base + ref_reduce_at(&r, j));
				if (v != v || (is_max ? v > m : v < m))
					m = v;
			}
			ref_set_f(&c->outs[0], i, m);
		} else {
			int64_t m = ref_get_i(x, base + ref_reduce_at(&r, 0));
			for (uint64_t j = 1; j < r.inner; j++) {
				int64_t v = ref_get_i(x, base + ref_reduce_at(&r, j));
				if (is_max ? v > m : v < m)
					m = v;
			}
			ref_set_i(&c->outs[0], i, m);
		}
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_amax(ref_call *c)
{
	return amax_like(c, true);
}

int ref_op_amin(ref_call *c)
{
	return amax_like(c, false);
}

/* var.correction(self, dim=None, *, correction=None, keepdim=False) */
int ref_op_var(ref_call *c)
{
	const ref_tensor *x;
	ref_reduce r;
	ref_scalar corr;
	bool has_corr;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_opt_scalar(c, "correction", 2, &corr, &has_corr));
	ETC_TRY(reduce_args(c, "dim", 1, 3, &x, &r));
	int rc = 0;
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT)
		rc = ref_fail(c, ETC_ERR_UNSUPPORTED, "expected a floating-point tensor, got %s",
		              etc_scalar_type_name(x->dtype));
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], c->float_dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	double cr = has_corr ? corr.f : 1.0;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		ksum k = {0, 0};
		for (uint64_t j = 0; j < r.inner; j++)
			ksum_add(&k, ref_get_f(x, base + ref_reduce_at(&r, j)));
		double mean = ksum_get(&k) / (double)r.inner;
		ksum q = {0, 0};
		for (uint64_t j = 0; j < r.inner; j++) {
			double d = ref_get_f(x, base + ref_reduce_at(&r, j)) - mean;
			ksum_add(&q, d * d);
		}
		double div = (double)r.inner - cr;
		ref_set_f(&c->outs[0], i, ksum_get(&q) / (div > 0 ? div : 0.0));
	}
	ref_reduce_free(&r);
	return 0;
}

/*
 * The index (within the reduced elements) of the max or min of result i:
 * the first one, a NaN counting as the largest and the smallest.
 */
static uint64_t arg_best(const ref_tensor *x, const ref_reduce *r, uint64_t i, bool is_max)
{
	uint64_t base = ref_reduce_base(r, i), best = 0;
	if (ref_dtype_kind(x->dtype) == REF_KIND_FLOAT) {
		double m = ref_get_f(x, base + ref_reduce_at(r, 0));
		for (uint64_t j = 1; j < r->inner && m == m; j++) {
			double v = ref_get_f(x, base + ref_reduce_at(r, j));
			if (v != v || (is_max ? v > m : v < m)) {
				m = v;
				best = j;
			}
		}
	} else {
		int64_t m = ref_get_i(x, base + ref_reduce_at(r, 0));
		for (uint64_t j = 1; j < r->inner; j++) {
			int64_t v = ref_get_i(x, base + ref_reduce_at(r, j));
			if (is_max ? v > m : v < m) {
				m = v;
				best = j;
			}
		}
	}
	return best;
}

/* argmax / argmin(self, dim=None, keepdim=False) */
static int argmax_like(ref_call *c, bool is_max)
{
	const ref_tensor *x;
	ref_reduce r;
	int64_t dim;
	bool keepdim, has_dim = ref_arg_get(c, "dim", 1) != NULL;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_bool_or(c, "keepdim", 2, false, &keepdim));
	if (has_dim) {
		ETC_TRY(ref_arg_int(c, "dim", 1, &dim));
		ETC_TRY(ref_reduce_init(&r, c, x, &dim, 1, keepdim));
	} else {
		ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, keepdim));
	}
	int rc = need_nonempty(c, &r, is_max ? "argmax" : "argmin");
	if (rc == 0 && x->numel == 0 && !has_dim)
		rc = ref_fail(c, ETC_ERR_MISMATCH, "argmax/argmin of an empty tensor is undefined");
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], ETC_LONG, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	int64_t *o = c->outs[0].data;
	for (uint64_t i = 0; i < r.outer; i++)
		o[i] = (int64_t)arg_best(x, &r, i, is_max);
	ref_reduce_free(&r);
	return 0;
}

int ref_op_argmax(ref_call *c)
{
	return argmax_like(c, true);
}

int ref_op_argmin(ref_call *c)
{
	return argmax_like(c, false);
}

/* max.dim / min.dim(self, dim, keepdim=False) -> (values, indices) */
static int max_dim_like(ref_call *c, bool is_max)
{
	const ref_tensor *x;
	ref_reduce r;
	int64_t dim;
	bool keepdim;
	ETC_TRY(ref_check_nouts(c, 2));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_int(c, "dim", 1, &dim));
	ETC_TRY(ref_arg_bool_or(c, "keepdim", 2, false, &keepdim));
	ETC_TRY(ref_reduce_init(&r, c, x, &dim, 1, keepdim));
	int rc = need_nonempty(c, &r, is_max ? "max" : "min");
	int vd = ref_hold_dtype(c, x->dtype);
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], vd, r.out_rank, r.out_shape, c->err);
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[1], ETC_LONG, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	int64_t *idx = c->outs[1].data;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t j = arg_best(x, &r, i, is_max);
		uint64_t at = ref_reduce_base(&r, i) + ref_reduce_at(&r, j);
		idx[i] = (int64_t)j;
		if (ref_dtype_kind(vd) == REF_KIND_FLOAT)
			ref_set_f(&c->outs[0], i, ref_get_f(x, at));
		else
			ref_set_i(&c->outs[0], i, ref_get_i(x, at));
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_max_dim(ref_call *c)
{
	return max_dim_like(c, true);
}

int ref_op_min_dim(ref_call *c)
{
	return max_dim_like(c, false);
}

/* any.dim(self, int dim, keepdim), any.dims(self, int[]? dim, keepdim), any(self):
 * bool, or uint8 for a uint8 input as torch gives. */
static int any_impl(ref_call *c, bool with_dims)
{
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(ref_check_nouts(c, 1));
	if (with_dims) {
		ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	} else {
		ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
		ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, false));
	}
	int od = x->dtype == ETC_BYTE ? ETC_BYTE : ETC_BOOL;
	int rc = ref_tensor_alloc(&c->outs[0], od, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	uint8_t *o = c->outs[0].data;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		uint8_t v = 0;
		for (uint64_t j = 0; j < r.inner && !v; j++)
			v = ref_get_f(x, base + ref_reduce_at(&r, j)) != 0;
		o[i] = v;
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_any_dim(ref_call *c)
{
	return any_impl(c, true);
}

int ref_op_any(ref_call *c)
{
	return any_impl(c, false);
}

/* The largest value of one reduced slice, NaN when the slice has one
 * (softmax and logsumexp shift by it). */
static double slice_max(const ref_tensor *x, const ref_reduce *r, uint64_t base)
{
	double m = -INFINITY;
	for (uint64_t j = 0; j < r->inner; j++) {
		double v = ref_get_f(x, base + ref_reduce_at(r, j));
		if (v > m || v != v)
			m = v;
		if (m != m)
			break;
	}
	return m;
}

/* sum exp(x - m) over one reduced slice, compensated. */
static double slice_sum_exp(const ref_tensor *x, const ref_reduce *r, uint64_t base, double m)
{
	ksum k = {0, 0};
	for (uint64_t j = 0; j < r->inner; j++)
		ksum_add(&k, exp(ref_get_f(x, base + ref_reduce_at(r, j)) - m));
	return ksum_get(&k);
}

/* _softmax / _log_softmax(self, dim, half_to_float) */
static int softmax_like(ref_call *c, bool logs)
{
	const ref_tensor *x;
	ref_reduce r;
	int64_t dim;
	bool h2f;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_int(c, "dim", 1, &dim));
	ETC_TRY(ref_arg_bool_or(c, "half_to_float", 2, false, &h2f));
	if (h2f)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "half_to_float=True (a float16 input) is not supported");
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "expected a floating-point tensor, got %s",
		                etc_scalar_type_name(x->dtype));
	ETC_TRY(ref_reduce_init(&r, c, x, &dim, 1, true));
	ref_tensor *o = &c->outs[0];
	int rc = ref_tensor_alloc(o, c->float_dtype, x->rank, x->shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		double m = slice_max(x, &r, base);
		/* All -inf: torch gives NaN (exp(-inf - -inf)). */
		double s = slice_sum_exp(x, &r, base, m), ls = log(s);
		for (uint64_t j = 0; j < r.inner; j++) {
			uint64_t at = base + ref_reduce_at(&r, j);
			double d = ref_get_f(x, at) - m;
			ref_set_f(o, at, logs ? d - ls : exp(d) / s);
		}
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_softmax(ref_call *c)
{
	return softmax_like(c, false);
}

int ref_op_log_softmax(ref_call *c)
{
	return softmax_like(c, true);
}

/* mean.default(self, *, dtype=None): every element. */
int ref_op_mean(ref_call *c)
{
	const ref_tensor *x;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_dtype_or_none(c, "dtype", 1, &dtype));
	if (ref_dtype_kind(dtype >= 0 ? dtype : x->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "expected a floating-point input or dtype, got %s",
		                etc_scalar_type_name(dtype >= 0 ? dtype : x->dtype));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, 0, NULL, c->err));
	ksum k = {0, 0};
	for (uint64_t i = 0; i < x->numel; i++)
		ksum_add(&k, ref_get_f(x, i));
	ref_set_f(&c->outs[0], 0, ksum_get(&k) / (double)x->numel);
	return 0;
}

/* max.default / min.default(self): the largest / smallest element, NaN first. */
static int max_all(ref_call *c, bool is_max)
{
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	if (x->numel == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "%s of an empty tensor is undefined",
		                is_max ? "max" : "min");
	ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, false));
	int rc = ref_tensor_alloc(&c->outs[0], ref_hold_dtype(c, x->dtype), 0, NULL, c->err);
	if (rc == 0) {
		uint64_t j = arg_best(x, &r, 0, is_max);
		if (ref_dtype_kind(x->dtype) == REF_KIND_FLOAT)
			ref_set_f(&c->outs[0], 0, ref_get_f(x, j));
		else
			ref_set_i(&c->outs[0], 0, ref_get_i(x, j));
	}
	ref_reduce_free(&r);
	return rc;
}

int ref_op_max(ref_call *c)
{
	return max_all(c, true);
}

int ref_op_min(ref_call *c)
{
	return max_all(c, false);
}

/* prod.dim_int(self, dim, keepdim=False, *, dtype=None), prod.default(self, *, dtype) */
static int prod_impl(ref_call *c, bool with_dim)
{
	const ref_tensor *x;
	ref_reduce r;
	int dtype;
	int64_t dim;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	if (with_dim) {
		bool keepdim;
		ETC_TRY(ref_arg_int(c, "dim", 1, &dim));
		ETC_TRY(ref_arg_bool_or(c, "keepdim", 2, false, &keepdim));
		ETC_TRY(ref_reduce_init(&r, c, x, &dim, 1, keepdim));
	} else {
		ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, false));
	}
	int rc = ref_arg_dtype_or_none(c, "dtype", with_dim ? 3 : 1, &dtype);
	int od = dtype >= 0                                   ? ref_hold_dtype(c, dtype)
	         : ref_dtype_kind(x->dtype) == REF_KIND_FLOAT ? c->float_dtype
	                                                      : ETC_LONG;
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], od, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		double pf = 1.0;
		uint64_t pi = 1;
		for (uint64_t j = 0; j < r.inner; j++) {
			uint64_t at = base + ref_reduce_at(&r, j);
			if (fl)
				pf *= ref_get_f(x, at);
			else
				pi *= (uint64_t)ref_get_i(x, at);
		}
		if (fl)
			ref_set_f(&c->outs[0], i, pf);
		else
			ref_set_i(&c->outs[0], i, (int64_t)pi);
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_prod_dim(ref_call *c)
{
	return prod_impl(c, true);
}

int ref_op_prod(ref_call *c)
{
	return prod_impl(c, false);
}

/* std.correction: the square root of var.correction. */
int ref_op_std(ref_call *c)
{
	ETC_TRY(ref_op_var(c));
	ref_tensor *o = &c->outs[0];
	for (uint64_t i = 0; i < o->numel; i++)
		ref_set_f(o, i, sqrt(ref_get_f(o, i)));
	return 0;
}

/* all.dim(self, dim, keepdim), all.default(self): bool (uint8 for uint8). */
static int all_impl(ref_call *c, bool with_dims)
{
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(ref_check_nouts(c, 1));
	if (with_dims) {
		ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	} else {
		ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
		ETC_TRY(ref_reduce_init(&r, c, x, NULL, 0, false));
	}
	int od = x->dtype == ETC_BYTE ? ETC_BYTE : ETC_BOOL;
	int rc = ref_tensor_alloc(&c->outs[0], od, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	uint8_t *o = c->outs[0].data;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		uint8_t v = 1;
		for (uint64_t j = 0; j < r.inner && v; j++)
			v = ref_get_f(x, base + ref_reduce_at(&r, j)) != 0;
		o[i] = v;
	}
	ref_reduce_free(&r);
	return 0;
}

int ref_op_all_dim(ref_call *c)
{
	return all_impl(c, true);
}

int ref_op_all(ref_call *c)
{
	return all_impl(c, false);
}

/* cumsum(self, dim, *, dtype=None): ints and bool sum in int64. */
int ref_op_cumsum(ref_call *c)
{
	const ref_tensor *x;
	ref_reduce r;
	int64_t dim;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_int(c, "dim", 1, &dim));
	ETC_TRY(ref_arg_dtype_or_none(c, "dtype", 2, &dtype));
	ETC_TRY(ref_reduce_init(&r, c, x, &dim, 1, true));
	int od = dtype >= 0                                   ? ref_hold_dtype(c, dtype)
	         : ref_dtype_kind(x->dtype) == REF_KIND_FLOAT ? c->float_dtype
	                                                      : ETC_LONG;
	int rc = ref_tensor_alloc(&c->outs[0], od, x->rank, x->shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		ksum k = {0, 0};
		uint64_t si = 0;
		for (uint64_t j = 0; j < r.inner; j++) {
			uint64_t at = base + ref_reduce_at(&r, j);
			if (fl) {
				ksum_add(&k, ref_get_f(x, at));
				ref_set_f(&c->outs[0], at, ksum_get(&k));
			} else {
				si += (uint64_t)ref_get_i(x, at);
				ref_set_i(&c->outs[0], at, (int64_t)si);
			}
		}
	}
	ref_reduce_free(&r);
	return 0;
}

/* logsumexp(self, dim[], keepdim=False): max-shifted; ints are made float. */
int ref_op_logsumexp(ref_call *c)
{
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(reduce_args(c, "dim", 1, 2, &x, &r));
	int rc = ref_tensor_alloc(&c->outs[0], c->float_dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		double m = slice_max(x, &r, base);
		double res = m;
		if (m == m && !isinf(m)) {
			res = m + log(slice_sum_exp(x, &r, base, m));
		} else if (m == INFINITY) {
			res = INFINITY;
		}
		ref_set_f(&c->outs[0], i, res);
	}
	ref_reduce_free(&r);
	return 0;
}

/*
 * linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
 * ord 0 (count of non-zeros), inf, -inf, or p: (sum |x|^p)^(1/p). The 2-norm
 * is scaled by the largest magnitude against overflow.
 */
int ref_op_vector_norm(ref_call *c)
{
	const ref_tensor *x;
	ref_reduce r;
	double ord;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_float_or(c, "ord", 1, 2.0, &ord));
	ETC_TRY(ref_arg_dtype_or_none(c, "dtype", 4, &dtype));
	ETC_TRY(reduce_args(c, "dim", 2, 3, &x, &r));
	int rc = 0;
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT)
		rc = ref_fail(c, ETC_ERR_UNSUPPORTED, "expected a floating-point tensor, got %s",
		              etc_scalar_type_name(x->dtype));
	if (rc == 0 && r.inner == 0 && r.outer > 0 && ord < 0)
		rc =
		    ref_fail(c, ETC_ERR_MISMATCH, "a norm of negative order of an empty reduction");
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], c->float_dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		double res;
		if (isinf(ord)) {
			res = ord > 0 ? 0 : INFINITY;
			for (uint64_t j = 0; j < r.inner; j++) {
				double a = fabs(ref_get_f(x, base + ref_reduce_at(&r, j)));
				if (a != a || (ord > 0 ? a > res : a < res))
					res = a;
				if (res != res)
					break;
			}
		} else if (ord == 0) {
			res = 0;
			for (uint64_t j = 0; j < r.inner; j++)
				res += ref_get_f(x, base + ref_reduce_at(&r, j)) != 0;
		} else if (ord < 0) {
			ksum k = {0, 0};
			for (uint64_t j = 0; j < r.inner; j++)
				ksum_add(&k,
				         pow(fabs(ref_get_f(x, base + ref_reduce_at(&r, j))), ord));
			res = pow(ksum_get(&k), 1.0 / ord);
		} else {
			double m = 0;
			for (uint64_t j = 0; j < r.inner; j++) {
				double a = fabs(ref_get_f(x, base + ref_reduce_at(&r, j)));
				m = (a > m || a != a) ? a : m;
				if (m != m)
					break;
			}
			if (m == 0 || isinf(m) || m != m) {
				res = m;
			} else {
				ksum k = {0, 0};
				for (uint64_t j = 0; j < r.inner; j++) {
					double a =
					    fabs(ref_get_f(x, base + ref_reduce_at(&r, j))) / m;
					ksum_add(&k, ord == 2 ? a * a : ord == 1 ? a : pow(a, ord));
				}
				double s = ksum_get(&k);
				res = m * (ord == 2 ? sqrt(s) : ord == 1 ? s : pow(s, 1.0 / ord));
			}
		}
		ref_set_f(&c->outs[0], i, res);
	}
	ref_reduce_free(&r);
	return 0;
}

/* var_mean.correction(self, dim=None, *, correction=None, keepdim=False) -> (var, mean) */
int ref_op_var_mean(ref_call *c)
{
	ETC_TRY(ref_check_nouts(c, 2));
	ref_call one = *c;
	one.nouts = 1;
	ETC_TRY(ref_op_var(&one));
	const ref_tensor *x;
	ref_reduce r;
	ETC_TRY(reduce_args(c, "dim", 1, 3, &x, &r));
	int rc = ref_tensor_alloc(&c->outs[1], c->float_dtype, r.out_rank, r.out_shape, c->err);
	if (rc < 0) {
		ref_reduce_free(&r);
		return rc;
	}
	for (uint64_t i = 0; i < r.outer; i++) {
		uint64_t base = ref_reduce_base(&r, i);
		ksum k = {0, 0};
		for (uint64_t j = 0; j < r.inner; j++)
			ksum_add(&k, ref_get_f(x, base + ref_reduce_at(&r, j)));
		ref_set_f(&c->outs[1], i, ksum_get(&k) / (double)r.inner);
	}
	ref_reduce_free(&r);
	return 0;
}
