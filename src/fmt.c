/*
 * fmt.c - Python-compatible float formatting and a small string builder.
 *
 * Shortest round-trip digits without a full Grisu/Ryu: if the value
 * survives a round trip at 15 significant digits, the shortest form is
 * those digits with trailing zeros removed (any double is within half an
 * ulp of its shortest representation, far below half a unit in the 15th
 * digit); otherwise 16 digits, otherwise 17 (always exact).
 */
#include "fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* digits: significant digits without the point; returns decimal exponent e
 * such that v = 0.d1d2... * 10^e ... we use the scientific exponent instead:
 * v = d1.d2d3... * 10^exp10. */
static int shortest_digits(double v, char *digits, int *ndigits)
{
	char tmp[40];
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
		if (prec == 17 || strtod(tmp, NULL) == v)
			break;
	}
	/* tmp is "d.ddddde[+-]XX" */
	char *e = strchr(tmp, 'e');
	int exp10 = atoi(e + 1);
	int n = 0;
	for (char *p = tmp; p < e; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*ndigits = n;
	return exp10;
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
	/* C's %g and Python's format(v, "g") agree, including "inf" and "nan". */
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

void etc_sbuf_printf(etc_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void etc_sbuf_pyrepr_str(etc_sbuf *b, const char *s, size_t n)
{
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
