/*
 * cmd_legacy.h - the --legacy-profile command: the old profiler's tables.
 */
#ifndef ETC_CLI_CMD_LEGACY_H
#define ETC_CLI_CMD_LEGACY_H

/* Prints the tables of the legacy dump at `path`; `scale` is ns, us, ms or
 * cycles (NULL: ns). Returns an exit code (0, 2, 3 or 4). */
int etc_cli_legacy(const char *path, const char *scale);

#endif
