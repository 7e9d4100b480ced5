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

/* The sums behind a comparison's metrics (etc_metrics_compare_sums_). */
typedef struct etc_metrics_sums {
	double rr, aa, dd; /* sum r^2, a^2, d^2 over the compared positions (as the metrics) */
	double xx;         /* sum (a - x)^2 of the extra reference over every position */
} etc_metrics_sums;

/*
 * etc_metrics_compare (the same bits; kernel and threads as
 * etc_metrics_compare_threads_)
 * that also returns the sums behind the metrics and, when `extra` (as many
 * elements as actual) is not NULL, sum (a - x)^2 of a second reference x in
 * the same read of the actual values: the plain sum over every position (no
 * a == x test, no NaN exclusion: NaN and inf - inf give NaN), as content
 * pairing's direct sums. Content pairing confirms its runner-up with it while
 * it compares the run with the best (src/analysis/pairing.c). ref_crc and
 * crc_done as etc_metrics_compare_full_ (NULL: no CRC).
 */
int etc_metrics_compare_sums_(const etc_values *reference, const etc_values *actual,
                              const etc_values *extra, etc_metrics *out, etc_metrics_sums *sums,
                              int kernel, unsigned threads, uint32_t *ref_crc, bool *crc_done,
                              etc_error *err);

#endif
