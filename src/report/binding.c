/*
 * binding.c - helpers for language bindings (etcompare/binding.h): struct
 * sizes for layout checks, and the numeric gap's JSON on its own.
 */
#include "core/internal.h"
#include "report/report_private.h"

#include <etcompare/binding.h>
#include <etcompare/report.h>

#include <string.h>

typedef struct struct_size {
	const char *name;
	size_t size;
} struct_size;

size_t etc_struct_size(const char *name)
{
	static const struct_size sizes[] = {
	    {"error", sizeof(etc_error)},
	    {"str", sizeof(etc_str)},
	    {"run", sizeof(etc_run)},
	    {"value", sizeof(etc_value)},
	    {"tensor", sizeof(etc_tensor)},
	    {"pytensor", sizeof(etc_pytensor)},
	    {"inspector_options", sizeof(etc_inspector_options)},
	    {"perf_stats", sizeof(etc_perf_stats)},
	    {"inspector_event", sizeof(etc_inspector_event)},
	    {"allocator_usage", sizeof(etc_allocator_usage)},
	    {"event_block", sizeof(etc_event_block)},
	    {"module_frame", sizeof(etc_module_frame)},
	    {"graph_arg", sizeof(etc_graph_arg)},
	    {"graph_node", sizeof(etc_graph_node)},
	    {"values", sizeof(etc_values)},
	    {"metrics", sizeof(etc_metrics)},
	    {"reference_set", sizeof(etc_reference_set)},
	    {"accuracy_options", sizeof(etc_accuracy_options)},
	    {"accuracy_row", sizeof(etc_accuracy_row)},
	    {"numgap_reference", sizeof(etc_numgap_reference)},
	    {"numgap_options", sizeof(etc_numgap_options)},
	    {"report_options", sizeof(etc_report_options)},
	    {"refgraph_options", sizeof(etc_refgraph_options)},
	    {"reftensor", sizeof(etc_reftensor)},
	    {"plot_options", sizeof(etc_plot_options)},
	    {"plot_result", sizeof(etc_plot_result)},
	    {"plot_item", sizeof(etc_plot_item)},
	};
	for (size_t i = 0; name && i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(sizes[i].name, name))
			return sizes[i].size;
	return 0;
}

int etc_report_numgap_json(FILE *f, const etc_numgap *ng, etc_error *err)
{
	if (!f || !ng)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_report_numgap_json: NULL argument");
	etc_sbuf b = {0};
	etc_numgap_json_(&b, ng);
	etc_sbuf_puts(&b, "\n");
	int rc = 0;
	if (b.failed)
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	else if (fwrite(b.p ? b.p : "", 1, b.len, f) != b.len || ferror(f))
		rc = etc_fail(err, ETC_ERR_IO, NULL, -1, "cannot write the numeric gap JSON");
	etc_sbuf_free(&b);
	return rc;
}
