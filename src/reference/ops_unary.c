/*
 * ops_unary.c - elementwise ops of one tensor (and clamp, whose bounds may
 * be tensors). Floats are computed in double and stored in the reference
 * dtype: for float32 inputs that is the correctly rounded float32 result.
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <math.h>

/* How an op treats integer and bool inputs. */
enum {
	U_TO_FLOAT,  /* computed as floats, float result (exp of an int) */
	U_KEEP,      /* computed exactly in the input's dtype */
	U_FLOAT_ONLY /* refused */
};

typedef double (*unary_f)(double x, const double *p);
typedef int64_t (*unary_i)(int64_t x, const double *p);

static int unary_run(ref_call *c, int mode, bool bool_ok, unary_f f, unary_i fi, const double *p)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	int kind = ref_dtype_kind(x->dtype);
	if (kind != REF_KIND_FLOAT) {
		if (mode == U_FLOAT_ONLY || (kind == REF_KIND_BOOL && !bool_ok) ||
		    (mode == U_KEEP && !fi))
			return ref_fail(c, ETC_ERR_UNSUPPORTED,
			                "expected a floating-point tensor, got %s",
			                etc_scalar_type_name(x->dtype));
	}
	bool as_int = kind != REF_KIND_FLOAT && mode == U_KEEP;
	int od = as_int ? x->dtype : c->float_dtype;
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, x->rank, x->shape, c->err));
	if (as_int) {
		for (uint64_t i = 0; i < x->numel; i++)
			ref_set_i(o, i, fi(ref_get_i(x, i), p));
	} else {
		for (uint64_t i = 0; i < x->numel; i++)
			ref_set_f(o, i, f(ref_get_f(x, i), p));
	}
	return 0;
}

static double f_neg(double x, const double *p)
{
	(void)p;
	return -x;
}
static int64_t i_neg(int64_t x, const double *p)
{
	(void)p;
	return (int64_t)(0 - (uint64_t)x);
}
int ref_op_neg(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_neg, i_neg, NULL);
}

static double f_abs(double x, const double *p)
{
	(void)p;
	return fabs(x);
}
static int64_t i_abs(int64_t x, const double *p)
{
	(void)p;
	return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
int ref_op_abs(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_abs, i_abs, NULL);
}

static double f_exp(double x, const double *p)
{
	(void)p;
	return exp(x);
}
int ref_op_exp(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_exp, NULL, NULL);
}

static double f_log(double x, const double *p)
{
	(void)p;
	return log(x);
}
int ref_op_log(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_log, NULL, NULL);
}

static double f_sqrt(double x, const double *p)
{
	(void)p;
	return sqrt(x);
}
int ref_op_sqrt(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_sqrt, NULL, NULL);
}

static double f_rsqrt(double x, const double *p)
{
	(void)p;
	return 1.0 / sqrt(x);
}
int ref_op_rsqrt(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_rsqrt, NULL, NULL);
}

static double sigmoid(double x)
{
	/* exp of a non-positive argument only: no overflow on either side. */
	if (x >= 0)
		return 1.0 / (1.0 + exp(-x));
	double e = exp(x);
	return e / (1.0 + e);
}
static double f_sigmoid(double x, const double *p)
{
	(void)p;
	return sigmoid(x);
}
int ref_op_sigmoid(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_sigmoid, NULL, NULL);
}

static double f_tanh(double x, const double *p)
{
	(void)p;
	return tanh(x);
}
int ref_op_tanh(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_tanh, NULL, NULL);
}

static double f_erf(double x, const double *p)
{
	(void)p;
	return erf(x);
}
int ref_op_erf(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_erf, NULL, NULL);
}

static double f_sin(double x, const double *p)
{
	(void)p;
	return sin(x);
}
int ref_op_sin(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_sin, NULL, NULL);
}

static double f_cos(double x, const double *p)
{
	(void)p;
	return cos(x);
}
int ref_op_cos(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_cos, NULL, NULL);
}

static double f_reciprocal(double x, const double *p)
{
	(void)p;
	return 1.0 / x;
}
int ref_op_reciprocal(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_reciprocal, NULL, NULL);
}

static double f_relu(double x, const double *p)
{
	(void)p;
	return x > 0 ? x : (x == x ? 0 : x);
}
static int64_t i_relu(int64_t x, const double *p)
{
	(void)p;
	return x > 0 ? x : 0;
}
int ref_op_relu(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_relu, i_relu, NULL);
}

static double f_gelu(double x, const double *p)
{
	(void)p;
	return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}
static double f_gelu_tanh(double x, const double *p)
{
	(void)p;
	const double k = 0.79788456080286535588; /* sqrt(2 / pi) */
	return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}
int ref_op_gelu(ref_call *c)
{
	const char *approx;
	ETC_TRY(ref_arg_string_or(c, "approximate", 1, "none", &approx));
	if (strcmp(approx, "none") == 0)
		return unary_run(c, U_FLOAT_ONLY, false, f_gelu, NULL, NULL);
	if (strcmp(approx, "tanh") == 0)
		return unary_run(c, U_FLOAT_ONLY, false, f_gelu_tanh, NULL, NULL);
	return ref_fail(c, ETC_ERR_UNSUPPORTED,
	                "argument approximate: expected \"none\" or \"tanh\", got \"%s\"", approx);
}

static double f_silu(double x, const double *p)
{
	(void)p;
	return x * sigmoid(x);
}
int ref_op_silu(ref_call *c)
{
	return unary_run(c, U_FLOAT_ONLY, false, f_silu, NULL, NULL);
}

static double relu6_of_x_plus_3(double x)
{
	double v = x + 3.0;
	if (v != v)
		return v;
	return v < 0 ? 0 : v > 6 ? 6 : v;
}
static double f_hardswish(double x, const double *p)
{
	(void)p;
	return x * relu6_of_x_plus_3(x) / 6.0;
}
int ref_op_hardswish(ref_call *c)
{
	return unary_run(c, U_FLOAT_ONLY, false, f_hardswish, NULL, NULL);
}

static double f_hardsigmoid(double x, const double *p)
{
	(void)p;
	return relu6_of_x_plus_3(x) / 6.0;
}
int ref_op_hardsigmoid(ref_call *c)
{
	return unary_run(c, U_FLOAT_ONLY, false, f_hardsigmoid, NULL, NULL);
}

/* min(max(x, lo), hi), NaN kept. */
static double f_clamp(double x, const double *p)
{
	if (x != x)
		return x;
	if (x < p[0])
		x = p[0];
	if (x > p[1])
		x = p[1];
	return x;
}
static int64_t i_clamp(int64_t x, const double *p)
{
	if ((double)x < p[0])
		x = (int64_t)p[0];
	if ((double)x > p[1])
		x = (int64_t)p[1];
	return x;
}
int ref_op_hardtanh(ref_call *c)
{
	double p[2];
	ETC_TRY(ref_arg_float_or(c, "min_val", 1, -1.0, &p[0]));
	ETC_TRY(ref_arg_float_or(c, "max_val", 2, 1.0, &p[1]));
	return unary_run(c, U_KEEP, false, f_clamp, i_clamp, p);
}

static double f_leaky_relu(double x, const double *p)
{
	return x > 0 ? x : x * p[0];
}
int ref_op_leaky_relu(ref_call *c)
{
	double slope;
	ETC_TRY(ref_arg_float_or(c, "negative_slope", 1, 0.01, &slope));
	return unary_run(c, U_FLOAT_ONLY, false, f_leaky_relu, NULL, &slope);
}

static double f_sign(double x, const double *p)
{
	(void)p;
	return (double)((x > 0) - (x < 0));
}
static int64_t i_sign(int64_t x, const double *p)
{
	(void)p;
	return (x > 0) - (x < 0);
}
int ref_op_sign(ref_call *c)
{
	return unary_run(c, U_KEEP, true, f_sign, i_sign, NULL);
}

static int64_t i_same(int64_t x, const double *p)
{
	(void)p;
	return x;
}
static double f_floor(double x, const double *p)
{
	(void)p;
	return floor(x);
}
int ref_op_floor(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_floor, i_same, NULL);
}

static double f_ceil(double x, const double *p)
{
	(void)p;
	return ceil(x);
}
int ref_op_ceil(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_ceil, i_same, NULL);
}

static double f_round(double x, const double *p)
{
	(void)p;
	return nearbyint(x); /* half to even in the default rounding mode */
}
int ref_op_round(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_round, i_same, NULL);
}

/* Ops whose result dtype is not the input's: logical_not (bool) and
 * bitwise_not (ints and bool only). */
int ref_op_logical_not(ref_call *c)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], ETC_BOOL, x->rank, x->shape, c->err));
	uint8_t *o = c->outs[0].data;
	for (uint64_t i = 0; i < x->numel; i++)
		o[i] = ref_get_f(x, i) == 0;
	return 0;
}

int ref_op_bitwise_not(ref_call *c)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	if (ref_dtype_kind(x->dtype) == REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "expected an integer or bool tensor, got %s",
		                etc_scalar_type_name(x->dtype));
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, x->dtype, x->rank, x->shape, c->err));
	for (uint64_t i = 0; i < x->numel; i++) {
		int64_t v = ref_get_i(x, i);
		ref_set_i(o, i, x->dtype == ETC_BOOL ? !v : ~v);
	}
	return 0;
}

/*
 * clamp(self, Scalar? min, Scalar? max) and clamp.Tensor(self, Tensor? min,
 * Tensor? max): the result dtype promotes self with the bounds; a NaN bound
 * gives NaN, as torch's min(max(x, lo), hi) does.
 */
static double clamp_f(double x, bool has_lo, double lo, bool has_hi, double hi)
{
	if (x != x)
		return x;
	if (has_lo) {
		if (lo != lo)
			return lo;
		x = x < lo ? lo : x;
	}
	if (has_hi) {
		if (hi != hi)
			return hi;
		x = x > hi ? hi : x;
	}
	return x;
}

int ref_op_clamp(ref_call *c)
{
	const ref_tensor *x;
	ref_scalar s[2];
	bool has[2];
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_opt_scalar(c, "min", 1, &s[0], &has[0]));
	ETC_TRY(ref_arg_opt_scalar(c, "max", 2, &s[1], &has[1]));
	if (!has[0] && !has[1])
		return ref_fail(c, ETC_ERR_MISMATCH, "expected min or max, got neither");
	if (x->dtype == ETC_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "expected a numeric tensor, got bool");
	ref_scalar given[2];
	size_t ns = 0;
	for (int k = 0; k < 2; k++)
		if (has[k])
			given[ns++] = s[k];
	int od = ref_result_dtype(c, &x, 1, given, ns);
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, x->rank, x->shape, c->err));
	if (ref_dtype_kind(od) != REF_KIND_FLOAT) {
		for (uint64_t i = 0; i < x->numel; i++) {
			int64_t v = ref_get_i(x, i);
			if (has[0] && v < s[0].i)
				v = s[0].i;
			if (has[1] && v > s[1].i)
				v = s[1].i;
			ref_set_i(o, i, v);
		}
		return 0;
	}
	for (uint64_t i = 0; i < x->numel; i++)
		ref_set_f(o, i, clamp_f(ref_get_f(x, i), has[0], s[0].f, has[1], s[1].f));
	return 0;
}

int ref_op_clamp_tensor(ref_call *c)
{
	const ref_tensor *x, *lo, *hi;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_opt_tensor(c, "min", 1, &lo));
	ETC_TRY(ref_arg_opt_tensor(c, "max", 2, &hi));
	if (!lo && !hi)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected min or max, got neither");
	const ref_tensor *ts[3] = {x, lo ? lo : hi, hi};
	size_t n = lo && hi ? 3 : 2;
	for (size_t k = 0; k < n; k++)
		if (ts[k]->dtype == ETC_BOOL)
			return ref_fail(c, ETC_ERR_UNSUPPORTED,
			                "expected numeric tensors, got a bool tensor");
	ref_bcast b;
	ETC_TRY(ref_bcast_init(&b, c, ts, n));
	int od = ref_result_dtype(c, ts, n, NULL, 0);
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, b.rank, b.shape, c->err));
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	const ref_tensor *tlo = lo ? ts[1] : NULL, *thi = hi ? ts[n - 1] : NULL;
	size_t klo = 1, khi = n - 1;
	for (uint64_t i = 0; i < b.numel; i++, ref_bcast_next(&b)) {
		if (fl) {
			double v = clamp_f(ref_get_f(x, b.off[0]), tlo != NULL,
			                   tlo ? ref_get_f(tlo, b.off[klo]) : 0, thi != NULL,
			                   thi ? ref_get_f(thi, b.off[khi]) : 0);
			ref_set_f(o, i, v);
		} else {
			int64_t v = ref_get_i(x, b.off[0]);
			if (tlo && v < ref_get_i(tlo, b.off[klo]))
				v = ref_get_i(tlo, b.off[klo]);
			if (thi && v > ref_get_i(thi, b.off[khi]))
				v = ref_get_i(thi, b.off[khi]);
			ref_set_i(o, i, v);
		}
	}
	return 0;
}

static double f_expm1(double x, const double *p)
{
	(void)p;
	return expm1(x);
}
int ref_op_expm1(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_expm1, NULL, NULL);
}

static double f_log1p(double x, const double *p)
{
	(void)p;
	return log1p(x);
}
int ref_op_log1p(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_log1p, NULL, NULL);
}

static double f_log2(double x, const double *p)
{
	(void)p;
	return log2(x);
}
int ref_op_log2(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_log2, NULL, NULL);
}

static double f_log10(double x, const double *p)
{
	(void)p;
	return log10(x);
}
int ref_op_log10(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_log10, NULL, NULL);
}

static double f_tan(double x, const double *p)
{
	(void)p;
	return tan(x);
}
int ref_op_tan(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_tan, NULL, NULL);
}

static double f_atan(double x, const double *p)
{
	(void)p;
	return atan(x);
}
int ref_op_atan(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_atan, NULL, NULL);
}

static double f_asin(double x, const double *p)
{
	(void)p;
	return asin(x);
}
int ref_op_asin(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_asin, NULL, NULL);
}

static double f_acos(double x, const double *p)
{
	(void)p;
	return acos(x);
}
int ref_op_acos(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_acos, NULL, NULL);
}

static double f_sinh(double x, const double *p)
{
	(void)p;
	return sinh(x);
}
int ref_op_sinh(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_sinh, NULL, NULL);
}

static double f_cosh(double x, const double *p)
{
	(void)p;
	return cosh(x);
}
int ref_op_cosh(ref_call *c)
{
	return unary_run(c, U_TO_FLOAT, true, f_cosh, NULL, NULL);
}

static double f_trunc(double x, const double *p)
{
	(void)p;
	return trunc(x);
}
int ref_op_trunc(ref_call *c)
{
	return unary_run(c, U_KEEP, false, f_trunc, i_same, NULL);
}

/* elu(self, alpha=1, scale=1, input_scale=1) */
static double f_elu(double x, const double *p)
{
	return x > 0 ? p[1] * x : p[1] * p[0] * expm1(x * p[2]);
}
int ref_op_elu(ref_call *c)
{
	double p[3];
	ETC_TRY(ref_arg_float_or(c, "alpha", 1, 1.0, &p[0]));
	ETC_TRY(ref_arg_float_or(c, "scale", 2, 1.0, &p[1]));
	ETC_TRY(ref_arg_float_or(c, "input_scale", 3, 1.0, &p[2]));
	return unary_run(c, U_FLOAT_ONLY, false, f_elu, NULL, p);
}

/* isnan / isinf: bool results, false for integer inputs. */
static int float_test(ref_call *c, bool want_nan)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], ETC_BOOL, x->rank, x->shape, c->err));
	uint8_t *o = c->outs[0].data;
	bool fl = ref_dtype_kind(x->dtype) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < x->numel; i++) {
		double v = fl ? ref_get_f(x, i) : 0.0;
		o[i] = want_nan ? isnan(v) : isinf(v);
	}
	return 0;
}

int ref_op_isnan(ref_call *c)
{
	return float_test(c, true);
}

int ref_op_isinf(ref_call *c)
{
	return float_test(c, false);
}

/* softplus(self, beta=1, threshold=20): log1p(exp(beta x)) / beta, x where
 * beta x > threshold. */
static double f_softplus(double x, const double *p)
{
	double bx = x * p[0];
	return bx > p[1] ? x : log1p(exp(bx)) / p[0];
}
int ref_op_softplus(ref_call *c)
{
	double p[2];
	ETC_TRY(ref_arg_float_or(c, "beta", 1, 1.0, &p[0]));
	ETC_TRY(ref_arg_float_or(c, "threshold", 2, 20.0, &p[1]));
	return unary_run(c, U_FLOAT_ONLY, false, f_softplus, NULL, p);
}

/* mish(self) = x tanh(softplus(x)) */
static double f_mish(double x, const double *p)
{
	(void)p;
	return x * tanh(x > 20.0 ? x : log1p(exp(x)));
}
int ref_op_mish(ref_call *c)
{
	return unary_run(c, U_FLOAT_ONLY, false, f_mish, NULL, NULL);
}

/* fill.Scalar(self, value), fill.Tensor(self, value: 0-d): self's shape
 * and dtype, every element value. */
int ref_op_fill(ref_call *c)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	const ref_arg *a = ref_arg_get(c, "value", 1);
	double vf = 0;
	int64_t vi = 0;
	bool as_float;
	if (a && a->kind == REF_ARG_TENSOR) {
		if (a->t->numel != 1 || a->t->rank != 0) {
			char s[160];
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "argument value: expected a 0-d tensor, got shape %s",
			                ref_shape_str(s, sizeof s, a->t->rank, a->t->shape));
		}
		as_float = ref_dtype_kind(a->t->dtype) == REF_KIND_FLOAT;
		vf = ref_get_f(a->t, 0);
		vi = ref_get_i(a->t, 0);
	} else {
		ref_scalar v;
		ETC_TRY(ref_arg_scalar(c, "value", 1, &v));
		as_float = v.kind == REF_KIND_FLOAT;
		vf = v.f;
		vi = v.i;
	}
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, ref_hold_dtype(c, x->dtype), x->rank, x->shape, c->err));
	bool fl = ref_dtype_kind(o->dtype) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < o->numel; i++) {
		if (fl || as_float)
			ref_set_f(o, i, vf);
		else
			ref_set_i(o, i, vi);
	}
	return 0;
}

/* _prelu_kernel(self, weight): x where x > 0, else weight x, the weight
 * broadcast against self (one per channel, dim 1, as torch.prelu passes it). */
int ref_op_prelu_kernel(ref_call *c)
{
	const ref_tensor *x, *w;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_tensor(c, "weight", 1, &w));
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT ||
	    ref_dtype_kind(w->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "expected floating-point self and weight, got %s and %s",
		                etc_scalar_type_name(x->dtype), etc_scalar_type_name(w->dtype));
	const ref_tensor *ts[2] = {x, w};
	ref_bcast it;
	ETC_TRY(ref_bcast_init(&it, c, ts, 2));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, it.rank, it.shape, c->err));
	for (uint64_t i = 0; i < it.numel; i++, ref_bcast_next(&it)) {
		double v = ref_get_f(x, it.off[0]);
		ref_set_f(&c->outs[0], i, v > 0 ? v : ref_get_f(w, it.off[1]) * v);
	}
	return 0;
}

/* round.decimals(self, *, decimals): as torch, nearbyint(x * 10^d) / 10^d,
 * or nearbyint(x / 10^-d) * 10^-d for negative d. */
static double f_round_decimals(double x, const double *p)
{
	return p[1] >= 0 ? nearbyint(x * p[0]) / p[0] : nearbyint(x / p[0]) * p[0];
}
int ref_op_round_decimals(ref_call *c)
{
	int64_t d;
	double p[2];
	ETC_TRY(ref_arg_int_or(c, "decimals", 1, 0, &d));
	if (d > 300 || d < -300)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "argument decimals: %lld is out of range",
		                (long long)d);
	p[0] = pow(10.0, (double)(d >= 0 ? d : -d));
	p[1] = (double)d;
	return unary_run(c, U_FLOAT_ONLY, false, f_round_decimals, NULL, p);
}
