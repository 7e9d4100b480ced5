/*
 * numgap_align.c - the numeric gap's alignment: groups of items sharing
 * debug handles (sort + union-find), alignment by handle and by
 * instruction, and the rows and unmatched outputs they emit, named by the
 * ETRecord's ops and nodes.
 */
#include "analysis/numgap_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* --- connected components ---------------------------------------------------- */

typedef struct hpair {
	int64_t handle;
	uint32_t item;
} hpair;

static int cmp_hpair(const void *a, const void *b)
{
	const hpair *x = a, *y = b;
	if (x->handle != y->handle)
		return x->handle < y->handle ? -1 : 1;
	return (x->item > y->item) - (x->item < y->item);
}

static uint32_t uf_find(uint32_t *parent, uint32_t i)
{
	while (parent[i] != i) {
		parent[i] = parent[parent[i]]; /* path halving */
		i = parent[i];
	}
	return i;
}

int etc_numgap_components_(const etc_ng_key *keys, size_t n, uint32_t *comp, size_t *ncomp,
                           etc_error *err)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += keys[i].count;
	hpair *p = malloc((total ? total : 1) * sizeof *p);
	uint32_t *parent = malloc((n ? n : 1) * sizeof *parent);
	if (!p || !parent) {
		free(p);
		free(parent);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		parent[i] = (uint32_t)i;
		for (uint32_t j = 0; j < keys[i].count; j++)
			p[k++] = (hpair){keys[i].handles[j], (uint32_t)i};
	}
	qsort(p, total, sizeof *p, cmp_hpair);
	/* every item holding a handle joins the first item holding it */
	for (size_t a = 0; a < total;) {
		size_t b = a + 1;
		uint32_t ra = uf_find(parent, p[a].item);
		for (; b < total && p[b].handle == p[a].handle; b++) {
			uint32_t rb = uf_find(parent, p[b].item);
			if (ra != rb) {
				/* the smaller index stays the root: ids follow first items */
				if (rb < ra) {
					parent[ra] = rb;
					ra = rb;
				} else {
					parent[rb] = ra;
				}
			}
		}
		a = b;
	}
	size_t nc = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = uf_find(parent, (uint32_t)i);
		/* the root is the component's first item, numbered before its others */
		comp[i] = r == i ? (uint32_t)nc++ : comp[r];
	}
	*ncomp = nc;
	free(p);
	free(parent);
	return 0;
}
/* --- rows ---------------------------------------------------------------------------- */

static int push_row(etc_numgap *ng, etc_numgap_row **out, etc_error *err)
{
	/* rows and the two tensors of each grow together */
	size_t need = ng->nrows + 1, c1 = ng->caprows, c2 = ng->caprows, c3 = ng->caprows;
	etc_numgap_row *rows = etc_ng_grow_(ng->rows, &c1, need, sizeof *rows);
	ng->rows = rows ? rows : ng->rows;
	etc_tensor *act = rows ? etc_ng_grow_(ng->act, &c2, need, sizeof *act) : NULL;
	ng->act = act ? act : ng->act;
	etc_tensor *ref = act ? etc_ng_grow_(ng->ref, &c3, need, sizeof *ref) : NULL;
	ng->ref = ref ? ref : ng->ref;
	size_t c4 = ng->caprows, c5 = ng->caprows;
	rowx *xf = ref ? etc_ng_grow_(ng->xf, &c4, need, sizeof *xf) : NULL;
	ng->xf = xf ? xf : ng->xf;
	etc_tensor *loc = xf ? etc_ng_grow_(ng->loc, &c5, need, sizeof *loc) : NULL;
	if (!loc)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->loc = loc;
	ng->caprows = c5;
	etc_numgap_row *r = &ng->rows[ng->nrows];
	memset(r, 0, sizeof *r);
	memset(&ng->act[ng->nrows], 0, sizeof *ng->act);
	memset(&ng->ref[ng->nrows], 0, sizeof *ng->ref);
	memset(&ng->xf[ng->nrows], 0, sizeof *ng->xf);
	memset(&ng->loc[ng->nrows], 0, sizeof *ng->loc);
	ng->nrows++;
	r->ops = r->reference_ops = r->event_name = r->stack_trace = r->source_line =
	    r->module_path = "";
	r->dtype = r->reference_dtype = "";
	r->nodes = r->reference_nodes = r->delegate_backend = "";
	r->gap = NAN;
	r->snr_drop = NAN;
	r->cumulative_snr = r->noise_added = r->local_snr = NAN;
	*out = r;
	return 0;
}

static int push_unmatched(etc_numgap *ng, const item *it, const otensor *o, etc_error *err,
                          const char *fmt, ...) ETC_PRINTF(5, 6);

static const char *ops_of(etc_numgap *ng, int side, const int64_t *h, size_t nh,
                          const char *fallback);
static const char *nodes_of(etc_numgap *ng, int side, const int64_t *h, size_t nh,
                            const etc_graph_node *const **list, uint32_t *count);

static int push_unmatched(etc_numgap *ng, const item *it, const otensor *o, etc_error *err,
                          const char *fmt, ...)
{
	etc_numgap_unmatched *u = etc_ng_grow_(ng->un, &ng->capun, ng->nun + 1, sizeof *u);
	if (!u)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->un = u;
	u = &u[ng->nun++];
	memset(u, 0, sizeof *u);
	u->side = it->side;
	u->handles = it->handles;
	u->handle_count = it->nh;
	u->name = it->name;
	u->instruction_id = it->ev ? it->ev->instruction_id : -1;
	u->ops = ops_of(ng, it->side, it->handles, it->nh, it->ev ? it->name : "");
	u->nodes = nodes_of(ng, it->side, it->handles, it->nh, NULL, NULL);
	etc_shape_str_(&o->t, u->shape, sizeof u->shape);
	u->dtype = etc_scalar_type_name(o->t.scalar_type);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->reason, sizeof u->reason, fmt, ap);
	va_end(ap);
	return 0;
}

/* "3,4,5" into buf. */
static void handles_str(char *buf, size_t cap, const int64_t *h, size_t n)
{
	size_t l = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && l + 24 < cap; i++)
		l += (size_t)snprintf(buf + l, cap - l, i ? ",%lld" : "%lld", (long long)h[i]);
	if (n && l + 24 >= cap)
		snprintf(buf + l, cap - l, ",...");
}

/* The op names of the nodes of handles h in `side`'s ETRecord, ", "-joined,
 * each once; `fallback` without any. */
static const char *ops_of(etc_numgap *ng, int side, const int64_t *h, size_t nh,
                          const char *fallback)
{
	const etc_etrecord *rec = side == ETC_NUMGAP_RUNTIME ? ng->rec : ng->ref_rec;
	int method = side == ETC_NUMGAP_RUNTIME ? ng->method : ng->ref_method;
	if (!rec || method < 0 || !nh)
		return fallback;
	char buf[1024];
	size_t l = 0;
	buf[0] = '\0';
	const char *prev = NULL;
	for (size_t i = 0; i < nh; i++) {
		const etc_graph_node *const *nodes;
		size_t n = etc_etrecord_nodes_for_handle(rec, (size_t)method, h[i], &nodes);
		for (size_t k = 0; k < n && l + 4 < sizeof buf; k++) {
			if (prev && !strcmp(prev, nodes[k]->op))
				continue; /* "aten.add, aten.add" says nothing more */
			prev = nodes[k]->op;
			l += (size_t)snprintf(buf + l, sizeof buf - l, "%s%s", l ? ", " : "",
			                      nodes[k]->op);
		}
	}
	if (!l)
		return fallback;
	char *s = etc_arena_strdup(&ng->arena, buf, l < sizeof buf ? l : sizeof buf - 1);
	return s ? s : fallback;
}

/* The node names of handles h in `side`'s ETRecord, ", "-joined in handle
 * order, and (list != NULL) the nodes themselves, in the arena. */
static const char *nodes_of(etc_numgap *ng, int side, const int64_t *h, size_t nh,
                            const etc_graph_node *const **list, uint32_t *count)
{
	const etc_etrecord *rec = side == ETC_NUMGAP_RUNTIME ? ng->rec : ng->ref_rec;
	int method = side == ETC_NUMGAP_RUNTIME ? ng->method : ng->ref_method;
	if (list)
		*list = NULL, *count = 0;
	if (!rec || method < 0 || !nh)
		return "";
	size_t total = 0;
	for (size_t i = 0; i < nh; i++) {
		const etc_graph_node *const *nodes;
		total += etc_etrecord_nodes_for_handle(rec, (size_t)method, h[i], &nodes);
	}
	if (!total)
		return "";
	const etc_graph_node **v = etc_arena_alloc(&ng->arena, total, sizeof *v);
	etc_sbuf b = {0};
	size_t k = 0;
	for (size_t i = 0; v && i < nh; i++) {
		const etc_graph_node *const *nodes;
		size_t n = etc_etrecord_nodes_for_handle(rec, (size_t)method, h[i], &nodes);
		for (size_t j = 0; j < n; j++) {
			v[k++] = nodes[j];
			etc_sbuf_printf(&b, "%s%s", b.len ? ", " : "", nodes[j]->name);
		}
	}
	const char *s = b.p && !b.failed ? etc_arena_strdup(&ng->arena, b.p, b.len) : NULL;
	etc_sbuf_free(&b);
	if (list && v)
		*list = v, *count = (uint32_t)k;
	return s ? s : "";
}

/* The group's last op: the node of the largest handle of the compared runtime item. */
static void last_op(etc_numgap *ng, const item *it, etc_numgap_row *row)
{
	const etc_graph_node *best = NULL;
	if (it->ev)
		for (uint32_t k = 0; k < it->ev->node_count; k++) {
			const etc_graph_node *nd = it->ev->nodes[k];
			if (!best || nd->debug_handle >= best->debug_handle)
				best = nd;
		}
	if (!best)
		return;
	row->stack_trace = best->stack_trace;
	row->source_line = best->source_line;
	char buf[1024];
	size_t l = 0;
	buf[0] = '\0';
	for (uint32_t k = 0; k < best->module_depth && l + 4 < sizeof buf; k++) {
		const etc_module_frame *f = &best->modules[k];
		if (!*f->path)
			continue;
		l += (size_t)snprintf(buf + l, sizeof buf - l, "%s%s", l ? " / " : "", f->path);
	}
	if (best->module_depth && l + 4 < sizeof buf)
		l += (size_t)snprintf(buf + l, sizeof buf - l, "%s(%s)", l ? " " : "",
		                      best->modules[best->module_depth - 1].type);
	if (l >= sizeof buf)
		l = sizeof buf - 1;
	const char *s = etc_arena_strdup(&ng->arena, buf, l);
	if (s)
		row->module_path = s;
}

/* Whether a reference item from an .npz has a handle the runtime's
 * ETRecord graph knows (true when there is no graph to ask). */
static bool in_record(const etc_numgap *ng, const item *it)
{
	const etc_ng_graph *g = &ng->g_rt;
	if (!g->rec || !g->n || it->ev)
		return true;
	for (uint32_t h = 0; h < it->nh; h++) {
		const etc_graph_node *const *nodes;
		if (etc_etrecord_nodes_for_handle(g->rec, g->method, it->handles[h], &nodes))
			return true;
	}
	return false;
}

/* A narrow integer type: what a quantized op's values are held in (int64
 * and bool are indices and masks). */
static bool narrow_int(int st)
{
	return st == ETC_CHAR || st == ETC_BYTE || st == ETC_SHORT || st == ETC_INT ||
	       st == ETC_UINT16 || st == ETC_QINT8 || st == ETC_QUINT8 || st == ETC_QINT32;
}

/*
 * How well output `o` fits `want`: 4 shape and dtype; 3 shape, both
 * floating (a float64 reference of a float32 output); 2 shape, a floating
 * side and a narrow integer one (quantized values); 1 shape; 0 neither. So a
 * float64 reference of max_pool2d_with_indices pairs with the values, never
 * with the int64 indices of the same shape.
 */
static int fit(const otensor *o, const otensor *want)
{
	if (!etc_shape_equal_(&o->t, &want->t))
		return 0;
	int a = o->t.scalar_type, b = want->t.scalar_type;
	if (a == b)
		return 4;
	bool fa = etc_scalar_type_is_float_(a), fb = etc_scalar_type_is_float_(b);
	if (fa && fb)
		return 3;
	if ((fa && narrow_int(b)) || (fb && narrow_int(a)))
		return 2;
	return 1;
}

/* The output of `it` that fits `want` best; ties go to the last (an op's result). */
uint32_t etc_ng_pick_(const gather *g, const item *it, const otensor *want)
{
	uint32_t best = it->nout - 1;
	int bf = fit(&g->ts[it->first + best], want);
	for (uint32_t j = it->nout - 1; j-- > 0;) {
		int f = fit(&g->ts[it->first + j], want);
		if (f > bf)
			best = j, bf = f;
	}
	return best;
}

/* Output pairs of a runtime item `a` and a reference item `r`: by position,
 * or the one output of a side with the best fit on the other. */
uint32_t etc_ng_pair_count_(const item *a, const item *r)
{
	if (a->nout != r->nout && (a->nout == 1 || r->nout == 1))
		return 1;
	return a->nout < r->nout ? a->nout : r->nout;
}

/* Pair k of etc_ng_pair_count_: the outputs *pa of `a` and *pr of `r`. */
void etc_ng_pair_at_(const gather *g, const item *a, const item *r, uint32_t k, uint32_t *pa,
                     uint32_t *pr)
{
	*pa = k, *pr = k;
	if (a->nout == r->nout || (a->nout != 1 && r->nout != 1))
		return;
	if (r->nout == 1)
		*pa = etc_ng_pick_(g, a, &g->ts[r->first]);
	else
		*pr = etc_ng_pick_(g, r, &g->ts[a->first]);
}

/* A matched group: one row per output pair. */
typedef struct group {
	const item *rt, *ref;   /* the last item of each side */
	uint32_t rt_items;      /* runtime items merged */
	const int64_t *rh, *fh; /* union of each side's handles */
	uint32_t nrh, nfh;
} group;

static int emit_group(etc_numgap *ng, gather *g, const group *gr, const etc_gate *gate,
                      etc_error *err)
{
	const item *a = gr->rt, *r = gr->ref;
	uint32_t np = etc_ng_pair_count_(a, r);
	for (uint32_t k = 0; k < np; k++) {
		uint32_t pa, pr;
		etc_ng_pair_at_(g, a, r, k, &pa, &pr);
		etc_numgap_row *row = NULL;
		ETC_TRY(push_row(ng, &row, err));
		size_t i = ng->nrows - 1;
		row->handles = gr->rh;
		row->handle_count = gr->nrh;
		row->reference_handles = gr->fh;
		row->reference_handle_count = gr->nfh;
		row->event_name = a->name;
		row->instruction_id = a->ev ? a->ev->instruction_id : -1;
		if (a->ev && a->ev->is_delegated_op)
			row->delegate_backend = a->ev->delegate_backend_name
			                            ? a->ev->delegate_backend_name
			                            : "delegate";
		row->item_count = gr->rt_items;
		row->output = pa;
		row->reference_output = pr;
		if (ng->alignment == ETC_NUMGAP_BY_HANDLE) {
			row->ops = ops_of(ng, ETC_NUMGAP_RUNTIME, gr->rh, gr->nrh, a->name);
			row->reference_ops =
			    ops_of(ng, ETC_NUMGAP_REFERENCE, gr->fh, gr->nfh, r->name);
		} else {
			row->ops = a->name;
			row->reference_ops = r->name;
		}
		row->nodes = nodes_of(ng, ETC_NUMGAP_RUNTIME, gr->rh, gr->nrh, NULL, NULL);
		row->reference_nodes =
		    nodes_of(ng, ETC_NUMGAP_REFERENCE, gr->fh, gr->nfh, &row->reference_node_list,
		             &row->reference_node_count);
		last_op(ng, a, row);
		/* a reference graph's node: its re-run, compared after the rows */
		row->local_inputs = r->local_inputs;
		row->local_standins = r->local_standins;
		if (r->local_note)
			snprintf(row->local_note, sizeof row->local_note, "%s", r->local_note);
		const otensor *ro = &g->ts[r->first + pr];
		if (ro->has_local)
			ng->loc[i] = ro->local;
		int rc = 0;
		etc_ng_compare_pair_(ng, i, a, &g->ts[a->first + pa], &g->ts[r->first + pr], gate,
		                     err, &rc);
		ETC_TRY(rc);
		if (ro->dropped && row->has_metrics)
			ng->xf[i].preview = ro->preview;
		if (ro->has_local_m) {
			/* computed in the run against this very runtime tensor, read as is */
			if (ng->act[i].data == ro->local_vs && !ng->xf[i].permute &&
			    !ng->xf[i].dequant) {
				row->has_local = true;
				row->local = ro->local_m;
				row->local_snr = ro->local_m.count == 0  ? NAN
				                 : ro->local_m.identical ? INFINITY
				                                         : ro->local_m.snr_db;
			} else {
				snprintf(
				    row->local_note, sizeof row->local_note,
				    "no local error: the row compares another runtime tensor than "
				    "the re-run's");
			}
		}
	}
	/* outputs left over on either side: the one-output side's pick, or the tail */
	bool one = a->nout != r->nout && (a->nout == 1 || r->nout == 1);
	const item *many = a->nout > 1 ? a : r;
	uint32_t chosen =
	    a->nout > 1 ? ng->rows[ng->nrows - 1].output : ng->rows[ng->nrows - 1].reference_output;
	for (uint32_t j = 0; one && j < many->nout; j++)
		if (j != chosen)
			ETC_TRY(push_unmatched(ng, many, &g->ts[many->first + j], err,
			                       "output %u of %u: not compared, the %s logged one "
			                       "output for these debug handles and output %u "
			                       "matches it best",
			                       j, many->nout, many == a ? "reference" : "runtime",
			                       chosen));
	for (uint32_t j = np; !one && j < a->nout; j++)
		ETC_TRY(push_unmatched(ng, a, &g->ts[a->first + j], err,
		                       "output %u of %u: the reference logged %u outputs for "
		                       "these debug handles",
		                       j, a->nout, r->nout));
	for (uint32_t j = np; !one && j < r->nout; j++)
		ETC_TRY(push_unmatched(ng, r, &g->ts[r->first + j], err,
		                       "output %u of %u: the runtime logged %u outputs for "
		                       "these debug handles",
		                       j, r->nout, a->nout));
	return 0;
}

/* --- alignment ------------------------------------------------------------------------ */

typedef struct order_key {
	uint32_t comp;
	uint32_t item;
} order_key;

static int cmp_order_key(const void *a, const void *b)
{
	const order_key *x = a, *y = b;
	if (x->comp != y->comp)
		return (x->comp > y->comp) - (x->comp < y->comp);
	return (x->item > y->item) - (x->item < y->item);
}

typedef struct comp_info {
	int32_t rt_last, ref_last; /* the compared item of each side, -1 none */
	uint32_t rt_items;
	const int64_t *rh, *fh;
	uint32_t nrh, nfh;
} comp_info;

static int cmp_comp_by_rt(const void *a, const void *b)
{
	const comp_info *x = *(const comp_info *const *)a, *y = *(const comp_info *const *)b;
	return (x->rt_last > y->rt_last) - (x->rt_last < y->rt_last);
}

/* Of items idx[0..n) of one side, the one whose output stands for the
 * group: the largest debug handle (upstream keeps the key with the highest
 * last handle), on a tie the later item (instruction, or array in the file). */
static int32_t group_output(const gather *g, const order_key *idx, size_t n)
{
	int32_t best = -1;
	int64_t top = 0;
	for (size_t i = 0; i < n; i++) {
		const item *it = &g->items[idx[i].item];
		if (!it->nh)
			continue; /* alone in its group, never compared */
		/* idx is in item order: ">=" lets the later item win a tie */
		if (best < 0 || it->handles[it->nh - 1] >= top) {
			best = (int32_t)idx[i].item;
			top = it->handles[it->nh - 1];
		}
	}
	return best;
}

/* The union of the handles of items idx[0..n), ascending, in the arena. */
static int union_handles(etc_numgap *ng, const gather *g, const order_key *idx, size_t n,
                         const int64_t **out, uint32_t *count, etc_error *err)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += g->items[idx[i].item].nh;
	*out = NULL;
	*count = 0;
	if (n == 1 || !total) {
		*out = n ? g->items[idx[0].item].handles : NULL;
		*count = n ? g->items[idx[0].item].nh : 0;
		return 0;
	}
	int64_t *h = malloc(total * sizeof *h);
	if (!h)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const item *it = &g->items[idx[i].item];
		memcpy(h + k, it->handles, it->nh * sizeof *h);
		k += it->nh;
	}
	item tmp;
	int rc = etc_ng_set_handles_(&ng->arena, &tmp, h, k, err);
	free(h);
	*out = tmp.handles;
	*count = tmp.nh;
	return rc;
}

int etc_ng_align_by_handle_(etc_numgap *ng, gather *g, const etc_gate *gate, etc_error *err)
{
	size_t n = g->n;
	etc_ng_key *keys = malloc((n ? n : 1) * sizeof *keys);
	uint32_t *comp = malloc((n ? n : 1) * sizeof *comp);
	order_key *ord = malloc((n ? n : 1) * sizeof *ord);
	comp_info *ci = NULL;
	comp_info **byrt = NULL;
	size_t nc = 0;
	int rc = 0;
	if (!keys || !comp || !ord) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		keys[i] = (etc_ng_key){g->items[i].handles, g->items[i].nh};
	if ((rc = etc_numgap_components_(keys, n, comp, &nc, err)) < 0)
		goto done;
	ci = calloc(nc ? nc : 1, sizeof *ci);
	byrt = malloc((nc ? nc : 1) * sizeof *byrt);
	if (!ci || !byrt) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	/* items are stored runtime first, each side in order: sorting by
	 * (component, item) lists a component's runtime items, then its references */
	for (size_t i = 0; i < n; i++)
		ord[i] = (order_key){comp[i], (uint32_t)i};
	qsort(ord, n, sizeof *ord, cmp_order_key);
	for (size_t a = 0; a < n && rc == 0;) {
		size_t b = a, mid;
		while (b < n && ord[b].comp == ord[a].comp)
			b++;
		for (mid = a; mid < b && g->items[ord[mid].item].side == ETC_NUMGAP_RUNTIME; mid++)
			;
		comp_info *c = &ci[ord[a].comp];
		c->rt_last = group_output(g, ord + a, mid - a);
		c->ref_last = group_output(g, ord + mid, b - mid);
		c->rt_items = (uint32_t)(mid - a);
		if (c->rt_last >= 0 && c->ref_last >= 0) {
			rc = union_handles(ng, g, ord + a, mid - a, &c->rh, &c->nrh, err);
			if (rc == 0)
				rc = union_handles(ng, g, ord + mid, b - mid, &c->fh, &c->nfh, err);
			/* the group's other reference items are not compared: say so */
			for (size_t k = mid; k < b && rc == 0; k++) {
				const item *it = &g->items[ord[k].item];
				const item *cmp = &g->items[c->ref_last];
				if (ord[k].item == (uint32_t)c->ref_last)
					continue;
				char hs[256], with[128];
				handles_str(hs, sizeof hs, c->fh, c->nfh);
				if (cmp->ev)
					snprintf(with, sizeof with, "instruction %d (%.80s)",
					         cmp->ev->instruction_id, cmp->name);
				else
					snprintf(with, sizeof with, "array \"%.100s\"", cmp->name);
				for (uint32_t j = 0; j < it->nout && rc == 0; j++)
					rc =
					    push_unmatched(ng, it, &g->ts[it->first + j], err,
					                   "merged into the group of handles (%s): "
					                   "compared with %s instead",
					                   hs, with);
			}
		}
		/* the unmatched: a whole side without the other */
		for (size_t k = a; k < b && rc == 0 && (c->rt_last < 0 || c->ref_last < 0); k++) {
			const item *it = &g->items[ord[k].item];
			char hs[256];
			handles_str(hs, sizeof hs, it->handles, it->nh);
			for (uint32_t j = 0; j < it->nout && rc == 0; j++) {
				const otensor *o = &g->ts[it->first + j];
				if (!it->nh)
					rc = push_unmatched(
					    ng, it, o, err,
					    it->ev ? "instruction %d has no debug handle in the "
					             "ETRecord (debug_handle_map / delegate_map)"
					           : "array has no debug handle",
					    it->ev ? it->ev->instruction_id : 0);
				else if (it->side == ETC_NUMGAP_RUNTIME)
					rc = push_unmatched(
					    ng, it, o, err,
					    "no reference output shares debug handle(s) "
					    "%s",
					    hs);
				else if (!in_record(ng, it))
					rc = push_unmatched(
					    ng, it, o, err,
					    "debug handle(s) %s are not in the ETRecord's graph: "
					    "the serialized graph gives a tuple op's items "
					    "(getitem) the op's own handle; save the item under "
					    "that handle (--graph lists them)",
					    hs);
				else
					rc = push_unmatched(
					    ng, it, o, err,
					    "no runtime intermediate output shares debug handle(s) "
					    "%s "
					    "(not logged on the device, e.g. inside a delegate, or "
					    "removed by a pass)",
					    hs);
			}
		}
		a = b;
	}
	if (rc < 0)
		goto done;
	size_t nm = 0;
	for (size_t k = 0; k < nc; k++)
		if (ci[k].rt_last >= 0 && ci[k].ref_last >= 0)
			byrt[nm++] = &ci[k];
	qsort(byrt, nm, sizeof *byrt, cmp_comp_by_rt);
	for (size_t k = 0; k < nm && rc == 0; k++) {
		group gr = {&g->items[byrt[k]->rt_last],
		            &g->items[byrt[k]->ref_last],
		            byrt[k]->rt_items,
		            byrt[k]->rh,
		            byrt[k]->fh,
		            byrt[k]->nrh,
		            byrt[k]->nfh};
		rc = emit_group(ng, g, &gr, gate, err);
	}
done:
	free(keys);
	free(comp);
	free(ord);
	free(ci);
	free(byrt);
	return rc;
}

int etc_ng_align_by_instruction_(etc_numgap *ng, gather *g, size_t nrt, const char *rt_name,
                                 const char *ref_name, const etc_gate *gate, etc_error *err)
{
	size_t nref = g->n - nrt;
	for (size_t i = 0; i < nrt || i < nref; i++) {
		const item *a = i < nrt ? &g->items[i] : NULL;
		const item *r = i < nref ? &g->items[nrt + i] : NULL;
		if (a && r && etc_ng_same_instruction_(a->ev, r->ev) && !strcmp(a->name, r->name))
			continue;
		char sa[160], sr[160];
		if (a)
			snprintf(sa, sizeof sa, "instruction %d %s", a->ev->instruction_id,
			         a->name);
		else
			snprintf(sa, sizeof sa, "nothing");
		if (r)
			snprintf(sr, sizeof sr, "instruction %d %s", r->ev->instruction_id,
			         r->name);
		else
			snprintf(sr, sizeof sr, "nothing");
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "%s and %s are not the same program: intermediate output %zu is "
		                "%s in the first, %s in the second; give --etrecord to align them "
		                "by debug handle",
		                rt_name, ref_name, i, sa, sr);
	}
	for (size_t i = 0; i < nrt; i++) {
		const item *a = &g->items[i], *r = &g->items[nrt + i];
		group gr = {a, r, 1, a->handles, r->handles, a->nh, r->nh};
		ETC_TRY(emit_group(ng, g, &gr, gate, err));
	}
	return 0;
}

/* "handles 1..22" of items [from, to) into buf ("no debug handles" without any). */
static void handle_range(char *buf, size_t cap, const gather *g, size_t from, size_t to)
{
	bool any = false;
	int64_t lo = 0, hi = 0;
	for (size_t i = from; i < to; i++) {
		const item *it = &g->items[i];
		if (!it->nh)
			continue;
		if (!any || it->handles[0] < lo)
			lo = it->handles[0];
		if (!any || it->handles[it->nh - 1] > hi)
			hi = it->handles[it->nh - 1];
		any = true;
	}
	if (any)
		snprintf(buf, cap, "debug handles %lld..%lld", (long long)lo, (long long)hi);
	else
		snprintf(buf, cap, "no debug handles");
}

/* Nothing could be compared: a run that checks nothing must not pass. */
int etc_ng_nothing_aligned_(const gather *g, size_t nrt, bool by_handle, const char *block,
                            const char *rt_name, const char *ref_name, etc_error *err)
{
	size_t nref = g->n - nrt;
	if (!nrt)
		return etc_fail(err, ETC_ERR_MISMATCH, rt_name, -1,
		                "nothing to compare: the runtime logged no intermediate outputs in "
		                "block \"%s\" (was it run with debug output, e.g. "
		                "--debug_buffer and intermediate output logging, enabled?)",
		                block);
	if (!nref)
		return etc_fail(
		    err, ETC_ERR_MISMATCH, ref_name, -1,
		    "nothing to compare: the reference has no intermediate outputs%s%s%s",
		    by_handle ? "" : " in block \"", by_handle ? "" : block, by_handle ? "" : "\"");
	char hr[96], hf[96];
	handle_range(hr, sizeof hr, g, 0, nrt);
	handle_range(hf, sizeof hf, g, nrt, g->n);
	return etc_fail(err, ETC_ERR_MISMATCH, ref_name, -1,
	                "nothing to compare: no reference output shares a debug handle with any "
	                "runtime output (%zu runtime intermediate outputs, %s; %zu reference "
	                "outputs, %s): wrong ETRecord or .npz?",
	                nrt, hr, nref, hf);
}
