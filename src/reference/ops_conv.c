/*
 * ops_conv.c - aten.convolution in 1, 2 and 3 spatial dimensions, direct
 * and transposed, as im2col (col2im) and one GEMM per image and group
 * through OpenBLAS in the reference dtype.
 */
#include "reference/ops.h"
#include "reference/ops_b_util.h"

#include <inttypes.h>
#include <stdlib.h>

#define CONV_MAX_ND 3
/* the column matrix is built in blocks of about the output's size, at least
 * COL_BLOCK_MIN_BYTES (GEMM efficiency) and at most COL_BLOCK_BYTES */
#define COL_BLOCK_BYTES     ((uint64_t)1 << 23)
#define COL_BLOCK_MIN_BYTES ((uint64_t)1 << 20)
#define COL_BLOCK_MIN       64

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

/* The output positions o in [0, out) whose input position o * s + off lies
 * in [0, in): [*lo, *hi). */
static void valid_range(int64_t out, int64_t in, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
	int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t b = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
	*lo = a < out ? a : out;
	*hi = b < out ? b : out;
	if (*hi < *lo)
		*hi = *lo;
}

/*
 * col[(c * K + kk) * nb + (l - l0)] = x[c][o * s - p + kk * d] (0 outside)
 * for the output positions l in [l0, l1) (nb = l1 - l0): a block of the
 * columns of Cg input planes of Lin elements each. Within each output row
 * of the block, a zero head, a copied (strided) run and a zero tail.
 */
static void im2col(const char *x, char *col, size_t es, int64_t cg, const conv_geom *g, int64_t l0,
                   int64_t l1)
{
	uint32_t nd = g->nd, last = nd - 1;
	int64_t kk[CONV_MAX_ND], o[CONV_MAX_ND];
	int64_t ow = g->out[last], sl = g->s[last], nb = l1 - l0;
	for (int64_t c = 0; c < cg; c++) {
		const char *plane = x + (size_t)(c * g->Lin) * es;
		for (int64_t kid = 0; kid < g->K; kid++) {
			unravel(kid, nd, g->k, kk);
			char *row = col + (size_t)((c * g->K + kid) * nb) * es;
			int64_t off = kk[last] * g->d[last] - g->p[last], lo, hi;
			valid_range(ow, g->in[last], sl, off, &lo, &hi);
			for (int64_t l = l0; l < l1;) {
				int64_t oi = l / ow, a = l - oi * ow;
				int64_t b = ow < a + (l1 - l) ? ow : a + (l1 - l);
				char *dst = row + (size_t)(l - l0 - a) * es; /* at ol = 0 */
				l += b - a;
				unravel(oi, last, g->out, o);
				int64_t base = 0;
				bool inside = true;
				for (uint32_t d = 0; d < last; d++) {
					int64_t ip = o[d] * g->s[d] - g->p[d] + kk[d] * g->d[d];
					if (ip < 0 || ip >= g->in[d])
						inside = false;
					base = base * g->in[d] + ip;
				}
				int64_t vlo = lo < a ? a : (lo > b ? b : lo);
				int64_t vhi = hi < vlo ? vlo : (hi > b ? b : hi);
				if (!inside)
					vlo = vhi = b;
				memset(dst + (size_t)a * es, 0, (size_t)(vlo - a) * es);
				memset(dst + (size_t)vhi * es, 0, (size_t)(b - vhi) * es);
				if (vhi == vlo)
					continue;
				/* the run starts at input position vlo * sl + off >= 0 */
				const char *src =
				    plane + (size_t)(base * g->in[last] + vlo * sl + off) * es;
				char *d0 = dst + (size_t)vlo * es;
				int64_t n = vhi - vlo;
				if (sl == 1) {
					memcpy(d0, src, (size_t)n * es);
				} else if (es == 8) {
					for (int64_t j = 0; j < n; j++)
						((double *)d0)[j] = ((const double *)src)[j * sl];
				} else {
					for (int64_t j = 0; j < n; j++)
						((float *)d0)[j] = ((const float *)src)[j * sl];
				}
			}
		}
	}
}

/*
 * The transposed scatter: y[c][i * s - p + kk * d] += col[(c * K + kk) * nb
 * + (i - l0)] for the input positions i in [l0, l1) and the Cg output
 * planes (of L elements) of one group.
 */
static void col2im(const char *col, char *y, int dtype, int64_t cg, const conv_geom *g, int64_t l0,
                   int64_t l1)
{
	uint32_t nd = g->nd, last = nd - 1;
	int64_t kk[CONV_MAX_ND], i[CONV_MAX_ND];
	int64_t iw = g->in[last], nb = l1 - l0;
	size_t es = refb_elem_size(dtype);
	for (int64_t c = 0; c < cg; c++) {
		char *plane = y + (size_t)(c * g->L) * es;
		for (int64_t kid = 0; kid < g->K; kid++) {
			unravel(kid, nd, g->k, kk);
			const char *row = col + (size_t)((c * g->K + kid) * nb) * es;
			int64_t off = kk[last] * g->d[last] - g->p[last];
			for (int64_t l = l0; l < l1;) {
				int64_t ii = l / iw, a = l - ii * iw;
				int64_t b = iw < a + (l1 - l) ? iw : a + (l1 - l);
				int64_t src0 = l - l0 - a; /* column of il = 0 */
				l += b - a;
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
				for (int64_t il = a; il < b; il++) {
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
	if (groups > (x0->shape[1] > 1 ? x0->shape[1] : 1))
		return ref_fail(c, ETC_ERR_MISMATCH,
		                "groups %" PRId64 " exceed the %" PRId64 " input channels", groups,
		                x0->shape[1]);
	for (uint32_t d = 0; d < nd; d++) {
		ETC_TRY(refb_check_param(c, "stride", g.s[d]));
		ETC_TRY(refb_check_param(c, "padding", g.p[d]));
		ETC_TRY(refb_check_param(c, "dilation", g.d[d]));
		ETC_TRY(refb_check_param(c, "output_padding", g.op[d]));
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
	ref_tensor tx, tw, tb;
	void *col = NULL;
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
				if (dt == ETC_DOUBLE)
					for (int64_t l = 0; l < g.L; l++)
						((double *)y->data)[at + (uint64_t)l] = bv;
				else
					for (int64_t l = 0; l < g.L; l++)
						((float *)y->data)[at + (uint64_t)l] = (float)bv;
			}
	}
	double beta = b ? 1.0 : 0.0;
	bool direct = !transposed;
	for (uint32_t d = 0; d < nd; d++)
		if (g.k[d] != 1 || g.s[d] != 1 || g.p[d] != 0)
			direct = false;
	/*
	 * The column matrix is built and multiplied in blocks of output (direct)
	 * or input (transposed) positions of about the output's size, so that it
	 * stays in cache and its size does not grow with the image. 1x1 kernels
	 * of stride 1 without padding need none: the input is its own column
	 * matrix.
	 */
	int64_t rows = transposed ? cout_g * g.K : cin_g * g.K;
	int64_t cols = transposed ? g.Lin : g.L;
	int64_t nb = cols;
	/* the scratch stays within the activation memory the run holds anyway */
	uint64_t budget = y->numel * es;
	budget = budget < COL_BLOCK_MIN_BYTES ? COL_BLOCK_MIN_BYTES : budget;
	budget = budget > COL_BLOCK_BYTES ? COL_BLOCK_BYTES : budget;
	if (rows > 0 && (uint64_t)rows * (uint64_t)cols * es > budget) {
		nb = (int64_t)(budget / ((uint64_t)rows * es));
		nb = nb < COL_BLOCK_MIN ? COL_BLOCK_MIN : nb;
		nb = nb > cols ? cols : nb;
	}
	if (rc == 0 && !direct && N > 0) {
		/* scratch that im2col / the GEMM overwrite entirely: no calloc */
		uint64_t bytes = (uint64_t)rows * (uint64_t)nb * es;
		if (bytes > ETC_REF_MAX_BYTES)
			rc = ref_fail(c, ETC_ERR_LIMIT,
			              "a column block of %" PRId64 " x %" PRId64
			              " exceeds the reference's limit",
			              rows, nb);
		else if (!(col = malloc(bytes ? (size_t)bytes : 1)))
			rc = ref_fail(c, ETC_ERR_NOMEM, "out of memory (%" PRIu64 " bytes)", bytes);
	}
	const char *xd = x ? (const char *)x->data : NULL;
	const char *wd = w ? (const char *)w->data : NULL;
	char *yd = (char *)y->data;
	for (int64_t n = 0; rc == 0 && n < N; n++)
		for (int64_t gi = 0; rc == 0 && gi < groups; gi++) {
			const char *xg = xd + (size_t)((n * Cin + gi * cin_g) * g.Lin) * es;
			char *yg = yd + (size_t)((n * Cout + gi * cout_g) * g.L) * es;
			if (!transposed && direct) {
				const char *wg = wd + (size_t)(gi * cout_g * cin_g) * es;
				rc = refb_gemm(c, dt, false, false, (size_t)cout_g, (size_t)g.L,
				               (size_t)cin_g, 1.0, wg, (size_t)cin_g, xg,
				               (size_t)g.L, beta, yg, (size_t)g.L);
				continue;
			}
			for (int64_t l0 = 0; rc == 0 && l0 < cols; l0 += nb) {
				int64_t l1 = l0 + nb < cols ? l0 + nb : cols, w1 = l1 - l0;
				if (!transposed) {
					/* y_g[:, l0:l1] = W_g [cout_g, rows] col [rows, w1] */
					const char *wg = wd + (size_t)(gi * cout_g * rows) * es;
					im2col(xg, (char *)col, es, cin_g, &g, l0, l1);
					rc = refb_gemm(c, dt, false, false, (size_t)cout_g,
					               (size_t)w1, (size_t)rows, 1.0, wg,
					               (size_t)rows, col, (size_t)w1, beta,
					               yg + (size_t)l0 * es, (size_t)g.L);
				} else {
					/* col [rows, w1] = W_g^T (W_g [cin_g, rows]) x_g[:, l0:l1]
					 */
					const char *wg = wd + (size_t)(gi * cin_g * rows) * es;
					rc = refb_gemm(c, dt, true, false, (size_t)rows, (size_t)w1,
					               (size_t)cin_g, 1.0, wg, (size_t)rows,
					               xg + (size_t)l0 * es, (size_t)g.Lin, 0.0,
					               col, (size_t)w1);
					if (rc == 0)
						col2im((const char *)col, yg, dt, cout_g, &g, l0,
						       l1);
				}
			}
		}
	free(col);
	ref_tensor_free(&tx);
	ref_tensor_free(&tw);
	ref_tensor_free(&tb);
	return rc;
}
