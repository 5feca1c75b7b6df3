/* SPDX-License-Identifier: MIT */
/* Control socket paths, both sides (ctlsock_client.h: the client). */
#ifndef PALLOC_CTLSOCK_H
#define PALLOC_CTLSOCK_H

#include "common.h"

#include <limits.h>

/*
 * Each agent listens on a unix socket named after its pid (palloc(7)):
 *
 *	$XDG_RUNTIME_DIR/palloc/PID.sock   when XDG_RUNTIME_DIR is set, is an
 *					   absolute path and a directory
 *					   owned by the effective user
 *	/tmp/palloc-UID/PID.sock	   otherwise (UID: the effective uid)
 *
 * The directory is 0700 and the socket 0600, so only the same user (and
 * root) may connect. A socket whose pid is gone is stale: the next agent
 * started in that directory removes it, and the commands skip it.
 *
 * The client trusts no name: another user may create /tmp/palloc-UID
 * before the agents do, or bind ".../palloc/PID.sock" anywhere. Before it
 * connects, the socket's directory must be owned by the caller or by the
 * target process's user (real, effective, saved or fs uid) and open to
 * nobody else (no group or other bits), its last component no symbolic
 * link; it connects through that checked directory's fd; and the peer
 * (SO_PEERCRED) must be the process the socket is named after, and run as
 * the caller's user unless the caller is root. Only then is the request
 * sent. The whole exchange has one deadline, and an answer is read up to
 * CTLSOCK_MAX_RESPONSE bytes.
 *
 * This half (ctlsock_dir, ctlsock_prepare_dir, ctlsock_clean_stale) uses
 * no stdio; ctlsock_clean_stale() calls opendir(), which allocates, so the
 * agent calls it with its reentrancy guard set. The client side
 * (ctlsock_client.h: ctlsock_find, ctlsock_get, ctlsock_list) is the
 * commands'.
 * Errors: -1 after msg_set() saying why, errno set as noted.
 */

#define CTLSOCK_PATH_MAX 108 /* sizeof(sun_path) */

/* This user's socket directory, as above, into buf. 0, or -1 if too long. */
int ctlsock_dir(char *buf, size_t len);

/*
 * Create dir (0700) if missing and check it is safe to use: a real
 * directory (not a symlink), owned by the effective uid, without group or
 * other permissions. Returns 0, or -1 with errno and msg_set().
 */
int ctlsock_prepare_dir(const char *dir);

/*
 * Remove the stale sockets "N.sock" in dir: those whose process N no
 * longer exists, and the one named after the caller's own pid (left by an
 * earlier process with the same pid). Returns the number removed.
 */
int ctlsock_clean_stale(const char *dir);

/* "dir/PID.sock" into buf. 0, or -1 when it does not fit. */
int ctlsock_path(const char *dir, pid_t pid, char *buf, size_t len);

/* /tmp/palloc-UID, the fallback directory of user uid, into buf. 0 or -1. */
int ctlsock_tmp_dir(uid_t uid, char *buf, size_t len);

/* The pid of a socket's name "N.sock", or 0 when the name is something
 * else. */
pid_t ctlsock_name_pid(const char *name);

/* Does process pid exist (as far as kill(pid, 0) can tell)? */
bool ctlsock_pid_alive(pid_t pid);

#endif /* PALLOC_CTLSOCK_H */
