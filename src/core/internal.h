/*
 * internal.h - helpers shared by the library's modules and never exported:
 * error reporting, the per-file arena, read-only file mappings and
 * little-endian loads.
 */
#ifndef ETC_INTERNAL_H
#define ETC_INTERNAL_H

#include "etcompare/common.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#if defined(__GNUC__)
#define ETC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ETC_PRINTF(f, a)
#endif

/*
 * Fills `err` (if non-NULL) with "file: byte N: message" and returns
 * `status`, so that a failure is one statement: return etc_fail(...).
 * `offset` < 0 omits the byte position; file NULL or "" omits the file.
 */
int etc_fail(etc_error *err, int status, const char *file, int64_t offset, const char *fmt, ...)
    ETC_PRINTF(5, 6);

/* Propagates a negative status from a call that has already filled the error. */
#define ETC_TRY(expr)                                                                              \
	do {                                                                                       \
		int etc_try_rc_ = (expr);                                                          \
		if (etc_try_rc_ < 0)                                                               \
			return etc_try_rc_;                                                        \
	} while (0)

/* Little-endian loads that tolerate any alignment. */
static inline uint16_t etc_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t etc_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
static inline uint64_t etc_le64(const uint8_t *p)
{
	return (uint64_t)etc_le32(p) | ((uint64_t)etc_le32(p + 4) << 32);
}

/*
 * The arena: every allocation belonging to one loaded file comes from here and
 * is released at once with etc_arena_release. Chunks grow geometrically.
 */
typedef struct etc_arena_chunk etc_arena_chunk;
typedef struct etc_arena {
	etc_arena_chunk *head;
	size_t total; /* bytes handed out, for limits and reports */
} etc_arena;

void etc_arena_init(etc_arena *a);
void etc_arena_release(etc_arena *a);
/* 16-byte aligned, zero-filled; NULL on overflow or out of memory. */
void *etc_arena_alloc(etc_arena *a, size_t count, size_t size);
char *etc_arena_strdup(etc_arena *a, const char *s, size_t len);

/*
 * A read-only view of a whole file: mmap for regular files, read into memory
 * for anything else (pipes, /dev/stdin). Empty files have data != NULL.
 */
typedef struct etc_map {
	const uint8_t *data;
	size_t size;
	bool mapped;
	void *owned; /* malloc'ed copy when not mapped */
} etc_map;

/* The most read from standard input ("-"): 1 GiB. */
#define ETC_MAP_STDIN_MAX ((uint64_t)1 << 30)
int etc_map_open(etc_map *m, const char *path, etc_error *err);
void etc_map_close(etc_map *m);
/*
 * Drops the resident pages that lie wholly inside [off, off + len) of a file
 * mapping (madvise MADV_DONTNEED). The mapping is read-only and private, so
 * the bytes stay valid: a later read faults them back in from the page cache.
 * Does nothing for a copy in memory.
 */
void etc_map_release(const etc_map *m, size_t off, size_t len);
/* The largest span of a file the kernel maps at one fault (a PMD-sized
 * large folio: ext4, xfs): a release that should not make the next read
 * fault a folio in again stops at a multiple of it. */
#define ETC_FOLIO_SPAN ((uintptr_t)2 << 20)

/* Overflow-checked arithmetic; return false on overflow. */
static inline bool etc_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}
static inline bool etc_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* numpy's percentile q (0..100, linear) of n sorted values (stats.c); NaN for n 0. */
double etc_percentile_sorted_(const double *sorted, size_t n, double q);
/*
 * The same percentile of n unsorted finite values in linear time (quickselect);
 * reorders v. Equal to etc_percentile_sorted_ on the sorted values.
 */
double etc_percentile_select_(double *v, size_t n, double q);
/* Sorts ascending as the percentile statistics do (stats.c). */
void etc_sort_doubles_(double *v, size_t n);

/* Copies a C string into a fixed buffer, always NUL-terminated. */
void etc_strlcpy(char *dst, const char *src, size_t cap);

/* CRC-32 (ISO-HDLC, as in zip) of `n` bytes, continuing from `crc` (start with 0). */
uint32_t etc_crc32(uint32_t crc, const uint8_t *p, size_t n);

#endif
