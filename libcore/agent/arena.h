/* SPDX-License-Identifier: MIT */
/* The agent's private memory: an mmap-backed allocator that never calls malloc.
 */
#ifndef PALLOC_ARENA_H
#define PALLOC_ARENA_H

#include "common.h"
#include "pprof.h"

#include <pthread.h>

/*
 * The agent must never allocate through the functions it interposes, so
 * everything it keeps outside its record (stack table's index,
 * live-pointer table, profiles being made and encoded) comes from here. Small
 * blocks come from 1 MiB mmap'ed chunks in power-of-two size classes (16 B to
 * 64 KiB) with a free list per class; bigger blocks are mmap'ed one by one and
 * munmap'ed on free, so encoding a large profile gives its memory back.
 * Chunks are never returned to the kernel.
 *
 * Thread-safe: one mutex, taken only on the agent's slow paths. Blocks are
 * 16-byte aligned. Never touches errno on success; failures return NULL
 * with errno = ENOMEM. Not async-signal-safe.
 */
struct arena {
	pthread_mutex_t lock;
	char *bump;	  /* next free byte of the current chunk */
	size_t bump_left; /* bytes left in it */
	void *free_list[13];
	size_t mapped;	   /* bytes mmap'ed, chunks and big blocks */
	size_t in_use;	   /* bytes handed out (size classes rounded) */
	uint64_t failures; /* allocations that returned NULL */
};

#define ARENA_INIT                                                             \
	{                                                                      \
		.lock = PTHREAD_MUTEX_INITIALIZER,                             \
	}

/* Allocate n bytes (n may be 0). NULL on ENOMEM. */
void *arena_alloc(struct arena *a, size_t n);
/* Allocate n * size zeroed bytes; NULL on overflow or ENOMEM. */
void *arena_calloc(struct arena *a, size_t n, size_t size);
/* Free a block from arena_alloc; NULL is allowed. */
void arena_free(struct arena *a, void *p);

/* pprof_allocator hooks whose ctx is a struct arena. */
void arena_fill_allocator(struct arena *a, struct pprof_allocator *out);

/* Fork support: prepare locks, parent unlocks, child reinitialises the
 * lock (the memory is the child's own copy). */
void arena_lock(struct arena *a);
void arena_unlock(struct arena *a);
void arena_reset_lock(struct arena *a);

#endif /* PALLOC_ARENA_H */
