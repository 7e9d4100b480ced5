/*
 * ops_conv.c - aten.convolution in 1, 2 and 3 spatial dimensions, direct
 * and transposed, as im2col (col2im) and one GEMM per image and group
 * through OpenBLAS in the reference dtype.
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>

#define CONV_MAX_ND 3

typedef struct conv_geom {
	uint32_t nd;
	int64_t in[CONV_MAX_ND], out[CONV_MAX_ND], k[CONV_MAX_ND];
	int64_t s[CONV_MAX_ND], p[CONV_MAX_ND], d[CONV_MAX_ND], op[CONV_MAX_ND];
	int64_t K;   /* kernel positions */
	int64_t L;   /* output positions */
	int64_t Lin; /* input positions */
} conv_geom;

/* Splits a linear index over `shape` (nd dims) into a multi-index. */
static void unravel(int64_t i, uint32_t nd, const int64_t *shape, int64_t *idx)
{
	for (uint32_t d = nd; d-- > 0;) {
		idx[d] = i % shape[d];
		i /= shape[d];
	}
}

/*
 * col[(c * K + kk) * L + l] = x[c][o * s - p + kk * d] (0 outside): the
 * columns of Cg input planes of Lin elements each.
 */
static void im2col(const char *x, char *col, size_t es, int64_t cg, const conv_geom *g)
{
	uint32_t nd = g->nd, last = nd - 1;
	int64_t kk[CONV_MAX_ND], o[CONV_MAX_ND];
	int64_t outer = g->L / g->out[last];
	memset(col, 0, (size_t)(cg * g->K * g->L) * es);
	for (int64_t c = 0; c < cg; c++) {
		const char *plane = x + (size_t)(c * g->Lin) * es;
		for (int64_t kid = 0; kid < g->K; kid++) {
			unravel(kid, nd, g->k, kk);
			char *row = col + (size_t)((c * g->K + kid) * g->L) * es;
			for (int64_t oi = 0; oi < outer; oi++) {
				unravel(oi, last, g->out, o);
				int64_t base = 0;
				bool inside = true;
				for (uint32_t d = 0; d < last; d++) {
					int64_t ip = o[d] * g->s[d] - g->p[d] + kk[d] * g->d[d];
					if (ip < 0 || ip >= g->in[d])
						inside = false;
					base = base * g->in[d] + ip;
				}
				if (!inside)
					continue;
				base *= g->in[last];
				char *dst = row + (size_t)(oi * g->out[last]) * es;
				int64_t off = kk[last] * g->d[last] - g->p[last];
				for (int64_t ol = 0; ol < g->out[last]; ol++) {
					int64_t ip = ol * g->s[last] + off;
					if (ip >= 0 && ip < g->in[last])
						memcpy(dst + (size_t)ol * es,
						       plane + (size_t)(base + ip) * es, es);
				}
			}
		}
	}
}

/*
 * The transposed scatter: y[c][i * s - p + kk * d] += col[(c * K + kk) *
 * Lin + i] for the Cg output planes (of L elements) of one group.
 */
static void col2im(const char *col, char *y, int dtype, int64_t cg, const conv_geom *g)
{
	uint32_t nd = g->nd, last = nd - 1;
	int64_t kk[CONV_MAX_ND], i[CONV_MAX_ND];
	int64_t outer = g->Lin / g->in[last];
	size_t es = refb_elem_size(dtype);
	for (int64_t c = 0; c < cg; c++) {
		char *plane = y + (size_t)(c * g->L) * es;
		for (int64_t kid = 0; kid < g->K; kid++) {
			unravel(kid, nd, g->k, kk);
			const char *row = col + (size_t)((c * g->K + kid) * g->Lin) * es;
			for (int64_t ii = 0; ii < outer; ii++) {
				unravel(ii, last, g->in, i);
				int64_t base = 0;
				bool inside = true;
				for (uint32_t d = 0; d < last; d++) {
					int64_t op = i[d] * g->s[d] - g->p[d] + kk[d] * g->d[d];
					if (op < 0 || op >= g->out[d])
						inside = false;
					base = base * g->out[d] + op;
				}
				if (!inside)
					continue;
				base *= g->out[last];
				int64_t off = kk[last] * g->d[last] - g->p[last];
				int64_t src0 = ii * g->in[last];
				for (int64_t il = 0; il < g->in[last]; il++) {
					int64_t op = il * g->s[last] + off;
					if (op < 0 || op >= g->out[last])
						continue;
					if (dtype == ETC_DOUBLE)
						((double *)plane)[base + op] +=
						    ((const double *)row)[src0 + il];
					else
						((float *)plane)[base + op] +=
						    ((const float *)row)[src0 + il];
				}
			}
		}
	}
}

/* A per-dimension parameter: one value for all dims or one per dim. */
static int conv_param(const ref_call *c, const char *name, int pos, int64_t def, uint32_t nd,
                      int64_t *out)
{
	int64_t v[ETC_REF_MAX_RANK];
	size_t n;
	ETC_TRY(refb_ints(c, name, pos, &def, 1, v, &n));
	if (n != 1 && n != nd)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected %s of 1 or %u values, given %zu (for a %uD convolution)",
		                name, nd, n, nd);
	for (uint32_t d = 0; d < nd; d++)
		out[d] = n == 1 ? v[0] : v[d];
	return 0;
}

int ref_op_convolution(ref_call *c)
{
	const ref_tensor *x0, *w0, *b0;
	bool transposed;
	int64_t groups;
	char b1[160], b2[160];
	ETC_TRY(refb_tensor(c, "input", 0, &x0));
	ETC_TRY(refb_tensor(c, "weight", 1, &w0));
	ETC_TRY(refb_opt_tensor(c, "bias", 2, &b0));
	ETC_TRY(refb_bool(c, "transposed", 6, false, &transposed));
	ETC_TRY(refb_int(c, "groups", 8, 1, &groups));
	ETC_TRY(refb_nouts(c, 1));
	if (w0->rank < 3 || w0->rank > 2 + CONV_MAX_ND || x0->rank != w0->rank)
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected input [N, C, *spatial] and weight of the same rank 3 to "
		                "5, given input %s and weight %s",
		                ref_shape_str(b1, sizeof b1, x0->rank, x0->shape),
		                ref_shape_str(b2, sizeof b2, w0->rank, w0->shape));
	conv_geom g = {.nd = w0->rank - 2};
	uint32_t nd = g.nd;
	ETC_TRY(conv_param(c, "stride", 3, 1, nd, g.s));
	ETC_TRY(conv_param(c, "padding", 4, 0, nd, g.p));
	ETC_TRY(conv_param(c, "dilation", 5, 1, nd, g.d));
	ETC_TRY(conv_param(c, "output_padding", 7, 0, nd, g.op));
	if (!ref_dtype_is_float(x0->dtype) || !ref_dtype_is_float(w0->dtype) ||
	    (b0 && !ref_dtype_is_float(b0->dtype)))
		return ref_fail(c, ETC_ERR_UNSUPPORTED,
		                "convolution of %s input and %s weight (expected float tensors)",
		                etc_scalar_type_name(x0->dtype), etc_scalar_type_name(w0->dtype));
	if (groups <= 0)
		return ref_fail(c, ETC_ERR_MISMATCH, "groups %" PRId64 " (expected > 0)", groups);
	for (uint32_t d = 0; d < nd; d++) {
		if (g.s[d] <= 0 || g.d[d] <= 0 || g.p[d] < 0 || g.op[d] < 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "stride %" PRId64 ", dilation %" PRId64 ", padding %" PRId64
			                ", output_padding %" PRId64
			                " in dim %u (expected stride, dilation > 0, paddings >= 0)",
			                g.s[d], g.d[d], g.p[d], g.op[d], d);
		if (transposed && g.op[d] >= g.s[d] && g.op[d] >= g.d[d])
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "output_padding %" PRId64
			                " must be smaller than stride %" PRId64
			                " or dilation %" PRId64,
			                g.op[d], g.s[d], g.d[d]);
		if (!transposed && g.op[d] != 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "output_padding %" PRId64
			                " of a direct convolution (expected 0)",
			                g.op[d]);
	}
	int64_t N = x0->shape[0], Cin = x0->shape[1], Cout;
	int64_t cin_g, cout_g;
	if (transposed) {
		cin_g = w0->shape[0] / groups;
		cout_g = w0->shape[1];
		Cout = cout_g * groups;
		if (w0->shape[0] != Cin || Cin % groups != 0)
			return ref_fail(
			    c, ETC_ERR_MISMATCH,
			    "transposed weight %s expects %" PRId64 " input channels in %" PRId64
			    " groups, input %s has %" PRId64,
			    ref_shape_str(b1, sizeof b1, w0->rank, w0->shape), w0->shape[0], groups,
			    ref_shape_str(b2, sizeof b2, x0->rank, x0->shape), Cin);
	} else {
		Cout = w0->shape[0];
		cin_g = w0->shape[1];
		cout_g = Cout / groups;
		if (cin_g * groups != Cin || Cout % groups != 0)
			return ref_fail(
			    c, ETC_ERR_MISMATCH,
			    "weight %s with groups %" PRId64 " expects %" PRId64
			    " input channels (and output channels divisible by groups), "
			    "input %s has %" PRId64,
			    ref_shape_str(b1, sizeof b1, w0->rank, w0->shape), groups,
			    cin_g * groups, ref_shape_str(b2, sizeof b2, x0->rank, x0->shape), Cin);
	}
	if (b0 && (b0->rank != 1 || b0->shape[0] != Cout))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "expected bias of shape [%" PRId64 "], given %s", Cout,
		                ref_shape_str(b1, sizeof b1, b0->rank, b0->shape));
	g.K = g.L = g.Lin = 1;
	for (uint32_t d = 0; d < nd; d++) {
		int64_t in = x0->shape[2 + d], k = w0->shape[2 + d], ext = g.d[d] * (k - 1) + 1;
		g.in[d] = in;
		g.k[d] = k;
		if (transposed)
			g.out[d] = (in - 1) * g.s[d] - 2 * g.p[d] + ext + g.op[d];
		else if (in + 2 * g.p[d] < ext)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "input %s padded by %" PRId64
			                " is smaller than the dilated "
			                "kernel %s in dim %u",
			                ref_shape_str(b1, sizeof b1, x0->rank, x0->shape), g.p[d],
			                ref_shape_str(b2, sizeof b2, w0->rank, w0->shape), d);
		else
			g.out[d] = (in + 2 * g.p[d] - ext) / g.s[d] + 1;
		if (g.out[d] <= 0 || in <= 0 || k <= 0)
			return ref_fail(c, ETC_ERR_MISMATCH,
			                "input %s and weight %s give an empty output in dim %u",
			                ref_shape_str(b1, sizeof b1, x0->rank, x0->shape),
			                ref_shape_str(b2, sizeof b2, w0->rank, w0->shape), d);
		g.K *= k;
		g.L *= g.out[d];
		g.Lin *= in;
	}

	int dt = c->float_dtype;
	size_t es = refb_elem_size(dt);
	ref_tensor tx, tw, tb, col = {0};
	const ref_tensor *x, *w, *b = NULL;
	ETC_TRY(refb_as_float(c, x0, &tx, &x));
	int rc = refb_as_float(c, w0, &tw, &w);
	memset(&tb, 0, sizeof tb);
	if (rc == 0 && b0)
		rc = refb_as_float(c, b0, &tb, &b);
	int64_t osh[2 + CONV_MAX_ND] = {N, Cout};
	for (uint32_t d = 0; d < nd; d++)
		osh[2 + d] = g.out[d];
	if (rc == 0)
		rc = ref_tensor_alloc(&c->outs[0], dt, 2 + nd, osh, c->err);
	ref_tensor *y = &c->outs[0];
	if (rc == 0 && b) {
		for (int64_t n = 0; n < N; n++)
			for (int64_t o = 0; o < Cout; o++) {
				double bv = ref_get_f(b, (uint64_t)o);
				uint64_t at = (uint64_t)((n * Cout + o) * g.L);
				for (int64_t l = 0; l < g.L; l++)
					ref_set_f(y, at + (uint64_t)l, bv);
			}
	}
	double beta = b ? 1.0 : 0.0;
	bool direct = !transposed;
	for (uint32_t d = 0; d < nd; d++)
		if (g.k[d] != 1 || g.s[d] != 1 || g.p[d] != 0)
			direct = false;
	/* 1x1 kernels of stride 1 without padding: the input is its own column matrix */
	if (rc == 0 && !direct && N > 0) {
		int64_t rows = transposed ? cout_g * g.K : cin_g * g.K;
		int64_t cols = transposed ? g.Lin : g.L;
		int64_t csh[2] = {rows, cols};
		rc = ref_tensor_alloc(&col, dt, 2, csh, c->err);
	}
	const char *xd = x ? (const char *)x->data : NULL;
	const char *wd = w ? (const char *)w->data : NULL;
	char *yd = (char *)y->data;
	for (int64_t n = 0; rc == 0 && n < N; n++)
		for (int64_t gi = 0; rc == 0 && gi < groups; gi++) {
			const char *xg = xd + (size_t)((n * Cin + gi * cin_g) * g.Lin) * es;
			char *yg = yd + (size_t)((n * Cout + gi * cout_g) * g.L) * es;
			if (!transposed) {
				/* y_g [cout_g, L] = W_g [cout_g, cin_g K] col [cin_g K, L] */
				const char *wg = wd + (size_t)(gi * cout_g * cin_g * g.K) * es;
				const void *cm = xg;
				if (!direct) {
					im2col(xg, (char *)col.data, es, cin_g, &g);
					cm = col.data;
				}
				rc =
				    refb_gemm(c, dt, false, false, (size_t)cout_g, (size_t)g.L,
				              (size_t)(cin_g * g.K), 1.0, wg, (size_t)(cin_g * g.K),
				              cm, (size_t)g.L, beta, yg, (size_t)g.L);
			} else {
				/* col [cout_g K, Lin] = W_g^T (W_g [cin_g, cout_g K]) x_g */
				const char *wg = wd + (size_t)(gi * cin_g * cout_g * g.K) * es;
				rc = refb_gemm(c, dt, true, false, (size_t)(cout_g * g.K),
				               (size_t)g.Lin, (size_t)cin_g, 1.0, wg,
				               (size_t)(cout_g * g.K), xg, (size_t)g.Lin, 0.0,
				               col.data, (size_t)g.Lin);
				if (rc == 0)
					col2im((const char *)col.data, yg, dt, cout_g, &g);
			}
		}
	ref_tensor_free(&col);
	ref_tensor_free(&tx);
	ref_tensor_free(&tw);
	ref_tensor_free(&tb);
	return rc;
}
