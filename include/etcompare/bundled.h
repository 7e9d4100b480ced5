/*
 * etcompare/bundled.h - ExecuTorch BundledProgram files (.bpte, file
 * identifier "BP08"): a program bundled with test cases, as upstream's
 * BundledProgram serializer writes them (schema/bundled_program_schema.fbs).
 *
 * A BundledProgram holds the serialized program (.pte bytes) and, per
 * method, a test suite: test cases, each with the inputs to give the
 * method and the outputs eager mode produced for them (the expected
 * outputs). Values are tensors (scalar type, int32 sizes, dense element
 * bytes, dim order) or the scalars Int, Bool and Double.
 *
 * etc_bundled_open maps the file and verifies it completely, like a
 * FlatBuffer verifier and more: every offset, vtable, vector and string;
 * every union type; every tensor's scalar type (a known one), sizes (none
 * negative, their product and byte size without overflow), data (exactly
 * sizes x element size bytes) and dim order (a permutation of the
 * dimensions). A failure names the file, the byte offset and where
 * ("test case 1 of method forward: input 0: data holds 3000 bytes, sizes
 * [1, 3, 16, 16] of float32 need 3072"). After that the accessors cannot
 * fail on the file's account: values are zero-copy views into the mapping.
 *
 * Test case i of a method is bundled input index i: the index a runtime
 * records in RunData.bundled_input_index when it loads that input.
 */
#ifndef ETCOMPARE_BUNDLED_H
#define ETCOMPARE_BUNDLED_H

#include "common.h"
#include "reference.h"
#include "tensor.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded, verified BundledProgram. */
typedef struct etc_bundled etc_bundled;

/**
 * Maps and verifies the BundledProgram at `path` (plain, as upstream
 * writes it, or with a 4-byte size prefix).
 * @param out receives the object on success; release with etc_bundled_free
 * @return 0, ETC_ERR_IO, ETC_ERR_FORMAT (the message names the byte offset,
 *         method, test case and value), ETC_ERR_UNSUPPORTED (a schema
 *         version other than BP08), ETC_ERR_LIMIT or ETC_ERR_NOMEM
 */
ETC_API int etc_bundled_open(etc_bundled **out, const char *path, etc_error *err);

/**
 * Like etc_bundled_open on `len` bytes at `data` (borrowed: they must
 * outlive the object). `name` is used in messages.
 */
ETC_API int etc_bundled_wrap(etc_bundled **out, const void *data, size_t len, const char *name,
                             etc_error *err);

/** Releases `bp` and every view from it. NULL is a no-op. */
ETC_API void etc_bundled_free(etc_bundled *bp);

/** The path or name the object was opened with. */
ETC_API const char *etc_bundled_name(const etc_bundled *bp);
/** BundledProgram.version (0 when absent; upstream writes 2 at BP08). */
ETC_API uint32_t etc_bundled_version(const etc_bundled *bp);

/**
 * The embedded program (the .pte bytes, for a program reader): its first
 * byte, and in *offset its byte offset in the file and in *size its length
 * (both 0, and a non-NULL pointer, when the file has none). Either output
 * may be NULL.
 */
ETC_API const uint8_t *etc_bundled_program(const etc_bundled *bp, uint64_t *offset, uint64_t *size);

/** The number of method test suites, in file order. */
ETC_API size_t etc_bundled_method_count(const etc_bundled *bp);
/** The method name of suite `m` ("forward"); "" when m is out of range. */
ETC_API etc_str etc_bundled_method_name(const etc_bundled *bp, size_t m);
/**
 * The suite of method `name`, or -1. When two suites name the same method
 * the first is returned, as the runtime's lookup does.
 */
ETC_API long etc_bundled_method_find(const etc_bundled *bp, const char *name);
/** The number of test cases of suite `m` (0 when m is out of range). */
ETC_API size_t etc_bundled_test_case_count(const etc_bundled *bp, size_t m);
/**
 * The number of inputs (`expected` false) or expected outputs (`expected`
 * true) of test case `tc` of suite `m` (0 when out of range).
 */
ETC_API size_t etc_bundled_value_count(const etc_bundled *bp, size_t m, size_t tc, bool expected);

/** What a bundled value holds: the schema's ValueUnion type codes. */
typedef enum etc_bundled_kind {
	ETC_BUNDLED_TENSOR = 1,
	ETC_BUNDLED_INT = 2,
	ETC_BUNDLED_BOOL = 3,
	ETC_BUNDLED_DOUBLE = 4
} etc_bundled_kind;

/** One input or expected output (a view; valid while the object lives). */
typedef struct etc_bundled_value {
	int kind; /**< etc_bundled_kind */
	/**
	 * ETC_BUNDLED_TENSOR: scalar_type, ndim, sizes_le (the sizes widened to
	 * int64, held by the object), numel, nbytes, data (the element bytes in
	 * the file, never NULL) and offset (their byte offset in the file).
	 * strides_le is NULL: the layout is given by dim_order.
	 */
	etc_tensor tensor;
	/** The tensor's dim order (ndim entries), NULL when the file has none. */
	const uint8_t *dim_order;
	uint32_t dim_order_len;
	/** True when the elements are in row-major order (dim order absent or 0, 1, ...). */
	bool row_major;
	int64_t int_val;   /**< ETC_BUNDLED_INT */
	bool bool_val;     /**< ETC_BUNDLED_BOOL */
	double double_val; /**< ETC_BUNDLED_DOUBLE */
	uint64_t offset;   /**< byte offset of the Value table in the file */
} etc_bundled_value;

/**
 * Input (`expected` false) or expected output (`expected` true) `i` of test
 * case `tc` of suite `m`.
 * @return 0, or ETC_ERR_USAGE when an index is out of range
 */
ETC_API int etc_bundled_get(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                            etc_bundled_value *out, etc_error *err);

/**
 * The same value as a reference tensor (reference.h): dtype, rank, shape
 * (held by the object), numel and data, pointing into the file.
 * @return 0; ETC_ERR_USAGE for an index out of range; ETC_ERR_UNSUPPORTED
 *         for a value that is not a tensor, a dim order other than
 *         row-major, data not aligned for its element type (a buffer given
 *         to etc_bundled_wrap at an odd address), or a rank above
 *         ETC_REF_MAX_RANK. The message names the method, test case and value.
 */
ETC_API int etc_bundled_tensor(const etc_bundled *bp, size_t m, size_t tc, bool expected, size_t i,
                               etc_reftensor *out, etc_error *err);

#ifdef __cplusplus
}
#endif
#endif
