/* SPDX-License-Identifier: MIT */
/* palloc-run's profiles: written from its processes' records, and listed. */
#ifndef PALLOC_COLLECT_H
#define PALLOC_COLLECT_H

#include "common.h"
#include "pprof.h"

#include <sys/stat.h>

/*
 * palloc-run writes every profile of its processes itself, from their
 * records (runrec.h): interval, peak and memory pressure profiles while
 * they run, the exit profile when they end (the agent writes none under
 * palloc-run, and nothing passes between the two but the record). This
 * keeps the list of those files, numbers them per process (%n), and reads
 * them back for the summary. Files are written with safefile.h at the
 * output pattern's name, mode 0600, as palloc-run's user.
 */

struct collect;

/* One profile file palloc-run wrote. */
struct collect_item {
	pid_t pid;
	uid_t uid;	  /* the record's */
	char program[64]; /* %e, file-name safe */
	char title[128];  /* its process title, printable */
	char *path;
	dev_t dev;
	ino_t ino;
	char seq[24];	    /* its %n ("3", "peak", "at90") */
	int64_t written_ns; /* unix time */
};

/* Keep profiles named by pattern (absolute). NULL with msg_set() on
 * ENOMEM. */
struct collect *collect_start(const char *pattern);

/*
 * Write p, a profile palloc-run made from the record of process pid
 * (runrec.h), at the pattern's name for pid, program and seq (NULL: the
 * pid's next number), with safefile.h (mode 0600, this process's user),
 * and keep an item of it (uid, title for the item). The path goes to
 * path[cap] when path is not NULL. Thread-safe. 0, 1 when the pattern
 * discards (/dev/null), or -1 with msg_set().
 */
int collect_add(struct collect *c, pid_t pid, uid_t uid, const char *program,
		const char *title, const char *seq,
		const struct pprof_profile *p, char *path, size_t cap);

/*
 * Call hook(ctx, item) after each profile collect_add() wrote (palloc-run
 * --timeline's profile events, timeline.h), from the thread that wrote it,
 * with the collection's lock held: the hook must not call back into c.
 * NULL: none.
 */
void collect_set_hook(struct collect *c,
		      void (*hook)(void *ctx, const struct collect_item *it),
		      void *ctx);

/* The items, sorted by path (one per path, the latest). Valid until
 * collect_free() or the next collect_add(). */
const struct collect_item *collect_items(const struct collect *c, size_t *n);

/*
 * Read the profile of item it back, checking that the file at its path is
 * still a regular file with the same identity (opened without following a
 * symlink, never blocking). NULL with msg_set() otherwise. *mode is the
 * file's permission bits.
 */
struct pprof_profile *collect_read(const struct collect_item *it, mode_t *mode);

/*
 * Replace the file of item it with p (a symbolized profile), keeping the
 * file's mode exactly. 0 or -1 with msg_set().
 */
int collect_rewrite(const struct collect_item *it,
		    const struct pprof_profile *p, mode_t mode);

void collect_free(struct collect *c);

#endif /* PALLOC_COLLECT_H */
