/*
 * pickle_private.h - what the pickle machine's files share (pickle.c,
 * pickle_objects.c, pickle_torch.c, pytensor.c): the object layout, the
 * machine state and the functions that cross between them. The module's
 * interface for other files is format/pickle.h.
 */
#ifndef ETC_PICKLE_PRIVATE_H
#define ETC_PICKLE_PRIVATE_H

#include "format/pickle.h"

enum { F_ORDERED = 1 };

typedef enum role {
	R_REBUILD_V2,
	R_REBUILD_V3,
	R_REBUILD_PARAM,
	R_ORDERED_DICT,
	R_STORAGE_TYPE,
	R_DTYPE,
	R_LOAD_FROM_BYTES, /* torch.storage._load_from_bytes(b): a legacy torch.save stream */
	R_CODECS_ENCODE,   /* protocol 2 writes bytes as _codecs.encode(str, 'latin1') */
	R_BYTES            /* ... and empty bytes as bytes() */
} role;

typedef struct global_def {
	const char *name;
	role role;
	int scalar_type; /* storage types and dtypes; -1 = untyped */
} global_def;

/* Every GLOBAL the reader accepts. Anything else is rejected, never resolved. */

/* BYTES: a slice of the pickle (zero-copy) or a decoded copy. */
typedef struct pybytes {
	const uint8_t *data;
	uint64_t size;
	int64_t pos;             /* offset of data in the pickle, or -1 for a copy */
	const etc_pyobj *loaded; /* what _load_from_bytes made of it, once asked */
} pybytes;

struct etc_pyobj {
	uint8_t kind;
	uint8_t flags;
	uint8_t colour; /* cycle check: 0 unseen, 1 on the path, 2 done */
	uint32_t len, cap;
	uint32_t height; /* nesting below this object, once checked */
	union {
		bool b;
		int64_t i;
		double f;
		const uint8_t *bytes; /* STR (NUL-terminated), BIGINT */
		etc_pyobj **items;    /* TUPLE, LIST; DICT: key, value, key, value... */
		etc_pytensor *tensor;
		const etc_pystorage *storage;
		const global_def *global;
		pybytes *blob;
	} u;
	/*
	 * DICT: state set by BUILD. STR: its bytes once _codecs.encode decoded
	 * it, so that a memoized string reduced again costs nothing.
	 */
	etc_pyobj *attrs;
	uint32_t *index; /* DICT: hash table of pair index + 1 (0 = empty) */
	uint32_t index_cap;
};

#define MAX_LEN         0x3fffffffu
#define MAX_GLOBAL_LINE 256

typedef struct vm {
	etc_arena *arena;
	const etc_pickle_opts *o;
	etc_error *err;
	const uint8_t *p;
	size_t n, pos, op_pos;
	etc_pyobj **stack;
	size_t sp, stack_cap;
	size_t *marks;
	size_t nmarks, marks_cap;
	etc_pyobj **memo;
	size_t memo_cap, memo_len; /* memo_len: slots in use (MEMOIZE's index) */
	size_t objects;
	size_t max_stack, max_memo, max_depth, max_objects;
} vm;

int etc_pickle_fail_(vm *m, int status, const char *fmt, ...) ETC_PRINTF(3, 4);

/* pickle_objects.c: objects, the stack and dicts */
int etc_pickle_new_obj_(vm *m, int kind, etc_pyobj **out);
int etc_pickle_new_bytes_(vm *m, const uint8_t *data, uint64_t size, int64_t pos, etc_pyobj **out);
int etc_pickle_push_(vm *m, etc_pyobj *o);
size_t etc_pickle_fence_(const vm *m);
int etc_pickle_pop_(vm *m, etc_pyobj **out, const char *op);
int etc_pickle_top_(vm *m, etc_pyobj **out, const char *op);
int etc_pickle_pop_mark_(vm *m, size_t *start, const char *op);
int etc_pickle_below_mark_(vm *m, size_t start, etc_pyobj **out, const char *op);
int etc_pickle_reserve_(vm *m, etc_pyobj *o, size_t extra);
int etc_pickle_dict_set_(vm *m, etc_pyobj *d, etc_pyobj *k, etc_pyobj *v);

/* pickle_torch.c: the opcodes that name or call something */
int etc_pickle_op_reduce_(vm *m);
int etc_pickle_op_persid_(vm *m);
int etc_pickle_op_global_(vm *m);
int etc_pickle_op_stack_global_(vm *m);

#endif
