/*
 * metrics.c - accuracy metrics of an output against its reference
 * (include/etcompare/metrics.h has the definitions and special cases).
 *
 * Plain float32 on both sides (the common case; a float32 reference read
 * through strides, values.c's gather, too: it is gathered a chunk at a
 * time) takes one streaming pass per chunk of 4096 elements that converts
 * to double in registers and produces r.r, a.a, r.a, d.d, sum |d|, max |d|,
 * the count of d != 0 and max |d|/|r| at once (AVX-512, AVX2+FMA or
 * scalar, chosen at run time); nothing is written to memory, so the pass
 * runs at the speed memory delivers the inputs. Every other source is
 * converted to double 1024 elements at a time through its read function
 * into L1-resident buffers, then passed over the same way. d = a - r is
 * exactly 0 where a == r (equal infinities give no error) and the error
 * energy is the sum of d^2, never r.r - 2 r.a + a.a.
 * Chunk sums are added with Neumaier's compensated summation.
 *
 * NaN costs nothing until it appears: NaN in r or a makes d NaN, so d.d is
 * NaN for the chunks holding one (and, in the float32 kernels, for chunks
 * with equal infinities, inf - inf); those are compacted to their non-NaN
 * positions (an index map keeps the flat indexes) and computed again.
 *
 * Large comparisons use several threads: the range is cut into fixed
 * segments whose totals are merged in order, so the result has the same
 * bits whatever the thread count (ETC_THREADS, core/parallel.h).
 *
 * This file owns the sources (read functions), the driver (segments,
 * threads, ordered merge, CRC folding, NaN handling, summation, results)
 * and the entry points; the per-chunk passes and the run-time choice of
 * the float32 kernel are in metrics_kernels.c.
 */
#include "etcompare/metrics.h"

#include "core/internal.h"
#include "core/parallel.h"
#include "analysis/compare_private.h"
#include "analysis/metrics_kernels.h"
#include "analysis/metrics_private.h"
#include "analysis/values_private.h"
#include "format/zipread.h"

#include <math.h>
#include <stdatomic.h>
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
	ksum xx; /* sum (a - x)^2 of the extra reference (etc_metrics_compare_sums_) */
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

/* True for the read functions of this file and the float32 gathers of
 * values.c (pure: safe on several threads). */
static bool known_source(const etc_values *v)
{
	return v->read == read_tensor || v->read == read_pytensor || v->read == read_doubles ||
	       etc_values_is_f32_gather_(v);
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
 * in order, so 1 or 8 threads give the same bits. Threads take segments
 * a few at a time (run_segments); below two segments the comparison stays
 * on the calling thread.
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
	const etc_values *extra;    /* a second reference, or NULL */
	const uint8_t *rf, *af;     /* raw float32 of each side, or NULL */
	const etc_values *rg;       /* else a reference gathered as float32 (values.c), or NULL */
	const uint8_t *xf;          /* raw float32 of the extra reference, or NULL */
	const uint8_t *rraw, *araw; /* raw 64-bit integers of each side, or NULL */
	bool is_signed, check_rounding, fold_crc;
	f32_pass_fn f32_pass;
	f32_dd_fn f32_dd;
	uint64_t total;
	size_t stride; /* elements of each scratch array: CHUNK_F32, or fewer for a small job */
	struct segment *segs;
	size_t nseg;
	atomic_size_t *next; /* the next segment a thread takes */
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

/* sum (A - X)^2 of n doubles, plain (see f32_dd_fn), X read from the extra reference. */
static double extra_dd(const job *j, uint64_t start, size_t n, const double *A, double *X)
{
	j->extra->read(j->extra->src, start, n, X);
	double s[4] = {0, 0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		double d = A[i] - X[i];
		s[i % 4] += d * d;
	}
	return (s[0] + s[1]) + (s[2] + s[3]);
}

/* The double path of one chunk: R, A (and D for exact integers) are filled. */
static void dbl_chunk(const job *j, totals *t, uint64_t start, size_t n, double *R, double *A,
                      double *D, double *X, uint32_t *map)
{
	chunk_res res = {0, 0, 0, 0, 0, 0, t->max_rel, 0};
	j->ref->read(j->ref->src, start, n, R);
	j->act->read(j->act->src, start, n, A);
	if (j->extra) /* before the NaN positions are compacted away */
		kadd(&t->xx, extra_dd(j, start, n, A, X));
	if (j->rraw) {
		etc_metrics_int64_diff_pass_(j->rraw + 8 * start, j->araw + 8 * start, j->is_signed,
		                             n, D, &res);
		etc_metrics_rel_block_(R, D, 0, n, &res);
	} else {
		etc_metrics_diff_pass_(R, A, D, n, &res);
	}
	if (j->check_rounding && !t->rounded)
		t->rounded = beyond_2p53(R, n) || beyond_2p53(A, n);
	etc_metrics_dots_pass_(R, A, D, n, &res);
	const uint32_t *idx = NULL;
	size_t m = n;
	if (isnan(res.dd)) {
		/* only NaN in r or a makes d NaN (equal infinities give 0) */
		m = compact(R, A, map, n, &t->nan, &t->nan_mismatch);
		idx = map;
		res = (chunk_res){0, 0, 0, 0, 0, 0, t->max_rel, 0};
		etc_metrics_diff_pass_(R, A, D, m, &res);
		etc_metrics_dots_pass_(R, A, D, m, &res);
	}
	if (m && res.max_abs > t->max_abs) {
		size_t k = etc_metrics_d_find_(D, m, res.max_abs);
		t->max_abs = res.max_abs;
		t->max_abs_index = start + (idx ? idx[k] : k);
	}
	add_chunk(t, &res, m);
}

/* The reference's float32 bytes of chunk [start, start + n): raw, or
 * gathered into G (CHUNK_F32 floats). */
static const uint8_t *ref_f32(const job *j, uint64_t start, size_t n, float *G)
{
	if (!j->rg)
		return j->rf + 4 * start;
	etc_values_gather_f32_(j->rg, start, n, G);
	return (const uint8_t *)G;
}

/* The float32 path of one chunk, straight from the raw bytes. */
static void f32_chunk(const job *j, segment *sg, uint64_t start, size_t n, double *R, double *A,
                      double *D, double *X, uint32_t *map, float *G)
{
	totals *t = &sg->t;
	const uint8_t *rp = ref_f32(j, start, n, G), *ap = j->af + 4 * start;
	chunk_res res = {0, 0, 0, 0, 0, 0, t->max_rel, 0};
	j->f32_pass(rp, ap, n, &res);
	if (j->xf) { /* the actual chunk is in the cache from the pass */
		kadd(&t->xx, j->f32_dd(j->xf + 4 * start, ap, n));
	} else if (j->extra) {
		f32_to_double(ap, n, A);
		kadd(&t->xx, extra_dd(j, start, n, A, X));
	}
	if (isnan(res.dd)) {
		/* NaN in r or a, or equal infinities (the float32 kernels leave d
		 * unmasked): the chunk is redone exactly through doubles */
		f32_to_double(rp, n, R);
		f32_to_double(ap, n, A);
		size_t m = compact(R, A, map, n, &t->nan, &t->nan_mismatch);
		res = (chunk_res){0, 0, 0, 0, 0, 0, t->max_rel, 0};
		etc_metrics_diff_pass_(R, A, D, m, &res);
		etc_metrics_dots_pass_(R, A, D, m, &res);
		if (m && res.max_abs > t->max_abs) {
			t->max_abs = res.max_abs;
			t->max_abs_index = start + map[etc_metrics_d_find_(D, m, res.max_abs)];
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
                        uint32_t *map, float *G)
{
	size_t w = j->stride;
	double *R = buf, *A = buf + w, *D = buf + 2 * w, *X = buf + 3 * w;
	bool f32 = (j->rf || j->rg) && j->af;
	size_t chunk = f32 ? CHUNK_F32 : CHUNK_DBL;
	if (chunk > w)
		chunk = w;
	const uint8_t *crc_from = j->fold_crc ? j->rf + 4 * begin : NULL;
	size_t crc_bytes = 0;
	memset(&sg->t, 0, sizeof sg->t);
	sg->crc = 0;
	sg->find_n = 0;
	for (uint64_t start = begin; start < end;) {
		size_t n = end - start < chunk ? (size_t)(end - start) : chunk;
		if (f32) {
			f32_chunk(j, sg, start, n, R, A, D, X, map, G);
			crc_bytes += 4 * n;
			if (j->fold_crc && (crc_bytes >= CRC_BATCH || start + n == end)) {
				sg->crc = etc_crc32(sg->crc, crc_from, crc_bytes);
				crc_from += crc_bytes;
				crc_bytes = 0;
			}
		} else {
			dbl_chunk(j, &sg->t, start, n, R, A, D, X, map);
		}
		start += n;
	}
	if (sg->find_n)
		sg->t.max_abs_index =
		    sg->find_at + etc_metrics_f32_find_(ref_f32(j, sg->find_at, sg->find_n, G),
		                                        j->af + 4 * sg->find_at, sg->find_n,
		                                        sg->t.max_abs);
}

/*
 * etc_range_fn, once per thread: takes the next TAKE segments until none
 * is left, with scratch buffers of its own. Taking them a few at a time
 * rather than a fixed share keeps both cores busy to the end when one of
 * them is slowed (by another process); TAKE segments (8 MiB of float32 per
 * side) keep each thread's pages apart (the page cache maps 2 MiB folios
 * whole, and two threads faulting one of them wait for each other). The
 * totals are per segment, so who computed one changes no bit.
 */
#define TAKE 8
static void run_segments(void *ctx, size_t first, size_t last)
{
	(void)first, (void)last;
	const job *j = ctx;
	/* sized to the job: a small comparison does not ask the allocator for
	   128 KiB (which it gets from and gives back to the kernel each time) */
	double *buf = malloc(4 * j->stride * sizeof *buf);
	uint32_t *map = malloc(j->stride * sizeof *map);
	float *G = j->rg ? malloc(j->stride * sizeof *G) : NULL;
	for (size_t taken;
	     (taken = atomic_fetch_add_explicit(j->next, TAKE, memory_order_relaxed)) < j->nseg;) {
		for (size_t s = taken; s < taken + TAKE && s < j->nseg; s++) {
			bool ok = buf && map && (G || !j->rg);
			j->segs[s].nomem = !ok;
			if (ok) {
				uint64_t begin = s * SEGMENT;
				uint64_t end =
				    j->total - begin < SEGMENT ? j->total : begin + SEGMENT;
				run_segment(j, &j->segs[s], begin, end, buf, map, G);
			}
		}
	}
	free(buf);
	free(map);
	free(G);
}

/* Adds segment b's totals to a; b comes after every segment already in a. */
static void merge(totals *a, const totals *b)
{
	kmerge(&a->rr, &b->rr);
	kmerge(&a->aa, &b->aa);
	kmerge(&a->ra, &b->ra);
	kmerge(&a->dd, &b->dd);
	kmerge(&a->l1, &b->l1);
	kmerge(&a->xx, &b->xx);
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

/* ---- tiny and huge magnitudes ---------------------------------------------- */

/*
 * The squares of float64 values below about 1e-162 underflow (to 0, or to
 * subnormals that keep few digits) and those of values above about 1e+154
 * overflow, so the sums can say "all zero" or "infinite" of finite, nonzero
 * data. The pass above runs on the raw values (the common case costs
 * nothing); its totals flag the rare comparison whose sums left the range,
 * and that one is computed again on both sides multiplied by one power of
 * two that brings the largest |value| into [0.5, 1): exact, so SNR and
 * cosine are the true ones and MSE comes back by the inverse power.
 */

/* A source read through another, each value times 2^shift. */
typedef struct scaled_src {
	const etc_values *v;
	int shift;
} scaled_src;

static void read_scaled(const void *src, uint64_t start, size_t n, double *dst)
{
	const scaled_src *s = src;
	s->v->read(s->v->src, start, n, dst);
	for (size_t i = 0; i < n; i++)
		dst[i] = ldexp(dst[i], s->shift);
}

/* Dtypes whose squares, and sums of squares, stay in the normal double
 * range (a float32 is at most 3.4e38 and at least 1.4e-45 in magnitude). */
static bool narrow(int st)
{
	return (etc_scalar_type_is_float_(st) && st != ETC_DOUBLE) || integer_like(st);
}

/* Below this a sum of squares has lost digits (or was a sum of lost ones). */
#define SUM_TINY 0x1p-900

/* Did a sum of squares (or sum |d|) of the totals leave the normal range? */
static bool out_of_range(const totals *t)
{
	double rr = ktotal(&t->rr), aa = ktotal(&t->aa), dd = ktotal(&t->dd);
	if (t->compared == 0)
		return false;
	return rr < SUM_TINY || aa < SUM_TINY || (t->mismatch && dd < SUM_TINY) || !isfinite(rr) ||
	       !isfinite(aa) || !isfinite(dd) || !isfinite(ktotal(&t->l1));
}

/* The largest |r| or |a| over the positions where neither is NaN
 * (inf if one is infinite), in *max; false when out of memory. */
static bool max_magnitude(const etc_values *reference, const etc_values *actual, double *max)
{
	double *R = malloc(2 * (size_t)CHUNK_DBL * sizeof *R), *A = R + CHUNK_DBL, m = 0;
	if (!R)
		return false;
	for (uint64_t start = 0; start < reference->count; start += CHUNK_DBL) {
		size_t n = reference->count - start < CHUNK_DBL ? (size_t)(reference->count - start)
		                                                : CHUNK_DBL;
		reference->read(reference->src, start, n, R);
		actual->read(actual->src, start, n, A);
		for (size_t i = 0; i < n; i++) {
			if (isnan(R[i]) || isnan(A[i]))
				continue;
			m = fabs(R[i]) > m ? fabs(R[i]) : m;
			m = fabs(A[i]) > m ? fabs(A[i]) : m;
		}
	}
	free(R);
	*max = m;
	return true;
}

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done,
                   const etc_values *extra, etc_metrics_sums *sums);

/*
 * The metrics that use squares, computed again on the scaled values when
 * the totals t of the raw pass left the range (out holds the raw pass's
 * metrics). Counts, max |d|, its index and max |d|/|r| stay the raw pass's
 * (no squares: exact); so does L1 when finite.
 */
static int rescale(const etc_values *reference, const etc_values *actual, const totals *t,
                   etc_metrics *out, etc_error *err)
{
	double m;
	if (!max_magnitude(reference, actual, &m))
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "etc_metrics_compare: out of memory");
	int e;
	(void)frexp(m, &e);
	/* all zero or an infinity: the raw figures are the answer; a largest
	 * value near 1: the squares were in range, only the error was tiny */
	if (m == 0 || !isfinite(m) || (e > -64 && e < 64))
		return 0;
	scaled_src rs = {reference, -e}, as = {actual, -e};
	etc_values R = {reference->count, ETC_DOUBLE, read_scaled, &rs};
	etc_values A = {actual->count, ETC_DOUBLE, read_scaled, &as};
	etc_metrics s;
	int rc = compare(&R, &A, &s, err, KERNEL_BEST, 1, NULL, NULL, NULL, NULL);
	if (rc < 0)
		return rc;
	double dd = ktotal(&t->dd);
	const unsigned sums =
	    ETC_METRICS_ZERO_REFERENCE | ETC_METRICS_ZERO_NORM | ETC_METRICS_INFINITE;
	out->snr_db = s.snr_db;
	out->cosine = s.cosine;
	if ((t->mismatch && dd < SUM_TINY) || !isfinite(dd))
		out->mse = ldexp(s.mse, 2 * e);
	if (!isfinite(out->l1))
		out->l1 = ldexp(s.l1, e);
	/* max rel: the raw one, but where a - r overflowed (values near the
	 * largest double of opposite signs) */
	if (s.notes & ETC_METRICS_ZERO_REFERENCE)
		out->max_rel = s.max_rel;
	else
		out->max_rel = !t->mismatch ? 0 : isfinite(t->max_rel) ? t->max_rel : s.max_rel;
	out->notes = (out->notes & ~sums) | (s.notes & sums);
	return 0;
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

int etc_metrics_compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                        etc_error *err)
{
	return compare(reference, actual, out, err, KERNEL_BEST, 0, NULL, NULL, NULL, NULL);
}

int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel)
{
	return compare(reference, actual, out, err, kernel, 0, NULL, NULL, NULL, NULL);
}

int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads)
{
	return compare(reference, actual, out, err, kernel, threads, NULL, NULL, NULL, NULL);
}

int etc_metrics_compare_crc_(const etc_values *reference, const etc_values *actual,
                             etc_metrics *out, uint32_t *ref_crc, bool *crc_done, etc_error *err)
{
	*crc_done = false;
	return compare(reference, actual, out, err, KERNEL_BEST, 0, ref_crc, crc_done, NULL, NULL);
}

int etc_metrics_compare_full_(const etc_values *reference, const etc_values *actual,
                              etc_metrics *out, int kernel, unsigned threads, uint32_t *ref_crc,
                              bool *crc_done, etc_error *err)
{
	if (crc_done)
		*crc_done = false;
	return compare(reference, actual, out, err, kernel, threads, ref_crc, crc_done, NULL, NULL);
}

int etc_metrics_compare_sums_(const etc_values *reference, const etc_values *actual,
                              const etc_values *extra, etc_metrics *out, etc_metrics_sums *sums,
                              int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done,
                              etc_error *err)
{
	if (!sums)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_metrics_compare: NULL argument");
	if (crc_done)
		*crc_done = false;
	return compare(reference, actual, out, err, kernel, threads, ref_crc, crc_done, extra,
	               sums);
}

static int compare(const etc_values *reference, const etc_values *actual, etc_metrics *out,
                   etc_error *err, int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done,
                   const etc_values *extra, etc_metrics_sums *sums)
{
	if (!reference || !actual || !out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_metrics_compare: NULL argument");
	if (extra &&
	    ((extra->count && !extra->read) || !has_data(extra) || extra->count != actual->count))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_metrics_compare: the extra reference has no data or %llu "
		                "elements, not %llu",
		                (unsigned long long)extra->count,
		                (unsigned long long)actual->count);
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
	j.stride = j.total < CHUNK_F32 ? (size_t)(j.total ? j.total : 1) : CHUNK_F32;
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
	/* a reference read through strides as float32 takes the float32 path
	   too: the same bits as its dense copy */
	j.rg = !j.rf && etc_values_is_f32_gather_(reference) ? reference : NULL;
	j.af = raw_f32(actual);
	if ((!j.rf && !j.rg) || !j.af)
		j.rf = j.af = NULL, j.rg = NULL;
	j.f32_pass = etc_metrics_pick_kernel_(kernel);
	j.extra = extra;
	j.xf = extra && j.af ? raw_f32(extra) : NULL;
	j.f32_dd = etc_metrics_pick_dd_(kernel);
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
		threads = nseg > 1 && known_source(reference) && known_source(actual) &&
		                  (!extra || known_source(extra))
		              ? etc_thread_count_()
		              : 1;
	atomic_size_t next = 0;
	j.nseg = nseg;
	j.next = &next;
	etc_parallel_for_(threads < nseg ? threads : nseg, threads, run_segments, &j);
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
	if (!exact && !(narrow(reference->scalar_type) && narrow(actual->scalar_type)) &&
	    reference->read != read_scaled && out_of_range(&t)) {
		int rc = rescale(reference, actual, &t, out, err);
		if (rc < 0)
			return rc;
	}
	if (sums)
		*sums = (etc_metrics_sums){ktotal(&t.rr), ktotal(&t.aa), ktotal(&t.dd),
		                           extra ? ktotal(&t.xx) : 0};
	return 0;
}
