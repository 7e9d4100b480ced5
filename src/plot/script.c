/*
 * script.c - one plot's files: the checks on its name, the output directory,
 * the .dat data and the .gp script (a preamble of variables, then the
 * template), both written atomically; then the script is queued for gnuplot
 * (gnuplot.c), or the PNG is drawn here when the job draws its own.
 */
#define _GNU_SOURCE
#include "etcompare/plot.h"
#include "etcompare/output.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PLOT_TEMPLATE_MAX (1u << 20)

int etc_plot_check_name_(const char *name, etc_error *err)
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
char *etc_plot_join_(const char *dir, const char *prefix, const char *name, const char *ext)
{
	size_t n = strlen(dir) + strlen(prefix) + strlen(name) + strlen(ext) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s%s%s", dir, prefix, name, ext);
	return p;
}

/* mkdir -p: creates `dir` and its missing parents. */
int etc_plot_make_dirs_(const char *dir, etc_error *err)
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

/* A single-quoted gnuplot string: '' for ', a line break as '."\n".', other
 * control characters as spaces. */
void etc_plot_put_gp_str_(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\'')
			fputs("''", f);
		else if (c == '\n')
			fputs("'.\"\\n\".'", f); /* 'a'."\n".'b': a line break in a title */
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
void etc_plot_put_dat_str_(FILE *f, const char *s, const char *suffix)
{
	fputc('"', f);
	for (int part = 0; part < 2; part++, s = suffix) {
		for (; s && *s; s++) {
			unsigned char c = (unsigned char)*s;
			if (c == '"')
				fputc('\'', f);
			else if (c == '\\')
				fputs("\\\\", f);
			else if (c == '\n') /* a label of two lines (node, op beneath) */
				fputs("\\n", f);
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
void etc_plot_put_num_(FILE *f, double v)
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

void etc_plot_var_str_(FILE *f, const char *var, const char *s)
{
	fprintf(f, "%s = ", var);
	etc_plot_put_gp_str_(f, s);
	fputc('\n', f);
}

void etc_plot_var_num_(FILE *f, const char *var, double v)
{
	fprintf(f, "%s = ", var);
	etc_plot_put_num_(f, v);
	fputc('\n', f);
}

void etc_plot_var_int_(FILE *f, const char *var, long long v)
{
	fprintf(f, "%s = %lld\n", var, v);
}

long long etc_plot_clamp_(uint64_t v, long long lo, long long hi)
{
	return v < (uint64_t)lo ? lo : v > (uint64_t)hi ? hi : (long long)v;
}

/* ---- template, .dat, .gp ---- */

static int load_template(const plot_job *j, char **owned, const char **text, etc_error *err)
{
	*owned = NULL;
	if (!j->o || !j->o->template_dir) {
		*text = etc_plot_template(j->kind);
		return 0;
	}
	char *path = etc_plot_join_(j->o->template_dir, "", j->kind, ".gp");
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

int etc_plot_out_open_(plot_out *po, const etc_plot_batch *b, const char *path, etc_error *err)
{
	memset(po, 0, sizeof *po);
	if (!etc_plot_batch_in_set_(b, path)) {
		ETC_TRY(etc_output_open(&po->out, path, err));
		po->f = etc_output_stream(po->out);
		return 0;
	}
	po->path = strdup(path);
	if (!po->path)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	po->f = fopen(path, "we");
	if (!po->f) {
		int e = errno;
		free(po->path);
		po->path = NULL;
		return etc_fail(err, ETC_ERR_IO, path, -1, "cannot create output file: %s",
		                strerror(e));
	}
	return 0;
}

int etc_plot_out_commit_(plot_out *po, etc_error *err)
{
	if (po->out)
		return etc_output_commit(po->out, err);
	int bad = fflush(po->f) != 0 || ferror(po->f);
	int e = errno;
	if (fclose(po->f) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	int rc = 0;
	if (bad) {
		rc = etc_fail(err, ETC_ERR_IO, po->path, -1, "cannot write: %s",
		              strerror(e ? e : EIO));
		unlink(po->path);
	}
	free(po->path);
	memset(po, 0, sizeof *po);
	return rc;
}

void etc_plot_out_abort_(plot_out *po)
{
	if (po->out) {
		etc_output_abort(po->out);
	} else if (po->f) {
		fclose(po->f);
		unlink(po->path);
	}
	free(po->path);
	memset(po, 0, sizeof *po);
}

static int write_dat(const plot_job *j, const char *path, etc_error *err)
{
	plot_out po;
	ETC_TRY(etc_plot_out_open_(&po, j->o ? j->o->batch : NULL, path, err));
	FILE *f = po.f;
	fprintf(f, "# %s.dat - written by etcompare %s for %s.gp (\"%s\" template)\n", j->name,
	        ETC_VERSION_STRING, j->name, j->kind);
	j->write_dat(f, j->ctx);
	return etc_plot_out_commit_(&po, err);
}

static int write_gp(const plot_job *j, const char *path, const char *tpl, etc_error *err)
{
	plot_out po;
	ETC_TRY(etc_plot_out_open_(&po, j->o ? j->o->batch : NULL, path, err));
	FILE *f = po.f;
	fprintf(f,
	        "# %s.gp - written by etcompare %s: the preamble below, then the \"%s\" "
	        "template.\n"
	        "# Run it in this directory to make %s.png from %s.dat: gnuplot %s.gp\n",
	        j->name, ETC_VERSION_STRING, j->kind, j->name, j->name, j->name);
	fprintf(f, "datafile = '%s.dat'\n", j->name);
	fprintf(f, "if (!exists(\"outfile\")) {\n\toutfile = '%s.png'\n}\n", j->name);
	etc_plot_var_int_(f, "plot_width", j->width);
	etc_plot_var_int_(f, "plot_height", j->height ? j->height : PLOT_HEIGHT);
	etc_plot_var_str_(f, "plot_title", j->title);
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
	return etc_plot_out_commit_(&po, err);
}

plot_job etc_plot_job_init_(const etc_plot_options *o, const char *name, const char *kind,
                            const char *title)
{
	plot_job j = {0};
	j.o = o;
	j.dir = o && o->dir && *o->dir ? o->dir : ".";
	j.name = name;
	j.kind = kind;
	j.title = title ? title : "";
	j.height = PLOT_HEIGHT;
	return j;
}

const etc_plot_style *etc_plot_style_of_(const etc_plot_options *o)
{
	static const etc_plot_style none = {NAN, NULL, NULL, false, NULL, false, 0};
	return o && o->style ? o->style : &none;
}

int etc_plot_job_run_(const plot_job *j, etc_plot_result *res, etc_error *err)
{
	ETC_TRY(etc_plot_check_name_(j->name, err));
	char *owned = NULL;
	const char *tpl = NULL;
	ETC_TRY(load_template(j, &owned, &tpl, err));
	int rc = etc_plot_make_dirs_(j->dir, err);
	char *dat = NULL, *gp = NULL;
	if (rc == 0) {
		dat = etc_plot_join_(j->dir, "", j->name, ".dat");
		gp = etc_plot_join_(j->dir, "", j->name, ".gp");
		if (!dat || !gp)
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	if (rc == 0)
		rc = write_dat(j, dat, err);
	if (rc == 0)
		rc = write_gp(j, gp, tpl, err);
	if (rc == 0 && res)
		res->scripts_written++;
	if (rc == 0 && j->write_png) {
		/* drawn here: no gnuplot process for it */
		char *png = etc_plot_join_(j->dir, "", j->name, ".png");
		rc = png ? j->write_png(png, j->o, j->ctx, err)
		         : etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		free(png);
		if (rc == 0 && res)
			res->pngs_written++;
		if (rc == 0 && j->o && j->o->batch)
			rc = etc_plot_batch_add_made_(j->o->batch, j->dir, j->name, j->title, err);
	} else if (rc == 0 && j->o && j->o->batch) {
		rc = etc_plot_batch_add_(j->o->batch, j->dir, j->name, j->title, j->width,
		                         j->height ? j->height : PLOT_HEIGHT, err);
	} else if (rc == 0) {
		etc_plot_batch *b = NULL;
		rc = etc_plot_batch_create(&b, err);
		if (rc == 0)
			rc = etc_plot_batch_add_(b, j->dir, j->name, j->title, 0, 0, err);
		if (rc == 0)
			rc = etc_plot_batch_run(b, j->o, res, err);
		etc_plot_batch_free(b);
	}
	free(dat);
	free(gp);
	free(owned);
	return rc;
}

/* 1, 2 or 5 times a power of ten, at least `raw`. */
static double nice_step(double raw)
{
	double p = pow(10, floor(log10(raw)));
	return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

void etc_plot_var_si_tics_(FILE *f, const char *unit, double lo, double hi)
{
	fputs("value_tics = '", f);
	if (unit && isfinite(lo) && isfinite(hi) && hi > 0 && hi >= lo) {
		static const char *const prefix[] = {"p", "n", "\xc2\xb5", "m", "", "k"};
		if (lo > 0 && lo > hi / 2)
			lo = hi / 2; /* a few ticks below the boxes */
		if (lo < 0)
			lo = 0;
		double step = nice_step((hi - lo) / 5);
		int e3 = (int)floor(log10(hi) / 3);
		e3 = e3 < -4 ? -4 : e3 > 1 ? 1 : e3;
		double div = pow(10, 3 * e3);
		fputc('(', f);
		double first = floor(lo / step) * step;
		for (int k = 0; k <= 12; k++) {
			double v = first + k * step;
			if (v > hi + step * 0.999)
				break;
			if (fabs(v) < step * 1e-9)
				v = 0;
			fprintf(f, "%s''%.4g%s%s%s'' %.17g", k ? ", " : "", v / div,
			        v == 0 ? "" : " ", v == 0 ? "" : prefix[e3 + 4], v == 0 ? "" : unit,
			        v);
		}
		fputc(')', f);
	}
	fputs("'\n", f);
}
