/*
 * values_private.h - streaming value readers layered over another
 * etc_values: dequantization of integer codes and reading a tensor in a
 * permuted dimension order. Each reads its chunk through the source's own
 * read and transforms it in place: no copy of the tensor is ever made.
 */
#ifndef ETC_VALUES_PRIVATE_H
#define ETC_VALUES_PRIVATE_H

#include "etcompare/metrics.h"

#include <stdbool.h>
#include <stdint.h>

#define ETC_PERMUTE_MAX_DIMS 8

/* (q - zero_point) * scale, per tensor (channels 1) or per channel: the
 * channel of flat element i is (i / inner) % channels. */
typedef struct etc_dequant {
	etc_values base;                  /* the integer codes, in the order they are read */
	const double *scale, *zero_point; /* `channels` each */
	uint64_t channels;
	uint64_t inner; /* elements per step along the channel axis */
} etc_dequant;

/* Values of `d` (borrowed, must outlive `out`), read as doubles. */
void etc_values_dequant_(etc_values *out, const etc_dequant *d);

/* `base` read in another dimension order: out element with multi-index
 * (i_0 .. i_{ndim-1}) over `sizes` is base element sum(i_k * stride[k]). */
typedef struct etc_permuted {
	etc_values base;
	const etc_tensor *t; /* when base reads this dense tensor: gathered directly */
	uint32_t ndim;
	int64_t sizes[ETC_PERMUTE_MAX_DIMS];
	int64_t stride[ETC_PERMUTE_MAX_DIMS];
	/* the metrics read it as float32 chunks, as they read the dense tensor
	 * it stands for (the same bits): t is float32 */
	bool as_f32;
} etc_permuted;

void etc_values_permuted_(etc_values *out, const etc_permuted *p);

/* Is v a permuted reader that the metrics read as float32 (as_f32)? */
bool etc_values_is_f32_gather_(const etc_values *v);
/* Its elements [start, start + n) in order, as the float32 bits stored. */
void etc_values_gather_f32_(const etc_values *v, uint64_t start, size_t n, float *dst);

/*
 * The channels-last relation of two shapes: when `actual` (sizes a, rank n)
 * is the channels-last form of `reference` (sizes r) or the other way round
 * (rank 3, 4 or 5), fills p's sizes/strides so that reading the actual
 * tensor (dense, row-major in its own sizes) through p follows the
 * reference's order, writes the permutation's name (e.g. "NHWC->NCHW") and
 * returns 1; 0 otherwise.
 */
int etc_channels_last_match_(const int64_t *a, const int64_t *r, uint32_t n, etc_permuted *p,
                             char *name, size_t cap);

#endif
