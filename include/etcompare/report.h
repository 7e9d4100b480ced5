/*
 * etcompare/report.h - what etcompare prints and writes: the profiling table
 * in the upstream Inspector's look, TSV/CSV exports, the JSON report and the
 * summaries of program and intermediate outputs; plus atomic output files.
 *
 * Writers take a FILE * they do not own and return ETC_ERR_IO when writing
 * fails. None of them prints anywhere else.
 */
#ifndef ETCOMPARE_REPORT_H
#define ETCOMPARE_REPORT_H

#include "common.h"
#include "output.h"
#include "accuracy.h"
#include "inspector.h"
#include "numgap.h"
#include "numgap_dist.h"
#include "taps.h"

#include "perfdiff.h"
#include "profile.h"
#include "plot.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One run's numeric gap in brief: --json's "numeric_gap_runs". */
typedef struct etc_numgap_run_summary {
	char block[128];     /**< the block as the outputs name it: "Execute#2" */
	uint32_t run;        /**< 0-based within the block */
	uint32_t etdump_run; /**< the ETDump's run_data index */
	size_t compared;     /**< rows */
	size_t failures;     /**< etc_numgap_failures */
	long first;          /**< first divergent row, -1 none */
	char op[200];        /**< its node and ops, "" none */
	double snr;          /**< its SNR (dB), NAN none or not compared */
	char reason[160];    /**< its reason, "" none */
} etc_numgap_run_summary;

typedef struct etc_report_options {
	bool include_units;               /**< "p50 (ms)" instead of "p50" (default true) */
	bool include_delegate_debug_data; /**< add the delegate_debug_metadata column */
	uint32_t max_values;              /**< values shown per tensor by outputs (default 8) */
	const etc_accuracy *accuracy;     /**< when set, --json carries the comparison */
	const etc_numgap *numgap;         /**< when set, --json carries the numeric gap */

	const etc_profile *profile;   /**< when set, --json carries "profile" ... */
	unsigned profile_tables;      /**< ... with these ETC_TABLE_* tables */
	const etc_perfdiff *perfdiff; /**< when set, --json carries "perf_diff" */
	/** when set, --json carries "numeric_gap_runs": every run the gap compared */
	const etc_numgap_run_summary *numgap_runs;
	size_t numgap_run_count;
	/** when set (--all-runs), --json carries "numeric_gap_distribution": per op
	 *  its SNR over every run compared */
	const etc_numgap_dist *numgap_dist;
	/** further numeric gaps (--all-runs: the runs not shown; every method of a
	 *  record after the first), each named:
	 *  --json "numeric_gap_more": [{"name", "numeric_gap"}] */
	const etc_numgap *const *numgap_more;
	const char *const *numgap_more_names;
	size_t numgap_more_count;
	/** when set, --json carries "taps" (etc_report_taps_json's object) */
	const etc_taps *taps;
} etc_report_options;

ETC_API void etc_report_options_init(etc_report_options *opt);

/**
 * The profiling table as upstream's print_data_tabular prints it: tabulate's
 * fancy_grid, index column, OPERATOR_CALL rows hidden.
 */
ETC_API int etc_report_table(FILE *out, const etc_inspector *insp, const etc_report_options *opt,
                             etc_error *err);

/** The same rows as upstream's save_data_to_tsv (pandas to_csv, sep "\t"). */
ETC_API int etc_report_tsv(FILE *out, const etc_inspector *insp, const etc_report_options *opt,
                           etc_error *err);

/** The same rows, comma-separated with minimal quoting. */
ETC_API int etc_report_csv(FILE *out, const etc_inspector *insp, const etc_report_options *opt,
                           etc_error *err);

/**
 * The full JSON report (schema/etcompare-report.schema.json): every column
 * including raw durations, debug-data summaries, program outputs per run,
 * warnings and the decoded ETDump event list.
 */
ETC_API int etc_report_json(FILE *out, const etc_inspector *insp, const etc_report_options *opt,
                            etc_error *err);

/** Program outputs of each run and intermediate outputs of each event. */
ETC_API int etc_report_outputs(FILE *out, const etc_inspector *insp, const etc_report_options *opt,
                               etc_error *err);

/**
 * The Edge program of `method` (NULL: "forward" or the only program), or a
 * graph_map program by its name (e.g. "aten_dialect_output/forward"), one
 * line per node: index, name, op, rendered inputs, debug handle and the
 * source line of its stack trace — what get_exported_program shows.
 */
ETC_API int etc_report_graph(FILE *out, etc_etrecord *rec, const char *method, etc_error *err);

/**
 * The ETRecord's reference outputs and representative inputs: every leaf
 * with its path (e.g. forward[0][1]), tensors as dtype, shape, min/max/mean
 * and the first values.
 */
ETC_API int etc_report_references(FILE *out, const etc_etrecord *rec, const etc_report_options *opt,
                                  etc_error *err);

/**
 * The accuracy comparison as a grid: block, run, reference, output, shape,
 * dtype, the metrics of `metric_mask` (see etc_metric_mask_parse) and the
 * verdict with its reason; then the pairing rule and the pass count.
 */
ETC_API int etc_report_accuracy(FILE *out, const etc_accuracy *acc, const etc_inspector *insp,
                                unsigned metric_mask, etc_error *err);
/**
 * What must be added to "block run R output O" to name an accuracy row
 * unambiguously (plot files and labels, the "worst:" line):
 * ETC_ACCURACY_ID_REF when two blocks share a name (e.g. two "Execute"
 * blocks, one per bundled input), and ETC_ACCURACY_ID_BLOCK, the block's
 * position, when the reference index does not tell them apart either.
 */
enum { ETC_ACCURACY_ID_REF = 1, ETC_ACCURACY_ID_BLOCK = 2 };
ETC_API unsigned etc_report_accuracy_id_parts(const etc_accuracy *acc, const etc_inspector *insp);
/** Parses "snr,mse,cosine,l1,max_abs,max_rel" (any subset) into a column mask;
 *  0 or ETC_ERR_USAGE (also for a NULL argument). */
ETC_API int etc_metric_mask_parse(const char *list, unsigned *mask);
/** JUnit XML of the accuracy gate alone (etc_report_junit_gates with accuracy only). */
ETC_API int etc_report_junit(FILE *out, const etc_accuracy *acc, const etc_inspector *insp,
                             etc_error *err);

/** The gates of one run for the JUnit report; a NULL gate was not run. */
typedef struct etc_junit_gates {
	const etc_accuracy *accuracy; /**< one testcase per compared output */
	const etc_inspector *insp;    /**< the runtime's (names blocks); needed with accuracy */
	const etc_numgap *numgap;     /**< one testcase per compared row, first divergence marked */
	const etc_perfdiff *perfdiff; /**< one testcase per gated event */
	/** one testcase per tap and run (failing STATS fields, FULL_TENSOR below the gate,
	 *  NaN/Inf: failures); the accuracy suite then leaves the tap outputs out */
	const etc_taps *taps;
	/** further numeric gaps (--all-runs' runs, every method): one suite each, named */
	const etc_numgap *const *numgap_more;
	const char *const *numgap_more_names;
	size_t numgap_more_count;
	/** an error after the gates ran (a plot that could not be written): one
	 *  more suite whose testcase `error_kind` holds `error_message`; NULL
	 *  for none. The gates' testcases stay: their verdict is not lost. */
	const char *error_kind, *error_message;
} etc_junit_gates;

/**
 * JUnit XML with one testsuite per gate run. Always well-formed: names are
 * never cut inside a character, invalid UTF-8 becomes U+FFFD and characters
 * XML 1.0 forbids are dropped; testcase names are unique within a suite.
 */
ETC_API int etc_report_junit_gates(FILE *out, const etc_junit_gates *g, etc_error *err);
/**
 * JUnit XML of a run that stopped with an error (bad input, an output that
 * could not be written): one testcase named `kind` with an <error> holding
 * `message`, so that CI shows the error instead of a missing report.
 */
ETC_API int etc_report_junit_error(FILE *out, const char *kind, const char *message,
                                   etc_error *err);
/**
 * The failing testcases etc_report_junit_gates writes: the run's gate
 * verdict. Non-zero exactly when one of the gates fails (exit code 1).
 */
ETC_API size_t etc_junit_failures(const etc_junit_gates *g);
/**
 * Plots of the comparison in o->dir: a bar chart per metric of `metrics`
 * (a mask as from etc_metric_mask_parse; 0: snr, and mse, cosine and
 * max_abs when the accuracy options gate them), one bar per compared
 * output; an error histogram per output and
 * a heat map of |actual - reference| for every output of two or more
 * dimensions.
 */
ETC_API int etc_report_accuracy_plots(const etc_plot_options *o, const etc_accuracy *acc,
                                      unsigned metrics, const etc_inspector *insp,
                                      etc_plot_result *res, etc_error *err);

/**
 * The numeric gap as a grid in execution order: runtime ops and debug
 * handles, reference ops, shape, dtype, SNR, MSE, cosine, max abs, the
 * source line of the group's last op and the verdict, the first divergence
 * marked; below it the first divergence again with its full stack trace and
 * module path, then the unmatched items with the reason, then a summary.
 */
ETC_API int etc_report_numgap(FILE *out, const etc_numgap *ng, etc_error *err);
/**
 * The numeric gap as TSV, one row per compared pair: upstream
 * calculate_numeric_gap's columns (aot_debug_handle, aot_ops,
 * aot_intermediate_output, runtime_ops, runtime_debug_handle,
 * runtime_intermediate_output, gap, stacktraces; outputs as summaries, gap
 * the MSE) then etcompare's (status, reason, shapes, dtypes, every metric,
 * source_line, module_path, first_divergence); then the unmatched items
 * with status "unmatched runtime" / "unmatched reference".
 */
ETC_API int etc_report_numgap_tsv(FILE *out, const etc_numgap *ng, etc_error *err);
/**
 * The numeric gap over many runs (--all-runs) as text, one line per op: the
 * runs it was compared in, min/p5/median/p95 of its cumulative SNR, the
 * worst run, and the runs' agreement with its outlier when computed.
 */
ETC_API int etc_report_numgap_dist(FILE *out, const etc_numgap_dist *d, etc_error *err);
/**
 * Plots of the numeric gap in o->dir: numgap_chart (cumulative and local
 * SNR per op, etc_plot_numgap_chart; it marks where the error enters, so no
 * separate SNR or SNR-drop plot) and, when the cosine is gated
 * (min_cosine not NaN), numgap_cosine, 1 - cosine along execution order
 * with the threshold drawn and the first divergence marked;
 * for the diverging row an error histogram and, for two or more dimensions,
 * a heat map of |runtime - reference|.
 */
ETC_API int etc_report_numgap_plots(const etc_plot_options *o, const etc_numgap *ng,
                                    etc_plot_result *res, etc_error *err);

/**
 * Where time and error go (plot "time_error"): per compared op of `ng`, its
 * share of Method::execute time (p50 of its profiled event in the block of
 * `insp` that profiles the most compared ops, divided by that block's
 * Method::execute p50) against its local SNR (with a reference graph), else
 * its cumulative SNR; the 3 ops with the most time (hot spots) and the
 * failing ops where the error enters (etc_numgap_top_drops, the first
 * divergence) labelled. `insp` must be of the ETDump the gap was computed
 * from. Without a profiled op and Method::execute: a note, no plot.
 */
ETC_API int etc_report_time_error_plot(const etc_plot_options *o, const etc_numgap *ng,
                                       const etc_inspector *insp, etc_plot_result *res,
                                       etc_error *err);

/**
 * The performance diff as a plot ("perf_diff"): one bar per event (the
 * first 40 rows, largest regression first, none below min_event_time), its
 * p50 change in percent, the gate (max_regression) a dashed line, the
 * regressions that fail it red; without a gate every bar is neutral.
 */
ETC_API int etc_report_perfdiff_plot(const etc_plot_options *o, const etc_perfdiff *d,
                                     etc_plot_result *res, etc_error *err);

/** Writes `v` as Python's repr() would (shortest round trip) into `buf` (40 bytes). */
ETC_API void etc_format_double(char buf[40], double v);

#ifdef __cplusplus
}
#endif
#endif
