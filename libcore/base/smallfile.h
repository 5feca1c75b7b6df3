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
 * The number in buf[0, n) (need not be NUL-terminated), as
 * smallfile_u64() reads it: one decimal number or "max" (UINT64_MAX),
 * trailing spaces and newlines ignored. Returns 0, or -1 with EINVAL and
 * msg_set() saying why (also for a NUL byte, or more than
 * SMALLFILE_U64_CAP - 1 bytes before the trailing blanks).
 */
#define SMALLFILE_U64_CAP 24
int smallfile_parse_u64(const char *buf, size_t n, uint64_t *out);

/*
 * The one decimal number in the file at path (cgroup's memory.current,
 * memory.max...), trailing spaces and newlines ignored; "max" (cgroup
 * v2's "no limit") reads as UINT64_MAX; a file of 63 bytes or more is
 * refused (EINVAL). Returns 0, or -1 with errno:
 * the file's own, or EINVAL when it holds something else (with msg_set()
 * saying why).
 */
int smallfile_u64(const char *path, uint64_t *out);

#endif /* PALLOC_SMALLFILE_H */
