/*
 * etcompare/reference.h - the reference executor: one method's graph of an
 * ETRecord, run node by node in float64 (or float32) on a run's inputs, so
 * that every intermediate output of a device run has a reference value
 * without PyTorch (upstream Inspector.calculate_numeric_gap's AOT side).
 *
 * Loading (etc_refgraph_load) takes the graph upstream would take (the
 * record's `exported_program` when present and linked to the runtime's
 * debug handles, else the method's Edge program; or the one named by
 * options.graph), its parameters, buffers and lifted constants through the
 * graph signature (inputs_to_parameters, inputs_to_buffers,
 * inputs_to_lifted_tensor_constants) from the `_state_dict` / `_constants`
 * members (held as stored, views of the record where they can be, and
 * widened to the reference dtype for each op that reads them), and checks
 * every node:
 * an op that the library does not have makes the node (and everything that
 * depends on it) "not computed", never a failure of the load.
 *
 * Running (etc_refgraph_run) streams: each node is computed in graph order
 * and handed to a callback; a value is freed once its last consumer and the
 * callback of its node have run. Inside the callback the node's outputs and
 * the values of its tensor inputs are readable, and etc_refrun_eval re-runs
 * the node on other inputs (the runtime's own logged values: the op's
 * local error).
 *
 * Dtypes: floating tensors are held in the reference dtype (ETC_DOUBLE for
 * ETC_REF_FLOAT64, ETC_FLOAT for ETC_REF_FLOAT32) whatever the graph says;
 * integer and bool tensors keep their dtype and are computed exactly.
 * quantized_decomposed ops compute in float32 as their definitions do.
 * One exception: a node folded at load because it only moves one weight's
 * values (a permute_copy of a parameter) keeps the weight's stored dtype,
 * which is exact (docs/reference.md, "Weights").
 *
 * Everything returned by an etc_refgraph lives as long as it; it borrows the
 * etc_etrecord it was loaded from, which must outlive it.
 */
#ifndef ETCOMPARE_REFERENCE_H
#define ETCOMPARE_REFERENCE_H

#include "common.h"
#include "etrecord.h"
#include "npz.h"
#include "torchsave.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The most dimensions a reference tensor may have. */
#define ETC_REF_MAX_RANK 16

/** The arithmetic of floating tensors. */
typedef enum etc_ref_dtype {
	ETC_REF_FLOAT64 = 0, /**< default: every float op in double */
	ETC_REF_FLOAT32 = 1  /**< upstream's float32 AOT values */
} etc_ref_dtype;

/** A dense, contiguous, row-major tensor (a borrowed view). */
typedef struct etc_reftensor {
	int dtype; /**< etc_scalar_type (tensor.h) */
	uint32_t rank;
	const int64_t *shape; /**< `rank` sizes (NULL when rank is 0) */
	uint64_t numel;
	const void *data; /**< numel elements of dtype, native byte order */
} etc_reftensor;

typedef struct etc_refgraph etc_refgraph;

typedef struct etc_refgraph_options {
	/** NULL: upstream's default. Else "exported_program",
	 *  "edge_dialect_exported_program", or a graph_map name such as
	 *  "edge_after_transform/forward" (borrowed). */
	const char *graph;
	const char *method; /**< NULL: the record's default method (borrowed) */
	int dtype;          /**< etc_ref_dtype */
} etc_refgraph_options;

/** Fills `opt` with the defaults (upstream's graph, default method, float64). */
ETC_API void etc_refgraph_options_init(etc_refgraph_options *opt);

/**
 * Loads the graph and its weights. ETC_ERR_FORMAT for a malformed graph or
 * weight (the message names the member, node or weight), ETC_ERR_MISMATCH
 * for a weight whose shape or dtype disagrees with the graph,
 * ETC_ERR_UNSUPPORTED when the record has no graph that can be run.
 */
ETC_API int etc_refgraph_load(etc_refgraph **out, const etc_etrecord *rec,
                              const etc_refgraph_options *opt, etc_error *err);
ETC_API void etc_refgraph_free(etc_refgraph *g);

/** The graph that was loaded, e.g. "edge_dialect_exported_program". */
ETC_API const char *etc_refgraph_name(const etc_refgraph *g);
/** The method it belongs to, e.g. "forward". */
ETC_API const char *etc_refgraph_method(const etc_refgraph *g);
ETC_API int etc_refgraph_dtype(const etc_refgraph *g);

/** The user inputs, in the graph's order: name, dtype and shape. */
ETC_API size_t etc_refgraph_input_count(const etc_refgraph *g);
ETC_API const char *etc_refgraph_input_name(const etc_refgraph *g, size_t i);
ETC_API int etc_refgraph_input_dtype(const etc_refgraph *g, size_t i);
ETC_API const int64_t *etc_refgraph_input_shape(const etc_refgraph *g, size_t i, uint32_t *rank);

/** The user outputs: node and output position of each. */
ETC_API size_t etc_refgraph_output_count(const etc_refgraph *g);
ETC_API int etc_refgraph_output(const etc_refgraph *g, size_t i, size_t *node, uint32_t *output);

/** One call_function node of the graph, in graph (execution) order. */
typedef struct etc_refnode {
	const char *name;     /**< FX node name, e.g. "aten_convolution_default" */
	const char *op;       /**< e.g. "aten.convolution.default" */
	int64_t debug_handle; /**< -1 when it has none */
	uint32_t output_count;
	/** graph names of the outputs ("getitem_3"; "" for an unused item) */
	const char *const *output_names;
	/** the ETRecord's node of the same name (stack trace, module), or NULL */
	const etc_graph_node *graph_node;
	bool supported; /**< the op is in the library */
} etc_refnode;

ETC_API size_t etc_refgraph_node_count(const etc_refgraph *g);
ETC_API const etc_refnode *etc_refgraph_node(const etc_refgraph *g, size_t i);
/** The node named `name` (an FX node name or one of its output names), or -1. */
ETC_API int64_t etc_refgraph_find(const etc_refgraph *g, const char *name);

/** Where a node's tensor input comes from. */
typedef enum etc_refsrc_kind {
	ETC_REFSRC_NODE = 0,    /**< output `output` of node `index` */
	ETC_REFSRC_INPUT = 1,   /**< user input `index` */
	ETC_REFSRC_CONSTANT = 2 /**< a parameter, buffer or lifted constant */
} etc_refsrc_kind;

typedef struct etc_refsrc {
	int kind; /**< etc_refsrc_kind */
	size_t index;
	uint32_t output;
	const char *name; /**< the graph's name of the value */
} etc_refsrc;

/** The tensor inputs of node `i`, in argument order (tensor lists flattened). */
ETC_API size_t etc_refgraph_node_inputs(const etc_refgraph *g, size_t i, const etc_refsrc **srcs);

/* --- running ---------------------------------------------------------------- */

typedef struct etc_refrun etc_refrun;

/** What became of a node. */
typedef enum etc_refnode_status {
	ETC_REFNODE_COMPUTED = 0,
	ETC_REFNODE_UNSUPPORTED = 1, /**< its op is not in the library */
	ETC_REFNODE_SKIPPED = 2,     /**< an input was not computed */
	ETC_REFNODE_FAILED = 3       /**< the op refused its inputs (shape, dtype) */
} etc_refnode_status;

/**
 * Called once per node, in order. Return 0 to go on, a negative status (with
 * `err` filled) to stop the run with it.
 */
typedef int (*etc_refrun_fn)(void *user, const etc_refrun *run, size_t node, etc_error *err);

/**
 * Runs the graph on `inputs` (one per user input, in order; float inputs of
 * any float dtype are converted to the reference dtype). Inputs of the wrong
 * count, shape or dtype fail with ETC_ERR_MISMATCH naming the input, the
 * expected and the actual. A node that fails does not stop the run: it is
 * reported to the callback with its reason.
 */
ETC_API int etc_refgraph_run(const etc_refgraph *g, const etc_reftensor *inputs, size_t n_inputs,
                             etc_refrun_fn fn, void *user, etc_error *err);

/** Inside the callback: what became of `node` and why ("" when computed). */
ETC_API int etc_refrun_status(const etc_refrun *run, size_t node, const char **why);
/**
 * Inside the callback of `node`: output `i` of `node`, or of a node that
 * feeds it (its values are still alive); NULL otherwise or when not computed.
 */
ETC_API const etc_reftensor *etc_refrun_output(const etc_refrun *run, size_t node, uint32_t i);
/**
 * Inside the callback of `node`: output `i` (as for etc_refrun_output) where
 * its values lie, without a copy. `out` gets its dtype, rank, shape and
 * `data`, the address of element 0; element (i_0, ..., i_{rank-1}) is
 * sum(i_k * strides[k]) elements from it (`strides` holds ETC_REF_MAX_RANK
 * entries). Returns 0 for a dense output (row-major strides, `out` as
 * etc_refrun_output gives it); 1 when the run holds it in another order (a
 * large float32 weight's 2-D transpose is held as the record's bytes,
 * possibly misaligned, with strides (1, rows)), where etc_refrun_output
 * would make a dense copy; ETC_ERR_USAGE where etc_refrun_output gives NULL
 * (`out` zeroed).
 */
ETC_API int etc_refrun_output_layout(const etc_refrun *run, size_t node, uint32_t i,
                                     etc_reftensor *out, int64_t *strides);
/**
 * Inside the callback of `node`: the caller is done reading output `i` where
 * etc_refrun_output_layout said it lies. When those are the record's own
 * bytes (layout 1) their pages are given back now; a later node that reads
 * them faults them in again. Otherwise nothing happens.
 */
ETC_API void etc_refrun_output_done(const etc_refrun *run, size_t node, uint32_t i);

/** The outputs of one re-run of a node; release with etc_refvalues_free. */
typedef struct etc_refvalues etc_refvalues;
ETC_API size_t etc_refvalues_count(const etc_refvalues *v);
ETC_API const etc_reftensor *etc_refvalues_get(const etc_refvalues *v, size_t i);
ETC_API void etc_refvalues_free(etc_refvalues *v);

/**
 * Inside the callback of `node`: re-runs it with its tensor inputs
 * replaced (`inputs[k]` for etc_refgraph_node_inputs entry k; NULL keeps the
 * reference's own value). Replacements of any numeric dtype are converted to
 * the dtype the graph gives that input. ETC_ERR_MISMATCH when a replacement's
 * shape differs from the reference value's.
 */
ETC_API int etc_refrun_eval(const etc_refrun *run, size_t node, const etc_reftensor *const *inputs,
                            etc_refvalues **out, etc_error *err);

/* --- inputs ------------------------------------------------------------------ */

/**
 * A set of user inputs read from a file: the record's
 * representative_inputs[index] or `*_example_inputs`, an `.npz` with arrays
 * "0", "1", ... in the graph's input order, or a torch.save list/tuple.
 * Release with etc_refinputs_free.
 */
typedef struct etc_refinputs etc_refinputs;

/** `which`: "representative_inputs" (index = bundled input) or "example_inputs". */
ETC_API int etc_refinputs_from_record(etc_refinputs **out, const etc_refgraph *g,
                                      const etc_etrecord *rec, const char *which, size_t index,
                                      etc_error *err);
ETC_API int etc_refinputs_from_npz(etc_refinputs **out, const etc_refgraph *g, const etc_npz *npz,
                                   etc_error *err);
ETC_API int etc_refinputs_from_torchsave(etc_refinputs **out, const etc_refgraph *g,
                                         const etc_torchsave *ts, etc_error *err);
ETC_API size_t etc_refinputs_count(const etc_refinputs *in);
ETC_API const etc_reftensor *etc_refinputs_tensors(const etc_refinputs *in);
ETC_API void etc_refinputs_free(etc_refinputs *in);

/* --- the op library ------------------------------------------------------------ */

/** The number of ops the library computes, and their names ("aten.add.Tensor"). */
ETC_API size_t etc_reference_op_count(void);
ETC_API const char *etc_reference_op_name(size_t i);
ETC_API bool etc_reference_op_supported(const char *op);

#ifdef __cplusplus
}
#endif
#endif
