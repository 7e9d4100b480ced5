/*
 * etcompare/torchsave.h - reading torch.save archives (the reference outputs,
 * example inputs and state dicts inside an ETRecord) without Python.
 *
 * A torch.save file is a zip whose `<top>/data.pkl` is a pickle (protocol 2)
 * describing the saved object and whose `<top>/data/<key>` members hold the
 * raw tensor storages (FORMATS.md §5). The pickle is interpreted by a small
 * machine that knows only the opcodes torch writes and a strict whitelist of
 * GLOBALs (tensor and parameter rebuild functions, collections.OrderedDict,
 * the storage types and dtypes); anything else is a format error and nothing
 * is ever executed. The result is a read-only tree of etc_pyobj values whose
 * tensors point into the archive's storages (zero-copy for stored members).
 *
 * The same functions read a bare pickle too: `pickle.dumps` of tensors (what
 * ETRecords hold as reference_outputs and representative_inputs before
 * ExecuTorch v1.3), protocols 2 to 5, whose tensors rebuild from
 * torch.storage._load_from_bytes(b) with `b` a legacy torch.save stream, and
 * a legacy (non-zip) torch.save file. Those storages are views of the given
 * bytes as well, except at protocol 2, which spells bytes as latin-1 text
 * that has to be decoded. etc_torchsave_prefix is then "".
 *
 * Objects live as long as the etc_torchsave they came from. Shared Python
 * objects stay shared: the same tensor saved twice is the same etc_pyobj, and
 * tensors saved from one storage point at the same bytes.
 */
#ifndef ETCOMPARE_TORCHSAVE_H
#define ETCOMPARE_TORCHSAVE_H

#include "common.h"
#include "tensor.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Bounds on what one archive may ask of the reader (ETC_ERR_LIMIT beyond). */
#define ETC_TORCHSAVE_MAX_DEPTH   200        /**< container nesting */
#define ETC_TORCHSAVE_MAX_STACK   (1u << 20) /**< pickle stack entries */
#define ETC_TORCHSAVE_MAX_MEMO    (1u << 24) /**< pickle memo slots */
#define ETC_TORCHSAVE_MAX_OBJECTS (1u << 22) /**< objects created */
#define ETC_TORCHSAVE_MAX_NDIM    64         /**< tensor dimensions */

/** An opened torch.save archive. */
typedef struct etc_torchsave etc_torchsave;

/** One unpickled Python value. */
typedef struct etc_pyobj etc_pyobj;

/** The kinds of value a torch.save archive can hold. */
typedef enum etc_pykind {
	ETC_PY_NONE = 0,
	ETC_PY_BOOL = 1,
	ETC_PY_INT = 2,    /**< an int that fits int64 */
	ETC_PY_BIGINT = 3, /**< an int outside int64 (see etc_pyobj_bigint) */
	ETC_PY_FLOAT = 4,
	ETC_PY_STR = 5, /**< UTF-8 text */
	ETC_PY_TUPLE = 6,
	ETC_PY_LIST = 7,
	ETC_PY_DICT = 8,     /**< dict or collections.OrderedDict, in insertion order */
	ETC_PY_TENSOR = 9,   /**< torch.Tensor or torch.nn.Parameter */
	ETC_PY_STORAGE = 10, /**< a bare storage (not inside a tensor) */
	ETC_PY_GLOBAL = 11,  /**< a whitelisted global used as a value, e.g. torch.float32 */
	ETC_PY_BYTES = 12    /**< a Python bytes value (pickle.dumps streams) */
} etc_pykind;

/**
 * A tensor of the archive. `tensor` is an etc_tensor view: scalar_type,
 * ndim, sizes/strides (little-endian int64, read them with etc_tensor_size /
 * etc_tensor_stride), numel and nbytes (= numel x element size). `tensor.data`
 * points at the first element only when the tensor is contiguous, so that
 * etc_tensor_get / etc_tensor_to_double / etc_tensor_summarize are correct on
 * it; it is NULL for strided views (transposed, expanded, sliced with steps):
 * read those with etc_pytensor_get / etc_pytensor_to_double or copy them with
 * etc_pytensor_copy. `tensor.offset` is the archive byte offset of the first
 * element when the storage is stored uncompressed, else -1.
 */
typedef struct etc_pytensor {
	etc_tensor tensor;
	const uint8_t *storage;  /**< the storage's first byte (shared between views) */
	uint64_t storage_nbytes; /**< bytes in the storage */
	int64_t storage_offset;  /**< in elements, as torch counts it */
	const char *storage_key; /**< the storage's name: member <top>/data/<key> */
	const char *location;    /**< device it was saved from ("cpu", "cuda:0") */
	bool contiguous;         /**< row-major dense, as torch.Tensor.is_contiguous() */
	bool is_parameter;       /**< rebuilt by torch._utils._rebuild_parameter */
	bool requires_grad;
} etc_pytensor;

/**
 * Opens and maps the torch.save archive (or bare pickle, see above) at
 * `path`, interprets its pickle and checks every tensor against its storage.
 * @return 0 or a negative etc_status: ETC_ERR_IO (cannot read), ETC_ERR_FORMAT
 *         (not a torch.save zip, corrupt pickle, forbidden GLOBAL, tensor
 *         outside its storage, ...), ETC_ERR_LIMIT, ETC_ERR_UNSUPPORTED
 */
ETC_API int etc_torchsave_open(etc_torchsave **out, const char *path, etc_error *err);

/**
 * Like etc_torchsave_open on `len` bytes at `data` (borrowed: they must
 * outlive the object), e.g. a member of an ETRecord zip. `name` is used in
 * messages; byte offsets are relative to `data`.
 */
ETC_API int etc_torchsave_wrap(etc_torchsave **out, const void *data, size_t len, const char *name,
                               etc_error *err);

/** Releases `ts` and every object from it. NULL is a no-op. */
ETC_API void etc_torchsave_free(etc_torchsave *ts);

/**
 * What the open warns of, or NULL: "NAME: N bytes after the zip archive's
 * end (byte X) are ignored" when bytes follow a zip's end record (Python's
 * zipfile reads such files too; the archive ends at byte X). Lives as long
 * as `ts`.
 */
ETC_API const char *etc_torchsave_warning(const etc_torchsave *ts);

/** The saved object. */
ETC_API const etc_pyobj *etc_torchsave_root(const etc_torchsave *ts);
/** The name given at open (the path). */
ETC_API const char *etc_torchsave_name(const etc_torchsave *ts);
/** The members' top folder ("archive" for in-memory saves, else the file stem). */
ETC_API const char *etc_torchsave_prefix(const etc_torchsave *ts);

/*
 * Accessors. They accept NULL (an absent value, e.g. from a failed
 * etc_pyobj_dict_get) and then return the "not that kind" answer, so lookups
 * can be chained: etc_pyobj_tensor(etc_pyobj_dict_get(root, "weight")).
 */

/** Lower-case name of a kind ("none", "int", "dict", "tensor", ...). */
ETC_API const char *etc_pykind_name(int kind);

/** The kind of `o` (ETC_PY_NONE for NULL). */
ETC_API etc_pykind etc_pyobj_kind(const etc_pyobj *o);

/** BOOL: its value; INT: value != 0; anything else: false. */
ETC_API bool etc_pyobj_bool(const etc_pyobj *o);
/** INT: its value; BOOL: 0 or 1; anything else: 0. */
ETC_API int64_t etc_pyobj_int(const etc_pyobj *o);
/** FLOAT: its value; INT, BOOL, BIGINT: converted; anything else: NaN. */
ETC_API double etc_pyobj_float(const etc_pyobj *o);
/** STR: the text (NUL-terminated, may contain NULs); GLOBAL: "module.name"; else "". */
ETC_API etc_str etc_pyobj_str(const etc_pyobj *o);
/**
 * BIGINT: the value as minimal little-endian two's complement bytes (*len of
 * them, as pickle's LONG1 stores it); anything else: NULL and *len = 0.
 */
ETC_API const uint8_t *etc_pyobj_bigint(const etc_pyobj *o, size_t *len);
/** STORAGE: its bytes (*len of them); anything else: NULL and *len = 0. */
ETC_API const uint8_t *etc_pyobj_storage_bytes(const etc_pyobj *o, size_t *len);

/** BYTES: its bytes (*len of them); anything else: NULL and *len = 0. */
ETC_API const uint8_t *etc_pyobj_bytes(const etc_pyobj *o, size_t *len);

/** TUPLE, LIST: the number of items; DICT: the number of pairs; else 0. */
ETC_API size_t etc_pyobj_len(const etc_pyobj *o);
/** TUPLE, LIST: item `i`; NULL when out of range or not a sequence. */
ETC_API const etc_pyobj *etc_pyobj_item(const etc_pyobj *o, size_t i);
/** DICT: the key of pair `i` (keys may be of any hashable kind). */
ETC_API const etc_pyobj *etc_pyobj_dict_key(const etc_pyobj *o, size_t i);
/** DICT: the value of pair `i`. */
ETC_API const etc_pyobj *etc_pyobj_dict_value(const etc_pyobj *o, size_t i);
/** DICT: the value under the string key `key`, or NULL. */
ETC_API const etc_pyobj *etc_pyobj_dict_get(const etc_pyobj *o, const char *key);
/** True for a DICT that was a collections.OrderedDict. */
ETC_API bool etc_pyobj_is_ordered_dict(const etc_pyobj *o);
/**
 * DICT: the attributes set on it by the pickle's BUILD (a state_dict's
 * `_metadata` lives here) as a DICT, or NULL when there are none.
 */
ETC_API const etc_pyobj *etc_pyobj_attrs(const etc_pyobj *o);

/** TENSOR: its description; anything else: NULL. */
ETC_API const etc_pytensor *etc_pyobj_tensor(const etc_pyobj *o);

/** Element `i` (0 <= i < numel, row-major logical order) as double, honouring strides. */
ETC_API double etc_pytensor_get(const etc_pytensor *t, uint64_t i);
/** Elements [start, start+n) in row-major logical order as doubles. */
ETC_API void etc_pytensor_to_double(const etc_pytensor *t, uint64_t start, size_t n, double *dst);
/**
 * Copies the elements in row-major order into `dst` (`cap` bytes, at least
 * t->tensor.nbytes), giving the dense little-endian layout etc_tensor expects.
 * @return 0, or ETC_ERR_USAGE when cap is too small
 */
ETC_API int etc_pytensor_copy(const etc_pytensor *t, void *dst, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
