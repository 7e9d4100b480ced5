/*
 * refgraph_load.c - the reference executor's graph: its values and nodes
 * read from the program (torch.export serde JSON), built once; the graph
 * choice is refgraph_choice.c, the signature and weights refgraph_weights.c.
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
#include "reference/refload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int ref_load_nomem(etc_error *err)
{
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory loading the reference graph");
}

int ref_load_error(const ref_loader *L, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return etc_fail(L->err, ETC_ERR_FORMAT, etc_etrecord_name(L->g->rec), -1, "member %s: %s",
	                L->g->member, msg);
}

char *ref_load_dup(etc_refgraph *g, const char *s)
{
	return etc_arena_strdup(&g->arena, s, strlen(s));
}

/* --- values and names ----------------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const name_ref *)a)->name, ((const name_ref *)b)->name);
}

static size_t find_name(const ref_loader *L, const char *name)
{
	name_ref key = {name, 0};
	const name_ref *r = bsearch(&key, L->names, L->nnames, sizeof key, cmp_name);
	return r ? r->value : REF_NO_VALUE;
}

static int add_name(ref_loader *L, const char *name, size_t value)
{
	if (L->nnames == L->cap_names) {
		size_t cap = L->cap_names ? 2 * L->cap_names : 64;
		name_ref *n = realloc(L->names, cap * sizeof *n);
		if (!n)
			return ref_load_nomem(L->err);
		L->names = n;
		L->cap_names = cap;
	}
	L->names[L->nnames].name = name;
	L->names[L->nnames++].value = value;
	return 0;
}

static int sort_names(ref_loader *L)
{
	if (L->nnames)
		qsort(L->names, L->nnames, sizeof *L->names, cmp_name);
	for (size_t i = 1; i < L->nnames; i++)
		if (strcmp(L->names[i - 1].name, L->names[i].name) == 0)
			return ref_load_error(L, "two values are called \"%s\"", L->names[i].name);
	return 0;
}

/* The recorded dtype and shape of value `v` (tensor_values). */
static void read_meta(ref_loader *L, ref_value *v)
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
const char *ref_load_tensor_name(const json_t *arg)
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

int ref_load_value(ref_loader *L, const char *name, int kind, size_t index, uint32_t output,
                   size_t *out)
{
	etc_refgraph *g = L->g;
	ref_value *v = &g->values[g->nvalues];
	memset(v, 0, sizeof *v);
	v->name = ref_load_dup(g, name);
	if (!v->name)
		return ref_load_nomem(L->err);
	v->kind = kind;
	v->index = index;
	v->output = output;
	v->meta_dtype = -1;
	read_meta(L, v);
	*out = g->nvalues++;
	return add_name(L, v->name, *out);
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
static int node_outputs(ref_loader *L, const json_t *jn, ref_node *n, size_t idx, bool absent)
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
		return ref_load_error(L, "a node with too many outputs");
	n->pub.output_count = (uint32_t)count;
	const char **names = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *names);
	n->out_values = etc_arena_alloc(&g->arena, count ? count : 1, sizeof *n->out_values);
	if (!names || !n->out_values)
		return ref_load_nomem(L->err);
	uint32_t o = 0;
	for (size_t i = 0; i < json_array_size(outs); i++) {
		const char *k = NULL;
		const json_t *v = ref_union_get(json_array_get(outs, i), &k);
		bool list =
		    v && (strcmp(k, "as_tensors") == 0 || strcmp(k, "as_optional_tensors") == 0);
		size_t items = list ? json_array_size(v) : 1;
		for (size_t j = 0; j < items; j++, o++) {
			const json_t *item = list ? json_array_get(v, j) : json_array_get(outs, i);
			const char *name = ref_load_tensor_name(item);
			names[o] = "";
			n->out_values[o] = REF_NO_VALUE;
			if (!name)
				continue;
			ETC_TRY(ref_load_value(L, name, absent ? REF_VALUE_ABSENT : REF_VALUE_NODE,
			                       idx, o, &n->out_values[o]));
			names[o] = g->values[n->out_values[o]].name;
		}
	}
	n->pub.output_names = names;
	return 0;
}

/* An explicit getitem (older graphs): its output is an alias of the item. */
static int getitem(ref_loader *L, const json_t *jn)
{
	etc_refgraph *g = L->g;
	const json_t *ins = json_object_get(jn, "inputs");
	const char *src = ref_load_tensor_name(json_object_get(json_array_get(ins, 0), "arg"));
	const char *k = NULL;
	const json_t *idx = ref_union_get(json_object_get(json_array_get(ins, 1), "arg"), &k);
	const char *name = ref_load_tensor_name(json_array_get(json_object_get(jn, "outputs"), 0));
	size_t v = src ? find_name(L, src) : REF_NO_VALUE;
	if (!name || v == REF_NO_VALUE || !json_is_integer(idx))
		return ref_load_error(L, "a getitem node of an unknown value \"%s\"",
		                      src ? src : "?");
	int64_t i = json_integer_value(idx);
	const ref_value *sv = &g->values[v];
	if (sv->kind == REF_VALUE_NODE && sv->output == 0 && i > 0) {
		const ref_node *p = &g->nodes[sv->index];
		if ((uint64_t)i >= p->pub.output_count || p->out_values[i] == REF_NO_VALUE)
			return ref_load_error(L, "getitem %s: no such item of %s", name, src);
		v = p->out_values[i];
	}
	if (g->values[v].kind == REF_VALUE_NODE) {
		ref_node *p = &g->nodes[g->values[v].index];
		uint32_t o = g->values[v].output;
		if (!p->pub.output_names[o][0])
			((const char **)p->pub.output_names)[o] = ref_load_dup(g, name);
	}
	char *alias = ref_load_dup(g, name);
	return alias ? add_name(L, alias, v) : ref_load_nomem(L->err);
}

static const ref_tensor *lookup(void *user, const char *name)
{
	ref_loader *L = user;
	size_t v = find_name(L, name);
	return v == REF_NO_VALUE ? NULL : &L->g->slots[v];
}

/* Pass 2: the arguments, decoded once, and the tensor inputs they name. */
static int node_args(ref_loader *L, const json_t *jn, ref_node *n, size_t idx)
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
		return ref_load_nomem(L->err);
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
				return ref_load_error(L,
				                      "node %s uses \"%s\" before it is computed",
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
/* The ETRecord's own nodes of the loaded graph (stack traces, modules). */
typedef struct record_nodes {
	int method;                 /* the method's Edge program, or -1 */
	const etc_graph_node *list; /* a graph_map program's nodes */
	size_t count, cursor;
} record_nodes;

static record_nodes record_nodes_of(const etc_refgraph *g)
{
	record_nodes r = {-1, NULL, 0, 0};
	int m = etc_etrecord_method_index(g->rec, g->method);
	if (m >= 0 && strcmp(g->name, REF_EDGE_MEMBER) == 0) {
		r.method = m;
		r.count = etc_etrecord_node_count(g->rec, (size_t)m);
		return r;
	}
	for (size_t i = 0; i < etc_etrecord_graph_count(g->rec); i++)
		if (strcmp(etc_etrecord_graph_name(g->rec, i), g->member) == 0) {
			etc_error err;
			/* parsed once and cached by the record: logically const */
			if (etc_etrecord_graph_nodes((etc_etrecord *)g->rec, g->member, &r.list,
			                             &r.count, &err) < 0)
				r.count = 0;
		}
	return r;
}

/* The record's node called `name`; nodes come in the same order, so the
 * search starts after the previous match. */
static const etc_graph_node *record_node(const etc_refgraph *g, record_nodes *r, const char *name)
{
	for (size_t k = 0; k < r->count; k++) {
		size_t i = (r->cursor + k) % r->count;
		const etc_graph_node *nd =
		    r->list ? &r->list[i] : etc_etrecord_node(g->rec, (size_t)r->method, i);
		/* A node returning a tuple is named as torch names it
		 * (aten_native_layer_norm_default) while its values carry
		 * the getitem names: either one links. */
		bool same = strcmp(nd->name, name) == 0;
		for (uint32_t o = 0; !same && o < nd->output_count; o++)
			same = strcmp(nd->outputs[o], name) == 0;
		if (same) {
			r->cursor = i + 1;
			return nd;
		}
	}
	return NULL;
}

static int nodes(ref_loader *L, const json_t *jnodes)
{
	etc_refgraph *g = L->g;
	size_t n = json_array_size(jnodes);
	/* pass 1: every node's outputs are values; getitem nodes are aliases */
	for (size_t i = 0; i < n; i++) {
		const json_t *jn = json_array_get(jnodes, i);
		const char *target = json_string_value(json_object_get(jn, "target"));
		if (!target)
			return ref_load_error(L, "node %zu has no target", i);
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
		nd->pub.name = ref_load_dup(g, name[0] ? name : "node");
		nd->pub.op = ref_load_dup(g, short_op(target));
		if (!nd->pub.name || !nd->pub.op)
			return ref_load_nomem(L->err);
		nd->pub.debug_handle = ref_load_handle(jn);
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
	size_t k = 0;
	record_nodes rn = record_nodes_of(g);
	for (size_t i = 0; i < n; i++) {
		const json_t *jn = json_array_get(jnodes, i);
		if (!ref_load_is_operator(json_string_value(json_object_get(jn, "target"))))
			continue;
		ref_node *nd = &g->nodes[k];
		ETC_TRY(node_args(L, jn, nd, k));
		nd->pub.graph_node = record_node(g, &rn, nd->pub.name);
		k++;
	}
	return 0;
}

static int outputs(ref_loader *L, const json_t *gm, const json_t *graph)
{
	etc_refgraph *g = L->g;
	const json_t *specs = json_object_get(json_object_get(gm, "signature"), "output_specs");
	size_t n = json_is_array(specs) ? json_array_size(specs)
	                                : json_array_size(json_object_get(graph, "outputs"));
	g->outputs = etc_arena_alloc(&g->arena, n ? n : 1, sizeof *g->outputs);
	if (!g->outputs)
		return ref_load_nomem(L->err);
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
		const char *name = ref_load_tensor_name(arg);
		size_t v = name ? find_name(L, name) : REF_NO_VALUE;
		if (name && v == REF_NO_VALUE)
			return ref_load_error(L, "output \"%s\" is not a value of the graph", name);
		g->outputs[g->noutputs++] = v;
	}
	return 0;
}

/* --- load ------------------------------------------------------------------------------ */

static int build(ref_loader *L, const json_t *root)
{
	etc_refgraph *g = L->g;
	const json_t *gm = json_object_get(root, "graph_module");
	const json_t *graph = json_object_get(gm, "graph");
	const json_t *jnodes = json_object_get(graph, "nodes");
	if (!json_is_object(gm) || !json_is_object(graph) || !json_is_array(jnodes))
		return ref_load_error(
		    L, "not an exported program (no graph_module.graph.nodes)%s%s", "", "");
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
		return ref_load_nomem(L->err);
	ETC_TRY(ref_load_signature(L, gm, graph));
	ETC_TRY(nodes(L, jnodes));
	return outputs(L, gm, graph);
}

void etc_refgraph_options_init(etc_refgraph_options *opt)
{
	memset(opt, 0, sizeof *opt);
	opt->dtype = ETC_REF_FLOAT64;
}

int etc_refgraph_load(etc_refgraph **out, const etc_etrecord *rec, const etc_refgraph_options *opt,
                      etc_error *err)
{
	if (out)
		*out = NULL;
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
		return ref_load_nomem(err);
	etc_arena_init(&g->arena);
	g->rec = rec;
	g->dtype = opt->dtype;
	g->float_dtype = opt->dtype == ETC_REF_FLOAT32 ? ETC_FLOAT : ETC_DOUBLE;
	json_t *root = NULL;
	ref_loader L = {.g = g, .err = err};
	int rc = ref_load_choose(g, opt, &root, err);
	if (rc == 0)
		rc = build(&L, root);
	/* the JSON tree (many times the text) is gone before the weights come,
	   its pages too: glibc would keep them resident beside the folded
	   weights (MobileNetV2: 2.5 MiB of the load's peak) */
	json_decref(root);
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	if (rc == 0)
		rc = ref_load_weights(&L);
	free(L.names);
	if (rc < 0) {
		etc_refgraph_free(g);
		return rc;
	}
#ifdef __GLIBC__
	/* The JSON tree and the weight archives' parse were freed between blocks
	   the graph keeps: glibc keeps such pages resident (0.9 MiB of
	   MobileNetV2's peak) unless asked to give them back. */
	malloc_trim(0);
#endif
	*out = g;
	return 0;
}

void etc_refgraph_free(etc_refgraph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nvalues; i++)
		if (g->values[i].kind == REF_VALUE_WEIGHT ||
		    (g->values[i].kind == REF_VALUE_NODE && g->nodes[g->values[i].index].folded))
			ref_tensor_free(&g->slots[i]);
	etc_arena_release(&g->arena);
	free(g);
}
