/*
 * report_etrecord.c - what the ETRecord holds, for people: the Edge graph
 * (like get_exported_program) and the reference outputs and representative
 * inputs (every leaf of the saved object with its path).
 */
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>

/* A name from the ETRecord, escaped for the terminal. */
static void put(FILE *f, const char *s)
{
	etc_text_fput(f, s, strlen(s));
}

static void graph_lines(FILE *f, const etc_graph_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const etc_graph_node *nd = &nodes[i];
		fprintf(f, "  %4zu  ", i);
		put(f, nd->name);
		/* a tuple or list: the names its users' arguments give its items */
		bool items = nd->output_count > 1 ||
		             (nd->output_count == 1 && strcmp(nd->outputs[0], nd->name) != 0);
		for (uint32_t k = 0; items && k < nd->output_count; k++) {
			fputs(k ? ", " : " (", f);
			put(f, nd->outputs[k]);
		}
		if (items)
			fputc(')', f);
		fputs(" = ", f);
		put(f, nd->op);
		fputc('(', f);
		put(f, nd->inputs);
		fputc(')', f);
		if (nd->debug_handle >= 0)
			fprintf(f, "  debug_handle=%lld", (long long)nd->debug_handle);
		if (*nd->source_line) {
			fputs("  ", f);
			put(f, nd->source_line);
		}
		if (nd->module_depth) {
			fputs("  [", f);
			put(f, nd->modules[nd->module_depth - 1].path);
			fputc(']', f);
		}
		fputc('\n', f);
	}
}

int etc_report_graph(FILE *f, etc_etrecord *rec, const char *method, etc_error *err)
{
	int m = method ? etc_etrecord_method_index(rec, method) : etc_etrecord_default_method(rec);
	if (m < 0 && method) {
		/* a graph_map program, e.g. "aten_dialect_output/forward" */
		for (size_t g = 0; g < etc_etrecord_graph_count(rec); g++) {
			if (strcmp(etc_etrecord_graph_name(rec, g), method) != 0)
				continue;
			const etc_graph_node *nodes;
			size_t n;
			ETC_TRY(etc_etrecord_graph_nodes(rec, method, &nodes, &n, err));
			fputs("Graph \"", f);
			put(f, method);
			fprintf(f, "\" (%zu nodes)\n", n);
			graph_lines(f, nodes, n);
			return ferror(f)
			           ? etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the graph")
			           : 0;
		}
	}
	if (m < 0 || !etc_etrecord_has_program(rec, (size_t)m)) {
		char list[512] = "";
		size_t l = 0;
		for (size_t i = 0; i < etc_etrecord_method_count(rec) && l < sizeof list; i++)
			if (etc_etrecord_has_program(rec, i))
				l += (size_t)snprintf(list + l, sizeof list - l, "%s%s",
				                      l ? ", " : "", etc_etrecord_method(rec, i));
		for (size_t g = 0; g < etc_etrecord_graph_count(rec) && l < sizeof list; g++)
			l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "",
			                      etc_etrecord_graph_name(rec, g));
		/* a typo: the closest name, as --module does */
		const char *best = NULL;
		size_t best_d = SIZE_MAX, want = method ? strlen(method) : 0;
		size_t total = etc_etrecord_method_count(rec) + etc_etrecord_graph_count(rec);
		for (size_t i = 0; method && i < total; i++) {
			size_t nm = etc_etrecord_method_count(rec);
			if (i < nm && !etc_etrecord_has_program(rec, i))
				continue;
			const char *name = i < nm ? etc_etrecord_method(rec, i)
			                          : etc_etrecord_graph_name(rec, i - nm);
			size_t d = etc_edit_distance(method, name, ETC_EDIT_FOLD_CASE);
			if (d < best_d && d <= (want > 6 ? want / 3 : 2))
				best = name, best_d = d;
		}
		return etc_fail(
		    err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		    "the ETRecord has no Edge program or graph \"%s\" (%s%s%sit has: %s)",
		    method ? method : "forward", best ? "did you mean " : "", best ? best : "",
		    best ? "? " : "", *list ? list : "none");
	}
	size_t n = etc_etrecord_node_count(rec, (size_t)m);
	fputs("Edge program \"", f);
	put(f, etc_etrecord_method(rec, (size_t)m));
	fprintf(f, "\" (%zu nodes)%s\n", n,
	        etc_etrecord_is_legacy(rec) ? ", single-program ETRecord layout" : "");
	graph_lines(f, n ? etc_etrecord_node(rec, (size_t)m, 0) : NULL, n);
	size_t g = etc_etrecord_graph_count(rec);
	if (g) {
		fprintf(f, "Other graphs (graph_map):");
		for (size_t i = 0; i < g; i++)
			fputc(' ', f), put(f, etc_etrecord_graph_name(rec, i));
		fputc('\n', f);
	}
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the graph");
	return 0;
}

/* Byte address of flat element i of a (possibly strided) torch tensor. */
static const uint8_t *element_at(const etc_pytensor *pt, uint64_t i)
{
	const etc_tensor *t = &pt->tensor;
	int64_t off = pt->storage_offset;
	for (uint32_t k = t->ndim; k-- > 0;) {
		int64_t size = etc_tensor_size(t, k);
		off += (int64_t)(i % (uint64_t)size) * etc_tensor_stride(t, k);
		i /= (uint64_t)size;
	}
	return pt->storage + (size_t)off * etc_scalar_type_size(t->scalar_type);
}

/* Integer types a double holds exactly: printed as integers. */
static bool small_int(int st)
{
	return st == ETC_BYTE || st == ETC_CHAR || st == ETC_SHORT || st == ETC_INT ||
	       st == ETC_UINT16 || st == ETC_UINT32 || st == ETC_QINT8 || st == ETC_QUINT8 ||
	       st == ETC_QINT32;
}

/* Integers exactly (int64 beyond 2^53 too), bools as Python writes them. */
static void element(FILE *f, const etc_pytensor *pt, uint64_t i)
{
	int st = pt->tensor.scalar_type;
	if (st == ETC_LONG)
		fprintf(f, "%lld", (long long)(int64_t)etc_le64(element_at(pt, i)));
	else if (st == ETC_UINT64)
		fprintf(f, "%llu", (unsigned long long)etc_le64(element_at(pt, i)));
	else if (st == ETC_BOOL)
		fputs(*element_at(pt, i) ? "True" : "False", f);
	else if (small_int(st))
		fprintf(f, "%.0f", etc_pytensor_get(pt, i)); /* int32 1234567, not 1.23457e+06 */
	else
		fprintf(f, "%.6g", etc_pytensor_get(pt, i));
}

static void pytensor_line(FILE *f, const etc_pytensor *pt, uint32_t max_values)
{
	const etc_tensor *t = &pt->tensor;
	fprintf(f, "Tensor %s [", etc_scalar_type_name(t->scalar_type));
	for (uint32_t k = 0; k < t->ndim; k++)
		fprintf(f, k ? ", %lld" : "%lld", (long long)etc_tensor_size(t, k));
	fputc(']', f);
	if (!t->numel) {
		fputs("  (empty)\n", f);
		return;
	}
	double mn = INFINITY, mx = -INFINITY, sum = 0;
	uint64_t nan = 0;
	if (t->data) {
		/* contiguous: the vectorized summary of the debug buffer applies */
		etc_tensor_summary s;
		etc_tensor_summarize(t, &s);
		mn = s.min;
		mx = s.max;
		nan = s.nan_count;
		sum = s.mean * (double)(t->numel - nan);
	}
	for (uint64_t i = 0; !t->data && i < t->numel; i++) {
		double v = etc_pytensor_get(pt, i);
		if (isnan(v)) {
			nan++;
			continue;
		}
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
		sum += v;
	}
	if (nan == t->numel) {
		fprintf(f, "  all NaN");
	} else if (t->scalar_type == ETC_LONG || t->scalar_type == ETC_UINT64) {
		uint64_t lo = 0, hi = 0;
		for (uint64_t i = 1; i < t->numel; i++) {
			uint64_t a = etc_le64(element_at(pt, i)), l = etc_le64(element_at(pt, lo)),
			         h = etc_le64(element_at(pt, hi));
			bool s = t->scalar_type == ETC_LONG;
			if (s ? (int64_t)a < (int64_t)l : a < l)
				lo = i;
			if (s ? (int64_t)a > (int64_t)h : a > h)
				hi = i;
		}
		fputs("  min=", f);
		element(f, pt, lo);
		fputs(" max=", f);
		element(f, pt, hi);
		fprintf(f, " mean=%.6g", sum / (double)t->numel);
	} else if (small_int(t->scalar_type)) {
		fprintf(f, "  min=%.0f max=%.0f mean=%.6g", mn, mx, sum / (double)(t->numel - nan));
	} else {
		fprintf(f, "  min=%.6g max=%.6g mean=%.6g", mn, mx, sum / (double)(t->numel - nan));
	}
	if (nan)
		fprintf(f, " nan=%llu", (unsigned long long)nan);
	if (!pt->contiguous)
		fputs(" (strided view)", f);
	fputs("  [", f);
	uint64_t n = t->numel < max_values ? t->numel : max_values;
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", f);
		element(f, pt, i);
	}
	if (t->numel > n)
		fprintf(f, ", ... (%llu more)", (unsigned long long)(t->numel - n));
	fputs("]\n", f);
}

/*
 * The objects of a torch.save pickle form a DAG: the memo lets one list be
 * reused anywhere, so a 20 KB file can describe an exponential tree. Each
 * list, dict, tuple or tensor met more than once is printed the first time
 * with a number (#k) and then only referred to ("<same as #k>"); the lines
 * and the depth are bounded by the shared print budget.
 */
typedef struct seen_set {
	const etc_pyobj **key;
	uint32_t *refs, *id;
	size_t cap, count;
	bool failed;
} seen_set;

static bool shareable(int kind)
{
	return kind == ETC_PY_DICT || kind == ETC_PY_LIST || kind == ETC_PY_TUPLE ||
	       kind == ETC_PY_TENSOR;
}

static size_t seen_slot(const seen_set *s, const etc_pyobj *o)
{
	size_t h = ((size_t)(uintptr_t)o >> 4) * 0x9e3779b97f4a7c15ull;
	for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1))
		if (!s->key[i] || s->key[i] == o)
			return i;
}

/* Counts one more reference to o; returns the count (0 when out of memory). */
static uint32_t seen_add(seen_set *s, const etc_pyobj *o)
{
	if (2 * (s->count + 1) > s->cap) {
		seen_set n = {0};
		n.cap = s->cap ? 2 * s->cap : 256;
		n.key = calloc(n.cap, sizeof *n.key);
		n.refs = calloc(n.cap, sizeof *n.refs);
		n.id = calloc(n.cap, sizeof *n.id);
		if (!n.key || !n.refs || !n.id) {
			free(n.key), free(n.refs), free(n.id);
			s->failed = true;
			return 0;
		}
		for (size_t i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = seen_slot(&n, s->key[i]);
				n.key[j] = s->key[i], n.refs[j] = s->refs[i], n.id[j] = s->id[i];
			}
		n.count = s->count;
		free(s->key), free(s->refs), free(s->id);
		*s = n;
	}
	size_t i = seen_slot(s, o);
	if (!s->key[i])
		s->key[i] = o, s->count++;
	return ++s->refs[i];
}

static void seen_free(seen_set *s)
{
	free(s->key), free(s->refs), free(s->id);
}

/* Counts the references to every shareable object, each one walked once. */
static void count_refs(seen_set *s, const etc_pyobj *o, int depth)
{
	int kind = etc_pyobj_kind(o);
	if (!shareable(kind) || depth > ETC_PRINT_MAX_DEPTH || seen_add(s, o) != 1)
		return;
	if (kind == ETC_PY_TENSOR)
		return;
	size_t n = etc_pyobj_len(o);
	for (size_t i = 0; i < n; i++)
		count_refs(s,
		           kind == ETC_PY_DICT ? etc_pyobj_dict_value(o, i) : etc_pyobj_item(o, i),
		           depth + 1);
}

typedef struct leaf_ctx {
	FILE *f;
	uint32_t max_values;
	seen_set seen;
	etc_print_budget budget;
	uint32_t next_id;
} leaf_ctx;

/* "#k " before a shared object's first print; false when it was printed already. */
static bool first_print(leaf_ctx *c, const etc_pyobj *o, const char *path, size_t len)
{
	if (!shareable(etc_pyobj_kind(o)) || c->seen.failed || !c->seen.cap)
		return true;
	size_t i = seen_slot(&c->seen, o);
	if (c->seen.key[i] != o || c->seen.refs[i] < 2)
		return true;
	if (c->seen.id[i]) {
		fprintf(c->f, "  %s: <same as #%u>\n", len ? path : "(root)", c->seen.id[i]);
		return false;
	}
	c->seen.id[i] = ++c->next_id;
	fprintf(c->f, "  %s: #%u ", len ? path : "(root)", c->seen.id[i]);
	return true;
}

static void leaves(leaf_ctx *c, const etc_pyobj *o, char *path, size_t len, size_t cap, int depth)
{
	FILE *f = c->f;
	int kind = etc_pyobj_kind(o);
	c->budget.nodes++;
	bool container = kind == ETC_PY_DICT || kind == ETC_PY_LIST || kind == ETC_PY_TUPLE;
	size_t before = c->next_id;
	if (!first_print(c, o, path, len))
		return;
	bool numbered = c->next_id != before;
	if (container && depth >= ETC_PRINT_MAX_DEPTH) {
		if (!numbered)
			fprintf(f, "  %s: ", len ? path : "(root)");
		fprintf(f, "%s of %zu, nested deeper than %d levels: not shown\n",
		        etc_pykind_name(kind), etc_pyobj_len(o), ETC_PRINT_MAX_DEPTH);
		return;
	}
	if (container) {
		size_t n = etc_pyobj_len(o);
		if (!numbered && !n)
			fprintf(f, "  %s: ", len ? path : "(root)");
		if (numbered || !n)
			fprintf(f, "%s%s\n", n ? "" : "empty ", etc_pykind_name(kind));
		for (size_t i = 0; i < n; i++) {
			if (c->budget.nodes >= ETC_PRINT_MAX_NODES) {
				c->budget.hidden += n - i;
				break;
			}
			size_t l = len;
			char key[256];
			if (kind == ETC_PY_DICT) {
				const etc_pyobj *k = etc_pyobj_dict_key(o, i);
				if (etc_pyobj_kind(k) == ETC_PY_STR) {
					etc_str s = etc_pyobj_str(k);
					l += (size_t)snprintf(
					    path + len, cap - len, len ? ".%s" : "%s",
					    etc_text_escape(key, sizeof key, s.ptr, s.len));
				} else {
					l += (size_t)snprintf(path + len, cap - len, "[%lld]",
					                      (long long)etc_pyobj_int(k));
				}
				if (l >= cap)
					l = cap - 1;
				leaves(c, etc_pyobj_dict_value(o, i), path, l, cap, depth + 1);
			} else {
				l += (size_t)snprintf(path + len, cap - len, "[%zu]", i);
				if (l >= cap)
					l = cap - 1;
				leaves(c, etc_pyobj_item(o, i), path, l, cap, depth + 1);
			}
			path[len] = '\0';
		}
		return;
	}
	if (!numbered)
		fprintf(f, "  %s: ", len ? path : "(root)");
	switch (kind) {
	case ETC_PY_TENSOR:
		pytensor_line(f, etc_pyobj_tensor(o), c->max_values);
		return;
	case ETC_PY_INT:
		fprintf(f, "int %lld\n", (long long)etc_pyobj_int(o));
		return;
	case ETC_PY_FLOAT:
		fprintf(f, "float %.17g\n", etc_pyobj_float(o));
		return;
	case ETC_PY_BOOL:
		fprintf(f, "bool %s\n", etc_pyobj_bool(o) ? "True" : "False");
		return;
	case ETC_PY_STR: {
		etc_str s = etc_pyobj_str(o);
		char text[72];
		fprintf(f, "str '%s'\n", etc_text_escape(text, sizeof text, s.ptr, s.len));
		return;
	}
	default:
		fprintf(f, "%s\n", etc_pykind_name(kind));
	}
}

int etc_report_references(FILE *f, const etc_etrecord *rec, const etc_report_options *opt,
                          etc_error *err)
{
	etc_report_options o;
	if (!opt)
		etc_report_options_init(&o), opt = &o;
	const struct {
		const char *title;
		const etc_torchsave *ts;
	} parts[] = {{"reference_outputs", etc_etrecord_reference_outputs(rec)},
	             {"representative_inputs", etc_etrecord_representative_inputs(rec)}};
	char path[512];
	for (size_t i = 0; i < 2; i++) {
		if (!parts[i].ts) {
			fprintf(f, "%s: none in this ETRecord\n", parts[i].title);
			continue;
		}
		fprintf(f, "%s:\n", parts[i].title);
		path[0] = '\0';
		leaf_ctx c = {f, opt->max_values, {0}, {0, 0}, 0};
		count_refs(&c.seen, etc_torchsave_root(parts[i].ts), 0);
		leaves(&c, etc_torchsave_root(parts[i].ts), path, 0, sizeof path, 0);
		if (c.budget.hidden)
			fprintf(f, "  \xe2\x80\xa6 (%zu more not shown)\n", c.budget.hidden);
		seen_free(&c.seen);
	}
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the references");
	return 0;
}
