/*
 * output.c - atomic output files: write "<dir>/.<name>.XXXXXX", then
 * fsync and rename over the target, so readers never see half a report.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/report.h"
#include "core/internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

struct etc_output {
	FILE *f;
	char *path, *tmp;
	bool is_stdout; /* written in place: stdout or a non-regular file */
};

int etc_output_open(etc_output **out, const char *path, etc_error *err)
{
	if (!out || !path || !*path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_output_open: empty path");
	etc_output *o = calloc(1, sizeof *o);
	if (!o)
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		o->is_stdout = true;
		*out = o;
		return 0;
	}
	/* Devices, FIFOs and the like (/dev/null, /dev/stdout) are written in
	 * place: renaming over them would replace the node with a file. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			free(o);
			return etc_fail(err, ETC_ERR_IO, path, -1,
			                "is a directory, not an output file");
		}
		o->f = fopen(path, "w");
		if (!o->f) {
			int e = errno;
			free(o);
			return etc_fail(err, ETC_ERR_IO, path, -1, "cannot open output: %s",
			                strerror(e));
		}
		o->is_stdout = true; /* no temporary file, no rename */
		*out = o;
		return 0;
	}
	/* A symlink to a file: replace the file it points to, keep the link. */
	char *resolved = realpath(path, NULL);
	if (resolved)
		path = resolved;
	size_t n = strlen(path);
	o->path = malloc(n + 1);
	o->tmp = malloc(n + 16);
	if (!o->path || !o->tmp) {
		int rc = etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
		free(resolved);
		etc_output_abort(o);
		return rc;
	}
	memcpy(o->path, path, n + 1);
	free(resolved);
	resolved = NULL;
	path = o->path;
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	memcpy(o->tmp, path, dirlen);
	snprintf(o->tmp + dirlen, n + 16 - dirlen, ".%s.XXXXXX", path + dirlen);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;
		int rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot create output file: %s",
		                  strerror(e));
		free(o->tmp);
		o->tmp = NULL;
		etc_output_abort(o);
		return rc;
	}
	/* mkstemp creates 0600; keep the target's mode, else the usual 0644. */
	fchmod(fd, stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		int rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot open output: %s", strerror(e));
		close(fd);
		etc_output_abort(o);
		return rc;
	}
	*out = o;
	return 0;
}

FILE *etc_output_stream(etc_output *o)
{
	return o->f;
}

int etc_output_commit(etc_output *o, etc_error *err)
{
	int rc = 0;
	if (o->is_stdout) {
		bool bad = fflush(o->f) != 0 || ferror(o->f);
		if (o->f != stdout)
			bad |= fclose(o->f) != 0;
		if (bad)
			rc = etc_fail(err, ETC_ERR_IO, o->f == stdout ? "<stdout>" : NULL, -1,
			              "write failed");
		free(o);
		return rc;
	}
	int bad = fflush(o->f) != 0 || ferror(o->f);
	bad |= fsync(fileno(o->f)) != 0 && errno != EINVAL;
	int e = errno;
	bad |= fclose(o->f) != 0;
	o->f = NULL;
	if (!bad && rename(o->tmp, o->path) != 0) {
		e = errno;
		bad = 1;
	}
	if (bad) {
		rc = etc_fail(err, ETC_ERR_IO, o->path, -1, "cannot write: %s", strerror(e));
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	free(o);
	return rc;
}

void etc_output_abort(etc_output *o)
{
	if (!o)
		return;
	if (!o->is_stdout) {
		if (o->f)
			fclose(o->f);
		if (o->tmp)
			unlink(o->tmp);
	} else if (o->f && o->f != stdout) {
		fclose(o->f);
	}
	free(o->tmp);
	free(o->path);
	free(o);
}
