/*
 * report_numgap.c - the numeric gap for people and tools: the grid with the
 * first divergence marked and repeated with its stack trace, the unmatched
 * items, the TSV with upstream calculate_numeric_gap's columns, the JSON
 * section of --json and the plots along execution order.
 */
#include "etcompare/report.h"
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Python's tuple repr of a debug handle list: "(12,)", "(3, 4, 5)". */
static void handles_tuple(etc_sbuf *b, const int64_t *h, size_t n)
{
	etc_sbuf_puts(b, "(");
	for (size_t i = 0; i < n; i++)
		etc_sbuf_printf(b, i ? ", %lld" : "%lld", (long long)h[i]);
	etc_sbuf_puts(b, n == 1 ? ",)" : ")");
}

/* At most `cap` bytes of `s`, cut at a character boundary, "..." when cut. */
static void clip(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n < cap) {
		memcpy(dst, s, n + 1);
		return;
	}
	size_t k = cap - 4;
	while (k && ((unsigned char)s[k] & 0xC0) == 0x80)
		k--;
	memcpy(dst, s, k);
	memcpy(dst + k, "...", 4);
}

#define NCOL 15
#define CELL 128

void etc_fmt_snr_drop_(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (isinf(v))
		snprintf(buf, cap, "%sinf", v > 0 ? "+" : "-");
	else
		etc_fmt_metric_(buf, cap, v);
}

/* The heading of "where the error enters": local errors, else added noise. */
const char *etc_numgap_enters_rule_(const etc_numgap *ng)
{
	for (size_t i = 0; i < etc_numgap_row_count(ng); i++)
		if (etc_numgap_row_at(ng, i)->has_local)
			return "failing ops first, lowest local SNR first: each op re-run in the "
			       "reference dtype on the runtime's own inputs";
	return "failing ops first, most added noise first: the op's error-to-signal ratio "
	       "minus its inputs' largest";
}

/* One ranked row's figures: "local SNR 18.3 dB, cumulative 18.3 dB" or
 * "adds noise 0.015 of the signal, SNR drop 123 dB to 18.3 dB". */
void etc_numgap_enters_figures_(char *buf, size_t cap, const etc_numgap_row *r)
{
	char a[40], c[40], d[40];
	etc_fmt_snr_drop_(c, sizeof c, r->cumulative_snr);
	if (r->has_local) {
		etc_fmt_snr_drop_(a, sizeof a, r->local_snr);
		snprintf(buf, cap, "local SNR %s dB, cumulative %s dB%s%s%s", a, c,
		         *r->local_note ? " (" : "", r->local_note, *r->local_note ? ")" : "");
		return;
	}
	etc_fmt_metric_(a, sizeof a, r->noise_added);
	etc_fmt_snr_drop_(d, sizeof d, r->snr_drop);
	snprintf(buf, cap, "adds noise %s of the signal power, SNR drop %s dB to %s dB", a, d, c);
}

/* The top rows: "where the error enters". */
static void print_drops(FILE *f, const etc_numgap *ng)
{
	size_t n = etc_numgap_row_count(ng), top[ETC_REPORT_DROPS];
	size_t nt = etc_numgap_top_drops(ng, ETC_REPORT_DROPS, top);
	bool any = false;
	for (size_t i = 0; i < n && !any; i++)
		any = !isnan(etc_numgap_row_at(ng, i)->snr_drop) ||
		      etc_numgap_row_at(ng, i)->has_local;
	if (!any)
		return;
	fprintf(f, "\nWhere the error enters (%s):\n", etc_numgap_enters_rule_(ng));
	if (!nt)
		fprintf(f, "  no op adds error of its own\n");
	for (size_t k = 0; k < nt; k++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, top[k]);
		char fig[400];
		etc_numgap_enters_figures_(fig, sizeof fig, r);
		char s1[512], s2[512], s3[512], s4[512];
		fprintf(f, "  %zu. row %zu %s (%s): %s%s%s%s\n", k + 1, top[k],
		        etc_text_safe(s1, sizeof s1, *r->nodes ? r->nodes : r->event_name),
		        etc_text_safe(s2, sizeof s2, *r->ops ? r->ops : r->event_name),
		        etc_text_safe(s4, sizeof s4, fig),
		        r->status != ETC_ROW_PASS ? ", FAIL" : "", *r->source_line ? " at " : "",
		        etc_text_safe(s3, sizeof s3, r->source_line));
	}
}

int etc_report_numgap(FILE *f, const etc_numgap *ng, etc_error *err)
{
	/* the last column, the local SNR, only when a reference graph gave it */
	static const char *const hdr[NCOL] = {
	    "#",     "node",   "runtime ops", "runtime handles", "reference ops",
	    "shape", "dtype",  "SNR (dB)",    "local SNR",       "SNR drop",
	    "MSE",   "cosine", "max abs",     "source",          "verdict"};
	static const bool right[NCOL] = {true, false, false, false, false, false, false, true,
	                                 true, true,  true,  true,  true,  false, false};
	size_t n = etc_numgap_row_count(ng);
	bool local = false;
	for (size_t i = 0; i < n && !local; i++)
		local = etc_numgap_row_at(ng, i)->has_local;
	const char *hd[NCOL];
	bool rt[NCOL];
	int nc = 0;
	for (int k = 0; k < NCOL; k++)
		if (k != 8 || local)
			hd[nc] = hdr[k], rt[nc++] = right[k];
	long first = etc_numgap_first_divergence(ng);
	bool gated = etc_numgap_gated(ng);
	char(*cells)[NCOL][CELL] = calloc(n ? n : 1, sizeof *cells);
	const char **ptrs = calloc((n ? n : 1) * NCOL, sizeof *ptrs);
	etc_sbuf b = {0};
	int rc = 0;
	if (!cells || !ptrs) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		char(*c)[CELL] = cells[i];
		snprintf(c[0], CELL, "%zu", i);
		clip(c[1], 32, *r->nodes ? r->nodes : "-");
		if (*r->ops)
			clip(c[2], 48, r->ops);
		else /* no ETRecord and a debug-only ETDump: no names at all */
			snprintf(c[2], CELL, "instruction %d", r->instruction_id);
		etc_sbuf_reset(&b);
		handles_tuple(&b, r->handles, r->handle_count);
		clip(c[3], 40, b.p ? b.p : "");
		clip(c[4], 48, r->reference_ops);
		/* the reference's shape and dtype only where they differ */
		if (strcmp(r->shape, r->reference_shape))
			snprintf(c[5], CELL, "%.40s vs %.40s", r->shape, r->reference_shape);
		else
			snprintf(c[5], CELL, "%s", r->shape);
		if (strcmp(r->dtype, r->reference_dtype))
			snprintf(c[6], CELL, "%s vs %s", r->dtype, r->reference_dtype);
		else
			snprintf(c[6], CELL, "%s", r->dtype);
		if (r->has_metrics) {
			etc_fmt_metric_(c[7], CELL, r->metrics.snr_db);
			etc_fmt_snr_drop_(c[9], CELL, r->snr_drop);
			etc_fmt_metric_(c[10], CELL, r->metrics.mse);
			etc_fmt_metric_(c[11], CELL, r->metrics.cosine);
			etc_fmt_metric_(c[12], CELL, r->metrics.max_abs);
		} else {
			for (int k = 7; k < 13; k++)
				snprintf(c[k], CELL, "-");
		}
		if (r->has_local)
			etc_fmt_snr_drop_(c[8], CELL, r->local_snr);
		else
			snprintf(c[8], CELL, "-");
		clip(c[13], 56, r->source_line);
		/* how the runtime values were read, when not as they are */
		char how[40] = "";
		if (*r->layout || r->quant_source)
			snprintf(how, sizeof how, " [%.12s%s%s%s]", r->layout,
			         *r->layout && r->quant_source ? ", " : "",
			         r->quant_source ? "deq. " : "",
			         etc_numgap_quant_source_name(r->quant_source));
		if (r->status == ETC_ROW_PASS)
			snprintf(c[14], CELL, "%s%s%s", gated ? "pass" : "no gate",
			         r->has_metrics && r->metrics.identical ? " (identical)" : "", how);
		else
			snprintf(c[14], CELL, "%s%.16s: %.52s%s",
			         (long)i == first ? "FIRST DIVERGENCE " : "",
			         etc_row_status_str(r->status), r->reason, how);
		for (int k = 0, j = 0; k < NCOL; k++)
			if (k != 8 || local)
				ptrs[i * (size_t)nc + (size_t)j++] = c[k];
	}
	if ((rc = etc_grid_print_(f, (size_t)nc, hd, rt, n, ptrs)) < 0) {
		rc = etc_fail(err, rc, NULL, -1, "out of memory");
		goto done;
	}
	fprintf(
	    f,
	    "Numeric gap: %zu intermediate output%s compared in execution order (aligned by %s), "
	    "%zu fail%s, %zu unmatched\n",
	    n, n == 1 ? "" : "s",
	    etc_numgap_alignment_get(ng) == ETC_NUMGAP_BY_HANDLE ? "debug handle"
	                                                         : "instruction id",
	    etc_numgap_failures(ng), etc_numgap_failures(ng) == 1 ? "s" : "",
	    etc_numgap_unmatched_count(ng));
	if (!gated)
		fprintf(f, "No thresholds given: only NaN and integer mismatches fail "
		           "(--min-snr, --max-mse, --min-cosine, --max-abs)\n");
	if (first >= 0) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, (size_t)first);
		etc_sbuf_reset(&b);
		handles_tuple(&b, r->handles, r->handle_count);
		char instr[32];
		snprintf(instr, sizeof instr, "instruction %d", r->instruction_id);
		const char *what = *r->ops ? r->ops : *r->event_name ? r->event_name : instr;
		/* names from the files, escaped for the terminal */
		char s0[1024], s1[1024], s2[1024], s3[256];
		fprintf(f, "\nFirst divergence: row %ld, %s%s%s%s (debug handles %s, %s%s%s%s%d)\n",
		        first, *r->nodes ? "node " : "", etc_text_safe(s0, sizeof s0, r->nodes),
		        *r->nodes ? ": " : "", etc_text_safe(s1, sizeof s1, what), b.p ? b.p : "()",
		        etc_text_safe(s3, sizeof s3, r->delegate_backend),
		        *r->delegate_backend ? " event " : "",
		        etc_text_safe(s2, sizeof s2, r->event_name),
		        *r->event_name ? ", instruction " : "instruction ", r->instruction_id);
		fprintf(f, "  %s: %s\n", etc_row_status_str(r->status),
		        etc_text_safe(s1, sizeof s1, r->reason));
		fprintf(f, "  source: %s\n",
		        *r->source_line ? etc_text_safe(s1, sizeof s1, r->source_line)
		                        : "(unknown)");
		if (*r->layout)
			fprintf(f,
			        "  layout: runtime %s (max-abs index in the reference's layout)\n",
			        r->layout);
		if (r->quant_source)
			fprintf(f, "  dequantized: %s\n", r->quant);
		fprintf(f, "  reference ops: %s\n", etc_text_safe(s1, sizeof s1, r->reference_ops));
		fprintf(f, "  module: %s\n",
		        *r->module_path ? etc_text_safe(s1, sizeof s1, r->module_path)
		                        : "(unknown)");
		if (*r->stack_trace) {
			fprintf(f, "  stack trace of its last op:\n");
			/* indent every line of the trace */
			const char *p = r->stack_trace;
			while (*p) {
				const char *e = strchr(p, '\n');
				size_t l = e ? (size_t)(e - p) : strlen(p);
				fprintf(f, "    %s\n", etc_text_escape(s1, sizeof s1, p, l));
				p += l + (e ? 1 : 0);
			}
		} else {
			fprintf(f, "  stack trace: (none: no ETRecord, or the node has none)\n");
		}
	}
	print_drops(f, ng);
	size_t nu = etc_numgap_unmatched_count(ng);
	if (nu)
		fprintf(f, "\nUnmatched intermediate outputs (%zu):\n", nu);
	for (size_t i = 0; i < nu; i++) {
		const etc_numgap_unmatched *u = etc_numgap_unmatched_at(ng, i);
		etc_sbuf_reset(&b);
		handles_tuple(&b, u->handles, u->handle_count);
		char s1[1024], s2[1024];
		fprintf(f, "  %s %s", u->side == ETC_NUMGAP_RUNTIME ? "runtime  " : "reference",
		        etc_text_safe(s1, sizeof s1, u->name));
		if (u->instruction_id >= 0)
			fprintf(f, " (instruction %d)", u->instruction_id);
		fprintf(f, " handles %s %s %s: %s\n", b.p ? b.p : "()", u->dtype,
		        etc_text_safe(s2, sizeof s2, u->shape),
		        etc_text_safe(s1, sizeof s1, u->reason));
	}
	if (b.failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the numeric gap table");
done:
	etc_sbuf_free(&b);
	free(cells);
	free(ptrs);
	return rc;
}

/* --- TSV --------------------------------------------------------------------------- */

/* Field `s` then a tab (or the line's end). */
static void field(FILE *f, const char *s, bool last)
{
	etc_csv_field_(f, s, strlen(s), '\t');
	fputc(last ? '\n' : '\t', f);
}

static void num_field(FILE *f, bool has, double v)
{
	char buf[40] = "";
	if (has)
		etc_format_double(buf, v);
	field(f, buf, false);
}

/* upstream's stacktraces: {node name: stack trace} of every AOT node */
static void stacktraces_str(etc_sbuf *b, const etc_numgap_row *r)
{
	etc_sbuf_puts(b, "{");
	for (uint32_t k = 0; k < r->reference_node_count; k++) {
		const etc_graph_node *nd = r->reference_node_list[k];
		etc_sbuf_puts(b, k ? ", " : "");
		etc_sbuf_pyrepr_str(b, nd->name, strlen(nd->name));
		etc_sbuf_puts(b, ": ");
		etc_sbuf_pyrepr_str(b, nd->stack_trace, strlen(nd->stack_trace));
	}
	etc_sbuf_puts(b, "}");
}

/* upstream's aot_ops: the Python list of the AOT node names */
static const char *node_list(etc_sbuf *b, const etc_numgap_row *r)
{
	etc_sbuf_reset(b);
	etc_sbuf_puts(b, "[");
	for (uint32_t k = 0; k < r->reference_node_count; k++) {
		const char *nm = r->reference_node_list[k]->name;
		etc_sbuf_puts(b, k ? ", " : "");
		etc_sbuf_pyrepr_str(b, nm, strlen(nm));
	}
	etc_sbuf_puts(b, "]");
	return b->p ? b->p : "[]";
}

/* upstream's runtime_ops: the list of runtime event names */
static const char *event_list(etc_sbuf *b, const etc_numgap_row *r)
{
	etc_sbuf_reset(b);
	etc_sbuf_puts(b, "[");
	etc_sbuf_pyrepr_str(b, r->event_name, strlen(r->event_name));
	etc_sbuf_puts(b, "]");
	return b->p ? b->p : "[]";
}

/* "+inf", a number, or "" */
static void drop_field(FILE *f, double v, bool last)
{
	char buf[40] = "";
	if (isinf(v))
		snprintf(buf, sizeof buf, "%sinf", v > 0 ? "" : "-");
	else if (!isnan(v))
		etc_format_double(buf, v);
	field(f, buf, last);
}

/* A tensor's one-line summary, or "dtype shape" when it was not compared. */
static const char *summary(etc_sbuf *b, const etc_tensor *t, const char *dtype, const char *shape)
{
	etc_sbuf_reset(b);
	if (t)
		etc_tensor_text_(b, t, 4, NULL);
	else
		etc_sbuf_printf(b, "%s %s", dtype, shape);
	return b->p ? b->p : "";
}

/* Row i's reference output to summarize: its values, or the preview the
 * gap kept instead of them (drop_reference_values) with its summary in
 * `cache`; NULL when not compared. */
static const etc_tensor *ref_tensor(const etc_numgap *ng, size_t i, etc_summary_cache *cache)
{
	etc_tensor_summary s;
	uint64_t ext[2];
	const etc_tensor *p = etc_numgap_row_reference_preview(ng, i, &s, ext);
	etc_summary_cache_init_(cache);
	if (!p)
		return etc_numgap_row_reference_tensor(ng, i);
	bool wide = p->scalar_type == ETC_LONG || p->scalar_type == ETC_UINT64;
	etc_summary_cache_put_(cache, p, &s, wide ? ext : NULL);
	return p;
}

/* The TSV's aot_intermediate_output of row i. */
static const char *ref_summary(etc_sbuf *b, const etc_numgap *ng, size_t i)
{
	etc_summary_cache cache;
	const etc_tensor *t = ref_tensor(ng, i, &cache);
	const etc_numgap_row *r = etc_numgap_row_at(ng, i);
	if (!t)
		return summary(b, NULL, r->reference_dtype, r->reference_shape);
	etc_sbuf_reset(b);
	etc_tensor_text_(b, t, 4, &cache);
	return b->p ? b->p : "";
}

static const char *tuple(etc_sbuf *b, const int64_t *h, size_t n)
{
	etc_sbuf_reset(b);
	handles_tuple(b, h, n);
	return b->p ? b->p : "()";
}

int etc_report_numgap_tsv(FILE *f, const etc_numgap *ng, etc_error *err)
{
	static const char *const cols[] = {"aot_debug_handle",
	                                   "aot_ops",
	                                   "aot_intermediate_output",
	                                   "runtime_ops",
	                                   "runtime_debug_handle",
	                                   "runtime_intermediate_output",
	                                   "gap",
	                                   "stacktraces",
	                                   "status",
	                                   "reason",
	                                   "shape",
	                                   "dtype",
	                                   "reference_shape",
	                                   "reference_dtype",
	                                   "snr",
	                                   "mse",
	                                   "cosine",
	                                   "l1",
	                                   "max_abs",
	                                   "max_rel",
	                                   "source_line",
	                                   "module_path",
	                                   "first_divergence",
	                                   "runtime_op_types",
	                                   "aot_op_types",
	                                   "event_name",
	                                   "runtime_nodes",
	                                   "distance",
	                                   "layout",
	                                   "quant_source",
	                                   "quant",
	                                   "snr_drop",
	                                   "cumulative_snr",
	                                   "local_snr",
	                                   "local_mse",
	                                   "local_max_abs",
	                                   "noise_added",
	                                   "local_inputs",
	                                   "local_standins",
	                                   "local_note"};
	const size_t ncols = sizeof cols / sizeof cols[0];
	etc_sbuf b = {0}, b2 = {0};
	long first = etc_numgap_first_divergence(ng);
	for (size_t c = 0; c < ncols; c++)
		field(f, cols[c], c + 1 == ncols);
	for (size_t i = 0; i < etc_numgap_row_count(ng); i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		field(f, tuple(&b, r->reference_handles, r->reference_handle_count), false);
		field(f, node_list(&b, r), false);
		field(f, ref_summary(&b, ng, i), false);
		field(f, event_list(&b, r), false);
		field(f, tuple(&b, r->handles, r->handle_count), false);
		field(f, summary(&b, etc_numgap_row_tensor(ng, i), r->dtype, r->shape), false);
		{
			char g[48] = "";
			if (r->has_metrics) {
				if (isinf(r->gap))
					snprintf(g, sizeof g, "[%sinf]", r->gap > 0 ? "" : "-");
				else if (isnan(r->gap))
					snprintf(g, sizeof g, "[nan]");
				else {
					g[0] = '[';
					etc_format_double(g + 1, r->gap);
					strcat(g, "]");
				}
			}
			field(f, g, false);
		}
		etc_sbuf_reset(&b);
		stacktraces_str(&b, r);
		field(f, b.p ? b.p : "{}", false);
		field(f, etc_row_status_str(r->status), false);
		field(f, r->reason, false);
		field(f, r->shape, false);
		field(f, r->dtype, false);
		field(f, r->reference_shape, false);
		field(f, r->reference_dtype, false);
		const double m[6] = {r->metrics.snr_db, r->metrics.mse,     r->metrics.cosine,
		                     r->metrics.l1,     r->metrics.max_abs, r->metrics.max_rel};
		for (int k = 0; k < 6; k++)
			num_field(f, r->has_metrics, m[k]);
		field(f, r->source_line, false);
		field(f, r->module_path, false);
		field(f, (long)i == first ? "True" : "False", false);
		field(f, r->ops, false);
		field(f, r->reference_ops, false);
		field(f, r->event_name, false);
		field(f, r->nodes, false);
		field(f, etc_numgap_distance_name(etc_numgap_options_get(ng)->distance), false);
		field(f, r->layout, false);
		field(f, etc_numgap_quant_source_name(r->quant_source), false);
		field(f, r->quant, false);
		drop_field(f, r->snr_drop, false);
		drop_field(f, r->cumulative_snr, false);
		drop_field(f, r->local_snr, false);
		num_field(f, r->has_local, r->local.mse);
		num_field(f, r->has_local, r->local.max_abs);
		drop_field(f, r->noise_added, false);
		{
			char a[24] = "", c[24] = "";
			if (r->local_inputs)
				snprintf(a, sizeof a, "%u", r->local_inputs),
				    snprintf(c, sizeof c, "%u", r->local_standins);
			field(f, a, false);
			field(f, c, false);
		}
		field(f, r->local_note, true);
	}
	/* unmatched items: their side's columns, the other side's empty */
	for (size_t i = 0; i < etc_numgap_unmatched_count(ng); i++) {
		const etc_numgap_unmatched *u = etc_numgap_unmatched_at(ng, i);
		bool rt = u->side == ETC_NUMGAP_RUNTIME;
		const char *h = tuple(&b, u->handles, u->handle_count);
		field(f, rt ? "" : h, false);
		/* upstream's lists: node names (the reference), event names (the runtime) */
		etc_sbuf_reset(&b2);
		etc_sbuf_puts(&b2, "[");
		for (const char *p = u->nodes; *p && !rt;) {
			size_t l = strcspn(p, ",");
			etc_sbuf_puts(&b2, p == u->nodes ? "" : ", ");
			etc_sbuf_pyrepr_str(&b2, p, l);
			p += l;
			while (*p == ',' || *p == ' ')
				p++;
		}
		if (rt)
			etc_sbuf_pyrepr_str(&b2, u->name, strlen(u->name));
		etc_sbuf_puts(&b2, "]");
		field(f, rt ? "" : b2.p ? b2.p : "[]", false);
		field(f, "", false);
		field(f, rt ? (b2.p ? b2.p : "[]") : "", false);
		field(f, rt ? h : "", false);
		for (int k = 0; k < 3; k++) /* output summary, gap, stacktraces */
			field(f, k == 2 ? "{}" : "", false);
		field(f, rt ? "unmatched runtime" : "unmatched reference", false);
		field(f, u->reason, false);
		field(f, rt ? u->shape : "", false);
		field(f, rt ? u->dtype : "", false);
		field(f, rt ? "" : u->shape, false);
		field(f, rt ? "" : u->dtype, false);
		for (int k = 0; k < 8; k++) /* metrics, source line, module path */
			field(f, "", false);
		field(f, "False", false);
		field(f, rt ? u->ops : "", false);
		field(f, rt ? "" : u->ops, false);
		field(f, u->instruction_id >= 0 ? u->name : "", false);
		/* nodes, distance, layout, quant source, quant, snr drop, the two errors */
		for (int k = 0; k < 13; k++)
			field(f, "", false);
		field(f, "", true);
	}
	int rc = 0;
	if (b.failed || b2.failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the numeric gap TSV");
	etc_sbuf_free(&b);
	etc_sbuf_free(&b2);
	return rc;
}

/* --- JSON ---------------------------------------------------------------------------- */

/* `, "key": v` with null for NaN (inf as the library's JSON numbers write it). */
static void json_num_or_null(etc_sbuf *b, const char *key, double v)
{
	etc_sbuf_printf(b, ", \"%s\": ", key);
	if (isnan(v))
		etc_sbuf_puts(b, "null");
	else
		etc_json_num_(b, v);
}

static void json_handles(etc_sbuf *b, const int64_t *h, size_t n)
{
	etc_sbuf_puts(b, "[");
	for (size_t i = 0; i < n; i++)
		etc_sbuf_printf(b, i ? ", %lld" : "%lld", (long long)h[i]);
	etc_sbuf_puts(b, "]");
}

static void json_kv(etc_sbuf *b, const char *key, const char *v)
{
	etc_sbuf_printf(b, ", \"%s\": ", key);
	etc_sbuf_json_str(b, v, strlen(v));
}

static void json_threshold(etc_sbuf *b, const char *key, double v)
{
	etc_sbuf_printf(b, "%s\"%s\": ", *key == 'm' && !strcmp(key, "min_snr") ? "" : ", ", key);
	if (isnan(v))
		etc_sbuf_puts(b, "null");
	else
		etc_json_num_(b, v);
}

void etc_numgap_json_(etc_sbuf *b, const etc_numgap *ng)
{
	const etc_numgap_options *o = etc_numgap_options_get(ng);
	long first = etc_numgap_first_divergence(ng);
	etc_sbuf_printf(b, "{\"alignment\": \"%s\", \"distance\": \"%s\", \"block\": ",
	                etc_numgap_alignment_get(ng) == ETC_NUMGAP_BY_HANDLE ? "debug_handle"
	                                                                     : "instruction",
	                etc_numgap_distance_name(o->distance));
	etc_sbuf_json_str(b, o->block, strlen(o->block));
	size_t blk;
	uint32_t run, etdump_run;
	etc_numgap_where(ng, &blk, &run, &etdump_run);
	etc_sbuf_printf(b, ", \"run\": %u, \"etdump_run\": %u", run, etdump_run);
	etc_sbuf_puts(b, ", \"thresholds\": {");
	json_threshold(b, "min_snr", o->min_snr);
	json_threshold(b, "max_mse", o->max_mse);
	json_threshold(b, "min_cosine", o->min_cosine);
	json_threshold(b, "max_abs", o->max_abs);
	etc_sbuf_printf(b, "}, \"compared\": %zu, \"failures\": %zu, \"first_divergence\": ",
	                etc_numgap_row_count(ng), etc_numgap_failures(ng));
	if (first >= 0)
		etc_sbuf_printf(b, "%ld", first);
	else
		etc_sbuf_puts(b, "null");
	etc_sbuf_puts(b, ", \"rows\": [");
	for (size_t i = 0; i < etc_numgap_row_count(ng); i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		const etc_tensor *at = etc_numgap_row_tensor(ng, i);
		etc_sbuf_puts(b, i ? ",\n      {\"aot_debug_handle\": "
		                   : "\n      {\"aot_debug_handle\": ");
		json_handles(b, r->reference_handles, r->reference_handle_count);
		etc_sbuf_puts(b, ", \"aot_ops\": [");
		for (uint32_t k = 0; k < r->reference_node_count; k++) {
			const char *nm = r->reference_node_list[k]->name;
			etc_sbuf_puts(b, k ? ", " : "");
			etc_sbuf_json_str(b, nm, strlen(nm));
		}
		etc_sbuf_puts(b, "]");
		etc_sbuf_puts(b, ", \"aot_intermediate_output\": ");
		etc_summary_cache cache;
		const etc_tensor *rt = ref_tensor(ng, i, &cache);
		if (rt)
			etc_tensor_json_(b, rt, 8, &cache);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_puts(b, ", \"runtime_ops\": [");
		etc_sbuf_json_str(b, r->event_name, strlen(r->event_name));
		etc_sbuf_puts(b, "]");
		etc_sbuf_puts(b, ", \"runtime_debug_handle\": ");
		json_handles(b, r->handles, r->handle_count);
		etc_sbuf_puts(b, ", \"runtime_intermediate_output\": ");
		if (at)
			etc_tensor_json_(b, at, 8, NULL);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_puts(b, ", \"gap\": ");
		if (r->has_metrics) {
			etc_sbuf_puts(b, "[");
			etc_json_num_(b, r->gap);
			etc_sbuf_puts(b, "]");
		} else {
			etc_sbuf_puts(b, "null");
		}
		etc_sbuf_puts(b, ", \"stacktraces\": {");
		for (uint32_t k = 0; k < r->reference_node_count; k++) {
			const etc_graph_node *nd = r->reference_node_list[k];
			etc_sbuf_puts(b, k ? ", " : "");
			etc_sbuf_json_str(b, nd->name, strlen(nd->name));
			etc_sbuf_puts(b, ": ");
			etc_sbuf_json_str(b, nd->stack_trace, strlen(nd->stack_trace));
		}
		etc_sbuf_puts(b, "}");
		json_kv(b, "runtime_op_types", r->ops);
		json_kv(b, "aot_op_types", r->reference_ops);
		json_kv(b, "runtime_nodes", r->nodes);
		json_kv(b, "delegate_backend", r->delegate_backend);
		json_kv(b, "layout", r->layout);
		json_kv(b, "quant_source", etc_numgap_quant_source_name(r->quant_source));
		json_kv(b, "quant", r->quant);
		etc_sbuf_puts(b, ", \"snr_drop\": ");
		if (isnan(r->snr_drop))
			etc_sbuf_puts(b, "null");
		else
			etc_json_num_(b, r->snr_drop);
		json_kv(b, "event_name", r->event_name);
		etc_sbuf_printf(b,
		                ", \"instruction_id\": %d, \"merged_items\": %u, \"output\": %u, "
		                "\"reference_output\": %u",
		                r->instruction_id, r->item_count, r->output, r->reference_output);
		json_kv(b, "status", etc_row_status_str(r->status));
		json_kv(b, "reason", r->reason);
		char full[1600]; /* the whole shape: the row's text elides a long one */
		json_kv(b, "shape", etc_numgap_row_shape_full(ng, i, false, full, sizeof full));
		json_kv(b, "dtype", r->dtype);
		json_kv(b, "reference_shape",
		        etc_numgap_row_shape_full(ng, i, true, full, sizeof full));
		json_kv(b, "reference_dtype", r->reference_dtype);
		json_kv(b, "source_line", r->source_line);
		json_kv(b, "module_path", r->module_path);
		etc_sbuf_printf(b, ", \"first_divergence\": %s, \"metrics\": ",
		                (long)i == first ? "true" : "false");
		if (r->has_metrics)
			etc_metrics_json_(b, &r->metrics);
		else
			etc_sbuf_puts(b, "null");
		json_num_or_null(b, "cumulative_snr", r->cumulative_snr);
		json_num_or_null(b, "local_snr", r->local_snr);
		json_num_or_null(b, "noise_added", r->noise_added);
		etc_sbuf_puts(b, ", \"local_metrics\": ");
		if (r->has_local)
			etc_metrics_json_(b, &r->local);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_printf(b, ", \"local_inputs\": %u, \"local_standins\": %u",
		                r->local_inputs, r->local_standins);
		json_kv(b, "local_note", r->local_note);
		etc_sbuf_puts(b, "}");
	}
	etc_sbuf_puts(b, "], \"unmatched\": [");
	for (size_t i = 0; i < etc_numgap_unmatched_count(ng); i++) {
		const etc_numgap_unmatched *u = etc_numgap_unmatched_at(ng, i);
		etc_sbuf_printf(
		    b, "%s{\"side\": \"%s\", \"debug_handle\": ", i ? ",\n      " : "\n      ",
		    u->side == ETC_NUMGAP_RUNTIME ? "runtime" : "reference");
		json_handles(b, u->handles, u->handle_count);
		json_kv(b, "name", u->name);
		etc_sbuf_printf(b, ", \"instruction_id\": ");
		if (u->instruction_id >= 0)
			etc_sbuf_printf(b, "%d", u->instruction_id);
		else
			etc_sbuf_puts(b, "null");
		json_kv(b, "ops", u->ops);
		json_kv(b, "nodes", u->nodes);
		json_kv(b, "shape", u->shape);
		json_kv(b, "dtype", u->dtype);
		json_kv(b, "reason", u->reason);
		etc_sbuf_puts(b, "}");
	}
	etc_sbuf_puts(b, "]");
	/* only when there are any: the reports of a clean gap stay as they were */
	for (size_t i = 0; i < etc_numgap_warning_count(ng); i++) {
		const char *w = etc_numgap_warning(ng, i);
		etc_sbuf_puts(b, i ? ", " : ", \"warnings\": [");
		etc_sbuf_json_str(b, w, strlen(w));
	}
	etc_sbuf_puts(b, etc_numgap_warning_count(ng) ? "]}" : "}");
}

/* --- plots ------------------------------------------------------------------------------ */

/* Cumulative and local SNR in one chart, where the error enters (the
 * first of etc_numgap_top_drops) and the first divergence marked. */
static int numgap_chart(const etc_plot_options *o, const etc_numgap *ng, size_t n,
                        const char *const *labels, long first, etc_plot_result *res, etc_error *err)
{
	double *cum = calloc(n, sizeof *cum), *loc = calloc(n, sizeof *loc);
	int rc = 0;
	if (!cum || !loc) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		cum[i] = r->has_metrics ? r->cumulative_snr : NAN;
		loc[i] = r->has_local ? r->local_snr : NAN;
	}
	size_t culprit = 0;
	bool has_culprit = etc_numgap_top_drops(ng, 1, &culprit) == 1 && culprit < n;
	const etc_numgap_options *opt = etc_numgap_options_get(ng);
	char thr[96];
	snprintf(thr, sizeof thr, "min SNR %.6g dB", opt->min_snr);
	etc_plot_style st = {NAN, thr, NULL, false, NULL, false, 0};
	etc_plot_options po = *o;
	po.style = &st;
	rc = etc_plot_numgap_chart(
	    &po, "numgap_chart",
	    "numeric gap: cumulative and local SNR of each op, execution order", n, labels, cum,
	    loc, opt->min_snr, has_culprit ? (long)culprit : -1, first, res, err);
done:
	free(cum);
	free(loc);
	return rc;
}

int etc_report_numgap_plots(const etc_plot_options *o, const etc_numgap *ng, etc_plot_result *res,
                            etc_error *err)
{
	size_t n = etc_numgap_row_count(ng), k = 0;
	const etc_numgap_options *opt = etc_numgap_options_get(ng);
	long first = etc_numgap_first_divergence(ng), marked = -1;
	const char **labels = calloc(n ? n : 1, sizeof *labels);
	char(*names)[256] = calloc(n ? n : 1, sizeof *names);
	double *cos = calloc(n ? n : 1, sizeof *cos);
	int rc = 0;
	if (!labels || !names || !cos) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	/* every row is a point: rows not compared are NaN (not drawn) */
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		/* every per-op plot: the node's name, its op type beneath */
		const char *op = *r->ops ? r->ops : r->event_name;
		if (*r->nodes)
			snprintf(names[k], sizeof names[k], "%zu %.120s\n%.100s", i, r->nodes, op);
		else
			snprintf(names[k], sizeof names[k], "%zu %.120s", i, op);
		labels[k] = names[k];
		cos[k] = r->has_metrics ? r->metrics.cosine : NAN;
		if ((long)i == first)
			marked = (long)k;
		k++;
	}
	/* the chart draws the SNR of every op (cumulative and local) and marks
	 * where the error enters (the first of etc_numgap_top_drops): no
	 * separate SNR or SNR-drop plot; the cosine gets its plot when it is
	 * gated (--min-cosine), as the accuracy's bar charts of metrics other
	 * than SNR */
	if (k) {
		rc = numgap_chart(o, ng, k, labels, marked, res, err);
	}
	if (rc == 0 && k && !isnan(opt->min_cosine)) {
		/* cosines near 1 read as "1": 1 - cosine on a log axis */
		for (size_t i = 0; i < k; i++)
			cos[i] = 1 - cos[i];
		char thr[96];
		snprintf(thr, sizeof thr, "min cosine %.9g", opt->min_cosine);
		etc_plot_style st = {NAN, thr, NULL, true, NULL, false, 0};
		etc_plot_options po = *o;
		po.style = &st;
		rc = etc_plot_lines(&po, "numgap_cosine",
		                    "1 \xe2\x88\x92 cosine similarity of each intermediate "
		                    "output, execution order",
		                    "1 \xe2\x88\x92 cosine (log scale)", k, labels, cos,
		                    1 - opt->min_cosine, marked, res, err);
	}
	if (rc < 0 || first < 0)
		goto done;
	etc_diff_ctx d;
	if (etc_numgap_row_values(ng, (size_t)first, &d.a, &d.r) < 0 || !d.a.count ||
	    d.r.count != d.a.count)
		goto done;
	char title[256];
	const etc_numgap_row *fr = etc_numgap_row_at(ng, (size_t)first);
	/* named as the first-divergence line names it: node, then op */
	char what[200];
	snprintf(what, sizeof what, "%s%.60s%s%.60s%s", *fr->nodes ? "node " : "", fr->nodes,
	         *fr->nodes ? " (" : "", *fr->ops ? fr->ops : fr->event_name,
	         *fr->nodes ? ")" : "");
	if (d.a.count > 16) {
		snprintf(title, sizeof title,
		         "runtime \xe2\x88\x92 reference, first divergence: row %ld, %.140s", first,
		         what);
		d.absolute = false;
		rc = etc_plot_histogram_read(o, "numgap_first_divergence_error_hist", title,
		                             etc_plot_read_diff_, &d, d.a.count, 50, res, err);
	}
	const etc_tensor *t = etc_numgap_row_tensor(ng, (size_t)first);
	if (rc < 0 || !t || t->ndim < 2)
		goto done;
	uint64_t cols = (uint64_t)etc_tensor_size(t, t->ndim - 1);
	if (!cols)
		goto done;
	char xl[64], yl[64];
	snprintf(xl, sizeof xl, "dim %u (%llu)", t->ndim - 1, (unsigned long long)cols);
	if (t->ndim == 2)
		snprintf(yl, sizeof yl, "dim 0 (%lld)", (long long)etc_tensor_size(t, 0));
	else
		snprintf(yl, sizeof yl, "dims 0-%u flattened (%llu)", t->ndim - 2,
		         (unsigned long long)(t->numel / cols));
	snprintf(title, sizeof title,
	         "|runtime \xe2\x88\x92 reference|, first divergence: row %ld, %.140s", first,
	         what);
	d.absolute = true;
	rc = etc_plot_error_map(o, "numgap_first_divergence_heatmap", title, xl, yl,
	                        "|runtime \xe2\x88\x92 reference|", etc_plot_read_diff_, &d,
	                        t->numel / cols, cols, res, err);
done:
	free(labels);
	free(names);
	free(cos);
	return rc;
}

/* --- where time and error go ------------------------------------------------------------ */

static bool str_is(etc_str s, const char *z)
{
	size_t n = strlen(z);
	return s.len == n && (n == 0 || memcmp(s.ptr, z, n) == 0);
}

/* The p50 of the block's Method::execute event, or NaN. */
static double execute_p50(const etc_event_block *b)
{
	for (size_t e = 0; e < b->event_count; e++)
		if (b->events[e].has_perf && str_is(b->events[e].name, "Method::execute"))
			return b->events[e].stats.p50;
	return NAN;
}

/* The profiled event of row r in block b (same instruction, and the same
 * name when the row has one), or NULL. */
static const etc_inspector_event *row_event(const etc_event_block *b, const etc_numgap_row *r)
{
	if (r->instruction_id < 0)
		return NULL;
	for (size_t e = 0; e < b->event_count; e++) {
		const etc_inspector_event *ev = &b->events[e];
		if (ev->has_perf && ev->instruction_id == r->instruction_id &&
		    (!*r->event_name || str_is(ev->name, r->event_name)))
			return ev;
	}
	return NULL;
}

int etc_report_time_error_plot(const etc_plot_options *o, const etc_numgap *ng,
                               const etc_inspector *insp, etc_plot_result *res, etc_error *err)
{
	size_t n = etc_numgap_row_count(ng);
	if (!n || !insp)
		return 0;
	/* the block with Method::execute that profiles the most compared rows */
	size_t best = SIZE_MAX, best_hits = 0;
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (!(execute_p50(blk) > 0))
			continue;
		size_t hits = 0;
		for (size_t i = 0; i < n; i++)
			hits += etc_numgap_row_at(ng, i)->has_metrics &&
			        row_event(blk, etc_numgap_row_at(ng, i)) != NULL;
		if (hits > best_hits) {
			best = b;
			best_hits = hits;
		}
	}
	if (best == SIZE_MAX) {
		if (o && o->batch)
			return etc_plot_batch_note(
			    o->batch,
			    "no profiled op with Method::execute in the ETDump "
			    "(no time-and-error plot)",
			    err);
		return 0;
	}
	const etc_event_block *blk = etc_inspector_block(insp, best);
	double exec = execute_p50(blk);
	double *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
	unsigned char *kind = calloc(n, 1);
	const char **labels = calloc(n, sizeof *labels);
	char(*names)[256] = calloc(n, sizeof *names);
	size_t *top = calloc(n, sizeof *top);
	int rc = 0;
	if (!x || !y || !kind || !labels || !names || !top) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	bool local = false;
	for (size_t i = 0; i < n; i++)
		local = local || etc_numgap_row_at(ng, i)->has_local;
	double finite_hi = 0;
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		const etc_inspector_event *ev = r->has_metrics ? row_event(blk, r) : NULL;
		x[i] = y[i] = NAN;
		if (!ev)
			continue;
		x[i] = 100 * ev->stats.p50 / exec;
		y[i] = local ? r->local_snr : r->cumulative_snr;
		if (isnan(y[i]))
			y[i] = r->metrics.snr_db;
		if (isfinite(y[i]) && y[i] > finite_hi)
			finite_hi = y[i];
		const char *op = *r->ops ? r->ops : r->event_name;
		if (*r->nodes)
			snprintf(names[i], sizeof names[i], "%zu %.120s\n%.100s", i, r->nodes, op);
		else
			snprintf(names[i], sizeof names[i], "%zu %.120s", i, op);
		labels[i] = names[i];
	}
	/* identical outputs (+inf dB) drawn just above the largest finite SNR */
	double inf_at = finite_hi > 0 ? finite_hi * 1.15 + 5 : 100;
	for (size_t i = 0; i < n; i++)
		if (isinf(y[i]))
			y[i] = y[i] > 0 ? inf_at : NAN;
	/* hot spots: the 3 ops with the most time; culprits: the top error entries */
	for (int h = 0; h < 3; h++) {
		long m = -1;
		for (size_t i = 0; i < n; i++)
			if (isfinite(x[i]) && !(kind[i] & 1) && (m < 0 || x[i] > x[m]))
				m = (long)i;
		if (m >= 0)
			kind[m] |= 1;
	}
	size_t nt = etc_numgap_top_drops(ng, 3, top);
	long first = etc_numgap_first_divergence(ng);
	for (size_t t = 0; t < nt; t++)
		if (top[t] < n && etc_numgap_row_at(ng, top[t])->status == ETC_ROW_FAIL)
			kind[top[t]] |= 2;
	if (first >= 0 && (size_t)first < n)
		kind[first] |= 2;
	const etc_numgap_options *opt = etc_numgap_options_get(ng);
	char thr[96], title[200], ylabel[160];
	snprintf(thr, sizeof thr, "min SNR %.6g dB", opt->min_snr);
	etc_plot_style st = {opt->min_snr, thr, NULL, false, NULL, false, 0};
	etc_plot_options po = *o;
	po.style = &st;
	snprintf(title, sizeof title,
	         "where time and error go: each op's share of Method::execute (p50 %.4g %s) "
	         "against its %s SNR",
	         exec, etc_time_scale_name(etc_inspector_options_get(insp)->target_time_scale),
	         local ? "local" : "cumulative");
	snprintf(ylabel, sizeof ylabel, "%s SNR (dB; identical drawn at %.3g)",
	         local ? "local" : "cumulative", inf_at);
	rc = etc_plot_scatter(&po, "time_error", title, "share of Method::execute time (%, p50)",
	                      ylabel, n, labels, x, y, kind, res, err);
done:
	free(x);
	free(y);
	free(kind);
	free(labels);
	free(names);
	free(top);
	return rc;
}
