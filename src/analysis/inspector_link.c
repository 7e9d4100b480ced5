/*
 * inspector_link.c - links the Inspector's events to an ETRecord: debug
 * handles per instruction (through the delegate map for delegated events),
 * graph nodes, delegate backends, op output counts; and the total time of
 * a module's events.
 */
#include "analysis/inspector_private.h"

#include <stdio.h>
#include <stdlib.h>

/* --- ETRecord linking ------------------------------------------------------ */

static bool is_framework_event(etc_str name)
{
	static const char *const reserved[] = {"Method::init", "Program::load_method",
	                                       "Method::execute"};
	for (size_t i = 0; i < 3; i++)
		if (name.len == strlen(reserved[i]) && memcmp(name.ptr, reserved[i], name.len) == 0)
			return true;
	return false;
}

/*
 * delegate_map[...]["delegate_map"][id], as upstream resolves it: a direct
 * lookup with the id itself, and when that misses, the last key (in map
 * order) that is a substring of str(id). JSON keys are strings, so the direct
 * lookup can only hit for string ids; int ids always take the second rule
 * (in which their exact key is one of the substrings).
 */
static bool contains(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	if (k > n)
		return false;
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return true;
	return false;
}

/*
 * The ids of one delegate map, hashed: key -> first and last position
 * (+1; 0 is an empty slot). A delegate can have hundreds of thousands of ids
 * and as many events; resolving each event by scanning every key would be
 * quadratic.
 */
typedef struct id_slot {
	size_t first, last;
} id_slot;

typedef struct id_index {
	const etc_delegate_info *d; /* NULL: unused slot of id_indexes */
	size_t cap;                 /* power of two */
	id_slot *slots;
	size_t max_len; /* longest key */
} id_index;

/* The indexes built during one etc_inspector_link, keyed by map. */
typedef struct id_indexes {
	id_index *tab;
	size_t cap, count;
} id_indexes;

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3u;
	return h;
}

static size_t pointer_slot(const void *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15u;
	return (size_t)((h ^ (h >> 29)) & (cap - 1));
}

static id_slot *id_lookup(const id_index *x, const char *key, size_t len)
{
	size_t at = (size_t)(hash_bytes(key, len) & (x->cap - 1));
	for (;; at = (at + 1) & (x->cap - 1)) {
		id_slot *sl = &x->slots[at];
		if (!sl->first)
			return sl;
		const char *k = x->d->ids[sl->first - 1];
		if (strlen(k) == len && memcmp(k, key, len) == 0)
			return sl;
	}
}

static int id_index_build(id_index *x, const etc_delegate_info *d)
{
	x->d = d;
	x->cap = 16;
	while (x->cap < 2 * d->id_count)
		x->cap <<= 1;
	x->slots = calloc(x->cap, sizeof *x->slots);
	if (!x->slots)
		return ETC_ERR_NOMEM;
	for (size_t i = 0; i < d->id_count; i++) {
		size_t len = strlen(d->ids[i]);
		id_slot *sl = id_lookup(x, d->ids[i], len);
		if (!sl->first)
			sl->first = i + 1;
		sl->last = i + 1;
		if (len > x->max_len)
			x->max_len = len;
	}
	return 0;
}

static void id_indexes_free(id_indexes *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->tab[i].slots);
	free(t->tab);
}

/* The index of `d`, built on first use; NULL when out of memory. */
static const id_index *id_indexes_get(id_indexes *t, const etc_delegate_info *d)
{
	if (2 * (t->count + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		id_index *tab = calloc(cap, sizeof *tab);
		if (!tab)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->tab[i].d)
				continue;
			size_t at = pointer_slot(t->tab[i].d, cap);
			while (tab[at].d)
				at = (at + 1) & (cap - 1);
			tab[at] = t->tab[i];
		}
		free(t->tab);
		t->tab = tab;
		t->cap = cap;
	}
	size_t at = pointer_slot(d, t->cap);
	while (t->tab[at].d && t->tab[at].d != d)
		at = (at + 1) & (t->cap - 1);
	if (!t->tab[at].d) {
		if (id_index_build(&t->tab[at], d) < 0) {
			t->tab[at].d = NULL;
			return NULL;
		}
		t->count++;
	}
	return &t->tab[at];
}

static size_t delegate_handles(const id_index *x, const etc_inspector_event *ev,
                               const int64_t **out)
{
	const etc_delegate_info *d = x->d;
	char num[16];
	const char *id;
	size_t len;
	if (ev->delegate_debug_id_int != -1) {
		len = (size_t)snprintf(num, sizeof num, "%d", ev->delegate_debug_id_int);
		id = num;
	} else {
		id = ev->delegate_debug_id_str.ptr;
		len = ev->delegate_debug_id_str.len;
	}
	*out = NULL;
	if (ev->delegate_debug_id_int == -1) {
		const id_slot *sl = id_lookup(x, id, len);
		if (sl->first) {
			*out = d->handles[sl->first - 1];
			return d->handle_counts[sl->first - 1];
		}
	}
	/* The last key that is a substring of the id: look up every substring
	 * no longer than the longest key, unless scanning the keys is cheaper. */
	size_t best = 0, kmax = x->max_len < len ? x->max_len : len;
	if (len * kmax <= d->id_count) {
		best = id_lookup(x, id, 0)->last; /* "" is a substring of every id */
		for (size_t i = 0; i < len; i++)
			for (size_t k = 1; k <= kmax && i + k <= len; k++) {
				size_t last = id_lookup(x, id + i, k)->last;
				if (last > best)
					best = last;
			}
	} else {
		for (size_t i = 0; i < d->id_count; i++)
			if (contains(id, len, d->ids[i]))
				best = i + 1;
	}
	if (!best)
		return 0;
	*out = d->handles[best - 1];
	return d->handle_counts[best - 1];
}

static int attach_nodes(etc_inspector *in, const etc_etrecord *rec, size_t m,
                        etc_inspector_event *ev, etc_error *err)
{
	size_t total = 0;
	for (uint32_t k = 0; k < ev->debug_handle_count; k++) {
		const etc_graph_node *const *nodes;
		total += etc_etrecord_nodes_for_handle(rec, m, ev->debug_handles[k], &nodes);
	}
	if (!total)
		return 0;
	const etc_graph_node **out = etc_arena_alloc(&in->arena, total, sizeof *out);
	if (!out)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	/* A handle listed twice names its nodes once. The set of nodes seen is
	 * hashed: a delegate event may carry hundreds of thousands of handles,
	 * and a pairwise check would be quadratic in them. */
	size_t cap = 16;
	while (cap < 2 * total)
		cap <<= 1;
	const etc_graph_node **seen = calloc(cap, sizeof *seen);
	if (!seen)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t at = 0;
	for (uint32_t k = 0; k < ev->debug_handle_count; k++) {
		const etc_graph_node *const *nodes;
		size_t n = etc_etrecord_nodes_for_handle(rec, m, ev->debug_handles[k], &nodes);
		for (size_t i = 0; i < n; i++) {
			size_t slot = pointer_slot(nodes[i], cap);
			while (seen[slot] && seen[slot] != nodes[i])
				slot = (slot + 1) & (cap - 1);
			if (!seen[slot]) {
				seen[slot] = nodes[i];
				out[at++] = nodes[i];
			}
		}
	}
	free(seen);
	total = at;
	ev->nodes = out;
	ev->node_count = (uint32_t)total;
	return 0;
}

/* What etc_inspector_link sets on an event: kept to restore the previous
 * link when a new one fails. */
typedef struct event_link {
	uint32_t debug_handle_count, node_count;
	const int64_t *debug_handles;
	const etc_graph_node *const *nodes;
	const char *delegate_backend_name;
	int64_t num_outputs;
} event_link;

/* Copies the events' links into `saved` (restore false) or back (true). */
static void swap_links(etc_inspector *in, event_link *saved, bool restore)
{
	size_t k = 0;
	for (size_t b = 0; b < in->nblocks; b++) {
		etc_inspector_event *evs = (etc_inspector_event *)in->blocks[b].events;
		for (size_t e = 0; e < in->blocks[b].event_count; e++, k++) {
			etc_inspector_event *ev = &evs[e];
			event_link *s = &saved[k];
			if (restore) {
				ev->debug_handle_count = s->debug_handle_count;
				ev->debug_handles = s->debug_handles;
				ev->node_count = s->node_count;
				ev->nodes = s->nodes;
				ev->delegate_backend_name = s->delegate_backend_name;
				ev->num_outputs = s->num_outputs;
			} else {
				*s = (event_link){ev->debug_handle_count,    ev->node_count,
				                  ev->debug_handles,         ev->nodes,
				                  ev->delegate_backend_name, ev->num_outputs};
			}
		}
	}
}

static int link_events(etc_inspector *in, const etc_etrecord *rec, const char *method,
                       etc_error *err);

int etc_inspector_link(etc_inspector *in, const etc_etrecord *rec, const char *method,
                       etc_error *err)
{
	if (!in || !rec)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_inspector_link: NULL argument");
	/* A failed link leaves the previous one (or none) in place. */
	size_t nevents = 0;
	for (size_t b = 0; b < in->nblocks; b++)
		nevents += in->blocks[b].event_count;
	event_link *saved = malloc((nevents ? nevents : 1) * sizeof *saved);
	if (!saved)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	swap_links(in, saved, false);
	const etc_etrecord *old_rec = in->rec;
	const char *old_method = in->rec_method;
	int rc = link_events(in, rec, method, err);
	if (rc < 0) {
		swap_links(in, saved, true);
		in->rec = old_rec;
		in->rec_method = old_method;
	}
	free(saved);
	return rc;
}

static int link_events(etc_inspector *in, const etc_etrecord *rec, const char *method,
                       etc_error *err)
{
	int m = method ? etc_etrecord_method_index(rec, method) : etc_etrecord_default_method(rec);
	if (m < 0) {
		char list[256] = "", near[300] = "";
		size_t best = 3; /* a suggestion within two edits */
		for (size_t i = 0; i < etc_etrecord_method_count(rec); i++) {
			size_t l = strlen(list);
			const char *name = etc_etrecord_method(rec, i);
			snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", name);
			size_t d =
			    method ? etc_edit_distance(method, name, ETC_EDIT_FOLD_CASE) : best;
			if (d < best) {
				best = d;
				snprintf(near, sizeof near, "; did you mean %.200s?", name);
			}
		}
		return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		                "the ETRecord has no method \"%s\" (it has: %s)%s",
		                method ? method : "forward", *list ? list : "none", near);
	}
	bool has_map = etc_etrecord_has_handle_map(rec, (size_t)m);
	size_t with_id = 0, resolved = 0;
	id_indexes ids = {0};
	int rc = 0;
	/* Linking again replaces what an earlier call attached. */
	for (size_t b = 0; b < in->nblocks; b++) {
		etc_inspector_event *evs = (etc_inspector_event *)in->blocks[b].events;
		for (size_t e = 0; e < in->blocks[b].event_count; e++) {
			evs[e].debug_handles = NULL;
			evs[e].debug_handle_count = 0;
			evs[e].nodes = NULL;
			evs[e].node_count = 0;
			evs[e].delegate_backend_name = NULL;
			evs[e].num_outputs = -1;
		}
	}
	in->rec = NULL;
	in->rec_method = NULL;
	if (!etc_etrecord_has_program(rec, (size_t)m))
		etc_warn_(in,
		          "the ETRecord has no Edge program for method \"%s\": events get debug "
		          "handles but no op types, stack traces or modules",
		          etc_etrecord_method(rec, (size_t)m));
	for (size_t b = 0; b < in->nblocks; b++) {
		etc_event_block *blk = &in->blocks[b];
		etc_inspector_event *evs = (etc_inspector_event *)blk->events;
		for (size_t e = 0; e < blk->event_count; e++) {
			etc_inspector_event *ev = &evs[e];
			if (ev->instruction_id < 0 || is_framework_event(ev->name))
				continue;
			with_id++;
			ev->num_outputs =
			    etc_etrecord_num_outputs(rec, (size_t)m, ev->instruction_id);
			const etc_delegate_info *d =
			    etc_etrecord_delegate(rec, (size_t)m, ev->instruction_id);
			bool found;
			const int64_t *h;
			size_t n = etc_etrecord_debug_handles(rec, (size_t)m, ev->instruction_id,
			                                      &h, &found);
			if (!found) {
				/* Instructions without a kernel call (the runtime's prim ops
				 * such as et_view for view_copy) have no map entry by design:
				 * they log an OPERATOR_CALL and no output. */
				bool prim = ev->name.len == 13 &&
				            memcmp(ev->name.ptr, "OPERATOR_CALL", 13) == 0 &&
				            ev->debug_count == 0;
				if (has_map && !prim)
					etc_warn_(
					    in,
					    "block \"%.*s\", event %zu (%.*s): instruction %d has "
					    "no "
					    "entry in the ETRecord's debug_handle_map",
					    (int)blk->name.len, blk->name.ptr, e, (int)ev->name.len,
					    ev->name.ptr, ev->instruction_id);
				continue;
			}
			resolved++;
			if (!ev->is_delegated_op) {
				if (d && ev->name.len == 13 &&
				    memcmp(ev->name.ptr, "DELEGATE_CALL", 13) == 0)
					ev->delegate_backend_name = d->backend;
			} else if (!d) {
				etc_warn_(
				    in,
				    "block \"%.*s\", event %zu (%.*s): no delegate_map entry for "
				    "instruction %d; using its debug_handle_map entry",
				    (int)blk->name.len, blk->name.ptr, e, (int)ev->name.len,
				    ev->name.ptr, ev->instruction_id);
			} else {
				ev->delegate_backend_name = d->backend;
				const id_index *x = id_indexes_get(&ids, d);
				if (!x) {
					rc =
					    etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
					goto done;
				}
				n = delegate_handles(x, ev, &h);
			}
			ev->debug_handles = h;
			ev->debug_handle_count = (uint32_t)n;
			if ((rc = attach_nodes(in, rec, (size_t)m, ev, err)) < 0)
				goto done;
		}
	}
	id_indexes_free(&ids);
	ids = (id_indexes){0};
	if (has_map && with_id && !resolved)
		return etc_fail(err, ETC_ERR_MISMATCH, etc_etrecord_name(rec), -1,
		                "the ETRecord does not belong to this ETDump: none of the %zu "
		                "events' instruction ids appears in its debug_handle_map "
		                "(method \"%s\")",
		                with_id, etc_etrecord_method(rec, (size_t)m));
	if (!has_map && with_id)
		etc_warn_(in,
		          "the ETRecord's debug_handle_map for method \"%s\" is empty: events are "
		          "not linked to graph nodes",
		          etc_etrecord_method(rec, (size_t)m));
	in->rec = rec;
	in->rec_method = etc_etrecord_method(rec, (size_t)m);
	return 0;
done:
	id_indexes_free(&ids);
	return rc;
}

const etc_etrecord *etc_inspector_etrecord(const etc_inspector *in)
{
	return in->rec;
}

const char *etc_inspector_etrecord_method(const etc_inspector *in)
{
	return in->rec_method;
}

double etc_inspector_module_total(const etc_inspector *in, const char *module_name, size_t *count)
{
	double total = 0;
	size_t n = 0;
	if (count)
		*count = 0;
	if (!in || !module_name)
		return 0;
	for (size_t b = 0; b < in->nblocks; b++) {
		const etc_event_block *blk = &in->blocks[b];
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (ev->name.len == 13 && memcmp(ev->name.ptr, "OPERATOR_CALL", 13) == 0)
				continue;
			bool found = false;
			for (uint32_t k = 0; k < ev->node_count && !found; k++) {
				const etc_graph_node *nd = ev->nodes[k];
				for (uint32_t f = 0; f < nd->module_depth && !found; f++)
					found = strstr(nd->modules[f].key, module_name) != NULL;
			}
			if (found && ev->has_perf) {
				total += ev->stats.avg;
				n++;
			}
		}
	}
	if (count)
		*count = n;
	return total;
}
