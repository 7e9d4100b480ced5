/*
 * test_api_misuse.c - the public C API called the way a third-party
 * program gets it wrong: options left NULL where the header gives a
 * default, NULL out-parameters. Each call must fail with ETC_ERR_USAGE
 * naming the argument, or take the documented default; never crash. Also
 * what a failed call leaves behind (*out NULL, an inspector's link) and
 * whether the messages keep their reason (long paths, files named).
 * Inputs: tests/data/realexport/cnn.* and mlp.* (real ExecuTorch runs).
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "etcompare/etcompare.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static char root[900];

static const char *data(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%stests/data/realexport/%s", root, name);
	return buf;
}

typedef struct opened {
	etc_etdump *dump;
	etc_debug_buffer *buf;
	etc_etrecord *rec;
	etc_inspector *insp;
} opened;

static int open_cnn(opened *o, etc_error *err)
{
	char p[1024];
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	if (etc_etdump_open(&o->dump, data(p, sizeof p, "cnn.etdp"), err) < 0 ||
	    etc_debug_buffer_open(&o->buf, data(p, sizeof p, "cnn_debug.bin"), err) < 0 ||
	    etc_etrecord_open(&o->rec, data(p, sizeof p, "cnn.etrecord"), err) < 0 ||
	    etc_inspector_create(&o->insp, o->dump, o->buf, &io, err) < 0)
		return -1;
	return etc_inspector_link(o->insp, o->rec, NULL, err);
}

/* open_cnn, checked: false (a failed check) when the files could not be opened */
static bool open_ok(opened *o, etc_error *err)
{
	etc_error_clear(err);
	bool ok = open_cnn(o, err) == 0 && o->insp;
	CHECK(ok);
	return ok;
}

static void close_cnn(opened *o)
{
	etc_inspector_free(o->insp);
	etc_etrecord_free(o->rec);
	etc_debug_buffer_free(o->buf);
	etc_etdump_free(o->dump);
}

/* block and method NULL are "Execute" and "forward" (accuracy.h) */
static void accuracy_null_block(void)
{
	opened o = {0};
	etc_error err;
	if (!open_ok(&o, &err))
		return;
	etc_reference_set set = {.torchsave = etc_etrecord_reference_outputs(o.rec),
	                         .name = etc_etrecord_name(o.rec)};
	etc_accuracy_options ao;
	etc_accuracy_options_init(&ao);
	etc_accuracy *with_defaults = NULL, *with_null = NULL;
	CHECK(etc_accuracy_run(&with_defaults, o.insp, &set, &ao, &err) == 0);
	ao.block = NULL;
	ao.method = NULL;
	CHECK(etc_accuracy_run(&with_null, o.insp, &set, &ao, &err) == 0);
	CHECK(with_defaults && with_null &&
	      etc_accuracy_row_count(with_defaults) == etc_accuracy_row_count(with_null) &&
	      etc_accuracy_row_count(with_null) == 3);
	if (with_null)
		CHECK_STR(etc_accuracy_options_get(with_null)->block, "Execute");
	etc_accuracy_free(with_defaults);
	etc_accuracy_free(with_null);
	close_cnn(&o);
}

/* a NULL count is named, not reported as an index out of range */
static void run_debug_null(void)
{
	opened o = {0};
	etc_error err;
	if (!open_ok(&o, &err))
		return;
	size_t block = 0;
	CHECK(etc_inspector_block_find(o.insp, "Execute", &block) != NULL);
	uint32_t n = 0;
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 0, &n, &err) == 0 && n == 1);
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 0, NULL, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "NULL n") != NULL && !strstr(err.message, "range"));
	CHECK(etc_inspector_run_debug(o.insp, block, 0, 0, NULL, 4, &n, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "NULL out") != NULL);
	CHECK(etc_inspector_run_debug(o.insp, block, 999, 0, NULL, 0, &n, &err) == ETC_ERR_USAGE);
	CHECK(strstr(err.message, "out of range") != NULL);
	close_cnn(&o);
}

/* status ETC_ERR_USAGE and a message naming the function and the argument */
static int usage_names(int rc, const etc_error *err, const char *text)
{
	if (rc != ETC_ERR_USAGE || !strstr(err->message, text)) {
		fprintf(stderr, "  got %d \"%s\", want \"%s\"\n", rc, err->message, text);
		return 0;
	}
	return 1;
}

static int count_calls(void *ctx)
{
	return ++*(int *)ctx;
}

/* The calls that crashed on a NULL argument their header did not forbid. */
static void null_arguments(void)
{
	opened o = {0};
	etc_error err;
	if (!open_ok(&o, &err))
		return;
	char p[1024];
	int kind = -5;
	CHECK(usage_names(etc_sniff_file(NULL, &kind, &err), &err, "etc_sniff_file: NULL path"));
	CHECK(usage_names(etc_sniff_file(data(p, sizeof p, "cnn.etdp"), NULL, &err), &err,
	                  "etc_sniff_file: NULL kind"));
	CHECK(etc_sniff_file(data(p, sizeof p, "cnn.etdp"), &kind, &err) == 0 &&
	      kind == ETC_FILE_ETDUMP);
	CHECK(etc_time_scale_parse("us", NULL) == ETC_ERR_USAGE);
	CHECK(etc_max_inflate_parse("8G", NULL, NULL) == 0); /* checks the spec only */
	CHECK(etc_max_inflate_parse("8Q", NULL, NULL) == ETC_ERR_USAGE);
	char buf[16];
	CHECK_STR(etc_text_escape(buf, sizeof buf, NULL, 5), "");
	CHECK(usage_names(etc_run_guarded(NULL, NULL, &err), &err, "etc_run_guarded: NULL fn"));
	int calls = 0;
	CHECK(etc_run_guarded(count_calls, &calls, &err) == 1 && calls == 1);
	size_t index = 7;
	CHECK(etc_inspector_block_find(o.insp, NULL, &index) == NULL && index == 7);
	CHECK(etc_inspector_block_find(NULL, "Execute", NULL) == NULL);
	size_t count = 9;
	CHECK(etc_inspector_module_total(o.insp, NULL, &count) == 0 && count == 0);
	CHECK(etc_inspector_module_total(o.insp, "conv1", &count) > 0 && count > 0);
	const int64_t *handles = NULL;
	CHECK(etc_etrecord_debug_handles(o.rec, 0, 0, &handles, NULL) > 0 && handles);
	/* a tensor of an intermediate output, with out NULL */
	const etc_value *v = NULL;
	size_t block = 0;
	const etc_event_block *blk = etc_inspector_block_find(o.insp, "Execute", &block);
	for (size_t e = 0; blk && e < blk->event_count && !v; e++)
		if (blk->events[e].debug_count)
			v = &blk->events[e].debug[0];
	CHECK(v != NULL);
	if (v) {
		CHECK(usage_names(etc_value_tensor(v, 0, o.buf, NULL, &err), &err,
		                  "etc_value_tensor: NULL out"));
		etc_tensor t;
		CHECK(usage_names(etc_value_tensor(NULL, 0, o.buf, &t, &err), &err,
		                  "etc_value_tensor: NULL v"));
	}
	etc_agreement *ag = NULL;
	CHECK(etc_agreement_new(2, &ag, &err) == 0);
	float x[2] = {1, 2};
	CHECK(etc_agreement_add_f32(ag, x, 1, 1, &err) == 0);
	CHECK(usage_names(etc_agreement_snr(ag, NULL, &err), &err, "etc_agreement_snr: NULL snr"));
	etc_agreement_free(ag);
	FILE *sink = fopen("/dev/null", "w");
	const etc_etdump *dumps[2] = {o.dump, NULL};
	CHECK(usage_names(etc_trace_write(sink, dumps, 2, NULL, NULL, &err), &err,
	                  "etc_trace_write: NULL dumps[1]"));
	CHECK(usage_names(etc_trace_write(NULL, dumps, 1, NULL, NULL, &err), &err,
	                  "etc_trace_write: NULL out"));
	if (sink)
		fclose(sink);
	CHECK(usage_names(etc_agreement_new(2, NULL, &err), &err, "etc_agreement_new: NULL out"));
	CHECK(usage_names(etc_report_junit_gates(stdout, NULL, &err), &err,
	                  "etc_report_junit_gates: NULL g"));
	etc_taps *taps = (etc_taps *)&err;
	CHECK(usage_names(etc_taps_run(&taps, NULL, NULL, NULL, &err), &err,
	                  "etc_taps_run: NULL acc") &&
	      !taps);
	unsigned mask = 5;
	CHECK(etc_metric_mask_parse(NULL, &mask) == ETC_ERR_USAGE && mask == 0);
	CHECK(etc_metric_mask_parse("snr", NULL) == ETC_ERR_USAGE);
	close_cnn(&o);
}

/* A NULL pointer is named, not reported as a bad size or a missing item. */
static void null_not_range(void)
{
	etc_error err;
	etc_error_clear(&err);
	etc_agreement *ag = NULL;
	CHECK(etc_agreement_new(2, &ag, &err) == 0);
	CHECK(usage_names(etc_agreement_add_f32(ag, NULL, 4, 4, &err), &err,
	                  "etc_agreement_add_f32: NULL block"));
	CHECK(!strstr(err.message, "stride"));
	float x[4] = {1, 2, 3, 4};
	CHECK(usage_names(etc_agreement_add_f32(ag, x, 1, 2, &err), &err, "row stride 1 below"));
	etc_agreement_free(ag);

	etc_output *out = NULL;
	CHECK(usage_names(etc_output_open(NULL, "a.txt", &err), &err, "etc_output_open: NULL out"));
	CHECK(!strstr(err.message, "empty"));
	CHECK(usage_names(etc_output_open(&out, NULL, &err), &err, "etc_output_open: NULL path"));
	CHECK(usage_names(etc_output_open(&out, "", &err), &err, "etc_output_open: empty path"));
	CHECK(usage_names(etc_output_commit(NULL, &err), &err, "etc_output_commit: NULL o"));

	char p[1024];
	etc_bundled *bp = NULL;
	CHECK(etc_bundled_open(&bp, data(p, sizeof p, "cnn.bpte"), &err) == 0);
	if (bp) {
		etc_bundled_value val;
		CHECK(etc_bundled_get(bp, 0, 0, true, 0, &val, &err) == 0);
		CHECK(usage_names(etc_bundled_get(bp, 0, 0, true, 0, NULL, &err), &err,
		                  "etc_bundled_get: NULL out"));
		CHECK(!strstr(err.message, "no expected output"));
		CHECK(usage_names(etc_bundled_get(bp, 0, 0, true, 99, &val, &err), &err,
		                  "no expected output 99"));
	}
	etc_bundled_free(bp);

	etc_plot_box box = {0};
	CHECK(usage_names(etc_plot_boxes(NULL, "b", "t", "y", 1, NULL, NULL, NULL, &err), &err,
	                  "etc_plot_boxes: NULL bx"));
	CHECK(usage_names(etc_plot_boxes(NULL, "b", "t", "y", 0, NULL, &box, NULL, &err), &err,
	                  "etc_plot_boxes: nothing to plot"));
}

/* The shape of the example in docs/internals.md ("The library"). */
static int doc_example(const char *etdp, const char *bin, FILE *out, etc_error *err)
{
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	int rc = etc_etdump_open(&dump, etdp, err);
	if (rc == 0)
		rc = etc_debug_buffer_open(&buf, bin, err);
	if (rc == 0)
		rc = etc_inspector_create(&insp, dump, buf, NULL, err);
	if (rc == 0)
		rc = etc_report_table(out, insp, NULL, err);
	etc_inspector_free(insp);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	return rc;
}

/* A failed constructor leaves *out NULL; reports refuse a NULL inspector. */
static void out_null_on_failure(void)
{
	etc_error err;
	etc_error_clear(&err);
	char p[1024], q[1024];
	void *const junk = (void *)&err; /* not NULL, not a valid object */
	etc_etdump *dump = junk;
	CHECK(etc_etdump_open(&dump, "/nonexistent/run.etdp", &err) == ETC_ERR_IO && !dump);
	dump = junk;
	CHECK(etc_etdump_wrap(&dump, "garbage!", 8, "g", &err) < 0 && !dump);
	etc_debug_buffer *buf = junk;
	CHECK(etc_debug_buffer_open(&buf, "/nonexistent/debug.bin", &err) == ETC_ERR_IO && !buf);
	etc_etrecord *rec = junk;
	CHECK(etc_etrecord_open(&rec, "/nonexistent/x.etrecord", &err) == ETC_ERR_IO && !rec);
	rec = junk;
	CHECK(etc_etrecord_wrap(&rec, "garbage!", 8, "g", &err) < 0 && !rec);
	etc_torchsave *ts = junk;
	CHECK(etc_torchsave_wrap(&ts, "garbage!", 8, "g", &err) < 0 && !ts);
	etc_legacy_profile *lp = junk;
	CHECK(etc_legacy_profile_open(&lp, "/nonexistent/p.bin", &err) < 0 && !lp);
	etc_inspector *insp = junk;
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	io.source_time_scale = 99;
	CHECK(etc_etdump_open(&dump, data(p, sizeof p, "cnn.etdp"), &err) == 0);
	CHECK(etc_inspector_create(&insp, dump, NULL, &io, &err) == ETC_ERR_USAGE && !insp);
	etc_profile *prof = junk;
	CHECK(etc_profile_create(&prof, NULL, &err) == ETC_ERR_USAGE && !prof);
	/* the numeric gap of a block the ETDump does not have */
	CHECK(etc_inspector_create(&insp, dump, NULL, NULL, &err) == 0);
	etc_numgap *ng = junk;
	etc_numgap_options no;
	etc_numgap_options_init(&no);
	no.block = "NoSuchBlock";
	etc_numgap_reference nref = {.insp = insp};
	CHECK(etc_numgap_run(&ng, insp, &nref, &no, &err) == ETC_ERR_USAGE && !ng);
	etc_inspector_free(insp);
	CHECK(usage_names(etc_numgap_dist_compute(NULL, NULL, NULL, 1, &err), &err,
	                  "etc_numgap_dist_compute: NULL out"));
	CHECK(usage_names(etc_refinputs_from_npz(NULL, NULL, NULL, &err), &err,
	                  "etc_refinputs_from_npz: NULL out"));
	CHECK(usage_names(etc_refinputs_from_record(NULL, NULL, NULL, "example_inputs", 0, &err),
	                  &err, "etc_refinputs_from_record: NULL out"));
	etc_etdump_free(dump);

	CHECK(usage_names(etc_report_table(stdout, NULL, NULL, &err), &err,
	                  "etc_report_table: NULL insp"));
	CHECK(usage_names(etc_report_tsv(stdout, NULL, NULL, &err), &err,
	                  "etc_report_tsv: NULL insp"));
	CHECK(usage_names(etc_report_json(stdout, NULL, NULL, &err), &err,
	                  "etc_report_json: NULL insp"));
	CHECK(usage_names(etc_report_outputs(stdout, NULL, NULL, &err), &err,
	                  "etc_report_outputs: NULL insp"));

	/* the documented example: a missing debug buffer is reported, nothing crashes */
	FILE *sink = fopen("/dev/null", "w");
	CHECK(sink != NULL);
	if (!sink)
		return;
	CHECK(doc_example(data(p, sizeof p, "cnn.etdp"), data(q, sizeof q, "cnn_debug.bin"), sink,
	                  &err) == 0);
	CHECK(doc_example(data(p, sizeof p, "cnn.etdp"), "/nonexistent/debug.bin", sink, &err) ==
	      ETC_ERR_IO);
	CHECK(strstr(err.message, "/nonexistent/debug.bin: cannot open") != NULL);
	fclose(sink);
}

/* The zip member `name` of `z` (stored, as ETRecords are) rewritten in place
 * with `text` padded by spaces to the same length, CRCs updated. */
static int rewrite_member(unsigned char *z, size_t n, const char *name, const char *text)
{
	size_t len = strlen(name), done = 0;
	for (size_t at = 46; at + len <= n; at++) {
		if (memcmp(z + at, name, len) != 0)
			continue;
		unsigned char *c = z + at - 46, *l = z + at - 30;
		if (memcmp(c, "PK\1\2", 4) == 0 && c[28] == len && c[29] == 0) {
			uint32_t off = c[42] | c[43] << 8 | c[44] << 16 | (uint32_t)c[45] << 24;
			uint32_t size = c[24] | c[25] << 8 | c[26] << 16 | (uint32_t)c[27] << 24;
			unsigned char *h = z + off;
			size_t data_at = off + 30 + h[26] + (h[27] << 8) + h[28] + (h[29] << 8);
			if (strlen(text) > size || data_at + size > n)
				return -1;
			memset(z + data_at, ' ', size);
			memcpy(z + data_at, text, strlen(text));
			uLong crc = crc32(0L, z + data_at, (uInt)size);
			for (int k = 0; k < 4; k++)
				c[16 + k] = h[14 + k] = (unsigned char)(crc >> (8 * k));
			done++;
		}
		(void)l;
	}
	return done == 1 ? 0 : -1;
}

static unsigned char *read_whole(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = size > 0 ? malloc((size_t)size) : NULL;
	if (b && fread(b, 1, (size_t)size, f) != (size_t)size) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*n = b ? (size_t)size : 0;
	return b;
}

/* A failed etc_inspector_link leaves the previous link as it was. */
static void relink_fails(void)
{
	opened o = {0};
	etc_error err;
	if (!open_ok(&o, &err))
		return;
	char p[1024];
	size_t n = 0;
	unsigned char *z = read_whole(data(p, sizeof p, "cnn.etrecord"), &n);
	CHECK(z && rewrite_member(z, n, "debug_handle_map",
	                          "{\"forward\": {\"900\": 18, \"901\": 19}}") == 0);
	etc_etrecord *other = NULL;
	CHECK(z && etc_etrecord_wrap(&other, z, n, "cnn_badmap.etrecord", &err) == 0);
	double before = etc_inspector_module_total(o.insp, "conv1", NULL);
	size_t block = 0;
	const etc_event_block *blk = etc_inspector_block_find(o.insp, "Execute", &block);
	uint32_t nodes_before = 0;
	for (size_t e = 0; blk && e < blk->event_count; e++)
		nodes_before += blk->events[e].node_count;
	CHECK(before > 0 && nodes_before > 0);
	if (other) {
		CHECK(etc_inspector_link(o.insp, other, NULL, &err) == ETC_ERR_MISMATCH);
		CHECK(strstr(err.message, "does not belong to this ETDump") != NULL);
	}
	CHECK(etc_inspector_etrecord(o.insp) == o.rec);
	CHECK(etc_inspector_etrecord_method(o.insp) &&
	      strcmp(etc_inspector_etrecord_method(o.insp), "forward") == 0);
	uint32_t nodes_after = 0;
	for (size_t e = 0; blk && e < blk->event_count; e++)
		nodes_after += blk->events[e].node_count;
	CHECK(nodes_after == nodes_before);
	CHECK_DOUBLE_EXACT(etc_inspector_module_total(o.insp, "conv1", NULL), before);
	CHECK(etc_check_etrecord(o.insp, "--etrecord", &err) == 0);
	etc_etrecord_free(other);
	free(z);
	close_cnn(&o);
}

/* No "(null)": a NULL string is refused by name or replaced by a default. */
static void null_strings(void)
{
	opened o = {0};
	etc_error err;
	if (!open_ok(&o, &err))
		return;
	char p[1024];
	const void *bytes = NULL;
	size_t size = 0;
	CHECK(usage_names(etc_etrecord_member(o.rec, NULL, &bytes, &size, &err), &err,
	                  "etc_etrecord_member: NULL name"));
	const etc_graph_node *nodes = NULL;
	size_t count = 0;
	CHECK(usage_names(etc_etrecord_graph_nodes(o.rec, NULL, &nodes, &count, &err), &err,
	                  "etc_etrecord_graph_nodes: NULL name"));
	etc_torchsave *ts = NULL;
	CHECK(usage_names(etc_etrecord_torchsave(o.rec, NULL, &ts, &err), &err,
	                  "etc_etrecord_torchsave: NULL name"));
	size_t with_null = 0, with_forward = 0;
	CHECK(etc_etrecord_reference(o.rec, NULL, 0, NULL, 0, &with_null, &err) == 0);
	CHECK(etc_etrecord_reference(o.rec, "forward", 0, NULL, 0, &with_forward, &err) == 0);
	CHECK(with_null == with_forward && with_null > 0);

	/* the consistency checks without a `fix`: another model's record and buffer */
	etc_etrecord *mlp = NULL;
	etc_debug_buffer *mlp_buf = NULL;
	etc_inspector *insp = NULL;
	CHECK(etc_etrecord_open(&mlp, data(p, sizeof p, "mlp.etrecord"), &err) == 0);
	CHECK(etc_debug_buffer_open(&mlp_buf, data(p, sizeof p, "mlp_debug.bin"), &err) == 0);
	CHECK(etc_inspector_create(&insp, o.dump, mlp_buf, NULL, &err) == 0);
	if (insp && mlp) {
		CHECK(etc_inspector_link(insp, mlp, NULL, &err) == 0);
		CHECK(etc_check_etrecord(insp, NULL, &err) == ETC_ERR_MISMATCH);
		CHECK(strstr(err.message, "exported with this program") &&
		      !strstr(err.message, "(null)"));
		CHECK(etc_check_etrecord(insp, "--etrecord", &err) == ETC_ERR_MISMATCH);
		CHECK(strstr(err.message, "exported with this program (--etrecord)") != NULL);
		CHECK(etc_check_debug_buffer(insp, NULL, &err) == ETC_ERR_MISMATCH);
		CHECK(strstr(err.message, "give the debug buffer the runtime wrote") &&
		      !strstr(err.message, "(null)"));
	}
	etc_bundled *bp = NULL;
	CHECK(etc_bundled_open(&bp, data(p, sizeof p, "mlp.bpte"), &err) == 0);
	if (bp) {
		CHECK(etc_check_bundled_program(o.insp, bp, NULL, &err) == ETC_ERR_MISMATCH);
		CHECK(strstr(err.message, "the run came from") && !strstr(err.message, "(null)"));
	}
	CHECK(usage_names(etc_check_etrecord(NULL, NULL, &err), &err,
	                  "etc_check_etrecord: NULL insp"));
	etc_bundled_free(bp);
	etc_inspector_free(insp);
	etc_debug_buffer_free(mlp_buf);
	etc_etrecord_free(mlp);
	close_cnn(&o);
}

/* A bad time scale names the field and the value. */
static void time_scale_named(void)
{
	etc_error err;
	etc_error_clear(&err);
	char p[1024];
	etc_etdump *dump = NULL;
	CHECK(etc_etdump_open(&dump, data(p, sizeof p, "cnn.etdp"), &err) == 0);
	if (!dump)
		return;
	etc_inspector *insp = NULL;
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	io.source_time_scale = 99;
	CHECK(usage_names(etc_inspector_create(&insp, dump, NULL, &io, &err), &err,
	                  "etc_inspector_options.source_time_scale: 99 is not an etc_time_scale"));
	etc_inspector_options_init(&io);
	io.target_time_scale = -3;
	CHECK(usage_names(etc_inspector_create(&insp, dump, NULL, &io, &err), &err,
	                  "etc_inspector_options.target_time_scale: -3 is not"));
	etc_inspector_options_init(&io);
	io.delegate_time_scale = -2;
	CHECK(usage_names(etc_inspector_create(&insp, dump, NULL, &io, &err), &err,
	                  "etc_inspector_options.delegate_time_scale: -2 is not"));
	CHECK(strstr(err.message, "-1 for the source's") != NULL);
	etc_etdump_free(dump);
}

/* A path of about 1,100 characters: the message keeps the reason. */
static void long_path(void)
{
	char path[1200];
	size_t at = (size_t)snprintf(path, sizeof path, "/nonexistent-start");
	while (at + 120 < sizeof path - 40)
		at += (size_t)snprintf(path + at, sizeof path - at, "/%0100d", 7);
	snprintf(path + at, sizeof path - at, "/the-end.etdp");
	etc_error err;
	etc_error_clear(&err);
	etc_etdump *dump = NULL;
	CHECK(etc_etdump_open(&dump, path, &err) == ETC_ERR_IO);
	CHECK(strstr(err.message, "cannot open: No such file or directory") != NULL);
	CHECK(strncmp(err.message, "/nonexistent-start/", 19) == 0);
	CHECK(strstr(err.message, "...") && strstr(err.message, "/the-end.etdp: cannot open"));
	CHECK(strstr(err.file, "...") && strstr(err.file, "the-end.etdp") &&
	      strlen(err.file) < sizeof err.file);
	/* a short path is left alone */
	CHECK(etc_etdump_open(&dump, "/nonexistent/a.etdp", &err) == ETC_ERR_IO);
	CHECK_STR(err.file, "/nonexistent/a.etdp");
}

static etc_debug_buffer *guarded_buf;
static char guarded_path[1100];

static int truncate_and_read(void *ctx)
{
	volatile unsigned sum = 0;
	if (truncate(guarded_path, 0) != 0)
		return -100;
	const uint8_t *p = etc_debug_buffer_data(guarded_buf);
	for (uint64_t i = 0; i < etc_debug_buffer_size(guarded_buf); i += 4096)
		sum += p[i];
	*(unsigned *)ctx = sum;
	return 0; /* not reached: the read above faults */
}

/* etc_run_guarded names a file opened before the guarded call. */
static void guard_names_file(void)
{
	char p[1024];
	size_t n = 0;
	unsigned char *bytes = read_whole(data(p, sizeof p, "cnn_debug.bin"), &n);
	snprintf(guarded_path, sizeof guarded_path, "/tmp/etc_api_misuse_%ld.bin", (long)getpid());
	FILE *f = fopen(guarded_path, "wb");
	CHECK(bytes && f && fwrite(bytes, 1, n, f) == n);
	if (f)
		fclose(f);
	free(bytes);
	etc_error err;
	etc_error_clear(&err);
	CHECK(etc_debug_buffer_open(&guarded_buf, guarded_path, &err) == 0);
	if (guarded_buf) {
		unsigned sum = 0;
		CHECK(etc_run_guarded(truncate_and_read, &sum, &err) == ETC_ERR_IO);
		CHECK_STR(err.file, guarded_path);
		CHECK(strstr(err.message, "changed while being read") &&
		      strncmp(err.message, guarded_path, strlen(guarded_path)) == 0);
	}
	etc_debug_buffer_free(guarded_buf);
	unlink(guarded_path);
}

int main(void)
{
	const char *src = getenv("ETC_SRC");
	snprintf(root, sizeof root, "%s", src && *src ? src : ".");
	if (root[0] && root[strlen(root) - 1] != '/')
		strncat(root, "/", sizeof root - strlen(root) - 1);
	CHECK_GROUP(accuracy_null_block);
	CHECK_GROUP(run_debug_null);
	CHECK_GROUP(null_arguments);
	CHECK_GROUP(null_not_range);
	CHECK_GROUP(out_null_on_failure);
	CHECK_GROUP(relink_fails);
	CHECK_GROUP(null_strings);
	CHECK_GROUP(time_scale_named);
	CHECK_GROUP(long_path);
	CHECK_GROUP(guard_names_file);
	return check_report("test_api_misuse");
}
