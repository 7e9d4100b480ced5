/*
 * numgap_rows.c - the comparison of one numeric gap row: the runtime's
 * values read in the reference's layout and dequantized when needed, the
 * .npz CRC checks, and the metrics and verdict (now, or queued for
 * numgap_compare.c).
 */
#include "analysis/numgap_internal.h"
#include "analysis/metrics_private.h"

#include <math.h>
#include <stdio.h>

/* Finishes the deferred CRC-32 check of an .npz array (ETC_ERR_FORMAT naming the member). */
int etc_ng_verify_ref_(const etc_numgap *ng, otensor *r, etc_error *err)
{
	if (!r->check.pending)
		return 0;
	uint32_t crc = etc_crc32(r->check.crc, r->t.data, (size_t)r->t.nbytes);
	ETC_TRY(etc_npz_crc_end_(ng->npz, &r->check, crc, err));
	r->check.pending = false;
	return 0;
}

bool etc_ng_is_int_code_(int st)
{
	return st == ETC_BYTE || st == ETC_CHAR || st == ETC_SHORT || st == ETC_UINT16 ||
	       st == ETC_INT || st == ETC_QINT8 || st == ETC_QUINT8 || st == ETC_QINT32;
}

/* The runtime values of row i: the tensor, permuted and dequantized as decided. */
void etc_ng_row_chain_(etc_numgap *ng, size_t i, etc_values *out)
{
	rowx *x = &ng->xf[i];
	etc_values v;
	etc_values_from_tensor(&v, &ng->act[i]);
	if (x->permute) {
		x->perm.base = v;
		x->perm.t = &ng->act[i];
		etc_values_permuted_(&v, &x->perm);
	}
	if (x->dequant) {
		x->dq.base = v;
		etc_values_dequant_(&v, &x->dq);
	}
	*out = v;
}

void etc_ng_ref_chain_(etc_numgap *ng, size_t i, etc_values *out)
{
	etc_ng_ref_read_(ng, i, &ng->ref[i], &ng->xf[i].dq_ref, out);
}

void etc_ng_ref_read_(const etc_numgap *ng, size_t i, const etc_tensor *codes, etc_dequant *d,
                      etc_values *out)
{
	etc_values v;
	etc_values_from_tensor(&v, codes);
	if (ng->xf[i].dequant_ref) {
		*d = ng->xf[i].dq_ref;
		d->base = v;
		etc_values_dequant_(&v, d);
	}
	*out = v;
}

/* The values row i compares (numgap_compare.c calls it from its threads). */
void etc_ng_row_values_(void *ctx, size_t i, etc_values *actual, etc_values *reference)
{
	etc_numgap *ng = ctx;
	etc_ng_row_chain_(ng, i, actual);
	etc_ng_ref_chain_(ng, i, reference);
}

static void tensor_sizes(const etc_tensor *t, int64_t *s, uint32_t cap)
{
	for (uint32_t k = 0; k < t->ndim && k < cap; k++)
		s[k] = etc_tensor_size(t, k);
}

/* A layout that makes the runtime read like the reference, or false. */
static bool layout_match(const etc_numgap *ng, const etc_tensor *a, const etc_tensor *r, rowx *x,
                         etc_numgap_row *row)
{
	if (ng->opt.layout != ETC_NUMGAP_LAYOUT_AUTO || a->ndim != r->ndim ||
	    a->numel != r->numel || a->ndim > ETC_PERMUTE_MAX_DIMS)
		return false;
	int64_t sa[ETC_PERMUTE_MAX_DIMS], sr[ETC_PERMUTE_MAX_DIMS];
	tensor_sizes(a, sa, ETC_PERMUTE_MAX_DIMS);
	tensor_sizes(r, sr, ETC_PERMUTE_MAX_DIMS);
	if (!etc_channels_last_match_(sa, sr, a->ndim, &x->perm, row->layout, sizeof row->layout))
		return false;
	x->permute = true;
	return true;
}

/* A row read in the reference's layout through a permutation: its
 * reference dequantization would need the runtime's order (not done). */
static bool layout_differs(const rowx *x)
{
	return x->permute;
}

/* A zero point outside the range of the row's integer dtype: the parameters
 * are another tensor's (a --quant-params mistake), said as a warning. */
static void quant_range_check(etc_numgap *ng, const etc_numgap_row *row, const etc_ng_qparams *q,
                              const char *dtype)
{
	double lo = 0, hi = 0;
	if (!strcmp(dtype, "int8"))
		lo = -128, hi = 127;
	else if (!strcmp(dtype, "uint8"))
		lo = 0, hi = 255;
	else
		return;
	for (uint32_t c = 0; c < q->channels; c++)
		if (q->zero_point[c] < lo || q->zero_point[c] > hi) {
			etc_error e;
			etc_error_clear(&e);
			etc_ng_warn_(ng, &e,
			             "debug handle %lld (%s): zero point %g is outside %s's range "
			             "[%g, %g] (%s): the dequantized values are not this tensor's",
			             (long long)(row->handle_count ? row->handles[0] : -1),
			             *row->nodes ? row->nodes : row->ops, q->zero_point[c], dtype,
			             lo, hi, q->source);
			return;
		}
}

/* The same scale and zero point for every channel (scales to 1e-6 relative). */
static bool same_qparams(const etc_ng_qparams *a, const etc_ng_qparams *b)
{
	if (a->channels != b->channels)
		return false;
	for (uint32_t c = 0; c < a->channels; c++)
		if (a->zero_point[c] != b->zero_point[c] ||
		    fabs(a->scale[c] - b->scale[c]) > 1e-6 * fabs(b->scale[c]))
			return false;
	return true;
}

bool etc_ng_item_qgraph_(etc_numgap *ng, const item *it, etc_ng_qparams *q, char *why, size_t cap)
{
	/* the node of the largest handle of the compared event, or its single user */
	const etc_graph_node *best = NULL;
	if (it->ev)
		for (uint32_t k = 0; k < it->ev->node_count; k++)
			if (!best || it->ev->nodes[k]->debug_handle >= best->debug_handle)
				best = it->ev->nodes[k];
	long idx = best ? etc_ng_graph_index_(&ng->g_rt, best) : -1;
	return etc_ng_qgraph_find_(&ng->g_rt, idx, &ng->arena, q, why, cap);
}

bool etc_ng_dequant_of_(etc_dequant *d, const etc_ng_qparams *q, const etc_tensor *t)
{
	uint64_t inner = 1;
	if (q->channels > 1) {
		int64_t axis = q->axis < 0 ? q->axis + (int64_t)t->ndim : q->axis;
		if (axis < 0 || axis >= (int64_t)t->ndim ||
		    etc_tensor_size(t, (uint32_t)axis) != (int64_t)q->channels)
			return false;
		for (uint32_t k = (uint32_t)axis + 1; k < t->ndim; k++)
			inner *= (uint64_t)etc_tensor_size(t, k);
	}
	d->scale = q->scale;
	d->zero_point = q->zero_point;
	d->channels = q->channels;
	d->inner = inner ? inner : 1;
	return true;
}

/* Quantization parameters for the runtime side of `row` (0 found, 1 not: reason set). */
static int find_qparams(etc_numgap *ng, const etc_numgap_row *row, const item *it,
                        etc_ng_qparams *q, char *why, size_t cap)
{
	const etc_ng_qparams *f = NULL;
	if (ng->has_qfile) {
		f = etc_ng_qfile_find_(&ng->qfile, row->handles, row->handle_count);
		if (!f)
			f = etc_ng_qfile_find_(&ng->qfile, row->reference_handles,
			                       row->reference_handle_count);
	}
	snprintf(why, cap,
	         "needs quantization parameters (--quant-params): no quantize or "
	         "dequantize node with literal scale and zero point in the ETRecord");
	etc_ng_qparams g;
	bool in_graph = etc_ng_item_qgraph_(ng, it, &g, why, cap);
	if (f) {
		/* the file wins, but not in silence where the record's own node says otherwise */
		if (in_graph && !same_qparams(f, &g)) {
			etc_error e;
			etc_error_clear(&e);
			etc_ng_warn_(
			    ng, &e,
			    "debug handle %lld (%s): --quant-params says scale %.9g, zero point "
			    "%g, but the ETRecord's %s: the file's are used; is it this "
			    "model's?",
			    (long long)(row->handle_count ? row->handles[0] : -1),
			    *row->nodes ? row->nodes : row->ops, f->scale[0], f->zero_point[0],
			    g.source);
		}
		*q = *f;
		return ETC_NUMGAP_QUANT_FILE;
	}
	if (in_graph) {
		*q = g;
		return ETC_NUMGAP_QUANT_ETRECORD;
	}
	return ETC_NUMGAP_QUANT_NONE;
}

/*
 * Sets up the dequantization of row i along the reference's layout (and of
 * the reference too when `both`: two integer tensors of a quantized value);
 * false with the reason, or, when `both`, false without one when no
 * parameters are known (the codes are then compared exactly).
 */
static bool setup_dequant(etc_numgap *ng, size_t i, const item *it, const etc_tensor *ref,
                          bool both)
{
	etc_numgap_row *row = &ng->rows[i];
	rowx *x = &ng->xf[i];
	etc_ng_qparams q;
	char why[160];
	int src = find_qparams(ng, row, it, &q, why, sizeof why);
	if (src == ETC_NUMGAP_QUANT_NONE && both)
		return false;
	if (src == ETC_NUMGAP_QUANT_NONE) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "%s", why);
		return false;
	}
	if (!etc_ng_dequant_of_(&x->dq, &q, ref)) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason,
		         "quantization parameters do not fit: %u channels along axis %lld of "
		         "shape %.40s",
		         q.channels, (long long)q.axis, row->reference_shape);
		if (src == ETC_NUMGAP_QUANT_FILE && ng->qfile_misfit < 0)
			ng->qfile_misfit = (long)i;
		return false;
	}
	x->dequant = true;
	if (both) {
		x->dequant_ref = true;
		x->dq_ref = x->dq;
	}
	quant_range_check(ng, row, &q, row->dtype);
	row->quant_source = src;
	snprintf(row->quant, sizeof row->quant, "%s", q.source);
	return true;
}

double etc_ng_distance_of_(int d, const etc_metrics *m)
{
	if (d == ETC_NUMGAP_L1)
		return m->count ? m->l1 * (double)m->count : 0.0;
	if (d == ETC_NUMGAP_SNR)
		return m->snr_db;
	return m->mse;
}

void etc_ng_compare_pair_(etc_numgap *ng, size_t i, const item *ait, const otensor *a, otensor *r,
                          const etc_gate *gate, etc_error *err, int *rc)
{
	etc_numgap_row *row = &ng->rows[i];
	ng->act[i] = a->t;
	ng->ref[i] = r->t;
	row->dtype = etc_scalar_type_name(a->t.scalar_type);
	row->reference_dtype = etc_scalar_type_name(r->t.scalar_type);
	etc_shape_str_(&a->t, row->shape, sizeof row->shape);
	etc_shape_str_(&r->t, row->reference_shape, sizeof row->reference_shape);
	if (!a->has_data || !r->has_data) {
		row->status = ETC_ROW_NO_DATA;
		snprintf(row->reason, sizeof row->reason, "%s: %.140s",
		         !a->has_data ? "runtime" : "reference", !a->has_data ? a->why : r->why);
		return;
	}
	if ((a->t.numel != r->t.numel || !etc_shape_equal_(&a->t, &r->t)) &&
	    !layout_match(ng, &a->t, &r->t, &ng->xf[i], row)) {
		row->status = ETC_ROW_SHAPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "shape %.60s against reference %.60s",
		         row->shape, row->reference_shape);
		return;
	}
	bool af = etc_scalar_type_is_float_(a->t.scalar_type);
	bool rf = etc_scalar_type_is_float_(r->t.scalar_type);
	if (!af && rf && etc_ng_is_int_code_(a->t.scalar_type)) {
		if (!setup_dequant(ng, i, ait, &r->t, false))
			return;
	} else if (!af && !rf && etc_ng_is_int_code_(a->t.scalar_type) &&
	           etc_ng_is_int_code_(r->t.scalar_type) && !layout_differs(&ng->xf[i])) {
		/* a quantized tensor on both sides: compared in real units, as its
		   dequantize reads it, not code for code (a code flipped at a rounding
		   boundary of the float64 chain is not a failure; the zero point does
		   not weigh in the SNR); codes without parameters stay exact */
		setup_dequant(ng, i, ait, &r->t, true);
	} else if (af != rf) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "dtype %s against reference %s",
		         row->dtype, row->reference_dtype);
		return;
	}
	if (r->stream == ETC_NG_PRE && r->pre_vs == a->t.data && !ng->xf[i].permute &&
	    !ng->xf[i].dequant) {
		/* compared as the reference graph's node ran (numgap_refgraph.c) */
		row->metrics = r->pre_m;
		row->has_metrics = true;
		row->gap = etc_ng_distance_of_(ng->opt.distance, &row->metrics);
		row->status = etc_gate_judge_(&row->metrics, gate, row->reason, sizeof row->reason);
		return;
	}
	if (r->dropped) {
		/* not expected: a row compares what the run judged no row would */
		row->status = ETC_ROW_NO_DATA;
		snprintf(row->reason, sizeof row->reason,
		         "reference: its values were not kept (drop_reference_values)");
		return;
	}
	etc_values va, vr;
	etc_ng_row_chain_(ng, i, &va);
	etc_ng_ref_chain_(ng, i, &vr);
	if (r->check.pending) {
		/* the reference bytes are checksummed in the comparison's own pass */
		uint32_t crc = r->check.crc;
		bool done = false;
		*rc = etc_metrics_compare_crc_(&vr, &va, &row->metrics, &crc, &done, err);
		if (*rc == 0 && done) {
			*rc = etc_npz_crc_end_(ng->npz, &r->check, crc, err);
			r->check.pending = false;
		}
		if (*rc == 0)
			*rc = etc_ng_verify_ref_(ng, r, err);
	} else {
		/* compared after alignment, rows spread over the threads (numgap_compare.c) */
		*rc = etc_ng_pending_add_(&ng->pending, i, err);
		return;
	}
	if (*rc < 0)
		return;
	row->has_metrics = true;
	row->gap = etc_ng_distance_of_(ng->opt.distance, &row->metrics);
	row->status = etc_gate_judge_(&row->metrics, gate, row->reason, sizeof row->reason);
}
