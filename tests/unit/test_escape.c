/*
 * test_escape.c - core/text.c: the terminal escapes of every character
 * class, truncation at character boundaries, XML text (JUnit) and TSV/CSV
 * text (NUL and invalid UTF-8 as U+FFFD).
 */
#include "check.h"
#include "core/text.h"

#include <stdlib.h>

static const char *term(char *buf, size_t cap, const char *s, size_t n)
{
	return etc_text_escape(buf, cap, s, n);
}

static const char *xml(etc_sbuf *b, const char *s, size_t n, size_t max)
{
	etc_sbuf_reset(b);
	etc_sbuf_xml_str(b, s, n, max);
	etc_sbuf_put(b, "", 1);
	return b->p;
}

static const char *csv(etc_sbuf *b, const char *s, size_t n)
{
	etc_sbuf_reset(b);
	etc_sbuf_csv_text(b, s, n);
	etc_sbuf_put(b, "", 1);
	return b->p;
}

int main(void)
{
	char buf[256];
	etc_sbuf b = {0};

	/* what stays as it is: ASCII, accented letters, CJK, emoji, backslash */
	CHECK_STR(term(buf, sizeof buf, "a b\\c", 5), "a b\\c");
	CHECK_STR(term(buf, sizeof buf, "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80", 14),
	          "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
	/* C0 controls and DEL */
	CHECK_STR(term(buf, sizeof buf, "\x1b[2J\x07\r\n\t\x7f", 9),
	          "\\x1b[2J\\x07\\x0d\\x0a\\x09\\x7f");
	CHECK_STR(term(buf, sizeof buf, "a\0b", 3), "a\\x00b");
	/* C1 controls (U+0085 NEL, U+009B CSI) */
	CHECK_STR(term(buf, sizeof buf, "\xc2\x85\xc2\x9b", 4), "\\u0085\\u009b");
	/* bidi overrides and isolates, zero-width, separators, BOM, tags */
	CHECK_STR(term(buf, sizeof buf,
	               "\xe2\x80\xae\xe2\x81\xa6\xe2\x80\x8b\xe2\x80\xa8\xef\xbb\xbf", 15),
	          "\\u202e\\u2066\\u200b\\u2028\\ufeff");
	CHECK_STR(term(buf, sizeof buf, "\xf3\xa0\x80\x81", 4), "\\U000e0001");
	/* invalid UTF-8: stray bytes, overlong forms, surrogates, a cut sequence */
	CHECK_STR(term(buf, sizeof buf, "\xff\xc0\xaf", 3), "\\xff\\xc0\\xaf");
	CHECK_STR(term(buf, sizeof buf, "\xed\xa0\x80", 3), "\\xed\\xa0\\x80");
	CHECK_STR(term(buf, sizeof buf, "x\xe2\x82", 3), "x\\xe2\\x82");
	/* idempotent: an escaped text is left as it is */
	CHECK_STR(term(buf, sizeof buf, "\\x1b\\u202e", 10), "\\x1b\\u202e");
	/* truncation keeps whole characters and whole escapes, then "..." */
	CHECK_STR(term(buf, 8, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8), "\xc3\xa9\xc3\xa9...");
	CHECK_STR(term(buf, 9, "ab\x1b\x1b\x1b", 5), "ab...");
	CHECK_STR(term(buf, 7, "abcdef", 6), "abcdef");
	CHECK_STR(term(buf, 4, "abcdef", 6), "...");
	CHECK_STR(etc_text_safe(buf, sizeof buf, NULL), "");

	/* XML: entities, U+FFFD for invalid bytes, forbidden characters dropped */
	CHECK_STR(xml(&b, "a<b>&\"'", 7, 0), "a&#60;b&#62;&#38;&#34;&#39;");
	CHECK_STR(xml(&b, "x\xffy", 3, 0), "x\xef\xbf\xbdy");
	CHECK_STR(xml(&b, "\x01\x1b\tz\xef\xbf\xbe", 7, 0), "&#9;z");
	CHECK_STR(xml(&b, "\n\r", 2, 0), "&#10;&#13;");
	/* a limit never cuts a character */
	CHECK_STR(xml(&b, "\xc3\xa9\xc3\xa9\xc3\xa9", 6, 5), "\xc3\xa9\xc3\xa9");

	/* TSV/CSV text: NUL and invalid UTF-8 as U+FFFD, the rest kept */
	CHECK_STR(csv(&b, "a\0b\xff\xe2\x80\xae", 7), "a\xef\xbf\xbd"
	                                              "b\xef\xbf\xbd\xe2\x80\xae");
	CHECK_STR(csv(&b, "tab\there", 8), "tab\there");

	etc_sbuf_free(&b);
	return check_report("test_escape");
}
