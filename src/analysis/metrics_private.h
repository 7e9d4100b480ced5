/*
 * metrics_private.h - etc_metrics_compare for consumers inside the library
 * that must also checksum the reference bytes (see npz_private.h).
 */
#ifndef ETC_METRICS_PRIVATE_H
#define ETC_METRICS_PRIVATE_H

#include "etcompare/metrics.h"

#include <stdbool.h>
#include <stdint.h>

/*
 * etc_metrics_compare that also continues *ref_crc (CRC-32) over the
 * reference's raw bytes in the same pass, when both sides are raw float32
 * (*crc_done true). Otherwise *crc_done is false and *ref_crc untouched:
 * the caller checksums the bytes itself.
 */
int etc_metrics_compare_crc_(const etc_values *reference, const etc_values *actual,
                             etc_metrics *out, uint32_t *ref_crc, bool *crc_done, etc_error *err);

/*
 * etc_metrics_compare with the float32 kernel (0 generic, 1 AVX2, 2 AVX-512,
 * 3 the best the CPU has) and the thread count (0: etc_thread_count_ for
 * large pairs) chosen. The thread count never changes the result.
 */
int etc_metrics_compare_threads_(const etc_values *reference, const etc_values *actual,
                                 etc_metrics *out, etc_error *err, int kernel, unsigned threads);

/*
 * Both at once, for the benchmark of the kernels: etc_metrics_compare_crc_
 * with the kernel and the thread count chosen (ref_crc and crc_done may be
 * NULL: no CRC).
 */
int etc_metrics_compare_full_(const etc_values *reference, const etc_values *actual,
                              etc_metrics *out, int kernel, unsigned threads, uint32_t *ref_crc,
                              bool *crc_done, etc_error *err);

#endif
