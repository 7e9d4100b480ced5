/*
 * fuzz_perfdiff.c - the performance diff (--baseline-etdump) of two fuzzed
 * ETDumps: matching, medians, the regression gate (a threshold and a
 * minimum event time chosen by the input) and the terminal table, checked
 * for terminal safety (fuzz_outputs.h).
 *
 * Input: uint32 n, n bytes of the baseline ETDump, the current ETDump.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_dumps.h"
#include "fuzz_outputs.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run base;
	if (fuzz_run_open(&base, data, size, true) < 0 || !base.insp) {
		fuzz_run_close(&base);
		return 0;
	}
	etc_error err;
	etc_etdump *cur = NULL;
	etc_inspector *cur_insp = NULL;
	etc_perfdiff *d = NULL;
	if (etc_etdump_wrap(&cur, base.buf_bytes, base.buf_len, "current.etdp", &err) < 0)
		goto done;
	etc_inspector_options io;
	etc_inspector_options_init(&io);
	if (etc_inspector_create(&cur_insp, cur, NULL, &io, &err) < 0)
		goto done;
	etc_perfdiff_options po;
	etc_perfdiff_options_init(&po);
	static const double gates[] = {NAN, 0, 5, 1e300};
	po.max_regression = gates[size % 4];
	po.min_event_time = (size / 4) % 2 ? 0.001 : 0;
	if (etc_perfdiff_create(&d, base.insp, cur_insp, &po, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	size_t n = etc_perfdiff_row_count(d);
	for (size_t i = 0; i < n; i++) {
		const etc_perfdiff_row *row = etc_perfdiff_row_at(d, i);
		if (!row)
			fuzz_fail("perfdiff: row missing", "", 0, i);
	}
	(void)etc_perfdiff_failures(d);
	(void)etc_perfdiff_baseline_only(d);
	(void)etc_perfdiff_current_only(d);
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_perfdiff(t.f, d, size % 7 ? 20 : 0, &err);
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
done:
	etc_perfdiff_free(d);
	etc_inspector_free(cur_insp);
	etc_etdump_free(cur);
	fuzz_run_close(&base);
	return 0;
}
