#define _POSIX_C_SOURCE 200809L
/*
 * dir_snapshot.c - files written into a folder by one step (see
 * dir_snapshot.h). Out of memory only makes the count smaller.
 */
#include "dir_snapshot.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_png(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcmp(name + n - 4, ".png") == 0;
}

void dir_snapshot_take(dir_snapshot *s, const char *dir)
{
	memset(s, 0, sizeof *s);
	DIR *d = opendir(dir);
	if (!d)
		return;
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (s->count == cap) {
			size_t nc = cap ? 2 * cap : 64;
			char **n = realloc(s->names, nc * sizeof *n);
			if (!n)
				break;
			s->names = n;
			ino_t *in = realloc(s->inodes, nc * sizeof *in);
			if (!in)
				break;
			s->inodes = in;
			cap = nc;
		}
		if (!(s->names[s->count] = strdup(e->d_name)))
			break;
		s->inodes[s->count++] = e->d_ino;
	}
	closedir(d);
}

size_t dir_snapshot_changed(const dir_snapshot *s, const char *dir, size_t *pngs)
{
	size_t n = 0;
	*pngs = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		bool same = false;
		for (size_t i = 0; i < s->count && !same; i++)
			same = s->inodes[i] == e->d_ino && strcmp(s->names[i], e->d_name) == 0;
		if (same)
			continue;
		n++;
		*pngs += is_png(e->d_name);
	}
	closedir(d);
	return n;
}

void dir_snapshot_free(dir_snapshot *s)
{
	for (size_t i = 0; i < s->count; i++)
		free(s->names[i]);
	free(s->names);
	free(s->inodes);
	memset(s, 0, sizeof *s);
}
