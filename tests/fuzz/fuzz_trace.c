/*
 * fuzz_trace.c - the Chrome/Perfetto trace (--trace) of one or two fuzzed
 * ETDumps at each source time scale. The JSON written is checked: valid
 * UTF-8, no raw control character, brackets and braces balanced outside
 * strings (a name that broke out of its string would unbalance them).
 *
 * Input: as fuzz_etdump (uint32 n, ETDump, then bytes read as a second
 * ETDump).
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_dumps.h"
#include "fuzz_outputs.h"

static void check_json(const char *p, size_t n)
{
	long depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = fuzz_utf8((const unsigned char *)p + i, n - i, &cp);
		if (!len)
			fuzz_fail("trace: invalid UTF-8", p, n, i);
		if (cp < 0x20 && cp != '\n')
			fuzz_fail("trace: raw control character", p, n, i);
		if (in_str) {
			if (cp == '\\')
				len += i + 1 < n ? 1 : 0;
			else if (cp == '"')
				in_str = false;
		} else if (cp == '"') {
			in_str = true;
		} else if (cp == '{' || cp == '[') {
			depth++;
		} else if (cp == '}' || cp == ']') {
			if (--depth < 0)
				fuzz_fail("trace: unbalanced", p, n, i);
		}
		i += len;
	}
	if (depth != 0 || in_str)
		fuzz_fail("trace: unbalanced at the end", p, n, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_run r;
	if (fuzz_run_open(&r, data, size, false) < 0) {
		fuzz_run_close(&r);
		return 0;
	}
	etc_etdump *second = NULL;
	etc_error err;
	const etc_etdump *dumps[2] = {r.dump, NULL};
	size_t n = 1;
	if (etc_etdump_wrap(&second, r.buf_bytes, r.buf_len, "fuzz2.etdp", &err) == 0)
		dumps[n++] = second;
	static const int scales[] = {ETC_TIME_NS, ETC_TIME_US, ETC_TIME_MS, ETC_TIME_S,
	                             ETC_TIME_CYCLES};
	etc_trace_options opt;
	etc_trace_options_init(&opt);
	opt.source_time_scale = scales[size % 5];
	fuzz_text t;
	if (fuzz_text_open(&t)) {
		etc_trace_stats st;
		int rc = etc_trace_write(t.f, dumps, n, &opt, &st, &err);
		fuzz_text_close(&t);
		if (rc == 0)
			check_json(t.p, t.n);
		else
			fuzz_check_terminal(err.message, strlen(err.message));
		free(t.p);
	}
	etc_etdump_free(second);
	fuzz_run_close(&r);
	return 0;
}
