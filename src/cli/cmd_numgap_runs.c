/*
 * cmd_numgap_runs.c - the gaps beyond the one shown (see cmd_numgap_runs.h):
 * numgap_run computes every run (and keeps each with --all-runs); this
 * names them for --json and JUnit and computes the distribution over them.
 */
#include "cmd_numgap_runs.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void snr_text(char *buf, size_t cap, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (isinf(v))
		snprintf(buf, cap, v > 0 ? "+inf" : "-inf");
	else
		snprintf(buf, cap, "%.4g", v);
}

/* The distribution's summary on stdout: one line per op. */
static void print_dist(const etc_numgap_dist *d)
{
	size_t no = etc_numgap_dist_op_count(d);
	printf("numeric gap over %zu runs: cumulative SNR (dB) per op\n",
	       etc_numgap_dist_run_count(d));
	printf("%4s  %-32s %5s %9s %9s %9s %9s  %s\n", "#", "op", "runs", "min", "p5", "median",
	       "p95", "worst run");
	char safe[256], t[4][32];
	for (size_t i = 0; i < no; i++) {
		const etc_numgap_dist_op *op = etc_numgap_dist_op_at(d, i);
		const etc_numgap_dist_stats *s = &op->cumulative;
		const char *name = *op->nodes ? op->nodes : *op->ops ? op->ops : op->event;
		snr_text(t[0], sizeof t[0], s->count ? s->min : NAN);
		snr_text(t[1], sizeof t[1], s->count ? s->p5 : NAN);
		snr_text(t[2], sizeof t[2], s->count ? s->median : NAN);
		snr_text(t[3], sizeof t[3], s->count ? s->p95 : NAN);
		printf("%4zu  %-32.32s %5zu %9s %9s %9s %9s  ", i,
		       etc_text_safe(safe, sizeof safe, name), op->runs, t[0], t[1], t[2], t[3]);
		if (s->count) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, s->worst);
			printf("%s (ETDump run %u, bundled input %d)",
			       etc_text_safe(safe, sizeof safe, id->block), id->run,
			       id->bundled_input_index);
		} else {
			printf("-");
		}
		if (op->has_agreement) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, op->agreement_outlier);
			snr_text(t[0], sizeof t[0], op->agreement_min_snr);
			printf("; runs agree to %s dB, outlier %s (ETDump run %u)", t[0],
			       etc_text_safe(safe, sizeof safe, id->block), id->run);
		}
		printf("\n");
	}
}

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
	print_dist(out->dist);
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
