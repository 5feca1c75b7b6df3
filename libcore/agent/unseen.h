/* SPDX-License-Identifier: MIT */
/* Memory the agent cannot see: anonymous memory that did not come from malloc.
 */
#ifndef PALLOC_UNSEEN_H
#define PALLOC_UNSEEN_H

#include "common.h"

/*
 * A heap profile only shows what came through malloc. Go, V8 (node), the
 * JVM and Python's pymalloc keep their own heaps in anonymous memory they
 * map themselves, and a profile of such a process looks complete while
 * it shows a fraction of the memory. So, once at exit and at each stats
 * read (never in a hook), the agent compares the anonymous memory the
 * process held (/proc/self/status: RssAnon now, and at the peak estimated
 * as VmHWM - RssFile - RssShmem, which assumes the file-backed part was
 * about the same at the peak) with the malloc heap it saw (the highest of
 * the allocator's mapped bytes now, the sampled peak with 16 bytes of
 * allocator overhead per object, and the exact peak), less the agent's
 * own memory. When most of it (more than half, and at least 16 MiB) did
 * not come through malloc, it says so, naming the likely owner recognised
 * from the loaded objects.
 *
 * Reads /proc with open/read into stack buffers: no allocation.
 */

#define UNSEEN_MIN_BYTES ((int64_t)16 << 20)

struct unseen {
	int64_t anon_bytes;	 /* RssAnon now; -1 unknown */
	int64_t anon_peak_bytes; /* estimated peak anonymous RSS; -1 */
	int64_t heap_bytes;	 /* the malloc heap the agent saw */
	int64_t unseen_bytes;	 /* anonymous memory beyond it (>= 0); -1 */
	bool most;		 /* more than half, and >= UNSEEN_MIN_BYTES */
	bool at_peak;		 /* compared at the peak (else: now) */
	const char *owner;	 /* "the Go runtime", ..., or NULL */
	const char *hint;	 /* what to do instead, or NULL */
};

/* At agent init (the loader is usable): recognise a Go executable and an
 * active pymalloc, and detect the allocator. */
void unseen_init(void);

/* Go: the executable carries the Go build id note (unseen_init). */
bool unseen_is_go(void);

/* When unseen_measure() looks for the likely owner (a read of
 * /proc/self/maps): never (nothing the agent writes will name it), when
 * most is set (the warning names it only then), always. */
enum unseen_owner {
	UNSEEN_OWNER_NEVER,
	UNSEEN_OWNER_IF_MOST,
	UNSEEN_OWNER_ALWAYS,
};

/* Measure now. heap_peak_bytes: the sampled or exact peak of the malloc
 * heap (requested bytes plus overhead), or -1 when unknown (rate 0):
 * then only the current figures are compared. The likely owner is found
 * as owner says, else u->owner and u->hint stay NULL. */
void unseen_measure(struct unseen *u, int64_t heap_peak_bytes,
		    enum unseen_owner owner);

/* The warning for u->most, without "palloc: warning: ", into buf[cap]:
 * "most of this process's memory did not come through malloc: ...". */
void unseen_text(const struct unseen *u, char *buf, size_t cap);

#endif /* PALLOC_UNSEEN_H */
