/*
 * cmd_numgap.h - the CLI's numeric gap: intermediate outputs against a
 * reference run (--reference-etdump / --reference-debug-buffer /
 * --reference-etrecord, or --reference-intermediates FILE.npz), the table,
 * --numgap-tsv, the plots, and the verdict (first divergence: exit 1).
 */
#ifndef ETC_CMD_NUMGAP_H
#define ETC_CMD_NUMGAP_H

#include "etcompare/etcompare.h"

#include <stdbool.h>

typedef struct numgap_args {
	const char *reference_etdump, *reference_debug_buffer, *reference_etrecord;
	const char *reference_intermediates, *tsv;
	const char *block, *method;
	const char *min_snr, *max_mse, *min_cosine, *max_abs;
	const char *distance, *quant_params, *layout;
	/* the reference graph: the ETRecord's own graph run on the run's inputs */
	const char *reference_graph, *reference_dtype, *inputs;
	const char *max_inflate; /* --max-inflate, for the reference debug buffer too */
	bool no_reference_run;
	bool all_runs; /* --all-runs: keep every run's gap, per op over the runs (cmd_numgap_runs.h)
	                */
	bool force;
	const char *run; /* --run N: run N of each chosen block alone (default: every run) */
} numgap_args;

/* What the command opened, freed by numgap_free. */
typedef struct numgap_state {
	etc_etdump *dump;
	etc_debug_buffer *buf;
	etc_inspector *insp;
	etc_etrecord *rec;
	etc_npz *npz;
	etc_refgraph *graph;
	etc_refinputs *inputs;
	etc_npz *inputs_npz;
	etc_torchsave *inputs_ts;
	bool inputs_warned;          /* the --inputs file's warning was printed */
	etc_reftensor *inputs_views; /* a .bpte test case's inputs (views into it) */
	size_t inputs_view_count;
	const etc_bundled *bundled; /* --bundled-program (borrowed), or NULL */
	bool gates;                 /* the gap's verdict is a gate (exit 1, JUnit) */
	bool quiet;                 /* runs after the first: their notes were said */
	/* inputs guessed among candidates, per run: what was chosen and how well
	 * it reproduced the run's program outputs, and the first run's score */
	bool by_candidates, have_first_score;
	double chosen_snr, first_score;
	char chosen[80];
	/* the run shown (the first that diverges, else the first compared) */
	etc_numgap *ng;
	/* every run compared, in brief (--json "numeric_gap_runs") */
	etc_numgap_run_summary *runs;
	size_t run_count;
	/* --all-runs: every run's gap, aligned with runs[] (ng is one of them) */
	etc_numgap **all;
	size_t all_count;
} numgap_state;

/* True when a reference for the numeric gap was given. */
bool numgap_wanted(const numgap_args *a);
/* True when an option asks for the reference graph (it must then work: exit 3 if not). */
bool numgap_graph_asked(const numgap_args *a);
/*
 * True when the numeric gap runs from the ETRecord's own graph: no other
 * reference, not --no-reference-run, and an ETRecord and a debug buffer.
 */
bool numgap_graph_mode(const numgap_args *a, bool have_etrecord, bool have_debug_buffer);

/*
 * Usage checks that need no file: the reference options belong together
 * (0 or EXIT_USAGE, with the message printed).
 */
int numgap_check_args(const numgap_args *a, bool have_etdump);

/*
 * Opens the reference (or loads the ETRecord's graph and the run's inputs),
 * computes the gap against `insp` (linked to `rec` when given), prints the
 * table on stdout and the verdict on stderr, and writes --numgap-tsv.
 * Returns 0 or an exit code; *gate becomes 1 at a divergence. The gap
 * stays in st->ng for --json and the plots; st->ng stays NULL when the
 * graph was not asked for and cannot run (a note says which option would
 * make it work).
 */
int numgap_run(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
               const etc_inspector_options *io, numgap_state *st, int *gate);

/*
 * --numgap-tsv: numgap_run writes a file itself; "-" is left to the caller,
 * which writes it once stdout carries data again. 0 or an exit code.
 */
int numgap_write_tsv(const char *path, const etc_numgap *ng);

/* Plots of the gap as `po` says; 0 or an exit code. */
int numgap_plots(const numgap_state *st, const etc_plot_options *po, etc_plot_result *pr);

void numgap_free(numgap_state *st);

#endif
