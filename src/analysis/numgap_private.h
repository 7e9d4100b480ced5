/*
 * numgap_private.h - the grouping core of the numeric gap, exposed to the
 * unit tests and the benchmark: connected components of items that share
 * debug handles.
 */
#ifndef ETC_NUMGAP_PRIVATE_H
#define ETC_NUMGAP_PRIVATE_H

#include "etcompare/common.h"
#include "etcompare/etrecord.h"
#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An item's key: `count` debug handles at `handles` (any order, repeats allowed). */
typedef struct etc_ng_key {
	const int64_t *handles;
	uint32_t count;
} etc_ng_key;

/*
 * Writes comp[i], the component of item i, for `n` items: items sharing a
 * handle, directly or through others, get the same component. Components
 * are numbered 0.. in order of their first item; *ncomp gets their number.
 * An item without handles is a component of its own. Sorts the (handle,
 * item) pairs and runs a union-find over the items: O(h log h) for h
 * handles in all. Returns 0 or ETC_ERR_NOMEM.
 */
int etc_numgap_components_(const etc_ng_key *keys, size_t n, uint32_t *comp, size_t *ncomp,
                           etc_error *err);

/* --- the graph of one ETRecord method (numgap_graph.c) ---------------------- */

/* Node indexes by name and the producer/user edges of tensor arguments. */
/* A name that gives a node of the graph: its own or one of its outputs'
 * (a tuple's items "getitem", "getitem_1" name the node returning it). */
typedef struct etc_ng_name {
	const char *name;
	uint32_t node;
	uint32_t output; /* the output it names, ETC_NG_WHOLE for the node's own name */
} etc_ng_name;

/* An edge or name that stands for a node's every output. */
#define ETC_NG_WHOLE UINT32_MAX

typedef struct etc_ng_graph {
	const etc_etrecord *rec;
	size_t method, n;
	const etc_graph_node *nodes; /* etc_etrecord_node(rec, method, 0) */
	etc_ng_name *by_name;        /* node and output names, sorted */
	size_t names;
	uint32_t *in_start, *in;   /* producers of node i: in[in_start[i] .. in_start[i+1]) */
	uint32_t *in_output;       /* per producer edge: the producer's output it reads
	                              (a tuple item such as getitem_1), or ETC_NG_WHOLE */
	uint32_t *out_base;        /* node i's outputs are out_base[i] .. out_base[i+1] */
	uint32_t *out_start, *out; /* users of node i */
} etc_ng_graph;

/* Builds the index (0 or ETC_ERR_NOMEM); an empty graph when rec is NULL. */
int etc_ng_graph_init_(etc_ng_graph *g, const etc_etrecord *rec, int method, etc_error *err);
void etc_ng_graph_free_(etc_ng_graph *g);
/* Index of the node named `name` (len bytes), or of the node one of whose
 * outputs has that name, or -1. */
long etc_ng_graph_find_(const etc_ng_graph *g, const char *name, size_t len);
/* Index of a node pointer of this graph, or -1. */
long etc_ng_graph_index_(const etc_ng_graph *g, const etc_graph_node *nd);

/*
 * The SNR drop of every node: eff[i] is the SNR node i hands on: its own
 * when compared (snr[i] not NaN), else the lowest of what its producer
 * edges hand on (etc_ng_graph_edge_snr_; +inf without producers: graph
 * inputs, constants). Filled in graph order. `snr_out` (NULL, or one entry
 * per node output, out_base order, NaN where not compared) holds the SNR of
 * each output of a node with several (layer_norm's out, mean and rstd).
 */
int etc_ng_graph_effective_snr_(const etc_ng_graph *g, const double *snr, const double *snr_out,
                                double *eff, etc_error *err);
/* What producer edge k hands on: the SNR of the output it reads when that
 * output was compared on its own, else eff of its producer. */
double etc_ng_graph_edge_snr_(const etc_ng_graph *g, uint32_t k, const double *snr_out,
                              const double *eff);

/* The base name of an op ("aten.mul.Scalar" -> "mul") into buf. */
void etc_ng_op_base_(const char *op, char *buf, size_t cap);

/* --- quantization parameters (numgap_quant.c) ------------------------------------ */

typedef struct etc_ng_qparams {
	uint32_t channels; /* 1 per tensor */
	int64_t axis;      /* -1 per tensor */
	double *scale, *zero_point;
	const char *source; /* what to say in the row */
} etc_ng_qparams;

typedef struct etc_ng_qentry {
	int64_t *handles; /* ascending */
	uint32_t nh;
	etc_ng_qparams q;
} etc_ng_qentry;

typedef struct etc_ng_qfile {
	const char *path;
	etc_ng_qentry *e;
	size_t n;
} etc_ng_qfile;

/* Reads a --quant-params JSON file into `a` (ETC_ERR_IO, ETC_ERR_FORMAT naming the key). */
int etc_ng_qfile_load_(etc_ng_qfile *f, etc_arena *a, const char *path, etc_error *err);
/* The entry keyed by exactly these handles, or NULL; its index, or -1. */
const etc_ng_qparams *etc_ng_qfile_find_(const etc_ng_qfile *f, const int64_t *h, size_t n);
long etc_ng_qfile_index_(const etc_ng_qfile *f, const int64_t *h, size_t n);
/*
 * Parameters from the graph: node `nd` or its single user is a quantize or
 * dequantize op with literal scale and zero point. 1 found (in `a`), 0 not;
 * `why` says what was missing when a quantization node was found but its
 * parameters were not literals.
 */
int etc_ng_qgraph_find_(const etc_ng_graph *g, long node, etc_arena *a, etc_ng_qparams *out,
                        char *why, size_t cap);

#endif
