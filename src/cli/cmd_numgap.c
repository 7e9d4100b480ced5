/*
 * cmd_numgap.c - the numeric gap command of the CLI (see cmd_numgap.h): a
 * thin client of etcompare/numgap.h and the report writers.
 */
#include "cmd_numgap.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool numgap_wanted(const numgap_args *a)
{
	return a->reference_etdump || a->reference_intermediates;
}

bool numgap_graph_asked(const numgap_args *a)
{
	return !numgap_wanted(a) && !a->no_reference_run &&
	       (a->reference_graph || a->reference_dtype || a->inputs || a->tsv);
}

bool numgap_graph_mode(const numgap_args *a, bool have_etrecord, bool have_debug_buffer)
{
	return !numgap_wanted(a) && !a->no_reference_run && have_etrecord && have_debug_buffer;
}

int numgap_check_args(const numgap_args *a, bool have_etdump)
{
	if (a->reference_etdump && a->reference_intermediates)
		return usage_error("%s", "--reference-etdump and --reference-intermediates cannot "
		                         "be combined");
	if ((a->reference_debug_buffer || a->reference_etrecord) && !a->reference_etdump)
		return usage_error("%s", "--reference-debug-buffer and --reference-etrecord need "
		                         "--reference-etdump");
	if (a->reference_etdump && !a->reference_debug_buffer)
		return usage_error("%s", "--reference-etdump needs --reference-debug-buffer (the "
		                         "reference's intermediate outputs)");
	if ((a->distance || a->quant_params || a->layout || a->run) && a->no_reference_run &&
	    !numgap_wanted(a))
		return usage_error("%s",
		                   "--distance, --quant-params, --layout and --run belong to "
		                   "the numeric gap, which --no-reference-run turns off: give "
		                   "--reference-etdump or --reference-intermediates");
	if ((a->reference_graph || a->reference_dtype || a->inputs) && a->no_reference_run)
		return usage_error("%s",
		                   "--reference-graph, --reference-dtype and --inputs belong "
		                   "to the reference run, which --no-reference-run turns off");
	if (a->reference_dtype && strcmp(a->reference_dtype, "float64") &&
	    strcmp(a->reference_dtype, "float32"))
		return usage_error("--reference-dtype %s: expected float64 or float32",
		                   a->reference_dtype);
	int d;
	if (a->distance && etc_numgap_distance_parse(a->distance, &d) < 0)
		return usage_error("--distance %s: expected mse, l1 or snr", a->distance);
	if (a->layout && strcmp(a->layout, "auto") && strcmp(a->layout, "none"))
		return usage_error("--layout %s: expected auto or none", a->layout);
	if (a->tsv && !numgap_wanted(a) && a->no_reference_run)
		return usage_error("%s", "--numgap-tsv needs a reference: the ETRecord's graph "
		                         "(without --no-reference-run), --reference-etdump or "
		                         "--reference-intermediates");
	if ((numgap_wanted(a) || numgap_graph_asked(a)) && !have_etdump)
		return usage_error("%s", "the numeric gap needs --etdump and --debug_buffer");
	return 0;
}

static int open_reference(const numgap_args *a, const etc_etrecord *rec,
                          const etc_inspector_options *io, numgap_state *st,
                          etc_numgap_reference *ref)
{
	etc_error err;
	etc_error_clear(&err);
	if (a->reference_intermediates) {
		/* already open: the bundled example's, compiled in */
		if (!st->npz) {
			if (etc_npz_open(&st->npz, a->reference_intermediates, &err) < 0)
				return input_error(&err);
			cli_warning(etc_npz_warning(st->npz));
		}
		ref->npz = st->npz;
		ref->name = a->reference_intermediates;
		return 0;
	}
	if (etc_etdump_open(&st->dump, a->reference_etdump, &err) < 0 ||
	    etc_debug_buffer_open(&st->buf, a->reference_debug_buffer, &err) < 0)
		return input_error(&err);
	if (a->max_inflate)
		etc_debug_buffer_set_max_inflate(st->buf, a->max_inflate, NULL); /* checked */
	int rc = etc_inspector_create(&st->insp, st->dump, st->buf, io, &err);
	if (rc < 0)
		return rc == ETC_ERR_USAGE ? usage_error("%s", err.message) : input_error(&err);
	if (a->reference_etrecord) {
		if (etc_etrecord_open(&st->rec, a->reference_etrecord, &err) < 0)
			return input_error(&err);
		for (size_t i = 0; i < etc_etrecord_warning_count(st->rec); i++)
			cli_warning(etc_etrecord_warning(st->rec, i));
		rec = st->rec;
	}
	/* the runtime's ETRecord keys the reference too, unless it has its own */
	if (rec && (rc = etc_inspector_link(st->insp, rec, a->method, &err)) < 0)
		return input_error(&err);
	ref->insp = st->insp;
	ref->name = a->reference_etdump;
	return 0;
}

/* --- the reference graph ---------------------------------------------------------------- */

/* "(give --inputs ...)" */
#define INPUTS_HINT                                                                                \
	"give --inputs FILE (an .npz with arrays \"0\", \"1\", ... in the graph's input order, "   \
	"or a torch.save list of tensors)"

/* The graph could not run: an error when it was asked for, else a note and no gap. */
static int graph_unavailable(const numgap_args *a, int status, const char *msg)
{
	char safe[1024];
	etc_text_safe(safe, sizeof safe, msg);
	if (numgap_graph_asked(a)) {
		fprintf(stderr, "etcompare: error: the numeric gap from the ETRecord's graph: %s\n",
		        safe);
		return status == ETC_ERR_USAGE ? EXIT_USAGE : EXIT_INPUT;
	}
	fprintf(stderr, "etcompare: note: no numeric gap from the ETRecord's graph: %s\n", safe);
	return 0;
}

/* --inputs FILE: an .npz, else a torch.save list. */
static int inputs_from_file(const numgap_args *a, numgap_state *st, etc_error *err)
{
	size_t n = strlen(a->inputs);
	int rc;
	etc_npz_free(st->inputs_npz);
	etc_torchsave_free(st->inputs_ts);
	st->inputs_npz = NULL;
	st->inputs_ts = NULL;
	if (n >= 4 && !strcmp(a->inputs + n - 4, ".npz")) {
		if ((rc = etc_npz_open(&st->inputs_npz, a->inputs, err)) < 0)
			return rc;
		if (!st->inputs_warned)
			cli_warning(etc_npz_warning(st->inputs_npz));
		st->inputs_warned = true;
		return etc_refinputs_from_npz(&st->inputs, st->graph, st->inputs_npz, err);
	}
	if ((rc = etc_torchsave_open(&st->inputs_ts, a->inputs, err)) < 0)
		return rc;
	if (!st->inputs_warned)
		cli_warning(etc_torchsave_warning(st->inputs_ts));
	st->inputs_warned = true;
	return etc_refinputs_from_torchsave(&st->inputs, st->graph, st->inputs_ts, err);
}

/* One candidate set of inputs: the record's (owned), or views of a .bpte test case. */
typedef struct candidate {
	etc_refinputs *in;
	etc_reftensor *views;
	size_t n;
	char name[80];
} candidate;

static void candidate_free(candidate *c)
{
	etc_refinputs_free(c->in);
	free(c->views);
	memset(c, 0, sizeof *c);
}

static const etc_reftensor *candidate_tensors(const candidate *c)
{
	return c->in ? etc_refinputs_tensors(c->in) : c->views;
}

static size_t candidate_count(const candidate *c)
{
	return c->in ? etc_refinputs_count(c->in) : c->n;
}

/* Test case `tc` of the BundledProgram's suite for the graph's method (1: no such case). */
static int bundled_candidate(const etc_bundled *bp, const etc_refgraph *g, size_t tc, candidate *c,
                             etc_error *err)
{
	long m = etc_bundled_method_find(bp, etc_refgraph_method(g));
	if (m < 0 || tc >= etc_bundled_test_case_count(bp, (size_t)m))
		return 1;
	size_t n = etc_bundled_value_count(bp, (size_t)m, tc, false);
	c->views = calloc(n ? n : 1, sizeof *c->views);
	if (!c->views) {
		etc_error_clear(err);
		err->status = ETC_ERR_NOMEM;
		snprintf(err->message, sizeof err->message, "out of memory");
		return ETC_ERR_NOMEM;
	}
	c->n = n;
	for (size_t i = 0; i < n; i++) {
		int rc = etc_bundled_tensor(bp, (size_t)m, tc, false, i, &c->views[i], err);
		if (rc < 0) {
			candidate_free(c);
			return rc;
		}
	}
	snprintf(c->name, sizeof c->name, "BundledProgram's test case %zu", tc);
	return 0;
}

/* Candidate k in the order tried: the .bpte's test cases, the record's
 * example inputs, its representative inputs. 1: past the last. */
static int next_candidate(const etc_bundled *bp, const etc_refgraph *g, const etc_etrecord *rec,
                          size_t k, candidate *c, etc_error *err)
{
	size_t nbp = 0;
	long m = bp ? etc_bundled_method_find(bp, etc_refgraph_method(g)) : -1;
	if (m >= 0)
		nbp = etc_bundled_test_case_count(bp, (size_t)m);
	if (k < nbp)
		return bundled_candidate(bp, g, k, c, err);
	k -= nbp;
	const char *which = k == 0 ? "example_inputs" : "representative_inputs";
	size_t index = k == 0 ? 0 : k - 1;
	if (k > 0 && !etc_etrecord_representative_inputs(rec))
		return 1;
	if (k > 64)
		return 1;
	int rc = etc_refinputs_from_record(&c->in, g, rec, which, index, err);
	if (rc == 0)
		snprintf(c->name, sizeof c->name, k ? "ETRecord's %s[%zu]" : "ETRecord's %s", which,
		         index);
	/* no example inputs, or none usable (an empty member, as torch writes for
	   a program without them; not a list of tensors): go on to the
	   representative ones; past the last of those: stop. Damage at a byte
	   of the record (a CRC, a cut member) is its damage: passed on. */
	if (rc < 0 && rc != ETC_ERR_NOMEM && k == 0 && err->offset >= 0)
		return rc;
	if (rc < 0 && rc != ETC_ERR_NOMEM)
		return k == 0 ? 2 : 1;
	return rc;
}

/* Candidate `c` scored on run `run` of block `block` (etc_numgap_inputs_match_at). */
static etc_numgap_match score_candidate(const etc_inspector *insp, size_t block, uint32_t run,
                                        const etc_refgraph *g, const candidate *c)
{
	etc_numgap_match m;
	etc_error e;
	etc_error_clear(&e);
	etc_numgap_inputs_match_at(insp, block, run, g, candidate_tensors(c), candidate_count(c),
	                           &m, &e);
	return m;
}

/*
 * The inputs of the run: --inputs; else its bundled_input_index's test case
 * (the .bpte's, else the record's representative_inputs); else the
 * candidates (the .bpte's test cases, the record's example and
 * representative inputs), the one whose reference run reproduces the most
 * of the run's logged intermediate outputs, then its program outputs best.
 * 1 when there are none (`why` says so).
 */
static int choose_inputs(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                         size_t block, uint32_t run, numgap_state *st, char *why, size_t cap,
                         etc_error *err)
{
	const etc_event_block *blk = etc_inspector_block(insp, block);
	int idx = blk ? blk->bundled_input_index : -1;
	st->by_candidates = false;
	st->chosen_snr = NAN;
	/* the user's own file wins over every default */
	if (a->inputs) {
		int rc = inputs_from_file(a, st, err);
		if (rc < 0 && err && err->message[0] && !strstr(err->message, a->inputs)) {
			/* the graph's complaint about an input names the file it came from */
			char safe[300], m[sizeof err->message];
			snprintf(m, sizeof m, "--inputs %s: %.700s",
			         etc_text_safe(safe, sizeof safe, a->inputs), err->message);
			memcpy(err->message, m, sizeof m);
		}
		return rc;
	}
	if (idx >= 0 && st->bundled) {
		candidate c;
		memset(&c, 0, sizeof c);
		int rc = bundled_candidate(st->bundled, st->graph, (size_t)idx, &c, err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			st->inputs_views = c.views;
			st->inputs_view_count = c.n;
			if (!st->quiet)
				fprintf(stderr,
				        "etcompare: note: reference run on the %s (the run's "
				        "bundled_input_index)\n",
				        c.name);
			return 0;
		}
	}
	if (idx >= 0 && etc_etrecord_representative_inputs(rec)) {
		int rc = etc_refinputs_from_record(&st->inputs, st->graph, rec,
		                                   "representative_inputs", (size_t)idx, err);
		if (rc < 0)
			return rc;
		if (!st->quiet)
			fprintf(stderr,
			        "etcompare: note: reference run on the ETRecord's "
			        "representative_inputs[%d] "
			        "(the run's bundled_input_index)\n",
			        idx);
		return 0;
	}
	candidate best, c;
	memset(&best, 0, sizeof best);
	etc_numgap_match best_score = {-1, NAN};
	size_t tried = 0;
	for (size_t k = 0;; k++) {
		memset(&c, 0, sizeof c);
		etc_error e2;
		etc_error_clear(&e2);
		int rc = next_candidate(st->bundled, st->graph, rec, k, &c, &e2);
		if (rc == ETC_ERR_NOMEM || (rc < 0 && !tried)) {
			*err = e2;
			candidate_free(&best);
			return rc;
		}
		if (rc == 2 || rc < 0)
			continue; /* no example inputs, or a test case that cannot be read */
		if (rc == 1)
			break;
		tried++;
		if (tried == 1) {
			best = c;
			continue;
		}
		/* a second candidate: score both */
		if (tried == 2)
			best_score = score_candidate(insp, block, run, st->graph, &best);
		etc_numgap_match sc = score_candidate(insp, block, run, st->graph, &c);
		if (etc_numgap_match_better(&sc, &best_score)) {
			candidate_free(&best);
			best = c;
			best_score = sc;
		} else {
			candidate_free(&c);
		}
	}
	if (!tried) {
		snprintf(
		    why, cap,
		    "no inputs for the run (no representative_inputs, no example inputs%s): %s",
		    st->bundled ? ", no test case of the BundledProgram" : "", INPUTS_HINT);
		return 1;
	}
	st->inputs = best.in;
	st->inputs_views = best.views;
	st->inputs_view_count = best.n;
	st->by_candidates = true;
	st->chosen_snr = tried > 1 ? best_score.snr : NAN;
	snprintf(st->chosen, sizeof st->chosen, "%s", best.name);
	/* a choice among several is worth a note; the only candidate is not */
	if (tried > 1 && !st->quiet)
		fprintf(stderr,
		        "etcompare: note: reference run on the %s: of %zu candidate inputs, it "
		        "reproduces the most of the run's intermediate outputs (%ld) and its "
		        "program outputs at SNR %.4g dB\n",
		        best.name, tried, best_score.reproduced, best_score.snr);
	return 0;
}

/* Whether the record has a graph to run: an exported program, or a
 * method's Edge program. */
static bool record_has_graph(const etc_etrecord *rec)
{
	if (etc_etrecord_has_member(rec, "exported_program"))
		return true;
	for (size_t m = 0; m < etc_etrecord_method_count(rec); m++)
		if (etc_etrecord_has_program(rec, m))
			return true;
	return false;
}

/*
 * Damage at a byte of the record (a CRC, a cut member) would let a gate pass
 * without its gap: under a threshold it is an error (said; true), while a
 * graph that cannot be run stays a note.
 */
static bool record_damaged(const numgap_args *a, const etc_error *err)
{
	bool gates = a->min_snr || a->max_mse || a->min_cosine || a->max_abs;
	if (numgap_graph_asked(a) || !gates || err->offset < 0)
		return false;
	char safe[1024];
	fprintf(stderr,
	        "etcompare: error: the numeric gap from the ETRecord's graph: %s; give the "
	        "ETRecord generate_etrecord wrote for this program, or --no-reference-run to "
	        "gate without the numeric gap\n",
	        etc_text_safe(safe, sizeof safe, err->message));
	return true;
}

/* Loads the ETRecord's graph (graph_inputs adds a run's inputs); 0 with st->graph NULL: no gap. */
static int open_graph(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                      numgap_state *st, etc_numgap_reference *ref)
{
	etc_error err;
	etc_error_clear(&err);
	if (!rec)
		return graph_unavailable(a, ETC_ERR_USAGE,
		                         "it needs --etrecord (the graph, its weights and inputs)");
	etc_refgraph_options go;
	etc_refgraph_options_init(&go);
	go.graph = a->reference_graph;
	go.method = a->method;
	go.dtype = a->reference_dtype && !strcmp(a->reference_dtype, "float32") ? ETC_REF_FLOAT32
	                                                                        : ETC_REF_FLOAT64;
	int rc = etc_refgraph_load(&st->graph, rec, &go, &err);
	if (rc < 0) {
		/* an unknown graph name is the user's */
		if (!numgap_graph_asked(a) && rc == ETC_ERR_UNSUPPORTED && !record_has_graph(rec))
			return 0; /* no graph in the record: nothing to say */
		if (rc != ETC_ERR_UNSUPPORTED && record_damaged(a, &err))
			return EXIT_INPUT;
		return graph_unavailable(a, ETC_ERR_FORMAT, /* a name not in the record: exit 3 */
		                         err.message);
	}
	(void)insp;
	ref->name = etc_etrecord_name(rec);
	return 0;
}

/* "...: run R of block B is not compared: WHY" on stderr. */
static void left_out_note(const etc_inspector *insp, size_t block, uint32_t run, const char *why)
{
	char lbl[128], s0[160];
	cli_block_label(insp, block, lbl, sizeof lbl);
	fprintf(stderr,
	        "etcompare: note: numeric gap: %s run %u (ETDump run %u) is not compared: %s\n",
	        etc_text_safe(s0, sizeof s0, lbl), run, etc_inspector_block(insp, block)->runs[run],
	        why);
}

/*
 * Whether run `run` of block `block` was made with other inputs than the
 * candidate chosen for it, whose reference run reproduces its program
 * outputs at `snr` dB: below 20 dB, as unrelated inputs do, while the
 * ETRecord's reference outputs of a test case match them at 20 dB or more
 * and at least 20 dB better. Says so in a note.
 */
static bool other_test_case(const numgap_args *a, const etc_inspector *insp,
                            const etc_etrecord *rec, size_t block, uint32_t run, double snr,
                            const numgap_state *st)
{
	double rec_snr = NAN;
	long k = -1;
	etc_error err;
	etc_error_clear(&err);
	if (isnan(snr) || !etc_etrecord_reference_outputs(rec) ||
	    etc_numgap_record_outputs_score_at(insp, block, run, rec, a->method, &rec_snr, &k,
	                                       &err) < 0 ||
	    k < 0 || !(snr < 20) || !(rec_snr >= 20) || !(rec_snr >= snr + 20))
		return false;
	char why[400];
	snprintf(why, sizeof why,
	         "its program outputs match the ETRecord's reference_outputs[%ld] (SNR %.4g dB), "
	         "but the reference run on the %s reproduces them at SNR %.4g dB: the run was "
	         "made with other inputs, which the ETRecord does not have; give them "
	         "(--bundled-program FILE.bpte, --inputs FILE)",
	         k, rec_snr, st->chosen, snr);
	left_out_note(insp, block, run, why);
	return true;
}

/* The inputs of run `run` of block `block` into ref (--inputs, which wins over every
 * default: read once, for every run). */
static int graph_inputs(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                        size_t block, uint32_t run, numgap_state *st, etc_numgap_reference *ref)
{
	etc_error err;
	etc_error_clear(&err);
	ref->graph = NULL;
	if (!a->inputs || !st->inputs) {
		etc_refinputs_free(st->inputs);
		free(st->inputs_views);
		st->inputs = NULL;
		st->inputs_views = NULL;
		st->inputs_view_count = 0;
		char why[600] = "";
		int rc = choose_inputs(a, insp, rec, block, run, st, why, sizeof why, &err);
		if (rc < 0 && record_damaged(a, &err))
			return EXIT_INPUT;
		if (rc < 0)
			return graph_unavailable(a, rc, err.message);
		if (rc > 0)
			return graph_unavailable(a, ETC_ERR_FORMAT, why);
	}
	const etc_reftensor *in = st->inputs ? etc_refinputs_tensors(st->inputs) : st->inputs_views;
	size_t nin = st->inputs ? etc_refinputs_count(st->inputs) : st->inputs_view_count;
	ref->graph = st->graph;
	ref->inputs = in;
	ref->input_count = nin;
	return 0;
}

/*
 * Inputs guessed among candidates (no index, no --inputs) may not be the
 * run's: a run of a test case whose inputs the record lacks would show a
 * made-up divergence at the first op. After its gap (which scored how well
 * the reference run reproduces the run's program outputs, `snr`), left out
 * with a note are a run that the chosen inputs do not reproduce (below 20
 * dB) while the ETRecord's own reference outputs of some test case do (the
 * device computed that test case: other_test_case), and, among several
 * runs, one the chosen inputs reproduce far worse than the first compared
 * run (20 dB below it, counted at most 80 dB). True: left out.
 */
static bool left_out(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
                     size_t block, uint32_t run, bool many, double snr, numgap_state *st)
{
	if (!st->by_candidates)
		return false;
	if (!isnan(st->chosen_snr))
		snr = st->chosen_snr;
	if (other_test_case(a, insp, rec, block, run, snr, st))
		return true;
	if (many && !st->have_first_score) {
		st->first_score = snr;
		st->have_first_score = true;
	} else if (many && !isnan(st->first_score) &&
	           (isnan(snr) || snr < (st->first_score < 80 ? st->first_score : 80) - 20)) {
		char why[400];
		snprintf(why, sizeof why,
		         "none of the candidate inputs reproduces its program outputs (the best, "
		         "the %s: SNR %.4g dB; the first run's %.4g dB): give its inputs (--inputs "
		         "FILE, --bundled-program FILE.bpte)",
		         st->chosen, snr, st->first_score);
		left_out_note(insp, block, run, why);
		return true;
	}
	return false;
}

int numgap_write_tsv(const char *path, const etc_numgap *ng)
{
	etc_error err;
	etc_output *o = NULL;
	etc_error_clear(&err);
	int rc = etc_output_open(&o, path, &err);
	if (rc == 0 && (rc = etc_report_numgap_tsv(etc_output_stream(o), ng, &err)) < 0)
		etc_output_abort(o);
	else if (rc == 0)
		rc = etc_output_commit(o, &err);
	if (rc < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return EXIT_OUTPUT;
	}
	return EXIT_OK;
}

/* One (block, run) the gap compares. */
typedef struct gap_run {
	size_t block;
	uint32_t run;
} gap_run;

/*
 * One --inputs file for runs of different bundled inputs would fit one of
 * them at most, and the others' gaps would be made up: run k is refused
 * (the message printed) when its bundled_input_index is not run 0's.
 */
static bool inputs_misfit(const etc_inspector *insp, const gap_run *runs, size_t k)
{
	int i0 = etc_inspector_block(insp, runs[0].block)->bundled_input_index;
	int ik = etc_inspector_block(insp, runs[k].block)->bundled_input_index;
	if (i0 == ik || i0 < 0 || ik < 0)
		return false;
	char l0[128], lk[128], s0[160], sk[160];
	cli_block_label(insp, runs[0].block, l0, sizeof l0);
	cli_block_label(insp, runs[k].block, lk, sizeof lk);
	fprintf(stderr,
	        "etcompare: error: the numeric gap from the ETRecord's graph: --inputs gives "
	        "one set of inputs, but the runs compared ran different bundled inputs (%s: "
	        "bundled_input_index %d, %s: %d): give --block NAME to compare the runs of the "
	        "file's inputs\n",
	        etc_text_safe(s0, sizeof s0, l0), i0, etc_text_safe(sk, sizeof sk, lk), ik);
	return true;
}

/* Is block b the one `want` names? "Execute": every block of that name; "Execute#2": block 2. */
static bool block_chosen(const etc_inspector *insp, size_t b, const char *want)
{
	const etc_event_block *blk = etc_inspector_block(insp, b);
	const char *hash = strrchr(want, '#');
	if (hash && hash[1] >= '0' && hash[1] <= '9') {
		char *end;
		unsigned long idx = strtoul(hash + 1, &end, 10);
		size_t k = (size_t)(hash - want);
		if (!*end && blk->name.len == k && !memcmp(blk->name.ptr, want, k))
			return idx == b;
	}
	return blk->name.len == strlen(want) && !memcmp(blk->name.ptr, want, blk->name.len);
}

/*
 * The runs the gap compares: every run of every block --block names
 * (Execute by default), or run --run N of each. 0 with *n 0: no such block
 * (etc_numgap_run says so); EXIT_USAGE for --run out of range.
 */
static bool first_of_name(const etc_inspector *insp, size_t b)
{
	const etc_event_block *blk = etc_inspector_block(insp, b);
	for (size_t i = 0; i < b; i++) {
		const etc_event_block *o = etc_inspector_block(insp, i);
		if (o->name.len == blk->name.len &&
		    (!o->name.len || !memcmp(o->name.ptr, blk->name.ptr, o->name.len)))
			return false;
	}
	return true;
}

/* A block the reference ETDump has no block of the same inputs for is left out, with a note. */
static bool block_compared(const etc_inspector *insp, size_t b, const char *want,
                           const etc_inspector *ref, bool say)
{
	if (!block_chosen(insp, b, want))
		return false;
	if (!ref || first_of_name(insp, b) || etc_numgap_reference_block(insp, b, ref) >= 0)
		return true;
	if (say) {
		char lbl[128], s0[160], s1[512];
		cli_block_label(insp, b, lbl, sizeof lbl);
		fprintf(stderr,
		        "etcompare: note: numeric gap: block %s (bundled_input_index %d) is not "
		        "compared: %s has no block of the same inputs\n",
		        etc_text_safe(s0, sizeof s0, lbl),
		        (int)etc_inspector_block(insp, b)->bundled_input_index,
		        etc_text_safe(s1, sizeof s1, etc_etdump_name(etc_inspector_etdump(ref))));
	}
	return false;
}

static int gap_runs(const numgap_args *a, const etc_inspector *insp, const etc_inspector *ref,
                    gap_run **out, size_t *n)
{
	const char *want = a->block ? a->block : "Execute";
	size_t total = 0, nb = etc_inspector_block_count(insp);
	uint32_t most = 0;
	for (size_t b = 0; b < nb; b++)
		if (block_compared(insp, b, want, ref, true)) {
			uint32_t rc = etc_inspector_block(insp, b)->run_count;
			total += rc;
			most = rc > most ? rc : most;
		}
	*out = NULL;
	*n = 0;
	unsigned long pick = 0;
	if (a->run) {
		pick = strtoul(a->run, NULL, 10);
		if (total && pick >= most) {
			char msg[1200], lbl[128];
			size_t l = (size_t)snprintf(
			    msg, sizeof msg, "--run %s: out of range: the runs are 0-based, ",
			    a->run);
			bool any = false;
			for (size_t b = 0; b < nb && l < sizeof msg; b++) {
				if (!block_compared(insp, b, want, ref, false))
					continue;
				cli_block_label(insp, b, lbl, sizeof lbl);
				uint32_t rc = etc_inspector_block(insp, b)->run_count;
				l += (size_t)snprintf(msg + l, sizeof msg - l,
				                      "%sblock %s has %u (0 to %u)",
				                      any ? ", " : "", lbl, rc, rc - 1);
				any = true;
			}
			return usage_error("%s", msg);
		}
	}
	if (!total)
		return 0;
	gap_run *r = calloc(total, sizeof *r);
	if (!r) {
		fprintf(stderr, "etcompare: error: out of memory\n");
		return EXIT_INPUT;
	}
	for (size_t b = 0; b < nb; b++) {
		if (!block_compared(insp, b, want, ref, false))
			continue;
		uint32_t rc = etc_inspector_block(insp, b)->run_count;
		for (uint32_t k = 0; k < rc; k++)
			if (!a->run || k == pick)
				r[(*n)++] = (gap_run){b, k};
	}
	*out = r;
	return 0;
}

/* What the first divergence of `ng` is, in a few words: "addmm_1 aten.addmm.default". */
static void divergence_op(const etc_numgap_row *r, char *buf, size_t cap)
{
	char instr[32];
	snprintf(instr, sizeof instr, "instruction %d", r->instruction_id);
	const char *what = *r->ops ? r->ops : *r->event_name ? r->event_name : instr;
	snprintf(buf, cap, "%s%s%s", r->nodes, *r->nodes ? " " : "", what);
}

static void summarize(const etc_inspector *insp, const etc_numgap *ng, etc_numgap_run_summary *s)
{
	size_t b;
	memset(s, 0, sizeof *s);
	etc_numgap_where(ng, &b, &s->run, &s->etdump_run);
	cli_block_label(insp, b, s->block, sizeof s->block);
	s->compared = etc_numgap_row_count(ng);
	s->failures = etc_numgap_failures(ng);
	s->first = etc_numgap_first_divergence(ng);
	s->snr = NAN;
	if (s->first >= 0) {
		const etc_numgap_row *r = etc_numgap_row_at(ng, (size_t)s->first);
		divergence_op(r, s->op, sizeof s->op);
		if (r->has_metrics)
			s->snr = r->metrics.snr_db;
		snprintf(s->reason, sizeof s->reason, "%s", r->reason);
	}
}

/* "etcompare: numeric gap: Execute#1 run 1 (ETDump run 3): first divergence ..." */
static void print_run_line(const etc_numgap_run_summary *s, bool gated)
{
	char op[256], why[200], lbl[160], snr[40];
	etc_text_safe(lbl, sizeof lbl, s->block);
	if (s->first < 0) {
		fprintf(stderr,
		        "etcompare: numeric gap: %s run %u (ETDump run %u): %zu intermediate "
		        "outputs %s\n",
		        lbl, s->run, s->etdump_run, s->compared,
		        gated ? "pass" : "compared, no threshold");
		return;
	}
	/* the SNR once: the reason of a threshold failure already says it */
	if (!strncmp(s->reason, "SNR ", 4))
		snr[0] = '\0';
	else if (isnan(s->snr))
		snprintf(snr, sizeof snr, "not compared: ");
	else
		snprintf(snr, sizeof snr, "SNR %.4g dB: ", s->snr);
	fprintf(stderr,
	        "etcompare: numeric gap: %s run %u (ETDump run %u): first divergence at row %ld "
	        "%s: %s%s\n",
	        lbl, s->run, s->etdump_run, s->first, etc_text_safe(op, sizeof op, s->op), snr,
	        etc_text_safe(why, sizeof why, s->reason));
}

/* Is warning w of `ng` among those of `seen`? (runs repeat their warnings) */
static bool warned(const etc_numgap *seen, const char *w)
{
	for (size_t i = 0; seen && i < etc_numgap_warning_count(seen); i++)
		if (!strcmp(etc_numgap_warning(seen, i), w))
			return true;
	return false;
}

int numgap_run(const numgap_args *a, const etc_inspector *insp, const etc_etrecord *rec,
               const etc_inspector_options *io, numgap_state *st, int *gate)
{
	etc_numgap_options o;
	etc_numgap_options_init(&o);
	if (parse_threshold("--min-snr", a->min_snr, &o.min_snr) ||
	    parse_threshold("--max-mse", a->max_mse, &o.max_mse) ||
	    parse_threshold("--min-cosine", a->min_cosine, &o.min_cosine) ||
	    parse_threshold("--max-abs", a->max_abs, &o.max_abs))
		return EXIT_USAGE;
	if (a->block)
		o.block = a->block;
	if (a->distance)
		etc_numgap_distance_parse(a->distance, &o.distance);
	if (a->layout && !strcmp(a->layout, "none"))
		o.layout = ETC_NUMGAP_LAYOUT_NONE;
	o.quant_params = a->quant_params;
	o.force = a->force;
	/* the reports summarize the reference outputs: the gap need not keep them */
	o.drop_reference_values = true;
	if (!etc_inspector_debug_buffer(insp))
		return usage_error("%s", "the numeric gap needs --debug_buffer (the intermediate "
		                         "outputs' values)");
	etc_numgap_reference ref = {NULL, NULL, NULL, NULL, NULL, 0};
	bool graph = !numgap_wanted(a);
	int rc = graph ? open_graph(a, insp, rec, st, &ref) : open_reference(a, rec, io, st, &ref);
	if (rc || (graph && !st->graph))
		return rc; /* 0: not asked for and cannot run, the note said why */
	gap_run *runs = NULL;
	size_t nruns = 0;
	if ((rc = gap_runs(a, insp, ref.insp, &runs, &nruns)) != 0)
		return rc;
	/* from the graph alone, the gap gates only with a threshold */
	bool gates = !graph || a->min_snr || a->max_mse || a->min_cosine || a->max_abs ||
	             numgap_graph_asked(a);
	st->gates = gates;
	etc_error err;
	etc_error_clear(&err);
	st->runs = calloc(nruns ? nruns : 1, sizeof *st->runs);
	if (a->all_runs)
		st->all = calloc(nruns ? nruns : 1, sizeof *st->all);
	if (!st->runs || (a->all_runs && !st->all)) {
		free(runs);
		fprintf(stderr, "etcompare: error: out of memory\n");
		return EXIT_INPUT;
	}
	/* each run in turn; the table shows the first that diverges, else the first */
	char safe[1024];
	size_t skipped = 0;
	for (size_t k = 0; k < (nruns ? nruns : 1); k++) {
		etc_numgap *ng = NULL;
		char lbl[128];
		if (nruns) {
			cli_block_label(insp, runs[k].block, lbl, sizeof lbl);
			o.block = lbl;
		}
		if (graph && nruns && k > 0 && a->inputs && inputs_misfit(insp, runs, k)) {
			rc = EXIT_INPUT;
			break;
		}
		if (graph && nruns) {
			rc = graph_inputs(a, insp, rec, runs[k].block, runs[k].run, st, &ref);
			if (rc != 0 || !ref.graph)
				break;
		}
		if (graph && !nruns) /* no such block: etc_numgap_run names it */
			ref.graph = st->graph;
		st->quiet = true;
		/* guessed inputs: the gap scores the program outputs too (left_out) */
		o.score_program_outputs = graph && st->by_candidates && isnan(st->chosen_snr);
		rc = nruns
		         ? etc_numgap_run_at(&ng, insp, runs[k].block, runs[k].run, &ref, &o, &err)
		         : etc_numgap_run(&ng, insp, &ref, &o, &err);
		o.block = a->block ? a->block : "Execute";
		if (rc == ETC_ERR_USAGE) {
			rc = usage_error("%s", err.message);
			break;
		}
		if (rc < 0) {
			rc = input_error(&err);
			break;
		}
		if (graph && nruns &&
		    left_out(a, insp, rec, runs[k].block, runs[k].run, nruns > 1,
		             etc_numgap_program_output_snr(ng), st)) {
			etc_numgap_free(ng);
			ng = NULL;
			skipped++;
			continue;
		}
		etc_numgap_run_summary *sum = &st->runs[st->run_count++];
		summarize(insp, ng, sum);
		/* with several runs, each warning says whose it is */
		char whose[200] = "", blk[160];
		if (nruns > 1)
			snprintf(whose, sizeof whose, "%s run %u (ETDump run %u): ",
			         etc_text_safe(blk, sizeof blk, sum->block), sum->run,
			         sum->etdump_run);
		for (size_t i = 0; i < etc_numgap_warning_count(ng); i++)
			if (!warned(st->ng, etc_numgap_warning(ng, i)))
				fprintf(
				    stderr, "etcompare: warning: %s%s\n", whose,
				    etc_text_safe(safe, sizeof safe, etc_numgap_warning(ng, i)));
		if (st->all)
			st->all[st->all_count++] = ng; /* owned there: st->ng only points */
		bool shown_passes = st->ng && etc_numgap_first_divergence(st->ng) < 0;
		if (!st->ng || (shown_passes && etc_numgap_first_divergence(ng) >= 0)) {
			if (!st->all)
				etc_numgap_free(st->ng);
			st->ng = ng;
		} else if (!st->all) {
			etc_numgap_free(ng);
		}
	}
	free(runs);
	if (!rc && !st->ng && skipped)
		fprintf(stderr,
		        "etcompare: numeric gap: no run compared: the inputs of %s %zu run%s are "
		        "not known (see the notes)\n",
		        skipped == 1 ? "its" : "all", skipped, skipped == 1 ? "" : "s");
	if (rc || !st->ng)
		return rc;
	if (etc_report_numgap(stdout, st->ng, &err) < 0) {
		cli_stdout_error(&err);
		return EXIT_OUTPUT;
	}
	fflush(stdout); /* the table before its verdict, also in one 2>&1 stream */
	if (st->run_count > 1) {
		size_t b;
		uint32_t run, etdump_run;
		char lbl[128], s0[160];
		etc_numgap_where(st->ng, &b, &run, &etdump_run);
		cli_block_label(insp, b, lbl, sizeof lbl);
		fprintf(stderr,
		        "etcompare: numeric gap: %zu runs compared%s%s; the table shows %s run %u "
		        "(ETDump run %u)\n",
		        st->run_count, a->run ? " (--run)" : " (every run of every block)",
		        skipped ? ", some left out (see the notes)" : "",
		        etc_text_safe(s0, sizeof s0, lbl), run, etdump_run);
		for (size_t k = 0; k < st->run_count; k++)
			print_run_line(&st->runs[k], etc_numgap_gated(st->ng));
	}
	long first = etc_numgap_first_divergence(st->ng);
	size_t n = etc_numgap_row_count(st->ng);
	if (first >= 0) {
		const etc_numgap_row *r = etc_numgap_row_at(st->ng, (size_t)first);
		/* debug-only ETDumps have no event names: the instruction says which */
		char instr[32], del[96];
		snprintf(instr, sizeof instr, "instruction %d", r->instruction_id);
		snprintf(del, sizeof del, "%.60s event %.20s", r->delegate_backend, r->event_name);
		const char *event = *r->delegate_backend ? del
		                    : *r->event_name     ? r->event_name
		                                         : instr;
		const char *what = *r->ops ? r->ops : event;
		char s0[512], s1[512], s2[512], s3[512], s4[512];
		fprintf(
		    stderr,
		    "etcompare: numeric gap: first divergence at row %ld of %zu: %s%s%s%s%s%s%s%s: "
		    "%s\n",
		    first, n, etc_text_safe(s0, sizeof s0, r->nodes), *r->nodes ? " " : "",
		    etc_text_safe(s1, sizeof s1, what), what != event ? " (" : "",
		    what != event ? etc_text_safe(s2, sizeof s2, event) : "",
		    what != event ? ")" : "", *r->source_line ? " at " : "",
		    etc_text_safe(s3, sizeof s3, r->source_line),
		    etc_text_safe(s4, sizeof s4, r->reason));
		if (gates)
			*gate = EXIT_GATE;
		else
			fprintf(stderr,
			        "etcompare: note: the numeric gap from the ETRecord's graph "
			        "gates only with a threshold (--min-snr, --max-mse, "
			        "--min-cosine, --max-abs)\n");
	} else {
		fprintf(stderr,
		        "etcompare: numeric gap: %zu intermediate outputs %s, %zu unmatched\n", n,
		        etc_numgap_gated(st->ng)
		            ? "pass"
		            : "compared, no threshold (--min-snr and the like gate)",
		        etc_numgap_unmatched_count(st->ng));
	}
	/* --numgap-tsv is written by the caller, once, for the gap it shows */
	return 0;
}

int numgap_plots(const numgap_state *st, const etc_plot_options *po, etc_plot_result *pr)
{
	etc_error err;
	etc_error_clear(&err);
	if (etc_report_numgap_plots(po, st->ng, pr, &err) < 0) {
		fprintf(stderr, "etcompare: error: %s\n", err.message);
		return err.status == ETC_ERR_IO ? EXIT_OUTPUT : EXIT_INPUT;
	}
	return 0;
}

void numgap_free(numgap_state *st)
{
	if (st->all)
		for (size_t k = 0; k < st->all_count; k++)
			etc_numgap_free(st->all[k]);
	else
		etc_numgap_free(st->ng);
	free(st->all);
	free(st->runs);
	etc_refinputs_free(st->inputs);
	free(st->inputs_views);
	etc_refgraph_free(st->graph);
	etc_npz_free(st->inputs_npz);
	etc_torchsave_free(st->inputs_ts);
	etc_inspector_free(st->insp);
	etc_npz_free(st->npz);
	etc_etrecord_free(st->rec);
	etc_debug_buffer_free(st->buf);
	etc_etdump_free(st->dump);
	memset(st, 0, sizeof *st);
}
