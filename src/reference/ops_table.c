/*
 * ops_table.c - the op library's table: name -> function, looked up by the
 * graph runner, and the argument helpers every op uses.
 */
#include "reference/ref_op.h"
#include "reference/ops.h"

#include <stdio.h>

static const ref_op table[] = {
    /* ops-a: elementwise, reductions, normalization, quantize, creation */
    {"aten.neg.default", ref_op_neg},
    {"aten.abs.default", ref_op_abs},
    {"aten.exp.default", ref_op_exp},
    {"aten.log.default", ref_op_log},
    {"aten.sqrt.default", ref_op_sqrt},
    {"aten.rsqrt.default", ref_op_rsqrt},
    {"aten.sigmoid.default", ref_op_sigmoid},
    {"aten.tanh.default", ref_op_tanh},
    {"aten.relu.default", ref_op_relu},
    {"aten.gelu.default", ref_op_gelu},
    {"aten.silu.default", ref_op_silu},
    {"aten.hardswish.default", ref_op_hardswish},
    {"aten.hardsigmoid.default", ref_op_hardsigmoid},
    {"aten.hardtanh.default", ref_op_hardtanh},
    {"aten.clamp.default", ref_op_clamp},
    {"aten.clamp.Tensor", ref_op_clamp_tensor},
    {"aten.leaky_relu.default", ref_op_leaky_relu},
    {"aten.erf.default", ref_op_erf},
    {"aten.logical_not.default", ref_op_logical_not},
    {"aten.bitwise_not.default", ref_op_bitwise_not},
    {"aten.sign.default", ref_op_sign},
    {"aten.reciprocal.default", ref_op_reciprocal},
    {"aten.floor.default", ref_op_floor},
    {"aten.ceil.default", ref_op_ceil},
    {"aten.round.default", ref_op_round},
    {"aten.sin.default", ref_op_sin},
    {"aten.cos.default", ref_op_cos},
    {"aten.add.Tensor", ref_op_add},
    {"aten.add.Scalar", ref_op_add},
    {"aten.sub.Tensor", ref_op_sub},
    {"aten.sub.Scalar", ref_op_sub},
    {"aten.rsub.Scalar", ref_op_rsub},
    {"aten.rsub.Tensor", ref_op_rsub},
    {"aten.mul.Tensor", ref_op_mul},
    {"aten.mul.Scalar", ref_op_mul},
    {"aten.div.Tensor", ref_op_div},
    {"aten.div.Scalar", ref_op_div},
    {"aten.div.Tensor_mode", ref_op_div},
    {"aten.div.Scalar_mode", ref_op_div},
    {"aten.pow.Tensor_Tensor", ref_op_pow},
    {"aten.pow.Tensor_Scalar", ref_op_pow},
    {"aten.pow.Scalar", ref_op_pow},
    {"aten.minimum.default", ref_op_minimum},
    {"aten.maximum.default", ref_op_maximum},
    {"aten.where.self", ref_op_where},
    {"aten.eq.Tensor", ref_op_eq},
    {"aten.eq.Scalar", ref_op_eq},
    {"aten.ne.Tensor", ref_op_ne},
    {"aten.ne.Scalar", ref_op_ne},
    {"aten.lt.Tensor", ref_op_lt},
    {"aten.lt.Scalar", ref_op_lt},
    {"aten.le.Tensor", ref_op_le},
    {"aten.le.Scalar", ref_op_le},
    {"aten.gt.Tensor", ref_op_gt},
    {"aten.gt.Scalar", ref_op_gt},
    {"aten.ge.Tensor", ref_op_ge},
    {"aten.ge.Scalar", ref_op_ge},
    {"aten.logical_and.default", ref_op_logical_and},
    {"aten.logical_or.default", ref_op_logical_or},
    {"aten.logical_xor.default", ref_op_logical_xor},
    {"aten.bitwise_and.Tensor", ref_op_bitwise_and},
    {"aten.bitwise_and.Scalar", ref_op_bitwise_and},
    {"aten.bitwise_or.Tensor", ref_op_bitwise_or},
    {"aten.bitwise_or.Scalar", ref_op_bitwise_or},
    {"aten.bitwise_xor.Tensor", ref_op_bitwise_xor},
    {"aten.bitwise_xor.Scalar", ref_op_bitwise_xor},
    {"aten.sum.dim_IntList", ref_op_sum_dim},
    {"aten.sum.default", ref_op_sum},
    {"aten.mean.dim", ref_op_mean_dim},
    {"aten.amax.default", ref_op_amax},
    {"aten.amin.default", ref_op_amin},
    {"aten.var.correction", ref_op_var},
    {"aten.argmax.default", ref_op_argmax},
    {"aten.argmin.default", ref_op_argmin},
    {"aten.any.dim", ref_op_any_dim},
    {"aten.any.dims", ref_op_any_dim},
    {"aten.any.default", ref_op_any},
    {"aten.max.dim", ref_op_max_dim},
    {"aten.min.dim", ref_op_min_dim},
    {"aten._softmax.default", ref_op_softmax},
    {"aten._log_softmax.default", ref_op_log_softmax},
    {"aten.native_layer_norm.default", ref_op_native_layer_norm},
    {"aten.native_group_norm.default", ref_op_native_group_norm},
    {"aten._native_batch_norm_legit_no_training.default", ref_op_batch_norm_no_training},
    {"aten._native_batch_norm_legit.no_stats", ref_op_batch_norm_no_stats},
    {"aten.native_batch_norm.default", ref_op_native_batch_norm},
    {"aten.batch_norm.default", ref_op_batch_norm},
    {"aten.rms_norm.default", ref_op_rms_norm},
    {"quantized_decomposed.quantize_per_tensor.default", ref_op_quantize_per_tensor},
    {"quantized_decomposed.quantize_per_tensor.tensor", ref_op_quantize_per_tensor_tensor},
    {"quantized_decomposed.dequantize_per_tensor.default", ref_op_dequantize_per_tensor},
    {"quantized_decomposed.dequantize_per_tensor.tensor", ref_op_dequantize_per_tensor_tensor},
    {"quantized_decomposed.quantize_per_channel.default", ref_op_quantize_per_channel},
    {"quantized_decomposed.dequantize_per_channel.default", ref_op_dequantize_per_channel},
    {"quantized_decomposed.choose_qparams.tensor", ref_op_choose_qparams},
    {"aten.full.default", ref_op_full},
    {"aten.zeros.default", ref_op_zeros},
    {"aten.ones.default", ref_op_ones},
    {"aten.zeros_like.default", ref_op_zeros_like},
    {"aten.ones_like.default", ref_op_ones_like},
    {"aten.full_like.default", ref_op_full_like},
    {"aten.arange.default", ref_op_arange},
    {"aten.arange.start_step", ref_op_arange_start_step},
    {"aten.scalar_tensor.default", ref_op_scalar_tensor},
    {"aten._to_copy.default", ref_op_to_copy},
    {"aten.clone.default", ref_op_clone},
    {"aten.alias.default", ref_op_clone},
    {"aten.alias_copy.default", ref_op_clone},
    {"aten.detach_copy.default", ref_op_clone},
    {"aten.lift_fresh_copy.default", ref_op_clone},
    {"dim_order_ops._to_dim_order_copy.default", ref_op_to_dim_order_copy},
    {"aten.expm1.default", ref_op_expm1},
    {"aten.log1p.default", ref_op_log1p},
    {"aten.log2.default", ref_op_log2},
    {"aten.log10.default", ref_op_log10},
    {"aten.tan.default", ref_op_tan},
    {"aten.atan.default", ref_op_atan},
    {"aten.asin.default", ref_op_asin},
    {"aten.acos.default", ref_op_acos},
    {"aten.sinh.default", ref_op_sinh},
    {"aten.cosh.default", ref_op_cosh},
    {"aten.trunc.default", ref_op_trunc},
    {"aten.elu.default", ref_op_elu},
    {"aten.isnan.default", ref_op_isnan},
    {"aten.isinf.default", ref_op_isinf},
    {"aten.atan2.default", ref_op_atan2},
    {"aten.floor_divide.default", ref_op_floor_divide},
    {"aten.fmod.Tensor", ref_op_fmod},
    {"aten.fmod.Scalar", ref_op_fmod},
    {"aten.remainder.Tensor", ref_op_remainder},
    {"aten.remainder.Scalar", ref_op_remainder},
    {"aten.masked_fill.Scalar", ref_op_masked_fill},
    {"aten.masked_fill.Tensor", ref_op_masked_fill},
    {"aten.mean.default", ref_op_mean},
    {"aten.max.default", ref_op_max},
    {"aten.min.default", ref_op_min},
    {"aten.prod.dim_int", ref_op_prod_dim},
    {"aten.prod.default", ref_op_prod},
    {"aten.std.correction", ref_op_std},
    {"aten.all.dim", ref_op_all_dim},
    {"aten.all.dims", ref_op_all_dim},
    {"aten.all.default", ref_op_all},
    {"aten.cumsum.default", ref_op_cumsum},
    {"aten.softplus.default", ref_op_softplus},
    {"aten.mish.default", ref_op_mish},
    {"aten.fill.Scalar", ref_op_fill},
    {"aten.fill.Tensor", ref_op_fill},
    {"aten._prelu_kernel.default", ref_op_prelu_kernel},
    {"aten.logsumexp.default", ref_op_logsumexp},
    {"aten.linalg_vector_norm.default", ref_op_vector_norm},
    {"aten.var_mean.correction", ref_op_var_mean},
    {"aten.glu.default", ref_op_glu},
    {"aten.detach.default", ref_op_clone},
    {"aten.round.decimals", ref_op_round_decimals},
    {"aten._native_batch_norm_legit.default", ref_op_native_batch_norm},
    /* end ops-a */
    /* ops-b: matrix products, convolution, pooling, upsampling, shape and index */
    {"aten.mm.default", ref_op_mm},
    {"aten.addmm.default", ref_op_addmm},
    {"aten.bmm.default", ref_op_bmm},
    {"aten.baddbmm.default", ref_op_baddbmm},
    {"aten.linear.default", ref_op_linear},
    {"aten.matmul.default", ref_op_matmul},
    {"aten.mv.default", ref_op_mv},
    {"aten.dot.default", ref_op_dot},
    {"aten.scaled_dot_product_attention.default", ref_op_sdpa},
    {"aten._scaled_dot_product_flash_attention_for_cpu.default", ref_op_flash_attention_cpu},
    {"aten.convolution.default", ref_op_convolution},
    {"aten.max_pool2d_with_indices.default", ref_op_max_pool2d_with_indices},
    {"aten.max_pool2d.default", ref_op_max_pool2d},
    {"aten.avg_pool2d.default", ref_op_avg_pool2d},
    {"aten.adaptive_avg_pool2d.default", ref_op_adaptive_avg_pool2d},
    {"aten._adaptive_avg_pool2d.default", ref_op_adaptive_avg_pool2d},
    {"aten.max_pool1d.default", ref_op_max_pool1d},
    {"aten.max_pool1d_with_indices.default", ref_op_max_pool1d_with_indices},
    {"aten.avg_pool1d.default", ref_op_avg_pool1d},
    {"aten.adaptive_avg_pool1d.default", ref_op_adaptive_avg_pool1d},
    {"aten.upsample_nearest2d.vec", ref_op_upsample_nearest2d_vec},
    {"aten.upsample_nearest2d.default", ref_op_upsample_nearest2d},
    {"aten._upsample_nearest_exact2d.vec", ref_op_upsample_nearest_exact2d_vec},
    {"aten._upsample_nearest_exact2d.default", ref_op_upsample_nearest_exact2d},
    {"aten.upsample_bilinear2d.vec", ref_op_upsample_bilinear2d_vec},
    {"aten.upsample_bilinear2d.default", ref_op_upsample_bilinear2d},
    {"aten.view.default", ref_op_view},
    {"aten.view_copy.default", ref_op_view},
    {"aten._unsafe_view.default", ref_op_view},
    {"aten.reshape.default", ref_op_reshape},
    {"aten.permute.default", ref_op_permute},
    {"aten.permute_copy.default", ref_op_permute},
    {"aten.transpose.int", ref_op_transpose},
    {"aten.transpose_copy.int", ref_op_transpose},
    {"aten.t.default", ref_op_t},
    {"aten.t_copy.default", ref_op_t},
    {"aten.expand.default", ref_op_expand},
    {"aten.expand_copy.default", ref_op_expand},
    {"aten.squeeze.default", ref_op_squeeze},
    {"aten.squeeze_copy.default", ref_op_squeeze},
    {"aten.squeeze.dim", ref_op_squeeze_dims},
    {"aten.squeeze_copy.dim", ref_op_squeeze_dims},
    {"aten.squeeze.dims", ref_op_squeeze_dims},
    {"aten.squeeze_copy.dims", ref_op_squeeze_dims},
    {"aten.unsqueeze.default", ref_op_unsqueeze},
    {"aten.unsqueeze_copy.default", ref_op_unsqueeze},
    {"aten.slice.Tensor", ref_op_slice},
    {"aten.slice_copy.Tensor", ref_op_slice},
    {"aten.narrow.default", ref_op_narrow},
    {"aten.narrow_copy.default", ref_op_narrow},
    {"aten.select.int", ref_op_select},
    {"aten.select_copy.int", ref_op_select},
    {"aten.flip.default", ref_op_flip},
    {"aten.split_with_sizes.default", ref_op_split_with_sizes},
    {"aten.split_with_sizes_copy.default", ref_op_split_with_sizes},
    {"aten.split.Tensor", ref_op_split},
    {"aten.split_copy.Tensor", ref_op_split},
    {"aten.unbind.int", ref_op_unbind},
    {"aten.unbind_copy.int", ref_op_unbind},
    {"aten.cat.default", ref_op_cat},
    {"aten.stack.default", ref_op_stack},
    {"aten.repeat.default", ref_op_repeat},
    {"aten.constant_pad_nd.default", ref_op_constant_pad_nd},
    {"aten.index_select.default", ref_op_index_select},
    {"aten.gather.default", ref_op_gather},
    {"aten.embedding.default", ref_op_embedding},
    {"aten.index.Tensor", ref_op_index},
    {"aten.index_put.default", ref_op_index_put},
    {"aten.slice_scatter.default", ref_op_slice_scatter},
    {"aten.select_scatter.default", ref_op_select_scatter},
    {"aten.pixel_shuffle.default", ref_op_pixel_shuffle},
    {"aten.pixel_unshuffle.default", ref_op_pixel_unshuffle},
    {"aten.roll.default", ref_op_roll},
    {"aten.as_strided.default", ref_op_as_strided},
    {"aten.as_strided_copy.default", ref_op_as_strided},
    {"aten.unfold.default", ref_op_unfold},
    {"aten.unfold_copy.default", ref_op_unfold},
    /* end ops-b */
};

size_t ref_op_count(void)
{
	return sizeof table / sizeof table[0];
}

const ref_op *ref_op_at(size_t i)
{
	return i < ref_op_count() ? &table[i] : NULL;
}

static const ref_op *find_exact(const char *name)
{
	for (size_t i = 0; i < ref_op_count(); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

/* "ns.op" + "." + overload into buf; NULL when it does not fit. */
static const char *join(char *buf, size_t cap, const char *base, size_t blen, const char *ovl,
                        size_t olen)
{
	if (blen + 1 + olen + 1 > cap)
		return NULL;
	memcpy(buf, base, blen);
	buf[blen] = '.';
	memcpy(buf + blen + 1, ovl, olen);
	buf[blen + 1 + olen] = 0;
	return buf;
}

/*
 * Accepted spellings: the table's "ns.op.overload"; "ns::op.overload"; a
 * bare "ns.op" for ".default"; and an out variant for its functional op:
 * ".out" is ".default" (else ".Tensor"), ".X_out" is ".X" (else
 * ".dim_X", as sum.IntList_out is sum.dim_IntList), ".out_X" is
 * ".Tensor_X" (div.out_mode is div.Tensor_mode).
 */
const ref_op *ref_op_find(const char *name)
{
	char canon[256], buf[300];
	if (!name)
		return NULL;
	size_t len = strlen(name), at = 0;
	if (len >= sizeof canon)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (name[i] == ':' && name[i + 1] == ':') {
			canon[at++] = '.';
			i++;
		} else {
			canon[at++] = name[i];
		}
	}
	canon[at] = 0;
	const ref_op *op = find_exact(canon);
	if (op)
		return op;
	const char *first = strchr(canon, '.');
	if (!first)
		return NULL;
	const char *dot = strrchr(canon, '.');
	if (dot == first) /* "ns.op" */
		return join(buf, sizeof buf, canon, at, "default", 7) ? find_exact(buf) : NULL;
	size_t blen = (size_t)(dot - canon);
	const char *ovl = dot + 1;
	size_t olen = strlen(ovl);
	if (strcmp(ovl, "out") == 0) {
		if (join(buf, sizeof buf, canon, blen, "default", 7) && (op = find_exact(buf)))
			return op;
		return join(buf, sizeof buf, canon, blen, "Tensor", 6) ? find_exact(buf) : NULL;
	}
	if (olen > 4 && strcmp(ovl + olen - 4, "_out") == 0) {
		char tmp[260];
		if (join(buf, sizeof buf, canon, blen, ovl, olen - 4) && (op = find_exact(buf)))
			return op;
		if (olen - 4 + 4 >= sizeof tmp)
			return NULL;
		memcpy(tmp, "dim_", 4);
		memcpy(tmp + 4, ovl, olen - 4);
		return join(buf, sizeof buf, canon, blen, tmp, olen) ? find_exact(buf) : NULL;
	}
	if (olen > 4 && strncmp(ovl, "out_", 4) == 0) {
		char tmp[260];
		if (olen + 3 >= sizeof tmp)
			return NULL;
		memcpy(tmp, "Tensor_", 7);
		memcpy(tmp + 7, ovl + 4, olen - 4);
		return join(buf, sizeof buf, canon, blen, tmp, olen + 3) ? find_exact(buf) : NULL;
	}
	return NULL;
}

const ref_arg *ref_arg_get(const ref_call *c, const char *name, int pos)
{
	for (size_t i = 0; i < c->nargs; i++)
		if (name && c->args[i].name[0] && strcmp(c->args[i].name, name) == 0)
			return c->args[i].kind == REF_ARG_NONE ? NULL : &c->args[i];
	if (pos >= 0 && (size_t)pos < c->nargs && !c->args[pos].name[0])
		return c->args[pos].kind == REF_ARG_NONE ? NULL : &c->args[pos];
	return NULL;
}

const char *ref_arg_kind_name(int kind)
{
	switch (kind) {
	case REF_ARG_NONE:
		return "None";
	case REF_ARG_TENSOR:
		return "a tensor";
	case REF_ARG_TENSORS:
	case REF_ARG_OPT_TENSORS:
		return "a tensor list";
	case REF_ARG_INT:
		return "an int";
	case REF_ARG_INTS:
		return "an int list";
	case REF_ARG_FLOAT:
		return "a float";
	case REF_ARG_FLOATS:
		return "a float list";
	case REF_ARG_BOOL:
		return "a bool";
	case REF_ARG_BOOLS:
		return "a bool list";
	case REF_ARG_STRING:
		return "a string";
	case REF_ARG_DTYPE:
		return "a dtype";
	default:
		return "another kind of argument";
	}
}

int ref_fail(const ref_call *c, int status, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return etc_fail(c->err, status, NULL, -1, "node %s (%s): %s", c->node, c->op, msg);
}

size_t etc_reference_op_count(void)
{
	return ref_op_count();
}

const char *etc_reference_op_name(size_t i)
{
	return i < ref_op_count() ? table[i].name : NULL;
}

bool etc_reference_op_supported(const char *op)
{
	return op && ref_op_find(op) != NULL;
}
