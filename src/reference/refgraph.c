/*
 * refgraph.c - what a loaded reference graph says of itself: its name,
 * inputs, outputs, nodes and their tensor inputs; the op library's list.
 */
#include "reference/refgraph_private.h"

const char *etc_refgraph_name(const etc_refgraph *g)
{
	return g->name;
}

const char *etc_refgraph_method(const etc_refgraph *g)
{
	return g->method;
}

int etc_refgraph_dtype(const etc_refgraph *g)
{
	return g->dtype;
}

size_t etc_refgraph_input_count(const etc_refgraph *g)
{
	return g->ninputs;
}

const char *etc_refgraph_input_name(const etc_refgraph *g, size_t i)
{
	return i < g->ninputs ? g->values[g->inputs[i]].name : NULL;
}

int etc_refgraph_input_dtype(const etc_refgraph *g, size_t i)
{
	if (i >= g->ninputs)
		return -1;
	return g->values[g->inputs[i]].meta_dtype;
}

const int64_t *etc_refgraph_input_shape(const etc_refgraph *g, size_t i, uint32_t *rank)
{
	if (i >= g->ninputs || !g->values[g->inputs[i]].has_meta) {
		if (rank)
			*rank = 0;
		return NULL;
	}
	const ref_value *v = &g->values[g->inputs[i]];
	if (rank)
		*rank = v->meta_rank;
	return v->meta_shape;
}

size_t etc_refgraph_output_count(const etc_refgraph *g)
{
	return g->noutputs;
}

int etc_refgraph_output(const etc_refgraph *g, size_t i, size_t *node, uint32_t *output)
{
	if (i >= g->noutputs)
		return ETC_ERR_USAGE;
	size_t v = g->outputs[i];
	/* an output that no node computes (an input or a weight passed through) */
	if (v == REF_NO_VALUE || g->values[v].kind != REF_VALUE_NODE)
		return ETC_ERR_UNSUPPORTED;
	if (node)
		*node = g->values[v].index;
	if (output)
		*output = g->values[v].output;
	return 0;
}

size_t etc_refgraph_node_count(const etc_refgraph *g)
{
	return g->nnodes;
}

const etc_refnode *etc_refgraph_node(const etc_refgraph *g, size_t i)
{
	return i < g->nnodes ? &g->nodes[i].pub : NULL;
}

int64_t etc_refgraph_find(const etc_refgraph *g, const char *name)
{
	if (!name)
		return -1;
	for (size_t i = 0; i < g->nnodes; i++)
		if (strcmp(g->nodes[i].pub.name, name) == 0)
			return (int64_t)i;
	for (size_t i = 0; i < g->nnodes; i++)
		for (uint32_t o = 0; o < g->nodes[i].pub.output_count; o++)
			if (strcmp(g->nodes[i].pub.output_names[o], name) == 0)
				return (int64_t)i;
	/* The serializer drops a tuple node's own FX name but names its unread
	 * items after it: "<fx name>_unused_<k>". */
	size_t n = strlen(name);
	for (size_t i = 0; i < g->nnodes; i++)
		for (uint32_t o = 0; o < g->nodes[i].pub.output_count; o++) {
			const char *s = g->nodes[i].pub.output_names[o];
			if (strncmp(s, name, n) != 0 || strncmp(s + n, "_unused_", 8) != 0)
				continue;
			const char *d = s + n + 8;
			while (*d >= '0' && *d <= '9')
				d++;
			if (d > s + n + 8 && !*d)
				return (int64_t)i;
		}
	return -1;
}

size_t etc_refgraph_node_inputs(const etc_refgraph *g, size_t i, const etc_refsrc **srcs)
{
	if (i >= g->nnodes) {
		if (srcs)
			*srcs = NULL;
		return 0;
	}
	if (srcs)
		*srcs = g->nodes[i].srcs;
	return g->nodes[i].nsrcs;
}
