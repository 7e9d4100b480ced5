/*
 * ops_index.c - the ops that read elements at positions held in a tensor:
 * index_select, gather, embedding and advanced indexing (index.Tensor).
 * Every index is checked against its dim before anything is copied.
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>
#include <stdlib.h>

static int need_index_dtype(const ref_call *c, const char *name, const ref_tensor *t, bool bool_ok)
{
	bool ok = t->dtype == ETC_LONG || t->dtype == ETC_INT ||
	          (bool_ok && (t->dtype == ETC_BOOL || t->dtype == ETC_BYTE));
	if (!ok)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected %s of dtype Long or Int%s, given %s",
		                name, bool_ok ? " (or a Bool mask)" : "",
		                etc_scalar_type_name(t->dtype));
	return 0;
}

static int out_of_range(const ref_call *c, const char *name, int64_t v, uint32_t dim, int64_t size)
{
	return ref_fail(c, ETC_ERR_MISMATCH,
	                "%s holds %" PRId64 ", out of range for dim %u of size %" PRId64, name, v,
	                dim, size);
}

int ref_op_index_select(ref_call *c)
{
	const ref_tensor *x, *idx;
	int64_t dim;
	uint32_t k;
	char b[160];
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_tensor(c, "index", 2, &idx));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_index_dtype(c, "index", idx, false));
	if (idx->rank > 1)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a 0-d or 1-D index, given %s",
		                ref_shape_str(b, sizeof b, idx->rank, idx->shape));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	if (x->rank == 0 && idx->numel != 1)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "an index of %" PRIu64 " values for a 0-d self (expected 1)",
		                idx->numel);
	int64_t size = x->rank ? x->shape[k] : 1;
	for (uint64_t i = 0; i < idx->numel; i++) {
		int64_t v = ref_get_i(idx, i);
		if (v < 0 || v >= size)
			return out_of_range(c, "index", v, k, size);
	}
	int64_t sh[ETC_REF_MAX_RANK];
	memcpy(sh, x->shape, x->rank * sizeof *sh);
	if (x->rank)
		sh[k] = (int64_t)idx->numel;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, sh, c->err));
	size_t es = refb_elem_size(x->dtype);
	uint64_t outer = 1, inner = 1;
	for (uint32_t d = 0; d < x->rank; d++) {
		if (d < k)
			outer *= (uint64_t)x->shape[d];
		else if (d > k)
			inner *= (uint64_t)x->shape[d];
	}
	char *dst = (char *)c->outs[0].data;
	for (uint64_t o = 0; o < outer; o++)
		for (uint64_t i = 0; i < idx->numel; i++) {
			uint64_t v = (uint64_t)ref_get_i(idx, i);
			memcpy(dst, (const char *)x->data + ((o * (uint64_t)size + v) * inner) * es,
			       inner * es);
			dst += inner * es;
		}
	return 0;
}

int ref_op_gather(ref_call *c)
{
	const ref_tensor *x, *idx;
	int64_t dim;
	uint32_t k;
	char b1[160], b2[160];
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_int(c, "dim", 1, 0, &dim));
	ETC_TRY(refb_tensor(c, "index", 2, &idx));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_index_dtype(c, "index", idx, false));
	uint32_t rx = x->rank ? x->rank : 1, ri = idx->rank ? idx->rank : 1;
	if (rx != ri)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "index %s and self %s must have the same number of dims",
		                ref_shape_str(b1, sizeof b1, idx->rank, idx->shape),
		                ref_shape_str(b2, sizeof b2, x->rank, x->shape));
	ETC_TRY(refb_dim(c, dim, x->rank, "dim", &k));
	int64_t xs[ETC_REF_MAX_RANK], is[ETC_REF_MAX_RANK];
	for (uint32_t d = 0; d < rx; d++) {
		xs[d] = x->rank ? x->shape[d] : 1;
		is[d] = idx->rank ? idx->shape[d] : 1;
		if (d != k && is[d] > xs[d] && idx->numel)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "index %s is larger than self %s in dim %u",
			                ref_shape_str(b1, sizeof b1, idx->rank, idx->shape),
			                ref_shape_str(b2, sizeof b2, x->rank, x->shape), d);
	}
	for (uint64_t i = 0; i < idx->numel; i++) {
		int64_t v = ref_get_i(idx, i);
		if (v < 0 || v >= xs[k])
			return out_of_range(c, "index", v, k, xs[k]);
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, idx->rank, idx->shape, c->err));
	int64_t xst[ETC_REF_MAX_RANK], pos[ETC_REF_MAX_RANK] = {0};
	refb_strides(rx, xs, xst);
	size_t es = refb_elem_size(x->dtype);
	for (uint64_t i = 0; i < idx->numel; i++) {
		int64_t off = 0;
		for (uint32_t d = 0; d < rx; d++)
			off += (d == k ? ref_get_i(idx, i) : pos[d]) * xst[d];
		memcpy((char *)c->outs[0].data + i * es, (const char *)x->data + (size_t)off * es,
		       es);
		for (uint32_t d = rx; d-- > 0;) {
			if (++pos[d] < is[d])
				break;
			pos[d] = 0;
		}
	}
	return 0;
}

int ref_op_embedding(ref_call *c)
{
	const ref_tensor *w, *idx;
	char b[160];
	ETC_TRY(refb_tensor(c, "weight", 0, &w));
	ETC_TRY(refb_tensor(c, "indices", 1, &idx));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(need_index_dtype(c, "indices", idx, false));
	if (w->rank != 2)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a 2-D weight, given %s",
		                ref_shape_str(b, sizeof b, w->rank, w->shape));
	if (idx->rank + 1 > ETC_REF_MAX_RANK)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "indices of rank %u", idx->rank);
	for (uint64_t i = 0; i < idx->numel; i++) {
		int64_t v = ref_get_i(idx, i);
		if (v < 0 || v >= w->shape[0])
			return out_of_range(c, "indices", v, 0, w->shape[0]);
	}
	int64_t sh[ETC_REF_MAX_RANK];
	memcpy(sh, idx->shape, idx->rank * sizeof *sh);
	sh[idx->rank] = w->shape[1];
	ETC_TRY(ref_tensor_alloc(&c->outs[0], w->dtype, idx->rank + 1, sh, c->err));
	size_t row = (size_t)w->shape[1] * refb_elem_size(w->dtype);
	for (uint64_t i = 0; i < idx->numel; i++)
		memcpy((char *)c->outs[0].data + i * row,
		       (const char *)w->data + (size_t)ref_get_i(idx, i) * row, row);
	return 0;
}

/* --- index.Tensor ------------------------------------------------------------ */

/* One indexed dim: its position in self and its indices broadcast to the
 * index shape (owned). */
typedef struct adv_index {
	uint32_t dim;
	int64_t *v;
} adv_index;

typedef struct adv_state {
	adv_index ix[ETC_REF_MAX_RANK];
	uint32_t n;
	/* indices before broadcasting: data and shape (masks give 1-D) */
	int64_t *raw[ETC_REF_MAX_RANK];
	uint32_t raw_rank[ETC_REF_MAX_RANK];
	int64_t raw_shape[ETC_REF_MAX_RANK][ETC_REF_MAX_RANK];
} adv_state;

static void adv_free(adv_state *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		free(s->ix[i].v);
		free(s->raw[i]);
	}
}

static int adv_add(const ref_call *c, adv_state *s, uint32_t dim, int64_t *vals, uint32_t rank,
                   const int64_t *shape)
{
	if (!vals)
		return ref_fail(c, ETC_ERR_NOMEM, "out of memory");
	s->ix[s->n].dim = dim;
	s->ix[s->n].v = NULL;
	s->raw[s->n] = vals;
	s->raw_rank[s->n] = rank;
	memcpy(s->raw_shape[s->n], shape, rank * sizeof *shape);
	s->n++;
	return 0;
}

/*
 * The plan of an advanced indexing (index.Tensor, index_put): the shape of
 * the indexing result and, for each of its elements, the flat offset of the
 * element of self it reads (or writes).
 */
typedef struct adv_plan {
	uint32_t rank;
	int64_t shape[ETC_REF_MAX_RANK];
	uint64_t n;
	int64_t *off;
} adv_plan;

static int adv_plan_make(const ref_call *c, const ref_tensor *x, const ref_tensor *const *ts,
                         size_t nt, adv_plan *plan)
{
	char b1[160], b2[160];
	memset(plan, 0, sizeof *plan);
	/* which dims each entry consumes; masks become their nonzero coordinates */
	uint32_t used = 0;
	for (size_t i = 0; i < nt; i++) {
		if (!ts[i]) {
			used++;
			continue;
		}
		ETC_TRY(need_index_dtype(c, "indices entry", ts[i], true));
		bool mask = ts[i]->dtype == ETC_BOOL || ts[i]->dtype == ETC_BYTE;
		used += mask ? ts[i]->rank : 1;
		if (mask && ts[i]->rank == 0)
			return ref_fail(c, ETC_ERR_UNSUPPORTED, "a 0-d boolean index");
	}
	if (used > x->rank)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "too many indices (%u dims) for self %s of rank %u", used,
		                ref_shape_str(b1, sizeof b1, x->rank, x->shape), x->rank);
	adv_state s;
	memset(&s, 0, sizeof s);
	uint32_t d = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < nt; i++) {
		const ref_tensor *t = ts[i];
		if (!t) {
			d++;
			continue;
		}
		if (t->dtype == ETC_BOOL || t->dtype == ETC_BYTE) {
			for (uint32_t j = 0; j < t->rank; j++)
				if (t->shape[j] != x->shape[d + j]) {
					adv_free(&s);
					return ref_fail(
					    c, ETC_ERR_MISMATCH,
					    "mask %s does not match self %s at dim %u",
					    ref_shape_str(b1, sizeof b1, t->rank, t->shape),
					    ref_shape_str(b2, sizeof b2, x->rank, x->shape), d + j);
				}
			int64_t nnz = 0;
			for (uint64_t e = 0; e < t->numel; e++)
				nnz += ref_get_i(t, e) != 0;
			int64_t st[ETC_REF_MAX_RANK];
			refb_strides(t->rank, t->shape, st);
			for (uint32_t j = 0; rc == 0 && j < t->rank; j++) {
				int64_t *v = malloc((size_t)(nnz ? nnz : 1) * sizeof *v);
				int64_t at = 0;
				for (uint64_t e = 0; v && e < t->numel; e++)
					if (ref_get_i(t, e) != 0)
						v[at++] = ((int64_t)e / st[j]) % t->shape[j];
				rc = adv_add(c, &s, d + j, v, 1, &nnz);
			}
			d += t->rank;
			continue;
		}
		int64_t size = x->shape[d];
		int64_t *v = malloc((size_t)(t->numel ? t->numel : 1) * sizeof *v);
		for (uint64_t e = 0; v && e < t->numel; e++) {
			int64_t iv = ref_get_i(t, e);
			if (iv < -size || iv >= size) {
				free(v);
				adv_free(&s);
				return out_of_range(c, "an index tensor", iv, d, size);
			}
			v[e] = iv < 0 ? iv + size : iv;
		}
		rc = adv_add(c, &s, d, v, t->rank, t->shape);
		d++;
	}
	if (rc == 0 && s.n == 0)
		rc = ref_fail(c, ETC_ERR_UNSUPPORTED, "indices without any index tensor");
	/* the broadcast index shape */
	uint32_t br = 0;
	int64_t bsh[ETC_REF_MAX_RANK];
	for (uint32_t i = 0; rc == 0 && i < s.n; i++) {
		uint32_t r;
		int64_t tmp[ETC_REF_MAX_RANK];
		rc = refb_broadcast(c, "indices", br, bsh, s.raw_rank[i], s.raw_shape[i], &r, tmp);
		br = r;
		memcpy(bsh, tmp, r * sizeof *tmp);
	}
	uint64_t nb = 1;
	for (uint32_t j = 0; j < br; j++)
		nb *= (uint64_t)bsh[j];
	for (uint32_t i = 0; rc == 0 && i < s.n; i++) {
		ref_tensor raw = {
		    .dtype = ETC_LONG, .rank = s.raw_rank[i], .data = s.raw[i], .borrowed = true};
		memcpy(raw.shape, s.raw_shape[i], raw.rank * sizeof *raw.shape);
		s.ix[i].v = malloc((size_t)(nb ? nb : 1) * sizeof(int64_t));
		if (!s.ix[i].v)
			rc = ref_fail(c, ETC_ERR_NOMEM, "out of memory");
		else
			refb_broadcast_copy(s.ix[i].v, &raw, br, bsh);
	}
	/* adjacent indexed dims keep their place; else they go first */
	bool adjacent = true;
	for (uint32_t i = 1; i < s.n; i++)
		if (s.ix[i].dim != s.ix[i - 1].dim + 1)
			adjacent = false;
	bool indexed[ETC_REF_MAX_RANK] = {false};
	for (uint32_t i = 0; i < s.n; i++)
		indexed[s.ix[i].dim] = true;
	uint32_t npre = adjacent && s.n ? s.ix[0].dim : 0;
	int64_t xst[ETC_REF_MAX_RANK], osh[2 * ETC_REF_MAX_RANK], qsh[ETC_REF_MAX_RANK],
	    qst[ETC_REF_MAX_RANK];
	refb_strides(x->rank, x->shape, xst);
	uint32_t ro = 0, nq = 0;
	for (uint32_t j = 0; j < npre; j++)
		osh[ro++] = x->shape[j];
	for (uint32_t j = 0; j < br; j++)
		osh[ro++] = bsh[j];
	for (uint32_t j = npre; j < x->rank; j++)
		if (!indexed[j]) {
			osh[ro++] = x->shape[j];
			qsh[nq] = x->shape[j];
			qst[nq++] = xst[j];
		}
	if (rc == 0 && ro > ETC_REF_MAX_RANK)
		rc = ref_fail(c, ETC_ERR_UNSUPPORTED, "result of rank %u", ro);
	uint64_t total = 1, npre_el = 1, nq_el = 1;
	for (uint32_t j = 0; j < ro; j++)
		total *= (uint64_t)osh[j];
	for (uint32_t j = 0; j < npre; j++)
		npre_el *= (uint64_t)x->shape[j];
	for (uint32_t j = 0; j < nq; j++)
		nq_el *= (uint64_t)qsh[j];
	if (rc == 0 && total > ETC_REF_MAX_BYTES / sizeof(int64_t))
		rc = ref_fail(c, ETC_ERR_LIMIT, "indexing result of %" PRIu64 " elements", total);
	if (rc == 0) {
		plan->off = malloc((size_t)(total ? total : 1) * sizeof *plan->off);
		if (!plan->off)
			rc = ref_fail(c, ETC_ERR_NOMEM, "out of memory");
	}
	if (rc == 0) {
		plan->rank = ro;
		memcpy(plan->shape, osh, ro * sizeof *osh);
		plan->n = total;
		int64_t *o = plan->off;
		int64_t pidx[ETC_REF_MAX_RANK] = {0};
		for (uint64_t p = 0; p < npre_el; p++) {
			int64_t pre_off = 0;
			for (uint32_t j = 0; j < npre; j++)
				pre_off += pidx[j] * xst[j];
			for (uint64_t e = 0; e < nb; e++) {
				int64_t base = pre_off;
				for (uint32_t i = 0; i < s.n; i++)
					base += s.ix[i].v[e] * xst[s.ix[i].dim];
				int64_t qidx[ETC_REF_MAX_RANK] = {0};
				for (uint64_t q = 0; q < nq_el; q++) {
					int64_t at = base;
					for (uint32_t j = 0; j < nq; j++)
						at += qidx[j] * qst[j];
					*o++ = at;
					for (uint32_t j = nq; j-- > 0;) {
						if (++qidx[j] < qsh[j])
							break;
						qidx[j] = 0;
					}
				}
			}
			for (uint32_t j = npre; j-- > 0;) {
				if (++pidx[j] < x->shape[j])
					break;
				pidx[j] = 0;
			}
		}
	}
	adv_free(&s);
	return rc;
}

int ref_op_index(ref_call *c)
{
	const ref_tensor *x;
	const ref_tensor *const *ts;
	size_t nt;
	adv_plan p;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_tensors(c, "indices", 1, true, &ts, &nt));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(adv_plan_make(c, x, ts, nt, &p));
	int rc = ref_tensor_alloc(&c->outs[0], x->dtype, p.rank, p.shape, c->err);
	size_t es = refb_elem_size(x->dtype);
	for (uint64_t i = 0; rc == 0 && i < p.n; i++)
		memcpy((char *)c->outs[0].data + i * es,
		       (const char *)x->data + (size_t)p.off[i] * es, es);
	free(p.off);
	return rc;
}

int ref_op_index_put(ref_call *c)
{
	const ref_tensor *x, *v;
	const ref_tensor *const *ts;
	size_t nt;
	bool acc;
	adv_plan p;
	char b1[160], b2[160];
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_tensors(c, "indices", 1, true, &ts, &nt));
	ETC_TRY(refb_tensor(c, "values", 2, &v));
	ETC_TRY(refb_bool(c, "accumulate", 3, false, &acc));
	ETC_TRY(refb_nouts(c, 1));
	if (ref_dtype_is_float(x->dtype) != ref_dtype_is_float(v->dtype) ||
	    (!ref_dtype_is_float(x->dtype) && x->dtype != v->dtype))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "values of dtype %s for self of dtype %s (expected the same)",
		                etc_scalar_type_name(v->dtype), etc_scalar_type_name(x->dtype));
	ETC_TRY(adv_plan_make(c, x, ts, nt, &p));
	uint32_t r;
	int64_t sh[ETC_REF_MAX_RANK];
	int rc = refb_broadcast(c, "values", v->rank, v->shape, p.rank, p.shape, &r, sh);
	if (rc == 0 && (r != p.rank || memcmp(sh, p.shape, r * sizeof *sh) != 0))
		rc = ref_fail(c, ETC_ERR_MISMATCH,
		              "values %s cannot be broadcast to the indexing result %s",
		              ref_shape_str(b1, sizeof b1, v->rank, v->shape),
		              ref_shape_str(b2, sizeof b2, p.rank, p.shape));
	ref_tensor vb = {0};
	if (rc == 0)
		rc = ref_tensor_alloc(&vb, v->dtype, p.rank, p.shape, c->err);
	if (rc == 0)
		refb_broadcast_copy(vb.data, v, p.rank, p.shape);
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, x->shape, c->err);
	ref_tensor *y = &c->outs[0];
	if (rc == 0)
		memcpy(y->data, x->data, x->numel * refb_elem_size(x->dtype));
	bool fl = ref_dtype_is_float(x->dtype);
	for (uint64_t i = 0; rc == 0 && i < p.n; i++) {
		uint64_t at = (uint64_t)p.off[i];
		if (fl && acc)
			ref_set_f(y, at, ref_get_f(y, at) + ref_get_f(&vb, i));
		else if (fl)
			ref_set_f(y, at, ref_get_f(&vb, i));
		else if (acc)
			ref_set_i(
			    y, at,
			    (int64_t)((uint64_t)ref_get_i(y, at) + (uint64_t)ref_get_i(&vb, i)));
		else
			ref_set_i(y, at, ref_get_i(&vb, i));
	}
	ref_tensor_free(&vb);
	free(p.off);
	return rc;
}
