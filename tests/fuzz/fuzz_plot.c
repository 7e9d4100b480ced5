/*
 * fuzz_plot.c - the plot writers: gnuplot scripts and .dat files of every
 * plot kind (queued in a batch, so gnuplot itself never runs), the index,
 * and the heat map PNG writer, from values, labels and sizes read from the
 * input (NaN, infinities, huge and tiny numbers, names with quotes,
 * backslashes, newlines and gnuplot's backquote included). Looks for
 * crashes, leaks and undefined behaviour (the scripts' quoting is checked
 * by tests/test_plot*.py, which run gnuplot).
 *
 * Input: one byte of plot kinds, one of label length, then doubles (8 bytes
 * each, little-endian) and label bytes interleaved.
 */
#define _GNU_SOURCE
#include "fuzz_dumps.h"
#include "fuzz_outputs.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

enum { MAXN = 64 };

/* Empties the plot folder between inputs. */
static void clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[600];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned kinds = data[0];
	size_t lablen = data[1] % 24 + 1;
	data += 2, size -= 2;
	double values[MAXN];
	char labels_buf[MAXN][32];
	const char *labels[MAXN];
	etc_plot_box boxes[MAXN];
	etc_plot_span spans[MAXN];
	size_t n = 0;
	while (n < MAXN && size >= 8 + lablen) {
		uint64_t bits = 0;
		for (int k = 0; k < 8; k++)
			bits |= (uint64_t)data[k] << (8 * k);
		memcpy(&values[n], &bits, 8);
		memcpy(labels_buf[n], "FUZZ", 4);
		memcpy(labels_buf[n] + 4, data + 8, lablen);
		labels_buf[n][4 + lablen] = '\0';
		labels[n] = labels_buf[n];
		data += 8 + lablen, size -= 8 + lablen;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		double v = values[i], w = values[(i + 1) % n];
		boxes[i] = (etc_plot_box){v, v, w, w, v + w};
		spans[i] = (etc_plot_span){(uint32_t)(i % 3), v, w};
	}
	char dir[320];
	snprintf(dir, sizeof dir, "%s/plots", fuzz_tmp_dir());
	etc_error err;
	etc_plot_batch *batch = NULL;
	if (etc_plot_batch_create(&batch, &err) < 0)
		return 0;
	etc_plot_options o = {.dir = dir, .gnuplot = "/nonexistent/gnuplot", .batch = batch};
	etc_plot_result res = {0};
	const char *title = n ? labels[0] : "FUZZ";
	if (kinds & 1)
		(void)etc_plot_bars(&o, "bars", title, title, n, labels, values, &res, &err);
	if (kinds & 2)
		(void)etc_plot_histogram(&o, "hist", title, values, n, (kinds >> 4) + 1, &res, &err);
	if (kinds & 4)
		(void)etc_plot_lines(&o, "lines", title, title, n, labels, values,
		                     n ? values[n - 1] : NAN, n ? (long)(kinds % n) : -1, &res, &err);
	if (kinds & 8)
		(void)etc_plot_boxes(&o, "boxes", title, title, n, labels, boxes, &res, &err);
	if ((kinds & 16) && n >= 3)
		(void)etc_plot_timeline(&o, "timeline", title, title, 3, labels, n, spans, &res, &err);
	if (kinds & 32)
		(void)etc_plot_trend(&o, "trend", title, title, title, n, labels, values, &res, &err);
	if (kinds & 64) {
		char png[400];
		snprintf(png, sizeof png, "%s/heat.png", dir);
		uint64_t rows = n ? (uint64_t)(kinds % 8) + 1 : 0;
		uint64_t cols = rows ? n / rows : 0;
		if (rows && cols)
			(void)etc_plot_heatmap(png, values, rows, cols, title, &err);
	}
	(void)etc_plot_batch_note(batch, title, &err);
	(void)etc_plot_batch_write_index(batch, dir, &err);
	clear_dir(dir);
	etc_plot_batch_free(batch);
	return 0;
}
