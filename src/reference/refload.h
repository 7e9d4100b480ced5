/*
 * refload.h - what the graph loader's files (refgraph_load.c,
 * refgraph_choice.c, refgraph_weights.c) share while one graph is loaded.
 */
#ifndef ETC_REFLOAD_H
#define ETC_REFLOAD_H

#include "reference/refgraph_private.h"

#include <jansson.h>

#define REF_EDGE_MEMBER "edge_dialect_exported_program"

/* One entry of the name table: a value's name (or an alias of it). */
typedef struct name_ref {
	const char *name;
	size_t value;
} name_ref;

/* What the signature says of a weight. */
typedef struct weight_spec {
	size_t value;
	const char *kind; /* "parameter", "buffer", "tensor_constant" */
	const char *key;  /* state_dict / constants key */
	bool constants_first;
} weight_spec;

typedef struct ref_loader {
	etc_refgraph *g;
	etc_error *err;
	name_ref *names;
	size_t nnames, cap_names;
	weight_spec *weights;
	size_t nweights;
	const json_t *tensor_values;
} ref_loader;

int ref_load_nomem(etc_error *err);
/* ETC_ERR_FORMAT "FILE: member M: message" for the graph's member. */
int ref_load_error(const ref_loader *L, const char *fmt, ...) ETC_PRINTF(2, 3);
char *ref_load_dup(etc_refgraph *g, const char *s);
/* A new value called `name` (its recorded dtype and shape read), in the name table. */
int ref_load_value(ref_loader *L, const char *name, int kind, size_t index, uint32_t output,
                   size_t *out);
/* The name of a {"name": ...} tensor reference or of an Argument's as_tensor; NULL otherwise. */
const char *ref_load_tensor_name(const json_t *arg);

/* A node that computes (not memory.alloc, not _operator.getitem). */
bool ref_load_is_operator(const char *target);
/* metadata.debug_handle of a node ("18" or 18), or -1. */
int64_t ref_load_handle(const json_t *node);
/* Picks the program (refgraph_choice.c): g->method, g->member, g->name, its JSON. */
int ref_load_choose(etc_refgraph *g, const etc_refgraph_options *opt, json_t **root,
                    etc_error *err);

/* The signature's inputs as values (refgraph_weights.c). */
int ref_load_signature(ref_loader *L, const json_t *gm, const json_t *graph);
/* Every weight read, checked and, when a node reads it, converted. */
/* Converts the weights, folding (ref_load_fold) those that only weight-only
 * nodes read before converting the others. */
int ref_load_weights(ref_loader *L);
/* Computes the nodes that read only weights (or such nodes' outputs) once,
 * keeping their outputs in the graph; frees the weights that only they read.
 * A node whose computation fails is left to the run, which reports it. */
int ref_load_fold(ref_loader *L);

#endif
