/*
 * numgap_gather.c - the numeric gap's items: the intermediate outputs of an
 * Inspector (one per instruction or delegate event with debug data) and of
 * an .npz (one per array, named by its debug handles).
 */
#include "analysis/numgap_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int etc_ng_push_item_(gather *g, item **out, etc_error *err)
{
	item *p = etc_ng_grow_(g->items, &g->cap, g->n + 1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	g->items = p;
	*out = &p[g->n++];
	memset(*out, 0, sizeof **out);
	(*out)->first = (uint32_t)g->nt;
	return 0;
}

int etc_ng_push_tensor_(gather *g, otensor **out, etc_error *err)
{
	otensor *p = etc_ng_grow_(g->ts, &g->capt, g->nt + 1, sizeof *p);
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
int etc_ng_set_handles_(etc_arena *a, item *it, const int64_t *h, size_t n, etc_error *err)
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

long etc_ng_find_block_(const etc_inspector *insp, const char *name)
{
	size_t nb = etc_inspector_block_count(insp), len = strlen(name);
	const char *hash = strrchr(name, '#');
	if (hash && hash[1] >= '0' && hash[1] <= '9') {
		char *end;
		unsigned long idx = strtoul(hash + 1, &end, 10);
		size_t k = (size_t)(hash - name);
		const etc_event_block *blk = idx < nb ? etc_inspector_block(insp, idx) : NULL;
		if (!*end && blk && blk->name.len == k && !memcmp(blk->name.ptr, name, k))
			return (long)idx;
	}
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len == len && !memcmp(blk->name.ptr, name, len))
			return (long)b;
	}
	return -1;
}

bool etc_ng_same_instruction_(const etc_inspector_event *a, const etc_inspector_event *b)
{
	return a->instruction_id == b->instruction_id &&
	       a->delegate_debug_id_int == b->delegate_debug_id_int &&
	       a->delegate_debug_id_str.len == b->delegate_debug_id_str.len &&
	       !memcmp(a->delegate_debug_id_str.ptr, b->delegate_debug_id_str.ptr,
	               a->delegate_debug_id_str.len);
}

bool etc_ng_is_delegate_call_(const etc_inspector_event *ev)
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
int etc_ng_gather_inspector_(etc_numgap *ng, gather *g, const etc_inspector *insp, int side,
                             size_t block, uint32_t run, const char *what, etc_error *err)
{
	const etc_event_block *blk = etc_inspector_block(insp, block);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	const char *file = etc_etdump_name(etc_inspector_etdump(insp));
	if (!blk || run >= blk->run_count)
		return etc_fail(err, ETC_ERR_USAGE, file, -1, "the %s has no block %zu run %u",
		                what, block, run);
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
		if (last && etc_ng_same_instruction_(last, ev))
			continue;
		last = ev;
		if (etc_ng_is_delegate_call_(ev) && delegate_call_covered(blk, ev))
			continue;
		item *it = NULL;
		ETC_TRY(etc_ng_push_item_(g, &it, err));
		it->side = side;
		it->order = (uint32_t)(g->n - 1);
		it->ev = ev;
		it->name = ev->name.ptr;
		ETC_TRY(etc_ng_set_handles_(&ng->arena, it, ev->debug_handles,
		                            ev->debug_handle_count, err));
		/* a later run's values are read from its own debug events */
		const etc_value *vals = ev->debug;
		if (run > 0) {
			etc_value *mine =
			    etc_arena_alloc(&ng->arena, ev->debug_count, sizeof *mine);
			uint32_t nv = 0;
			if (!mine)
				return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			ETC_TRY(etc_inspector_run_debug(insp, block, e, run, mine, ev->debug_count,
			                                &nv, err));
			vals = mine;
		}
		for (uint32_t k = 0; k < ev->debug_count; k++) {
			const etc_value *v = &vals[k];
			if (v->type != ETC_VALUE_TENSOR && v->type != ETC_VALUE_TENSOR_LIST)
				continue; /* scalars are not intermediate tensors */
			for (uint32_t i = 0; i < v->tensor_count; i++) {
				otensor *o = NULL;
				ETC_TRY(etc_ng_push_tensor_(g, &o, err));
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
		} else if (ev->num_outputs <= 0 && etc_ng_is_delegate_call_(ev) && it->nout > 1) {
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

int etc_ng_gather_npz_(etc_numgap *ng, gather *g, const etc_npz *z, const char *name,
                       etc_error *err)
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
		if ((rc = etc_ng_push_item_(g, &it, err)) < 0)
			break;
		it->side = ETC_NUMGAP_REFERENCE;
		it->order = (uint32_t)i;
		it->name = an;
		if ((rc = etc_ng_set_handles_(&ng->arena, it, h, nh, err)) < 0)
			break;
		otensor *o = NULL;
		if ((rc = etc_ng_push_tensor_(g, &o, err)) < 0)
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
