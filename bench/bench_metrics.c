/*
 * bench_metrics.c - throughput and memory of etc_metrics_compare on two
 * large float32 tensors (1 GiB each by default), against the machine's
 * limit measured in the same run.
 *
 * Usage: bench_metrics [--mib N] [--repeat K] [--malloc] [--dir DIR]
 *
 * The inputs are written to two temporary files in DIR (default $TMPDIR or
 * /tmp), mapped read-only and unlinked, like a debug buffer; --malloc keeps
 * them in anonymous memory instead. A first untimed comparison warms the page
 * cache and the mappings. Then, K times in turn (the best of each is kept,
 * so machine load hurts every line alike):
 *   - limit: the sum of both inputs as float32 on one core (what any pass
 *     that reads every byte once can reach), and memcpy of one input;
 *   - etc_metrics_compare with ETC_THREADS=1 and with ETC_THREADS=2.
 * Throughput counts the bytes of both inputs (2 x N MiB) per second; each
 * comparison line also gives its fraction of the one-core sum rate. The two
 * thread counts must give the same bits (checked: exit 1 otherwise).
 *
 * Extra memory is the peak resident set during one comparison minus the
 * resident set just before it (inputs already resident), measured by
 * resetting the kernel's high-water mark (/proc/self/clear_refs, "5").
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/metrics.h"
#include "sum_floats.h"

#include <math.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A field of /proc/self/status in KiB, or -1. */
static long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t len = strlen(field);
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			v = atol(line + len + 1);
			break;
		}
	fclose(f);
	return v;
}

static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return -1;
	int ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Deterministic data: r uniform in [-1, 1), a = r (1 + e) with |e| < 2^-12. */
static void fill(float *r, float *a, size_t n)
{
	uint64_t s = 0x9E3779B97F4A7C15u;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		double x = (double)(s >> 40) / 8388608.0 - 1.0;
		double e = ((double)((s >> 8) & 0xFFFF) - 32768.0) / 134217728.0;
		r[i] = (float)x;
		a[i] = (float)(x * (1.0 + e));
	}
}

/* Writes `bytes` at `p` to a new temporary file in `dir`, maps it, unlinks it. */
static void *to_mapped_file(const char *dir, const void *p, size_t bytes)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/bench_metrics_XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		perror(path);
		return NULL;
	}
	unlink(path);
	const char *c = p;
	for (size_t done = 0; done < bytes;) {
		ssize_t w = write(fd, c + done, bytes - done);
		if (w <= 0) {
			perror("write");
			close(fd);
			return NULL;
		}
		done += (size_t)w;
	}
	void *m = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return m;
}

static double best_of(double a, double b)
{
	return a > b ? a : b;
}

typedef struct rates {
	double sum, copy, t1, t2;
	etc_metrics m1, m2;
} rates;

/* One round of every measurement, keeping the best rate of each. */
static int round_all(const float *rp, const float *ap, size_t n, float *scratch,
                     const etc_values *vr, const etc_values *va, rates *best, volatile double *sink)
{
	double bytes = 8.0 * (double)n, t0;
	etc_error err;

	t0 = now();
	*sink += sum_floats(rp, n) + sum_floats(ap, n);
	best->sum = best_of(best->sum, bytes / (now() - t0) / 1e9);

	if (scratch) {
		t0 = now();
		memcpy(scratch, rp, 4 * n);
		best->copy = best_of(best->copy, 4.0 * (double)n / (now() - t0) / 1e9);
		*sink += scratch[n / 2];
	}

	setenv("ETC_THREADS", "1", 1);
	t0 = now();
	if (etc_metrics_compare(vr, va, &best->m1, &err) < 0)
		goto fail;
	best->t1 = best_of(best->t1, bytes / (now() - t0) / 1e9);

	setenv("ETC_THREADS", "2", 1);
	t0 = now();
	if (etc_metrics_compare(vr, va, &best->m2, &err) < 0)
		goto fail;
	best->t2 = best_of(best->t2, bytes / (now() - t0) / 1e9);
	return 0;
fail:
	fprintf(stderr, "bench_metrics: %s\n", err.message);
	return 1;
}

static int same_bits(const etc_metrics *a, const etc_metrics *b)
{
	return memcmp(&a->snr_db, &b->snr_db, sizeof(double)) == 0 &&
	       memcmp(&a->mse, &b->mse, sizeof(double)) == 0 &&
	       memcmp(&a->cosine, &b->cosine, sizeof(double)) == 0 &&
	       memcmp(&a->l1, &b->l1, sizeof(double)) == 0 &&
	       memcmp(&a->max_abs, &b->max_abs, sizeof(double)) == 0 &&
	       memcmp(&a->max_rel, &b->max_rel, sizeof(double)) == 0 &&
	       a->max_abs_index == b->max_abs_index && a->mismatch_count == b->mismatch_count;
}

int main(int argc, char **argv)
{
	size_t mib = 1024;
	int repeat = 5, use_malloc = 0;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--malloc"))
			use_malloc = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: bench_metrics [--mib N] [--repeat K] [--malloc] "
			                "[--dir DIR]\n");
			return 2;
		}
	}
	if (mib == 0 || repeat < 1)
		return 2;
	size_t bytes = mib << 20, n = bytes / 4;
	float *r = malloc(bytes), *a = malloc(bytes);
	if (!r || !a) {
		fprintf(stderr, "bench_metrics: out of memory\n");
		return 1;
	}
	fill(r, a, n);
	const float *rp = r, *ap = a;
	if (!use_malloc) {
		rp = to_mapped_file(dir, r, bytes);
		ap = to_mapped_file(dir, a, bytes);
		free(r);
		free(a);
		if (!rp || !ap)
			return 1;
	}

	/* 1-D float32 tensor views */
	uint8_t sizes[8];
	for (int i = 0; i < 8; i++)
		sizes[i] = (uint8_t)((uint64_t)n >> (8 * i));
	etc_tensor tr = {.scalar_type = ETC_FLOAT,
	                 .ndim = 1,
	                 .sizes_le = sizes,
	                 .numel = n,
	                 .nbytes = bytes,
	                 .data = (const uint8_t *)rp};
	etc_tensor ta = tr;
	ta.data = (const uint8_t *)ap;
	etc_values vr, va;
	etc_values_from_tensor(&vr, &tr);
	etc_values_from_tensor(&va, &ta);

	printf("inputs: 2 x %zu MiB float32 (%s), %d timed runs each\n", mib,
	       use_malloc ? "malloc" : "mapped temp files", repeat);
	etc_metrics m;
	etc_error err;
	double t0 = now();
	if (etc_metrics_compare(&vr, &va, &m, &err) < 0) {
		fprintf(stderr, "bench_metrics: %s\n", err.message);
		return 1;
	}
	printf("%-22s %6.2f GB/s (first touch of the inputs)\n", "warm-up",
	       2.0 * (double)bytes / (now() - t0) / 1e9);

	/* peak extra memory of one comparison (two threads) */
	setenv("ETC_THREADS", "2", 1);
	long before = status_kib("VmRSS");
	if (reset_peak() == 0 && before >= 0) {
		if (etc_metrics_compare(&vr, &va, &m, &err) < 0)
			return 1;
		long peak = status_kib("VmHWM");
		printf("%-22s %ld KiB (peak RSS %ld KiB, before %ld KiB)\n", "extra memory",
		       peak - before, peak, before);
	} else {
		printf("%-22s not measured (/proc/self/clear_refs unavailable)\n", "extra memory");
	}

	float *scratch = malloc(bytes);
	if (scratch)
		memset(scratch, 0, bytes); /* fault it in: memcpy then measures copying only */
	rates best = {0};
	volatile double sink = 0;
	for (int k = 0; k < repeat; k++)
		if (round_all(rp, ap, n, scratch, &vr, &va, &best, &sink))
			return 1;
	free(scratch);
	printf("%-22s %6.2f GB/s (float sum of both mapped inputs, one core)\n", "limit: sum",
	       best.sum);
	printf("%-22s %6.2f GB/s (one input copied)\n", "limit: memcpy", best.copy);
	printf("%-22s %6.2f GB/s = %3.0f%% of the sum rate  (SNR %.4f dB, cosine %.12f)\n",
	       "compare, 1 thread", best.t1, 100 * best.t1 / best.sum, best.m1.snr_db,
	       best.m1.cosine);
	printf("%-22s %6.2f GB/s = %3.0f%% of the sum rate\n", "compare, 2 threads", best.t2,
	       100 * best.t2 / best.sum);
	int same = same_bits(&best.m1, &best.m2);
	printf("%-22s %s\n", "1 vs 2 threads", same ? "same bits" : "DIFFERENT BITS");
	return same ? 0 : 1;
}
