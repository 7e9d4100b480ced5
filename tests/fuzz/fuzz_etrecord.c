/*
 * fuzz_etrecord.c - the ETRecord reader: the zip archive, the JSON members
 * (Edge programs, debug handle and delegate maps), the reference outputs
 * (torch.save archives inside the zip), and linking the record to the
 * bundled example ETDump as --etrecord does.
 *
 * The graph, the references, the accuracy table (terminal) and the accuracy
 * JUnit are checked for well-formedness (fuzz_outputs.h).
 *
 * Input: the ETRecord's bytes.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_refs.h"
#include "fuzz.h"

#include <etcompare/etcompare.h>

static void read_methods(etc_etrecord *rec)
{
	(void)etc_etrecord_is_legacy(rec);
	(void)etc_etrecord_export_graph_id(rec);
	(void)etc_etrecord_default_method(rec);
	for (size_t i = 0; i < etc_etrecord_warning_count(rec); i++)
		(void)etc_etrecord_warning(rec, i);
	for (size_t m = 0; m < etc_etrecord_method_count(rec); m++) {
		const char *name = etc_etrecord_method(rec, m);
		(void)etc_etrecord_method_index(rec, name);
		(void)etc_etrecord_has_program(rec, m);
		(void)etc_etrecord_has_handle_map(rec, m);
		for (size_t i = 0; i < etc_etrecord_node_count(rec, m); i++) {
			const etc_graph_node *n = etc_etrecord_node(rec, m, i);
			const etc_graph_node *const *same;
			if (n && n->debug_handle >= 0)
				(void)etc_etrecord_nodes_for_handle(rec, m, n->debug_handle, &same);
		}
		for (int32_t id = -1; id < 64; id++) {
			const int64_t *handles;
			bool found;
			(void)etc_etrecord_debug_handles(rec, m, id, &handles, &found);
			(void)etc_etrecord_delegate(rec, m, id);
			(void)etc_etrecord_num_outputs(rec, m, id);
		}
		const etc_pytensor *refs[16];
		size_t count;
		etc_error err;
		for (size_t k = 0; k < 4; k++)
			if (etc_etrecord_reference(rec, name, k, refs, 16, &count, &err) < 0)
				break;
	}
	for (size_t g = 0; g < etc_etrecord_graph_count(rec); g++) {
		const etc_graph_node *nodes;
		size_t count;
		etc_error err;
		(void)etc_etrecord_graph_nodes(rec, etc_etrecord_graph_name(rec, g), &nodes, &count,
		                               &err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_copy(data, size);
	if (!copy)
		return 0;
	etc_error err;
	etc_etrecord *rec = NULL;
	etc_etdump *dump = NULL;
	etc_debug_buffer *buf = NULL;
	etc_inspector *insp = NULL;
	if (etc_etrecord_wrap(&rec, copy, size, "fuzz.etrecord", &err) < 0) {
		fuzz_check_terminal(err.message, strlen(err.message));
		goto done;
	}
	read_methods(rec);
	FILE *sink = fuzz_sink();
	etc_report_options ro;
	etc_report_options_init(&ro);
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		(void)etc_report_references(t.f, rec, &ro, &err);
		if (etc_report_graph(t.f, rec, NULL, &err) < 0)
			fprintf(t.f, "%s\n", err.message);
		for (size_t i = 0; i < etc_etrecord_graph_count(rec); i++)
			(void)etc_report_graph(t.f, rec, etc_etrecord_graph_name(rec, i), &err);
		for (size_t i = 0; i < etc_etrecord_warning_count(rec); i++) {
			char safe[1024];
			fprintf(t.f, "%s\n",
			        etc_text_safe(safe, sizeof safe, etc_etrecord_warning(rec, i)));
		}
		fuzz_text_close(&t);
		fuzz_check_terminal(t.p, t.n);
		free(t.p);
	}
	if (fuzz_example_inspector(&dump, &buf, &insp, &err) < 0)
		goto done;
	if (etc_inspector_link(insp, rec, NULL, &err) == 0) {
		(void)etc_report_json(sink, insp, &ro, &err);
		size_t count;
		(void)etc_inspector_module_total(insp, "", &count);
		if (etc_etrecord_reference_outputs(rec)) {
			etc_reference_set set = {.torchsave = etc_etrecord_reference_outputs(rec),
			                         .name = "fuzz.etrecord"};
			etc_accuracy_options ao;
			etc_accuracy_options_init(&ao);
			etc_accuracy *acc = NULL;
			if (etc_accuracy_run(&acc, insp, &set, &ao, &err) == 0)
				fuzz_check_accuracy_reports(acc, insp);
			etc_accuracy_free(acc);
		}
	}
done:
	etc_inspector_free(insp);
	etc_debug_buffer_free(buf);
	etc_etdump_free(dump);
	etc_etrecord_free(rec);
	free(copy);
	return 0;
}
