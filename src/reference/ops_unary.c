/*
 * ops_unary.c - elementwise ops of one tensor.
 */
#include "reference/ops.h"

int ref_op_relu(ref_call *c)
{
	const ref_arg *a = ref_arg_get(c, "self", 0);
	if (!a || a->kind != REF_ARG_TENSOR)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument self is not a tensor");
	const ref_tensor *x = a->t;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, x->rank, x->shape, c->err));
	for (uint64_t i = 0; i < x->numel; i++) {
		double v = ref_get_f(x, i);
		ref_set_f(&c->outs[0], i, v > 0 ? v : (v == v ? 0 : v));
	}
	return 0;
}
