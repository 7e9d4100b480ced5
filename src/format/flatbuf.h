/*
 * flatbuf.h - a bounds-checked FlatBuffer reader with verifier semantics.
 *
 * Binary layout (all little-endian, offsets relative to the buffer start,
 * which is byte 4 of the file when a size prefix is present):
 *   buffer:  uoffset32 root, char[4] identifier, ...
 *   table:   soffset32 s at T; vtable at T - s
 *   vtable:  uint16 vtable_bytes, uint16 table_bytes, uint16 field[n]
 *            field[i] = 0 when absent, else the field's offset from T
 *   reference field (table, vector, string): uoffset32 u at F; target F + u
 *   vector:  uint32 count, then count elements; a string is a byte vector
 *            followed by a NUL byte.
 *
 * The etc_fb_verify_* functions check every one of these before it is used
 * and fail with the file offset and the table/field being read. After a
 * successful verification the unchecked etc_fb_* accessors are safe on the
 * same buffer.
 */
#ifndef ETC_FLATBUF_H
#define ETC_FLATBUF_H

#include "core/internal.h"

typedef struct etc_fb {
	const uint8_t *buf; /* FlatBuffer proper */
	size_t len;
	size_t base;      /* file offset of buf[0], for messages */
	const char *name; /* file name, for messages */
	etc_error *err;
	uint64_t budget;    /* bytes of structure the verifier may still visit */
	int64_t run, event; /* context for messages, -1 when not inside one */
	/* Byte span [span_lo, span_hi) of the table bodies, vectors and strings
	 * verified since the caller last reset it (vtables are left out: writers
	 * share them across the whole buffer). */
	size_t span_lo, span_hi;
} etc_fb;

typedef struct etc_fb_table {
	size_t pos;      /* table start */
	size_t vt;       /* vtable start */
	uint16_t vt_len; /* vtable size in bytes */
	uint16_t tbl_len;
} etc_fb_table;

/*
 * A reader of buf[0, len), at file offset `base` of file `name`, failing into
 * err, with a budget of `visits` times the buffer's bytes (plus 64 KiB) of
 * structure to verify: a writer visits each byte once, shared tables more.
 */
static inline etc_fb etc_fb_begin(const uint8_t *buf, size_t len, size_t base, const char *name,
                                  etc_error *err, unsigned visits)
{
	uint64_t budget = visits * (uint64_t)len + 65536;
	return (etc_fb){buf, len, base, name, err, budget, -1, -1, 0, 0};
}

/* Fails with "Table.field (run r, event e): message" at buffer position pos. */
int etc_fb_fail(etc_fb *fb, size_t pos, const char *what, const char *fmt, ...) ETC_PRINTF(4, 5);

int etc_fb_verify_table(etc_fb *fb, size_t pos, const char *what, etc_fb_table *out);
/* *pos_out = absolute position of slot's value, or 0 when the field is absent. */
int etc_fb_verify_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, size_t size,
                        const char *what, size_t *pos_out);
/* Follows the uoffset stored at field_pos; *target = its absolute position. */
int etc_fb_verify_ref(etc_fb *fb, size_t field_pos, const char *what, size_t *target);
int etc_fb_verify_vector(etc_fb *fb, size_t vpos, size_t elem_size, const char *what,
                         uint32_t *count);
int etc_fb_verify_string(etc_fb *fb, size_t spos, const char *what);

/* Convenience: verified reference field of a table that points at a
 * table/vector/string; *target = 0 when the field is absent. */
int etc_fb_verify_ref_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, const char *what,
                            size_t *target);

/* --- unchecked accessors, valid only on a verified buffer --- */

static inline etc_fb_table etc_fb_table_at(const uint8_t *buf, size_t pos)
{
	etc_fb_table t;
	t.pos = pos;
	t.vt = (size_t)((int64_t)pos - (int32_t)etc_le32(buf + pos));
	t.vt_len = etc_le16(buf + t.vt);
	t.tbl_len = etc_le16(buf + t.vt + 2);
	return t;
}

static inline size_t etc_fb_field(const uint8_t *buf, const etc_fb_table *t, unsigned slot)
{
	size_t at = 4 + 2 * (size_t)slot;
	if (at + 2 > t->vt_len)
		return 0;
	uint16_t off = etc_le16(buf + t->vt + at);
	return off ? t->pos + off : 0;
}

static inline size_t etc_fb_deref(const uint8_t *buf, size_t field_pos)
{
	return field_pos + etc_le32(buf + field_pos);
}

/* Position of a reference field's target, or 0 if absent. */
static inline size_t etc_fb_ref(const uint8_t *buf, const etc_fb_table *t, unsigned slot)
{
	size_t f = etc_fb_field(buf, t, slot);
	return f ? etc_fb_deref(buf, f) : 0;
}

static inline etc_str etc_fb_str(const uint8_t *buf, size_t spos)
{
	etc_str s;
	if (!spos) {
		s.ptr = "";
		s.len = 0;
	} else {
		s.len = etc_le32(buf + spos);
		s.ptr = (const char *)buf + spos + 4;
	}
	return s;
}

#endif
