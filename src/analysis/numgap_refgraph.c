/*
 * numgap_refgraph.c - the numeric gap's third reference source: the
 * ETRecord's own graph run by the reference executor (reference.h). Every
 * node with a debug handle is a reference item; its outputs are kept only
 * when a runtime item shares its handle (the rows need them). In the same
 * callback the node is re-run on the runtime's own logged inputs (its local
 * error): compared at once when the runtime output is a plain float tensor
 * of the same shape, else kept and compared after alignment through the
 * row's own reading of the runtime tensor (layout, dequantization). A node
 * the runtime did not log is re-run on runtime values too, so that its
 * users read what the runtime computed; those values are freed after their
 * last user. Also the score of a set of inputs: how well the graph run on
 * them reproduces the runtime's program outputs.
 *
 * With drop_reference_values the rows are known before the run: a group of
 * runtime items sharing handles is compared with its node of the largest
 * handle (numgap_align.c's rule), so that node's outputs are compared with
 * the runtime's as it runs, summarized (first values, min/max/mean) and
 * not kept. Kept are only the outputs whose row reads the runtime through
 * a layout or a dequantization (set up after alignment) and the first
 * failing row's (the first-divergence plots read it). An output the run
 * holds in another order (a large weight's transpose, kept as the record's
 * bytes) is read where it lies: its shape alone where only the shape is
 * needed, and a strided reading for its comparison and summary; a dense copy
 * is made only to keep it.
 */
#include "analysis/numgap_internal.h"
#include "analysis/values_private.h"
#include "format/tensor_private.h"

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
	/* per node: its re-run on runtime values when unlogged (NULL: none), and
	 * the reads of its outputs still to come */
	etc_refvalues **derived;
	uint32_t *users;
	/* drop_reference_values: the rows, known before the run */
	bool stream;
	etc_gate gate;
	uint32_t *acomp;  /* per runtime handle (all): its group */
	int32_t *rt_last; /* per group: the runtime item compared */
	long *ref_last;   /* per group: the node compared, -1 none */
	size_t cand;      /* the first failing row's reference otensor so far, or SIZE_MAX */
	uint64_t cand_key;
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

/* Index of handle h among the runtime's, or -1. */
static long handle_index(const gctx *c, int64_t h)
{
	const int64_t *p = bsearch(&h, c->all, c->nall, sizeof *c->all, cmp_i64);
	return p ? (long)(p - c->all) : -1;
}

static bool runtime_has(const gctx *c, int64_t h)
{
	return handle_index(c, h) >= 0;
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

/* Output i of node n without a copy: its shape and where its values lie
 * (etc_refrun_output_layout); NULL when not computed. */
static const etc_reftensor *held(const etc_refrun *run, size_t n, uint32_t i, etc_reftensor *v,
                                 int64_t *strides, bool *strided)
{
	int rc = etc_refrun_output_layout(run, n, i, v, strides);
	*strided = rc == 1;
	return rc >= 0 ? v : NULL;
}

static int copy_failed(const etc_refnode *nd, uint32_t output, etc_error *err)
{
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
	                "node %s: out of memory copying reference output %u", nd->name, output);
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

static bool ref_dtype_float(int dtype)
{
	return dtype == ETC_DOUBLE || dtype == ETC_FLOAT;
}

/*
 * Runtime output `o` of item `it`, integer codes of a float value (`refv`),
 * dequantized into r (in refv's dtype) with the parameters its row would
 * use (--quant-params, else the ETRecord's quantize/dequantize node): 0, 1
 * when none are known, or an error.
 */
static int dequant_input(gctx *c, const item *it, const otensor *o, const etc_reftensor *refv,
                         repl *r, etc_error *err)
{
	etc_ng_qparams q;
	const etc_ng_qparams *f =
	    c->ng->has_qfile ? etc_ng_qfile_find_(&c->ng->qfile, it->handles, it->nh) : NULL;
	char why[160];
	if (f)
		q = *f;
	else if (!etc_ng_item_qgraph_(c->ng, it, &q, why, sizeof why))
		return 1;
	etc_dequant d;
	if (!etc_ng_dequant_of_(&d, &q, &o->t))
		return 1;
	size_t es = refv->dtype == ETC_DOUBLE ? 8 : 4;
	r->copy = malloc(o->t.numel ? (size_t)o->t.numel * es : 1);
	if (!r->copy)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	etc_values v;
	etc_values_from_tensor(&d.base, &o->t);
	etc_values_dequant_(&v, &d);
	double buf[256];
	for (uint64_t i = 0; i < o->t.numel; i += 256) {
		size_t m = o->t.numel - i < 256 ? (size_t)(o->t.numel - i) : 256;
		v.read(v.src, i, m, buf);
		for (size_t k = 0; k < m; k++)
			if (es == 8)
				((double *)r->copy)[i + k] = buf[k];
			else
				((float *)r->copy)[i + k] = (float)buf[k];
	}
	for (uint32_t k = 0; k < o->t.ndim; k++)
		r->shape[k] = etc_tensor_size(&o->t, k);
	r->v.dtype = refv->dtype;
	r->v.rank = o->t.ndim;
	r->v.shape = o->t.ndim ? r->shape : NULL;
	r->v.numel = o->t.numel;
	r->v.data = r->copy;
	return 0;
}

/* The replacements of a node's tensor inputs by runtime values. */
typedef struct inputs_of {
	size_t ns;
	repl *rp;
	const etc_reftensor **in;
	uint32_t acts, standins, replaced;
	etc_sbuf missing; /* "node X not logged, ..." */
} inputs_of;

static void inputs_free(inputs_of *x)
{
	for (size_t k = 0; x->rp && k < x->ns; k++)
		free(x->rp[k].copy);
	free(x->rp);
	free(x->in);
	etc_sbuf_free(&x->missing);
	memset(x, 0, sizeof *x);
}

/*
 * For each tensor input of node n that a node produces: the runtime's
 * logged value (its producer's handle is the largest of a runtime item's),
 * else the producer's own re-run on runtime values (an unlogged view or
 * copy keeps what the runtime computed), else nothing: the reference stands
 * in. Parameters and program inputs are the record's.
 */
static int runtime_inputs(gctx *c, const etc_refrun *run, size_t n, inputs_of *x, etc_error *err)
{
	const etc_refsrc *srcs = NULL;
	memset(x, 0, sizeof *x);
	x->ns = etc_refgraph_node_inputs(c->graph, n, &srcs);
	x->rp = calloc(x->ns ? x->ns : 1, sizeof *x->rp);
	x->in = calloc(x->ns ? x->ns : 1, sizeof *x->in);
	if (!x->rp || !x->in)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t k = 0; k < x->ns; k++) {
		if (srcs[k].kind != ETC_REFSRC_NODE)
			continue;
		x->acts++;
		size_t pi = srcs[k].index;
		const etc_refnode *p = etc_refgraph_node(c->graph, pi);
		etc_reftensor refm;
		int64_t st[ETC_REF_MAX_RANK];
		bool strided;
		/* the shape is all it needs: no copy of a transposed weight */
		const etc_reftensor *refv = held(run, pi, srcs[k].output, &refm, st, &strided);
		long ri = p && p->debug_handle >= 0 ? item_by_max(c, p->debug_handle) : -1;
		const otensor *o = ri >= 0 ? runtime_output(c->g, &c->g->items[ri], p->output_count,
		                                            srcs[k].output)
		                           : NULL;
		const char *why = NULL;
		/* without a reference value (not computed) the op itself checks the shape */
		if (!p)
			why = "not computed";
		else if (!o && c->derived && c->derived[pi] &&
		         srcs[k].output < etc_refvalues_count(c->derived[pi])) {
			x->in[k] = etc_refvalues_get(c->derived[pi], srcs[k].output);
			x->replaced++;
			continue;
		} else if (!o)
			why = refv ? "not logged" : "not logged, not computed";
		else if (!o->has_data || (!o->t.data && o->t.numel))
			why = "logged without data";
		else if ((refv && !same_shape(&o->t, refv)) || o->t.ndim > ETC_REF_MAX_RANK)
			why = "logged in another shape";
		else if (refv && ref_dtype_float(refv->dtype) &&
		         etc_ng_is_int_code_(o->t.scalar_type)) {
			/* the runtime logged a float value's quantized codes: its
			   consumer reads their real values, as the row reads them */
			int q = dequant_input(c, &c->g->items[ri], o, refv, &x->rp[k], err);
			if (q < 0)
				return q;
			if (q == 0) {
				x->in[k] = &x->rp[k].v;
				x->replaced++;
				continue;
			}
			why = "logged as integer codes without quantization parameters";
		}
		if (why) {
			x->standins++;
			const char *name = p ? p->name : "?";
			if (p && srcs[k].output < p->output_count && p->output_names &&
			    p->output_names[srcs[k].output][0] && p->output_count > 1)
				name = p->output_names[srcs[k].output];
			etc_sbuf_printf(&x->missing, "%snode %s %s", x->missing.len ? ", " : "",
			                name, why);
			continue;
		}
		repl *r = &x->rp[k];
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
			if (!r->copy)
				return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			memcpy(r->copy, o->t.data, (size_t)o->t.nbytes);
			r->v.data = r->copy;
		}
		x->in[k] = &r->v;
		x->replaced++;
	}
	return 0;
}

/* An unlogged node's value as the runtime computed it, when one of its
 * inputs carries runtime values: its re-run on them (kept for its users). */
static int derive(gctx *c, const etc_refrun *run, size_t n, etc_error *err)
{
	inputs_of x;
	int rc = runtime_inputs(c, run, n, &x, err);
	if (rc == 0 && x.replaced) {
		etc_error e2;
		etc_error_clear(&e2);
		int r = etc_refrun_eval(run, n, x.in, &c->derived[n], &e2);
		if (r == ETC_ERR_NOMEM) {
			if (err)
				*err = e2;
			rc = r;
		} else if (r < 0) {
			c->derived[n] = NULL; /* its users get the reference's value */
		}
	}
	inputs_free(&x);
	return rc;
}

/* The node's re-run on the runtime's own logged inputs (*vals, NULL when
 * nothing was replaced) and the note of the item; *ok false when there is
 * no local error to compute. A not-computed output gets the re-run's shape. */
static int rerun_eval(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd, item *it,
                      etc_refvalues **vals, bool *ok, etc_error *err)
{
	*vals = NULL;
	*ok = false;
	inputs_of x;
	int rc = runtime_inputs(c, run, n, &x, err);
	if (rc < 0) {
		inputs_free(&x);
		return rc;
	}
	it->local_inputs = x.acts;
	it->local_standins = x.standins;
	char note[200] = "";
	if (x.standins)
		snprintf(note, sizeof note, "inputs: %u of %u from the reference (%.150s)",
		         x.standins, x.acts, x.missing.p ? x.missing.p : "");
	const char *why = NULL;
	if (etc_refrun_status(run, n, &why) != ETC_REFNODE_COMPUTED &&
	    (x.standins || !x.replaced)) {
		/* the reference could not compute it and the runtime does not feed it all */
		snprintf(note, sizeof note,
		         "no local error: the reference did not compute an input the runtime did "
		         "not log");
		it->local_note = etc_arena_strdup(&c->ng->arena, note, strlen(note));
		inputs_free(&x);
		return 0;
	}
	if (x.replaced) {
		etc_error e2;
		etc_error_clear(&e2);
		int r = etc_refrun_eval(run, n, x.in, vals, &e2);
		if (r == ETC_ERR_NOMEM) {
			if (err)
				*err = e2;
			inputs_free(&x);
			return r;
		}
		if (r < 0) {
			*vals = NULL;
			snprintf(
			    note, sizeof note,
			    "no local error: the re-run on the runtime's inputs failed: %.120s",
			    e2.message);
			it->local_note = etc_arena_strdup(&c->ng->arena, note, strlen(note));
			inputs_free(&x);
			return 0;
		}
	}
	inputs_free(&x);
	if (*note)
		it->local_note = etc_arena_strdup(&c->ng->arena, note, strlen(note));
	*ok = true;
	for (uint32_t j = 0; *vals && j < it->nout && j < nd->output_count; j++) {
		otensor *ot = &c->g->ts[it->first + j];
		const etc_reftensor *v =
		    j < etc_refvalues_count(*vals) ? etc_refvalues_get(*vals, j) : NULL;
		/* not computed: the re-run at least gives its shape and dtype */
		if (v && !ot->has_data && ot->t.scalar_type < 0 &&
		    (rc = keep_tensor(c->ng, v, false, &ot->t, err)) < 0)
			return rc;
	}
	return 0;
}

/* The local error of each output of the node from its re-run `vals`
 * (NULL: the re-run is the reference itself): now against the runtime when
 * it can be, else the re-run kept for etc_ng_local_metrics_. */
static int rerun_locals(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd, item *it,
                        const etc_refvalues *vals, etc_error *err)
{
	int rc = 0;
	for (uint32_t j = 0; j < it->nout && j < nd->output_count; j++) {
		otensor *ot = &c->g->ts[it->first + j];
		etc_reftensor hv;
		int64_t st[ETC_REF_MAX_RANK];
		bool strided;
		/* without vals, v only says that the reference computed it */
		const etc_reftensor *v =
		    vals ? (j < etc_refvalues_count(vals) ? etc_refvalues_get(vals, j) : NULL)
		         : held(run, n, j, &hv, st, &strided);
		if (!v)
			continue;
		if (!vals && ot->stream == ETC_NG_PRE) {
			/* the re-run is the reference: its local error is the row's */
			ot->has_local_m = true;
			ot->local_m = ot->pre_m;
			ot->local_vs = ot->pre_vs;
			continue;
		}
		if (!vals) {
			/* nothing replaced: the re-run is the reference itself (its
			 * values read only by a row that has them) */
			ot->local = ot->t;
			ot->has_local = ot->t.data != NULL || ot->t.numel == 0 || ot->dropped;
			continue;
		}
		/* the usual case (a float runtime output of the same shape): the local
		 * metrics now, nothing kept */
		long ri = item_by_max(c, nd->debug_handle);
		const otensor *rto =
		    ri >= 0 ? runtime_output(c->g, &c->g->items[ri], nd->output_count, j) : NULL;
		if (rto && rto->has_data && rto->t.data && same_shape(&rto->t, v) &&
		    etc_scalar_type_is_float_(rto->t.scalar_type)) {
			etc_tensor lt;
			tensor_of(v, &lt);
			etc_values vl, va;
			etc_values_from_tensor(&vl, &lt);
			etc_values_from_tensor(&va, &rto->t);
			if ((rc = etc_metrics_compare(&vl, &va, &ot->local_m, err)) < 0)
				break;
			ot->has_local_m = true;
			ot->local_vs = rto->t.data;
			continue;
		}
		const otensor *pa = ot->stream == ETC_NG_PRE ? &c->g->ts[ot->pre_act] : NULL;
		if (pa && pa->t.numel == v->numel) {
			/* the row reads the runtime as it is: its local error now too */
			etc_tensor lt;
			tensor_of(v, &lt);
			etc_values vl, va;
			etc_values_from_tensor(&vl, &lt);
			etc_values_from_tensor(&va, &pa->t);
			if ((rc = etc_metrics_compare(&vl, &va, &ot->local_m, err)) < 0)
				break;
			ot->has_local_m = true;
			ot->local_vs = pa->t.data;
			continue;
		}
		/* without a row that reads it, only its shape */
		if ((rc = keep_tensor(c->ng, v, ot->stream != ETC_NG_UNUSED, &ot->local, err)) < 0)
			break;
		ot->has_local = true;
	}
	return rc;
}

/* After node n: its inputs' derived values that no later node reads are freed. */
static void release(gctx *c, size_t n)
{
	const etc_refsrc *srcs = NULL;
	size_t ns = etc_refgraph_node_inputs(c->graph, n, &srcs);
	for (size_t k = 0; k < ns; k++) {
		if (srcs[k].kind != ETC_REFSRC_NODE)
			continue;
		size_t p = srcs[k].index;
		if (c->users[p] && --c->users[p] == 0) {
			etc_refvalues_free(c->derived[p]);
			c->derived[p] = NULL;
		}
	}
	if (!c->users[n]) {
		etc_refvalues_free(c->derived[n]);
		c->derived[n] = NULL;
	}
}

static const char *status_name(int st)
{
	return st == ETC_REFNODE_UNSUPPORTED ? "its op is not in the reference library"
	       : st == ETC_REFNODE_SKIPPED   ? "an input was not computed"
	       : st == ETC_REFNODE_FAILED    ? "the op refused its inputs"
	                                     : "not computed";
}

static int handled_node(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd,
                        etc_error *err);
static int on_output(void *user, const etc_refrun *run, size_t n, etc_error *err);

static int on_node(void *user, const etc_refrun *run, size_t n, etc_error *err)
{
	gctx *c = user;
	int rc = 0;
	const etc_refnode *nd = etc_refgraph_node(c->graph, n);
	const char *why0 = NULL;
	int st0 = etc_refrun_status(run, n, &why0);
	/* a node skipped after an unsupported op can still run on runtime values */
	bool computed = st0 == ETC_REFNODE_COMPUTED || st0 == ETC_REFNODE_SKIPPED;
	bool logged = nd && nd->debug_handle >= 0 && item_by_max(c, nd->debug_handle) >= 0;
	if (nd && computed && !logged && c->users[n] && !c->ng->no_local)
		rc = derive(c, run, n, err);
	if (rc == 0 && nd && nd->debug_handle >= 0 && nd->output_count)
		rc = handled_node(c, run, n, nd, err);
	if (rc == 0 && c->ng->score)
		rc = on_output(c->ng->score, run, n, err);
	release(c, n);
	return rc;
}

/* v's values in row-major order through `strides` (etc_refrun_output_layout),
 * read where they lie: `flat` is their storage, `pm` the reader's state. */
static void strided_values(const etc_reftensor *v, const int64_t *strides, etc_tensor *flat,
                           etc_permuted *pm, etc_values *out)
{
	tensor_of(v, flat);
	memset(pm, 0, sizeof *pm);
	etc_values_from_tensor(&pm->base, flat);
	pm->t = flat;
	pm->as_f32 = v->dtype == ETC_FLOAT; /* compared as its dense copy would be */
	pm->ndim = v->rank;
	for (uint32_t k = 0; k < v->rank; k++) {
		pm->sizes[k] = v->shape[k];
		pm->stride[k] = strides[k];
	}
	etc_values_permuted_(out, pm);
}

/* The preview of output o: reference value v's summary and first values,
 * read through `sv` when v is held in another order (strided_values: a
 * float32 transpose read in row-major order, the same bits as its dense
 * copy would give), else NULL. */
static int preview_of(gctx *c, const etc_reftensor *v, const etc_values *sv, otensor *o,
                      etc_error *err)
{
	if (sv && v->dtype != ETC_FLOAT)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "a reference output of dtype %s held in another order",
		                etc_scalar_type_name(v->dtype));
	etc_ng_preview *p = etc_arena_alloc(&c->ng->arena, 1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	memset(p, 0, sizeof *p);
	p->t = o->t;
	etc_tensor full;
	tensor_of(v, &full);
	if (v->numel && sv)
		etc_summarize_read_(sv->read, sv->src, v->numel, &p->summary);
	else if (v->numel)
		etc_tensor_summarize(&full, &p->summary);
	bool wide = v->dtype == ETC_LONG || v->dtype == ETC_UINT64;
	for (uint64_t i = 0; wide && i < v->numel; i++) {
		/* their doubles round: the reports print them from the bits */
		uint64_t u;
		memcpy(&u, (const uint8_t *)v->data + 8 * i, 8);
		bool less = v->dtype == ETC_LONG ? (int64_t)u < (int64_t)p->extremes[0]
		                                 : u < p->extremes[0];
		bool more = v->dtype == ETC_LONG ? (int64_t)u > (int64_t)p->extremes[1]
		                                 : u > p->extremes[1];
		if (i == 0 || less)
			p->extremes[0] = u;
		if (i == 0 || more)
			p->extremes[1] = u;
	}
	size_t es = etc_scalar_type_size(v->dtype);
	size_t k = v->numel < ETC_NUMGAP_PREVIEW_VALUES ? (size_t)v->numel
	                                                : (size_t)ETC_NUMGAP_PREVIEW_VALUES;
	size_t nb = k * es;
	uint8_t *d = etc_arena_alloc(&c->ng->arena, nb ? nb : 1, 1);
	if (!d)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (sv && k) {
		float first[ETC_NUMGAP_PREVIEW_VALUES];
		etc_values_gather_f32_(sv, 0, k, first); /* the bits */
		memcpy(d, first, nb);
	} else if (nb) {
		memcpy(d, v->data, nb);
	}
	p->t.data = d;
	p->t.offset = 0;
	o->preview = p;
	return 0;
}

/* Reference output o (value v), row key `key`, failed its gate: the first
 * such row in row order keeps its values (the first-divergence plots). */
/* Is row key `key` the first failing one so far (keep_if_first keeps it)? */
static bool first_failing(const gctx *c, uint64_t key)
{
	return c->cand == SIZE_MAX || key < c->cand_key;
}

static int keep_if_first(gctx *c, const etc_reftensor *v, size_t oi, uint64_t key, etc_error *err)
{
	if (!first_failing(c, key))
		return 0;
	size_t nb = (size_t)v->numel * etc_scalar_type_size(v->dtype);
	void *p = malloc(nb ? nb : 1);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		                "out of memory keeping the first divergence's reference output of "
		                "%zu bytes",
		                nb);
	if (nb)
		memcpy(p, v->data, nb);
	if (c->cand != SIZE_MAX) {
		otensor *old = &c->g->ts[c->cand];
		old->t.data = NULL;
		old->dropped = true;
	}
	free(c->ng->first_copy);
	c->ng->first_copy = p;
	c->cand = oi;
	c->cand_key = key;
	otensor *o = &c->g->ts[oi];
	o->t.data = p;
	o->t.offset = 0;
	o->dropped = false;
	return 0;
}

/* Is runtime output `a` compared with reference value v as it is (the same
 * shape, both float or neither)? Else *needed: whether its row still reads v
 * after alignment (a layout, a dequantization). */
static bool plain_pair(const gctx *c, const otensor *a, const etc_reftensor *v, bool *needed)
{
	*needed = false;
	if (!a->has_data)
		return false; /* no data: a row without values */
	if (!a->t.data && a->t.numel) {
		*needed = true; /* the row's own comparison says what is wrong */
		return false;
	}
	bool af = etc_scalar_type_is_float_(a->t.scalar_type);
	bool rf = etc_scalar_type_is_float_(v->dtype);
	if (a->t.numel != v->numel || !same_shape(&a->t, v)) {
		*needed = c->ng->opt.layout == ETC_NUMGAP_LAYOUT_AUTO && a->t.ndim == v->rank &&
		          a->t.numel == v->numel;
		return false;
	}
	if (!af && !rf && etc_ng_is_int_code_(a->t.scalar_type) && etc_ng_is_int_code_(v->dtype)) {
		*needed = true; /* codes of a quantized tensor: read dequantized on both sides */
		return false;
	}
	if (af == rf)
		return true;
	*needed = !af && rf; /* an integer runtime tensor may be dequantized */
	return false;
}

/*
 * drop_reference_values: node n's outputs (shapes kept, values not yet)
 * against the runtime, now. When n is the node its group compares, each
 * pair of outputs the row will make (emit_group's pairing) is compared if
 * the row reads the runtime as it is, else its values are kept for the row.
 * Outputs no row compares keep nothing.
 */
static int stream_outputs(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd, item *r,
                          etc_error *err)
{
	gather *g = c->g;
	for (uint32_t j = 0; j < r->nout; j++)
		g->ts[r->first + j].stream = ETC_NG_UNUSED;
	long hi = handle_index(c, nd->debug_handle);
	uint32_t grp = hi >= 0 ? c->acomp[hi] : 0;
	if (hi < 0 || c->ref_last[grp] != (long)n || c->rt_last[grp] < 0)
		return 0; /* another node of the group is compared */
	const item *a = &g->items[c->rt_last[grp]];
	if (!a->nout)
		return 0;
	uint32_t np = etc_ng_pair_count_(a, r);
	for (uint32_t k = 0; k < np; k++) {
		uint32_t pa, pr;
		etc_ng_pair_at_(g, a, r, k, &pa, &pr);
		size_t oi = r->first + pr;
		otensor *o = &g->ts[oi];
		const otensor *ao = &g->ts[a->first + pa];
		etc_reftensor hv;
		int64_t strides[ETC_REF_MAX_RANK];
		bool strided = false;
		const etc_reftensor *v =
		    o->has_data ? held(run, n, pr, &hv, strides, &strided) : NULL;
		if (!v)
			continue;
		bool needed = false;
		if (!plain_pair(c, ao, v, &needed)) {
			if (!needed)
				continue;
			/* kept: compared after alignment (a dense copy) */
			v = strided ? etc_refrun_output(run, n, pr) : v;
			if (!v)
				return copy_failed(nd, pr, err);
			ETC_TRY(keep_tensor(c->ng, v, true, &o->t, err));
			o->stream = ETC_NG_KEPT;
			o->dropped = false;
			continue;
		}
		etc_tensor rt, flat;
		etc_permuted pm;
		etc_values vr, va;
		if (strided) {
			strided_values(v, strides, &flat, &pm, &vr);
		} else {
			tensor_of(v, &rt);
			etc_values_from_tensor(&vr, &rt);
		}
		etc_values_from_tensor(&va, &ao->t);
		ETC_TRY(etc_metrics_compare(&vr, &va, &o->pre_m, err));
		o->stream = ETC_NG_PRE;
		o->pre_act = a->first + pa;
		o->pre_vs = ao->t.data;
		ETC_TRY(preview_of(c, v, strided ? &vr : NULL, o, err));
		if (strided)
			etc_refrun_output_done(run, n, pr); /* the record's pages, read */
		char why[160];
		if (etc_gate_judge_(&o->pre_m, &c->gate, why, sizeof why) != ETC_ROW_PASS) {
			uint64_t key = ((uint64_t)(uint32_t)c->rt_last[grp] << 32) | k;
			/* the first failing row keeps its values in order: a dense copy */
			v = strided && first_failing(c, key) ? etc_refrun_output(run, n, pr) : v;
			if (!v)
				return copy_failed(nd, pr, err);
			ETC_TRY(keep_if_first(c, v, oi, key, err));
		}
	}
	return 0;
}

/* A node with a debug handle: a reference item (outputs kept when the runtime
 * shares its handle) and, when kept, its re-run on the runtime's inputs. */
static int handled_node(gctx *c, const etc_refrun *run, size_t n, const etc_refnode *nd,
                        etc_error *err)
{
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
		etc_reftensor hv;
		int64_t strides[ETC_REF_MAX_RANK];
		bool strided;
		/* its values now only when they are kept now */
		bool data = keep && !c->stream;
		const etc_reftensor *v = st != ETC_REFNODE_COMPUTED ? NULL
		                         : data                     ? etc_refrun_output(run, n, j)
		                                : held(run, n, j, &hv, strides, &strided);
		if (!v && st == ETC_REFNODE_COMPUTED && data)
			return copy_failed(nd, j, err);
		if (!v) {
			o->t.scalar_type = -1; /* "unknown" */
			snprintf(o->why, sizeof o->why, "not computed (%.40s): %.60s",
			         status_name(st), why && *why ? why : nd->op);
			continue;
		}
		/* streaming: the values are kept (or not) once the rows' needs are known */
		ETC_TRY(keep_tensor(c->ng, v, data, &o->t, err));
		o->has_data = keep;
		o->dropped = keep && c->stream;
		if (!keep)
			snprintf(o->why, sizeof o->why,
			         "not kept: no runtime output has its handle");
	}
	if (!keep)
		return 0;
	etc_refvalues *vals = NULL;
	bool local = false;
	int rc = 0;
	if (!c->ng->no_local && (st == ETC_REFNODE_COMPUTED || st == ETC_REFNODE_SKIPPED))
		rc = rerun_eval(c, run, n, nd, it, &vals, &local, err);
	/* it may have moved: the gather grows */
	it = &g->items[g->n - 1];
	if (rc == 0 && c->stream)
		rc = stream_outputs(c, run, n, nd, it, err);
	if (rc == 0 && local)
		rc = rerun_locals(c, run, n, nd, it, vals, err);
	etc_refvalues_free(vals);
	return rc;
}

/* drop_reference_values: each group of runtime items sharing handles, its
 * runtime item and its node compared (numgap_align.c's rule: the largest
 * last handle, the later on a tie), before the run. */
static int plan_rows(gctx *c, size_t nrt, size_t nn, etc_error *err)
{
	const gather *g = c->g;
	etc_ng_key *keys = malloc((nrt ? nrt : 1) * sizeof *keys);
	uint32_t *comp = malloc((nrt ? nrt : 1) * sizeof *comp);
	int64_t *top = NULL;
	size_t nc = 0;
	int rc = 0;
	if (!keys || !comp) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nrt; i++)
		keys[i] = (etc_ng_key){g->items[i].handles, g->items[i].nh};
	if ((rc = etc_numgap_components_(keys, nrt, comp, &nc, err)) < 0)
		goto done;
	c->acomp = malloc((c->nall ? c->nall : 1) * sizeof *c->acomp);
	c->rt_last = malloc((nc ? nc : 1) * sizeof *c->rt_last);
	c->ref_last = malloc((nc ? nc : 1) * sizeof *c->ref_last);
	top = malloc((nc ? nc : 1) * sizeof *top);
	if (!c->acomp || !c->rt_last || !c->ref_last || !top) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < nc; k++)
		c->rt_last[k] = -1, c->ref_last[k] = -1;
	for (size_t i = 0; i < nrt; i++) {
		const item *it = &g->items[i];
		if (!it->nh)
			continue;
		uint32_t k = comp[i];
		if (c->rt_last[k] < 0 || it->handles[it->nh - 1] >= top[k]) {
			c->rt_last[k] = (int32_t)i;
			top[k] = it->handles[it->nh - 1];
		}
		for (uint32_t h = 0; h < it->nh; h++)
			c->acomp[handle_index(c, it->handles[h])] = k;
	}
	/* the groups' nodes: their (single) handle the largest, the later on a tie */
	for (size_t k = 0; k < nc; k++)
		top[k] = INT64_MIN;
	for (size_t n = 0; n < nn; n++) {
		const etc_refnode *nd = etc_refgraph_node(c->graph, n);
		if (!nd || nd->debug_handle < 0 || !nd->output_count)
			continue;
		long hi = handle_index(c, nd->debug_handle);
		if (hi < 0)
			continue;
		uint32_t k = c->acomp[hi];
		if (c->ref_last[k] < 0 || nd->debug_handle >= top[k]) {
			c->ref_last[k] = (long)n;
			top[k] = nd->debug_handle;
		}
	}
done:
	free(keys);
	free(comp);
	free(top);
	return rc;
}

int etc_ng_gather_graph_(etc_numgap *ng, gather *g, size_t nrt, const etc_numgap_reference *ref,
                         etc_error *err)
{
	gctx c;
	memset(&c, 0, sizeof c);
	c.ng = ng;
	c.g = g;
	c.graph = ref->graph;
	c.stream = ng->opt.drop_reference_values;
	c.gate = (etc_gate){ng->opt.min_snr, ng->opt.max_mse, ng->opt.min_cosine, ng->opt.max_abs};
	c.cand = SIZE_MAX;
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
		if (!it->nh)
			continue; /* an event without a handle: never aligned */
		c.bymax[c.nmax++] = (hitem){it->handles[it->nh - 1], (uint32_t)i};
		memcpy(c.all + c.nall, it->handles, it->nh * sizeof *c.all);
		c.nall += it->nh;
	}
	size_t nn = etc_refgraph_node_count(ref->graph);
	c.derived = calloc(nn ? nn : 1, sizeof *c.derived);
	c.users = calloc(nn ? nn : 1, sizeof *c.users);
	if (!c.derived || !c.users) {
		free(c.bymax);
		free(c.all);
		free(c.derived);
		free(c.users);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < nn; i++) {
		const etc_refsrc *srcs = NULL;
		size_t ns = etc_refgraph_node_inputs(ref->graph, i, &srcs);
		for (size_t k = 0; k < ns; k++)
			if (srcs[k].kind == ETC_REFSRC_NODE && srcs[k].index < nn)
				c.users[srcs[k].index]++;
	}
	qsort(c.bymax, c.nmax, sizeof *c.bymax, cmp_hitem);
	qsort(c.all, c.nall, sizeof *c.all, cmp_i64);
	size_t k = 0;
	for (size_t i = 0; i < c.nall; i++)
		if (!k || c.all[i] != c.all[k - 1])
			c.all[k++] = c.all[i];
	c.nall = k;
	int rc = c.stream ? plan_rows(&c, nrt, nn, err) : 0;
	if (rc == 0)
		rc = etc_refgraph_run(ref->graph, ref->inputs, ref->input_count, on_node, &c, err);
	for (size_t i = 0; i < nn; i++)
		etc_refvalues_free(c.derived[i]);
	free(c.derived);
	free(c.users);
	free(c.bymax);
	free(c.all);
	free(c.acomp);
	free(c.rt_last);
	free(c.ref_last);
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
		if (!ng->loc[i].data && ng->loc[i].numel) {
			/* not expected: the run judged that no row compares it */
			snprintf(r->local_note, sizeof r->local_note,
			         "no local error: the re-run was not kept");
			continue;
		}
		etc_values va, vl;
		etc_dequant d;
		etc_ng_row_chain_(ng, i, &va);
		etc_ng_ref_read_(ng, i, &ng->loc[i], &d, &vl);
		if (va.count != vl.count) {
			snprintf(r->local_note, sizeof r->local_note,
			         "no local error: the re-run has %llu values, the runtime %llu",
			         (unsigned long long)vl.count, (unsigned long long)va.count);
			continue;
		}
		ETC_TRY(etc_metrics_compare(&vl, &va, &r->local, err));
		r->has_local = true;
		r->local_snr = r->local.count == 0  ? NAN
		               : r->local.identical ? INFINITY
		                                    : r->local.snr_db;
	}
	return 0;
}

/* --- scoring a set of inputs ----------------------------------------------------------- */

struct etc_ng_score {
	const etc_refgraph *graph;
	const etc_value *outs; /* the runtime's program outputs, flattened below */
	etc_tensor *rt;
	size_t nrt;
	double worst;
	size_t compared;
};

static etc_tensor *program_outputs(const etc_event_block *blk, uint32_t run,
                                   const etc_debug_buffer *buf, size_t *count);

static int on_output(void *user, const etc_refrun *run, size_t n, etc_error *err)
{
	etc_ng_score *s = user;
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

/* The index of block `block` (NULL "Execute") that candidate inputs are scored on. */
static int score_block(const etc_inspector *insp, const char *block, size_t *b, etc_error *err)
{
	const char *name = block ? block : "Execute";
	if (!etc_inspector_block_find(insp, name, b))
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "no program outputs to score inputs with (block \"%s\", debug "
		                "buffer)",
		                name);
	return 0;
}

int etc_numgap_inputs_score(const etc_inspector *insp, const char *block, const etc_refgraph *g,
                            const etc_reftensor *inputs, size_t n, double *snr, etc_error *err)
{
	size_t b = 0;
	*snr = NAN;
	ETC_TRY(score_block(insp, block, &b, err));
	return etc_numgap_inputs_score_at(insp, b, 0, g, inputs, n, snr, err);
}

int etc_numgap_inputs_score_at(const etc_inspector *insp, size_t block, uint32_t run,
                               const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                               double *snr, etc_error *err)
{
	*snr = NAN;
	const etc_event_block *blk = etc_inspector_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (!blk || run >= blk->run_count || !buf)
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "no program outputs to score inputs with (block %zu run %u, debug "
		                "buffer)",
		                block, run);
	etc_ng_score s = {g, NULL, NULL, 0, NAN, 0};
	s.rt = program_outputs(blk, run, buf, &s.nrt);
	if (!s.rt)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = etc_refgraph_run(g, inputs, n, on_output, &s, err);
	if (rc == 0 && s.compared)
		*snr = s.worst;
	free(s.rt);
	return rc;
}

/* The run's program output tensors (tensor and tensor-list values,
 * flattened); a tensor that cannot be read stays zeroed. NULL: no memory. */
static etc_tensor *program_outputs(const etc_event_block *blk, uint32_t run,
                                   const etc_debug_buffer *buf, size_t *count)
{
	size_t cnt = 0, k = 0;
	for (uint32_t v = blk->output_start[run]; v < blk->output_start[run + 1]; v++)
		if (blk->outputs[v].type == ETC_VALUE_TENSOR ||
		    blk->outputs[v].type == ETC_VALUE_TENSOR_LIST)
			cnt += blk->outputs[v].tensor_count;
	etc_tensor *rt = calloc(cnt ? cnt : 1, sizeof *rt);
	for (uint32_t v = blk->output_start[run]; rt && v < blk->output_start[run + 1]; v++) {
		const etc_value *val = &blk->outputs[v];
		if (val->type != ETC_VALUE_TENSOR && val->type != ETC_VALUE_TENSOR_LIST)
			continue;
		for (uint32_t i = 0; i < val->tensor_count; i++, k++) {
			etc_error e2;
			if (etc_value_tensor(val, i, buf, &rt[k], &e2) < 0)
				memset(&rt[k], 0, sizeof rt[k]);
		}
	}
	*count = cnt;
	return rt;
}

/* Lowest SNR of the run's outputs `rt` against reference set `ref` (n
 * tensors each); NAN when a pair cannot be compared. */
static int set_score(const etc_tensor *rt, const etc_pytensor *const *ref, size_t n, double *snr,
                     etc_error *err)
{
	double worst = INFINITY;
	for (size_t k = 0; k < n; k++) {
		if (!rt[k].data || rt[k].numel != ref[k]->tensor.numel) {
			*snr = NAN;
			return 0;
		}
		etc_values vr, va;
		etc_values_from_pytensor(&vr, ref[k]);
		etc_values_from_tensor(&va, &rt[k]);
		etc_metrics m;
		ETC_TRY(etc_metrics_compare(&vr, &va, &m, err));
		double x = m.identical ? INFINITY : isnan(m.snr_db) ? -INFINITY : m.snr_db;
		worst = x < worst ? x : worst;
	}
	*snr = n ? worst : NAN;
	return 0;
}

#define MAX_REFERENCE_SETS 65536

int etc_numgap_record_outputs_score_at(const etc_inspector *insp, size_t block, uint32_t run,
                                       const etc_etrecord *rec, const char *method, double *snr,
                                       long *index, etc_error *err)
{
	if (snr)
		*snr = NAN;
	if (index)
		*index = -1;
	if (!insp || !rec || !snr || !index)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_numgap_record_outputs_score_at: NULL %s",
		                !insp  ? "insp"
		                : !rec ? "rec"
		                : !snr ? "snr"
		                       : "index");
	const etc_event_block *blk = etc_inspector_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (!blk || run >= blk->run_count || !buf)
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "no program outputs to score (block %zu run %u, debug buffer)",
		                block, run);
	if (!etc_etrecord_reference_outputs(rec))
		return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		                "the ETRecord has no reference_outputs");
	size_t nrt = 0;
	etc_tensor *rt = program_outputs(blk, run, buf, &nrt);
	const etc_pytensor **ref = malloc((nrt ? nrt : 1) * sizeof *ref);
	int rc = 0;
	if (!rt || !ref) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < MAX_REFERENCE_SETS; k++) {
		size_t count = 0;
		etc_error e2;
		etc_error_clear(&e2);
		/* the sets end with the first index the record has no entry for */
		if (etc_etrecord_reference(rec, method, k, ref, nrt, &count, &e2) < 0)
			break;
		double x = NAN;
		if (count != nrt)
			continue; /* another output count: not this program's outputs */
		if ((rc = set_score(rt, ref, nrt, &x, err)) < 0)
			goto done;
		if (!isnan(x) && (isnan(*snr) || x > *snr)) {
			*snr = x;
			*index = (long)k;
		}
	}
done:
	free(ref);
	free(rt);
	return rc;
}

etc_ng_score *etc_ng_score_new_(const etc_inspector *insp, size_t block, uint32_t run,
                                const etc_refgraph *g)
{
	const etc_event_block *blk = etc_inspector_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	etc_ng_score *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->graph = g;
	s->worst = NAN;
	if (blk && run < blk->run_count && buf) {
		s->rt = program_outputs(blk, run, buf, &s->nrt);
		if (!s->rt) {
			free(s);
			return NULL;
		}
	}
	return s;
}

double etc_ng_score_result_(const etc_ng_score *s)
{
	return s->compared ? s->worst : NAN;
}

void etc_ng_score_free_(etc_ng_score *s)
{
	if (s)
		free(s->rt);
	free(s);
}

/* Rows of the gap that reproduce the runtime: identical, or SNR >= 20 dB
 * (unrelated values stay near 0 dB). */
static long reproduced_rows(const etc_numgap *ng)
{
	long k = 0;
	for (size_t i = 0; i < etc_numgap_row_count(ng); i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		if (r->has_metrics && r->metrics.count &&
		    (r->metrics.identical || r->metrics.snr_db >= 20))
			k++;
	}
	return k;
}

int etc_numgap_inputs_match_at(const etc_inspector *insp, size_t block, uint32_t run,
                               const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                               etc_numgap_match *m, etc_error *err)
{
	m->reproduced = -1;
	m->snr = NAN;
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	o.force = true; /* the candidates are being tried: no verdict on the files */
	o.drop_reference_values = true;
	etc_numgap_reference ref;
	memset(&ref, 0, sizeof ref);
	ref.graph = g;
	ref.inputs = inputs;
	ref.input_count = n;
	ref.name = "candidate inputs";
	/* one run of the graph: the gap without local re-runs (only the
	   cumulative rows count), the program outputs scored as it goes */
	const etc_event_block *blk = etc_inspector_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (!blk || run >= blk->run_count || !buf)
		return etc_numgap_inputs_score_at(insp, block, run, g, inputs, n, &m->snr, err);
	etc_ng_score s = {g, NULL, NULL, 0, NAN, 0};
	s.rt = program_outputs(blk, run, buf, &s.nrt);
	if (!s.rt)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	etc_numgap *ng = NULL;
	etc_error e;
	etc_error_clear(&e);
	int rc = etc_ng_run_(&ng, insp, block, run, &ref, &o, true, &s, &e);
	if (rc == 0) {
		m->reproduced = reproduced_rows(ng);
		if (s.compared)
			m->snr = s.worst;
	}
	etc_numgap_free(ng);
	free(s.rt);
	/* a gap that cannot be computed (nothing aligned): the outputs alone */
	return rc == 0 ? 0
	               : etc_numgap_inputs_score_at(insp, block, run, g, inputs, n, &m->snr, err);
}

int etc_numgap_inputs_match(const etc_inspector *insp, const char *block, const etc_refgraph *g,
                            const etc_reftensor *inputs, size_t n, etc_numgap_match *m,
                            etc_error *err)
{
	size_t b = 0;
	m->reproduced = -1;
	m->snr = NAN;
	ETC_TRY(score_block(insp, block, &b, err));
	return etc_numgap_inputs_match_at(insp, b, 0, g, inputs, n, m, err);
}

bool etc_numgap_match_better(const etc_numgap_match *a, const etc_numgap_match *b)
{
	if (a->reproduced != b->reproduced)
		return a->reproduced > b->reproduced;
	return a->snr > b->snr || (isnan(b->snr) && !isnan(a->snr));
}
