/*
 * etcompare/consistency.h - do the inputs belong together? An ETRecord of
 * another model, or a debug buffer of another run, gives numbers that look
 * like a model regression; these checks refuse such inputs before any
 * verdict, with the evidence and the fix.
 */
#ifndef ETCOMPARE_CONSISTENCY_H
#define ETCOMPARE_CONSISTENCY_H

#include "common.h"
#include "bundled.h"
#include "inspector.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The ETRecord linked to `insp` (etc_inspector_link) is the ETDump's own:
 * every instruction that calls a kernel (an event named
 * `native_call_<op>.out`, or one that logged intermediate outputs) has a
 * debug_handle_map entry, and its name contains the op of a node it is
 * linked to. Instructions without a kernel call (et_view, memory.alloc)
 * have no entry by design and are not counted.
 * @param fix  the option that gives the right file, for the message (e.g. "--etrecord");
 *             NULL: the message names no option
 * @return 0 (also without a linked ETRecord); ETC_ERR_MISMATCH naming both
 *         files and the first piece of evidence
 */
ETC_API int etc_check_etrecord(const etc_inspector *insp, const char *fix, etc_error *err);

/**
 * The debug buffer of `insp` is the one the ETDump's runs wrote: every
 * tensor range of every run lies inside it, and the buffer holds no
 * sizeable non-zero data the ETDump does not reference (after the last
 * range, where the runtime leaves zero padding, or between ranges).
 * @param fix  what to give, for the message ("--debug-buffer"); NULL: "debug buffer"
 * @return 0 (also without a debug buffer); ETC_ERR_MISMATCH naming both
 *         files, the evidence ("references 416 of 4,440 bytes") and the fix
 */
ETC_API int etc_check_debug_buffer(const etc_inspector *insp, const char *fix, etc_error *err);

/**
 * The BundledProgram `bp` holds the program the ETDump's runs executed:
 * the runtime names each kernel call after the operator the instruction
 * calls (`native_call_convolution.out` for `aten::convolution`), and most
 * kernel calls of the ETDump name the operator of their instruction in the
 * embedded program (the method the inspector is linked to, else its only
 * one). The embedded program's FlatBuffer is verified as it is read.
 * @param fix  the option that gives the right file (e.g. "--bundled-program");
 *             NULL: the message names no option
 * @return 0 (also without an embedded program, or with several methods and
 *         none of the linked name); ETC_ERR_MISMATCH naming both files and
 *         the first kernel call that disagrees; ETC_ERR_FORMAT for a corrupt
 *         embedded program
 */
ETC_API int etc_check_bundled_program(const etc_inspector *insp, const etc_bundled *bp,
                                      const char *fix, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
