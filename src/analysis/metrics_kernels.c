/*
 * metrics_kernels.c - the per-chunk passes of metrics.c and the run-time
 * choice of the float32 kernel: the float32 pass straight from the raw bytes
 * (AVX-512, AVX2+FMA or portable), the lookup of max |d| in a float32 chunk,
 * and the double passes (d = a - r, the dot products, the int64 difference)
 * over chunks already converted to double. metrics.c drives them over
 * segments and threads and owns NaN handling, summation and the results.
 */
#include "analysis/metrics_kernels.h"

#include "core/internal.h"

#include <float.h>
#include <math.h>

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <emmintrin.h>
#include <xmmintrin.h>
#define ETC_METRICS_SSE2 1
#endif
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define ETC_METRICS_X86 1
#endif

/* ---- the float32 passes --------------------------------------------------- */
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
 * Portable: 8 lanes of partial sums, as the vector kernels (accuracy
 * alike), written so that a compiler can vectorize it: no branch per
 * element, d unmasked (equal infinities give NaN, like NaN input: the
 * caller redoes the chunk), and the relative error screened per 8
 * elements by a product: |d| >= fl(rel |r|) with d != 0 and r != 0 holds
 * wherever fl(|d| / |r|) > rel (then |d| > rel |r| exactly, and rounding
 * is monotonic), and the 8 are then divided out exactly.
 */
static void f32_pass_generic(const uint8_t *rp, const uint8_t *ap, size_t n, chunk_res *res)
{
	double rr[8] = {0}, aa[8] = {0}, ra[8] = {0}, dd[8] = {0}, l1[8] = {0}, mx[8] = {0};
	uint64_t ne[8] = {0};
	double m = res->rel;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		int fire = 0;
		for (int k = 0; k < 8; k++) {
			double r = f32_at(rp + 4 * (i + k)), a = f32_at(ap + 4 * (i + k));
			double d = a - r, ad = fabs(d);
			rr[k] += r * r;
			aa[k] += a * a;
			ra[k] += r * a;
			dd[k] += d * d;
			l1[k] += ad;
			mx[k] = ad > mx[k] ? ad : mx[k];
			ne[k] += a != r;
			fire |= (ad >= m * fabs(r)) & (a != r) & (r != 0);
		}
		if (fire) {
			rel_block_f32(rp, ap, i, 8, res);
			m = res->rel;
		}
	}
	for (int k = 0; k < 8; k++) {
		res->rr += rr[k];
		res->aa += aa[k];
		res->ra += ra[k];
		res->dd += dd[k];
		res->l1 += l1[k];
		res->ne += ne[k];
		if (mx[k] > res->max_abs)
			res->max_abs = mx[k];
	}
	f32_tail(rp, ap, i, n, res);
}

/* f32_dd_fn, portable: four lanes of partial sums */
static double f32_dd_generic(const uint8_t *xp, const uint8_t *ap, size_t n)
{
	double s[4] = {0, 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		double d = f32_at(ap + 4 * i) - f32_at(xp + 4 * i);
		s[i % 4] += d * d;
	}
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/*
 * Software prefetch distance in bytes: the hardware prefetchers stop at page
 * boundaries, so each side is requested a page ahead (prefetches never fault,
 * past the end included).
 */
#define PREFETCH_AHEAD 4096

#ifdef ETC_METRICS_X86
/*
 * The relative-error screen of the AVX2 kernel runs on float32 lanes: for a
 * running maximum rel it fires where |fl32(a - r)| >= max(fl32(s |r|), the
 * least subnormal) and r != 0, with s the float32 screen_of(rel) <= rel.
 * It never misses an element that raises rel: if fl64(|d| / |r|) > rel
 * then the exact |a - r| > s |r| (s is below rel by more than the rounding
 * of d), so by the monotony of rounding fl32(|a - r|) >= fl32(s |r|), and
 * a != r makes fl32(a - r) nonzero (gradual underflow). At rel = 0 it fires
 * exactly where a != r and r != 0, so identical tensors never fire.
 */
static float screen_of(double rel)
{
	double m = rel * (1.0 - 0x1p-50);
	if (!(m <= FLT_MAX))
		return FLT_MAX; /* a float32 ratio beyond it needs r subnormal */
	float s = (float)m;
	return (double)s > m ? nextafterf(s, 0.0f) : s;
}

/*
 * One step of 8 elements at offset k, into accumulator set j: the count of
 * a != r and the relative-error screen on the 8 float32 lanes, the sums on
 * two halves of 4 converted to double. d = a - r is not masked where a ==
 * r: it is 0 there, except for equal infinities (NaN, as for NaN input),
 * whose chunk the caller redoes.
 */
#define F32_STEP_AVX2(k, j)                                                                        \
	do {                                                                                       \
		__m256 r8 = _mm256_loadu_ps(fr + (k)), a8 = _mm256_loadu_ps(fa + (k));             \
		count += (unsigned)__builtin_popcount(                                             \
		    (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(a8, r8, _CMP_NEQ_UQ)));             \
		__m256 adf = _mm256_andnot_ps(sign_ps, _mm256_sub_ps(a8, r8));                     \
		__m256 lim = _mm256_max_ps(_mm256_mul_ps(_mm256_andnot_ps(sign_ps, r8), s), tiny); \
		win = _mm256_or_ps(win, _mm256_and_ps(_mm256_cmp_ps(adf, lim, _CMP_GE_OQ),         \
		                                      _mm256_cmp_ps(r8, zero_ps, _CMP_NEQ_OQ)));   \
		__m256d r0 = _mm256_cvtps_pd(_mm_loadu_ps(fr + (k)));                              \
		__m256d a0 = _mm256_cvtps_pd(_mm_loadu_ps(fa + (k)));                              \
		__m256d r1 = _mm256_cvtps_pd(_mm_loadu_ps(fr + (k) + 4));                          \
		__m256d a1 = _mm256_cvtps_pd(_mm_loadu_ps(fa + (k) + 4));                          \
		__m256d d0 = _mm256_sub_pd(a0, r0), d1 = _mm256_sub_pd(a1, r1);                    \
		rr##j = _mm256_fmadd_pd(r1, r1, _mm256_fmadd_pd(r0, r0, rr##j));                   \
		aa##j = _mm256_fmadd_pd(a1, a1, _mm256_fmadd_pd(a0, a0, aa##j));                   \
		ra##j = _mm256_fmadd_pd(r1, a1, _mm256_fmadd_pd(r0, a0, ra##j));                   \
		dd##j = _mm256_fmadd_pd(d1, d1, _mm256_fmadd_pd(d0, d0, dd##j));                   \
		__m256d e0 = _mm256_andnot_pd(sign_pd, d0), e1 = _mm256_andnot_pd(sign_pd, d1);    \
		l1##j = _mm256_add_pd(l1##j, _mm256_add_pd(e0, e1));                               \
		mx##j = _mm256_max_pd(mx##j, _mm256_max_pd(e0, e1));                               \
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
	const __m256 zero_ps = _mm256_setzero_ps();
	const __m256 sign_ps = _mm256_set1_ps(-0.0f), tiny = _mm256_set1_ps(FLT_TRUE_MIN);
	const __m256d sign_pd = _mm256_set1_pd(-0.0);
	__m256 s = _mm256_set1_ps(screen_of(res->rel));
	__m256d rr0 = zero, aa0 = zero, ra0 = zero, dd0 = zero, l10 = zero, mx0 = zero;
	__m256d rr1 = zero, aa1 = zero, ra1 = zero, dd1 = zero, l11 = zero, mx1 = zero;
	uint64_t count = 0;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		_mm_prefetch((const char *)rp + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		_mm_prefetch((const char *)ap + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		__m256 win = zero_ps;
		F32_STEP_AVX2(i, 0);
		F32_STEP_AVX2(i + 8, 1);
		if (_mm256_movemask_ps(win)) {
			rel_block_f32(rp, ap, i, 16, res);
			s = _mm256_set1_ps(screen_of(res->rel));
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

/* f32_dd_fn: x streams from memory (prefetched a page ahead), a from the cache */
__attribute__((target("avx2,fma"))) static double f32_dd_avx2(const uint8_t *xp, const uint8_t *ap,
                                                              size_t n)
{
	const float *fx = (const float *)(const void *)xp;
	const float *fa = (const float *)(const void *)ap;
	__m256d s0 = _mm256_setzero_pd(), s1 = s0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		_mm_prefetch((const char *)xp + 4 * i + PREFETCH_AHEAD, _MM_HINT_T0);
		__m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(fa + i)),
		                           _mm256_cvtps_pd(_mm_loadu_ps(fx + i)));
		__m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(fa + i + 4)),
		                           _mm256_cvtps_pd(_mm_loadu_ps(fx + i + 4)));
		s0 = _mm256_fmadd_pd(d0, d0, s0), s1 = _mm256_fmadd_pd(d1, d1, s1);
	}
	return hsum256(_mm256_add_pd(s0, s1)) + f32_dd_generic(xp + 4 * i, ap + 4 * i, n - i);
}

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
size_t etc_metrics_f32_find_(const uint8_t *rp, const uint8_t *ap, size_t n, double target)
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
void etc_metrics_rel_block_(const double *r, const double *d, size_t i, size_t len, chunk_res *res)
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
void etc_metrics_diff_pass_(const double *r, const double *a, double *d, size_t n, chunk_res *res)
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
			etc_metrics_rel_block_(r, d, i, 4, res);
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
void etc_metrics_dots_pass_(const double *r, const double *a, const double *d, size_t n,
                            chunk_res *res)
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
size_t etc_metrics_d_find_(const double *d, size_t n, double target)
{
	for (size_t k = 0; k < n; k++)
		if (fabs(d[k]) == target)
			return k;
	return 0;
}

/* d = a - r from raw 64-bit integers, exact until the final rounding. */
void etc_metrics_int64_diff_pass_(const uint8_t *rp, const uint8_t *ap, bool is_signed, size_t n,
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
f32_pass_fn etc_metrics_pick_kernel_(int kernel)
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

f32_dd_fn etc_metrics_pick_dd_(int kernel)
{
#ifdef ETC_METRICS_X86
	if (kernel >= KERNEL_AVX2 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("fma"))
		return f32_dd_avx2;
#endif
	(void)kernel;
	return f32_dd_generic;
}
