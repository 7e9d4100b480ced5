/*
 * ref_op.h - the contract between the graph runner (refgraph*.c) and the op
 * library (ops_*.c): owned dense tensors, decoded node arguments, and one
 * function per op looked up by its name (the ggml way: shapes and dtypes
 * checked before compute, a clear error naming node and op otherwise).
 */
#ifndef ETC_REF_OP_H
#define ETC_REF_OP_H

#include "etcompare/reference.h"
#include "etcompare/tensor.h"
#include "core/internal.h"

#include <stdbool.h>

/*
 * A dense, contiguous, row-major tensor. Floating tensors are ETC_DOUBLE or
 * ETC_FLOAT (the reference dtype); ints are ETC_BYTE, ETC_CHAR, ETC_SHORT,
 * ETC_INT, ETC_LONG; ETC_BOOL is one byte 0/1. `data` is owned (malloc) unless
 * `borrowed`.
 *
 * One exception, `transposed`: a matrix (rank 2) whose `data` is its
 * transpose (shape[1] rows of shape[0], row-major) in the record's bytes,
 * at any alignment: the fold of a weight's 2-D transpose (refgraph_call.c,
 * fold_transpose). Only a large float32 one is kept so, never copied; only
 * the runner and the blocked products (mm, addmm: gemm_b in ops_linalg.c)
 * see one; anything else gets ref_tensor_dense's copy.
 */
typedef struct ref_tensor {
	int dtype;
	uint32_t rank;
	int64_t shape[ETC_REF_MAX_RANK];
	uint64_t numel;
	void *data;
	bool borrowed;
	bool transposed;
} ref_tensor;

/* Allocates `t` (zeroed data) with the given dtype and shape. ETC_ERR_LIMIT
 * when the size overflows or exceeds ETC_REF_MAX_BYTES. */
#define ETC_REF_MAX_BYTES ((uint64_t)1 << 36)
int ref_tensor_alloc(ref_tensor *t, int dtype, uint32_t rank, const int64_t *shape, etc_error *err);
void ref_tensor_free(ref_tensor *t);
/* `src` in `dtype`: borrowed where it already is that dtype and aligned for
 * it (src must outlive dst), else a converted copy (ref_tensor_convert). */
int ref_tensor_take(ref_tensor *dst, const etc_reftensor *src, int dtype, etc_error *err);
/* A public view of `t` (points into it). */
etc_reftensor ref_tensor_view(const ref_tensor *t);
/* Element i as double / int64, for any supported dtype. */
double ref_get_f(const ref_tensor *t, uint64_t i);
int64_t ref_get_i(const ref_tensor *t, uint64_t i);
/* Stores v into element i, converting (ints: truncation toward zero as
 * torch's .to(); bool: v != 0). */
void ref_set_f(ref_tensor *t, uint64_t i, double v);
void ref_set_i(ref_tensor *t, uint64_t i, int64_t v);
bool ref_dtype_is_float(int dtype);
bool ref_dtype_supported(int dtype);
/* Copies `src` (any supported dtype, contiguous) into a new tensor of
 * `dtype`. */
int ref_tensor_convert(ref_tensor *dst, const etc_reftensor *src, int dtype, etc_error *err);

/* Told that the bytes of a record view from `base` up to `upto` were read
 * and will not be read again in this call (their pages may go). */
typedef struct ref_release {
	void (*fn)(const void *ctx, const void *base, const void *upto);
	const void *ctx;
} ref_release;
void ref_release_call(const ref_release *r, const void *base, const void *upto);

/* dst (rows x cols, row-major, `dtype`) = the transpose of the cols x rows
 * matrix of `src_dtype` at src (any alignment), written 16 of src's rows at
 * a time, each band told to `rel` (may be NULL). dtype is src_dtype, or
 * ETC_DOUBLE for ETC_FLOAT. */
int ref_transpose_into(void *dst, int dtype, const void *src, int src_dtype, uint64_t rows,
                       uint64_t cols, const ref_release *rel, etc_error *err);
/* A dense copy of `t` (a transposed view: ref_transpose_into) in `dtype`
 * (t's own, or ETC_DOUBLE for a float32 t). */
int ref_tensor_dense(ref_tensor *dst, const ref_tensor *t, int dtype, const ref_release *rel,
                     etc_error *err);
/* "[1, 3, 16, 16]" into buf. */
const char *ref_shape_str(char *buf, size_t cap, uint32_t rank, const int64_t *shape);

/* One decoded argument of a node (torch.export serde Argument union). */
typedef enum ref_arg_kind {
	REF_ARG_NONE = 0,
	REF_ARG_TENSOR,      /* t */
	REF_ARG_TENSORS,     /* ts[n] */
	REF_ARG_OPT_TENSORS, /* ts[n], NULL entries are None */
	REF_ARG_INT,         /* i (as_int, as_sym_int) */
	REF_ARG_INTS,        /* ints[n] */
	REF_ARG_FLOAT,       /* f */
	REF_ARG_FLOATS,      /* floats[n] */
	REF_ARG_BOOL,        /* i = 0/1 */
	REF_ARG_BOOLS,       /* ints[n] = 0/1 */
	REF_ARG_STRING,      /* s */
	REF_ARG_DTYPE,       /* i = etc_scalar_type (converted from serde's ScalarType) */
	REF_ARG_OTHER        /* layout, device, memory format: s = the set member's name */
} ref_arg_kind;

typedef struct ref_arg {
	const char *name; /* schema argument name, e.g. "alpha" ("" when absent) */
	int kind;
	const ref_tensor *t;
	const ref_tensor *const *ts;
	size_t n;
	int64_t i;
	double f;
	const int64_t *ints;
	const double *floats;
	const char *s;
} ref_arg;

/* One call of an op. The runner fills everything but `outs[*]`, which the op
 * allocates (ref_tensor_alloc) and fills; on failure the runner frees them. */
typedef struct ref_call {
	const char *node; /* node name, for messages */
	const char *op;   /* "aten.add.Tensor" */
	const ref_arg *args;
	size_t nargs;
	int float_dtype;  /* ETC_DOUBLE or ETC_FLOAT: the dtype of float results */
	ref_tensor *outs; /* nouts tensors to fill, as the graph has them */
	uint32_t nouts;
	etc_error *err;
	ref_release release; /* for a transposed input's bytes read (may be unset) */
} ref_call;

typedef int (*ref_op_fn)(ref_call *c);

typedef struct ref_op {
	const char *name; /* "aten.add.Tensor": the target without
	                     "executorch.exir.dialects.edge.ops." */
	ref_op_fn fn;
} ref_op;

/* The op called `name` (also accepted: "aten::add.Tensor", "aten.add.out"
 * for the .out variant of a functional op, "aten.add" for ".default"), or
 * NULL. */
const ref_op *ref_op_find(const char *name);
size_t ref_op_count(void);
const ref_op *ref_op_at(size_t i);

/* Argument access for ops: by schema name, else by position `pos` (-1: by
 * name only). NULL when absent or REF_ARG_NONE. */
const ref_arg *ref_arg_get(const ref_call *c, const char *name, int pos);
/* "a tensor", "an int list", ...: an argument's kind, for messages. */
const char *ref_arg_kind_name(int kind);
/* Fails with "node N (op): message" and ETC_ERR_MISMATCH / _UNSUPPORTED. */
int ref_fail(const ref_call *c, int status, const char *fmt, ...) ETC_PRINTF(3, 4);

#endif
