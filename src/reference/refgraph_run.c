/*
 * refgraph_run.c - running a reference graph: nodes in graph order, each
 * handed to the caller's callback, values freed after their last use; a
 * node's re-run on other inputs (etc_refrun_eval).
 *
 * Peak memory is the weights held by the graph (most as views of the
 * record, widened for one op at a time by refgraph_call.c) plus the values
 * alive at one time: a value lives from its node's call until the callback
 * of its last consumer.
 */
#include "reference/refgraph_private.h"
#include "reference/refimport.h"
#include "etcompare/text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct etc_refrun {
	const etc_refgraph *g;
	ref_tensor *vals;     /* per value (weights stay in g->slots) */
	etc_reftensor *views; /* per value, valid while vals[v] holds data */
	uint32_t *left;       /* uses not yet run */
	int *status;          /* per node, up to `current` */
	char **why;           /* per node: malloc'ed reason, or NULL */
	uint64_t unreleased;  /* bytes of the record read, pages not given back */
	size_t current;       /* the node whose callback runs */
	ref_tensor *cur;      /* its outputs, owned until the callback returns */
	etc_reftensor *cur_views;
	/* dense copies of transposed views (ref_op.h), made when asked for by
	   etc_refrun_output: of cur (freed after the callback) and of vals */
	ref_tensor *cur_dense, *vals_dense;
	etc_reftensor *cur_dense_views, *vals_dense_views;
	uint32_t max_outs;
};

struct etc_refvalues {
	size_t n;
	ref_tensor *t;
	etc_reftensor *views;
};

/* --- one call ----------------------------------------------------------------------- */

/*
 * Node n on this run's values, `repl[k]` (when given and non-NULL) replacing
 * tensor input k (ref_graph_call widens the weights it reads).
 */
static int call(const etc_refrun *r, const ref_node *n, const ref_tensor *const *repl,
                ref_tensor *outs, etc_error *err)
{
	const etc_refgraph *g = r->g;
	const ref_tensor **srcs = calloc(n->nsrcs ? n->nsrcs : 1, sizeof *srcs);
	if (!srcs)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "node %s: out of memory",
		                n->pub.name);
	for (size_t k = 0; k < n->nsrcs; k++) {
		size_t v = n->src_values[k];
		srcs[k] = repl && repl[k]                         ? repl[k]
		          : g->values[v].kind == REF_VALUE_WEIGHT ? &g->slots[v]
		                                                  : &r->vals[v];
	}
	/* the run's count of the record's bytes read (etc_refrun_eval is handed
	   the run as const by the callback; the run itself is not const) */
	int rc = ref_graph_call(g, n, srcs, outs, (uint64_t *)&r->unreleased, err);
	free(srcs);
	return rc;
}

/* --- statuses ----------------------------------------------------------------------- */

static int set_status(etc_refrun *r, size_t i, int status, const char *fmt, ...) ETC_PRINTF(4, 5);

static int set_status(etc_refrun *r, size_t i, int status, const char *fmt, ...)
{
	char raw[1100], msg[1100];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* names come from the file and the reason is printed: escaped here */
	etc_text_safe(msg, sizeof msg, raw);
	r->status[i] = status;
	r->why[i] = malloc(strlen(msg) + 1);
	if (r->why[i])
		memcpy(r->why[i], msg, strlen(msg) + 1);
	return status;
}

/* The computed outputs against the graph's record of them. */
static int check_outputs(etc_refrun *r, const ref_node *n, size_t i)
{
	const etc_refgraph *g = r->g;
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		const ref_tensor *t = &r->cur[o];
		char pre[32] = "";
		if (n->pub.output_count > 1)
			snprintf(pre, sizeof pre, "output %u: ", o);
		if (!t->data)
			return set_status(r, i, ETC_REFNODE_FAILED, "%sthe op did not compute it",
			                  pre);
		size_t v = n->out_values[o];
		if (v == REF_NO_VALUE || !g->values[v].has_meta)
			continue;
		const ref_value *m = &g->values[v];
		bool same = m->meta_rank == t->rank;
		for (uint32_t d = 0; same && d < t->rank; d++)
			same = m->meta_shape[d] == t->shape[d];
		if (!same) {
			char a[256], b[256];
			ref_shape_str(a, sizeof a, t->rank, t->shape);
			ref_shape_str(b, sizeof b, m->meta_rank, m->meta_shape);
			return set_status(r, i, ETC_REFNODE_FAILED,
			                  "%scomputed shape %s disagrees with the graph's %s", pre,
			                  a, b);
		}
		int want = ref_import_dtype(m->meta_dtype, g->float_dtype);
		if (want >= 0 && want != t->dtype)
			return set_status(r, i, ETC_REFNODE_FAILED,
			                  "%scomputed dtype %s disagrees with the graph's %s", pre,
			                  etc_scalar_type_name(t->dtype),
			                  etc_scalar_type_name(m->meta_dtype));
	}
	return ETC_REFNODE_COMPUTED;
}

static int compute(etc_refrun *r, size_t i)
{
	const etc_refgraph *g = r->g;
	const ref_node *n = &g->nodes[i];
	if (!n->op)
		return set_status(r, i, ETC_REFNODE_UNSUPPORTED, "op %s is not supported",
		                  n->pub.op);
	if (n->folded) {
		/* computed at load: lent to the run, never freed by it */
		for (uint32_t o = 0; o < n->pub.output_count; o++) {
			r->cur[o] = g->slots[n->out_values[o]];
			r->cur[o].borrowed = true;
			r->cur_views[o] = ref_tensor_view(&r->cur[o]);
		}
		return ETC_REFNODE_COMPUTED;
	}
	for (size_t k = 0; k < n->nsrcs; k++) {
		const ref_value *v = &g->values[n->src_values[k]];
		if (v->kind == REF_VALUE_ABSENT)
			return set_status(r, i, ETC_REFNODE_SKIPPED,
			                  "input %zu (%s, an allocation) was not computed", k,
			                  v->name);
		if (v->kind == REF_VALUE_NODE && r->status[v->index] != ETC_REFNODE_COMPUTED)
			return set_status(r, i, ETC_REFNODE_SKIPPED,
			                  "input %zu (node %s) was not computed", k,
			                  g->nodes[v->index].pub.name);
	}
	etc_error err = {0};
	if (call(r, n, NULL, r->cur, &err) < 0)
		return set_status(r, i, ETC_REFNODE_FAILED, "%s", err.message);
	int st = check_outputs(r, n, i);
	if (st != ETC_REFNODE_COMPUTED)
		for (uint32_t o = 0; o < n->pub.output_count; o++)
			ref_tensor_free(&r->cur[o]);
	for (uint32_t o = 0; o < n->pub.output_count; o++)
		r->cur_views[o] = ref_tensor_view(&r->cur[o]);
	return st;
}

/* After node i's callback: its outputs become values (or are dropped), and
 * the values it was the last to use are freed. */
static void retire(etc_refrun *r, size_t i)
{
	const etc_refgraph *g = r->g;
	const ref_node *n = &g->nodes[i];
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		size_t v = n->out_values[o];
		ref_tensor_free(&r->cur_dense[o]);
		if (v != REF_NO_VALUE && r->left[v] > 0 && r->cur[o].data) {
			r->vals[v] = r->cur[o];
			r->views[v] = ref_tensor_view(&r->vals[v]);
		} else {
			ref_tensor_free(&r->cur[o]);
		}
		memset(&r->cur[o], 0, sizeof r->cur[o]);
	}
	for (size_t k = 0; k < n->nsrcs; k++) {
		size_t v = n->src_values[k];
		if (g->values[v].kind == REF_VALUE_WEIGHT || r->left[v] == 0)
			continue;
		if (--r->left[v] == 0) {
			ref_tensor_free(&r->vals[v]);
			ref_tensor_free(&r->vals_dense[v]);
		}
	}
}

/* --- the run ------------------------------------------------------------------------- */

static void run_free(etc_refrun *r)
{
	for (size_t v = 0; v < r->g->nvalues; v++) {
		if (r->vals)
			ref_tensor_free(&r->vals[v]);
		if (r->vals_dense)
			ref_tensor_free(&r->vals_dense[v]);
	}
	if (r->cur_dense)
		for (size_t o = 0; o < r->max_outs; o++)
			ref_tensor_free(&r->cur_dense[o]);
	if (r->why)
		for (size_t i = 0; i < r->g->nnodes; i++)
			free(r->why[i]);
	free(r->vals);
	free(r->views);
	free(r->left);
	free(r->status);
	free(r->why);
	free(r->cur);
	free(r->cur_views);
	free(r->cur_dense);
	free(r->vals_dense);
	free(r->cur_dense_views);
	free(r->vals_dense_views);
}

int etc_refgraph_run(const etc_refgraph *g, const etc_reftensor *inputs, size_t n_inputs,
                     etc_refrun_fn fn, void *user, etc_error *err)
{
	if (!g || (!inputs && n_inputs))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_refgraph_run: NULL argument");
	if (n_inputs != g->ninputs)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "graph %s (%s) takes %zu inputs, %zu were given", g->name,
		                g->method, g->ninputs, n_inputs);
	uint32_t max_outs = 1;
	for (size_t i = 0; i < g->nnodes; i++)
		if (g->nodes[i].pub.output_count > max_outs)
			max_outs = g->nodes[i].pub.output_count;
	etc_refrun r = {.g = g, .current = (size_t)-1};
	size_t nv = g->nvalues ? g->nvalues : 1, nn = g->nnodes ? g->nnodes : 1;
	r.vals = calloc(nv, sizeof *r.vals);
	r.views = calloc(nv, sizeof *r.views);
	r.left = calloc(nv, sizeof *r.left);
	r.status = calloc(nn, sizeof *r.status);
	r.why = calloc(nn, sizeof *r.why);
	r.cur = calloc(max_outs, sizeof *r.cur);
	r.cur_views = calloc(max_outs, sizeof *r.cur_views);
	r.max_outs = max_outs;
	r.cur_dense = calloc(max_outs, sizeof *r.cur_dense);
	r.cur_dense_views = calloc(max_outs, sizeof *r.cur_dense_views);
	r.vals_dense = calloc(nv, sizeof *r.vals_dense);
	r.vals_dense_views = calloc(nv, sizeof *r.vals_dense_views);
	int rc = 0;
	if (!r.vals || !r.views || !r.left || !r.status || !r.why || !r.cur || !r.cur_views ||
	    !r.cur_dense || !r.cur_dense_views || !r.vals_dense || !r.vals_dense_views)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory running the graph");
	for (size_t v = 0; rc == 0 && v < g->nvalues; v++)
		r.left[v] = g->values[v].uses;
	for (size_t i = 0; rc == 0 && i < g->ninputs; i++) {
		size_t v = g->inputs[i];
		ref_tensor t;
		rc = ref_graph_take_input(g, i, &inputs[i], true, &t, err);
		if (rc == 0 && r.left[v] > 0) {
			r.vals[v] = t;
			r.views[v] = ref_tensor_view(&r.vals[v]);
		} else if (rc == 0) {
			ref_tensor_free(&t);
		}
	}
	for (size_t i = 0; rc == 0 && i < g->nnodes; i++) {
		r.current = i;
		if (compute(&r, i) == ETC_REFNODE_COMPUTED)
			r.status[i] = ETC_REFNODE_COMPUTED;
		if (fn)
			rc = fn(user, &r, i, err);
		retire(&r, i);
	}
	r.current = (size_t)-1;
	if (r.unreleased)
		ref_graph_release_all(g);
	run_free(&r);
	return rc;
}

int etc_refrun_status(const etc_refrun *run, size_t node, const char **why)
{
	if (why)
		*why = "";
	if (!run || node >= run->g->nnodes || node > run->current)
		return ETC_ERR_USAGE;
	if (why && run->why[node])
		*why = run->why[node];
	return run->status[node];
}

/* The view of t, or for a transposed t (ref_op.h) that of its dense copy in
 * *dense, made on the first request (NULL when it cannot be made). */
static const etc_reftensor *view_of(const etc_refgraph *g, const ref_tensor *t,
                                    const etc_reftensor *view, ref_tensor *dense,
                                    etc_reftensor *dense_view)
{
	if (!t->transposed)
		return view;
	if (!dense->data) {
		etc_error err = {0};
		ref_release rel = ref_graph_releaser(g);
		if (ref_tensor_dense(dense, t, t->dtype, &rel, &err) < 0)
			return NULL;
		ref_graph_release(g, t->data, t->numel * etc_scalar_type_size(t->dtype));
		*dense_view = ref_tensor_view(dense);
	}
	return dense_view;
}

/* Output i of a node as the run holds it (a transposed view stays one): the
 * tensor, its view and its dense-copy cache. */
typedef struct held {
	const ref_tensor *t;
	const etc_reftensor *view;
	ref_tensor *dense;
	etc_reftensor *dense_view;
} held;

/* False when etc_refrun_output gives NULL. */
static bool held_output(const etc_refrun *run, size_t node, uint32_t i, held *h)
{
	if (!run || node >= run->g->nnodes || node > run->current)
		return false;
	const ref_node *n = &run->g->nodes[node];
	if (i >= n->pub.output_count || run->status[node] != ETC_REFNODE_COMPUTED)
		return false;
	if (node == run->current) {
		*h = (held){&run->cur[i], &run->cur_views[i], &run->cur_dense[i],
		            &run->cur_dense_views[i]};
		return run->cur[i].data != NULL;
	}
	size_t v = n->out_values[i];
	if (v == REF_NO_VALUE || !run->vals[v].data)
		return false;
	*h = (held){&run->vals[v], &run->views[v], &run->vals_dense[v], &run->vals_dense_views[v]};
	return true;
}

const etc_reftensor *etc_refrun_output(const etc_refrun *run, size_t node, uint32_t i)
{
	held h = {0};
	/* the dense copies are the run's caches: the callback is handed the
	   run as const, the run itself is not */
	return held_output(run, node, i, &h) ? view_of(run->g, h.t, h.view, h.dense, h.dense_view)
	                                     : NULL;
}

int etc_refrun_output_layout(const etc_refrun *run, size_t node, uint32_t i, etc_reftensor *out,
                             int64_t *strides)
{
	held h = {0};
	bool ok = held_output(run, node, i, &h);
	if (out)
		memset(out, 0, sizeof *out);
	if (!ok || !out || !strides)
		return ETC_ERR_USAGE;
	const ref_tensor *t = h.t;
	*out = *h.view;
	if (t->transposed) {
		/* logical (r, c) is stored at c * rows + r (ref_op.h) */
		strides[0] = 1;
		strides[1] = t->shape[0];
		return 1;
	}
	int64_t s = 1;
	for (uint32_t d = t->rank; d-- > 0;) {
		strides[d] = s;
		s *= t->shape[d];
	}
	return 0;
}

void etc_refrun_output_done(const etc_refrun *run, size_t node, uint32_t i)
{
	held h = {0};
	if (held_output(run, node, i, &h) && h.t->transposed)
		ref_graph_release(run->g, h.t->data, h.t->numel * etc_scalar_type_size(h.t->dtype));
}

/* --- re-running a node ---------------------------------------------------------------- */

size_t etc_refvalues_count(const etc_refvalues *v)
{
	return v ? v->n : 0;
}

const etc_reftensor *etc_refvalues_get(const etc_refvalues *v, size_t i)
{
	return v && i < v->n ? &v->views[i] : NULL;
}

void etc_refvalues_free(etc_refvalues *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++)
		ref_tensor_free(&v->t[i]);
	free(v->t);
	free(v->views);
	free(v);
}

/* Replacement k converted to the dtype of the reference's value; its shape must match. */
static int replacement(const etc_refrun *r, const ref_node *n, size_t k, const etc_reftensor *in,
                       ref_tensor *dst, etc_error *err)
{
	const etc_refgraph *g = r->g;
	size_t v = n->src_values[k];
	const ref_value *val = &g->values[v];
	const ref_tensor *ref = val->kind == REF_VALUE_WEIGHT ? &g->slots[v] : &r->vals[v];
	uint64_t numel = 1;
	bool ok =
	    in->rank <= ETC_REF_MAX_RANK && (!in->rank || in->shape) && (!in->numel || in->data);
	for (uint32_t d = 0; ok && d < in->rank; d++) {
		ok = in->shape[d] >= 0;
		numel *= ok ? (uint64_t)in->shape[d] : 0;
	}
	if (!ok || numel != in->numel)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "node %s: replacement %zu is a malformed tensor view", n->pub.name,
		                k);
	uint32_t rank = ref->data ? ref->rank : val->meta_rank;
	const int64_t *shape = ref->data ? ref->shape : val->meta_shape;
	int dtype = ref->data ? ref->dtype : ref_import_dtype(val->meta_dtype, g->float_dtype);
	/* a weight held as stored (float32) is read in the reference dtype */
	if (ref->data && ref_dtype_is_float(dtype))
		dtype = g->float_dtype;
	if (!ref->data && !val->has_meta)
		dtype = ref_dtype_is_float(in->dtype) ? g->float_dtype : in->dtype;
	else if (dtype < 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "node %s: input %zu (%s) has a dtype the reference cannot hold",
		                n->pub.name, k, val->name);
	bool same = ref->data || val->has_meta ? rank == in->rank : true;
	for (uint32_t d = 0; same && d < rank && (ref->data || val->has_meta); d++)
		same = shape[d] == in->shape[d];
	if (!same) {
		char a[256], b[256];
		ref_shape_str(a, sizeof a, in->rank, in->shape);
		ref_shape_str(b, sizeof b, rank, shape);
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "node %s: input %zu (%s) of shape %s replaces one of shape %s",
		                n->pub.name, k, val->name, a, b);
	}
	/* a float32 operand of a matrix product is widened by the op itself, a
	   block at a time (ops_linalg.c): the same values */
	if (dtype == ETC_DOUBLE && g->float_dtype == ETC_DOUBLE && in->dtype == ETC_FLOAT &&
	    ref_op_takes_narrow(n->op))
		dtype = ETC_FLOAT;
	/* the caller's inputs outlive the call: one already in dtype is read
	   where it lies */
	return ref_tensor_take(dst, in, dtype, err);
}

int etc_refrun_eval(const etc_refrun *run, size_t node, const etc_reftensor *const *inputs,
                    etc_refvalues **out, etc_error *err)
{
	if (!run || !out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_refrun_eval: NULL argument");
	*out = NULL;
	if (node != run->current)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_refrun_eval: node %zu is not the node of the running callback",
		                node);
	const etc_refgraph *g = run->g;
	const ref_node *n = &g->nodes[node];
	if (!n->op)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "node %s: op %s is not supported", n->pub.name, n->pub.op);
	size_t ns = n->nsrcs ? n->nsrcs : 1;
	ref_tensor *conv = calloc(ns, sizeof *conv);
	const ref_tensor **repl = calloc(ns, sizeof *repl);
	etc_refvalues *res = calloc(1, sizeof *res);
	uint32_t no = n->pub.output_count;
	if (res) {
		res->t = calloc(no ? no : 1, sizeof *res->t);
		res->views = calloc(no ? no : 1, sizeof *res->views);
	}
	int rc = 0;
	if (!conv || !repl || !res || !res->t || !res->views)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	bool replaced = false;
	for (size_t k = 0; inputs && k < n->nsrcs; k++)
		replaced = replaced || inputs[k];
	for (size_t k = 0; rc == 0 && k < n->nsrcs; k++) {
		size_t v = n->src_values[k];
		/* a weight that only folded nodes read is freed at load */
		bool have = g->values[v].kind == REF_VALUE_WEIGHT ? g->slots[v].data != NULL
		                                                  : run->vals[v].data != NULL;
		if (inputs && inputs[k]) {
			rc = replacement(run, n, k, inputs[k], &conv[k], err);
			repl[k] = &conv[k];
		} else if (!have && (replaced || !n->folded)) {
			bool gone = g->values[v].kind == REF_VALUE_WEIGHT;
			rc = etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			              "node %s: input %zu (%s) %s and has no replacement",
			              n->pub.name, k, g->values[v].name,
			              gone ? "is a weight folded into this node at load"
			                   : "was not computed");
		}
	}
	if (rc == 0 && n->folded && !replaced) {
		/* the same inputs: the values folded at load (a weight only this
		   node read may be gone) */
		for (uint32_t o = 0; rc == 0 && o < no; o++) {
			const ref_tensor *t = &g->slots[n->out_values[o]];
			rc = ref_tensor_dense(&res->t[o], t, t->dtype, NULL, err);
		}
	} else if (rc == 0) {
		rc = call(run, n, repl, res->t, err);
	}
	if (rc == 0) {
		res->n = no;
		for (uint32_t o = 0; o < no; o++)
			res->views[o] = ref_tensor_view(&res->t[o]);
		*out = res;
		res = NULL;
	}
	for (size_t k = 0; conv && k < n->nsrcs; k++)
		ref_tensor_free(&conv[k]);
	free(conv);
	free(repl);
	etc_refvalues_free(res);
	return rc;
}
