/*
 * fuzz_numgap.c - the numeric gap with a fuzzed ETRecord: the bundled
 * example run linked to the record (--force, so a record that does not fit
 * warns), compared with the example run linked to the same record: alignment by debug handle, the
 * graph's permutations, dequantization by its quantize/dequantize nodes. Every warning, rendered as
 * the CLI prints it, the table and the errors are checked for terminal safety (fuzz_outputs.h); a
 * warning itself must already be safe (the library escapes it once, when it is made).
 *
 * Input: the ETRecord's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_dumps.h"
#include "fuzz_refs.h"

static void gap(const etc_inspector *insp, const etc_numgap_reference *ref, size_t size)
{
	etc_error err;
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	o.force = true;
	if (size & 1)
		o.min_snr = 1e300;
	etc_numgap *ng = NULL;
	if (etc_numgap_run(&ng, insp, ref, &o, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		return;
	}
	for (size_t i = 0; i < etc_numgap_warning_count(ng); i++) {
		const char *w = etc_numgap_warning(ng, i);
		fuzz_check_terminal(w, strlen(w));
	}
	fuzz_check_numgap_reports(ng);
	etc_report_options ro;
	etc_report_options_init(&ro);
	(void)etc_report_json(fuzz_sink(), insp, &ro, &err);
	etc_numgap_free(ng);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_etrecord *rec = NULL;
	etc_etdump *dump = NULL, *dump2 = NULL;
	etc_debug_buffer *buf = NULL, *buf2 = NULL;
	etc_inspector *insp = NULL, *insp2 = NULL;
	if (etc_etrecord_wrap(&rec, copy, size, "fuzz.etrecord", &err) < 0)
		goto done;
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0 ||
	    fuzz_example_inspector(&dump2, &buf2, &insp2, &err) < 0)
		goto done;
	if (etc_inspector_link(insp, rec, NULL, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	if (etc_inspector_link(insp2, rec, NULL, &err) == 0) {
		etc_numgap_reference ref = {.insp = insp2, .name = "reference"};
		gap(insp, &ref, size);
	}
done:
	etc_inspector_free(insp2);
	etc_inspector_free(insp);
	etc_debug_buffer_free(buf2);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump2);
	etc_etdump_free(dump);
	etc_etrecord_free(rec);
	free(copy);
	return 0;
}
