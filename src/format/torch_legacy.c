/*
 * torch_legacy.c - legacy (non-zip) torch.save streams.
 *
 * Layout: five pickles one after the other (magic number, protocol version,
 * sys info, the object, the sorted list of storage keys), then for each key
 * in that list an 8-byte little-endian element count and the storage's raw
 * bytes. The object's persistent ids ('storage', type, key, location, numel,
 * view_metadata) name storages whose bytes come only after it, so the object
 * pickle is interpreted twice: once to learn the storages (tensors built then
 * have no data and are dropped), once more after the bytes are located.
 * Storages point into the stream; nothing is copied.
 */
#include "format/torch_legacy.h"

#include <stdio.h>
#include <stdlib.h>

/* 0x1950a86a20f9469cfc6c, as LONG1 stores it (little-endian). */
static const uint8_t magic[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};

enum { PROTOCOL_VERSION = 1001 };

typedef struct lstorage {
	etc_pystorage st;
	size_t first_pos; /* stream offset of its first persistent id */
	bool listed;
} lstorage;

typedef struct legacy {
	etc_arena *arena;
	const etc_pickle_opts *o;
	const uint8_t *p;
	size_t n;
	lstorage **table; /* open addressing by key */
	size_t cap, count;
	bool located; /* second pass: every storage has its bytes */
	etc_error *err;
} legacy;

static int lfail(const legacy *l, int status, size_t pos, const char *fmt, ...) ETC_PRINTF(4, 5);

static int lfail(const legacy *l, int status, size_t pos, const char *fmt, ...)
{
	char what[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	int64_t off = l->o->base_offset >= 0 ? l->o->base_offset + (int64_t)pos : -1;
	return etc_fail(l->err, status, l->o->file, off, "%s byte %zu: %s",
	                l->o->member ? l->o->member : "legacy torch.save stream", pos, what);
}

bool etc_torch_legacy_is_magic(const etc_pyobj *o)
{
	size_t len;
	const uint8_t *b = etc_pyobj_bigint(o, &len);
	return b && len == sizeof magic && memcmp(b, magic, sizeof magic) == 0;
}

static uint64_t hash_key(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *k; k++)
		h = (h ^ (uint8_t)*k) * 0x100000001b3ull;
	return h;
}

/* The slot holding `key`, or the empty slot where it would go. */
static lstorage **slot(const legacy *l, const char *key)
{
	size_t mask = l->cap - 1;
	for (size_t i = (size_t)hash_key(key) & mask;; i = (i + 1) & mask)
		if (!l->table[i] || strcmp(l->table[i]->st.key, key) == 0)
			return &l->table[i];
}

static int grow(legacy *l)
{
	size_t cap = l->cap ? l->cap * 2 : 16;
	lstorage **t = etc_arena_alloc(l->arena, cap, sizeof *t);
	if (!t)
		return etc_fail(l->err, ETC_ERR_NOMEM, l->o->file, -1, "out of memory");
	lstorage **old = l->table;
	size_t old_cap = l->cap;
	l->table = t;
	l->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			*slot(l, old[i]->st.key) = old[i];
	return 0;
}

static const char *type_name(int scalar_type)
{
	return scalar_type < 0 ? "byte" : etc_scalar_type_name(scalar_type);
}

/* The persistent-id callback of both passes; `pos` counts from the stream's start. */
static int load_storage(void *ctx, const char *key, int scalar_type, const char *location,
                        uint64_t numel, size_t pos, const etc_pystorage **out, etc_error *err)
{
	legacy *l = ctx;
	(void)err;
	if ((l->count + 1) * 2 > l->cap)
		ETC_TRY(grow(l));
	lstorage **s = slot(l, key);
	if (*s) {
		if ((*s)->st.scalar_type != scalar_type || (*s)->st.numel != numel)
			return lfail(
			    l, ETC_ERR_FORMAT, pos,
			    "storage '%s' is referenced as %llu %s elements and as %llu %s "
			    "elements",
			    key, (unsigned long long)(*s)->st.numel,
			    type_name((*s)->st.scalar_type), (unsigned long long)numel,
			    type_name(scalar_type));
		*out = &(*s)->st;
		return 0;
	}
	if (l->located) /* the second pass reads the same pickle: never reached */
		return lfail(l, ETC_ERR_FORMAT, pos, "storage '%s' appeared in the second pass",
		             key);
	uint64_t esz = scalar_type < 0 ? 1 : etc_scalar_type_size(scalar_type), nbytes;
	if (!etc_mul_u64(numel, esz, &nbytes) || nbytes > l->n)
		return lfail(l, ETC_ERR_FORMAT, pos,
		             "storage '%s' claims %llu %s elements, more than the %zu-byte stream "
		             "holds",
		             key, (unsigned long long)numel, type_name(scalar_type), l->n);
	lstorage *ls = etc_arena_alloc(l->arena, 1, sizeof *ls);
	if (!ls)
		return etc_fail(l->err, ETC_ERR_NOMEM, l->o->file, -1, "out of memory");
	ls->st.key = etc_arena_strdup(l->arena, key, strlen(key));
	ls->st.location = etc_arena_strdup(l->arena, location, strlen(location));
	if (!ls->st.key || !ls->st.location)
		return etc_fail(l->err, ETC_ERR_NOMEM, l->o->file, -1, "out of memory");
	ls->st.scalar_type = scalar_type;
	ls->st.numel = numel;
	ls->st.nbytes = nbytes;
	ls->st.archive_offset = -1;
	ls->first_pos = pos;
	*s = ls;
	l->count++;
	*out = &ls->st;
	return 0;
}

static int unpickle_at(legacy *l, size_t start, bool storages, const etc_pyobj **root, size_t *end)
{
	etc_pickle_opts o = *l->o;
	o.legacy = true;
	o.start = start;
	o.load = storages ? load_storage : NULL;
	o.ctx = l;
	return etc_unpickle_prefix(l->arena, l->p, l->n, &o, root, end, l->err);
}

static int check_header(legacy *l, size_t *pos)
{
	const etc_pyobj *v;
	ETC_TRY(unpickle_at(l, 0, false, &v, pos));
	if (!etc_torch_legacy_is_magic(v))
		return lfail(l, ETC_ERR_FORMAT, 0,
		             "not a legacy torch.save stream: the first pickle is a %s, not "
		             "torch's magic number",
		             etc_pykind_name(etc_pyobj_kind(v)));
	size_t at = *pos;
	ETC_TRY(unpickle_at(l, at, false, &v, pos));
	if (etc_pyobj_kind(v) != ETC_PY_INT || etc_pyobj_int(v) != PROTOCOL_VERSION)
		return lfail(l, ETC_ERR_UNSUPPORTED, at,
		             "legacy torch.save protocol version %s%lld (only %d is read)",
		             etc_pyobj_kind(v) == ETC_PY_INT ? "" : "of kind ",
		             (long long)etc_pyobj_int(v), PROTOCOL_VERSION);
	at = *pos;
	ETC_TRY(unpickle_at(l, at, false, &v, pos));
	const etc_pyobj *le = etc_pyobj_dict_get(v, "little_endian");
	if (etc_pyobj_kind(le) != ETC_PY_BOOL)
		return lfail(l, ETC_ERR_FORMAT, at,
		             "the sys info is a %s without a boolean 'little_endian'",
		             etc_pykind_name(etc_pyobj_kind(v)));
	if (!etc_pyobj_bool(le))
		return lfail(l, ETC_ERR_UNSUPPORTED, at,
		             "the stream was saved on a big-endian machine");
	return 0;
}

/* The list of storage keys: each one referenced by the object, none twice. */
static int read_keys(legacy *l, size_t at, const etc_pyobj **keys, size_t *end)
{
	ETC_TRY(unpickle_at(l, at, false, keys, end));
	if (etc_pyobj_kind(*keys) != ETC_PY_LIST)
		return lfail(l, ETC_ERR_FORMAT, at, "the storage keys are a %s, not a list",
		             etc_pykind_name(etc_pyobj_kind(*keys)));
	size_t nkeys = etc_pyobj_len(*keys);
	for (size_t i = 0; i < nkeys; i++) {
		const etc_pyobj *k = etc_pyobj_item(*keys, i);
		if (etc_pyobj_kind(k) != ETC_PY_STR)
			return lfail(l, ETC_ERR_FORMAT, at, "storage key %zu is a %s, not a str", i,
			             etc_pykind_name(etc_pyobj_kind(k)));
		const char *name = etc_pyobj_str(k).ptr;
		lstorage *ls = l->cap ? *slot(l, name) : NULL;
		if (!ls)
			return lfail(l, ETC_ERR_FORMAT, at,
			             "storage key '%.60s' is listed but no persistent id names it",
			             name);
		if (ls->listed)
			return lfail(l, ETC_ERR_FORMAT, at, "storage key '%.60s' is listed twice",
			             name);
		ls->listed = true;
	}
	for (size_t i = 0; i < l->cap; i++)
		if (l->table[i] && !l->table[i]->listed)
			return lfail(
			    l, ETC_ERR_FORMAT, l->table[i]->first_pos,
			    "storage '%.60s' is not in the list of storage keys at byte %zu",
			    l->table[i]->st.key, at);
	return 0;
}

/* Each listed storage: its element count, then its bytes. */
static int locate(legacy *l, const etc_pyobj *keys, size_t pos)
{
	size_t nkeys = etc_pyobj_len(keys);
	for (size_t i = 0; i < nkeys; i++) {
		lstorage *ls = *slot(l, etc_pyobj_str(etc_pyobj_item(keys, i)).ptr);
		if (l->n - pos < 8)
			return lfail(l, ETC_ERR_FORMAT, pos,
			             "the stream ends before the element count of storage '%.60s' "
			             "(%zu of 8 bytes left)",
			             ls->st.key, l->n - pos);
		uint64_t count = etc_le64(l->p + pos);
		if (count != ls->st.numel)
			return lfail(l, ETC_ERR_FORMAT, pos,
			             "storage '%.60s' has %llu elements here but its persistent id "
			             "at byte %zu says %llu",
			             ls->st.key, (unsigned long long)count, ls->first_pos,
			             (unsigned long long)ls->st.numel);
		pos += 8;
		if (l->n - pos < ls->st.nbytes)
			return lfail(l, ETC_ERR_FORMAT, pos,
			             "storage '%.60s' needs %llu bytes (%llu %s elements), the "
			             "stream ends after %zu",
			             ls->st.key, (unsigned long long)ls->st.nbytes,
			             (unsigned long long)count, type_name(ls->st.scalar_type),
			             l->n - pos);
		ls->st.data = l->p + pos;
		ls->st.archive_offset =
		    l->o->base_offset >= 0 ? l->o->base_offset + (int64_t)pos : -1;
		pos += (size_t)ls->st.nbytes;
	}
	if (pos != l->n)
		return lfail(l, ETC_ERR_FORMAT, pos, "%zu bytes after the last storage",
		             l->n - pos);
	return 0;
}

int etc_torch_legacy_read(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *o,
                          const etc_pyobj **root, etc_error *err)
{
	legacy l = {.arena = arena, .o = o, .p = p ? p : (const uint8_t *)"", .n = n, .err = err};
	*root = NULL;
	size_t obj, keys_at, data_at, end;
	if (n >= 4 && memcmp(l.p, "PK\x03\x04", 4) == 0)
		return lfail(&l, ETC_ERR_UNSUPPORTED, 0,
		             "a zip torch.save archive where a legacy stream belongs (torch's "
		             "storages pickle as legacy streams) is not supported");
	ETC_TRY(check_header(&l, &obj));
	const etc_pyobj *first, *keys;
	ETC_TRY(unpickle_at(&l, obj, true, &first, &keys_at));
	ETC_TRY(read_keys(&l, keys_at, &keys, &data_at));
	ETC_TRY(locate(&l, keys, data_at));
	if (!l.count) {
		*root = first;
		return 0;
	}
	l.located = true;
	return unpickle_at(&l, obj, true, root, &end);
}
