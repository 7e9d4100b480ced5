/*
 * test_crc.c - the carry-less-multiplication CRC-32 of zipread.c agrees with
 * zlib's crc32 on random data of every length class, offset and seed.
 */
#include "check.h"
#include "zipread.h"

#include <stdlib.h>
#include <zlib.h>

int main(void)
{
	size_t N = 1 << 20;
	uint8_t *b = malloc(N + 64);
	if (!b)
		return 1;
	srand(7);
	for (size_t i = 0; i < N + 64; i++)
		b[i] = (uint8_t)rand();
	for (int t = 0; t < 4000; t++) {
		size_t off = (size_t)rand() % 64;
		size_t len = (size_t)rand() % (t < 2000 ? 2000 : N);
		uint32_t seed = t % 3 == 0 ? 0 : (uint32_t)rand();
		CHECK(etc_crc32(seed, b + off, len) == (uint32_t)crc32(seed, b + off, (uInt)len));
	}
	free(b);
	return check_report("test_crc");
}
