/*
 * metrics.c - accuracy metrics of an output against its reference
 * (include/etcompare/metrics.h has the definitions and special cases).
 *
 * Plain float32 on both sides (the common case) takes one streaming pass per
 * chunk of 4096 elements that converts to double in registers and produces
 * r.r, a.a, r.a, d.d, sum |d|, max |d|, the count of d != 0 and max |d|/|r|
 * at once (AVX-512, AVX2+FMA or scalar, chosen at run time); nothing is
 * written to memory, so the pass runs at the speed memory delivers the
 * inputs. Every other source is converted to double 1024 elements at a time
 * through its read function into L1-resident buffers, then passed over the
 * same way. d = a - r is exactly 0 where a == r (equal infinities give no
 * error) and the error energy is the sum of d^2, never r.r - 2 r.a + a.a.
 * Chunk sums are added with Neumaier's compensated summation.
 *
 * NaN costs nothing until it appears: NaN in r or a (and only there) makes
 * d NaN, so d.d is NaN exactly for the chunks holding one; those are
 * compacted to their non-NaN positions (an index map keeps the flat
 * indexes) and computed again.
 *
 * Large comparisons use several threads: the range is cut into fixed
 * segments whose totals are merged in order, so the result has the same
 * bits whatever the thread count (ETC_THREADS, core/parallel.h).
 */
#include "etcompare/metrics.h"

#include "core/internal.h"
#include "core/parallel.h"
#include "analysis/metrics_private.h"
#include "format/zipread.h"

#include <math.h>
#include <stdlib.h>
#include <zlib.h>

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <emmintrin.h>
#include <xmmintrin.h>
#define ETC_METRICS_SSE2 1
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define ETC_METRICS_X86 1
#endif

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

/* ---- the per-chunk passes ------------------------------------------------- */

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

/* A float32 element at p (any alignment), as double. */
static inline double f32_at(const uint8_t *p)
{
	union {
		uint32_t u;
		float f;
	} x = {etc_le32(p)};
	return x.f;
}

/* Raises res->rel from float32 elements [i, i+len) after a vector screen fired. */
static void rel_block_f32(const uint8_t *rp, const uint8_t *ap, size_t i, size_t len,
                          chunk_res *res)
{
	for (size_t k = i; k < i + len; k++) {
		double r = f32_at(rp + 4 * k), a = f32_at(ap + 4 * k);
		double d = a == r ? 0.0 : a - r;
		if (r != 0 && fabs(d) / fabs(r) > res->rel)
			res->rel = fabs(d) / fabs(r);
	}
}

/* The scalar pass over float32 elements [i, n), added to res. */
static void f32_tail(const uint8_t *rp, const uint8_t *ap, size_t i, size_t n, chunk_res *res)
{
	for (; i < n; i++) {
		double r = f32_at(rp + 4 * i), a = f32_at(ap + 4 * i);
		double d = a == r ? 0.0 : a - r;
		res->rr += r * r;
		res->aa += a * a;
		res->ra += r * a;
		res->dd += d * d;
		res->ne += d != 0;
		res->l1 += fabs(d);
		if (fabs(d) > res->max_abs)
			res->max_abs = fabs(d);
		if (r != 0 && fabs(d) / fabs(r) > res->rel)
			res->rel = fabs(d) / fabs(r);
	}
}

/*
 * The float32 kernels: one streaming pass over both inputs that converts to
 * double in registers and produces every sum at once (nothing is stored).
 * NaN input gives NaN in dd and garbage elsewhere: the caller detects it
 * and redoes the chunk without the NaNs. The relative error is only divided
 * out for a block in which some |d| > rel |r| with r != 0 (rare once rel
 * nears its final value), so there is no division per element.
 */
typedef void (*f32_pass_fn)(const uint8_t *rp, const uint8_t *ap, size_t n, chunk_res *res);

/* Portable: 8 lanes of partial sums, as the vector kernels (accuracy alike). */
static void f32_pass_generic(const uint8_t *rp, const uint8_t *ap, size_t n, chunk_res *res)
{
	double rr[8] = {0}, aa[8] = {0}, ra[8] = {0}, dd[8] = {0}, l1[8] = {0};
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		for (int k = 0; k < 8; k++) {
			double r = f32_at(rp + 4 * (i + k)), a = f32_at(ap + 4 * (i + k));
			double d = a == r ? 0.0 : a - r;
			rr[k] += r * r;
			aa[k] += a * a;
			ra[k] += r * a;
			dd[k] += d * d;
			l1[k] += fabs(d);
			res->ne += d != 0;
			if (fabs(d) > res->max_abs)
				res->max_abs = fabs(d);
			if (r != 0 && fabs(d) / fabs(r) > res->rel)
				res->rel = fabs(d) / fabs(r);
		}
	}
	for (int k = 0; k < 8; k++) {
		res->rr += rr[k];
		res->aa += aa[k];
		res->ra += ra[k];
		res->dd += dd[k];
		res->l1 += l1[k];
	}
	f32_tail(rp, ap, i, n, res);
}

/*
 * Software prefetch distance in bytes: the hardware prefetchers stop at page
 * boundaries, so each side is requested a page ahead (prefetches never fault,
 * past the end included).
 */
#define PREFETCH_AHEAD 4096

#ifdef ETC_METRICS_X86
/* One step of 4 elements at offset k, into accumulator set j. */
#define F32_STEP_AVX2(k, j)                                                                        \
	do {                                                                                       \
		__m256d rv = _mm256_cvtps_pd(_mm_loadu_ps(fr + (k)));                              \
		__m256d av = _mm256_cvtps_pd(_mm_loadu_ps(fa + (k)));                              \
		__m256d ne = _mm256_cmp_pd(av, rv, _CMP_NEQ_UQ);                                   \
		__m256d dv = _mm256_and_pd(ne, _mm256_sub_pd(av, rv));                             \
		count += (unsigned)__builtin_popcount((unsigned)_mm256_movemask_pd(ne));           \
		rr##j = _mm256_fmadd_pd(rv, rv, rr##j);                                            \
		aa##j = _mm256_fmadd_pd(av, av, aa##j);                                            \
		ra##j = _mm256_fmadd_pd(rv, av, ra##j);                                            \
		dd##j = _mm256_fmadd_pd(dv, dv, dd##j);                                            \
		__m256d ad = _mm256_and_pd(dv, absmask);                                           \
		l1##j = _mm256_add_pd(l1##j, ad);                                                  \
		mx##j = _mm256_max_pd(mx##j, ad);                                                  \
		__m256d big =                                                                      \
		    _mm256_cmp_pd(ad, _mm256_mul_pd(m, _mm256_and_pd(rv, absmask)), _CMP_GT_OQ);   \
		win = _mm256_or_pd(win, _mm256_and_pd(big, _mm256_cmp_pd(rv, zero, _CMP_NEQ_OQ))); \
	} while (0)

__attribute__((target("avx"))) static inline double hsum256(__m256d v)
{
	double x[4];
	_mm256_storeu_pd(x, v);
	return (x[0] + x[1]) + (x[2] + x[3]);
}

__attribute__((target("avx2,fma"))) static void f32_pass_avx2(const uint8_t *rp, const uint8_t *ap,
                                                              size_t n, chunk_res *res)
{
	const float *fr = (const float *)(const void *)rp;
	const float *fa = (const float *)(const void *)ap;
	const __m256d zero = _mm256_setzero_pd();
	const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
	__m256d m = _mm256_set1_pd(res->rel);
	__m256d rr0 = zero, aa0 = zero, ra0 = zero, dd0 = zero, l10 = zero, mx0 = zero;
	__m256d rr1 = zero, aa1 = zero, ra1 = zero, dd1 = zero, l11 = zero, mx1 = zero;
	uint64_t count = 0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		_mm_prefetch((const char *)rp + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		_mm_prefetch((const char *)ap + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		__m256d win = zero;
		F32_STEP_AVX2(i, 0);
		F32_STEP_AVX2(i + 4, 1);
		F32_STEP_AVX2(i + 8, 0);
		F32_STEP_AVX2(i + 12, 1);
		if (_mm256_movemask_pd(win)) {
			rel_block_f32(rp, ap, i, 16, res);
			m = _mm256_set1_pd(res->rel);
		}
	}
	res->rr += hsum256(_mm256_add_pd(rr0, rr1));
	res->aa += hsum256(_mm256_add_pd(aa0, aa1));
	res->ra += hsum256(_mm256_add_pd(ra0, ra1));
	res->dd += hsum256(_mm256_add_pd(dd0, dd1));
	res->l1 += hsum256(_mm256_add_pd(l10, l11));
	res->ne += count;
	double mx[4];
	_mm256_storeu_pd(mx, _mm256_max_pd(mx0, mx1));
	for (int k = 0; k < 4; k++)
		if (mx[k] > res->max_abs)
			res->max_abs = mx[k];
	f32_tail(rp, ap, i, n, res);
}
#undef F32_STEP_AVX2

/*
 * AVX-512: a != r as a mask (NaN included) gives d by a masked subtraction
 * and the count of d != 0 by popcount (a != r implies a - r != 0 in IEEE
 * arithmetic with gradual underflow).
 */
#define F32_STEP_512(k, j)                                                                         \
	do {                                                                                       \
		__m512d rv = _mm512_cvtps_pd(_mm256_loadu_ps(fr + (k)));                           \
		__m512d av = _mm512_cvtps_pd(_mm256_loadu_ps(fa + (k)));                           \
		__mmask8 ne = _mm512_cmp_pd_mask(av, rv, _CMP_NEQ_UQ);                             \
		__m512d dv = _mm512_maskz_sub_pd(ne, av, rv);                                      \
		count += (unsigned)__builtin_popcount(ne);                                         \
		rr##j = _mm512_fmadd_pd(rv, rv, rr##j);                                            \
		aa##j = _mm512_fmadd_pd(av, av, aa##j);                                            \
		ra##j = _mm512_fmadd_pd(rv, av, ra##j);                                            \
		dd##j = _mm512_fmadd_pd(dv, dv, dd##j);                                            \
		__m512d ad = _mm512_abs_pd(dv);                                                    \
		l1##j = _mm512_add_pd(l1##j, ad);                                                  \
		mx##j = _mm512_max_pd(mx##j, ad);                                                  \
		__mmask8 rnz = _mm512_cmp_pd_mask(rv, zero, _CMP_NEQ_OQ);                          \
		win |= _mm512_mask_cmp_pd_mask(rnz, ad, _mm512_mul_pd(m, _mm512_abs_pd(rv)),       \
		                               _CMP_GT_OQ);                                        \
	} while (0)

__attribute__((target("avx512f"))) static void f32_pass_avx512(const uint8_t *rp, const uint8_t *ap,
                                                               size_t n, chunk_res *res)
{
	const float *fr = (const float *)(const void *)rp;
	const float *fa = (const float *)(const void *)ap;
	const __m512d zero = _mm512_setzero_pd();
	__m512d m = _mm512_set1_pd(res->rel);
	__m512d rr0 = zero, aa0 = zero, ra0 = zero, dd0 = zero, l10 = zero, mx0 = zero;
	__m512d rr1 = zero, aa1 = zero, ra1 = zero, dd1 = zero, l11 = zero, mx1 = zero;
	uint64_t count = 0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		_mm_prefetch((const char *)rp + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		_mm_prefetch((const char *)ap + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		__mmask8 win = 0;
		F32_STEP_512(i, 0);
		F32_STEP_512(i + 8, 1);
		if (win) {
			rel_block_f32(rp, ap, i, 16, res);
			m = _mm512_set1_pd(res->rel);
		}
	}
	res->rr += _mm512_reduce_add_pd(_mm512_add_pd(rr0, rr1));
	res->aa += _mm512_reduce_add_pd(_mm512_add_pd(aa0, aa1));
	res->ra += _mm512_reduce_add_pd(_mm512_add_pd(ra0, ra1));
	res->dd += _mm512_reduce_add_pd(_mm512_add_pd(dd0, dd1));
	res->l1 += _mm512_reduce_add_pd(_mm512_add_pd(l10, l11));
	res->ne += count;
	double mx = _mm512_reduce_max_pd(_mm512_max_pd(mx0, mx1));
	if (mx > res->max_abs)
		res->max_abs = mx;
	f32_tail(rp, ap, i, n, res);
}
#undef F32_STEP_512
#endif

#ifdef ETC_METRICS_X86
/* f32_find, 4 elements a step. */
__attribute__((target("avx2"))) static size_t f32_find_avx2(const uint8_t *rp, const uint8_t *ap,
                                                            size_t n, double target)
{
	const float *fr = (const float *)(const void *)rp;
	const float *fa = (const float *)(const void *)ap;
	const __m256d want = _mm256_set1_pd(target);
	const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
	size_t k = 0;
	for (; k + 4 <= n; k += 4) {
		__m256d r = _mm256_cvtps_pd(_mm_loadu_ps(fr + k));
		__m256d a = _mm256_cvtps_pd(_mm_loadu_ps(fa + k));
		__m256d d = _mm256_and_pd(_mm256_sub_pd(a, r), absmask);
		__m256d hit = _mm256_and_pd(_mm256_cmp_pd(d, want, _CMP_EQ_OQ),
		                            _mm256_cmp_pd(a, r, _CMP_NEQ_UQ));
		int mask = _mm256_movemask_pd(hit);
		if (mask)
			return k + (size_t)__builtin_ctz((unsigned)mask);
	}
	for (; k < n; k++) {
		double r = f32_at(rp + 4 * k), a = f32_at(ap + 4 * k);
		if (a != r && fabs(a - r) == target)
			return k;
	}
	return 0;
}
#endif

/* The first k in [0, n) of the float32 chunk with |a - r| == target. */
static size_t f32_find(const uint8_t *rp, const uint8_t *ap, size_t n, double target)
{
#ifdef ETC_METRICS_X86
	if (__builtin_cpu_supports("avx2"))
		return f32_find_avx2(rp, ap, n, target);
#endif
	for (size_t k = 0; k < n; k++) {
		double r = f32_at(rp + 4 * k), a = f32_at(ap + 4 * k);
		if (a != r && fabs(a - r) == target)
			return k;
	}
	return 0;
}

/* ---- the double passes (any source, converted by its read function) ------- */

/* The scalar remainder of diff_pass: elements [i, n). */
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
 * d[i] = a[i] - r[i], or 0 where a[i] == r[i], with the count of d != 0,
 * sum |d|, max |d| and max |d|/|r| (screened by blocks as in the float32
 * kernels).
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

/* r.r, a.a, r.a and d.d of n doubles, added to res. */
static void dots_pass(const double *r, const double *a, const double *d, size_t n, chunk_res *res)
{
	double rr[2] = {0, 0}, aa[2] = {0, 0}, ra[2] = {0, 0}, dd[2] = {0, 0};
	size_t i = 0;
	for (; i + 2 <= n; i += 2)
		for (int k = 0; k < 2; k++) {
			rr[k] += r[i + k] * r[i + k];
			aa[k] += a[i + k] * a[i + k];
			ra[k] += r[i + k] * a[i + k];
			dd[k] += d[i + k] * d[i + k];
		}
	for (; i < n; i++) {
		rr[0] += r[i] * r[i];
		aa[0] += a[i] * a[i];
		ra[0] += r[i] * a[i];
		dd[0] += d[i] * d[i];
	}
	res->rr += rr[0] + rr[1];
	res->aa += aa[0] + aa[1];
	res->ra += ra[0] + ra[1];
	res->dd += dd[0] + dd[1];
}

/* The first k in [0, n) with |d[k]| == target. */
static size_t d_find(const double *d, size_t n, double target)
{
	for (size_t k = 0; k < n; k++)
		if (fabs(d[k]) == target)
			return k;
	return 0;
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

/* Adds the compensated sum b to a (its sum, then its correction). */
static void kmerge(ksum *a, const ksum *b)
{
	kadd(a, b->s);
	a->c += b->c;
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

/* True for the read functions of this file (pure: safe on several threads). */
static bool known_source(const etc_values *v)
{
	return v->read == read_tensor || v->read == read_pytensor || v->read == read_doubles;
}

/* The float32 kernels, best last; the unit tests pick one to check each. */
enum { KERNEL_GENERIC, KERNEL_AVX2, KERNEL_AVX512, KERNEL_BEST };

static f32_pass_fn pick_kernel(int kernel)
{
#ifdef ETC_METRICS_X86
	if (kernel >= KERNEL_AVX512 && __builtin_cpu_supports("avx512f"))
		return f32_pass_avx512;
	if (kernel >= KERNEL_AVX2 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma"))
		return f32_pass_avx2;
#endif
	(void)kernel;
	return f32_pass_generic;
}

/* ---- segments and threads ----------------------------------------------------- */

/*
 * Elements per chunk. A chunk's sums are accumulated in registers (the
 * float32 kernels) or in L1-resident double buffers (the other sources:
 * 3 x 8 KiB at 1024), then added to the segment's compensated sums.
 */
#define CHUNK_F32 4096
#define CHUNK_DBL 1024

/*
 * The range is cut into segments of SEGMENT elements whatever the thread
 * count: each segment's totals start from zero and the segments are merged
 * in order, so 1 or 8 threads give the same bits. Threads take contiguous
 * runs of segments; below two segments the comparison stays on the calling
 * thread.
 */
#define SEGMENT ((uint64_t)1 << 18)

/*
 * The CRC-32 of the reference bytes is taken every CRC_BATCH bytes, while
 * they are still in the cache from the float32 pass; each segment's CRC
 * starts from 0 and they are combined in order (zlib's crc32_combine).
 */
#define CRC_BATCH ((size_t)64 << 10)

typedef struct job {
	const etc_values *ref, *act;
	const uint8_t *rf, *af;     /* raw float32 of each side, or NULL */
	const uint8_t *rraw, *araw; /* raw 64-bit integers of each side, or NULL */
	bool is_signed, check_rounding, fold_crc;
	f32_pass_fn f32_pass;
	uint64_t total;
	struct segment *segs;
} job;

typedef struct segment {
	totals t;
	/* the float32 chunk [find_at, find_at + find_n) holds max |d| first; its
	 * index is looked up once, when the segment is done */
	uint64_t find_at;
	size_t find_n;
	uint32_t crc; /* of the segment's reference bytes, from 0 (fold_crc) */
	bool nomem;
} segment;

/* Adds one chunk's pass to the segment totals; idx maps compacted positions. */
static void add_chunk(totals *t, const chunk_res *res, uint64_t compared)
{
	if (compared) {
		kadd(&t->dd, res->dd);
		kadd(&t->rr, res->rr);
		kadd(&t->aa, res->aa);
		kadd(&t->ra, res->ra);
		kadd(&t->l1, res->l1);
	}
	t->max_rel = res->rel;
	t->mismatch += res->ne;
	t->compared += compared;
}

/* The double path of one chunk: R, A (and D for exact integers) are filled. */
static void dbl_chunk(const job *j, totals *t, uint64_t start, size_t n, double *R, double *A,
                      double *D, uint32_t *map)
{
	chunk_res res = {0, 0, 0, 0, 0, 0, t->max_rel, 0};
	j->ref->read(j->ref->src, start, n, R);
	j->act->read(j->act->src, start, n, A);
	if (j->rraw) {
		int64_diff_pass(j->rraw + 8 * start, j->araw + 8 * start, j->is_signed, n, D, &res);
		rel_block(R, D, 0, n, &res);
	} else {
		diff_pass(R, A, D, n, &res);
	}
	if (j->check_rounding && !t->rounded)
		t->rounded = beyond_2p53(R, n) || beyond_2p53(A, n);
	dots_pass(R, A, D, n, &res);
	const uint32_t *idx = NULL;
	size_t m = n;
	if (isnan(res.dd)) {
		/* only NaN in r or a makes d NaN (equal infinities give 0) */
		m = compact(R, A, map, n, &t->nan, &t->nan_mismatch);
		idx = map;
		res = (chunk_res){0, 0, 0, 0, 0, 0, t->max_rel, 0};
		diff_pass(R, A, D, m, &res);
		dots_pass(R, A, D, m, &res);
	}
	if (m && res.max_abs > t->max_abs) {
		size_t k = d_find(D, m, res.max_abs);
		t->max_abs = res.max_abs;
		t->max_abs_index = start + (idx ? idx[k] : k);
	}
	add_chunk(t, &res, m);
}

/* The float32 path of one chunk, straight from the raw bytes. */
static void f32_chunk(const job *j, segment *sg, uint64_t start, size_t n, double *R, double *A,
                      double *D, uint32_t *map)
{
	totals *t = &sg->t;
	const uint8_t *rp = j->rf + 4 * start, *ap = j->af + 4 * start;
	chunk_res res = {0, 0, 0, 0, 0, 0, t->max_rel, 0};
	j->f32_pass(rp, ap, n, &res);
	if (isnan(res.dd)) {
		f32_to_double(rp, n, R);
		f32_to_double(ap, n, A);
		size_t m = compact(R, A, map, n, &t->nan, &t->nan_mismatch);
		res = (chunk_res){0, 0, 0, 0, 0, 0, t->max_rel, 0};
		diff_pass(R, A, D, m, &res);
		dots_pass(R, A, D, m, &res);
		if (m && res.max_abs > t->max_abs) {
			t->max_abs = res.max_abs;
			t->max_abs_index = start + map[d_find(D, m, res.max_abs)];
			sg->find_n = 0;
		}
		add_chunk(t, &res, m);
		return;
	}
	if (res.max_abs > t->max_abs) {
		t->max_abs = res.max_abs;
		sg->find_at = start;
		sg->find_n = n;
	}
	add_chunk(t, &res, n);
}

static void run_segment(const job *j, segment *sg, uint64_t begin, uint64_t end, double *buf,
                        uint32_t *map)
{
	double *R = buf, *A = buf + CHUNK_F32, *D = buf + 2 * CHUNK_F32;
	size_t chunk = j->rf && j->af ? CHUNK_F32 : CHUNK_DBL;
	const uint8_t *crc_from = j->fold_crc ? j->rf + 4 * begin : NULL;
	size_t crc_bytes = 0;
	memset(&sg->t, 0, sizeof sg->t);
	sg->crc = 0;
	sg->find_n = 0;
	for (uint64_t start = begin; start < end;) {
		size_t n = end - start < chunk ? (size_t)(end - start) : chunk;
		if (j->rf && j->af) {
			f32_chunk(j, sg, start, n, R, A, D, map);
			crc_bytes += 4 * n;
			if (j->fold_crc && (crc_bytes >= CRC_BATCH || start + n == end)) {
				sg->crc = etc_crc32(sg->crc, crc_from, crc_bytes);
				crc_from += crc_bytes;
				crc_bytes = 0;
			}
		} else {
			dbl_chunk(j, &sg->t, start, n, R, A, D, map);
		}
		start += n;
	}
	if (sg->find_n)
		sg->t.max_abs_index =
		    sg->find_at + f32_find(j->rf + 4 * sg->find_at, j->af + 4 * sg->find_at,
		                           sg->find_n, sg->t.max_abs);
}

/* etc_range_fn: segments [first, last) with scratch buffers of their own. */
static void run_segments(void *ctx, size_t first, size_t last)
{
	const job *j = ctx;
	double *buf = malloc(3 * (size_t)CHUNK_F32 * sizeof *buf);
	uint32_t *map = malloc((size_t)CHUNK_F32 * sizeof *map);
	for (size_t s = first; s < last; s++) {
		j->segs[s].nomem = !buf || !map;
		if (buf && map) {
			uint64_t begin = s * SEGMENT;
			uint64_t end = j->total - begin < SEGMENT ? j->total : begin + SEGMENT;
			run_segment(j, &j->segs[s], begin, end, buf, map);
		}
	}
	free(buf);
	free(map);
}

/* Adds segment b's totals to a; b comes after every segment already in a. */
static void merge(totals *a, const totals *b)
{
	kmerge(&a->rr, &b->rr);
	kmerge(&a->aa, &b->aa);
	kmerge(&a->ra, &b->ra);
	kmerge(&a->dd, &b->dd);
	kmerge(&a->l1, &b->l1);
	if (b->max_abs > a->max_abs) {
		a->max_abs = b->max_abs;
		a->max_abs_index = b->max_abs_index;
	}
	if (b->max_rel > a->max_rel)
		a->max_rel = b->max_rel;
	a->compared += b->compared;
	a->nan += b->nan;
	a->nan_mismatch += b->nan_mismatch;
	a->mismatch += b->mismatch;
	a->rounded = a->rounded || b->rounded;
}

/* ---- entry points ---------------------------------------------------------- */

/*
 * Not exported: etc_metrics_compare with the float32 kernel chosen (0
 * generic, 1 AVX2, 2 AVX-512, 3 the best; one the CPU lacks falls back to
 * the next below), for the unit tests; and with the thread count chosen
 * too (0: etc_thread_count_), to check that it changes no bit.
 */
int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel);
int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads);

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done);

int etc_metrics_compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                        etc_error *err)
{
	return compare(reference, actual, out, err, KERNEL_BEST, 0, NULL, NULL);
}

int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel)
{
	return compare(reference, actual, out, err, kernel, 0, NULL, NULL);
}

int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads)
{
	return compare(reference, actual, out, err, kernel, threads, NULL, NULL);
}

int etc_metrics_compare_crc_(const etc_values *reference, const etc_values *actual,
                             etc_metrics *out, uint32_t *ref_crc, bool *crc_done, etc_error *err)
{
	*crc_done = false;
	return compare(reference, actual, out, err, KERNEL_BEST, 0, ref_crc, crc_done);
}

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done)
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

	job j;
	memset(&j, 0, sizeof j);
	j.ref = reference;
	j.act = actual;
	j.total = reference->count;
	bool exact = integer_like(reference->scalar_type) && integer_like(actual->scalar_type);
	if (exact && reference->scalar_type == actual->scalar_type) {
		j.rraw = raw64(reference);
		j.araw = raw64(actual);
		if (!j.rraw || !j.araw)
			j.rraw = j.araw = NULL;
	}
	if (exact && !j.rraw &&
	    (int64_kind(reference->scalar_type) || int64_kind(actual->scalar_type)))
		j.check_rounding = true;
	j.is_signed = reference->scalar_type == ETC_LONG;
	j.rf = raw_f32(reference);
	j.af = raw_f32(actual);
	if (!j.rf || !j.af)
		j.rf = j.af = NULL;
	j.f32_pass = pick_kernel(kernel);
	/* only the float32 pass streams the raw reference bytes */
	j.fold_crc = ref_crc && j.rf;

	totals t;
	memset(&t, 0, sizeof t);
	size_t nseg = (size_t)((j.total + SEGMENT - 1) / SEGMENT);
	segment one, *segs = &one;
	if (nseg > 1) {
		segs = malloc(nseg * sizeof *segs);
		if (!segs)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
			                "etc_metrics_compare: out of memory");
	}
	j.segs = segs;
	if (threads == 0)
		threads = nseg > 1 && known_source(reference) && known_source(actual)
		              ? etc_thread_count_()
		              : 1;
	etc_parallel_for_(nseg, threads, run_segments, &j);
	bool nomem = false;
	uint32_t crc = ref_crc ? *ref_crc : 0;
	for (size_t s = 0; s < nseg; s++) {
		nomem = nomem || segs[s].nomem;
		merge(&t, &segs[s].t);
		if (j.fold_crc) {
			uint64_t begin = s * SEGMENT;
			uint64_t len = j.total - begin < SEGMENT ? j.total - begin : SEGMENT;
			crc = (uint32_t)crc32_combine(crc, segs[s].crc, (z_off_t)(4 * len));
		}
	}
	if (segs != &one)
		free(segs);
	if (nomem)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "etc_metrics_compare: out of memory");
	if (j.fold_crc)
		*ref_crc = crc;
	if (crc_done)
		*crc_done = j.fold_crc || (ref_crc && j.total == 0);
	finish(&t, exact, out);
	return 0;
}
