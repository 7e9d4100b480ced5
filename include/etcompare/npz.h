/*
 * etcompare/npz.h - reading numpy arrays (reference outputs and reference
 * intermediates) without Python: an `.npz` archive as written by
 * numpy.savez / numpy.savez_compressed, or a single `.npy` file.
 *
 * An `.npz` is a zip whose members are `<name>.npy` files; each `.npy` is
 *
 *   "\x93NUMPY" major minor   magic and format version (1.0, 2.0 or 3.0)
 *   header length             uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   header                    a Python dict literal, latin-1 (1.0, 2.0) or
 *                             UTF-8 (3.0), e.g.
 *                             {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *                             padded with spaces and a final '\n'
 *   data                      the elements, C order, exactly
 *                             product(shape) x itemsize bytes
 *
 * Everything is checked when the file is opened: the zip (central directory
 * against local headers, CRC-32 of every member), member names (each must
 * end in ".npy"), the magic, version and header length, the header's grammar
 * (Python literal syntax: strings, decimal integers, True/False/None, tuples,
 * lists, dicts; exactly the keys 'descr', 'fortran_order' and 'shape', each
 * once), the shape (non-negative entries, product and byte size without
 * overflow) and the data size (neither short nor followed by extra bytes).
 * A corrupt array fails the open (ETC_ERR_FORMAT). A well-formed array that
 * etcompare cannot represent - big-endian or byte-order-less multi-byte
 * dtypes, fortran_order True, object, string, complex, datetime or
 * structured dtypes - does not: the open succeeds and etc_npz_array reports
 * ETC_ERR_UNSUPPORTED for that array, naming its descr, so the other arrays
 * stay usable.
 *
 * Array names are the member names without ".npy" ("12", "12,13" for the
 * debug-handle naming of reference intermediates). A single `.npy` holds one
 * array, named after the file: the last path component without ".npy".
 *
 * Stored (uncompressed) members are used in place: tensor data points into
 * the mapped file. Deflated members (savez_compressed) are inflated into
 * memory owned by the etc_npz, at most ETC_NPZ_INFLATE_RATIO times the
 * archive size plus 1 MiB in all (deflate cannot exceed 1032:1, so only a
 * forged size hits the bound, with ETC_ERR_LIMIT).
 *
 * An etc_npz is immutable after the open; its accessors may be called from
 * several threads at once.
 */
#ifndef ETCOMPARE_NPZ_H
#define ETCOMPARE_NPZ_H

#include "common.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most dimensions an array may have (as numpy 2); more is ETC_ERR_LIMIT. */
#define ETC_NPZ_MAX_NDIM 64
/** Inflation bound for deflated members, as a multiple of the archive size. */
#define ETC_NPZ_INFLATE_RATIO 1040u

/** An opened `.npz` archive or `.npy` file. */
typedef struct etc_npz etc_npz;

/**
 * Opens and maps the `.npz` (zip) or single `.npy` at `path` (told apart by
 * content: the `.npy` magic or a zip signature) and validates every array.
 * @param out  receives the object on success; release with etc_npz_free
 * @return 0 or a negative etc_status: ETC_ERR_IO (cannot read), ETC_ERR_FORMAT
 *         (neither format, corrupt zip or array), ETC_ERR_LIMIT, ETC_ERR_NOMEM
 */
ETC_API int etc_npz_open(etc_npz **out, const char *path, etc_error *err);

/**
 * Like etc_npz_open on `len` bytes at `data` (borrowed: they must outlive
 * the object). `name` is used in messages and, for a single `.npy`, gives
 * the array its name; byte offsets are relative to `data`.
 */
ETC_API int etc_npz_wrap(etc_npz **out, const void *data, size_t len, const char *name,
                         etc_error *err);

/**
 * What the open warns of, or NULL: "NAME: N bytes after the zip archive's
 * end (byte X) are ignored" when bytes follow the end record's comment
 * (padding, a signature; Python's zipfile and numpy.load read such files
 * too, as does etcompare: the archive ends at byte X). Lives as long as `z`.
 */
ETC_API const char *etc_npz_warning(const etc_npz *z);

/** Releases `z` and every view from it. NULL is a no-op. */
ETC_API void etc_npz_free(etc_npz *z);

/** The number of arrays (archive members in central-directory order; 1 for a `.npy`). */
ETC_API size_t etc_npz_count(const etc_npz *z);

/** The name of array `i` without ".npy"; NULL when i >= etc_npz_count. */
ETC_API const char *etc_npz_name(const etc_npz *z, size_t i);

/** The index of the array called `name` (without ".npy"), or -1. */
ETC_API int etc_npz_find(const etc_npz *z, const char *name);

/**
 * Array `i` as a tensor view. scalar_type from the descr: '<f2' float16,
 * '<f4' float32, '<f8' float64, '<i2' '<i4' '<i8', '<u2' '<u4' '<u8',
 * '|i1' int8, '|u1' uint8, '|b1' bool (1-byte kinds take any byte-order
 * character). ndim and sizes_le from the shape (0-dim: ndim 0, numel 1),
 * strides_le the C-order strides in elements (nstrides = ndim), numel and
 * nbytes, `data` the first element (never NULL, also for empty arrays),
 * `offset` the byte offset of the data in the file for a stored member or a
 * `.npy`, -1 for an inflated member. The view lives as long as `z`.
 * @return 0, ETC_ERR_UNSUPPORTED for an array etcompare cannot represent
 *         (see above; the message names the descr), ETC_ERR_USAGE when
 *         i >= etc_npz_count
 */
ETC_API int etc_npz_array(const etc_npz *z, size_t i, etc_tensor *out, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
