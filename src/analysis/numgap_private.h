/*
 * numgap_private.h - the grouping core of the numeric gap, exposed to the
 * unit tests and the benchmark: connected components of items that share
 * debug handles.
 */
#ifndef ETC_NUMGAP_PRIVATE_H
#define ETC_NUMGAP_PRIVATE_H

#include "etcompare/common.h"

#include <stddef.h>
#include <stdint.h>

/* An item's key: `count` debug handles at `handles` (any order, repeats allowed). */
typedef struct etc_ng_key {
	const int64_t *handles;
	uint32_t count;
} etc_ng_key;

/*
 * Writes comp[i], the component of item i, for `n` items: items sharing a
 * handle, directly or through others, get the same component. Components
 * are numbered 0.. in order of their first item; *ncomp gets their number.
 * An item without handles is a component of its own. Sorts the (handle,
 * item) pairs and runs a union-find over the items: O(h log h) for h
 * handles in all. Returns 0 or ETC_ERR_NOMEM.
 */
int etc_numgap_components_(const etc_ng_key *keys, size_t n, uint32_t *comp, size_t *ncomp,
                           etc_error *err);

#endif
