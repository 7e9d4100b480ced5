/*
 * text.c - rendering text from input files: the terminal escapes, the XML
 * text of JUnit reports and TSV/CSV fields. Every printer of a name read
 * from a file goes through here, so one table decides what is unsafe.
 */
#include "core/text.h"
#include "core/internal.h"
#include "core/utf8.h"

#include <stdio.h>

/*
 * Code points that a terminal does not show as a glyph of their own: C1
 * controls, and the format characters (Unicode category Cf) that reorder,
 * hide or join text, plus the line and paragraph separators.
 */
static bool invisible(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0xad || (cp >= 0x600 && cp <= 0x605) ||
	       cp == 0x61c || cp == 0x6dd || cp == 0x70f || cp == 0x8e2 || cp == 0x180e ||
	       (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
	       (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
	       (cp >= 0x13430 && cp <= 0x1343f) || (cp >= 0x1bca0 && cp <= 0x1bca3) ||
	       (cp >= 0x1d173 && cp <= 0x1d17a) || cp == 0xe0001 ||
	       (cp >= 0xe0020 && cp <= 0xe007f);
}

size_t etc_text_term_char(const char *s, size_t n, char out[12], size_t *outlen)
{
	unsigned char c = (unsigned char)s[0];
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		*outlen = 1;
		return 1;
	}
	uint32_t cp = 0;
	size_t k = c < 0x80 ? 1 : etc_utf8_decode((const unsigned char *)s, n, &cp);
	if (k == 1 || k == 0) {
		/* C0 control, DEL or a byte that is not UTF-8 */
		*outlen = (size_t)snprintf(out, 12, "\\x%02x", c);
		return 1;
	}
	if (invisible(cp)) {
		*outlen = (size_t)snprintf(out, 12, cp > 0xffff ? "\\U%08x" : "\\u%04x", cp);
		return k;
	}
	memcpy(out, s, k);
	*outlen = k;
	return k;
}

void etc_sbuf_term_str(etc_sbuf *b, const char *s, size_t n)
{
	char out[12];
	size_t len;
	for (size_t i = 0; i < n;) {
		i += etc_text_term_char(s + i, n - i, out, &len);
		etc_sbuf_put(b, out, len);
	}
}

void etc_text_fput(FILE *f, const char *s, size_t n)
{
	char out[12];
	size_t len;
	for (size_t i = 0; i < n;) {
		i += etc_text_term_char(s + i, n - i, out, &len);
		fwrite(out, 1, len, f);
	}
}

const char *etc_text_escape(char *buf, size_t cap, const char *s, size_t n)
{
	if (!buf || !cap)
		return buf;
	if (!s)
		n = 0;           /* NULL is "", as for etc_text_safe */
	size_t at = 0, mark = 0; /* mark: the last character boundary leaving room for "..." */
	char out[12];
	size_t len;
	for (size_t i = 0; i < n;) {
		size_t used = etc_text_term_char(s + i, n - i, out, &len);
		if (at + len + 1 > cap) {
			if (cap >= 4) {
				memcpy(buf + mark, "...", 3);
				at = mark + 3;
			}
			break;
		}
		memcpy(buf + at, out, len);
		at += len;
		i += used;
		if (cap >= 4 && at <= cap - 4)
			mark = at;
	}
	buf[at] = '\0';
	return buf;
}

const char *etc_text_safe(char *buf, size_t cap, const char *s)
{
	return etc_text_escape(buf, cap, s ? s : "", s ? strlen(s) : 0);
}

/* XML 1.0's Char production, for code points already valid in UTF-8. */
static bool xml_char(uint32_t cp)
{
	if (cp < 0x20)
		return cp == 0x9 || cp == 0xa || cp == 0xd;
	return cp != 0xfffe && cp != 0xffff;
}

void etc_sbuf_xml_str(etc_sbuf *b, const char *s, size_t n, size_t max)
{
	size_t start = b->len;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = etc_utf8_decode((const unsigned char *)s + i, n - i, &cp);
		char ent[16];
		const char *piece = s + i;
		size_t plen = k;
		if (!k) {
			piece = "\xef\xbf\xbd", plen = 3, k = 1;
		} else if (!xml_char(cp)) {
			plen = 0;
		} else if (cp == '&' || cp == '<' || cp == '>' || cp == '"' || cp == '\'' ||
		           cp < 0x20) {
			plen = (size_t)snprintf(ent, sizeof ent, "&#%u;", (unsigned)cp);
			piece = ent;
		}
		if (max && b->len - start + plen > max)
			break;
		etc_sbuf_put(b, piece, plen);
		i += k;
	}
}

void etc_sbuf_csv_text(etc_sbuf *b, const char *s, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80) {
			uint32_t cp;
			size_t k = etc_utf8_decode((const unsigned char *)s + i, n - i, &cp);
			if (k) {
				i += k - 1;
				continue;
			}
		} else if (c != 0) {
			continue;
		}
		etc_sbuf_put(b, s + run, i - run);
		etc_sbuf_put(b, "\xef\xbf\xbd", 3);
		run = i + 1;
	}
	etc_sbuf_put(b, s + run, n - run);
}
