/*
 * numgap_compare.h - the numeric gap's comparisons run after alignment, on
 * several threads (numgap_compare.c). numgap.c records the rows whose pair
 * is ready to compare; each row's metrics and verdict do not depend on the
 * thread count.
 */
#ifndef ETC_NUMGAP_COMPARE_H
#define ETC_NUMGAP_COMPARE_H

#include "etcompare/numgap.h"
#include "analysis/compare_private.h"

#include <stddef.h>

/* Row indexes waiting for their comparison, in row order. */
typedef struct etc_ng_pending {
	size_t *rows;
	size_t n, cap;
} etc_ng_pending;

int etc_ng_pending_add_(etc_ng_pending *p, size_t row, etc_error *err);
void etc_ng_pending_free_(etc_ng_pending *p);

/* The values of row i: the runtime's (read as the reference is laid out,
 * dequantized) and the reference's. Called from several threads at once. */
typedef void (*etc_ng_values_fn)(void *ctx, size_t row, etc_values *actual, etc_values *reference);

/*
 * Compares the values of every pending row i (from `values`), filling
 * rows[i].metrics, has_metrics and the gate's status and reason. Large
 * pairs go one at a time, each split over the threads by metrics.c; the
 * others are spread over the threads, one pair per thread at a time. On
 * failure, the error of the first failing row in row order.
 */
int etc_ng_compare_rows_(etc_numgap_row *rows, etc_ng_values_fn values, void *ctx,
                         const etc_ng_pending *p, const etc_gate *gate, etc_error *err);

#endif
