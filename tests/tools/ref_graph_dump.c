/*
 * ref_graph_dump.c - one graph of an ETRecord run by the reference
 * executor, every node output written to an .npz (tests/test_ref_graph.py):
 *
 *   ref_graph_dump ETRECORD [--inputs FILE.npz | --representative N]
 *                  [--dtype float32] [--graph NAME] [--method NAME] [--eval] OUT.npz
 *
 * Inputs: the .npz's arrays "0", "1", ..., the record's representative
 * inputs N, or else the record's example inputs. Each computed output is stored under its graph
 * name ("getitem_3";
 * "<node>.<i>" for an unnamed item); with --eval also under "<name>@eval",
 * computed again by etc_refrun_eval with every tensor input replaced by a
 * copy of itself; the graph's outputs also as "output.<k>". One line per node
 * on stdout: "name<TAB>op<TAB>status<TAB>why<TAB>output names (comma-separated)<TAB>
 * the record's source line of the node ("-" when the node is not linked)",
 * after a first line "# GRAPH METHOD".
 * Exit 0, or 1 with one line on stderr.
 */
#include "etcompare/reference.h"
#include "npz_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"computed", "unsupported", "skipped", "failed"};

typedef struct dump {
	const etc_refgraph *g;
	npz_out *z;
	bool eval;
} dump;

static int put(dump *d, const char *node, const char *name, uint32_t i, const char *suffix,
               const etc_reftensor *t, etc_error *err)
{
	char key[600];
	if (name[0])
		snprintf(key, sizeof key, "%s%s", name, suffix);
	else
		snprintf(key, sizeof key, "%s.%u%s", node, i, suffix);
	if (npz_out_add(d->z, key, t) < 0) {
		snprintf(err->message, sizeof err->message, "cannot write %s", key);
		return ETC_ERR_IO;
	}
	return 0;
}

static int on_node(void *user, const etc_refrun *run, size_t node, etc_error *err)
{
	dump *d = user;
	const etc_refnode *n = etc_refgraph_node(d->g, node);
	const char *why;
	int st = etc_refrun_status(run, node, &why);
	printf("%s\t%s\t%s\t%s\t", n->name, n->op, st >= 0 && st < 4 ? status_names[st] : "?", why);
	for (uint32_t i = 0; i < n->output_count; i++)
		printf("%s%s", i ? "," : "", n->output_names[i]);
	printf("\t%s\n", n->graph_node ? n->graph_node->source_line : "-");
	if (st != ETC_REFNODE_COMPUTED)
		return 0;
	for (uint32_t i = 0; i < n->output_count; i++) {
		const etc_reftensor *t = etc_refrun_output(run, node, i);
		if (!t) {
			snprintf(err->message, sizeof err->message, "node %s: output %u unreadable",
			         n->name, i);
			return ETC_ERR_USAGE;
		}
		int rc = put(d, n->name, n->output_names[i], i, "", t, err);
		for (size_t k = 0; rc == 0 && k < etc_refgraph_output_count(d->g); k++) {
			size_t on;
			uint32_t oi;
			char key[32];
			if (etc_refgraph_output(d->g, k, &on, &oi) == 0 && on == node && oi == i) {
				snprintf(key, sizeof key, "output.%zu", k);
				rc = put(d, n->name, key, i, "", t, err);
			}
		}
		if (rc < 0)
			return rc;
	}
	if (!d->eval)
		return 0;
	const etc_refsrc *srcs;
	size_t ns = etc_refgraph_node_inputs(d->g, node, &srcs);
	const etc_reftensor **repl = calloc(ns ? ns : 1, sizeof *repl);
	if (!repl)
		return ETC_ERR_NOMEM;
	for (size_t k = 0; k < ns; k++)
		if (srcs[k].kind == ETC_REFSRC_NODE)
			repl[k] = etc_refrun_output(run, srcs[k].index, srcs[k].output);
	etc_refvalues *v;
	int rc = etc_refrun_eval(run, node, repl, &v, err);
	free(repl);
	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < etc_refvalues_count(v); i++)
		rc = put(d, n->name, n->output_names[i], (uint32_t)i, "@eval",
		         etc_refvalues_get(v, i), err);
	etc_refvalues_free(v);
	return rc;
}

int main(int argc, char **argv)
{
	const char *rec_path = NULL, *inputs = NULL, *out = NULL;
	long repr = -1;
	etc_refgraph_options opt;
	etc_refgraph_options_init(&opt);
	dump d = {0};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--inputs") == 0 && i + 1 < argc)
			inputs = argv[++i];
		else if (strcmp(argv[i], "--representative") == 0 && i + 1 < argc)
			repr = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--dtype") == 0 && i + 1 < argc)
			opt.dtype =
			    strcmp(argv[++i], "float32") == 0 ? ETC_REF_FLOAT32 : ETC_REF_FLOAT64;
		else if (strcmp(argv[i], "--graph") == 0 && i + 1 < argc)
			opt.graph = argv[++i];
		else if (strcmp(argv[i], "--method") == 0 && i + 1 < argc)
			opt.method = argv[++i];
		else if (strcmp(argv[i], "--eval") == 0)
			d.eval = true;
		else if (!rec_path)
			rec_path = argv[i];
		else if (!out)
			out = argv[i];
		else
			rec_path = NULL, i = argc;
	}
	if (!rec_path || !out) {
		fprintf(stderr, "usage: ref_graph_dump ETRECORD [--inputs FILE.npz | "
		                "--representative N] [--dtype "
		                "float32] [--graph NAME] [--method NAME] [--eval] OUT.npz\n");
		return 2;
	}
	etc_error err = {0};
	etc_etrecord *rec = NULL;
	etc_refgraph *g = NULL;
	etc_refinputs *in = NULL;
	etc_npz *npz = NULL;
	int rc = etc_etrecord_open(&rec, rec_path, &err);
	if (rc == 0)
		rc = etc_refgraph_load(&g, rec, &opt, &err);
	if (rc == 0 && inputs) {
		rc = etc_npz_open(&npz, inputs, &err);
		if (rc == 0)
			rc = etc_refinputs_from_npz(&in, g, npz, &err);
	} else if (rc == 0 && repr >= 0) {
		rc = etc_refinputs_from_record(&in, g, rec, "representative_inputs", (size_t)repr,
		                               &err);
	} else if (rc == 0) {
		rc = etc_refinputs_from_record(&in, g, rec, "example_inputs", 0, &err);
	}
	if (rc == 0) {
		printf("# %s %s\n", etc_refgraph_name(g), etc_refgraph_method(g));
		d.g = g;
		d.z = npz_out_open(out);
		if (!d.z) {
			snprintf(err.message, sizeof err.message, "%s: cannot create the file",
			         out);
			rc = ETC_ERR_IO;
		}
	}
	if (rc == 0) {
		rc = etc_refgraph_run(g, etc_refinputs_tensors(in), etc_refinputs_count(in),
		                      on_node, &d, &err);
		if (npz_out_close(d.z) < 0 && rc == 0) {
			snprintf(err.message, sizeof err.message, "%s: write error", out);
			rc = ETC_ERR_IO;
		}
	}
	etc_refinputs_free(in);
	etc_npz_free(npz);
	etc_refgraph_free(g);
	etc_etrecord_free(rec);
	if (rc < 0) {
		fprintf(stderr, "%s\n", err.message[0] ? err.message : "failed");
		return 1;
	}
	return 0;
}
