/*
 * crc32.c - CRC-32 (the zip/gzip polynomial, bit-reflected) of large
 * buffers, for checking stored zip members that are gigabytes long.
 *
 * Carry-less multiplication folds the message into a 128-bit remainder that
 * is congruent to it modulo P (the method of Intel's "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ"); zlib then finishes the CRC of
 * that remainder and of the tail, which avoids a hand-written Barrett
 * reduction. A fold by D bits multiplies the low and high 64-bit halves of
 * each 128-bit lane by x^(D+32) and x^(D-32) mod P (bit-reflected, shifted
 * left by one), the constants below for D = 128, 512 and 2048.
 *
 * Kernels: zlib's table code; PCLMULQDQ on four 128-bit lanes (64 bytes a
 * step, about 3x zlib); VPCLMULQDQ on four 512-bit registers (256 bytes a
 * step) where the CPU has AVX-512, or on four 256-bit registers (128
 * bytes a step) where it has VPCLMULQDQ without AVX-512 (AMD Zen 3): the
 * comparison of an .npz reference folds the CRC into its pass, so the CRC's
 * speed is part of the comparison's.
 */
#include "core/internal.h"

#include <zlib.h>

/* zlib's crc32 on any length (it takes uInt lengths). */
static uint32_t crc32_zlib(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n) {
		uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
		crc = (uint32_t)crc32(crc, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return crc;
}

enum { KERNEL_ZLIB, KERNEL_PCLMUL, KERNEL_VPCLMUL, KERNEL_BEST };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define K128_LO 0x1751997d0LL /* x^160 */
#define K128_HI 0x0ccaa009eLL /* x^96 */
#define K512_LO 0x154442bd4LL /* x^544 */
#define K512_HI 0x1c6e41596LL /* x^480 */
#define K1K_LO  0x1e88ef372LL /* x^1056 */
#define K1K_HI  0x14a7fe880LL /* x^992 */
#define K2K_LO  0x11542778aLL /* x^2080 */
#define K2K_HI  0x1322d1430LL /* x^2016 */

__attribute__((target("pclmul,sse4.1"))) static __m128i fold128(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(
	    _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
	    next);
}

/*
 * Finishes four lanes that stand for the 64 bytes before p: folds them into
 * one, then 16 bytes at a time, then lets zlib take the remainder and tail.
 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
finish(__m128i x0, __m128i x1, __m128i x2, __m128i x3, const uint8_t *p, size_t n)
{
	const __m128i k128 = _mm_set_epi64x(K128_HI, K128_LO);
	x0 = fold128(x0, k128, x1);
	x0 = fold128(x0, k128, x2);
	x0 = fold128(x0, k128, x3);
	while (n >= 16) {
		x0 = fold128(x0, k128, _mm_loadu_si128((const __m128i *)p));
		p += 16;
		n -= 16;
	}
	uint8_t rem[16];
	_mm_storeu_si128((__m128i *)rem, x0);
	/* raw CRC of the remainder from state 0, then the tail */
	uint32_t raw = ~(uint32_t)crc32(0xffffffffu, rem, 16);
	return crc32_zlib(~raw, p, n);
}

/* n >= 64 */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_pclmul(uint32_t crc,
                                                                      const uint8_t *p, size_t n)
{
	const __m128i k512 = _mm_set_epi64x(K512_HI, K512_LO);
	__m128i x0 = _mm_loadu_si128((const __m128i *)p);
	__m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	__m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
	__m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)~crc));
	p += 64;
	n -= 64;
	while (n >= 64) {
		x0 = fold128(x0, k512, _mm_loadu_si128((const __m128i *)p));
		x1 = fold128(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold128(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold128(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		n -= 64;
	}
	return finish(x0, x1, x2, x3, p, n);
}

#define VPCLMUL_TARGET "avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"

__attribute__((target(VPCLMUL_TARGET))) static __m512i fold512(__m512i x, __m512i k, __m512i next)
{
	/* 0x96: a ^ b ^ c */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
	                                 _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/* n >= 256 */
__attribute__((target(VPCLMUL_TARGET))) static uint32_t crc32_vpclmul(uint32_t crc,
                                                                      const uint8_t *p, size_t n)
{
	const __m512i k2k = _mm512_broadcast_i32x4(_mm_set_epi64x(K2K_HI, K2K_LO));
	const __m512i k512 = _mm512_broadcast_i32x4(_mm_set_epi64x(K512_HI, K512_LO));
	__m512i z0 = _mm512_loadu_si512(p), z1 = _mm512_loadu_si512(p + 64);
	__m512i z2 = _mm512_loadu_si512(p + 128), z3 = _mm512_loadu_si512(p + 192);
	z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)~crc)));
	p += 256;
	n -= 256;
	while (n >= 256) {
		z0 = fold512(z0, k2k, _mm512_loadu_si512(p));
		z1 = fold512(z1, k2k, _mm512_loadu_si512(p + 64));
		z2 = fold512(z2, k2k, _mm512_loadu_si512(p + 128));
		z3 = fold512(z3, k2k, _mm512_loadu_si512(p + 192));
		p += 256;
		n -= 256;
	}
	/* each register's lanes are 64 bytes ahead of the previous one's */
	z1 = fold512(z0, k512, z1);
	z2 = fold512(z1, k512, z2);
	z3 = fold512(z2, k512, z3);
	while (n >= 64) {
		z3 = fold512(z3, k512, _mm512_loadu_si512(p));
		p += 64;
		n -= 64;
	}
	return finish(_mm512_extracti32x4_epi32(z3, 0), _mm512_extracti32x4_epi32(z3, 1),
	              _mm512_extracti32x4_epi32(z3, 2), _mm512_extracti32x4_epi32(z3, 3), p, n);
}

#define VPCLMUL256_TARGET "avx2,vpclmulqdq,pclmul,sse4.1"

__attribute__((target(VPCLMUL256_TARGET))) static __m256i fold256(__m256i x, __m256i k,
                                                                  __m256i next)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
	                                         _mm256_clmulepi64_epi128(x, k, 0x11)),
	                        next);
}

/* n >= 128 */
__attribute__((target(VPCLMUL256_TARGET))) static uint32_t
crc32_vpclmul256(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m256i k1k = _mm256_broadcastsi128_si256(_mm_set_epi64x(K1K_HI, K1K_LO));
	const __m256i k256 = _mm256_broadcastsi128_si256(_mm_set_epi64x(K512_HI, K512_LO));
	__m256i y0 = _mm256_loadu_si256((const __m256i *)p);
	__m256i y1 = _mm256_loadu_si256((const __m256i *)(p + 32));
	__m256i y2 = _mm256_loadu_si256((const __m256i *)(p + 64));
	__m256i y3 = _mm256_loadu_si256((const __m256i *)(p + 96));
	y0 = _mm256_xor_si256(y0, _mm256_zextsi128_si256(_mm_cvtsi32_si128((int)~crc)));
	p += 128;
	n -= 128;
	while (n >= 128) {
		y0 = fold256(y0, k1k, _mm256_loadu_si256((const __m256i *)p));
		y1 = fold256(y1, k1k, _mm256_loadu_si256((const __m256i *)(p + 32)));
		y2 = fold256(y2, k1k, _mm256_loadu_si256((const __m256i *)(p + 64)));
		y3 = fold256(y3, k1k, _mm256_loadu_si256((const __m256i *)(p + 96)));
		p += 128;
		n -= 128;
	}
	/* y0 and y2 are 64 bytes apart (512 bits), as are y1 and y3 */
	y2 = fold256(y0, k256, y2);
	y3 = fold256(y1, k256, y3);
	/* the 16-byte lanes, in the order of the bytes they stand for */
	return finish(_mm256_castsi256_si128(y2), _mm256_extracti128_si256(y2, 1),
	              _mm256_castsi256_si128(y3), _mm256_extracti128_si256(y3, 1), p, n);
}
#endif

/*
 * Not exported: etc_crc32 with the kernel chosen (0 zlib, 1 PCLMULQDQ,
 * 2 VPCLMULQDQ, 3 the best; one the CPU lacks falls back to the next
 * below), for the unit tests.
 */
uint32_t etc_crc32_kernel_(uint32_t crc, const uint8_t *p, size_t n, int kernel);

uint32_t etc_crc32_kernel_(uint32_t crc, const uint8_t *p, size_t n, int kernel)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (kernel >= KERNEL_VPCLMUL && n >= 1024 && __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") &&
	    __builtin_cpu_supports("pclmul"))
		return crc32_vpclmul(crc, p, n);
	if (kernel >= KERNEL_VPCLMUL && n >= 1024 && __builtin_cpu_supports("avx2") &&
	    __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul"))
		return crc32_vpclmul256(crc, p, n);
	if (kernel >= KERNEL_PCLMUL && n >= 256 && __builtin_cpu_supports("pclmul") &&
	    __builtin_cpu_supports("sse4.1"))
		return crc32_pclmul(crc, p, n);
#endif
	(void)kernel;
	return crc32_zlib(crc, p, n);
}

uint32_t etc_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	return etc_crc32_kernel_(crc, p, n, KERNEL_BEST);
}
