/*
 * accuracy.c - pairs the program outputs of EventBlock runs with reference
 * outputs and applies the gate (see include/etcompare/accuracy.h for the
 * rules). Metrics come from metrics.c; this file only decides what is
 * compared with what, and what the result means.
 */
#include "etcompare/accuracy.h"
#include "analysis/compare_private.h"
#include "core/internal.h"
#include "analysis/metrics_private.h"
#include "analysis/pairing.h"
#include "format/npz_private.h"
#include "format/zipread.h"
#include "etcompare/text.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* One side of a pair: a dense tensor, a strided torch tensor or a scalar. */
typedef struct item {
	etc_tensor t;           /* shape and dtype (and data when dense) */
	const etc_pytensor *pt; /* torch.save tensor, else NULL */
	bool scalar;
	double value; /* scalar value */
	bool has_data;
	etc_npz_crc check; /* a stored .npz member still to verify */
} item;

struct etc_accuracy {
	etc_accuracy_row *rows;
	item *act, *ref; /* per row, for etc_accuracy_row_values (plots) */
	size_t count, cap;
	int rule;
	char note[1024];
	char source[512];              /* etc_accuracy_reference_source */
	etc_accuracy_options opt;      /* as given: block and method borrowed */
	etc_accuracy_pairing *pairing; /* content pairing: one per run */
	size_t npairing, nrefs;
	etc_pair_score *scores; /* npairing x nrefs */
	int64_t tap_from;       /* etc_accuracy_mark_taps: first tap output, -1 none */
};

static void scalar_read(const void *src, uint64_t start, size_t n, double *dst)
{
	(void)start;
	for (size_t i = 0; i < n; i++)
		dst[i] = *(const double *)src;
}

static void item_values(const item *it, etc_values *v)
{
	if (it->scalar) {
		v->count = 1;
		v->scalar_type = it->t.scalar_type;
		v->read = scalar_read;
		v->src = &it->value;
	} else if (it->pt) {
		etc_values_from_pytensor(v, it->pt);
	} else {
		etc_values_from_tensor(v, &it->t);
	}
}

/* The whole "[2, 3]" of t into buf (ETC_SHAPE_FULL bytes hold any rank up to
 * 64); returns its length. */
static size_t shape_full(const etc_tensor *t, char *buf, size_t cap)
{
	size_t n = (size_t)snprintf(buf, cap, "[");
	for (uint32_t k = 0; k < t->ndim && n < cap; k++)
		n += (size_t)snprintf(buf + n, cap - n, k ? ", %lld" : "%lld",
		                      (long long)etc_tensor_size(t, k));
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, "]");
	return n < cap ? n : cap - 1;
}

void etc_shape_str_(const etc_tensor *t, char *buf, size_t cap)
{
	char full[ETC_SHAPE_FULL];
	size_t n = shape_full(t, full, sizeof full);
	if (n < cap) {
		memcpy(buf, full, n + 1);
		return;
	}
	/* never cut silently: the first and last sizes with the count left out */
	uint32_t head = t->ndim, tail = 0;
	char mark[48];
	for (;;) {
		head = head > 1 ? head - 1 : head;
		tail = t->ndim - head > 3 ? 3 : t->ndim - head;
		uint32_t mid = t->ndim - head - tail;
		snprintf(mark, sizeof mark, ", \xe2\x80\xa6 %u more \xe2\x80\xa6", mid);
		size_t len = 1 + strlen(mark) + 1;
		for (uint32_t k = 0; k < head; k++)
			len += (size_t)snprintf(NULL, 0, k ? ", %lld" : "%lld",
			                        (long long)etc_tensor_size(t, k));
		for (uint32_t k = t->ndim - tail; k < t->ndim; k++)
			len +=
			    (size_t)snprintf(NULL, 0, ", %lld", (long long)etc_tensor_size(t, k));
		if (len < cap || head <= 1)
			break;
	}
	size_t at = (size_t)snprintf(buf, cap, "[");
	for (uint32_t k = 0; k < head && at < cap; k++)
		at += (size_t)snprintf(buf + at, cap - at, k ? ", %lld" : "%lld",
		                       (long long)etc_tensor_size(t, k));
	if (at < cap)
		at += (size_t)snprintf(buf + at, cap - at, "%s", mark);
	for (uint32_t k = t->ndim - tail; k < t->ndim && at < cap; k++)
		at += (size_t)snprintf(buf + at, cap - at, ", %lld",
		                       (long long)etc_tensor_size(t, k));
	if (at < cap)
		snprintf(buf + at, cap - at, "]");
}

bool etc_shape_equal_(const etc_tensor *a, const etc_tensor *b)
{
	if (a->ndim != b->ndim)
		return false;
	for (uint32_t k = 0; k < a->ndim; k++)
		if (etc_tensor_size(a, k) != etc_tensor_size(b, k))
			return false;
	return true;
}

static void shape_str(const item *it, char *buf, size_t cap)
{
	etc_shape_str_(&it->t, buf, cap);
}

bool etc_scalar_type_is_float_(int st)
{
	switch (st) {
	case ETC_HALF:
	case ETC_FLOAT:
	case ETC_DOUBLE:
	case ETC_BFLOAT16:
	case ETC_FLOAT8E5M2:
	case ETC_FLOAT8E4M3FN:
	case ETC_FLOAT8E5M2FNUZ:
	case ETC_FLOAT8E4M3FNUZ:
		return true;
	}
	return false;
}

static int push_row(etc_accuracy *a, etc_accuracy_row **out, etc_error *err)
{
	if (a->count == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		etc_accuracy_row *r = realloc(a->rows, cap * sizeof *r);
		if (r)
			a->rows = r;
		item *x = r ? realloc(a->act, cap * sizeof *x) : NULL;
		if (x)
			a->act = x;
		item *y = x ? realloc(a->ref, cap * sizeof *y) : NULL;
		if (!y)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		a->ref = y;
		a->cap = cap;
	}
	memset(&a->act[a->count], 0, sizeof *a->act);
	memset(&a->ref[a->count], 0, sizeof *a->ref);
	*out = &a->rows[a->count++];
	memset(*out, 0, sizeof **out);
	(*out)->reference = -1;
	(*out)->dtype = (*out)->reference_dtype = "";
	return 0;
}

/* --- reference sets -------------------------------------------------------- */

typedef struct kj_entry {
	long k, j;
	size_t array;
} kj_entry;

typedef struct refs {
	const etc_reference_set *set;
	const etc_pyobj *list; /* torchsave: [index] -> outputs */
	size_t count;
	bool npz_indexed; /* npz arrays named "k.j" */
	kj_entry *kj;     /* those arrays sorted by (k, j); owned */
	size_t nkj;
	size_t method; /* bundled: the method's test suite */
} refs;

static int compare_kj(const void *pa, const void *pb)
{
	const kj_entry *a = pa, *b = pb;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	return (a->j > b->j) - (a->j < b->j);
}

static void refs_close(refs *r)
{
	free(r->kj);
	r->kj = NULL;
}

static bool parse_kj(const char *name, long *k, long *j)
{
	char *end;
	*k = strtol(name, &end, 10);
	if (end == name || *end != '.' || *k < 0)
		return false;
	const char *p = end + 1;
	*j = strtol(p, &end, 10);
	return end != p && !*end && *j >= 0;
}

/* --- BundledProgram references ---------------------------------------------- */

static int bundled_open(refs *r, const etc_reference_set *set, const char *method, etc_error *err)
{
	const etc_bundled *bp = set->bundled;
	long m = etc_bundled_method_find(bp, method);
	if (m < 0) {
		char have[256] = "", part[96];
		size_t n = etc_bundled_method_count(bp), at = 0;
		for (size_t i = 0; i < n && at < sizeof have; i++) {
			etc_str s = etc_bundled_method_name(bp, i);
			etc_text_escape(part, sizeof part, s.ptr, s.len);
			at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", i ? ", " : "",
			                       part);
		}
		char want[96];
		return etc_fail(err, ETC_ERR_MISMATCH, set->name, -1,
		                "the BundledProgram has no test suite for method \"%s\" (%s%s)",
		                etc_text_safe(want, sizeof want, method),
		                n ? "its methods: " : "it has no test suites", have);
	}
	r->method = (size_t)m;
	r->count = etc_bundled_test_case_count(bp, r->method);
	return 0;
}

/* The expected outputs of test case `index`, as tensor and scalar items. */
static int bundled_get(const refs *r, size_t index, item *out, size_t cap, size_t *n,
                       etc_error *err)
{
	const etc_bundled *bp = r->set->bundled;
	size_t count = etc_bundled_value_count(bp, r->method, index, true);
	for (size_t j = 0; j < count; j++) {
		etc_bundled_value v;
		if (*n >= cap)
			return etc_fail(err, ETC_ERR_LIMIT, r->set->name, -1,
			                "more than %zu outputs in test case %zu", cap, index);
		ETC_TRY(etc_bundled_get(bp, r->method, index, true, j, &v, err));
		item *it = &out[(*n)++];
		memset(it, 0, sizeof *it);
		it->has_data = true;
		if (v.kind == ETC_BUNDLED_TENSOR) {
			if (!v.row_major)
				return etc_fail(
				    err, ETC_ERR_UNSUPPORTED, r->set->name, (int64_t)v.offset,
				    "test case %zu: expected output %zu is not in row-major "
				    "dim order, which the comparison needs",
				    index, j);
			it->t = v.tensor;
			continue;
		}
		it->scalar = true;
		it->t.numel = 1;
		it->t.scalar_type = v.kind == ETC_BUNDLED_INT    ? ETC_LONG
		                    : v.kind == ETC_BUNDLED_BOOL ? ETC_BOOL
		                                                 : ETC_DOUBLE;
		it->value = v.kind == ETC_BUNDLED_INT    ? (double)v.int_val
		            : v.kind == ETC_BUNDLED_BOOL ? (double)v.bool_val
		                                         : v.double_val;
	}
	return 0;
}

/*
 * A BundledProgram names the program it tests: a run paired with one of its
 * test cases must have as many outputs, of the same shapes. When it does
 * not, the file is another program's, and comparing would only fill the
 * table with mismatches.
 */
static int bundled_agree(const refs *r, size_t index, const item *acts, size_t na,
                         const item *refs_, size_t nr, uint32_t run, const char *block,
                         etc_error *err)
{
	char m[96], b[96];
	etc_str s = etc_bundled_method_name(r->set->bundled, r->method);
	etc_text_escape(m, sizeof m, s.ptr, s.len);
	etc_text_safe(b, sizeof b, block);
	/* a block that ran no model (Default: init and load) is the block's
	   mistake, not the BundledProgram's */
	if (na == 0 && nr > 0)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "block \"%s\" logged no program outputs (run %u): nothing to "
		                "compare with test case %zu of method %s; give --block the "
		                "block that ran the model",
		                b, run, index, m);
	if (na != nr)
		return etc_fail(err, ETC_ERR_MISMATCH, r->set->name, -1,
		                "test case %zu of method %s has %zu expected output%s, run %u of "
		                "block \"%s\" has %zu program output%s: the BundledProgram is not "
		                "the program this ETDump ran",
		                index, m, nr, nr == 1 ? "" : "s", run, b, na, na == 1 ? "" : "s");
	for (size_t j = 0; j < na; j++) {
		char x[96], y[96];
		if (acts[j].scalar || refs_[j].scalar)
			continue;
		shape_str(&acts[j], x, sizeof x);
		shape_str(&refs_[j], y, sizeof y);
		if (!etc_shape_equal_(&acts[j].t, &refs_[j].t))
			return etc_fail(
			    err, ETC_ERR_MISMATCH, r->set->name, -1,
			    "test case %zu of method %s: expected output %zu has shape %s, "
			    "output %zu of run %u of block \"%s\" has shape %s: the "
			    "BundledProgram is not the program this ETDump ran",
			    index, m, j, y, j, run, b, x);
	}
	return 0;
}

static int refs_open(refs *r, const etc_reference_set *set, const char *method, etc_error *err)
{
	memset(r, 0, sizeof *r);
	r->set = set;
	if (set->bundled)
		return bundled_open(r, set, method, err);
	if (set->torchsave) {
		const etc_pyobj *root = etc_torchsave_root(set->torchsave);
		const etc_pyobj *list = root;
		if (etc_pyobj_kind(root) == ETC_PY_DICT) {
			list = etc_pyobj_dict_get(root, method);
			if (!list)
				return etc_fail(
				    err, ETC_ERR_FORMAT, set->name, -1,
				    "the reference outputs have no entry for method \"%s\"",
				    method);
		}
		int k = etc_pyobj_kind(list);
		if (k != ETC_PY_LIST && k != ETC_PY_TUPLE)
			return etc_fail(err, ETC_ERR_FORMAT, set->name, -1,
			                "reference outputs: expected a list over bundled inputs, "
			                "found a %s",
			                etc_pykind_name(k));
		r->list = list;
		r->count = etc_pyobj_len(list);
		return 0;
	}
	size_t n = etc_npz_count(set->npz), nkj = 0, other = 0;
	for (size_t i = 0; i < n; i++) {
		long k, j;
		if (parse_kj(etc_npz_name(set->npz, i), &k, &j))
			nkj++;
		else
			other = i;
	}
	bool all = n > 0 && nkj == n;
	/* some arrays named "k.j" and some not: which convention was meant is a
	   guess, and the wrong one pairs outputs with other outputs */
	if (nkj && !all)
		return etc_fail(err, ETC_ERR_FORMAT, set->name, -1,
		                "array \"%s\" is not named \"k.j\" (reference k, output j) as "
		                "%zu other%s: name every array \"k.j\", or none (one "
		                "reference, outputs in order)",
		                etc_npz_name(set->npz, other), nkj, nkj == 1 ? " is" : "s are");
	r->npz_indexed = all;
	r->count = 1;
	if (!all)
		return 0;
	/* "k.j" arrays: sorted once, so that finding a reference's outputs is a
	 * binary search, and every j of a reference runs from 0 without gaps */
	if (!(r->kj = malloc(n * sizeof *r->kj)))
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t i = 0; i < n; i++) {
		parse_kj(etc_npz_name(set->npz, i), &r->kj[i].k, &r->kj[i].j);
		r->kj[i].array = i;
	}
	r->nkj = n;
	qsort(r->kj, n, sizeof *r->kj, compare_kj);
	for (size_t i = 0; i < n; i++) {
		long want_k = i ? r->kj[i - 1].k + (r->kj[i - 1].k != r->kj[i].k) : 0;
		if (r->kj[i].k != want_k) {
			int rc = etc_fail(
			    err, ETC_ERR_FORMAT, set->name, -1,
			    "array \"%s\" has no array \"%ld.0\" before it: references must be "
			    "numbered from 0 without gaps",
			    etc_npz_name(set->npz, r->kj[i].array), want_k);
			refs_close(r);
			return rc;
		}
		long want = i && r->kj[i - 1].k == r->kj[i].k ? r->kj[i - 1].j + 1 : 0;
		if (r->kj[i].j != want) {
			int rc = etc_fail(
			    err, ETC_ERR_FORMAT, set->name, -1,
			    "array \"%s\" has no array \"%ld.%ld\" before it: outputs "
			    "of reference %ld must be numbered from 0 without gaps",
			    etc_npz_name(set->npz, r->kj[i].array), r->kj[i].k, want, r->kj[i].k);
			refs_close(r);
			return rc;
		}
	}
	r->count = (size_t)r->kj[n - 1].k + 1;
	return 0;
}

/* Appends the leaves of a torch.save output list (nested lists flattened). */
static int flatten_py(const etc_pyobj *o, item *out, size_t cap, size_t *n, int depth,
                      const char *name, etc_error *err)
{
	int k = etc_pyobj_kind(o);
	if ((k == ETC_PY_LIST || k == ETC_PY_TUPLE) && depth < 16) {
		for (size_t i = 0; i < etc_pyobj_len(o); i++)
			ETC_TRY(
			    flatten_py(etc_pyobj_item(o, i), out, cap, n, depth + 1, name, err));
		return 0;
	}
	if (*n >= cap)
		return etc_fail(err, ETC_ERR_LIMIT, name, -1, "more than %zu reference outputs",
		                cap);
	item *it = &out[(*n)++];
	memset(it, 0, sizeof *it);
	if (k == ETC_PY_TENSOR) {
		it->pt = etc_pyobj_tensor(o);
		it->t = it->pt->tensor;
		it->has_data = true;
	} else if (k == ETC_PY_INT || k == ETC_PY_BOOL || k == ETC_PY_FLOAT) {
		it->scalar = true;
		it->has_data = true;
		it->t.scalar_type = k == ETC_PY_FLOAT  ? ETC_DOUBLE
		                    : k == ETC_PY_BOOL ? ETC_BOOL
		                                       : ETC_LONG;
		it->t.numel = 1;
		it->value = k == ETC_PY_FLOAT  ? etc_pyobj_float(o)
		            : k == ETC_PY_BOOL ? (double)etc_pyobj_bool(o)
		                               : (double)etc_pyobj_int(o);
	} else {
		return etc_fail(err, ETC_ERR_FORMAT, name, -1,
		                "reference output %zu is a %s, not a tensor or number", *n - 1,
		                etc_pykind_name(k));
	}
	return 0;
}

static int refs_get(const refs *r, size_t index, item *out, size_t cap, size_t *n, etc_error *err)
{
	*n = 0;
	if (r->set->bundled)
		return bundled_get(r, index, out, cap, n, err);
	if (r->set->torchsave)
		return flatten_py(etc_pyobj_item(r->list, index), out, cap, n, 0, r->set->name,
		                  err);
	size_t count = etc_npz_count(r->set->npz);
	if (!r->npz_indexed) {
		/* one reference: every array in file order */
		for (size_t i = 0; i < count; i++) {
			if (*n >= cap)
				return etc_fail(err, ETC_ERR_LIMIT, r->set->name, -1,
				                "more than %zu reference outputs", cap);
			item *it = &out[(*n)++];
			memset(it, 0, sizeof *it);
			ETC_TRY(etc_npz_array_deferred_(r->set->npz, i, &it->t, &it->check, err));
			it->has_data = true;
		}
		return 0;
	}
	/* the first entry of reference `index`, then its j = 0, 1, ... */
	size_t lo = 0, hi = r->nkj;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->kj[mid].k < (long)index)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < r->nkj && r->kj[i].k == (long)index; i++) {
		if (*n >= cap)
			return etc_fail(err, ETC_ERR_LIMIT, r->set->name, -1,
			                "more than %zu outputs in reference %zu", cap, index);
		item *it = &out[(*n)++];
		memset(it, 0, sizeof *it);
		ETC_TRY(
		    etc_npz_array_deferred_(r->set->npz, r->kj[i].array, &it->t, &it->check, err));
		it->has_data = true;
	}
	return 0;
}

static void describe_source(etc_accuracy *a, const etc_reference_set *set, const refs *r)
{
	char name[256], method[96];
	etc_text_safe(name, sizeof name, set->name);
	if (set->bundled) {
		etc_str m = etc_bundled_method_name(set->bundled, r->method);
		etc_text_escape(method, sizeof method, m.ptr, m.len);
		snprintf(
		    a->source, sizeof a->source,
		    "the expected outputs of method %s in %s (BundledProgram, %zu test case%s)",
		    method, name, r->count, r->count == 1 ? "" : "s");
	} else {
		snprintf(a->source, sizeof a->source, "the %s reference outputs in %s",
		         set->torchsave ? "torch.save" : ".npz", name);
	}
}

/* --- run outputs ------------------------------------------------------------ */

static int run_items(const etc_inspector *insp, const etc_event_block *b, uint32_t run, item *out,
                     size_t cap, size_t *n, etc_error *err)
{
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	*n = 0;
	for (uint32_t k = b->output_start[run]; k < b->output_start[run + 1]; k++) {
		const etc_value *v = &b->outputs[k];
		if (v->type == ETC_VALUE_TENSOR || v->type == ETC_VALUE_TENSOR_LIST) {
			for (uint32_t i = 0; i < v->tensor_count; i++) {
				if (*n >= cap)
					return etc_fail(err, ETC_ERR_LIMIT, NULL, -1,
					                "more than %zu program outputs", cap);
				item *it = &out[(*n)++];
				memset(it, 0, sizeof *it);
				int rc = etc_value_tensor(v, i, buf, &it->t, err);
				if (rc < 0 && rc != ETC_ERR_UNSUPPORTED)
					return rc;
				it->has_data = it->t.data != NULL || it->t.numel == 0;
			}
		} else if (v->type >= ETC_VALUE_INT && v->type <= ETC_VALUE_DOUBLE) {
			if (*n >= cap)
				return etc_fail(err, ETC_ERR_LIMIT, NULL, -1,
				                "more than %zu program outputs", cap);
			item *it = &out[(*n)++];
			memset(it, 0, sizeof *it);
			it->scalar = true;
			it->has_data = true;
			it->t.numel = 1;
			it->t.scalar_type = v->type == ETC_VALUE_INT    ? ETC_LONG
			                    : v->type == ETC_VALUE_BOOL ? ETC_BOOL
			                                                : ETC_DOUBLE;
			it->value = v->type == ETC_VALUE_INT     ? (double)v->int_val
			            : v->type == ETC_VALUE_BOOL  ? (double)v->bool_val
			            : v->type == ETC_VALUE_FLOAT ? (double)v->float_val
			                                         : v->double_val;
		}
	}
	return 0;
}

/* --- the gate ----------------------------------------------------------------- */

/*
 * The value and the threshold it failed, with the fewest significant digits
 * (at least 4) that print them differently: "cosine 1 below 1" says nothing.
 */
static void distinct_pair(char *x, char *y, double value, double limit)
{
	for (int digits = 4; digits <= 17; digits++) {
		snprintf(x, 40, "%.*g", digits, value);
		snprintf(y, 40, "%.*g", digits, limit);
		if (strcmp(x, y) != 0)
			return;
	}
}

bool etc_gate_set_(double min_snr, double max_mse, double min_cosine, double max_abs)
{
	return !isnan(min_snr) || !isnan(max_mse) || !isnan(min_cosine) || !isnan(max_abs);
}

int etc_gate_judge_(const etc_metrics *m, const etc_gate *o, char *why, size_t cap)
{
	if (m->nan_mismatch_count) {
		/* a NaN where the other side has a number is never a pass */
		snprintf(why, cap, "%llu values are NaN on one side only",
		         (unsigned long long)m->nan_mismatch_count);
		return ETC_ROW_FAIL;
	}
	if (m->identical)
		return ETC_ROW_PASS; /* equal values pass, even where SNR is undefined (all zero) */
	if ((m->notes & ETC_METRICS_INFINITE) && !m->exact) {
		snprintf(why, cap, "infinite values where the other side differs (%s)",
		         etc_metrics_note_str(ETC_METRICS_INFINITE));
		return ETC_ROW_FAIL;
	}
	if (m->exact) {
		if (m->mismatch_count && !(!isnan(o->max_abs) && m->max_abs <= o->max_abs)) {
			snprintf(why, cap, "%llu of %llu values differ (exact comparison)",
			         (unsigned long long)m->mismatch_count,
			         (unsigned long long)m->count);
			return ETC_ROW_FAIL;
		}
		return ETC_ROW_PASS;
	}
	char x[40], y[40];
	if (!isnan(o->min_snr) && !(m->snr_db >= o->min_snr)) {
		distinct_pair(x, y, m->snr_db, o->min_snr);
		snprintf(why, cap, "SNR %s dB below %s dB", x, y);
	} else if (!isnan(o->max_mse) && !(m->mse <= o->max_mse)) {
		distinct_pair(x, y, m->mse, o->max_mse);
		snprintf(why, cap, "MSE %s above %s", x, y);
	} else if (!isnan(o->min_cosine) && !(m->cosine >= o->min_cosine)) {
		/* near 1 the distance to 1 is what tells the two apart */
		if (o->min_cosine > 0.999 && m->cosine > 0.999) {
			distinct_pair(x, y, 1 - m->cosine, 1 - o->min_cosine);
			snprintf(why, cap, "1 - cosine = %s above %s", x, y);
		} else {
			distinct_pair(x, y, m->cosine, o->min_cosine);
			snprintf(why, cap, "cosine %s below %s", x, y);
		}
	} else if (!isnan(o->max_abs) && !(m->max_abs <= o->max_abs)) {
		distinct_pair(x, y, m->max_abs, o->max_abs);
		snprintf(why, cap, "max abs error %s above %s at index %llu", x, y,
		         (unsigned long long)m->max_abs_index);
	} else
		return ETC_ROW_PASS;
	return ETC_ROW_FAIL;
}

static void judge(etc_accuracy_row *row, const etc_accuracy_options *o)
{
	etc_gate g = {o->min_snr, o->max_mse, o->min_cosine, o->max_abs};
	row->status = etc_gate_judge_(&row->metrics, &g, row->reason, sizeof row->reason);
}

/* Finishes the deferred CRC-32 check of a reference read from an .npz. */
static int verify_ref(const etc_reference_set *set, item *ref, etc_error *err)
{
	if (!ref->check.pending)
		return 0;
	uint32_t crc = etc_crc32(ref->check.crc, ref->t.data, (size_t)ref->t.nbytes);
	ETC_TRY(etc_npz_crc_end_(set->npz, &ref->check, crc, err));
	ref->check.pending = false;
	return 0;
}

/*
 * Compares act with ref into the row. pre: their comparison already made (by
 * content pairing), or NULL. verified: whether ref's .npz member was already
 * checked (by an earlier row), set once it is; or NULL.
 */
static int compare_pair(etc_accuracy_row *row, const item *act, item *ref,
                        const etc_reference_set *set, const etc_accuracy_options *o,
                        const etc_metrics *pre, bool *verified, etc_error *err)
{
	if (verified && *verified)
		ref->check.pending = false;
	row->dtype = act->scalar ? "scalar" : etc_scalar_type_name(act->t.scalar_type);
	row->reference_dtype = ref->scalar ? "scalar" : etc_scalar_type_name(ref->t.scalar_type);
	shape_str(act, row->shape, sizeof row->shape);
	shape_str(ref, row->reference_shape, sizeof row->reference_shape);
	if (!act->has_data) {
		row->status = ETC_ROW_NO_DATA;
		snprintf(row->reason, sizeof row->reason,
		         etc_scalar_type_valid(act->t.scalar_type)
		             ? "the output has no data (no --debug_buffer, or offset -1)"
		             : "the output's scalar type is not supported");
		return 0;
	}
	if (act->t.numel != ref->t.numel ||
	    (!act->scalar && !ref->scalar && !etc_shape_equal_(&act->t, &ref->t))) {
		row->status = ETC_ROW_SHAPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "shape %.60s against reference %.60s",
		         row->shape, row->reference_shape);
		return 0;
	}
	/* numbers (Int, Double, Python scalars) compare numerically; tensors must
	 * agree on float versus integer */
	if (!act->scalar && !ref->scalar &&
	    etc_scalar_type_is_float_(act->t.scalar_type) !=
	        etc_scalar_type_is_float_(ref->t.scalar_type)) {
		row->status = ETC_ROW_DTYPE_MISMATCH;
		snprintf(row->reason, sizeof row->reason, "dtype %s against reference %s",
		         row->dtype, row->reference_dtype);
		return 0;
	}
	etc_values va, vr;
	item_values(act, &va);
	item_values(ref, &vr);
	if (pre) {
		row->metrics = *pre;
		ETC_TRY(verify_ref(set, ref, err)); /* its own pass, once per member */
	} else if (ref->check.pending) {
		/* the data is verified in the comparison's own pass when it can be */
		uint32_t crc = ref->check.crc;
		bool done;
		ETC_TRY(etc_metrics_compare_crc_(&vr, &va, &row->metrics, &crc, &done, err));
		if (done) {
			ETC_TRY(etc_npz_crc_end_(set->npz, &ref->check, crc, err));
			ref->check.pending = false;
		}
		ETC_TRY(verify_ref(set, ref, err));
	} else {
		ETC_TRY(etc_metrics_compare(&vr, &va, &row->metrics, err));
	}
	if (verified)
		*verified = true;
	row->has_metrics = true;
	judge(row, o);
	return 0;
}

/* --- public ------------------------------------------------------------------- */

void etc_accuracy_options_init(etc_accuracy_options *o)
{
	o->block = "Execute";
	o->method = "forward";
	o->pair_by = ETC_PAIR_AUTO;
	o->min_snr = o->max_mse = o->min_cosine = o->max_abs = NAN;
	o->progress = NULL;
	o->progress_ctx = NULL;
	o->pair_min_margin_db = 1.0;
	o->pair_floor_db = 0.0;
	o->strict_pairing = false;
}

const char *etc_row_status_str(int s)
{
	static const char *const names[] = {"pass",           "FAIL",           "missing reference",
	                                    "missing output", "shape mismatch", "dtype mismatch",
	                                    "no data"};
	return s >= 0 && s <= ETC_ROW_NO_DATA ? names[s] : "?";
}

typedef struct run_ref {
	uint32_t block, run, etdump_run;
	int32_t bidx;
} run_ref;

static int cmp_run_ref(const void *a, const void *b)
{
	uint32_t x = ((const run_ref *)a)->etdump_run, y = ((const run_ref *)b)->etdump_run;
	return (x > y) - (x < y);
}

#define MAX_OUTPUTS 4096

/* --- pairing by content ------------------------------------------------------ */

/* The items of every run and reference set, one after the other. */
typedef struct itemlist {
	item *v;
	size_t n, cap;
} itemlist;

static int itemlist_push(itemlist *l, const item *its, size_t n, etc_error *err)
{
	if (l->n + n > l->cap) {
		size_t cap = l->cap ? l->cap : 64;
		while (cap < l->n + n)
			cap *= 2;
		item *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	if (n) /* a run without outputs: `its` may be NULL */
		memcpy(l->v + l->n, its, n * sizeof *its);
	l->n += n;
	return 0;
}

/* Appends formatted text to the note, as far as it fits. */
static void note_add(char *note, size_t cap, const char *fmt, ...)
{
	size_t at = strlen(note);
	if (at + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(note + at, cap - at, fmt, ap);
	va_end(ap);
}

/*
 * What content pairing hands to the comparisons of the runs: each run
 * output's comparison with the same output of its reference, made by the
 * pairing (etc_pair_infer_compare_: for large outputs the comparison is the
 * confirmation of the choice), and which reference members were checked.
 */
typedef struct paired {
	etc_metrics *metrics; /* run i's output j at run_at[i] + j */
	bool *compared;       /* ... true when its comparison is there */
	size_t *run_at;       /* per run, then the count */
	size_t *ref_at; /* per reference set, its first output in `verified`, then the count */
	bool *verified; /* the reference output's .npz member was checked */
} paired;

static void paired_free(paired *pd)
{
	free(pd->metrics), free(pd->compared), free(pd->run_at), free(pd->ref_at);
	free(pd->verified);
	memset(pd, 0, sizeof *pd);
}

/* Run i's output j's comparison with reference `ref`'s, if the pairing made it. */
static const etc_metrics *paired_metrics(const paired *pd, const etc_accuracy *a, size_t i,
                                         long ref, size_t j)
{
	if (!pd->metrics || ref < 0 || a->pairing[i].reference != ref ||
	    pd->run_at[i] + j >= pd->run_at[i + 1] || !pd->compared[pd->run_at[i] + j])
		return NULL;
	return &pd->metrics[pd->run_at[i] + j];
}

/* Whether reference `ref`'s output j was checked: NULL when not tracked. */
static bool *paired_verified(const paired *pd, size_t nrefs, long ref, size_t j)
{
	if (!pd->verified || ref < 0 || (size_t)ref >= nrefs ||
	    pd->ref_at[ref] + j >= pd->ref_at[ref + 1])
		return NULL;
	return &pd->verified[pd->ref_at[ref] + j];
}

/*
 * Infers each run's reference set from its outputs (analysis/pairing.h):
 * fills a->pairing (one per run, in `runs` order), a->scores and *pd.
 */
static int content_pair(etc_accuracy *a, const etc_inspector *insp, const run_ref *runs,
                        size_t nruns, const refs *r, const etc_accuracy_options *opt, item *tmp,
                        paired *pd, etc_error *err)
{
	size_t m = r->count, nsets = nruns + m;
	itemlist l = {0};
	size_t *start = malloc((nsets + 1) * sizeof *start);
	etc_values *vals = NULL;
	etc_pair_raw *raw = NULL;
	etc_pair_crc *crc = NULL; /* the references' .npz checks, folded into the comparisons */
	char **shapes = NULL;     /* whole shapes: pairing compares them in full */
	const char **sp = NULL;
	etc_pair_set *ps = malloc((nsets ? nsets : 1) * sizeof *ps);
	etc_pair_choice *choice = malloc((nruns ? nruns : 1) * sizeof *choice);
	a->pairing = calloc(nruns ? nruns : 1, sizeof *a->pairing);
	a->scores = malloc((nruns * m + 1) * sizeof *a->scores);
	int rc = 0;
	if (!start || !ps || !choice || !a->pairing || !a->scores) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nsets && rc == 0; i++) {
		size_t n = 0;
		start[i] = l.n;
		if (i < nruns)
			rc = run_items(insp, etc_inspector_block(insp, runs[i].block), runs[i].run,
			               tmp, MAX_OUTPUTS, &n, err);
		else
			rc = refs_get(r, i - nruns, tmp, MAX_OUTPUTS, &n, err);
		/* the candidates' .npz members are verified later, in the comparison's
		 * own pass (or after it for the sets no run is paired with): nothing
		 * is reported before every one is checked */
		if (rc == 0)
			rc = itemlist_push(&l, tmp, n, err);
	}
	if (rc < 0)
		goto done;
	start[nsets] = l.n;
	vals = calloc(l.n + 1, sizeof *vals);
	raw = calloc(l.n + 1, sizeof *raw);
	crc = calloc(l.n + 1, sizeof *crc);
	shapes = calloc(l.n + 1, sizeof *shapes);
	sp = malloc((l.n + 1) * sizeof *sp);
	if (!vals || !raw || !crc || !shapes || !sp) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t j = 0; j < l.n; j++) {
		const item *it = &l.v[j];
		if (it->has_data)
			item_values(it, &vals[j]);
		if (it->has_data && !it->scalar && !it->pt && it->t.data) {
			raw[j].data = it->t.data; /* dense: identical runs found by memcmp */
			raw[j].size = (size_t)it->t.nbytes;
		} else if (!it->has_data)
			vals[j].count = it->t.numel; /* no data: sized, not scored */
		char full[ETC_SHAPE_FULL];
		size_t flen = shape_full(&it->t, full, sizeof full);
		shapes[j] = malloc(flen + 1);
		if (!shapes[j]) {
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			goto done;
		}
		memcpy(shapes[j], full, flen + 1);
		/* numbers and 0-dim tensors compare by count, as compare_pair does */
		sp[j] = it->scalar ? NULL : shapes[j];
	}
	for (size_t i = 0; i < nsets; i++) {
		ps[i].outputs = vals + start[i];
		ps[i].raw = raw + start[i];
		ps[i].shapes = sp + start[i];
		ps[i].count = start[i + 1] - start[i];
		ps[i].crc = i < nruns ? NULL : crc + start[i];
	}
	for (size_t j = start[nruns]; j < l.n; j++)
		crc[j] = (etc_pair_crc){l.v[j].check.crc, l.v[j].check.pending, false};
	size_t nout = start[nruns], nref_out = l.n - nout;
	pd->metrics = malloc((nout + 1) * sizeof *pd->metrics);
	pd->compared = calloc(nout + 1, sizeof *pd->compared);
	pd->run_at = malloc((nruns + 1) * sizeof *pd->run_at);
	pd->ref_at = malloc((m + 1) * sizeof *pd->ref_at);
	pd->verified = calloc(nref_out + 1, sizeof *pd->verified);
	if (!pd->metrics || !pd->compared || !pd->run_at || !pd->ref_at || !pd->verified) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	memcpy(pd->run_at, start, (nruns + 1) * sizeof *start);
	for (size_t k = 0; k <= m; k++)
		pd->ref_at[k] = start[nruns + k] - nout;
	etc_pair_options po;
	etc_pair_options_init_(&po);
	po.min_margin_db = opt->pair_min_margin_db;
	po.floor_db = opt->pair_floor_db;
	if ((rc = etc_pair_infer_compare_(ps, nruns, ps + nruns, m, &po, a->scores, choice,
	                                  pd->metrics, pd->compared, err)) < 0)
		goto done;
	/* the members the comparisons read are checked now, before any report */
	for (size_t j = nout; j < l.n && rc == 0; j++)
		if (crc[j].done) {
			rc = etc_npz_crc_end_(r->set->npz, &l.v[j].check, crc[j].crc, err);
			pd->verified[j - nout] = rc == 0;
		}
	if (rc < 0)
		goto done;
	for (size_t i = 0; i < nruns; i++) {
		etc_accuracy_pairing *p = &a->pairing[i];
		const etc_pair_choice *c = &choice[i];
		p->block = runs[i].block;
		p->run = runs[i].run;
		p->etdump_run = runs[i].etdump_run;
		p->reference = (int32_t)c->best;
		p->second = (int32_t)c->second;
		p->snr_db = c->best >= 0 ? a->scores[i * m + (size_t)c->best].snr_db : NAN;
		p->cosine = c->best >= 0 ? a->scores[i * m + (size_t)c->best].cosine : NAN;
		p->second_snr_db =
		    c->second >= 0 ? a->scores[i * m + (size_t)c->second].snr_db : NAN;
		p->margin_db = c->margin_db;
		p->ambiguous = c->ambiguous;
		p->candidates = (uint32_t)c->usable;
		p->partial = c->partial;
		if (c->best < 0) /* nothing agrees in size: as the order rule would */
			p->reference = m == 1 ? 0 : i < m ? (int32_t)i : -1;
	}
	a->npairing = nruns;
	a->nrefs = m;
done:
	for (size_t j = 0; shapes && j < l.n; j++)
		free(shapes[j]);
	free(l.v), free(start), free(vals), free(raw), free(crc), free(shapes), free(sp), free(ps);
	free(choice);
	return rc;
}

/* Why run i's content pairing is ambiguous, for its note and strict rows. */
static void ambiguity_text(const etc_accuracy_pairing *p, double min_margin, char *buf, size_t cap)
{
	if (p->reference < 0 || (p->partial && isnan(p->snr_db)))
		snprintf(buf, cap,
		         "no reference set has an output of the run's sizes: paired by order");
	else if (isnan(p->snr_db))
		snprintf(buf, cap,
		         "nothing to score (the outputs have no data, or NaN or inf values)");
	else if (p->second >= 0 && isnan(p->second_snr_db))
		snprintf(
		    buf, cap,
		    "reference %d could not be scored (NaN or inf values): the best scored, %d, "
		    "has SNR %.4g dB",
		    p->second, p->reference, p->snr_db);
	else if (p->second >= 0 && p->margin_db < min_margin)
		snprintf(buf, cap,
		         "references %d and %d match within %.3g dB (SNR %.4g and %.4g dB)",
		         p->reference, p->second, p->margin_db, p->snr_db, p->second_snr_db);
	else
		snprintf(buf, cap, "no reference is close: the best, %d, has SNR %.4g dB",
		         p->reference, p->snr_db);
}

/* --strict-pairing: the compared rows of an ambiguous run fail, saying why. */
static void strict_fail(etc_accuracy *a, size_t first, const etc_accuracy_pairing *p,
                        const etc_accuracy_options *opt)
{
	char why[160];
	ambiguity_text(p, opt->pair_min_margin_db, why, sizeof why);
	for (size_t j = first; j < a->count; j++) {
		etc_accuracy_row *row = &a->rows[j];
		if (row->status != ETC_ROW_PASS && row->status != ETC_ROW_FAIL)
			continue;
		char text[400];
		if (row->status == ETC_ROW_FAIL)
			snprintf(text, sizeof text, "ambiguous pairing: %s; %s", why, row->reason);
		else
			snprintf(text, sizeof text, "ambiguous pairing: %s", why);
		snprintf(row->reason, sizeof row->reason, "%.159s", text);
		row->status = ETC_ROW_FAIL;
	}
}

/* The note of content pairing: why, the references chosen, the margins. */
static void content_note(etc_accuracy *a, const char *why, size_t nruns, size_t m,
                         const etc_accuracy_options *opt)
{
	char *note = a->note;
	size_t cap = sizeof a->note;
	snprintf(note, cap,
	         "pairing by content %s: each run of block \"%s\" was paired with the reference "
	         "its outputs match best (highest SNR over its outputs); %zu run%s, %zu reference "
	         "set%s; references by run:",
	         why, opt->block, nruns, nruns == 1 ? "" : "s", m, m == 1 ? "" : "s");
	for (size_t i = 0; i < nruns && i < 16; i++)
		if (a->pairing[i].reference >= 0)
			note_add(note, cap, "%s %d", i ? "," : "", a->pairing[i].reference);
		else
			note_add(note, cap, "%s -", i ? "," : "");
	if (nruns > 16)
		note_add(note, cap, ", ...");
	long low = -1;
	size_t amb = 0;
	for (size_t i = 0; i < nruns; i++) {
		const etc_accuracy_pairing *p = &a->pairing[i];
		amb += p->ambiguous;
		/* a run with a runner-up says more than one without */
		if (p->reference >= 0 && !p->ambiguous &&
		    (low < 0 || (p->second >= 0 && a->pairing[low].second < 0) ||
		     ((p->second >= 0) == (a->pairing[low].second >= 0) &&
		      p->margin_db < a->pairing[low].margin_db)))
			low = (long)i;
	}
	if (low >= 0 && a->pairing[low].second < 0)
		note_add(note, cap, "; one candidate per run");
	else if (low >= 0)
		note_add(note, cap, "; smallest margin %.4g dB (run %u: reference %d over %d)",
		         a->pairing[low].margin_db, a->pairing[low].run, a->pairing[low].reference,
		         a->pairing[low].second);
	if (amb) {
		note_add(note, cap, "; AMBIGUOUS (%s):",
		         opt->strict_pairing ? "failing, --strict-pairing"
		                             : "gated on the best; --strict-pairing fails");
		size_t shown = 0;
		for (size_t i = 0; i < nruns && shown < 3; i++) {
			if (!a->pairing[i].ambiguous)
				continue;
			char why_amb[160];
			ambiguity_text(&a->pairing[i], opt->pair_min_margin_db, why_amb,
			               sizeof why_amb);
			note_add(note, cap, "%s run %u: %s", shown++ ? ";" : "", a->pairing[i].run,
			         why_amb);
		}
		if (amb > shown)
			note_add(note, cap, "; and %zu more", amb - shown);
	}
	size_t partial = 0;
	for (size_t i = 0; i < nruns; i++)
		partial += a->pairing[i].partial;
	if (partial)
		note_add(
		    note, cap,
		    "; %zu run%s had no reference set with all of its outputs' sizes: paired on "
		    "the outputs that agree",
		    partial, partial == 1 ? "" : "s");
	/* references no run matched are not failures: the runs used other inputs */
	size_t unused = 0;
	for (size_t k = 0; k < m; k++) {
		bool used = false;
		for (size_t i = 0; i < nruns && !used; i++)
			used = a->pairing[i].reference == (int32_t)k;
		if (!used)
			note_add(note, cap, "%s %zu", unused++ ? "," : "; matched by no run:", k);
	}
}

/*
 * Is block `b` the one `want` names? "Execute" is every block of that name;
 * "Execute#2" is block 2 alone, the name the reports give a block whose
 * name another block shares.
 */
static bool block_chosen(const etc_inspector *insp, size_t b, const char *want)
{
	const etc_event_block *blk = etc_inspector_block(insp, b);
	size_t n = strlen(want);
	const char *hash = strrchr(want, '#');
	if (hash && hash[1]) {
		char *end;
		unsigned long idx = strtoul(hash + 1, &end, 10);
		if (!*end && hash[1] >= '0' && hash[1] <= '9') {
			size_t k = (size_t)(hash - want);
			return idx == b && blk->name.len == k && !memcmp(blk->name.ptr, want, k);
		}
	}
	return blk->name.len == n && !memcmp(blk->name.ptr, want, n);
}

int etc_accuracy_run(etc_accuracy **out, const etc_inspector *insp, const etc_reference_set *set,
                     const etc_accuracy_options *opt, etc_error *err)
{
	if (out)
		*out = NULL;
	etc_accuracy_options o;
	if (opt)
		o = *opt;
	else
		etc_accuracy_options_init(&o);
	/* NULL block and method are their defaults, as the header gives them */
	if (!o.block)
		o.block = "Execute";
	if (!o.method)
		o.method = "forward";
	opt = &o;
	if (!out || !insp || !set ||
	    (set->torchsave != NULL) + (set->npz != NULL) + (set->bundled != NULL) != 1)
		return etc_fail(
		    err, ETC_ERR_USAGE, NULL, -1,
		    "etc_accuracy_run: needs an inspector and exactly one reference source");
	paired pd;
	memset(&pd, 0, sizeof pd);
	refs r;
	ETC_TRY(refs_open(&r, set, opt->method, err));

	/* the runs of the chosen block, in ETDump order */
	size_t nruns = 0;
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++)
		if (block_chosen(insp, b, opt->block))
			nruns += etc_inspector_block(insp, b)->run_count;
	run_ref *runs = calloc(nruns ? nruns : 1, sizeof *runs);
	item *acts = malloc(MAX_OUTPUTS * sizeof *acts),
	     *ref_items = malloc(MAX_OUTPUTS * sizeof *ref_items);
	etc_accuracy *a = calloc(1, sizeof *a);
	int rc = 0;
	if (a)
		a->tap_from = -1;
	if (!runs || !acts || !ref_items || !a) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	size_t k = 0;
	bool any_index = false;
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (!block_chosen(insp, b, opt->block))
			continue;
		for (uint32_t i = 0; i < blk->run_count; i++) {
			runs[k].block = (uint32_t)b;
			runs[k].run = i;
			runs[k].etdump_run = blk->runs[i];
			runs[k++].bidx = blk->bundled_input_index;
		}
		any_index |= blk->bundled_input_index >= 0;
	}
	qsort(runs, nruns, sizeof *runs, cmp_run_ref);
	if (nruns == 0) {
		rc = etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		              "the ETDump has no run of block \"%s\" to compare", opt->block);
		goto done;
	}
	a->opt = *opt;
	a->nrefs = r.count;
	describe_source(a, set, &r);
	a->rule = opt->pair_by;
	if (a->rule == ETC_PAIR_AUTO)
		a->rule = any_index ? ETC_PAIR_INDEX : ETC_PAIR_CONTENT;
	const char *why = opt->pair_by != ETC_PAIR_AUTO ? "(--pair-by)"
	                  : any_index                   ? "(runs carry a bundled_input_index)"
	                                                : "(runs carry no bundled_input_index)";
	if (a->rule == ETC_PAIR_CONTENT) {
		if ((rc = content_pair(a, insp, runs, nruns, &r, opt, acts, &pd, err)) < 0)
			goto done;
		content_note(a,
		             opt->pair_by != ETC_PAIR_AUTO
		                 ? "(--pair-by)"
		                 : "(the runs carry no bundled_input_index: the ExecuTorch runtime "
		                   "does not write it)",
		             nruns, r.count, opt);
	} else if (a->rule == ETC_PAIR_ALL)
		snprintf(a->note, sizeof a->note,
		         "%zu run%s of block \"%s\" and %zu reference output set%s: every run is "
		         "compared with reference 0 %s",
		         nruns, nruns == 1 ? "" : "s", opt->block, r.count, r.count == 1 ? "" : "s",
		         why);
	else if (a->rule == ETC_PAIR_ORDER)
		snprintf(a->note, sizeof a->note,
		         "pairing by order %s: run k of block \"%s\" (ETDump order) with reference "
		         "k; %zu run%s, %zu reference set%s",
		         why, opt->block, nruns, nruns == 1 ? "" : "s", r.count,
		         r.count == 1 ? "" : "s");
	else
		snprintf(
		    a->note, sizeof a->note,
		    "pairing by bundled_input_index %s: block \"%s\" runs with reference[index]",
		    why, opt->block);

	/* Bytes to compare, for progress: every run output counted twice (both sides). */
	uint64_t total = 0, done_bytes = 0;
	for (size_t i = 0; opt->progress && i < nruns && rc == 0; i++) {
		size_t na;
		rc = run_items(insp, etc_inspector_block(insp, runs[i].block), runs[i].run, acts,
		               MAX_OUTPUTS, &na, err);
		for (size_t j = 0; rc == 0 && j < na; j++)
			total += 2 * acts[j].t.nbytes;
	}
	bool *used = calloc(r.count ? r.count : 1, sizeof *used);
	if (!used) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nruns && rc == 0; i++) {
		const etc_event_block *blk = etc_inspector_block(insp, runs[i].block);
		long ref = a->rule == ETC_PAIR_ORDER     ? (long)i
		           : a->rule == ETC_PAIR_ALL     ? 0
		           : a->rule == ETC_PAIR_CONTENT ? (long)a->pairing[i].reference
		                                         : (long)runs[i].bidx;
		size_t first_row = a->count;
		if (ref >= 0 && (size_t)ref < r.count)
			used[ref] = true;
		size_t na, nr = 0;
		if ((rc = run_items(insp, blk, runs[i].run, acts, MAX_OUTPUTS, &na, err)) < 0)
			break;
		bool ref_ok = ref >= 0 && (size_t)ref < r.count;
		if (ref_ok &&
		    (rc = refs_get(&r, (size_t)ref, ref_items, MAX_OUTPUTS, &nr, err)) < 0)
			break;
		if (ref_ok && set->bundled &&
		    (rc = bundled_agree(&r, (size_t)ref, acts, na, ref_items, nr, runs[i].run,
		                        opt->block, err)) < 0)
			break;
		size_t n = na > nr ? na : nr;
		for (size_t j = 0; j < n && rc == 0; j++) {
			etc_accuracy_row *row = NULL;
			if ((rc = push_row(a, &row, err)) < 0)
				break;
			row->block = runs[i].block;
			row->run = runs[i].run;
			row->etdump_run = runs[i].etdump_run;
			row->reference = ref_ok ? (int32_t)ref : -1;
			row->output = (uint32_t)j;
			if (j >= nr) {
				row->status = ETC_ROW_MISSING_REFERENCE;
				shape_str(&acts[j], row->shape, sizeof row->shape);
				row->dtype = etc_scalar_type_name(acts[j].t.scalar_type);
				if (!ref_ok && a->rule == ETC_PAIR_CONTENT)
					snprintf(
					    row->reason, sizeof row->reason,
					    "no reference set agrees in size with an output of "
					    "the run, and no set to pair by order (%zu sets)",
					    r.count);
				else if (!ref_ok)
					snprintf(row->reason, sizeof row->reason,
					         ref < 0 ? "the run has no bundled_input_index"
					                 : "no reference set %ld (there are %zu)",
					         ref, r.count);
				else
					snprintf(row->reason, sizeof row->reason,
					         "reference %ld has %zu outputs, the run %zu", ref,
					         nr, na);
			} else if (j >= na) {
				row->status = ETC_ROW_MISSING_OUTPUT;
				shape_str(&ref_items[j], row->reference_shape,
				          sizeof row->reference_shape);
				row->reference_dtype =
				    etc_scalar_type_name(ref_items[j].t.scalar_type);
				snprintf(row->reason, sizeof row->reason,
				         "the run has %zu outputs, reference %ld has %zu", na, ref,
				         nr);
			} else {
				a->act[a->count - 1] = acts[j];
				a->ref[a->count - 1] = ref_items[j];
				rc = compare_pair(row, &a->act[a->count - 1], &a->ref[a->count - 1],
				                  r.set, opt, paired_metrics(&pd, a, i, ref, j),
				                  paired_verified(&pd, r.count, ref, j), err);
				ref_items[j].check = a->ref[a->count - 1].check;
				done_bytes += 2 * acts[j].t.nbytes;
				if (opt->progress)
					opt->progress(opt->progress_ctx, done_bytes, total);
			}
		}
		/* references not compared (unpaired, other shape) are verified too */
		for (size_t j = 0; j < nr && rc == 0; j++)
			rc = verify_ref(r.set, &ref_items[j], err);
		if (a->rule == ETC_PAIR_CONTENT && a->pairing[i].ambiguous && opt->strict_pairing)
			strict_fail(a, first_row, &a->pairing[i], opt);
	}
	/* every candidate's score is reported: the .npz members of the sets no
	 * run was paired with are verified too (the others were, as compared) */
	for (size_t k = 0; used && k < r.count && rc == 0 && a->rule == ETC_PAIR_CONTENT; k++) {
		size_t nr = 0;
		if (used[k] || (rc = refs_get(&r, k, ref_items, MAX_OUTPUTS, &nr, err)) < 0)
			continue;
		for (size_t j = 0; j < nr && rc == 0; j++)
			rc = verify_ref(r.set, &ref_items[j], err);
	}
	/* references no run was paired with are unpaired items too (but not under
	 * content pairing, where the runs simply used other inputs, nor under
	 * "all", which compares every run with reference 0 alone) */
	bool one_block = strchr(opt->block, '#') != NULL; /* "Execute#2": its runs alone */
	for (size_t k = 0; used && k < r.count && rc == 0; k++) {
		if (used[k] || a->rule == ETC_PAIR_CONTENT || a->rule == ETC_PAIR_ALL || one_block)
			continue;
		etc_accuracy_row *row = NULL;
		if ((rc = push_row(a, &row, err)) < 0)
			break;
		row->block = runs[0].block;
		row->reference = (int32_t)k;
		row->etdump_run = UINT32_MAX;
		row->status = ETC_ROW_MISSING_OUTPUT;
		if (a->rule == ETC_PAIR_INDEX)
			snprintf(
			    row->reason, sizeof row->reason,
			    "reference %zu: no run of block \"%.40s\" has bundled_input_index %zu",
			    k, opt->block, k);
		else
			snprintf(row->reason, sizeof row->reason,
			         "reference %zu: no run %zu of block \"%.40s\" (it has %zu)", k, k,
			         opt->block, nruns);
	}
	free(used);
done:
	paired_free(&pd);
	refs_close(&r);
	free(runs);
	free(acts);
	free(ref_items);
	if (rc < 0) {
		etc_accuracy_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

const char *etc_accuracy_row_shape_full(const etc_accuracy *a, size_t i, bool reference, char *buf,
                                        size_t cap)
{
	if (!cap)
		return buf;
	buf[0] = '\0';
	if (!a || i >= a->count)
		return buf;
	const item *it = reference ? &a->ref[i] : &a->act[i];
	const char *shown = reference ? a->rows[i].reference_shape : a->rows[i].shape;
	/* only an elided text is made again (rows without a side keep theirs) */
	if (it->scalar || !strstr(shown, "\xe2\x80\xa6 "))
		snprintf(buf, cap, "%s", shown);
	else
		etc_shape_str_(&it->t, buf, cap);
	return buf;
}

void etc_accuracy_free(etc_accuracy *a)
{
	if (!a)
		return;
	free(a->rows);
	free(a->act);
	free(a->ref);
	free(a->pairing);
	free(a->scores);
	free(a);
}

size_t etc_accuracy_row_count(const etc_accuracy *a)
{
	return a->count;
}

const etc_accuracy_row *etc_accuracy_row_at(const etc_accuracy *a, size_t i)
{
	return i < a->count ? &a->rows[i] : NULL;
}

int etc_accuracy_row_values(const etc_accuracy *a, size_t i, etc_values *actual,
                            etc_values *reference)
{
	if (i >= a->count || !a->rows[i].has_metrics)
		return ETC_ERR_USAGE;
	item_values(&a->act[i], actual);
	item_values(&a->ref[i], reference);
	return 0;
}

const etc_tensor *etc_accuracy_row_tensor(const etc_accuracy *a, size_t i)
{
	return i < a->count && a->rows[i].has_metrics && !a->act[i].scalar ? &a->act[i].t : NULL;
}

int etc_accuracy_pair_rule(const etc_accuracy *a)
{
	return a->rule;
}

const char *etc_accuracy_pair_note(const etc_accuracy *a)
{
	return a->note;
}

size_t etc_accuracy_pairing_count(const etc_accuracy *a)
{
	return a->npairing;
}

const etc_accuracy_pairing *etc_accuracy_pairing_at(const etc_accuracy *a, size_t i)
{
	return i < a->npairing ? &a->pairing[i] : NULL;
}

bool etc_accuracy_pairing_score(const etc_accuracy *a, size_t i, size_t k, double *snr_db,
                                double *cosine)
{
	if (i >= a->npairing || k >= a->nrefs || !a->scores[i * a->nrefs + k].usable)
		return false;
	if (snr_db)
		*snr_db = a->scores[i * a->nrefs + k].snr_db;
	if (cosine)
		*cosine = a->scores[i * a->nrefs + k].cosine;
	return true;
}

bool etc_accuracy_pairing_score_estimated(const etc_accuracy *a, size_t i, size_t k,
                                          double *bound_db)
{
	if (i >= a->npairing || k >= a->nrefs || !a->scores[i * a->nrefs + k].usable ||
	    !a->scores[i * a->nrefs + k].estimated)
		return false;
	if (bound_db)
		*bound_db = a->scores[i * a->nrefs + k].bound_db;
	return true;
}

size_t etc_accuracy_reference_count(const etc_accuracy *a)
{
	return a->nrefs;
}

const char *etc_accuracy_reference_source(const etc_accuracy *a)
{
	return a->source;
}

int etc_accuracy_row_sides(const etc_accuracy *a, size_t i, etc_values *actual,
                           etc_values *reference)
{
	if (i >= a->count || !a->act[i].has_data ||
	    (!a->ref[i].scalar && !a->ref[i].pt && !a->ref[i].t.data))
		return ETC_ERR_USAGE;
	item_values(&a->act[i], actual);
	item_values(&a->ref[i], reference);
	return 0;
}

void etc_accuracy_mark_taps(etc_accuracy *a, int64_t from)
{
	a->tap_from = from < 0 ? -1 : from;
}

bool etc_accuracy_row_is_tap(const etc_accuracy *a, size_t i)
{
	return i < a->count && a->tap_from >= 0 && a->rows[i].output >= (uint64_t)a->tap_from;
}

size_t etc_accuracy_failures(const etc_accuracy *a)
{
	size_t n = 0;
	for (size_t i = 0; i < a->count; i++)
		n += a->rows[i].status != ETC_ROW_PASS && !etc_accuracy_row_is_tap(a, i);
	return n;
}

long etc_accuracy_worst(const etc_accuracy *a)
{
	long worst = -1, first_fail = -1;
	for (size_t i = 0; i < a->count; i++) {
		const etc_accuracy_row *r = &a->rows[i];
		if (etc_accuracy_row_is_tap(a, i))
			continue;
		if (r->status != ETC_ROW_PASS && first_fail < 0)
			first_fail = (long)i;
		/* an undefined SNR (NaN) ranks neither better nor worse */
		if (r->has_metrics && !r->metrics.exact && !isnan(r->metrics.snr_db) &&
		    (worst < 0 || r->metrics.snr_db < a->rows[worst].metrics.snr_db))
			worst = (long)i;
	}
	if (first_fail >= 0 && (worst < 0 || a->rows[worst].status == ETC_ROW_PASS))
		return first_fail;
	return worst;
}

const etc_accuracy_options *etc_accuracy_options_get(const etc_accuracy *acc)
{
	return &acc->opt;
}

bool etc_accuracy_gated(const etc_accuracy *acc)
{
	const etc_accuracy_options *o = &acc->opt;
	return etc_gate_set_(o->min_snr, o->max_mse, o->min_cosine, o->max_abs);
}
