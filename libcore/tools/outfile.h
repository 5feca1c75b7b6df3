/* SPDX-License-Identifier: MIT */
/* Output files that appear whole or not at all: temporary name, then rename. */
#ifndef PALLOC_OUTFILE_H
#define PALLOC_OUTFILE_H

#include "common.h"

struct outfile {
	FILE *fp;    /* write here */
	char *path;  /* final name, NULL for stdout */
	char *tmp;   /* temporary name in the same directory */
	bool direct; /* PATH is no regular file: written in place */
};

/*
 * Open PATH for writing ("-" or NULL: stdout). The data goes to
 * PATH.tmp.XXXXXX in PATH's directory (mode 0644 less umask) until
 * outfile_commit(). A PATH that exists and is not a regular file (/dev/null,
 * a FIFO, a terminal) is written in place: renaming over it would replace a
 * device node with a file. Returns 0, or -1 with msg_set() naming the path and
 * errno's reason. Not thread-safe per object.
 */
int outfile_open(struct outfile *o, const char *path);

/*
 * Flush, fsync and rename into place (stdout: flush only). Returns 0, or -1
 * with msg_set() saying why; on failure the temporary file is removed and
 * PATH is left as it was. Frees o's memory either way.
 */
int outfile_commit(struct outfile *o);

/* Drop the temporary file; PATH is left as it was. Frees o's memory. */
void outfile_abort(struct outfile *o);

#endif /* PALLOC_OUTFILE_H */
