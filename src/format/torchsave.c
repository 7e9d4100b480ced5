/*
 * torchsave.c - torch.save archives: find `<top>/data.pkl` by name, run the
 * restricted pickle machine over it and resolve each persistent id to the
 * storage member `<top>/data/<key>` (FORMATS.md §5). Storages are loaded
 * once per key and shared by every tensor viewing them; stored members are
 * not copied. A bare pickle (pickle.dumps of tensors, as ETRecords before
 * ExecuTorch v1.3 hold, or a legacy non-zip torch.save file) is read too:
 * its storages come from the legacy streams handled by torch_legacy.c.
 */
#include "format/pickle.h"
#include "format/torch_legacy.h"
#include "format/zipread.h"

#include <stdlib.h>

struct etc_torchsave {
	etc_map map;
	etc_arena arena;
	etc_zip *zip;
	const char *name;
	const char *prefix;
	const etc_pyobj *root;
	const etc_pystorage **storages; /* by zip entry index */
	const char *pkl;                /* the pickle's member name, for messages */
	int64_t pkl_offset;             /* its data's offset in the archive, or -1 */
	const char *warning;            /* bytes after the zip archive, or NULL */
};

static int load_storage(void *ctx, const char *key, int scalar_type, const char *location,
                        uint64_t numel, size_t pos, const etc_pystorage **out, etc_error *err)
{
	etc_torchsave *ts = ctx;
	int64_t where = ts->pkl_offset >= 0 ? ts->pkl_offset + (int64_t)pos : -1;
	size_t plen = strlen(ts->prefix), klen = strlen(key);
	char *member = etc_arena_alloc(&ts->arena, plen + klen + 8, 1);
	if (!member)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	memcpy(member, ts->prefix, plen);
	memcpy(member + plen, "/data/", 6);
	memcpy(member + plen + 6, key, klen + 1);
	const etc_zip_entry *e = etc_zip_find(ts->zip, member);
	if (!e)
		return etc_fail(err, ETC_ERR_FORMAT, ts->name, where,
		                "%s byte %zu: storage '%s' has no member %s in the archive",
		                ts->pkl, pos, key, member);
	size_t index = etc_zip_index(ts->zip, e);
	const etc_pystorage *have = ts->storages[index];
	if (have) {
		if (have->scalar_type != scalar_type || have->numel != numel)
			return etc_fail(
			    err, ETC_ERR_FORMAT, ts->name, where,
			    "%s byte %zu: storage '%s' is referenced as %llu %s "
			    "elements and as %llu %s elements",
			    ts->pkl, pos, key, (unsigned long long)have->numel,
			    have->scalar_type < 0 ? "byte"
			                          : etc_scalar_type_name(have->scalar_type),
			    (unsigned long long)numel,
			    scalar_type < 0 ? "byte" : etc_scalar_type_name(scalar_type));
		*out = have;
		return 0;
	}
	uint64_t esz = scalar_type < 0 ? 1 : etc_scalar_type_size(scalar_type), nbytes;
	const uint8_t *data;
	size_t size;
	int64_t at;
	ETC_TRY(etc_zip_read(ts->zip, e, &data, &size, &at, err));
	if (!etc_mul_u64(numel, esz, &nbytes) || nbytes != size)
		return etc_fail(err, ETC_ERR_FORMAT, ts->name, at,
		                "%s byte %zu: storage '%s' should hold %llu %s elements (%llu "
		                "bytes) but member %s has %zu bytes",
		                ts->pkl, pos, key, (unsigned long long)numel,
		                scalar_type < 0 ? "byte" : etc_scalar_type_name(scalar_type),
		                (unsigned long long)(numel * esz), member, size);
	etc_pystorage *st = etc_arena_alloc(&ts->arena, 1, sizeof *st);
	if (!st)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	st->key = etc_arena_strdup(&ts->arena, key, klen);
	st->location = etc_arena_strdup(&ts->arena, location, strlen(location));
	if (!st->key || !st->location)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	st->scalar_type = scalar_type;
	st->numel = numel;
	st->data = data;
	st->nbytes = size;
	st->archive_offset = at;
	ts->storages[index] = st;
	*out = st;
	return 0;
}

/* Finds the single `<top>/data.pkl` and sets ts->prefix. */
static int find_pickle(etc_torchsave *ts, const etc_zip_entry **out, etc_error *err)
{
	const etc_zip_entry *found = NULL;
	for (size_t i = 0; i < etc_zip_count(ts->zip); i++) {
		const etc_zip_entry *e = etc_zip_entry_at(ts->zip, i);
		static const char tail[] = "/data.pkl";
		size_t tl = sizeof tail - 1;
		if (e->name_len <= tl || memcmp(e->name + e->name_len - tl, tail, tl) != 0 ||
		    memchr(e->name, '/', e->name_len - tl))
			continue;
		if (found)
			return etc_fail(err, ETC_ERR_FORMAT, ts->name, -1,
			                "two pickles in one archive: %s and %s", found->name,
			                e->name);
		found = e;
	}
	if (!found)
		return etc_fail(err, ETC_ERR_FORMAT, ts->name, -1,
		                "not a torch.save archive: no <top>/data.pkl member");
	ts->prefix = etc_arena_strdup(&ts->arena, found->name, found->name_len - 9);
	if (!ts->prefix)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	*out = found;
	return 0;
}

/* Storages are read as little-endian; a big-endian save is refused. */
static int check_byteorder(etc_torchsave *ts, etc_error *err)
{
	size_t plen = strlen(ts->prefix);
	char *member = etc_arena_alloc(&ts->arena, plen + 11, 1);
	if (!member)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	memcpy(member, ts->prefix, plen);
	memcpy(member + plen, "/byteorder", 11);
	const etc_zip_entry *e = etc_zip_find(ts->zip, member);
	if (!e)
		return 0;
	const uint8_t *data;
	size_t size;
	int64_t at;
	ETC_TRY(etc_zip_read(ts->zip, e, &data, &size, &at, err));
	if (size == 6 && memcmp(data, "little", 6) == 0)
		return 0;
	if (size == 3 && memcmp(data, "big", 3) == 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, ts->name, at,
		                "the archive was saved on a big-endian machine (%s is \"big\")",
		                member);
	return etc_fail(err, ETC_ERR_FORMAT, ts->name, at, "%s is neither \"little\" nor \"big\"",
	                member);
}

/*
 * A pickle rather than a zip. pickle.loads ignores what follows STOP, and so
 * does this; a legacy torch.save file is recognised by its first pickle.
 */
static int load_pickle(etc_torchsave *ts, const uint8_t *data, size_t size, etc_error *err)
{
	etc_pickle_opts opts = {.file = ts->name, .member = "pickle", .base_offset = 0};
	size_t used;
	ts->prefix = "";
	ts->pkl = "pickle";
	ts->pkl_offset = 0;
	ETC_TRY(etc_unpickle_prefix(&ts->arena, data, size, &opts, &ts->root, &used, err));
	if (!etc_torch_legacy_is_magic(ts->root))
		return 0;
	opts.member = "legacy torch.save stream";
	return etc_torch_legacy_read(&ts->arena, data, size, &opts, &ts->root, err);
}

static int load(etc_torchsave *ts, const uint8_t *data, size_t size, uint64_t max_inflated,
                const etc_zip_release *release, etc_error *err)
{
	if (size >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5)
		return load_pickle(ts, data, size, err);
	ETC_TRY(etc_zip_open(&ts->zip, &ts->arena, data, size, ts->name, err));
	ts->warning = etc_zip_warning(ts->zip); /* arena memory: outlives the zip */
	if (release)
		etc_zip_set_release(ts->zip, release);
	if (max_inflated < etc_zip_budget_left(ts->zip))
		etc_zip_set_budget(ts->zip, max_inflated);
	ts->storages =
	    etc_arena_alloc(&ts->arena, etc_zip_count(ts->zip) + 1, sizeof *ts->storages);
	if (!ts->storages)
		return etc_fail(err, ETC_ERR_NOMEM, ts->name, -1, "out of memory");
	const etc_zip_entry *pkl = NULL;
	ETC_TRY(find_pickle(ts, &pkl, err));
	ETC_TRY(check_byteorder(ts, err));
	const uint8_t *p;
	size_t n;
	int64_t at;
	ETC_TRY(etc_zip_read(ts->zip, pkl, &p, &n, &at, err));
	ts->pkl = pkl->name;
	ts->pkl_offset = at;
	etc_pickle_opts opts = {
	    .file = ts->name,
	    .member = pkl->name,
	    .base_offset = at,
	    .load = load_storage,
	    .ctx = ts,
	};
	ETC_TRY(etc_unpickle(&ts->arena, p, n, &opts, &ts->root, err));
	etc_zip_close(ts->zip);
	ts->zip = NULL;
	return 0;
}

static int create(etc_torchsave **out, const char *name, etc_error *err)
{
	etc_torchsave *ts = calloc(1, sizeof *ts);
	if (!ts)
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	etc_arena_init(&ts->arena);
	ts->name = etc_arena_strdup(&ts->arena, name, strlen(name));
	if (!ts->name) {
		free(ts);
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	}
	*out = ts;
	return 0;
}

int etc_torchsave_open(etc_torchsave **out, const char *path, etc_error *err)
{
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_torchsave_open: NULL argument");
	*out = NULL;
	etc_torchsave *ts;
	ETC_TRY(create(&ts, path, err));
	int rc = etc_map_open(&ts->map, path, err);
	if (rc == 0)
		rc = load(ts, ts->map.data, ts->map.size, UINT64_MAX, NULL, err);
	if (rc < 0) {
		etc_torchsave_free(ts);
		return rc;
	}
	*out = ts;
	return 0;
}

int etc_torchsave_wrap_nested(etc_torchsave **out, const void *data, size_t len, const char *name,
                              uint64_t max_inflated, const etc_zip_release *release, etc_error *err)
{
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_torchsave_wrap: NULL argument");
	*out = NULL;
	etc_torchsave *ts;
	ETC_TRY(create(&ts, name ? name : "<memory>", err));
	int rc = load(ts, data, len, max_inflated, release, err);
	if (rc < 0) {
		etc_torchsave_free(ts);
		return rc;
	}
	*out = ts;
	return 0;
}

int etc_torchsave_wrap(etc_torchsave **out, const void *data, size_t len, const char *name,
                       etc_error *err)
{
	if (out)
		*out = NULL;
	return etc_torchsave_wrap_nested(out, data, len, name, UINT64_MAX, NULL, err);
}

void etc_torchsave_free(etc_torchsave *ts)
{
	if (!ts)
		return;
	etc_zip_close(ts->zip);
	etc_map_close(&ts->map);
	etc_arena_release(&ts->arena);
	free(ts);
}

const char *etc_torchsave_warning(const etc_torchsave *ts)
{
	return ts ? ts->warning : NULL;
}

const etc_pyobj *etc_torchsave_root(const etc_torchsave *ts)
{
	return ts->root;
}

const char *etc_torchsave_name(const etc_torchsave *ts)
{
	return ts->name;
}

const char *etc_torchsave_prefix(const etc_torchsave *ts)
{
	return ts->prefix;
}
