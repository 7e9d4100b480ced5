/*
 * limit.c - the read limit of a benchmark's input files, measured on this
 * machine in the same run as the case it judges (bench/run.sh):
 *   mmap-and-sum  every file mapped afresh (as etcompare maps it), summed as
 *           float32 on one core and unmapped: the rate at which any process
 *           that reads each byte once can go on one core, page faults
 *           included, page cache warm;
 *   sum     the same sum over mappings already faulted in (memory alone);
 *   memcpy  the same bytes copied into a buffer (one core).
 * The files are read once untimed first (page cache warm); then each probe
 * runs K times and the best is kept. Output, one line:
 * "mmap-and-sum GBPS sum GBPS memcpy GBPS BYTES".
 *
 * Usage: limit [--repeat K] FILE...
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sum_floats.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

typedef struct file {
	const float *p;
	size_t bytes;
} file;

int main(int argc, char **argv)
{
	int repeat = 5, first = 1;
	if (argc > 2 && !strcmp(argv[1], "--repeat")) {
		repeat = atoi(argv[2]);
		first = 3;
	}
	if (first >= argc || repeat < 1) {
		fprintf(stderr, "usage: limit [--repeat K] FILE...\n");
		return 2;
	}
	int nf = argc - first;
	file *fs = calloc((size_t)nf, sizeof *fs);
	size_t total = 0, largest = 0;
	volatile double sink = 0;
	for (int i = 0; i < nf; i++) {
		int fd = open(argv[first + i], O_RDONLY);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			perror(argv[first + i]);
			return 1;
		}
		fs[i].bytes = (size_t)st.st_size;
		void *m =
		    fs[i].bytes ? mmap(NULL, fs[i].bytes, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
		close(fd);
		if (m == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		fs[i].p = m;
		total += fs[i].bytes;
		if (fs[i].bytes > largest)
			largest = fs[i].bytes;
		sink += sum_floats(fs[i].p, fs[i].bytes / 4); /* map and fault in, untimed */
	}
	char *buf = malloc(largest ? largest : 1);
	if (!buf)
		return 1;
	memset(buf, 1, largest); /* fault the destination in: memcpy measures copying */
	double best_fresh = 0, best_sum = 0, best_copy = 0;
	for (int k = 0; k < repeat; k++) {
		double t0 = now();
		for (int i = 0; i < nf; i++) {
			int fd = open(argv[first + i], O_RDONLY);
			void *m = fs[i].bytes && fd >= 0
			              ? mmap(NULL, fs[i].bytes, PROT_READ, MAP_PRIVATE, fd, 0)
			              : MAP_FAILED;
			if (fd >= 0)
				close(fd);
			if (m == MAP_FAILED)
				continue;
			sink += sum_floats(m, fs[i].bytes / 4);
			munmap(m, fs[i].bytes);
		}
		double r = (double)total / (now() - t0) / 1e9;
		best_fresh = r > best_fresh ? r : best_fresh;
		t0 = now();
		for (int i = 0; i < nf; i++)
			sink += sum_floats(fs[i].p, fs[i].bytes / 4);
		r = (double)total / (now() - t0) / 1e9;
		best_sum = r > best_sum ? r : best_sum;
		t0 = now();
		for (int i = 0; i < nf; i++)
			memcpy(buf, fs[i].p, fs[i].bytes);
		r = (double)total / (now() - t0) / 1e9;
		sink += buf[largest / 2];
		best_copy = r > best_copy ? r : best_copy;
	}
	printf("mmap-and-sum %.2f sum %.2f memcpy %.2f %zu\n", best_fresh, best_sum, best_copy,
	       total);
	free(buf);
	free(fs);
	(void)sink; /* read once: the sums must be computed */
	return 0;
}
