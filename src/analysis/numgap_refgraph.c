/*
 * numgap_refgraph.c - the numeric gap's third reference source: the
 * ETRecord's own graph run by the reference executor (reference.h). Every
 * node with a debug handle is a reference item; its outputs are kept only
 * when a runtime item shares its handle (the rows need them). In the same
 * callback the node is re-run on the runtime's own logged inputs (its local
 * error); the re-run's outputs are compared after alignment, through the
 * row's own reading of the runtime tensor (layout, dequantization). Also
 * the score of a set of inputs: how well the graph run on them reproduces
 * the runtime's program outputs.
 */
#include "analysis/numgap_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A runtime item by the largest of its handles. */
typedef struct hitem {
	int64_t handle;
	uint32_t item;
} hitem;

typedef struct gctx {
	etc_numgap *ng;
	gather *g;
	const etc_refgraph *graph;
	hitem *bymax; /* runtime items by their largest handle */
	size_t nmax;
	int64_t *all; /* every runtime handle, ascending, unique */
	size_t nall;
	int rc;
} gctx;

static int cmp_hitem(const void *a, const void *b)
{
	const hitem *x = a, *y = b;
	if (x->handle != y->handle)
		return x->handle < y->handle ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The runtime item whose largest handle is h (the later one on a tie), or -1. */
static long item_by_max(const gctx *c, int64_t h)
{
	size_t lo = 0, hi = c->nmax;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->bymax[mid].handle <= h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && c->bymax[lo - 1].handle == h ? (long)c->bymax[lo - 1].item : -1;
}

static bool runtime_has(const gctx *c, int64_t h)
{
	return bsearch(&h, c->all, c->nall, sizeof *c->all, cmp_i64) != NULL;
}

/* An etc_tensor over a reference tensor (sizes and data borrowed). */
static void tensor_of(const etc_reftensor *v, etc_tensor *t)
{
	memset(t, 0, sizeof *t);
	t->scalar_type = v->dtype;
	t->ndim = v->rank;
	t->sizes_le = (const uint8_t *)v->shape; /* int64, native = little-endian hosts */
	t->numel = v->numel;
	t->nbytes = v->numel * etc_scalar_type_size(v->dtype);
	t->data = v->data;
}

/* A copy of reference tensor v that outlives the run: shape in the arena,
 * data in the arena (keep) or nowhere. */
static int keep_tensor(etc_numgap *ng, const etc_reftensor *v, bool data, etc_tensor *t,
                       etc_error *err)
{
	tensor_of(v, t);
	int64_t *shape = etc_arena_alloc(&ng->arena, v->rank ? v->rank : 1, sizeof *shape);
	if (!shape)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (v->rank)
		memcpy(shape, v->shape, v->rank * sizeof *shape);
	t->sizes_le = (const uint8_t *)shape;
	t->data = NULL;
	t->offset = -1;
	if (!data)
		return 0;
	size_t nb = (size_t)t->nbytes;
	void *p = etc_arena_alloc(&ng->arena, nb ? nb : 1, 1);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		                "out of memory keeping a reference output of %llu bytes",
		                (unsigned long long)t->nbytes);
	if (nb)
		memcpy(p, v->data, nb);
	t->data = p;
	t->offset = 0;
	return 0;
}

/* Output `pos` of runtime item `it` that stands for output `pos` of a node with `count` outputs. */
static const otensor *runtime_output(const gather *g, const item *it, uint32_t count, uint32_t pos)
{
	if (it->nout == count && pos < count)
		return &g->ts[it->first + pos];
	if (it->nout == 1 && pos == 0)
		return &g->ts[it->first];
	return NULL;
}

static bool same_shape(const etc_tensor *t, const etc_reftensor *v)
{
	if (t->ndim != v->rank || t->numel != v->numel)
		return false;
	for (uint32_t k = 0; k < v->rank; k++)
		if (etc_tensor_size(t, k) != v->shape[k])
			return false;
	return true;
}

/* One replacement input of a re-run: the runtime's tensor as a reference
 * tensor (copied when its data is not aligned for its dtype). */
typedef struct repl {
	etc_reftensor v;
	int64_t shape[ETC_REF_MAX_RANK];
	void *copy;
} repl;

/* The node's re-run on the runtime's own logged inputs; its outputs go to
 * the item's otensors (local), the counts and note to the item. */
static int rerun(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd, item *it,
                 etc_error *err)
{
	const etc_refsrc *srcs = NULL;
	size_t ns = etc_refgraph_node_inputs(c->graph, n, &srcs);
	repl *rp = calloc(ns ? ns : 1, sizeof *rp);
	const etc_reftensor **in = calloc(ns ? ns : 1, sizeof *in);
	etc_sbuf missing = {0};
	int rc = 0;
	if (!rp || !in) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	uint32_t acts = 0, standins = 0, replaced = 0;
	for (size_t k = 0; k < ns; k++) {
		if (srcs[k].kind != ETC_REFSRC_NODE)
			continue; /* parameters, constants and program inputs: the record's */
		acts++;
		const etc_refnode *p = etc_refgraph_node(c->graph, srcs[k].index);
		const etc_reftensor *refv = etc_refrun_output(run, srcs[k].index, srcs[k].output);
		long ri = p && p->debug_handle >= 0 ? item_by_max(c, p->debug_handle) : -1;
		const otensor *o = ri >= 0 ? runtime_output(c->g, &c->g->items[ri], p->output_count,
		                                            srcs[k].output)
		                           : NULL;
		const char *why = NULL;
		if (!p || !refv)
			why = "not computed";
		else if (!o)
			why = "not logged";
		else if (!o->has_data || (!o->t.data && o->t.numel))
			why = "logged without data";
		else if (!same_shape(&o->t, refv) || o->t.ndim > ETC_REF_MAX_RANK)
			why = "logged in another shape";
		if (why) {
			standins++;
			const char *name = p ? p->name : "?";
			if (p && srcs[k].output < p->output_count && p->output_names &&
			    p->output_names[srcs[k].output][0] && p->output_count > 1)
				name = p->output_names[srcs[k].output];
			etc_sbuf_printf(&missing, "%snode %s %s", missing.len ? ", " : "", name,
			                why);
			continue;
		}
		repl *r = &rp[k];
		for (uint32_t d = 0; d < o->t.ndim; d++)
			r->shape[d] = etc_tensor_size(&o->t, d);
		r->v.dtype = o->t.scalar_type;
		r->v.rank = o->t.ndim;
		r->v.shape = o->t.ndim ? r->shape : NULL;
		r->v.numel = o->t.numel;
		r->v.data = o->t.data;
		size_t es = etc_scalar_type_size(o->t.scalar_type);
		if (es && ((uintptr_t)o->t.data % es) != 0) {
			/* debug buffer tensors are 64-byte aligned in memory, not in the file */
			r->copy = malloc((size_t)o->t.nbytes ? (size_t)o->t.nbytes : 1);
			if (!r->copy) {
				rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
				goto done;
			}
			memcpy(r->copy, o->t.data, (size_t)o->t.nbytes);
			r->v.data = r->copy;
		}
		in[k] = &r->v;
		replaced++;
	}
	it->local_inputs = acts;
	it->local_standins = standins;
	char note[200] = "";
	if (standins)
		snprintf(note, sizeof note, "inputs: %u of %u from the reference (%.150s)",
		         standins, acts, missing.p ? missing.p : "");
	etc_refvalues *vals = NULL;
	if (replaced) {
		etc_error e2;
		etc_error_clear(&e2);
		int r = etc_refrun_eval(run, n, in, &vals, &e2);
		if (r == ETC_ERR_NOMEM) {
			if (err)
				*err = e2;
			rc = r;
			goto done;
		}
		if (r < 0) {
			snprintf(note, sizeof note,
			         "no local error: the re-run on the runtime's inputs "
			         "failed: %.120s",
			         e2.message);
			vals = NULL;
			replaced = 0;
			it->local_note = etc_arena_strdup(&c->ng->arena, note, strlen(note));
			goto done;
		}
	}
	if (*note)
		it->local_note = etc_arena_strdup(&c->ng->arena, note, strlen(note));
	for (uint32_t j = 0; j < it->nout && j < nd->output_count; j++) {
		otensor *ot = &c->g->ts[it->first + j];
		const etc_reftensor *v =
		    vals ? (j < etc_refvalues_count(vals) ? etc_refvalues_get(vals, j) : NULL)
		         : etc_refrun_output(run, n, j);
		if (!v)
			continue;
		if (!vals) {
			/* nothing replaced: the re-run is the reference itself */
			ot->local = ot->t;
			ot->has_local = ot->t.data != NULL || ot->t.numel == 0;
			continue;
		}
		if ((rc = keep_tensor(c->ng, v, true, &ot->local, err)) < 0)
			break;
		ot->has_local = true;
	}
	etc_refvalues_free(vals);
done:
	for (size_t k = 0; rp && k < ns; k++)
		free(rp[k].copy);
	free(rp);
	free(in);
	etc_sbuf_free(&missing);
	return rc;
}

static const char *status_name(int st)
{
	return st == ETC_REFNODE_UNSUPPORTED ? "its op is not in the reference library"
	       : st == ETC_REFNODE_SKIPPED   ? "an input was not computed"
	       : st == ETC_REFNODE_FAILED    ? "the op refused its inputs"
	                                     : "not computed";
}

static int on_node(void *user, const etc_refrun *run, size_t n, etc_error *err)
{
	gctx *c = user;
	const etc_refnode *nd = etc_refgraph_node(c->graph, n);
	if (!nd || nd->debug_handle < 0 || !nd->output_count)
		return 0;
	gather *g = c->g;
	item *it = NULL;
	ETC_TRY(etc_ng_push_item_(g, &it, err));
	it->side = ETC_NUMGAP_REFERENCE;
	it->order = (uint32_t)(g->n - 1);
	it->name = nd->name;
	ETC_TRY(etc_ng_set_handles_(&c->ng->arena, it, &nd->debug_handle, 1, err));
	const char *why = NULL;
	int st = etc_refrun_status(run, n, &why);
	bool keep = runtime_has(c, nd->debug_handle);
	for (uint32_t j = 0; j < nd->output_count; j++) {
		otensor *o = NULL;
		ETC_TRY(etc_ng_push_tensor_(g, &o, err));
		it->nout++;
		const etc_reftensor *v =
		    st == ETC_REFNODE_COMPUTED ? etc_refrun_output(run, n, j) : NULL;
		if (!v) {
			o->t.scalar_type = -1; /* "unknown" */
			snprintf(o->why, sizeof o->why, "not computed (%.40s): %.60s",
			         status_name(st), why && *why ? why : nd->op);
			continue;
		}
		ETC_TRY(keep_tensor(c->ng, v, keep, &o->t, err));
		o->has_data = keep;
		if (!keep)
			snprintf(o->why, sizeof o->why,
			         "not kept: no runtime output has its handle");
	}
	if (keep && st == ETC_REFNODE_COMPUTED)
		ETC_TRY(rerun(c, run, n, nd, it, err));
	return 0;
}

int etc_ng_gather_graph_(etc_numgap *ng, gather *g, size_t nrt, const etc_numgap_reference *ref,
                         etc_error *err)
{
	gctx c = {ng, g, ref->graph, NULL, 0, NULL, 0, 0};
	size_t total = 0;
	for (size_t i = 0; i < nrt; i++)
		total += g->items[i].nh;
	c.bymax = malloc((nrt ? nrt : 1) * sizeof *c.bymax);
	c.all = malloc((total ? total : 1) * sizeof *c.all);
	if (!c.bymax || !c.all) {
		free(c.bymax);
		free(c.all);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < nrt; i++) {
		const item *it = &g->items[i];
		if (it->nh)
			c.bymax[c.nmax++] = (hitem){it->handles[it->nh - 1], (uint32_t)i};
		memcpy(c.all + c.nall, it->handles, it->nh * sizeof *c.all);
		c.nall += it->nh;
	}
	qsort(c.bymax, c.nmax, sizeof *c.bymax, cmp_hitem);
	qsort(c.all, c.nall, sizeof *c.all, cmp_i64);
	size_t k = 0;
	for (size_t i = 0; i < c.nall; i++)
		if (!k || c.all[i] != c.all[k - 1])
			c.all[k++] = c.all[i];
	c.nall = k;
	int rc = etc_refgraph_run(ref->graph, ref->inputs, ref->input_count, on_node, &c, err);
	free(c.bymax);
	free(c.all);
	return rc;
}

/* Local metrics of every row whose reference has a re-run, read as the row reads the runtime. */
int etc_ng_local_metrics_(etc_numgap *ng, etc_error *err)
{
	for (size_t i = 0; i < ng->nrows; i++) {
		etc_numgap_row *r = &ng->rows[i];
		if (!ng->loc || !ng->loc[i].sizes_le)
			continue;
		if (!r->has_metrics) {
			if (!*r->local_note)
				snprintf(r->local_note, sizeof r->local_note,
				         "no local error: the row was not compared");
			continue;
		}
		etc_values va, vl;
		etc_ng_row_chain_(ng, i, &va);
		etc_values_from_tensor(&vl, &ng->loc[i]);
		if (va.count != vl.count) {
			snprintf(r->local_note, sizeof r->local_note,
			         "no local error: the re-run has %llu values, the runtime %llu",
			         (unsigned long long)vl.count, (unsigned long long)va.count);
			continue;
		}
		ETC_TRY(etc_metrics_compare(&vl, &va, &r->local, err));
		r->has_local = true;
		r->local_snr = r->local.identical ? INFINITY : r->local.snr_db;
	}
	return 0;
}

/* --- scoring a set of inputs ----------------------------------------------------------- */

typedef struct sctx {
	const etc_refgraph *graph;
	const etc_value *outs; /* the runtime's program outputs, flattened below */
	etc_tensor *rt;
	size_t nrt;
	double worst;
	size_t compared;
} sctx;

static int on_output(void *user, const etc_refrun *run, size_t n, etc_error *err)
{
	sctx *s = user;
	for (size_t k = 0; k < etc_refgraph_output_count(s->graph) && k < s->nrt; k++) {
		size_t node;
		uint32_t out;
		if (etc_refgraph_output(s->graph, k, &node, &out) < 0 || node != n)
			continue;
		const etc_reftensor *v = etc_refrun_output(run, n, out);
		if (!v || !s->rt[k].data || s->rt[k].numel != v->numel)
			continue;
		etc_tensor t;
		tensor_of(v, &t);
		etc_values vr, va;
		etc_values_from_tensor(&vr, &t);
		etc_values_from_tensor(&va, &s->rt[k]);
		etc_metrics m;
		ETC_TRY(etc_metrics_compare(&vr, &va, &m, err));
		double snr = m.identical ? INFINITY : isnan(m.snr_db) ? -INFINITY : m.snr_db;
		if (!s->compared || snr < s->worst)
			s->worst = snr;
		s->compared++;
	}
	return 0;
}

int etc_numgap_inputs_score(const etc_inspector *insp, const char *block, const etc_refgraph *g,
                            const etc_reftensor *inputs, size_t n, double *snr, etc_error *err)
{
	*snr = NAN;
	const char *name = block ? block : "Execute";
	const etc_event_block *blk = NULL;
	for (size_t b = 0; b < etc_inspector_block_count(insp) && !blk; b++) {
		const etc_event_block *x = etc_inspector_block(insp, b);
		if (x->name.len == strlen(name) && !memcmp(x->name.ptr, name, x->name.len))
			blk = x;
	}
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (!blk || !blk->run_count || !buf)
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "no program outputs to score inputs with (block \"%s\", debug "
		                "buffer)",
		                name);
	size_t cnt = 0;
	for (uint32_t v = blk->output_start[0]; v < blk->output_start[1]; v++)
		if (blk->outputs[v].type == ETC_VALUE_TENSOR ||
		    blk->outputs[v].type == ETC_VALUE_TENSOR_LIST)
			cnt += blk->outputs[v].tensor_count;
	sctx s = {g, NULL, calloc(cnt ? cnt : 1, sizeof(etc_tensor)), 0, NAN, 0};
	if (!s.rt)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (uint32_t v = blk->output_start[0]; v < blk->output_start[1]; v++) {
		const etc_value *val = &blk->outputs[v];
		if (val->type != ETC_VALUE_TENSOR && val->type != ETC_VALUE_TENSOR_LIST)
			continue;
		for (uint32_t i = 0; i < val->tensor_count; i++) {
			etc_error e2;
			if (etc_value_tensor(val, i, buf, &s.rt[s.nrt], &e2) < 0)
				memset(&s.rt[s.nrt], 0, sizeof s.rt[s.nrt]);
			s.nrt++;
		}
	}
	int rc = etc_refgraph_run(g, inputs, n, on_output, &s, err);
	if (rc == 0 && s.compared)
		*snr = s.worst;
	free(s.rt);
	return rc;
}
