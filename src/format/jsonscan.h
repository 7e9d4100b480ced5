/*
 * jsonscan.h - a zero-copy JSON pull scanner for the one large JSON member
 * of an ETRecord (the Edge program: tens of megabytes, of which etcompare
 * needs a few fields per node). jansson builds a tree of the whole text and
 * runs at ~25 MB/s on it; this scanner walks the text once, validates the
 * grammar (RFC 8259: structure, string escapes, number syntax, nesting bound,
 * nothing after the value) and hands out strings as spans of the input.
 */
#ifndef ETC_JSONSCAN_H
#define ETC_JSONSCAN_H

#include "core/internal.h"

typedef enum etc_jtok {
	ETC_J_EOF = 0,
	ETC_J_OBJECT, /* '{' */
	ETC_J_OBJECT_END,
	ETC_J_ARRAY, /* '[' */
	ETC_J_ARRAY_END,
	ETC_J_KEY, /* an object key: span in s/len (still escaped) */
	ETC_J_STRING,
	ETC_J_NUMBER, /* span of the number's text */
	ETC_J_TRUE,
	ETC_J_FALSE,
	ETC_J_NULL
} etc_jtok;

typedef struct etc_jscan {
	const char *begin, *p, *end;
	int depth, max_depth;
	/* grammar state: what may come next in the current container */
	unsigned char stack[128]; /* 'o' or 'a' per open container */
	int need;                 /* 0 value, 1 key, 2 comma-or-close, 3 first-or-close */
	bool done;
	const char *file, *member; /* for messages */
	int64_t base;              /* offset of `begin` in `file` */
	etc_error *err;
	/* the current token */
	const char *s;
	size_t len;
	bool escaped; /* the string span holds escapes: decode with etc_jscan_string */
} etc_jscan;

void etc_jscan_init(etc_jscan *j, const char *data, size_t size, int max_depth, const char *file,
                    const char *member, int64_t base, etc_error *err);
/* Reads the next token into *tok; 0 or a negative status (ETC_ERR_FORMAT/LIMIT). */
int etc_jscan_next(etc_jscan *j, etc_jtok *tok);
/* After a value-start token (object, array, scalar): skips to its end. */
int etc_jscan_skip(etc_jscan *j, etc_jtok tok);
/* Decodes the current string token (escapes resolved) into the arena. */
char *etc_jscan_string(const etc_jscan *j, etc_arena *a);
/* Key equality on the current token without decoding (keys here are plain ASCII). */
bool etc_jscan_key_is(const etc_jscan *j, const char *key);
/* A format error at the current position. */
int etc_jscan_fail(etc_jscan *j, const char *fmt, ...) ETC_PRINTF(2, 3);

#endif
