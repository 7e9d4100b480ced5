/*
 * cmd_trace.h - the --trace option: Chrome Trace Event Format export.
 */
#ifndef ETC_CLI_CMD_TRACE_H
#define ETC_CLI_CMD_TRACE_H

#include "etcompare/etcompare.h"

/* Writes the trace of `dump` to `path` ("-": stdout) atomically; returns an
 * exit code (0, 3 or 4). */
int etc_cli_trace(const char *path, const etc_etdump *dump, int source_time_scale);

#endif
