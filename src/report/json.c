/*
 * report_json.c - the machine-readable report (schema/etcompare-report.schema.json).
 * Written streaming, one event at a time, so memory does not grow with the
 * number of events. Numbers are Python repr() digits (exact round trip);
 * non-finite values are the strings "nan", "inf", "-inf".
 */
#include "core/internal.h"
#include "report/report_private.h"
#include "report/band_chart.h"

#include <math.h>

static void jstr(etc_sbuf *b, etc_str s)
{
	etc_sbuf_json_str(b, s.ptr, s.len);
}

static void flush(FILE *f, etc_sbuf *b)
{
	fwrite(b->p ? b->p : "", 1, b->len, f);
	etc_sbuf_reset(b);
}

int etc_sbuf_write_(FILE *f, etc_sbuf *b, const char *what, etc_error *err)
{
	int rc = 0;
	if (b->failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (fwrite(b->p ? b->p : "", 1, b->len, f) != b->len || ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the %s", what);
	etc_sbuf_free(b);
	return rc;
}

static void metadata_json(etc_sbuf *b, const uint8_t *m, uint32_t n)
{
	etc_sbuf_puts(b, "[");
	for (uint32_t i = 0; i < n; i++)
		etc_sbuf_printf(b, i ? ", %u" : "%u", m[i]);
	etc_sbuf_puts(b, "]");
}

/* What etc_inspector_link attached: op types, handles, traces, modules. */
static void link_json(etc_sbuf *b, const etc_inspector_event *ev)
{
	etc_sbuf_puts(b, ", \"op_types\": [");
	for (uint32_t k = 0; k < ev->node_count; k++) {
		if (k)
			etc_sbuf_puts(b, ", ");
		etc_sbuf_json_str(b, ev->nodes[k]->op, strlen(ev->nodes[k]->op));
	}
	etc_sbuf_puts(b, "], \"delegate_backend_name\": ");
	if (ev->delegate_backend_name)
		etc_sbuf_json_str(b, ev->delegate_backend_name, strlen(ev->delegate_backend_name));
	else
		etc_sbuf_puts(b, "null");
	etc_sbuf_puts(b, ", \"debug_handles\": ");
	if (ev->debug_handles) {
		etc_sbuf_puts(b, "[");
		for (uint32_t k = 0; k < ev->debug_handle_count; k++)
			etc_sbuf_printf(b, k ? ", %lld" : "%lld", (long long)ev->debug_handles[k]);
		etc_sbuf_puts(b, "]");
	} else {
		etc_sbuf_puts(b, "null");
	}
	etc_sbuf_puts(b, ", \"stack_traces\": {");
	for (uint32_t k = 0; k < ev->node_count; k++) {
		const etc_graph_node *nd = ev->nodes[k];
		etc_sbuf_puts(b, k ? ", " : "");
		etc_sbuf_json_str(b, nd->name, strlen(nd->name));
		etc_sbuf_puts(b, ": ");
		etc_sbuf_json_str(b, nd->stack_trace, strlen(nd->stack_trace));
	}
	etc_sbuf_puts(b, "}, \"module_hierarchy\": {");
	for (uint32_t k = 0; k < ev->node_count; k++) {
		const etc_graph_node *nd = ev->nodes[k];
		etc_sbuf_puts(b, k ? ", " : "");
		etc_sbuf_json_str(b, nd->name, strlen(nd->name));
		etc_sbuf_puts(b, ": [");
		for (uint32_t f = 0; f < nd->module_depth; f++) {
			const etc_module_frame *fr = &nd->modules[f];
			etc_sbuf_puts(b, f ? ", {\"key\": " : "{\"key\": ");
			etc_sbuf_json_str(b, fr->key, strlen(fr->key));
			etc_sbuf_puts(b, ", \"path\": ");
			etc_sbuf_json_str(b, fr->path, strlen(fr->path));
			etc_sbuf_puts(b, ", \"type\": ");
			etc_sbuf_json_str(b, fr->type, strlen(fr->type));
			etc_sbuf_puts(b, "}");
		}
		etc_sbuf_puts(b, "]");
	}
	etc_sbuf_puts(b, "}");
	if (ev->num_outputs >= 0)
		etc_sbuf_printf(b, ", \"num_outputs\": %lld", (long long)ev->num_outputs);
	else
		etc_sbuf_puts(b, ", \"num_outputs\": null");
}

static int event_json(etc_sbuf *b, const etc_inspector_event *ev, size_t idx,
                      const etc_debug_buffer *buf, uint32_t max_values, etc_summary_cache *cache,
                      etc_error *err)
{
	etc_sbuf_printf(b, "{\"index\": %zu, \"event_name\": ", idx);
	jstr(b, ev->name);
	if (ev->instruction_id >= 0)
		etc_sbuf_printf(b, ", \"instruction_id\": %d", ev->instruction_id);
	else
		etc_sbuf_puts(b, ", \"instruction_id\": null");
	etc_sbuf_puts(b, ", \"delegate_debug_identifier\": ");
	if (ev->delegate_debug_id_int != -1)
		etc_sbuf_printf(b, "%d", ev->delegate_debug_id_int);
	else if (ev->delegate_debug_id_str.len)
		jstr(b, ev->delegate_debug_id_str);
	else
		etc_sbuf_puts(b, "null");
	etc_sbuf_printf(b, ", \"is_delegated_op\": %s", ev->is_delegated_op ? "true" : "false");
	if (ev->has_perf) {
		static const char *const names[] = {"p10", "p50", "p90", "avg", "min", "max"};
		const double v[] = {ev->stats.p10, ev->stats.p50, ev->stats.p90,
		                    ev->stats.avg, ev->stats.min, ev->stats.max};
		etc_sbuf_puts(b, ", \"raw\": [");
		for (uint32_t k = 0; k < ev->run_count; k++) {
			if (k)
				etc_sbuf_puts(b, ", ");
			etc_json_num_(b, ev->raw[k]);
		}
		etc_sbuf_puts(b, "], \"unit\": ");
		const char *u = etc_time_scale_name(ev->time_scale);
		etc_sbuf_json_str(b, u, strlen(u));
		for (int i = 0; i < 6; i++) {
			etc_sbuf_printf(b, ", \"%s\": ", names[i]);
			etc_json_num_(b, v[i]);
		}
		etc_sbuf_puts(b, ", \"start_time\": [");
		for (uint32_t k = 0; k < ev->run_count; k++)
			etc_sbuf_printf(b, k ? ", %llu" : "%llu",
			                (unsigned long long)ev->start_times[k]);
		etc_sbuf_puts(b, "]");
	} else {
		etc_sbuf_puts(
		    b,
		    ", \"raw\": null, \"unit\": null, \"p10\": null, \"p50\": null, \"p90\": null, "
		    "\"avg\": null, \"min\": null, \"max\": null, \"start_time\": null");
	}
	link_json(b, ev);
	etc_sbuf_puts(b, ", \"delegate_debug_metadata\": ");
	if (ev->metadata) {
		etc_sbuf_puts(b, "[");
		for (uint32_t k = 0; k < ev->run_count; k++) {
			if (k)
				etc_sbuf_puts(b, ", ");
			metadata_json(b, ev->metadata[k], ev->metadata_len[k]);
		}
		etc_sbuf_puts(b, "]");
	} else {
		etc_sbuf_puts(b, "null");
	}
	etc_sbuf_puts(b, ", \"debug_data\": [");
	for (uint32_t k = 0; k < ev->debug_count; k++) {
		if (k)
			etc_sbuf_puts(b, ", ");
		ETC_TRY(etc_value_json_(b, &ev->debug[k], buf, max_values, cache, err));
	}
	etc_sbuf_puts(b, "]}");
	return 0;
}

static void tensor_desc_json(etc_sbuf *b, const etc_tensor *t)
{
	etc_sbuf_printf(b, "{\"scalar_type\": \"%s\", \"sizes\": [",
	                etc_scalar_type_schema_name(t->scalar_type));
	for (uint32_t k = 0; k < t->ndim; k++)
		etc_sbuf_printf(b, k ? ", %lld" : "%lld", (long long)etc_tensor_size(t, k));
	etc_sbuf_puts(b, "], \"strides\": [");
	for (uint32_t k = 0; k < t->nstrides; k++)
		etc_sbuf_printf(b, k ? ", %lld" : "%lld", (long long)etc_tensor_stride(t, k));
	etc_sbuf_printf(b, "], \"offset\": %lld}", (long long)t->offset);
}

/* The decoded event in the schema's own field names (compare with flatc --json). */
static int raw_event_json(etc_sbuf *b, const etc_event *ev, etc_error *err)
{
	if (ev->kind == ETC_EVENT_PROFILE) {
		const etc_profile_event *p = &ev->profile;
		etc_sbuf_puts(b, "{\"profile_event\": {\"name\": ");
		jstr(b, p->name);
		etc_sbuf_printf(b,
		                ", \"chain_index\": %d, \"instruction_id\": %d, "
		                "\"delegate_debug_id_int\": %d, \"delegate_debug_id_str\": ",
		                p->chain_index, p->instruction_id, p->delegate_debug_id_int);
		jstr(b, p->delegate_debug_id_str);
		etc_sbuf_puts(b, ", \"delegate_debug_metadata\": ");
		if (p->has_metadata)
			metadata_json(b, p->metadata, p->metadata_len);
		else
			etc_sbuf_puts(b, "null");
		etc_sbuf_printf(b, ", \"start_time\": %llu, \"end_time\": %llu}}",
		                (unsigned long long)p->start_time, (unsigned long long)p->end_time);
	} else if (ev->kind == ETC_EVENT_ALLOCATION) {
		etc_sbuf_printf(b,
		                "{\"allocation_event\": {\"allocator_id\": %d, "
		                "\"allocation_size\": %llu}}",
		                ev->allocation.allocator_id,
		                (unsigned long long)ev->allocation.allocation_size);
	} else if (ev->kind == ETC_EVENT_DEBUG) {
		const etc_debug_event *d = &ev->debug;
		const etc_value *v = &d->value;
		etc_sbuf_printf(b,
		                "{\"debug_event\": {\"chain_index\": %llu, \"instruction_id\": %d, "
		                "\"delegate_debug_id_int\": %d, \"delegate_debug_id_str\": ",
		                (unsigned long long)d->chain_index, d->instruction_id,
		                d->delegate_debug_id_int);
		jstr(b, d->delegate_debug_id_str);
		etc_sbuf_puts(b, ", \"name\": ");
		jstr(b, d->name);
		etc_sbuf_puts(b, ", \"debug_entry\": ");
		if (!d->has_value) {
			etc_sbuf_puts(b, "null}}");
			return 0;
		}
		etc_sbuf_printf(b, "{\"val\": \"%s\", \"output\": %s", etc_value_type_name(v->type),
		                v->has_output ? (v->is_output ? "true" : "false") : "null");
		switch (v->type) {
		case ETC_VALUE_INT:
			etc_sbuf_printf(b, ", \"int_val\": %lld", (long long)v->int_val);
			break;
		case ETC_VALUE_BOOL:
			etc_sbuf_printf(b, ", \"bool_val\": %s", v->bool_val ? "true" : "false");
			break;
		case ETC_VALUE_FLOAT:
			etc_sbuf_puts(b, ", \"float_val\": ");
			etc_json_num_(b, v->float_val);
			break;
		case ETC_VALUE_DOUBLE:
			etc_sbuf_puts(b, ", \"double_val\": ");
			etc_json_num_(b, v->double_val);
			break;
		case ETC_VALUE_TENSOR:
		case ETC_VALUE_TENSOR_LIST:
			etc_sbuf_puts(b, ", \"tensors\": [");
			for (uint32_t i = 0; i < v->tensor_count; i++) {
				etc_tensor t;
				ETC_TRY(etc_value_tensor(v, i, NULL, &t, err));
				if (i)
					etc_sbuf_puts(b, ", ");
				tensor_desc_json(b, &t);
			}
			etc_sbuf_puts(b, "]");
			break;
		}
		etc_sbuf_puts(b, "}}}");
	} else {
		etc_sbuf_puts(b, "{}");
	}
	return 0;
}

int etc_report_json(FILE *f, const etc_inspector *insp, const etc_report_options *opt,
                    etc_error *err)
{
	if (!f || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_report_json: NULL %s",
		                !f ? "out" : "insp");
	etc_report_options o;
	if (!opt)
		etc_report_options_init(&o), opt = &o;
	const etc_etdump *dump = etc_inspector_etdump(insp);
	const etc_debug_buffer *buf = etc_inspector_debug_buffer(insp);
	const etc_inspector_options *io = etc_inspector_options_get(insp);
	etc_sbuf b = {0};
	etc_summary_cache cache;
	etc_summary_cache_init_(&cache);
	int rc = 0;

	etc_sbuf_printf(&b, "{\n  \"tool\": \"etcompare\",\n  \"version\": \"%s\",\n",
	                etc_version());
	etc_sbuf_puts(&b, "  \"etdump\": {\"path\": ");
	etc_sbuf_json_str(&b, etc_etdump_name(dump), strlen(etc_etdump_name(dump)));
	etc_sbuf_printf(&b,
	                ", \"size_prefixed\": %s, \"version\": %u, \"run_count\": %u, "
	                "\"event_count\": %llu},\n",
	                etc_etdump_size_prefixed(dump) ? "true" : "false", etc_etdump_version(dump),
	                etc_etdump_run_count(dump),
	                (unsigned long long)etc_etdump_event_total(dump));
	etc_sbuf_puts(&b, "  \"debug_buffer\": ");
	if (buf) {
		etc_sbuf_puts(&b, "{\"path\": ");
		etc_sbuf_json_str(&b, etc_debug_buffer_name(buf),
		                  strlen(etc_debug_buffer_name(buf)));
		etc_sbuf_printf(&b, ", \"size\": %llu},\n",
		                (unsigned long long)etc_debug_buffer_size(buf));
	} else {
		etc_sbuf_puts(&b, "null,\n");
	}
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	etc_sbuf_puts(&b, "  \"etrecord\": ");
	if (rec) {
		const char *gid = etc_etrecord_export_graph_id(rec);
		etc_sbuf_puts(&b, "{\"path\": ");
		etc_sbuf_json_str(&b, etc_etrecord_name(rec), strlen(etc_etrecord_name(rec)));
		etc_sbuf_puts(&b, ", \"method\": ");
		const char *m = etc_inspector_etrecord_method(insp);
		etc_sbuf_json_str(&b, m, strlen(m));
		etc_sbuf_puts(&b, ", \"methods\": [");
		for (size_t i = 0; i < etc_etrecord_method_count(rec); i++) {
			const char *mi = etc_etrecord_method(rec, i);
			etc_sbuf_puts(&b, i ? ", " : "");
			etc_sbuf_json_str(&b, mi, strlen(mi));
		}
		etc_sbuf_printf(&b, "], \"single_program_layout\": %s, \"export_graph_id\": ",
		                etc_etrecord_is_legacy(rec) ? "true" : "false");
		if (gid)
			etc_sbuf_json_str(&b, gid, strlen(gid));
		else
			etc_sbuf_puts(&b, "null");
		etc_sbuf_puts(&b, "},\n");
	} else {
		etc_sbuf_puts(&b, "null,\n");
	}
	etc_sbuf_printf(&b, "  \"source_time_scale\": \"%s\",\n  \"target_time_scale\": \"%s\",\n",
	                etc_time_scale_name(io->source_time_scale),
	                etc_time_scale_name(io->target_time_scale));
	etc_sbuf_puts(&b, "  \"warnings\": [");
	for (size_t i = 0; i < etc_inspector_warning_count(insp); i++) {
		const char *w = etc_inspector_warning(insp, i);
		etc_sbuf_puts(&b, i ? ",\n    " : "\n    ");
		etc_sbuf_json_str(&b, w, strlen(w));
	}
	etc_sbuf_puts(&b, "],\n  \"blocks\": [");
	flush(f, &b);

	for (size_t bi = 0; bi < etc_inspector_block_count(insp) && rc == 0; bi++) {
		const etc_event_block *blk = etc_inspector_block(insp, bi);
		etc_sbuf_puts(&b, bi ? ",\n    {\"name\": " : "\n    {\"name\": ");
		jstr(&b, blk->name);
		if (blk->bundled_input_index >= 0)
			etc_sbuf_printf(&b, ", \"bundled_input_index\": %d",
			                blk->bundled_input_index);
		else
			etc_sbuf_puts(&b, ", \"bundled_input_index\": null");
		etc_sbuf_puts(&b, ", \"runs\": [");
		for (uint32_t r = 0; r < blk->run_count; r++)
			etc_sbuf_printf(&b, r ? ", %u" : "%u", blk->runs[r]);
		etc_sbuf_puts(&b, "],\n     \"events\": [");
		for (size_t e = 0; e < blk->event_count && rc == 0; e++) {
			etc_sbuf_puts(&b, e ? ",\n       " : "\n       ");
			rc = event_json(&b, &blk->events[e], e, buf, opt->max_values, &cache, err);
			flush(f, &b);
		}
		etc_sbuf_puts(&b, "],\n     \"program_outputs\": [");
		for (uint32_t r = 0; r < blk->run_count && rc == 0; r++) {
			etc_sbuf_printf(&b, "%s{\"run\": %u, \"etdump_run\": %u, \"outputs\": [",
			                r ? ", " : "", r, blk->runs[r]);
			for (uint32_t k = blk->output_start[r];
			     k < blk->output_start[r + 1] && rc == 0; k++) {
				if (k > blk->output_start[r])
					etc_sbuf_puts(&b, ", ");
				rc = etc_value_json_(&b, &blk->outputs[k], buf, opt->max_values,
				                     &cache, err);
			}
			etc_sbuf_puts(&b, "]}");
		}
		etc_sbuf_puts(&b, "],\n     \"allocators\": [");
		for (uint32_t r = 0; r < blk->run_count; r++) {
			etc_sbuf_printf(&b, "%s{\"run\": %u, \"etdump_run\": %u, \"allocators\": [",
			                r ? ", " : "", r, blk->runs[r]);
			for (uint32_t k = blk->alloc_start[r]; k < blk->alloc_start[r + 1]; k++) {
				const etc_allocator_usage *u = &blk->allocators[k];
				etc_sbuf_puts(&b, k > blk->alloc_start[r] ? ", {\"name\": "
				                                          : "{\"name\": ");
				jstr(&b, u->name);
				etc_sbuf_printf(&b, ", \"count\": %llu, \"bytes\": %llu}",
				                (unsigned long long)u->count,
				                (unsigned long long)u->bytes);
			}
			etc_sbuf_puts(&b, "]}");
		}
		etc_sbuf_puts(&b, "]}");
		flush(f, &b);
	}
	etc_sbuf_puts(&b, "\n  ],\n  \"accuracy\": ");
	if (opt->accuracy)
		etc_accuracy_json_(&b, opt->accuracy, insp);
	else
		etc_sbuf_puts(&b, "null");
	etc_sbuf_puts(&b, ",\n  \"numeric_gap\": ");
	if (opt->numgap)
		etc_numgap_json_(&b, opt->numgap);
	else
		etc_sbuf_puts(&b, "null");
	if (opt->numgap_run_count) {
		/* every run the gap compared, in brief; "numeric_gap" is the one shown */
		etc_sbuf_puts(&b, ",\n  \"numeric_gap_runs\": [");
		for (size_t i = 0; i < opt->numgap_run_count; i++) {
			const etc_numgap_run_summary *r = &opt->numgap_runs[i];
			etc_sbuf_puts(&b, i ? ",\n    {\"block\": " : "\n    {\"block\": ");
			etc_sbuf_json_str(&b, r->block, strlen(r->block));
			etc_sbuf_printf(&b,
			                ", \"run\": %u, \"etdump_run\": %u, \"compared\": %zu, "
			                "\"failures\": %zu, \"first_divergence\": ",
			                r->run, r->etdump_run, r->compared, r->failures);
			if (r->first < 0) {
				etc_sbuf_puts(&b, "null}");
				continue;
			}
			etc_sbuf_printf(&b, "{\"row\": %ld, \"op\": ", r->first);
			etc_sbuf_json_str(&b, r->op, strlen(r->op));
			etc_sbuf_puts(&b, ", \"snr_db\": ");
			if (isnan(r->snr))
				etc_sbuf_puts(&b, "null");
			else
				etc_json_num_(&b, r->snr);
			etc_sbuf_puts(&b, ", \"reason\": ");
			etc_sbuf_json_str(&b, r->reason, strlen(r->reason));
			etc_sbuf_puts(&b, "}}");
		}
		etc_sbuf_puts(&b, "\n  ]");
	}
	if (opt->numgap_more_count) {
		etc_sbuf_puts(&b, ",\n  \"numeric_gap_more\": [");
		for (size_t i = 0; i < opt->numgap_more_count; i++) {
			etc_sbuf_puts(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
			const char *nm = opt->numgap_more_names ? opt->numgap_more_names[i] : "";
			etc_sbuf_json_str(&b, nm, strlen(nm));
			etc_sbuf_puts(&b, ", \"numeric_gap\": ");
			etc_numgap_json_(&b, opt->numgap_more[i]);
			etc_sbuf_puts(&b, "}");
			flush(f, &b);
		}
		etc_sbuf_puts(&b, "]");
	}
	if (opt->taps) {
		etc_sbuf_puts(&b, ",\n  \"taps\": ");
		etc_taps_json_(&b, opt->taps);
	}
	if (opt->numgap_dist) {
		etc_sbuf_puts(&b, ",\n  \"numeric_gap_distribution\": ");
		etc_numgap_dist_json_(&b, opt->numgap_dist);
	}

	if (opt->profile) {
		etc_sbuf_puts(&b, ",\n  \"profile\": ");
		etc_profile_json_(&b, opt->profile, opt->profile_tables);
	}
	if (opt->perfdiff) {
		etc_sbuf_puts(&b, ",\n  \"perf_diff\": ");
		etc_perfdiff_json_(&b, opt->perfdiff);
	}
	etc_sbuf_puts(&b, ",\n  \"runs\": [");
	for (uint32_t r = 0; r < etc_etdump_run_count(dump) && rc == 0; r++) {
		etc_run run;
		etc_etdump_run(dump, r, &run);
		etc_sbuf_puts(&b, r ? ",\n    {\"name\": " : "\n    {\"name\": ");
		jstr(&b, run.name);
		etc_sbuf_printf(&b, ", \"bundled_input_index\": %d, \"allocators\": [",
		                run.bundled_input_index);
		for (uint32_t a = 0; a < run.allocator_count; a++) {
			if (a)
				etc_sbuf_puts(&b, ", ");
			jstr(&b, etc_etdump_allocator(dump, r, a));
		}
		etc_sbuf_puts(&b, "],\n     \"events\": [");
		for (uint32_t e = 0; e < run.event_count && rc == 0; e++) {
			etc_event ev;
			etc_etdump_event(dump, r, e, &ev);
			etc_sbuf_puts(&b, e ? ",\n       " : "\n       ");
			rc = raw_event_json(&b, &ev, err);
			flush(f, &b);
		}
		etc_sbuf_puts(&b, "]}");
	}
	etc_sbuf_puts(&b, "\n  ]\n}\n");
	flush(f, &b);
	if (rc == 0 && b.failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory writing JSON");
	etc_sbuf_free(&b);
	if (rc == 0 && ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the JSON report");
	return rc;
}
