/*
 * legacy.c - the legacy profiler dump (prof_result.bin): a bounds-checked
 * parser over a const buffer, the grouping of blocks into iterations of one
 * named code block with upstream's sanity checks, and the duration and
 * framework-tax arithmetic of the old profiler tools. Layout in
 * include/etcompare/legacy.h (FORMATS.md §7).
 *
 * The parse makes two passes: the first walks the block headers and checks
 * every count against the bytes left (64-bit, overflow-checked), so the
 * second can decode into arrays allocated once from the profile's arena.
 */
#include "etcompare/legacy.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define HEADER_SIZE     64 /* 60 bytes of fields, padded to 8 */
#define EVENT_SIZE      56
#define ALLOCATOR_SIZE  40
#define ALLOCATION_SIZE 8
#define NAME_SIZE       32
#define PROF_VERSION    1

typedef struct allocator_entry {
	uint64_t id;
	uint64_t seq; /* declaration order: the last declaration of an id wins */
	const char *name;
} allocator_entry;

struct etc_legacy_profile {
	etc_arena arena;
	const char *name;
	etc_legacy_block *blocks;
	size_t block_count;
	allocator_entry *allocators; /* sorted by id, one per id */
	size_t allocator_count;
};

/* One block header as read by pass 1. */
typedef struct header {
	char name[NAME_SIZE + 1];
	uint32_t max_prof, prof, max_alloc, alloc, max_mem, mem;
	uint64_t offset, size;
} header;

static size_t name_len(const uint8_t *p)
{
	size_t n = 0;
	while (n < NAME_SIZE && p[n])
		n++;
	return n;
}

static int read_header(const uint8_t *data, size_t len, uint64_t pos, uint32_t index,
                       const char *file, header *h, etc_error *err)
{
	uint64_t left = len - pos;
	if (left < HEADER_SIZE)
		return etc_fail(
		    err, ETC_ERR_FORMAT, file, (int64_t)pos,
		    "truncated legacy profile: block %u needs a %d-byte header but only "
		    "%llu bytes remain",
		    index, HEADER_SIZE, (unsigned long long)left);
	const uint8_t *p = data + pos;
	size_t n = name_len(p);
	memcpy(h->name, p, n);
	h->name[n] = '\0';
	uint32_t ver = etc_le32(p + 32);
	if (ver != PROF_VERSION)
		return etc_fail(err, ETC_ERR_FORMAT, file, (int64_t)pos + 32,
		                "block %u (\"%s\"): prof_ver is %u, expected %d (not a legacy "
		                "profiler dump, or an unsupported version)",
		                index, h->name, ver, PROF_VERSION);
	h->max_prof = etc_le32(p + 36);
	h->prof = etc_le32(p + 40);
	h->max_alloc = etc_le32(p + 44);
	h->alloc = etc_le32(p + 48);
	h->max_mem = etc_le32(p + 52);
	h->mem = etc_le32(p + 56);
	static const char *const what[3] = {"prof_entries", "allocator_entries",
	                                    "mem_prof_entries"};
	const uint32_t used[3] = {h->prof, h->alloc, h->mem},
	               max[3] = {h->max_prof, h->max_alloc, h->max_mem};
	for (int i = 0; i < 3; i++)
		if (used[i] > max[i])
			return etc_fail(err, ETC_ERR_FORMAT, file, (int64_t)pos + 40 + 8 * i,
			                "block %u (\"%s\"): %s is %u but max_%s is %u", index,
			                h->name, what[i], used[i], what[i], max[i]);
	/* 64 + 56a + 40b + 8c fits in 64 bits for any 32-bit counts; checked anyway. */
	uint64_t a, b, c, size = HEADER_SIZE;
	if (!etc_mul_u64(h->max_prof, EVENT_SIZE, &a) ||
	    !etc_mul_u64(h->max_alloc, ALLOCATOR_SIZE, &b) ||
	    !etc_mul_u64(h->max_mem, ALLOCATION_SIZE, &c) || !etc_add_u64(size, a, &size) ||
	    !etc_add_u64(size, b, &size) || !etc_add_u64(size, c, &size))
		return etc_fail(err, ETC_ERR_FORMAT, file, (int64_t)pos, "block %u: size overflows",
		                index);
	if (size > left)
		return etc_fail(err, ETC_ERR_FORMAT, file, (int64_t)pos,
		                "truncated legacy profile: block %u (\"%s\") announces %llu bytes "
		                "(max_prof_entries %u, max_allocator_entries %u, "
		                "max_mem_prof_entries %u) but only %llu bytes remain",
		                index, h->name, (unsigned long long)size, h->max_prof, h->max_alloc,
		                h->max_mem, (unsigned long long)left);
	h->offset = pos;
	h->size = size;
	return 0;
}

/* Open-addressing index from block name to group, so grouping stays linear. */
typedef struct name_index {
	uint32_t *slots; /* group + 1, 0 = empty */
	size_t mask;
} name_index;

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int cmp_allocator(const void *x, const void *y)
{
	const allocator_entry *a = x, *b = y;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const char *describe(const etc_legacy_iteration *it, char buf[64], uint32_t k)
{
	snprintf(buf, 64, "iteration %u (block %u at byte %llu)", k, it->index,
	         (unsigned long long)it->offset);
	return buf;
}

/* upstream's sanity_check_prof_outputs: consecutive iterations must agree. */
static int check_iterations(const etc_legacy_profile *p, const etc_legacy_block *b, etc_error *err)
{
	char d0[64], d1[64];
	for (uint32_t k = 1; k < b->iteration_count; k++) {
		const etc_legacy_iteration *x = &b->iterations[k - 1], *y = &b->iterations[k];
		if (x->event_count != y->event_count)
			return etc_fail(err, ETC_ERR_MISMATCH, p->name, (int64_t)y->offset,
			                "block \"%s\": %s has %u profiling entries but %s has %u; "
			                "iterations of one block must log the same events",
			                b->name.ptr, describe(y, d1, k), y->event_count,
			                describe(x, d0, k - 1), x->event_count);
		for (uint32_t e = 0; e < x->event_count; e++)
			if (strcmp(x->events[e].name.ptr, y->events[e].name.ptr) != 0)
				return etc_fail(
				    err, ETC_ERR_MISMATCH, p->name,
				    (int64_t)(y->offset + HEADER_SIZE + (uint64_t)e * EVENT_SIZE),
				    "block \"%s\": profiling entry %u is \"%s\" in %s but "
				    "\"%s\" in %s; iterations of one block must log the "
				    "same events",
				    b->name.ptr, e, y->events[e].name.ptr, describe(y, d1, k),
				    x->events[e].name.ptr, describe(x, d0, k - 1));
		if (x->allocation_count != y->allocation_count)
			return etc_fail(err, ETC_ERR_MISMATCH, p->name, (int64_t)y->offset,
			                "block \"%s\": %s has %u memory allocations but %s has %u; "
			                "iterations of one block must allocate the same",
			                b->name.ptr, describe(y, d1, k), y->allocation_count,
			                describe(x, d0, k - 1), x->allocation_count);
		for (uint32_t a = 0; a < x->allocation_count; a++) {
			const etc_legacy_allocation *u = &x->allocations[a],
			                            *v = &y->allocations[a];
			if (u->allocator_id != v->allocator_id || u->size != v->size)
				return etc_fail(
				    err, ETC_ERR_MISMATCH, p->name, (int64_t)y->offset,
				    "block \"%s\": memory allocation %u is %u bytes from allocator "
				    "%u "
				    "in %s but %u bytes from allocator %u in %s; iterations of one "
				    "block must allocate the same",
				    b->name.ptr, a, v->size, v->allocator_id, describe(y, d1, k),
				    u->size, u->allocator_id, describe(x, d0, k - 1));
		}
	}
	return 0;
}

static int parse(etc_legacy_profile *p, const uint8_t *data, size_t len, etc_error *err)
{
	const char *file = p->name;
	if (len == 0)
		return etc_fail(err, ETC_ERR_FORMAT, file, 0, "empty legacy profile: no block");
	/* Pass 1: headers and totals. */
	uint64_t nfile = 0, nevents = 0, nallocs = 0, nallocators = 0;
	header h;
	for (uint64_t pos = 0; pos < len; pos += h.size, nfile++) {
		ETC_TRY(read_header(data, len, pos, (uint32_t)nfile, file, &h, err));
		nevents += h.prof;
		nallocs += h.mem;
		nallocators += h.alloc;
	}
	if (nfile > UINT32_MAX)
		return etc_fail(err, ETC_ERR_LIMIT, file, -1, "more than 2^32 blocks");
	etc_arena *A = &p->arena;
	etc_legacy_iteration *its = etc_arena_alloc(A, nfile, sizeof *its);
	etc_legacy_event *events = etc_arena_alloc(A, nevents ? nevents : 1, sizeof *events);
	char *names = etc_arena_alloc(A, nevents ? nevents : 1, NAME_SIZE + 1);
	etc_legacy_allocation *allocs = etc_arena_alloc(A, nallocs ? nallocs : 1, sizeof *allocs);
	allocator_entry *allocators =
	    etc_arena_alloc(A, nallocators ? nallocators : 1, sizeof *allocators);
	uint32_t *group_of = calloc(nfile, sizeof *group_of);
	size_t cap = 16;
	while (cap < 2 * nfile)
		cap *= 2;
	name_index idx = {calloc(cap, sizeof *idx.slots), cap - 1};
	const char **group_names = calloc(nfile, sizeof *group_names);
	uint32_t *group_size = calloc(nfile, sizeof *group_size);
	int rc = 0;
	if (!its || !events || !names || !allocs || !allocators || !group_of || !idx.slots ||
	    !group_names || !group_size) {
		rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory reading %llu blocks",
		              (unsigned long long)nfile);
		goto out;
	}

	/* Pass 2: decode, and group blocks by name in first-seen order. */
	size_t ngroups = 0, ev = 0, al = 0, na = 0;
	uint64_t pos = 0;
	for (uint32_t i = 0; i < nfile; i++, pos += h.size) {
		read_header(data, len, pos, i, file, &h, NULL);
		etc_legacy_iteration *it = &its[i];
		it->offset = pos;
		it->index = i;
		it->event_count = h.prof;
		it->events = events + ev;
		const uint8_t *q = data + pos + HEADER_SIZE;
		for (uint32_t e = 0; e < h.prof; e++, ev++, q += EVENT_SIZE) {
			char *nm = names + ev * (NAME_SIZE + 1);
			size_t n = name_len(q);
			memcpy(nm, q, n);
			nm[n] = '\0';
			events[ev] = (etc_legacy_event){{nm, n},
			                                (int32_t)etc_le32(q + 32),
			                                etc_le32(q + 36),
			                                etc_le64(q + 40),
			                                etc_le64(q + 48)};
		}
		q = data + pos + HEADER_SIZE + (uint64_t)h.max_prof * EVENT_SIZE;
		for (uint32_t a = 0; a < h.alloc; a++, na++, q += ALLOCATOR_SIZE) {
			size_t n = name_len(q);
			const char *nm = etc_arena_strdup(A, (const char *)q, n);
			if (!nm) {
				rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
				goto out;
			}
			allocators[na] = (allocator_entry){etc_le64(q + 32), na, nm};
		}
		q = data + pos + HEADER_SIZE + (uint64_t)h.max_prof * EVENT_SIZE +
		    (uint64_t)h.max_alloc * ALLOCATOR_SIZE;
		it->allocation_count = h.mem;
		it->allocations = allocs + al;
		for (uint32_t m = 0; m < h.mem; m++, al++, q += ALLOCATION_SIZE)
			allocs[al] = (etc_legacy_allocation){etc_le32(q), etc_le32(q + 4)};

		size_t slot = (size_t)hash_name(h.name) & idx.mask;
		while (idx.slots[slot] && strcmp(group_names[idx.slots[slot] - 1], h.name) != 0)
			slot = (slot + 1) & idx.mask;
		if (!idx.slots[slot]) {
			const char *nm = etc_arena_strdup(A, h.name, strlen(h.name));
			if (!nm) {
				rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
				goto out;
			}
			group_names[ngroups] = nm;
			idx.slots[slot] = (uint32_t)++ngroups;
		}
		group_of[i] = idx.slots[slot] - 1;
		group_size[group_of[i]]++;
	}

	p->blocks = etc_arena_alloc(A, ngroups, sizeof *p->blocks);
	etc_legacy_iteration *ordered = etc_arena_alloc(A, nfile, sizeof *ordered);
	if (!p->blocks || !ordered) {
		rc = etc_fail(err, ETC_ERR_NOMEM, file, -1, "out of memory");
		goto out;
	}
	size_t start = 0;
	for (size_t g = 0; g < ngroups; g++) {
		p->blocks[g].name = (etc_str){group_names[g], strlen(group_names[g])};
		p->blocks[g].iterations = ordered + start;
		start += group_size[g];
	}
	p->block_count = ngroups;
	for (uint32_t i = 0; i < nfile; i++) {
		etc_legacy_block *b = &p->blocks[group_of[i]];
		((etc_legacy_iteration *)b->iterations)[b->iteration_count++] = its[i];
	}

	qsort(allocators, na, sizeof *allocators, cmp_allocator);
	size_t kept = 0;
	for (size_t i = 0; i < na; i++) {
		if (kept && allocators[kept - 1].id == allocators[i].id)
			kept--;
		allocators[kept++] = allocators[i];
	}
	p->allocators = allocators;
	p->allocator_count = kept;

	for (size_t g = 0; g < ngroups && rc == 0; g++)
		rc = check_iterations(p, &p->blocks[g], err);
	/* The memory table names each allocation's allocator (upstream: KeyError). */
	for (size_t g = 0; g < ngroups && rc == 0; g++) {
		const etc_legacy_iteration *it = &p->blocks[g].iterations[0];
		for (uint32_t m = 0; m < it->allocation_count && rc == 0; m++)
			if (!etc_legacy_profile_allocator(p, it->allocations[m].allocator_id))
				rc = etc_fail(
				    err, ETC_ERR_FORMAT, file, (int64_t)it->offset,
				    "block \"%s\" (block %u at byte %llu): memory allocation "
				    "%u is from allocator %u, which no block declares",
				    p->blocks[g].name.ptr, it->index,
				    (unsigned long long)it->offset, m,
				    it->allocations[m].allocator_id);
	}
out:
	free(group_of);
	free(idx.slots);
	free(group_names);
	free(group_size);
	return rc;
}

int etc_legacy_profile_parse_buffer(etc_legacy_profile **out, const void *data, size_t len,
                                    const char *name, etc_error *err)
{
	if (out)
		*out = NULL;
	etc_error_clear(err);
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, name, -1,
		                "etc_legacy_profile_parse_buffer: "
		                "NULL argument");
	etc_legacy_profile *p = calloc(1, sizeof *p);
	if (!p)
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	etc_arena_init(&p->arena);
	const char *nm = name ? name : "";
	p->name = etc_arena_strdup(&p->arena, nm, strlen(nm));
	int rc = p->name ? parse(p, data, len, err)
	                 : etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	if (rc < 0) {
		etc_legacy_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int etc_legacy_profile_open(etc_legacy_profile **out, const char *path, etc_error *err)
{
	if (out)
		*out = NULL;
	etc_error_clear(err);
	etc_map m;
	ETC_TRY(etc_map_open(&m, path, err));
	int rc = etc_legacy_profile_parse_buffer(out, m.data, m.size, path, err);
	etc_map_close(&m);
	return rc;
}

void etc_legacy_profile_free(etc_legacy_profile *p)
{
	if (!p)
		return;
	etc_arena_release(&p->arena);
	free(p);
}

size_t etc_legacy_profile_block_count(const etc_legacy_profile *p)
{
	return p->block_count;
}

const etc_legacy_block *etc_legacy_profile_block(const etc_legacy_profile *p, size_t i)
{
	return i < p->block_count ? &p->blocks[i] : NULL;
}

const char *etc_legacy_profile_allocator(const etc_legacy_profile *p, uint64_t id)
{
	size_t lo = 0, hi = p->allocator_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->allocators[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->allocator_count && p->allocators[lo].id == id ? p->allocators[lo].name
	                                                             : NULL;
}

int etc_legacy_time_scale_parse(const char *name, int *out)
{
	static const char *const names[] = {"ns", "us", "ms", "cycles"};
	for (int i = 0; i < 4; i++)
		if (name && !strcmp(name, names[i])) {
			*out = i;
			return 0;
		}
	return ETC_ERR_USAGE;
}

/* Python's round(x, 4): the double nearest to x correctly rounded to 4
 * decimals (glibc's printf rounds the exact binary value, as CPython does). */
static double round4(double x)
{
	char buf[400];
	snprintf(buf, sizeof buf, "%.4f", x);
	return strtod(buf, NULL);
}

double etc_legacy_duration(const etc_legacy_event *ev, int time_scale)
{
	double d =
	    ev->end >= ev->start ? (double)(ev->end - ev->start) : -(double)(ev->start - ev->end);
	switch (time_scale) {
	case ETC_LEGACY_NS:
		return round4(d / 1e6);
	case ETC_LEGACY_US:
		return round4(d / 1e3);
	default:
		return d;
	}
}

static bool contains(etc_str s, const char *key)
{
	return strstr(s.ptr, key) != NULL;
}

bool etc_legacy_framework_tax(const etc_legacy_block *b, int time_scale, double *exec,
                              double *kernels, double *tax)
{
	uint32_t n = b->iteration_count;
	if (n == 0)
		return false;
	const etc_legacy_iteration *first = &b->iterations[0];
	bool have_exec = false, have_kernels = false;
	for (uint32_t e = 0; e < first->event_count; e++) {
		const etc_str name = first->events[e].name;
		if (contains(name, "Method::execute")) {
			/* upstream takes max() of the duration lists: lexicographic. */
			int cmp = have_exec ? 0 : 1;
			for (uint32_t k = 0; k < n && cmp == 0; k++) {
				double d =
				    etc_legacy_duration(&b->iterations[k].events[e], time_scale);
				cmp = d > exec[k] ? 1 : d < exec[k] ? -1 : 0;
			}
			if (cmp > 0)
				for (uint32_t k = 0; k < n; k++)
					exec[k] = etc_legacy_duration(&b->iterations[k].events[e],
					                              time_scale);
			have_exec = true;
		}
		if (contains(name, "native_call") || contains(name, "delegate_execute")) {
			for (uint32_t k = 0; k < n; k++) {
				double d =
				    etc_legacy_duration(&b->iterations[k].events[e], time_scale);
				kernels[k] = have_kernels ? kernels[k] + d : d;
			}
			have_kernels = true;
		}
	}
	if (!have_exec || !have_kernels)
		return false;
	for (uint32_t k = 0; k < n; k++)
		tax[k] =
		    exec[k] == 0 ? (double)NAN : round4((exec[k] - kernels[k]) / exec[k]) * 100;
	return true;
}
