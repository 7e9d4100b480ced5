/*
 * test_refgraph.c - the reference executor's public API on the real cnn
 * export (tests/data/realexport/cnn.etrecord): what the loaded graph says of
 * itself, the streaming run (values freed after their last consumer),
 * etc_refrun_eval with converted and mismatched replacements, the inputs
 * from the record and a torch.save, and the options.
 */
#include "check.h"

#include "etcompare/reference.h"
#include "reference/refargs.h"

#include <stdlib.h>

static char rec_path[1024];

static void init_path(void)
{
	const char *src = getenv("ETC_SRC");
	if (src && *src) {
		snprintf(rec_path, sizeof rec_path, "%s/tests/data/realexport/cnn.etrecord", src);
		return;
	}
	const char *f = __FILE__, *cut = strstr(f, "tests/unit/");
	snprintf(rec_path, sizeof rec_path, "%.*stests/data/realexport/cnn.etrecord",
	         cut ? (int)(cut - f) : 0, f);
}

static etc_etrecord *open_rec(void)
{
	etc_etrecord *rec = NULL;
	etc_error err;
	if (etc_etrecord_open(&rec, rec_path, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		exit(1);
	}
	return rec;
}

static void test_describe(void)
{
	etc_etrecord *rec = open_rec();
	etc_refgraph *g = NULL;
	etc_error err;
	CHECK(etc_refgraph_load(&g, rec, NULL, &err) == 0);
	if (!g)
		return;
	CHECK_STR(etc_refgraph_name(g), "edge_dialect_exported_program");
	CHECK_STR(etc_refgraph_method(g), "forward");
	CHECK(etc_refgraph_dtype(g) == ETC_REF_FLOAT64);
	CHECK(etc_refgraph_input_count(g) == 1);
	CHECK_STR(etc_refgraph_input_name(g, 0), "x");
	CHECK(etc_refgraph_input_dtype(g, 0) == ETC_FLOAT);
	uint32_t rank = 0;
	const int64_t *shape = etc_refgraph_input_shape(g, 0, &rank);
	CHECK(rank == 4 && shape && shape[0] == 1 && shape[1] == 3 && shape[2] == 16 &&
	      shape[3] == 16);
	CHECK(etc_refgraph_node_count(g) == 12);
	CHECK(etc_refgraph_output_count(g) == 1);
	size_t node = 0;
	uint32_t out = 9;
	CHECK(etc_refgraph_output(g, 0, &node, &out) == 0);
	CHECK(node == 11 && out == 0);
	CHECK_STR(etc_refgraph_node(g, node)->op, "aten._softmax.default");

	const etc_refnode *conv = etc_refgraph_node(g, 0);
	CHECK_STR(conv->name, "aten_convolution_default");
	CHECK(conv->debug_handle == 18);
	CHECK(conv->supported);
	CHECK(conv->graph_node && strcmp(conv->graph_node->name, conv->name) == 0);
	const etc_refsrc *srcs;
	size_t ns = etc_refgraph_node_inputs(g, 0, &srcs);
	CHECK(ns == 3);
	if (ns == 3) {
		CHECK(srcs[0].kind == ETC_REFSRC_INPUT && srcs[0].index == 0);
		CHECK_STR(srcs[0].name, "x");
		CHECK(srcs[1].kind == ETC_REFSRC_CONSTANT);
		CHECK_STR(srcs[1].name, "p_conv1_weight");
	}
	const etc_refnode *bn = etc_refgraph_node(g, 1);
	CHECK(bn->output_count == 3);
	CHECK_STR(bn->name, "getitem");
	CHECK_STR(bn->output_names[1],
	          "aten__native_batch_norm_legit_no_training_default_unused_1");
	CHECK(etc_refgraph_find(g, "getitem_3") == 7);
	CHECK(etc_refgraph_find(g, "aten__native_batch_norm_legit_no_training_default_unused_2") ==
	      1);
	CHECK(etc_refgraph_find(g, "no_such_value") == -1);
	/* the FX names of tuple nodes, which the serializer keeps only in unread items */
	CHECK(etc_refgraph_find(g, "aten__native_batch_norm_legit_no_training_default") == 1);
	CHECK(etc_refgraph_find(g, "aten_max_pool2d_with_indices_default_1") == 7);
	CHECK(etc_refgraph_find(g, "aten_max_pool2d_with_indices") == -1);
	/* the relu reads the batch norm's output 0 */
	ns = etc_refgraph_node_inputs(g, 2, &srcs);
	CHECK(ns == 1 && srcs[0].kind == ETC_REFSRC_NODE && srcs[0].index == 1 &&
	      srcs[0].output == 0);
	etc_refgraph_free(g);
	etc_etrecord_free(rec);
}

typedef struct probe {
	const etc_refgraph *g;
	size_t calls;
	int conv_eval, bad_shape, not_current, freed, alive, future, float_dtype;
	int layouts, layout_bad, same_dtype_eval;
	size_t stop_at;
	double conv0;
	const etc_reftensor *x32, *x64;
} probe;

/* etc_refrun_output_layout of a dense output: o's own view, row-major strides. */
static bool dense_layout(const etc_refrun *run, size_t node, const etc_reftensor *o)
{
	etc_reftensor l;
	int64_t st[ETC_REF_MAX_RANK];
	if (etc_refrun_output_layout(run, node, 0, &l, st) != 0)
		return false;
	bool ok =
	    l.data == o->data && l.dtype == o->dtype && l.rank == o->rank && l.numel == o->numel;
	int64_t want = 1;
	for (uint32_t d = o->rank; ok && d-- > 0;) {
		ok = l.shape[d] == o->shape[d] && st[d] == want;
		want *= o->shape[d];
	}
	etc_refrun_output_done(run, node, 0); /* nothing to give back: a no-op */
	return ok && o->data == etc_refrun_output(run, node, 0)->data;
}

static int on_node(void *user, const etc_refrun *run, size_t node, etc_error *err)
{
	probe *p = user;
	p->calls++;
	const char *why = NULL;
	if (etc_refrun_status(run, node, &why) != ETC_REFNODE_COMPUTED || !why || why[0])
		return -1;
	const etc_reftensor *o = etc_refrun_output(run, node, 0);
	if (!o)
		return -1;
	p->float_dtype = o->dtype;
	p->future = etc_refrun_output(run, node + 1, 0) == NULL;
	p->layouts += dense_layout(run, node, o);
	etc_reftensor none;
	int64_t st[ETC_REF_MAX_RANK];
	none.data = o;
	/* a later node's output, one past the outputs, no strides: refused, zeroed */
	p->layout_bad += etc_refrun_output_layout(run, node + 1, 0, &none, st) == ETC_ERR_USAGE &&
	                 none.data == NULL &&
	                 etc_refrun_output_layout(run, node, 9, &none, st) == ETC_ERR_USAGE &&
	                 etc_refrun_output_layout(run, node, 0, &none, NULL) == ETC_ERR_USAGE;
	if (node == 0 && p->x32) {
		/* the input x as float32 (exact), through a replacement: the same values */
		const etc_reftensor *repl[3] = {p->x32, NULL, NULL};
		etc_refvalues *v = NULL;
		p->conv_eval = etc_refrun_eval(run, node, repl, &v, err) == 0 &&
		               etc_refvalues_count(v) == 1 &&
		               etc_refvalues_get(v, 0)->dtype == o->dtype &&
		               etc_refvalues_get(v, 0)->numel == o->numel &&
		               memcmp(etc_refvalues_get(v, 0)->data, o->data, o->numel * 8) == 0;
		etc_refvalues_free(v);
		/* float64 already: read where it lies (ref_tensor_take), the same bits */
		repl[0] = p->x64;
		p->same_dtype_eval =
		    etc_refrun_eval(run, node, repl, &v, err) == 0 && etc_refvalues_count(v) == 1 &&
		    memcmp(etc_refvalues_get(v, 0)->data, o->data, o->numel * 8) == 0;
		etc_refvalues_free(v);
		int64_t bad[4] = {1, 3, 16, 15};
		etc_reftensor rb = *p->x32;
		rb.shape = bad;
		rb.numel = 3 * 16 * 15;
		repl[0] = &rb;
		p->bad_shape = etc_refrun_eval(run, node, repl, &v, err) == ETC_ERR_MISMATCH &&
		               v == NULL && strstr(err->message, "[1, 3, 16, 15]") != NULL;
		p->not_current = etc_refrun_eval(run, 1, NULL, &v, err) == ETC_ERR_USAGE;
	}
	if (node == 0)
		p->conv0 = ((const double *)o->data)[0];
	if (node == 2) {
		/* the relu: its producer (the batch norm) is alive, the conv before it freed */
		p->alive = etc_refrun_output(run, 1, 0) != NULL;
		p->freed = etc_refrun_output(run, 0, 0) == NULL;
	}
	if (p->stop_at && node == p->stop_at) {
		snprintf(err->message, sizeof err->message, "stopped");
		return ETC_ERR_MISMATCH;
	}
	return 0;
}

static void test_run(void)
{
	etc_etrecord *rec = open_rec();
	etc_refgraph *g = NULL;
	etc_refinputs *in = NULL;
	etc_error err;
	CHECK(etc_refgraph_load(&g, rec, NULL, &err) == 0);
	CHECK(etc_refinputs_from_record(&in, g, rec, "example_inputs", 0, &err) == 0);
	if (!g || !in)
		return;
	CHECK(etc_refinputs_count(in) == 1);
	CHECK(etc_refinputs_tensors(in)[0].dtype == ETC_DOUBLE);
	const etc_reftensor *x = &etc_refinputs_tensors(in)[0];
	float *f = malloc(x->numel * sizeof *f);
	for (uint64_t i = 0; f && i < x->numel; i++)
		f[i] = (float)((const double *)x->data)[i];
	etc_reftensor x32 = {ETC_FLOAT, x->rank, x->shape, x->numel, f};
	probe p = {.g = g, .x32 = f ? &x32 : NULL, .x64 = x};
	CHECK(etc_refgraph_run(g, etc_refinputs_tensors(in), 1, on_node, &p, &err) == 0);
	free(f);
	CHECK(p.calls == 12);
	CHECK(p.conv_eval);
	CHECK(p.bad_shape);
	CHECK(p.not_current);
	CHECK(p.alive);
	CHECK(p.freed);
	CHECK(p.future);
	CHECK(p.float_dtype == ETC_DOUBLE);
	CHECK(p.layouts == 12);
	CHECK(p.layout_bad == 12);
	CHECK(p.same_dtype_eval);

	/* a negative return stops the run with that status */
	probe q = {.g = g, .stop_at = 3};
	CHECK(etc_refgraph_run(g, etc_refinputs_tensors(in), 1, on_node, &q, &err) ==
	      ETC_ERR_MISMATCH);
	CHECK(q.calls == 4);
	/* the same values on a second run of the same graph */
	CHECK_DOUBLE_EXACT(q.conv0, p.conv0);

	/* wrong count */
	CHECK(etc_refgraph_run(g, etc_refinputs_tensors(in), 0, on_node, &q, &err) ==
	      ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "takes 1 inputs, 0 were given") != NULL);

	/* the same inputs through a torch.save */
	etc_torchsave *ts = NULL;
	etc_refinputs *in2 = NULL;
	CHECK(etc_etrecord_torchsave(rec, "edge_dialect_exported_program_example_inputs", &ts,
	                             &err) == 0);
	CHECK(ts && etc_refinputs_from_torchsave(&in2, g, ts, &err) == 0);
	CHECK(in2 && etc_refinputs_tensors(in2)[0].numel == 768 &&
	      memcmp(etc_refinputs_tensors(in2)[0].data, etc_refinputs_tensors(in)[0].data,
	             768 * 8) == 0);
	etc_refinputs_free(in2);
	etc_torchsave_free(ts);

	/* no representative inputs in a v0.5.0 record */
	CHECK(etc_refinputs_from_record(&in2, g, rec, "representative_inputs", 0, &err) ==
	      ETC_ERR_USAGE);
	CHECK(strstr(err.message, "no representative_inputs") != NULL);
	CHECK(etc_refinputs_from_record(&in2, g, rec, "nonsense", 0, &err) == ETC_ERR_USAGE);
	etc_refinputs_free(in);
	etc_refgraph_free(g);
	etc_etrecord_free(rec);
}

static void test_members(void)
{
	etc_etrecord *rec = open_rec();
	etc_error err;
	const void *data = NULL;
	size_t size = 0;
	CHECK(etc_etrecord_has_member(rec, "edge_dialect_exported_program"));
	CHECK(!etc_etrecord_has_member(rec, "exported_program"));
	CHECK(etc_etrecord_member(rec, "debug_handle_map", &data, &size, &err) == 0);
	CHECK(data && size > 10 && memcmp(data, "{", 1) == 0);
	CHECK(etc_etrecord_member(rec, "nope", &data, &size, &err) == ETC_ERR_FORMAT);
	CHECK(data == NULL && size == 0 && strstr(err.message, "no member nope") != NULL);
	etc_torchsave *ts = NULL;
	CHECK(etc_etrecord_torchsave(rec, "edge_dialect_exported_program_state_dict", &ts, &err) ==
	      0);
	CHECK(etc_pyobj_tensor(etc_pyobj_dict_get(etc_torchsave_root(ts), "conv1.weight")) != NULL);
	etc_torchsave_free(ts);
	CHECK(etc_etrecord_torchsave(rec, "nope_state_dict", &ts, &err) == ETC_ERR_FORMAT);
	CHECK(ts == NULL);
	etc_etrecord_free(rec);
}

static void test_options(void)
{
	etc_etrecord *rec = open_rec();
	etc_refgraph *g = NULL;
	etc_error err;
	etc_refgraph_options opt;
	etc_refgraph_options_init(&opt);
	CHECK(opt.graph == NULL && opt.method == NULL && opt.dtype == ETC_REF_FLOAT64);
	opt.dtype = ETC_REF_FLOAT32;
	opt.graph = "edge_dialect_exported_program";
	CHECK(etc_refgraph_load(&g, rec, &opt, &err) == 0);
	if (g) {
		etc_refinputs *in = NULL;
		CHECK(etc_refinputs_from_record(&in, g, rec, "example_inputs", 0, &err) == 0);
		probe p = {.g = g};
		if (in)
			CHECK(etc_refgraph_run(g, etc_refinputs_tensors(in), 1, on_node, &p,
			                       &err) == 0);
		CHECK(p.float_dtype == ETC_FLOAT);
		etc_refinputs_free(in);
		etc_refgraph_free(g);
	}
	opt.graph = "exported_program";
	g = NULL;
	CHECK(etc_refgraph_load(&g, rec, &opt, &err) < 0 && g == NULL);
	opt.graph = NULL;
	opt.method = "backward";
	CHECK(etc_refgraph_load(&g, rec, &opt, &err) == ETC_ERR_UNSUPPORTED);
	CHECK(strstr(err.message, "backward") != NULL);
	opt.method = NULL;
	opt.dtype = 7;
	CHECK(etc_refgraph_load(&g, rec, &opt, &err) == ETC_ERR_USAGE);
	CHECK(etc_refgraph_load(&g, NULL, NULL, &err) == ETC_ERR_USAGE);
	etc_etrecord_free(rec);
}

static void test_json(void)
{
	json_t *j = NULL;
	etc_error err;
	double d = 0;
	const char *t1 = "{\"a\": NaN, \"b\": [Infinity, -Infinity, -2], \"s\": \"NaN Infinity\"}";
	CHECK(ref_json_parse(t1, strlen(t1), NULL, "t1", &j, &err) == 0);
	CHECK(ref_json_number(json_object_get(j, "a"), &d) && isnan(d));
	CHECK(ref_json_number(json_array_get(json_object_get(j, "b"), 0), &d) && isinf(d) && d > 0);
	CHECK(ref_json_number(json_array_get(json_object_get(j, "b"), 1), &d) && isinf(d) && d < 0);
	CHECK(ref_json_number(json_array_get(json_object_get(j, "b"), 2), &d) && d == -2);
	CHECK_STR(json_string_value(json_object_get(j, "s")), "NaN Infinity");
	json_decref(j);

	static const char *const drop[] = {"stack_trace", "strides", "device", NULL};
	const char *t2 = "{\"stack_trace\": {\"x\": [1, \"}]\\\"\"]}, \"keep\": 1,"
	                 " \"strides\" :[1, [2]], \"device\":\"c\\\"pu\", \"k\": {\"device\": 7},"
	                 " \"name\": \"device\", \"z\": NaN}";
	CHECK(ref_json_parse(t2, strlen(t2), drop, "t2", &j, &err) == 0);
	CHECK(json_is_null(json_object_get(j, "stack_trace")));
	CHECK(json_integer_value(json_object_get(j, "keep")) == 1);
	CHECK(json_is_null(json_object_get(j, "strides")));
	CHECK(json_is_null(json_object_get(j, "device")));
	CHECK(
	    json_is_integer(json_object_get(json_object_get(j, "k"), "device"))); /* short: kept */
	CHECK_STR(json_string_value(json_object_get(j, "name")), "device");
	CHECK(ref_json_number(json_object_get(j, "z"), &d) && isnan(d));
	json_decref(j);

	const char *t3 = "{\"strides\": }";
	CHECK(ref_json_parse(t3, strlen(t3), drop, "t3", &j, &err) == ETC_ERR_FORMAT);
	CHECK(strstr(err.message, "t3") && strstr(err.message, "invalid JSON"));
	const char *t4 = "{\"stack_trace\": [1, 2";
	CHECK(ref_json_parse(t4, strlen(t4), drop, "t4", &j, &err) == ETC_ERR_FORMAT);
	const char *t5 = "{\"stack_trace";
	CHECK(ref_json_parse(t5, strlen(t5), drop, "t5", &j, &err) == ETC_ERR_FORMAT);
}

int main(void)
{
	init_path();
	CHECK_GROUP(test_describe);
	CHECK_GROUP(test_run);
	CHECK_GROUP(test_options);
	CHECK_GROUP(test_members);
	CHECK_GROUP(test_json);
	return check_report("test_refgraph");
}
