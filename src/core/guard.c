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
 *
 * A host that reads the library's mappings itself (the Python package's
 * zero-copy numpy views) cannot put a recovery point around its reads, so
 * etc_guard_install_process_handler adds a second way out: a registry of
 * every live file mapping, one fixed array of slots for the whole process.
 * It has to be process-wide, and its slots plain atomics: SIGBUS reaches
 * the handler on whatever thread touched the page (a numpy loop, a BLAS
 * thread), with no argument, and the handler may take no lock. A fault in
 * a registered mapping replaces the pages from the faulting one to the end
 * of the mapping with anonymous zero pages (mmap MAP_FIXED, which the
 * kernel does atomically), marks the slot "changed" and returns, so the
 * read completes (with zeros); etc_guard_check_file then fails for that
 * file until it is closed. Slots are filled and emptied under a mutex; the
 * handler only reads lo/hi and sets `changed`.
 *
 * A recovery point names the files mapped inside its call. A file mapped
 * before the call (a C host opens its inputs, then guards the analysis) is
 * named from a list of every live mapping's path: it is only read after the
 * siglongjmp, in ordinary context, so it is a plain list under a mutex.
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
#include <sys/mman.h>
#include <unistd.h>

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

enum { PROCESS_MAPS = 1024 };

typedef struct process_map {
	_Atomic uintptr_t lo, hi; /* lo == 0: a free slot */
	_Atomic bool changed;
	char *path; /* under registry_lock */
} process_map;

typedef struct named_map {
	uintptr_t lo, hi;
	struct named_map *next;
	char path[]; /* NUL-terminated */
} named_map;

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static named_map *names; /* every live mapping, newest first */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static process_map registry[PROCESS_MAPS];
static _Atomic bool process_on;
static _Atomic unsigned changes;    /* marks ever set: the checks' fast path */
static _Atomic uintptr_t page_size; /* sysconf is not async-signal-safe: read once */

/* In the handler: zero pages over a registered mapping's vanished part. */
static bool zero_fill(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, page = page_size;
	if (!process_on || page == 0)
		return false;
	for (size_t k = 0; k < PROCESS_MAPS; k++) {
		uintptr_t lo = registry[k].lo, hi = registry[k].hi;
		if (lo == 0 || a < lo || a >= hi)
			continue;
		uintptr_t from = a & ~(page - 1);
		uintptr_t to = (hi + page - 1) & ~(page - 1);
		void *p = mmap((void *)from, to - from, PROT_READ,
		               MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return false;
		registry[k].changed = true;
		changes++;
		return true;
	}
	return false;
}

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
	guard *g = current;
	if (g) {
		g->fault = info->si_addr;
		siglongjmp(g->jump, 1);
	}
	if (zero_fill(info->si_addr))
		return; /* the read is retried and sees zeros */
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

/* Under install_lock. */
static void install_locked(void)
{
	if (installed++ == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &previous);
	}
}

static void install(void)
{
	pthread_mutex_lock(&install_lock);
	install_locked();
	pthread_mutex_unlock(&install_lock);
}

static void uninstall(void)
{
	pthread_mutex_lock(&install_lock);
	if (--installed == 0)
		sigaction(SIGBUS, &previous, NULL);
	pthread_mutex_unlock(&install_lock);
}

int etc_guard_install_process_handler(etc_error *err)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "cannot install the SIGBUS handler: no page size");
	pthread_mutex_lock(&install_lock);
	if (!process_on) {
		page_size = (uintptr_t)page;
		install_locked(); /* never uninstalled: the count stays above zero */
		process_on = true;
	}
	pthread_mutex_unlock(&install_lock);
	return 0;
}

int etc_guard_register_(const void *data, size_t size, const char *path, etc_error *err)
{
	if (!process_on)
		return 0;
	char *copy = strdup(path);
	if (!copy)
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	pthread_mutex_lock(&registry_lock);
	for (size_t k = 0; k < PROCESS_MAPS; k++) {
		process_map *m = &registry[k];
		if (m->lo != 0)
			continue;
		m->path = copy;
		m->changed = false;
		m->hi = (uintptr_t)data + size;
		m->lo = (uintptr_t)data; /* last: a slot is live once lo is set */
		pthread_mutex_unlock(&registry_lock);
		return 0;
	}
	pthread_mutex_unlock(&registry_lock);
	free(copy);
	return etc_fail(err, ETC_ERR_LIMIT, path, -1,
	                "more than %d files are mapped at once in this process: free some "
	                "(Inspector objects, references) first",
	                PROCESS_MAPS);
}

static void unregister(const void *data)
{
	if (!process_on)
		return;
	pthread_mutex_lock(&registry_lock);
	for (size_t k = 0; k < PROCESS_MAPS; k++) {
		process_map *m = &registry[k];
		if (m->lo != (uintptr_t)data || data == NULL)
			continue;
		m->lo = 0; /* first: the handler no longer matches the slot */
		m->hi = 0;
		free(m->path);
		m->path = NULL;
		break;
	}
	pthread_mutex_unlock(&registry_lock);
}

int etc_guard_watch_copy(const void *data, size_t size, const void *library_addr, etc_error *err)
{
	if (!process_on || !data || !size)
		return 0;
	char path[GUARD_PATH] = "";
	uintptr_t a = (uintptr_t)library_addr;
	pthread_mutex_lock(&registry_lock);
	for (size_t k = 0; k < PROCESS_MAPS; k++)
		if (registry[k].lo != 0 && a >= registry[k].lo && a < registry[k].hi &&
		    registry[k].path) {
			snprintf(path, sizeof path, "%s", registry[k].path);
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	if (!path[0])
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_guard_watch_copy: the address is in no file the library maps");
	return etc_guard_register_(data, size, path, err);
}

void etc_guard_unwatch_copy(const void *data)
{
	unregister(data);
}

int etc_guard_check_file(const char *path, etc_error *err)
{
	if (!path || !process_on || changes == 0)
		return 0;
	int rc = 0;
	pthread_mutex_lock(&registry_lock);
	for (size_t k = 0; k < PROCESS_MAPS && rc == 0; k++) {
		process_map *m = &registry[k];
		if (m->lo != 0 && m->changed && m->path && strcmp(m->path, path) == 0)
			rc = etc_fail(err, ETC_ERR_IO, path, -1,
			              "changed while being read (truncated by another process?): "
			              "what was read after the change is zeros, not the file");
	}
	pthread_mutex_unlock(&registry_lock);
	return rc;
}

void etc_guard_note_map_(const void *data, size_t size, const char *path)
{
	size_t len = strlen(path);
	named_map *nm = malloc(sizeof *nm + len + 1);
	if (nm) { /* without memory the file is only "an input file" */
		nm->lo = (uintptr_t)data;
		nm->hi = (uintptr_t)data + size;
		memcpy(nm->path, path, len + 1);
		pthread_mutex_lock(&names_lock);
		nm->next = names;
		names = nm;
		pthread_mutex_unlock(&names_lock);
	}
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
	unregister(data);
	pthread_mutex_lock(&names_lock);
	for (named_map **p = &names; *p; p = &(*p)->next)
		if ((*p)->lo == (uintptr_t)data) {
			named_map *gone = *p;
			*p = gone->next;
			free(gone);
			break;
		}
	pthread_mutex_unlock(&names_lock);
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

/* The path of the mapping the fault hit, copied into `buf`; NULL when unknown. */
static const char *fault_file(const guard *g, char *buf, size_t cap)
{
	uintptr_t a = (uintptr_t)g->fault;
	for (; g; g = g->outer)
		for (size_t k = 0; k < g->nmaps; k++)
			if (a >= g->maps[k].lo && a < g->maps[k].hi)
				return g->maps[k].path;
	const char *found = NULL;
	pthread_mutex_lock(&names_lock);
	for (const named_map *m = names; m && !found; m = m->next)
		if (a >= m->lo && a < m->hi) {
			snprintf(buf, cap, "%s", m->path);
			found = buf;
		}
	pthread_mutex_unlock(&names_lock);
	return found;
}

int etc_run_guarded(int (*fn)(void *ctx), void *ctx, etc_error *err)
{
	if (!fn)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_run_guarded: NULL fn");
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
		char path[GUARD_PATH];
		const char *file = fault_file(g, path, sizeof path);
		rc = etc_fail(err, ETC_ERR_IO, file ? file : "an input file", -1,
		              "changed while being read (truncated by another process?)");
	}
	current = g->outer;
	uninstall();
	free(g);
	return rc;
}
