/*
 * numgap_dist.c - the numeric gap over many runs (numgap_dist.h): rows of
 * the runs' gaps keyed into ops, each op's SNR distributions, and the
 * run-to-run agreement of each op's runtime values within an input
 * through agreement.c's Gram matrix.
 */
#include "etcompare/numgap_dist.h"
#include "etcompare/agreement.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values read and converted per agreement block. */
#define AGREE_BLOCK 4096

typedef struct dist_op {
	etc_numgap_dist_op pub;
	char key[256];
	char handles[128];
	size_t *row; /* per run: row index + 1, 0 when the run has no row */
} dist_op;

struct etc_numgap_dist {
	size_t nruns;
	etc_numgap_run_id *ids;
	const etc_numgap *const *gaps;
	dist_op *ops;
	size_t nops, cap;
};

static void row_key(const etc_numgap_row *r, char *key, size_t cap, char *handles, size_t hcap)
{
	size_t o = 0;
	handles[0] = '\0';
	for (uint32_t h = 0; h < r->handle_count && o + 24 < hcap; h++)
		o += (size_t)snprintf(handles + o, hcap - o, "%s%lld", h ? "," : "",
		                      (long long)r->handles[h]);
	if (r->handle_count)
		snprintf(key, cap, "h%s/%u", handles, r->output);
	else
		snprintf(key, cap, "i%d:%.*s:%s/%u", r->instruction_id, 160, r->event_name,
		         r->delegate_backend, r->output);
}

static int op_find(etc_numgap_dist *d, const char *key, size_t hint, size_t *at)
{
	if (hint < d->nops && !strcmp(d->ops[hint].key, key)) {
		*at = hint;
		return 1;
	}
	for (size_t i = 0; i < d->nops; i++)
		if (!strcmp(d->ops[i].key, key)) {
			*at = i;
			return 1;
		}
	return 0;
}

static int op_add(etc_numgap_dist *d, const etc_numgap_row *r, const char *key, const char *handles,
                  etc_error *err)
{
	if (d->nops == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		dist_op *p = realloc(d->ops, cap * sizeof *p);
		if (!p)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory for %zu ops",
			                cap);
		d->ops = p;
		d->cap = cap;
	}
	dist_op *op = &d->ops[d->nops];
	memset(op, 0, sizeof *op);
	op->row = calloc(d->nruns, sizeof *op->row);
	if (!op->row)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory for an op's runs");
	snprintf(op->key, sizeof op->key, "%s", key);
	snprintf(op->handles, sizeof op->handles, "%s", handles);
	op->pub.nodes = r->nodes;
	op->pub.ops = r->ops;
	op->pub.event = r->event_name;
	op->pub.output = r->output;
	d->nops++;
	return ETC_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* numpy's linear percentile of sorted v[0..n); towards +inf is +inf. */
static double percentile(const double *v, size_t n, double q)
{
	double pos = q / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(pos);
	double t = pos - (double)lo;
	if (lo + 1 >= n || t == 0.0)
		return v[lo];
	if (isinf(v[lo + 1]) || isinf(v[lo]))
		return v[lo] == v[lo + 1]
		           ? v[lo]
		           : (isinf(v[lo + 1]) && v[lo + 1] > 0 ? INFINITY : -INFINITY);
	return v[lo] + (v[lo + 1] - v[lo]) * t;
}

double etc_numgap_dist_value(const etc_numgap_dist *d, size_t op, size_t k, bool local)
{
	if (op >= d->nops || k >= d->nruns || !d->ops[op].row[k])
		return NAN;
	const etc_numgap_row *r = etc_numgap_row_at(d->gaps[k], d->ops[op].row[k] - 1);
	if (!r->has_metrics)
		return NAN;
	return local ? (r->has_local ? r->local_snr : NAN) : r->cumulative_snr;
}

static void stats_fill(const etc_numgap_dist *d, size_t op, bool local, double *scratch,
                       etc_numgap_dist_stats *s)
{
	size_t n = 0;
	s->worst = 0;
	double worst = INFINITY;
	bool any = false;
	for (size_t k = 0; k < d->nruns; k++) {
		double v = etc_numgap_dist_value(d, op, k, local);
		if (isnan(v))
			continue;
		scratch[n++] = v;
		if (!any || v < worst) {
			worst = v;
			s->worst = k;
			any = true;
		}
	}
	s->count = n;
	if (!n) {
		s->min = s->p5 = s->median = s->p95 = s->max = NAN;
		return;
	}
	qsort(scratch, n, sizeof *scratch, cmp_double);
	s->min = scratch[0];
	s->max = scratch[n - 1];
	s->p5 = percentile(scratch, n, 5);
	s->median = percentile(scratch, n, 50);
	s->p95 = percentile(scratch, n, 95);
}

/* Agreement of op `oi` among the runs in `members` (m >= 2 of them), into the op. */
static int agree_input(etc_numgap_dist *d, size_t oi, const size_t *members, size_t m,
                       etc_values *v, float *blk, double *tmp, double *snr, etc_error *err)
{
	dist_op *op = &d->ops[oi];
	uint64_t count = 0;
	for (size_t j = 0; j < m; j++) {
		size_t k = members[j];
		etc_values ref;
		if (etc_numgap_row_values(d->gaps[k], op->row[k] - 1, &v[j], &ref) < 0)
			return 0; /* no values (not compared): no agreement */
		if (j && v[j].count != count)
			return 0;
		count = v[j].count;
	}
	if (!count)
		return 0;
	etc_agreement *ag = NULL;
	int rc = etc_agreement_new(m, &ag, err);
	if (rc < 0)
		return rc;
	for (uint64_t s = 0; s < count && rc == 0; s += AGREE_BLOCK) {
		size_t c = (size_t)(count - s < AGREE_BLOCK ? count - s : AGREE_BLOCK);
		for (size_t j = 0; j < m; j++) {
			v[j].read(v[j].src, s, c, tmp);
			for (size_t e = 0; e < c; e++)
				blk[j * AGREE_BLOCK + e] = (float)tmp[e];
		}
		rc = etc_agreement_add_f32(ag, blk, AGREE_BLOCK, c, err);
	}
	if (rc == 0)
		rc = etc_agreement_snr(ag, snr, err);
	etc_agreement_free(ag);
	if (rc < 0)
		return rc;
	etc_numgap_dist_op *p = &op->pub;
	for (size_t i = 0; i < m; i++) {
		size_t c = 0;
		for (size_t j = 0; j < m; j++) {
			if (i == j)
				continue;
			double x = snr[i * m + j];
			if (!p->has_agreement || x < p->agreement_min_snr)
				p->agreement_min_snr = x;
			p->has_agreement = true;
			tmp[c++] = isnan(x) ? -INFINITY : x;
		}
		qsort(tmp, c, sizeof *tmp, cmp_double);
		double med = percentile(tmp, c, 50);
		if (isnan(p->agreement_outlier_snr) || med < p->agreement_outlier_snr) {
			p->agreement_outlier_snr = med;
			p->agreement_outlier = members[i];
		}
	}
	return 0;
}

static int agreement_fill(etc_numgap_dist *d, etc_error *err)
{
	size_t n = d->nruns;
	size_t *members = malloc(n * sizeof *members);
	bool *done = malloc(n * sizeof *done);
	float *blk = malloc(n * AGREE_BLOCK * sizeof *blk);
	double *tmp = malloc((n > AGREE_BLOCK ? n : AGREE_BLOCK) * sizeof *tmp);
	double *snr = malloc(n * n * sizeof *snr);
	etc_values *vals = malloc(n * sizeof *vals);
	int rc = 0;
	if (!members || !done || !blk || !tmp || !snr || !vals)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		              "out of memory for the agreement of %zu runs", n);
	for (size_t oi = 0; oi < d->nops && rc == 0; oi++) {
		d->ops[oi].pub.agreement_outlier_snr = NAN;
		d->ops[oi].pub.agreement_min_snr = NAN;
		memset(done, 0, n * sizeof *done);
		for (size_t k = 0; k < n && rc == 0; k++) {
			/* runs of an unknown input are no runs of the same input */
			if (done[k] || !d->ops[oi].row[k] || d->ids[k].bundled_input_index < 0)
				continue;
			size_t m = 0;
			for (size_t j = k; j < n; j++)
				if (!done[j] && d->ops[oi].row[j] &&
				    d->ids[j].bundled_input_index ==
				        d->ids[k].bundled_input_index) {
					members[m++] = j;
					done[j] = true;
				}
			if (m >= 2)
				rc = agree_input(d, oi, members, m, vals, blk, tmp, snr, err);
		}
	}
	free(members);
	free(done);
	free(blk);
	free(tmp);
	free(snr);
	free(vals);
	return rc;
}

int etc_numgap_dist_compute(etc_numgap_dist **out, const etc_numgap *const *gaps,
                            const etc_numgap_run_id *ids, size_t n, etc_error *err)
{
	if (!out || (n && (!gaps || !ids)))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_numgap_dist_compute: NULL %s",
		                !out    ? "out"
		                : !gaps ? "gaps"
		                        : "ids");
	*out = NULL;
	if (!n)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "the distribution needs at least 1 run");
	etc_numgap_dist *d = calloc(1, sizeof *d);
	if (!d || !(d->ids = malloc(n * sizeof *d->ids))) {
		free(d);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory for %zu runs", n);
	}
	memcpy(d->ids, ids, n * sizeof *ids);
	d->nruns = n;
	d->gaps = gaps;
	int rc = 0;
	char key[256], handles[128];
	for (size_t k = 0; k < n && rc == 0; k++) {
		size_t rows = etc_numgap_row_count(gaps[k]);
		for (size_t i = 0; i < rows && rc == 0; i++) {
			const etc_numgap_row *r = etc_numgap_row_at(gaps[k], i);
			row_key(r, key, sizeof key, handles, sizeof handles);
			size_t at;
			if (!op_find(d, key, i, &at)) {
				at = d->nops;
				rc = op_add(d, r, key, handles, err);
			}
			if (rc == 0 && !d->ops[at].row[k]) {
				d->ops[at].row[k] = i + 1;
				d->ops[at].pub.runs++;
			}
		}
	}
	/* the ops moved as they grew: their handles point at their final place */
	for (size_t i = 0; i < d->nops; i++)
		d->ops[i].pub.handles = d->ops[i].handles;
	double *scratch = rc == 0 ? malloc(n * sizeof *scratch) : NULL;
	if (rc == 0 && !scratch)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory for %zu runs", n);
	for (size_t i = 0; i < d->nops && rc == 0; i++) {
		stats_fill(d, i, false, scratch, &d->ops[i].pub.cumulative);
		stats_fill(d, i, true, scratch, &d->ops[i].pub.local);
	}
	free(scratch);
	if (rc == 0)
		rc = agreement_fill(d, err);
	if (rc < 0) {
		etc_numgap_dist_free(d);
		return rc;
	}
	*out = d;
	return ETC_OK;
}

void etc_numgap_dist_free(etc_numgap_dist *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nops; i++)
		free(d->ops[i].row);
	free(d->ops);
	free(d->ids);
	free(d);
}

size_t etc_numgap_dist_run_count(const etc_numgap_dist *d)
{
	return d->nruns;
}

const etc_numgap_run_id *etc_numgap_dist_run(const etc_numgap_dist *d, size_t k)
{
	return k < d->nruns ? &d->ids[k] : NULL;
}

size_t etc_numgap_dist_op_count(const etc_numgap_dist *d)
{
	return d->nops;
}

const etc_numgap_dist_op *etc_numgap_dist_op_at(const etc_numgap_dist *d, size_t i)
{
	return i < d->nops ? &d->ops[i].pub : NULL;
}
