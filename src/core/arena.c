/*
 * arena.c - the per-file bump allocator. Objects loaded from one file share
 * one arena and die together, which removes per-object ownership rules.
 */
#include "core/internal.h"

#include <stdlib.h>

struct etc_arena_chunk {
	etc_arena_chunk *next;
	size_t cap, used;
	_Alignas(16) unsigned char mem[];
};

#define ARENA_MIN_CHUNK ((size_t)64 * 1024)

void etc_arena_init(etc_arena *a)
{
	a->head = NULL;
	a->total = 0;
}

void etc_arena_release(etc_arena *a)
{
	etc_arena_chunk *c = a->head;
	while (c) {
		etc_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

void *etc_arena_alloc(etc_arena *a, size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n) || n > SIZE_MAX - 64)
		return NULL;
	n = (n + 15) & ~(size_t)15;
	etc_arena_chunk *c = a->head;
	if (!c || c->cap - c->used < n) {
		size_t cap = c ? c->cap * 2 : ARENA_MIN_CHUNK;
		if (cap < n)
			cap = n;
		if (cap > SIZE_MAX - sizeof(etc_arena_chunk))
			return NULL;
		etc_arena_chunk *fresh = malloc(sizeof(etc_arena_chunk) + cap);
		if (!fresh)
			return NULL;
		fresh->cap = cap;
		fresh->used = 0;
		/* A big one-off block goes behind the current chunk so the space
		 * left in the current chunk is not abandoned. */
		if (c && n > c->cap) {
			fresh->next = c->next;
			c->next = fresh;
		} else {
			fresh->next = c;
			a->head = fresh;
		}
		c = fresh;
	}
	void *p = c->mem + c->used;
	c->used += n;
	a->total += n;
	memset(p, 0, n);
	return p;
}

char *etc_arena_strdup(etc_arena *a, const char *s, size_t len)
{
	char *p = etc_arena_alloc(a, len + 1, 1);
	if (!p)
		return NULL;
	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}
