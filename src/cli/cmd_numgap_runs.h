/*
 * cmd_numgap_runs.h - the numeric gaps beyond the one shown: with
 * --all-runs, every run numgap_run compared (every run of every chosen
 * block; --run N: that run of each) and per op its SNR over those runs
 * (etcompare/numgap_dist.h) for the terminal, --json, JUnit and the HTML
 * report; and the gaps of a multi-method record's methods after the first
 * (cmd_methods.h).
 */
#ifndef ETC_CMD_NUMGAP_RUNS_H
#define ETC_CMD_NUMGAP_RUNS_H

#include "cmd_numgap.h"

#include <stddef.h>

typedef struct numgap_runs {
	/* the methods' gaps (numgap_every_method): gaps[0] is the first's, in the
	 * caller's state; states[] hold the others' */
	numgap_state *states;
	size_t count; /* methods computed, the first included */
	size_t cap;   /* states allocated */
	char (*labels)[64];
	const etc_numgap **gaps;
	/* --all-runs: the distribution over the first state's runs */
	etc_numgap_run_id *ids;
	etc_numgap_dist *dist;
	/* what --json "numeric_gap_more" and JUnit carry: every run not shown
	 * (--all-runs), then every method after the first */
	const etc_numgap **more;
	const char **names;
	char (*more_labels)[80];
	size_t more_count;
} numgap_runs;

/*
 * After the gap ran into `first` (and the methods into `out`): with
 * --all-runs, the distribution over first's runs (printed on stdout, one
 * line per op); then out->more / out->names. 0 or an exit code.
 */
int numgap_runs_finish(const numgap_args *a, const etc_inspector *insp, const char *etdump_name,
                       const numgap_state *first, numgap_runs *out);

void numgap_runs_free(numgap_runs *r);

#endif
