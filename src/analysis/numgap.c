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
#include "analysis/numgap_compare.h"

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

struct etc_numgap {
	etc_arena arena;
	int alignment;
	etc_numgap_row *rows;
	etc_tensor *act, *ref; /* per row */
	size_t nrows, caprows;
	etc_numgap_unmatched *un;
	size_t nun, capun;
	long first;
	etc_numgap_options opt;
	/* for op names and stack traces: each side's ETRecord and method */
	const etc_etrecord *rec, *ref_rec;
	int method, ref_method;
	const etc_npz *npz;     /* the .npz reference, for its CRC checks */
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
		item *it;
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
				otensor *o;
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
		item *it;
		if ((rc = push_item(g, &it, err)) < 0)
			break;
		it->side = ETC_NUMGAP_REFERENCE;
		it->order = (uint32_t)i;
		it->name = an;
		if ((rc = set_handles(&ng->arena, it, h, nh, err)) < 0)
			break;
		otensor *o;
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
	if (!ref)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->ref = ref;
	ng->caprows = c3;
	etc_numgap_row *r = &ng->rows[ng->nrows];
	memset(r, 0, sizeof *r);
	memset(&ng->act[ng->nrows], 0, sizeof *ng->act);
	memset(&ng->ref[ng->nrows], 0, sizeof *ng->ref);
	ng->nrows++;
	r->ops = r->reference_ops = r->event_name = r->stack_trace = r->source_line =
	    r->module_path = "";
	r->dtype = r->reference_dtype = "";
	*out = r;
	return 0;
}

static int push_unmatched(etc_numgap *ng, const item *it, const otensor *o, etc_error *err,
                          const char *fmt, ...) ETC_PRINTF(5, 6);

static const char *ops_of(etc_numgap *ng, int side, const int64_t *h, size_t nh,
                          const char *fallback);

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

/* Sets *deferred when the pair is left to etc_ng_compare_rows_ (numgap_compare.c). */
static void compare_pair(const etc_numgap *ng, etc_numgap_row *row, etc_tensor *act,
                         etc_tensor *ref, const otensor *a, otensor *r, const etc_gate *gate,
                         etc_error *err, int *rc, bool *deferred)
{
	*act = a->t;
	*ref = r->t;
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
	if (a->t.numel != r->t.numel || strcmp(row->shape, row->reference_shape) != 0) {
		row->status = ETC_ROW_SHAPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "shape %.60s against reference %.60s",
		         row->shape, row->reference_shape);
		return;
	}
	if (etc_scalar_type_is_float_(a->t.scalar_type) !=
	    etc_scalar_type_is_float_(r->t.scalar_type)) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "dtype %s against reference %s",
		         row->dtype, row->reference_dtype);
		return;
	}
	etc_values va, vr;
	etc_values_from_tensor(&va, &a->t);
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
		*deferred = true;
		return;
	}
	if (*rc < 0)
		return;
	row->has_metrics = true;
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
		last_op(ng, a, row);
		int rc = 0;
		bool deferred = false;
		compare_pair(ng, row, &ng->act[i], &ng->ref[i], &g->ts[a->first + pa],
		             &g->ts[r->first + pr], gate, err, &rc, &deferred);
		ETC_TRY(rc);
		if (deferred)
			ETC_TRY(etc_ng_pending_add_(&ng->pending, i, err));
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

/* --- public ------------------------------------------------------------------------------- */

void etc_numgap_options_init(etc_numgap_options *o)
{
	o->block = "Execute";
	o->min_snr = o->max_mse = o->min_cosine = o->max_abs = NAN;
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
	int rc = gather_inspector(ng, &g, insp, ETC_NUMGAP_RUNTIME, block, "runtime ETDump", err);
	size_t nrt = g.n;
	if (rc == 0)
		rc = ref->npz ? gather_npz(ng, &g, ref->npz, ref_name, err)
		              : gather_inspector(ng, &g, ref->insp, ETC_NUMGAP_REFERENCE, block,
		                                 "reference ETDump", err);
	etc_gate gate = {opt->min_snr, opt->max_mse, opt->min_cosine, opt->max_abs};
	if (rc == 0)
		rc = by_handle ? align_by_handle(ng, &g, &gate, err)
		               : align_by_instruction(ng, &g, nrt, rt_name, ref_name, &gate, err);
	if (rc == 0)
		rc = etc_ng_compare_rows_(ng->rows, ng->act, ng->ref, &ng->pending, &gate, err);
	/* reference arrays not compared are verified too, before any report */
	for (size_t i = 0; i < g.nt && rc == 0; i++)
		rc = verify_ref(ng, &g.ts[i], err);
	if (rc == 0 && ng->nrows == 0)
		rc = nothing_aligned(&g, nrt, by_handle, block, rt_name, ref_name, err);
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
	etc_arena_release(&ng->arena);
	etc_ng_pending_free_(&ng->pending);
	free(ng->rows);
	free(ng->act);
	free(ng->ref);
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
	etc_values_from_tensor(actual, &ng->act[i]);
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
