/*
 * refgraph_private.h - the loaded graph shared by the loader
 * (refgraph_load.c), the accessors (refgraph.c), the runner
 * (refgraph_run.c) and the inputs (refinputs.c).
 *
 * Every tensor of the graph is a value: a weight (held by the graph), a
 * user input, or an output of a node. A node's decoded arguments point at
 * the graph's value slots (`slots`); a run keeps its own array of the same
 * size and translates those pointers, so a graph can be run by several
 * runs at once and the arguments are decoded once.
 */
#ifndef ETC_REFGRAPH_PRIVATE_H
#define ETC_REFGRAPH_PRIVATE_H

#include "reference/ref_op.h"

typedef enum ref_value_kind {
	REF_VALUE_WEIGHT = 0, /* parameter, buffer or lifted constant: data in slots[] */
	REF_VALUE_INPUT,      /* user input `index` */
	REF_VALUE_NODE,       /* output `output` of node `index` */
	REF_VALUE_ABSENT      /* an allocation (memory.alloc): never computed */
} ref_value_kind;

typedef struct ref_value {
	const char *name;
	int kind;
	size_t index;
	uint32_t output;
	/* the graph's record (tensor_values) of the value, when it has one */
	bool has_meta;
	int meta_dtype; /* etc_scalar_type, -1 unknown */
	uint32_t meta_rank;
	int64_t meta_shape[ETC_REF_MAX_RANK];
	/* references by node arguments: the run frees the value after the last */
	uint32_t uses;
	/* a weight whose slot is a view of the record's file (as stored) */
	bool mapped;
} ref_value;

typedef struct ref_node {
	etc_refnode pub;
	const ref_op *op; /* NULL: not in the library */
	ref_arg *args;
	size_t nargs;
	etc_refsrc *srcs; /* tensor arguments, flattened in argument order */
	size_t *src_values;
	size_t nsrcs;
	size_t *out_values; /* value of each output; SIZE_MAX for a non-tensor item */
	/* computed once at load from weights alone: its outputs are in slots[]
	   and a run lends them instead of computing the node again */
	bool folded;
} ref_node;

struct etc_refgraph {
	etc_arena arena;
	const etc_etrecord *rec;
	const char *name, *method, *member;
	int dtype;       /* etc_ref_dtype */
	int float_dtype; /* ETC_DOUBLE or ETC_FLOAT */
	ref_value *values;
	ref_tensor *slots; /* one per value; weights hold their data */
	size_t nvalues;
	ref_node *nodes;
	size_t nnodes;
	size_t *inputs; /* value of each user input */
	size_t ninputs;
	size_t *outputs; /* value of each user output */
	size_t noutputs;
};

#define REF_NO_VALUE ((size_t)-1)

/*
 * Checks and converts a user input `t` for input `i` (shape equal to the
 * graph's; floats of any dtype to the reference dtype; ints and bool of the
 * graph's dtype) into `dst`, borrowing `t`'s data when no conversion is
 * needed and `borrow` is set. ETC_ERR_MISMATCH naming input, expected and
 * actual.
 */
int ref_graph_take_input(const etc_refgraph *g, size_t i, const etc_reftensor *t, bool borrow,
                         ref_tensor *dst, etc_error *err);

/*
 * One call of node n's op on its tensor inputs srcs[0..nsrcs) (refgraph_call.c).
 * Weights held as views of the record (ref_value.mapped) and floats held
 * narrower than the reference dtype are copied for the call, widened, and
 * freed after it; an op that only moves values runs narrow and its outputs
 * are widened after. The record's pages the copies read are given back: a
 * large weight's at once, the others' once *unreleased (the bytes read and
 * not yet given back, kept by the caller; NULL: at once) reaches 2 MiB.
 * The outputs are the op's (freed on failure).
 */
int ref_graph_call(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                   ref_tensor *outs, uint64_t *unreleased, etc_error *err);
/* ref_graph_call for the folding at load: a move of one narrow input (the
 * permute of a float32 weight) keeps its outputs narrow, widened by each
 * op that reads them as a weight's are. */
int ref_graph_fold_call(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                        ref_tensor *outs, etc_error *err);
/* t holds floats in a dtype other than the reference's (a weight as stored). */
bool ref_graph_narrow(const etc_refgraph *g, const ref_tensor *t);
/* t's floats in `dtype` (in place when float32 to float64). */
int ref_graph_widen(ref_tensor *t, int dtype, etc_error *err);
/* The op only moves values (view, permute, slice, ...): computed in a
 * narrow float dtype and widened after, it gives the same bits. */
bool ref_op_moves_only(const ref_op *op);
/* The op takes float operands narrower than the reference dtype and
 * widens them itself (the matrix products: a large weight a block at a
 * time). */
bool ref_op_takes_narrow(const ref_op *op);
/* Gives back the record's pages under [p, p + bytes) (no effect elsewhere). */
void ref_graph_release(const etc_refgraph *g, const void *p, uint64_t bytes);
/* Gives back all of the record's pages. */
void ref_graph_release_all(const etc_refgraph *g);
/* A ref_release that gives back the record's pages a transposed view's
 * reader has passed. */
ref_release ref_graph_releaser(const etc_refgraph *g);

#endif
