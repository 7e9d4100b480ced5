/*
 * test_legacy.c - the legacy profile parser on memory buffers: accessors,
 * durations and framework tax against hand-computed values, then every
 * truncation and a deterministic corruption sweep (each byte of a small dump
 * set to several values) that must end in a clean status, never a crash.
 */
#include "etcompare/legacy.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>

static size_t put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return 4;
}

static size_t put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
	return 8;
}

/* A block with n events (name, chain 0, instr i, start s, end e), one
 * allocator "pool" id 5 and one allocation of 48 bytes from it. */
static size_t write_block(uint8_t *p, const char *name, int n, const uint64_t *se)
{
	size_t o = 0;
	memset(p, 0, 64);
	memcpy(p, name, strlen(name));
	o = 32;
	o += put32(p + o, 1);
	o += put32(p + o, (uint32_t)n);
	o += put32(p + o, (uint32_t)n);
	o += put32(p + o, 1);
	o += put32(p + o, 1);
	o += put32(p + o, 1);
	o += put32(p + o, 1);
	o = 64;
	static const char *const names[] = {"Method::execute", "native_call_a", "native_call_b"};
	for (int i = 0; i < n; i++) {
		memset(p + o, 0, 56);
		memcpy(p + o, names[i % 3], strlen(names[i % 3]));
		put32(p + o + 32, (uint32_t)(i == 0 ? -1 : 0));
		put32(p + o + 36, (uint32_t)i);
		put64(p + o + 40, se[2 * i]);
		put64(p + o + 48, se[2 * i + 1]);
		o += 56;
	}
	memset(p + o, 0, 40);
	memcpy(p + o, "pool", 4);
	put64(p + o + 32, 5);
	o += 40;
	put32(p + o, 5);
	put32(p + o + 4, 48);
	return o + 8;
}

int main(void)
{
	uint8_t buf[2048];
	const uint64_t it0[] = {0, 10000000, 1000, 3001000, 4000000, 6500000};
	const uint64_t it1[] = {0, 8000000, 1000, 2001000, 4000000, 5000000};
	size_t n = write_block(buf, "Execute", 3, it0);
	n += write_block(buf + n, "Execute", 3, it1);
	CHECK(n == 2 * (64 + 3 * 56 + 40 + 8));

	etc_error err;
	etc_legacy_profile *p = NULL;
	CHECK(etc_legacy_profile_parse_buffer(&p, buf, n, "mem", &err) == 0);
	if (p) {
		CHECK(etc_legacy_profile_block_count(p) == 1);
		const etc_legacy_block *b = etc_legacy_profile_block(p, 0);
		CHECK_STR(b->name.ptr, "Execute");
		CHECK(b->iteration_count == 2);
		CHECK(b->iterations[1].offset == 280 && b->iterations[1].index == 1);
		CHECK(b->iterations[0].event_count == 3);
		CHECK_STR(b->iterations[0].events[1].name.ptr, "native_call_a");
		CHECK(b->iterations[0].events[0].chain_idx == -1);
		CHECK(b->iterations[1].allocations[0].size == 48);
		CHECK_STR(etc_legacy_profile_allocator(p, 5), "pool");
		CHECK(etc_legacy_profile_allocator(p, 4) == NULL);
		CHECK_DOUBLE_EXACT(etc_legacy_duration(&b->iterations[0].events[1], ETC_LEGACY_NS),
		                   3.0);
		CHECK_DOUBLE_EXACT(etc_legacy_duration(&b->iterations[0].events[1], ETC_LEGACY_US),
		                   3000.0);
		CHECK_DOUBLE_EXACT(etc_legacy_duration(&b->iterations[0].events[1], ETC_LEGACY_MS),
		                   3000000.0);
		double ex[2], k[2], tax[2];
		CHECK(etc_legacy_framework_tax(b, ETC_LEGACY_NS, ex, k, tax));
		/* it0: exec 10 ms, kernels 3 + 2.5; it1: 8 ms, 2 + 1 */
		CHECK_DOUBLE_EXACT(ex[0], 10.0);
		CHECK_DOUBLE_EXACT(k[0], 5.5);
		CHECK_DOUBLE_EXACT(tax[0], 0.45 * 100);
		CHECK_DOUBLE_EXACT(ex[1], 8.0);
		CHECK_DOUBLE_EXACT(tax[1], 0.625 * 100);
	}
	etc_legacy_profile_free(p);
	etc_legacy_profile_free(NULL);

	/* Every truncation: an error, or a valid shorter dump at the boundary. */
	for (size_t len = 0; len < n; len++) {
		p = NULL;
		int rc = etc_legacy_profile_parse_buffer(&p, buf, len, "mem", &err);
		if (len == n / 2) {
			CHECK(rc == 0);
		} else {
			CHECK(rc == ETC_ERR_FORMAT && p == NULL);
			CHECK(strstr(err.message, "mem: byte ") == err.message);
		}
		etc_legacy_profile_free(p);
	}

	/* Corruption sweep: any status is fine, a crash or a leak is not (ASan). */
	static const uint8_t vals[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	uint8_t *copy = malloc(n);
	int ok = 0, bad = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t v = 0; v < sizeof vals; v++) {
			memcpy(copy, buf, n);
			copy[i] = vals[v];
			p = NULL;
			int rc = etc_legacy_profile_parse_buffer(&p, copy, n, "mem", &err);
			if (rc == 0) {
				ok++;
				for (size_t b = 0; b < etc_legacy_profile_block_count(p); b++) {
					const etc_legacy_block *bl = etc_legacy_profile_block(p, b);
					double ex[2], k[2], tax[2];
					if (bl->iteration_count <= 2)
						etc_legacy_framework_tax(bl, ETC_LEGACY_NS, ex, k,
						                         tax);
				}
				FILE *devnull = fopen("/dev/null", "w");
				CHECK(etc_report_legacy(devnull, p, ETC_LEGACY_NS, &err) == 0);
				fclose(devnull);
			} else {
				bad++;
				CHECK(rc < 0 && err.message[0] != '\0');
			}
			etc_legacy_profile_free(p);
		}
	free(copy);
	CHECK(ok > 0 && bad > 0);
	return check_report("test_legacy");
}
