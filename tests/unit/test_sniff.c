/*
 * test_sniff.c - etc_sniff_bytes on the magic of every kind, and on bytes
 * that only start like one (a debug buffer of floats is never JSON, a
 * short or binary "{" is not JSON, "ED00" must sit at byte 8 or 4).
 */
#include "check.h"
#include "etcompare/sniff.h"

#include <stdint.h>
#include <string.h>

static int sniff(const char *s, size_t n)
{
	return etc_sniff_bytes(s, n);
}

#define SNIFF(lit) sniff(lit, sizeof lit - 1)

int main(void)
{
	CHECK(SNIFF("\x10\x00\x00\x00\x0c\x00\x00\x00"
	            "ED00rest") == ETC_FILE_ETDUMP);
	CHECK(SNIFF("\x0c\x00\x00\x00"
	            "ED00rest") == ETC_FILE_ETDUMP);
	CHECK(SNIFF("\x0c\x00\x00\x00"
	            "ED0") == ETC_FILE_UNKNOWN);
	CHECK(SNIFF("\x20\x00\x00\x00"
	            "ET12\x00\x00\x00\x00") == ETC_FILE_PROGRAM);
	CHECK(SNIFF("\x93NUMPY\x01\x00") == ETC_FILE_NPY);
	CHECK(SNIFF("\x1f\x8b\x08\x00") == ETC_FILE_GZIP);
	CHECK(SNIFF("\x80\x02}q\x00.") == ETC_FILE_PICKLE);
	CHECK(SNIFF("\x80\x06}") == ETC_FILE_UNKNOWN); /* no protocol 6 */
	/* a zip whose central directory cannot be read is still a zip */
	CHECK(SNIFF("PK\x03\x04garbage") == ETC_FILE_ZIP);
	CHECK(SNIFF("PK\x00\x00garbage") == ETC_FILE_UNKNOWN);

	CHECK(SNIFF("{\"version\": 0}") == ETC_FILE_JSON);
	CHECK(SNIFF("\xef\xbb\xbf  \n[1, 2]") == ETC_FILE_JSON);
	CHECK(SNIFF("[{\"a\": 1}]") == ETC_FILE_JSON);
	CHECK(SNIFF("{}") == ETC_FILE_JSON);
	CHECK(SNIFF("{x") == ETC_FILE_UNKNOWN);
	CHECK(SNIFF("{") == ETC_FILE_UNKNOWN);
	CHECK(SNIFF("{\"a\x00\x80\x3f") == ETC_FILE_UNKNOWN); /* binary after the brace */
	float floats[4] = {1.0f, 2.0f, 3.0f, 4.0f};
	memcpy(floats, "{\x00\x80\x3f", 4);
	CHECK(etc_sniff_bytes(floats, sizeof floats) == ETC_FILE_UNKNOWN);

	/* a legacy profiler block header: a NUL-padded name, prof_ver 1 */
	uint8_t legacy[64] = {0};
	memcpy(legacy, "Execute", 7);
	legacy[32] = 1;
	CHECK(etc_sniff_bytes(legacy, sizeof legacy) == ETC_FILE_LEGACY_PROFILE);
	legacy[32] = 2;
	CHECK(etc_sniff_bytes(legacy, sizeof legacy) == ETC_FILE_UNKNOWN);
	legacy[32] = 1;
	legacy[20] = 'x'; /* bytes after the name's NUL */
	CHECK(etc_sniff_bytes(legacy, sizeof legacy) == ETC_FILE_UNKNOWN);
	CHECK(etc_sniff_bytes(legacy, 63) == ETC_FILE_UNKNOWN);

	CHECK(etc_sniff_bytes(NULL, 10) == ETC_FILE_UNKNOWN);
	CHECK(etc_sniff_bytes("", 0) == ETC_FILE_UNKNOWN);
	CHECK(strcmp(etc_file_kind_name(ETC_FILE_ETRECORD), "an ETRecord") == 0);
	CHECK(strcmp(etc_file_kind_name(99), "a file of unknown kind") == 0);
	int kind = -1;
	etc_error err;
	CHECK(etc_sniff_file("/nonexistent/file", &kind, &err) == ETC_ERR_IO &&
	      kind == ETC_FILE_UNKNOWN);
	return check_report("test_sniff");
}
