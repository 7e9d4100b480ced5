/*
 * parallel.c - runs a range of independent items on a few threads
 * (parallel.h). Threads are started per call and joined before it returns:
 * nothing is left running, no pool spins between calls.
 */
#include "core/parallel.h"
#include "core/guard.h"
#include "core/internal.h"

#include <stdbool.h>

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 64
#define DEFAULT_CAP 8

/* ETC_THREADS's value as a thread count: a number from 1 to 64, else 0. */
static unsigned threads_parse(const char *s)
{
	if (!s || !*s)
		return 0;
	char *end;
	long v = strtol(s, &end, 10);
	return *end == '\0' && v >= 1 && v <= MAX_THREADS ? (unsigned)v : 0;
}

unsigned etc_thread_count_(void)
{
	return etc_threads(NULL);
}

unsigned etc_threads(int *env_ignored)
{
	const char *s = getenv("ETC_THREADS");
	unsigned v = threads_parse(s);
	if (env_ignored)
		*env_ignored = s && *s && !v;
	if (v)
		return v;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		return 1;
	return n > DEFAULT_CAP ? DEFAULT_CAP : (unsigned)n;
}

typedef struct part {
	etc_range_fn fn;
	void *ctx;
	size_t begin, end;
	pthread_t tid;
	int started;
	bool guarded;
	const void *fault;
} part;

static void *run_part(void *arg)
{
	part *p = arg;
	if (p->guarded)
		etc_guard_run_worker_(p->fn, p->ctx, p->begin, p->end, &p->fault);
	else
		p->fn(p->ctx, p->begin, p->end);
	return NULL;
}

void etc_parallel_for_(size_t n, unsigned threads, etc_range_fn fn, void *ctx)
{
	if (n == 0)
		return;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	if (threads > n)
		threads = (unsigned)n;
	if (threads <= 1) {
		fn(ctx, 0, n);
		return;
	}
	part parts[MAX_THREADS];
	bool guarded = etc_guard_active_();
	for (unsigned k = 0; k < threads; k++) {
		parts[k] =
		    (part){fn, ctx, n * k / threads, n * (k + 1) / threads, 0, 0, guarded, NULL};
		if (k > 0)
			parts[k].started =
			    pthread_create(&parts[k].tid, NULL, run_part, &parts[k]) == 0;
	}
	/* under a guard the caller's own range is caught here too: a fault in it
	 * must not leave the call before every worker (which reads ctx, on the
	 * caller's stack) has been joined */
	for (unsigned k = 0; k < threads; k++) {
		if (k > 0 && parts[k].started)
			pthread_join(parts[k].tid, NULL);
		else if (guarded)
			etc_guard_run_worker_(fn, ctx, parts[k].begin, parts[k].end,
			                      &parts[k].fault);
		else
			fn(ctx, parts[k].begin, parts[k].end);
	}
	/* a read of a truncated input ends the caller's guarded call */
	for (unsigned k = 0; k < threads; k++)
		if (parts[k].fault)
			etc_guard_rethrow_(parts[k].fault);
}
