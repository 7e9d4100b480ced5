#define _POSIX_C_SOURCE 200809L
/*
 * etcompare.c - the command-line tool: parses arguments, calls the library,
 * prints and maps failures to exit codes. All logic lives in libetcompare;
 * this file includes only public headers.
 *
 * Exit codes: 0 ok, 1 accuracy or regression gate failed, 2 usage error,
 * 3 unreadable or invalid input, 4 an output file could not be written.
 */
#include "etcompare/etcompare.h"

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "cmd_legacy.h"
#include "cmd_methods.h"
#include "cmd_numgap.h"
#include "cmd_numgap_runs.h"
#include "cmd_profile.h"
#include "cmd_report.h"
#include "cmd_trace.h"
#include "delegate_scale.h"
#include "dir_snapshot.h"
#include "inputs.h"
#include "example_data.h"

typedef int (*writer_fn)(FILE *, const etc_inspector *, const etc_report_options *, etc_error *);

static int write_file(const char *path, writer_fn fn, const etc_inspector *insp,
                      const etc_report_options *ro)
{
	etc_error err;
	etc_output *o;
	etc_error_clear(&err);
	if (etc_output_open(&o, path, &err) < 0) {
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	int rc = fn(etc_output_stream(o), insp, ro, &err);
	if (rc < 0) {
		etc_output_abort(o);
		fprintf(stderr, "etcompare: error: %s: %s\n", path, err.message);
		return rc == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
	}
	if (etc_output_commit(o, &err) < 0) {
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

/* Reference files opened for the comparison; freed by main. */
typedef struct owned_refs {
	etc_torchsave *ts;
	etc_npz *npz;
	etc_bundled *bp;
	/* --tap-specs: kept for --json, the HTML report and JUnit */
	etc_tap_specs *specs;
	etc_taps *taps;
} owned_refs;

static int write_junit(const char *path, const etc_junit_gates *gates)
{
	etc_error err;
	etc_output *o;
	etc_error_clear(&err);
	o = NULL;
	if (etc_output_open(&o, path, &err) < 0 ||
	    etc_report_junit_gates(etc_output_stream(o), gates, &err) < 0) {
		if (o)
			etc_output_abort(o);
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	if (etc_output_commit(o, &err) < 0) {
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The progress bar on stderr (only on a terminal, for inputs over 256 MiB). */
typedef struct progress {
	struct timespec start;
	int last_percent;
} progress;

static void show_progress(void *ctx, uint64_t done, uint64_t total)
{
	progress *p = ctx;
	if (!total)
		return;
	int percent = (int)(done * 100 / total);
	if (percent == p->last_percent && done < total)
		return;
	p->last_percent = percent;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double secs =
	    (double)(now.tv_sec - p->start.tv_sec) + (now.tv_nsec - p->start.tv_nsec) / 1e9;
	char bar[41];
	int fill = percent * 40 / 100;
	for (int i = 0; i < 40; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[40] = '\0';
	fprintf(stderr, "\rcomparing [%s] %3d%%  %.2f GB/s", bar, percent,
	        secs > 0 ? (double)done / secs / 1e9 : 0.0);
	if (done >= total)
		fputc('\n', stderr);
}

/* "0 Default, 1 Execute#1, 2 Execute#2": the names --block takes, with their indices. */
static void block_list(const etc_inspector *insp, char *buf, size_t cap)
{
	size_t l = 0;
	buf[0] = '\0';
	for (size_t b = 0; b < etc_inspector_block_count(insp) && l + 1 < cap; b++) {
		char name[256], safe[256];
		cli_block_label(insp, b, name, sizeof name);
		etc_text_safe(safe, sizeof safe, name);
		int k = snprintf(buf + l, cap - l, "%s%zu %s", b ? ", " : "", b, safe);
		if (k < 0 || (size_t)k >= cap - l)
			break;
		l += (size_t)k;
	}
}

/*
 * --block: a block's name ("Execute": every block of that name), its name
 * with its index ("Execute#2") or its 0-based index alone ("2"), which
 * becomes the name the outputs give it. An index alone out of range is a
 * usage error; a name no block has ("Execute#9" too) is exit 3, as
 * --module naming no module. Both list the blocks.
 */
static int resolve_block(args *a, const etc_inspector *insp, char *buf, size_t cap)
{
	if (!a->block)
		return 0;
	size_t nb = etc_inspector_block_count(insp);
	const char *want = a->block;
	const char *hash = strrchr(want, '#');
	const char *digits = hash ? hash + 1 : want;
	size_t nd = strspn(digits, "0123456789");
	bool indexed = nd > 0 && !digits[nd] && nd < 10;
	char list[1024], msg[1400], safe[256];
	block_list(insp, list, sizeof list);
	if (indexed) {
		unsigned long idx = strtoul(digits, NULL, 10);
		size_t k = hash ? (size_t)(hash - want) : 0;
		const etc_event_block *blk = idx < nb ? etc_inspector_block(insp, idx) : NULL;
		if (blk && (!hash || (blk->name.len == k && !memcmp(blk->name.ptr, want, k)))) {
			cli_block_label(insp, idx, buf, cap);
			a->block = buf;
			return 0;
		}
		if (!hash) {
			snprintf(
			    msg, sizeof msg,
			    "--block %s: no block with index %lu (0-based; this ETDump has %zu: "
			    "%s)",
			    etc_text_safe(safe, sizeof safe, want), idx, nb, list);
			return usage_error("%s", msg);
		}
	}
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len == strlen(want) && !memcmp(blk->name.ptr, want, blk->name.len))
			return 0;
	}
	const char *best = NULL;
	char names[256], best_name[256];
	size_t best_d = SIZE_MAX;
	for (size_t b = 0; b < nb; b++) {
		/* the plain name ("Execute": all its blocks) before the indexed one */
		const etc_event_block *blk = etc_inspector_block(insp, b);
		snprintf(names, sizeof names, "%.*s",
		         (int)(blk->name.len < 200 ? blk->name.len : 200), blk->name.ptr);
		size_t d = etc_edit_distance(want, names, ETC_EDIT_FOLD_CASE);
		if (d > 2) {
			cli_block_label(insp, b, names, sizeof names);
			d = etc_edit_distance(want, names, ETC_EDIT_FOLD_CASE);
		}
		if (d < best_d && d <= 2) {
			best_d = d;
			snprintf(best_name, sizeof best_name, "%s", names);
			best = best_name;
		}
	}
	char sbest[256];
	snprintf(msg, sizeof msg, "--block \"%s\": no such block%s%s%s (this ETDump has: %s)",
	         etc_text_safe(safe, sizeof safe, want), best ? "; did you mean " : "",
	         best ? etc_text_safe(sbest, sizeof sbest, best) : "", best ? "?" : "",
	         nb ? list : "no block");
	cli_error(msg);
	return EXIT_INPUT;
}

/*
 * The ETRecord, the debug buffer and the BundledProgram belong to the
 * ETDump: an input of another model or run is refused (exit 3) before any
 * table or verdict, or only warned about with --force.
 */
static int check_belonging(const etc_inspector *insp, const etc_bundled *bp, bool force)
{
	int (*const check[])(const etc_inspector *, const char *,
	                     etc_error *) = {etc_check_etrecord, etc_check_debug_buffer};
	const char *const fix[] = {"--etrecord", "--debug_buffer", "--bundled-program"};
	for (size_t i = 0; i < 3; i++) {
		etc_error err;
		etc_error_clear(&err);
		int rc = i < 2 ? check[i](insp, fix[i], &err)
		               : etc_check_bundled_program(insp, bp, fix[i], &err);
		if (rc == ETC_ERR_MISMATCH && force) {
			fprintf(stderr, "etcompare: warning: %s (--force: compared anyway)\n",
			        err.message);
		} else if (rc == ETC_ERR_MISMATCH) {
			char msg[sizeof err.message + 64];
			snprintf(msg, sizeof msg, "%s (or --force to compare anyway)", err.message);
			cli_error(msg);
			return EXIT_INPUT;
		} else if (rc < 0) {
			return input_error(&err);
		}
	}
	return 0;
}

/*
 * Reference outputs of another program: not one output could be compared
 * (no row compared, and outputs whose shapes fit no reference). Exit 3
 * unless --force.
 */
static int check_references(const etc_accuracy *acc, const etc_inspector *insp, bool force)
{
	size_t n = etc_accuracy_row_count(acc);
	const etc_accuracy_row *bad = NULL;
	/* runs that logged no output at all (--block Default: init and load) */
	size_t empty = 0;
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		empty += r->status == ETC_ROW_MISSING_OUTPUT &&
		         !strncmp(r->reason, "the run has 0 ", 14);
	}
	if (n && empty == n) {
		const etc_event_block *b =
		    etc_inspector_block(insp, etc_accuracy_row_at(acc, 0)->block);
		char name[256], list[1024], msg[1400];
		etc_text_escape(name, sizeof name, b->name.ptr, b->name.len);
		block_list(insp, list, sizeof list);
		snprintf(msg, sizeof msg,
		         "block \"%.200s\" logged no program outputs: nothing to compare; give "
		         "--block the block that ran the model (this ETDump has: %.900s)",
		         name, list);
		cli_error(msg);
		return EXIT_INPUT;
	}
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, i);
		if (r->has_metrics || r->status == ETC_ROW_NO_DATA || r->status == ETC_ROW_PASS ||
		    r->status == ETC_ROW_FAIL)
			return 0;
		/* unpaired runs are the pairing's verdict; a shape that fits no output is not */
		if (!bad && r->status == ETC_ROW_SHAPE_MISMATCH)
			bad = r;
	}
	if (!bad)
		return 0;
	char safe[1024], reason[256];
	/* the rows' shapes elide the middle of a long one with a marker: never cut */
	snprintf(reason, sizeof reason, "run %u output %u: shape %s against reference %s", bad->run,
	         bad->output, bad->shape, bad->reference_shape);
	snprintf(safe, sizeof safe,
	         "ETDump %s and %s do not belong together: none of the %zu "
	         "outputs can be compared (first: %s); give the reference outputs of this "
	         "program (--etrecord, --reference-outputs or --bundled-program)",
	         etc_etdump_name(etc_inspector_etdump(insp)), etc_accuracy_reference_source(acc), n,
	         reason);
	if (force) {
		fprintf(stderr, "etcompare: warning: %s (--force: compared anyway)\n", safe);
		return 0;
	}
	char msg[sizeof safe + 64];
	snprintf(msg, sizeof msg, "%s (or --force to compare anyway)", safe);
	cli_error(msg);
	return EXIT_INPUT;
}

/* The ETRecord has reference outputs, but they could not be read: bad input. */
static int unreadable_references(const etc_etrecord *rec)
{
	char safe[1024], msg[1100];
	snprintf(msg, sizeof msg, "the ETRecord's reference_outputs cannot be read: %s",
	         etc_text_safe(safe, sizeof safe, etc_etrecord_reference_error(rec)));
	cli_error(msg);
	return EXIT_INPUT;
}

/*
 * The accuracy comparison: reference outputs from --reference-outputs or
 * the ETRecord, the table on stdout, the gate's verdict on stderr. Returns
 * 0 or an exit code; *status becomes 1 when the gate fails.
 */
/* The tap table (after the accuracy table's place: taps are not in it), the
 * optional --tap-json, and the taps' share of the exit status. */
static int report_taps(const args *a, const etc_taps *taps, const etc_inspector *insp, int *status)
{
	etc_error err = {0};
	if (etc_report_taps(stdout, taps, insp, &err) < 0) {
		cli_stdout_error(&err);
		return EXIT_OUTPUT;
	}
	if (a->tap_json) {
		FILE *f = fopen(a->tap_json, "w");
		int rc = f ? etc_report_taps_json(f, taps, insp, &err) : -1;
		if (f && fclose(f) != 0 && rc == 0)
			rc = -1;
		if (rc < 0) {
			fprintf(stderr, "etcompare: error: cannot write %s: %s\n", a->tap_json,
			        f ? err.message : strerror(errno));
			return EXIT_OUTPUT;
		}
	}
	size_t fails = etc_taps_failures(taps);
	if (fails) {
		fprintf(stderr, "etcompare: taps FAILED: %zu of %zu taps fail\n", fails,
		        etc_taps_row_count(taps));
		*status = 1;
	}
	return 0;
}

static int compare(args *a, const etc_inspector *insp, const etc_etrecord *rec,
                   etc_report_options *ro, owned_refs *owned, int *status)
{
	etc_error err;
	etc_error_clear(&err);
	etc_accuracy_options ao;
	etc_accuracy_options_init(&ao);
	if (parse_threshold("--min-snr", a->min_snr, &ao.min_snr) ||
	    parse_threshold("--max-mse", a->max_mse, &ao.max_mse) ||
	    parse_threshold("--min-cosine", a->min_cosine, &ao.min_cosine) ||
	    parse_threshold("--max-abs", a->max_abs, &ao.max_abs))
		return EXIT_USAGE;
	if (a->block)
		ao.block = a->block;
	if (a->method)
		ao.method = a->method;
	if (a->pair_by) {
		if (!strcmp(a->pair_by, "index"))
			ao.pair_by = ETC_PAIR_INDEX;
		else if (!strcmp(a->pair_by, "order"))
			ao.pair_by = ETC_PAIR_ORDER;
		else if (!strcmp(a->pair_by, "content"))
			ao.pair_by = ETC_PAIR_CONTENT;
		else
			ao.pair_by = ETC_PAIR_ALL; /* checked by cli_parse */
	}
	ao.strict_pairing = a->strict_pairing;
	unsigned mask = 0x1 | 0x2 | 0x4 | 0x10;
	if (a->metrics && etc_metric_mask_parse(a->metrics, &mask) < 0)
		return usage_error(
		    "--metrics takes a list of snr,mse,cosine,l1,max_abs,max_rel, not "
		    "'%s'",
		    a->metrics);
	a->metric_mask = mask;
	if (!etc_inspector_debug_buffer(insp))
		return usage_error("%s",
		                   "the comparison needs --debug_buffer (the outputs' values)");
	etc_reference_set set = {0};
	if (a->bundled_program) {
		/* the BundledProgram the runtime ran (opened by main): it wins over the
		 * ETRecord's copy */
		set.bundled = owned->bp;
		set.name = a->bundled_program;
		if (!a->method && etc_bundled_method_count(owned->bp) == 1)
			ao.method = etc_bundled_method_name(owned->bp, 0).ptr;
		if (rec &&
		    (etc_etrecord_reference_outputs(rec) || etc_etrecord_reference_error(rec)))
			fprintf(
			    stderr,
			    "etcompare: note: the reference outputs come from --bundled-program; "
			    "the ETRecord's reference_outputs are not used\n");
	} else if (a->reference_outputs) {
		set.name = a->reference_outputs;
		int rc = ends_with(a->reference_outputs, ".npz") ||
		                 ends_with(a->reference_outputs, ".npy")
		             ? etc_npz_open(&owned->npz, a->reference_outputs, &err)
		             : etc_torchsave_open(&owned->ts, a->reference_outputs, &err);
		if (rc < 0)
			return input_error(&err);
		cli_warning(owned->npz ? etc_npz_warning(owned->npz)
		                       : etc_torchsave_warning(owned->ts));
		set.npz = owned->npz;
		set.torchsave = owned->ts;
	} else if (rec && etc_etrecord_reference_outputs(rec)) {
		set.torchsave = etc_etrecord_reference_outputs(rec);
		set.name = etc_etrecord_name(rec);
	} else if (rec && etc_etrecord_reference_error(rec)) {
		return unreadable_references(rec);
	} else {
		return usage_error("%s", "the comparison needs reference outputs: an --etrecord "
		                         "that has them, or --reference-outputs FILE");
	}
	progress prog = {{0, 0}, -1};
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	if (isatty(fileno(stderr)) && etc_debug_buffer_size(buf) > ((uint64_t)256 << 20)) {
		clock_gettime(CLOCK_MONOTONIC, &prog.start);
		ao.progress = show_progress;
		ao.progress_ctx = &prog;
	}
	etc_accuracy *acc;
	int rc = etc_accuracy_run(&acc, insp, &set, &ao, &err);
	if (rc < 0)
		return input_error(&err);
	ro->accuracy = acc;
	if ((rc = check_references(acc, insp, a->numgap.force)) != 0)
		return rc;
	etc_tap_specs *specs = NULL;
	etc_taps *taps = NULL;
	if (a->tap_specs) {
		etc_tap_options to;
		etc_tap_options_init(&to);
		if (a->max_stat_rel_diff &&
		    etc_tap_options_parse_rel_diff(&to, a->max_stat_rel_diff, &err) < 0)
			return usage_error("%s", err.message);
		if (etc_tap_specs_load(&specs, a->tap_specs, &err) < 0)
			return input_error(&err);
		etc_accuracy_mark_taps(acc, etc_tap_specs_first_output(specs));
		if (etc_taps_run(&taps, acc, specs, &to, &err) < 0) {
			etc_tap_specs_free(specs);
			return input_error(&err);
		}
	} else if (a->max_stat_rel_diff || a->tap_json) {
		return usage_error("%s",
		                   "--max-stat-rel-diff and --tap-json need --tap-specs FILE.json");
	}
	char safe[1024];
	if (set.bundled) /* it may replace the ETRecord's references: say whose they are */
		printf("reference outputs: %s\n",
		       etc_text_safe(safe, sizeof safe, etc_accuracy_reference_source(acc)));
	if (etc_report_accuracy(stdout, acc, insp, mask, &err) < 0) {
		cli_stdout_error(&err);
		etc_taps_free(taps);
		etc_tap_specs_free(specs);
		return EXIT_OUTPUT;
	}
	size_t n = 0, fails = etc_accuracy_failures(acc);
	for (size_t i = 0; i < etc_accuracy_row_count(acc); i++)
		n += !etc_accuracy_row_is_tap(acc, i);
	long w = etc_accuracy_worst(acc);
	char worst[768] = "", name[256], reason[256];
	if (w >= 0) {
		const etc_accuracy_row *r = etc_accuracy_row_at(acc, (size_t)w);
		const etc_event_block *b = etc_inspector_block(insp, r->block);
		etc_text_escape(name, sizeof name, b->name.ptr, b->name.len);
		/* what tells it apart when two blocks share the name */
		unsigned parts = etc_report_accuracy_id_parts(acc, insp);
		char blk[24] = "", ref[24] = "";
		for (size_t i = 0; i < etc_inspector_block_count(insp); i++) {
			const etc_event_block *o = etc_inspector_block(insp, i);
			if (i != r->block && o->name.len == b->name.len &&
			    (!o->name.len || !memcmp(o->name.ptr, b->name.ptr, o->name.len)))
				parts |=
				    ETC_ACCURACY_ID_BLOCK; /* "Execute#2", as --block takes it */
		}
		if (parts & ETC_ACCURACY_ID_BLOCK)
			snprintf(blk, sizeof blk, "#%u", r->block);
		if ((parts & ETC_ACCURACY_ID_REF) && r->reference >= 0)
			snprintf(ref, sizeof ref, " ref %d", r->reference);
		char run[48] = "";
		if (r->etdump_run != UINT32_MAX) /* the block's run and the ETDump's */
			snprintf(run, sizeof run, " (ETDump run %u)", r->etdump_run);
		if (r->status == ETC_ROW_PASS)
			snprintf(worst, sizeof worst,
			         "; worst: %s%s run %u%s output %u%s at SNR %.4g dB", name, blk,
			         r->run, ref, r->output, run, r->metrics.snr_db);
		else
			snprintf(worst, sizeof worst, "; worst: %s%s run %u%s output %u%s: %s",
			         name, blk, r->run, ref, r->output, run,
			         etc_text_safe(reason, sizeof reason, r->reason));
	}
	fflush(stdout); /* the table before its verdict, also in one 2>&1 stream */
	if (fails) {
		fprintf(stderr, "etcompare: accuracy gate FAILED: %zu of %zu outputs fail%s\n",
		        fails, n, worst);
		*status = 1;
	} else if (!etc_accuracy_gated(acc)) {
		/* --compare alone: the numbers, no verdict */
		fprintf(
		    stderr,
		    "etcompare: accuracy: %zu output%s compared, no gate (--min-snr, --max-mse, "
		    "--min-cosine or --max-abs sets one)%s\n",
		    n, n == 1 ? "" : "s", worst);
	} else {
		fprintf(stderr, "etcompare: accuracy: %zu of %zu outputs pass%s\n", n, n, worst);
	}
	int trc = taps ? report_taps(a, taps, insp, status) : 0;
	owned->taps = taps;
	owned->specs = specs;
	ro->taps = taps;
	return trc;
}

/*
 * The bundled example (examples/make_example.py), compiled in: a device
 * ETDump of 3 runs and its debug buffer, and the ETRecord with the
 * reference outputs, the graph's weights and inputs (the reference executor
 * runs it: the numeric gap, in which layer_norm diverges). It runs the whole
 * flow: profiling table, accuracy gate (--min-snr 30 unless a threshold is
 * given), numeric gap and, unless `plots` is false (a bare
 * `etcompare`), the plots. Options given on the command line win; with an
 * output option (--tsv, --csv, --json, --trace, --show-outputs) no plots are
 * drawn: the result is what the same command on its files (examples/) with
 * --min-snr 30 gives, numeric gap included.
 */
static int example_open(args *a, bool plots, etc_etdump **dump, etc_debug_buffer **buf,
                        etc_etrecord **rec)
{
	etc_error err;
	etc_error_clear(&err);
	if (etc_etdump_wrap(dump, etc_example_etdump, sizeof etc_example_etdump, "example.etdp",
	                    &err) < 0 ||
	    etc_debug_buffer_wrap(buf, etc_example_debug, sizeof etc_example_debug,
	                          "example_debug.bin", &err) < 0)
		return input_error(&err);
	if (*rec)
		return 0; /* the user's --etrecord: their references, no example gap */
	if (etc_etrecord_wrap(rec, etc_example_etrecord, sizeof etc_example_etrecord,
	                      "example.etrecord", &err) < 0)
		return input_error(&err);
	/* the numeric gap comes from the ETRecord alone: its graph, weights and
	 * inputs; one gate whatever is written, so every output says the same */
	if (!a->min_snr && !a->max_mse && !a->min_cosine && !a->max_abs)
		a->min_snr = "30";
	if (a->tsv || a->csv || a->json || a->trace || a->show_outputs)
		return 0; /* the output asked for is what the user gets: no plots */
	a->plot = a->plot || plots;
	return 0;
}

/* The input files for the HTML report (the example's are built in). */
static size_t report_inputs(const args *a, report_input in[12])
{
	size_t nin = 0;
	if (a->example) {
		in[nin++] = (report_input){"ETDump", "example.etdp", etc_example_etdump,
		                           sizeof etc_example_etdump};
		in[nin++] = (report_input){"debug buffer", "example_debug.bin", etc_example_debug,
		                           sizeof etc_example_debug};
		in[nin++] = (report_input){"ETRecord", "example.etrecord", etc_example_etrecord,
		                           sizeof etc_example_etrecord};
	}
	const char *const files[][2] = {
	    {"ETDump", a->example ? NULL : a->etdump},
	    {"debug buffer", a->example ? NULL : a->debug_buffer},
	    {"ETRecord", a->etrecord},
	    {"reference outputs", a->reference_outputs},
	    {"BundledProgram", a->bundled_program},
	    {"reference ETDump", a->numgap.reference_etdump},
	    {"reference debug buffer", a->numgap.reference_debug_buffer},
	    {"reference ETRecord", a->numgap.reference_etrecord},
	    {"reference intermediates", a->numgap.reference_intermediates},
	    {"baseline ETDump", a->baseline_etdump}};
	for (size_t i = 0; i < sizeof files / sizeof files[0] && nin < 12; i++)
		if (files[i][1] && !a->example) /* the example's files are built in */
			in[nin++] = (report_input){files[i][0], files[i][1], NULL, 0};
	return nin;
}

/*
 * A run that stops with exit 3 or 4 still leaves its --junit and --report
 * files (when they are not what failed): CI then shows the error, not a
 * missing artifact.
 */
static void error_artifacts(int argc, char **argv, const args *a, const run_results *r, int status,
                            bool junit_done, bool report_done)
{
	const char *msg = cli_last_error();
	char text[1200];
	snprintf(text, sizeof text, "exit %d (%s): %s", status,
	         status == EXIT_OUTPUT ? "an output could not be written" : "invalid input",
	         *msg ? msg : "see the command's log");
	if (a->junit && !junit_done) {
		etc_error err;
		etc_output *o = NULL;
		etc_error_clear(&err);
		if (etc_output_open(&o, a->junit, &err) < 0) {
			fprintf(stderr, "etcompare: error: %s\n", err.message);
		} else if (etc_report_junit_error(etc_output_stream(o),
		                                  status == EXIT_OUTPUT ? "output" : "inputs", text,
		                                  &err) < 0) {
			etc_output_abort(o);
			fprintf(stderr, "etcompare: error: %s\n", err.message);
		} else if (etc_output_commit(o, &err) < 0) {
			fprintf(stderr, "etcompare: error: %s\n", err.message);
		}
	}
	if (a->report && !report_done)
		cli_error_report(argc, argv, a, r, status, msg);
}

/*
 * With an output on standard output (`--json -`), stdout is for that data
 * alone: fd 1 is pointed at stderr for the tables and messages, and the
 * data's stdout (returned, -1 when none) comes back with data_stdout.
 */
static int tables_to_stderr(const args *a)
{
	const char *out[] = {a->tsv, a->csv, a->json, a->trace, a->junit, a->numgap.tsv, a->report};
	bool dash = false;
	for (size_t i = 0; i < sizeof out / sizeof *out; i++)
		dash |= out[i] && strcmp(out[i], "-") == 0;
	if (!dash)
		return -1;
	fflush(stdout);
	int fd = dup(STDOUT_FILENO);
	if (fd >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The data's standard output back on fd 1 (see tables_to_stderr). */
static void data_stdout(int *fd)
{
	if (*fd < 0)
		return;
	fflush(stdout);
	dup2(*fd, STDOUT_FILENO);
	close(*fd);
	*fd = -1;
}

/* Are a and b the same file (device and inode)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b && strcmp(a, "-") && strcmp(b, "-") && stat(a, &sa) == 0 &&
	       stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Every output path checked before any file is read or written; *failed
 * gets the output that cannot be written (an exit 4), else NULL. */
static int check_outputs(const args *a, const char **failed)
{
	*failed = NULL;
	const char *out[] = {a->tsv, a->csv, a->json, a->trace, a->junit, a->numgap.tsv, a->report};
	const char *in[CLI_MAX_INPUTS];
	size_t nin = cli_input_paths(a, in);
	/* --plot DIR naming an input file (`--plot example.etdp`) */
	for (size_t i = 0; a->plot_dir && i < nin; i++) {
		if (same_file(a->plot_dir, in[i]))
			return usage_error(
			    "--plot %s: this is an input file, not the plot directory",
			    a->plot_dir);
	}
	etc_error err;
	etc_error_clear(&err);
	int rc;
	/* a folder whose index.txt is someone else's: refused now, not after the run */
	if (a->plot && (rc = etc_plot_dir_check(cli_plot_dir(a), &err)) < 0) {
		if (rc != ETC_ERR_IO)
			return usage_error("%s", err.message);
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	rc = etc_output_check(out, sizeof out / sizeof *out, in, nin, &err);
	if (rc == ETC_ERR_USAGE)
		return usage_error("%s", err.message);
	if (rc < 0) {
		for (size_t i = 0; i < sizeof out / sizeof *out; i++)
			if (out[i] && !strcmp(out[i], err.file))
				*failed = out[i];
		cli_error(err.message);
		return EXIT_OUTPUT;
	}
	return 0;
}

/*
 * An input or output found wrong before the run (exit 3 or 4): the --junit
 * and --report files are still written with the error, unless one of them
 * is the output that failed.
 */
static int early_error(int argc, char **argv, const args *a, int status, const char *failed)
{
	if (status != EXIT_INPUT && status != EXIT_OUTPUT)
		return status;
	report_input in[12];
	size_t nin = report_inputs(a, in);
	run_results res = {NULL, NULL, NULL, NULL, EXIT_OK, in, nin, NULL, NULL, NULL};
	error_artifacts(argc, argv, a, &res, status, failed && failed == a->junit,
	                failed && failed == a->report);
	return status;
}

typedef struct main_args {
	int argc;
	char **argv;
} main_args;

/* A reference run that is the run itself compares every op equal with
 * itself: a gate then passes on nothing (a copy-paste mistake). Said. */
static void check_self_reference(const args *a)
{
	const numgap_args *g = &a->numgap;
	if (!same_file(g->reference_etdump, a->etdump))
		return;
	if (g->reference_debug_buffer && !same_file(g->reference_debug_buffer, a->debug_buffer))
		return;
	char s[512];
	fprintf(stderr,
	        "etcompare: warning: --reference-etdump %s is the run's own ETDump%s: every op "
	        "compares equal with itself, so the numeric gap shows nothing; give the "
	        "reference run of another backend (or leave it out: the ETRecord's graph is the "
	        "reference)\n",
	        etc_text_safe(s, sizeof s, g->reference_etdump),
	        g->reference_debug_buffer ? " (and --reference-debug-buffer its debug buffer)"
	                                  : "");
}

/*
 * Standard output flushed and checked, at the end of every path that prints
 * on it: a printout lost (a full disk, /dev/full) is exit 4 with a message,
 * never a silent success. A status that is already an output error said
 * its message; a usage or input error keeps its code.
 */
static int check_stdout(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	if (status == EXIT_OUTPUT)
		return status;
	cli_error("cannot write to standard output");
	return status == EXIT_OK || status == EXIT_GATE ? EXIT_OUTPUT : status;
}

static int run(void *ctx)
{
	int argc = ((main_args *)ctx)->argc;
	char **argv = ((main_args *)ctx)->argv;
	args a;
	int rc = cli_parse(argc, argv, &a);
	if (rc)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (a.reference_ops) {
		/* the ops the reference executor computes (the numeric gap from a graph) */
		const char *in[CLI_MAX_INPUTS];
		size_t nin = cli_input_paths(&a, in), given = 0;
		for (size_t i = 0; i < nin; i++)
			given += in[i] != NULL;
		if (given || a.example)
			fprintf(stderr, "etcompare: note: --reference-ops lists the reference "
			                "executor's ops and exits: the files given are not read\n");
		for (size_t i = 0; i < etc_reference_op_count(); i++)
			printf("%s\n", etc_reference_op_name(i));
		return check_stdout(EXIT_OK);
	}
	const char *failed = NULL;
	if ((rc = check_outputs(&a, &failed)) != 0)
		return early_error(argc, argv, &a, rc, failed);
	if ((rc = check_inputs(&a)) != 0)
		return early_error(argc, argv, &a, rc, NULL);
	check_self_reference(&a);
	int data_fd = tables_to_stderr(&a);
	if (a.legacy_profile) {
		rc = etc_cli_legacy(a.legacy_profile, a.legacy_time_scale);
		if (rc || (!a.etdump && !a.example && !a.etrecord))
			return rc;
	}
	/* a bare `etcompare` is a usage error: the example is --example */
	const bool bare = false;
	if (!a.etdump && !a.example && !a.etrecord) {
		if (argc > 1)
			return usage_error("%s", "no --etdump given (use --example for the bundled "
			                         "example)");
		fprintf(stderr,
		        "usage: etcompare --etdump FILE [--debug_buffer FILE] [--etrecord "
		        "FILE] [options]\n"
		        "       etcompare --example   (the bundled example, with its plots)\n"
		        "Try 'etcompare --help'.\n");
		return EXIT_USAGE;
	}
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	io.strict = a.strict;
	if (a.source_scale && etc_time_scale_parse(a.source_scale, &io.source_time_scale) < 0)
		return usage_error("unknown time scale '%s' (ns, us, ms, s or cycles)",
		                   a.source_scale);
	if (a.target_scale && etc_time_scale_parse(a.target_scale, &io.target_time_scale) < 0)
		return usage_error("unknown time scale '%s' (ns, us, ms, s or cycles)",
		                   a.target_scale);
	if ((io.source_time_scale == ETC_TIME_CYCLES) != (io.target_time_scale == ETC_TIME_CYCLES))
		return usage_error("%s", "for cycles both --source_time_scale and "
		                         "--target_time_scale have to be cycles");
	delegate_scales ds;
	delegate_scales_init(&ds, &a, &io);

	etc_error err;
	etc_error_clear(&err);
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	etc_etrecord *rec = NULL;
	int status = EXIT_OK, gate = EXIT_OK;
	bool junit_done = false, report_done = false;
	int late = 0; /* an output error after the gates ran (the plots) */
	char late_text[1200] = "";
	owned_refs owned = {NULL, NULL, NULL, NULL, NULL};
	numgap_state ng;
	memset(&ng, 0, sizeof ng);
	numgap_runs runs;
	memset(&runs, 0, sizeof runs);
	const char *etdump_label = a.etdump ? a.etdump : "(example)";
	profile_cmd pc;
	if ((rc = cmd_profile_init(&pc, a.tables, a.baseline_etdump, a.max_regression,
	                           a.min_event_time)) != 0)
		return rc;
	pc.force = a.numgap.force;
	etc_report_options ro;
	etc_report_options_init(&ro);
	ro.include_delegate_debug_data = a.include_delegate_debug_data;
	ro.max_values = a.max_values;
	/* --plot, --report: gnuplot starts now, loading its fonts while the
	 * files are read and compared (without it the plots come later, as
	 * etc_plot_batch_run starts gnuplot) */
	etc_plot_batch *batch = NULL;
	if ((a.plot || a.report) && etc_plot_batch_create(&batch, &err) == 0)
		(void)etc_plot_batch_start(batch, NULL, &err);
	etc_error_clear(&err);

	if (a.etrecord) {
		if (etc_etrecord_open(&rec, a.etrecord, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
		char safe[1024];
		for (size_t i = 0; i < etc_etrecord_warning_count(rec); i++)
			fprintf(stderr, "etcompare: warning: %s\n",
			        etc_text_safe(safe, sizeof safe, etc_etrecord_warning(rec, i)));
		delegate_scales_link(&ds, rec, a.method);
		/* a comparison that needs the unreadable references fails before any work */
		if (a.etdump && !a.reference_outputs && !a.bundled_program &&
		    !numgap_wanted(&a.numgap) &&
		    (a.compare || a.min_snr || a.max_mse || a.min_cosine || a.max_abs) &&
		    etc_etrecord_reference_error(rec)) {
			status = unreadable_references(rec);
			goto out;
		}
		if (a.graph &&
		    (rc = etc_report_graph(stdout, rec, a.graph_method ? a.graph_method : a.method,
		                           &err)) < 0) {
			/* --graph NAME or --method NAME naming no graph of the record is
			 * exit 3, as --module naming no module (docs/ci-gate.md) */
			status = rc == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
			cli_stdout_error(&err);
			goto out;
		}
		if (a.show_references && a.method && etc_etrecord_method_index(rec, a.method) < 0) {
			/* the references are printed for every method: a name that is not
			   one is the user's mistake, said rather than ignored */
			char safe[256];
			fprintf(
			    stderr,
			    "etcompare: error: %s: the ETRecord has no method \"%s\"; "
			    "--show-references prints every method's references: leave --method "
			    "out\n",
			    a.etrecord, etc_text_safe(safe, sizeof safe, a.method));
			status = EXIT_INPUT;
			goto out;
		}
		if (a.show_references && etc_report_references(stdout, rec, &ro, &err) < 0) {
			status = EXIT_OUTPUT;
			cli_stdout_error(&err);
			goto out;
		}
		if (!a.etdump) { /* --graph, --show-references: printed, checked */
			status = check_stdout(status);
			goto out;
		}
	}

	/* verified before any work: a bad BundledProgram prints no table */
	if (a.bundled_program && etc_bundled_open(&owned.bp, a.bundled_program, &err) < 0) {
		status = input_error(&err);
		goto out;
	}
	if (a.example) {
		if ((rc = example_open(&a, !bare, &dump, &buf, &rec)) != 0) {
			status = rc;
			goto out;
		}
	} else {
		if (etc_etdump_open(&dump, a.etdump, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
		if (a.debug_buffer && etc_debug_buffer_open(&buf, a.debug_buffer, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
	}
	if (buf && a.max_inflate)
		etc_debug_buffer_set_max_inflate(buf, a.max_inflate, NULL); /* checked in args.c */
	/* A trace alone needs no Inspector: write it straight from the ETDump. */
	if (a.trace && a.no_table && !a.tsv && !a.csv && !a.json && !a.show_outputs && !rec &&
	    !a.compare && !a.plot && !a.report && !a.min_snr && !a.max_mse && !a.min_cosine &&
	    !a.max_abs) {
		status = etc_cli_trace(a.trace, dump, io.source_time_scale);
		goto out;
	}
	rc = etc_inspector_create(&insp, dump, buf, &io, &err);
	if (rc < 0) {
		status = rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT;
		cli_error(err.message);
		goto out;
	}
	if (rec && (rc = etc_inspector_link(insp, rec, a.method, &err)) < 0) {
		/* --method naming no method of the record: a name not in the inputs */
		status = EXIT_INPUT;
		cli_error(err.message);
		goto out;
	}
	if ((rc = delegate_scales_check(&ds, insp)) != 0) {
		status = rc;
		goto out;
	}
	if ((rc = check_belonging(insp, owned.bp, a.numgap.force)) != 0) {
		status = rc;
		goto out;
	}
	char block_name[256];
	if ((rc = resolve_block(&a, insp, block_name, sizeof block_name)) != 0) {
		status = rc;
		goto out;
	}
	char safe[1024];
	if (etc_etdump_trailing_bytes(dump))
		fprintf(stderr,
		        "etcompare: warning: %s: %llu bytes after the size-prefixed ETDump are "
		        "ignored\n",
		        etc_text_safe(safe, sizeof safe, etc_etdump_name(dump)),
		        (unsigned long long)etc_etdump_trailing_bytes(dump));
	if (etc_inspector_block_count(insp) == 0)
		fprintf(stderr, "etcompare: note: %s has no run with events: the table is empty\n",
		        etc_text_safe(safe, sizeof safe, etc_etdump_name(dump)));
	for (size_t i = 0; i < etc_inspector_warning_count(insp); i++) {
		if (i == 20) {
			fprintf(stderr,
			        "etcompare: warning: ... and %zu more warnings (see --json)\n",
			        etc_inspector_warning_count(insp) - i);
			break;
		}
		char safe[1024];
		fprintf(stderr, "etcompare: warning: %s\n",
		        etc_text_safe(safe, sizeof safe, etc_inspector_warning(insp, i)));
	}

	if ((rc = cmd_profile_print(&pc, insp, a.no_table, &ro, &gate)) != 0) {
		status = rc;
		goto out;
	}
	if (a.show_outputs) {
		if (!buf)
			fprintf(stderr, "etcompare: note: no --debug_buffer given: tensors have "
			                "shapes but no values\n");
		if ((rc = etc_report_outputs(stdout, insp, &ro, &err)) < 0) {
			status = rc == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
			cli_stdout_error(&err);
			goto out;
		}
	}
	if (a.module && (rc = cmd_profile_module(insp, a.module)) != 0) {
		status = rc;
		goto out;
	}
	if (!a.compare_explicit) {
		bool thresholds = a.min_snr || a.max_mse || a.min_cosine || a.max_abs;
		bool refs = rec && etc_etrecord_reference_outputs(rec) && buf;
		if ((thresholds || a.plot || a.report) && refs)
			a.compare = true;
		else if (thresholds && !numgap_wanted(&a.numgap) && rec &&
		         etc_etrecord_reference_error(rec)) {
			status = unreadable_references(rec);
			goto out;
		} else if (thresholds && !numgap_wanted(&a.numgap) &&
		           !numgap_graph_mode(&a.numgap, rec != NULL, buf != NULL)) {
			status = usage_error(
			    "%s", "the thresholds need something to compare: --debug_buffer and an "
			          "--etrecord with reference outputs, or --reference-outputs FILE");
			goto out;
		}
	}
	if (a.compare && !a.block && !a.method && !a.reference_outputs &&
	    methods_with_blocks(insp, rec)) {
		/* every method: each EventBlock named after a method against that
		 * method's references; the first method's table feeds the reports */
		for (size_t m = 0; m < etc_etrecord_method_count(rec) && status == 0; m++) {
			const char *name = etc_etrecord_method(rec, m);
			bool found = false;
			for (size_t b = 0; b < etc_inspector_block_count(insp) && !found; b++) {
				const etc_event_block *blk = etc_inspector_block(insp, b);
				found = blk->name.len == strlen(name) &&
				        memcmp(blk->name.ptr, name, blk->name.len) == 0;
			}
			if (!found)
				continue;
			printf("accuracy of method %s (EventBlock %s):\n", name, name);
			etc_report_options one = ro;
			one.accuracy = NULL;
			a.block = a.method = name;
			rc = compare(&a, insp, rec, &one, &owned, &gate);
			a.block = a.method = NULL;
			if (rc != 0)
				status = rc;
			if (!ro.accuracy)
				ro.accuracy = one.accuracy;
			else
				etc_accuracy_free((etc_accuracy *)one.accuracy);
		}
		if (status)
			goto out;
	} else if (a.compare && (rc = compare(&a, insp, rec, &ro, &owned, &gate)) != 0) {
		status = rc;
		goto out;
	}
	if (numgap_wanted(&a.numgap) || numgap_graph_asked(&a.numgap) ||
	    numgap_graph_mode(&a.numgap, rec != NULL, buf != NULL)) {
		/* "Execute": every block of that name; "Execute#2": block 2 alone */
		a.numgap.block = a.block;
		a.numgap.method = a.method;
		a.numgap.max_inflate = a.max_inflate;
		a.numgap.min_snr = a.min_snr;
		a.numgap.max_mse = a.max_mse;
		a.numgap.min_cosine = a.min_cosine;
		a.numgap.max_abs = a.max_abs;
		ng.bundled = owned.bp;
		bool every = false;
		if ((rc = numgap_every_method(&a.numgap, insp, rec, &io, &ng, &gate, &every,
		                              &runs)) != 0) {
			status = rc;
			goto out;
		}
		if (!every && (rc = numgap_run(&a.numgap, insp, rec, &io, &ng, &gate)) != 0) {
			status = rc;
			goto out;
		}
		ro.numgap = ng.ng;
		ro.numgap_runs = ng.runs;
		ro.numgap_run_count = ng.run_count;
		/* --all-runs: every run's gap and the distribution; the methods after the first */
		if ((rc = numgap_runs_finish(&a.numgap, insp, etdump_label, &ng, &runs)) != 0) {
			status = rc;
			goto out;
		}
		ro.numgap_dist = runs.dist;
		ro.numgap_more = runs.more;
		ro.numgap_more_names = runs.names;
		ro.numgap_more_count = runs.more_count;
	} else if (a.numgap.all_runs) {
		status =
		    usage_error("%s", "--all-runs belongs to the numeric gap: give --debug_buffer "
		                      "and an --etrecord (its graph), --reference-etdump or "
		                      "--reference-intermediates");
		goto out;
	}
	/* ferror too: an earlier fflush that failed left nothing to flush */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		status = EXIT_OUTPUT;
		cli_error("cannot write to standard output");
		goto out;
	}
	data_stdout(&data_fd);
	/* the gap shown: with several methods, the first one's (--method for another) */
	if (a.numgap.tsv && ng.ng && (rc = numgap_write_tsv(a.numgap.tsv, ng.ng)) != 0) {
		status = rc;
		goto out;
	}
	if (a.tsv && (rc = write_file(a.tsv, cmd_profile_tsv, insp, &ro)) != 0) {
		status = rc;
		goto out;
	}
	if (a.csv && (rc = write_file(a.csv, etc_report_csv, insp, &ro)) != 0) {
		status = rc;
		goto out;
	}
	if (a.json && (rc = write_file(a.json, etc_report_json, insp, &ro)) != 0) {
		status = rc;
		goto out;
	}
	if (a.trace && (rc = etc_cli_trace(a.trace, dump, io.source_time_scale)) != 0) {
		status = rc;
		goto out;
	}
	/* Plots last: a plot failure must not cost the gate's verdict or the reports. */
	if (a.plot || a.report) {
		report_input in[12];
		size_t nin = report_inputs(&a, in);
		run_results res = {ro.accuracy, insp, &ng,       &pc,     gate,
		                   in,          nin,  runs.dist, ro.taps, batch};
		const char *dir = cli_plot_dir(&a);
		if (a.plot && !buf)
			fprintf(stderr,
			        "etcompare: note: --plot without --debug_buffer draws the "
			        "profiling plots only: the comparison plots (accuracy, numeric "
			        "gap) need the debug buffer's values\n");
		dir_snapshot before;
		if (a.plot)
			dir_snapshot_take(&before, dir);
		report_done = true;
		rc = cli_plots_and_report(argc, argv, &a, &res);
		if (a.plot) {
			size_t pngs, files = dir_snapshot_changed(&before, dir, &pngs);
			dir_snapshot_free(&before);
			if (rc == 0)
				fprintf(stderr,
				        "etcompare: plots: %zu file%s written to %s/ (%zu PNG)\n",
				        files, files == 1 ? "" : "s", dir, pngs);
		}
		/* the gates' verdict stands: the JUnit below still holds it, with
		   the plots' error beside it, and a failed gate still exits 1 */
		if (rc != 0)
			late = rc;
	}
	/* The JUnit report last, and the gate's verdict is its failure count:
	 * the exit code and the XML cannot disagree. */
	/* a numeric gap from the ETRecord's graph without a threshold is shown, not gated */
	etc_junit_gates gates = {ro.accuracy,
	                         insp,
	                         ng.gates ? ro.numgap : NULL,
	                         ro.perfdiff,
	                         ro.taps,
	                         ng.gates ? ro.numgap_more : NULL,
	                         ro.numgap_more_names,
	                         ng.gates ? ro.numgap_more_count : 0,
	                         late ? "output" : NULL,
	                         late ? late_text : NULL};
	if (late)
		snprintf(late_text, sizeof late_text,
		         "exit %d (an output could not be written): %s", late, cli_last_error());
	junit_done = true;
	if (a.junit && (rc = write_junit(a.junit, &gates)) != 0) {
		status = rc;
		goto out;
	}
	status = etc_junit_failures(&gates) ? EXIT_GATE : EXIT_OK;
	if ((status == EXIT_GATE) != (gate == EXIT_GATE)) {
		fprintf(stderr, "etcompare: internal error: the gate verdict and the JUnit "
		                "report disagree\n");
		status = EXIT_GATE;
	}
	if (late && status != EXIT_GATE)
		status = late; /* a passing gate with its plots lost: exit 4 */
	if (a.example && status == EXIT_GATE && !a.junit) {
		/* a demo that ran is a success: the verdict is shown, not returned */
		fprintf(stderr, "etcompare: example: exit status 0 (on your own files this "
		                "verdict exits 1)\n");
		status = EXIT_OK;
	}
out:
	data_stdout(&data_fd);
	if (status == EXIT_INPUT || status == EXIT_OUTPUT) {
		report_input in[12];
		size_t nin = report_inputs(&a, in);
		run_results res = {ro.accuracy, insp, &ng,       &pc,     gate,
		                   in,          nin,  runs.dist, ro.taps, NULL};
		error_artifacts(argc, argv, &a, &res, status, junit_done, report_done);
	}
	numgap_runs_free(&runs);
	numgap_free(&ng);
	cmd_profile_free(&pc);
	etc_accuracy_free((etc_accuracy *)ro.accuracy);
	etc_torchsave_free(owned.ts);
	etc_npz_free(owned.npz);
	etc_bundled_free(owned.bp);
	etc_taps_free(owned.taps);
	etc_tap_specs_free(owned.specs);
	etc_inspector_free(insp);
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	etc_plot_batch_free(batch);
	return status;
}

/* ETC_THREADS that the library cannot read falls back to every core (at most
 * 8): say so, rather than run on a thread count the user did not ask for. */
static void check_threads_env(void)
{
	int ignored;
	unsigned n = etc_threads(&ignored);
	if (!ignored)
		return;
	char safe[256];
	fprintf(stderr,
	        "etcompare: warning: ETC_THREADS=%s is not a number from 1 to 64: using %u "
	        "thread%s (the online processors, at most 8)\n",
	        etc_text_safe(safe, sizeof safe, getenv("ETC_THREADS")), n, n == 1 ? "" : "s");
}

int main(int argc, char **argv)
{
	/* this program is OpenBLAS's only user in its process: the library may
	   stop the pool OpenBLAS starts when loaded, at the first product, so
	   it does not busy-wait (docs/internals.md; a user's setting wins) */
	setenv("ETC_BLAS_REST", "1", 0);
	check_threads_env();
	/* an input truncated by another process while mapped: exit 3, not SIGBUS */
	main_args ma = {argc, argv};
	etc_error err;
	etc_error_clear(&err);
	int rc = etc_run_guarded(run, &ma, &err);
	if (rc < 0) {
		fflush(stdout);
		return input_error(&err);
	}
	/* --help, --version, --legacy-profile alone: their printout checked too */
	return check_stdout(rc);
}
