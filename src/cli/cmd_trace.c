/*
 * cmd_trace.c - the --trace option: writes the ETDump's profile as a
 * Chrome trace (Perfetto UI, chrome://tracing) through an atomic output file.
 */
#include "cmd_trace.h"
#include "cli.h"

#include <stdio.h>

int etc_cli_trace(const char *path, const etc_etdump *dump, int source_time_scale)
{
	etc_error err;
	etc_output *o;
	etc_error_clear(&err);
	if (etc_output_open(&o, path, &err) < 0) {
		cli_error(err.message);
		return 4;
	}
	etc_trace_options opt;
	etc_trace_options_init(&opt);
	opt.source_time_scale = source_time_scale;
	int rc = etc_trace_write(etc_output_stream(o), &dump, 1, &opt, NULL, &err);
	if (rc < 0) {
		etc_output_abort(o);
		fprintf(stderr, "etcompare: error: %s: %s\n", path, err.message);
		return rc == ETC_ERR_IO ? 4 : 3;
	}
	if (etc_output_commit(o, &err) < 0) {
		cli_error(err.message);
		return 4;
	}
	return 0;
}
