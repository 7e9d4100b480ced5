/*
 * etcompare/trace.h - export of ETDump profiles to the Chrome Trace Event
 * Format (JSON object form), which Perfetto UI and chrome://tracing open.
 *
 * Mapping: one process per ETDump (pid 1, 2, ...), named after the file;
 * per run two threads: tid 2r+1 "run r: NAME" with the operator and
 * framework events, tid 2r+2 "run r: NAME (delegate)" with the delegated
 * events (a delegate id is set). Each profile event is a complete event
 * ("ph": "X") at its own start time with its duration; allocations are
 * counters ("ph": "C", one series per run and allocator, the bytes
 * allocated so far) at the end time of the run's latest profile event, or
 * the start of its first one before any ended (the ETDump gives
 * allocations no time of their own); allocations naming no allocator of
 * their run are skipped. Debug events carry no
 * time and are not exported. Times are microseconds, as the format wants,
 * written as exact decimals of the source timestamps.
 */
#ifndef ETCOMPARE_TRACE_H
#define ETCOMPARE_TRACE_H

#include "common.h"
#include "etdump.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etc_trace_options {
	/** Unit of the timestamps (etc_time_scale, default ns). Cycles are
	 *  written as if one cycle were one microsecond. */
	int source_time_scale;
} etc_trace_options;

ETC_API void etc_trace_options_init(etc_trace_options *opt);

/** Counts of what etc_trace_write wrote. */
typedef struct etc_trace_stats {
	uint64_t complete_events; /**< "X" events (operator, framework and delegate) */
	uint64_t delegate_events; /**< of which on delegate tracks */
	uint64_t counter_events;  /**< "C" events (allocations) */
	uint64_t skipped_events;  /**< debug events and empty events */
} etc_trace_stats;

/**
 * Writes `n` ETDumps as one trace to `out`, streaming (memory does not grow
 * with the number of events). A start time after the end time is read as a
 * 32-bit clock wrap when both fit in 32 bits, as the Inspector does, and is
 * otherwise an error naming the run and event.
 * @param stats filled when non-NULL
 * @return 0, ETC_ERR_FORMAT, ETC_ERR_USAGE or ETC_ERR_IO
 */
ETC_API int etc_trace_write(FILE *out, const etc_etdump *const *dumps, size_t n,
                            const etc_trace_options *opt, etc_trace_stats *stats, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
