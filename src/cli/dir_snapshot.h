/*
 * dir_snapshot.h - which files of a folder a step wrote: the names and
 * inodes before, compared with those after (every output file is written
 * under a temporary name and renamed into place, so a rewritten file has a
 * new inode). For the line --plot ends with.
 */
#ifndef ETC_CLI_DIR_SNAPSHOT_H
#define ETC_CLI_DIR_SNAPSHOT_H

#include <stddef.h>
#include <sys/types.h>

typedef struct dir_snapshot {
	char **names;
	ino_t *inodes;
	size_t count;
} dir_snapshot;

/* The files of `dir` now (none when it does not exist yet). */
void dir_snapshot_take(dir_snapshot *s, const char *dir);

/* Files of `dir` that are new or replaced since `s`; *pngs gets the .png ones. */
size_t dir_snapshot_changed(const dir_snapshot *s, const char *dir, size_t *pngs);

void dir_snapshot_free(dir_snapshot *s);

#endif
