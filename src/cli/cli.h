/*
 * cli.h - what the command files of the CLI (src/cli/cmd_*.c) share with
 * etcompare.c: the exit codes and the messages for usage and input errors.
 */
#ifndef ETC_CLI_H
#define ETC_CLI_H

#include "etcompare/etcompare.h"

enum { EXIT_OK = 0, EXIT_GATE = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_OUTPUT = 4 };

/* In args.c. Prints "etcompare: <fmt with arg>" and the --help hint; returns EXIT_USAGE. */
int usage_error(const char *fmt, const char *arg);
/* In args.c. Prints "etcompare: error: <message>" and keeps it for cli_last_error. */
void cli_error(const char *message);
/* In args.c. Prints "etcompare: warning: <message>" (control characters
 * escaped); NULL prints nothing. */
void cli_warning(const char *message);
/* The last message cli_error printed ("" when none). */
const char *cli_last_error(void);
/* Prints the error's message (cli_error); returns EXIT_INPUT. */
int input_error(const etc_error *err);
/* In args.c. Block b's name as every output gives it: "Execute#2" when
 * another block has its name (as --block takes it), else the name alone. */
void cli_block_label(const etc_inspector *insp, size_t b, char *buf, size_t cap);
/* A threshold flag's number (NaN when v is NULL), or a usage error. */
int parse_threshold(const char *flag, const char *v, double *out);

#endif
