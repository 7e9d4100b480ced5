/*
 * args.c - the options of etcompare, --help, and the messages for usage
 * and input errors (see args.h).
 */
#include "args.h"
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "Usage: etcompare --etdump FILE [--debug_buffer FILE] [--etrecord FILE] [options]\n"
    "       etcompare --etrecord FILE --graph [METHOD] | --show-references\n"
    "       etcompare --legacy-profile prof_result.bin [--legacy-time-scale U]\n"
    "\n"
    "Reads an ExecuTorch ETDump (and its debug buffer) and prints the Inspector's\n"
    "profiling table. Without arguments it shows the bundled example.\n"
    "\n"
    "Inputs:\n"
    "  --etdump FILE             ETDump written by the runtime (.etdp); alias --etdump_path\n"
    "  --debug_buffer FILE       debug buffer with tensor data; alias --debug_buffer_path\n"
    "  --etrecord FILE           ETRecord written at export: links events to graph nodes,\n"
    "                            stack traces and modules; alias --etrecord_path\n"
    "  --method NAME             the ETRecord method to link (forward)\n"
    "  --example                 use the bundled example ETDump and debug buffer\n"
    "\n"
    "Timing:\n"
    "  --source_time_scale U     unit of the ETDump timestamps: ns us ms s cycles (ns)\n"
    "  --target_time_scale U     unit of the reported times (ms)\n"
    "\n"
    "Output:\n"
    "  --tsv FILE                write the table as TSV (upstream save_data_to_tsv);\n"
    "                            alias --tsv_path\n"
    "  --csv FILE                write the table as CSV\n"
    "  --json FILE               write the full JSON report (schema in schema/)\n"
    "  --show-outputs            print program outputs and intermediate outputs\n"
    "  --max-values N            values shown per tensor (8)\n"
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
    "Performance diff (events matched by signature, p50 compared):\n"
    "  --baseline-etdump FILE    the baseline ETDump of the same model\n"
    "  --max-regression PCT      exit 1 when Method::execute or an event regresses by more\n"
    "                            than PCT percent\n"
    "  --min-event-time T        events whose p50 is below T (target unit) on both sides\n"
    "                            are not gated (0)\n"
    "\n"
    "Accuracy (program outputs against reference outputs):\n"
    "  --compare                 compare (alias --compare_results); implied by the flags below\n"
    "  --reference-outputs FILE  references from a torch.save file or an .npz, instead of\n"
    "                            the ETRecord's reference_outputs\n"
    "  --block NAME              EventBlock to compare (Execute)\n"
    "  --pair-by index|order     pair runs with references by bundled_input_index or by\n"
    "                            order (default: index when runs carry one, else order)\n"
    "  --min-snr DB, --max-mse X, --min-cosine X, --max-abs X\n"
    "                            the gate: exit 1 when an output fails one\n"
    "  --metrics LIST            columns: snr,mse,cosine,l1,max_abs,max_rel "
    "(snr,mse,cosine,max_abs)\n"
    "  --junit FILE              JUnit XML of every gate run: one testcase per output, per\n"
    "                            numeric-gap row and per gated event\n"
    "  --plot [DIR]              bar charts, error histograms and heat maps (./etcompare-plots);\n"
    "                            with an ETDump also the profiling plots: top operators,\n"
    "                            per-run box plots, framework tax per run, a timeline\n"
    "\n"
    "Numeric gap (intermediate outputs op by op against a reference run):\n"
    "  --reference-etdump FILE   the reference run's ETDump (e.g. portable CPU kernels)\n"
    "  --reference-debug-buffer FILE\n"
    "                            its debug buffer\n"
    "  --reference-etrecord FILE its own ETRecord (default: --etrecord)\n"
    "  --reference-intermediates FILE.npz\n"
    "                            reference intermediates, arrays named by debug handle\n"
    "                            (\"12\", or \"12,13\" for a fused group); needs --etrecord\n"
    "  --numgap-tsv FILE         the gap as TSV (upstream calculate_numeric_gap columns)\n"
    "  --min-snr, --max-mse, --min-cosine, --max-abs and --plot apply too; exit 1 at the\n"
    "  first diverging operator (printed with its stack trace)\n"
    "  FILE may be - for standard output. Files are replaced atomically.\n"
    "\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the version\n"
    "\n"
    "Exit status: 0 ok, 1 a gate failed (accuracy, numeric gap or regression), 2 usage\n"
    "error, 3 unreadable or invalid input, 4 an output file could not be written.\n";

int usage_error(const char *fmt, const char *arg)
{
	char safe[1024]; /* an argument may hold anything a file name can */
	fprintf(stderr, "etcompare: ");
	fprintf(stderr, fmt, etc_text_safe(safe, sizeof safe, arg));
	fprintf(stderr, "\nTry 'etcompare --help'.\n");
	return EXIT_USAGE;
}

/* Matches "--name VALUE" and "--name=VALUE"; returns 1 on match, -1 if the value is missing. */
static int value_opt(int argc, char **argv, int *i, const char *name, const char **out)
{
	const char *a = argv[*i];
	size_t n = strlen(name);
	if (strncmp(a, name, n) != 0)
		return 0;
	if (a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	if (a[n] != '\0')
		return 0;
	/* A following option is not a value: "--tsv --strict" is a missing value,
	 * not a file named "--strict" (use --tsv=--strict for that). */
	if (*i + 1 >= argc || (argv[*i + 1][0] == '-' && argv[*i + 1][1] == '-'))
		return -1;
	*out = argv[++*i];
	return 1;
}

int cli_parse(int argc, char **argv, args *a)
{
	static const struct {
		const char *name;
		size_t field;
	} valued[] = {
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
	    {"--block", offsetof(args, block)},
	    {"--pair-by", offsetof(args, pair_by)},
	    {"--metrics", offsetof(args, metrics)},
	    {"--junit", offsetof(args, junit)},
	    {"--min-snr", offsetof(args, min_snr)},
	    {"--max-mse", offsetof(args, max_mse)},
	    {"--min-cosine", offsetof(args, min_cosine)},
	    {"--max-abs", offsetof(args, max_abs)},
	    {"--reference-etdump", offsetof(args, numgap.reference_etdump)},
	    {"--reference-debug-buffer", offsetof(args, numgap.reference_debug_buffer)},
	    {"--reference-etrecord", offsetof(args, numgap.reference_etrecord)},
	    {"--reference-intermediates", offsetof(args, numgap.reference_intermediates)},
	    {"--numgap-tsv", offsetof(args, numgap.tsv)},

	    {"--legacy-profile", offsetof(args, legacy_profile)},
	    {"--legacy-time-scale", offsetof(args, legacy_time_scale)},
	    {"--trace", offsetof(args, trace)},
	    {"--tables", offsetof(args, tables)},
	    {"--baseline-etdump", offsetof(args, baseline_etdump)},
	    {"--max-regression", offsetof(args, max_regression)},
	    {"--min-event-time", offsetof(args, min_event_time)},
	};
	static const struct {
		const char *name;
		size_t field;
	} flags[] = {
	    {"--include_delegate_debug_data", offsetof(args, include_delegate_debug_data)},
	    {"--show-outputs", offsetof(args, show_outputs)},
	    {"--strict", offsetof(args, strict)},
	    {"--example", offsetof(args, example)},
	    {"--no-table", offsetof(args, no_table)},
	    {"--show-references", offsetof(args, show_references)},
	    {"--compare", offsetof(args, compare)},
	    {"--compare_results", offsetof(args, compare)},
	};
	memset(a, 0, sizeof *a);
	a->max_values = 8;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage_text, stdout);
			return CLI_DONE;
		}
		if (!strcmp(arg, "-V") || !strcmp(arg, "--version")) {
			printf("etcompare %s\n", etc_version());
			return CLI_DONE;
		}
		bool matched = false;
		/* --plot takes an optional directory: --plot, --plot=DIR, --plot DIR */
		if (!strcmp(arg, "--plot") || !strncmp(arg, "--plot=", 7)) {
			a->plot = true;
			if (arg[6] == '=')
				a->plot_dir = arg + 7;
			else if (i + 1 < argc && argv[i + 1][0] != '-')
				a->plot_dir = argv[++i];
			continue;
		}
		/* --graph takes an optional method: --graph, --graph=M, --graph M */
		if (!strcmp(arg, "--graph") || !strncmp(arg, "--graph=", 8)) {
			a->graph = true;
			if (arg[7] == '=')
				a->graph_method = arg + 8;
			else if (i + 1 < argc && argv[i + 1][0] != '-')
				a->graph_method = argv[++i];
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
				*(const char **)((char *)a + valued[k].field) = v;
				matched = true;
			}
		}
		for (size_t k = 0; k < sizeof flags / sizeof flags[0] && !matched; k++)
			if (!strcmp(arg, flags[k].name)) {
				*(bool *)((char *)a + flags[k].field) = true;
				matched = true;
			}
		if (!matched) {
			const char *v;
			int m = value_opt(argc, argv, &i, "--max-values", &v);
			if (m < 0)
				return usage_error("option '%s' needs a value", "--max-values");
			if (m > 0) {
				char *end;
				errno = 0;
				unsigned long n = strtoul(v, &end, 10);
				if (*v == '-' || *end || errno || n > 1000000)
					return usage_error("--max-values takes a number from 0 to "
					                   "1000000, not '%s'",
					                   v);
				a->max_values = (unsigned)n;
				matched = true;
			}
		}
		if (!matched) {
			if (arg[0] == '-')
				return usage_error("unknown option '%s'", arg);
			return usage_error("unexpected argument '%s' (did you mean --etdump?)",
			                   arg);
		}
	}
	if (a->example && a->etdump)
		return usage_error("%s", "--example and --etdump cannot be combined");
	/* Flags only the accuracy comparison uses turn it on. Thresholds and
	 * --plot serve other analyses too: they turn it on only when reference
	 * outputs are at hand (decided in main, once the ETRecord is read). */
	if (a->compare || a->reference_outputs || a->pair_by || a->metrics ||
	    (a->junit && !numgap_wanted(&a->numgap) && !a->baseline_etdump) ||
	    (a->block && !numgap_wanted(&a->numgap)))
		a->compare = a->compare_explicit = true;
	if ((a->compare || a->min_snr || a->max_mse || a->min_cosine || a->max_abs) && !a->etdump)
		return usage_error("%s", "the comparison needs --etdump (and --debug_buffer)");
	if (numgap_check_args(&a->numgap, a->etdump != NULL))
		return EXIT_USAGE;
	if (a->module && !(a->etrecord && a->etdump))
		return usage_error("%s", "--module needs --etdump and --etrecord");
	if ((a->graph || a->show_references) && !a->etrecord)
		return usage_error("%s", "--graph and --show-references need --etrecord");
	if (a->etrecord && !a->etdump && !a->graph && !a->show_references)
		return usage_error("%s", "--etrecord without --etdump needs --graph or "
		                         "--show-references");
	if (!a->etdump && a->debug_buffer)
		return usage_error("%s", "--debug_buffer needs --etdump");
	if (a->legacy_time_scale && !a->legacy_profile)
		return usage_error("%s", "--legacy-time-scale needs --legacy-profile");
	if (a->legacy_profile && !a->etdump && !a->example && !a->etrecord &&
	    (a->tsv || a->csv || a->json || a->trace || a->show_outputs || a->no_table))
		return usage_error("%s", "--tsv, --csv, --json, --trace, --show-outputs and "
		                         "--no-table need --etdump (--legacy-profile prints tables "
		                         "only)");
	return 0;
}

/* A finite number for a threshold flag, or a usage error. */
int parse_threshold(const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	*out = v ? strtod(v, &end) : NAN;
	if (v && (*end || errno || end == v || isnan(*out)))
		return usage_error("%s takes a number", flag);
	return 0;
}

int input_error(const etc_error *err)
{
	fprintf(stderr, "etcompare: error: %s\n", err->message);
	return EXIT_INPUT;
}
