/*
 * fuzz_outputs.h - what the fuzz targets check of every output they render
 * from a fuzz input: terminal text shows no control, bidi or invalid byte;
 * JUnit is well-formed XML 1.0; TSV is UTF-8 without NUL, every record with
 * the header's field count. A violation aborts, so libFuzzer reports it.
 */
#ifndef ETC_FUZZ_OUTPUTS_H
#define ETC_FUZZ_OUTPUTS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <etcompare/etcompare.h>

/* An in-memory stream; fuzz_text_close returns its bytes (free them). */
typedef struct fuzz_text {
	FILE *f;
	char *p;
	size_t n;
} fuzz_text;

static inline FILE *fuzz_text_open(fuzz_text *t)
{
	t->p = NULL, t->n = 0;
	t->f = open_memstream(&t->p, &t->n);
	return t->f;
}

static inline void fuzz_text_close(fuzz_text *t)
{
	if (t->f)
		fclose(t->f);
	t->f = NULL;
}

static inline void fuzz_fail(const char *what, const char *p, size_t n, size_t at)
{
	fprintf(stderr, "fuzz: %s at byte %zu of %zu\n", what, at, n);
	fwrite(p, 1, n < 4096 ? n : 4096, stderr);
	abort();
}

/* Length of the UTF-8 sequence at p and its code point; 0 when invalid.
 * Written apart from src/core/utf8.c on purpose: the checker is the oracle
 * for the library's escaping, so a bug in the library's decoder must not
 * also blind the check. */
static inline size_t fuzz_utf8(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned c = p[0];
	size_t len;
	uint32_t min;
	if (c < 0x80)
		return *cp = c, 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	uint32_t v = c & (0x7fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return *cp = v, len;
}

/* Terminal text: UTF-8, no control but the line feed, no C1, no bidi or zero-width. */
static inline void fuzz_check_terminal(const char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = fuzz_utf8((const unsigned char *)p + i, n - i, &cp);
		if (!k)
			fuzz_fail("terminal: invalid UTF-8", p, n, i);
		if ((cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp <= 0x9f))
			fuzz_fail("terminal: control character", p, n, i);
		if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
		    (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || cp == 0x61c)
			fuzz_fail("terminal: invisible format character", p, n, i);
		i += k;
	}
}

static inline bool fuzz_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == ':' || c == '.';
}

/* Character data or an attribute value up to `end`: entities well-formed, no '<'. */
static inline size_t fuzz_xml_chars(const char *p, size_t n, size_t i, char end)
{
	while (i < n && p[i] != end) {
		if (p[i] == '<' && end != '<')
			fuzz_fail("xml: '<' in an attribute", p, n, i);
		if (end == '<' && p[i] == '>' && i >= 2 && p[i - 1] == ']' && p[i - 2] == ']')
			fuzz_fail("xml: ']]>' in text", p, n, i);
		if (p[i] == '&') {
			size_t j = i + 1;
			while (j < n && j - i < 12 && p[j] != ';')
				j++;
			if (j >= n || p[j] != ';' || j == i + 1)
				fuzz_fail("xml: bad entity", p, n, i);
			if (p[i + 1] == '#') {
				for (size_t k = i + 2; k < j; k++)
					if (p[k] < '0' || p[k] > '9')
						fuzz_fail("xml: bad character reference", p, n, i);
				long v = strtol(p + i + 2, NULL, 10);
				if (v != 9 && v != 10 && v != 13 && (v < 0x20 || v > 0x10ffff))
					fuzz_fail("xml: reference to a forbidden character", p, n,
					          i);
			} else if (strncmp(p + i, "&amp;", 5) && strncmp(p + i, "&lt;", 4) &&
			           strncmp(p + i, "&gt;", 4) && strncmp(p + i, "&quot;", 6) &&
			           strncmp(p + i, "&apos;", 6)) {
				fuzz_fail("xml: unknown entity", p, n, i);
			}
			i = j + 1;
			continue;
		}
		i++;
	}
	return i;
}

/* A small well-formedness check: XML 1.0 characters, nested tags, quoted attributes. */
static inline void fuzz_check_xml(const char *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = fuzz_utf8((const unsigned char *)p + i, n - i, &cp);
		if (!k)
			fuzz_fail("xml: invalid UTF-8", p, n, i);
		if ((cp < 0x20 && cp != 9 && cp != 10 && cp != 13) || cp == 0xfffe || cp == 0xffff)
			fuzz_fail("xml: forbidden character", p, n, i);
		i += k;
	}
	const char *stack[16];
	size_t len[16], depth = 0, i = 0;
	bool root_done = false;
	if (n < 5 || strncmp(p, "<?xml", 5))
		fuzz_fail("xml: no declaration", p, n, 0);
	i = strstr(p, "?>") ? (size_t)(strstr(p, "?>") - p) + 2 : n;
	while (i < n) {
		size_t t = fuzz_xml_chars(p, n, i, '<');
		for (size_t k = i; k < t; k++)
			if (depth == 0 && p[k] != '\n' && p[k] != ' ')
				fuzz_fail("xml: text outside the root", p, n, k);
		i = t;
		if (i >= n)
			break;
		bool closing = i + 1 < n && p[i + 1] == '/';
		size_t s = i + 1 + closing, e = s;
		while (e < n && fuzz_name_char(p[e]))
			e++;
		if (e == s)
			fuzz_fail("xml: bad tag name", p, n, i);
		if (closing) {
			if (!depth || len[depth - 1] != e - s ||
			    memcmp(stack[depth - 1], p + s, e - s))
				fuzz_fail("xml: mismatched end tag", p, n, i);
			if (e >= n || p[e] != '>')
				fuzz_fail("xml: bad end tag", p, n, i);
			if (--depth == 0)
				root_done = true;
			i = e + 1;
			continue;
		}
		if (root_done && depth == 0)
			fuzz_fail("xml: second root", p, n, i);
		size_t j = e;
		for (;;) {
			while (j < n && (p[j] == ' ' || p[j] == '\n'))
				j++;
			if (j < n && (p[j] == '>' || p[j] == '/'))
				break;
			size_t a = j;
			while (j < n && fuzz_name_char(p[j]))
				j++;
			if (j == a || j + 1 >= n || p[j] != '=' || p[j + 1] != '"')
				fuzz_fail("xml: bad attribute", p, n, j);
			j = fuzz_xml_chars(p, n, j + 2, '"');
			if (j >= n)
				fuzz_fail("xml: unterminated attribute", p, n, j);
			j++;
		}
		if (j >= n)
			fuzz_fail("xml: unterminated tag", p, n, i);
		if (p[j] == '/') {
			if (j + 1 >= n || p[j + 1] != '>')
				fuzz_fail("xml: bad empty tag", p, n, j);
			if (depth == 0)
				root_done = true;
			i = j + 2;
			continue;
		}
		if (depth == 16)
			fuzz_fail("xml: too deep", p, n, i);
		stack[depth] = p + s, len[depth++] = e - s;
		i = j + 1;
	}
	if (depth || !root_done)
		fuzz_fail("xml: unclosed element", p, n, n);
}

/* TSV as pandas writes it: UTF-8, no NUL, every record as many fields as the header. */
static inline void fuzz_check_tsv(const char *p, size_t n)
{
	size_t fields = 0, want = 0, records = 0;
	bool quoted = false, start = true;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = fuzz_utf8((const unsigned char *)p + i, n - i, &cp);
		if (!k || cp == 0)
			fuzz_fail(k ? "tsv: NUL" : "tsv: invalid UTF-8", p, n, i);
		char c = p[i];
		if (quoted) {
			if (c == '"' && i + 1 < n && p[i + 1] == '"')
				i++;
			else if (c == '"')
				quoted = false;
		} else if (c == '"' && start) {
			quoted = true;
		} else if (c == '\t') {
			fields++;
		} else if (c == '\n') {
			fields++;
			if (records++ == 0)
				want = fields;
			else if (fields != want)
				fuzz_fail("tsv: field count differs from the header", p, n, i);
			fields = 0;
		}
		start = c == '\t' || c == '\n';
		i += k;
	}
	if (quoted)
		fuzz_fail("tsv: unterminated quote", p, n, n);
}

/* The numeric gap's terminal table and TSV, rendered and checked. */
static inline void fuzz_check_numgap_reports(const etc_numgap *ng)
{
	etc_error err;
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_numgap(t.f, ng, &err);
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
	if (fuzz_text_open(&t)) {
		int rc = etc_report_numgap_tsv(t.f, ng, &err);
		fuzz_text_close(&t);
		if (rc == 0)
			fuzz_check_tsv(t.p, t.n);
		free(t.p);
	}
}

#endif
