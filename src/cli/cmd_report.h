/*
 * cmd_report.h - the CLI's plots (--plot [DIR]) and HTML report (--report
 * FILE.html): one gnuplot process for all plots, then the report with the
 * plots embedded. Used by etcompare.c only.
 */
#ifndef ETC_CMD_REPORT_H
#define ETC_CMD_REPORT_H

#include "etcompare/etcompare.h"

#include "args.h"
#include "cmd_numgap.h"
#include "cmd_profile.h"

#include <stdbool.h>
#include <stddef.h>

/* An input named in the report: a file, or bytes in memory (the example). */
typedef struct report_input {
	const char *role, *path;
	const void *data;
	size_t size;
} report_input;

/* What the run computed, for the plots and the report. */
typedef struct run_results {
	const etc_accuracy *acc;
	const etc_inspector *insp;
	numgap_state *ng;
	profile_cmd *pc;
	int gate; /* EXIT_OK or EXIT_GATE */
	const report_input *inputs;
	size_t ninputs;
	const etc_numgap_dist *dist; /* --all-runs: the gap over the runs, or NULL */
	const etc_taps *taps;        /* --tap-specs: the taps, or NULL */
	etc_plot_batch *batch; /* the plots' batch, its gnuplots started ahead; NULL: made here */
} run_results;

/*
 * --plot and --report: the plots in a->plot_dir (or, for --report alone, a
 * temporary directory removed afterwards), then the report. Returns 0 or an
 * exit code after printing the error.
 */
int cli_plots_and_report(int argc, char **argv, const args *a, const run_results *r);

/*
 * The HTML report of a run that stopped with exit `status` (3 or 4): the
 * error `message`, the inputs and whatever `r` holds (NULL members were
 * not computed). Returns 0 or EXIT_OUTPUT after printing the error.
 */
int cli_error_report(int argc, char **argv, const args *a, const run_results *r, int status,
                     const char *message);

#endif
