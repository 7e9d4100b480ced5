/*
 * etcompare/output.h - output files: atomic writes (a temporary file in the
 * same directory, renamed into place), the umask, and the checks of a run's
 * output paths (no output is an input or another output, symlinks followed
 * only where the kernel's protected_symlinks rule would follow them).
 *
 * Implemented in the core layer (src/core/output.c) so that both the
 * reports (report/) and the plots (plot/) write through it, and neither
 * reaches into the other. etcompare/report.h includes this header.
 */
#ifndef ETCOMPARE_OUTPUT_H
#define ETCOMPARE_OUTPUT_H

#include "common.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * An output file written to a temporary name in the same directory and
 * renamed into place by etc_output_commit, so a failure never leaves a
 * truncated or clobbered file. The path "-" means standard output.
 */
typedef struct etc_output etc_output;

ETC_API int etc_output_open(etc_output **out, const char *path, etc_error *err);
/** The stream to write to (borrowed). */
ETC_API FILE *etc_output_stream(etc_output *o);
/** Flushes, closes and renames into place; frees `o` whatever happens. */
ETC_API int etc_output_commit(etc_output *o, etc_error *err);
/** Discards the temporary file and frees `o`. NULL is a no-op. */
ETC_API void etc_output_abort(etc_output *o);

/**
 * Checks the output paths of one run before anything is read or written
 * (NULL entries are skipped): ETC_ERR_USAGE when two outputs are the same
 * file (same device and inode, or the same canonical path for new files;
 * /dev/null excepted), when an output is one of `inputs`, or when more than
 * one output is "-"; ETC_ERR_IO when an output's directory is missing or
 * not writable, an output is a directory, or a symlink would be followed
 * against the protected_symlinks rule (docs/hardening-outputs.md).
 */
ETC_API int etc_output_check(const char *const *outputs, size_t n_outputs,
                             const char *const *inputs, size_t n_inputs, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
