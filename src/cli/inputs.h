/*
 * inputs.h - every input file of the command line checked by its content
 * before any work: a file given to the wrong option (an ETRecord as
 * --etdump, an ETDump as --debug_buffer, ...) is named for what it is.
 */
#ifndef ETC_CLI_INPUTS_H
#define ETC_CLI_INPUTS_H

#include "args.h"

/* 0, or EXIT_INPUT with the message printed. */
int check_inputs(const args *a);

#endif
