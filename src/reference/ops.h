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
int ref_op_mm(ref_call *c);
int ref_op_addmm(ref_call *c);
int ref_op_bmm(ref_call *c);
int ref_op_baddbmm(ref_call *c);
int ref_op_linear(ref_call *c);
int ref_op_matmul(ref_call *c);
int ref_op_mv(ref_call *c);
int ref_op_dot(ref_call *c);
int ref_op_sdpa(ref_call *c);
int ref_op_flash_attention_cpu(ref_call *c);
int ref_op_convolution(ref_call *c);
int ref_op_max_pool2d_with_indices(ref_call *c);
int ref_op_max_pool2d(ref_call *c);
int ref_op_avg_pool2d(ref_call *c);
int ref_op_adaptive_avg_pool2d(ref_call *c);
int ref_op_max_pool1d(ref_call *c);
int ref_op_max_pool1d_with_indices(ref_call *c);
int ref_op_avg_pool1d(ref_call *c);
int ref_op_adaptive_avg_pool1d(ref_call *c);
int ref_op_upsample_nearest2d_vec(ref_call *c);
int ref_op_upsample_nearest2d(ref_call *c);
int ref_op_upsample_nearest_exact2d_vec(ref_call *c);
int ref_op_upsample_nearest_exact2d(ref_call *c);
int ref_op_upsample_bilinear2d_vec(ref_call *c);
int ref_op_upsample_bilinear2d(ref_call *c);
int ref_op_view(ref_call *c);
int ref_op_reshape(ref_call *c);
int ref_op_permute(ref_call *c);
int ref_op_transpose(ref_call *c);
int ref_op_t(ref_call *c);
int ref_op_expand(ref_call *c);
int ref_op_squeeze(ref_call *c);
int ref_op_squeeze_dims(ref_call *c);
int ref_op_unsqueeze(ref_call *c);
int ref_op_slice(ref_call *c);
int ref_op_narrow(ref_call *c);
int ref_op_select(ref_call *c);
int ref_op_flip(ref_call *c);
int ref_op_split_with_sizes(ref_call *c);
int ref_op_split(ref_call *c);
int ref_op_unbind(ref_call *c);
int ref_op_cat(ref_call *c);
int ref_op_stack(ref_call *c);
int ref_op_repeat(ref_call *c);
int ref_op_constant_pad_nd(ref_call *c);
int ref_op_index_select(ref_call *c);
int ref_op_gather(ref_call *c);
int ref_op_embedding(ref_call *c);
int ref_op_index(ref_call *c);
int ref_op_index_put(ref_call *c);
int ref_op_slice_scatter(ref_call *c);
int ref_op_select_scatter(ref_call *c);
int ref_op_pixel_shuffle(ref_call *c);
int ref_op_pixel_unshuffle(ref_call *c);
int ref_op_roll(ref_call *c);
int ref_op_as_strided(ref_call *c);
int ref_op_unfold(ref_call *c);
/* end ops-b */

#endif
