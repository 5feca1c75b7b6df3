/* SPDX-License-Identifier: MIT */
/* Allocator state read inside the target: glibc, jemalloc, mimalloc, tcmalloc.
 */
#ifndef PALLOC_ALLOCSTATS_H
#define PALLOC_ALLOCSTATS_H

#include "common.h"

/*
 * The allocator is detected at run time: the object that defines the malloc
 * the agent forwards to (dlsym(RTLD_NEXT, "malloc"), then the loaded object
 * containing it: phdr_object_path) is asked for mallctl (jemalloc, also
 * je_mallctl), mi_process_info (mimalloc) and
 * MallocExtension_GetNumericProperty (tcmalloc); a malloc from libc.so is
 * glibc; anything else is "unknown". So LD_PRELOAD="libpalloc.so
 * libjemalloc.so.2" reports jemalloc.
 *
 * Everything here runs with the reentrancy guard set: dlopen and
 * fmemopen (glibc's malloc_info) allocate with malloc, untracked. The allocator
 * calls themselves lock the allocator briefly (glibc takes each arena's mutex
 * while it walks the free lists), as any thread calling them would.
 */

enum allocstats_kind {
	ALLOCSTATS_UNKNOWN,
	ALLOCSTATS_GLIBC,
	ALLOCSTATS_JEMALLOC,
	ALLOCSTATS_MIMALLOC,
	ALLOCSTATS_TCMALLOC,
};

/* The fields every allocator is asked for; -1 means "cannot say" (null). */
struct allocstats_comparable {
	int64_t allocated_bytes; /* in use by the program (usable sizes) */
	int64_t active_bytes;	 /* in pages holding live allocations */
	int64_t resident_bytes;	 /* resident in RAM, allocator's view */
	int64_t mapped_bytes;	 /* mapped from the OS, incl. free */
	int64_t retained_bytes;	 /* virtual space kept but not mapped/used */
	int64_t free_bytes;	 /* free inside the allocator's heaps */
	int64_t metadata_bytes;	 /* the allocator's own bookkeeping */
	int64_t arena_count;	 /* arenas (glibc, jemalloc) */
};

/* Detect the allocator (cached after the first call). Thread-safe. */
enum allocstats_kind allocstats_detect(void);

/*
 * Fill *c from the detected allocator, -1 where it cannot say. Returns the
 * kind. For glibc this is mallinfo2() alone, so arena_count stays -1 here
 * (counting arenas needs malloc_info, a second walk of every free list:
 * the commands count them in allocstats_malloc_info_text()'s text).
 */
enum allocstats_kind allocstats_comparable(struct allocstats_comparable *c);

/*
 * glibc's malloc_info(3) XML written into buf[cap] (through fmemopen: the
 * caller holds the guard, the stream's own malloc passes untracked), cut
 * at cap - 1 bytes and NUL-terminated. Its length; 0 on failure (buf
 * then holds ""). Any thread.
 */
size_t allocstats_malloc_info_text(char *buf, size_t cap);

#endif /* PALLOC_ALLOCSTATS_H */
