/* SPDX-License-Identifier: MIT */
/* The commands' TCP HTTP server (libmicrohttpd): agents' endpoints and
 * /metrics. */
#include "common.h"
#include "serve_int.h"

#include <arpa/inet.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "allocinfo.h"
#include "cgroup.h"
#include "clock.h"
#include "msg_cli.h"
#include "num.h"
#include "pprof.h"
#include "procfs.h"
#include "prom.h"
#include "symbols.h"

/* RLIMIT_NOFILE as it was before serve_start raised it. */
static struct rlimit saved_nofile;
static bool nofile_raised;

/*
 * Room for SERVE_MAX_CONNECTIONS connections and the rest: raise the soft
 * fd limit as far as the hard one allows (serve_child_limits() puts it
 * back for a program to run). Returns how many connections fit.
 */
static unsigned connection_room(void)
{
	struct rlimit rl;
	rlim_t want = SERVE_MAX_CONNECTIONS + SERVE_FD_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return SERVE_MIN_CONNECTIONS;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		struct rlimit up = rl;

		up.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
				      ? want
				      : rl.rlim_max;
		if (!nofile_raised && setrlimit(RLIMIT_NOFILE, &up) == 0) {
			saved_nofile = rl;
			nofile_raised = true;
			rl = up;
		}
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want)
		return SERVE_MAX_CONNECTIONS;
	if (rl.rlim_cur < SERVE_MIN_CONNECTIONS + SERVE_FD_RESERVE)
		return SERVE_MIN_CONNECTIONS;
	return (unsigned)(rl.rlim_cur - SERVE_FD_RESERVE);
}

void serve_child_limits(void)
{
	if (nofile_raised)
		setrlimit(RLIMIT_NOFILE, &saved_nofile);
}

/* Stop the workers and hand every suspended connection back to MHD. */
static void stop_threads(struct serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < s->n_threads; i++)
		pthread_join(s->threads[i], NULL);
	s->n_threads = 0;
}

static int start_threads(struct serve *s)
{
	for (size_t i = 0; i <= SERVE_WORKERS; i++) {
		int e = pthread_create(&s->threads[i], NULL,
				       i ? serve_worker : serve_waiter, s);

		if (e) {
			stop_threads(s);
			return msg_set_errno(e, "cannot start a thread");
		}
		s->n_threads++;
	}
	return 0;
}

struct serve *serve_start_config(const char *addr,
				 const struct serve_config *cfg)
{
	struct serve *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	socklen_t sl;
	const union MHD_DaemonInfo *info;
	char host[INET6_ADDRSTRLEN] = "?";
	/*
	 * One polling thread (epoll) for every connection; the work that
	 * waits for agents goes to SERVE_WORKERS threads, so the thread count
	 * does not grow with connections.
	 */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
			 MHD_ALLOW_SUSPEND_RESUME;
	unsigned port = 0, room;

	if (!s) {
		msg_set_errno(ENOMEM, "serve");
		return NULL;
	}
	s->cfg = *cfg;
	s->access = cfg->access;
	s->owner = geteuid();
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (!s->cfg.timeout_ms)
		s->cfg.timeout_ms = ALLOCINFO_TIMEOUT_MS;
	if (cfg->n_pids) {
		s->pids = malloc(cfg->n_pids * sizeof(*s->pids));
		if (!s->pids) {
			free(s);
			msg_set_errno(ENOMEM, "serve");
			return NULL;
		}
		memcpy(s->pids, cfg->pids, cfg->n_pids * sizeof(*s->pids));
	}
	if (serve_check_addr(addr, &s->access) < 0 ||
	    serve_parse_addr(addr, &ss, &sl) < 0)
		goto fail;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	room = connection_room();
	if (start_threads(s) < 0)
		goto fail;
	errno = 0;
	s->d = MHD_start_daemon(
		flags, 0, serve_accept_policy, s, serve_handler, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, room,
		MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_POOL_BYTES,
		MHD_OPTION_NOTIFY_CONNECTION, serve_notify_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, serve_request_completed, s,
		MHD_OPTION_END);
	if (!s->d) {
		msg_set_errno(errno ? errno : EADDRINUSE,
			      "cannot listen on '%s'", addr);
		stop_threads(s);
		goto fail;
	}
	info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	if (info)
		port = info->port;
	/* The accept policy reads it: no connection can come before. */
	s->port = port;
	if (ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
			  host, sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
			  sizeof(host));
		snprintf(s->url, sizeof(s->url), "http://%s:%u", host, port);
	}
	return s;
fail:
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->pids);
	free(s);
	return NULL;
}

struct serve *serve_start(const char *addr, pid_t root_pid,
			  bool follow_descendants)
{
	struct serve_config cfg = {
		.root_pid = root_pid,
		.follow_descendants = follow_descendants,
		.symbolize = true,
	};

	return serve_start_config(addr, &cfg);
}

void serve_set_root(struct serve *s, pid_t root_pid)
{
	__atomic_store_n(&s->cfg.root_pid, root_pid, __ATOMIC_RELEASE);
}

const char *serve_url(const struct serve *s)
{
	return s->url;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	/* The suspended connections are answered 503 and resumed. */
	stop_threads(s);
	MHD_stop_daemon(s->d);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->pids);
	free(s);
}
