/*
 * cmd_numgap_runs.c - --all-runs (see cmd_numgap_runs.h): one numeric gap
 * per block of the gap's name, through numgap_run with the block named
 * "Name#i", then the distribution over those runs.
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
			printf("%s run %u (bundled input %d)",
			       etc_text_safe(safe, sizeof safe, id->block), id->run,
			       id->bundled_input_index);
		} else {
			printf("-");
		}
		if (op->has_agreement) {
			const etc_numgap_run_id *id = etc_numgap_dist_run(d, op->agreement_outlier);
			snr_text(t[0], sizeof t[0], op->agreement_min_snr);
			printf("; runs agree to %s dB, outlier %s run %u", t[0],
			       etc_text_safe(safe, sizeof safe, id->block), id->run);
		}
		printf("\n");
	}
}

int numgap_all_runs(numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                    const etc_inspector_options *io, const char *etdump_name, numgap_state *first,
                    numgap_runs *out, int *gate, bool *done)
{
	memset(out, 0, sizeof *out);
	*done = false;
	if (!a->all_runs)
		return 0;
	const char *name = a->block ? a->block : "Execute";
	size_t nb = etc_inspector_block_count(insp), n = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len == strlen(name) && !memcmp(blk->name.ptr, name, blk->name.len))
			n++;
	}
	if (!n) {
		fprintf(stderr, "etcompare: error: --all-runs: no block named \"%s\"\n", name);
		return EXIT_USAGE;
	}
	*done = true;
	out->states = calloc(n, sizeof *out->states);
	out->labels = calloc(n, sizeof *out->labels);
	out->ids = calloc(n, sizeof *out->ids);
	out->gaps = calloc(n, sizeof *out->gaps);
	if (!out->states || !out->labels || !out->ids || !out->gaps) {
		fprintf(stderr, "etcompare: error: out of memory for %zu runs\n", n);
		return EXIT_INPUT;
	}
	out->cap = n;
	const char *block = a->block;
	int rc = 0;
	size_t k = 0;
	for (size_t b = 0; b < nb && rc == 0; b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len != strlen(name) || memcmp(blk->name.ptr, name, blk->name.len))
			continue;
		snprintf(out->labels[k], sizeof out->labels[k], "%.40s#%zu", name, b);
		numgap_state *st = k ? &out->states[k] : first;
		st->bundled = first->bundled;
		printf("numeric gap of block %s (ETDump run %u, bundled input %d):\n",
		       out->labels[k], blk->run_count ? blk->runs[0] : 0, blk->bundled_input_index);
		fflush(stdout);
		a->block = out->labels[k];
		rc = numgap_run(a, insp, rec, io, st, gate);
		if (rc == 0 && !st->ng) {
			fprintf(stderr,
			        "etcompare: error: --all-runs: no numeric gap for block %s\n",
			        out->labels[k]);
			rc = EXIT_USAGE;
		}
		if (rc == 0) {
			out->ids[k] = (etc_numgap_run_id){etdump_name, out->labels[k],
			                                  blk->run_count ? blk->runs[0] : 0,
			                                  blk->bundled_input_index};
			out->gaps[k] = st->ng;
			k++;
			out->count = k;
		}
	}
	a->block = block;
	if (rc)
		return rc;
	etc_error err;
	etc_error_clear(&err);
	if (etc_numgap_dist_compute(&out->dist, out->gaps, out->ids, out->count, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_INPUT;
	}
	print_dist(out->dist);
	return 0;
}

int numgap_runs_names(numgap_runs *r)
{
	r->names = calloc(r->count ? r->count : 1, sizeof *r->names);
	if (!r->names)
		return -1;
	for (size_t k = 0; k < r->count; k++)
		r->names[k] = r->labels[k];
	return 0;
}

void numgap_runs_free(numgap_runs *r)
{
	free(r->names);
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
