/*
 * metrics_kernels.h - the per-chunk passes of metrics.c (metrics_kernels.c)
 * and what they share with the driver: a chunk's result and the float32
 * kernel type.
 */
#ifndef ETC_METRICS_KERNELS_H
#define ETC_METRICS_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What a pass over one chunk found: the four dot products, sum |d|, max |d|
 * (its index is looked up afterwards, only when it raises the maximum), the
 * count of d != 0, and max |d|/|r| over r != 0 (in, the value so far; out,
 * updated: the running value screens blocks, see below).
 */
typedef struct chunk_res {
	double rr, aa, ra, dd, l1, max_abs, rel;
	uint64_t ne;
} chunk_res;

/*
 * The float32 kernels: one streaming pass over both inputs that converts to
 * double in registers and produces every sum at once (nothing is stored).
 * NaN input gives NaN in dd and garbage elsewhere, and so do equal
 * infinities (d = a - r is not masked where a == r): the caller detects it
 * and redoes the chunk exactly without the NaNs. The relative error is only divided
 * out for a block in which some |d| > rel |r| with r != 0 (rare once rel
 * nears its final value), so there is no division per element.
 */
typedef void (*f32_pass_fn)(const uint8_t *rp, const uint8_t *ap, size_t n, chunk_res *res);

/*
 * sum (a - x)^2 of n float32 pairs, plain: no a == x test and no NaN
 * exclusion (NaN and inf - inf propagate), as content pairing's direct sums
 * (src/analysis/pairing.c). A second reference's error energy summed in the
 * comparison's read of a (a's chunk is then in the L1 cache).
 */
typedef double (*f32_dd_fn)(const uint8_t *xp, const uint8_t *ap, size_t n);

/* The float32 kernels, best last; the unit tests pick one to check each. */
enum { KERNEL_GENERIC, KERNEL_AVX2, KERNEL_AVX512, KERNEL_BEST };

/* The float32 kernel for a KERNEL_* choice (one the CPU lacks falls back). */
f32_pass_fn etc_metrics_pick_kernel_(int kernel);

/* The f32_dd_fn for a KERNEL_* choice (AVX2+FMA or portable). */
f32_dd_fn etc_metrics_pick_dd_(int kernel);

/* The first k in [0, n) of the float32 chunk with |a - r| == target. */
size_t etc_metrics_f32_find_(const uint8_t *rp, const uint8_t *ap, size_t n, double target);

/* Raises res->rel from the doubles [i, i+len). */
void etc_metrics_rel_block_(const double *r, const double *d, size_t i, size_t len, chunk_res *res);

/* d = a - r (0 where a == r) with the count of d != 0, sum |d|, max |d|, max |d|/|r|. */
void etc_metrics_diff_pass_(const double *r, const double *a, double *d, size_t n, chunk_res *res);

/* r.r, a.a, r.a and d.d of n doubles, added to res. */
void etc_metrics_dots_pass_(const double *r, const double *a, const double *d, size_t n,
                            chunk_res *res);

/* The first k in [0, n) with |d[k]| == target. */
size_t etc_metrics_d_find_(const double *d, size_t n, double target);

/* d = a - r from raw 64-bit integers, exact until the final rounding. */
void etc_metrics_int64_diff_pass_(const uint8_t *rp, const uint8_t *ap, bool is_signed, size_t n,
                                  double *d, chunk_res *res);

#endif
