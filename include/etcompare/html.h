/*
 * etcompare/html.h - one self-contained HTML report of a run (--report):
 * inline CSS, plots embedded as data: PNG, no external request, so that it
 * opens offline from a CI job's artifacts. It holds the verdict and the
 * command line, the inputs with their sizes and CRC-32 checksums, the
 * accuracy table (failing rows first), the numeric gap (first divergence,
 * where the error enters, stack traces in collapsible details), the
 * profiling tables, the performance diff and the plots. Tables sort on a
 * click on their header with a few lines of inline script and read well
 * without it. Every text that comes from an input is HTML-escaped.
 *
 * The report is a collector: the caller adds what its run computed, in any
 * order, then writes it once. The objects given must live until
 * etc_html_report_write; images are read when added. The report lives in
 * the report layer, below the plots: the caller passes the PNG files the
 * plots made (see etc_plot_batch_item), so the HTML writer never runs
 * gnuplot and its tables need none.
 */
#ifndef ETCOMPARE_HTML_H
#define ETCOMPARE_HTML_H

#include "common.h"
#include "accuracy.h"
#include "inspector.h"
#include "numgap.h"
#include "numgap_dist.h"
#include "taps.h"
#include "perfdiff.h"
#include "profile.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etc_html_report etc_html_report;

/** An empty report titled `title` (NULL: "etcompare report"). */
ETC_API int etc_html_report_create(etc_html_report **out, const char *title, etc_error *err);
ETC_API void etc_html_report_free(etc_html_report *h);

/** The exact command line, shown shell-quoted. */
ETC_API int etc_html_report_command(etc_html_report *h, int argc, char *const *argv,
                                    etc_error *err);

/**
 * The verdict: `failed` draws it red; `text` is the one-line summary
 * (e.g. "accuracy gate FAILED: 1 of 12 outputs fail").
 */
ETC_API int etc_html_report_verdict(etc_html_report *h, bool failed, const char *text,
                                    etc_error *err);
/** The verdict of a run that gated nothing (no threshold): drawn neutral,
 *  neither green nor red. */
ETC_API int etc_html_report_verdict_ungated(etc_html_report *h, const char *text, etc_error *err);

/** An input file by path (size and CRC-32 read from it) under `role` ("ETDump"). */
ETC_API int etc_html_report_input(etc_html_report *h, const char *role, const char *path,
                                  etc_error *err);
/** An input held in memory (e.g. the bundled example), named `name`. */
ETC_API int etc_html_report_input_bytes(etc_html_report *h, const char *role, const char *name,
                                        const void *data, size_t size, etc_error *err);

/** The sections; NULL leaves one out. `insp` names the accuracy rows' blocks. */
ETC_API void etc_html_report_accuracy(etc_html_report *h, const etc_accuracy *acc,
                                      const etc_inspector *insp);
ETC_API void etc_html_report_numgap(etc_html_report *h, const etc_numgap *ng);
/** The taps: per-op table (failing first) and each run's first divergence. */
ETC_API void etc_html_report_taps(etc_html_report *h, const etc_taps *t, const etc_inspector *insp);
/** The numeric gap over many runs: per-op band charts (inline SVG) and table. */
ETC_API void etc_html_report_numgap_dist(etc_html_report *h, const etc_numgap_dist *d);
/** The profiling tables of `mask` (ETC_TABLE_*), as the run printed them. */
ETC_API void etc_html_report_profile(etc_html_report *h, const etc_profile *p, unsigned mask);
ETC_API void etc_html_report_perfdiff(etc_html_report *h, const etc_perfdiff *d);

/** A plot: the PNG at `png_path` is read now and embedded as a data: URI. */
ETC_API int etc_html_report_image(etc_html_report *h, const char *caption, const char *png_path,
                                  etc_error *err);
/**
 * The numeric gap's chart (cumulative and local SNR per op): the PNG at
 * `png_path` is read now and shown in the numeric gap section (after the
 * first divergence, before "where the error enters" and the table, so
 * before the plots section); a second call replaces the first.
 */
ETC_API int etc_html_report_numgap_chart(etc_html_report *h, const char *caption,
                                         const char *png_path, etc_error *err);
/** A line in the plots section (e.g. "gnuplot not found: no plots"). */
ETC_API int etc_html_report_note(etc_html_report *h, const char *text, etc_error *err);

/** Writes the report to `path` atomically ("-": standard output). */
ETC_API int etc_html_report_write(const etc_html_report *h, const char *path, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
