/*
 * debug_buffer.c - the debug buffer (raw tensor bytes beside the ETDump) and
 * element access for every scalar type the runtime writes. Tensors are views
 * into the mapping; data is dense and little-endian (FORMATS.md §2).
 *
 * The buffer also keeps the read budget (issue 23): every tensor range an
 * event resolves in it (etc_tensor_attach_) is charged to the buffer, each
 * distinct (offset, size, type) once (a set of the ranges seen, which grows
 * with the ETDump's events, not with the passes over them), and the total
 * may not pass the cap (etc_debug_buffer_set_max_inflate).
 * Events that point at overlapping, not identical, ranges of one large
 * tensor would otherwise make the work events x tensor size.
 */
#include "core/internal.h"
#include "format/tensor_private.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_FACTOR 16
#define DEFAULT_FLOOR  ((uint64_t)64 << 20)

/* Mutable through the const buffer the readers hold, under its lock: the
 * readers may run on several threads. */
typedef struct read_budget {
	pthread_mutex_t lock;
	uint64_t total;
	uint64_t *keys; /* open addressing, 0 = empty; at most half full */
	size_t cap, n;
} read_budget;

struct etc_debug_buffer {
	etc_map map;
	const uint8_t *data;
	uint64_t size;
	/* cap and cap_why: under budget->lock once the buffer is open (a host may
	 * set the cap while other threads read the buffer) */
	uint64_t cap; /* UINT64_MAX: no cap */
	char cap_why[96];
	read_budget *budget;
	char name[256];
};

static uint64_t default_cap(uint64_t size, char *why, size_t n)
{
	uint64_t cap;
	if (!etc_mul_u64(size, DEFAULT_FACTOR, &cap))
		cap = UINT64_MAX;
	if (cap < DEFAULT_FLOOR) {
		snprintf(why, n, "the default: at least 64 MiB");
		return DEFAULT_FLOOR;
	}
	snprintf(why, n, "the default: %dx the file's %llu bytes", DEFAULT_FACTOR,
	         (unsigned long long)size);
	return cap;
}

static int create(etc_debug_buffer **out, const char *name, etc_error *err)
{
	etc_debug_buffer *b = calloc(1, sizeof *b);
	read_budget *rb = calloc(1, sizeof *rb);
	if (!b || !rb) {
		free(b);
		free(rb);
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	}
	pthread_mutex_init(&rb->lock, NULL);
	b->budget = rb;
	etc_strlcpy(b->name, name, sizeof b->name);
	*out = b;
	return 0;
}

int etc_max_inflate_parse(const char *spec, uint64_t *bytes, double *factor)
{
	uint64_t b_;
	double f_;
	if (!bytes)
		bytes = &b_; /* NULL: only check the spec */
	if (!factor)
		factor = &f_;
	if (!spec || !*spec)
		return ETC_ERR_USAGE;
	*bytes = 0;
	*factor = 0;
	if (strcmp(spec, "none") == 0)
		return 0;
	size_t n = strlen(spec);
	char *end;
	errno = 0;
	if (spec[n - 1] == 'x' || spec[n - 1] == 'X') {
		double f = strtod(spec, &end);
		if (end != spec + n - 1 || end == spec || errno == ERANGE || !isfinite(f) ||
		    f <= 0 || isspace((unsigned char)spec[0]))
			return ETC_ERR_USAGE;
		*factor = f;
		return 0;
	}
	if (!isdigit((unsigned char)spec[0]))
		return ETC_ERR_USAGE;
	unsigned long long v = strtoull(spec, &end, 10);
	unsigned shift = 0;
	if (*end && !end[1]) {
		const char *units = "KMGT";
		const char *u = strchr(units, toupper((unsigned char)*end));
		if (!u)
			return ETC_ERR_USAGE;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
	}
	if (*end || errno == ERANGE || v == 0 || (shift && v > (UINT64_MAX >> shift)))
		return ETC_ERR_USAGE;
	*bytes = (uint64_t)v << shift;
	return 0;
}

int etc_debug_buffer_set_max_inflate(etc_debug_buffer *b, const char *spec, etc_error *err)
{
	uint64_t bytes;
	double factor;
	if (etc_max_inflate_parse(spec, &bytes, &factor) < 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "max inflate '%s': give BYTES (a whole number, K, M, G or T "
		                "allowed), FACTORx (times the debug buffer's size) or none",
		                spec ? spec : "");
	if (!b)
		return 0;
	uint64_t cap;
	char why[sizeof b->cap_why];
	if (factor > 0) {
		double c = factor * (double)b->size;
		cap = c >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)c;
		snprintf(why, sizeof why, "set to %gx the file's %llu bytes", factor,
		         (unsigned long long)b->size);
	} else if (bytes > 0) {
		cap = bytes;
		snprintf(why, sizeof why, "set to %s", spec);
	} else {
		cap = UINT64_MAX;
		snprintf(why, sizeof why, "none");
	}
	pthread_mutex_lock(&b->budget->lock);
	b->cap = cap;
	memcpy(b->cap_why, why, sizeof why);
	pthread_mutex_unlock(&b->budget->lock);
	return 0;
}

uint64_t etc_debug_buffer_inflated(const etc_debug_buffer *b)
{
	if (!b)
		return 0;
	pthread_mutex_lock(&b->budget->lock);
	uint64_t total = b->budget->total;
	pthread_mutex_unlock(&b->budget->lock);
	return total;
}

static void budget_free(read_budget *rb)
{
	if (!rb)
		return;
	pthread_mutex_destroy(&rb->lock);
	free(rb->keys);
	free(rb);
}

/* Inserts `key` (not 0) unless present (*added says which). Under the lock. */
static int budget_insert(read_budget *rb, uint64_t key, bool *added)
{
	if (2 * (rb->n + 1) > rb->cap) {
		size_t cap = rb->cap ? 2 * rb->cap : 1024;
		uint64_t *keys = cap <= SIZE_MAX / sizeof *keys ? calloc(cap, sizeof *keys) : NULL;
		if (!keys)
			return ETC_ERR_NOMEM;
		for (size_t i = 0; i < rb->cap; i++) {
			uint64_t k = rb->keys[i];
			if (!k)
				continue;
			size_t j = (size_t)(k >> 17) & (cap - 1);
			while (keys[j])
				j = (j + 1) & (cap - 1);
			keys[j] = k;
		}
		free(rb->keys);
		rb->keys = keys;
		rb->cap = cap;
	}
	size_t j = (size_t)(key >> 17) & (rb->cap - 1);
	while (rb->keys[j]) {
		if (rb->keys[j] == key) {
			*added = false;
			return 0;
		}
		j = (j + 1) & (rb->cap - 1);
	}
	rb->keys[j] = key;
	rb->n++;
	*added = true;
	return 0;
}

/* Charges the range of `t` once; fails when the total passes the cap. */
static int charge(const etc_debug_buffer *b, const etc_tensor *t, uint32_t run, uint32_t event,
                  uint32_t index, etc_error *err)
{
	uint64_t key = (uint64_t)t->offset * 0x9E3779B97F4A7C15ull;
	key ^= (t->nbytes + ((uint64_t)(uint8_t)t->scalar_type << 56)) * 0xC2B2AE3D27D4EB4Full;
	key ^= key >> 29;
	key |= 1;
	read_budget *rb = b->budget;
	bool added = false;
	pthread_mutex_lock(&rb->lock);
	int rc = budget_insert(rb, key, &added);
	if (added)
		rb->total += t->nbytes;
	uint64_t total = rb->total, cap = b->cap;
	char why[sizeof b->cap_why];
	memcpy(why, b->cap_why, sizeof why);
	pthread_mutex_unlock(&rb->lock);
	if (rc < 0)
		return etc_fail(err, rc, b->name, -1, "out of memory");
	if (!added || cap == UINT64_MAX || total <= cap)
		return 0;
	/* the default cap is 16x the file: beyond it, overlapping data is the likely
	   cause; a cap the user set is simply below what the run needs */
	bool user = !strncmp(why, "set to", 6);
	return etc_fail(err, ETC_ERR_LIMIT, b->name, t->offset,
	                "run %u, event %u, tensor %u: the tensors read from this debug buffer "
	                "come to %llu bytes, over the cap of %llu bytes (%s)%s --max-inflate "
	                "BYTES|FACTORx|none (Python: max_inflate=) %s",
	                run, event, index, (unsigned long long)total, (unsigned long long)cap, why,
	                user ? ":" : ": many events point at overlapping data?",
	                user ? "sets a higher cap" : "lifts the cap");
}

int etc_debug_buffer_open(etc_debug_buffer **out, const char *path, etc_error *err)
{
	if (out)
		*out = NULL;
	etc_debug_buffer *b = NULL;
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_debug_buffer_open: NULL argument");
	ETC_TRY(create(&b, path, err));
	int rc = etc_map_open(&b->map, path, err);
	if (rc < 0) {
		budget_free(b->budget);
		free(b);
		return rc;
	}
	b->data = b->map.data;
	b->size = b->map.size;
	b->cap = default_cap(b->size, b->cap_why, sizeof b->cap_why);
	*out = b;
	return 0;
}

int etc_debug_buffer_wrap(etc_debug_buffer **out, const void *data, size_t len, const char *name,
                          etc_error *err)
{
	if (out)
		*out = NULL;
	etc_debug_buffer *b = NULL;
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_debug_buffer_wrap: NULL argument");
	ETC_TRY(create(&b, name ? name : "<memory>", err));
	b->data = data ? data : (const void *)"";
	b->size = len;
	b->cap = default_cap(b->size, b->cap_why, sizeof b->cap_why);
	*out = b;
	return 0;
}

void etc_debug_buffer_free(etc_debug_buffer *b)
{
	if (!b)
		return;
	etc_map_close(&b->map);
	budget_free(b->budget);
	free(b);
}

uint64_t etc_debug_buffer_size(const etc_debug_buffer *b)
{
	return b->size;
}

const uint8_t *etc_debug_buffer_data(const etc_debug_buffer *b)
{
	return b->data;
}

const char *etc_debug_buffer_name(const etc_debug_buffer *b)
{
	return b->name;
}

int etc_tensor_attach_(etc_tensor *t, const etc_debug_buffer *b, uint32_t run, uint32_t event,
                       uint32_t index, etc_error *err)
{
	/* A tensor of no elements is a valid empty tensor whatever its offset:
	 * ETDumpGen logs batch norm's unused outputs with sizes [0] and offset
	 * -1 (nothing copied). Its data is a non-NULL pointer to no bytes, so
	 * that it is told apart from a tensor whose data was not logged. */
	static const uint8_t empty[1];
	t->data = NULL;
	if (b && t->numel == 0) {
		t->data = empty;
		return 0;
	}
	if (!b || t->nbytes == 0 || t->offset < 0)
		return 0;
	uint64_t end;
	if (!etc_add_u64((uint64_t)t->offset, t->nbytes, &end) || end > b->size)
		return etc_fail(
		    err, ETC_ERR_FORMAT, b->name, t->offset,
		    "run %u, event %u, tensor %u: tensor data [%lld, %llu) of %llu %s elements "
		    "lies past the end of the debug buffer (%llu bytes): give the debug buffer "
		    "the runtime wrote with this ETDump",
		    run, event, index, (long long)t->offset, (unsigned long long)end,
		    (unsigned long long)t->numel, etc_scalar_type_name(t->scalar_type),
		    (unsigned long long)b->size);
	ETC_TRY(charge(b, t, run, event, index, err));
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

/*
 * Summaries. Every dtype uses the same summation order, so the mean does not
 * depend on the code path: over the largest multiple of 16 elements, element
 * i is added to accumulator i % 8 in index order; the remaining elements are
 * summed in order into a ninth; the total is
 *   (((a0 + a2) + (a4 + a6)) + ((a1 + a3) + (a5 + a7))) + tail.
 * NaNs are skipped (counted). min/max are exact and, as a sequential
 * "v < min" scan would give, a zero extreme has the sign of the first zero.
 */
#define SUM_BLOCK 16

typedef struct summary_acc {
	double acc[8], tail;
	double mn, mx;
	uint64_t nan, inf;
} summary_acc;

static double acc_total(const summary_acc *a)
{
	const double *c = a->acc;
	return (((c[0] + c[2]) + (c[4] + c[6])) + ((c[1] + c[3]) + (c[5] + c[7]))) + a->tail;
}

/* Adds elements [at, at + n) (already converted) to `a`; nfull = end of the blocked part. */
static void acc_doubles(summary_acc *a, const double *v, uint64_t at, size_t n, uint64_t nfull)
{
	for (size_t i = 0; i < n; i++, at++) {
		double x = v[i];
		if (isnan(x)) {
			a->nan++;
			continue;
		}
		if (isinf(x))
			a->inf++;
		a->mn = x < a->mn ? x : a->mn;
		a->mx = x > a->mx ? x : a->mx;
		if (at < nfull)
			a->acc[at & 7] += x;
		else
			a->tail += x;
	}
}

static void summarize_generic(const etc_tensor *t, summary_acc *a)
{
	double chunk[1024]; /* a multiple of SUM_BLOCK */
	uint64_t nfull = t->numel - t->numel % SUM_BLOCK;
	for (uint64_t at = 0; at < t->numel;) {
		size_t n = t->numel - at < 1024 ? (size_t)(t->numel - at) : 1024;
		etc_tensor_to_double(t, at, n, chunk);
		acc_doubles(a, chunk, at, n, nfull);
		at += n;
	}
}

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <emmintrin.h>
#include <stdint.h>
#include <xmmintrin.h>
#define ETC_SUMMARY_SSE2 1

/*
 * Each 16-float step (one cache line) prefetches the line a page ahead: the
 * hardware prefetchers stop at 4 KiB page boundaries, and touching the next
 * page early gets its TLB entry and first lines in flight (measured: a 1 GiB
 * buffer from DRAM went from about 7.5 to 10 GB/s). A prefetch past the end
 * of the data is harmless: it never faults.
 */
#define SUM_PREFETCH 4096

/*
 * float32, 16 elements per step: min/max in float lanes (MINPS returns its
 * second operand when the first is NaN, so NaNs never enter), NaNs masked to
 * zero for the sums, converted to double into the eight accumulators
 * (register k holds accumulators 2k and 2k+1), ordered elements counted in
 * int32 lanes. Infinities are counted afterwards only if min or max is one.
 * The data may be unaligned.
 */
static void summarize_f32_sse2(const uint8_t *p, uint64_t numel, summary_acc *a)
{
	uint64_t nfull = numel - numel % SUM_BLOCK;
	__m128 mn = _mm_set1_ps(INFINITY), mx = _mm_set1_ps(-INFINITY);
	__m128d s0 = _mm_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
	uint64_t ordered = 0;
	for (uint64_t at = 0; at < nfull;) {
		/* int32 lane counters gain 4 per step: flush well before overflow */
		uint64_t end = nfull - at > ((uint64_t)1 << 30) ? at + ((uint64_t)1 << 30) : nfull;
		__m128i cnt = _mm_setzero_si128();
		for (; at < end; at += SUM_BLOCK) {
			const float *f = (const float *)(const void *)(p + 4 * at);
			_mm_prefetch((const char *)((uintptr_t)f + SUM_PREFETCH), _MM_HINT_T0);
			__m128 x0 = _mm_loadu_ps(f), x1 = _mm_loadu_ps(f + 4);
			__m128 x2 = _mm_loadu_ps(f + 8), x3 = _mm_loadu_ps(f + 12);
			mn = _mm_min_ps(x0, mn);
			mx = _mm_max_ps(x0, mx);
			mn = _mm_min_ps(x1, mn);
			mx = _mm_max_ps(x1, mx);
			mn = _mm_min_ps(x2, mn);
			mx = _mm_max_ps(x2, mx);
			mn = _mm_min_ps(x3, mn);
			mx = _mm_max_ps(x3, mx);
			__m128 o0 = _mm_cmpord_ps(x0, x0), o1 = _mm_cmpord_ps(x1, x1);
			__m128 o2 = _mm_cmpord_ps(x2, x2), o3 = _mm_cmpord_ps(x3, x3);
			cnt = _mm_sub_epi32(cnt, _mm_castps_si128(o0));
			cnt = _mm_sub_epi32(cnt, _mm_castps_si128(o1));
			cnt = _mm_sub_epi32(cnt, _mm_castps_si128(o2));
			cnt = _mm_sub_epi32(cnt, _mm_castps_si128(o3));
			x0 = _mm_and_ps(x0, o0);
			x1 = _mm_and_ps(x1, o1);
			x2 = _mm_and_ps(x2, o2);
			x3 = _mm_and_ps(x3, o3);
			s0 = _mm_add_pd(s0, _mm_cvtps_pd(x0));
			s1 = _mm_add_pd(s1, _mm_cvtps_pd(_mm_movehl_ps(x0, x0)));
			s2 = _mm_add_pd(s2, _mm_cvtps_pd(x1));
			s3 = _mm_add_pd(s3, _mm_cvtps_pd(_mm_movehl_ps(x1, x1)));
			s0 = _mm_add_pd(s0, _mm_cvtps_pd(x2));
			s1 = _mm_add_pd(s1, _mm_cvtps_pd(_mm_movehl_ps(x2, x2)));
			s2 = _mm_add_pd(s2, _mm_cvtps_pd(x3));
			s3 = _mm_add_pd(s3, _mm_cvtps_pd(_mm_movehl_ps(x3, x3)));
		}
		uint32_t c[4];
		_mm_storeu_si128((__m128i *)(void *)c, cnt);
		ordered += (uint64_t)c[0] + c[1] + c[2] + c[3];
	}
	_mm_storeu_pd(a->acc + 0, s0);
	_mm_storeu_pd(a->acc + 2, s1);
	_mm_storeu_pd(a->acc + 4, s2);
	_mm_storeu_pd(a->acc + 6, s3);
	float fm[4], fx[4];
	_mm_storeu_ps(fm, mn);
	_mm_storeu_ps(fx, mx);
	for (int i = 0; i < 4; i++) {
		a->mn = fm[i] < a->mn ? fm[i] : a->mn;
		a->mx = fx[i] > a->mx ? fx[i] : a->mx;
	}
	a->nan = nfull - ordered;
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(ETC_SUMMARY_NO_AVX2)
#include <immintrin.h>
#define ETC_SUMMARY_AVX2 1

/*
 * The same computation with 256-bit vectors: register A holds accumulators
 * 0-3 and B 4-7, so every accumulator sees the same additions in the same
 * order as in the SSE2 and generic code and the mean is bit-identical.
 */
__attribute__((target("avx2"))) static void summarize_f32_avx2(const uint8_t *p, uint64_t numel,
                                                               summary_acc *a)
{
	uint64_t nfull = numel - numel % SUM_BLOCK;
	__m256 mn = _mm256_set1_ps(INFINITY), mx = _mm256_set1_ps(-INFINITY);
	__m256d s0 = _mm256_setzero_pd(), s1 = s0;
	uint64_t ordered = 0;
	for (uint64_t at = 0; at < nfull;) {
		uint64_t end = nfull - at > ((uint64_t)1 << 30) ? at + ((uint64_t)1 << 30) : nfull;
		__m256i cnt = _mm256_setzero_si256();
		for (; at < end; at += SUM_BLOCK) {
			const float *f = (const float *)(const void *)(p + 4 * at);
			_mm_prefetch((const char *)((uintptr_t)f + SUM_PREFETCH), _MM_HINT_T0);
			__m256 x0 = _mm256_loadu_ps(f), x1 = _mm256_loadu_ps(f + 8);
			mn = _mm256_min_ps(x0, mn);
			mx = _mm256_max_ps(x0, mx);
			mn = _mm256_min_ps(x1, mn);
			mx = _mm256_max_ps(x1, mx);
			__m256 o0 = _mm256_cmp_ps(x0, x0, _CMP_ORD_Q),
			       o1 = _mm256_cmp_ps(x1, x1, _CMP_ORD_Q);
			cnt = _mm256_sub_epi32(cnt, _mm256_castps_si256(o0));
			cnt = _mm256_sub_epi32(cnt, _mm256_castps_si256(o1));
			x0 = _mm256_and_ps(x0, o0);
			x1 = _mm256_and_ps(x1, o1);
			s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x0)));
			s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(x0, 1)));
			s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(x1)));
			s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(x1, 1)));
		}
		uint32_t c[8];
		_mm256_storeu_si256((__m256i *)(void *)c, cnt);
		for (int i = 0; i < 8; i++)
			ordered += c[i];
	}
	/* straight into *a: a local array here made GCC keep s0/s1 in memory */
	_mm256_storeu_pd(a->acc, s0);
	_mm256_storeu_pd(a->acc + 4, s1);
	float fm[8], fx[8];
	_mm256_storeu_ps(fm, mn);
	_mm256_storeu_ps(fx, mx);
	for (int i = 0; i < 8; i++) {
		a->mn = fm[i] < a->mn ? fm[i] : a->mn;
		a->mx = fx[i] > a->mx ? fx[i] : a->mx;
	}
	a->nan = nfull - ordered;
	_mm256_zeroupper();
}
#endif

/* After a vector pass over the blocked part: the tail, and the infinities. */
static void summarize_f32_finish(const uint8_t *p, uint64_t numel, summary_acc *a)
{
	uint64_t nfull = numel - numel % SUM_BLOCK;
	/* the tail, and the infinities of the blocked part */
	for (uint64_t i = nfull; i < numel; i++) {
		float f;
		memcpy(&f, p + 4 * i, 4);
		double x = f;
		if (isnan(x)) {
			a->nan++;
			continue;
		}
		if (isinf(x))
			a->inf++;
		a->mn = x < a->mn ? x : a->mn;
		a->mx = x > a->mx ? x : a->mx;
		a->tail += x;
	}
	if (isinf(a->mn) || isinf(a->mx)) {
		const __m128i absmask = _mm_set1_epi32(0x7fffffff),
		              inf = _mm_set1_epi32(0x7f800000);
		uint64_t n = 0;
		for (uint64_t i = 0; i < nfull; i += 4) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 4 * i));
			int m = _mm_movemask_ps(
			    _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_and_si128(x, absmask), inf)));
			n += (uint64_t)__builtin_popcount((unsigned)m);
		}
		a->inf += n;
	}
}

/* Index of the first element equal to zero (either sign), or numel. */
static uint64_t first_zero_f32(const uint8_t *p, uint64_t numel)
{
	uint64_t i = 0;
	const __m128i absmask = _mm_set1_epi32(0x7fffffff);
	for (; i + 4 <= numel; i += 4) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + 4 * i));
		x = _mm_cmpeq_epi32(_mm_and_si128(x, absmask), _mm_setzero_si128());
		if (_mm_movemask_epi8(x))
			break;
	}
	for (; i < numel; i++) {
		float f;
		memcpy(&f, p + 4 * i, 4);
		if (f == 0)
			return i;
	}
	return numel;
}
#endif

/* The fields of *out from a's sums over numel elements. */
static void summary_out(const summary_acc *a, uint64_t numel, etc_tensor_summary *out)
{
	out->count = numel;
	out->nan_count = a->nan;
	out->inf_count = a->inf;
	uint64_t finite = numel - a->nan;
	out->min = finite ? a->mn : NAN;
	out->max = finite ? a->mx : NAN;
	out->mean = finite ? acc_total(a) / (double)finite : NAN;
}

void etc_summarize_read_(void (*read)(const void *src, uint64_t start, size_t n, double *dst),
                         const void *src, uint64_t numel, etc_tensor_summary *out)
{
	/* summarize_generic's order: every vector path gives its bits */
	summary_acc a;
	memset(&a, 0, sizeof a);
	a.mn = INFINITY;
	a.mx = -INFINITY;
	memset(out, 0, sizeof *out);
	double chunk[1024]; /* a multiple of SUM_BLOCK */
	uint64_t nfull = numel - numel % SUM_BLOCK;
	for (uint64_t at = 0; at < numel;) {
		size_t n = numel - at < 1024 ? (size_t)(numel - at) : 1024;
		read(src, at, n, chunk);
		acc_doubles(&a, chunk, at, n, nfull);
		at += n;
	}
	summary_out(&a, numel, out);
}

void etc_tensor_summarize(const etc_tensor *t, etc_tensor_summary *out)
{
	summary_acc a;
	memset(&a, 0, sizeof a);
	a.mn = INFINITY;
	a.mx = -INFINITY;
	memset(out, 0, sizeof *out);
#ifdef ETC_SUMMARY_SSE2
	if (t->scalar_type == ETC_FLOAT) {
#ifdef ETC_SUMMARY_AVX2
		if (__builtin_cpu_supports("avx2"))
			summarize_f32_avx2(t->data, t->numel, &a);
		else
#endif
			summarize_f32_sse2(t->data, t->numel, &a);
		summarize_f32_finish(t->data, t->numel, &a);
		if (a.mn == 0 || a.mx == 0) {
			uint64_t z = first_zero_f32(t->data, t->numel);
			if (z < t->numel) {
				double x = etc_tensor_get(t, z);
				if (a.mn == 0)
					a.mn = x;
				if (a.mx == 0)
					a.mx = x;
			}
		}
	} else
#endif
		summarize_generic(t, &a);
	summary_out(&a, t->numel, out);
}
