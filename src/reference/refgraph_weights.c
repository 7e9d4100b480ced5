/*
 * refgraph_weights.c - the graph signature: user inputs, and parameters,
 * buffers and lifted constants read from the program's `_state_dict` and
 * `_constants` members, checked against the graph and converted once.
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

/* The largest span of a file the kernel maps at one fault (a PMD-sized folio). */
#define FOLIO_SPAN ((uintptr_t)2 << 20)

static int open_archive(etc_refgraph *g, const char *suffix, etc_torchsave **ts, char *name,
                        size_t cap, etc_error *err)
{
	snprintf(name, cap, "%s%s", g->member, suffix);
	*ts = NULL;
	if (!etc_etrecord_has_member(g->rec, name))
		return 0;
	return etc_etrecord_torchsave(g->rec, name, ts, err);
}

static int load_weight(ref_loader *L, const weight_spec *w, etc_torchsave *sd, const char *sd_name,
                       etc_torchsave *cs, const char *cs_name, bool narrow)
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
	/* a weight only data-movement nodes read is folded in its own float
	   dtype and widened after (fold_narrow) */
	int dtype = g->float_dtype;
	if (narrow && (t->tensor.scalar_type == ETC_FLOAT || t->tensor.scalar_type == ETC_DOUBLE))
		dtype = t->tensor.scalar_type;
	int rc = ref_import_pytensor(&g->slots[w->value], t, dtype, what, L->err);
	/* converted: the file pages it was read from need not stay resident. The
	   kernel maps a file's large folios (ext4, xfs: up to 2 MiB) whole on the
	   first touch, so the window given back is the weight's range widened to
	   2 MiB boundaries (neighbours' pages fault back in when read). */
	if (t->tensor.data) {
		uintptr_t lo = (uintptr_t)t->tensor.data & ~(uintptr_t)(FOLIO_SPAN - 1);
		uintptr_t hi = (uintptr_t)t->tensor.data + (size_t)t->tensor.nbytes;
		hi = (hi + FOLIO_SPAN - 1) & ~(uintptr_t)(FOLIO_SPAN - 1);
		etc_etrecord_release_range(g->rec, (const void *)lo, hi - lo);
	}
	return rc;
}

/* Marks the values read by a node that also reads something other than a
 * weight. The weights not marked are read only by weight-only nodes: they are
 * converted first and folded before the others come, so that a folded copy and
 * the whole of the weights are never held at once. */
static void mark_run_reads(const etc_refgraph *g, bool *run_reads)
{
	for (size_t i = 0; i < g->nnodes; i++) {
		const ref_node *n = &g->nodes[i];
		bool direct = n->op != NULL;
		for (size_t k = 0; k < n->nsrcs; k++)
			direct = direct && g->values[n->src_values[k]].kind == REF_VALUE_WEIGHT;
		for (size_t k = 0; !direct && k < n->nsrcs; k++)
			run_reads[n->src_values[k]] = true;
	}
}

/* Ops that only move values: computing them in a weight's own float dtype
 * and widening the result gives the same bits as widening first. */

static bool moves_only(const ref_op *op)
{
	static int (*const fns[])(ref_call *) = {
	    ref_op_view,   ref_op_reshape, ref_op_permute,      ref_op_transpose, ref_op_t,
	    ref_op_expand, ref_op_squeeze, ref_op_squeeze_dims, ref_op_unsqueeze, ref_op_slice,
	    ref_op_narrow, ref_op_select,  ref_op_flip,         ref_op_clone};
	for (size_t i = 0; op && i < sizeof fns / sizeof fns[0]; i++)
		if (op->fn == fns[i])
			return true;
	return false;
}

/* Weight v is read only by nodes that move values and read nothing else,
 * and is no output of the graph. */
static bool narrow_candidate(const etc_refgraph *g, size_t v)
{
	if (g->values[v].uses == 0)
		return false;
	for (size_t j = 0; j < g->noutputs; j++)
		if (g->outputs[j] == v)
			return false;
	uint32_t readers = 0;
	for (size_t i = 0; i < g->nnodes; i++) {
		const ref_node *n = &g->nodes[i];
		bool reads = false;
		for (size_t k = 0; k < n->nsrcs; k++)
			reads = reads || n->src_values[k] == v;
		if (!reads)
			continue;
		if (n->nsrcs != 1 || !moves_only(n->op))
			return false;
		readers++;
	}
	return readers == g->values[v].uses;
}

static int fold_node(ref_loader *L, ref_node *n, size_t narrow_source, bool last);

/* Tensor t in float dtype `dtype`. float32 to float64 in place: the buffer
 * grown by realloc (a large one is remapped, not copied) and filled from the
 * end, so that the narrow and the wide copy are not held side by side. */
static int widen(ref_tensor *t, int dtype, etc_error *err)
{
	if (t->dtype == dtype)
		return 0;
	if (t->dtype == ETC_FLOAT && dtype == ETC_DOUBLE && !t->borrowed && t->numel) {
		double *d = realloc(t->data, (size_t)t->numel * sizeof *d);
		if (!d)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (%llu bytes)",
			                (unsigned long long)t->numel * sizeof *d);
		const float *f = (const float *)d;
		/* element i moves from bytes 4i to 8i: from the last one down, no
		   element is overwritten before it is read */
		for (uint64_t i = t->numel; i-- > 0;) {
			float x = f[i];
			d[i] = x;
		}
		t->data = d;
		t->dtype = dtype;
		return 0;
	}
	ref_tensor wide;
	etc_reftensor view = ref_tensor_view(t);
	int rc = ref_tensor_convert(&wide, &view, dtype, err);
	ref_tensor_free(t);
	if (rc == 0)
		*t = wide;
	return rc;
}

/* Folds the readers of weight v, held in its own float dtype, widening their
 * outputs; the last one frees v before its output is widened, so the weight,
 * the narrow output and the wide one are never held at once. A reader that
 * does not fold leaves v widened for the run. */
static int fold_narrow(ref_loader *L, size_t v)
{
	etc_refgraph *g = L->g;
	uint32_t left = g->values[v].uses;
	for (size_t i = 0; i < g->nnodes && left; i++) {
		ref_node *n = &g->nodes[i];
		if (n->nsrcs != 1 || n->src_values[0] != v)
			continue;
		ETC_TRY(fold_node(L, n, v, left == 1));
		if (n->folded)
			left--;
	}
	ref_tensor *w = &g->slots[v];
	/* a reader did not fold: the run reads the weight in the reference dtype */
	if (!w->data || !ref_dtype_is_float(w->dtype))
		return 0;
	return widen(w, g->float_dtype, L->err);
}

int ref_load_weights(ref_loader *L)
{
	etc_refgraph *g = L->g;
	etc_torchsave *sd = NULL, *cs = NULL;
	char sd_name[600], cs_name[600];
	int rc = open_archive(g, "_state_dict", &sd, sd_name, sizeof sd_name, L->err);
	if (rc == 0)
		rc = open_archive(g, "_constants", &cs, cs_name, sizeof cs_name, L->err);
	bool *run_reads = calloc(g->nvalues ? g->nvalues : 1, sizeof *run_reads);
	if (!run_reads && rc == 0)
		rc = ref_load_nomem(L->err);
	if (rc == 0)
		mark_run_reads(g, run_reads);
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (size_t i = 0; rc == 0 && i < L->nweights; i++) {
			const weight_spec *w = &L->weights[i];
			if (run_reads[w->value] != (pass == 1))
				continue;
			bool narrow = pass == 0 && narrow_candidate(g, w->value);
			rc = load_weight(L, w, sd, sd_name, cs, cs_name, narrow);
			if (rc == 0 && narrow)
				rc = fold_narrow(L, w->value);
		}
		/* converted: the file pages they came from need not stay resident */
		etc_etrecord_release_pages(g->rec);
		if (rc == 0)
			rc = ref_load_fold(L);
	}
	free(run_reads);
	etc_torchsave_free(sd);
	etc_torchsave_free(cs);
	return rc;
}

/* --- folding ---------------------------------------------------------------------------- */

static bool foldable(const etc_refgraph *g, const ref_node *n)
{
	/* no random op is in the library; this keeps any future one out */
	if (!n->op || n->nsrcs == 0 || strstr(n->pub.op, "rand") || strstr(n->pub.op, "dropout") ||
	    strstr(n->pub.op, "bernoulli"))
		return false;
	for (size_t k = 0; k < n->nsrcs; k++) {
		const ref_value *v = &g->values[n->src_values[k]];
		bool constant = v->kind == REF_VALUE_WEIGHT ||
		                (v->kind == REF_VALUE_NODE && g->nodes[v->index].folded);
		if (!constant || !g->slots[n->src_values[k]].data)
			return false;
	}
	for (uint32_t o = 0; o < n->pub.output_count; o++)
		if (n->out_values[o] == REF_NO_VALUE)
			return false;
	return true;
}

/* The outputs agree with the graph's record of them (the run's checks),
 * float outputs counted in the reference dtype when `widen`. */
static bool outputs_fit(const etc_refgraph *g, const ref_node *n, const ref_tensor *outs,
                        bool widen)
{
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		const ref_value *m = &g->values[n->out_values[o]];
		if (!outs[o].data)
			return false;
		if (!m->has_meta)
			continue;
		int dtype =
		    widen && ref_dtype_is_float(outs[o].dtype) ? g->float_dtype : outs[o].dtype;
		bool same = m->meta_rank == outs[o].rank &&
		            ref_import_dtype(m->meta_dtype, g->float_dtype) == dtype;
		for (uint32_t d = 0; same && d < outs[o].rank; d++)
			same = m->meta_shape[d] == outs[o].shape[d];
		if (!same)
			return false;
	}
	return true;
}

/*
 * Computes node n once and keeps its outputs in the graph. With a
 * `narrow_source` (its one input, a weight held in its own float dtype),
 * the float outputs are widened to the reference dtype, and when `last` the
 * source is freed first. A node whose computation fails is left to the run.
 */
static int fold_node(ref_loader *L, ref_node *n, size_t narrow_source, bool last)
{
	etc_refgraph *g = L->g;
	bool narrow = narrow_source != REF_NO_VALUE;
	ref_tensor *outs = calloc(n->pub.output_count ? n->pub.output_count : 1, sizeof *outs);
	if (!outs)
		return ref_load_nomem(L->err);
	etc_error err = {0};
	ref_call c = {n->pub.name, n->pub.op,           n->args, n->nargs, g->float_dtype,
	              outs,        n->pub.output_count, &err};
	bool ok = n->op->fn(&c) == 0 && outputs_fit(g, n, outs, narrow);
	int rc = 0;
	if (ok && narrow && last)
		ref_tensor_free(&g->slots[narrow_source]);
	for (uint32_t o = 0; ok && narrow && rc == 0 && o < n->pub.output_count; o++)
		if (ref_dtype_is_float(outs[o].dtype))
			rc = widen(&outs[o], g->float_dtype, L->err);
	for (uint32_t o = 0; o < n->pub.output_count; o++) {
		if (ok && rc == 0)
			g->slots[n->out_values[o]] = outs[o];
		else
			ref_tensor_free(&outs[o]);
	}
	free(outs);
	n->folded = ok && rc == 0;
	return rc;
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
		int rc = fold_node(L, n, REF_NO_VALUE, false);
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
