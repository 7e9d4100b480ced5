/*
 * fuzz_legacy.c - the legacy profiler dump (prof_result.bin): the block
 * parser with its sanity checks, then every table at every time scale.
 *
 * The tables are checked as terminal text (fuzz_outputs.h).
 *
 * Input: the file's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_outputs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_legacy_profile *p = NULL;
	if (etc_legacy_profile_parse_buffer(&p, copy, size, "fuzz.bin", &err) == 0) {
		for (int scale = ETC_LEGACY_NS; scale <= ETC_LEGACY_CYCLES; scale++) {
			fuzz_text t;
			if (!fuzz_text_open(&t))
				continue;
			(void)etc_report_legacy(t.f, p, scale, &err);
			fuzz_text_close(&t);
			fuzz_check_terminal(t.p, t.n);
			free(t.p);
		}
	} else {
		fuzz_check_terminal(err.message, strlen(err.message));
	}
	etc_legacy_profile_free(p);
	free(copy);
	return 0;
}
