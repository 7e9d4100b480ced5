/*
 * etcompare/tensor.h - scalar types, the debug buffer and tensor views.
 *
 * The debug buffer is the raw file of tensor bytes the runtime writes beside
 * the ETDump. It is memory-mapped; a tensor view points into it and is valid
 * while the etc_debug_buffer lives. Elements are read little-endian and
 * converted to double for summaries and metrics.
 */
#ifndef ETCOMPARE_TENSOR_H
#define ETCOMPARE_TENSOR_H

#include "common.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ExecuTorch ScalarType codes, as stored in the ETDump. */
typedef enum etc_scalar_type {
	ETC_BYTE = 0, /* uint8 */
	ETC_CHAR = 1, /* int8 */
	ETC_SHORT = 2,
	ETC_INT = 3,
	ETC_LONG = 4,
	ETC_HALF = 5,
	ETC_FLOAT = 6,
	ETC_DOUBLE = 7,
	ETC_BOOL = 11,
	ETC_QINT8 = 12,
	ETC_QUINT8 = 13,
	ETC_QINT32 = 14,
	ETC_BFLOAT16 = 15,
	ETC_QUINT4X2 = 16,
	ETC_QUINT2X4 = 17,
	ETC_BITS16 = 22,
	ETC_FLOAT8E5M2 = 23,
	ETC_FLOAT8E4M3FN = 24,
	ETC_FLOAT8E5M2FNUZ = 25,
	ETC_FLOAT8E4M3FNUZ = 26,
	ETC_UINT16 = 27,
	ETC_UINT32 = 28,
	ETC_UINT64 = 29
} etc_scalar_type;

/** True when `code` is one of the etc_scalar_type values above. */
ETC_API bool etc_scalar_type_valid(int code);
/** Lower-case name ("float32", "bfloat16", "quint4x2"); "unknown" if invalid. */
ETC_API const char *etc_scalar_type_name(int code);
/** Schema name ("FLOAT", "BFLOAT16"); "UNKNOWN" if invalid. */
ETC_API const char *etc_scalar_type_schema_name(int code);
/** Bytes per element in the debug buffer (quantized kinds: their storage). 0 if invalid. */
ETC_API size_t etc_scalar_type_size(int code);

/** Converts an IEEE half (binary16) bit pattern to double. */
ETC_API double etc_half_to_double(uint16_t bits);
/** Converts a bfloat16 bit pattern to double. */
ETC_API double etc_bfloat16_to_double(uint16_t bits);
/** Converts a float8 bit pattern of the given kind (ETC_FLOAT8*) to double. */
ETC_API double etc_float8_to_double(int scalar_type, uint8_t bits);

/** An opened debug buffer. */
typedef struct etc_debug_buffer etc_debug_buffer;

/**
 * Maps the debug buffer at `path` read-only.
 * @param out  receives the new buffer on success; release with etc_debug_buffer_free
 * @return 0 or a negative etc_status (ETC_ERR_IO when the file cannot be read)
 */
ETC_API int etc_debug_buffer_open(etc_debug_buffer **out, const char *path, etc_error *err);

/**
 * Wraps `len` bytes at `data` (borrowed: must outlive the buffer object).
 * `name` is used in error messages.
 */
ETC_API int etc_debug_buffer_wrap(etc_debug_buffer **out, const void *data, size_t len,
                                  const char *name, etc_error *err);

/** Releases `buf`. NULL is a no-op. */
ETC_API void etc_debug_buffer_free(etc_debug_buffer *buf);

/** Size in bytes of the buffer. */
ETC_API uint64_t etc_debug_buffer_size(const etc_debug_buffer *buf);
/** The name given at open (the path). */
ETC_API const char *etc_debug_buffer_name(const etc_debug_buffer *buf);
/** The buffer's bytes (etc_debug_buffer_size of them). */
ETC_API const uint8_t *etc_debug_buffer_data(const etc_debug_buffer *buf);

/**
 * The read budget. Every tensor range an event resolves in the buffer
 * (etc_value_tensor) is charged to it, each distinct offset, size and type
 * once however often it is read; when the total passes the cap,
 * etc_value_tensor fails with ETC_ERR_LIMIT naming the file, the total,
 * the cap and --max-inflate. The default cap is 16x the buffer's size, at
 * least 64 MiB. Thread-safe.
 *
 * `spec`: "BYTES" (a whole number, K, M, G or T binary multiples allowed),
 * "FACTORx" (times the buffer's size) or "none" (no cap). `buf` may be
 * NULL to check `spec` only. ETC_ERR_USAGE for a malformed spec.
 */
ETC_API int etc_debug_buffer_set_max_inflate(etc_debug_buffer *buf, const char *spec,
                                             etc_error *err);
/**
 * Parses a --max-inflate spec into bytes or a factor (both 0: "none");
 * `bytes` and `factor` may be NULL (to check the spec only).
 */
ETC_API int etc_max_inflate_parse(const char *spec, uint64_t *bytes, double *factor);
/** The bytes charged to the buffer's read budget so far. */
ETC_API uint64_t etc_debug_buffer_inflated(const etc_debug_buffer *buf);

/**
 * A tensor as described in the ETDump, with its data when a debug buffer
 * was given. `sizes`/`strides` are raw little-endian int64 arrays inside the
 * ETDump (read them with etc_tensor_size / etc_tensor_stride).
 */
typedef struct etc_tensor {
	int scalar_type;           /**< etc_scalar_type code (validated) */
	uint32_t ndim;             /**< number of sizes; 0 is a 0-dim scalar */
	uint32_t nstrides;         /**< number of strides (informational) */
	const uint8_t *sizes_le;   /**< ndim int64 values, little-endian */
	const uint8_t *strides_le; /**< nstrides int64 values, little-endian */
	int64_t offset;            /**< byte offset in the debug buffer; -1 = no data */
	uint64_t numel;            /**< product of sizes (1 for 0-dim) */
	uint64_t nbytes;           /**< numel * element size */
	const uint8_t *data;       /**< NULL when no debug buffer or no data */
} etc_tensor;

/** Size `i` of `t` (0 <= i < ndim). */
ETC_API int64_t etc_tensor_size(const etc_tensor *t, uint32_t i);
/** Stride `i` of `t` (0 <= i < nstrides). */
ETC_API int64_t etc_tensor_stride(const etc_tensor *t, uint32_t i);

/** Element `i` of `t` as double (t->data must be set, i < numel). */
ETC_API double etc_tensor_get(const etc_tensor *t, uint64_t i);

/**
 * Converts elements [start, start+n) of `t` to doubles in `dst`.
 * For streaming metrics over large tensors in cache-sized chunks.
 */
ETC_API void etc_tensor_to_double(const etc_tensor *t, uint64_t start, size_t n, double *dst);

/** Summary statistics of a tensor's values. */
typedef struct etc_tensor_summary {
	uint64_t count;     /**< elements summarized */
	uint64_t nan_count; /**< NaN elements (excluded from min/max/mean) */
	uint64_t inf_count; /**< infinite elements (included in min/max) */
	double min, max, mean;
} etc_tensor_summary;

/** Computes min/max/mean over all elements of `t` (t->data must be set). */
ETC_API void etc_tensor_summarize(const etc_tensor *t, etc_tensor_summary *out);

#ifdef __cplusplus
}
#endif
#endif
