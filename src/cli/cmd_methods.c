/*
 * cmd_methods.c - the numeric gap per method of a multi-method ETRecord
 * (cmd_methods.h). Upstream's Inspector uses only the "forward" maps; here
 * each EventBlock whose name is a method of the record is linked to that
 * method's debug_handle_map and graph in turn.
 */
#include "cmd_methods.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool has_block(const etc_inspector *insp, const char *name)
{
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		if (blk->name.len == strlen(name) &&
		    memcmp(blk->name.ptr, name, blk->name.len) == 0)
			return true;
	}
	return false;
}

size_t methods_with_blocks(const etc_inspector *insp, const etc_etrecord *rec)
{
	if (!rec || etc_etrecord_method_count(rec) < 2)
		return 0;
	size_t n = 0;
	for (size_t m = 0; m < etc_etrecord_method_count(rec); m++)
		n += has_block(insp, etc_etrecord_method(rec, m));
	return n >= 2 ? n : 0;
}

int numgap_every_method(numgap_args *a, etc_inspector *insp, const etc_etrecord *rec,
                        const etc_inspector_options *io, numgap_state *first, int *gate, bool *done,
                        numgap_runs *more)
{
	*done = false;
	if (a->method || a->block || !methods_with_blocks(insp, rec))
		return 0;
	*done = true;
	size_t nm = etc_etrecord_method_count(rec);
	more->states = calloc(nm, sizeof *more->states);
	more->labels = calloc(nm, sizeof *more->labels);
	more->gaps = calloc(nm, sizeof *more->gaps);
	if (!more->states || !more->labels || !more->gaps) {
		fprintf(stderr, "etcompare: error: out of memory for %zu methods\n", nm);
		return EXIT_INPUT;
	}
	more->cap = nm;
	const etc_bundled *bp = first->bundled;
	bool kept = false;
	int rc = 0;
	etc_error err;
	for (size_t m = 0; m < etc_etrecord_method_count(rec) && rc == 0; m++) {
		const char *name = etc_etrecord_method(rec, m);
		if (!has_block(insp, name))
			continue;
		etc_error_clear(&err);
		if ((rc = etc_inspector_link(insp, rec, name, &err)) < 0) {
			fprintf(stderr, "etcompare: error: %s\n", err.message);
			return EXIT_INPUT;
		}
		printf("numeric gap of method %s (EventBlock %s):\n", name, name);
		fflush(stdout);
		numgap_state *st = kept ? &more->states[more->count] : first;
		st->bundled = bp;
		a->method = name;
		a->block = name;
		rc = numgap_run(a, insp, rec, io, st, gate);
		if (rc == 0 && st->ng) {
			snprintf(more->labels[more->count], sizeof more->labels[0], "%.60s", name);
			more->gaps[more->count++] = st->ng;
		}
		kept = true;
	}
	a->method = NULL;
	a->block = NULL;
	/* the reports after this one read the default method's maps */
	etc_error_clear(&err);
	if (etc_inspector_link(insp, rec, NULL, &err) < 0 && rc == 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		rc = EXIT_INPUT;
	}
	return rc;
}
