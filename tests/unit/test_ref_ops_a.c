/*
 * test_ref_ops_a.c - the op library's shared machinery (ops_util.c) and
 * ref_op_find's spellings, by hand-built calls: torch's integer promotion
 * table, result dtypes with zero-dim tensors and Python scalars, broadcast
 * iteration order, reduction offsets, negative dims, argument refusals.
 * The ops' values are checked against torch in tests/test_ref_ops_a.py.
 */
#include "check.h"

#include "reference/ops.h"
#include "reference/ops_util.h"

static ref_tensor tensor_of(int dtype, uint32_t rank, const int64_t *shape, void *data)
{
	ref_tensor t = {.dtype = dtype, .rank = rank, .data = data, .borrowed = true};
	t.numel = 1;
	for (uint32_t d = 0; d < rank; d++) {
		t.shape[d] = shape[d];
		t.numel *= (uint64_t)shape[d];
	}
	return t;
}

static void test_find(void)
{
	const char *same[][2] = {
	    {"aten.add.Tensor", "aten.add.Tensor"},
	    {"aten::add.Tensor", "aten.add.Tensor"},
	    {"aten.relu", "aten.relu.default"},
	    {"aten::relu", "aten.relu.default"},
	    {"aten.relu.out", "aten.relu.default"},
	    {"aten.add.out", "aten.add.Tensor"},
	    {"aten.sum.IntList_out", "aten.sum.dim_IntList"},
	    {"aten.div.out_mode", "aten.div.Tensor_mode"},
	    {"aten.pow.Tensor_Scalar_out", "aten.pow.Tensor_Scalar"},
	    {"quantized_decomposed.quantize_per_tensor.tensor_out",
	     "quantized_decomposed.quantize_per_tensor.tensor"},
	    {"quantized_decomposed::dequantize_per_channel.out",
	     "quantized_decomposed.dequantize_per_channel.default"},
	};
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		const ref_op *op = ref_op_find(same[i][0]);
		CHECK(op != NULL);
		if (op)
			CHECK_STR(op->name, same[i][1]);
	}
	const char *none[] = {"",
	                      ".",
	                      "..",
	                      "aten",
	                      "aten.",
	                      "aten.relu.",
	                      "aten.nope.default",
	                      "aten.add._out",
	                      "aten.add.out_",
	                      "::",
	                      "aten.add.Tensor.x"};
	for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
		CHECK(ref_op_find(none[i]) == NULL);
	CHECK(ref_op_find(NULL) == NULL);
	char longname[600];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CHECK(ref_op_find(longname) == NULL);
	/* every table name finds itself */
	for (size_t i = 0; i < ref_op_count(); i++)
		CHECK(ref_op_find(ref_op_at(i)->name) != NULL);
}

static void test_promote(void)
{
	/* torch.promote_types over bool, uint8, int8, int16, int32, int64 */
	const int ty[] = {ETC_BOOL, ETC_BYTE, ETC_CHAR, ETC_SHORT, ETC_INT, ETC_LONG};
	const int want[6][6] = {
	    {ETC_BOOL, ETC_BYTE, ETC_CHAR, ETC_SHORT, ETC_INT, ETC_LONG},
	    {ETC_BYTE, ETC_BYTE, ETC_SHORT, ETC_SHORT, ETC_INT, ETC_LONG},
	    {ETC_CHAR, ETC_SHORT, ETC_CHAR, ETC_SHORT, ETC_INT, ETC_LONG},
	    {ETC_SHORT, ETC_SHORT, ETC_SHORT, ETC_SHORT, ETC_INT, ETC_LONG},
	    {ETC_INT, ETC_INT, ETC_INT, ETC_INT, ETC_INT, ETC_LONG},
	    {ETC_LONG, ETC_LONG, ETC_LONG, ETC_LONG, ETC_LONG, ETC_LONG},
	};
	for (int a = 0; a < 6; a++)
		for (int b = 0; b < 6; b++)
			CHECK(ref_promote_ints(ty[a], ty[b]) == want[a][b]);
}

static void test_result_dtype(void)
{
	etc_error err = {0};
	ref_call c = {.node = "n", .op = "op", .float_dtype = ETC_FLOAT, .err = &err};
	int64_t s3[1] = {3};
	int32_t i32[3] = {0};
	int64_t i64 = 0;
	double f = 0;
	uint8_t u8[3] = {0};
	ref_tensor ti32 = tensor_of(ETC_INT, 1, s3, i32);
	ref_tensor zl = tensor_of(ETC_LONG, 0, NULL, &i64);
	ref_tensor zd = tensor_of(ETC_DOUBLE, 0, NULL, &f);
	ref_tensor tb = tensor_of(ETC_BOOL, 1, s3, u8);
	ref_scalar si = {REF_KIND_INT, 2, 2.0}, sf = {REF_KIND_FLOAT, 0, 0.5};
	ref_scalar sb = {REF_KIND_BOOL, 1, 1.0};
	const ref_tensor *p[2];
	/* a zero-dim int64 does not widen a dimensioned int32 */
	p[0] = &ti32, p[1] = &zl;
	CHECK(ref_result_dtype(&c, p, 2, NULL, 0) == ETC_INT);
	/* a zero-dim float of a higher category wins, in the reference dtype */
	p[1] = &zd;
	CHECK(ref_result_dtype(&c, p, 2, NULL, 0) == ETC_FLOAT);
	/* Python scalars: an int keeps int32, a float makes it float */
	CHECK(ref_result_dtype(&c, p, 1, &si, 1) == ETC_INT);
	CHECK(ref_result_dtype(&c, p, 1, &sf, 1) == ETC_FLOAT);
	/* bool tensor with an int scalar: int64; with a bool scalar: bool */
	p[0] = &tb;
	CHECK(ref_result_dtype(&c, p, 1, &si, 1) == ETC_LONG);
	CHECK(ref_result_dtype(&c, p, 1, &sb, 1) == ETC_BOOL);
	/* only scalars */
	ref_scalar two[2] = {si, sf};
	CHECK(ref_result_dtype(&c, NULL, 0, two, 2) == ETC_FLOAT);
	c.float_dtype = ETC_DOUBLE;
	CHECK(ref_hold_dtype(&c, ETC_FLOAT) == ETC_DOUBLE);
	CHECK(ref_hold_dtype(&c, ETC_CHAR) == ETC_CHAR);
}

static void test_dims_and_bcast(void)
{
	etc_error err = {0};
	ref_call c = {.node = "n7", .op = "aten.x.default", .float_dtype = ETC_DOUBLE, .err = &err};
	uint32_t d = 99;
	CHECK(ref_norm_dim(&c, -1, 3, &d) == 0 && d == 2);
	CHECK(ref_norm_dim(&c, -3, 3, &d) == 0 && d == 0);
	CHECK(ref_norm_dim(&c, 0, 0, &d) == 0 && d == 0);
	CHECK(ref_norm_dim(&c, -1, 0, &d) == 0 && d == 0);
	CHECK(ref_norm_dim(&c, 3, 3, &d) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "node n7 (aten.x.default)") != NULL);
	CHECK(ref_norm_dim(&c, 1, 0, &d) == ETC_ERR_MISMATCH);

	/* [2, 1] with [3]: result [2, 3], offsets in row-major order */
	int64_t sa[2] = {2, 1}, sb[1] = {3};
	double a[2] = {0}, bv[3] = {0};
	ref_tensor ta = tensor_of(ETC_DOUBLE, 2, sa, a), tb = tensor_of(ETC_DOUBLE, 1, sb, bv);
	const ref_tensor *ts[2] = {&ta, &tb};
	ref_bcast it;
	CHECK(ref_bcast_init(&it, &c, ts, 2) == 0);
	CHECK(it.rank == 2 && it.shape[0] == 2 && it.shape[1] == 3 && it.numel == 6);
	const uint64_t wa[6] = {0, 0, 0, 1, 1, 1}, wb[6] = {0, 1, 2, 0, 1, 2};
	for (int i = 0; i < 6; i++, ref_bcast_next(&it)) {
		CHECK(it.off[0] == wa[i]);
		CHECK(it.off[1] == wb[i]);
	}
	int64_t sc[1] = {2};
	ref_tensor tc = tensor_of(ETC_DOUBLE, 1, sc, a);
	ts[1] = &tc;
	/* [2, 1] with [2] broadcasts to [2, 2]; [3] with [2] does not */
	CHECK(ref_bcast_init(&it, &c, ts, 2) == 0 && it.numel == 4);
	ts[0] = &tb;
	CHECK(ref_bcast_init(&it, &c, ts, 2) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "[3] and [2] do not broadcast") != NULL);
}

static void test_reduce(void)
{
	etc_error err = {0};
	ref_call c = {.node = "n", .op = "op", .float_dtype = ETC_DOUBLE, .err = &err};
	int64_t shape[3] = {2, 3, 4};
	double data[24];
	ref_tensor x = tensor_of(ETC_DOUBLE, 3, shape, data);
	ref_reduce r;
	int64_t dims[2] = {-1, 0};
	CHECK(ref_reduce_init(&r, &c, &x, dims, 2, true) == 0);
	CHECK(r.outer == 3 && r.inner == 8);
	CHECK(r.out_rank == 3 && r.out_shape[0] == 1 && r.out_shape[1] == 3 && r.out_shape[2] == 1);
	/* result 1 (dim 1 index 1) starts at element 4; its 8 elements are
	 * dim 0 x dim 2 in row-major order */
	CHECK(ref_reduce_base(&r, 1) == 4);
	const uint64_t want[8] = {0, 1, 2, 3, 12, 13, 14, 15};
	for (uint64_t k = 0; k < 8; k++)
		CHECK(ref_reduce_at(&r, k) == want[k]);
	ref_reduce_free(&r);
	CHECK(ref_reduce_init(&r, &c, &x, dims, 2, false) == 0);
	CHECK(r.out_rank == 1 && r.out_shape[0] == 3);
	ref_reduce_free(&r);
	/* no dims: everything */
	CHECK(ref_reduce_init(&r, &c, &x, NULL, 0, false) == 0);
	CHECK(r.outer == 1 && r.inner == 24 && r.out_rank == 0);
	ref_reduce_free(&r);
	int64_t twice[2] = {1, -2};
	CHECK(ref_reduce_init(&r, &c, &x, twice, 2, false) == ETC_ERR_MISMATCH);
}

/* A call of relu with hand-built arguments, and the refusals of a bad one. */
static void test_call(void)
{
	etc_error err = {0};
	int64_t shape[1] = {4};
	double in[4] = {-1.5, 0.0, 2.0, NAN};
	ref_tensor x = tensor_of(ETC_DOUBLE, 1, shape, in);
	ref_arg args[1] = {{.name = "self", .kind = REF_ARG_TENSOR, .t = &x}};
	ref_tensor out[2];
	memset(out, 0, sizeof out);
	ref_call c = {"relu_1", "aten.relu.default", args, 1, ETC_DOUBLE, out, 1, &err, {0}};
	const ref_op *op = ref_op_find("aten.relu.default");
	CHECK(op && op->fn(&c) == 0);
	CHECK(out[0].dtype == ETC_DOUBLE && out[0].numel == 4);
	const double *o = out[0].data;
	CHECK_DOUBLE_EXACT(o[0], 0.0);
	CHECK_DOUBLE_EXACT(o[2], 2.0);
	CHECK(isnan(o[3]));
	ref_tensor_free(&out[0]);

	/* two outputs asked of a one-output op */
	c.nouts = 2;
	CHECK(op->fn(&c) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "node relu_1 (aten.relu.default): expected 1 output") != NULL);
	/* self given as an int */
	c.nouts = 1;
	ref_arg bad[1] = {{.name = "self", .kind = REF_ARG_INT, .i = 3}};
	c.args = bad;
	CHECK(op->fn(&c) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "argument self: expected a tensor, got an int") != NULL);
	/* no arguments at all */
	c.nargs = 0;
	CHECK(op->fn(&c) == ETC_ERR_MISMATCH);
	CHECK(strstr(err.message, "expected a tensor, got none") != NULL);
}

int main(void)
{
	CHECK_GROUP(test_find);
	CHECK_GROUP(test_promote);
	CHECK_GROUP(test_result_dtype);
	CHECK_GROUP(test_dims_and_bcast);
	CHECK_GROUP(test_reduce);
	CHECK_GROUP(test_call);
	return check_report("test_ref_ops_a");
}
