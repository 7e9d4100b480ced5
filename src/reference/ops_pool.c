/*
 * ops_pool.c - 2-D pooling (max with and without indices, average,
 * adaptive average) and 2-D upsampling (nearest, bilinear) over the last
 * two dims of [N, C, H, W] or [C, H, W] tensors, with torch's window
 * arithmetic (ceil_mode, padding, dilation, count_include_pad, the scales
 * of interpolate).
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>
#include <math.h>

typedef struct pool_geom {
	int64_t planes; /* N * C */
	int64_t ih, iw, oh, ow;
	int64_t kh, kw, sh, sw, ph, pw, dh, dw;
	uint32_t rank;
	int64_t oshape[4];
} pool_geom;

static int pool_input(const ref_call *c, const ref_tensor *x, bool allow_empty_planes)
{
	char b[160];
	if (x->rank != 3 && x->rank != 4)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, given %s",
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	for (uint32_t d = x->rank == 4 ? 1 : 0; d < x->rank && !allow_empty_planes; d++)
		if (x->shape[d] == 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "expected non-empty channel and spatial dims, given %s",
			                ref_shape_str(b, sizeof b, x->rank, x->shape));
	return 0;
}

/* A 2-entry parameter (one value means both). */
static int pair(const ref_call *c, const char *name, int pos, const int64_t *def, size_t ndef,
                int64_t *a, int64_t *b)
{
	int64_t v[ETC_REF_MAX_RANK];
	size_t n;
	ETC_TRY(refb_ints(c, name, pos, def, ndef, v, &n));
	if (n != 1 && n != 2)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected %s of 1 or 2 values, given %zu",
		                name, n);
	*a = v[0];
	*b = n == 2 ? v[1] : v[0];
	return 0;
}

/* torch's pooling_output_shape: floor or ceil, the last window starting
 * inside the input (or its left padding). */
static int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                        bool ceil_mode)
{
	int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
	int64_t q = num >= 0 ? num / stride : -((-num + stride - 1) / stride);
	int64_t out = q + 1;
	if (ceil_mode && (out - 1) * stride >= in + pad)
		out--;
	return out;
}

/* kernel_size, stride (empty: the kernel), padding, dilation (has_dilation)
 * and ceil_mode at the schema's positions, checked as torch does. */
static int pool_geom_init(const ref_call *c, const ref_tensor *x, bool has_dilation, pool_geom *g,
                          bool *ceil_mode)
{
	char b[160];
	const int64_t zero = 0, one = 1;
	ETC_TRY(pair(c, "kernel_size", 1, NULL, 0, &g->kh, &g->kw));
	int64_t sv[ETC_REF_MAX_RANK];
	size_t ns;
	ETC_TRY(refb_ints(c, "stride", 2, NULL, 0, sv, &ns));
	if (ns == 0) {
		g->sh = g->kh;
		g->sw = g->kw;
	} else {
		ETC_TRY(pair(c, "stride", 2, NULL, 0, &g->sh, &g->sw));
	}
	ETC_TRY(pair(c, "padding", 3, &zero, 1, &g->ph, &g->pw));
	g->dh = g->dw = 1;
	if (has_dilation)
		ETC_TRY(pair(c, "dilation", 4, &one, 1, &g->dh, &g->dw));
	ETC_TRY(refb_bool(c, "ceil_mode", has_dilation ? 5 : 4, false, ceil_mode));
	const int64_t params[8] = {g->kh, g->kw, g->sh, g->sw, g->ph, g->pw, g->dh, g->dw};
	for (int i = 0; i < 8; i++)
		ETC_TRY(refb_check_param(c, "a window parameter", params[i]));
	if (g->kh <= 0 || g->kw <= 0 || g->sh <= 0 || g->sw <= 0 || g->dh <= 0 || g->dw <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "kernel [%" PRId64 ", %" PRId64 "], stride [%" PRId64 ", %" PRId64
		                "], dilation [%" PRId64 ", %" PRId64 "] must be positive",
		                g->kh, g->kw, g->sh, g->sw, g->dh, g->dw);
	if (g->ph < 0 || g->pw < 0 || g->ph > g->kh / 2 || g->pw > g->kw / 2)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "padding [%" PRId64 ", %" PRId64
		                "] must be >= 0 and at most half the kernel [%" PRId64 ", %" PRId64
		                "]",
		                g->ph, g->pw, g->kh, g->kw);
	g->rank = x->rank;
	g->ih = x->shape[x->rank - 2];
	g->iw = x->shape[x->rank - 1];
	g->oh = pool_out(g->ih, g->kh, g->ph, g->sh, g->dh, *ceil_mode);
	g->ow = pool_out(g->iw, g->kw, g->pw, g->sw, g->dw, *ceil_mode);
	if (g->oh <= 0 || g->ow <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input %s gives an output of [%" PRId64 ", %" PRId64
		                "] (too small for the kernel)",
		                ref_shape_str(b, sizeof b, x->rank, x->shape), g->oh, g->ow);
	g->planes = 1;
	for (uint32_t d = 0; d + 2 < x->rank; d++) {
		g->planes *= x->shape[d];
		g->oshape[d] = x->shape[d];
	}
	g->oshape[x->rank - 2] = g->oh;
	g->oshape[x->rank - 1] = g->ow;
	return 0;
}

static int max_pool(ref_call *c, bool with_indices)
{
	const ref_tensor *x;
	pool_geom g;
	bool ceil_mode;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_nouts(c, with_indices ? 2 : 1));
	ETC_TRY(pool_input(c, x, false));
	if (x->dtype == ETC_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "max pooling of a bool tensor");
	ETC_TRY(pool_geom_init(c, x, true, &g, &ceil_mode));
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, g.rank, g.oshape, c->err));
	if (with_indices)
		ETC_TRY(ref_tensor_alloc(&c->outs[1], ETC_LONG, g.rank, g.oshape, c->err));
	bool fl = ref_dtype_is_float(x->dtype);
	size_t es = refb_elem_size(x->dtype);
	for (int64_t p = 0; p < g.planes; p++) {
		uint64_t in0 = (uint64_t)(p * g.ih * g.iw);
		for (int64_t oh = 0; oh < g.oh; oh++)
			for (int64_t ow = 0; ow < g.ow; ow++) {
				/* torch's cpu_max_pool: the window clipped to the input; the
				 * first maximum wins, a NaN always replaces */
				int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
				int64_t h1 = h0 + (g.kh - 1) * g.dh + 1,
				        w1 = w0 + (g.kw - 1) * g.dw + 1;
				h1 = h1 < g.ih ? h1 : g.ih;
				w1 = w1 < g.iw ? w1 : g.iw;
				while (h0 < 0)
					h0 += g.dh;
				while (w0 < 0)
					w0 += g.dw;
				int64_t best = h0 * g.iw + w0;
				double bf = -INFINITY;
				int64_t bi = INT64_MIN;
				bool first = true;
				for (int64_t h = h0; h < h1; h += g.dh)
					for (int64_t w = w0; w < w1; w += g.dw) {
						int64_t at = h * g.iw + w;
						if (fl) {
							double v = ref_get_f(x, in0 + (uint64_t)at);
							if (v > bf || isnan(v)) {
								bf = v;
								best = at;
							}
						} else {
							int64_t v =
							    ref_get_i(x, in0 + (uint64_t)at);
							if (first || v > bi) {
								bi = v;
								best = at;
							}
							first = false;
						}
					}
				uint64_t o = (uint64_t)((p * g.oh + oh) * g.ow + ow);
				if (best >= 0 && best < g.ih * g.iw && (h0 < h1 && w0 < w1))
					memcpy((char *)c->outs[0].data + o * es,
					       (const char *)x->data + (in0 + (uint64_t)best) * es,
					       es);
				else if (fl)
					ref_set_f(&c->outs[0], o, -INFINITY);
				if (with_indices)
					((int64_t *)c->outs[1].data)[o] = best;
			}
	}
	return 0;
}

int ref_op_max_pool2d_with_indices(ref_call *c)
{
	return max_pool(c, true);
}

int ref_op_max_pool2d(ref_call *c)
{
	return max_pool(c, false);
}

int ref_op_avg_pool2d(ref_call *c)
{
	const ref_tensor *x;
	pool_geom g;
	bool ceil_mode, include_pad, has_div;
	int64_t divisor;
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(pool_input(c, x, false));
	ETC_TRY(pool_geom_init(c, x, false, &g, &ceil_mode));
	ETC_TRY(refb_bool(c, "count_include_pad", 5, true, &include_pad));
	ETC_TRY(refb_opt_int(c, "divisor_override", 6, &has_div, &divisor));
	if (has_div && divisor == 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "divisor_override is 0 (expected non-zero)");
	if (x->dtype == ETC_BOOL)
		return ref_fail(c, ETC_ERR_UNSUPPORTED, "average pooling of a bool tensor");
	bool fl = ref_dtype_is_float(x->dtype);
	int dt = fl ? c->float_dtype : x->dtype;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], dt, g.rank, g.oshape, c->err));
	for (int64_t p = 0; p < g.planes; p++) {
		uint64_t in0 = (uint64_t)(p * g.ih * g.iw);
		for (int64_t oh = 0; oh < g.oh; oh++)
			for (int64_t ow = 0; ow < g.ow; ow++) {
				int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
				int64_t h1 = h0 + g.kh, w1 = w0 + g.kw;
				h1 = h1 < g.ih + g.ph ? h1 : g.ih + g.ph;
				w1 = w1 < g.iw + g.pw ? w1 : g.iw + g.pw;
				int64_t pool_size = (h1 - h0) * (w1 - w0);
				h0 = h0 > 0 ? h0 : 0;
				w0 = w0 > 0 ? w0 : 0;
				h1 = h1 < g.ih ? h1 : g.ih;
				w1 = w1 < g.iw ? w1 : g.iw;
				uint64_t o = (uint64_t)((p * g.oh + oh) * g.ow + ow);
				if (h0 >= h1 || w0 >= w1)
					continue; /* zero, as torch */
				int64_t div = has_div       ? divisor
				              : include_pad ? pool_size
				                            : (h1 - h0) * (w1 - w0);
				if (fl) {
					double s = 0;
					for (int64_t h = h0; h < h1; h++)
						for (int64_t w = w0; w < w1; w++)
							s += ref_get_f(
							    x, in0 + (uint64_t)(h * g.iw + w));
					ref_set_f(&c->outs[0], o, s / (double)div);
				} else {
					uint64_t s = 0;
					for (int64_t h = h0; h < h1; h++)
						for (int64_t w = w0; w < w1; w++)
							s += (uint64_t)ref_get_i(
							    x, in0 + (uint64_t)(h * g.iw + w));
					int64_t sv = (int64_t)s;
					ref_set_i(&c->outs[0], o,
					          div == -1 && sv == INT64_MIN ? sv : sv / div);
				}
			}
	}
	return 0;
}

int ref_op_adaptive_avg_pool2d(ref_call *c)
{
	const ref_tensor *x;
	int64_t oh = 0, ow = 0;
	char b[160];
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(pool_input(c, x, false));
	ETC_TRY(pair(c, "output_size", 1, NULL, 0, &oh, &ow));
	if (oh < 0 || ow < 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "output_size [%" PRId64 ", %" PRId64 "] (expected >= 0)", oh, ow);
	if (!ref_dtype_is_float(x->dtype))
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "adaptive average pooling of a %s tensor %s (expected float)",
		                etc_scalar_type_name(x->dtype),
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	int64_t ih = x->shape[x->rank - 2], iw = x->shape[x->rank - 1], planes = 1;
	int64_t osh[4];
	for (uint32_t d = 0; d + 2 < x->rank; d++) {
		planes *= x->shape[d];
		osh[d] = x->shape[d];
	}
	osh[x->rank - 2] = oh;
	osh[x->rank - 1] = ow;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, osh, c->err));
	for (int64_t p = 0; p < planes; p++)
		for (int64_t i = 0; i < oh; i++) {
			int64_t h0 = i * ih / oh, h1 = ((i + 1) * ih + oh - 1) / oh;
			for (int64_t j = 0; j < ow; j++) {
				int64_t w0 = j * iw / ow, w1 = ((j + 1) * iw + ow - 1) / ow;
				double s = 0;
				for (int64_t h = h0; h < h1; h++)
					for (int64_t w = w0; w < w1; w++)
						s +=
						    ref_get_f(x, (uint64_t)((p * ih + h) * iw + w));
				ref_set_f(&c->outs[0], (uint64_t)((p * oh + i) * ow + j),
				          s / (double)((h1 - h0) * (w1 - w0)));
			}
		}
	return 0;
}

/* --- upsampling ------------------------------------------------------------ */

/* The output size and the optional scales of an upsample op: the .vec
 * overloads take output_size or scale_factors, the others output_size and
 * scales_h / scales_w. */
typedef struct up_geom {
	int64_t planes, ih, iw, oh, ow;
	bool has_sh, has_sw;
	double sh, sw;
} up_geom;

static int up_geom_init(const ref_call *c, const ref_tensor *x, bool vec, int pos_size,
                        int pos_scales, up_geom *g)
{
	char b[160];
	if (x->rank != 4)
		return ref_fail(c, ETC_ERR_MISMATCH, "expected a 4-D [N, C, H, W] input, given %s",
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	g->ih = x->shape[2];
	g->iw = x->shape[3];
	g->planes = x->shape[0] * x->shape[1];
	int64_t sz[ETC_REF_MAX_RANK];
	size_t nsz = 0, nsc = 0;
	double sc[ETC_REF_MAX_RANK];
	const ref_arg *size_arg = ref_arg_get(c, vec ? "output_size" : "output_size", pos_size);
	if (size_arg)
		ETC_TRY(refb_ints(c, "output_size", pos_size, NULL, 0, sz, &nsz));
	g->has_sh = g->has_sw = false;
	if (vec) {
		ETC_TRY(refb_floats(c, "scale_factors", pos_scales, sc, &nsc));
		if ((nsz == 0) == (nsc == 0))
			return ref_fail(
			    c, ETC_ERR_MISMATCH,
			    "expected exactly one of output_size and scale_factors, given "
			    "%zu sizes and %zu scales",
			    nsz, nsc);
		if (nsc) {
			if (nsc != 2)
				return ref_fail(c, ETC_ERR_MISMATCH,
				                "expected 2 scale_factors, given %zu", nsc);
			g->has_sh = g->has_sw = true;
			g->sh = sc[0];
			g->sw = sc[1];
			double oh = (double)g->ih * sc[0], ow = (double)g->iw * sc[1];
			if (!(oh >= 0 && oh < (double)ETC_REF_SIZE_MAX && ow >= 0 &&
			      ow < (double)ETC_REF_SIZE_MAX))
				return ref_fail(c, ETC_ERR_MISMATCH,
				                "scale_factors [%g, %g] give no valid output size",
				                sc[0], sc[1]);
			g->oh = (int64_t)oh;
			g->ow = (int64_t)ow;
		}
	} else {
		const ref_arg *a = ref_arg_get(c, "scales_h", pos_scales);
		if (a)
			ETC_TRY(refb_scalar(c, "scales_h", pos_scales, 0, &g->sh));
		g->has_sh = a != NULL;
		a = ref_arg_get(c, "scales_w", pos_scales + 1);
		if (a)
			ETC_TRY(refb_scalar(c, "scales_w", pos_scales + 1, 0, &g->sw));
		g->has_sw = a != NULL;
	}
	if (nsz) {
		if (nsz != 2)
			return ref_fail(c, ETC_ERR_MISMATCH, "expected 2 output sizes, given %zu",
			                nsz);
		g->oh = sz[0];
		g->ow = sz[1];
	} else if (!vec) {
		return ref_fail(c, ETC_ERR_MISMATCH, "argument output_size is missing");
	}
	if (g->oh <= 0 || g->ow <= 0 || g->ih <= 0 || g->iw <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input %s and output size [%" PRId64 ", %" PRId64
		                "] must be non-empty",
		                ref_shape_str(b, sizeof b, x->rank, x->shape), g->oh, g->ow);
	/* torch ignores a non-positive scale (an old default) */
	g->has_sh = g->has_sh && g->sh > 0;
	g->has_sw = g->has_sw && g->sw > 0;
	return 0;
}

/* torch's nearest_idx: exact for 1x and 2x, else floor(o * scale) in float. */
static int64_t nearest_idx(int64_t o, int64_t in, int64_t out, bool has_scale, double scale)
{
	if (out == in)
		return o;
	if (out == 2 * in)
		return o >> 1;
	float s = has_scale ? (float)(1.0 / scale) : (float)in / (float)out;
	int64_t i = (int64_t)floorf((float)o * s);
	return i < in - 1 ? i : in - 1;
}

/* torch's nearest-exact: floor((o + 0.5) * scale), the product rounded to float. */
static int64_t nearest_exact_idx(int64_t o, int64_t in, int64_t out, bool has_scale, double scale)
{
	float s = has_scale ? (float)(1.0 / scale) : (float)in / (float)out;
	int64_t i = (int64_t)floorf((float)(((double)o + 0.5) * (double)s));
	return i < in - 1 ? i : in - 1;
}

static int upsample_nearest(ref_call *c, bool vec, bool exact)
{
	const ref_tensor *x;
	up_geom g;
	ETC_TRY(refb_tensor(c, vec ? "input" : "self", 0, &x));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(up_geom_init(c, x, vec, 1, 2, &g));
	int64_t osh[4] = {x->shape[0], x->shape[1], g.oh, g.ow};
	ETC_TRY(ref_tensor_alloc(&c->outs[0], x->dtype, 4, osh, c->err));
	size_t es = refb_elem_size(x->dtype);
	const char *src = (const char *)x->data;
	char *dst = (char *)c->outs[0].data;
	for (int64_t p = 0; p < g.planes; p++)
		for (int64_t i = 0; i < g.oh; i++) {
			int64_t si = exact ? nearest_exact_idx(i, g.ih, g.oh, g.has_sh, g.sh)
			                   : nearest_idx(i, g.ih, g.oh, g.has_sh, g.sh);
			for (int64_t j = 0; j < g.ow; j++) {
				int64_t sj = exact
				                 ? nearest_exact_idx(j, g.iw, g.ow, g.has_sw, g.sw)
				                 : nearest_idx(j, g.iw, g.ow, g.has_sw, g.sw);
				memcpy(dst + (size_t)((p * g.oh + i) * g.ow + j) * es,
				       src + (size_t)((p * g.ih + si) * g.iw + sj) * es, es);
			}
		}
	return 0;
}

int ref_op_upsample_nearest2d_vec(ref_call *c)
{
	return upsample_nearest(c, true, false);
}

int ref_op_upsample_nearest2d(ref_call *c)
{
	return upsample_nearest(c, false, false);
}

int ref_op_upsample_nearest_exact2d_vec(ref_call *c)
{
	return upsample_nearest(c, true, true);
}

int ref_op_upsample_nearest_exact2d(ref_call *c)
{
	return upsample_nearest(c, false, true);
}

/* torch's area_pixel_compute_scale / _source_index and the clamped index
 * and weight of linear interpolation. */
static void linear_src(int64_t o, int64_t in, int64_t out, bool align, bool has_scale, double scale,
                       int64_t *i0, int64_t *i1, double *l1)
{
	double s;
	if (align)
		s = out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0;
	else
		s = has_scale ? 1.0 / scale : (double)in / (double)out;
	double r = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
	if (!align && r < 0)
		r = 0;
	int64_t i = (int64_t)floor(r);
	if (i > in - 1)
		i = in - 1;
	double l = r - (double)i;
	l = l < 0 ? 0 : (l > 1 ? 1 : l);
	*i0 = i;
	*i1 = i < in - 1 ? i + 1 : i;
	*l1 = l;
}

static int upsample_bilinear(ref_call *c, bool vec)
{
	const ref_tensor *x0, *x;
	up_geom g;
	bool align;
	ref_tensor tmp;
	ETC_TRY(refb_tensor(c, vec ? "input" : "self", 0, &x0));
	ETC_TRY(refb_nouts(c, 1));
	ETC_TRY(refb_bool(c, "align_corners", 2, false, &align));
	ETC_TRY(up_geom_init(c, x0, vec, 1, 3, &g));
	if (!ref_dtype_is_float(x0->dtype))
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "bilinear upsampling of a %s tensor (expected float)",
		                etc_scalar_type_name(x0->dtype));
	ETC_TRY(refb_as_float(c, x0, &tmp, &x));
	int64_t osh[4] = {x->shape[0], x->shape[1], g.oh, g.ow};
	int rc = ref_tensor_alloc(&c->outs[0], c->float_dtype, 4, osh, c->err);
	for (int64_t p = 0; rc == 0 && p < g.planes; p++)
		for (int64_t i = 0; i < g.oh; i++) {
			int64_t h0, h1;
			double lh;
			linear_src(i, g.ih, g.oh, align, g.has_sh, g.sh, &h0, &h1, &lh);
			for (int64_t j = 0; j < g.ow; j++) {
				int64_t w0, w1;
				double lw;
				linear_src(j, g.iw, g.ow, align, g.has_sw, g.sw, &w0, &w1, &lw);
				uint64_t r0 = (uint64_t)((p * g.ih + h0) * g.iw);
				uint64_t r1 = (uint64_t)((p * g.ih + h1) * g.iw);
				double v = (1 - lh) * ((1 - lw) * ref_get_f(x, r0 + (uint64_t)w0) +
				                       lw * ref_get_f(x, r0 + (uint64_t)w1)) +
				           lh * ((1 - lw) * ref_get_f(x, r1 + (uint64_t)w0) +
				                 lw * ref_get_f(x, r1 + (uint64_t)w1));
				ref_set_f(&c->outs[0], (uint64_t)((p * g.oh + i) * g.ow + j), v);
			}
		}
	ref_tensor_free(&tmp);
	return rc;
}

int ref_op_upsample_bilinear2d_vec(ref_call *c)
{
	return upsample_bilinear(c, true);
}

int ref_op_upsample_bilinear2d(ref_call *c)
{
	return upsample_bilinear(c, false);
}

/* --- 1-D pooling: the 2-D ops on [N, C, 1, L] ------------------------------------ */

/*
 * Calls the 2-D op `fn` with self seen as [..., 1, L] and every 1-D window
 * parameter (kernel_size, stride, padding, dilation, output_size, or a
 * positional list at 1..nlists) widened to two dims (1 in H, padding 0),
 * then drops the H dim of the outputs.
 */
static int pool1d(ref_call *c, ref_op_fn fn, int nlists)
{
	const ref_tensor *x;
	char b[160];
	ETC_TRY(refb_tensor(c, "self", 0, &x));
	if (x->rank != 2 && x->rank != 3)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected a 2-D [C, L] or 3-D [N, C, L] input, given %s",
		                ref_shape_str(b, sizeof b, x->rank, x->shape));
	if (c->nargs > 16)
		return ref_fail(c, ETC_ERR_MISMATCH, "%zu arguments", c->nargs);
	ref_tensor x2 = *x;
	x2.borrowed = true;
	x2.rank = x->rank + 1;
	x2.shape[x->rank] = x->shape[x->rank - 1];
	x2.shape[x->rank - 1] = 1;
	ref_arg args[16];
	int64_t lists[16][2];
	static const char *const names[] = {"kernel_size", "stride", "padding", "dilation",
	                                    "output_size"};
	for (size_t i = 0; i < c->nargs; i++) {
		ref_arg a = c->args[i];
		bool is_list = false;
		for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
			if (a.name[0] && strcmp(a.name, names[k]) == 0)
				is_list = true;
		if (!a.name[0] && i >= 1 && (int)i <= nlists)
			is_list = true;
		bool pad = strcmp(a.name, "padding") == 0 || (!a.name[0] && i == 3);
		if (a.kind == REF_ARG_TENSOR && a.t == x) {
			a.t = &x2;
		} else if (is_list && (a.kind == REF_ARG_INT || a.kind == REF_ARG_INTS)) {
			if (a.kind == REF_ARG_INTS && a.n == 0) {
				args[i] = a; /* stride [] stays "the kernel" */
				continue;
			}
			if (a.kind == REF_ARG_INTS && a.n != 1)
				return ref_fail(c, ETC_ERR_MISMATCH,
				                "expected %s of 1 value for a 1-D op, given %zu",
				                a.name[0] ? a.name : "a window parameter", a.n);
			lists[i][0] = pad ? 0 : 1;
			lists[i][1] = a.kind == REF_ARG_INT ? a.i : a.ints[0];
			a.kind = REF_ARG_INTS;
			a.ints = lists[i];
			a.n = 2;
		}
		args[i] = a;
	}
	ref_call c2 = *c;
	c2.args = args;
	ETC_TRY(fn(&c2));
	for (uint32_t k = 0; k < c->nouts; k++) {
		ref_tensor *o = &c->outs[k];
		o->shape[o->rank - 2] = o->shape[o->rank - 1];
		o->rank--;
	}
	return 0;
}

int ref_op_max_pool1d(ref_call *c)
{
	return pool1d(c, ref_op_max_pool2d, 4);
}

int ref_op_max_pool1d_with_indices(ref_call *c)
{
	return pool1d(c, ref_op_max_pool2d_with_indices, 4);
}

int ref_op_avg_pool1d(ref_call *c)
{
	return pool1d(c, ref_op_avg_pool2d, 3);
}

int ref_op_adaptive_avg_pool1d(ref_call *c)
{
	return pool1d(c, ref_op_adaptive_avg_pool2d, 1);
}
