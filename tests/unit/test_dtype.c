/*
 * test_dtype.c - scalar type table and the 16- and 8-bit float conversions.
 *
 * Every expected value below was derived by hand from the format
 * definitions (sign, exponent width and bias, mantissa width, specials):
 *   half      1.5.10  bias 15   IEEE (inf, NaN at exponent 31)
 *   bfloat16  1.8.7   bias 127  the top 16 bits of a float32
 *   e5m2      1.5.2   bias 15   IEEE-like: inf 0x7C, NaN 0x7D-0x7F
 *   e4m3fn    1.4.3   bias 7    no inf; NaN only S.1111.111 (0x7F, 0xFF)
 *   e5m2fnuz  1.5.2   bias 16   no inf, no -0; the only NaN is 0x80
 *   e4m3fnuz  1.4.3   bias 8    no inf, no -0; the only NaN is 0x80
 * Normal:    (1 + man / 2^m) * 2^(exp - bias)
 * Subnormal: man / 2^m * 2^(1 - bias)
 * Besides the spot values, every bit pattern of each float8 kind is checked
 * for structural properties (sign symmetry, monotonic order, special counts)
 * and, where the compiler has _Float16, every half pattern is compared with
 * the hardware/compiler conversion.
 */
#include "check.h"

#include "etcompare/tensor.h"

#include <float.h>
#include <stdint.h>

#define CHECK_NEG_ZERO(x)                                                                          \
	do {                                                                                       \
		double z_ = (x);                                                                   \
		CHECK(z_ == 0 && signbit(z_));                                                     \
	} while (0)
#define CHECK_POS_ZERO(x)                                                                          \
	do {                                                                                       \
		double z_ = (x);                                                                   \
		CHECK(z_ == 0 && !signbit(z_));                                                    \
	} while (0)

static void test_half(void)
{
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x3C00), 1.0);           /* exp 15, man 0 */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0xC000), -2.0);          /* sign, exp 16 */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x7BFF), 65504.0);       /* (2 - 2^-10) * 2^15 */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x0001), ldexp(1, -24)); /* smallest subnormal */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x03FF), 1023 * ldexp(1, -24)); /* largest sub */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x0400), ldexp(1, -14));        /* smallest normal */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x3555), 0.333251953125);       /* 1365/4096 */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x3BFF), 1.0 - ldexp(1, -11));
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x3C01), 1.0 + ldexp(1, -10));
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x4248), 3.140625); /* 1.5703125 * 2 */
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x7C00), INFINITY);
	CHECK_DOUBLE_EXACT(etc_half_to_double(0xFC00), -INFINITY);
	CHECK(isnan(etc_half_to_double(0x7E00)));
	CHECK(isnan(etc_half_to_double(0x7C01)));
	CHECK(isnan(etc_half_to_double(0xFFFF)));
	CHECK_POS_ZERO(etc_half_to_double(0x0000));
	CHECK_NEG_ZERO(etc_half_to_double(0x8000));
	CHECK_DOUBLE_EXACT(etc_half_to_double(0x8001), -ldexp(1, -24));

#if defined(__FLT16_MAX__)
	/* Independent reference: the compiler's own _Float16 -> double. */
	int mismatches = 0;
	for (uint32_t b = 0; b < 0x10000; b++) {
		_Float16 h;
		uint16_t u = (uint16_t)b;
		memcpy(&h, &u, 2);
		double want = (double)h, got = etc_half_to_double(u);
		if (!(want == got || (isnan(want) && isnan(got))) || signbit(want) != signbit(got))
			mismatches++;
	}
	CHECK(mismatches == 0);
#endif
	/* Without _Float16: every finite pattern, rebuilt from the definition. */
	int bad = 0;
	for (uint32_t b = 0; b < 0x10000; b++) {
		int sign = b >> 15, e = (b >> 10) & 31, m = b & 1023;
		double got = etc_half_to_double((uint16_t)b);
		if (e == 31) {
			bad += m ? !isnan(got) : !(isinf(got) && (got < 0) == sign);
			continue;
		}
		double mag = e ? (1 + m / 1024.0) * pow(2, e - 15) : m / 1024.0 * pow(2, -14);
		if (got != (sign ? -mag : mag) || (bool)signbit(got) != (bool)sign)
			bad++;
	}
	CHECK(bad == 0);
}

static void test_bfloat16(void)
{
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x3F80), 1.0);
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0xBF80), -1.0);
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x4049), 3.140625); /* 1.5703125 * 2 */
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x3E80), 0.25);
	/* Largest finite: (2 - 2^-7) * 2^127. */
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x7F7F), (2 - ldexp(1, -7)) * ldexp(1, 127));
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x0080), ldexp(1, -126)); /* smallest normal */
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x0001), ldexp(1, -133)); /* 2^-7 * 2^-126 */
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0x7F80), INFINITY);
	CHECK_DOUBLE_EXACT(etc_bfloat16_to_double(0xFF80), -INFINITY);
	CHECK(isnan(etc_bfloat16_to_double(0x7FC0)));
	CHECK(isnan(etc_bfloat16_to_double(0xFF81)));
	CHECK_POS_ZERO(etc_bfloat16_to_double(0x0000));
	CHECK_NEG_ZERO(etc_bfloat16_to_double(0x8000));
}

static double f8(int kind, unsigned bits)
{
	return etc_float8_to_double(kind, (uint8_t)bits);
}

static void test_float8_values(void)
{
	/* e4m3fn: bias 7. */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x7E), 448.0); /* 1.75 * 2^8 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0xFE), -448.0);
	CHECK(isnan(f8(ETC_FLOAT8E4M3FN, 0x7F)));
	CHECK(isnan(f8(ETC_FLOAT8E4M3FN, 0xFF)));
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x78), 256.0);        /* exp 15 is finite here */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x38), 1.0);          /* exp 7 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x08), ldexp(1, -6)); /* smallest normal */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x01), ldexp(1, -9)); /* 1/8 * 2^-6 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FN, 0x07), 7 * ldexp(1, -9));
	CHECK_POS_ZERO(f8(ETC_FLOAT8E4M3FN, 0x00));
	CHECK_NEG_ZERO(f8(ETC_FLOAT8E4M3FN, 0x80));

	/* e5m2: bias 15, IEEE specials. */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0x7B), 57344.0); /* 1.75 * 2^15 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0x7C), INFINITY);
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0xFC), -INFINITY);
	CHECK(isnan(f8(ETC_FLOAT8E5M2, 0x7D)));
	CHECK(isnan(f8(ETC_FLOAT8E5M2, 0x7F)));
	CHECK(isnan(f8(ETC_FLOAT8E5M2, 0xFE)));
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0x3C), 1.0);
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0x04), ldexp(1, -14)); /* smallest normal */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0x01), ldexp(1, -16)); /* 1/4 * 2^-14 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2, 0xC0), -2.0);
	CHECK_NEG_ZERO(f8(ETC_FLOAT8E5M2, 0x80));

	/* e4m3fnuz: bias 8, 0x80 is the NaN. */
	CHECK(isnan(f8(ETC_FLOAT8E4M3FNUZ, 0x80)));
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FNUZ, 0x7F), 240.0); /* 1.875 * 2^7 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FNUZ, 0xFF), -240.0);
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FNUZ, 0x40), 1.0);           /* exp 8 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FNUZ, 0x01), ldexp(1, -10)); /* 1/8 * 2^-7 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E4M3FNUZ, 0x08), ldexp(1, -7));
	CHECK_POS_ZERO(f8(ETC_FLOAT8E4M3FNUZ, 0x00));

	/* e5m2fnuz: bias 16, 0x80 is the NaN, exponent 31 is finite. */
	CHECK(isnan(f8(ETC_FLOAT8E5M2FNUZ, 0x80)));
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2FNUZ, 0x7F), 57344.0); /* 1.75 * 2^15 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2FNUZ, 0x7C), 32768.0); /* not inf */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2FNUZ, 0xFC), -32768.0);
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2FNUZ, 0x40), 1.0);           /* exp 16 */
	CHECK_DOUBLE_EXACT(f8(ETC_FLOAT8E5M2FNUZ, 0x01), ldexp(1, -17)); /* 1/4 * 2^-15 */
	CHECK_POS_ZERO(f8(ETC_FLOAT8E5M2FNUZ, 0x00));

	/* Not a float8 kind. */
	CHECK(isnan(f8(ETC_FLOAT, 0x38)));
	CHECK(isnan(f8(ETC_HALF, 0x38)));
	CHECK(isnan(f8(-1, 0x38)));
}

/* Every pattern: specials counted, positives strictly increasing, sign symmetric. */
static void sweep_float8(int kind, int want_nans, int want_infs, int neg_zero, double max)
{
	int nans = 0, infs = 0, order_bad = 0, sym_bad = 0;
	double prev = -1, seen_max = 0;
	for (unsigned b = 0; b < 256; b++) {
		double v = f8(kind, b);
		nans += isnan(v) != 0;
		infs += isinf(v) != 0;
		if (b < 0x80 && !isnan(v)) {
			if (!(v > prev))
				order_bad++;
			prev = v;
			if (!isinf(v) && v > seen_max)
				seen_max = v;
		}
		if (b >= 0x80) {
			double p = f8(kind, b & 0x7F);
			if (isnan(p) || (b == 0x80 && !neg_zero))
				continue;
			if (!(v == -p && signbit(v)))
				sym_bad++;
		}
	}
	CHECK(nans == want_nans);
	CHECK(infs == want_infs);
	CHECK(order_bad == 0);
	CHECK(sym_bad == 0);
	CHECK_DOUBLE_EXACT(seen_max, max);
}

static void test_float8_sweep(void)
{
	sweep_float8(ETC_FLOAT8E5M2, 6, 2, 1, 57344.0);
	sweep_float8(ETC_FLOAT8E4M3FN, 2, 0, 1, 448.0);
	sweep_float8(ETC_FLOAT8E5M2FNUZ, 1, 0, 0, 57344.0);
	sweep_float8(ETC_FLOAT8E4M3FNUZ, 1, 0, 0, 240.0);
}

static void test_scalar_types(void)
{
	static const struct {
		int code;
		const char *name, *schema;
		size_t size;
	} t[] = {
	    {0, "uint8", "BYTE", 1},
	    {1, "int8", "CHAR", 1},
	    {2, "int16", "SHORT", 2},
	    {3, "int32", "INT", 4},
	    {4, "int64", "LONG", 8},
	    {5, "float16", "HALF", 2},
	    {6, "float32", "FLOAT", 4},
	    {7, "float64", "DOUBLE", 8},
	    {11, "bool", "BOOL", 1},
	    {12, "qint8", "QINT8", 1},
	    {13, "quint8", "QUINT8", 1},
	    {14, "qint32", "QINT32", 4},
	    {15, "bfloat16", "BFLOAT16", 2},
	    {16, "quint4x2", "QUINT4X2", 1},
	    {17, "quint2x4", "QUINT2X4", 1},
	    {22, "bits16", "BITS16", 2},
	    {23, "float8_e5m2", "FLOAT8E5M2", 1},
	    {24, "float8_e4m3fn", "FLOAT8E4M3FN", 1},
	    {25, "float8_e5m2fnuz", "FLOAT8E5M2FNUZ", 1},
	    {26, "float8_e4m3fnuz", "FLOAT8E4M3FNUZ", 1},
	    {27, "uint16", "UINT16", 2},
	    {28, "uint32", "UINT32", 4},
	    {29, "uint64", "UINT64", 8},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		CHECK(etc_scalar_type_valid(t[i].code));
		CHECK_STR(etc_scalar_type_name(t[i].code), t[i].name);
		CHECK_STR(etc_scalar_type_schema_name(t[i].code), t[i].schema);
		CHECK(etc_scalar_type_size(t[i].code) == t[i].size);
	}
	/* The enum constants agree with the schema codes. */
	CHECK(ETC_BOOL == 11 && ETC_BITS16 == 22 && ETC_UINT64 == 29 && ETC_BFLOAT16 == 15);
	static const int invalid[] = {-128, -1, 8, 9, 10, 18, 19, 20, 21, 30, 31, 127, 255, 1000};
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		CHECK(!etc_scalar_type_valid(invalid[i]));
		CHECK_STR(etc_scalar_type_name(invalid[i]), "unknown");
		CHECK_STR(etc_scalar_type_schema_name(invalid[i]), "UNKNOWN");
		CHECK(etc_scalar_type_size(invalid[i]) == 0);
	}
}

int main(void)
{
	test_half();
	test_bfloat16();
	test_float8_values();
	test_float8_sweep();
	test_scalar_types();
	return check_report("test_dtype");
}
