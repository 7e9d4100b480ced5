/*
 * fuzz.h - what every fuzz target shares: the libFuzzer entry point's
 * declaration, a sink for reports, and splitting one input into parts.
 *
 * Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput. The same
 * file is linked with libFuzzer (clang, -DETC_FUZZ=ON) and with
 * replay_main.c (any compiler) to replay corpus/<name>/ and crashers/<name>/
 * under ctest. Parts are copied into buffers of their exact size so that
 * AddressSanitizer catches a read one byte past any of them.
 */
#ifndef ETC_FUZZ_H
#define ETC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A stream that discards what reports write (opened once per process). */
static inline FILE *fuzz_sink(void)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	return sink;
}

/* An exact-size heap copy of `n` bytes (never NULL unless out of memory). */
static inline uint8_t *fuzz_copy(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);
	if (q && n)
		memcpy(q, p, n);
	return q;
}

/*
 * Splits data into two parts at a little-endian uint32 length prefix:
 * part one is the next min(prefix, rest) bytes, part two the remainder.
 * Returns 0, or -1 when the input is shorter than the prefix.
 */
static inline int fuzz_split(const uint8_t *data, size_t size, uint8_t **a, size_t *alen,
                             uint8_t **b, size_t *blen)
{
	if (size < 4)
		return -1;
	size_t n =
	    (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
	data += 4, size -= 4;
	if (n > size)
		n = size;
	*alen = n, *blen = size - n;
	*a = fuzz_copy(data, n);
	*b = fuzz_copy(data + n, size - n);
	if (!*a || !*b) {
		free(*a), free(*b);
		return -1;
	}
	return 0;
}

#endif
