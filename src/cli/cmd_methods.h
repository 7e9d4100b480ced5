/*
 * cmd_methods.h - the numeric gap of every method of a multi-method ETRecord
 * (forward, decode, ...): each EventBlock named after a method is linked to
 * that method's maps and compared on its own.
 */
#ifndef ETC_CLI_CMD_METHODS_H
#define ETC_CLI_CMD_METHODS_H

#include "cmd_numgap.h"
#include "cmd_numgap_runs.h"

/*
 * When no --method and no --block were given, the record has two or more
 * methods and the ETDump has blocks named after at least two of them: runs
 * the numeric gap once per such method (block = method), each under a
 * heading, keeps the first method's state in `first` (for the reports and
 * plots), relinks `insp` to the record's default method and sets *done.
 * Otherwise does nothing. Returns 0 or an exit status.
 */
/*
 * The methods of `rec` that have an EventBlock named after them, when there
 * are two or more of them (0 otherwise, or without an ETRecord).
 */
size_t methods_with_blocks(const etc_inspector *insp, const etc_etrecord *rec);

/* The gaps of the methods after the first stay in `more` (labels: the
 * method names) for --json and JUnit; the first is in `first`. */
int numgap_every_method(numgap_args *a, etc_inspector *insp, const etc_etrecord *rec,
                        const etc_inspector_options *io, numgap_state *first, int *gate, bool *done,
                        numgap_runs *more);

#endif
