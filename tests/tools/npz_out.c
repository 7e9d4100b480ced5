/*
 * npz_out.c - a minimal .npz writer for the test tools (npz_out.h): every
 * member STORED with its CRC-32, no zip64 (the tools write small files).
 */
#include "npz_out.h"
#include "etcompare/tensor.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct member {
	char *name;
	uint32_t crc, size, offset;
} member;

struct npz_out {
	FILE *f;
	member *m;
	size_t n, cap;
	uint32_t at;
	int failed;
};

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void out(npz_out *z, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, z->f) != n)
		z->failed = 1;
	z->at += (uint32_t)n;
}

npz_out *npz_out_open(const char *path)
{
	npz_out *z = calloc(1, sizeof *z);
	if (!z)
		return NULL;
	z->f = fopen(path, "wb");
	if (!z->f) {
		free(z);
		return NULL;
	}
	return z;
}

static const char *descr(int dtype)
{
	switch (dtype) {
	case ETC_DOUBLE:
		return "<f8";
	case ETC_FLOAT:
		return "<f4";
	case ETC_BYTE:
		return "|u1";
	case ETC_CHAR:
		return "|i1";
	case ETC_SHORT:
		return "<i2";
	case ETC_INT:
		return "<i4";
	case ETC_LONG:
		return "<i8";
	case ETC_BOOL:
		return "|b1";
	default:
		return NULL;
	}
}

int npz_out_add(npz_out *z, const char *name, const etc_reftensor *t)
{
	const char *d = descr(t->dtype);
	if (!d)
		return -1;
	char hdr[1024];
	int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", d);
	for (uint32_t i = 0; i < t->rank && n < 900; i++)
		n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%" PRId64 "%s", t->shape[i],
		              t->rank == 1 ? "," : (i + 1 < t->rank ? ", " : ""));
	n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
	/* magic(6) + version(2) + length(2) + header, padded with spaces to 64, '\n' last */
	size_t total = 10 + (size_t)n + 1;
	size_t pad = (64 - total % 64) % 64;
	memset(hdr + n, ' ', pad);
	n += (int)pad;
	hdr[n++] = '\n';
	uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
	put16(pre + 8, (uint32_t)n);
	size_t bytes = t->numel * etc_scalar_type_size(t->dtype);
	uint32_t crc = (uint32_t)crc32(0, pre, 10);
	crc = (uint32_t)crc32(crc, (const uint8_t *)hdr, (uInt)n);
	crc = (uint32_t)crc32(crc, t->data, (uInt)bytes);
	uint32_t size = (uint32_t)(10 + (size_t)n + bytes);

	if (z->n == z->cap) {
		size_t cap = z->cap ? 2 * z->cap : 16;
		member *m = realloc(z->m, cap * sizeof *m);
		if (!m)
			return -1;
		z->m = m;
		z->cap = cap;
	}
	size_t nl = strlen(name) + 4;
	member *m = &z->m[z->n++];
	m->name = malloc(nl + 1);
	if (!m->name)
		return -1;
	snprintf(m->name, nl + 1, "%s.npy", name);
	m->crc = crc;
	m->size = size;
	m->offset = z->at;

	uint8_t lh[30] = {0x50, 0x4b, 0x03, 0x04, 20, 0};
	put32(lh + 14, crc);
	put32(lh + 18, size);
	put32(lh + 22, size);
	put16(lh + 26, (uint32_t)nl);
	out(z, lh, 30);
	out(z, m->name, nl);
	out(z, pre, 10);
	out(z, hdr, (size_t)n);
	out(z, t->data, bytes);
	return z->failed ? -1 : 0;
}

int npz_out_close(npz_out *z)
{
	uint32_t cd = z->at;
	for (size_t i = 0; i < z->n; i++) {
		member *m = &z->m[i];
		size_t nl = strlen(m->name);
		uint8_t ch[46] = {0x50, 0x4b, 0x01, 0x02, 20, 0, 20, 0};
		put32(ch + 16, m->crc);
		put32(ch + 20, m->size);
		put32(ch + 24, m->size);
		put16(ch + 28, (uint32_t)nl);
		put32(ch + 42, m->offset);
		out(z, ch, 46);
		out(z, m->name, nl);
	}
	uint8_t end[22] = {0x50, 0x4b, 0x05, 0x06};
	put16(end + 8, (uint32_t)z->n);
	put16(end + 10, (uint32_t)z->n);
	put32(end + 12, z->at - cd);
	put32(end + 16, cd);
	out(z, end, 22);
	int rc = z->failed ? -1 : 0;
	if (fclose(z->f) != 0)
		rc = -1;
	for (size_t i = 0; i < z->n; i++)
		free(z->m[i].name);
	free(z->m);
	free(z);
	return rc;
}
