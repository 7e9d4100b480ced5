#define _GNU_SOURCE
/*
 * cmd_report.c - the CLI's plots and HTML report: see cmd_report.h.
 */
#include "cmd_report.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const etc_error *err, int code)
{
	cli_error(err->message);
	return code;
}

/* The signal that arrived while a temporary plot folder existed (--report's
 * in TMPDIR, --plot's new set inside the plot folder): a handler can only
 * leave it here (it takes no argument). */
static volatile sig_atomic_t held_signal;
static const int held_signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void on_held(int sig)
{
	held_signal = sig;
}

/* A plot failure: an error with --plot, a warning with --report alone
 * (the report is written without the plot). */
static int plot_fail(const etc_error *err, int code, const args *a)
{
	if (a->plot)
		return fail(err, code);
	fprintf(stderr, "etcompare: warning: %s (the report leaves it out)\n", err->message);
	return code;
}

/* All plots of the run in `dir` with one gnuplot process, queued in `batch`. */
static int make_plots(const char *dir, const args *a, const run_results *r, etc_plot_batch *batch,
                      etc_plot_result *pr)
{
	etc_error err;
	etc_error_clear(&err);
	etc_plot_options po = {dir, NULL, NULL, batch, NULL};
	int rc = 0;
	if (r->ng->ng && (rc = numgap_plots(r->ng, &po, pr)) != 0)
		return rc;
	/* where time and error go: the gap and the profile of the same ETDump */
	const etc_inspector *gi = r->ng->insp ? r->ng->insp : r->insp;
	if (r->ng->ng && gi && etc_report_time_error_plot(&po, r->ng->ng, gi, pr, &err) < 0)
		return plot_fail(&err, err.status == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT, a);
	if (!r->ng->ng && r->acc && r->pc &&
	    etc_plot_batch_note(batch,
	                        "no numeric gap (no ETRecord or reference "
	                        "run): no time-and-error plot",
	                        &err) < 0)
		return plot_fail(&err, EXIT_OUTPUT, a);
	/* after the numeric gap: the findings' order (where the error enters
	 * before the heat maps of the outputs) */
	/* no --metrics: 0, the default set (SNR and the gated metrics) */
	if (r->acc && etc_report_accuracy_plots(&po, r->acc, a->metrics ? a->metric_mask : 0,
	                                        r->insp, pr, &err) < 0)
		return plot_fail(&err, err.status == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT, a);
	if ((rc = cmd_profile_plots(r->pc, r->insp, &po, pr)) != 0)
		return rc;
	if (etc_plot_batch_run(batch, &po, pr, &err) < 0 ||
	    etc_plot_batch_write_index(batch, dir, &err) < 0)
		return plot_fail(&err, EXIT_OUTPUT, a);
	return 0;
}

/* Removes what make_plots wrote in the temporary directory `dir`. */
static void remove_plots(const char *dir, const etc_plot_batch *batch)
{
	static const char *const ext[] = {".gp", ".dat", ".png"};
	for (size_t i = 0; i < etc_plot_batch_count(batch); i++)
		for (size_t e = 0; e < 3; e++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s%s", dir,
			         etc_plot_batch_item(batch, i)->name, ext[e]);
			unlink(path);
		}
	char path[4096];
	snprintf(path, sizeof path, "%s/index.txt", dir);
	unlink(path);
	rmdir(dir);
}

/* Whether any gate of the run had a threshold: else the report's verdict is neutral. */
static bool any_gate(const run_results *r)
{
	return (r->acc && etc_accuracy_gated(r->acc)) ||
	       (r->ng && r->ng->ng && etc_numgap_gated(r->ng->ng)) ||
	       (r->pc && r->pc->diff && !isnan(r->pc->diff_opt.max_regression)) || r->taps;
}

static void verdict_text(const run_results *r, char *buf, size_t cap)
{
	size_t at = 0;
	buf[0] = '\0';
	if (r->acc && !etc_accuracy_gated(r->acc)) {
		size_t n = etc_accuracy_row_count(r->acc);
		at +=
		    (size_t)snprintf(buf + at, cap - at, "accuracy: %zu output%s compared, no gate",
		                     n, n == 1 ? "" : "s");
	} else if (r->acc) {
		size_t n = etc_accuracy_row_count(r->acc), f = etc_accuracy_failures(r->acc);
		at += (size_t)snprintf(buf + at, cap - at, "accuracy: %zu of %zu output%s fail%s",
		                       f, n, n == 1 ? "" : "s", f == 1 ? "s" : "");
		/* the banner names the worst failing output: the lowest SNR */
		const etc_accuracy_row *w = NULL;
		for (size_t i = 0; i < n; i++) {
			const etc_accuracy_row *x = etc_accuracy_row_at(r->acc, i);
			if (x->status == ETC_ROW_FAIL &&
			    (!w || (x->has_metrics &&
			            (!w->has_metrics || x->metrics.snr_db < w->metrics.snr_db))))
				w = x;
		}
		if (w && at < cap) {
			const etc_event_block *b =
			    r->insp && w->block < etc_inspector_block_count(r->insp)
			        ? etc_inspector_block(r->insp, w->block)
			        : NULL;
			/* the block as every output names it ("Execute#1 ... (ETDump run 1)") */
			char blk[240] = "", run[48] = "";
			if (b)
				cli_block_label(r->insp, w->block, blk, sizeof blk);
			if (w->etdump_run != UINT32_MAX)
				snprintf(run, sizeof run, " (ETDump run %u)", w->etdump_run);
			at += (size_t)snprintf(buf + at, cap - at, " (worst: %.60s run %u", blk,
			                       w->run);
			if (w->reference >= 0 && at < cap)
				at += (size_t)snprintf(buf + at, cap - at, " ref %d", w->reference);
			if (at < cap)
				at +=
				    (size_t)snprintf(buf + at, cap - at, " output %u%s%s%.4g%s)",
				                     w->output, run, w->has_metrics ? ", SNR " : "",
				                     w->has_metrics ? w->metrics.snr_db : 0.0,
				                     w->has_metrics ? " dB" : "");
		}
	}
	if (r->ng->ng && at < cap) {
		long first = etc_numgap_first_divergence(r->ng->ng);
		if (first >= 0) {
			const etc_numgap_row *row = etc_numgap_row_at(r->ng->ng, (size_t)first);
			at += (size_t)snprintf(buf + at, cap - at,
			                       "%snumeric gap: first divergence at "
			                       "row %ld, %s%.80s%s%.80s",
			                       at ? "; " : "", first, *row->nodes ? "node " : "",
			                       row->nodes, *row->nodes ? ": " : "",
			                       *row->ops ? row->ops : row->event_name);
		} else if (etc_numgap_gated(r->ng->ng)) {
			at += (size_t)snprintf(buf + at, cap - at, "%snumeric gap: no divergence",
			                       at ? "; " : "");
		} else {
			at += (size_t)snprintf(
			    buf + at, cap - at,
			    "%snumeric gap: %zu intermediate outputs compared, no gate",
			    at ? "; " : "", etc_numgap_row_count(r->ng->ng));
		}
	}
	if (r->pc->diff && at < cap) {
		size_t f = etc_perfdiff_failures(r->pc->diff);
		at += (size_t)snprintf(buf + at, cap - at, "%sperformance: %zu regression%s",
		                       at ? "; " : "", f, f == 1 ? "" : "s");
		/* rows come largest regression first: the first failing one is the worst */
		for (size_t i = 0; f && at < cap && i < etc_perfdiff_row_count(r->pc->diff); i++) {
			const etc_perfdiff_row *x = etc_perfdiff_row_at(r->pc->diff, i);
			if (!x->failed)
				continue;
			char blk[256], pct[32];
			cli_block_label(etc_perfdiff_current(r->pc->diff), x->cur_block, blk,
			                sizeof blk);
			at += (size_t)snprintf(
			    buf + at, cap - at, " (worst: %.60s %.*s %s %%)", blk,
			    (int)(x->name.len > 60 ? 60 : x->name.len), x->name.ptr,
			    etc_perfdiff_percent_text(r->pc->diff, x, pct, sizeof pct));
			break;
		}
	}
	if (!at)
		snprintf(buf, cap, "profile only: no gate");
}

static int write_report(int argc, char **argv, const args *a, const run_results *r,
                        const etc_plot_batch *batch, const etc_plot_result *pr)
{
	etc_error err;
	etc_error_clear(&err);
	etc_html_report *h = NULL;
	etc_profile *own = NULL;
	int rc = 0;
	char verdict[512], text[600];
	verdict_text(r, verdict, sizeof verdict);
	bool gated = r->gate || any_gate(r);
	snprintf(text, sizeof text, "%s: %s",
	         r->gate ? "FAILED"
	         : gated ? "OK"
	                 : "NO GATE",
	         verdict);
	if (etc_html_report_create(&h, "etcompare report", &err) < 0 ||
	    etc_html_report_command(h, argc, argv, &err) < 0 ||
	    (gated ? etc_html_report_verdict(h, r->gate != 0, text, &err)
	           : etc_html_report_verdict_ungated(h, text, &err)) < 0) {
		rc = fail(&err, EXIT_OUTPUT);
		goto done;
	}
	for (size_t i = 0; i < r->ninputs; i++) {
		const report_input *in = &r->inputs[i];
		int e = in->data ? etc_html_report_input_bytes(h, in->role, in->path, in->data,
		                                               in->size, &err)
		                 : etc_html_report_input(h, in->role, in->path, &err);
		if (e < 0) {
			rc = fail(&err, EXIT_INPUT);
			goto done;
		}
	}
	if (r->acc)
		etc_html_report_accuracy(h, r->acc, r->insp);
	if (r->ng->ng)
		etc_html_report_numgap(h, r->ng->ng);
	if (r->dist)
		etc_html_report_numgap_dist(h, r->dist);
	if (r->taps && r->insp)
		etc_html_report_taps(h, r->taps, r->insp);
	const etc_profile *p = r->pc->profile;
	if (!p && etc_profile_create(&own, r->insp, &err) == 0)
		p = own;
	if (p)
		etc_html_report_profile(h, p, r->pc->tables | ETC_TABLE_OPS);
	if (r->pc->diff)
		etc_html_report_perfdiff(h, r->pc->diff);
	if (pr->gnuplot_missing)
		rc = etc_html_report_note(
		    h,
		    "gnuplot was not found: only the heat maps (drawn without it), no other plot",
		    &err);
	for (size_t i = 0; batch && rc == 0 && i < etc_plot_batch_count(batch); i++) {
		const etc_plot_item *it = etc_plot_batch_item(batch, i);
		/* a plot that cannot be read back is left out with a note, not the report */
		/* the numeric gap's chart goes with its section, the others in the plots */
		bool chart = !strcmp(it->name, "numgap_chart");
		if (it->made && (chart ? etc_html_report_numgap_chart(h, it->title, it->png, &err)
		                       : etc_html_report_image(h, it->title, it->png, &err)) < 0) {
			char note[1200];
			snprintf(note, sizeof note, "plot %s left out: %s", it->name, err.message);
			fprintf(stderr, "etcompare: warning: %s\n", note);
			if (etc_html_report_note(h, note, &err) < 0)
				rc = fail(&err, EXIT_OUTPUT);
		}
	}
	for (size_t i = 0; batch && rc == 0 && i < etc_plot_batch_note_count(batch); i++)
		if (etc_html_report_note(h, etc_plot_batch_note_at(batch, i), &err) < 0)
			rc = fail(&err, EXIT_OUTPUT);
	if (rc == 0 && etc_html_report_write(h, a->report, &err) < 0)
		rc = fail(&err, EXIT_OUTPUT);
done:
	etc_profile_free(own);
	etc_html_report_free(h);
	return rc;
}

int cli_plots_and_report(int argc, char **argv, const args *a, const run_results *r)
{
	etc_error err;
	etc_error_clear(&err);
	/* the caller's batch (its gnuplots started ahead), else one of our own */
	etc_plot_batch *batch = r->batch, *own = NULL;
	if (!batch && etc_plot_batch_create(&own, &err) < 0)
		return fail(&err, EXIT_OUTPUT);
	if (!batch)
		batch = own;
	/* no plot replaces or removes an input of the run */
	const char *in[CLI_MAX_INPUTS];
	size_t nin = cli_input_paths(a, in);
	for (size_t i = 0; i < nin; i++)
		if (in[i] && strcmp(in[i], "-") != 0 &&
		    etc_plot_batch_protect(batch, in[i], &err) < 0) {
			etc_plot_batch_free(own);
			return fail(&err, EXIT_OUTPUT);
		}
	etc_plot_result pr = {0, 0, false};
	char tmp[4096] = "";
	char *settmp = NULL; /* --plot: the new set's temporary folder inside `dir` */
	const char *dir = cli_plot_dir(a);
	const char *work = dir;
	if (!a->plot) {
		const char *t = getenv("TMPDIR");
		snprintf(tmp, sizeof tmp, "%s/etcompare-report-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(tmp)) {
			/* --report alone: the plots are extras, the report is written without */
			int e = errno;
			fprintf(stderr,
			        "etcompare: warning: cannot create a temporary plot directory in "
			        "%s (%s): the report has no plots\n",
			        t && *t ? t : "/tmp", strerror(e));
			tmp[0] = '\0';
			char note[600];
			snprintf(note, sizeof note,
			         "no plots: cannot create a temporary plot directory in %s (%s)",
			         t && *t ? t : "/tmp", strerror(e));
			(void)etc_plot_batch_note(batch, note, &err);
			int wrc = write_report(argc, argv, a, r, batch, &pr);
			etc_plot_batch_free(own);
			return wrc;
		}
		work = tmp;
	} else if (etc_plot_set_begin(batch, dir, &settmp, &err) < 0) {
		/* no plot set can be made: the report (if any) is written without */
		int rc = fail(&err, EXIT_OUTPUT);
		if (a->report)
			(void)write_report(argc, argv, a, r, batch, &pr);
		etc_plot_batch_free(own);
		return rc;
	} else {
		work = settmp;
	}
	/* SIGINT/SIGTERM/SIGHUP/SIGQUIT held back until the temporary plot
	 * folder is removed (gnuplot.c kills gnuplot when one arrives) */
	struct sigaction hold, old_act[4];
	memset(&hold, 0, sizeof hold);
	hold.sa_handler = on_held;
	sigemptyset(&hold.sa_mask);
	held_signal = 0;
	for (size_t k = 0; k < 4; k++)
		sigaction(held_signals[k], &hold, &old_act[k]);
	/* A plot that fails does not cost the report: it is written all the same. */
	int rc = make_plots(work, a, r, batch, &pr);
	int plots_rc = rc; /* the set is moved in when its plots were made, whatever the report */
	if (rc != 0 && !a->plot) {
		/* --report alone: a failed plot was a warning; it is a note in the report */
		rc = 0;
	}
	if (rc == 0 && pr.gnuplot_missing && a->plot)
		fprintf(
		    stderr,
		    "etcompare: note: gnuplot not found: wrote the .gp scripts and .dat data in "
		    "%s for later\n",
		    dir);
	if (a->report && held_signal) {
		/* interrupted: an old report is not replaced by one missing its plots */
		char safe[1024];
		fprintf(stderr,
		        "etcompare: %s: interrupted by signal %d: the report is not written; the "
		        "file keeps what it held before\n",
		        etc_text_safe(safe, sizeof safe, a->report), (int)held_signal);
		rc = rc ? rc : EXIT_OUTPUT;
	} else if (a->report) {
		if (pr.gnuplot_missing)
			fprintf(stderr, "etcompare: note: gnuplot not found: the report has only "
			                "the heat maps\n");
		int wrc = write_report(argc, argv, a, r, batch, &pr);
		rc = rc ? rc : wrc;
	}
	if (settmp) {
		/* all or nothing: the new set replaces the previous one only whole */
		if (plots_rc == 0 && !held_signal) {
			if (etc_plot_set_commit(batch, settmp, dir, &err) < 0) {
				int crc = fail(&err, EXIT_OUTPUT);
				rc = rc ? rc : crc;
			}
		} else {
			fprintf(
			    stderr,
			    "etcompare: %s: no plot was replaced: the new set was incomplete and "
			    "is removed; the folder keeps what it held before\n",
			    dir);
		}
		etc_plot_set_discard(settmp);
		free(settmp);
	}
	if (tmp[0])
		remove_plots(tmp, batch);
	int sig = held_signal;
	for (size_t k = 0; k < 4; k++)
		sigaction(held_signals[k], &old_act[k], NULL);
	if (sig)
		raise(sig);
	etc_plot_batch_free(own);
	return rc;
}

int cli_error_report(int argc, char **argv, const args *a, const run_results *r, int status,
                     const char *message)
{
	etc_error err;
	etc_error_clear(&err);
	etc_html_report *h = NULL;
	etc_profile *own = NULL;
	char text[1200];
	snprintf(text, sizeof text, "ERROR (exit %d, %s): %s", status,
	         status == EXIT_OUTPUT ? "an output could not be written" : "invalid input",
	         *message ? message : "see the command's log");
	int rc = 0;
	if (etc_html_report_create(&h, "etcompare report", &err) < 0 ||
	    etc_html_report_command(h, argc, argv, &err) < 0 ||
	    etc_html_report_verdict(h, true, text, &err) < 0) {
		rc = fail(&err, EXIT_OUTPUT);
		goto done;
	}
	for (size_t i = 0; i < r->ninputs; i++) {
		const report_input *in = &r->inputs[i];
		etc_error ierr;
		etc_error_clear(&ierr);
		int e = in->data ? etc_html_report_input_bytes(h, in->role, in->path, in->data,
		                                               in->size, &ierr)
		                 : etc_html_report_input(h, in->role, in->path, &ierr);
		if (e < 0) { /* the unreadable input may be the error itself: listed all the same */
			snprintf(text, sizeof text, "%s %s: %s", in->role, in->path, ierr.message);
			etc_html_report_note(h, text, &err);
		}
	}
	if (r->acc)
		etc_html_report_accuracy(h, r->acc, r->insp);
	if (r->ng && r->ng->ng)
		etc_html_report_numgap(h, r->ng->ng);
	if (r->dist)
		etc_html_report_numgap_dist(h, r->dist);
	if (r->taps && r->insp)
		etc_html_report_taps(h, r->taps, r->insp);
	if (r->insp) {
		const etc_profile *p = r->pc ? r->pc->profile : NULL;
		if (!p && etc_profile_create(&own, r->insp, &err) == 0)
			p = own;
		if (p)
			etc_html_report_profile(h, p, (r->pc ? r->pc->tables : 0) | ETC_TABLE_OPS);
	}
	if (etc_html_report_write(h, a->report, &err) < 0)
		rc = fail(&err, EXIT_OUTPUT);
done:
	etc_profile_free(own);
	etc_html_report_free(h);
	return rc;
}
