/*
 * refimport.c - input-file tensors into reference tensors (refimport.h).
 */
#include "reference/refimport.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int ref_import_dtype(int dtype, int float_dtype)
{
	switch (dtype) {
	case ETC_HALF:
	case ETC_FLOAT:
	case ETC_DOUBLE:
	case ETC_BFLOAT16:
	case ETC_FLOAT8E5M2:
	case ETC_FLOAT8E4M3FN:
	case ETC_FLOAT8E5M2FNUZ:
	case ETC_FLOAT8E4M3FNUZ:
		return float_dtype;
	case ETC_BYTE:
	case ETC_CHAR:
	case ETC_SHORT:
	case ETC_INT:
	case ETC_LONG:
	case ETC_BOOL:
		return dtype;
	default:
		return -1;
	}
}

static int64_t load_int(int dtype, const uint8_t *p)
{
	switch (dtype) {
	case ETC_BYTE:
	case ETC_BOOL:
		return p[0];
	case ETC_CHAR:
		return (int8_t)p[0];
	case ETC_SHORT:
		return (int16_t)etc_le16(p);
	case ETC_INT:
		return (int32_t)etc_le32(p);
	default:
		return (int64_t)etc_le64(p);
	}
}

int ref_import_tensor(ref_tensor *dst, const etc_tensor *src, int float_dtype, const char *what,
                      etc_error *err)
{
	int dt = ref_import_dtype(src->scalar_type, float_dtype);
	memset(dst, 0, sizeof *dst);
	if (dt < 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "%s: tensors of dtype %s are not supported by the reference", what,
		                etc_scalar_type_name(src->scalar_type));
	if (src->ndim > ETC_REF_MAX_RANK)
		return etc_fail(err, ETC_ERR_LIMIT, NULL, -1, "%s: rank %u exceeds %d", what,
		                src->ndim, ETC_REF_MAX_RANK);
	if (src->numel && !src->data)
		return etc_fail(err, ETC_ERR_FORMAT, NULL, -1, "%s: the tensor has no data", what);
	int64_t shape[ETC_REF_MAX_RANK];
	for (uint32_t d = 0; d < src->ndim; d++)
		shape[d] = etc_tensor_size(src, d);
	int rc = ref_tensor_alloc(dst, dt, src->ndim, shape, err);
	if (rc < 0) {
		char msg[sizeof err->message];
		snprintf(msg, sizeof msg, "%s", err ? err->message : "");
		return etc_fail(err, rc, NULL, -1, "%s: %s", what, msg);
	}
	if (dst->numel != src->numel) {
		ref_tensor_free(dst);
		return etc_fail(err, ETC_ERR_FORMAT, NULL, -1,
		                "%s: %" PRIu64 " elements for a shape of %" PRIu64, what,
		                src->numel, dst->numel);
	}
	size_t esz = etc_scalar_type_size(src->scalar_type);
	if (ref_dtype_is_float(dt)) {
		if (src->scalar_type == dt) {
			memcpy(dst->data, src->data, dst->numel * esz);
			return 0;
		}
		if (src->scalar_type == ETC_FLOAT && dt == ETC_DOUBLE) {
			/* the common case, without a dispatch per element */
			double *o = dst->data;
			for (uint64_t i = 0; i < dst->numel; i++) {
				uint32_t u = etc_le32(src->data + 4 * i);
				float f;
				memcpy(&f, &u, sizeof f);
				o[i] = f;
			}
			return 0;
		}
		for (uint64_t i = 0; i < dst->numel; i++)
			ref_set_f(dst, i, etc_tensor_get(src, i));
		return 0;
	}
	for (uint64_t i = 0; i < dst->numel; i++)
		ref_set_i(dst, i, load_int(dt, src->data + i * esz));
	return 0;
}

int ref_import_pytensor(ref_tensor *dst, const etc_pytensor *src, int float_dtype, const char *what,
                        etc_error *err)
{
	if (src->contiguous && (src->tensor.data || src->tensor.numel == 0))
		return ref_import_tensor(dst, &src->tensor, float_dtype, what, err);
	memset(dst, 0, sizeof *dst);
	uint8_t *buf = malloc(src->tensor.nbytes ? (size_t)src->tensor.nbytes : 1);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "%s: out of memory", what);
	if (etc_pytensor_copy(src, buf, (size_t)src->tensor.nbytes) < 0) {
		free(buf);
		return etc_fail(err, ETC_ERR_FORMAT, NULL, -1, "%s: unreadable strided tensor",
		                what);
	}
	etc_tensor t = src->tensor;
	t.data = buf;
	int rc = ref_import_tensor(dst, &t, float_dtype, what, err);
	free(buf);
	return rc;
}
