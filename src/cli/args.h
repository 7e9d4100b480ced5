/*
 * args.h - the command line of etcompare: every option, parsed into `args`
 * with the checks that need no file. Kept apart from main so that the
 * argument parsing can be fuzzed (tests/fuzz/fuzz_cli.c).
 */
#ifndef ETC_CLI_ARGS_H
#define ETC_CLI_ARGS_H

#include "cmd_numgap.h"

#include <stdbool.h>

/* cli_parse's answer when --help or --version was printed: exit 0. */
#define CLI_DONE (-1)

#define ARGS_MAX_DELEGATE_SCALES 32

typedef struct args {
	const char *etdump, *debug_buffer, *tsv, *csv, *json;
	const char *source_scale, *target_scale;
	const char *etrecord, *method, *module, *graph_method;
	const char *reference_outputs, *block, *pair_by, *metrics, *junit, *plot_dir;
	const char *bundled_program; /* --bundled-program FILE.bpte */
	const char *report;          /* --report FILE.html */
	const char *min_snr, *max_mse, *min_cosine, *max_abs;
	const char *legacy_profile, *legacy_time_scale, *trace;
	const char *tables, *baseline_etdump, *max_regression, *min_event_time;
	const char *max_inflate;                              /* --max-inflate BYTES|FACTORx|none */
	const char *tap_specs, *max_stat_rel_diff, *tap_json; /* taps (taps.h) */
	bool include_delegate_debug_data, show_outputs, strict, example, no_table;
	bool graph, show_references, compare, plot;
	bool reference_ops;    /* --reference-ops: list the reference executor's ops */
	bool strict_pairing;   /* --strict-pairing */
	bool compare_explicit; /* asked for by a flag only the comparison uses */
	unsigned metric_mask;  /* --metrics, parsed by compare() */

	numgap_args numgap;
	unsigned max_values;
	/* --delegate-time-scale UNIT or BACKEND=UNIT, in the order given */
	const char *delegate_scales[ARGS_MAX_DELEGATE_SCALES];
	unsigned delegate_scale_count;
} args;

/*
 * Parses argv into *a (pointers into argv). Returns 0, EXIT_USAGE (the
 * message printed on stderr) or CLI_DONE.
 */
int cli_parse(int argc, char **argv, args *a);

/* Every input file named on the command line (NULL entries for options not
 * given), at most CLI_MAX_INPUTS: no output may replace one. */
#define CLI_MAX_INPUTS 16
size_t cli_input_paths(const args *a, const char **out);

/* The --plot folder: the one named, else "etcompare-plots". */
const char *cli_plot_dir(const args *a);

#endif
