/*
 * etcompare/common.h - status codes, the error object, the export macro and
 * the small string helpers shared by every etcompare module.
 *
 * Every function that can fail returns 0 (ETC_OK) or a negative etc_status
 * and, when given a non-NULL etc_error, fills it with a complete message that
 * names the file, the byte offset and the field that was wrong. The library
 * never prints and never exits; the caller decides what to do.
 *
 * Constructors (the *_open, *_wrap, *_create, *_load, *_run, *_new and
 * *_from_* functions that take a `T **out`) set *out to NULL when they fail,
 * so a caller may initialise nothing, free every object once on the way out
 * (every *_free accepts NULL) and never free a half-built one. A NULL
 * pointer where a header does not say NULL is allowed is ETC_ERR_USAGE
 * ("FUNCTION: NULL ARGUMENT"); functions that return no status answer NULL
 * or 0 instead, as their header says.
 */
#ifndef ETCOMPARE_COMMON_H
#define ETCOMPARE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ETC_BUILDING_LIBRARY) && defined(__GNUC__)
#define ETC_API __attribute__((visibility("default")))
#else
#define ETC_API
#endif

#define ETC_VERSION_MAJOR  0
#define ETC_VERSION_MINOR  1
#define ETC_VERSION_PATCH  0
#define ETC_VERSION_STRING "0.1.0"

/** Status codes: 0 is success, failures are negative. */
typedef enum etc_status {
	ETC_OK = 0,
	ETC_ERR_USAGE = -1,       /**< invalid argument or API misuse */
	ETC_ERR_IO = -2,          /**< a file could not be opened, read or written */
	ETC_ERR_FORMAT = -3,      /**< input is corrupt or not of the expected format */
	ETC_ERR_NOMEM = -4,       /**< out of memory */
	ETC_ERR_LIMIT = -5,       /**< input exceeds a resource bound */
	ETC_ERR_UNSUPPORTED = -6, /**< valid input that etcompare cannot handle */
	ETC_ERR_MISMATCH = -7     /**< inputs disagree (e.g. merged runs differ) */
} etc_status;

/** Details of the last failure. Plain data: no allocation, safe to copy. */
typedef struct etc_error {
	etc_status status; /**< the status that was returned */
	int64_t offset;    /**< byte offset in `file` of the problem, or -1 */
	/** the input the problem is in ("" when none); a longer path is cut in
	 *  the middle with "...", here and in `message` */
	char file[256];
	char message[1024]; /**< complete message, "file: byte N: what" */
} etc_error;

/** Resets `err` to ETC_OK with an empty message. NULL is allowed. */
ETC_API void etc_error_clear(etc_error *err);

/**
 * Runs fn(ctx) and returns its result, with a recovery point for mapped
 * inputs: when a file mapped by etcompare shrinks while it is read (another
 * process truncates it), the read that touches the vanished pages ends the
 * call with ETC_ERR_IO and "FILE: changed while being read" in `err`
 * instead of a SIGBUS that kills the process. Whatever fn had allocated
 * when it was cut short is not freed (the caller is expected to report the
 * error and exit). The SIGBUS handler is installed only while a guarded
 * call runs; a SIGBUS outside one goes to the previous disposition.
 */
ETC_API int etc_run_guarded(int (*fn)(void *ctx), void *ctx, etc_error *err);

/**
 * For hosts that read the library's mappings themselves (the Python
 * package's zero-copy numpy views), where no recovery point can be put
 * around the reads: installs, for the rest of the process, a SIGBUS
 * handler and a process-wide registry of every file the library maps from
 * then on. A read of a registered file's pages that vanished (the file was
 * truncated) gets zero pages instead of killing the process, and the file
 * is marked changed: etc_guard_check_file then fails for it. A SIGBUS
 * elsewhere goes to the previous disposition. Idempotent; thread-safe.
 * The registry holds 1024 live mappings; one more is ETC_ERR_LIMIT.
 */
ETC_API int etc_guard_install_process_handler(etc_error *err);

/**
 * ETC_ERR_IO "PATH: changed while being read ..." when a live mapping of
 * `path` (as given to the *_open call) was found truncated by the process
 * handler: what was read from it since is zeros. 0 otherwise.
 */
ETC_API int etc_guard_check_file(const char *path, etc_error *err);

/**
 * A host's own mapping of a file the library maps (the Python package's
 * copy-on-write view for torch tensors): watched by the process handler as
 * the library's are, under the path of the library's mapping that holds
 * `library_addr`, so a truncation seen through it marks that file too.
 * ETC_ERR_USAGE when `library_addr` is in no library mapping; 0 when the
 * process handler is not installed. etc_guard_unwatch_copy before the
 * host unmaps it.
 */
ETC_API int etc_guard_watch_copy(const void *data, size_t size, const void *library_addr,
                                 etc_error *err);
ETC_API void etc_guard_unwatch_copy(const void *data);

/** A short constant name for `status` ("format error", ...). */
ETC_API const char *etc_status_str(int status);

/** The library's version string, e.g. "0.1.0". */
ETC_API const char *etc_version(void);

/**
 * The number of threads the library gives large work (comparisons, the
 * reference run's products, plots): the environment variable ETC_THREADS
 * when it holds a number from 1 to 64, else the online processors, at most
 * 8. *env_ignored (may be NULL) is set to 1 when ETC_THREADS is set to
 * anything else, 0 otherwise.
 */
ETC_API unsigned etc_threads(int *env_ignored);

/**
 * A string view into a loaded file: `len` bytes at `ptr`, followed by a NUL
 * (FlatBuffer strings are NUL-terminated and the reader verifies it).
 * Borrowed: valid while the object it came from lives. ptr is never NULL
 * (an absent string is "" with len 0).
 */
typedef struct etc_str {
	const char *ptr;
	size_t len;
} etc_str;

/** etc_edit_distance flags. */
enum {
	ETC_EDIT_FOLD_CASE = 1,         /**< ASCII letters compare case-insensitively */
	ETC_EDIT_DASH_IS_UNDERSCORE = 2 /**< '-' and '_' compare equal (option names) */
};

/** The longest string etc_edit_distance measures, in bytes. */
#define ETC_EDIT_MAX 255

/**
 * Levenshtein distance between `a` and `b` (each insertion, deletion or
 * substitution of a byte costs 1), for "did you mean" suggestions. `flags`
 * is 0 or an OR of ETC_EDIT_FOLD_CASE and ETC_EDIT_DASH_IS_UNDERSCORE.
 * Returns SIZE_MAX when either is NULL or longer than ETC_EDIT_MAX bytes.
 */
ETC_API size_t etc_edit_distance(const char *a, const char *b, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
