/*
 * test_plot_batch.c - gnuplot for many plots (etc_plot_batch), the plot set
 * (etc_plot_set_*) and the heat map (etc_plot_error_map): its layout, and its PNG
 * decoded with libpng (the cell of the largest error is the hottest colour).
 * The gnuplot parts are skipped, saying so, when gnuplot is not on PATH (the
 * heat map is drawn without it).
 */
#define _GNU_SOURCE
#include "etcompare/etcompare.h"
#include "check.h"
#include "plot/plot_private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <png.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[512];

static const char *sub(const char *name)
{
	static char buf[8][700];
	static int k;
	char *p = buf[k++ % 8];
	snprintf(p, 700, "%s/%s", root, name);
	return p;
}

static bool exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static int hidden_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

typedef struct image {
	uint32_t w, h;
	uint8_t *rgb;
} image;

static bool read_png(const char *path, image *im)
{
	memset(im, 0, sizeof *im);
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	png_infop info = png ? png_create_info_struct(png) : NULL;
	png_bytep *volatile rows = NULL;
	if (!png || !info || setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		free(rows);
		free(im->rgb);
		im->rgb = NULL;
		fclose(f);
		return false;
	}
	png_init_io(png, f);
	png_read_info(png, info);
	im->w = png_get_image_width(png, info);
	im->h = png_get_image_height(png, info);
	png_set_expand(png);
	png_set_strip_16(png);
	png_set_strip_alpha(png);
	png_set_gray_to_rgb(png);
	png_read_update_info(png, info);
	im->rgb = malloc((size_t)im->w * im->h * 3);
	rows = malloc(im->h * sizeof *rows);
	if (!im->rgb || !rows)
		png_error(png, "out of memory");
	for (uint32_t y = 0; y < im->h; y++)
		rows[y] = im->rgb + (size_t)y * im->w * 3;
	png_read_image(png, rows);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	fclose(f);
	return true;
}

static bool near(const uint8_t *p, int r, int g, int b, int tol)
{
	return abs(p[0] - r) <= tol && abs(p[1] - g) <= tol && abs(p[2] - b) <= tol;
}

static void test_layout(void)
{
	etc_error err;
	etc_heatmap_layout l;
	CHECK(etc_plot_error_map_layout(4, 64, &l, &err) == 0);
	/* 64 columns of 11 px, a strip 44 px tall with its colour bar below */
	CHECK(l.block_rows == 1 && l.block_cols == 1 && l.map_rows == 4 && l.map_cols == 64);
	CHECK(l.cell_w == 11 && l.cell_h == 11 && l.width == 844 && l.height == 252);
	CHECK(l.bar_w > l.bar_h && l.bar_y > l.map_y + 44);
	CHECK(etc_plot_error_map_layout(2, 3, &l, &err) == 0);
	CHECK(l.cell_w == 64 && l.cell_h == 64 && l.width == 640); /* enlarged, centred */
	CHECK(etc_plot_error_map_layout(1000, 1000, &l, &err) == 0);
	CHECK(l.block_rows == 5 && l.map_rows == 200 && l.cell_w == 2 && l.bar_h > l.bar_w);
	CHECK(etc_plot_error_map_layout(1, 1000000, &l, &err) == 0);
	CHECK(l.map_cols <= 240 && l.map_rows * l.cell_h >= 40); /* a strip stays visible */
	CHECK(etc_plot_error_map_layout(0, 5, &l, &err) == ETC_ERR_USAGE);
	CHECK(etc_plot_error_map_layout(UINT64_MAX, 3, &l, &err) == ETC_ERR_USAGE);
}

static void test_error_map(void)
{
	etc_error err;
	double v[15] = {0};
	for (int i = 0; i < 15; i++)
		v[i] = 0.01 * i;
	v[1 * 5 + 3] = -2.5; /* |v| largest at row 1, column 3 */
	etc_plot_result res = {0};
	etc_plot_options o = {sub("map"), NULL, NULL, NULL, NULL};
	int rc = etc_plot_error_map(&o, "m", "out 0 [3, 5]", "dim 1 (5)", "dim 0 (3)", NULL,
	                            etc_plot_read_doubles_, v, 3, 5, &res, &err);
	if (rc)
		fprintf(stderr, "etc_plot_error_map: %s\n", err.message);
	CHECK(rc == 0 && res.pngs_written == 1);
	etc_heatmap_layout l;
	CHECK(etc_plot_error_map_layout(3, 5, &l, &err) == 0);
	image im;
	CHECK(read_png(sub("map/m.png"), &im));
	if (im.rgb) {
		CHECK(im.w == l.width && im.h == l.height);
		uint32_t x = l.map_x + 3 * l.cell_w + l.cell_w / 2,
		         y = l.map_y + l.cell_h + l.cell_h / 2;
		const uint8_t *p = im.rgb + ((size_t)y * im.w + x) * 3;
		CHECK(near(p, 253, 231, 37, 6)); /* the hottest colour */
		x = l.map_x + l.cell_w / 2;
		y = l.map_y + l.cell_h / 2;
		p = im.rgb + ((size_t)y * im.w + x) * 3;
		CHECK(near(p, 68, 1, 84, 6)); /* 0: the coolest */
		free(im.rgb);
	}
	FILE *f = fopen(sub("map/m.gp"), "r");
	char buf[8192] = "";
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	CHECK(strstr(buf, "max 2.5 at row 1, column 3") != NULL);
}

static void test_batch(void)
{
	etc_error err;
	/* a template that fails for the plot titled 'b' only */
	mkdir(sub("tpl"), 0777);
	FILE *f = fopen(sub("tpl/bars.gp"), "w");
	if (f) {
		fputs("if (plot_title eq 'b') {\n\tplot datafile using 1:2 with no_such_style\n} "
		      "else {\n\tplot datafile using 1:2 with boxes notitle\n}\n",
		      f);
		fclose(f);
	}
	etc_plot_batch *b = NULL;
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	etc_plot_options o = {sub("batch"), NULL, sub("tpl"), b, NULL};
	etc_plot_result res = {0};
	double v[3] = {1, 2, 3};
	CHECK(etc_plot_bars(&o, "a", "a", "y", 3, NULL, v, &res, &err) == 0);
	CHECK(etc_plot_bars(&o, "b", "b", "y", 3, NULL, v, &res, &err) == 0);
	CHECK(etc_plot_bars(&o, "c", "c", "y", 3, NULL, v, &res, &err) == 0);
	/* queued: scripts written, no PNG yet */
	CHECK(res.scripts_written == 3 && res.pngs_written == 0 && !exists(sub("batch/a.png")));
	CHECK(etc_plot_batch_note(b, "one note", &err) == 0);
	int rc = etc_plot_batch_run(b, &o, &res, &err);
	CHECK(rc == ETC_ERR_IO);
	if (rc)
		CHECK(strstr(err.message, "b.gp") && strstr(err.message, "unrecognized plot type"));
	CHECK(res.pngs_written == 2);
	CHECK(exists(sub("batch/a.png")) && !exists(sub("batch/b.png")) &&
	      exists(sub("batch/c.png")));
	CHECK(etc_plot_batch_count(b) == 3);
	CHECK(etc_plot_batch_item(b, 0)->made && !etc_plot_batch_item(b, 1)->made &&
	      etc_plot_batch_item(b, 2)->made);
	CHECK(etc_plot_batch_item(b, 3) == NULL);
	CHECK(etc_plot_batch_write_index(b, sub("batch"), &err) == 0);
	f = fopen(sub("batch/index.txt"), "r");
	char buf[2048] = "";
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	CHECK(strstr(buf, "a.png\ta\n") && strstr(buf, "b.gp\tb\n") &&
	      strstr(buf, "note: one note\n"));
	CHECK(hidden_entries(sub("batch")) == 0);
	/* running again makes nothing twice */
	etc_plot_result again = {0};
	etc_plot_batch_run(b, &o, &again, &err);
	CHECK(again.pngs_written == 0);
	etc_plot_batch_free(b);
	/* without gnuplot: nothing made, said once through the result */
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	etc_plot_options m = {sub("missing"), "/nonexistent/gnuplot", NULL, b, NULL};
	etc_plot_result r2 = {0};
	CHECK(etc_plot_bars(&m, "a", "a", "y", 3, NULL, v, &r2, &err) == 0);
	CHECK(etc_plot_batch_run(b, &m, &r2, &err) == 0);
	CHECK(r2.gnuplot_missing && r2.pngs_written == 0 && exists(sub("missing/a.gp")));
	etc_plot_batch_free(b);
}

/* The whole file at `path` (malloc'ed, *n bytes), or NULL. */
static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	*n = 0;
	if (f && fseek(f, 0, SEEK_END) == 0) {
		long len = ftell(f);
		buf = len > 0 ? malloc((size_t)len) : NULL;
		if (buf && fseek(f, 0, SEEK_SET) == 0 &&
		    fread(buf, 1, (size_t)len, f) == (size_t)len)
			*n = (size_t)len;
	}
	if (f)
		fclose(f);
	return buf;
}

/*
 * gnuplots started ahead (etc_plot_batch_start): the same PNGs, byte for
 * byte, as gnuplots started by the run (test_batch made them in batch/); a
 * failing plot still fails the run naming its script; processes never fed
 * are ended with the batch (no child left).
 */
static void test_batch_started(void)
{
	etc_error err;
	etc_plot_batch *b = NULL;
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	etc_plot_options o = {sub("started"), NULL, sub("tpl"), b, NULL};
	CHECK(etc_plot_batch_start(b, &o, &err) == 0);
	etc_plot_result res = {0};
	double v[3] = {1, 2, 3};
	CHECK(etc_plot_bars(&o, "a", "a", "y", 3, NULL, v, &res, &err) == 0);
	CHECK(etc_plot_bars(&o, "b", "b", "y", 3, NULL, v, &res, &err) == 0);
	CHECK(etc_plot_bars(&o, "c", "c", "y", 3, NULL, v, &res, &err) == 0);
	int rc = etc_plot_batch_run(b, &o, &res, &err);
	CHECK(rc == ETC_ERR_IO);
	if (rc)
		CHECK(strstr(err.message, "b.gp") && strstr(err.message, "unrecognized plot type"));
	CHECK(res.pngs_written == 2 && !exists(sub("started/b.png")));
	const char *const names[] = {"a", "c"};
	for (size_t i = 0; i < 2; i++) {
		char p1[700], p2[700];
		snprintf(p1, sizeof p1, "%s", sub("batch/"));
		snprintf(p2, sizeof p2, "%s", sub("started/"));
		strcat(p1, names[i]);
		strcat(p1, ".png");
		strcat(p2, names[i]);
		strcat(p2, ".png");
		size_t n1, n2;
		unsigned char *x = slurp(p1, &n1), *y = slurp(p2, &n2);
		CHECK(x && y && n1 == n2 && n1 > 0 && memcmp(x, y, n1) == 0);
		free(x);
		free(y);
	}
	CHECK(hidden_entries(sub("started")) == 0);
	etc_plot_batch_free(b);
	/* started and never run: its gnuplots end with the batch */
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	CHECK(etc_plot_batch_start(b, NULL, &err) == 0);
	etc_plot_batch_free(b);
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	/* a program that is not there: nothing started, the run says so */
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	etc_plot_options m = {sub("missing2"), "/nonexistent/gnuplot", NULL, b, NULL};
	CHECK(etc_plot_batch_start(b, &m, &err) == 0);
	etc_plot_result r2 = {0};
	CHECK(etc_plot_bars(&m, "a", "a", "y", 3, NULL, v, &r2, &err) == 0);
	CHECK(etc_plot_batch_run(b, &m, &r2, &err) == 0);
	CHECK(r2.gnuplot_missing && r2.pngs_written == 0);
	etc_plot_batch_free(b);
}

/* A plot set made in a temporary folder and moved in whole, or discarded. */
static void test_set(void)
{
	etc_error err;
	char dir[700];
	snprintf(dir, sizeof dir, "%s", sub("set")); /* sub() reuses its buffers */
	mkdir(dir, 0777);
	/* a previous set: its index names "old" and "a"; a user's file beside */
	FILE *f = fopen(sub("set/index.txt"), "w");
	if (f) {
		fputs("# index.txt - written by etcompare\nold.png\told\na.png\ta\nedited.png\te\n",
		      f);
		fclose(f);
	}
	const char *const olds[] = {"set/old.png",  "set/old.gp",     "set/old.dat",
	                            "set/mine.txt", "set/edited.png", "set/edited.gp",
	                            "set/index.txt"};
	for (size_t i = 0; i < 7; i++) {
		f = i < 6 ? fopen(sub(olds[i]), "w") : NULL;
		if (f) {
			fputs("x", f);
			fclose(f);
		}
		/* the previous set's time, as etcompare gives its files and index;
		   the user's file and the PNG edited since have another */
		const struct timespec set[2] = {{1000000000, 123456789}, {1000000000, 123456789}};
		const struct timespec later[2] = {{1000000001, 0}, {1000000001, 0}};
		CHECK(utimensat(AT_FDCWD, sub(olds[i]), i == 3 || i == 4 ? later : set, 0) == 0);
	}
	char *tmp = NULL;
	etc_plot_batch *b = NULL;
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	CHECK(etc_plot_set_begin(b, dir, &tmp, &err) == 0 && tmp &&
	      strstr(tmp, "/.etcompare-plots."));
	if (!tmp) {
		etc_plot_batch_free(b);
		return;
	}
	etc_plot_options o = {tmp, "/nonexistent/gnuplot", NULL, b, NULL};
	etc_plot_result res = {0};
	double v[3] = {1, 2, 3};
	CHECK(etc_plot_bars(&o, "a", "a", "y", 3, NULL, v, &res, &err) == 0);
	/* a heat map is drawn at once, without gnuplot */
	CHECK(etc_plot_error_map(&o, "m", "m", NULL, NULL, NULL, etc_plot_read_doubles_, v, 1, 3,
	                         &res, &err) == 0);
	CHECK(etc_plot_batch_run(b, &o, &res, &err) == 0 && res.gnuplot_missing);
	CHECK(etc_plot_batch_item(b, 1)->made && !etc_plot_batch_item(b, 0)->made);
	CHECK(etc_plot_batch_write_index(b, tmp, &err) == 0);
	/* nothing in dir changed before the commit */
	CHECK(!exists(sub("set/a.gp")) && !exists(sub("set/m.png")) && exists(sub("set/old.png")));
	int rc = etc_plot_set_commit(b, tmp, dir, &err);
	if (rc)
		fprintf(stderr, "etc_plot_set_commit: %s\n", err.message);
	CHECK(rc == 0);
	CHECK(exists(sub("set/a.gp")) && exists(sub("set/a.dat")) && exists(sub("set/m.png")) &&
	      exists(sub("set/m.gp")) && exists(sub("set/index.txt")));
	CHECK(!exists(sub("set/old.png")) && !exists(sub("set/old.gp")) &&
	      !exists(sub("set/old.dat")) && exists(sub("set/mine.txt")));
	/* a stale plot's file changed since its set was written is kept */
	CHECK(exists(sub("set/edited.png")) && !exists(sub("set/edited.gp")));
	CHECK(!exists(tmp) && hidden_entries(dir) == 0);
	const etc_plot_item *m = etc_plot_batch_item(b, 1);
	CHECK(m && strstr(m->png, "/set/m.png") && !strstr(m->png, ".etcompare-plots."));
	etc_plot_batch_free(b);
	free(tmp);
	/* discarded: the folder keeps what it held */
	tmp = NULL;
	CHECK(etc_plot_batch_create(&b, &err) == 0);
	CHECK(etc_plot_set_begin(b, dir, &tmp, &err) == 0 && tmp);
	if (!tmp) {
		etc_plot_batch_free(b);
		return;
	}
	etc_plot_options o2 = {tmp, "/nonexistent/gnuplot", NULL, b, NULL};
	CHECK(etc_plot_bars(&o2, "z", "z", "y", 3, NULL, v, &res, &err) == 0);
	etc_plot_set_discard(tmp);
	CHECK(!exists(tmp) && !exists(sub("set/z.gp")) && exists(sub("set/a.gp")) &&
	      hidden_entries(dir) == 0);
	etc_plot_batch_free(b);
	free(tmp);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/etc_test_plot_batch_XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_layout();
	test_set();
	test_error_map(); /* drawn without gnuplot */
	if (system("command -v gnuplot > /dev/null 2>&1") == 0) {
		test_batch();
		test_batch_started();
	} else
		printf("skip: gnuplot not on PATH: the batch checks\n");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_report("test_plot_batch");
}
