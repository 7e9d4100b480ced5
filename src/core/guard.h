/*
 * guard.h - the recovery point for mapped inputs that change underfoot
 * (guard.c). A file truncated by another process while it is mapped makes
 * the next read of a page past its new end raise SIGBUS; inside
 * etc_run_guarded that read ends the guarded call with ETC_ERR_IO
 * "FILE: changed while being read" instead of killing the process.
 */
#ifndef ETC_CORE_GUARD_H
#define ETC_CORE_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "etcompare/common.h"

/* Notes a mapping opened on this thread, so a fault in it can be named. */
void etc_guard_note_map_(const void *data, size_t size, const char *path);
/*
 * With the process handler on (etc_guard_install_process_handler), puts a
 * new mapping in the process registry; ETC_ERR_LIMIT when it is full.
 */
int etc_guard_register_(const void *data, size_t size, const char *path, etc_error *err);
/* Forgets a mapping (its address range may be reused). */
void etc_guard_forget_map_(const void *data);

/* Whether the calling thread runs inside etc_run_guarded. */
bool etc_guard_active_(void);
/*
 * Runs fn(ctx, begin, end) on a worker thread of a guarded caller: a fault
 * ends the worker's range and returns true (etc_guard_rethrow_ on the
 * caller then ends the whole guarded call).
 */
bool etc_guard_run_worker_(void (*fn)(void *, size_t, size_t), void *ctx, size_t begin, size_t end,
                           const void **fault);
/* On the guarded caller: ends the guarded call as if it faulted at `fault`. */
void etc_guard_rethrow_(const void *fault);

#endif
