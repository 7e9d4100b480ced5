/*
 * fuzz_dumps.h - an ETDump and debug buffer from one fuzz input, as the
 * inspector sees them (input: uint32 n, n bytes of ETDump, the debug
 * buffer; fuzz.h: fuzz_split). For the report, trace and perfdiff targets.
 */
#ifndef ETC_FUZZ_DUMPS_H
#define ETC_FUZZ_DUMPS_H

#include "fuzz.h"

#include <etcompare/etcompare.h>

typedef struct fuzz_run {
	uint8_t *dump_bytes, *buf_bytes;
	size_t dump_len, buf_len;
	etc_etdump *dump;
	etc_debug_buffer *buf;
	etc_inspector *insp;
} fuzz_run;

/* 0 when the ETDump was read (the inspector may still be NULL), else -1. */
static inline int fuzz_run_open(fuzz_run *r, const uint8_t *data, size_t size, bool inspect)
{
	memset(r, 0, sizeof *r);
	etc_error err;
	if (fuzz_split(data, size, &r->dump_bytes, &r->dump_len, &r->buf_bytes, &r->buf_len) < 0)
		return -1;
	if (etc_etdump_wrap(&r->dump, r->dump_bytes, r->dump_len, "fuzz.etdp", &err) < 0 ||
	    etc_debug_buffer_wrap(&r->buf, r->buf_bytes, r->buf_len, "fuzz.bin", &err) < 0)
		return -1;
	if (inspect) {
		etc_inspector_options opt;
		etc_inspector_options_init(&opt);
		opt.strict = size & 1;
		(void)etc_inspector_create(&r->insp, r->dump, r->buf, &opt, &err);
	}
	return 0;
}

static inline void fuzz_run_close(fuzz_run *r)
{
	etc_inspector_free(r->insp);
	etc_debug_buffer_free(r->buf);
	etc_etdump_free(r->dump);
	free(r->dump_bytes);
	free(r->buf_bytes);
}

/* A file path private to this process, in TMPDIR; made once. */
static inline const char *fuzz_tmp_dir(void)
{
	static char dir[256];
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/etc-fuzz-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir))
			abort();
	}
	return dir;
}

#endif
