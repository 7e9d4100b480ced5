/*
 * etcompare/sniff.h - what kind of file an input is, told by its content
 * (magic bytes, and for a zip its members), never by its name: so that a
 * file given to the wrong option is named for what it is ("this looks like
 * an ETRecord") instead of failing deep inside the wrong parser.
 */
#ifndef ETCOMPARE_SNIFF_H
#define ETCOMPARE_SNIFF_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etc_file_kind {
	ETC_FILE_UNKNOWN = 0,    /**< none of the below (e.g. a debug buffer) */
	ETC_FILE_ETDUMP,         /**< "ED00" at byte 8 (size-prefixed) or byte 4 (plain) */
	ETC_FILE_PROGRAM,        /**< an ExecuTorch program (.pte): "ET" + 2 digits at byte 4 */
	ETC_FILE_ETRECORD,       /**< a zip with the member ETRECORD_V0 */
	ETC_FILE_TORCHSAVE,      /**< a zip with one <top>/data.pkl member */
	ETC_FILE_NPZ,            /**< a zip whose members are all .npy arrays */
	ETC_FILE_ZIP,            /**< any other zip */
	ETC_FILE_NPY,            /**< one numpy array ("\x93NUMPY") */
	ETC_FILE_PICKLE,         /**< a pickle stream (protocol 2-5), e.g. a legacy torch.save */
	ETC_FILE_LEGACY_PROFILE, /**< a pre-ETDump profiler dump (prof_result.bin) */
	ETC_FILE_JSON,           /**< JSON text */
	ETC_FILE_GZIP,           /**< gzip-compressed data */
	ETC_FILE_BUNDLED_PROGRAM /**< an ExecuTorch BundledProgram (.bpte): "BP" + 2 digits at byte
	                            4 */
} etc_file_kind;

/**
 * The kind of the `len` bytes at `data`. A zip is told apart by its
 * central directory when the whole archive is given, else ETC_FILE_ZIP.
 */
ETC_API int etc_sniff_bytes(const void *data, size_t len);

/**
 * The kind of the file at `path` (read or mapped, then released).
 * @return 0 with *kind set; ETC_ERR_IO when the file cannot be read.
 */
ETC_API int etc_sniff_file(const char *path, int *kind, etc_error *err);

/** "an ETDump", "an ETRecord", "a JSON text", ... for messages. */
ETC_API const char *etc_file_kind_name(int kind);

#ifdef __cplusplus
}
#endif
#endif
