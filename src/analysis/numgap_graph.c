/*
 * numgap_graph.c - the ETRecord graph as the numeric gap needs it: nodes by
 * name, the producer and user edges given by tensor arguments, the SNR each
 * node hands on to its users (for each row's SNR drop), and op base names
 * (for checking event names against linked nodes).
 */
#include "analysis/numgap_private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_by_name(const void *a, const void *b)
{
	const etc_ng_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* The by_name entry of `name` (len bytes), or -1. */
static long find_entry(const etc_ng_graph *g, const char *name, size_t len)
{
	size_t lo = 0, hi = g->names;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *m = g->by_name[mid].name;
		int c = strncmp(m, name, len);
		if (c == 0 && m[len] != '\0')
			c = 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the first entry of that name (the lowest node index) */
	if (lo < g->names && !strncmp(g->by_name[lo].name, name, len) &&
	    g->by_name[lo].name[len] == '\0')
		return (long)lo;
	return -1;
}

long etc_ng_graph_find_(const etc_ng_graph *g, const char *name, size_t len)
{
	long e = find_entry(g, name, len);
	return e < 0 ? -1 : (long)g->by_name[e].node;
}

long etc_ng_graph_index_(const etc_ng_graph *g, const etc_graph_node *nd)
{
	if (!g->n || nd < g->nodes || nd >= g->nodes + g->n)
		return -1;
	return (long)(nd - g->nodes);
}

/* The producers of node i (tensor arguments naming a node of g) into out
 * and the output of each that the argument names into out_output (both may
 * be NULL); returns their number. */
static size_t producers(const etc_ng_graph *g, size_t i, uint32_t *out, uint32_t *out_output)
{
	const etc_graph_node *nd = &g->nodes[i];
	size_t k = 0;
	for (uint32_t a = 0; a < nd->arg_count; a++) {
		const etc_graph_arg *ga = &nd->args[a];
		const char *v = ga->value;
		if (!strcmp(ga->kind, "as_tensor")) {
			long e = find_entry(g, v, strlen(v));
			if (e >= 0 && g->by_name[e].node != i) {
				if (out)
					out[k] = g->by_name[e].node;
				if (out_output)
					out_output[k] = g->by_name[e].output;
				k++;
			}
			continue;
		}
		if (strncmp(ga->kind, "as_tensors", 10) && strcmp(ga->kind, "as_optional_tensors"))
			continue;
		/* "[a, b, None]" */
		const char *p = v + (*v == '[');
		while (*p && *p != ']') {
			size_t l = strcspn(p, ",]");
			long e = find_entry(g, p, l);
			if (e >= 0 && g->by_name[e].node != i) {
				if (out)
					out[k] = g->by_name[e].node;
				if (out_output)
					out_output[k] = g->by_name[e].output;
				k++;
			}
			p += l;
			if (*p == ',')
				p++;
			while (*p == ' ')
				p++;
		}
	}
	return k;
}

int etc_ng_graph_init_(etc_ng_graph *g, const etc_etrecord *rec, int method, etc_error *err)
{
	memset(g, 0, sizeof *g);
	if (!rec || method < 0)
		return 0;
	g->rec = rec;
	g->method = (size_t)method;
	g->n = etc_etrecord_node_count(rec, (size_t)method);
	if (!g->n)
		return 0;
	g->nodes = etc_etrecord_node(rec, (size_t)method, 0);
	size_t names = g->n;
	for (size_t i = 0; i < g->n; i++)
		names += g->nodes[i].output_count;
	g->by_name = malloc(names * sizeof *g->by_name);
	g->in_start = calloc(g->n + 1, sizeof *g->in_start);
	g->out_start = calloc(g->n + 1, sizeof *g->out_start);
	g->out_base = calloc(g->n + 1, sizeof *g->out_base);
	if (!g->by_name || !g->in_start || !g->out_start || !g->out_base)
		goto nomem;
	for (size_t i = 0; i < g->n; i++) {
		const etc_graph_node *nd = &g->nodes[i];
		g->out_base[i + 1] = g->out_base[i] + nd->output_count;
		g->by_name[g->names++] = (etc_ng_name){nd->name, (uint32_t)i, ETC_NG_WHOLE};
		for (uint32_t k = 0; k < nd->output_count; k++)
			if (strcmp(nd->outputs[k], nd->name) != 0)
				g->by_name[g->names++] =
				    (etc_ng_name){nd->outputs[k], (uint32_t)i,
				                  nd->output_count > 1 ? k : ETC_NG_WHOLE};
	}
	qsort(g->by_name, g->names, sizeof *g->by_name, cmp_by_name);
	size_t total = 0;
	for (size_t i = 0; i < g->n; i++) {
		g->in_start[i] = (uint32_t)total;
		total += producers(g, i, NULL, NULL);
	}
	g->in_start[g->n] = (uint32_t)total;
	g->in = malloc((total ? total : 1) * sizeof *g->in);
	g->in_output = malloc((total ? total : 1) * sizeof *g->in_output);
	g->out = malloc((total ? total : 1) * sizeof *g->out);
	if (!g->in || !g->in_output || !g->out)
		goto nomem;
	for (size_t i = 0; i < g->n; i++) {
		producers(g, i, g->in + g->in_start[i], g->in_output + g->in_start[i]);
		for (uint32_t k = g->in_start[i]; k < g->in_start[i + 1]; k++)
			g->out_start[g->in[k] + 1]++;
	}
	for (size_t i = 0; i < g->n; i++)
		g->out_start[i + 1] += g->out_start[i];
	uint32_t *fill = calloc(g->n, sizeof *fill);
	if (!fill)
		goto nomem;
	for (size_t i = 0; i < g->n; i++)
		for (uint32_t k = g->in_start[i]; k < g->in_start[i + 1]; k++) {
			uint32_t p = g->in[k];
			g->out[g->out_start[p] + fill[p]++] = (uint32_t)i;
		}
	free(fill);
	return 0;
nomem:
	etc_ng_graph_free_(g);
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
}

void etc_ng_graph_free_(etc_ng_graph *g)
{
	free(g->by_name);
	free(g->in_start);
	free(g->in);
	free(g->in_output);
	free(g->out_base);
	free(g->out_start);
	free(g->out);
	memset(g, 0, sizeof *g);
}

double etc_ng_graph_edge_snr_(const etc_ng_graph *g, uint32_t k, const double *snr_out,
                              const double *eff)
{
	uint32_t p = g->in[k], o = g->in_output[k];
	if (snr_out && o != ETC_NG_WHOLE && o < g->out_base[p + 1] - g->out_base[p] &&
	    !isnan(snr_out[g->out_base[p] + o]))
		return snr_out[g->out_base[p] + o];
	return eff[p];
}

int etc_ng_graph_effective_snr_(const etc_ng_graph *g, const double *snr, const double *snr_out,
                                double *eff, etc_error *err)
{
	(void)err;
	/* FX graphs list producers before their users; a producer listed later
	 * (not in a valid graph) counts as +inf rather than an unset value */
	for (size_t i = 0; i < g->n; i++)
		eff[i] = INFINITY;
	for (size_t i = 0; i < g->n; i++) {
		if (!isnan(snr[i])) {
			eff[i] = snr[i];
			continue;
		}
		double m = INFINITY;
		for (uint32_t k = g->in_start[i]; k < g->in_start[i + 1]; k++) {
			double v =
			    g->in[k] < i ? etc_ng_graph_edge_snr_(g, k, snr_out, eff) : INFINITY;
			if (v < m)
				m = v;
		}
		eff[i] = m;
	}
	return 0;
}

static bool is_overload(const char *s, size_t n)
{
	/* overload names are "default", "out", "Tensor", "Scalar_out", ...: an
	 * upper-case start or one of the lower-case ones */
	if (n && s[0] >= 'A' && s[0] <= 'Z')
		return true;
	return (n == 7 && !strncmp(s, "default", 7)) || (n == 3 && !strncmp(s, "out", 3)) ||
	       (n == 6 && !strncmp(s, "tensor", 6));
}

void etc_ng_op_base_(const char *op, char *buf, size_t cap)
{
	/* "ns.name.overload", "ns.name", "name.overload" or "name" */
	const char *parts[3];
	size_t lens[3], np = 0;
	const char *p = op;
	while (np < 3) {
		size_t l = strcspn(p, ".");
		parts[np] = p;
		lens[np++] = l;
		if (!p[l])
			break;
		p += l + 1;
	}
	size_t pick = 0;
	if (np >= 3)
		pick = 1;
	else if (np == 2)
		pick = is_overload(parts[1], lens[1]) ? 0 : 1;
	size_t l = lens[pick] < cap - 1 ? lens[pick] : cap - 1;
	memcpy(buf, parts[pick], l);
	buf[l] = '\0';
}
