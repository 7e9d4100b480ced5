/*
 * text.h - the one place that decides how text from an input file is
 * rendered: on a terminal (visible escapes), in XML (JUnit) and in TSV/CSV
 * (as pandas writes text decoded with errors="replace").
 */
#ifndef ETC_CORE_TEXT_H
#define ETC_CORE_TEXT_H

#include "core/fmt.h"
#include "etcompare/text.h"

#include <stdint.h>

/*
 * The terminal rendering of the character at s (n > 0 bytes left): writes
 * at most 12 bytes to out, sets *outlen, returns the bytes consumed.
 */
size_t etc_text_term_char(const char *s, size_t n, char out[12], size_t *outlen);

/* Appends s[0..n) rendered for a terminal (etc_text_term_char). */
void etc_sbuf_term_str(etc_sbuf *b, const char *s, size_t n);
/* Writes s[0..n) rendered for a terminal. */
void etc_text_fput(FILE *f, const char *s, size_t n);

/*
 * Appends s[0..n) as XML 1.0 text or attribute content: & < > " ' as
 * entities, invalid UTF-8 as U+FFFD, characters XML 1.0 forbids dropped.
 * At most `max` bytes of output are appended (0: no limit), cut at a
 * character boundary.
 */
void etc_sbuf_xml_str(etc_sbuf *b, const char *s, size_t n, size_t max);

/* Appends s[0..n) for a TSV/CSV field: NUL and invalid UTF-8 as U+FFFD. */
void etc_sbuf_csv_text(etc_sbuf *b, const char *s, size_t n);

#endif
