/*
 * test_npz.c - the numpy reader (src/npz.c): the fixtures of tests/data/npz
 * (written by tests/data/npz/make_npz.py as numpy.savez lays archives out)
 * read exactly, in every header version, stored and deflated, from a path
 * and from memory; malformed headers, shapes and sizes, built here as .npy
 * bytes and small zips, fail with the right status, file, byte offset and
 * message; unsupported dtypes fail per array; and no truncation or byte
 * mutation crashes or yields a view outside the input.
 */
#include "check.h"
#include "etcompare/npz.h"
#include "format/zipread.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- expected contents (the ARRAYS of make_npz.py) ----------------------- */

typedef struct exp_array {
	const char *name;
	int type;
	uint32_t ndim;
	int64_t shape[3];
	size_t n;
	const double *f;   /* float kinds */
	const int64_t *i;  /* signed integers */
	const uint64_t *u; /* unsigned integers and bool */
} exp_array;

static const double v_f4[] = {1.5, -2.25, 0.0, -0.0, 0x1p-149, 0x1.fffffep+127, INFINITY, NAN};
static const double v_f2[] = {1.0, -2.5, 65504.0, 0x1p-24, -0.0, INFINITY, -INFINITY, NAN};
static const double v_f8[] = {0.1, -1e308, 0x1p-1074};
static const int64_t v_i1[] = {-128, 127, 0, -1};
static const int64_t v_i2[] = {-32768, 32767, 1, -1};
static const int64_t v_i4[] = {INT32_MIN, INT32_MAX, 7, -7};
static const int64_t v_i8[] = {INT64_MIN, INT64_MAX, 123456789012345};
static const uint64_t v_u1[] = {0, 255, 7};
static const uint64_t v_u2[] = {0, 65535};
static const uint64_t v_u4[] = {0, UINT32_MAX};
static const uint64_t v_u8[] = {0, UINT64_MAX, (1ull << 53) + 1};
static const uint64_t v_b1[] = {1, 0, 0, 1};
static const double v_scalar[] = {42.5};
static double v_multi[24]; /* i * 0.5 - 3, filled in main */
static const double v_12[] = {1.0, 2.0};
static const double v_12_13[] = {0.5, 0.25, -4.0};
static const double v_zeros[256];

static const exp_array arrays[] = {
    {"f4", ETC_FLOAT, 2, {2, 4}, 8, v_f4, NULL, NULL},
    {"f2", ETC_HALF, 2, {2, 4}, 8, v_f2, NULL, NULL},
    {"f8", ETC_DOUBLE, 1, {3}, 3, v_f8, NULL, NULL},
    {"i1", ETC_CHAR, 1, {4}, 4, NULL, v_i1, NULL},
    {"i2", ETC_SHORT, 2, {2, 2}, 4, NULL, v_i2, NULL},
    {"i4", ETC_INT, 2, {2, 2}, 4, NULL, v_i4, NULL},
    {"i8", ETC_LONG, 1, {3}, 3, NULL, v_i8, NULL},
    {"u1", ETC_BYTE, 1, {3}, 3, NULL, NULL, v_u1},
    {"u2", ETC_UINT16, 1, {2}, 2, NULL, NULL, v_u2},
    {"u4", ETC_UINT32, 1, {2}, 2, NULL, NULL, v_u4},
    {"u8", ETC_UINT64, 1, {3}, 3, NULL, NULL, v_u8},
    {"b1", ETC_BOOL, 2, {2, 2}, 4, NULL, NULL, v_b1},
    {"scalar", ETC_FLOAT, 0, {0}, 1, v_scalar, NULL, NULL},
    {"empty", ETC_FLOAT, 2, {0, 3}, 0, v_scalar, NULL, NULL},
    {"multi", ETC_FLOAT, 3, {2, 3, 4}, 24, v_multi, NULL, NULL},
    {"12", ETC_FLOAT, 1, {2}, 2, v_12, NULL, NULL},
    {"12,13", ETC_HALF, 1, {3}, 3, v_12_13, NULL, NULL},
    {"zeros", ETC_FLOAT, 1, {256}, 256, v_zeros, NULL, NULL},
};
#define NARRAYS (sizeof arrays / sizeof arrays[0])

/* ---- helpers -------------------------------------------------------------- */

static char data_dir[1024];

static void init_data_dir(void)
{
	const char *src = getenv("ETC_SRC");
	if (src && *src) {
		snprintf(data_dir, sizeof data_dir, "%s/tests/data/npz", src);
		return;
	}
	const char *f = __FILE__, *cut = strstr(f, "tests/unit/");
	snprintf(data_dir, sizeof data_dir, "%.*stests/data/npz", cut ? (int)(cut - f) : 0, f);
}

static void data_path(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s/%s", data_dir, name);
}

static uint8_t *read_file(const char *name, size_t *len)
{
	char path[1400];
	data_path(path, sizeof path, name);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*len = (size_t)n;
	return p;
}

static bool contains(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

#define CHECK_HAS(msg, needle)                                                                     \
	do {                                                                                       \
		check_count++;                                                                     \
		if (!contains((msg), (needle))) {                                                  \
			check_failures++;                                                          \
			fprintf(stderr, "%s:%d: \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, (msg), \
			        (needle));                                                         \
		}                                                                                  \
	} while (0)

static int64_t raw_signed(const etc_tensor *t, uint64_t k)
{
	size_t esz = etc_scalar_type_size(t->scalar_type);
	const uint8_t *p = t->data + k * esz;
	uint64_t v = 0;
	for (size_t b = 0; b < esz; b++)
		v |= (uint64_t)p[b] << (8 * b);
	if (esz < 8 && (v >> (8 * esz - 1)) & 1)
		v |= ~0ull << (8 * esz);
	return (int64_t)v;
}

static uint64_t raw_unsigned(const etc_tensor *t, uint64_t k)
{
	size_t esz = etc_scalar_type_size(t->scalar_type);
	const uint8_t *p = t->data + k * esz;
	uint64_t v = 0;
	for (size_t b = 0; b < esz; b++)
		v |= (uint64_t)p[b] << (8 * b);
	return v;
}

/* Checks one array against its expectation, value by value. */
static void check_array(const etc_npz *z, const exp_array *e, const uint8_t *file, size_t len,
                        bool stored, const char *label)
{
	int idx = etc_npz_find(z, e->name);
	CHECK(idx >= 0);
	if (idx < 0) {
		fprintf(stderr, "  %s: array %s not found\n", label, e->name);
		return;
	}
	CHECK_STR(etc_npz_name(z, (size_t)idx), e->name);
	etc_tensor t;
	etc_error err;
	etc_error_clear(&err);
	int rc = etc_npz_array(z, (size_t)idx, &t, &err);
	CHECK(rc == 0);
	if (rc < 0) {
		fprintf(stderr, "  %s: %s: %s\n", label, e->name, err.message);
		return;
	}
	CHECK(t.scalar_type == e->type);
	CHECK(t.ndim == e->ndim);
	CHECK(t.nstrides == e->ndim);
	CHECK(t.numel == e->n);
	CHECK(t.nbytes == e->n * etc_scalar_type_size(e->type));
	CHECK(t.data != NULL);
	int64_t stride = 1;
	for (uint32_t d = e->ndim; d-- > 0;) {
		CHECK(etc_tensor_size(&t, d) == e->shape[d]);
		CHECK(etc_tensor_stride(&t, d) == stride);
		stride *= e->shape[d] > 1 ? e->shape[d] : 1;
	}
	if (stored) {
		CHECK(t.offset >= 0);
		if (file)
			CHECK(t.offset >= 0 && (uint64_t)t.offset + t.nbytes <= len &&
			      t.data == file + t.offset);
	} else {
		CHECK(t.offset == -1);
	}
	for (size_t k = 0; k < e->n; k++) {
		if (e->f) {
			double got = etc_tensor_get(&t, k);
			CHECK_DOUBLE_EXACT(got, e->f[k]);
			if (!isnan(e->f[k]))
				CHECK(!!signbit(got) == !!signbit(e->f[k]));
		} else if (e->i) {
			CHECK(raw_signed(&t, k) == e->i[k]);
			if (e->i[k] > -(1ll << 53) && e->i[k] < (1ll << 53))
				CHECK_DOUBLE_EXACT(etc_tensor_get(&t, k), (double)e->i[k]);
		} else {
			CHECK(raw_unsigned(&t, k) == e->u[k]);
			if (e->u[k] < (1ull << 53))
				CHECK_DOUBLE_EXACT(etc_tensor_get(&t, k), (double)e->u[k]);
		}
	}
}

static void check_all_arrays(const etc_npz *z, const uint8_t *file, size_t len, bool stored,
                             const char *label)
{
	CHECK(etc_npz_count(z) == NARRAYS);
	for (size_t i = 0; i < NARRAYS && i < etc_npz_count(z); i++)
		CHECK_STR(etc_npz_name(z, i), arrays[i].name); /* savez order */
	for (size_t i = 0; i < NARRAYS; i++)
		check_array(z, &arrays[i], file, len, stored, label);
	CHECK(etc_npz_find(z, "missing") == -1);
	CHECK(etc_npz_find(z, "12.npy") == -1);
	CHECK(etc_npz_find(z, "") == -1);
	CHECK(etc_npz_name(z, NARRAYS) == NULL);
}

/* ---- the fixtures --------------------------------------------------------- */

static void test_fixture(const char *file, bool stored)
{
	char path[1400];
	data_path(path, sizeof path, file);
	etc_error err;
	etc_npz *z = NULL;
	int rc = etc_npz_open(&z, path, &err);
	CHECK(rc == 0);
	if (rc < 0) {
		fprintf(stderr, "  %s: %s\n", file, err.message);
		return;
	}
	check_all_arrays(z, NULL, 0, stored, file);
	etc_npz_free(z);

	size_t len;
	uint8_t *bytes = read_file(file, &len);
	rc = etc_npz_wrap(&z, bytes, len, file, &err);
	CHECK(rc == 0);
	if (rc == 0) {
		check_all_arrays(z, bytes, len, stored, file);
		etc_npz_free(z);
	}
	free(bytes);
}

static void test_single_npy(void)
{
	static const double f4[] = {0.5, -1.0, 3.0, (double)1e-3f};
	static const double f2[] = {1.0, -0.5, 2048.0};
	const exp_array e4 = {"single_f4", ETC_FLOAT, 2, {2, 2}, 4, f4, NULL, NULL};
	const exp_array e2 = {"single_f2_v2", ETC_HALF, 1, {3}, 3, f2, NULL, NULL};
	char path[1400];
	etc_error err;
	etc_npz *z = NULL;

	data_path(path, sizeof path, "single_f4.npy");
	CHECK(etc_npz_open(&z, path, &err) == 0);
	if (z) {
		CHECK(etc_npz_count(z) == 1);
		CHECK_STR(etc_npz_name(z, 0), "single_f4");
		check_array(z, &e4, NULL, 0, true, "single_f4.npy");
		etc_npz_free(z);
	}

	size_t len;
	uint8_t *bytes = read_file("single_f2_v2.npy", &len);
	z = NULL;
	CHECK(etc_npz_wrap(&z, bytes, len, "some/dir/single_f2_v2.npy", &err) == 0);
	if (z) {
		CHECK(etc_npz_count(z) == 1);
		check_array(z, &e2, bytes, len, true, "single_f2_v2.npy");
		etc_tensor t;
		CHECK(etc_npz_array(z, 0, &t, &err) == 0 && t.offset == 128);
		etc_npz_free(z);
	}
	/* without a name the array is called after "<memory>" */
	z = NULL;
	CHECK(etc_npz_wrap(&z, bytes, len, NULL, &err) == 0);
	if (z) {
		CHECK_STR(etc_npz_name(z, 0), "<memory>");
		CHECK(etc_npz_find(z, "<memory>") == 0);
		etc_npz_free(z);
	}
	/* a name without the suffix is kept whole */
	z = NULL;
	CHECK(etc_npz_wrap(&z, bytes, len, "12,13", &err) == 0);
	if (z) {
		CHECK_STR(etc_npz_name(z, 0), "12,13");
		etc_npz_free(z);
	}
	free(bytes);
}

static void test_empty_npz(void)
{
	char path[1400];
	data_path(path, sizeof path, "empty.npz");
	etc_error err;
	etc_npz *z = NULL;
	CHECK(etc_npz_open(&z, path, &err) == 0);
	if (!z)
		return;
	CHECK(etc_npz_count(z) == 0);
	CHECK(etc_npz_find(z, "x") == -1);
	CHECK(etc_npz_name(z, 0) == NULL);
	etc_tensor t;
	CHECK(etc_npz_array(z, 0, &t, &err) == ETC_ERR_USAGE);
	CHECK(err.status == ETC_ERR_USAGE);
	CHECK_HAS(err.message, "out of range");
	etc_npz_free(z);
}

static void test_unsupported_npz(void)
{
	char path[1400];
	data_path(path, sizeof path, "unsupported.npz");
	etc_error err;
	etc_npz *z = NULL;
	int rc = etc_npz_open(&z, path, &err);
	CHECK(rc == 0);
	if (rc < 0) {
		fprintf(stderr, "  unsupported.npz: %s\n", err.message);
		return;
	}
	CHECK(etc_npz_count(z) == 5);
	static const struct {
		const char *name, *want1, *want2;
	} cases[] = {
	    {"big", "'>f4'", "big-endian"},
	    {"fortran", "fortran_order is True", "'<f4'"},
	    {"object", "'|O'", "Python objects"},
	    {"structured", "structured dtype [('a', '<f4'), ('b', '<i4')]", "not supported"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int idx = etc_npz_find(z, cases[i].name);
		CHECK(idx >= 0);
		if (idx < 0)
			continue;
		etc_tensor t;
		etc_error_clear(&err);
		CHECK(etc_npz_array(z, (size_t)idx, &t, &err) == ETC_ERR_UNSUPPORTED);
		CHECK(err.status == ETC_ERR_UNSUPPORTED);
		CHECK_HAS(err.message, cases[i].want1);
		CHECK_HAS(err.message, cases[i].want2);
		char member[64];
		snprintf(member, sizeof member, "member %s.npy", cases[i].name);
		CHECK_HAS(err.message, member);
		CHECK_HAS(err.message, "unsupported.npz");
		CHECK_STR(err.file, path);
		CHECK(err.offset > 0);
		/* a NULL error is fine too */
		CHECK(etc_npz_array(z, (size_t)idx, &t, NULL) == ETC_ERR_UNSUPPORTED);
	}
	static const int64_t ok[] = {5, -5};
	const exp_array e = {"ok", ETC_INT, 1, {2}, 2, NULL, ok, NULL};
	check_array(z, &e, NULL, 0, true, "unsupported.npz");
	etc_npz_free(z);
}

/* ---- building bad inputs -------------------------------------------------- */

typedef struct buf {
	uint8_t p[1 << 14];
	size_t n;
} buf;

static void b_put(buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof b->p) {
		fprintf(stderr, "test buffer overflow\n");
		exit(2);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void b_le(buf *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		uint8_t c = (uint8_t)(v >> (8 * i));
		b_put(b, &c, 1);
	}
}

/*
 * A .npy of the given version whose header is `header` padded with spaces
 * and '\n' to a multiple of 64 (as numpy does), followed by `dlen` bytes of
 * `data` (zeros when NULL).
 */
static void mk_npy(buf *b, int major, int minor, const char *header, const void *data, size_t dlen)
{
	b->n = 0;
	b_put(b, "\x93NUMPY", 6);
	uint8_t ver[2] = {(uint8_t)major, (uint8_t)minor};
	b_put(b, ver, 2);
	size_t prefix = major == 1 ? 10 : 12, hlen = strlen(header) + 1;
	size_t pad = (64 - (prefix + hlen) % 64) % 64;
	b_le(b, hlen + pad, major == 1 ? 2 : 4);
	b_put(b, header, strlen(header));
	for (size_t i = 0; i < pad; i++)
		b_put(b, " ", 1);
	b_put(b, "\n", 1);
	static const uint8_t zeros[4096];
	b_put(b, data ? data : zeros, dlen);
}

/* A v1.0 header dict with the given descr, fortran_order and shape texts. */
static void mk_dict(char *out, size_t cap, const char *descr, const char *fortran,
                    const char *shape)
{
	snprintf(out, cap, "{'descr': %s, 'fortran_order': %s, 'shape': %s, }", descr, fortran,
	         shape);
}

/* The status of wrapping `b` as a single .npy and of viewing its array. */
static int try_npy(const buf *b, etc_error *err)
{
	etc_npz *z = NULL;
	etc_error_clear(err);
	int rc = etc_npz_wrap(&z, b->p, b->n, "bad.npy", err);
	if (rc < 0)
		return rc;
	etc_tensor t;
	rc = etc_npz_array(z, 0, &t, err);
	if (rc == 0) {
		/* a successful view stays inside the input */
		CHECK(t.data >= b->p && t.nbytes <= b->n && t.data + t.nbytes <= b->p + b->n);
		CHECK(t.offset == (int64_t)(t.data - b->p));
	}
	etc_npz_free(z);
	return rc;
}

/* Expects `rc` with status, offset (-2 = any) and the fragment in the message. */
static void expect(int rc, const etc_error *err, int status, int64_t offset, const char *frag,
                   const char *label)
{
	check_count++;
	if (rc != status || err->status != status || (offset != -2 && err->offset != offset) ||
	    !contains(err->message, frag)) {
		check_failures++;
		fprintf(stderr, "%s: expected status %d at %lld with \"%s\", got %d at %lld: %s\n",
		        label, status, (long long)offset, frag, rc, (long long)err->offset,
		        err->message);
	}
}

static void expect_npy(const char *header, size_t dlen, int status, int64_t offset,
                       const char *frag)
{
	buf b;
	etc_error err;
	mk_npy(&b, 1, 0, header, NULL, dlen);
	expect(try_npy(&b, &err), &err, status, offset, frag, header);
	if (status < 0)
		CHECK_HAS(err.message, "bad.npy");
}

static void expect_ok(const char *header, size_t dlen, int major, uint64_t numel, uint32_t ndim)
{
	buf b;
	etc_error err;
	mk_npy(&b, major, 0, header, NULL, dlen);
	etc_npz *z = NULL;
	etc_tensor t;
	int rc = etc_npz_wrap(&z, b.p, b.n, "ok.npy", &err);
	if (rc == 0)
		rc = etc_npz_array(z, 0, &t, &err);
	check_count++;
	if (rc != 0 || t.numel != numel || t.ndim != ndim) {
		check_failures++;
		fprintf(stderr, "%s: expected success (%llu elements, %u dims): %s\n", header,
		        (unsigned long long)numel, ndim, rc ? err.message : "wrong shape");
	}
	etc_npz_free(z);
}

static void test_headers(void)
{
	char h[512];
	/* accepted spellings of the same (2, 3) float32 header */
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, 1, 6, 2);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", 24, 1, 6, 2);
	expect_ok("{\"shape\": (2, 3,), \"descr\": \"<f4\", \"fortran_order\": False}", 24, 1, 6,
	          2);
	expect_ok("{ 'descr' : '<f4' ,\n\t'fortran_order':False,'shape':((2 , 3))\n}", 24, 1, 6, 2);
	expect_ok("{'descr': '<f4', # a comment\n 'fortran_order': False, 'shape': (2, +3)}", 24, 1,
	          6, 2);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", 24, 1, 6, 2);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, 2, 6, 2);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24, 3, 6, 2);
	/* tuples: (3,) is one dimension, () none; -0 is 0 */
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 12, 1, 3, 1);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4, 1, 1, 0);
	expect_ok("{'descr': '<f4', 'fortran_order': False, 'shape': (-0, 5), }", 0, 1, 0, 2);
	/* 1-byte kinds take any byte-order character, or none */
	expect_ok("{'descr': '<u1', 'fortran_order': False, 'shape': (4,), }", 4, 1, 4, 1);
	expect_ok("{'descr': '>i1', 'fortran_order': False, 'shape': (4,), }", 4, 1, 4, 1);
	expect_ok("{'descr': 'b1', 'fortran_order': False, 'shape': (4,), }", 4, 1, 4, 1);
	/* an empty array with a large dimension, strides still fit */
	expect_ok(
	    "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2305843009213693952, 2), }", 0,
	    1, 0, 3);
	/* latin-1 bytes inside strings in a 1.0 header (grammar only) */
	expect_npy("{'descr': [('\xe9', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4,
	           ETC_ERR_UNSUPPORTED, 20, "structured dtype");

	/* missing, extra, repeated and misspelled keys */
	expect_npy("{'descr': '<f4', 'fortran_order': False, }", 4, ETC_ERR_FORMAT, -2,
	           "no 'shape' key");
	expect_npy("{'fortran_order': False, 'shape': (1,), }", 4, ETC_ERR_FORMAT, -2,
	           "no 'descr' key");
	expect_npy("{'descr': '<f4', 'shape': (1,), }", 4, ETC_ERR_FORMAT, -2,
	           "no 'fortran_order' key");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1, }", 4,
	           ETC_ERR_FORMAT, 10 + 56, "unexpected key");
	expect_npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4,
	           ETC_ERR_FORMAT, 10 + 17, "key given twice");
	expect_npy("{'Descr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT, 11,
	           "unexpected key");
	expect_npy("{'de\\x73cr': '<f4', 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           11, "unexpected key");
	expect_npy("{1: '<f4', 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT, 11,
	           "unexpected key");
	/* not Python literals */
	expect_npy("{'descr': np.float32, 'fortran_order': False, 'shape': (1,)}", 4,
	           ETC_ERR_FORMAT, 10 + 10, "not a Python literal");
	expect_npy("{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           10 + 34, "not a Python literal");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x", 4, ETC_ERR_FORMAT,
	           10 + 56, "text after the header dict");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", 4, ETC_ERR_FORMAT, -2,
	           "expected ',' or '}'");
	expect_npy("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT, -2,
	           "");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n}", 4, ETC_ERR_FORMAT,
	           -2, "text after the header dict");
	expect_npy("['descr', '<f4']", 4, ETC_ERR_FORMAT, 10, "not a dict literal");
	expect_npy("", 4, ETC_ERR_FORMAT, -2, "not a dict literal");
	expect_npy("{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           10 + 9, "expected ':'");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,),,}", 4, ETC_ERR_FORMAT,
	           -2, "");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", 4, ETC_ERR_FORMAT,
	           10 + 51, "unexpected character");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", 4, ETC_ERR_FORMAT,
	           10 + 51, "only decimal integers");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0x10,)}", 4, ETC_ERR_FORMAT,
	           10 + 51, "only decimal integers");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}", 4, ETC_ERR_FORMAT,
	           10 + 51, "leading zero");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1_000,)}", 4, ETC_ERR_FORMAT,
	           10 + 51, "only decimal integers");
	/* the shape must be a tuple of integers, fortran_order a bool, descr a string or list */
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", 12, ETC_ERR_FORMAT,
	           10 + 50, "'shape' is an integer");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", 12, ETC_ERR_FORMAT,
	           10 + 50, "'shape' is a list");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': ('3',)}", 12, ETC_ERR_FORMAT,
	           10 + 51, "'shape' entry 0 is a string");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, True)}", 8,
	           ETC_ERR_FORMAT, 10 + 54, "'shape' entry 1 is True");
	expect_npy("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           10 + 34, "not True or False");
	expect_npy("{'descr': 4, 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           10 + 10, "'descr' is an integer");
	expect_npy("{'descr': None, 'fortran_order': False, 'shape': (1,)}", 4, ETC_ERR_FORMAT,
	           10 + 10, "'descr' is None");
	/* the 2.0 form of a Python 2 long is not accepted */
	buf b;
	etc_error err;
	mk_npy(&b, 2, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }", NULL, 8);
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, 12 + 51, "only decimal integers",
	       "2.0 long");
	/* nesting is bounded */
	char deep[256];
	size_t k = 0;
	for (int i = 0; i < 40; i++)
		deep[k++] = '[';
	for (int i = 0; i < 40; i++)
		deep[k++] = ']';
	deep[k] = '\0';
	mk_dict(h, sizeof h, deep, "False", "(1,)");
	expect_npy(h, 4, ETC_ERR_FORMAT, -2, "nested too deeply");

	/* shapes: negative, too large, overflowing, too many dimensions */
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", 4,
	           ETC_ERR_FORMAT, 10 + 54, "'shape' entry 1 is negative");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,), }", 4,
	           ETC_ERR_FORMAT, 10 + 51, "larger than 2^63 - 1");
	expect_npy(
	    "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 4,
	    ETC_ERR_FORMAT, 10 + 51, "larger than 2^63 - 1");
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
	           4, ETC_ERR_FORMAT, 10 + 50, "more than 2^63 - 1 elements");
	/* no element: any declared shape is fine, as in numpy (issue 14) */
	expect_ok(
	    "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296), }", 0,
	    1, 0, 3);
	expect_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 4,
	           ETC_ERR_FORMAT, 10 + 50, "overflows the byte size");
	char shape[512];
	k = 0;
	shape[k++] = '(';
	for (int i = 0; i < ETC_NPZ_MAX_NDIM + 1; i++) {
		memcpy(shape + k, "1, ", 3);
		k += 3;
	}
	shape[k++] = ')';
	shape[k] = '\0';
	mk_dict(h, sizeof h, "'<f4'", "False", shape);
	expect_npy(h, 4, ETC_ERR_LIMIT, -2, "more than 64 dimensions");
	shape[k - 4] = ')'; /* exactly 64 dimensions */
	shape[k - 3] = '\0';
	mk_dict(h, sizeof h, "'<f4'", "False", shape);
	expect_ok(h, 4, 1, 1, ETC_NPZ_MAX_NDIM);

	/* data sizes: exact only */
	const char *h23 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
	expect_npy(h23, 20, ETC_ERR_FORMAT, 128, "data too short");
	expect_npy(h23, 0, ETC_ERR_FORMAT, 128, "needs 24 bytes");
	expect_npy(h23, 28, ETC_ERR_FORMAT, 128 + 24, "4 trailing bytes");
	expect_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 20,
	           ETC_ERR_FORMAT, 128, "data too short");
	expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 28, ETC_ERR_FORMAT,
	           128 + 24, "trailing bytes");

	/* valid but unsupported: the array fails, with its descr */
	expect_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24,
	           ETC_ERR_UNSUPPORTED, 20, "dtype '>f4' is big-endian");
	expect_npy("{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }", 2,
	           ETC_ERR_UNSUPPORTED, 20, "'>f2' is big-endian");
	expect_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
	           ETC_ERR_UNSUPPORTED, 44, "fortran_order is True");
	expect_npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 40,
	           ETC_ERR_UNSUPPORTED, 20, "dtype '|O' holds Python objects");
	expect_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 8,
	           ETC_ERR_UNSUPPORTED, 20, "'<c8' is complex");
	expect_npy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", 12,
	           ETC_ERR_UNSUPPORTED, 20, "'<U3' is a string dtype");
	expect_npy("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,), }", 8,
	           ETC_ERR_UNSUPPORTED, 20, "'<M8[ns]' is a datetime");
	expect_npy("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }", 4,
	           ETC_ERR_UNSUPPORTED, 20, "does not state a byte order");
	expect_npy("{'descr': 'f4', 'fortran_order': False, 'shape': (1,), }", 4,
	           ETC_ERR_UNSUPPORTED, 20, "does not state a byte order");
	expect_npy("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", 16,
	           ETC_ERR_UNSUPPORTED, 20, "'<f16' is not a dtype etcompare reads");
	expect_npy("{'descr': '<i3', 'fortran_order': False, 'shape': (1,), }", 3,
	           ETC_ERR_UNSUPPORTED, 20, "'<i3' is not a dtype");
	expect_npy("{'descr': 'float32', 'fortran_order': False, 'shape': (1,), }", 4,
	           ETC_ERR_UNSUPPORTED, 20, "'float32' is not a dtype");
	expect_npy("{'descr': [('x', '<f4'), ('y', '<i4', (2,))], 'fortran_order': False, "
	           "'shape': (1,), }",
	           12, ETC_ERR_UNSUPPORTED, 20,
	           "structured dtype [('x', '<f4'), ('y', '<i4', (2,))]");
}

static void test_prefix(void)
{
	buf b;
	etc_error err;
	const char *hd = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";

	/* versions */
	static const uint8_t versions[][2] = {{4, 0}, {1, 1}, {0, 0}, {2, 1}, {255, 255}};
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		mk_npy(&b, versions[i][0], versions[i][1], hd, NULL, 4);
		char frag[64];
		snprintf(frag, sizeof frag, "version %u.%u is not supported", versions[i][0],
		         versions[i][1]);
		expect(try_npy(&b, &err), &err, ETC_ERR_UNSUPPORTED, 6, frag, frag);
	}
	/* truncated before or inside the header length, or the header */
	mk_npy(&b, 1, 0, hd, NULL, 4);
	buf t = b;
	t.n = 6;
	expect(try_npy(&t, &err), &err, ETC_ERR_FORMAT, 0, "truncated before the version", "6");
	t.n = 9;
	expect(try_npy(&t, &err), &err, ETC_ERR_FORMAT, 8, "inside the header length", "9");
	t.n = 50;
	expect(try_npy(&t, &err), &err, ETC_ERR_FORMAT, 8, "runs past the end of the file", "50");
	mk_npy(&b, 2, 0, hd, NULL, 4);
	t = b;
	t.n = 11;
	expect(try_npy(&t, &err), &err, ETC_ERR_FORMAT, 8, "inside the header length", "v2 11");
	t.n = 12;
	expect(try_npy(&t, &err), &err, ETC_ERR_FORMAT, 8, "header of 116 bytes", "v2 12");
	/* header length beyond the data */
	mk_npy(&b, 1, 0, hd, NULL, 4);
	b.p[8] = 0xff;
	b.p[9] = 0xff;
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, 8, "header of 65535 bytes runs past",
	       "ffff");
	mk_npy(&b, 3, 0, hd, NULL, 4);
	b.p[11] = 0x80;
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, 8, "runs past the end", "v3 huge");
	/* a header cut short by its own length: the dict is incomplete */
	mk_npy(&b, 1, 0, hd, NULL, 4);
	b.p[8] = 30;
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, -2, "header:", "short hlen");
	/* NUL bytes; UTF-8 in 3.0 headers */
	mk_npy(&b, 1, 0, hd, NULL, 4);
	b.p[10 + 70] = '\0';
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, 80, "NUL byte", "nul");
	mk_npy(&b, 3, 0,
	       "{'descr': [('\xc3\xa9', '<f4')], 'fortran_order': False, 'shape': (1,), }", NULL,
	       4);
	expect(try_npy(&b, &err), &err, ETC_ERR_UNSUPPORTED, 22, "structured", "utf8 ok");
	mk_npy(&b, 3, 0, "{'descr': [('\xe9', '<f4')], 'fortran_order': False, 'shape': (1,), }",
	       NULL, 4);
	expect(try_npy(&b, &err), &err, ETC_ERR_FORMAT, 12 + 13, "not valid UTF-8", "utf8 bad");
	/* not a .npy at all, nor a zip */
	static const uint8_t junk[] = "\x93NUMPX\x01\x00";
	etc_npz *z = NULL;
	expect(etc_npz_wrap(&z, junk, 8, "junk", &err), &err, ETC_ERR_FORMAT, 0,
	       "neither a .npy file", "junk");
	CHECK(z == NULL);
	CHECK_HAS(err.message, "starting 93 4e 55 4d");
	expect(etc_npz_wrap(&z, "", 0, "nothing", &err), &err, ETC_ERR_FORMAT, 0, "<empty>",
	       "empty");
	expect(etc_npz_wrap(&z, "PK", 2, "pk", &err), &err, ETC_ERR_FORMAT, 0, "starting 50 4b",
	       "pk");
	/* usage */
	CHECK(etc_npz_wrap(NULL, "", 0, "x", &err) == ETC_ERR_USAGE);
	CHECK(etc_npz_wrap(&z, NULL, 4, "x", &err) == ETC_ERR_USAGE);
	CHECK(etc_npz_open(&z, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_npz_open(&z, "/nonexistent/x.npz", &err) == ETC_ERR_IO);
	CHECK(etc_npz_array(NULL, 0, NULL, &err) == ETC_ERR_USAGE);
	CHECK(etc_npz_count(NULL) == 0);
	CHECK(etc_npz_find(NULL, "x") == -1);
	CHECK(etc_npz_name(NULL, 0) == NULL);
	etc_npz_free(NULL);
}

/* ---- small zips ----------------------------------------------------------- */

typedef struct zmember {
	const char *name;
	const uint8_t *data;
	size_t len;
	bool deflate; /* as one stored deflate block */
} zmember;

/* Writes a zip of `m`; data_at[i] receives member i's data offset. */
static void mk_zip(buf *b, const zmember *m, size_t n, size_t *data_at)
{
	size_t lho[16];
	uint32_t crc[16];
	size_t csize[16];
	b->n = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(m[i].name);
		crc[i] = etc_crc32(0, m[i].data, m[i].len);
		csize[i] = m[i].deflate ? m[i].len + 5 : m[i].len;
		lho[i] = b->n;
		b_le(b, 0x04034b50, 4);
		b_le(b, 20, 2);
		b_le(b, 0, 2);
		b_le(b, m[i].deflate ? 8 : 0, 2);
		b_le(b, 0, 4); /* time, date */
		b_le(b, crc[i], 4);
		b_le(b, csize[i], 4);
		b_le(b, m[i].len, 4);
		b_le(b, nl, 2);
		b_le(b, 0, 2);
		b_put(b, m[i].name, nl);
		if (m[i].deflate) {
			uint8_t blk[5] = {1, (uint8_t)m[i].len, (uint8_t)(m[i].len >> 8),
			                  (uint8_t)~m[i].len, (uint8_t)(~m[i].len >> 8)};
			b_put(b, blk, 5);
		}
		data_at[i] = b->n;
		b_put(b, m[i].data, m[i].len);
	}
	size_t cd = b->n;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(m[i].name);
		b_le(b, 0x02014b50, 4);
		b_le(b, 20, 2);
		b_le(b, 20, 2);
		b_le(b, 0, 2);
		b_le(b, m[i].deflate ? 8 : 0, 2);
		b_le(b, 0, 4);
		b_le(b, crc[i], 4);
		b_le(b, csize[i], 4);
		b_le(b, m[i].len, 4);
		b_le(b, nl, 2);
		b_le(b, 0, 2); /* extra */
		b_le(b, 0, 2); /* comment */
		b_le(b, 0, 2); /* disk */
		b_le(b, 0, 2); /* internal attributes */
		b_le(b, 0, 4); /* external attributes */
		b_le(b, lho[i], 4);
		b_put(b, m[i].name, nl);
	}
	size_t cdsize = b->n - cd;
	b_le(b, 0x06054b50, 4);
	b_le(b, 0, 4);
	b_le(b, n, 2);
	b_le(b, n, 2);
	b_le(b, cdsize, 4);
	b_le(b, cd, 4);
	b_le(b, 0, 2);
}

static void test_zips(void)
{
	buf good, bad, zip;
	etc_error err;
	etc_npz *z = NULL;
	size_t at[4];
	static const float vals[] = {1.0f, 2.0f, 3.0f};
	mk_npy(&good, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", vals, 12);

	/* stored and deflated members side by side */
	zmember ok[] = {{"a.npy", good.p, good.n, false}, {"b.npy", good.p, good.n, true}};
	mk_zip(&zip, ok, 2, at);
	CHECK(etc_npz_wrap(&z, zip.p, zip.n, "ok.npz", &err) == 0);
	if (z) {
		etc_tensor ta, tb;
		CHECK(etc_npz_array(z, 0, &ta, &err) == 0);
		CHECK(etc_npz_array(z, 1, &tb, &err) == 0);
		CHECK(ta.offset == (int64_t)(at[0] + 128) && ta.data == zip.p + at[0] + 128);
		CHECK(tb.offset == -1 && tb.data != NULL);
		CHECK(tb.data < zip.p || tb.data >= zip.p + zip.n); /* inflated copy */
		CHECK(ta.numel == 3 && tb.numel == 3);
		CHECK_DOUBLE_EXACT(etc_tensor_get(&ta, 2), 3.0);
		CHECK_DOUBLE_EXACT(etc_tensor_get(&tb, 1), 2.0);
		etc_npz_free(z);
	}

	/* A stored member's CRC-32 is checked when its data is viewed, not at
	 * open: the names stay readable, the view is refused. */
	zip.p[at[0] + 128 + 4] ^= 1;
	CHECK(etc_npz_wrap(&z, zip.p, zip.n, "crc.npz", &err) == 0);
	if (z) {
		etc_tensor t;
		CHECK(etc_npz_count(z) == 2 && etc_npz_find(z, "a") == 0);
		expect(etc_npz_array(z, 0, &t, &err), &err, ETC_ERR_FORMAT, (int64_t)at[0],
		       "member a.npy: CRC-32", "crc");
		CHECK(etc_npz_array(z, 1, &t, &err) == 0); /* the deflated copy is intact */
		etc_npz_free(z);
	}

	/* a member that is not .npy */
	zmember txt[] = {{"a.npy", good.p, good.n, false}, {"notes.txt", good.p, good.n, false}};
	mk_zip(&zip, txt, 2, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "txt.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)(at[1] - 30 - 9), "member notes.txt is not a .npy array", "txt");
	zmember dir[] = {{"sub/", good.p, 0, false}};
	mk_zip(&zip, dir, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "dir.npz", &err), &err, ETC_ERR_FORMAT, 0,
	       "member sub/ is not a .npy", "dir");

	/* a stored member's errors are placed in the archive; a deflated one's in the member */
	bad = good;
	bad.p[5] = 'X';
	zmember magic[] = {{"a.npy", good.p, good.n, false}, {"12,13.npy", bad.p, bad.n, false}};
	mk_zip(&zip, magic, 2, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "magic.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[1], "member 12,13.npy, byte 0: not a .npy array: bad magic", "magic");
	CHECK_HAS(err.message, "magic.npz: byte ");
	magic[1].deflate = true;
	mk_zip(&zip, magic, 2, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "magic.npz", &err), &err, ETC_ERR_FORMAT, -1,
	       "member 12,13.npy (deflated), byte 0: not a .npy array: bad magic",
	       "magic deflated");

	mk_npy(&bad, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", vals, 8);
	zmember shortm[] = {{"x.npy", bad.p, bad.n, false}};
	mk_zip(&zip, shortm, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "short.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[0] + 128, "member x.npy, byte 128: data too short", "short");
	CHECK_HAS(err.message, "the member has 8 after the header");

	mk_npy(&bad, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", vals,
	       12);
	shortm[0].data = bad.p;
	shortm[0].len = bad.n;
	mk_zip(&zip, shortm, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "key.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[0] + 10 + 56, "member x.npy, byte 66: header: unexpected key", "key");

	/* header longer than the member, inside a zip */
	bad = good;
	bad.p[8] = 200;
	shortm[0].data = bad.p;
	shortm[0].len = bad.n;
	mk_zip(&zip, shortm, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "hlen.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[0] + 8, "header of 200 bytes runs past the end of the member", "hlen");

	/* a member too short for a .npy prefix */
	shortm[0].len = 5;
	mk_zip(&zip, shortm, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "tiny.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[0], "only 5 bytes", "tiny");
	shortm[0].len = 0;
	mk_zip(&zip, shortm, 1, at);
	expect(etc_npz_wrap(&z, zip.p, zip.n, "zero.npz", &err), &err, ETC_ERR_FORMAT,
	       (int64_t)at[0], "only 0 bytes", "zero");

	/* an unsupported member leaves the others readable */
	mk_npy(&bad, 1, 0, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", vals, 12);
	zmember mixed[] = {{"12.npy", good.p, good.n, false}, {"13.npy", bad.p, bad.n, true}};
	mk_zip(&zip, mixed, 2, at);
	CHECK(etc_npz_wrap(&z, zip.p, zip.n, "mixed.npz", &err) == 0);
	if (z) {
		etc_tensor t;
		CHECK(etc_npz_find(z, "13") == 1);
		expect(etc_npz_array(z, 1, &t, &err), &err, ETC_ERR_UNSUPPORTED, -1,
		       "member 13.npy (deflated), byte 20: dtype '>f4' is big-endian", "mixed");
		CHECK(etc_npz_array(z, 0, &t, &err) == 0);
		etc_npz_free(z);
	}
}

/* ---- robustness ----------------------------------------------------------- */

/* Opens `p` and, if that works, views every array; views must stay inside. */
static void poke(const uint8_t *p, size_t n)
{
	etc_npz *z = NULL;
	etc_error err;
	if (etc_npz_wrap(&z, p, n, "fuzz", &err) < 0) {
		check_count++;
		if (err.status >= 0 || err.message[0] == '\0') {
			check_failures++;
			fprintf(stderr, "failure without a message\n");
		}
		return;
	}
	for (size_t i = 0; i < etc_npz_count(z); i++) {
		etc_tensor t;
		if (etc_npz_array(z, i, &t, &err) < 0)
			continue;
		uint64_t esz = etc_scalar_type_size(t.scalar_type);
		check_count++;
		if (t.nbytes != t.numel * esz ||
		    (t.offset >= 0 &&
		     (t.data != p + t.offset || (uint64_t)t.offset + t.nbytes > n))) {
			check_failures++;
			fprintf(stderr, "array %zu outside its input\n", i);
		}
		if (t.numel)
			(void)etc_tensor_get(&t, t.numel - 1);
	}
	etc_npz_free(z);
}

static void test_robustness(void)
{
	static const char *const files[] = {"single_f4.npy", "single_f2_v2.npy", "arrays_v1.npz",
	                                    "arrays_deflated.npz", "unsupported.npz"};
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len;
		uint8_t *bytes = read_file(files[f], &len);
		uint8_t *copy = malloc(len);
		/* every truncation */
		for (size_t n = 0; n < len; n++) {
			memcpy(copy, bytes, n);
			poke(copy, n);
		}
		/* single-byte changes: every value in .npy files, a few in archives */
		bool npy = len > 6 && bytes[0] == 0x93;
		for (size_t i = 0; i < len; i++) {
			memcpy(copy, bytes, len);
			if (npy) {
				for (int v = 0; v < 256; v++) {
					copy[i] = (uint8_t)v;
					poke(copy, len);
				}
			} else {
				copy[i] ^= 0xff;
				poke(copy, len);
				copy[i] = bytes[i] ^ 0x01;
				poke(copy, len);
			}
		}
		free(copy);
		free(bytes);
	}
}

/* Bytes after the end record: the archive is read up to it (zero-copy still),
 * with a warning; an end record in those bytes is held to the archive it ends. */
static void test_trailing(void)
{
	buf good, zip;
	etc_error err;
	etc_npz *z = NULL;
	size_t at[2];
	char want[160];
	static const float vals[] = {1.0f, 2.0f, 3.0f};
	mk_npy(&good, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", vals, 12);
	zmember ok[] = {{"a.npy", good.p, good.n, false}, {"b.npy", good.p, good.n, true}};
	mk_zip(&zip, ok, 2, at);
	size_t end = zip.n;
	CHECK(etc_npz_wrap(&z, zip.p, zip.n, "plain.npz", &err) == 0);
	CHECK(z && etc_npz_warning(z) == NULL);
	etc_npz_free(z);
	for (int fill = 0; fill < 2; fill++) {
		zip.n = end;
		for (size_t i = 0; i < 300; i++) {
			uint8_t c = fill ? (uint8_t)(i * 37 + 11) : 0;
			b_put(&zip, &c, 1);
		}
		CHECK(etc_npz_wrap(&z, zip.p, zip.n, "pad.npz", &err) == 0);
		if (!z)
			continue;
		snprintf(want, sizeof want,
		         "pad.npz: 300 bytes after the zip archive's end (byte %zu) are ignored",
		         end);
		CHECK(etc_npz_warning(z) && strcmp(etc_npz_warning(z), want) == 0);
		etc_tensor ta, tb;
		CHECK(etc_npz_array(z, 0, &ta, &err) == 0 && etc_npz_array(z, 1, &tb, &err) == 0);
		CHECK(ta.data == zip.p + at[0] + 128 && ta.offset == (int64_t)(at[0] + 128));
		CHECK_DOUBLE_EXACT(etc_tensor_get(&ta, 2), 3.0);
		CHECK_DOUBLE_EXACT(etc_tensor_get(&tb, 1), 2.0);
		etc_npz_free(z);
	}
	/* an end record in the appended bytes: its central directory must lie
	 * before it, never past the file; a directory placed in garbage is read
	 * as such, within the archive */
	size_t cd = end - 22 - 2 * (46 + 5); /* two entries named "a.npy", "b.npy" */
	static const struct {
		uint32_t cd_size;
		int where; /* 0 far away, 1 in the zeros before the record, 2 the real directory */
		const char *frag;
	} fake[] = {{46, 0, "puts the central directory at [1000000000, +46)"},
	            {46, 1, "central directory entry 0 of 1"},
	            {2 * (46 + 5), 2, "another entry starts there"}};
	for (size_t f = 0; f < sizeof fake / sizeof fake[0]; f++) {
		zip.n = end;
		for (size_t i = 0; i < 100; i++)
			b_le(&zip, 0, 1);
		size_t pos = zip.n;
		size_t off = fake[f].where == 0 ? 1000000000u : fake[f].where == 1 ? pos - 60 : cd;
		b_le(&zip, 0x06054b50, 4);
		b_le(&zip, 0, 4);
		b_le(&zip, 1, 2);
		b_le(&zip, 1, 2);
		b_le(&zip, fake[f].cd_size, 4);
		b_le(&zip, off, 4);
		b_le(&zip, 0, 2);
		for (size_t i = 0; i < 50; i++)
			b_le(&zip, 0, 1);
		int rc = etc_npz_wrap(&z, zip.p, zip.n, "fake.npz", &err);
		CHECK(rc == ETC_ERR_FORMAT && z == NULL);
		CHECK_HAS(err.message, "fake.npz: byte ");
		CHECK_HAS(err.message, fake[f].frag);
		CHECK(err.offset == (int64_t)(fake[f].where == 0   ? pos
		                              : fake[f].where == 1 ? pos - 60
		                                                   : cd + 46 + 5));
	}
}

int main(void)
{
	init_data_dir();
	for (int i = 0; i < 24; i++)
		v_multi[i] = i * 0.5 - 3.0;
	test_fixture("arrays_v1.npz", true);
	test_fixture("arrays_v2.npz", true);
	test_fixture("arrays_v3.npz", true);
	test_fixture("arrays_deflated.npz", false);
	test_single_npy();
	test_empty_npz();
	CHECK_GROUP(test_unsupported_npz);
	CHECK_GROUP(test_headers);
	test_prefix();
	CHECK_GROUP(test_zips);
	CHECK_GROUP(test_trailing);
	CHECK_GROUP(test_robustness);
	return check_report("test_npz");
}
