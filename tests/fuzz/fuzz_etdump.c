/*
 * fuzz_etdump.c - the ETDump reader and the debug buffer: FlatBuffer
 * verification, every event decoded, every tensor read from the debug
 * buffer and summarized, the Inspector's EventBlocks and the reports.
 *
 * Input: a little-endian uint32 n, then n bytes of ETDump, then the debug
 * buffer (fuzz.h: fuzz_split).
 */
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
	if (etc_inspector_create(&insp, dump, buf, &opt, &err) < 0)
		goto done;
	etc_report_options ro;
	etc_report_options_init(&ro);
	ro.include_delegate_debug_data = true;
	FILE *sink = fuzz_sink();
	(void)etc_report_table(sink, insp, &ro, &err);
	(void)etc_report_tsv(sink, insp, &ro, &err);
	(void)etc_report_outputs(sink, insp, &ro, &err);
	(void)etc_report_json(sink, insp, &ro, &err);
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
