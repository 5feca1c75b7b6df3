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
 * Everything here runs in the agent's control thread with the reentrancy
 * guard set: dlopen, open_memstream (glibc's malloc_info) and the text
 * buffer below allocate with malloc, untracked. The allocator calls
 * themselves lock the allocator briefly (glibc takes each arena's mutex
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

/* "glibc", "jemalloc", "mimalloc", "tcmalloc" or "unknown". */
const char *allocstats_name(enum allocstats_kind k);

/*
 * Fill *c from the detected allocator, -1 where it cannot say. Returns the
 * kind. For glibc this is mallinfo2() alone, so arena_count stays -1 here
 * (counting arenas needs malloc_info, a second walk of every free list;
 * allocstats_json() does it). The /debug/palloc/stats path.
 */
enum allocstats_kind allocstats_comparable(struct allocstats_comparable *c);

/*
 * glibc's malloc_info(3) XML written into buf[cap] (through fmemopen: the
 * caller holds the guard, the stream's own malloc passes untracked), cut
 * at cap - 1 bytes and NUL-terminated. Its length; 0 on failure (buf
 * then holds ""). Any thread.
 */
size_t allocstats_malloc_info_text(char *buf, size_t cap);

/*
 * A growable text buffer (malloc'd under the guard). On ENOMEM it stops
 * growing and sets oom; the caller checks once at the end.
 */
struct abuf {
	char *p;
	size_t len, cap;
	bool oom;
};

void abuf_printf(struct abuf *b, const char *fmt, ...) PALLOC_PRINTF(2, 3);
/* Append s as a JSON string literal (quotes, escapes; bytes >= 0x80 that
 * are not valid UTF-8 become '?'). NULL appends null. */
void abuf_json_str(struct abuf *b, const char *s);
/* Append "key":v, or "key":null when v < 0 (with a leading comma when
 * comma is true). */
void abuf_json_i64(struct abuf *b, bool comma, const char *key, int64_t v);
void abuf_free(struct abuf *b);

/*
 * Append the "allocator", "comparable" and "specific" members (without the
 * enclosing braces, starting with a comma) of the /debug/palloc/mallinfo
 * document, as palloc-mallinfo(1) documents them.
 */
void allocstats_json(struct abuf *b);

#endif /* PALLOC_ALLOCSTATS_H */
