/*
 * fuzz_torchsave.c - the torch.save reader: the zip archive, the pickle
 * interpreter and tensor rebuilding; the object graph is walked and every
 * tensor's values are read through its strides. Then the archive is
 * compared with the bundled example as references, and the accuracy table
 * and JUnit checked (fuzz_refs.h).
 *
 * Input: the file's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_refs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

/*
 * Memo references make the object graph a DAG: a walk that follows every
 * edge can be exponential, so it stops after a fixed number of visits.
 */
#define WALK_BUDGET 100000

static void walk(const etc_pyobj *o, unsigned depth, long *budget)
{
	if (!o || depth > ETC_TORCHSAVE_MAX_DEPTH + 2 || --*budget < 0)
		return;
	(void)etc_pykind_name(etc_pyobj_kind(o));
	(void)etc_pyobj_bool(o);
	(void)etc_pyobj_int(o);
	(void)etc_pyobj_float(o);
	(void)etc_pyobj_str(o);
	size_t n;
	(void)etc_pyobj_bigint(o, &n);
	(void)etc_pyobj_storage_bytes(o, &n);
	const etc_pytensor *t = etc_pyobj_tensor(o);
	if (t) {
		double v[8];
		uint64_t k = t->tensor.numel < 8 ? t->tensor.numel : 8;
		if (t->tensor.data || t->storage) {
			etc_pytensor_to_double(t, 0, (size_t)k, v);
			if (t->tensor.numel)
				(void)etc_pytensor_get(t, t->tensor.numel - 1);
			uint8_t small[64];
			(void)etc_pytensor_copy(t, small, sizeof small);
		}
	}
	walk(etc_pyobj_attrs(o), depth + 1, budget);
	size_t len = etc_pyobj_len(o);
	if (etc_pyobj_kind(o) == ETC_PY_DICT) {
		(void)etc_pyobj_dict_get(o, "forward");
		for (size_t i = 0; i < len; i++) {
			walk(etc_pyobj_dict_key(o, i), depth + 1, budget);
			walk(etc_pyobj_dict_value(o, i), depth + 1, budget);
		}
	} else {
		for (size_t i = 0; i < len; i++)
			walk(etc_pyobj_item(o, i), depth + 1, budget);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_torchsave *ts = NULL;
	if (etc_torchsave_wrap(&ts, copy, size, "fuzz.pt", &err) == 0) {
		long budget = WALK_BUDGET;
		(void)etc_torchsave_prefix(ts);
		walk(etc_torchsave_root(ts), 0, &budget);
		fuzz_compare_refs(ts, NULL);
	} else {
		fuzz_check_terminal(err.message, strlen(err.message));
	}
	etc_torchsave_free(ts);
	free(copy);
	return 0;
}
