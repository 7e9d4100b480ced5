/*
 * args.c - the options of etcompare, --help, and the messages for usage
 * and input errors (see args.h).
 */
#include "args.h"
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "Usage: etcompare --etdump FILE [--debug_buffer FILE] [--etrecord FILE] [options]\n"
    "  or:  etcompare --etrecord FILE --graph [METHOD] | --show-references\n"
    "  or:  etcompare --legacy-profile prof_result.bin [--legacy-time-scale U]\n"
    "  or:  etcompare --example\n"
    "\n"
    "Numerical debugging and profiling of ExecuTorch runs. Jobs: --etdump alone profiles;\n"
    "a threshold (--min-snr...) with --etrecord or --reference-outputs compares outputs;\n"
    "with --etrecord and --debug_buffer the ETRecord's graph finds the numeric gap op by\n"
    "op (or --reference-etdump, --reference-intermediates);\n"
    "--baseline-etdump diffs performance; --legacy-profile reads prof_result.bin.\n"
    "\n"
    "Inputs:\n"
    "  --etdump FILE             ETDump written by the runtime (.etdp); alias --etdump_path\n"
    "  --debug_buffer FILE       debug buffer with tensor data; alias --debug_buffer_path\n"
    "  --etrecord FILE           ETRecord written at export: links events to graph nodes,\n"
    "                            stack traces and modules; alias --etrecord_path\n"
    "  --method NAME             the ETRecord method to link (forward)\n"
    "  --example                 run the bundled example (examples/): profile, accuracy gate,\n"
    "                            numeric gap, plots; exits 0 when it ran, 1 with --junit\n"
    "                            (its failures are the example's); a bare etcompare prints\n"
    "                            the usage\n"
    "\n"
    "Timing:\n"
    "  --source_time_scale U     unit of the ETDump timestamps: ns us ms s cycles (ns)\n"
    "  --target_time_scale U     unit of the reported times (ms)\n"
    "  --delegate-time-scale U, --delegate-time-scale BACKEND=U\n"
    "                            unit of delegated events' timestamps, for all or one\n"
    "                            backend (repeatable; default: the source unit, scaled as\n"
    "                            the current Inspector does); cycles stay cycles\n"
    "\n"
    "Output:\n"
    "  --tsv FILE                write the table as TSV (upstream save_data_to_tsv);\n"
    "                            alias --tsv_path\n"
    "  --csv FILE                write the table as CSV\n"
    "  --json FILE               write the full JSON report (schema in schema/)\n"
    "  --junit FILE              JUnit XML of every gate run: one testcase per output, per\n"
    "                            numeric-gap row and per gated event\n"
    "  --plot [DIR]              bar charts, error histograms and heat maps (./etcompare-plots);\n"
    "                            with an ETDump also the profiling plots: top operators,\n"
    "                            per-run box plots, framework tax per run, a timeline\n"
    "  --report FILE.html        one self-contained HTML report of the run (any mode): verdict,\n"
    "                            command, inputs, tables, numeric gap and the plots embedded\n"
    "  --show-outputs            print program outputs and intermediate outputs\n"
    "  --max-values N            values shown per tensor (8)\n"
    "  --max-inflate BYTES|FACTORx|none\n"
    "                            cap on the tensor bytes read from a debug buffer (default\n"
    "                            16x its size, at least 64 MiB; e.g. 8G, 64x, none)\n"
    "  --include_delegate_debug_data\n"
    "                            add the delegate_debug_metadata column\n"
    "  --no-table                do not print the profiling tables\n"
    "  --tables LIST             tables to print among profile, tax, memory, ops, modules,\n"
    "                            delegates, all (profile); --tsv and --json follow it\n"
    "  --strict                  merged runs with different debug data are an error\n"
    "  --trace FILE              write the profile as a Chrome trace (JSON) for Perfetto UI\n"
    "                            and chrome://tracing: a thread per run, delegate events on\n"
    "                            their own track, allocations as counters; times in us\n"
    "\n"
    "ETRecord:\n"
    "  --graph [METHOD]          print the Edge program: node, op, inputs, debug handle,\n"
    "                            source line\n"
    "  --show-references         print the reference outputs and representative inputs\n"
    "  --module NAME             total average time of the events in module NAME\n"
    "                            (upstream find_total_for_module)\n"
    "\n"
    "Legacy profiler (pre-ETDump runtimes):\n"
    "  --legacy-profile FILE     print the old profiler's tables of prof_result.bin: events\n"
    "                            per iteration of each block, framework tax, memory\n"
    "  --legacy-time-scale U     unit of its timestamps: ns us ms cycles (ns); shown in ms\n"
    "\n"
    "Performance diff (events matched by signature, p50 compared):\n"
    "  --baseline-etdump FILE    the baseline ETDump of the same model\n"
    "  --max-regression PCT      exit 1 when Method::execute or an event regresses by more\n"
    "                            than PCT percent\n"
    "  --min-event-time T        events whose p50 is below T (target unit) on both sides\n"
    "                            are not gated (0); delegated events in cycles always are\n"
    "\n"
    "Accuracy (program outputs against reference outputs):\n"
    "  --compare                 compare (alias --compare_results); implied by the flags below\n"
    "  --reference-outputs FILE  references from a torch.save file or an .npz, instead of\n"
    "                            the ETRecord's reference_outputs\n"
    "  --bundled-program FILE.bpte\n"
    "                            references from a BundledProgram: the expected outputs of\n"
    "                            test case k of --method (forward) are reference k; used\n"
    "                            instead of the ETRecord's reference_outputs\n"
    "  --block NAME|N            EventBlock to compare (Execute: every block of that\n"
    "                            name; Execute#2 or its 0-based index 2: that block alone)\n"
    "  --tap-specs FILE.json     the TapSpec list of a tapped program: its tap outputs\n"
    "                            become per-op rows (FULL_TENSOR like intermediates, STATS\n"
    "                            field by field), left out of the output table\n"
    "  --max-stat-rel-diff X|FIELD=X,...\n"
    "                            gate STATS fields on |actual-reference|/|reference|\n"
    "  --tap-json FILE           the tap rows as JSON\n"
    "  --pair-by index|order|content|all\n"
    "                            pair runs with references by bundled_input_index, by\n"
    "                            order, by content (the reference set the run's outputs\n"
    "                            match best), or every run with reference 0 (default:\n"
    "                            index when runs carry one, else content: the ExecuTorch\n"
    "                            runtime does not write the index)\n"
    "  --strict-pairing          a content pairing that is ambiguous (margin under 1 dB over\n"
    "                            the second best, or best SNR under 0 dB) fails its rows\n"
    "  --min-snr DB, --max-mse X, --min-cosine X, --max-abs X\n"
    "                            the gate: exit 1 when an output fails one\n"
    "  --metrics LIST            columns: snr,mse,cosine,l1,max_abs,max_rel "
    "(snr,mse,cosine,max_abs)\n"
    "                            and --plot's bar charts (default: snr and the gated ones)\n"
    "\n"
    "Numeric gap (intermediate outputs op by op against a reference run):\n"
    "  With --etrecord and --debug_buffer the reference is the ETRecord's own graph, run\n"
    "  in float64 on the run's inputs: each op gets a cumulative SNR (the reference chain\n"
    "  from the model's inputs) and a local SNR (the op re-run on the runtime's own logged\n"
    "  inputs), and \"where the error enters\" ranks ops by the local one.\n"
    "\n"
    "  --reference-graph NAME    the graph to run: exported_program,\n"
    "                            edge_dialect_exported_program or a graph_map name\n"
    "                            (default: upstream's choice)\n"
    "  --reference-dtype float64|float32\n"
    "                            the reference's arithmetic (default float64)\n"
    "  --inputs FILE             the run's inputs: an .npz with arrays \"0\", \"1\", ... or\n"
    "                            a torch.save list (default: the ETRecord's\n"
    "                            representative_inputs[bundled_input_index], else the\n"
    "                            example or representative inputs that reproduce the run's\n"
    "                            outputs best)\n"
    "  --no-reference-run        no numeric gap from the ETRecord's graph\n"
    "  --all-runs                keep every run's numeric gap (--json, JUnit) and show per\n"
    "                            op its SNR over the runs the gap compared\n"
    "  --reference-ops           list the ops the reference executor computes\n"
    "\n"
    "  Or a reference run of your own (these win over the graph):\n"
    "\n"
    "  --reference-etdump FILE   the reference run's ETDump (e.g. portable CPU kernels)\n"
    "  --reference-debug-buffer FILE\n"
    "                            its debug buffer\n"
    "  --reference-etrecord FILE\n"
    "                            its own ETRecord (default: --etrecord)\n"
    "  --reference-intermediates FILE.npz\n"
    "                            reference intermediates, arrays named by debug handle\n"
    "                            (\"12\", or \"12,13\" for a fused group); needs --etrecord\n"
    "  --numgap-tsv FILE         the gap as TSV (upstream calculate_numeric_gap columns)\n"
    "  --distance mse|l1|snr     the gap column's distance (default mse; l1 is a sum)\n"
    "  --quant-params FILE.json  scale/zero_point (per tensor, or lists with \"axis\") by\n"
    "                            debug handle, to dequantize integer runtime tensors\n"
    "                            (default: the ETRecord's quantize/dequantize nodes)\n"
    "  --layout auto|none        compare NHWC against NCHW after permuting (default auto)\n"
    "  --run N                   compare run N (0-based) of each --block only (default:\n"
    "                            every run of every block, each run's first divergence)\n"
    "  --force                   compare even when an ETRecord, a debug buffer or a .bpte\n"
    "                            does not fit its ETDump, the reference is another\n"
    "                            program's, or the baseline ETDump another program's (a\n"
    "                            warning instead of exit 3)\n"
    "\n"
    "  The thresholds (--min-snr, --max-mse, --min-cosine, --max-abs) and --plot apply\n"
    "  too; exit 1 at the first diverging operator (printed with its stack trace; from\n"
    "  the ETRecord's graph only with a threshold)\n"
    "\n"
    "General:\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the version\n"
    "\n"
    "  FILE may be - for standard output. Files are replaced atomically.\n"
    "  Every long option may be spelled with '_' or '-' between its words.\n"
    "\n"
    "Exit status: 0 ok, 1 a gate failed (accuracy, numeric gap or regression), 2 usage\n"
    "error, 3 unreadable or invalid input, 4 an output file could not be written.\n"
    "\n"
    "Examples:\n"
    "  # where the time goes: every operator's p10..max over the runs\n"
    "  etcompare --etdump model.etdp --etrecord model.etrecord\n"
    "  # gate CI on accuracy: exit 1 when an output's SNR is under 30 dB\n"
    "  etcompare --etdump model.etdp --debug_buffer debug.bin --etrecord model.etrecord \\\n"
    "      --min-snr 30 --junit accuracy.xml\n"
    "  # the first operator whose output diverges, and where the error enters\n"
    "  etcompare --etdump model.etdp --debug_buffer debug.bin --etrecord model.etrecord \\\n"
    "      --min-snr 30\n"
    "  # performance against a baseline: exit 1 past a 10% regression\n"
    "  etcompare --etdump new.etdp --baseline-etdump old.etdp --max-regression 10\n";

int usage_error(const char *fmt, const char *arg)
{
	char safe[1024]; /* an argument may hold anything a file name can */
	fprintf(stderr, "etcompare: ");
	fprintf(stderr, fmt, etc_text_safe(safe, sizeof safe, arg));
	fprintf(stderr, "\nTry 'etcompare --help'.\n");
	return EXIT_USAGE;
}

size_t cli_input_paths(const args *a, const char **out)
{
	const char *in[] = {a->etdump,
	                    a->debug_buffer,
	                    a->etrecord,
	                    a->reference_outputs,
	                    a->bundled_program,
	                    a->baseline_etdump,
	                    a->legacy_profile,
	                    a->tap_specs,
	                    a->numgap.reference_etdump,
	                    a->numgap.reference_debug_buffer,
	                    a->numgap.reference_etrecord,
	                    a->numgap.reference_intermediates,
	                    a->numgap.quant_params,
	                    a->numgap.inputs};
	_Static_assert(sizeof in / sizeof *in <= CLI_MAX_INPUTS, "CLI_MAX_INPUTS too small");
	size_t n = sizeof in / sizeof *in;
	for (size_t i = 0; i < n; i++)
		out[i] = in[i];
	return n;
}

const char *cli_plot_dir(const args *a)
{
	return a->plot_dir ? a->plot_dir : "etcompare-plots";
}

/* Whether the report path is the plot folder or inside it, as written (the
 * folder is replaced whole: a report there would be lost or in the way). */
static bool report_in_plots(const char *report, const char *plot)
{
	size_t n = strlen(plot), m = strlen(report);
	while (n > 1 && plot[n - 1] == '/')
		n--;
	while (m > 1 && report[m - 1] == '/')
		m--;
	return strncmp(report, plot, n) == 0 && (m == n || report[n] == '/');
}

/* "etcompare: OPTION takes WHAT, not 'VALUE'" and the --help hint. */
static int bad_value_note(const char *option, const char *what, const char *value, const char *note)
{
	char safe[256]; /* a value may be long, or hold control characters */
	fprintf(stderr, "etcompare: %s takes %s, not '%s'%s\nTry 'etcompare --help'.\n", option,
	        what, etc_text_safe(safe, sizeof safe, value), note);
	return EXIT_USAGE;
}

static int bad_value(const char *option, const char *what, const char *value)
{
	return bad_value_note(option, what, value, "");
}

/*
 * Length of the option name in `arg` ("--name" or "--name=VALUE") when it is
 * `name` in either spelling: '_' and '-' are the same character after the
 * leading "--" (upstream's tools use underscores). 0 when it is not.
 */
static size_t option_match(const char *arg, const char *name)
{
	if (arg[0] != '-' || arg[1] != '-')
		return 0;
	size_t i = 2;
	for (; name[i]; i++) {
		char x = arg[i] == '_' ? '-' : arg[i], y = name[i] == '_' ? '-' : name[i];
		if (x != y)
			return 0;
	}
	return arg[i] == '\0' || arg[i] == '=' ? i : 0;
}

/* Matches "--name VALUE" and "--name=VALUE"; returns 1 on match, -1 if the value is missing. */
static int value_opt(int argc, char **argv, int *i, const char *name, const char **out)
{
	const char *a = argv[*i];
	size_t n = option_match(a, name);
	if (!n)
		return 0;
	if (a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	/* A following option is not a value: "--tsv --strict" is a missing value,
	 * not a file named "--strict" (use --tsv=--strict for that). */
	if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1] == '-'))
		return -1;
	*out = argv[++*i];
	return 1;
}

/*
 * The options. Adding one is one line in `valued` (it takes a value, kept
 * as a string in `args`) or in `flags` (a bool), plus its check in
 * check_values() when its value has a form. Every name is matched in both
 * spellings ("--min-snr" and "--min_snr").
 */
typedef struct option_field {
	const char *name;
	size_t field;
} option_field;

static const option_field valued[] = {
    {"--etdump", offsetof(args, etdump)},
    {"--etdump_path", offsetof(args, etdump)},
    {"--debug_buffer", offsetof(args, debug_buffer)},
    {"--debug_buffer_path", offsetof(args, debug_buffer)},
    {"--tsv", offsetof(args, tsv)},
    {"--tsv_path", offsetof(args, tsv)},
    {"--csv", offsetof(args, csv)},
    {"--json", offsetof(args, json)},
    {"--source_time_scale", offsetof(args, source_scale)},
    {"--target_time_scale", offsetof(args, target_scale)},
    {"--etrecord", offsetof(args, etrecord)},
    {"--etrecord_path", offsetof(args, etrecord)},
    {"--method", offsetof(args, method)},
    {"--module", offsetof(args, module)},
    {"--reference-outputs", offsetof(args, reference_outputs)},
    {"--bundled-program", offsetof(args, bundled_program)},
    {"--block", offsetof(args, block)},
    {"--pair-by", offsetof(args, pair_by)},
    {"--metrics", offsetof(args, metrics)},
    {"--junit", offsetof(args, junit)},
    {"--report", offsetof(args, report)},
    {"--min-snr", offsetof(args, min_snr)},
    {"--max-mse", offsetof(args, max_mse)},
    {"--min-cosine", offsetof(args, min_cosine)},
    {"--max-abs", offsetof(args, max_abs)},
    {"--reference-etdump", offsetof(args, numgap.reference_etdump)},
    {"--reference-debug-buffer", offsetof(args, numgap.reference_debug_buffer)},
    {"--reference-etrecord", offsetof(args, numgap.reference_etrecord)},
    {"--reference-intermediates", offsetof(args, numgap.reference_intermediates)},
    {"--numgap-tsv", offsetof(args, numgap.tsv)},
    {"--distance", offsetof(args, numgap.distance)},
    {"--quant-params", offsetof(args, numgap.quant_params)},
    {"--layout", offsetof(args, numgap.layout)},
    {"--run", offsetof(args, numgap.run)},
    {"--reference-graph", offsetof(args, numgap.reference_graph)},
    {"--reference-dtype", offsetof(args, numgap.reference_dtype)},
    {"--inputs", offsetof(args, numgap.inputs)},

    {"--legacy-profile", offsetof(args, legacy_profile)},
    {"--legacy-time-scale", offsetof(args, legacy_time_scale)},
    {"--trace", offsetof(args, trace)},
    {"--tables", offsetof(args, tables)},
    {"--baseline-etdump", offsetof(args, baseline_etdump)},
    {"--max-regression", offsetof(args, max_regression)},
    {"--min-event-time", offsetof(args, min_event_time)},
    {"--tap-specs", offsetof(args, tap_specs)},
    {"--max-stat-rel-diff", offsetof(args, max_stat_rel_diff)},
    {"--max-inflate", offsetof(args, max_inflate)},
    {"--tap-json", offsetof(args, tap_json)},
};

static const option_field flags[] = {
    {"--include_delegate_debug_data", offsetof(args, include_delegate_debug_data)},
    {"--show-outputs", offsetof(args, show_outputs)},
    {"--strict", offsetof(args, strict)},
    {"--example", offsetof(args, example)},
    {"--no-table", offsetof(args, no_table)},
    {"--show-references", offsetof(args, show_references)},
    {"--compare", offsetof(args, compare)},
    {"--compare_results", offsetof(args, compare)},
    {"--force", offsetof(args, numgap.force)},
    {"--no-reference-run", offsetof(args, numgap.no_reference_run)},
    {"--all-runs", offsetof(args, numgap.all_runs)},
    {"--reference-ops", offsetof(args, reference_ops)},
    {"--strict-pairing", offsetof(args, strict_pairing)},
};

/* The options cli_parse reads by hand (optional or repeated values). */
static const char *const special[] = {"--plot", "--graph",  "--max-values", "--delegate-time-scale",
                                      "--help", "--version"};

static void consider(const char *typed, const char *name, const char **best, size_t *best_d)
{
	size_t d = etc_edit_distance(typed, name, ETC_EDIT_DASH_IS_UNDERSCORE);
	if (d < *best_d)
		*best = name, *best_d = d;
}

/* "unknown option '--tvs' (did you mean --tsv?)" when a known option is close. */
static int unknown_option(const char *arg)
{
	char typed[64];
	size_t n = strcspn(arg, "=");
	snprintf(typed, sizeof typed, "%.*s", (int)(n < 63 ? n : 63), arg);
	const char *best = NULL;
	size_t best_d = 64;
	for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
		consider(typed, valued[k].name, &best, &best_d);
	for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
		consider(typed, flags[k].name, &best, &best_d);
	for (size_t k = 0; k < sizeof special / sizeof special[0]; k++)
		consider(typed, special[k], &best, &best_d);
	/* a few typos, or a word left out of a long name */
	size_t limit = strlen(typed) > 12 ? 4 : 2;
	if (best && best_d <= limit) {
		char safe[256];
		fprintf(stderr,
		        "etcompare: unknown option '%s' (did you mean %s?)\nTry 'etcompare "
		        "--help'.\n",
		        etc_text_safe(safe, sizeof safe, typed), best);
		return EXIT_USAGE;
	}
	return usage_error("unknown option '%s'", typed);
}

/* A finite number within [lo, hi], or the message naming the option and the value. */
static int check_number(const char *option, const char *v, double lo, double hi, const char *what)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	/* beyond a double ("1e-400", "1e400"): say so, it is a number */
	if (!*end && end != v && errno == ERANGE && !strpbrk(v, "xX"))
		return bad_value_note(option, what, v,
		                      " (beyond the range of a double, about 1e-308 to 1e308)");
	/* decimal only: strtod would also read "0x10" as 16; and no blanks,
	   which strtod skips before the number but not after it */
	if (*end || end == v || errno == ERANGE || !isfinite(x) || x < lo || x > hi ||
	    strpbrk(v, "xX") || isspace((unsigned char)v[0]))
		return bad_value(option, what, v);
	return 0;
}

/* One --delegate-time-scale value: "UNIT" or "BACKEND=UNIT". */
static int check_delegate_scale(const char *v)
{
	const char *eq = strrchr(v, '=');
	int s;
	if (eq == v || etc_time_scale_parse(eq ? eq + 1 : v, &s) < 0)
		return bad_value("--delegate-time-scale",
		                 "UNIT or BACKEND=UNIT, UNIT one of ns, us, ms, s, cycles", v);
	return 0;
}

/* A threshold of -0 is 0: every message then says "0", never "-0". */
static void zero_unsigned(args *a)
{
	const char **v[] = {&a->min_snr, &a->max_mse,        &a->min_cosine,
	                    &a->max_abs, &a->max_regression, &a->min_event_time};
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		if (*v[i] && strtod(*v[i], NULL) == 0)
			*v[i] = "0";
}

/*
 * Every value that has a form is checked here, before any file is read:
 * numbers and their ranges, names from a list, units.
 */
static int check_values(const args *a)
{
	int s;
	unsigned mask;
	const double inf = INFINITY;
	if ((a->min_snr && check_number("--min-snr", a->min_snr, -inf, inf, "a number (dB)")) ||
	    (a->max_mse && check_number("--max-mse", a->max_mse, 0, inf, "a number >= 0")) ||
	    (a->min_cosine &&
	     check_number("--min-cosine", a->min_cosine, -1, 1, "a number from -1 to 1")) ||
	    (a->max_abs && check_number("--max-abs", a->max_abs, 0, inf, "a number >= 0")) ||
	    (a->max_regression && check_number("--max-regression", a->max_regression, 0, inf,
	                                       "a number >= 0 (percent)")) ||
	    (a->min_event_time &&
	     check_number("--min-event-time", a->min_event_time, 0, inf, "a number >= 0")))
		return EXIT_USAGE;
	if (a->max_inflate && etc_debug_buffer_set_max_inflate(NULL, a->max_inflate, NULL) < 0)
		return bad_value("--max-inflate",
		                 "BYTES (K, M, G or T allowed), FACTORx (times the debug buffer's "
		                 "size) or none",
		                 a->max_inflate);
	if (a->metrics && etc_metric_mask_parse(a->metrics, &mask) < 0)
		return bad_value("--metrics", "a list of snr,mse,cosine,l1,max_abs,max_rel",
		                 a->metrics);
	if (a->pair_by && strcmp(a->pair_by, "index") && strcmp(a->pair_by, "order") &&
	    strcmp(a->pair_by, "content") && strcmp(a->pair_by, "all"))
		return bad_value("--pair-by", "index, order, content or all", a->pair_by);
	if (a->tables && etc_profile_tables_parse(a->tables, &mask) < 0)
		return bad_value("--tables",
		                 "a list of profile,tax,memory,ops,modules,delegates,all",
		                 a->tables);
	int src = ETC_TIME_NS, dst = ETC_TIME_MS;
	if (a->source_scale && etc_time_scale_parse(a->source_scale, &src) < 0)
		return bad_value("--source_time_scale", "ns, us, ms, s or cycles", a->source_scale);
	if (a->target_scale && etc_time_scale_parse(a->target_scale, &dst) < 0)
		return bad_value("--target_time_scale", "ns, us, ms, s or cycles", a->target_scale);
	if ((src == ETC_TIME_CYCLES) != (dst == ETC_TIME_CYCLES))
		return usage_error("%s", "for cycles both --source_time_scale and "
		                         "--target_time_scale have to be cycles");
	if (a->legacy_time_scale && etc_legacy_time_scale_parse(a->legacy_time_scale, &s) < 0)
		return bad_value("--legacy-time-scale", "ns, us, ms or cycles",
		                 a->legacy_time_scale);
	for (unsigned k = 0; k < a->delegate_scale_count; k++)
		if (check_delegate_scale(a->delegate_scales[k]))
			return EXIT_USAGE;
	if (a->numgap.distance && etc_numgap_distance_parse(a->numgap.distance, &s) < 0)
		return bad_value("--distance", "mse, l1 or snr", a->numgap.distance);
	if (a->numgap.layout && strcmp(a->numgap.layout, "auto") &&
	    strcmp(a->numgap.layout, "none"))
		return bad_value("--layout", "auto or none", a->numgap.layout);
	if (a->numgap.run && (strspn(a->numgap.run, "0123456789") != strlen(a->numgap.run) ||
	                      !*a->numgap.run || strlen(a->numgap.run) > 9))
		return bad_value("--run", "a 0-based run index (0, 1, ...)", a->numgap.run);
	return 0;
}

/* --plot DIR / --graph METHOD: an optional value (never one that starts with '-'). */
static bool optional_value(int argc, char **argv, int *i, const char *name, const char **out)
{
	size_t n = option_match(argv[*i], name);
	if (!n)
		return false;
	if (argv[*i][n] == '=')
		*out = argv[*i] + n + 1;
	else if (*i + 1 < argc && (argv[*i + 1][0] != '-' || !strcmp(argv[*i + 1], "-")))
		*out = argv[++*i]; /* "-" is taken, to be refused by name */
	return true;
}

int cli_parse(int argc, char **argv, args *a)
{
	memset(a, 0, sizeof *a);
	a->max_values = 8;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || option_match(arg, "--help")) {
			fputs(usage_text, stdout);
			return CLI_DONE;
		}
		if (!strcmp(arg, "-V") || option_match(arg, "--version")) {
			printf("etcompare %s\n", etc_version());
			return CLI_DONE;
		}
		bool matched = false;
		bool again = a->plot;
		if (optional_value(argc, argv, &i, "--plot", &a->plot_dir)) {
			if (again)
				return usage_error("%s", "--plot is given twice: give it once");
			if (a->plot_dir && !*a->plot_dir)
				return usage_error("%s",
				                   "option '--plot' has an empty value: give a "
				                   "folder, or no value for etcompare-plots");
			if (a->plot_dir && !strcmp(a->plot_dir, "-"))
				return usage_error("%s",
				                   "--plot writes a folder of files (PNG, .gp, "
				                   ".dat); it cannot write to standard output "
				                   "('-'): give a folder, or none for "
				                   "etcompare-plots");
			a->plot = true;
			continue;
		}
		again = a->graph;
		if (optional_value(argc, argv, &i, "--graph", &a->graph_method)) {
			if (again)
				return usage_error("%s", "--graph is given twice: give it once");
			if (a->graph_method && !*a->graph_method)
				return usage_error("%s",
				                   "option '--graph' has an empty value: give a "
				                   "method, or no value");
			a->graph = true;
			continue;
		}
		for (size_t k = 0; k < sizeof valued / sizeof valued[0] && !matched; k++) {
			const char *v;
			int m = value_opt(argc, argv, &i, valued[k].name, &v);
			if (m < 0)
				return usage_error("option '%s' needs a value", valued[k].name);
			if (m > 0) {
				if (!*v)
					return usage_error("option '%s' has an empty value",
					                   valued[k].name);
				const char **slot = (const char **)((char *)a + valued[k].field);
				/* given twice: which one counts would be a guess (a file
				 * of one model read with another's, a threshold) */
				if (*slot) {
					char msg[600];
					snprintf(msg, sizeof msg,
					         "%s is given twice ('%.200s', then '%.200s'): "
					         "give it once",
					         valued[k].name, *slot, v);
					return usage_error("%s", msg);
				}
				*slot = v;
				matched = true;
			}
		}
		for (size_t k = 0; k < sizeof flags / sizeof flags[0] && !matched; k++) {
			size_t n = option_match(arg, flags[k].name);
			if (n && arg[n] == '=')
				return usage_error("option '%s' takes no value", flags[k].name);
			if (n) {
				*(bool *)((char *)a + flags[k].field) = true;
				matched = true;
			}
		}
		const char *v;
		int m = matched ? 0 : value_opt(argc, argv, &i, "--delegate-time-scale", &v);
		if (m < 0)
			return usage_error("option '%s' needs a value", "--delegate-time-scale");
		if (m > 0) {
			if (a->delegate_scale_count == ARGS_MAX_DELEGATE_SCALES)
				return usage_error("%s",
				                   "--delegate-time-scale is given too often");
			/* one unit per backend (and one for every backend): a second
			   would leave which one counts to a guess */
			const char *eq = strrchr(v, '=');
			size_t key = eq ? (size_t)(eq - v) : 0;
			for (unsigned k = 0; k < a->delegate_scale_count; k++) {
				const char *o = a->delegate_scales[k], *oeq = strrchr(o, '=');
				size_t okey = oeq ? (size_t)(oeq - o) : 0;
				if (okey == key && !strncmp(o, v, key)) {
					char msg[600];
					snprintf(msg, sizeof msg,
					         "--delegate-time-scale is given twice for %s%.*s "
					         "('%.200s', then '%.200s'): give it once",
					         key ? "backend " : "every backend", (int)key, v, o,
					         v);
					return usage_error("%s", msg);
				}
			}
			a->delegate_scales[a->delegate_scale_count++] = v;
			matched = true;
		}
		m = matched ? 0 : value_opt(argc, argv, &i, "--max-values", &v);
		if (m < 0)
			return usage_error("option '%s' needs a value", "--max-values");
		if (m > 0) {
			char *end;
			errno = 0;
			unsigned long n = strtoul(v, &end, 10);
			if (*v == '-' || *end || end == v || errno || n > 1000000)
				return bad_value("--max-values", "a number from 0 to 1000000", v);
			a->max_values = (unsigned)n;
			matched = true;
		}
		if (!matched) {
			if (arg[0] == '-')
				return unknown_option(arg);
			return usage_error("unexpected argument '%s' (did you mean --etdump?)",
			                   arg);
		}
	}
	int rc = check_values(a);
	if (rc == 0)
		zero_unsigned(a);
	if (rc)
		return rc;
	/* the example brings its own files */
	const struct {
		const char *name;
		bool given;
	} own_files[] = {{"--etdump", a->etdump != NULL},
	                 {"--debug_buffer", a->debug_buffer != NULL},
	                 {"--etrecord", a->etrecord != NULL},
	                 {"--graph", a->graph},
	                 {"--show-references", a->show_references},
	                 {"--legacy-profile", a->legacy_profile != NULL}};
	for (size_t k = 0; a->example && k < sizeof own_files / sizeof own_files[0]; k++)
		if (own_files[k].given)
			return usage_error("--example and %s cannot be combined (the example "
			                   "brings its own ETDump, debug buffer and ETRecord)",
			                   own_files[k].name);
	/* Flags only the accuracy comparison uses turn it on. Thresholds and
	 * --plot serve other analyses too: they turn it on only when reference
	 * outputs are at hand (decided in main, once the ETRecord is read). */
	if (a->reference_outputs && a->bundled_program)
		return usage_error("%s", "--reference-outputs and --bundled-program both give the "
		                         "reference outputs: give one");
	if (a->compare || a->reference_outputs || a->bundled_program || a->pair_by ||
	    a->strict_pairing || a->metrics || a->tap_specs || a->max_stat_rel_diff ||
	    a->tap_json || (a->junit && !numgap_wanted(&a->numgap) && !a->baseline_etdump) ||
	    (a->block && !numgap_wanted(&a->numgap)))
		a->compare = a->compare_explicit = true;
	if ((a->compare || a->min_snr || a->max_mse || a->min_cosine || a->max_abs) && !a->etdump &&
	    !a->example)
		return usage_error("%s", "the comparison needs --etdump (and --debug_buffer)");
	if (numgap_check_args(&a->numgap, a->etdump || a->example))
		return EXIT_USAGE;
	/* the values to compare are in the debug buffer: say so before any table */
	bool gap = numgap_wanted(&a->numgap) || numgap_graph_asked(&a->numgap);
	if (!a->debug_buffer && !a->example && (a->compare || gap))
		return usage_error("%s",
		                   gap ? "the numeric gap needs --debug_buffer (the intermediate "
		                         "outputs' values)"
		                       : "the comparison needs --debug_buffer (the outputs' "
		                         "values)");
	if ((a->min_snr || a->max_mse || a->min_cosine || a->max_abs) && !a->etrecord &&
	    !a->reference_outputs && !a->bundled_program && !numgap_wanted(&a->numgap) &&
	    !a->example)
		return usage_error(
		    "%s", "the thresholds need something to compare: --debug_buffer and an "
		          "--etrecord with reference outputs, --reference-outputs FILE, or a "
		          "numeric gap reference (--reference-etdump, --reference-intermediates)");
	for (unsigned k = 0; k < a->delegate_scale_count; k++)
		if (strchr(a->delegate_scales[k], '=') && !a->etrecord)
			return usage_error(
			    "--delegate-time-scale %s needs --etrecord (its delegate_map "
			    "names the backend of each delegated event)",
			    a->delegate_scales[k]);
	if (a->module && !(a->etrecord && a->etdump))
		return usage_error("%s", "--module needs --etdump and --etrecord");
	if ((a->graph || a->show_references) && !a->etrecord)
		return usage_error("%s", "--graph and --show-references need --etrecord");
	if (a->etrecord && !a->etdump && !a->graph && !a->show_references)
		return usage_error("%s", "--etrecord without --etdump needs --graph or "
		                         "--show-references");
	if (a->report && !a->etdump && !a->example)
		return usage_error("%s", "--report needs --etdump (or --example)");
	if (a->report && a->plot && report_in_plots(a->report, cli_plot_dir(a)))
		return usage_error(
		    "--report %s is the --plot folder or inside it, which is replaced "
		    "whole: write the report beside the plot folder",
		    a->report);
	if (!a->etdump && a->debug_buffer)
		return usage_error("%s", "--debug_buffer needs --etdump");
	if (a->legacy_time_scale && !a->legacy_profile)
		return usage_error("%s", "--legacy-time-scale needs --legacy-profile");
	if (a->legacy_profile && !a->etdump && !a->example && !a->etrecord &&
	    (a->tsv || a->csv || a->json || a->trace || a->show_outputs || a->no_table))
		return usage_error("%s", "--tsv, --csv, --json, --trace, --show-outputs and "
		                         "--no-table need --etdump (--legacy-profile prints tables "
		                         "only)");
	/* standard input is read once: a second input there would read nothing */
	const char *ins[CLI_MAX_INPUTS];
	size_t nin = cli_input_paths(a, ins), dashes = 0;
	for (size_t k = 0; k < nin; k++)
		dashes += ins[k] && !strcmp(ins[k], "-");
	if (dashes > 1)
		return usage_error("%s", "only one input may be - (standard input): give the "
		                         "others as files");
	/* the analyses of an ETDump would be skipped without a word */
	const struct {
		const char *name;
		bool given;
	} etdump_only[] = {{"--baseline-etdump", a->baseline_etdump != NULL},
	                   {"--max-regression", a->max_regression != NULL},
	                   {"--plot", a->plot || a->plot_dir},
	                   {"--source_time_scale", a->source_scale != NULL},
	                   {"--target_time_scale", a->target_scale != NULL},
	                   {"--min-event-time", a->min_event_time != NULL},
	                   {"--delegate-time-scale", a->delegate_scale_count > 0}};
	for (size_t k = 0; a->legacy_profile && !a->etdump && !a->example && !a->etrecord &&
	                   k < sizeof etdump_only / sizeof etdump_only[0];
	     k++)
		if (etdump_only[k].given)
			return usage_error("%s needs --etdump (--legacy-profile prints its tables "
			                   "only, with --legacy-time-scale)",
			                   etdump_only[k].name);
	/* the trace draws every event on the ETDump's one clock */
	if (a->trace && a->delegate_scale_count)
		cli_warning("--trace does not follow --delegate-time-scale: the trace places "
		            "delegated events on the ETDump's clock, their tick differences "
		            "read in the source unit, so their durations there differ from the "
		            "tables'");
	return 0;
}

/* A finite number for a threshold flag, or a usage error. */
int parse_threshold(const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	*out = v ? strtod(v, &end) : NAN;
	/* decimal only: strtod would also read "0x10" as 16 */
	if (v && (*end || errno || end == v || isnan(*out) || strpbrk(v, "xX")))
		return usage_error("%s takes a number", flag);
	return 0;
}

/*
 * The last error printed, for the JUnit and HTML reports of a run that
 * stops on it. The CLI is one process with one thread; this is its only
 * such state, and the library has none.
 */
static char last_error[1024];

void cli_error(const char *message)
{
	fprintf(stderr, "etcompare: error: %s\n", message);
	snprintf(last_error, sizeof last_error, "%s", message);
}

void cli_warning(const char *message)
{
	char safe[1024];
	if (message)
		fprintf(stderr, "etcompare: warning: %s\n",
		        etc_text_safe(safe, sizeof safe, message));
}

const char *cli_last_error(void)
{
	return last_error;
}

void cli_stdout_error(const etc_error *err)
{
	static const char prefix[] = "cannot write ";
	if (err->status != ETC_ERR_IO || strncmp(err->message, prefix, sizeof prefix - 1) != 0) {
		cli_error(err->message);
		return;
	}
	char msg[1024];
	snprintf(msg, sizeof msg, "cannot write to standard output (%.960s)",
	         err->message + sizeof prefix - 1);
	cli_error(msg);
}

int input_error(const etc_error *err)
{
	cli_error(err->message);
	return EXIT_INPUT;
}

void cli_block_label(const etc_inspector *insp, size_t b, char *buf, size_t cap)
{
	const etc_event_block *blk = etc_inspector_block(insp, b);
	int n = (int)(blk->name.len < 200 ? blk->name.len : 200);
	if (etc_inspector_block_name_shared(insp, b))
		snprintf(buf, cap, "%.*s#%zu", n, blk->name.ptr, b);
	else
		snprintf(buf, cap, "%.*s", n, blk->name.ptr);
}
