/*
 * pickle.c - the restricted pickle machine, the read-only Python object model
 * it builds (etc_pyobj) and element access for the tensors in it.
 *
 * Safety rules: only the opcodes of FORMATS.md §5 and the protocol 3-5 ones
 * pickle.dumps writes (bytes, short strings, FRAME, MEMOIZE, STACK_GLOBAL)
 * are interpreted; GLOBAL and STACK_GLOBAL resolve to an entry of a fixed
 * whitelist or fail; REDUCE "calls" only the constructors implemented here
 * as data constructors (torch.storage._load_from_bytes goes to
 * torch_legacy.c, which runs this same machine on the embedded stream). Stack, memo,
 * object count and nesting depth are bounded, and the finished object graph
 * is checked for reference cycles (a list appended to itself), so callers may
 * walk it recursively.
 */
#include "format/pickle.h"
#include "format/torch_legacy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { F_ORDERED = 1 };

typedef enum role {
	R_REBUILD_V2,
	R_REBUILD_V3,
	R_REBUILD_PARAM,
	R_ORDERED_DICT,
	R_STORAGE_TYPE,
	R_DTYPE,
	R_LOAD_FROM_BYTES, /* torch.storage._load_from_bytes(b): a legacy torch.save stream */
	R_CODECS_ENCODE,   /* protocol 2 writes bytes as _codecs.encode(str, 'latin1') */
	R_BYTES            /* ... and empty bytes as bytes() */
} role;

typedef struct global_def {
	const char *name;
	role role;
	int scalar_type; /* storage types and dtypes; -1 = untyped */
} global_def;

/* Every GLOBAL the reader accepts. Anything else is rejected, never resolved. */
static const global_def whitelist[] = {
    {"torch._utils._rebuild_tensor_v2", R_REBUILD_V2, -1},
    {"torch._utils._rebuild_tensor_v3", R_REBUILD_V3, -1},
    {"torch._utils._rebuild_parameter", R_REBUILD_PARAM, -1},
    {"collections.OrderedDict", R_ORDERED_DICT, -1},
    {"torch.storage._load_from_bytes", R_LOAD_FROM_BYTES, -1},
    {"_codecs.encode", R_CODECS_ENCODE, -1},
    {"__builtin__.bytes", R_BYTES, -1},
    {"builtins.bytes", R_BYTES, -1},
    {"torch.FloatStorage", R_STORAGE_TYPE, ETC_FLOAT},
    {"torch.DoubleStorage", R_STORAGE_TYPE, ETC_DOUBLE},
    {"torch.HalfStorage", R_STORAGE_TYPE, ETC_HALF},
    {"torch.BFloat16Storage", R_STORAGE_TYPE, ETC_BFLOAT16},
    {"torch.ByteStorage", R_STORAGE_TYPE, ETC_BYTE},
    {"torch.CharStorage", R_STORAGE_TYPE, ETC_CHAR},
    {"torch.ShortStorage", R_STORAGE_TYPE, ETC_SHORT},
    {"torch.IntStorage", R_STORAGE_TYPE, ETC_INT},
    {"torch.LongStorage", R_STORAGE_TYPE, ETC_LONG},
    {"torch.BoolStorage", R_STORAGE_TYPE, ETC_BOOL},
    {"torch.UntypedStorage", R_STORAGE_TYPE, -1},
    {"torch.float32", R_DTYPE, ETC_FLOAT},
    {"torch.float64", R_DTYPE, ETC_DOUBLE},
    {"torch.float16", R_DTYPE, ETC_HALF},
    {"torch.bfloat16", R_DTYPE, ETC_BFLOAT16},
    {"torch.uint8", R_DTYPE, ETC_BYTE},
    {"torch.int8", R_DTYPE, ETC_CHAR},
    {"torch.int16", R_DTYPE, ETC_SHORT},
    {"torch.int32", R_DTYPE, ETC_INT},
    {"torch.int64", R_DTYPE, ETC_LONG},
    {"torch.bool", R_DTYPE, ETC_BOOL},
    {"torch.uint16", R_DTYPE, ETC_UINT16},
    {"torch.uint32", R_DTYPE, ETC_UINT32},
    {"torch.uint64", R_DTYPE, ETC_UINT64},
    {"torch.bits16", R_DTYPE, ETC_BITS16},
    {"torch.float8_e5m2", R_DTYPE, ETC_FLOAT8E5M2},
    {"torch.float8_e4m3fn", R_DTYPE, ETC_FLOAT8E4M3FN},
    {"torch.float8_e5m2fnuz", R_DTYPE, ETC_FLOAT8E5M2FNUZ},
    {"torch.float8_e4m3fnuz", R_DTYPE, ETC_FLOAT8E4M3FNUZ},
};

/* BYTES: a slice of the pickle (zero-copy) or a decoded copy. */
typedef struct pybytes {
	const uint8_t *data;
	uint64_t size;
	int64_t pos;             /* offset of data in the pickle, or -1 for a copy */
	const etc_pyobj *loaded; /* what _load_from_bytes made of it, once asked */
} pybytes;

struct etc_pyobj {
	uint8_t kind;
	uint8_t flags;
	uint8_t colour; /* cycle check: 0 unseen, 1 on the path, 2 done */
	uint32_t len, cap;
	uint32_t height; /* nesting below this object, once checked */
	union {
		bool b;
		int64_t i;
		double f;
		const uint8_t *bytes; /* STR (NUL-terminated), BIGINT */
		etc_pyobj **items;    /* TUPLE, LIST; DICT: key, value, key, value... */
		etc_pytensor *tensor;
		const etc_pystorage *storage;
		const global_def *global;
		pybytes *blob;
	} u;
	/*
	 * DICT: state set by BUILD. STR: its bytes once _codecs.encode decoded
	 * it, so that a memoized string reduced again costs nothing.
	 */
	etc_pyobj *attrs;
	uint32_t *index; /* DICT: hash table of pair index + 1 (0 = empty) */
	uint32_t index_cap;
};

#define MAX_LEN         0x3fffffffu
#define MAX_GLOBAL_LINE 256

typedef struct vm {
	etc_arena *arena;
	const etc_pickle_opts *o;
	etc_error *err;
	const uint8_t *p;
	size_t n, pos, op_pos;
	etc_pyobj **stack;
	size_t sp, stack_cap;
	size_t *marks;
	size_t nmarks, marks_cap;
	etc_pyobj **memo;
	size_t memo_cap, memo_len; /* memo_len: slots in use (MEMOIZE's index) */
	size_t objects;
	size_t max_stack, max_memo, max_depth, max_objects;
} vm;

static int vfail(vm *m, int status, const char *fmt, ...) ETC_PRINTF(3, 4);

static int vfail(vm *m, int status, const char *fmt, ...)
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

static const char *kind_name(int kind)
{
	return etc_pykind_name(kind);
}

/* ---- reading ---------------------------------------------------------- */

static int need(vm *m, size_t k, const char *what)
{
	if (m->n - m->pos < k)
		return vfail(m, ETC_ERR_FORMAT,
		             "%s needs %zu more bytes, the pickle ends after %zu", what, k,
		             m->n - m->pos);
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

/* ---- objects ---------------------------------------------------------- */

static int new_obj(vm *m, int kind, etc_pyobj **out)
{
	if (m->objects >= m->max_objects)
		return vfail(m, ETC_ERR_LIMIT, "more than %zu objects", m->max_objects);
	etc_pyobj *o = etc_arena_alloc(m->arena, 1, sizeof *o);
	if (!o)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	m->objects++;
	o->kind = (uint8_t)kind;
	*out = o;
	return 0;
}

static int push(vm *m, etc_pyobj *o)
{
	if (m->sp == m->stack_cap) {
		if (m->sp >= m->max_stack)
			return vfail(m, ETC_ERR_LIMIT, "pickle stack deeper than %zu",
			             m->max_stack);
		size_t cap = m->stack_cap ? m->stack_cap * 2 : 64;
		if (cap > m->max_stack)
			cap = m->max_stack;
		etc_pyobj **s = realloc(m->stack, cap * sizeof *s);
		if (!s)
			return vfail(m, ETC_ERR_NOMEM, "out of memory");
		m->stack = s;
		m->stack_cap = cap;
	}
	m->stack[m->sp++] = o;
	return 0;
}

static size_t fence(const vm *m)
{
	return m->nmarks ? m->marks[m->nmarks - 1] : 0;
}

static int pop(vm *m, etc_pyobj **out, const char *op)
{
	if (m->sp <= fence(m))
		return vfail(m, ETC_ERR_FORMAT, "%s: pickle stack underflow", op);
	*out = m->stack[--m->sp];
	return 0;
}

static int top(vm *m, etc_pyobj **out, const char *op)
{
	if (m->sp <= fence(m))
		return vfail(m, ETC_ERR_FORMAT, "%s: pickle stack underflow", op);
	*out = m->stack[m->sp - 1];
	return 0;
}

/* Pops the topmost MARK; the items above it are stack[*start, sp). */
static int pop_mark(vm *m, size_t *start, const char *op)
{
	if (!m->nmarks)
		return vfail(m, ETC_ERR_FORMAT, "%s without a MARK", op);
	*start = m->marks[--m->nmarks];
	return 0;
}

/* The object just below a popped MARK at `start` (the target of APPENDS, SETITEMS). */
static int below_mark(vm *m, size_t start, etc_pyobj **out, const char *op)
{
	if (start <= fence(m))
		return vfail(m, ETC_ERR_FORMAT, "%s: nothing below the MARK", op);
	*out = m->stack[start - 1];
	return 0;
}

/* Makes room for `extra` more slots (items, or pairs x 2 for dicts). */
static int reserve(vm *m, etc_pyobj *o, size_t extra)
{
	size_t per = o->kind == ETC_PY_DICT ? 2 : 1;
	size_t want = (size_t)o->len * per + extra * per;
	if ((size_t)o->len + extra > MAX_LEN)
		return vfail(m, ETC_ERR_LIMIT, "a %s with more than %u items", kind_name(o->kind),
		             MAX_LEN);
	if (want <= o->cap)
		return 0;
	size_t cap = o->cap ? o->cap : 8;
	while (cap < want)
		cap *= 2;
	etc_pyobj **items = etc_arena_alloc(m->arena, cap, sizeof *items);
	if (!items)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
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

static int dict_set(vm *m, etc_pyobj *d, etc_pyobj *k, etc_pyobj *v)
{
	if (!hashable(k))
		return vfail(m, ETC_ERR_FORMAT, "unhashable dict key of kind %s",
		             kind_name(k->kind));
	uint64_t h = key_hash(k);
	int64_t at = dict_find(d, k, h);
	if (at >= 0) {
		d->u.items[2 * (size_t)at + 1] = v;
		return 0;
	}
	ETC_TRY(reserve(m, d, 1));
	if ((size_t)(d->len + 1) * 2 > d->index_cap) {
		uint32_t cap = d->index_cap ? d->index_cap * 2 : 16;
		uint32_t *idx = etc_arena_alloc(m->arena, cap, sizeof *idx);
		if (!idx)
			return vfail(m, ETC_ERR_NOMEM, "out of memory");
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

/* ---- torch constructors ----------------------------------------------- */

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int int_arg(vm *m, const etc_pyobj *a, const char *what, int64_t *out)
{
	if (a->kind == ETC_PY_INT) {
		*out = a->u.i;
		return 0;
	}
	if (a->kind == ETC_PY_BOOL) {
		*out = a->u.b;
		return 0;
	}
	return vfail(m, ETC_ERR_FORMAT, "%s is a %s, expected an int", what, kind_name(a->kind));
}

static int int_tuple(vm *m, const etc_pyobj *a, const char *what)
{
	if (a->kind != ETC_PY_TUPLE)
		return vfail(m, ETC_ERR_FORMAT, "tensor %s is a %s, expected a tuple", what,
		             kind_name(a->kind));
	if (a->len > ETC_TORCHSAVE_MAX_NDIM)
		return vfail(m, ETC_ERR_LIMIT, "tensor has %u dimensions, at most %d are supported",
		             a->len, ETC_TORCHSAVE_MAX_NDIM);
	for (uint32_t i = 0; i < a->len; i++)
		if (a->u.items[i]->kind != ETC_PY_INT)
			return vfail(m, ETC_ERR_FORMAT, "tensor %s[%u] is a %s, expected an int",
			             what, i, kind_name(a->u.items[i]->kind));
	return 0;
}

/*
 * _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
 * backward_hooks[, metadata]) and _rebuild_tensor_v3(..., backward_hooks,
 * dtype[, metadata]): a strided view of the storage, checked to lie inside it.
 */
static int rebuild_tensor(vm *m, const etc_pyobj *args, bool v3, etc_pyobj **out)
{
	const char *fn = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
	uint32_t lo = v3 ? 7 : 6;
	if (args->len != lo && args->len != lo + 1)
		return vfail(m, ETC_ERR_FORMAT, "%s takes %u or %u arguments, got %u", fn, lo,
		             lo + 1, args->len);
	etc_pyobj *const *a = args->u.items;
	if (a[0]->kind != ETC_PY_STORAGE)
		return vfail(m, ETC_ERR_FORMAT, "%s: first argument is a %s, expected a storage",
		             fn, kind_name(a[0]->kind));
	const etc_pystorage *st = a[0]->u.storage;
	int64_t offset = 0, requires_grad = 0;
	ETC_TRY(int_arg(m, a[1], "tensor storage_offset", &offset));
	ETC_TRY(int_tuple(m, a[2], "size"));
	ETC_TRY(int_tuple(m, a[3], "stride"));
	ETC_TRY(int_arg(m, a[4], "tensor requires_grad", &requires_grad));
	if (a[5]->kind != ETC_PY_DICT && a[5]->kind != ETC_PY_NONE)
		return vfail(m, ETC_ERR_FORMAT, "%s: backward_hooks is a %s, expected a dict", fn,
		             kind_name(a[5]->kind));
	int type = st->scalar_type;
	if (v3) {
		if (a[6]->kind != ETC_PY_GLOBAL || a[6]->u.global->role != R_DTYPE)
			return vfail(m, ETC_ERR_FORMAT,
			             "%s: dtype argument is a %s, expected a "
			             "torch dtype",
			             fn, kind_name(a[6]->kind));
		type = a[6]->u.global->scalar_type;
		if (st->scalar_type >= 0 && st->scalar_type != type)
			return vfail(m, ETC_ERR_FORMAT, "%s: dtype %s but storage '%s' holds %s",
			             fn, etc_scalar_type_name(type), st->key,
			             etc_scalar_type_name(st->scalar_type));
	} else if (type < 0) {
		return vfail(m, ETC_ERR_FORMAT, "%s: storage '%s' is untyped", fn, st->key);
	}
	uint64_t esz = etc_scalar_type_size(type);
	uint32_t ndim = a[2]->len;
	if (a[3]->len != ndim)
		return vfail(m, ETC_ERR_FORMAT, "tensor has %u sizes but %u strides", ndim,
		             a[3]->len);
	if (offset < 0)
		return vfail(m, ETC_ERR_FORMAT, "negative storage offset %lld", (long long)offset);
	uint64_t numel = 1, last = (uint64_t)offset;
	for (uint32_t d = 0; d < ndim; d++) {
		int64_t size = a[2]->u.items[d]->u.i, stride = a[3]->u.items[d]->u.i;
		if (size < 0)
			return vfail(m, ETC_ERR_FORMAT, "negative size %lld in dimension %u",
			             (long long)size, d);
		if (stride < 0)
			return vfail(m, ETC_ERR_FORMAT,
			             "negative stride %lld in dimension %u (not supported)",
			             (long long)stride, d);
		if (!etc_mul_u64(numel, (uint64_t)size, &numel))
			return vfail(m, ETC_ERR_FORMAT, "tensor element count overflows");
	}
	uint64_t nbytes;
	if (!etc_mul_u64(numel, esz, &nbytes))
		return vfail(m, ETC_ERR_FORMAT, "tensor byte size overflows");
	/* Elements available in the storage (untyped storages count bytes). */
	uint64_t avail = st->scalar_type >= 0 ? st->numel : st->nbytes / esz;
	if (numel > 0) {
		for (uint32_t d = 0; d < ndim; d++) {
			uint64_t span;
			if (!etc_mul_u64((uint64_t)a[2]->u.items[d]->u.i - 1,
			                 (uint64_t)a[3]->u.items[d]->u.i, &span) ||
			    !etc_add_u64(last, span, &last))
				return vfail(m, ETC_ERR_FORMAT, "tensor extent overflows");
		}
		if (last >= avail)
			return vfail(m, ETC_ERR_FORMAT,
			             "tensor (%llu elements, storage offset %lld) reaches element "
			             "%llu of storage '%s', which has only %llu %s elements",
			             (unsigned long long)numel, (long long)offset,
			             (unsigned long long)last, st->key, (unsigned long long)avail,
			             etc_scalar_type_name(type));
	}
	etc_pytensor *t = etc_arena_alloc(m->arena, 1, sizeof *t);
	uint8_t *sizes = etc_arena_alloc(m->arena, ndim ? ndim : 1, 8);
	uint8_t *strides = etc_arena_alloc(m->arena, ndim ? ndim : 1, 8);
	if (!t || !sizes || !strides)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	bool contiguous = true;
	uint64_t expected = 1;
	for (uint32_t d = ndim; d-- > 0;) {
		uint64_t size = (uint64_t)a[2]->u.items[d]->u.i;
		uint64_t stride = (uint64_t)a[3]->u.items[d]->u.i;
		put_le64(sizes + 8 * (size_t)d, size);
		put_le64(strides + 8 * (size_t)d, stride);
		if (size != 1 && stride != expected)
			contiguous = false;
		expected *= size;
	}
	if (numel == 0)
		contiguous = true;
	t->tensor.scalar_type = type;
	t->tensor.ndim = ndim;
	t->tensor.nstrides = ndim;
	t->tensor.sizes_le = sizes;
	t->tensor.strides_le = strides;
	t->tensor.numel = numel;
	t->tensor.nbytes = nbytes;
	uint64_t first = numel ? (uint64_t)offset * esz : 0;
	t->tensor.offset = st->archive_offset >= 0 ? st->archive_offset + (int64_t)first : -1;
	/* A legacy stream's first pass has no bytes yet (torch_legacy.c). */
	t->tensor.data = contiguous && st->data ? st->data + first : NULL;
	t->storage = st->data;
	t->storage_nbytes = st->nbytes;
	t->storage_offset = offset;
	t->storage_key = st->key;
	t->location = st->location;
	t->contiguous = contiguous;
	t->requires_grad = requires_grad != 0;
	ETC_TRY(new_obj(m, ETC_PY_TENSOR, out));
	(*out)->u.tensor = t;
	return 0;
}

/* _rebuild_parameter(tensor, requires_grad, backward_hooks) */
static int rebuild_parameter(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 3)
		return vfail(m, ETC_ERR_FORMAT, "_rebuild_parameter takes 3 arguments, got %u",
		             args->len);
	if (args->u.items[0]->kind != ETC_PY_TENSOR)
		return vfail(m, ETC_ERR_FORMAT,
		             "_rebuild_parameter: first argument is a %s, "
		             "expected a tensor",
		             kind_name(args->u.items[0]->kind));
	int64_t rg = 0;
	ETC_TRY(int_arg(m, args->u.items[1], "parameter requires_grad", &rg));
	etc_pytensor *t = etc_arena_alloc(m->arena, 1, sizeof *t);
	if (!t)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	*t = *args->u.items[0]->u.tensor;
	t->is_parameter = true;
	t->requires_grad = rg != 0;
	ETC_TRY(new_obj(m, ETC_PY_TENSOR, out));
	(*out)->u.tensor = t;
	return 0;
}

static int new_bytes(vm *m, const uint8_t *data, uint64_t size, int64_t pos, etc_pyobj **out)
{
	pybytes *b = etc_arena_alloc(m->arena, 1, sizeof *b);
	if (!b)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	b->data = data;
	b->size = size;
	b->pos = pos;
	ETC_TRY(new_obj(m, ETC_PY_BYTES, out));
	(*out)->u.blob = b;
	return 0;
}

/*
 * _codecs.encode(text, 'latin1'): protocol 2's spelling of bytes. Each code
 * point of the UTF-8 text (already checked well-formed) is one byte.
 */
static int codecs_encode(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 2 || args->u.items[0]->kind != ETC_PY_STR ||
	    args->u.items[1]->kind != ETC_PY_STR)
		return vfail(m, ETC_ERR_FORMAT, "_codecs.encode takes (str, 'latin1')");
	const etc_pyobj *enc = args->u.items[1];
	if (strcmp((const char *)enc->u.bytes, "latin1") != 0 &&
	    strcmp((const char *)enc->u.bytes, "latin-1") != 0)
		return vfail(m, ETC_ERR_FORMAT,
		             "_codecs.encode with encoding '%.40s' (only 'latin1' is read)",
		             (const char *)enc->u.bytes);
	etc_pyobj *text = args->u.items[0];
	if (text->attrs) {
		*out = text->attrs;
		return 0;
	}
	const uint8_t *s = text->u.bytes;
	uint32_t n = text->len, k = 0;
	uint8_t *dst = etc_arena_alloc(m->arena, n ? n : 1, 1);
	if (!dst)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (s[i] < 0x80) {
			dst[k++] = s[i];
		} else if ((s[i] & 0xfe) == 0xc2 && i + 1 < n) {
			dst[k++] = (uint8_t)(((s[i] & 0x1f) << 6) | (s[i + 1] & 0x3f));
			i++;
		} else {
			return vfail(m, ETC_ERR_FORMAT,
			             "_codecs.encode: character at text byte %u is not latin-1", i);
		}
	}
	ETC_TRY(new_bytes(m, dst, k, -1, out));
	text->attrs = *out;
	return 0;
}

/* torch.storage._load_from_bytes(b): b is a legacy torch.save stream. */
static int load_from_bytes(vm *m, const etc_pyobj *args, etc_pyobj **out)
{
	if (args->len != 1 || args->u.items[0]->kind != ETC_PY_BYTES)
		return vfail(m, ETC_ERR_FORMAT, "torch.storage._load_from_bytes takes one bytes");
	if (m->o->legacy)
		return vfail(m, ETC_ERR_FORMAT,
		             "torch.storage._load_from_bytes inside a legacy torch.save stream");
	pybytes *b = (pybytes *)args->u.items[0]->u.blob;
	if (b->loaded) { /* read once: the same bytes reduced again are the same storage */
		*out = (etc_pyobj *)b->loaded;
		return 0;
	}
	char label[300];
	if (b->pos >= 0)
		snprintf(label, sizeof label, "%s byte %zu: torch.storage._load_from_bytes stream",
		         m->o->member ? m->o->member : "pickle", (size_t)b->pos);
	else
		snprintf(
		    label, sizeof label,
		    "%s byte %zu: torch.storage._load_from_bytes stream (decoded from latin-1)",
		    m->o->member ? m->o->member : "pickle", m->op_pos);
	etc_pickle_opts o = *m->o;
	o.member = etc_arena_strdup(m->arena, label, strlen(label));
	if (!o.member)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
	o.base_offset = m->o->base_offset >= 0 && b->pos >= 0 ? m->o->base_offset + b->pos : -1;
	const etc_pyobj *root = NULL;
	ETC_TRY(etc_torch_legacy_read(m->arena, b->data, (size_t)b->size, &o, &root, m->err));
	b->loaded = root;
	*out = (etc_pyobj *)root;
	return 0;
}

static int op_reduce(vm *m)
{
	etc_pyobj *args = NULL, *fn = NULL, *res = NULL;
	ETC_TRY(pop(m, &args, "REDUCE"));
	ETC_TRY(pop(m, &fn, "REDUCE"));
	if (args->kind != ETC_PY_TUPLE)
		return vfail(m, ETC_ERR_FORMAT, "REDUCE: arguments are a %s, expected a tuple",
		             kind_name(args->kind));
	if (fn->kind != ETC_PY_GLOBAL)
		return vfail(m, ETC_ERR_FORMAT, "REDUCE: a %s is not callable",
		             kind_name(fn->kind));
	switch (fn->u.global->role) {
	case R_REBUILD_V2:
	case R_REBUILD_V3:
		ETC_TRY(rebuild_tensor(m, args, fn->u.global->role == R_REBUILD_V3, &res));
		break;
	case R_REBUILD_PARAM:
		ETC_TRY(rebuild_parameter(m, args, &res));
		break;
	case R_ORDERED_DICT:
		if (args->len != 0)
			return vfail(m, ETC_ERR_FORMAT,
			             "collections.OrderedDict called with %u arguments (torch.save "
			             "passes none)",
			             args->len);
		ETC_TRY(new_obj(m, ETC_PY_DICT, &res));
		res->flags |= F_ORDERED;
		break;
	case R_LOAD_FROM_BYTES:
		ETC_TRY(load_from_bytes(m, args, &res));
		break;
	case R_CODECS_ENCODE:
		ETC_TRY(codecs_encode(m, args, &res));
		break;
	case R_BYTES:
		if (args->len != 0)
			return vfail(m, ETC_ERR_FORMAT,
			             "bytes() called with %u arguments (pickle passes none)",
			             args->len);
		ETC_TRY(new_bytes(m, (const uint8_t *)"", 0, -1, &res));
		break;
	default:
		return vfail(m, ETC_ERR_FORMAT, "REDUCE: GLOBAL %s is not callable",
		             fn->u.global->name);
	}
	return push(m, res);
}

/* ('storage', storage_type, key, location, numel) */
static int op_persid(vm *m)
{
	etc_pyobj *pid = NULL, *res = NULL;
	ETC_TRY(pop(m, &pid, "BINPERSID"));
	etc_pyobj *const *a = pid->u.items;
	uint32_t want = m->o->legacy ? 6 : 5;
	if (pid->kind != ETC_PY_TUPLE || pid->len != want || a[0]->kind != ETC_PY_STR ||
	    strcmp((const char *)a[0]->u.bytes, "storage") != 0)
		return vfail(m, ETC_ERR_FORMAT,
		             "BINPERSID: persistent id is not a "
		             "('storage', type, key, location, numel%s) tuple",
		             m->o->legacy ? ", view_metadata" : "");
	if (m->o->legacy && a[5]->kind != ETC_PY_NONE)
		return vfail(m, ETC_ERR_UNSUPPORTED,
		             "BINPERSID: storage views (view_metadata %s, written by torch before "
		             "1.0) are not supported",
		             kind_name(a[5]->kind));
	if (a[1]->kind != ETC_PY_GLOBAL || a[1]->u.global->role != R_STORAGE_TYPE)
		return vfail(m, ETC_ERR_FORMAT,
		             "BINPERSID: storage type is a %s, not a torch "
		             "storage class",
		             kind_name(a[1]->kind));
	if (a[2]->kind != ETC_PY_STR || a[3]->kind != ETC_PY_STR || a[4]->kind != ETC_PY_INT)
		return vfail(m, ETC_ERR_FORMAT,
		             "BINPERSID: storage key, location and numel must be str, str, int");
	if (a[2]->len == 0 || memchr(a[2]->u.bytes, '\0', a[2]->len) ||
	    memchr(a[2]->u.bytes, '/', a[2]->len))
		return vfail(m, ETC_ERR_FORMAT, "BINPERSID: bad storage key");
	if (a[4]->u.i < 0)
		return vfail(m, ETC_ERR_FORMAT, "BINPERSID: negative storage size %lld",
		             (long long)a[4]->u.i);
	if (!m->o->load)
		return vfail(m, ETC_ERR_FORMAT, "BINPERSID: storages are not available here");
	const etc_pystorage *st = NULL;
	ETC_TRY(m->o->load(m->o->ctx, (const char *)a[2]->u.bytes, a[1]->u.global->scalar_type,
	                   (const char *)a[3]->u.bytes, (uint64_t)a[4]->u.i, m->op_pos, &st,
	                   m->err));
	ETC_TRY(new_obj(m, ETC_PY_STORAGE, &res));
	res->u.storage = st;
	return push(m, res);
}

/* Looks `name` ("module.attr") up in the whitelist and pushes it. */
static int resolve_global(vm *m, const char *name)
{
	for (size_t i = 0; i < sizeof whitelist / sizeof whitelist[0]; i++) {
		if (strcmp(whitelist[i].name, name) == 0) {
			etc_pyobj *g = NULL;
			ETC_TRY(new_obj(m, ETC_PY_GLOBAL, &g));
			g->u.global = &whitelist[i];
			return push(m, g);
		}
	}
	if (strncmp(name, "torch.", 6) == 0 && (strstr(name, "Complex") || strstr(name, "complex")))
		return vfail(m, ETC_ERR_FORMAT,
		             "forbidden GLOBAL %s (complex tensors are not supported; nothing was "
		             "executed)",
		             name);
	return vfail(m, ETC_ERR_FORMAT,
	             "forbidden GLOBAL %s (only torch tensor, storage and dtype globals, "
	             "collections.OrderedDict and the bytes constructors are allowed; nothing "
	             "was executed)",
	             name);
}

static int op_global(vm *m)
{
	char name[2 * MAX_GLOBAL_LINE + 2];
	size_t len = 0;
	for (int part = 0; part < 2; part++) {
		const uint8_t *s = m->p + m->pos;
		const uint8_t *nl = memchr(s, '\n', m->n - m->pos);
		if (!nl)
			return vfail(m, ETC_ERR_FORMAT, "GLOBAL: the pickle ends inside the name");
		size_t k = (size_t)(nl - s);
		if (k > MAX_GLOBAL_LINE)
			return vfail(m, ETC_ERR_FORMAT, "GLOBAL: name longer than %d bytes",
			             MAX_GLOBAL_LINE);
		if (part)
			name[len++] = '.';
		for (size_t i = 0; i < k; i++)
			name[len++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
		m->pos += k + 1;
	}
	name[len] = '\0';
	return resolve_global(m, name);
}

/* STACK_GLOBAL: module and attribute names are the two strings on the stack. */
static int op_stack_global(vm *m)
{
	etc_pyobj *attr, *mod;
	ETC_TRY(pop(m, &attr, "STACK_GLOBAL"));
	ETC_TRY(pop(m, &mod, "STACK_GLOBAL"));
	if (mod->kind != ETC_PY_STR || attr->kind != ETC_PY_STR)
		return vfail(m, ETC_ERR_FORMAT,
		             "STACK_GLOBAL: names are a %s and a %s, not strings",
		             kind_name(mod->kind), kind_name(attr->kind));
	if (mod->len > MAX_GLOBAL_LINE || attr->len > MAX_GLOBAL_LINE)
		return vfail(m, ETC_ERR_FORMAT, "STACK_GLOBAL: name longer than %d bytes",
		             MAX_GLOBAL_LINE);
	char name[2 * MAX_GLOBAL_LINE + 2];
	size_t len = 0;
	const etc_pyobj *parts[2] = {mod, attr};
	for (int part = 0; part < 2; part++) {
		if (part)
			name[len++] = '.';
		for (uint32_t i = 0; i < parts[part]->len; i++) {
			uint8_t c = parts[part]->u.bytes[i];
			name[len++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
		}
	}
	name[len] = '\0';
	return resolve_global(m, name);
}

static int op_build(vm *m)
{
	etc_pyobj *state = NULL, *inst = NULL;
	ETC_TRY(pop(m, &state, "BUILD"));
	ETC_TRY(top(m, &inst, "BUILD"));
	if (inst->kind != ETC_PY_DICT)
		return vfail(m, ETC_ERR_FORMAT, "BUILD on a %s is not supported",
		             kind_name(inst->kind));
	if (state->kind == ETC_PY_NONE)
		return 0;
	if (state->kind != ETC_PY_DICT)
		return vfail(m, ETC_ERR_FORMAT, "BUILD: state is a %s, expected a dict",
		             kind_name(state->kind));
	if (!inst->attrs) {
		ETC_TRY(new_obj(m, ETC_PY_DICT, &inst->attrs));
	}
	for (uint32_t i = 0; i < state->len; i++)
		ETC_TRY(dict_set(m, inst->attrs, state->u.items[2 * (size_t)i],
		                 state->u.items[2 * (size_t)i + 1]));
	return 0;
}

static int make_tuple(vm *m, size_t start)
{
	size_t n = m->sp - start;
	etc_pyobj *t = NULL;
	ETC_TRY(new_obj(m, ETC_PY_TUPLE, &t));
	if (n) {
		t->u.items = etc_arena_alloc(m->arena, n, sizeof *t->u.items);
		if (!t->u.items)
			return vfail(m, ETC_ERR_NOMEM, "out of memory");
		memcpy(t->u.items, m->stack + start, n * sizeof *t->u.items);
	}
	t->len = t->cap = (uint32_t)n;
	m->sp = start;
	return push(m, t);
}

static int memo_put(vm *m, size_t idx)
{
	etc_pyobj *o = NULL;
	ETC_TRY(top(m, &o, "PUT"));
	if (idx >= m->max_memo)
		return vfail(m, ETC_ERR_LIMIT, "memo index %zu exceeds the limit %zu", idx,
		             m->max_memo);
	if (idx >= m->memo_cap) {
		size_t cap = m->memo_cap ? m->memo_cap : 64;
		while (cap <= idx)
			cap *= 2;
		if (cap > m->max_memo)
			cap = m->max_memo;
		etc_pyobj **nm = realloc(m->memo, cap * sizeof *nm);
		if (!nm)
			return vfail(m, ETC_ERR_NOMEM, "out of memory");
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
		return vfail(m, ETC_ERR_FORMAT, "memo entry %zu was never stored", idx);
	return push(m, m->memo[idx]);
}

static int scalar(vm *m, int kind, etc_pyobj **out)
{
	ETC_TRY(new_obj(m, kind, out));
	return push(m, *out);
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
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
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
		return vfail(m, ETC_ERR_FORMAT,
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
		return vfail(m, ETC_ERR_LIMIT, "%s: string of %llu bytes (at most %u)", op,
		             (unsigned long long)len, MAX_LEN);
	uint32_t k = (uint32_t)len;
	const uint8_t *s = m->p + m->pos;
	if (!utf8_ok(s, k))
		return vfail(m, ETC_ERR_FORMAT, "%s: string is not valid UTF-8", op);
	m->pos += k;
	etc_pyobj *o = NULL;
	ETC_TRY(scalar(m, ETC_PY_STR, &o));
	char *copy = etc_arena_strdup(m->arena, (const char *)s, k);
	if (!copy)
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
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
		return vfail(m, ETC_ERR_NOMEM, "out of memory");
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
				rc = vfail(m, ETC_ERR_FORMAT,
				           "the pickle builds a reference cycle (a %s that "
				           "contains itself)",
				           kind_name(c->kind));
				break;
			}
			if (c->colour == 0 && child_count(c)) {
				if (n + 1 > m->max_depth) {
					rc = vfail(m, ETC_ERR_LIMIT,
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
			rc = vfail(m, ETC_ERR_LIMIT, "containers nested deeper than %zu",
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
			return vfail(m, ETC_ERR_FORMAT, "the pickle ends without STOP");
		uint8_t op = m->p[m->pos++];
		switch (op) {
		case 0x80: /* PROTO */
			ETC_TRY(need(m, 1, "PROTO"));
			if (m->p[m->pos] > 5)
				return vfail(m, ETC_ERR_UNSUPPORTED, "pickle protocol %u",
				             m->p[m->pos]);
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
					return vfail(m, ETC_ERR_LIMIT, "more than %zu open MARKs",
					             m->max_stack);
				size_t cap = m->marks_cap ? m->marks_cap * 2 : 32;
				size_t *nm = realloc(m->marks, cap * sizeof *nm);
				if (!nm)
					return vfail(m, ETC_ERR_NOMEM, "out of memory");
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
			ETC_TRY(new_bytes(m, m->p + m->pos, len, (int64_t)m->pos, &o));
			ETC_TRY(push(m, o));
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
			ETC_TRY(op_stack_global(m));
			break;
		case 'c': /* GLOBAL */
			ETC_TRY(op_global(m));
			break;
		case 'Q': /* BINPERSID */
			ETC_TRY(op_persid(m));
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
			ETC_TRY(pop_mark(m, &start, "TUPLE"));
			ETC_TRY(make_tuple(m, start));
			break;
		case 0x85: /* TUPLE1 */
		case 0x86: /* TUPLE2 */
		case 0x87: /* TUPLE3 */ {
			size_t k = (size_t)(op - 0x84);
			if (m->sp - fence(m) < k)
				return vfail(m, ETC_ERR_FORMAT, "TUPLE%zu: pickle stack underflow",
				             k);
			ETC_TRY(make_tuple(m, m->sp - k));
			break;
		}
		case 'R': /* REDUCE */
			ETC_TRY(op_reduce(m));
			break;
		case 'b': /* BUILD */
			ETC_TRY(op_build(m));
			break;
		case 'a': /* APPEND */
			ETC_TRY(pop(m, &a, "APPEND"));
			ETC_TRY(top(m, &o, "APPEND"));
			if (o->kind != ETC_PY_LIST)
				return vfail(m, ETC_ERR_FORMAT, "APPEND to a %s",
				             kind_name(o->kind));
			ETC_TRY(reserve(m, o, 1));
			o->u.items[o->len++] = a;
			break;
		case 'e': /* APPENDS */
			ETC_TRY(pop_mark(m, &start, "APPENDS"));
			ETC_TRY(below_mark(m, start, &o, "APPENDS"));
			if (o->kind != ETC_PY_LIST)
				return vfail(m, ETC_ERR_FORMAT, "APPENDS to a %s",
				             kind_name(o->kind));
			if (m->sp > start) {
				ETC_TRY(reserve(m, o, m->sp - start));
				memcpy(o->u.items + o->len, m->stack + start,
				       (m->sp - start) * sizeof *o->u.items);
				o->len += (uint32_t)(m->sp - start);
				m->sp = start;
			}
			break;
		case 's': /* SETITEM */
			ETC_TRY(pop(m, &b, "SETITEM"));
			ETC_TRY(pop(m, &a, "SETITEM"));
			ETC_TRY(top(m, &o, "SETITEM"));
			if (o->kind != ETC_PY_DICT)
				return vfail(m, ETC_ERR_FORMAT, "SETITEM on a %s",
				             kind_name(o->kind));
			ETC_TRY(dict_set(m, o, a, b));
			break;
		case 'u': /* SETITEMS */
			ETC_TRY(pop_mark(m, &start, "SETITEMS"));
			ETC_TRY(below_mark(m, start, &o, "SETITEMS"));
			if (o->kind != ETC_PY_DICT)
				return vfail(m, ETC_ERR_FORMAT, "SETITEMS on a %s",
				             kind_name(o->kind));
			if ((m->sp - start) % 2)
				return vfail(m, ETC_ERR_FORMAT,
				             "SETITEMS with an odd number of "
				             "items");
			for (size_t i = start; i < m->sp; i += 2)
				ETC_TRY(dict_set(m, o, m->stack[i], m->stack[i + 1]));
			m->sp = start;
			break;
		case '.': /* STOP */
			ETC_TRY(pop(m, &c, "STOP"));
			ETC_TRY(check_graph(m, c));
			*root = c;
			if (used)
				*used = m->pos;
			return 0;
		default: {
			const char *name = opcode_name(op);
			if (name)
				return vfail(m, ETC_ERR_FORMAT,
				             "pickle opcode %s (0x%02x) is not supported", name,
				             op);
			return vfail(m, ETC_ERR_FORMAT, "unknown pickle opcode 0x%02x", op);
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

/* ---- tensor elements ------------------------------------------------------ */

/* Storage element index of logical element `i`. */
static uint64_t storage_index(const etc_pytensor *t, uint64_t i)
{
	uint64_t idx = (uint64_t)t->storage_offset;
	for (uint32_t d = t->tensor.ndim; d-- > 0;) {
		uint64_t size = (uint64_t)etc_tensor_size(&t->tensor, d);
		if (size == 0)
			return idx;
		idx += (i % size) * (uint64_t)etc_tensor_stride(&t->tensor, d);
		i /= size;
	}
	return idx;
}

double etc_pytensor_get(const etc_pytensor *t, uint64_t i)
{
	etc_tensor s = t->tensor;
	s.data = t->storage;
	return etc_tensor_get(&s, storage_index(t, i));
}

/* Walks logical elements [start, start+n), calling visit with storage indexes. */
typedef struct walker {
	const etc_pytensor *t;
	uint64_t idx[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t size[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t stride[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t at;
} walker;

static void walker_init(walker *w, const etc_pytensor *t, uint64_t start)
{
	uint32_t nd = t->tensor.ndim;
	w->t = t;
	w->at = (uint64_t)t->storage_offset;
	uint64_t i = start;
	for (uint32_t d = nd; d-- > 0;) {
		w->size[d] = (uint64_t)etc_tensor_size(&t->tensor, d);
		w->stride[d] = (uint64_t)etc_tensor_stride(&t->tensor, d);
		w->idx[d] = w->size[d] ? i % w->size[d] : 0;
		i = w->size[d] ? i / w->size[d] : 0;
		w->at += w->idx[d] * w->stride[d];
	}
}

static void walker_next(walker *w)
{
	for (uint32_t d = w->t->tensor.ndim; d-- > 0;) {
		if (++w->idx[d] < w->size[d]) {
			w->at += w->stride[d];
			return;
		}
		w->at -= (w->size[d] - 1) * w->stride[d];
		w->idx[d] = 0;
	}
}

void etc_pytensor_to_double(const etc_pytensor *t, uint64_t start, size_t n, double *dst)
{
	if (t->contiguous && t->tensor.data) {
		etc_tensor_to_double(&t->tensor, start, n, dst);
		return;
	}
	etc_tensor s = t->tensor;
	s.data = t->storage;
	walker w;
	walker_init(&w, t, start);
	for (size_t i = 0; i < n; i++) {
		dst[i] = etc_tensor_get(&s, w.at);
		walker_next(&w);
	}
}

int etc_pytensor_copy(const etc_pytensor *t, void *dst, size_t cap)
{
	if (!t || (!dst && t->tensor.nbytes) || cap < t->tensor.nbytes)
		return ETC_ERR_USAGE;
	if (t->tensor.numel == 0)
		return 0;
	if (t->contiguous && t->tensor.data) {
		memcpy(dst, t->tensor.data, (size_t)t->tensor.nbytes);
		return 0;
	}
	size_t esz = etc_scalar_type_size(t->tensor.scalar_type);
	uint8_t *out = dst;
	walker w;
	walker_init(&w, t, 0);
	for (uint64_t i = 0; i < t->tensor.numel; i++) {
		memcpy(out + i * esz, t->storage + w.at * esz, esz);
		walker_next(&w);
	}
	return 0;
}
