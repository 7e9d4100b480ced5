/*
 * etcompare/inspector.h - EventBlocks: the Inspector's view of an ETDump.
 *
 * Within each run, profile and debug events are collated by instruction;
 * runs with the same signature (name, ordered event signatures, bundled
 * input index) merge into one EventBlock whose events carry one duration per
 * run. Timing statistics are per event; program outputs stay per run, never
 * merged. The rules are those of the upstream Python Inspector
 * (FORMATS.md §3); differences are documented in README.md.
 *
 * Everything returned here is owned by the etc_inspector and valid until
 * etc_inspector_free; the ETDump and debug buffer it was created from must
 * outlive it.
 */
#ifndef ETCOMPARE_INSPECTOR_H
#define ETCOMPARE_INSPECTOR_H

#include "common.h"
#include "etdump.h"
#include "etrecord.h"
#include "tensor.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etc_time_scale {
	ETC_TIME_NS = 0,
	ETC_TIME_US = 1,
	ETC_TIME_MS = 2,
	ETC_TIME_S = 3,
	ETC_TIME_CYCLES = 4
} etc_time_scale;

/** "ns", "us", "ms", "s" or "cycles". */
ETC_API const char *etc_time_scale_name(int scale);
/** Parses a time scale name; returns 0 or ETC_ERR_USAGE (also for a NULL argument). */
ETC_API int etc_time_scale_parse(const char *name, int *out);

typedef struct etc_inspector_options {
	int source_time_scale; /**< unit of the ETDump's timestamps (default ns) */
	int target_time_scale; /**< unit of the reported durations (default ms) */
	bool strict;           /**< merged runs with different debug data are an error */
	/**
	 * Unit of the timestamps of delegated events (those with a delegate id).
	 * -1 (default): the source unit, as the current upstream Inspector's
	 * default delegate_time_scale_converter, so they are scaled to the
	 * target unit like every other event. A unit that does not convert to
	 * the target (cycles against a time) is kept: those events' durations
	 * stay in it, and etc_inspector_event.time_scale says so.
	 */
	int delegate_time_scale;
	/**
	 * Optional per-instruction unit of delegated events (e.g. by backend,
	 * through the ETRecord's delegate_map): a unit, or -1 for
	 * delegate_time_scale. Called while the inspector is created.
	 */
	int (*delegate_time_scale_of)(void *ctx, int32_t instruction_id);
	void *delegate_time_scale_ctx;
} etc_inspector_options;

/** Fills `opt` with the defaults (ns -> ms, delegated events scaled alike, not strict). */
ETC_API void etc_inspector_options_init(etc_inspector_options *opt);

/** Percentile statistics of an event's durations (numpy's linear method). */
typedef struct etc_perf_stats {
	double p10, p50, p90, avg, min, max;
} etc_perf_stats;

/** One Event of an EventBlock. */
typedef struct etc_inspector_event {
	etc_str name;                  /**< profile name, or the delegate id when delegated */
	int32_t instruction_id;        /**< -1 when unknown */
	int32_t delegate_debug_id_int; /**< -1 when unset */
	etc_str delegate_debug_id_str; /**< "" when unset */
	bool is_delegated_op;
	bool has_perf;               /**< a profile event exists (raw/stats valid) */
	uint32_t run_count;          /**< entries in raw/start_times (= block's run count) */
	const double *raw;           /**< durations in `time_scale`, one per run */
	const uint64_t *start_times; /**< raw start timestamps, one per run */
	etc_perf_stats stats;
	/** Unit of raw and stats: the target unit, except for delegated events
	 * logged in a unit that does not convert to it (see
	 * etc_inspector_options.delegate_time_scale). */
	int time_scale;
	/** Delegate debug metadata of each run (NULL when no run had any). */
	const uint8_t *const *metadata;
	const uint32_t *metadata_len;
	/** Intermediate outputs logged for this instruction, from the block's first run. */
	uint32_t debug_count;
	const etc_value *debug;
	uint32_t first_run_event; /**< index of its profile (or debug) event in the first run */
	/* Filled by etc_inspector_link (all empty without an ETRecord). */
	uint32_t debug_handle_count;
	const int64_t *debug_handles; /**< from debug_handle_map or delegate_map */
	uint32_t node_count;
	const etc_graph_node *const *nodes; /**< graph nodes of those handles: op_types, traces */
	const char *delegate_backend_name;  /**< NULL when unknown */
	int64_t num_outputs;                /**< instruction_id_to_num_outs_map, -1 when absent */
} etc_inspector_event;

/** Allocation totals of one allocator in one run. */
typedef struct etc_allocator_usage {
	etc_str name;
	uint64_t count;
	uint64_t bytes;
} etc_allocator_usage;

/** An EventBlock: one or more runs with the same signature. */
typedef struct etc_event_block {
	etc_str name;
	int32_t bundled_input_index; /**< -1 when unset */
	uint32_t run_count;
	const uint32_t *runs; /**< ETDump run_data index of each merged run */
	size_t event_count;
	const etc_inspector_event *events;
	/** Program outputs of run k: outputs[output_start[k] .. output_start[k+1]). */
	const etc_value *outputs;
	const uint32_t *output_start;
	/** Allocators of run k: allocators[alloc_start[k] .. alloc_start[k+1]). */
	const etc_allocator_usage *allocators;
	const uint32_t *alloc_start;
} etc_event_block;

typedef struct etc_inspector etc_inspector;

/**
 * Builds the EventBlocks of `dump`.
 * @param buf  debug buffer for tensor data, or NULL (tensors then have no values)
 * @param opt  options, or NULL for the defaults
 * @return 0; ETC_ERR_USAGE for an invalid time-scale pair; ETC_ERR_FORMAT
 *         for an impossible duration or tensor outside `buf` (message names
 *         the run and event); ETC_ERR_MISMATCH in strict mode when merged
 *         runs logged different debug data.
 */
ETC_API int etc_inspector_create(etc_inspector **out, const etc_etdump *dump,
                                 const etc_debug_buffer *buf, const etc_inspector_options *opt,
                                 etc_error *err);

/** Releases `insp`. NULL is a no-op. */
ETC_API void etc_inspector_free(etc_inspector *insp);

ETC_API const etc_etdump *etc_inspector_etdump(const etc_inspector *insp);
ETC_API const etc_debug_buffer *etc_inspector_debug_buffer(const etc_inspector *insp);
ETC_API const etc_inspector_options *etc_inspector_options_get(const etc_inspector *insp);

ETC_API size_t etc_inspector_block_count(const etc_inspector *insp);
ETC_API const etc_event_block *etc_inspector_block(const etc_inspector *insp, size_t i);
/**
 * Does another block have block b's name? Then every table, plot and
 * message calls it "Name#b" (the bundled example's two "Execute" blocks).
 */
ETC_API bool etc_inspector_block_name_shared(const etc_inspector *insp, size_t b);
/**
 * The block named `name`: the first of that name, or "Name#i" for block i
 * (the index the reports show beside a name several blocks share) when
 * block i has that name; NULL when none (or `insp` or `name` is NULL).
 * *index gets its index (may be NULL).
 */
ETC_API const etc_event_block *etc_inspector_block_find(const etc_inspector *insp, const char *name,
                                                        size_t *index);
/**
 * The intermediate outputs event `event` of block `block` logged in the
 * block's run `run` (0 .. run_count - 1; run 0's are the event's `debug`):
 * sets *n to their count (the event's debug_count) and writes at most
 * `cap` of them to `out`. ETC_ERR_USAGE for an index out of range, a NULL `n` or a NULL `out` with
 * `cap` > 0; ETC_ERR_MISMATCH when that run logged another number of values for the event than run
 * 0.
 */
ETC_API int etc_inspector_run_debug(const etc_inspector *insp, size_t block, size_t event,
                                    uint32_t run, etc_value *out, uint32_t cap, uint32_t *n,
                                    etc_error *err);

/**
 * Links every event to the ETRecord as the upstream Inspector does: debug
 * handles from debug_handle_map by instruction id (delegated events through
 * delegate_map by their int or string delegate id), the graph nodes of those
 * handles (op types, stack traces, module hierarchy), the backend name and
 * the number of outputs. Framework events (Method::init,
 * Program::load_method, Method::execute) are not linked.
 *
 * @param method  the ETRecord method to use; NULL for "forward" (or the
 *                record's only method)
 * @return 0; instruction ids without an entry are warnings. ETC_ERR_MISMATCH
 *         when the record has a debug_handle_map but no instruction id of
 *         the ETDump resolves (the ETRecord does not belong to it);
 *         ETC_ERR_USAGE for an unknown method. `rec` must outlive `insp`.
 *         After a failure the inspector keeps its previous link (or none);
 *         only the warnings the failed call added stay.
 */
ETC_API int etc_inspector_link(etc_inspector *insp, const etc_etrecord *rec, const char *method,
                               etc_error *err);

/** The ETRecord linked by etc_inspector_link, or NULL. */
ETC_API const etc_etrecord *etc_inspector_etrecord(const etc_inspector *insp);
/** The ETRecord method linked by etc_inspector_link, or NULL. */
ETC_API const char *etc_inspector_etrecord_method(const etc_inspector *insp);

/**
 * Upstream's find_total_for_module: the sum of the average times of the
 * events (OPERATOR_CALL excluded) one of whose graph nodes has a module
 * stack key containing `module_name`; each event counts once. *count gets
 * the number of events summed (may be NULL). 0 when `insp` or `module_name`
 * is NULL.
 */
ETC_API double etc_inspector_module_total(const etc_inspector *insp, const char *module_name,
                                          size_t *count);

/**
 * Warnings found while grouping (e.g. merged runs whose debug data differ),
 * each a complete sentence naming the block, event and runs.
 */
ETC_API size_t etc_inspector_warning_count(const etc_inspector *insp);
ETC_API const char *etc_inspector_warning(const etc_inspector *insp, size_t i);

/** Computes numpy-compatible percentile statistics of `n` > 0 values. */
ETC_API void etc_perf_stats_compute(const double *values, size_t n, etc_perf_stats *out);

#ifdef __cplusplus
}
#endif
#endif
