/*
 * fmt.c - Python-compatible float formatting and a small string builder.
 *
 * repr(float) needs the shortest decimal that reads back as the same double
 * (round half even), and among equally short ones the closest (ties: even
 * last digit). For v = c * 2^q the doubles' rounding interval is
 * [(4c - 2) 2^(q-2), (4c + 2) 2^(q-2)] (lower bound (4c - 1) 2^(q-2) when c is
 * a power of two with a smaller predecessor gap), closed when c is even.
 * Pick k with 10^k <= interval width < 10^(k+1): then at most one multiple of
 * 10^(k+1) lies in the interval (if one does, it is the answer), otherwise
 * s = floor(v / 10^k) or s + 1 is, and the closer one wins. When the
 * interval ends, v and the candidates fit in 128-bit integers (about
 * 4.5e-6 <= |v| < 2^125) this is done exactly with integer arithmetic.
 *
 * Elsewhere a slow but exact path is used: if the value survives a round
 * trip at 15 significant digits, the shortest form is those digits with
 * trailing zeros removed (a normal double is within half an ulp of its
 * shortest representation, far below half a unit in the 15th digit);
 * otherwise 16 digits, otherwise 17. Subnormals have fewer significant bits,
 * so for them the search starts at one digit.
 */
#include "core/fmt.h"
#include "core/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

static const uint64_t pow10_64[20] = {
    1ULL,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
    10000000000000000000ULL,
};

/* 10^k for 0 <= k <= 38. */
static inline u128 pow10_128(int k)
{
	return k < 20 ? pow10_64[k] : (u128)pow10_64[19] * pow10_64[k - 19];
}

/*
 * The exact integer algorithm described above, for positive finite v.
 * Returns false when v is outside the range it handles. On success
 * *digits * 10^*exp10 is the answer, *digits without trailing zeros.
 */
static bool shortest_exact(double v, uint64_t *digits, int *exp10)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	int be = (int)((bits >> 52) & 0x7ff);
	uint64_t frac = bits & ((1ULL << 52) - 1);
	if (be == 0 || be == 0x7ff)
		return false;
	uint64_t c = frac | (1ULL << 52);
	int q2 = be - 1075 - 2; /* v = (4c) * 2^q2 */
	bool asym = frac == 0 && be > 1;
	uint64_t cb = c << 2, cbr = cb + 2, cbl = asym ? cb - 1 : cb - 2;
	unsigned w = asym ? 3 : 4; /* interval width in units of 2^q2 */
	bool incl = (c & 1) == 0;
	/* Estimate, then fix exactly: 10^k <= w 2^q2 < 10^(k+1). */
	int k = (int)floor(q2 * 0.30102999566398119521 +
	                   (asym ? 0.47712125471966243730 : 0.60205999132796239042));
	u128 x, xl, xr, p = 0;
	int sh = 0;
	bool scaled; /* candidates are m * p (else m << sh) */
	if (q2 >= 0) {
		if (q2 > 70)
			return false;
		u128 wid = (u128)w << q2;
		if (k < 0)
			k = 0;
		while (k > 0 && pow10_128(k) > wid)
			k--;
		while (pow10_128(k + 1) <= wid)
			k++;
		p = pow10_128(k);
		x = (u128)cb << q2;
		xl = (u128)cbl << q2;
		xr = (u128)cbr << q2;
		scaled = true;
	} else {
		sh = -q2;
		if (sh > 120)
			return false;
		/* k <= 0 here; with f = 10^-k: 2^sh <= w f < 10 * 2^sh */
		if (k > 0)
			k = 0;
		u128 two_sh = (u128)1 << sh;
		while (k >= -21 && (u128)w * pow10_128(-k) < two_sh)
			k--;
		if (k < -21)
			return false;
		while (k < 0 && (u128)w * pow10_128(-k - 1) >= two_sh)
			k++;
		u128 f = pow10_128(-k);
		x = (u128)cb * f;
		xl = (u128)cbl * f;
		xr = (u128)cbr * f;
		scaled = false;
	}
	uint64_t s = scaled ? (uint64_t)(x / p) : (uint64_t)(x >> sh);
#define AT(m)     (scaled ? (u128)(m)*p : (u128)(m) << sh)
#define INSIDE(M) ((incl ? (M) >= xl : (M) > xl) && (incl ? (M) <= xr : (M) < xr))
	uint64_t d;
	int e;
	uint64_t sp = s - s % 10;
	u128 mu = AT(sp), mw = AT(sp + 10);
	bool u_in = sp != 0 && INSIDE(mu), w_in = INSIDE(mw);
	if (u_in || w_in) {
		if (u_in && w_in) /* cannot happen: the interval is narrower than 10^(k+1) */
			d = x - mu < mw - x || (x - mu == mw - x && (sp / 10) % 2 == 0) ? sp
			                                                                : sp + 10;
		else
			d = u_in ? sp : sp + 10;
		d /= 10;
		e = k + 1;
	} else {
		mu = AT(s);
		mw = AT(s + 1);
		u_in = s != 0 && INSIDE(mu);
		w_in = INSIDE(mw);
		if (u_in && w_in)
			d = x - mu < mw - x || (x - mu == mw - x && s % 2 == 0) ? s : s + 1;
		else if (u_in || w_in)
			d = u_in ? s : s + 1;
		else
			return false; /* cannot happen: the interval is at least 10^k wide */
		e = k;
	}
#undef AT
#undef INSIDE
	if (d == 0)
		return false;
	/* strip trailing zeros: at most 17, so 10^8 steps then 4 + 2 + 1 */
	while (d % 100000000 == 0) {
		d /= 100000000;
		e += 8;
	}
	if (d % 10000 == 0) {
		d /= 10000;
		e += 4;
	}
	if (d % 100 == 0) {
		d /= 100;
		e += 2;
	}
	if (d % 10 == 0) {
		d /= 10;
		e++;
	}
	*digits = d;
	*exp10 = e;
	return true;
}

#else
/* No 128-bit integers: always the slow path. */
static bool shortest_exact(double v, uint64_t *digits, int *exp10)
{
	(void)v, (void)digits, (void)exp10;
	return false;
}
#endif

/*
 * The slow exact path: snprintf/strtod round trips. The correctly rounded
 * p-digit decimal is the closest one to v, so it is inside the rounding
 * interval whenever any p-digit decimal is, except when the interval is
 * lopsided (v a power of two: the gap below is half the gap above): then the
 * next p-digit decimal above v may be inside while the rounded one, below v,
 * is not. That can only happen at 16 digits (15-digit decimals are too far
 * apart, a 17-digit one always fits), so at 16 digits the one above is tried.
 */
static int shortest_digits_slow(double v, char *digits, int *ndigits)
{
	char tmp[40];
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	bool pow2 = (bits & ((1ULL << 52) - 1)) == 0 && ((bits >> 52) & 0x7ff) > 1;
	int first = v < 2.2250738585072014e-308 ? 1 : 15; /* subnormal: fewer digits */
	int n = 0, exp10 = 0;
	for (int prec = first; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
		/* tmp is "d.ddddde[+-]XX" */
		char *e = strchr(tmp, 'e');
		exp10 = atoi(e + 1);
		n = 0;
		for (char *p = tmp; p < e; p++)
			if (*p >= '0' && *p <= '9')
				digits[n++] = *p;
		if (prec == 17 || strtod(tmp, NULL) == v)
			break;
		if (prec == 16 && pow2) {
			/* the next 16-digit decimal up */
			int i = n - 1;
			while (i >= 0 && digits[i] == '9')
				digits[i--] = '0';
			if (i >= 0) {
				digits[i]++;
			} else {
				digits[0] = '1';
				exp10++;
			}
			char up[48];
			snprintf(up, sizeof up, "%.*se%d", n, digits, exp10 - (n - 1));
			if (strtod(up, NULL) == v)
				break;
		}
	}
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*ndigits = n;
	return exp10;
}

/* digits: significant digits without the point; returns the scientific
 * exponent: v = d1.d2d3... * 10^exp10. */
static int shortest_digits(double v, char *digits, int *ndigits)
{
	uint64_t d;
	int e;
	if (!shortest_exact(v, &d, &e))
		return shortest_digits_slow(v, digits, ndigits);
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + d % 10);
		d /= 10;
	} while (d);
	for (int i = 0; i < n; i++)
		digits[i] = tmp[n - 1 - i];
	digits[n] = '\0';
	*ndigits = n;
	return e + n - 1;
}

size_t etc_fmt_repr(char *buf, double v)
{
	if (isnan(v))
		return (size_t)snprintf(buf, ETC_FMT_NUM, "nan");
	if (isinf(v))
		return (size_t)snprintf(buf, ETC_FMT_NUM, v < 0 ? "-inf" : "inf");
	char *o = buf;
	if (signbit(v)) {
		*o++ = '-';
		v = -v;
	}
	if (v == 0) {
		strcpy(o, "0.0");
		return (size_t)(o - buf) + 3;
	}
	char d[24];
	int n;
	int x = shortest_digits(v, d, &n);
	/* Python's repr switches to exponent form outside 1e-4 <= |v| < 1e16. */
	if (x < -4 || x >= 16) {
		*o++ = d[0];
		if (n > 1) {
			*o++ = '.';
			memcpy(o, d + 1, (size_t)n - 1);
			o += n - 1;
		}
		o += sprintf(o, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	} else if (x < 0) {
		*o++ = '0';
		*o++ = '.';
		for (int i = 0; i < -x - 1; i++)
			*o++ = '0';
		memcpy(o, d, (size_t)n);
		o += n;
	} else {
		int intdigits = x + 1;
		for (int i = 0; i < intdigits; i++)
			*o++ = i < n ? d[i] : '0';
		*o++ = '.';
		if (n > intdigits) {
			memcpy(o, d + intdigits, (size_t)(n - intdigits));
			o += n - intdigits;
		} else {
			*o++ = '0';
		}
	}
	*o = '\0';
	return (size_t)(o - buf);
}

size_t etc_fmt_g(char *buf, double v)
{
	/* C's %g and Python's format(v, "g") agree, but for the sign of NaN:
	 * Python never prints "-nan". */
	if (isnan(v))
		return (size_t)snprintf(buf, ETC_FMT_NUM, "nan");
	return (size_t)snprintf(buf, ETC_FMT_NUM, "%g", v);
}

void etc_sbuf_reset(etc_sbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

void etc_sbuf_free(etc_sbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static int reserve(etc_sbuf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return 1;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2) {
			b->failed = 1;
			return 0;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (!p) {
		b->failed = 1;
		return 0;
	}
	b->p = p;
	b->cap = cap;
	return 1;
}

void etc_sbuf_put(etc_sbuf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void etc_sbuf_puts(etc_sbuf *b, const char *s)
{
	etc_sbuf_put(b, s, strlen(s));
}

/*
 * Fast path of etc_sbuf_printf for the formats the report writers use per
 * cell: literal text and the conversions %s %d %u %ld %lu %lld %llu %zu %%
 * without flags, width or precision. simple_format_ok() checks a format
 * before any argument is consumed; anything else goes to vsnprintf.
 */
static bool simple_format_ok(const char *f)
{
	for (; *f; f++) {
		if (*f != '%')
			continue;
		f++;
		if (*f == 'l' && f[1] == 'l')
			f += 2;
		else if (*f == 'l' || *f == 'z')
			f++;
		switch (*f) {
		case 'd':
		case 'u':
			break;
		case 's':
		case '%':
			if (f[-1] != '%')
				return false;
			break;
		default:
			return false;
		}
		if (f[-1] == 'z' && *f != 'u')
			return false;
	}
	return true;
}

static char *put_u64(char *end, unsigned long long v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static void simple_format(etc_sbuf *b, const char *f, va_list ap)
{
	/* Built in a local buffer and appended once; flushed when nearly full. */
	char out[256];
	size_t n = 0;
	while (*f) {
		if (n > sizeof out - 24) {
			etc_sbuf_put(b, out, n);
			n = 0;
		}
		if (*f != '%') {
			out[n++] = *f++;
			continue;
		}
		f++;
		int len = 0; /* 0 int, 1 long, 2 long long, 3 size_t */
		if (*f == 'l' && f[1] == 'l')
			len = 2, f += 2;
		else if (*f == 'l')
			len = 1, f++;
		else if (*f == 'z')
			len = 3, f++;
		char conv = *f++;
		if (conv == '%') {
			out[n++] = '%';
			continue;
		}
		if (conv == 's') {
			const char *str = va_arg(ap, const char *);
			etc_sbuf_put(b, out, n);
			n = 0;
			etc_sbuf_puts(b, str ? str : "(null)");
			continue;
		}
		char num[24];
		char *end = num + sizeof num, *p;
		if (conv == 'u') {
			unsigned long long v = len == 0   ? va_arg(ap, unsigned)
			                       : len == 1 ? va_arg(ap, unsigned long)
			                       : len == 2 ? va_arg(ap, unsigned long long)
			                                  : va_arg(ap, size_t);
			p = put_u64(end, v);
		} else {
			long long v = len == 0   ? va_arg(ap, int)
			              : len == 1 ? va_arg(ap, long)
			                         : va_arg(ap, long long);
			p = put_u64(end,
			            v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
			if (v < 0)
				*--p = '-';
		}
		memcpy(out + n, p, (size_t)(end - p));
		n += (size_t)(end - p);
	}
	etc_sbuf_put(b, out, n);
}

void etc_sbuf_printf(etc_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	if (simple_format_ok(fmt)) {
		if (!reserve(b, 0))
			return;
		b->p[b->len] = '\0';
		va_start(ap, fmt);
		simple_format(b, fmt, ap);
		va_end(ap);
		return;
	}
	/* One vsnprintf into the spare room; a second only when it did not fit. */
	if (!reserve(b, 64))
		return;
	va_list ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	size_t room = b->cap - b->len;
	int n = vsnprintf(b->p + b->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->p[b->len] = '\0';
		va_end(ap2);
		return;
	}
	if ((size_t)n >= room) {
		if (!reserve(b, (size_t)n)) {
			b->p[b->len] = '\0';
			va_end(ap2);
			return;
		}
		vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	b->len += (size_t)n;
}

void etc_sbuf_pyrepr_str(etc_sbuf *b, const char *s, size_t n)
{
	if (!n)
		s = ""; /* absent data (NULL) is the empty string */
	/* Python prefers single quotes unless the text has ' and no ". */
	int has_sq = memchr(s, '\'', n) != NULL, has_dq = memchr(s, '"', n) != NULL;
	char q = has_sq && !has_dq ? '"' : '\'';
	etc_sbuf_put(b, &q, 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\\' || c == (unsigned char)q) {
			etc_sbuf_put(b, "\\", 1);
			etc_sbuf_put(b, (const char *)&c, 1);
		} else if (c == '\n') {
			etc_sbuf_puts(b, "\\n");
		} else if (c == '\t') {
			etc_sbuf_puts(b, "\\t");
		} else if (c == '\r') {
			etc_sbuf_puts(b, "\\r");
		} else if (c < 0x20 || c == 0x7f) {
			etc_sbuf_printf(b, "\\x%02x", c);
		} else if (c >= 0x80) {
			/* Valid UTF-8 passes through; a stray byte is shown escaped
			 * so the output stays valid UTF-8. */
			uint32_t cp;
			size_t k = etc_utf8_decode((const unsigned char *)s + i, n - i, &cp);
			if (k) {
				etc_sbuf_put(b, s + i, k);
				i += k - 1;
			} else {
				etc_sbuf_printf(b, "\\x%02x", c);
			}
		} else {
			etc_sbuf_put(b, (const char *)&c, 1);
		}
	}
	etc_sbuf_put(b, &q, 1);
}

void etc_sbuf_json_str(etc_sbuf *b, const char *s, size_t n)
{
	etc_sbuf_put(b, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			/* JSON must be UTF-8: invalid bytes become U+FFFD. */
			uint32_t cp;
			size_t k = etc_utf8_decode((const unsigned char *)s + i, n - i, &cp);
			if (k) {
				i += k - 1;
				continue;
			}
			etc_sbuf_put(b, s + run, i - run);
			run = i + 1;
			etc_sbuf_puts(b, "\\ufffd");
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		etc_sbuf_put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
			etc_sbuf_puts(b, "\\\"");
			break;
		case '\\':
			etc_sbuf_puts(b, "\\\\");
			break;
		case '\n':
			etc_sbuf_puts(b, "\\n");
			break;
		case '\t':
			etc_sbuf_puts(b, "\\t");
			break;
		case '\r':
			etc_sbuf_puts(b, "\\r");
			break;
		default:
			etc_sbuf_printf(b, "\\u%04x", c);
		}
	}
	etc_sbuf_put(b, s + run, n - run);
	etc_sbuf_put(b, "\"", 1);
}
