/*
 * ops_table.c - the op library's table: name -> function, looked up by the
 * graph runner, and the argument helpers every op uses.
 */
#include "reference/ref_op.h"
#include "reference/ops.h"

#include <stdio.h>

static const ref_op table[] = {
    /* ops-a: elementwise, reductions, normalization, quantize, creation */
    {"aten.relu.default", ref_op_relu},
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

const ref_op *ref_op_find(const char *name)
{
	/* TODO(op library): accept "aten::x.y", ".out" variants and bare names. */
	for (size_t i = 0; i < ref_op_count(); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
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
