/*
 * ops_util.h - what the elementwise, reduction and normalization ops share:
 * reading a node's arguments with a precise refusal, torch's type
 * promotion, negative dims, broadcasting and reduction iteration.
 */
#ifndef ETC_REF_OPS_UTIL_H
#define ETC_REF_OPS_UTIL_H

#include "reference/ref_op.h"

/* --- arguments: each reader fails with ref_fail naming the argument -------- */

/* A required tensor argument. */
int ref_arg_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **t);
/* An optional tensor argument: *t = NULL when absent or None. */
int ref_arg_opt_tensor(const ref_call *c, const char *name, int pos, const ref_tensor **t);
/* Int (also a bool), float (also an int), bool arguments: required ones,
 * and ones with a default when absent or None. */
int ref_arg_int(const ref_call *c, const char *name, int pos, int64_t *v);
int ref_arg_int_or(const ref_call *c, const char *name, int pos, int64_t def, int64_t *v);
int ref_arg_float(const ref_call *c, const char *name, int pos, double *v);
int ref_arg_float_or(const ref_call *c, const char *name, int pos, double def, double *v);
int ref_arg_bool_or(const ref_call *c, const char *name, int pos, bool def, bool *v);
/* A string argument, or `def` when absent or None. */
int ref_arg_string_or(const ref_call *c, const char *name, int pos, const char *def,
                      const char **v);
/* A dtype argument (etc_scalar_type), or -1 when absent or None. */
int ref_arg_dtype_or_none(const ref_call *c, const char *name, int pos, int *dtype);
/* An int list argument (a single int is a list of one); *n = 0 and *v = NULL
 * when absent or None. `required` refuses an absent one. */
int ref_arg_ints(const ref_call *c, const char *name, int pos, bool required, const int64_t **v,
                 size_t *n, int64_t *one);

/* The category of a value in torch's promotion order. */
enum { REF_KIND_BOOL = 0, REF_KIND_INT = 1, REF_KIND_FLOAT = 2 };

/* A Scalar argument (a Python number in the graph). */
typedef struct ref_scalar {
	int kind; /* REF_KIND_* */
	int64_t i;
	double f; /* the value as a double, for every kind */
} ref_scalar;

int ref_arg_scalar(const ref_call *c, const char *name, int pos, ref_scalar *s);
/* Optional Scalar: *present = false when absent or None. */
int ref_arg_opt_scalar(const ref_call *c, const char *name, int pos, ref_scalar *s, bool *present);

/* Fails unless the graph gives the node `n` outputs. */
int ref_check_nouts(const ref_call *c, uint32_t n);

/* --- dtypes ------------------------------------------------------------------ */

int ref_dtype_kind(int dtype);
/* torch.promote_types of two integer or bool dtypes (uint8 with int8 is int16). */
int ref_promote_ints(int a, int b);
/*
 * The result dtype of an elementwise op over tensors and Python scalars
 * (torch.result_type): dimensioned tensors first, then zero-dim tensors,
 * then scalars, each group counting only when its category is higher. A
 * float result is always the reference dtype.
 */
int ref_result_dtype(const ref_call *c, const ref_tensor *const *ts, size_t nt,
                     const ref_scalar *ss, size_t ns);
/* The dtype to hold a result of `dtype`'s kind: floats become the reference
 * dtype, other dtypes stay. */
int ref_hold_dtype(const ref_call *c, int dtype);

/* --- dims, broadcasting, reductions ------------------------------------------ */

/* A dim in [-rank, rank) made non-negative (a 0-d tensor takes -1 and 0). */
int ref_norm_dim(const ref_call *c, int64_t dim, uint32_t rank, uint32_t *out);

/* Iterates the broadcast of up to 3 tensors in row-major order of the
 * result: off[k] is the element of input k for the current result element. */
#define REF_BCAST_MAX 3
typedef struct ref_bcast {
	uint32_t rank;
	int64_t shape[ETC_REF_MAX_RANK];
	uint64_t numel;
	size_t n;
	int64_t stride[REF_BCAST_MAX][ETC_REF_MAX_RANK];
	int64_t idx[ETC_REF_MAX_RANK];
	uint64_t off[REF_BCAST_MAX];
} ref_bcast;

/* Fails naming the shapes when they do not broadcast. */
int ref_bcast_init(ref_bcast *b, const ref_call *c, const ref_tensor *const *ts, size_t n);
void ref_bcast_next(ref_bcast *b);

/*
 * A reduction of a tensor over a set of dims: `outer` results, each of
 * `inner` elements; the element k of result o is input element
 * ref_reduce_base(o) + ref_reduce_at(k).
 */
typedef struct ref_reduce {
	uint32_t out_rank;
	int64_t out_shape[ETC_REF_MAX_RANK];
	uint64_t outer, inner;
	/* the inner offsets, precomputed (owned) unless there are too many */
	int64_t *roff;
	/* kept and reduced dims (in input order) and their strides in the input */
	uint32_t nkept, nred;
	int64_t kept_size[ETC_REF_MAX_RANK];
	int64_t kept_stride[ETC_REF_MAX_RANK];
	int64_t red_size[ETC_REF_MAX_RANK];
	int64_t red_stride[ETC_REF_MAX_RANK];
} ref_reduce;

/* `dims` of n entries (n = 0: every dim) reduced; keepdim keeps them as 1. */
int ref_reduce_init(ref_reduce *r, const ref_call *c, const ref_tensor *x, const int64_t *dims,
                    size_t n, bool keepdim);
uint64_t ref_reduce_base(const ref_reduce *r, uint64_t o);
uint64_t ref_reduce_at(const ref_reduce *r, uint64_t k);
void ref_reduce_free(ref_reduce *r);

#endif
