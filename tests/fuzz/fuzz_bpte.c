/*
 * fuzz_bpte.c - the BundledProgram reader: FlatBuffer verification, every
 * test case's inputs and expected outputs decoded, every tensor read
 * (summarized and converted to a reference tensor), the embedded program's
 * bytes touched and its kernels read and checked against the bundled
 * example's ETDump (etc_check_bundled_program), and the expected outputs used
 * as references for the bundled example run, as --bundled-program does.
 *
 * Error messages are checked as terminal text (they quote method names);
 * the accuracy table and JUnit for well-formedness (fuzz_refs.h).
 *
 * Input: the file's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_refs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

static void read_tensor(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                        const etc_bundled_value *v)
{
	const etc_tensor *t = &v->tensor;
	if (t->nbytes != t->numel * etc_scalar_type_size(t->scalar_type))
		fuzz_fail("bpte: data size and sizes disagree", "", 0, 0);
	for (uint32_t d = 0; d < t->ndim; d++)
		(void)etc_tensor_size(t, d);
	if (t->numel) {
		etc_tensor_summary s;
		etc_tensor_summarize(t, &s);
	}
	etc_reftensor rt;
	etc_error err;
	if (etc_bundled_tensor(bp, m, tc, expected, i, &rt, &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		return;
	}
	uint64_t numel = 1;
	for (uint32_t d = 0; d < rt.rank; d++)
		numel *= (uint64_t)rt.shape[d];
	if (numel != rt.numel)
		fuzz_fail("bpte: reference tensor shape and numel disagree", "", 0, 0);
	if (rt.numel) {
		/* the last byte of the data is readable */
		size_t last = (size_t)t->nbytes - 1;
		volatile uint8_t b = ((const uint8_t *)rt.data)[last];
		(void)b;
	}
}

static void compare_with_example(const etc_bundled *bp)
{
	etc_error err;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	etc_accuracy *acc = NULL;
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0)
		goto done;
	etc_reference_set set = {NULL, NULL, "fuzz.bpte", bp};
	etc_accuracy_options ao;
	etc_accuracy_options_init(&ao);
	if (etc_bundled_method_count(bp)) {
		etc_str name = etc_bundled_method_name(bp, 0);
		if (!memchr(name.ptr, 0, name.len))
			ao.method = name.ptr; /* NUL-terminated in the file */
	}
	/* the embedded program's kernels against the example's ETDump: a
	   hostile program is a clear error, never a read outside it */
	int rc = etc_check_bundled_program(insp, bp, "--bundled-program", &err);
	if (rc < 0)
		fuzz_check_terminal(err.message, strlen(err.message));
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_bundled *bp = NULL;
	if (etc_bundled_wrap(&bp, copy, size, "fuzz.bpte", &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		free(copy);
		return 0;
	}
	uint64_t off, len;
	const uint8_t *prog = etc_bundled_program(bp, &off, &len);
	if (len && (off + len > size || prog[len - 1] != copy[off + len - 1]))
		fuzz_fail("bpte: program bytes outside the file", "", 0, 0);
	(void)etc_bundled_version(bp);
	for (size_t m = 0; m < etc_bundled_method_count(bp); m++) {
		etc_str name = etc_bundled_method_name(bp, m);
		char safe[128];
		etc_text_escape(safe, sizeof safe, name.ptr, name.len);
		if (!memchr(name.ptr, 0, name.len) &&
		    etc_bundled_method_find(bp, name.ptr) > (long)m)
			fuzz_fail("bpte: method_find skips a suite of that name", "", 0, 0);
		for (size_t tc = 0; tc < etc_bundled_test_case_count(bp, m); tc++) {
			for (int expected = 0; expected < 2; expected++) {
				size_t n = etc_bundled_value_count(bp, m, tc, expected);
				for (size_t i = 0; i <= n; i++) {
					etc_bundled_value v;
					int rc = etc_bundled_get(bp, m, tc, expected, i, &v, &err);
					if ((rc < 0) != (i == n))
						fuzz_fail("bpte: value count and access disagree",
						          "", 0, 0);
					if (rc == 0 && v.kind == ETC_BUNDLED_TENSOR)
						read_tensor(bp, m, tc, expected, i, &v);
					else if (rc == 0) {
						etc_reftensor rt;
						if (etc_bundled_tensor(bp, m, tc, expected, i, &rt,
						                       &err) == 0)
							fuzz_fail("bpte: a scalar read as a tensor",
							          "", 0, 0);
						fuzz_check_terminal(err.message,
						                    strlen(err.message));
					}
				}
			}
		}
	}
	compare_with_example(bp);
	etc_bundled_free(bp);
	free(copy);
	return 0;
}
