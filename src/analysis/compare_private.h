/*
 * compare_private.h - what the two comparisons (accuracy.c: program outputs,
 * numgap.c: intermediate outputs) share: the gate's verdict on a pair's
 * metrics and the text of a tensor's shape.
 */
#ifndef ETC_COMPARE_PRIVATE_H
#define ETC_COMPARE_PRIVATE_H

#include "etcompare/metrics.h"

#include <stdbool.h>

/* The gate's thresholds; NaN disables one. */
typedef struct etc_gate {
	double min_snr, max_mse, min_cosine, max_abs;
} etc_gate;

/*
 * The verdict on one compared pair: ETC_ROW_PASS or ETC_ROW_FAIL with the
 * reason in `why` (the first threshold failed, NaN on one side only,
 * infinities, integer mismatches). Identical values always pass.
 */
int etc_gate_judge_(const etc_metrics *m, const etc_gate *g, char *why, size_t cap);
/* Whether any of the four thresholds is set (not NaN). */
bool etc_gate_set_(double min_snr, double max_mse, double min_cosine, double max_abs);

/* Bytes that hold the whole shape string of any tensor (64 dimensions). */
enum { ETC_SHAPE_FULL = 1600 };
/* "[2, 3]" for the sizes of `t`, for display; when it does not fit in cap
 * the middle is left out with a marker ("[1, 1, \u2026 34 more \u2026, 2, 3]"),
 * never cut silently. Compare shapes with etc_shape_equal_, never as text. */
void etc_shape_str_(const etc_tensor *t, char *buf, size_t cap);
/* Same rank and the same size in every dimension. */
bool etc_shape_equal_(const etc_tensor *a, const etc_tensor *b);

/* True for the floating-point scalar types (half, float, double, bfloat16, float8). */
bool etc_scalar_type_is_float_(int scalar_type);

#endif
