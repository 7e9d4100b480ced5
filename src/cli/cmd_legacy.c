/*
 * cmd_legacy.c - the --legacy-profile command: reads a pre-ETDump
 * prof_result.bin and prints the old profiler tools' tables on stdout.
 */
#include "cmd_legacy.h"
#include "cli.h"

#include "etcompare/etcompare.h"

#include <stdio.h>

int etc_cli_legacy(const char *path, const char *scale)
{
	int ts = ETC_LEGACY_NS;
	if (scale && etc_legacy_time_scale_parse(scale, &ts) < 0) {
		fprintf(stderr,
		        "etcompare: unknown legacy time scale '%s' (ns, us, ms or cycles)\n"
		        "Try 'etcompare --help'.\n",
		        scale);
		return 2;
	}
	etc_error err;
	etc_legacy_profile *p;
	if (etc_legacy_profile_open(&p, path, &err) < 0) {
		cli_error(err.message);
		return 3;
	}
	int rc = etc_report_legacy(stdout, p, ts, &err);
	etc_legacy_profile_free(p);
	if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
		fprintf(stderr, "etcompare: error: cannot write to standard output\n");
		return 4;
	}
	if (rc < 0) {
		cli_stdout_error(&err);
		return rc == ETC_ERR_IO ? 4 : 3;
	}
	return 0;
}
