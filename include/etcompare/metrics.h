/*
 * etcompare/metrics.h - accuracy metrics of one output against its reference.
 *
 * The definitions are upstream's (FORMATS.md §6) evaluated at full precision:
 * with reference r and actual a flattened to the same length n and the
 * error d = a - r,
 *   MSE      = mean(d^2)
 *   SNR (dB) = 10 log10(mean(r^2) / mean(d^2))
 *   cosine   = sum(r a) / (||r|| ||a||)
 *   L1       = mean(|d|)
 *   max abs  = max |d| (and the flat index of its first occurrence)
 *   max rel  = max |d| / |r| over the positions where r != 0
 * Elements are converted to double and the sums r.r, a.a, r.a and d.d are
 * accumulated in double in one pass per chunk, with compensated addition of
 * the chunk sums; the error energy is the sum of the squared differences
 * themselves, never r.r - 2 r.a + a.a, so near-identical outputs keep all
 * their digits (SNR far beyond 140 dB). Large comparisons run on several
 * threads (the environment variable ETC_THREADS sets how many; default the
 * online processors, at most 8) with the same bits whatever the count.
 * Memory use is about 112 KiB per thread whatever the tensor size.
 *
 * Tiny and huge float64: the squares of values below about 1e-162 underflow
 * and those above about 1e+154 overflow. A float comparison whose sums left
 * the double range (r.r, a.a or d.d zero or below 2^-900, or infinite, with
 * no infinite element) is computed again on both sides multiplied by the
 * power of two that brings the largest |value| into [0.5, 1), which is
 * exact: SNR, cosine and max rel are those of the same data at magnitude 1
 * ("reference is all zero" only when it is), and MSE and L1 are scaled back
 * (0 or inf only when the true value is beyond the double range). The
 * counts, max abs and its index come from the raw values. Only float64 (or
 * a source of another dtype) can need it: float32, float16, bfloat16,
 * float8 and integer squares always fit. In the scaled sums a value more
 * than about 2^1074 below the largest |value| counts as zero.
 *
 * Special values:
 * - A position where the reference or the actual value is NaN is excluded
 *   from every metric and counted in nan_count; when only one side is NaN
 *   it is also counted in nan_mismatch_count (and the tensors are not
 *   identical).
 * - Equal values are equal, infinities included: +inf against +inf is an
 *   error of 0. Any other infinity makes the sums infinite and the metrics
 *   that use them inf or NaN (note ETC_METRICS_INFINITE).
 * - Identical tensors: MSE 0, L1 0, max abs 0, max rel 0, SNR +inf, cosine 1
 *   exactly (not subject to rounding).
 * - All-zero reference: SNR -inf when the error is not zero, NaN when it is
 *   (both all zero); note ETC_METRICS_ZERO_REFERENCE. max rel has no
 *   position to use: 0 when identical, NaN otherwise.
 * - A side with zero norm: cosine NaN (note ETC_METRICS_ZERO_NORM), except
 *   when both sides are all zero: they are identical and cosine is 1 (the
 *   note is still set). Otherwise cosine is clamped to [-1, 1].
 * - Nothing compared (no elements, or all NaN): count 0, MSE, L1, SNR and
 *   cosine NaN, max abs and max rel 0 (note ETC_METRICS_EMPTY).
 *
 * Integer-like dtypes (uint8, int8, int16, int32, int64, the unsigned kinds,
 * bool, bits16 and the stored codes of the quantized kinds) on both sides are
 * compared exactly (exact = true): mismatch_count and identical are exact,
 * and MSE/L1/max abs/max rel are filled as for floats. 64-bit integers are
 * compared bit-exactly when both sides are etc_values_from_tensor or
 * contiguous etc_values_from_pytensor sources of the same 64-bit dtype;
 * otherwise they pass through double, and a magnitude beyond 2^53 sets
 * ETC_METRICS_ROUNDED. A float dtype on either side means a float comparison.
 */
#ifndef ETCOMPARE_METRICS_H
#define ETCOMPARE_METRICS_H

#include "common.h"
#include "tensor.h"
#include "torchsave.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A read-only sequence of numbers from any tensor source: `count` elements
 * of dtype `scalar_type`, of which `read` converts [start, start+n) to
 * doubles (src is passed back to it). Fill one yourself for another source.
 */
typedef struct etc_values {
	uint64_t count;
	int scalar_type; /**< etc_scalar_type of the elements */
	void (*read)(const void *src, uint64_t start, size_t n, double *dst);
	const void *src;
} etc_values;

/** Values of a dense tensor: `t->data` must be set. `t` is borrowed. */
ETC_API void etc_values_from_tensor(etc_values *out, const etc_tensor *t);
/** Values of a torch.save tensor in row-major logical order (honours strides). */
ETC_API void etc_values_from_pytensor(etc_values *out, const etc_pytensor *t);
/** `n` doubles at `v` (borrowed), e.g. scalar outputs; scalar_type is ETC_DOUBLE. */
ETC_API void etc_values_from_doubles(etc_values *out, const double *v, uint64_t n);

/** Notes on a comparison (bits of etc_metrics.notes). */
enum {
	ETC_METRICS_ZERO_REFERENCE = 1u << 0, /**< reference all zero: SNR -inf or NaN */
	ETC_METRICS_ZERO_NORM = 1u << 1,      /**< a side has zero norm: cosine undefined */
	ETC_METRICS_NAN = 1u << 2,            /**< NaN positions were excluded */
	ETC_METRICS_NAN_MISMATCH = 1u << 3,   /**< NaN on one side only somewhere */
	ETC_METRICS_INFINITE = 1u << 4,       /**< infinities made some metrics inf/NaN */
	ETC_METRICS_EMPTY = 1u << 5,          /**< nothing compared */
	ETC_METRICS_ROUNDED = 1u << 6         /**< 64-bit integers beyond 2^53 rounded */
};

/** The metrics of one pair (see the definitions at the top of this file). */
typedef struct etc_metrics {
	uint64_t count; /**< elements compared (NaN positions excluded) */
	double snr_db, mse, cosine, l1, max_abs, max_rel;
	uint64_t max_abs_index;      /**< flat index of the first max |a-r| (0 if none) */
	uint64_t nan_count;          /**< positions where reference or actual is NaN */
	uint64_t nan_mismatch_count; /**< ... of which only one side is NaN */
	uint64_t mismatch_count;     /**< compared positions where a != r (any dtype) */
	bool identical;              /**< all compared equal, NaNs at the same positions */
	bool exact;                  /**< both sides integer-like: exact comparison */
	unsigned notes;              /**< ETC_METRICS_* bits */
} etc_metrics;

/**
 * Compares `actual` with `reference` element by element.
 * @return 0, ETC_ERR_USAGE (NULL argument, no read function, a tensor
 *         source without data),
 *         ETC_ERR_MISMATCH (the counts differ; nothing is compared),
 *         ETC_ERR_NOMEM (the chunk buffers)
 */
ETC_API int etc_metrics_compare(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err);

/** A short phrase for one note bit ("reference is all zero", ...); "" for 0. */
ETC_API const char *etc_metrics_note_str(unsigned note);

#ifdef __cplusplus
}
#endif
#endif
