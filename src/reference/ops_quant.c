/*
 * ops_quant.c - the quantized_decomposed ops (torch/ao/quantization/fx/
 * _decomposed.py), computed in float32 as their definitions are whatever
 * the reference dtype, so that the integer values are bit-exact:
 *
 *   quantize:   clamp(round(x * (float)(1 / scale)) + zero_point, qmin, qmax)
 *               x cast to float32, round half to even (nearbyintf)
 *   dequantize: ((float)q - zero_point) * (float)scale, in float32
 *
 * Float results (dequantized values, choose_qparams' scale) are float32
 * values stored in the reference dtype.
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <inttypes.h>
#include <math.h>

static int qbounds(int dtype, int64_t *lo, int64_t *hi)
{
	switch (dtype) {
	case ETC_BYTE:
		*lo = 0, *hi = 255;
		return 0;
	case ETC_CHAR:
		*lo = -128, *hi = 127;
		return 0;
	case ETC_SHORT:
		*lo = -32768, *hi = 32767;
		return 0;
	case ETC_INT:
		*lo = INT32_MIN, *hi = INT32_MAX;
		return 0;
	default:
		return -1;
	}
}

/* The quantized dtype argument and, with `check`, the range checks
 * _decomposed.py makes (dequantize_per_tensor makes none). */
static int qrange_args(ref_call *c, int pos, int64_t *qmin, int64_t *qmax, int *dtype, bool check)
{
	int64_t lo, hi;
	ETC_TRY(ref_arg_int(c, "quant_min", pos, qmin));
	ETC_TRY(ref_arg_int(c, "quant_max", pos + 1, qmax));
	ETC_TRY(ref_arg_dtype_or_none(c, "dtype", pos + 2, dtype));
	if (*dtype < 0 || qbounds(*dtype, &lo, &hi) < 0)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "argument dtype: expected uint8, int8, int16 or int32, got %s",
		                *dtype < 0 ? "None" : etc_scalar_type_name(*dtype));
	if (check && (*qmin < lo || *qmax > hi || *qmin > *qmax))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "quant_min %" PRId64 " / quant_max %" PRId64
		                " are out of the range [%" PRId64 ", %" PRId64 "] of %s",
		                *qmin, *qmax, lo, hi, etc_scalar_type_name(*dtype));
	return 0;
}

static int64_t quantize_one(float x, float inv_scale, int64_t zp, int64_t qmin, int64_t qmax)
{
	float r = nearbyintf(x * inv_scale);
	float v = r + (float)zp;
	if (!(v == v))
		return qmin; /* NaN: torch's clamp keeps NaN, .to(int) is undefined */
	if (v < (float)qmin)
		return qmin;
	if (v > (float)qmax)
		return qmax;
	return (int64_t)v;
}

/* The one element of a scale or zero_point tensor (the .tensor variants). */
static int one_value(ref_call *c, const char *name, const ref_tensor *t, bool want_float, double *f,
                     int64_t *i)
{
	if (t->numel != 1)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected one element, got %" PRIu64, name, t->numel);
	if (want_float)
		*f = ref_get_f(t, 0);
	else if (ref_dtype_kind(t->dtype) == REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected an integer tensor, got %s", name,
		                etc_scalar_type_name(t->dtype));
	else
		*i = ref_get_i(t, 0);
	return 0;
}

static int need_float_input(ref_call *c, const ref_tensor *x)
{
	if (ref_dtype_kind(x->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument input: expected a float32 tensor, got %s",
		                etc_scalar_type_name(x->dtype));
	return 0;
}

/* Reads scale and zero_point as scalars (.default) or one-element tensors (.tensor). */
static int per_tensor_qparams(ref_call *c, bool tensors, double *scale, int64_t *zp)
{
	if (!tensors) {
		ETC_TRY(ref_arg_float(c, "scale", 1, scale));
		return ref_arg_int(c, "zero_point", 2, zp);
	}
	const ref_tensor *ts, *tz;
	ETC_TRY(ref_arg_tensor(c, "scale", 1, &ts));
	ETC_TRY(ref_arg_tensor(c, "zero_point", 2, &tz));
	ETC_TRY(one_value(c, "scale", ts, true, scale, NULL));
	return one_value(c, "zero_point", tz, false, NULL, zp);
}

static int quantize_per_tensor(ref_call *c, bool tensors)
{
	const ref_tensor *x;
	double scale;
	int64_t zp, qmin, qmax;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(per_tensor_qparams(c, tensors, &scale, &zp));
	ETC_TRY(qrange_args(c, 3, &qmin, &qmax, &dtype, true));
	ETC_TRY(need_float_input(c, x));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], dtype, x->rank, x->shape, c->err));
	/* inv_scale = 1.0 / scale is a Python float; torch's float32 multiply
	 * takes it rounded to float32. */
	float inv = (float)(1.0 / scale);
	for (uint64_t i = 0; i < x->numel; i++)
		ref_set_i(&c->outs[0], i,
		          quantize_one((float)ref_get_f(x, i), inv, zp, qmin, qmax));
	return 0;
}

int ref_op_quantize_per_tensor(ref_call *c)
{
	return quantize_per_tensor(c, false);
}

int ref_op_quantize_per_tensor_tensor(ref_call *c)
{
	return quantize_per_tensor(c, true);
}

/* The optional out_dtype keyword: None or a float dtype (held in the reference dtype). */
static int out_dtype_arg(ref_call *c, int pos)
{
	int od;
	ETC_TRY(ref_arg_dtype_or_none(c, "out_dtype", pos, &od));
	if (od >= 0 && ref_dtype_kind(od) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "argument out_dtype: expected a float dtype, got %s",
		                etc_scalar_type_name(od));
	return 0;
}

static int need_qinput(ref_call *c, const ref_tensor *x, int dtype)
{
	if (x->dtype != dtype)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument input: expected dtype %s, got %s",
		                etc_scalar_type_name(dtype), etc_scalar_type_name(x->dtype));
	return 0;
}

static int dequantize_per_tensor(ref_call *c, bool tensors)
{
	const ref_tensor *x;
	double scale;
	int64_t zp, qmin, qmax;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(per_tensor_qparams(c, tensors, &scale, &zp));
	ETC_TRY(qrange_args(c, 3, &qmin, &qmax, &dtype, false));
	ETC_TRY(out_dtype_arg(c, 6));
	ETC_TRY(need_qinput(c, x, dtype));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	float s = (float)scale, z = (float)zp;
	for (uint64_t i = 0; i < x->numel; i++) {
		float v = ((float)ref_get_i(x, i) - z) * s;
		ref_set_f(&c->outs[0], i, (double)v);
	}
	return 0;
}

int ref_op_dequantize_per_tensor(ref_call *c)
{
	return dequantize_per_tensor(c, false);
}

int ref_op_dequantize_per_tensor_tensor(ref_call *c)
{
	return dequantize_per_tensor(c, true);
}

/* scales (float) and zero_points (int, or None where allowed) of one per
 * channel op: one entry per index of dim `axis`. */
static int per_channel_args(ref_call *c, const ref_tensor *x, bool zp_optional,
                            const ref_tensor **sc, const ref_tensor **zp, uint32_t *axis)
{
	int64_t a;
	ETC_TRY(ref_arg_tensor(c, "scales", 1, sc));
	if (zp_optional)
		ETC_TRY(ref_arg_opt_tensor(c, "zero_points", 2, zp));
	else
		ETC_TRY(ref_arg_tensor(c, "zero_points", 2, zp));
	ETC_TRY(ref_arg_int(c, "axis", 3, &a));
	if (x->rank == 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument input: expected at least 1 dim, got 0");
	ETC_TRY(ref_norm_dim(c, a, x->rank, axis));
	int64_t n = x->shape[*axis];
	if ((*sc)->numel != (uint64_t)n)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument scales: expected %" PRId64
		                " elements (size of dim %u), got "
		                "%" PRIu64,
		                n, *axis, (*sc)->numel);
	if (ref_dtype_kind((*sc)->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument scales: expected floats, got %s",
		                etc_scalar_type_name((*sc)->dtype));
	if (*zp && (*zp)->numel != (uint64_t)n)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument zero_points: expected %" PRId64 " elements (size of dim "
		                "%u), got %" PRIu64,
		                n, *axis, (*zp)->numel);
	return 0;
}

/* The channel (index along axis) of element i. */
static uint64_t channel_of(const ref_tensor *x, uint32_t axis, uint64_t i)
{
	uint64_t inner = 1;
	for (uint32_t d = axis + 1; d < x->rank; d++)
		inner *= (uint64_t)x->shape[d];
	return (i / inner) % (uint64_t)x->shape[axis];
}

/* quantize_per_channel(input, scales, zero_points, axis, quant_min, quant_max, dtype):
 * torch.round(input * (1.0 / scales)) + zero_points with scales a float32
 * tensor: 1 / scale is a float32 division. */
int ref_op_quantize_per_channel(ref_call *c)
{
	const ref_tensor *x, *sc, *zp;
	uint32_t axis;
	int64_t qmin, qmax;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(per_channel_args(c, x, false, &sc, &zp, &axis));
	ETC_TRY(qrange_args(c, 4, &qmin, &qmax, &dtype, true));
	ETC_TRY(need_float_input(c, x));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], dtype, x->rank, x->shape, c->err));
	for (uint64_t i = 0; i < x->numel; i++) {
		uint64_t ch = channel_of(x, axis, i);
		float inv = 1.0f / (float)ref_get_f(sc, ch);
		ref_set_i(&c->outs[0], i,
		          quantize_one((float)ref_get_f(x, i), inv, ref_get_i(zp, ch), qmin, qmax));
	}
	return 0;
}

/* dequantize_per_channel(input, scales, zero_points?, axis, quant_min, quant_max,
 * dtype, *, out_dtype=None): (input - zero_points) * scales in float32. */
int ref_op_dequantize_per_channel(ref_call *c)
{
	const ref_tensor *x, *sc, *zp;
	uint32_t axis;
	int64_t qmin, qmax;
	int dtype;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(per_channel_args(c, x, true, &sc, &zp, &axis));
	ETC_TRY(qrange_args(c, 4, &qmin, &qmax, &dtype, true));
	ETC_TRY(out_dtype_arg(c, 7));
	ETC_TRY(need_qinput(c, x, dtype));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	for (uint64_t i = 0; i < x->numel; i++) {
		uint64_t ch = channel_of(x, axis, i);
		int64_t q = ref_get_i(x, i) - (zp ? ref_get_i(zp, ch) : 0);
		float v = (float)q * (float)ref_get_f(sc, ch);
		ref_set_f(&c->outs[0], i, (double)v);
	}
	return 0;
}

/*
 * choose_qparams.tensor(input, quant_min, quant_max, eps, dtype) ->
 * (scale [1], zero_point [1]): torch.ao's determine_qparams (per tensor
 * affine) on aminmax(input), in float32.
 */
int ref_op_choose_qparams(ref_call *c)
{
	const ref_tensor *x;
	int64_t qmin, qmax;
	double eps;
	int dtype;
	int64_t lo, hi;
	ETC_TRY(ref_check_nouts(c, 2));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_int(c, "quant_min", 1, &qmin));
	ETC_TRY(ref_arg_int(c, "quant_max", 2, &qmax));
	ETC_TRY(ref_arg_float(c, "eps", 3, &eps));
	ETC_TRY(ref_arg_dtype_or_none(c, "dtype", 4, &dtype));
	if (dtype < 0 || qbounds(dtype, &lo, &hi) < 0)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "argument dtype: expected uint8, int8, int16 or int32, got %s",
		                dtype < 0 ? "None" : etc_scalar_type_name(dtype));
	if (qmin > 0 || qmax < 0 || qmin >= qmax)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "quant_min %" PRId64 " and quant_max %" PRId64
		                " must satisfy quant_min <= 0 <= quant_max, quant_min < quant_max",
		                qmin, qmax);
	ETC_TRY(need_float_input(c, x));
	if (x->numel == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "argument input: expected elements, got none");
	float mn = (float)ref_get_f(x, 0), mx = mn;
	for (uint64_t i = 1; i < x->numel; i++) {
		float v = (float)ref_get_f(x, i);
		mn = v < mn ? v : mn;
		mx = v > mx ? v : mx;
	}
	float mneg = mn < 0 ? mn : 0.0f, mpos = mx > 0 ? mx : 0.0f;
	float scale = (mpos - mneg) / (float)(double)(qmax - qmin);
	float fe = (float)eps;
	scale = scale > fe ? scale : fe;
	int64_t z = qmin - (int64_t)(int32_t)nearbyintf(mneg / scale);
	z = z < qmin ? qmin : z > qmax ? qmax : z;
	int64_t one = 1;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, 1, &one, c->err));
	ETC_TRY(ref_tensor_alloc(&c->outs[1], ETC_LONG, 1, &one, c->err));
	ref_set_f(&c->outs[0], 0, (double)scale);
	ref_set_i(&c->outs[1], 0, z);
	return 0;
}
