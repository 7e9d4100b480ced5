/*
 * bench_equal.c - the Inspector's merged-runs equality check in isolation:
 * ways of testing two equal tensors for equality, on a file such as the
 * debug buffer of bench/run.sh's table-only case.
 *
 *   bench_equal FILE [TENSOR_BYTES]   (default 16384: 4k float32)
 *
 * The file is mapped twice: one mapping is read through first (the "run 1"
 * side, resident), the other is mapped fresh for each pass and compared
 * tensor by tensor against it, so both sides hold the same bytes and every
 * byte is compared. "cold" = map + compare + unmap of the fresh mapping
 * (what a table-only run pays: the later runs' tensors are not yet mapped
 * in the process), "mapped" = a second pass over the same mapping. Best of
 * 7 per variant, variants interleaved.
 */
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int eq_memcmp(const uint8_t *a, const uint8_t *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

/* The check as it was until 2026-11-24: 1 KiB blocks, prefetch 2 KiB ahead. */
static int eq_blocks_prefetch(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + 1024 <= n; i += 1024) {
		for (size_t k = 0; k < 1024; k += 64) {
			__builtin_prefetch(a + i + k + 2048);
			__builtin_prefetch(b + i + k + 2048);
		}
		if (memcmp(a + i, b + i, 1024) != 0)
			return 0;
	}
	return memcmp(a + i, b + i, n - i) == 0;
}

static int eq_memcmp_pages(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + 4096 <= n; i += 4096)
		if (memcmp(a + i, b + i, 4096) != 0)
			return 0;
	return memcmp(a + i, b + i, n - i) == 0;
}

/* 64-bit XOR/OR over each 4 KiB page, one test per page. */
static int eq_xor_pages(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + 4096 <= n; i += 4096) {
		uint64_t d = 0;
		for (size_t j = 0; j < 4096; j += 8) {
			uint64_t x, y;
			memcpy(&x, a + i + j, 8);
			memcpy(&y, b + i + j, 8);
			d |= x ^ y;
		}
		if (d)
			return 0;
	}
	return memcmp(a + i, b + i, n - i) == 0;
}

typedef int (*eq_fn)(const uint8_t *, const uint8_t *, size_t);

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_equal FILE [TENSOR_BYTES]\n");
		return 2;
	}
	size_t t = argc == 3 ? strtoul(argv[2], NULL, 10) : 16384;
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || t == 0 || (size_t)st.st_size < t) {
		fprintf(stderr, "bench_equal: cannot use %s\n", argv[1]);
		return 1;
	}
	size_t size = (size_t)st.st_size, count = size / t;
	const uint8_t *warm = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (warm == MAP_FAILED)
		return 1;
	volatile uint8_t sink = 0;
	for (size_t o = 0; o < size; o += 4096)
		sink += warm[o];

	static const eq_fn fns[] = {eq_memcmp, eq_blocks_prefetch, eq_memcmp_pages, eq_xor_pages};
	static const char *const names[] = {"memcmp per tensor", "1 KiB blocks + prefetch",
	                                    "memcmp per 4 KiB", "64-bit XOR/OR per 4 KiB"};
	enum { NV = sizeof fns / sizeof fns[0] };
	double cold[NV], mapped[NV];
	for (int v = 0; v < NV; v++)
		cold[v] = mapped[v] = 1e9;
	for (int rep = 0; rep < 7; rep++) {
		for (int v = 0; v < NV; v++) {
			double t0 = now();
			const uint8_t *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (p == MAP_FAILED)
				return 1;
			size_t equal = 0;
			for (size_t k = 0; k < count; k++)
				equal += (size_t)fns[v](warm + k * t, p + k * t, t);
			double t1 = now();
			for (size_t k = 0; k < count; k++)
				equal += (size_t)fns[v](warm + k * t, p + k * t, t);
			double t2 = now();
			munmap((void *)p, size);
			double t3 = now();
			if (equal != 2 * count) {
				fprintf(stderr, "bench_equal: %s found a difference\n", names[v]);
				return 1;
			}
			if (t1 - t0 + t3 - t2 < cold[v])
				cold[v] = t1 - t0 + t3 - t2;
			if (t2 - t1 < mapped[v])
				mapped[v] = t2 - t1;
		}
	}
	printf("%zu tensors of %zu bytes (%.1f MB)\n", count, t, (double)(count * t) / 1e6);
	for (int v = 0; v < NV; v++)
		printf("%-26s cold %6.2f ms (%5.1f GB/s)   mapped %6.2f ms (%5.1f GB/s)\n",
		       names[v], cold[v] * 1e3, (double)(count * t) / cold[v] / 1e9,
		       mapped[v] * 1e3, (double)(count * t) / mapped[v] / 1e9);
	close(fd);
	(void)sink; /* read once: the warm-up reads must happen */
	return 0;
}
