/*
 * fuzz_legacy.c - the legacy profiler dump (prof_result.bin): the block
 * parser with its sanity checks, then every table at every time scale.
 *
 * Input: the file's bytes.
 */
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
		for (int scale = ETC_LEGACY_NS; scale <= ETC_LEGACY_CYCLES; scale++)
			(void)etc_report_legacy(fuzz_sink(), p, scale, &err);
	}
	etc_legacy_profile_free(p);
	free(copy);
	return 0;
}
