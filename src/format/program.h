/*
 * program.h - what the consistency check needs of an ExecuTorch program
 * (.pte, the one a BundledProgram embeds): the kernel each instruction of
 * a method calls (program.c).
 */
#ifndef ETC_FORMAT_PROGRAM_H
#define ETC_FORMAT_PROGRAM_H

#include "core/internal.h"

/*
 * The operator each instruction of method `method` calls ("aten::convolution"),
 * or an empty string for an instruction that calls no kernel (a delegate, a
 * move, a jump, a free): *ops gets *count of them (malloc'd, views into
 * `pte`), in instruction order. `method` NULL or absent: the program's only
 * method; with several and none of that name, *count is 0. The FlatBuffer
 * is verified as it is read; `name` and `base` (the program's offset in its
 * file) go into messages.
 */
int etc_program_kernels_(const uint8_t *pte, size_t len, size_t base, const char *name,
                         const char *method, etc_str **ops, size_t *count, etc_error *err);

#endif
