/*
 * zipread.c - zip archives in memory: libzip for opening, consistency checks
 * and inflation; a small central-directory walk of our own for the data
 * offsets libzip does not publish, so STORED members can be handed out
 * without copying (see zipread.h).
 */
#include "format/zipread.h"

#include <zlib.h>

#include <stdlib.h>
#include <zip.h>

#define SIG_LOCAL     0x04034b50u
#define SIG_CENTRAL   0x02014b50u
#define SIG_EOCD      0x06054b50u
#define SIG_Z64_LOC   0x07064b50u
#define SIG_Z64_EOCD  0x06064b50u
#define EOCD_LEN      22u
#define Z64_LOC_LEN   20u
#define Z64_EOCD_LEN  56u
#define CENTRAL_LEN   46u
#define LOCAL_LEN     30u
#define FLAG_ENCRYPT  0x0001u
#define FLAG_DESCRIPT 0x0008u
#define U32_MAX_FIELD 0xffffffffu
/* The end of a message about a damaged archive: what to do about it. */
#define DAMAGED "the file is truncated or damaged: write (export) or copy it again"

struct etc_zip {
	etc_arena *arena;
	const uint8_t *data;
	size_t size; /* the archive: up to the end of the end record's comment */
	const char *name;
	const char *warning; /* bytes after the archive, or NULL */
	zip_t *za;
	etc_zip_entry *entries;
	size_t count;
	size_t *sorted; /* entry indexes sorted by name */
	uint64_t cd_offset, cd_size;
	uint64_t budget, inflated;
	/* told of a stored member's bytes once its CRC-32 check has read them */
	etc_zip_release release;
};

/* True when [off, off+len) lies inside [0, limit). */
static bool span_ok(uint64_t off, uint64_t len, uint64_t limit)
{
	uint64_t end;
	return etc_add_u64(off, len, &end) && end <= limit;
}

/* Locates the end of central directory (and the ZIP64 record when present). */
static int find_directory(etc_zip *z, uint64_t *count, etc_error *err)
{
	const uint8_t *d = z->data;
	size_t size = z->size;
	if (size < EOCD_LEN)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, -1,
		                "not a zip archive (%zu bytes, too short for an end record)", size);
	size_t lowest = size - EOCD_LEN > 0xffff ? size - EOCD_LEN - 0xffff : 0;
	size_t pos = size - EOCD_LEN;
	for (;;) {
		if (etc_le32(d + pos) == SIG_EOCD &&
		    pos + EOCD_LEN + etc_le16(d + pos + 20) <= size)
			break;
		if (pos == lowest)
			return etc_fail(
			    err, ETC_ERR_FORMAT, z->name, -1,
			    "not a zip archive (no end of central directory record in "
			    "the last 64 KiB: truncated, more than 64 KiB appended after "
			    "its end, or not a zip at all; %zu bytes)",
			    size);
		pos--;
	}
	/* As Python's zipfile (ETRecord's own reader) and numpy.load: the archive
	 * ends where the end record's comment does; bytes after it (padding, a
	 * signature, a second file) are no part of it. Everything below is
	 * checked against the shortened size, so offsets in the end record found
	 * in such bytes still cannot point past the archive. */
	uint64_t archive_end = pos + EOCD_LEN + etc_le16(d + pos + 20);
	if (archive_end < size) {
		const char *fmt =
		    "%s: %llu bytes after the zip archive's end (byte %llu) are ignored";
		unsigned long long extra = size - archive_end, at = archive_end;
		int len = snprintf(NULL, 0, fmt, z->name, extra, at);
		char *msg = len < 0 ? NULL : etc_arena_alloc(z->arena, (size_t)len + 1, 1);
		if (!msg)
			return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
		snprintf(msg, (size_t)len + 1, fmt, z->name, extra, at);
		z->warning = msg;
		z->size = size = (size_t)archive_end;
	}
	const uint8_t *e = d + pos;
	if (etc_le16(e + 4) != 0 || etc_le16(e + 6) != 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, z->name, (int64_t)pos,
		                "multi-disk zip archives are not supported");
	uint64_t n = etc_le16(e + 10);
	uint64_t cd_size = etc_le32(e + 12), cd_offset = etc_le32(e + 16);
	uint64_t limit = pos;
	if (pos >= Z64_LOC_LEN && etc_le32(d + pos - Z64_LOC_LEN) == SIG_Z64_LOC) {
		const uint8_t *loc = d + pos - Z64_LOC_LEN;
		uint64_t at = etc_le64(loc + 8);
		if (!span_ok(at, Z64_EOCD_LEN, pos - Z64_LOC_LEN) ||
		    etc_le32(d + at) != SIG_Z64_EOCD)
			return etc_fail(
			    err, ETC_ERR_FORMAT, z->name, (int64_t)(pos - Z64_LOC_LEN),
			    "the ZIP64 locator before the end record (byte %zu) points to "
			    "byte %llu, where there is no ZIP64 end record: " DAMAGED,
			    pos, (unsigned long long)at);
		const uint8_t *r = d + at;
		if (etc_le32(r + 16) != 0 || etc_le32(r + 20) != 0)
			return etc_fail(err, ETC_ERR_UNSUPPORTED, z->name, (int64_t)at,
			                "multi-disk zip archives are not supported");
		n = etc_le64(r + 32);
		cd_size = etc_le64(r + 40);
		cd_offset = etc_le64(r + 48);
		limit = at;
	}
	if (!span_ok(cd_offset, cd_size, limit))
		return etc_fail(
		    err, ETC_ERR_FORMAT, z->name, (int64_t)pos,
		    "the end record (byte %zu) puts the central directory at [%llu, +%llu), "
		    "not within the %llu bytes before it: " DAMAGED,
		    pos, (unsigned long long)cd_offset, (unsigned long long)cd_size,
		    (unsigned long long)limit);
	if (n > cd_size / CENTRAL_LEN)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)pos,
		                "the end record announces %llu entries, which cannot fit in its "
		                "%llu-byte central directory: " DAMAGED,
		                (unsigned long long)n, (unsigned long long)cd_size);
	z->cd_offset = cd_offset;
	z->cd_size = cd_size;
	*count = n;
	return 0;
}

/* Reads the ZIP64 extended-information extra field over the 0xffffffff fields. */
static bool zip64_extra(const uint8_t *x, size_t xlen, uint64_t *usize, uint64_t *csize,
                        uint64_t *lho, bool want_lho)
{
	size_t i = 0;
	while (i + 4 <= xlen) {
		uint16_t id = etc_le16(x + i), len = etc_le16(x + i + 2);
		if (i + 4 + len > xlen)
			return false;
		if (id == 0x0001) {
			const uint8_t *f = x + i + 4;
			size_t at = 0;
			if (*usize == U32_MAX_FIELD) {
				if (at + 8 > len)
					return false;
				*usize = etc_le64(f + at);
				at += 8;
			}
			if (*csize == U32_MAX_FIELD) {
				if (at + 8 > len)
					return false;
				*csize = etc_le64(f + at);
				at += 8;
			}
			if (want_lho && *lho == U32_MAX_FIELD) {
				if (at + 8 > len)
					return false;
				*lho = etc_le64(f + at);
			}
			return true;
		}
		i += 4 + (size_t)len;
	}
	return *usize != U32_MAX_FIELD && *csize != U32_MAX_FIELD &&
	       (!want_lho || *lho != U32_MAX_FIELD);
}

/* Checks the local header of `e` against the central directory; sets data_offset. */
static int check_local(etc_zip *z, etc_zip_entry *e, etc_error *err)
{
	const uint8_t *d = z->data;
	uint64_t at = e->header_offset;
	if (!span_ok(at, LOCAL_LEN, z->cd_offset) || etc_le32(d + at) != SIG_LOCAL)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		                "member %s: no local header at offset %llu: " DAMAGED, e->name,
		                (unsigned long long)at);
	const uint8_t *h = d + at;
	uint16_t flags = etc_le16(h + 6), method = etc_le16(h + 8);
	uint32_t crc = etc_le32(h + 14);
	uint64_t csize = etc_le32(h + 18), usize = etc_le32(h + 22);
	uint16_t nlen = etc_le16(h + 26), xlen = etc_le16(h + 28);
	if (!span_ok(at + LOCAL_LEN, (uint64_t)nlen + xlen, z->cd_offset))
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		                "member %s: local header runs into the central directory: " DAMAGED,
		                e->name);
	if (nlen != e->name_len || memcmp(h + LOCAL_LEN, e->name, nlen) != 0)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		                "member %s: the local header names a different file: " DAMAGED,
		                e->name);
	if (method != e->method)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		                "member %s: compression method %u in the local header, %u in the "
		                "central directory",
		                e->name, method, e->method);
	if ((usize == U32_MAX_FIELD || csize == U32_MAX_FIELD) &&
	    !zip64_extra(h + LOCAL_LEN + nlen, xlen, &usize, &csize, NULL, false))
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		                "member %s: bad ZIP64 extra field in the local header", e->name);
	/* With a data descriptor (bit 3) the local fields may be zero. */
	bool zero_ok = (flags & FLAG_DESCRIPT) != 0;
	if (!((crc == e->crc || (zero_ok && crc == 0)) &&
	      (csize == e->csize || (zero_ok && csize == 0)) &&
	      (usize == e->usize || (zero_ok && usize == 0))))
		return etc_fail(
		    err, ETC_ERR_FORMAT, z->name, (int64_t)at,
		    "member %s: local header (crc %08x, sizes %llu/%llu) disagrees with "
		    "the central directory (crc %08x, sizes %llu/%llu): " DAMAGED,
		    e->name, crc, (unsigned long long)csize, (unsigned long long)usize, e->crc,
		    (unsigned long long)e->csize, (unsigned long long)e->usize);
	uint64_t data = at + LOCAL_LEN + nlen + xlen;
	if (!span_ok(data, e->csize, z->cd_offset))
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)data,
		                "member %s: %llu bytes of data at offset %llu run past the start "
		                "of the central directory (%llu): " DAMAGED,
		                e->name, (unsigned long long)e->csize, (unsigned long long)data,
		                (unsigned long long)z->cd_offset);
	e->data_offset = data;
	return 0;
}

static int compare_names(const etc_zip_entry *a, const etc_zip_entry *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	return a->name_len < b->name_len ? -1 : a->name_len > b->name_len;
}

/* Merge sort of indexes by name (qsort has no context argument in C11). */
static void sort_indexes(const etc_zip_entry *ents, size_t *v, size_t *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_indexes(ents, v, tmp, h);
	sort_indexes(ents, v + h, tmp, n - h);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = compare_names(&ents[v[j]], &ents[v[i]]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
}

static int walk_directory(etc_zip *z, uint64_t count, etc_error *err)
{
	const uint8_t *d = z->data;
	uint64_t p = z->cd_offset, end = z->cd_offset + z->cd_size;
	z->entries = etc_arena_alloc(z->arena, count ? count : 1, sizeof *z->entries);
	z->sorted = etc_arena_alloc(z->arena, count ? count : 1, sizeof *z->sorted);
	size_t *tmp = etc_arena_alloc(z->arena, count ? count : 1, sizeof *tmp);
	if (!z->entries || !z->sorted || !tmp)
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	for (uint64_t i = 0; i < count; i++) {
		if (!span_ok(p, CENTRAL_LEN, end) || etc_le32(d + p) != SIG_CENTRAL)
			return etc_fail(
			    err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			    "central directory entry %llu of %llu (directory [%llu, +%llu)) "
			    "is missing or truncated: " DAMAGED,
			    (unsigned long long)i, (unsigned long long)count,
			    (unsigned long long)z->cd_offset, (unsigned long long)z->cd_size);
		const uint8_t *c = d + p;
		etc_zip_entry *e = &z->entries[i];
		e->flags = etc_le16(c + 8);
		e->method = etc_le16(c + 10);
		e->crc = etc_le32(c + 16);
		e->csize = etc_le32(c + 20);
		e->usize = etc_le32(c + 24);
		uint16_t nlen = etc_le16(c + 28), xlen = etc_le16(c + 30), clen = etc_le16(c + 32);
		e->header_offset = etc_le32(c + 42);
		if (!span_ok(p + CENTRAL_LEN, (uint64_t)nlen + xlen + clen, end))
			return etc_fail(
			    err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			    "central directory entry %llu runs past the directory: " DAMAGED,
			    (unsigned long long)i);
		e->name = etc_arena_strdup(z->arena, (const char *)c + CENTRAL_LEN, nlen);
		if (!e->name)
			return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
		e->name_len = nlen;
		if (memchr(e->name, '\0', nlen))
			return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			                "central directory entry %llu: name contains a NUL byte",
			                (unsigned long long)i);
		if ((e->usize == U32_MAX_FIELD || e->csize == U32_MAX_FIELD ||
		     e->header_offset == U32_MAX_FIELD) &&
		    !zip64_extra(c + CENTRAL_LEN + nlen, xlen, &e->usize, &e->csize,
		                 &e->header_offset, true))
			return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			                "member %s: bad ZIP64 extra field", e->name);
		if (e->flags & FLAG_ENCRYPT)
			return etc_fail(err, ETC_ERR_UNSUPPORTED, z->name, (int64_t)p,
			                "member %s is encrypted", e->name);
		if (e->method != ZIP_CM_STORE && e->method != ZIP_CM_DEFLATE)
			return etc_fail(err, ETC_ERR_UNSUPPORTED, z->name, (int64_t)p,
			                "member %s: compression method %u is not supported (only "
			                "stored and deflated)",
			                e->name, e->method);
		if (e->method == ZIP_CM_STORE && e->csize != e->usize)
			return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			                "member %s is stored but its sizes differ (%llu vs %llu)",
			                e->name, (unsigned long long)e->csize,
			                (unsigned long long)e->usize);
		/* Cross-check with libzip's view of the same entry. */
		const char *zn = z->za ? zip_get_name(z->za, i, ZIP_FL_ENC_RAW) : e->name;
		zip_stat_t st;
		zip_stat_init(&st);
		if (!z->za) /* diagnosing what libzip refused: our own checks only */
			st.valid = 0;
		else if (!zn || strcmp(zn, e->name) != 0 || zip_stat_index(z->za, i, 0, &st) < 0 ||
		         ((st.valid & ZIP_STAT_SIZE) && st.size != e->usize) ||
		         ((st.valid & ZIP_STAT_COMP_SIZE) && st.comp_size != e->csize))
			return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)p,
			                "central directory entry %llu (%s) is inconsistent",
			                (unsigned long long)i, e->name);
		ETC_TRY(check_local(z, e, err));
		z->sorted[i] = i;
		p += CENTRAL_LEN + nlen + xlen + clen;
	}
	if (p != end)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)p,
		                "%llu bytes of the central directory [%llu, +%llu) follow the %llu "
		                "entries the end record announces%s: " DAMAGED,
		                (unsigned long long)(end - p), (unsigned long long)z->cd_offset,
		                (unsigned long long)z->cd_size, (unsigned long long)count,
		                span_ok(p, 4, end) && etc_le32(d + p) == SIG_CENTRAL
		                    ? " (another entry starts there: the count is wrong)"
		                    : "");
	z->count = count;
	sort_indexes(z->entries, z->sorted, tmp, count);
	for (size_t i = 1; i < count; i++)
		if (compare_names(&z->entries[z->sorted[i - 1]], &z->entries[z->sorted[i]]) == 0)
			return etc_fail(err, ETC_ERR_FORMAT, z->name, -1,
			                "member name %s occurs twice",
			                z->entries[z->sorted[i]].name);
	return 0;
}

int etc_zip_open(etc_zip **out, etc_arena *arena, const uint8_t *data, size_t size,
                 const char *name, etc_error *err)
{
	if (!out || !arena || (!data && size))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_zip_open: NULL argument");
	*out = NULL;
	if (!name)
		name = "<memory>";
	etc_zip *z = etc_arena_alloc(arena, 1, sizeof *z);
	if (!z || !(z->name = etc_arena_strdup(arena, name, strlen(name))))
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	z->arena = arena;
	z->release.fn = NULL;
	z->release.ctx = NULL;
	z->data = data ? data : (const uint8_t *)"";
	z->size = size;
	z->warning = NULL;

	uint64_t count = 0;
	ETC_TRY(find_directory(z, &count, err));
	size = z->size; /* without bytes after the archive */
	uint64_t ratio;
	if (!etc_mul_u64(size, ETC_ZIP_BUDGET_RATIO, &ratio) ||
	    !etc_add_u64(ratio, ETC_ZIP_BUDGET_BASE, &z->budget))
		z->budget = UINT64_MAX;

	zip_error_t ze;
	zip_error_init(&ze);
	zip_source_t *src = zip_source_buffer_create(z->data, size, 0, &ze);
	if (!src) {
		zip_error_fini(&ze);
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	}
	z->za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	if (!z->za) {
		/* libzip's reasons are terse ("No such file" for a member larger than
		 * the archive): our own walk names the member and the sizes. */
		int rc = walk_directory(z, count, err);
		if (rc == 0)
			rc = etc_fail(
			    err, ETC_ERR_FORMAT, z->name, -1,
			    "not a valid zip archive (libzip: %s; central directory at byte "
			    "%llu, %llu entries, end record before byte %zu): " DAMAGED,
			    zip_error_strerror(&ze), (unsigned long long)z->cd_offset,
			    (unsigned long long)count, size);
		zip_source_free(src);
		zip_error_fini(&ze);
		return rc;
	}
	zip_error_fini(&ze);
	zip_int64_t n = zip_get_num_entries(z->za, 0);
	if (n < 0 || (uint64_t)n != count) {
		int rc = etc_fail(err, ETC_ERR_FORMAT, z->name, -1,
		                  "the end record announces %llu entries, libzip finds %lld",
		                  (unsigned long long)count, (long long)n);
		etc_zip_close(z);
		return rc;
	}
	int rc = walk_directory(z, count, err);
	if (rc < 0) {
		etc_zip_close(z);
		return rc;
	}
	*out = z;
	return 0;
}

void etc_zip_close(etc_zip *z)
{
	if (!z)
		return;
	if (z->za)
		zip_discard(z->za);
	z->za = NULL;
}

void etc_zip_set_budget(etc_zip *z, uint64_t max_inflated)
{
	z->budget = max_inflated;
}

bool etc_zip_contains(const etc_zip *z, const void *p, size_t n)
{
	uintptr_t lo = (uintptr_t)z->data, at = (uintptr_t)p;
	return at >= lo && at - lo <= z->size && n <= z->size - (at - lo);
}

uint64_t etc_zip_budget_left(const etc_zip *z)
{
	return z->budget > z->inflated ? z->budget - z->inflated : 0;
}

const char *etc_zip_warning(const etc_zip *z)
{
	return z->warning;
}

size_t etc_zip_count(const etc_zip *z)
{
	return z->count;
}

const etc_zip_entry *etc_zip_entry_at(const etc_zip *z, size_t i)
{
	return i < z->count ? &z->entries[i] : NULL;
}

size_t etc_zip_index(const etc_zip *z, const etc_zip_entry *e)
{
	return (size_t)(e - z->entries);
}

const etc_zip_entry *etc_zip_find(const etc_zip *z, const char *name)
{
	etc_zip_entry key = {.name = name, .name_len = strlen(name)};
	size_t lo = 0, hi = z->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const etc_zip_entry *e = &z->entries[z->sorted[mid]];
		int c = compare_names(e, &key);
		if (c == 0)
			return e;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int inflate_member(etc_zip *z, etc_zip_entry *e, size_t index, etc_error *err)
{
	if (!z->za)
		return etc_fail(err, ETC_ERR_USAGE, z->name, -1,
		                "member %s: the archive was already closed", e->name);
	if (e->usize > z->budget - z->inflated || e->usize > SIZE_MAX - 1)
		return etc_fail(
		    err, ETC_ERR_LIMIT, z->name, (int64_t)e->header_offset,
		    "member %s inflates to %llu bytes, more than the %llu bytes allowed "
		    "for a %zu-byte archive (zip bomb?)",
		    e->name, (unsigned long long)e->usize,
		    (unsigned long long)(z->budget - z->inflated), z->size);
	uint8_t *buf = etc_arena_alloc(z->arena, (size_t)e->usize + 1, 1);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1,
		                "member %s: out of memory for %llu bytes", e->name,
		                (unsigned long long)e->usize);
	zip_file_t *f = zip_fopen_index(z->za, index, 0);
	if (!f)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)e->header_offset,
		                "member %s cannot be opened: %s", e->name,
		                zip_error_strerror(zip_get_error(z->za)));
	uint64_t got = 0;
	int rc = 0;
	while (got < e->usize) {
		zip_int64_t r = zip_fread(f, buf + got, e->usize - got);
		if (r < 0) {
			rc = etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)e->header_offset,
			              "member %s cannot be inflated: %s", e->name,
			              zip_file_strerror(f));
			break;
		}
		if (r == 0)
			break;
		got += (uint64_t)r;
	}
	if (rc == 0) {
		uint8_t extra;
		zip_int64_t r = zip_fread(f, &extra, 1);
		if (got != e->usize || r != 0)
			rc = etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)e->header_offset,
			              "member %s inflates to %s than the %llu bytes declared",
			              e->name, got < e->usize ? "fewer" : "more",
			              (unsigned long long)e->usize);
	}
	zip_fclose(f);
	if (rc < 0)
		return rc;
	z->inflated += e->usize;
	e->data = buf;
	return 0;
}

void etc_zip_set_release(etc_zip *z, const etc_zip_release *release)
{
	z->release = *release;
}

/* The CRC-32 of a stored member, its bytes handed to z->release as the
 * check passes them, up to 2 MiB address boundaries (the kernel maps a
 * file's large folios whole): a large member's pages are not all resident
 * at once (MobileNetV2's 8 MB state dict, the peak of loading its graph). */
static uint32_t stored_crc(const etc_zip *z, const uint8_t *p, size_t n)
{
	const uintptr_t span = ETC_FOLIO_SPAN;
	if (!z->release.fn)
		return etc_crc32(0, p, n);
	uint32_t crc = 0;
	for (size_t at = 0; at < n;) {
		uintptr_t next = ((uintptr_t)(p + at) + span) & ~(span - 1);
		size_t m = (size_t)(next - (uintptr_t)(p + at));
		if (m > n - at)
			m = n - at;
		crc = etc_crc32(crc, p + at, m);
		z->release.fn(z->release.ctx, p + at, m);
		at += m;
	}
	return crc;
}

int etc_zip_read(etc_zip *z, const etc_zip_entry *ce, const uint8_t **data, size_t *size,
                 int64_t *archive_offset, etc_error *err)
{
	if (!z || !ce || ce < z->entries || ce >= z->entries + z->count || !data || !size)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_zip_read: bad argument");
	size_t index = (size_t)(ce - z->entries);
	etc_zip_entry *e = &z->entries[index];
	if (!e->loaded) {
		if (e->method == ZIP_CM_STORE) {
			const uint8_t *p = z->data + e->data_offset;
			uint32_t crc = stored_crc(z, p, (size_t)e->usize);
			if (crc != e->crc)
				return etc_fail(
				    err, ETC_ERR_FORMAT, z->name, (int64_t)e->data_offset,
				    "member %s: CRC-32 %08x, expected %08x", e->name, crc, e->crc);
			e->data = p;
		} else {
			ETC_TRY(inflate_member(z, e, index, err));
		}
		e->loaded = true;
	}
	*data = e->data;
	*size = (size_t)e->usize;
	if (archive_offset)
		*archive_offset = e->method == ZIP_CM_STORE ? (int64_t)e->data_offset : -1;
	return 0;
}

int etc_zip_view(etc_zip *z, const etc_zip_entry *e, const uint8_t **data, size_t *size,
                 int64_t *archive_offset, bool *crc_pending, etc_error *err)
{
	if (!z || !e || e < z->entries || e >= z->entries + z->count || !data || !size ||
	    !crc_pending)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_zip_view: bad argument");
	*crc_pending = false;
	if (e->loaded || e->method != ZIP_CM_STORE)
		return etc_zip_read(z, e, data, size, archive_offset, err);
	/* check_local ran at open: data_offset and the sizes are consistent */
	*data = z->data + e->data_offset;
	*size = (size_t)e->usize;
	if (archive_offset)
		*archive_offset = (int64_t)e->data_offset;
	*crc_pending = true;
	return 0;
}
