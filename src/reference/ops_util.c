/*
 * ops_util.c - argument readers, torch's type promotion, dim
 * normalization, broadcasting and reduction iteration for the op library.
 */
#include "reference/ops_util.h"

#include <inttypes.h>
#include <stdlib.h>

static int wrong_kind(const ref_call *c, const char *name, const char *want, const ref_arg *a)
{
	return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected %s, got %s", name, want,
	                ref_arg_kind_name(a->kind));
}

static int missing(const ref_call *c, const char *name, const char *want)
{
	return ref_fail(c, ETC_ERR_MISMATCH, "argument %s: expected %s, got none", name, want);
}

int ref_arg_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **t)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a)
		return missing(c, name, "a tensor");
	if (a->kind != REF_ARG_TENSOR || !a->t)
		return wrong_kind(c, name, "a tensor", a);
	*t = a->t;
	return 0;
}

int ref_arg_opt_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **t)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*t = NULL;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_TENSOR || !a->t)
		return wrong_kind(c, name, "a tensor or None", a);
	*t = a->t;
	return 0;
}

int ref_arg_int(const ref_call *c, const char *name, int pos, int64_t *v)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a)
		return missing(c, name, "an int");
	if (a->kind != REF_ARG_INT && a->kind != REF_ARG_BOOL)
		return wrong_kind(c, name, "an int", a);
	*v = a->i;
	return 0;
}

int ref_arg_int_or(const ref_call *c, const char *name, int pos, int64_t def, int64_t *v)
{
	if (!ref_arg_get(c, name, pos)) {
		*v = def;
		return 0;
	}
	return ref_arg_int(c, name, pos, v);
}

int ref_arg_float(const ref_call *c, const char *name, int pos, double *v)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a)
		return missing(c, name, "a float");
	if (a->kind == REF_ARG_FLOAT)
		*v = a->f;
	else if (a->kind == REF_ARG_INT || a->kind == REF_ARG_BOOL)
		*v = (double)a->i;
	else
		return wrong_kind(c, name, "a float", a);
	return 0;
}

int ref_arg_float_or(const ref_call *c, const char *name, int pos, double def, double *v)
{
	if (!ref_arg_get(c, name, pos)) {
		*v = def;
		return 0;
	}
	return ref_arg_float(c, name, pos, v);
}

int ref_arg_bool_or(const ref_call *c, const char *name, int pos, bool def, bool *v)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a) {
		*v = def;
		return 0;
	}
	if (a->kind != REF_ARG_BOOL && a->kind != REF_ARG_INT)
		return wrong_kind(c, name, "a bool", a);
	*v = a->i != 0;
	return 0;
}

int ref_arg_string_or(const ref_call *c, const char *name, int pos, const char *def, const char **v)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	if (!a) {
		*v = def;
		return 0;
	}
	if (a->kind != REF_ARG_STRING || !a->s)
		return wrong_kind(c, name, "a string", a);
	*v = a->s;
	return 0;
}

int ref_arg_dtype_or_none(const ref_call *c, const char *name, int pos, int *dtype)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*dtype = -1;
	if (!a)
		return 0;
	if (a->kind != REF_ARG_DTYPE)
		return wrong_kind(c, name, "a dtype", a);
	if (!ref_dtype_supported((int)a->i) && a->i != ETC_HALF && a->i != ETC_BFLOAT16)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "argument %s: dtype %s is not supported",
		                name, etc_scalar_type_name((int)a->i));
	*dtype = (int)a->i;
	return 0;
}

int ref_arg_ints(const ref_call *c, const char *name, int pos, bool required, const int64_t **v,
                 size_t *n, int64_t *one)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*v = NULL;
	*n = 0;
	if (!a)
		return required ? missing(c, name, "an int list") : 0;
	if (a->kind == REF_ARG_INTS) {
		*v = a->ints;
		*n = a->n;
	} else if (a->kind == REF_ARG_INT) {
		*one = a->i;
		*v = one;
		*n = 1;
	} else {
		return wrong_kind(c, name, "an int list", a);
	}
	return 0;
}

int ref_arg_scalar(const ref_call *c, const char *name, int pos, ref_scalar *s)
{
	bool present;
	ETC_TRY(ref_arg_opt_scalar(c, name, pos, s, &present));
	return present ? 0 : missing(c, name, "a number");
}

int ref_arg_opt_scalar(const ref_call *c, const char *name, int pos, ref_scalar *s, bool *present)
{
	const ref_arg *a = ref_arg_get(c, name, pos);
	*present = a != NULL;
	memset(s, 0, sizeof *s);
	if (!a)
		return 0;
	switch (a->kind) {
	case REF_ARG_BOOL:
		s->kind = REF_KIND_BOOL;
		s->i = a->i != 0;
		s->f = (double)s->i;
		return 0;
	case REF_ARG_INT:
		s->kind = REF_KIND_INT;
		s->i = a->i;
		s->f = (double)a->i;
		return 0;
	case REF_ARG_FLOAT:
		s->kind = REF_KIND_FLOAT;
		s->f = a->f;
		return 0;
	default:
		return wrong_kind(c, name, "a number", a);
	}
}

int ref_check_nouts(const ref_call *c, uint32_t n)
{
	if (c->nouts != n)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected %u output%s, the graph has %u", n,
		                n == 1 ? "" : "s", c->nouts);
	return 0;
}

int ref_dtype_kind(int dtype)
{
	if (dtype == ETC_BOOL)
		return REF_KIND_BOOL;
	if (ref_dtype_is_float(dtype) || dtype == ETC_HALF || dtype == ETC_BFLOAT16)
		return REF_KIND_FLOAT;
	return REF_KIND_INT;
}

/* Bits of an integer dtype; uint8 is the one unsigned. */
static int int_bits(int dtype)
{
	switch (dtype) {
	case ETC_BYTE:
	case ETC_CHAR:
		return 8;
	case ETC_SHORT:
		return 16;
	case ETC_INT:
		return 32;
	default:
		return 64;
	}
}

int ref_promote_ints(int a, int b)
{
	if (a == b)
		return a;
	if (a == ETC_BOOL)
		return b;
	if (b == ETC_BOOL)
		return a;
	if (a == ETC_BYTE || b == ETC_BYTE) {
		int other = a == ETC_BYTE ? b : a;
		/* uint8 with a signed type: the signed type, at least int16. */
		return int_bits(other) <= 8 ? ETC_SHORT : other;
	}
	return int_bits(a) >= int_bits(b) ? a : b;
}

int ref_hold_dtype(const ref_call *c, int dtype)
{
	return ref_dtype_kind(dtype) == REF_KIND_FLOAT ? c->float_dtype : dtype;
}

int ref_result_dtype(const ref_call *c, const ref_tensor *const *ts, size_t nt,
                     const ref_scalar *ss, size_t ns)
{
	/* One (kind, dtype) per priority group: dimensioned, zero-dim, scalars. */
	int kind[3] = {-1, -1, -1}, dtype[3] = {-1, -1, -1};
	for (size_t i = 0; i < nt; i++) {
		int g = ts[i]->rank ? 0 : 1;
		int k = ref_dtype_kind(ts[i]->dtype);
		int d = k == REF_KIND_FLOAT ? c->float_dtype : ts[i]->dtype;
		if (dtype[g] < 0)
			dtype[g] = d;
		else if (k == REF_KIND_FLOAT || kind[g] == REF_KIND_FLOAT)
			dtype[g] = c->float_dtype;
		else
			dtype[g] = ref_promote_ints(dtype[g], d);
		if (k > kind[g])
			kind[g] = k;
	}
	for (size_t i = 0; i < ns; i++) {
		int k = ss[i].kind;
		int d = k == REF_KIND_FLOAT ? c->float_dtype
		        : k == REF_KIND_INT ? ETC_LONG
		                            : ETC_BOOL;
		if (k > kind[2]) {
			kind[2] = k;
			dtype[2] = d;
		}
	}
	int rk = -1, rd = ETC_BOOL;
	for (int g = 0; g < 3; g++) {
		if (kind[g] > rk) {
			rk = kind[g];
			rd = dtype[g];
		}
	}
	return rd;
}

int ref_norm_dim(const ref_call *c, int64_t dim, uint32_t rank, uint32_t *out)
{
	int64_t r = rank ? (int64_t)rank : 1;
	if (dim < -r || dim >= r)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "dim %" PRId64 " is out of range for a tensor of rank %u (expected "
		                "[%" PRId64 ", %" PRId64 "])",
		                dim, rank, -r, r - 1);
	*out = (uint32_t)(dim < 0 ? dim + r : dim);
	return 0;
}

int ref_bcast_init(ref_bcast *b, const ref_call *c, const ref_tensor *const *ts, size_t n)
{
	memset(b, 0, sizeof *b);
	b->n = n;
	for (size_t k = 0; k < n; k++)
		if (ts[k]->rank > b->rank)
			b->rank = ts[k]->rank;
	for (uint32_t d = 0; d < b->rank; d++)
		b->shape[d] = 1;
	for (size_t k = 0; k < n; k++) {
		uint32_t lead = b->rank - ts[k]->rank;
		for (uint32_t d = 0; d < ts[k]->rank; d++) {
			int64_t s = ts[k]->shape[d], *o = &b->shape[lead + d];
			if (s == *o || s == 1)
				continue;
			if (*o == 1) {
				*o = s;
				continue;
			}
			char sa[160], sb[160];
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "shapes %s and %s do not broadcast (dim %u: %" PRId64
			                " vs %" PRId64 ")",
			                ref_shape_str(sa, sizeof sa, ts[0]->rank, ts[0]->shape),
			                ref_shape_str(sb, sizeof sb, ts[k]->rank, ts[k]->shape),
			                lead + d, *o, s);
		}
	}
	b->numel = 1;
	for (uint32_t d = 0; d < b->rank; d++)
		b->numel *= (uint64_t)b->shape[d];
	for (size_t k = 0; k < n; k++) {
		uint32_t lead = b->rank - ts[k]->rank;
		int64_t st = 1;
		for (uint32_t d = ts[k]->rank; d-- > 0;) {
			b->stride[k][lead + d] = ts[k]->shape[d] == 1 ? 0 : st;
			st *= ts[k]->shape[d];
		}
	}
	return 0;
}

void ref_bcast_next(ref_bcast *b)
{
	for (uint32_t d = b->rank; d-- > 0;) {
		for (size_t k = 0; k < b->n; k++)
			b->off[k] += (uint64_t)b->stride[k][d];
		if (++b->idx[d] < b->shape[d])
			return;
		for (size_t k = 0; k < b->n; k++)
			b->off[k] -= (uint64_t)(b->stride[k][d] * b->shape[d]);
		b->idx[d] = 0;
	}
}

static uint64_t reduced_offset(const ref_reduce *r, uint64_t k)
{
	int64_t off = 0;
	for (uint32_t j = r->nred; j-- > 0;) {
		off += (int64_t)(k % (uint64_t)r->red_size[j]) * r->red_stride[j];
		k /= (uint64_t)r->red_size[j];
	}
	return (uint64_t)off;
}

int ref_reduce_init(ref_reduce *r, const ref_call *c, const ref_tensor *x, const int64_t *dims,
                    size_t n, bool keepdim)
{
	bool red[ETC_REF_MAX_RANK] = {false};
	memset(r, 0, sizeof *r);
	for (size_t i = 0; i < n; i++) {
		uint32_t d = 0;
		ETC_TRY(ref_norm_dim(c, dims[i], x->rank, &d));
		if (x->rank == 0)
			continue;
		if (red[d])
			return ref_fail(c, ETC_ERR_MISMATCH, "dim %u appears twice in the dim list",
			                d);
		red[d] = true;
	}
	if (n == 0)
		for (uint32_t d = 0; d < x->rank; d++)
			red[d] = true;
	int64_t stride[ETC_REF_MAX_RANK];
	int64_t st = 1;
	for (uint32_t d = x->rank; d-- > 0;) {
		stride[d] = st;
		st *= x->shape[d];
	}
	r->outer = 1;
	r->inner = 1;
	for (uint32_t d = 0; d < x->rank; d++) {
		if (red[d]) {
			r->red_size[r->nred] = x->shape[d];
			r->red_stride[r->nred++] = stride[d];
			r->inner *= (uint64_t)x->shape[d];
			if (keepdim)
				r->out_shape[r->out_rank++] = 1;
		} else {
			r->kept_size[r->nkept] = x->shape[d];
			r->kept_stride[r->nkept++] = stride[d];
			r->outer *= (uint64_t)x->shape[d];
			r->out_shape[r->out_rank++] = x->shape[d];
		}
	}
	/* Offsets precomputed once when they fit in a few MB; else on the fly. */
	if (r->inner > ((uint64_t)1 << 19) || r->outer == 0)
		return 0;
	r->roff = malloc((r->inner ? r->inner : 1) * sizeof *r->roff);
	if (!r->roff)
		return etc_fail(c->err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (uint64_t k = 0; k < r->inner; k++)
		r->roff[k] = (int64_t)reduced_offset(r, k);
	return 0;
}

uint64_t ref_reduce_at(const ref_reduce *r, uint64_t k)
{
	return r->roff ? (uint64_t)r->roff[k] : reduced_offset(r, k);
}

uint64_t ref_reduce_base(const ref_reduce *r, uint64_t o)
{
	int64_t off = 0;
	for (uint32_t j = r->nkept; j-- > 0;) {
		off += (int64_t)(o % (uint64_t)r->kept_size[j]) * r->kept_stride[j];
		o /= (uint64_t)r->kept_size[j];
	}
	return (uint64_t)off;
}

void ref_reduce_free(ref_reduce *r)
{
	free(r->roff);
	r->roff = NULL;
}
