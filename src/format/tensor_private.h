/*
 * tensor_private.h - the hook between the ETDump model (which decodes tensor
 * descriptions) and the debug buffer (which owns the bytes); the summary of
 * values read in pieces.
 */
#ifndef ETC_TENSOR_PRIVATE_H
#define ETC_TENSOR_PRIVATE_H

#include "etcompare/tensor.h"

/* Points t->data into `buf` after checking [offset, offset+nbytes) lies
 * inside it. run, event and index name the tensor in messages (formatted
 * only when one is raised). buf may be NULL. */
int etc_tensor_attach_(etc_tensor *t, const etc_debug_buffer *buf, uint32_t run, uint32_t event,
                       uint32_t index, etc_error *err);

/* etc_tensor_summarize of `numel` values that `read` gives in order, a
 * piece at a time (e.g. a tensor read through strides): the same bits as
 * etc_tensor_summarize over them dense. */
void etc_summarize_read_(void (*read)(const void *src, uint64_t start, size_t n, double *dst),
                         const void *src, uint64_t numel, etc_tensor_summary *out);

#endif
