/* SPDX-License-Identifier: MIT */
/* Small files (/proc, /sys, cgroup) read into the caller's buffer. */
#ifndef PALLOC_SMALLFILE_H
#define PALLOC_SMALLFILE_H

#include "common.h"

#include <sys/types.h>

/*
 * For the agent (no malloc, no stdio, no lock: open, read and close
 * only) and the commands alike. The file is opened O_RDONLY | O_CLOEXEC |
 * O_NOFOLLOW (a symbolic link as the last component is refused: ELOOP)
 * and read until EOF or until the buffer is full, EINTR retried, as
 * /proc files may come in several reads.
 */

/*
 * Read the file at path into buf[cap] (cap >= 1), NUL-terminated; what
 * does not fit in cap - 1 bytes is left unread. Returns the number of
 * bytes read (0 for an empty file), or -1 with errno when the file cannot
 * be opened or read.
 */
ssize_t smallfile_read(const char *path, char *buf, size_t cap);

/*
 * The one decimal number in the file at path (cgroup's memory.current,
 * memory.max...), trailing spaces and newlines ignored; "max" (cgroup
 * v2's "no limit") reads as UINT64_MAX. Returns 0, or -1 with errno:
 * the file's own, or EINVAL when it holds something else (with msg_set()
 * saying why).
 */
int smallfile_u64(const char *path, uint64_t *out);

#endif /* PALLOC_SMALLFILE_H */
