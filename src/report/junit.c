/*
 * junit.c - the JUnit XML report: one testsuite per gate that ran (the
 * accuracy comparison, the numeric gap, the performance gate), one
 * testcase per compared item. Its failure count is the run's verdict, so
 * the CLI's exit code and the XML cannot disagree (etc_junit_failures).
 */
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>

/* Names longer than this are cut (at a character boundary) in testcase names. */
enum { NAME_MAX_BYTES = 200 };

static void xml(etc_sbuf *b, const char *s, size_t n, size_t max)
{
	etc_sbuf_xml_str(b, s ? s : "", s ? n : 0, max);
}

static void xmls(etc_sbuf *b, const char *s)
{
	xml(b, s, s ? strlen(s) : 0, 0);
}

/* A failure's detail: the label as is, then the text escaped. */
static void field(etc_sbuf *b, const char *label, const char *text)
{
	etc_sbuf_puts(b, label);
	xmls(b, text);
}

/* A block's name, with its index when another block has the same name. */
static void block_label(etc_sbuf *b, const etc_inspector *insp, size_t bi)
{
	const etc_event_block *blk = etc_inspector_block(insp, bi);
	xml(b, blk->name.ptr, blk->name.len, NAME_MAX_BYTES);
	for (size_t i = 0; i < etc_inspector_block_count(insp); i++) {
		const etc_event_block *o = etc_inspector_block(insp, i);
		if (i != bi && o->name.len == blk->name.len &&
		    (!o->name.len || memcmp(o->name.ptr, blk->name.ptr, o->name.len) == 0)) {
			etc_sbuf_printf(b, "#%zu", bi);
			return;
		}
	}
}

static size_t accuracy_failures(const etc_junit_gates *g)
{
	return g->accuracy ? etc_accuracy_failures(g->accuracy) : 0;
}

static size_t numgap_failures(const etc_junit_gates *g)
{
	size_t n = g->numgap ? etc_numgap_failures(g->numgap) : 0;
	for (size_t i = 0; g->numgap_more && i < g->numgap_more_count; i++)
		n += etc_numgap_failures(g->numgap_more[i]);
	return n;
}

static size_t perfdiff_gated(const etc_perfdiff *d)
{
	size_t n = 0;
	for (size_t i = 0; d && i < etc_perfdiff_row_count(d); i++)
		n += etc_perfdiff_row_at(d, i)->gated;
	return n;
}

/* Unmatched events the gate would have checked: skipped testcases. */
static bool perfdiff_skips(const etc_perfdiff_unmatched *u)
{
	return !u->below_min;
}

static size_t perfdiff_skipped(const etc_perfdiff *d)
{
	size_t n = 0;
	for (size_t i = 0; d && i < etc_perfdiff_unmatched_count(d); i++)
		n += perfdiff_skips(etc_perfdiff_unmatched_at(d, i));
	return n;
}

static size_t perfdiff_failures(const etc_junit_gates *g)
{
	return g->perfdiff ? etc_perfdiff_failures(g->perfdiff) : 0;
}

size_t etc_junit_failures(const etc_junit_gates *g)
{
	return accuracy_failures(g) + numgap_failures(g) + perfdiff_failures(g) +
	       (g->taps ? etc_taps_failures(g->taps) : 0);
}

/* The accuracy suite's testcases: the tap outputs have a suite of their own. */
static size_t accuracy_cases(const etc_accuracy *acc, bool taps)
{
	size_t n = 0;
	for (size_t i = 0; i < etc_accuracy_row_count(acc); i++)
		n += !taps || !etc_accuracy_row_is_tap(acc, i);
	return n;
}

static void suite_open(etc_sbuf *b, const char *what, const char *file, size_t tests,
                       size_t failures)
{
	etc_sbuf_printf(b, "  <testsuite name=\"etcompare %s", what);
	if (file) {
		etc_sbuf_puts(b, ": ");
		xmls(b, file);
	}
	etc_sbuf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", tests,
	                failures);
}

static void accuracy_suite(etc_sbuf *b, const etc_accuracy *acc, const etc_inspector *insp,
                           bool taps)
{
	size_t n = etc_accuracy_row_count(acc);
	suite_open(b, "accuracy", etc_etdump_name(etc_inspector_etdump(insp)),
	           accuracy_cases(acc, taps), etc_accuracy_failures(acc));
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		if (taps && etc_accuracy_row_is_tap(acc, i))
			continue;
		etc_sbuf_puts(b, "    <testcase classname=\"");
		block_label(b, insp, r->block);
		/* the run is never cut off: it keeps names unique per run and output */
		if (r->etdump_run == UINT32_MAX)
			etc_sbuf_printf(b, ".reference%d", r->reference);
		else
			etc_sbuf_printf(b, ".run%u", r->run);
		etc_sbuf_printf(b, "\" name=\"output %u\" time=\"0\"", r->output);
		if (r->status == ETC_ROW_PASS) {
			etc_sbuf_puts(b, "/>\n");
			continue;
		}
		etc_sbuf_printf(b, ">\n      <failure type=\"%s\" message=\"",
		                etc_row_status_str(r->status));
		xmls(b, r->reason);
		field(b, "\">shape ", r->shape);
		field(b, " dtype ", r->dtype);
		field(b, "; reference ", r->reference_shape);
		field(b, " ", r->reference_dtype);
		etc_sbuf_puts(b, "</failure>\n    </testcase>\n");
	}
	etc_sbuf_puts(b, "    <system-out>");
	xmls(b, etc_accuracy_pair_note(acc));
	etc_sbuf_puts(b, "</system-out>\n  </testsuite>\n");
}

static void handles(etc_sbuf *b, const int64_t *h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		etc_sbuf_printf(b, i ? ", %lld" : "%lld", (long long)h[i]);
	if (!n)
		etc_sbuf_puts(b, "none");
}

/*
 * A numeric-gap testcase's name: the row, the node (the group's runtime ops
 * until rows carry node names) and its debug handles. The row index keeps
 * names unique.
 */
static void numgap_case_name(etc_sbuf *b, const etc_numgap_row *r, size_t i)
{
	etc_sbuf_printf(b, "row %zu: ", i);
	if (r->nodes && *r->nodes) {
		xml(b, r->nodes, strlen(r->nodes), NAME_MAX_BYTES);
		etc_sbuf_puts(b, " ");
	}
	if (r->ops && *r->ops)
		xml(b, r->ops, strlen(r->ops), NAME_MAX_BYTES);
	else if (r->event_name && *r->event_name)
		xml(b, r->event_name, strlen(r->event_name), NAME_MAX_BYTES);
	else
		etc_sbuf_printf(b, "instruction %d", r->instruction_id);
	etc_sbuf_puts(b, r->handle_count == 1 ? " (debug handle " : " (debug handles ");
	handles(b, r->handles, r->handle_count);
	if (r->output)
		etc_sbuf_printf(b, ", output %u", r->output);
	etc_sbuf_puts(b, ")");
}

static void numgap_suite(etc_sbuf *b, const etc_numgap *ng, const char *name)
{
	size_t n = etc_numgap_row_count(ng), nu = etc_numgap_unmatched_count(ng);
	long first = etc_numgap_first_divergence(ng);
	etc_sbuf_puts(b, "  <testsuite name=\"etcompare numeric gap");
	if (name) {
		etc_sbuf_puts(b, ": ");
		xmls(b, name);
	}
	etc_sbuf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
	                n + nu, etc_numgap_failures(ng), nu);
	for (size_t i = 0; i < n; i++) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, i);
		etc_sbuf_puts(b, "    <testcase classname=\"numeric gap\" name=\"");
		numgap_case_name(b, r, i);
		etc_sbuf_puts(b, "\" time=\"0\"");
		if (r->status == ETC_ROW_PASS) {
			etc_sbuf_puts(b, "/>\n");
			continue;
		}
		etc_sbuf_printf(b, ">\n      <failure type=\"%s\" message=\"%s",
		                etc_row_status_str(r->status),
		                (long)i == first ? "first divergence: " : "");
		xmls(b, r->reason);
		etc_sbuf_puts(b, "\">");
		if ((long)i == first)
			etc_sbuf_puts(b, "first divergence\n");
		field(b, "runtime ops: ", r->ops);
		field(b, "\nreference ops: ", r->reference_ops);
		field(b, "\nshape ", r->shape);
		field(b, " dtype ", r->dtype);
		if (r->source_line && *r->source_line)
			field(b, "\nsource: ", r->source_line);
		if (r->module_path && *r->module_path)
			field(b, "\nmodule: ", r->module_path);
		etc_sbuf_puts(b, "</failure>\n    </testcase>\n");
	}
	/* not compared, so neither pass nor fail: the gate ignores them too */
	for (size_t i = 0; i < nu; i++) {
		const etc_numgap_unmatched *u = etc_numgap_unmatched_at(ng, i);
		etc_sbuf_printf(
		    b, "    <testcase classname=\"numeric gap\" name=\"unmatched %zu: ", i);
		xml(b, u->name, u->name ? strlen(u->name) : 0, NAME_MAX_BYTES);
		etc_sbuf_puts(b, u->side == ETC_NUMGAP_RUNTIME ? " (runtime" : " (reference");
		etc_sbuf_puts(b, ", debug handles ");
		handles(b, u->handles, u->handle_count);
		etc_sbuf_puts(b, ")\" time=\"0\">\n      <skipped message=\"");
		xmls(b, u->reason);
		etc_sbuf_puts(b, "\"/>\n    </testcase>\n");
	}
	etc_sbuf_puts(b, "  </testsuite>\n");
}

/* One testcase per tap and run: "tap <output>: <node> (<reducer>)" in the run's class. */
static void taps_suite(etc_sbuf *b, const etc_taps *t, const etc_inspector *insp)
{
	const etc_tap_specs *specs = etc_taps_specs(t);
	size_t n = etc_taps_row_count(t);
	suite_open(b, "taps", insp ? etc_etdump_name(etc_inspector_etdump(insp)) : NULL, n,
	           etc_taps_failures(t));
	char num[3][ETC_FMT_NUM];
	for (size_t i = 0; i < n; i++) {
		const etc_tap_row *r = etc_taps_row_at(t, i);
		const etc_tap_spec *s = etc_tap_specs_at(specs, r->spec);
		etc_sbuf_puts(b, "    <testcase classname=\"");
		if (insp && r->block < etc_inspector_block_count(insp))
			block_label(b, insp, r->block);
		else
			etc_sbuf_printf(b, "block%u", r->block);
		etc_sbuf_printf(b, ".run%u\" name=\"tap %lld: ", r->run,
		                (long long)s->output_index);
		const char *node = s->node_name ? s->node_name : "";
		xml(b, node, strlen(node), NAME_MAX_BYTES);
		etc_sbuf_puts(b, " (");
		etc_sbuf_puts(b, r->stats ? "STATS" : "FULL_TENSOR");
		etc_sbuf_puts(b, ")\" time=\"0\"");
		if (r->pass) {
			etc_sbuf_puts(b, "/>\n");
			continue;
		}
		etc_sbuf_printf(b, ">\n      <failure type=\"%s\" message=\"",
		                r->nonfinite ? "NONFINITE"
		                : r->stats   ? "STATS"
		                             : "FULL_TENSOR");
		xmls(b, r->reason);
		etc_sbuf_puts(b, "\">op ");
		xmls(b, s->op_target ? s->op_target : "");
		for (size_t k = 0; k < r->field_count; k++) {
			const etc_tap_field *fl = &r->fields[k];
			if (!fl->fail)
				continue;
			etc_fmt_g(num[0], fl->actual);
			etc_fmt_g(num[1], fl->reference);
			etc_fmt_g(num[2], fl->rel_diff);
			etc_sbuf_printf(b, "\n%s: actual %s, reference %s, relative difference %s",
			                etc_tap_field_name(fl->field), num[0], num[1], num[2]);
		}
		if (r->has_metrics) {
			etc_fmt_g(num[0], r->metrics.snr_db);
			etc_sbuf_printf(b, "\nSNR %s dB", num[0]);
		}
		if (s->stack_trace && *s->stack_trace)
			field(b, "\nstack trace: ", s->stack_trace);
		etc_sbuf_puts(b, "</failure>\n    </testcase>\n");
	}
	etc_sbuf_puts(b, "  </testsuite>\n");
}

/* An unmatched event as a skipped testcase: the gate could not check it. */
static void perfdiff_skipped_case(etc_sbuf *b, const etc_perfdiff *d,
                                  const etc_perfdiff_unmatched *u)
{
	const etc_inspector *in =
	    u->in_baseline ? etc_perfdiff_baseline(d) : etc_perfdiff_current(d);
	etc_sbuf_puts(b, "    <testcase classname=\"");
	if (u->in_baseline)
		etc_sbuf_puts(b, "baseline.");
	block_label(b, in, u->block);
	etc_sbuf_puts(b, "\" name=\"");
	xml(b, u->name.ptr, u->name.len, NAME_MAX_BYTES);
	etc_sbuf_printf(b,
	                " (event %zu, instruction %d)\" time=\"0\">\n      <skipped "
	                "message=\"not compared: ",
	                u->event, u->instruction_id);
	int32_t input = etc_inspector_block(in, u->block)->bundled_input_index;
	if (u->whole_block) {
		etc_sbuf_puts(b, "block ");
		block_label(b, in, u->block);
		if (input >= 0)
			etc_sbuf_printf(b, " (input %d)", (int)input);
		etc_sbuf_printf(b, " of the %s has no counterpart in the %s",
		                u->in_baseline ? "baseline" : "current ETDump",
		                u->in_baseline ? "current ETDump" : "baseline");
	} else {
		etc_sbuf_printf(b, "the %s has no such event in its block",
		                u->in_baseline ? "current ETDump" : "baseline");
	}
	char num[ETC_FMT_NUM];
	etc_sbuf_printf(b, "; %s p50 ", u->in_baseline ? "baseline" : "current");
	etc_sbuf_put(b, num, etc_fmt_g(num, u->p50));
	etc_sbuf_puts(b, "\"/>\n    </testcase>\n");
}

static void perfdiff_suite(etc_sbuf *b, const etc_perfdiff *d)
{
	const etc_inspector *cur = etc_perfdiff_current(d), *base = etc_perfdiff_baseline(d);
	size_t skipped = perfdiff_skipped(d);
	/* suite_open's header, with the unmatched events as skipped testcases */
	etc_sbuf_puts(b, "  <testsuite name=\"etcompare performance gate");
	if (base) {
		etc_sbuf_puts(b, ": ");
		xmls(b, etc_etdump_name(etc_inspector_etdump(base)));
	}
	etc_sbuf_printf(b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
	                perfdiff_gated(d) + skipped, etc_perfdiff_failures(d), skipped);
	char num[ETC_FMT_NUM];
	for (size_t i = 0; i < etc_perfdiff_row_count(d); i++) {
		const etc_perfdiff_row *r = etc_perfdiff_row_at(d, i);
		if (!r->gated)
			continue;
		etc_sbuf_puts(b, "    <testcase classname=\"");
		if (cur && r->cur_block < etc_inspector_block_count(cur))
			block_label(b, cur, r->cur_block);
		else
			xml(b, r->block.ptr, r->block.len, NAME_MAX_BYTES);
		etc_sbuf_puts(b, "\" name=\"");
		xml(b, r->name.ptr, r->name.len, NAME_MAX_BYTES);
		/* the event index keeps repeated operators apart */
		etc_sbuf_printf(b, " (event %zu, instruction %d)\" time=\"0\"", r->cur_event,
		                r->instruction_id);
		if (!r->failed) {
			etc_sbuf_puts(b, "/>\n");
			continue;
		}
		etc_sbuf_puts(b, ">\n      <failure type=\"REGRESSION\" message=\"p50 ");
		etc_sbuf_put(b, num, etc_fmt_g(num, r->base_p50));
		etc_sbuf_puts(b, " -&gt; ");
		etc_sbuf_put(b, num, etc_fmt_g(num, r->cur_p50));
		etc_sbuf_printf(b, " (%+.2f%%), more than the allowed ", r->change_percent);
		etc_sbuf_put(b, num, etc_fmt_g(num, etc_perfdiff_options_get(d)->max_regression));
		etc_sbuf_puts(b, "%");
		if (r->fallback && base && r->base_block < etc_inspector_block_count(base)) {
			etc_sbuf_puts(b, "; compared with the baseline's ");
			block_label(b, base, r->base_block);
			etc_sbuf_puts(b, " (fallback: no baseline block of its own)");
		}
		etc_sbuf_puts(b, "\"/>\n    </testcase>\n");
	}
	for (size_t i = 0; i < etc_perfdiff_unmatched_count(d); i++)
		if (perfdiff_skips(etc_perfdiff_unmatched_at(d, i)))
			perfdiff_skipped_case(b, d, etc_perfdiff_unmatched_at(d, i));
	etc_sbuf_puts(b, "  </testsuite>\n");
}

/* One suite of one testcase `kind` holding the error `message`. */
static void error_suite(etc_sbuf *b, const char *kind, const char *message)
{
	etc_sbuf_puts(b, "  <testsuite name=\"etcompare\" tests=\"1\" failures=\"0\" "
	                 "errors=\"1\">\n"
	                 "    <testcase classname=\"etcompare\" name=\"");
	xmls(b, kind);
	etc_sbuf_puts(b, "\">\n      <error type=\"");
	xmls(b, kind);
	etc_sbuf_puts(b, "\" message=\"");
	xmls(b, message);
	etc_sbuf_puts(b, "\">");
	xmls(b, message);
	etc_sbuf_puts(b, "</error>\n    </testcase>\n  </testsuite>\n");
}

int etc_report_junit_gates(FILE *f, const etc_junit_gates *g, etc_error *err)
{
	if (!f || !g)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_junit_gates: NULL %s",
		                !f ? "out" : "g");
	if (g->accuracy && !g->insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_report_junit_gates: the accuracy gate needs its inspector");
	size_t tests = 0;
	if (g->accuracy)
		tests += accuracy_cases(g->accuracy, g->taps != NULL);
	if (g->taps)
		tests += etc_taps_row_count(g->taps);
	if (g->numgap)
		tests += etc_numgap_row_count(g->numgap) + etc_numgap_unmatched_count(g->numgap);
	for (size_t i = 0; g->numgap_more && i < g->numgap_more_count; i++)
		tests += etc_numgap_row_count(g->numgap_more[i]) +
		         etc_numgap_unmatched_count(g->numgap_more[i]);
	if (g->perfdiff && !isnan(etc_perfdiff_options_get(g->perfdiff)->max_regression))
		tests += perfdiff_gated(g->perfdiff) + perfdiff_skipped(g->perfdiff);
	etc_sbuf b = {0};
	etc_sbuf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	bool error = g->error_message != NULL;
	etc_sbuf_printf(&b,
	                "<testsuites name=\"etcompare\" tests=\"%zu\" failures=\"%zu\" "
	                "errors=\"%d\">\n",
	                tests + error, etc_junit_failures(g), error);
	if (g->accuracy)
		accuracy_suite(&b, g->accuracy, g->insp, g->taps != NULL);
	if (g->taps)
		taps_suite(&b, g->taps, g->insp);
	/* with further gaps, the first is named after its block too */
	if (g->numgap)
		numgap_suite(&b, g->numgap,
		             g->numgap_more_count ? etc_numgap_options_get(g->numgap)->block
		                                  : NULL);
	for (size_t i = 0; g->numgap_more && i < g->numgap_more_count; i++)
		numgap_suite(&b, g->numgap_more[i],
		             g->numgap_more_names
		                 ? g->numgap_more_names[i]
		                 : etc_numgap_options_get(g->numgap_more[i])->block);
	if (g->perfdiff && !isnan(etc_perfdiff_options_get(g->perfdiff)->max_regression))
		perfdiff_suite(&b, g->perfdiff); /* a diff without --max-regression is no gate */
	if (error)
		error_suite(&b, g->error_kind ? g->error_kind : "error", g->error_message);
	etc_sbuf_puts(&b, "</testsuites>\n");
	return etc_sbuf_write_(f, &b, "JUnit report", err);
}

int etc_report_junit_error(FILE *f, const char *kind, const char *message, etc_error *err)
{
	etc_sbuf b = {0};
	etc_sbuf_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	etc_sbuf_puts(&b, "<testsuites name=\"etcompare\" tests=\"1\" failures=\"0\" "
	                  "errors=\"1\">\n");
	error_suite(&b, kind, message);
	etc_sbuf_puts(&b, "</testsuites>\n");
	return etc_sbuf_write_(f, &b, "JUnit report", err);
}

int etc_report_junit(FILE *f, const etc_accuracy *acc, const etc_inspector *insp, etc_error *err)
{
	if (!acc || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_junit: NULL %s",
		                !acc ? "acc" : "insp");
	etc_junit_gates g = {acc, insp, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL};
	return etc_report_junit_gates(f, &g, err);
}
