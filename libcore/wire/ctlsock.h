/* SPDX-License-Identifier: MIT */
/* Control socket paths, discovery of live agents, and the client side. */
#ifndef PALLOC_CTLSOCK_H
#define PALLOC_CTLSOCK_H

#include "common.h"
#include "http.h"

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
 * The agent side (ctlsock_dir, ctlsock_prepare_dir, ctlsock_clean_stale)
 * uses no stdio; ctlsock_clean_stale() calls opendir(), which allocates,
 * so the agent calls it with its reentrancy guard set. The client side
 * (ctlsock_find, ctlsock_get, ctlsock_list) is for the commands.
 * Errors: -1 after msg_set() saying why, errno set as noted.
 */

#define CTLSOCK_PATH_MAX 108 /* sizeof(sun_path) */

/*
 * The largest answer read from an agent. Its largest one is a raw profile
 * of the stack table's cap, 65536 stacks of at most 256 frames: at most
 * 16.8 M locations of about 18 bytes and 65536 samples of about 1.2 KiB,
 * 382 MB with strings and mappings (pprof.h, PPROF_MAX_SIZE), and gzip
 * adds at most 0.1 % to data it cannot compress.
 */
#define CTLSOCK_MAX_RESPONSE ((size_t)512 << 20)

/* Called with one line (no prefix) for each thing a listing skipped. */
typedef void ctlsock_warn_fn(void *ctx, const char *msg);

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

/*
 * Find the socket of process pid: in this user's directories (XDG and
 * /tmp), then in the directories of the user owning /proc/PID, then among
 * the bound unix sockets of /proc/net/unix; a socket in a directory that
 * fails the checks above is passed over. Returns 0 with the path, or -1
 * with errno ENOENT (no socket: the process has no agent), EACCES (it
 * exists in a directory this user may not enter) or EPERM (only in unsafe
 * directories: "unsafe socket directory 'DIR': owned by uid N"), and
 * msg_set().
 */
int ctlsock_find(pid_t pid, char *buf, size_t len);

/*
 * Connect to the agent of pid and GET target ("/debug/pprof/heap?..."),
 * reading the whole response, all within timeout_ms (connecting too).
 * Returns 0 with *resp (free with http_response_free; any status), or -1
 * with msg_set() giving the reason only (the caller adds "cannot reach
 * agent of process 'PID'"): "no such process", "no palloc agent in this
 * process", "permission denied ...", "stale socket ...", "timed out ...",
 * "unsafe socket directory ...", "socket '...' is served by process N, not
 * by process PID", "response too large: ...".
 */
int ctlsock_get(pid_t pid, const char *target, int timeout_ms,
		struct http_response *resp);

/* The same on a known socket path, named "PID.sock" after its process. */
int ctlsock_get_path(const char *path, const char *target, int timeout_ms,
		     struct http_response *resp);

struct ctlsock_agent {
	pid_t pid;
	char path[CTLSOCK_PATH_MAX];
};

/*
 * The live agents in this user's socket directories, sorted by pid,
 * stale sockets skipped, and directories that fail the checks above
 * skipped whole. *out is malloc'd (free it); *n may be 0.
 * Returns 0, or -1 on ENOMEM.
 */
int ctlsock_list(struct ctlsock_agent **out, size_t *n);

/* The same, calling warn (when not NULL) for each directory skipped. */
int ctlsock_list_warn(struct ctlsock_agent **out, size_t *n,
		      ctlsock_warn_fn *warn, void *ctx);

#endif /* PALLOC_CTLSOCK_H */
