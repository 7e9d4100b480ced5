/*
 * band_chart.c - the numeric gap over many runs (numgap_dist.h) in the
 * reports: the text table of --all-runs, the JSON object of --json, and
 * the HTML section whose band charts are inline SVG (no script, no
 * external request): per op along execution order, the p5-p95 band of the
 * SNR over the runs, the median as a line, the worst run as a red mark
 * with a tooltip naming it. +inf (identical) is drawn on a line of its own
 * above the axis's top.
 */
#include "report/band_chart.h"
#include "report/report_private.h"

#include <math.h>
#include <string.h>

/* --- JSON ----------------------------------------------------------------------------- */

static void jkey_str(etc_sbuf *b, const char *key, const char *v)
{
	etc_sbuf_printf(b, "\"%s\": ", key);
	etc_sbuf_json_str(b, v, strlen(v));
}

static void stats_json(etc_sbuf *b, const etc_numgap_dist *d, const etc_numgap_dist_stats *s)
{
	etc_sbuf_printf(b, "{\"count\": %zu", s->count);
	const char *names[] = {"min", "p5", "median", "p95", "max"};
	const double vals[] = {s->min, s->p5, s->median, s->p95, s->max};
	for (size_t i = 0; i < 5; i++) {
		etc_sbuf_printf(b, ", \"%s\": ", names[i]);
		if (s->count)
			etc_json_num_(b, vals[i]);
		else
			etc_sbuf_puts(b, "null");
	}
	etc_sbuf_puts(b, ", \"worst\": ");
	if (!s->count) {
		etc_sbuf_puts(b, "null}");
		return;
	}
	const etc_numgap_run_id *id = etc_numgap_dist_run(d, s->worst);
	etc_sbuf_printf(b, "{\"run_index\": %zu, ", s->worst);
	jkey_str(b, "file", id->file);
	etc_sbuf_puts(b, ", ");
	jkey_str(b, "block", id->block);
	etc_sbuf_printf(b, ", \"run\": %u, \"bundled_input_index\": %d}}", id->run,
	                id->bundled_input_index);
}

void etc_numgap_dist_json_(etc_sbuf *b, const etc_numgap_dist *d)
{
	size_t nr = etc_numgap_dist_run_count(d), no = etc_numgap_dist_op_count(d);
	etc_sbuf_printf(b, "{\"run_count\": %zu, \"runs\": [", nr);
	for (size_t k = 0; k < nr; k++) {
		const etc_numgap_run_id *id = etc_numgap_dist_run(d, k);
		etc_sbuf_puts(b, k ? ",\n      {" : "\n      {");
		jkey_str(b, "file", id->file);
		etc_sbuf_puts(b, ", ");
		jkey_str(b, "block", id->block);
		etc_sbuf_printf(b, ", \"run\": %u, \"bundled_input_index\": %d}", id->run,
		                id->bundled_input_index);
	}
	etc_sbuf_puts(b, "],\n    \"ops\": [");
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		etc_sbuf_puts(b, i ? ",\n      {" : "\n      {");
		jkey_str(b, "nodes", op->nodes);
		etc_sbuf_puts(b, ", ");
		jkey_str(b, "ops", op->ops);
		etc_sbuf_puts(b, ", ");
		jkey_str(b, "event", op->event);
		etc_sbuf_puts(b, ", ");
		jkey_str(b, "handles", op->handles);
		etc_sbuf_printf(b, ", \"output\": %u, \"runs\": %zu,\n       \"cumulative_snr\": ",
		                op->output, op->runs);
		stats_json(b, d, &op->cumulative);
		etc_sbuf_puts(b, ",\n       \"local_snr\": ");
		stats_json(b, d, &op->local);
		etc_sbuf_puts(b, ",\n       \"agreement\": ");
		if (!op->has_agreement) {
			etc_sbuf_puts(b, "null}");
			continue;
		}
		etc_sbuf_puts(b, "{\"min_pairwise_snr\": ");
		etc_json_num_(b, op->agreement_min_snr);
		etc_sbuf_printf(b, ", \"outlier_run_index\": %zu, \"outlier_median_snr\": ",
		                op->agreement_outlier);
		etc_json_num_(b, op->agreement_outlier_snr);
		etc_sbuf_puts(b, "}}");
	}
	etc_sbuf_puts(b, "]}");
}

/* --- HTML ----------------------------------------------------------------------------- */

static void esc(FILE *f, const char *s)
{
	etc_html_escape_n_(f, s ? s : "", s ? strlen(s) : 0);
}

/* An op's short label: its nodes, else its ops, else its event, cut to `cap` - 1. */
static void op_label(char *buf, size_t cap, const etc_numgap_dist_op *op)
{
	const char *s = *op->nodes ? op->nodes : *op->ops ? op->ops : op->event;
	snprintf(buf, cap, "%s", s);
	/* never cut inside a UTF-8 sequence */
	size_t n = strlen(buf);
	while (n && ((unsigned char)buf[n - 1] & 0xC0) == 0x80)
		buf[--n] = '\0';
	if (n && (unsigned char)buf[n - 1] >= 0xC0)
		buf[--n] = '\0';
}

static void snr_text(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (isinf(v))
		snprintf(buf, cap, v > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, cap, "%.4g", v);
}

/* The distribution's summary as text: one line per op. */
int etc_report_numgap_dist(FILE *f, const etc_numgap_dist *d, etc_error *err)
{
	size_t no = etc_numgap_dist_op_count(d);
	fprintf(f, "numeric gap over %zu runs: cumulative SNR (dB) per op\n",
	        etc_numgap_dist_run_count(d));
	fprintf(f, "%4s  %-32s %5s %9s %9s %9s %9s  %s\n", "#", "op", "runs", "min", "p5", "median",
	        "p95", "worst run");
	char safe[256], t[4][32];
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = &op->cumulative;
		const char *name = *op->nodes ? op->nodes : *op->ops ? op->ops : op->event;
		snr_text(t[0], sizeof t[0], s->count ? s->min : NAN);
		snr_text(t[1], sizeof t[1], s->count ? s->p5 : NAN);
		snr_text(t[2], sizeof t[2], s->count ? s->median : NAN);
		snr_text(t[3], sizeof t[3], s->count ? s->p95 : NAN);
		fprintf(f, "%4zu  %-32.32s %5zu %9s %9s %9s %9s  ", i,
		        etc_text_safe(safe, sizeof safe, name), op->runs, t[0], t[1], t[2], t[3]);
		if (s->count) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, s->worst);
			fprintf(f, "%s (ETDump run %u, bundled input %d)",
			        etc_text_safe(safe, sizeof safe, id->block), id->run,
			        id->bundled_input_index);
		} else {
			fprintf(f, "-");
		}
		if (op->has_agreement) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, op->agreement_outlier);
			snr_text(t[0], sizeof t[0], op->agreement_min_snr);
			fprintf(f, "; runs agree to %s dB, outlier %s (ETDump run %u)", t[0],
			        etc_text_safe(safe, sizeof safe, id->block), id->run);
		}
		fputc('\n', f);
	}
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1,
		                "cannot write the numeric gap distribution");
	return 0;
}

enum { LEFT = 64, TOP = 40, PLOT_H = 220, BOTTOM = 120, STEP = 36, MIN_W = 420 };

typedef struct axis {
	double lo, hi; /* finite range of the y axis (dB) */
	double inf_y;  /* pixel row of +inf */
} axis;

static double ypix(const axis *a, double v)
{
	if (isinf(v))
		return v > 0 ? a->inf_y : TOP + PLOT_H;
	double t = (v - a->lo) / (a->hi - a->lo);
	return TOP + PLOT_H - t * PLOT_H;
}

/* One chart: the band of `local` or cumulative SNR; 0 when no op has a value. */
static int chart(FILE *f, const etc_numgap_dist *d, bool local, const char *title)
{
	size_t no = etc_numgap_dist_op_count(d);
	double lo = INFINITY, hi = -INFINITY;
	size_t with = 0;
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = local ? &op->local : &op->cumulative;
		if (!s->count)
			continue;
		with++;
		const double v[] = {s->min, s->p5, s->median, s->p95, s->max};
		for (size_t k = 0; k < 5; k++)
			if (isfinite(v[k])) {
				lo = v[k] < lo ? v[k] : lo;
				hi = v[k] > hi ? v[k] : hi;
			}
	}
	if (!with)
		return 0;
	if (lo > hi) { /* every value identical (+inf) */
		lo = 0;
		hi = 100;
	}
	double pad = (hi - lo) * 0.08 + 1.0;
	axis a = {floor((lo - pad) / 10) * 10, ceil((hi + pad) / 10) * 10, TOP - 14};
	int w = LEFT + 20 + (int)no * STEP;
	if (w < MIN_W)
		w = MIN_W;
	int h = TOP + PLOT_H + BOTTOM;
	fprintf(f,
	        "<figure class=\"band\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	        "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
	        w, h, w, h);
	esc(f, title);
	fputs("\" font-family=\"sans-serif\" font-size=\"11\">\n", f);
	/* the grid: a line every tenth of the range, rounded to 10 dB steps */
	double step = (a.hi - a.lo) / 10 > 10 ? ceil((a.hi - a.lo) / 100) * 10 : 10;
	for (double y = a.lo; y <= a.hi + 1e-9; y += step) {
		double py = ypix(&a, y);
		fprintf(f,
		        "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
		        "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
		        LEFT, w - 10, py, py, LEFT - 4, py + 4, y);
	}
	fprintf(f,
	        "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\" "
	        "stroke-dasharray=\"3 3\"/><text x=\"%d\" y=\"%.1f\" "
	        "text-anchor=\"end\">+inf</text>\n",
	        LEFT, w - 10, a.inf_y, a.inf_y, LEFT - 4, a.inf_y + 4);
	fprintf(f,
	        "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
	        "text-anchor=\"middle\">SNR (dB)</text>\n",
	        TOP + PLOT_H / 2, TOP + PLOT_H / 2);
	/* the band: a quadrilateral per op between neighbours would hide gaps; one
	 * rectangle per op reads as well and shows ops without values as holes */
	char t1[32], t2[32], t3[32], lab[64];
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = local ? &op->local : &op->cumulative;
		double x = LEFT + 10 + (double)i * STEP + STEP / 2.0;
		op_label(lab, sizeof lab, op);
		fprintf(f,
		        "<text x=\"%.1f\" y=\"%d\" transform=\"rotate(-45 %.1f %d)\" "
		        "text-anchor=\"end\">",
		        x, TOP + PLOT_H + 14, x, TOP + PLOT_H + 14);
		op_label(lab, 25, op);
		esc(f, lab);
		fputs("</text>\n", f);
		if (!s->count)
			continue;
		double y95 = ypix(&a, s->p95), y5 = ypix(&a, s->p5);
		fprintf(f,
		        "<rect class=\"p5p95\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
		        "fill=\"#9ecae1\" fill-opacity=\"0.7\"><title>",
		        x - STEP * 0.35, y95, (int)(STEP * 0.7), y5 - y95 < 1 ? 1 : y5 - y95);
		op_label(lab, sizeof lab, op);
		esc(f, lab);
		snr_text(t1, sizeof t1, s->p5);
		snr_text(t2, sizeof t2, s->median);
		snr_text(t3, sizeof t3, s->p95);
		fprintf(f, ": p5 %s, median %s, p95 %s dB over %zu runs</title></rect>\n", t1, t2,
		        t3, s->count);
	}
	/* the median line, broken where an op has no value */
	bool open = false;
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = local ? &op->local : &op->cumulative;
		double x = LEFT + 10 + (double)i * STEP + STEP / 2.0;
		if (!s->count) {
			if (open)
				fputs("\"/>\n", f);
			open = false;
			continue;
		}
		fprintf(f,
		        open ? " %.1f,%.1f"
		             : "<polyline class=\"median\" fill=\"none\" "
		               "stroke=\"#08519c\" stroke-width=\"2\" points=\"%.1f,%.1f",
		        x, ypix(&a, s->median));
		open = true;
	}
	if (open)
		fputs("\"/>\n", f);
	/* the worst run of each op */
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = local ? &op->local : &op->cumulative;
		if (!s->count)
			continue;
		double x = LEFT + 10 + (double)i * STEP + STEP / 2.0;
		const etc_numgap_run_id *id = etc_numgap_dist_run(d, s->worst);
		fprintf(f,
		        "<path class=\"worst\" d=\"M%.1f %.1fl4 4l-4 4l-4 -4z\" fill=\"#d62728\" "
		        "transform=\"translate(0 -4)\"><title>worst: ",
		        x, ypix(&a, s->min));
		snr_text(t1, sizeof t1, s->min);
		fprintf(f, "%s dB in ", t1);
		esc(f, id->file);
		fputs(" block ", f);
		esc(f, id->block);
		fprintf(f, " run %u bundled input %d</title></path>\n", id->run,
		        id->bundled_input_index);
	}
	fprintf(f,
	        "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"8\" fill=\"#9ecae1\"/>"
	        "<text x=\"%d\" y=\"%d\">p5-p95</text>"
	        "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#08519c\" "
	        "stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">median</text>"
	        "<path d=\"M%d %dl4 4l-4 4l-4 -4z\" fill=\"#d62728\"/>"
	        "<text x=\"%d\" y=\"%d\">worst run</text>\n",
	        LEFT, 4, LEFT + 16, 12, LEFT + 70, LEFT + 84, 8, 8, LEFT + 88, 12, LEFT + 150, 2,
	        LEFT + 158, 12);
	fputs("</svg><figcaption>", f);
	esc(f, title);
	fputs("</figcaption></figure>\n", f);
	return 1;
}

void etc_band_chart_html_(FILE *f, const etc_numgap_dist *d)
{
	size_t nr = etc_numgap_dist_run_count(d), no = etc_numgap_dist_op_count(d);
	fprintf(f, "<h2 id=\"numgap-runs\">Numeric gap over %zu runs</h2>\n", nr);
	fputs("<p class=\"muted\">Per op, over the runs that compared it: the p5&ndash;p95 band "
	      "of its SNR, the median line and the worst run (hover for the run).</p>\n"
	      "<div style=\"overflow-x:auto\">\n",
	      f);
	chart(f, d, false, "Cumulative error: SNR of each op's output over the runs");
	chart(f, d, true, "Local error: SNR of each op re-run on the runtime's own inputs");
	fputs("</div>\n<table id=\"numgap-runs-table\"><thead><tr><th>#</th><th>op</th>"
	      "<th>runs</th><th>min</th><th>p5</th><th>median</th><th>p95</th>"
	      "<th>worst run</th><th>local median</th><th>run agreement (min dB)</th>"
	      "<th>outlier run</th></tr></thead><tbody>\n",
	      f);
	char t[32], lab[160];
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = &op->cumulative;
		op_label(lab, sizeof lab, op);
		fprintf(f, "<tr><td>%zu</td><td>", i);
		esc(f, lab);
		fprintf(f, "</td><td>%zu</td>", op->runs);
		const double v[] = {s->min, s->p5, s->median, s->p95};
		for (size_t k = 0; k < 4; k++) {
			snr_text(t, sizeof t, s->count ? v[k] : NAN);
			fprintf(f, "<td class=\"num\">%s</td>", t);
		}
		fputs("<td>", f);
		if (s->count) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, s->worst);
			esc(f, id->block);
			fprintf(f, " run %u (input %d)", id->run, id->bundled_input_index);
		} else {
			fputs("-", f);
		}
		snr_text(t, sizeof t, op->local.count ? op->local.median : NAN);
		fprintf(f, "</td><td class=\"num\">%s</td>", t);
		snr_text(t, sizeof t, op->has_agreement ? op->agreement_min_snr : NAN);
		fprintf(f, "<td class=\"num\">%s</td><td>", t);
		if (op->has_agreement) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, op->agreement_outlier);
			esc(f, id->block);
			fprintf(f, " run %u", id->run);
		} else {
			fputs("-", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}
