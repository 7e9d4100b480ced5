/*
 * ref_op_eval.c - one op of the reference executor on tensors from an .npz
 * (the op tests' harness, tests/refops.py):
 *
 *   ref_op_eval CASE.json INPUTS.npz OUT.npz
 *
 * CASE.json = {"target": "aten.add.Tensor", "inputs": [serde arguments],
 * "outputs": N, "dtype": "float64" | "float32", "keep_float32": true}. Float
 * inputs are converted to the case's dtype (with keep_float32, float32
 * inputs stay float32), integer and bool inputs keep theirs. The outputs are
 * written as "0", "1", ... Exit 0, or 1 with one line on stderr.
 */
#include "core/internal.h"
#include "npz_out.h"
#include "reference/refargs.h"
#include "reference/refimport.h"

#include <stdio.h>
#include <stdlib.h>

#define EDGE_OPS "executorch.exir.dialects.edge.ops."

typedef struct inputs {
	const etc_npz *npz;
	ref_tensor *t;
	size_t n;
} inputs;

static const ref_tensor *lookup(void *user, const char *name)
{
	inputs *in = user;
	int i = etc_npz_find(in->npz, name);
	return i >= 0 ? &in->t[i] : NULL;
}

static int run(const char *case_path, const char *in_path, const char *out_path, etc_error *err)
{
	etc_map map;
	json_t *cj = NULL;
	etc_npz *npz = NULL;
	etc_arena arena;
	inputs in = {0};
	ref_tensor outs[16];
	uint32_t nouts = 0;
	memset(outs, 0, sizeof outs);
	etc_arena_init(&arena);
	int rc = etc_map_open(&map, case_path, err);
	if (rc < 0)
		return rc;
	rc = ref_json_parse((const char *)map.data, map.size, NULL, case_path, &cj, err);
	etc_map_close(&map);
	if (rc < 0)
		goto done;
	const char *target = json_string_value(json_object_get(cj, "target"));
	const json_t *jn = json_object_get(cj, "outputs");
	const char *dts = json_string_value(json_object_get(cj, "dtype"));
	if (!target || !json_is_integer(jn) || json_integer_value(jn) < 0 ||
	    json_integer_value(jn) > 16) {
		rc = etc_fail(err, ETC_ERR_FORMAT, case_path, -1,
		              "needs \"target\" (a string) and \"outputs\" (0 to 16)");
		goto done;
	}
	nouts = (uint32_t)json_integer_value(jn);
	int fdt = ETC_DOUBLE;
	if (dts && strcmp(dts, "float32") == 0)
		fdt = ETC_FLOAT;
	else if (dts && strcmp(dts, "float64") != 0) {
		rc = etc_fail(err, ETC_ERR_FORMAT, case_path, -1,
		              "dtype \"%s\" is neither float64 nor float32", dts);
		goto done;
	}
	bool keep32 = json_is_true(json_object_get(cj, "keep_float32"));
	if (strncmp(target, EDGE_OPS, strlen(EDGE_OPS)) == 0)
		target += strlen(EDGE_OPS);

	rc = etc_npz_open(&npz, in_path, err);
	if (rc < 0)
		goto done;
	in.npz = npz;
	in.n = etc_npz_count(npz);
	in.t = calloc(in.n ? in.n : 1, sizeof *in.t);
	if (!in.t) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < in.n; i++) {
		etc_tensor t;
		rc = etc_npz_array(npz, i, &t, err);
		/* "keep_float32": float32 inputs reach the op as float32 (the
		   graph's weights held as stored) */
		int dt = keep32 && rc == 0 && t.scalar_type == ETC_FLOAT ? ETC_FLOAT : fdt;
		if (rc == 0)
			rc = ref_import_tensor(&in.t[i], &t, dt, etc_npz_name(npz, i), err);
		if (rc < 0)
			goto done;
	}

	ref_arg *args;
	size_t nargs;
	rc = ref_args_decode(&arena, json_object_get(cj, "inputs"), lookup, &in, "case", target,
	                     &args, &nargs, err);
	if (rc < 0)
		goto done;
	const ref_op *op = ref_op_find(target);
	if (!op) {
		rc = etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1, "op %s is not supported", target);
		goto done;
	}
	ref_call call = {"case", target, args, nargs, fdt, outs, nouts, err, {0}};
	rc = op->fn(&call);
	if (rc < 0)
		goto done;
	npz_out *z = npz_out_open(out_path);
	if (!z) {
		rc = etc_fail(err, ETC_ERR_IO, out_path, -1, "cannot create the file");
		goto done;
	}
	for (uint32_t k = 0; k < nouts; k++) {
		char name[16];
		snprintf(name, sizeof name, "%u", k);
		etc_reftensor v = ref_tensor_view(&outs[k]);
		if (!outs[k].data) {
			rc = etc_fail(err, ETC_ERR_FORMAT, NULL, -1, "op %s left output %u unset",
			              target, k);
			break;
		}
		if (npz_out_add(z, name, &v) < 0) {
			rc = etc_fail(err, ETC_ERR_IO, out_path, -1, "cannot write output %u", k);
			break;
		}
	}
	if (npz_out_close(z) < 0 && rc == 0)
		rc = etc_fail(err, ETC_ERR_IO, out_path, -1, "write error");
done:
	for (uint32_t k = 0; k < nouts; k++)
		ref_tensor_free(&outs[k]);
	for (size_t i = 0; i < in.n; i++)
		ref_tensor_free(&in.t[i]);
	free(in.t);
	etc_npz_free(npz);
	json_decref(cj);
	etc_arena_release(&arena);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: ref_op_eval CASE.json INPUTS.npz OUT.npz\n");
		return 2;
	}
	etc_error err = {0};
	if (run(argv[1], argv[2], argv[3], &err) < 0) {
		fprintf(stderr, "%s\n", err.message[0] ? err.message : "failed");
		return 1;
	}
	return 0;
}
