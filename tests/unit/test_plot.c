/*
 * test_plot.c - the plots of include/etcompare/plot.h.
 *
 * Every PNG is decoded here with libpng and checked for its size and for
 * content (the bar colour, several distinct colours); the heat maps' pixels
 * are checked at the cells holding known errors. gnuplot must be installed
 * (gnuplot-nox, scripts/install-deps.sh): its absence fails the test rather
 * than skipping it. Missing gnuplot is simulated with a nonexistent path.
 * Everything is written under a fresh directory in $TMPDIR (or /tmp),
 * removed at the end unless ETC_KEEP_PLOTS is set (to look at the plots).
 */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include "etcompare/plot.h"

#include <dirent.h>
#include <png.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_root[512];

/* ---- files ---- */

static char *path_of(const char *dir, const char *file)
{
	static char buf[4][1024];
	static int k;
	char *p = buf[k++ % 4];
	int n = snprintf(p, sizeof buf[0], "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= sizeof buf[0])
		abort();
	return p;
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *p = malloc(cap + 1);
	size_t got;
	while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *q = realloc(p, 2 * cap + 1);
			if (!q) {
				free(p);
				p = NULL;
				break;
			}
			p = q;
			cap *= 2;
		}
	}
	fclose(f);
	if (p)
		p[n] = '\0';
	if (len)
		*len = n;
	return p;
}

static bool file_contains(const char *path, const char *needle)
{
	char *s = slurp(path, NULL);
	bool found = s && strstr(s, needle);
	if (!found)
		fprintf(stderr, "%s does not contain: %s\n", path, needle);
	free(s);
	return found;
}

/* Entries of `dir` starting with '.' other than . and .. (leftover temporaries). */
static int hidden_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char sub[1024];
			snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
			remove_tree(sub);
		}
		if (d)
			closedir(d);
		rmdir(path);
	} else {
		unlink(path);
	}
}

/* A new directory under tmp_root; the returned path stays valid. */
static const char *new_dir(const char *name)
{
	static char dirs[16][600];
	static int k;
	char *p = dirs[k++ % 16];
	snprintf(p, sizeof dirs[0], "%s/%s", tmp_root, name);
	mkdir(p, 0777);
	return p;
}

/* ---- PNG decoding ---- */

typedef struct image {
	uint32_t w, h;
	uint8_t *rgb; /* w * h * 3 */
	char title[256];
	bool has_title;
} image;

static bool read_png(const char *path, image *im)
{
	memset(im, 0, sizeof *im);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return false;
	}
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	png_bytep *volatile rows = NULL;
	if (!png || !info || setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		fclose(f);
		free(rows);
		free(im->rgb);
		im->rgb = NULL;
		fprintf(stderr, "%s: not a valid PNG\n", path);
		return false;
	}
	png_init_io(png, f);
	png_read_info(png, info);
	im->w = png_get_image_width(png, info);
	im->h = png_get_image_height(png, info);
	png_textp text;
	int ntext = 0;
	if (png_get_text(png, info, &text, &ntext) > 0)
		for (int i = 0; i < ntext; i++)
			if (!strcmp(text[i].key, "Title")) {
				snprintf(im->title, sizeof im->title, "%s", text[i].text);
				im->has_title = true;
			}
	png_set_expand(png);
	png_set_strip_16(png);
	png_set_strip_alpha(png);
	png_set_gray_to_rgb(png);
	png_read_update_info(png, info);
	if (png_get_rowbytes(png, info) != (size_t)im->w * 3)
		png_error(png, "unexpected row size");
	im->rgb = malloc((size_t)im->w * im->h * 3);
	rows = malloc(im->h * sizeof *rows);
	if (!im->rgb || !rows)
		png_error(png, "out of memory");
	for (uint32_t y = 0; y < im->h; y++)
		rows[y] = im->rgb + (size_t)y * im->w * 3;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	fclose(f);
	return true;
}

static const uint8_t *px(const image *im, uint32_t x, uint32_t y)
{
	return im->rgb + ((size_t)y * im->w + x) * 3;
}

static bool px_is(const image *im, uint32_t x, uint32_t y, int r, int g, int b)
{
	const uint8_t *p = px(im, x, y);
	bool ok = p[0] == r && p[1] == g && p[2] == b;
	if (!ok)
		fprintf(stderr, "pixel (%u,%u) is (%d,%d,%d), expected (%d,%d,%d)\n", x, y, p[0],
		        p[1], p[2], r, g, b);
	return ok;
}

static size_t count_rgb(const image *im, int r, int g, int b)
{
	size_t n = 0;
	for (size_t i = 0; i < (size_t)im->w * im->h; i++)
		n += im->rgb[3 * i] == r && im->rgb[3 * i + 1] == g && im->rgb[3 * i + 2] == b;
	return n;
}

/* Distinct colours, counted up to `cap`. */
static size_t distinct_colours(const image *im, size_t cap)
{
	uint32_t seen[256];
	size_t n = 0;
	for (size_t i = 0; i < (size_t)im->w * im->h && n < cap && n < 256; i++) {
		uint32_t c =
		    (uint32_t)im->rgb[3 * i] << 16 | im->rgb[3 * i + 1] << 8 | im->rgb[3 * i + 2];
		size_t k = 0;
		while (k < n && seen[k] != c)
			k++;
		if (k == n)
			seen[n++] = c;
	}
	return n;
}

static void free_image(image *im)
{
	free(im->rgb);
	im->rgb = NULL;
}

/* ---- templates and names ---- */

static void test_templates(void)
{
	const char *src = getenv("ETC_SRC");
	CHECK(src != NULL);
	static const char *kinds[] = {"bars",  "histogram", "lines",   "hbars",
	                              "boxes", "timeline",  "heatmap", "numgap_chart"};
	for (size_t i = 0; src && i < sizeof kinds / sizeof kinds[0]; i++) {
		char path[1024];
		snprintf(path, sizeof path, "%s/plots/%s.gp", src, kinds[i]);
		char *file = slurp(path, NULL);
		CHECK(file != NULL);
		const char *builtin = etc_plot_template(kinds[i]);
		CHECK(builtin != NULL);
		if (file && builtin)
			CHECK(strcmp(file, builtin) == 0); /* run plots/gen_templates.py */
		free(file);
	}
	CHECK(etc_plot_template("heatmaps") == NULL);
	CHECK(etc_plot_template(NULL) == NULL);
}

static etc_plot_options missing_opts(const char *dir)
{
	etc_plot_options o = {dir, "/nonexistent/gnuplot", NULL, NULL, NULL};
	return o;
}

static void test_bad_names(void)
{
	const char *dir = new_dir("names");
	etc_plot_options o = missing_opts(dir);
	static const char *bad[] = {"",          "a/b", "../x", ".hidden", "a b",
	                            "x\xc3\xa9", "a'b", "a\"b", "a\nb",    NULL};
	double v[2] = {1, 2};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		etc_error err;
		etc_plot_result res = {0};
		CHECK(etc_plot_bars(&o, bad[i], "t", "y", 2, NULL, v, &res, &err) == ETC_ERR_USAGE);
		CHECK(err.status == ETC_ERR_USAGE);
		CHECK(strstr(err.message, "plot name") != NULL);
		CHECK(etc_plot_histogram(&o, bad[i], "t", v, 2, 0, &res, &err) == ETC_ERR_USAGE);
		CHECK(etc_plot_lines(&o, bad[i], "t", "y", 2, NULL, v, 1, 0, &res, &err) ==
		      ETC_ERR_USAGE);
		CHECK(res.scripts_written == 0 && res.pngs_written == 0);
	}
	char long_name[130];
	memset(long_name, 'a', 129);
	long_name[129] = '\0';
	etc_error err;
	CHECK(etc_plot_bars(&o, long_name, "t", "y", 2, NULL, v, NULL, &err) == ETC_ERR_USAGE);
	CHECK(entries(dir) == 0);
	long_name[128] = '\0'; /* 128 characters are allowed */
	CHECK(etc_plot_bars(&o, long_name, "t", "y", 2, NULL, v, NULL, &err) == 0);
	CHECK(etc_plot_bars(&o, "ok-Name_1.2", "t", "y", 2, NULL, v, NULL, &err) == 0);
	CHECK(entries(dir) == 4);
	/* Other argument errors. */
	CHECK(etc_plot_bars(&o, "x", "t", "y", 0, NULL, v, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_bars(&o, "x", "t", "y", 2, NULL, NULL, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_lines(&o, "x", "t", "y", 2, NULL, v, 1, 2, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_histogram(&o, "x", "t", v, 2, 100001, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_histogram(&o, "x", "t", NULL, 2, 0, NULL, &err) == ETC_ERR_USAGE);
	CHECK(entries(dir) == 4);
}

/* ---- gnuplot plots ---- */

static const uint8_t BAR_R = 0x3b, BAR_G = 0x78, BAR_B = 0xb0; /* '#3b78b0' */

static void test_bars(void)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/bars/a/b", tmp_root); /* parents are created */
	etc_plot_options o = {dir, NULL, NULL, NULL, NULL};
	const char *labels[] = {"out0", "it's \"q\" #1 @x ^_{} \\", "exact", "nanout", "neg\tx"};
	double values[] = {12.5, 30.25, INFINITY, NAN, -3};
	etc_plot_result res = {0};
	etc_error err;
	int rc =
	    etc_plot_bars(&o, "snr", "It's the SNR", "SNR (dB)", 5, labels, values, &res, &err);
	if (rc)
		fprintf(stderr, "etc_plot_bars: %s\n", err.message);
	CHECK(rc == 0);
	if (res.gnuplot_missing)
		fprintf(stderr, "gnuplot not found on PATH: install gnuplot-nox "
		                "(scripts/install-deps.sh)\n");
	CHECK(!res.gnuplot_missing);
	CHECK(res.scripts_written == 1 && res.pngs_written == 1);
	CHECK(file_contains(path_of(dir, "snr.gp"), "plot_title = 'It''s the SNR'\n"));
	CHECK(file_contains(path_of(dir, "snr.gp"), "datafile = 'snr.dat'\n"));
	CHECK(
	    file_contains(path_of(dir, "snr.gp"), "n_points = 5\nn_plottable = 4\nn_capped = 1\n"));
	CHECK(file_contains(path_of(dir, "snr.dat"), "\n0 12.5 \"out0\" NaN 0 \"\"\n"));
	CHECK(file_contains(path_of(dir, "snr.dat"),
	                    "\n1 30.25 \"it's 'q' #1 @x ^_{} \\\\\" NaN 0 \"\"\n"));
	CHECK(file_contains(path_of(dir, "snr.dat"), "\n2 NaN \"exact\" "));
	CHECK(file_contains(path_of(dir, "snr.dat"), "\n3 NaN \"nanout (nan)\" NaN 0 \"\"\n"));
	CHECK(file_contains(path_of(dir, "snr.dat"), "\n4 -3.0 \"neg x\" NaN 0 \"\"\n"));
	CHECK(hidden_entries(dir) == 0);
	image im;
	if (read_png(path_of(dir, "snr.png"), &im)) {
		CHECK(im.w == 640 && im.h == 480);
		CHECK(count_rgb(&im, 0x80, 0x80, 0x80) > 1000); /* no threshold: not gated, grey */
		CHECK(count_rgb(&im, 0x50, 0x50, 0x50) > 20);   /* the capped +inf bar's marker */
		CHECK(distinct_colours(&im, 64) >= 10);
		free_image(&im);
	}
	/* Results accumulate; many bars widen the image; no labels = indices;
	 * all values NaN still plots. */
	double many[120];
	for (int i = 0; i < 120; i++)
		many[i] = i % 7 == 3 ? NAN : (double)(i % 13);
	rc = etc_plot_bars(&o, "many", "many", "MSE", 120, NULL, many, &res, &err);
	CHECK(rc == 0);
	double nans[3] = {NAN, NAN, NAN};
	rc = etc_plot_bars(&o, "nans", "nothing finite", "", 3, NULL, nans, &res, &err);
	if (rc)
		fprintf(stderr, "etc_plot_bars (all NaN): %s\n", err.message);
	CHECK(rc == 0);
	CHECK(res.scripts_written == 3 && res.pngs_written == 3);
	CHECK(file_contains(path_of(dir, "many.dat"), "\n18 5.0 \"18\" NaN 0 \"\"\n"));
	if (read_png(path_of(dir, "many.png"), &im)) {
		CHECK(im.w == 4096 && im.h == 480);
		CHECK(count_rgb(&im, 0x80, 0x80, 0x80) > 1000); /* no threshold: not gated, grey */
		free_image(&im);
	}
	if (read_png(path_of(dir, "nans.png"), &im)) {
		CHECK(im.w == 640 && im.h == 480);
		CHECK(distinct_colours(&im, 8) >= 2);
		free_image(&im);
	}
}

static uint64_t lcg_state = 12345;
static double uniform(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static void test_histogram(void)
{
	const char *dir = new_dir("hist");
	etc_plot_options o = {dir, NULL, NULL, NULL, NULL};
	enum { N = 10000 };
	static double e[N];
	for (int i = 0; i < N; i++)
		e[i] = (uniform() + uniform() + uniform() + uniform() - 2) * 1e-3;
	e[10] = NAN;
	e[20] = INFINITY;
	e[30] = -INFINITY;
	etc_plot_result res = {0};
	etc_error err;
	int rc = etc_plot_histogram(&o, "out0_err", "error of out0", e, N, 40, &res, &err);
	if (rc)
		fprintf(stderr, "etc_plot_histogram: %s\n", err.message);
	CHECK(rc == 0 && res.pngs_written == 1 && !res.gnuplot_missing);
	CHECK(file_contains(path_of(dir, "out0_err.gp"), "n_values = 10000\nn_nonfinite = 3\n"));
	/* 40 bins whose counts add up to the finite errors. */
	char *dat = slurp(path_of(dir, "out0_err.dat"), NULL);
	CHECK(dat != NULL);
	int rows = 0;
	unsigned long long total = 0;
	for (char *line = dat; line && *line;) {
		char *next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		double centre, a, b;
		unsigned long long count;
		if (line[0] != '#' &&
		    sscanf(line, "%lf %llu %lf %lf", &centre, &count, &a, &b) == 4) {
			rows++;
			total += count;
			CHECK(a < centre && centre < b);
		}
		line = next;
	}
	free(dat);
	CHECK(rows == 40);
	CHECK(total == N - 3);
	image im;
	if (read_png(path_of(dir, "out0_err.png"), &im)) {
		CHECK(im.w == 800 && im.h == 480);
		CHECK(count_rgb(&im, BAR_R, BAR_G, BAR_B) > 5000);
		CHECK(distinct_colours(&im, 64) >= 10);
		free_image(&im);
	}
	/* Degenerate inputs: all equal, none, all non-finite. */
	double same[4] = {0, 0, 0, 0}, bad[2] = {NAN, INFINITY};
	CHECK(etc_plot_histogram(&o, "same", "all zero", same, 4, 0, &res, &err) == 0);
	CHECK(etc_plot_histogram(&o, "none", "empty", NULL, 0, 0, &res, &err) == 0);
	CHECK(etc_plot_histogram(&o, "bad", "non-finite", bad, 2, 5, &res, &err) == 0);
	CHECK(res.pngs_written == 4 && res.scripts_written == 4);
	if (read_png(path_of(dir, "same.png"), &im)) {
		CHECK(im.w == 800 && im.h == 480);
		CHECK(count_rgb(&im, BAR_R, BAR_G, BAR_B) > 100);
		free_image(&im);
	}
	CHECK(hidden_entries(dir) == 0);
}

static void test_lines(void)
{
	const char *dir = new_dir("lines");
	etc_plot_options o = {dir, NULL, NULL, NULL, NULL};
	enum { N = 60 };
	double snr[N];
	char names[N][16];
	const char *labels[N];
	for (int i = 0; i < N; i++) {
		snr[i] = i < 3 ? INFINITY : 120.0 - 1.5 * i;
		snprintf(names[i], sizeof names[i], "aten_op_%d", i);
		labels[i] = names[i];
	}
	long marked = 0;
	while (marked < N && !(snr[marked] < 40))
		marked++;
	etc_plot_result res = {0};
	etc_error err;
	int rc = etc_plot_lines(&o, "divergence", "SNR along execution", "SNR (dB)", N, labels, snr,
	                        40, marked, &res, &err);
	if (rc)
		fprintf(stderr, "etc_plot_lines: %s\n", err.message);
	CHECK(rc == 0 && res.pngs_written == 1);
	CHECK(
	    file_contains(path_of(dir, "divergence.gp"), "has_threshold = 1\nthreshold = 40.0\n"));
	CHECK(file_contains(path_of(dir, "divergence.gp"),
	                    "marked = 54\nmarked_label = 'aten_op_54'\n"));
	image im;
	if (read_png(path_of(dir, "divergence.png"), &im)) {
		CHECK(im.w == 880 && im.h == 480);
		CHECK(distinct_colours(&im, 64) >= 10);
		size_t red = 0, blue = 0;
		for (size_t i = 0; i < (size_t)im.w * im.h; i++) {
			const uint8_t *p = im.rgb + 3 * i;
			red += p[0] > 150 && p[1] < 110 && p[2] < 110;
			blue += p[2] > 140 && p[0] < 120 && p[1] < 150;
		}
		CHECK(red > 50);   /* the marked operator */
		CHECK(blue > 200); /* the SNR line */
		free_image(&im);
	}
	/* Few points: labels as tics; no threshold, nothing marked. */
	double few[3] = {1, 2, NAN};
	rc = etc_plot_lines(&o, "few", "few", "cosine", 3, labels, few, NAN, -1, &res, &err);
	CHECK(rc == 0 && res.pngs_written == 2);
	CHECK(file_contains(path_of(dir, "few.gp"), "has_threshold = 0\n"));
	if (read_png(path_of(dir, "few.png"), &im)) {
		CHECK(im.w == 800 && im.h == 480);
		CHECK(distinct_colours(&im, 64) >= 10);
		free_image(&im);
	}
	CHECK(hidden_entries(dir) == 0);
}

static void test_missing_gnuplot(void)
{
	const char *dir = new_dir("missing");
	etc_plot_options o = missing_opts(dir);
	double v[3] = {1, 2, 3};
	etc_plot_result res = {0};
	etc_error err;
	CHECK(etc_plot_bars(&o, "mse", "MSE", "MSE", 3, NULL, v, &res, &err) == 0);
	CHECK(res.gnuplot_missing);
	CHECK(res.scripts_written == 1 && res.pngs_written == 0);
	CHECK(exists(path_of(dir, "mse.gp")) && exists(path_of(dir, "mse.dat")));
	CHECK(!exists(path_of(dir, "mse.png")));
	/* A name not on PATH is missing too; the flag stays set. */
	o.gnuplot = "etcompare-no-such-gnuplot";
	CHECK(etc_plot_histogram(&o, "h", "h", v, 3, 0, &res, &err) == 0);
	CHECK(etc_plot_lines(&o, "l", "l", "y", 3, NULL, v, 2, 1, &res, &err) == 0);
	CHECK(res.gnuplot_missing && res.scripts_written == 3 && res.pngs_written == 0);
	CHECK(!exists(path_of(dir, "h.png")) && !exists(path_of(dir, "l.png")));
	CHECK(entries(dir) == 6);
	/* A gnuplot path that is a directory is missing as well. */
	o.gnuplot = "/";
	etc_plot_result r2 = {0};
	CHECK(etc_plot_bars(&o, "mse", "MSE", "MSE", 3, NULL, v, &r2, &err) == 0);
	CHECK(r2.gnuplot_missing);
	/* The scripts still make the PNGs later: run the saved one by hand. */
	CHECK(hidden_entries(dir) == 0);
}

static void test_template_dir(void)
{
	const char *src = getenv("ETC_SRC");
	const char *d1 = new_dir("tpl_builtin"), *d2 = new_dir("tpl_dir");
	char plots[1024];
	snprintf(plots, sizeof plots, "%s/plots", src ? src : ".");
	etc_plot_options o1 = missing_opts(d1), o2 = missing_opts(d2);
	o2.template_dir = plots;
	double v[3] = {1, -2, 3};
	etc_error err;
	CHECK(etc_plot_lines(&o1, "x", "t", "y", 3, NULL, v, 0, 1, NULL, &err) == 0);
	CHECK(etc_plot_lines(&o2, "x", "t", "y", 3, NULL, v, 0, 1, NULL, &err) == 0);
	char *a = slurp(path_of(d1, "x.gp"), NULL), *b = slurp(path_of(d2, "x.gp"), NULL);
	CHECK(a && b && strcmp(a, b) == 0);
	free(a);
	free(b);
	/* A template directory without the template. */
	o2.template_dir = "/nonexistent/plots";
	CHECK(etc_plot_bars(&o2, "y", "t", "y", 3, NULL, v, NULL, &err) == ETC_ERR_IO);
	CHECK(!exists(path_of(d2, "y.gp")));
	/* A template gnuplot rejects: an error naming gnuplot, no PNG, no temporaries,
	 * the script and data kept for inspection. */
	const char *broken = new_dir("tpl_broken");
	FILE *f = fopen(path_of(broken, "bars.gp"), "w");
	CHECK(f != NULL);
	if (f) {
		fputs("plot datafile using 1:2 with no_such_style\n", f);
		fclose(f);
	}
	const char *out = new_dir("tpl_broken_out");
	etc_plot_options o3 = {out, NULL, broken, NULL, NULL};
	etc_plot_result res = {0};
	int rc = etc_plot_bars(&o3, "z", "t", "y", 3, NULL, v, &res, &err);
	CHECK(rc == ETC_ERR_IO);
	if (!strstr(err.message, "unrecognized plot type"))
		fprintf(stderr, "broken template: %s\n", err.message);
	CHECK(strstr(err.message, "gnuplot") != NULL &&
	      strstr(err.message, "unrecognized plot type"));
	CHECK(res.scripts_written == 1 && res.pngs_written == 0);
	CHECK(!exists(path_of(out, "z.png")));
	CHECK(exists(path_of(out, "z.gp")) && exists(path_of(out, "z.dat")));
	CHECK(hidden_entries(out) == 0);
}

/* ---- heat maps ---- */

static const int HOT[3] = {253, 231, 37}, COLD[3] = {68, 1, 84}, NONFINITE[3] = {255, 0, 255};

/* Centre pixel of source cell (r, c). */
static void cell_px(const etc_heatmap_layout *l, uint64_t r, uint64_t c, uint32_t *x, uint32_t *y)
{
	*x = l->map_x + (uint32_t)(c / l->block_cols) * l->cell_w + l->cell_w / 2;
	*y = l->map_y + (uint32_t)(r / l->block_rows) * l->cell_h + l->cell_h / 2;
}

static size_t count_in_map(const image *im, const etc_heatmap_layout *l, const int *rgb)
{
	size_t n = 0;
	for (uint32_t y = l->map_y; y < l->map_y + l->map_rows * l->cell_h; y++)
		for (uint32_t x = l->map_x; x < l->map_x + l->map_cols * l->cell_w; x++) {
			const uint8_t *p = px(im, x, y);
			n += p[0] == rgb[0] && p[1] == rgb[1] && p[2] == rgb[2];
		}
	return n;
}

static size_t black_in_labels(const image *im, const etc_heatmap_layout *l)
{
	size_t n = 0;
	for (uint32_t y = 0; y < im->h; y++)
		for (uint32_t x = l->bar_x + l->bar_w + 5; x < im->w; x++) {
			const uint8_t *p = px(im, x, y);
			n += p[0] == 0 && p[1] == 0 && p[2] == 0;
		}
	return n;
}

static void test_heatmap_small(void)
{
	const char *dir = new_dir("heat");
	enum { R = 37, C = 53 };
	static double m[R * C];
	for (int r = 0; r < R; r++)
		for (int c = 0; c < C; c++)
			m[r * C + c] = 1e-3 * ((r * 7 + c * 3) % 10);
	m[11 * C + 29] = 5.0;
	etc_error err;
	const char *path = path_of(dir, "out0_heat.png");
	int rc = etc_plot_heatmap(path, m, R, C, "|a - r| of out0 \xc3\xa9", &err);
	if (rc)
		fprintf(stderr, "etc_plot_heatmap: %s\n", err.message);
	CHECK(rc == 0);
	etc_heatmap_layout l;
	CHECK(etc_plot_heatmap_layout(R, C, &l, &err) == 0);
	CHECK(l.block_rows == 1 && l.block_cols == 1 && l.map_rows == R && l.map_cols == C);
	CHECK(l.cell_w == 512 / C && l.cell_h == 512 / C);
	image im;
	if (read_png(path, &im)) {
		CHECK(im.w == l.width && im.h == l.height);
		CHECK(im.has_title && strcmp(im.title, "|a - r| of out0 \xc3\xa9") == 0);
		uint32_t x, y;
		cell_px(&l, 11, 29, &x, &y);
		CHECK(px_is(&im, x, y, HOT[0], HOT[1], HOT[2]));
		/* Only that cell is the hottest colour in the map. */
		CHECK(count_in_map(&im, &l, HOT) == (size_t)l.cell_w * l.cell_h);
		cell_px(&l, 0, 0, &x, &y); /* error 0: the smallest */
		CHECK(px_is(&im, x, y, COLD[0], COLD[1], COLD[2]));
		cell_px(&l, 36, 52, &x, &y); /* (36*7 + 52*3) % 10 = 8: between */
		const uint8_t *p = px(&im, x, y);
		CHECK(!(p[0] == HOT[0] && p[1] == HOT[1]) && !(p[0] == COLD[0] && p[1] == COLD[1]));
		/* The scale bar: hottest at the top, coldest at the bottom. */
		CHECK(px_is(&im, l.bar_x + l.bar_w / 2, l.bar_y, HOT[0], HOT[1], HOT[2]));
		CHECK(px_is(&im, l.bar_x + l.bar_w / 2, l.bar_y + l.bar_h - 1, COLD[0], COLD[1],
		            COLD[2]));
		CHECK(px_is(&im, 0, 0, 255, 255, 255));
		CHECK(black_in_labels(&im, &l) > 40); /* "5" and "0" */
		free_image(&im);
	}
	CHECK(hidden_entries(dir) == 0);

	/* Argument errors and an unwritable path: nothing written. */
	CHECK(etc_plot_heatmap(path_of(dir, "z.png"), m, 0, C, "t", &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_heatmap(path_of(dir, "z.png"), m, R, 0, "t", &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_heatmap(path_of(dir, "z.png"), NULL, R, C, "t", &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_heatmap_layout(UINT64_MAX, 2, &l, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_heatmap(path_of(dir, "no/such/dir.png"), m, R, C, "t", &err) == ETC_ERR_IO);
	CHECK(entries(dir) == 1);
}

typedef struct gen {
	uint64_t rows, cols, next;
	bool fail_at_half, bad_call;
} gen;

static double gen_value(uint64_t r, uint64_t c)
{
	if (r == 2999 && c == 1234)
		return 9.0;
	if (r == 5 && c == 5)
		return NAN;
	if (r == 1500 && c == 2000)
		return INFINITY;
	return 0.01 * (double)((r + c) % 7) / 7.0;
}

static int gen_read(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err)
{
	gen *g = ctx;
	if (first != g->next || count == 0 || count > 16384 || first + count > g->rows * g->cols)
		g->bad_call = true;
	g->next = first + count;
	if (g->fail_at_half && first >= g->rows * g->cols / 2) {
		err->status = ETC_ERR_FORMAT;
		snprintf(err->message, sizeof err->message, "generator failed");
		return ETC_ERR_FORMAT;
	}
	for (size_t i = 0; i < count; i++)
		dst[i] = gen_value((first + i) / g->cols, (first + i) % g->cols);
	return 0;
}

static void test_heatmap_large(void)
{
	const char *dir = new_dir("heat_large");
	gen g = {3000, 2500, 0, false, false};
	etc_error err;
	const char *path = path_of(dir, "big.png");
	int rc = etc_plot_heatmap_read(path, gen_read, &g, g.rows, g.cols, "big", &err);
	if (rc)
		fprintf(stderr, "etc_plot_heatmap_read: %s\n", err.message);
	CHECK(rc == 0);
	CHECK(!g.bad_call && g.next == g.rows * g.cols);
	etc_heatmap_layout l;
	CHECK(etc_plot_heatmap_layout(g.rows, g.cols, &l, &err) == 0);
	CHECK(l.block_rows == 3 && l.block_cols == 3);
	CHECK(l.map_rows == 1000 && l.map_cols == 834);
	CHECK(l.cell_w == 1 && l.cell_h == 1);
	image im;
	if (read_png(path, &im)) {
		CHECK(im.w == l.width && im.h == l.height);
		CHECK(im.w <= 1024 + 200 && im.h <= 1024 + 16);
		uint32_t x, y;
		cell_px(&l, 2999, 1234, &x, &y);
		CHECK(px_is(&im, x, y, HOT[0], HOT[1], HOT[2]));
		CHECK(count_in_map(&im, &l, HOT) == 1);
		cell_px(&l, 5, 5, &x, &y);
		CHECK(px_is(&im, x, y, NONFINITE[0], NONFINITE[1], NONFINITE[2]));
		cell_px(&l, 1500, 2000, &x, &y);
		CHECK(px_is(&im, x, y, NONFINITE[0], NONFINITE[1], NONFINITE[2]));
		CHECK(count_in_map(&im, &l, NONFINITE) == 2);
		free_image(&im);
	}
	/* A failing reader: its error comes back and nothing is written. */
	gen bad = {3000, 2500, 0, true, false};
	rc = etc_plot_heatmap_read(path_of(dir, "fail.png"), gen_read, &bad, bad.rows, bad.cols,
	                           "fail", &err);
	CHECK(rc == ETC_ERR_FORMAT && strcmp(err.message, "generator failed") == 0);
	CHECK(!exists(path_of(dir, "fail.png")));

	/* A single long row: pooled along columns, drawn as a visible strip. */
	gen thin = {1, 5000, 0, false, false};
	rc =
	    etc_plot_heatmap_read(path_of(dir, "thin.png"), gen_read, &thin, 1, 5000, "thin", &err);
	CHECK(rc == 0);
	CHECK(etc_plot_heatmap_layout(1, 5000, &l, &err) == 0);
	CHECK(l.block_cols == 5 && l.map_cols == 1000 && l.map_rows == 1 && l.cell_h >= 32);
	if (read_png(path_of(dir, "thin.png"), &im)) {
		CHECK(im.w == l.width && im.h == l.height);
		CHECK(distinct_colours(&im, 16) >= 8);
		free_image(&im);
	}

	/* Nothing finite: all magenta, a grey bar, no labels. */
	double nan4[4] = {NAN, NAN, INFINITY, NAN};
	rc = etc_plot_heatmap(path_of(dir, "nan.png"), nan4, 2, 2, NULL, &err);
	CHECK(rc == 0);
	CHECK(etc_plot_heatmap_layout(2, 2, &l, &err) == 0);
	if (read_png(path_of(dir, "nan.png"), &im)) {
		CHECK(count_in_map(&im, &l, NONFINITE) == (size_t)4 * l.cell_w * l.cell_h);
		CHECK(px_is(&im, l.bar_x + 1, l.bar_y + 1, 192, 192, 192));
		CHECK(black_in_labels(&im, &l) == 0);
		free_image(&im);
	}
	CHECK(hidden_entries(dir) == 0);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmp_root, sizeof tmp_root, "%s/etc_test_plot_XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 1;
	}
	test_templates();
	test_bad_names();
	test_bars();
	test_histogram();
	test_lines();
	test_missing_gnuplot();
	test_template_dir();
	test_heatmap_small();
	test_heatmap_large();
	if (getenv("ETC_KEEP_PLOTS"))
		fprintf(stderr, "plots kept in %s\n", tmp_root);
	else
		remove_tree(tmp_root);
	return check_report("test_plot");
}
