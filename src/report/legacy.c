/*
 * report_legacy.c - the old profiler tools' tables for a legacy dump
 * (profiler_results_cli): one profile table per block name, the framework
 * tax tables, the memory tables; drawn with the profiling table's grid.
 *
 * Numbers are shown as Python's str() showed them (repr of the rounded
 * float, exact integers for ms and cycles). Differences from upstream: the
 * Frame column is empty (upstream filled it only from the program file);
 * every block's framework tax table is printed (upstream kept the last).
 */
#include "etcompare/legacy.h"
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>

static const char *unit_name(int scale)
{
	return scale == ETC_LEGACY_CYCLES ? "cycles" : "ms";
}

static bool integral_scale(int scale)
{
	return scale == ETC_LEGACY_MS || scale == ETC_LEGACY_CYCLES;
}

/* A block name in a title line: control characters shown escaped, as in cells. */
static void put_name(FILE *f, etc_str name)
{
	etc_text_fput(f, name.ptr, name.len);
}

/* A time value: exact integer digits on the integer scales, else repr. */
static void time_cell(etc_tabulate *g, const etc_legacy_event *ev, int scale)
{
	if (integral_scale(scale)) {
		if (ev->end >= ev->start)
			etc_tabulate_cellf_(g, "%llu", (unsigned long long)(ev->end - ev->start));
		else
			etc_tabulate_cellf_(g, "-%llu", (unsigned long long)(ev->start - ev->end));
		return;
	}
	char num[ETC_FMT_NUM];
	etc_tabulate_cell_(g, num, etc_fmt_repr(num, etc_legacy_duration(ev, scale)));
}

static void number_cell(etc_tabulate *g, double v, bool integral)
{
	char num[ETC_FMT_NUM];
	if (isnan(v))
		etc_tabulate_cell_(g, "n/a", 3);
	else if (integral && fabs(v) < 9.007199254740992e15)
		etc_tabulate_cellf_(g, "%.0f", v);
	else
		etc_tabulate_cell_(g, num, etc_fmt_repr(num, v));
}

/* "Iteration 0".. headers after `fixed` leading ones. */
static const char **iteration_headers(const char *const *fixed, size_t nfixed, uint32_t n,
                                      char **storage)
{
	const char **h = calloc(nfixed + n, sizeof *h);
	char *s = malloc((size_t)n * 24 + 1);
	if (!h || !s) {
		free(h);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < nfixed; i++)
		h[i] = fixed[i];
	for (uint32_t k = 0; k < n; k++) {
		snprintf(s + (size_t)k * 24, 24, "Iteration %u", k);
		h[nfixed + k] = s + (size_t)k * 24;
	}
	*storage = s;
	return h;
}

static int profile_table(FILE *f, const etc_legacy_block *b, int scale, etc_error *err)
{
	static const char *const fixed[] = {"Name", "Chain", "Instr", "Frame"};
	uint32_t n = b->iteration_count;
	char *storage;
	const char **h = iteration_headers(fixed, 4, n, &storage);
	if (!h)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	etc_tabulate g;
	etc_tabulate_init_(&g, 4 + (size_t)n);
	const etc_legacy_iteration *first = &b->iterations[0];
	for (uint32_t e = 0; e < first->event_count; e++) {
		const etc_legacy_event *ev = &first->events[e];
		etc_tabulate_cell_(&g, ev->name.ptr, ev->name.len);
		etc_tabulate_cellf_(&g, "%d", ev->chain_idx);
		etc_tabulate_cellf_(&g, "%u", ev->instruction_idx);
		etc_tabulate_cell_(&g, "", 0);
		for (uint32_t k = 0; k < n; k++)
			time_cell(&g, &b->iterations[k].events[e], scale);
	}
	put_name(f, b->name);
	fprintf(f, " (%u iteration%s, %s)\n", n, n == 1 ? "" : "s", unit_name(scale));
	int rc = etc_tabulate_write_(f, &g, h, err);
	etc_tabulate_free_(&g);
	free(h);
	free(storage);
	return rc;
}

static int tax_table(FILE *f, const etc_legacy_block *b, int scale, etc_error *err)
{
	uint32_t n = b->iteration_count;
	double *v = calloc(3 * (size_t)n, sizeof *v);
	if (!v)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	int rc = 0;
	if (etc_legacy_framework_tax(b, scale, v, v + n, v + 2 * n)) {
		static const char *const fixed[] = {""};
		static const char *const rows[] = {"Model execution time",
		                                   "Time spent in kernels and delegates",
		                                   "Framework tax (%)"};
		char *storage;
		const char **h = iteration_headers(fixed, 1, n, &storage);
		if (!h) {
			free(v);
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		}
		etc_tabulate g;
		etc_tabulate_init_(&g, 1 + (size_t)n);
		for (int r = 0; r < 3; r++) {
			etc_tabulate_cell_(&g, rows[r], strlen(rows[r]));
			for (uint32_t k = 0; k < n; k++)
				number_cell(&g, v[(size_t)r * n + k],
				            r < 2 && integral_scale(scale));
		}
		put_name(f, b->name);
		fprintf(f, " framework tax calculations (%s)\n", unit_name(scale));
		rc = etc_tabulate_write_(f, &g, h, err);
		etc_tabulate_free_(&g);
		free(h);
		free(storage);
	}
	free(v);
	return rc;
}

typedef struct alloc_total {
	uint32_t id, first; /* allocator and its first allocation */
	uint64_t sum;
} alloc_total;

static int cmp_id(const void *x, const void *y)
{
	const alloc_total *a = x, *b = y;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int cmp_first(const void *x, const void *y)
{
	const alloc_total *a = x, *b = y;
	return a->first < b->first ? -1 : a->first > b->first;
}

static int memory_table(FILE *f, const etc_legacy_profile *p, const etc_legacy_block *b,
                        etc_error *err)
{
	static const char *const h[] = {"Allocator name", "Total size of allocations done"};
	const etc_legacy_iteration *it = &b->iterations[0];
	uint32_t n = it->allocation_count;
	/* Totals per allocator in first-seen order (sorted, so any count is n log n). */
	alloc_total *t = calloc(n ? n : 1, sizeof *t);
	if (!t)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (uint32_t m = 0; m < n; m++)
		t[m] = (alloc_total){it->allocations[m].allocator_id, m, it->allocations[m].size};
	qsort(t, n, sizeof *t, cmp_id);
	uint32_t distinct = 0;
	for (uint32_t m = 0; m < n; m++) {
		if (distinct && t[distinct - 1].id == t[m].id)
			t[distinct - 1].sum += t[m].sum;
		else
			t[distinct++] = t[m];
	}
	qsort(t, distinct, sizeof *t, cmp_first);
	etc_tabulate g;
	etc_tabulate_init_(&g, 2);
	for (uint32_t j = 0; j < distinct; j++) {
		const char *name = etc_legacy_profile_allocator(p, t[j].id);
		if (!name)
			name = "";
		etc_tabulate_cell_(&g, name, strlen(name));
		etc_tabulate_cellf_(&g, "%llu", (unsigned long long)t[j].sum);
	}
	put_name(f, b->name);
	fprintf(f, " memory allocations (bytes)\n");
	int rc = etc_tabulate_write_(f, &g, h, err);
	etc_tabulate_free_(&g);
	free(t);
	return rc;
}

int etc_report_legacy(FILE *f, const etc_legacy_profile *p, int scale, etc_error *err)
{
	etc_error_clear(err);
	if (scale < ETC_LEGACY_NS || scale > ETC_LEGACY_CYCLES)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "unknown legacy time scale %d",
		                scale);
	size_t nb = etc_legacy_profile_block_count(p);
	for (size_t i = 0; i < nb; i++)
		ETC_TRY(profile_table(f, etc_legacy_profile_block(p, i), scale, err));
	for (size_t i = 0; i < nb; i++)
		ETC_TRY(tax_table(f, etc_legacy_profile_block(p, i), scale, err));
	for (size_t i = 0; i < nb; i++)
		ETC_TRY(memory_table(f, p, etc_legacy_profile_block(p, i), err));
	if (ferror(f))
		return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the legacy tables");
	return 0;
}
