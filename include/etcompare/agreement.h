/*
 * etcompare/agreement.h - run-to-run agreement: the matrix of pairwise SNR
 * between N runs of the same output (devices, repeated runs of one input)
 * from one Gram matrix, accumulated in blocks of elements through BLAS
 * level 3 (dsyrk, double accumulation) instead of N^2/2 pairwise passes.
 *
 * Each block holds the same element range of every run (run i at
 * block[i * ld], `count` float32 values). Within a block the values are
 * taken relative to the block's mean over the runs (exact differences of
 * runs do not depend on it, and the cancellation in
 * |d_i|^2 + |d_j|^2 - 2 d_i.d_j shrinks to the runs' spread); the block's
 * squared distances |x_i - x_j|^2 and the squared norms |x_j|^2 are added
 * to the accumulator, so partial accumulators over disjoint element ranges
 * (workers) combine by adding (etc_agreement_merge).
 *
 * snr[i][j] is run i against run j as reference: 10 log10(|x_j|^2 /
 * |x_i - x_j|^2), as etc_metrics' snr_db; +inf when the distance is below
 * the Gram's resolution (1e-12 of the accumulated |d_i|^2 + |d_j|^2, which
 * includes bitwise-equal runs), NaN when the reference is all zeros and the
 * distance is zero, -inf when only the reference is all zeros.
 */
#ifndef ETCOMPARE_AGREEMENT_H
#define ETCOMPARE_AGREEMENT_H

#include "common.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The accumulator of N runs (opaque). */
typedef struct etc_agreement etc_agreement;

/** A new accumulator for `runs` runs (at least 2); *out is freed with etc_agreement_free. */
ETC_API int etc_agreement_new(size_t runs, etc_agreement **out, etc_error *err);
ETC_API void etc_agreement_free(etc_agreement *ag);

/** The number of runs of `ag`. */
ETC_API size_t etc_agreement_runs(const etc_agreement *ag);

/** Adds one block: `count` values of each run, run i at block + i * ld (ld >= count). */
ETC_API int etc_agreement_add_f32(etc_agreement *ag, const float *block, size_t ld, size_t count,
                                  etc_error *err);

/** Adds a partial accumulator of the same runs over other elements into `into`. */
ETC_API int etc_agreement_merge(etc_agreement *into, const etc_agreement *part, etc_error *err);

/**
 * The raw sums, for moving a partial accumulator between processes: dist
 * (runs x runs, |x_i - x_j|^2), res (runs x runs, the resolution sums),
 * norm (runs, |x_i|^2) and the element count; any pointer may be NULL.
 * etc_agreement_add_sums puts them back (adding to what is there).
 */
ETC_API void etc_agreement_sums(const etc_agreement *ag, double *dist, double *res, double *norm,
                                size_t *elements);
ETC_API void etc_agreement_add_sums(etc_agreement *ag, const double *dist, const double *res,
                                    const double *norm, size_t elements);

/** Fills snr (runs x runs, row-major, snr[i * runs + j] = run i against reference j). */
ETC_API int etc_agreement_snr(const etc_agreement *ag, double *snr, etc_error *err);

#ifdef __cplusplus
}
#endif

#endif
