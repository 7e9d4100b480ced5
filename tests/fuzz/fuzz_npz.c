/*
 * fuzz_npz.c - the .npz/.npy reader: the zip container (stored and
 * deflated members), .npy headers, and every array's values.
 *
 * Error messages (they quote array names) are checked as terminal text;
 * the arrays are compared with the bundled example as references, and the
 * accuracy table and JUnit checked (fuzz_refs.h).
 *
 * Input: the file's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_refs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_npz *z = NULL;
	if (etc_npz_wrap(&z, copy, size, "fuzz.npz", &err) == 0) {
		(void)etc_npz_warning(z); /* bytes after the zip's end record */
		for (size_t i = 0; i < etc_npz_count(z); i++) {
			const char *name = etc_npz_name(z, i);
			if (name)
				(void)etc_npz_find(z, name);
			etc_tensor t;
			if (etc_npz_array(z, i, &t, &err) < 0) {
				fuzz_check_terminal(err.message, strlen(err.message));
				continue;
			}
			if (!t.data)
				continue;
			for (uint32_t d = 0; d < t.ndim; d++)
				(void)etc_tensor_size(&t, d);
			etc_tensor_summary s;
			etc_tensor_summarize(&t, &s);
		}
		fuzz_compare_refs(NULL, z);
	} else {
		fuzz_check_terminal(err.message, strlen(err.message));
	}
	etc_npz_free(z);
	free(copy);
	return 0;
}
