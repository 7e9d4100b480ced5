/*
 * refgraph_call.c - one call of a node's op on given inputs, for the run
 * (refgraph_run.c) and the folding at load (refgraph_weights.c).
 *
 * Weights are held as stored: most are views of the record's mapped file in
 * float32 (refgraph_weights.c), whose bytes are rarely aligned (a torch.save
 * archive aligns its tensors, but sits at any offset in the ETRecord). Each
 * op that reads one gets a copy in the reference dtype, freed after it, and
 * the record's pages are given back as they are copied, so that one op's
 * weights at a time are widened and resident. The matrix products (mm,
 * addmm, linear) are handed float32 operands as they are (a view as an
 * aligned float32 copy) and widen a large one in blocks (ops_linalg.c).
 * An op that only moves values
 * (moves_only) runs on a float32 copy and its outputs are widened after:
 * the same bits, without the wide input beside the wide output.
 */
#include "format/etrecord_private.h"
#include "reference/ops.h"
#include "reference/refgraph_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Bytes of a weight widened between two page releases. */
#define WIDEN_CHUNK ((uint64_t)1 << 20)
/* The record's pages read by a run's calls are given back once this much
 * was read (each call giving its own back would fault the large folios
 * around its weights in again and again: about 4x the run time on
 * MobileNetV2). */
#define RELEASE_BYTES ((uint64_t)1 << 20)
/* A weight this large gives its pages back as it is copied, and those of
 * the calls before it first. */
#define LARGE_WEIGHT_BYTES ((uint64_t)256 << 10)
/* A weight's copy at least this large is mapped on its own (tmp_alloc). */
#define TMP_MAP_BYTES ((uint64_t)1 << 20)

/*
 * A weight's copy for one call, not zeroed (it is overwritten at once). A
 * large one is mapped and unmapped here rather than malloc'ed: glibc raises
 * its mmap threshold when a large block is freed, so that the next call's
 * copies would come from the heap and stay resident after it. Marked
 * borrowed: tmp_free frees it.
 */
static int tmp_alloc(ref_tensor *t, int dtype, const ref_tensor *like, etc_error *err)
{
	uint64_t bytes = like->numel * etc_scalar_type_size(dtype);
	memset(t, 0, sizeof *t);
	void *p = NULL;
	if (bytes <= SIZE_MAX && bytes >= TMP_MAP_BYTES) {
		p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		         -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	} else if (bytes <= SIZE_MAX) {
		p = malloc(bytes ? (size_t)bytes : 1);
	}
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (%llu bytes)",
		                (unsigned long long)bytes);
	t->dtype = dtype;
	t->rank = like->rank;
	memcpy(t->shape, like->shape, sizeof t->shape);
	t->numel = like->numel;
	t->data = p;
	t->borrowed = true;
	return 0;
}

static void tmp_free(ref_tensor *t)
{
	uint64_t bytes = t->numel * etc_scalar_type_size(t->dtype);
	if (t->data && bytes >= TMP_MAP_BYTES)
		munmap(t->data, (size_t)bytes);
	else
		free(t->data);
	memset(t, 0, sizeof *t);
}

bool ref_op_moves_only(const ref_op *op)
{
	static int (*const fns[])(ref_call *) = {
	    ref_op_view,   ref_op_reshape, ref_op_permute,      ref_op_transpose, ref_op_t,
	    ref_op_expand, ref_op_squeeze, ref_op_squeeze_dims, ref_op_unsqueeze, ref_op_slice,
	    ref_op_narrow, ref_op_select,  ref_op_flip,         ref_op_clone};
	for (size_t i = 0; op && i < sizeof fns / sizeof fns[0]; i++)
		if (op->fn == fns[i])
			return true;
	return false;
}

bool ref_op_takes_narrow(const ref_op *op)
{
	return op && (op->fn == ref_op_mm || op->fn == ref_op_addmm || op->fn == ref_op_linear);
}

bool ref_graph_narrow(const etc_refgraph *g, const ref_tensor *t)
{
	return t && t->data && ref_dtype_is_float(t->dtype) && t->dtype != g->float_dtype;
}

void ref_graph_release(const etc_refgraph *g, const void *p, uint64_t bytes)
{
	/* The kernel maps a file's large folios (ext4, xfs: up to 2 MiB) whole on
	   the first touch, so the window given back is the range widened to 2 MiB
	   boundaries (neighbours' pages fault back in when read). */
	if (!p || !bytes)
		return;
	uintptr_t lo = (uintptr_t)p & ~(ETC_FOLIO_SPAN - 1);
	uintptr_t hi =
	    ((uintptr_t)p + (uintptr_t)bytes + ETC_FOLIO_SPAN - 1) & ~(ETC_FOLIO_SPAN - 1);
	etc_etrecord_release_range(g->rec, (const void *)lo, hi - lo);
}

void ref_graph_release_all(const etc_refgraph *g)
{
	etc_etrecord_release_pages(g->rec);
}

/* Input k of node n is a weight held as a view of the record's bytes. */
static bool record_view(const etc_refgraph *g, const ref_node *n, size_t k, const ref_tensor *t)
{
	size_t v = n->src_values[k];
	return g->values[v].kind == REF_VALUE_WEIGHT && g->values[v].mapped && t == &g->slots[v] &&
	       t->data;
}

/*
 * `src` copied into `dst` of `dtype` (its own, or float64 for float32),
 * chunk by chunk. A weight view (`view`) may be misaligned (the record's
 * bytes): read with memcpy. A large one gives back the record's pages of
 * each chunk once read (and first those earlier calls read); a small one
 * adds its bytes to *unreleased (NULL: gives them back at once).
 */
static int materialize(const etc_refgraph *g, const ref_tensor *src, bool view, int dtype,
                       uint64_t *unreleased, ref_tensor *dst, etc_error *err)
{
	bool widen = src->dtype == ETC_FLOAT && dtype == ETC_DOUBLE;
	if (view && src->dtype != dtype && !widen)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, NULL, -1,
		                "a weight of dtype %s read as %s", etc_scalar_type_name(src->dtype),
		                etc_scalar_type_name(dtype));
	ETC_TRY(tmp_alloc(dst, dtype, src, err));
	size_t es = etc_scalar_type_size(src->dtype);
	uint64_t bytes = src->numel * es;
	bool by_chunk = view && (!unreleased || bytes >= LARGE_WEIGHT_BYTES);
	if (by_chunk && unreleased && *unreleased) {
		/* what earlier calls read goes first */
		ref_graph_release_all(g);
		*unreleased = 0;
	}
	uint64_t chunk = WIDEN_CHUNK / es;
	const uint8_t *from = src->data;
	for (uint64_t at = 0; at < src->numel; at += chunk) {
		uint64_t n = src->numel - at < chunk ? src->numel - at : chunk;
		if (src->dtype == dtype) {
			memcpy((uint8_t *)dst->data + at * es, from + at * es, n * es);
		} else if (widen) {
			/* through an aligned buffer, so that the loop vectorizes */
			double *d = (double *)dst->data + at;
			float f[1024];
			for (uint64_t i = 0; i < n; i += 1024) {
				size_t m = n - i < 1024 ? (size_t)(n - i) : 1024;
				memcpy(f, from + (at + i) * 4, m * sizeof *f);
				for (size_t j = 0; j < m; j++)
					d[i + j] = f[j];
			}
		} else {
			for (uint64_t i = at; i < at + n; i++)
				ref_set_f(dst, i, ref_get_f(src, i));
		}
		if (by_chunk)
			ref_graph_release(g, from + at * es, n * es);
	}
	if (view && !by_chunk)
		*unreleased += bytes;
	return 0;
}

int ref_graph_widen(ref_tensor *t, int dtype, etc_error *err)
{
	if (t->dtype == dtype || !ref_dtype_is_float(t->dtype))
		return 0;
	if (t->dtype == ETC_FLOAT && dtype == ETC_DOUBLE && !t->borrowed && t->numel) {
		/* in place: the buffer grown by realloc (a large one is remapped, not
		   copied) and filled from the end, so that the narrow and the wide
		   copy are not held side by side */
		double *d = realloc(t->data, (size_t)t->numel * sizeof *d);
		if (!d)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory (%llu bytes)",
			                (unsigned long long)t->numel * sizeof *d);
		const float *f = (const float *)d;
		/* element i moves from bytes 4i to 8i: from the last one down, no
		   element is overwritten before it is read */
		for (uint64_t i = t->numel; i-- > 0;) {
			float x = f[i];
			d[i] = x;
		}
		t->data = d;
		t->dtype = dtype;
		return 0;
	}
	ref_tensor wide;
	etc_reftensor view = ref_tensor_view(t);
	int rc = ref_tensor_convert(&wide, &view, dtype, err);
	ref_tensor_free(t);
	if (rc == 0)
		*t = wide;
	return rc;
}

/* Node n's arguments with tensor input k replaced by use[k]. One block of
 * memory, freed by the caller. */
static ref_arg *call_args(const ref_node *n, const ref_tensor *const *use)
{
	size_t lists = 0;
	for (size_t a = 0; a < n->nargs; a++)
		if (n->args[a].kind == REF_ARG_TENSORS || n->args[a].kind == REF_ARG_OPT_TENSORS)
			lists += n->args[a].n;
	ref_arg *args = malloc((n->nargs ? n->nargs : 1) * sizeof *args + lists * sizeof(void *));
	if (!args)
		return NULL;
	const ref_tensor **ts = (const ref_tensor **)(args + n->nargs);
	size_t k = 0;
	for (size_t a = 0; a < n->nargs; a++) {
		args[a] = n->args[a];
		if (args[a].kind == REF_ARG_TENSOR) {
			args[a].t = use[k++];
		} else if (args[a].kind == REF_ARG_TENSORS || args[a].kind == REF_ARG_OPT_TENSORS) {
			for (size_t j = 0; j < args[a].n; j++)
				ts[j] = n->args[a].ts[j] ? use[k++] : NULL;
			args[a].ts = ts;
			ts += args[a].n;
		}
	}
	return args;
}

/* Whether transposed input k of n goes to the op as it is: only as mat2 of
 * mm or addmm, when they widen it by blocks (gemm_b reads it as it lies). */
static bool passes_transposed(const etc_refgraph *g, const ref_node *n,
                              const ref_tensor *const *srcs, size_t k)
{
	if (!n->op || (n->op->fn != ref_op_mm && n->op->fn != ref_op_addmm) ||
	    !ref_op_blocks_b(g->float_dtype, srcs[k]))
		return false;
	ref_arg *args = call_args(n, srcs);
	bool only_mat2 = args != NULL;
	for (size_t a = 0; only_mat2 && a < n->nargs; a++) {
		if (args[a].kind == REF_ARG_TENSOR && args[a].t == srcs[k])
			only_mat2 = strcmp(args[a].name, "mat2") == 0;
		else if (args[a].kind == REF_ARG_TENSORS || args[a].kind == REF_ARG_OPT_TENSORS)
			for (size_t j = 0; only_mat2 && j < args[a].n; j++)
				only_mat2 = args[a].ts[j] != srcs[k];
	}
	free(args);
	return only_mat2;
}

/* ref_release for the record's bytes: what lies below the folio of `upto`
 * goes (ref_graph_release widens to folios; the rows still to read keep
 * theirs). */
static void release_read(const void *ctx, const void *base, const void *upto)
{
	uintptr_t lo = (uintptr_t)base, hi = (uintptr_t)upto & ~(ETC_FOLIO_SPAN - 1);
	if (hi > lo)
		ref_graph_release(ctx, base, hi - lo);
}

ref_release ref_graph_releaser(const etc_refgraph *g)
{
	ref_release rel = {release_read, g};
	return rel;
}

/* ref_graph_call; with !widen_moves, a move of one narrow input keeps its
 * outputs narrow (the folding at load). */
static int call_node(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                     ref_tensor *outs, uint64_t *unreleased, bool widen_moves, etc_error *err)
{
	size_t ns = n->nsrcs ? n->nsrcs : 1;
	ref_tensor *tmp = calloc(ns, sizeof *tmp);
	ref_tensor *dense = calloc(ns, sizeof *dense);
	const ref_tensor **use = calloc(ns, sizeof *use);
	ref_arg *args = NULL;
	int rc = 0;
	if (!tmp || !dense || !use)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "node %s: out of memory", n->pub.name);
	/* a move of one narrow input: computed narrow, widened after */
	bool narrow_move =
	    n->nsrcs == 1 && ref_op_moves_only(n->op) && ref_graph_narrow(g, srcs[0]);
	/* a matrix product widens a narrow operand itself, a block at a time */
	bool takes_narrow = ref_op_takes_narrow(n->op);
	ref_release rel = ref_graph_releaser(g);
	for (size_t k = 0; rc == 0 && k < n->nsrcs; k++) {
		use[k] = srcs[k];
		if (srcs[k]->transposed) {
			/* the fold of a large weight's transpose: its bytes are read
			   where they lie, by the product or into a dense copy */
			if (passes_transposed(g, n, srcs, k))
				continue;
			rc = ref_tensor_dense(
			    &dense[k], srcs[k],
			    narrow_move || takes_narrow ? ETC_FLOAT : g->float_dtype, &rel, err);
			use[k] = &dense[k];
			continue;
		}
		/* weight views are never handed to an op: their bytes may be
		   misaligned, and their pages are given back as they are copied */
		bool view = record_view(g, n, k, srcs[k]);
		bool narrow = !narrow_move && !takes_narrow && ref_graph_narrow(g, srcs[k]);
		if (!view && !narrow)
			continue;
		rc = materialize(g, srcs[k], view, narrow ? g->float_dtype : srcs[k]->dtype,
		                 unreleased, &tmp[k], err);
		if (rc < 0) {
			char msg[sizeof err->message];
			snprintf(msg, sizeof msg, "%s", err ? err->message : "");
			rc = etc_fail(err, rc, NULL, -1, "node %s: input %zu: %s", n->pub.name, k,
			              msg);
		}
		use[k] = &tmp[k];
	}
	if (rc == 0) {
		args = call_args(n, use);
		if (!args)
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "node %s: out of memory",
			              n->pub.name);
	}
	if (rc == 0) {
		ref_call c = {n->pub.name, n->pub.op,           args, n->nargs, g->float_dtype,
		              outs,        n->pub.output_count, err,  rel};
		rc = n->op->fn(&c);
	}
	for (size_t k = 0; tmp && k < n->nsrcs; k++)
		tmp_free(&tmp[k]);
	for (size_t k = 0; dense && k < n->nsrcs; k++) {
		ref_tensor_free(&dense[k]);
		/* the transposed weight's pages after the last folio boundary, too */
		if (srcs[k]->transposed)
			ref_graph_release(g, srcs[k]->data,
			                  srcs[k]->numel * etc_scalar_type_size(srcs[k]->dtype));
	}
	if (unreleased && *unreleased >= RELEASE_BYTES) {
		ref_graph_release_all(g);
		*unreleased = 0;
	}
	for (uint32_t o = 0; rc == 0 && narrow_move && widen_moves && o < n->pub.output_count; o++)
		rc = ref_graph_widen(&outs[o], g->float_dtype, err);
	if (rc < 0)
		for (uint32_t o = 0; o < n->pub.output_count; o++)
			ref_tensor_free(&outs[o]);
	free(args);
	free(tmp);
	free(dense);
	free(use);
	return rc;
}

int ref_graph_call(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                   ref_tensor *outs, uint64_t *unreleased, etc_error *err)
{
	return call_node(g, n, srcs, outs, unreleased, true, err);
}

/*
 * The fold of a 2-D transpose of a weight view (a linear layer's weight
 * permuted for addmm): the weight's bytes marked transposed (ref_op.h). A
 * float32 weight that a float64 product widens by blocks (MobileNetV2's
 * classifier, 4.9 MiB) is kept so, not copied: mm and addmm read it as it
 * lies and anything else through ref_tensor_dense. Any other is written
 * out by ref_tensor_dense straight from the record, 16 rows at a time,
 * whose pages are given back as the bands pass them: neither a copy of
 * the weight nor its pages are held beside the transposed output. 1 when
 * done, 0 when n is not such a fold (call_node folds it).
 */
static int fold_transpose(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                          ref_tensor *outs, etc_error *err)
{
	if (n->nsrcs != 1 || n->pub.output_count != 1 || !ref_op_moves_only(n->op) ||
	    !record_view(g, n, 0, srcs[0]) || srcs[0]->rank != 2)
		return 0;
	const ref_tensor *x = srcs[0];
	ref_arg *args = call_args(n, srcs);
	if (!args)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "node %s: out of memory",
		                n->pub.name);
	ref_call c = {n->pub.name, n->pub.op, args, n->nargs, g->float_dtype, outs, 1, err, {0}};
	bool swaps = ref_op_transposes_2d(&c, n->op->fn);
	free(args);
	if (!swaps)
		return 0;
	ref_tensor view = *x;
	view.shape[0] = x->shape[1];
	view.shape[1] = x->shape[0];
	view.borrowed = true;
	view.transposed = true;
	if (ref_op_blocks_b(g->float_dtype, x)) {
		outs[0] = view;
		return 1;
	}
	ref_release rel = ref_graph_releaser(g);
	ETC_TRY(ref_tensor_dense(&outs[0], &view, x->dtype, &rel, err));
	/* the rows after the last folio boundary, too */
	ref_graph_release(g, x->data, x->numel * etc_scalar_type_size(x->dtype));
	return 1;
}

int ref_graph_fold_call(const etc_refgraph *g, const ref_node *n, const ref_tensor *const *srcs,
                        ref_tensor *outs, etc_error *err)
{
	int rc = fold_transpose(g, n, srcs, outs, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	return call_node(g, n, srcs, outs, NULL, false, err);
}
