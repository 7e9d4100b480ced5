/*
 * refargs.c - decoding of a node's serialized arguments (torch.export serde
 * Argument unions) into ref_args, and the JSON reading they need.
 */
#include "reference/refargs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int ref_serde_dtype(int64_t code)
{
	/* torch/_export/serde/schema.py ScalarType -> ExecuTorch's codes */
	switch (code) {
	case 1:
		return ETC_BYTE;
	case 2:
		return ETC_CHAR;
	case 3:
		return ETC_SHORT;
	case 4:
		return ETC_INT;
	case 5:
		return ETC_LONG;
	case 6:
		return ETC_HALF;
	case 7:
		return ETC_FLOAT;
	case 8:
		return ETC_DOUBLE;
	case 12:
		return ETC_BOOL;
	case 13:
		return ETC_BFLOAT16;
	case 28:
		return ETC_UINT16;
	case 29:
		return ETC_FLOAT8E4M3FN;
	case 30:
		return ETC_FLOAT8E5M2;
	case 31:
		return ETC_FLOAT8E4M3FNUZ;
	case 32:
		return ETC_FLOAT8E5M2FNUZ;
	default:
		return -1; /* unknown, complex */
	}
}

json_t *ref_union_get(const json_t *u, const char **key)
{
	const char *k;
	json_t *v, *none = NULL;
	const char *none_key = NULL;
	if (!json_is_object(u))
		return NULL;
	json_object_foreach((json_t *)u, k, v)
	{
		if (json_is_null(v))
			continue;
		if (strcmp(k, "as_none") == 0) {
			none = v, none_key = k;
			continue;
		}
		if (key)
			*key = k;
		return v;
	}
	if (none && key)
		*key = none_key;
	return none;
}

/* --- JSON with Python's non-finite tokens ---------------------------------- */

static size_t nonfinite_at(const char *p, size_t left)
{
	static const char *const tok[] = {"NaN", "Infinity", "-Infinity"};
	for (size_t t = 0; t < 3; t++) {
		size_t n = strlen(tok[t]);
		if (left >= n && memcmp(p, tok[t], n) == 0)
			return n;
	}
	return 0;
}

/* The index just after the JSON value starting at or after text[i] (strings
 * and nesting skipped); len when the text ends first. */
static size_t skip_value(const char *text, size_t len, size_t i)
{
	while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
		i++;
	size_t depth = 0;
	bool in_str = false;
	for (; i < len; i++) {
		char c = text[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"' && (in_str = false, depth == 0))
				return i + 1;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return i; /* a scalar ended by its container */
			if (--depth == 0)
				return i + 1;
		} else if (depth == 0 &&
		           (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r')) {
			return i;
		}
	}
	return len;
}

static bool dropped(const char *key, size_t n, const char *const *drop)
{
	for (size_t d = 0; drop && drop[d]; d++)
		if (strlen(drop[d]) == n && memcmp(drop[d], key, n) == 0)
			return true;
	return false;
}

int ref_json_parse(const char *text, size_t len, const char *const *drop, const char *what,
                   json_t **out, etc_error *err)
{
	*out = NULL;
	size_t extra = 0;
	bool in_str = false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == 'N' || c == 'I' || c == '-') {
			size_t n = nonfinite_at(text + i, len - i);
			if (n) {
				extra += 2;
				i += n - 1;
			}
		}
	}
	char *copy = NULL;
	if (extra || drop) {
		copy = malloc(len + extra + 1);
		if (!copy)
			return etc_fail(err, ETC_ERR_NOMEM, what, -1, "out of memory");
		size_t o = 0;
		for (size_t i = 0; i < len;) {
			char c = text[i];
			if (c == '"') {
				size_t start = i++;
				while (i < len && text[i] != '"')
					i += text[i] == '\\' ? 2 : 1;
				i = i < len ? i + 1 : len;
				memcpy(copy + o, text + start, i - start);
				o += i - start;
				size_t k = i;
				while (k < len && (text[k] == ' ' || text[k] == '\n' ||
				                   text[k] == '\t' || text[k] == '\r'))
					k++;
				if (k < len && text[k] == ':' && i - start >= 2 &&
				    dropped(text + start + 1, i - start - 2, drop)) {
					size_t end = skip_value(text, len, k + 1);
					/* ":null" replaces at least as many bytes: never longer */
					if (end - k >= 5) {
						memcpy(copy + o, ":null", 5);
						o += 5;
						i = end;
					}
				}
				continue;
			}
			size_t n = (c == 'N' || c == 'I' || c == '-')
			               ? nonfinite_at(text + i, len - i)
			               : 0;
			if (n) {
				copy[o++] = '"';
				memcpy(copy + o, text + i, n);
				o += n;
				copy[o++] = '"';
				i += n;
			} else {
				copy[o++] = c;
				i++;
			}
		}
		text = copy;
		len = o;
	}
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	free(copy);
	if (!j)
		return etc_fail(err, ETC_ERR_FORMAT, what, -1,
		                "invalid JSON at line %d column %d: %s", je.line, je.column,
		                je.text);
	*out = j;
	return 0;
}

bool ref_json_number(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return true;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (strcmp(s, "NaN") == 0)
			*out = NAN;
		else if (strcmp(s, "Infinity") == 0)
			*out = INFINITY;
		else if (strcmp(s, "-Infinity") == 0)
			*out = -INFINITY;
		else
			return false;
		return true;
	}
	return false;
}

/* --- arguments --------------------------------------------------------------- */

typedef struct decoder {
	etc_arena *arena;
	ref_lookup_fn lookup;
	void *user;
	const char *node, *op, *arg;
	etc_error *err;
} decoder;

static int bad(const decoder *d, const char *what)
{
	return etc_fail(d->err, ETC_ERR_FORMAT, NULL, -1, "node %s (%s): argument %s: %s", d->node,
	                d->op, d->arg[0] ? d->arg : "?", what);
}

static int nomem(const decoder *d)
{
	return etc_fail(d->err, ETC_ERR_NOMEM, NULL, -1, "node %s (%s): out of memory", d->node,
	                d->op);
}

/* {"name": "x"} -> the tensor called x */
static int tensor_ref(const decoder *d, const json_t *v, const ref_tensor **out)
{
	const json_t *nm = json_object_get(v, "name");
	if (!json_is_string(nm))
		return bad(d, "a tensor reference without a name");
	const char *name = json_string_value(nm);
	*out = d->lookup(d->user, name);
	if (!*out) {
		char msg[320];
		snprintf(msg, sizeof msg, "names tensor \"%.200s\" that no input or node produces",
		         name);
		return bad(d, msg);
	}
	return 0;
}

static int tensor_list(const decoder *d, const json_t *v, bool optional, ref_arg *a)
{
	if (!json_is_array(v))
		return bad(d, "a tensor list that is not a list");
	size_t n = json_array_size(v);
	const ref_tensor **ts = etc_arena_alloc(d->arena, n ? n : 1, sizeof *ts);
	if (!ts)
		return nomem(d);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(v, i);
		if (optional) {
			const char *k = NULL;
			const json_t *m = ref_union_get(e, &k);
			if (!m || strcmp(k, "as_none") == 0) {
				ts[i] = NULL;
				continue;
			}
			if (strcmp(k, "as_tensor") != 0)
				return bad(d,
				           "an optional tensor that is neither a tensor nor None");
			e = m;
		}
		ETC_TRY(tensor_ref(d, e, &ts[i]));
	}
	a->kind = optional ? REF_ARG_OPT_TENSORS : REF_ARG_TENSORS;
	a->ts = ts;
	a->n = n;
	return 0;
}

/* as_int / as_bool values, also inside a SymIntArgument / SymBoolArgument */
static bool int_value(const json_t *v, const char *inner, int64_t *out)
{
	if (json_is_object(v)) {
		const char *k = NULL;
		v = ref_union_get(v, &k);
		if (!v || strcmp(k, inner) != 0)
			return false;
	}
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return true;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return true;
	}
	return false;
}

static bool float_value(const json_t *v, double *out)
{
	if (json_is_object(v)) {
		const char *k = NULL;
		v = ref_union_get(v, &k);
		if (!v || strcmp(k, "as_float") != 0)
			return false;
	}
	return ref_json_number(v, out);
}

static int int_list(const decoder *d, const json_t *v, const char *inner, bool *ok, ref_arg *a)
{
	size_t n = json_array_size(v);
	int64_t *ints = etc_arena_alloc(d->arena, n ? n : 1, sizeof *ints);
	if (!ints)
		return nomem(d);
	*ok = json_is_array(v);
	for (size_t i = 0; *ok && i < n; i++)
		*ok = int_value(json_array_get(v, i), inner, &ints[i]);
	a->ints = ints;
	a->n = n;
	return 0;
}

static int float_list(const decoder *d, const json_t *v, bool *ok, ref_arg *a)
{
	size_t n = json_array_size(v);
	double *fl = etc_arena_alloc(d->arena, n ? n : 1, sizeof *fl);
	if (!fl)
		return nomem(d);
	*ok = json_is_array(v);
	for (size_t i = 0; *ok && i < n; i++)
		*ok = float_value(json_array_get(v, i), &fl[i]);
	a->floats = fl;
	a->n = n;
	return 0;
}

static int other(const decoder *d, const char *key, const json_t *v, ref_arg *a)
{
	a->kind = REF_ARG_OTHER;
	a->s = etc_arena_strdup(d->arena, key, strlen(key));
	if (!a->s)
		return nomem(d);
	if (json_is_integer(v))
		a->i = json_integer_value(v);
	return 0;
}

static int decode_one(const decoder *d, const json_t *u, ref_arg *a)
{
	const char *k = NULL;
	const json_t *v = ref_union_get(u, &k);
	bool ok = true;
	if (!json_is_object(u))
		return bad(d, "not a serialized argument (an object with one set member)");
	if (!v || strcmp(k, "as_none") == 0) {
		a->kind = REF_ARG_NONE;
		return 0;
	}
	if (strcmp(k, "as_tensor") == 0) {
		a->kind = REF_ARG_TENSOR;
		return tensor_ref(d, v, &a->t);
	}
	if (strcmp(k, "as_optional_tensor") == 0) {
		const char *ik = NULL;
		const json_t *iv = ref_union_get(v, &ik);
		if (!iv || strcmp(ik, "as_none") == 0) {
			a->kind = REF_ARG_NONE;
			return 0;
		}
		if (strcmp(ik, "as_tensor") != 0)
			return bad(d, "an optional tensor that is neither a tensor nor None");
		a->kind = REF_ARG_TENSOR;
		return tensor_ref(d, iv, &a->t);
	}
	if (strcmp(k, "as_tensors") == 0)
		return tensor_list(d, v, false, a);
	if (strcmp(k, "as_optional_tensors") == 0)
		return tensor_list(d, v, true, a);
	if (strcmp(k, "as_int") == 0 || strcmp(k, "as_sym_int") == 0) {
		a->kind = REF_ARG_INT;
		if (!json_is_boolean(v) && int_value(v, "as_int", &a->i))
			return 0;
		if (k[3] == 's' && json_is_object(v))
			return other(d, k, NULL, a); /* a symbolic int (as_name) */
		return bad(d, "as_int is not an integer");
	}
	if (strcmp(k, "as_bool") == 0 || strcmp(k, "as_sym_bool") == 0) {
		a->kind = REF_ARG_BOOL;
		if (json_is_object(v) ? int_value(v, "as_bool", &a->i) : json_is_boolean(v)) {
			if (!json_is_object(v))
				a->i = json_is_true(v);
			return 0;
		}
		if (k[3] == 's' && json_is_object(v))
			return other(d, k, NULL, a);
		return bad(d, "as_bool is not a boolean");
	}
	if (strcmp(k, "as_float") == 0 || strcmp(k, "as_sym_float") == 0) {
		a->kind = REF_ARG_FLOAT;
		if (float_value(v, &a->f))
			return 0;
		if (k[3] == 's' && json_is_object(v))
			return other(d, k, NULL, a);
		return bad(d, "as_float is not a number");
	}
	if (strcmp(k, "as_ints") == 0 || strcmp(k, "as_sym_ints") == 0) {
		a->kind = REF_ARG_INTS;
		ETC_TRY(int_list(d, v, "as_int", &ok, a));
		if (ok)
			return 0;
		if (k[3] == 's' && json_is_array(v))
			return other(d, k, NULL, a);
		return bad(d, "as_ints is not a list of integers");
	}
	if (strcmp(k, "as_bools") == 0 || strcmp(k, "as_sym_bools") == 0) {
		a->kind = REF_ARG_BOOLS;
		ETC_TRY(int_list(d, v, "as_bool", &ok, a));
		if (ok)
			return 0;
		if (k[3] == 's' && json_is_array(v))
			return other(d, k, NULL, a);
		return bad(d, "as_bools is not a list of booleans");
	}
	if (strcmp(k, "as_floats") == 0 || strcmp(k, "as_sym_floats") == 0) {
		a->kind = REF_ARG_FLOATS;
		ETC_TRY(float_list(d, v, &ok, a));
		if (ok)
			return 0;
		if (k[3] == 's' && json_is_array(v))
			return other(d, k, NULL, a);
		return bad(d, "as_floats is not a list of numbers");
	}
	if (strcmp(k, "as_string") == 0) {
		if (!json_is_string(v))
			return bad(d, "as_string is not a string");
		a->kind = REF_ARG_STRING;
		a->s = etc_arena_strdup(d->arena, json_string_value(v), json_string_length(v));
		return a->s ? 0 : nomem(d);
	}
	if (strcmp(k, "as_scalar_type") == 0) {
		if (!json_is_integer(v))
			return bad(d, "as_scalar_type is not an integer");
		int dt = ref_serde_dtype(json_integer_value(v));
		if (dt < 0)
			return other(d, k, v, a);
		a->kind = REF_ARG_DTYPE;
		a->i = dt;
		return 0;
	}
	/* as_memory_format, as_layout, as_device, as_strings, as_graph, ... */
	return other(d, k, v, a);
}

int ref_args_decode(etc_arena *arena, const json_t *inputs, ref_lookup_fn lookup, void *user,
                    const char *node, const char *op, ref_arg **out, size_t *n, etc_error *err)
{
	decoder d = {arena, lookup, user, node, op, "", err};
	*out = NULL;
	*n = 0;
	if (!json_is_array(inputs))
		return etc_fail(err, ETC_ERR_FORMAT, NULL, -1,
		                "node %s (%s): \"inputs\" is not a list of arguments", node, op);
	size_t count = json_array_size(inputs);
	ref_arg *args = etc_arena_alloc(arena, count ? count : 1, sizeof *args);
	if (!args)
		return nomem(&d);
	for (size_t i = 0; i < count; i++) {
		const json_t *na = json_array_get(inputs, i);
		const json_t *nm = json_object_get(na, "name");
		const json_t *u = json_object_get(na, "arg");
		char pos[32];
		ref_arg *a = &args[i];
		memset(a, 0, sizeof *a);
		if (json_is_string(nm)) {
			a->name =
			    etc_arena_strdup(arena, json_string_value(nm), json_string_length(nm));
			if (!a->name)
				return nomem(&d);
		} else {
			a->name = "";
		}
		snprintf(pos, sizeof pos, "#%zu", i);
		d.arg = a->name[0] ? a->name : pos;
		if (!json_is_object(na) || !u)
			return bad(&d, "not a {\"name\", \"arg\"} object");
		ETC_TRY(decode_one(&d, u, a));
	}
	*out = args;
	*n = count;
	return 0;
}
