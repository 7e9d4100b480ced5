/*
 * flatbuf.c - verification of FlatBuffer structure (see flatbuf.h for the
 * layout). Every check is done on 64-bit sizes so no sum can wrap.
 */
#include "format/flatbuf.h"

#include <stdio.h>

int etc_fb_fail(etc_fb *fb, size_t pos, const char *what, const char *fmt, ...)
{
	char msg[512], ctx[96] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (fb->run >= 0 && fb->event >= 0)
		snprintf(ctx, sizeof ctx, " (run %lld, event %lld)", (long long)fb->run,
		         (long long)fb->event);
	else if (fb->run >= 0)
		snprintf(ctx, sizeof ctx, " (run %lld)", (long long)fb->run);
	return etc_fail(fb->err, ETC_ERR_FORMAT, fb->name, (int64_t)(fb->base + pos), "%s%s: %s",
	                what, ctx, msg);
}

static int charge(etc_fb *fb, size_t pos, const char *what, uint64_t bytes)
{
	if (bytes > fb->budget)
		return etc_fail(fb->err, ETC_ERR_LIMIT, fb->name, (int64_t)(fb->base + pos),
		                "%s: the buffer references the same data more often than any "
		                "writer does (verification budget exhausted)",
		                what);
	fb->budget -= bytes;
	return 0;
}

static void widen_span(etc_fb *fb, size_t lo, size_t hi)
{
	if (lo < fb->span_lo)
		fb->span_lo = lo;
	if (hi > fb->span_hi)
		fb->span_hi = hi;
}

int etc_fb_verify_table(etc_fb *fb, size_t pos, const char *what, etc_fb_table *out)
{
	if (pos > fb->len || fb->len - pos < 4)
		return etc_fb_fail(fb, pos, what, "table starts outside the buffer (%zu bytes)",
		                   fb->len);
	ETC_TRY(charge(fb, pos, what, 4));
	int64_t vt = (int64_t)pos - (int32_t)etc_le32(fb->buf + pos);
	if (vt < 0 || (uint64_t)vt > fb->len || fb->len - (uint64_t)vt < 4)
		return etc_fb_fail(fb, pos, what, "vtable at %lld lies outside the buffer",
		                   (long long)vt + (long long)fb->base);
	uint16_t vt_len = etc_le16(fb->buf + vt);
	uint16_t tbl_len = etc_le16(fb->buf + vt + 2);
	if (vt_len < 4 || (vt_len & 1))
		return etc_fb_fail(fb, pos, what, "vtable size %u is invalid", vt_len);
	if ((uint64_t)vt + vt_len > fb->len)
		return etc_fb_fail(fb, pos, what, "vtable of %u bytes runs past the buffer end",
		                   vt_len);
	if (tbl_len < 4 || (uint64_t)pos + tbl_len > fb->len)
		return etc_fb_fail(fb, pos, what, "table of %u bytes runs past the buffer end",
		                   tbl_len);
	widen_span(fb, pos, pos + tbl_len);
	out->pos = pos;
	out->vt = (size_t)vt;
	out->vt_len = vt_len;
	out->tbl_len = tbl_len;
	return 0;
}

int etc_fb_verify_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, size_t size,
                        const char *what, size_t *pos_out)
{
	*pos_out = 0;
	size_t at = 4 + 2 * (size_t)slot;
	if (at + 2 > t->vt_len)
		return 0;
	uint16_t off = etc_le16(fb->buf + t->vt + at);
	if (!off)
		return 0;
	if ((size_t)off + size > t->tbl_len)
		return etc_fb_fail(fb, t->pos, what,
		                   "field at table offset %u (%zu bytes) lies outside its table "
		                   "of %u bytes",
		                   off, size, t->tbl_len);
	*pos_out = t->pos + off;
	return 0;
}

int etc_fb_verify_ref(etc_fb *fb, size_t field_pos, const char *what, size_t *target)
{
	uint64_t u = etc_le32(fb->buf + field_pos);
	uint64_t to = (uint64_t)field_pos + u;
	if (u == 0 || to >= fb->len)
		return etc_fb_fail(fb, field_pos, what, "offset %llu points outside the buffer",
		                   (unsigned long long)u);
	*target = (size_t)to;
	return 0;
}

int etc_fb_verify_vector(etc_fb *fb, size_t vpos, size_t elem_size, const char *what,
                         uint32_t *count)
{
	if (vpos > fb->len || fb->len - vpos < 4)
		return etc_fb_fail(fb, vpos, what, "vector length lies outside the buffer");
	uint32_t n = etc_le32(fb->buf + vpos);
	uint64_t bytes = (uint64_t)n * elem_size; /* < 2^32 * 2^4: cannot wrap */
	if (bytes > fb->len - vpos - 4)
		return etc_fb_fail(fb, vpos, what,
		                   "vector of %u elements (%llu bytes) runs past the buffer end", n,
		                   (unsigned long long)bytes);
	ETC_TRY(charge(fb, vpos, what, 4 + bytes));
	widen_span(fb, vpos, vpos + 4 + (size_t)bytes);
	*count = n;
	return 0;
}

int etc_fb_verify_string(etc_fb *fb, size_t spos, const char *what)
{
	uint32_t n;
	if (spos > fb->len || fb->len - spos < 4)
		return etc_fb_fail(fb, spos, what, "string length lies outside the buffer");
	n = etc_le32(fb->buf + spos);
	if ((uint64_t)n + 1 > fb->len - spos - 4)
		return etc_fb_fail(fb, spos, what, "string of %u bytes runs past the buffer end",
		                   n);
	if (fb->buf[spos + 4 + n] != 0)
		return etc_fb_fail(fb, spos, what, "string of %u bytes is not NUL-terminated", n);
	widen_span(fb, spos, spos + 5 + (size_t)n);
	return charge(fb, spos, what, 5 + (uint64_t)n);
}

int etc_fb_verify_ref_field(etc_fb *fb, const etc_fb_table *t, unsigned slot, const char *what,
                            size_t *target)
{
	size_t f;
	*target = 0;
	ETC_TRY(etc_fb_verify_field(fb, t, slot, 4, what, &f));
	if (f)
		ETC_TRY(etc_fb_verify_ref(fb, f, what, target));
	return 0;
}
