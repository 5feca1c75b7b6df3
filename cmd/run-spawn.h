/* SPDX-License-Identifier: MIT */
/*
 * palloc-run: the program run with the agent preloaded. Finding the agent
 * and the program, the environment, forking and waiting with the signals
 * forwarded (palloc-run's main thread only: not thread-safe; the functions
 * that cannot go on print why and exit 125, or 126/127 as exec would).
 */
#ifndef PALLOC_RUN_SPAWN_H
#define PALLOC_RUN_SPAWN_H

#include "common.h"

#include <signal.h>
#include <sys/types.h>

/* Told of each process palloc-run reaps: its pid and wait status. */
typedef void run_reaped_fn(pid_t pid, int status);

/*
 * The agent: $PALLOC_AGENT; else the build tree's copy when palloc-run
 * runs from a build tree (so an older installed agent never shadows the
 * one just built); else the installed one. Returns a malloc'd absolute
 * path, or NULL after printing why.
 */
char *run_find_agent(void);

/*
 * Resolve name like execvp(3): a name with a slash is used as is, others
 * are searched in $PATH (default: confstr's). Writes the path to out and
 * returns 0, or returns the errno execvp would report: ENOENT, or EACCES
 * when only non-executable candidates were found.
 */
int run_resolve_program(const char *name, char *out, size_t out_size);

/* Set name=value in the environment, or exit 125 on ENOMEM. */
void run_set_env(const char *name, const char *value);

/*
 * Put the agent first in LD_PRELOAD (so its malloc is the one the program
 * calls, and it forwards to a preloaded allocator after it), keeping the
 * user's entries, once.
 */
void run_set_preload(const char *agent);

/*
 * After the program: its descendants still running are palloc-run's
 * children now (subreaper). Reap them as they end, for at most grace_ms,
 * so that profiles written on their way out are collected. Each process
 * reaped is told to reaped.
 */
void run_wait_descendants(int grace_ms, run_reaped_fn *reaped);

/* Refuse with 125 when the loader cannot preload into the program. */
void run_check_preloadable(const char *name, const char *path);

/*
 * Fork and exec; the child reports an exec failure's errno through a
 * close-on-exec pipe, so the parent can tell "ran" from "could not run".
 * Returns the child's pid, or -1 with *exec_errno set.
 */
pid_t run_spawn(const char *path, char **argv, int *exec_errno);

/*
 * Wait for the program without reaping it first (WNOWAIT), so its pid
 * cannot be reused while a signal handler may still kill() it; then reap
 * it with the handlers blocked; the orphans reaped meanwhile and the
 * program are told to reaped. Returns the status the wait gave.
 */
int run_wait_program(pid_t pid, run_reaped_fn *reaped);

/* Block the signals palloc-run forwards to the program (SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2); the mask before goes to *old. */
void run_block_forwarded(sigset_t *old);

#endif /* PALLOC_RUN_SPAWN_H */
