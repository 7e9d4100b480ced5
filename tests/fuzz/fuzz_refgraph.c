/*
 * fuzz_refgraph.c - the reference executor's graph loader and runner: the
 * record is read from the fuzz bytes, its graph loaded in float64 and
 * float32 (program JSON, signature, weights from the nested torch.save
 * archives), then run on zero inputs of the recorded shapes, every node's
 * status and outputs read and the first computed node re-run.
 *
 * Graphs whose recorded tensors are large are loaded but not run: the ops
 * allocate what the graph asks for (up to the reference's own limit), which
 * is not what a fuzzer should spend its memory on.
 *
 * Input: the ETRecord's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"
#include "fuzz_outputs.h"
#include "reference/refgraph_private.h"

#include <etcompare/etcompare.h>
#include <etcompare/reference.h>

#define MAX_NUMEL ((uint64_t)1 << 16)
#define MAX_TOTAL ((uint64_t)1 << 20)

static bool small_enough(const etc_refgraph *g)
{
	uint64_t total = 0;
	for (size_t v = 0; v < g->nvalues; v++) {
		const ref_value *val = &g->values[v];
		uint64_t n = 1;
		if (!val->has_meta)
			return false;
		for (uint32_t d = 0; d < val->meta_rank; d++) {
			if ((uint64_t)val->meta_shape[d] > MAX_NUMEL)
				return false;
			n *= (uint64_t)val->meta_shape[d];
			if (n > MAX_NUMEL)
				return false;
		}
		total += n;
	}
	return total <= MAX_TOTAL;
}

typedef struct state {
	const etc_refgraph *g;
	bool evaluated;
} state;

static int on_node(void *user, const etc_refrun *run, size_t node, etc_error *err)
{
	state *s = user;
	const char *why;
	const etc_refnode *n = etc_refgraph_node(s->g, node);
	int st = etc_refrun_status(run, node, &why);
	fuzz_check_terminal(why, strlen(why));
	for (uint32_t i = 0; i < n->output_count; i++) {
		const etc_reftensor *t = etc_refrun_output(run, node, i);
		size_t es = t ? etc_scalar_type_size(t->dtype) : 0;
		volatile uint8_t last = 0;
		if (t && t->numel && es) /* the last byte is readable */
			last = ((const uint8_t *)t->data)[t->numel * es - 1];
		/* where it lies: the element farthest from element 0 is readable */
		etc_reftensor l;
		int64_t st[ETC_REF_MAX_RANK];
		if (etc_refrun_output_layout(run, node, i, &l, st) >= 0 && l.numel && es) {
			int64_t far = 0;
			for (uint32_t d = 0; d < l.rank; d++)
				far += (l.shape[d] - 1) * st[d];
			last = ((const uint8_t *)l.data)[far * (int64_t)es + (int64_t)es - 1];
			etc_refrun_output_done(run, node, i);
		}
		(void)last;
	}
	const etc_refsrc *srcs;
	size_t ns = etc_refgraph_node_inputs(s->g, node, &srcs);
	for (size_t k = 0; k < ns; k++)
		if (srcs[k].kind == ETC_REFSRC_NODE)
			(void)etc_refrun_output(run, srcs[k].index, srcs[k].output);
	if (st == ETC_REFNODE_COMPUTED && !s->evaluated) {
		etc_refvalues *v = NULL;
		s->evaluated = true;
		if (etc_refrun_eval(run, node, NULL, &v, err) == 0)
			for (size_t i = 0; i < etc_refvalues_count(v); i++)
				(void)etc_refvalues_get(v, i);
		etc_refvalues_free(v);
	}
	return 0;
}

static void run_graph(const etc_etrecord *rec, int dtype)
{
	etc_refgraph_options opt;
	etc_refgraph_options_init(&opt);
	opt.dtype = dtype;
	etc_refgraph *g = NULL;
	etc_error err;
	if (etc_refgraph_load(&g, rec, &opt, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		return;
	}
	(void)etc_refgraph_name(g);
	(void)etc_refgraph_method(g);
	for (size_t i = 0; i < etc_refgraph_output_count(g); i++) {
		size_t node;
		uint32_t out;
		(void)etc_refgraph_output(g, i, &node, &out);
	}
	for (size_t i = 0; i < etc_refgraph_node_count(g); i++)
		(void)etc_refgraph_find(g, etc_refgraph_node(g, i)->name);
	size_t n = etc_refgraph_input_count(g);
	etc_reftensor *in = calloc(n ? n : 1, sizeof *in);
	void **bufs = calloc(n ? n : 1, sizeof *bufs);
	bool ok = in && bufs && small_enough(g);
	for (size_t i = 0; ok && i < n; i++) {
		uint32_t rank;
		const int64_t *shape = etc_refgraph_input_shape(g, i, &rank);
		int dt = etc_refgraph_input_dtype(g, i);
		uint64_t numel = 1;
		for (uint32_t d = 0; d < rank; d++)
			numel *= (uint64_t)shape[d];
		size_t es = etc_scalar_type_size(dt);
		bufs[i] = calloc(numel ? numel : 1, es ? es : 1);
		ok = bufs[i] != NULL && es != 0;
		in[i] = (etc_reftensor){dt, rank, shape, numel, bufs[i]};
	}
	if (ok) {
		state s = {g, false};
		if (etc_refgraph_run(g, in, n, on_node, &s, &err) < 0)
			fuzz_check_terminal(err.message, strlen(err.message));
	}
	etc_refinputs *ri = NULL;
	if (etc_refinputs_from_record(&ri, g, rec, "example_inputs", 0, &err) == 0)
		(void)etc_refinputs_tensors(ri);
	etc_refinputs_free(ri);
	for (size_t i = 0; bufs && i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(in);
	etc_refgraph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_etrecord *rec = NULL;
	if (etc_etrecord_wrap(&rec, copy, size, "fuzz.etrecord", &err) == 0) {
		run_graph(rec, ETC_REF_FLOAT64);
		run_graph(rec, ETC_REF_FLOAT32);
	}
	etc_etrecord_free(rec);
	free(copy);
	return 0;
}
