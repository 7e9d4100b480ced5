/*
 * torch_legacy.h - legacy (non-zip) torch.save streams: the bytes inside
 * torch.storage._load_from_bytes(b) in a pickle.dumps of tensors, and whole
 * files saved with _use_new_zipfile_serialization=False (FORMATS.md §4).
 */
#ifndef ETC_TORCH_LEGACY_H
#define ETC_TORCH_LEGACY_H

#include "format/pickle.h"

/* True when `o` is the magic number a legacy stream starts with. */
bool etc_torch_legacy_is_magic(const etc_pyobj *o);

/*
 * Reads the legacy stream of `n` bytes at `p`: the pickled magic number,
 * protocol version and sys info, the object (persistent ids name storages),
 * the list of storage keys, then each storage as an 8-byte little-endian
 * element count and its raw bytes. Storages point into `p` (zero-copy).
 * `o` gives the file and member names, base offset and bounds for messages;
 * its callback fields are ignored. The whole of `n` must be used.
 */
int etc_torch_legacy_read(etc_arena *arena, const uint8_t *p, size_t n, const etc_pickle_opts *o,
                          const etc_pyobj **root, etc_error *err);

#endif
