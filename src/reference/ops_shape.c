/*
 * ops_shape.c - the shape ops: views (view, reshape, permute, transpose, t,
 * expand, squeeze, unsqueeze, slice, select, narrow, flip) materialized as
 * contiguous copies, the splitting ops (split, split_with_sizes, unbind),
 * and the ops that build a new tensor from pieces (cat, stack, repeat,
 * constant_pad_nd). Every dtype; values are copied bit for bit.
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>

/* Output `o` = x seen through (rank, shape, strides, offset). */
static int emit_view(ref_call *c, uint32_t o, const ref_tensor *x, uint32_t rank,
                     const int64_t *shape, const int64_t *strides, int64_t offset)
{
	ETC_TRY(ref_tensor_alloc(&c->outs[o], x->dtype, rank, shape, c->err));
	refb_strided_copy(c->outs[o].data, x->data, refb_elem_size(x->dtype), rank, shape, strides,
	                  offset);
	return 0;
}

static int self_arg(ref_call *c, const ref_tensor **x)
{
	ETC_TRY(refb_tensor(c, "self", 0, x));
	return refb_nouts(c, 1);
}

/* --- reshaping --------------------------------------------------------------- */

static int view_like(ref_call *c, const char *size_name)
{
	const ref_tensor *x;
	int64_t sz[ETC_REF_MAX_RANK];
	size_t n;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	if (!ref_arg_get(c, size_name, 1))
		return ref_fail(c, ETC_ERR_MISMATCH, "argument %s is missing", size_name);
	ETC_TRY(refb_ints(c, size_name, 1, NULL, 0, sz, &n));
	int infer = -1;
	uint64_t known = 1;
	for (size_t d = 0; d < n; d++) {
		if (sz[d] == -1 && infer < 0) {
			infer = (int)d;
		} else if (sz[d] < 0) {
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "shape %s is invalid (size %" PRId64 ")",
			                ref_shape_str(b1, sizeof b1, (uint32_t)n, sz), sz[d]);
		} else {
			known *= (uint64_t)sz[d];
		}
	}
	if (infer >= 0) {
		if (known == 0 || x->numel % known != 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "shape %s is invalid for input %s of %" PRIu64 " elements",
			                ref_shape_str(b1, sizeof b1, (uint32_t)n, sz),
			                ref_shape_str(b2, sizeof b2, x->rank, x->shape), x->numel);
		sz[infer] = (int64_t)(x->numel / known);
		known = x->numel;
	}
	if (known != x->numel)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "shape %s is invalid for input %s of %" PRIu64 " elements",
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, sz),
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape), x->numel);
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, (uint32_t)n, sz, c->err));
	memcpy(c->outs[0].data, x->data, x->numel * refb_elem_size(x->dtype));
	return 0;
}

int ref_op_view(ref_call *c)
{
	return view_like(c, "size");
}

int ref_op_reshape(ref_call *c)
{
	return view_like(c, "shape");
}

int ref_op_permute(ref_call *c)
{
	const ref_tensor *x;
	int64_t dims[ETC_REF_MAX_RANK], st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK],
	    ost[ETC_REF_MAX_RANK];
	size_t n;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_ints(c, "dims", 1, NULL, 0, dims, &n));
	if (n != x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "dims %s has %zu entries, input %s has rank %u (expected equal)",
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, dims), n,
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape), x->rank);
	bool seen[ETC_REF_MAX_RANK] = {false};
	refb_strides(x->rank, x->shape, st);
	for (uint32_t d = 0; d < x->rank; d++) {
		uint32_t k;
		ETC_TRY(refb_dim(c, dims[d], x->rank, "dims entry", &k));
		if (seen[k])
			return ref_fail(c, ETC_ERR_MISMATCH, "dims %s repeats dim %u",
			                ref_shape_str(b1, sizeof b1, (uint32_t)n, dims), k);
		seen[k] = true;
		sh[d] = x->shape[k];
		ost[d] = st[k];
	}
	return emit_view(c, 0, x, x->rank, sh, ost, 0);
}

static int transpose(ref_call *c, const ref_tensor *x, int64_t d0, int64_t d1)
{
	int64_t st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK];
	uint32_t a, b;
	ETC_TRY(refb_dim(c, d0, x->rank, "dim0", &a));
	ETC_TRY(refb_dim(c, d1, x->rank, "dim1", &b));
	refb_strides(x->rank, x->shape, st);
	memcpy(sh, x->shape, x->rank * sizeof *sh);
	if (x->rank > 0) {
		int64_t t = st[a];
		st[a] = st[b];
		st[b] = t;
		sh[a] = x->shape[b];
		sh[b] = x->shape[a];
	}
	return emit_view(c, 0, x, x->rank, sh, st, 0);
}

int ref_op_transpose(ref_call *c)
{
	const ref_tensor *x;
	int64_t d0, d1;
	ETC_TRY(self_arg(c, &x));
	if (!ref_arg_get(c, "dim0", 1) || !ref_arg_get(c, "dim1", 2))
		return ref_fail(c, ETC_ERR_MISMATCH, "arguments dim0 and dim1 are required");
	ETC_TRY(refb_int(c, "dim0", 1, 0, &d0));
	ETC_TRY(refb_int(c, "dim1", 2, 0, &d1));
	return transpose(c, x, d0, d1);
}

int ref_op_t(ref_call *c)
{
	const ref_tensor *x;
	char b[160];
	ETC_TRY(self_arg(c, &x));
	if (x->rank > 2)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a tensor of rank <= 2, given %s",
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	return transpose(c, x, 0, x->rank == 2 ? 1 : 0);
}

bool ref_op_transposes_2d(const ref_call *c, int (*fn)(ref_call *))
{
	/* the argument readers report into an error of their own */
	etc_error scratch = {0};
	ref_call q = *c;
	q.err = &scratch;
	const ref_tensor *x;
	if (refb_tensor(&q, "self", 0, &x) != 0 || x->rank != 2)
		return false;
	int64_t d[ETC_REF_MAX_RANK];
	uint32_t a, b;
	if (fn == ref_op_t)
		return true;
	if (fn == ref_op_transpose) {
		/* both required, as the op itself has them */
		if (!ref_arg_get(&q, "dim0", 1) || !ref_arg_get(&q, "dim1", 2) ||
		    refb_int(&q, "dim0", 1, 0, &d[0]) != 0 ||
		    refb_int(&q, "dim1", 2, 0, &d[1]) != 0)
			return false;
	} else if (fn == ref_op_permute) {
		size_t n;
		if (refb_ints(&q, "dims", 1, NULL, 0, d, &n) != 0 || n != 2)
			return false;
	} else {
		return false;
	}
	if (refb_dim(&q, d[0], 2, "dim", &a) != 0 || refb_dim(&q, d[1], 2, "dim", &b) != 0)
		return false;
	/* transpose(0, 1) and (1, 0) swap; permute([1, 0]) does, [0, 1] does not */
	return fn == ref_op_transpose ? a != b : a == 1 && b == 0;
}

int ref_op_expand(ref_call *c)
{
	const ref_tensor *x;
	int64_t sz[ETC_REF_MAX_RANK], st[ETC_REF_MAX_RANK], ost[ETC_REF_MAX_RANK];
	size_t n;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_ints(c, "size", 1, NULL, 0, sz, &n));
	if (n < x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH, "size %s has fewer dims than the input %s",
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, sz),
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape));
	refb_strides(x->rank, x->shape, st);
	uint32_t lead = (uint32_t)n - x->rank;
	for (uint32_t d = 0; d < n; d++) {
		if (d < lead) {
			if (sz[d] < 0)
				return ref_fail(c, ETC_ERR_MISMATCH,
				                "size %s: a new leading dim cannot be %" PRId64,
				                ref_shape_str(b1, sizeof b1, (uint32_t)n, sz),
				                sz[d]);
			ost[d] = 0;
			continue;
		}
		int64_t have = x->shape[d - lead];
		if (sz[d] == -1)
			sz[d] = have;
		if (sz[d] == have) {
			ost[d] = st[d - lead];
		} else if (have == 1 && sz[d] >= 0) {
			ost[d] = 0;
		} else {
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "input %s cannot be expanded to %s (dim %u: %" PRId64
			                " vs %" PRId64 ")",
			                ref_shape_str(b1, sizeof b1, x->rank, x->shape),
			                ref_shape_str(b2, sizeof b2, (uint32_t)n, sz), d, have,
			                sz[d]);
		}
	}
	return emit_view(c, 0, x, (uint32_t)n, sz, ost, 0);
}

/* Output 0 = x without the dims flagged in `drop` (all of size 1). */
static int squeeze_dims(ref_call *c, const ref_tensor *x, const bool *drop)
{
	int64_t sh[ETC_REF_MAX_RANK];
	uint32_t r = 0;
	for (uint32_t d = 0; d < x->rank; d++)
		if (!(drop[d] && x->shape[d] == 1))
			sh[r++] = x->shape[d];
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, r, sh, c->err));
	memcpy(c->outs[0].data, x->data, x->numel * refb_elem_size(x->dtype));
	return 0;
}

int ref_op_squeeze(ref_call *c)
{
	const ref_tensor *x;
	bool drop[ETC_REF_MAX_RANK];
	ETC_TRY(self_arg(c, &x));
	for (uint32_t d = 0; d < x->rank; d++)
		drop[d] = true;
	return squeeze_dims(c, x, drop);
}

int ref_op_squeeze_dims(ref_call *c)
{
	const ref_tensor *x;
	bool drop[ETC_REF_MAX_RANK] = {false};
	int64_t dims[ETC_REF_MAX_RANK];
	size_t n;
	ETC_TRY(self_arg(c, &x));
	if (!ref_arg_get(c, "dim", 1))
		return ref_fail(c, ETC_ERR_MISMATCH, "argument dim is missing");
	ETC_TRY(refb_ints(c, "dim", 1, NULL, 0, dims, &n));
	for (size_t i = 0; i < n; i++) {
		uint32_t k;
		ETC_TRY(refb_dim(c, dims[i], x->rank, "dim", &k));
		if (x->rank)
			drop[k] = true;
	}
	return squeeze_dims(c, x, drop);
}

int ref_op_unsqueeze(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim, sh[ETC_REF_MAX_RANK];
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	if (!ref_arg_get(c, "dim", 1))
		return ref_fail(c, ETC_ERR_MISMATCH, "argument dim is missing");
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	if (x->rank + 1 > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "rank %u exceeds %d", x->rank + 1,
		                ETC_REF_MAX_RANK);
	ETC_TRY(refb_dim(c, dim, x->rank + 1, "dim", &k));
	for (uint32_t d = 0, s = 0; d <= x->rank; d++)
		sh[d] = d == k ? 1 : x->shape[s++];
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank + 1, sh, c->err));
	memcpy(c->outs[0].data, x->data, x->numel * refb_elem_size(x->dtype));
	return 0;
}

/* --- slicing ----------------------------------------------------------------- */

/* Output `o` = x narrowed to [start, start + len) with `step` along dim k. */
static int emit_slice(ref_call *c, uint32_t o, const ref_tensor *x, uint32_t k, int64_t start,
                      int64_t len, int64_t step)
{
	int64_t st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK];
	refb_strides(x->rank, x->shape, st);
	memcpy(sh, x->shape, x->rank * sizeof *sh);
	sh[k] = len;
	int64_t off = start * st[k];
	st[k] *= step;
	return emit_view(c, o, x, x->rank, sh, st, off);
}

static int need_rank1(const ref_call *c, const ref_tensor *x)
{
	if (x->rank == 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected a tensor of rank >= 1, given a 0-d "
		                "tensor");
	return 0;
}

int ref_op_slice(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim, start, end, step;
	bool has_start, has_end;
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_opt_int(c, "start", 2, &has_start, &start));
	ETC_TRY(refb_opt_int(c, "end", 3, &has_end, &end));
	ETC_TRY(refb_int(c, "step", 4, 1, &step));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	if (step <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "step %" PRId64 " (expected > 0)", step);
	int64_t size = x->shape[k];
	if (!has_start)
		start = 0;
	if (!has_end)
		end = INT64_MAX;
	if (start < 0)
		start += size;
	if (end < 0)
		end += size;
	start = start < 0 ? 0 : (start > size ? size : start);
	end = end < start ? start : (end > size ? size : end);
	int64_t len = end > start ? (end - start - 1) / step + 1 : 0;
	return emit_slice(c, 0, x, k, start, len, step);
}

int ref_op_narrow(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim, start, length;
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_int(c, "start", 2, 0, &start));
	ETC_TRY(refb_int(c, "length", 3, 0, &length));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	int64_t size = x->shape[k];
	if (start < 0)
		start += size;
	if (start < 0 || start > size || length < 0 || length > size - start)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "start %" PRId64 " and length %" PRId64
		                " exceed dim %u of size %" PRId64,
		                start, length, k, size);
	return emit_slice(c, 0, x, k, start, length, 1);
}

/* Output `o` = x[..., index, ...] at dim k (one dim fewer). */
static int emit_select(ref_call *c, uint32_t o, const ref_tensor *x, uint32_t k, int64_t index)
{
	int64_t st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK], ost[ETC_REF_MAX_RANK];
	refb_strides(x->rank, x->shape, st);
	uint32_t r = 0;
	for (uint32_t d = 0; d < x->rank; d++)
		if (d != k) {
			sh[r] = x->shape[d];
			ost[r++] = st[d];
		}
	return emit_view(c, o, x, r, sh, ost, index * st[k]);
}

/* select's and select_scatter's `dim` and `index` (at argument positions
 * pos, pos + 1): the dim resolved, the index checked and made non-negative. */
static int select_args(ref_call *c, const ref_tensor *x, int pos, uint32_t *k, int64_t *index)
{
	int64_t dim;
	ETC_TRY(refb_int(c, "dim", pos, 0, &dim));
	if (!ref_arg_get(c, "index", pos + 1))
		return ref_fail(c, ETC_ERR_MISMATCH, "argument index is missing");
	ETC_TRY(refb_int(c, "index", pos + 1, 0, index));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", k));
	int64_t size = x->shape[*k];
	if (*index < -size || *index >= size)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "index %" PRId64 " is out of range for dim %u of size %" PRId64,
		                *index, *k, size);
	if (*index < 0)
		*index += size;
	return 0;
}

int ref_op_select(ref_call *c)
{
	const ref_tensor *x;
	int64_t index;
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(select_args(c, x, 1, &k, &index));
	return emit_select(c, 0, x, k, index);
}

int ref_op_flip(ref_call *c)
{
	const ref_tensor *x;
	int64_t dims[ETC_REF_MAX_RANK], st[ETC_REF_MAX_RANK];
	size_t n;
	bool seen[ETC_REF_MAX_RANK] = {false};
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_ints(c, "dims", 1, NULL, 0, dims, &n));
	refb_strides(x->rank, x->shape, st);
	int64_t off = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t k;
		ETC_TRY(refb_dim(c, dims[i], x->rank, "dims entry", &k));
		if (seen[k])
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "dim %u appears more than once in dims", k);
		seen[k] = true;
		if (x->rank == 0)
			continue;
		off += (x->shape[k] > 0 ? x->shape[k] - 1 : 0) * st[k];
		st[k] = -st[k];
	}
	return emit_view(c, 0, x, x->rank, x->shape, st, x->numel ? off : 0);
}

/* --- splitting ---------------------------------------------------------------- */

static int split_sizes(ref_call *c, const ref_tensor *x, uint32_t k, const int64_t *sizes, size_t n)
{
	char b1[160], b2[160];
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (sizes[i] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH, "split size %" PRId64 " is negative",
			                sizes[i]);
		/* a sum past the dim can only fail: stop before it can overflow */
		sum += sizes[i] < x->shape[k] ? sizes[i] : x->shape[k] + 1;
	}
	if (sum != x->shape[k])
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "split sizes %s sum to %s%" PRId64 ", dim %u of %s has %" PRId64,
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, sizes),
		                sum > x->shape[k] ? "more than " : "",
		                sum > x->shape[k] ? x->shape[k] : sum, k,
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape), x->shape[k]);
	if (c->nouts != n)
		return ref_fail(c, ETC_ERR_MISMATCH, "the split gives %zu outputs, the graph %u", n,
		                c->nouts);
	int64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		ETC_TRY(emit_slice(c, (uint32_t)i, x, k, at, sizes[i], 1));
		at += sizes[i];
	}
	return 0;
}

int ref_op_split_with_sizes(ref_call *c)
{
	const ref_tensor *x;
	int64_t sizes[ETC_REF_MAX_RANK], dim;
	size_t n;
	uint32_t k;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(need_rank1(c, x));
	const ref_arg *a = ref_arg_get(c, "split_sizes", 1);
	if (!a || a->kind != REF_ARG_INTS)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument split_sizes is not an int list");
	ETC_TRY(refb_int(c, "dim", 2, 0, &dim));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	if (a->n <= ETC_REF_MAX_RANK) {
		ETC_TRY(refb_ints(c, "split_sizes", 1, NULL, 0, sizes, &n));
		return split_sizes(c, x, k, sizes, n);
	}
	/* many pieces: the list itself */
	return split_sizes(c, x, k, a->ints, a->n);
}

int ref_op_split(ref_call *c)
{
	const ref_tensor *x;
	int64_t ss, dim;
	uint32_t k;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(need_rank1(c, x));
	if (!ref_arg_get(c, "split_size", 1))
		return ref_fail(c, ETC_ERR_MISMATCH, "argument split_size is missing");
	ETC_TRY(refb_int(c, "split_size", 1, 0, &ss));
	ETC_TRY(refb_int(c, "dim", 2, 0, &dim));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	int64_t size = x->shape[k];
	if (ss < 0 || (ss == 0 && size != 0))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "split_size %" PRId64 " for dim %u of size %" PRId64, ss, k, size);
	int64_t n = ss && size ? (size - 1) / ss + 1 : 1;
	if (n < 1)
		n = 1;
	if ((uint64_t)n != c->nouts)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "the split gives %" PRId64 " outputs, the graph %u", n, c->nouts);
	for (int64_t i = 0; i < n; i++) {
		int64_t at = i * ss, len = size - at < ss ? size - at : ss;
		ETC_TRY(emit_slice(c, (uint32_t)i, x, k, at, len, 1));
	}
	return 0;
}

int ref_op_unbind(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim;
	uint32_t k;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	if ((uint64_t)x->shape[k] != c->nouts)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "unbind of dim %u gives %" PRId64 " outputs, the graph %u", k,
		                x->shape[k], c->nouts);
	for (int64_t i = 0; i < x->shape[k]; i++)
		ETC_TRY(emit_select(c, (uint32_t)i, x, k, i));
	return 0;
}

/* --- building ------------------------------------------------------------------ */

/*
 * dst[dst_off + i . dst_st] = src[src_off + i . src_st] over `shape`, as
 * dst's dtype (converting when the dtypes differ).
 */
static void copy_region(ref_tensor *dst, const int64_t *dst_st, int64_t dst_off,
                        const ref_tensor *src, const int64_t *src_st, int64_t src_off,
                        uint32_t rank, const int64_t *shape)
{
	for (uint32_t d = 0; d < rank; d++)
		if (shape[d] == 0)
			return;
	int64_t idx[ETC_REF_MAX_RANK] = {0};
	int64_t inner = rank ? shape[rank - 1] : 1;
	int64_t dsi = rank ? dst_st[rank - 1] : 1, ssi = rank ? src_st[rank - 1] : 1;
	bool same = dst->dtype == src->dtype;
	size_t es = refb_elem_size(dst->dtype);
	bool ints = !ref_dtype_is_float(dst->dtype) && !ref_dtype_is_float(src->dtype);
	for (;;) {
		int64_t d0 = dst_off, s0 = src_off;
		for (uint32_t d = 0; d + 1 < rank; d++) {
			d0 += idx[d] * dst_st[d];
			s0 += idx[d] * src_st[d];
		}
		if (same && dsi == 1 && ssi == 1)
			memcpy((char *)dst->data + (size_t)d0 * es,
			       (const char *)src->data + (size_t)s0 * es, (size_t)inner * es);
		else
			for (int64_t i = 0; i < inner; i++) {
				uint64_t di = (uint64_t)(d0 + i * dsi),
				         si = (uint64_t)(s0 + i * ssi);
				if (ints)
					ref_set_i(dst, di, ref_get_i(src, si));
				else
					ref_set_f(dst, di, ref_get_f(src, si));
			}
		if (rank <= 1)
			return;
		uint32_t d = rank - 1;
		for (;;) {
			if (d == 0)
				return;
			d--;
			if (++idx[d] < shape[d])
				break;
			idx[d] = 0;
		}
	}
}

int ref_op_cat(ref_call *c)
{
	const ref_tensor *const *ts;
	size_t n;
	int64_t dim;
	char b1[160], b2[160];
	ETC_TRY(refb_tensors(c, "tensors", 0, false, &ts, &n));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_nouts(c, 1));
	if (n == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a non-empty list of tensors");
	/* torch skips legacy empty 1-D tensors of shape [0] */
	const ref_tensor *ref = NULL;
	int dt = ts[0]->dtype;
	for (size_t i = 0; i < n; i++) {
		dt = i ? refb_promote(dt, ts[i]->dtype, c->float_dtype) : dt;
		bool legacy = ts[i]->rank == 1 && ts[i]->shape[0] == 0;
		if (!legacy && !ref)
			ref = ts[i];
		if (ts[i]->rank == 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "tensor %zu is 0-d (zero-dimensional tensors cannot be "
			                "concatenated)",
			                i);
	}
	if (!ref) {
		int64_t z = 0;
		return ref_tensor_alloc(&c->outs[0], dt, 1, &z, c->err);
	}
	uint32_t k;
	ETC_TRY(refb_dim(c, dim, ref->rank, "dim", &k));
	int64_t sh[ETC_REF_MAX_RANK];
	memcpy(sh, ref->shape, ref->rank * sizeof *sh);
	sh[k] = 0;
	for (size_t i = 0; i < n; i++) {
		const ref_tensor *t = ts[i];
		if (t->rank == 1 && t->shape[0] == 0)
			continue;
		bool ok = t->rank == ref->rank;
		for (uint32_t d = 0; ok && d < t->rank; d++)
			ok = d == k || t->shape[d] == ref->shape[d];
		if (!ok)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "tensor %zu of shape %s does not match %s except in dim %u",
			                i, ref_shape_str(b1, sizeof b1, t->rank, t->shape),
			                ref_shape_str(b2, sizeof b2, ref->rank, ref->shape), k);
		sh[k] += t->shape[k];
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], dt, ref->rank, sh, c->err));
	int64_t ost[ETC_REF_MAX_RANK], ist[ETC_REF_MAX_RANK];
	refb_strides(ref->rank, sh, ost);
	int64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		const ref_tensor *t = ts[i];
		if (t->rank == 1 && t->shape[0] == 0)
			continue;
		refb_strides(t->rank, t->shape, ist);
		copy_region(&c->outs[0], ost, at * ost[k], t, ist, 0, t->rank, t->shape);
		at += t->shape[k];
	}
	return 0;
}

int ref_op_stack(ref_call *c)
{
	const ref_tensor *const *ts;
	size_t n;
	int64_t dim;
	char b1[160], b2[160];
	ETC_TRY(refb_tensors(c, "tensors", 0, false, &ts, &n));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_nouts(c, 1));
	if (n == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a non-empty list of tensors");
	const ref_tensor *ref = ts[0];
	if (ref->rank + 1 > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "rank %u", ref->rank + 1);
	uint32_t k;
	ETC_TRY(refb_dim(c, dim, ref->rank + 1, "dim", &k));
	int dt = ref->dtype;
	for (size_t i = 1; i < n; i++) {
		dt = refb_promote(dt, ts[i]->dtype, c->float_dtype);
		if (ts[i]->rank != ref->rank ||
		    memcmp(ts[i]->shape, ref->shape, ref->rank * sizeof *ref->shape) != 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "tensor %zu of shape %s differs from tensor 0 of shape %s",
			                i, ref_shape_str(b1, sizeof b1, ts[i]->rank, ts[i]->shape),
			                ref_shape_str(b2, sizeof b2, ref->rank, ref->shape));
	}
	int64_t sh[ETC_REF_MAX_RANK], ost[ETC_REF_MAX_RANK], ist[ETC_REF_MAX_RANK + 1],
	    xsh[ETC_REF_MAX_RANK];
	for (uint32_t d = 0, s = 0; d <= ref->rank; d++)
		sh[d] = d == k ? (int64_t)n : ref->shape[s++];
	ETC_TRY(ref_tensor_alloc(&c->outs[0], dt, ref->rank + 1, sh, c->err));
	refb_strides(ref->rank + 1, sh, ost);
	/* each input is the slab [..., 1 (at k), ...] */
	for (uint32_t d = 0, s = 0; d <= ref->rank; d++)
		xsh[d] = d == k ? 1 : ref->shape[s++];
	refb_strides(ref->rank + 1, xsh, ist);
	for (size_t i = 0; i < n; i++)
		copy_region(&c->outs[0], ost, (int64_t)i * ost[k], ts[i], ist, 0, ref->rank + 1,
		            xsh);
	return 0;
}

int ref_op_repeat(ref_call *c)
{
	const ref_tensor *x;
	int64_t rep[ETC_REF_MAX_RANK];
	size_t n;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_ints(c, "repeats", 1, NULL, 0, rep, &n));
	if (n < x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH, "repeats %s has fewer dims than the input %s",
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, rep),
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape));
	int64_t xs[ETC_REF_MAX_RANK], st[ETC_REF_MAX_RANK], osh[ETC_REF_MAX_RANK];
	int64_t vsh[2 * ETC_REF_MAX_RANK], vst[2 * ETC_REF_MAX_RANK];
	uint32_t lead = (uint32_t)n - x->rank;
	for (uint32_t d = 0; d < n; d++)
		xs[d] = d < lead ? 1 : x->shape[d - lead];
	refb_strides((uint32_t)n, xs, st);
	for (uint32_t d = 0; d < n; d++) {
		if (rep[d] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH, "repeats %s has a negative entry",
			                ref_shape_str(b1, sizeof b1, (uint32_t)n, rep));
		if (xs[d] && rep[d] > ETC_REF_SIZE_MAX / xs[d])
			return ref_fail(c, ETC_ERR_LIMIT, "repeats %s make dim %u too large",
			                ref_shape_str(b1, sizeof b1, (uint32_t)n, rep), d);
		osh[d] = xs[d] * rep[d];
		/* [r0, s0, r1, s1, ...]: the repeat index outside each input dim */
		vsh[2 * d] = rep[d];
		vst[2 * d] = 0;
		vsh[2 * d + 1] = xs[d];
		vst[2 * d + 1] = st[d];
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, (uint32_t)n, osh, c->err));
	refb_strided_copy(c->outs[0].data, x->data, refb_elem_size(x->dtype), 2 * (uint32_t)n, vsh,
	                  vst, 0);
	return 0;
}

int ref_op_constant_pad_nd(ref_call *c)
{
	const ref_tensor *x;
	int64_t pad[ETC_REF_MAX_RANK];
	size_t n;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	const ref_arg *pa = ref_arg_get(c, "pad", 1);
	if (!pa)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument pad is missing");
	if (pa->kind == REF_ARG_INTS && pa->n > 2 * (size_t)x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "pad of %zu entries is longer than twice the rank of the input %s",
		                pa->n, ref_shape_str(b1, sizeof b1, x->rank, x->shape));
	ETC_TRY(refb_ints(c, "pad", 1, NULL, 0, pad, &n));
	if (n % 2 != 0 || n > 2 * (size_t)x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "pad %s must have an even length of at most twice the rank of %s",
		                ref_shape_str(b1, sizeof b1, (uint32_t)n, pad),
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape));
	const ref_arg *va = ref_arg_get(c, "value", 2);
	double value = 0;
	ETC_TRY(refb_scalar(c, "value", 2, 0.0, &value));
	int64_t osh[ETC_REF_MAX_RANK], rsh[ETC_REF_MAX_RANK];
	int64_t so[ETC_REF_MAX_RANK], dof[ETC_REF_MAX_RANK];
	for (uint32_t d = 0; d < x->rank; d++) {
		int64_t pl = 0, pr = 0;
		uint32_t from_last = x->rank - 1 - d;
		if (2 * (size_t)from_last < n) {
			pl = pad[2 * from_last];
			pr = pad[2 * from_last + 1];
		}
		if (pl < -ETC_REF_SIZE_MAX || pl > ETC_REF_SIZE_MAX || pr < -ETC_REF_SIZE_MAX ||
		    pr > ETC_REF_SIZE_MAX)
			return ref_fail(c, ETC_ERR_LIMIT,
			                "padding [%" PRId64 ", %" PRId64 "] is too large", pl, pr);
		osh[d] = x->shape[d] + pl + pr;
		if (osh[d] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "padding [%" PRId64 ", %" PRId64
			                "] makes dim %u of %s negative",
			                pl, pr, d, ref_shape_str(b1, sizeof b1, x->rank, x->shape));
		so[d] = pl < 0 ? -pl : 0;
		dof[d] = pl > 0 ? pl : 0;
		int64_t len = x->shape[d] - so[d];
		if (len > osh[d] - dof[d])
			len = osh[d] - dof[d];
		rsh[d] = len > 0 ? len : 0;
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, osh, c->err));
	ref_tensor *y = &c->outs[0];
	if (y->numel) {
		if (va && va->kind == REF_ARG_INT && !ref_dtype_is_float(y->dtype))
			ref_set_i(y, 0, va->i);
		else
			ref_set_f(y, 0, value);
		size_t es = refb_elem_size(y->dtype);
		for (uint64_t i = 1; i < y->numel; i++)
			memcpy((char *)y->data + i * es, y->data, es);
	}
	int64_t ist[ETC_REF_MAX_RANK], ost[ETC_REF_MAX_RANK], ioff = 0, ooff = 0;
	refb_strides(x->rank, x->shape, ist);
	refb_strides(x->rank, osh, ost);
	for (uint32_t d = 0; d < x->rank; d++) {
		ioff += so[d] * ist[d];
		ooff += dof[d] * ost[d];
	}
	copy_region(y, ost, ooff, x, ist, ioff, x->rank, rsh);
	return 0;
}

/* --- scatters and other rearrangements ----------------------------------------- */

/* Output 0 = a copy of self with the view (rank, shape, strides, offset) of
 * it replaced by src (of exactly that shape). */
static int scatter_view(ref_call *c, const ref_tensor *x, const ref_tensor *src, uint32_t rank,
                        const int64_t *shape, const int64_t *strides, int64_t offset)
{
	char b1[160], b2[160];
	if (src->rank != rank || memcmp(src->shape, shape, rank * sizeof *shape) != 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "src %s does not have the shape %s of the slice",
		                ref_shape_str(b1, sizeof b1, src->rank, src->shape),
		                ref_shape_str(b2, sizeof b2, rank, shape));
	if (ref_dtype_is_float(x->dtype) != ref_dtype_is_float(src->dtype) ||
	    (!ref_dtype_is_float(x->dtype) && x->dtype != src->dtype))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "src of dtype %s for self of dtype %s (expected the same)",
		                etc_scalar_type_name(src->dtype), etc_scalar_type_name(x->dtype));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, x->shape, c->err));
	memcpy(c->outs[0].data, x->data, x->numel * refb_elem_size(x->dtype));
	int64_t sst[ETC_REF_MAX_RANK];
	refb_strides(rank, shape, sst);
	copy_region(&c->outs[0], strides, offset, src, sst, 0, rank, shape);
	return 0;
}

int ref_op_slice_scatter(ref_call *c)
{
	const ref_tensor *x, *src;
	int64_t dim, start, end, step, st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK];
	bool has_start, has_end;
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_tensor(c, "src", 1, &src));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(refb_int(c, "dim", 2, 0, &dim));
	ETC_TRY(refb_opt_int(c, "start", 3, &has_start, &start));
	ETC_TRY(refb_opt_int(c, "end", 4, &has_end, &end));
	ETC_TRY(refb_int(c, "step", 5, 1, &step));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	if (step <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "step %" PRId64 " (expected > 0)", step);
	int64_t size = x->shape[k];
	start = has_start ? start : 0;
	end = has_end ? end : INT64_MAX;
	if (start < 0)
		start += size;
	if (end < 0)
		end += size;
	start = start < 0 ? 0 : (start > size ? size : start);
	end = end < start ? start : (end > size ? size : end);
	refb_strides(x->rank, x->shape, st);
	memcpy(sh, x->shape, x->rank * sizeof *sh);
	sh[k] = end > start ? (end - start - 1) / step + 1 : 0;
	int64_t off = start * st[k];
	st[k] *= step;
	return scatter_view(c, x, src, x->rank, sh, st, off);
}

int ref_op_select_scatter(ref_call *c)
{
	const ref_tensor *x, *src;
	int64_t index, st[ETC_REF_MAX_RANK], sh[ETC_REF_MAX_RANK], ost[ETC_REF_MAX_RANK];
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_tensor(c, "src", 1, &src));
	ETC_TRY(need_rank1(c, x));
	ETC_TRY(select_args(c, x, 2, &k, &index));
	refb_strides(x->rank, x->shape, st);
	uint32_t r = 0;
	for (uint32_t d = 0; d < x->rank; d++)
		if (d != k) {
			sh[r] = x->shape[d];
			ost[r++] = st[d];
		}
	return scatter_view(c, x, src, r, sh, ost, index * st[k]);
}

/* pixel_shuffle (up) and pixel_unshuffle: [*, C r r, H, W] <-> [*, C, H r, W r]. */
static int pixel_shuffle(ref_call *c, bool up)
{
	const ref_tensor *x;
	int64_t r;
	char b[160];
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_int(c, up ? "upscale_factor" : "downscale_factor", 1, 0, &r));
	uint32_t n = x->rank;
	if (n < 3 || n + 3 > 2 * ETC_REF_MAX_RANK || r <= 0)
		return ref_fail(
		    c, ETC_ERR_MISMATCH,
		    "expected an input of rank >= 3 and a factor > 0, given %s and %" PRId64,
		    ref_shape_str(b, sizeof b, x->rank, x->shape), r);
	int64_t C = x->shape[n - 3], H = x->shape[n - 2], W = x->shape[n - 1];
	if (up ? r > C || C % (r * r) != 0 : (H % r != 0 || W % r != 0))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input %s is not divisible by the factor %" PRId64,
		                ref_shape_str(b, sizeof b, x->rank, x->shape), r);
	int64_t osh[ETC_REF_MAX_RANK], vsh[2 * ETC_REF_MAX_RANK], vst[2 * ETC_REF_MAX_RANK];
	uint32_t lead = n - 3;
	int64_t plane = C * H * W;
	for (uint32_t d = 0; d < lead; d++) {
		osh[d] = x->shape[d];
		vsh[d] = x->shape[d];
	}
	refb_strides(lead, x->shape, vst);
	for (uint32_t d = 0; d < lead; d++)
		vst[d] *= plane;
	int64_t *s = vsh + lead, *t = vst + lead;
	if (up) {
		/* input [c, i, j, h, w] -> output [c, h, i, w, j] */
		int64_t c0 = C / (r * r);
		osh[lead] = c0, osh[lead + 1] = H * r, osh[lead + 2] = W * r;
		s[0] = c0, t[0] = r * r * H * W;
		s[1] = H, t[1] = W;
		s[2] = r, t[2] = r * H * W;
		s[3] = W, t[3] = 1;
		s[4] = r, t[4] = H * W;
	} else {
		/* input [c, h, i, w, j] -> output [c, i, j, h, w] */
		int64_t h0 = H / r, w0 = W / r;
		osh[lead] = C * r * r, osh[lead + 1] = h0, osh[lead + 2] = w0;
		s[0] = C, t[0] = H * W;
		s[1] = r, t[1] = W;
		s[2] = r, t[2] = 1;
		s[3] = h0, t[3] = r * W;
		s[4] = w0, t[4] = r;
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, n, osh, c->err));
	refb_strided_copy(c->outs[0].data, x->data, refb_elem_size(x->dtype), lead + 5, vsh, vst,
	                  0);
	return 0;
}

int ref_op_pixel_shuffle(ref_call *c)
{
	return pixel_shuffle(c, true);
}

int ref_op_pixel_unshuffle(ref_call *c)
{
	return pixel_shuffle(c, false);
}

int ref_op_roll(ref_call *c)
{
	const ref_tensor *x;
	int64_t shifts[ETC_REF_MAX_RANK], dims[ETC_REF_MAX_RANK];
	size_t ns, nd;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_ints(c, "shifts", 1, NULL, 0, shifts, &ns));
	ETC_TRY(refb_ints(c, "dims", 2, NULL, 0, dims, &nd));
	if (nd == 0 && ns == 1) {
		/* the flattened tensor, rolled */
		ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, x->shape, c->err));
		size_t es = refb_elem_size(x->dtype);
		int64_t n = (int64_t)x->numel;
		if (n == 0)
			return 0;
		int64_t sft = ((shifts[0] % n) + n) % n;
		memcpy((char *)c->outs[0].data + (size_t)sft * es, x->data, (size_t)(n - sft) * es);
		memcpy(c->outs[0].data, (const char *)x->data + (size_t)(n - sft) * es,
		       (size_t)sft * es);
		return 0;
	}
	if (nd > 0)
		ETC_TRY(need_rank1(c, x));
	if (ns != nd)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "shifts has %zu entries and dims %zu (expected equal)", ns, nd);
	/* out[i] = x[(i - shift) mod size] per dim: one rolled copy per dim */
	ref_tensor cur = *x;
	cur.borrowed = true;
	ref_tensor next = {0};
	int64_t st[ETC_REF_MAX_RANK];
	refb_strides(x->rank, x->shape, st);
	size_t es = refb_elem_size(x->dtype);
	for (size_t i = 0; i < nd; i++) {
		uint32_t k;
		int rc = refb_dim(c, dims[i], x->rank, "dims entry", &k);
		if (rc == 0)
			rc = ref_tensor_alloc(&next, x->dtype, x->rank, x->shape, c->err);
		if (rc < 0) {
			ref_tensor_free(&cur);
			return rc;
		}
		int64_t size = x->shape[k];
		int64_t sft = size ? ((shifts[i] % size) + size) % size : 0;
		uint64_t outer = x->numel && size ? x->numel / (uint64_t)(size * st[k]) : 0;
		size_t blk = (size_t)st[k] * es;
		for (uint64_t o = 0; o < outer; o++) {
			const char *src = (const char *)cur.data + o * (uint64_t)size * blk;
			char *dst = (char *)next.data + o * (uint64_t)size * blk;
			memcpy(dst + (size_t)sft * blk, src, (size_t)(size - sft) * blk);
			memcpy(dst, src + (size_t)(size - sft) * blk, (size_t)sft * blk);
		}
		ref_tensor_free(&cur);
		cur = next;
		memset(&next, 0, sizeof next);
	}
	if (nd == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "shifts and dims are empty");
	c->outs[0] = cur;
	return 0;
}

int ref_op_as_strided(ref_call *c)
{
	const ref_tensor *x;
	int64_t size[ETC_REF_MAX_RANK], stride[ETC_REF_MAX_RANK], off;
	size_t ns, nt;
	bool has_off;
	char b1[160], b2[160];
	ETC_TRY(self_arg(c, &x));
	if (!ref_arg_get(c, "size", 1) || !ref_arg_get(c, "stride", 2))
		return ref_fail(c, ETC_ERR_MISMATCH, "arguments size and stride are required");
	ETC_TRY(refb_ints(c, "size", 1, NULL, 0, size, &ns));
	ETC_TRY(refb_ints(c, "stride", 2, NULL, 0, stride, &nt));
	ETC_TRY(refb_opt_int(c, "storage_offset", 3, &has_off, &off));
	if (!has_off)
		off = 0;
	if (ns != nt)
		return ref_fail(c, ETC_ERR_MISMATCH, "size %s and stride %s differ in length",
		                ref_shape_str(b1, sizeof b1, (uint32_t)ns, size),
		                ref_shape_str(b2, sizeof b2, (uint32_t)nt, stride));
	/* every element read must lie inside self's elements */
	int64_t last = off;
	bool empty = false;
	for (size_t d = 0; d < ns; d++) {
		if (size[d] < 0 || stride[d] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "size %s and stride %s must not be negative",
			                ref_shape_str(b1, sizeof b1, (uint32_t)ns, size),
			                ref_shape_str(b2, sizeof b2, (uint32_t)nt, stride));
		empty = empty || size[d] == 0;
		if (size[d] > ETC_REF_SIZE_MAX || stride[d] > ETC_REF_SIZE_MAX ||
		    off > ETC_REF_SIZE_MAX)
			return ref_fail(c, ETC_ERR_LIMIT,
			                "size %s, stride %s or offset is too large",
			                ref_shape_str(b1, sizeof b1, (uint32_t)ns, size),
			                ref_shape_str(b2, sizeof b2, (uint32_t)nt, stride));
		/* both <= 2^40: the product is checked in double before it is formed */
		if (size[d] > 0 && (double)(size[d] - 1) * (double)stride[d] + (double)last >
		                       (double)ETC_REF_SIZE_MAX)
			return ref_fail(c, ETC_ERR_LIMIT, "size %s and stride %s reach too far",
			                ref_shape_str(b1, sizeof b1, (uint32_t)ns, size),
			                ref_shape_str(b2, sizeof b2, (uint32_t)nt, stride));
		if (size[d] > 0)
			last += (size[d] - 1) * stride[d];
	}
	if (off < 0 || (!empty && (uint64_t)last >= x->numel))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "size %s, stride %s and offset %" PRId64 " reach element %" PRId64
		                " of a %" PRIu64 "-element input %s",
		                ref_shape_str(b1, sizeof b1, (uint32_t)ns, size),
		                ref_shape_str(b2, sizeof b2, (uint32_t)nt, stride), off, last,
		                x->numel, ref_shape_str(b2, sizeof b2, x->rank, x->shape));
	return emit_view(c, 0, x, (uint32_t)ns, size, stride, empty ? 0 : off);
}

int ref_op_unfold(ref_call *c)
{
	const ref_tensor *x;
	int64_t dim, size, step, st[ETC_REF_MAX_RANK + 1], sh[ETC_REF_MAX_RANK + 1];
	uint32_t k;
	ETC_TRY(self_arg(c, &x));
	ETC_TRY(refb_int(c, "dimension", 1, 0, &dim));
	ETC_TRY(refb_int(c, "size", 2, 0, &size));
	ETC_TRY(refb_int(c, "step", 3, 1, &step));
	ETC_TRY(refb_dim(c, dim, x->rank, "dimension", &k));
	if (x->rank + 1 > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "rank %u", x->rank + 1);
	int64_t n = x->rank ? x->shape[k] : 1;
	if (size < 0 || size > n || step <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "size %" PRId64 " and step %" PRId64 " for dim %u of size %" PRId64
		                " (expected 0 <= size <= %" PRId64 ", step > 0)",
		                size, step, k, n, n);
	refb_strides(x->rank, x->shape, st);
	memcpy(sh, x->shape, x->rank * sizeof *sh);
	int64_t inner = x->rank ? st[k] : 1;
	if (x->rank) {
		sh[k] = (n - size) / step + 1;
		st[k] *= step;
	}
	sh[x->rank] = size;
	st[x->rank] = inner;
	return emit_view(c, 0, x, x->rank + 1, sh, st, 0);
}
