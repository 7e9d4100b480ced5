/*
 * report_profile.c - the profiling summaries of profile.h for people and
 * tools: box-drawing tables and TSV sections (both from one etc_grid per
 * table), the "profile" object of the --json report, and the profiling
 * plots (top operators, per-run box plots, framework tax over runs, a
 * timeline of one run).
 */
#include "etcompare/profile.h"
#include "core/internal.h"
#include "report/report_private.h"

#include <math.h>
#include <stdlib.h>

static const char *unit_of(const etc_profile *p)
{
	return etc_time_scale_name(
	    etc_inspector_options_get(etc_profile_inspector(p))->target_time_scale);
}

static void block_name(etc_grid *g, const etc_profile *p, size_t b)
{
	const etc_event_block *blk = etc_inspector_block(etc_profile_inspector(p), b);
	etc_grid_textf_(g, "%.*s", (int)(blk->name.len > 200 ? 200 : blk->name.len), blk->name.ptr);
}

/* --- one grid per table ------------------------------------------------------- */

typedef etc_profile_table table;

static void col(table *t, bool right, const char *fmt, const char *unit)
{
	snprintf(t->hdr[t->nc], sizeof t->hdr[0], fmt, unit);
	t->hdrp[t->nc] = t->hdr[t->nc];
	t->right[t->nc++] = right;
}

static void build_tax(table *t, const etc_profile *p)
{
	const char *u = unit_of(p);
	col(t, false, "block", u);
	col(t, true, "run", u);
	col(t, true, "Method::execute (%s)", u);
	col(t, true, "operators (%s)", u);
	col(t, true, "delegate calls (%s)", u);
	col(t, true, "framework tax (%s)", u);
	col(t, true, "tax %%", u);
	t->title = "framework tax = Method::execute - operators (native_call_*) - delegate calls "
	           "(DELEGATE_CALL)";
	t->empty = "no block has a Method::execute event";
	etc_grid_init_(&t->g, t->nc, t->hdrp, t->right);
	for (size_t s = 0; s < etc_profile_tax_summary_count(p); s++) {
		const etc_tax_summary *sum = etc_profile_tax_summary(p, s);
		for (uint32_t k = 0; k < sum->runs; k++) {
			const etc_tax_row *r = etc_profile_tax(p, sum->first_row + k);
			block_name(&t->g, p, r->block);
			etc_grid_uint_(&t->g, r->run);
			etc_grid_num_(&t->g, r->execute);
			etc_grid_num_(&t->g, r->operators);
			etc_grid_num_(&t->g, r->delegate_calls);
			etc_grid_num_(&t->g, r->tax);
			etc_grid_num_(&t->g, r->tax_percent);
		}
		const etc_tax_row *m = &sum->mean;
		block_name(&t->g, p, sum->block);
		etc_grid_text_(&t->g, "mean");
		etc_grid_num_(&t->g, m->execute);
		etc_grid_num_(&t->g, m->operators);
		etc_grid_num_(&t->g, m->delegate_calls);
		etc_grid_num_(&t->g, m->tax);
		etc_grid_num_(&t->g, m->tax_percent);
		block_name(&t->g, p, sum->block);
		etc_grid_text_(&t->g, "p50");
		etc_grid_num_(&t->g, NAN);
		etc_grid_num_(&t->g, NAN);
		etc_grid_num_(&t->g, NAN);
		etc_grid_num_(&t->g, sum->tax_stats.p50);
		etc_grid_num_(&t->g, sum->pct_stats.p50);
	}
}

static void build_memory(table *t, const etc_profile *p)
{
	col(t, false, "block", NULL);
	col(t, true, "run", NULL);
	col(t, true, "allocator", NULL);
	col(t, false, "name", NULL);
	col(t, true, "allocations", NULL);
	col(t, true, "bytes", NULL);
	t->title = "allocation events per allocator";
	t->empty = "no run lists allocators";
	etc_grid_init_(&t->g, t->nc, t->hdrp, t->right);
	for (size_t i = 0; i < etc_profile_memory_count(p); i++) {
		const etc_memory_row *r = etc_profile_memory(p, i);
		block_name(&t->g, p, r->block);
		etc_grid_uint_(&t->g, r->run);
		etc_grid_uint_(&t->g, r->allocator_id);
		etc_grid_textf_(&t->g, "%.*s", (int)(r->name.len > 200 ? 200 : r->name.len),
		                r->name.ptr);
		etc_grid_uint_(&t->g, r->count);
		if (r->bytes == UINT64_MAX)
			etc_grid_text_(&t->g, ">= 18446744073709551615");
		else
			etc_grid_uint_(&t->g, r->bytes);
	}
}

static void build_ops(table *t, const etc_profile *p)
{
	const char *u = unit_of(p);
	col(t, false, etc_profile_ops_by_type(p) ? "op type" : "operator", u);
	col(t, true, "count", u);
	col(t, true, "total (%s)", u);
	col(t, true, "mean (%s)", u);
	col(t, true, "p50 (%s)", u);
	col(t, true, "%% of Method::execute", u);
	t->title = "operators by total time over all runs";
	t->empty = "no operator events";
	etc_grid_init_(&t->g, t->nc, t->hdrp, t->right);
	for (size_t i = 0; i < etc_profile_op_count(p); i++) {
		const etc_op_row *r = etc_profile_op(p, i);
		etc_grid_textf_(&t->g, "%.300s", r->name);
		etc_grid_uint_(&t->g, r->count);
		etc_grid_num_(&t->g, r->total);
		etc_grid_num_(&t->g, r->mean);
		etc_grid_num_(&t->g, r->p50);
		etc_grid_num_(&t->g, 100 * r->share);
	}
}

static void build_modules(table *t, const etc_profile *p)
{
	const char *u = unit_of(p);
	col(t, false, "module", u);
	col(t, false, "type", u);
	col(t, true, "events", u);
	col(t, true, "total avg (%s)", u);
	col(t, true, "%% of Method::execute", u);
	t->title = "time per module (find_total_for_module: sum of the events' average times)";
	t->empty = etc_inspector_etrecord(etc_profile_inspector(p))
	               ? "no linked event has a module hierarchy"
	               : "the modules table needs --etrecord";
	etc_grid_init_(&t->g, t->nc, t->hdrp, t->right);
	for (size_t i = 0; i < etc_profile_module_count(p); i++) {
		const etc_module_row *r = etc_profile_module(p, i);
		etc_grid_textf_(&t->g, "%*s%.200s", (int)(2 * (r->depth > 40 ? 40 : r->depth)), "",
		                *r->path ? r->path : r->key);
		etc_grid_textf_(&t->g, "%.200s", r->type);
		etc_grid_uint_(&t->g, r->events);
		etc_grid_num_(&t->g, r->total);
		etc_grid_num_(&t->g, 100 * r->share);
	}
}

static void build_delegates(table *t, const etc_profile *p)
{
	const char *u = unit_of(p);
	col(t, false, "backend", u);
	col(t, true, "calls", u);
	col(t, true, "total (%s)", u);
	col(t, true, "mean (%s)", u);
	col(t, true, "%% of Method::execute", u);
	col(t, true, "backend events", u);
	t->title = "DELEGATE_CALL time per backend";
	t->empty = "no delegate calls";
	etc_grid_init_(&t->g, t->nc, t->hdrp, t->right);
	for (size_t i = 0; i < etc_profile_delegate_count(p); i++) {
		const etc_delegate_row *r = etc_profile_delegate(p, i);
		etc_grid_textf_(&t->g, "%.200s", r->backend);
		etc_grid_uint_(&t->g, r->calls);
		etc_grid_num_(&t->g, r->total);
		etc_grid_num_(&t->g, r->mean);
		etc_grid_num_(&t->g, 100 * r->share);
		etc_grid_uint_(&t->g, r->backend_events);
	}
}

void etc_profile_table_build_(table *t, const etc_profile *p, unsigned bit)
{
	memset(t, 0, sizeof *t);
	switch (bit) {
	case ETC_TABLE_TAX:
		build_tax(t, p);
		break;
	case ETC_TABLE_MEMORY:
		build_memory(t, p);
		break;
	case ETC_TABLE_OPS:
		build_ops(t, p);
		break;
	case ETC_TABLE_MODULES:
		build_modules(t, p);
		break;
	default:
		build_delegates(t, p);
		break;
	}
}

static int write_error(int rc, etc_error *err)
{
	if (rc == ETC_ERR_NOMEM)
		return etc_fail(err, rc, NULL, -1, "out of memory");
	return etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the profiling tables");
}

int etc_report_profile_tables(FILE *f, const etc_profile *p, unsigned mask, bool titles,
                              etc_error *err)
{
	for (unsigned bit = ETC_TABLE_TAX; bit <= ETC_TABLE_DELEGATES; bit <<= 1) {
		if (!(mask & bit))
			continue;
		table t;
		etc_profile_table_build_(&t, p, bit);
		if (titles)
			fprintf(f, "== %s: %s ==\n", etc_profile_table_name(bit), t.title);
		int rc = 0;
		if (t.g.ncells == 0)
			fprintf(f, "(%s)\n", t.empty);
		else
			rc = etc_grid_write_(&t.g, f);
		if (rc == 0 && bit == ETC_TABLE_MODULES && etc_profile_modules_mix_units(p))
			fprintf(f, "(as find_total_for_module, totals include delegated events' "
			           "times in their own unit: see --delegate-time-scale)\n");
		etc_grid_free_(&t.g);
		if (rc < 0 || ferror(f))
			return write_error(rc, err);
	}
	return 0;
}

int etc_report_profile_tsv(FILE *f, const etc_profile *p, unsigned mask, etc_error *err)
{
	bool first = true;
	for (unsigned bit = ETC_TABLE_TAX; bit <= ETC_TABLE_DELEGATES; bit <<= 1) {
		if (!(mask & bit))
			continue;
		table t;
		etc_profile_table_build_(&t, p, bit);
		fprintf(f, "%s# %s\n", first ? "" : "\n", etc_profile_table_name(bit));
		first = false;
		int rc = etc_grid_write_tsv_(&t.g, f);
		etc_grid_free_(&t.g);
		if (rc < 0 || ferror(f))
			return write_error(rc, err);
	}
	return 0;
}

/* --- JSON --------------------------------------------------------------------- */

static void jblock(etc_sbuf *b, const etc_profile *p, size_t blk)
{
	etc_str n = etc_inspector_block(etc_profile_inspector(p), blk)->name;
	etc_sbuf_json_str(b, n.ptr, n.len);
}

static void jnum(etc_sbuf *b, const char *key, double v)
{
	etc_sbuf_printf(b, ", \"%s\": ", key);
	etc_json_num_(b, v);
}

static void tax_json(etc_sbuf *b, const etc_tax_row *r)
{
	jnum(b, "execute", r->execute);
	jnum(b, "operators", r->operators);
	jnum(b, "delegate_calls", r->delegate_calls);
	jnum(b, "tax", r->tax);
	jnum(b, "tax_percent", r->tax_percent);
}

void etc_profile_json_(etc_sbuf *b, const etc_profile *p, unsigned mask)
{
	etc_sbuf_puts(b, "{\"unit\": ");
	const char *u = unit_of(p);
	etc_sbuf_json_str(b, u, strlen(u));
	jnum(b, "execute_total", etc_profile_execute_total(p));
	if (mask & ETC_TABLE_TAX) {
		etc_sbuf_puts(b, ",\n    \"tax\": [");
		for (size_t s = 0; s < etc_profile_tax_summary_count(p); s++) {
			const etc_tax_summary *sum = etc_profile_tax_summary(p, s);
			etc_sbuf_puts(b, s ? ",\n      {\"block\": " : "\n      {\"block\": ");
			jblock(b, p, sum->block);
			etc_sbuf_printf(b, ", \"operators_from\": \"%s\", \"runs\": [",
			                sum->mean.operator_call_fallback ? "OPERATOR_CALL"
			                                                 : "native_call");
			for (uint32_t k = 0; k < sum->runs; k++) {
				const etc_tax_row *r = etc_profile_tax(p, sum->first_row + k);
				etc_sbuf_printf(b, "%s{\"run\": %u, \"etdump_run\": %u",
				                k ? ", " : "", r->run, r->etdump_run);
				tax_json(b, r);
				etc_sbuf_puts(b, "}");
			}
			etc_sbuf_puts(b, "], \"mean\": {\"run\": null, \"etdump_run\": null");
			tax_json(b, &sum->mean);
			etc_sbuf_puts(b, "}");
			jnum(b, "tax_p50", sum->tax_stats.p50);
			jnum(b, "tax_percent_p50", sum->pct_stats.p50);
			etc_sbuf_puts(b, "}");
		}
		etc_sbuf_puts(b, "]");
	}
	if (mask & ETC_TABLE_MEMORY) {
		etc_sbuf_puts(b, ",\n    \"memory\": [");
		for (size_t i = 0; i < etc_profile_memory_count(p); i++) {
			const etc_memory_row *r = etc_profile_memory(p, i);
			etc_sbuf_puts(b, i ? ",\n      {\"block\": " : "\n      {\"block\": ");
			jblock(b, p, r->block);
			etc_sbuf_printf(b,
			                ", \"run\": %u, \"etdump_run\": %u, \"allocator\": %u, "
			                "\"name\": ",
			                r->run, r->etdump_run, r->allocator_id);
			etc_sbuf_json_str(b, r->name.ptr, r->name.len);
			etc_sbuf_printf(b, ", \"count\": %llu, \"bytes\": %llu}",
			                (unsigned long long)r->count, (unsigned long long)r->bytes);
		}
		etc_sbuf_puts(b, "]");
	}
	if (mask & ETC_TABLE_OPS) {
		etc_sbuf_printf(b, ",\n    \"ops\": {\"key\": \"%s\", \"rows\": [",
		                etc_profile_ops_by_type(p) ? "op_type" : "event_name");
		for (size_t i = 0; i < etc_profile_op_count(p); i++) {
			const etc_op_row *r = etc_profile_op(p, i);
			etc_sbuf_puts(b, i ? ",\n      {\"name\": " : "\n      {\"name\": ");
			etc_sbuf_json_str(b, r->name, strlen(r->name));
			etc_sbuf_printf(b, ", \"count\": %llu", (unsigned long long)r->count);
			jnum(b, "total", r->total);
			jnum(b, "mean", r->mean);
			jnum(b, "p50", r->p50);
			jnum(b, "share", r->share);
			etc_sbuf_puts(b, "}");
		}
		etc_sbuf_puts(b, "]}");
	}
	if (mask & ETC_TABLE_MODULES) {
		etc_sbuf_puts(b, ",\n    \"modules\": [");
		for (size_t i = 0; i < etc_profile_module_count(p); i++) {
			const etc_module_row *r = etc_profile_module(p, i);
			etc_sbuf_puts(b, i ? ",\n      {\"key\": " : "\n      {\"key\": ");
			etc_sbuf_json_str(b, r->key, strlen(r->key));
			etc_sbuf_puts(b, ", \"path\": ");
			etc_sbuf_json_str(b, r->path, strlen(r->path));
			etc_sbuf_puts(b, ", \"type\": ");
			etc_sbuf_json_str(b, r->type, strlen(r->type));
			etc_sbuf_printf(b, ", \"depth\": %u, \"parent\": ", r->depth);
			if (r->parent < 0)
				etc_sbuf_puts(b, "null");
			else
				etc_sbuf_printf(b, "%ld", r->parent);
			etc_sbuf_printf(b, ", \"events\": %zu", r->events);
			jnum(b, "total", r->total);
			jnum(b, "share", r->share);
			etc_sbuf_puts(b, "}");
		}
		etc_sbuf_puts(b, "]");
	}
	if (mask & ETC_TABLE_DELEGATES) {
		etc_sbuf_puts(b, ",\n    \"delegates\": [");
		for (size_t i = 0; i < etc_profile_delegate_count(p); i++) {
			const etc_delegate_row *r = etc_profile_delegate(p, i);
			etc_sbuf_puts(b, i ? ",\n      {\"backend\": " : "\n      {\"backend\": ");
			etc_sbuf_json_str(b, r->backend, strlen(r->backend));
			etc_sbuf_printf(b, ", \"calls\": %llu", (unsigned long long)r->calls);
			jnum(b, "total", r->total);
			jnum(b, "mean", r->mean);
			jnum(b, "share", r->share);
			etc_sbuf_printf(b, ", \"backend_events\": %llu}",
			                (unsigned long long)r->backend_events);
		}
		etc_sbuf_puts(b, "]");
	}
	etc_sbuf_puts(b, "}");
}

/* --- plots -------------------------------------------------------------------- */

/* Is `ev` one of the events of op row `name` (as profile.c keys them)? */
static bool is_op_event(const etc_profile *p, const etc_inspector_event *ev, const char *name,
                        bool has_native)
{
	if (!ev->has_perf || ev->is_delegated_op)
		return false;
	/* With native_call_* events, OPERATOR_CALL wraps them: counting both
	 * would count the kernel's time twice (the op table does not either). */
	if (has_native && ev->name.len == 13 && !memcmp(ev->name.ptr, "OPERATOR_CALL", 13))
		return false;
	if (etc_profile_ops_by_type(p) && ev->node_count == 1)
		return strcmp(ev->nodes[0]->op, name) == 0;
	if (etc_profile_ops_by_type(p) && ev->node_count > 1) {
		/* "a, b": compare the joined op types */
		const char *s = name;
		for (uint32_t k = 0; k < ev->node_count; k++) {
			size_t l = strlen(ev->nodes[k]->op);
			if (k) {
				if (strncmp(s, ", ", 2))
					return false;
				s += 2;
			}
			if (strncmp(s, ev->nodes[k]->op, l))
				return false;
			s += l;
		}
		return *s == '\0';
	}
	return strlen(name) == ev->name.len && memcmp(name, ev->name.ptr, ev->name.len) == 0;
}

/* The block whose runs are shown: the one with Method::execute and most runs, else 0. */
static size_t main_block(const etc_profile *p)
{
	size_t best = 0;
	uint32_t runs = 0;
	for (size_t s = 0; s < etc_profile_tax_summary_count(p); s++) {
		const etc_tax_summary *sum = etc_profile_tax_summary(p, s);
		if (sum->runs > runs) {
			runs = sum->runs;
			best = sum->block;
		}
	}
	return best;
}

static int plot_ops(const etc_plot_options *o, const etc_profile *p, size_t top,
                    etc_plot_result *res, etc_error *err)
{
	const etc_inspector *in = etc_profile_inspector(p);
	size_t n = etc_profile_op_count(p);
	if (n > top)
		n = top;
	if (!n)
		return 0;
	const char **labels = calloc(n, sizeof *labels);
	double *vals = calloc(n, sizeof *vals);
	etc_plot_box *boxes = calloc(n, sizeof *boxes);
	size_t b = main_block(p);
	const etc_event_block *blk =
	    etc_inspector_block_count(in) ? etc_inspector_block(in, b) : NULL;
	uint32_t runs = blk ? blk->run_count : 0;
	double *per_run = calloc((size_t)n * (runs ? runs : 1), sizeof *per_run);
	int rc = 0;
	if (!labels || !vals || !boxes || !per_run) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		labels[i] = etc_profile_op(p, i)->name;
		vals[i] = etc_profile_op(p, i)->total;
	}
	/* Seconds, so that gnuplot writes the ticks with SI prefixes (50 us). */
	static const double to_s[] = {1e-9, 1e-6, 1e-3, 1, 1};
	int ts = etc_inspector_options_get(in)->target_time_scale;
	bool cycles = ts == ETC_TIME_CYCLES || ts < 0 || ts > ETC_TIME_CYCLES;
	double scale = cycles ? 1 : to_s[ts];
	for (size_t i = 0; i < n; i++)
		vals[i] *= scale;
	etc_plot_style st = {NAN, NULL, NULL, false, cycles ? NULL : "s", false, 0};
	etc_plot_options po = *o;
	po.style = &st;
	char title[160], xlabel[64];
	const char *what = etc_profile_ops_by_type(p) ? "op type" : "operator";
	if (n == 1)
		snprintf(title, sizeof title, "the %s with the most time over all runs", what);
	else
		snprintf(title, sizeof title, "top %zu %ss by total time over all runs", n, what);
	snprintf(xlabel, sizeof xlabel, "total time%s", cycles ? " (cycles)" : "");
	rc = etc_plot_hbars(&po, "ops_top", title, xlabel, n, labels, vals, res, err);
	if (rc < 0 || !runs)
		goto done;
	bool has_native = false;
	for (size_t e = 0; e < blk->event_count; e++)
		has_native |= blk->events[e].name.len > 12 &&
		              !memcmp(blk->events[e].name.ptr, "native_call_", 12);
	/* per run: the op's time summed over its events in that run */
	for (size_t e = 0; e < blk->event_count; e++) {
		const etc_inspector_event *ev = &blk->events[e];
		for (size_t i = 0; i < n; i++)
			if (is_op_event(p, ev, labels[i], has_native)) {
				for (uint32_t k = 0; k < runs; k++)
					per_run[i * runs + k] += ev->raw[k] * scale;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		double *v = per_run + i * runs;
		etc_sort_doubles_(v, runs);
		boxes[i].min = v[0];
		boxes[i].q1 = etc_percentile_sorted_(v, runs, 25);
		boxes[i].median = etc_percentile_sorted_(v, runs, 50);
		boxes[i].q3 = etc_percentile_sorted_(v, runs, 75);
		boxes[i].max = v[runs - 1];
	}
	char top_text[48];
	if (n == 1)
		snprintf(top_text, sizeof top_text, "the top %s", what);
	else
		snprintf(top_text, sizeof top_text, "the top %zu %ss", n, what);
	snprintf(title, sizeof title, "time per run of %s, block %.*s (%u run%s%s)", top_text,
	         (int)(blk->name.len > 40 ? 40 : blk->name.len), blk->name.ptr, runs,
	         runs == 1 ? "" : "s", runs < 3 ? ": points, no boxes" : "");
	snprintf(xlabel, sizeof xlabel, "time per run%s", cycles ? " (cycles)" : "");
	st.points_only = runs < 3;
	rc = etc_plot_boxes(&po, "ops_runs", title, xlabel, n, labels, boxes, res, err);
done:
	free(labels);
	free(vals);
	free(boxes);
	free(per_run);
	return rc;
}

static int plot_tax(const etc_plot_options *o, const etc_profile *p, etc_plot_result *res,
                    etc_error *err)
{
	size_t b = main_block(p);
	for (size_t s = 0; s < etc_profile_tax_summary_count(p); s++) {
		const etc_tax_summary *sum = etc_profile_tax_summary(p, s);
		if (sum->block != b)
			continue;
		double *v = calloc(sum->runs, sizeof *v);
		char(*names)[16] = calloc(sum->runs, sizeof *names);
		const char **labels = calloc(sum->runs, sizeof *labels);
		int rc = 0;
		if (!v || !names || !labels) {
			rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		} else {
			for (uint32_t k = 0; k < sum->runs; k++) {
				v[k] = etc_profile_tax(p, sum->first_row + k)->tax_percent;
				snprintf(names[k], sizeof names[k], "%u", k);
				labels[k] = names[k];
			}
			rc = etc_plot_trend(o, "tax_runs", "framework tax per run", "run",
			                    "framework tax (% of Method::execute)", sum->runs,
			                    labels, v, res, err);
		}
		free(v);
		free(names);
		free(labels);
		return rc;
	}
	return 0;
}

#define TIMELINE_MAX_SPANS 5000
#define TIMELINE_MAX_LANES 30

/*
 * Run 0 of the main block: every framework-clock event (delegated events
 * run on another clock) from its start, relative to the earliest start, in
 * the target unit; one lane per event name, the first TIMELINE_MAX_LANES
 * names in order of appearance, the rest in an "other" lane.
 */
static int plot_timeline(const etc_plot_options *o, const etc_profile *p, etc_plot_result *res,
                         etc_error *err)
{
	const etc_inspector *in = etc_profile_inspector(p);
	if (!etc_inspector_block_count(in))
		return 0;
	const etc_event_block *blk = etc_inspector_block(in, main_block(p));
	const etc_inspector_options *io = etc_inspector_options_get(in);
	static const double factor[] = {1e9, 1e6, 1e3, 1, 1};
	double scale = factor[io->source_time_scale] / factor[io->target_time_scale];
	size_t cap = blk->event_count < TIMELINE_MAX_SPANS ? blk->event_count : TIMELINE_MAX_SPANS;
	etc_plot_span *spans = calloc(cap ? cap : 1, sizeof *spans);
	const char **lanes = calloc(TIMELINE_MAX_LANES + 1, sizeof *lanes);
	char(*lane_names)[96] = calloc(TIMELINE_MAX_LANES + 1, sizeof *lane_names);
	int rc = 0;
	if (!spans || !lanes || !lane_names) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	uint64_t t0 = UINT64_MAX;
	for (size_t e = 0; e < blk->event_count; e++)
		if (blk->events[e].has_perf && !blk->events[e].is_delegated_op &&
		    blk->events[e].start_times[0] < t0)
			t0 = blk->events[e].start_times[0];
	size_t n = 0, nlanes = 0, skipped = 0;
	bool other = false;
	for (size_t e = 0; e < blk->event_count; e++) {
		const etc_inspector_event *ev = &blk->events[e];
		if (!ev->has_perf || ev->is_delegated_op)
			continue;
		if (n == cap) {
			skipped++;
			continue;
		}
		char name[96];
		snprintf(name, sizeof name, "%.*s", (int)(ev->name.len > 90 ? 90 : ev->name.len),
		         ev->name.ptr);
		size_t lane = nlanes;
		for (size_t l = 0; l < nlanes; l++)
			if (!strcmp(lane_names[l], name)) {
				lane = l;
				break;
			}
		if (lane == nlanes) {
			if (nlanes < TIMELINE_MAX_LANES) {
				snprintf(lane_names[nlanes], sizeof lane_names[0], "%s", name);
				nlanes++;
			} else {
				lane = TIMELINE_MAX_LANES;
				other = true;
			}
		}
		spans[n].lane = (uint32_t)lane;
		spans[n].start = (double)(ev->start_times[0] - t0) / scale;
		spans[n].end = spans[n].start + ev->raw[0];
		n++;
	}
	if (!n)
		goto done;
	if (other) {
		snprintf(lane_names[TIMELINE_MAX_LANES], sizeof lane_names[0], "(other)");
		for (size_t i = 0; i < n; i++)
			if (spans[i].lane == TIMELINE_MAX_LANES)
				spans[i].lane = (uint32_t)nlanes;
		snprintf(lane_names[nlanes], sizeof lane_names[0], "(other)");
		nlanes++;
	}
	for (size_t l = 0; l < nlanes; l++)
		lanes[l] = lane_names[l];
	char title[160], xlabel[64];
	snprintf(title, sizeof title, "timeline of block %.*s, run 0%s",
	         (int)(blk->name.len > 40 ? 40 : blk->name.len), blk->name.ptr,
	         skipped ? " (first 5000 events)" : "");
	/* one time unit chosen from the data (the largest end is at least 1 in
	 * it), named on the axis: no ticks like 0.0002 ms */
	int ts = etc_inspector_options_get(etc_profile_inspector(p))->target_time_scale;
	static const double to_s[] = {1e-9, 1e-6, 1e-3, 1, 1};
	static const char *const names[] = {"ns", "\xc2\xb5s", "ms", "s"};
	const char *unit = unit_of(p);
	if (ts >= 0 && ts < ETC_TIME_CYCLES) {
		double hi = 0;
		for (size_t i = 0; i < n; i++)
			hi = spans[i].end > hi ? spans[i].end : hi;
		hi *= to_s[ts];
		int u = hi >= 1 ? 3 : hi >= 1e-3 ? 2 : hi >= 1e-6 ? 1 : 0;
		double k = to_s[ts] / to_s[u];
		for (size_t i = 0; i < n; i++) {
			spans[i].start *= k;
			spans[i].end *= k;
		}
		unit = names[u];
	}
	snprintf(xlabel, sizeof xlabel, "time since the first event (%s)", unit);
	rc = etc_plot_timeline(o, "timeline", title, xlabel, nlanes, lanes, n, spans, res, err);
done:
	free(spans);
	free(lanes);
	free(lane_names);
	return rc;
}

int etc_report_profile_plots(const etc_plot_options *o, const etc_profile *p, size_t top_n,
                             etc_plot_result *res, etc_error *err)
{
	ETC_TRY(plot_ops(o, p, top_n ? top_n : 10, res, err));
	ETC_TRY(plot_tax(o, p, res, err));
	return plot_timeline(o, p, res, err);
}
