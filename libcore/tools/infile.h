/* SPDX-License-Identifier: MIT */
/* Input files that may be hostile: opened without blocking, read bounded. */
#ifndef PALLOC_INFILE_H
#define PALLOC_INFILE_H

#include "common.h"

#include <sys/stat.h>

/*
 * The commands read files that someone else may have put there: profiles
 * given as operands, and the ELF files a profile's mappings name (which a
 * hostile profile can point at /dev/watchdog, a tape or a FIFO that never
 * gets a writer). So a file is first opened with O_PATH (no open(2) of the
 * object itself: a FIFO does not block, a device driver is not called),
 * checked with fstat(2) to be a regular file, and only then reopened for
 * reading through /proc/self/fd, which names that same inode (no race with
 * a rename). Symbolic links are followed, as the user's own paths need.
 *
 * Library code: errors are -1 or NULL with errno and msg_set().
 */

/*
 * Open path for reading, a regular file only. Returns the fd (O_RDONLY,
 * O_CLOEXEC; *st its fstat when st is not NULL), or -1 with errno (ENOENT
 * and the like from open(2); EINVAL for something other than a regular
 * file) and msg_set() saying why without the path: "not a regular file
 * (a FIFO)", or strerror(errno).
 */
int infile_open(const char *path, struct stat *st);

/*
 * The descriptor number N when path is "/dev/fd/N" or "/proc/self/fd/N"
 * (a descriptor the caller handed down, as bash's <(...) does), else -1.
 * Such a path, like "-", is the user's own stream and may be a pipe.
 */
int infile_fd_path(const char *path);

/*
 * Read all of fd into a malloc'd buffer (*buf, *len; one spare byte
 * after the data), at most max bytes: when st_size (from fstat) is more
 * than max, nothing is read. Returns 0, or -1 with errno (EFBIG: larger
 * than max) and msg_set() saying why without the file's name ("larger
 * than N bytes (SIZE)", or strerror(errno)).
 */
int infile_read_fd(int fd, size_t max, unsigned char **buf, size_t *len);

#endif /* PALLOC_INFILE_H */
