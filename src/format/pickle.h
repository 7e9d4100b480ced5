/*
 * pickle.h - the restricted pickle machine behind the torch.save reader.
 *
 * Interprets the opcodes of protocols 2 to 5 that torch.save and pickle.dumps
 * of tensors write (FORMATS.md §4, §5) and resolves GLOBAL and STACK_GLOBAL
 * against a fixed whitelist; REDUCE only ever "calls" the tensor and
 * parameter rebuild functions, collections.OrderedDict, the bytes
 * constructors of protocol 2 and torch.storage._load_from_bytes (handed to
 * torch_legacy.c), all implemented here as data constructors. Persistent ids
 * (storages) are resolved by a callback so the machine knows nothing about
 * zip files.
 */
#ifndef ETC_PICKLE_H
#define ETC_PICKLE_H

#include "etcompare/torchsave.h"
#include "core/internal.h"

/* A storage referenced by a persistent id; shared by every tensor viewing it. */
typedef struct etc_pystorage {
	const char *key;
	const char *location;
	int scalar_type;     /* element type, or -1 for torch.UntypedStorage (bytes) */
	uint64_t numel;      /* elements of scalar_type (bytes when untyped) */
	const uint8_t *data; /* NULL while a legacy stream's bytes are not located yet */
	uint64_t nbytes;
	int64_t archive_offset; /* where data lies in the archive, or -1 */
} etc_pystorage;

/*
 * Resolves ('storage', type, key, location, numel): fills *out with the
 * storage's bytes (the same etc_pystorage for the same key). `scalar_type`
 * is -1 for torch.UntypedStorage. `pos` is the pickle offset, for messages.
 */
typedef int (*etc_pickle_load_fn)(void *ctx, const char *key, int scalar_type, const char *location,
                                  uint64_t numel, size_t pos, const etc_pystorage **out,
                                  etc_error *err);

typedef struct etc_pickle_opts {
	const char *file;    /* the archive, for messages */
	const char *member;  /* the pickle's member name, for messages */
	int64_t base_offset; /* archive offset of the pickle's first byte, or -1 */
	etc_pickle_load_fn load;
	void *ctx;
	/* bounds; 0 means the ETC_TORCHSAVE_MAX_* default */
	size_t max_stack, max_memo, max_depth, max_objects;
	/*
	 * Inside a legacy torch.save stream: persistent ids have a sixth item
	 * (view metadata, which must be None) and _load_from_bytes may not nest.
	 */
	bool legacy;
	size_t start; /* the first opcode's offset in the bytes (offsets count from 0) */
} etc_pickle_opts;

/*
 * Unpickles `n` bytes at `p`; every object comes from `arena`. On success
 * *root is the value STOP returned.
 */
int etc_unpickle(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *opts,
                 const etc_pyobj **root, etc_error *err);

/* Like etc_unpickle; *used is the offset just after STOP. */
int etc_unpickle_prefix(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *opts,
                        const etc_pyobj **root, size_t *used, etc_error *err);

#endif
