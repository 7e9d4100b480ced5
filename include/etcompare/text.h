/*
 * etcompare/text.h - making text from input files safe to print on a
 * terminal. Names, paths and messages read from a file may hold escape
 * sequences, line breaks or bidi overrides that would forge or hide output;
 * this renders every such character as a visible escape.
 */
#ifndef ETCOMPARE_TEXT_H
#define ETCOMPARE_TEXT_H

#include "common.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Copies `n` bytes of `s` into `buf` (`cap` bytes, NUL-terminated) for a
 * terminal: C0 controls, DEL and bytes that are not UTF-8 become "\xNN",
 * C1 controls and the invisible format characters (bidi overrides and
 * isolates, zero-width characters, line and paragraph separators, tags)
 * become "\uNNNN"; everything else is copied. When `buf` is too small the
 * text ends with "..." at a character boundary. A NULL `s` is "". Returns
 * `buf`.
 */
ETC_API const char *etc_text_escape(char *buf, size_t cap, const char *s, size_t n);

/** etc_text_escape of a NUL-terminated string (NULL is ""). */
ETC_API const char *etc_text_safe(char *buf, size_t cap, const char *s);

#ifdef __cplusplus
}
#endif
#endif
