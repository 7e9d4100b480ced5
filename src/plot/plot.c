/*
 * plot.c - bar charts, error histograms and line plots through gnuplot.
 *
 * Each plot is a .dat file and a .gp script (preamble of variables, then a
 * template) written atomically with etc_output_*, then gnuplot run as a
 * child process (posix_spawn, no shell) in the output directory to make the
 * PNG under a temporary name that is renamed into place. The built-in
 * templates below are kept byte for byte identical to plots/<kind>.gp;
 * tests/unit/test_plot.c checks it. Edit the .gp file, then regenerate the
 * string (one C string line per template line, \t \" \\ escaped).
 */
#define _GNU_SOURCE
#include "etcompare/plot.h"
#include "etcompare/report.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
#define ETC_SPAWN_CHDIR 1 /* posix_spawn_file_actions_addchdir_np */
#else
#define ETC_SPAWN_CHDIR 0 /* fork + chdir + execv */
#endif

extern char **environ;

/* ---- built-in templates: plots/<kind>.gp ---- */

static const char tpl_bars[] =
    "# bars.gp - etcompare template: a bar chart of one metric, one bar per output.\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_ylabel    free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_points                   number of bars\n"
    "#   n_plottable                bars with a finite or capped value\n"
    "#   n_capped                   infinite values, drawn capped in grey\n"
    "# Data columns: 1 index, 2 finite value (NaN otherwise), 3 label,\n"
    "# 4 infinite value capped just beyond the finite range (NaN otherwise).\n"
    "\n"
    "set title plot_title\n"
    "set ylabel plot_ylabel\n"
    "unset xlabel\n"
    "set grid ytics\n"
    "set key top right\n"
    "set style fill solid 1.0 border -1\n"
    "set boxwidth 0.7\n"
    "set xrange [-0.5:n_points - 0.5]\n"
    "set xtics rotate by 30 right nomirror\n"
    "set ytics nomirror\n"
    "if (n_plottable == 0) {\n"
    "\tset yrange [0:1]\n"
    "}\n"
    "plot datafile using 1:2:xtic(3) with boxes lc rgb '#3b78b0' notitle, \\\n"
    "\t'' using 1:4 with boxes lc rgb '#a0a0a0' title (n_capped > 0 ? 'infinite (capped)' : '')\n";

static const char tpl_histogram[] =
    "# histogram.gp - etcompare template: a histogram of the error of one output.\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_xlabel    free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_values                   number of errors\n"
    "#   n_nonfinite                NaN or infinite errors, not in any bin\n"
    "#   hist_lo, hist_hi           range of the bins\n"
    "#   bin_width                  width of one bin\n"
    "#   err_mean, err_std          mean and standard deviation of the finite errors\n"
    "# Data columns: 1 bin centre, 2 count, 3 bin low edge, 4 bin high edge.\n"
    "\n"
    "set title plot_title\n"
    "set xlabel plot_xlabel\n"
    "set ylabel 'count'\n"
    "set grid ytics\n"
    "unset key\n"
    "set style fill solid 1.0 border -1\n"
    "set boxwidth bin_width absolute\n"
    "set xrange [hist_lo:hist_hi]\n"
    "set yrange [0:*]\n"
    "set xtics nomirror\n"
    "set ytics nomirror\n"
    "set label 1 sprintf(\"n = %d\\nmean = %.4g\\nstd = %.4g\", n_values - n_nonfinite, err_mean, "
    "err_std) \\\n"
    "\tat graph 0.98, graph 0.94 right front\n"
    "if (n_nonfinite > 0) {\n"
    "\tset label 2 sprintf('%d non-finite errors not shown', n_nonfinite) \\\n"
    "\t\tat graph 0.98, graph 0.74 right front\n"
    "}\n"
    "plot datafile using 1:2 with boxes lc rgb '#3b78b0' notitle\n";

static const char tpl_lines[] =
    "# lines.gp - etcompare template: a metric along execution order, with a\n"
    "# threshold line and one marked operator (where the outputs diverge).\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_xlabel, plot_ylabel   free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_points                   number of operators\n"
    "#   n_plottable                points with a finite or capped value\n"
    "#   n_capped                   infinite values, drawn capped in grey\n"
    "#   has_threshold, threshold   1 and the threshold value, or 0\n"
    "#   marked, marked_label       index and label of the marked operator, or -1\n"
    "# Data columns: 1 index, 2 finite value (NaN otherwise), 3 label,\n"
    "# 4 infinite value capped just beyond the finite range (NaN otherwise).\n"
    "\n"
    "set title plot_title\n"
    "set xlabel plot_xlabel\n"
    "set ylabel plot_ylabel\n"
    "set grid\n"
    "set key outside top center horizontal\n"
    "set xrange [-0.5:n_points - 0.5]\n"
    "set ytics nomirror\n"
    "if (n_plottable == 0 && !has_threshold) {\n"
    "\tset yrange [0:1]\n"
    "}\n"
    "if (marked >= 0) {\n"
    "\tset arrow 1 from marked, graph 0 to marked, graph 1 nohead dt 2 lw 1.5 lc rgb '#d62728' "
    "front\n"
    "\tif (marked < n_points / 2.0) {\n"
    "\t\tset label 1 marked_label at marked, graph 0.96 left offset 0.5, 0 tc rgb '#d62728' front\n"
    "\t} else {\n"
    "\t\tset label 1 marked_label at marked, graph 0.96 right offset -0.5, 0 tc rgb '#d62728' "
    "front\n"
    "\t}\n"
    "}\n"
    "thr_title = has_threshold ? sprintf('threshold %g', threshold) : ''\n"
    "if (n_points <= 40) {\n"
    "\tset xtics rotate by 30 right nomirror\n"
    "\tplot datafile using 1:2:xtic(3) with linespoints pt 7 ps 0.6 lc rgb '#3b78b0' title "
    "plot_ylabel, \\\n"
    "\t\t'' using 1:4 with points pt 9 ps 1.2 lc rgb '#a0a0a0' title (n_capped > 0 ? 'infinite "
    "(capped)' : ''), \\\n"
    "\t\t(has_threshold ? threshold : NaN) with lines dt 2 lc rgb '#ff7f0e' title thr_title\n"
    "} else {\n"
    "\tset xtics nomirror\n"
    "\tplot datafile using 1:2 with linespoints pt 7 ps 0.4 lc rgb '#3b78b0' title plot_ylabel, "
    "\\\n"
    "\t\t'' using 1:4 with points pt 9 ps 1.2 lc rgb '#a0a0a0' title (n_capped > 0 ? 'infinite "
    "(capped)' : ''), \\\n"
    "\t\t(has_threshold ? threshold : NaN) with lines dt 2 lc rgb '#ff7f0e' title thr_title\n"
    "}\n";

static const char tpl_hbars[] =
    "# hbars.gp - etcompare template: horizontal bars, the first row on top\n"
    "# (e.g. the operators that take the most time).\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_xlabel    free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_points                   number of bars\n"
    "# Data columns: 1 row (0 on top), 2 value (NaN when not finite), 3 label.\n"
    "\n"
    "set title plot_title\n"
    "set xlabel plot_xlabel\n"
    "unset ylabel\n"
    "set grid xtics\n"
    "unset key\n"
    "set style fill solid 1.0 border -1\n"
    "set yrange [n_points - 0.5:-0.5]\n"
    "set xrange [0:*]\n"
    "set ytics nomirror\n"
    "set xtics nomirror\n"
    "plot datafile using (0.5 * $2):1:(0.5 * $2):(0.35):ytic(3) with boxxyerror lc rgb '#3b78b0' "
    "notitle\n";

static const char tpl_boxes[] =
    "# boxes.gp - etcompare template: one box plot per group (e.g. the per-run\n"
    "# times of an operator): whiskers at min and max, box from p25 to p75, a\n"
    "# line at the median.\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_ylabel    free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_points                   number of boxes\n"
    "# Data columns: 1 index, 2 min, 3 p25, 4 median, 5 p75, 6 max, 7 label.\n"
    "\n"
    "set title plot_title\n"
    "set ylabel plot_ylabel\n"
    "unset xlabel\n"
    "set grid ytics\n"
    "unset key\n"
    "set boxwidth 0.5\n"
    "set style fill solid 0.4 border -1\n"
    "set xrange [-0.5:n_points - 0.5]\n"
    "set xtics rotate by 30 right nomirror\n"
    "set lmargin 24\n"
    "set ytics nomirror\n"
    "plot datafile using 1:3:2:6:5:xtic(7) with candlesticks whiskerbars 0.5 lc rgb '#3b78b0' "
    "notitle, \\\n"
    "\t'' using 1:4:4:4:4 with candlesticks lt -1 lw 2 notitle\n";

static const char tpl_timeline[] =
    "# timeline.gp - etcompare template: a Gantt-style timeline of one run, one\n"
    "# lane per event name, one bar from the start to the end of each event.\n"
    "#\n"
    "# etcompare writes <name>.gp as a preamble that sets the variables below,\n"
    "# picks the PNG terminal and opens the output, followed by this text:\n"
    "#   datafile, outfile          data file and PNG file names\n"
    "#   plot_title, plot_xlabel    free text\n"
    "#   plot_width, plot_height    PNG size in pixels\n"
    "#   n_lanes                    number of lanes\n"
    "#   n_spans                    number of bars\n"
    "# Data columns: 1 lane (0 on top), 2 start, 3 end, 4 lane label.\n"
    "\n"
    "set title plot_title\n"
    "set xlabel plot_xlabel\n"
    "unset ylabel\n"
    "set grid xtics\n"
    "unset key\n"
    "set style fill solid 0.8 border -1\n"
    "set yrange [n_lanes - 0.5:-0.5]\n"
    "set ytics nomirror\n"
    "set xtics nomirror\n"
    "plot datafile using (($2 + $3) / 2):1:(($3 - $2) / 2):(0.35):ytic(4) with boxxyerror lc rgb "
    "'#3b78b0' notitle\n";

static const struct {
	const char *kind, *text;
} templates[] = {
    {"bars", tpl_bars},   {"histogram", tpl_histogram}, {"lines", tpl_lines},
    {"hbars", tpl_hbars}, {"boxes", tpl_boxes},         {"timeline", tpl_timeline},
};

const char *etc_plot_template(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++)
		if (strcmp(kind, templates[i].kind) == 0)
			return templates[i].text;
	return NULL;
}

/* ---- names, paths, directories ---- */

#define PLOT_NAME_MAX     128
#define PLOT_TEMPLATE_MAX (1u << 20)
#define PLOT_CHUNK        16384
#define PLOT_HEIGHT       480
#define PLOT_MAX_BINS     100000
#define PLOT_DEFAULT_BINS 50

static int check_name(const char *name, etc_error *err)
{
	if (!name || !*name)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "plot name is empty");
	size_t n = strlen(name);
	if (n > PLOT_NAME_MAX)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "plot name is %zu characters long, at most %d allowed", n,
		                PLOT_NAME_MAX);
	if (name[0] == '.')
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "plot name \"%s\" starts with '.'",
		                name);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		          (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		if (!ok)
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "plot name has character 0x%02x at position %zu; only "
			                "[A-Za-z0-9_.-] are allowed",
			                c, i);
	}
	return 0;
}

/* "<dir>/<prefix><name><ext>", malloc'ed; NULL when out of memory. */
static char *join(const char *dir, const char *prefix, const char *name, const char *ext)
{
	size_t n = strlen(dir) + strlen(prefix) + strlen(name) + strlen(ext) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s%s%s", dir, prefix, name, ext);
	return p;
}

/* mkdir -p: creates `dir` and its missing parents. */
static int make_dirs(const char *dir, etc_error *err)
{
	struct stat st;
	if (stat(dir, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return 0;
		return etc_fail(err, ETC_ERR_IO, dir, -1, "plot directory is not a directory");
	}
	size_t n = strlen(dir);
	char *p = malloc(n + 1);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, dir, -1, "out of memory");
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		char saved = p[i];
		p[i] = '\0';
		if (mkdir(p, 0777) != 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			return etc_fail(err, ETC_ERR_IO, dir, -1,
			                "cannot create plot directory: %s", strerror(e));
		}
		p[i] = saved;
	}
	free(p);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return etc_fail(err, ETC_ERR_IO, dir, -1, "cannot create plot directory");
	return 0;
}

/* ---- text for gnuplot ---- */

/* A single-quoted gnuplot string: '' for ', control characters as spaces. */
static void put_gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'')
			fputs("''", f);
		else if (c < 0x20 || c == 0x7f)
			fputc(' ', f);
		else
			fputc(c, f);
	}
	fputc('\'', f);
}

/* A double-quoted data-file column. gnuplot reads backslash escapes there
 * (\\ is one backslash) but has none for ", which becomes '; control
 * characters become spaces. */
static void put_dat_str(FILE *f, const char *s, const char *suffix)
{
	fputc('"', f);
	for (int part = 0; part < 2; part++, s = suffix) {
		for (; s && *s; s++) {
			unsigned char c = (unsigned char)*s;
			if (c == '"')
				fputc('\'', f);
			else if (c == '\\')
				fputs("\\\\", f);
			else if (c < 0x20 || c == 0x7f)
				fputc(' ', f);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

/* A double in full precision that gnuplot reads as a float (never as an
 * integer, which would divide as one), or NaN. */
static void put_num(FILE *f, double v)
{
	if (!isfinite(v)) {
		fputs("NaN", f);
		return;
	}
	char buf[40];
	snprintf(buf, sizeof buf, "%.17g", v);
	fputs(buf, f);
	if (!strpbrk(buf, ".e"))
		fputs(".0", f);
}

static void var_str(FILE *f, const char *var, const char *s)
{
	fprintf(f, "%s = ", var);
	put_gp_str(f, s);
	fputc('\n', f);
}

static void var_num(FILE *f, const char *var, double v)
{
	fprintf(f, "%s = ", var);
	put_num(f, v);
	fputc('\n', f);
}

static void var_int(FILE *f, const char *var, long long v)
{
	fprintf(f, "%s = %lld\n", var, v);
}

static long long clamp_ll(uint64_t v, long long lo, long long hi)
{
	return v < (uint64_t)lo ? lo : v > (uint64_t)hi ? hi : (long long)v;
}

/* ---- one plot: .dat, .gp, gnuplot ---- */

typedef struct plot_job {
	const etc_plot_options *o;
	const char *dir, *name, *kind;
	int width;
	void (*write_dat)(FILE *f, const void *ctx);
	void (*write_vars)(FILE *f, const void *ctx);
	const void *ctx;
} plot_job;

static int load_template(const plot_job *j, char **owned, const char **text, etc_error *err)
{
	*owned = NULL;
	if (!j->o || !j->o->template_dir) {
		*text = etc_plot_template(j->kind);
		return 0;
	}
	char *path = join(j->o->template_dir, "", j->kind, ".gp");
	if (!path)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	FILE *f = fopen(path, "rb");
	if (!f) {
		int e = errno;
		int rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot open plot template: %s",
		                  strerror(e));
		free(path);
		return rc;
	}
	char *buf = malloc(PLOT_TEMPLATE_MAX + 1);
	size_t n = buf ? fread(buf, 1, PLOT_TEMPLATE_MAX + 1, f) : 0;
	int rc = 0;
	if (!buf)
		rc = etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	else if (ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, path, -1, "cannot read plot template");
	else if (n > PLOT_TEMPLATE_MAX)
		rc = etc_fail(err, ETC_ERR_LIMIT, path, -1, "plot template is larger than %u bytes",
		              PLOT_TEMPLATE_MAX);
	else if (memchr(buf, '\0', n))
		rc = etc_fail(err, ETC_ERR_FORMAT, path,
		              (int64_t)((char *)memchr(buf, '\0', n) - buf),
		              "plot template contains a NUL byte");
	fclose(f);
	free(path);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*owned = buf;
	*text = buf;
	return 0;
}

static int write_dat(const plot_job *j, const char *path, etc_error *err)
{
	etc_output *out;
	ETC_TRY(etc_output_open(&out, path, err));
	FILE *f = etc_output_stream(out);
	fprintf(f, "# %s.dat - written by etcompare %s for %s.gp (\"%s\" template)\n", j->name,
	        ETC_VERSION_STRING, j->name, j->kind);
	j->write_dat(f, j->ctx);
	return etc_output_commit(out, err);
}

static int write_gp(const plot_job *j, const char *path, const char *tpl, etc_error *err)
{
	etc_output *out;
	ETC_TRY(etc_output_open(&out, path, err));
	FILE *f = etc_output_stream(out);
	fprintf(f,
	        "# %s.gp - written by etcompare %s: the preamble below, then the \"%s\" "
	        "template.\n"
	        "# Run it in this directory to make %s.png from %s.dat: gnuplot %s.gp\n",
	        j->name, ETC_VERSION_STRING, j->kind, j->name, j->name, j->name);
	fprintf(f, "datafile = '%s.dat'\n", j->name);
	fprintf(f, "if (!exists(\"outfile\")) {\n\toutfile = '%s.png'\n}\n", j->name);
	var_int(f, "plot_width", j->width);
	var_int(f, "plot_height", PLOT_HEIGHT);
	j->write_vars(f, j->ctx);
	fputs("set encoding utf8\n"
	      "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
	      "\tset terminal pngcairo size plot_width, plot_height noenhanced font 'sans,10'\n"
	      "} else {\n"
	      "\tset terminal png size plot_width, plot_height noenhanced\n"
	      "}\n"
	      "set output outfile\n"
	      "\n",
	      f);
	size_t n = strlen(tpl);
	fwrite(tpl, 1, n, f);
	if (n && tpl[n - 1] != '\n')
		fputc('\n', f);
	fputs("set output\n", f);
	return etc_output_commit(out, err);
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

/* The last non-blank line of gnuplot's stderr, trimmed, in place. */
static const char *last_line(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
	char *nl = strrchr(s, '\n');
	char *line = nl ? nl + 1 : s;
	for (char *q = line; *q; q++)
		if ((unsigned char)*q < 0x20)
			*q = ' ';
	return *line ? line : "(no message)";
}

/* A PNG ends with its IEND chunk; gnuplot leaves a cut file when a write fails. */
static bool png_complete(const char *path)
{
	static const unsigned char iend[8] = {'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
	unsigned char tail[8];
	FILE *f = fopen(path, "rb");
	bool ok = f && fseek(f, -8, SEEK_END) == 0 && fread(tail, 1, 8, f) == 8 &&
	          memcmp(tail, iend, 8) == 0;
	if (f)
		fclose(f);
	return ok;
}

/*
 * gnuplot exited quietly but left no PNG, or a cut one: its PNG writer does not report a
 * failed write, which happens when the disk is full or the quota reached.
 */
static int no_png(const char *gp_path, const char *dir, etc_error *err)
{
	struct statvfs vfs;
	if (statvfs(dir, &vfs) == 0 && vfs.f_bavail == 0)
		return etc_fail(err, ETC_ERR_IO, gp_path, -1,
		                "gnuplot wrote no PNG: no space left on the device of %s", dir);
	return etc_fail(err, ETC_ERR_IO, gp_path, -1,
	                "gnuplot reported no error but its PNG is empty or cut short: writing "
	                "in %s failed (disk full, quota or file size limit?)",
	                dir);
}

/* Starts `argv` in `dir` with stdin and stdout on /dev/null and stderr on
 * `errfd`. Returns 0 or an errno value. */
static int spawn_in(pid_t *pid, const char *exe, char *const argv[], const char *dir, int errfd)
{
#if ETC_SPAWN_CHDIR
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return rc;
	rc = posix_spawnattr_init(&attr);
	if (rc) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	sigset_t none, dfl;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&attr, &none);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(&attr, &dfl);
	if (!rc)
		rc =
		    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (!rc)
		rc = posix_spawn(pid, exe, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
#else
	pid_t p = fork();
	if (p < 0)
		return errno;
	if (p == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul < 0 || dup2(errfd, 2) < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
		    chdir(dir) != 0)
			_exit(127);
		execv(exe, argv);
		_exit(127);
	}
	*pid = p;
	return 0;
#endif
}

/* Runs gnuplot on <dir>/<name>.gp making <dir>/<name>.png. */
static int run_gnuplot(const plot_job *j, etc_plot_result *res, const char *gp_path, etc_error *err)
{
	const char *prog = j->o && j->o->gnuplot ? j->o->gnuplot : "gnuplot";
	char *exe = find_exe(prog);
	if (!exe) {
		if (res)
			res->gnuplot_missing = true;
		return 0;
	}
	int rc = 0;
	char *tmp = join(j->dir, ".", j->name, ".png.XXXXXX");
	char *png = join(j->dir, "", j->name, ".png");
	size_t outcap = strlen(j->name) + 32, scriptcap = strlen(j->name) + 4;
	char *outarg = malloc(outcap), *script = malloc(scriptcap);
	int pfd[2] = {-1, -1}, fd = -1;
	if (!tmp || !png || !outarg || !script) {
		rc = etc_fail(err, ETC_ERR_NOMEM, gp_path, -1, "out of memory");
		goto done;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		int e = errno;
		rc = etc_fail(err, ETC_ERR_IO, png, -1, "cannot create output file: %s",
		              strerror(e));
		free(tmp);
		tmp = NULL;
		goto done;
	}
	fchmod(fd, 0644);
	close(fd);
	fd = -1;
	/* The temporary's name is "." + name + ".png.XXXXXX": characters that
	 * need no quoting in a gnuplot string. */
	snprintf(outarg, outcap, "outfile='%s'", strrchr(tmp, '/') + 1);
	snprintf(script, scriptcap, "%s.gp", j->name);
	char *argv[] = {exe, "-d", "-e", outarg, script, NULL};
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		int e = errno;
		rc = etc_fail(err, ETC_ERR_IO, gp_path, -1, "cannot run gnuplot: pipe: %s",
		              strerror(e));
		goto done;
	}
	pid_t pid;
	int e = spawn_in(&pid, exe, argv, j->dir, pfd[1]);
	close(pfd[1]);
	pfd[1] = -1;
	if (e == ENOENT || e == EACCES || e == ENOEXEC) {
		if (res)
			res->gnuplot_missing = true;
		goto done;
	}
	if (e) {
		rc = etc_fail(err, ETC_ERR_IO, gp_path, -1, "cannot run %s: %s", exe, strerror(e));
		goto done;
	}
	/* Keep the tail of gnuplot's stderr: its last line names the problem. */
	char msg[2048];
	size_t len = 0;
	for (;;) {
		char chunk[512];
		ssize_t got = read(pfd[0], chunk, sizeof chunk);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		size_t g = (size_t)got;
		if (len + g > sizeof msg - 1) {
			size_t drop = len + g - (sizeof msg - 1);
			if (drop > len)
				drop = len;
			memmove(msg, msg + drop, len - drop);
			len -= drop;
		}
		memcpy(msg + len, chunk, g);
		len += g;
	}
	msg[len] = '\0';
	int status = 0;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	struct stat st;
	bool made = stat(tmp, &st) == 0 && st.st_size > 0 && png_complete(tmp);
	/* waitpid fails with ECHILD when the caller ignores SIGCHLD: judge by
	 * the output then. */
	bool ok = w < 0 ? made : (WIFEXITED(status) && WEXITSTATUS(status) == 0 && made);
#if !ETC_SPAWN_CHDIR
	if (w >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127 && len == 0) {
		if (res)
			res->gnuplot_missing = true;
		goto done;
	}
#endif
	if (!ok) {
		if (w >= 0 && WIFSIGNALED(status))
			rc = etc_fail(err, ETC_ERR_IO, gp_path, -1,
			              "gnuplot was killed by signal %d", WTERMSIG(status));
		else if (w >= 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0)
			rc = etc_fail(err, ETC_ERR_IO, gp_path, -1,
			              "gnuplot failed (exit status %d): %s", WEXITSTATUS(status),
			              last_line(msg));
		else /* exit 0: what it printed were warnings, not the reason */
			rc = no_png(gp_path, j->dir, err);
		goto done;
	}
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
		fd = -1;
	}
	if (rename(tmp, png) != 0) {
		int e2 = errno;
		rc = etc_fail(err, ETC_ERR_IO, png, -1, "cannot write: %s", strerror(e2));
		goto done;
	}
	free(tmp);
	tmp = NULL;
	if (res)
		res->pngs_written++;
done:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(png);
	free(outarg);
	free(script);
	free(exe);
	return rc;
}

static int run_job(const plot_job *j, etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_name(j->name, err));
	char *owned = NULL;
	const char *tpl = NULL;
	ETC_TRY(load_template(j, &owned, &tpl, err));
	int rc = make_dirs(j->dir, err);
	char *dat = NULL, *gp = NULL;
	if (rc == 0) {
		dat = join(j->dir, "", j->name, ".dat");
		gp = join(j->dir, "", j->name, ".gp");
		if (!dat || !gp)
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	if (rc == 0)
		rc = write_dat(j, dat, err);
	if (rc == 0)
		rc = write_gp(j, gp, tpl, err);
	if (rc == 0) {
		if (res)
			res->scripts_written++;
		rc = run_gnuplot(j, res, gp, err);
	}
	free(dat);
	free(gp);
	free(owned);
	return rc;
}

static plot_job job_init(const etc_plot_options *o, const char *name, const char *kind)
{
	plot_job j = {0};
	j.o = o;
	j.dir = o && o->dir && *o->dir ? o->dir : ".";
	j.name = name;
	j.kind = kind;
	return j;
}

/* ---- bars and lines: one value per label ---- */

typedef struct series {
	const char *title, *xlabel, *ylabel;
	size_t n;
	const char *const *labels;
	const double *values;
	size_t plottable, capped;
	double cap_hi, cap_lo; /* where +inf and -inf are drawn */
	bool has_threshold;
	double threshold;
	long marked;
} series;

static void series_scan(series *s)
{
	double lo = INFINITY, hi = -INFINITY;
	s->plottable = s->capped = 0;
	for (size_t i = 0; i < s->n; i++) {
		double v = s->values[i];
		if (isfinite(v)) {
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			s->plottable++;
		} else if (isinf(v)) {
			s->capped++;
		}
	}
	s->plottable += s->capped;
	/* Capped bars start at 0, so the range includes 0. */
	if (!(lo <= 0))
		lo = 0;
	if (!(hi >= 0))
		hi = 0;
	double span = hi / 2 - lo / 2;
	if (!(span > 0))
		span = 0.5;
	s->cap_hi = hi + 0.2 * span;
	s->cap_lo = lo - 0.2 * span;
	if (!isfinite(s->cap_hi))
		s->cap_hi = hi;
	if (!isfinite(s->cap_lo))
		s->cap_lo = lo;
}

static void label_of(const series *s, size_t i, char *buf, size_t cap, const char **out)
{
	if (s->labels) {
		*out = s->labels[i] ? s->labels[i] : "";
	} else {
		snprintf(buf, cap, "%zu", i);
		*out = buf;
	}
}

static void series_dat(FILE *f, const void *ctx)
{
	const series *s = ctx;
	fputs("# index, value (NaN when not finite), label, infinite value drawn capped\n", f);
	for (size_t i = 0; i < s->n; i++) {
		double v = s->values[i];
		char buf[32];
		const char *label;
		label_of(s, i, buf, sizeof buf, &label);
		fprintf(f, "%zu ", i);
		put_num(f, v);
		fputc(' ', f);
		put_dat_str(f, label,
		            isnan(v)   ? " (nan)"
		            : isinf(v) ? (v > 0 ? " (+inf)" : " (-inf)")
		                       : "");
		fputc(' ', f);
		put_num(f, isinf(v) ? (v > 0 ? s->cap_hi : s->cap_lo) : NAN);
		fputc('\n', f);
	}
}

static void series_vars(FILE *f, const void *ctx)
{
	const series *s = ctx;
	var_str(f, "plot_title", s->title);
	if (s->xlabel)
		var_str(f, "plot_xlabel", s->xlabel);
	var_str(f, "plot_ylabel", s->ylabel);
	var_int(f, "n_points", (long long)s->n);
	var_int(f, "n_plottable", (long long)s->plottable);
	var_int(f, "n_capped", (long long)s->capped);
	if (s->xlabel) { /* the lines template */
		var_int(f, "has_threshold", s->has_threshold);
		var_num(f, "threshold", s->has_threshold ? s->threshold : 0.0);
		var_int(f, "marked", s->marked);
		char buf[32];
		const char *label = "";
		if (s->marked >= 0)
			label_of(s, (size_t)s->marked, buf, sizeof buf, &label);
		var_str(f, "marked_label", label);
	}
}

static int check_series(const char *what, size_t n, const double *values, etc_error *err)
{
	if (n == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "%s: nothing to plot (n is 0)", what);
	if (!values)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "%s: values is NULL", what);
	return 0;
}

int etc_plot_bars(const etc_plot_options *o, const char *name, const char *title,
                  const char *ylabel, size_t n, const char *const *labels, const double *values,
                  etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_bars", n, values, err));
	series s = {0};
	s.title = title ? title : "";
	s.ylabel = ylabel ? ylabel : "";
	s.n = n;
	s.labels = labels;
	s.values = values;
	s.marked = -1;
	series_scan(&s);
	plot_job j = job_init(o, name, "bars");
	j.width = (int)clamp_ll(160 + 40 * (uint64_t)(n > 1000 ? 1000 : n), 640, 4096);
	j.write_dat = series_dat;
	j.write_vars = series_vars;
	j.ctx = &s;
	return run_job(&j, res, err);
}

static int lines_plot(const etc_plot_options *o, const char *name, const char *title,
                      const char *xlabel, const char *ylabel, size_t n, const char *const *labels,
                      const double *values, double threshold, long marked, etc_plot_result *res,
                      etc_error *err)
{
	if (marked >= 0 && (size_t)marked >= n)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_lines: marked index %ld is not below n = %zu", marked, n);
	series s = {0};
	s.title = title ? title : "";
	s.xlabel = xlabel;
	s.ylabel = ylabel ? ylabel : "";
	s.n = n;
	s.labels = labels;
	s.values = values;
	s.has_threshold = !isnan(threshold);
	s.threshold = threshold;
	s.marked = marked < 0 ? -1 : marked;
	series_scan(&s);
	plot_job j = job_init(o, name, "lines");
	j.width = (int)clamp_ll(160 + 12 * (uint64_t)(n > 1000 ? 1000 : n), 800, 4096);
	j.write_dat = series_dat;
	j.write_vars = series_vars;
	j.ctx = &s;
	return run_job(&j, res, err);
}

int etc_plot_lines(const etc_plot_options *o, const char *name, const char *title,
                   const char *ylabel, size_t n, const char *const *labels, const double *values,
                   double threshold, long marked, etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_lines", n, values, err));
	return lines_plot(o, name, title, "operator (execution order)", ylabel, n, labels, values,
	                  threshold, marked, res, err);
}

int etc_plot_trend(const etc_plot_options *o, const char *name, const char *title,
                   const char *xlabel, const char *ylabel, size_t n, const char *const *labels,
                   const double *values, etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_trend", n, values, err));
	return lines_plot(o, name, title, xlabel ? xlabel : "", ylabel, n, labels, values, NAN, -1,
	                  res, err);
}

/* ---- horizontal bars ---- */

static void hbars_dat(FILE *f, const void *ctx)
{
	const series *s = ctx;
	fputs("# row (0 on top), value (NaN when not finite), label\n", f);
	for (size_t i = 0; i < s->n; i++) {
		char buf[32];
		const char *label;
		label_of(s, i, buf, sizeof buf, &label);
		fprintf(f, "%zu ", i);
		put_num(f, s->values[i]);
		fputc(' ', f);
		put_dat_str(f, label, "");
		fputc('\n', f);
	}
}

static void hbars_vars(FILE *f, const void *ctx)
{
	const series *s = ctx;
	var_str(f, "plot_title", s->title);
	var_str(f, "plot_xlabel", s->xlabel);
	var_int(f, "n_points", (long long)s->n);
}

int etc_plot_hbars(const etc_plot_options *o, const char *name, const char *title,
                   const char *xlabel, size_t n, const char *const *labels, const double *values,
                   etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_hbars", n, values, err));
	series s = {0};
	s.title = title ? title : "";
	s.xlabel = xlabel ? xlabel : "";
	s.n = n;
	s.labels = labels;
	s.values = values;
	plot_job j = job_init(o, name, "hbars");
	j.width = 800;
	j.write_dat = hbars_dat;
	j.write_vars = hbars_vars;
	j.ctx = &s;
	return run_job(&j, res, err);
}

/* ---- box plots ---- */

typedef struct boxes {
	const char *title, *ylabel;
	size_t n;
	const char *const *labels;
	const etc_plot_box *boxes;
} boxes;

static void boxes_dat(FILE *f, const void *ctx)
{
	const boxes *b = ctx;
	fputs("# index, min, p25, median, p75, max, label\n", f);
	for (size_t i = 0; i < b->n; i++) {
		const etc_plot_box *x = &b->boxes[i];
		const double v[5] = {x->min, x->q1, x->median, x->q3, x->max};
		fprintf(f, "%zu", i);
		for (int k = 0; k < 5; k++) {
			fputc(' ', f);
			put_num(f, v[k]);
		}
		fputc(' ', f);
		char buf[32];
		snprintf(buf, sizeof buf, "%zu", i);
		put_dat_str(f, b->labels && b->labels[i] ? b->labels[i] : buf, "");
		fputc('\n', f);
	}
}

static void boxes_vars(FILE *f, const void *ctx)
{
	const boxes *b = ctx;
	var_str(f, "plot_title", b->title);
	var_str(f, "plot_ylabel", b->ylabel);
	var_int(f, "n_points", (long long)b->n);
}

int etc_plot_boxes(const etc_plot_options *o, const char *name, const char *title,
                   const char *ylabel, size_t n, const char *const *labels, const etc_plot_box *bx,
                   etc_plot_result *res, etc_error *err)
{
	if (n == 0 || !bx)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_boxes: nothing to plot");
	boxes b = {title ? title : "", ylabel ? ylabel : "", n, labels, bx};
	plot_job j = job_init(o, name, "boxes");
	j.width = (int)clamp_ll(160 + 60 * (uint64_t)(n > 1000 ? 1000 : n), 640, 4096);
	j.write_dat = boxes_dat;
	j.write_vars = boxes_vars;
	j.ctx = &b;
	return run_job(&j, res, err);
}

/* ---- timeline ---- */

typedef struct timeline {
	const char *title, *xlabel;
	size_t nlanes, n;
	const char *const *lanes;
	const etc_plot_span *spans;
} timeline;

static void timeline_dat(FILE *f, const void *ctx)
{
	const timeline *t = ctx;
	fputs("# lane (0 on top), start, end, lane label\n", f);
	for (size_t i = 0; i < t->n; i++) {
		const etc_plot_span *sp = &t->spans[i];
		fprintf(f, "%u ", sp->lane);
		put_num(f, sp->start);
		fputc(' ', f);
		put_num(f, sp->end);
		fputc(' ', f);
		put_dat_str(f, t->lanes[sp->lane] ? t->lanes[sp->lane] : "", "");
		fputc('\n', f);
	}
}

static void timeline_vars(FILE *f, const void *ctx)
{
	const timeline *t = ctx;
	var_str(f, "plot_title", t->title);
	var_str(f, "plot_xlabel", t->xlabel);
	var_int(f, "n_lanes", (long long)t->nlanes);
	var_int(f, "n_spans", (long long)t->n);
}

int etc_plot_timeline(const etc_plot_options *o, const char *name, const char *title,
                      const char *xlabel, size_t n_lanes, const char *const *lane_labels, size_t n,
                      const etc_plot_span *spans, etc_plot_result *res, etc_error *err)
{
	if (n == 0 || !spans || n_lanes == 0 || !lane_labels)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_timeline: nothing to plot");
	for (size_t i = 0; i < n; i++)
		if (spans[i].lane >= n_lanes)
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "etc_plot_timeline: span %zu is in lane %u of %zu", i,
			                spans[i].lane, n_lanes);
	timeline t = {title ? title : "", xlabel ? xlabel : "", n_lanes, n, lane_labels, spans};
	plot_job j = job_init(o, name, "timeline");
	j.width = 1200;
	j.write_dat = timeline_dat;
	j.write_vars = timeline_vars;
	j.ctx = &t;
	return run_job(&j, res, err);
}

/* ---- histogram ---- */

typedef struct hist {
	const char *title;
	uint64_t n, nonfinite;
	size_t bins;
	uint64_t *counts;
	double lo, hi, mean, std;
} hist;

static double edge(const hist *h, size_t b)
{
	if (b == h->bins)
		return h->hi;
	return h->lo + (double)b * (h->hi / (double)h->bins - h->lo / (double)h->bins);
}

static void hist_dat(FILE *f, const void *ctx)
{
	const hist *h = ctx;
	fputs("# bin centre, count, bin low edge, bin high edge\n", f);
	for (size_t b = 0; b < h->bins; b++) {
		double a = edge(h, b), z = edge(h, b + 1);
		put_num(f, a / 2 + z / 2);
		fprintf(f, " %llu ", (unsigned long long)h->counts[b]);
		put_num(f, a);
		fputc(' ', f);
		put_num(f, z);
		fputc('\n', f);
	}
}

static void hist_vars(FILE *f, const void *ctx)
{
	const hist *h = ctx;
	var_str(f, "plot_title", h->title);
	var_str(f, "plot_xlabel", "error (actual - reference)");
	var_int(f, "n_values", (long long)h->n);
	var_int(f, "n_nonfinite", (long long)h->nonfinite);
	var_num(f, "hist_lo", h->lo);
	var_num(f, "hist_hi", h->hi);
	var_num(f, "bin_width", h->hi / (double)h->bins - h->lo / (double)h->bins);
	var_num(f, "err_mean", h->mean);
	var_num(f, "err_std", h->std);
}

static int hist_fill(hist *h, etc_plot_read_fn read, void *ctx, etc_error *err)
{
	double *buf = malloc(PLOT_CHUNK * sizeof *buf);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	/* Pass 1: range, non-finite count, mean and variance (Welford). */
	double lo = INFINITY, hi = -INFINITY, mean = 0, m2 = 0;
	uint64_t finite = 0;
	for (uint64_t first = 0; first < h->n;) {
		size_t k = h->n - first < PLOT_CHUNK ? (size_t)(h->n - first) : PLOT_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			double v = buf[i];
			if (!isfinite(v)) {
				h->nonfinite++;
				continue;
			}
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			finite++;
			double d = v - mean;
			mean += d / (double)finite;
			m2 += d * (v - mean);
		}
		first += k;
	}
	h->mean = finite ? mean : 0;
	h->std = finite ? sqrt(m2 / (double)finite) : 0;
	if (!finite) {
		lo = 0;
		hi = 1;
	} else if (!(hi > lo)) {
		double d = lo == 0 ? 0.5 : fabs(lo) * 0.25;
		lo -= d;
		hi += d;
		if (!isfinite(lo))
			lo = -(DBL_MAX / 2);
		if (!isfinite(hi))
			hi = (DBL_MAX / 2);
	}
	h->lo = lo;
	h->hi = hi;
	/* Pass 2: the bins. */
	double scale = hi / 2 - lo / 2;
	for (uint64_t first = 0; finite && first < h->n;) {
		size_t k = h->n - first < PLOT_CHUNK ? (size_t)(h->n - first) : PLOT_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			double v = buf[i];
			if (!isfinite(v))
				continue;
			double t = (v / 2 - lo / 2) / scale;
			size_t b = t > 0 ? (size_t)(t * (double)h->bins) : 0;
			if (b >= h->bins)
				b = h->bins - 1;
			h->counts[b]++;
		}
		first += k;
	}
	free(buf);
	return 0;
}

int etc_plot_histogram_read(const etc_plot_options *o, const char *name, const char *title,
                            etc_plot_read_fn read, void *ctx, uint64_t n, size_t bins,
                            etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_name(name, err));
	if (!read)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_histogram: no values");
	if (bins == 0)
		bins = PLOT_DEFAULT_BINS;
	if (bins > PLOT_MAX_BINS)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_histogram: %zu bins, at most %d allowed", bins,
		                PLOT_MAX_BINS);
	hist h = {0};
	h.title = title ? title : "";
	h.n = n;
	h.bins = bins;
	h.counts = calloc(bins, sizeof *h.counts);
	if (!h.counts)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = hist_fill(&h, read, ctx, err);
	if (rc == 0) {
		plot_job j = job_init(o, name, "histogram");
		j.width = 800;
		j.write_dat = hist_dat;
		j.write_vars = hist_vars;
		j.ctx = &h;
		rc = run_job(&j, res, err);
	}
	free(h.counts);
	return rc;
}

int etc_plot_histogram(const etc_plot_options *o, const char *name, const char *title,
                       const double *errors, size_t n, size_t bins, etc_plot_result *res,
                       etc_error *err)
{
	if (n && !errors)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_histogram: errors is NULL");
	return etc_plot_histogram_read(o, name, title, etc_plot_read_doubles_, (void *)errors, n,
	                               bins, res, err);
}

int etc_plot_read_doubles_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err)
{
	(void)err;
	memcpy(dst, (const double *)ctx + first, count * sizeof *dst);
	return 0;
}
