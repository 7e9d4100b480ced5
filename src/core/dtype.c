/*
 * dtype.c - ExecuTorch scalar types: names, element sizes and the
 * conversions of the 16- and 8-bit float formats to double.
 */
#include "etcompare/tensor.h"

#include <math.h>

typedef struct dtype_info {
	int code;
	const char *name;   /* torch-style name */
	const char *schema; /* ScalarType enum name */
	size_t size;
} dtype_info;

static const dtype_info dtypes[] = {
    {ETC_BYTE, "uint8", "BYTE", 1},
    {ETC_CHAR, "int8", "CHAR", 1},
    {ETC_SHORT, "int16", "SHORT", 2},
    {ETC_INT, "int32", "INT", 4},
    {ETC_LONG, "int64", "LONG", 8},
    {ETC_HALF, "float16", "HALF", 2},
    {ETC_FLOAT, "float32", "FLOAT", 4},
    {ETC_DOUBLE, "float64", "DOUBLE", 8},
    {ETC_BOOL, "bool", "BOOL", 1},
    {ETC_QINT8, "qint8", "QINT8", 1},
    {ETC_QUINT8, "quint8", "QUINT8", 1},
    {ETC_QINT32, "qint32", "QINT32", 4},
    {ETC_BFLOAT16, "bfloat16", "BFLOAT16", 2},
    {ETC_QUINT4X2, "quint4x2", "QUINT4X2", 1},
    {ETC_QUINT2X4, "quint2x4", "QUINT2X4", 1},
    {ETC_BITS16, "bits16", "BITS16", 2},
    {ETC_FLOAT8E5M2, "float8_e5m2", "FLOAT8E5M2", 1},
    {ETC_FLOAT8E4M3FN, "float8_e4m3fn", "FLOAT8E4M3FN", 1},
    {ETC_FLOAT8E5M2FNUZ, "float8_e5m2fnuz", "FLOAT8E5M2FNUZ", 1},
    {ETC_FLOAT8E4M3FNUZ, "float8_e4m3fnuz", "FLOAT8E4M3FNUZ", 1},
    {ETC_UINT16, "uint16", "UINT16", 2},
    {ETC_UINT32, "uint32", "UINT32", 4},
    {ETC_UINT64, "uint64", "UINT64", 8},
};

static const dtype_info *find(int code)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].code == code)
			return &dtypes[i];
	return NULL;
}

bool etc_scalar_type_valid(int code)
{
	return find(code) != NULL;
}

const char *etc_scalar_type_name(int code)
{
	const dtype_info *d = find(code);
	return d ? d->name : "unknown";
}

const char *etc_scalar_type_schema_name(int code)
{
	const dtype_info *d = find(code);
	return d ? d->schema : "UNKNOWN";
}

size_t etc_scalar_type_size(int code)
{
	const dtype_info *d = find(code);
	return d ? d->size : 0;
}

double etc_half_to_double(uint16_t h)
{
	int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	double v;
	if (exp == 0)
		v = ldexp((double)man, -24); /* subnormal: man * 2^-14 * 2^-10 */
	else if (exp == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexp((double)(man | 0x400), exp - 25);
	return sign ? -v : v;
}

double etc_bfloat16_to_double(uint16_t b)
{
	union {
		uint32_t u;
		float f;
	} x;
	x.u = (uint32_t)b << 16;
	return (double)x.f;
}

/*
 * The four float8 kinds differ in exponent width, bias and special values:
 *   e5m2:      bias 15, IEEE-like (inf and NaN at exponent 31)
 *   e4m3fn:    bias 7, no inf; NaN only for S.1111.111
 *   e5m2fnuz:  bias 16, no inf, no -0; NaN is 0x80
 *   e4m3fnuz:  bias 8, no inf, no -0; NaN is 0x80
 */
double etc_float8_to_double(int scalar_type, uint8_t bits)
{
	int ebits, mbits, bias;
	bool fnuz = false, ieee = false;
	switch (scalar_type) {
	case ETC_FLOAT8E5M2:
		ebits = 5, mbits = 2, bias = 15, ieee = true;
		break;
	case ETC_FLOAT8E4M3FN:
		ebits = 4, mbits = 3, bias = 7;
		break;
	case ETC_FLOAT8E5M2FNUZ:
		ebits = 5, mbits = 2, bias = 16, fnuz = true;
		break;
	case ETC_FLOAT8E4M3FNUZ:
		ebits = 4, mbits = 3, bias = 8, fnuz = true;
		break;
	default:
		return NAN;
	}
	if (fnuz && bits == 0x80)
		return NAN;
	int sign = bits >> 7;
	int emax = (1 << ebits) - 1;
	int exp = (bits >> mbits) & emax;
	int man = bits & ((1 << mbits) - 1);
	double v;
	if (ieee && exp == emax)
		v = man ? NAN : INFINITY;
	else if (!ieee && !fnuz && exp == emax && man == (1 << mbits) - 1)
		return NAN;
	else if (exp == 0)
		v = ldexp((double)man, 1 - bias - mbits);
	else
		v = ldexp((double)(man | (1 << mbits)), exp - bias - mbits);
	return sign ? -v : v;
}
