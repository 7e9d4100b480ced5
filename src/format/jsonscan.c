/*
 * jsonscan.c - the pull scanner of jsonscan.h. One pass, no allocation;
 * every byte is bounds-checked against `end`.
 */
#include "format/jsonscan.h"

#include <stdio.h>
#include <stdlib.h>

enum { NEED_VALUE, NEED_KEY, NEED_COMMA_OR_CLOSE, NEED_FIRST_OR_CLOSE };

void etc_jscan_init(etc_jscan *j, const char *data, size_t size, int max_depth, const char *file,
                    const char *member, int64_t base, etc_error *err)
{
	memset(j, 0, sizeof *j);
	j->begin = j->p = data;
	j->end = data + size;
	j->max_depth = max_depth < (int)sizeof j->stack ? max_depth : (int)sizeof j->stack;
	j->need = NEED_VALUE;
	j->file = file;
	j->member = member;
	j->base = base;
	j->err = err;
}

int etc_jscan_fail(etc_jscan *j, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int64_t at = (int64_t)(j->p - j->begin);
	if (!j->member) /* a file of its own: "FILE: byte N: what" says it all */
		return etc_fail(j->err, ETC_ERR_FORMAT, j->file, j->base >= 0 ? j->base + at : at,
		                "%s", msg);
	return etc_fail(j->err, ETC_ERR_FORMAT, j->file, j->base >= 0 ? j->base + at : -1,
	                "member %s: invalid JSON at byte %lld of the member: %s", j->member,
	                (long long)at, msg);
}

static void skip_ws(etc_jscan *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Scans a string starting after its opening quote. */
static int scan_string(etc_jscan *j)
{
	const char *s = j->p;
	j->escaped = false;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->s = s;
			j->len = (size_t)(j->p - s);
			j->p++;
			return 0;
		}
		if (c < 0x20)
			return etc_jscan_fail(j, "control character 0x%02x inside a string", c);
		if (c == '\\') {
			j->escaped = true;
			if (j->end - j->p < 2)
				break;
			char e = j->p[1];
			if (e == 'u') {
				if (j->end - j->p < 6)
					break;
				for (int k = 2; k < 6; k++)
					if (hexval(j->p[k]) < 0)
						return etc_jscan_fail(j, "bad \\u escape");
				j->p += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || !e)
				return etc_jscan_fail(j, "bad escape \\%c", e);
			j->p += 2;
			continue;
		}
		j->p++;
	}
	return etc_jscan_fail(j, "unterminated string");
}

static int scan_number(etc_jscan *j)
{
	const char *s = j->p, *e = j->end;
	const char *p = s;
	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0') {
		p++;
	} else if (p < e && *p >= '1' && *p <= '9') {
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	} else {
		return etc_jscan_fail(j, "unexpected character '%c'", *s);
	}
	if (p < e && *p == '.') {
		p++;
		if (p >= e || *p < '0' || *p > '9')
			return etc_jscan_fail(j, "digit expected after the decimal point");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return etc_jscan_fail(j, "digit expected in the exponent");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	j->s = s;
	j->len = (size_t)(p - s);
	j->p = p;
	return 0;
}

static int literal(etc_jscan *j, const char *word, etc_jtok kind, etc_jtok *tok)
{
	size_t n = strlen(word);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return etc_jscan_fail(j, "unexpected character '%c'", *j->p);
	j->p += n;
	*tok = kind;
	return 0;
}

/* After a complete value: the container (if any) now wants a comma or its end. */
static void value_done(etc_jscan *j)
{
	if (j->depth == 0)
		j->done = true;
	j->need = NEED_COMMA_OR_CLOSE;
}

int etc_jscan_next(etc_jscan *j, etc_jtok *tok)
{
	for (;;) {
		skip_ws(j);
		if (j->p >= j->end) {
			if (j->done) {
				*tok = ETC_J_EOF;
				return 0;
			}
			return etc_jscan_fail(j, "unexpected end of the text");
		}
		if (j->done)
			return etc_jscan_fail(j, "text after the end of the JSON value");
		char c = *j->p;
		char top = j->depth ? (char)j->stack[j->depth - 1] : 0;
		if (j->need == NEED_COMMA_OR_CLOSE || j->need == NEED_FIRST_OR_CLOSE) {
			if ((c == '}' && top == 'o') || (c == ']' && top == 'a')) {
				j->p++;
				j->depth--;
				*tok = c == '}' ? ETC_J_OBJECT_END : ETC_J_ARRAY_END;
				value_done(j);
				return 0;
			}
			if (j->need == NEED_COMMA_OR_CLOSE) {
				if (c != ',')
					return etc_jscan_fail(j, "',' or '%c' expected",
					                      top == 'o' ? '}' : ']');
				j->p++;
				j->need = top == 'o' ? NEED_KEY : NEED_VALUE;
				continue;
			}
			j->need = top == 'o' ? NEED_KEY : NEED_VALUE;
		}
		if (j->need == NEED_KEY) {
			if (c != '"')
				return etc_jscan_fail(j, "object key expected");
			j->p++;
			ETC_TRY(scan_string(j));
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':')
				return etc_jscan_fail(j, "':' expected after an object key");
			j->p++;
			j->need = NEED_VALUE;
			*tok = ETC_J_KEY;
			return 0;
		}
		/* a value */
		switch (c) {
		case '{':
		case '[':
			if (j->depth >= j->max_depth)
				return etc_fail(j->err, ETC_ERR_LIMIT, j->file,
				                j->base >= 0 ? j->base + (j->p - j->begin) : -1,
				                "member %s: JSON nested deeper than %d levels",
				                j->member, j->max_depth);
			j->stack[j->depth++] = c == '{' ? 'o' : 'a';
			j->p++;
			j->need = NEED_FIRST_OR_CLOSE;
			*tok = c == '{' ? ETC_J_OBJECT : ETC_J_ARRAY;
			return 0;
		case '"':
			j->p++;
			ETC_TRY(scan_string(j));
			*tok = ETC_J_STRING;
			break;
		case 't':
			ETC_TRY(literal(j, "true", ETC_J_TRUE, tok));
			break;
		case 'f':
			ETC_TRY(literal(j, "false", ETC_J_FALSE, tok));
			break;
		case 'n':
			ETC_TRY(literal(j, "null", ETC_J_NULL, tok));
			break;
		default:
			ETC_TRY(scan_number(j));
			*tok = ETC_J_NUMBER;
		}
		value_done(j);
		return 0;
	}
}

int etc_jscan_skip(etc_jscan *j, etc_jtok tok)
{
	if (tok != ETC_J_OBJECT && tok != ETC_J_ARRAY)
		return 0;
	int depth = j->depth - 1;
	while (j->depth > depth) {
		ETC_TRY(etc_jscan_next(j, &tok));
		if (tok == ETC_J_EOF)
			return etc_jscan_fail(j, "unexpected end of the text");
	}
	return 0;
}

bool etc_jscan_key_is(const etc_jscan *j, const char *key)
{
	size_t n = strlen(key);
	return !j->escaped && j->len == n && memcmp(j->s, key, n) == 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

char *etc_jscan_string(const etc_jscan *j, etc_arena *a)
{
	if (!j->escaped)
		return etc_arena_strdup(a, j->s, j->len);
	char *out = etc_arena_alloc(a, j->len + 1, 1); /* decoding never grows the text */
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < j->len; i++) {
		char c = j->s[i];
		if (c != '\\') {
			out[o++] = c;
			continue;
		}
		char e = j->s[++i];
		switch (e) {
		case 'b':
			out[o++] = '\b';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'u': {
			unsigned cp = 0;
			for (int k = 1; k <= 4; k++)
				cp = cp * 16 + (unsigned)hexval(j->s[i + k]);
			i += 4;
			/* a surrogate pair becomes one code point; a lone one U+FFFD */
			if (cp >= 0xd800 && cp <= 0xdbff && i + 6 < j->len && j->s[i + 1] == '\\' &&
			    j->s[i + 2] == 'u') {
				unsigned lo = 0;
				for (int k = 3; k <= 6; k++)
					lo = lo * 16 + (unsigned)hexval(j->s[i + k]);
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				}
			}
			if (cp >= 0xd800 && cp <= 0xdfff)
				cp = 0xfffd;
			if (cp == 0)
				cp = 0xfffd; /* strings are NUL-terminated in etcompare */
			o += put_utf8(out + o, cp);
			break;
		}
		default:
			out[o++] = e;
		}
	}
	out[o] = '\0';
	return out;
}
