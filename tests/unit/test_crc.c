/*
 * test_crc.c - every CRC-32 kernel of crc32.c (zlib, PCLMULQDQ, VPCLMULQDQ)
 * agrees with zlib's crc32 on random data of every length class, offset and
 * seed.
 */
#include "check.h"
#include "core/internal.h"

#include <stdlib.h>
#include <zlib.h>

uint32_t etc_crc32_kernel_(uint32_t crc, const uint8_t *p, size_t n, int kernel);

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
		uint32_t want = (uint32_t)crc32(seed, b + off, (uInt)len);
		CHECK(etc_crc32(seed, b + off, len) == want);
		for (int k = 0; k < 3; k++)
			CHECK(etc_crc32_kernel_(seed, b + off, len, k) == want);
	}
	/* every length around the kernels' thresholds and step sizes */
	for (size_t len = 0; len < 1400; len++)
		for (int k = 0; k < 4; k++)
			CHECK(etc_crc32_kernel_(0x12345678u, b + 3, len, k) ==
			      (uint32_t)crc32(0x12345678u, b + 3, (uInt)len));
	free(b);
	return check_report("test_crc");
}
