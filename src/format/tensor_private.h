/*
 * tensor_private.h - the hook between the ETDump model (which decodes tensor
 * descriptions) and the debug buffer (which owns the bytes).
 */
#ifndef ETC_TENSOR_PRIVATE_H
#define ETC_TENSOR_PRIVATE_H

#include "etcompare/tensor.h"

/* Points t->data into `buf` after checking [offset, offset+nbytes) lies
 * inside it. run, event and index name the tensor in messages (formatted
 * only when one is raised). buf may be NULL. */
int etc_tensor_attach_(etc_tensor *t, const etc_debug_buffer *buf, uint32_t run, uint32_t event,
                       uint32_t index, etc_error *err);

#endif
