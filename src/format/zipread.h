/*
 * zipread.h - read-only access to a zip archive held in memory (a mapped
 * file, or a member of another archive given as a byte range).
 *
 * libzip opens and cross-checks the archive (central directory against the
 * local headers); this module additionally walks the central directory itself
 * to learn where each member's data lies, so that a STORED member is returned
 * as a pointer into the caller's buffer (zero-copy, after its local header,
 * sizes and CRC-32 have been checked). Compressed members are inflated by
 * libzip into arena memory, and the total inflated size is capped relative to
 * the archive size (a zip bomb fails with ETC_ERR_LIMIT).
 *
 * Offsets are relative to the start of the buffer given to etc_zip_open.
 */
#ifndef ETC_ZIPREAD_H
#define ETC_ZIPREAD_H

#include "core/internal.h"
#include "etcompare/torchsave.h"

/* Default inflation budget: ETC_ZIP_BUDGET_BASE + ETC_ZIP_BUDGET_RATIO x archive size. */
#define ETC_ZIP_BUDGET_BASE  ((uint64_t)1 << 20)
#define ETC_ZIP_BUDGET_RATIO 256u

/* One member, as described by the central directory. */
typedef struct etc_zip_entry {
	const char *name; /* NUL-terminated copy of the raw name */
	size_t name_len;
	uint16_t method; /* 0 stored, 8 deflated, ... */
	uint16_t flags;  /* general purpose bit flags */
	uint32_t crc;
	uint64_t csize, usize;  /* compressed / uncompressed size */
	uint64_t header_offset; /* local header */
	uint64_t data_offset;   /* first data byte; valid once the member was read */
	/* cached result of etc_zip_read */
	const uint8_t *data;
	bool loaded;
} etc_zip_entry;

typedef struct etc_zip etc_zip;

/*
 * Opens the archive in `data[0, size)` (borrowed: it must outlive every
 * pointer handed out). `name` is used in messages. The etc_zip and every
 * inflated member are allocated from `arena`; etc_zip_close releases libzip's
 * state only, so member bytes stay valid as long as the arena does.
 */
int etc_zip_open(etc_zip **out, etc_arena *arena, const uint8_t *data, size_t size,
                 const char *name, etc_error *err);
void etc_zip_close(etc_zip *z);

/* `fn(ctx, p, n)` is told of a stored member's bytes once etc_zip_read's
 * CRC-32 check has read them (the owner of the mapping gives their pages
 * back). */
typedef struct etc_zip_release {
	void (*fn)(const void *ctx, const void *p, size_t n);
	const void *ctx;
} etc_zip_release;
void etc_zip_set_release(etc_zip *z, const etc_zip_release *release);
/* Sets the total number of bytes all inflated members may occupy. */
void etc_zip_set_budget(etc_zip *z, uint64_t max_inflated);
/* What is left of that budget. */
uint64_t etc_zip_budget_left(const etc_zip *z);
/* [p, p + n) lies in the archive's buffer (not in an inflated member). */
bool etc_zip_contains(const etc_zip *z, const void *p, size_t n);

/*
 * etc_torchsave_wrap for an archive nested in another one (an ETRecord's
 * reference outputs): its members may inflate to at most `max_inflated`
 * bytes in all, what is left of the outer archive's budget, so that the
 * total stays bounded by the size of the outermost file (a small deflated
 * archive holding a torch.save whose own deflated members are large would
 * otherwise multiply the two ratios). `release` (may be NULL) is set on its
 * archive (etc_zip_set_release).
 */
int etc_torchsave_wrap_nested(etc_torchsave **out, const void *data, size_t len, const char *name,
                              uint64_t max_inflated, const etc_zip_release *release,
                              etc_error *err);

/*
 * "NAME: N bytes after the zip archive's end (byte X) are ignored" when the
 * buffer goes on after the end record's comment (padding or a file appended
 * to the archive: Python's zipfile and numpy.load read such files too), else
 * NULL. The archive is read as if the buffer ended at X. Lives in the arena.
 */
const char *etc_zip_warning(const etc_zip *z);

size_t etc_zip_count(const etc_zip *z);
/* Entry `i` in central-directory order (i < etc_zip_count). */
const etc_zip_entry *etc_zip_entry_at(const etc_zip *z, size_t i);
/* Position of `e` (an entry of `z`) in central-directory order. */
size_t etc_zip_index(const etc_zip *z, const etc_zip_entry *e);
/* The member named exactly `name`, or NULL. Names are unique (checked at open). */
const etc_zip_entry *etc_zip_find(const etc_zip *z, const char *name);

/*
 * The bytes of member `e` (from this archive): a pointer into the buffer for
 * a STORED member, arena memory otherwise. *archive_offset (if non-NULL)
 * receives the offset of the data in the buffer, or -1 when it was inflated.
 * A second call returns the cached result.
 */
int etc_zip_read(etc_zip *z, const etc_zip_entry *e, const uint8_t **data, size_t *size,
                 int64_t *archive_offset, etc_error *err);

/*
 * Like etc_zip_read, but a STORED member's CRC-32 is left to the caller:
 * *crc_pending becomes true and nothing read from the bytes may be trusted
 * until etc_crc32 over all of them equals e->crc. This lets a consumer that
 * streams a large member anyway (the accuracy comparison) verify it in the
 * same pass instead of reading it twice. Inflated members are verified here
 * as by etc_zip_read (*crc_pending false).
 */
int etc_zip_view(etc_zip *z, const etc_zip_entry *e, const uint8_t **data, size_t *size,
                 int64_t *archive_offset, bool *crc_pending, etc_error *err);

#endif
