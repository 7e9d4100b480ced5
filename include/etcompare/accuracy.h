/*
 * etcompare/accuracy.h - program outputs against reference outputs: the
 * pairing of EventBlock runs with references, the metrics of every output
 * pair and the accuracy gate.
 *
 * Pairing: a block of the execution (name "Execute" by default) whose run
 * carries a bundled_input_index is paired with reference[method][index].
 * The ExecuTorch runtime never records the index (ETDumpGen shadows the
 * member it would set), so when no run has one each run is paired with the
 * reference set its outputs match best (ETC_PAIR_CONTENT: the highest SNR
 * pooled over the outputs, from one matrix product of runs x references;
 * see src/analysis/pairing.h), with its margin in dB over the second best;
 * a margin under 1 dB or a best SNR under 0 dB is "ambiguous" (gated on the
 * best, or a failing row with strict_pairing). ETC_PAIR_ORDER pairs the
 * k-th run (in ETDump order) with reference k, ETC_PAIR_ALL every run with
 * reference 0. The rule used and why is said in the report. Outputs pair in
 * order; a TensorList output counts as its tensors in order. Every unpaired
 * item (a run without a reference, a reference without a run except under
 * content pairing, where the runs simply used other test cases, an output
 * without its counterpart) becomes a failing row saying why; nothing is
 * skipped silently.
 */
#ifndef ETCOMPARE_ACCURACY_H
#define ETCOMPARE_ACCURACY_H

#include "bundled.h"
#include "common.h"
#include "inspector.h"
#include "metrics.h"
#include "npz.h"
#include "torchsave.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etc_pair_rule {
	ETC_PAIR_AUTO = 0,   /**< by index when runs carry one, else by content */
	ETC_PAIR_INDEX = 1,  /**< bundled_input_index only */
	ETC_PAIR_ORDER = 2,  /**< k-th run with reference k */
	ETC_PAIR_ALL = 3,    /**< every run with reference 0 */
	ETC_PAIR_CONTENT = 4 /**< each run with the reference its outputs match best */
} etc_pair_rule;

/** Where reference outputs come from (exactly one of torchsave, npz, bundled). */
typedef struct etc_reference_set {
	const etc_torchsave
	    *torchsave; /**< method -> [index] -> [outputs], or [index] -> [outputs] */
	const etc_npz
	    *npz;         /**< arrays "k.j" (reference k, output j), else one reference in order */
	const char *name; /**< for messages */
	/**
	 * A BundledProgram: reference k is the expected outputs of test case k
	 * of the method (etc_accuracy_options.method). Its method must be in the
	 * file, and each paired run's outputs must agree with the test case's
	 * in number and shape (else ETC_ERR_MISMATCH: the file belongs to
	 * another program).
	 */
	const etc_bundled *bundled;
} etc_reference_set;

typedef struct etc_accuracy_options {
	const char *block;  /**< EventBlock name; NULL or default: "Execute" */
	const char *method; /**< reference method; NULL or default: "forward" */
	int pair_by;        /**< etc_pair_rule */
	/* Thresholds; NAN disables one. */
	double min_snr, max_mse, min_cosine, max_abs;
	/**
	 * Called after each compared pair with the bytes of both sides compared
	 * so far and in all (NULL: none). The library never prints; the CLI
	 * draws a bar from this.
	 */
	void (*progress)(void *ctx, uint64_t done_bytes, uint64_t total_bytes);
	void *progress_ctx;
	/* Content pairing: a run is ambiguous when its best reference is less
	 * than pair_min_margin_db (1) above the second, or below pair_floor_db
	 * (0) SNR; strict_pairing makes an ambiguous run's rows fail. */
	double pair_min_margin_db, pair_floor_db;
	bool strict_pairing;
} etc_accuracy_options;

ETC_API void etc_accuracy_options_init(etc_accuracy_options *opt);

typedef enum etc_row_status {
	ETC_ROW_PASS = 0,
	ETC_ROW_FAIL = 1,              /**< a threshold failed */
	ETC_ROW_MISSING_REFERENCE = 2, /**< an output without a reference */
	ETC_ROW_MISSING_OUTPUT = 3,    /**< a reference without an output */
	ETC_ROW_SHAPE_MISMATCH = 4,
	ETC_ROW_DTYPE_MISMATCH = 5, /**< float against integer: not compared */
	ETC_ROW_NO_DATA = 6         /**< no debug buffer: nothing to compare */
} etc_row_status;

/** Short lower-case name of a row status ("pass", "FAIL", "missing reference", ...). */
ETC_API const char *etc_row_status_str(int status);

/** One output pair. */
typedef struct etc_accuracy_row {
	uint32_t block;      /**< EventBlock index */
	uint32_t run;        /**< run within the block */
	uint32_t etdump_run; /**< run_data index */
	int32_t reference;   /**< reference index used, -1 when none */
	uint32_t output;     /**< output position (TensorLists flattened) */
	char shape[96], reference_shape[96];
	const char *dtype, *reference_dtype;
	bool has_metrics;
	etc_metrics metrics;
	int status;       /**< etc_row_status */
	char reason[160]; /**< why it failed or was not compared */
} etc_accuracy_row;

typedef struct etc_accuracy etc_accuracy;

/**
 * Pairs and compares. Rows are in block, run, output order.
 * @return 0 (inspect the rows for failures; counts that differ give failing
 *         rows for the unpaired runs or references); ETC_ERR_MISMATCH when
 *         the ETDump has no run of the block, or a BundledProgram has no
 *         suite for the method or disagrees with a run's outputs;
 *         ETC_ERR_FORMAT for a reference set of the wrong shape.
 */
ETC_API int etc_accuracy_run(etc_accuracy **out, const etc_inspector *insp,
                             const etc_reference_set *refs, const etc_accuracy_options *opt,
                             etc_error *err);
ETC_API void etc_accuracy_free(etc_accuracy *acc);

ETC_API size_t etc_accuracy_row_count(const etc_accuracy *acc);
ETC_API const etc_accuracy_row *etc_accuracy_row_at(const etc_accuracy *acc, size_t i);
/** How content pairing paired one run (etc_accuracy_pairing_at). */
typedef struct etc_accuracy_pairing {
	uint32_t block, run, etdump_run;
	int32_t reference;    /**< the best reference set, -1 when none is comparable */
	int32_t second;       /**< the runner-up, -1 when none */
	double snr_db;        /**< best: SNR pooled over the outputs */
	double cosine;        /**< best: cosine pooled over the outputs */
	double second_snr_db; /**< runner-up's pooled SNR (NaN without one) */
	double margin_db;     /**< snr_db - second_snr_db; +inf without a runner-up */
	bool ambiguous;       /**< margin or SNR too small: see etc_accuracy_options */
	uint32_t candidates;  /**< reference sets with the run's output count and shapes */
	/** No set had all the run's outputs: ranked on the outputs that agree in
	 * size (the others give their mismatch rows), or, when none agrees,
	 * paired by order (reference 0 when there is one set) and ambiguous. */
	bool partial;
} etc_accuracy_pairing;

/** Runs paired by content (in row order), 0 for the other rules. */
ETC_API size_t etc_accuracy_pairing_count(const etc_accuracy *acc);
ETC_API const etc_accuracy_pairing *etc_accuracy_pairing_at(const etc_accuracy *acc, size_t i);
/**
 * The score of content-paired run i against reference set k: pooled SNR
 * (dB) and cosine. False when k is not a candidate (other output count or
 * shapes) or out of range.
 */
ETC_API bool etc_accuracy_pairing_score(const etc_accuracy *acc, size_t i, size_t k, double *snr_db,
                                        double *cosine);
/**
 * True when that score is an estimate: the outputs were large, content
 * pairing ranked them on a sketch (a fixed sample of elements) and this
 * candidate was proven far from the best without an exact pass. `bound_db`
 * (optional) gets the proven upper bound on its exact pooled SNR. False for
 * an exact score (or k not a candidate).
 */
ETC_API bool etc_accuracy_pairing_score_estimated(const etc_accuracy *acc, size_t i, size_t k,
                                                  double *bound_db);
/** Reference sets the comparison had. */
ETC_API size_t etc_accuracy_reference_count(const etc_accuracy *acc);

/** The rule used (etc_pair_rule, never AUTO) and a sentence saying why. */
ETC_API int etc_accuracy_pair_rule(const etc_accuracy *acc);
ETC_API const char *etc_accuracy_pair_note(const etc_accuracy *acc);
/**
 * The compared values of row i (only rows with metrics), e.g. for plots.
 * Valid while `acc` and the inputs live. 0 or ETC_ERR_USAGE.
 */
/**
 * The whole shape of row i ("[1, 1, ..., 2, 3]", every dimension), runtime or
 * `reference` side, into buf (1600 bytes hold any rank up to 64): the row's
 * `shape` fields elide the middle of a long one. Returns buf ("" when i is
 * out of range).
 */
ETC_API const char *etc_accuracy_row_shape_full(const etc_accuracy *acc, size_t i, bool reference,
                                                char *buf, size_t cap);
ETC_API int etc_accuracy_row_values(const etc_accuracy *acc, size_t i, etc_values *actual,
                                    etc_values *reference);
/** The actual output tensor of row i (shape for heat maps), or NULL for scalars. */
ETC_API const etc_tensor *etc_accuracy_row_tensor(const etc_accuracy *acc, size_t i);

/**
 * Where the references came from, for reports: "the expected outputs of
 * method forward in m.bpte (BundledProgram, 2 test cases)", or "the
 * torch.save reference outputs in FILE" / "the .npz reference outputs in FILE"
 * (FILE the reference set's name).
 */
ETC_API const char *etc_accuracy_reference_source(const etc_accuracy *acc);

/** The options of the run (thresholds for plots; block and method as given). */
ETC_API const etc_accuracy_options *etc_accuracy_options_get(const etc_accuracy *acc);
/** Whether a threshold was given: without one (`--compare` alone) nothing is
 *  judged, and the reports say "no gate" where they would say "pass". */
ETC_API bool etc_accuracy_gated(const etc_accuracy *acc);

/**
 * Both sides of row i whenever both exist with data (also rows of another
 * shape, e.g. a STATS tap against a full reference tensor), with their
 * element counts in the values. 0 or ETC_ERR_USAGE.
 */
ETC_API int etc_accuracy_row_sides(const etc_accuracy *acc, size_t i, etc_values *actual,
                                   etc_values *reference);

/**
 * Marks the rows of outputs `from` and later as intermediate-output taps
 * (taps.h: the tap pass appends them after the model's own outputs): they
 * keep their comparison but leave the gate, the worst row and the report's
 * table. from < 0 unmarks all.
 */
ETC_API void etc_accuracy_mark_taps(etc_accuracy *acc, int64_t from);
/** True when row i is a tap output (etc_accuracy_mark_taps). */
ETC_API bool etc_accuracy_row_is_tap(const etc_accuracy *acc, size_t i);

/** Rows that fail the gate (FAIL and every unpaired or mismatched row). */
ETC_API size_t etc_accuracy_failures(const etc_accuracy *acc);
/** Index of the worst row (lowest SNR among compared rows, else the first failure), or -1. */
ETC_API long etc_accuracy_worst(const etc_accuracy *acc);

#ifdef __cplusplus
}
#endif
#endif
