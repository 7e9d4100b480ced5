/*
 * npz.c - numpy `.npz` archives and `.npy` files (see etcompare/npz.h).
 *
 * The zip is read by zipread.c (stored members in place, deflated ones
 * inflated into the arena). Each `.npy` header is a Python dict literal; it
 * is parsed here by a small recursive-descent parser for the literal subset
 * numpy can write (strings, decimal integers, True/False/None, tuples, lists,
 * dicts), never evaluated. Every array is validated at open; arrays that are
 * well formed but not representable keep their ETC_ERR_UNSUPPORTED error,
 * which etc_npz_array hands back.
 */
#include "etcompare/npz.h"
#include "format/npz_private.h"
#include "format/zipread.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct npz_item {
	const char *name;
	etc_tensor tensor;
	etc_error *unsupported; /* non-NULL: why the array cannot be viewed */
	/* A stored member whose CRC-32 is checked when its data is used, not at
	 * open: names and shapes are known without reading gigabytes. */
	bool crc_pending;
	uint32_t crc;
	const uint8_t *member; /* the member's bytes (.npy header + data) */
	const char *member_name;
	int64_t member_offset;
} npz_item;

typedef struct npz_key {
	const char *name;
	size_t index;
} npz_key;

struct etc_npz {
	etc_map map;
	etc_arena arena;
	const char *name;
	npz_item *items;
	size_t count;
	npz_key *sorted;     /* by name, for etc_npz_find */
	const char *warning; /* bytes after the zip archive, or NULL */
};

/* ---- one .npy: where it is, for messages -------------------------------- */

typedef struct npy_ctx {
	etc_npz *z;
	const char *member; /* archive member name; NULL for a single .npy */
	const uint8_t *p;   /* the .npy bytes */
	size_t n;
	int64_t base; /* file offset of p[0], or -1 when inflated */
} npy_ctx;

/* Fails with a message placed at byte `pos` of the .npy. */
static int nfail(const npy_ctx *c, etc_error *err, int status, size_t pos, const char *fmt, ...)
    ETC_PRINTF(5, 6);

static int nfail(const npy_ctx *c, etc_error *err, int status, size_t pos, const char *fmt, ...)
{
	char what[640];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	if (!c->member)
		return etc_fail(err, status, c->z->name, (int64_t)pos, "%s", what);
	if (c->base >= 0)
		return etc_fail(err, status, c->z->name, c->base + (int64_t)pos,
		                "member %s, byte %zu: %s", c->member, pos, what);
	return etc_fail(err, status, c->z->name, -1, "member %s (deflated), byte %zu: %s",
	                c->member, pos, what);
}

/* ---- the header's Python literal ---------------------------------------- */

enum { V_STR, V_INT, V_TRUE, V_FALSE, V_NONE, V_TUPLE, V_LIST, V_DICT };

static const char *const kind_names[] = {"a string", "an integer", "True",   "False",
                                         "None",     "a tuple",    "a list", "a dict"};

#define MAX_DEPTH 32

typedef struct hval {
	int kind;
	size_t start, end; /* the literal's text, [start, end) of the header */
	size_t open;       /* V_TUPLE: its '(' (inside any redundant parentheses) */
	/* V_STR: the text between the quotes; escaped when it has backslashes */
	size_t str_at, str_len;
	bool escaped;
	/* V_INT */
	bool neg, big; /* big: magnitude beyond uint64 */
	uint64_t mag;
} hval;

typedef struct hparse {
	const uint8_t *s;
	size_t n, i;
	bool long_suffix; /* version 1.0: accept Python 2 longs ("3L") */
	const char *why;  /* first error, at byte `at` of the header */
	size_t at;
} hparse;

static bool herr(hparse *h, size_t at, const char *why)
{
	if (!h->why) {
		h->why = why;
		h->at = at;
	}
	return false;
}

static void skip_ws(hparse *h)
{
	while (h->i < h->n) {
		uint8_t ch = h->s[h->i];
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f') {
			h->i++;
		} else if (ch == '\\' && h->i + 1 < h->n && h->s[h->i + 1] == '\n') {
			h->i += 2; /* explicit line continuation */
		} else if (ch == '#') {
			while (h->i < h->n && h->s[h->i] != '\n')
				h->i++;
		} else {
			break;
		}
	}
}

static bool is_ident(uint8_t ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

static bool parse_value(hparse *h, int depth, hval *v);

static bool parse_string(hparse *h, hval *v)
{
	uint8_t q = h->s[h->i];
	size_t at = h->i++;
	v->kind = V_STR;
	v->str_at = h->i;
	v->escaped = false;
	for (;;) {
		if (h->i >= h->n || h->s[h->i] == '\n')
			return herr(h, at, "unterminated string");
		uint8_t ch = h->s[h->i];
		if (ch == q)
			break;
		if (ch == '\\') {
			v->escaped = true;
			if (h->i + 1 >= h->n)
				return herr(h, at, "unterminated string");
			h->i++;
		}
		h->i++;
	}
	v->str_len = h->i - v->str_at;
	h->i++;
	return true;
}

static bool parse_int(hparse *h, hval *v)
{
	size_t at = h->i;
	v->kind = V_INT;
	v->neg = false;
	v->big = false;
	v->mag = 0;
	if (h->s[h->i] == '-' || h->s[h->i] == '+') {
		v->neg = h->s[h->i] == '-';
		h->i++;
		skip_ws(h);
	}
	size_t digits = h->i;
	while (h->i < h->n && h->s[h->i] >= '0' && h->s[h->i] <= '9') {
		unsigned d = (unsigned)(h->s[h->i] - '0');
		if (v->mag > (UINT64_MAX - d) / 10)
			v->big = true;
		else
			v->mag = v->mag * 10 + d;
		h->i++;
	}
	if (h->i == digits)
		return herr(h, at, "expected a number after the sign");
	if (h->s[digits] == '0' && (v->mag != 0 || v->big))
		return herr(h, at, "integer with a leading zero (not Python syntax)");
	if (h->long_suffix && h->i < h->n && (h->s[h->i] == 'L' || h->s[h->i] == 'l'))
		h->i++;
	if (h->i < h->n && (is_ident(h->s[h->i]) || h->s[h->i] == '.'))
		return herr(h, at, "only decimal integers are supported as numbers");
	return true;
}

/*
 * Items of a tuple or list up to `close`, after the first item and the
 * comma that follows it (or from the start for a list). Trailing comma ok.
 */
static bool parse_items(hparse *h, int depth, uint8_t close, bool need_item)
{
	for (;;) {
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == close && !need_item) {
			h->i++;
			return true;
		}
		hval item;
		if (!parse_value(h, depth + 1, &item))
			return false;
		skip_ws(h);
		if (h->i >= h->n)
			return herr(h, h->i, "unexpected end of header inside brackets");
		if (h->s[h->i] == close) {
			h->i++;
			return true;
		}
		if (h->s[h->i] != ',')
			return herr(h, h->i, "expected ',' or a closing bracket");
		h->i++;
		need_item = false;
	}
}

static bool parse_dict_body(hparse *h, int depth)
{
	for (;;) {
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == '}') {
			h->i++;
			return true;
		}
		hval key, val;
		if (!parse_value(h, depth + 1, &key))
			return false;
		skip_ws(h);
		if (h->i >= h->n || h->s[h->i] != ':')
			return herr(h, h->i, "expected ':' after a dict key");
		h->i++;
		if (!parse_value(h, depth + 1, &val))
			return false;
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == '}') {
			h->i++;
			return true;
		}
		if (h->i >= h->n || h->s[h->i] != ',')
			return herr(h, h->i, "expected ',' or '}' in a dict");
		h->i++;
	}
}

static bool parse_value(hparse *h, int depth, hval *v)
{
	memset(v, 0, sizeof *v);
	if (depth > MAX_DEPTH)
		return herr(h, h->i, "literal nested too deeply");
	skip_ws(h);
	if (h->i >= h->n)
		return herr(h, h->i, "unexpected end of header, expected a value");
	v->start = h->i;
	uint8_t ch = h->s[h->i];
	bool ok;
	if (ch == '\'' || ch == '"') {
		ok = parse_string(h, v);
	} else if ((ch >= '0' && ch <= '9') || ch == '-' || ch == '+') {
		ok = parse_int(h, v);
	} else if (ch == '(') {
		size_t open = h->i++;
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == ')') {
			h->i++;
			v->kind = V_TUPLE;
			v->open = open;
			ok = true;
		} else {
			hval first;
			if (!parse_value(h, depth + 1, &first))
				return false;
			skip_ws(h);
			if (h->i < h->n && h->s[h->i] == ')') {
				/* (x) is x, not a tuple */
				h->i++;
				size_t start = v->start;
				*v = first;
				v->start = start;
				ok = true;
			} else if (h->i < h->n && h->s[h->i] == ',') {
				h->i++;
				v->kind = V_TUPLE;
				v->open = open;
				ok = parse_items(h, depth, ')', false);
			} else {
				ok = herr(h, h->i, "expected ',' or ')'");
			}
		}
	} else if (ch == '[') {
		h->i++;
		v->kind = V_LIST;
		ok = parse_items(h, depth, ']', false);
	} else if (ch == '{') {
		h->i++;
		v->kind = V_DICT;
		ok = parse_dict_body(h, depth);
	} else if (is_ident(ch)) {
		size_t at = h->i;
		while (h->i < h->n && is_ident(h->s[h->i]))
			h->i++;
		size_t len = h->i - at;
		const char *w = (const char *)h->s + at;
		if (len == 4 && memcmp(w, "True", 4) == 0)
			v->kind = V_TRUE;
		else if (len == 5 && memcmp(w, "False", 5) == 0)
			v->kind = V_FALSE;
		else if (len == 4 && memcmp(w, "None", 4) == 0)
			v->kind = V_NONE;
		else
			return herr(h, at,
			            "a name that is not a Python literal (only True, False "
			            "and None are)");
		ok = true;
	} else {
		return herr(h, h->i, "unexpected character, expected a Python literal");
	}
	v->end = h->i;
	return ok;
}

/* ---- the header dict ---------------------------------------------------- */

typedef struct npy_header {
	hval descr, fortran, shape;
	bool have_descr, have_fortran, have_shape;
	uint32_t ndim;
	int64_t dims[ETC_NPZ_MAX_NDIM];
} npy_header;

static bool key_is(const hparse *h, const hval *k, const char *name)
{
	size_t len = strlen(name);
	return k->kind == V_STR && !k->escaped && k->str_len == len &&
	       memcmp(h->s + k->str_at, name, len) == 0;
}

/* Parses the whole header: one dict with exactly the three keys. */
static bool parse_header(hparse *h, npy_header *hd)
{
	skip_ws(h);
	if (h->i >= h->n || h->s[h->i] != '{')
		return herr(h, h->i, "the header is not a dict literal (expected '{')");
	h->i++;
	for (;;) {
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == '}') {
			h->i++;
			break;
		}
		hval key, val;
		if (!parse_value(h, 1, &key))
			return false;
		skip_ws(h);
		if (h->i >= h->n || h->s[h->i] != ':')
			return herr(h, h->i, "expected ':' after a dict key");
		h->i++;
		if (!parse_value(h, 1, &val))
			return false;
		hval *slot;
		bool *have;
		if (key_is(h, &key, "descr"))
			slot = &hd->descr, have = &hd->have_descr;
		else if (key_is(h, &key, "fortran_order"))
			slot = &hd->fortran, have = &hd->have_fortran;
		else if (key_is(h, &key, "shape"))
			slot = &hd->shape, have = &hd->have_shape;
		else
			return herr(h, key.start,
			            "unexpected key (the header holds only 'descr', "
			            "'fortran_order' and 'shape')");
		if (*have)
			return herr(h, key.start, "key given twice");
		*have = true;
		*slot = val;
		skip_ws(h);
		if (h->i < h->n && h->s[h->i] == '}') {
			h->i++;
			break;
		}
		if (h->i >= h->n || h->s[h->i] != ',')
			return herr(h, h->i, "expected ',' or '}' in the header dict");
		h->i++;
	}
	skip_ws(h);
	if (h->i != h->n)
		return herr(h, h->i,
		            "text after the header dict (only spaces and newlines may follow)");
	if (!hd->have_descr)
		return herr(h, h->n, "the header has no 'descr' key");
	if (!hd->have_fortran)
		return herr(h, h->n, "the header has no 'fortran_order' key");
	if (!hd->have_shape)
		return herr(h, h->n, "the header has no 'shape' key");
	return true;
}

/* ---- dtypes ------------------------------------------------------------- */

typedef struct npy_dtype {
	int scalar_type; /* -1 when not representable */
	size_t itemsize; /* 0 when unknown */
	const char *why; /* when scalar_type < 0 */
} npy_dtype;

static void parse_descr(const char *d, size_t len, npy_dtype *out)
{
	static const struct {
		char kind;
		size_t size;
		int type;
	} table[] = {
	    {'f', 2, ETC_HALF},   {'f', 4, ETC_FLOAT},  {'f', 8, ETC_DOUBLE}, {'i', 1, ETC_CHAR},
	    {'i', 2, ETC_SHORT},  {'i', 4, ETC_INT},    {'i', 8, ETC_LONG},   {'u', 1, ETC_BYTE},
	    {'u', 2, ETC_UINT16}, {'u', 4, ETC_UINT32}, {'u', 8, ETC_UINT64}, {'b', 1, ETC_BOOL},
	};
	out->scalar_type = -1;
	out->itemsize = 0;
	out->why = "is not a dtype etcompare reads (bool, int8-64, uint8-64, float16/32/64)";
	char order = 0;
	if (len && (d[0] == '<' || d[0] == '>' || d[0] == '|' || d[0] == '=')) {
		order = d[0];
		d++;
		len--;
	}
	if (len < 2 || len > 3)
		goto kind;
	size_t size = 0;
	for (size_t i = 1; i < len; i++) {
		if (d[i] < '0' || d[i] > '9')
			goto kind;
		size = size * 10 + (size_t)(d[i] - '0');
	}
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (table[i].kind != d[0] || table[i].size != size)
			continue;
		out->itemsize = size;
		if (size > 1 && order == '>') {
			out->why = "is big-endian; etcompare reads little-endian data only "
			           "(save a.astype(a.dtype.newbyteorder('<')))";
			return;
		}
		if (size > 1 && order != '<') {
			out->why = "does not state a byte order ('<' expected)";
			return;
		}
		out->scalar_type = table[i].type;
		return;
	}
kind:
	if (len && d[0] == 'O')
		out->why = "holds Python objects (pickled data) and is not supported";
	else if (len && (d[0] == 'U' || d[0] == 'S' || d[0] == 'a'))
		out->why = "is a string dtype and is not supported";
	else if (len && d[0] == 'c')
		out->why = "is complex and is not supported";
	else if (len && (d[0] == 'M' || d[0] == 'm'))
		out->why = "is a datetime dtype and is not supported";
}

/* ---- validation of one .npy --------------------------------------------- */

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* "(2, 3)" for messages. */
static void shape_str(const npy_header *hd, char *buf, size_t cap)
{
	size_t len = (size_t)snprintf(buf, cap, "(");
	for (uint32_t d = 0; d < hd->ndim && len < cap; d++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "",
		                        (long long)hd->dims[d]);
	if (len < cap)
		snprintf(buf + len, cap - len, hd->ndim == 1 ? ",)" : ")");
}

static bool utf8_valid(const uint8_t *s, size_t n, size_t *bad)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = s[i];
		size_t len;
		uint32_t cp, min;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			*bad = i;
			return false;
		}
		if (n - i < len) {
			*bad = i;
			return false;
		}
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80) {
				*bad = i;
				return false;
			}
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
			*bad = i;
			return false;
		}
		i += len;
	}
	return true;
}

/* Reads the shape tuple's entries (the grammar is already known to be valid). */
static int read_shape(const npy_ctx *c, hparse *h, size_t hoff, npy_header *hd, etc_error *err)
{
	const hval *s = &hd->shape;
	if (s->kind != V_TUPLE)
		return nfail(c, err, ETC_ERR_FORMAT, hoff + s->start,
		             "'shape' is %s, not a tuple of integers", kind_names[s->kind]);
	h->i = s->open + 1;
	hd->ndim = 0;
	for (;;) {
		skip_ws(h);
		if (h->s[h->i] == ')')
			break;
		hval item;
		if (!parse_value(h, 2, &item))
			return nfail(c, err, ETC_ERR_FORMAT, hoff + h->at, "header: %s", h->why);
		if (item.kind != V_INT)
			return nfail(c, err, ETC_ERR_FORMAT, hoff + item.start,
			             "'shape' entry %u is %s, not an integer", hd->ndim,
			             kind_names[item.kind]);
		if (item.neg && (item.mag != 0 || item.big))
			return nfail(c, err, ETC_ERR_FORMAT, hoff + item.start,
			             "'shape' entry %u is negative", hd->ndim);
		if (item.big || item.mag > (uint64_t)INT64_MAX)
			return nfail(c, err, ETC_ERR_FORMAT, hoff + item.start,
			             "'shape' entry %u is larger than 2^63 - 1", hd->ndim);
		if (hd->ndim == ETC_NPZ_MAX_NDIM)
			return nfail(c, err, ETC_ERR_LIMIT, hoff + item.start,
			             "the array has more than %d dimensions", ETC_NPZ_MAX_NDIM);
		hd->dims[hd->ndim++] = (int64_t)item.mag;
		skip_ws(h);
		if (h->s[h->i] == ',')
			h->i++;
	}
	return 0;
}

/* Fills the item's name-independent part from the .npy at c->p. */
static int load_npy(const npy_ctx *c, npz_item *it, etc_error *err)
{
	static const uint8_t magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
	const uint8_t *p = c->p;
	size_t n = c->n;
	if (memcmp(p, magic, n < 6 ? n : 6) != 0)
		return nfail(c, err, ETC_ERR_FORMAT, 0,
		             "not a .npy array: bad magic (expected \\x93NUMPY)");
	if (n < 8)
		return nfail(c, err, ETC_ERR_FORMAT, 0,
		             "not a .npy array: only %zu bytes, truncated before the version", n);
	unsigned major = p[6], minor = p[7];
	if (!((major == 1 || major == 2 || major == 3) && minor == 0))
		return nfail(c, err, ETC_ERR_UNSUPPORTED, 6,
		             ".npy format version %u.%u is not supported (only 1.0, 2.0 and 3.0)",
		             major, minor);
	size_t hoff = major == 1 ? 10 : 12;
	if (n < hoff)
		return nfail(c, err, ETC_ERR_FORMAT, 8,
		             "truncated: the %zu bytes end inside the header length field", n);
	uint64_t hlen = major == 1 ? etc_le16(p + 8) : etc_le32(p + 8);
	if (hlen > n - hoff)
		return nfail(c, err, ETC_ERR_FORMAT, 8,
		             "header of %llu bytes runs past the end of the %s (%zu bytes, so at "
		             "most %zu)",
		             (unsigned long long)hlen, c->member ? "member" : "file", n, n - hoff);
	const uint8_t *hs = p + hoff;
	const uint8_t *nul = memchr(hs, '\0', (size_t)hlen);
	if (nul)
		return nfail(c, err, ETC_ERR_FORMAT, hoff + (size_t)(nul - hs),
		             "header contains a NUL byte");
	size_t bad;
	if (major == 3 && !utf8_valid(hs, (size_t)hlen, &bad))
		return nfail(c, err, ETC_ERR_FORMAT, hoff + bad,
		             "version 3.0 header is not valid UTF-8");

	hparse h = {.s = hs, .n = (size_t)hlen, .long_suffix = major == 1};
	npy_header hd;
	memset(&hd, 0, sizeof hd);
	if (!parse_header(&h, &hd))
		return nfail(c, err, ETC_ERR_FORMAT, hoff + h.at, "header: %s", h.why);
	if (hd.fortran.kind != V_TRUE && hd.fortran.kind != V_FALSE)
		return nfail(c, err, ETC_ERR_FORMAT, hoff + hd.fortran.start,
		             "'fortran_order' is %s, not True or False",
		             kind_names[hd.fortran.kind]);
	ETC_TRY(read_shape(c, &h, hoff, &hd, err));

	/* the descr, quoted for messages */
	char descr[160];
	int dlen = (int)(hd.descr.end - hd.descr.start);
	snprintf(descr, sizeof descr, "%.*s%s", dlen > 120 ? 120 : dlen,
	         (const char *)hs + hd.descr.start, dlen > 120 ? "..." : "");
	npy_dtype dt = {.scalar_type = -1};
	bool structured = false;
	if (hd.descr.kind == V_STR && !hd.descr.escaped)
		parse_descr((const char *)hs + hd.descr.str_at, hd.descr.str_len, &dt);
	else if (hd.descr.kind == V_STR)
		dt.why = "is not a dtype etcompare reads";
	else if (hd.descr.kind == V_LIST)
		structured = true;
	else
		return nfail(c, err, ETC_ERR_FORMAT, hoff + hd.descr.start,
		             "'descr' is %s, not a dtype string or a list of fields",
		             kind_names[hd.descr.kind]);

	/* numel and byte size, overflow-checked; an array with a zero dimension
	 * has no element whatever its other dimensions (numpy accepts
	 * (0, 2**40, 2**40)), so only non-empty shapes must fit int64 */
	uint64_t prod = 1;
	bool empty = false;
	char shape[96];
	for (uint32_t d = 0; d < hd.ndim; d++)
		empty |= hd.dims[d] == 0;
	for (uint32_t d = 0; d < hd.ndim && !empty; d++) {
		if (!etc_mul_u64(prod, (uint64_t)hd.dims[d], &prod) || prod > (uint64_t)INT64_MAX) {
			shape_str(&hd, shape, sizeof shape);
			return nfail(c, err, ETC_ERR_FORMAT, hoff + hd.shape.start,
			             "shape %s has more than 2^63 - 1 elements", shape);
		}
	}
	uint64_t numel = empty ? 0 : prod, nbytes = 0;
	size_t data_at = hoff + (size_t)hlen, avail = n - data_at;
	if (dt.itemsize) {
		if (!etc_mul_u64(numel, dt.itemsize, &nbytes) || nbytes > (uint64_t)INT64_MAX) {
			shape_str(&hd, shape, sizeof shape);
			return nfail(c, err, ETC_ERR_FORMAT, hoff + hd.shape.start,
			             "shape %s of %s overflows the byte size", shape, descr);
		}
		if (nbytes > avail) {
			shape_str(&hd, shape, sizeof shape);
			return nfail(c, err, ETC_ERR_FORMAT, data_at,
			             "data too short: shape %s of %s needs %llu bytes, the %s has "
			             "%zu after the header",
			             shape, descr, (unsigned long long)nbytes,
			             c->member ? "member" : "file", avail);
		}
		if (nbytes < avail) {
			shape_str(&hd, shape, sizeof shape);
			return nfail(c, err, ETC_ERR_FORMAT, data_at + (size_t)nbytes,
			             "%zu trailing bytes after the %llu bytes of data (shape %s of "
			             "%s)",
			             avail - (size_t)nbytes, (unsigned long long)nbytes, shape,
			             descr);
		}
	}
	if (structured)
		return nfail(c, err, ETC_ERR_UNSUPPORTED, hoff + hd.descr.start,
		             "structured dtype %s is not supported (only plain numeric arrays)",
		             descr);
	if (dt.scalar_type < 0)
		return nfail(c, err, ETC_ERR_UNSUPPORTED, hoff + hd.descr.start, "dtype %s %s",
		             descr, dt.why);
	if (hd.fortran.kind == V_TRUE)
		return nfail(c, err, ETC_ERR_UNSUPPORTED, hoff + hd.fortran.start,
		             "fortran_order is True (column-major data, dtype %s); etcompare "
		             "reads C-order arrays only (save np.ascontiguousarray(a))",
		             descr);

	etc_arena *a = &c->z->arena;
	uint8_t *sizes = etc_arena_alloc(a, hd.ndim ? hd.ndim : 1, 8);
	uint8_t *strides = etc_arena_alloc(a, hd.ndim ? hd.ndim : 1, 8);
	if (!sizes || !strides)
		return etc_fail(err, ETC_ERR_NOMEM, c->z->name, -1, "out of memory");
	uint64_t stride = 1;
	for (uint32_t d = hd.ndim; d-- > 0;) {
		put_le64(sizes + 8 * (size_t)d, (uint64_t)hd.dims[d]);
		put_le64(strides + 8 * (size_t)d, stride);
		/* bounded by prod above; an empty array's strides address nothing */
		if (hd.dims[d] > 1 && !etc_mul_u64(stride, (uint64_t)hd.dims[d], &stride))
			stride = 0;
	}
	etc_tensor *t = &it->tensor;
	t->scalar_type = dt.scalar_type;
	t->ndim = hd.ndim;
	t->nstrides = hd.ndim;
	t->sizes_le = sizes;
	t->strides_le = strides;
	t->numel = numel;
	t->nbytes = nbytes;
	t->data = p + data_at;
	t->offset = c->base >= 0 ? c->base + (int64_t)data_at : -1;
	return 0;
}

/* Validates one .npy; an unsupported array keeps its error instead of failing. */
static int add_array(const npy_ctx *c, npz_item *it, etc_error *err)
{
	etc_error e;
	etc_error_clear(&e);
	int rc = load_npy(c, it, &e);
	if (rc == ETC_ERR_UNSUPPORTED) {
		it->unsupported = etc_arena_alloc(&c->z->arena, 1, sizeof *it->unsupported);
		if (!it->unsupported)
			return etc_fail(err, ETC_ERR_NOMEM, c->z->name, -1, "out of memory");
		*it->unsupported = e;
		return 0;
	}
	if (rc < 0 && err)
		*err = e;
	return rc;
}

/* ---- the file ----------------------------------------------------------- */

static int load_single(etc_npz *z, const uint8_t *d, size_t n, etc_error *err)
{
	/* the array is named after the file: last path component without ".npy" */
	const char *base = strrchr(z->name, '/');
	base = base ? base + 1 : z->name;
	size_t len = strlen(base);
	if (len >= 4 && memcmp(base + len - 4, ".npy", 4) == 0)
		len -= 4;
	z->items = etc_arena_alloc(&z->arena, 1, sizeof *z->items);
	if (!z->items || !(z->items[0].name = etc_arena_strdup(&z->arena, base, len)))
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	z->count = 1;
	npy_ctx c = {.z = z, .member = NULL, .p = d, .n = n, .base = 0};
	return add_array(&c, &z->items[0], err);
}

static int load_members(etc_npz *z, etc_zip *zip, etc_error *err)
{
	size_t count = etc_zip_count(zip);
	if (count > INT_MAX)
		return etc_fail(err, ETC_ERR_LIMIT, z->name, -1, "%zu members is too many", count);
	z->items = etc_arena_alloc(&z->arena, count ? count : 1, sizeof *z->items);
	if (!z->items)
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	for (size_t i = 0; i < count; i++) {
		const etc_zip_entry *e = etc_zip_entry_at(zip, i);
		if (e->name_len < 4 || memcmp(e->name + e->name_len - 4, ".npy", 4) != 0)
			return etc_fail(err, ETC_ERR_FORMAT, z->name, (int64_t)e->header_offset,
			                "member %s is not a .npy array (an .npz holds only "
			                "<name>.npy members)",
			                e->name);
		npz_item *it = &z->items[i];
		if (!(it->name = etc_arena_strdup(&z->arena, e->name, e->name_len - 4)))
			return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
		const uint8_t *p;
		size_t size;
		int64_t at;
		bool pending;
		ETC_TRY(etc_zip_view(zip, e, &p, &size, &at, &pending, err));
		npy_ctx c = {.z = z, .member = e->name, .p = p, .n = size, .base = at};
		ETC_TRY(add_array(&c, it, err));
		it->crc_pending = pending;
		it->crc = e->crc;
		it->member = p;
		it->member_offset = at;
		if (!(it->member_name = etc_arena_strdup(&z->arena, e->name, e->name_len)))
			return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	}
	z->count = count;
	return 0;
}

static int compare_keys(const void *a, const void *b)
{
	return strcmp(((const npz_key *)a)->name, ((const npz_key *)b)->name);
}

static int load(etc_npz *z, const uint8_t *d, size_t n, etc_error *err)
{
	if (n >= 6 && memcmp(d, "\x93NUMPY", 6) == 0) {
		ETC_TRY(load_single(z, d, n, err));
	} else if (n >= 4 && d[0] == 'P' && d[1] == 'K' &&
	           ((d[2] == 3 && d[3] == 4) || (d[2] == 5 && d[3] == 6))) {
		etc_zip *zip;
		ETC_TRY(etc_zip_open(&zip, &z->arena, d, n, z->name, err));
		z->warning = etc_zip_warning(zip);
		uint64_t ratio, budget;
		if (!etc_mul_u64(n, ETC_NPZ_INFLATE_RATIO, &ratio) ||
		    !etc_add_u64(ratio, ETC_ZIP_BUDGET_BASE, &budget))
			budget = UINT64_MAX;
		etc_zip_set_budget(zip, budget);
		int rc = load_members(z, zip, err);
		etc_zip_close(zip);
		ETC_TRY(rc);
	} else {
		char head[16] = "";
		for (size_t i = 0; i < n && i < 4; i++)
			snprintf(head + 3 * i, sizeof head - 3 * i, "%02x%s", d[i],
			         i + 1 < n && i < 3 ? " " : "");
		return etc_fail(err, ETC_ERR_FORMAT, z->name, 0,
		                "neither a .npy file (magic \\x93NUMPY) nor a .npz zip archive "
		                "(%zu bytes, starting %s)",
		                n, n ? head : "<empty>");
	}
	z->sorted = etc_arena_alloc(&z->arena, z->count ? z->count : 1, sizeof *z->sorted);
	if (!z->sorted)
		return etc_fail(err, ETC_ERR_NOMEM, z->name, -1, "out of memory");
	for (size_t i = 0; i < z->count; i++)
		z->sorted[i] = (npz_key){z->items[i].name, i};
	qsort(z->sorted, z->count, sizeof *z->sorted, compare_keys);
	return 0;
}

static int create(etc_npz **out, const char *name, etc_error *err)
{
	etc_npz *z = calloc(1, sizeof *z);
	if (!z)
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	etc_arena_init(&z->arena);
	z->name = etc_arena_strdup(&z->arena, name, strlen(name));
	if (!z->name) {
		free(z);
		return etc_fail(err, ETC_ERR_NOMEM, name, -1, "out of memory");
	}
	*out = z;
	return 0;
}

int etc_npz_open(etc_npz **out, const char *path, etc_error *err)
{
	if (!out || !path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_npz_open: NULL argument");
	*out = NULL;
	etc_npz *z;
	ETC_TRY(create(&z, path, err));
	int rc = etc_map_open(&z->map, path, err);
	if (rc == 0)
		rc = load(z, z->map.data, z->map.size, err);
	if (rc < 0) {
		etc_npz_free(z);
		return rc;
	}
	*out = z;
	return 0;
}

int etc_npz_wrap(etc_npz **out, const void *data, size_t len, const char *name, etc_error *err)
{
	if (!out || (!data && len))
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_npz_wrap: NULL argument");
	*out = NULL;
	etc_npz *z;
	ETC_TRY(create(&z, name ? name : "<memory>", err));
	int rc = load(z, data ? data : (const void *)"", len, err);
	if (rc < 0) {
		etc_npz_free(z);
		return rc;
	}
	*out = z;
	return 0;
}

const char *etc_npz_warning(const etc_npz *z)
{
	return z ? z->warning : NULL;
}

void etc_npz_free(etc_npz *z)
{
	if (!z)
		return;
	etc_map_close(&z->map);
	etc_arena_release(&z->arena);
	free(z);
}

size_t etc_npz_count(const etc_npz *z)
{
	return z ? z->count : 0;
}

const char *etc_npz_name(const etc_npz *z, size_t i)
{
	return z && i < z->count ? z->items[i].name : NULL;
}

int etc_npz_find(const etc_npz *z, const char *name)
{
	if (!z || !name)
		return -1;
	size_t lo = 0, hi = z->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(z->sorted[mid].name, name);
		if (c == 0)
			return (int)z->sorted[mid].index;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int etc_npz_array(const etc_npz *z, size_t i, etc_tensor *out, etc_error *err)
{
	etc_npz_crc check = {0};
	ETC_TRY(etc_npz_array_deferred_(z, i, out, &check, err));
	if (!check.pending)
		return 0;
	return etc_npz_crc_end_(z, &check, etc_crc32(check.crc, out->data, (size_t)out->nbytes),
	                        err);
}

int etc_npz_array_deferred_(const etc_npz *z, size_t i, etc_tensor *out, etc_npz_crc *check,
                            etc_error *err)
{
	if (!z || !out || !check)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_npz_array: NULL argument");
	if (i >= z->count)
		return etc_fail(err, ETC_ERR_USAGE, z->name, -1,
		                "etc_npz_array: index %zu out of range (%zu arrays)", i, z->count);
	const npz_item *it = &z->items[i];
	if (it->unsupported) {
		if (err)
			*err = *it->unsupported;
		return it->unsupported->status;
	}
	etc_npz_crc_begin_(z, i, check);
	*out = it->tensor;
	return 0;
}

void etc_npz_crc_begin_(const etc_npz *z, size_t i, etc_npz_crc *check)
{
	const npz_item *it = &z->items[i];
	memset(check, 0, sizeof *check);
	if (!it->crc_pending)
		return;
	check->pending = true;
	check->item = i;
	/* the header before the data; the data runs to the member's end */
	check->crc =
	    etc_crc32(0, it->member, (size_t)((const uint8_t *)it->tensor.data - it->member));
}

int etc_npz_crc_end_(const etc_npz *z, const etc_npz_crc *check, uint32_t crc, etc_error *err)
{
	if (!check->pending)
		return 0;
	const npz_item *it = &z->items[check->item];
	if (crc != it->crc)
		return etc_fail(err, ETC_ERR_FORMAT, z->name, it->member_offset,
		                "member %s: CRC-32 %08x, expected %08x (the archive is corrupt)",
		                it->member_name, crc, it->crc);
	return 0;
}
