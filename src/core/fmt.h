/*
 * fmt.h - number and text formatting that reproduces what Python prints,
 * because users diff etcompare's tables against the upstream Inspector's.
 */
#ifndef ETC_FMT_H
#define ETC_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ETC_FMT_NUM 40

/* Python repr(float): shortest round-trip digits; exponent form when the
 * decimal exponent is < -4 or >= 16; "inf", "-inf", "nan". Returns length. */
size_t etc_fmt_repr(char *buf, double v);

/* Python format(v, "g"): 6 significant digits, trailing zeros removed. */
size_t etc_fmt_g(char *buf, double v);

/* A growable text buffer for building cells and lines. */
typedef struct etc_sbuf {
	char *p;
	size_t len, cap;
	int failed; /* allocation failed; content is truncated */
} etc_sbuf;

void etc_sbuf_reset(etc_sbuf *b);
void etc_sbuf_free(etc_sbuf *b);
void etc_sbuf_put(etc_sbuf *b, const char *s, size_t n);
void etc_sbuf_puts(etc_sbuf *b, const char *s);
void etc_sbuf_printf(etc_sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Appends `s` as a Python list repr element would quote a str: 'abc'. */
void etc_sbuf_pyrepr_str(etc_sbuf *b, const char *s, size_t n);
/* Appends `s` as a JSON string literal, with quotes. */
void etc_sbuf_json_str(etc_sbuf *b, const char *s, size_t n);

#endif
