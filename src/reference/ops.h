/*
 * ops.h - the op library's functions, one per op (ops_*.c), listed in the
 * table of ops_table.c.
 */
#ifndef ETC_REF_OPS_H
#define ETC_REF_OPS_H

#include "reference/ref_op.h"

/* ops-a: elementwise, reductions, normalization, quantize, creation */
int ref_op_neg(ref_call *c);
int ref_op_abs(ref_call *c);
int ref_op_exp(ref_call *c);
int ref_op_log(ref_call *c);
int ref_op_sqrt(ref_call *c);
int ref_op_rsqrt(ref_call *c);
int ref_op_sigmoid(ref_call *c);
int ref_op_tanh(ref_call *c);
int ref_op_relu(ref_call *c);
int ref_op_gelu(ref_call *c);
int ref_op_silu(ref_call *c);
int ref_op_hardswish(ref_call *c);
int ref_op_hardsigmoid(ref_call *c);
int ref_op_hardtanh(ref_call *c);
int ref_op_clamp(ref_call *c);
int ref_op_clamp_tensor(ref_call *c);
int ref_op_leaky_relu(ref_call *c);
int ref_op_erf(ref_call *c);
int ref_op_logical_not(ref_call *c);
int ref_op_bitwise_not(ref_call *c);
int ref_op_sign(ref_call *c);
int ref_op_reciprocal(ref_call *c);
int ref_op_floor(ref_call *c);
int ref_op_ceil(ref_call *c);
int ref_op_round(ref_call *c);
int ref_op_sin(ref_call *c);
int ref_op_cos(ref_call *c);
int ref_op_add(ref_call *c);
int ref_op_sub(ref_call *c);
int ref_op_rsub(ref_call *c);
int ref_op_mul(ref_call *c);
int ref_op_div(ref_call *c);
int ref_op_pow(ref_call *c);
int ref_op_minimum(ref_call *c);
int ref_op_maximum(ref_call *c);
int ref_op_where(ref_call *c);
int ref_op_eq(ref_call *c);
int ref_op_ne(ref_call *c);
int ref_op_lt(ref_call *c);
int ref_op_le(ref_call *c);
int ref_op_gt(ref_call *c);
int ref_op_ge(ref_call *c);
int ref_op_logical_and(ref_call *c);
int ref_op_logical_or(ref_call *c);
int ref_op_logical_xor(ref_call *c);
int ref_op_bitwise_and(ref_call *c);
int ref_op_bitwise_or(ref_call *c);
int ref_op_bitwise_xor(ref_call *c);
int ref_op_sum_dim(ref_call *c);
int ref_op_sum(ref_call *c);
int ref_op_mean_dim(ref_call *c);
int ref_op_amax(ref_call *c);
int ref_op_amin(ref_call *c);
int ref_op_var(ref_call *c);
int ref_op_argmax(ref_call *c);
int ref_op_argmin(ref_call *c);
int ref_op_any_dim(ref_call *c);
int ref_op_any(ref_call *c);
int ref_op_max_dim(ref_call *c);
int ref_op_min_dim(ref_call *c);
int ref_op_softmax(ref_call *c);
int ref_op_log_softmax(ref_call *c);
int ref_op_native_layer_norm(ref_call *c);
int ref_op_native_group_norm(ref_call *c);
int ref_op_batch_norm_no_training(ref_call *c);
int ref_op_batch_norm_no_stats(ref_call *c);
int ref_op_native_batch_norm(ref_call *c);
int ref_op_batch_norm(ref_call *c);
int ref_op_rms_norm(ref_call *c);
int ref_op_quantize_per_tensor(ref_call *c);
int ref_op_quantize_per_tensor_tensor(ref_call *c);
int ref_op_dequantize_per_tensor(ref_call *c);
int ref_op_dequantize_per_tensor_tensor(ref_call *c);
int ref_op_quantize_per_channel(ref_call *c);
int ref_op_dequantize_per_channel(ref_call *c);
int ref_op_choose_qparams(ref_call *c);
int ref_op_full(ref_call *c);
int ref_op_zeros(ref_call *c);
int ref_op_ones(ref_call *c);
int ref_op_zeros_like(ref_call *c);
int ref_op_ones_like(ref_call *c);
int ref_op_full_like(ref_call *c);
int ref_op_arange(ref_call *c);
int ref_op_arange_start_step(ref_call *c);
int ref_op_scalar_tensor(ref_call *c);
int ref_op_to_copy(ref_call *c);
int ref_op_clone(ref_call *c);
int ref_op_to_dim_order_copy(ref_call *c);
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
int ref_op_upsample_nearest2d_vec(ref_call *c);
int ref_op_upsample_nearest2d(ref_call *c);
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
/* end ops-b */

#endif
