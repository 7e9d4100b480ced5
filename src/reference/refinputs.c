/*
 * refinputs.c - the user inputs of a reference run: checked against the
 * graph (count, shape, dtype) and read from the ETRecord (example inputs,
 * representative inputs), an .npz or a torch.save list.
 */
#include "reference/refgraph_private.h"
#include "reference/refimport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct etc_refinputs {
	size_t n;
	ref_tensor *t;
	etc_reftensor *views;
};

/* Input i given as `dtype` and `shape`: ETC_ERR_MISMATCH unless the graph agrees. */
static int check_input(const etc_refgraph *g, size_t i, int dtype, uint32_t rank,
                       const int64_t *shape, etc_error *err)
{
	const ref_value *v = &g->values[g->inputs[i]];
	if (!v->has_meta)
		return 0;
	bool same = rank == v->meta_rank;
	for (uint32_t d = 0; same && d < rank; d++)
		same = shape[d] == v->meta_shape[d];
	if (!same) {
		char a[256], b[256];
		ref_shape_str(a, sizeof a, v->meta_rank, v->meta_shape);
		ref_shape_str(b, sizeof b, rank, shape);
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "input %zu (%s): the graph expects shape %s, got %s", i, v->name, a,
		                b);
	}
	int want = ref_import_dtype(v->meta_dtype, g->float_dtype);
	int got = ref_import_dtype(dtype, g->float_dtype);
	if (want >= 0 && got != want)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "input %zu (%s): the graph expects %s%s, got %s", i, v->name,
		                etc_scalar_type_name(v->meta_dtype),
		                ref_dtype_is_float(want) ? " (or any float dtype)" : "",
		                etc_scalar_type_name(dtype));
	return 0;
}

int ref_graph_take_input(const etc_refgraph *g, size_t i, const etc_reftensor *t, bool borrow,
                         ref_tensor *dst, etc_error *err)
{
	memset(dst, 0, sizeof *dst);
	if (t->rank > ETC_REF_MAX_RANK || (t->rank && !t->shape) || (t->numel && !t->data))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "input %zu: malformed tensor view",
		                i);
	uint64_t n = 1;
	for (uint32_t d = 0; d < t->rank; d++)
		n = t->shape[d] < 0 ? UINT64_MAX : n * (uint64_t)t->shape[d];
	if (n != t->numel)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "input %zu: %" PRIu64 " elements for its shape", i, t->numel);
	ETC_TRY(check_input(g, i, t->dtype, t->rank, t->shape, err));
	int want = ref_import_dtype(t->dtype, g->float_dtype);
	if (want < 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "input %zu (%s): dtype %s is not supported by the reference", i,
		                g->values[g->inputs[i]].name, etc_scalar_type_name(t->dtype));
	if (t->dtype == want && borrow) {
		dst->dtype = want;
		dst->rank = t->rank;
		memcpy(dst->shape, t->shape, t->rank * sizeof *t->shape);
		dst->numel = t->numel;
		dst->data = (void *)t->data;
		dst->borrowed = true;
		return 0;
	}
	if (ref_dtype_supported(t->dtype))
		return ref_tensor_convert(dst, t, want, err);
	/* float16 and the like: through the element decoders of etc_tensor */
	uint8_t sizes[ETC_REF_MAX_RANK * 8];
	for (uint32_t d = 0; d < t->rank; d++)
		for (int b = 0; b < 8; b++)
			sizes[d * 8 + b] = (uint8_t)((uint64_t)t->shape[d] >> (8 * b));
	etc_tensor et = {t->dtype, t->rank, 0,        sizes,
	                 NULL,     -1,      t->numel, t->numel * etc_scalar_type_size(t->dtype),
	                 t->data};
	char what[64];
	snprintf(what, sizeof what, "input %zu", i);
	return ref_import_tensor(dst, &et, g->float_dtype, what, err);
}

/* --- sets of inputs ------------------------------------------------------------------ */

static etc_refinputs *inputs_new(size_t n)
{
	etc_refinputs *in = calloc(1, sizeof *in);
	if (!in)
		return NULL;
	in->t = calloc(n ? n : 1, sizeof *in->t);
	in->views = calloc(n ? n : 1, sizeof *in->views);
	if (!in->t || !in->views) {
		etc_refinputs_free(in);
		return NULL;
	}
	return in;
}

static int count_error(const etc_refgraph *g, size_t got, const char *what, etc_error *err)
{
	return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
	                "graph %s (%s) takes %zu inputs, %s has %zu", g->name, g->method,
	                g->ninputs, what, got);
}

/* Imported tensor i is checked and its view set. */
static int finish_one(const etc_refgraph *g, etc_refinputs *in, size_t i, etc_error *err)
{
	ETC_TRY(check_input(g, i, in->t[i].dtype, in->t[i].rank, in->t[i].shape, err));
	in->views[i] = ref_tensor_view(&in->t[i]);
	in->n = i + 1;
	return 0;
}

int etc_refinputs_from_npz(etc_refinputs **out, const etc_refgraph *g, const etc_npz *npz,
                           etc_error *err)
{
	if (!out || !g || !npz)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_refinputs_from_npz: NULL %s",
		                !out ? "out"
		                : !g ? "g"
		                     : "npz");
	*out = NULL;
	if (etc_npz_count(npz) != g->ninputs)
		return count_error(g, etc_npz_count(npz), "the .npz", err);
	etc_refinputs *in = inputs_new(g->ninputs);
	if (!in)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < g->ninputs; i++) {
		char key[32], what[300];
		snprintf(key, sizeof key, "%zu", i);
		int a = etc_npz_find(npz, key);
		if (a < 0) {
			rc = etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
			              "the .npz has no array \"%s\" for input %zu (%s)", key, i,
			              g->values[g->inputs[i]].name);
			break;
		}
		etc_tensor t;
		snprintf(what, sizeof what, "input %zu (%s)", i, g->values[g->inputs[i]].name);
		rc = etc_npz_array(npz, (size_t)a, &t, err);
		if (rc == 0)
			rc = ref_import_tensor(&in->t[i], &t, g->float_dtype, what, err);
		if (rc == 0)
			rc = finish_one(g, in, i, err);
		in->n = i + 1;
	}
	if (rc < 0) {
		etc_refinputs_free(in);
		return rc;
	}
	*out = in;
	return 0;
}

/* A tuple/list of tensors, or (args, kwargs) as torch.export saves example inputs. */
static int from_pyobj(etc_refinputs **out, const etc_refgraph *g, const etc_pyobj *o,
                      const char *what, etc_error *err)
{
	*out = NULL;
	int k = etc_pyobj_kind(o);
	if ((k == ETC_PY_TUPLE || k == ETC_PY_LIST) && etc_pyobj_len(o) == 2 &&
	    etc_pyobj_kind(etc_pyobj_item(o, 1)) == ETC_PY_DICT &&
	    (etc_pyobj_kind(etc_pyobj_item(o, 0)) == ETC_PY_TUPLE ||
	     etc_pyobj_kind(etc_pyobj_item(o, 0)) == ETC_PY_LIST)) {
		if (etc_pyobj_len(etc_pyobj_item(o, 1)) != 0)
			return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
			                "%s: keyword inputs are not supported", what);
		o = etc_pyobj_item(o, 0);
		k = etc_pyobj_kind(o);
	}
	size_t n = 1;
	if (k == ETC_PY_TUPLE || k == ETC_PY_LIST)
		n = etc_pyobj_len(o);
	else if (k != ETC_PY_TENSOR)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "%s is a %s, not a list of input tensors", what,
		                etc_pykind_name(k));
	if (n != g->ninputs)
		return count_error(g, n, what, err);
	etc_refinputs *in = inputs_new(n);
	if (!in)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const etc_pyobj *it = k == ETC_PY_TENSOR ? o : etc_pyobj_item(o, i);
		const etc_pytensor *t = etc_pyobj_tensor(it);
		char name[300];
		snprintf(name, sizeof name, "%s: input %zu (%s)", what, i,
		         g->values[g->inputs[i]].name);
		if (!t) {
			rc = etc_fail(err, ETC_ERR_MISMATCH, NULL, -1, "%s is a %s, not a tensor",
			              name, etc_pykind_name(etc_pyobj_kind(it)));
			break;
		}
		rc = ref_import_pytensor(&in->t[i], t, g->float_dtype, name, err);
		if (rc == 0)
			rc = finish_one(g, in, i, err);
		in->n = i + 1;
	}
	if (rc < 0) {
		etc_refinputs_free(in);
		return rc;
	}
	*out = in;
	return 0;
}

int etc_refinputs_from_torchsave(etc_refinputs **out, const etc_refgraph *g,
                                 const etc_torchsave *ts, etc_error *err)
{
	if (out)
		*out = NULL;
	return from_pyobj(out, g, etc_torchsave_root(ts), etc_torchsave_name(ts), err);
}

int etc_refinputs_from_record(etc_refinputs **out, const etc_refgraph *g, const etc_etrecord *rec,
                              const char *which, size_t index, etc_error *err)
{
	if (!out || !g || !rec)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_refinputs_from_record: NULL %s",
		                !out ? "out"
		                : !g ? "g"
		                     : "rec");
	*out = NULL;
	if (which && strcmp(which, "example_inputs") == 0) {
		char member[600];
		etc_torchsave *ts;
		snprintf(member, sizeof member, "%s_example_inputs", g->member);
		ETC_TRY(etc_etrecord_torchsave(rec, member, &ts, err));
		int rc = from_pyobj(out, g, etc_torchsave_root(ts), member, err);
		etc_torchsave_free(ts);
		return rc;
	}
	if (!which)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_refinputs_from_record: NULL which (give representative_inputs "
		                "or example_inputs)");
	if (strcmp(which, "representative_inputs") != 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "inputs from the record: \"%s\" is neither representative_inputs "
		                "nor example_inputs",
		                which);
	const etc_torchsave *ts = etc_etrecord_representative_inputs(rec);
	if (!ts)
		return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		                "the ETRecord has no representative_inputs");
	const etc_pyobj *o = etc_torchsave_root(ts);
	if (etc_pyobj_kind(o) == ETC_PY_DICT)
		o = etc_pyobj_dict_get(o, g->method);
	int k = etc_pyobj_kind(o);
	if (k != ETC_PY_LIST && k != ETC_PY_TUPLE && k != ETC_PY_TENSOR)
		return etc_fail(err, ETC_ERR_FORMAT, etc_etrecord_name(rec), -1,
		                "representative_inputs is a %s, not a list of inputs",
		                etc_pykind_name(k));
	/* upstream writes one set (test case 0's inputs: tensors); a list of
	 * sets (lists or tuples) is indexed */
	int k0 = etc_pyobj_kind(etc_pyobj_item(o, 0));
	bool sets = k != ETC_PY_TENSOR && (k0 == ETC_PY_LIST || k0 == ETC_PY_TUPLE) &&
	            !(etc_pyobj_len(o) == 2 && etc_pyobj_kind(etc_pyobj_item(o, 1)) == ETC_PY_DICT);
	size_t count = sets ? etc_pyobj_len(o) : 1;
	if (index >= count)
		return etc_fail(
		    err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		    "representative_inputs has %zu set%s of inputs; there is no set %zu", count,
		    count == 1 ? "" : "s", index);
	char what[64];
	snprintf(what, sizeof what, "representative_inputs[%zu]", index);
	return from_pyobj(out, g, sets ? etc_pyobj_item(o, index) : o, what, err);
}

size_t etc_refinputs_count(const etc_refinputs *in)
{
	return in ? in->n : 0;
}

const etc_reftensor *etc_refinputs_tensors(const etc_refinputs *in)
{
	return in ? in->views : NULL;
}

void etc_refinputs_free(etc_refinputs *in)
{
	if (!in)
		return;
	if (in->t)
		for (size_t i = 0; i < in->n; i++)
			ref_tensor_free(&in->t[i]);
	free(in->t);
	free(in->views);
	free(in);
}
