/*
 * cmd_numgap.c - the numeric gap command of the CLI (see cmd_numgap.h): a
 * thin client of etcompare/numgap.h and the report writers.
 */
#include "cmd_numgap.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool numgap_wanted(const numgap_args *a)
{
	return a->reference_etdump || a->reference_intermediates;
}

int numgap_check_args(const numgap_args *a, bool have_etdump)
{
	if (a->reference_etdump && a->reference_intermediates)
		return usage_error("%s", "--reference-etdump and --reference-intermediates cannot "
		                         "be combined");
	if ((a->reference_debug_buffer || a->reference_etrecord) && !a->reference_etdump)
		return usage_error("%s", "--reference-debug-buffer and --reference-etrecord need "
		                         "--reference-etdump");
	if (a->reference_etdump && !a->reference_debug_buffer)
		return usage_error("%s", "--reference-etdump needs --reference-debug-buffer (the "
		                         "reference's intermediate outputs)");
	if ((a->distance || a->quant_params || a->layout) && !numgap_wanted(a))
		return usage_error("%s", "--distance, --quant-params and --layout belong to "
		                         "the numeric gap: give --reference-etdump or "
		                         "--reference-intermediates");
	int d;
	if (a->distance && etc_numgap_distance_parse(a->distance, &d) < 0)
		return usage_error("--distance %s: expected mse, l1 or snr", a->distance);
	if (a->layout && strcmp(a->layout, "auto") && strcmp(a->layout, "none"))
		return usage_error("--layout %s: expected auto or none", a->layout);
	if (a->tsv && !numgap_wanted(a))
		return usage_error("%s", "--numgap-tsv needs --reference-etdump or "
		                         "--reference-intermediates");
	if (numgap_wanted(a) && !have_etdump)
		return usage_error("%s", "the numeric gap needs --etdump and --debug_buffer");
	return 0;
}

static int open_reference(const numgap_args *a, const etc_etrecord *rec,
                          const etc_inspector_options *io, numgap_state *st,
                          etc_numgap_reference *ref)
{
	etc_error err;
	etc_error_clear(&err);
	if (a->reference_intermediates) {
		/* already open: the bundled example's, compiled in */
		if (!st->npz && etc_npz_open(&st->npz, a->reference_intermediates, &err) < 0)
			return input_error(&err);
		ref->npz = st->npz;
		ref->name = a->reference_intermediates;
		return 0;
	}
	if (etc_etdump_open(&st->dump, a->reference_etdump, &err) < 0 ||
	    etc_debug_buffer_open(&st->buf, a->reference_debug_buffer, &err) < 0)
		return input_error(&err);
	int rc = etc_inspector_create(&st->insp, st->dump, st->buf, io, &err);
	if (rc < 0)
		return rc == ETC_ERR_USAGE ? usage_error("%s", err.message) : input_error(&err);
	if (a->reference_etrecord) {
		if (etc_etrecord_open(&st->rec, a->reference_etrecord, &err) < 0)
			return input_error(&err);
		rec = st->rec;
	}
	/* the runtime's ETRecord keys the reference too, unless it has its own */
	if (rec && (rc = etc_inspector_link(st->insp, rec, a->method, &err)) < 0)
		return rc == ETC_ERR_USAGE ? usage_error("%s", err.message) : input_error(&err);
	ref->insp = st->insp;
	ref->name = a->reference_etdump;
	return 0;
}

static int write_tsv(const char *path, const etc_numgap *ng)
{
	etc_error err;
	etc_output *o = NULL;
	etc_error_clear(&err);
	int rc = etc_output_open(&o, path, &err);
	if (rc == 0 && (rc = etc_report_numgap_tsv(etc_output_stream(o), ng, &err)) < 0)
		etc_output_abort(o);
	else if (rc == 0)
		rc = etc_output_commit(o, &err);
	if (rc < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

int numgap_run(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
               const etc_inspector_options *io, numgap_state *st, int *gate)
{
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	if (parse_threshold("--min-snr", a->min_snr, &o.min_snr) ||
	    parse_threshold("--max-mse", a->max_mse, &o.max_mse) ||
	    parse_threshold("--min-cosine", a->min_cosine, &o.min_cosine) ||
	    parse_threshold("--max-abs", a->max_abs, &o.max_abs))
		return EXIT_USAGE;
	if (a->block)
		o.block = a->block;
	if (a->distance)
		etc_numgap_distance_parse(a->distance, &o.distance);
	if (a->layout && !strcmp(a->layout, "none"))
		o.layout = ETC_NUMGAP_LAYOUT_NONE;
	o.quant_params = a->quant_params;
	o.force = a->force;
	if (!etc_inspector_debug_buffer(insp))
		return usage_error("%s", "the numeric gap needs --debug_buffer (the intermediate "
		                         "outputs' values)");
	etc_numgap_reference ref = {NULL, NULL, NULL};
	int rc = open_reference(a, rec, io, st, &ref);
	if (rc)
		return rc;
	etc_error err;
	etc_error_clear(&err);
	rc = etc_numgap_run(&st->ng, insp, &ref, &o, &err);
	if (rc == ETC_ERR_USAGE)
		return usage_error("%s", err.message);
	if (rc < 0)
		return input_error(&err);
	for (size_t i = 0; i < etc_numgap_warning_count(st->ng); i++)
		fprintf(stderr, "etcompare: warning: %s\n", etc_numgap_warning(st->ng, i));
	if (etc_report_numgap(stdout, st->ng, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_OUTPUT;
	}
	fflush(stdout); /* the table before its verdict, also in one 2>&1 stream */
	long first = etc_numgap_first_divergence(st->ng);
	size_t n = etc_numgap_row_count(st->ng);
	if (first >= 0) {
		const etc_numgap_row *r = etc_numgap_row_at(st->ng, (size_t)first);
		/* debug-only ETDumps have no event names: the instruction says which */
		char instr[32], del[96];
		snprintf(instr, sizeof instr, "instruction %d", r->instruction_id);
		snprintf(del, sizeof del, "%.60s event %.20s", r->delegate_backend, r->event_name);
		const char *event = *r->delegate_backend ? del
		                    : *r->event_name     ? r->event_name
		                                         : instr;
		const char *what = *r->ops ? r->ops : event;
		char s0[512], s1[512], s2[512], s3[512], s4[512];
		fprintf(
		    stderr,
		    "etcompare: numeric gap: first divergence at row %ld of %zu: %s%s%s%s%s%s%s%s: "
		    "%s\n",
		    first, n, etc_text_safe(s0, sizeof s0, r->nodes), *r->nodes ? " " : "",
		    etc_text_safe(s1, sizeof s1, what), what != event ? " (" : "",
		    what != event ? etc_text_safe(s2, sizeof s2, event) : "",
		    what != event ? ")" : "", *r->source_line ? " at " : "",
		    etc_text_safe(s3, sizeof s3, r->source_line),
		    etc_text_safe(s4, sizeof s4, r->reason));
		*gate = EXIT_GATE;
	} else {
		fprintf(stderr,
		        "etcompare: numeric gap: %zu intermediate outputs pass, %zu unmatched\n", n,
		        etc_numgap_unmatched_count(st->ng));
	}
	if (a->tsv && (rc = write_tsv(a->tsv, st->ng)) != 0)
		return rc;
	return 0;
}

int numgap_plots(const numgap_state *st, const etc_plot_options *po, etc_plot_result *pr)
{
	etc_error err;
	etc_error_clear(&err);
	if (etc_report_numgap_plots(po, st->ng, pr, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return err.status == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
	}
	return 0;
}

void numgap_free(numgap_state *st)
{
	etc_numgap_free(st->ng);
	etc_inspector_free(st->insp);
	etc_npz_free(st->npz);
	etc_etrecord_free(st->rec);
	etc_debug_buffer_free(st->buf);
	etc_etdump_free(st->dump);
	memset(st, 0, sizeof *st);
}
