/*
 * refgraph_weights.c - the graph signature: user inputs, and parameters,
 * buffers and lifted constants read from the program's `_state_dict` and
 * `_constants` members, checked against the graph and held as stored:
 * float32, int and bool weights as views of the record's bytes, copied
 * (and widened) for each op that reads them (refgraph_call.c).
 */
#include "format/etrecord_private.h"
#include "reference/refargs.h"
#include "reference/refimport.h"
#include "reference/refload.h"
#include "reference/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int weight(ref_loader *L, const json_t *spec, const char *kind, const char *key_field)
{
	const char *name = ref_load_tensor_name(json_object_get(spec, "arg"));
	const json_t *key = json_object_get(spec, key_field);
	if (!name || !json_is_string(key))
		return ref_load_error(L, "a %s input spec without its name", kind);
	weight_spec *w = &L->weights[L->nweights++];
	w->kind = kind;
	w->key = ref_load_dup(L->g, json_string_value(key));
	if (!w->key)
		return ref_load_nomem(L->err);
	/* a non-persistent buffer is saved with the constants */
	w->constants_first = strcmp(kind, "tensor_constant") == 0 ||
	                     json_is_false(json_object_get(spec, "persistent"));
	return ref_load_value(L, name, REF_VALUE_WEIGHT, L->nweights - 1, 0, &w->value);
}

static int user_input(ref_loader *L, const json_t *arg, size_t pos)
{
	etc_refgraph *g = L->g;
	const char *name = ref_load_tensor_name(arg);
	if (!name) {
		char p[32];
		snprintf(p, sizeof p, "%zu", pos);
		return etc_fail(L->err, ETC_ERR_UNSUPPORTED, etc_etrecord_name(g->rec), -1,
		                "member %s: user input %s is not a tensor (only tensor inputs are "
		                "supported)",
		                g->member, p);
	}
	size_t v;
	ETC_TRY(ref_load_value(L, name, REF_VALUE_INPUT, g->ninputs, 0, &v));
	g->inputs[g->ninputs++] = v;
	return 0;
}

int ref_load_signature(ref_loader *L, const json_t *gm, const json_t *graph)
{
	etc_refgraph *g = L->g;
	const json_t *sig = json_object_get(gm, "signature");
	const json_t *specs = json_object_get(sig, "input_specs");
	if (json_is_array(specs)) {
		for (size_t i = 0; i < json_array_size(specs); i++) {
			const char *k = NULL;
			const json_t *s = ref_union_get(json_array_get(specs, i), &k);
			if (!s)
				return ref_load_error(L, "input spec %zu is empty", i);
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
		const char *name = ref_load_tensor_name(json_array_get(ins, i));
		bool done = false;
		for (size_t m = 0; name && m < 3 && !done; m++) {
			const json_t *key = json_object_get(json_object_get(sig, maps[m]), name);
			if (!json_is_string(key))
				continue;
			weight_spec *w = &L->weights[L->nweights++];
			w->kind = kinds[m];
			w->key = ref_load_dup(L->g, json_string_value(key));
			if (!w->key)
				return ref_load_nomem(L->err);
			w->constants_first = m == 2;
			ETC_TRY(ref_load_value(L, name, REF_VALUE_WEIGHT, L->nweights - 1, 0,
			                       &w->value));
			done = true;
		}
		if (!done)
			ETC_TRY(user_input(L, json_array_get(ins, i), i));
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

static bool little_endian(void)
{
	const uint16_t one = 1;
	uint8_t first;
	memcpy(&first, &one, 1);
	return first == 1;
}

/* The dtype weight t is held in: float32 as stored (ref_graph_call widens
 * it for the op that reads it), other floats in the reference dtype, ints
 * and bool as they are. */
static int held_dtype(const etc_refgraph *g, const etc_pytensor *t)
{
	int st = t->tensor.scalar_type;
	return st == ETC_FLOAT ? ETC_FLOAT : ref_import_dtype(st, g->float_dtype);
}

/* Weight t can be held as a view of the record's bytes (any alignment:
 * refgraph_call.c copies them for each op): dense, in the dtype it is held
 * in, on a little-endian host, and not in a member the archive inflated. */
static bool viewable(const etc_refgraph *g, const etc_pytensor *t)
{
	return t->contiguous && t->tensor.data && t->tensor.numel &&
	       held_dtype(g, t) == t->tensor.scalar_type && little_endian() &&
	       etc_etrecord_contains(g->rec, t->tensor.data, (size_t)t->tensor.nbytes);
}

static int load_weight(ref_loader *L, const weight_spec *w, etc_torchsave *sd, const char *sd_name,
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
	if (t->tensor.ndim <= ETC_REF_MAX_RANK && viewable(g, t)) {
		/* zero-copy: the archive's bytes, read by the ops that use it */
		ref_tensor *s = &g->slots[w->value];
		memset(s, 0, sizeof *s);
		s->dtype = t->tensor.scalar_type;
		s->rank = t->tensor.ndim;
		for (uint32_t d = 0; d < s->rank; d++)
			s->shape[d] = etc_tensor_size(&t->tensor, d);
		s->numel = t->tensor.numel;
		s->data = (void *)t->tensor.data;
		s->borrowed = true;
		v->mapped = true;
		return 0;
	}
	/* float32 stays float32 (widened per op), other floats become the
	   reference dtype, ints and bool keep theirs */
	int float_dtype = t->tensor.scalar_type == ETC_FLOAT ? ETC_FLOAT : g->float_dtype;
	int rc = ref_import_pytensor(&g->slots[w->value], t, float_dtype, what, L->err);
	/* copied: the file pages it was read from need not stay resident */
	if (t->tensor.data)
		ref_graph_release(g, t->tensor.data, t->tensor.nbytes);
	return rc;
}

int ref_load_weights(ref_loader *L)
{
	etc_refgraph *g = L->g;
	etc_torchsave *sd = NULL, *cs = NULL;
	char sd_name[600], cs_name[600];
	int rc = open_archive(g, "_state_dict", &sd, sd_name, sizeof sd_name, L->err);
	if (rc == 0)
		rc = open_archive(g, "_constants", &cs, cs_name, sizeof cs_name, L->err);
	for (size_t i = 0; rc == 0 && i < L->nweights; i++)
		rc = load_weight(L, &L->weights[i], sd, sd_name, cs, cs_name);
	/* read: the file pages need not stay resident */
	etc_etrecord_release_pages(g->rec);
	if (rc == 0)
		rc = ref_load_fold(L);
	etc_torchsave_free(sd);
	etc_torchsave_free(cs);
	return rc;
}

/* --- folding ---------------------------------------------------------------------------- */

/*
 * Folded: nodes that read only weights held in the reference dtype or
 * folded nodes' outputs, and nodes that only move the values of one weight
 * (the permute_copy of a linear layer's weight), computed and kept as
 * stored (float32: ref_graph_fold_call), widened by each op that reads
 * them like a weight (the matrix products by blocks of columns, so that
 * the wide copy of a large weight never exists whole). Any other node that
 * reads a weight held as stored (a view of the record, float32) runs each
 * time: its output would hold in the reference dtype what the weight holds
 * as stored, for the life of the graph. Moving a weight at each run would
 * cost a copy and a large allocation per run (MobileNetV2's classifier,
 * 2/3 of its weights: a 5 MB copy and a 5 MB strided permute per run).
 */
static bool foldable(const etc_refgraph *g, const ref_node *n)
{
	/* no random op is in the library; this keeps any future one out */
	if (!n->op || n->nsrcs == 0 || strstr(n->pub.op, "rand") || strstr(n->pub.op, "dropout") ||
	    strstr(n->pub.op, "bernoulli"))
		return false;
	bool moves = n->nsrcs == 1 && ref_op_moves_only(n->op);
	for (size_t k = 0; k < n->nsrcs; k++) {
		const ref_value *v = &g->values[n->src_values[k]];
		bool constant = (v->kind == REF_VALUE_WEIGHT &&
		                 (moves || (!v->mapped &&
		                            !ref_graph_narrow(g, &g->slots[n->src_values[k]])))) ||
		                (v->kind == REF_VALUE_NODE && g->nodes[v->index].folded);
		if (!constant || !g->slots[n->src_values[k]].data)
			return false;
	}
	for (uint32_t o = 0; o < n->pub.output_count; o++)
		if (n->out_values[o] == REF_NO_VALUE)
			return false;
	return true;
}

/* The outputs agree with the graph's record of them (the run's checks). */
static bool outputs_fit(const etc_refgraph *g, const ref_node *n, const ref_tensor *outs)
{
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		const ref_value *m = &g->values[n->out_values[o]];
		if (!outs[o].data)
			return false;
		if (!m->has_meta)
			continue;
		/* a move of a float32 weight is kept as float32 */
		int dt = ref_import_dtype(m->meta_dtype, g->float_dtype);
		bool same = m->meta_rank == outs[o].rank &&
		            (dt == outs[o].dtype ||
		             (ref_graph_narrow(g, &outs[o]) && m->meta_dtype == outs[o].dtype));
		for (uint32_t d = 0; same && d < outs[o].rank; d++)
			same = m->meta_shape[d] == outs[o].shape[d];
		if (!same)
			return false;
	}
	return true;
}

/* Computes node n once and keeps its outputs in the graph. A node whose
 * computation fails is left to the run. */
static int fold_node(ref_loader *L, ref_node *n)
{
	etc_refgraph *g = L->g;
	ref_tensor *outs = calloc(n->pub.output_count ? n->pub.output_count : 1, sizeof *outs);
	const ref_tensor **srcs = calloc(n->nsrcs ? n->nsrcs : 1, sizeof *srcs);
	if (!outs || !srcs) {
		free(outs);
		free(srcs);
		return ref_load_nomem(L->err);
	}
	for (size_t k = 0; k < n->nsrcs; k++)
		srcs[k] = &g->slots[n->src_values[k]];
	etc_error err = {0};
	bool ok = ref_graph_fold_call(g, n, srcs, outs, &err) == 0 && outputs_fit(g, n, outs);
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		if (ok)
			g->slots[n->out_values[o]] = outs[o];
		else
			ref_tensor_free(&outs[o]);
	}
	free(outs);
	free(srcs);
	n->folded = ok;
	return 0;
}

int ref_load_fold(ref_loader *L)
{
	etc_refgraph *g = L->g;
	uint32_t *folded_uses = calloc(g->nvalues ? g->nvalues : 1, sizeof *folded_uses);
	if (!folded_uses)
		return ref_load_nomem(L->err);
	for (size_t i = 0; i < g->nnodes; i++) {
		ref_node *n = &g->nodes[i];
		if (n->folded || !foldable(g, n))
			continue;
		int rc = fold_node(L, n);
		if (rc < 0) {
			free(folded_uses);
			return rc;
		}
	}
	for (size_t i = 0; i < g->nnodes; i++)
		for (size_t k = 0; g->nodes[i].folded && k < g->nodes[i].nsrcs; k++)
			folded_uses[g->nodes[i].src_values[k]]++;
	/* a weight that only folded nodes read: their outputs replace it */
	for (size_t v = 0; v < g->nvalues; v++) {
		bool out = false;
		for (size_t j = 0; j < g->noutputs && !out; j++)
			out = g->outputs[j] == v;
		if (g->values[v].kind == REF_VALUE_WEIGHT && !out && g->values[v].uses > 0 &&
		    folded_uses[v] == g->values[v].uses)
			ref_tensor_free(&g->slots[v]);
	}
	free(folded_uses);
	return 0;
}
