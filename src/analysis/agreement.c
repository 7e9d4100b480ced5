/*
 * agreement.c - the pairwise-SNR matrix of agreement.h from one Gram
 * matrix per element block: the block's runs, centred on their mean, are
 * one dsyrk; the squared distances and norms are added to the
 * accumulator. Blocks are additive, so workers accumulate element ranges
 * apart and merge.
 */
#include "etcompare/agreement.h"
#include "core/blas.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A distance below this fraction of the accumulated |d_i|^2 + |d_j|^2 is
 * within the rounding of the Gram terms: the runs agree to the Gram's
 * resolution and the SNR is +inf (bitwise-equal runs land here too). */
#define RESOLUTION 1e-12

struct etc_agreement {
	size_t n;
	size_t elements;
	double *dist; /* n x n */
	double *res;  /* n x n */
	double *norm; /* n */
	/* scratch of etc_agreement_add_f32, kept between blocks (no page faults per block) */
	double *g;    /* n x n */
	double *d;    /* n x cap */
	double *mean; /* cap */
	size_t cap;
};

int etc_agreement_new(size_t runs, etc_agreement **out, etc_error *err)
{
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_agreement_new: NULL out");
	*out = NULL;
	if (runs < 2)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "run agreement needs at least 2 runs, got %zu", runs);
	if (runs > 65536)
		return etc_fail(err, ETC_ERR_LIMIT, NULL, -1,
		                "run agreement of %zu runs exceeds the limit of 65536", runs);
	etc_agreement *ag = calloc(1, sizeof *ag);
	if (ag) {
		ag->n = runs;
		ag->dist = calloc(runs * runs, sizeof(double));
		ag->res = calloc(runs * runs, sizeof(double));
		ag->norm = calloc(runs, sizeof(double));
	}
	if (!ag || !ag->dist || !ag->res || !ag->norm) {
		etc_agreement_free(ag);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		                "out of memory for the agreement matrix of %zu runs", runs);
	}
	*out = ag;
	return ETC_OK;
}

void etc_agreement_free(etc_agreement *ag)
{
	if (!ag)
		return;
	free(ag->dist);
	free(ag->res);
	free(ag->norm);
	free(ag->g);
	free(ag->d);
	free(ag->mean);
	free(ag);
}

size_t etc_agreement_runs(const etc_agreement *ag)
{
	return ag->n;
}

int etc_agreement_add_f32(etc_agreement *ag, const float *block, size_t ld, size_t count,
                          etc_error *err)
{
	if (!ag)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_agreement_add_f32: NULL ag");
	size_t n = ag->n;
	if (count == 0)
		return ETC_OK;
	if (!block)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_agreement_add_f32: NULL block");
	if (ld < count)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "agreement block: row stride %zu below the %zu values per run", ld,
		                count);
	if (!ag->g)
		ag->g = malloc(n * n * sizeof(double));
	if (count > ag->cap) {
		free(ag->d);
		free(ag->mean);
		ag->d = malloc(n * count * sizeof(double));
		ag->mean = malloc(count * sizeof(double));
		ag->cap = ag->d && ag->mean ? count : 0;
	}
	if (!ag->g || !ag->cap)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		                "out of memory for an agreement block of %zu runs x %zu values", n,
		                count);
	double *d = ag->d, *mean = ag->mean, *g = ag->g;
	memset(mean, 0, count * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		const float *x = block + i * ld;
		double s = 0;
		for (size_t t = 0; t < count; t++) {
			double v = x[t];
			s += v * v;
			mean[t] += v;
		}
		ag->norm[i] += s;
	}
	for (size_t t = 0; t < count; t++)
		mean[t] /= (double)n;
	for (size_t i = 0; i < n; i++) {
		const float *x = block + i * ld;
		double *di = d + i * count;
		for (size_t t = 0; t < count; t++)
			di[t] = (double)x[t] - mean[t];
	}
	etc_blas_dsyrk(n, count, 1.0, d, count, 0.0, g, n);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			double gii = g[i * n + i], gjj = g[j * n + j], gij = g[i * n + j];
			double dist = gii + gjj - 2.0 * gij;
			if (dist < 0)
				dist = 0;
			ag->dist[i * n + j] += dist;
			ag->dist[j * n + i] += dist;
			ag->res[i * n + j] += gii + gjj;
			ag->res[j * n + i] += gii + gjj;
		}
	}
	ag->elements += count;
	return ETC_OK;
}

int etc_agreement_merge(etc_agreement *into, const etc_agreement *part, etc_error *err)
{
	if (into->n != part->n)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "agreement merge: %zu runs against %zu runs", into->n, part->n);
	etc_agreement_add_sums(into, part->dist, part->res, part->norm, part->elements);
	return ETC_OK;
}

void etc_agreement_sums(const etc_agreement *ag, double *dist, double *res, double *norm,
                        size_t *elements)
{
	size_t n = ag->n;
	if (dist)
		memcpy(dist, ag->dist, n * n * sizeof(double));
	if (res)
		memcpy(res, ag->res, n * n * sizeof(double));
	if (norm)
		memcpy(norm, ag->norm, n * sizeof(double));
	if (elements)
		*elements = ag->elements;
}

void etc_agreement_add_sums(etc_agreement *ag, const double *dist, const double *res,
                            const double *norm, size_t elements)
{
	size_t n = ag->n;
	for (size_t k = 0; k < n * n; k++) {
		if (dist)
			ag->dist[k] += dist[k];
		if (res)
			ag->res[k] += res[k];
	}
	for (size_t k = 0; norm && k < n; k++)
		ag->norm[k] += norm[k];
	ag->elements += elements;
}

int etc_agreement_snr(const etc_agreement *ag, double *snr, etc_error *err)
{
	if (!ag || !snr)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_agreement_snr: NULL %s",
		                !ag ? "ag" : "snr");
	size_t n = ag->n;
	if (ag->elements == 0)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "run agreement: no values were added (empty outputs)");
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			double rr = ag->norm[j];
			double dd = i == j ? 0 : ag->dist[i * n + j];
			if (dd <= RESOLUTION * ag->res[i * n + j])
				dd = 0;
			double v;
			if (dd == 0)
				v = rr == 0 ? NAN : INFINITY;
			else if (rr == 0)
				v = -INFINITY;
			else
				v = 10.0 * (log10(rr) - log10(dd));
			snr[i * n + j] = v;
		}
	}
	return ETC_OK;
}
