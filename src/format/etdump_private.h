/*
 * etdump_private.h - what the format layer's ETDump reader offers the layers
 * above it beyond the public API: giving back the memory of a run that has
 * been read.
 */
#ifndef ETC_ETDUMP_PRIVATE_H
#define ETC_ETDUMP_PRIVATE_H

#include "etcompare/etdump.h"

#include <stdint.h>

/*
 * Drops from the resident set the pages of the mapped ETDump that hold only
 * run's objects (its tables, vectors and strings), for a caller that has
 * read the run and will not come back to it soon. The data stays valid: a
 * later read faults the pages back in from the page cache. Does nothing when
 * the ETDump wraps a caller's buffer, when two runs' objects interleave,
 * for a run smaller than 64 KiB (not worth the call) or out of range.
 */
void etc_etdump_release_run_(const etc_etdump *d, uint32_t run);

#endif
