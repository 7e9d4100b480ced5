/*
 * report/taps.c - the per-op table and JSON of intermediate-output taps
 * (etcompare/taps.h).
 */
#include "etcompare/taps.h"

#include "etcompare/text.h"

#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { TCOLS = 10, TCELL = 112 };

/* The field of a STATS row furthest from its reference. */
static const etc_tap_field *worst_field(const etc_tap_row *r)
{
	const etc_tap_field *w = NULL;
	for (size_t k = 0; k < r->field_count; k++)
		if (!w || r->fields[k].rel_diff > w->rel_diff)
			w = &r->fields[k];
	return w;
}

/* Row i is its run's first: the rows follow the accuracy rows' block, run,
 * output order (etc_taps_run), so the rows of one run are adjacent. */
static bool opens_run(const etc_taps *t, size_t i)
{
	if (i == 0)
		return true;
	const etc_tap_row *p = etc_taps_row_at(t, i - 1), *r = etc_taps_row_at(t, i);
	return p->block != r->block || p->run != r->run;
}

int etc_report_taps(FILE *f, const etc_taps *t, const etc_inspector *insp, etc_error *err)
{
	if (!f || !t || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_taps: NULL %s",
		                !f   ? "out"
		                : !t ? "t"
		                     : "insp");
	const etc_tap_specs *specs = etc_taps_specs(t);
	size_t n = etc_taps_row_count(t);
	static const char *const hdr[TCOLS] = {"block",       "run",     "output",   "op",
	                                       "target",      "reducer", "SNR (dB)", "MSE",
	                                       "worst field", "verdict"};
	static const bool right[TCOLS] = {false, true, true, false, false,
	                                  false, true, true, false, false};
	char(*cells)[TCOLS][TCELL] = calloc(n ? n : 1, sizeof *cells);
	const char **ptrs = malloc((n ? n : 1) * TCOLS * sizeof *ptrs);
	if (!cells || !ptrs) {
		free(cells);
		free(ptrs);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		const etc_tap_spec *s = etc_tap_specs_at(specs, r->spec);
		const etc_event_block *b = etc_inspector_block(insp, r->block);
		char(*c)[TCELL] = cells[i];
		snprintf(c[0], TCELL, "%.*s", (int)b->name.len, b->name.ptr);
		snprintf(c[1], TCELL, "%u", r->run);
		snprintf(c[2], TCELL, "%lld", (long long)s->output_index);
		etc_text_safe(c[3], TCELL, s->node_name);
		etc_text_safe(c[4], TCELL, s->op_target);
		etc_text_safe(c[5], TCELL, s->reducer_name);
		if (r->has_metrics) {
			etc_fmt_metric_(c[6], TCELL, r->metrics.snr_db);
			etc_fmt_metric_(c[7], TCELL, r->metrics.mse);
		} else {
			snprintf(c[6], TCELL, "-");
			snprintf(c[7], TCELL, "-");
		}
		const etc_tap_field *w = r->stats ? worst_field(r) : NULL;
		if (w)
			snprintf(c[8], TCELL, "%s rel %.3g", etc_tap_field_name(w->field),
			         w->rel_diff);
		else
			snprintf(c[8], TCELL, "-");
		if (r->pass)
			snprintf(c[9], TCELL, "pass%s",
			         r->reference_reduced ? " (reference reduced)" : "");
		else
			etc_text_safe(c[9], TCELL, r->reason);
		for (size_t k = 0; k < TCOLS; k++)
			ptrs[i * TCOLS + k] = c[k];
	}
	int rc = etc_grid_print_(f, TCOLS, hdr, right, n, ptrs);
	free(ptrs);
	free(cells);
	if (rc < 0)
		return etc_fail(err, rc, NULL, -1, "out of memory");
	/* where the error enters, once per run */
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		if (!opens_run(t, i))
			continue;
		long d = etc_taps_first_divergence(t, r->block, r->run);
		if (d < 0)
			continue;
		const etc_tap_spec *s =
		    etc_tap_specs_at(specs, etc_taps_row_at(t, (size_t)d)->spec);
		char name[256], target[256], why[256];
		fprintf(f, "first divergence (block %u run %u): %s (%s): %s\n", r->block, r->run,
		        etc_text_safe(name, sizeof name, s->node_name),
		        etc_text_safe(target, sizeof target, s->op_target),
		        etc_text_safe(why, sizeof why, etc_taps_row_at(t, (size_t)d)->reason));
		if (s->stack_trace) {
			char trace[1024];
			fprintf(f, "  %s\n", etc_text_safe(trace, sizeof trace, s->stack_trace));
		}
	}
	fprintf(f, "taps: %zu of %zu pass\n", n - etc_taps_failures(t), n);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the tap table");
	return 0;
}

static void json_str_or_null(etc_sbuf *b, const char *s)
{
	if (s)
		etc_sbuf_json_str(b, s, strlen(s));
	else
		etc_sbuf_puts(b, "null");
}

void etc_taps_json_(etc_sbuf *bp, const etc_taps *t)
{
	const etc_tap_specs *specs = etc_taps_specs(t);
	etc_sbuf b = *bp;
	etc_sbuf_puts(&b, "{\"taps\": [");
	for (size_t i = 0; i < etc_tap_specs_count(specs); i++) {
		const etc_tap_spec *s = etc_tap_specs_at(specs, i);
		etc_sbuf_puts(&b, i ? ",\n  {\"node_name\": " : "\n  {\"node_name\": ");
		json_str_or_null(&b, s->node_name);
		etc_sbuf_puts(&b, ", \"op_target\": ");
		json_str_or_null(&b, s->op_target);
		etc_sbuf_printf(
		    &b, ", \"output_index\": %lld, \"reducer_name\": ", (long long)s->output_index);
		json_str_or_null(&b, s->reducer_name);
		etc_sbuf_puts(&b, ", \"fields\": [");
		for (size_t k = 0; k < s->field_count; k++) {
			if (k)
				etc_sbuf_puts(&b, ", ");
			json_str_or_null(&b, s->fields[k]);
		}
		etc_sbuf_puts(&b, "], \"stack_trace\": ");
		json_str_or_null(&b, s->stack_trace);
		etc_sbuf_puts(&b, ", \"module_path\": ");
		json_str_or_null(&b, s->module_path);
		etc_sbuf_puts(&b, ", \"module_class\": ");
		json_str_or_null(&b, s->module_class);
		etc_sbuf_puts(&b, "}");
	}
	etc_sbuf_puts(&b, "],\n \"rows\": [");
	size_t n = etc_taps_row_count(t);
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		const etc_tap_spec *s = etc_tap_specs_at(specs, r->spec);
		etc_sbuf_printf(&b, "%s{\"block\": %u, \"run\": %u, \"spec\": %zu, \"node_name\": ",
		                i ? ",\n  " : "\n  ", r->block, r->run, r->spec);
		json_str_or_null(&b, s->node_name);
		etc_sbuf_puts(&b, ", \"op_target\": ");
		json_str_or_null(&b, s->op_target);
		etc_sbuf_printf(
		    &b, ", \"output_index\": %lld, \"reducer_name\": ", (long long)s->output_index);
		json_str_or_null(&b, s->reducer_name);
		etc_sbuf_printf(&b,
		                ", \"kind\": \"%s\", \"pass\": %s, \"nonfinite\": %s, "
		                "\"reference_reduced\": %s, \"reason\": ",
		                r->stats ? "STATS" : "FULL_TENSOR", r->pass ? "true" : "false",
		                r->nonfinite ? "true" : "false",
		                r->reference_reduced ? "true" : "false");
		etc_sbuf_json_str(&b, r->reason, strlen(r->reason));
		if (r->has_metrics) {
			etc_sbuf_puts(&b, ", \"metrics\": ");
			etc_metrics_json_(&b, &r->metrics);
		}
		if (r->stats) {
			etc_sbuf_puts(&b, ", \"fields\": [");
			for (size_t k = 0; k < r->field_count; k++) {
				const etc_tap_field *fl = &r->fields[k];
				etc_sbuf_printf(&b,
				                "%s{\"name\": \"%s\", \"actual\": ", k ? ", " : "",
				                etc_tap_field_name(fl->field));
				etc_json_num_(&b, fl->actual);
				etc_sbuf_puts(&b, ", \"reference\": ");
				etc_json_num_(&b, fl->reference);
				etc_sbuf_puts(&b, ", \"rel_diff\": ");
				etc_json_num_(&b, fl->rel_diff);
				etc_sbuf_printf(&b, ", \"fail\": %s}", fl->fail ? "true" : "false");
			}
			etc_sbuf_puts(&b, "]");
		}
		etc_sbuf_puts(&b, "}");
	}
	etc_sbuf_puts(&b, "],\n \"first_divergence\": [");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		if (!opens_run(t, i))
			continue;
		long d = etc_taps_first_divergence(t, r->block, r->run);
		if (d < 0)
			continue;
		const etc_tap_spec *s =
		    etc_tap_specs_at(specs, etc_taps_row_at(t, (size_t)d)->spec);
		etc_sbuf_printf(&b, "%s{\"block\": %u, \"run\": %u, \"row\": %ld, \"node_name\": ",
		                first ? "" : ", ", r->block, r->run, d);
		json_str_or_null(&b, s->node_name);
		etc_sbuf_puts(&b, "}");
		first = false;
	}
	etc_sbuf_printf(&b, "],\n \"failures\": %zu}", etc_taps_failures(t));
	*bp = b;
}

int etc_report_taps_json(FILE *f, const etc_taps *t, const etc_inspector *insp, etc_error *err)
{
	(void)insp;
	etc_sbuf b = {0};
	etc_taps_json_(&b, t);
	etc_sbuf_puts(&b, "\n");
	return etc_sbuf_write_(f, &b, "tap JSON", err);
}

/* --- HTML ----------------------------------------------------------------------------- */

static void esc(FILE *f, const char *s)
{
	etc_html_escape_n_(f, s ? s : "", s ? strlen(s) : 0);
}

static void html_row(FILE *f, const etc_taps *t, const etc_inspector *insp, size_t i)
{
	const etc_tap_row *r = etc_taps_row_at(t, i);
	const etc_tap_spec *s = etc_tap_specs_at(etc_taps_specs(t), r->spec);
	const etc_event_block *b = etc_inspector_block(insp, r->block);
	char name[256], num[64];
	etc_text_escape(name, sizeof name, b->name.ptr, b->name.len);
	fprintf(f, "<tr class=\"%s\"><td>", r->pass ? "pass" : "fail");
	esc(f, name);
	fprintf(f, "</td><td class=\"num\">%u</td><td class=\"num\">%lld</td><td>", r->run,
	        (long long)s->output_index);
	esc(f, s->node_name);
	fputs("</td><td>", f);
	esc(f, s->op_target);
	fputs("</td><td>", f);
	esc(f, s->reducer_name ? s->reducer_name : (r->stats ? "STATS" : "FULL_TENSOR"));
	fputs("</td>", f);
	if (r->has_metrics) {
		etc_fmt_metric_(num, sizeof num, r->metrics.snr_db);
		fprintf(f, "<td class=\"num\">%s</td>", num);
		etc_fmt_metric_(num, sizeof num, r->metrics.mse);
		fprintf(f, "<td class=\"num\">%s</td>", num);
	} else {
		fputs("<td class=\"num\">-</td><td class=\"num\">-</td>", f);
	}
	fputs("<td>", f);
	for (size_t k = 0; k < r->field_count; k++) {
		const etc_tap_field *fl = &r->fields[k];
		char a[32], ref[32];
		etc_fmt_metric_(a, sizeof a, fl->actual);
		etc_fmt_metric_(ref, sizeof ref, fl->reference);
		etc_fmt_metric_(num, sizeof num, fl->rel_diff);
		fprintf(f, "%s%s%s %s / %s (rel %s)%s", k ? "<br>" : "", fl->fail ? "<b>" : "",
		        etc_tap_field_name(fl->field), a, ref, num, fl->fail ? "</b>" : "");
	}
	if (!r->field_count)
		fputs("-", f);
	fputs("</td><td>", f);
	if (r->pass)
		fputs(r->reference_reduced ? "pass (reference reduced)" : "pass", f);
	else
		esc(f, r->reason);
	fputs("</td></tr>\n", f);
}

void etc_taps_html_(FILE *f, const etc_taps *t, const etc_inspector *insp)
{
	size_t n = etc_taps_row_count(t), nf = etc_taps_failures(t);
	fprintf(f,
	        "<h2 id=\"taps\">Taps</h2>\n<p>%zu of %zu taps pass (per op: FULL_TENSOR taps "
	        "compared like intermediate outputs, STATS taps field by field: actual / "
	        "reference).</p>\n",
	        n - nf, n);
	const etc_tap_specs *specs = etc_taps_specs(t);
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		if (!opens_run(t, i))
			continue;
		long d = etc_taps_first_divergence(t, r->block, r->run);
		if (d < 0)
			continue;
		const etc_tap_row *dr = etc_taps_row_at(t, (size_t)d);
		const etc_tap_spec *s = etc_tap_specs_at(specs, dr->spec);
		fprintf(f, "<p class=\"first\">First divergence (block %u run %u): <b>", r->block,
		        r->run);
		esc(f, s->node_name);
		fputs("</b> (", f);
		esc(f, s->op_target);
		fputs("): ", f);
		esc(f, dr->reason);
		fputs("</p>\n", f);
		if (s->stack_trace) {
			fputs("<details><summary>stack trace</summary><pre>", f);
			esc(f, s->stack_trace);
			fputs("</pre></details>\n", f);
		}
	}
	fputs("<table id=\"taps-table\"><thead><tr><th>block</th><th>run</th><th>output</th>"
	      "<th>op</th><th>target</th><th>reducer</th><th>SNR (dB)</th><th>MSE</th>"
	      "<th>fields</th><th>verdict</th></tr></thead><tbody>\n",
	      f);
	/* failing rows first, each group in run and output order */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++)
			if (etc_taps_row_at(t, i)->pass == (pass == 1))
				html_row(f, t, insp, i);
	fputs("</tbody></table>\n", f);
}
