/*
 * etcompare/numgap_dist.h - the numeric gap over many runs: per op (an
 * intermediate output, keyed by its debug handles and output position, or
 * by instruction, event name and output position without an ETRecord), the
 * distribution of its cumulative and local SNR over the runs that compared
 * it (min, p5, median, p95, max; numpy's linear percentiles, where an
 * interpolation towards +inf is +inf), and its worst run (the lowest SNR;
 * the first such run on a tie) named by file, block, ETDump run and
 * bundled input index.
 *
 * Per op and per input (runs of the same bundled_input_index, 0 or more;
 * runs without one are left out), the
 * run-to-run agreement of the runtime's own values (agreement.h: one Gram
 * matrix of the runs' tensors through BLAS): the lowest pairwise SNR, and
 * the run that disagrees most with the others (lowest median SNR against
 * them as references). Ops whose tensors differ in element count across
 * the runs of an input have no agreement.
 *
 * The gaps are borrowed: they must outlive the etc_numgap_dist.
 */
#ifndef ETCOMPARE_NUMGAP_DIST_H
#define ETCOMPARE_NUMGAP_DIST_H

#include "common.h"
#include "numgap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Which run a numeric gap was computed on (strings borrowed, never NULL). */
typedef struct etc_numgap_run_id {
	const char *file;            /**< the ETDump */
	const char *block;           /**< the block's label, e.g. "Execute#2" */
	uint32_t run;                /**< the ETDump run_data index */
	int32_t bundled_input_index; /**< -1 when unset */
} etc_numgap_run_id;

/** The distribution of one SNR over the runs (dB; +inf identical). */
typedef struct etc_numgap_dist_stats {
	size_t count; /**< runs with a value (NaN left out); 0: the rest is NAN */
	double min, p5, median, p95, max;
	size_t worst; /**< index (into the runs given) of the run with the lowest value */
} etc_numgap_dist_stats;

/** One op over the runs. Strings are never NULL. */
typedef struct etc_numgap_dist_op {
	const char *nodes;   /**< graph node names of the first run's row ("" unknown) */
	const char *ops;     /**< its ops ("" unknown) */
	const char *event;   /**< its event name */
	const char *handles; /**< its debug handles, ","-joined ("" without an ETRecord) */
	uint32_t output;     /**< output position within the item */
	size_t runs;         /**< runs in which the op has a row */
	etc_numgap_dist_stats cumulative; /**< row.cumulative_snr (metrics.snr_db) */
	etc_numgap_dist_stats local;      /**< row.local_snr (count 0 without a reference graph) */
	/* run-to-run agreement within an input (at least 2 runs of it logged the op) */
	bool has_agreement;
	double agreement_min_snr;     /**< the lowest pairwise SNR over all inputs' matrices */
	size_t agreement_outlier;     /**< run index with the lowest median SNR against its input's
	                                 others */
	double agreement_outlier_snr; /**< that median */
} etc_numgap_dist_op;

typedef struct etc_numgap_dist etc_numgap_dist;

/**
 * The distribution over `n` gaps (one per run; gaps[k] computed on run
 * ids[k]). n >= 1. ETC_ERR_USAGE (n == 0), ETC_ERR_NOMEM; the values'
 * reading errors for the agreement.
 */
ETC_API int etc_numgap_dist_compute(etc_numgap_dist **out, const etc_numgap *const *gaps,
                                    const etc_numgap_run_id *ids, size_t n, etc_error *err);
ETC_API void etc_numgap_dist_free(etc_numgap_dist *d);

ETC_API size_t etc_numgap_dist_run_count(const etc_numgap_dist *d);
ETC_API const etc_numgap_run_id *etc_numgap_dist_run(const etc_numgap_dist *d, size_t k);
/** Ops in the order of their first appearance (first run's rows first). */
ETC_API size_t etc_numgap_dist_op_count(const etc_numgap_dist *d);
ETC_API const etc_numgap_dist_op *etc_numgap_dist_op_at(const etc_numgap_dist *d, size_t i);
/** The op's cumulative (local == false) or local SNR in run k; NAN when it has none. */
ETC_API double etc_numgap_dist_value(const etc_numgap_dist *d, size_t op, size_t k, bool local);

#ifdef __cplusplus
}
#endif
#endif
