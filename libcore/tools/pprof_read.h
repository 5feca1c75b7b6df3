/* SPDX-License-Identifier: MIT */
/* The profile reader's entry for pprof_read_file() (pprof.h has the rest). */
#ifndef PALLOC_PPROF_READ_H
#define PALLOC_PPROF_READ_H

#include "common.h"
#include "pprof.h"

/*
 * pprof_read_fd() (pprof.h), and *io: whether a failure was reading the
 * file (its size past the limit, a read error) rather than what it holds
 * (not a profile, past the limit uncompressed, a decoder's refusal), so
 * that the caller says "cannot read" or "cannot decode". Thread-safe per
 * fd; commands only (zlib).
 */
struct pprof_profile *pprof_read_fd_io(int fd, size_t max, bool *io);

#endif /* PALLOC_PPROF_READ_H */
