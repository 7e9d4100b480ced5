/*
 * phases.c - times the phases of the TSV pipeline separately (open+verify,
 * Inspector grouping, TSV writing, summaries) with the public API, so a
 * regression can be pinned on one module.
 *
 * Usage: phases ETDUMP [DEBUG_BUFFER] [--outputs] [--repeat N]
 * Writes the TSV (and outputs with --outputs) to /dev/null.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcompare/etcompare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int fail(const etc_error *err)
{
	fprintf(stderr, "phases: %s\n", err->message);
	return 1;
}

int main(int argc, char **argv)
{
	const char *etdp = NULL, *dbg = NULL;
	int outputs = 0, repeat = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--outputs"))
			outputs = 1;
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!etdp)
			etdp = argv[i];
		else
			dbg = argv[i];
	}
	if (!etdp) {
		fprintf(stderr, "usage: phases ETDUMP [DEBUG_BUFFER] [--outputs] [--repeat N]\n");
		return 2;
	}
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 1;
	for (int rep = 0; rep < repeat; rep++) {
		etc_error err;
		etc_error_clear(&err);
		etc_etdump *dump = NULL;
		etc_debug_buffer *buf = NULL;
		etc_inspector *insp = NULL;
		double t0 = now();
		if (etc_etdump_open(&dump, etdp, &err) < 0)
			return fail(&err);
		if (dbg && etc_debug_buffer_open(&buf, dbg, &err) < 0)
			return fail(&err);
		double t1 = now();
		unsigned long long events = (unsigned long long)etc_etdump_event_total(dump);
		if (etc_inspector_create(&insp, dump, buf, NULL, &err) < 0)
			return fail(&err);
		double t2 = now();
		if (etc_report_tsv(null, insp, NULL, &err) < 0)
			return fail(&err);
		fflush(null);
		double t3 = now();
		if (outputs && etc_report_outputs(null, insp, NULL, &err) < 0)
			return fail(&err);
		fflush(null);
		double t4 = now();
		etc_inspector_free(insp);
		etc_debug_buffer_free(buf);
		etc_etdump_free(dump);
		double t5 = now();
		printf(
		    "open+verify %.3f s  inspector %.3f s  tsv %.3f s  outputs %.3f s  free %.3f s"
		    "  (%llu events)\n",
		    t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, events);
	}
	fclose(null);
	return 0;
}
