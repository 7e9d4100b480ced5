/*
 * test_text.c - the string builder's escaping: JSON stays valid UTF-8 and
 * Python-style reprs escape what Python would, whatever bytes a file holds.
 */
#include "check.h"
#include "core/fmt.h"

static const char *json(etc_sbuf *b, const char *s, size_t n)
{
	etc_sbuf_reset(b);
	etc_sbuf_json_str(b, s, n);
	return b->p;
}

static const char *pyrepr(etc_sbuf *b, const char *s, size_t n)
{
	etc_sbuf_reset(b);
	etc_sbuf_pyrepr_str(b, s, n);
	return b->p;
}

int main(void)
{
	etc_sbuf b = {0};
	char num[ETC_FMT_NUM];

	CHECK_STR(json(&b, "plain", 5), "\"plain\"");
	CHECK_STR(json(&b, "q\"b\\n\n\t\x01", 8), "\"q\\\"b\\\\n\\n\\t\\u0001\"");
	CHECK_STR(json(&b, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14),
	          "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	/* stray, overlong, surrogate and truncated sequences */
	CHECK_STR(json(&b, "Ex\xff\xfe", 4), "\"Ex\\ufffd\\ufffd\"");
	CHECK_STR(json(&b, "\xc0\xaf", 2), "\"\\ufffd\\ufffd\"");
	CHECK_STR(json(&b, "\xed\xa0\x80", 3), "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_STR(json(&b, "a\xe2\x82", 3), "\"a\\ufffd\\ufffd\"");
	CHECK_STR(json(&b, "a\0b", 3), "\"a\\u0000b\"");

	CHECK_STR(pyrepr(&b, "abc", 3), "'abc'");
	CHECK_STR(pyrepr(&b, "it's", 4), "\"it's\"");
	CHECK_STR(pyrepr(&b, "'\"", 2), "'\\'\"'");
	CHECK_STR(pyrepr(&b, "\xe2\x82\xac\xff\n", 5), "'\xe2\x82\xac\\xff\\n'");
	CHECK_STR(pyrepr(&b, "\x7f\x1b", 2), "'\\x7f\\x1b'");

	etc_fmt_g(num, -NAN);
	CHECK_STR(num, "nan");
	etc_fmt_g(num, NAN);
	CHECK_STR(num, "nan");
	etc_fmt_g(num, -INFINITY);
	CHECK_STR(num, "-inf");

	etc_sbuf_free(&b);
	return check_report("test_text");
}
