/* SPDX-License-Identifier: MIT */
/* palloc-run's end of the channel: profiles its descendants deliver. */
#ifndef PALLOC_COLLECT_H
#define PALLOC_COLLECT_H

#include "common.h"
#include "pprof.h"

#include <sys/stat.h>

/*
 * A thread that listens on a fresh abstract unix socket (deliver.h) and,
 * for each peer that is a descendant of this process (SO_PEERCRED pid,
 * its parent chain in /proc; the caller makes itself a child subreaper so
 * that orphans stay descendants), takes one message: a hello, a profile to
 * write (written with safefile.h at the output pattern's name for the
 * peer's pid, mode 0600, as this process's user), or the agent's word
 * that it wrote a file itself or could not. Connections are bounded in
 * number, size (DELIVER_MAX_PAYLOAD) and time (COLLECT_TIMEOUT_MS from
 * accept); peers that are not descendants are refused unread.
 */

#define COLLECT_TIMEOUT_MS 15000

struct collect;

enum collect_state {
	COLLECT_HELLO,	   /* the process said hello, nothing since */
	COLLECT_RECEIVED,  /* a profile palloc-run wrote (path, dev, ino) */
	COLLECT_ANNOUNCED, /* a profile the agent wrote (path, dev, ino) */
	COLLECT_FAILED,	   /* a profile that could not be written (why) */
};

/* One record per profile file, failure, or process that said hello. */
struct collect_item {
	enum collect_state state;
	pid_t pid;
	uid_t uid;	  /* the peer's */
	char program[64]; /* %e, file-name safe */
	char title[128];  /* its process title, printable */
	char *path;	  /* RECEIVED, ANNOUNCED, FAILED (may be "") */
	dev_t dev;
	ino_t ino;
	char *why; /* FAILED; HELLO: the agent's note (a Go program), or NULL */
	/* RECEIVED: palloc-run wrote it from the process's record
	 * (collect_add), at unix time written_ns */
	bool from_record;
	char seq[24]; /* RECEIVED: its %n ("3", "peak", "at90") */
	int64_t written_ns;
};

/*
 * Start collecting profiles named by pattern (absolute). Writes the value
 * for PALLOC_COLLECT ("@NAME") to env[cap]. NULL with msg_set() on error.
 */
struct collect *collect_start(const char *pattern, char *env, size_t cap);

/*
 * Write p, a profile palloc-run made from the record of process pid
 * (runrec.h), at the pattern's name for pid, program and seq (NULL: the
 * pid's next number, the one an agent's numbered profile would get:
 * collect_start's thread gives the numbered profiles agents deliver the
 * same per-pid numbers, so that the two never take each other's name),
 * as collect_start's thread writes what agents deliver (safefile.h, mode
 * 0600, this process's user), and keep a RECEIVED record of it (uid, title
 * for the item). The path goes to path[cap] when path is not NULL. Works
 * before and after collect_stop(); safe against collect_start's thread.
 * 0, 1 when the pattern discards (/dev/null), or -1 with msg_set().
 */
int collect_add(struct collect *c, pid_t pid, uid_t uid, const char *program,
		const char *title, const char *seq,
		const struct pprof_profile *p, char *path, size_t cap);

/*
 * Take what is still queued (connections made before this call), then
 * stop the thread and close the socket. Later connections are refused
 * (agents then write their files themselves).
 */
void collect_stop(struct collect *c);

/* The records, after collect_stop(): profiles sorted by path first
 * (one per path, the latest), then failures, then hellos with nothing
 * after them. Valid until collect_free(). */
const struct collect_item *collect_items(const struct collect *c, size_t *n);

/* Did an agent deliver, announce, or fail to write a profile of process
 * pid (an item not from_record)? After collect_stop(). */
bool collect_delivered(const struct collect *c, pid_t pid);

/* Connections refused: peers that were not descendants, bad headers. */
size_t collect_refused(const struct collect *c);

/*
 * Read the profile of item it (RECEIVED or ANNOUNCED) back, checking that
 * the file at its path is still a regular file with the same identity
 * (opened without following a symlink, never blocking). NULL with
 * msg_set() otherwise. *mode is the file's permission bits.
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
