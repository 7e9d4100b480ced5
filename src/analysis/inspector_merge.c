/*
 * inspector_merge.c - step 3 of inspector.c: runs with equal (name,
 * signatures, bundled_input_index) merge into one group; each signature
 * gathers one duration per run, and later runs' debug data and program
 * outputs are checked bitwise against the first run's.
 */
#include "analysis/inspector_private.h"

#include <math.h>
#include <stdlib.h>

/* --- value comparison ------------------------------------------------------ */

/*
 * The tensors of a later run are compared with one memcmp each (glibc's
 * vector memcmp). bench/bench_equal on the table-only bench's buffer, 16 KiB
 * tensors cold in the process: 10% less time than the 1 KiB blocks with
 * software prefetch used before, 25% less once mapped; a 64-bit XOR/OR loop
 * per 4 KiB is as slow as the blocks there (it wins only on 4 KiB tensors).
 */
static bool bytes_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	return memcmp(a, b, n) == 0;
}

/* Bitwise equality of two logged values: same kind, shape, dtype and bytes. */
static int values_equal(const etc_value *a, const etc_value *b, const etc_debug_buffer *buf,
                        bool *eq, etc_error *err)
{
	*eq = false;
	if (a->type != b->type || a->is_output != b->is_output ||
	    a->tensor_count != b->tensor_count)
		return 0;
	switch (a->type) {
	case ETC_VALUE_INT:
		*eq = a->int_val == b->int_val;
		return 0;
	case ETC_VALUE_BOOL:
		*eq = a->bool_val == b->bool_val;
		return 0;
	case ETC_VALUE_FLOAT:
		*eq = memcmp(&a->float_val, &b->float_val, sizeof(float)) == 0;
		return 0;
	case ETC_VALUE_DOUBLE:
		*eq = memcmp(&a->double_val, &b->double_val, sizeof(double)) == 0;
		return 0;
	default:
		break;
	}
	for (uint32_t i = 0; i < a->tensor_count; i++) {
		etc_tensor ta, tb;
		/* An unknown scalar type has a shape but no readable data. */
		int ra = etc_value_tensor(a, i, buf, &ta, err);
		int rb = etc_value_tensor(b, i, buf, &tb, err);
		if ((ra < 0 && ra != ETC_ERR_UNSUPPORTED) || (rb < 0 && rb != ETC_ERR_UNSUPPORTED))
			return ra < 0 ? ra : rb;
		if (ta.scalar_type != tb.scalar_type || ta.ndim != tb.ndim ||
		    ta.nbytes != tb.nbytes)
			return 0;
		for (uint32_t k = 0; k < ta.ndim; k++)
			if (etc_tensor_size(&ta, k) != etc_tensor_size(&tb, k))
				return 0;
		if ((ta.data == NULL) != (tb.data == NULL))
			return 0;
		if (ta.data && ta.data != tb.data && !bytes_equal(ta.data, tb.data, ta.nbytes))
			return 0;
	}
	*eq = true;
	return 0;
}

/* --- groups --------------------------------------------------------------- */

void etc_group_free_(group *g)
{
	if (!g)
		return;
	free(g->sigs);
	free(g->runs);
	free(g->dur);
	free(g->start);
	free(g->meta);
	free(g->meta_len);
	free(g->debug);
	free(g->ndebug);
	free(g->first_event);
	free(g->dbg_off);
	free(g->dbg_ev);
	free(g->outputs.v);
	free(g->output_start);
	free(g->allocs);
	free(g->alloc_start);
	free(g);
}

/*
 * Makes room for one more run. Durations and start times are kept per
 * signature ([sig][cap]), so the finished events point into them without a
 * copy; the first allocation holds first_cap runs (usually every run left in
 * the ETDump: all of them merge), later ones double and move the columns.
 */
static int grow_rows(group *g, etc_error *err)
{
	if (g->nruns < g->cap)
		return 0;
	uint32_t cap = g->cap ? g->cap * 2 : g->first_cap;
	size_t nsig = g->nsig ? g->nsig : 1, rows = (size_t)cap * nsig;
	void *p;
	if (!(p = realloc(g->runs, cap * sizeof *g->runs)))
		goto nomem;
	g->runs = p;
	double *dur = malloc(rows * sizeof *dur);
	uint64_t *start = malloc(rows * sizeof *start);
	if (!dur || !start) {
		free(dur);
		free(start);
		goto nomem;
	}
	for (size_t i = 0; g->nruns && i < g->nsig; i++) {
		memcpy(dur + i * cap, g->dur + i * g->cap, g->nruns * sizeof *dur);
		memcpy(start + i * cap, g->start + i * g->cap, g->nruns * sizeof *start);
	}
	free(g->dur);
	free(g->start);
	g->dur = dur;
	g->start = start;
	if (g->meta) {
		if (!(p = realloc(g->meta, rows * sizeof *g->meta)))
			goto nomem;
		g->meta = p;
		if (!(p = realloc(g->meta_len, rows * sizeof *g->meta_len)))
			goto nomem;
		g->meta_len = p;
	}
	if (!(p = realloc(g->output_start, (cap + 1) * sizeof *g->output_start)))
		goto nomem;
	g->output_start = p;
	if (!(p = realloc(g->alloc_start, (cap + 1) * sizeof *g->alloc_start)))
		goto nomem;
	g->alloc_start = p;
	g->cap = cap;
	return 0;
nomem:
	return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory grouping runs");
}

static int push_value(value_vec *vv, const etc_value *v, etc_error *err)
{
	if (vv->n == vv->cap) {
		size_t cap = vv->cap ? vv->cap * 2 : 8;
		etc_value *p = realloc(vv->v, cap * sizeof *p);
		if (!p)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		vv->v = p;
		vv->cap = cap;
	}
	vv->v[vv->n++] = *v;
	return 0;
}

uint64_t etc_run_hash_(const etc_run *run, const scratch *s)
{
	uint64_t h = etc_hash_str_(mix(0xabc, (uint32_t)run->bundled_input_index), run->name);
	for (uint32_t i = 0; i < s->nslots; i++)
		h = mix(h, s->slots[i].hash);
	return mix(h, s->nslots);
}

bool etc_run_matches_(const group *g, const etc_run *run, const scratch *s, uint64_t h)
{
	if (g->hash != h || g->bidx != run->bundled_input_index || g->nsig != s->nslots ||
	    !str_eq(g->name, run->name))
		return false;
	for (uint32_t i = 0; i < s->nslots; i++)
		if (!etc_sig_eq_(&g->sigs[i], &s->slots[i].sig))
			return false;
	return true;
}

int etc_group_create_(const etc_run *run, const scratch *s, uint64_t h, uint32_t runs_left,
                      uint64_t *budget, group **out, etc_error *err)
{
	group *g = calloc(1, sizeof *g);
	if (!g)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	g->name = run->name;
	g->bidx = run->bundled_input_index;
	g->nsig = s->nslots;
	g->hash = h;
	uint64_t cells = (uint64_t)runs_left * (g->nsig ? g->nsig : 1);
	if (cells <= *budget) {
		g->first_cap = runs_left;
		*budget -= cells;
	} else {
		g->first_cap = runs_left < 4 ? runs_left : 4;
	}
	size_t n = g->nsig ? g->nsig : 1;
	g->sigs = malloc(n * sizeof *g->sigs);
	g->debug = calloc(n, sizeof *g->debug);
	g->ndebug = calloc(n, sizeof *g->ndebug);
	g->first_event = calloc(n, sizeof *g->first_event);
	if (!g->sigs || !g->debug || !g->ndebug || !g->first_event) {
		etc_group_free_(g);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (uint32_t i = 0; i < g->nsig; i++)
		g->sigs[i] = s->slots[i].sig;
	*out = g;
	return 0;
}

/* Keeps the indices of run `row`'s debug events (group.dbg_ev). */
static int keep_debug_events(group *g, uint32_t row, const scratch *s, etc_error *err)
{
	if (row == 0) {
		g->dbg_off = calloc(g->nsig ? g->nsig : 1, sizeof *g->dbg_off);
		if (!g->dbg_off)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		uint64_t total = 0;
		for (uint32_t i = 0; i < g->nsig; i++) {
			g->dbg_off[i] = (uint32_t)total;
			total += s->ies[s->slots[i].ie].ndbg;
		}
		if (total > UINT32_MAX)
			return etc_fail(err, ETC_ERR_LIMIT, NULL, -1,
			                "more than 2^32 debug events in one run");
		g->dbg_total = (uint32_t)total;
	}
	if (!g->dbg_total)
		return 0;
	if (row >= g->dbg_cap) {
		uint32_t cap = g->dbg_cap ? g->dbg_cap * 2 : 4;
		uint32_t *p = realloc(g->dbg_ev, (size_t)cap * g->dbg_total * sizeof *p);
		if (!p)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
			                "out of memory grouping runs");
		g->dbg_ev = p;
		g->dbg_cap = cap;
	}
	uint32_t *at = g->dbg_ev + (size_t)row * g->dbg_total;
	for (uint32_t i = 0; i < g->nsig; i++) {
		const instr_event *ie = &s->ies[s->slots[i].ie];
		uint32_t n0 = (i + 1 < g->nsig ? g->dbg_off[i + 1] : g->dbg_total) - g->dbg_off[i];
		uint32_t k = 0;
		if (ie->ndbg == n0)
			for (uint32_t e = ie->dbg_head; e != NONE && k < n0; e = s->next[e])
				at[g->dbg_off[i] + k++] = e;
		for (; k < n0; k++)
			at[g->dbg_off[i] + k] = NONE;
	}
	return 0;
}

int etc_add_run_(etc_inspector *in, group *g, uint32_t r, const etc_run *run, scratch *s,
                 etc_error *err)
{
	ETC_TRY(grow_rows(g, err));
	uint32_t row = g->nruns;
	bool first = row == 0;
	double *dur = g->dur + row;
	uint64_t *start = g->start + row;
	size_t stride = g->cap;
	if (first)
		g->output_start[0] = 0, g->alloc_start[0] = 0;
	ETC_TRY(keep_debug_events(g, row, s, err));

	for (uint32_t i = 0; i < g->nsig; i++) {
		const slot *sl = &s->slots[i];
		const instr_event *ie = &s->ies[sl->ie];
		etc_event ev;
		dur[i * stride] = NAN;
		start[i * stride] = 0;
		if (sl->prof_event != NONE) {
			etc_etdump_event(in->dump, r, sl->prof_event, &ev);
			const etc_profile_event *p = &ev.profile;
			bool delegated =
			    p->delegate_debug_id_int != -1 || p->delegate_debug_id_str.len;
			ETC_TRY(etc_duration_(in, r, sl->prof_event, p, delegated, &dur[i * stride],
			                      err));
			start[i * stride] = p->start_time;
			if (p->has_metadata && p->metadata_len && !g->meta) {
				size_t rows = (size_t)g->cap * g->nsig;
				g->meta = calloc(rows, sizeof *g->meta);
				g->meta_len = calloc(rows, sizeof *g->meta_len);
				if (!g->meta || !g->meta_len)
					return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
					                "out of memory");
			}
			if (g->meta) {
				g->meta[(size_t)row * g->nsig + i] = p->metadata;
				g->meta_len[(size_t)row * g->nsig + i] = p->metadata_len;
			}
		}
		if (first) {
			g->first_event[i] = sl->prof_event != NONE ? sl->prof_event : ie->dbg_head;
			g->ndebug[i] = ie->ndbg;
			if (ie->ndbg) {
				g->debug[i] =
				    etc_arena_alloc(&in->arena, ie->ndbg, sizeof(etc_value));
				if (!g->debug[i])
					return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
					                "out of memory");
				uint32_t k = 0;
				for (uint32_t e = ie->dbg_head; e != NONE; e = s->next[e]) {
					etc_etdump_event(in->dump, r, e, &ev);
					g->debug[i][k++] = ev.debug.value;
				}
			}
			continue;
		}
		/* Later runs must have logged the same intermediate data. */
		uint32_t k = 0;
		bool same = ie->ndbg == g->ndebug[i];
		for (uint32_t e = ie->dbg_head; same && e != NONE; e = s->next[e], k++) {
			etc_etdump_event(in->dump, r, e, &ev);
			ETC_TRY(
			    values_equal(&g->debug[i][k], &ev.debug.value, in->buf, &same, err));
		}
		if (!same) {
			const event_sig *sig = &g->sigs[i];
			etc_str nm =
			    in->strs.strs[sig->prof.present ? sig->prof.name : sig->dbg.name];
			if (in->opt.strict)
				return etc_fail(err, ETC_ERR_MISMATCH, etc_etdump_name(in->dump),
				                -1,
				                "block \"%.*s\", event %u (%.*s, instruction %d): "
				                "run %u logged different debug data than run 0",
				                (int)g->name.len, g->name.ptr, i, (int)nm.len,
				                nm.ptr, sig->instruction_id, row);
			etc_warn_(in,
			          "block \"%.*s\", event %u (%.*s, instruction %d): run %u logged "
			          "different debug data than run 0; the first run's data is shown",
			          (int)g->name.len, g->name.ptr, i, (int)nm.len, nm.ptr,
			          sig->instruction_id, row);
		}
	}

	/* Program outputs: kept per run, compared with the first run. */
	uint32_t base = g->output_start[row];
	if (!first) {
		uint32_t n0 = g->output_start[1] - g->output_start[0];
		bool same = n0 == s->nouts;
		for (uint32_t k = 0; same && k < n0; k++)
			ETC_TRY(values_equal(&g->outputs.v[k], &s->outs[k], in->buf, &same, err));
		if (!same)
			etc_warn_(
			    in,
			    "block \"%.*s\": program outputs of run %u differ from those of run 0 "
			    "(expected when the runs had different inputs); each run keeps its own",
			    (int)g->name.len, g->name.ptr, row);
	}
	for (uint32_t k = 0; k < s->nouts; k++)
		ETC_TRY(push_value(&g->outputs, &s->outs[k], err));
	g->output_start[row + 1] = base + s->nouts;

	/* Allocators of this run. */
	uint32_t abase = g->alloc_start[row];
	if (g->nallocs + run->allocator_count > g->allocs_cap) {
		size_t cap = (g->allocs_cap ? g->allocs_cap * 2 : 8) + run->allocator_count;
		etc_allocator_usage *p = realloc(g->allocs, cap * sizeof *p);
		if (!p)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		g->allocs = p;
		g->allocs_cap = cap;
	}
	for (uint32_t a = 0; a < run->allocator_count; a++) {
		etc_allocator_usage *u = &g->allocs[g->nallocs++];
		u->name = etc_etdump_allocator(in->dump, r, a);
		u->count = s->alloc_count[a];
		u->bytes = s->alloc_bytes[a];
	}
	g->alloc_start[row + 1] = abase + run->allocator_count;
	g->runs[row] = r;
	g->nruns++;
	return 0;
}
