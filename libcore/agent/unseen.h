/* SPDX-License-Identifier: MIT */
/* Memory the agent cannot see: anonymous memory that did not come from malloc.
 */
#ifndef PALLOC_UNSEEN_H
#define PALLOC_UNSEEN_H

#include "common.h"
#include "unseen_calc.h"

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
 * Reads /proc with open/read into stack buffers: no allocation. The
 * figures and the warning are pprof/unseen_calc.h's, which the commands
 * use from outside.
 */

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

#endif /* PALLOC_UNSEEN_H */
