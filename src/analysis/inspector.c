/*
 * inspector.c - turns an ETDump into EventBlocks, following the upstream
 * Inspector (FORMATS.md §3):
 *
 *  1. Per run, events are collated into "instruction events" keyed by
 *     (instruction_id, chain_index, delegate int id, delegate string id), in
 *     first-seen order. Debug events whose Value is flagged `output` are the
 *     run's program outputs and are set aside.
 *  2. Each instruction event yields one event signature per profile event
 *     (or one for its debug events when it has no profile event). Signatures
 *     are kept in an ordered map: a repeated signature keeps its first
 *     position and takes the latest occurrence, as upstream's OrderedDict.
 *  3. Runs with equal (name, signatures, bundled_input_index) merge into one
 *     block; each event gathers one duration per run.
 *
 * Every pass is linear in the number of events (hash maps, no search).
 * Memory stays near the events themselves: signature strings are interned
 * (strtab), durations are stored per signature so the finished events point
 * into them, and the per-run scratch is freed before the events are built.
 *
 * This file holds the options, the main flow (etc_inspector_create), the
 * finished blocks and the accessors; the per-run pass is in
 * inspector_collate.c, the merging of runs in inspector_merge.c, the time
 * scales in inspector_time.c and the ETRecord linking in inspector_link.c
 * (shared types: inspector_private.h).
 */
#include "analysis/inspector_private.h"
#include "format/etdump_private.h"

#include <stdio.h>
#include <stdlib.h>

void etc_inspector_options_init(etc_inspector_options *opt)
{
	opt->source_time_scale = ETC_TIME_NS;
	opt->target_time_scale = ETC_TIME_MS;
	opt->strict = false;
	opt->delegate_time_scale = -1;
	opt->delegate_time_scale_of = NULL;
	opt->delegate_time_scale_ctx = NULL;
}

/* --- warnings ------------------------------------------------------------- */

void etc_warn_(etc_inspector *in, const char *fmt, ...)
{
	in->nwarnings++;
	if (in->warnings_stored >= MAX_STORED_WARNINGS)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char *copy = etc_arena_strdup(&in->arena, msg, strlen(msg));
	if (copy)
		in->warnings[in->warnings_stored++] = copy;
}

/* --- finishing blocks ------------------------------------------------------ */

static etc_str arena_str(etc_arena *a, const char *s)
{
	etc_str out = {"", 0};
	char *p = etc_arena_strdup(a, s, strlen(s));
	if (p) {
		out.ptr = p;
		out.len = strlen(s);
	}
	return out;
}

/* Name and delegate id by upstream's rule: a set delegate id names the event. */
static void apply_side(etc_arena *a, const strtab *t, const side_sig *sd, etc_inspector_event *ev)
{
	char buf[32];
	etc_str name;
	if (!sd->present)
		return;
	ev->delegate_debug_id_int = sd->del_int;
	ev->delegate_debug_id_str = t->strs[sd->del_str];
	if (sd->del_int != -1) {
		snprintf(buf, sizeof buf, "%d", sd->del_int);
		name = arena_str(a, buf);
		ev->is_delegated_op = true;
	} else if (sd->del_str) {
		name = t->strs[sd->del_str];
		ev->is_delegated_op = true;
	} else {
		name = t->strs[sd->name];
		ev->is_delegated_op = false;
	}
	if (name.len)
		ev->name = name;
}

static int finish_group(etc_inspector *in, group *g, etc_event_block *b, etc_error *err)
{
	etc_arena *a = &in->arena;
	b->name = g->name;
	b->bundled_input_index = g->bidx;
	b->run_count = g->nruns;
	b->event_count = g->nsig;
	uint32_t *runs = etc_arena_alloc(a, g->nruns, sizeof *runs);
	etc_inspector_event *evs = etc_arena_alloc(a, g->nsig ? g->nsig : 1, sizeof *evs);
	uint32_t *ostart = etc_arena_alloc(a, g->nruns + 1, sizeof *ostart);
	uint32_t *astart = etc_arena_alloc(a, g->nruns + 1, sizeof *astart);
	etc_value *outs = etc_arena_alloc(a, g->outputs.n ? g->outputs.n : 1, sizeof *outs);
	etc_allocator_usage *allocs =
	    etc_arena_alloc(a, g->nallocs ? g->nallocs : 1, sizeof *allocs);
	if (!runs || !evs || !ostart || !astart || !outs || !allocs)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	memcpy(runs, g->runs, g->nruns * sizeof *runs);
	memcpy(ostart, g->output_start, (g->nruns + 1) * sizeof *ostart);
	memcpy(astart, g->alloc_start, (g->nruns + 1) * sizeof *astart);
	if (g->outputs.n)
		memcpy(outs, g->outputs.v, g->outputs.n * sizeof *outs);
	if (g->nallocs)
		memcpy(allocs, g->allocs, g->nallocs * sizeof *allocs);
	b->runs = runs;
	b->output_start = ostart;
	b->outputs = outs;
	b->alloc_start = astart;
	b->allocators = allocs;

	for (uint32_t i = 0; i < g->nsig; i++) {
		const event_sig *sig = &g->sigs[i];
		etc_inspector_event *ev = &evs[i];
		ev->name.ptr = "";
		ev->instruction_id = sig->instruction_id;
		ev->delegate_debug_id_int = -1;
		ev->delegate_debug_id_str.ptr = "";
		apply_side(a, &in->strs, &sig->prof, ev);
		apply_side(a, &in->strs, &sig->dbg, ev);
		ev->run_count = g->nruns;
		ev->num_outputs = -1;
		ev->debug = g->debug[i];
		ev->debug_count = g->ndebug[i];
		ev->first_run_event = g->first_event[i];
		ev->time_scale = in->opt.target_time_scale;
		if (!sig->prof.present)
			continue;
		const double *raw = g->dur + (size_t)i * g->cap;
		const uint64_t *st = g->start + (size_t)i * g->cap;
		ev->has_perf = true;
		if (ev->is_delegated_op)
			ev->time_scale = etc_shown_unit_(
			    &in->opt, etc_delegate_unit_(&in->opt, ev->instruction_id));
		ev->raw = raw;
		ev->start_times = st;
		etc_perf_stats_compute(raw, g->nruns, &ev->stats);
		if (g->meta) {
			bool any = false;
			for (uint32_t k = 0; k < g->nruns; k++)
				any |= g->meta_len[(size_t)k * g->nsig + i] != 0;
			if (any) {
				const uint8_t **m = etc_arena_alloc(a, g->nruns, sizeof *m);
				uint32_t *ml = etc_arena_alloc(a, g->nruns, sizeof *ml);
				if (!m || !ml)
					return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
					                "out of memory");
				for (uint32_t k = 0; k < g->nruns; k++) {
					m[k] = g->meta[(size_t)k * g->nsig + i];
					ml[k] = g->meta_len[(size_t)k * g->nsig + i];
				}
				ev->metadata = m;
				ev->metadata_len = ml;
			}
		}
	}
	b->events = evs;
	/* the events point into the duration columns: the Inspector owns them
	 * now, and the debug events of every run */
	owned_block *od = etc_arena_alloc(a, 3, sizeof *od);
	block_debug *bd = &in->bdbg[b - in->blocks];
	uint32_t *off = etc_arena_alloc(a, g->nsig ? g->nsig : 1, sizeof *off);
	if (!od || !off)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	if (g->nsig && g->dbg_off)
		memcpy(off, g->dbg_off, g->nsig * sizeof *off);
	bd->off = off;
	bd->total = g->dbg_total;
	bd->ev = g->dbg_ev;
	od[0] = (owned_block){&od[1], g->dur};
	od[1] = (owned_block){&od[2], g->start};
	od[2] = (owned_block){in->owned, g->dbg_ev};
	in->owned = od;
	g->dur = NULL;
	g->start = NULL;
	g->dbg_ev = NULL;
	return 0;
}

/* --- public --------------------------------------------------------------- */

static int bad_time_scale(const char *field, int value, const char *range, etc_error *err)
{
	return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
	                "etc_inspector_options.%s: %d is not an etc_time_scale (%s)", field, value,
	                range);
}

int etc_inspector_create(etc_inspector **out, const etc_etdump *dump, const etc_debug_buffer *buf,
                         const etc_inspector_options *opt, etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !dump)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_inspector_create: NULL argument");
	etc_inspector_options o;
	if (opt)
		o = *opt;
	else
		etc_inspector_options_init(&o);
	if (o.source_time_scale < 0 || o.source_time_scale > ETC_TIME_CYCLES)
		return bad_time_scale("source_time_scale", o.source_time_scale, "0-4", err);
	if (o.target_time_scale < 0 || o.target_time_scale > ETC_TIME_CYCLES)
		return bad_time_scale("target_time_scale", o.target_time_scale, "0-4", err);
	if (o.delegate_time_scale < -1 || o.delegate_time_scale > ETC_TIME_CYCLES)
		return bad_time_scale("delegate_time_scale", o.delegate_time_scale,
		                      "0-4, or -1 for the source's", err);
	if ((o.source_time_scale == ETC_TIME_CYCLES) != (o.target_time_scale == ETC_TIME_CYCLES))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "for time scale in cycles both the source and the target time "
		                "scale have to be cycles");

	etc_inspector *in = calloc(1, sizeof *in);
	if (!in)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	in->dump = dump;
	in->buf = buf;
	in->opt = o;
	etc_arena_init(&in->arena);
	in->warnings = etc_arena_alloc(&in->arena, MAX_STORED_WARNINGS, sizeof(char *));

	uint32_t nruns = etc_etdump_run_count(dump);
	group **groups = calloc(nruns ? nruns : 1, sizeof *groups);
	uint32_t ngroups = 0;
	uint32_t tsize = 16;
	while (tsize < 2 * nruns)
		tsize <<= 1;
	group **table = calloc(tsize, sizeof *table);
	scratch s;
	memset(&s, 0, sizeof s);
	uint64_t budget = RESERVE_CELLS;
	int rc = etc_strtab_grow_(&in->strs, err);
	if (rc < 0)
		goto done;
	if (!groups || !table || !in->warnings) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (uint32_t r = 0; r < nruns; r++) {
		etc_run run;
		etc_etdump_run(dump, r, &run);
		if (run.event_count == 0)
			continue; /* upstream skips runs without events */
		if ((rc = etc_collate_run_(in, r, &run, &s, err)) < 0)
			goto done;
		uint64_t h = etc_run_hash_(&run, &s);
		group *g = table[h & (tsize - 1)];
		while (g && !etc_run_matches_(g, &run, &s, h))
			g = g->next_in_bucket;
		if (!g) {
			if ((rc = etc_group_create_(&run, &s, h, nruns - r, &budget, &g, err)) < 0)
				goto done;
			g->next_in_bucket = table[h & (tsize - 1)];
			table[h & (tsize - 1)] = g;
			groups[ngroups++] = g;
		}
		if ((rc = etc_add_run_(in, g, r, &run, &s, err)) < 0)
			goto done;
		/* The run is collated: its part of a mapped ETDump need not stay
		 * resident (what the events still point at, names and metadata,
		 * faults back in when read). */
		etc_etdump_release_run_(dump, r);
	}
	etc_scratch_free_(&s); /* before the events are built: the peak is lower */
	in->blocks = etc_arena_alloc(&in->arena, ngroups ? ngroups : 1, sizeof *in->blocks);
	in->bdbg = etc_arena_alloc(&in->arena, ngroups ? ngroups : 1, sizeof *in->bdbg);
	if (!in->blocks || !in->bdbg) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < ngroups; i++) {
		if ((rc = finish_group(in, groups[i], &in->blocks[i], err)) < 0)
			goto done;
		etc_group_free_(groups[i]);
		groups[i] = NULL;
	}
	in->nblocks = ngroups;
done:
	etc_scratch_free_(&s);
	etc_strtab_free_(&in->strs);
	if (groups)
		for (uint32_t i = 0; i < ngroups; i++)
			etc_group_free_(groups[i]);
	free(groups);
	free(table);
	if (rc < 0) {
		etc_inspector_free(in);
		return rc;
	}
	*out = in;
	return 0;
}

void etc_inspector_free(etc_inspector *in)
{
	if (!in)
		return;
	for (owned_block *o = in->owned; o; o = o->next)
		free(o->p);
	etc_arena_release(&in->arena);
	free(in);
}

const etc_etdump *etc_inspector_etdump(const etc_inspector *in)
{
	return in->dump;
}

const etc_debug_buffer *etc_inspector_debug_buffer(const etc_inspector *in)
{
	return in->buf;
}

const etc_inspector_options *etc_inspector_options_get(const etc_inspector *in)
{
	return &in->opt;
}

size_t etc_inspector_block_count(const etc_inspector *in)
{
	return in->nblocks;
}

const etc_event_block *etc_inspector_block(const etc_inspector *in, size_t i)
{
	return i < in->nblocks ? &in->blocks[i] : NULL;
}

bool etc_inspector_block_name_shared(const etc_inspector *in, size_t b)
{
	if (b >= in->nblocks)
		return false;
	const etc_event_block *blk = &in->blocks[b];
	for (size_t i = 0; i < in->nblocks; i++) {
		const etc_event_block *o = &in->blocks[i];
		if (i != b && o->name.len == blk->name.len &&
		    (!o->name.len || !memcmp(o->name.ptr, blk->name.ptr, o->name.len)))
			return true;
	}
	return false;
}

size_t etc_inspector_warning_count(const etc_inspector *in)
{
	return in->nwarnings;
}

const char *etc_inspector_warning(const etc_inspector *in, size_t i)
{
	if (i < in->warnings_stored)
		return in->warnings[i];
	return i < in->nwarnings ? "(further warnings not stored)" : NULL;
}

const etc_event_block *etc_inspector_block_find(const etc_inspector *insp, const char *name,
                                                size_t *index)
{
	if (!insp || !name)
		return NULL;
	size_t len = strlen(name);
	const char *hash = strrchr(name, '#');
	size_t want = SIZE_MAX;
	if (hash && hash[1] >= '0' && hash[1] <= '9' && strlen(hash + 1) < 10) {
		char *end;
		unsigned long v = strtoul(hash + 1, &end, 10);
		if (!*end) {
			want = (size_t)v;
			len = (size_t)(hash - name);
		}
	}
	for (size_t b = 0; b < insp->nblocks; b++) {
		const etc_event_block *blk = &insp->blocks[b];
		bool named = blk->name.len == len && (!len || !memcmp(blk->name.ptr, name, len));
		if (named && (want == SIZE_MAX || want == b)) {
			if (index)
				*index = b;
			return blk;
		}
	}
	/* a name that itself holds "#digits" */
	if (want != SIZE_MAX)
		for (size_t b = 0; b < insp->nblocks; b++) {
			const etc_event_block *blk = &insp->blocks[b];
			if (blk->name.len == strlen(name) &&
			    !memcmp(blk->name.ptr, name, blk->name.len)) {
				if (index)
					*index = b;
				return blk;
			}
		}
	return NULL;
}

int etc_inspector_run_debug(const etc_inspector *in, size_t block, size_t event, uint32_t run,
                            etc_value *out, uint32_t cap, uint32_t *n, etc_error *err)
{
	if (!n || (!out && cap))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_inspector_run_debug: NULL %s",
		                !n ? "n" : "out with cap > 0");
	const etc_event_block *blk = etc_inspector_block(in, block);
	if (!blk || event >= blk->event_count || run >= blk->run_count)
		return etc_fail(
		    err, ETC_ERR_USAGE, NULL, -1,
		    "etc_inspector_run_debug: block %zu, event %zu, run %u out of range", block,
		    event, run);
	const etc_inspector_event *ev = &blk->events[event];
	*n = ev->debug_count;
	if (run == 0 || !ev->debug_count) {
		for (uint32_t k = 0; k < ev->debug_count && k < cap; k++)
			out[k] = ev->debug[k];
		return 0;
	}
	const block_debug *bd = &in->bdbg[block];
	const uint32_t *at = bd->ev + (size_t)run * bd->total + bd->off[event];
	if (at[0] == NONE)
		return etc_fail(err, ETC_ERR_MISMATCH, etc_etdump_name(in->dump), -1,
		                "block \"%.*s\", event %zu (instruction %d): run %u logged another "
		                "number of intermediate outputs than run 0",
		                (int)(blk->name.len < 100 ? blk->name.len : 100), blk->name.ptr,
		                event, ev->instruction_id, run);
	for (uint32_t k = 0; k < ev->debug_count && k < cap; k++) {
		etc_event e;
		etc_etdump_event(in->dump, blk->runs[run], at[k], &e);
		out[k] = e.debug.value;
	}
	return 0;
}
