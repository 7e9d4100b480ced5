/*
 * fuzz_etdump.c - the ETDump reader and the debug buffer: FlatBuffer
 * verification, every event decoded, every tensor read from the debug
 * buffer and summarized, the Inspector's EventBlocks and the reports.
 *
 * The terminal reports, the TSV and the JUnit of the numeric gap (the run
 * against itself, a threshold chosen by the input) are checked for
 * well-formedness (fuzz_outputs.h).
 *
 * Input: a little-endian uint32 n, then n bytes of ETDump, then the debug
 * buffer (fuzz.h: fuzz_split).
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_outputs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

static void read_value(const etc_value *v, const etc_debug_buffer *buf)
{
	for (uint32_t t = 0; t < v->tensor_count; t++) {
		etc_tensor tensor;
		etc_error err;
		if (etc_value_tensor(v, t, buf, &tensor, &err) < 0)
			continue;
		for (uint32_t d = 0; d < tensor.ndim; d++)
			(void)etc_tensor_size(&tensor, d);
		for (uint32_t d = 0; d < tensor.nstrides; d++)
			(void)etc_tensor_stride(&tensor, d);
		if (tensor.data) {
			etc_tensor_summary s;
			etc_tensor_summarize(&tensor, &s);
			double first[4];
			uint64_t n = tensor.numel < 4 ? tensor.numel : 4;
			etc_tensor_to_double(&tensor, 0, (size_t)n, first);
		}
	}
}

/* The numeric gap of the run against itself: terminal, TSV and JUnit. */
static void numgap_outputs(const etc_inspector *insp, size_t size)
{
	etc_numgap_reference ref = {insp, NULL, "self", NULL, NULL, 0};
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	if (size & 2)
		o.min_snr = 1e300; /* every compared row fails */
	etc_numgap *ng = NULL;
	etc_error err;
	if (etc_numgap_run(&ng, insp, &ref, &o, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		return;
	}
	fuzz_check_numgap_reports(ng);
	etc_junit_gates g = {NULL, insp, ng, NULL, NULL, NULL, NULL, 0, NULL, NULL};
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		int rc = etc_report_junit_gates(t.f, &g, &err);
		fuzz_text_close(&t);
		if (rc == 0)
			fuzz_check_xml(t.p, t.n);
		if (rc == 0 &&
		    (etc_junit_failures(&g) > 0) != (etc_numgap_first_divergence(ng) >= 0))
			fuzz_fail("junit: verdict and first divergence disagree", t.p, t.n, 0);
		free(t.p);
	}
	etc_numgap_free(ng);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *dump_bytes, *buf_bytes;
	size_t dump_len, buf_len;
	if (fuzz_split(data, size, &dump_bytes, &dump_len, &buf_bytes, &buf_len) < 0)
		return 0;
	etc_error err;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	if (etc_etdump_wrap(&dump, dump_bytes, dump_len, "fuzz.etdp", &err) < 0)
		goto done;
	if (etc_debug_buffer_wrap(&buf, buf_bytes, buf_len, "fuzz.bin", &err) < 0)
		goto done;
	(void)etc_etdump_version(dump);
	(void)etc_etdump_event_total(dump);
	for (uint32_t r = 0; r < etc_etdump_run_count(dump); r++) {
		etc_run run;
		etc_etdump_run(dump, r, &run);
		for (uint32_t a = 0; a < run.allocator_count; a++)
			(void)etc_etdump_allocator(dump, r, a);
		for (uint32_t e = 0; e < run.event_count; e++) {
			etc_event ev;
			etc_etdump_event(dump, r, e, &ev);
			(void)etc_etdump_event_offset(dump, r, e);
			if (ev.kind == ETC_EVENT_DEBUG && ev.debug.has_value)
				read_value(&ev.debug.value, buf);
		}
	}
	etc_inspector_options opt;
	etc_inspector_options_init(&opt);
	opt.strict = size & 1; /* either way, chosen by the input */
	if (etc_inspector_create(&insp, dump, buf, &opt, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	etc_report_options ro;
	etc_report_options_init(&ro);
	ro.include_delegate_debug_data = true;
	FILE *sink = fuzz_sink();
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_table(t.f, insp, &ro, &err);
		(void)etc_report_outputs(t.f, insp, &ro, &err);
		for (size_t i = 0; i < etc_inspector_warning_count(insp); i++) {
			char safe[1024];
			fprintf(t.f, "%s\n",
			        etc_text_safe(safe, sizeof safe, etc_inspector_warning(insp, i)));
		}
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
	if (fuzz_text_open(&t)) {
		int rc = etc_report_tsv(t.f, insp, &ro, &err);
		fuzz_text_close(&t);
		if (rc == 0)
			fuzz_check_tsv(t.p, t.n);
		free(t.p);
	}
	(void)etc_report_json(sink, insp, &ro, &err);
	numgap_outputs(insp, size);
	size_t count;
	(void)etc_inspector_module_total(insp, "conv1", &count);
done:
	etc_inspector_free(insp);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	free(dump_bytes);
	free(buf_bytes);
	return 0;
}
