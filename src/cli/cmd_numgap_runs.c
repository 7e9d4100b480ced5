/*
 * cmd_numgap_runs.c - the gaps beyond the one shown (see cmd_numgap_runs.h):
 * numgap_run computes every run (and keeps each with --all-runs); this
 * names them for --json and JUnit and computes the distribution over them.
 */
#include "cmd_numgap_runs.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "Execute#2", or "Execute#2 run 1" when block 2 has several runs */
static void run_label(const etc_inspector *insp, const etc_numgap *ng,
                      const etc_numgap_run_summary *s, char *buf, size_t cap)
{
	size_t b;
	uint32_t run, etdump_run;
	etc_numgap_where(ng, &b, &run, &etdump_run);
	const etc_event_block *blk = etc_inspector_block(insp, b);
	if (blk && blk->run_count > 1)
		snprintf(buf, cap, "%.60s run %u", s->block, run);
	else
		snprintf(buf, cap, "%.60s", s->block);
}

int numgap_runs_finish(const numgap_args *a, const etc_inspector *insp, const char *etdump_name,
                       const numgap_state *first, numgap_runs *out)
{
	size_t runs = a->all_runs ? first->all_count : 0;
	size_t methods = out->count > 1 ? out->count - 1 : 0;
	size_t n = runs + methods;
	out->more = calloc(n ? n : 1, sizeof *out->more);
	out->names = calloc(n ? n : 1, sizeof *out->names);
	out->more_labels = calloc(n ? n : 1, sizeof *out->more_labels);
	out->ids = calloc(runs ? runs : 1, sizeof *out->ids);
	if (!out->more || !out->names || !out->more_labels || !out->ids) {
		fprintf(stderr, "etcompare: error: out of memory for %zu numeric gaps\n", n);
		return EXIT_INPUT;
	}
	for (size_t k = 0; k < runs; k++) {
		const etc_numgap *ng = first->all[k];
		const etc_numgap_run_summary *s = &first->runs[k];
		size_t b;
		uint32_t run, etdump_run;
		etc_numgap_where(ng, &b, &run, &etdump_run);
		out->ids[k] =
		    (etc_numgap_run_id){etdump_name, s->block, etdump_run,
		                        etc_inspector_block(insp, b)->bundled_input_index};
		if (ng == first->ng)
			continue; /* "numeric_gap" itself */
		run_label(insp, ng, s, out->more_labels[out->more_count],
		          sizeof out->more_labels[0]);
		out->names[out->more_count] = out->more_labels[out->more_count];
		out->more[out->more_count++] = ng;
	}
	for (size_t k = 1; k < out->count; k++) {
		out->names[out->more_count] = out->labels[k];
		out->more[out->more_count++] = out->gaps[k];
	}
	if (!runs)
		return 0;
	etc_error err;
	etc_error_clear(&err);
	const etc_numgap *const *gaps = (const etc_numgap *const *)first->all;
	if (etc_numgap_dist_compute(&out->dist, gaps, out->ids, runs, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_INPUT;
	}
	if (etc_report_numgap_dist(stdout, out->dist, &err) < 0) {
		cli_stdout_error(&err);
		return EXIT_OUTPUT;
	}
	return 0;
}

void numgap_runs_free(numgap_runs *r)
{
	free(r->more);
	free(r->names);
	free(r->more_labels);
	etc_numgap_dist_free(r->dist);
	/* states[0] is never the caller's first state: free every one */
	for (size_t k = 0; k < r->cap; k++)
		numgap_free(&r->states[k]);
	free(r->states);
	free(r->labels);
	free(r->ids);
	free(r->gaps);
	memset(r, 0, sizeof *r);
}
