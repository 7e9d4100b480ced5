/*
 * test_numgap_chart.c - etc_plot_numgap_chart's arguments and its .dat and
 * .gp (written without gnuplot: the plot's data and script, not pixels):
 * usage errors for nothing to plot and markers beyond the ops; infinities
 * capped above every finite value, NaN not drawn; the axis from 0, or from
 * below the lowest negative SNR; no local series (NULL) means no bars;
 * beyond 40 ops no tick labels and a narrower width per op.
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include "etcompare/plot.h"

#include <stdlib.h>
#include <unistd.h>

static char dir[512];

static char *slurp(const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	if (buf) {
		size_t n = fread(buf, 1, (1 << 20) - 1, f);
		buf[n] = '\0';
	}
	fclose(f);
	return buf;
}

/* The value of "name = value" in a .gp preamble, as a double (NAN if absent). */
static double gp_num(const char *gp, const char *name)
{
	char key[64];
	snprintf(key, sizeof key, "\n%s = ", name);
	const char *p = gp ? strstr(gp, key) : NULL;
	return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* Column `col` (0-based, space-separated, the label quoted) of data row `row`. */
static double dat_col(const char *dat, int row, int col)
{
	const char *p = dat;
	for (int r = -1; p && r < row;) {
		p = strchr(p, '\n');
		if (!p)
			return NAN;
		p++;
		if (*p != '#')
			r++;
	}
	for (int c = 0; p && c < col; c++) {
		if (*p == '"')
			p = strchr(p + 1, '"') + 1;
		else
			p = strchr(p, ' ');
		if (!p)
			return NAN;
		while (*p == ' ')
			p++;
	}
	return p ? strtod(p, NULL) : NAN;
}

static void test_usage(void)
{
	etc_error err;
	etc_plot_options o = {dir, "/nonexistent/gnuplot", NULL, NULL, NULL};
	double v[2] = {10, 20};
	CHECK(etc_plot_numgap_chart(&o, "u", "t", 0, NULL, v, NULL, NAN, -1, -1, NULL, &err) ==
	      ETC_ERR_USAGE);
	CHECK(etc_plot_numgap_chart(&o, "u", "t", 2, NULL, NULL, NULL, NAN, -1, -1, NULL, &err) ==
	      ETC_ERR_USAGE);
	CHECK(etc_plot_numgap_chart(&o, "u", "t", 2, NULL, v, NULL, NAN, 2, -1, NULL, &err) ==
	      ETC_ERR_USAGE);
	CHECK(strstr(err.message, "culprit 2") != NULL);
	CHECK(etc_plot_numgap_chart(&o, "u", "t", 2, NULL, v, NULL, NAN, -1, 5, NULL, &err) ==
	      ETC_ERR_USAGE);
	char path[1024];
	snprintf(path, sizeof path, "%s/u.dat", dir);
	CHECK(access(path, F_OK) != 0); /* nothing written */
}

static void test_values(void)
{
	etc_error err;
	etc_plot_options o = {dir, "/nonexistent/gnuplot", NULL, NULL, NULL};
	etc_plot_result res = {0, 0, false};
	const char *labels[4] = {"0 a\nop.a", "1 b\nop.b", "2 c\nop.c", "3 d\nop.d"};
	double cum[4] = {INFINITY, 80, -12, -INFINITY}, loc[4] = {INFINITY, 90, 15, NAN};
	CHECK(etc_plot_numgap_chart(&o, "c", "t", 4, labels, cum, loc, 40, 2, 1, &res, &err) == 0);
	CHECK(res.scripts_written == 1 && res.gnuplot_missing);
	char *gp = slurp("c.gp"), *dat = slurp("c.dat");
	CHECK(gp && dat);
	if (!gp || !dat)
		goto done;
	double lo = gp_num(gp, "y_lo"), hi = gp_num(gp, "y_hi");
	double cap_lo = dat_col(dat, 3, 4); /* -inf: below the lowest SNR, on the axis */
	CHECK(cap_lo < -12 && cap_lo > -40 && lo < cap_lo);
	double cap = dat_col(dat, 0, 4);
	CHECK(cap > 90 && cap < hi);      /* +inf capped above 90, on the axis */
	CHECK(dat_col(dat, 0, 5) == cap); /* the local +inf too */
	CHECK(isnan(dat_col(dat, 0, 1)) && isnan(dat_col(dat, 0, 2)));
	CHECK(dat_col(dat, 1, 1) == 80 && dat_col(dat, 1, 2) == 90);
	CHECK(isnan(dat_col(dat, 1, 4)) && isnan(dat_col(dat, 1, 5)));
	CHECK(isnan(dat_col(dat, 3, 1)) && isnan(dat_col(dat, 3, 2)));
	CHECK(isnan(dat_col(dat, 3, 5))); /* NaN: not drawn at all */
	CHECK(dat_col(dat, 2, 6) == 15);  /* the culprit at its local SNR */
	CHECK(isnan(dat_col(dat, 1, 6)));
	CHECK(gp_num(gp, "culprit") == 2 && gp_num(gp, "first_div") == 1);
	CHECK(strstr(gp, "culprit_label = 'error enters: 2 c'\n") != NULL);
	CHECK(strstr(gp, "first_label = 'first divergence: 1 b'\n") != NULL);
	CHECK(gp_num(gp, "has_threshold") == 1 && gp_num(gp, "threshold") == 40);
	CHECK(strstr(gp, "threshold_label = 'min SNR 40 dB'\n") != NULL);
	CHECK(gp_num(gp, "has_local") == 1);
	CHECK(strstr(gp, "cap_cum_title = 'cumulative +inf dB at ") != NULL);
	CHECK(strstr(gp, "cap_loc_title = 'local identical (+inf dB) at ") != NULL);
	CHECK(gp_num(gp, "plot_width") == 1000);
done:
	free(gp);
	free(dat);
}

static void test_wide(void)
{
	etc_error err;
	etc_plot_options o = {dir, "/nonexistent/gnuplot", NULL, NULL, NULL};
	enum { N = 100 };
	double cum[N];
	for (int i = 0; i < N; i++)
		cum[i] = 100 - i;
	CHECK(etc_plot_numgap_chart(&o, "w", "t", N, NULL, cum, NULL, NAN, -1, -1, NULL, &err) ==
	      0);
	char *gp = slurp("w.gp"), *dat = slurp("w.dat");
	CHECK(gp && dat);
	if (gp && dat) {
		CHECK(gp_num(gp, "y_lo") == 0 && gp_num(gp, "y_hi") > 100);
		CHECK(gp_num(gp, "has_local") == 0 && gp_num(gp, "has_threshold") == 0);
		CHECK(gp_num(gp, "culprit") == -1 && gp_num(gp, "first_div") == -1);
		CHECK(gp_num(gp, "plot_width") == 200 + 12 * N); /* no tick labels beyond 40 */
		CHECK(isnan(dat_col(dat, 5, 2)) && dat_col(dat, 5, 1) == 95);
	}
	free(gp);
	free(dat);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/etc_test_numgap_chart_XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	CHECK_GROUP(test_usage);
	CHECK_GROUP(test_values);
	CHECK_GROUP(test_wide);
	static const char *const files[] = {"c.gp", "c.dat", "w.gp", "w.dat"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
	return check_report("test_numgap_chart");
}
