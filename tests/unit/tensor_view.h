/*
 * tensor_view.h - a 1-D etc_tensor over the test's own bytes, for the unit
 * tests that feed etc_values_from_tensor without an ETDump.
 */
#ifndef ETC_TENSOR_VIEW_H
#define ETC_TENSOR_VIEW_H

#include "etcompare/metrics.h"
#include "etcompare/tensor.h"

#include <stdint.h>
#include <string.h>

/* Not to be copied: t.sizes_le points inside. */
typedef struct view {
	etc_tensor t;
	uint8_t sizes[8];
} view;

static void view_init(view *v, int st, const void *data, uint64_t n)
{
	memset(v, 0, sizeof *v);
	for (int i = 0; i < 8; i++)
		v->sizes[i] = (uint8_t)(n >> (8 * i));
	v->t.scalar_type = st;
	v->t.ndim = 1;
	v->t.sizes_le = v->sizes;
	v->t.numel = n;
	v->t.nbytes = n * etc_scalar_type_size(st);
	v->t.data = data;
}

/* x reads the n elements of type st at data, through v. */
static void view_values(view *v, etc_values *x, int st, const void *data, uint64_t n)
{
	view_init(v, st, data, n);
	etc_values_from_tensor(x, &v->t);
}

#endif
