/*
 * perfdiff.c - the performance diff's table and its object in the --json
 * report (the diff itself is computed in analysis/perfdiff.c), read only
 * through the public accessors of perfdiff.h.
 */
#include "etcompare/perfdiff.h"
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *gate_word(const etc_perfdiff_row *r)
{
	return r->failed ? "FAIL" : r->gated ? "ok" : r->below_min ? "below min" : "-";
}

const char *etc_perfdiff_percent_text(const etc_perfdiff *d, const etc_perfdiff_row *r, char *buf,
                                      size_t cap)
{
	double v = r->change_percent;
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (isinf(v))
		snprintf(buf, cap, v > 0 ? "+inf" : "-inf");
	else
		for (int digits = 2; digits <= 6; digits++) {
			snprintf(buf, cap, "%+.*f", digits, v);
			if (!r->failed ||
			    strtod(buf, NULL) > etc_perfdiff_options_get(d)->max_regression)
				break;
		}
	return buf;
}

/* Block b of `in` as the tables name it: "Execute", or "Execute#2" when
 * another block of that ETDump has that name (as --block takes it). */
static const char *side_label(char *buf, size_t cap, const etc_inspector *in, size_t b)
{
	char name[512];
	etc_str s = etc_inspector_block(in, b)->name;
	etc_text_escape(name, sizeof name, s.ptr, s.len > 100 ? 100 : s.len);
	if (etc_inspector_block_name_shared(in, b))
		snprintf(buf, cap, "%s#%zu", name, b);
	else
		snprintf(buf, cap, "%s", name);
	return buf;
}

/* A row's block as the table names it; a fallback row adds the baseline
 * block it was compared with: "Execute#3 (baseline Execute#2)". */
static const char *block_label(char *buf, size_t cap, const etc_perfdiff *d,
                               const etc_perfdiff_row *r)
{
	side_label(buf, cap, etc_perfdiff_current(d), r->cur_block);
	if (r->fallback) {
		char base[560];
		size_t n = strlen(buf);
		/* cut, never overflowed: the label is a table cell */
		if (n < cap)
			snprintf(
			    buf + n, cap - n, " (baseline %.200s)",
			    side_label(base, sizeof base, etc_perfdiff_baseline(d), r->base_block));
	}
	return buf;
}

static size_t fallback_rows(const etc_perfdiff *d)
{
	size_t n = 0;
	for (size_t i = 0; i < etc_perfdiff_row_count(d); i++)
		n += etc_perfdiff_row_at(d, i)->fallback;
	return n;
}

/* " (input 2)" for a block with a bundled_input_index, else "". */
static const char *input_note(char *buf, size_t cap, const etc_inspector *in, size_t b)
{
	int32_t input = etc_inspector_block(in, b)->bundled_input_index;
	if (input >= 0)
		snprintf(buf, cap, " (input %d)", (int)input);
	else
		snprintf(buf, cap, "%s", "");
	return buf;
}

enum { UNMATCHED_NAMES = 6 };

/* One line per block with unmatched events: whose, why, and their names
 * (the first few; Method::execute with its p50). */
static void unmatched_lines(FILE *f, const etc_perfdiff *d, const char *unit)
{
	size_t n = etc_perfdiff_unmatched_count(d);
	for (size_t i = 0, j; i < n; i = j) {
		const etc_perfdiff_unmatched *u = etc_perfdiff_unmatched_at(d, i);
		for (j = i + 1; j < n; j++) {
			const etc_perfdiff_unmatched *v = etc_perfdiff_unmatched_at(d, j);
			if (v->in_baseline != u->in_baseline || v->block != u->block)
				break;
		}
		const etc_inspector *in =
		    u->in_baseline ? etc_perfdiff_baseline(d) : etc_perfdiff_current(d);
		const char *mine = u->in_baseline ? "the baseline" : "the current ETDump";
		const char *other = u->in_baseline ? "the current ETDump" : "the baseline";
		char blk[560], inp[40];
		side_label(blk, sizeof blk, in, u->block);
		input_note(inp, sizeof inp, in, u->block);
		if (u->whole_block)
			fprintf(f,
			        "not compared: block %s%s of %s has no counterpart in %s: its %zu "
			        "event%s: ",
			        blk, inp, mine, other, j - i, j - i == 1 ? "" : "s");
		else
			fprintf(f,
			        "not compared: %zu event%s of %s's block %s%s, not in %s: ", j - i,
			        j - i == 1 ? "" : "s", mine, blk, inp, other);
		/* Method::execute first, with its p50: the block's whole time */
		size_t shown = 0;
		for (int pass = 0; pass < 2; pass++)
			for (size_t k = i; k < j && shown < UNMATCHED_NAMES; k++) {
				const etc_perfdiff_unmatched *v = etc_perfdiff_unmatched_at(d, k);
				if (v->is_execute != (pass == 0))
					continue;
				char name[256], p50[ETC_FMT_NUM];
				etc_text_escape(name, sizeof name, v->name.ptr,
				                v->name.len > 120 ? 120 : v->name.len);
				fprintf(f, "%s%s", shown++ ? ", " : "", name);
				if (v->is_execute) {
					etc_fmt_g(p50, v->p50);
					fprintf(f, " (p50 %s %s)", p50, unit);
				}
			}
		if (j - i > shown)
			fprintf(f, " and %zu more", j - i - shown);
		fputc('\n', f);
	}
}

/* The unit of the rows that are not in the target unit (a backend's
 * cycles), or NULL when every row is in the target unit. */
static const char *other_unit(const etc_perfdiff *d, int target)
{
	for (size_t i = 0; i < etc_perfdiff_row_count(d); i++)
		if (etc_perfdiff_row_at(d, i)->unit != target)
			return etc_time_scale_name(etc_perfdiff_row_at(d, i)->unit);
	return NULL;
}

int etc_report_perfdiff(FILE *f, const etc_perfdiff *d, size_t max_rows, etc_error *err)
{
	int target = etc_inspector_options_get(etc_perfdiff_current(d))->target_time_scale;
	const char *unit = etc_time_scale_name(target);
	/* rows in another unit than the target's: a unit column, per row */
	bool mixed = other_unit(d, target) != NULL;
	int ncol = mixed ? 10 : 9;
	char hdr[10][64];
	const char *hp[10];
	static const bool right[9] = {false, false, true, true, true, true, true, true, false};
	static const bool right_mixed[10] = {false, false, true, true, true,
	                                     true,  false, true, true, false};
	snprintf(hdr[0], sizeof hdr[0], "block");
	snprintf(hdr[1], sizeof hdr[1], "event");
	snprintf(hdr[2], sizeof hdr[2], "instr");
	if (mixed) {
		snprintf(hdr[3], sizeof hdr[3], "baseline p50");
		snprintf(hdr[4], sizeof hdr[4], "current p50");
		snprintf(hdr[5], sizeof hdr[5], "change");
		snprintf(hdr[6], sizeof hdr[6], "unit");
	} else {
		snprintf(hdr[3], sizeof hdr[3], "baseline p50 (%s)", unit);
		snprintf(hdr[4], sizeof hdr[4], "current p50 (%s)", unit);
		snprintf(hdr[5], sizeof hdr[5], "change (%s)", unit);
	}
	snprintf(hdr[ncol - 3], sizeof hdr[0], "ratio");
	snprintf(hdr[ncol - 2], sizeof hdr[0], "change %%");
	snprintf(hdr[ncol - 1], sizeof hdr[0], "gate");
	for (int i = 0; i < ncol; i++)
		hp[i] = hdr[i];
	etc_grid g;
	etc_grid_init_(&g, (size_t)ncol, hp, mixed ? right_mixed : right);
	size_t n =
	    max_rows && max_rows < etc_perfdiff_row_count(d) ? max_rows : etc_perfdiff_row_count(d);
	for (size_t i = 0; i < n; i++) {
		const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
		char pct[32], blk[560];
		etc_grid_text_(&g, block_label(blk, sizeof blk, d, r));
		etc_grid_textf_(&g, "%.*s", (int)(r->name.len > 200 ? 200 : r->name.len),
		                r->name.ptr);
		etc_grid_textf_(&g, "%d", r->instruction_id);
		etc_grid_num_(&g, r->base_p50);
		etc_grid_num_(&g, r->cur_p50);
		etc_grid_num_(&g, r->change);
		if (mixed)
			etc_grid_text_(&g, etc_time_scale_name(r->unit));
		etc_grid_num_(&g, r->ratio);
		etc_perfdiff_percent_text(d, r, pct, sizeof pct);
		etc_grid_text_(&g, pct);
		etc_grid_text_(&g, gate_word(r));
	}
	int rc = n ? etc_grid_write_(&g, f) : 0;
	etc_grid_free_(&g);
	if (rc == ETC_ERR_NOMEM)
		return etc_fail(err, rc, NULL, -1, "out of memory");
	if (n < etc_perfdiff_row_count(d))
		fprintf(f, "(%zu more events not shown)\n", etc_perfdiff_row_count(d) - n);
	for (size_t i = 0; i < etc_perfdiff_row_count(d); i++) {
		const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
		if (!r->is_execute)
			continue;
		char a[ETC_FMT_NUM], b[ETC_FMT_NUM], pct[32];
		etc_fmt_g(a, r->base_p50);
		etc_fmt_g(b, r->cur_p50);
		etc_perfdiff_percent_text(d, r, pct, sizeof pct);
		char blk[560], base[560] = "";
		side_label(blk, sizeof blk, etc_perfdiff_current(d), r->cur_block);
		if (r->fallback) {
			char bl[520];
			snprintf(
			    base, sizeof base, ", against the baseline's %s",
			    side_label(bl, sizeof bl, etc_perfdiff_baseline(d), r->base_block));
		}
		fprintf(f, "Method::execute (block %s%s): p50 %s -> %s %s (%s%%)%s\n", blk, base, a,
		        b, unit, pct, r->failed ? ": regression beyond the gate" : "");
	}
	unmatched_lines(f, d, unit);
	fprintf(f, "%zu events matched", etc_perfdiff_row_count(d));
	if (fallback_rows(d))
		fprintf(f, " (%zu against a fallback baseline block)", fallback_rows(d));
	fprintf(f, ", %zu only in the baseline, %zu only in the current ETDump",
	        etc_perfdiff_baseline_only(d), etc_perfdiff_current_only(d));
	if (!isnan(etc_perfdiff_options_get(d)->max_regression)) {
		char mx[ETC_FMT_NUM], mn[ETC_FMT_NUM];
		etc_fmt_g(mx, etc_perfdiff_options_get(d)->max_regression);
		etc_fmt_g(mn, etc_perfdiff_options_get(d)->min_event_time);
		fprintf(f,
		        "; gate: %zu event%s regress%s more than %s%% (Method::execute and events "
		        "from %s %s",
		        etc_perfdiff_failures(d), etc_perfdiff_failures(d) == 1 ? "" : "s",
		        etc_perfdiff_failures(d) == 1 ? "es" : "", mx, mn, unit);
		if (mixed)
			fprintf(f, "; events in %s whatever their time", other_unit(d, target));
		fputc(')', f);
	}
	fputc('\n', f);
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the performance diff");
	return 0;
}

void etc_perfdiff_json_(etc_sbuf *b, const etc_perfdiff *d)
{
	const char *unit = etc_time_scale_name(
	    etc_inspector_options_get(etc_perfdiff_current(d))->target_time_scale);
	const char *bn = etc_etdump_name(etc_inspector_etdump(etc_perfdiff_baseline(d)));
	etc_sbuf_puts(b, "{\"baseline\": ");
	etc_sbuf_json_str(b, bn, strlen(bn));
	etc_sbuf_puts(b, ", \"unit\": ");
	etc_sbuf_json_str(b, unit, strlen(unit));
	etc_sbuf_puts(b, ", \"max_regression\": ");
	if (isnan(etc_perfdiff_options_get(d)->max_regression))
		etc_sbuf_puts(b, "null");
	else
		etc_json_num_(b, etc_perfdiff_options_get(d)->max_regression);
	etc_sbuf_puts(b, ", \"min_event_time\": ");
	etc_json_num_(b, etc_perfdiff_options_get(d)->min_event_time);
	etc_sbuf_printf(b,
	                ", \"matched\": %zu, \"baseline_only\": %zu, \"current_only\": %zu, "
	                "\"failures\": %zu,\n    \"rows\": [",
	                etc_perfdiff_row_count(d), etc_perfdiff_baseline_only(d),
	                etc_perfdiff_current_only(d), etc_perfdiff_failures(d));
	for (size_t i = 0; i < etc_perfdiff_row_count(d); i++) {
		const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
		etc_sbuf_puts(b, i ? ",\n      {\"block\": " : "\n      {\"block\": ");
		etc_sbuf_json_str(b, r->block.ptr, r->block.len);
		etc_sbuf_printf(b, ", \"block_index\": %zu, \"event_name\": ", r->cur_block);
		etc_sbuf_json_str(b, r->name.ptr, r->name.len);
		etc_sbuf_printf(b,
		                ", \"instruction_id\": %d, \"baseline_p50\": ", r->instruction_id);
		etc_json_num_(b, r->base_p50);
		etc_sbuf_puts(b, ", \"current_p50\": ");
		etc_json_num_(b, r->cur_p50);
		etc_sbuf_puts(b, ", \"change\": ");
		etc_json_num_(b, r->change);
		etc_sbuf_puts(b, ", \"ratio\": ");
		etc_json_num_(b, r->ratio);
		etc_sbuf_puts(b, ", \"change_percent\": ");
		etc_json_num_(b, r->change_percent);
		etc_sbuf_printf(b, ", \"unit\": \"%s\"", etc_time_scale_name(r->unit));
		etc_sbuf_printf(b,
		                ", \"is_execute\": %s, \"below_min\": %s, \"gated\": %s, "
		                "\"failed\": %s",
		                r->is_execute ? "true" : "false", r->below_min ? "true" : "false",
		                r->gated ? "true" : "false", r->failed ? "true" : "false");
		etc_sbuf_printf(b, ", \"fallback\": %s, \"baseline_block_index\": %zu}",
		                r->fallback ? "true" : "false", r->base_block);
	}
	etc_sbuf_puts(b, "],\n    \"unmatched\": [");
	for (size_t i = 0; i < etc_perfdiff_unmatched_count(d); i++) {
		const etc_perfdiff_unmatched *u = etc_perfdiff_unmatched_at(d, i);
		const etc_inspector *in =
		    u->in_baseline ? etc_perfdiff_baseline(d) : etc_perfdiff_current(d);
		etc_sbuf_printf(b, "%s{\"side\": \"%s\", \"block\": ", i ? ",\n      " : "\n      ",
		                u->in_baseline ? "baseline" : "current");
		etc_sbuf_json_str(b, u->block_name.ptr, u->block_name.len);
		etc_sbuf_printf(b,
		                ", \"block_index\": %zu, \"bundled_input_index\": %d, "
		                "\"event_index\": %zu, \"event_name\": ",
		                u->block,
		                (int)etc_inspector_block(in, u->block)->bundled_input_index,
		                u->event);
		etc_sbuf_json_str(b, u->name.ptr, u->name.len);
		etc_sbuf_printf(b, ", \"instruction_id\": %d, \"p50\": ", u->instruction_id);
		etc_json_num_(b, u->p50);
		etc_sbuf_printf(b, ", \"unit\": \"%s\"", etc_time_scale_name(u->unit));
		etc_sbuf_printf(b, ", \"is_execute\": %s, \"whole_block\": %s, \"below_min\": %s}",
		                u->is_execute ? "true" : "false", u->whole_block ? "true" : "false",
		                u->below_min ? "true" : "false");
	}
	etc_sbuf_puts(b, "]}");
}

#define PERFDIFF_PLOT_MAX 40

int etc_report_perfdiff_plot(const etc_plot_options *o, const etc_perfdiff *d, etc_plot_result *res,
                             etc_error *err)
{
	size_t n = etc_perfdiff_row_count(d), k = 0;
	const char **labels = calloc(n ? n : 1, sizeof *labels);
	char(*names)[200] = calloc(n ? n : 1, sizeof *names);
	double *v = calloc(n ? n : 1, sizeof *v);
	bool *failing = calloc(n ? n : 1, sizeof *failing);
	int rc = 0;
	if (!labels || !names || !v || !failing) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	/* rows come largest regression first: the top ones, not those below min */
	for (size_t i = 0; i < n && k < PERFDIFF_PLOT_MAX; i++) {
		const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
		if (r->below_min || isnan(r->change_percent))
			continue;
		char blk[560] = "";
		if (etc_inspector_block_name_shared(etc_perfdiff_current(d), r->cur_block))
			block_label(blk, sizeof blk, d, r);
		snprintf(names[k], sizeof names[k], "%.*s%s%.40s%s",
		         (int)(r->name.len > 140 ? 140 : r->name.len), r->name.ptr,
		         *blk ? " (" : "", blk, *blk ? ")" : "");
		labels[k] = names[k];
		v[k] = r->change_percent;
		failing[k] = r->failed;
		k++;
	}
	if (!k)
		goto done;
	double gate = etc_perfdiff_options_get(d)->max_regression;
	char thr[96] = "";
	if (!isnan(gate))
		snprintf(thr, sizeof thr, "max regression +%.6g %%", gate);
	etc_plot_style st = {gate, thr, failing, false, NULL, false, 0};
	etc_plot_options po = *o;
	po.style = &st;
	char title[160];
	snprintf(title, sizeof title,
	         "performance diff: p50 change per event against the baseline (%zu of %zu events)",
	         k, n);
	rc = etc_plot_bars(&po, "perf_diff", title, "p50 change (%)", k, labels, v, res, err);
done:
	free(labels);
	free(names);
	free(v);
	free(failing);
	return rc;
}
