/*
 * etdump.c - the ETDump model: detection of the size prefix, full
 * verification of the FlatBuffer against the ETDump schema
 * (schema/etdump.fbs), and on-demand decoding of runs and events.
 *
 * Vtable slots (declaration order of schema/etdump.fbs):
 *   ETDump          0 version:u32  1 run_data:[RunData]
 *   RunData         0 name  1 bundled_input_index:i32=-1  2 allocators  3 events
 *   Allocator       0 name
 *   Event           0 profile_event  1 allocation_event  2 debug_event
 *   ProfileEvent    0 name  1 chain_index:i32  2 instruction_id:i32=-1
 *                   3 delegate_debug_id_int:i32=-1  4 delegate_debug_id_str
 *                   5 delegate_debug_metadata:[u8]  6 start_time:u64  7 end_time:u64
 *   AllocationEvent 0 allocator_id:i32  1 allocation_size:u64
 *   DebugEvent      0 chain_index:u64  1 instruction_id:i32=-1  2 debug_entry:Value
 *                   3 delegate_debug_id_int:i32=-1  4 delegate_debug_id_str  5 name
 *   Value           0 val:i8  1 tensor  2 tensor_list  3 int_value  4 float_value
 *                   5 double_value  6 bool_value  7 output:Bool
 *   Tensor          0 scalar_type:i8  1 sizes:[i64]  2 strides:[i64]  3 offset:i64
 *   TensorList      0 tensors:[Tensor]
 *   Int/Bool/Float/Double   0 int_val:i64 / bool_val:bool / float_val:f32 / double_val:f64
 */
#include "etcompare/etdump.h"
#include "format/etdump_private.h"
#include "format/flatbuf.h"

#include <stdio.h>
#include <stdlib.h>

struct etc_etdump {
	etc_map map;
	const uint8_t *buf; /* FlatBuffer proper */
	size_t len;
	size_t base;
	bool prefixed;
	uint64_t trailing;
	uint32_t version;
	uint32_t nruns;
	size_t *runs;       /* RunData table positions */
	size_t *run_events; /* first element of the events vector, 0 if none */
	uint32_t *run_nevents;
	size_t *run_allocs; /* first element of the allocators vector, 0 if none */
	uint32_t *run_nallocs;
	size_t *run_lo, *run_hi; /* byte span of each run's objects, vtables aside */
	bool spans_disjoint;     /* no two runs' spans overlap: each can be released */
	uint64_t total_events;
	char *name;
	etc_arena arena;
};

static const char *const value_type_names[] = {"Null",   "Int",    "Bool",       "Float",
                                               "Double", "Tensor", "TensorList", "String"};

const char *etc_value_type_name(int type)
{
	if (type < 0 || type > ETC_VALUE_STRING)
		return "unknown";
	return value_type_names[type];
}

/* --- verification ------------------------------------------------------ */

static int verify_scalar_table(etc_fb *fb, size_t pos, size_t size, const char *what)
{
	etc_fb_table t;
	size_t f;
	ETC_TRY(etc_fb_verify_table(fb, pos, what, &t));
	return etc_fb_verify_field(fb, &t, 0, size, what, &f);
}

static int verify_tensor(etc_fb *fb, size_t pos)
{
	etc_fb_table t;
	size_t f, v;
	uint32_t n;
	ETC_TRY(etc_fb_verify_table(fb, pos, "Tensor", &t));
	ETC_TRY(etc_fb_verify_field(fb, &t, 0, 1, "Tensor.scalar_type", &f));
	int st = f ? (int8_t)fb->buf[f] : 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 1, "Tensor.sizes", &v));
	uint64_t numel = 1;
	if (v) {
		ETC_TRY(etc_fb_verify_vector(fb, v, 8, "Tensor.sizes", &n));
		for (uint32_t i = 0; i < n; i++) {
			int64_t s = (int64_t)etc_le64(fb->buf + v + 4 + 8 * (size_t)i);
			if (s < 0)
				return etc_fb_fail(fb, v + 4 + 8 * (size_t)i, "Tensor.sizes",
				                   "size %u is negative (%lld)", i, (long long)s);
			if (!etc_mul_u64(numel, (uint64_t)s, &numel))
				return etc_fb_fail(fb, v, "Tensor.sizes",
				                   "the product of the sizes overflows 64 bits");
		}
	}
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 2, "Tensor.strides", &v));
	if (v)
		ETC_TRY(etc_fb_verify_vector(fb, v, 8, "Tensor.strides", &n));
	ETC_TRY(etc_fb_verify_field(fb, &t, 3, 8, "Tensor.offset", &f));
	int64_t offset = f ? (int64_t)etc_le64(fb->buf + f) : 0;
	if (offset < -1)
		return etc_fb_fail(fb, f, "Tensor.offset", "offset %lld is negative",
		                   (long long)offset);
	uint64_t nbytes;
	size_t esz = etc_scalar_type_size(st);
	if (esz && !etc_mul_u64(numel, esz, &nbytes))
		return etc_fb_fail(fb, pos, "Tensor",
		                   "data size of %llu elements of %s overflows 64 bits",
		                   (unsigned long long)numel, etc_scalar_type_name(st));
	return 0;
}

static int verify_value(etc_fb *fb, size_t pos)
{
	etc_fb_table t;
	size_t f, r;
	ETC_TRY(etc_fb_verify_table(fb, pos, "Value", &t));
	ETC_TRY(etc_fb_verify_field(fb, &t, 0, 1, "Value.val", &f));
	int val = f ? (int8_t)fb->buf[f] : 0;
	if (val < 0 || val > ETC_VALUE_STRING)
		return etc_fb_fail(fb, f, "Value.val", "unknown value type %d", val);

	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 1, "Value.tensor", &r));
	if (r)
		ETC_TRY(verify_tensor(fb, r));
	else if (val == ETC_VALUE_TENSOR)
		return etc_fb_fail(fb, pos, "Value", "val is Tensor but the tensor is missing");

	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 2, "Value.tensor_list", &r));
	if (r) {
		etc_fb_table lt;
		size_t v;
		uint32_t n;
		ETC_TRY(etc_fb_verify_table(fb, r, "TensorList", &lt));
		ETC_TRY(etc_fb_verify_ref_field(fb, &lt, 0, "TensorList.tensors", &v));
		if (v) {
			ETC_TRY(etc_fb_verify_vector(fb, v, 4, "TensorList.tensors", &n));
			for (uint32_t i = 0; i < n; i++) {
				size_t tp;
				ETC_TRY(etc_fb_verify_ref(fb, v + 4 + 4 * (size_t)i,
				                          "TensorList.tensors", &tp));
				ETC_TRY(verify_tensor(fb, tp));
			}
		}
	} else if (val == ETC_VALUE_TENSOR_LIST) {
		return etc_fb_fail(fb, pos, "Value",
		                   "val is TensorList but the tensor list is missing");
	}
	static const struct {
		unsigned slot;
		size_t size;
		const char *what;
	} scalars[] = {{3, 8, "Value.int_value"},
	               {4, 4, "Value.float_value"},
	               {5, 8, "Value.double_value"},
	               {6, 1, "Value.bool_value"},
	               {7, 1, "Value.output"}};
	for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		ETC_TRY(etc_fb_verify_ref_field(fb, &t, scalars[i].slot, scalars[i].what, &r));
		if (r)
			ETC_TRY(verify_scalar_table(fb, r, scalars[i].size, scalars[i].what));
	}
	return 0;
}

static int verify_optional_string(etc_fb *fb, const etc_fb_table *t, unsigned slot,
                                  const char *what)
{
	size_t s;
	ETC_TRY(etc_fb_verify_ref_field(fb, t, slot, what, &s));
	return s ? etc_fb_verify_string(fb, s, what) : 0;
}

static int verify_event(etc_fb *fb, size_t pos)
{
	etc_fb_table t, e;
	size_t sub[3], f;
	int set = 0;
	ETC_TRY(etc_fb_verify_table(fb, pos, "Event", &t));
	for (unsigned i = 0; i < 3; i++) {
		ETC_TRY(etc_fb_verify_ref_field(fb, &t, i, "Event", &sub[i]));
		set += sub[i] != 0;
	}
	if (set > 1)
		return etc_fb_fail(fb, pos, "Event",
		                   "%d of profile_event, allocation_event and debug_event are set; "
		                   "exactly one is allowed",
		                   set);
	if (sub[0]) {
		ETC_TRY(etc_fb_verify_table(fb, sub[0], "ProfileEvent", &e));
		ETC_TRY(verify_optional_string(fb, &e, 0, "ProfileEvent.name"));
		ETC_TRY(etc_fb_verify_field(fb, &e, 1, 4, "ProfileEvent.chain_index", &f));
		ETC_TRY(etc_fb_verify_field(fb, &e, 2, 4, "ProfileEvent.instruction_id", &f));
		ETC_TRY(
		    etc_fb_verify_field(fb, &e, 3, 4, "ProfileEvent.delegate_debug_id_int", &f));
		ETC_TRY(verify_optional_string(fb, &e, 4, "ProfileEvent.delegate_debug_id_str"));
		size_t v;
		uint32_t n;
		ETC_TRY(
		    etc_fb_verify_ref_field(fb, &e, 5, "ProfileEvent.delegate_debug_metadata", &v));
		if (v)
			ETC_TRY(etc_fb_verify_vector(fb, v, 1,
			                             "ProfileEvent.delegate_debug_metadata", &n));
		ETC_TRY(etc_fb_verify_field(fb, &e, 6, 8, "ProfileEvent.start_time", &f));
		ETC_TRY(etc_fb_verify_field(fb, &e, 7, 8, "ProfileEvent.end_time", &f));
	} else if (sub[1]) {
		ETC_TRY(etc_fb_verify_table(fb, sub[1], "AllocationEvent", &e));
		ETC_TRY(etc_fb_verify_field(fb, &e, 0, 4, "AllocationEvent.allocator_id", &f));
		ETC_TRY(etc_fb_verify_field(fb, &e, 1, 8, "AllocationEvent.allocation_size", &f));
	} else if (sub[2]) {
		size_t v;
		ETC_TRY(etc_fb_verify_table(fb, sub[2], "DebugEvent", &e));
		ETC_TRY(etc_fb_verify_field(fb, &e, 0, 8, "DebugEvent.chain_index", &f));
		ETC_TRY(etc_fb_verify_field(fb, &e, 1, 4, "DebugEvent.instruction_id", &f));
		ETC_TRY(etc_fb_verify_ref_field(fb, &e, 2, "DebugEvent.debug_entry", &v));
		if (v)
			ETC_TRY(verify_value(fb, v));
		ETC_TRY(etc_fb_verify_field(fb, &e, 3, 4, "DebugEvent.delegate_debug_id_int", &f));
		ETC_TRY(verify_optional_string(fb, &e, 4, "DebugEvent.delegate_debug_id_str"));
		ETC_TRY(verify_optional_string(fb, &e, 5, "DebugEvent.name"));
	}
	return 0;
}

/*
 * A run's pages are given back only when it spans at least this much: for
 * fewer pages the madvise call and its TLB flush cost more than the memory
 * is worth (100 runs of 11 KB: 1.5% of a table-only run's time).
 */
#define RELEASE_MIN (64 * 1024)

typedef struct span {
	size_t lo, hi;
} span;

static int span_cmp(const void *a, const void *b)
{
	const span *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/*
 * FlatBuffer writers lay each run's objects out in one stretch; a writer
 * that shares objects between runs (a deduplicated string, say) makes two
 * spans overlap, and then no run's pages are released (false).
 */
static bool spans_disjoint(const etc_etdump *d)
{
	if (d->nruns < 2)
		return true;
	span *s = malloc(d->nruns * sizeof *s);
	if (!s)
		return false;
	for (uint32_t r = 0; r < d->nruns; r++) {
		s[r].lo = d->run_lo[r];
		s[r].hi = d->run_hi[r];
	}
	qsort(s, d->nruns, sizeof *s, span_cmp);
	bool ok = true;
	for (uint32_t r = 1; r < d->nruns && ok; r++)
		ok = s[r - 1].hi <= s[r].lo;
	free(s);
	return ok;
}

static int verify_dump(etc_etdump *d, etc_fb *fb)
{
	etc_fb_table root, rt;
	size_t f, runs;
	uint32_t nruns = 0;
	if (fb->len < 8)
		return etc_fb_fail(fb, 0, "ETDump", "buffer of %zu bytes is too short", fb->len);
	size_t rootpos;
	ETC_TRY(etc_fb_verify_ref(fb, 0, "ETDump (root offset)", &rootpos));
	ETC_TRY(etc_fb_verify_table(fb, rootpos, "ETDump", &root));
	ETC_TRY(etc_fb_verify_field(fb, &root, 0, 4, "ETDump.version", &f));
	d->version = f ? etc_le32(fb->buf + f) : 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, &root, 1, "ETDump.run_data", &runs));
	if (runs)
		ETC_TRY(etc_fb_verify_vector(fb, runs, 4, "ETDump.run_data", &nruns));
	d->nruns = nruns;
	d->runs = etc_arena_alloc(&d->arena, nruns + 1, sizeof(size_t));
	d->run_events = etc_arena_alloc(&d->arena, nruns + 1, sizeof(size_t));
	d->run_allocs = etc_arena_alloc(&d->arena, nruns + 1, sizeof(size_t));
	d->run_nevents = etc_arena_alloc(&d->arena, nruns + 1, sizeof(uint32_t));
	d->run_nallocs = etc_arena_alloc(&d->arena, nruns + 1, sizeof(uint32_t));
	d->run_lo = etc_arena_alloc(&d->arena, nruns + 1, sizeof(size_t));
	d->run_hi = etc_arena_alloc(&d->arena, nruns + 1, sizeof(size_t));
	if (!d->runs || !d->run_events || !d->run_allocs || !d->run_nevents || !d->run_nallocs ||
	    !d->run_lo || !d->run_hi)
		return etc_fail(fb->err, ETC_ERR_NOMEM, fb->name, -1, "out of memory");

	size_t seen_lo = SIZE_MAX, seen_hi = 0; /* hull of the runs verified so far */
	for (uint32_t r = 0; r < nruns; r++) {
		size_t rp, v;
		uint32_t n;
		fb->run = r;
		fb->event = -1;
		fb->span_lo = SIZE_MAX;
		fb->span_hi = 0;
		ETC_TRY(etc_fb_verify_ref(fb, runs + 4 + 4 * (size_t)r, "ETDump.run_data", &rp));
		ETC_TRY(etc_fb_verify_table(fb, rp, "RunData", &rt));
		d->runs[r] = rp;
		ETC_TRY(verify_optional_string(fb, &rt, 0, "RunData.name"));
		ETC_TRY(etc_fb_verify_field(fb, &rt, 1, 4, "RunData.bundled_input_index", &f));
		ETC_TRY(etc_fb_verify_ref_field(fb, &rt, 2, "RunData.allocators", &v));
		if (v) {
			ETC_TRY(etc_fb_verify_vector(fb, v, 4, "RunData.allocators", &n));
			d->run_allocs[r] = v + 4;
			d->run_nallocs[r] = n;
			for (uint32_t a = 0; a < n; a++) {
				size_t ap;
				etc_fb_table at;
				ETC_TRY(etc_fb_verify_ref(fb, v + 4 + 4 * (size_t)a,
				                          "RunData.allocators", &ap));
				ETC_TRY(etc_fb_verify_table(fb, ap, "Allocator", &at));
				ETC_TRY(verify_optional_string(fb, &at, 0, "Allocator.name"));
			}
		}
		ETC_TRY(etc_fb_verify_ref_field(fb, &rt, 3, "RunData.events", &v));
		if (v) {
			ETC_TRY(etc_fb_verify_vector(fb, v, 4, "RunData.events", &n));
			d->run_events[r] = v + 4;
			d->run_nevents[r] = n;
			for (uint32_t e = 0; e < n; e++) {
				size_t ep;
				fb->event = e;
				ETC_TRY(etc_fb_verify_ref(fb, v + 4 + 4 * (size_t)e,
				                          "RunData.events", &ep));
				ETC_TRY(verify_event(fb, ep));
			}
			d->total_events += n;
		}
		d->run_lo[r] = fb->span_lo;
		d->run_hi[r] = fb->span_hi;
		/* Verified: drop the run's pages until they are read again, unless
		 * its span reaches into an earlier run's (interleaving writer). */
		if ((fb->span_hi <= seen_lo || fb->span_lo >= seen_hi) &&
		    fb->span_hi - fb->span_lo >= RELEASE_MIN)
			etc_map_release(&d->map, d->base + fb->span_lo, fb->span_hi - fb->span_lo);
		if (fb->span_lo < seen_lo)
			seen_lo = fb->span_lo;
		if (fb->span_hi > seen_hi)
			seen_hi = fb->span_hi;
	}
	d->spans_disjoint = spans_disjoint(d);
	return 0;
}

/*
 * The runtime writes a 4-byte length before the FlatBuffer; other tools write
 * plain buffers. The identifier sits at byte 8 or byte 4 respectively, and a
 * size-prefixed file must be at least as long as its prefix says.
 */
static int detect(etc_etdump *d, const uint8_t *data, size_t len, etc_error *err)
{
	if (len < 8)
		return etc_fail(err, ETC_ERR_FORMAT, d->name, -1,
		                "file of %zu bytes is too short to be an ETDump", len);
	if (len >= 12 && memcmp(data + 8, "ED00", 4) == 0) {
		uint64_t want = etc_le32(data);
		if (want > len - 4)
			return etc_fail(err, ETC_ERR_FORMAT, d->name, 0,
			                "truncated ETDump: the size prefix announces %llu bytes "
			                "but only %zu follow it",
			                (unsigned long long)want, len - 4);
		if (want < 8)
			return etc_fail(err, ETC_ERR_FORMAT, d->name, 0,
			                "size prefix of %llu bytes is too small",
			                (unsigned long long)want);
		d->prefixed = true;
		d->trailing = len - 4 - want;
		d->buf = data + 4;
		d->len = (size_t)want;
		d->base = 4;
		return 0;
	}
	if (memcmp(data + 4, "ED00", 4) == 0) {
		d->prefixed = false;
		d->buf = data;
		d->len = len;
		d->base = 0;
		return 0;
	}
	return etc_fail(err, ETC_ERR_FORMAT, d->name, 4,
	                "not an ETDump: file identifier \"ED00\" found neither at byte 8 "
	                "(size-prefixed) nor at byte 4 (plain)");
}

static int load(etc_etdump *d, const uint8_t *data, size_t len, etc_error *err)
{
	ETC_TRY(detect(d, data, len, err));
	/* Honest writers visit each byte once; allow generous slack. */
	etc_fb fb = etc_fb_begin(d->buf, d->len, d->base, d->name, err, 4);
	return verify_dump(d, &fb);
}

static etc_etdump *create(const char *name, etc_error *err)
{
	etc_etdump *d = calloc(1, sizeof *d);
	if (!d) {
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	etc_arena_init(&d->arena);
	d->name = etc_arena_strdup(&d->arena, name ? name : "", name ? strlen(name) : 0);
	if (!d->name) {
		free(d);
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	return d;
}

int etc_etdump_open(etc_etdump **out, const char *path, etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etdump_open: NULL argument");
	etc_etdump *d = create(path, err);
	if (!d)
		return ETC_ERR_NOMEM;
	int rc = etc_map_open(&d->map, path, err);
	if (rc == 0)
		rc = load(d, d->map.data, d->map.size, err);
	if (rc < 0) {
		etc_etdump_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

int etc_etdump_wrap(etc_etdump **out, const void *data, size_t len, const char *name,
                    etc_error *err)
{
	if (out)
		*out = NULL;
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_etdump_wrap: NULL argument");
	etc_etdump *d = create(name ? name : "<memory>", err);
	if (!d)
		return ETC_ERR_NOMEM;
	int rc = load(d, data ? data : (const void *)"", len, err);
	if (rc < 0) {
		etc_etdump_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void etc_etdump_free(etc_etdump *d)
{
	if (!d)
		return;
	etc_map_close(&d->map);
	etc_arena_release(&d->arena);
	free(d);
}

/* --- accessors ----------------------------------------------------------- */

const char *etc_etdump_name(const etc_etdump *d)
{
	return d->name;
}

uint64_t etc_etdump_trailing_bytes(const etc_etdump *d)
{
	return d->trailing;
}

bool etc_etdump_size_prefixed(const etc_etdump *d)
{
	return d->prefixed;
}

uint32_t etc_etdump_version(const etc_etdump *d)
{
	return d->version;
}

uint64_t etc_etdump_event_total(const etc_etdump *d)
{
	return d->total_events;
}

uint32_t etc_etdump_run_count(const etc_etdump *d)
{
	return d->nruns;
}

static int32_t get_i32(const uint8_t *buf, const etc_fb_table *t, unsigned slot, int32_t dflt)
{
	size_t f = etc_fb_field(buf, t, slot);
	return f ? (int32_t)etc_le32(buf + f) : dflt;
}

static uint64_t get_u64(const uint8_t *buf, const etc_fb_table *t, unsigned slot)
{
	size_t f = etc_fb_field(buf, t, slot);
	return f ? etc_le64(buf + f) : 0;
}

void etc_etdump_run(const etc_etdump *d, uint32_t i, etc_run *out)
{
	etc_fb_table t = etc_fb_table_at(d->buf, d->runs[i]);
	out->name = etc_fb_str(d->buf, etc_fb_ref(d->buf, &t, 0));
	out->bundled_input_index = get_i32(d->buf, &t, 1, -1);
	out->allocator_count = d->run_nallocs[i];
	out->event_count = d->run_nevents[i];
}

etc_str etc_etdump_allocator(const etc_etdump *d, uint32_t run, uint32_t a)
{
	size_t p = etc_fb_deref(d->buf, d->run_allocs[run] + 4 * (size_t)a);
	etc_fb_table t = etc_fb_table_at(d->buf, p);
	return etc_fb_str(d->buf, etc_fb_ref(d->buf, &t, 0));
}

void etc_etdump_release_run_(const etc_etdump *d, uint32_t run)
{
	if (!d->map.mapped || !d->spans_disjoint || run >= d->nruns ||
	    d->run_lo[run] >= d->run_hi[run] || d->run_hi[run] - d->run_lo[run] < RELEASE_MIN)
		return;
	/* Only pages wholly inside the span go: a page shared with a neighbour
	 * stays, and the spans are disjoint, so no other run loses a page. */
	etc_map_release(&d->map, d->base + d->run_lo[run], d->run_hi[run] - d->run_lo[run]);
}

uint64_t etc_etdump_event_offset(const etc_etdump *d, uint32_t run, uint32_t e)
{
	return d->base + etc_fb_deref(d->buf, d->run_events[run] + 4 * (size_t)e);
}

static const uint8_t *scalar_field(const uint8_t *buf, const etc_fb_table *t, unsigned slot)
{
	size_t sub = etc_fb_ref(buf, t, slot);
	if (!sub)
		return NULL;
	etc_fb_table st = etc_fb_table_at(buf, sub);
	size_t f = etc_fb_field(buf, &st, 0);
	return f ? buf + f : NULL;
}

static void decode_value(const etc_etdump *d, size_t pos, etc_value *v)
{
	const uint8_t *buf = d->buf;
	etc_fb_table t = etc_fb_table_at(buf, pos);
	size_t f = etc_fb_field(buf, &t, 0);
	const uint8_t *p;
	v->type = f ? (int8_t)buf[f] : 0;
	v->has_output = etc_fb_ref(buf, &t, 7) != 0;
	p = scalar_field(buf, &t, 7);
	v->is_output = p && *p;
	p = scalar_field(buf, &t, 3);
	v->int_val = p ? (int64_t)etc_le64(p) : 0;
	p = scalar_field(buf, &t, 6);
	v->bool_val = p && *p;
	p = scalar_field(buf, &t, 4);
	if (p) {
		union {
			uint32_t u;
			float f;
		} x = {etc_le32(p)};
		v->float_val = x.f;
	}
	p = scalar_field(buf, &t, 5);
	if (p) {
		union {
			uint64_t u;
			double d;
		} x = {etc_le64(p)};
		v->double_val = x.d;
	}
	v->dump_ = d;
	if (v->type == ETC_VALUE_TENSOR) {
		v->tensor_count = 1;
		v->tensors_pos_ = etc_fb_ref(buf, &t, 1);
	} else if (v->type == ETC_VALUE_TENSOR_LIST) {
		size_t lp = etc_fb_ref(buf, &t, 2);
		etc_fb_table lt = etc_fb_table_at(buf, lp);
		size_t vec = etc_fb_ref(buf, &lt, 0);
		v->tensor_count = vec ? etc_le32(buf + vec) : 0;
		v->tensors_pos_ = vec;
	}
}

void etc_etdump_event(const etc_etdump *d, uint32_t run, uint32_t e, etc_event *out)
{
	const uint8_t *buf = d->buf;
	memset(out, 0, sizeof *out);
	size_t ep = etc_fb_deref(buf, d->run_events[run] + 4 * (size_t)e);
	etc_fb_table t = etc_fb_table_at(buf, ep), s;
	size_t sub;
	if ((sub = etc_fb_ref(buf, &t, 0)) != 0) {
		etc_profile_event *p = &out->profile;
		out->kind = ETC_EVENT_PROFILE;
		s = etc_fb_table_at(buf, sub);
		p->name = etc_fb_str(buf, etc_fb_ref(buf, &s, 0));
		p->chain_index = get_i32(buf, &s, 1, 0);
		p->instruction_id = get_i32(buf, &s, 2, -1);
		p->delegate_debug_id_int = get_i32(buf, &s, 3, -1);
		p->delegate_debug_id_str = etc_fb_str(buf, etc_fb_ref(buf, &s, 4));
		size_t m = etc_fb_ref(buf, &s, 5);
		p->has_metadata = m != 0;
		p->metadata = m ? buf + m + 4 : NULL;
		p->metadata_len = m ? etc_le32(buf + m) : 0;
		p->start_time = get_u64(buf, &s, 6);
		p->end_time = get_u64(buf, &s, 7);
	} else if ((sub = etc_fb_ref(buf, &t, 1)) != 0) {
		out->kind = ETC_EVENT_ALLOCATION;
		s = etc_fb_table_at(buf, sub);
		out->allocation.allocator_id = get_i32(buf, &s, 0, 0);
		out->allocation.allocation_size = get_u64(buf, &s, 1);
	} else if ((sub = etc_fb_ref(buf, &t, 2)) != 0) {
		etc_debug_event *g = &out->debug;
		out->kind = ETC_EVENT_DEBUG;
		s = etc_fb_table_at(buf, sub);
		g->chain_index = get_u64(buf, &s, 0);
		g->instruction_id = get_i32(buf, &s, 1, -1);
		g->delegate_debug_id_int = get_i32(buf, &s, 3, -1);
		g->delegate_debug_id_str = etc_fb_str(buf, etc_fb_ref(buf, &s, 4));
		g->name = etc_fb_str(buf, etc_fb_ref(buf, &s, 5));
		size_t vp = etc_fb_ref(buf, &s, 2);
		g->has_value = vp != 0;
		if (vp)
			decode_value(d, vp, &g->value);
		g->value.run_ = run;
		g->value.event_ = e;
	} else {
		out->kind = ETC_EVENT_EMPTY;
	}
}

/* Exposed to debug_buffer.c through tensor_private.h. */
#include "format/tensor_private.h"

int etc_value_tensor(const etc_value *v, uint32_t i, const etc_debug_buffer *dbuf, etc_tensor *out,
                     etc_error *err)
{
	if (!v || !out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_value_tensor: NULL %s",
		                !v ? "v" : "out");
	const etc_etdump *d = v->dump_;
	if (!d || i >= v->tensor_count)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_value_tensor: tensor %u of %u requested", i, v->tensor_count);
	const uint8_t *buf = d->buf;
	size_t tp = v->type == ETC_VALUE_TENSOR
	                ? v->tensors_pos_
	                : etc_fb_deref(buf, v->tensors_pos_ + 4 + 4 * (size_t)i);
	etc_fb_table t = etc_fb_table_at(buf, tp);
	size_t f = etc_fb_field(buf, &t, 0);
	memset(out, 0, sizeof *out);
	out->scalar_type = f ? (int8_t)buf[f] : 0;
	size_t sv = etc_fb_ref(buf, &t, 1);
	out->ndim = sv ? etc_le32(buf + sv) : 0;
	out->sizes_le = sv ? buf + sv + 4 : NULL;
	sv = etc_fb_ref(buf, &t, 2);
	out->nstrides = sv ? etc_le32(buf + sv) : 0;
	out->strides_le = sv ? buf + sv + 4 : NULL;
	f = etc_fb_field(buf, &t, 3);
	out->offset = f ? (int64_t)etc_le64(buf + f) : 0;
	out->numel = 1;
	for (uint32_t k = 0; k < out->ndim; k++)
		out->numel *= (uint64_t)etc_tensor_size(out, k); /* verified: no overflow */

	/* the context of a message is formatted only when one is raised */
	size_t esz = etc_scalar_type_size(out->scalar_type);
	if (!esz)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, d->name, (int64_t)(d->base + tp),
		                "run %u, event %u, tensor %u: unsupported scalar type %d", v->run_,
		                v->event_, i, out->scalar_type);
	out->nbytes = out->numel * esz;
	return etc_tensor_attach_(out, dbuf, v->run_, v->event_, i, err);
}
