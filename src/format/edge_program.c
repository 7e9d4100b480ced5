/*
 * edge_program.c - the Edge program's nodes, read in one streaming pass.
 *
 * Node JSON (torch export serializer; 2023 records write every argument
 * union key with nulls, newer ones only the set key):
 *   {"name"?: "aten_mul_tensor", "target": "executorch.exir.dialects.edge.ops.aten.mul.Tensor",
 *    "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "arg0_1"}}}, ...],
 *    "outputs": [{"as_tensor": {"name": "aten_mul_tensor"}}],
 *    "metadata": {"debug_handle": "2", "stack_trace": "...", "nn_module_stack": "...",
 *                 "source_fn_stack": "..."}}
 *
 * Node names are the ones torch's deserializer gives (upstream's Inspector
 * reads the program through it): a node returning one tensor is named after
 * that output; any other node (a tuple or list of tensors: native_layer_norm,
 * split_with_sizes_copy, ...) gets the name FX generates from its target,
 * "aten_native_layer_norm_default", "_1", "_2" ... for the next ones.
 */
#include "format/edge_program.h"
#include "core/fmt.h"
#include "format/jsonscan.h"

#include <errno.h>
#include <stdlib.h>

#define EDGE_OPS  "executorch.exir.dialects.edge.ops."
#define ARG_LIMIT 4096

typedef struct ctx {
	etc_jscan j;
	etc_arena *a;
	etc_sbuf args;
	const char **outv; /* the current node's output names ("name" strings under outputs) */
	size_t outc, outcap;
	bool single_tensor;  /* outputs is [{"as_tensor": {...}}] */
	etc_graph_arg *argv; /* the current node's arguments (copied to the arena) */
	size_t argc, argcap;
} ctx;

static void put_limited(etc_sbuf *b, const char *s, size_t n)
{
	if (b->len >= ARG_LIMIT)
		return;
	if (b->len + n > ARG_LIMIT) {
		etc_sbuf_put(b, s, ARG_LIMIT - b->len);
		etc_sbuf_puts(b, "...");
		return;
	}
	etc_sbuf_put(b, s, n);
}

/* Renders the value whose first token is `t`: tensors by name, unions by
 * their set member, strings quoted, literals as Python writes them. */
static int render(ctx *c, etc_jtok t, bool bare_string)
{
	etc_sbuf *b = &c->args;
	char tmp[48];
	switch (t) {
	case ETC_J_STRING:
		if (c->j.len > 40 && !bare_string) {
			snprintf(tmp, sizeof tmp, "<%zu characters>", c->j.len);
			put_limited(b, tmp, strlen(tmp));
		} else {
			if (!bare_string)
				put_limited(b, "'", 1);
			put_limited(b, c->j.s, c->j.len);
			if (!bare_string)
				put_limited(b, "'", 1);
		}
		return 0;
	case ETC_J_NUMBER:
		put_limited(b, c->j.s, c->j.len);
		return 0;
	case ETC_J_TRUE:
		put_limited(b, "True", 4);
		return 0;
	case ETC_J_FALSE:
		put_limited(b, "False", 5);
		return 0;
	case ETC_J_NULL:
		put_limited(b, "None", 4);
		return 0;
	case ETC_J_ARRAY: {
		put_limited(b, "[", 1);
		for (bool first = true;; first = false) {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			if (t == ETC_J_ARRAY_END)
				break;
			if (!first)
				put_limited(b, ", ", 2);
			ETC_TRY(render(c, t, false));
		}
		put_limited(b, "]", 1);
		return 0;
	}
	case ETC_J_OBJECT: {
		/* a union or a {"name": ...} reference: the first member that is set */
		bool shown = false;
		for (;;) {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			if (t == ETC_J_OBJECT_END)
				break;
			bool is_name =
			    etc_jscan_key_is(&c->j, "name") || etc_jscan_key_is(&c->j, "as_name");
			bool is_none = etc_jscan_key_is(&c->j, "as_none");
			ETC_TRY(etc_jscan_next(&c->j, &t));
			if (shown || t == ETC_J_NULL) {
				ETC_TRY(etc_jscan_skip(&c->j, t));
				continue;
			}
			if (is_none) {
				/* as_none holds a placeholder ([] or true): the value is None */
				ETC_TRY(etc_jscan_skip(&c->j, t));
				put_limited(&c->args, "None", 4);
			} else {
				ETC_TRY(render(c, t, is_name));
			}
			shown = true;
		}
		if (!shown)
			put_limited(b, "None", 4);
		return 0;
	}
	default:
		return etc_jscan_fail(&c->j, "a value expected");
	}
}

/*
 * The op name the Inspector shows (upstream: target.__name__): edge ops keep
 * their namespace ("aten.mul.Tensor"), torch ops drop it ("mul.Tensor"),
 * higher-order ops are their bare name ("executorch_call_delegate").
 */
static const char *short_op(const char *t)
{
	static const char *const prefixes[] = {EDGE_OPS, "torch.ops.higher_order."};
	for (size_t i = 0; i < 2; i++)
		if (strncmp(t, prefixes[i], strlen(prefixes[i])) == 0)
			return t + strlen(prefixes[i]);
	if (strncmp(t, "torch.ops.", 10) == 0) {
		const char *ns_end = strchr(t + 10, '.');
		if (ns_end && ns_end[1])
			return ns_end + 1;
	}
	return t;
}

/* Skips a value, remembering the first string under a "name" key. */
static int find_name(ctx *c, etc_jtok t)
{
	if (t != ETC_J_OBJECT && t != ETC_J_ARRAY)
		return 0;
	int depth = c->j.depth - 1;
	bool name_key = false;
	while (c->j.depth > depth) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_KEY) {
			name_key = etc_jscan_key_is(&c->j, "name");
			continue;
		}
		if (t == ETC_J_STRING && name_key) {
			if (c->outc == c->outcap) {
				size_t nc = c->outcap ? 2 * c->outcap : 8;
				const char **nv = realloc(c->outv, nc * sizeof *nv);
				if (!nv)
					return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1,
					                "out of memory");
				c->outv = nv;
				c->outcap = nc;
			}
			c->outv[c->outc] = etc_jscan_string(&c->j, c->a);
			if (!c->outv[c->outc])
				return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1,
				                "out of memory");
			c->outc++;
		}
		name_key = false;
	}
	return 0;
}

/* "outputs": [{"as_tensor": {"name": N}}] for an op returning one tensor;
 * several entries or "as_tensors" for a tuple or list. 2023 records write
 * every union key, the unset ones null. Remembers the first name. */
static int parse_outputs(ctx *c, etc_jtok t)
{
	if (t != ETC_J_ARRAY)
		return find_name(c, t);
	size_t n = 0;
	bool first_tensor = false;
	for (;;) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_ARRAY_END)
			break;
		if (t == ETC_J_OBJECT) {
			for (;;) {
				ETC_TRY(etc_jscan_next(&c->j, &t));
				if (t == ETC_J_OBJECT_END)
					break;
				bool tensor = etc_jscan_key_is(&c->j, "as_tensor");
				ETC_TRY(etc_jscan_next(&c->j, &t));
				if (tensor && t == ETC_J_OBJECT && n == 0)
					first_tensor = true;
				ETC_TRY(find_name(c, t));
			}
		} else {
			ETC_TRY(find_name(c, t));
		}
		n++;
	}
	c->single_tensor = n == 1 && first_tensor;
	return 0;
}

static int string_value(ctx *c, const char **out, const char *what)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&c->j, &t));
	if (t == ETC_J_NULL)
		return 0;
	if (t != ETC_J_STRING)
		return etc_jscan_fail(&c->j, "%s must be a string", what);
	*out = etc_jscan_string(&c->j, c->a);
	return *out ? 0 : ETC_ERR_NOMEM;
}

static int parse_metadata(ctx *c, etc_graph_node *nd, size_t i)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&c->j, &t));
	if (t == ETC_J_NULL)
		return 0;
	if (t != ETC_J_OBJECT)
		return etc_jscan_fail(&c->j, "node %zu: metadata is not an object", i);
	for (;;) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_OBJECT_END)
			return 0;
		if (etc_jscan_key_is(&c->j, "stack_trace")) {
			ETC_TRY(string_value(c, &nd->stack_trace, "stack_trace"));
		} else if (etc_jscan_key_is(&c->j, "nn_module_stack")) {
			ETC_TRY(string_value(c, &nd->nn_module_stack, "nn_module_stack"));
		} else if (etc_jscan_key_is(&c->j, "source_fn_stack")) {
			ETC_TRY(string_value(c, &nd->source_fn_stack, "source_fn_stack"));
		} else if (etc_jscan_key_is(&c->j, "debug_handle")) {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			if (t == ETC_J_NULL)
				continue;
			char buf[32];
			if ((t != ETC_J_STRING && t != ETC_J_NUMBER) || c->j.len == 0 ||
			    c->j.len >= sizeof buf || c->j.escaped)
				return etc_jscan_fail(
				    &c->j,
				    "node %zu: debug_handle is not a non-negative "
				    "integer",
				    i);
			memcpy(buf, c->j.s, c->j.len);
			buf[c->j.len] = '\0';
			char *end;
			errno = 0;
			long long v = strtoll(buf, &end, 10);
			if (*end || v < 0 || errno || buf[0] == '-' || buf[0] == '+' ||
			    buf[0] == ' ')
				return etc_jscan_fail(&c->j,
				                      "node %zu: debug_handle \"%s\" is not a "
				                      "non-negative integer",
				                      i, buf);
			nd->debug_handle = v;
		} else {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			ETC_TRY(etc_jscan_skip(&c->j, t));
		}
	}
}

/* The rendered text args[from..] (what one argument wrote) in the arena. */
static const char *rendered_since(ctx *c, size_t from)
{
	size_t to = c->args.len;
	if (from > to || !c->args.p)
		return "";
	char *s = etc_arena_strdup(c->a, c->args.p + from, to - from);
	return s ? s : "";
}

/* An argument union {"as_<kind>": value, ...}: its first set member is
 * rendered, and its key kept as the argument's kind. */
static int render_arg(ctx *c, etc_graph_arg *ga)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&c->j, &t));
	size_t from = c->args.len;
	if (t != ETC_J_OBJECT) {
		ETC_TRY(render(c, t, false));
		ga->value = rendered_since(c, from);
		return 0;
	}
	bool shown = false;
	for (;;) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_OBJECT_END)
			break;
		bool is_name =
		    etc_jscan_key_is(&c->j, "name") || etc_jscan_key_is(&c->j, "as_name");
		bool is_none = etc_jscan_key_is(&c->j, "as_none");
		const char *ks = c->j.escaped ? NULL : c->j.s; /* the span stays in the text */
		size_t kl = c->j.len;
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (shown || t == ETC_J_NULL) {
			ETC_TRY(etc_jscan_skip(&c->j, t));
			continue;
		}
		if (is_none) {
			ETC_TRY(etc_jscan_skip(&c->j, t));
			put_limited(&c->args, "None", 4);
		} else {
			ETC_TRY(render(c, t, is_name));
		}
		char *key = ks ? etc_arena_strdup(c->a, ks, kl) : NULL;
		ga->kind = key ? key : "";
		shown = true;
	}
	if (!shown)
		put_limited(&c->args, "None", 4);
	ga->value = rendered_since(c, from);
	return 0;
}

static int push_arg(ctx *c, etc_graph_arg **out)
{
	if (c->argc == c->argcap) {
		size_t nc = c->argcap ? c->argcap * 2 : 8;
		etc_graph_arg *v = realloc(c->argv, nc * sizeof *v);
		if (!v)
			return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1, "out of memory");
		c->argv = v;
		c->argcap = nc;
	}
	*out = &c->argv[c->argc++];
	**out = (etc_graph_arg){"", "", ""};
	return 0;
}

static int parse_inputs(ctx *c, size_t i)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&c->j, &t));
	if (t == ETC_J_NULL)
		return 0;
	if (t != ETC_J_ARRAY)
		return etc_jscan_fail(&c->j, "node %zu: inputs is not a list", i);
	for (bool first = true;; first = false) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_ARRAY_END)
			return 0;
		if (t != ETC_J_OBJECT)
			return etc_jscan_fail(&c->j, "node %zu: an input is not an object", i);
		if (!first)
			put_limited(&c->args, ", ", 2);
		etc_graph_arg *ga = NULL;
		ETC_TRY(push_arg(c, &ga));
		for (;;) {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			if (t == ETC_J_OBJECT_END)
				break;
			if (etc_jscan_key_is(&c->j, "name")) {
				ETC_TRY(etc_jscan_next(&c->j, &t));
				if (t == ETC_J_STRING) {
					put_limited(&c->args, c->j.s, c->j.len);
					put_limited(&c->args, "=", 1);
					const char *nm = etc_jscan_string(&c->j, c->a);
					ga->name = nm ? nm : "";
				} else {
					ETC_TRY(etc_jscan_skip(&c->j, t));
				}
			} else if (etc_jscan_key_is(&c->j, "arg")) {
				ETC_TRY(render_arg(c, ga));
			} else {
				ETC_TRY(etc_jscan_next(&c->j, &t));
				ETC_TRY(etc_jscan_skip(&c->j, t));
			}
		}
	}
}

static int parse_node(ctx *c, etc_graph_node *nd, size_t i)
{
	etc_jtok t;
	const char *name = NULL;
	memset(nd, 0, sizeof *nd);
	nd->debug_handle = -1;
	etc_sbuf_reset(&c->args);
	c->outc = 0;
	c->single_tensor = false;
	c->argc = 0;
	for (;;) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_OBJECT_END)
			break;
		if (etc_jscan_key_is(&c->j, "target")) {
			ETC_TRY(string_value(c, &nd->target, "target"));
		} else if (etc_jscan_key_is(&c->j, "name")) {
			ETC_TRY(string_value(c, &name, "name"));
		} else if (etc_jscan_key_is(&c->j, "inputs")) {
			ETC_TRY(parse_inputs(c, i));
		} else if (etc_jscan_key_is(&c->j, "outputs")) {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			ETC_TRY(parse_outputs(c, t));
		} else if (etc_jscan_key_is(&c->j, "metadata")) {
			ETC_TRY(parse_metadata(c, nd, i));
		} else {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			ETC_TRY(etc_jscan_skip(&c->j, t));
		}
	}
	if (!nd->target)
		return etc_fail(c->j.err, ETC_ERR_FORMAT, c->j.file, -1,
		                "member %s: node %zu has no string \"target\"", c->j.member, i);
	nd->op = short_op(nd->target);
	/* NULL: generated once every node is read (generate_names) */
	nd->name = name ? name : c->single_tensor && c->outc ? c->outv[0] : NULL;
	if (c->outc) {
		const char **ov = etc_arena_alloc(c->a, c->outc, sizeof *ov);
		if (!ov)
			return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1, "out of memory");
		memcpy(ov, c->outv, c->outc * sizeof *ov);
		nd->outputs = ov;
		nd->output_count = (uint32_t)c->outc;
	}
	nd->inputs = etc_arena_strdup(c->a, c->args.p ? c->args.p : "", c->args.len);
	if (!nd->stack_trace)
		nd->stack_trace = "";
	if (!nd->nn_module_stack)
		nd->nn_module_stack = "";
	if (!nd->source_fn_stack)
		nd->source_fn_stack = "";
	if (c->argc) {
		etc_graph_arg *av = etc_arena_alloc(c->a, c->argc, sizeof *av);
		if (!av)
			return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1, "out of memory");
		memcpy(av, c->argv, c->argc * sizeof *av);
		nd->args = av;
		nd->arg_count = (uint32_t)c->argc;
	}
	if (!nd->inputs || c->args.failed)
		return etc_fail(c->j.err, ETC_ERR_NOMEM, c->j.file, -1, "out of memory");
	return 0;
}

/* A set of names (open addressing); `next` is the suffix FX tries next
 * for a base name. */
typedef struct name_slot {
	const char *name;
	unsigned long next;
} name_slot;

static size_t name_hash(const char *s)
{
	size_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static name_slot *name_find(name_slot *set, size_t cap, const char *s)
{
	size_t at = name_hash(s) & (cap - 1);
	while (set[at].name && strcmp(set[at].name, s) != 0)
		at = (at + 1) & (cap - 1);
	return &set[at];
}

/* FX's name for a node the deserializer names itself (torch.fx Graph's
 * _target_to_str and _Namespace.create_name): the short target in snake
 * case, each run of characters not allowed in a Python identifier replaced
 * by "_", then the first of base, base_1, base_2 ... not taken. */
static int generate_names(etc_arena *a, etc_graph_node *v, size_t n, const char *file,
                          etc_error *err)
{
	size_t cap = 16;
	while (cap < 2 * n + 2)
		cap <<= 1;
	name_slot *set = calloc(cap, sizeof *set);
	if (!set)
		return etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (v[i].name && !name_find(set, cap, v[i].name)->name)
			*name_find(set, cap, v[i].name) = (name_slot){v[i].name, 1};
	etc_sbuf b = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (v[i].name)
			continue;
		etc_sbuf_reset(&b);
		bool prev_lower = false, illegal = false;
		for (const char *p = v[i].op; *p; p++) {
			char ch = *p;
			bool ok = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
			          (ch >= 'A' && ch <= 'Z') || ch == '_';
			if (!ok) {
				if (!illegal)
					etc_sbuf_put(&b, "_", 1);
				illegal = true;
				prev_lower = false;
				continue;
			}
			illegal = false;
			if (prev_lower && ch >= 'A' && ch <= 'Z')
				etc_sbuf_put(&b, "_", 1);
			prev_lower = ch >= 'a' && ch <= 'z';
			if (ch >= 'A' && ch <= 'Z')
				ch = (char)(ch - 'A' + 'a');
			etc_sbuf_put(&b, &ch, 1);
		}
		if (!b.len || (b.p[0] >= '0' && b.p[0] <= '9')) {
			etc_sbuf tmp = {0};
			etc_sbuf_printf(&tmp, "_%s", b.len ? b.p : "unnamed");
			etc_sbuf_free(&b);
			b = tmp;
		}
		if (b.failed) {
			rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
			break;
		}
		name_slot *base = name_find(set, cap, b.p);
		if (base->name) {
			size_t len = b.len;
			unsigned long k = base->next;
			for (;; k++) {
				b.len = len;
				b.p[len] = '\0';
				etc_sbuf_printf(&b, "_%lu", k);
				if (b.failed || !name_find(set, cap, b.p)->name)
					break;
			}
			base->next = k + 1;
		}
		const char *name = b.failed ? NULL : etc_arena_strdup(a, b.p, b.len);
		if (!name) {
			rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
			break;
		}
		*name_find(set, cap, name) = (name_slot){name, 1};
		v[i].name = name;
	}
	etc_sbuf_free(&b);
	free(set);
	return rc;
}

/* Walks to graph_module.graph.nodes; returns 1 when positioned inside the array. */
static int descend(ctx *c, const char *const *path, int n)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&c->j, &t));
	if (t != ETC_J_OBJECT)
		return etc_jscan_fail(&c->j, "an object expected for \"%s\"", path[0]);
	for (;;) {
		ETC_TRY(etc_jscan_next(&c->j, &t));
		if (t == ETC_J_OBJECT_END)
			return 0;
		if (etc_jscan_key_is(&c->j, path[0])) {
			if (n == 1) {
				ETC_TRY(etc_jscan_next(&c->j, &t));
				if (t != ETC_J_ARRAY)
					return etc_jscan_fail(&c->j, "\"nodes\" is not a list");
				return 1;
			}
			int rc = descend(c, path + 1, n - 1);
			if (rc != 0)
				return rc;
		} else {
			ETC_TRY(etc_jscan_next(&c->j, &t));
			ETC_TRY(etc_jscan_skip(&c->j, t));
		}
	}
}

int etc_edge_program_parse(etc_arena *a, const char *data, size_t size, const char *file,
                           const char *member, int64_t base, etc_graph_node **nodes, size_t *count,
                           etc_error *err)
{
	static const char *const path[] = {"graph_module", "graph", "nodes"};
	ctx c;
	memset(&c, 0, sizeof c);
	c.a = a;
	etc_jscan_init(&c.j, data, size, ETC_ETRECORD_MAX_JSON_DEPTH, file, member, base, err);
	/* the root object holds graph_module */
	etc_jtok t;
	int rc = etc_jscan_next(&c.j, &t);
	if (rc == 0 && t != ETC_J_OBJECT)
		rc = etc_jscan_fail(&c.j, "the Edge program is not a JSON object");
	etc_graph_node *v = NULL;
	size_t n = 0, cap = 0;
	bool found = false;
	while (rc == 0) {
		rc = etc_jscan_next(&c.j, &t);
		if (rc < 0 || t == ETC_J_OBJECT_END)
			break;
		if (!etc_jscan_key_is(&c.j, path[0])) {
			if ((rc = etc_jscan_next(&c.j, &t)) == 0)
				rc = etc_jscan_skip(&c.j, t);
			continue;
		}
		rc = descend(&c, path + 1, 2);
		if (rc <= 0)
			continue;
		found = true;
		rc = 0;
		for (;;) {
			if ((rc = etc_jscan_next(&c.j, &t)) < 0 || t == ETC_J_ARRAY_END)
				break;
			if (t != ETC_J_OBJECT) {
				rc = etc_jscan_fail(&c.j, "node %zu is not an object", n);
				break;
			}
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				etc_graph_node *nv = realloc(v, nc * sizeof *nv);
				if (!nv) {
					rc =
					    etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
					break;
				}
				v = nv;
				cap = nc;
			}
			if ((rc = parse_node(&c, &v[n], n)) < 0)
				break;
			n++;
		}
		/* the rest of graph and graph_module, then the root */
		while (rc == 0 && c.j.depth > 1) {
			rc = etc_jscan_next(&c.j, &t);
			if (rc == 0 && t != ETC_J_OBJECT_END && t != ETC_J_ARRAY_END &&
			    t != ETC_J_KEY)
				rc = etc_jscan_skip(&c.j, t);
		}
	}
	if (rc == 0) /* nothing may follow the root object */
		rc = etc_jscan_next(&c.j, &t);
	if (rc == 0 && !found)
		rc = etc_fail(err, ETC_ERR_FORMAT, file, -1,
		              "member %s: no graph_module.graph.nodes list", member);
	if (rc == 0)
		rc = generate_names(a, v, n, file, err);
	if (rc == 0) {
		*nodes = etc_arena_alloc(a, n ? n : 1, sizeof **nodes);
		if (!*nodes)
			rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
		else if (n)
			memcpy(*nodes, v, n * sizeof *v);
		*count = n;
	}
	free(v);
	free(c.outv);
	free(c.argv);
	etc_sbuf_free(&c.args);
	return rc;
}
