/*
 * etcompare/perfdiff.h - the performance diff: the events of a baseline
 * ETDump matched with those of the current one by signature, their p50
 * durations compared, and the regression gate.
 *
 * Matching: the blocks are paired first (etc_perfdiff_block_match): a
 * current block with the baseline block of the same name and rank among the
 * blocks of that name that logged the same compared events in the same
 * order (two methods writing "Execute" blocks each meet themselves, whatever
 * order they ran in); then the blocks left over by name and rank among the
 * blocks of that name left over (the second "Execute" block with the
 * second). Both ranks count only blocks of the same bundled_input_index
 * when every block of that name, in both ETDumps, has one (the block of
 * input 2 with the baseline's block of input 2). A current block left
 * without a partner (the baseline ran fewer inputs) is compared with the
 * slowest baseline block of its name that logged the same events in the
 * same order (by its Method::execute p50, else the sum of its events' p50):
 * a "fallback" block, whose rows say so. Within paired blocks an event's
 * key is its event name, instruction id and delegate ids (the Inspector's
 * event signature, FORMATS.md §3), the k-th occurrence with the k-th.
 * Events without timing, and OPERATOR_CALL events of blocks that have
 * native_call_* events (the table hides them), are not compared. Events
 * that find no counterpart are listed (etc_perfdiff_unmatched_at): the gate
 * cannot check them.
 *
 * Regression of an event: 100 * (current p50 - baseline p50) / baseline p50
 * (+inf when the baseline p50 is 0 and the current one is not), computed
 * from the durations in integer ticks (before the conversion to the target
 * unit), so that it does not depend on the unit shown: exactly max_regression
 * percent passes in every unit. The gate fails on every Method::execute
 * event, and every other event that regresses more than max_regression
 * percent, unless it is in the target unit and both its baseline and
 * current p50 are below min_event_time (min_event_time is in the target unit:
 * a delegated event kept in its backend's cycles is gated on its change
 * alone).
 *
 * The diff borrows both inspectors: they must outlive it.
 */
#ifndef ETCOMPARE_PERFDIFF_H
#define ETCOMPARE_PERFDIFF_H

#include "common.h"
#include "inspector.h"

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etc_perfdiff_options {
	double max_regression; /**< percent; NaN (the default) = no gate */
	double min_event_time; /**< in the target unit; 0 by default */
} etc_perfdiff_options;

ETC_API void etc_perfdiff_options_init(etc_perfdiff_options *opt);

/** One event found in both ETDumps. */
typedef struct etc_perfdiff_row {
	etc_str block, name; /**< views into the current ETDump */
	int32_t instruction_id;
	size_t base_block, base_event; /**< indices in the baseline inspector */
	size_t cur_block, cur_event;   /**< indices in the current inspector */
	double base_p50, cur_p50;
	double change;         /**< cur_p50 - base_p50 */
	double ratio;          /**< cur_p50 / base_p50 (NaN when both are 0) */
	double change_percent; /**< the regression, see above (NaN when both are 0) */
	bool is_execute;       /**< a Method::execute event */
	bool below_min;        /**< not Method::execute, both p50 below min_event_time */
	bool gated;            /**< the gate applies to it (a gate is set) */
	bool failed;           /**< it regressed beyond max_regression */
	/** Its block has no baseline block of its own: base_block is the fallback
	 * (the slowest baseline block of that name with the same events). */
	bool fallback;
	/** The unit of base_p50, cur_p50 and change (etc_inspector_event.time_scale
	 * of the current event): the target unit, except for a delegated event
	 * kept in its backend's cycles. */
	int unit;
} etc_perfdiff_row;

typedef struct etc_perfdiff etc_perfdiff;

/**
 * Matches and compares. Rows are sorted by change_percent, largest
 * regression first (NaN last; ties by change), rows below min_event_time
 * after all others. Returns 0 or
 * ETC_ERR_NOMEM; ETC_ERR_USAGE when the two inspectors report in different
 * units.
 */
ETC_API int etc_perfdiff_create(etc_perfdiff **out, const etc_inspector *baseline,
                                const etc_inspector *current, const etc_perfdiff_options *opt,
                                etc_error *err);
/** Releases `d`. NULL is a no-op. */
ETC_API void etc_perfdiff_free(etc_perfdiff *d);

ETC_API size_t etc_perfdiff_row_count(const etc_perfdiff *d);
ETC_API const etc_perfdiff_row *etc_perfdiff_row_at(const etc_perfdiff *d, size_t i);
/** Compared events of the baseline (current) that the other ETDump lacks. */
ETC_API size_t etc_perfdiff_baseline_only(const etc_perfdiff *d);
ETC_API size_t etc_perfdiff_current_only(const etc_perfdiff *d);
/** Rows that fail the gate (0 without a gate). */
ETC_API size_t etc_perfdiff_failures(const etc_perfdiff *d);
ETC_API const etc_perfdiff_options *etc_perfdiff_options_get(const etc_perfdiff *d);
ETC_API const etc_inspector *etc_perfdiff_baseline(const etc_perfdiff *d);
ETC_API const etc_inspector *etc_perfdiff_current(const etc_perfdiff *d);

/** How a block of the current ETDump found its baseline block. */
typedef enum etc_perfdiff_match {
	ETC_PERFDIFF_PAIRED = 0,   /**< same name (and input, and events first), k-th with k-th */
	ETC_PERFDIFF_FALLBACK = 1, /**< no partner: the slowest baseline block of the same events */
	ETC_PERFDIFF_UNPAIRED = 2  /**< none: its events are unmatched */
} etc_perfdiff_match;

/**
 * Current block cur_block's baseline block: sets *base_block (when not NULL)
 * to its index in the baseline inspector, or SIZE_MAX when unpaired (also
 * for an index out of range).
 */
ETC_API etc_perfdiff_match etc_perfdiff_block_match(const etc_perfdiff *d, size_t cur_block,
                                                    size_t *base_block);
/** Is baseline block b compared with some current block (paired or as a fallback)? */
ETC_API bool etc_perfdiff_baseline_block_used(const etc_perfdiff *d, size_t base_block);

/** A compared event of one ETDump that has no counterpart in the other. */
typedef struct etc_perfdiff_unmatched {
	bool in_baseline;         /**< an event of the baseline, else of the current ETDump */
	size_t block, event;      /**< indices in that side's inspector */
	etc_str block_name, name; /**< views into that side's ETDump */
	int32_t instruction_id;
	double p50;
	bool is_execute;  /**< a Method::execute event */
	bool whole_block; /**< its block has no counterpart at all */
	bool below_min;   /**< not Method::execute, p50 below min_event_time: never gated */
	int unit;         /**< the unit of p50 (see etc_perfdiff_row.unit) */
} etc_perfdiff_unmatched;

/**
 * The unmatched events: those of the current ETDump first, then the
 * baseline's, each in block and event order. Their count is
 * etc_perfdiff_current_only + etc_perfdiff_baseline_only.
 */
ETC_API size_t etc_perfdiff_unmatched_count(const etc_perfdiff *d);
ETC_API const etc_perfdiff_unmatched *etc_perfdiff_unmatched_at(const etc_perfdiff *d, size_t i);

/**
 * Row r's change in percent as the reports print it ("+6.50", "-", "+inf"):
 * 2 decimals, and on a failing row as many more (up to 6) as it takes not to
 * print the gate's own value (82.7228 against a gate of 82.72 is "+82.7228").
 * Returns buf.
 */
ETC_API const char *etc_perfdiff_percent_text(const etc_perfdiff *d, const etc_perfdiff_row *r,
                                              char *buf, size_t cap);

/**
 * The diff as a box-drawing table (block, event, baseline and current p50,
 * change, ratio, change %, gate), at most `max_rows` rows (0: all), then a
 * line per Method::execute, a "not compared:" line per block with unmatched
 * events (naming them) and a line with the match counts.
 */
ETC_API int etc_report_perfdiff(FILE *out, const etc_perfdiff *d, size_t max_rows, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
