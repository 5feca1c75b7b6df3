/* SPDX-License-Identifier: MIT */
/* The user's palloc directory, where records live: both sides. */
#ifndef PALLOC_RUNDIR_H
#define PALLOC_RUNDIR_H

#include "common.h"

#include <limits.h>

/*
 * The directory the agent keeps its record in (wire/record.h) when
 * palloc-run gives it none, and where the commands look for the records
 * of processes that are gone (palloc(7) FILES):
 *
 *	$XDG_RUNTIME_DIR/palloc   when XDG_RUNTIME_DIR is set, is an
 *				  absolute path and a directory owned by
 *				  the effective user
 *	/tmp/palloc-UID		  otherwise (UID: the effective uid)
 *
 * The directory is 0700, so only the same user (and root) may read what
 * is in it. Another user may create /tmp/palloc-UID first: the agent
 * uses a directory only when it is its user's and open to nobody else
 * (rundir_prepare), and a reader checks each record it reads (record.h,
 * "Trust"). No stdio, no allocation: the agent calls these. Errors: -1
 * after msg_set() saying why, errno set as noted.
 */

/* This user's directory, as above, into buf. 0, or -1 if too long. */
int rundir_path(char *buf, size_t len);

/*
 * Create dir (0700) if missing and check it is safe to use: a real
 * directory (not a symlink), owned by the effective uid, without group or
 * other permissions. Returns 0, or -1 with errno and msg_set().
 */
int rundir_prepare(const char *dir);

/* /tmp/palloc-UID, the fallback directory of user uid, into buf. 0 or -1. */
int rundir_tmp(uid_t uid, char *buf, size_t len);

#endif /* PALLOC_RUNDIR_H */
