/*
 * edge_program.h - extraction of graph nodes from the serialized Edge
 * program JSON of an ETRecord, streaming (see jsonscan.h for why).
 */
#ifndef ETC_EDGE_PROGRAM_H
#define ETC_EDGE_PROGRAM_H

#include "etcompare/etrecord.h"
#include "core/internal.h"

/*
 * Reads graph_module.graph.nodes[] of the JSON text: name (or the first
 * output's name), target, short op, rendered inputs and the metadata
 * strings. Node strings live in `a`; module frames and source lines are
 * left for the caller. `base` is the text's offset in `file` (-1 if none).
 */
int etc_edge_program_parse(etc_arena *a, const char *data, size_t size, const char *file,
                           const char *member, int64_t base, etc_graph_node **nodes, size_t *count,
                           etc_error *err);

#endif
