/*
 * test_pickle_refs.c - pickle.dumps references (ETRecords before ExecuTorch
 * v1.3) and legacy torch.save files, against what torch wrote.
 *
 * tests/data/pickle_refs/ is made by tests/pickle_refs_gen.py with the real
 * PyTorch; MANIFEST.txt lists every tensor in walk order with its dtype,
 * shape, strides, storage offset and values. Each file is read through the
 * public API (etc_torchsave_wrap / _open, etc_etrecord_open) and every value
 * is compared exactly; storages must lie inside the bytes given (zero-copy)
 * for protocols 3 to 5, with tensor.offset naming the first element.
 */
#include "check.h"
#include "etcompare/etrecord.h"
#include "etcompare/torchsave.h"

#include <stdint.h>
#include <stdlib.h>

#define MAX_LINES 400

typedef struct line {
	char file[64], path[128], dtype[16], shape[64], stride[64];
	long long offset;
	int contiguous;
	double values[64];
	size_t nvalues;
} line;

static line lines[MAX_LINES];
static size_t nlines;
static char dir[1024];

static uint8_t *slurp(const char *name, size_t *len)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static void load_manifest(void)
{
	size_t len;
	uint8_t *text = slurp("MANIFEST.txt", &len);
	CHECK(text != NULL);
	if (!text)
		return;
	text[len - 1] = '\0';
	for (char *l = (char *)text, *next; l && *l && nlines < MAX_LINES; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		line *e = &lines[nlines++];
		char *f[8];
		for (int i = 0; i < 8; i++) {
			f[i] = l;
			char *tab = l ? strchr(l, '\t') : NULL;
			if (tab)
				*tab = '\0';
			l = tab ? tab + 1 : NULL;
		}
		snprintf(e->file, sizeof e->file, "%s", f[0]);
		snprintf(e->path, sizeof e->path, "%s", f[1]);
		snprintf(e->dtype, sizeof e->dtype, "%s", f[2]);
		snprintf(e->shape, sizeof e->shape, "%s", f[3]);
		snprintf(e->stride, sizeof e->stride, "%s", f[4]);
		e->offset = strtoll(f[5] ? f[5] : "0", NULL, 10);
		e->contiguous = f[6] && f[6][0] == '1';
		for (char *p = f[7]; p && *p && e->nvalues < 64;) {
			char *end;
			e->values[e->nvalues++] = strtod(p, &end);
			if (end == p)
				break;
			p = end;
		}
	}
	free(text);
}

static void dims(char *out, size_t cap, const etc_tensor *t, bool strides)
{
	size_t n = 0;
	out[0] = '\0';
	for (uint32_t d = 0; d < t->ndim && n < cap; d++)
		n += (size_t)snprintf(
		    out + n, cap - n, d ? ",%lld" : "%lld",
		    (long long)(strides ? etc_tensor_stride(t, d) : etc_tensor_size(t, d)));
}

typedef struct walk_ctx {
	const char *file;
	size_t next; /* manifest line to compare with */
	const uint8_t *base;
	size_t base_len;
	bool zero_copy;  /* storages point into base; tensor.offset counts from it */
	bool same_bytes; /* base holds the same bytes elsewhere: compare only offsets */
	const etc_pyobj *seen[MAX_LINES];
	const char *seen_path[MAX_LINES];
	size_t nseen;
} walk_ctx;

static void check_tensor(walk_ctx *w, const char *path, const etc_pyobj *o)
{
	const etc_pytensor *pt = etc_pyobj_tensor(o);
	const etc_tensor *t = &pt->tensor;
	while (w->next < nlines && strcmp(lines[w->next].file, w->file) != 0)
		w->next++;
	CHECK(w->next < nlines);
	if (w->next >= nlines)
		return;
	const line *e = &lines[w->next++];
	char buf[64];
	CHECK_STR(path, e->path);
	CHECK_STR(etc_scalar_type_name(t->scalar_type), e->dtype);
	dims(buf, sizeof buf, t, false);
	CHECK_STR(buf, e->shape);
	dims(buf, sizeof buf, t, true);
	CHECK_STR(buf, e->stride);
	CHECK(pt->storage_offset == e->offset);
	CHECK(pt->contiguous == (e->contiguous != 0));
	CHECK(t->numel == e->nvalues);
	for (size_t i = 0; i < e->nvalues && i < t->numel; i++) {
		double v = etc_pytensor_get(pt, i);
		CHECK_DOUBLE_EXACT(v, e->values[i]);
		CHECK(signbit(v) == signbit(e->values[i]));
	}
	size_t esz = etc_scalar_type_size(t->scalar_type);
	if (t->numel && w->zero_copy) {
		if (!w->same_bytes) {
			CHECK(pt->storage >= w->base &&
			      pt->storage + pt->storage_nbytes <= w->base + w->base_len);
			CHECK(t->offset ==
			      (int64_t)(pt->storage - w->base) + pt->storage_offset * (int64_t)esz);
		}
		CHECK(t->offset >= 0);
		if (t->offset >= 0 && (size_t)t->offset + esz <= w->base_len)
			CHECK(memcmp(w->base + t->offset,
			             pt->storage + pt->storage_offset * (int64_t)esz, esz) == 0);
	}
	/* a tensor pickled twice is one object (pickle's memo) */
	for (size_t i = 0; i < w->nseen; i++)
		if (strstr(path, "again[1]") && strstr(w->seen_path[i], "again[0]"))
			CHECK(w->seen[i] == o);
	if (w->nseen < MAX_LINES) {
		w->seen[w->nseen] = o;
		w->seen_path[w->nseen++] = e->path;
	}
}

static void walk(walk_ctx *w, const etc_pyobj *o, char *path, size_t len, size_t cap)
{
	int kind = etc_pyobj_kind(o);
	if (kind == ETC_PY_TENSOR) {
		check_tensor(w, path, o);
		return;
	}
	for (size_t i = 0; i < etc_pyobj_len(o); i++) {
		size_t l = len;
		if (kind == ETC_PY_DICT) {
			etc_str k = etc_pyobj_str(etc_pyobj_dict_key(o, i));
			l += (size_t)snprintf(path + len, cap - len, len ? ".%.*s" : "%.*s",
			                      (int)k.len, k.ptr);
			walk(w, etc_pyobj_dict_value(o, i), path, l, cap);
		} else {
			l += (size_t)snprintf(path + len, cap - len, "[%zu]", i);
			walk(w, etc_pyobj_item(o, i), path, l, cap);
		}
		path[len] = '\0';
	}
}

static size_t count_lines(const char *file)
{
	size_t n = 0;
	for (size_t i = 0; i < nlines; i++)
		n += strcmp(lines[i].file, file) == 0;
	return n;
}

static void walk_all(const char *file, const etc_pyobj *root, const uint8_t *base, size_t len,
                     bool zero_copy, bool same_bytes)
{
	walk_ctx *w = calloc(1, sizeof *w);
	char path[256] = "";
	w->file = file;
	w->base = base;
	w->base_len = len;
	w->zero_copy = zero_copy;
	w->same_bytes = same_bytes;
	walk(w, root, path, 0, sizeof path);
	size_t seen = w->nseen;
	CHECK(seen == count_lines(file));
	CHECK(seen > 0);
	free(w);
}

/* The raw pickle.dumps files, wrapped from a buffer of ours. */
static void test_pickles(void)
{
	static const char *const kinds[] = {"refs", "inputs"};
	for (int p = 2; p <= 5; p++) {
		for (int k = 0; k < 2; k++) {
			char name[64];
			snprintf(name, sizeof name, "%s_p%d.pkl", kinds[k], p);
			size_t len;
			uint8_t *buf = slurp(name, &len);
			CHECK(buf != NULL);
			if (!buf)
				continue;
			etc_torchsave *ts = NULL;
			etc_error err = {0};
			int rc = etc_torchsave_wrap(&ts, buf, len, name, &err);
			if (rc != 0)
				fprintf(stderr, "%s: %s\n", name, err.message);
			CHECK(rc == 0);
			if (ts) {
				/* protocol 2 spells bytes as latin-1 text: decoded, so copied */
				walk_all(name, etc_torchsave_root(ts), buf, len, p >= 3, false);
				CHECK_STR(etc_torchsave_prefix(ts), "");
			}
			etc_torchsave_free(ts);
			free(buf);
		}
	}
}

/* The same pickles inside ETRecords: offsets count from the member's start. */
static void test_etrecords(void)
{
	for (int p = 2; p <= 5; p++) {
		char name[64], pkl[64], path[1200];
		snprintf(name, sizeof name, "refs_p%d.etrecord", p);
		snprintf(pkl, sizeof pkl, "refs_p%d.pkl", p);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		size_t len;
		uint8_t *buf = slurp(pkl, &len);
		etc_etrecord *rec = NULL;
		etc_error err = {0};
		int rc = etc_etrecord_open(&rec, path, &err);
		if (rc != 0)
			fprintf(stderr, "%s: %s\n", name, err.message);
		CHECK(rc == 0);
		CHECK(rec && etc_etrecord_warning_count(rec) == 0);
		if (rec && buf) {
			const etc_torchsave *ts = etc_etrecord_reference_outputs(rec);
			CHECK(ts != NULL);
			/* compare against the .pkl's lines; offsets are the member's */
			walk_all(pkl, etc_torchsave_root(ts), buf, len, p >= 3, true);
			const etc_pytensor *out[4];
			size_t n = 0;
			CHECK(etc_etrecord_reference(rec, "forward", 1, out, 4, &n, &err) == 0);
			CHECK(n == 1 && out[0] && !out[0]->contiguous);
			CHECK(etc_etrecord_representative_inputs(rec) != NULL);
		}
		etc_etrecord_free(rec);
		free(buf);
	}
}

/* A legacy torch.save file: storages shared between views, as torch wrote them. */
static void test_legacy_file(void)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/legacy.pt", dir);
	size_t len;
	uint8_t *buf = slurp("legacy.pt", &len);
	etc_torchsave *ts = NULL;
	etc_error err = {0};
	int rc = etc_torchsave_open(&ts, path, &err);
	if (rc != 0)
		fprintf(stderr, "legacy.pt: %s\n", err.message);
	CHECK(rc == 0);
	if (ts && buf) {
		const etc_pyobj *root = etc_torchsave_root(ts);
		walk_all("legacy.pt", root, NULL, 0, false, false);
		const etc_pytensor *w = etc_pyobj_tensor(etc_pyobj_dict_get(root, "w"));
		const etc_pytensor *v = etc_pyobj_tensor(etc_pyobj_dict_get(root, "v"));
		CHECK(etc_pyobj_dict_get(root, "w") == etc_pyobj_dict_get(root, "same"));
		CHECK(w && v && w->storage == v->storage && w->storage_key == v->storage_key);
		/* the view's first element, by its offset in the file */
		if (v && v->tensor.offset > 0 && (size_t)v->tensor.offset + 8 <= len) {
			double x;
			memcpy(&x, buf + v->tensor.offset, 8);
			CHECK_DOUBLE_EXACT(x, etc_pytensor_get(v, 0));
			CHECK(v->tensor.offset == w->tensor.offset + 5 * 8);
		}
	}
	etc_torchsave_free(ts);
	free(buf);
}

static int expect_error(const uint8_t *data, size_t len, int status, const char *text,
                        int64_t offset)
{
	etc_torchsave *ts = NULL;
	etc_error err = {0};
	int rc = etc_torchsave_wrap(&ts, data, len, "bad.pkl", &err);
	etc_torchsave_free(ts);
	CHECK(rc == status);
	CHECK(strstr(err.message, text) != NULL);
	if (offset >= 0)
		CHECK(err.offset == offset);
	if (rc != status || !strstr(err.message, text) || (offset >= 0 && err.offset != offset))
		fprintf(stderr, "  got %d \"%s\" (offset %lld), wanted \"%s\" at %lld\n", rc,
		        err.message, (long long)err.offset, text, (long long)offset);
	return rc;
}

static const uint8_t *find(const uint8_t *hay, size_t n, const void *needle, size_t k)
{
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(hay + i, needle, k) == 0)
			return hay + i;
	return NULL;
}

/* Byte surgery on the first legacy stream of refs_p4.pkl (24 float32 storage elements). */
static void test_corrupt_streams(void)
{
	size_t len;
	uint8_t *good = slurp("refs_p4.pkl", &len);
	CHECK(good != NULL);
	if (!good)
		return;
	uint8_t *b = malloc(len);
	static const uint8_t magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46};
	const uint8_t *s = find(good, len, magic, sizeof magic);
	CHECK(s && s - good > 5 && s[-5] == 'B');
	if (!s || s - good <= 5) {
		free(b);
		free(good);
		return;
	}
	size_t start = (size_t)(s - good);
	uint32_t slen =
	    (uint32_t)s[-4] | (uint32_t)s[-3] << 8 | (uint32_t)s[-2] << 16 | (uint32_t)s[-1] << 24;
	size_t count_at = start + slen - 96 - 8;

	memcpy(b, good, len);
	CHECK(b[count_at] == 24);
	b[count_at] = 25;
	expect_error(b, len, ETC_ERR_FORMAT, "has 25 elements here but its persistent id",
	             (int64_t)count_at);

	/* an absurd count: checked against the persistent id, never trusted */
	memcpy(b, good, len);
	memset(b + count_at, 0xff, 8);
	expect_error(b, len, ETC_ERR_FORMAT, "has 18446744073709551615 elements",
	             (int64_t)count_at);

	/* the storage key list names another key */
	memcpy(b, good, len);
	const uint8_t *keys = find(b + start, slen, "]q\x00X", 4);
	CHECK(keys != NULL);
	if (keys) {
		uint8_t *k = (uint8_t *)keys + 8; /* first byte of the key text */
		*k = *k == '9' ? '8' : '9';
		expect_error(b, len, ETC_ERR_FORMAT, "is listed but no persistent id names it", -1);
	}

	/* the persistent id names a storage type outside the whitelist */
	memcpy(b, good, len);
	uint8_t *g = (uint8_t *)find(b + start, slen, "ctorch\nFloatStorage\n", 20);
	CHECK(g != NULL);
	if (g) {
		memcpy(g, "cos\nsystem\n\n\n\n\n\n\n\n\n", 20);
		expect_error(b, len, ETC_ERR_FORMAT, "forbidden GLOBAL os.system",
		             (int64_t)(g - b));
		CHECK(expect_error(b, len, ETC_ERR_FORMAT,
		                   "torch.storage._load_from_bytes stream byte", -1) < 0);
	}

	/* truncated: protocol 4 frames the pickle, the FRAME length no longer fits */
	expect_error(good, start + slen - 10, ETC_ERR_FORMAT, "FRAME needs", 2);
	free(b);
	free(good);
	/* protocol 3 has no frames: the BINBYTES holding the stream no longer fits */
	good = slurp("refs_p3.pkl", &len);
	s = good ? find(good, len, magic, sizeof magic) : NULL;
	CHECK(s && s - good > 5 && s[-5] == 'B');
	if (s && s - good > 5) {
		start = (size_t)(s - good);
		expect_error(good, start + 100, ETC_ERR_FORMAT, "BINBYTES needs",
		             (int64_t)start - 5);
		/* the stream itself cut short: its BINBYTES length shrunk to match */
		b = malloc(len);
		memcpy(b, good, len);
		slen = (uint32_t)s[-4] | (uint32_t)s[-3] << 8;
		uint32_t cut = slen - 10;
		b[start - 4] = (uint8_t)cut;
		b[start - 3] = (uint8_t)(cut >> 8);
		memmove(b + start + cut, good + start + slen, len - start - slen);
		expect_error(b, len - 10, ETC_ERR_FORMAT, "needs 96 bytes (24 float32 elements)",
		             (int64_t)(start + slen - 96));
		free(b);
	}
	free(good);
}

/*
 * The same memoized bytes reduced by _load_from_bytes again, and the same
 * latin-1 text by _codecs.encode: read once (a pickle of a few bytes per call
 * must not make the reader parse or copy a large stream again and again).
 */
static void test_repeated_reduce(void)
{
	size_t len;
	uint8_t *good = slurp("refs_p4.pkl", &len);
	static const uint8_t magic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46};
	const uint8_t *s = good ? find(good, len, magic, sizeof magic) : NULL;
	CHECK(s != NULL);
	if (!s) {
		free(good);
		return;
	}
	uint32_t slen =
	    (uint32_t)s[-4] | (uint32_t)s[-3] << 8 | (uint32_t)s[-2] << 16 | (uint32_t)s[-1] << 24;
	static const char head[] = "\x80\x03"
	                           "ctorch.storage\n_load_from_bytes\nq\x00";
	static const char tail[] = "q\x01\x85Rh\x00h\x01\x85Rh\x00h\x01\x85R\x87.";
	size_t hl = sizeof head - 1, tl = sizeof tail - 1, n = hl + 5 + slen + tl;
	uint8_t *p = malloc(n);
	memcpy(p, head, hl);
	memcpy(p + hl, s - 5, 5 + (size_t)slen);
	memcpy(p + hl + 5 + slen, tail, tl);
	etc_torchsave *ts = NULL;
	etc_error err = {0};
	CHECK(etc_torchsave_wrap(&ts, p, n, "again.pkl", &err) == 0);
	const etc_pyobj *root = ts ? etc_torchsave_root(ts) : NULL;
	CHECK(etc_pyobj_len(root) == 3);
	CHECK(etc_pyobj_kind(etc_pyobj_item(root, 0)) == ETC_PY_STORAGE);
	CHECK(etc_pyobj_item(root, 0) == etc_pyobj_item(root, 1));
	CHECK(etc_pyobj_item(root, 1) == etc_pyobj_item(root, 2));
	size_t nb = 0;
	const uint8_t *bytes = etc_pyobj_storage_bytes(etc_pyobj_item(root, 0), &nb);
	CHECK(nb == 96 && bytes >= p && bytes + nb <= p + n);
	etc_torchsave_free(ts);
	/* protocol 2: _codecs.encode('\xe9\x00', 'latin1') twice is one bytes object */
	static const char p2[] = "\x80\x02"
	                         "c_codecs\nencode\nq\x00X\x03\x00\x00\x00\xc3\xa9\x00q\x01"
	                         "X\x06\x00\x00\x00latin1q\x02\x86Rh\x00h\x01h\x02\x86R\x86.";
	CHECK(etc_torchsave_wrap(&ts, p2, sizeof p2 - 1, "latin.pkl", &err) == 0);
	root = ts ? etc_torchsave_root(ts) : NULL;
	CHECK(etc_pyobj_item(root, 0) && etc_pyobj_item(root, 0) == etc_pyobj_item(root, 1));
	bytes = etc_pyobj_bytes(etc_pyobj_item(root, 0), &nb);
	CHECK(nb == 2 && bytes && bytes[0] == 0xe9 && bytes[1] == 0);
	etc_torchsave_free(ts);
	/* text that is not latin-1 */
	static const char p3[] = "\x80\x02"
	                         "c_codecs\nencode\nX\x03\x00\x00\x00\xe2\x82\xac"
	                         "X\x06\x00\x00\x00latin1\x86R.";
	CHECK(expect_error((const uint8_t *)p3, sizeof p3 - 1, ETC_ERR_FORMAT,
	                   "character at text byte 0 is not latin-1", 38) < 0);
	free(p);
	free(good);
}

int main(void)
{
	const char *src = getenv("ETC_SRC");
	snprintf(dir, sizeof dir, "%s/tests/data/pickle_refs", src ? src : ".");
	load_manifest();
	CHECK(nlines >= 100);
	CHECK_GROUP(test_pickles);
	CHECK_GROUP(test_etrecords);
	CHECK_GROUP(test_legacy_file);
	CHECK_GROUP(test_corrupt_streams);
	CHECK_GROUP(test_repeated_reduce);
	return check_report("test_pickle_refs");
}
