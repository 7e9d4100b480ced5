/*
 * taps.c - intermediate-output taps (etcompare/taps.h): the TapSpec list
 * read from JSON, the STATS formulas, and the per-op rows made from the
 * accuracy comparison's rows of the tap outputs.
 */
#include "etcompare/taps.h"

#include "core/internal.h"
#include "format/jsonscan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[ETC_TAP_FIELD_COUNT] = {
    "min",     "max",     "mean",      "abs_max",   "abs_mean",   "std",    "rms",
    "l1_norm", "l2_norm", "nan_count", "inf_count", "zero_count", "p99_abs"};

enum {
	F_MIN,
	F_MAX,
	F_MEAN,
	F_ABS_MAX,
	F_ABS_MEAN,
	F_STD,
	F_RMS,
	F_L1,
	F_L2,
	F_NAN,
	F_INF,
	F_ZERO,
	F_P99
};

const char *etc_tap_field_name(int f)
{
	return f >= 0 && f < ETC_TAP_FIELD_COUNT ? field_names[f] : "?";
}

int etc_tap_field_find(const char *name)
{
	for (int f = 0; f < ETC_TAP_FIELD_COUNT; f++)
		if (strcmp(field_names[f], name) == 0)
			return f;
	return -1;
}

/* --- the spec list ------------------------------------------------------ */

typedef struct spec_item {
	etc_tap_spec s;
	int *field_ids;
} spec_item;

struct etc_tap_specs {
	etc_arena arena;
	spec_item *items;
	etc_tap_spec *sorted;
	size_t count;
};

static int read_string_or_null(etc_jscan *j, etc_arena *a, const char *key, const char **dst)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(j, &t));
	if (t == ETC_J_NULL) {
		*dst = NULL;
		return 0;
	}
	if (t != ETC_J_STRING)
		return etc_jscan_fail(j, "TapSpec key \"%s\" must be a string or null", key);
	*dst = etc_jscan_string(j, a);
	if (!*dst)
		return etc_fail(j->err, ETC_ERR_NOMEM, j->file, -1, "out of memory");
	return 0;
}

static int read_fields(etc_jscan *j, etc_arena *a, spec_item *it)
{
	etc_jtok t;
	ETC_TRY(etc_jscan_next(j, &t));
	if (t == ETC_J_NULL)
		return 0;
	if (t != ETC_J_ARRAY)
		return etc_jscan_fail(j, "TapSpec \"fields\" must be a list of field names");
	const char *names[ETC_TAP_FIELD_COUNT * 2];
	size_t n = 0;
	for (;;) {
		ETC_TRY(etc_jscan_next(j, &t));
		if (t == ETC_J_ARRAY_END)
			break;
		if (t != ETC_J_STRING)
			return etc_jscan_fail(j, "TapSpec \"fields\" must hold strings");
		if (n == ETC_TAP_FIELD_COUNT * 2)
			return etc_jscan_fail(j, "TapSpec \"fields\" has more than %d names",
			                      ETC_TAP_FIELD_COUNT * 2);
		names[n] = etc_jscan_string(j, a);
		if (!names[n])
			return etc_fail(j->err, ETC_ERR_NOMEM, j->file, -1, "out of memory");
		n++;
	}
	const char **keep = etc_arena_alloc(a, n ? n : 1, sizeof *keep);
	it->field_ids = etc_arena_alloc(a, n ? n : 1, sizeof *it->field_ids);
	if (!keep || !it->field_ids)
		return etc_fail(j->err, ETC_ERR_NOMEM, j->file, -1, "out of memory");
	for (size_t i = 0; i < n; i++) {
		keep[i] = names[i];
		it->field_ids[i] = etc_tap_field_find(names[i]);
		if (it->field_ids[i] < 0)
			return etc_jscan_fail(j,
			                      "TapSpec field \"%.60s\" is not a known statistic "
			                      "(min, max, mean, abs_max, abs_mean, std, rms, "
			                      "l1_norm, l2_norm, nan_count, inf_count, zero_count, "
			                      "p99_abs)",
			                      names[i]);
	}
	it->s.fields = keep;
	it->s.field_count = n;
	return 0;
}

static int read_spec(etc_jscan *j, etc_arena *a, spec_item *it)
{
	etc_jtok t;
	bool has_index = false;
	it->s.output_index = -1;
	for (;;) {
		ETC_TRY(etc_jscan_next(j, &t));
		if (t == ETC_J_OBJECT_END)
			break;
		if (etc_jscan_key_is(j, "node_name"))
			ETC_TRY(read_string_or_null(j, a, "node_name", &it->s.node_name));
		else if (etc_jscan_key_is(j, "op_target"))
			ETC_TRY(read_string_or_null(j, a, "op_target", &it->s.op_target));
		else if (etc_jscan_key_is(j, "reducer_name"))
			ETC_TRY(read_string_or_null(j, a, "reducer_name", &it->s.reducer_name));
		else if (etc_jscan_key_is(j, "stack_trace"))
			ETC_TRY(read_string_or_null(j, a, "stack_trace", &it->s.stack_trace));
		else if (etc_jscan_key_is(j, "module_path"))
			ETC_TRY(read_string_or_null(j, a, "module_path", &it->s.module_path));
		else if (etc_jscan_key_is(j, "module_class"))
			ETC_TRY(read_string_or_null(j, a, "module_class", &it->s.module_class));
		else if (etc_jscan_key_is(j, "fields"))
			ETC_TRY(read_fields(j, a, it));
		else if (etc_jscan_key_is(j, "output_index")) {
			ETC_TRY(etc_jscan_next(j, &t));
			char num[32];
			if (t != ETC_J_NUMBER || j->len >= sizeof num)
				return etc_jscan_fail(
				    j, "TapSpec \"output_index\" must be an integer");
			memcpy(num, j->s, j->len);
			num[j->len] = 0;
			char *end;
			long long v = strtoll(num, &end, 10);
			if (*end || v < 0)
				return etc_jscan_fail(
				    j,
				    "TapSpec \"output_index\" must be an integer >= 0, "
				    "not %s",
				    num);
			it->s.output_index = v;
			has_index = true;
		} else {
			ETC_TRY(etc_jscan_next(j, &t));
			ETC_TRY(etc_jscan_skip(j, t));
		}
	}
	if (!it->s.node_name || !has_index)
		return etc_jscan_fail(j, "a TapSpec needs \"node_name\" and \"output_index\"");
	if (!it->s.reducer_name)
		it->s.reducer_name = it->s.field_count ? "STATS" : "FULL_TENSOR";
	if (!it->s.op_target)
		it->s.op_target = "";
	return 0;
}

static int by_output(const void *a, const void *b)
{
	const etc_tap_spec *x = a, *y = b;
	return (x->output_index > y->output_index) - (x->output_index < y->output_index);
}

static int specs_parse(etc_tap_specs *s, const etc_map *m, const char *path, etc_error *err)
{
	etc_jscan j;
	etc_jscan_init(&j, (const char *)m->data, m->size, 32, path, NULL, 0, err);
	etc_jtok t;
	ETC_TRY(etc_jscan_next(&j, &t));
	if (t != ETC_J_ARRAY)
		return etc_jscan_fail(&j,
		                      "the TapSpec file must hold a JSON list of TapSpec objects");
	size_t cap = 0;
	for (;;) {
		ETC_TRY(etc_jscan_next(&j, &t));
		if (t == ETC_J_ARRAY_END)
			break;
		if (t != ETC_J_OBJECT)
			return etc_jscan_fail(&j, "TapSpec %zu is not an object", s->count);
		if (s->count == cap) {
			cap = cap ? cap * 2 : 16;
			spec_item *x = realloc(s->items, cap * sizeof *x);
			if (!x)
				return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
			s->items = x;
		}
		spec_item *it = &s->items[s->count++];
		memset(it, 0, sizeof *it);
		ETC_TRY(read_spec(&j, &s->arena, it));
	}
	ETC_TRY(etc_jscan_next(&j, &t));
	s->sorted = calloc(s->count ? s->count : 1, sizeof *s->sorted);
	if (!s->sorted)
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	for (size_t i = 0; i < s->count; i++)
		s->sorted[i] = s->items[i].s;
	qsort(s->sorted, s->count, sizeof *s->sorted, by_output);
	for (size_t i = 1; i < s->count; i++)
		if (s->sorted[i].output_index == s->sorted[i - 1].output_index)
			return etc_fail(err, ETC_ERR_FORMAT, path, -1,
			                "TapSpecs \"%.80s\" and \"%.80s\" share output_index %lld",
			                s->sorted[i - 1].node_name, s->sorted[i].node_name,
			                (long long)s->sorted[i].output_index);
	return 0;
}

int etc_tap_specs_load(etc_tap_specs **out, const char *path, etc_error *err)
{
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_tap_specs_load: NULL %s",
		                !out ? "out" : "path");
	*out = NULL;
	etc_tap_specs *s = calloc(1, sizeof *s);
	if (!s)
		return etc_fail(err, ETC_ERR_NOMEM, path, -1, "out of memory");
	etc_arena_init(&s->arena);
	etc_map m;
	int rc = etc_map_open(&m, path, err);
	if (rc == 0) {
		rc = specs_parse(s, &m, path, err);
		etc_map_close(&m);
	}
	if (rc < 0) {
		etc_tap_specs_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void etc_tap_specs_free(etc_tap_specs *s)
{
	if (!s)
		return;
	etc_arena_release(&s->arena);
	free(s->items);
	free(s->sorted);
	free(s);
}

size_t etc_tap_specs_count(const etc_tap_specs *s)
{
	return s->count;
}

const etc_tap_spec *etc_tap_specs_at(const etc_tap_specs *s, size_t i)
{
	return i < s->count ? &s->sorted[i] : NULL;
}

int64_t etc_tap_specs_first_output(const etc_tap_specs *s)
{
	return s->count ? s->sorted[0].output_index : -1;
}

/* --- the STATS formulas ------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int etc_tap_stats(const etc_values *v, const int *fields, size_t nf, double *out, etc_error *err)
{
	for (size_t i = 0; i < nf; i++)
		if (fields[i] < 0 || fields[i] >= ETC_TAP_FIELD_COUNT)
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "unknown tap field %d",
			                fields[i]);
	uint64_t n = v->count;
	double *x = malloc((n ? n : 1) * sizeof *x);
	if (!x)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
		                "out of memory for the %llu values of a tap",
		                (unsigned long long)n);
	if (n)
		v->read(v->src, 0, (size_t)n, x);
	double mn = INFINITY, mx = -INFINITY, amax = 0, sum = 0, asum = 0, sq = 0;
	uint64_t nan = 0, inf = 0, zero = 0;
	bool any_nan = false;
	for (uint64_t i = 0; i < n; i++) {
		double a = x[i];
		if (isnan(a)) {
			nan++;
			any_nan = true;
		} else {
			inf += isinf(a) != 0;
			zero += a == 0;
			mn = a < mn ? a : mn;
			mx = a > mx ? a : mx;
			amax = fabs(a) > amax ? fabs(a) : amax;
		}
		sum += a;
		asum += fabs(a);
		sq += a * a;
	}
	double mean = n ? sum / (double)n : NAN;
	double dev = 0;
	for (uint64_t i = 0; i < n; i++)
		dev += (x[i] - mean) * (x[i] - mean);
	double p99 = NAN;
	if (n && !any_nan) {
		for (uint64_t i = 0; i < n; i++)
			x[i] = fabs(x[i]);
		qsort(x, (size_t)n, sizeof *x, cmp_double);
		double pos = 0.99 * (double)(n - 1);
		size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
		double frac = pos - (double)lo;
		p99 = x[lo] + (x[hi] - x[lo]) * frac;
	}
	free(x);
	if (any_nan || !n)
		mn = mx = amax = NAN; /* torch.amin/amax propagate NaN; empty has none */
	for (size_t i = 0; i < nf; i++) {
		double r = NAN;
		switch (fields[i]) {
		case F_MIN:
			r = mn;
			break;
		case F_MAX:
			r = mx;
			break;
		case F_MEAN:
			r = mean;
			break;
		case F_ABS_MAX:
			r = amax;
			break;
		case F_ABS_MEAN:
			r = n ? asum / (double)n : NAN;
			break;
		case F_STD:
			r = n > 1 ? sqrt(dev / (double)(n - 1)) : NAN;
			break;
		case F_RMS:
			r = n ? sqrt(sq / (double)n) : NAN;
			break;
		case F_L1:
			r = asum;
			break;
		case F_L2:
			r = sqrt(sq);
			break;
		case F_NAN:
			r = (double)nan;
			break;
		case F_INF:
			r = (double)inf;
			break;
		case F_ZERO:
			r = (double)zero;
			break;
		case F_P99:
			r = p99;
			break;
		}
		out[i] = r;
	}
	return 0;
}

/* --- options ------------------------------------------------------------ */

void etc_tap_options_init(etc_tap_options *o)
{
	for (int f = 0; f < ETC_TAP_FIELD_COUNT; f++)
		o->max_stat_rel_diff[f] = NAN;
}

int etc_tap_options_parse_rel_diff(etc_tap_options *o, const char *text, etc_error *err)
{
	const char *p = text;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char part[96];
		if (len == 0 || len >= sizeof part)
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "--max-stat-rel-diff takes X or FIELD=X,..., not '%.80s'",
			                text);
		memcpy(part, p, len);
		part[len] = 0;
		char *eq = strchr(part, '='), *num = eq ? eq + 1 : part, *stop;
		if (eq)
			*eq = 0;
		double v = strtod(num, &stop);
		if (*stop || stop == num || !(v >= 0))
			return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
			                "--max-stat-rel-diff: '%.80s' is not a number >= 0", num);
		if (eq) {
			int f = etc_tap_field_find(part);
			if (f < 0)
				return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
				                "--max-stat-rel-diff: unknown field '%.60s'", part);
			o->max_stat_rel_diff[f] = v;
		} else {
			for (int f = 0; f < ETC_TAP_FIELD_COUNT; f++)
				o->max_stat_rel_diff[f] = v;
		}
		p = end ? end + 1 : p + len;
	}
	return 0;
}

/* --- rows --------------------------------------------------------------- */

struct etc_taps {
	const etc_tap_specs *specs;
	etc_tap_row *rows;
	etc_tap_field *fields;
	size_t count, nfields;
};

static double rel_diff(double a, double r)
{
	if (a == r || (isnan(a) && isnan(r)))
		return 0;
	if (isnan(a) || isnan(r))
		return INFINITY;
	/* against a zero reference the difference itself (relative to 1) */
	return r == 0 ? fabs(a) : fabs(a - r) / fabs(r);
}

static int stats_row(etc_taps *t, etc_tap_row *row, const spec_item *it, const etc_accuracy *acc,
                     size_t ai, const etc_tap_options *opt, etc_error *err)
{
	const etc_accuracy_row *ar = etc_accuracy_row_at(acc, ai);
	etc_values va, vr;
	if (etc_accuracy_row_sides(acc, ai, &va, &vr) < 0) {
		snprintf(row->reason, sizeof row->reason, "not compared: %s%s%.120s",
		         etc_row_status_str(ar->status), *ar->reason ? ": " : "", ar->reason);
		return 0;
	}
	size_t nf = it->s.field_count;
	if (va.count != nf) {
		snprintf(row->reason, sizeof row->reason,
		         "the tap output has %llu values, its TapSpec %zu fields",
		         (unsigned long long)va.count, nf);
		return 0;
	}
	etc_tap_field *fl = &t->fields[t->nfields];
	t->nfields += nf;
	double *a = malloc(2 * (nf ? nf : 1) * sizeof *a), *r = a + nf;
	if (!a)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (nf)
		va.read(va.src, 0, nf, a);
	int rc = 0;
	if (vr.count == nf) {
		if (nf)
			vr.read(vr.src, 0, nf, r);
	} else {
		rc = etc_tap_stats(&vr, it->field_ids, nf, r, err);
		row->reference_reduced = true;
	}
	if (rc == 0) {
		row->pass = true;
		for (size_t k = 0; k < nf; k++) {
			int f = it->field_ids[k];
			fl[k].field = f;
			fl[k].actual = a[k];
			fl[k].reference = r[k];
			fl[k].rel_diff = rel_diff(a[k], r[k]);
			double lim = opt->max_stat_rel_diff[f];
			fl[k].fail = !isnan(lim) && !(fl[k].rel_diff <= lim);
			if ((f == F_NAN || f == F_INF) && a[k] > 0)
				row->nonfinite = true;
			if (fl[k].fail && row->pass) {
				row->pass = false;
				snprintf(row->reason, sizeof row->reason,
				         "%s %.6g against reference %.6g (rel diff %.3g > %.3g)",
				         field_names[f], a[k], r[k], fl[k].rel_diff, lim);
			}
		}
		for (size_t k = 0; k < nf; k++)
			if (!isfinite(a[k]) && it->field_ids[k] != F_NAN &&
			    it->field_ids[k] != F_INF)
				row->nonfinite = true;
		row->fields = fl;
		row->field_count = nf;
	}
	free(a);
	return rc;
}

int etc_taps_run(etc_taps **out, const etc_accuracy *acc, const etc_tap_specs *specs,
                 const etc_tap_options *opt, etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !acc || !specs)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_taps_run: NULL %s",
		                !out   ? "out"
		                : !acc ? "acc"
		                       : "specs");
	etc_tap_options defaults;
	if (!opt) {
		etc_tap_options_init(&defaults);
		opt = &defaults;
	}
	size_t n = etc_accuracy_row_count(acc), total_fields = 0;
	for (size_t i = 0; i < specs->count; i++)
		total_fields += specs->sorted[i].field_count;
	etc_taps *t = calloc(1, sizeof *t);
	if (!t)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	t->specs = specs;
	t->rows = calloc(n ? n : 1, sizeof *t->rows);
	t->fields = calloc(n * (total_fields ? total_fields : 1) + 1, sizeof *t->fields);
	if (!t->rows || !t->fields) {
		etc_taps_free(t);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const etc_accuracy_row *ar = etc_accuracy_row_at(acc, i);
		size_t k = 0;
		while (k < specs->count && specs->sorted[k].output_index != (int64_t)ar->output)
			k++;
		if (k == specs->count || ar->etdump_run == UINT32_MAX)
			continue;
		const spec_item *it = NULL;
		for (size_t m = 0; m < specs->count; m++)
			if (specs->items[m].s.output_index == ar->output)
				it = &specs->items[m];
		etc_tap_row *row = &t->rows[t->count++];
		row->spec = k;
		row->accuracy_row = i;
		row->block = ar->block;
		row->run = ar->run;
		row->stats = it->s.field_count > 0;
		if (row->stats) {
			int rc = stats_row(t, row, it, acc, i, opt, err);
			if (rc < 0) {
				etc_taps_free(t);
				return rc;
			}
		} else {
			row->has_metrics = ar->has_metrics;
			row->metrics = ar->metrics;
			row->pass = ar->status == ETC_ROW_PASS;
			row->nonfinite = ar->has_metrics && ar->metrics.nan_count > 0;
			if (!row->pass)
				snprintf(row->reason, sizeof row->reason, "%s%s%.140s",
				         etc_row_status_str(ar->status), *ar->reason ? ": " : "",
				         ar->reason);
		}
		if (row->nonfinite && row->pass) {
			row->pass = false;
			snprintf(row->reason, sizeof row->reason, "the run's value has NaN or Inf");
		}
	}
	*out = t;
	return 0;
}

void etc_taps_free(etc_taps *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->fields);
	free(t);
}

size_t etc_taps_row_count(const etc_taps *t)
{
	return t->count;
}

const etc_tap_row *etc_taps_row_at(const etc_taps *t, size_t i)
{
	return i < t->count ? &t->rows[i] : NULL;
}

const etc_tap_specs *etc_taps_specs(const etc_taps *t)
{
	return t->specs;
}

size_t etc_taps_failures(const etc_taps *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->count; i++)
		n += !t->rows[i].pass;
	return n;
}

long etc_taps_first_divergence(const etc_taps *t, uint32_t block, uint32_t run)
{
	long best = -1;
	for (size_t i = 0; i < t->count; i++) {
		const etc_tap_row *r = &t->rows[i];
		if (r->block != block || r->run != run || r->pass)
			continue;
		if (best < 0 || r->spec < t->rows[best].spec)
			best = (long)i;
	}
	return best;
}
