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

/* "[2, 3]" for the sizes of `t` (truncated to cap). */
void etc_shape_str_(const etc_tensor *t, char *buf, size_t cap);

/* True for the floating-point scalar types (half, float, double, bfloat16, float8). */
bool etc_scalar_type_is_float_(int scalar_type);

#endif
