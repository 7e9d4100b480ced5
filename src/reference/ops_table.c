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
