/* SPDX-License-Identifier: MIT */
/* The commands' half of the control socket: finding and asking an agent. */
#ifndef PALLOC_CTLSOCK_CLIENT_H
#define PALLOC_CTLSOCK_CLIENT_H

#include "common.h"
#include "ctlsock.h"
#include "http_client.h"

/*
 * The checks the client makes before it trusts a socket are described in
 * ctlsock.h. Errors: -1 after msg_set() saying why, errno set as noted.
 */

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

#endif /* PALLOC_CTLSOCK_CLIENT_H */
