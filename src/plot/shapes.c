/*
 * shapes.c - box plots (per-run times of each operator; points when there are
 * fewer than 3 runs) and the Gantt-style timeline of one run.
 */
#include "etcompare/plot.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- box plots ---- */

typedef struct boxes {
	const char *title, *ylabel;
	size_t n;
	const char *const *labels;
	const etc_plot_box *boxes;
	const etc_plot_style *style;
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
			etc_plot_put_num_(f, v[k]);
		}
		fputc(' ', f);
		char buf[32];
		snprintf(buf, sizeof buf, "%zu", i);
		etc_plot_put_dat_str_(f, b->labels && b->labels[i] ? b->labels[i] : buf, "");
		fputc('\n', f);
	}
}

static void boxes_vars(FILE *f, const void *ctx)
{
	const boxes *b = ctx;
	etc_plot_var_str_(f, "plot_ylabel", b->ylabel);
	etc_plot_var_int_(f, "n_points", (long long)b->n);
	etc_plot_var_int_(f, "points_only", b->style->points_only);
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < b->n; i++) {
		lo = isfinite(b->boxes[i].min) && b->boxes[i].min < lo ? b->boxes[i].min : lo;
		hi = isfinite(b->boxes[i].max) && b->boxes[i].max > hi ? b->boxes[i].max : hi;
	}
	/* times start at zero: a spread of 100 to 160 ns is not a collapse */
	if (!(hi > 0))
		hi = 1;
	etc_plot_var_num_(f, "y_lo", lo < 0 ? lo * 1.08 : 0.0);
	etc_plot_var_num_(f, "y_hi", hi * 1.08);
	etc_plot_var_si_tics_(f, b->style->si_unit, lo < 0 ? lo : 0.0, hi);
}

int etc_plot_boxes(const etc_plot_options *o, const char *name, const char *title,
                   const char *ylabel, size_t n, const char *const *labels, const etc_plot_box *bx,
                   etc_plot_result *res, etc_error *err)
{
	if (n == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_boxes: nothing to plot");
	if (!bx)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_boxes: NULL bx");
	boxes b = {title ? title : "", ylabel ? ylabel : "", n, labels, bx, etc_plot_style_of_(o)};
	plot_job j = etc_plot_job_init_(o, name, "boxes", title);
	j.width = (int)etc_plot_clamp_(160 + 60 * (uint64_t)(n > 1000 ? 1000 : n), 640, 4096);
	j.write_dat = boxes_dat;
	j.write_vars = boxes_vars;
	j.ctx = &b;
	return etc_plot_job_run_(&j, res, err);
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
		etc_plot_put_num_(f, sp->start);
		fputc(' ', f);
		etc_plot_put_num_(f, sp->end);
		fputc(' ', f);
		etc_plot_put_dat_str_(f, t->lanes[sp->lane] ? t->lanes[sp->lane] : "", "");
		fputc('\n', f);
	}
}

static void timeline_vars(FILE *f, const void *ctx)
{
	const timeline *t = ctx;
	etc_plot_var_str_(f, "plot_xlabel", t->xlabel);
	etc_plot_var_int_(f, "n_lanes", (long long)t->nlanes);
	etc_plot_var_int_(f, "n_spans", (long long)t->n);
}

int etc_plot_timeline(const etc_plot_options *o, const char *name, const char *title,
                      const char *xlabel, size_t n_lanes, const char *const *lane_labels, size_t n,
                      const etc_plot_span *spans, etc_plot_result *res, etc_error *err)
{
	if (n == 0 || n_lanes == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_timeline: nothing to plot");
	if (!spans || !lane_labels)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_timeline: NULL %s",
		                !spans ? "spans" : "lane_labels");
	for (size_t i = 0; i < n; i++)
		if (spans[i].lane >= n_lanes)
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "etc_plot_timeline: span %zu is in lane %u of %zu", i,
			                spans[i].lane, n_lanes);
	timeline t = {title ? title : "", xlabel ? xlabel : "", n_lanes, n, lane_labels, spans};
	plot_job j = etc_plot_job_init_(o, name, "timeline", title);
	j.width = 1200;
	j.write_dat = timeline_dat;
	j.write_vars = timeline_vars;
	j.ctx = &t;
	return etc_plot_job_run_(&j, res, err);
}
