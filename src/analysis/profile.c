/*
 * profile.c - the profiling summaries of include/etcompare/profile.h,
 * computed from an inspector's EventBlocks: framework tax per run, memory
 * per allocator, operators, modules and delegate backends.
 *
 * Every summary is one pass over the events (and their per-run durations)
 * with open-addressing hash tables for names, then a sort of the result
 * rows; the operators' p50 takes one sort of their samples. All memory
 * comes from one arena released by etc_profile_free.
 */
#include "etcompare/profile.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct etc_profile {
	const etc_inspector *insp;
	etc_arena arena;
	double exec_total;     /* sum over runs of Method::execute, NaN when none */
	double exec_avg_total; /* sum over blocks of Method::execute's average */
	etc_tax_row *tax;
	size_t ntax;
	etc_tax_summary *taxsum;
	size_t ntaxsum;
	etc_memory_row *mem;
	size_t nmem;
	etc_op_row *ops;
	size_t nops;
	bool ops_by_type;
	etc_module_row *mods;
	size_t nmods;
	etc_delegate_row *dels;
	size_t ndels;
	bool mods_delegated; /* a module total includes a backend-clock duration */
};

static const struct {
	unsigned bit;
	const char *name;
} table_names[] = {{ETC_TABLE_PROFILE, "profile"}, {ETC_TABLE_TAX, "tax"},
                   {ETC_TABLE_MEMORY, "memory"},   {ETC_TABLE_OPS, "ops"},
                   {ETC_TABLE_MODULES, "modules"}, {ETC_TABLE_DELEGATES, "delegates"}};
#define NTABLES (sizeof table_names / sizeof table_names[0])

int etc_profile_tables_parse(const char *list, unsigned *mask)
{
	*mask = 0;
	if (!list || !*list)
		return ETC_ERR_USAGE;
	const char *p = list;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		unsigned bit = 0;
		if (n == 3 && !memcmp(p, "all", 3))
			bit = ETC_TABLE_ALL;
		for (size_t i = 0; i < NTABLES && !bit; i++)
			if (strlen(table_names[i].name) == n && !memcmp(table_names[i].name, p, n))
				bit = table_names[i].bit;
		if (!bit)
			return ETC_ERR_USAGE;
		*mask |= bit;
		if (!e)
			return 0;
		p = e + 1;
	}
}

const char *etc_profile_table_name(unsigned bit)
{
	for (size_t i = 0; i < NTABLES; i++)
		if (table_names[i].bit == bit)
			return table_names[i].name;
	return NULL;
}

/* --- event classes ---------------------------------------------------------- */

static bool name_is(etc_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.ptr, lit, n) == 0;
}

static bool name_starts(etc_str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len >= n && memcmp(s.ptr, lit, n) == 0;
}

static bool is_framework(etc_str s)
{
	return name_starts(s, "Method::") || name_is(s, "Program::load_method");
}

/* What a block's events are, for the framework tax and the operators. */
typedef struct block_info {
	long exec;       /* event index of Method::execute, -1 when none */
	bool has_native; /* some native_call_* event */
	/* the instructions with a native_call_* event, ascending (malloc'ed) */
	int32_t *native;
	size_t nnative;
} block_info;

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static int classify(const etc_event_block *b, block_info *bi, etc_error *err)
{
	bi->exec = -1;
	bi->has_native = false;
	bi->nnative = 0;
	bi->native = malloc((b->event_count ? b->event_count : 1) * sizeof *bi->native);
	if (!bi->native)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t e = 0; e < b->event_count; e++) {
		const etc_inspector_event *ev = &b->events[e];
		if (!ev->has_perf || ev->is_delegated_op)
			continue;
		if (bi->exec < 0 && name_is(ev->name, "Method::execute"))
			bi->exec = (long)e;
		if (name_starts(ev->name, "native_call_")) {
			bi->has_native = true;
			bi->native[bi->nnative++] = ev->instruction_id;
		}
	}
	qsort(bi->native, bi->nnative, sizeof *bi->native, cmp_i32);
	return 0;
}

/* Whether an OPERATOR_CALL's instruction also logged its kernel (native_call_*). */
static bool has_native_call(const etc_inspector_event *ev, const block_info *bi)
{
	int32_t id = ev->instruction_id;
	return bi->nnative && bsearch(&id, bi->native, bi->nnative, sizeof id, cmp_i32);
}

/*
 * Operator time of the framework, per instruction: its native_call_* event,
 * else its OPERATOR_CALL (a prim op or a kernel registered without codegen
 * logs only that one).
 */
static bool is_operator_time(const etc_inspector_event *ev, const block_info *bi)
{
	if (!ev->has_perf || ev->is_delegated_op)
		return false;
	if (name_starts(ev->name, "native_call_"))
		return true;
	return name_is(ev->name, "OPERATOR_CALL") && !has_native_call(ev, bi);
}

static bool is_delegate_call(const etc_inspector_event *ev)
{
	return ev->has_perf && !ev->is_delegated_op && name_is(ev->name, "DELEGATE_CALL");
}

/* --- a string -> index hash table ------------------------------------------- */

typedef struct strmap {
	uint32_t *slot; /* index + 1, 0 = empty */
	uint64_t *hash;
	size_t mask;
} strmap;

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int strmap_init(strmap *m, etc_arena *a, size_t max_keys, etc_error *err)
{
	size_t cap = 16;
	while (cap < 2 * max_keys + 2)
		cap *= 2;
	m->slot = etc_arena_alloc(a, cap, sizeof *m->slot);
	m->hash = etc_arena_alloc(a, cap, sizeof *m->hash);
	m->mask = cap - 1;
	if (!m->slot || !m->hash)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	return 0;
}

/*
 * Finds `s` among the keys (key_of(ctx, i) gives key i); returns its index,
 * or -1 after noting in *slot_out where to insert it.
 */
static long strmap_find(const strmap *m, const char *s, size_t n, uint64_t h,
                        const char *(*key_of)(const void *, size_t), const void *ctx,
                        size_t *slot_out)
{
	size_t i = (size_t)h & m->mask;
	while (m->slot[i]) {
		size_t k = m->slot[i] - 1;
		if (m->hash[i] == h) {
			const char *key = key_of(ctx, k);
			if (strlen(key) == n && memcmp(key, s, n) == 0)
				return (long)k;
		}
		i = (i + 1) & m->mask;
	}
	*slot_out = i;
	return -1;
}

static void strmap_put(strmap *m, size_t slot, uint64_t h, size_t index)
{
	m->slot[slot] = (uint32_t)index + 1;
	m->hash[slot] = h;
}

/* --- framework tax ------------------------------------------------------------ */

static int compute_tax(etc_profile *p, const block_info *bis, etc_error *err)
{
	const etc_inspector *in = p->insp;
	size_t nb = etc_inspector_block_count(in), rows = 0, blocks = 0;
	for (size_t b = 0; b < nb; b++)
		if (bis[b].exec >= 0) {
			rows += etc_inspector_block(in, b)->run_count;
			blocks++;
		}
	p->exec_total = blocks ? 0 : NAN;
	p->exec_avg_total = blocks ? 0 : NAN;
	if (!blocks)
		return 0;
	p->tax = etc_arena_alloc(&p->arena, rows, sizeof *p->tax);
	p->taxsum = etc_arena_alloc(&p->arena, blocks, sizeof *p->taxsum);
	double *scratch = malloc(2 * rows * sizeof *scratch);
	if (!p->tax || !p->taxsum || !scratch) {
		free(scratch);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	for (size_t b = 0; b < nb; b++) {
		if (bis[b].exec < 0)
			continue;
		const etc_event_block *blk = etc_inspector_block(in, b);
		const etc_inspector_event *exec = &blk->events[bis[b].exec];
		etc_tax_row *r = &p->tax[p->ntax];
		for (uint32_t k = 0; k < blk->run_count; k++) {
			r[k].block = b;
			r[k].run = k;
			r[k].etdump_run = blk->runs[k];
			r[k].execute = exec->raw[k];
			r[k].operator_call_fallback = !bis[b].has_native;
		}
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			bool op = is_operator_time(ev, &bis[b]), dc = !op && is_delegate_call(ev);
			if (!op && !dc)
				continue;
			for (uint32_t k = 0; k < blk->run_count; k++) {
				if (op)
					r[k].operators += ev->raw[k];
				else
					r[k].delegate_calls += ev->raw[k];
			}
		}
		etc_tax_summary *s = &p->taxsum[p->ntaxsum++];
		s->block = b;
		s->runs = blk->run_count;
		s->first_row = p->ntax;
		s->mean.block = b;
		s->mean.run = UINT32_MAX;
		s->mean.etdump_run = UINT32_MAX;
		s->mean.operator_call_fallback = !bis[b].has_native;
		double *taxes = scratch, *pcts = scratch + rows;
		for (uint32_t k = 0; k < blk->run_count; k++) {
			r[k].tax = r[k].execute - r[k].operators - r[k].delegate_calls;
			r[k].tax_percent = r[k].execute != 0 ? 100 * r[k].tax / r[k].execute : NAN;
			s->mean.execute += r[k].execute;
			s->mean.operators += r[k].operators;
			s->mean.delegate_calls += r[k].delegate_calls;
			s->mean.tax += r[k].tax;
			taxes[k] = r[k].tax;
			pcts[k] = r[k].tax_percent;
		}
		p->exec_total += s->mean.execute;
		p->exec_avg_total += exec->stats.avg;
		double n = blk->run_count;
		s->mean.execute /= n;
		s->mean.operators /= n;
		s->mean.delegate_calls /= n;
		s->mean.tax /= n;
		s->mean.tax_percent =
		    s->mean.execute != 0 ? 100 * s->mean.tax / s->mean.execute : NAN;
		etc_perf_stats_compute(taxes, blk->run_count, &s->tax_stats);
		etc_perf_stats_compute(pcts, blk->run_count, &s->pct_stats);
		p->ntax += blk->run_count;
	}
	free(scratch);
	return 0;
}

/* --- memory ------------------------------------------------------------------- */

static int compute_memory(etc_profile *p, etc_error *err)
{
	const etc_inspector *in = p->insp;
	size_t nb = etc_inspector_block_count(in), n = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		n += blk->alloc_start[blk->run_count];
	}
	if (!n)
		return 0;
	p->mem = etc_arena_alloc(&p->arena, n, sizeof *p->mem);
	if (!p->mem)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (uint32_t k = 0; k < blk->run_count; k++)
			for (uint32_t a = blk->alloc_start[k]; a < blk->alloc_start[k + 1]; a++) {
				etc_memory_row *r = &p->mem[p->nmem++];
				r->block = b;
				r->run = k;
				r->etdump_run = blk->runs[k];
				r->allocator_id = a - blk->alloc_start[k] + 1;
				r->name = blk->allocators[a].name;
				r->count = blk->allocators[a].count;
				r->bytes = blk->allocators[a].bytes;
			}
	}
	return 0;
}

/* --- operators ---------------------------------------------------------------- */

static const char *op_key(const void *ctx, size_t i)
{
	return ((const etc_op_row *)ctx)[i].name;
}

/* The op types of a linked event, ", "-joined, into the arena. */
static const char *op_types(etc_arena *a, const etc_inspector_event *ev)
{
	size_t len = 0;
	for (uint32_t k = 0; k < ev->node_count; k++)
		len += strlen(ev->nodes[k]->op) + 2;
	char *s = etc_arena_alloc(a, len + 1, 1);
	if (!s)
		return NULL;
	size_t at = 0;
	for (uint32_t k = 0; k < ev->node_count; k++) {
		size_t l = strlen(ev->nodes[k]->op);
		if (k) {
			memcpy(s + at, ", ", 2);
			at += 2;
		}
		memcpy(s + at, ev->nodes[k]->op, l);
		at += l;
	}
	s[at] = '\0';
	return s;
}

static int cmp_op(const void *a, const void *b)
{
	const etc_op_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int compute_ops(etc_profile *p, const block_info *bis, etc_error *err)
{
	const etc_inspector *in = p->insp;
	size_t nb = etc_inspector_block_count(in), nev = 0;
	for (size_t b = 0; b < nb; b++)
		nev += etc_inspector_block(in, b)->event_count;
	p->ops_by_type = etc_inspector_etrecord(in) != NULL;
	if (!nev)
		return 0;
	strmap m;
	ETC_TRY(strmap_init(&m, &p->arena, nev, err));
	etc_op_row *ops = etc_arena_alloc(&p->arena, nev, sizeof *ops);
	uint32_t *of_event = malloc(nev * sizeof *of_event);
	if (!ops || !of_event) {
		free(of_event);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	/* pass 1: the op of each event and the sample count of each op */
	size_t at = 0, nops = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++, at++) {
			const etc_inspector_event *ev = &blk->events[e];
			of_event[at] = UINT32_MAX;
			if (!ev->has_perf || ev->is_delegated_op || is_framework(ev->name) ||
			    name_is(ev->name, "DELEGATE_CALL") ||
			    (name_is(ev->name, "OPERATOR_CALL") && has_native_call(ev, &bis[b])))
				continue;
			const char *name = ev->name.ptr;
			size_t len = ev->name.len;
			if (p->ops_by_type && ev->node_count) {
				if (ev->node_count == 1) {
					name = ev->nodes[0]->op;
				} else if (!(name = op_types(&p->arena, ev))) {
					free(of_event);
					return etc_fail(err, ETC_ERR_NOMEM, NULL, -1,
					                "out of memory");
				}
				len = strlen(name);
			}
			uint64_t h = hash_bytes(name, len);
			size_t slot;
			long k = strmap_find(&m, name, len, h, op_key, ops, &slot);
			if (k < 0) {
				k = (long)nops++;
				/* event names are NUL-terminated views into the ETDump */
				ops[k].name = name;
				strmap_put(&m, slot, h, (size_t)k);
			}
			ops[k].count += ev->run_count;
			of_event[at] = (uint32_t)k;
		}
	}
	/* pass 2: the samples of each op, contiguous */
	size_t *start = calloc(nops + 1, sizeof *start);
	double *samples = NULL;
	int rc = 0;
	if (!start) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < nops; k++)
		start[k + 1] = start[k] + ops[k].count;
	samples = malloc((start[nops] ? start[nops] : 1) * sizeof *samples);
	if (!samples) {
		rc = etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
		goto done;
	}
	at = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++, at++) {
			if (of_event[at] == UINT32_MAX)
				continue;
			const etc_inspector_event *ev = &blk->events[e];
			size_t k = of_event[at];
			memcpy(samples + start[k], ev->raw, ev->run_count * sizeof *samples);
			start[k] += ev->run_count;
		}
	}
	for (size_t k = 0; k < nops; k++) {
		size_t n = (size_t)ops[k].count;
		double *v = samples + start[k] - n;
		double total = 0;
		for (size_t i = 0; i < n; i++)
			total += v[i];
		ops[k].total = total;
		ops[k].mean = total / (double)n;
		ops[k].p50 = etc_percentile_select_(v, n, 50);
		ops[k].share = total / p->exec_total;
	}
	qsort(ops, nops, sizeof *ops, cmp_op);
	p->ops = ops;
	p->nops = nops;
done:
	free(start);
	free(samples);
	free(of_event);
	return rc;
}

/* --- modules ------------------------------------------------------------------ */

typedef struct mod {
	const etc_module_frame *frame;
	long parent, first_child, last_child, next_sibling;
	size_t stamp, events;
	double total;
	bool other_unit; /* counts a delegated event in another unit (cycles) */
} mod;

static const char *mod_key(const void *ctx, size_t i)
{
	return ((const mod *)ctx)[i].frame->key;
}

static int compute_modules(etc_profile *p, etc_error *err)
{
	const etc_inspector *in = p->insp;
	if (!etc_inspector_etrecord(in))
		return 0;
	size_t nb = etc_inspector_block_count(in), nframes = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++)
			for (uint32_t k = 0; k < blk->events[e].node_count; k++)
				nframes += blk->events[e].nodes[k]->module_depth;
	}
	if (!nframes)
		return 0;
	strmap m;
	ETC_TRY(strmap_init(&m, &p->arena, nframes, err));
	mod *mods = calloc(nframes, sizeof *mods);
	if (!mods)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t nmods = 0, serial = 0;
	long first_root = -1, last_root = -1;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			/* as find_total_for_module: OPERATOR_CALL never counts */
			bool counts = ev->has_perf && !name_is(ev->name, "OPERATOR_CALL");
			serial++;
			for (uint32_t k = 0; k < ev->node_count; k++) {
				const etc_graph_node *nd = ev->nodes[k];
				long parent = -1;
				for (uint32_t f = 0; f < nd->module_depth; f++) {
					const etc_module_frame *fr = &nd->modules[f];
					size_t len = strlen(fr->key), slot;
					uint64_t h = hash_bytes(fr->key, len);
					long id =
					    strmap_find(&m, fr->key, len, h, mod_key, mods, &slot);
					if (id < 0) {
						id = (long)nmods++;
						mod *md = &mods[id];
						md->frame = fr;
						md->parent = parent;
						md->first_child = md->last_child =
						    md->next_sibling = -1;
						long *head = parent < 0 ? &first_root
						                        : &mods[parent].first_child;
						long *tail = parent < 0 ? &last_root
						                        : &mods[parent].last_child;
						if (*tail >= 0)
							mods[*tail].next_sibling = id;
						else
							*head = id;
						*tail = id;
						strmap_put(&m, slot, h, (size_t)id);
					}
					if (counts && ev->is_delegated_op &&
					    ev->time_scale !=
					        etc_inspector_options_get(in)->target_time_scale) {
						p->mods_delegated = true;
						mods[id].other_unit = true;
					}
					if (counts && mods[id].stamp != serial) {
						mods[id].stamp = serial;
						mods[id].total += ev->stats.avg;
						mods[id].events++;
					}
					parent = id;
				}
			}
		}
	}
	/* find_total_for_module matches keys as substrings: a key inside
	 * another key takes that rule's total. */
	for (size_t i = 0; i < nmods; i++)
		for (size_t j = 0; j < nmods; j++)
			if (i != j && strstr(mods[j].frame->key, mods[i].frame->key)) {
				mods[i].total = etc_inspector_module_total(in, mods[i].frame->key,
				                                           &mods[i].events);
				break;
			}
	p->mods = etc_arena_alloc(&p->arena, nmods, sizeof *p->mods);
	long *row_of = malloc(nmods * sizeof *row_of);
	long *stack = malloc(nmods * sizeof *stack);
	if (!p->mods || !row_of || !stack) {
		free(mods);
		free(row_of);
		free(stack);
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	}
	/* depth-first, children in first-seen order */
	size_t sp = 0;
	long order_roots = first_root;
	while (order_roots >= 0) {
		long id = order_roots;
		order_roots = mods[id].next_sibling;
		stack[sp++] = id;
		while (sp) {
			long cur = stack[--sp];
			mod *md = &mods[cur];
			etc_module_row *row = &p->mods[p->nmods];
			row_of[cur] = (long)p->nmods++;
			row->key = md->frame->key;
			row->path = md->frame->path;
			row->type = md->frame->type;
			row->parent = md->parent < 0 ? -1 : row_of[md->parent];
			row->depth = md->parent < 0 ? 0 : p->mods[row->parent].depth + 1;
			row->events = md->events;
			row->total = md->total;
			/* a total holding another unit's numbers is no share of execute */
			row->share = md->other_unit ? NAN : md->total / p->exec_avg_total;
			/* children pushed last-first */
			size_t base = sp;
			for (long c = md->first_child; c >= 0; c = mods[c].next_sibling)
				stack[sp++] = c;
			for (size_t a = base, z = sp; a + 1 < z; a++, z--) {
				long t = stack[a];
				stack[a] = stack[z - 1];
				stack[z - 1] = t;
			}
		}
	}
	free(mods);
	free(row_of);
	free(stack);
	return 0;
}

/* --- delegates ---------------------------------------------------------------- */

static int cmp_delegate(const void *a, const void *b)
{
	const etc_delegate_row *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->backend, y->backend);
}

static const char *delegate_key(const void *ctx, size_t i)
{
	return ((const etc_delegate_row *)ctx)[i].backend;
}

static int compute_delegates(etc_profile *p, etc_error *err)
{
	const etc_inspector *in = p->insp;
	size_t nb = etc_inspector_block_count(in), cap = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++)
			cap += is_delegate_call(&blk->events[e]) ||
			       (blk->events[e].is_delegated_op && blk->events[e].has_perf);
	}
	if (!cap)
		return 0;
	strmap m;
	ETC_TRY(strmap_init(&m, &p->arena, cap, err));
	etc_delegate_row *d = etc_arena_alloc(&p->arena, cap, sizeof *d);
	if (!d)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	size_t n = 0;
	for (size_t b = 0; b < nb; b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			bool call = is_delegate_call(ev);
			if (!call && !(ev->is_delegated_op && ev->has_perf))
				continue;
			const char *name = ev->delegate_backend_name && *ev->delegate_backend_name
			                       ? ev->delegate_backend_name
			                       : "(unknown)";
			size_t len = strlen(name), slot;
			uint64_t h = hash_bytes(name, len);
			long k = strmap_find(&m, name, len, h, delegate_key, d, &slot);
			if (k < 0) {
				k = (long)n++;
				d[k].backend = name;
				strmap_put(&m, slot, h, (size_t)k);
			}
			if (!call) {
				d[k].backend_events += ev->run_count;
				continue;
			}
			d[k].calls += ev->run_count;
			for (uint32_t r = 0; r < ev->run_count; r++)
				d[k].total += ev->raw[r];
		}
	}
	for (size_t k = 0; k < n; k++) {
		d[k].mean = d[k].calls ? d[k].total / (double)d[k].calls : NAN;
		d[k].share = d[k].total / p->exec_total;
	}
	qsort(d, n, sizeof *d, cmp_delegate);
	p->dels = d;
	p->ndels = n;
	return 0;
}

/* --- the object --------------------------------------------------------------- */

int etc_profile_create(etc_profile **out, const etc_inspector *insp, etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !insp)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_profile_create: NULL argument");
	etc_profile *p = calloc(1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	p->insp = insp;
	etc_arena_init(&p->arena);
	size_t nb = etc_inspector_block_count(insp);
	block_info *bis = calloc(nb ? nb : 1, sizeof *bis);
	int rc = bis ? 0 : etc_fail(err, ETC_ERR_NOMEM, NULL, -1, "out of memory");
	for (size_t b = 0; b < nb && rc == 0; b++)
		rc = classify(etc_inspector_block(insp, b), &bis[b], err);
	if (rc == 0)
		rc = compute_tax(p, bis, err);
	if (rc == 0)
		rc = compute_memory(p, err);
	if (rc == 0)
		rc = compute_ops(p, bis, err);
	if (rc == 0)
		rc = compute_modules(p, err);
	if (rc == 0)
		rc = compute_delegates(p, err);
	for (size_t b = 0; bis && b < nb; b++)
		free(bis[b].native);
	free(bis);
	if (rc < 0) {
		etc_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void etc_profile_free(etc_profile *p)
{
	if (!p)
		return;
	etc_arena_release(&p->arena);
	free(p);
}

const etc_inspector *etc_profile_inspector(const etc_profile *p)
{
	return p->insp;
}

double etc_profile_execute_total(const etc_profile *p)
{
	return p->exec_total;
}

size_t etc_profile_tax_count(const etc_profile *p)
{
	return p->ntax;
}

const etc_tax_row *etc_profile_tax(const etc_profile *p, size_t i)
{
	return i < p->ntax ? &p->tax[i] : NULL;
}

size_t etc_profile_tax_summary_count(const etc_profile *p)
{
	return p->ntaxsum;
}

const etc_tax_summary *etc_profile_tax_summary(const etc_profile *p, size_t i)
{
	return i < p->ntaxsum ? &p->taxsum[i] : NULL;
}

size_t etc_profile_memory_count(const etc_profile *p)
{
	return p->nmem;
}

const etc_memory_row *etc_profile_memory(const etc_profile *p, size_t i)
{
	return i < p->nmem ? &p->mem[i] : NULL;
}

size_t etc_profile_op_count(const etc_profile *p)
{
	return p->nops;
}

const etc_op_row *etc_profile_op(const etc_profile *p, size_t i)
{
	return i < p->nops ? &p->ops[i] : NULL;
}

bool etc_profile_ops_by_type(const etc_profile *p)
{
	return p->ops_by_type;
}

size_t etc_profile_module_count(const etc_profile *p)
{
	return p->nmods;
}

const etc_module_row *etc_profile_module(const etc_profile *p, size_t i)
{
	return i < p->nmods ? &p->mods[i] : NULL;
}

bool etc_profile_modules_mix_units(const etc_profile *p)
{
	return p->mods_delegated;
}

size_t etc_profile_delegate_count(const etc_profile *p)
{
	return p->ndels;
}

const etc_delegate_row *etc_profile_delegate(const etc_profile *p, size_t i)
{
	return i < p->ndels ? &p->dels[i] : NULL;
}

/* --- --module: a module by the names users see --------------------------- */

static bool is_operator_call(etc_str name)
{
	return name.len == 13 && memcmp(name.ptr, "OPERATOR_CALL", 13) == 0;
}

/* The last dotted component of a type ("Linear" of "torch.nn.modules.linear.Linear"). */
static const char *short_type(const char *type)
{
	const char *dot = strrchr(type, '.');
	return dot ? dot + 1 : type;
}

static bool frame_matches(const etc_module_frame *f, const char *name, int how)
{
	switch (how) {
	case ETC_MODULE_PATH:
		return *f->path && strcmp(f->path, name) == 0;
	case ETC_MODULE_KEY:
		return strcmp(f->key, name) == 0;
	case ETC_MODULE_TYPE:
		return *f->type &&
		       (strcmp(f->type, name) == 0 || strcmp(short_type(f->type), name) == 0);
	}
	return strstr(f->key, name) != NULL; /* upstream's find_total_for_module */
}

/* Sum of the average times of the events with a frame matching `name` as `how`. */
static double module_sum(const etc_inspector *in, const char *name, int how, size_t *count)
{
	double total = 0;
	*count = 0;
	for (size_t b = 0; b < etc_inspector_block_count(in); b++) {
		const etc_event_block *blk = etc_inspector_block(in, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			if (!ev->has_perf || is_operator_call(ev->name))
				continue;
			bool found = false;
			for (uint32_t k = 0; k < ev->node_count && !found; k++)
				for (uint32_t f = 0; f < ev->nodes[k]->module_depth && !found; f++)
					found = frame_matches(&ev->nodes[k]->modules[f], name, how);
			if (found) {
				total += ev->stats.avg;
				(*count)++;
			}
		}
	}
	return total;
}

#define CLOSE_NAMES 5

/* Keeps the CLOSE_NAMES names nearest to `name` (distinct, nearest first). */
static void consider_name(const char *cand, const char *name, const char **best, size_t *dist,
                          size_t *n)
{
	if (!*cand)
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(best[i], cand) == 0)
			return;
	size_t d = etc_edit_distance(cand, name, ETC_EDIT_FOLD_CASE);
	/* a name that contains what was typed, or is contained in it, is close */
	if (strstr(cand, name) || strstr(name, cand))
		d = d < 2 ? d : 2;
	size_t at = *n < CLOSE_NAMES ? (*n)++ : CLOSE_NAMES;
	if (at == CLOSE_NAMES) {
		if (d >= dist[CLOSE_NAMES - 1])
			return;
		at = CLOSE_NAMES - 1;
	}
	while (at > 0 && dist[at - 1] > d) {
		best[at] = best[at - 1];
		dist[at] = dist[at - 1];
		at--;
	}
	best[at] = cand;
	dist[at] = d;
}

int etc_profile_module_total(const etc_inspector *insp, const char *name, double *total,
                             size_t *count, int *match, etc_error *err)
{
	if (!insp || !name || !total || !count)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_profile_module_total: NULL argument");
	static const int order[] = {ETC_MODULE_PATH, ETC_MODULE_KEY, ETC_MODULE_TYPE,
	                            ETC_MODULE_KEY_SUBSTRING};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		*total = module_sum(insp, name, order[i], count);
		if (*count) {
			if (match)
				*match = order[i];
			return 0;
		}
	}
	/* nothing matched: the nearest module paths and type names */
	const char *best[CLOSE_NAMES];
	size_t dist[CLOSE_NAMES], n = 0, frames = 0;
	for (size_t b = 0; b < etc_inspector_block_count(insp); b++) {
		const etc_event_block *blk = etc_inspector_block(insp, b);
		for (size_t e = 0; e < blk->event_count; e++) {
			const etc_inspector_event *ev = &blk->events[e];
			for (uint32_t k = 0; k < ev->node_count; k++)
				for (uint32_t f = 0; f < ev->nodes[k]->module_depth; f++) {
					const etc_module_frame *fr = &ev->nodes[k]->modules[f];
					consider_name(fr->path, name, best, dist, &n);
					consider_name(short_type(fr->type), name, best, dist, &n);
					frames++;
				}
		}
	}
	if (!frames)
		return etc_fail(
		    err, ETC_ERR_MISMATCH, NULL, -1,
		    "no module \"%s\": no event is linked to a graph node with a module "
		    "hierarchy (nn_module_stack)",
		    name);
	char list[512];
	size_t len = 0;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof list; i++)
		len +=
		    (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", best[i]);
	return etc_fail(err, ETC_ERR_MISMATCH, NULL, -1,
	                "no module \"%s\" (as a module path, stack key or type); the closest: %s",
	                name, list);
}
