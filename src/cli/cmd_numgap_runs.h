/*
 * cmd_numgap_runs.h - --all-runs: the numeric gap of every block of the
 * gap's name (each block's run, with its own inputs), and per op its SNR
 * over the runs (etcompare/numgap_dist.h) for the terminal, --json and
 * the HTML report.
 */
#ifndef ETC_CMD_NUMGAP_RUNS_H
#define ETC_CMD_NUMGAP_RUNS_H

#include "cmd_numgap.h"

#include <stddef.h>

typedef struct numgap_runs {
	numgap_state *states; /* the runs after the first (the first is the caller's) */
	size_t count;         /* runs computed, the first included */
	size_t cap;           /* states allocated */
	char (*labels)[64];
	etc_numgap_run_id *ids;
	const etc_numgap **gaps;
	etc_numgap_dist *dist;
	const char **names; /* labels as pointers (numgap_runs_names) */
} numgap_runs;

/* Fills r->names from r->labels; 0 or -1 (out of memory). */
int numgap_runs_names(numgap_runs *r);

/*
 * With --all-runs: runs the gap on every block named a->block (default
 * "Execute"), the first into `first`, prints each run's table and verdict
 * and the distribution's summary, and fills `out`. *done is true when it
 * ran (then the caller runs no gap itself). Returns 0 or an exit code.
 */
int numgap_all_runs(numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                    const etc_inspector_options *io, const char *etdump_name, numgap_state *first,
                    numgap_runs *out, int *gate, bool *done);

void numgap_runs_free(numgap_runs *r);

#endif
