/*
 * ops_binary.c - elementwise ops of two tensors (or a tensor and a Python
 * scalar) with broadcasting and torch's type promotion, and where.
 *
 * Integer results are computed exactly in int64 and wrapped to the result
 * dtype (which is what fixed-width arithmetic in that dtype gives for +, -,
 * *, bit ops and floor/trunc division). Float results are computed in double
 * on operands rounded to the compute dtype; in float32 mode that is the
 * correctly rounded float32 result of +, -, *, /.
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <math.h>

/* One operand: a tensor argument, or a scalar argument held in a 0-d tensor. */
typedef struct operand {
	const ref_tensor *t;
	ref_tensor held;
	double f;
	int64_t i;
	bool is_scalar;
	ref_scalar s;
} operand;

static int operand_get(const ref_call *c, const char *name, int pos, operand *o)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	memset(o, 0, sizeof *o);
	if (a && a->kind == REF_ARG_TENSOR)
		return ref_arg_tensor(c, name, pos, &o->t);
	ETC_TRY(ref_arg_scalar(c, name, pos, &o->s));
	o->is_scalar = true;
	o->held.rank = 0;
	o->held.numel = 1;
	o->held.borrowed = true;
	if (o->s.kind == REF_KIND_FLOAT) {
		o->f = o->s.f;
		o->held.dtype = ETC_DOUBLE;
		o->held.data = &o->f;
	} else {
		o->i = o->s.i;
		o->held.dtype = ETC_LONG;
		o->held.data = &o->i;
	}
	o->t = &o->held;
	return 0;
}

static int result_dtype(const ref_call *c, const operand *a, const operand *b)
{
	const ref_tensor *ts[2];
	ref_scalar ss[2];
	size_t nt = 0, ns = 0;
	const operand *ops[2] = {a, b};
	for (int k = 0; k < 2; k++) {
		if (ops[k]->is_scalar)
			ss[ns++] = ops[k]->s;
		else
			ts[nt++] = ops[k]->t;
	}
	return ref_result_dtype(c, ts, nt, ss, ns);
}

typedef double (*bin_f)(double a, double b, double p);
/* *bad set on an integer error (division by zero). */
typedef int64_t (*bin_i)(int64_t a, int64_t b, int64_t p, bool *bad);

static double round_to(int dtype, double v)
{
	return dtype == ETC_FLOAT ? (double)(float)v : v;
}

/*
 * Computes out = op(a, b) broadcast. `compute` is the dtype the values are
 * computed in, `od` the output dtype (bool for comparisons).
 */
static int binary_run(ref_call *c, const operand *a, const operand *b, int compute, int od, bin_f f,
                      bin_i fi, double p, int64_t pi)
{
	const ref_tensor *ts[2] = {a->t, b->t};
	ref_bcast it;
	ETC_TRY(ref_bcast_init(&it, c, ts, 2));
	bool fl = ref_dtype_kind(compute) == REF_KIND_FLOAT;
	if (!fl && !fi)
		return ref_fail(
		    c, ETC_ERR_UNSUPPORTED, "expected floating-point operands, got %s and %s",
		    etc_scalar_type_name(a->t->dtype), etc_scalar_type_name(b->t->dtype));
	if (fl && !f)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "expected integer or bool operands, got %s",
		                etc_scalar_type_name(ref_dtype_kind(a->t->dtype) == REF_KIND_FLOAT
		                                         ? a->t->dtype
		                                         : b->t->dtype));
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, it.rank, it.shape, c->err));
	for (uint64_t i = 0; i < it.numel; i++, ref_bcast_next(&it)) {
		if (fl) {
			double x = round_to(compute, ref_get_f(a->t, it.off[0]));
			double y = round_to(compute, ref_get_f(b->t, it.off[1]));
			ref_set_f(o, i, f(x, y, p));
		} else {
			bool bad = false;
			int64_t v =
			    fi(ref_get_i(a->t, it.off[0]), ref_get_i(b->t, it.off[1]), pi, &bad);
			if (bad)
				return ref_fail(c, ETC_ERR_MISMATCH, "integer division by zero");
			ref_set_i(o, i, v);
		}
	}
	return 0;
}

/* Reads self and other (tensor or scalar) and checks the output count. */
static int two_operands(ref_call *c, const char *na, const char *nb, operand *a, operand *b)
{
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(operand_get(c, na, 0, a));
	return operand_get(c, nb, 1, b);
}

/* --- add, sub, rsub ---------------------------------------------------------- */

static double f_add(double a, double b, double alpha)
{
	return alpha == 1.0 ? a + b : a + alpha * b;
}
static int64_t i_add(int64_t a, int64_t b, int64_t alpha, bool *bad)
{
	(void)bad;
	return (int64_t)((uint64_t)a + (uint64_t)alpha * (uint64_t)b);
}
static double f_sub(double a, double b, double alpha)
{
	return alpha == 1.0 ? a - b : a - alpha * b;
}
static int64_t i_sub(int64_t a, int64_t b, int64_t alpha, bool *bad)
{
	(void)bad;
	return (int64_t)((uint64_t)a - (uint64_t)alpha * (uint64_t)b);
}

static int add_like(ref_call *c, bool sub, bool reverse)
{
	operand a, b;
	ref_scalar alpha;
	bool has_alpha;
	ETC_TRY(ref_check_nouts(c, 1));
	/* rsub(self, other, alpha) = other - alpha * self */
	ETC_TRY(operand_get(c, reverse ? "other" : "self", reverse ? 1 : 0, &a));
	ETC_TRY(operand_get(c, reverse ? "self" : "other", reverse ? 0 : 1, &b));
	ETC_TRY(ref_arg_opt_scalar(c, "alpha", 2, &alpha, &has_alpha));
	if (!has_alpha) {
		alpha.kind = REF_KIND_INT;
		alpha.i = 1;
		alpha.f = 1.0;
	}
	int od = result_dtype(c, &a, &b);
	int kind = ref_dtype_kind(od);
	if (sub && kind == REF_KIND_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "subtraction of bool tensors is not supported (torch refuses it)");
	if (kind != REF_KIND_FLOAT && alpha.kind == REF_KIND_FLOAT)
		return ref_fail(
		    c, ETC_ERR_MISMATCH,
		    "argument alpha: expected an int for integer operands, got a float");
	if (kind == REF_KIND_BOOL && alpha.kind == REF_KIND_INT && alpha.i != 0 && alpha.i != 1)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument alpha: expected a bool for bool operands, got %lld",
		                (long long)alpha.i);
	double fa = round_to(od, alpha.f);
	if (sub)
		return binary_run(c, &a, &b, od, od, f_sub, i_sub, fa, alpha.i);
	return binary_run(c, &a, &b, od, od, f_add, i_add, fa, alpha.i);
}

int ref_op_add(ref_call *c)
{
	return add_like(c, false, false);
}

int ref_op_sub(ref_call *c)
{
	return add_like(c, true, false);
}

int ref_op_rsub(ref_call *c)
{
	return add_like(c, true, true);
}

/* --- mul, div ------------------------------------------------------------------ */

static double f_mul(double a, double b, double p)
{
	(void)p;
	return a * b;
}
static int64_t i_mul(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	(void)bad;
	return (int64_t)((uint64_t)a * (uint64_t)b);
}
int ref_op_mul(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	if (od == ETC_BOOL) /* bool * bool is logical and */
		return binary_run(c, &a, &b, ETC_LONG, od, NULL, i_mul, 0, 0);
	return binary_run(c, &a, &b, od, od, f_mul, i_mul, 0, 0);
}

static double f_div(double a, double b, double p)
{
	(void)p;
	return a / b;
}
static double f_div_trunc(double a, double b, double p)
{
	(void)p;
	return trunc(a / b);
}
/* Python's floor division of floats, as torch computes it. */
static double f_div_floor(double a, double b, double p)
{
	(void)p;
	if (b == 0)
		return a / b;
	double mod = fmod(a, b);
	double div = (a - mod) / b;
	if (mod != 0 && (b < 0) != (mod < 0))
		div -= 1.0;
	if (div == 0)
		return copysign(0.0, a / b);
	double fl = floor(div);
	if (div - fl > 0.5)
		fl += 1.0;
	return fl;
}
static int64_t i_div_trunc(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	if (b == 0) {
		*bad = true;
		return 0;
	}
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	return a / b;
}
static int64_t i_div_floor(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	if (b == 0) {
		*bad = true;
		return 0;
	}
	if (b == -1)
		return (int64_t)(0 - (uint64_t)a);
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q -= 1;
	return q;
}

int ref_op_div(ref_call *c)
{
	operand a, b;
	const char *mode;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	ETC_TRY(ref_arg_string_or(c, "rounding_mode", 2, NULL, &mode));
	int od = result_dtype(c, &a, &b);
	if (!mode)
		return binary_run(c, &a, &b, c->float_dtype, c->float_dtype, f_div, NULL, 0, 0);
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	if (od == ETC_BOOL)
		od = ETC_LONG; /* torch: bool // bool is int64 */
	if (strcmp(mode, "trunc") == 0)
		return binary_run(c, &a, &b, od, od, fl ? f_div_trunc : NULL, i_div_trunc, 0, 0);
	if (strcmp(mode, "floor") == 0)
		return binary_run(c, &a, &b, od, od, fl ? f_div_floor : NULL, i_div_floor, 0, 0);
	return ref_fail(c, ETC_ERR_UNSUPPORTED,
	                "argument rounding_mode: expected None, \"trunc\" or \"floor\", got \"%s\"",
	                mode);
}

/* --- pow ------------------------------------------------------------------------ */

static double f_pow(double a, double b, double p)
{
	(void)p;
	return pow(a, b);
}
static int64_t i_pow(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	(void)bad;
	if (b < 0) {
		if (a == 1)
			return 1;
		if (a == -1)
			return (b & 1) ? -1 : 1;
		return 0;
	}
	uint64_t r = 1, base = (uint64_t)a;
	while (b) {
		if (b & 1)
			r *= base;
		base *= base;
		b >>= 1;
	}
	return (int64_t)r;
}

int ref_op_pow(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "exponent", &a, &b));
	int od = result_dtype(c, &a, &b);
	if (od == ETC_BOOL)
		od = ETC_LONG; /* torch: bool ** bool is int64 */
	if (ref_dtype_kind(od) != REF_KIND_FLOAT && b.is_scalar && b.s.i < 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "integers to negative integer powers are not allowed");
	return binary_run(c, &a, &b, od, od, f_pow, i_pow, 0, 0);
}

/* --- minimum, maximum ----------------------------------------------------------- */

static double f_max(double a, double b, double p)
{
	(void)p;
	if (a != a || b != b)
		return a != a ? a : b;
	return a > b ? a : b;
}
static int64_t i_max(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	(void)bad;
	return a > b ? a : b;
}
static double f_min(double a, double b, double p)
{
	(void)p;
	if (a != a || b != b)
		return a != a ? a : b;
	return a < b ? a : b;
}
static int64_t i_min(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	(void)bad;
	return a < b ? a : b;
}
int ref_op_maximum(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	return binary_run(c, &a, &b, od, od, f_max, i_max, 0, 0);
}
int ref_op_minimum(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	return binary_run(c, &a, &b, od, od, f_min, i_min, 0, 0);
}

/* --- comparisons and logical ops: bool results ---------------------------------- */

enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

static double f_cmp(double a, double b, double p)
{
	switch ((int)p) {
	case CMP_EQ:
		return a == b;
	case CMP_NE:
		return a != b;
	case CMP_LT:
		return a < b;
	case CMP_LE:
		return a <= b;
	case CMP_GT:
		return a > b;
	default:
		return a >= b;
	}
}
static int64_t i_cmp(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)bad;
	switch (p) {
	case CMP_EQ:
		return a == b;
	case CMP_NE:
		return a != b;
	case CMP_LT:
		return a < b;
	case CMP_LE:
		return a <= b;
	case CMP_GT:
		return a > b;
	default:
		return a >= b;
	}
}
static int compare(ref_call *c, int how)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int common = result_dtype(c, &a, &b);
	return binary_run(c, &a, &b, common, ETC_BOOL, f_cmp, i_cmp, how, how);
}
int ref_op_eq(ref_call *c)
{
	return compare(c, CMP_EQ);
}
int ref_op_ne(ref_call *c)
{
	return compare(c, CMP_NE);
}
int ref_op_lt(ref_call *c)
{
	return compare(c, CMP_LT);
}
int ref_op_le(ref_call *c)
{
	return compare(c, CMP_LE);
}
int ref_op_gt(ref_call *c)
{
	return compare(c, CMP_GT);
}
int ref_op_ge(ref_call *c)
{
	return compare(c, CMP_GE);
}

enum { LOG_AND, LOG_OR, LOG_XOR };

static double f_logical(double a, double b, double p)
{
	bool x = a != 0, y = b != 0;
	return p == LOG_AND ? (x && y) : p == LOG_OR ? (x || y) : (x != y);
}
static int logical(ref_call *c, int how)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	/* Values compared with zero: a double holds every one faithfully enough. */
	return binary_run(c, &a, &b, ETC_DOUBLE, ETC_BOOL, f_logical, NULL, how, 0);
}
int ref_op_logical_and(ref_call *c)
{
	return logical(c, LOG_AND);
}
int ref_op_logical_or(ref_call *c)
{
	return logical(c, LOG_OR);
}
int ref_op_logical_xor(ref_call *c)
{
	return logical(c, LOG_XOR);
}

static int64_t i_bit(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)bad;
	return p == LOG_AND ? (a & b) : p == LOG_OR ? (a | b) : (a ^ b);
}
static int bitwise(ref_call *c, int how)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	return binary_run(c, &a, &b, od, od, NULL, i_bit, 0, how);
}
int ref_op_bitwise_and(ref_call *c)
{
	return bitwise(c, LOG_AND);
}
int ref_op_bitwise_or(ref_call *c)
{
	return bitwise(c, LOG_OR);
}
int ref_op_bitwise_xor(ref_call *c)
{
	return bitwise(c, LOG_XOR);
}

/* --- where(condition, self, other) ------------------------------------------------ */

int ref_op_where(ref_call *c)
{
	const ref_tensor *cond;
	operand a, b;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "condition", 0, &cond));
	ETC_TRY(operand_get(c, "self", 1, &a));
	ETC_TRY(operand_get(c, "other", 2, &b));
	if (cond->dtype != ETC_BOOL && cond->dtype != ETC_BYTE)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument condition: expected bool, got %s",
		                etc_scalar_type_name(cond->dtype));
	int od = result_dtype(c, &a, &b);
	const ref_tensor *ts[3] = {cond, a.t, b.t};
	ref_bcast it;
	ETC_TRY(ref_bcast_init(&it, c, ts, 3));
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, it.rank, it.shape, c->err));
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < it.numel; i++, ref_bcast_next(&it)) {
		const ref_tensor *src = ref_get_i(cond, it.off[0]) ? a.t : b.t;
		uint64_t off = src == a.t ? it.off[1] : it.off[2];
		if (fl)
			ref_set_f(o, i, ref_get_f(src, off));
		else
			ref_set_i(o, i, ref_get_i(src, off));
	}
	return 0;
}

/* --- fmod, remainder, floor_divide, atan2 ---------------------------------------------- */

static double f_fmod(double a, double b, double p)
{
	(void)p;
	return fmod(a, b);
}
static int64_t i_fmod(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	if (b == 0) {
		*bad = true;
		return 0;
	}
	return b == -1 ? 0 : a % b;
}
/* Python's modulo: the sign of the divisor. */
static double f_remainder(double a, double b, double p)
{
	(void)p;
	double m = fmod(a, b);
	if (m != 0 && ((b < 0) != (m < 0)))
		m += b;
	return m;
}
static int64_t i_remainder(int64_t a, int64_t b, int64_t p, bool *bad)
{
	(void)p;
	if (b == 0) {
		*bad = true;
		return 0;
	}
	int64_t m = b == -1 ? 0 : a % b;
	if (m != 0 && ((b < 0) != (m < 0)))
		m += b;
	return m;
}
static int modulo(ref_call *c, bin_f f, bin_i fi)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	if (od == ETC_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "expected numeric operands, got bool");
	return binary_run(c, &a, &b, od, od, f, fi, 0, 0);
}
int ref_op_fmod(ref_call *c)
{
	return modulo(c, f_fmod, i_fmod);
}
int ref_op_remainder(ref_call *c)
{
	return modulo(c, f_remainder, i_remainder);
}

/* floor_divide(self, other): div with rounding_mode="floor". */
int ref_op_floor_divide(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	int od = result_dtype(c, &a, &b);
	if (od == ETC_BOOL)
		od = ETC_LONG;
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	return binary_run(c, &a, &b, od, od, fl ? f_div_floor : NULL, i_div_floor, 0, 0);
}

static double f_atan2(double a, double b, double p)
{
	(void)p;
	return atan2(a, b);
}
int ref_op_atan2(ref_call *c)
{
	operand a, b;
	ETC_TRY(two_operands(c, "self", "other", &a, &b));
	return binary_run(c, &a, &b, c->float_dtype, c->float_dtype, f_atan2, NULL, 0, 0);
}

/*
 * masked_fill.Scalar(self, mask, value) and masked_fill.Tensor(self, mask,
 * value: a 0-d tensor): self's shape and dtype, value where the (broadcast)
 * mask is true.
 */
int ref_op_masked_fill(ref_call *c)
{
	const ref_tensor *x, *mask;
	operand v;
	char s1[160], s2[160];
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_tensor(c, "mask", 1, &mask));
	ETC_TRY(operand_get(c, "value", 2, &v));
	if (mask->dtype != ETC_BOOL)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument mask: expected bool, got %s",
		                etc_scalar_type_name(mask->dtype));
	if (!v.is_scalar && v.t->rank != 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument value: expected a 0-d tensor, got shape %s",
		                ref_shape_str(s1, sizeof s1, v.t->rank, v.t->shape));
	const ref_tensor *ts[2] = {x, mask};
	ref_bcast it;
	ETC_TRY(ref_bcast_init(&it, c, ts, 2));
	bool same = it.rank == x->rank;
	for (uint32_t d = 0; same && d < x->rank; d++)
		same = it.shape[d] == x->shape[d];
	if (!same)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "mask of shape %s does not broadcast to self's %s",
		                ref_shape_str(s1, sizeof s1, mask->rank, mask->shape),
		                ref_shape_str(s2, sizeof s2, x->rank, x->shape));
	int od = ref_hold_dtype(c, x->dtype);
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, x->rank, x->shape, c->err));
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	bool vfl = ref_dtype_kind(v.t->dtype) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < it.numel; i++, ref_bcast_next(&it)) {
		bool m = ((const uint8_t *)mask->data)[it.off[1]] != 0;
		const ref_tensor *src = m ? v.t : x;
		uint64_t off = m ? 0 : it.off[0];
		if (fl || (m && vfl))
			ref_set_f(o, i, ref_get_f(src, off));
		else
			ref_set_i(o, i, ref_get_i(src, off));
	}
	return 0;
}

/* glu(self, dim=-1): the first half of dim times the sigmoid of the second. */
int ref_op_glu(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim;
	uint32_t d;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(ref_arg_int_or(c, "dim", 1, -1, &dim));
	if (x->rank == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected at least 1 dim, got a 0-d tensor");
	ETC_TRY(ref_norm_dim(c, dim, x->rank, &d));
	if (x->shape[d] % 2 != 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "dim %u: expected an even size to halve, got %lld", d,
		                (long long)x->shape[d]);
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "expected a floating-point tensor, got %s",
		                etc_scalar_type_name(x->dtype));
	int64_t shape[ETC_REF_MAX_RANK];
	memcpy(shape, x->shape, sizeof shape);
	shape[d] /= 2;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, shape, c->err));
	uint64_t inner = 1, outer = 1, half = (uint64_t)shape[d];
	for (uint32_t k = d + 1; k < x->rank; k++)
		inner *= (uint64_t)x->shape[k];
	for (uint32_t k = 0; k < d; k++)
		outer *= (uint64_t)x->shape[k];
	uint64_t at = 0;
	for (uint64_t o = 0; o < outer; o++)
		for (uint64_t h = 0; h < half; h++)
			for (uint64_t k = 0; k < inner; k++) {
				uint64_t ia = (o * 2 * half + h) * inner + k;
				double a = ref_get_f(x, ia), b = ref_get_f(x, ia + half * inner);
				double sg =
				    b >= 0 ? 1.0 / (1.0 + exp(-b)) : exp(b) / (1.0 + exp(b));
				ref_set_f(&c->outs[0], at++, a * sg);
			}
	return 0;
}
