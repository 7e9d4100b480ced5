/*
 * gnuplot.c - the gnuplot processes: the queue of plot scripts of one run
 * (etc_plot_batch), the gnuplot children that make their PNGs, and the plot
 * set's folder (its index, the temporary folder it is made in and its move
 * into place).
 *
 * The queued plots are shared out, by expected cost (deal), to one gnuplot
 * per core (etc_thread_count_: ETC_THREADS or the online processors), each
 * fed by a thread of its own. The gnuplots may be started ahead
 * (etc_plot_batch_start), so that their start and their fonts overlap the
 * caller's work; otherwise they are started here (posix_spawn, no shell). A
 * process's plots become one combined script written to its standard input
 * (a pipe, fed in the loop that reads its stderr). Read that way, gnuplot
 * goes on after an error, so one bad script costs only its own PNG. Each
 * plot's part prints a marker, changes to the plot's directory (absolute),
 * sets `outfile` to a temporary name, loads <name>.gp and resets the
 * session. gnuplot's stderr, read through a pipe, is cut at the markers to
 * tell which plot an error belongs to; a PNG is renamed into place only when
 * it is a whole PNG (signature and IEND) and its part printed no error; a
 * plot that fails is left out with a note saying why (etc_plot_batch_note,
 * in the order the plots were queued whatever process made them), and the
 * others are kept.
 *
 * Bounds: each gnuplot gets ETC_GNUPLOT_TIMEOUT seconds (default 10) per plot plus
 * three times that for starting; past the deadline it is killed and the
 * error names the plot it was making. While it runs, SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT are held back (a handler notes the signal); one arriving kills
 * gnuplot, the temporary files are removed and the signal is then raised
 * again for the previous disposition, so an interrupted run leaves no
 * temporary file behind.
 */
#define _GNU_SOURCE
#include "etcompare/plot.h"
#include "etcompare/output.h"
#include "core/fmt.h"
#include "core/internal.h"
#include "core/parallel.h"
#include "plot/plot_private.h"

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <time.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MARKER      "etcompare-plot "
#define ERR_KEEP    (1u << 20) /* bytes of gnuplot's stderr kept */
#define NOTES_MAX   64
#define GROUPS_MAX  64 /* gnuplot processes at most */
#define INDEX_HEAD  "# index.txt - written by etcompare"
#define PROTECT_MAX 64 /* files a plot set never replaces or removes */

typedef struct batch_item {
	etc_plot_item pub;
	char *dir;    /* absolute */
	char *tmp;    /* temporary PNG while running */
	char *note;   /* why it was left out, for the index (first reason) */
	double cost;  /* expected gnuplot time, in pixels (see plot_cost) */
	size_t group; /* the gnuplot process that makes it */
} batch_item;

/* A gnuplot child: its pid, the write end of its stdin and the read end of
 * its stderr (-1 when closed). */
typedef struct gp_proc {
	pid_t pid;
	int in, err;
} gp_proc;

struct etc_plot_batch {
	batch_item *items;
	size_t n, cap;
	char *notes[NOTES_MAX];
	size_t nnotes;
	char *set_tmp; /* the temporary folder of the plot set being made, or NULL */
	char *set_abs; /* the same, absolute (the items' directories are) */
	/* started ahead by etc_plot_batch_start, not fed yet */
	char *pre_exe;
	gp_proc pre[GROUPS_MAX];
	size_t npre;
	/* etc_plot_batch_protect: the identities of the caller's inputs */
	dev_t protect_dev[PROTECT_MAX];
	ino_t protect_ino[PROTECT_MAX];
	size_t nprotect;
};

static void proc_end(gp_proc *p);

int etc_plot_batch_create(etc_plot_batch **out, etc_error *err)
{
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_batch_create: NULL out");
	*out = calloc(1, sizeof **out);
	if (!*out)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	return 0;
}

void etc_plot_batch_free(etc_plot_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		free((char *)b->items[i].pub.name);
		free((char *)b->items[i].pub.title);
		free((char *)b->items[i].pub.png);
		free(b->items[i].dir);
		if (b->items[i].tmp)
			unlink(b->items[i].tmp);
		free(b->items[i].tmp);
		free(b->items[i].note);
	}
	for (size_t i = 0; i < b->nnotes; i++)
		free(b->notes[i]);
	for (size_t i = 0; i < b->npre; i++)
		proc_end(&b->pre[i]);
	free(b->pre_exe);
	free(b->items);
	free(b->set_tmp);
	free(b->set_abs);
	free(b);
}

bool etc_plot_batch_in_set_(const etc_plot_batch *b, const char *path)
{
	if (!b || !b->set_tmp || !path)
		return false;
	for (int k = 0; k < 2; k++) {
		const char *d = k ? b->set_abs : b->set_tmp;
		size_t n = d ? strlen(d) : 0;
		if (d && !strncmp(path, d, n) && path[n] == '/' && !strchr(path + n + 1, '/'))
			return true;
	}
	return false;
}

size_t etc_plot_batch_count(const etc_plot_batch *b)
{
	return b ? b->n : 0;
}

const etc_plot_item *etc_plot_batch_item(const etc_plot_batch *b, size_t i)
{
	return b && i < b->n ? &b->items[i].pub : NULL;
}

int etc_plot_batch_note(etc_plot_batch *b, const char *text, etc_error *err)
{
	if (b->nnotes == NOTES_MAX)
		return 0;
	char *s = strdup(text ? text : "");
	if (!s)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	b->notes[b->nnotes++] = s;
	return 0;
}

size_t etc_plot_batch_note_count(const etc_plot_batch *b)
{
	return b ? b->nnotes : 0;
}

const char *etc_plot_batch_note_at(const etc_plot_batch *b, size_t i)
{
	return b && i < b->nnotes ? b->notes[i] : NULL;
}

/*
 * A plot's expected gnuplot time in pixels: pngcairo's PNG encoder (libpng's
 * filter choice and zlib) takes about two thirds of it, in proportion to the
 * image's pixels (some 50 ms a megapixel on a 2020s core), the drawing about
 * 5 ms whatever the size (some 100000 pixels' worth).
 */
static double plot_cost(int width, int height)
{
	if (width <= 0 || height <= 0) {
		width = 800;
		height = PLOT_HEIGHT;
	}
	return 100000.0 + (double)width * (double)height;
}

int etc_plot_batch_add_(etc_plot_batch *b, const char *dir, const char *name, const char *title,
                        int width, int height, etc_error *err)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 32;
		batch_item *it = realloc(b->items, cap * sizeof *it);
		if (!it)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		b->items = it;
		b->cap = cap;
	}
	batch_item *it = &b->items[b->n];
	memset(it, 0, sizeof *it);
	it->dir = realpath(dir, NULL);
	it->pub.name = strdup(name);
	it->pub.title = strdup(title ? title : "");
	it->pub.png = etc_plot_join_(dir, "", name, ".png");
	it->cost = plot_cost(width, height);
	if (!it->dir || !it->pub.name || !it->pub.title || !it->pub.png) {
		int e = errno;
		free(it->dir);
		free((char *)it->pub.name);
		free((char *)it->pub.title);
		free((char *)it->pub.png);
		if (e == ENOMEM)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		return etc_fail(err, ETC_ERR_IO, dir, -1, "cannot resolve the plot directory: %s",
		                strerror(e));
	}
	b->n++;
	return 0;
}

int etc_plot_batch_add_made_(etc_plot_batch *b, const char *dir, const char *name,
                             const char *title, etc_error *err)
{
	ETC_TRY(etc_plot_batch_add_(b, dir, name, title, 0, 0, err));
	b->items[b->n - 1].pub.made = true;
	return 0;
}

/* The executable for `prog` (a path, or a name looked up on PATH) as an
 * absolute path, malloc'ed; NULL when there is none. */
static char *find_exe(const char *prog)
{
	struct stat st;
	if (strchr(prog, '/')) {
		char *r = realpath(prog, NULL);
		if (r && stat(r, &st) == 0 && S_ISREG(st.st_mode) && access(r, X_OK) == 0)
			return r;
		free(r);
		return NULL;
	}
	if (!*prog)
		return NULL;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	size_t plen = strlen(prog);
	char *cand = malloc(strlen(path) + plen + 3);
	if (!cand)
		return NULL;
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0) {
			cand[0] = '.';
			n = 1;
		} else {
			memcpy(cand, p, n);
		}
		cand[n] = '/';
		memcpy(cand + n + 1, prog, plen + 1);
		char *r = realpath(cand, NULL);
		if (r && stat(r, &st) == 0 && S_ISREG(st.st_mode) && access(r, X_OK) == 0) {
			free(cand);
			return r;
		}
		free(r);
		if (!end)
			break;
		p = end;
	}
	free(cand);
	return NULL;
}

/*
 * Starts `exe` (argument -d: no user's init file) with its stdin and stderr
 * on pipes (p->in written here, p->err read; both close on exec, p->in does
 * not block) and its stdout on /dev/null. Returns 0 or an errno value.
 */
static int proc_start(gp_proc *p, const char *exe)
{
	int in[2], er[2];
	*p = (gp_proc){-1, -1, -1};
	if (pipe2(in, O_CLOEXEC) != 0)
		return errno;
	if (pipe2(er, O_CLOEXEC) != 0) {
		int e = errno;
		close(in[0]);
		close(in[1]);
		return e;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0 && (rc = posix_spawnattr_init(&attr)) != 0)
		posix_spawn_file_actions_destroy(&fa);
	if (rc == 0) {
		sigset_t none, dfl;
		sigemptyset(&none);
		sigemptyset(&dfl);
		sigaddset(&dfl, SIGPIPE);
		rc = posix_spawnattr_setsigmask(&attr, &none);
		if (!rc)
			rc = posix_spawnattr_setsigdefault(&attr, &dfl);
		if (!rc)
			rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
			                                         POSIX_SPAWN_SETSIGDEF);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		if (!rc)
			rc = posix_spawn_file_actions_adddup2(&fa, er[1], 2);
		if (!rc)
			rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		char *argv[] = {(char *)exe, "-d", NULL};
		if (!rc)
			rc = posix_spawn(&p->pid, exe, &fa, &attr, argv, environ);
		posix_spawnattr_destroy(&attr);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in[0]);
	close(er[1]);
	if (rc) {
		close(in[1]);
		close(er[0]);
		p->pid = -1;
		return rc;
	}
	p->in = in[1];
	p->err = er[0];
	fcntl(p->in, F_SETFL, fcntl(p->in, F_GETFL) | O_NONBLOCK);
	return 0;
}

/* Writes to a gnuplot's stdin: a gnuplot that died makes it EPIPE, never a
 * SIGPIPE (blocked in this thread meanwhile; the one the write raised is
 * taken back before the mask is restored). */
static ssize_t proc_write(int fd, const char *s, size_t n)
{
	sigset_t pipe_set, old;
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	ssize_t w = write(fd, s, n);
	int e = errno;
	if (w < 0 && e == EPIPE && !sigismember(&old, SIGPIPE)) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return w;
}

/* Ends a gnuplot that was started but is not needed (killed: it only warmed
 * up) and closes its pipes. */
static void proc_end(gp_proc *p)
{
	if (p->in >= 0)
		close(p->in);
	if (p->err >= 0)
		close(p->err);
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*p = (gp_proc){-1, -1, -1};
}

/*
 * What a gnuplot started ahead does first: its fonts (fontconfig, pango)
 * and the cairo PNG terminal are loaded by drawing a small plot to nowhere,
 * some 20 ms each taken off the first real plot (200 x 150: smaller, gnuplot
 * warns that the canvas cannot hold the plot); then every setting is reset.
 */
static const char warm_up[] = "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
                              "\tset terminal pngcairo size 200, 150 noenhanced font 'sans,10'\n"
                              "\tset output '/dev/null'\n"
                              "\tplot [0:1] x notitle\n"
                              "\tset output\n"
                              "}\n"
                              "reset session\n";

int etc_plot_batch_start(etc_plot_batch *b, const etc_plot_options *o, etc_error *err)
{
	(void)err;
	if (!b || b->npre || b->pre_exe)
		return 0;
	char *exe = find_exe(o && o->gnuplot ? o->gnuplot : "gnuplot");
	if (!exe)
		return 0; /* etc_plot_batch_run says so */
	size_t k = etc_thread_count_();
	k = k < GROUPS_MAX ? k : GROUPS_MAX;
	for (size_t j = 0; j < k; j++) {
		gp_proc *p = &b->pre[b->npre];
		if (proc_start(p, exe) != 0)
			break; /* etc_plot_batch_run starts its own and reports why not */
		b->npre++;
		/* a fresh pipe holds the few lines whole: this write does not block */
		(void)proc_write(p->in, warm_up, strlen(warm_up));
	}
	if (b->npre)
		b->pre_exe = exe;
	else
		free(exe);
	return 0;
}

/* The first error line in gnuplot's stderr text `s` (n bytes), trimmed into
 * `buf`; false when there is none (warnings do not count). */
static bool first_error(const char *s, size_t n, char *buf, size_t cap)
{
	const char *end = s + n;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		size_t len = (size_t)(le - s);
		bool err_line = false;
		for (const char *q = s; q + 5 < le; q++)
			if (!memcmp(q, "line ", 5) && q[5] >= '0' && q[5] <= '9') {
				err_line = true;
				break;
			}
		if (err_line && !memmem(s, len, "warning:", 8)) {
			while (len && (*s == ' ' || *s == '\t')) {
				s++;
				len--;
			}
			size_t k = len < cap - 1 ? len : cap - 1;
			for (size_t i = 0; i < k; i++)
				buf[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
			buf[k] = '\0';
			return true;
		}
		s = nl ? nl + 1 : end;
	}
	return false;
}

/*
 * The plots one gnuplot process makes and what came of them: its thread
 * keeps its own error and counts; etc_plot_batch_run merges them in the
 * order the plots were queued.
 */
typedef struct group {
	etc_plot_batch *b;
	const char *exe;
	size_t *idx, n; /* item indices, in queue order */
	int rc;         /* the first plot that failed (at item fail_at), or 0 */
	size_t fail_at;
	etc_error err;
	int stop; /* an error that ended the group (timeout, signal, no pipe) */
	etc_error stop_err;
	int pngs;
	bool missing;
	gp_proc *pre; /* a gnuplot started ahead for the group's first plots, or NULL */
} group;

/* The combined script for the group's items from position `from`, fed to
 * gnuplot's stdin (malloc'ed, *len bytes), or NULL after err. */
static char *write_script(group *g, size_t from, size_t *len, etc_error *err)
{
	etc_plot_batch *b = g->b;
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	if (!f) {
		etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		return NULL;
	}
	for (size_t k = from; k < g->n; k++) {
		size_t i = g->idx[k];
		batch_item *it = &b->items[i];
		if (!it->tmp)
			continue;
		fprintf(f, "print '" MARKER "%zu'\ncd ", i);
		etc_plot_put_gp_str_(f, it->dir);
		fputs("\noutfile = ", f);
		etc_plot_put_gp_str_(f, strrchr(it->tmp, '/') + 1);
		fputs("\nload ", f);
		fprintf(f, "'%s.gp'\nreset session\n", it->pub.name);
	}
	fprintf(f, "print '" MARKER "end'\n");
	if (fclose(f) != 0 || !text) {
		free(text);
		etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		return NULL;
	}
	return text;
}

/* The part of gnuplot's stderr that belongs to item i. */
static void segment(const char *s, size_t n, size_t i, const char **at, size_t *len)
{
	char mark[48];
	snprintf(mark, sizeof mark, MARKER "%zu\n", i);
	const char *p = s ? memmem(s, n, mark, strlen(mark)) : NULL;
	if (!p) {
		*at = "";
		*len = 0;
		return;
	}
	p += strlen(mark);
	const char *q = memmem(p, (size_t)(s + n - p), MARKER, strlen(MARKER));
	*at = p;
	*len = q ? (size_t)(q - p) : (size_t)(s + n - p);
}

/* The index of the last marker gnuplot printed, or -1. */
static long last_marker(const char *s, size_t n)
{
	long last = -1;
	for (const char *p = s; p && (p = memmem(p, (size_t)(s + n - p), MARKER, strlen(MARKER)));
	     p += strlen(MARKER)) {
		char *end;
		long k = strtol(p + strlen(MARKER), &end, 10);
		if (end != p + strlen(MARKER))
			last = k;
	}
	return last;
}

/* A PNG starts with its signature and ends with its IEND chunk; gnuplot leaves
 * a cut file when a write fails, and a broken terminal may write other data. */
static bool png_complete(const char *path)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	static const unsigned char iend[8] = {'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	unsigned char head[8], tail[8];
	FILE *f = fopen(path, "rb");
	bool ok = f && fread(head, 1, 8, f) == 8 && memcmp(head, sig, 8) == 0 &&
	          fseek(f, -8, SEEK_END) == 0 && fread(tail, 1, 8, f) == 8 &&
	          memcmp(tail, iend, 8) == 0;
	if (f)
		fclose(f);
	return ok;
}

/* The first non-empty line of s[0..n) into buf (controls as spaces). */
static bool first_line(const char *s, size_t n, char *buf, size_t cap)
{
	const char *end = s + n;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s < le &&
		    !(le - s >= (long)strlen(MARKER) && !memcmp(s, MARKER, strlen(MARKER)))) {
			size_t len = (size_t)(le - s), k = len < cap - 1 ? len : cap - 1;
			for (size_t i = 0; i < k; i++)
				buf[i] = (unsigned char)s[i] < 0x20 ? ' ' : s[i];
			buf[k] = '\0';
			return true;
		}
		s = nl ? nl + 1 : end;
	}
	return false;
}

/* Item i failed: a note for the index and the report ("plot NAME left out:
 * why") and, for the group's first failure, its error. */
static void item_failed(group *g, size_t i, const char *fmt, ...) ETC_PRINTF(3, 4);
static void item_failed(group *g, size_t i, const char *fmt, ...)
{
	batch_item *it = &g->b->items[i];
	char why[700], note[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(note, sizeof note, "plot %s left out: %s", it->pub.name, why);
	if (!it->note)
		it->note = strdup(note);
	if (g->rc == 0 || i < g->fail_at) {
		char *gp = etc_plot_join_(it->dir, "", it->pub.name, ".gp");
		g->rc = etc_fail(&g->err, ETC_ERR_IO, gp ? gp : it->pub.name, -1, "%s", why);
		g->fail_at = i;
		free(gp);
	}
}

/*
 * gnuplot reported nothing but left no PNG, or a cut one: its PNG writer does
 * not report a failed write, which happens when the disk is full or the quota
 * reached; or it exited with a status of its own, reported as it is.
 */
static void no_png(group *g, size_t i, int exit_status, const char *msg, size_t mlen)
{
	batch_item *it = &g->b->items[i];
	struct statvfs vfs;
	char line[512];
	if (exit_status > 0) {
		if (first_line(msg, mlen, line, sizeof line))
			item_failed(g, i, "gnuplot exited with status %d and wrote no PNG: %s",
			            exit_status, line);
		else
			item_failed(
			    g, i,
			    "gnuplot exited with status %d and wrote no PNG (nothing on its "
			    "stderr)",
			    exit_status);
	} else if (statvfs(it->dir, &vfs) == 0 && vfs.f_bavail == 0) {
		item_failed(g, i, "gnuplot wrote no PNG: no space left on the device of %s",
		            it->dir);
	} else {
		item_failed(
		    g, i,
		    "gnuplot exited without an error but its PNG is missing, cut short or not a "
		    "PNG (a gnuplot that does not draw, or writing in %s failed: disk full, quota "
		    "or file size limit?)",
		    it->dir);
	}
}

/* Renames item i's PNG into place, or records why not. */
static void settle(group *g, size_t i, const char *msg, size_t mlen, int exit_status)
{
	batch_item *it = &g->b->items[i];
	const char *at;
	size_t len;
	char line[512];
	segment(msg, mlen, i, &at, &len);
	struct stat st;
	bool made = stat(it->tmp, &st) == 0 && st.st_size > 0 && png_complete(it->tmp);
	bool failed = first_error(at, len, line, sizeof line);
	if (failed) {
		item_failed(g, i, "gnuplot %s: %s", made ? "failed" : "wrote no PNG", line);
		return;
	}
	if (!made) {
		/* no marker text of its own: the whole stderr (gnuplot died early) */
		if (len)
			no_png(g, i, exit_status, at, len);
		else
			no_png(g, i, exit_status, msg, mlen);
		return;
	}
	/* a plot set is flushed once, as a whole, before it is moved in */
	int fd = etc_plot_batch_in_set_(g->b, it->tmp) ? -1 : open(it->tmp, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	if (rename(it->tmp, it->pub.png) != 0) {
		int e = errno;
		item_failed(g, i, "cannot write %s: %s", it->pub.png, strerror(e));
		return;
	}
	free(it->tmp);
	it->tmp = NULL;
	it->pub.made = true;
	g->pngs++;
}

static const int held_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
enum { NHELD = 4 };

/*
 * The one piece of process state here: the signal that arrived while
 * gnuplot ran. A signal handler takes no argument, and the signal may land
 * on any thread (BLAS keeps threads of its own that a mask set here does not
 * cover), so it can only leave the number where the waiting loop looks.
 */
static volatile sig_atomic_t held_signal;

static void on_held(int sig)
{
	held_signal = sig;
}

/* A held-back signal that arrived, or 0. */
static int signal_pending(void)
{
	return held_signal;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* gnuplot's seconds per plot: ETC_GNUPLOT_TIMEOUT (1 to 86400), default 10. */
static unsigned per_plot_seconds(void)
{
	const char *v = getenv("ETC_GNUPLOT_TIMEOUT");
	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);
		if (!*end && n >= 1 && n <= 86400)
			return (unsigned)n;
	}
	return 10;
}

/*
 * Feeds `text` (n bytes) to gnuplot's stdin, closed when all is written (or
 * gnuplot stops reading), and reads its stderr until it closes, the
 * deadline passes (*why = -1) or a held-back signal arrives (*why = the
 * signal); returns the last ERR_KEEP bytes of stderr. Both pipes in one
 * loop, so that neither side waits on the other.
 */
static char *exchange(gp_proc *p, const char *text, size_t n_text, double deadline, int *why,
                      size_t *len)
{
	size_t cap = 4096, n = 0, sent = 0;
	char *s = malloc(cap + 1);
	*why = 0;
	for (;;) {
		if (p->in >= 0 && sent == n_text) {
			close(p->in);
			p->in = -1;
		}
		if ((*why = signal_pending()) != 0)
			break;
		double left = deadline - now_s();
		if (left <= 0) {
			*why = -1;
			break;
		}
		struct pollfd pf[2] = {{p->err, POLLIN, 0}, {p->in, POLLOUT, 0}};
		int ms = left > 0.2 ? 200 : (int)(left * 1000) + 1;
		int pr = poll(pf, p->in >= 0 ? 2 : 1, ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			break;
		if (pr == 0)
			continue;
		if (p->in >= 0 && (pf[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = proc_write(p->in, text + sent, n_text - sent);
			if (w > 0)
				sent += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				sent = n_text; /* gone: its stderr says what came of it */
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (s && n == cap && cap < ERR_KEEP) {
			char *t = realloc(s, 2 * cap + 1);
			if (t) {
				s = t;
				cap *= 2;
			}
		}
		char chunk[4096];
		ssize_t got = read(p->err, chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (!s)
			continue;
		size_t g = (size_t)got;
		if (n + g > cap) { /* keep the tail */
			size_t drop = n + g - cap;
			if (drop > n)
				drop = n;
			memmove(s, s + drop, n - drop);
			n -= drop;
			if (g > cap)
				g = cap;
		}
		memcpy(s + n, chunk, g);
		n += g;
	}
	if (s)
		s[n] = '\0';
	*len = s ? n : 0;
	return s;
}

/*
 * One gnuplot process for the group's items from position `from` on.
 * Returns 0 or an error that stops the group; *next is where a following
 * process starts (g->n when all were tried: gnuplot crashing on one plot
 * costs only that plot).
 */
static int run_once(group *g, size_t from, size_t *next)
{
	etc_plot_batch *b = g->b;
	etc_error *err = &g->stop_err;
	*next = g->n;
	size_t tlen = 0;
	char *script = write_script(g, from, &tlen, err);
	if (!script)
		return err->status;
	int stop = 0;
	char *msg = NULL;
	size_t mlen = 0;
	gp_proc proc = {-1, -1, -1};
	if (g->pre) {
		/* started ahead (etc_plot_batch_start): its fonts are loaded already */
		proc = *g->pre;
		*g->pre = (gp_proc){-1, -1, -1};
		g->pre = NULL;
	} else {
		int e = proc_start(&proc, g->exe);
		if (e == ENOENT || e == EACCES || e == ENOEXEC) {
			g->missing = true;
			goto done;
		}
		if (e) {
			stop = etc_fail(err, ETC_ERR_IO, g->exe, -1, "cannot run gnuplot: %s",
			                strerror(e));
			goto done;
		}
	}
	pid_t pid = proc.pid;
	size_t plots = 0;
	for (size_t k = from; k < g->n; k++)
		plots += b->items[g->idx[k]].tmp != NULL;
	unsigned per = per_plot_seconds();
	double limit = (double)per * (3 + (double)plots);
	int why;
	msg = exchange(&proc, script, tlen, now_s() + limit, &why, &mlen);
	if (proc.in >= 0) {
		close(proc.in); /* a gnuplot that reads on ends at this EOF */
		proc.in = -1;
	}
	int status = 0;
	pid_t w;
	if (why != 0)
		kill(pid, SIGKILL);
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (why != 0) {
		long at = last_marker(msg, mlen);
		const char *plot = at >= 0 && (size_t)at < b->n ? b->items[at].pub.name
		                                                : "(before the first plot)";
		if (why > 0)
			stop = etc_fail(
			    err, ETC_ERR_IO, g->exe, -1,
			    "interrupted by signal %d: gnuplot killed while it made plot %s", why,
			    plot);
		else
			stop = etc_fail(err, ETC_ERR_IO, g->exe, -1,
			                "gnuplot did not finish within %.0f s (%u s per plot, "
			                "ETC_GNUPLOT_TIMEOUT): killed while it made plot %s",
			                limit, per, plot);
		for (size_t k = from; k < g->n; k++) {
			batch_item *it = &b->items[g->idx[k]];
			if (it->tmp && !it->note) {
				char note[600];
				snprintf(note, sizeof note, "plot %s left out: %s", it->pub.name,
				         why > 0 ? "interrupted" : "gnuplot timed out");
				it->note = strdup(note);
			}
		}
		goto done;
	}
	int exit_status = w >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	long crashed = -1;
	size_t end = g->n;
	if (w >= 0 && WIFSIGNALED(status)) {
		crashed = last_marker(msg, mlen);
		size_t k = from;
		while (k < g->n && (long)g->idx[k] != crashed)
			k++;
		if (k == g->n) { /* died before the first plot */
			stop = etc_fail(err, ETC_ERR_IO, g->exe, -1,
			                "gnuplot was killed by signal %d", WTERMSIG(status));
			goto done;
		}
		end = *next = k + 1;
	}
	for (size_t k = from; k < end; k++) {
		size_t i = g->idx[k];
		if (!b->items[i].tmp)
			continue;
		if ((long)i == crashed) {
			item_failed(g, i, "gnuplot was killed by signal %d on this plot",
			            WTERMSIG(status));
			continue;
		}
		settle(g, i, msg, mlen, exit_status);
	}
done:
	if (proc.in >= 0)
		close(proc.in);
	if (proc.err >= 0)
		close(proc.err);
	free(script);
	free(msg);
	return stop;
}

/* The thread of groups [begin, end): each runs gnuplot until its plots were
 * all tried or an error stops it. */
static void run_groups(void *ctx, size_t begin, size_t end)
{
	group *gs = ctx;
	for (size_t k = begin; k < end; k++) {
		group *g = &gs[k];
		for (size_t from = 0; from < g->n;) {
			size_t next;
			g->stop = run_once(g, from, &next);
			if (g->stop || g->missing)
				break;
			from = next;
		}
	}
}

/* Creates the temporary PNG of every plot not made yet (0600 made 0666 less
 * the umask, as open() would); 0 or the error. */
static int prepare(etc_plot_batch *b, size_t *pending, etc_error *err)
{
	*pending = 0;
	for (size_t i = 0; i < b->n; i++) {
		batch_item *it = &b->items[i];
		if (it->pub.made || it->tmp)
			continue;
		it->tmp = etc_plot_join_(it->dir, ".", it->pub.name, ".png.XXXXXX");
		if (!it->tmp)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		int fd = mkostemp(it->tmp, O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			free(it->tmp);
			it->tmp = NULL;
			return etc_fail(err, ETC_ERR_IO, it->pub.png, -1,
			                "cannot create output file: %s", strerror(e));
		}
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
		close(fd);
		it->group = SIZE_MAX; /* not dealt yet */
		(*pending)++;
	}
	return 0;
}

/*
 * The pending plots shared out among `k` groups (indices in `idx`) so that
 * their expected times are about even: the most costly first, each to the
 * group with the least so far (ties: the first queued, the first group).
 * Within a group the plots keep the order they were queued in.
 */
static void deal(etc_plot_batch *b, const char *exe, group *gs, size_t k, size_t *idx,
                 size_t pending)
{
	double load[GROUPS_MAX] = {0};
	size_t count[GROUPS_MAX] = {0};
	for (size_t done = 0; done < pending; done++) {
		size_t best = b->n;
		for (size_t i = 0; i < b->n; i++) {
			batch_item *it = &b->items[i];
			if (it->tmp && it->group == SIZE_MAX &&
			    (best == b->n || it->cost > b->items[best].cost))
				best = i;
		}
		size_t least = 0;
		for (size_t j = 1; j < k; j++)
			if (load[j] < load[least])
				least = j;
		b->items[best].group = least;
		load[least] += b->items[best].cost;
		count[least]++;
	}
	size_t at = 0;
	for (size_t j = 0; j < k; j++) {
		gs[j] = (group){.b = b, .exe = exe, .idx = idx + at};
		at += count[j];
	}
	for (size_t i = 0; i < b->n; i++) {
		if (!b->items[i].tmp)
			continue;
		group *g = &gs[b->items[i].group];
		g->idx[g->n++] = i;
	}
}

int etc_plot_batch_run(etc_plot_batch *b, const etc_plot_options *o, etc_plot_result *res,
                       etc_error *err)
{
	if (!b || b->n == 0)
		return 0;
	const char *prog = o && o->gnuplot ? o->gnuplot : "gnuplot";
	char *exe = find_exe(prog);
	if (!exe) {
		bool any = false;
		for (size_t i = 0; i < b->n; i++)
			any |= !b->items[i].pub.made;
		if (res && any)
			res->gnuplot_missing = true;
		return 0;
	}
	/* held back while temporary PNGs exist: temporary files are removed first,
	 * then the signal goes to the previous disposition */
	struct sigaction hold, old_act[NHELD];
	memset(&hold, 0, sizeof hold);
	hold.sa_handler = on_held;
	sigemptyset(&hold.sa_mask);
	held_signal = 0;
	for (size_t k = 0; k < NHELD; k++)
		sigaction(held_signals[k], &hold, &old_act[k]);
	size_t pending = 0;
	int rc = prepare(b, &pending, err);
	size_t k = etc_thread_count_();
	k = k < pending ? k : pending;
	k = k < GROUPS_MAX ? k : GROUPS_MAX;
	group *gs = rc == 0 && k ? calloc(k, sizeof *gs) : NULL;
	size_t *idx = rc == 0 && k ? calloc(pending, sizeof *idx) : NULL;
	if (rc == 0 && k && (!gs || !idx))
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (rc == 0 && k) {
		deal(b, exe, gs, k, idx, pending);
		/* the gnuplots started ahead by the same program make the first plots */
		bool same = b->pre_exe && !strcmp(b->pre_exe, exe);
		for (size_t j = 0; same && j < k && j < b->npre; j++)
			gs[j].pre = &b->pre[j];
		etc_parallel_for_(k, (unsigned)k, run_groups, gs);
		/* merged in queue order: the notes, the counts, the first error */
		const group *first = NULL;
		bool missing = false;
		for (size_t j = 0; j < k; j++) {
			if (res)
				res->pngs_written += gs[j].pngs;
			missing |= gs[j].missing;
			if (gs[j].stop && (!first || !first->stop))
				first = &gs[j];
			else if (!gs[j].stop && gs[j].rc &&
			         (!first || (!first->stop && gs[j].fail_at < first->fail_at)))
				first = &gs[j];
		}
		if (missing && res)
			res->gnuplot_missing = true;
		if (first) {
			*err = first->stop ? first->stop_err : first->err;
			rc = first->stop ? first->stop : first->rc;
		}
	}
	/* the ones not used (fewer plots than processes, or another program) */
	for (size_t j = 0; j < b->npre; j++)
		proc_end(&b->pre[j]);
	b->npre = 0;
	for (size_t i = 0; i < b->n; i++) {
		batch_item *it = &b->items[i];
		if (it->note) {
			etc_error ignored;
			(void)etc_plot_batch_note(b, it->note, &ignored);
			free(it->note);
			it->note = NULL;
		}
		if (it->tmp) {
			unlink(it->tmp);
			free(it->tmp);
			it->tmp = NULL;
		}
	}
	free(gs);
	free(idx);
	free(exe);
	/* a signal that arrived meanwhile goes to the previous disposition now (the
	 * caller may hold it back too, to clean up its own files first) */
	int sig = held_signal;
	held_signal = 0;
	for (size_t j = 0; j < NHELD; j++)
		sigaction(held_signals[j], &old_act[j], NULL);
	if (sig)
		raise(sig);
	return rc;
}

int etc_plot_batch_protect(etc_plot_batch *b, const char *path, etc_error *err)
{
	if (!b || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_batch_protect: NULL argument");
	struct stat st;
	if (stat(path, &st) != 0)
		return 0; /* nothing there to replace */
	if (b->nprotect == PROTECT_MAX)
		return etc_fail(err, ETC_ERR_LIMIT, path, -1, "more than %d files to protect",
		                PROTECT_MAX);
	b->protect_dev[b->nprotect] = st.st_dev;
	b->protect_ino[b->nprotect] = st.st_ino;
	b->nprotect++;
	return 0;
}

/* Is the file at `path` one of the caller's protected inputs? */
static bool is_protected(const etc_plot_batch *b, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	for (size_t i = 0; i < b->nprotect; i++)
		if (b->protect_dev[i] == st.st_dev && b->protect_ino[i] == st.st_ino)
			return true;
	return false;
}

/* Removes <dir>/<base><ext> when it is a plain file with the set's time
 * (`set`) and not a protected input; one with another time is kept (*kept);
 * a link, a directory or a file that is not there is left alone. */
static int remove_named(const etc_plot_batch *b, const char *dir, const char *base, const char *ext,
                        const struct timespec *set, bool *kept, etc_error *err)
{
	char *path = etc_plot_join_(dir, "", base, ext);
	if (!path)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	struct stat st;
	int rc = 0;
	/* only a plain file that still has the time etcompare gave its set (the
	   index's); one the user changed since, or beside an index copied there,
	   is kept (and stays listed: *kept); a link or an input is not touched */
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && !is_protected(b, path)) {
		if (st.st_mtim.tv_sec != set->tv_sec || st.st_mtim.tv_nsec != set->tv_nsec)
			*kept = true;
		else if (unlink(path) != 0 && errno != ENOENT)
			rc = etc_fail(err, ETC_ERR_IO, path, -1,
			              "cannot remove the plot etcompare wrote here last time: %s",
			              strerror(errno));
	}
	free(path);
	return rc;
}

/* Is `name` a plot of this batch (made, when `made`)? */
static bool in_batch(const etc_plot_batch *b, const char *name, bool made)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->items[i].pub.name, name))
			return !made || b->items[i].pub.made;
	return false;
}

/* The plots <d>/index.txt names ("a\0b\0...", *n of them, malloc'ed, NULL
 * when none): *own 1 when etcompare wrote it, 0 when there is none, -1 when
 * the file is someone else's (then nothing is read). Names that etcompare
 * could not have written are skipped. */
static int read_index(const char *d, char **names, size_t *n, int *own, struct timespec *set,
                      etc_error *err)
{
	*names = NULL;
	*n = 0;
	*own = 0;
	*set = (struct timespec){-1, -1}; /* no file has it */
	char *path = etc_plot_join_(d, "", "index", ".txt");
	if (!path)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return 0; /* nothing written here before */
	char line[4096];
	if (!fgets(line, sizeof line, f) || strncmp(line, INDEX_HEAD, strlen(INDEX_HEAD)) != 0) {
		fclose(f);
		*own = -1;
		return 0;
	}
	*own = 1;
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
		*set = st.st_mtim;
	etc_sbuf all = {0};
	etc_error ignore;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#' || !strncmp(line, "note: ", 6))
			continue;
		char *tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		size_t len = (size_t)(tab - line);
		size_t el = len > 4 && !strcmp(line + len - 4, ".png")  ? 4
		            : len > 3 && !strcmp(line + len - 3, ".gp") ? 3
		                                                        : 0;
		if (!el)
			continue;
		line[len - el] = '\0';
		/* a name etcompare could have written: no '/', no "..", no hidden file */
		etc_error_clear(&ignore);
		if (etc_plot_check_name_(line, &ignore) < 0)
			continue;
		/* what it says etcompare wrote: 'p' the PNG, 'g' only the script */
		etc_sbuf_put(&all, el == 4 ? "p" : "g", 1);
		etc_sbuf_put(&all, line, len - el + 1); /* with its NUL */
		(*n)++;
	}
	fclose(f);
	if (all.failed) {
		etc_sbuf_free(&all);
		*n = 0;
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	*names = all.p;
	return 0;
}

/* The index's entry for plot `name`: 'p' (its PNG was made), 'g' (only its
 * script), 0 when the index does not name it. */
static char listed(const char *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++, names += strlen(names) + 1)
		if (!strcmp(names + 1, name))
			return names[0];
	return 0;
}

/* For a plot whose script alone etcompare wrote: was <d>/<name>.png made
 * from that script (`gnuplot NAME.gp`, as the index says), i.e. after it? */
static bool png_from_script(const char *d, const char *name)
{
	char *png = etc_plot_join_(d, "", name, ".png"), *gp = etc_plot_join_(d, "", name, ".gp");
	struct stat sp, sg;
	bool after =
	    png && gp && stat(png, &sp) == 0 && stat(gp, &sg) == 0 &&
	    (sp.st_mtim.tv_sec > sg.st_mtim.tv_sec ||
	     (sp.st_mtim.tv_sec == sg.st_mtim.tv_sec && sp.st_mtim.tv_nsec >= sg.st_mtim.tv_nsec));
	free(png);
	free(gp);
	return after;
}

/* The refusal to replace <d>/index.txt: `why` it is not etcompare's to replace. */
static int index_refused(const char *d, const char *why, etc_error *err)
{
	char *index = etc_plot_join_(d, "", "index", ".txt");
	int rc = index
	             ? etc_fail(err, ETC_ERR_USAGE, index, -1,
	                        "%s: the plots' index would replace this file, which etcompare "
	                        "did not write; give --plot a folder of its own, or move the file",
	                        why)
	             : etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	free(index);
	return rc;
}

int etc_plot_dir_check(const char *dir, etc_error *err)
{
	const char *d = dir && *dir ? dir : ".";
	char *names = NULL;
	size_t n = 0;
	int own = 0;
	struct timespec set;
	struct stat st;
	/* found before the run, not after its gates: a file where the folder goes */
	if (stat(d, &st) == 0 && !S_ISDIR(st.st_mode))
		return etc_fail(err, ETC_ERR_IO, d, -1,
		                "plot directory is not a directory: give --plot a folder (it is "
		                "created when missing)");
	if (stat(d, &st) != 0 && errno == ENOTDIR)
		return etc_fail(err, ETC_ERR_IO, d, -1,
		                "cannot create the plot directory: a part of its path is a file");
	ETC_TRY(read_index(d, &names, &n, &own, &set, err));
	free(names);
	return own >= 0 ? 0 : index_refused(d, "not an etcompare index", err);
}

/*
 * Before the commit renames anything: a file the new set would replace must
 * be one etcompare wrote there (named by the folder's own index.txt; where
 * it names a plot's script alone, its PNG counts only when newer than the
 * script, as `gnuplot NAME.gp` makes it) and none of the caller's inputs;
 * an index.txt etcompare did not write is not replaced either. Otherwise
 * nothing is moved and the error names the file.
 */
static int check_destinations(const etc_plot_batch *b, const char *tmp, const char *d,
                              etc_error *err)
{
	char *names = NULL;
	size_t n = 0;
	int own = 0;
	struct timespec set;
	ETC_TRY(read_index(d, &names, &n, &own, &set, err));
	char *index = etc_plot_join_(d, "", "index", ".txt");
	int rc = 0;
	if (!index)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (own < 0 || is_protected(b, index))
		rc = index_refused(d, own < 0 ? "not an etcompare index" : "an input of this run",
		                   err);
	static const char *const exts[] = {".dat", ".gp", ".png"};
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		for (size_t e = 0; rc == 0 && e < 3; e++) {
			const char *name = b->items[i].pub.name;
			char kind = listed(names, n, name);
			char *from = etc_plot_join_(tmp, "", name, exts[e]);
			char *to = etc_plot_join_(d, "", name, exts[e]);
			struct stat st;
			if (!from || !to)
				rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			else if (lstat(from, &st) != 0 || lstat(to, &st) != 0)
				; /* nothing made, or nothing replaced */
			else if (is_protected(b, to))
				rc = etc_fail(
				    err, ETC_ERR_USAGE, to, -1,
				    "the plot of the same name would replace this input of "
				    "the run; give --plot another folder");
			else if (!kind || (e == 2 && kind == 'g' && !png_from_script(d, name)))
				rc = etc_fail(
				    err, ETC_ERR_USAGE, to, -1,
				    "the plot of the same name would replace this file, which "
				    "etcompare did not write (the folder's index.txt does not "
				    "name it); give --plot another folder, or move the file");
			free(from);
			free(to);
		}
	free(index);
	free(names);
	return rc;
}

/*
 * Before the new index is written: the plots etcompare wrote to `d` last
 * time (named by its index.txt) that this batch did not write again are
 * removed, with their .gp and .dat (and the old PNG of a plot this batch
 * could not make, where the index names the PNG: a plot it names by its
 * script alone had no PNG from etcompare); no other file is touched, nor an
 * input the caller protected, and a directory without an etcompare
 * index.txt is left as it is. Done after the plots are written, so a run that fails leaves the
 * previous plots and their index whole.
 */
static int remove_stale(const etc_plot_batch *b, const char *d, etc_sbuf *kept, etc_error *err)
{
	char *names = NULL;
	size_t n = 0;
	int own = 0;
	struct timespec set;
	ETC_TRY(read_index(d, &names, &n, &own, &set, err));
	static const char *const exts[] = {".png", ".gp", ".dat"};
	int rc = 0;
	const char *entry = names;
	for (size_t i = 0; rc == 0 && i < n; i++, entry += strlen(entry) + 1) {
		/* a PNG is removed only where the index says etcompare made it */
		const char *name = entry + 1;
		bool png = entry[0] == 'p', keep = false;
		if (!in_batch(b, name, false))
			for (size_t e = png ? 0 : 1; e < 3 && rc == 0; e++)
				rc = remove_named(b, d, name, exts[e], &set, &keep, err);
		else if (!in_batch(b, name, true) && png)
			rc = remove_named(b, d, name, ".png", &set, &keep, err);
		/* what is kept stays in the index: a later run that makes the plot
		   again replaces it, and the folder holds what the index lists (a
		   plot of this batch is listed already) */
		if (keep && !in_batch(b, name, false))
			etc_sbuf_printf(kept,
			                "%s.%s\tkept from an earlier run: changed since "
			                "etcompare wrote it\n",
			                name, png ? "png" : "gp");
	}
	free(names);
	if (rc == 0 && kept->failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	return rc;
}

/* Appends the entries remove_stale kept to the index at `path`, keeping its
 * modification time (the set's). */
static int index_append(const char *path, const etc_sbuf *kept, etc_error *err)
{
	if (!kept->len)
		return 0;
	struct stat st;
	FILE *f = stat(path, &st) == 0 ? fopen(path, "a") : NULL;
	if (!f || fwrite(kept->p, 1, kept->len, f) != kept->len || fclose(f) != 0) {
		int e = errno;
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot write: %s", strerror(e));
	}
	const struct timespec ts[2] = {st.st_mtim, st.st_mtim};
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

/*
 * Gives the files batch `b` wrote to `d` one modification time, returned
 * as the file system keeps it (its granularity); index.txt gets it too, and
 * a later run removes a stale plot's file only while it has the index's
 * time. A PNG the batch did not make (a plot named by its script) is not
 * touched.
 */
static struct timespec stamp_set(const etc_plot_batch *b, const char *d)
{
	static const char *const exts[] = {".dat", ".gp", ".png"};
	struct timespec now, kept = {-1, -1};
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t i = 0; i < b->n; i++)
		for (size_t e = 0; e < 3; e++) {
			if (e == 2 && !b->items[i].pub.made)
				continue;
			char *path = etc_plot_join_(d, "", b->items[i].pub.name, exts[e]);
			struct stat st;
			const struct timespec ts[2] = {now, now};
			if (path && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
			    utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0 &&
			    kept.tv_sec < 0 && lstat(path, &st) == 0)
				kept = st.st_mtim;
			free(path);
		}
	return kept.tv_sec < 0 ? now : kept;
}

int etc_plot_batch_write_index(const etc_plot_batch *b, const char *dir, etc_error *err)
{
	const char *d = dir && *dir ? dir : ".";
	etc_sbuf kept = {0};
	int rs = remove_stale(b, d, &kept, err);
	if (rs < 0) {
		etc_sbuf_free(&kept);
		return rs;
	}
	struct timespec set = stamp_set(b, d);
	char *path = etc_plot_join_(d, "", "index", ".txt");
	plot_out out;
	int rc = path ? etc_plot_out_open_(&out, b, path, err)
	              : etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (rc < 0) {
		free(path);
		etc_sbuf_free(&kept);
		return rc;
	}
	FILE *f = out.f;
	fputs("# index.txt - written by etcompare: each plot's PNG (or, without gnuplot,\n"
	      "# its script) and title; run `gnuplot NAME.gp` here to remake one.\n",
	      f);
	for (size_t i = 0; i < b->n; i++) {
		const etc_plot_item *it = &b->items[i].pub;
		fprintf(f, "%s.%s\t", it->name, it->made ? "png" : "gp");
		for (const char *s = it->title; *s; s++)
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
		fputc('\n', f);
	}
	if (kept.len)
		fwrite(kept.p, 1, kept.len, f);
	etc_sbuf_free(&kept);
	for (size_t i = 0; i < b->nnotes; i++)
		fprintf(f, "note: %s\n", b->notes[i]);
	rc = etc_plot_out_commit_(&out, err);
	/* the index has its plots' time: a later run takes a plot's file as
	   etcompare's to remove only while the two still agree */
	const struct timespec ts[2] = {set, set};
	if (rc == 0)
		utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
	free(path);
	return rc;
}

/* ---- the plot set: made in a temporary folder, moved into place whole ---- */

#define SET_PREFIX ".etcompare-plots."

int etc_plot_set_begin(etc_plot_batch *b, const char *dir, char **tmp_out, etc_error *err)
{
	*tmp_out = NULL;
	const char *d = dir && *dir ? dir : ".";
	ETC_TRY(etc_plot_make_dirs_(d, err));
	char *tmp = etc_plot_join_(d, SET_PREFIX, "XXXXXX", "");
	if (!tmp)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (!mkdtemp(tmp)) {
		int e = errno;
		int rc =
		    etc_fail(err, ETC_ERR_IO, d, -1,
		             "cannot create the temporary folder for the plots: %s", strerror(e));
		free(tmp);
		return rc;
	}
	/* mkdtemp makes 0700; the files in it keep their own modes */
	if (b) {
		free(b->set_tmp);
		free(b->set_abs);
		b->set_tmp = strdup(tmp);
		b->set_abs = realpath(tmp, NULL);
		if (!b->set_tmp || !b->set_abs) {
			rmdir(tmp);
			free(tmp);
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		}
	}
	*tmp_out = tmp;
	return 0;
}

void etc_plot_set_discard(const char *tmp)
{
	if (!tmp || !*tmp)
		return;
	DIR *dp = opendir(tmp);
	if (dp) {
		/* only files this run made are in it: it was created empty */
		struct dirent *de;
		while ((de = readdir(dp)) != NULL) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char *path = etc_plot_join_(tmp, "", de->d_name, "");
			if (path)
				unlink(path);
			free(path);
		}
		closedir(dp);
	}
	rmdir(tmp);
}

/* Renames <tmp>/<name><ext> to <dir>/<name><ext> when it exists. */
static int move_named(const char *tmp, const char *dir, const char *name, const char *ext,
                      etc_error *err)
{
	char *from = etc_plot_join_(tmp, "", name, ext), *to = etc_plot_join_(dir, "", name, ext);
	int rc = 0;
	if (!from || !to)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (rename(from, to) != 0 && errno != ENOENT)
		rc = etc_fail(err, ETC_ERR_IO, to, -1, "cannot move the new plot into place: %s",
		              strerror(errno));
	free(from);
	free(to);
	return rc;
}

int etc_plot_set_commit(etc_plot_batch *b, const char *tmp, const char *dir, etc_error *err)
{
	const char *d = dir && *dir ? dir : ".";
	static const char *const exts[] = {".dat", ".gp", ".png"};
	/* the set's files were written without an fsync each: one flush of
	 * their file system makes them durable before any is renamed in */
	int dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || syncfs(dfd) != 0) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		return etc_fail(err, ETC_ERR_IO, tmp, -1, "cannot flush the new plots to disk: %s",
		                strerror(e));
	}
	close(dfd);
	ETC_TRY(check_destinations(b, tmp, d, err));
	/* every byte is already on disk in tmp: from here on only renames and
	 * unlinks, which a full disk does not stop */
	for (size_t i = 0; i < b->n; i++)
		for (size_t e = 0; e < 3; e++)
			ETC_TRY(move_named(tmp, d, b->items[i].pub.name, exts[e], err));
	etc_sbuf kept = {0};
	char *tmp_index = etc_plot_join_(tmp, "", "index", ".txt");
	int rs = tmp_index ? remove_stale(b, d, &kept, err)
	                   : etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (rs == 0)
		rs = index_append(tmp_index, &kept, err);
	free(tmp_index);
	etc_sbuf_free(&kept);
	ETC_TRY(rs);
	ETC_TRY(move_named(tmp, d, "index", ".txt", err));
	etc_plot_set_discard(tmp);
	char *abs = realpath(d, NULL);
	if (!abs)
		return etc_fail(err, ETC_ERR_IO, d, -1, "cannot resolve the plot directory: %s",
		                strerror(errno));
	int rc = 0;
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		batch_item *it = &b->items[i];
		char *png = etc_plot_join_(d, "", it->pub.name, ".png");
		char *nd = strdup(abs);
		if (!png || !nd) {
			free(png);
			free(nd);
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			break;
		}
		free((char *)it->pub.png);
		free(it->dir);
		it->pub.png = png;
		it->dir = nd;
	}
	free(abs);
	return rc;
}
