/*
 * etcompare/legacy.h - the legacy profiler dump (`prof_result.bin`) written
 * by ExecuTorch runtimes before ETDump, and the tables the old profiler
 * tools printed from it: per-block events per iteration, framework tax and
 * memory per allocator.
 *
 * Layout (FORMATS.md §7), little-endian, a sequence of blocks:
 *
 *   header, 64 bytes:  char name[32]; uint32 prof_ver (= 1);
 *                      uint32 max_prof_entries, prof_entries,
 *                      max_allocator_entries, allocator_entries,
 *                      max_mem_prof_entries, mem_prof_entries; 4 bytes pad
 *   max_prof_entries x 56 bytes: char name[32]; int32 chain_idx;
 *                      uint32 instruction_idx; uint64 start; uint64 end
 *   max_allocator_entries x 40 bytes: char name[32]; uint64 allocator_id
 *   max_mem_prof_entries x 8 bytes: uint32 allocator_id; uint32 size
 *
 * Only the first *_entries slots of each array are used. Blocks with the
 * same name are iterations of one code block and must log the same events
 * (names) and the same allocations; the allocator table is shared by all
 * blocks. Names end at the first NUL.
 */
#ifndef ETCOMPARE_LEGACY_H
#define ETCOMPARE_LEGACY_H

#include "common.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed legacy profiler dump. */
typedef struct etc_legacy_profile etc_legacy_profile;

/** One profiling entry of one iteration. */
typedef struct etc_legacy_event {
	etc_str name; /**< NUL-terminated copy, at most 32 bytes */
	int32_t chain_idx;
	uint32_t instruction_idx;
	uint64_t start;
	uint64_t end;
} etc_legacy_event;

/** One memory allocation entry. */
typedef struct etc_legacy_allocation {
	uint32_t allocator_id;
	uint32_t size;
} etc_legacy_allocation;

/** One block of the file: one iteration of a named code block. */
typedef struct etc_legacy_iteration {
	uint64_t offset; /**< byte offset of the block header */
	uint32_t index;  /**< position of the block in the file */
	uint32_t event_count;
	const etc_legacy_event *events;
	uint32_t allocation_count;
	const etc_legacy_allocation *allocations;
} etc_legacy_iteration;

/** All blocks of one name, in file order. */
typedef struct etc_legacy_block {
	etc_str name;
	uint32_t iteration_count;
	const etc_legacy_iteration *iterations;
} etc_legacy_block;

/**
 * Maps and parses the dump at `path`.
 * @param out receives the profile; release with etc_legacy_profile_free
 * @return 0, ETC_ERR_IO, ETC_ERR_FORMAT (empty file, truncated block, bad
 *         version, a count past its maximum or the file, an allocation from
 *         an allocator no block declares), ETC_ERR_MISMATCH (iterations of
 *         one block differ), ETC_ERR_NOMEM, ETC_ERR_LIMIT
 */
ETC_API int etc_legacy_profile_open(etc_legacy_profile **out, const char *path, etc_error *err);

/**
 * Parses `len` bytes at `data` (copied what is needed: `data` may be freed
 * afterwards). `name` is used in messages. Same results as _open.
 */
ETC_API int etc_legacy_profile_parse_buffer(etc_legacy_profile **out, const void *data, size_t len,
                                            const char *name, etc_error *err);

/** Releases `p`. NULL is a no-op. */
ETC_API void etc_legacy_profile_free(etc_legacy_profile *p);

/** Number of distinct block names, in first-seen order. */
ETC_API size_t etc_legacy_profile_block_count(const etc_legacy_profile *p);
/** Block `i` (< block_count). Borrowed from `p`. */
ETC_API const etc_legacy_block *etc_legacy_profile_block(const etc_legacy_profile *p, size_t i);
/** Name of allocator `id`, or NULL when no block declared it. */
ETC_API const char *etc_legacy_profile_allocator(const etc_legacy_profile *p, uint64_t id);

/** Units of the legacy timestamps; the tables show ms (cycles stay cycles). */
typedef enum etc_legacy_time_scale {
	ETC_LEGACY_NS = 0,
	ETC_LEGACY_US = 1,
	ETC_LEGACY_MS = 2,
	ETC_LEGACY_CYCLES = 3
} etc_legacy_time_scale;

/** Parses "ns", "us", "ms" or "cycles"; ETC_ERR_USAGE otherwise. */
ETC_API int etc_legacy_time_scale_parse(const char *name, int *out);

/**
 * Duration of `ev` as the old tools showed it: (end - start) / divisor
 * rounded to 4 decimals (ns: 1e6, us: 1e3), or the exact difference for ms
 * and cycles. No clock-wrap correction (the old tools made none).
 */
ETC_API double etc_legacy_duration(const etc_legacy_event *ev, int time_scale);

/**
 * Framework tax of block `b`: per iteration the Method::execute time (the
 * largest per-iteration list, compared element by element, among events whose
 * name contains "Method::execute"), the summed time of events whose name
 * contains "native_call" or "delegate_execute", and
 * round((execute - kernels) / execute, 4) * 100 (NaN when execute is 0).
 * `exec`, `kernels` and `tax` hold b->iteration_count values each.
 * @return true when the block has both kinds of events (else no table)
 */
ETC_API bool etc_legacy_framework_tax(const etc_legacy_block *b, int time_scale, double *exec,
                                      double *kernels, double *tax);

/**
 * Prints the old tools' tables: one profile table per block (Name, Chain,
 * Instr, Frame, one column per iteration), the framework tax tables, then
 * the memory tables (total allocation size per allocator, from the first
 * iteration — the others are checked equal when parsing).
 * Titles and cells show control characters escaped (\xNN).
 * @return 0, ETC_ERR_IO when writing fails, ETC_ERR_USAGE for an unknown
 *         time scale, ETC_ERR_NOMEM
 */
ETC_API int etc_report_legacy(FILE *out, const etc_legacy_profile *p, int time_scale,
                              etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
