/*
 * report_outputs.c - summaries of logged values: the --show-outputs text and
 * the value objects of the JSON report. Values come from the debug buffer
 * through etc_value_tensor, so every offset is checked before it is read.
 */
#include "core/internal.h"
#include "report/report_private.h"

static inline uint64_t etc_le64_(const uint8_t *p)
{
	return etc_le64(p);
}

#include <math.h>

void etc_json_num_(etc_sbuf *b, double v)
{
	char num[ETC_FMT_NUM];
	size_t n = etc_fmt_repr(num, v);
	if (isfinite(v))
		etc_sbuf_put(b, num, n);
	else
		etc_sbuf_printf(b, "\"%s\"", num);
}

void etc_summary_cache_init_(etc_summary_cache *c)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < ETC_SUMMARY_SLOTS; i++)
		c->slot[i].scalar_type = -1;
}

static etc_summary_slot *slot_of(etc_summary_cache *c, const etc_tensor *t)
{
	uint64_t h = ((uint64_t)(uintptr_t)t->data >> 4) * 0x9e3779b97f4a7c15ull ^ t->numel;
	return &c->slot[(h >> 32) % ETC_SUMMARY_SLOTS];
}

void etc_summary_cache_put_(etc_summary_cache *c, const etc_tensor *t,
                            const etc_tensor_summary *summary, const uint64_t *extremes)
{
	etc_summary_slot *s = slot_of(c, t);
	s->data = t->data;
	s->numel = t->numel;
	s->scalar_type = t->scalar_type;
	s->summary = *summary;
	s->has_extremes = extremes != NULL;
	if (extremes)
		s->extremes[0] = extremes[0], s->extremes[1] = extremes[1];
}

static void summarize(etc_summary_cache *c, const etc_tensor *t, etc_tensor_summary *out)
{
	etc_summary_slot *s = NULL;
	if (c) {
		s = slot_of(c, t);
		if (s->data == t->data && s->numel == t->numel &&
		    s->scalar_type == t->scalar_type) {
			*out = s->summary;
			return;
		}
	}
	etc_tensor_summarize(t, out);
	if (s) {
		s->data = t->data;
		s->numel = t->numel;
		s->scalar_type = t->scalar_type;
		s->summary = *out;
		s->has_extremes = false;
	}
}

/*
 * int64 and uint64 values beyond 2^53 do not survive a trip through double,
 * so their values, min and max are printed from the integers themselves.
 */
static bool wide_int(const etc_tensor *t)
{
	return t->scalar_type == ETC_LONG || t->scalar_type == ETC_UINT64;
}

static void put_wide_bits(etc_sbuf *b, const etc_tensor *t, uint64_t u)
{
	if (t->scalar_type == ETC_LONG)
		etc_sbuf_printf(b, "%lld", (long long)(int64_t)u);
	else
		etc_sbuf_printf(b, "%llu", (unsigned long long)u);
}

static void put_wide(etc_sbuf *b, const etc_tensor *t, uint64_t i)
{
	put_wide_bits(b, t, etc_le64_(t->data + 8 * i));
}

/* Index of the smallest (want_max false) or largest element. */
static uint64_t wide_extreme(const etc_tensor *t, bool want_max)
{
	uint64_t best = 0;
	for (uint64_t i = 1; i < t->numel; i++) {
		uint64_t a = etc_le64_(t->data + 8 * i), c = etc_le64_(t->data + 8 * best);
		bool less = t->scalar_type == ETC_LONG ? (int64_t)a < (int64_t)c : a < c;
		bool more = t->scalar_type == ETC_LONG ? (int64_t)a > (int64_t)c : a > c;
		if (want_max ? more : less)
			best = i;
	}
	return best;
}

/* The smallest (want_max false) or largest element, from the cache when it
 * has it (a preview holds the first values only). */
static void put_extreme(etc_sbuf *b, const etc_tensor *t, etc_summary_cache *c, bool want_max)
{
	const etc_summary_slot *s = c ? slot_of(c, t) : NULL;
	if (s && s->has_extremes && s->data == t->data && s->numel == t->numel &&
	    s->scalar_type == t->scalar_type)
		put_wide_bits(b, t, s->extremes[want_max]);
	else
		put_wide(b, t, wide_extreme(t, want_max));
}

static void shape(etc_sbuf *b, const etc_tensor *t)
{
	etc_sbuf_puts(b, "[");
	for (uint32_t k = 0; k < t->ndim; k++)
		etc_sbuf_printf(b, k ? ", %lld" : "%lld", (long long)etc_tensor_size(t, k));
	etc_sbuf_puts(b, "]");
}

static bool is_integral(int st)
{
	switch (st) {
	case ETC_HALF:
	case ETC_FLOAT:
	case ETC_DOUBLE:
	case ETC_BFLOAT16:
	case ETC_FLOAT8E5M2:
	case ETC_FLOAT8E4M3FN:
	case ETC_FLOAT8E5M2FNUZ:
	case ETC_FLOAT8E4M3FNUZ:
		return false;
	}
	return true;
}

static void text_num(etc_sbuf *b, double v, bool integral)
{
	if (integral && isfinite(v) && fabs(v) < 9.007199254740992e15)
		etc_sbuf_printf(b, "%.0f", v);
	else
		etc_sbuf_printf(b, "%.6g", v);
}

void etc_tensor_json_(etc_sbuf *b, const etc_tensor *t, uint32_t max_values,
                      etc_summary_cache *cache)
{
	etc_sbuf_printf(b, "{\"dtype\": \"%s\", ", etc_scalar_type_name(t->scalar_type));
	if (!etc_scalar_type_valid(t->scalar_type))
		etc_sbuf_printf(b, "\"scalar_type_code\": %d, ", t->scalar_type);
	etc_sbuf_puts(b, "\"shape\": ");
	shape(b, t);
	etc_sbuf_printf(b,
	                ", \"offset\": %lld, \"numel\": %llu, \"nbytes\": %llu, \"has_data\": %s",
	                (long long)t->offset, (unsigned long long)t->numel,
	                (unsigned long long)t->nbytes, t->data ? "true" : "false");
	if (t->data && t->numel) {
		etc_tensor_summary s;
		summarize(cache, t, &s);
		etc_sbuf_puts(b, ", \"min\": ");
		if (wide_int(t))
			put_extreme(b, t, cache, false);
		else
			etc_json_num_(b, s.min);
		etc_sbuf_puts(b, ", \"max\": ");
		if (wide_int(t))
			put_extreme(b, t, cache, true);
		else
			etc_json_num_(b, s.max);
		etc_sbuf_puts(b, ", \"mean\": ");
		etc_json_num_(b, s.mean);
		etc_sbuf_printf(b, ", \"nan_count\": %llu, \"values\": [",
		                (unsigned long long)s.nan_count);
		uint64_t n = t->numel < max_values ? t->numel : max_values;
		for (uint64_t i = 0; i < n; i++) {
			if (i)
				etc_sbuf_puts(b, ", ");
			if (wide_int(t))
				put_wide(b, t, i);
			else
				etc_json_num_(b, etc_tensor_get(t, i));
		}
		etc_sbuf_puts(b, "]");
	}
	etc_sbuf_puts(b, "}");
}

int etc_value_json_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err)
{
	etc_sbuf_printf(b, "{\"type\": \"%s\", \"output\": %s", etc_value_type_name(v->type),
	                v->is_output ? "true" : "false");
	switch (v->type) {
	case ETC_VALUE_INT:
		etc_sbuf_printf(b, ", \"value\": %lld", (long long)v->int_val);
		break;
	case ETC_VALUE_BOOL:
		etc_sbuf_printf(b, ", \"value\": %s", v->bool_val ? "true" : "false");
		break;
	case ETC_VALUE_FLOAT:
		etc_sbuf_puts(b, ", \"value\": ");
		etc_json_num_(b, v->float_val);
		break;
	case ETC_VALUE_DOUBLE:
		etc_sbuf_puts(b, ", \"value\": ");
		etc_json_num_(b, v->double_val);
		break;
	case ETC_VALUE_TENSOR:
	case ETC_VALUE_TENSOR_LIST:
		etc_sbuf_puts(b, ", \"tensors\": [");
		for (uint32_t i = 0; i < v->tensor_count; i++) {
			etc_tensor t;
			int rc = etc_value_tensor(v, i, buf, &t, err);
			if (rc < 0 && rc != ETC_ERR_UNSUPPORTED)
				return rc;
			if (i)
				etc_sbuf_puts(b, ", ");
			etc_tensor_json_(b, &t, max_values, cache);
		}
		etc_sbuf_puts(b, "]");
		break;
	default:
		break;
	}
	etc_sbuf_puts(b, "}");
	return 0;
}

void etc_tensor_text_(etc_sbuf *b, const etc_tensor *t, uint32_t max_values,
                      etc_summary_cache *cache)
{
	bool integral = is_integral(t->scalar_type);
	if (etc_scalar_type_valid(t->scalar_type))
		etc_sbuf_printf(b, "%s ", etc_scalar_type_name(t->scalar_type));
	else
		etc_sbuf_printf(b, "scalar type %d ", t->scalar_type);
	shape(b, t);
	if (!etc_scalar_type_valid(t->scalar_type)) {
		etc_sbuf_puts(b, "  (unsupported scalar type: no values)");
		return;
	}
	if (!t->data) {
		etc_sbuf_puts(b,
		              t->numel && t->offset >= 0 ? "  (no debug buffer)" : "  (no data)");
		return;
	}
	if (!t->numel) { /* no statistics of no elements */
		etc_sbuf_puts(b, "  (empty)  []");
		return;
	}
	etc_tensor_summary s;
	summarize(cache, t, &s);
	etc_sbuf_puts(b, "  min=");
	if (wide_int(t))
		put_extreme(b, t, cache, false);
	else
		text_num(b, s.min, integral);
	etc_sbuf_puts(b, " max=");
	if (wide_int(t))
		put_extreme(b, t, cache, true);
	else
		text_num(b, s.max, integral);
	etc_sbuf_printf(b, " mean=%.6g", s.mean);
	if (s.nan_count)
		etc_sbuf_printf(b, " nan=%llu", (unsigned long long)s.nan_count);
	etc_sbuf_puts(b, "  [");
	uint64_t n = t->numel < max_values ? t->numel : max_values;
	for (uint64_t i = 0; i < n; i++) {
		if (i)
			etc_sbuf_puts(b, ", ");
		if (wide_int(t))
			put_wide(b, t, i);
		else
			text_num(b, etc_tensor_get(t, i), integral);
	}
	if (t->numel > n)
		etc_sbuf_printf(b, "%s... (%llu %s)", n ? ", " : "",
		                (unsigned long long)(t->numel - n), n ? "more" : "values");
	etc_sbuf_puts(b, "]");
}

int etc_value_text_(etc_sbuf *b, const etc_value *v, const etc_debug_buffer *buf,
                    uint32_t max_values, etc_summary_cache *cache, etc_error *err)
{
	switch (v->type) {
	case ETC_VALUE_INT:
		etc_sbuf_printf(b, "Int %lld", (long long)v->int_val);
		return 0;
	case ETC_VALUE_BOOL:
		etc_sbuf_printf(b, "Bool %s", v->bool_val ? "True" : "False");
		return 0;
	case ETC_VALUE_FLOAT:
		etc_sbuf_printf(b, "Float %.9g", v->float_val);
		return 0;
	case ETC_VALUE_DOUBLE:
		etc_sbuf_printf(b, "Double %.17g", v->double_val);
		return 0;
	case ETC_VALUE_TENSOR: {
		etc_tensor t;
		int rc = etc_value_tensor(v, 0, buf, &t, err);
		if (rc < 0 && rc != ETC_ERR_UNSUPPORTED)
			return rc;
		etc_sbuf_puts(b, "Tensor ");
		etc_tensor_text_(b, &t, max_values, cache);
		return 0;
	}
	case ETC_VALUE_TENSOR_LIST:
		etc_sbuf_printf(b, "TensorList of %u", v->tensor_count);
		for (uint32_t i = 0; i < v->tensor_count; i++) {
			etc_tensor t;
			int rc = etc_value_tensor(v, i, buf, &t, err);
			if (rc < 0 && rc != ETC_ERR_UNSUPPORTED)
				return rc;
			etc_sbuf_printf(b, "\n        [%u] ", i);
			etc_tensor_text_(b, &t, max_values, cache);
		}
		return 0;
	default:
		etc_sbuf_printf(b, "%s (no value)", etc_value_type_name(v->type));
		return 0;
	}
}

int etc_report_outputs(FILE *f, const etc_inspector *insp, const etc_report_options *opt,
                       etc_error *err)
{
	if (!f || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_outputs: NULL %s",
		                !f ? "out" : "insp");
	etc_report_options o;
	if (!opt)
		etc_report_options_init(&o), opt = &o;
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	etc_sbuf b = {0};
	etc_summary_cache cache;
	etc_summary_cache_init_(&cache);
	int rc = 0;
	for (size_t bi = 0; bi < etc_inspector_block_count(insp) && rc == 0; bi++) {
		const etc_event_block *blk = etc_inspector_block(insp, bi);
		char name[512];
		fprintf(f, "Block %zu \"%s\": %u run%s", bi,
		        etc_text_escape(name, sizeof name, blk->name.ptr, blk->name.len),
		        blk->run_count, blk->run_count == 1 ? "" : "s");
		if (blk->bundled_input_index >= 0)
			fprintf(f, ", bundled_input_index %d", blk->bundled_input_index);
		fputc('\n', f);
		for (uint32_t r = 0; r < blk->run_count && rc == 0; r++) {
			uint32_t a = blk->output_start[r], z = blk->output_start[r + 1];
			if (a == z)
				continue;
			fprintf(f, "  Program outputs of run %u (run_data[%u]): %u\n", r,
			        blk->runs[r], z - a);
			for (uint32_t k = a; k < z && rc == 0; k++) {
				etc_sbuf_reset(&b);
				rc = etc_value_text_(&b, &blk->outputs[k], buf, opt->max_values,
				                     &cache, err);
				if (rc == 0)
					fprintf(f, "    output %u: %s\n", k - a, b.p);
			}
		}
		bool header = false;
		for (size_t e = 0; e < blk->event_count && rc == 0; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (!ev->debug_count)
				continue;
			if (!header) {
				fprintf(f, "  Intermediate outputs (run 0):\n");
				header = true;
			}
			fprintf(f, "    event %zu %s (instruction %d):\n", e,
			        etc_text_escape(name, sizeof name, ev->name.ptr, ev->name.len),
			        ev->instruction_id);
			for (uint32_t k = 0; k < ev->debug_count && rc == 0; k++) {
				etc_sbuf_reset(&b);
				rc = etc_value_text_(&b, &ev->debug[k], buf, opt->max_values,
				                     &cache, err);
				if (rc == 0)
					fprintf(f, "      [%u] %s\n", k, b.p);
			}
		}
	}
	etc_sbuf_free(&b);
	if (rc == 0 && ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the outputs");
	return rc;
}
