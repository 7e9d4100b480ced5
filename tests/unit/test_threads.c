/*
 * test_threads.c - the library is reentrant: 8 threads at once open, parse
 * and compare the same files (ETDump, debug buffer, ETRecord with reference
 * outputs, an .npz) and write every report into memory, several times each;
 * then 8 threads share one opened ETDump, debug buffer and ETRecord (read
 * only) with an Inspector and a comparison each. Every thread's reports must
 * equal, byte for byte, those of a run made alone before the threads start.
 * Last, readers charge a shared debug buffer's read budget while another
 * thread changes its cap (etc_debug_buffer_set_max_inflate, thread-safe).
 * Built and run under ThreadSanitizer by scripts/tsan.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "etcompare/etcompare.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define THREADS 8
#define ROUNDS  4

static char etdump_path[1024], debug_path[1024], etrecord_path[1024], npz_path[1024];

typedef struct shared_inputs {
	const etc_etdump *dump;
	const etc_debug_buffer *buf;
	const etc_etrecord *rec;
} shared_inputs;

/* What one run produced: every report as text, or the first error. */
typedef struct result {
	char *text;
	size_t len;
	int status;
	char error[1100];
} result;

static void result_free(result *r)
{
	free(r->text);
	r->text = NULL;
}

/* Link, compare with the ETRecord's references and write every report. */
static int analyse(const etc_etdump *dump, const etc_debug_buffer *buf, const etc_etrecord *rec,
                   FILE *out, etc_error *err)
{
	etc_inspector *insp = NULL;
	etc_accuracy *acc = NULL;
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	int rc = etc_inspector_create(&insp, dump, buf, &io, err);
	if (rc == 0)
		rc = etc_inspector_link(insp, rec, NULL, err);
	if (rc == 0) {
		etc_reference_set set = {.torchsave = etc_etrecord_reference_outputs(rec),
		                         .name = etc_etrecord_name(rec)};
		etc_accuracy_options ao;
		etc_accuracy_options_init(&ao);
		ao.min_snr = 10;
		rc = etc_accuracy_run(&acc, insp, &set, &ao, err);
	}
	etc_report_options ro;
	etc_report_options_init(&ro);
	ro.accuracy = acc;
	if (rc == 0)
		rc = etc_report_table(out, insp, &ro, err);
	if (rc == 0)
		rc = etc_report_tsv(out, insp, &ro, err);
	if (rc == 0)
		rc = etc_report_outputs(out, insp, &ro, err);
	if (rc == 0)
		rc = etc_report_json(out, insp, &ro, err);
	if (rc == 0)
		rc = etc_report_accuracy(out, acc, insp, ~0u, err);
	if (rc == 0)
		rc = etc_report_junit(out, acc, insp, err);
	if (rc == 0)
		rc = etc_report_references(out, rec, &ro, err);
	etc_accuracy_free(acc);
	etc_inspector_free(insp);
	return rc;
}

/* Every array of the .npz, summarized. */
static int read_npz(FILE *out, etc_error *err)
{
	etc_npz *z = NULL;
	int rc = etc_npz_open(&z, npz_path, err);
	for (size_t i = 0; rc == 0 && i < etc_npz_count(z); i++) {
		etc_tensor t;
		if (etc_npz_array(z, i, &t, err) < 0)
			continue; /* unsupported dtypes fail per array; the message is compared */
		etc_tensor_summary s;
		etc_tensor_summarize(&t, &s);
		fprintf(out, "%s %llu %.17g %.17g %.17g\n", etc_npz_name(z, i),
		        (unsigned long long)s.count, s.min, s.max, s.mean);
	}
	etc_npz_free(z);
	return rc;
}

/* One complete run on files of its own. */
static void run_alone(result *r)
{
	etc_error err;
	etc_error_clear(&err);
	FILE *out = open_memstream(&r->text, &r->len);
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_etrecord *rec = NULL;
	int rc = out ? 0 : ETC_ERR_NOMEM;
	if (rc == 0)
		rc = etc_etdump_open(&dump, etdump_path, &err);
	if (rc == 0)
		rc = etc_debug_buffer_open(&buf, debug_path, &err);
	if (rc == 0)
		rc = etc_etrecord_open(&rec, etrecord_path, &err);
	if (rc == 0)
		rc = analyse(dump, buf, rec, out, &err);
	if (rc == 0)
		rc = read_npz(out, &err);
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	if (out)
		fclose(out);
	r->status = rc;
	snprintf(r->error, sizeof r->error, "%s", err.message);
}

/* One run on inputs opened once and shared by every thread. */
static void run_shared(const shared_inputs *in, result *r)
{
	etc_error err;
	etc_error_clear(&err);
	FILE *out = open_memstream(&r->text, &r->len);
	int rc = out ? analyse(in->dump, in->buf, in->rec, out, &err) : ETC_ERR_NOMEM;
	if (out)
		fclose(out);
	r->status = rc;
	snprintf(r->error, sizeof r->error, "%s", err.message);
}

typedef struct worker {
	pthread_t thread;
	const shared_inputs *shared; /* NULL: open the files itself */
	pthread_barrier_t *start;
	result results[ROUNDS];
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	pthread_barrier_wait(w->start); /* all threads parse at the same time */
	for (int k = 0; k < ROUNDS; k++) {
		if (w->shared)
			run_shared(w->shared, &w->results[k]);
		else
			run_alone(&w->results[k]);
	}
	return NULL;
}

static bool same(const result *a, const result *b)
{
	return a->status == b->status && a->len == b->len &&
	       (a->len == 0 || memcmp(a->text, b->text, a->len) == 0) &&
	       strcmp(a->error, b->error) == 0;
}

static void run_threads(const shared_inputs *shared, const result *expect, const char *what)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, THREADS);
	static worker workers[THREADS];
	memset(workers, 0, sizeof workers);
	int created = 0;
	for (int i = 0; i < THREADS; i++) {
		workers[i].shared = shared;
		workers[i].start = &start;
		if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) == 0)
			created++;
	}
	CHECK(created == THREADS);
	if (created != THREADS)
		exit(check_report("test_threads")); /* the barrier would never open */
	size_t differing = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(workers[i].thread, NULL);
		for (int k = 0; k < ROUNDS; k++) {
			if (!same(&workers[i].results[k], expect)) {
				differing++;
				fprintf(
				    stderr,
				    "%s: thread %d round %d differs (status %d, %zu bytes: %s)\n",
				    what, i, k, workers[i].results[k].status,
				    workers[i].results[k].len, workers[i].results[k].error);
			}
			result_free(&workers[i].results[k]);
		}
	}
	CHECK(differing == 0);
	pthread_barrier_destroy(&start);
}

/* Reads every intermediate tensor of the buffer through a fresh inspector. */
static void *read_tensors(void *arg)
{
	const shared_inputs *in = arg;
	etc_error err;
	for (int k = 0; k < ROUNDS; k++) {
		etc_inspector *insp = NULL;
		if (etc_inspector_create(&insp, in->dump, in->buf, NULL, &err) < 0)
			continue;
		for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
			const etc_event_block *blk = etc_inspector_block(insp, b);
			for (size_t e = 0; e < blk->event_count; e++)
				for (uint32_t j = 0; j < blk->events[e].debug_count; j++) {
					etc_tensor t;
					etc_value_tensor(&blk->events[e].debug[j], 0, in->buf, &t,
					                 &err);
				}
		}
		etc_inspector_free(insp);
	}
	return NULL;
}

static void *set_caps(void *arg)
{
	etc_debug_buffer *buf = arg;
	static const char *const specs[] = {"none", "64x", "1G", "16x"};
	etc_error err;
	for (int k = 0; k < 200; k++)
		if (etc_debug_buffer_set_max_inflate(buf, specs[k % 4], &err) < 0)
			return (void *)1;
	return NULL;
}

/* The cap and its text change under the budget's lock while readers charge
 * it. A buffer of its own: the ranges must be new to the budget, or a read
 * never looks at the cap. */
static void cap_while_reading(const etc_etdump *dump)
{
	etc_error err;
	etc_debug_buffer *buf = NULL;
	CHECK(etc_debug_buffer_open(&buf, debug_path, &err) == 0);
	if (!buf)
		return;
	shared_inputs in = {dump, buf, NULL};
	pthread_t readers[2], capper;
	bool capper_made = pthread_create(&capper, NULL, set_caps, buf) == 0;
	int created = 0;
	for (int i = 0; i < 2; i++)
		created += pthread_create(&readers[i], NULL, read_tensors, &in) == 0;
	for (int i = 0; i < created; i++)
		pthread_join(readers[i], NULL);
	void *capped = (void *)1;
	if (capper_made)
		pthread_join(capper, &capped);
	CHECK(created == 2 && capper_made && capped == NULL);
	CHECK(etc_debug_buffer_inflated(buf) > 0);
	etc_debug_buffer_free(buf);
}

int main(void)
{
	const char *src = getenv("ETC_SRC");
	char root[900];
	if (src && *src) {
		snprintf(root, sizeof root, "%s/", src);
	} else {
		const char *f = __FILE__, *cut = strstr(f, "tests/unit/");
		snprintf(root, sizeof root, "%.*s", cut ? (int)(cut - f) : 0, f);
	}
	snprintf(etdump_path, sizeof etdump_path, "%stests/data/runs5_ops12.etdp", root);
	snprintf(debug_path, sizeof debug_path, "%stests/data/runs5_ops12.bin", root);
	snprintf(etrecord_path, sizeof etrecord_path, "%stests/data/example_refs.etrecord", root);
	snprintf(npz_path, sizeof npz_path, "%stests/data/npz/arrays_deflated.npz", root);

	/* The expected output: one run alone, before any thread exists. */
	result alone = {0};
	run_alone(&alone);
	CHECK(alone.status == 0);
	if (alone.status != 0)
		fprintf(stderr, "run alone failed: %s\n", alone.error);
	/* The run did real work: a linked table, 10 compared outputs, the npz. */
	CHECK(alone.text && strstr(alone.text, "aten.convolution.default"));
	CHECK(alone.text && strstr(alone.text, "<testsuite"));
	CHECK(alone.text && strstr(alone.text, "tests=\"10\""));
	CHECK(alone.text && strstr(alone.text, "\nf4 "));
	run_threads(NULL, &alone, "own files");

	/* Shared, read-only inputs. */
	etc_error err;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_etrecord *rec = NULL;
	CHECK(etc_etdump_open(&dump, etdump_path, &err) == 0);
	CHECK(etc_debug_buffer_open(&buf, debug_path, &err) == 0);
	CHECK(etc_etrecord_open(&rec, etrecord_path, &err) == 0);
	if (dump && buf && rec) {
		shared_inputs in = {dump, buf, rec};
		result one = {0};
		run_shared(&in, &one);
		CHECK(one.status == 0);
		CHECK(one.text && alone.text && one.len < alone.len &&
		      memcmp(one.text, alone.text, one.len) == 0); /* the same, minus the npz */
		run_threads(&in, &one, "shared inputs");
		result_free(&one);
		cap_while_reading(dump);
	}
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	result_free(&alone);
	return check_report("test_threads");
}
