/* SPDX-License-Identifier: MIT */
/* The TCP HTTP server of the commands: agents' endpoints and /metrics. */
#ifndef PALLOC_SERVE_H
#define PALLOC_SERVE_H

#include "common.h"

/*
 * palloc-run --http ADDR and palloc-dump --serve ADDR serve, with
 * libmicrohttpd, the agents' endpoints for a set of processes:
 *
 *	/debug/pprof/heap[?seconds=N]  symbolized pprof (symbolize=0: raw)
 *	/debug/pprof/allocs[?seconds=N]
 *	/debug/palloc/stats	      the agent's JSON, as it answered
 *	/debug/palloc/mallinfo
 *	/metrics		      Prometheus text for every process of
 *				      the set: counters, allocator, smaps
 *				      rollup, cgroup
 *	/			      a text index of the processes
 *
 * Processes are told apart by a "pid" query parameter (?pid=1234). Without
 * it, the root process answers (palloc-run's program), or the only process
 * of the set; a set of several without a root gives 400 listing them.
 *
 * ADDR is "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT"; without a host the
 * server listens on 127.0.0.1 only (loopback unless named). Port 0 picks
 * a free port (serve_url() tells which).
 *
 * Who may read: the server's own user (its effective uid) and root, and
 * whoever serve_access adds. A client's user is found by looking up its
 * end of the TCP connection in /proc/net/tcp and tcp6 (a local client on
 * any address of this host); others get 403 and a warning line on stderr
 * (at most one a second). Only with "any" is the client's user not
 * looked up, and only then may ADDR be other than loopback. At most 8
 * connections of refused clients are open at once; more are closed at
 * accept.
 *
 * Limits: at most 2048 connections at once (fewer when the fd limit is
 * lower: serve_start raises the soft RLIMIT_NOFILE up to the hard one,
 * see serve_child_limits); one idle 30 s is closed. One thread polls every
 * connection; 4 worker threads talk to the agents, so the thread count does
 * not grow with connections. ?seconds=N (1 to SERVE_MAX_SECONDS) is taken
 * by the server, not the agent: two snapshots N seconds apart, the agent
 * free meanwhile; at most 16 at once (more: 503); a client that hangs up
 * ends its wait within 0.2 s.
 *
 * Errors are reported as NULL/-1 with msg_set(). Thread-safety: start
 * and stop from one thread.
 */

#define SERVE_MAX_SECONDS 3600 /* ?seconds=N */
#define SERVE_MAX_USERS 32     /* --allow-users */

/* Who may read besides the server's own user and root (--allow-users). */
struct serve_access {
	bool any;		     /* whoever can connect, remote hosts too */
	uid_t uids[SERVE_MAX_USERS]; /* these local users */
	size_t n_uids;
};

/*
 * Parse --allow-users: "any", or a comma-separated list of user names and
 * uids (and "any" among them). 0, or -1 with msg_set() ("no such user
 * 'x'").
 */
int serve_parse_access(const char *arg, struct serve_access *a);

/*
 * Whether a server for a may listen on addr: a non-loopback address needs
 * a->any, since a remote client's user cannot be known. 0, or -1 with
 * msg_set() saying why (also for an address that does not parse).
 */
int serve_check_addr(const char *addr, const struct serve_access *a);

/*
 * In a child about to exec a program: give back the fd limit serve_start
 * raised (async-signal-safe).
 */
void serve_child_limits(void);

struct serve;

struct serve_config {
	const pid_t *pids; /* a fixed set, or NULL */
	size_t n_pids;
	pid_t root_pid;		    /* with no fixed set: this process ... (-1:
				     * none yet, see serve_set_root) */
	bool follow_descendants;    /* ... and its descendants with agents;
				     * root_pid 0: every agent of this user */
	bool symbolize;		    /* profiles symbolized (query symbolize=0
				     * turns it off per request) */
	int timeout_ms;		    /* per read from an agent; 0: default */
	struct serve_access access; /* who may read; zeroed: owner, root */
	/* A refused client, at most one line a second (the command prints
	 * it: cli_warn_line); NULL: not told. From the server's threads. */
	void (*warn)(const char *line);
};

/*
 * Start serving on addr for root_pid (and, with follow_descendants, its
 * descendants that run an agent, looked up at each request). Profiles are
 * symbolized. Returns the server, or NULL with msg_set().
 */
struct serve *serve_start(const char *addr, pid_t root_pid,
			  bool follow_descendants);

/*
 * Set the root process later: palloc-run starts the server before the
 * program (so that a bad address fails before anything runs) with
 * root_pid -1, which serves no process until this call gives the
 * program's pid. Thread-safe against the server's threads.
 */
void serve_set_root(struct serve *s, pid_t root_pid);

/* The same with every setting. */
struct serve *serve_start_config(const char *addr,
				 const struct serve_config *cfg);

/* "http://127.0.0.1:PORT" (the port actually bound). Owned by s. */
const char *serve_url(const struct serve *s);

/* Stop the server, waiting for its threads; frees s. NULL is allowed. */
void serve_stop(struct serve *s);

#endif /* PALLOC_SERVE_H */
