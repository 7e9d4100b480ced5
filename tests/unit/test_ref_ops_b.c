/*
 * test_ref_ops_b.c - the matrix, convolution, pooling, shape and index ops
 * called as the graph runner calls them, with hand-built calls: positional
 * arguments (no schema names), the schema's defaults, the output count
 * checked, refusals naming node and op, and the helpers behind the view
 * ops (strided copies with zero and negative strides, promotion,
 * broadcasting). Values against hand-computed numbers; the torch
 * comparisons are in tests/test_ref_ops_b.py.
 */
#include "check.h"
#include "reference/ops_b_util.h"

#include <stdlib.h>

static ref_tensor mk(int dtype, uint32_t rank, const int64_t *shape, const double *v)
{
	ref_tensor t;
	etc_error err = {0};
	if (ref_tensor_alloc(&t, dtype, rank, shape, &err) < 0) {
		fprintf(stderr, "%s\n", err.message);
		exit(1);
	}
	for (uint64_t i = 0; v && i < t.numel; i++)
		ref_set_f(&t, i, v[i]);
	return t;
}

static ref_arg targ(const ref_tensor *t)
{
	ref_arg a = {.name = "", .kind = REF_ARG_TENSOR, .t = t};
	return a;
}

static ref_arg iarg(const char *name, int64_t v)
{
	ref_arg a = {.name = name, .kind = REF_ARG_INT, .i = v};
	return a;
}

static ref_arg intsarg(const char *name, const int64_t *v, size_t n)
{
	ref_arg a = {.name = name, .kind = REF_ARG_INTS, .ints = v, .n = n};
	return a;
}

/* Runs op on args; returns its status, outputs in outs (freed by caller). */
static int call(const char *op, const ref_arg *args, size_t n, ref_tensor *outs, uint32_t nouts,
                etc_error *err)
{
	const ref_op *f = ref_op_find(op);
	if (!f) {
		fprintf(stderr, "op %s missing\n", op);
		return -100;
	}
	memset(outs, 0, nouts * sizeof *outs);
	memset(err, 0, sizeof *err);
	ref_call c = {"n1", op, args, n, ETC_DOUBLE, outs, nouts, err, {0}};
	return f->fn(&c);
}

static void test_addmm_positional(void)
{
	int64_t s2[2] = {2, 2}, s1[1] = {2};
	double av[4] = {1, 2, 3, 4}, bv[4] = {5, 6, 7, 8}, sv[2] = {10, 20};
	ref_tensor a = mk(ETC_DOUBLE, 2, s2, av), b = mk(ETC_DOUBLE, 2, s2, bv),
	           s = mk(ETC_DOUBLE, 1, s1, sv);
	ref_arg args[5] = {targ(&s), targ(&a), targ(&b)};
	ref_arg beta = {.name = "", .kind = REF_ARG_FLOAT, .f = 0.5};
	ref_arg alpha = {.name = "", .kind = REF_ARG_INT, .i = 2};
	args[3] = beta;
	args[4] = alpha;
	ref_tensor out;
	etc_error err;
	CHECK(call("aten.addmm.default", args, 5, &out, 1, &err) == 0);
	/* a @ b = [[19, 22], [43, 50]]; 0.5 * [10, 20] + 2 * that */
	double want[4] = {43, 54, 91, 110};
	CHECK(out.rank == 2 && out.shape[0] == 2 && out.shape[1] == 2);
	for (int i = 0; i < 4; i++)
		CHECK_DOUBLE_EXACT(ref_get_f(&out, (uint64_t)i), want[i]);
	ref_tensor_free(&out);
	/* an output count the op does not have */
	ref_tensor two[2];
	CHECK(call("aten.addmm.default", args, 3, two, 2, &err) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "node n1 (aten.addmm.default)") != NULL);
	/* mismatched inner dims name both shapes */
	int64_t s23[2] = {2, 3};
	ref_tensor w = mk(ETC_DOUBLE, 2, s23, NULL);
	ref_arg bad[3] = {targ(&s), targ(&w), targ(&b)};
	CHECK(call("aten.addmm.default", bad, 3, &out, 1, &err) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "[2, 3]") && strstr(err.message, "[2, 2]"));
	ref_tensor_free(&w);
	ref_tensor_free(&a);
	ref_tensor_free(&b);
	ref_tensor_free(&s);
}

static void test_int_mm_exact(void)
{
	int64_t s2[2] = {1, 2}, s3[2] = {2, 1};
	ref_tensor a = mk(ETC_LONG, 2, s2, NULL), b = mk(ETC_LONG, 2, s3, NULL);
	ref_set_i(&a, 0, (int64_t)1 << 62);
	ref_set_i(&a, 1, 3);
	ref_set_i(&b, 0, 4); /* 2^64: wraps to 0 */
	ref_set_i(&b, 1, -5);
	ref_arg args[2] = {targ(&a), targ(&b)};
	ref_tensor out;
	etc_error err;
	CHECK(call("aten.mm.default", args, 2, &out, 1, &err) == 0);
	CHECK(out.dtype == ETC_LONG && ref_get_i(&out, 0) == -15);
	ref_tensor_free(&out);
	ref_tensor_free(&a);
	ref_tensor_free(&b);
}

static void test_conv_defaults(void)
{
	/* input [1, 1, 3, 3] = 1..9, weight [1, 1, 2, 2] of ones, no bias, the
	 * schema's defaults for everything after weight */
	int64_t sx[4] = {1, 1, 3, 3}, sw[4] = {1, 1, 2, 2};
	double xv[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wv[4] = {1, 1, 1, 1};
	ref_tensor x = mk(ETC_DOUBLE, 4, sx, xv), w = mk(ETC_DOUBLE, 4, sw, wv);
	ref_arg args[2] = {targ(&x), targ(&w)};
	ref_tensor out;
	etc_error err;
	CHECK(call("aten.convolution.default", args, 2, &out, 1, &err) == 0);
	double want[4] = {12, 16, 24, 28};
	CHECK(out.rank == 4 && out.shape[2] == 2 && out.shape[3] == 2);
	for (int i = 0; i < 4 && out.numel == 4; i++)
		CHECK_DOUBLE_EXACT(ref_get_f(&out, (uint64_t)i), want[i]);
	ref_tensor_free(&out);
	/* padding 1 by name, stride 2: windows at -1, 1 */
	int64_t one = 1, two = 2;
	ref_arg named[4] = {targ(&x), targ(&w), intsarg("padding", &one, 1),
	                    intsarg("stride", &two, 1)};
	CHECK(call("aten.convolution.default", named, 4, &out, 1, &err) == 0);
	double want2[4] = {1, 5, 11, 28};
	CHECK(out.numel == 4);
	for (int i = 0; i < 4 && out.numel == 4; i++)
		CHECK_DOUBLE_EXACT(ref_get_f(&out, (uint64_t)i), want2[i]);
	ref_tensor_free(&out);
	ref_tensor_free(&x);
	ref_tensor_free(&w);
}

static void test_max_pool_indices(void)
{
	int64_t sx[3] = {1, 2, 4};
	double xv[8] = {1, 9, 3, 3, 2, 0, 7, 7};
	ref_tensor x = mk(ETC_DOUBLE, 3, sx, xv);
	int64_t k[2] = {2, 2};
	ref_arg args[2] = {targ(&x), intsarg("kernel_size", k, 2)};
	ref_tensor outs[2];
	etc_error err;
	CHECK(call("aten.max_pool2d_with_indices.default", args, 2, outs, 2, &err) == 0);
	CHECK(outs[0].numel == 2 && outs[1].dtype == ETC_LONG);
	if (outs[0].numel == 2) {
		CHECK_DOUBLE_EXACT(ref_get_f(&outs[0], 0), 9);
		CHECK(ref_get_i(&outs[1], 0) == 1);
		CHECK_DOUBLE_EXACT(ref_get_f(&outs[0], 1), 7);
		CHECK(ref_get_i(&outs[1], 1) == 6); /* first of the tie */
	}
	ref_tensor_free(&outs[0]);
	ref_tensor_free(&outs[1]);
	ref_tensor_free(&x);
}

static void test_views(void)
{
	int64_t s[2] = {2, 3};
	double v[6] = {0, 1, 2, 3, 4, 5};
	ref_tensor x = mk(ETC_SHORT, 2, s, v);
	ref_tensor out;
	etc_error err;
	int64_t size[2] = {-1, 2};
	ref_arg va[2] = {targ(&x), intsarg("size", size, 2)};
	CHECK(call("aten.view_copy.default", va, 2, &out, 1, &err) == 0);
	CHECK(out.dtype == ETC_SHORT && out.rank == 2 && out.shape[0] == 3 && out.shape[1] == 2);
	ref_tensor_free(&out);
	int64_t bad[2] = {-1, 4};
	ref_arg vb[2] = {targ(&x), intsarg("size", bad, 2)};
	CHECK(call("aten.view_copy.default", vb, 2, &out, 1, &err) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "[-1, 4]") && strstr(err.message, "[2, 3]"));
	/* transpose, then flip: negative strides through the same copy */
	ref_arg ta[3] = {targ(&x), iarg("dim0", 0), iarg("dim1", -1)};
	CHECK(call("aten.transpose_copy.int", ta, 3, &out, 1, &err) == 0);
	double tw[6] = {0, 3, 1, 4, 2, 5};
	for (int i = 0; i < 6; i++)
		CHECK(ref_get_i(&out, (uint64_t)i) == (int64_t)tw[i]);
	ref_tensor_free(&out);
	int64_t dims[2] = {0, 1};
	ref_arg fa[2] = {targ(&x), intsarg("dims", dims, 2)};
	CHECK(call("aten.flip.default", fa, 2, &out, 1, &err) == 0);
	for (int i = 0; i < 6; i++)
		CHECK(ref_get_i(&out, (uint64_t)i) == 5 - i);
	ref_tensor_free(&out);
	/* split_with_sizes: the graph's output count must match */
	int64_t sizes[2] = {1, 2};
	ref_arg sa[3] = {targ(&x), intsarg("split_sizes", sizes, 2), iarg("dim", -1)};
	ref_tensor parts[3];
	CHECK(call("aten.split_with_sizes_copy.default", sa, 3, parts, 3, &err) ==
	      ETC_ERR_MISMATCH);
	CHECK(call("aten.split_with_sizes_copy.default", sa, 3, parts, 2, &err) == 0);
	CHECK(parts[0].shape[1] == 1 && parts[1].shape[1] == 2 && ref_get_i(&parts[1], 3) == 5);
	ref_tensor_free(&parts[0]);
	ref_tensor_free(&parts[1]);
	ref_tensor_free(&x);
}

static void test_helpers(void)
{
	CHECK(refb_promote(ETC_BYTE, ETC_CHAR, ETC_DOUBLE) == ETC_SHORT);
	CHECK(refb_promote(ETC_BOOL, ETC_INT, ETC_DOUBLE) == ETC_INT);
	CHECK(refb_promote(ETC_LONG, ETC_FLOAT, ETC_DOUBLE) == ETC_DOUBLE);
	CHECK(refb_promote(ETC_SHORT, ETC_INT, ETC_DOUBLE) == ETC_INT);
	/* a broadcast (stride 0) and reversed (stride -1) copy */
	int32_t src[3] = {7, 8, 9}, dst[6] = {0};
	int64_t shape[2] = {2, 3}, st[2] = {0, -1};
	refb_strided_copy(dst, src, 4, 2, shape, st, 2);
	int32_t want[6] = {9, 8, 7, 9, 8, 7};
	for (int i = 0; i < 6; i++)
		CHECK(dst[i] == want[i]);
	/* merged contiguous dims still copy element by element correctly */
	int32_t m[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[4];
	int64_t ms[3] = {2, 1, 2}, mst[3] = {4, 2, 1};
	refb_strided_copy(out, m, 4, 3, ms, mst, 1);
	CHECK(out[0] == 1 && out[1] == 2 && out[2] == 5 && out[3] == 6);
}

int main(void)
{
	CHECK_GROUP(test_addmm_positional);
	CHECK_GROUP(test_int_mm_exact);
	CHECK_GROUP(test_conv_defaults);
	CHECK_GROUP(test_max_pool_indices);
	CHECK_GROUP(test_views);
	CHECK_GROUP(test_helpers);
	return check_report("test_ref_ops_b");
}
