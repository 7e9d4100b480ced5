/*
 * refgraph_choice.c - which program of the ETRecord the reference runs:
 * upstream's default (a linked exported_program, else the method's Edge
 * program) or the one the options name.
 */
#include "reference/refargs.h"
#include "reference/refload.h"

#include <stdio.h>
#include <stdlib.h>

#define EP_MEMBER "exported_program"

bool ref_load_is_operator(const char *target)
{
	return strcmp(target, "memory.alloc") != 0 && strcmp(target, "_operator.getitem") != 0;
}

int64_t ref_load_handle(const json_t *node)
{
	const json_t *h = json_object_get(json_object_get(node, "metadata"), "debug_handle");
	if (json_is_integer(h))
		return json_integer_value(h);
	if (json_is_string(h)) {
		char *end;
		long long v = strtoll(json_string_value(h), &end, 10);
		if (end != json_string_value(h) && v >= 0)
			return v;
	}
	return -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/*
 * Upstream takes the record's `exported_program` when its debug handles
 * cover those of the method's Edge program (propagated back from it);
 * otherwise the Edge program.
 */
static bool exported_program_linked(const etc_etrecord *rec, int m, const json_t *ep)
{
	const json_t *nodes =
	    json_object_get(json_object_get(json_object_get(ep, "graph_module"), "graph"), "nodes");
	size_t n = json_array_size(nodes), k = 0, edge_ops = 0;
	if (m < 0 || n == 0)
		return false;
	int64_t *have = malloc(n * sizeof *have);
	if (!have)
		return false;
	for (size_t i = 0; i < n; i++) {
		int64_t h = ref_load_handle(json_array_get(nodes, i));
		if (h >= 0)
			have[k++] = h;
	}
	qsort(have, k, sizeof *have, cmp_i64);
	bool linked = k > 0;
	for (size_t i = 0; linked && i < etc_etrecord_node_count(rec, (size_t)m); i++) {
		const etc_graph_node *nd = etc_etrecord_node(rec, (size_t)m, i);
		if (nd->debug_handle < 0 || !ref_load_is_operator(nd->target))
			continue;
		edge_ops++;
		linked = bsearch(&nd->debug_handle, have, k, sizeof *have, cmp_i64) != NULL;
	}
	free(have);
	return linked && edge_ops > 0;
}

static int parse_member(const etc_refgraph *g, const char *member, json_t **out, etc_error *err)
{
	const void *data;
	size_t size;
	char what[600];
	ETC_TRY(etc_etrecord_member(g->rec, member, &data, &size, err));
	snprintf(what, sizeof what, "%s:%s", etc_etrecord_name(g->rec), member);
	/* what the reference never reads: stack traces, strides, devices, ... */
	static const char *const drop[] = {"stack_trace",
	                                   "nn_module_stack",
	                                   "source_fn_stack",
	                                   "torch_fn",
	                                   "from_node",
	                                   "strides",
	                                   "device",
	                                   "layout",
	                                   "requires_grad",
	                                   "storage_offset",
	                                   "module_call_graph",
	                                   "range_constraints",
	                                   NULL};
	return ref_json_parse(data, size, drop, what, out, err);
}

static int edge_member(etc_refgraph *g, char *buf, size_t cap, etc_error *err)
{
	snprintf(buf, cap, "%s/%s", REF_EDGE_MEMBER, g->method);
	if (etc_etrecord_has_member(g->rec, buf))
		return 0;
	if (etc_etrecord_has_member(g->rec, REF_EDGE_MEMBER) && strcmp(g->method, "forward") == 0) {
		snprintf(buf, cap, "%s", REF_EDGE_MEMBER);
		return 0;
	}
	return etc_fail(err, ETC_ERR_UNSUPPORTED, etc_etrecord_name(g->rec), -1,
	                "the ETRecord has no Edge program for method \"%s\"", g->method);
}

/* "the ETRecord has no graph X" with the names it has. */
static int no_graph(const etc_refgraph *g, const char *want, etc_error *err)
{
	const etc_etrecord *rec = g->rec;
	char have[700] = "";
	size_t at = 0;
	const char *fixed[] = {etc_etrecord_has_member(rec, EP_MEMBER) ? EP_MEMBER : NULL,
	                       REF_EDGE_MEMBER};
	for (size_t i = 0; i < 2; i++)
		if (fixed[i] && at < sizeof have)
			at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", at ? ", " : "",
			                       fixed[i]);
	for (size_t i = 0; i < etc_etrecord_graph_count(rec) && at < sizeof have; i++)
		at += (size_t)snprintf(have + at, sizeof have - at, ", %s",
		                       etc_etrecord_graph_name(rec, i));
	return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
	                "the ETRecord has no graph \"%s\" for method \"%s\"; it has: %s", want,
	                g->method, have);
}

int ref_load_choose(etc_refgraph *g, const etc_refgraph_options *opt, json_t **root, etc_error *err)
{
	const etc_etrecord *rec = g->rec;
	char member[512];
	int m = -1;
	if (opt->method) {
		g->method = ref_load_dup(g, opt->method);
		m = etc_etrecord_method_index(rec, opt->method);
	} else {
		m = etc_etrecord_default_method(rec);
		g->method =
		    ref_load_dup(g, m >= 0 ? etc_etrecord_method(rec, (size_t)m) : "forward");
	}
	if (!g->method)
		return ref_load_nomem(err);
	const char *want = opt->graph;
	if (!want && etc_etrecord_has_member(rec, EP_MEMBER)) {
		json_t *ep;
		ETC_TRY(parse_member(g, EP_MEMBER, &ep, err));
		if (exported_program_linked(rec, m, ep)) {
			*root = ep;
			g->member = ref_load_dup(g, EP_MEMBER);
			g->name = g->member;
			return g->member ? 0 : ref_load_nomem(err);
		}
		json_decref(ep);
	}
	if (!want || strcmp(want, REF_EDGE_MEMBER) == 0) {
		ETC_TRY(edge_member(g, member, sizeof member, err));
		g->name = ref_load_dup(g, REF_EDGE_MEMBER);
	} else if (etc_etrecord_has_member(rec, want)) {
		snprintf(member, sizeof member, "%s", want);
		g->name = ref_load_dup(g, want);
	} else {
		snprintf(member, sizeof member, "%s/%s", want, g->method);
		if (!etc_etrecord_has_member(rec, member))
			return no_graph(g, want, err);
		g->name = ref_load_dup(g, member);
	}
	g->member = ref_load_dup(g, member);
	if (!g->member || !g->name)
		return ref_load_nomem(err);
	return parse_member(g, g->member, root, err);
}
