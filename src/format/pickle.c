/*
 * pickle.c - the restricted pickle machine: the opcode loop, the memo, the
 * graph check and etc_unpickle / etc_unpickle_prefix.
 *
 * Safety rules: only the opcodes of FORMATS.md §5 and the protocol 3-5 ones
 * pickle.dumps writes (bytes, short strings, FRAME, MEMOIZE, STACK_GLOBAL)
 * are interpreted; GLOBAL and STACK_GLOBAL resolve to an entry of a fixed
 * whitelist or fail, and REDUCE "calls" only data constructors (both in
 * pickle_torch.c). Stack, memo, object count and nesting depth are bounded,
 * and the finished object graph is checked for reference cycles (a list
 * appended to itself), so callers may walk it recursively. The objects
 * themselves are pickle_objects.c's; tensor element access is pytensor.c's.
 */
#include "format/pickle_private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int etc_pickle_fail_(vm *m, int status, const char *fmt, ...)
{
	char what[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	int64_t off = m->o->base_offset >= 0 ? m->o->base_offset + (int64_t)m->op_pos : -1;
	return etc_fail(m->err, status, m->o->file, off, "%s byte %zu: %s",
	                m->o->member ? m->o->member : "pickle", m->op_pos, what);
}

/* ---- reading ---------------------------------------------------------- */

static int need(vm *m, size_t k, const char *what)
{
	if (m->n - m->pos < k)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "%s needs %zu more bytes, the pickle ends after %zu", what,
		                        k, m->n - m->pos);
	return 0;
}

/* Python's utf-8 with surrogatepass: well-formed sequences, surrogates allowed. */
static bool utf8_ok(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp, min;
		if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff)
			return false;
		i += len;
	}
	return true;
}

static int op_build(vm *m)
{
	etc_pyobj *state = NULL, *inst = NULL;
	ETC_TRY(etc_pickle_pop_(m, &state, "BUILD"));
	ETC_TRY(etc_pickle_top_(m, &inst, "BUILD"));
	if (inst->kind != ETC_PY_DICT)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "BUILD on a %s is not supported",
		                        etc_pykind_name(inst->kind));
	if (state->kind == ETC_PY_NONE)
		return 0;
	if (state->kind != ETC_PY_DICT)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "BUILD: state is a %s, expected a dict",
		                        etc_pykind_name(state->kind));
	if (!inst->attrs) {
		ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_DICT, &inst->attrs));
	}
	for (uint32_t i = 0; i < state->len; i++)
		ETC_TRY(etc_pickle_dict_set_(m, inst->attrs, state->u.items[2 * (size_t)i],
		                             state->u.items[2 * (size_t)i + 1]));
	return 0;
}

static int make_tuple(vm *m, size_t start)
{
	size_t n = m->sp - start;
	etc_pyobj *t = NULL;
	ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_TUPLE, &t));
	if (n) {
		t->u.items = etc_arena_alloc(m->arena, n, sizeof *t->u.items);
		if (!t->u.items)
			return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
		memcpy(t->u.items, m->stack + start, n * sizeof *t->u.items);
	}
	t->len = t->cap = (uint32_t)n;
	m->sp = start;
	return etc_pickle_push_(m, t);
}

static int memo_put(vm *m, size_t idx)
{
	etc_pyobj *o = NULL;
	ETC_TRY(etc_pickle_top_(m, &o, "PUT"));
	if (idx >= m->max_memo)
		return etc_pickle_fail_(m, ETC_ERR_LIMIT, "memo index %zu exceeds the limit %zu",
		                        idx, m->max_memo);
	if (idx >= m->memo_cap) {
		size_t cap = m->memo_cap ? m->memo_cap : 64;
		while (cap <= idx)
			cap *= 2;
		if (cap > m->max_memo)
			cap = m->max_memo;
		etc_pyobj **nm = realloc(m->memo, cap * sizeof *nm);
		if (!nm)
			return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
		memset(nm + m->memo_cap, 0, (cap - m->memo_cap) * sizeof *nm);
		m->memo = nm;
		m->memo_cap = cap;
	}
	if (!m->memo[idx])
		m->memo_len++;
	m->memo[idx] = o;
	return 0;
}

static int memo_get(vm *m, size_t idx)
{
	if (idx >= m->memo_cap || !m->memo[idx])
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "memo entry %zu was never stored", idx);
	return etc_pickle_push_(m, m->memo[idx]);
}

static int scalar(vm *m, int kind, etc_pyobj **out)
{
	ETC_TRY(etc_pickle_new_obj_(m, kind, out));
	return etc_pickle_push_(m, *out);
}

/* LONG1: little-endian two's complement; INT when it fits int64. */
static int op_long1(vm *m)
{
	ETC_TRY(need(m, 1, "LONG1"));
	size_t k = m->p[m->pos++];
	ETC_TRY(need(m, k, "LONG1"));
	const uint8_t *b = m->p + m->pos;
	m->pos += k;
	uint8_t sign = (k && (b[k - 1] & 0x80)) ? 0xff : 0x00;
	size_t len = k; /* drop redundant sign-extension bytes */
	while (len > 1 && b[len - 1] == sign && ((b[len - 2] & 0x80) ? 0xff : 0x00) == sign)
		len--;
	etc_pyobj *o = NULL;
	if (len <= 8) {
		uint64_t v = sign ? UINT64_MAX : 0;
		for (size_t i = 0; i < len; i++) {
			v &= ~((uint64_t)0xff << (8 * i));
			v |= (uint64_t)b[i] << (8 * i);
		}
		ETC_TRY(scalar(m, ETC_PY_INT, &o));
		o->u.i = (int64_t)v;
		return 0;
	}
	ETC_TRY(scalar(m, ETC_PY_BIGINT, &o));
	uint8_t *copy = etc_arena_alloc(m->arena, len, 1);
	if (!copy)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	memcpy(copy, b, len);
	o->u.bytes = copy;
	o->len = (uint32_t)len;
	return 0;
}

/* Reads a `width`-byte little-endian length and checks that many bytes follow. */
static int counted(vm *m, size_t width, const char *op, uint64_t *len)
{
	ETC_TRY(need(m, width, op));
	uint64_t k = 0;
	for (size_t i = width; i-- > 0;)
		k = (k << 8) | m->p[m->pos + i];
	m->pos += width;
	if (k > m->n - m->pos)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT,
		                        "%s needs %llu more bytes, the pickle ends after %zu", op,
		                        (unsigned long long)k, m->n - m->pos);
	*len = k;
	return 0;
}

/* BINUNICODE, SHORT_BINUNICODE, BINUNICODE8: UTF-8 text of a counted length. */
static int op_binunicode(vm *m, size_t width, const char *op)
{
	uint64_t len;
	ETC_TRY(counted(m, width, op, &len));
	if (len > MAX_LEN)
		return etc_pickle_fail_(m, ETC_ERR_LIMIT, "%s: string of %llu bytes (at most %u)",
		                        op, (unsigned long long)len, MAX_LEN);
	uint32_t k = (uint32_t)len;
	const uint8_t *s = m->p + m->pos;
	if (!utf8_ok(s, k))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s: string is not valid UTF-8", op);
	m->pos += k;
	etc_pyobj *o = NULL;
	ETC_TRY(scalar(m, ETC_PY_STR, &o));
	char *copy = etc_arena_strdup(m->arena, (const char *)s, k);
	if (!copy)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	o->u.bytes = (const uint8_t *)copy;
	o->len = k;
	return 0;
}

/* Names of pickle opcodes this reader refuses, for clearer messages. */
static const char *opcode_name(uint8_t op)
{
	static const struct {
		uint8_t op;
		const char *name;
	} names[] = {
	    {'0', "POP"},
	    {'1', "POP_MARK"},
	    {'2', "DUP"},
	    {'F', "FLOAT"},
	    {'I', "INT"},
	    {'L', "LONG"},
	    {'P', "PERSID"},
	    {'S', "STRING"},
	    {'T', "BINSTRING"},
	    {'U', "SHORT_BINSTRING"},
	    {'V', "UNICODE"},
	    {'d', "DICT"},
	    {'g', "GET"},
	    {'i', "INST"},
	    {'l', "LIST"},
	    {'o', "OBJ"},
	    {'p', "PUT"},
	    {0x81, "NEWOBJ"},
	    {0x82, "EXT1"},
	    {0x83, "EXT2"},
	    {0x84, "EXT4"},
	    {0x8b, "LONG4"},
	    {0x8f, "EMPTY_SET"},
	    {0x90, "ADDITEMS"},
	    {0x91, "FROZENSET"},
	    {0x92, "NEWOBJ_EX"},
	    {0x96, "BYTEARRAY8"},
	    {0x97, "NEXT_BUFFER"},
	    {0x98, "READONLY_BUFFER"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].op == op)
			return names[i].name;
	return NULL;
}

/* ---- the graph check ------------------------------------------------------ */

static uint32_t child_count(const etc_pyobj *o)
{
	switch (o->kind) {
	case ETC_PY_TUPLE:
	case ETC_PY_LIST:
		return o->len;
	case ETC_PY_DICT:
		return 2 * o->len + (o->attrs ? 1 : 0);
	}
	return 0;
}

static etc_pyobj *child(const etc_pyobj *o, uint32_t i)
{
	if (o->kind == ETC_PY_DICT && i == 2 * o->len)
		return o->attrs;
	return o->u.items[i];
}

static bool is_container(const etc_pyobj *o)
{
	return o->kind == ETC_PY_TUPLE || o->kind == ETC_PY_LIST || o->kind == ETC_PY_DICT;
}

/*
 * Rejects reference cycles and nesting deeper than max_depth with one
 * iterative DFS (each object is visited once, however often it is shared).
 * The height of a scalar or tensor is 0, of a container 1 + its tallest item,
 * so [[1]] and [[]] are both 2 deep.
 */
static int check_graph(vm *m, etc_pyobj *root)
{
	typedef struct frame {
		etc_pyobj *o;
		uint32_t next;
	} frame;
	if (!child_count(root))
		return 0;
	frame *st = malloc((m->max_depth + 1) * sizeof *st);
	if (!st)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	size_t n = 0;
	int rc = 0;
	st[n++] = (frame){root, 0};
	root->colour = 1;
	root->height = 1;
	while (n && rc == 0) {
		frame *f = &st[n - 1];
		uint32_t h;
		etc_pyobj *parent;
		if (f->next < child_count(f->o)) {
			etc_pyobj *c = child(f->o, f->next++);
			if (c->colour == 1) {
				rc = etc_pickle_fail_(
				    m, ETC_ERR_FORMAT,
				    "the pickle builds a reference cycle (a %s that "
				    "contains itself)",
				    etc_pykind_name(c->kind));
				break;
			}
			if (c->colour == 0 && child_count(c)) {
				if (n + 1 > m->max_depth) {
					rc = etc_pickle_fail_(m, ETC_ERR_LIMIT,
					                      "containers nested deeper than %zu",
					                      m->max_depth);
					break;
				}
				c->colour = 1;
				c->height = 1;
				st[n++] = (frame){c, 0};
				continue;
			}
			if (c->colour == 0) {
				c->colour = 2;
				c->height = is_container(c) ? 1 : 0;
			}
			h = c->height;
			parent = f->o;
		} else {
			f->o->colour = 2;
			h = f->o->height;
			if (--n == 0)
				break;
			parent = st[n - 1].o;
		}
		if (h + 1 > parent->height)
			parent->height = h + 1;
		if (parent->height > m->max_depth)
			rc = etc_pickle_fail_(m, ETC_ERR_LIMIT, "containers nested deeper than %zu",
			                      m->max_depth);
	}
	free(st);
	return rc;
}

/* ---- the machine ---------------------------------------------------------- */

static int run(vm *m, const etc_pyobj **root, size_t *used)
{
	etc_pyobj *o = NULL, *a = NULL, *b = NULL, *c = NULL;
	size_t start = 0;
	for (;;) {
		m->op_pos = m->pos;
		if (m->pos >= m->n)
			return etc_pickle_fail_(m, ETC_ERR_FORMAT, "the pickle ends without STOP");
		uint8_t op = m->p[m->pos++];
		switch (op) {
		case 0x80: /* PROTO */
			ETC_TRY(need(m, 1, "PROTO"));
			if (m->p[m->pos] > 5)
				return etc_pickle_fail_(m, ETC_ERR_UNSUPPORTED,
				                        "pickle protocol %u", m->p[m->pos]);
			m->pos++;
			break;
		case '}': /* EMPTY_DICT */
			ETC_TRY(scalar(m, ETC_PY_DICT, &o));
			break;
		case ']': /* EMPTY_LIST */
			ETC_TRY(scalar(m, ETC_PY_LIST, &o));
			break;
		case ')': /* EMPTY_TUPLE */
			ETC_TRY(scalar(m, ETC_PY_TUPLE, &o));
			break;
		case '(': /* MARK */
			if (m->nmarks == m->marks_cap) {
				if (m->nmarks >= m->max_stack)
					return etc_pickle_fail_(m, ETC_ERR_LIMIT,
					                        "more than %zu open MARKs",
					                        m->max_stack);
				size_t cap = m->marks_cap ? m->marks_cap * 2 : 32;
				size_t *nm = realloc(m->marks, cap * sizeof *nm);
				if (!nm)
					return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
				m->marks = nm;
				m->marks_cap = cap;
			}
			m->marks[m->nmarks++] = m->sp;
			break;
		case 'q': /* BINPUT */
			ETC_TRY(need(m, 1, "BINPUT"));
			ETC_TRY(memo_put(m, m->p[m->pos++]));
			break;
		case 'r': /* LONG_BINPUT */
			ETC_TRY(need(m, 4, "LONG_BINPUT"));
			m->pos += 4;
			ETC_TRY(memo_put(m, etc_le32(m->p + m->pos - 4)));
			break;
		case 'h': /* BINGET */
			ETC_TRY(need(m, 1, "BINGET"));
			ETC_TRY(memo_get(m, m->p[m->pos++]));
			break;
		case 'j': /* LONG_BINGET */
			ETC_TRY(need(m, 4, "LONG_BINGET"));
			m->pos += 4;
			ETC_TRY(memo_get(m, etc_le32(m->p + m->pos - 4)));
			break;
		case 'X': /* BINUNICODE */
			ETC_TRY(op_binunicode(m, 4, "BINUNICODE"));
			break;
		case 0x8c: /* SHORT_BINUNICODE */
			ETC_TRY(op_binunicode(m, 1, "SHORT_BINUNICODE"));
			break;
		case 0x8d: /* BINUNICODE8 */
			ETC_TRY(op_binunicode(m, 8, "BINUNICODE8"));
			break;
		case 'C':    /* SHORT_BINBYTES */
		case 'B':    /* BINBYTES */
		case 0x8e: { /* BINBYTES8 */
			static const char *const names[] = {"SHORT_BINBYTES", "BINBYTES",
			                                    "BINBYTES8"};
			size_t which = op == 'C' ? 0 : op == 'B' ? 1 : 2;
			uint64_t len;
			ETC_TRY(counted(m,
			                which == 0   ? 1
			                : which == 1 ? 4
			                             : 8,
			                names[which], &len));
			ETC_TRY(etc_pickle_new_bytes_(m, m->p + m->pos, len, (int64_t)m->pos, &o));
			ETC_TRY(etc_pickle_push_(m, o));
			m->pos += (size_t)len;
			break;
		}
		case 0x95: { /* FRAME: a length prefix for buffering, nothing to build */
			uint64_t len;
			ETC_TRY(counted(m, 8, "FRAME", &len));
			break;
		}
		case 0x94: /* MEMOIZE */
			ETC_TRY(memo_put(m, m->memo_len));
			break;
		case 0x93: /* STACK_GLOBAL */
			ETC_TRY(etc_pickle_op_stack_global_(m));
			break;
		case 'c': /* GLOBAL */
			ETC_TRY(etc_pickle_op_global_(m));
			break;
		case 'Q': /* BINPERSID */
			ETC_TRY(etc_pickle_op_persid_(m));
			break;
		case 'J': /* BININT */
			ETC_TRY(need(m, 4, "BININT"));
			ETC_TRY(scalar(m, ETC_PY_INT, &o));
			o->u.i = (int32_t)etc_le32(m->p + m->pos);
			m->pos += 4;
			break;
		case 'K': /* BININT1 */
			ETC_TRY(need(m, 1, "BININT1"));
			ETC_TRY(scalar(m, ETC_PY_INT, &o));
			o->u.i = m->p[m->pos++];
			break;
		case 'M': /* BININT2 */
			ETC_TRY(need(m, 2, "BININT2"));
			ETC_TRY(scalar(m, ETC_PY_INT, &o));
			o->u.i = etc_le16(m->p + m->pos);
			m->pos += 2;
			break;
		case 0x8a: /* LONG1 */
			ETC_TRY(op_long1(m));
			break;
		case 'G': { /* BINFLOAT, big-endian */
			ETC_TRY(need(m, 8, "BINFLOAT"));
			uint64_t bits = 0;
			for (int i = 0; i < 8; i++)
				bits = (bits << 8) | m->p[m->pos + (size_t)i];
			m->pos += 8;
			ETC_TRY(scalar(m, ETC_PY_FLOAT, &o));
			memcpy(&o->u.f, &bits, 8);
			break;
		}
		case 'N': /* NONE */
			ETC_TRY(scalar(m, ETC_PY_NONE, &o));
			break;
		case 0x88: /* NEWTRUE */
		case 0x89: /* NEWFALSE */
			ETC_TRY(scalar(m, ETC_PY_BOOL, &o));
			o->u.b = op == 0x88;
			break;
		case 't': /* TUPLE */
			ETC_TRY(etc_pickle_pop_mark_(m, &start, "TUPLE"));
			ETC_TRY(make_tuple(m, start));
			break;
		case 0x85: /* TUPLE1 */
		case 0x86: /* TUPLE2 */
		case 0x87: /* TUPLE3 */ {
			size_t k = (size_t)(op - 0x84);
			if (m->sp - etc_pickle_fence_(m) < k)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT,
				                        "TUPLE%zu: pickle stack underflow", k);
			ETC_TRY(make_tuple(m, m->sp - k));
			break;
		}
		case 'R': /* REDUCE */
			ETC_TRY(etc_pickle_op_reduce_(m));
			break;
		case 'b': /* BUILD */
			ETC_TRY(op_build(m));
			break;
		case 'a': /* APPEND */
			ETC_TRY(etc_pickle_pop_(m, &a, "APPEND"));
			ETC_TRY(etc_pickle_top_(m, &o, "APPEND"));
			if (o->kind != ETC_PY_LIST)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT, "APPEND to a %s",
				                        etc_pykind_name(o->kind));
			ETC_TRY(etc_pickle_reserve_(m, o, 1));
			o->u.items[o->len++] = a;
			break;
		case 'e': /* APPENDS */
			ETC_TRY(etc_pickle_pop_mark_(m, &start, "APPENDS"));
			ETC_TRY(etc_pickle_below_mark_(m, start, &o, "APPENDS"));
			if (o->kind != ETC_PY_LIST)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT, "APPENDS to a %s",
				                        etc_pykind_name(o->kind));
			if (m->sp > start) {
				ETC_TRY(etc_pickle_reserve_(m, o, m->sp - start));
				memcpy(o->u.items + o->len, m->stack + start,
				       (m->sp - start) * sizeof *o->u.items);
				o->len += (uint32_t)(m->sp - start);
				m->sp = start;
			}
			break;
		case 's': /* SETITEM */
			ETC_TRY(etc_pickle_pop_(m, &b, "SETITEM"));
			ETC_TRY(etc_pickle_pop_(m, &a, "SETITEM"));
			ETC_TRY(etc_pickle_top_(m, &o, "SETITEM"));
			if (o->kind != ETC_PY_DICT)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT, "SETITEM on a %s",
				                        etc_pykind_name(o->kind));
			ETC_TRY(etc_pickle_dict_set_(m, o, a, b));
			break;
		case 'u': /* SETITEMS */
			ETC_TRY(etc_pickle_pop_mark_(m, &start, "SETITEMS"));
			ETC_TRY(etc_pickle_below_mark_(m, start, &o, "SETITEMS"));
			if (o->kind != ETC_PY_DICT)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT, "SETITEMS on a %s",
				                        etc_pykind_name(o->kind));
			if ((m->sp - start) % 2)
				return etc_pickle_fail_(m, ETC_ERR_FORMAT,
				                        "SETITEMS with an odd number of "
				                        "items");
			for (size_t i = start; i < m->sp; i += 2)
				ETC_TRY(etc_pickle_dict_set_(m, o, m->stack[i], m->stack[i + 1]));
			m->sp = start;
			break;
		case '.': /* STOP */
			ETC_TRY(etc_pickle_pop_(m, &c, "STOP"));
			ETC_TRY(check_graph(m, c));
			*root = c;
			if (used)
				*used = m->pos;
			return 0;
		default: {
			const char *name = opcode_name(op);
			if (name)
				return etc_pickle_fail_(
				    m, ETC_ERR_FORMAT, "pickle opcode %s (0x%02x) is not supported",
				    name, op);
			return etc_pickle_fail_(m, ETC_ERR_FORMAT, "unknown pickle opcode 0x%02x",
			                        op);
		}
		}
	}
}

int etc_unpickle(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *opts,
                 const etc_pyobj **root, etc_error *err)
{
	return etc_unpickle_prefix(arena, p, n, opts, root, NULL, err);
}

int etc_unpickle_prefix(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *opts,
                        const etc_pyobj **root, size_t *used, etc_error *err)
{
	if (!arena || (!p && n) || !opts || !root)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_unpickle: NULL argument");
	if (opts->start > n)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_unpickle: start beyond the end");
	vm m = {.arena = arena,
	        .o = opts,
	        .err = err,
	        .p = p ? p : (const uint8_t *)"",
	        .n = n,
	        .pos = opts->start};
	m.max_stack = opts->max_stack ? opts->max_stack : ETC_TORCHSAVE_MAX_STACK;
	m.max_memo = opts->max_memo ? opts->max_memo : ETC_TORCHSAVE_MAX_MEMO;
	m.max_depth = opts->max_depth ? opts->max_depth : ETC_TORCHSAVE_MAX_DEPTH;
	m.max_objects = opts->max_objects ? opts->max_objects : ETC_TORCHSAVE_MAX_OBJECTS;
	/* A writer numbers memo entries from 0 and each PUT takes 2+ bytes. */
	if (m.max_memo > (n - opts->start) / 2 + 1)
		m.max_memo = (n - opts->start) / 2 + 1;
	*root = NULL;
	int rc = run(&m, root, used);
	free(m.stack);
	free(m.marks);
	free(m.memo);
	return rc;
}
