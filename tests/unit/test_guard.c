/*
 * test_guard.c - the process SIGBUS handler (etc_guard_install_process_handler)
 * and the --max-inflate spec (etc_max_inflate_parse).
 *
 * A debug buffer of four pages is opened, truncated to one page by this
 * process (SIGBUS does not care who truncates), and its last page read: the
 * read gives zeros instead of killing the process, the first page keeps the
 * file's bytes, and etc_guard_check_file names the file until the buffer is
 * freed; another file is not affected. A SIGBUS in a mapping the library
 * did not make still ends the process (a forked child).
 *
 * Before that (the process handler turns faults into zeros for good): a
 * guarded etc_parallel_for_ whose own range faults still joins its
 * workers before the call ends (they read the caller's stack).
 */
#define _GNU_SOURCE
#include "check.h"
#include "etcompare/common.h"
#include "etcompare/tensor.h"
#include "core/internal.h"
#include "core/parallel.h"

#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Under AddressSanitizer: leave SIGBUS to the handler under test (ASan
 * installs its own by default; ASAN_OPTIONS from the environment still wins). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "handle_sigbus=0";
}

static void write_file(const char *path, size_t n, int byte)
{
	FILE *f = fopen(path, "wb");
	for (size_t i = 0; i < n; i++)
		fputc(byte, f);
	fclose(f);
}

static void parse(void)
{
	uint64_t b;
	double x;
	CHECK(etc_max_inflate_parse("none", &b, &x) == 0 && b == 0 && x == 0);
	CHECK(etc_max_inflate_parse("64x", &b, &x) == 0 && b == 0 && x == 64);
	CHECK(etc_max_inflate_parse("1.5X", &b, &x) == 0 && x == 1.5);
	CHECK(etc_max_inflate_parse("4096", &b, &x) == 0 && b == 4096 && x == 0);
	CHECK(etc_max_inflate_parse("512M", &b, &x) == 0 && b == (uint64_t)512 << 20);
	CHECK(etc_max_inflate_parse("8g", &b, &x) == 0 && b == (uint64_t)8 << 30);
	CHECK(etc_max_inflate_parse("2T", &b, &x) == 0 && b == (uint64_t)2 << 40);
	const char *bad[] = {"",    "0",   "-1",   "x",    "0x",  "-2x", "1.5G",         "12Q",
	                     "1GG", " 2x", "nanx", "infx", "2 x", "+5",  "99999999999T", "none "};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int rc = etc_max_inflate_parse(bad[i], &b, &x);
		CHECK(rc == ETC_ERR_USAGE);
		if (rc != ETC_ERR_USAGE)
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
	}
	etc_error err;
	CHECK(etc_debug_buffer_set_max_inflate(NULL, "lots", &err) == ETC_ERR_USAGE &&
	      strstr(err.message, "FACTORx"));
	CHECK(etc_debug_buffer_set_max_inflate(NULL, "16x", &err) == 0);
}

typedef struct pf_ctx {
	const volatile uint8_t *p;
	long page;
	atomic_int late;
} pf_ctx;

/* Range 0 (the calling thread) reads a truncated page; range 1 (a worker)
 * writes to the context after a while. */
static void pf_range(void *ctx, size_t begin, size_t end)
{
	pf_ctx *c = ctx;
	(void)end;
	if (begin == 0) {
		(void)c->p[3 * c->page];
	} else {
		usleep(200000);
		atomic_store(&c->late, 1);
	}
}

static int pf_run(void *ctx)
{
	etc_parallel_for_(2, 2, pf_range, ctx);
	return 0;
}

static void parallel_caller_fault(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/etc_guard_pf_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	write_file(path, 4 * (size_t)page, 0x5a);
	etc_map m;
	etc_error err;
	CHECK(etc_map_open(&m, path, &err) == 0);
	CHECK(truncate(path, page) == 0);
	pf_ctx c = {m.data, page, 0};
	int rc = etc_run_guarded(pf_run, &c, &err);
	CHECK(rc < 0 && strstr(err.message, "changed while being read"));
	/* the worker was joined before the guarded call ended */
	CHECK(atomic_load(&c.late) == 1);
	etc_map_close(&m);
	unlink(path);
}

static void truncated(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char path[] = "/tmp/etc_guard_XXXXXX", other[] = "/tmp/etc_guard_other_XXXXXX";
	int fd = mkstemp(path), fd2 = mkstemp(other);
	close(fd);
	close(fd2);
	write_file(path, 4 * (size_t)page, 0x5a);
	write_file(other, 2 * (size_t)page, 0x33);
	etc_error err;
	CHECK(etc_guard_install_process_handler(&err) == 0);
	CHECK(etc_guard_install_process_handler(&err) == 0); /* idempotent */
	etc_debug_buffer *b = NULL, *o = NULL;
	CHECK(etc_debug_buffer_open(&b, path, &err) == 0);
	CHECK(etc_debug_buffer_open(&o, other, &err) == 0);
	if (!b || !o)
		return;
	CHECK(etc_debug_buffer_inflated(b) == 0);
	const volatile uint8_t *p = etc_debug_buffer_data(b);
	CHECK(p[3 * page + 7] == 0x5a);
	CHECK(etc_guard_check_file(path, &err) == 0);
	CHECK(truncate(path, page) == 0);
	CHECK(p[3 * page + 7] == 0); /* zeros, not SIGBUS */
	CHECK(p[2 * page] == 0);
	CHECK(p[10] == 0x5a); /* still in the file */
	CHECK(etc_guard_check_file(path, &err) == ETC_ERR_IO);
	CHECK(strstr(err.message, "changed while being read") && strstr(err.message, path));
	CHECK(etc_guard_check_file(other, &err) == 0);
	CHECK(etc_debug_buffer_data(o)[page + 1] == 0x33);
	etc_debug_buffer_free(b);
	CHECK(etc_guard_check_file(path, &err) == 0); /* closed: forgotten */
	etc_debug_buffer_free(o);

	/* a mapping of the host's own: SIGBUS ends the process as before */
	write_file(path, 4 * (size_t)page, 0x5a);
	pid_t pid = fork();
	if (pid == 0) {
		int f = open(path, O_RDONLY);
		volatile uint8_t *q = mmap(NULL, 4 * (size_t)page, PROT_READ, MAP_PRIVATE, f, 0);
		if (ftruncate(open(path, O_RDWR), page) != 0)
			_exit(3);
		uint8_t v = q[3 * page];
		_exit(v == 0 ? 0 : 4); /* swallowed: the test fails */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
	CHECK(!WIFSIGNALED(status) || WTERMSIG(status) == SIGBUS);
	unlink(path);
	unlink(other);
}

int main(void)
{
	CHECK_GROUP(parse);
	CHECK_GROUP(parallel_caller_fault);
	CHECK_GROUP(truncated);
	return check_report("test_guard");
}
