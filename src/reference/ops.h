/*
 * ops.h - the op library's functions, one per op (ops_*.c), listed in the
 * table of ops_table.c.
 */
#ifndef ETC_REF_OPS_H
#define ETC_REF_OPS_H

#include "reference/ref_op.h"

/* ops-a: elementwise, reductions, normalization, quantize, creation */
int ref_op_relu(ref_call *c);
/* end ops-a */

/* ops-b: matrix products, convolution, pooling, upsampling, shape and index */
/* end ops-b */

#endif
