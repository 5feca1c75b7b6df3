/* SPDX-License-Identifier: MIT */
/* palloc-dump's list of the processes under palloc (no operand). */
#ifndef PALLOC_DUMP_LIST_H
#define PALLOC_DUMP_LIST_H

#include "common.h"
#include "table.h"

/* The list's columns, for --help and --columns. */
extern const struct table_spec dump_list_spec;

/*
 * Print the live processes under palloc the caller can read, then the
 * records of those that ended: the table of dump_list_spec (columns, -n, -r
 * from table) or, with json, the palloc-dump-list document on stdout.
 * timeout_ms is passed to allocinfo_list(). Returns the exit status
 * (PALLOC_EXIT_OK, or PALLOC_EXIT_TROUBLE after one line on stderr).
 */
int dump_list(const struct table_opts *table, bool json, int timeout_ms);

/* allocinfo's warning callback: the message as one warning line. */
void dump_warn(void *ctx, const char *message);

#endif /* PALLOC_DUMP_LIST_H */
