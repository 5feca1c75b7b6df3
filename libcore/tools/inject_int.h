/* SPDX-License-Identifier: MIT */
/* What inject.c and inject_copy.c share: the agent's copy in another mount
 * namespace. For palloc-run -p only; not thread-safe (msg_set). */
#ifndef PALLOC_INJECT_INT_H
#define PALLOC_INJECT_INT_H

#include "common.h"
#include "inject.h"

#include <sys/types.h>

/*
 * Copy AGENT into the first safe one of /tmp, /var/tmp, /dev/shm under
 * PID's root (/proc/PID/root; every component opened O_NOFOLLOW, the
 * directory owned by root or us, sticky when others may write, the copy
 * made O_EXCL under a random name "palloc-agent-TAG-HEX.so"). Sets
 * T->agent (the path as the process sees it), T->copy_name and
 * T->copy_dir (kept open for the removal, inject_release()). Returns 0,
 * or -1 with msg_set() saying why and nothing left behind.
 */
int inject_copy_agent(pid_t pid, const char *agent, struct inject_target *t);

/*
 * The path of the loaded copy whose maps base name is BN
 * ("palloc-agent-TAG-HEX.so", maybe " (deleted)" after) into OUT[CAP], or
 * "" when it is not one of ours. Never fails.
 */
void inject_copy_of_maps(const char *bn, char *out, size_t cap);

#endif /* PALLOC_INJECT_INT_H */
