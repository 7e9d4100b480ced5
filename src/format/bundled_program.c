/*
 * bundled_program.c - the BundledProgram reader (include/etcompare/bundled.h):
 * detection of the file identifier, full verification of the FlatBuffer
 * against schema/bundled_program_schema.fbs (structure and tensor
 * semantics), and zero-copy views of the test cases' values.
 *
 * Vtable slots (declaration order of the schema):
 *   BundledProgram          0 version:u32  1 method_test_suites  2 program:[u8]
 *   BundledMethodTestSuite  0 method_name  1 test_cases
 *   BundledMethodTestCase   0 inputs:[Value]  1 expected_outputs:[Value]
 *   Value                   0 val_type:u8  1 val (union: 1 Tensor 2 Int 3 Bool 4 Double)
 *   Tensor                  0 scalar_type:i8  1 sizes:[i32]  2 data:[u8]  3 dim_order:[u8]
 *   Int/Bool/Double         0 int_val:i64 / bool_val:bool / double_val:f64
 *
 * Opening makes two passes: the verification counts the test cases, values
 * and dimensions, then the object's index (test cases per method, values per
 * test case, every tensor's sizes widened to int64) is filled from the
 * verified buffer. Nothing else is copied.
 */
#include "etcompare/bundled.h"
#include "etcompare/text.h"
#include "format/flatbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FILE_ID "BP08"

typedef struct bmethod {
	etc_str name;
	size_t cases;      /* first element of its test_cases vector, 0 when absent */
	size_t first_case; /* index of test case 0 in `first_value` */
	uint32_t ncases;
} bmethod;

/* A test case, decoded on demand from the verified buffer. */
typedef struct bcase {
	size_t in_vec, out_vec; /* first element of each vector, 0 when absent */
	uint32_t nin, nout;
	size_t first_value; /* index of input 0 in `shapes`; the outputs follow */
} bcase;

struct etc_bundled {
	etc_map map;
	const uint8_t *buf; /* FlatBuffer proper */
	size_t len;
	size_t base; /* file offset of buf[0] */
	uint32_t version;
	size_t program; /* first byte of the program vector, 0 when absent */
	uint32_t program_len;
	uint32_t nmethods;
	bmethod *methods;
	size_t *first_value;    /* per test case */
	const int64_t **shapes; /* per value: its sizes as int64, NULL for scalars */
	char *name;
	etc_arena arena;
};

/* --- verification ---------------------------------------------------------- */

/* What the verifier is looking at, for messages. */
typedef struct where {
	char method[80]; /* escaped */
	uint32_t tc;
	char prefix[192]; /* "test case 1 of method forward: input 0" */
	char field[256];  /* prefix + ": Tensor.sizes" */
} where;

/*
 * What the index will hold. Shared tables and vectors let a small file name
 * many test cases, values and dimensions; an honest writer stores each one
 * once, in at least 8 (a test case: its vector slot and table), 16 (a
 * value: slot, Value and union tables) and 4 bytes (a size), so more than
 * that is refused before the index is allocated.
 */
typedef struct totals {
	size_t cases, values, dims;
	size_t max_cases, max_values, max_dims;
} totals;

static const char *at_field(where *w, const char *field)
{
	snprintf(w->field, sizeof w->field, "%s: %s", w->prefix, field);
	return w->field;
}

static const char *const kind_names[] = {"NONE", "Tensor", "Int", "Bool", "Double"};

/* "[1, 3, 16, 16]" from int32 sizes (at most 8 shown). */
static void sizes_str(const uint8_t *p, uint32_t n, char *out, size_t cap)
{
	size_t k = (size_t)snprintf(out, cap, "[");
	for (uint32_t i = 0; i < n && k < cap; i++) {
		if (i == 8) {
			k += (size_t)snprintf(out + k, cap - k, ", ... (%u sizes)", n);
			break;
		}
		k += (size_t)snprintf(out + k, cap - k, i ? ", %d" : "%d",
		                      (int32_t)etc_le32(p + 4 * (size_t)i));
	}
	if (k < cap)
		snprintf(out + k, cap - k, "]");
}

static int verify_tensor(etc_fb *fb, where *w, size_t pos, totals *tot)
{
	etc_fb_table t;
	size_t f, sizes, data, order;
	uint32_t ndim = 0, ndata = 0, norder = 0;
	ETC_TRY(etc_fb_verify_table(fb, pos, at_field(w, "Tensor"), &t));
	ETC_TRY(etc_fb_verify_field(fb, &t, 0, 1, at_field(w, "Tensor.scalar_type"), &f));
	int st = f ? (int8_t)fb->buf[f] : 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 1, at_field(w, "Tensor.sizes"), &sizes));
	if (sizes)
		ETC_TRY(etc_fb_verify_vector(fb, sizes, 4, w->field, &ndim));
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 2, at_field(w, "Tensor.data"), &data));
	if (data)
		ETC_TRY(etc_fb_verify_vector(fb, data, 1, w->field, &ndata));
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 3, at_field(w, "Tensor.dim_order"), &order));
	if (order)
		ETC_TRY(etc_fb_verify_vector(fb, order, 1, w->field, &norder));

	size_t esz = etc_scalar_type_size(st);
	if (!esz)
		return etc_fb_fail(fb, f ? f : pos, w->prefix, "unknown scalar type %d", st);
	const uint8_t *sz = sizes ? fb->buf + sizes + 4 : NULL;
	uint64_t numel = 1, nbytes;
	bool empty = false; /* a size 0 anywhere: no elements, whatever the others */
	for (uint32_t i = 0; i < ndim; i++) {
		int32_t s = (int32_t)etc_le32(sz + 4 * (size_t)i);
		if (s < 0)
			return etc_fb_fail(fb, sizes + 4 + 4 * (size_t)i, w->prefix,
			                   "size %u is negative (%d)", i, s);
		empty |= s == 0;
	}
	for (uint32_t i = 0; i < ndim && !empty; i++)
		if (!etc_mul_u64(numel, etc_le32(sz + 4 * (size_t)i), &numel))
			return etc_fb_fail(fb, sizes, w->prefix,
			                   "the product of the sizes overflows 64 bits");
	if (empty)
		numel = 0;
	char shape[160];
	if (!etc_mul_u64(numel, esz, &nbytes)) {
		sizes_str(sz, ndim, shape, sizeof shape);
		return etc_fb_fail(fb, sizes, w->prefix,
		                   "sizes %s of %s: the byte size overflows 64 bits", shape,
		                   etc_scalar_type_name(st));
	}
	if (ndata != nbytes) {
		sizes_str(sz, ndim, shape, sizeof shape);
		return etc_fb_fail(fb, data ? data : pos, w->prefix,
		                   "data holds %u bytes, sizes %s of %s need %llu", ndata, shape,
		                   etc_scalar_type_name(st), (unsigned long long)nbytes);
	}
	/* an empty dim order is the default one (0-dim tensors have nothing else) */
	if (norder && norder != ndim)
		return etc_fb_fail(fb, order, w->prefix, "dim_order has %u entries for %u sizes",
		                   norder, ndim);
	if (norder) {
		uint64_t seen[4] = {0}; /* ndim <= 256 here: dim_order entries are bytes */
		if (ndim > 256)
			return etc_fb_fail(
			    fb, order, w->prefix,
			    "dim_order cannot order %u dimensions (entries are bytes)", ndim);
		for (uint32_t i = 0; i < norder; i++) {
			unsigned d = fb->buf[order + 4 + i];
			if (d >= ndim || (seen[d / 64] >> (d % 64) & 1))
				return etc_fb_fail(fb, order + 4 + i, w->prefix,
				                   "dim_order is not a permutation of the %u "
				                   "dimensions: entry %u is %u",
				                   ndim, i, d);
			seen[d / 64] |= (uint64_t)1 << (d % 64);
		}
	}
	tot->dims += ndim;
	if (tot->dims > tot->max_dims)
		return etc_fail(fb->err, ETC_ERR_LIMIT, fb->name, (int64_t)(fb->base + pos),
		                "%s: the tensors have more sizes in all than the file can hold "
		                "(shared sizes vectors)",
		                w->prefix);
	return 0;
}

static int verify_value(etc_fb *fb, where *w, size_t pos, totals *tot)
{
	etc_fb_table t;
	size_t f, r;
	ETC_TRY(etc_fb_verify_table(fb, pos, at_field(w, "Value"), &t));
	ETC_TRY(etc_fb_verify_field(fb, &t, 0, 1, at_field(w, "Value.val_type"), &f));
	unsigned type = f ? fb->buf[f] : 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 1, at_field(w, "Value.val"), &r));
	if (type == 0)
		return etc_fb_fail(fb, pos, w->prefix, "the value has no type (NONE)");
	if (type > ETC_BUNDLED_DOUBLE)
		return etc_fb_fail(fb, f, w->prefix,
		                   "unknown value type %u (Tensor 1, Int 2, Bool 3, Double 4)",
		                   type);
	if (!r)
		return etc_fb_fail(fb, pos, w->prefix, "the value is a %s, but the %s is missing",
		                   kind_names[type], kind_names[type]);
	if (type == ETC_BUNDLED_TENSOR)
		return verify_tensor(fb, w, r, tot);
	static const size_t scalar_size[] = {0, 0, 8, 1, 8};
	static const char *const scalar_field[] = {"", "", "Int.int_val", "Bool.bool_val",
	                                           "Double.double_val"};
	ETC_TRY(etc_fb_verify_table(fb, r, at_field(w, kind_names[type]), &t));
	return etc_fb_verify_field(fb, &t, 0, scalar_size[type], at_field(w, scalar_field[type]),
	                           &f);
}

static int verify_values(etc_fb *fb, where *w, const etc_fb_table *tc, bool expected, totals *tot)
{
	size_t v;
	uint32_t n = 0;
	snprintf(w->prefix, sizeof w->prefix, "test case %u of method %s", w->tc, w->method);
	const char *what = at_field(w, expected ? "BundledMethodTestCase.expected_outputs"
	                                        : "BundledMethodTestCase.inputs");
	ETC_TRY(etc_fb_verify_ref_field(fb, tc, expected ? 1 : 0, what, &v));
	if (v)
		ETC_TRY(etc_fb_verify_vector(fb, v, 4, what, &n));
	for (uint32_t i = 0; i < n; i++) {
		size_t vp;
		snprintf(w->prefix, sizeof w->prefix, "test case %u of method %s: %s %u", w->tc,
		         w->method, expected ? "expected output" : "input", i);
		ETC_TRY(etc_fb_verify_ref(fb, v + 4 + 4 * (size_t)i, w->prefix, &vp));
		ETC_TRY(verify_value(fb, w, vp, tot));
	}
	tot->values += n;
	return 0;
}

static int verify_suite(etc_fb *fb, size_t pos, uint32_t m, totals *tot)
{
	etc_fb_table t;
	size_t s, v;
	uint32_t n = 0;
	where w;
	char what[160];
	snprintf(what, sizeof what, "method test suite %u", m);
	ETC_TRY(etc_fb_verify_table(fb, pos, what, &t));
	snprintf(what, sizeof what, "method test suite %u: BundledMethodTestSuite.method_name", m);
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 0, what, &s));
	if (!s)
		return etc_fb_fail(fb, pos, what, "the method name is missing");
	ETC_TRY(etc_fb_verify_string(fb, s, what));
	etc_str name = etc_fb_str(fb->buf, s);
	etc_text_escape(w.method, sizeof w.method, name.ptr, name.len);
	snprintf(what, sizeof what, "method %s: BundledMethodTestSuite.test_cases", w.method);
	ETC_TRY(etc_fb_verify_ref_field(fb, &t, 1, what, &v));
	if (v)
		ETC_TRY(etc_fb_verify_vector(fb, v, 4, what, &n));
	for (uint32_t i = 0; i < n; i++) {
		size_t cp;
		etc_fb_table ct;
		w.tc = i;
		snprintf(w.prefix, sizeof w.prefix, "test case %u of method %s", i, w.method);
		ETC_TRY(etc_fb_verify_ref(fb, v + 4 + 4 * (size_t)i, w.prefix, &cp));
		ETC_TRY(etc_fb_verify_table(fb, cp, w.prefix, &ct));
		ETC_TRY(verify_values(fb, &w, &ct, false, tot));
		ETC_TRY(verify_values(fb, &w, &ct, true, tot));
	}
	tot->cases += n;
	if (tot->cases > tot->max_cases || tot->values > tot->max_values)
		return etc_fail(fb->err, ETC_ERR_LIMIT, fb->name, (int64_t)(fb->base + pos),
		                "method %s: more test cases or values in all than the file can "
		                "hold (shared tables)",
		                w.method);
	return 0;
}

static int verify(etc_bundled *bp, etc_fb *fb, totals *tot)
{
	etc_fb_table root;
	size_t f, suites, prog;
	uint32_t n = 0;
	size_t rootpos;
	ETC_TRY(etc_fb_verify_ref(fb, 0, "BundledProgram (root offset)", &rootpos));
	ETC_TRY(etc_fb_verify_table(fb, rootpos, "BundledProgram", &root));
	ETC_TRY(etc_fb_verify_field(fb, &root, 0, 4, "BundledProgram.version", &f));
	bp->version = f ? etc_le32(fb->buf + f) : 0;
	ETC_TRY(etc_fb_verify_ref_field(fb, &root, 2, "BundledProgram.program", &prog));
	if (prog) {
		ETC_TRY(
		    etc_fb_verify_vector(fb, prog, 1, "BundledProgram.program", &bp->program_len));
		bp->program = prog + 4;
	}
	ETC_TRY(
	    etc_fb_verify_ref_field(fb, &root, 1, "BundledProgram.method_test_suites", &suites));
	if (suites)
		ETC_TRY(
		    etc_fb_verify_vector(fb, suites, 4, "BundledProgram.method_test_suites", &n));
	for (uint32_t m = 0; m < n; m++) {
		size_t sp;
		ETC_TRY(etc_fb_verify_ref(fb, suites + 4 + 4 * (size_t)m,
		                          "BundledProgram.method_test_suites", &sp));
		ETC_TRY(verify_suite(fb, sp, m, tot));
	}
	bp->nmethods = n;
	return 0;
}

/* --- the index ------------------------------------------------------------------ */

static size_t vec_first(const uint8_t *buf, const etc_fb_table *t, unsigned slot, uint32_t *n)
{
	size_t v = etc_fb_ref(buf, t, slot);
	*n = v ? etc_le32(buf + v) : 0;
	return v ? v + 4 : 0;
}

/* The Tensor table of a verified Value, or 0 for a scalar. */
static size_t value_tensor(const uint8_t *buf, size_t vpos)
{
	etc_fb_table t = etc_fb_table_at(buf, vpos);
	size_t f = etc_fb_field(buf, &t, 0);
	return f && buf[f] == ETC_BUNDLED_TENSOR ? etc_fb_ref(buf, &t, 1) : 0;
}

static void index_values(etc_bundled *bp, size_t vec, uint32_t n, size_t *value, int64_t **dims)
{
	const uint8_t *buf = bp->buf;
	for (uint32_t i = 0; i < n; i++, (*value)++) {
		size_t tp = value_tensor(buf, etc_fb_deref(buf, vec + 4 * (size_t)i));
		bp->shapes[*value] = NULL;
		if (!tp)
			continue;
		etc_fb_table t = etc_fb_table_at(buf, tp);
		uint32_t ndim;
		size_t s = vec_first(buf, &t, 1, &ndim);
		for (uint32_t k = 0; k < ndim; k++)
			(*dims)[k] = (int32_t)etc_le32(buf + s + 4 * (size_t)k);
		bp->shapes[*value] = *dims;
		*dims += ndim;
	}
}

static int build_index(etc_bundled *bp, const totals *tot, etc_error *err)
{
	const uint8_t *buf = bp->buf;
	bp->methods = etc_arena_alloc(&bp->arena, bp->nmethods + 1, sizeof *bp->methods);
	bp->first_value = etc_arena_alloc(&bp->arena, tot->cases + 1, sizeof *bp->first_value);
	bp->shapes = etc_arena_alloc(&bp->arena, tot->values + 1, sizeof *bp->shapes);
	int64_t *dims = etc_arena_alloc(&bp->arena, tot->dims + 1, sizeof *dims);
	if (!bp->methods || !bp->first_value || !bp->shapes || !dims)
		return etc_fail(err, ETC_ERR_NOMEM, bp->name, -1, "out of memory");
	etc_fb_table root = etc_fb_table_at(buf, etc_fb_deref(buf, 0));
	uint32_t n;
	size_t suites = vec_first(buf, &root, 1, &n);
	size_t c = 0, value = 0;
	for (uint32_t m = 0; m < bp->nmethods; m++) {
		etc_fb_table st = etc_fb_table_at(buf, etc_fb_deref(buf, suites + 4 * (size_t)m));
		bmethod *bm = &bp->methods[m];
		bm->name = etc_fb_str(buf, etc_fb_ref(buf, &st, 0));
		bm->first_case = c;
		bm->cases = vec_first(buf, &st, 1, &bm->ncases);
		for (uint32_t i = 0; i < bm->ncases; i++, c++) {
			etc_fb_table ct =
			    etc_fb_table_at(buf, etc_fb_deref(buf, bm->cases + 4 * (size_t)i));
			uint32_t nin, nout;
			size_t in = vec_first(buf, &ct, 0, &nin),
			       out = vec_first(buf, &ct, 1, &nout);
			bp->first_value[c] = value;
			index_values(bp, in, nin, &value, &dims);
			index_values(bp, out, nout, &value, &dims);
		}
	}
	return 0;
}

/* --- opening --------------------------------------------------------------------- */

static bool is_bp_id(const uint8_t *p)
{
	return p[0] == 'B' && p[1] == 'P' && p[2] >= '0' && p[2] <= '9' && p[3] >= '0' &&
	       p[3] <= '9';
}

/*
 * Upstream writes a plain buffer ("BP08" at byte 4); a size-prefixed one
 * ("BP08" at byte 8) is read too. Other BPxx identifiers are other schema
 * versions.
 */
static int detect(etc_bundled *bp, const uint8_t *data, size_t len, etc_error *err)
{
	if (len < 8)
		return etc_fail(err, ETC_ERR_FORMAT, bp->name, -1,
		                "file of %zu bytes is too short to be a BundledProgram", len);
	size_t at;
	if (is_bp_id(data + 4))
		at = 4;
	else if (len >= 12 && is_bp_id(data + 8))
		at = 8;
	else
		return etc_fail(err, ETC_ERR_FORMAT, bp->name, 4,
		                "not a BundledProgram: file identifier \"" FILE_ID
		                "\" found neither at byte 4 (plain) nor at byte 8 (size-prefixed)");
	if (memcmp(data + at, FILE_ID, 4) != 0)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, bp->name, (int64_t)at,
		                "BundledProgram schema \"%.4s\": etcompare reads \"" FILE_ID "\"",
		                (const char *)data + at);
	if (at == 4) {
		bp->buf = data;
		bp->len = len;
		bp->base = 0;
		return 0;
	}
	uint64_t want = etc_le32(data);
	if (want > len - 4 || want < 8)
		return etc_fail(err, ETC_ERR_FORMAT, bp->name, 0,
		                "the size prefix announces %llu bytes, but %zu follow it",
		                (unsigned long long)want, len - 4);
	bp->buf = data + 4;
	bp->len = (size_t)want;
	bp->base = 4;
	return 0;
}

static int load(etc_bundled *bp, const uint8_t *data, size_t len, etc_error *err)
{
	ETC_TRY(detect(bp, data, len, err));
	/* Honest writers visit each byte once. */
	etc_fb fb = etc_fb_begin(bp->buf, bp->len, bp->base, bp->name, err, 2);
	totals tot = {0, 0, 0, bp->len / 8 + 16, bp->len / 16 + 16, bp->len / 4 + 64};
	ETC_TRY(verify(bp, &fb, &tot));
	return build_index(bp, &tot, err);
}

static etc_bundled *create(const char *name, etc_error *err)
{
	etc_bundled *bp = calloc(1, sizeof *bp);
	if (!bp) {
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	etc_arena_init(&bp->arena);
	bp->name = etc_arena_strdup(&bp->arena, name, strlen(name));
	if (!bp->name) {
		etc_arena_release(&bp->arena);
		free(bp);
		etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
		return NULL;
	}
	return bp;
}

int etc_bundled_open(etc_bundled **out, const char *path, etc_error *err)
{
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_bundled_open: NULL argument");
	*out = NULL;
	etc_bundled *bp = create(path, err);
	if (!bp)
		return ETC_ERR_NOMEM;
	int rc = etc_map_open(&bp->map, path, err);
	if (rc == 0)
		rc = load(bp, bp->map.data, bp->map.size, err);
	if (rc < 0) {
		etc_bundled_free(bp);
		return rc;
	}
	*out = bp;
	return 0;
}

int etc_bundled_wrap(etc_bundled **out, const void *data, size_t len, const char *name,
                     etc_error *err)
{
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_bundled_wrap: NULL argument");
	*out = NULL;
	etc_bundled *bp = create(name ? name : "<memory>", err);
	if (!bp)
		return ETC_ERR_NOMEM;
	int rc = load(bp, data ? data : (const void *)"", len, err);
	if (rc < 0) {
		etc_bundled_free(bp);
		return rc;
	}
	*out = bp;
	return 0;
}

void etc_bundled_free(etc_bundled *bp)
{
	if (!bp)
		return;
	etc_map_close(&bp->map);
	etc_arena_release(&bp->arena);
	free(bp);
}

/* --- accessors -------------------------------------------------------------------- */

const char *etc_bundled_name(const etc_bundled *bp)
{
	return bp->name;
}

uint32_t etc_bundled_version(const etc_bundled *bp)
{
	return bp->version;
}

const uint8_t *etc_bundled_program(const etc_bundled *bp, uint64_t *offset, uint64_t *size)
{
	if (offset)
		*offset = bp->program ? bp->base + bp->program : 0;
	if (size)
		*size = bp->program_len;
	return bp->program ? bp->buf + bp->program : bp->buf;
}

size_t etc_bundled_method_count(const etc_bundled *bp)
{
	return bp->nmethods;
}

etc_str etc_bundled_method_name(const etc_bundled *bp, size_t m)
{
	etc_str none = {"", 0};
	return m < bp->nmethods ? bp->methods[m].name : none;
}

long etc_bundled_method_find(const etc_bundled *bp, const char *name)
{
	size_t n = name ? strlen(name) : 0;
	for (uint32_t m = 0; name && m < bp->nmethods; m++)
		if (bp->methods[m].name.len == n && !memcmp(bp->methods[m].name.ptr, name, n))
			return (long)m;
	return -1;
}

size_t etc_bundled_test_case_count(const etc_bundled *bp, size_t m)
{
	return m < bp->nmethods ? bp->methods[m].ncases : 0;
}

static bool get_case(const etc_bundled *bp, size_t m, size_t tc, bcase *c)
{
	if (m >= bp->nmethods || tc >= bp->methods[m].ncases)
		return false;
	const bmethod *bm = &bp->methods[m];
	etc_fb_table ct = etc_fb_table_at(bp->buf, etc_fb_deref(bp->buf, bm->cases + 4 * tc));
	c->in_vec = vec_first(bp->buf, &ct, 0, &c->nin);
	c->out_vec = vec_first(bp->buf, &ct, 1, &c->nout);
	c->first_value = bp->first_value[bm->first_case + tc];
	return true;
}

size_t etc_bundled_value_count(const etc_bundled *bp, size_t m, size_t tc, bool expected)
{
	bcase c;
	return !get_case(bp, m, tc, &c) ? 0 : expected ? c.nout : c.nin;
}

/* "test case 1 of method forward: input 0", for messages. */
static void value_where(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                        char *out, size_t cap)
{
	char name[80];
	etc_text_escape(name, sizeof name, bp->methods[m].name.ptr, bp->methods[m].name.len);
	snprintf(out, cap, "test case %zu of method %s: %s %zu", tc, name,
	         expected ? "expected output" : "input", i);
}

int etc_bundled_get(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                    etc_bundled_value *out, etc_error *err)
{
	bcase cs, *c = &cs;
	if (!bp || !out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_bundled_get: NULL %s",
		                !bp ? "bp" : "out");
	if (!get_case(bp, m, tc, c) || i >= (expected ? c->nout : c->nin))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1,
		                "etc_bundled_get: no %s %zu in test case %zu of suite %zu",
		                expected ? "expected output" : "input", i, tc, m);
	const uint8_t *buf = bp->buf;
	size_t vpos = etc_fb_deref(buf, (expected ? c->out_vec : c->in_vec) + 4 * i);
	etc_fb_table t = etc_fb_table_at(buf, vpos);
	memset(out, 0, sizeof *out);
	out->kind = buf[etc_fb_field(buf, &t, 0)]; /* verified: present and 1..4 */
	out->offset = bp->base + vpos;
	out->row_major = true;
	etc_fb_table u = etc_fb_table_at(buf, etc_fb_ref(buf, &t, 1));
	size_t f = etc_fb_field(buf, &u, 0);
	if (out->kind == ETC_BUNDLED_INT) {
		out->int_val = f ? (int64_t)etc_le64(buf + f) : 0;
	} else if (out->kind == ETC_BUNDLED_BOOL) {
		out->bool_val = f && buf[f];
	} else if (out->kind == ETC_BUNDLED_DOUBLE) {
		union {
			uint64_t u;
			double d;
		} x = {f ? etc_le64(buf + f) : 0};
		out->double_val = x.d;
	} else {
		etc_tensor *tn = &out->tensor;
		uint32_t ndata, norder;
		tn->scalar_type = f ? (int8_t)buf[f] : 0;
		tn->sizes_le =
		    (const uint8_t *)bp->shapes[c->first_value + (expected ? c->nin : 0) + i];
		vec_first(buf, &u, 1, &tn->ndim);
		size_t data = vec_first(buf, &u, 2, &ndata);
		tn->data = data ? buf + data : buf;
		tn->offset = data ? (int64_t)(bp->base + data) : -1;
		tn->nbytes = ndata;
		/* verified: data holds exactly numel elements */
		tn->numel = ndata / etc_scalar_type_size(tn->scalar_type);
		size_t order = vec_first(buf, &u, 3, &norder);
		out->dim_order = order && norder ? buf + order : NULL;
		out->dim_order_len = out->dim_order ? norder : 0;
		for (uint32_t k = 0; k < out->dim_order_len; k++)
			out->row_major &= out->dim_order[k] == k;
	}
	return 0;
}

int etc_bundled_tensor(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                       etc_reftensor *out, etc_error *err)
{
	etc_bundled_value v;
	char where_[192];
	if (!out)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_bundled_tensor: NULL argument");
	ETC_TRY(etc_bundled_get(bp, m, tc, expected, i, &v, err));
	value_where(bp, m, tc, expected, i, where_, sizeof where_);
	if (v.kind != ETC_BUNDLED_TENSOR)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, bp->name, (int64_t)v.offset,
		                "%s is %s %s, not a tensor", where_,
		                v.kind == ETC_BUNDLED_INT ? "an" : "a", kind_names[v.kind]);
	const etc_tensor *t = &v.tensor;
	if (!v.row_major)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, bp->name, (int64_t)v.offset,
		                "%s: the elements are in dim order %u, %u, ...; only row-major "
		                "tensors (dim order 0, 1, ...) are read",
		                where_, v.dim_order[0], v.dim_order[1]);
	size_t esz = etc_scalar_type_size(t->scalar_type);
	if ((uintptr_t)t->data % esz != 0 && t->nbytes)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, bp->name, t->offset,
		                "%s: the %s data is not aligned to %zu bytes in memory", where_,
		                etc_scalar_type_name(t->scalar_type), esz);
	if (t->ndim > ETC_REF_MAX_RANK)
		return etc_fail(err, ETC_ERR_UNSUPPORTED, bp->name, (int64_t)v.offset,
		                "%s: %u dimensions, more than the %d a reference tensor has",
		                where_, t->ndim, ETC_REF_MAX_RANK);
	out->dtype = t->scalar_type;
	out->rank = t->ndim;
	out->shape = t->ndim ? (const int64_t *)(const void *)t->sizes_le : NULL;
	out->numel = t->numel;
	out->data = t->data;
	return 0;
}
