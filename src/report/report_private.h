/*
 * report_private.h - pieces shared by the report writers.
 */
#ifndef ETC_REPORT_PRIVATE_H
#define ETC_REPORT_PRIVATE_H

#include "etcompare/perfdiff.h"
#include "etcompare/profile.h"
#include "etcompare/report.h"
#include "core/fmt.h"
#include "core/text.h"

#include <stdbool.h>

#if defined(__GNUC__)
#define ETC_GRID_PRINTF __attribute__((format(printf, 2, 3)))
#else
#define ETC_GRID_PRINTF
#endif

/*
 * Remembers the tensors summarized, by data, element count and dtype (a
 * direct-mapped table of ETC_SUMMARY_SLOTS): upstream gives an
 * instruction's intermediate outputs to both its native_call and
 * OPERATOR_CALL events, and a hostile ETDump can point every event at one
 * large tensor, so the same bytes are summarized once (issue 23). Pass NULL
 * to disable; etc_summary_cache_init_ before use.
 */
enum { ETC_SUMMARY_SLOTS = 64 };
typedef struct etc_summary_slot {
	const uint8_t *data;
	uint64_t numel;
	int scalar_type;
	etc_tensor_summary summary;
	bool has_extremes;    /* int64/uint64: the smallest and largest value's bits */
	uint64_t extremes[2]; /* (else they are found in the data) */
} etc_summary_slot;
typedef struct etc_summary_cache {
	etc_summary_slot slot[ETC_SUMMARY_SLOTS];
} etc_summary_cache;
void etc_summary_cache_init_(etc_summary_cache *c);
/* Records the summary of tensor t (its data need not hold every value: a
 * preview whose other values the summary already covers), and for int64 and
 * uint64 tensors the bits of their smallest and largest value (NULL: found
 * in the data). */
void etc_summary_cache_put_(etc_summary_cache *c, const etc_tensor *t,
                            const etc_tensor_summary *summary, const uint64_t *extremes);

/*
 * The budget every printer of nested input structures shares (the
 * --show-references tree): at most this many nodes and this depth; past the
 * budget the printer says "... (N more not shown)".
 */
enum { ETC_PRINT_MAX_NODES = 2000, ETC_PRINT_MAX_DEPTH = 32 };
typedef struct etc_print_budget {
	size_t nodes;  /* printed so far */
	size_t hidden; /* items left out */
} etc_print_budget;

/* Appends a JSON object summarizing `v` (type, dtype, shape, stats, first values). */
int etc_value_json_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err);

/* Appends a one-line human summary of `v`. */
int etc_value_text_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err);

/* A tensor's summary as JSON / as one line of text (dtype, shape, stats, first values). */
void etc_tensor_json_(etc_sbuf *b, const etc_tensor *t, uint32_t max_values,
                      etc_summary_cache *cache);
void etc_tensor_text_(etc_sbuf *b, const etc_tensor *t, uint32_t max_values,
                      etc_summary_cache *cache);

/* How many rows "where the error enters" lists (terminal and HTML alike). */
enum { ETC_REPORT_DROPS = 5 };
/* "+inf", "12.3" or "-" (not compared, no graph) for an SNR drop. */
void etc_fmt_snr_drop_(char *buf, size_t cap, double v);
/* "Where the error enters": the rule of the ranking, and a ranked row's figures. */
const char *etc_numgap_enters_rule_(const etc_numgap *ng);
void etc_numgap_enters_figures_(char *buf, size_t cap, const etc_numgap_row *r);

/* The taps as a JSON object (etc_report_taps_json's; --json "taps"). */
void etc_taps_json_(etc_sbuf *b, const etc_taps *t);
/* The taps' HTML section: the per-op table, failing rows first, and each
 * run's first divergence (report/taps.c). */
void etc_taps_html_(FILE *f, const etc_taps *t, const etc_inspector *insp);
/* `s` (n bytes) HTML-escaped, the report's one escaping path: control
 * characters but \n and \t, and bytes that are not UTF-8, as U+FFFD. */
void etc_html_escape_n_(FILE *f, const char *s, size_t n);

/* The numeric gap as a JSON object (for the --json report). */
void etc_numgap_json_(etc_sbuf *b, const etc_numgap *ng);

/* The accuracy comparison as a JSON object (for the --json report). */
void etc_accuracy_json_(etc_sbuf *b, const etc_accuracy *acc, const etc_inspector *insp);

/* The "profile" object of the --json report: the tables of `mask`. */
void etc_profile_json_(etc_sbuf *b, const etc_profile *p, unsigned mask);

/* The "perf_diff" object of the --json report. */
void etc_perfdiff_json_(etc_sbuf *b, const etc_perfdiff *d);

/* JSON number: repr() for finite values, "nan"/"inf"/"-inf" as strings. */
void etc_json_num_(etc_sbuf *b, double v);

/* Writes a report built in `b` to f and frees b: ETC_ERR_NOMEM when b ran
 * out of memory, ETC_ERR_IO ("cannot write the <what>") when f failed. */
int etc_sbuf_write_(FILE *f, etc_sbuf *b, const char *what, etc_error *err);

/* One TSV/CSV field as pandas writes it: quoted ("" inside) when it holds
 * the separator, a quote or a line break. */
void etc_csv_field_(FILE *f, const char *s, size_t n, char sep);

/* A metric cell: "%.6g", "inf", "-inf" or "nan". */
void etc_fmt_metric_(char *buf, size_t cap, double v);

/* Appends the JSON object of one pair's metrics (count, the six metrics, notes...). */
void etc_metrics_json_(etc_sbuf *b, const etc_metrics *m);

/*
 * Prints a grid in tabulate's fancy_grid look: `nc` columns headed `hdr`,
 * right-aligned where right[c], `n` rows of cells (row-major, n x nc).
 * Returns 0 or ETC_ERR_NOMEM (the caller checks ferror).
 */
int etc_grid_print_(FILE *f, size_t nc, const char *const *hdr, const bool *right, size_t n,
                    const char *const *cells);

/* actual - reference (or its magnitude) of a compared pair, for the plot readers. */
typedef struct etc_diff_ctx {
	etc_values a, r;
	bool absolute;
} etc_diff_ctx;

/* An etc_plot_read_fn over an etc_diff_ctx. */
int etc_plot_read_diff_(void *ctx, uint64_t first, size_t count, double *dst, etc_error *err);

/*
 * A table built cell by cell (row-major, ncols cells per row) and printed in
 * the profiling table's fancy_grid look: a column whose non-empty cells are
 * all numbers is aligned on the decimal point, others left. Cells are shown
 * as given (no number reformatting); control characters are escaped.
 */
typedef struct etc_tabulate {
	size_t ncols;
	size_t count, cap; /* cells so far */
	etc_sbuf text;     /* every cell's text, back to back */
	size_t *ends;      /* end of each cell in text */
	int failed;
} etc_tabulate;

void etc_tabulate_init_(etc_tabulate *g, size_t ncols);
void etc_tabulate_free_(etc_tabulate *g);
void etc_tabulate_cell_(etc_tabulate *g, const char *s, size_t n);
void etc_tabulate_cellf_(etc_tabulate *g, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints `g` under `headers` (g->ncols strings). ETC_ERR_IO when writing fails. */
int etc_tabulate_write_(FILE *f, const etc_tabulate *g, const char *const *headers, etc_error *err);

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
/* Cell i: true and *v for a number, false and its text (not NUL-terminated). */
bool etc_grid_cell_(const etc_grid *g, size_t i, double *v, const char **s, size_t *len);
int etc_grid_write_tsv_(const etc_grid *g, FILE *f);

/* The Inspector's table (etc_report_table's rows and columns) cell by cell:
 * header() for each column, then per row row(true), cell() for each cell
 * (a number: is_num and its value, its text when it has one; else its
 * text), row(false). Returns 0 or ETC_ERR_NOMEM. */
typedef struct etc_table_visitor {
	void *ctx;
	void (*header)(void *ctx, size_t col, const char *s, size_t n);
	void (*row)(void *ctx, bool start);
	void (*cell)(void *ctx, size_t col, bool is_num, double v, const char *s, size_t n);
} etc_table_visitor;

int etc_report_table_visit_(const etc_inspector *insp, const etc_report_options *opt,
                            const etc_table_visitor *v);

/* One profiling table (ETC_TABLE_TAX, _MEMORY, _OPS, _MODULES or
 * _DELEGATES) as the terminal, the TSV and the HTML report show it; free
 * its grid with etc_grid_free_. */
#define ETC_PROFILE_TABLE_COLS 8
typedef struct etc_profile_table {
	char hdr[ETC_PROFILE_TABLE_COLS][64];
	const char *hdrp[ETC_PROFILE_TABLE_COLS];
	bool right[ETC_PROFILE_TABLE_COLS];
	size_t nc;
	etc_grid g;
	const char *title; /* what the table is */
	const char *empty; /* said instead of an empty table */
} etc_profile_table;

void etc_profile_table_build_(etc_profile_table *t, const etc_profile *p, unsigned bit);

#endif
