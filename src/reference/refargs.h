/*
 * refargs.h - a node's serialized arguments (torch.export serde JSON, as
 * in an ETRecord's programs and in the op tests' cases) decoded into the
 * ref_args the ops read, and the small JSON helpers around them.
 *
 * An argument is {"name": "alpha", "arg": {<union>}} where the union has one
 * set member (as_tensor, as_ints, as_scalar_type, ...). Records of 2023
 * write every member, the unset ones as null: the set one is the first
 * member that is not null.
 */
#ifndef ETC_REFARGS_H
#define ETC_REFARGS_H

#include "reference/ref_op.h"

#include <jansson.h>

/* Resolves a tensor name to a tensor; NULL when the name is unknown. */
typedef const ref_tensor *(*ref_lookup_fn)(void *user, const char *name);

/* The etc_scalar_type of a serde ScalarType code (schema.py), or -1. */
int ref_serde_dtype(int64_t code);

/*
 * The set member of a serde union object (first member whose value is not
 * null; `as_none` only when nothing else is set). NULL when `u` is not an
 * object or has no set member; *key receives the member's name.
 */
json_t *ref_union_get(const json_t *u, const char **key);

/*
 * Parses JSON text as Python's json module writes it: the bare tokens NaN,
 * Infinity and -Infinity outside strings (which strict JSON, and so jansson,
 * refuses) are read as the strings "NaN", "Infinity", "-Infinity", which
 * ref_json_number accepts. The value of every object member whose key is in
 * `drop` (NULL-terminated; NULL: none) is read as null without being built,
 * which keeps large programs' trees small. `what` names the text in messages.
 */
int ref_json_parse(const char *text, size_t len, const char *const *drop, const char *what,
                   json_t **out, etc_error *err);

/* A JSON number, or one of the strings above, as double; false otherwise. */
bool ref_json_number(const json_t *v, double *out);

/*
 * Decodes the `inputs` array of a node into *n ref_args allocated from
 * `arena` (names and arrays too). Tensor names are resolved with `lookup`;
 * an unknown name or a malformed argument is ETC_ERR_FORMAT naming node,
 * op and argument. Members the ops cannot use (layouts, devices, memory
 * formats, strings lists, symbolic values, graphs) become REF_ARG_OTHER
 * with `s` the member's name and `i` its value when it is an integer, so
 * that only an op that needs them refuses the call.
 */
int ref_args_decode(etc_arena *arena, const json_t *inputs, ref_lookup_fn lookup, void *user,
                    const char *node, const char *op, ref_arg **out, size_t *n, etc_error *err);

#endif
