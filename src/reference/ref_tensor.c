/*
 * ref_tensor.c - the reference executor's tensors: dense, contiguous,
 * owned buffers with element access in any supported dtype.
 */
#include "reference/ref_op.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

bool ref_dtype_is_float(int dtype)
{
	return dtype == ETC_DOUBLE || dtype == ETC_FLOAT;
}

bool ref_dtype_supported(int dtype)
{
	switch (dtype) {
	case ETC_DOUBLE:
	case ETC_FLOAT:
	case ETC_BYTE:
	case ETC_CHAR:
	case ETC_SHORT:
	case ETC_INT:
	case ETC_LONG:
	case ETC_BOOL:
		return true;
	default:
		return false;
	}
}

const char *ref_shape_str(char *buf, size_t cap, uint32_t rank, const int64_t *shape)
{
	size_t at = 0;
	if (cap == 0)
		return buf;
	buf[0] = 0;
	at += (size_t)snprintf(buf, cap, "[");
	for (uint32_t d = 0; d < rank && at < cap; d++)
		at += (size_t)snprintf(buf + at, cap - at, "%s%" PRId64, d ? ", " : "", shape[d]);
	if (at < cap)
		snprintf(buf + at, cap - at, "]");
	return buf;
}

/* t's dtype, rank, shape and numel, checked; no data. */
static int set_shape(ref_tensor *t, int dtype, uint32_t rank, const int64_t *shape, etc_error *err)
{
	memset(t, 0, sizeof *t);
	if (!ref_dtype_supported(dtype))
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "reference tensors of dtype %s are not supported",
		                etc_scalar_type_name(dtype));
	if (rank > ETC_REF_MAX_RANK)
		return etc_fail(err, ETC_ERR_LIMIT, NULL, -1, "rank %u exceeds %d", rank,
		                ETC_REF_MAX_RANK);
	uint64_t n = 1;
	for (uint32_t d = 0; d < rank; d++) {
		if (shape[d] < 0)
			return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1, "negative size %" PRId64,
			                shape[d]);
		if (shape[d] && n > ETC_REF_MAX_BYTES / (uint64_t)shape[d])
			return etc_fail(err, ETC_ERR_LIMIT, NULL, -1, "tensor too large");
		n *= (uint64_t)shape[d];
		t->shape[d] = shape[d];
	}
	size_t es = etc_scalar_type_size(dtype);
	if (n > ETC_REF_MAX_BYTES / es)
		return etc_fail(err, ETC_ERR_LIMIT, NULL, -1,
		                "tensor of %" PRIu64 " elements exceeds the reference's limit", n);
	t->dtype = dtype;
	t->rank = rank;
	t->numel = n;
	return 0;
}

int ref_tensor_alloc(ref_tensor *t, int dtype, uint32_t rank, const int64_t *shape, etc_error *err)
{
	ETC_TRY(set_shape(t, dtype, rank, shape, err));
	size_t es = etc_scalar_type_size(dtype);
	t->data = calloc(t->numel ? t->numel : 1, es);
	if (!t->data)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (%" PRIu64 " bytes)",
		                t->numel * es);
	return 0;
}

int ref_tensor_take(ref_tensor *dst, const etc_reftensor *src, int dtype, etc_error *err)
{
	size_t es = etc_scalar_type_size(src->dtype);
	if (src->dtype != dtype || !src->data || !es || (uintptr_t)src->data % es)
		return ref_tensor_convert(dst, src, dtype, err);
	ETC_TRY(set_shape(dst, dtype, src->rank, src->shape, err));
	if (dst->numel != src->numel) {
		uint64_t n = dst->numel;
		memset(dst, 0, sizeof *dst);
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "tensor of %" PRIu64 " elements has a shape of %" PRIu64,
		                src->numel, n);
	}
	dst->data = (void *)src->data;
	dst->borrowed = true;
	return 0;
}

void ref_tensor_free(ref_tensor *t)
{
	if (!t)
		return;
	if (!t->borrowed)
		free(t->data);
	t->data = NULL;
	t->numel = 0;
	t->transposed = false;
}

void ref_release_call(const ref_release *r, const void *base, const void *upto)
{
	if (r && r->fn)
		r->fn(r->ctx, base, upto);
}

int ref_transpose_into(void *dst, int dtype, const void *src, int src_dtype, uint64_t rows,
                       uint64_t cols, const ref_release *rel, etc_error *err)
{
	enum { BAND = 16 };
	size_t es = etc_scalar_type_size(src_dtype);
	bool widen = dtype != src_dtype;
	uint8_t *band = malloc(rows ? (size_t)(rows * BAND * es) : 1);
	if (!band)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	const uint8_t *from = src;
	for (uint64_t j0 = 0; j0 < cols; j0 += BAND) {
		size_t nb = cols - j0 < BAND ? (size_t)(cols - j0) : BAND;
		/* through memcpy: the record's bytes may be misaligned */
		memcpy(band, from + j0 * rows * es, nb * rows * es);
		/* out[i][j0 + c] = band row c, element i: nb elements in a row of
		   the output for each i */
		for (uint64_t i = 0; i < rows; i++) {
			uint64_t at = i * cols + j0;
			if (widen) {
				const float *b = (const float *)band;
				for (size_t c = 0; c < nb; c++)
					((double *)dst)[at + c] = b[c * rows + i];
			} else if (es == 4) {
				const uint32_t *b = (const uint32_t *)band;
				for (size_t c = 0; c < nb; c++)
					((uint32_t *)dst)[at + c] = b[c * rows + i];
			} else {
				for (size_t c = 0; c < nb; c++)
					memcpy((uint8_t *)dst + (at + c) * es,
					       band + (c * rows + i) * es, es);
			}
		}
		ref_release_call(rel, from, from + (j0 + nb) * rows * es);
	}
	free(band);
	return 0;
}

int ref_tensor_dense(ref_tensor *dst, const ref_tensor *t, int dtype, const ref_release *rel,
                     etc_error *err)
{
	if (!t->transposed) {
		etc_reftensor v = ref_tensor_view(t);
		return ref_tensor_convert(dst, &v, dtype, err);
	}
	if (t->rank != 2 || (dtype != t->dtype && (t->dtype != ETC_FLOAT || dtype != ETC_DOUBLE)))
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "a transposed view of %s read as %s",
		                etc_scalar_type_name(t->dtype), etc_scalar_type_name(dtype));
	ETC_TRY(ref_tensor_alloc(dst, dtype, 2, t->shape, err));
	int rc = ref_transpose_into(dst->data, dtype, t->data, t->dtype, (uint64_t)t->shape[0],
	                            (uint64_t)t->shape[1], rel, err);
	if (rc < 0)
		ref_tensor_free(dst);
	return rc;
}

etc_reftensor ref_tensor_view(const ref_tensor *t)
{
	etc_reftensor v = {t->dtype, t->rank, t->rank ? t->shape : NULL, t->numel, t->data};
	return v;
}

static double get_f(int dtype, const void *p, uint64_t i)
{
	switch (dtype) {
	case ETC_DOUBLE:
		return ((const double *)p)[i];
	case ETC_FLOAT:
		return ((const float *)p)[i];
	case ETC_BYTE:
		return ((const uint8_t *)p)[i];
	case ETC_CHAR:
		return ((const int8_t *)p)[i];
	case ETC_SHORT:
		return ((const int16_t *)p)[i];
	case ETC_INT:
		return ((const int32_t *)p)[i];
	case ETC_LONG:
		return (double)((const int64_t *)p)[i];
	case ETC_BOOL:
		return ((const uint8_t *)p)[i] != 0;
	default:
		return 0;
	}
}

double ref_get_f(const ref_tensor *t, uint64_t i)
{
	return get_f(t->dtype, t->data, i);
}

int64_t ref_get_i(const ref_tensor *t, uint64_t i)
{
	switch (t->dtype) {
	case ETC_LONG:
		return ((const int64_t *)t->data)[i];
	case ETC_DOUBLE:
	case ETC_FLOAT: {
		double v = ref_get_f(t, i);
		/* Out of range or NaN: saturate rather than undefined behaviour. */
		if (!(v == v))
			return 0;
		if (v >= 9.2233720368547758e18)
			return INT64_MAX;
		if (v <= -9.2233720368547758e18)
			return INT64_MIN;
		return (int64_t)v;
	}
	default:
		return (int64_t)ref_get_f(t, i);
	}
}

static int64_t sat_i(double v, double lo, double hi)
{
	if (!(v == v))
		return 0;
	if (v < lo)
		return (int64_t)lo;
	if (v > hi)
		return (int64_t)hi;
	return (int64_t)v;
}

void ref_set_f(ref_tensor *t, uint64_t i, double v)
{
	switch (t->dtype) {
	case ETC_DOUBLE:
		((double *)t->data)[i] = v;
		break;
	case ETC_FLOAT:
		((float *)t->data)[i] = (float)v;
		break;
	case ETC_BOOL:
		((uint8_t *)t->data)[i] = v != 0;
		break;
	case ETC_LONG:
		((int64_t *)t->data)[i] = sat_i(v, -9.2233720368547758e18, 9.2233720368547748e18);
		break;
	default:
		ref_set_i(t, i, sat_i(v, -2147483648.0, 2147483647.0));
		break;
	}
}

void ref_set_i(ref_tensor *t, uint64_t i, int64_t v)
{
	/* Integer narrowing wraps, as torch's .to() does. */
	switch (t->dtype) {
	case ETC_DOUBLE:
		((double *)t->data)[i] = (double)v;
		break;
	case ETC_FLOAT:
		((float *)t->data)[i] = (float)v;
		break;
	case ETC_BYTE:
		((uint8_t *)t->data)[i] = (uint8_t)v;
		break;
	case ETC_CHAR:
		((int8_t *)t->data)[i] = (int8_t)(uint8_t)v;
		break;
	case ETC_SHORT:
		((int16_t *)t->data)[i] = (int16_t)(uint16_t)v;
		break;
	case ETC_INT:
		((int32_t *)t->data)[i] = (int32_t)(uint32_t)v;
		break;
	case ETC_LONG:
		((int64_t *)t->data)[i] = v;
		break;
	case ETC_BOOL:
		((uint8_t *)t->data)[i] = v != 0;
		break;
	default:
		break;
	}
}

int ref_tensor_convert(ref_tensor *dst, const etc_reftensor *src, int dtype, etc_error *err)
{
	if (!ref_dtype_supported(src->dtype))
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "tensors of dtype %s are not supported by the reference",
		                etc_scalar_type_name(src->dtype));
	ETC_TRY(ref_tensor_alloc(dst, dtype, src->rank, src->shape, err));
	if (dst->numel != src->numel) {
		ref_tensor_free(dst);
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "tensor of %" PRIu64 " elements has a shape of %" PRIu64,
		                src->numel, dst->numel);
	}
	if (src->dtype == dtype) {
		memcpy(dst->data, src->data, src->numel * etc_scalar_type_size(dtype));
		return 0;
	}
	bool int_copy = !ref_dtype_is_float(src->dtype) && !ref_dtype_is_float(dtype);
	ref_tensor tmp = {.dtype = src->dtype, .data = (void *)src->data, .borrowed = true};
	for (uint64_t i = 0; i < src->numel; i++) {
		if (int_copy)
			ref_set_i(dst, i, ref_get_i(&tmp, i));
		else
			ref_set_f(dst, i, get_f(src->dtype, src->data, i));
	}
	return 0;
}
