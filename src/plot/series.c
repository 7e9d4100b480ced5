/*
 * series.c - plots of one value per label: metric bar charts (pass/fail
 * colours, threshold line, capped markers for infinities), line plots along
 * execution order or over runs, and horizontal bars.
 *
 * The value axis range is computed here, not left to gnuplot's autoscale, so
 * that it always holds every finite value, the threshold and the markers
 * with a margin: a bar of 80 next to infinite ones keeps its height.
 */
#include "etcompare/plot.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_MAX  28 /* characters per line of a bar's label; longer ones wrap */
#define HLABEL_MAX 44 /* ... of a horizontal bar's label */

typedef struct series {
	const char *xlabel, *ylabel;
	size_t n;
	const char *const *labels;
	const double *values;
	const etc_plot_style *style;
	size_t plottable, capped, failing, label_chars, label_max;
	double cap_hi, cap_lo; /* where +inf (and -inf or a 0 on a log axis) are drawn */
	double y_lo, y_hi;
	bool log_y, has_threshold;
	double threshold;
	long marked;
} series;

/* The characters of the longest line of `s`. */
static size_t utf8_chars(const char *s)
{
	size_t n = 0, longest = 0;
	for (; *s; s++) {
		n = *s == '\n' ? 0 : n + (((unsigned char)*s & 0xc0) != 0x80);
		longest = n > longest ? n : longest;
	}
	return longest;
}

/*
 * `s` with every line longer than `max` characters broken into lines (after
 * a '.', '_' or ' ' in the last third of the line when there is one), so a
 * node name is shown in full, never cut in the middle.
 */
static void shorten(const char *s, size_t max, char *buf, size_t cap)
{
	size_t o = 0, col = 0, brk = 0, brk_col = 0;
	for (; *s && o + 2 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		buf[o++] = (char)c;
		if (c == '\n') {
			col = brk = 0;
			continue;
		}
		if ((c & 0xc0) == 0x80)
			continue;
		col++;
		if ((c == '.' || c == '_' || c == ' ') && col * 3 >= max * 2) {
			brk = o;
			brk_col = col;
		}
		if (col >= max && s[1] && s[1] != '\n' && o + 2 < cap) {
			size_t at = brk ? brk : o;
			memmove(buf + at + 1, buf + at, o - at);
			buf[at] = '\n';
			o++;
			col = brk ? col - brk_col : 0;
			brk = 0;
		}
	}
	buf[o] = '\0';
}

void etc_plot_wrap_label_(const char *s, size_t max, char *buf, size_t cap)
{
	shorten(s, max, buf, cap);
}

static void label_of(const series *s, size_t i, char *buf, size_t cap)
{
	if (s->labels)
		shorten(s->labels[i] ? s->labels[i] : "", s->label_max, buf, cap);
	else
		snprintf(buf, cap, "%zu", i);
}

static bool drawn(const series *s, double v)
{
	return isfinite(v) && (!s->log_y || v > 0);
}

static void series_scan(series *s)
{
	double lo = INFINITY, hi = -INFINITY;
	bool cap_top = false, cap_bottom = false;
	s->plottable = s->capped = s->failing = s->label_chars = 0;
	for (size_t i = 0; i < s->n; i++) {
		double v = s->values[i];
		char buf[320];
		label_of(s, i, buf, sizeof buf);
		size_t lc = utf8_chars(buf);
		s->label_chars = lc > s->label_chars ? lc : s->label_chars;
		if (s->style->failing && s->style->failing[i])
			s->failing++;
		if (drawn(s, v)) {
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			s->plottable++;
		} else if (isinf(v) || (s->log_y && !isnan(v))) {
			s->capped++;
			if (v > 0)
				cap_top = true;
			else
				cap_bottom = true;
		}
	}
	s->plottable += s->capped;
	if (s->has_threshold && (!s->log_y || s->threshold > 0)) {
		lo = s->threshold < lo ? s->threshold : lo;
		hi = s->threshold > hi ? s->threshold : hi;
	}
	if (s->log_y) {
		if (!(lo <= hi)) {
			lo = 1e-12;
			hi = 1;
		}
		/* a third of a decade at least between the values and the edges */
		double dlo = floor(log10(lo / 2)), dhi = ceil(log10(hi * 2));
		if (dhi <= dlo)
			dhi = dlo + 1;
		s->cap_lo = pow(10, dlo - 0.5);
		s->cap_hi = pow(10, dhi + 0.5);
		s->y_lo = pow(10, cap_bottom ? dlo - 1 : dlo);
		s->y_hi = pow(10, cap_top ? dhi + 1.2 : dhi);
		return;
	}
	/* Bars start at 0: the range holds 0. */
	if (!(lo <= 0))
		lo = 0;
	if (!(hi >= 0))
		hi = 0;
	double span = hi / 2 - lo / 2;
	if (!(span > 0))
		span = 0.5;
	span *= 2;
	if (!isfinite(span))
		span = DBL_MAX / 4;
	s->cap_hi = hi + 0.12 * span;
	s->cap_lo = lo - 0.12 * span;
	if (!isfinite(s->cap_hi))
		s->cap_hi = hi;
	if (!isfinite(s->cap_lo))
		s->cap_lo = lo;
	s->y_hi = (cap_top ? s->cap_hi + 0.1 * span : hi + 0.08 * span);
	s->y_lo = lo < 0 || cap_bottom ? (cap_bottom ? s->cap_lo : lo) - 0.1 * span : 0;
	if (!isfinite(s->y_hi))
		s->y_hi = DBL_MAX;
	if (!isfinite(s->y_lo))
		s->y_lo = -DBL_MAX;
}

static void series_dat(FILE *f, const void *ctx)
{
	const series *s = ctx;
	fputs("# index, value (NaN when not drawn), label, capped marker height, failing, "
	      "marker text\n",
	      f);
	for (size_t i = 0; i < s->n; i++) {
		double v = s->values[i];
		char label[320];
		label_of(s, i, label, sizeof label);
		bool capped = !drawn(s, v) && !isnan(v);
		fprintf(f, "%zu ", i);
		etc_plot_put_num_(f, drawn(s, v) ? v : NAN);
		fputc(' ', f);
		etc_plot_put_dat_str_(f, label, isnan(v) ? " (nan)" : "");
		fputc(' ', f);
		etc_plot_put_num_(f, !capped ? NAN : v > 0 ? s->cap_hi : s->cap_lo);
		fprintf(f, " %d ", s->style->failing && s->style->failing[i] ? 1 : 0);
		etc_plot_put_dat_str_(f,
		                      !capped         ? ""
		                      : v == INFINITY ? "inf"
		                      : v < 0         ? "-inf"
		                                      : "0",
		                      "");
		fputc('\n', f);
	}
}

static void series_vars(FILE *f, const void *ctx)
{
	const series *s = ctx;
	if (s->xlabel)
		etc_plot_var_str_(f, "plot_xlabel", s->xlabel);
	etc_plot_var_str_(f, "plot_ylabel", s->ylabel);
	etc_plot_var_int_(f, "n_points", (long long)s->n);
	etc_plot_var_int_(f, "n_plottable", (long long)s->plottable);
	etc_plot_var_int_(f, "n_capped", (long long)s->capped);
	etc_plot_var_int_(f, "n_failing", (long long)s->failing);
	etc_plot_var_num_(f, "y_lo", s->y_lo);
	etc_plot_var_num_(f, "y_hi", s->y_hi);
	etc_plot_var_int_(f, "log_y", s->log_y);
	etc_plot_var_int_(f, "has_threshold", s->has_threshold);
	etc_plot_var_num_(f, "threshold", s->has_threshold ? s->threshold : 0.0);
	char buf[160];
	if (s->style->threshold_label)
		snprintf(buf, sizeof buf, "%s", s->style->threshold_label);
	else
		snprintf(buf, sizeof buf, "threshold %.6g", s->has_threshold ? s->threshold : 0);
	etc_plot_var_str_(f, "threshold_label", buf);
	/* a label rotated by 45 degrees reaches 0.7 of its length left of its bar */
	etc_plot_var_int_(
	    f, "label_margin",
	    (long long)(s->label_chars * 7 / 10 + 3 > 10 ? s->label_chars * 7 / 10 + 3 : 10));
	if (s->xlabel) { /* the lines template */
		etc_plot_var_int_(f, "marked", s->marked);
		char label[320] = "";
		if (s->marked >= 0)
			label_of(s, (size_t)s->marked, label, sizeof label);
		etc_plot_var_str_(f, "marked_label", label);
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

/* A series of n labelled values in the style of `o`, nothing marked. */
static series series_of(const etc_plot_options *o, size_t n, const char *const *labels,
                        const double *values, size_t label_max)
{
	series s = {0};
	s.n = n;
	s.labels = labels;
	s.values = values;
	s.style = etc_plot_style_of_(o);
	s.label_max = label_max;
	s.marked = -1;
	return s;
}

int etc_plot_bars(const etc_plot_options *o, const char *name, const char *title,
                  const char *ylabel, size_t n, const char *const *labels, const double *values,
                  etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_bars", n, values, err));
	series s = series_of(o, n, labels, values, LABEL_MAX);
	s.ylabel = ylabel ? ylabel : "";
	s.log_y = s.style->log_scale;
	s.has_threshold = !isnan(s.style->threshold);
	s.threshold = s.style->threshold;
	series_scan(&s);
	plot_job j = etc_plot_job_init_(o, name, "bars", title);
	j.width = (int)etc_plot_clamp_(160 + 40 * (uint64_t)(n > 1000 ? 1000 : n), 640, 4096);
	j.write_dat = series_dat;
	j.write_vars = series_vars;
	j.ctx = &s;
	return etc_plot_job_run_(&j, res, err);
}

static int lines_plot(const etc_plot_options *o, const char *name, const char *title,
                      const char *xlabel, const char *ylabel, size_t n, const char *const *labels,
                      const double *values, double threshold, long marked, etc_plot_result *res,
                      etc_error *err)
{
	if (marked >= 0 && (size_t)marked >= n)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_lines: marked index %ld is not below n = %zu", marked, n);
	series s = series_of(o, n, labels, values, LABEL_MAX);
	s.xlabel = xlabel;
	s.ylabel = ylabel ? ylabel : "";
	s.log_y = s.style->log_scale;
	s.has_threshold = !isnan(threshold);
	s.threshold = threshold;
	s.marked = marked < 0 ? -1 : marked;
	series_scan(&s);
	plot_job j = etc_plot_job_init_(o, name, "lines", title);
	j.width = (int)etc_plot_clamp_(160 + 12 * (uint64_t)(n > 1000 ? 1000 : n), 800, 4096);
	j.write_dat = series_dat;
	j.write_vars = series_vars;
	j.ctx = &s;
	return etc_plot_job_run_(&j, res, err);
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
	if (n == 1) /* one run: a bar from 0, not a lone dot */
		return etc_plot_bars(o, name, title, ylabel, n, labels, values, res, err);
	return lines_plot(o, name, title, xlabel ? xlabel : "", ylabel, n, labels, values, NAN, -1,
	                  res, err);
}

/* ---- horizontal bars ---- */

static void hbars_dat(FILE *f, const void *ctx)
{
	const series *s = ctx;
	fputs("# row (0 on top), value (NaN when not finite), label\n", f);
	for (size_t i = 0; i < s->n; i++) {
		char label[320];
		label_of(s, i, label, sizeof label);
		fprintf(f, "%zu ", i);
		etc_plot_put_num_(f, s->values[i]);
		fputc(' ', f);
		etc_plot_put_dat_str_(f, label, "");
		fputc('\n', f);
	}
}

static void hbars_vars(FILE *f, const void *ctx)
{
	const series *s = ctx;
	etc_plot_var_str_(f, "plot_xlabel", s->xlabel);
	etc_plot_var_int_(f, "n_points", (long long)s->n);
	double hi = 0;
	for (size_t i = 0; i < s->n; i++)
		hi = isfinite(s->values[i]) && s->values[i] > hi ? s->values[i] : hi;
	etc_plot_var_si_tics_(f, s->style->si_unit, 0, hi);
}

int etc_plot_hbars(const etc_plot_options *o, const char *name, const char *title,
                   const char *xlabel, size_t n, const char *const *labels, const double *values,
                   etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_hbars", n, values, err));
	series s = series_of(o, n, labels, values, HLABEL_MAX);
	s.xlabel = xlabel ? xlabel : "";
	plot_job j = etc_plot_job_init_(o, name, "hbars", title);
	j.width = 800;
	j.write_dat = hbars_dat;
	j.write_vars = hbars_vars;
	j.ctx = &s;
	return etc_plot_job_run_(&j, res, err);
}

/* ---- scatter ---- */

typedef struct scatter {
	const char *xlabel, *ylabel, *thr_label;
	size_t n;
	const char *const *labels;
	const double *x, *y;
	const unsigned char *kind;
	double threshold;
} scatter;

static void scatter_dat(FILE *f, const void *ctx)
{
	const scatter *s = ctx;
	fputs("# x, y, kind (0 plain, 1 hot spot, 2 culprit, 3 both), label\n", f);
	for (size_t i = 0; i < s->n; i++) {
		if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
			continue;
		char label[320] = "";
		if (s->kind[i] && s->labels && s->labels[i])
			shorten(s->labels[i], LABEL_MAX, label, sizeof label);
		etc_plot_put_num_(f, s->x[i]);
		fputc(' ', f);
		etc_plot_put_num_(f, s->y[i]);
		fprintf(f, " %u ", (unsigned)s->kind[i]);
		etc_plot_put_dat_str_(f, label, "");
		fputc('\n', f);
	}
}

static void scatter_vars(FILE *f, const void *ctx)
{
	const scatter *s = ctx;
	etc_plot_var_str_(f, "plot_xlabel", s->xlabel);
	etc_plot_var_str_(f, "plot_ylabel", s->ylabel);
	etc_plot_var_int_(f, "n_points", (long long)s->n);
	double xh = 0, yl = 0, yh = 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!isfinite(s->x[i]) || !isfinite(s->y[i]))
			continue;
		xh = s->x[i] > xh ? s->x[i] : xh;
		yl = s->y[i] < yl ? s->y[i] : yl;
		yh = s->y[i] > yh ? s->y[i] : yh;
	}
	if (isfinite(s->threshold)) {
		yl = s->threshold < yl ? s->threshold : yl;
		yh = s->threshold > yh ? s->threshold : yh;
	}
	/* both axes hold 0; room on the right for the labels */
	etc_plot_var_num_(f, "x_lo", 0.0);
	etc_plot_var_num_(f, "x_hi", xh > 0 ? xh * 1.3 : 1.0);
	etc_plot_var_num_(f, "y_lo", yl < 0 ? yl * 1.1 : 0.0);
	etc_plot_var_num_(f, "y_hi", yh > 0 ? yh * 1.12 : 1.0);
	etc_plot_var_int_(f, "has_threshold", isfinite(s->threshold));
	etc_plot_var_num_(f, "threshold", isfinite(s->threshold) ? s->threshold : 0.0);
	etc_plot_var_str_(f, "threshold_label", s->thr_label ? s->thr_label : "");
}

int etc_plot_scatter(const etc_plot_options *o, const char *name, const char *title,
                     const char *xlabel, const char *ylabel, size_t n, const char *const *labels,
                     const double *x, const double *y, const unsigned char *kind,
                     etc_plot_result *res, etc_error *err)
{
	ETC_TRY(check_series("etc_plot_scatter", n, x, err));
	if (!y || !kind)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_scatter: NULL %s",
		                !y ? "y" : "kind");
	const etc_plot_style *st = etc_plot_style_of_(o);
	scatter s = {
	    xlabel ? xlabel : "", ylabel ? ylabel : "", st->threshold_label, n, labels, x, y, kind,
	    st->threshold};
	plot_job j = etc_plot_job_init_(o, name, "scatter", title);
	j.width = 1000;
	j.height = 600;
	j.write_dat = scatter_dat;
	j.write_vars = scatter_vars;
	j.ctx = &s;
	return etc_plot_job_run_(&j, res, err);
}
