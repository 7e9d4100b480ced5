/*
 * fuzz_quantparams.c - the --quant-params JSON file: parsed for the numeric
 * gap of the bundled example against itself, every key and entry
 * checked (scale, zero_point, axis, lists of them). An error must be a
 * message safe for a terminal (fuzz_outputs.h); a run must report.
 *
 * Input: the file's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_dumps.h"
#include "fuzz_refs.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[320];
	snprintf(path, sizeof path, "%s/quant.json", fuzz_tmp_dir());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	etc_error err;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	etc_etrecord *rec = NULL;
	etc_etdump *dump2 = NULL;
	etc_debug_buffer *buf2 = NULL;
	etc_inspector *insp2 = NULL;
	etc_numgap *ng = NULL;
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0 ||
	    etc_etrecord_wrap(&rec, etc_example_etrecord, sizeof etc_example_etrecord, "example",
	                      &err) < 0 ||
	    etc_inspector_link(insp, rec, NULL, &err) < 0 ||
	    fuzz_example_inspector(&dump2, &buf2, &insp2, &err) < 0 ||
	    etc_inspector_link(insp2, rec, NULL, &err) < 0)
		goto done;
	etc_numgap_reference ref = {.insp = insp2, .name = "reference"};
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	o.quant_params = path;
	if (etc_numgap_run(&ng, insp, &ref, &o, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	fuzz_check_numgap_reports(ng);
done:
	etc_numgap_free(ng);
	etc_inspector_free(insp2);
	etc_debug_buffer_free(buf2);
	etc_etdump_free(dump2);
	etc_inspector_free(insp);
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	return 0;
}
