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
int ref_op_expm1(ref_call *c);
int ref_op_log1p(ref_call *c);
int ref_op_log2(ref_call *c);
int ref_op_log10(ref_call *c);
int ref_op_tan(ref_call *c);
int ref_op_atan(ref_call *c);
int ref_op_asin(ref_call *c);
int ref_op_acos(ref_call *c);
int ref_op_sinh(ref_call *c);
int ref_op_cosh(ref_call *c);
int ref_op_trunc(ref_call *c);
int ref_op_elu(ref_call *c);
int ref_op_isnan(ref_call *c);
int ref_op_isinf(ref_call *c);
int ref_op_fmod(ref_call *c);
int ref_op_remainder(ref_call *c);
int ref_op_floor_divide(ref_call *c);
int ref_op_atan2(ref_call *c);
int ref_op_masked_fill(ref_call *c);
int ref_op_mean(ref_call *c);
int ref_op_max(ref_call *c);
int ref_op_min(ref_call *c);
int ref_op_prod_dim(ref_call *c);
int ref_op_prod(ref_call *c);
int ref_op_std(ref_call *c);
int ref_op_all_dim(ref_call *c);
int ref_op_all(ref_call *c);
int ref_op_cumsum(ref_call *c);
int ref_op_softplus(ref_call *c);
int ref_op_mish(ref_call *c);
int ref_op_fill(ref_call *c);
int ref_op_prelu_kernel(ref_call *c);
int ref_op_logsumexp(ref_call *c);
int ref_op_vector_norm(ref_call *c);
int ref_op_var_mean(ref_call *c);
int ref_op_glu(ref_call *c);
int ref_op_round_decimals(ref_call *c);
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
/* Whether mm/addmm widen a float32 B of a product in float_dtype by blocks
 * of columns (and so take a transposed view as B; ops_linalg.c). */
bool ref_op_blocks_b(int float_dtype, const ref_tensor *b);
/* Whether call c of ref_op_permute, ref_op_transpose or ref_op_t swaps the
 * two dims of a 2-D input (its output is the input's transpose); false for
 * any other op and on bad arguments (the op's own call reports those). */
bool ref_op_transposes_2d(const ref_call *c, int (*fn)(ref_call *));
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
