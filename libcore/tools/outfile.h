/* SPDX-License-Identifier: MIT */
/* The commands' one way to write an output file the user names. */
#ifndef PALLOC_OUTFILE_H
#define PALLOC_OUTFILE_H

#include "common.h"
#include "safefile.h"

/*
 * Every command writes its -o/--output file here, with base/safefile.c's
 * rules (the agent's and palloc-run's writer): the data goes to an
 * exclusive temporary in the file's directory, made whole, then given the
 * name by rename(2). The name itself is never opened: a symbolic link
 * there is never followed, a FIFO never blocks the command nor hands its
 * data to a reader, a socket or a device is never written. Such a name
 * (something planted in a sticky, world-writable directory such as /tmp)
 * is refused: "cannot write 'PATH': it is a FIFO". Three names are not
 * files: "-" (or NULL) is standard output; "/dev/fd/N" and
 * "/proc/self/fd/N" are a descriptor the caller handed down (bash's
 * >(...)), written in place as the user's own stream; and the character
 * device /dev/null (1:3), wherever its node is, means "discard".
 */
struct outfile {
	FILE *fp;	    /* write here */
	char *path;	    /* final name, NULL for stdout */
	bool direct;	    /* a descriptor handed down, or the discard */
	struct safefile sf; /* the temporary, when path is a file */
	struct safefile_xfsz xfsz; /* SIGXFSZ blocked meanwhile */
};

/*
 * Open path for writing as above. The temporary is created with mode
 * 0666 less the umask. SIGXFSZ is blocked in the calling thread until
 * outfile_commit() or outfile_abort() (a file past `ulimit -f` is a write
 * error, EFBIG). Returns 0, or -1 with msg_set() saying "cannot write
 * 'PATH': why" (one line, the path named once). Not thread-safe per
 * object.
 */
int outfile_open(struct outfile *o, const char *path);

/*
 * Whether path could be written now, without creating anything: 0 when
 * it is absent or a regular file (or stdout, a descriptor handed down,
 * /dev/null), -1 with msg_set() as outfile_open() when it is something
 * else or its directory is missing. For a command to refuse a bad -o at
 * once, before it does its work; outfile_open() checks again.
 */
int outfile_check(const char *path);

/*
 * Flush, fsync and give the file its name (stdout: flush only). Returns 0,
 * or -1 with msg_set() saying why; on failure the temporary file is
 * removed and PATH is left as it was. Frees o's memory either way.
 */
int outfile_commit(struct outfile *o);

/* Drop the temporary file; PATH is left as it was. Frees o's memory. */
void outfile_abort(struct outfile *o);

#endif /* PALLOC_OUTFILE_H */
