/*
 * etrecord.c - the ETRecord zip (FORMATS.md §4).
 *
 * Members read (others are listed but ignored):
 *   ETRECORD_V0                         identifier, must exist
 *   edge_dialect_exported_program       Edge program JSON; method "forward"
 *   edge_dialect_exported_program/<m>   Edge program JSON of method m
 *   <name>/<method>                     graph_map programs (names only)
 *   debug_handle_map                    {method: {instr: handle | [handles]}}, or flat
 *   delegate_map                        {method: {instr: {"name", "delegate_map": {id: [h]}}}}
 *   instruction_id_to_num_outs_map      {method: {instr: n | [..]}}
 *   reference_outputs, representative_inputs   torch.save archives (v1.3+),
 *                                       pickle.dumps streams (before)
 *   export_graph_id                     text
 * The small JSON members (maps) are parsed with jansson after a linear
 * pre-scan bounds their nesting; the Edge program, tens of megabytes, is read
 * in one streaming pass by edge_program.c into compact arena structs.
 */
#include "etcompare/etrecord.h"
#include "core/internal.h"
#include "format/edge_program.h"
#include "format/etrecord_private.h"
#include "format/zipread.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#define EDGE_MEMBER "edge_dialect_exported_program"

typedef struct handle_entry {
	int32_t instr;
	uint32_t count;
	const int64_t *handles;
} handle_entry;

typedef struct delegate_entry {
	int32_t instr;
	etc_delegate_info info;
} delegate_entry;

typedef struct outs_entry {
	int32_t instr;
	int64_t n;
} outs_entry;

typedef struct node_ref {
	int64_t handle;
	const etc_graph_node *node;
} node_ref;

typedef struct method {
	const char *name;
	const char *program_member; /* NULL when only the maps name this method */
	etc_graph_node *nodes;
	size_t node_count;
	int64_t *handle_keys;                /* sorted debug handles of operator nodes ... */
	const etc_graph_node **handle_nodes; /* ... and their nodes, in graph order */
	size_t by_handle_count;
	handle_entry *handles; /* sorted by instr */
	size_t handle_count;
	bool has_handle_map;
	delegate_entry *delegates;
	size_t delegate_count;
	outs_entry *outs;
	size_t outs_count;
} method;

struct etc_etrecord {
	etc_map map;
	etc_arena arena;
	etc_zip *zip;
	char *name;
	bool legacy;
	char *export_graph_id;
	method *methods;
	size_t method_count, method_cap;
	const char **graphs;
	size_t graph_count;
	etc_torchsave *reference_outputs, *representative_inputs;
	const char *reference_error; /* why reference_outputs, present, was not read */
	const char *warnings[8];
	size_t warning_count;
	/* graph_map programs parsed on request (etc_etrecord_graph_nodes) */
	etc_graph_node **graph_nodes;
	size_t *graph_node_counts;
};

/* --- small helpers -------------------------------------------------------- */

static char *dupn(etc_etrecord *r, const char *s, size_t n)
{
	return etc_arena_strdup(&r->arena, s ? s : "", s ? n : 0);
}

static char *dup(etc_etrecord *r, const char *s)
{
	return dupn(r, s, s ? strlen(s) : 0);
}

static int nomem(etc_etrecord *r, etc_error *err)
{
	return etc_fail(err, ETC_ERR_NOMEM, r->name, -1, "out of memory");
}

static int find_method(const etc_etrecord *r, const char *name)
{
	for (size_t i = 0; i < r->method_count; i++)
		if (strcmp(r->methods[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int add_method(etc_etrecord *r, const char *name, size_t len, method **out, etc_error *err)
{
	char *n = dupn(r, name, len);
	if (!n)
		return nomem(r, err);
	int k = find_method(r, n);
	if (k >= 0) {
		*out = &r->methods[k];
		return 0;
	}
	if (r->method_count == r->method_cap) {
		size_t cap = r->method_cap ? r->method_cap * 2 : 4;
		method *m = etc_arena_alloc(&r->arena, cap, sizeof *m);
		if (!m)
			return nomem(r, err);
		if (r->method_count)
			memcpy(m, r->methods, r->method_count * sizeof *m);
		r->methods = m;
		r->method_cap = cap;
	}
	method *m = &r->methods[r->method_count++];
	memset(m, 0, sizeof *m);
	m->name = n;
	*out = m;
	return 0;
}

/* Nesting depth of a JSON text, strings skipped; jansson's own limit is 2048. */
static size_t json_depth(const uint8_t *p, size_t n)
{
	size_t depth = 0, max = 0;
	bool in_str = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '[' || c == '{') {
			if (++depth > max)
				max = depth;
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
	}
	return max;
}

/* Parses member `mname`; *out = NULL when the member is absent. */
static int load_json(etc_etrecord *r, const char *mname, json_t **out, etc_error *err)
{
	const etc_zip_entry *e = etc_zip_find(r->zip, mname);
	const uint8_t *data;
	size_t size;
	int64_t at;
	*out = NULL;
	if (!e)
		return 0;
	ETC_TRY(etc_zip_read(r->zip, e, &data, &size, &at, err));
	if (json_depth(data, size) > ETC_ETRECORD_MAX_JSON_DEPTH)
		return etc_fail(err, ETC_ERR_LIMIT, r->name, at,
		                "member %s: JSON nested deeper than %d levels", mname,
		                ETC_ETRECORD_MAX_JSON_DEPTH);
	json_error_t jerr;
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return etc_fail(err, ETC_ERR_FORMAT, r->name, at >= 0 ? at + jerr.position : -1,
		                "member %s: invalid JSON at line %d, column %d: %s", mname,
		                jerr.line, jerr.column, jerr.text);
	*out = j;
	return 0;
}

static int shape_error(etc_etrecord *r, const char *member, const char *what, etc_error *err)
{
	return etc_fail(err, ETC_ERR_FORMAT, r->name, -1, "member %s: %s", member, what);
}

/*
 * Instruction ids are JSON object keys written as str(int): canonical
 * decimal int32 only. strtoll alone would also take " 5", "+5" and "07",
 * keys that upstream's lookup by str(instruction_id) never finds.
 */
static bool parse_instr(const char *key, int32_t *out)
{
	size_t n = strlen(key);
	if (n == 0 || n > 10 || (key[0] == '0' && n > 1))
		return false;
	for (size_t i = 0; i < n; i++)
		if (key[i] < '0' || key[i] > '9')
			return false;
	long long v = strtoll(key, NULL, 10);
	if (v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

/* A JSON int or list of ints as an arena array. */
static int int_list(etc_etrecord *r, json_t *v, const char *member, const int64_t **out,
                    uint32_t *count, etc_error *err)
{
	if (json_is_integer(v)) {
		int64_t *h = etc_arena_alloc(&r->arena, 1, sizeof *h);
		if (!h)
			return nomem(r, err);
		*h = json_integer_value(v);
		*out = h;
		*count = 1;
		return 0;
	}
	if (!json_is_array(v))
		return shape_error(r, member,
		                   "debug handles must be an integer or a list of integers", err);
	size_t n = json_array_size(v);
	int64_t *h = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *h);
	if (!h)
		return nomem(r, err);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(v, i);
		if (!json_is_integer(x))
			return shape_error(r, member, "a debug handle list holds a non-integer",
			                   err);
		h[i] = json_integer_value(x);
	}
	*out = h;
	*count = (uint32_t)n;
	return 0;
}

static int cmp_handle_entry(const void *a, const void *b)
{
	int32_t x = ((const handle_entry *)a)->instr, y = ((const handle_entry *)b)->instr;
	return (x > y) - (x < y);
}

static int cmp_delegate_entry(const void *a, const void *b)
{
	int32_t x = ((const delegate_entry *)a)->instr, y = ((const delegate_entry *)b)->instr;
	return (x > y) - (x < y);
}

static int cmp_outs_entry(const void *a, const void *b)
{
	int32_t x = ((const outs_entry *)a)->instr, y = ((const outs_entry *)b)->instr;
	return (x > y) - (x < y);
}

static int cmp_node_ref(const void *a, const void *b)
{
	const node_ref *x = a, *y = b;
	if (x->handle != y->handle)
		return (x->handle > y->handle) - (x->handle < y->handle);
	return (x->node > y->node) - (x->node < y->node);
}

/*
 * The maps come per method ({method: {instr: ...}}) or, in older records,
 * flat ({instr: ...}, taken as method "forward"). `leaf_is_object` tells
 * which inner value shape a flat map has.
 */
typedef int (*map_fn)(etc_etrecord *r, method *m, json_t *inner, const char *member,
                      etc_error *err);

static int each_method(etc_etrecord *r, json_t *j, const char *member, bool leaf_is_object,
                       map_fn fn, etc_error *err)
{
	if (!json_is_object(j))
		return shape_error(r, member, "expected a JSON object", err);
	if (json_object_size(j) == 0)
		return 0;
	const char *key;
	json_t *v;
	bool flat = true;
	json_object_foreach(j, key, v)
	{
		int32_t id;
		if (!parse_instr(key, &id))
			flat = false;
		(void)leaf_is_object;
	}
	method *m;
	if (flat) {
		/* older records: the maps of the one program (upstream: "forward") */
		const char *only = NULL;
		size_t programs = 0;
		for (size_t i = 0; i < r->method_count; i++)
			if (r->methods[i].program_member) {
				programs++;
				only = r->methods[i].name;
			}
		const char *target = programs == 1 ? only : "forward";
		ETC_TRY(add_method(r, target, strlen(target), &m, err));
		return fn(r, m, j, member, err);
	}
	json_object_foreach(j, key, v)
	{
		if (!json_is_object(v))
			return shape_error(r, member, "a method's entry must be a JSON object",
			                   err);
		ETC_TRY(add_method(r, key, strlen(key), &m, err));
		ETC_TRY(fn(r, m, v, member, err));
	}
	return 0;
}

/* An object key of a method's map that must be an instruction id. */
static int instr_key(etc_etrecord *r, const method *m, const char *member, const char *key,
                     int32_t *out, etc_error *err)
{
	if (parse_instr(key, out))
		return 0;
	return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
	                "member %s, method %s: key \"%s\" is not an instruction id", member,
	                m->name, key);
}

static int handle_map_fn(etc_etrecord *r, method *m, json_t *inner, const char *member,
                         etc_error *err)
{
	size_t n = json_object_size(inner);
	handle_entry *h = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *h);
	if (!h)
		return nomem(r, err);
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(inner, key, v)
	{
		ETC_TRY(instr_key(r, m, member, key, &h[k].instr, err));
		ETC_TRY(int_list(r, v, member, &h[k].handles, &h[k].count, err));
		k++;
	}
	qsort(h, k, sizeof *h, cmp_handle_entry);
	m->handles = h;
	m->handle_count = k;
	m->has_handle_map = true;
	return 0;
}

static int delegate_map_fn(etc_etrecord *r, method *m, json_t *inner, const char *member,
                           etc_error *err)
{
	size_t n = json_object_size(inner);
	delegate_entry *d = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *d);
	if (!d)
		return nomem(r, err);
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(inner, key, v)
	{
		delegate_entry *e = &d[k];
		ETC_TRY(instr_key(r, m, member, key, &e->instr, err));
		if (!json_is_object(v))
			return shape_error(r, member, "an instruction's entry must be an object",
			                   err);
		json_t *name = json_object_get(v, "name"), *dm = json_object_get(v, "delegate_map");
		if (name && !json_is_string(name))
			return shape_error(r, member, "\"name\" must be a string", err);
		e->info.backend = dup(r, name ? json_string_value(name) : "");
		if (dm && !json_is_object(dm) && !json_is_null(dm))
			return shape_error(r, member, "\"delegate_map\" must be an object", err);
		size_t ids = dm && json_is_object(dm) ? json_object_size(dm) : 0;
		const char **idv = etc_arena_alloc(&r->arena, ids ? ids : 1, sizeof *idv);
		const int64_t **hv = etc_arena_alloc(&r->arena, ids ? ids : 1, sizeof *hv);
		size_t *cv = etc_arena_alloc(&r->arena, ids ? ids : 1, sizeof *cv);
		if (!e->info.backend || !idv || !hv || !cv)
			return nomem(r, err);
		size_t i = 0;
		const char *id;
		json_t *hl;
		if (ids)
			json_object_foreach(dm, id, hl)
			{
				uint32_t c;
				idv[i] = dup(r, id);
				ETC_TRY(int_list(r, hl, member, &hv[i], &c, err));
				cv[i++] = c;
			}
		e->info.id_count = ids;
		e->info.ids = idv;
		e->info.handles = hv;
		e->info.handle_counts = cv;
		k++;
	}
	qsort(d, k, sizeof *d, cmp_delegate_entry);
	m->delegates = d;
	m->delegate_count = k;
	return 0;
}

static int outs_map_fn(etc_etrecord *r, method *m, json_t *inner, const char *member,
                       etc_error *err)
{
	size_t n = json_object_size(inner);
	outs_entry *o = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *o);
	if (!o)
		return nomem(r, err);
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(inner, key, v)
	{
		ETC_TRY(instr_key(r, m, member, key, &o[k].instr, err));
		if (json_is_integer(v))
			o[k].n = json_integer_value(v);
		else if (json_is_array(v))
			o[k].n = (int64_t)json_array_size(v);
		else
			return shape_error(r, member, "a count must be an integer or a list", err);
		k++;
	}
	qsort(o, k, sizeof *o, cmp_outs_entry);
	m->outs = o;
	m->outs_count = k;
	return 0;
}

/* --- the Edge program ------------------------------------------------------ */

/* Splits "key,path,type" on commas outside brackets (paths may hold slices). */
static int split_frame(etc_etrecord *r, const char *s, size_t n, etc_module_frame *f)
{
	size_t cut[2], ncut = 0;
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '(' || c == '[')
			depth++;
		else if ((c == ')' || c == ']') && depth)
			depth--;
		else if (c == ',' && depth == 0 && ncut < 2)
			cut[ncut++] = i;
	}
	if (ncut == 2) {
		f->key = dupn(r, s, cut[0]);
		f->path = dupn(r, s + cut[0] + 1, cut[1] - cut[0] - 1);
		f->type = dupn(r, s + cut[1] + 1, n - cut[1] - 1);
	} else if (ncut == 1) {
		f->key = dupn(r, s, cut[0]);
		f->path = dupn(r, s + cut[0] + 1, n - cut[0] - 1);
		f->type = "";
	} else {
		f->key = dupn(r, s, n);
		f->path = f->key;
		f->type = "";
	}
	return f->key && f->path && f->type ? 0 : -1;
}

static int decode_modules(etc_etrecord *r, etc_graph_node *nd, etc_error *err)
{
	const char *s = nd->nn_module_stack;
	size_t len = strlen(s);
	if (!len)
		return 0;
	size_t count = 1;
	for (size_t i = 0; i < len; i++)
		count += s[i] == ';';
	etc_module_frame *f = etc_arena_alloc(&r->arena, count, sizeof *f);
	if (!f)
		return nomem(r, err);
	size_t k = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ';')
			continue;
		if (i > start && split_frame(r, s + start, i - start, &f[k++]) < 0)
			return nomem(r, err);
		start = i + 1;
	}
	nd->modules = f;
	nd->module_depth = (uint32_t)k;
	return 0;
}

/* "file.py:18" from the last File "...", line N of a Python stack trace. */
static const char *source_line(etc_etrecord *r, const char *trace)
{
	const char *last = NULL, *p = trace;
	while ((p = strstr(p, "File \"")) != NULL) {
		last = p;
		p += 6;
	}
	if (!last)
		return "";
	const char *fname = last + 6, *q = strchr(fname, '"');
	if (!q)
		return "";
	const char *base = fname;
	for (const char *t = fname; t < q; t++)
		if (*t == '/')
			base = t + 1;
	const char *ln = strstr(q, ", line ");
	char buf[320];
	if (!ln)
		snprintf(buf, sizeof buf, "%.*s", (int)(q - base), base);
	else
		snprintf(buf, sizeof buf, "%.*s:%ld", (int)(q - base), base,
		         strtol(ln + 7, NULL, 10));
	return dup(r, buf);
}

static int load_program(etc_etrecord *r, method *m, const char *member, etc_error *err)
{
	const etc_zip_entry *e = etc_zip_find(r->zip, member);
	const uint8_t *data;
	size_t size, n;
	int64_t at;
	etc_graph_node *nodes;
	ETC_TRY(etc_zip_read(r->zip, e, &data, &size, &at, err));
	ETC_TRY(etc_edge_program_parse(&r->arena, (const char *)data, size, r->name, member, at,
	                               &nodes, &n, err));
	node_ref *refs = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *refs);
	if (!refs)
		return nomem(r, err);
	size_t nrefs = 0;
	for (size_t i = 0; i < n; i++) {
		etc_graph_node *nd = &nodes[i];
		nd->source_line = source_line(r, nd->stack_trace);
		if (!nd->source_line)
			return nomem(r, err);
		ETC_TRY(decode_modules(r, nd, err));
		/* Operators only: allocations and getitem carry no op of their own. */
		bool is_operator = strcmp(nd->target, "memory.alloc") != 0 &&
		                   strcmp(nd->target, "_operator.getitem") != 0;
		if (nd->debug_handle >= 0 && is_operator) {
			refs[nrefs].handle = nd->debug_handle;
			refs[nrefs++].node = nd;
		}
	}
	qsort(refs, nrefs, sizeof *refs, cmp_node_ref);
	m->handle_keys = etc_arena_alloc(&r->arena, nrefs ? nrefs : 1, sizeof(int64_t));
	m->handle_nodes = etc_arena_alloc(&r->arena, nrefs ? nrefs : 1, sizeof(void *));
	if (!m->handle_keys || !m->handle_nodes)
		return nomem(r, err);
	for (size_t i = 0; i < nrefs; i++) {
		m->handle_keys[i] = refs[i].handle;
		m->handle_nodes[i] = refs[i].node;
	}
	m->nodes = nodes;
	m->node_count = n;
	m->by_handle_count = nrefs;
	return 0;
}

/* --- reference outputs --------------------------------------------------- */

static void release_checked(const void *ctx, const void *p, size_t n)
{
	etc_etrecord_release_range(ctx, p, n);
}

static int load_torchsave(const etc_etrecord *r, const char *member, etc_torchsave **out,
                          etc_error *err)
{
	const etc_zip_entry *e = etc_zip_find(r->zip, member);
	const uint8_t *data;
	size_t size;
	int64_t at;
	if (!e)
		return 0;
	ETC_TRY(etc_zip_read(r->zip, e, &data, &size, &at, err));
	/* Before ExecuTorch v1.3 these members are pickle.dumps bytes: read the same way. */
	char name[512];
	snprintf(name, sizeof name, "%s:%s", r->name, member);
	/* Its members share what is left of the record's inflation budget. */
	etc_zip_release rel = {release_checked, r};
	int rc = etc_torchsave_wrap_nested(out, data, size, name, etc_zip_budget_left(r->zip), &rel,
	                                   err);
	/* the CRC check read every page of a stored member: given back, the
	   tensors a caller reads fault theirs in again one at a time */
	etc_etrecord_release_range(r, data, size);
	return rc;
}

/* --- open ------------------------------------------------------------------ */

/* Warnings beyond the first eight are dropped (so is one out of memory). */
static void add_warning(etc_etrecord *r, const char *message)
{
	if (message && r->warning_count < sizeof r->warnings / sizeof r->warnings[0])
		r->warnings[r->warning_count++] = dup(r, message);
}

static int load(etc_etrecord *r, const uint8_t *data, size_t size, etc_error *err)
{
	ETC_TRY(etc_zip_open(&r->zip, &r->arena, data, size, r->name, err));
	add_warning(r, etc_zip_warning(r->zip));
	etc_zip_release rel = {release_checked, r};
	etc_zip_set_release(r->zip, &rel);
	if (!etc_zip_find(r->zip, "ETRECORD_V0"))
		return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
		                "not an ETRecord: the identifier member ETRECORD_V0 is missing");

	size_t n = etc_zip_count(r->zip);
	r->graphs = etc_arena_alloc(&r->arena, n ? n : 1, sizeof *r->graphs);
	if (!r->graphs)
		return nomem(r, err);
	static const char *const suffixes[] = {"_state_dict", "_constants", "_example_inputs"};
	for (size_t i = 0; i < n; i++) {
		const etc_zip_entry *e = etc_zip_entry_at(r->zip, i);
		const char *nm = e->name;
		bool sibling = false;
		for (size_t s = 0; s < 3; s++) {
			size_t sl = strlen(suffixes[s]), nl = strlen(nm);
			sibling |= nl > sl && strcmp(nm + nl - sl, suffixes[s]) == 0;
		}
		if (sibling)
			continue;
		method *m;
		if (strcmp(nm, EDGE_MEMBER) == 0) {
			r->legacy = true;
			ETC_TRY(add_method(r, "forward", 7, &m, err));
			if (m->program_member)
				return etc_fail(
				    err, ETC_ERR_FORMAT, r->name, -1,
				    "two Edge programs for method \"forward\": members %s "
				    "and %s",
				    m->program_member, nm);
			m->program_member = e->name;
			ETC_TRY(load_program(r, m, nm, err));
		} else if (strncmp(nm, EDGE_MEMBER "/", strlen(EDGE_MEMBER) + 1) == 0) {
			const char *mn = nm + strlen(EDGE_MEMBER) + 1;
			if (!*mn)
				return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
				                "member %s: empty method name", nm);
			ETC_TRY(add_method(r, mn, strlen(mn), &m, err));
			if (m->program_member)
				return etc_fail(
				    err, ETC_ERR_FORMAT, r->name, -1,
				    "two Edge programs for method \"%s\": members %s and %s", mn,
				    m->program_member, nm);
			m->program_member = e->name;
			ETC_TRY(load_program(r, m, nm, err));
		} else if (strchr(nm, '/') && nm[strlen(nm) - 1] != '/') {
			r->graphs[r->graph_count] = dup(r, nm);
			if (!r->graphs[r->graph_count++])
				return nomem(r, err);
		}
	}

	static const struct {
		const char *member;
		bool object_leaf;
		map_fn fn;
	} maps[] = {{"debug_handle_map", false, handle_map_fn},
	            {"delegate_map", true, delegate_map_fn},
	            {"instruction_id_to_num_outs_map", false, outs_map_fn}};
	for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
		json_t *j;
		ETC_TRY(load_json(r, maps[i].member, &j, err));
		if (!j)
			continue;
		int rc = each_method(r, j, maps[i].member, maps[i].object_leaf, maps[i].fn, err);
		json_decref(j);
		if (rc < 0)
			return rc;
	}

	const etc_zip_entry *e = etc_zip_find(r->zip, "export_graph_id");
	if (e) {
		const uint8_t *d;
		size_t s;
		ETC_TRY(etc_zip_read(r->zip, e, &d, &s, NULL, err));
		r->export_graph_id = dupn(r, (const char *)d, s > 64 ? 64 : s);
		if (!r->export_graph_id)
			return nomem(r, err);
	}
	static const char *const saves[] = {"reference_outputs", "representative_inputs"};
	etc_torchsave **dst[] = {&r->reference_outputs, &r->representative_inputs};
	for (size_t i = 0; i < 2; i++) {
		etc_error local;
		int rc = load_torchsave(r, saves[i], dst[i], &local);
		if (rc == ETC_ERR_UNSUPPORTED) {
			/* The graph and maps are still worth reading. */
			add_warning(r, local.message);
			if (i == 0)
				r->reference_error = dup(r, local.message);
			continue;
		}
		if (rc < 0) {
			if (err)
				*err = local;
			return rc;
		}
		add_warning(r, etc_torchsave_warning(*dst[i]));
	}
	return 0;
}

static etc_etrecord *create(const char *name, etc_error *err)
{
	etc_etrecord *r = calloc(1, sizeof *r);
	if (!r) {
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	etc_arena_init(&r->arena);
	r->name = dup(r, name);
	if (!r->name) {
		free(r);
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	return r;
}

int etc_etrecord_open(etc_etrecord **out, const char *path, etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_open: NULL argument");
	etc_etrecord *r = create(path, err);
	if (!r)
		return ETC_ERR_NOMEM;
	int rc = etc_map_open(&r->map, path, err);
	if (rc == 0)
		rc = load(r, r->map.data, r->map.size, err);
	if (rc < 0) {
		etc_etrecord_free(r);
		return rc;
	}
	/* what load read is parsed or checked: its pages need not stay resident */
	etc_etrecord_release_pages(r);
	*out = r;
	return 0;
}

int etc_etrecord_wrap(etc_etrecord **out, const void *data, size_t len, const char *name,
                      etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_wrap: NULL argument");
	etc_etrecord *r = create(name ? name : "<memory>", err);
	if (!r)
		return ETC_ERR_NOMEM;
	int rc = load(r, data ? data : (const void *)"", len, err);
	if (rc < 0) {
		etc_etrecord_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void etc_etrecord_release_pages(const etc_etrecord *r)
{
	if (r)
		etc_map_release(&r->map, 0, r->map.size);
}

void etc_etrecord_release_range(const etc_etrecord *r, const void *p, size_t len)
{
	if (!r || !r->map.mapped)
		return;
	uintptr_t lo = (uintptr_t)r->map.data, at = (uintptr_t)p;
	if (at >= lo && at - lo < r->map.size)
		etc_map_release(&r->map, at - lo, len);
}

bool etc_etrecord_contains(const etc_etrecord *r, const void *p, size_t len)
{
	return r && r->zip && etc_zip_contains(r->zip, p, len);
}

size_t etc_etrecord_warning_count(const etc_etrecord *r)
{
	return r->warning_count;
}

const char *etc_etrecord_warning(const etc_etrecord *r, size_t i)
{
	return i < r->warning_count ? r->warnings[i] : NULL;
}

int etc_etrecord_default_method(const etc_etrecord *r)
{
	int m = find_method(r, "forward");
	if (m >= 0 && r->methods[m].program_member)
		return m;
	int only = -1, programs = 0;
	for (size_t i = 0; i < r->method_count; i++)
		if (r->methods[i].program_member)
			only = (int)i, programs++;
	if (programs == 1)
		return only;
	if (m < 0 && r->method_count == 1)
		return 0;
	return m;
}

bool etc_etrecord_has_program(const etc_etrecord *r, size_t m)
{
	return m < r->method_count && r->methods[m].program_member != NULL;
}

int etc_etrecord_graph_nodes(etc_etrecord *r, const char *name, const etc_graph_node **nodes,
                             size_t *count, etc_error *err)
{
	if (!r || !name || !nodes || !count)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_graph_nodes: NULL %s",
		                !r       ? "rec"
		                : !name  ? "name"
		                : !nodes ? "nodes"
		                         : "count");
	*nodes = NULL;
	*count = 0;
	size_t g;
	for (g = 0; g < r->graph_count; g++)
		if (strcmp(r->graphs[g], name) == 0)
			break;
	if (g == r->graph_count) {
		char have[600] = "";
		size_t at = 0;
		for (size_t i = 0; i < r->graph_count && at < sizeof have; i++)
			at += (size_t)snprintf(have + at, sizeof have - at, "%s%s", i ? ", " : "",
			                       r->graphs[i]);
		return etc_fail(err, ETC_ERR_USAGE, r->name, -1,
		                "the ETRecord has no graph \"%s\"; it has: %s", name,
		                r->graph_count ? have : "none");
	}
	if (!r->graph_nodes) {
		r->graph_nodes = etc_arena_alloc(&r->arena, r->graph_count, sizeof *r->graph_nodes);
		r->graph_node_counts =
		    etc_arena_alloc(&r->arena, r->graph_count, sizeof *r->graph_node_counts);
		if (!r->graph_nodes || !r->graph_node_counts)
			return nomem(r, err);
	}
	if (!r->graph_nodes[g]) {
		const etc_zip_entry *e = etc_zip_find(r->zip, name);
		const uint8_t *data;
		size_t size;
		int64_t at;
		ETC_TRY(etc_zip_read(r->zip, e, &data, &size, &at, err));
		ETC_TRY(etc_edge_program_parse(&r->arena, (const char *)data, size, r->name, name,
		                               at, &r->graph_nodes[g], &r->graph_node_counts[g],
		                               err));
		for (size_t i = 0; i < r->graph_node_counts[g]; i++) {
			etc_graph_node *nd = &r->graph_nodes[g][i];
			nd->source_line = source_line(r, nd->stack_trace);
			if (!nd->source_line)
				return nomem(r, err);
			ETC_TRY(decode_modules(r, nd, err));
		}
	}
	*nodes = r->graph_nodes[g];
	*count = r->graph_node_counts[g];
	return 0;
}

void etc_etrecord_free(etc_etrecord *r)
{
	if (!r)
		return;
	etc_torchsave_free(r->reference_outputs);
	etc_torchsave_free(r->representative_inputs);
	if (r->zip)
		etc_zip_close(r->zip);
	etc_map_close(&r->map);
	etc_arena_release(&r->arena);
	free(r);
}

/* --- accessors ------------------------------------------------------------- */

const char *etc_etrecord_name(const etc_etrecord *r)
{
	return r->name;
}

bool etc_etrecord_is_legacy(const etc_etrecord *r)
{
	return r->legacy;
}

const char *etc_etrecord_export_graph_id(const etc_etrecord *r)
{
	return r->export_graph_id;
}

size_t etc_etrecord_method_count(const etc_etrecord *r)
{
	return r->method_count;
}

const char *etc_etrecord_method(const etc_etrecord *r, size_t i)
{
	return i < r->method_count ? r->methods[i].name : NULL;
}

int etc_etrecord_method_index(const etc_etrecord *r, const char *name)
{
	return name ? find_method(r, name) : -1;
}

size_t etc_etrecord_graph_count(const etc_etrecord *r)
{
	return r->graph_count;
}

const char *etc_etrecord_graph_name(const etc_etrecord *r, size_t i)
{
	return i < r->graph_count ? r->graphs[i] : NULL;
}

size_t etc_etrecord_node_count(const etc_etrecord *r, size_t m)
{
	return m < r->method_count ? r->methods[m].node_count : 0;
}

const etc_graph_node *etc_etrecord_node(const etc_etrecord *r, size_t m, size_t i)
{
	if (m >= r->method_count || i >= r->methods[m].node_count)
		return NULL;
	return &r->methods[m].nodes[i];
}

size_t etc_etrecord_nodes_for_handle(const etc_etrecord *r, size_t m, int64_t handle,
                                     const etc_graph_node *const **nodes)
{
	*nodes = NULL;
	if (m >= r->method_count)
		return 0;
	const method *me = &r->methods[m];
	size_t lo = 0, hi = me->by_handle_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (me->handle_keys[mid] < handle)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < me->by_handle_count && me->handle_keys[end] == handle)
		end++;
	if (end == lo)
		return 0;
	*nodes = &me->handle_nodes[lo];
	return end - lo;
}

size_t etc_etrecord_debug_handles(const etc_etrecord *r, size_t m, int32_t instr,
                                  const int64_t **handles, bool *found)
{
	bool found_;
	if (!found)
		found = &found_; /* may be NULL: the return value says as much */
	if (handles)
		*handles = NULL;
	*found = false;
	if (!r || !handles || m >= r->method_count)
		return 0;
	const method *me = &r->methods[m];
	handle_entry key = {instr, 0, NULL};
	/* bsearch's base must not be NULL, even for zero entries (absent map) */
	const handle_entry *h = me->handle_count ? bsearch(&key, me->handles, me->handle_count,
	                                                   sizeof key, cmp_handle_entry)
	                                         : NULL;
	if (!h)
		return 0;
	*found = true;
	*handles = h->handles;
	return h->count;
}

const etc_delegate_info *etc_etrecord_delegate(const etc_etrecord *r, size_t m, int32_t instr)
{
	if (m >= r->method_count)
		return NULL;
	const method *me = &r->methods[m];
	delegate_entry key;
	key.instr = instr;
	const delegate_entry *d =
	    me->delegate_count
	        ? bsearch(&key, me->delegates, me->delegate_count, sizeof key, cmp_delegate_entry)
	        : NULL;
	return d ? &d->info : NULL;
}

int64_t etc_etrecord_num_outputs(const etc_etrecord *r, size_t m, int32_t instr)
{
	if (m >= r->method_count)
		return -1;
	const method *me = &r->methods[m];
	outs_entry key = {instr, 0};
	const outs_entry *o =
	    me->outs_count ? bsearch(&key, me->outs, me->outs_count, sizeof key, cmp_outs_entry)
	                   : NULL;
	return o ? o->n : -1;
}

bool etc_etrecord_has_handle_map(const etc_etrecord *r, size_t m)
{
	return m < r->method_count && r->methods[m].handle_count > 0;
}

const etc_torchsave *etc_etrecord_reference_outputs(const etc_etrecord *r)
{
	return r->reference_outputs;
}

const char *etc_etrecord_reference_error(const etc_etrecord *r)
{
	return r->reference_error;
}

const etc_torchsave *etc_etrecord_representative_inputs(const etc_etrecord *r)
{
	return r->representative_inputs;
}

static int flatten(const etc_etrecord *r, const etc_pyobj *o, const etc_pytensor **out, size_t cap,
                   size_t *count, int depth, etc_error *err)
{
	int kind = etc_pyobj_kind(o);
	if (kind == ETC_PY_TENSOR) {
		if (*count < cap)
			out[*count] = etc_pyobj_tensor(o);
		(*count)++;
		return 0;
	}
	if ((kind == ETC_PY_LIST || kind == ETC_PY_TUPLE) && depth < 16) {
		for (size_t i = 0; i < etc_pyobj_len(o); i++)
			ETC_TRY(flatten(r, etc_pyobj_item(o, i), out, cap, count, depth + 1, err));
		return 0;
	}
	return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
	                "reference_outputs: output %zu is a %s, not a tensor", *count,
	                etc_pykind_name(kind));
}

int etc_etrecord_reference(const etc_etrecord *r, const char *method_name, size_t index,
                           const etc_pytensor **out, size_t cap, size_t *count, etc_error *err)
{
	if (!r || !count || (!out && cap))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_reference: NULL %s",
		                !r       ? "rec"
		                : !count ? "count"
		                         : "out");
	if (!method_name)
		method_name = "forward";
	*count = 0;
	if (!r->reference_outputs)
		return etc_fail(err, ETC_ERR_USAGE, r->name, -1,
		                "the ETRecord has no reference_outputs");
	const etc_pyobj *root = etc_torchsave_root(r->reference_outputs);
	const etc_pyobj *runs =
	    etc_pyobj_kind(root) == ETC_PY_DICT ? etc_pyobj_dict_get(root, method_name) : root;
	if (!runs || (etc_pyobj_kind(runs) != ETC_PY_LIST && etc_pyobj_kind(runs) != ETC_PY_TUPLE))
		return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
		                "reference_outputs has no list of outputs for method \"%s\"",
		                method_name);
	if (index >= etc_pyobj_len(runs))
		return etc_fail(err, ETC_ERR_FORMAT, r->name, -1,
		                "reference_outputs[\"%s\"] has %zu entries; bundled input %zu "
		                "has none",
		                method_name, etc_pyobj_len(runs), index);
	return flatten(r, etc_pyobj_item(runs, index), out, cap, count, 0, err);
}

/* --- raw members ------------------------------------------------------------ */

bool etc_etrecord_has_member(const etc_etrecord *r, const char *name)
{
	return r && name && etc_zip_find(r->zip, name) != NULL;
}

int etc_etrecord_member(const etc_etrecord *r, const char *name, const void **data, size_t *size,
                        etc_error *err)
{
	if (!r || !name || !data || !size)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_member: NULL %s",
		                !r      ? "rec"
		                : !name ? "name"
		                : !data ? "data"
		                        : "size");
	*data = NULL;
	*size = 0;
	const etc_zip_entry *e = etc_zip_find(r->zip, name);
	if (!e)
		return etc_fail(err, ETC_ERR_FORMAT, r->name, -1, "the ETRecord has no member %s",
		                name);
	const uint8_t *d;
	ETC_TRY(etc_zip_read(r->zip, e, &d, size, NULL, err));
	*data = d;
	return 0;
}

int etc_etrecord_torchsave(const etc_etrecord *r, const char *name, etc_torchsave **out,
                           etc_error *err)
{
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_torchsave: NULL out");
	*out = NULL;
	if (!r || !name)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etrecord_torchsave: NULL %s",
		                !r ? "rec" : "name");
	if (!etc_zip_find(r->zip, name))
		return etc_fail(err, ETC_ERR_FORMAT, r->name, -1, "the ETRecord has no member %s",
		                name);
	ETC_TRY(load_torchsave(r, name, out, err));
	return 0;
}
