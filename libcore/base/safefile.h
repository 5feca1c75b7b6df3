/* SPDX-License-Identifier: MIT */
/* Files created safely in directories that other users can write. */
#ifndef PALLOC_SAFEFILE_H
#define PALLOC_SAFEFILE_H

#include "common.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

/*
 * For the agent (inside other people's processes: no malloc, no stdio, no
 * lock, only system calls) and for the commands alike. A file is written
 * to a temporary that no other process can open, then given its name:
 *
 *  - The temporary is an unnamed O_TMPFILE where the file system has it
 *    and /proc/self/fd can name it (linkat(2)); otherwise a new file
 *    ".palloc.<16 random hex digits>.tmp" created with O_EXCL|O_NOFOLLOW,
 *    so nothing planted in advance (a file, a symlink, a FIFO in a sticky
 *    /tmp) is ever opened. An unnamed temporary vanishes by itself if the
 *    writer dies (SIGKILL) before it is linked.
 *  - The final name is never opened: a symlink there is never followed, a
 *    FIFO never blocks the writer, a device is never written. A regular
 *    file there is replaced by rename(2), which does not follow links
 *    either; anything else at the name (symlink, FIFO, socket, device,
 *    directory) is left alone and the write fails, saying what it is.
 *    The one exception is the character device /dev/null (1:3), which
 *    safefile_open() reports as "discard" so that an output of /dev/null
 *    keeps meaning "nothing".
 *  - A write past the file size limit (RLIMIT_FSIZE, `ulimit -f`) fails
 *    with EFBIG instead of killing the process with SIGXFSZ: the signal is
 *    blocked in the calling thread around the write and the one the write
 *    raised is taken back; the thread's mask and the process's signal
 *    dispositions are as they were afterwards.
 *
 * The directories on the way to the name are followed as usual (whoever
 * controls a directory controls what is in it anyway). Functions return 0
 * or -1 with errno set and msg_set() naming the path. Thread-safe per
 * object; the object lives on the caller's stack.
 */

struct safefile {
	int dirfd;		 /* the directory, O_PATH */
	int fd;			 /* the temporary, open for writing */
	bool named;		 /* the temporary has the name tmp */
	char name[NAME_MAX + 1]; /* the final name within dirfd */
	char tmp[40];		 /* the temporary's name, when named */
	const char *path;	 /* the caller's path, for messages */
};

/*
 * Start writing path (its directory must exist): a temporary created with
 * mode (less the umask). Returns 0 (write with safefile_write(), then
 * safefile_commit() or safefile_abort()), 1 when path is /dev/null
 * (nothing to write, nothing to commit), or -1: path is something other
 * than a regular file or absent (ELOOP for a symlink, EEXIST otherwise),
 * or the temporary cannot be created. path must outlive the object.
 */
int safefile_open(struct safefile *sf, const char *path, mode_t mode);

/* Write all of buf (EINTR and short writes retried; EFBIG, never
 * SIGXFSZ). 0 or -1. */
int safefile_write(struct safefile *sf, const void *buf, size_t len);

/*
 * Around any write that may pass the file size limit: SIGXFSZ blocked in
 * the calling thread (begin), then the one a write raised with EFBIG
 * taken back, unless one was pending before, and the mask restored (end;
 * err: the write's errno, or 0). safefile_write() does this itself.
 */
struct safefile_xfsz {
	sigset_t old;
	bool was_pending;
};
void safefile_xfsz_begin(struct safefile_xfsz *x);
void safefile_xfsz_end(struct safefile_xfsz *x, int err);

/*
 * Give the temporary its final name (replacing a regular file there) and
 * close it. Returns 0, or -1 with the temporary removed and the name left
 * as it was. With st non-NULL, *st is the written file's fstat().
 */
int safefile_commit(struct safefile *sf, struct stat *st);

/* Close and remove the temporary; the final name is left as it was. */
void safefile_abort(struct safefile *sf);

/* open, write len bytes, commit: the whole cycle for one buffer. Returns
 * 0 (or 1 for /dev/null, nothing written) or -1. */
int safefile_write_file(const char *path, mode_t mode, const void *buf,
			size_t len, struct stat *st);

#endif /* PALLOC_SAFEFILE_H */
