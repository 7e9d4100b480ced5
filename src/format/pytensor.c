/*
 * pytensor.c - element access for the tensors of an unpickled object graph
 * (etc_pytensor_*): strided views walked in logical order.
 */
#include "format/pickle_private.h"

/* ---- tensor elements ------------------------------------------------------ */

/* Storage element index of logical element `i`. */
static uint64_t storage_index(const etc_pytensor *t, uint64_t i)
{
	uint64_t idx = (uint64_t)t->storage_offset;
	for (uint32_t d = t->tensor.ndim; d-- > 0;) {
		uint64_t size = (uint64_t)etc_tensor_size(&t->tensor, d);
		if (size == 0)
			return idx;
		idx += (i % size) * (uint64_t)etc_tensor_stride(&t->tensor, d);
		i /= size;
	}
	return idx;
}

double etc_pytensor_get(const etc_pytensor *t, uint64_t i)
{
	etc_tensor s = t->tensor;
	s.data = t->storage;
	return etc_tensor_get(&s, storage_index(t, i));
}

/* Walks logical elements [start, start+n), calling visit with storage indexes. */
typedef struct walker {
	const etc_pytensor *t;
	uint64_t idx[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t size[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t stride[ETC_TORCHSAVE_MAX_NDIM];
	uint64_t at;
} walker;

static void walker_init(walker *w, const etc_pytensor *t, uint64_t start)
{
	uint32_t nd = t->tensor.ndim;
	w->t = t;
	w->at = (uint64_t)t->storage_offset;
	uint64_t i = start;
	for (uint32_t d = nd; d-- > 0;) {
		w->size[d] = (uint64_t)etc_tensor_size(&t->tensor, d);
		w->stride[d] = (uint64_t)etc_tensor_stride(&t->tensor, d);
		w->idx[d] = w->size[d] ? i % w->size[d] : 0;
		i = w->size[d] ? i / w->size[d] : 0;
		w->at += w->idx[d] * w->stride[d];
	}
}

static void walker_next(walker *w)
{
	for (uint32_t d = w->t->tensor.ndim; d-- > 0;) {
		if (++w->idx[d] < w->size[d]) {
			w->at += w->stride[d];
			return;
		}
		w->at -= (w->size[d] - 1) * w->stride[d];
		w->idx[d] = 0;
	}
}

void etc_pytensor_to_double(const etc_pytensor *t, uint64_t start, size_t n, double *dst)
{
	if (t->contiguous && t->tensor.data) {
		etc_tensor_to_double(&t->tensor, start, n, dst);
		return;
	}
	etc_tensor s = t->tensor;
	s.data = t->storage;
	walker w;
	walker_init(&w, t, start);
	for (size_t i = 0; i < n; i++) {
		dst[i] = etc_tensor_get(&s, w.at);
		walker_next(&w);
	}
}

int etc_pytensor_copy(const etc_pytensor *t, void *dst, size_t cap)
{
	if (!t || (!dst && t->tensor.nbytes) || cap < t->tensor.nbytes)
		return ETC_ERR_USAGE;
	if (t->tensor.numel == 0)
		return 0;
	if (t->contiguous && t->tensor.data) {
		memcpy(dst, t->tensor.data, (size_t)t->tensor.nbytes);
		return 0;
	}
	size_t esz = etc_scalar_type_size(t->tensor.scalar_type);
	uint8_t *out = dst;
	walker w;
	walker_init(&w, t, 0);
	for (uint64_t i = 0; i < t->tensor.numel; i++) {
		memcpy(out + i * esz, t->storage + w.at * esz, esz);
		walker_next(&w);
	}
	return 0;
}
