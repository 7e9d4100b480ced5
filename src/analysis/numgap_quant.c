/*
 * numgap_quant.c - the quantization parameters that turn an integer
 * runtime tensor into values comparable with a floating reference: from a
 * --quant-params JSON file keyed by debug handles like the .npz arrays, or
 * from the literal arguments of a quantize/dequantize node of the ETRecord
 * graph (the node of the handle, or its single user).
 */
#include "analysis/numgap_private.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEY_HANDLES 4096

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* "12", "12,13", "(12, 13)", "[12]" -> ascending unique handles; -1 if not such a key. */
static int key_handles(const char *s, int64_t *h, uint32_t *n)
{
	*n = 0;
	const char *p = s;
	if (*p == '(' || *p == '[')
		p++;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9' || *n >= MAX_KEY_HANDLES)
			return -1;
		errno = 0;
		char *end;
		long long v = strtoll(p, &end, 10);
		if (errno)
			return -1;
		h[(*n)++] = v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p != ',')
			break;
		p++;
		while (*p == ' ')
			p++;
		if (*p == ')' || *p == ']')
			break;
	}
	if (*p == ')' || *p == ']')
		p++;
	if (*p)
		return -1;
	qsort(h, *n, sizeof *h, cmp_i64);
	uint32_t k = 0;
	for (uint32_t i = 0; i < *n; i++)
		if (!k || h[i] != h[k - 1])
			h[k++] = h[i];
	*n = k;
	return 0;
}

/* A number or a list of numbers into `a`; -1 when it is neither. */
static int numbers(const json_t *v, etc_arena *a, double **out, uint32_t *n)
{
	if (json_is_number(v)) {
		*out = etc_arena_alloc(a, 1, sizeof **out);
		if (!*out)
			return -2;
		(*out)[0] = json_number_value(v);
		*n = 1;
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > UINT32_MAX)
		return -1;
	size_t m = json_array_size(v);
	*out = etc_arena_alloc(a, m, sizeof **out);
	if (!*out)
		return -2;
	for (size_t i = 0; i < m; i++) {
		const json_t *x = json_array_get(v, i);
		if (!json_is_number(x))
			return -1;
		(*out)[i] = json_number_value(x);
	}
	*n = (uint32_t)m;
	return 0;
}

static int entry(etc_ng_qentry *e, const char *key, const json_t *v, etc_arena *a, const char *path,
                 etc_error *err)
{
	int64_t *h = malloc(MAX_KEY_HANDLES * sizeof *h);
	if (!h)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	uint32_t nh;
	int bad = key_handles(key, h, &nh);
	if (!bad) {
		e->handles = etc_arena_alloc(a, nh, sizeof *h);
		if (e->handles)
			memcpy(e->handles, h, nh * sizeof *h);
		e->nh = nh;
	}
	free(h);
	if (bad)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "key \"%.60s\" is not a debug handle or a list of them (\"12\", "
		                "\"12,13\")",
		                key);
	if (!e->handles)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (!json_is_object(v))
		return etc_fail(
		    err, ETC_ERR_FORMAT, path, -1,
		    "\"%.60s\": expected an object {\"scale\": ..., \"zero_point\": ...}", key);
	/* a misspelt key ("zero_pt") would silently mean a symmetric scheme */
	const char *k;
	const json_t *kv;
	json_object_foreach((json_t *)v, k, kv)
	{
		if (strcmp(k, "scale") && strcmp(k, "zero_point") && strcmp(k, "axis"))
			return etc_fail(err, ETC_ERR_FORMAT, path, -1,
			                "\"%.60s\": unknown key \"%.60s\" (the keys are \"scale\", "
			                "\"zero_point\" and \"axis\")",
			                key, k);
	}
	const json_t *s = json_object_get(v, "scale"), *z = json_object_get(v, "zero_point");
	const json_t *ax = json_object_get(v, "axis");
	uint32_t ns = 0, nz = 0;
	int r;
	if (!s || (r = numbers(s, a, &e->q.scale, &ns)) == -1)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": \"scale\" must be a number or a list of numbers", key);
	if (r == -2)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (!z)
		e->q.zero_point = NULL;
	else if ((r = numbers(z, a, &e->q.zero_point, &nz)) == -1)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": \"zero_point\" must be a number or a list of numbers",
		                key);
	else if (r == -2)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (!z) { /* a symmetric scheme: zero point 0 */
		nz = ns;
		e->q.zero_point = etc_arena_alloc(a, ns, sizeof(double));
		if (!e->q.zero_point)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		memset(e->q.zero_point, 0, ns * sizeof(double));
	}
	if (nz != ns && nz != 1)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": %u scales but %u zero points", key, ns, nz);
	if (nz == 1 && ns > 1) { /* one zero point for every channel */
		double zp = e->q.zero_point[0];
		e->q.zero_point = etc_arena_alloc(a, ns, sizeof(double));
		if (!e->q.zero_point)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		for (uint32_t i = 0; i < ns; i++)
			e->q.zero_point[i] = zp;
	}
	for (uint32_t i = 0; i < ns; i++) {
		if (!isfinite(e->q.scale[i]) || !isfinite(e->q.zero_point[i]))
			return etc_fail(err, ETC_ERR_FORMAT, path, -1,
			                "\"%.60s\": scale and zero_point must be finite", key);
		if (!(e->q.scale[i] > 0))
			return etc_fail(err, ETC_ERR_FORMAT, path, -1,
			                "\"%.60s\": scale %g: a scale must be greater than 0", key,
			                e->q.scale[i]);
		double zp = e->q.zero_point[i];
		if (zp != floor(zp))
			return etc_fail(err, ETC_ERR_FORMAT, path, -1,
			                "\"%.60s\": zero_point %g: a zero point is an integer", key,
			                zp);
		if (fabs(zp) > 2147483647.0)
			return etc_fail(
			    err, ETC_ERR_FORMAT, path, -1,
			    "\"%.60s\": zero_point %g: outside a zero point's int32 range", key,
			    zp);
	}
	e->q.channels = ns;
	e->q.axis = -1;
	if (ax && !json_is_integer(ax))
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": \"axis\" must be an integer", key);
	/* the output's rank is checked where the entry is used (a misfit is then
	   this file's error); here only what no tensor can have */
	if (ax && (json_integer_value(ax) < -64 || json_integer_value(ax) > 63))
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": axis %lld: a tensor has at most 64 dimensions", key,
		                (long long)json_integer_value(ax));
	if (ax)
		e->q.axis = json_integer_value(ax);
	if (ns > 1 && !ax)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1,
		                "\"%.60s\": %u scales (per channel) need \"axis\"", key, ns);
	return 0;
}

int etc_ng_qfile_load_(etc_ng_qfile *f, etc_arena *a, const char *path, etc_error *err)
{
	memset(f, 0, sizeof *f);
	f->path = path;
	/* read as every input is (a FIFO or a directory is refused, not waited on) */
	etc_map m;
	ETC_TRY(etc_map_open(&m, path, err));
	json_error_t je;
	json_t *root = json_loadb((const char *)m.data, m.size, JSON_REJECT_DUPLICATES, &je);
	etc_map_close(&m);
	if (!root)
		return etc_fail(err, ETC_ERR_FORMAT, path, -1, "not JSON: line %d, column %d: %s",
		                je.line, je.column, je.text);
	int rc = 0;
	if (!json_is_object(root)) {
		rc = etc_fail(err, ETC_ERR_FORMAT, path, -1,
		              "expected an object {\"<debug handle>\": {\"scale\": ..., "
		              "\"zero_point\": ...}}");
		goto done;
	}
	f->n = json_object_size(root);
	f->e = etc_arena_alloc(a, f->n ? f->n : 1, sizeof *f->e);
	if (!f->e) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	memset(f->e, 0, (f->n ? f->n : 1) * sizeof *f->e);
	size_t i = 0;
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
	{
		if ((rc = entry(&f->e[i], key, v, a, path, err)) < 0)
			break;
		char src[160];
		const etc_ng_qparams *q = &f->e[i].q;
		if (q->channels == 1)
			snprintf(src, sizeof src,
			         "quant-params %s[\"%.40s\"]: scale %.9g, zero_point %.9g", path,
			         key, q->scale[0], q->zero_point[0]);
		else
			snprintf(src, sizeof src,
			         "quant-params %s[\"%.40s\"]: per channel (%u) along axis %lld",
			         path, key, q->channels, (long long)q->axis);
		f->e[i].q.source = etc_arena_strdup(a, src, strlen(src));
		if (!f->e[i].q.source) {
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
			break;
		}
		i++;
	}
done:
	json_decref(root);
	return rc;
}

long etc_ng_qfile_index_(const etc_ng_qfile *f, const int64_t *h, size_t n)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (f->e[i].nh == n && !memcmp(f->e[i].handles, h, n * sizeof *h))
			return (long)i;
	return -1;
}

const etc_ng_qparams *etc_ng_qfile_find_(const etc_ng_qfile *f, const int64_t *h, size_t n)
{
	long i = etc_ng_qfile_index_(f, h, n);
	return i >= 0 ? &f->e[i].q : NULL;
}

/* --- from the graph -------------------------------------------------------------- */

/* 1 per tensor, 2 per channel, 0 not a quantize/dequantize op. */
static int quant_kind(const char *op)
{
	static const char *const pt[] = {"quantized_decomposed.quantize_per_tensor.default",
	                                 "quantized_decomposed.quantize_per_tensor.tensor",
	                                 "quantized_decomposed.dequantize_per_tensor.default",
	                                 "quantized_decomposed.dequantize_per_tensor.tensor"};
	static const char *const pc[] = {"quantized_decomposed.quantize_per_channel",
	                                 "quantized_decomposed.dequantize_per_channel"};
	for (size_t i = 0; i < 4; i++)
		if (!strcmp(op, pt[i]))
			return 1;
	for (size_t i = 0; i < 2; i++)
		if (!strncmp(op, pc[i], strlen(pc[i])))
			return 2;
	return 0;
}

/* The argument named `name`, else the one at `pos`; NULL when neither. */
static const etc_graph_arg *arg_of(const etc_graph_node *nd, const char *name, uint32_t pos)
{
	for (uint32_t i = 0; i < nd->arg_count; i++)
		if (!strcmp(nd->args[i].name, name))
			return &nd->args[i];
	return pos < nd->arg_count && !*nd->args[pos].name ? &nd->args[pos] : NULL;
}

/* A literal number or list of numbers ("0.5", "[0.5, 0.25]") into `a`. */
static int literal_numbers(const etc_graph_arg *ga, etc_arena *a, double **out, uint32_t *n)
{
	if (strncmp(ga->kind, "as_float", 8) && strncmp(ga->kind, "as_int", 6) &&
	    strncmp(ga->kind, "as_scalar", 9))
		return -1;
	const char *p = ga->value;
	bool list = *p == '[';
	size_t cap = 1;
	for (const char *q = p; *q; q++)
		cap += *q == ',';
	*out = etc_arena_alloc(a, cap, sizeof **out);
	if (!*out)
		return -1;
	*n = 0;
	p += list;
	for (;;) {
		while (*p == ' ')
			p++;
		if (list && *p == ']')
			break;
		char *end;
		errno = 0;
		double v = strtod(p, &end);
		if (end == p || errno || *n >= cap)
			return -1;
		(*out)[(*n)++] = v;
		p = end;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			continue;
		}
		break;
	}
	if (list && *p == ']')
		p++;
	return *p == '\0' && *n > 0 ? 0 : -1;
}

static int from_node(const etc_graph_node *nd, int kind, etc_arena *a, etc_ng_qparams *out,
                     char *why, size_t cap)
{
	const etc_graph_arg *s = arg_of(nd, kind == 1 ? "scale" : "scales", 1);
	const etc_graph_arg *z = arg_of(nd, kind == 1 ? "zero_point" : "zero_points", 2);
	uint32_t ns = 0, nz = 0;
	if (!s || !z || literal_numbers(s, a, &out->scale, &ns) < 0 ||
	    literal_numbers(z, a, &out->zero_point, &nz) < 0 || (nz != ns && nz != 1)) {
		snprintf(why, cap,
		         "needs quantization parameters (--quant-params): the scale and zero "
		         "point of %.40s are not literals",
		         nd->name);
		return 0;
	}
	if (nz == 1 && ns > 1) {
		double zp = out->zero_point[0];
		out->zero_point = etc_arena_alloc(a, ns, sizeof(double));
		if (!out->zero_point)
			return 0;
		for (uint32_t i = 0; i < ns; i++)
			out->zero_point[i] = zp;
	}
	out->channels = ns;
	out->axis = -1;
	if (kind == 2) {
		const etc_graph_arg *ax = arg_of(nd, "axis", 3);
		double *av;
		uint32_t na;
		if (!ax || literal_numbers(ax, a, &av, &na) < 0 || na != 1) {
			snprintf(
			    why, cap,
			    "needs quantization parameters (--quant-params): the axis of %.40s "
			    "is not a literal",
			    nd->name);
			return 0;
		}
		/* range-checked before the conversion: (int64_t)1e300 is undefined */
		if (!(av[0] >= -64 && av[0] <= 64) || av[0] != floor(av[0])) {
			snprintf(why, cap,
			         "needs quantization parameters (--quant-params): the axis %.6g of "
			         "%.40s is not a dimension (an integer from -64 to 64)",
			         av[0], nd->name);
			return 0;
		}
		out->axis = (int64_t)av[0];
	}
	char src[160];
	if (ns == 1)
		snprintf(src, sizeof src, "ETRecord node %.60s: scale %.9g, zero_point %.9g",
		         nd->name, out->scale[0], out->zero_point[0]);
	else
		snprintf(src, sizeof src, "ETRecord node %.60s: per channel (%u) along axis %lld",
		         nd->name, ns, (long long)out->axis);
	out->source = etc_arena_strdup(a, src, strlen(src));
	return out->source != NULL;
}

int etc_ng_qgraph_find_(const etc_ng_graph *g, long node, etc_arena *a, etc_ng_qparams *out,
                        char *why, size_t cap)
{
	if (node < 0 || (size_t)node >= g->n)
		return 0;
	const etc_graph_node *nd = &g->nodes[node];
	int kind = quant_kind(nd->op);
	if (kind)
		return from_node(nd, kind, a, out, why, cap);
	uint32_t nu = g->out_start[node + 1] - g->out_start[node];
	if (nu != 1)
		return 0;
	const etc_graph_node *u = &g->nodes[g->out[g->out_start[node]]];
	kind = quant_kind(u->op);
	return kind ? from_node(u, kind, a, out, why, cap) : 0;
}
