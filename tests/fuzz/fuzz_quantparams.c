/*
 * fuzz_quantparams.c - the --quant-params JSON file: parsed for the numeric
 * gap of the bundled example against its .npz, every key and entry
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
	etc_npz *npz = NULL;
	etc_numgap *ng = NULL;
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0 ||
	    etc_etrecord_wrap(&rec, etc_example_etrecord, sizeof etc_example_etrecord, "example",
	                      &err) < 0 ||
	    etc_inspector_link(insp, rec, NULL, &err) < 0 ||
	    etc_npz_wrap(&npz, etc_example_npz, sizeof etc_example_npz, "example.npz", &err) < 0)
		goto done;
	etc_numgap_reference ref = {NULL, npz, "example.npz"};
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	o.quant_params = path;
	if (etc_numgap_run(&ng, insp, &ref, &o, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_numgap(t.f, ng, &err);
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
done:
	etc_numgap_free(ng);
	etc_npz_free(npz);
	etc_inspector_free(insp);
	etc_etrecord_free(rec);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	return 0;
}
