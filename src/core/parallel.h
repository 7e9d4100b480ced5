/*
 * parallel.h - a fixed split of a range of independent items over a few
 * threads (parallel.c). The split never decides what is computed, only who
 * computes it: callers whose items write separate results get the same
 * bytes whatever the thread count.
 */
#ifndef ETC_PARALLEL_H
#define ETC_PARALLEL_H

#include <stddef.h>

/* Runs items [begin, end) of a range; called once per thread. */
typedef void (*etc_range_fn)(void *ctx, size_t begin, size_t end);

/* The thread count for large work: etc_threads (etcompare/common.h). */
unsigned etc_thread_count_(void);

/*
 * fn(ctx, begin, end) over [0, n) split into `threads` contiguous ranges of
 * nearly equal size (at most n); the first range runs on the calling
 * thread. Returns when every range is done. A thread that cannot be
 * started has its range run on the calling thread.
 */
void etc_parallel_for_(size_t n, unsigned threads, etc_range_fn fn, void *ctx);

#endif
