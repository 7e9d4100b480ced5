/*
 * report_private.h - pieces shared by the report writers.
 */
#ifndef ETC_REPORT_PRIVATE_H
#define ETC_REPORT_PRIVATE_H

#include "etcompare/perfdiff.h"
#include "etcompare/profile.h"
#include "etcompare/report.h"
#include "fmt.h"

#include <stdbool.h>

#if defined(__GNUC__)
#define ETC_GRID_PRINTF __attribute__((format(printf, 2, 3)))
#else
#define ETC_GRID_PRINTF
#endif

/*
 * Remembers the last tensor summarized: upstream gives an instruction's
 * intermediate outputs to both its native_call and OPERATOR_CALL events, so
 * the same bytes come twice in a row. Pass NULL to disable.
 */
typedef struct etc_summary_cache {
	const uint8_t *data;
	uint64_t numel;
	int scalar_type;
	etc_tensor_summary summary;
} etc_summary_cache;

/* Appends a JSON object summarizing `v` (type, dtype, shape, stats, first values). */
int etc_value_json_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err);

/* Appends a one-line human summary of `v`. */
int etc_value_text_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err);

/* The accuracy comparison as a JSON object (for the --json report). */
void etc_accuracy_json_(etc_sbuf *b, const etc_accuracy *acc, const etc_inspector *insp);

/* The "profile" object of the --json report: the tables of `mask`. */
void etc_profile_json_(etc_sbuf *b, const etc_profile *p, unsigned mask);

/* The "perf_diff" object of the --json report. */
void etc_perfdiff_json_(etc_sbuf *b, const etc_perfdiff *d);

/* JSON number: repr() for finite values, "nan"/"inf"/"-inf" as strings. */
void etc_json_num_(etc_sbuf *b, double v);

/*
 * A grid of text and number cells rendered as a box-drawing table (the
 * accuracy table's look: a ruled header, no rules between rows; numbers
 * right-aligned in Python's format(v, "g")) or as TSV (numbers as repr()).
 * Cells are appended row-major; a failed allocation marks the grid failed.
 */
typedef struct etc_grid {
	size_t ncols;
	const char *const *headers;
	const bool *right; /* per column: right-aligned */
	size_t ncells, cap;
	struct etc_grid_cell *cells;
	etc_sbuf text; /* cell texts, NUL-separated */
	bool failed;
} etc_grid;

void etc_grid_init_(etc_grid *g, size_t ncols, const char *const *headers, const bool *right);
void etc_grid_free_(etc_grid *g);
void etc_grid_text_(etc_grid *g, const char *s);
void etc_grid_textf_(etc_grid *g, const char *fmt, ...) ETC_GRID_PRINTF;
/* A number; NaN shows as "-" in the table and as "" in TSV. */
void etc_grid_num_(etc_grid *g, double v);
void etc_grid_uint_(etc_grid *g, uint64_t v);
int etc_grid_write_(const etc_grid *g, FILE *f);
int etc_grid_write_tsv_(const etc_grid *g, FILE *f);

#endif
