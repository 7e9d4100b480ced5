/*
 * inspector_collate.c - the per-run pass of the Inspector (steps 1 and 2 of
 * inspector.c): collates a run's events into instruction events and event
 * signatures, interns the signature strings, hashes and compares signatures,
 * and checks that logged tensors lie inside the debug buffer.
 */
#include "analysis/inspector_private.h"
#include "etcompare/text.h"

#include <stdlib.h>

/* --- hashing -------------------------------------------------------------- */

uint64_t etc_hash_str_(uint64_t h, etc_str s)
{
	uint64_t x = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < s.len; i++)
		x = (x ^ (uint8_t)s.ptr[i]) * 0x100000001b3ULL;
	return mix(mix(h, x), s.len);
}

static uint64_t hash_side(uint64_t h, const side_sig *s)
{
	if (!s->present)
		return mix(h, 0x5a5a);
	h = mix(h, s->name);
	h = mix(h, (uint32_t)s->instruction_id);
	h = mix(h, (uint32_t)s->del_int);
	return mix(h, s->del_str);
}

static uint64_t hash_sig(const event_sig *s)
{
	uint64_t h = mix(0x1234, (uint32_t)s->instruction_id);
	return hash_side(hash_side(h, &s->prof), &s->dbg);
}

static bool side_eq(const side_sig *a, const side_sig *b)
{
	if (a->present != b->present)
		return false;
	if (!a->present)
		return true;
	return a->instruction_id == b->instruction_id && a->del_int == b->del_int &&
	       a->name == b->name && a->del_str == b->del_str;
}

bool etc_sig_eq_(const event_sig *a, const event_sig *b)
{
	return a->instruction_id == b->instruction_id && side_eq(&a->prof, &b->prof) &&
	       side_eq(&a->dbg, &b->dbg);
}

/* --- interned strings ---------------------------------------------------- */

void etc_strtab_free_(strtab *t)
{
	free(t->strs);
	free(t->table);
	free(t->hashes);
	memset(t, 0, sizeof *t);
}

int etc_strtab_grow_(strtab *t, etc_error *err)
{
	uint32_t cap = t->cap ? 2 * t->cap : 256;
	etc_str *strs = realloc(t->strs, cap * sizeof *strs);
	if (strs)
		t->strs = strs;
	uint64_t *hashes = strs ? realloc(t->hashes, cap * sizeof *hashes) : NULL;
	if (hashes)
		t->hashes = hashes;
	uint32_t *table = hashes ? calloc(2 * (size_t)cap, sizeof *table) : NULL;
	if (!table)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	free(t->table);
	t->table = table;
	t->cap = cap;
	t->mask = 2 * cap - 1;
	if (t->n == 0) {
		t->strs[0] = (etc_str){"", 0};
		t->hashes[0] = 0;
		t->n = 1;
	}
	for (uint32_t id = 1; id < t->n; id++) {
		uint32_t i = (uint32_t)t->hashes[id] & t->mask;
		while (t->table[i])
			i = (i + 1) & t->mask;
		t->table[i] = id;
	}
	return 0;
}

/* The id of string s (0 for ""), added when new. */
static int intern(strtab *t, etc_str s, uint32_t *id, etc_error *err)
{
	*id = 0;
	if (s.len == 0)
		return 0;
	if (t->n + 1 >= t->cap)
		ETC_TRY(etc_strtab_grow_(t, err));
	uint64_t h = etc_hash_str_(0x51, s);
	uint32_t i = (uint32_t)h & t->mask;
	for (; t->table[i]; i = (i + 1) & t->mask) {
		uint32_t k = t->table[i];
		if (t->hashes[k] == h && str_eq(t->strs[k], s)) {
			*id = k;
			return 0;
		}
	}
	uint32_t k = t->n++;
	t->strs[k] = s;
	t->hashes[k] = h;
	t->table[i] = k;
	*id = k;
	return 0;
}

/* --- debug values ---------------------------------------------------------- */

/* Checks every tensor of `v` lies inside the debug buffer. */
static int check_value_tensors(etc_inspector *in, const etc_value *v, const etc_debug_buffer *buf,
                               etc_error *err)
{
	for (uint32_t i = 0; i < v->tensor_count; i++) {
		etc_tensor t;
		etc_error local;
		int rc = etc_value_tensor(v, i, buf, &t, &local);
		if (rc == ETC_ERR_UNSUPPORTED) {
			/* The profile is still worth showing: say so, do not fail. */
			etc_warn_(in, "%s; its values are not shown", local.message);
			continue;
		}
		if (rc < 0) {
			if (err)
				*err = local;
			return rc;
		}
	}
	return 0;
}

/* --- the per-run pass ---------------------------------------------------- */

void etc_scratch_free_(scratch *s)
{
	free(s->ies);
	free(s->ie_table);
	free(s->next);
	free(s->slots);
	free(s->slot_table);
	free(s->outs);
	free(s->alloc_count);
	free(s->alloc_bytes);
	memset(s, 0, sizeof *s);
}

static int scratch_reserve(scratch *s, uint32_t n, uint32_t nallocs, etc_error *err)
{
	if (n > s->cap || !s->ies) {
		uint32_t cap = n < 16 ? 16 : n;
		uint64_t tsize = 1;
		while (tsize < 2 * (uint64_t)cap)
			tsize <<= 1;
		etc_scratch_free_(s);
		s->cap = cap;
		s->ie_mask = (uint32_t)(tsize - 1);
		s->ies = malloc(cap * sizeof *s->ies);
		s->ie_table = malloc(tsize * sizeof *s->ie_table);
		s->next = malloc(cap * sizeof *s->next);
		s->slots = malloc(cap * sizeof *s->slots);
		s->slot_table = malloc(tsize * sizeof *s->slot_table);
		s->outs = malloc(cap * sizeof *s->outs);
		if (!s->ies || !s->ie_table || !s->next || !s->slots || !s->slot_table || !s->outs)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	if (nallocs > s->alloc_cap || !s->alloc_count) {
		free(s->alloc_count);
		free(s->alloc_bytes);
		s->alloc_cap = nallocs < 4 ? 4 : nallocs;
		s->alloc_count = malloc(s->alloc_cap * sizeof *s->alloc_count);
		s->alloc_bytes = malloc(s->alloc_cap * sizeof *s->alloc_bytes);
		if (!s->alloc_count || !s->alloc_bytes)
			return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	return 0;
}

static uint32_t find_ie(scratch *s, int32_t instr, bool neg, uint64_t chain, int32_t del_int,
                        uint32_t del_str)
{
	uint64_t h = mix(mix(mix(mix(0x77, (uint32_t)instr), chain), neg), (uint32_t)del_int);
	h = mix(h, del_str);
	uint32_t i = (uint32_t)h & s->ie_mask;
	for (;;) {
		uint32_t k = s->ie_table[i];
		if (k == NONE)
			break;
		instr_event *ie = &s->ies[k];
		if (ie->hash == h && ie->instruction_id == instr && ie->chain_neg == neg &&
		    ie->chain == chain && ie->del_int == del_int && ie->del_str == del_str)
			return k;
		i = (i + 1) & s->ie_mask;
	}
	uint32_t k = s->nies++;
	instr_event *ie = &s->ies[k];
	ie->instruction_id = instr;
	ie->chain_neg = neg;
	ie->chain = chain;
	ie->del_int = del_int;
	ie->del_str = del_str;
	ie->hash = h;
	ie->prof_head = ie->prof_tail = ie->dbg_head = ie->dbg_tail = NONE;
	ie->ndbg = 0;
	s->ie_table[i] = k;
	return k;
}

static void append(scratch *s, uint32_t *head, uint32_t *tail, uint32_t e)
{
	s->next[e] = NONE;
	if (*head == NONE)
		*head = e;
	else
		s->next[*tail] = e;
	*tail = e;
}

/* Adds an event signature; true when it repeats one of the run (the latest wins). */
static bool put_slot(scratch *s, const event_sig *sig, uint32_t ie, uint32_t prof_event)
{
	uint64_t h = hash_sig(sig);
	uint32_t i = (uint32_t)h & s->ie_mask;
	for (;;) {
		uint32_t k = s->slot_table[i];
		if (k == NONE)
			break;
		slot *sl = &s->slots[k];
		if (sl->hash == h && etc_sig_eq_(&sl->sig, sig)) {
			sl->ie = ie; /* a repeated signature keeps its place, takes the latest */
			sl->prof_event = prof_event;
			return true;
		}
		i = (i + 1) & s->ie_mask;
	}
	uint32_t k = s->nslots++;
	s->slots[k].sig = *sig;
	s->slots[k].hash = h;
	s->slots[k].ie = ie;
	s->slots[k].prof_event = prof_event;
	s->slot_table[i] = k;
	return false;
}

static int side_from_profile(strtab *t, side_sig *sd, const etc_profile_event *p, etc_error *err)
{
	sd->present = true;
	sd->instruction_id = p->instruction_id;
	sd->del_int = p->delegate_debug_id_int;
	ETC_TRY(intern(t, p->name, &sd->name, err));
	return intern(t, p->delegate_debug_id_str, &sd->del_str, err);
}

static int side_from_debug(strtab *t, side_sig *sd, const etc_debug_event *d, etc_error *err)
{
	sd->present = true;
	sd->instruction_id = d->instruction_id;
	sd->del_int = d->delegate_debug_id_int;
	ETC_TRY(intern(t, d->name, &sd->name, err));
	return intern(t, d->delegate_debug_id_str, &sd->del_str, err);
}

/* Collates run `r` into s->ies and s->slots; collects outputs and allocations. */
int etc_collate_run_(etc_inspector *in, uint32_t r, const etc_run *run, scratch *s, etc_error *err)
{
	ETC_TRY(scratch_reserve(s, run->event_count, run->allocator_count, err));
	s->nies = s->nslots = s->nouts = 0;
	memset(s->ie_table, 0xff, ((size_t)s->ie_mask + 1) * sizeof *s->ie_table);
	memset(s->slot_table, 0xff, ((size_t)s->ie_mask + 1) * sizeof *s->slot_table);
	memset(s->alloc_count, 0, s->alloc_cap * sizeof *s->alloc_count);
	memset(s->alloc_bytes, 0, s->alloc_cap * sizeof *s->alloc_bytes);

	for (uint32_t e = 0; e < run->event_count; e++) {
		etc_event ev;
		etc_etdump_event(in->dump, r, e, &ev);
		if (ev.kind == ETC_EVENT_PROFILE) {
			const etc_profile_event *p = &ev.profile;
			uint32_t ds;
			ETC_TRY(intern(&in->strs, p->delegate_debug_id_str, &ds, err));
			uint32_t k = find_ie(s, p->instruction_id, p->chain_index < 0,
			                     (uint64_t)(int64_t)p->chain_index,
			                     p->delegate_debug_id_int, ds);
			append(s, &s->ies[k].prof_head, &s->ies[k].prof_tail, e);
		} else if (ev.kind == ETC_EVENT_DEBUG) {
			const etc_debug_event *d = &ev.debug;
			if (d->has_value)
				ETC_TRY(check_value_tensors(in, &d->value, in->buf, err));
			if (d->has_value && d->value.is_output) {
				s->outs[s->nouts++] = d->value;
				continue;
			}
			uint32_t ds;
			ETC_TRY(intern(&in->strs, d->delegate_debug_id_str, &ds, err));
			uint32_t k = find_ie(s, d->instruction_id, false, d->chain_index,
			                     d->delegate_debug_id_int, ds);
			append(s, &s->ies[k].dbg_head, &s->ies[k].dbg_tail, e);
			s->ies[k].ndbg++;
		} else if (ev.kind == ETC_EVENT_ALLOCATION) {
			int32_t id = ev.allocation.allocator_id;
			if (id < 1 || (uint32_t)id > run->allocator_count) {
				etc_warn_(
				    in,
				    "run %u, event %u: allocation event names allocator %d but the "
				    "run has %u allocators; the allocation is not counted",
				    r, e, id, run->allocator_count);
				continue;
			}
			s->alloc_count[id - 1]++;
			if (!etc_add_u64(s->alloc_bytes[id - 1], ev.allocation.allocation_size,
			                 &s->alloc_bytes[id - 1])) {
				s->alloc_bytes[id - 1] = UINT64_MAX;
				etc_warn_(
				    in,
				    "run %u, event %u: allocation sizes of allocator %d exceed "
				    "2^64 "
				    "bytes; its total is reported as 18446744073709551615",
				    r, e, id);
			}
		}
	}

	/* Event signatures, in instruction-event order. */
	for (uint32_t k = 0; k < s->nies; k++) {
		instr_event *ie = &s->ies[k];
		event_sig sig;
		memset(&sig, 0, sizeof sig);
		sig.instruction_id = ie->instruction_id;
		if (ie->dbg_head != NONE) {
			etc_event ev;
			etc_etdump_event(in->dump, r, ie->dbg_head, &ev);
			ETC_TRY(side_from_debug(&in->strs, &sig.dbg, &ev.debug, err));
		}
		if (ie->prof_head == NONE) {
			put_slot(s, &sig, k, NONE);
			continue;
		}
		for (uint32_t e = ie->prof_head; e != NONE; e = s->next[e]) {
			etc_event ev;
			etc_etdump_event(in->dump, r, e, &ev);
			ETC_TRY(side_from_profile(&in->strs, &sig.prof, &ev.profile, err));
			if (put_slot(s, &sig, k, e) && !in->warned_repeat) {
				/* a loop in the program (control flow): said once per ETDump */
				in->warned_repeat = true;
				char name[128];
				etc_text_escape(name, sizeof name, ev.profile.name.ptr,
				                ev.profile.name.len);
				etc_warn_(
				    in,
				    "run %u: event \"%s\" (instruction %d) occurred more than once "
				    "(a loop in the program); as upstream's Inspector, each event "
				    "keeps its latest occurrence per run, so the profile, "
				    "framework "
				    "tax, ops and delegates tables count one call of it per run "
				    "(--trace shows every call)",
				    r, name, (int)ev.profile.instruction_id);
			}
		}
	}
	return 0;
}
