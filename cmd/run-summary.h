/* SPDX-License-Identifier: MIT */
/* palloc-run: symbolize the profiles it wrote and print a line for each. */
#ifndef PALLOC_RUN_SUMMARY_H
#define PALLOC_RUN_SUMMARY_H

#include "common.h"
#include "collect.h"

/*
 * Symbolize (unless raw) every profile palloc-run wrote from its
 * processes' records (col's items), in place, and unless quiet print one
 * summary line for each on stderr (the 10 that allocated most, and a line
 * for the rest, when there are more), paths shown relative to cwd when
 * inside it. Problems are warnings: the program has run, its status
 * stands. Returns how many profiles there were. Not thread-safe.
 */
size_t run_summary(struct collect *col, const char *cwd, bool raw, bool quiet);

#endif /* PALLOC_RUN_SUMMARY_H */
