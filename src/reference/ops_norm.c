/*
 * ops_norm.c - layer, group, batch and RMS normalization with torch's
 * outputs: the normalized tensor and, where the op returns them, the
 * statistics (mean and reciprocal standard deviation) in torch's shapes.
 * Statistics are two-pass in double (mean, then the biased variance).
 */
#include "reference/ops.h"
#include "reference/ops_util.h"

#include <inttypes.h>
#include <math.h>

/* Mean and biased variance of n elements at x[off + k * step]. */
static void moments(const ref_tensor *x, uint64_t off, uint64_t n, uint64_t step, double *mean,
                    double *var)
{
	double s = 0, c = 0;
	for (uint64_t k = 0; k < n; k++) {
		double v = ref_get_f(x, off + k * step), t = s + v;
		c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
		s = t;
	}
	double m = n ? (isfinite(s) ? s + c : s) / (double)n : NAN;
	s = c = 0;
	for (uint64_t k = 0; k < n; k++) {
		double d = ref_get_f(x, off + k * step) - m, v = d * d, t = s + v;
		c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
		s = t;
	}
	*mean = m;
	*var = n ? (isfinite(s) ? s + c : s) / (double)n : NAN;
}

static int need_float(ref_call *c, const char *name, const ref_tensor *t)
{
	if (t && ref_dtype_kind(t->dtype) != REF_KIND_FLOAT)
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "argument %s: expected a floating-point tensor, got %s", name,
		                etc_scalar_type_name(t->dtype));
	return 0;
}

/* An optional per-channel tensor (weight, bias, running stats) must have n
 * elements in a 1-d shape. */
static int need_vec(ref_call *c, const char *name, const ref_tensor *t, int64_t n)
{
	if (!t)
		return 0;
	ETC_TRY(need_float(c, name, t));
	if (t->rank != 1 || t->shape[0] != n) {
		char s[160];
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "argument %s: expected shape [%" PRId64 "], got %s", name, n,
		                ref_shape_str(s, sizeof s, t->rank, t->shape));
	}
	return 0;
}

/* native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd) */
int ref_op_native_layer_norm(ref_call *c)
{
	const ref_tensor *x, *w, *b;
	const int64_t *ns;
	size_t nn;
	int64_t one;
	double eps;
	ETC_TRY(ref_check_nouts(c, 3));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_ints(c, "normalized_shape", 1, true, &ns, &nn, &one));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 2, &w));
	ETC_TRY(ref_arg_opt_tensor(c, "bias", 3, &b));
	ETC_TRY(ref_arg_float(c, "eps", 4, &eps));
	ETC_TRY(need_float(c, "input", x));
	char s1[160], s2[160];
	bool ok = nn >= 1 && nn <= x->rank;
	for (size_t k = 0; ok && k < nn; k++)
		ok = x->shape[x->rank - nn + k] == ns[k];
	if (!ok)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input of shape %s does not end with normalized_shape %s",
		                ref_shape_str(s1, sizeof s1, x->rank, x->shape),
		                ref_shape_str(s2, sizeof s2, (uint32_t)nn, ns));
	const ref_tensor *wb[2] = {w, b};
	const char *wbn[2] = {"weight", "bias"};
	for (int k = 0; k < 2; k++) {
		if (!wb[k])
			continue;
		ETC_TRY(need_float(c, wbn[k], wb[k]));
		bool same = wb[k]->rank == nn;
		for (size_t d = 0; same && d < nn; d++)
			same = wb[k]->shape[d] == ns[d];
		if (!same)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "argument %s: expected shape %s, got %s", wbn[k],
			                ref_shape_str(s1, sizeof s1, (uint32_t)nn, ns),
			                ref_shape_str(s2, sizeof s2, wb[k]->rank, wb[k]->shape));
	}
	uint32_t axis = x->rank - (uint32_t)nn;
	uint64_t inner = 1, outer = 1;
	for (uint32_t d = 0; d < x->rank; d++)
		*(d < axis ? &outer : &inner) *= (uint64_t)x->shape[d];
	int64_t sshape[ETC_REF_MAX_RANK];
	for (uint32_t d = 0; d < x->rank; d++)
		sshape[d] = d < axis ? x->shape[d] : 1;
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	ETC_TRY(ref_tensor_alloc(&c->outs[1], c->float_dtype, x->rank, sshape, c->err));
	ETC_TRY(ref_tensor_alloc(&c->outs[2], c->float_dtype, x->rank, sshape, c->err));
	for (uint64_t i = 0; i < outer; i++) {
		double m, v;
		moments(x, i * inner, inner, 1, &m, &v);
		double rstd = 1.0 / sqrt(v + eps);
		for (uint64_t k = 0; k < inner; k++) {
			double y = (ref_get_f(x, i * inner + k) - m) * rstd;
			if (w)
				y *= ref_get_f(w, k);
			if (b)
				y += ref_get_f(b, k);
			ref_set_f(&c->outs[0], i * inner + k, y);
		}
		ref_set_f(&c->outs[1], i, m);
		ref_set_f(&c->outs[2], i, rstd);
	}
	return 0;
}

/* native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd) */
int ref_op_native_group_norm(ref_call *c)
{
	const ref_tensor *x, *w, *b;
	int64_t n, ch, hw, g;
	double eps;
	ETC_TRY(ref_check_nouts(c, 3));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 1, &w));
	ETC_TRY(ref_arg_opt_tensor(c, "bias", 2, &b));
	ETC_TRY(ref_arg_int(c, "N", 3, &n));
	ETC_TRY(ref_arg_int(c, "C", 4, &ch));
	ETC_TRY(ref_arg_int(c, "HxW", 5, &hw));
	ETC_TRY(ref_arg_int(c, "group", 6, &g));
	ETC_TRY(ref_arg_float(c, "eps", 7, &eps));
	ETC_TRY(need_float(c, "input", x));
	char s[160];
	if (x->rank < 2 || x->shape[0] != n || x->shape[1] != ch || n < 0 || ch < 0 || hw < 0 ||
	    (uint64_t)n * (uint64_t)ch * (uint64_t)hw != x->numel)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input of shape %s does not match N=%" PRId64 ", C=%" PRId64
		                ", HxW=%" PRId64,
		                ref_shape_str(s, sizeof s, x->rank, x->shape), n, ch, hw);
	if (g <= 0 || ch % g != 0)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "group %" PRId64 " does not divide the %" PRId64 " channels", g,
		                ch);
	ETC_TRY(need_vec(c, "weight", w, ch));
	ETC_TRY(need_vec(c, "bias", b, ch));
	int64_t sshape[2] = {n, g};
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	ETC_TRY(ref_tensor_alloc(&c->outs[1], c->float_dtype, 2, sshape, c->err));
	ETC_TRY(ref_tensor_alloc(&c->outs[2], c->float_dtype, 2, sshape, c->err));
	uint64_t cpg = (uint64_t)(ch / g), blk = cpg * (uint64_t)hw;
	for (uint64_t i = 0; i < (uint64_t)(n * g); i++) {
		double m, v;
		moments(x, i * blk, blk, 1, &m, &v);
		double rstd = 1.0 / sqrt(v + eps);
		for (uint64_t k = 0; k < blk; k++) {
			uint64_t chn = (i % (uint64_t)g) * cpg + k / (uint64_t)hw;
			double y = (ref_get_f(x, i * blk + k) - m) * rstd;
			if (w)
				y *= ref_get_f(w, chn);
			if (b)
				y += ref_get_f(b, chn);
			ref_set_f(&c->outs[0], i * blk + k, y);
		}
		ref_set_f(&c->outs[1], i, m);
		ref_set_f(&c->outs[2], i, rstd);
	}
	return 0;
}

/*
 * Batch norm over channel dim 1. With running stats (eval): y = (x - rm) /
 * sqrt(rv + eps) * w + b. Without (training or no_stats): the batch's mean
 * and biased variance per channel, returned as save_mean and save_invstd.
 */
static int batch_norm_run(ref_call *c, const ref_tensor *x, const ref_tensor *w,
                          const ref_tensor *b, const ref_tensor *rm, const ref_tensor *rv,
                          bool use_batch, double eps, uint32_t nouts)
{
	char s[160];
	ETC_TRY(need_float(c, "input", x));
	if (x->rank < 2)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input: expected at least 2 dims (N, C, ...), got shape %s",
		                ref_shape_str(s, sizeof s, x->rank, x->shape));
	int64_t ch = x->shape[1];
	ETC_TRY(need_vec(c, "weight", w, ch));
	ETC_TRY(need_vec(c, "bias", b, ch));
	ETC_TRY(need_vec(c, "running_mean", rm, ch));
	ETC_TRY(need_vec(c, "running_var", rv, ch));
	if (!use_batch && (!rm || !rv))
		return ref_fail(
		    c, ETC_ERR_MISMATCH,
		    "expected running_mean and running_var in evaluation mode, got None");
	uint64_t n = (uint64_t)x->shape[0], inner = 1;
	for (uint32_t d = 2; d < x->rank; d++)
		inner *= (uint64_t)x->shape[d];
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	int64_t sshape[1] = {use_batch ? ch : 0};
	for (uint32_t k = 1; k < nouts; k++)
		ETC_TRY(ref_tensor_alloc(&c->outs[k], c->float_dtype, 1, sshape, c->err));
	for (int64_t ci = 0; ci < ch; ci++) {
		double m, v;
		if (use_batch) {
			/* the channel's n * inner elements, gathered plane by plane */
			double s1 = 0;
			uint64_t cnt = n * inner;
			for (uint64_t ni = 0; ni < n; ni++) {
				double pm, pv;
				moments(x, (ni * (uint64_t)ch + (uint64_t)ci) * inner, inner, 1,
				        &pm, &pv);
				s1 += pm * (double)inner;
			}
			m = cnt ? s1 / (double)cnt : NAN;
			double s2 = 0;
			for (uint64_t ni = 0; ni < n; ni++)
				for (uint64_t k = 0; k < inner; k++) {
					double d =
					    ref_get_f(
					        x, (ni * (uint64_t)ch + (uint64_t)ci) * inner + k) -
					    m;
					s2 += d * d;
				}
			v = cnt ? s2 / (double)cnt : NAN;
		} else {
			m = ref_get_f(rm, (uint64_t)ci);
			v = ref_get_f(rv, (uint64_t)ci);
		}
		double inv = 1.0 / sqrt(v + eps);
		double sc = w ? ref_get_f(w, (uint64_t)ci) : 1.0,
		       sh = b ? ref_get_f(b, (uint64_t)ci) : 0;
		for (uint64_t ni = 0; ni < n; ni++) {
			uint64_t base = (ni * (uint64_t)ch + (uint64_t)ci) * inner;
			for (uint64_t k = 0; k < inner; k++)
				ref_set_f(&c->outs[0], base + k,
				          (ref_get_f(x, base + k) - m) * inv * sc + sh);
		}
		if (use_batch && nouts == 3) {
			ref_set_f(&c->outs[1], (uint64_t)ci, m);
			ref_set_f(&c->outs[2], (uint64_t)ci, inv);
		}
	}
	return 0;
}

/* _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean,
 * running_var, momentum, eps) -> (out, [0], [0]) as ExecuTorch records it */
int ref_op_batch_norm_no_training(ref_call *c)
{
	const ref_tensor *x, *w, *b, *rm, *rv;
	double eps;
	ETC_TRY(ref_check_nouts(c, 3));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 1, &w));
	ETC_TRY(ref_arg_opt_tensor(c, "bias", 2, &b));
	ETC_TRY(ref_arg_tensor(c, "running_mean", 3, &rm));
	ETC_TRY(ref_arg_tensor(c, "running_var", 4, &rv));
	ETC_TRY(ref_arg_float(c, "eps", 6, &eps));
	return batch_norm_run(c, x, w, b, rm, rv, false, eps, 3);
}

/* _native_batch_norm_legit.no_stats(input, weight?, bias?, training, momentum, eps) */
int ref_op_batch_norm_no_stats(ref_call *c)
{
	const ref_tensor *x, *w, *b;
	double eps;
	ETC_TRY(ref_check_nouts(c, 3));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 1, &w));
	ETC_TRY(ref_arg_opt_tensor(c, "bias", 2, &b));
	ETC_TRY(ref_arg_float(c, "eps", 5, &eps));
	return batch_norm_run(c, x, w, b, NULL, NULL, true, eps, 3);
}

/* native_batch_norm(input, weight?, bias?, running_mean?, running_var?,
 * training, momentum, eps) -> (out, save_mean, save_invstd); batch_norm(...,
 * cudnn_enabled) -> out. Training mode normalizes with the batch's
 * statistics (the running stats' update is a side effect not modelled). */
static int batch_norm_full(ref_call *c, uint32_t nouts)
{
	const ref_tensor *x, *w, *b, *rm, *rv;
	bool training;
	double eps;
	ETC_TRY(ref_check_nouts(c, nouts));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 1, &w));
	ETC_TRY(ref_arg_opt_tensor(c, "bias", 2, &b));
	ETC_TRY(ref_arg_opt_tensor(c, "running_mean", 3, &rm));
	ETC_TRY(ref_arg_opt_tensor(c, "running_var", 4, &rv));
	ETC_TRY(ref_arg_bool_or(c, "training", 5, false, &training));
	ETC_TRY(ref_arg_float(c, "eps", 7, &eps));
	return batch_norm_run(c, x, w, b, rm, rv, training, eps, nouts);
}

int ref_op_native_batch_norm(ref_call *c)
{
	return batch_norm_full(c, 3);
}

int ref_op_batch_norm(ref_call *c)
{
	return batch_norm_full(c, 1);
}

/* rms_norm(input, normalized_shape, weight?, eps?): x / sqrt(mean(x^2) + eps)
 * * weight over the trailing dims; eps None is the reference dtype's epsilon. */
int ref_op_rms_norm(ref_call *c)
{
	const ref_tensor *x, *w;
	const int64_t *ns;
	size_t nn;
	int64_t one;
	double eps;
	ETC_TRY(ref_check_nouts(c, 1));
	ETC_TRY(ref_arg_tensor(c, "input", 0, &x));
	ETC_TRY(ref_arg_ints(c, "normalized_shape", 1, true, &ns, &nn, &one));
	ETC_TRY(ref_arg_opt_tensor(c, "weight", 2, &w));
	ETC_TRY(ref_arg_float_or(
	    c, "eps", 3,
	    c->float_dtype == ETC_FLOAT ? 1.1920928955078125e-07 : 2.220446049250313e-16, &eps));
	ETC_TRY(need_float(c, "input", x));
	char s1[160], s2[160];
	bool ok = nn >= 1 && nn <= x->rank;
	for (size_t k = 0; ok && k < nn; k++)
		ok = x->shape[x->rank - nn + k] == ns[k];
	if (!ok)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "input of shape %s does not end with normalized_shape %s",
		                ref_shape_str(s1, sizeof s1, x->rank, x->shape),
		                ref_shape_str(s2, sizeof s2, (uint32_t)nn, ns));
	uint64_t inner = 1;
	for (size_t k = 0; k < nn; k++)
		inner *= (uint64_t)ns[k];
	if (w) {
		ETC_TRY(need_float(c, "weight", w));
		if (w->numel != inner)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "argument weight: expected shape %s, got %s",
			                ref_shape_str(s1, sizeof s1, (uint32_t)nn, ns),
			                ref_shape_str(s2, sizeof s2, w->rank, w->shape));
	}
	ETC_TRY(ref_tensor_alloc(&c->outs[0], c->float_dtype, x->rank, x->shape, c->err));
	uint64_t outer = inner ? x->numel / inner : 0;
	for (uint64_t i = 0; i < outer; i++) {
		double s = 0;
		for (uint64_t k = 0; k < inner; k++) {
			double v = ref_get_f(x, i * inner + k);
			s += v * v;
		}
		double r = 1.0 / sqrt(s / (double)inner + eps);
		for (uint64_t k = 0; k < inner; k++)
			ref_set_f(&c->outs[0], i * inner + k,
			          ref_get_f(x, i * inner + k) * r * (w ? ref_get_f(w, k) : 1.0));
	}
	return 0;
}
