/*
 * sniff.c - tells the kind of an input file by its content (see
 * include/etcompare/sniff.h). Only magic bytes and, for a zip, the names of
 * its members are looked at: nothing is parsed beyond that.
 */
#include "etcompare/sniff.h"
#include "core/internal.h"
#include "format/zipread.h"

#include <string.h>

#define LEGACY_HEADER 64
#define LEGACY_NAME   32

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* A zip told apart by its members; ETC_FILE_ZIP when it cannot be opened. */
static int sniff_zip(const uint8_t *data, size_t len)
{
	etc_arena arena;
	etc_arena_init(&arena);
	etc_zip *z = NULL;
	etc_error err;
	int kind = ETC_FILE_ZIP;
	if (etc_zip_open(&z, &arena, data, len, "zip", &err) == 0) {
		size_t n = etc_zip_count(z), npy = 0, pkl = 0;
		bool record = false;
		for (size_t i = 0; i < n; i++) {
			const etc_zip_entry *e = etc_zip_entry_at(z, i);
			record |= strcmp(e->name, "ETRECORD_V0") == 0;
			npy += has_suffix(e->name, e->name_len, ".npy");
			pkl += has_suffix(e->name, e->name_len, "/data.pkl");
		}
		if (record)
			kind = ETC_FILE_ETRECORD;
		else if (pkl == 1)
			kind = ETC_FILE_TORCHSAVE;
		else if (n && npy == n)
			kind = ETC_FILE_NPZ;
		etc_zip_close(z);
	}
	etc_arena_release(&arena);
	return kind;
}

/*
 * JSON text: an object or an array opening, and only text in the first
 * bytes (a debug buffer of floats may well start with the byte '{').
 */
static bool is_json(const uint8_t *p, size_t len)
{
	size_t n = len < 256 ? len : 256, i = 0;
	if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
		i = 3;
	for (size_t k = i; k < n; k++)
		if (p[k] < 0x20 && p[k] != '\t' && p[k] != '\n' && p[k] != '\r')
			return false;
	while (i < n && strchr(" \t\r\n", p[i]))
		i++;
	if (i >= n || (p[i] != '{' && p[i] != '['))
		return false;
	char open = (char)p[i++];
	while (i < n && strchr(" \t\r\n", p[i]))
		i++;
	if (i >= n)
		return false; /* a brace and nothing after it in the first bytes */
	if (open == '{')
		return p[i] == '"' || p[i] == '}';
	return strchr("{[\"-0123456789tfn]", p[i]) != NULL;
}

/* The first block header of a prof_result.bin: a NUL-padded name, prof_ver 1. */
static bool is_legacy_profile(const uint8_t *p, size_t len)
{
	if (len < LEGACY_HEADER || etc_le32(p + LEGACY_NAME) != 1)
		return false;
	size_t k = 0;
	while (k < LEGACY_NAME && p[k] >= 0x20 && p[k] < 0x7F)
		k++;
	if (k == 0 || k == LEGACY_NAME)
		return false;
	for (; k < LEGACY_NAME; k++)
		if (p[k] != 0)
			return false;
	return true;
}

int etc_sniff_bytes(const void *data, size_t len)
{
	const uint8_t *p = data;
	if (!p)
		return ETC_FILE_UNKNOWN;
	if (len >= 12 && memcmp(p + 8, "ED00", 4) == 0)
		return ETC_FILE_ETDUMP;
	if (len >= 8 && memcmp(p + 4, "ED00", 4) == 0)
		return ETC_FILE_ETDUMP;
	if (len >= 8 && p[4] == 'E' && p[5] == 'T' && p[6] >= '0' && p[6] <= '9' && p[7] >= '0' &&
	    p[7] <= '9')
		return ETC_FILE_PROGRAM;
	if (len >= 8 && p[4] == 'B' && p[5] == 'P' && p[6] >= '0' && p[6] <= '9' && p[7] >= '0' &&
	    p[7] <= '9')
		return ETC_FILE_BUNDLED_PROGRAM;
	if (len >= 4 && p[0] == 'P' && p[1] == 'K' &&
	    ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6)))
		return sniff_zip(p, len);
	if (len >= 6 && memcmp(p, "\x93NUMPY", 6) == 0)
		return ETC_FILE_NPY;
	if (len >= 2 && p[0] == 0x1F && p[1] == 0x8B)
		return ETC_FILE_GZIP;
	if (len >= 3 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5)
		return ETC_FILE_PICKLE;
	if (is_legacy_profile(p, len))
		return ETC_FILE_LEGACY_PROFILE;
	if (is_json(p, len))
		return ETC_FILE_JSON;
	return ETC_FILE_UNKNOWN;
}

int etc_sniff_file(const char *path, int *kind, etc_error *err)
{
	etc_map m;
	if (!kind)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_sniff_file: NULL kind");
	*kind = ETC_FILE_UNKNOWN;
	if (!path)
		return etc_fail(err, ETC_ERR_USAGE, NULL, -1, "etc_sniff_file: NULL path");
	ETC_TRY(etc_map_open(&m, path, err));
	*kind = etc_sniff_bytes(m.data, m.size);
	etc_map_close(&m);
	return 0;
}

const char *etc_file_kind_name(int kind)
{
	static const char *const names[] = {"a file of unknown kind",
	                                    "an ETDump",
	                                    "an ExecuTorch program (.pte)",
	                                    "an ETRecord",
	                                    "a torch.save archive",
	                                    "an .npz archive",
	                                    "a zip archive",
	                                    "an .npy array",
	                                    "a pickle stream",
	                                    "a legacy profiler dump",
	                                    "a JSON text",
	                                    "gzip-compressed data",
	                                    "an ExecuTorch BundledProgram (.bpte)"};
	return kind >= 0 && kind <= ETC_FILE_BUNDLED_PROGRAM ? names[kind] : names[0];
}
