/*
 * etcompare/binding.h - what a binding in another language (the Python
 * package in python/etcompare) needs beyond the C API: the sizes of the
 * public structs, so that a binding mirroring them can check its layout and
 * step through the library's arrays with the library's own stride; and the
 * numeric gap alone as JSON, so that it reads every column the library
 * provides without mirroring etc_numgap_row.
 */
#ifndef ETCOMPARE_BINDING_H
#define ETCOMPARE_BINDING_H

#include "common.h"
#include "numgap.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sizeof the public struct called `name` without its "etc_" prefix
 * ("inspector_event", "event_block", "value", "tensor", "graph_arg", "graph_node",
 * "module_frame", "error", "metrics", "numgap_options", "accuracy_options",
 * "accuracy_row", "reference_set", "numgap_reference", "inspector_options",
 * "report_options", "pytensor", "run", "values", "plot_options", "plot_result",
 * "plot_item", ...), or 0 for an unknown name.
 */
ETC_API size_t etc_struct_size(const char *name);

/**
 * The numeric gap as one JSON object: the "numeric_gap" member of the full
 * report (schema/etcompare-report.schema.json): alignment, block,
 * thresholds, counts, first_divergence, rows and unmatched items.
 */
ETC_API int etc_report_numgap_json(FILE *out, const etc_numgap *ng, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
