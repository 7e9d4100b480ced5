/*
 * guard.c - turns SIGBUS on a mapped input into an error (guard.h,
 * etc_run_guarded in etcompare/common.h).
 *
 * A recovery point is a sigjmp_buf on the stack of etc_run_guarded; the
 * only state besides it is one thread-local pointer to the innermost
 * recovery point of the calling thread. A signal handler cannot be given
 * an argument, and SIGBUS is delivered to the thread that touched the page,
 * so a thread-local pointer is the narrowest thing the handler can find its
 * way back with: no thread sees another's, and nothing is shared.
 *
 * The handler is installed while at least one guarded call runs and the
 * previous disposition is put back when the last one ends (the count and
 * the saved action are the one piece of process state; they are only
 * touched under a mutex, never by the handler). A SIGBUS on a thread
 * without a recovery point (a host's own mapping) is handed to the previous
 * disposition, so the library changes nothing for code it does not guard.
 */
#define _GNU_SOURCE
#include "core/guard.h"
#include "core/internal.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD_MAPS = 32, GUARD_PATH = 1024 };

typedef struct guard_map {
	uintptr_t lo, hi;
	char path[GUARD_PATH];
} guard_map;

typedef struct guard {
	sigjmp_buf jump;
	const void *fault;
	struct guard *outer;
	guard_map maps[GUARD_MAPS];
	size_t nmaps;
	bool worker;
} guard;

static _Thread_local guard *current;

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned installed;
static struct sigaction previous;

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
	guard *g = current;
	if (g) {
		g->fault = info->si_addr;
		siglongjmp(g->jump, 1);
	}
	/* Not ours: what would have happened without the library. */
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction) {
			previous.sa_sigaction(sig, info, uctx);
			return;
		}
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static void install(void)
{
	pthread_mutex_lock(&install_lock);
	if (installed++ == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &previous);
	}
	pthread_mutex_unlock(&install_lock);
}

static void uninstall(void)
{
	pthread_mutex_lock(&install_lock);
	if (--installed == 0)
		sigaction(SIGBUS, &previous, NULL);
	pthread_mutex_unlock(&install_lock);
}

void etc_guard_note_map_(const void *data, size_t size, const char *path)
{
	for (guard *g = current; g; g = g->outer) {
		if (g->worker)
			continue;
		if (g->nmaps == GUARD_MAPS)
			memmove(g->maps, g->maps + 1, sizeof g->maps[0] * (GUARD_MAPS - 1)),
			    g->nmaps--;
		guard_map *m = &g->maps[g->nmaps++];
		m->lo = (uintptr_t)data;
		m->hi = (uintptr_t)data + size;
		snprintf(m->path, sizeof m->path, "%s", path);
		return;
	}
}

void etc_guard_forget_map_(const void *data)
{
	for (guard *g = current; g; g = g->outer)
		for (size_t k = 0; k < g->nmaps; k++)
			if (g->maps[k].lo == (uintptr_t)data) {
				g->maps[k] = g->maps[--g->nmaps];
				return;
			}
}

bool etc_guard_active_(void)
{
	return current != NULL;
}

bool etc_guard_run_worker_(void (*fn)(void *, size_t, size_t), void *ctx, size_t begin, size_t end,
                           const void **fault)
{
	guard g;
	g.fault = NULL;
	g.outer = current;
	g.nmaps = 0;
	g.worker = true;
	install();
	if (sigsetjmp(g.jump, 1) == 0) {
		current = &g;
		fn(ctx, begin, end);
	}
	current = g.outer;
	uninstall();
	*fault = g.fault;
	return g.fault != NULL;
}

void etc_guard_rethrow_(const void *fault)
{
	guard *g = current;
	if (!g)
		abort();
	g->fault = fault;
	siglongjmp(g->jump, 1);
}

static const char *fault_file(const guard *g)
{
	uintptr_t a = (uintptr_t)g->fault;
	for (; g; g = g->outer)
		for (size_t k = 0; k < g->nmaps; k++)
			if (a >= g->maps[k].lo && a < g->maps[k].hi)
				return g->maps[k].path;
	return NULL;
}

int etc_run_guarded(int (*fn)(void *ctx), void *ctx, etc_error *err)
{
	/* volatile: read after a siglongjmp back into this frame */
	guard *volatile g = calloc(1, sizeof *g);
	if (!g)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	g->outer = current;
	install();
	volatile int rc;
	if (sigsetjmp(g->jump, 1) == 0) {
		current = g;
		rc = fn(ctx);
	} else {
		const char *file = fault_file(g);
		rc = etc_fail(err, ETC_ERR_IO, file ? file : "an input file", -1,
		              "changed while being read (truncated by another process?)");
	}
	current = g->outer;
	uninstall();
	free(g);
	return rc;
}
