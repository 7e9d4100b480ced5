/*
 * etcompare/numgap.h - the numeric gap: every intermediate output of a run
 * against a reference run, op by op, and the first operator whose output
 * goes wrong (upstream Inspector.calculate_numeric_gap, without Python and
 * for any pair of runs).
 *
 * Intermediate outputs. The runtime side is one run of an EventBlock (the
 * first run of the first "Execute" block by default; etc_numgap_run_at
 * takes any block and run): every instruction or delegate event
 * that logged debug data is one item, in execution order (its native_call
 * and OPERATOR_CALL events count once). The reference side is either the
 * same of a second ETDump with its debug buffer, an `.npz` whose arrays
 * are named by debug handle: "12", or "12,13" for a group, or the
 * ETRecord's own graph run by the reference executor (reference.h) on the
 * run's inputs: one item per node with a debug handle, its outputs in the
 * reference dtype (float64 by default).
 *
 * Two errors per op (a reference graph): the cumulative error is the
 * reference chain from the model's inputs against the runtime (the row's
 * metrics, cumulative_snr); the local error re-runs the op in the reference
 * dtype on the runtime's own logged inputs (the producer's runtime output
 * of each tensor input, read where the producer's handle is the largest
 * of a runtime item's; a reference value stands in for an input the
 * runtime did not log, and the row's local_note says which), parameters
 * and program inputs from the record, and compares that with the runtime's
 * output (local, local_snr). The first divergence stays defined on the
 * cumulative error; "where the error enters" ranks by the local one.
 *
 * Delegates (upstream's _get_runtime_intermediate_outputs_and_op_names):
 * events a delegate logs inside its partition (log_intermediate_output_
 * delegate) are items of their own, keyed through the ETRecord's
 * delegate_map by their int or string delegate id (with upstream's
 * substring fallback, see etc_inspector_link). A DELEGATE_CALL is left out
 * when delegated events of its backend that have op types and debug data
 * share one of its handles; otherwise it keeps its fused group. The runtime
 * logs every argument of a DELEGATE_CALL, inputs first: only its last
 * num_outputs values (instruction_id_to_num_outs_map; the last one without
 * that map) are its outputs.
 *
 * Quantization and layout: an integer runtime tensor (uint8, int8, int16,
 * uint16, int32 and the quantized codes) against a floating reference is
 * read as (q - zero_point) * scale, per tensor or per channel along an axis
 * of the reference's shape, with parameters from options.quant_params (a
 * JSON object keyed by the handles of either side, like the .npz names) or
 * else from the ETRecord graph: the node of the compared event's largest
 * handle, or its single user, being a quantized_decomposed quantize or
 * dequantize op (per tensor .default/.tensor, or per channel) with literal
 * scale and zero point. Without parameters the row is a dtype mismatch
 * "needs quantization parameters (--quant-params)". Two shapes that are
 * channels-last forms of each other (rank 3-5: NLC/NCL, NHWC/NCHW,
 * NDHWC/NCDHW) are compared by reading the runtime in the reference's
 * order (options.layout AUTO); max_abs_index then indexes the reference.
 * Both are streaming readers in the metrics' own pass: no copy is made.
 *
 * SNR drop: with the runtime's ETRecord graph, each compared row gets the
 * lowest SNR of the compared producers of its nodes' inputs (graph inputs
 * and constants count as +inf; a producer that was not compared passes on
 * the lowest SNR of its own producers) minus its own SNR: exact over exact is 0, exact inputs and
 * an inexact output +inf. An op that amplifies inherited error shows a drop too.
 * A dB drop says nothing of how much error enters (+inf at 142.9 dB is
 * rounding): noise_added, the row's error-to-signal ratio 10^(-snr/10)
 * minus the largest of those producers', does, and ranks "where the error
 * enters" when there is no local error (etc_numgap_top_drops).
 *
 * Records that do not belong: with an ETRecord on a side, more than half
 * of that side's events with intermediate outputs without a debug handle,
 * or a named, non-delegated event none of whose linked nodes' base op names
 * ("mul" of aten.mul.Scalar) appears in the event name, make
 * etc_numgap_run fail with ETC_ERR_MISMATCH naming the ETDump, the ETRecord
 * and the flag (--etrecord, --reference-etrecord); options.force turns
 * this into a warning (etc_numgap_warning).
 *
 * Alignment by debug handle (an ETRecord linked to the runtime inspector,
 * and to a reference inspector): each item is keyed by the debug handles of
 * its event (debug_handle_map, or delegate_map for delegated events). Items
 * that share a handle, on either side, belong to one group: groups are the
 * connected components of the handle-overlap graph, found by sorting the
 * (handle, item) pairs and a union-find over the items (O(n log n), never
 * O(n^2)); overlap is sharing a handle, as upstream's set intersection. A
 * group with items on both sides is one row. Each side is represented by
 * its item with the largest debug handle (upstream keeps the value of the
 * key whose last handle is highest): on a tie, the later one (instruction
 * in execution order, array in file order). Upstream keeps, per runtime
 * key, the event with the largest instruction id; for the same key
 * etcompare keeps the later one in execution order, which is the same
 * event in a run where instruction ids grow along execution. The group's other reference
 * items are listed as unmatched ("merged into the group of handles ...");
 * its other runtime items are counted in item_count. Op names come from
 * each side's ETRecord (the reference ETDump's own when it is linked to
 * one; the runtime's for an .npz).
 *
 * Choosing the tensor. An item's outputs are the tensors of its debug
 * values in order (TensorLists flattened); with an ETRecord's num_outputs
 * n > 0, the last n of them. When both sides have the same number of
 * outputs they pair position by position (one row each); otherwise the
 * single output of one side pairs with the output of the other whose shape
 * and dtype match (then shape only; else the last one, reported as a shape
 * mismatch).
 *
 * Alignment without an ETRecord (two ETDumps only): the items must have the
 * same instruction ids, delegate ids and names in the same order (the same
 * program); they pair one for one and output by output. When they do not,
 * etc_numgap_run fails with ETC_ERR_MISMATCH naming the first difference
 * and asking for an ETRecord. An `.npz` reference always needs one.
 *
 * Rows are in execution order of their runtime item; the first row that
 * fails the gate (the thresholds of etc_accuracy_options, same verdicts) is
 * the first divergence. Items that match nothing are listed apart with the
 * reason, never dropped. When nothing at all can be compared,
 * etc_numgap_run fails (a run that checks nothing must not pass). .npz
 * members are CRC-checked, in the comparison's own pass where they are
 * compared, and all before etc_numgap_run returns.
 *
 * Everything returned lives as long as the etc_numgap; the inspectors,
 * ETRecord, debug buffers, .npz and reference graph (etc_numgap_reference
 * .graph: row names point into it) it was made from must outlive it. The
 * graph's inputs are read by etc_numgap_run alone.
 */
#ifndef ETCOMPARE_NUMGAP_H
#define ETCOMPARE_NUMGAP_H

#include "common.h"
#include "inspector.h"
#include "metrics.h"
#include "npz.h"
#include "reference.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Where the reference intermediate outputs come from (exactly one of insp, npz, graph). */
typedef struct etc_numgap_reference {
	const etc_inspector *insp; /**< a second ETDump with its debug buffer (linked or not) */
	const etc_npz *npz;        /**< arrays named by debug handle: "12", "12,13" */
	const char *name;          /**< for messages */
	/**
	 * The runtime ETRecord's graph run by the reference executor on
	 * `inputs` (input_count of them, in the graph's order): every node with
	 * a debug handle is a reference item, and each is re-run on the
	 * runtime's own logged inputs (the rows' local error). Needs the
	 * runtime linked to the ETRecord the graph was loaded from.
	 */
	const etc_refgraph *graph;
	const etc_reftensor *inputs;
	size_t input_count;
} etc_numgap_reference;

/** The distance in the `gap` column (upstream's calculate_numeric_gap(distance)). */
typedef enum etc_numgap_distance {
	ETC_NUMGAP_MSE = 0, /**< mean((a - r)^2) */
	ETC_NUMGAP_L1 = 1,  /**< sum(|a - r|), upstream's L1 (etc_metrics.l1 is the mean) */
	ETC_NUMGAP_SNR = 2  /**< 10 log10(mean(r^2) / mean((a - r)^2)) dB */
} etc_numgap_distance;

/** Whether shapes that are channels-last forms of each other are compared. */
typedef enum etc_numgap_layout {
	ETC_NUMGAP_LAYOUT_AUTO = 0, /**< NHWC against NCHW (rank 3-5): compare after permuting */
	ETC_NUMGAP_LAYOUT_NONE = 1  /**< different shapes are a shape mismatch */
} etc_numgap_layout;

typedef struct etc_numgap_options {
	/** EventBlock of both sides, default "Execute" (borrowed); "Name#i" is block i
	 *  (etc_inspector_block_find); the reference ETDump's block as
	 *  etc_numgap_reference_block chooses it */
	const char *block;
	/* Thresholds, as etc_accuracy_options; NAN disables one. */
	double min_snr, max_mse, min_cosine, max_abs;
	int distance;             /**< etc_numgap_distance of `gap`, default MSE */
	int layout;               /**< etc_numgap_layout, default AUTO */
	const char *quant_params; /**< JSON file of quantization parameters, or NULL */
	/** Go on (with warnings) when an ETRecord does not fit its ETDump. */
	bool force;
	/** A reference graph's outputs (etc_numgap_reference.graph): compare each
	 *  row as its node runs and keep only a summary of its values
	 *  (etc_numgap_row_reference_preview), not the values themselves; rows
	 *  that need the whole gap first (layout, dequantization) and the first
	 *  divergence keep theirs. The reports are the same; memory stays near
	 *  the reference run's own. Default false: every compared reference
	 *  output is kept (etc_numgap_row_reference_tensor), as upstream's
	 *  aot_intermediate_output. */
	bool drop_reference_values;
	/** A reference graph: also score, in the same run of the graph, how well
	 *  it reproduces the runtime's program outputs
	 *  (etc_numgap_program_output_snr): inputs that may not be the run's
	 *  are checked without running the graph twice. Default false. */
	bool score_program_outputs;
} etc_numgap_options;

/** Fills `opt` with the defaults (block "Execute", no thresholds, MSE, layout auto). */
ETC_API void etc_numgap_options_init(etc_numgap_options *opt);

/** How the two sides were aligned. */
typedef enum etc_numgap_alignment {
	ETC_NUMGAP_BY_HANDLE = 0,     /**< debug handles through the ETRecord */
	ETC_NUMGAP_BY_INSTRUCTION = 1 /**< same program: instruction id and output position */
} etc_numgap_alignment;

/** Where the parameters that dequantized a runtime tensor came from. */
typedef enum etc_numgap_quant_source {
	ETC_NUMGAP_QUANT_NONE = 0,    /**< not dequantized */
	ETC_NUMGAP_QUANT_FILE = 1,    /**< etc_numgap_options.quant_params */
	ETC_NUMGAP_QUANT_ETRECORD = 2 /**< a quantize/dequantize node of the ETRecord graph */
} etc_numgap_quant_source;

/** One compared pair, in execution order. Strings are never NULL. */
typedef struct etc_numgap_row {
	/* the group's debug handles on each side, ascending */
	uint32_t handle_count;
	const int64_t *handles;
	uint32_t reference_handle_count;
	const int64_t *reference_handles;
	const char *ops;           /**< runtime ops of the group, ", "-joined ("" unknown) */
	const char *reference_ops; /**< reference ops (from the ETRecord by handle) */
	const char *event_name;    /**< the runtime event compared, e.g. "native_call_add.out";
	                              "" in debug-only ETDumps (reports show the instruction) */
	int32_t instruction_id;    /**< of that event */
	/** the backend of a delegated event (its event_name is then its delegate
	 *  id), "" for others */
	const char *delegate_backend;
	uint32_t item_count;       /**< runtime items merged into the group (one compared) */
	uint32_t output;           /**< output position within the runtime item */
	uint32_t reference_output; /**< output position within the reference item */
	/* the group's last op (largest handle among the compared event's nodes) */
	const char *stack_trace; /**< its full Python stack trace */
	const char *source_line; /**< the last "File ..., line N" of it */
	const char *module_path; /**< its module hierarchy, outermost first, "/"-joined */
	char shape[96], reference_shape[96];
	const char *dtype, *reference_dtype;
	bool has_metrics;
	etc_metrics metrics;
	int status;       /**< etc_row_status (accuracy.h): pass, FAIL or why not compared */
	char reason[160]; /**< why it failed or was not compared */
	/* graph node names (FX node.name) of each side's handles, ", "-joined,
	 * in handle order ("" without an ETRecord); reference_nodes is
	 * upstream's aot_ops */
	const char *nodes, *reference_nodes;
	/* the graph nodes behind reference_nodes (for upstream's stacktraces) */
	uint32_t reference_node_count;
	const etc_graph_node *const *reference_node_list;
	double gap;       /**< the chosen distance (options.distance); NAN when not compared */
	char layout[32];  /**< "" or the permutation applied to the runtime, e.g. "NHWC->NCHW" */
	int quant_source; /**< etc_numgap_quant_source */
	char quant[160];  /**< "" or how the runtime tensor was dequantized */
	/**
	 * SNR lost at this row: the lowest SNR of the compared producers of its
	 * graph inputs (graph inputs and constants +inf) minus its own SNR;
	 * NAN when not compared or without a graph.
	 */
	double snr_drop;
	/* --- the two errors of an op, and its share of the noise ------------- */
	/**
	 * The cumulative error: metrics.snr_db of the reference chain from the
	 * model's inputs against the runtime (+inf when identical, NAN when not
	 * compared); the first divergence is defined on it.
	 */
	double cumulative_snr;
	/**
	 * The noise power the op adds: its error-to-signal ratio 10^(-snr/10)
	 * minus the largest of its compared producers' (graph inputs and
	 * constants 0); NAN when not compared or without a graph.
	 */
	double noise_added;
	/**
	 * The local error (a reference graph only, etc_numgap_reference.graph):
	 * the op re-run in the reference dtype on the runtime's own logged
	 * inputs, against the runtime's output. has_local false: local_note
	 * says why.
	 */
	bool has_local;
	etc_metrics local;
	double local_snr;        /**< local.snr_db, +inf identical, NAN without */
	uint32_t local_inputs;   /**< tensor inputs of the re-run op */
	uint32_t local_standins; /**< of them, reference values standing in for unlogged ones */
	/** "" or e.g. "inputs: 1 of 2 from the reference (node X not logged)" */
	char local_note[200];
} etc_numgap_row;

/** Which side an unmatched item is on. */
typedef enum etc_numgap_side { ETC_NUMGAP_RUNTIME = 0, ETC_NUMGAP_REFERENCE = 1 } etc_numgap_side;

/** An item that matched nothing on the other side. */
typedef struct etc_numgap_unmatched {
	int side; /**< etc_numgap_side */
	uint32_t handle_count;
	const int64_t *handles;
	const char *name;       /**< event name, or the .npz array name */
	int32_t instruction_id; /**< -1 for an .npz array */
	const char *ops;
	char shape[96];
	const char *dtype;
	char reason[200];
	const char *nodes; /**< graph node names of its handles, ", "-joined ("" unknown) */
} etc_numgap_unmatched;

typedef struct etc_numgap etc_numgap;

/**
 * Aligns and compares.
 * @param insp  the runtime ("device") run, linked to an ETRecord for
 *              alignment by handle; it needs its debug buffer
 * @return 0 (inspect the rows); ETC_ERR_USAGE (no debug buffer, no such
 *         block, an .npz without an ETRecord); ETC_ERR_MISMATCH (two
 *         different programs and no ETRecord, or nothing could be aligned:
 *         the message gives each side's count and handle range);
 *         ETC_ERR_FORMAT (an .npz array name that is not a debug-handle
 *         list, a corrupt .npz member: CRC-32 mismatch); ETC_ERR_LIMIT (an
 *         array named by more than 4096 handles); ETC_ERR_NOMEM
 */
ETC_API int etc_numgap_run(etc_numgap **out, const etc_inspector *insp,
                           const etc_numgap_reference *ref, const etc_numgap_options *opt,
                           etc_error *err);
/**
 * As etc_numgap_run, for run `run` (0-based, < run_count) of the runtime's
 * block `block` (an index of etc_inspector_block) rather than the first
 * run of the first block named options.block (which then only names the
 * block in messages). A reference ETDump side uses its block
 * etc_numgap_reference_block and its run `run` when it has one, else its
 * first. ETC_ERR_USAGE for a block or run out of range, or no such
 * reference block.
 */
ETC_API int etc_numgap_run_at(etc_numgap **out, const etc_inspector *insp, size_t block,
                              uint32_t run, const etc_numgap_reference *ref,
                              const etc_numgap_options *opt, etc_error *err);
/**
 * The reference ETDump's block that ran the same inputs as the runtime's
 * block `block`: the block of the same name and bundled_input_index; when
 * either side has no index, the block of the same name at the same
 * position among those of that name. -1 when none.
 */
ETC_API long etc_numgap_reference_block(const etc_inspector *insp, size_t block,
                                        const etc_inspector *ref);
/** The runtime block (index), run (0-based, within it) and ETDump run `ng` compared. */
ETC_API void etc_numgap_where(const etc_numgap *ng, size_t *block, uint32_t *run,
                              uint32_t *etdump_run);
/** Releases `ng`. NULL is a no-op. */
ETC_API void etc_numgap_free(etc_numgap *ng);

ETC_API int etc_numgap_alignment_get(const etc_numgap *ng);
/** The options the gap was computed with (thresholds for reports and plots). */
ETC_API const etc_numgap_options *etc_numgap_options_get(const etc_numgap *ng);
/** With etc_numgap_options.score_program_outputs: the lowest SNR of the
 *  runtime's program outputs against the reference graph's (+inf when
 *  identical), as etc_numgap_inputs_score; NAN when not scored or none
 *  could be compared. */
ETC_API double etc_numgap_program_output_snr(const etc_numgap *ng);
/** Whether a threshold was given: without one only NaN and integer
 *  mismatches fail, and the reports say "no gate" where they would say "pass". */
ETC_API bool etc_numgap_gated(const etc_numgap *ng);
ETC_API size_t etc_numgap_row_count(const etc_numgap *ng);
ETC_API const etc_numgap_row *etc_numgap_row_at(const etc_numgap *ng, size_t i);
/** Index of the first row that fails the gate, or -1. */
ETC_API long etc_numgap_first_divergence(const etc_numgap *ng);
/** Rows that fail the gate (FAIL and rows that could not be compared). */
ETC_API size_t etc_numgap_failures(const etc_numgap *ng);
/**
 * "Where the error enters": failing rows before passing ones; among them,
 * rows with a local error (a reference graph) first, lowest local SNR
 * first, then the rows that add noise (noise_added > 0), most first (so
 * an op at 142.9 dB never outranks one at 18.25 dB); ties in execution
 * order. Identical rows and rows that add no noise are left out. Writes at
 * most `k` row indices to `idx` and returns how many; 0 without a graph.
 */
ETC_API size_t etc_numgap_top_drops(const etc_numgap *ng, size_t k, size_t *idx);
ETC_API size_t etc_numgap_unmatched_count(const etc_numgap *ng);
ETC_API const etc_numgap_unmatched *etc_numgap_unmatched_at(const etc_numgap *ng, size_t i);
/**
 * Warnings of the run (with options.force: what would have stopped it),
 * each a sentence naming the file.
 */
ETC_API size_t etc_numgap_warning_count(const etc_numgap *ng);
ETC_API const char *etc_numgap_warning(const etc_numgap *ng, size_t i);
/** "mse", "l1" or "snr"; etc_numgap_distance_parse returns 0 or ETC_ERR_USAGE. */
ETC_API const char *etc_numgap_distance_name(int distance);
ETC_API int etc_numgap_distance_parse(const char *name, int *out);
/** "etrecord", "quant-params" or "" for an etc_numgap_quant_source. */
ETC_API const char *etc_numgap_quant_source_name(int source);

/**
 * How well `g` run on `inputs` reproduces the runtime's program outputs
 * (block `block`, NULL "Execute", its first run): the lowest SNR over the
 * outputs, +inf when all are identical, NAN when none could be compared.
 * To tell which of several candidate inputs a run was made with.
 * ETC_ERR_USAGE without program outputs; the run's errors otherwise.
 */
ETC_API int etc_numgap_inputs_score(const etc_inspector *insp, const char *block,
                                    const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                                    double *snr, etc_error *err);
/** As etc_numgap_inputs_score, for run `run` of block `block` (an index). */
ETC_API int etc_numgap_inputs_score_at(const etc_inspector *insp, size_t block, uint32_t run,
                                       const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                                       double *snr, etc_error *err);

/**
 * How well the runtime's program outputs of run `run` of block `block`
 * match the ETRecord's own reference outputs (`reference_outputs` of
 * `method`, NULL "forward"): *snr gets the best set's lowest SNR over the
 * outputs (+inf when identical, NAN when no set has the run's outputs),
 * *index that set (-1 for none). Set k holds what the exported model
 * computed on test case k, so a run matching set k far better than a
 * reference run on some candidate inputs reproduces its outputs was not
 * made with those inputs. ETC_ERR_USAGE without program outputs or
 * without reference_outputs.
 */
ETC_API int etc_numgap_record_outputs_score_at(const etc_inspector *insp, size_t block,
                                               uint32_t run, const etc_etrecord *rec,
                                               const char *method, double *snr, long *index,
                                               etc_error *err);

/** How well candidate inputs reproduce a run (etc_numgap_inputs_match). */
typedef struct etc_numgap_match {
	/** the run's logged intermediate outputs that the graph run on the
	 *  inputs reproduces (identical, or SNR >= 20 dB); -1 when the gap could
	 *  not be computed */
	long reproduced;
	/** the program outputs' lowest SNR, as etc_numgap_inputs_score */
	double snr;
} etc_numgap_match;

/**
 * Which of several candidate inputs (a BundledProgram's test cases, the
 * record's example and representative inputs) a run was made with: `m`
 * gets how many of the run's intermediate outputs `g` run on `inputs`
 * reproduces, and how well it reproduces the program outputs (block
 * `block`, NULL "Execute", its first run). Rank candidates with
 * etc_numgap_match_better: the intermediates come first, because a broken
 * late op corrupts the program outputs while the first ops still tell the
 * inputs. Errors as etc_numgap_inputs_score.
 */
ETC_API int etc_numgap_inputs_match(const etc_inspector *insp, const char *block,
                                    const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                                    etc_numgap_match *m, etc_error *err);
/** As etc_numgap_inputs_match, for run `run` of block `block` (an index). */
ETC_API int etc_numgap_inputs_match_at(const etc_inspector *insp, size_t block, uint32_t run,
                                       const etc_refgraph *g, const etc_reftensor *inputs, size_t n,
                                       etc_numgap_match *m, etc_error *err);
/** Whether candidate `a` ranks above `b`: more intermediate outputs
 *  reproduced, then a higher program-output SNR (NAN lowest). */
ETC_API bool etc_numgap_match_better(const etc_numgap_match *a, const etc_numgap_match *b);

/** As etc_accuracy_row_shape_full, for row i of the numeric gap. */
ETC_API const char *etc_numgap_row_shape_full(const etc_numgap *ng, size_t i, bool reference,
                                              char *buf, size_t cap);
/** The compared values of row i (rows with metrics), e.g. for heat maps. 0 or
 *  ETC_ERR_USAGE. `reference` has no values (count 0) when the gap did not
 *  keep them (etc_numgap_options.drop_reference_values). */
ETC_API int etc_numgap_row_values(const etc_numgap *ng, size_t i, etc_values *actual,
                                  etc_values *reference);
/** The runtime tensor of row i (for its shape), or NULL. */
ETC_API const etc_tensor *etc_numgap_row_tensor(const etc_numgap *ng, size_t i);
/** The reference tensor of row i, or NULL (not compared, or its values not
 *  kept: etc_numgap_row_reference_preview). */
ETC_API const etc_tensor *etc_numgap_row_reference_tensor(const etc_numgap *ng, size_t i);

/** Values a preview holds: the first ones of the tensor. */
enum { ETC_NUMGAP_PREVIEW_VALUES = 8 };
/**
 * Row i's reference output when its values were not kept
 * (drop_reference_values): dtype, shape, numel, nbytes and offset as the
 * tensor's, `data` holding only its first min(numel,
 * ETC_NUMGAP_PREVIEW_VALUES) values; *summary gets the summary of all of
 * them (etc_tensor_summarize) and, for an int64 or uint64 tensor,
 * extremes[0] and [1] the bits of its smallest and largest value (exact
 * where the summary's doubles round; either may be NULL). NULL when the
 * values were kept or the row was not compared.
 */
ETC_API const etc_tensor *etc_numgap_row_reference_preview(const etc_numgap *ng, size_t i,
                                                           etc_tensor_summary *summary,
                                                           uint64_t *extremes);

#ifdef __cplusplus
}
#endif
#endif
