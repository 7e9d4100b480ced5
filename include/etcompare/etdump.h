/*
 * etcompare/etdump.h - the ETDump: the runtime's FlatBuffer trace.
 *
 * etc_etdump_open maps the file and verifies the whole FlatBuffer up front
 * (every offset, vtable, vector and string), so the accessors below cannot
 * fail: they decode fields on demand into small view structs that point into
 * the mapping. Nothing is copied per event, so memory does not grow with the
 * number of events. The layout is described in schema/etdump.fbs.
 */
#ifndef ETCOMPARE_ETDUMP_H
#define ETCOMPARE_ETDUMP_H

#include "common.h"
#include "tensor.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A loaded, verified ETDump. */
typedef struct etc_etdump etc_etdump;

/**
 * Maps and verifies the ETDump at `path` (size-prefixed or plain).
 * @param out receives the dump on success; release with etc_etdump_free
 * @return 0, ETC_ERR_IO, ETC_ERR_FORMAT (message names the byte offset and
 *         table), ETC_ERR_LIMIT or ETC_ERR_NOMEM
 */
ETC_API int etc_etdump_open(etc_etdump **out, const char *path, etc_error *err);

/** Verifies `len` bytes at `data` (borrowed; must outlive the dump). */
ETC_API int etc_etdump_wrap(etc_etdump **out, const void *data, size_t len, const char *name,
                            etc_error *err);

/** Releases `dump`. NULL is a no-op. */
ETC_API void etc_etdump_free(etc_etdump *dump);

/** The path or name the dump was opened with. */
ETC_API const char *etc_etdump_name(const etc_etdump *dump);
/** True when the file carried a 4-byte size prefix. */
ETC_API bool etc_etdump_size_prefixed(const etc_etdump *dump);
/** Bytes after the buffer a size prefix announced (0 for plain buffers). */
ETC_API uint64_t etc_etdump_trailing_bytes(const etc_etdump *dump);
/** ETDump.version (0 when absent). */
ETC_API uint32_t etc_etdump_version(const etc_etdump *dump);
/** Total number of events over all runs. */
ETC_API uint64_t etc_etdump_event_total(const etc_etdump *dump);

/** One RunData. */
typedef struct etc_run {
	etc_str name;
	int32_t bundled_input_index; /**< -1 when absent */
	uint32_t allocator_count;
	uint32_t event_count;
} etc_run;

/** Number of RunData entries. */
ETC_API uint32_t etc_etdump_run_count(const etc_etdump *dump);
/** Decodes run `i` (< run_count). */
ETC_API void etc_etdump_run(const etc_etdump *dump, uint32_t i, etc_run *out);
/** Name of allocator `a` (< allocator_count) of run `i`. */
ETC_API etc_str etc_etdump_allocator(const etc_etdump *dump, uint32_t run, uint32_t a);

/** Which of the Event's three tables is set. */
typedef enum etc_event_kind {
	ETC_EVENT_EMPTY = 0, /* none set (tolerated, ignored by the Inspector) */
	ETC_EVENT_PROFILE = 1,
	ETC_EVENT_ALLOCATION = 2,
	ETC_EVENT_DEBUG = 3
} etc_event_kind;

/** ValueType codes. */
typedef enum etc_value_type {
	ETC_VALUE_NULL = 0,
	ETC_VALUE_INT = 1,
	ETC_VALUE_BOOL = 2,
	ETC_VALUE_FLOAT = 3,
	ETC_VALUE_DOUBLE = 4,
	ETC_VALUE_TENSOR = 5,
	ETC_VALUE_TENSOR_LIST = 6,
	ETC_VALUE_STRING = 7
} etc_value_type;

/** Name of a value type ("Tensor", "TensorList", ...). */
ETC_API const char *etc_value_type_name(int type);

/** A debug event's Value. Tensors are read with etc_value_tensor. */
typedef struct etc_value {
	int type;        /**< etc_value_type */
	bool is_output;  /**< `output.bool_val` is true: a program output */
	bool has_output; /**< the `output` table is present */
	int64_t int_val;
	bool bool_val;
	float float_val;
	double double_val;
	uint32_t tensor_count; /**< 1 for a Tensor, n for a TensorList, else 0 */
	/* internal: where the tensor table(s) are and whose event this is */
	const etc_etdump *dump_;
	size_t tensors_pos_;
	uint32_t run_, event_;
} etc_value;

/**
 * Decodes tensor `i` (< v->tensor_count) of `v`. Data is attached from `buf`
 * when it is non-NULL; an offset or length outside `buf` is an error naming
 * the tensor. Without `buf`, data is NULL.
 */
ETC_API int etc_value_tensor(const etc_value *v, uint32_t i, const etc_debug_buffer *buf,
                             etc_tensor *out, etc_error *err);

typedef struct etc_profile_event {
	etc_str name;
	int32_t chain_index;
	int32_t instruction_id;        /**< -1 when absent */
	int32_t delegate_debug_id_int; /**< -1 when absent */
	etc_str delegate_debug_id_str; /**< "" when absent */
	bool has_metadata;             /**< delegate_debug_metadata present */
	const uint8_t *metadata;
	uint32_t metadata_len;
	uint64_t start_time;
	uint64_t end_time;
} etc_profile_event;

typedef struct etc_allocation_event {
	int32_t allocator_id;
	uint64_t allocation_size;
} etc_allocation_event;

typedef struct etc_debug_event {
	uint64_t chain_index;
	int32_t instruction_id;        /**< -1 when absent */
	int32_t delegate_debug_id_int; /**< -1 when absent */
	etc_str delegate_debug_id_str;
	etc_str name;
	bool has_value; /**< debug_entry present */
	etc_value value;
} etc_debug_event;

/** One decoded Event. */
typedef struct etc_event {
	int kind; /**< etc_event_kind */
	etc_profile_event profile;
	etc_allocation_event allocation;
	etc_debug_event debug;
} etc_event;

/** Decodes event `e` (< event_count) of run `run`. */
ETC_API void etc_etdump_event(const etc_etdump *dump, uint32_t run, uint32_t e, etc_event *out);

/** Byte offset in the file of event `e` of run `run` (for messages). */
ETC_API uint64_t etc_etdump_event_offset(const etc_etdump *dump, uint32_t run, uint32_t e);

#ifdef __cplusplus
}
#endif
#endif
