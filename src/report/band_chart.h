/*
 * band_chart.h - the numeric gap over many runs in the reports: its JSON
 * object (--json "numeric_gap_runs") and the HTML section with the per-op
 * band charts (inline SVG: median line, p5-p95 band, worst run marked).
 */
#ifndef ETC_REPORT_BAND_CHART_H
#define ETC_REPORT_BAND_CHART_H

#include "etcompare/numgap_dist.h"
#include "core/internal.h"
#include "core/fmt.h"

#include <stdio.h>

/* The distribution as a JSON object: the runs, then one entry per op. */
void etc_numgap_dist_json_(etc_sbuf *b, const etc_numgap_dist *d);

/* The HTML section: a band chart of the cumulative SNR (and of the local
 * SNR when any run has one), then the per-op table. */
void etc_band_chart_html_(FILE *f, const etc_numgap_dist *d);

#endif
