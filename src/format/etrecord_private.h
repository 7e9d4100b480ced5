/*
 * etrecord_private.h - ETRecord internals for the layers above format/.
 */
#ifndef ETC_ETRECORD_PRIVATE_H
#define ETC_ETRECORD_PRIVATE_H

#include "etcompare/etrecord.h"

/*
 * Gives back the resident pages of the record's mapped file (advice only;
 * a later read faults them in again). For callers that have converted what
 * they need, e.g. the reference executor after reading the weights. No
 * effect on a record read into memory or wrapped.
 */
void etc_etrecord_release_pages(const etc_etrecord *rec);
/* The same for the pages of [p, p + len) when they lie in the mapped file. */
void etc_etrecord_release_range(const etc_etrecord *rec, const void *p, size_t len);
/* [p, p + len) lies in the record's own bytes (the file, mapped or read, or
 * the wrapped buffer), which stay valid as long as the record. */
bool etc_etrecord_contains(const etc_etrecord *rec, const void *p, size_t len);

#endif
