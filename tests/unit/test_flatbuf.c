/*
 * test_flatbuf.c - the FlatBuffer verifier (src/flatbuf.c) and the ETDump
 * schema checks (src/etdump.c) on tiny buffers built here byte by byte.
 *
 * build() lays out a complete, valid ETDump front to back and records where
 * every table, vtable, vector and field landed; each case patches a few
 * bytes, calls etc_etdump_wrap and checks the status, err.offset (the exact
 * byte that is wrong) and that the message names the table/field. The same
 * buffers are then tried with a 4-byte size prefix, where every offset must
 * move by 4.
 */
#include "check.h"

#include "etcompare/etdump.h"
#include "etcompare/tensor.h"

#include <stdint.h>
#include <stdlib.h>

/* --- a forward FlatBuffer builder ----------------------------------------- */

typedef struct bld {
	uint8_t *b;
	size_t n, cap;
} bld;

static size_t b_alloc(bld *B, size_t size, size_t align)
{
	while (B->n % align)
		B->n++;
	size_t pos = B->n;
	if (B->n + size > B->cap) {
		fprintf(stderr, "builder overflow\n");
		exit(2);
	}
	memset(B->b + pos, 0, size);
	B->n += size;
	return pos;
}

static void w16(bld *B, size_t at, uint16_t v)
{
	B->b[at] = (uint8_t)v;
	B->b[at + 1] = (uint8_t)(v >> 8);
}

static void w32(bld *B, size_t at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		B->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void w64(bld *B, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		B->b[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

/* A vtable for a table of tbl_len bytes with the given field offsets (0 = absent). */
static size_t b_vtable(bld *B, uint16_t tbl_len, int nfields, const uint16_t *offs)
{
	size_t pos = b_alloc(B, 4 + 2 * (size_t)nfields, 2);
	w16(B, pos, (uint16_t)(4 + 2 * nfields));
	w16(B, pos + 2, tbl_len);
	for (int i = 0; i < nfields; i++)
		w16(B, pos + 4 + 2 * (size_t)i, offs[i]);
	return pos;
}

/* A table using vtable vt (placed before it). */
static size_t b_table(bld *B, size_t vt, uint16_t tbl_len)
{
	size_t pos = b_alloc(B, tbl_len, 8);
	w32(B, pos, (uint32_t)(pos - vt));
	return pos;
}

/* uoffset at `at` pointing forward to `target`. */
static void b_ref(bld *B, size_t at, size_t target)
{
	w32(B, at, (uint32_t)(target - at));
}

/* A vector of count elements of esz bytes with its elements aligned to `align`. */
static size_t b_vec(bld *B, uint32_t count, size_t esz, size_t align)
{
	while ((B->n + 4) % align)
		B->n++;
	size_t pos = b_alloc(B, 4 + count * esz, 1);
	w32(B, pos, count);
	return pos;
}

static size_t b_str(bld *B, const char *s)
{
	size_t n = strlen(s);
	size_t pos = b_alloc(B, 4 + n + 1, 4);
	w32(B, pos, (uint32_t)n);
	memcpy(B->b + pos + 4, s, n + 1);
	return pos;
}

/* --- the reference ETDump ------------------------------------------------- */

/* Where build() put things (absolute positions in the plain buffer). */
typedef struct layout {
	size_t root_vt, root, runs, run_vt, run, run_name, events;
	size_t ev0_vt, ev0, prof_vt, prof, prof_name;
	size_t ev1_vt, ev1, dbg_vt, dbg, value_vt, value, tensor_vt, tensor, sizes, strides;
	size_t len;
} layout;

/*
 * ETDump{version 7, run_data [RunData{name "run0", bundled_input_index 3,
 *   events [Event{profile_event ProfileEvent{name "op", chain_index 1,
 *            instruction_id 4, start_time 100, end_time 250}},
 *           Event{debug_event DebugEvent{chain_index 1, instruction_id 4,
 *            debug_entry Value{val Tensor, tensor Tensor{FLOAT, sizes [2, 3],
 *            strides [3, 1], offset 8}}}}]}]}
 */
static void build(bld *B, layout *L)
{
	B->n = 0;
	size_t root_off = b_alloc(B, 8, 1);
	memcpy(B->b + 4, "ED00", 4);

	L->root_vt = b_vtable(B, 12, 2, (const uint16_t[]){4, 8});
	L->root = b_table(B, L->root_vt, 12);
	b_ref(B, root_off, L->root);
	w32(B, L->root + 4, 7);

	L->runs = b_vec(B, 1, 4, 4);
	b_ref(B, L->root + 8, L->runs);

	L->run_vt = b_vtable(B, 16, 4, (const uint16_t[]){4, 8, 0, 12});
	L->run = b_table(B, L->run_vt, 16);
	b_ref(B, L->runs + 4, L->run);
	w32(B, L->run + 8, 3);
	L->run_name = b_str(B, "run0");
	b_ref(B, L->run + 4, L->run_name);

	L->events = b_vec(B, 2, 4, 4);
	b_ref(B, L->run + 12, L->events);

	/* Event 0: a profile event. */
	L->ev0_vt = b_vtable(B, 8, 1, (const uint16_t[]){4});
	L->ev0 = b_table(B, L->ev0_vt, 8);
	b_ref(B, L->events + 4, L->ev0);
	L->prof_vt = b_vtable(B, 32, 8, (const uint16_t[]){4, 8, 12, 0, 0, 0, 16, 24});
	L->prof = b_table(B, L->prof_vt, 32);
	b_ref(B, L->ev0 + 4, L->prof);
	w32(B, L->prof + 8, 1);
	w32(B, L->prof + 12, 4);
	w64(B, L->prof + 16, 100);
	w64(B, L->prof + 24, 250);
	L->prof_name = b_str(B, "op");
	b_ref(B, L->prof + 4, L->prof_name);

	/* Event 1: a debug event with a tensor. */
	L->ev1_vt = b_vtable(B, 8, 3, (const uint16_t[]){0, 0, 4});
	L->ev1 = b_table(B, L->ev1_vt, 8);
	b_ref(B, L->events + 8, L->ev1);
	L->dbg_vt = b_vtable(B, 24, 3, (const uint16_t[]){8, 4, 16});
	L->dbg = b_table(B, L->dbg_vt, 24);
	b_ref(B, L->ev1 + 4, L->dbg);
	w32(B, L->dbg + 4, 4);
	w64(B, L->dbg + 8, 1);
	L->value_vt = b_vtable(B, 12, 2, (const uint16_t[]){4, 8});
	L->value = b_table(B, L->value_vt, 12);
	b_ref(B, L->dbg + 16, L->value);
	B->b[L->value + 4] = ETC_VALUE_TENSOR;
	L->tensor_vt = b_vtable(B, 24, 4, (const uint16_t[]){4, 8, 12, 16});
	L->tensor = b_table(B, L->tensor_vt, 24);
	b_ref(B, L->value + 8, L->tensor);
	B->b[L->tensor + 4] = ETC_FLOAT;
	w64(B, L->tensor + 16, 8);
	L->sizes = b_vec(B, 2, 8, 8);
	w64(B, L->sizes + 4, 2);
	w64(B, L->sizes + 12, 3);
	b_ref(B, L->tensor + 8, L->sizes);
	L->strides = b_vec(B, 2, 8, 8);
	w64(B, L->strides + 4, 3);
	w64(B, L->strides + 12, 1);
	b_ref(B, L->tensor + 12, L->strides);
	while (B->n % 8)
		B->b[B->n++] = 0;
	L->len = B->n;
}

static uint8_t storage[1 << 16];
static uint8_t scratch[(1 << 16) + 16];

static bld new_bld(void)
{
	bld B = {storage, 0, sizeof storage};
	return B;
}

/* Wraps `len` bytes, plain (prefix 0) or size-prefixed, at an odd address. */
static int wrap(const uint8_t *data, size_t len, int prefix, etc_etdump **out, etc_error *err)
{
	uint8_t *p = scratch + 1; /* deliberately misaligned: loads must not assume alignment */
	size_t n = len;
	if (prefix) {
		p[0] = (uint8_t)len;
		p[1] = (uint8_t)(len >> 8);
		p[2] = (uint8_t)(len >> 16);
		p[3] = (uint8_t)(len >> 24);
		memcpy(p + 4, data, len);
		n += 4;
	} else {
		memcpy(p, data, len);
	}
	etc_error_clear(err);
	*out = NULL;
	return etc_etdump_wrap(out, p, n, "t.etdp", err);
}

/*
 * Expects wrapping to fail with `status` at plain-buffer byte `offset`
 * (shifted by 4 when size-prefixed; -1 = no offset) with `needle` in the
 * message. Checked both plain and size-prefixed.
 */
static void expect_fail_at(int line, const uint8_t *data, size_t len, int status, int64_t offset,
                           const char *needle)
{
	for (int prefix = 0; prefix < 2; prefix++) {
		etc_etdump *d;
		etc_error err;
		int rc = wrap(data, len, prefix, &d, &err);
		int64_t want = offset < 0 ? offset : offset + 4 * prefix;
		check_count++;
		if (rc != status || err.status != status || err.offset != want ||
		    !strstr(err.message, needle) || d != NULL) {
			check_failures++;
			fprintf(stderr,
			        "%s:%d (%s): rc %d status %d offset %lld, want %d at %lld "
			        "with \"%s\"; message: %s\n",
			        __FILE__, line, prefix ? "size-prefixed" : "plain", rc, err.status,
			        (long long)err.offset, status, (long long)want, needle,
			        err.message);
		}
		/* Every message starts with the file name and the byte. */
		if (want >= 0) {
			char head[64];
			snprintf(head, sizeof head, "t.etdp: byte %lld: ", (long long)want);
			CHECK(strncmp(err.message, head, strlen(head)) == 0);
		}
		etc_etdump_free(d);
	}
}
#define EXPECT_FAIL(data, len, status, offset, needle)                                             \
	expect_fail_at(__LINE__, data, len, status, offset, needle)

/* --- cases ---------------------------------------------------------------- */

static void test_valid(void)
{
	bld B = new_bld();
	layout L;
	build(&B, &L);
	for (int prefix = 0; prefix < 2; prefix++) {
		etc_etdump *d;
		etc_error err;
		int rc = wrap(B.b, L.len, prefix, &d, &err);
		CHECK(rc == 0);
		if (rc) {
			fprintf(stderr, "valid buffer rejected: %s\n", err.message);
			continue;
		}
		CHECK(etc_etdump_size_prefixed(d) == (prefix != 0));
		CHECK_STR(etc_etdump_name(d), "t.etdp");
		CHECK(etc_etdump_version(d) == 7);
		CHECK(etc_etdump_run_count(d) == 1);
		CHECK(etc_etdump_event_total(d) == 2);
		etc_run r;
		etc_etdump_run(d, 0, &r);
		CHECK(r.name.len == 4 && memcmp(r.name.ptr, "run0", 5) == 0);
		CHECK(r.bundled_input_index == 3);
		CHECK(r.allocator_count == 0 && r.event_count == 2);
		CHECK(etc_etdump_event_offset(d, 0, 0) == L.ev0 + 4 * (size_t)prefix);
		CHECK(etc_etdump_event_offset(d, 0, 1) == L.ev1 + 4 * (size_t)prefix);

		etc_event e;
		etc_etdump_event(d, 0, 0, &e);
		CHECK(e.kind == ETC_EVENT_PROFILE);
		CHECK(e.profile.name.len == 2 && memcmp(e.profile.name.ptr, "op", 3) == 0);
		CHECK(e.profile.chain_index == 1 && e.profile.instruction_id == 4);
		CHECK(e.profile.delegate_debug_id_int == -1); /* absent: schema default */
		CHECK(e.profile.delegate_debug_id_str.len == 0 &&
		      e.profile.delegate_debug_id_str.ptr != NULL);
		CHECK(!e.profile.has_metadata && e.profile.metadata == NULL);
		CHECK(e.profile.start_time == 100 && e.profile.end_time == 250);

		etc_etdump_event(d, 0, 1, &e);
		CHECK(e.kind == ETC_EVENT_DEBUG);
		CHECK(e.debug.chain_index == 1 && e.debug.instruction_id == 4);
		CHECK(e.debug.delegate_debug_id_int == -1 && e.debug.name.len == 0);
		CHECK(e.debug.has_value && e.debug.value.type == ETC_VALUE_TENSOR);
		CHECK(!e.debug.value.is_output && !e.debug.value.has_output);
		CHECK(e.debug.value.tensor_count == 1);

		/* The tensor: FLOAT [2, 3] at offset 8 = 24 bytes. */
		etc_tensor t;
		rc = etc_value_tensor(&e.debug.value, 0, NULL, &t, &err);
		CHECK(rc == 0);
		CHECK(t.scalar_type == ETC_FLOAT && t.ndim == 2 && t.nstrides == 2);
		CHECK(etc_tensor_size(&t, 0) == 2 && etc_tensor_size(&t, 1) == 3);
		CHECK(etc_tensor_stride(&t, 0) == 3 && etc_tensor_stride(&t, 1) == 1);
		CHECK(t.offset == 8 && t.numel == 6 && t.nbytes == 24 && t.data == NULL);
		CHECK(etc_value_tensor(&e.debug.value, 1, NULL, &t, &err) == ETC_ERR_USAGE);

		/* With a debug buffer: [8, 32) must fit. */
		static uint8_t dbg[40];
		for (int i = 0; i < 6; i++) {
			float f = (float)i + 0.5f;
			memcpy(dbg + 8 + 4 * i, &f, 4);
		}
		etc_debug_buffer *db;
		CHECK(etc_debug_buffer_wrap(&db, dbg, 32, "d.bin", &err) == 0);
		rc = etc_value_tensor(&e.debug.value, 0, db, &t, &err);
		CHECK(rc == 0 && t.data == dbg + 8);
		if (rc == 0) {
			CHECK_DOUBLE_EXACT(etc_tensor_get(&t, 0), 0.5);
			CHECK_DOUBLE_EXACT(etc_tensor_get(&t, 5), 5.5);
		}
		etc_debug_buffer_free(db);
		CHECK(etc_debug_buffer_wrap(&db, dbg, 31, "d.bin", &err) == 0);
		etc_error_clear(&err);
		rc = etc_value_tensor(&e.debug.value, 0, db, &t, &err);
		CHECK(rc == ETC_ERR_FORMAT && err.offset == 8);
		CHECK(strstr(err.message, "d.bin: byte 8: run 0, event 1, tensor 0") != NULL);
		CHECK(strstr(err.message, "past the end of the debug buffer (31 bytes)") != NULL);
		etc_debug_buffer_free(db);
		etc_etdump_free(d);
	}
	/* Trailing bytes after a size-prefixed buffer are ignored (the prefix rules). */
	memcpy(scratch + 1, &(uint32_t){(uint32_t)L.len}, 4);
	memcpy(scratch + 5, B.b, L.len);
	memset(scratch + 5 + L.len, 0xEE, 7);
	etc_etdump *d = NULL;
	etc_error err;
	CHECK(etc_etdump_wrap(&d, scratch + 1, L.len + 4 + 7, "t", &err) == 0);
	etc_etdump_free(d);
}

static void test_header(void)
{
	bld B = new_bld();
	layout L;
	etc_etdump *d;
	etc_error err;
	build(&B, &L);
	/* Too short to hold anything. */
	for (size_t n = 0; n < 8; n++) {
		etc_error_clear(&err);
		CHECK(etc_etdump_wrap(&d, B.b, n, "t.etdp", &err) == ETC_ERR_FORMAT);
		CHECK(err.offset == -1 && strstr(err.message, "too short") != NULL);
	}
	/* NULL data with zero length is an empty (too short) buffer, not a crash. */
	CHECK(etc_etdump_wrap(&d, NULL, 0, "t.etdp", &err) == ETC_ERR_FORMAT);
	CHECK(etc_etdump_wrap(&d, NULL, 5, "t.etdp", &err) == ETC_ERR_USAGE);
	CHECK(etc_etdump_wrap(NULL, B.b, L.len, "t.etdp", &err) == ETC_ERR_USAGE);

	/* Wrong identifier. */
	memcpy(B.b + 4, "ED01", 4);
	etc_error_clear(&err);
	CHECK(etc_etdump_wrap(&d, B.b, L.len, "t.etdp", &err) == ETC_ERR_FORMAT);
	CHECK(err.offset == 4 && strstr(err.message, "file identifier") != NULL);
	memcpy(B.b + 4, "ED00", 4);

	/* Size prefix larger than the rest of the file / too small. */
	memcpy(scratch, &(uint32_t){(uint32_t)L.len + 1}, 4);
	memcpy(scratch + 4, B.b, L.len);
	etc_error_clear(&err);
	CHECK(etc_etdump_wrap(&d, scratch, L.len + 4, "t.etdp", &err) == ETC_ERR_FORMAT);
	CHECK(err.offset == 0 && strstr(err.message, "truncated ETDump") != NULL);
	memcpy(scratch, &(uint32_t){0xFFFFFFFFu}, 4);
	CHECK(etc_etdump_wrap(&d, scratch, L.len + 4, "t.etdp", &err) == ETC_ERR_FORMAT);
	CHECK(err.offset == 0 && strstr(err.message, "4294967295") != NULL);
	memcpy(scratch, &(uint32_t){7}, 4);
	CHECK(etc_etdump_wrap(&d, scratch, L.len + 4, "t.etdp", &err) == ETC_ERR_FORMAT);
	CHECK(err.offset == 0 && strstr(err.message, "too small") != NULL);

	/* Root offset: zero, at the end, far outside. */
	w32(&B, 0, 0);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, 0, "ETDump (root offset): offset 0 points outside");
	w32(&B, 0, (uint32_t)L.len);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, 0, "points outside the buffer");
	w32(&B, 0, 0xFFFFFFFFu);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, 0, "offset 4294967295 points outside");
	/* Root table too close to the end for its soffset. */
	w32(&B, 0, (uint32_t)L.len - 2);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.len - 2,
	            "ETDump: table starts outside the buffer");
}

static void test_tables(void)
{
	bld B = new_bld();
	layout L;

	/* vtable before the buffer start, and past its end. */
	build(&B, &L);
	w32(&B, L.root, (uint32_t)(L.root + 1));
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.root, "ETDump: vtable at");
	w32(&B, L.root, (uint32_t)(int32_t) - (int32_t)L.len);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.root, "lies outside the buffer");
	w32(&B, L.root, 0x80000000u);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.root, "lies outside the buffer");
	/* vtable 2 bytes from the end: its two 16-bit sizes do not fit. */
	w32(&B, L.root, (uint32_t)(int32_t)((int64_t)L.root - (int64_t)(L.len - 2)));
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.root, "lies outside the buffer");

	/* Odd and too small vtable sizes; vtable or table past the end. */
	build(&B, &L);
	w16(&B, L.run_vt, 7);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run, "RunData (run 0): vtable size 7");
	w16(&B, L.run_vt, 2);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run, "vtable size 2 is invalid");
	w16(&B, L.run_vt, 0xFFFE);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run,
	            "vtable of 65534 bytes runs past the buffer end");
	build(&B, &L);
	w16(&B, L.run_vt + 2, 0xFFFF);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run,
	            "table of 65535 bytes runs past the buffer end");
	w16(&B, L.run_vt + 2, 2);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run, "table of 2 bytes");

	/* A field whose bytes lie outside its table. */
	build(&B, &L);
	w16(&B, L.prof_vt + 4 + 2 * 7, 30); /* end_time (8 bytes) at 30 of 32 */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.prof,
	            "ProfileEvent.end_time (run 0, event 0): field at table offset 30");
	build(&B, &L);
	w16(&B, L.root_vt + 4, 10); /* version (4 bytes) at 10 of 12 */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.root, "ETDump.version: field at");

	/* A reference field whose offset points past the end. */
	build(&B, &L);
	w32(&B, L.prof + 4, 0x7FFFFFF0u);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.prof + 4,
	            "ProfileEvent.name (run 0, event 0): offset 2147483632 points outside");
	/* A vector element that points outside. */
	build(&B, &L);
	w32(&B, L.events + 8, (uint32_t)(L.len - (L.events + 8)));
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.events + 8,
	            "RunData.events (run 0, event 1): offset");
}

static void test_vectors_strings(void)
{
	bld B = new_bld();
	layout L;
	build(&B, &L);
	w32(&B, L.events, 0xFFFFFFFFu);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.events,
	            "RunData.events (run 0): vector of 4294967295 elements (17179869180 bytes)");
	build(&B, &L);
	w32(&B, L.sizes, 0x20000000u); /* 2^29 * 8 = 2^32 bytes */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.sizes,
	            "Tensor.sizes (run 0, event 1): vector of 536870912 elements");
	build(&B, &L);
	w32(&B, L.runs, 2); /* second element is the RunData's first bytes: garbage */
	{
		etc_etdump *d;
		etc_error err;
		int rc = wrap(B.b, L.len, 0, &d, &err);
		CHECK(rc == ETC_ERR_FORMAT);
		CHECK(strstr(err.message, "(run 1)") != NULL);
	}
	/* A vector header that does not fit at all. */
	build(&B, &L);
	b_ref(&B, L.root + 8, L.len - 2);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.len - 2,
	            "ETDump.run_data: vector length lies outside the buffer");

	/* Strings: no NUL, too long, header outside. */
	build(&B, &L);
	B.b[L.run_name + 4 + 4] = 'X';
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run_name,
	            "RunData.name (run 0): string of 4 bytes is not NUL-terminated");
	build(&B, &L);
	w32(&B, L.prof_name, 5); /* "op\0" then padding: byte 4+5 is not NUL or past */
	B.b[L.prof_name + 4 + 5] = 1;
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.prof_name,
	            "ProfileEvent.name (run 0, event 0): string of 5 bytes");
	build(&B, &L);
	w32(&B, L.run_name, 0xFFFFFFFFu);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.run_name,
	            "string of 4294967295 bytes runs past the buffer end");
	build(&B, &L);
	b_ref(&B, L.run + 4, L.len - 3);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.len - 3,
	            "RunData.name (run 0): string length lies outside the buffer");
	/* A string whose NUL is the buffer's very last byte is fine; one byte shorter is not. */
	build(&B, &L);
	size_t s = b_str(&B, "tail");
	b_ref(&B, L.run + 4, s);
	EXPECT_FAIL(B.b, B.n - 1, ETC_ERR_FORMAT, (int64_t)s, "string of 4 bytes runs past");
	{
		etc_etdump *d;
		etc_error err;
		CHECK(wrap(B.b, B.n, 0, &d, &err) == 0);
		etc_run r;
		if (d) {
			etc_etdump_run(d, 0, &r);
			CHECK(r.name.len == 4 && memcmp(r.name.ptr, "tail", 5) == 0);
		}
		etc_etdump_free(d);
	}
}

static void test_schema(void)
{
	bld B = new_bld();
	layout L;

	/* Event with two of profile/allocation/debug set. */
	build(&B, &L);
	w16(&B, L.ev1_vt + 4, 4); /* event 1: profile_event reads debug_event's field */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.ev1,
	            "Event (run 0, event 1): 2 of profile_event, allocation_event and "
	            "debug_event are set");
	build(&B, &L);
	w16(&B, L.ev1_vt + 4, 4);
	w16(&B, L.ev1_vt + 6, 4); /* all three at the same field */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.ev1, "3 of profile_event");

	/* Unknown Value.val: 8, 127 and -1. */
	static const int8_t bad_vals[] = {8, 127, -1, -128};
	for (size_t i = 0; i < sizeof bad_vals / sizeof bad_vals[0]; i++) {
		build(&B, &L);
		B.b[L.value + 4] = (uint8_t)bad_vals[i];
		char want[64];
		snprintf(want, sizeof want, "Value.val (run 0, event 1): unknown value type %d",
		         bad_vals[i]);
		EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.value + 4, want);
	}
	/* val says Tensor / TensorList but the table is missing. */
	build(&B, &L);
	w16(&B, L.value_vt + 6, 0);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.value,
	            "val is Tensor but the tensor is missing");
	build(&B, &L);
	B.b[L.value + 4] = ETC_VALUE_TENSOR_LIST;
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.value,
	            "val is TensorList but the tensor list is missing");

	/* Negative sizes, overflowing products, offsets below -1. */
	build(&B, &L);
	w64(&B, L.sizes + 12, (uint64_t)-3);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.sizes + 12,
	            "Tensor.sizes (run 0, event 1): size 1 is negative (-3)");
	build(&B, &L);
	w64(&B, L.sizes + 4, (uint64_t)INT64_MIN);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.sizes + 4,
	            "size 0 is negative (-9223372036854775808)");
	build(&B, &L);
	w64(&B, L.sizes + 4, 1ULL << 32);
	w64(&B, L.sizes + 12, 1ULL << 32);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.sizes,
	            "the product of the sizes overflows 64 bits");
	build(&B, &L);
	w64(&B, L.sizes + 4, 1ULL << 31);
	w64(&B, L.sizes + 12, 1ULL << 31); /* numel 2^62 fits, * 4 bytes does not */
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.tensor,
	            "Tensor (run 0, event 1): data size of 4611686018427387904 elements of "
	            "float32 overflows 64 bits");
	build(&B, &L);
	w64(&B, L.tensor + 16, (uint64_t)-2);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.tensor + 16,
	            "Tensor.offset (run 0, event 1): offset -2 is negative");
	build(&B, &L);
	w64(&B, L.tensor + 16, (uint64_t)INT64_MIN);
	EXPECT_FAIL(B.b, L.len, ETC_ERR_FORMAT, (int64_t)L.tensor + 16, "Tensor.offset");

	/* -1 is "no data" and zero sizes are empty tensors: both valid. */
	build(&B, &L);
	w64(&B, L.tensor + 16, (uint64_t)-1);
	w64(&B, L.sizes + 4, 0);
	w64(&B, L.sizes + 12, (uint64_t)INT64_MAX);
	{
		etc_etdump *d;
		etc_error err;
		CHECK(wrap(B.b, L.len, 0, &d, &err) == 0);
		if (d) {
			etc_event e;
			etc_tensor t;
			etc_etdump_event(d, 0, 1, &e);
			CHECK(etc_value_tensor(&e.debug.value, 0, NULL, &t, &err) == 0);
			CHECK(t.offset == -1 && t.numel == 0 && t.nbytes == 0);
		}
		etc_etdump_free(d);
	}

	/* An unknown scalar type verifies but cannot be decoded. */
	build(&B, &L);
	B.b[L.tensor + 4] = 9;
	{
		etc_etdump *d;
		etc_error err;
		CHECK(wrap(B.b, L.len, 0, &d, &err) == 0);
		if (d) {
			etc_event e;
			etc_tensor t;
			etc_etdump_event(d, 0, 1, &e);
			etc_error_clear(&err);
			CHECK(etc_value_tensor(&e.debug.value, 0, NULL, &t, &err) ==
			      ETC_ERR_UNSUPPORTED);
			CHECK(err.offset == (int64_t)L.tensor);
			CHECK(strstr(err.message, "unsupported scalar type 9") != NULL);
		}
		etc_etdump_free(d);
	}
}

/*
 * A buffer that references the same data over and over: 4000 events all
 * pointing at one Event whose TensorList holds 4000 references to one
 * Tensor. Some 16 KB of file, 16 million tensor visits: the verifier must
 * give up with ETC_ERR_LIMIT rather than spin.
 */
static void test_budget(void)
{
	static uint8_t big[1 << 16];
	bld B = {big, 0, sizeof big};
	const uint32_t N = 4000;
	size_t root_off = b_alloc(&B, 8, 1);
	memcpy(B.b + 4, "ED00", 4);
	size_t vt = b_vtable(&B, 12, 2, (const uint16_t[]){0, 8});
	size_t root = b_table(&B, vt, 12);
	b_ref(&B, root_off, root);
	size_t runs = b_vec(&B, 1, 4, 4);
	b_ref(&B, root + 8, runs);
	vt = b_vtable(&B, 16, 4, (const uint16_t[]){0, 0, 0, 12});
	size_t run = b_table(&B, vt, 16);
	b_ref(&B, runs + 4, run);
	size_t events = b_vec(&B, N, 4, 4);
	b_ref(&B, run + 12, events);
	vt = b_vtable(&B, 8, 3, (const uint16_t[]){0, 0, 4});
	size_t ev = b_table(&B, vt, 8);
	for (uint32_t i = 0; i < N; i++)
		b_ref(&B, events + 4 + 4 * (size_t)i, ev);
	vt = b_vtable(&B, 8, 3, (const uint16_t[]){0, 0, 4});
	size_t dbg = b_table(&B, vt, 8);
	b_ref(&B, ev + 4, dbg);
	vt = b_vtable(&B, 12, 3, (const uint16_t[]){4, 0, 8});
	size_t val = b_table(&B, vt, 12);
	b_ref(&B, dbg + 4, val);
	B.b[val + 4] = ETC_VALUE_TENSOR_LIST;
	vt = b_vtable(&B, 8, 1, (const uint16_t[]){4});
	size_t list = b_table(&B, vt, 8);
	b_ref(&B, val + 8, list);
	size_t tensors = b_vec(&B, N, 4, 4);
	b_ref(&B, list + 4, tensors);
	vt = b_vtable(&B, 4, 0, NULL);
	size_t tensor = b_table(&B, vt, 4);
	for (uint32_t i = 0; i < N; i++)
		b_ref(&B, tensors + 4 + 4 * (size_t)i, tensor);

	etc_etdump *d;
	etc_error err;
	etc_error_clear(&err);
	int rc = etc_etdump_wrap(&d, B.b, B.n, "bomb", &err);
	CHECK(rc == ETC_ERR_LIMIT && err.status == ETC_ERR_LIMIT);
	CHECK(strstr(err.message, "verification budget exhausted") != NULL);
	CHECK(err.offset > 0 && (uint64_t)err.offset < B.n);

	/* The same shape with few references is fine. */
	w32(&B, events, 3);
	w32(&B, tensors, 3);
	rc = etc_etdump_wrap(&d, B.b, B.n, "small", &err);
	CHECK(rc == 0);
	if (rc == 0) {
		etc_event e;
		etc_etdump_event(d, 0, 2, &e);
		CHECK(e.kind == ETC_EVENT_DEBUG && e.debug.value.type == ETC_VALUE_TENSOR_LIST);
		CHECK(e.debug.value.tensor_count == 3);
		etc_tensor t;
		CHECK(etc_value_tensor(&e.debug.value, 2, NULL, &t, &err) == 0);
		CHECK(t.scalar_type == ETC_BYTE && t.ndim == 0 && t.numel == 1 && t.offset == 0);
		etc_etdump_free(d);
	}
}

/* Every prefix of a valid plain buffer is rejected (its last byte is a string's NUL). */
static void test_truncation(void)
{
	bld B = new_bld();
	layout L;
	build(&B, &L);
	size_t s = b_str(&B, "end");
	b_ref(&B, L.run + 4, s);
	int accepted = 0;
	for (size_t n = 0; n < B.n; n++) {
		etc_etdump *d;
		etc_error err;
		etc_error_clear(&err);
		int rc = etc_etdump_wrap(&d, B.b, n, "t", &err);
		if (rc != ETC_ERR_FORMAT || err.message[0] == '\0')
			accepted++;
		if (rc == 0)
			etc_etdump_free(d);
	}
	CHECK(accepted == 0);
}

int main(void)
{
	test_valid();
	CHECK_GROUP(test_header);
	CHECK_GROUP(test_tables);
	CHECK_GROUP(test_vectors_strings);
	CHECK_GROUP(test_schema);
	CHECK_GROUP(test_budget);
	CHECK_GROUP(test_truncation);
	return check_report("test_flatbuf");
}
