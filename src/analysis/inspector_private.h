/*
 * inspector_private.h - what the Inspector's files share: the Inspector
 * itself, the event signatures, the interned strings, the per-run scratch
 * and the blocks under construction, and the functions that cross files.
 * inspector.c builds the blocks, inspector_collate.c collates one run,
 * inspector_merge.c merges runs into groups, inspector_time.c converts
 * durations, inspector_link.c links the events to an ETRecord.
 */
#ifndef ETC_INSPECTOR_PRIVATE_H
#define ETC_INSPECTOR_PRIVATE_H

#include "etcompare/inspector.h"
#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	/* the debug events of every run, for the numeric gap of any run: run k's
	 * event indices of sig i are dbg_ev[k * dbg_total + dbg_off[i] ..] (NONE
	 * when run k logged another count than run 0); 4 bytes a debug event */
	uint32_t *dbg_off; /* per sig */
	uint32_t dbg_total;
	uint32_t *dbg_ev;
	uint32_t dbg_cap; /* runs dbg_ev holds */
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

/* A finished block's debug events of every run (group.dbg_*). */
typedef struct block_debug {
	const uint32_t *off; /* per event */
	uint32_t total;
	const uint32_t *ev; /* [run][total] */
} block_debug;

struct etc_inspector {
	bool warned_repeat; /* an event signature repeated within a run: said once */
	owned_block *owned;
	block_debug *bdbg; /* per block */
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

/*
 * Cells of durations (one per signature and run) that groups may reserve
 * for runs still to come, all groups together: a group reserves room for
 * every run left in the ETDump while this budget lasts (the usual case: one
 * block takes every run, with no regrowth and no waste), else it starts
 * with 4 runs and doubles. Many distinct blocks then cost no more than
 * their runs.
 */
#define RESERVE_CELLS ((uint64_t)1 << 22)

/* --- hashing (the rest in inspector_collate.c) -------------------------- */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static inline bool str_eq(etc_str a, etc_str b)
{
	return a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

uint64_t etc_hash_str_(uint64_t h, etc_str s);
bool etc_sig_eq_(const event_sig *a, const event_sig *b);

/* --- interned strings (inspector_collate.c) -------------------------------- */

void etc_strtab_free_(strtab *t);
int etc_strtab_grow_(strtab *t, etc_error *err);

/* --- the per-run pass (inspector_collate.c) -------------------------------- */

void etc_scratch_free_(scratch *s);
/* Collates run `r` into s->ies and s->slots; collects outputs and allocations. */
int etc_collate_run_(etc_inspector *in, uint32_t r, const etc_run *run, scratch *s, etc_error *err);

/* --- groups (inspector_merge.c) -------------------------------------------- */

void etc_group_free_(group *g);
uint64_t etc_run_hash_(const etc_run *run, const scratch *s);
bool etc_run_matches_(const group *g, const etc_run *run, const scratch *s, uint64_t h);
int etc_group_create_(const etc_run *run, const scratch *s, uint64_t h, uint32_t runs_left,
                      uint64_t *budget, group **out, etc_error *err);
int etc_add_run_(etc_inspector *in, group *g, uint32_t r, const etc_run *run, scratch *s,
                 etc_error *err);

/* --- time scales and durations (inspector_time.c) -------------------------- */

/* The unit the delegated events of an instruction were logged in. */
int etc_delegate_unit_(const etc_inspector_options *o, int32_t instruction_id);
/* The unit a duration logged in `unit` is shown in: the target, when it converts. */
int etc_shown_unit_(const etc_inspector_options *o, int unit);
int etc_duration_(const etc_inspector *in, uint32_t run, uint32_t e, const etc_profile_event *p,
                  bool delegated, double *out, etc_error *err);

/* --- warnings (inspector.c) ------------------------------------------------ */

void etc_warn_(etc_inspector *in, const char *fmt, ...) ETC_PRINTF(2, 3);

#endif
