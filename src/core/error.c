/*
 * error.c - filling etc_error and naming statuses.
 */
#include "core/internal.h"
#include "core/text.h"

#include <stdio.h>

void etc_error_clear(etc_error *err)
{
	if (!err)
		return;
	err->status = ETC_OK;
	err->offset = -1;
	err->file[0] = '\0';
	err->message[0] = '\0';
}

void etc_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = src ? strlen(src) : 0;
	if (cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* `s` itself when it fits `cap` bytes, else its head and tail around "..."
 * in `buf`, cut at UTF-8 character boundaries: a long path must leave room
 * for the reason after it, and both ends of a path tell files apart. */
static const char *shorten_middle(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(s);
	if (n < cap)
		return s;
	size_t keep = cap - 4; /* "..." and the NUL */
	size_t head = keep / 2, tail = n - (keep - head);
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
		head--;
	while (tail < n && ((unsigned char)s[tail] & 0xC0) == 0x80)
		tail++;
	snprintf(buf, cap, "%.*s...%s", (int)head, s, s + tail);
	return buf;
}

int etc_fail(etc_error *err, int status, const char *file, int64_t offset, const char *fmt, ...)
{
	if (!err)
		return status;
	char what[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);

	err->status = (etc_status)status;
	err->offset = offset;
	/* At most 255 bytes of path, in `file` and in the message: the reason
	 * stays, and a path already cut (a caller passing on err->file) is not
	 * cut again. */
	char shortpath[sizeof err->file];
	if (file)
		file = shorten_middle(shortpath, sizeof shortpath, file);
	etc_strlcpy(err->file, file ? file : "", sizeof err->file);
	/* Messages quote names from files and are printed: escaped once, here. */
	char raw[sizeof err->message + 64]; /* cut to the message's size when escaped */
	if (file && *file && offset >= 0)
		snprintf(raw, sizeof raw, "%s: byte %lld: %s", file, (long long)offset, what);
	else if (file && *file)
		snprintf(raw, sizeof raw, "%s: %s", file, what);
	else
		snprintf(raw, sizeof raw, "%s", what);
	etc_text_safe(err->message, sizeof err->message, raw);
	return status;
}

const char *etc_status_str(int status)
{
	switch (status) {
	case ETC_OK:
		return "ok";
	case ETC_ERR_USAGE:
		return "usage error";
	case ETC_ERR_IO:
		return "I/O error";
	case ETC_ERR_FORMAT:
		return "format error";
	case ETC_ERR_NOMEM:
		return "out of memory";
	case ETC_ERR_LIMIT:
		return "limit exceeded";
	case ETC_ERR_UNSUPPORTED:
		return "unsupported";
	case ETC_ERR_MISMATCH:
		return "mismatch";
	}
	return "unknown status";
}

const char *etc_version(void)
{
	return ETC_VERSION_STRING;
}
