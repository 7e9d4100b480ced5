/*
 * refgraph_load.c - the reference executor's graph: which program of the
 * ETRecord, its values and nodes (torch.export serde JSON), and its
 * weights through the graph signature.
 *
 * Program JSON (torch/_export/serde/schema.py):
 *   graph_module.graph.nodes[]      {"target", "inputs": [{"name", "arg"}],
 *                                    "outputs": [Argument], "metadata": {"debug_handle": "18"}}
 *   graph_module.graph.tensor_values {name: {"dtype", "sizes": [{"as_int": n}], ...}}
 *                                    (2023: {name: {"meta": {...}}})
 *   graph_module.signature          input_specs [{"parameter": {"arg": {"name"},
 *                                    "parameter_name"}} | buffer | tensor_constant |
 *                                    user_input], output_specs [{"user_output": ...}]
 */
#include "reference/refargs.h"
#include "reference/refgraph_private.h"
#include "reference/refimport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define EDGE_MEMBER "edge_dialect_exported_program"
#define EP_MEMBER   "exported_program"

/* One entry of the name table: a value's name (or an alias of it). */
typedef struct name_ref {
	const char *name;
	size_t value;
} name_ref;

/* What the signature says of a weight. */
typedef struct weight_spec {
	size_t value;
	const char *kind; /* "parameter", "buffer", "tensor_constant" */
	const char *key;  /* state_dict / constants key */
	bool constants_first;
} weight_spec;

typedef struct loader {
	etc_refgraph *g;
	etc_error *err;
	name_ref *names;
	size_t nnames, cap_names;
	weight_spec *weights;
	size_t nweights;
	const json_t *tensor_values;
} loader;

static int nomem(etc_error *err)
{
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory loading the reference graph");
}

static int fmt_error(const loader *L, const char *fmt, const char *a, const char *b)
{
	char msg[900];
	snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
	return etc_fail(L->err, ETC_ERR_FORMAT, etc_etrecord_name(L->g->rec), -1, "member %s: %s",
	                L->g->member, msg);
}

static char *dup(etc_refgraph *g, const char *s)
{
	return etc_arena_strdup(&g->arena, s, strlen(s));
}

/* --- the graph choice --------------------------------------------------------- */

static bool is_operator(const char *target)
{
	return strcmp(target, "memory.alloc") != 0 && strcmp(target, "_operator.getitem") != 0;
}

static int64_t handle_of(const json_t *node)
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
		int64_t h = handle_of(json_array_get(nodes, i));
		if (h >= 0)
			have[k++] = h;
	}
	qsort(have, k, sizeof *have, cmp_i64);
	bool linked = k > 0;
	for (size_t i = 0; linked && i < etc_etrecord_node_count(rec, (size_t)m); i++) {
		const etc_graph_node *nd = etc_etrecord_node(rec, (size_t)m, i);
		if (nd->debug_handle < 0 || !is_operator(nd->target))
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
	return ref_json_parse(data, size, what, out, err);
}

static int edge_member(etc_refgraph *g, char *buf, size_t cap, etc_error *err)
{
	snprintf(buf, cap, "%s/%s", EDGE_MEMBER, g->method);
	if (etc_etrecord_has_member(g->rec, buf))
		return 0;
	if (etc_etrecord_has_member(g->rec, EDGE_MEMBER) && strcmp(g->method, "forward") == 0) {
		snprintf(buf, cap, "%s", EDGE_MEMBER);
		return 0;
	}
	return etc_fail(err, ETC_ERR_UNSUPPORTED, etc_etrecord_name(g->rec), -1,
	                "the ETRecord has no Edge program for method \"%s\"", g->method);
}

static int choose(etc_refgraph *g, const etc_refgraph_options *opt, json_t **root, etc_error *err)
{
	const etc_etrecord *rec = g->rec;
	char member[512];
	int m = -1;
	if (opt->method) {
		g->method = dup(g, opt->method);
		m = etc_etrecord_method_index(rec, opt->method);
	} else {
		m = etc_etrecord_default_method(rec);
		g->method = dup(g, m >= 0 ? etc_etrecord_method(rec, (size_t)m) : "forward");
	}
	if (!g->method)
		return nomem(err);
	const char *want = opt->graph;
	if (!want && etc_etrecord_has_member(rec, EP_MEMBER)) {
		json_t *ep;
		ETC_TRY(parse_member(g, EP_MEMBER, &ep, err));
		if (exported_program_linked(rec, m, ep)) {
			*root = ep;
			g->member = dup(g, EP_MEMBER);
			g->name = g->member;
			return g->member ? 0 : nomem(err);
		}
		json_decref(ep);
	}
	if (!want || strcmp(want, EDGE_MEMBER) == 0) {
		ETC_TRY(edge_member(g, member, sizeof member, err));
		g->name = dup(g, EDGE_MEMBER);
	} else if (etc_etrecord_has_member(rec, want)) {
		snprintf(member, sizeof member, "%s", want);
		g->name = dup(g, want);
	} else {
		snprintf(member, sizeof member, "%s/%s", want, g->method);
		if (!etc_etrecord_has_member(rec, member))
			return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
			                "the ETRecord has no graph \"%s\"", want);
		g->name = dup(g, member);
	}
	g->member = dup(g, member);
	if (!g->member || !g->name)
		return nomem(err);
	return parse_member(g, g->member, root, err);
}

/* --- values and names ----------------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const name_ref *)a)->name, ((const name_ref *)b)->name);
}

static size_t find_name(const loader *L, const char *name)
{
	name_ref key = {name, 0};
	const name_ref *r = bsearch(&key, L->names, L->nnames, sizeof key, cmp_name);
	return r ? r->value : REF_NO_VALUE;
}

static int add_name(loader *L, const char *name, size_t value)
{
	if (L->nnames == L->cap_names) {
		size_t cap = L->cap_names ? 2 * L->cap_names : 64;
		name_ref *n = realloc(L->names, cap * sizeof *n);
		if (!n)
			return nomem(L->err);
		L->names = n;
		L->cap_names = cap;
	}
	L->names[L->nnames].name = name;
	L->names[L->nnames++].value = value;
	return 0;
}

static int sort_names(loader *L)
{
	qsort(L->names, L->nnames, sizeof *L->names, cmp_name);
	for (size_t i = 1; i < L->nnames; i++)
		if (strcmp(L->names[i - 1].name, L->names[i].name) == 0)
			return fmt_error(L, "two values are called \"%s\"%s", L->names[i].name, "");
	return 0;
}

/* The recorded dtype and shape of value `v` (tensor_values). */
static void read_meta(loader *L, ref_value *v)
{
	const json_t *m = json_object_get(L->tensor_values, v->name);
	if (json_object_get(m, "meta"))
		m = json_object_get(m, "meta"); /* 2023 */
	const json_t *dt = json_object_get(m, "dtype"), *sizes = json_object_get(m, "sizes");
	if (!json_is_integer(dt) || !json_is_array(sizes) ||
	    json_array_size(sizes) > ETC_REF_MAX_RANK)
		return;
	for (size_t d = 0; d < json_array_size(sizes); d++) {
		const json_t *s = json_array_get(sizes, d);
		const char *k = "as_int";
		if (json_is_object(s))
			s = ref_union_get(s, &k);
		if (!json_is_integer(s) || strcmp(k, "as_int") != 0 || json_integer_value(s) < 0)
			return; /* symbolic: no shape check */
		v->meta_shape[d] = json_integer_value(s);
	}
	v->meta_rank = (uint32_t)json_array_size(sizes);
	v->meta_dtype = ref_serde_dtype(json_integer_value(dt));
	v->has_meta = true;
}

/* The name of a {"name": ...} tensor reference, or of an Argument's as_tensor. */
static const char *tensor_name(const json_t *arg)
{
	const char *k = NULL;
	const json_t *t = json_object_get(arg, "name");
	if (json_is_string(t))
		return json_string_value(t);
	t = ref_union_get(arg, &k);
	if (t && strcmp(k, "as_tensor") == 0)
		return json_string_value(json_object_get(t, "name"));
	return NULL;
}

static int new_value(loader *L, const char *name, int kind, size_t index, uint32_t output,
                     size_t *out)
{
	etc_refgraph *g = L->g;
	ref_value *v = &g->values[g->nvalues];
	memset(v, 0, sizeof *v);
	v->name = dup(g, name);
	if (!v->name)
		return nomem(L->err);
	v->kind = kind;
	v->index = index;
	v->output = output;
	v->meta_dtype = -1;
	read_meta(L, v);
	*out = g->nvalues++;
	return add_name(L, v->name, *out);
}

/* --- the signature ----------------------------------------------------------------- */

static int weight(loader *L, const json_t *spec, const char *kind, const char *key_field)
{
	const char *name = tensor_name(json_object_get(spec, "arg"));
	const json_t *key = json_object_get(spec, key_field);
	if (!name || !json_is_string(key))
		return fmt_error(L, "a %s input spec without its name%s", kind, "");
	weight_spec *w = &L->weights[L->nweights++];
	w->kind = kind;
	w->key = json_string_value(key);
	/* a non-persistent buffer is saved with the constants */
	w->constants_first = strcmp(kind, "tensor_constant") == 0 ||
	                     json_is_false(json_object_get(spec, "persistent"));
	return new_value(L, name, REF_VALUE_WEIGHT, L->nweights - 1, 0, &w->value);
}

static int user_input(loader *L, const json_t *arg, size_t pos)
{
	etc_refgraph *g = L->g;
	const char *name = tensor_name(arg);
	if (!name) {
		char p[32];
		snprintf(p, sizeof p, "%zu", pos);
		return etc_fail(L->err, ETC_ERR_UNSUPPORTED, etc_etrecord_name(g->rec), -1,
		                "member %s: user input %s is not a tensor (only tensor inputs are "
		                "supported)",
		                g->member, p);
	}
	size_t v;
	ETC_TRY(new_value(L, name, REF_VALUE_INPUT, g->ninputs, 0, &v));
	g->inputs[g->ninputs++] = v;
	return 0;
}

static int signature(loader *L, const json_t *gm, const json_t *graph)
{
	etc_refgraph *g = L->g;
	const json_t *sig = json_object_get(gm, "signature");
	const json_t *specs = json_object_get(sig, "input_specs");
	if (json_is_array(specs)) {
		for (size_t i = 0; i < json_array_size(specs); i++) {
			const char *k = NULL;
			const json_t *s = ref_union_get(json_array_get(specs, i), &k);
			if (!s)
				return fmt_error(L, "input spec %s is empty%s", "", "");
			if (strcmp(k, "user_input") == 0)
				ETC_TRY(user_input(L, json_object_get(s, "arg"), i));
			else if (strcmp(k, "parameter") == 0)
				ETC_TRY(weight(L, s, "parameter", "parameter_name"));
			else if (strcmp(k, "buffer") == 0)
				ETC_TRY(weight(L, s, "buffer", "buffer_name"));
			else if (strcmp(k, "tensor_constant") == 0)
				ETC_TRY(weight(L, s, "tensor_constant", "tensor_constant_name"));
			else if (strcmp(k, "constant_input") != 0)
				return etc_fail(
				    L->err, ETC_ERR_UNSUPPORTED, etc_etrecord_name(g->rec), -1,
				    "member %s: %s graph inputs are not supported", g->member, k);
		}
		return 0;
	}
	/* the oldest layout: maps from input names to weights */
	static const char *const maps[] = {"inputs_to_parameters", "inputs_to_buffers",
	                                   "inputs_to_lifted_tensor_constants"};
	static const char *const kinds[] = {"parameter", "buffer", "tensor_constant"};
	const json_t *ins = json_object_get(graph, "inputs");
	for (size_t i = 0; i < json_array_size(ins); i++) {
		const char *name = tensor_name(json_array_get(ins, i));
		bool done = false;
		for (size_t m = 0; name && m < 3 && !done; m++) {
			const json_t *key = json_object_get(json_object_get(sig, maps[m]), name);
			if (!json_is_string(key))
				continue;
			weight_spec *w = &L->weights[L->nweights++];
			w->kind = kinds[m];
			w->key = json_string_value(key);
			w->constants_first = m == 2;
			ETC_TRY(
			    new_value(L, name, REF_VALUE_WEIGHT, L->nweights - 1, 0, &w->value));
			done = true;
		}
		if (!done)
			ETC_TRY(user_input(L, json_array_get(ins, i), i));
	}
	return 0;
}

/* --- nodes ------------------------------------------------------------------------- */

static const char *short_op(const char *target)
{
	static const char *const prefixes[] = {"executorch.exir.dialects.edge.ops.", "torch.ops."};
	for (size_t i = 0; i < 2; i++)
		if (strncmp(target, prefixes[i], strlen(prefixes[i])) == 0)
			return target + strlen(prefixes[i]);
	return target;
}

/* The node's outputs as values (pass 1). */
static int node_outputs(loader *L, const json_t *jn, ref_node *n, size_t idx, bool absent)
{
	etc_refgraph *g = L->g;
	const json_t *outs = json_object_get(jn, "outputs");
	size_t count = 0;
	for (size_t i = 0; i < json_array_size(outs); i++) {
		const char *k = NULL;
		const json_t *v = ref_union_get(json_array_get(outs, i), &k);
		count +=
		    v && (strcmp(k, "as_tensors") == 0 || strcmp(k, "as_optional_tensors") == 0)
		        ? json_array_size(v)
		        : 1;
	}
	if (count > UINT32_MAX / 2)
		return fmt_error(L, "a node with too many outputs%s%s", "", "");
	n->pub.output_count = (uint32_t)count;
	const char **names = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *names);
	n->out_values = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *n->out_values);
	if (!names || !n->out_values)
		return nomem(L->err);
	uint32_t o = 0;
	for (size_t i = 0; i < json_array_size(outs); i++) {
		const char *k = NULL;
		const json_t *v = ref_union_get(json_array_get(outs, i), &k);
		bool list =
		    v && (strcmp(k, "as_tensors") == 0 || strcmp(k, "as_optional_tensors") == 0);
		size_t items = list ? json_array_size(v) : 1;
		for (size_t j = 0; j < items; j++, o++) {
			const json_t *item = list ? json_array_get(v, j) : json_array_get(outs, i);
			const char *name = tensor_name(item);
			names[o] = "";
			n->out_values[o] = REF_NO_VALUE;
			if (!name)
				continue;
			ETC_TRY(new_value(L, name, absent ? REF_VALUE_ABSENT : REF_VALUE_NODE, idx,
			                  o, &n->out_values[o]));
			names[o] = g->values[n->out_values[o]].name;
		}
	}
	n->pub.output_names = names;
	return 0;
}

/* An explicit getitem (older graphs): its output is an alias of the item. */
static int getitem(loader *L, const json_t *jn)
{
	etc_refgraph *g = L->g;
	const json_t *ins = json_object_get(jn, "inputs");
	const char *src = tensor_name(json_object_get(json_array_get(ins, 0), "arg"));
	const char *k = NULL;
	const json_t *idx = ref_union_get(json_object_get(json_array_get(ins, 1), "arg"), &k);
	const char *name = tensor_name(json_array_get(json_object_get(jn, "outputs"), 0));
	size_t v = src ? find_name(L, src) : REF_NO_VALUE;
	if (!name || v == REF_NO_VALUE || !json_is_integer(idx))
		return fmt_error(L, "a getitem node of an unknown value \"%s\"%s", src ? src : "?",
		                 "");
	int64_t i = json_integer_value(idx);
	const ref_value *sv = &g->values[v];
	if (sv->kind == REF_VALUE_NODE && sv->output == 0 && i > 0) {
		const ref_node *p = &g->nodes[sv->index];
		if ((uint64_t)i >= p->pub.output_count || p->out_values[i] == REF_NO_VALUE)
			return fmt_error(L, "getitem %s: no such item of %s", name, src);
		v = p->out_values[i];
	}
	if (g->values[v].kind == REF_VALUE_NODE) {
		ref_node *p = &g->nodes[g->values[v].index];
		uint32_t o = g->values[v].output;
		if (!p->pub.output_names[o][0])
			((const char **)p->pub.output_names)[o] = dup(g, name);
	}
	char *alias = dup(g, name);
	return alias ? add_name(L, alias, v) : nomem(L->err);
}

static const ref_tensor *lookup(void *user, const char *name)
{
	loader *L = user;
	size_t v = find_name(L, name);
	return v == REF_NO_VALUE ? NULL : &L->g->slots[v];
}

/* Pass 2: the arguments, decoded once, and the tensor inputs they name. */
static int node_args(loader *L, const json_t *jn, ref_node *n, size_t idx)
{
	etc_refgraph *g = L->g;
	ETC_TRY(ref_args_decode(&g->arena, json_object_get(jn, "inputs"), lookup, L, n->pub.name,
	                        n->pub.op, &n->args, &n->nargs, L->err));
	size_t count = 0;
	for (size_t a = 0; a < n->nargs; a++)
		count +=
		    n->args[a].kind == REF_ARG_TENSOR ? 1
		    : (n->args[a].kind == REF_ARG_TENSORS || n->args[a].kind == REF_ARG_OPT_TENSORS)
		        ? n->args[a].n
		        : 0;
	n->srcs = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *n->srcs);
	n->src_values = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *n->src_values);
	if (!n->srcs || !n->src_values)
		return nomem(L->err);
	for (size_t a = 0; a < n->nargs; a++) {
		const ref_arg *arg = &n->args[a];
		size_t items = arg->kind == REF_ARG_TENSOR ? 1
		               : (arg->kind == REF_ARG_TENSORS || arg->kind == REF_ARG_OPT_TENSORS)
		                   ? arg->n
		                   : 0;
		for (size_t j = 0; j < items; j++) {
			const ref_tensor *t = arg->kind == REF_ARG_TENSOR ? arg->t : arg->ts[j];
			if (!t)
				continue;
			size_t v = (size_t)(t - g->slots);
			ref_value *val = &g->values[v];
			if (val->kind == REF_VALUE_NODE && val->index >= idx)
				return fmt_error(L, "node %s uses \"%s\" before it is computed",
				                 n->pub.name, val->name);
			etc_refsrc *s = &n->srcs[n->nsrcs];
			s->kind = val->kind == REF_VALUE_WEIGHT  ? ETC_REFSRC_CONSTANT
			          : val->kind == REF_VALUE_INPUT ? ETC_REFSRC_INPUT
			                                         : ETC_REFSRC_NODE;
			/* an allocation's value has no producer */
			s->index = val->kind == REF_VALUE_ABSENT ? (size_t)-1 : val->index;
			s->output = val->output;
			s->name = val->name;
			n->src_values[n->nsrcs++] = v;
			val->uses++;
		}
	}
	return 0;
}

/* The ETRecord's node of the same name; nodes come in the same order, so the
 * search starts after the previous match. */
static const etc_graph_node *record_node(const etc_refgraph *g, const char *name, size_t *cursor)
{
	int m = etc_etrecord_method_index(g->rec, g->method);
	if (m < 0 || strcmp(g->name, EDGE_MEMBER) != 0)
		return NULL;
	size_t n = etc_etrecord_node_count(g->rec, (size_t)m);
	for (size_t k = 0; k < n; k++) {
		size_t i = (*cursor + k) % n;
		const etc_graph_node *nd = etc_etrecord_node(g->rec, (size_t)m, i);
		if (strcmp(nd->name, name) == 0) {
			*cursor = i + 1;
			return nd;
		}
	}
	return NULL;
}

static int nodes(loader *L, const json_t *jnodes)
{
	etc_refgraph *g = L->g;
	size_t n = json_array_size(jnodes);
	/* pass 1: every node's outputs are values; getitem nodes are aliases */
	for (size_t i = 0; i < n; i++) {
		const json_t *jn = json_array_get(jnodes, i);
		const char *target = json_string_value(json_object_get(jn, "target"));
		if (!target)
			return fmt_error(L, "node %s has no target%s", "", "");
		if (strcmp(target, "_operator.getitem") == 0)
			continue;
		ref_node *nd = &g->nodes[g->nnodes];
		bool alloc = strcmp(target, "memory.alloc") == 0;
		ETC_TRY(node_outputs(L, jn, nd, g->nnodes, alloc));
		if (alloc)
			continue; /* its values are never computed */
		const char *name = json_string_value(json_object_get(jn, "name"));
		if (!name)
			name = nd->pub.output_count ? nd->pub.output_names[0] : "";
		nd->pub.name = dup(g, name[0] ? name : "node");
		nd->pub.op = dup(g, short_op(target));
		if (!nd->pub.name || !nd->pub.op)
			return nomem(L->err);
		nd->pub.debug_handle = handle_of(jn);
		nd->op = ref_op_find(nd->pub.op);
		nd->pub.supported = nd->op != NULL;
		g->nnodes++;
	}
	ETC_TRY(sort_names(L));
	for (size_t i = 0; i < n; i++) {
		const json_t *jn = json_array_get(jnodes, i);
		if (strcmp(json_string_value(json_object_get(jn, "target")), "_operator.getitem") ==
		    0) {
			ETC_TRY(getitem(L, jn));
			qsort(L->names, L->nnames, sizeof *L->names, cmp_name);
		}
	}
	ETC_TRY(sort_names(L));
	/* pass 2: arguments, in the same order */
	size_t k = 0, cursor = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *jn = json_array_get(jnodes, i);
		if (!is_operator(json_string_value(json_object_get(jn, "target"))))
			continue;
		ref_node *nd = &g->nodes[k];
		ETC_TRY(node_args(L, jn, nd, k));
		nd->pub.graph_node = record_node(g, nd->pub.name, &cursor);
		k++;
	}
	return 0;
}

static int outputs(loader *L, const json_t *gm, const json_t *graph)
{
	etc_refgraph *g = L->g;
	const json_t *specs = json_object_get(json_object_get(gm, "signature"), "output_specs");
	size_t n = json_is_array(specs) ? json_array_size(specs)
	                                : json_array_size(json_object_get(graph, "outputs"));
	g->outputs = etc_arena_alloc(&g->arena, n ? n : 1, sizeof *g->outputs);
	if (!g->outputs)
		return nomem(L->err);
	for (size_t i = 0; i < n; i++) {
		const json_t *arg;
		if (json_is_array(specs)) {
			const char *k = NULL;
			const json_t *s = ref_union_get(json_array_get(specs, i), &k);
			if (!s || strcmp(k, "user_output") != 0)
				continue; /* buffer mutations and the like */
			arg = json_object_get(s, "arg");
		} else {
			arg = json_array_get(json_object_get(graph, "outputs"), i);
		}
		const char *name = tensor_name(arg);
		size_t v = name ? find_name(L, name) : REF_NO_VALUE;
		if (name && v == REF_NO_VALUE)
			return fmt_error(L, "output \"%s\" is not a value of the graph%s", name,
			                 "");
		g->outputs[g->noutputs++] = v;
	}
	return 0;
}

/* --- weights -------------------------------------------------------------------------- */

static int open_archive(etc_refgraph *g, const char *suffix, etc_torchsave **ts, char *name,
                        size_t cap, etc_error *err)
{
	snprintf(name, cap, "%s%s", g->member, suffix);
	*ts = NULL;
	if (!etc_etrecord_has_member(g->rec, name))
		return 0;
	return etc_etrecord_torchsave(g->rec, name, ts, err);
}

static int load_weight(loader *L, const weight_spec *w, etc_torchsave *sd, const char *sd_name,
                       etc_torchsave *cs, const char *cs_name)
{
	etc_refgraph *g = L->g;
	ref_value *v = &g->values[w->value];
	const etc_pyobj *first = etc_torchsave_root(w->constants_first ? cs : sd);
	const etc_pyobj *second = etc_torchsave_root(w->constants_first ? sd : cs);
	const etc_pytensor *t = etc_pyobj_tensor(etc_pyobj_dict_get(first, w->key));
	if (!t)
		t = etc_pyobj_tensor(etc_pyobj_dict_get(second, w->key));
	if (!t) {
		const char *where = w->constants_first ? cs_name : sd_name;
		return etc_fail(L->err, ETC_ERR_FORMAT, etc_etrecord_name(g->rec), -1,
		                "weight %s (%s %s) is missing from member %s%s", v->name, w->kind,
		                w->key, where,
		                etc_etrecord_has_member(g->rec, where) ? "" : " (no such member)");
	}
	if (v->has_meta) {
		bool same =
		    v->meta_dtype == t->tensor.scalar_type && v->meta_rank == t->tensor.ndim;
		for (uint32_t d = 0; same && d < v->meta_rank; d++)
			same = v->meta_shape[d] == etc_tensor_size(&t->tensor, d);
		if (!same) {
			char a[256], b[256];
			int64_t shape[ETC_REF_MAX_RANK];
			uint32_t r =
			    t->tensor.ndim < ETC_REF_MAX_RANK ? t->tensor.ndim : ETC_REF_MAX_RANK;
			for (uint32_t d = 0; d < r; d++)
				shape[d] = etc_tensor_size(&t->tensor, d);
			ref_shape_str(a, sizeof a, v->meta_rank, v->meta_shape);
			ref_shape_str(b, sizeof b, r, shape);
			return etc_fail(L->err, ETC_ERR_MISMATCH, etc_etrecord_name(g->rec), -1,
			                "weight %s (%s %s): the graph expects %s %s, the archive "
			                "has %s %s",
			                v->name, w->kind, w->key,
			                etc_scalar_type_name(v->meta_dtype), a,
			                etc_scalar_type_name(t->tensor.scalar_type), b);
		}
	}
	if (v->uses == 0)
		return 0; /* not read by any node: not held */
	char what[512];
	snprintf(what, sizeof what, "weight %s (%s %s)", v->name, w->kind, w->key);
	return ref_import_pytensor(&g->slots[w->value], t, g->float_dtype, what, L->err);
}

static int weights(loader *L)
{
	etc_refgraph *g = L->g;
	etc_torchsave *sd = NULL, *cs = NULL;
	char sd_name[600], cs_name[600];
	int rc = open_archive(g, "_state_dict", &sd, sd_name, sizeof sd_name, L->err);
	if (rc == 0)
		rc = open_archive(g, "_constants", &cs, cs_name, sizeof cs_name, L->err);
	for (size_t i = 0; rc == 0 && i < L->nweights; i++)
		rc = load_weight(L, &L->weights[i], sd, sd_name, cs, cs_name);
	etc_torchsave_free(sd);
	etc_torchsave_free(cs);
	return rc;
}

/* --- load ------------------------------------------------------------------------------ */

static int build(loader *L, const json_t *root)
{
	etc_refgraph *g = L->g;
	const json_t *gm = json_object_get(root, "graph_module");
	const json_t *graph = json_object_get(gm, "graph");
	const json_t *jnodes = json_object_get(graph, "nodes");
	if (!json_is_object(gm) || !json_is_object(graph) || !json_is_array(jnodes))
		return fmt_error(L, "not an exported program (no graph_module.graph.nodes)%s%s", "",
		                 "");
	L->tensor_values = json_object_get(graph, "tensor_values");
	const json_t *specs = json_object_get(json_object_get(gm, "signature"), "input_specs");
	size_t nin = json_is_array(specs) ? json_array_size(specs)
	                                  : json_array_size(json_object_get(graph, "inputs"));
	size_t nvals = nin;
	for (size_t i = 0; i < json_array_size(jnodes); i++) {
		const json_t *outs = json_object_get(json_array_get(jnodes, i), "outputs");
		for (size_t o = 0; o < json_array_size(outs); o++) {
			const json_t *v = ref_union_get(json_array_get(outs, o), NULL);
			nvals += json_is_array(v) ? json_array_size(v) : 1;
		}
	}
	size_t nn = json_array_size(jnodes);
	g->values = etc_arena_alloc(&g->arena, nvals ? nvals : 1, sizeof *g->values);
	g->slots = etc_arena_alloc(&g->arena, nvals ? nvals : 1, sizeof *g->slots);
	g->nodes = etc_arena_alloc(&g->arena, nn ? nn : 1, sizeof *g->nodes);
	g->inputs = etc_arena_alloc(&g->arena, nin ? nin : 1, sizeof *g->inputs);
	L->weights = etc_arena_alloc(&g->arena, nin ? nin : 1, sizeof *L->weights);
	if (!g->values || !g->slots || !g->nodes || !g->inputs || !L->weights)
		return nomem(L->err);
	ETC_TRY(signature(L, gm, graph));
	ETC_TRY(nodes(L, jnodes));
	ETC_TRY(outputs(L, gm, graph));
	return weights(L);
}

void etc_refgraph_options_init(etc_refgraph_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->dtype = ETC_REF_FLOAT64;
}

int etc_refgraph_load(etc_refgraph **out, const etc_etrecord *rec, const etc_refgraph_options *opt,
                      etc_error *err)
{
	etc_refgraph_options defaults;
	if (!out || !rec)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_refgraph_load: NULL argument");
	*out = NULL;
	if (!opt) {
		etc_refgraph_options_init(&defaults);
		opt = &defaults;
	}
	if (opt->dtype != ETC_REF_FLOAT64 && opt->dtype != ETC_REF_FLOAT32)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "unknown reference dtype %d",
		                opt->dtype);
	etc_refgraph *g = calloc(1, sizeof *g);
	if (!g)
		return nomem(err);
	etc_arena_init(&g->arena);
	g->rec = rec;
	g->dtype = opt->dtype;
	g->float_dtype = opt->dtype == ETC_REF_FLOAT32 ? ETC_FLOAT : ETC_DOUBLE;
	json_t *root = NULL;
	loader L = {.g = g, .err = err};
	int rc = choose(g, opt, &root, err);
	if (rc == 0)
		rc = build(&L, root);
	json_decref(root);
	free(L.names);
	if (rc < 0) {
		etc_refgraph_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void etc_refgraph_free(etc_refgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nvalues; i++)
		if (g->values[i].kind == REF_VALUE_WEIGHT)
			ref_tensor_free(&g->slots[i]);
	etc_arena_release(&g->arena);
	free(g);
}
