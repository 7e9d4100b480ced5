/*
 * output.c - atomic output files: write "<dir>/.<name>.XXXXXX", then
 * fsync and rename over the target, so readers never see half a report;
 * and the checks of a run's output paths before anything is written
 * (docs/hardening-outputs.md): no two outputs are one file, no output is
 * an input, one "-" at most, directories writable, symlinks followed only
 * where the kernel's protected_symlinks rule would follow them.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/output.h"
#include "core/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct etc_output {
	FILE *f;
	char *path, *tmp;
	bool is_stdout; /* written in place: stdout or a non-regular file */
};

/* The directory part of path ("." when none), in buf. */
static const char *dir_of(char *buf, size_t cap, const char *path)
{
	etc_strlcpy(buf, path, cap);
	char *slash = strrchr(buf, '/');
	if (!slash) {
		etc_strlcpy(buf, ".", cap);
		return buf;
	}
	if (slash == buf)
		slash[1] = '\0';
	else
		*slash = '\0';
	return buf;
}

/*
 * protected_symlinks for outputs: a symlink in a sticky world-writable
 * directory (/tmp) is followed only when it and its target belong to the
 * invoking user; anywhere else it is followed as before.
 */
static int symlink_allowed(const char *path, etc_error *err)
{
	struct stat lst, dst, tst;
	if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
		return 0;
	char dir[4096];
	if (stat(dir_of(dir, sizeof dir, path), &dst) != 0)
		return 0; /* reported by the directory check */
	bool shared = (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH);
	if (!shared)
		return 0;
	uid_t me = geteuid();
	bool target_ok = stat(path, &tst) != 0 ? errno == ENOENT : tst.st_uid == me;
	if (lst.st_uid == me && target_ok)
		return 0;
	return etc_fail(err, ETC_ERR_IO, path, -1,
	                "refusing to write through a symlink in the shared directory %s: the "
	                "link (uid %u) and its target must both belong to you (uid %u)",
	                dir, (unsigned)lst.st_uid, (unsigned)me);
}

/* Creates "<dir>/.<name>.XXXXXX" with mode 0666 less the umask (the kernel applies it). */
static int create_temp(char *tmp, size_t prefix)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	for (int attempt = 0; attempt < 100; attempt++) {
		for (size_t i = 0; i < 6; i++) {
			x = x * 6364136223846793005ul + 1442695040888963407ul;
			tmp[prefix + i] = digits[(x >> 33) % 36];
		}
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int etc_output_open(etc_output **out, const char *path, etc_error *err)
{
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_output_open: NULL out");
	*out = NULL;
	if (!path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_output_open: NULL path");
	if (!*path)
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
		o->path = o->f ? strdup(path) : NULL; /* named when a write fails */
		if (!o->f || !o->path) {
			int e = o->f ? ENOMEM : errno;
			if (o->f)
				fclose(o->f);
			free(o);
			return etc_fail(err, ETC_ERR_IO, path, -1, "cannot open output: %s",
			                strerror(e));
		}
		o->is_stdout = true; /* no temporary file, no rename */
		*out = o;
		return 0;
	}
	int rc0 = symlink_allowed(path, err);
	if (rc0 < 0) {
		free(o);
		return rc0;
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
	int fd = create_temp(o->tmp, strlen(o->tmp) - 6);
	if (fd < 0) {
		int e = errno;
		int rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot create output file: %s",
		                  strerror(e));
		free(o->tmp);
		o->tmp = NULL;
		etc_output_abort(o);
		return rc;
	}
	/* keep an existing target's mode; a new file has 0666 less the umask */
	if (stat(path, &st) == 0)
		fchmod(fd, st.st_mode & 07777);
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
	if (!o)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_output_commit: NULL o");
	int rc = 0;
	if (o->is_stdout) {
		bool bad = fflush(o->f) != 0 || ferror(o->f);
		int e = errno;
		if (o->f != stdout && fclose(o->f) != 0 && !bad) {
			e = errno;
			bad = true;
		}
		if (bad)
			rc = etc_fail(err, ETC_ERR_IO, o->path ? o->path : "<stdout>", -1,
			              "cannot write: %s", strerror(e));
		free(o->path);
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

/* What a path names, for comparing outputs with each other and with inputs. */
typedef struct path_id {
	bool exists, devnull;
	dev_t dev;
	ino_t ino;
	char canon[8200]; /* new files: canonical directory + "/" + name */
} path_id;

static void identify(path_id *id, const char *path, const struct stat *null_st)
{
	struct stat st;
	memset(id, 0, sizeof *id);
	if (stat(path, &st) == 0) {
		id->exists = true;
		id->dev = st.st_dev, id->ino = st.st_ino;
		id->devnull =
		    null_st && st.st_dev == null_st->st_dev && st.st_ino == null_st->st_ino;
		return;
	}
	char dir[4096];
	char *real = realpath(dir_of(dir, sizeof dir, path), NULL);
	const char *slash = strrchr(path, '/');
	snprintf(id->canon, sizeof id->canon, "%s/%s", real ? real : dir, slash ? slash + 1 : path);
	free(real);
}

static bool same(const path_id *a, const path_id *b)
{
	if (a->exists != b->exists)
		return false;
	if (a->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->canon, b->canon) == 0;
}

/* The directory exists and takes new files; an existing output can be written. */
static int writable(const char *path, etc_error *err)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return etc_fail(err, ETC_ERR_IO, path, -1,
			                "is a directory, not an output file");
		if (!S_ISREG(st.st_mode)) {
			if (access(path, W_OK) != 0)
				return etc_fail(err, ETC_ERR_IO, path, -1, "cannot open output: %s",
				                strerror(errno));
			return 0;
		}
	}
	char dir[4096];
	dir_of(dir, sizeof dir, path);
	if (stat(dir, &st) != 0)
		return etc_fail(err, ETC_ERR_IO, path, -1,
		                "cannot create output file: its directory %s: %s", dir,
		                strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return etc_fail(err, ETC_ERR_IO, path, -1,
		                "cannot create output file: %s is not a directory", dir);
	if (access(dir, W_OK | X_OK) != 0)
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot create output file in %s: %s",
		                dir, strerror(errno));
	return symlink_allowed(path, err);
}

int etc_output_check(const char *const *outputs, size_t n_outputs, const char *const *inputs,
                     size_t n_inputs, etc_error *err)
{
	struct stat null_st;
	bool have_null = stat("/dev/null", &null_st) == 0;
	path_id *ids = calloc(n_outputs ? n_outputs : 1, sizeof *ids);
	path_id *in = malloc(sizeof *in);
	if (!ids || !in) {
		free(ids), free(in);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	int rc = 0;
	const char *dash = NULL;
	for (size_t i = 0; i < n_outputs && rc == 0; i++) {
		const char *p = outputs[i];
		if (!p)
			continue;
		if (!strcmp(p, "-")) {
			if (dash)
				rc = etc_fail(err, ETC_ERR_USAGE, NULL, -1,
				              "only one output may be - (standard output)");
			dash = p;
			continue;
		}
		identify(&ids[i], p, have_null ? &null_st : NULL);
		for (size_t j = 0; j < i && rc == 0; j++)
			if (outputs[j] && strcmp(outputs[j], "-") && !ids[i].devnull &&
			    same(&ids[i], &ids[j]))
				rc = etc_fail(
				    err, ETC_ERR_USAGE, NULL, -1,
				    "%s and %s are the same file: give each output its own", p,
				    outputs[j]);
		for (size_t j = 0; j < n_inputs && rc == 0; j++) {
			if (!inputs[j] || !ids[i].exists || ids[i].devnull)
				continue;
			identify(in, inputs[j], NULL);
			if (same(&ids[i], in))
				rc = etc_fail(
				    err, ETC_ERR_USAGE, NULL, -1,
				    "the output %s is the input %s: it would be overwritten", p,
				    inputs[j]);
		}
	}
	for (size_t i = 0; i < n_outputs && rc == 0; i++)
		if (outputs[i] && strcmp(outputs[i], "-"))
			rc = writable(outputs[i], err);
	free(ids);
	free(in);
	return rc;
}
