/*
 * map.c - read-only whole-file views. Regular files are memory-mapped so that
 * large debug buffers and ETDumps are never copied; devices, FIFOs and
 * sockets are refused (/dev/zero never ends, a FIFO without a writer never
 * opens). "-" is standard input (so is a pipe given as /dev/stdin), read
 * into memory up to ETC_MAP_STDIN_MAX.
 * etc_map_release hands the pages of a part already read back to the kernel.
 * A mapping opened inside etc_run_guarded is noted there, so that a file
 * truncated underfoot is named in the error (guard.c); with the process
 * handler on (the Python package), every mapping is registered there.
 */
#define _POSIX_C_SOURCE 200809L
#include "core/guard.h"
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t empty_file[1];

static int read_all(etc_map *m, int fd, const char *path, etc_error *err)
{
	size_t cap = 1 << 16, len = 0;
	const uint64_t max = ETC_MAP_STDIN_MAX;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory reading the file");
	for (;;) {
		if (len >= max) {
			free(buf);
			return etc_fail(err, ETC_ERR_LIMIT, path, -1,
			                "standard input is larger than %llu MiB: save it to a "
			                "file and give the file's name",
			                (unsigned long long)(max >> 20));
		}
		if (len == cap) {
			uint8_t *bigger = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
			if (!bigger) {
				free(buf);
				return etc_fail(err, ETC_ERR_NOMEM, path, -1,
				                "out of memory reading the file");
			}
			buf = bigger;
			cap *= 2;
		}
		size_t want = cap - len;
		if (want > max - len)
			want = (size_t)(max - len) + 1; /* one byte past the cap tells it apart */
		ssize_t got = read(fd, buf + len, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			free(buf);
			return etc_fail(err, ETC_ERR_IO, path, -1, "cannot read: %s", strerror(e));
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	m->data = buf;
	m->owned = buf;
	m->size = len;
	return 0;
}

/* Whether st is the process's standard input (opened again as /dev/stdin). */
static bool is_stdin(const struct stat *st)
{
	struct stat in;
	return fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st->st_dev &&
	       in.st_ino == st->st_ino && !S_ISCHR(st->st_mode) && !S_ISBLK(st->st_mode);
}

static int not_regular(const char *path, mode_t mode, etc_error *err)
{
	const char *kind = S_ISFIFO(mode)   ? "a FIFO"
	                   : S_ISSOCK(mode) ? "a socket"
	                   : S_ISCHR(mode)  ? "a character device"
	                   : S_ISBLK(mode)  ? "a block device"
	                                    : "a special file";
	return etc_fail(err, ETC_ERR_IO, path, -1,
	                "not a regular file (%s): give a file saved on disk", kind);
}

int etc_map_open(etc_map *m, const char *path, etc_error *err)
{
	memset(m, 0, sizeof *m);
	if (strcmp(path, "-") == 0)
		return read_all(m, STDIN_FILENO, "-", err);
	/* O_NONBLOCK: opening a FIFO without a writer must not wait for one */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			return not_regular(path, st.st_mode, err); /* a socket: ENXIO */
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot open: %s", strerror(e));
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot stat: %s", strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return etc_fail(err, ETC_ERR_IO, path, -1, "is a directory, not a file");
	}
	int rc = 0;
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > SIZE_MAX) {
			rc = etc_fail(err, ETC_ERR_LIMIT, path, -1, "file too large to map");
		} else if (st.st_size == 0) {
			m->data = empty_file;
			m->size = 0;
		} else {
			void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED) {
				rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot map: %s",
				              strerror(errno));
			} else {
				rc = etc_guard_register_(p, (size_t)st.st_size, path, err);
				if (rc < 0) {
					munmap(p, (size_t)st.st_size);
				} else {
					m->data = p;
					m->size = (size_t)st.st_size;
					m->mapped = true;
					etc_guard_note_map_(p, m->size, path);
				}
			}
		}
	} else if (is_stdin(&st)) {
		rc = read_all(m, STDIN_FILENO, path, err); /* "/dev/stdin": a pipe the user gave */
	} else {
		rc = not_regular(path, st.st_mode, err);
	}
	close(fd);
	return rc;
}

void etc_map_release(const etc_map *m, size_t off, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	if (!m->mapped || page <= 0 || off >= m->size)
		return;
	if (len > m->size - off)
		len = m->size - off;
	uintptr_t mask = (uintptr_t)page - 1;
	uintptr_t lo = ((uintptr_t)m->data + off + mask) & ~mask;
	uintptr_t hi = ((uintptr_t)m->data + off + len) & ~mask;
	/* Advice only: if it fails, the pages simply stay resident. */
	if (lo < hi)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void etc_map_close(etc_map *m)
{
	if (m->mapped) {
		etc_guard_forget_map_(m->data);
		munmap((void *)m->data, m->size);
	}
	free(m->owned);
	memset(m, 0, sizeof *m);
}
