/*
 * utf8.h - decoding one UTF-8 sequence: the one test of what is valid UTF-8
 * for every printer that keeps valid text and escapes or replaces the rest
 * (terminal, XML, TSV/CSV, JSON, Python repr).
 */
#ifndef ETC_CORE_UTF8_H
#define ETC_CORE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1-4) and its code point, or 0
 * when the bytes there are not valid UTF-8 (overlong forms and surrogates
 * included). n > 0 bytes are left at s. */
size_t etc_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

#endif
