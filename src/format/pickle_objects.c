/*
 * pickle_objects.c - the read-only Python object model the pickle machine
 * builds (etc_pyobj): allocation, the machine's stack and MARKs, dict
 * hashing with Python's key equality, and the etc_pyobj_* accessors.
 */
#include "format/pickle_private.h"

#include <math.h>
#include <stdlib.h>

/* ---- objects ---------------------------------------------------------- */

int etc_pickle_new_obj_(vm *m, int kind, etc_pyobj **out)
{
	if (m->objects >= m->max_objects)
		return etc_pickle_fail_(m, ETC_ERR_LIMIT, "more than %zu objects", m->max_objects);
	etc_pyobj *o = etc_arena_alloc(m->arena, 1, sizeof *o);
	if (!o)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	m->objects++;
	o->kind = (uint8_t)kind;
	*out = o;
	return 0;
}

int etc_pickle_push_(vm *m, etc_pyobj *o)
{
	if (m->sp == m->stack_cap) {
		if (m->sp >= m->max_stack)
			return etc_pickle_fail_(m, ETC_ERR_LIMIT, "pickle stack deeper than %zu",
			                        m->max_stack);
		size_t cap = m->stack_cap ? m->stack_cap * 2 : 64;
		if (cap > m->max_stack)
			cap = m->max_stack;
		etc_pyobj **s = realloc(m->stack, cap * sizeof *s);
		if (!s)
			return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
		m->stack = s;
		m->stack_cap = cap;
	}
	m->stack[m->sp++] = o;
	return 0;
}

size_t etc_pickle_fence_(const vm *m)
{
	return m->nmarks ? m->marks[m->nmarks - 1] : 0;
}

int etc_pickle_pop_(vm *m, etc_pyobj **out, const char *op)
{
	if (m->sp <= etc_pickle_fence_(m))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s: pickle stack underflow", op);
	*out = m->stack[--m->sp];
	return 0;
}

int etc_pickle_top_(vm *m, etc_pyobj **out, const char *op)
{
	if (m->sp <= etc_pickle_fence_(m))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s: pickle stack underflow", op);
	*out = m->stack[m->sp - 1];
	return 0;
}

/* Pops the topmost MARK; the items above it are stack[*start, sp). */
int etc_pickle_pop_mark_(vm *m, size_t *start, const char *op)
{
	if (!m->nmarks)
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s without a MARK", op);
	*start = m->marks[--m->nmarks];
	return 0;
}

/* The object just below a popped MARK at `start` (the target of APPENDS, SETITEMS). */
int etc_pickle_below_mark_(vm *m, size_t start, etc_pyobj **out, const char *op)
{
	if (start <= etc_pickle_fence_(m))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "%s: nothing below the MARK", op);
	*out = m->stack[start - 1];
	return 0;
}

/* Makes room for `extra` more slots (items, or pairs x 2 for dicts). */
int etc_pickle_reserve_(vm *m, etc_pyobj *o, size_t extra)
{
	size_t per = o->kind == ETC_PY_DICT ? 2 : 1;
	size_t want = (size_t)o->len * per + extra * per;
	if ((size_t)o->len + extra > MAX_LEN)
		return etc_pickle_fail_(m, ETC_ERR_LIMIT, "a %s with more than %u items",
		                        etc_pykind_name(o->kind), MAX_LEN);
	if (want <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap : 8;
	while (cap < want)
		cap *= 2;
	etc_pyobj **items = etc_arena_alloc(m->arena, cap, sizeof *items);
	if (!items)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	if (o->len)
		memcpy(items, o->u.items, (size_t)o->len * per * sizeof *items);
	o->u.items = items;
	o->cap = (uint32_t)cap;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* True when `f` is integral and representable as int64 (Python: 2.0 == 2). */
static bool float_as_int(double f, int64_t *i)
{
	if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0) || f != floor(f))
		return false;
	*i = (int64_t)f;
	return true;
}

static bool hashable(const etc_pyobj *k)
{
	return k->kind != ETC_PY_LIST && k->kind != ETC_PY_DICT;
}

/*
 * Python equality for the scalar kinds; containers and tensors compare by
 * identity (equal keys of those kinds never occur in a dict torch saves).
 */
static uint64_t key_hash(const etc_pyobj *k)
{
	int64_t i;
	switch (k->kind) {
	case ETC_PY_NONE:
		return 0x9e3779b97f4a7c15ull;
	case ETC_PY_BOOL:
		return mix64((uint64_t)k->u.b);
	case ETC_PY_INT:
		return mix64((uint64_t)k->u.i);
	case ETC_PY_FLOAT:
		if (float_as_int(k->u.f, &i))
			return mix64((uint64_t)i);
		if (isnan(k->u.f))
			return mix64((uint64_t)(uintptr_t)k);
		{
			uint64_t bits;
			memcpy(&bits, &k->u.f, 8);
			return mix64(bits);
		}
	case ETC_PY_STR:
	case ETC_PY_BIGINT:
		return hash_bytes(k->u.bytes, k->len) ^ k->kind;
	case ETC_PY_BYTES:
		return hash_bytes(k->u.blob->data, (size_t)k->u.blob->size) ^ ETC_PY_BYTES;
	case ETC_PY_GLOBAL:
		return mix64((uint64_t)(uintptr_t)k->u.global);
	default:
		return mix64((uint64_t)(uintptr_t)k);
	}
}

static bool numeric(const etc_pyobj *k, int64_t *i, double *f, bool *is_float)
{
	switch (k->kind) {
	case ETC_PY_BOOL:
		*i = k->u.b;
		*is_float = false;
		return true;
	case ETC_PY_INT:
		*i = k->u.i;
		*is_float = false;
		return true;
	case ETC_PY_FLOAT:
		*f = k->u.f;
		*is_float = true;
		return true;
	}
	return false;
}

static bool key_equal(const etc_pyobj *a, const etc_pyobj *b)
{
	if (a == b)
		return true;
	int64_t ia = 0, ib = 0;
	double fa = 0, fb = 0;
	bool xa, xb;
	if (numeric(a, &ia, &fa, &xa) && numeric(b, &ib, &fb, &xb)) {
		if (xa && xb)
			return fa == fb;
		if (!xa && !xb)
			return ia == ib;
		int64_t v;
		return float_as_int(xa ? fa : fb, &v) && v == (xa ? ib : ia);
	}
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case ETC_PY_NONE:
		return true;
	case ETC_PY_STR:
	case ETC_PY_BIGINT:
		return a->len == b->len && memcmp(a->u.bytes, b->u.bytes, a->len) == 0;
	case ETC_PY_BYTES:
		return a->u.blob->size == b->u.blob->size &&
		       (a->u.blob->size == 0 ||
		        memcmp(a->u.blob->data, b->u.blob->data, (size_t)a->u.blob->size) == 0);
	case ETC_PY_GLOBAL:
		return a->u.global == b->u.global;
	}
	return false;
}

/* Index of the pair whose key equals `k`, or -1. */
static int64_t dict_find(const etc_pyobj *d, const etc_pyobj *k, uint64_t h)
{
	if (!d->index_cap)
		return -1;
	uint32_t mask = d->index_cap - 1;
	for (uint32_t s = (uint32_t)h & mask;; s = (s + 1) & mask) {
		uint32_t slot = d->index[s];
		if (!slot)
			return -1;
		if (key_equal(d->u.items[2 * (size_t)(slot - 1)], k))
			return slot - 1;
	}
}

static void index_insert(etc_pyobj *d, uint64_t h, uint32_t pair)
{
	uint32_t mask = d->index_cap - 1;
	uint32_t s = (uint32_t)h & mask;
	while (d->index[s])
		s = (s + 1) & mask;
	d->index[s] = pair + 1;
}

int etc_pickle_dict_set_(vm *m, etc_pyobj *d, etc_pyobj *k, etc_pyobj *v)
{
	if (!hashable(k))
		return etc_pickle_fail_(m, ETC_ERR_FORMAT, "unhashable dict key of kind %s",
		                        etc_pykind_name(k->kind));
	uint64_t h = key_hash(k);
	int64_t at = dict_find(d, k, h);
	if (at >= 0) {
		d->u.items[2 * (size_t)at + 1] = v;
		return 0;
	}
	ETC_TRY(etc_pickle_reserve_(m, d, 1));
	if ((size_t)(d->len + 1) * 2 > d->index_cap) {
		uint32_t cap = d->index_cap ? d->index_cap * 2 : 16;
		uint32_t *idx = etc_arena_alloc(m->arena, cap, sizeof *idx);
		if (!idx)
			return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
		d->index = idx;
		d->index_cap = cap;
		for (uint32_t i = 0; i < d->len; i++)
			index_insert(d, key_hash(d->u.items[2 * (size_t)i]), i);
	}
	d->u.items[2 * (size_t)d->len] = k;
	d->u.items[2 * (size_t)d->len + 1] = v;
	index_insert(d, h, d->len);
	d->len++;
	return 0;
}

int etc_pickle_new_bytes_(vm *m, const uint8_t *data, uint64_t size, int64_t pos, etc_pyobj **out)
{
	pybytes *b = etc_arena_alloc(m->arena, 1, sizeof *b);
	if (!b)
		return etc_pickle_fail_(m, ETC_ERR_NOMEM, "out of memory");
	b->data = data;
	b->size = size;
	b->pos = pos;
	ETC_TRY(etc_pickle_new_obj_(m, ETC_PY_BYTES, out));
	(*out)->u.blob = b;
	return 0;
}

/* ---- accessors ------------------------------------------------------------ */

const char *etc_pykind_name(int kind)
{
	static const char *const names[] = {"none",    "bool",   "int",  "bigint", "float",
	                                    "str",     "tuple",  "list", "dict",   "tensor",
	                                    "storage", "global", "bytes"};
	if (kind < 0 || (size_t)kind >= sizeof names / sizeof names[0])
		return "unknown";
	return names[kind];
}

etc_pykind etc_pyobj_kind(const etc_pyobj *o)
{
	if (!o)
		return ETC_PY_NONE;
	return (etc_pykind)o->kind;
}

bool etc_pyobj_bool(const etc_pyobj *o)
{
	if (!o)
		return false;
	if (o->kind == ETC_PY_BOOL)
		return o->u.b;
	if (o->kind == ETC_PY_INT)
		return o->u.i != 0;
	return false;
}

int64_t etc_pyobj_int(const etc_pyobj *o)
{
	if (!o)
		return 0;
	if (o->kind == ETC_PY_INT)
		return o->u.i;
	if (o->kind == ETC_PY_BOOL)
		return o->u.b;
	return 0;
}

double etc_pyobj_float(const etc_pyobj *o)
{
	if (!o)
		return NAN;
	switch (o->kind) {
	case ETC_PY_FLOAT:
		return o->u.f;
	case ETC_PY_INT:
		return (double)o->u.i;
	case ETC_PY_BOOL:
		return o->u.b;
	case ETC_PY_BIGINT: {
		double v = (int8_t)o->u.bytes[o->len - 1];
		for (uint32_t i = o->len - 1; i-- > 0;)
			v = v * 256.0 + o->u.bytes[i];
		return v;
	}
	}
	return NAN;
}

etc_str etc_pyobj_str(const etc_pyobj *o)
{
	if (!o)
		return (etc_str){"", 0};
	if (o->kind == ETC_PY_STR)
		return (etc_str){(const char *)o->u.bytes, o->len};
	if (o->kind == ETC_PY_GLOBAL)
		return (etc_str){o->u.global->name, strlen(o->u.global->name)};
	return (etc_str){"", 0};
}

const uint8_t *etc_pyobj_bigint(const etc_pyobj *o, size_t *len)
{
	if (!o || o->kind != ETC_PY_BIGINT) {
		*len = 0;
		return NULL;
	}
	*len = o->len;
	return o->u.bytes;
}

const uint8_t *etc_pyobj_storage_bytes(const etc_pyobj *o, size_t *len)
{
	if (!o || o->kind != ETC_PY_STORAGE) {
		*len = 0;
		return NULL;
	}
	*len = (size_t)o->u.storage->nbytes;
	return o->u.storage->data;
}

const uint8_t *etc_pyobj_bytes(const etc_pyobj *o, size_t *len)
{
	if (!o || o->kind != ETC_PY_BYTES) {
		*len = 0;
		return NULL;
	}
	*len = (size_t)o->u.blob->size;
	return o->u.blob->data;
}

size_t etc_pyobj_len(const etc_pyobj *o)
{
	if (!o)
		return 0;
	switch (o->kind) {
	case ETC_PY_TUPLE:
	case ETC_PY_LIST:
	case ETC_PY_DICT:
		return o->len;
	}
	return 0;
}

const etc_pyobj *etc_pyobj_item(const etc_pyobj *o, size_t i)
{
	if (!o || (o->kind != ETC_PY_TUPLE && o->kind != ETC_PY_LIST) || i >= o->len)
		return NULL;
	return o->u.items[i];
}

const etc_pyobj *etc_pyobj_dict_key(const etc_pyobj *o, size_t i)
{
	if (!o || o->kind != ETC_PY_DICT || i >= o->len)
		return NULL;
	return o->u.items[2 * i];
}

const etc_pyobj *etc_pyobj_dict_value(const etc_pyobj *o, size_t i)
{
	if (!o || o->kind != ETC_PY_DICT || i >= o->len)
		return NULL;
	return o->u.items[2 * i + 1];
}

const etc_pyobj *etc_pyobj_dict_get(const etc_pyobj *o, const char *key)
{
	if (!o || o->kind != ETC_PY_DICT || !key)
		return NULL;
	etc_pyobj k = {.kind = ETC_PY_STR};
	k.u.bytes = (const uint8_t *)key;
	k.len = (uint32_t)strlen(key);
	int64_t at = dict_find(o, &k, key_hash(&k));
	return at >= 0 ? o->u.items[2 * (size_t)at + 1] : NULL;
}

bool etc_pyobj_is_ordered_dict(const etc_pyobj *o)
{
	return o && o->kind == ETC_PY_DICT && (o->flags & F_ORDERED);
}

const etc_pyobj *etc_pyobj_attrs(const etc_pyobj *o)
{
	return o && o->kind == ETC_PY_DICT ? o->attrs : NULL;
}

const etc_pytensor *etc_pyobj_tensor(const etc_pyobj *o)
{
	return o && o->kind == ETC_PY_TENSOR ? o->u.tensor : NULL;
}
