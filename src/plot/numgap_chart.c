/*
 * numgap_chart.c - the numeric gap in one chart (template "numgap_chart"):
 * per op in execution order its cumulative SNR as a line and its local SNR
 * as bars, the gate, the first divergence and the culprit (where the error
 * enters) marked as the time-and-error plot marks it.
 *
 * The SNR axis is computed here: it holds 0 (or the lowest value when one
 * is negative), every finite value and the gate; identical outputs (+inf
 * dB) are drawn capped just above the largest finite value (-inf below the
 * lowest), and the key says where.
 */
#include "etcompare/plot.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_LABEL_MAX     28 /* characters per line of a tick label, as the bar charts */
#define CHART_LABEL_UPRIGHT 44 /* the same, upright labels (13 to 40 ops): one line each part */

typedef struct chart {
	size_t n;
	const char *const *labels;
	const double *cum, *loc;
	double threshold;
	const char *thr_label;
	long culprit, first;
	double y_lo, y_hi, cap, cap_lo, culprit_y;
	size_t pos_inf[2], neg_inf[2]; /* +inf and -inf values: cumulative, local */
	size_t label_chars;
	bool has_local;
} chart;

static void chart_label(const chart *c, size_t i, char *buf, size_t cap)
{
	if (c->labels)
		etc_plot_wrap_label_(
		    c->labels[i] ? c->labels[i] : "",
		    c->n > 12 && c->n <= 40 ? CHART_LABEL_UPRIGHT : CHART_LABEL_MAX, buf, cap);
	else
		snprintf(buf, cap, "%zu", i);
}

static double local_of(const chart *c, size_t i)
{
	return c->loc ? c->loc[i] : NAN;
}

/* The height a value is drawn at: itself, a cap for an infinite one, NaN. */
static double drawn_at(const chart *c, double v)
{
	if (isinf(v))
		return v > 0 ? c->cap : c->cap_lo;
	return v;
}

static void chart_scan(chart *c)
{
	double lo = 0, hi = 0;
	memset(c->pos_inf, 0, sizeof c->pos_inf);
	memset(c->neg_inf, 0, sizeof c->neg_inf);
	c->label_chars = 0;
	c->has_local = false;
	for (size_t i = 0; i < c->n; i++) {
		double v[2] = {c->cum[i], local_of(c, i)};
		for (int k = 0; k < 2; k++) {
			if (isfinite(v[k])) {
				lo = v[k] < lo ? v[k] : lo;
				hi = v[k] > hi ? v[k] : hi;
			} else if (isinf(v[k])) {
				(v[k] > 0 ? c->pos_inf : c->neg_inf)[k]++;
			}
		}
		c->has_local = c->has_local || !isnan(v[1]);
		char buf[320];
		chart_label(c, i, buf, sizeof buf);
		size_t chars = 0;
		for (const char *s = buf; *s; s++) {
			if (*s == '\n')
				chars = 0;
			else if (((unsigned char)*s & 0xc0) != 0x80 && ++chars > c->label_chars)
				c->label_chars = chars;
		}
	}
	if (isfinite(c->threshold)) {
		lo = c->threshold < lo ? c->threshold : lo;
		hi = c->threshold > hi ? c->threshold : hi;
	}
	double span = hi - lo;
	if (!(span > 0 && isfinite(span)))
		span = 10;
	bool top = c->pos_inf[0] || c->pos_inf[1], bottom = c->neg_inf[0] || c->neg_inf[1];
	c->cap = hi + 0.1 * span;
	/* -inf (a reference of zeros, a non-zero error) below everything, as +inf above */
	c->cap_lo = lo - 0.1 * span;
	/* room above the values (and the cap) for the first divergence's label */
	c->y_hi = (top ? c->cap : hi) + 0.18 * span;
	c->y_lo = bottom ? c->cap_lo - 0.08 * span : lo < 0 ? lo - 0.08 * span : 0;
	c->culprit_y = NAN;
	if (c->culprit >= 0) {
		double l = local_of(c, (size_t)c->culprit);
		c->culprit_y = drawn_at(c, isnan(l) ? c->cum[c->culprit] : l);
	}
}

static void chart_dat(FILE *f, const void *ctx)
{
	const chart *c = ctx;
	fputs("# index, cumulative SNR (dB; NaN when not finite), local SNR (dB; NaN when not "
	      "finite), label, cumulative capped, local capped, culprit marker\n",
	      f);
	for (size_t i = 0; i < c->n; i++) {
		double cum = c->cum[i], loc = local_of(c, i);
		char label[320];
		chart_label(c, i, label, sizeof label);
		fprintf(f, "%zu ", i);
		etc_plot_put_num_(f, isfinite(cum) ? cum : NAN);
		fputc(' ', f);
		etc_plot_put_num_(f, isfinite(loc) ? loc : NAN);
		fputc(' ', f);
		etc_plot_put_dat_str_(f, label, "");
		fputc(' ', f);
		etc_plot_put_num_(f, isinf(cum) ? drawn_at(c, cum) : NAN);
		fputc(' ', f);
		etc_plot_put_num_(f, isinf(loc) ? drawn_at(c, loc) : NAN);
		fputc(' ', f);
		etc_plot_put_num_(f, (long)i == c->culprit ? c->culprit_y : NAN);
		fputc('\n', f);
	}
}

/* "<what><first line of the label>" (the index and node name; the op type
 * is under the tick), "" for -1. */
static void marker_label(const chart *c, long i, const char *what, char *buf, size_t cap)
{
	buf[0] = '\0';
	if (i < 0)
		return;
	const char *l = c->labels && c->labels[i] ? c->labels[i] : "";
	size_t n = strcspn(l, "\n");
	if (c->labels)
		snprintf(buf, cap, "%s%.*s", what, (int)(n > 200 ? 200 : n), l);
	else
		snprintf(buf, cap, "%s%ld", what, i);
}

static void chart_vars(FILE *f, const void *ctx)
{
	const chart *c = ctx;
	etc_plot_var_str_(f, "plot_xlabel", "op (execution order): node name, op type beneath");
	etc_plot_var_str_(f, "plot_ylabel", "SNR (dB)");
	etc_plot_var_int_(f, "n_points", (long long)c->n);
	etc_plot_var_int_(f, "has_local", c->has_local);
	etc_plot_var_num_(f, "y_lo", c->y_lo);
	etc_plot_var_num_(f, "y_hi", c->y_hi);
	char buf[400];
	static const char *const var[2] = {"cap_cum_title", "cap_loc_title"};
	static const char *const what[2] = {"cumulative", "local"};
	for (int k = 0; k < 2; k++) {
		if (c->pos_inf[k] && c->neg_inf[k])
			snprintf(buf, sizeof buf, "%s +inf dB at %.4g, -inf at %.4g", what[k],
			         c->cap, c->cap_lo);
		else if (c->pos_inf[k])
			snprintf(buf, sizeof buf, "%s identical (+inf dB) at %.4g", what[k],
			         c->cap);
		else if (c->neg_inf[k])
			snprintf(buf, sizeof buf, "%s -inf dB at %.4g", what[k], c->cap_lo);
		else
			buf[0] = '\0';
		etc_plot_var_str_(f, var[k], buf);
	}
	bool thr = isfinite(c->threshold);
	etc_plot_var_int_(f, "has_threshold", thr);
	etc_plot_var_num_(f, "threshold", thr ? c->threshold : 0.0);
	if (c->thr_label)
		snprintf(buf, sizeof buf, "%s", c->thr_label);
	else
		snprintf(buf, sizeof buf, "min SNR %.6g dB", thr ? c->threshold : 0.0);
	etc_plot_var_str_(f, "threshold_label", buf);
	/* a label rotated by 30 degrees reaches 0.87 of its length left of its tick */
	size_t lm = c->n > 12 && c->n <= 40 ? 10 : c->label_chars * 87 / 100 + 3; /* upright: 10 */
	etc_plot_var_int_(f, "label_margin", (long long)(lm > 10 ? lm : 10));
	etc_plot_var_int_(f, "culprit", c->culprit);
	etc_plot_var_num_(f, "culprit_y", c->culprit >= 0 ? c->culprit_y : 0.0);
	marker_label(c, c->culprit, "error enters: ", buf, sizeof buf);
	etc_plot_var_str_(f, "culprit_label", buf);
	etc_plot_var_int_(f, "first_div", c->first);
	marker_label(c, c->first, "first divergence: ", buf, sizeof buf);
	etc_plot_var_str_(f, "first_label", buf);
}

int etc_plot_numgap_chart(const etc_plot_options *o, const char *name, const char *title, size_t n,
                          const char *const *labels, const double *cumulative, const double *local,
                          double threshold, long culprit, long first, etc_plot_result *res,
                          etc_error *err)
{
	if (n == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_numgap_chart: nothing to plot (n is 0)");
	if (!cumulative)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_numgap_chart: cumulative is NULL");
	if ((culprit >= 0 && (size_t)culprit >= n) || (first >= 0 && (size_t)first >= n))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_numgap_chart: culprit %ld or first divergence %ld is not "
		                "below n = %zu",
		                culprit, first, n);
	chart c = {0};
	c.n = n;
	c.labels = labels;
	c.cum = cumulative;
	c.loc = local;
	c.threshold = threshold;
	c.thr_label = etc_plot_style_of_(o)->threshold_label;
	c.culprit = culprit < 0 ? -1 : culprit;
	c.first = first < 0 ? -1 : first;
	chart_scan(&c);
	plot_job j = etc_plot_job_init_(o, name, "numgap_chart", title);
	/* tick labels of up to three lines need about 48 pixels each: rotated
	 * by 30 degrees up to 12 ops, upright (90) beyond, where 45 degrees let
	 * three-line neighbours overlap; beyond 40 ops there are none */
	uint64_t per_op = n <= 40 ? 48 : 12;
	j.width = (int)etc_plot_clamp_(200 + per_op * (uint64_t)(n > 1000 ? 1000 : n), 1000, 4096);
	j.height = n <= 12 ? 640 : n <= 40 ? 760 : 520;
	j.write_dat = chart_dat;
	j.write_vars = chart_vars;
	j.ctx = &c;
	return etc_plot_job_run_(&j, res, err);
}
