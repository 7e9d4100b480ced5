/*
 * npz_private.h - deferred CRC-32 checks of stored .npz members, for
 * consumers inside the library that stream an array's data anyway.
 *
 * etc_npz_array verifies a stored member's CRC-32 on every call before it
 * hands out the view. The accuracy comparison instead takes the view with
 * etc_npz_array_deferred_, folds the CRC of the data into its own pass
 * (etc_metrics_compare_crc_) and calls etc_npz_crc_end_ before it reports
 * anything: one read of the data instead of two.
 */
#ifndef ETC_NPZ_PRIVATE_H
#define ETC_NPZ_PRIVATE_H

#include "etcompare/npz.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct etc_npz_crc {
	bool pending; /* false: nothing left to check */
	size_t item;
	uint32_t crc; /* CRC-32 of the member's bytes before the data */
} etc_npz_crc;

/* etc_npz_array without the check; *check says what is left to verify. */
int etc_npz_array_deferred_(const etc_npz *z, size_t i, etc_tensor *out, etc_npz_crc *check,
                            etc_error *err);
/* Starts a check of array i (a no-op check when its member needs none). */
void etc_npz_crc_begin_(const etc_npz *z, size_t i, etc_npz_crc *check);
/* `crc` continues check->crc over the whole data; ETC_ERR_FORMAT on a mismatch. */
int etc_npz_crc_end_(const etc_npz *z, const etc_npz_crc *check, uint32_t crc, etc_error *err);

#endif
