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
 */
#include "etcompare/inspector.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_STORED_WARNINGS 1000

/*
 * One side (profile or debug) of an event signature. -1 / "" mean unset.
 * Strings are interned (strtab below): a signature is a few integers, hashed
 * and compared without touching the strings, 44 bytes a signature.
 */
typedef struct side_sig {
	bool present;
	uint32_t name; /* strtab id */
	int32_t instruction_id;
	int32_t del_int;
	uint32_t del_str; /* strtab id */
} side_sig;

typedef struct event_sig {
	int32_t instruction_id;
	side_sig prof, dbg;
} event_sig;

/* Per-run scratch: an instruction event. */
typedef struct instr_event {
	int32_t instruction_id, del_int;
	bool chain_neg; /* profile chain_index < 0 (never equal to a debug chain) */
	uint64_t chain;
	uint32_t del_str; /* strtab id */
	uint64_t hash;
	uint32_t prof_head, prof_tail, dbg_head, dbg_tail, ndbg;
} instr_event;

/* Per-run scratch: a slot of the ordered signature map. */
typedef struct slot {
	event_sig sig;
	uint64_t hash;
	uint32_t ie;
	uint32_t prof_event; /* NONE when no profile event */
} slot;

#define NONE UINT32_MAX

typedef struct value_vec {
	etc_value *v;
	size_t n, cap;
} value_vec;

/* A block under construction. */
typedef struct group {
	etc_str name;
	int32_t bidx;
	uint32_t nsig;
	event_sig *sigs;
	uint64_t hash;
	uint32_t nruns, cap;
	uint32_t first_cap; /* runs the first allocation holds */
	uint32_t *runs;
	double *dur;          /* [sig][cap]: the events' raw durations, moved, not copied */
	uint64_t *start;      /* [sig][cap] */
	const uint8_t **meta; /* [run][sig], allocated on first metadata */
	uint32_t *meta_len;
	etc_value **debug; /* per sig: first run's debug values */
	uint32_t *ndebug;
	uint32_t *first_event;
	value_vec outputs;
	uint32_t *output_start; /* nruns + 1 */
	etc_allocator_usage *allocs;
	size_t nallocs, allocs_cap;
	uint32_t *alloc_start; /* nruns + 1 */
	struct group *next_in_bucket;
} group;

/* A heap block the finished events point into, freed with the Inspector. */
typedef struct owned_block {
	struct owned_block *next;
	void *p;
} owned_block;

/*
 * Interned strings: id k stands for strs[k], id 0 for "". Built while the
 * Inspector is created and freed after it (the events keep the etc_str).
 */
typedef struct strtab {
	etc_str *strs;
	uint32_t n, cap;
	uint32_t *table;  /* open addressing: id, or 0 for an empty slot */
	uint64_t *hashes; /* per id */
	uint32_t mask;
} strtab;

struct etc_inspector {
	owned_block *owned;
	strtab strs;
	const etc_etdump *dump;
	const etc_debug_buffer *buf;
	etc_inspector_options opt;
	etc_arena arena;
	etc_event_block *blocks;
	size_t nblocks;
	char **warnings;
	size_t nwarnings, warnings_stored;
	const etc_etrecord *rec;
	const char *rec_method;
};

static const double time_scale_factor[] = {1e9, 1e6, 1e3, 1, 1};
static const char *const time_scale_names[] = {"ns", "us", "ms", "s", "cycles"};

const char *etc_time_scale_name(int s)
{
	return s >= 0 && s <= ETC_TIME_CYCLES ? time_scale_names[s] : "?";
}

int etc_time_scale_parse(const char *name, int *out)
{
	for (int i = 0; i <= ETC_TIME_CYCLES; i++)
		if (name && strcmp(name, time_scale_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return ETC_ERR_USAGE;
}

void etc_inspector_options_init(etc_inspector_options *opt)
{
	opt->source_time_scale = ETC_TIME_NS;
	opt->target_time_scale = ETC_TIME_MS;
	opt->strict = false;
	opt->delegate_time_scale = -1;
	opt->delegate_time_scale_of = NULL;
	opt->delegate_time_scale_ctx = NULL;
}

/* The unit the delegated events of an instruction were logged in. */
static int delegate_unit(const etc_inspector_options *o, int32_t instruction_id)
{
	int u = o->delegate_time_scale_of
	            ? o->delegate_time_scale_of(o->delegate_time_scale_ctx, instruction_id)
	            : -1;
	if (u < 0 || u > ETC_TIME_CYCLES)
		u = o->delegate_time_scale;
	return u >= 0 && u <= ETC_TIME_CYCLES ? u : o->source_time_scale;
}

/* The unit a duration logged in `unit` is shown in: the target, when it converts. */
static int shown_unit(const etc_inspector_options *o, int unit)
{
	bool cycles = unit == ETC_TIME_CYCLES;
	return cycles == (o->target_time_scale == ETC_TIME_CYCLES) ? o->target_time_scale : unit;
}

/* --- hashing -------------------------------------------------------------- */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static uint64_t hash_str(uint64_t h, etc_str s)
{
	uint64_t x = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < s.len; i++)
		x = (x ^ (uint8_t)s.ptr[i]) * 0x100000001b3ULL;
	return mix(mix(h, x), s.len);
}

static inline bool str_eq(etc_str a, etc_str b)
{
	return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
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

static bool sig_eq(const event_sig *a, const event_sig *b)
{
	return a->instruction_id == b->instruction_id && side_eq(&a->prof, &b->prof) &&
	       side_eq(&a->dbg, &b->dbg);
}

/* --- warnings ------------------------------------------------------------- */

/* --- interned strings ---------------------------------------------------- */

static void strtab_free(strtab *t)
{
	free(t->strs);
	free(t->table);
	free(t->hashes);
	memset(t, 0, sizeof *t);
}

static int strtab_grow(strtab *t, etc_error *err)
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
		ETC_TRY(strtab_grow(t, err));
	uint64_t h = hash_str(0x51, s);
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

static void warn(etc_inspector *in, const char *fmt, ...) ETC_PRINTF(2, 3);
static void warn(etc_inspector *in, const char *fmt, ...)
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

/* --- value comparison ------------------------------------------------------ */

/*
 * memcmp(a, b, n) == 0 for the large tensors of merged runs: those of a
 * later run are usually fresh from the page cache, so each side is
 * requested PREFETCH_AHEAD bytes ahead (the hardware prefetchers stop at
 * page boundaries) and the blocks are compared with memcmp.
 */
#define PREFETCH_AHEAD 2048
#define EQUAL_BLOCK    1024

static bool bytes_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + EQUAL_BLOCK <= n; i += EQUAL_BLOCK) {
		for (size_t k = 0; k < EQUAL_BLOCK; k += 64) {
			__builtin_prefetch(a + i + k + PREFETCH_AHEAD);
			__builtin_prefetch(b + i + k + PREFETCH_AHEAD);
		}
		if (memcmp(a + i, b + i, EQUAL_BLOCK) != 0)
			return false;
	}
	return memcmp(a + i, b + i, n - i) == 0;
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
			warn(in, "%s; its values are not shown", local.message);
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

/* --- durations ------------------------------------------------------------ */

static int duration(const etc_inspector *in, uint32_t run, uint32_t e, const etc_profile_event *p,
                    bool delegated, double *out, etc_error *err)
{
	uint64_t s = p->start_time, t = p->end_time, elapsed;
	const uint64_t max32 = 0xffffffffULL;
	if (s > t) {
		char what[96];
		if (p->name.len)
			snprintf(what, sizeof what, "%.*s", (int)p->name.len, p->name.ptr);
		else if (p->delegate_debug_id_int != -1)
			snprintf(what, sizeof what, "delegate id %d", p->delegate_debug_id_int);
		else
			snprintf(what, sizeof what, "delegate id \"%.*s\"",
			         (int)p->delegate_debug_id_str.len, p->delegate_debug_id_str.ptr);
		if (s > max32 || t > max32)
			return etc_fail(
			    err, ETC_ERR_FORMAT, etc_etdump_name(in->dump),
			    (int64_t)etc_etdump_event_offset(in->dump, run, e),
			    "run %u, event %u (%s): start_time %llu is after end_time "
			    "%llu and they do not fit in 32 bits, so this is not a clock "
			    "wrap",
			    run, e, what, (unsigned long long)s, (unsigned long long)t);
		/* Upstream's formula (one less than the modular difference). */
		elapsed = (max32 - s) + t;
	} else {
		elapsed = t - s;
	}
	if (delegated) {
		/* upstream's converter scales both timestamps, then subtracts */
		int unit = delegate_unit(&in->opt, p->instruction_id);
		double f = time_scale_factor[unit] / time_scale_factor[shown_unit(&in->opt, unit)];
		*out = s <= t ? (double)t / f - (double)s / f : (double)elapsed / f;
	} else {
		double factor = time_scale_factor[in->opt.source_time_scale] /
		                time_scale_factor[in->opt.target_time_scale];
		*out = (double)elapsed / factor;
	}
	return 0;
}

/* --- groups --------------------------------------------------------------- */

static void group_free(group *g)
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

/* --- the per-run pass ---------------------------------------------------- */

typedef struct scratch {
	uint32_t cap; /* events the arrays below can hold */
	instr_event *ies;
	uint32_t nies;
	uint32_t *ie_table; /* open addressing, 2*cap slots rounded to pow2 */
	uint32_t ie_mask;
	uint32_t *next; /* per event: next event in its list */
	slot *slots;
	uint32_t nslots;
	uint32_t *slot_table;
	etc_value *outs; /* this run's program outputs */
	uint32_t nouts;
	uint64_t *alloc_count, *alloc_bytes; /* per allocator of this run */
	uint32_t alloc_cap;
} scratch;

static void scratch_free(scratch *s)
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
		scratch_free(s);
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

static void put_slot(scratch *s, const event_sig *sig, uint32_t ie, uint32_t prof_event)
{
	uint64_t h = hash_sig(sig);
	uint32_t i = (uint32_t)h & s->ie_mask;
	for (;;) {
		uint32_t k = s->slot_table[i];
		if (k == NONE)
			break;
		slot *sl = &s->slots[k];
		if (sl->hash == h && sig_eq(&sl->sig, sig)) {
			sl->ie = ie; /* a repeated signature keeps its place, takes the latest */
			sl->prof_event = prof_event;
			return;
		}
		i = (i + 1) & s->ie_mask;
	}
	uint32_t k = s->nslots++;
	s->slots[k].sig = *sig;
	s->slots[k].hash = h;
	s->slots[k].ie = ie;
	s->slots[k].prof_event = prof_event;
	s->slot_table[i] = k;
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
static int collate_run(etc_inspector *in, uint32_t r, const etc_run *run, scratch *s,
                       etc_error *err)
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
				warn(
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
				warn(in,
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
			put_slot(s, &sig, k, e);
		}
	}
	return 0;
}

static uint64_t run_hash(const etc_run *run, const scratch *s)
{
	uint64_t h = hash_str(mix(0xabc, (uint32_t)run->bundled_input_index), run->name);
	for (uint32_t i = 0; i < s->nslots; i++)
		h = mix(h, s->slots[i].hash);
	return mix(h, s->nslots);
}

static bool run_matches(const group *g, const etc_run *run, const scratch *s, uint64_t h)
{
	if (g->hash != h || g->bidx != run->bundled_input_index || g->nsig != s->nslots ||
	    !str_eq(g->name, run->name))
		return false;
	for (uint32_t i = 0; i < s->nslots; i++)
		if (!sig_eq(&g->sigs[i], &s->slots[i].sig))
			return false;
	return true;
}

/*
 * Cells of durations (one per signature and run) that groups may reserve
 * for runs still to come, all groups together: a group reserves room for
 * every run left in the ETDump while this budget lasts (the usual case: one
 * block takes every run, with no regrowth and no waste), else it starts
 * with 4 runs and doubles. Many distinct blocks then cost no more than
 * their runs.
 */
#define RESERVE_CELLS ((uint64_t)1 << 22)

static int group_create(const etc_run *run, const scratch *s, uint64_t h, uint32_t runs_left,
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
		group_free(g);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (uint32_t i = 0; i < g->nsig; i++)
		g->sigs[i] = s->slots[i].sig;
	*out = g;
	return 0;
}

static int add_run(etc_inspector *in, group *g, uint32_t r, const etc_run *run, scratch *s,
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
			ETC_TRY(
			    duration(in, r, sl->prof_event, p, delegated, &dur[i * stride], err));
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
			warn(in,
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
			warn(
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
			ev->time_scale =
			    shown_unit(&in->opt, delegate_unit(&in->opt, ev->instruction_id));
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
	/* the events point into the duration columns: the Inspector owns them now */
	owned_block *od = etc_arena_alloc(a, 2, sizeof *od);
	if (!od)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	od[0] = (owned_block){&od[1], g->dur};
	od[1] = (owned_block){in->owned, g->start};
	in->owned = od;
	g->dur = NULL;
	g->start = NULL;
	return 0;
}

/* --- public --------------------------------------------------------------- */

int etc_inspector_create(etc_inspector **out, const etc_etdump *dump, const etc_debug_buffer *buf,
                         const etc_inspector_options *opt, etc_error *err)
{
	if (!out || !dump)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_inspector_create: NULL argument");
	etc_inspector_options o;
	if (opt)
		o = *opt;
	else
		etc_inspector_options_init(&o);
	if (o.source_time_scale < 0 || o.source_time_scale > ETC_TIME_CYCLES ||
	    o.target_time_scale < 0 || o.target_time_scale > ETC_TIME_CYCLES ||
	    o.delegate_time_scale < -1 || o.delegate_time_scale > ETC_TIME_CYCLES)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "invalid time scale");
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
	int rc = strtab_grow(&in->strs, err);
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
		if ((rc = collate_run(in, r, &run, &s, err)) < 0)
			goto done;
		uint64_t h = run_hash(&run, &s);
		group *g = table[h & (tsize - 1)];
		while (g && !run_matches(g, &run, &s, h))
			g = g->next_in_bucket;
		if (!g) {
			if ((rc = group_create(&run, &s, h, nruns - r, &budget, &g, err)) < 0)
				goto done;
			g->next_in_bucket = table[h & (tsize - 1)];
			table[h & (tsize - 1)] = g;
			groups[ngroups++] = g;
		}
		if ((rc = add_run(in, g, r, &run, &s, err)) < 0)
			goto done;
	}
	scratch_free(&s); /* before the events are built: the peak is lower */
	in->blocks = etc_arena_alloc(&in->arena, ngroups ? ngroups : 1, sizeof *in->blocks);
	if (!in->blocks) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (uint32_t i = 0; i < ngroups; i++) {
		if ((rc = finish_group(in, groups[i], &in->blocks[i], err)) < 0)
			goto done;
		group_free(groups[i]);
		groups[i] = NULL;
	}
	in->nblocks = ngroups;
done:
	scratch_free(&s);
	strtab_free(&in->strs);
	if (groups)
		for (uint32_t i = 0; i < ngroups; i++)
			group_free(groups[i]);
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

/* --- ETRecord linking ------------------------------------------------------ */

static bool is_framework_event(etc_str name)
{
	static const char *const reserved[] = {"Method::init", "Program::load_method",
	                                       "Method::execute"};
	for (size_t i = 0; i < 3; i++)
		if (name.len == strlen(reserved[i]) && memcmp(name.ptr, reserved[i], name.len) == 0)
			return true;
	return false;
}

/*
 * delegate_map[...]["delegate_map"][id], as upstream resolves it: a direct
 * lookup with the id itself, and when that misses, the last key (in map
 * order) that is a substring of str(id). JSON keys are strings, so the direct
 * lookup can only hit for string ids; int ids always take the second rule
 * (in which their exact key is one of the substrings).
 */
static bool contains(const char *hay, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	if (k > n)
		return false;
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return true;
	return false;
}

/*
 * The ids of one delegate map, hashed: key -> first and last position
 * (+1; 0 is an empty slot). A delegate can have hundreds of thousands of ids
 * and as many events; resolving each event by scanning every key would be
 * quadratic.
 */
typedef struct id_slot {
	size_t first, last;
} id_slot;

typedef struct id_index {
	const etc_delegate_info *d; /* NULL: unused slot of id_indexes */
	size_t cap;                 /* power of two */
	id_slot *slots;
	size_t max_len; /* longest key */
} id_index;

/* The indexes built during one etc_inspector_link, keyed by map. */
typedef struct id_indexes {
	id_index *tab;
	size_t cap, count;
} id_indexes;

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3u;
	return h;
}

static size_t pointer_slot(const void *p, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15u;
	return (size_t)((h ^ (h >> 29)) & (cap - 1));
}

static id_slot *id_lookup(const id_index *x, const char *key, size_t len)
{
	size_t at = (size_t)(hash_bytes(key, len) & (x->cap - 1));
	for (;; at = (at + 1) & (x->cap - 1)) {
		id_slot *sl = &x->slots[at];
		if (!sl->first)
			return sl;
		const char *k = x->d->ids[sl->first - 1];
		if (strlen(k) == len && memcmp(k, key, len) == 0)
			return sl;
	}
}

static int id_index_build(id_index *x, const etc_delegate_info *d)
{
	x->d = d;
	x->cap = 16;
	while (x->cap < 2 * d->id_count)
		x->cap <<= 1;
	x->slots = calloc(x->cap, sizeof *x->slots);
	if (!x->slots)
		return ETC_ERR_NOMEM;
	for (size_t i = 0; i < d->id_count; i++) {
		size_t len = strlen(d->ids[i]);
		id_slot *sl = id_lookup(x, d->ids[i], len);
		if (!sl->first)
			sl->first = i + 1;
		sl->last = i + 1;
		if (len > x->max_len)
			x->max_len = len;
	}
	return 0;
}

static void id_indexes_free(id_indexes *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->tab[i].slots);
	free(t->tab);
}

/* The index of `d`, built on first use; NULL when out of memory. */
static const id_index *id_indexes_get(id_indexes *t, const etc_delegate_info *d)
{
	if (2 * (t->count + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		id_index *tab = calloc(cap, sizeof *tab);
		if (!tab)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->tab[i].d)
				continue;
			size_t at = pointer_slot(t->tab[i].d, cap);
			while (tab[at].d)
				at = (at + 1) & (cap - 1);
			tab[at] = t->tab[i];
		}
		free(t->tab);
		t->tab = tab;
		t->cap = cap;
	}
	size_t at = pointer_slot(d, t->cap);
	while (t->tab[at].d && t->tab[at].d != d)
		at = (at + 1) & (t->cap - 1);
	if (!t->tab[at].d) {
		if (id_index_build(&t->tab[at], d) < 0) {
			t->tab[at].d = NULL;
			return NULL;
		}
		t->count++;
	}
	return &t->tab[at];
}

static size_t delegate_handles(const id_index *x, const etc_inspector_event *ev,
                               const int64_t **out)
{
	const etc_delegate_info *d = x->d;
	char num[16];
	const char *id;
	size_t len;
	if (ev->delegate_debug_id_int != -1) {
		len = (size_t)snprintf(num, sizeof num, "%d", ev->delegate_debug_id_int);
		id = num;
	} else {
		id = ev->delegate_debug_id_str.ptr;
		len = ev->delegate_debug_id_str.len;
	}
	*out = NULL;
	if (ev->delegate_debug_id_int == -1) {
		const id_slot *sl = id_lookup(x, id, len);
		if (sl->first) {
			*out = d->handles[sl->first - 1];
			return d->handle_counts[sl->first - 1];
		}
	}
	/* The last key that is a substring of the id: look up every substring
	 * no longer than the longest key, unless scanning the keys is cheaper. */
	size_t best = 0, kmax = x->max_len < len ? x->max_len : len;
	if (len * kmax <= d->id_count) {
		best = id_lookup(x, id, 0)->last; /* "" is a substring of every id */
		for (size_t i = 0; i < len; i++)
			for (size_t k = 1; k <= kmax && i + k <= len; k++) {
				size_t last = id_lookup(x, id + i, k)->last;
				if (last > best)
					best = last;
			}
	} else {
		for (size_t i = 0; i < d->id_count; i++)
			if (contains(id, len, d->ids[i]))
				best = i + 1;
	}
	if (!best)
		return 0;
	*out = d->handles[best - 1];
	return d->handle_counts[best - 1];
}

static int attach_nodes(etc_inspector *in, const etc_etrecord *rec, size_t m,
                        etc_inspector_event *ev, etc_error *err)
{
	size_t total = 0;
	for (uint32_t k = 0; k < ev->debug_handle_count; k++) {
		const etc_graph_node *const *nodes;
		total += etc_etrecord_nodes_for_handle(rec, m, ev->debug_handles[k], &nodes);
	}
	if (!total)
		return 0;
	const etc_graph_node **out = etc_arena_alloc(&in->arena, total, sizeof *out);
	if (!out)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	/* A handle listed twice names its nodes once. The set of nodes seen is
	 * hashed: a delegate event may carry hundreds of thousands of handles,
	 * and a pairwise check would be quadratic in them. */
	size_t cap = 16;
	while (cap < 2 * total)
		cap <<= 1;
	const etc_graph_node **seen = calloc(cap, sizeof *seen);
	if (!seen)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t at = 0;
	for (uint32_t k = 0; k < ev->debug_handle_count; k++) {
		const etc_graph_node *const *nodes;
		size_t n = etc_etrecord_nodes_for_handle(rec, m, ev->debug_handles[k], &nodes);
		for (size_t i = 0; i < n; i++) {
			size_t slot = pointer_slot(nodes[i], cap);
			while (seen[slot] && seen[slot] != nodes[i])
				slot = (slot + 1) & (cap - 1);
			if (!seen[slot]) {
				seen[slot] = nodes[i];
				out[at++] = nodes[i];
			}
		}
	}
	free(seen);
	total = at;
	ev->nodes = out;
	ev->node_count = (uint32_t)total;
	return 0;
}

int etc_inspector_link(etc_inspector *in, const etc_etrecord *rec, const char *method,
                       etc_error *err)
{
	if (!in || !rec)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_inspector_link: NULL argument");
	int m = method ? etc_etrecord_method_index(rec, method) : etc_etrecord_default_method(rec);
	if (m < 0) {
		char list[256] = "";
		for (size_t i = 0; i < etc_etrecord_method_count(rec); i++) {
			size_t l = strlen(list);
			snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "",
			         etc_etrecord_method(rec, i));
		}
		return etc_fail(err, ETC_ERR_USAGE, etc_etrecord_name(rec), -1,
		                "the ETRecord has no method \"%s\" (it has: %s)",
		                method ? method : "forward", *list ? list : "none");
	}
	bool has_map = etc_etrecord_has_handle_map(rec, (size_t)m);
	size_t with_id = 0, resolved = 0;
	id_indexes ids = {0};
	int rc = 0;
	/* Linking again replaces what an earlier call attached. */
	for (size_t b = 0; b < in->nblocks; b++) {
		etc_inspector_event *evs = (etc_inspector_event *)in->blocks[b].events;
		for (size_t e = 0; e < in->blocks[b].event_count; e++) {
			evs[e].debug_handles = NULL;
			evs[e].debug_handle_count = 0;
			evs[e].nodes = NULL;
			evs[e].node_count = 0;
			evs[e].delegate_backend_name = NULL;
			evs[e].num_outputs = -1;
		}
	}
	in->rec = NULL;
	in->rec_method = NULL;
	if (!etc_etrecord_has_program(rec, (size_t)m))
		warn(in,
		     "the ETRecord has no Edge program for method \"%s\": events get debug "
		     "handles but no op types, stack traces or modules",
		     etc_etrecord_method(rec, (size_t)m));
	for (size_t b = 0; b < in->nblocks; b++) {
		etc_event_block *blk = &in->blocks[b];
		etc_inspector_event *evs = (etc_inspector_event *)blk->events;
		for (size_t e = 0; e < blk->event_count; e++) {
			etc_inspector_event *ev = &evs[e];
			if (ev->instruction_id < 0 || is_framework_event(ev->name))
				continue;
			with_id++;
			ev->num_outputs =
			    etc_etrecord_num_outputs(rec, (size_t)m, ev->instruction_id);
			const etc_delegate_info *d =
			    etc_etrecord_delegate(rec, (size_t)m, ev->instruction_id);
			bool found;
			const int64_t *h;
			size_t n = etc_etrecord_debug_handles(rec, (size_t)m, ev->instruction_id,
			                                      &h, &found);
			if (!found) {
				if (has_map)
					warn(in,
					     "block \"%.*s\", event %zu (%.*s): instruction %d has "
					     "no "
					     "entry in the ETRecord's debug_handle_map",
					     (int)blk->name.len, blk->name.ptr, e,
					     (int)ev->name.len, ev->name.ptr, ev->instruction_id);
				continue;
			}
			resolved++;
			if (!ev->is_delegated_op) {
				if (d && ev->name.len == 13 &&
				    memcmp(ev->name.ptr, "DELEGATE_CALL", 13) == 0)
					ev->delegate_backend_name = d->backend;
			} else if (!d) {
				warn(in,
				     "block \"%.*s\", event %zu (%.*s): no delegate_map entry for "
				     "instruction %d; using its debug_handle_map entry",
				     (int)blk->name.len, blk->name.ptr, e, (int)ev->name.len,
				     ev->name.ptr, ev->instruction_id);
			} else {
				ev->delegate_backend_name = d->backend;
				const id_index *x = id_indexes_get(&ids, d);
				if (!x) {
					rc =
					    etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
					goto done;
				}
				n = delegate_handles(x, ev, &h);
			}
			ev->debug_handles = h;
			ev->debug_handle_count = (uint32_t)n;
			if ((rc = attach_nodes(in, rec, (size_t)m, ev, err)) < 0)
				goto done;
		}
	}
	id_indexes_free(&ids);
	ids = (id_indexes){0};
	if (has_map && with_id && !resolved)
		return etc_fail(err, ETC_ERR_MISMATCH, etc_etrecord_name(rec), -1,
		                "the ETRecord does not belong to this ETDump: none of the %zu "
		                "events' instruction ids appears in its debug_handle_map "
		                "(method \"%s\")",
		                with_id, etc_etrecord_method(rec, (size_t)m));
	if (!has_map && with_id)
		warn(in,
		     "the ETRecord's debug_handle_map for method \"%s\" is empty: events are "
		     "not linked to graph nodes",
		     etc_etrecord_method(rec, (size_t)m));
	in->rec = rec;
	in->rec_method = etc_etrecord_method(rec, (size_t)m);
	return 0;
done:
	id_indexes_free(&ids);
	return rc;
}

const etc_etrecord *etc_inspector_etrecord(const etc_inspector *in)
{
	return in->rec;
}

const char *etc_inspector_etrecord_method(const etc_inspector *in)
{
	return in->rec_method;
}

double etc_inspector_module_total(const etc_inspector *in, const char *module_name, size_t *count)
{
	double total = 0;
	size_t n = 0;
	for (size_t b = 0; b < in->nblocks; b++) {
		const etc_event_block *blk = &in->blocks[b];
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (ev->name.len == 13 && memcmp(ev->name.ptr, "OPERATOR_CALL", 13) == 0)
				continue;
			bool found = false;
			for (uint32_t k = 0; k < ev->node_count && !found; k++) {
				const etc_graph_node *nd = ev->nodes[k];
				for (uint32_t f = 0; f < nd->module_depth && !found; f++)
					found = strstr(nd->modules[f].key, module_name) != NULL;
			}
			if (found && ev->has_perf) {
				total += ev->stats.avg;
				n++;
			}
		}
	}
	if (count)
		*count = n;
	return total;
}
