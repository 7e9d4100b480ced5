/*
 * bench_metrics.c - throughput of etc_metrics_compare on two large float32
 * tensors (1 GiB each by default) for every float32 kernel this CPU has
 * (AVX-512, AVX2, portable), against the read limit measured in the same
 * run.
 *
 * Usage: bench_metrics [--mib N] [--repeat K] [--dir DIR]
 *
 * The inputs are written to two temporary files in DIR (default $TMPDIR or
 * /tmp), which are unlinked at once and kept open. A first untimed pass
 * warms the page cache. Then K rounds, each of them in turn (so machine load
 * hurts every line alike):
 *   - limit: mmap-and-sum, both files mapped afresh, summed as float32 on
 *     one core and unmapped (bench/limit's probe: page faults included),
 *     and the same sum over mappings already faulted in (memory alone);
 *   - each kernel: both files mapped afresh, compared with the reference's
 *     CRC-32 folded into the pass (as an .npz reference is compared end to
 *     end) on the default thread count (ETC_THREADS), and unmapped;
 *   - the best kernel on 1 and on 2 threads over the faulted-in mappings.
 * Throughput counts the bytes of both inputs; each line gives the median
 * and the best of the K rounds and the median's fraction of the median
 * mmap-and-sum rate. The limit and each kernel also give their bytes per
 * CPU-second (process CPU time, every thread): on a loaded machine, where
 * a second thread may get no core of its own, wall-clock fractions mix
 * the work per byte with the share of the cores the run was given. Checked (exit 1 otherwise):
 * every kernel folds the CRC-32 of the reference and finds the one computed apart; the kernels
 * agree with the portable one within 1e-9 relative (SNR, MSE, cosine) and
 * exactly on max |d| and its index; 1 and 2 threads give the same bits.
 *
 * Extra memory is the peak resident set during one comparison minus the
 * resident set just before it (inputs already resident), measured by
 * resetting the kernel's high-water mark (/proc/self/clear_refs, "5").
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/metrics.h"
#include "analysis/metrics_kernels.h"
#include "analysis/metrics_private.h"
#include "core/internal.h"
#include "sum_floats.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPEAT 101

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CPU seconds of the whole process (every thread), user and system. */
static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
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

/* Writes `bytes` at `p` to a new temporary file in `dir`, unlinked; its fd or -1. */
static int to_temp_file(const char *dir, const void *p, size_t bytes)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/bench_metrics_XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	unlink(path);
	const char *c = p;
	for (size_t done = 0; done < bytes;) {
		ssize_t w = write(fd, c + done, bytes - done);
		if (w <= 0) {
			perror("write");
			close(fd);
			return -1;
		}
		done += (size_t)w;
	}
	return fd;
}

static const uint8_t *map_fd(int fd, size_t bytes)
{
	void *m = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return m;
}

static void unmap(const uint8_t *p, size_t bytes)
{
	munmap((void *)(uintptr_t)p, bytes);
}

/* A 1-D float32 tensor view of n elements at p (sizes: 8 bytes of storage). */
static etc_tensor view(const uint8_t *p, size_t n, uint8_t *sizes)
{
	for (int i = 0; i < 8; i++)
		sizes[i] = (uint8_t)((uint64_t)n >> (8 * i));
	return (etc_tensor){.scalar_type = ETC_FLOAT,
	                    .ndim = 1,
	                    .sizes_le = sizes,
	                    .numel = n,
	                    .nbytes = 4 * n,
	                    .data = p};
}

/* Compares r with a (n float32 each); 0, or 1 with the error printed. */
static int run_compare(const uint8_t *r, const uint8_t *a, size_t n, int kernel, unsigned threads,
                       uint32_t *crc, etc_metrics *m)
{
	uint8_t sr[8], sa[8];
	etc_tensor tr = view(r, n, sr), ta = view(a, n, sa);
	etc_values vr, va;
	etc_values_from_tensor(&vr, &tr);
	etc_values_from_tensor(&va, &ta);
	etc_error err;
	etc_error_clear(&err);
	bool done = false;
	if (crc)
		*crc = 0;
	if (etc_metrics_compare_full_(&vr, &va, m, kernel, threads, crc, crc ? &done : NULL, &err) <
	    0) {
		fprintf(stderr, "bench_metrics: %s\n", err.message);
		return 1;
	}
	if (crc && !done) {
		fprintf(stderr, "bench_metrics: the CRC-32 was not folded into the pass\n");
		return 1;
	}
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double best(const double *v, int n)
{
	double b = 0;
	for (int i = 0; i < n; i++)
		b = v[i] > b ? v[i] : b;
	return b;
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

static bool near(double x, double y, double rel)
{
	return fabs(x - y) <= rel * fabs(y);
}

/* The kernels agree with the portable one (summation order differs). */
static int agree(const etc_metrics *k, const etc_metrics *p)
{
	return near(k->snr_db, p->snr_db, 1e-9) && near(k->mse, p->mse, 1e-9) &&
	       near(k->cosine, p->cosine, 1e-12) && near(k->l1, p->l1, 1e-9) &&
	       k->max_abs == p->max_abs && k->max_abs_index == p->max_abs_index &&
	       k->max_rel == p->max_rel && k->mismatch_count == p->mismatch_count;
}

static const char *const kernel_name[] = {"portable", "AVX2", "AVX-512"};

/* Whether the CPU has kernel k (etc_metrics_pick_kernel_ falls back otherwise). */
static bool has_kernel(int k)
{
	return k == KERNEL_GENERIC ||
	       etc_metrics_pick_kernel_(k) != etc_metrics_pick_kernel_(k - 1);
}

int main(int argc, char **argv)
{
	size_t mib = 1024;
	int repeat = 5;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mib") && i + 1 < argc)
			mib = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr,
			        "usage: bench_metrics [--mib N] [--repeat K] [--dir DIR]\n");
			return 2;
		}
	}
	if (mib == 0 || repeat < 1 || repeat > MAX_REPEAT)
		return 2;
	size_t bytes = mib << 20, n = bytes / 4;
	float *r = malloc(bytes), *a = malloc(bytes);
	if (!r || !a) {
		fprintf(stderr, "bench_metrics: out of memory\n");
		return 1;
	}
	fill(r, a, n);
	uint32_t want_crc = etc_crc32(0, (const uint8_t *)r, bytes);
	int fr = to_temp_file(dir, r, bytes), fa = to_temp_file(dir, a, bytes);
	free(r);
	free(a);
	if (fr < 0 || fa < 0)
		return 1;
	const uint8_t *rp = map_fd(fr, bytes), *ap = map_fd(fa, bytes);
	volatile double sink = sum_floats((const float *)(const void *)rp, n) +
	                       sum_floats((const float *)(const void *)ap, n);

	bool has[3];
	for (int k = 0; k < 3; k++)
		has[k] = has_kernel(k);
	printf("inputs: 2 x %zu MiB float32 (mapped temp files), %d rounds, threads: ETC_THREADS "
	       "or the online processors (at most 8)\n",
	       mib, repeat);

	etc_metrics m, mk[3], m1, m2;
	uint32_t crc;
	/* peak extra memory of one comparison (default threads) */
	long before = status_kib("VmRSS");
	if (reset_peak() == 0 && before >= 0) {
		if (run_compare(rp, ap, n, KERNEL_BEST, 0, &crc, &m))
			return 1;
		long peak = status_kib("VmHWM");
		printf("%-30s %ld KiB (peak RSS %ld KiB, before %ld KiB)\n", "extra memory",
		       peak - before, peak, before);
	}

	static double lim[MAX_REPEAT], sum[MAX_REPEAT], kr[3][MAX_REPEAT], t1[MAX_REPEAT],
	    t2[MAX_REPEAT], lim_cpu[MAX_REPEAT], kr_cpu[3][MAX_REPEAT];
	double gb = 2.0 * (double)bytes / 1e9, t0, c0;
	int bad = 0;
	for (int i = 0; i < repeat; i++) {
		t0 = now();
		c0 = cpu_now();
		const uint8_t *x = map_fd(fr, bytes), *y = map_fd(fa, bytes);
		sink += sum_floats((const float *)(const void *)x, n);
		sink += sum_floats((const float *)(const void *)y, n);
		unmap(x, bytes);
		unmap(y, bytes);
		lim[i] = gb / (now() - t0);
		lim_cpu[i] = gb / (cpu_now() - c0);

		t0 = now();
		sink += sum_floats((const float *)(const void *)rp, n) +
		        sum_floats((const float *)(const void *)ap, n);
		sum[i] = gb / (now() - t0);

		for (int k = 2; k >= 0; k--) {
			if (!has[k])
				continue;
			t0 = now();
			c0 = cpu_now();
			x = map_fd(fr, bytes), y = map_fd(fa, bytes);
			if (run_compare(x, y, n, k, 0, &crc, &mk[k]))
				return 1;
			unmap(x, bytes);
			unmap(y, bytes);
			kr[k][i] = gb / (now() - t0);
			kr_cpu[k][i] = gb / (cpu_now() - c0);
			if (crc != want_crc) {
				fprintf(stderr, "%s: CRC-32 %08x, expected %08x\n", kernel_name[k],
				        crc, want_crc);
				bad = 1;
			}
		}

		t0 = now();
		if (run_compare(rp, ap, n, KERNEL_BEST, 1, NULL, &m1))
			return 1;
		t1[i] = gb / (now() - t0);
		t0 = now();
		if (run_compare(rp, ap, n, KERNEL_BEST, 2, NULL, &m2))
			return 1;
		t2[i] = gb / (now() - t0);
	}
	(void)sink;
	double lm = median(lim, repeat), lb = best(lim, repeat);
	printf("%-30s %6.2f GB/s median, %6.2f best (mapped afresh, summed as float32 on one "
	       "core, unmapped)\n",
	       "limit: mmap-and-sum", lm, lb);
	printf("%-30s %6.2f GB/s median, %6.2f best (mappings already faulted in, one core)\n",
	       "limit: sum", median(sum, repeat), best(sum, repeat));
	double lcpu = median(lim_cpu, repeat);
	printf("%-30s %6.2f GB per CPU-second median (user + system, all threads)\n",
	       "limit: mmap-and-sum, CPU", lcpu);
	for (int k = 2; k >= 0; k--) {
		char label[64];
		snprintf(label, sizeof label, "compare, %s kernel", kernel_name[k]);
		if (!has[k]) {
			printf("%-30s not available on this CPU\n", label);
			continue;
		}
		double b = best(kr[k], repeat), md = median(kr[k], repeat);
		printf("%-30s %6.2f GB/s median, %6.2f best = %3.0f%% of mmap-and-sum (median; "
		       "CRC-32 folded in, mapped afresh)\n",
		       label, md, b, 100 * md / lm);
		double kc = median(kr_cpu[k], repeat);
		printf("%-30s %6.2f GB per CPU-second median = %3.0f%% of mmap-and-sum's\n", "", kc,
		       100 * kc / lcpu);
		if (k != KERNEL_GENERIC && !agree(&mk[k], &mk[KERNEL_GENERIC])) {
			fprintf(stderr, "%s: differs from the portable kernel\n", kernel_name[k]);
			bad = 1;
		}
	}
	printf("%-30s SNR %.6f dB, cosine %.12f, max |d| %.9g at %llu\n", "result",
	       mk[KERNEL_GENERIC].snr_db, mk[KERNEL_GENERIC].cosine, mk[KERNEL_GENERIC].max_abs,
	       (unsigned long long)mk[KERNEL_GENERIC].max_abs_index);
	double t1m = median(t1, repeat), t2m = median(t2, repeat);
	printf("%-30s %6.2f GB/s median = %3.0f%% of the sum rate (faulted-in mappings)\n",
	       "compare, 1 thread", t1m, 100 * t1m / median(sum, repeat));
	printf("%-30s %6.2f GB/s median = %3.0f%% of the sum rate\n", "compare, 2 threads", t2m,
	       100 * t2m / median(sum, repeat));
	int same = same_bits(&m1, &m2);
	printf("%-30s %s\n", "1 vs 2 threads", same ? "same bits" : "DIFFERENT BITS");
	unmap(rp, bytes);
	unmap(ap, bytes);
	close(fr);
	close(fa);
	return same && !bad ? 0 : 1;
}
