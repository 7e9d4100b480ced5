/*
 * numgap.c - the numeric gap (include/etcompare/numgap.h has the rules):
 * gathers the intermediate outputs of both sides as keyed items, groups
 * them by shared debug handles (or pairs them by instruction), chooses the
 * tensors to compare and compares them with metrics.c. The report writers
 * are in report_numgap.c.
 */
#include "etcompare/numgap.h"
#include "etcompare/accuracy.h"
#include "analysis/compare_private.h"
#include "core/internal.h"
#include "analysis/metrics_private.h"
#include "format/npz_private.h"
#include "analysis/numgap_private.h"
#include "analysis/values_private.h"
#include "analysis/numgap_compare.h"
#include "core/fmt.h"

#include <errno.h>
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

/* --- items ------------------------------------------------------------------------ */

/* One intermediate output record: an event's debug data, or one .npz array. */
typedef struct item {
	int side;
	uint32_t order;                /* execution (or file) order on its side */
	const etc_inspector_event *ev; /* NULL for an .npz array */
	const char *name;              /* event name or array name */
	int64_t *handles;              /* ascending, unique */
	uint32_t nh;
	uint32_t first, nout; /* outputs: tensors[first .. first+nout) */
} item;

typedef struct otensor {
	etc_tensor t;
	bool has_data;
	etc_npz_crc check; /* an .npz array's CRC-32, verified in the comparison or at the end */
	char why[128];     /* when !has_data */
} otensor;

typedef struct gather {
	item *items;
	size_t n, cap;
	otensor *ts;
	size_t nt, capt;
} gather;

/* How a row's runtime values are read: permuted and/or dequantized. */
typedef struct rowx {
	bool permute, dequant;
	etc_permuted perm;
	etc_dequant dq;
} rowx;

struct etc_numgap {
	etc_arena arena;
	int alignment;
	etc_numgap_row *rows;
	etc_tensor *act, *ref; /* per row */
	rowx *xf;              /* per row */
	size_t nrows, caprows;
	etc_numgap_unmatched *un;
	size_t nun, capun;
	long first;
	etc_numgap_options opt;
	/* for op names and stack traces: each side's ETRecord and method */
	const etc_etrecord *rec, *ref_rec;
	int method, ref_method;
	const etc_npz *npz; /* the .npz reference, for its CRC checks */
	etc_ng_graph g_rt;  /* the runtime ETRecord's graph: quantize nodes, SNR drops */
	etc_ng_qfile qfile;
	bool has_qfile;
	const char **warn;
	size_t nwarn, capwarn;
	etc_ng_pending pending; /* rows compared after alignment, on several threads */
};

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static int push_item(gather *g, item **out, etc_error *err)
{
	item *p = grow(g->items, &g->cap, g->n + 1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	g->items = p;
	*out = &p[g->n++];
	memset(*out, 0, sizeof **out);
	(*out)->first = (uint32_t)g->nt;
	return 0;
}

static int push_tensor(gather *g, otensor **out, etc_error *err)
{
	otensor *p = grow(g->ts, &g->capt, g->nt + 1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	g->ts = p;
	*out = &p[g->nt++];
	memset(*out, 0, sizeof **out);
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Copies `n` handles into the arena, ascending and unique. */
static int set_handles(etc_arena *a, item *it, const int64_t *h, size_t n, etc_error *err)
{
	it->nh = 0;
	it->handles = NULL;
	if (!n)
		return 0;
	int64_t *c = etc_arena_alloc(a, n, sizeof *c);
	if (!c)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	memcpy(c, h, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_i64);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || c[i] != c[k - 1])
			c[k++] = c[i];
	it->handles = c;
	it->nh = (uint32_t)k;
	return 0;
}

static const etc_event_block *find_block(const etc_inspector *insp, const char *name)
{
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len == strlen(name) && !memcmp(blk->name.ptr, name, blk->name.len))
			return blk;
	}
	return NULL;
}

static bool same_instruction(const etc_inspector_event *a, const etc_inspector_event *b)
{
	return a->instruction_id == b->instruction_id &&
	       a->delegate_debug_id_int == b->delegate_debug_id_int &&
	       a->delegate_debug_id_str.len == b->delegate_debug_id_str.len &&
	       !memcmp(a->delegate_debug_id_str.ptr, b->delegate_debug_id_str.ptr,
	               a->delegate_debug_id_str.len);
}

static bool is_delegate_call(const etc_inspector_event *ev)
{
	return !ev->is_delegated_op && ev->name.len == 13 &&
	       !memcmp(ev->name.ptr, "DELEGATE_CALL", 13);
}

static bool share_handle(const etc_inspector_event *a, const etc_inspector_event *b)
{
	/* both lists are short and ascending in practice; a merge walk needs sorted input */
	for (uint32_t i = 0; i < a->debug_handle_count; i++)
		for (uint32_t j = 0; j < b->debug_handle_count; j++)
			if (a->debug_handles[i] == b->debug_handles[j])
				return true;
	return false;
}

/*
 * Upstream's rule: a DELEGATE_CALL is left out when events of the same
 * backend that are delegated, have op types (linked nodes) and carry debug
 * data cover any of its handles: their per-op outputs are compared instead.
 */
static bool delegate_call_covered(const etc_event_block *blk, const etc_inspector_event *dc)
{
	if (!dc->delegate_backend_name)
		return false;
	for (size_t e = 0; e < blk->event_count; e++) {
		const etc_inspector_event *ev = &blk->events[e];
		if (!ev->is_delegated_op || !ev->node_count || !ev->debug_count ||
		    !ev->delegate_backend_name ||
		    strcmp(ev->delegate_backend_name, dc->delegate_backend_name))
			continue;
		if (share_handle(ev, dc))
			return true;
	}
	return false;
}

/* The items of one inspector: each instruction (or delegate event) with debug data once. */
static int gather_inspector(etc_numgap *ng, gather *g, const etc_inspector *insp, int side,
                            const char *block, const char *what, etc_error *err)
{
	const etc_event_block *blk = find_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	const char *file = etc_etdump_name(etc_inspector_etdump(insp));
	if (!blk)
		return etc_fail(err, ETC_ERR_USAGE, file, -1,
		                "the %s has no EventBlock \"%s\" with intermediate outputs", what,
		                block);
	if (!buf)
		return etc_fail(err, ETC_ERR_USAGE, file, -1,
		                "the %s needs its debug buffer (the intermediate outputs' values)",
		                what);
	const etc_inspector_event *last = NULL;
	for (size_t e = 0; e < blk->event_count; e++) {
		const etc_inspector_event *ev = &blk->events[e];
		if (!ev->debug_count)
			continue;
		/* native_call_* and OPERATOR_CALL carry the same debug data: keep the first */
		if (last && same_instruction(last, ev))
			continue;
		last = ev;
		if (is_delegate_call(ev) && delegate_call_covered(blk, ev))
			continue;
		item *it = NULL;
		ETC_TRY(push_item(g, &it, err));
		it->side = side;
		it->order = (uint32_t)(g->n - 1);
		it->ev = ev;
		it->name = ev->name.ptr;
		ETC_TRY(
		    set_handles(&ng->arena, it, ev->debug_handles, ev->debug_handle_count, err));
		for (uint32_t k = 0; k < ev->debug_count; k++) {
			const etc_value *v = &ev->debug[k];
			if (v->type != ETC_VALUE_TENSOR && v->type != ETC_VALUE_TENSOR_LIST)
				continue; /* scalars are not intermediate tensors */
			for (uint32_t i = 0; i < v->tensor_count; i++) {
				otensor *o = NULL;
				ETC_TRY(push_tensor(g, &o, err));
				int rc = etc_value_tensor(v, i, buf, &o->t, err);
				if (rc < 0 && rc != ETC_ERR_UNSUPPORTED)
					return rc;
				o->has_data = o->t.data != NULL || (rc == 0 && o->t.numel == 0);
				if (!o->has_data)
					snprintf(o->why, sizeof o->why, "%s",
					         rc < 0 ? "unsupported scalar type"
					                : "no data (offset -1)");
				it->nout++;
			}
		}
		/* an instruction logs its outputs last: keep num_outputs of them */
		if (ev->num_outputs > 0 && (uint64_t)ev->num_outputs < it->nout) {
			it->first += it->nout - (uint32_t)ev->num_outputs;
			it->nout = (uint32_t)ev->num_outputs;
		} else if (ev->num_outputs <= 0 && is_delegate_call(ev) && it->nout > 1) {
			/* the runtime logs every argument of a delegate call, inputs
			 * first: without the count of outputs only the last is one */
			it->first += it->nout - 1;
			it->nout = 1;
		}
		if (!it->nout)
			g->n--; /* only scalars: nothing to compare */
	}
	return 0;
}

/* "12", "12,13", "(12, 13)", "[12]": the debug handles of an .npz array
 * name. 0, -1 not such a name, -2 more than `cap` handles. */
static int parse_handles(const char *s, int64_t *out, size_t cap, size_t *n)
{
	*n = 0;
	const char *p = s;
	char close = *p == '(' ? ')' : *p == '[' ? ']' : '\0';
	bool paren = close != '\0';
	if (paren)
		p++;
	for (;;) {
		while (*p == ' ')
			p++;
		char *end;
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (errno)
			return -1;
		if (*n >= cap)
			return -2;
		out[(*n)++] = v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (paren && *p == close)
				break; /* Python's one-tuple "(12,)" */
			continue;
		}
		break;
	}
	if (paren) {
		if (*p != close)
			return -1; /* "(12" or "[12)" */
		p++;
	}
	return *p == '\0' ? 0 : -1;
}

/* The reason of a "file: byte N: member m, byte M: reason" message. */
static const char *after_where(const char *msg)
{
	const char *best = msg;
	for (const char *p = strstr(msg, "byte "); p; p = strstr(p + 1, "byte ")) {
		const char *q = p + 5;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q > p + 5 && q[0] == ':' && q[1] == ' ')
			best = q + 2;
	}
	return best;
}

#define MAX_NAME_HANDLES 4096

static int gather_npz(etc_numgap *ng, gather *g, const etc_npz *z, const char *name, etc_error *err)
{
	int64_t *h = malloc(MAX_NAME_HANDLES * sizeof *h);
	if (!h)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = 0;
	for (size_t i = 0; i < etc_npz_count(z) && rc == 0; i++) {
		const char *an = etc_npz_name(z, i);
		size_t nh;
		int pr = parse_handles(an, h, MAX_NAME_HANDLES, &nh);
		if (pr == -2) {
			rc = etc_fail(err, ETC_ERR_LIMIT, name, -1,
			              "array \"%.60s...\" is named by more than %d debug handles",
			              an, MAX_NAME_HANDLES);
			break;
		}
		if (pr < 0) {
			rc = etc_fail(err, ETC_ERR_FORMAT, name, -1,
			              "array \"%s\" is not named by debug handles (\"12\", or "
			              "\"12,13\" for a group)",
			              an);
			break;
		}
		item *it = NULL;
		if ((rc = push_item(g, &it, err)) < 0)
			break;
		it->side = ETC_NUMGAP_REFERENCE;
		it->order = (uint32_t)i;
		it->name = an;
		if ((rc = set_handles(&ng->arena, it, h, nh, err)) < 0)
			break;
		otensor *o = NULL;
		if ((rc = push_tensor(g, &o, err)) < 0)
			break;
		/* the CRC-32 is checked in the comparison's pass, or at the end */
		etc_error e2;
		etc_error_clear(&e2);
		int r = etc_npz_array_deferred_(z, i, &o->t, &o->check, &e2);
		o->has_data = r == 0;
		if (r == ETC_ERR_UNSUPPORTED) {
			o->t.scalar_type = -1; /* "unknown" */
			snprintf(o->why, sizeof o->why, "array \"%.20s\": %.90s", an,
			         after_where(e2.message));
		} else if (r < 0) {
			if (err)
				*err = e2;
			rc = r;
			break;
		}
		it->nout = 1;
	}
	free(h);
	return rc;
}

/* --- rows ---------------------------------------------------------------------------- */

static int push_row(etc_numgap *ng, etc_numgap_row **out, etc_error *err)
{
	/* rows and the two tensors of each grow together */
	size_t need = ng->nrows + 1, c1 = ng->caprows, c2 = ng->caprows, c3 = ng->caprows;
	etc_numgap_row *rows = grow(ng->rows, &c1, need, sizeof *rows);
	ng->rows = rows ? rows : ng->rows;
	etc_tensor *act = rows ? grow(ng->act, &c2, need, sizeof *act) : NULL;
	ng->act = act ? act : ng->act;
	etc_tensor *ref = act ? grow(ng->ref, &c3, need, sizeof *ref) : NULL;
	ng->ref = ref ? ref : ng->ref;
	size_t c4 = ng->caprows;
	rowx *xf = ref ? grow(ng->xf, &c4, need, sizeof *xf) : NULL;
	if (!xf)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->xf = xf;
	ng->caprows = c4;
	etc_numgap_row *r = &ng->rows[ng->nrows];
	memset(r, 0, sizeof *r);
	memset(&ng->act[ng->nrows], 0, sizeof *ng->act);
	memset(&ng->ref[ng->nrows], 0, sizeof *ng->ref);
	memset(&ng->xf[ng->nrows], 0, sizeof *ng->xf);
	ng->nrows++;
	r->ops = r->reference_ops = r->event_name = r->stack_trace = r->source_line =
	    r->module_path = "";
	r->dtype = r->reference_dtype = "";
	r->nodes = r->reference_nodes = r->delegate_backend = "";
	r->gap = NAN;
	r->snr_drop = NAN;
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
	etc_numgap_unmatched *u = grow(ng->un, &ng->capun, ng->nun + 1, sizeof *u);
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

/* Finishes the deferred CRC-32 check of an .npz array (ETC_ERR_FORMAT naming the member). */
static int verify_ref(const etc_numgap *ng, otensor *r, etc_error *err)
{
	if (!r->check.pending)
		return 0;
	uint32_t crc = etc_crc32(r->check.crc, r->t.data, (size_t)r->t.nbytes);
	ETC_TRY(etc_npz_crc_end_(ng->npz, &r->check, crc, err));
	r->check.pending = false;
	return 0;
}

static bool is_int_code(int st)
{
	return st == ETC_BYTE || st == ETC_CHAR || st == ETC_SHORT || st == ETC_UINT16 ||
	       st == ETC_INT || st == ETC_QINT8 || st == ETC_QUINT8 || st == ETC_QINT32;
}

/* The runtime values of row i: the tensor, permuted and dequantized as decided. */
static void row_chain(etc_numgap *ng, size_t i, etc_values *out)
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

/* The values row i compares (numgap_compare.c calls it from its threads). */
static void row_values(void *ctx, size_t i, etc_values *actual, etc_values *reference)
{
	etc_numgap *ng = ctx;
	row_chain(ng, i, actual);
	etc_values_from_tensor(reference, &ng->ref[i]);
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
	if (f) {
		*q = *f;
		return ETC_NUMGAP_QUANT_FILE;
	}
	snprintf(why, cap,
	         "needs quantization parameters (--quant-params): no quantize or "
	         "dequantize node with literal scale and zero point in the ETRecord");
	/* the node of the largest handle of the compared event, or its single user */
	const etc_graph_node *best = NULL;
	if (it->ev)
		for (uint32_t k = 0; k < it->ev->node_count; k++)
			if (!best || it->ev->nodes[k]->debug_handle >= best->debug_handle)
				best = it->ev->nodes[k];
	long idx = best ? etc_ng_graph_index_(&ng->g_rt, best) : -1;
	if (etc_ng_qgraph_find_(&ng->g_rt, idx, &ng->arena, q, why, cap))
		return ETC_NUMGAP_QUANT_ETRECORD;
	return ETC_NUMGAP_QUANT_NONE;
}

/* Sets up the dequantization of row i along the reference's layout; false with the reason. */
static bool setup_dequant(etc_numgap *ng, size_t i, const item *it, const etc_tensor *ref)
{
	etc_numgap_row *row = &ng->rows[i];
	rowx *x = &ng->xf[i];
	etc_ng_qparams q;
	char why[160];
	int src = find_qparams(ng, row, it, &q, why, sizeof why);
	if (src == ETC_NUMGAP_QUANT_NONE) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "%s", why);
		return false;
	}
	uint64_t inner = 1;
	if (q.channels > 1) {
		int64_t axis = q.axis < 0 ? q.axis + (int64_t)ref->ndim : q.axis;
		if (axis < 0 || axis >= (int64_t)ref->ndim ||
		    etc_tensor_size(ref, (uint32_t)axis) != (int64_t)q.channels) {
			row->status = ETC_ROW_DTYPE_MISMATCH;
			snprintf(
			    row->reason, sizeof row->reason,
			    "quantization parameters do not fit: %u channels along axis %lld of "
			    "shape %.40s",
			    q.channels, (long long)q.axis, row->reference_shape);
			return false;
		}
		for (uint32_t k = (uint32_t)axis + 1; k < ref->ndim; k++)
			inner *= (uint64_t)etc_tensor_size(ref, k);
	}
	x->dequant = true;
	x->dq.scale = q.scale;
	x->dq.zero_point = q.zero_point;
	x->dq.channels = q.channels;
	x->dq.inner = inner ? inner : 1;
	row->quant_source = src;
	snprintf(row->quant, sizeof row->quant, "%s", q.source);
	return true;
}

static double distance_of(int d, const etc_metrics *m)
{
	if (d == ETC_NUMGAP_L1)
		return m->count ? m->l1 * (double)m->count : 0.0;
	if (d == ETC_NUMGAP_SNR)
		return m->snr_db;
	return m->mse;
}

static void compare_pair(etc_numgap *ng, size_t i, const item *ait, const otensor *a, otensor *r,
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
	if ((a->t.numel != r->t.numel || strcmp(row->shape, row->reference_shape) != 0) &&
	    !layout_match(ng, &a->t, &r->t, &ng->xf[i], row)) {
		row->status = ETC_ROW_SHAPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "shape %.60s against reference %.60s",
		         row->shape, row->reference_shape);
		return;
	}
	bool af = etc_scalar_type_is_float_(a->t.scalar_type);
	bool rf = etc_scalar_type_is_float_(r->t.scalar_type);
	if (!af && rf && is_int_code(a->t.scalar_type)) {
		if (!setup_dequant(ng, i, ait, &r->t))
			return;
	} else if (af != rf) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "dtype %s against reference %s",
		         row->dtype, row->reference_dtype);
		return;
	}
	etc_values va, vr;
	row_chain(ng, i, &va);
	etc_values_from_tensor(&vr, &r->t);
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
			*rc = verify_ref(ng, r, err);
	} else {
		/* compared after alignment, rows spread over the threads (numgap_compare.c) */
		*rc = etc_ng_pending_add_(&ng->pending, i, err);
		return;
	}
	if (*rc < 0)
		return;
	row->has_metrics = true;
	row->gap = distance_of(ng->opt.distance, &row->metrics);
	row->status = etc_gate_judge_(&row->metrics, gate, row->reason, sizeof row->reason);
}

/* How well output `o` fits `want`: 2 shape and dtype, 1 shape, 0 neither. */
static int fit(const otensor *o, const otensor *want)
{
	char s1[96], s2[96];
	etc_shape_str_(&o->t, s1, sizeof s1);
	etc_shape_str_(&want->t, s2, sizeof s2);
	if (strcmp(s1, s2))
		return 0;
	return o->t.scalar_type == want->t.scalar_type ? 2 : 1;
}

/* The output of `it` that fits `want` best; ties go to the last (an op's result). */
static uint32_t pick(const gather *g, const item *it, const otensor *want)
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
	/* pair k is outputs (pa, pr): by position, or the one output of a side
	 * with the best fit on the other */
	bool one = a->nout != r->nout && (a->nout == 1 || r->nout == 1);
	uint32_t np = one ? 1 : (a->nout < r->nout ? a->nout : r->nout);
	for (uint32_t k = 0; k < np; k++) {
		uint32_t pa = k, pr = k;
		if (one && r->nout == 1)
			pa = pick(g, a, &g->ts[r->first]);
		else if (one)
			pr = pick(g, r, &g->ts[a->first]);
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
		int rc = 0;
		compare_pair(ng, i, a, &g->ts[a->first + pa], &g->ts[r->first + pr], gate, err,
		             &rc);
		ETC_TRY(rc);
	}
	/* outputs left over on either side */
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
	int rc = set_handles(&ng->arena, &tmp, h, k, err);
	free(h);
	*out = tmp.handles;
	*count = tmp.nh;
	return rc;
}

static int align_by_handle(etc_numgap *ng, gather *g, const etc_gate *gate, etc_error *err)
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

static int align_by_instruction(etc_numgap *ng, gather *g, size_t nrt, const char *rt_name,
                                const char *ref_name, const etc_gate *gate, etc_error *err)
{
	size_t nref = g->n - nrt;
	for (size_t i = 0; i < nrt || i < nref; i++) {
		const item *a = i < nrt ? &g->items[i] : NULL;
		const item *r = i < nref ? &g->items[nrt + i] : NULL;
		if (a && r && same_instruction(a->ev, r->ev) && !strcmp(a->name, r->name))
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
static int nothing_aligned(const gather *g, size_t nrt, bool by_handle, const char *block,
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

/* --- refusing an ETRecord that is not the ETDump's own ------------------------------------- */

static int warn(etc_numgap *ng, etc_error *err, const char *fmt, ...) ETC_PRINTF(3, 4);

static int warn(etc_numgap *ng, etc_error *err, const char *fmt, ...)
{
	char buf[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	const char **w = grow(ng->warn, &ng->capwarn, ng->nwarn + 1, sizeof *w);
	if (!w)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->warn = w;
	w[ng->nwarn] = etc_arena_strdup(&ng->arena, buf, strlen(buf));
	if (!w[ng->nwarn])
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->nwarn++;
	return 0;
}

/* Does the event name contain the base name of one of its linked nodes' ops? */
static bool name_fits(const etc_inspector_event *ev, const char **op)
{
	char name[256], base[128];
	size_t l = ev->name.len < sizeof name - 1 ? ev->name.len : sizeof name - 1;
	memcpy(name, ev->name.ptr, l);
	name[l] = '\0';
	*op = "";
	for (uint32_t k = 0; k < ev->node_count; k++) {
		etc_ng_op_base_(ev->nodes[k]->op, base, sizeof base);
		if (*base && strstr(name, base))
			return true;
		*op = ev->nodes[k]->op;
	}
	return ev->node_count == 0;
}

/*
 * The ETRecord linked to one side must be its own: more than half of the
 * events with intermediate outputs without a debug handle, or an event
 * whose name contains none of its linked nodes' op names, stop the run
 * (ETC_ERR_MISMATCH naming the files and the flag), or warn with force.
 */
static int check_record(etc_numgap *ng, const gather *g, size_t from, size_t to,
                        const etc_inspector *insp, const char *flag, etc_error *err)
{
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	if (!rec || from == to)
		return 0;
	const char *dump = etc_etdump_name(etc_inspector_etdump(insp));
	const char *rname = etc_etrecord_name(rec);
	size_t unlinked = 0, total = 0;
	const item *bad = NULL;
	const char *bad_op = "";
	for (size_t i = from; i < to; i++) {
		const item *it = &g->items[i];
		if (!it->ev)
			continue;
		total++;
		unlinked += it->nh == 0;
		const etc_inspector_event *ev = it->ev;
		/* delegated events are named by their delegate id; DELEGATE_CALL and
		 * OPERATOR_CALL by their kind */
		if (bad || ev->is_delegated_op || !ev->name.len || is_delegate_call(ev) ||
		    (ev->name.len == 13 && !memcmp(ev->name.ptr, "OPERATOR_CALL", 13)))
			continue;
		const char *op;
		if (!name_fits(ev, &op))
			bad = it, bad_op = op;
	}
	char msg[600];
	if (unlinked * 2 > total)
		snprintf(
		    msg, sizeof msg,
		    "%s: %zu of the %zu events with intermediate outputs have no debug handle "
		    "in ETRecord %s: it is not the record of this ETDump; give its own with %s",
		    dump, unlinked, total, rname, flag);
	else if (bad)
		snprintf(
		    msg, sizeof msg,
		    "%s: instruction %d \"%s\" is linked by ETRecord %s to %s, which it does not "
		    "run: the record is not the one of this ETDump; give its own with %s",
		    dump, bad->ev->instruction_id, bad->name, rname, bad_op, flag);
	else
		return 0;
	if (!ng->opt.force)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "%s (or --force to compare anyway)", msg);
	return warn(ng, err, "%s (--force: compared anyway)", msg);
}

/* --- each row's share of the error -------------------------------------------------------- */

static double own_snr(const etc_numgap_row *r)
{
	return r->metrics.identical ? INFINITY : r->metrics.snr_db;
}

/* SNR drop of every compared row through the runtime's graph (NaN without one). */
static int snr_drops(etc_numgap *ng, etc_error *err)
{
	const etc_ng_graph *g = &ng->g_rt;
	if (!g->n)
		return 0;
	double *snr = malloc(g->n * sizeof *snr), *eff = malloc(g->n * sizeof *eff);
	uint32_t *mark = calloc(g->n, sizeof *mark), *mine = malloc(g->n * sizeof *mine);
	if (!snr || !eff || !mark || !mine) {
		free(snr), free(eff), free(mark), free(mine);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < g->n; i++)
		snr[i] = NAN;
	/* a node's SNR: the lowest of the compared rows that hold its handle */
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics)
			continue;
		double v = own_snr(r);
		for (uint32_t h = 0; h < r->handle_count; h++) {
			const etc_graph_node *const *nodes;
			size_t n =
			    etc_etrecord_nodes_for_handle(g->rec, g->method, r->handles[h], &nodes);
			for (size_t k = 0; k < n; k++) {
				long x = etc_ng_graph_index_(g, nodes[k]);
				if (x >= 0 && (isnan(snr[x]) || v < snr[x]))
					snr[x] = isnan(v) ? INFINITY : v;
			}
		}
	}
	etc_ng_graph_effective_snr_(g, snr, eff, err);
	for (size_t i = 0; i < ng->nrows; i++) {
		etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics)
			continue;
		/* mark the row's own nodes (their edges between each other are internal) */
		uint32_t stamp = (uint32_t)i + 1;
		size_t nmine = 0;
		for (uint32_t h = 0; h < r->handle_count; h++) {
			const etc_graph_node *const *nodes;
			size_t n =
			    etc_etrecord_nodes_for_handle(g->rec, g->method, r->handles[h], &nodes);
			for (size_t k = 0; k < n; k++) {
				long x = etc_ng_graph_index_(g, nodes[k]);
				if (x >= 0 && mark[x] != stamp) {
					mark[x] = stamp;
					mine[nmine++] = (uint32_t)x;
				}
			}
		}
		if (!nmine)
			continue;
		double in = INFINITY;
		for (size_t m = 0; m < nmine; m++) {
			uint32_t x = mine[m];
			for (uint32_t k = g->in_start[x]; k < g->in_start[x + 1]; k++)
				if (mark[g->in[k]] != stamp && eff[g->in[k]] < in)
					in = eff[g->in[k]];
		}
		double own = own_snr(r);
		if (isnan(own))
			r->snr_drop = NAN;
		else if (isinf(in) && isinf(own))
			r->snr_drop = 0.0; /* exact over exact inputs */
		else
			r->snr_drop = in - own;
	}
	free(snr);
	free(eff);
	free(mark);
	free(mine);
	return 0;
}

/* --- public ------------------------------------------------------------------------------- */

void etc_numgap_options_init(etc_numgap_options *o)
{
	memset(o, 0, sizeof *o);
	o->block = "Execute";
	o->min_snr = o->max_mse = o->min_cosine = o->max_abs = NAN;
	o->distance = ETC_NUMGAP_MSE;
	o->layout = ETC_NUMGAP_LAYOUT_AUTO;
}

const char *etc_numgap_distance_name(int d)
{
	return d == ETC_NUMGAP_L1 ? "l1" : d == ETC_NUMGAP_SNR ? "snr" : "mse";
}

int etc_numgap_distance_parse(const char *name, int *out)
{
	static const char *const names[] = {"mse", "l1", "snr"};
	for (int i = 0; i < 3; i++)
		if (name && !strcmp(name, names[i])) {
			*out = i;
			return 0;
		}
	return ETC_ERR_USAGE;
}

const char *etc_numgap_quant_source_name(int s)
{
	return s == ETC_NUMGAP_QUANT_FILE       ? "quant-params"
	       : s == ETC_NUMGAP_QUANT_ETRECORD ? "etrecord"
	                                        : "";
}

size_t etc_numgap_warning_count(const etc_numgap *ng)
{
	return ng->nwarn;
}

const char *etc_numgap_warning(const etc_numgap *ng, size_t i)
{
	return i < ng->nwarn ? ng->warn[i] : NULL;
}

int etc_numgap_run(etc_numgap **out, const etc_inspector *insp, const etc_numgap_reference *ref,
                   const etc_numgap_options *opt, etc_error *err)
{
	etc_numgap_options o;
	if (!opt)
		etc_numgap_options_init(&o), opt = &o;
	if (!out || !insp || !ref || !ref->insp == !ref->npz)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_numgap_run: needs an inspector and exactly one reference");
	const char *block = opt->block ? opt->block : "Execute";
	const char *rt_name = etc_etdump_name(etc_inspector_etdump(insp));
	const char *ref_name = ref->name   ? ref->name
	                       : ref->insp ? etc_etdump_name(etc_inspector_etdump(ref->insp))
	                                   : "the reference";
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	bool by_handle = rec != NULL;
	if (ref->npz && !by_handle)
		return etc_fail(err, ETC_ERR_USAGE, ref_name, -1,
		                "intermediate outputs from an .npz are keyed by debug handle: "
		                "give --etrecord to key the runtime's too");
	if (ref->insp && by_handle && !etc_inspector_etrecord(ref->insp))
		return etc_fail(err, ETC_ERR_USAGE, ref_name, -1,
		                "the runtime is linked to an ETRecord but the reference ETDump is "
		                "not: link both (or neither, for two runs of the same program)");
	etc_numgap *ng = calloc(1, sizeof *ng);
	if (!ng)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	etc_arena_init(&ng->arena);
	ng->first = -1;
	ng->opt = *opt;
	ng->opt.block = block;
	ng->alignment = by_handle ? ETC_NUMGAP_BY_HANDLE : ETC_NUMGAP_BY_INSTRUCTION;
	ng->rec = rec;
	ng->method = -1;
	if (rec) {
		const char *m = etc_inspector_etrecord_method(insp);
		ng->method =
		    m ? etc_etrecord_method_index(rec, m) : etc_etrecord_default_method(rec);
	}
	/* a reference ETDump names its ops from its own ETRecord; .npz arrays
	 * are keyed by the runtime's */
	ng->ref_rec = rec;
	ng->ref_method = ng->method;
	ng->npz = ref->npz;
	if (ref->insp) {
		ng->ref_rec = etc_inspector_etrecord(ref->insp);
		ng->ref_method = -1;
		if (ng->ref_rec) {
			const char *m = etc_inspector_etrecord_method(ref->insp);
			ng->ref_method = m ? etc_etrecord_method_index(ng->ref_rec, m)
			                   : etc_etrecord_default_method(ng->ref_rec);
		}
	}
	gather g = {0};
	int rc = etc_ng_graph_init_(&ng->g_rt, ng->rec, ng->method, err);
	if (rc == 0 && opt->quant_params) {
		rc = etc_ng_qfile_load_(&ng->qfile, &ng->arena, opt->quant_params, err);
		ng->has_qfile = rc == 0;
	}
	if (rc == 0)
		rc = gather_inspector(ng, &g, insp, ETC_NUMGAP_RUNTIME, block, "runtime ETDump",
		                      err);
	size_t nrt = g.n;
	if (rc == 0)
		rc = ref->npz ? gather_npz(ng, &g, ref->npz, ref_name, err)
		              : gather_inspector(ng, &g, ref->insp, ETC_NUMGAP_REFERENCE, block,
		                                 "reference ETDump", err);
	if (rc == 0 && by_handle)
		rc = check_record(ng, &g, 0, nrt, insp, "--etrecord", err);
	if (rc == 0 && by_handle && ref->insp)
		rc = check_record(ng, &g, nrt, g.n, ref->insp, "--reference-etrecord", err);
	etc_gate gate = {opt->min_snr, opt->max_mse, opt->min_cosine, opt->max_abs};
	if (rc == 0)
		rc = by_handle ? align_by_handle(ng, &g, &gate, err)
		               : align_by_instruction(ng, &g, nrt, rt_name, ref_name, &gate, err);
	if (rc == 0)
		rc = etc_ng_compare_rows_(ng->rows, row_values, ng, &ng->pending, &gate, err);
	for (size_t k = 0; rc == 0 && k < ng->pending.n; k++) {
		etc_numgap_row *row = &ng->rows[ng->pending.rows[k]];
		row->gap = distance_of(ng->opt.distance, &row->metrics);
	}
	/* reference arrays not compared are verified too, before any report */
	for (size_t i = 0; i < g.nt && rc == 0; i++)
		rc = verify_ref(ng, &g.ts[i], err);
	if (rc == 0 && ng->nrows == 0)
		rc = nothing_aligned(&g, nrt, by_handle, block, rt_name, ref_name, err);
	if (rc == 0)
		rc = snr_drops(ng, err);
	free(g.items);
	free(g.ts);
	if (rc < 0) {
		etc_numgap_free(ng);
		return rc;
	}
	for (size_t i = 0; i < ng->nrows; i++)
		if (ng->rows[i].status != ETC_ROW_PASS) {
			ng->first = (long)i;
			break;
		}
	*out = ng;
	return 0;
}

void etc_numgap_free(etc_numgap *ng)
{
	if (!ng)
		return;
	etc_ng_graph_free_(&ng->g_rt);
	etc_arena_release(&ng->arena);
	etc_ng_pending_free_(&ng->pending);
	free(ng->rows);
	free(ng->act);
	free(ng->ref);
	free(ng->xf);
	free(ng->warn);
	free(ng->un);
	free(ng);
}

int etc_numgap_alignment_get(const etc_numgap *ng)
{
	return ng->alignment;
}

const etc_numgap_options *etc_numgap_options_get(const etc_numgap *ng)
{
	return &ng->opt;
}

size_t etc_numgap_row_count(const etc_numgap *ng)
{
	return ng->nrows;
}

const etc_numgap_row *etc_numgap_row_at(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows ? &ng->rows[i] : NULL;
}

long etc_numgap_first_divergence(const etc_numgap *ng)
{
	return ng->first;
}

size_t etc_numgap_failures(const etc_numgap *ng)
{
	size_t n = 0;
	for (size_t i = 0; i < ng->nrows; i++)
		n += ng->rows[i].status != ETC_ROW_PASS;
	return n;
}

/* Is row i's SNR drop ahead of row j's: larger first, ties in execution order. */
static bool drop_before(const etc_numgap *ng, size_t i, size_t j)
{
	double x = ng->rows[i].snr_drop, y = ng->rows[j].snr_drop;
	return x > y || (x == y && i < j);
}

size_t etc_numgap_top_drops(const etc_numgap *ng, size_t k, size_t *idx)
{
	/* a partial insertion sort: the rows can be many, k is small */
	size_t nt = 0;
	for (size_t i = 0; i < ng->nrows && k; i++) {
		if (!(ng->rows[i].snr_drop > 0)) /* NaN, no loss or a gain */
			continue;
		size_t at;
		if (nt < k)
			at = nt++;
		else if (drop_before(ng, i, idx[k - 1]))
			at = k - 1;
		else
			continue;
		idx[at] = i;
		for (; at > 0 && drop_before(ng, idx[at], idx[at - 1]); at--) {
			size_t t = idx[at];
			idx[at] = idx[at - 1];
			idx[at - 1] = t;
		}
	}
	return nt;
}

size_t etc_numgap_unmatched_count(const etc_numgap *ng)
{
	return ng->nun;
}

const etc_numgap_unmatched *etc_numgap_unmatched_at(const etc_numgap *ng, size_t i)
{
	return i < ng->nun ? &ng->un[i] : NULL;
}

int etc_numgap_row_values(const etc_numgap *ng, size_t i, etc_values *actual, etc_values *reference)
{
	if (i >= ng->nrows || !ng->rows[i].has_metrics)
		return ETC_ERR_USAGE;
	/* the contexts live in the gap: reading through them does not change it */
	row_chain((etc_numgap *)ng, i, actual);
	etc_values_from_tensor(reference, &ng->ref[i]);
	return 0;
}

const etc_tensor *etc_numgap_row_tensor(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows && ng->rows[i].has_metrics ? &ng->act[i] : NULL;
}

const etc_tensor *etc_numgap_row_reference_tensor(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows && ng->rows[i].has_metrics ? &ng->ref[i] : NULL;
}
