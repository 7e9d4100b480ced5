#define _POSIX_C_SOURCE 200809L
/*
 * bench_reference_ops.c - the reference executor's GEMM-heavy ops against
 * the OpenBLAS GEMM they are built on, in the same run: aten.addmm
 * 512 x 512 x 512 against etc_blas_dgemm of the same sizes, and
 * aten.convolution [1, 64, 56, 56] with a 64 x 64 x 3 x 3 kernel (padding
 * 1, bias) against the one dgemm it becomes (64 x 3136 x 576), so that the
 * op's own overhead (argument checks, the broadcast of the bias, im2col,
 * allocation) shows as the gap between the two GFLOP/s figures. Also the
 * float32 mode (sgemm) of both, and each GEMM's peak (1024^3) in the same
 * run. The op and its GEMM alternate R times and the best of each is kept,
 * by wall time and by CPU time (all threads: with ETC_THREADS=1 a figure
 * that the machine's load hardly moves); OpenBLAS threads follow
 * ETC_THREADS. Test-side code: calls the op table
 * directly.
 *
 * Usage: bench_reference_ops [--repeat R]
 */
#include "core/blas.h"
#include "core/parallel.h"
#include "reference/ref_op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A wall time and the process's CPU time (all threads) of one call. */
typedef struct span {
	double wall, cpu;
} span;

static span span_start(void)
{
	span s = {clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID)};
	return s;
}

static span span_end(span s)
{
	span e = {clock_s(CLOCK_MONOTONIC) - s.wall, clock_s(CLOCK_PROCESS_CPUTIME_ID) - s.cpu};
	return e;
}

static void span_best(span *best, span s)
{
	best->wall = s.wall < best->wall ? s.wall : best->wall;
	best->cpu = s.cpu < best->cpu ? s.cpu : best->cpu;
}

static uint64_t rng = 88172645463325252ULL;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0 - 0.5;
}

static int make(ref_tensor *t, int dtype, uint32_t rank, const int64_t *shape)
{
	etc_error err = {0};
	if (ref_tensor_alloc(t, dtype, rank, shape, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		return -1;
	}
	for (uint64_t i = 0; i < t->numel; i++)
		ref_set_f(t, i, uniform());
	return 0;
}

static ref_arg tensor_arg(const char *name, const ref_tensor *t)
{
	ref_arg a = {.name = name, .kind = REF_ARG_TENSOR, .t = t};
	return a;
}

static ref_arg ints_arg(const char *name, const int64_t *v, size_t n)
{
	ref_arg a = {.name = name, .kind = REF_ARG_INTS, .ints = v, .n = n};
	return a;
}

/* One call of the op (its output freed). */
static span op_once(const ref_op *f, const char *op, const ref_arg *args, size_t nargs, int dtype)
{
	etc_error err = {0};
	ref_tensor out;
	memset(&out, 0, sizeof out);
	ref_call c = {"bench", op, args, nargs, dtype, &out, 1, &err, {0}};
	span t = span_start();
	if (f->fn(&c) < 0) {
		fprintf(stderr, "%s\n", err.message);
		exit(1);
	}
	t = span_end(t);
	ref_tensor_free(&out);
	return t;
}

/* One plain GEMM C[m x n] = A[m x k] B[k x n] in the dtype of a. */
static span gemm_once(const ref_tensor *a, const ref_tensor *b, ref_tensor *c, size_t m, size_t n,
                      size_t k)
{
	span t = span_start();
	if (a->dtype == ETC_DOUBLE)
		etc_blas_dgemm(false, false, m, n, k, 1.0, a->data, k, b->data, n, 0.0, c->data, n);
	else
		etc_blas_sgemm(false, false, m, n, k, 1.0f, a->data, k, b->data, n, 0.0f, c->data,
		               n);
	return span_end(t);
}

/*
 * The op and the GEMM of sizes m x n x k alternate `repeat` times (after
 * one warm-up each) and the best of each is kept, so that machine load
 * hurts both alike.
 */
static void compare(const char *op, const ref_arg *args, size_t nargs, int dtype, size_t m,
                    size_t n, size_t k, int repeat, span *t_op, span *t_gemm)
{
	const ref_op *f = ref_op_find(op);
	if (!f) {
		fprintf(stderr, "op %s is not in the table\n", op);
		exit(1);
	}
	ref_tensor a, b, c;
	int64_t sa[2] = {(int64_t)m, (int64_t)k}, sb[2] = {(int64_t)k, (int64_t)n},
	        sc[2] = {(int64_t)m, (int64_t)n};
	if (make(&a, dtype, 2, sa) < 0 || make(&b, dtype, 2, sb) < 0 || make(&c, dtype, 2, sc) < 0)
		exit(1);
	op_once(f, op, args, nargs, dtype);
	gemm_once(&a, &b, &c, m, n, k);
	t_op->wall = t_op->cpu = t_gemm->wall = t_gemm->cpu = 1e30;
	for (int r = 0; r < repeat; r++) {
		span_best(t_op, op_once(f, op, args, nargs, dtype));
		span_best(t_gemm, gemm_once(&a, &b, &c, m, n, k));
	}
	ref_tensor_free(&a);
	ref_tensor_free(&b);
	ref_tensor_free(&c);
}

/* Wall GFLOP/s (best wall) and CPU GFLOP/s (best CPU time) of the op and
 * of its GEMM, and the op's share of each. */
static void row(const char *what, double flops, span t_op, span t_gemm, span peak)
{
	printf("%-36s wall %7.2f | %7.2f GFLOP/s %5.1f%% (peak %5.1f%%); CPU %7.2f | %7.2f "
	       "GFLOP/s %5.1f%% (peak %5.1f%%)\n",
	       what, flops / t_op.wall / 1e9, flops / t_gemm.wall / 1e9,
	       100.0 * t_gemm.wall / t_op.wall, 100.0 * flops / t_op.wall / 1e9 / peak.wall,
	       flops / t_op.cpu / 1e9, flops / t_gemm.cpu / 1e9, 100.0 * t_gemm.cpu / t_op.cpu,
	       100.0 * flops / t_op.cpu / 1e9 / peak.cpu);
}

/* The GEMM's peak here: GFLOP/s (by wall and by CPU time) of a 1024 x 1024
 * x 1024 product, best of R. */
static span peak_gflops(int dtype, int repeat)
{
	ref_tensor a, b, c;
	int64_t sq[2] = {1024, 1024};
	if (make(&a, dtype, 2, sq) < 0 || make(&b, dtype, 2, sq) < 0 || make(&c, dtype, 2, sq) < 0)
		exit(1);
	span best = gemm_once(&a, &b, &c, 1024, 1024, 1024);
	for (int r = 0; r < repeat; r++)
		span_best(&best, gemm_once(&a, &b, &c, 1024, 1024, 1024));
	ref_tensor_free(&a);
	ref_tensor_free(&b);
	ref_tensor_free(&c);
	span g = {2.0 * 1024 * 1024 * 1024 / best.wall / 1e9,
	          2.0 * 1024 * 1024 * 1024 / best.cpu / 1e9};
	return g;
}

int main(int argc, char **argv)
{
	int repeat = 10;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: bench_reference_ops [--repeat R]\n");
			return 2;
		}
	}
	if (repeat < 1)
		repeat = 1;
	double load = -1;
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (fscanf(lf, "%lf", &load) != 1)
			load = -1;
		fclose(lf);
	}
	printf("OpenBLAS threads: %u (ETC_THREADS), best of %d alternating runs, load average "
	       "%.1f\n",
	       etc_thread_count_(), repeat, load);
	printf("GFLOP/s of the op | of the same GEMM alone, the op's share of that GEMM and of "
	       "the peak; by wall time, then by CPU time (all threads)\n");
	int dtypes[2] = {ETC_DOUBLE, ETC_FLOAT};
	for (int di = 0; di < 2; di++) {
		int dt = dtypes[di];
		const char *dn = dt == ETC_DOUBLE ? "float64" : "float32";
		char label[96];
		span peak = peak_gflops(dt, repeat);
		printf("%s peak (1024 x 1024 x 1024): wall %.2f GFLOP/s, CPU %.2f GFLOP/s\n",
		       dt == ETC_DOUBLE ? "dgemm" : "sgemm", peak.wall, peak.cpu);

		/* addmm: self [512], mat1 [512, 512], mat2 [512, 512] */
		int64_t n = 512, sv[1] = {n}, sm[2] = {n, n};
		ref_tensor s, a, b;
		if (make(&s, dt, 1, sv) < 0 || make(&a, dt, 2, sm) < 0 || make(&b, dt, 2, sm) < 0)
			return 1;
		ref_arg args[3] = {tensor_arg("self", &s), tensor_arg("mat1", &a),
		                   tensor_arg("mat2", &b)};
		span t_op, t_g;
		compare("aten.addmm.default", args, 3, dt, 512, 512, 512, repeat, &t_op, &t_g);
		snprintf(label, sizeof label, "addmm 512x512x512 %s", dn);
		row(label, 2.0 * 512 * 512 * 512, t_op, t_g, peak);
		ref_tensor_free(&s);
		ref_tensor_free(&a);
		ref_tensor_free(&b);

		/* convolution: x [1, 64, 56, 56], w [64, 64, 3, 3], bias [64], padding 1 */
		int64_t sx[4] = {1, 64, 56, 56}, sw[4] = {64, 64, 3, 3}, sb[1] = {64};
		ref_tensor x, w, bias;
		if (make(&x, dt, 4, sx) < 0 || make(&w, dt, 4, sw) < 0 ||
		    make(&bias, dt, 1, sb) < 0)
			return 1;
		static const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
		ref_arg cargs[8] = {tensor_arg("input", &x),
		                    tensor_arg("weight", &w),
		                    tensor_arg("bias", &bias),
		                    ints_arg("stride", one, 2),
		                    ints_arg("padding", one, 2),
		                    ints_arg("dilation", one, 2),
		                    ints_arg("output_padding", zero, 2)};
		ref_arg tr = {.name = "transposed", .kind = REF_ARG_BOOL, .i = 0};
		cargs[7] = tr;
		compare("aten.convolution.default", cargs, 8, dt, 64, 56 * 56, 64 * 9, repeat,
		        &t_op, &t_g);
		snprintf(label, sizeof label, "convolution 1x64x56x56 k3 p1 %s", dn);
		row(label, 2.0 * 64 * 56 * 56 * 64 * 9, t_op, t_g, peak);
		ref_tensor_free(&x);
		ref_tensor_free(&w);
		ref_tensor_free(&bias);
	}
	return 0;
}
