/*
 * metrics.c - accuracy metrics of an output against its reference
 * (include/etcompare/metrics.h has the definitions and special cases).
 *
 * Both sides are converted to double CHUNK elements at a time into three
 * fixed buffers R, A and D. One pass of our own computes D = A - R (exactly
 * 0 where A == R, so equal infinities give no error) and, on the fly, the
 * count of D != 0, sum |d|, max |d| and max |d|/|r|; BLAS then gives r.r,
 * a.a, r.a and d.d (ddot) and, when a chunk raises max |d|, the index of its
 * first occurrence (idamax). For float32 tensors the conversion is fused into
 * that pass (AVX-512, AVX2 or SSE2, chosen at run time), which also
 * prefetches the next chunk so memory streams while BLAS runs. Chunk sums
 * are added with Neumaier's compensated summation, so the 2^18 partial sums
 * of a 1 GiB tensor lose nothing. NaN costs nothing until it appears: NaN
 * in r or a (and only there) makes d NaN, so d.d is NaN exactly for the
 * chunks holding one; those are compacted to their non-NaN positions (an
 * index map keeps the flat indexes) and computed again.
 */
#include "etcompare/metrics.h"

#include "core/internal.h"
#include "analysis/metrics_private.h"
#include "format/zipread.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <emmintrin.h>
#include <xmmintrin.h>
#define ETC_METRICS_SSE2 1
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define ETC_METRICS_X86 1
#endif

/*
 * Elements per chunk. R, A and D (3 x 8 KiB) stay in L1 across the passes;
 * measured on a Sapphire Rapids core, 1024 ran 1.6-2x faster than
 * 2048-8192 (which spill to L2) and beat 512 (call overhead). Under 10000,
 * OpenBLAS runs ddot on the calling thread.
 */
#define CHUNK 1024

/* ---- sources ------------------------------------------------------------- */

/* float32 to double, the hot conversion. */
static void f32_to_double(const uint8_t *p, size_t n, double *dst)
{
	size_t i = 0;
#ifdef ETC_METRICS_SSE2
	for (; i + 8 <= n; i += 8) {
		/* a page ahead: the hardware prefetchers stop at page boundaries */
		_mm_prefetch((const char *)(p + 4 * i + 4096), _MM_HINT_T0);
		__m128 x = _mm_loadu_ps((const float *)(const void *)(p + 4 * i));
		__m128 y = _mm_loadu_ps((const float *)(const void *)(p + 4 * i + 16));
		_mm_storeu_pd(dst + i, _mm_cvtps_pd(x));
		_mm_storeu_pd(dst + i + 2, _mm_cvtps_pd(_mm_movehl_ps(x, x)));
		_mm_storeu_pd(dst + i + 4, _mm_cvtps_pd(y));
		_mm_storeu_pd(dst + i + 6, _mm_cvtps_pd(_mm_movehl_ps(y, y)));
	}
#endif
	for (; i < n; i++) {
		union {
			uint32_t u;
			float f;
		} x = {etc_le32(p + 4 * i)};
		dst[i] = x.f;
	}
}

/* bfloat16 to double: the bits are the top half of a float32. */
static void bf16_to_double(const uint8_t *p, size_t n, double *dst)
{
	size_t i = 0;
#ifdef ETC_METRICS_SSE2
	const __m128i zero = _mm_setzero_si128();
	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i));
		__m128 lo = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, h));
		__m128 hi = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, h));
		_mm_storeu_pd(dst + i, _mm_cvtps_pd(lo));
		_mm_storeu_pd(dst + i + 2, _mm_cvtps_pd(_mm_movehl_ps(lo, lo)));
		_mm_storeu_pd(dst + i + 4, _mm_cvtps_pd(hi));
		_mm_storeu_pd(dst + i + 6, _mm_cvtps_pd(_mm_movehl_ps(hi, hi)));
	}
#endif
	for (; i < n; i++)
		dst[i] = etc_bfloat16_to_double(etc_le16(p + 2 * i));
}

#ifdef ETC_METRICS_X86
/* IEEE half to double with F16C (exact, subnormals and specials included). */
__attribute__((target("avx,f16c"))) static void half_to_double_f16c(const uint8_t *p, size_t n,
                                                                    double *dst)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 f =
		    _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i)));
		_mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
		_mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
	}
	for (; i < n; i++)
		dst[i] = etc_half_to_double(etc_le16(p + 2 * i));
}
#endif

static void read_tensor(const void *src, uint64_t start, size_t n, double *dst)
{
	const etc_tensor *t = src;
	switch (t->scalar_type) {
	case ETC_FLOAT:
		f32_to_double(t->data + 4 * start, n, dst);
		return;
	case ETC_BFLOAT16:
		bf16_to_double(t->data + 2 * start, n, dst);
		return;
#ifdef ETC_METRICS_X86
	case ETC_HALF:
		/* every AVX2 processor has F16C (and clang cannot ask for "f16c") */
		if (__builtin_cpu_supports("avx2")) {
			half_to_double_f16c(t->data + 2 * start, n, dst);
			return;
		}
		break;
#endif
	}
	etc_tensor_to_double(t, start, n, dst);
}

static void read_pytensor(const void *src, uint64_t start, size_t n, double *dst)
{
	const etc_pytensor *t = src;
	if (t->contiguous && t->tensor.data)
		read_tensor(&t->tensor, start, n, dst);
	else
		etc_pytensor_to_double(t, start, n, dst);
}

static void read_doubles(const void *src, uint64_t start, size_t n, double *dst)
{
	memcpy(dst, (const double *)src + start, n * sizeof *dst);
}

void etc_values_from_tensor(etc_values *out, const etc_tensor *t)
{
	out->count = t->numel;
	out->scalar_type = t->scalar_type;
	out->read = read_tensor;
	out->src = t;
}

void etc_values_from_pytensor(etc_values *out, const etc_pytensor *t)
{
	out->count = t->tensor.numel;
	out->scalar_type = t->tensor.scalar_type;
	out->read = read_pytensor;
	out->src = t;
}

void etc_values_from_doubles(etc_values *out, const double *v, uint64_t n)
{
	out->count = n;
	out->scalar_type = ETC_DOUBLE;
	out->read = read_doubles;
	out->src = v;
}

const char *etc_metrics_note_str(unsigned note)
{
	switch (note) {
	case 0:
		return "";
	case ETC_METRICS_ZERO_REFERENCE:
		return "reference is all zero (SNR undefined)";
	case ETC_METRICS_ZERO_NORM:
		return "zero norm (cosine undefined)";
	case ETC_METRICS_NAN:
		return "NaN positions excluded";
	case ETC_METRICS_NAN_MISMATCH:
		return "NaN on one side only";
	case ETC_METRICS_INFINITE:
		return "infinite values";
	case ETC_METRICS_EMPTY:
		return "nothing compared";
	case ETC_METRICS_ROUNDED:
		return "64-bit integers beyond 2^53 compared as doubles";
	}
	return "unknown note";
}

/* ---- dtype classes --------------------------------------------------------- */

static bool integer_like(int st)
{
	switch (st) {
	case ETC_BYTE:
	case ETC_CHAR:
	case ETC_SHORT:
	case ETC_INT:
	case ETC_LONG:
	case ETC_BOOL:
	case ETC_QINT8:
	case ETC_QUINT8:
	case ETC_QINT32:
	case ETC_QUINT4X2:
	case ETC_QUINT2X4:
	case ETC_BITS16:
	case ETC_UINT16:
	case ETC_UINT32:
	case ETC_UINT64:
		return true;
	}
	return false;
}

static bool int64_kind(int st)
{
	return st == ETC_LONG || st == ETC_UINT64;
}

/* The raw little-endian 64-bit elements of a source we know, or NULL. */
static const uint8_t *raw64(const etc_values *v)
{
	if (!int64_kind(v->scalar_type))
		return NULL;
	if (v->read == read_tensor) {
		const etc_tensor *t = v->src;
		return t->scalar_type == v->scalar_type ? t->data : NULL;
	}
	if (v->read == read_pytensor) {
		const etc_pytensor *t = v->src;
		return t->contiguous && t->tensor.scalar_type == v->scalar_type ? t->tensor.data
		                                                                : NULL;
	}
	return NULL;
}

/* The raw float32 elements of a source we know, or NULL. */
static const uint8_t *raw_f32(const etc_values *v)
{
	if (v->scalar_type != ETC_FLOAT)
		return NULL;
	if (v->read == read_tensor) {
		const etc_tensor *t = v->src;
		return t->scalar_type == ETC_FLOAT ? t->data : NULL;
	}
	if (v->read == read_pytensor) {
		const etc_pytensor *t = v->src;
		return t->contiguous && t->tensor.scalar_type == ETC_FLOAT ? t->tensor.data : NULL;
	}
	return NULL;
}

/* ---- the per-chunk pass ---------------------------------------------------- */

/* What a pass over one chunk found besides d. */
typedef struct chunk_res {
	uint64_t ne;    /* positions where d != 0 */
	double l1;      /* sum |d| over the chunk */
	double max_abs; /* max |d| (its index is left to idamax) */
	double rel;     /* max |d|/|r| over r != 0: in, the value so far; out, updated */
} chunk_res;

/* The scalar remainder of a pass: elements [i, n). */
static void diff_tail(const double *r, const double *a, double *d, size_t i, size_t n,
                      chunk_res *res)
{
	for (; i < n; i++) {
		double x = a[i] == r[i] ? 0.0 : a[i] - r[i];
		d[i] = x;
		res->ne += x != 0;
		res->l1 += fabs(x);
		if (fabs(x) > res->max_abs)
			res->max_abs = fabs(x);
		if (r[i] != 0 && fabs(x) / fabs(r[i]) > res->rel)
			res->rel = fabs(x) / fabs(r[i]);
	}
}

/* Raises res->rel from the block [i, i+len) after the vector test fired. */
static void rel_block(const double *r, const double *d, size_t i, size_t len, chunk_res *res)
{
	for (size_t k = i; k < i + len; k++)
		if (r[k] != 0 && fabs(d[k]) / fabs(r[k]) > res->rel)
			res->rel = fabs(d[k]) / fabs(r[k]);
}

/*
 * d[i] = a[i] - r[i], or 0 where a[i] == r[i], with the counts, sums and
 * maxima of chunk_res. The relative error is only divided out for a block
 * in which some |d| > rel |r| with r != 0 (rare once rel nears its final
 * value), so there is no division per element. NaN input gives NaN in d
 * and garbage in res: the caller detects it and redoes the chunk without
 * the NaNs.
 */
static void diff_pass(const double *r, const double *a, double *d, size_t n, chunk_res *res)
{
	size_t i = 0;
#ifdef ETC_METRICS_SSE2
	const __m128d zero = _mm_setzero_pd();
	const __m128d absmask = _mm_castsi128_pd(_mm_set1_epi64x(INT64_MAX));
	__m128i cnt = _mm_setzero_si128();
	__m128d m = _mm_set1_pd(res->rel), mx0 = _mm_set1_pd(res->max_abs), mx1 = mx0;
	__m128d s0 = zero, s1 = zero;
	for (; i + 4 <= n; i += 4) {
		__m128d r0 = _mm_loadu_pd(r + i), a0 = _mm_loadu_pd(a + i);
		__m128d r1 = _mm_loadu_pd(r + i + 2), a1 = _mm_loadu_pd(a + i + 2);
		__m128d d0 = _mm_andnot_pd(_mm_cmpeq_pd(a0, r0), _mm_sub_pd(a0, r0));
		__m128d d1 = _mm_andnot_pd(_mm_cmpeq_pd(a1, r1), _mm_sub_pd(a1, r1));
		_mm_storeu_pd(d + i, d0);
		_mm_storeu_pd(d + i + 2, d1);
		cnt = _mm_sub_epi64(cnt, _mm_castpd_si128(_mm_cmpneq_pd(d0, zero)));
		cnt = _mm_sub_epi64(cnt, _mm_castpd_si128(_mm_cmpneq_pd(d1, zero)));
		__m128d ad0 = _mm_and_pd(d0, absmask), ad1 = _mm_and_pd(d1, absmask);
		s0 = _mm_add_pd(s0, ad0);
		s1 = _mm_add_pd(s1, ad1);
		mx0 = _mm_max_pd(mx0, ad0);
		mx1 = _mm_max_pd(mx1, ad1);
		__m128d w0 = _mm_and_pd(_mm_cmpgt_pd(ad0, _mm_mul_pd(m, _mm_and_pd(r0, absmask))),
		                        _mm_cmpneq_pd(r0, zero));
		__m128d w1 = _mm_and_pd(_mm_cmpgt_pd(ad1, _mm_mul_pd(m, _mm_and_pd(r1, absmask))),
		                        _mm_cmpneq_pd(r1, zero));
		if (_mm_movemask_pd(_mm_or_pd(w0, w1))) {
			rel_block(r, d, i, 4, res);
			m = _mm_set1_pd(res->rel);
		}
	}
	uint64_t lanes[2];
	double mx[2], sum[2];
	_mm_storeu_si128((__m128i *)(void *)lanes, cnt);
	_mm_storeu_pd(mx, _mm_max_pd(mx0, mx1));
	_mm_storeu_pd(sum, _mm_add_pd(s0, s1));
	res->ne += lanes[0] + lanes[1];
	res->l1 += sum[0] + sum[1];
	res->max_abs = mx[0] > mx[1] ? mx[0] : mx[1];
#endif
	diff_tail(r, a, d, i, n, res);
}

/*
 * The float32 pair: converts n elements of each side into r and a and does
 * diff_pass, in one sweep. `next_r`/`next_a` (next_bytes each) are the next
 * chunk's inputs, prefetched into L2 a line per 16 elements so that memory
 * streams them in while BLAS works on this chunk.
 */
typedef struct f32_pair {
	const uint8_t *r, *a;
	const uint8_t *next_r, *next_a;
	size_t next_bytes;
} f32_pair;

typedef void (*f32_pass_fn)(const f32_pair *p, size_t n, double *r, double *a, double *d,
                            chunk_res *res);

static void f32_pass_generic(const f32_pair *p, size_t n, double *r, double *a, double *d,
                             chunk_res *res)
{
	f32_to_double(p->r, n, r);
	f32_to_double(p->a, n, a);
	diff_pass(r, a, d, n, res);
}

#ifdef ETC_METRICS_X86
/* One step of 4 elements at offset k, into accumulators mx and s. */
#define F32_STEP_AVX2(k, mx, s)                                                                    \
	do {                                                                                       \
		__m256d rv = _mm256_cvtps_pd(_mm_loadu_ps(fr + (k)));                              \
		__m256d av = _mm256_cvtps_pd(_mm_loadu_ps(fa + (k)));                              \
		_mm256_storeu_pd(r + (k), rv);                                                     \
		_mm256_storeu_pd(a + (k), av);                                                     \
		__m256d dv =                                                                       \
		    _mm256_andnot_pd(_mm256_cmp_pd(av, rv, _CMP_EQ_OQ), _mm256_sub_pd(av, rv));    \
		_mm256_storeu_pd(d + (k), dv);                                                     \
		__m256d nz = _mm256_cmp_pd(dv, zero, _CMP_NEQ_UQ);                                 \
		cnt = _mm256_sub_epi64(cnt, _mm256_castpd_si256(nz));                              \
		__m256d ad = _mm256_and_pd(dv, absmask);                                           \
		s = _mm256_add_pd(s, ad);                                                          \
		mx = _mm256_max_pd(mx, ad);                                                        \
		__m256d big =                                                                      \
		    _mm256_cmp_pd(ad, _mm256_mul_pd(m, _mm256_and_pd(rv, absmask)), _CMP_GT_OQ);   \
		win = _mm256_or_pd(win, _mm256_and_pd(big, _mm256_cmp_pd(rv, zero, _CMP_NEQ_OQ))); \
	} while (0)

__attribute__((target("avx2"))) static void f32_pass_avx2(const f32_pair *p, size_t n, double *r,
                                                          double *a, double *d, chunk_res *res)
{
	const float *fr = (const float *)(const void *)p->r;
	const float *fa = (const float *)(const void *)p->a;
	const char *pr = (const char *)p->next_r, *pa = (const char *)p->next_a;
	size_t pf = p->next_bytes;
	const __m256d zero = _mm256_setzero_pd();
	const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
	__m256i cnt = _mm256_setzero_si256();
	__m256d m = _mm256_set1_pd(res->rel);
	__m256d mx0 = _mm256_set1_pd(res->max_abs), mx1 = mx0, mx2 = mx0, mx3 = mx0;
	__m256d s0 = zero, s1 = zero, s2 = zero, s3 = zero;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		if (4 * i < pf) {
			_mm_prefetch(pr + 4 * i, _MM_HINT_T1);
			_mm_prefetch(pa + 4 * i, _MM_HINT_T1);
		}
		__m256d win = zero;
		F32_STEP_AVX2(i, mx0, s0);
		F32_STEP_AVX2(i + 4, mx1, s1);
		F32_STEP_AVX2(i + 8, mx2, s2);
		F32_STEP_AVX2(i + 12, mx3, s3);
		if (_mm256_movemask_pd(win)) {
			rel_block(r, d, i, 16, res);
			m = _mm256_set1_pd(res->rel);
		}
	}
	uint64_t lanes[4];
	double mx[4], sum[4];
	_mm256_storeu_si256((__m256i *)(void *)lanes, cnt);
	_mm256_storeu_pd(mx, _mm256_max_pd(_mm256_max_pd(mx0, mx1), _mm256_max_pd(mx2, mx3)));
	_mm256_storeu_pd(sum, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
	res->ne += lanes[0] + lanes[1] + lanes[2] + lanes[3];
	res->l1 += (sum[0] + sum[1]) + (sum[2] + sum[3]);
	for (int k = 0; k < 4; k++)
		if (mx[k] > res->max_abs)
			res->max_abs = mx[k];
	f32_to_double(p->r + 4 * i, n - i, r + i);
	f32_to_double(p->a + 4 * i, n - i, a + i);
	diff_tail(r, a, d, i, n, res);
}
#undef F32_STEP_AVX2

/*
 * AVX-512: a != r as a mask (NaN included) gives d by a masked subtraction
 * and the count of d != 0 by popcount (a != r implies a - r != 0 in IEEE
 * arithmetic with gradual underflow).
 */
#define F32_STEP_512(k, mx, s)                                                                     \
	do {                                                                                       \
		__m512d rv = _mm512_cvtps_pd(_mm256_loadu_ps(fr + (k)));                           \
		__m512d av = _mm512_cvtps_pd(_mm256_loadu_ps(fa + (k)));                           \
		_mm512_storeu_pd(r + (k), rv);                                                     \
		_mm512_storeu_pd(a + (k), av);                                                     \
		__mmask8 ne = _mm512_cmp_pd_mask(av, rv, _CMP_NEQ_UQ);                             \
		__m512d dv = _mm512_maskz_sub_pd(ne, av, rv);                                      \
		_mm512_storeu_pd(d + (k), dv);                                                     \
		count += (unsigned)__builtin_popcount(ne);                                         \
		__m512d ad = _mm512_abs_pd(dv);                                                    \
		s = _mm512_add_pd(s, ad);                                                          \
		mx = _mm512_max_pd(mx, ad);                                                        \
		__mmask8 rnz = _mm512_cmp_pd_mask(rv, zero, _CMP_NEQ_OQ);                          \
		win |= _mm512_mask_cmp_pd_mask(rnz, ad, _mm512_mul_pd(m, _mm512_abs_pd(rv)),       \
		                               _CMP_GT_OQ);                                        \
	} while (0)

__attribute__((target("avx512f"))) static void
f32_pass_avx512(const f32_pair *p, size_t n, double *r, double *a, double *d, chunk_res *res)
{
	const float *fr = (const float *)(const void *)p->r;
	const float *fa = (const float *)(const void *)p->a;
	const char *pr = (const char *)p->next_r, *pa = (const char *)p->next_a;
	size_t pf = p->next_bytes;
	const __m512d zero = _mm512_setzero_pd();
	__m512d m = _mm512_set1_pd(res->rel);
	__m512d mx0 = _mm512_set1_pd(res->max_abs), mx1 = mx0;
	__m512d s0 = zero, s1 = zero;
	uint64_t count = 0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		if (4 * i < pf) {
			_mm_prefetch(pr + 4 * i, _MM_HINT_T1);
			_mm_prefetch(pa + 4 * i, _MM_HINT_T1);
		}
		__mmask8 win = 0;
		F32_STEP_512(i, mx0, s0);
		F32_STEP_512(i + 8, mx1, s1);
		if (win) {
			rel_block(r, d, i, 16, res);
			m = _mm512_set1_pd(res->rel);
		}
	}
	res->ne += count;
	res->l1 += _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));
	double mx = _mm512_reduce_max_pd(_mm512_max_pd(mx0, mx1));
	if (mx > res->max_abs)
		res->max_abs = mx;
	f32_to_double(p->r + 4 * i, n - i, r + i);
	f32_to_double(p->a + 4 * i, n - i, a + i);
	diff_tail(r, a, d, i, n, res);
}
#undef F32_STEP_512
#endif

/* The exact-integer path: raises res->rel over the chunk. */
static void rel_pass(const double *r, const double *d, size_t n, chunk_res *res)
{
	rel_block(r, d, 0, n, res);
}

/* d = a - r from raw 64-bit integers, exact until the final rounding. */
static void int64_diff_pass(const uint8_t *rp, const uint8_t *ap, bool is_signed, size_t n,
                            double *d, chunk_res *res)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t ru = etc_le64(rp + 8 * i), au = etc_le64(ap + 8 * i);
		bool a_ge = is_signed ? (int64_t)au >= (int64_t)ru : au >= ru;
		/* the magnitude of the difference fits uint64 for either kind */
		d[i] = a_ge ? (double)(au - ru) : -(double)(ru - au);
		res->ne += au != ru;
		res->l1 += fabs(d[i]);
		if (fabs(d[i]) > res->max_abs)
			res->max_abs = fabs(d[i]);
	}
}

/* Moves the positions where neither side is NaN to the front. */
static size_t compact(double *r, double *a, uint32_t *map, size_t n, uint64_t *nan,
                      uint64_t *nan_mismatch)
{
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		bool rn = isnan(r[i]), an = isnan(a[i]);
		if (rn || an) {
			(*nan)++;
			*nan_mismatch += rn != an;
			continue;
		}
		r[j] = r[i];
		a[j] = a[i];
		map[j++] = (uint32_t)i;
	}
	return j;
}

/* ---- accumulation ---------------------------------------------------------- */

/* Neumaier's compensated sum (an infinite or NaN sum stays as it is). */
typedef struct ksum {
	double s, c;
} ksum;

static void kadd(ksum *k, double x)
{
	double t = k->s + x;
	if (isfinite(t)) {
		if (fabs(k->s) >= fabs(x))
			k->c += (k->s - t) + x;
		else
			k->c += (x - t) + k->s;
	}
	k->s = t;
}

static double ktotal(const ksum *k)
{
	return isfinite(k->s) ? k->s + k->c : k->s;
}

typedef struct totals {
	ksum rr, aa, ra, dd, l1;
	double max_abs, max_rel;
	uint64_t max_abs_index, compared, nan, nan_mismatch, mismatch;
	bool rounded;
} totals;

static const double two53 = 9007199254740992.0;

static bool beyond_2p53(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fabs(v[i]) > two53)
			return true;
	return false;
}

/* The metrics from the totals. */
static void finish(const totals *t, bool exact, etc_metrics *out)
{
	double rr = ktotal(&t->rr), aa = ktotal(&t->aa), ra = ktotal(&t->ra);
	double dd = ktotal(&t->dd), l1 = ktotal(&t->l1);
	uint64_t n = t->compared;

	memset(out, 0, sizeof *out);
	out->count = n;
	out->nan_count = t->nan;
	out->nan_mismatch_count = t->nan_mismatch;
	out->mismatch_count = t->mismatch;
	out->exact = exact;
	out->identical = t->mismatch == 0 && t->nan_mismatch == 0;
	out->max_abs = t->max_abs;
	out->max_abs_index = t->max_abs_index;
	if (t->nan)
		out->notes |= ETC_METRICS_NAN;
	if (t->nan_mismatch)
		out->notes |= ETC_METRICS_NAN_MISMATCH;
	if (t->rounded)
		out->notes |= ETC_METRICS_ROUNDED;
	if (n == 0) {
		out->notes |= ETC_METRICS_EMPTY;
		out->snr_db = out->mse = out->cosine = out->l1 = NAN;
		return;
	}
	if (t->mismatch == 0) {
		/* exact, whatever rounding would have said (and infinities included) */
		out->mse = out->l1 = out->max_rel = 0;
		out->cosine = 1;
		out->snr_db = INFINITY;
		if (rr == 0) {
			out->snr_db = NAN;
			out->notes |= ETC_METRICS_ZERO_REFERENCE | ETC_METRICS_ZERO_NORM;
		} else if (isinf(rr)) {
			out->notes |= ETC_METRICS_INFINITE;
		}
		return;
	}
	out->mse = dd / (double)n;
	out->l1 = l1 / (double)n;
	out->max_rel = t->max_rel;
	if (!isfinite(rr) || !isfinite(aa) || !isfinite(dd) || !isfinite(ra))
		out->notes |= ETC_METRICS_INFINITE;

	/* SNR: the ratio of the means is the ratio of the sums */
	if (rr == 0) {
		out->snr_db = -INFINITY;
		out->max_rel = NAN;
		out->notes |= ETC_METRICS_ZERO_REFERENCE;
	} else if (dd == 0) {
		/* differences too small to square (float64 below 1e-162) */
		out->snr_db = INFINITY;
	} else {
		out->snr_db = 10.0 * (log10(rr) - log10(dd));
	}

	if (rr == 0 || aa == 0) {
		out->cosine = NAN;
		out->notes |= ETC_METRICS_ZERO_NORM;
	} else {
		double c = ra / (sqrt(rr) * sqrt(aa));
		out->cosine = c > 1 ? 1 : c < -1 ? -1 : c;
	}
}

/* False for a tensor source without data (a view the caller forgot to attach). */
static bool has_data(const etc_values *v)
{
	if (v->count == 0)
		return true;
	if (v->read == read_tensor)
		return ((const etc_tensor *)v->src)->data != NULL;
	if (v->read == read_pytensor) {
		const etc_pytensor *t = v->src;
		return t->tensor.data != NULL || t->storage != NULL;
	}
	return true;
}

/* The float32 kernels, best last; the unit tests pick one to check each. */
enum { KERNEL_GENERIC, KERNEL_AVX2, KERNEL_AVX512, KERNEL_BEST };

static f32_pass_fn pick_kernel(int kernel)
{
#ifdef ETC_METRICS_X86
	if (kernel >= KERNEL_AVX512 && __builtin_cpu_supports("avx512f"))
		return f32_pass_avx512;
	if (kernel >= KERNEL_AVX2 && __builtin_cpu_supports("avx2"))
		return f32_pass_avx2;
#endif
	(void)kernel;
	return f32_pass_generic;
}

/*
 * Not exported: etc_metrics_compare with the float32 kernel chosen (0
 * generic, 1 AVX2, 2 AVX-512, 3 the best; one the CPU lacks falls back to
 * the next below), for the unit tests.
 */
int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel);

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, uint32_t *ref_crc, bool *crc_done);

int etc_metrics_compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                        etc_error *err)
{
	return compare(reference, actual, out, err, KERNEL_BEST, NULL, NULL);
}

int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel)
{
	return compare(reference, actual, out, err, kernel, NULL, NULL);
}

int etc_metrics_compare_crc_(const etc_values *reference, const etc_values *actual,
                             etc_metrics *out, uint32_t *ref_crc, bool *crc_done, etc_error *err)
{
	*crc_done = false;
	return compare(reference, actual, out, err, KERNEL_BEST, ref_crc, crc_done);
}

/*
 * The CRC-32 of the reference bytes is taken every CRC_BATCH bytes, while
 * they are still in the cache from the float32 pass.
 */
#define CRC_BATCH ((size_t)64 << 10)

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, uint32_t *ref_crc, bool *crc_done)
{
	if (!reference || !actual || !out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_metrics_compare: NULL argument");
	if ((reference->count && !reference->read) || (actual->count && !actual->read))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_metrics_compare: values without a read function");
	if (!has_data(reference) || !has_data(actual))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_metrics_compare: the %s tensor has no data",
		                has_data(reference) ? "actual" : "reference");
	if (reference->count != actual->count)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "element counts differ: the reference has %llu elements, the "
		                "actual output %llu",
		                (unsigned long long)reference->count,
		                (unsigned long long)actual->count);

	bool exact = integer_like(reference->scalar_type) && integer_like(actual->scalar_type);
	const uint8_t *rraw = NULL, *araw = NULL;
	bool check_rounding = false;
	if (exact && reference->scalar_type == actual->scalar_type) {
		rraw = raw64(reference);
		araw = raw64(actual);
		if (!rraw || !araw)
			rraw = araw = NULL;
	}
	if (exact && !rraw &&
	    (int64_kind(reference->scalar_type) || int64_kind(actual->scalar_type)))
		check_rounding = true;
	bool is_signed = reference->scalar_type == ETC_LONG;
	const uint8_t *rf = raw_f32(reference), *af = raw_f32(actual);
	f32_pass_fn f32_pass = pick_kernel(kernel);

	totals t;
	memset(&t, 0, sizeof t);
	uint64_t total = reference->count;
	double *buf = NULL;
	uint32_t *map = NULL;
	if (total) {
		buf = malloc(3 * (size_t)CHUNK * sizeof *buf);
		map = malloc((size_t)CHUNK * sizeof *map);
		if (!buf || !map) {
			free(buf);
			free(map);
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
			                "etc_metrics_compare: out of memory");
		}
	}
	/* no buffer for an empty pair: no pointer arithmetic on NULL either */
	double *R = buf, *A = buf ? buf + CHUNK : NULL, *D = buf ? buf + 2 * CHUNK : NULL;

	/* only the float32 pass streams the raw reference bytes */
	bool fold_crc = ref_crc && rf && af;
	const uint8_t *crc_from = rf;
	size_t crc_bytes = 0;
	for (uint64_t start = 0; start < total;) {
		size_t n = total - start < CHUNK ? (size_t)(total - start) : CHUNK;
		chunk_res res = {0, 0, t.max_abs, t.max_rel};
		if (rf && af) {
			uint64_t next = total - start - n < CHUNK ? total - start - n : CHUNK;
			f32_pair p = {rf + 4 * start, af + 4 * start, rf + 4 * (start + n),
			              af + 4 * (start + n), 4 * (size_t)next};
			f32_pass(&p, n, R, A, D, &res);
			crc_bytes += 4 * n;
			if (fold_crc && (crc_bytes >= CRC_BATCH || start + n == total)) {
				*ref_crc = etc_crc32(*ref_crc, crc_from, crc_bytes);
				crc_from += crc_bytes;
				crc_bytes = 0;
			}
		} else {
			reference->read(reference->src, start, n, R);
			actual->read(actual->src, start, n, A);
			if (rraw) {
				int64_diff_pass(rraw + 8 * start, araw + 8 * start, is_signed, n, D,
				                &res);
				rel_pass(R, D, n, &res);
			} else {
				diff_pass(R, A, D, n, &res);
			}
			if (check_rounding && !t.rounded)
				t.rounded = beyond_2p53(R, n) || beyond_2p53(A, n);
		}
		double dd = cblas_ddot((int)n, D, 1, D, 1);
		const uint32_t *idx = NULL;
		size_t m = n;
		if (isnan(dd)) {
			/* only NaN in r or a makes d NaN (equal infinities give 0) */
			m = compact(R, A, map, n, &t.nan, &t.nan_mismatch);
			idx = map;
			res = (chunk_res){0, 0, t.max_abs, t.max_rel};
			diff_pass(R, A, D, m, &res);
			dd = m ? cblas_ddot((int)m, D, 1, D, 1) : 0;
		}
		if (m) {
			kadd(&t.dd, dd);
			kadd(&t.rr, cblas_ddot((int)m, R, 1, R, 1));
			kadd(&t.aa, cblas_ddot((int)m, A, 1, A, 1));
			kadd(&t.ra, cblas_ddot((int)m, R, 1, A, 1));
			kadd(&t.l1, res.l1);
			if (res.max_abs > t.max_abs) {
				/* a new maximum: BLAS finds where its first occurrence is */
				size_t k = cblas_idamax((int)m, D, 1);
				t.max_abs = fabs(D[k]);
				t.max_abs_index = start + (idx ? idx[k] : k);
			}
		}
		t.max_rel = res.rel;
		t.mismatch += res.ne;
		t.compared += m;
		start += n;
	}
	free(buf);
	free(map);
	if (crc_done)
		*crc_done = fold_crc || (ref_crc && total == 0);
	finish(&t, exact, out);
	return 0;
}
