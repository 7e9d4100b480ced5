/*
 * test_metrics.c - etc_metrics_compare against independent computations.
 *
 * The expected values of the generated data sets were computed exactly, with
 * Python's fractions.Fraction over the very same numbers, by this script
 * (/usr/bin/python3, standard library only); each function below gives the
 * line it printed:
 *
 *   import struct, math
 *   from fractions import Fraction as F
 *   class G:                                  # = next24()/gen_value() below
 *       def __init__(s, seed): s.s = seed
 *       def next24(s):
 *           s.s = (s.s * 6364136223846793005 + 1442695040888963407) % 2**64
 *           return s.s >> 40
 *       def value(s):
 *           k = s.next24() - 8388608; e = s.next24() % 8
 *           return math.ldexp(float(k), -23 - e)
 *   def f32(x): return struct.unpack('<f', struct.pack('<f', x))[0]
 *   def metrics(r, a):
 *       n = len(r); d = [F(y) - F(x) for x, y in zip(r, a)]
 *       rr = sum(F(x)**2 for x in r); aa = sum(F(x)**2 for x in a)
 *       ra = sum(F(x)*F(y) for x, y in zip(r, a)); dd = sum(x*x for x in d)
 *       mx = max(abs(x) for x in d)
 *       return dict(snr=10 * math.log10(rr / dd), mse=float(dd / n),
 *           cos=math.copysign(math.sqrt(float(ra*ra / (rr*aa))), float(ra)),
 *           l1=float(sum(abs(x) for x in d) / n), max_abs=float(mx),
 *           idx=[abs(x) for x in d].index(mx),
 *           max_rel=float(max(abs(x) / abs(F(y)) for x, y in zip(d, r) if y)),
 *           ne=sum(1 for x in d if x))
 *
 * Since every difference of two float32 (or of two float64 within a factor
 * of two) is exact in double, max_abs and max_rel must match bit for bit;
 * sums are checked to a relative 1e-12 (their order differs from Python's
 * exact sums) and SNR to 1e-9 dB.
 */
#include "check.h"
#include "tensor_view.h"

#include "etcompare/metrics.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>

/* Defined (not exported) in src/metrics.c: the comparison with a chosen
 * float32 kernel, 0 generic, 1 AVX2, 2 AVX-512, 3 best available. */
int etc_metrics_compare_kernel_(const etc_values *reference, const etc_values *actual,
                                etc_metrics *out, etc_error *err, int kernel);

#define CHECK_CLOSE(x, want, rel)                                                                  \
	do {                                                                                       \
		double check_x_ = (x), check_w_ = (want);                                          \
		check_count++;                                                                     \
		if (!(fabs(check_x_ - check_w_) <= (rel)*fabs(check_w_))) {                        \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: %.17g != %.17g (%s, rel %g)\n", __FILE__,          \
			        __LINE__, check_x_, check_w_, #x, (double)(rel));                  \
		}                                                                                  \
	} while (0)

#define CHECK_WITHIN(x, want, tol)                                                                 \
	do {                                                                                       \
		double check_x_ = (x), check_w_ = (want);                                          \
		check_count++;                                                                     \
		if (!(fabs(check_x_ - check_w_) <= (tol))) {                                       \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: %.17g != %.17g (%s, tol %g)\n", __FILE__,          \
			        __LINE__, check_x_, check_w_, #x, (double)(tol));                  \
		}                                                                                  \
	} while (0)

/* ---- data ----------------------------------------------------------------- */

static uint64_t next24(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 40;
}

/* A 24-bit integer times 2^-(23+e), e in 0..7: exact in float32. */
static double gen_value(uint64_t *s)
{
	double k = (double)next24(s) - 8388608.0;
	int e = (int)(next24(s) % 8);
	return ldexp(k, -23 - e);
}

/* A source the library does not recognize: forces the generic read path. */
static void read_via_tensor(const void *src, uint64_t start, size_t n, double *dst)
{
	etc_tensor_to_double(src, start, n, dst);
}

static void values_generic(etc_values *v, const etc_tensor *t)
{
	etc_values_from_tensor(v, t);
	v->read = read_via_tensor;
}

static etc_metrics compare(const etc_values *r, const etc_values *a)
{
	etc_metrics m;
	etc_error err;
	memset(&m, 0xAB, sizeof m);
	int rc = etc_metrics_compare(r, a, &m, &err);
	CHECK(rc == 0);
	if (rc)
		fprintf(stderr, "  %s\n", err.message);
	return m;
}

static etc_metrics compare_doubles(const double *r, const double *a, size_t n)
{
	etc_values vr, va;
	etc_values_from_doubles(&vr, r, n);
	etc_values_from_doubles(&va, a, n);
	return compare(&vr, &va);
}

/* The expected metrics of one data set (see the script above). */
typedef struct expect {
	uint64_t n;
	double snr, mse, cos, l1, max_abs;
	uint64_t idx;
	double max_rel;
	uint64_t ne;
} expect;

static void check_expect(const char *name, const etc_metrics *m, const expect *e)
{
	int before = check_failures;
	CHECK(m->count == e->n);
	CHECK_WITHIN(m->snr_db, e->snr, 1e-9);
	CHECK_CLOSE(m->mse, e->mse, 1e-12);
	CHECK_WITHIN(m->cosine, e->cos, 1e-15);
	CHECK_CLOSE(m->l1, e->l1, 1e-12);
	CHECK_DOUBLE_EXACT(m->max_abs, e->max_abs);
	CHECK(m->max_abs_index == e->idx);
	CHECK_DOUBLE_EXACT(m->max_rel, e->max_rel);
	CHECK(m->mismatch_count == e->ne);
	CHECK(!m->identical);
	CHECK(!m->exact);
	if (check_failures != before)
		fprintf(stderr, "  ... in %s\n", name);
}

/* Checks one float32 pair through every path: each float32 kernel on tensor
 * views, the generic read path, and the same values as float64. */
static void check_f32_all_paths(const char *name, const float *r, const float *a, size_t n,
                                const expect *e)
{
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_FLOAT, r, n);
	view_values(&va, &xa, ETC_FLOAT, a, n);
	char label[128];
	for (int k = 0; k <= 3; k++) {
		etc_metrics m;
		etc_error err;
		CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, &err, k) == 0);
		snprintf(label, sizeof label, "%s, float32 kernel %d", name, k);
		check_expect(label, &m, e);
	}
	values_generic(&xr, &vr.t);
	values_generic(&xa, &va.t);
	etc_metrics m = compare(&xr, &xa);
	snprintf(label, sizeof label, "%s, generic read", name);
	check_expect(label, &m, e);

	double *dr = malloc(n * sizeof *dr), *da = malloc(n * sizeof *da);
	for (size_t i = 0; i < n; i++) {
		dr[i] = r[i];
		da[i] = a[i];
	}
	m = compare_doubles(dr, da, n);
	snprintf(label, sizeof label, "%s, as float64", name);
	check_expect(label, &m, e);
	free(dr);
	free(da);
}

/* ---- generated data sets ---------------------------------------------------- */

/*
 * Near-identical float32 at 140 dB, a = f32(r (1 + 1e-7)): one or two ulps
 * apart everywhere. Printed: near32 n=100003 snr=140.02308142524666
 * mse=5.45461104772946e-16 cos=0.9999999999999997 l1=1.191000234545575e-08
 * max_abs=1.1920928955078125e-07 idx=90 max_rel=1.333331911112628e-07 ne=100003
 * Computing the error energy as r.r - 2 r.a + a.a in double would leave
 * about 1e-16 relative of 3e4, i.e. 3e-12 of noise on a true 5.5e-11.
 */
static void test_near_identical_f32(void)
{
	const size_t n = 100003;
	float *r = malloc(n * sizeof *r), *a = malloc(n * sizeof *a);
	uint64_t s = 1;
	for (size_t i = 0; i < n; i++) {
		r[i] = (float)gen_value(&s);
		a[i] = (float)((double)r[i] * (1.0 + 1e-7));
	}
	const expect e = {100003,
	                  140.02308142524666,
	                  5.45461104772946e-16,
	                  0.9999999999999997,
	                  1.191000234545575e-08,
	                  1.1920928955078125e-07,
	                  90,
	                  1.333331911112628e-07,
	                  100003};
	check_f32_all_paths("near32", r, a, n, &e);

	/* the same tensor against itself: exactly identical */
	view vr;
	view_init(&vr, ETC_FLOAT, r, n);
	etc_values x;
	etc_values_from_tensor(&x, &vr.t);
	etc_metrics m = compare(&x, &x);
	CHECK(m.identical && !m.exact && m.count == n && m.mismatch_count == 0);
	CHECK(isinf(m.snr_db) && m.snr_db > 0);
	CHECK_DOUBLE_EXACT(m.cosine, 1.0);
	CHECK_DOUBLE_EXACT(m.mse, 0.0);
	CHECK_DOUBLE_EXACT(m.l1, 0.0);
	CHECK_DOUBLE_EXACT(m.max_abs, 0.0);
	CHECK_DOUBLE_EXACT(m.max_rel, 0.0);
	CHECK(m.max_abs_index == 0 && m.notes == 0 && m.nan_count == 0);
	free(r);
	free(a);
}

/*
 * float32 with every 7th reference 0 (the actual is not: relative error
 * must skip those) and a = f32(r + u), u = (next24 - 2^23) / 2^33.
 * Printed: mid32 n=5000 snr=51.54822021234299 mse=3.1573499601707777e-07
 * cos=0.9999964996336357 l1=0.00048687637022230774
 * max_abs=0.0009765271097421646 idx=155 max_rel=77.34166666666667 ne=5000
 */
static void test_mid_f32(void)
{
	const size_t n = 5000;
	float r[5000], a[5000];
	uint64_t s = 2;
	for (size_t i = 0; i < n; i++) {
		double x = gen_value(&s);
		double u = ((double)next24(&s) - 8388608.0) / 8589934592.0;
		if (i % 7 == 0)
			x = 0;
		r[i] = (float)x;
		a[i] = (float)(x + u);
	}
	const expect e = {5000,
	                  51.54822021234299,
	                  3.1573499601707777e-07,
	                  0.9999964996336357,
	                  0.00048687637022230774,
	                  0.0009765271097421646,
	                  155,
	                  77.34166666666667,
	                  5000};
	check_f32_all_paths("mid32", r, a, n, &e);
}

/*
 * float64 at 240 dB, a = r (1 + 1e-12) in double: far beyond anything a
 * float32 accumulation (or the r.r - 2 r.a + a.a expansion) could resolve.
 * Printed: near64 n=4099 snr=239.99924954377786 mse=5.424965829794172e-26
 * cos=1.0 l1=1.225638976792477e-13 max_abs=9.985345883478658e-13 idx=2989
 * max_rel=1.000197367784161e-12 ne=4099
 */
static void test_near_identical_f64(void)
{
	const size_t n = 4099;
	double r[4099], a[4099];
	uint64_t s = 3;
	for (size_t i = 0; i < n; i++) {
		r[i] = gen_value(&s);
		a[i] = r[i] * (1.0 + 1e-12);
	}
	const expect e = {4099, 239.99924954377786,    5.424965829794172e-26,
	                  1.0,  1.225638976792477e-13, 9.985345883478658e-13,
	                  2989, 1.000197367784161e-12, 4099};
	etc_metrics m = compare_doubles(r, a, n);
	check_expect("near64", &m, &e);
	/* and as a float64 tensor view */
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_DOUBLE, r, n);
	view_values(&va, &xa, ETC_DOUBLE, a, n);
	m = compare(&xr, &xa);
	check_expect("near64 tensor", &m, &e);
}

/*
 * NaN: a = f32(r + u), u = (next24 - 2^23) / 2^41; NaN at r[1500] and
 * a[1500] (both: excluded), a[1501] and r[2999] (one side: excluded and
 * counted as NaN mismatches); the largest error at 1502 (a = f32(r + 0.5)),
 * after the NaNs in its chunk, so its flat index goes through the map.
 * Printed over the 2997 non-NaN positions: nan32 n=2997
 * snr=28.220623872574283 mse=8.341675985691253e-05 cos=0.9992478518773723
 * l1=0.00016872800012552282 max_abs=0.5000000149011612 idx=1502
 * max_rel=11.968666923724186 ne=2994
 */
static void test_nan(void)
{
	const size_t n = 3000;
	float r[3000], a[3000];
	uint64_t s = 4;
	for (size_t i = 0; i < n; i++) {
		r[i] = (float)gen_value(&s);
		double u = ((double)next24(&s) - 8388608.0) / 2199023255552.0;
		a[i] = (float)((double)r[i] + u);
	}
	a[1502] = (float)((double)r[1502] + 0.5);
	r[1500] = a[1500] = a[1501] = r[2999] = NAN;
	const expect e = {2997,
	                  28.220623872574283,
	                  8.341675985691253e-05,
	                  0.9992478518773723,
	                  0.00016872800012552282,
	                  0.5000000149011612,
	                  1502,
	                  11.968666923724186,
	                  2994};
	check_f32_all_paths("nan32", r, a, n, &e);
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_FLOAT, r, n);
	view_values(&va, &xa, ETC_FLOAT, a, n);
	etc_metrics m = compare(&xr, &xa);
	CHECK(m.nan_count == 3 && m.nan_mismatch_count == 2);
	CHECK(m.notes == (ETC_METRICS_NAN | ETC_METRICS_NAN_MISMATCH));

	/* NaN at the same positions only: identical */
	float q[5] = {1, NAN, 3, NAN, 5};
	view vq;
	view_init(&vq, ETC_FLOAT, q, 5);
	etc_values_from_tensor(&xr, &vq.t);
	m = compare(&xr, &xr);
	CHECK(m.identical && m.count == 3 && m.nan_count == 2 && m.nan_mismatch_count == 0);
	CHECK(m.notes == ETC_METRICS_NAN && isinf(m.snr_db) && m.cosine == 1);

	/* nothing left to compare */
	double nr[2] = {NAN, NAN}, na[2] = {NAN, 1};
	m = compare_doubles(nr, na, 2);
	CHECK(m.count == 0 && m.nan_count == 2 && m.nan_mismatch_count == 1 && !m.identical);
	CHECK(m.notes == (ETC_METRICS_EMPTY | ETC_METRICS_NAN | ETC_METRICS_NAN_MISMATCH));
	CHECK(isnan(m.snr_db) && isnan(m.mse) && isnan(m.cosine) && isnan(m.l1));
	CHECK(m.max_abs == 0 && m.max_rel == 0);
}

/* ---- hand-made cases ------------------------------------------------------ */

/*
 * r = {1, 2, 3, 4}, a = {1.5, 2, 2, 4.25}: d = {0.5, 0, -1, 0.25},
 * d.d = 1.3125, r.r = 30, a.a = 28.3125, r.a = 28.5. Printed: small n=4
 * snr=13.59021942641668 (10 log10(30/1.3125)) mse=0.328125
 * cos=0.9779015240444596 l1=0.4375 max_abs=1.0 idx=2 max_rel=0.5 ne=3
 */
static void test_small(void)
{
	const double r[] = {1, 2, 3, 4}, a[] = {1.5, 2, 2, 4.25};
	etc_metrics m = compare_doubles(r, a, 4);
	const expect e = {4, 13.59021942641668, 0.328125, 0.9779015240444596, 0.4375, 1.0, 2, 0.5,
	                  3};
	check_expect("small", &m, &e);
	CHECK(m.notes == 0 && m.nan_count == 0);
}

/* Encodes 0/1 values as `st` (little-endian). */
static void encode01(int st, const int *v, size_t n, uint8_t *out)
{
	size_t esz = etc_scalar_type_size(st);
	memset(out, 0, n * esz);
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = out + i * esz;
		if (!v[i])
			continue;
		switch (st) {
		case ETC_HALF: /* 1.0 = 0x3C00 */
			p[1] = 0x3C;
			break;
		case ETC_BFLOAT16: /* 1.0 = 0x3F80 */
			p[0] = 0x80, p[1] = 0x3F;
			break;
		case ETC_FLOAT: /* 0x3F800000 */
			p[2] = 0x80, p[3] = 0x3F;
			break;
		case ETC_DOUBLE: /* 0x3FF0000000000000 */
			p[6] = 0xF0, p[7] = 0x3F;
			break;
		default: /* every integer kind and bool */
			p[0] = 1;
		}
	}
}

/*
 * Every dtype pair on 0/1 data: r = {0,1,1,0,1,0,0,1,1,1},
 * a = {0,1,0,0,1,1,0,1,1,0}; d = {0,0,-1,0,0,1,0,0,0,-1}, r.r = 6, d.d = 3,
 * a.a = 5, r.a = 4. Printed: bits n=10 snr=3.010299956639812 (10 log10 2)
 * mse=0.3 cos=0.7302967433402214 (4/sqrt(30)) l1=0.3 max_abs=1.0 idx=2
 * max_rel=1.0 ne=3. exact exactly when both sides are integer-like.
 */
static void test_dtype_pairs(void)
{
	static const int types[] = {ETC_FLOAT,  ETC_HALF,   ETC_BFLOAT16, ETC_DOUBLE, ETC_CHAR,
	                            ETC_SHORT,  ETC_INT,    ETC_LONG,     ETC_BYTE,   ETC_BOOL,
	                            ETC_UINT16, ETC_UINT32, ETC_UINT64};
	static const bool integer[] = {false, false, false, false, true, true, true,
	                               true,  true,  true,  true,  true, true};
	static const int r01[10] = {0, 1, 1, 0, 1, 0, 0, 1, 1, 1};
	static const int a01[10] = {0, 1, 0, 0, 1, 1, 0, 1, 1, 0};
	const size_t nt = sizeof types / sizeof types[0];
	for (size_t i = 0; i < nt; i++) {
		for (size_t j = 0; j < nt; j++) {
			uint8_t rb[80], ab[80];
			encode01(types[i], r01, 10, rb);
			encode01(types[j], a01, 10, ab);
			view vr, va;
			etc_values xr, xa;
			view_values(&vr, &xr, types[i], rb, 10);
			view_values(&va, &xa, types[j], ab, 10);
			etc_metrics m = compare(&xr, &xa);
			int before = check_failures;
			CHECK(m.count == 10 && m.mismatch_count == 3 && !m.identical);
			CHECK(m.exact == (integer[i] && integer[j]));
			CHECK_WITHIN(m.snr_db, 3.010299956639812, 1e-12);
			CHECK_DOUBLE_EXACT(m.mse, 0.3);
			CHECK_DOUBLE_EXACT(m.l1, 0.3);
			CHECK_WITHIN(m.cosine, 0.7302967433402214, 1e-15);
			CHECK_DOUBLE_EXACT(m.max_abs, 1.0);
			CHECK(m.max_abs_index == 2);
			CHECK_DOUBLE_EXACT(m.max_rel, 1.0);
			CHECK(m.notes == 0);
			/* each side against itself */
			m = compare(&xr, &xr);
			CHECK(m.identical && m.exact == integer[i] && isinf(m.snr_db));
			if (check_failures != before)
				fprintf(stderr, "  ... in %s vs %s\n",
				        etc_scalar_type_name(types[i]),
				        etc_scalar_type_name(types[j]));
		}
	}
}

static etc_metrics compare_raw(int st, const void *r, const void *a, size_t n)
{
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, st, r, n);
	view_values(&va, &xa, st, a, n);
	return compare(&xr, &xa);
}

/* Integer kinds at their extremes: exact counts, exact differences. */
static void test_integers(void)
{
	/* int8: d = {255, -255, 0, 0}; max rel 255/127 (r = 127) beats 255/128 */
	const int8_t r8[] = {-128, 127, 0, 5}, a8[] = {127, -128, 0, 5};
	etc_metrics m = compare_raw(ETC_CHAR, r8, a8, 4);
	CHECK(m.exact && !m.identical && m.mismatch_count == 2 && m.count == 4);
	CHECK_DOUBLE_EXACT(m.max_abs, 255.0);
	CHECK(m.max_abs_index == 0);
	CHECK_DOUBLE_EXACT(m.max_rel, 255.0 / 127.0);
	CHECK_DOUBLE_EXACT(m.mse, 2.0 * 65025.0 / 4.0);
	CHECK_DOUBLE_EXACT(m.l1, 510.0 / 4.0);

	/* uint8: d = {-255, 255, 0}; relative only where r != 0: 255/255 */
	const uint8_t ru8[] = {255, 0, 10}, au8[] = {0, 255, 10};
	m = compare_raw(ETC_BYTE, ru8, au8, 3);
	CHECK(m.exact && m.mismatch_count == 2);
	CHECK_DOUBLE_EXACT(m.max_rel, 1.0);
	CHECK_DOUBLE_EXACT(m.mse, 2.0 * 65025.0 / 3.0);

	/* int32: d = {2^32 - 1, -(2^32 - 1)} */
	const int32_t r32[] = {INT32_MIN, INT32_MAX}, a32[] = {INT32_MAX, INT32_MIN};
	m = compare_raw(ETC_INT, r32, a32, 2);
	CHECK(m.exact && m.mismatch_count == 2);
	CHECK_DOUBLE_EXACT(m.max_abs, 4294967295.0);
	CHECK(m.max_abs_index == 0);

	/* int64 beyond 2^53, compared bit-exactly: 2^60+1 vs 2^60 differ by 1;
	 * INT64_MIN vs INT64_MAX by 2^64 - 1, which rounds to 2^64 */
	const int64_t r64[] = {((int64_t)1 << 60) + 1, -5, INT64_MIN};
	const int64_t a64[] = {(int64_t)1 << 60, -5, INT64_MAX};
	m = compare_raw(ETC_LONG, r64, a64, 3);
	CHECK(m.exact && !m.identical && m.mismatch_count == 2 && m.notes == 0);
	CHECK_DOUBLE_EXACT(m.max_abs, 18446744073709551616.0);
	CHECK(m.max_abs_index == 2);
	m = compare_raw(ETC_LONG, r64, a64, 1);
	CHECK(m.mismatch_count == 1 && m.max_abs == 1.0 && !m.identical);
	m = compare_raw(ETC_LONG, r64, r64, 3);
	CHECK(m.identical && m.exact && isinf(m.snr_db) && m.cosine == 1);

	/* ... and through an unknown source: rounded to double, and said so */
	view vr, va;
	view_init(&vr, ETC_LONG, r64, 1);
	view_init(&va, ETC_LONG, a64, 1);
	etc_values xr, xa;
	values_generic(&xr, &vr.t);
	values_generic(&xa, &va.t);
	m = compare(&xr, &xa);
	CHECK(m.exact && m.mismatch_count == 0 && m.notes == ETC_METRICS_ROUNDED);

	/* uint64: d = -(2^64 - 1) */
	const uint64_t ru64[] = {UINT64_MAX, 7}, au64[] = {0, 7};
	m = compare_raw(ETC_UINT64, ru64, au64, 2);
	CHECK(m.exact && m.mismatch_count == 1);
	CHECK_DOUBLE_EXACT(m.max_abs, 18446744073709551616.0);
	CHECK_DOUBLE_EXACT(m.max_rel, 1.0);

	/* bool: any non-zero byte is true */
	const uint8_t rb[] = {0, 1, 2}, ab[] = {0, 1, 1};
	m = compare_raw(ETC_BOOL, rb, ab, 3);
	CHECK(m.exact && m.identical && m.mismatch_count == 0);

	/* int64 reference, int32 actual: exact, through double, nothing rounded */
	const int32_t a32b[] = {3, -4};
	const int64_t r64b[] = {3, -5};
	view_values(&vr, &xr, ETC_LONG, r64b, 2);
	view_values(&va, &xa, ETC_INT, a32b, 2);
	m = compare(&xr, &xa);
	CHECK(m.exact && m.mismatch_count == 1 && m.max_abs == 1.0 && m.max_abs_index == 1);
	CHECK(m.notes == 0);
}

/*
 * The 16-bit floats through their fast conversions (16 elements: the vector
 * loop and the tail): half bits and their values by the format (1.5.10, bias
 * 15): 0x3C00 1, 0xC000 -2, 0x0001 2^-24 (subnormal), 0x03FF 1023 2^-24,
 * 0x7BFF 65504, 0x3555 0.333251953125, 0x8000 -0, 0x7C00 inf, 0xFC00 -inf,
 * 0x3C01 1 + 2^-10, 0x5640 100, 0x0400 2^-14, 0xBC00 -1, 0x4248 3.140625,
 * 0x2E66 0.0999755859375, 0x6400 1024. bfloat16 (1.8.7): the top half of
 * float32: 0x3F80 1, 0xC000 -2, 0x0001 2^-133 (subnormal), 0x7F7F
 * 3.3895313892515355e38, 0x3EAB 0.333984375, 0x8000 -0, 0x7F80 inf, 0xFF80
 * -inf, 0x3F81 1.0078125, 0x42C8 100, 0x0080 2^-126, 0xBF80 -1, 0x4049
 * 3.140625, 0x3DCD 0.10009765625, 0x4480 1024, 0x3C00 2^-7.
 */
static void test_half_bfloat16(void)
{
	static const uint16_t hb[16] = {0x3C00, 0xC000, 0x0001, 0x03FF, 0x7BFF, 0x3555,
	                                0x8000, 0x7C00, 0xFC00, 0x3C01, 0x5640, 0x0400,
	                                0xBC00, 0x4248, 0x2E66, 0x6400};
	const double hv[16] = {1,
	                       -2,
	                       ldexp(1, -24),
	                       ldexp(1023, -24),
	                       65504,
	                       0.333251953125,
	                       -0.0,
	                       INFINITY,
	                       -INFINITY,
	                       1 + ldexp(1, -10),
	                       100,
	                       ldexp(1, -14),
	                       -1,
	                       3.140625,
	                       0.0999755859375,
	                       1024};
	static const uint16_t bb[16] = {0x3F80, 0xC000, 0x0001, 0x7F7F, 0x3EAB, 0x8000,
	                                0x7F80, 0xFF80, 0x3F81, 0x42C8, 0x0080, 0xBF80,
	                                0x4049, 0x3DCD, 0x4480, 0x3C00};
	const double bv[16] = {1,
	                       -2,
	                       ldexp(1, -133),
	                       3.3895313892515355e38,
	                       0.333984375,
	                       -0.0,
	                       INFINITY,
	                       -INFINITY,
	                       1.0078125,
	                       100,
	                       ldexp(1, -126),
	                       -1,
	                       3.140625,
	                       0.10009765625,
	                       1024,
	                       ldexp(1, -7)};
	uint8_t hbytes[32], bbytes[32];
	for (int i = 0; i < 16; i++) {
		hbytes[2 * i] = (uint8_t)hb[i], hbytes[2 * i + 1] = (uint8_t)(hb[i] >> 8);
		bbytes[2 * i] = (uint8_t)bb[i], bbytes[2 * i + 1] = (uint8_t)(bb[i] >> 8);
	}
	view vh, vb;
	etc_values xh, xb, dh, db;
	view_values(&vh, &xh, ETC_HALF, hbytes, 16);
	view_values(&vb, &xb, ETC_BFLOAT16, bbytes, 16);
	etc_values_from_doubles(&dh, hv, 16);
	etc_values_from_doubles(&db, bv, 16);
	etc_metrics m = compare(&xh, &dh);
	CHECK(m.identical && m.count == 16 && m.mismatch_count == 0 && !m.exact);
	m = compare(&xb, &db);
	CHECK(m.identical && m.count == 16 && m.mismatch_count == 0);
	/* every element read back, position by position, against the format */
	for (size_t n = 1; n <= 16; n++) {
		double h[16], b[16];
		xh.read(xh.src, 0, n, h);
		xb.read(xb.src, 0, n, b);
		for (size_t i = 0; i < n; i++) {
			CHECK_DOUBLE_EXACT(h[i], hv[i]);
			CHECK_DOUBLE_EXACT(b[i], bv[i]);
			CHECK(signbit(h[i]) == signbit(hv[i]) && signbit(b[i]) == signbit(bv[i]));
		}
	}
	/* one half-ulp step at 1.0 (index 9 is 1 + 2^-10 against 1) */
	double shifted[16];
	memcpy(shifted, hv, sizeof shifted);
	shifted[9] = 1;
	etc_values_from_doubles(&dh, shifted, 16);
	m = compare(&dh, &xh);
	CHECK(m.mismatch_count == 1 && m.max_abs == ldexp(1, -10) && m.max_abs_index == 9);
}

/* Exact cases: zero reference, zero actual, both zero, signed zeros, empty. */
static void test_zeros(void)
{
	const double z[5] = {0, 0, 0, 0, 0}, a[5] = {0, 0, 1, 0, -2};
	etc_metrics m = compare_doubles(z, a, 5);
	CHECK(isinf(m.snr_db) && m.snr_db < 0);
	CHECK(m.notes == (ETC_METRICS_ZERO_REFERENCE | ETC_METRICS_ZERO_NORM));
	CHECK(isnan(m.cosine) && isnan(m.max_rel) && !m.identical);
	CHECK_DOUBLE_EXACT(m.mse, 1.0);
	CHECK_DOUBLE_EXACT(m.l1, 0.6);
	CHECK(m.max_abs == 2 && m.max_abs_index == 4 && m.mismatch_count == 2);

	/* actual all zero: d = -r, so SNR is exactly 0 dB; cosine undefined */
	m = compare_doubles(a, z, 5);
	CHECK_DOUBLE_EXACT(m.snr_db, 0.0);
	CHECK(m.notes == ETC_METRICS_ZERO_NORM && isnan(m.cosine));
	CHECK_DOUBLE_EXACT(m.max_rel, 1.0);

	/* both zero (signs aside): identical, SNR NaN (0/0), cosine 1 by definition */
	const double nz[5] = {-0.0, 0, -0.0, 0, 0};
	m = compare_doubles(z, nz, 5);
	CHECK(m.identical && isnan(m.snr_db) && m.cosine == 1 && m.mse == 0);
	CHECK(m.notes == (ETC_METRICS_ZERO_REFERENCE | ETC_METRICS_ZERO_NORM));

	/* empty */
	m = compare_doubles(z, a, 0);
	CHECK(m.count == 0 && m.identical && m.notes == ETC_METRICS_EMPTY && isnan(m.snr_db));
}

/* Infinities: equal ones are no error; others make the sums infinite. */
static void test_infinities(void)
{
	const double r[3] = {INFINITY, 1, -INFINITY}, a[3] = {INFINITY, 2, -INFINITY};
	etc_metrics m = compare_doubles(r, a, 3);
	CHECK(m.mismatch_count == 1 && m.max_abs == 1 && m.max_abs_index == 1);
	CHECK_DOUBLE_EXACT(m.mse, 1.0 / 3.0);
	CHECK_DOUBLE_EXACT(m.max_rel, 1.0);
	CHECK(isinf(m.snr_db) && m.snr_db > 0 && (m.notes & ETC_METRICS_INFINITE));
	m = compare_doubles(r, r, 3);
	CHECK(m.identical && m.cosine == 1 && m.notes == ETC_METRICS_INFINITE);

	const double r2[2] = {1, 2}, a2[2] = {INFINITY, 2};
	m = compare_doubles(r2, a2, 2);
	CHECK(isinf(m.mse) && isinf(m.snr_db) && m.snr_db < 0 && m.max_abs_index == 0);
	CHECK(m.notes == ETC_METRICS_INFINITE);
}

/* A strided torch.save tensor: the transpose of a 4x3 float32 storage. */
static void test_pytensor(void)
{
	float storage[12];
	for (int i = 0; i < 12; i++)
		storage[i] = (float)i;
	/* sizes (3, 4), strides (1, 3): element (j, i) is storage[3 i + j] */
	static const uint8_t sizes[16] = {3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t strides[16] = {1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
	etc_pytensor pt;
	memset(&pt, 0, sizeof pt);
	pt.tensor.scalar_type = ETC_FLOAT;
	pt.tensor.ndim = pt.tensor.nstrides = 2;
	pt.tensor.sizes_le = sizes;
	pt.tensor.strides_le = strides;
	pt.tensor.numel = 12;
	pt.tensor.nbytes = 48;
	pt.tensor.offset = -1;
	pt.storage = (const uint8_t *)storage;
	pt.storage_nbytes = sizeof storage;
	pt.contiguous = false;

	float dense[12];
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 4; i++)
			dense[4 * j + i] = (float)(3 * i + j);
	view vd;
	view_init(&vd, ETC_FLOAT, dense, 12);
	etc_values xp, xd;
	etc_values_from_pytensor(&xp, &pt);
	etc_values_from_tensor(&xd, &vd.t);
	CHECK(xp.count == 12 && xp.scalar_type == ETC_FLOAT);
	etc_metrics m = compare(&xd, &xp);
	CHECK(m.identical && m.count == 12);

	/* storage[3*2 + 1] is (j=1, i=2): flat index 1*4 + 2 = 6 */
	storage[7] += 0.5f;
	m = compare(&xd, &xp);
	CHECK(m.mismatch_count == 1 && m.max_abs_index == 6 && m.max_abs == 0.5);
	CHECK_DOUBLE_EXACT(m.max_rel, 0.5 / 7.0);

	/* a contiguous pytensor (data set) takes the float32 fast path */
	etc_pytensor pc = pt;
	static const uint8_t sizes1[8] = {12, 0, 0, 0, 0, 0, 0, 0};
	static const uint8_t strides1[8] = {1, 0, 0, 0, 0, 0, 0, 0};
	pc.tensor.ndim = pc.tensor.nstrides = 1;
	pc.tensor.sizes_le = sizes1;
	pc.tensor.strides_le = strides1;
	pc.tensor.data = (const uint8_t *)storage;
	pc.contiguous = true;
	etc_values xc;
	etc_values_from_pytensor(&xc, &pc);
	m = compare(&xc, &xc);
	CHECK(m.identical && m.count == 12);
	m = compare(&xp, &xc);
	CHECK(!m.identical && m.count == 12);
}

static void test_errors(void)
{
	const double r[4] = {1, 2, 3, 4};
	etc_values a, b;
	etc_values_from_doubles(&a, r, 3);
	etc_values_from_doubles(&b, r, 4);
	etc_metrics m;
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_metrics_compare(&a, &b, &m, &err) == ETC_ERR_MISMATCH);
	CHECK(err.status == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "reference has 3 elements") != NULL);
	CHECK(strstr(err.message, "actual output 4") != NULL);
	CHECK(etc_metrics_compare(&a, &b, &m, NULL) == ETC_ERR_MISMATCH);
	CHECK(etc_metrics_compare(NULL, &b, &m, &err) == ETC_ERR_USAGE);
	CHECK(etc_metrics_compare(&a, &a, NULL, &err) == ETC_ERR_USAGE);
	b.count = 3;
	b.read = NULL;
	CHECK(etc_metrics_compare(&a, &b, &m, &err) == ETC_ERR_USAGE);
	/* a tensor view without data */
	view v;
	view_init(&v, ETC_FLOAT, NULL, 3);
	etc_values_from_tensor(&b, &v.t);
	CHECK(etc_metrics_compare(&a, &b, &m, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "actual tensor has no data") != NULL);

	CHECK_STR(etc_metrics_note_str(0), "");
	CHECK_STR(etc_metrics_note_str(1u << 20), "unknown note");
	for (unsigned bit = 1; bit <= ETC_METRICS_ROUNDED; bit <<= 1) {
		CHECK(strlen(etc_metrics_note_str(bit)) > 0);
		CHECK(strcmp(etc_metrics_note_str(bit), "unknown note") != 0);
	}
}

/*
 * The relative-error screen of the kernels: a chunk of 1024 in which the
 * largest ratio sits in every lane position in turn, behind ever larger
 * decoys, must find it through every kernel.
 */
static void test_rel_lanes(void)
{
	float r[1040], a[1040];
	for (size_t lane = 0; lane < 32; lane++) {
		for (size_t i = 0; i < 1040; i++) {
			r[i] = 1.0f + (float)(i % 5);
			a[i] = r[i] + (float)i / 65536.0f; /* rel grows with i */
		}
		size_t at = 512 + lane;
		r[at] = 0.25f;
		a[at] = 0.75f; /* rel 2, far above every other */
		view vr, va;
		etc_values xr, xa;
		view_values(&vr, &xr, ETC_FLOAT, r, 1040);
		view_values(&va, &xa, ETC_FLOAT, a, 1040);
		for (int k = 0; k <= 3; k++) {
			etc_metrics m;
			CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, NULL, k) == 0);
			CHECK_DOUBLE_EXACT(m.max_rel, 2.0);
			CHECK(m.max_abs == 0.5 && m.max_abs_index == at);
		}
	}
}

/* max |d|, its index, max |d|/|r| and the count of d != 0 of float32 data,
 * computed one element at a time as the definitions say. */
static void scalar_extremes(const float *r, const float *a, size_t n, double *max_abs,
                            uint64_t *idx, double *max_rel, uint64_t *ne)
{
	*max_abs = *max_rel = 0;
	*idx = *ne = 0;
	for (size_t i = 0; i < n; i++) {
		double x = r[i], y = a[i], d = fabs(y - x);
		if (y == x)
			continue;
		(*ne)++;
		if (d > *max_abs) {
			*max_abs = d;
			*idx = i;
		}
		if (x != 0 && d / fabs(x) > *max_rel)
			*max_rel = d / fabs(x);
	}
}

/* Checks max |d|, its index, max rel and the mismatch count of every kernel
 * against scalar_extremes, bit for bit. */
static void check_extremes(const char *name, const float *r, const float *a, size_t n)
{
	double max_abs, max_rel;
	uint64_t idx, ne;
	scalar_extremes(r, a, n, &max_abs, &idx, &max_rel, &ne);
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_FLOAT, r, n);
	view_values(&va, &xa, ETC_FLOAT, a, n);
	for (int k = 0; k <= 3; k++) {
		etc_metrics m;
		int before = check_failures;
		CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, NULL, k) == 0);
		CHECK_DOUBLE_EXACT(m.max_rel, max_rel);
		CHECK_DOUBLE_EXACT(m.max_abs, max_abs);
		CHECK(m.max_abs_index == idx && m.mismatch_count == ne);
		if (check_failures != before)
			fprintf(stderr, "  ... in %s, float32 kernel %d\n", name, k);
	}
}

/*
 * The AVX2 kernel screens the relative error on float32 lanes, so it must
 * not miss a raise where float32 rounding is tightest: ratios that rise by
 * one float32 ulp at a time (each element raises max rel a little), a
 * subnormal pair whose ratio exceeds the running one by less than the
 * rounding of the float32 product (the screen's tie), r == 0 beside
 * nonzero a, differences that overflow float32, and random data of every
 * exponent, subnormals included.
 */
static void test_rel_screen(void)
{
	enum { N = 4099 };
	float *r = malloc(N * sizeof *r), *a = malloc(N * sizeof *a);
	/* r descends through [1, 2) by one ulp, a = r + ulp: d/r rises */
	for (size_t i = 0; i < N; i++) {
		r[i] = 2.0f - (float)(i + 1) * 0x1p-23f;
		a[i] = nextafterf(r[i], 4.0f);
	}
	check_extremes("rising ratios", r, a, N);
	/* a ratio just below 1/3, then exactly 1/3 from subnormals */
	for (size_t i = 0; i < N; i++)
		r[i] = a[i] = 1.0f;
	r[100] = 3.0f;
	a[100] = nextafterf(4.0f, 0.0f);
	r[1000] = 3 * 0x1p-149f;
	a[1000] = 4 * 0x1p-149f;
	r[1001] = 0.0f; /* a != 0 where r == 0: no ratio */
	a[1001] = 1e30f;
	check_extremes("subnormal tie", r, a, N);
	/* random signs, exponents and mantissas; a near r or anywhere */
	uint64_t s = 11;
	for (size_t i = 0; i < N; i++) {
		uint32_t u = (uint32_t)next24(&s) << 8 | (uint32_t)(next24(&s) & 0xff);
		if ((u & 0x7f000000u) == 0x7f000000u)
			u &= 0xbfffffffu; /* below 2^127: no infinity or NaN, in a either */
		memcpy(&r[i], &u, 4);
		uint64_t how = next24(&s) % 4;
		if (how == 0)
			r[i] = 0.0f;
		a[i] = how == 1   ? nextafterf(r[i], INFINITY)
		       : how == 2 ? r[i] * (1.0f + (float)next24(&s) * 0x1p-40f)
		                  : (float)gen_value(&s);
	}
	r[2000] = -FLT_MAX; /* a - r overflows float32 */
	a[2000] = FLT_MAX;
	check_extremes("random exponents", r, a, N);
	free(r);
	free(a);
}

/*
 * Equal infinities are no error in the float32 kernels either (the AVX2
 * kernel subtracts unmasked and redoes such a chunk); unequal ones make the
 * sums infinite.
 */
static void test_infinities_f32(void)
{
	enum { N = 40 };
	float r[N], a[N];
	for (size_t i = 0; i < N; i++)
		r[i] = a[i] = (float)i - 20.0f;
	r[3] = a[3] = INFINITY;
	r[17] = a[17] = -INFINITY;
	a[9] = 1.5f; /* r[9] = -11: d = 12.5 */
	view vr, va;
	etc_values xr, xa;
	view_values(&vr, &xr, ETC_FLOAT, r, N);
	view_values(&va, &xa, ETC_FLOAT, a, N);
	for (int k = 0; k <= 3; k++) {
		etc_metrics m;
		CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, NULL, k) == 0);
		CHECK(m.mismatch_count == 1 && m.max_abs == 12.5 && m.max_abs_index == 9);
		CHECK_DOUBLE_EXACT(m.mse, 12.5 * 12.5 / N);
		CHECK_DOUBLE_EXACT(m.l1, 12.5 / N);
		CHECK_DOUBLE_EXACT(m.max_rel, 12.5 / 11);
		CHECK(m.nan_count == 0 && (m.notes & ETC_METRICS_INFINITE));
	}
	a[30] = INFINITY; /* r[30] = 10 */
	for (int k = 0; k <= 3; k++) {
		etc_metrics m;
		CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, NULL, k) == 0);
		CHECK(m.mismatch_count == 2 && isinf(m.max_abs) && m.max_abs_index == 30);
		CHECK(isinf(m.mse) && isnan(m.snr_db)); /* r.r is infinite too */
	}
}

/* Misaligned float32 data (debug buffers need not align tensors): the same
 * metrics, bit for bit, as the aligned copy, through every kernel. */
static void test_misaligned(void)
{
	const size_t n = 2500;
	float *r = malloc(n * sizeof *r), *a = malloc(n * sizeof *a);
	uint8_t *buf = malloc(8 * n + 8);
	uint64_t s = 5;
	for (size_t i = 0; i < n; i++) {
		r[i] = (float)gen_value(&s);
		a[i] = (float)((double)r[i] + ((double)next24(&s) - 8388608.0) / 2199023255552.0);
	}
	memcpy(buf + 1, r, 4 * n);
	memcpy(buf + 4 * n + 7, a, 4 * n);
	view vr, va, ur, ua;
	view_init(&vr, ETC_FLOAT, r, n);
	view_init(&va, ETC_FLOAT, a, n);
	view_init(&ur, ETC_FLOAT, buf + 1, n);
	view_init(&ua, ETC_FLOAT, buf + 4 * n + 7, n);
	etc_values xr, xa, yr, ya;
	etc_values_from_tensor(&xr, &vr.t);
	etc_values_from_tensor(&xa, &va.t);
	etc_values_from_tensor(&yr, &ur.t);
	etc_values_from_tensor(&ya, &ua.t);
	for (int k = 0; k <= 3; k++) {
		etc_metrics m1, m2;
		CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m1, NULL, k) == 0);
		CHECK(etc_metrics_compare_kernel_(&yr, &ya, &m2, NULL, k) == 0);
		CHECK_DOUBLE_EXACT(m1.snr_db, m2.snr_db);
		CHECK_DOUBLE_EXACT(m1.mse, m2.mse);
		CHECK_DOUBLE_EXACT(m1.cosine, m2.cosine);
		CHECK_DOUBLE_EXACT(m1.l1, m2.l1);
		CHECK_DOUBLE_EXACT(m1.max_abs, m2.max_abs);
		CHECK_DOUBLE_EXACT(m1.max_rel, m2.max_rel);
		CHECK(m1.max_abs_index == m2.max_abs_index &&
		      m1.mismatch_count == m2.mismatch_count);
		CHECK(m1.count == n && !m1.identical);
	}
	free(r);
	free(a);
	free(buf);
}

/* ---- tiny and huge magnitudes ------------------------------------------------ */

/* The metrics of n doubles in long double (x86: 15-bit exponent, so no
 * square of a double underflows or overflows): the test's own reference. */
typedef struct ld_expect {
	double snr, mse, cos, l1, max_rel;
} ld_expect;

static ld_expect ld_metrics(const double *r, const double *a, size_t n)
{
	long double rr = 0, aa = 0, ra = 0, dd = 0, l1 = 0, rel = 0;
	for (size_t i = 0; i < n; i++) {
		long double x = r[i], y = a[i], d = y - x;
		rr += x * x;
		aa += y * y;
		ra += x * y;
		dd += d * d;
		l1 += fabsl(d);
		if (x != 0 && fabsl(d) / fabsl(x) > rel)
			rel = fabsl(d) / fabsl(x);
	}
	ld_expect e = {(double)(10 * log10l(rr / dd)), (double)(dd / n),
	               (double)(ra / (sqrtl(rr) * sqrtl(aa))), (double)(l1 / n), (double)rel};
	return e;
}

/* Within rel of want, or both within a few subnormal steps (a result
 * beyond the double range is rounded once more there). */
static bool close_or_tiny(double x, double want, double rel)
{
	return fabs(x - want) <= rel * fabs(want) || fabs(x - want) <= 4 * DBL_TRUE_MIN ||
	       (isinf(x) && isinf(want) && (x > 0) == (want > 0));
}

static void check_scaled(const char *name, const etc_metrics *m, const etc_metrics *unit,
                         const double *r, const double *a, size_t n, int k)
{
	int before = check_failures;
	ld_expect e = ld_metrics(r, a, n);
	/* scale-free: as the same data at magnitude 1, and as long double */
	CHECK_WITHIN(m->snr_db, unit->snr_db, 1e-9);
	CHECK_WITHIN(m->snr_db, e.snr, 1e-9);
	CHECK_WITHIN(m->cosine, unit->cosine, 1e-15);
	CHECK_WITHIN(m->cosine, e.cos, 1e-12);
	CHECK_DOUBLE_EXACT(m->max_rel, unit->max_rel);
	CHECK_DOUBLE_EXACT(m->max_rel, e.max_rel);
	/* scaled by 2^k (squares by 2^2k), rounded once where beyond the range */
	CHECK_DOUBLE_EXACT(m->mse, ldexp(unit->mse, 2 * k));
	CHECK(close_or_tiny(m->mse, e.mse, 1e-12));
	CHECK(close_or_tiny(m->l1, ldexp(unit->l1, k), 1e-15));
	CHECK(close_or_tiny(m->l1, e.l1, 1e-12));
	CHECK_DOUBLE_EXACT(m->max_abs, ldexp(unit->max_abs, k));
	CHECK(m->max_abs_index == unit->max_abs_index);
	CHECK(m->mismatch_count == unit->mismatch_count && m->count == n);
	CHECK(m->notes == unit->notes);
	if (check_failures != before)
		fprintf(stderr, "  ... in %s, scaled by 2^%d\n", name, k);
}

/*
 * float64 values far below 1 (down to subnormals) or far above: their
 * squares underflow or overflow, which gave MSE 0, SNR -inf, "reference is
 * all zero" and max rel NaN for data that has no zero. Every metric must be
 * the one of the same data at magnitude 1, scaled.
 */
static void test_magnitudes_f64(void)
{
	const size_t n = 3001;
	double *r = malloc(n * sizeof *r), *a = malloc(n * sizeof *a);
	double *rs = malloc(n * sizeof *rs), *as = malloc(n * sizeof *as);
	uint64_t s = 7;
	for (size_t i = 0; i < n; i++) {
		r[i] = gen_value(&s);
		a[i] = i % 3 ? r[i] + ldexp(gen_value(&s), -10) : r[i];
	}
	etc_metrics unit = compare_doubles(r, a, n);
	CHECK(unit.notes == 0 && unit.mismatch_count > 0);
	/* 2^-1000 takes the smallest values (2^-30 of the largest) to subnormals
	 * that still hold their 24 bits: the scaling is exact */
	const int ks[] = {-600, -700, -1000, 540, 600, 990};
	for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
		for (size_t i = 0; i < n; i++) {
			rs[i] = ldexp(r[i], ks[j]);
			as[i] = ldexp(a[i], ks[j]);
		}
		etc_metrics m = compare_doubles(rs, as, n);
		check_scaled("float64", &m, &unit, rs, as, n, ks[j]);
		/* identical tiny or huge tensors: identical, not "all zero" */
		m = compare_doubles(rs, rs, n);
		CHECK(m.identical && m.snr_db > 0 && isinf(m.snr_db) && m.cosine == 1);
		CHECK(m.notes == 0 && m.max_rel == 0 && m.mse == 0);
	}

	/* the hostile tester's case: 4 values of 1e-170, the last off by 100% */
	const double r4[4] = {1e-170, 2e-170, -3e-170, 4e-170};
	const double a4[4] = {1e-170, 2e-170, -3e-170, 8e-170};
	etc_metrics m = compare_doubles(r4, a4, 4);
	ld_expect e = ld_metrics(r4, a4, 4);
	CHECK_WITHIN(m.snr_db, e.snr, 1e-9);
	CHECK_WITHIN(m.cosine, e.cos, 1e-12);
	CHECK_DOUBLE_EXACT(m.max_rel, 1.0);
	CHECK(m.notes == 0 && m.max_abs == 4e-170 && m.max_abs_index == 3);

	/* a reference that is truly all zero stays so, however tiny the actual */
	const double z4[4] = {0, 0, 0, 0};
	m = compare_doubles(z4, a4, 4);
	CHECK(isinf(m.snr_db) && m.snr_db < 0 && isnan(m.max_rel) && isnan(m.cosine));
	CHECK(m.notes == (ETC_METRICS_ZERO_REFERENCE | ETC_METRICS_ZERO_NORM));
	/* an actual all zero against a tiny reference: d = -r, 0 dB */
	m = compare_doubles(a4, z4, 4);
	CHECK_DOUBLE_EXACT(m.snr_db, 0.0);
	CHECK(m.notes == ETC_METRICS_ZERO_NORM && m.max_rel == 1);

	/* a NaN position does not choose the scale: its 1e300 is left out */
	const double rn[3] = {NAN, 1e-170, 2e-170}, an[3] = {1e300, 1e-170, 3e-170};
	m = compare_doubles(rn, an, 3);
	CHECK_WITHIN(m.snr_db, 10 * log10(5.0), 1e-9);
	CHECK(m.notes == (ETC_METRICS_NAN_MISMATCH | ETC_METRICS_NAN));
	CHECK_DOUBLE_EXACT(m.max_rel, (an[2] - rn[2]) / rn[2]);

	/* near the largest double, of opposite signs: a - r overflows (max |d|
	 * inf, the true 3e308 is no double) but max rel is 2 and SNR -6.02 dB */
	const double rh[2] = {1.5e308, 1}, ah[2] = {-1.5e308, 1};
	m = compare_doubles(rh, ah, 2);
	CHECK(isinf(m.max_abs) && m.max_abs_index == 0 && isinf(m.mse));
	CHECK_DOUBLE_EXACT(m.max_rel, 2.0);
	CHECK_WITHIN(m.snr_db, 10 * log10(0.25), 1e-9);
	CHECK_WITHIN(m.cosine, -1.0, 1e-15);
	CHECK(m.notes == 0);
	/* infinities in the data keep their documented figures */
	const double ri[2] = {INFINITY, 1e-170}, ai[2] = {INFINITY, 2e-170};
	m = compare_doubles(ri, ai, 2);
	CHECK(m.notes == ETC_METRICS_INFINITE && m.max_rel == 1 && m.mismatch_count == 1);
	free(r);
	free(a);
	free(rs);
	free(as);
}

/* float32 at its own extremes (subnormals from 1.4e-45, up to 3.4e38): the
 * squares are taken in double, where they fit; every float32 kernel. */
static void test_magnitudes_f32(void)
{
	const size_t n = 4099;
	float *r = malloc(n * sizeof *r), *a = malloc(n * sizeof *a);
	double *dr = malloc(n * sizeof *dr), *da = malloc(n * sizeof *da);
	const int ks[] = {-140, -100, 100};
	for (size_t j = 0; j < sizeof ks / sizeof *ks; j++) {
		uint64_t s = 11;
		for (size_t i = 0; i < n; i++) {
			/* 2^-140 makes most values subnormal floats: they keep fewer
			 * bits, so the expected figures come from the floats as stored */
			r[i] = (float)ldexp(gen_value(&s), ks[j]);
			a[i] = i % 5 ? (float)ldexp(gen_value(&s), ks[j]) : r[i];
			dr[i] = r[i];
			da[i] = a[i];
		}
		ld_expect e = ld_metrics(dr, da, n);
		view vr, va;
		etc_values xr, xa;
		view_values(&vr, &xr, ETC_FLOAT, r, n);
		view_values(&va, &xa, ETC_FLOAT, a, n);
		for (int k = 0; k <= 3; k++) {
			etc_metrics m;
			etc_error err;
			CHECK(etc_metrics_compare_kernel_(&xr, &xa, &m, &err, k) == 0);
			CHECK_WITHIN(m.snr_db, e.snr, 1e-9);
			CHECK_WITHIN(m.cosine, e.cos, 1e-12);
			CHECK(close_or_tiny(m.mse, e.mse, 1e-12));
			CHECK(close_or_tiny(m.l1, e.l1, 1e-12));
			CHECK_DOUBLE_EXACT(m.max_rel, e.max_rel);
			CHECK(m.notes == 0 && m.count == n);
		}
	}
	free(r);
	free(a);
	free(dr);
	free(da);
}

int main(void)
{
	test_small();
	test_near_identical_f32();
	test_mid_f32();
	test_near_identical_f64();
	test_nan();
	test_dtype_pairs();
	test_integers();
	test_half_bfloat16();
	test_zeros();
	test_infinities();
	test_pytensor();
	test_errors();
	test_rel_lanes();
	test_rel_screen();
	test_infinities_f32();
	test_misaligned();
	test_magnitudes_f64();
	test_magnitudes_f32();
	return check_report("test_metrics");
}
