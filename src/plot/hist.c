/*
 * hist.c - the histogram of one output's signed error, read in chunks twice
 * (range and moments, then the bins), so no copy of the output is needed.
 * Its statistics go into the title, where they cannot cover a bar.
 */
#include "etcompare/plot.h"
#include "core/internal.h"
#include "plot/plot_private.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PLOT_MAX_BINS     100000
#define PLOT_DEFAULT_BINS 50

/* ---- histogram ---- */

typedef struct hist {
	const char *title;
	uint64_t n, nonfinite;
	size_t bins;
	uint64_t *counts;
	double lo, hi, mean, std;
} hist;

static double edge(const hist *h, size_t b)
{
	if (b == h->bins)
		return h->hi;
	return h->lo + (double)b * (h->hi / (double)h->bins - h->lo / (double)h->bins);
}

static void hist_dat(FILE *f, const void *ctx)
{
	const hist *h = ctx;
	fputs("# bin centre, count, bin low edge, bin high edge\n", f);
	for (size_t b = 0; b < h->bins; b++) {
		double a = edge(h, b), z = edge(h, b + 1);
		etc_plot_put_num_(f, a / 2 + z / 2);
		fprintf(f, " %llu ", (unsigned long long)h->counts[b]);
		etc_plot_put_num_(f, a);
		fputc(' ', f);
		etc_plot_put_num_(f, z);
		fputc('\n', f);
	}
}

static void hist_vars(FILE *f, const void *ctx)
{
	const hist *h = ctx;
	etc_plot_var_str_(f, "plot_xlabel", "error (actual - reference)");
	etc_plot_var_int_(f, "n_values", (long long)h->n);
	etc_plot_var_int_(f, "n_nonfinite", (long long)h->nonfinite);
	etc_plot_var_num_(f, "hist_lo", h->lo);
	etc_plot_var_num_(f, "hist_hi", h->hi);
	etc_plot_var_num_(f, "bin_width", h->hi / (double)h->bins - h->lo / (double)h->bins);
	etc_plot_var_num_(f, "err_mean", h->mean);
	etc_plot_var_num_(f, "err_std", h->std);
}

static int hist_fill(hist *h, etc_plot_read_fn read, void *ctx, etc_error *err)
{
	double *buf = malloc(PLOT_CHUNK * sizeof *buf);
	if (!buf)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	/* Pass 1: range, non-finite count, mean and variance (Welford). */
	double lo = INFINITY, hi = -INFINITY, mean = 0, m2 = 0;
	uint64_t finite = 0;
	for (uint64_t first = 0; first < h->n;) {
		size_t k = h->n - first < PLOT_CHUNK ? (size_t)(h->n - first) : PLOT_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			double v = buf[i];
			if (!isfinite(v)) {
				h->nonfinite++;
				continue;
			}
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			finite++;
			double d = v - mean;
			mean += d / (double)finite;
			m2 += d * (v - mean);
		}
		first += k;
	}
	h->mean = finite ? mean : 0;
	h->std = finite ? sqrt(m2 / (double)finite) : 0;
	if (!finite) {
		lo = 0;
		hi = 1;
	} else if (!(hi > lo)) {
		double d = lo == 0 ? 0.5 : fabs(lo) * 0.25;
		lo -= d;
		hi += d;
		if (!isfinite(lo))
			lo = -(DBL_MAX / 2);
		if (!isfinite(hi))
			hi = (DBL_MAX / 2);
	}
	h->lo = lo;
	h->hi = hi;
	/* Pass 2: the bins. */
	double scale = hi / 2 - lo / 2;
	for (uint64_t first = 0; finite && first < h->n;) {
		size_t k = h->n - first < PLOT_CHUNK ? (size_t)(h->n - first) : PLOT_CHUNK;
		int rc = read(ctx, first, k, buf, err);
		if (rc < 0) {
			free(buf);
			return rc;
		}
		for (size_t i = 0; i < k; i++) {
			double v = buf[i];
			if (!isfinite(v))
				continue;
			double t = (v / 2 - lo / 2) / scale;
			/* t is compared before the conversion: a zero-width range gives inf */
			size_t b = !(t > 0) ? 0
			           : t >= 1 ? h->bins - 1
			                    : (size_t)(t * (double)h->bins);
			if (b >= h->bins)
				b = h->bins - 1;
			h->counts[b]++;
		}
		first += k;
	}
	free(buf);
	return 0;
}

int etc_plot_histogram_read(const etc_plot_options *o, const char *name, const char *title,
                            etc_plot_read_fn read, void *ctx, uint64_t n, size_t bins,
                            etc_plot_result *res, etc_error *err)
{
	ETC_TRY(etc_plot_check_name_(name, err));
	if (!read)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_histogram: no values");
	if (bins == 0)
		bins = PLOT_DEFAULT_BINS;
	if (bins > PLOT_MAX_BINS)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_plot_histogram: %zu bins, at most %d allowed", bins,
		                PLOT_MAX_BINS);
	hist h = {0};
	h.title = title ? title : "";
	h.n = n;
	h.bins = bins;
	h.counts = calloc(bins, sizeof *h.counts);
	if (!h.counts)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = hist_fill(&h, read, ctx, err);
	if (rc == 0) {
		plot_job j = etc_plot_job_init_(o, name, "histogram", title);
		j.width = 800;
		j.write_dat = hist_dat;
		j.write_vars = hist_vars;
		j.ctx = &h;
		rc = etc_plot_job_run_(&j, res, err);
	}
	free(h.counts);
	return rc;
}

int etc_plot_histogram(const etc_plot_options *o, const char *name, const char *title,
                       const double *errors, size_t n, size_t bins, etc_plot_result *res,
                       etc_error *err)
{
	if (n && !errors)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_plot_histogram: errors is NULL");
	return etc_plot_histogram_read(o, name, title, etc_plot_read_doubles_, (void *)errors, n,
	                               bins, res, err);
}

int etc_plot_read_doubles_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err)
{
	(void)err;
	memcpy(dst, (const double *)ctx + first, count * sizeof *dst);
	return 0;
}
