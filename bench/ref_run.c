/*
 * ref_run.c - times the reference executor through the public API
 * (etcompare/reference.h): opens an ETRecord, loads its graph, runs it on
 * the record's example inputs (or an .npz) with a callback that does
 * nothing, and reports load time, run times and memory. Test-side code for
 * bench/bench_reference.py: not part of the library.
 *
 * Usage: ref_run ETRECORD [--repeat N] [--float32] [--inputs FILE.npz]
 *
 * Prints key=value lines on stdout:
 *   nodes, computed, unsupported, skipped, failed   (from a first, untimed
 *       run whose callback reads every node's status and outputs; the first
 *       failure reasons go to stderr)
 *   unsupported_ops   the distinct ops not in the library
 *   largest_output_bytes        largest output of any node
 *   largest_activation_bytes    largest output of a node that depends on a
 *       user input (weight-only nodes such as permute_copy of a parameter
 *       excluded)
 *   open_ms, load_ms  etc_etrecord_open, etc_refgraph_load (load_cpu_ms: its
 *       CPU time)
 *   run_ms            median of N timed runs (no-op callback); run_min_ms,
 *       run_max_ms, runs=N, run_all_ms (every run, in order, comma-separated),
 *       run_all_cpu_ms (the process's CPU time of each run, all threads)
 *   rss_base_kb       VmRSS before opening the record (program + libraries)
 *   rss_after_open_kb, rss_after_load_kb   VmRSS after opening the record and
 *       after loading the graph; anon_base_kb, file_base_kb,
 *       anon_after_open_kb, file_after_open_kb, anon_after_load_kb, file_after_load_kb,
 *       anon_end_kb, file_end_kb: its RssAnon (heap) and RssFile (mapped
 *       files: the program, its libraries and the ETRecord) parts
 *   hwm_after_load_kb VmHWM after loading the graph (the peak of open and load)
 *   hwm_kb            VmHWM (peak RSS) at the end
 *   first_run_hwm_kb  the peak RSS of the first run, whose callback reads
 *       every value of every node's outputs where they lie, as the numeric
 *       gap does (etc_refrun_output_layout, row-major through the strides:
 *       no dense copy of a transposed weight; etc_refrun_output_done after
 *       each) (VmHWM reset after the load;
 *       -1 when it cannot be reset)
 *   first_run_sum     the sum of the float values the first run read
 *   run_hwm_kb        the peak RSS of the timed runs alone, whose callback
 *       reads nothing (VmHWM reset again before them): the executor's own
 *       peak, without a consumer's demand for outputs it does not keep
 *       dense (the classifier's transposed weight)
 *   idle_cpu_ms       the process's CPU time (all threads) during a 200 ms
 *       sleep right after the timed runs: OpenBLAS threads busy-waiting
 *       after the last GEMM would show here
 *   warm_base_kb, warm_hwm_kb   a second cycle (open, load, one run, free)
 *       after the first was freed and the free heap given back
 *       (malloc_trim): VmRSS before it and its peak (VmHWM reset through
 *       /proc/self/clear_refs). Code pages, OpenBLAS's threads and buffers
 *       and the C library's state are then in place: warm_hwm_kb -
 *       warm_base_kb is the memory the executor holds for the model.
 *       warm_hwm_kb=-1 when the peak cannot be reset.
 * Exits 1 when the record cannot be loaded or run, naming the step.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/reference.h"
#include "etcompare/npz.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_ms(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* A field of /proc/self/status in kB ("VmRSS", "VmHWM"), or -1. */
static long proc_status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static size_t dtype_size(int dtype)
{
	switch (dtype) {
	case ETC_DOUBLE:
	case ETC_LONG:
		return 8;
	case ETC_FLOAT:
	case ETC_INT:
		return 4;
	case ETC_SHORT:
	case ETC_HALF:
	case ETC_BFLOAT16:
		return 2;
	default:
		return 1;
	}
}

typedef struct stats {
	size_t count[4]; /* by etc_refnode_status */
	uint64_t largest_output, largest_activation;
	const bool *from_input; /* per node: depends on a user input */
	int reasons_shown;
	const etc_refgraph *g;
	double sum; /* of every float value read */
	char unsupported[2048];
} stats;

/* Element k (row-major) of t at `strides`, as double (float dtypes only). */
static double value_at(const etc_reftensor *t, const int64_t *strides, uint64_t k)
{
	int64_t off = 0;
	for (uint32_t d = t->rank; d-- > 0;) {
		uint64_t n = (uint64_t)t->shape[d];
		off += (int64_t)(k % n) * strides[d];
		k /= n;
	}
	if (t->dtype == ETC_DOUBLE) {
		double v;
		memcpy(&v, (const char *)t->data + 8 * off, 8);
		return v;
	}
	float f;
	memcpy(&f, (const char *)t->data + 4 * off, 4);
	return f;
}

/* Every float value of t, read as the numeric gap reads it. */
static double sum_values(const etc_reftensor *t, const int64_t *strides, bool dense)
{
	double sum = 0;
	if (t->dtype != ETC_FLOAT && t->dtype != ETC_DOUBLE)
		return 0;
	for (uint64_t k = 0; dense && k < t->numel; k++)
		sum += t->dtype == ETC_DOUBLE ? ((const double *)t->data)[k]
		                              : ((const float *)t->data)[k];
	for (uint64_t k = 0; !dense && k < t->numel; k++)
		sum += value_at(t, strides, k);
	return sum;
}

static int noop(void *user, const etc_refrun *run, size_t node, etc_error *err)
{
	(void)user, (void)run, (void)node, (void)err;
	return 0;
}

static int collect(void *user, const etc_refrun *run, size_t node, etc_error *err)
{
	(void)err;
	stats *s = user;
	const char *why = "";
	int st = etc_refrun_status(run, node, &why);
	if (st >= 0 && st < 4)
		s->count[st]++;
	const etc_refnode *n = etc_refgraph_node(s->g, node);
	if (st == ETC_REFNODE_UNSUPPORTED && !strstr(s->unsupported, n->op)) {
		size_t len = strlen(s->unsupported);
		snprintf(s->unsupported + len, sizeof s->unsupported - len, "%s%s", len ? "," : "",
		         n->op);
	}
	if (st == ETC_REFNODE_FAILED && s->reasons_shown < 5) {
		fprintf(stderr, "ref_run: node %s (%s) failed: %s\n", n->name, n->op, why);
		s->reasons_shown++;
	}
	if (st != ETC_REFNODE_COMPUTED)
		return 0;
	for (uint32_t i = 0; i < n->output_count; i++) {
		etc_reftensor held;
		int64_t strides[ETC_REF_MAX_RANK];
		int layout = etc_refrun_output_layout(run, node, i, &held, strides);
		if (layout < 0)
			continue;
		const etc_reftensor *t = &held;
		s->sum += sum_values(t, strides, layout == 0);
		etc_refrun_output_done(run, node, i);
		uint64_t bytes = t->numel * dtype_size(t->dtype);
		if (bytes > s->largest_output)
			s->largest_output = bytes;
		if (s->from_input[node] && bytes > s->largest_activation)
			s->largest_activation = bytes;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int fail(const char *step, const etc_error *err)
{
	fprintf(stderr, "ref_run: %s: %s\n", step, err->message);
	return 1;
}

/* Resets VmHWM to the current RSS (Linux 4.0+); false when refused. */
static bool reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (!f)
		return false;
	bool ok = fputs("5", f) >= 0;
	return fclose(f) == 0 && ok;
}

/* One more open, load and run of the same record, measured from a reset peak. */
static int warm_cycle(const char *path, const etc_refgraph_options *opt, const char *npz_path,
                      long *base, long *hwm)
{
	etc_error err;
	etc_error_clear(&err);
	malloc_trim(0);
	*base = proc_status_kb("VmRSS");
	*hwm = -1;
	bool reset = reset_peak();
	etc_etrecord *rec = NULL;
	etc_refgraph *g = NULL;
	etc_refinputs *in = NULL;
	etc_npz *npz = NULL;
	if (etc_etrecord_open(&rec, path, &err) < 0)
		return fail("open (warm)", &err);
	if (etc_refgraph_load(&g, rec, opt, &err) < 0)
		return fail("load (warm)", &err);
	if (npz_path) {
		if (etc_npz_open(&npz, npz_path, &err) < 0 ||
		    etc_refinputs_from_npz(&in, g, npz, &err) < 0)
			return fail("inputs (warm)", &err);
	} else if (etc_refinputs_from_record(&in, g, rec, "example_inputs", 0, &err) < 0) {
		return fail("example inputs (warm)", &err);
	}
	if (etc_refgraph_run(g, etc_refinputs_tensors(in), etc_refinputs_count(in), noop, NULL,
	                     &err) < 0)
		return fail("run (warm)", &err);
	if (reset)
		*hwm = proc_status_kb("VmHWM");
	etc_refinputs_free(in);
	etc_npz_free(npz);
	etc_refgraph_free(g);
	etc_etrecord_free(rec);
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *npz_path = NULL;
	int repeat = 20;
	etc_refgraph_options opt;
	etc_refgraph_options_init(&opt);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--float32"))
			opt.dtype = ETC_REF_FLOAT32;
		else if (!strcmp(argv[i], "--inputs") && i + 1 < argc)
			npz_path = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: ref_run ETRECORD [--repeat N] [--float32] "
			                "[--inputs FILE.npz]\n");
			return 2;
		}
	}
	if (!path || repeat < 1) {
		fprintf(stderr,
		        "usage: ref_run ETRECORD [--repeat N] [--float32] [--inputs FILE.npz]\n");
		return 2;
	}
	long rss_base = proc_status_kb("VmRSS");
	long anon_base = proc_status_kb("RssAnon"), file_base = proc_status_kb("RssFile");
	etc_error err;
	etc_error_clear(&err);
	etc_etrecord *rec = NULL;
	double t0 = now_ms();
	if (etc_etrecord_open(&rec, path, &err) < 0)
		return fail("open", &err);
	double t1 = now_ms();
	long rss_opened = proc_status_kb("VmRSS");
	long anon_opened = proc_status_kb("RssAnon"), file_opened = proc_status_kb("RssFile");
	etc_refgraph *g = NULL;
	double c1 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	if (etc_refgraph_load(&g, rec, &opt, &err) < 0)
		return fail("load", &err);
	double t2 = now_ms(), c2 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	long rss_loaded = proc_status_kb("VmRSS");
	long anon_loaded = proc_status_kb("RssAnon"), file_loaded = proc_status_kb("RssFile");
	long hwm_loaded = proc_status_kb("VmHWM");
	/* the runs' own peak from here (hwm_kb stays the whole process's) */
	bool run_reset = reset_peak();

	etc_refinputs *in = NULL;
	etc_npz *npz = NULL;
	if (npz_path) {
		if (etc_npz_open(&npz, npz_path, &err) < 0)
			return fail("inputs", &err);
		if (etc_refinputs_from_npz(&in, g, npz, &err) < 0)
			return fail("inputs", &err);
	} else if (etc_refinputs_from_record(&in, g, rec, "example_inputs", 0, &err) < 0) {
		return fail("example inputs", &err);
	}

	size_t n = etc_refgraph_node_count(g);
	bool *from_input = calloc(n ? n : 1, sizeof *from_input);
	if (!from_input)
		return 1;
	for (size_t i = 0; i < n; i++) {
		const etc_refsrc *src = NULL;
		size_t k = etc_refgraph_node_inputs(g, i, &src);
		for (size_t j = 0; j < k; j++)
			if (src[j].kind == ETC_REFSRC_INPUT ||
			    (src[j].kind == ETC_REFSRC_NODE && src[j].index < i &&
			     from_input[src[j].index]))
				from_input[i] = true;
	}
	stats s = {.from_input = from_input, .g = g};
	if (etc_refgraph_run(g, etc_refinputs_tensors(in), etc_refinputs_count(in), collect, &s,
	                     &err) < 0)
		return fail("run", &err);

	long hwm_first = proc_status_kb("VmHWM");
	bool timed_reset = run_reset && reset_peak();
	double *ms = malloc(2 * (size_t)repeat * sizeof *ms);
	if (!ms)
		return 1;
	double *cpu = ms + repeat;
	for (int r = 0; r < repeat; r++) {
		double a = now_ms(), c = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
		if (etc_refgraph_run(g, etc_refinputs_tensors(in), etc_refinputs_count(in), noop,
		                     NULL, &err) < 0)
			return fail("run", &err);
		ms[r] = now_ms() - a;
		cpu[r] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c;
	}
	/* a spinning thread pool shows as CPU time while the process sleeps */
	double idle0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
	struct timespec pause = {0, 200 * 1000 * 1000};
	nanosleep(&pause, NULL);
	double idle_cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - idle0;
	printf("idle_cpu_ms=%.3f\n", idle_cpu);
	printf("run_all_ms=");
	for (int r = 0; r < repeat; r++)
		printf("%s%.4f", r ? "," : "", ms[r]);
	printf("\nrun_all_cpu_ms=");
	for (int r = 0; r < repeat; r++)
		printf("%s%.4f", r ? "," : "", cpu[r]);
	printf("\n");
	qsort(ms, (size_t)repeat, sizeof *ms, cmp_double);
	double median = repeat % 2 ? ms[repeat / 2] : (ms[repeat / 2 - 1] + ms[repeat / 2]) / 2;

	printf("graph=%s\nnodes=%zu\ncomputed=%zu\nunsupported=%zu\nskipped=%zu\nfailed=%zu\n",
	       etc_refgraph_name(g), n, s.count[ETC_REFNODE_COMPUTED],
	       s.count[ETC_REFNODE_UNSUPPORTED], s.count[ETC_REFNODE_SKIPPED],
	       s.count[ETC_REFNODE_FAILED]);
	printf("unsupported_ops=%s\n", s.unsupported);
	printf("largest_output_bytes=%llu\nlargest_activation_bytes=%llu\n",
	       (unsigned long long)s.largest_output, (unsigned long long)s.largest_activation);
	printf("open_ms=%.3f\nload_ms=%.3f\nload_cpu_ms=%.3f\n", t1 - t0, t2 - t1, c2 - c1);
	printf("run_ms=%.3f\nrun_min_ms=%.3f\nrun_max_ms=%.3f\nruns=%d\n", median, ms[0],
	       ms[repeat - 1], repeat);
	printf("rss_base_kb=%ld\nrss_after_open_kb=%ld\nrss_after_load_kb=%ld\n", rss_base,
	       rss_opened, rss_loaded);
	printf("anon_base_kb=%ld\nfile_base_kb=%ld\n", anon_base, file_base);
	printf("anon_after_open_kb=%ld\nfile_after_open_kb=%ld\n", anon_opened, file_opened);
	printf("anon_after_load_kb=%ld\nfile_after_load_kb=%ld\n", anon_loaded, file_loaded);
	printf("hwm_after_load_kb=%ld\n", hwm_loaded);
	long hwm_end = proc_status_kb("VmHWM");
	long hwm_all = hwm_end > hwm_loaded ? hwm_end : hwm_loaded;
	if (hwm_first > hwm_all)
		hwm_all = hwm_first;
	printf("anon_end_kb=%ld\nfile_end_kb=%ld\nhwm_kb=%ld\n", proc_status_kb("RssAnon"),
	       proc_status_kb("RssFile"), hwm_all);
	printf("first_run_hwm_kb=%ld\n", run_reset ? hwm_first : -1);
	printf("first_run_sum=%.17g\n", s.sum);
	printf("run_hwm_kb=%ld\n", timed_reset ? hwm_end : -1);
	free(ms);
	free(from_input);
	etc_refinputs_free(in);
	etc_npz_free(npz);
	etc_refgraph_free(g);
	etc_etrecord_free(rec);
	long warm_base = -1, warm_hwm = -1;
	if (warm_cycle(path, &opt, npz_path, &warm_base, &warm_hwm) != 0)
		return 1;
	printf("warm_base_kb=%ld\nwarm_hwm_kb=%ld\n", warm_base, warm_hwm);
	return 0;
}
