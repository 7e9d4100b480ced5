/*
 * ops_create.c - tensors made from arguments (full, zeros, ones, arange,
 * scalar_tensor, the *_like ops) and copies with an optional dtype change
 * (_to_copy, _to_dim_order_copy, clone, alias, detach, lift_fresh).
 * Layout, device, pin_memory and memory_format arguments do not change
 * values and are ignored; a float dtype is held in the reference dtype.
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <inttypes.h>
#include <math.h>

/* The dtype of a created tensor: the dtype argument, else `def`. */
static int dtype_arg(ref_call *c, const char *name, int pos, int def, int *od)
{
	int d;
	ETC_TRY(ref_arg_dtype_or_none(c, name, pos, &d));
	*od = ref_hold_dtype(c, d >= 0 ? d : def);
	return 0;
}

static int fill(ref_call *c, int od, uint32_t rank, const int64_t *shape, const ref_scalar *v)
{
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, rank, shape, c->err));
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (uint64_t i = 0; i < o->numel; i++) {
		if (fl || v->kind == REF_KIND_FLOAT)
			ref_set_f(o, i, v->f);
		else
			ref_set_i(o, i, v->i);
	}
	return 0;
}

static int size_arg(ref_call *c, const int64_t **size, size_t *n, int64_t *one)
{
	ETC_TRY(ref_arg_ints(c, "size", 0, true, size, n, one));
	if (*n > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_LIMIT, "argument size: %zu dims exceed %d", *n,
		                ETC_REF_MAX_RANK);
	for (size_t k = 0; k < *n; k++)
		if ((*size)[k] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "argument size: expected sizes >= 0, got %" PRId64
			                " at dim %zu",
			                (*size)[k], k);
	return 0;
}

static int scalar_default_dtype(const ref_call *c, const ref_scalar *v)
{
	return v->kind == REF_KIND_FLOAT ? c->float_dtype
	       : v->kind == REF_KIND_INT ? ETC_LONG
	                                 : ETC_BOOL;
}

/* full(size, fill_value, *, dtype=None, ...): dtype from the fill value when None. */
int ref_op_full(ref_call *c)
{
	const int64_t *size;
	size_t n;
	int64_t one;
	ref_scalar v;
	int od;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(size_arg(c, &size, &n, &one));
	ETC_TRY(ref_arg_scalar(c, "fill_value", 1, &v));
	ETC_TRY(dtype_arg(c, "dtype", 2, scalar_default_dtype(c, &v), &od));
	return fill(c, od, (uint32_t)n, size, &v);
}

static int zeros_ones(ref_call *c, int64_t value)
{
	const int64_t *size;
	size_t n;
	int64_t one;
	int od;
	ref_scalar v = {REF_KIND_INT, value, (double)value};
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(size_arg(c, &size, &n, &one));
	ETC_TRY(dtype_arg(c, "dtype", 1, c->float_dtype, &od));
	return fill(c, od, (uint32_t)n, size, &v);
}

int ref_op_zeros(ref_call *c)
{
	return zeros_ones(c, 0);
}

int ref_op_ones(ref_call *c)
{
	return zeros_ones(c, 1);
}

/* zeros_like / ones_like(self, *, dtype=None, ...), full_like(self, fill_value, *, dtype) */
static int like(ref_call *c, const ref_scalar *v, int dtype_pos)
{
	const ref_tensor *x;
	int od;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(dtype_arg(c, "dtype", dtype_pos, x->dtype, &od));
	return fill(c, od, x->rank, x->shape, v);
}

int ref_op_zeros_like(ref_call *c)
{
	ref_scalar v = {REF_KIND_INT, 0, 0.0};
	return like(c, &v, 1);
}

int ref_op_ones_like(ref_call *c)
{
	ref_scalar v = {REF_KIND_INT, 1, 1.0};
	return like(c, &v, 1);
}

int ref_op_full_like(ref_call *c)
{
	ref_scalar v;
	ETC_TRY(ref_arg_scalar(c, "fill_value", 1, &v));
	return like(c, &v, 2);
}

/* scalar_tensor(s, *, dtype=None, ...): a 0-d tensor, default float. */
int ref_op_scalar_tensor(ref_call *c)
{
	ref_scalar v;
	int od;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_scalar(c, "s", 0, &v));
	ETC_TRY(dtype_arg(c, "dtype", 1, c->float_dtype, &od));
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, 0, NULL, c->err));
	if (ref_dtype_kind(od) == REF_KIND_FLOAT || v.kind == REF_KIND_FLOAT)
		ref_set_f(o, 0, v.f);
	else
		ref_set_i(o, 0, v.i);
	return 0;
}

/*
 * arange(end, *, dtype=None, ...) and arange.start_step(start, end, step=1,
 * *, dtype=None, ...): ceil((end - start) / step) elements start + i * step;
 * int64 when every bound is an int and no dtype is given.
 */
static int arange_run(ref_call *c, const ref_scalar *start, const ref_scalar *end,
                      const ref_scalar *step, int dtype_pos)
{
	int od;
	bool all_int = start->kind != REF_KIND_FLOAT && end->kind != REF_KIND_FLOAT &&
	               step->kind != REF_KIND_FLOAT;
	ETC_TRY(dtype_arg(c, "dtype", dtype_pos, all_int ? ETC_LONG : c->float_dtype, &od));
	if (step->f == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument step: expected non-zero, got 0");
	if ((step->f > 0 && end->f < start->f) || (step->f < 0 && end->f > start->f))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "upper bound and larger bound inconsistent with step sign");
	double len = ceil((end->f - start->f) / step->f);
	if (!(len >= 0 && len < 9.0e15))
		return ref_fail(c, ETC_ERR_LIMIT, "arange of %g elements", len);
	/* Exact for ints beyond 2^53, where end - start cannot overflow. */
	const int64_t lim = (int64_t)1 << 62;
	if (all_int && start->i > -lim && start->i < lim && end->i > -lim && end->i < lim)
		len = (double)((end->i - start->i) / step->i +
		               ((end->i - start->i) % step->i != 0 ? 1 : 0));
	int64_t n = (int64_t)len;
	ref_tensor *o = &c->outs[0];
	ETC_TRY(ref_tensor_alloc(o, od, 1, &n, c->err));
	bool fl = ref_dtype_kind(od) == REF_KIND_FLOAT;
	for (int64_t i = 0; i < n; i++) {
		if (all_int && !fl)
			ref_set_i(o, (uint64_t)i,
			          (int64_t)((uint64_t)start->i + (uint64_t)i * (uint64_t)step->i));
		else
			ref_set_f(o, (uint64_t)i, start->f + (double)i * step->f);
	}
	return 0;
}

int ref_op_arange(ref_call *c)
{
	ref_scalar start = {REF_KIND_INT, 0, 0.0}, end, step = {REF_KIND_INT, 1, 1.0};
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_scalar(c, "end", 0, &end));
	return arange_run(c, &start, &end, &step, 1);
}

int ref_op_arange_start_step(ref_call *c)
{
	ref_scalar start, end, step = {REF_KIND_INT, 1, 1.0};
	bool has_step;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_scalar(c, "start", 0, &start));
	ETC_TRY(ref_arg_scalar(c, "end", 1, &end));
	ETC_TRY(ref_arg_opt_scalar(c, "step", 2, &step, &has_step));
	if (!has_step)
		step = (ref_scalar){REF_KIND_INT, 1, 1.0};
	return arange_run(c, &start, &end, &step, 3);
}

/* A copy of self in dtype `od`: float to int truncates toward zero as .to() does. */
static int copy_to(ref_call *c, const ref_tensor *x, int od)
{
	etc_reftensor v = ref_tensor_view(x);
	return ref_tensor_convert(&c->outs[0], &v, od, c->err);
}

static int plain_copy(ref_call *c)
{
	const ref_tensor *x;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	return copy_to(c, x, x->dtype);
}

/* clone(self, *, memory_format=None), alias, alias_copy, detach_copy, lift_fresh_copy */
int ref_op_clone(ref_call *c)
{
	return plain_copy(c);
}

/* _to_copy(self, *, dtype=None, layout, device, pin_memory, non_blocking=False,
 * memory_format) */
int ref_op_to_copy(ref_call *c)
{
	const ref_tensor *x;
	int od;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(dtype_arg(c, "dtype", 1, x->dtype, &od));
	return copy_to(c, x, od);
}

/* _to_dim_order_copy(self, *, dtype=None, layout, device, pin_memory,
 * non_blocking=False, dim_order=None): only the contiguous dim order. */
int ref_op_to_dim_order_copy(ref_call *c)
{
	const ref_tensor *x;
	const int64_t *order;
	size_t n;
	int64_t one;
	int od;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "self", 0, &x));
	ETC_TRY(dtype_arg(c, "dtype", 1, x->dtype, &od));
	ETC_TRY(ref_arg_ints(c, "dim_order", 6, false, &order, &n, &one));
	if (order) {
		bool contiguous = n == x->rank;
		for (size_t k = 0; contiguous && k < n; k++)
			contiguous = order[k] == (int64_t)k;
		if (!contiguous) {
			char s[160];
			return ref_fail(
			    c, ETC_ERR_UNSUPPORTED,
			    "dim_order %s is not the contiguous order of a rank-%u tensor "
			    "(only that order is supported)",
			    ref_shape_str(s, sizeof s, (uint32_t)n, order), x->rank);
		}
	}
	return copy_to(c, x, od);
}
