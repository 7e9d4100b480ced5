/*
 * fuzz_refs.h - a parsed reference file (torch.save or .npz) compared with
 * the bundled example run as --reference-outputs does, and the accuracy
 * table (terminal) and JUnit checked for well-formedness (fuzz_outputs.h).
 * For the fuzz targets of the reference readers.
 */
#ifndef ETC_FUZZ_REFS_H
#define ETC_FUZZ_REFS_H

#include "fuzz_outputs.h"

#include <etcompare/etcompare.h>

#include "example_data.h"

/* The bundled example run, as the inspector sees it; 0 or -1. The caller
 * frees the three (NULL or not). */
static inline int fuzz_example_inspector(etc_etdump **dump, etc_debug_buffer **buf,
                                         etc_inspector **insp, etc_error *err)
{
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	if (etc_etdump_wrap(dump, etc_example_etdump, sizeof etc_example_etdump, "example", err) <
	        0 ||
	    etc_debug_buffer_wrap(buf, etc_example_debug, sizeof etc_example_debug, "example",
	                          err) < 0 ||
	    etc_inspector_create(insp, *dump, *buf, &io, err) < 0)
		return -1;
	return 0;
}

/* A comparison's accuracy table (terminal text) and JUnit report (XML whose
 * verdict is the comparison's). */
static inline void fuzz_check_accuracy_reports(const etc_accuracy *acc, const etc_inspector *insp)
{
	etc_error err;
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_accuracy(t.f, acc, insp, ~0u, &err);
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
	etc_junit_gates g = {acc, insp, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL};
	if (fuzz_text_open(&t)) {
		int rc = etc_report_junit_gates(t.f, &g, &err);
		fuzz_text_close(&t);
		if (rc == 0)
			fuzz_check_xml(t.p, t.n);
		if (rc == 0 && (etc_junit_failures(&g) > 0) != (etc_accuracy_failures(acc) > 0))
			fuzz_fail("junit: verdict and accuracy failures disagree", t.p, t.n, 0);
		free(t.p);
	}
}

static inline void fuzz_compare_refs(const etc_torchsave *ts, const etc_npz *npz)
{
	etc_error err;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	etc_accuracy *acc = NULL;
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0)
		goto done;
	etc_reference_set set = {ts, npz, "fuzz refs", NULL};
	etc_accuracy_options ao;
	etc_accuracy_options_init(&ao);
	if (etc_accuracy_run(&acc, insp, &set, &ao, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	fuzz_check_accuracy_reports(acc, insp);
done:
	etc_accuracy_free(acc);
	etc_inspector_free(insp);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
}

#endif
