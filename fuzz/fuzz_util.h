/* SPDX-License-Identifier: MIT */
/* Helpers shared by the libFuzzer targets: a scratch tree and input split. */
#ifndef PALLOC_FUZZ_UTIL_H
#define PALLOC_FUZZ_UTIL_H

#include "common.h"

#include <stdint.h>

/*
 * The readers under test take a --sysroot directory, not a buffer, so the
 * targets write each input into files of one scratch tree (made once per
 * process under $TMPDIR, /dev/shm when unset, removed at exit) and point
 * the reader at it. Every function aborts on a failure of its own: a
 * broken harness must not look like a clean run.
 */

/* The scratch directory (created on the first call). */
const char *fuzz_root(void);

/* Write data[0, len) to ROOT/REL, creating the parent directories. */
void fuzz_write(const char *rel, const void *data, size_t len);

/* Remove ROOT/REL if it exists. */
void fuzz_unlink(const char *rel);

/*
 * Split data[0, size) at each FUZZ_SEP into at most max parts: part i is
 * parts[i], lens[i]. Parts past the last separator are empty. Returns the
 * number of separators found plus one (capped at max). The separator is
 * the line "%%" and is itself not part of any part, so a part may end
 * without a newline (a truncated file).
 */
/*
 * With FUZZ_VERBOSE set in the environment, fuzz_note() prints to stderr
 * what a reader answered (to check that seeds get past the refusals);
 * otherwise it does nothing.
 */
void fuzz_note(const char *what, int rc);

#define FUZZ_SEP "%%\n"
size_t fuzz_split(const uint8_t *data, size_t size, const uint8_t **parts,
		  size_t *lens, size_t max);

#endif /* PALLOC_FUZZ_UTIL_H */
