/*
 * numgap.c - the numeric gap (include/etcompare/numgap.h has the rules):
 * runs it (gathers the items of both sides, checks the ETRecords, aligns,
 * compares the rows, SNR drops) and owns its state, warnings and
 * accessors. Items: numgap_gather.c; grouping and alignment, rows:
 * numgap_align.c; a row's comparison: numgap_rows.c; the ETRecord check:
 * numgap_check.c. The report writers are in report_numgap.c.
 */
#include "analysis/numgap_internal.h"
#include "etcompare/text.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *etc_ng_grow_(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

int etc_ng_warn_(etc_numgap *ng, etc_error *err, const char *fmt, ...)
{
	char raw[1024], buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof raw, fmt, ap);
	va_end(ap);
	/* warnings quote names from the inputs: escaped once, here, as etc_fail does */
	etc_text_safe(buf, sizeof buf, raw);
	const char **w = etc_ng_grow_(ng->warn, &ng->capwarn, ng->nwarn + 1, sizeof *w);
	if (!w)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->warn = w;
	w[ng->nwarn] = etc_arena_strdup(&ng->arena, buf, strlen(buf));
	if (!w[ng->nwarn])
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	ng->nwarn++;
	return 0;
}

/* --- identical pairs compared once ------------------------------------------------------ */

/*
 * Rows whose runtime and reference tensors are the same bytes (data, element
 * count and dtype on both sides) and that read them as they are (no
 * permutation, no dequantization) have the same metrics: only the first is
 * compared, the others copy it. An ETDump whose events all point at one
 * large tensor then costs one comparison, not one per event (issue 23).
 */
static bool same_pair(const etc_numgap *ng, size_t a, size_t b)
{
	const etc_tensor *x = &ng->act[a], *y = &ng->act[b];
	const etc_tensor *rx = &ng->ref[a], *ry = &ng->ref[b];
	return x->data == y->data && x->numel == y->numel && x->scalar_type == y->scalar_type &&
	       rx->data == ry->data && rx->numel == ry->numel && rx->scalar_type == ry->scalar_type;
}

static size_t pair_hash(const etc_numgap *ng, size_t i)
{
	uint64_t h = (uint64_t)(uintptr_t)ng->act[i].data * 0x9e3779b97f4a7c15ull;
	h ^= ng->act[i].numel + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= (uint64_t)(uintptr_t)ng->ref[i].data * 0xbf58476d1ce4e5b9ull;
	h ^= ng->ref[i].numel + (uint64_t)ng->ref[i].scalar_type * 31 +
	     (uint64_t)ng->act[i].scalar_type;
	return (size_t)(h ^ (h >> 31));
}

static int compare_memoized(etc_numgap *ng, const etc_gate *gate, etc_error *err)
{
	size_t n = ng->pending.n;
	if (n < 2)
		return etc_ng_compare_rows_(ng->rows, etc_ng_row_values_, ng, &ng->pending, gate,
		                            err);
	size_t cap = 4;
	while (cap < 2 * n)
		cap *= 2;
	size_t *slot = malloc(cap * sizeof *slot);   /* row + 1, 0 empty */
	size_t *leader = malloc(n * sizeof *leader); /* per pending k: row it copies, or SIZE_MAX */
	etc_ng_pending own = {0};
	if (!slot || !leader) {
		free(slot);
		free(leader);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	memset(slot, 0, cap * sizeof *slot);
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		size_t i = ng->pending.rows[k];
		leader[k] = SIZE_MAX;
		bool plain =
		    !ng->xf[i].permute && !ng->xf[i].dequant && ng->act[i].data && ng->ref[i].data;
		if (plain) {
			size_t h = pair_hash(ng, i) & (cap - 1);
			while (slot[h] && !(same_pair(ng, slot[h] - 1, i)))
				h = (h + 1) & (cap - 1);
			if (slot[h]) {
				leader[k] = slot[h] - 1;
				continue;
			}
			slot[h] = i + 1;
		}
		rc = etc_ng_pending_add_(&own, i, err);
	}
	if (rc == 0)
		rc = etc_ng_compare_rows_(ng->rows, etc_ng_row_values_, ng, &own, gate, err);
	for (size_t k = 0; rc == 0 && k < n; k++) {
		if (leader[k] == SIZE_MAX)
			continue;
		etc_numgap_row *row = &ng->rows[ng->pending.rows[k]];
		const etc_numgap_row *from = &ng->rows[leader[k]];
		row->metrics = from->metrics;
		row->has_metrics = from->has_metrics;
		row->status = from->status;
		memcpy(row->reason, from->reason, sizeof row->reason);
	}
	etc_ng_pending_free_(&own);
	free(slot);
	free(leader);
	return rc;
}

/* --- each row's share of the error -------------------------------------------------------- */

static double own_snr(const etc_numgap_row *r)
{
	/* empty against empty compares nothing: no SNR, no drop */
	if (r->metrics.count == 0)
		return NAN;
	return r->metrics.identical ? INFINITY : r->metrics.snr_db;
}

/* SNR drop of every compared row through the runtime's graph (NaN without one). */
static int snr_drops(etc_numgap *ng, etc_error *err)
{
	const etc_ng_graph *g = &ng->g_rt;
	if (!g->n)
		return 0;
	size_t nout = g->out_base[g->n];
	double *snr = malloc(g->n * sizeof *snr), *eff = malloc(g->n * sizeof *eff);
	double *snr_out = malloc((nout ? nout : 1) * sizeof *snr_out);
	uint32_t *mark = calloc(g->n, sizeof *mark), *mine = malloc(g->n * sizeof *mine);
	if (!snr || !eff || !snr_out || !mark || !mine) {
		free(snr), free(eff), free(snr_out), free(mark), free(mine);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < g->n; i++)
		snr[i] = NAN;
	for (size_t i = 0; i < nout; i++)
		snr_out[i] = NAN;
	/* a node's SNR: the lowest of the compared rows that hold its handle;
	   a row of one node with several outputs is also that output's own, for
	   the users that read that output alone (a tuple item) */
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics)
			continue;
		double v = own_snr(r);
		v = isnan(v) ? INFINITY : v;
		long only = -1; /* the row's node when it has one */
		for (uint32_t h = 0; h < r->handle_count; h++) {
			const etc_graph_node *const *nodes;
			size_t n =
			    etc_etrecord_nodes_for_handle(g->rec, g->method, r->handles[h], &nodes);
			for (size_t k = 0; k < n; k++) {
				long x = etc_ng_graph_index_(g, nodes[k]);
				if (x < 0)
					continue;
				only = only == -1 || only == x ? x : -2;
				if (isnan(snr[x]) || v < snr[x])
					snr[x] = v;
			}
		}
		if (only >= 0 && r->output < g->out_base[only + 1] - g->out_base[only] &&
		    g->out_base[only + 1] - g->out_base[only] > 1) {
			double *o = &snr_out[g->out_base[only] + r->output];
			if (isnan(*o) || v < *o)
				*o = v;
		}
	}
	etc_ng_graph_effective_snr_(g, snr, snr_out, eff, err);
	for (size_t i = 0; i < ng->nrows; i++) {
		etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics)
			continue;
		/* mark the row's own nodes (their edges between each other are internal) */
		uint32_t stamp = (uint32_t)i + 1;
		size_t nmine = 0;
		for (uint32_t h = 0; h < r->handle_count; h++) {
			const etc_graph_node *const *nodes;
			size_t n =
			    etc_etrecord_nodes_for_handle(g->rec, g->method, r->handles[h], &nodes);
			for (size_t k = 0; k < n; k++) {
				long x = etc_ng_graph_index_(g, nodes[k]);
				if (x >= 0 && mark[x] != stamp) {
					mark[x] = stamp;
					mine[nmine++] = (uint32_t)x;
				}
			}
		}
		if (!nmine)
			continue;
		double in = INFINITY;
		for (size_t m = 0; m < nmine; m++) {
			uint32_t x = mine[m];
			for (uint32_t k = g->in_start[x]; k < g->in_start[x + 1]; k++) {
				double v = etc_ng_graph_edge_snr_(g, k, snr_out, eff);
				if (mark[g->in[k]] != stamp && v < in)
					in = v;
			}
		}
		double own = own_snr(r);
		/* error-to-signal ratios add where dB do not: 142.9 dB is no noise */
		if (!isnan(own))
			r->noise_added = pow(10.0, -own / 10.0) - pow(10.0, -in / 10.0);
		if (isnan(own))
			r->snr_drop = NAN;
		else if (isinf(in) && isinf(own))
			r->snr_drop = 0.0; /* exact over exact inputs */
		else
			r->snr_drop = in - own;
	}
	free(snr);
	free(eff);
	free(snr_out);
	free(mark);
	free(mine);
	return 0;
}

/* --- public ------------------------------------------------------------------------------- */

void etc_numgap_options_init(etc_numgap_options *o)
{
	memset(o, 0, sizeof *o);
	o->block = "Execute";
	o->min_snr = o->max_mse = o->min_cosine = o->max_abs = NAN;
	o->distance = ETC_NUMGAP_MSE;
	o->layout = ETC_NUMGAP_LAYOUT_AUTO;
}

const char *etc_numgap_distance_name(int d)
{
	return d == ETC_NUMGAP_L1 ? "l1" : d == ETC_NUMGAP_SNR ? "snr" : "mse";
}

int etc_numgap_distance_parse(const char *name, int *out)
{
	static const char *const names[] = {"mse", "l1", "snr"};
	for (int i = 0; i < 3; i++)
		if (name && !strcmp(name, names[i])) {
			*out = i;
			return 0;
		}
	return ETC_ERR_USAGE;
}

const char *etc_numgap_quant_source_name(int s)
{
	return s == ETC_NUMGAP_QUANT_FILE       ? "quant-params"
	       : s == ETC_NUMGAP_QUANT_ETRECORD ? "etrecord"
	                                        : "";
}

size_t etc_numgap_warning_count(const etc_numgap *ng)
{
	return ng->nwarn;
}

const char *etc_numgap_warning(const etc_numgap *ng, size_t i)
{
	return i < ng->nwarn ? ng->warn[i] : NULL;
}

static bool same_name(const etc_event_block *a, const etc_event_block *b)
{
	return a->name.len == b->name.len &&
	       (!a->name.len || !memcmp(a->name.ptr, b->name.ptr, a->name.len));
}

long etc_numgap_reference_block(const etc_inspector *insp, size_t b, const etc_inspector *ref)
{
	const etc_event_block *blk = etc_inspector_block(insp, b);
	if (!blk)
		return -1;
	/* the same inputs: the same bundled_input_index */
	size_t pos = 0, k = 0;
	bool indexed = blk->bundled_input_index >= 0;
	for (size_t i = 0; i < b; i++)
		pos += same_name(etc_inspector_block(insp, i), blk);
	for (size_t i = 0; i < etc_inspector_block_count(ref); i++) {
		const etc_event_block *o = etc_inspector_block(ref, i);
		if (!same_name(o, blk))
			continue;
		if (indexed && o->bundled_input_index == blk->bundled_input_index)
			return (long)i;
		/* without an index on either side: the k-th block of the name */
		if ((!indexed || o->bundled_input_index < 0) && k++ == pos)
			return (long)i;
	}
	return -1;
}

/*
 * The --quant-params file against the gap's rows: an entry that does not fit
 * the output it names is the file's error, not a divergence of the model;
 * entries no row used (a typo in a handle would go unnoticed) are a
 * warning naming them. A row uses the entry find_qparams looks up for it.
 */
static int qfile_check(etc_numgap *ng, etc_error *err)
{
	if (ng->qfile_misfit >= 0) {
		const etc_numgap_row *r = &ng->rows[ng->qfile_misfit];
		return etc_fail(err, ETC_ERR_FORMAT, ng->qfile.path, -1,
		                "the entry for debug handle %lld (row %ld, %.200s): %s",
		                (long long)(r->handle_count ? r->handles[0] : -1), ng->qfile_misfit,
		                r->event_name ? r->event_name : "", r->reason);
	}
	if (!ng->has_qfile || !ng->qfile.n)
		return 0;
	bool *used = calloc(ng->qfile.n, sizeof *used);
	if (!used)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		if (r->quant_source != ETC_NUMGAP_QUANT_FILE)
			continue; /* a float output reads nothing from the file */
		long k = etc_ng_qfile_index_(&ng->qfile, r->handles, r->handle_count);
		long m = etc_ng_qfile_index_(&ng->qfile, r->reference_handles,
		                             r->reference_handle_count);
		if (k >= 0)
			used[k] = true;
		if (m >= 0)
			used[m] = true;
	}
	char list[200] = "";
	size_t unused = 0;
	for (size_t e = 0; e < ng->qfile.n; e++) {
		if (used[e])
			continue;
		const etc_ng_qentry *q = &ng->qfile.e[e];
		size_t l = strlen(list);
		if (unused++ < 8 && l + 24 < sizeof list)
			snprintf(list + l, sizeof list - l, "%s\"%lld%s\"", l ? ", " : "",
			         (long long)q->handles[0], q->nh > 1 ? ",..." : "");
	}
	free(used);
	if (!unused)
		return 0;
	return etc_ng_warn_(ng, err,
	                    "%s: %zu entr%s name%s no compared integer output's debug handles "
	                    "(%s%s): not used",
	                    ng->qfile.path, unused, unused == 1 ? "y" : "ies",
	                    unused == 1 ? "s" : "", list, unused > 8 ? ", ..." : "");
}

int etc_numgap_run(etc_numgap **out, const etc_inspector *insp, const etc_numgap_reference *ref,
                   const etc_numgap_options *opt, etc_error *err)
{
	const char *block = opt && opt->block ? opt->block : "Execute";
	size_t b = 0;
	if (out)
		*out = NULL;
	if (insp && !etc_inspector_block_find(insp, block, &b))
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "the runtime ETDump has no EventBlock \"%s\" with intermediate "
		                "outputs",
		                block);
	return etc_numgap_run_at(out, insp, b, 0, ref, opt, err);
}

void etc_numgap_where(const etc_numgap *ng, size_t *block, uint32_t *run, uint32_t *etdump_run)
{
	*block = ng->block;
	*run = ng->run;
	*etdump_run = ng->etdump_run;
}

int etc_numgap_run_at(etc_numgap **out, const etc_inspector *insp, size_t block_index, uint32_t run,
                      const etc_numgap_reference *ref, const etc_numgap_options *opt,
                      etc_error *err)
{
	return etc_ng_run_(out, insp, block_index, run, ref, opt, false, NULL, err);
}

int etc_ng_run_(etc_numgap **out, const etc_inspector *insp, size_t block_index, uint32_t run,
                const etc_numgap_reference *ref, const etc_numgap_options *opt, bool no_local,
                etc_ng_score *score, etc_error *err)
{
	etc_numgap_options o;
	if (!opt)
		etc_numgap_options_init(&o), opt = &o;
	if (!out || !insp || !ref ||
	    (ref->insp != NULL) + (ref->npz != NULL) + (ref->graph != NULL) != 1)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_numgap_run: needs an inspector and exactly one reference");
	const char *block = opt->block ? opt->block : "Execute";
	const etc_event_block *rt_blk = etc_inspector_block(insp, block_index);
	if (!rt_blk || run >= rt_blk->run_count)
		return etc_fail(err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(insp)), -1,
		                "the runtime ETDump has no block %zu run %u (it has %zu blocks)",
		                block_index, run, etc_inspector_block_count(insp));
	long ref_block = -1;
	uint32_t ref_run = 0;
	if (ref->insp) {
		ref_block = etc_numgap_reference_block(insp, block_index, ref->insp);
		/* the first block of its name takes the reference's first, as it always did */
		size_t first_rt = 0;
		while (first_rt < block_index &&
		       !same_name(etc_inspector_block(insp, first_rt), rt_blk))
			first_rt++;
		for (size_t i = 0; ref_block < 0 && first_rt == block_index &&
		                   i < etc_inspector_block_count(ref->insp);
		     i++)
			if (same_name(etc_inspector_block(ref->insp, i), rt_blk))
				ref_block = (long)i;
		if (ref_block < 0)
			return etc_fail(
			    err, ETC_ERR_USAGE, etc_etdump_name(etc_inspector_etdump(ref->insp)),
			    -1,
			    "the reference ETDump has no EventBlock \"%.*s\" for block %zu "
			    "of the runtime (bundled_input_index %d) with intermediate "
			    "outputs",
			    (int)(rt_blk->name.len < 200 ? rt_blk->name.len : 200),
			    rt_blk->name.ptr, block_index, (int)rt_blk->bundled_input_index);
		/* the same run of the reference when it has one, else its first */
		if (run < etc_inspector_block(ref->insp, (size_t)ref_block)->run_count)
			ref_run = run;
	}
	const char *rt_name = etc_etdump_name(etc_inspector_etdump(insp));
	const char *ref_name = ref->name    ? ref->name
	                       : ref->insp  ? etc_etdump_name(etc_inspector_etdump(ref->insp))
	                       : ref->graph ? "the reference graph"
	                                    : "the reference";
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	bool by_handle = rec != NULL;
	if (ref->npz && !by_handle)
		return etc_fail(err, ETC_ERR_USAGE, ref_name, -1,
		                "intermediate outputs from an .npz are keyed by debug handle: "
		                "give --etrecord to key the runtime's too");
	if (ref->graph && !by_handle)
		return etc_fail(err, ETC_ERR_USAGE, ref_name, -1,
		                "a reference graph is keyed by debug handle: link the runtime to "
		                "its ETRecord (--etrecord)");
	if (ref->insp && by_handle && !etc_inspector_etrecord(ref->insp))
		return etc_fail(err, ETC_ERR_USAGE, ref_name, -1,
		                "the runtime is linked to an ETRecord but the reference ETDump is "
		                "not: link both (or neither, for two runs of the same program)");
	etc_numgap *ng = calloc(1, sizeof *ng);
	if (!ng)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	etc_arena_init(&ng->arena);
	ng->first = -1;
	ng->qfile_misfit = -1;
	ng->opt = *opt;
	/* the caller's name may not outlive this call */
	ng->opt.block = etc_arena_strdup(&ng->arena, block, strlen(block));
	if (!ng->opt.block) {
		etc_numgap_free(ng);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	ng->block = block_index;
	ng->run = run;
	ng->no_local = no_local;
	ng->score = score;
	ng->output_snr = NAN;
	etc_ng_score *own = NULL;
	if (!score && opt->score_program_outputs && ref->graph) {
		own = etc_ng_score_new_(insp, block_index, run, ref->graph);
		if (!own) {
			etc_numgap_free(ng);
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		}
		ng->score = own;
	}
	ng->etdump_run = rt_blk->runs[run];
	ng->alignment = by_handle ? ETC_NUMGAP_BY_HANDLE : ETC_NUMGAP_BY_INSTRUCTION;
	ng->rec = rec;
	ng->method = -1;
	if (rec) {
		const char *m = etc_inspector_etrecord_method(insp);
		ng->method =
		    m ? etc_etrecord_method_index(rec, m) : etc_etrecord_default_method(rec);
	}
	/* a reference ETDump names its ops from its own ETRecord; .npz arrays
	 * are keyed by the runtime's */
	ng->ref_rec = rec;
	ng->ref_method = ng->method;
	ng->npz = ref->npz;
	if (ref->insp) {
		ng->ref_rec = etc_inspector_etrecord(ref->insp);
		ng->ref_method = -1;
		if (ng->ref_rec) {
			const char *m = etc_inspector_etrecord_method(ref->insp);
			ng->ref_method = m ? etc_etrecord_method_index(ng->ref_rec, m)
			                   : etc_etrecord_default_method(ng->ref_rec);
		}
	}
	gather g = {0};
	int rc = etc_ng_graph_init_(&ng->g_rt, ng->rec, ng->method, err);
	if (rc == 0 && opt->quant_params) {
		rc = etc_ng_qfile_load_(&ng->qfile, &ng->arena, opt->quant_params, err);
		ng->has_qfile = rc == 0;
	}
	if (rc == 0)
		rc = etc_ng_gather_inspector_(ng, &g, insp, ETC_NUMGAP_RUNTIME, block_index, run,
		                              "runtime ETDump", err);
	size_t nrt = g.n;
	if (rc == 0)
		rc = ref->npz ? etc_ng_gather_npz_(ng, &g, ref->npz, ref_name, err)
		     : ref->graph
		         ? etc_ng_gather_graph_(ng, &g, nrt, ref, err)
		         : etc_ng_gather_inspector_(ng, &g, ref->insp, ETC_NUMGAP_REFERENCE,
		                                    (size_t)ref_block, ref_run, "reference ETDump",
		                                    err);
	if (rc == 0 && by_handle)
		rc = etc_ng_check_record_(ng, &g, 0, nrt, insp, "--etrecord", err);
	if (rc == 0 && by_handle && ref->insp)
		rc = etc_ng_check_record_(ng, &g, nrt, g.n, ref->insp, "--reference-etrecord", err);
	etc_gate gate = {opt->min_snr, opt->max_mse, opt->min_cosine, opt->max_abs};
	if (rc == 0)
		rc = by_handle
		         ? etc_ng_align_by_handle_(ng, &g, &gate, err)
		         : etc_ng_align_by_instruction_(ng, &g, nrt, rt_name, ref_name, &gate, err);
	if (rc == 0)
		rc = compare_memoized(ng, &gate, err);
	for (size_t k = 0; rc == 0 && k < ng->pending.n; k++) {
		etc_numgap_row *row = &ng->rows[ng->pending.rows[k]];
		row->gap = etc_ng_distance_of_(ng->opt.distance, &row->metrics);
	}
	/* reference arrays not compared are verified too, before any report */
	for (size_t i = 0; i < g.nt && rc == 0; i++)
		rc = etc_ng_verify_ref_(ng, &g.ts[i], err);
	if (rc == 0 && ng->nrows == 0)
		rc = etc_ng_nothing_aligned_(&g, nrt, by_handle, block, rt_name, ref_name, err);
	if (rc == 0 && ref->graph)
		rc = etc_ng_local_metrics_(ng, err);
	for (size_t i = 0; rc == 0 && i < ng->nrows; i++)
		if (ng->rows[i].has_metrics)
			ng->rows[i].cumulative_snr = own_snr(&ng->rows[i]);
	if (rc == 0)
		rc = snr_drops(ng, err);
	if (rc == 0)
		rc = etc_ng_check_shapes_(ng, rt_name, ref_name, err);
	if (rc == 0)
		rc = qfile_check(ng, err);
	if (rc == 0 && ref->graph)
		rc = etc_ng_check_first_op_(ng, err);
	else if (rc == 0)
		rc = etc_ng_check_first_ref_op_(
		    ng, ref->insp ? "the reference run" : "the AOT intermediates", err);
	if (own) {
		ng->output_snr = etc_ng_score_result_(own);
		etc_ng_score_free_(own);
		ng->score = NULL;
	}
	free(g.items);
	free(g.ts);
	if (rc < 0) {
		etc_numgap_free(ng);
		return rc;
	}
	for (size_t i = 0; i < ng->nrows; i++)
		if (ng->rows[i].status != ETC_ROW_PASS) {
			ng->first = (long)i;
			break;
		}
	*out = ng;
	return 0;
}

void etc_numgap_free(etc_numgap *ng)
{
	if (!ng)
		return;
	etc_ng_graph_free_(&ng->g_rt);
	etc_arena_release(&ng->arena);
	free(ng->first_copy);
	etc_ng_pending_free_(&ng->pending);
	free(ng->rows);
	free(ng->act);
	free(ng->ref);
	free(ng->xf);
	free(ng->loc);
	free(ng->warn);
	free(ng->un);
	free(ng);
}

int etc_numgap_alignment_get(const etc_numgap *ng)
{
	return ng->alignment;
}

const etc_numgap_options *etc_numgap_options_get(const etc_numgap *ng)
{
	return &ng->opt;
}

double etc_numgap_program_output_snr(const etc_numgap *ng)
{
	return ng ? ng->output_snr : NAN;
}

bool etc_numgap_gated(const etc_numgap *ng)
{
	const etc_numgap_options *o = &ng->opt;
	return etc_gate_set_(o->min_snr, o->max_mse, o->min_cosine, o->max_abs);
}

size_t etc_numgap_row_count(const etc_numgap *ng)
{
	return ng->nrows;
}

const etc_numgap_row *etc_numgap_row_at(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows ? &ng->rows[i] : NULL;
}

long etc_numgap_first_divergence(const etc_numgap *ng)
{
	return ng->first;
}

size_t etc_numgap_failures(const etc_numgap *ng)
{
	size_t n = 0;
	for (size_t i = 0; i < ng->nrows; i++)
		n += ng->rows[i].status != ETC_ROW_PASS;
	return n;
}

/* Does row r show error entering: a local error, else added noise. */
static bool enters(const etc_numgap_row *r)
{
	if (r->has_local)
		return r->local_snr < INFINITY;
	return r->has_metrics && r->noise_added > 0;
}

/* Is row i ahead of row j in "where the error enters": failing first, then
 * local error (lowest SNR first), then added noise (most first), then in
 * execution order. */
static bool enters_before(const etc_numgap *ng, size_t i, size_t j)
{
	const etc_numgap_row *a = &ng->rows[i], *b = &ng->rows[j];
	bool fa = a->status != ETC_ROW_PASS, fb = b->status != ETC_ROW_PASS;
	if (fa != fb)
		return fa;
	if (a->has_local != b->has_local)
		return a->has_local;
	double x = a->has_local ? -a->local_snr : a->noise_added;
	double y = b->has_local ? -b->local_snr : b->noise_added;
	return x > y || (x == y && i < j);
}

size_t etc_numgap_top_drops(const etc_numgap *ng, size_t k, size_t *idx)
{
	/* a partial insertion sort: the rows can be many, k is small */
	size_t nt = 0;
	for (size_t i = 0; i < ng->nrows && k; i++) {
		if (!enters(&ng->rows[i]))
			continue;
		size_t at;
		if (nt < k)
			at = nt++;
		else if (enters_before(ng, i, idx[k - 1]))
			at = k - 1;
		else
			continue;
		idx[at] = i;
		for (; at > 0 && enters_before(ng, idx[at], idx[at - 1]); at--) {
			size_t t = idx[at];
			idx[at] = idx[at - 1];
			idx[at - 1] = t;
		}
	}
	return nt;
}

size_t etc_numgap_unmatched_count(const etc_numgap *ng)
{
	return ng->nun;
}

const etc_numgap_unmatched *etc_numgap_unmatched_at(const etc_numgap *ng, size_t i)
{
	return i < ng->nun ? &ng->un[i] : NULL;
}

int etc_numgap_row_values(const etc_numgap *ng, size_t i, etc_values *actual, etc_values *reference)
{
	if (i >= ng->nrows || !ng->rows[i].has_metrics)
		return ETC_ERR_USAGE;
	/* the contexts live in the gap: reading through them does not change it */
	etc_ng_row_chain_((etc_numgap *)ng, i, actual);
	if (ng->xf[i].preview)
		memset(reference, 0, sizeof *reference); /* not kept */
	else
		etc_ng_ref_chain_((etc_numgap *)ng, i, reference);
	return 0;
}

const char *etc_numgap_row_shape_full(const etc_numgap *ng, size_t i, bool reference, char *buf,
                                      size_t cap)
{
	if (!cap)
		return buf;
	buf[0] = '\0';
	if (!ng || i >= ng->nrows)
		return buf;
	const etc_tensor *t = reference ? &ng->ref[i] : &ng->act[i];
	const char *shown = reference ? ng->rows[i].reference_shape : ng->rows[i].shape;
	/* only an elided text is made again (rows without a side keep theirs) */
	if (t->ndim == 0 || !strstr(shown, "\xe2\x80\xa6 "))
		snprintf(buf, cap, "%s", shown);
	else
		etc_shape_str_(t, buf, cap);
	return buf;
}

const etc_tensor *etc_numgap_row_tensor(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows && ng->rows[i].has_metrics ? &ng->act[i] : NULL;
}

const etc_tensor *etc_numgap_row_reference_tensor(const etc_numgap *ng, size_t i)
{
	return i < ng->nrows && ng->rows[i].has_metrics && !ng->xf[i].preview ? &ng->ref[i] : NULL;
}

const etc_tensor *etc_numgap_row_reference_preview(const etc_numgap *ng, size_t i,
                                                   etc_tensor_summary *summary, uint64_t *extremes)
{
	if (i >= ng->nrows || !ng->rows[i].has_metrics || !ng->xf[i].preview)
		return NULL;
	if (summary)
		*summary = ng->xf[i].preview->summary;
	if (extremes)
		memcpy(extremes, ng->xf[i].preview->extremes, sizeof ng->xf[i].preview->extremes);
	return &ng->xf[i].preview->t;
}
