/*
 * values.c - the streaming readers of values_private.h: dequantized codes
 * and permuted dimension orders, each a read callback over another
 * etc_values, so the metrics' own chunked pass drives them; and the float32
 * gather of a permuted float32 tensor, which lets the metrics read it on
 * their float32 path (the same bits as its dense copy).
 */
#include "analysis/values_private.h"
#include "core/internal.h"

#include <stdio.h>
#include <string.h>

/* n elements at `stride` from element `off` of a dense tensor; false for
 * the dtypes left to the source's own reader. */
static bool gather(const etc_tensor *t, int64_t off, int64_t stride, size_t n, double *dst)
{
	const uint8_t *p = t->data;
	switch (t->scalar_type) {
	case ETC_FLOAT:
		for (size_t j = 0; j < n; j++) {
			float f;
			memcpy(&f, p + 4 * (off + (int64_t)j * stride), 4);
			dst[j] = f;
		}
		return true;
	case ETC_CHAR:
	case ETC_QINT8:
		for (size_t j = 0; j < n; j++)
			dst[j] = (int8_t)p[off + (int64_t)j * stride];
		return true;
	case ETC_BYTE:
	case ETC_QUINT8:
		for (size_t j = 0; j < n; j++)
			dst[j] = p[off + (int64_t)j * stride];
		return true;
	case ETC_SHORT:
		for (size_t j = 0; j < n; j++)
			dst[j] = (int16_t)etc_le16(p + 2 * (off + (int64_t)j * stride));
		return true;
	case ETC_UINT16:
		for (size_t j = 0; j < n; j++)
			dst[j] = etc_le16(p + 2 * (off + (int64_t)j * stride));
		return true;
	case ETC_INT:
	case ETC_QINT32:
		for (size_t j = 0; j < n; j++)
			dst[j] = (int32_t)etc_le32(p + 4 * (off + (int64_t)j * stride));
		return true;
	default:
		return false;
	}
}

static void read_dequant(const void *src, uint64_t start, size_t n, double *dst)
{
	const etc_dequant *d = src;
	d->base.read(d->base.src, start, n, dst);
	if (d->channels <= 1) {
		double s = d->scale[0], z = d->zero_point[0];
		for (size_t i = 0; i < n; i++)
			dst[i] = (dst[i] - z) * s;
		return;
	}
	/* walk the channel index along the chunk instead of dividing per element */
	uint64_t pos = start / d->inner;
	uint64_t c = pos % d->channels, k = start % d->inner;
	for (size_t i = 0; i < n; i++) {
		dst[i] = (dst[i] - d->zero_point[c]) * d->scale[c];
		if (++k == d->inner) {
			k = 0;
			if (++c == d->channels)
				c = 0;
		}
	}
}

void etc_values_dequant_(etc_values *out, const etc_dequant *d)
{
	out->count = d->base.count;
	out->scalar_type = ETC_DOUBLE;
	out->read = read_dequant;
	out->src = d;
}

/* The multi-index of row-major element `start` over p's sizes, and its
 * offset in the source. */
static int64_t position(const etc_permuted *p, uint64_t start, int64_t *idx)
{
	uint64_t rest = start;
	for (uint32_t k = p->ndim; k-- > 0;) {
		idx[k] = (int64_t)(rest % (uint64_t)p->sizes[k]);
		rest /= (uint64_t)p->sizes[k];
	}
	int64_t off = 0;
	for (uint32_t k = 0; k < p->ndim; k++)
		off += idx[k] * p->stride[k];
	return off;
}

static void read_permuted(const void *src, uint64_t start, size_t n, double *dst)
{
	const etc_permuted *p = src;
	int64_t idx[ETC_PERMUTE_MAX_DIMS];
	int64_t off = position(p, start, idx);
	uint32_t last = p->ndim - 1;
	size_t i = 0;
	while (i < n) {
		/* a run along the last dimension: one read when it is contiguous */
		size_t run = (size_t)(p->sizes[last] - idx[last]);
		if (run > n - i)
			run = n - i;
		if (p->stride[last] == 1) {
			p->base.read(p->base.src, (uint64_t)off, run, dst + i);
		} else if (!p->t || !gather(p->t, off, p->stride[last], run, dst + i)) {
			for (size_t j = 0; j < run; j++)
				p->base.read(p->base.src,
				             (uint64_t)(off + (int64_t)j * p->stride[last]), 1,
				             dst + i + j);
		}
		i += run;
		off += (int64_t)run * p->stride[last];
		idx[last] += (int64_t)run;
		/* carry into the outer dimensions */
		for (uint32_t k = last; k > 0 && idx[k] == p->sizes[k]; k--) {
			off -= idx[k] * p->stride[k];
			idx[k] = 0;
			idx[k - 1]++;
			off += p->stride[k - 1];
		}
	}
}

void etc_values_permuted_(etc_values *out, const etc_permuted *p)
{
	out->count = p->base.count;
	out->scalar_type = p->base.scalar_type;
	out->read = read_permuted;
	out->src = p;
}

bool etc_values_is_f32_gather_(const etc_values *v)
{
	const etc_permuted *p = v->read == read_permuted ? v->src : NULL;
	return p && p->as_f32 && p->t && p->t->scalar_type == ETC_FLOAT && p->ndim > 0;
}

void etc_values_gather_f32_(const etc_values *v, uint64_t start, size_t n, float *dst)
{
	const etc_permuted *p = v->src;
	const uint8_t *base = p->t->data;
	int64_t idx[ETC_PERMUTE_MAX_DIMS];
	int64_t off = position(p, start, idx);
	uint32_t last = p->ndim - 1;
	for (size_t i = 0; i < n; i++) {
		memcpy(dst + i, base + 4 * off, 4); /* the bits, NaN payloads too */
		off += p->stride[last];
		/* carry into the outer dimensions */
		for (uint32_t k = last; ++idx[k] == p->sizes[k] && k > 0; k--) {
			off -= idx[k] * p->stride[k];
			idx[k] = 0;
			off += p->stride[k - 1];
		}
	}
}

/* Does a[j] == r[q[j]] for every j? Then reading a in r's order uses
 * stride[q[j]] = a's row-major stride of dimension j. */
static int try_perm(const int64_t *a, const int64_t *r, uint32_t n, const uint32_t *q,
                    etc_permuted *p)
{
	for (uint32_t j = 0; j < n; j++)
		if (a[j] != r[q[j]])
			return 0;
	int64_t s = 1;
	for (uint32_t j = n; j-- > 0;) {
		p->stride[q[j]] = s;
		s *= a[j];
	}
	p->ndim = n;
	for (uint32_t k = 0; k < n; k++)
		p->sizes[k] = r[k];
	return 1;
}

int etc_channels_last_match_(const int64_t *a, const int64_t *r, uint32_t n, etc_permuted *p,
                             char *name, size_t cap)
{
	static const char *const first[] = {"NCL", "NCHW", "NCDHW"};
	static const char *const last[] = {"NLC", "NHWC", "NDHWC"};
	if (n < 3 || n > 5)
		return 0;
	bool same = true;
	for (uint32_t k = 0; k < n; k++)
		same = same && a[k] == r[k];
	if (same)
		return 0;
	uint32_t q[5];
	/* the actual is channels-last: its dims are (N, spatial..., C) of the reference */
	q[0] = 0;
	for (uint32_t j = 1; j + 1 < n; j++)
		q[j] = j + 1;
	q[n - 1] = 1;
	if (try_perm(a, r, n, q, p)) {
		snprintf(name, cap, "%s->%s", last[n - 3], first[n - 3]);
		return 1;
	}
	/* the reference is channels-last: the actual's dims are (N, C, spatial...) */
	q[0] = 0;
	q[1] = n - 1;
	for (uint32_t j = 2; j < n; j++)
		q[j] = j - 1;
	if (try_perm(a, r, n, q, p)) {
		snprintf(name, cap, "%s->%s", first[n - 3], last[n - 3]);
		return 1;
	}
	return 0;
}
