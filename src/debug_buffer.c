/*
 * debug_buffer.c - the debug buffer (raw tensor bytes beside the ETDump) and
 * element access for every scalar type the runtime writes. Tensors are views
 * into the mapping; data is dense and little-endian (FORMATS.md §2).
 */
#include "internal.h"
#include "tensor_private.h"

#include <math.h>
#include <stdlib.h>

struct etc_debug_buffer {
	etc_map map;
	const uint8_t *data;
	uint64_t size;
	char name[256];
};

static int create(etc_debug_buffer **out, const char *name, etc_error *err)
{
	etc_debug_buffer *b = calloc(1, sizeof *b);
	if (!b)
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	etc_strlcpy(b->name, name, sizeof b->name);
	*out = b;
	return 0;
}

int etc_debug_buffer_open(etc_debug_buffer **out, const char *path, etc_error *err)
{
	etc_debug_buffer *b = NULL;
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_debug_buffer_open: NULL argument");
	ETC_TRY(create(&b, path, err));
	int rc = etc_map_open(&b->map, path, err);
	if (rc < 0) {
		free(b);
		return rc;
	}
	b->data = b->map.data;
	b->size = b->map.size;
	*out = b;
	return 0;
}

int etc_debug_buffer_wrap(etc_debug_buffer **out, const void *data, size_t len, const char *name,
			  etc_error *err)
{
	etc_debug_buffer *b = NULL;
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_debug_buffer_wrap: NULL argument");
	ETC_TRY(create(&b, name ? name : "<memory>", err));
	b->data = data ? data : (const void *)"";
	b->size = len;
	*out = b;
	return 0;
}

void etc_debug_buffer_free(etc_debug_buffer *b)
{
	if (!b)
		return;
	etc_map_close(&b->map);
	free(b);
}

uint64_t etc_debug_buffer_size(const etc_debug_buffer *b)
{
	return b->size;
}

const char *etc_debug_buffer_name(const etc_debug_buffer *b)
{
	return b->name;
}

int etc_tensor_attach_(etc_tensor *t, const etc_debug_buffer *b, const char *where, etc_error *err)
{
	t->data = NULL;
	if (!b || t->nbytes == 0 || t->offset < 0)
		return 0;
	uint64_t end;
	if (!etc_add_u64((uint64_t)t->offset, t->nbytes, &end) || end > b->size)
		return etc_fail(err, ETC_ERR_FORMAT, b->name, t->offset,
				"%s: tensor data [%lld, %llu) of %llu %s elements lies past the end "
				"of the debug buffer (%llu bytes)",
				where, (long long)t->offset, (unsigned long long)end,
				(unsigned long long)t->numel, etc_scalar_type_name(t->scalar_type),
				(unsigned long long)b->size);
	t->data = b->data + t->offset;
	return 0;
}

int64_t etc_tensor_size(const etc_tensor *t, uint32_t i)
{
	return (int64_t)etc_le64(t->sizes_le + 8 * (size_t)i);
}

int64_t etc_tensor_stride(const etc_tensor *t, uint32_t i)
{
	return (int64_t)etc_le64(t->strides_le + 8 * (size_t)i);
}

static inline double load(int st, const uint8_t *p)
{
	switch (st) {
	case ETC_BYTE:
	case ETC_QUINT8:
	case ETC_QUINT4X2:
	case ETC_QUINT2X4:
		return p[0];
	case ETC_CHAR:
	case ETC_QINT8:
		return (int8_t)p[0];
	case ETC_BOOL:
		return p[0] != 0;
	case ETC_SHORT:
		return (int16_t)etc_le16(p);
	case ETC_BITS16:
	case ETC_UINT16:
		return etc_le16(p);
	case ETC_INT:
	case ETC_QINT32:
		return (int32_t)etc_le32(p);
	case ETC_UINT32:
		return etc_le32(p);
	case ETC_LONG:
		return (double)(int64_t)etc_le64(p);
	case ETC_UINT64:
		return (double)etc_le64(p);
	case ETC_HALF:
		return etc_half_to_double(etc_le16(p));
	case ETC_BFLOAT16:
		return etc_bfloat16_to_double(etc_le16(p));
	case ETC_FLOAT: {
		union {
			uint32_t u;
			float f;
		} x = {etc_le32(p)};
		return x.f;
	}
	case ETC_DOUBLE: {
		union {
			uint64_t u;
			double d;
		} x = {etc_le64(p)};
		return x.d;
	}
	case ETC_FLOAT8E5M2:
	case ETC_FLOAT8E4M3FN:
	case ETC_FLOAT8E5M2FNUZ:
	case ETC_FLOAT8E4M3FNUZ:
		return etc_float8_to_double(st, p[0]);
	}
	return NAN;
}

double etc_tensor_get(const etc_tensor *t, uint64_t i)
{
	size_t esz = etc_scalar_type_size(t->scalar_type);
	return load(t->scalar_type, t->data + i * esz);
}

void etc_tensor_to_double(const etc_tensor *t, uint64_t start, size_t n, double *dst)
{
	const uint8_t *p = t->data;
	size_t i;
	/* The common dtypes get tight loops the compiler can vectorize. */
	if (t->scalar_type == ETC_FLOAT) {
		const uint8_t *q = p + start * 4;
		for (i = 0; i < n; i++) {
			float f;
			memcpy(&f, q + 4 * i, 4);
			dst[i] = f;
		}
		return;
	}
	if (t->scalar_type == ETC_DOUBLE) {
		memcpy(dst, p + start * 8, n * 8);
		return;
	}
	size_t esz = etc_scalar_type_size(t->scalar_type);
	for (i = 0; i < n; i++)
		dst[i] = load(t->scalar_type, p + (start + i) * esz);
}

void etc_tensor_summarize(const etc_tensor *t, etc_tensor_summary *out)
{
	double chunk[1024];
	double mn = INFINITY, mx = -INFINITY, sum = 0;
	uint64_t nan = 0, inf = 0;
	memset(out, 0, sizeof *out);
	for (uint64_t at = 0; at < t->numel;) {
		size_t n = t->numel - at < 1024 ? (size_t)(t->numel - at) : 1024;
		etc_tensor_to_double(t, at, n, chunk);
		for (size_t i = 0; i < n; i++) {
			double v = chunk[i];
			if (isnan(v)) {
				nan++;
				continue;
			}
			if (isinf(v))
				inf++;
			mn = v < mn ? v : mn;
			mx = v > mx ? v : mx;
			sum += v;
		}
		at += n;
	}
	out->count = t->numel;
	out->nan_count = nan;
	out->inf_count = inf;
	uint64_t finite = t->numel - nan;
	out->min = finite ? mn : NAN;
	out->max = finite ? mx : NAN;
	out->mean = finite ? sum / (double)finite : NAN;
}
