/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server's internals (serve.h is its interface), one job a file:
 * serve.c starts and stops the daemon and its threads; serve_access.c is
 * the access policy (the client's uid from /proc/net/tcp, the users
 * allowed); serve_routes.c the routes and their answers (profiles, JSON,
 * the Prometheus text of /metrics); serve_queue.c the job queue, its
 * workers and MHD's callbacks; serve_addr.c the listening address.
 */
#ifndef PALLOC_SERVE_INT_H
#define PALLOC_SERVE_INT_H

#include "serve.h"

#include <microhttpd.h>
#include <pthread.h>
#include <sys/socket.h>

#define SERVE_MAX_CONNECTIONS 2048u /* open TCP connections at once */
#define SERVE_MIN_CONNECTIONS 16u   /* even under a tight fd limit */
#define SERVE_FD_RESERVE 256	    /* fds left for agents, files */
#define SERVE_FOREIGN_MAX 8	    /* connections of users refused */
#define SERVE_IDLE_TIMEOUT_S 30u    /* a silent connection is closed */
#define SERVE_POOL_BYTES 16384	    /* MHD's memory per connection */
#define SERVE_WORKERS 4		    /* threads that talk to agents */
#define SERVE_MAX_DELTAS 16	    /* ?seconds=N requests at once */
#define SERVE_TICK_MS 200	    /* how often a hang-up is noticed */

struct job;

/* What the accept policy found out about a connection's client. */
struct peer {
	bool known; /* uid is the client's */
	bool allowed;
	uid_t uid;
};

struct serve {
	struct MHD_Daemon *d;
	struct serve_config cfg;
	struct serve_access access;
	pid_t *pids; /* owned copy of cfg.pids */
	char url[96];
	unsigned port; /* bound */
	uid_t owner;
	struct peer pending; /* accept_policy -> notify_connection */
	unsigned n_foreign;  /* connections of refused clients */

	pthread_mutex_t lock; /* the fields below */
	pthread_cond_t cond;
	bool stopping;
	struct job *queue, *queue_tail; /* for the workers */
	struct job *waiting;		/* deltas between snapshots */
	unsigned n_deltas, n_suspended;
	long last_log_ms;
	unsigned unlogged;
	pthread_t threads[SERVE_WORKERS + 1];
	size_t n_threads;
};

/*
 * A TCP address as /proc/net/tcp6 prints it: IPv4 as ::ffff:a.b.c.d, so
 * that a client seen through a dual-stack socket compares equal.
 */
struct endpoint {
	unsigned char a[16];
	unsigned port;
};

/*
 * A request that needs an agent is answered by a worker thread: the
 * handler suspends the connection and queues the job; the worker fills
 * the answer and resumes the connection; MHD then calls the handler
 * again, which queues the answer. The polling thread never waits for an
 * agent, so idle and slow connections cost an fd each, not a thread.
 */
enum job_kind { JOB_METRICS, JOB_PROFILE, JOB_JSON };
enum job_state { JOB_NEW, JOB_QUEUED, JOB_RUNNING, JOB_WAITING, JOB_DONE };

struct job {
	struct serve *s;
	struct MHD_Connection *c;
	struct job *next;
	enum job_state state;
	bool suspended; /* counted in s->n_suspended */
	bool orphan;	/* MHD closed the connection: c and fd are gone */
	enum job_kind kind;
	char url[32];
	pid_t pid;
	uint64_t seconds; /* ?seconds=N: a delta, taken here */
	bool symbolize;
	struct pprof_profile *p0; /* the delta's first snapshot */
	long deadline_ms;	  /* when to take the second */
	int fd;			  /* the client's socket, to see it hang up */
	/* the answer */
	unsigned status;
	const char *ctype;
	char *body;
	size_t len;
};

/* serve_access.c */

/* The endpoint of a socket address (AF_INET or AF_INET6) in *e; false
 * for any other family or a short len. */
bool serve_endpoint_of(const struct sockaddr *sa, socklen_t len,
		       struct endpoint *e);

/* Whether e is a loopback address (127.0.0.0/8, ::1, ::ffff:127.x). */
bool serve_endpoint_loopback(const struct endpoint *e);

/* Report a refused request through s->cfg.warn: at most one line a
 * second, however fast the refusals come; the line after a quiet spell
 * says how many were left out. Thread-safe (takes s->lock). */
void serve_log_refusal(struct serve *s, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);

/*
 * MHD's accept policy, in its listening thread: find the client's uid and
 * remember it for the connection (serve_notify_connection). Clients the server
 * would refuse are accepted, to be answered 403, only while few of them
 * are connected: idle connections of another user must not take the
 * places of the owner's.
 */
enum MHD_Result serve_accept_policy(void *cls, const struct sockaddr *addr,
				    socklen_t len);

/* MHD's connection notification (cls: the struct serve): keeps what
 * serve_accept_policy() found about the client as the socket's context,
 * and frees it when the connection closes. */
void serve_notify_connection(void *cls, struct MHD_Connection *c,
			     void **socket_context,
			     enum MHD_ConnectionNotificationCode code);

/* serve_routes.c */

/* Answer j with status and a text/plain body that fmt formats (status
 * 500 and an empty body on ENOMEM). */
void serve_answer_text(struct job *j, unsigned status, const char *fmt, ...)
	PALLOC_PRINTF(3, 4);

/* Queue j's answer on its connection (MHD_NO when MHD refuses). */
enum MHD_Result serve_send_answer(struct job *j);

/* Run j in a worker thread: its agent read and its answer filled in. */
void serve_run_job(struct job *j);

/*
 * Parse the request into j and queue it (true: a worker owns j from then
 * on, until it resumes the connection), or answer it at once (false).
 */
bool serve_route(struct serve *s, struct job *j, const char *url);

/* serve_queue.c */

/* A worker thread (arg: the struct serve): runs queued jobs until the
 * server stops. */
void *serve_worker(void *arg);

/* Queue j for the workers and wake them. s->lock held. */
void serve_enqueue_locked(struct serve *s, struct job *j);

/*
 * The deltas between their snapshots: checked every SERVE_TICK_MS, a job
 * goes back to the queue at its deadline, and is dropped as soon as its
 * client hangs up (the wait is the server's alone: the agent is free).
 */
void *serve_waiter(void *arg);

/* MHD's request handler (cls: the struct serve): refuses what the
 * access policy did not allow, routes the rest, sends the answers. */
enum MHD_Result serve_handler(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls);

/* MHD's completion callback: frees the job, or leaves it to the worker
 * or waiter that holds it (orphan). */
void serve_request_completed(void *cls, struct MHD_Connection *c,
			     void **con_cls,
			     enum MHD_RequestTerminationCode toe);

/* serve_addr.c */

/* Parse ADDR into a socket address; loopback when no host is named. */
int serve_parse_addr(const char *addr, struct sockaddr_storage *ss,
		     socklen_t *sl);

#endif /* PALLOC_SERVE_INT_H */
