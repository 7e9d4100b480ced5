/*
 * numgap_check.c - refusing an ETRecord that is not the ETDump's own:
 * events without debug handles, or named for ops their linked nodes do not
 * run, stop the numeric gap (or warn with --force); and a warning when the
 * first op the runtime fed from the program's inputs and weights alone
 * already disagrees entirely (another export's weights, other inputs).
 */
#include "analysis/numgap_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Does the event name contain the base name of one of its linked nodes' ops? */
static bool name_fits(const etc_inspector_event *ev, const char **op)
{
	char name[256], base[128];
	size_t l = ev->name.len < sizeof name - 1 ? ev->name.len : sizeof name - 1;
	memcpy(name, ev->name.ptr, l);
	name[l] = '\0';
	*op = "";
	for (uint32_t k = 0; k < ev->node_count; k++) {
		etc_ng_op_base_(ev->nodes[k]->op, base, sizeof base);
		if (*base && strstr(name, base))
			return true;
		*op = ev->nodes[k]->op;
	}
	return ev->node_count == 0;
}

/*
 * The ETRecord linked to one side must be its own: more than half of the
 * events with intermediate outputs without a debug handle, or an event
 * whose name contains none of its linked nodes' op names, stop the run
 * (ETC_ERR_MISMATCH naming the files and the flag), or warn with force.
 */
int etc_ng_check_record_(etc_numgap *ng, const gather *g, size_t from, size_t to,
                         const etc_inspector *insp, const char *flag, etc_error *err)
{
	const etc_etrecord *rec = etc_inspector_etrecord(insp);
	if (!rec || from == to)
		return 0;
	const char *dump = etc_etdump_name(etc_inspector_etdump(insp));
	const char *rname = etc_etrecord_name(rec);
	size_t unlinked = 0, total = 0;
	const item *bad = NULL;
	const char *bad_op = "";
	for (size_t i = from; i < to; i++) {
		const item *it = &g->items[i];
		if (!it->ev)
			continue;
		total++;
		unlinked += it->nh == 0;
		const etc_inspector_event *ev = it->ev;
		/* delegated events are named by their delegate id; DELEGATE_CALL and
		 * OPERATOR_CALL by their kind */
		if (bad || ev->is_delegated_op || !ev->name.len || etc_ng_is_delegate_call_(ev) ||
		    (ev->name.len == 13 && !memcmp(ev->name.ptr, "OPERATOR_CALL", 13)))
			continue;
		const char *op;
		if (!name_fits(ev, &op))
			bad = it, bad_op = op;
	}
	char msg[600];
	if (unlinked * 2 > total)
		snprintf(
		    msg, sizeof msg,
		    "%s: %zu of the %zu events with intermediate outputs have no debug handle "
		    "in ETRecord %s: it is not the record of this ETDump; give its own with %s",
		    dump, unlinked, total, rname, flag);
	else if (bad)
		snprintf(
		    msg, sizeof msg,
		    "%s: instruction %d \"%s\" is linked by ETRecord %s to %s, which it does not "
		    "run: the record is not the one of this ETDump; give its own with %s",
		    dump, bad->ev->instruction_id, bad->name, rname, bad_op, flag);
	else
		return 0;
	if (!ng->opt.force)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "%s (or --force to compare anyway)", msg);
	return etc_ng_warn_(ng, err, "%s (--force: compared anyway)", msg);
}

/* A float output uncorrelated with the reference's: cosine < 0.5 and SNR
 * < 3 dB (not for NaN metrics). */
static bool unrelated(const etc_metrics *m)
{
	return !isnan(m->cosine) && m->cosine < 0.5 && m->snr_db < 3;
}

/*
 * The first compared op that does not match the reference exactly, when
 * its re-run saw the reference's own inputs: it read no logged output (its
 * tensor inputs are the program's inputs and the record's weights), or the
 * outputs it read were the reference's to the bit (a logged permute of a
 * weight: its local error is then its cumulative one). A float output
 * uncorrelated with the runtime's there (cosine < 0.5, SNR < 3 dB) is the
 * mark of another export's weights or of other inputs far more often than
 * of a broken kernel. A warning, not a verdict: the rows stay as they are.
 */
int etc_ng_check_first_op_(etc_numgap *ng, etc_error *err)
{
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics || !r->metrics.count || r->metrics.identical ||
		    r->metrics.exact || isnan(r->metrics.cosine))
			continue;
		bool own_inputs =
		    r->has_local && (r->local_inputs == 0 ||
		                     (r->local_standins == 0 && r->local_snr == r->metrics.snr_db));
		if (!own_inputs || !unrelated(&r->metrics))
			return 0;
		return etc_ng_warn_(
		    ng, err,
		    "the first op that reads only the reference's own values (the program's "
		    "inputs, the ETRecord's weights, logged outputs equal to the reference's), "
		    "row %zu %.80s (%.60s), already disagrees with the runtime: SNR %.3g dB, "
		    "cosine %.3g (unrelated values). Unless its kernel is broken, the ETRecord's "
		    "weights or the reference run's inputs are not this run's: give the ETRecord "
		    "generate_etrecord wrote for the program that ran, and the run's inputs "
		    "(--inputs FILE, --bundled-program FILE.bpte)",
		    i, r->reference_nodes, r->reference_ops, r->metrics.snr_db, r->metrics.cosine);
	}
	return 0;
}

/*
 * The same mark against a reference run or AOT intermediates (no graph to
 * re-run): the first compared op in execution order, unrelated to the
 * reference's (cosine < 0.5, SNR < 3 dB), before any other op could have
 * spread an error to it. Runs paired by order with a reference of other
 * inputs leave it far more often than a broken first kernel does.
 */
int etc_ng_check_first_ref_op_(etc_numgap *ng, const char *reference, etc_error *err)
{
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		if (!r->has_metrics || !r->metrics.count)
			continue;
		if (r->metrics.identical || r->metrics.exact || !unrelated(&r->metrics))
			return 0;
		return etc_ng_warn_(
		    ng, err,
		    "the first compared op, row %zu %.80s (%.60s), already disagrees with %s: "
		    "SNR %.3g dB, cosine %.3g (unrelated values). Unless its kernel is broken, "
		    "the reference ran other inputs than this run: give the reference of the "
		    "same inputs (a reference run is paired with this one by order)",
		    i, r->reference_nodes, r->reference_ops, reference, r->metrics.snr_db,
		    r->metrics.cosine);
	}
	return 0;
}

/* The elements of a row's shape text ("[1, 3, 16, 16]"); false when it
 * cannot be read (an elided long shape). */
static bool numel_of(const char *s, uint64_t *n)
{
	*n = 1;
	if (*s++ != '[')
		return false;
	while (*s && *s != ']') {
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || (v && *n > UINT64_MAX / v))
			return false;
		*n *= v;
		s = end;
		while (*s == ',' || *s == ' ')
			s++;
	}
	return *s == ']';
}

/*
 * Two sides of different programs whose debug handles happen to align
 * (models of one family, exported alike): most aligned outputs differ in
 * size. More than half of them (of at least two) stop the gap
 * (ETC_ERR_MISMATCH naming both sides), or warn with force. Shapes with
 * the same elements (a layout left as it is with --layout none, a squeezed
 * dimension) do not count.
 */
int etc_ng_check_shapes_(etc_numgap *ng, const char *rt_name, const char *ref_name, etc_error *err)
{
	size_t bad = 0, first = 0;
	for (size_t i = 0; i < ng->nrows; i++) {
		const etc_numgap_row *r = &ng->rows[i];
		uint64_t a, b;
		if (r->status == ETC_ROW_SHAPE_MISMATCH && numel_of(r->shape, &a) &&
		    numel_of(r->reference_shape, &b) && a != b && !bad++)
			first = i;
	}
	if (ng->nrows < 2 || bad * 2 <= ng->nrows)
		return 0;
	const etc_numgap_row *r = &ng->rows[first];
	char msg[800];
	snprintf(msg, sizeof msg,
	         "%.100s and the reference %.100s are not of the same program: %zu of the %zu "
	         "outputs aligned by debug handle differ in size (first: row %zu %.60s, shape %s "
	         "against reference %s); give the reference of this program",
	         rt_name, ref_name, bad, ng->nrows, first, r->nodes, r->shape, r->reference_shape);
	if (!ng->opt.force)
		return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
		                "%s (or --force to compare anyway)", msg);
	return etc_ng_warn_(ng, err, "%s (--force: compared anyway)", msg);
}
