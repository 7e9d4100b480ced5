/*
 * etcompare/profile.h - the profiling summaries beyond the Inspector's
 * table: framework tax, memory per allocator, operators, modules and
 * delegates, computed once from an inspector's EventBlocks (one linear pass
 * plus a sort per summary), and their renderings.
 *
 * Definitions (README.md "Profiling tables"):
 *  - operator time of a run: the native_call_* events of its block (when
 *    the block has none, its OPERATOR_CALL events); delegate-call time: its
 *    DELEGATE_CALL events. Events with a delegate id run on the backend's
 *    clock (scaled as the others unless etc_inspector_options says
 *    otherwise) and are never added to framework times.
 *  - framework tax of a run = Method::execute - operator time - delegate-call
 *    time, and that as a percentage of Method::execute.
 *  - operators: every timed event that is not a framework event
 *    (Method::*, Program::load_method), OPERATOR_CALL (when native_call_*
 *    events exist), DELEGATE_CALL or delegated; keyed by event name, or by
 *    the op types of its graph nodes when linked to an ETRecord.
 *  - modules: upstream's find_total_for_module for every module of the
 *    linked nodes' module stacks, as a tree.
 * Durations are in the inspector's target unit; "share" is a fraction of
 * the total Method::execute time over all runs (NaN when there is none).
 *
 * Everything returned is owned by the etc_profile, which borrows the
 * inspector: the inspector must outlive it.
 */
#ifndef ETCOMPARE_PROFILE_H
#define ETCOMPARE_PROFILE_H

#include "common.h"
#include "inspector.h"
#include "plot.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The tables of --tables, as bits. */
enum {
	ETC_TABLE_PROFILE = 1u << 0,   /**< the Inspector's table (report.h) */
	ETC_TABLE_TAX = 1u << 1,       /**< framework tax per run and over runs */
	ETC_TABLE_MEMORY = 1u << 2,    /**< allocations per allocator, run and block */
	ETC_TABLE_OPS = 1u << 3,       /**< per operator */
	ETC_TABLE_MODULES = 1u << 4,   /**< per module of the module hierarchy */
	ETC_TABLE_DELEGATES = 1u << 5, /**< per delegate backend */
	ETC_TABLE_ALL = (1u << 6) - 1
};

/**
 * Parses a comma-separated list of profile, tax, memory, ops, modules,
 * delegates and all. Returns 0 or ETC_ERR_USAGE (unknown or empty name).
 */
ETC_API int etc_profile_tables_parse(const char *list, unsigned *mask);
/** "profile", "tax", ... for one ETC_TABLE_* bit; NULL for anything else. */
ETC_API const char *etc_profile_table_name(unsigned bit);

typedef struct etc_profile etc_profile;

/** Framework tax of one run of a block that has a Method::execute event. */
typedef struct etc_tax_row {
	size_t block;          /**< inspector block index */
	uint32_t run;          /**< run within the block */
	uint32_t etdump_run;   /**< its ETDump run_data index */
	double execute;        /**< Method::execute */
	double operators;      /**< native_call_* (or OPERATOR_CALL) events */
	double delegate_calls; /**< DELEGATE_CALL events */
	double tax;            /**< execute - operators - delegate_calls */
	double tax_percent;    /**< 100 * tax / execute (NaN when execute is 0) */
	/** no instruction logged native_call_*: operators are OPERATOR_CALL events
	 *  (otherwise each instruction's native_call_*, or its OPERATOR_CALL when
	 *  it logged none: a prim op, a kernel registered without codegen) */
	bool operator_call_fallback;
} etc_tax_row;

/** The tax of one block over its runs. */
typedef struct etc_tax_summary {
	size_t block;
	uint32_t runs;
	size_t first_row; /**< its runs are rows first_row .. first_row + runs - 1 */
	etc_tax_row mean; /**< means over runs; tax_percent = 100 * mean tax / mean execute */
	etc_perf_stats tax_stats; /**< statistics of the per-run tax */
	etc_perf_stats pct_stats; /**< statistics of the per-run tax_percent */
} etc_tax_summary;

/** One allocator of one run (allocators of runs without any are absent). */
typedef struct etc_memory_row {
	size_t block;
	uint32_t run, etdump_run;
	uint32_t allocator_id; /**< 1-based, as allocation events name it */
	etc_str name;
	uint64_t count;
	uint64_t bytes; /**< UINT64_MAX when the sum overflowed */
} etc_memory_row;

/** One operator (or op type), over every run of every block. */
typedef struct etc_op_row {
	const char *name;
	uint64_t count; /**< timed occurrences: events x runs */
	double total, mean, p50;
	double share; /**< total / total Method::execute */
} etc_op_row;

/** One module of the module hierarchy, in depth-first (tree) order. */
typedef struct etc_module_row {
	const char *key;  /**< nn_module_stack key */
	const char *path; /**< module path ("" for the root) */
	const char *type; /**< module type */
	uint32_t depth;   /**< 0 for an outermost module */
	long parent;      /**< row index of the parent, -1 at depth 0 */
	size_t events;    /**< events counted (as find_total_for_module) */
	double total;     /**< sum of the average times, = find_total_for_module(key) */
	double share;     /**< total / sum of the average Method::execute times; NAN when the
	                     total counts delegated events in another unit (cycles) */
} etc_module_row;

/** One delegate backend ("(unknown)" without an ETRecord). */
typedef struct etc_delegate_row {
	const char *backend;
	uint64_t calls; /**< DELEGATE_CALL occurrences (events x runs) */
	double total, mean;
	double share;            /**< total / total Method::execute */
	uint64_t backend_events; /**< delegated (backend-clock) event occurrences */
} etc_delegate_row;

/**
 * Computes every summary of `insp` (the modules only when it is linked to
 * an ETRecord). Returns 0 or ETC_ERR_NOMEM.
 */
ETC_API int etc_profile_create(etc_profile **out, const etc_inspector *insp, etc_error *err);
/** Releases `p`. NULL is a no-op. */
ETC_API void etc_profile_free(etc_profile *p);
ETC_API const etc_inspector *etc_profile_inspector(const etc_profile *p);

/** Sum of every run's Method::execute (NaN when no block has one). */
ETC_API double etc_profile_execute_total(const etc_profile *p);

ETC_API size_t etc_profile_tax_count(const etc_profile *p);
ETC_API const etc_tax_row *etc_profile_tax(const etc_profile *p, size_t i);
ETC_API size_t etc_profile_tax_summary_count(const etc_profile *p);
ETC_API const etc_tax_summary *etc_profile_tax_summary(const etc_profile *p, size_t i);

ETC_API size_t etc_profile_memory_count(const etc_profile *p);
ETC_API const etc_memory_row *etc_profile_memory(const etc_profile *p, size_t i);

/** Sorted by total, largest first (ties by name). */
ETC_API size_t etc_profile_op_count(const etc_profile *p);
ETC_API const etc_op_row *etc_profile_op(const etc_profile *p, size_t i);
/** True when op rows are keyed by ETRecord op types rather than event names. */
ETC_API bool etc_profile_ops_by_type(const etc_profile *p);

ETC_API size_t etc_profile_module_count(const etc_profile *p);
ETC_API const etc_module_row *etc_profile_module(const etc_profile *p, size_t i);

/**
 * True when a module total includes delegated events whose averages are in
 * their own unit (--delegate-time-scale cycles): find_total_for_module adds
 * them as they are.
 */
ETC_API bool etc_profile_modules_mix_units(const etc_profile *p);

/** How etc_profile_module_total matched a module name. */
typedef enum etc_module_match {
	ETC_MODULE_PATH = 1,         /**< the dotted path the modules table prints ("head.fc") */
	ETC_MODULE_KEY = 2,          /**< the nn_module_stack key ("L__self___head_fc") */
	ETC_MODULE_TYPE = 3,         /**< a type, full or its last component ("Linear") */
	ETC_MODULE_KEY_SUBSTRING = 4 /**< part of a key, as upstream's find_total_for_module */
} etc_module_match;

/**
 * find_total_for_module by the names users see: the total average time of
 * the events (OPERATOR_CALL excluded, each once) with a module matching
 * `name`, tried in etc_module_match order; *match says which (may be NULL).
 * Needs a linked inspector. @return 0; ETC_ERR_MISMATCH when nothing
 * matches, the message listing up to five close module names.
 */
ETC_API int etc_profile_module_total(const etc_inspector *insp, const char *name, double *total,
                                     size_t *count, int *match, etc_error *err);

/** Sorted by total, largest first. */
ETC_API size_t etc_profile_delegate_count(const etc_profile *p);
ETC_API const etc_delegate_row *etc_profile_delegate(const etc_profile *p, size_t i);

/**
 * The tables of `mask` (ETC_TABLE_PROFILE excluded: see etc_report_table)
 * as box-drawing grids, each under a title line "== <name> ==" when
 * `titles` is set.
 */
ETC_API int etc_report_profile_tables(FILE *out, const etc_profile *p, unsigned mask, bool titles,
                                      etc_error *err);
/**
 * The same tables as TSV: one section per table, each a "# <name>" line, a
 * header line and its rows, sections separated by an empty line; numbers
 * as Python's repr().
 */
ETC_API int etc_report_profile_tsv(FILE *out, const etc_profile *p, unsigned mask, etc_error *err);
/**
 * Plots in o->dir: ops_top (horizontal bars, top `top_n` operators by
 * total), ops_runs (box plot of the per-run time of those operators),
 * tax_runs (framework tax per run) and timeline (one run, Gantt-style).
 * Plots without data (no operators, no Method::execute) are skipped.
 */
ETC_API int etc_report_profile_plots(const etc_plot_options *o, const etc_profile *p, size_t top_n,
                                     etc_plot_result *res, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
