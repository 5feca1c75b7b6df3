/* SPDX-License-Identifier: MIT */
/* The HTTP server's jobs: the queue, the worker threads, the waiter of
 * ?seconds=N deltas and MHD's request callbacks (serve_int.h). */
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

/* ---- the workers ---- */

static void job_free(struct job *j)
{
	pprof_free(j->p0);
	free(j->body);
	free(j);
}

/*
 * Hand the answer to MHD (called with s->lock held), or drop it when MHD
 * closed the connection meanwhile (request_completed left the job to us).
 */
static void finish_locked(struct job *j)
{
	if (j->seconds)
		j->s->n_deltas--;
	j->state = JOB_DONE;
	if (j->orphan)
		job_free(j);
	else
		MHD_resume_connection(j->c);
}

void *serve_worker(void *arg)
{
	struct serve *s = arg;
	struct job *j;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->queue && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		j = s->queue;
		if (!j)
			break;
		s->queue = j->next;
		if (!s->queue)
			s->queue_tail = NULL;
		if (s->stopping || j->orphan) {
			serve_answer_text(j, 503,
					  "503: the server is stopping\n");
			finish_locked(j);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&s->lock);
		serve_run_job(j);
		pthread_mutex_lock(&s->lock);
		if (j->seconds && j->p0 && !j->status && !j->orphan) {
			/* The first snapshot of a delta: wait for the time. */
			j->state = JOB_WAITING;
			j->next = s->waiting;
			s->waiting = j;
			pthread_cond_broadcast(&s->cond);
			continue;
		}
		finish_locked(j);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

void serve_enqueue_locked(struct serve *s, struct job *j)
{
	j->state = JOB_QUEUED;
	j->next = NULL;
	if (s->queue_tail)
		s->queue_tail->next = j;
	else
		s->queue = j;
	s->queue_tail = j;
	pthread_cond_broadcast(&s->cond);
}

/* Whether the client of a suspended connection has hung up. */
static bool hung_up(const struct job *j)
{
	struct pollfd pfd = {.fd = j->fd, .events = POLLRDHUP};

	return j->orphan ||
	       (j->fd >= 0 && poll(&pfd, 1, 0) > 0 &&
		(pfd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)));
}

void *serve_waiter(void *arg)
{
	struct serve *s = arg;

	pthread_mutex_lock(&s->lock);
	while (!s->stopping || s->waiting) {
		struct job **pp = &s->waiting;
		long now = (long)clock_mono_ms();
		struct timespec ts;

		while (*pp) {
			struct job *j = *pp;

			if (!s->stopping && !hung_up(j) &&
			    now < j->deadline_ms) {
				pp = &j->next;
				continue;
			}
			*pp = j->next;
			if (s->stopping)
				serve_answer_text(
					j, 503,
					"503: the server is stopping\n");
			else if (now < j->deadline_ms)
				serve_answer_text(j, 499,
						  "499: the client hung up\n");
			if (j->status) {
				finish_locked(j);
				continue;
			}
			serve_enqueue_locked(s, j);
		}
		if (s->stopping)
			continue;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += SERVE_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void unsuspend_locked(struct job *j)
{
	if (j->suspended) {
		j->suspended = false;
		j->s->n_suspended--;
	}
}

enum MHD_Result serve_handler(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct serve *s = cls;
	struct job *j = *con_cls;
	const union MHD_ConnectionInfo *ci;
	const struct peer *p;

	(void)version;
	(void)upload_data;
	/* The first call only announces the headers. */
	if (!j) {
		j = calloc(1, sizeof(*j));
		if (!j)
			return MHD_NO;
		j->s = s;
		j->c = c;
		j->fd = -1;
		*con_cls = j;
		return MHD_YES;
	}
	if (j->state == JOB_DONE) {
		pthread_mutex_lock(&s->lock);
		unsuspend_locked(j);
		pthread_mutex_unlock(&s->lock);
		return serve_send_answer(j);
	}
	if (j->state != JOB_NEW)
		return MHD_YES;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	p = ci ? ci->socket_context : NULL;
	if (!p || !p->allowed) {
		if (p && p->known)
			serve_log_refusal(s,
					  "refused a request from uid %u: only "
					  "the server's user and root may read "
					  "(--allow-users)",
					  (unsigned)p->uid);
		else
			serve_log_refusal(s,
					  "refused a request from a client of "
					  "unknown user (--allow-users)");
		serve_answer_text(
			j, 403,
			"403: only the server's user and root may read "
			"here\n");
	} else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		serve_answer_text(j, 405, "405: only GET is served\n");
	} else if (*upload_data_size) {
		serve_answer_text(j, 400, "400: unexpected body\n");
	} else {
		/* j is not ours to read once queued. */
		if (serve_route(s, j, url))
			return MHD_YES;
	}
	return serve_send_answer(j);
}

void serve_request_completed(void *cls, struct MHD_Connection *c,
			     void **con_cls,
			     enum MHD_RequestTerminationCode toe)
{
	struct serve *s = cls;
	struct job *j = *con_cls;

	(void)c;
	(void)toe;
	if (!j)
		return;
	*con_cls = NULL;
	pthread_mutex_lock(&s->lock);
	unsuspend_locked(j);
	if (j->state == JOB_QUEUED || j->state == JOB_RUNNING ||
	    j->state == JOB_WAITING) {
		/* A worker or the waiter has it: it frees it when done. */
		j->orphan = true;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	pthread_mutex_unlock(&s->lock);
	job_free(j);
}
