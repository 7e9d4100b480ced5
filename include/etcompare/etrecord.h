/*
 * etcompare/etrecord.h - the ETRecord: the zip written at export time with
 * the Edge program of each method, the maps from runtime instruction ids to
 * graph debug handles, and the reference outputs (FORMATS.md §4).
 *
 * etc_etrecord_open reads every member it knows (both the current layout,
 * with one `edge_dialect_exported_program/<method>` per method, and the
 * older single-program layout of 2023), extracts the graph nodes into
 * compact structs and releases the parsed JSON. Reference outputs and
 * representative inputs stay zero-copy views into the mapped file.
 * Everything returned lives as long as the etc_etrecord.
 */
#ifndef ETCOMPARE_ETRECORD_H
#define ETCOMPARE_ETRECORD_H

#include "common.h"
#include "torchsave.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bounds on what an ETRecord may ask of the reader (ETC_ERR_LIMIT beyond). */
#define ETC_ETRECORD_MAX_JSON_DEPTH 64 /**< nesting of the JSON members */

typedef struct etc_etrecord etc_etrecord;

/** One module of a node's module hierarchy (nn_module_stack), outermost first. */
typedef struct etc_module_frame {
	const char *key;  /**< the stack's key, e.g. "L__self___conv1" */
	const char *path; /**< module path, e.g. "conv1" ("" for the root) */
	const char *type; /**< module type, e.g. "torch.nn.modules.conv.Conv2d" */
} etc_module_frame;

/**
 * One argument of a graph node as serialized. `kind` is the set member of
 * the argument union ("as_tensor", "as_tensors", "as_float", "as_floats",
 * "as_int", "as_ints", "as_none", ...; "" when the argument is not a union);
 * `value` is its rendering: a tensor's node name, "[a, b]" for tensor lists,
 * a literal as written ("0.5", "[0.5, 0.25]", "-3"). Never NULL.
 */
typedef struct etc_graph_arg {
	const char *name; /**< the argument's name, e.g. "scale" ("" when absent) */
	const char *kind;
	const char *value;
} etc_graph_arg;

/** A node of an Edge program graph. Strings are never NULL ("" when absent). */
typedef struct etc_graph_node {
	/** the name torch's deserializer gives the node: its output's for one
	 *  tensor ("aten_mul_tensor"), else generated from the target
	 *  ("aten_native_layer_norm_default", then "..._1") */
	const char *name;
	const char
	    *target; /**< full target, e.g. "executorch.exir.dialects.edge.ops.aten.mul.Tensor" */
	const char *op;     /**< short operator name the Inspector shows, e.g. "aten.mul.Tensor" */
	const char *inputs; /**< rendered arguments, e.g. "self=arg0_1, other=2" */
	int64_t debug_handle; /**< -1 when the node has none */
	const char *stack_trace;
	const char *source_fn_stack; /**< raw serialized value */
	const char *nn_module_stack; /**< raw serialized value */
	uint32_t module_depth;
	const etc_module_frame *modules; /**< decoded nn_module_stack */
	const char *source_line;         /**< last "File ..., line N" of the stack trace, or "" */
	uint32_t arg_count;              /**< the node's inputs, in order */
	const etc_graph_arg *args;
	/** names of the node's outputs as the program writes them: the node's
	 *  own name for one tensor, "getitem", "getitem_1", ... for the items
	 *  of a tuple or list (the names its users' arguments give) */
	uint32_t output_count;
	const char *const *outputs;
} etc_graph_node;

/** Delegate information of one instruction (a DELEGATE_CALL). */
typedef struct etc_delegate_info {
	const char *backend; /**< "name" of the delegate map entry ("" when absent) */
	/** delegate id -> debug handles; ids are kept as written (int or string keys) */
	size_t id_count;
	const char *const *ids;
	const int64_t *const *handles;
	const size_t *handle_counts;
} etc_delegate_info;

/**
 * Maps and reads the ETRecord at `path`.
 * @return 0, ETC_ERR_IO, ETC_ERR_FORMAT (not a zip, no ETRECORD_V0
 *         identifier, a member of the wrong shape: the message names the
 *         member and the JSON position), ETC_ERR_LIMIT or ETC_ERR_NOMEM
 */
ETC_API int etc_etrecord_open(etc_etrecord **out, const char *path, etc_error *err);
/** The same on `len` bytes at `data` (borrowed: must outlive the record). */
ETC_API int etc_etrecord_wrap(etc_etrecord **out, const void *data, size_t len, const char *name,
                              etc_error *err);
/** Releases `rec`. NULL is a no-op. */
ETC_API void etc_etrecord_free(etc_etrecord *rec);

ETC_API const char *etc_etrecord_name(const etc_etrecord *rec);
/** True for the 2023 layout (a single unnamed program, flat maps). */
ETC_API bool etc_etrecord_is_legacy(const etc_etrecord *rec);
/** export_graph_id, or NULL when absent. */
ETC_API const char *etc_etrecord_export_graph_id(const etc_etrecord *rec);

/**
 * Warnings found while reading (e.g. reference outputs stored in a format
 * etcompare does not read); the record is usable.
 */
ETC_API size_t etc_etrecord_warning_count(const etc_etrecord *rec);
ETC_API const char *etc_etrecord_warning(const etc_etrecord *rec, size_t i);

/** Methods named by an Edge program or by the maps, in member order. */
ETC_API size_t etc_etrecord_method_count(const etc_etrecord *rec);
ETC_API const char *etc_etrecord_method(const etc_etrecord *rec, size_t i);
/** Index of method `name`, or -1. */
ETC_API int etc_etrecord_method_index(const etc_etrecord *rec, const char *name);

/**
 * The method a caller means without naming one: "forward" when it has a
 * program, else the record's only program, else "forward" or the only
 * method named by the maps; -1 when none fits.
 */
ETC_API int etc_etrecord_default_method(const etc_etrecord *rec);

/** True when method `m` has an Edge program (not only map entries). */
ETC_API bool etc_etrecord_has_program(const etc_etrecord *rec, size_t m);

/** Graph names of graph_map entries ("<name>/<method>" members), for --graph. */
ETC_API size_t etc_etrecord_graph_count(const etc_etrecord *rec);
ETC_API const char *etc_etrecord_graph_name(const etc_etrecord *rec, size_t i);

/**
 * The nodes of graph_map program `name` (an etc_etrecord_graph_name), parsed
 * on the first request and kept. Not thread-safe on one record.
 */
ETC_API int etc_etrecord_graph_nodes(etc_etrecord *rec, const char *name,
                                     const etc_graph_node **nodes, size_t *count, etc_error *err);

/** Nodes of the Edge program of method `m`, in graph order. */
ETC_API size_t etc_etrecord_node_count(const etc_etrecord *rec, size_t m);
ETC_API const etc_graph_node *etc_etrecord_node(const etc_etrecord *rec, size_t m, size_t i);
/**
 * The nodes carrying debug handle `handle` in method `m`: *count of them at
 * *nodes (pointers into the node array). Returns *count.
 */
ETC_API size_t etc_etrecord_nodes_for_handle(const etc_etrecord *rec, size_t m, int64_t handle,
                                             const etc_graph_node *const **nodes);

/**
 * debug_handle_map[method][instruction_id]: returns the number of handles
 * and sets *handles, or returns 0 (and *found false) when the map has no
 * entry for the instruction. `found` may be NULL; a NULL `rec` or `handles`
 * returns 0.
 */
ETC_API size_t etc_etrecord_debug_handles(const etc_etrecord *rec, size_t m, int32_t instruction_id,
                                          const int64_t **handles, bool *found);

/** delegate_map[method][instruction_id], or NULL. */
ETC_API const etc_delegate_info *etc_etrecord_delegate(const etc_etrecord *rec, size_t m,
                                                       int32_t instruction_id);

/** instruction_id_to_num_outs_map[method][instruction_id], or -1. */
ETC_API int64_t etc_etrecord_num_outputs(const etc_etrecord *rec, size_t m, int32_t instruction_id);

/** True when the record has any debug_handle_map entry for method `m`. */
ETC_API bool etc_etrecord_has_handle_map(const etc_etrecord *rec, size_t m);

/**
 * The reference outputs archive (method -> [bundled input] -> [outputs]),
 * or NULL when the record has none. Same for representative inputs.
 */
ETC_API const etc_torchsave *etc_etrecord_reference_outputs(const etc_etrecord *rec);
ETC_API const etc_torchsave *etc_etrecord_representative_inputs(const etc_etrecord *rec);
/**
 * Why the record's reference_outputs member, which it has, could not be
 * read (a warning at open); NULL when it was read or is absent. A
 * comparison that needs it then fails as bad input.
 */
ETC_API const char *etc_etrecord_reference_error(const etc_etrecord *rec);

/**
 * reference_outputs[method][index] as a flat list of tensors (a tuple or
 * list of tensors, nested lists flattened in order). Returns 0 and sets
 * *count / fills up to `cap` pointers; ETC_ERR_FORMAT when the archive does
 * not have that shape (the message says what was found instead). A NULL
 * `method` is "forward".
 */
ETC_API int etc_etrecord_reference(const etc_etrecord *rec, const char *method, size_t index,
                                   const etc_pytensor **out, size_t cap, size_t *count,
                                   etc_error *err);

/* --- raw members (the reference executor reads programs and weights) ------- */

/** True when the record's zip has a member called exactly `name`. */
ETC_API bool etc_etrecord_has_member(const etc_etrecord *rec, const char *name);
/**
 * The bytes of member `name` (e.g. "edge_dialect_exported_program"): a view
 * into the mapped file for a stored member, inflated memory owned by the
 * record otherwise; valid as long as the record. ETC_ERR_FORMAT when the
 * member is absent or corrupt (the message names it). Not thread-safe on
 * one record (the first read of a compressed member caches it).
 */
ETC_API int etc_etrecord_member(const etc_etrecord *rec, const char *name, const void **data,
                                size_t *size, etc_error *err);
/**
 * Member `name` read as a torch.save archive (e.g. the program's
 * "<member>_state_dict", "_constants" or "_example_inputs"), sharing the
 * record's inflation budget. Release with etc_torchsave_free; it borrows
 * the record's bytes, so the record must outlive it.
 */
ETC_API int etc_etrecord_torchsave(const etc_etrecord *rec, const char *name, etc_torchsave **out,
                                   etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
