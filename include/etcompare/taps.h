/*
 * etcompare/taps.h - intermediate-output taps: the extra program outputs an
 * upstream tap pass (devtools/intermediate_output_tap) appends after the
 * model's own, mapped back to the tapped ops by the TapSpec list, compared
 * per op against the reference's outputs at the same positions.
 *
 * The TapSpec list is JSON: [dataclasses.asdict(s) for s in specs] (keys
 * node_name, op_target, output_index, reducer_name, fields, stack_trace,
 * module_path, module_class; others ignored). A spec with no fields
 * (reducer FULL_TENSOR) is compared like an intermediate output (the
 * accuracy row's metrics); a spec with fields (STATS) field by field:
 * against the reference's own stats vector when the reference output has
 * one value per field, else against the reference tensor reduced here with
 * the same formulas (etc_tap_stats). NaN and Inf counts of the run are
 * flagged on their own.
 */
#ifndef ETCOMPARE_TAPS_H
#define ETCOMPARE_TAPS_H

#include "accuracy.h"
#include "common.h"
#include "inspector.h"
#include "metrics.h"

#include <stdio.h>

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** One TapSpec. Strings are NUL-terminated; optional ones may be NULL. */
typedef struct etc_tap_spec {
	const char *node_name, *op_target, *reducer_name;
	const char *stack_trace, *module_path, *module_class;
	int64_t output_index;
	const char *const *fields; /**< field names, none for FULL_TENSOR */
	size_t field_count;
} etc_tap_spec;

typedef struct etc_tap_specs etc_tap_specs;

/**
 * Reads a TapSpec list from a JSON file. 0, ETC_ERR_IO, ETC_ERR_FORMAT (not
 * a list of objects, a key of the wrong type, a missing node_name or
 * output_index, an output_index below 0 or repeated, an unknown field name).
 */
ETC_API int etc_tap_specs_load(etc_tap_specs **out, const char *path, etc_error *err);
ETC_API void etc_tap_specs_free(etc_tap_specs *s);
ETC_API size_t etc_tap_specs_count(const etc_tap_specs *s);
/** Specs sorted by output_index (the order the tap pass appended them). */
ETC_API const etc_tap_spec *etc_tap_specs_at(const etc_tap_specs *s, size_t i);
/** The lowest output_index: every output from it on is a tap. -1 when empty. */
ETC_API int64_t etc_tap_specs_first_output(const etc_tap_specs *s);

/**
 * The STATS fields known (etc_tap_field_name), in this order: min, max,
 * mean, abs_max, abs_mean, std, rms, l1_norm, l2_norm, nan_count,
 * inf_count, zero_count, p99_abs. Formulas over all n elements, in double:
 * min/max/amax of |x| propagate NaN like torch.amin/amax; mean = sum/n;
 * abs_mean = sum|x|/n; std = sqrt(sum (x-mean)^2 / (n-1)) (torch.std's
 * default, unbiased; NaN for n < 2); rms = sqrt(sum x^2 / n); l1_norm =
 * sum|x|; l2_norm = sqrt(sum x^2); the counts of NaN, +-Inf and zero
 * elements; p99_abs = the 0.99 quantile of |x| with linear interpolation
 * (torch.quantile / numpy.quantile default).
 */
enum { ETC_TAP_FIELD_COUNT = 13 };
ETC_API const char *etc_tap_field_name(int field);
/** The field's number, or -1. */
ETC_API int etc_tap_field_find(const char *name);

/**
 * Reduces `v` to the fields `fields[0..n)` (etc_tap_field numbers) into
 * `out`. 0, ETC_ERR_USAGE (unknown field), ETC_ERR_NOMEM.
 */
ETC_API int etc_tap_stats(const etc_values *v, const int *fields, size_t n, double *out,
                          etc_error *err);

/** Thresholds of relative difference per field (NAN: not gated). */
typedef struct etc_tap_options {
	double max_stat_rel_diff[ETC_TAP_FIELD_COUNT];
} etc_tap_options;

/** No threshold except NaN/Inf flags. */
ETC_API void etc_tap_options_init(etc_tap_options *o);
/**
 * Parses "--max-stat-rel-diff" text: "X" (every field) or a list
 * "X,mean=Y,std=Z" / "mean=Y". 0 or ETC_ERR_USAGE.
 */
ETC_API int etc_tap_options_parse_rel_diff(etc_tap_options *o, const char *text, etc_error *err);

/** One field of a STATS tap row. */
typedef struct etc_tap_field {
	int field;                          /**< etc_tap_field number */
	double actual, reference, rel_diff; /**< rel_diff = |a-r| / |r|; |a| when r = 0; 0 when
	                                       equal (NaN = NaN); inf when one is NaN */
	bool fail;
} etc_tap_field;

/** One tap of one run. */
typedef struct etc_tap_row {
	size_t spec;                 /**< index into etc_tap_specs_at */
	size_t accuracy_row;         /**< the accuracy row of the output, SIZE_MAX when none */
	uint32_t block, run;         /**< as in the accuracy row */
	bool stats;                  /**< a STATS tap, else FULL_TENSOR */
	bool has_metrics;            /**< FULL_TENSOR compared */
	etc_metrics metrics;         /**< FULL_TENSOR */
	const etc_tap_field *fields; /**< STATS: field_count entries */
	size_t field_count;
	bool reference_reduced; /**< STATS: the reference was a full tensor, reduced here */
	bool nonfinite;         /**< the run's value has NaN or Inf (or its nan/inf_count > 0) */
	bool pass;
	char reason[160]; /**< why it failed, "" when it passed */
} etc_tap_row;

typedef struct etc_taps etc_taps;

/**
 * Per-op rows of the taps from a comparison made with
 * etc_accuracy_options.tap_outputs_from = etc_tap_specs_first_output(specs).
 * Rows are in run order, then output_index order. `specs` and `acc` must
 * outlive the result. 0, ETC_ERR_NOMEM, ETC_ERR_USAGE.
 */
ETC_API int etc_taps_run(etc_taps **out, const etc_accuracy *acc, const etc_tap_specs *specs,
                         const etc_tap_options *opt, etc_error *err);
ETC_API void etc_taps_free(etc_taps *t);
ETC_API size_t etc_taps_row_count(const etc_taps *t);
ETC_API const etc_tap_row *etc_taps_row_at(const etc_taps *t, size_t i);
ETC_API const etc_tap_specs *etc_taps_specs(const etc_taps *t);
/** Rows that fail. */
ETC_API size_t etc_taps_failures(const etc_taps *t);
/**
 * The first failing tap (in output_index order) of the run of row i's
 * block and run: where the error enters. Its row index, or -1.
 */
ETC_API long etc_taps_first_divergence(const etc_taps *t, uint32_t block, uint32_t run);

/**
 * The per-op table of the taps (one row per run and tap: op, reducer, SNR
 * / MSE / cosine for FULL_TENSOR, the worst field for STATS, verdict) and,
 * per run, the first divergence with the op's stack trace (report/taps.c).
 * 0, ETC_ERR_NOMEM or ETC_ERR_IO.
 */
ETC_API int etc_report_taps(FILE *out, const etc_taps *t, const etc_inspector *insp,
                            etc_error *err);
/**
 * The taps as one JSON object: {"taps": [spec...], "rows": [{block, run,
 * spec, node_name, op_target, output_index, reducer_name, kind, pass,
 * reason, nonfinite, metrics | fields: [{name, actual, reference,
 * rel_diff, fail}], reference_reduced}], "first_divergence": [{block,
 * run, row, node_name}], "failures": n}.
 */
ETC_API int etc_report_taps_json(FILE *out, const etc_taps *t, const etc_inspector *insp,
                                 etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
