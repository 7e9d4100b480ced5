/*
 * ops_linalg.c - matrix products (mm, addmm, bmm, baddbmm, linear, matmul,
 * mv, dot) and scaled dot-product attention: floats through OpenBLAS in the
 * reference dtype, integers exactly (refb_gemm).
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* Two operands of a product in one dtype (floats converted to the
 * reference dtype when they are not already in it). */
typedef struct operands {
	int dtype;
	const ref_tensor *x[3];
	ref_tensor tmp[3];
	int n;
} operands;

static void operands_free(operands *o)
{
	for (int i = 0; i < o->n; i++)
		ref_tensor_free(&o->tmp[i]);
}

/* A float32 operand B of a float64 product larger than this is widened
 * in blocks of columns of this size (gemm_b), not whole. */
#define WIDEN_BLOCK_BYTES ((size_t)256 << 10)

bool ref_op_blocks_b(int float_dtype, const ref_tensor *b)
{
	return float_dtype == ETC_DOUBLE && b->dtype == ETC_FLOAT &&
	       b->numel * sizeof(double) > WIDEN_BLOCK_BYTES;
}

/* B (float32, in a float64 product) is widened by blocks (gemm_b). */
static bool blocked_b(const ref_call *c, const ref_tensor *b)
{
	return ref_op_blocks_b(c->float_dtype, b);
}

/* Checks that the n tensors share one dtype family (all float, or all the
 * same integer dtype) and fills o. Operand `keep` (-1: none) is left
 * float32 when blocked_b says so. */
static int operands_init_keep(const ref_call *c, operands *o, int n, const ref_tensor *const *ts,
                              const char *const *names, int keep)
{
	memset(o, 0, sizeof *o);
	bool fl = ref_dtype_is_float(ts[0]->dtype);
	for (int i = 1; i < n; i++) {
		bool ok = fl ? ref_dtype_is_float(ts[i]->dtype) : ts[i]->dtype == ts[0]->dtype;
		if (!ok)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "expected %s of dtype %s like %s, given %s", names[i],
			                etc_scalar_type_name(ts[0]->dtype), names[0],
			                etc_scalar_type_name(ts[i]->dtype));
	}
	if (ts[0]->dtype == ETC_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "matrix products of bool tensors (%s)",
		                names[0]);
	o->dtype = fl ? c->float_dtype : ts[0]->dtype;
	for (int i = 0; i < n; i++) {
		o->n = i + 1;
		if (fl && i == keep && blocked_b(c, ts[i])) {
			o->x[i] = ts[i];
		} else if (ts[i]->transposed) { /* (the runner only hands over blocked ones) */
			int rc = ref_tensor_dense(&o->tmp[i], ts[i], c->float_dtype, &c->release,
			                          c->err);
			if (rc < 0) {
				operands_free(o);
				return rc;
			}
			o->x[i] = &o->tmp[i];
		} else if (fl) {
			int rc = refb_as_float(c, ts[i], &o->tmp[i], &o->x[i]);
			if (rc < 0) {
				operands_free(o);
				return rc;
			}
		} else {
			o->x[i] = ts[i];
		}
	}
	return 0;
}

static int operands_init(const ref_call *c, operands *o, int n, const ref_tensor *const *ts,
                         const char *const *names)
{
	return operands_init_keep(c, o, n, ts, names, -1);
}

/* dst[0..count) = the float32 values at src (read with memcpy: any
 * alignment), through an aligned buffer so that the loop vectorizes. */
static void widen_floats(double *dst, const char *src, size_t count)
{
	float f[256];
	for (size_t i = 0; i < count; i += 256) {
		size_t m = count - i < 256 ? count - i : 256;
		memcpy(f, src + i * sizeof *f, m * sizeof *f);
		for (size_t j = 0; j < m; j++)
			dst[i + j] = f[j];
	}
}

/*
 * refb_gemm with B given as a tensor in o's dtype or, in a float64
 * product, float32 (blocked_b): then B is widened WIDEN_BLOCK_BYTES at a
 * time, a block of C's columns per GEMM, so that its float64 copy never
 * exists whole. Each element of C is the same dot product over k as in
 * one GEMM (the blocks split n, never k). tb: B is [n, k] (ldb k), else
 * [k, n] (ldb n).
 */
static int gemm_b(const ref_call *c, int dtype, bool tb, size_t m, size_t n, size_t k, double alpha,
                  const void *a, size_t lda, const ref_tensor *b, double beta, void *out,
                  size_t ldc)
{
	size_t ldb = tb ? k : n;
	if (b->transposed && (tb || b->dtype == dtype)) /* operands_init_keep's job */
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "a transposed view as B of this product");
	if (b->dtype == dtype)
		return refb_gemm(c, dtype, false, tb, m, n, k, alpha, a, lda, b->data, ldb, beta,
		                 out, ldc);
	/* a multiple of 16 columns: OpenBLAS's kernels sum over k in an order
	   that depends on how many columns remain after their unrolled groups
	   (4 or 8), the same in every block as in one GEMM */
	size_t cols = (k ? WIDEN_BLOCK_BYTES / (k * sizeof(double)) : n) / 16 * 16;
	if (cols < 16)
		cols = 16;
	if (cols > n)
		cols = n;
	double *w = malloc((k ? k : 1) * cols * sizeof *w);
	if (!w)
		return ref_fail(c, ETC_ERR_NOMEM, "out of memory (%zu bytes)",
		                k * cols * sizeof *w);
	const char *f = b->data;
	int rc = 0;
	for (size_t j0 = 0; rc == 0 && j0 < n; j0 += cols) {
		size_t nj = n - j0 < cols ? n - j0 : cols;
		if (tb) { /* rows j0.. of B: contiguous */
			widen_floats(w, f + j0 * k * sizeof(float), nj * k);
		} else if (b->transposed) {
			/* columns j0.. of B are rows j0.. of its bytes: read as they
			   lie, laid out [k, nj] as below (the same GEMM, the same bits) */
			rc = ref_transpose_into(w, ETC_DOUBLE, f + j0 * k * sizeof(float),
			                        ETC_FLOAT, k, nj, &c->release, c->err);
			if (rc < 0)
				break;
		} else {
			/* columns j0.. of each of B's k rows, gathered as floats into
			   the upper half of w, then widened from the front (double i
			   covers floats already read) */
			char *half = (char *)w + nj * k * sizeof(float);
			for (size_t p = 0; p < k; p++)
				memcpy(half + p * nj * sizeof(float),
				       f + (p * n + j0) * sizeof(float), nj * sizeof(float));
			widen_floats(w, half, nj * k);
		}
		rc = refb_gemm(c, dtype, false, tb, m, nj, k, alpha, a, lda, w, tb ? k : nj, beta,
		               (double *)out + j0, ldc);
	}
	free(w);
	return rc;
}

static int need_rank(const ref_call *c, const char *name, const ref_tensor *t, uint32_t rank)
{
	char b[160];
	if (t->rank != rank)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected %s of rank %u, given shape %s", name,
		                rank, ref_shape_str(b, sizeof b, t->rank, t->shape));
	return 0;
}

static int inner_mismatch(const ref_call *c, const char *na, const ref_tensor *a, const char *nb,
                          const ref_tensor *b)
{
	char b1[160], b2[160];
	return ref_fail(c, ETC_ERR_MISMATCH,
	                "%s %s and %s %s cannot be multiplied (inner dimensions differ)", na,
	                ref_shape_str(b1, sizeof b1, a->rank, a->shape), nb,
	                ref_shape_str(b2, sizeof b2, b->rank, b->shape));
}

/*
 * out[batch..., m, n] (+)= alpha * a[batch_a..., m, k] @ b[batch_b..., k, n]
 * with the batch dims broadcast (a's and b's batch shapes right-aligned to
 * out's; size-1 dims repeat). `beta` scales what out already holds.
 */
static int batched_gemm(const ref_call *c, int dtype, uint32_t rb, const int64_t *bshape,
                        const void *a, uint32_t ra_b, const int64_t *ashape, const void *b,
                        uint32_t rb_b, const int64_t *b_shape, size_t m, size_t n, size_t k,
                        double alpha, double beta, void *out)
{
	size_t es = refb_elem_size(dtype);
	int64_t sa[ETC_REF_MAX_RANK], sb[ETC_REF_MAX_RANK], idx[ETC_REF_MAX_RANK] = {0};
	int64_t acc_a = (int64_t)(m * k), acc_b = (int64_t)(k * n);
	for (uint32_t d = rb; d-- > 0;) {
		int64_t da = (int64_t)d - (int64_t)(rb - ra_b);
		int64_t db = (int64_t)d - (int64_t)(rb - rb_b);
		sa[d] = da < 0 || ashape[da] == 1 ? 0 : acc_a;
		sb[d] = db < 0 || b_shape[db] == 1 ? 0 : acc_b;
		if (da >= 0)
			acc_a *= ashape[da];
		if (db >= 0)
			acc_b *= b_shape[db];
	}
	uint64_t nb = 1;
	for (uint32_t d = 0; d < rb; d++)
		nb *= (uint64_t)bshape[d];
	for (uint64_t i = 0; i < nb; i++) {
		int64_t oa = 0, ob = 0;
		for (uint32_t d = 0; d < rb; d++) {
			oa += idx[d] * sa[d];
			ob += idx[d] * sb[d];
		}
		ETC_TRY(refb_gemm(
		    c, dtype, false, false, m, n, k, alpha, (const char *)a + (size_t)oa * es, k,
		    (const char *)b + (size_t)ob * es, n, beta, (char *)out + i * m * n * es, n));
		for (uint32_t d = rb; d-- > 0;) {
			if (++idx[d] < bshape[d])
				break;
			idx[d] = 0;
		}
	}
	return 0;
}

/* Fills out (allocated, of o->dtype) with `self` broadcast to its shape and
 * scaled by nothing: the C of a GEMM with beta. */
static int fill_self(const ref_call *c, const ref_tensor *self, ref_tensor *out)
{
	uint32_t r;
	int64_t sh[ETC_REF_MAX_RANK];
	ETC_TRY(refb_broadcast(c, "self", self->rank, self->shape, out->rank, out->shape, &r, sh));
	if (r != out->rank || memcmp(sh, out->shape, r * sizeof *sh) != 0) {
		char b1[160], b2[160];
		return ref_fail(c, ETC_ERR_MISMATCH, "self %s does not broadcast to the result %s",
		                ref_shape_str(b1, sizeof b1, self->rank, self->shape),
		                ref_shape_str(b2, sizeof b2, out->rank, out->shape));
	}
	refb_broadcast_copy(out->data, self, out->rank, out->shape);
	return 0;
}

int ref_op_mm(ref_call *c)
{
	const ref_tensor *a, *b;
	ETC_TRY(refb_tensor(c, "self", 0, &a));
	ETC_TRY(refb_tensor(c, "mat2", 1, &b));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_rank(c, "self", a, 2));
	ETC_TRY(need_rank(c, "mat2", b, 2));
	if (a->shape[1] != b->shape[0])
		return inner_mismatch(c, "self", a, "mat2", b);
	operands o;
	const ref_tensor *ts[] = {a, b};
	const char *names[] = {"self", "mat2"};
	ETC_TRY(operands_init_keep(c, &o, 2, ts, names, 1));
	int64_t sh[2] = {a->shape[0], b->shape[1]};
	size_t m = (size_t)sh[0], n = (size_t)sh[1], k = (size_t)a->shape[1];
	int rc = ref_tensor_alloc(&c->outs[0], o.dtype, 2, sh, c->err);
	if (rc == 0)
		rc = gemm_b(c, o.dtype, false, m, n, k, 1.0, o.x[0]->data, k, o.x[1], 0.0,
		            c->outs[0].data, n);
	operands_free(&o);
	return rc;
}

int ref_op_addmm(ref_call *c)
{
	const ref_tensor *s, *a, *b;
	double beta, alpha;
	ETC_TRY(refb_tensor(c, "self", 0, &s));
	ETC_TRY(refb_tensor(c, "mat1", 1, &a));
	ETC_TRY(refb_tensor(c, "mat2", 2, &b));
	ETC_TRY(refb_scalar(c, "beta", 3, 1.0, &beta));
	ETC_TRY(refb_scalar(c, "alpha", 4, 1.0, &alpha));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_rank(c, "mat1", a, 2));
	ETC_TRY(need_rank(c, "mat2", b, 2));
	if (a->shape[1] != b->shape[0])
		return inner_mismatch(c, "mat1", a, "mat2", b);
	operands o;
	const ref_tensor *ts[] = {a, b, s};
	const char *names[] = {"mat1", "mat2", "self"};
	ETC_TRY(operands_init_keep(c, &o, 3, ts, names, 1));
	int64_t sh[2] = {a->shape[0], b->shape[1]};
	size_t m = (size_t)sh[0], n = (size_t)sh[1], k = (size_t)a->shape[1];
	int rc = ref_tensor_alloc(&c->outs[0], o.dtype, 2, sh, c->err);
	if (rc == 0 && beta != 0)
		rc = fill_self(c, o.x[2], &c->outs[0]);
	if (rc == 0)
		rc = gemm_b(c, o.dtype, false, m, n, k, alpha, o.x[0]->data, k, o.x[1], beta,
		            c->outs[0].data, n);
	operands_free(&o);
	return rc;
}

static int bmm_common(ref_call *c, const ref_tensor *s, const char *na, const ref_tensor *a,
                      const char *nb, const ref_tensor *b, double beta, double alpha)
{
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_rank(c, na, a, 3));
	ETC_TRY(need_rank(c, nb, b, 3));
	if (a->shape[0] != b->shape[0]) {
		char b1[160], b2[160];
		return ref_fail(c, ETC_ERR_MISMATCH, "batch sizes differ: %s %s and %s %s", na,
		                ref_shape_str(b1, sizeof b1, a->rank, a->shape), nb,
		                ref_shape_str(b2, sizeof b2, b->rank, b->shape));
	}
	if (a->shape[2] != b->shape[1])
		return inner_mismatch(c, na, a, nb, b);
	operands o;
	const ref_tensor *ts[] = {a, b, s};
	const char *names[] = {na, nb, "self"};
	ETC_TRY(operands_init(c, &o, s ? 3 : 2, ts, names));
	int64_t sh[3] = {a->shape[0], a->shape[1], b->shape[2]};
	size_t m = (size_t)sh[1], n = (size_t)sh[2], k = (size_t)a->shape[2];
	int rc = ref_tensor_alloc(&c->outs[0], o.dtype, 3, sh, c->err);
	if (rc == 0 && s && beta != 0)
		rc = fill_self(c, o.x[2], &c->outs[0]);
	if (rc == 0)
		rc = batched_gemm(c, o.dtype, 1, sh, o.x[0]->data, 1, a->shape, o.x[1]->data, 1,
		                  b->shape, m, n, k, alpha, s ? beta : 0.0, c->outs[0].data);
	operands_free(&o);
	return rc;
}

int ref_op_bmm(ref_call *c)
{
	const ref_tensor *a, *b;
	ETC_TRY(refb_tensor(c, "self", 0, &a));
	ETC_TRY(refb_tensor(c, "mat2", 1, &b));
	return bmm_common(c, NULL, "self", a, "mat2", b, 0.0, 1.0);
}

int ref_op_baddbmm(ref_call *c)
{
	const ref_tensor *s, *a, *b;
	double beta, alpha;
	ETC_TRY(refb_tensor(c, "self", 0, &s));
	ETC_TRY(refb_tensor(c, "batch1", 1, &a));
	ETC_TRY(refb_tensor(c, "batch2", 2, &b));
	ETC_TRY(refb_scalar(c, "beta", 3, 1.0, &beta));
	ETC_TRY(refb_scalar(c, "alpha", 4, 1.0, &alpha));
	return bmm_common(c, s, "batch1", a, "batch2", b, beta, alpha);
}

/*
 * torch.matmul: 1-D operands get a dimension of 1 prepended (a) or appended
 * (b) that the result drops; batch dims broadcast. `bias` (optional) is
 * added broadcast to the result (linear).
 */
static int matmul(ref_call *c, const char *na, const ref_tensor *a, const char *nb,
                  const ref_tensor *b, bool b_transposed, const ref_tensor *bias)
{
	char b1[160], b2[160];
	if (a->rank == 0 || b->rank == 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "both arguments need at least one dimension, given %s %s and %s %s",
		                na, ref_shape_str(b1, sizeof b1, a->rank, a->shape), nb,
		                ref_shape_str(b2, sizeof b2, b->rank, b->shape));
	bool a1 = a->rank == 1, b1d = b->rank == 1;
	int64_t m = a1 ? 1 : a->shape[a->rank - 2], k = a->shape[a->rank - 1];
	int64_t kb, n;
	if (b_transposed) { /* b is [..., n, k] (linear's weight) */
		kb = b->shape[b->rank - 1];
		n = b1d ? 1 : b->shape[b->rank - 2];
	} else {
		kb = b1d ? b->shape[0] : b->shape[b->rank - 2];
		n = b1d ? 1 : b->shape[b->rank - 1];
	}
	if (k != kb)
		return inner_mismatch(c, na, a, nb, b);
	uint32_t rba = a1 ? 0 : a->rank - 2, rbb = b1d ? 0 : b->rank - 2, r;
	int64_t bsh[ETC_REF_MAX_RANK + 2];
	ETC_TRY(refb_broadcast(c, "batch dimensions", rba, a->shape, rbb, b->shape, &r, bsh));
	uint32_t ro = r;
	if (!a1)
		bsh[ro++] = m;
	if (!b1d)
		bsh[ro++] = n;
	if (ro > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "result of rank %u", ro);
	operands o;
	const ref_tensor *ts[] = {a, b, bias};
	const char *names[] = {na, nb, "bias"};
	/* linear's weight may stay float32 (widened by blocks in gemm_b) */
	ETC_TRY(operands_init_keep(c, &o, bias ? 3 : 2, ts, names, b_transposed ? 1 : -1));
	int rc = ref_tensor_alloc(&c->outs[0], o.dtype, ro, bsh, c->err);
	if (rc == 0 && bias)
		rc = fill_self(c, o.x[2], &c->outs[0]);
	if (rc == 0 && b_transposed) {
		/* weight [n, k] (or [k]; never batched): one GEMM over every row of a */
		size_t rows = (size_t)(o.x[0]->numel / (uint64_t)(k ? k : 1));
		if (k == 0)
			rows = (size_t)(c->outs[0].numel / (uint64_t)(n ? n : 1));
		rc = gemm_b(c, o.dtype, true, rows, (size_t)n, (size_t)k, 1.0, o.x[0]->data,
		            (size_t)k, o.x[1], bias ? 1.0 : 0.0, c->outs[0].data, (size_t)n);
	} else if (rc == 0) {
		rc = batched_gemm(c, o.dtype, r, bsh, o.x[0]->data, rba, a->shape, o.x[1]->data,
		                  rbb, b->shape, (size_t)m, (size_t)n, (size_t)k, 1.0,
		                  bias ? 1.0 : 0.0, c->outs[0].data);
	}
	operands_free(&o);
	return rc;
}

int ref_op_matmul(ref_call *c)
{
	const ref_tensor *a, *b;
	ETC_TRY(refb_tensor(c, "self", 0, &a));
	ETC_TRY(refb_tensor(c, "other", 1, &b));
	ETC_TRY(refb_nouts(c, 1));
	return matmul(c, "self", a, "other", b, false, NULL);
}

int ref_op_mv(ref_call *c)
{
	const ref_tensor *a, *b;
	ETC_TRY(refb_tensor(c, "self", 0, &a));
	ETC_TRY(refb_tensor(c, "vec", 1, &b));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_rank(c, "self", a, 2));
	ETC_TRY(need_rank(c, "vec", b, 1));
	return matmul(c, "self", a, "vec", b, false, NULL);
}

int ref_op_dot(ref_call *c)
{
	const ref_tensor *a, *b;
	ETC_TRY(refb_tensor(c, "self", 0, &a));
	ETC_TRY(refb_tensor(c, "tensor", 1, &b));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_rank(c, "self", a, 1));
	ETC_TRY(need_rank(c, "tensor", b, 1));
	return matmul(c, "self", a, "tensor", b, false, NULL);
}

int ref_op_linear(ref_call *c)
{
	const ref_tensor *x, *w, *bias;
	ETC_TRY(refb_tensor(c, "input", 0, &x));
	ETC_TRY(refb_tensor(c, "weight", 1, &w));
	ETC_TRY(refb_opt_tensor(c, "bias", 2, &bias));
	ETC_TRY(refb_nouts(c, 1));
	if (w->rank != 1 && w->rank != 2) {
		char b[160];
		return ref_fail(c, ETC_ERR_MISMATCH, "expected weight of rank 1 or 2, given %s",
		                ref_shape_str(b, sizeof b, w->rank, w->shape));
	}
	if (x->rank == 0) {
		char b[160];
		return ref_fail(c, ETC_ERR_MISMATCH, "expected input of rank >= 1, given %s",
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	}
	return matmul(c, "input", x, "weight", w, true, bias);
}

/* --- attention ----------------------------------------------------------- */

/*
 * softmax(q k^T * scale + mask) v over the last two dims, batch dims
 * broadcast; `lse` (optional, [batch..., L]) receives the log-sum-exp of
 * each row. Fully masked rows give NaN as torch's math path does.
 */
static int attention(ref_call *c, const ref_tensor *q, const ref_tensor *k, const ref_tensor *v,
                     const ref_tensor *mask, bool causal, bool has_scale, double scale,
                     ref_tensor *out, ref_tensor *lse)
{
	char b1[160], b2[160], b3[160];
	if (q->rank < 2 || k->rank < 2 || v->rank < 2)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "query, key and value need rank >= 2, given %s, %s, %s",
		                ref_shape_str(b1, sizeof b1, q->rank, q->shape),
		                ref_shape_str(b2, sizeof b2, k->rank, k->shape),
		                ref_shape_str(b3, sizeof b3, v->rank, v->shape));
	int64_t L = q->shape[q->rank - 2], E = q->shape[q->rank - 1];
	int64_t S = k->shape[k->rank - 2], Ev = v->shape[v->rank - 1];
	if (k->shape[k->rank - 1] != E || v->shape[v->rank - 2] != S)
		return ref_fail(
		    c, ETC_ERR_MISMATCH,
		    "query %s, key %s and value %s disagree (expected key [..., S, %" PRId64
		    "], value [..., S, Ev])",
		    ref_shape_str(b1, sizeof b1, q->rank, q->shape),
		    ref_shape_str(b2, sizeof b2, k->rank, k->shape),
		    ref_shape_str(b3, sizeof b3, v->rank, v->shape), E);
	if (mask && causal)
		return ref_fail(c, ETC_ERR_MISMATCH, "attn_mask and is_causal are both set");
	uint32_t r1, r;
	int64_t s1[ETC_REF_MAX_RANK], bsh[ETC_REF_MAX_RANK + 2];
	ETC_TRY(refb_broadcast(c, "query/key batch", q->rank - 2, q->shape, k->rank - 2, k->shape,
	                       &r1, s1));
	ETC_TRY(refb_broadcast(c, "query/value batch", r1, s1, v->rank - 2, v->shape, &r, bsh));
	if (r + 2 > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "rank %u", r + 2);
	operands o;
	const ref_tensor *ts[] = {q, k, v};
	const char *names[] = {"query", "key", "value"};
	ETC_TRY(operands_init(c, &o, 3, ts, names));
	if (!ref_dtype_is_float(o.dtype)) {
		operands_free(&o);
		return ref_fail(c, ETC_ERR_MISMATCH, "expected float query, given %s",
		                etc_scalar_type_name(q->dtype));
	}
	int dt = o.dtype;
	size_t es = refb_elem_size(dt);
	if (!has_scale)
		scale = 1.0 / sqrt((double)E);
	/* mask broadcast to [batch..., L, S] */
	ref_tensor mfull = {0}, sc = {0}, qb = {0}, kb = {0}, vb = {0};
	int64_t ms[ETC_REF_MAX_RANK + 2];
	memcpy(ms, bsh, r * sizeof *ms);
	ms[r] = L;
	ms[r + 1] = S;
	int rc = 0;
	if (mask) {
		uint32_t rm;
		int64_t chk[ETC_REF_MAX_RANK + 2];
		rc = refb_broadcast(c, "attn_mask", mask->rank, mask->shape, r + 2, ms, &rm, chk);
		if (rc == 0 && (rm != r + 2 || memcmp(chk, ms, rm * sizeof *ms) != 0))
			rc = ref_fail(c, ETC_ERR_MISMATCH,
			              "attn_mask %s does not broadcast to the scores",
			              ref_shape_str(b1, sizeof b1, mask->rank, mask->shape));
		if (rc == 0)
			rc = ref_tensor_alloc(&mfull, mask->dtype, r + 2, ms, c->err);
		if (rc == 0)
			refb_broadcast_copy(mfull.data, mask, r + 2, ms);
	}
	/* q, k, v broadcast to the batch: then every batch is a plain GEMM */
	int64_t qs[ETC_REF_MAX_RANK + 2], ks[ETC_REF_MAX_RANK + 2], vs[ETC_REF_MAX_RANK + 2];
	memcpy(qs, bsh, r * sizeof *qs);
	memcpy(ks, bsh, r * sizeof *ks);
	memcpy(vs, bsh, r * sizeof *vs);
	qs[r] = L, qs[r + 1] = E, ks[r] = S, ks[r + 1] = E, vs[r] = S, vs[r + 1] = Ev;
	if (rc == 0)
		rc = ref_tensor_alloc(&qb, dt, r + 2, qs, c->err);
	if (rc == 0)
		rc = ref_tensor_alloc(&kb, dt, r + 2, ks, c->err);
	if (rc == 0)
		rc = ref_tensor_alloc(&vb, dt, r + 2, vs, c->err);
	if (rc == 0)
		rc = ref_tensor_alloc(&sc, dt, r + 2, ms, c->err);
	int64_t os[ETC_REF_MAX_RANK + 2];
	memcpy(os, bsh, r * sizeof *os);
	os[r] = L, os[r + 1] = Ev;
	if (rc == 0)
		rc = ref_tensor_alloc(out, dt, r + 2, os, c->err);
	if (rc == 0 && lse)
		rc = ref_tensor_alloc(lse, dt, r + 1, os, c->err);
	if (rc == 0) {
		refb_broadcast_copy(qb.data, o.x[0], r + 2, qs);
		refb_broadcast_copy(kb.data, o.x[1], r + 2, ks);
		refb_broadcast_copy(vb.data, o.x[2], r + 2, vs);
	}
	uint64_t nb = 1;
	for (uint32_t d = 0; d < r; d++)
		nb *= (uint64_t)bsh[d];
	for (uint64_t bi = 0; rc == 0 && bi < nb; bi++) {
		size_t so = (size_t)(bi * (uint64_t)(L * S));
		rc = refb_gemm(c, dt, false, true, (size_t)L, (size_t)S, (size_t)E, scale,
		               (char *)qb.data + bi * (uint64_t)(L * E) * es, (size_t)E,
		               (char *)kb.data + bi * (uint64_t)(S * E) * es, (size_t)E, 0.0,
		               (char *)sc.data + so * es, (size_t)S);
		for (int64_t i = 0; rc == 0 && i < L; i++) {
			size_t row = so + (size_t)(i * S);
			double mx = -INFINITY;
			for (int64_t j = 0; j < S; j++) {
				double x = ref_get_f(&sc, row + (size_t)j);
				if (causal && j > i)
					x = -INFINITY;
				else if (mask && mask->dtype == ETC_BOOL)
					x = ref_get_i(&mfull, row + (size_t)j) ? x : -INFINITY;
				else if (mask)
					x += ref_get_f(&mfull, row + (size_t)j);
				ref_set_f(&sc, row + (size_t)j, x);
				if (x > mx)
					mx = x;
			}
			double sum = 0;
			for (int64_t j = 0; j < S; j++) {
				double e = exp(ref_get_f(&sc, row + (size_t)j) - mx);
				ref_set_f(&sc, row + (size_t)j, e);
				sum += e;
			}
			for (int64_t j = 0; j < S; j++)
				ref_set_f(&sc, row + (size_t)j,
				          ref_get_f(&sc, row + (size_t)j) / sum);
			if (lse)
				ref_set_f(lse, bi * (uint64_t)L + (uint64_t)i, mx + log(sum));
		}
		if (rc == 0)
			rc = refb_gemm(c, dt, false, false, (size_t)L, (size_t)Ev, (size_t)S, 1.0,
			               (char *)sc.data + so * es, (size_t)S,
			               (char *)vb.data + bi * (uint64_t)(S * Ev) * es, (size_t)Ev,
			               0.0, (char *)out->data + bi * (uint64_t)(L * Ev) * es,
			               (size_t)Ev);
	}
	ref_tensor_free(&mfull);
	ref_tensor_free(&sc);
	ref_tensor_free(&qb);
	ref_tensor_free(&kb);
	ref_tensor_free(&vb);
	operands_free(&o);
	return rc;
}

static int attention_args(ref_call *c, const ref_tensor **q, const ref_tensor **k,
                          const ref_tensor **v, bool *has_scale, double *scale, double *dropout)
{
	ETC_TRY(refb_tensor(c, "query", 0, q));
	ETC_TRY(refb_tensor(c, "key", 1, k));
	ETC_TRY(refb_tensor(c, "value", 2, v));
	const ref_arg *s = ref_arg_get(c, "scale", -1);
	*has_scale = s != NULL;
	if (s)
		ETC_TRY(refb_scalar(c, "scale", -1, 0.0, scale));
	ETC_TRY(refb_scalar(c, "dropout_p", -1, 0.0, dropout));
	if (*dropout != 0)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "dropout_p %g: a random op has no reference value (expected 0)",
		                *dropout);
	return 0;
}

int ref_op_sdpa(ref_call *c)
{
	const ref_tensor *q, *k, *v, *mask;
	bool has_scale, causal, gqa;
	double scale = 0, dropout;
	ETC_TRY(attention_args(c, &q, &k, &v, &has_scale, &scale, &dropout));
	ETC_TRY(refb_opt_tensor(c, "attn_mask", 3, &mask));
	ETC_TRY(refb_bool(c, "is_causal", 5, false, &causal));
	ETC_TRY(refb_bool(c, "enable_gqa", -1, false, &gqa));
	if (gqa)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "enable_gqa=True");
	ETC_TRY(refb_nouts(c, 1));
	return attention(c, q, k, v, mask, causal, has_scale, scale, &c->outs[0], NULL);
}

int ref_op_flash_attention_cpu(ref_call *c)
{
	const ref_tensor *q, *k, *v, *mask;
	bool has_scale, causal;
	double scale = 0, dropout;
	ETC_TRY(attention_args(c, &q, &k, &v, &has_scale, &scale, &dropout));
	ETC_TRY(refb_bool(c, "is_causal", 4, false, &causal));
	ETC_TRY(refb_opt_tensor(c, "attn_mask", -1, &mask));
	if (c->nouts != 1 && c->nouts != 2)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "the op has 2 outputs (output, logsumexp), the graph gives %u",
		                c->nouts);
	if (q->rank != 4) {
		char b[160];
		return ref_fail(c, ETC_ERR_MISMATCH, "expected query of rank 4, given %s",
		                ref_shape_str(b, sizeof b, q->rank, q->shape));
	}
	return attention(c, q, k, v, mask, causal, has_scale, scale, &c->outs[0],
	                 c->nouts == 2 ? &c->outs[1] : NULL);
}
