/*
 * output.c - atomic output files: write "<dir>/.<name>.XXXXXX", then
 * fsync and rename over the target, so readers never see half a report.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/report.h"
#include "internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

struct etc_output {
	FILE *f;
	char *path, *tmp;
	bool is_stdout;
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
	size_t n = strlen(path);
	o->path = malloc(n + 1);
	o->tmp = malloc(n + 16);
	if (!o->path || !o->tmp) {
		etc_output_abort(o);
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	}
	memcpy(o->path, path, n + 1);
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	memcpy(o->tmp, path, dirlen);
	snprintf(o->tmp + dirlen, n + 16 - dirlen, ".%s.XXXXXX", path + dirlen);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;
		free(o->tmp);
		o->tmp = NULL;
		etc_output_abort(o);
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot create output file: %s",
				strerror(e));
	}
	/* mkstemp creates 0600; keep the target's mode, else the usual 0644. */
	struct stat st;
	fchmod(fd, stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		etc_output_abort(o);
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot open output: %s", strerror(e));
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
		if (fflush(stdout) != 0 || ferror(stdout))
			rc = etc_fail(err, ETC_ERR_IO, "<stdout>", -1, "write failed");
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
	}
	free(o->tmp);
	free(o->path);
	free(o);
}
