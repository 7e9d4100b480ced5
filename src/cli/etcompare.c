/*
 * etcompare.c - the command-line tool: parses arguments, calls the library,
 * prints and maps failures to exit codes. All logic lives in libetcompare;
 * this file includes only public headers.
 *
 * Exit codes: 0 ok, 1 accuracy gate failed (reserved), 2 usage error,
 * 3 unreadable or invalid input, 4 an output file could not be written.
 */
#include "etcompare/etcompare.h"

#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_data.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_OUTPUT = 4 };

typedef struct args {
	const char *etdump, *debug_buffer, *tsv, *csv, *json;
	const char *source_scale, *target_scale;
	const char *etrecord, *method, *module, *graph_method;
	bool include_delegate_debug_data, show_outputs, strict, example, no_table;
	bool graph, show_references;
	unsigned max_values;
} args;

static const char usage_text[] =
    "Usage: etcompare --etdump FILE [--debug_buffer FILE] [--etrecord FILE] [options]\n"
    "       etcompare --etrecord FILE --graph [METHOD] | --show-references\n"
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
    "  --no-table                do not print the profiling table\n"
    "  --strict                  merged runs with different debug data are an error\n"
    "\n"
    "ETRecord:\n"
    "  --graph [METHOD]          print the Edge program: node, op, inputs, debug handle,\n"
    "                            source line\n"
    "  --show-references         print the reference outputs and representative inputs\n"
    "  --module NAME             total average time of the events in module NAME\n"
    "                            (upstream find_total_for_module)\n"
    "  FILE may be - for standard output. Files are replaced atomically.\n"
    "\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the version\n"
    "\n"
    "Exit status: 0 ok, 2 usage error, 3 unreadable or invalid input,\n"
    "4 an output file could not be written.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "etcompare: ");
	fprintf(stderr, fmt, arg);
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

static int parse(int argc, char **argv, args *a)
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
	};
	memset(a, 0, sizeof *a);
	a->max_values = 8;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			fputs(usage_text, stdout);
			exit(EXIT_OK);
		}
		if (!strcmp(arg, "-V") || !strcmp(arg, "--version")) {
			printf("etcompare %s\n", etc_version());
			exit(EXIT_OK);
		}
		bool matched = false;
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
	if (a->module && !(a->etrecord && a->etdump))
		return usage_error("%s", "--module needs --etdump and --etrecord");
	if ((a->graph || a->show_references) && !a->etrecord)
		return usage_error("%s", "--graph and --show-references need --etrecord");
	if (a->etrecord && !a->etdump && !a->graph && !a->show_references)
		return usage_error("%s", "--etrecord without --etdump needs --graph or "
		                         "--show-references");
	if (!a->etdump && a->debug_buffer)
		return usage_error("%s", "--debug_buffer needs --etdump");
	return 0;
}

static int input_error(const etc_error *err)
{
	fprintf(stderr, "etcompare: error: %s\n", err->message);
	return EXIT_INPUT;
}

typedef int (*writer_fn)(FILE *, const etc_inspector *, const etc_report_options *, etc_error *);

static int write_file(const char *path, writer_fn fn, const etc_inspector *insp,
                      const etc_report_options *ro)
{
	etc_error err;
	etc_output *o;
	etc_error_clear(&err);
	if (etc_output_open(&o, path, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_OUTPUT;
	}
	int rc = fn(etc_output_stream(o), insp, ro, &err);
	if (rc < 0) {
		etc_output_abort(o);
		fprintf(stderr, "etcompare: error: %s: %s\n", path, err.message);
		return rc == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
	}
	if (etc_output_commit(o, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	args a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc;
	if (!a.etdump && !a.example && !a.etrecord) {
		/* Only a bare `etcompare` shows the example: with other options the
		 * user forgot --etdump, and writing the example's table into their
		 * --tsv file would be a silent wrong answer. */
		if (argc > 1)
			return usage_error("%s", "no --etdump given (use --example for the bundled "
			                         "example)");
		fprintf(stderr, "etcompare: no --etdump given: showing the bundled example "
		                "(see etcompare --help)\n");
		a.example = true;
	}
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	io.strict = a.strict;
	if (a.source_scale && etc_time_scale_parse(a.source_scale, &io.source_time_scale) < 0)
		return usage_error("unknown time scale '%s' (ns, us, ms, s or cycles)",
		                   a.source_scale);
	if (a.target_scale && etc_time_scale_parse(a.target_scale, &io.target_time_scale) < 0)
		return usage_error("unknown time scale '%s' (ns, us, ms, s or cycles)",
		                   a.target_scale);
	if ((io.source_time_scale == ETC_TIME_CYCLES) != (io.target_time_scale == ETC_TIME_CYCLES))
		return usage_error("%s", "for cycles both --source_time_scale and "
		                         "--target_time_scale have to be cycles");

	etc_error err;
	etc_error_clear(&err);
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	etc_etrecord *rec = NULL;
	int status = EXIT_OK;
	etc_report_options ro;
	etc_report_options_init(&ro);
	ro.include_delegate_debug_data = a.include_delegate_debug_data;
	ro.max_values = a.max_values;

	if (a.etrecord) {
		if (etc_etrecord_open(&rec, a.etrecord, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
		for (size_t i = 0; i < etc_etrecord_warning_count(rec); i++)
			fprintf(stderr, "etcompare: warning: %s\n", etc_etrecord_warning(rec, i));
		if (a.graph &&
		    (rc = etc_report_graph(stdout, rec, a.graph_method ? a.graph_method : a.method,
		                           &err)) < 0) {
			status = rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_OUTPUT;
			fprintf(stderr, "etcompare: error: %s\n", err.message);
			goto out;
		}
		if (a.show_references && etc_report_references(stdout, rec, &ro, &err) < 0) {
			status = EXIT_OUTPUT;
			fprintf(stderr, "etcompare: error: %s\n", err.message);
			goto out;
		}
		if (!a.etdump)
			goto out;
	}

	if (a.example) {
		if (etc_etdump_wrap(&dump, etc_example_etdump, sizeof etc_example_etdump,
		                    "example.etdp", &err) < 0 ||
		    etc_debug_buffer_wrap(&buf, etc_example_debug, sizeof etc_example_debug,
		                          "example_debug.bin", &err) < 0) {
			status = input_error(&err);
			goto out;
		}
	} else {
		if (etc_etdump_open(&dump, a.etdump, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
		if (a.debug_buffer && etc_debug_buffer_open(&buf, a.debug_buffer, &err) < 0) {
			status = input_error(&err);
			goto out;
		}
	}
	rc = etc_inspector_create(&insp, dump, buf, &io, &err);
	if (rc < 0) {
		status = rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT;
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		goto out;
	}
	if (rec && (rc = etc_inspector_link(insp, rec, a.method, &err)) < 0) {
		status = rc == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT;
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		goto out;
	}
	if (etc_etdump_trailing_bytes(dump))
		fprintf(stderr,
		        "etcompare: warning: %s: %llu bytes after the size-prefixed ETDump are "
		        "ignored\n",
		        etc_etdump_name(dump), (unsigned long long)etc_etdump_trailing_bytes(dump));
	if (etc_inspector_block_count(insp) == 0)
		fprintf(stderr, "etcompare: note: %s has no run with events: the table is empty\n",
		        etc_etdump_name(dump));
	for (size_t i = 0; i < etc_inspector_warning_count(insp); i++) {
		if (i == 20) {
			fprintf(stderr,
			        "etcompare: warning: ... and %zu more warnings (see --json)\n",
			        etc_inspector_warning_count(insp) - i);
			break;
		}
		fprintf(stderr, "etcompare: warning: %s\n", etc_inspector_warning(insp, i));
	}

	if (!a.no_table) {
		if (etc_report_table(stdout, insp, &ro, &err) < 0) {
			status = EXIT_OUTPUT;
			fprintf(stderr, "etcompare: error: %s\n", err.message);
			goto out;
		}
	}
	if (a.show_outputs) {
		if (!buf)
			fprintf(stderr, "etcompare: note: no --debug_buffer given: tensors have "
			                "shapes but no values\n");
		if ((rc = etc_report_outputs(stdout, insp, &ro, &err)) < 0) {
			status = rc == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
			fprintf(stderr, "etcompare: error: %s\n", err.message);
			goto out;
		}
	}
	if (a.module) {
		size_t count;
		double total = etc_inspector_module_total(insp, a.module, &count);
		char num[40];
		etc_format_double(num, total);
		printf("find_total_for_module(\"%s\") = %s %s (%zu event%s)\n", a.module, num,
		       etc_time_scale_name(io.target_time_scale), count, count == 1 ? "" : "s");
	}
	if (fflush(stdout) != 0) {
		status = EXIT_OUTPUT;
		fprintf(stderr, "etcompare: error: cannot write to standard output\n");
		goto out;
	}
	if (a.tsv && (status = write_file(a.tsv, etc_report_tsv, insp, &ro)) != 0)
		goto out;
	if (a.csv && (status = write_file(a.csv, etc_report_csv, insp, &ro)) != 0)
		goto out;
	if (a.json && (status = write_file(a.json, etc_report_json, insp, &ro)) != 0)
		goto out;
out:
	etc_inspector_free(insp);
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	return status;
}
