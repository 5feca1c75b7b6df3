/* SPDX-License-Identifier: MIT */
/* The commands' TCP HTTP server (libmicrohttpd): agents' endpoints and
 * /metrics. */
#include "common.h"
#include "serve.h"

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

/* ---- the set of processes ---- */

static bool descends_from(pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == root)
			return true;
		pid = procfs_parent(pid);
	}
	return pid > 0 && pid == root;
}

/* The current set, malloc'd into *out. Returns the count, or -1. */
static ssize_t current_pids(const struct serve *s, pid_t **out)
{
	pid_t *a;
	ssize_t list, k = 0;

	pid_t root = __atomic_load_n(&s->cfg.root_pid, __ATOMIC_ACQUIRE);

	if (root < 0 && !s->cfg.n_pids) {
		*out = malloc(sizeof(**out));
		return *out ? 0 : -1;
	}
	if (s->cfg.n_pids) {
		*out = malloc(s->cfg.n_pids * sizeof(**out));
		if (!*out)
			return -1;
		memcpy(*out, s->pids, s->cfg.n_pids * sizeof(**out));
		return (ssize_t)s->cfg.n_pids;
	}
	list = allocinfo_live_pids(&a);
	if (list < 0)
		return -1;
	*out = a;
	for (ssize_t i = 0; i < list; i++) {
		pid_t p = a[i];

		if (root && !(p == root || (s->cfg.follow_descendants &&
					    descends_from(p, root))))
			continue;
		(*out)[k++] = p;
	}
	return (ssize_t)k;
}

/* ---- who may read ---- */

/*
 * A TCP address as /proc/net/tcp6 prints it: IPv4 as ::ffff:a.b.c.d, so
 * that a client seen through a dual-stack socket compares equal.
 */
struct endpoint {
	unsigned char a[16];
	unsigned port;
};

static bool endpoint_of(const struct sockaddr *sa, socklen_t len,
			struct endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const void *)sa;

		e->a[10] = e->a[11] = 0xff;
		memcpy(e->a + 12, &in->sin_addr, 4);
		e->port = ntohs(in->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		memcpy(e->a, &in6->sin6_addr, 16);
		e->port = ntohs(in6->sin6_port);
		return true;
	}
	return false;
}

static bool endpoint_loopback(const struct endpoint *e)
{
	static const unsigned char v4[12] = {[10] = 0xff, [11] = 0xff};
	static const unsigned char v6[16] = {[15] = 1};

	return (memcmp(e->a, v4, 12) == 0 && e->a[12] == 127) ||
	       memcmp(e->a, v6, 16) == 0;
}

/*
 * "0100007F:1F90" (/proc/net/tcp: each 32-bit word of the address in the
 * kernel's byte order, the port in hex) into e. false if malformed.
 */
static bool endpoint_parse(const char *hex, struct endpoint *e)
{
	size_t n = strcspn(hex, ":");
	unsigned char *dst;

	if ((n != 8 && n != 32) || hex[n] != ':')
		return false;
	memset(e, 0, sizeof(*e));
	dst = e->a;
	if (n == 8) {
		e->a[10] = e->a[11] = 0xff;
		dst += 12;
	}
	for (size_t w = 0; w < n / 8; w++) {
		char word[9];
		char *end;
		uint32_t v;

		memcpy(word, hex + w * 8, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return false;
		memcpy(dst + w * 4, &v, 4);
	}
	e->port = (unsigned)strtoul(hex + n + 1, NULL, 16);
	return true;
}

/*
 * The uid owning the local TCP socket whose local end is client and whose
 * remote port is server_port: the client of one of our connections, when
 * it runs on this host. /proc/net/tcp and tcp6 list every socket of the
 * network namespace with its owner. Returns 0 with *uid, or -1 when no
 * such socket (a remote client) or several with different owners.
 */
static int peer_uid(const struct endpoint *client, unsigned server_port,
		    uid_t *uid)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	for (size_t f = 0; f < ARRAY_SIZE(files) && found >= 0; f++) {
		FILE *fp = fopen(files[f], "re");

		if (!fp)
			continue;
		while (getline(&line, &cap, fp) > 0) {
			char local[64], remote[64];
			struct endpoint l, r;
			unsigned u;

			if (sscanf(line,
				   " %*u: %63s %63s %*x %*x:%*x %*x:%*x %*x "
				   "%u",
				   local, remote, &u) != 3 ||
			    !endpoint_parse(local, &l) ||
			    !endpoint_parse(remote, &r) ||
			    l.port != client->port || r.port != server_port ||
			    memcmp(l.a, client->a, 16) != 0)
				continue;
			if (found && *uid != (uid_t)u) {
				found = -1;
				break;
			}
			*uid = (uid_t)u;
			found = 1;
		}
		fclose(fp);
	}
	free(line);
	return found > 0 ? 0 : -1;
}

static bool uid_allowed(const struct serve *s, uid_t uid)
{
	if (uid == 0 || uid == s->owner)
		return true;
	for (size_t i = 0; i < s->access.n_uids; i++)
		if (s->access.uids[i] == uid)
			return true;
	return false;
}

/* At most one line a second, however fast the refusals come. */
static void log_refusal(struct serve *s, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);

static void log_refusal(struct serve *s, const char *fmt, ...)
{
	long now = (long)clock_mono_ms();
	unsigned skipped;
	char line[256];
	va_list ap;

	pthread_mutex_lock(&s->lock);
	if (s->last_log_ms && now - s->last_log_ms < 1000) {
		s->unlogged++;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	s->last_log_ms = now;
	skipped = s->unlogged;
	s->unlogged = 0;
	pthread_mutex_unlock(&s->lock);
	if (!s->cfg.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (skipped) {
		size_t n = strlen(line);

		snprintf(line + n, sizeof(line) - n, " (and %u more refused)",
			 skipped);
	}
	s->cfg.warn(line);
}

/*
 * MHD's accept policy, in its listening thread: find the client's uid and
 * remember it for the connection (notify_connection). Clients the server
 * would refuse are accepted, to be answered 403, only while few of them
 * are connected: idle connections of another user must not take the
 * places of the owner's.
 */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr,
				     socklen_t len)
{
	struct serve *s = cls;
	struct peer *p = &s->pending;
	struct endpoint e;

	memset(p, 0, sizeof(*p));
	if (s->access.any) {
		p->allowed = true;
		return MHD_YES;
	}
	if (endpoint_of(addr, len, &e) && peer_uid(&e, s->port, &p->uid) == 0)
		p->known = true;
	p->allowed = p->known && uid_allowed(s, p->uid);
	if (p->allowed || __atomic_load_n(&s->n_foreign, __ATOMIC_RELAXED) <
				  SERVE_FOREIGN_MAX)
		return MHD_YES;
	log_refusal(s,
		    "refused a connection from %s %u: %u connections of "
		    "users not allowed are open",
		    p->known ? "uid" : "unknown user, as", p->uid,
		    SERVE_FOREIGN_MAX);
	return MHD_NO;
}

static void notify_connection(void *cls, struct MHD_Connection *c,
			      void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct serve *s = cls;
	struct peer *p = *socket_context;

	(void)c;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		/* Called right after accept_policy, in the same thread. */
		p = malloc(sizeof(*p));
		if (p) {
			*p = s->pending;
			if (!p->allowed)
				__atomic_add_fetch(&s->n_foreign, 1,
						   __ATOMIC_RELAXED);
		}
		*socket_context = p;
	} else if (p) {
		if (!p->allowed)
			__atomic_sub_fetch(&s->n_foreign, 1, __ATOMIC_RELAXED);
		free(p);
		*socket_context = NULL;
	}
}

/* ---- requests ---- */

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

static void answer(struct job *j, unsigned status, const char *ctype,
		   char *body, size_t len)
{
	free(j->body);
	j->status = status;
	j->ctype = ctype;
	j->body = body;
	j->len = len;
}

static void answer_text(struct job *j, unsigned status, const char *fmt, ...)
	PALLOC_PRINTF(3, 4);

static void answer_text(struct job *j, unsigned status, const char *fmt, ...)
{
	char *buf = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf = NULL;
		n = 0;
		status = 500;
	}
	answer(j, status, "text/plain; charset=utf-8", buf, (size_t)n);
}

static enum MHD_Result send_answer(struct job *j)
{
	static char empty[1];
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (j->body) {
		r = MHD_create_response_from_buffer(j->len, j->body,
						    MHD_RESPMEM_MUST_FREE);
		if (r)
			j->body = NULL;
	} else {
		r = MHD_create_response_from_buffer(0, empty,
						    MHD_RESPMEM_PERSISTENT);
	}
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				j->ctype ? j->ctype
					 : "text/plain; charset=utf-8");
	ret = MHD_queue_response(j->c, j->status, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * The pid a request is about: ?pid=N (which must be in the set), else the
 * root process when it is in the set, else the only process. 0 after
 * answering with an error.
 */
static pid_t request_pid(struct serve *s, struct job *j)
{
	const char *arg =
		MHD_lookup_connection_value(j->c, MHD_GET_ARGUMENT_KIND, "pid");
	pid_t *set = NULL, pid = 0;
	ssize_t n = current_pids(s, &set);
	uint64_t v;

	if (n < 0) {
		answer_text(j, 500, "500: %s\n", msg_last());
		return 0;
	}
	if (arg) {
		if (num_parse_u64(arg, false, &v) < 0 || v == 0 ||
		    v > INT_MAX) {
			answer_text(j, 400, "400: invalid pid\n");
			free(set);
			return 0;
		}
		for (ssize_t i = 0; i < n; i++)
			if (set[i] == (pid_t)v)
				pid = set[i];
		if (!pid)
			answer_text(j, 404,
				    "404: process %llu is not served here\n",
				    (unsigned long long)v);
		free(set);
		return pid;
	}
	for (ssize_t i = 0; i < n; i++)
		if (set[i] ==
		    __atomic_load_n(&s->cfg.root_pid, __ATOMIC_ACQUIRE))
			pid = set[i];
	if (!pid && n == 1)
		pid = set[0];
	if (!pid) {
		char list[512] = "";
		size_t len = 0;

		for (ssize_t i = 0; i < n && len < sizeof(list) - 16; i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						" %d", (int)set[i]);
		answer_text(j, n ? 400 : 404,
			    n ? "400: several processes; add ?pid= one of:%s\n"
			      : "404: no process with an agent%s\n",
			    list);
	}
	free(set);
	return pid;
}

static void agent_error(struct job *j)
{
	const char *why = msg_last();
	unsigned status = strstr(why, "timed out") ? 504 : 502;

	answer_text(j, status, "%u: cannot reach agent of process '%d': %s\n",
		    status, (int)j->pid, why);
}

/* Symbolize (unless asked not to) and encode p into the answer. */
static void answer_profile(struct job *j, struct pprof_profile *p)
{
	char root[64];
	char *body;
	size_t len;
	void *buf;

	if (j->symbolize) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)j->pid);
		symbols_symbolize(p, root, NULL);
	}
	if (pprof_encode(p, true, &buf, &len) < 0) {
		answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	body = malloc(len ? len : 1);
	if (body) {
		memcpy(body, buf, len);
		answer(j, 200, "application/octet-stream", body, len);
	} else {
		answer_text(j, 500, "500: out of memory\n");
	}
	pprof_free_buffer(p, buf);
}

/*
 * ?seconds=N, as Go serves it, but taken here rather than by the agent:
 * the agent gives two snapshots N seconds apart, and its one control
 * thread is not held meanwhile. First call: the first snapshot (the job
 * then waits in s->waiting); second call: the delta.
 */
static void run_delta(struct job *j)
{
	struct serve *s = j->s;
	struct pprof_profile *p, *d;

	p = allocinfo_get_profile(j->pid, j->url, s->cfg.timeout_ms);
	if (!p) {
		agent_error(j);
		return;
	}
	if (!j->p0) {
		j->p0 = p;
		j->deadline_ms =
			(long)clock_mono_ms() + (long)j->seconds * 1000;
		return;
	}
	d = pprof_delta(NULL, j->p0, p);
	pprof_free(p);
	if (!d) {
		answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	answer_profile(j, d);
	pprof_free(d);
}

static void run_profile(struct job *j)
{
	struct pprof_profile *p;
	char *body;
	size_t len;

	if (j->seconds) {
		run_delta(j);
		return;
	}
	if (!j->symbolize) {
		if (allocinfo_get_raw(j->pid, j->url, j->s->cfg.timeout_ms,
				      &body, &len, NULL, 0) < 0)
			agent_error(j);
		else
			answer(j, 200, "application/octet-stream", body, len);
		return;
	}
	p = allocinfo_get_profile(j->pid, j->url, j->s->cfg.timeout_ms);
	if (!p) {
		agent_error(j);
		return;
	}
	answer_profile(j, p);
	pprof_free(p);
}

static void run_json(struct job *j)
{
	char *body;
	size_t len;

	if (allocinfo_get_raw(j->pid, j->url, j->s->cfg.timeout_ms, &body, &len,
			      NULL, 0) < 0)
		agent_error(j);
	else
		answer(j, 200, "application/json", body, len);
}
/* smaps rollup families, the same names as palloc-smaps --prom. */
static int smaps_prom(FILE *fp, const struct allocinfo_proc *v,
		      const struct procfs_usage *u, const bool *have, size_t n)
{
	static const enum procfs_field fields[] = {
		PROCFS_RSS,	 PROCFS_PSS,	   PROCFS_PSS_ANON,
		PROCFS_PSS_FILE, PROCFS_ANONYMOUS, PROCFS_SWAP,
	};
	char name[PROM_NAME_MAX], metric[96], pid[16];

	for (size_t f = 0; f < ARRAY_SIZE(fields); f++) {
		snprintf(metric, sizeof(metric), "smaps_%s",
			 procfs_field_json_name(fields[f]));
		prom_name(name, sizeof(name), metric);
		snprintf(metric, sizeof(metric),
			 "%s of the process (/proc/PID/smaps_rollup), bytes.",
			 procfs_field_kernel_name(fields[f]));
		if (prom_family(fp, name, PROM_GAUGE, metric) < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			struct prom_label l[2] = {{"pid", pid},
						  {"program", v[i].program}};

			if (!have[i] || !procfs_has(&u[i], fields[f]))
				continue;
			snprintf(pid, sizeof(pid), "%d", (int)v[i].pid);
			if (prom_sample_u64(fp, name, l, 2, u[i].v[fields[f]]) <
			    0)
				return -1;
		}
	}
	return 0;
}

static void run_metrics(struct job *j)
{
	struct serve *s = j->s;
	pid_t *set = NULL;
	ssize_t n = current_pids(s, &set);
	struct allocinfo_proc *v;
	struct procfs_usage *u;
	bool *have;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;
	int rc = 0;

	if (n < 0) {
		answer_text(j, 500, "500: %s\n", msg_last());
		return;
	}
	v = calloc((size_t)n + 1, sizeof(*v));
	u = calloc((size_t)n + 1, sizeof(*u));
	have = calloc((size_t)n + 1, sizeof(*have));
	fp = open_memstream(&text, &len);
	if (!v || !u || !have || !fp)
		goto oom;
	for (ssize_t i = 0; i < n; i++) {
		v[i].pid = set[i];
		v[i].stats = allocinfo_get_json(set[i], "/debug/palloc/stats",
						s->cfg.timeout_ms);
		v[i].mallinfo = allocinfo_get_json(
			set[i], "/debug/palloc/mallinfo", s->cfg.timeout_ms);
		v[i].program = json_string_value(
			json_object_get(v[i].stats, "program"));
		if (!v[i].program)
			v[i].program = "";
		have[i] = procfs_read_rollup("", set[i], &u[i], NULL) == 0;
	}
	rc = allocinfo_prom(fp, v, (size_t)n);
	if (rc == 0)
		rc = smaps_prom(fp, v, u, have, (size_t)n);
	if (rc == 0 && n > 0) {
		/* One cgroup: the processes of one run share it, and a
		 * family may not repeat (promtool). */
		struct cgroup_mem m;

		if (cgroup_read_pid("", set[0], &m) == 0) {
			rc = cgroup_prom(fp, &m);
			cgroup_mem_free(&m);
		}
	}
	for (ssize_t i = 0; i < n; i++) {
		json_decref(v[i].stats);
		json_decref(v[i].mallinfo);
		if (have[i])
			procfs_usage_free(&u[i]);
	}
	free(v);
	free(u);
	free(have);
	free(set);
	if (fclose(fp) != 0 || rc < 0) {
		free(text);
		answer_text(j, 500, "500: cannot render metrics\n");
		return;
	}
	answer(j, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	return;
oom:
	if (fp)
		fclose(fp);
	free(text);
	free(v);
	free(u);
	free(have);
	free(set);
	answer_text(j, 500, "500: out of memory\n");
}

static void answer_index(struct serve *s, struct job *j)
{
	pid_t *set = NULL;
	ssize_t n = current_pids(s, &set);
	char *text = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&text, &len);

	if (!fp || n < 0) {
		if (fp)
			fclose(fp);
		free(text);
		free(set);
		answer_text(j, 500, "500: out of memory\n");
		return;
	}
	fprintf(fp, "palloc: heap profiles and allocator state\n\n"
		    "/debug/pprof/heap[?seconds=N][&pid=PID]\n"
		    "/debug/pprof/allocs[?seconds=N][&pid=PID]\n"
		    "/debug/palloc/stats[?pid=PID]\n"
		    "/debug/palloc/mallinfo[?pid=PID]\n"
		    "/metrics\n\nprocesses:");
	for (ssize_t i = 0; i < n; i++)
		fprintf(fp, " %d", (int)set[i]);
	fprintf(fp, "\n");
	free(set);
	if (fclose(fp) != 0) {
		free(text);
		answer_text(j, 500, "500: out of memory\n");
		return;
	}
	answer(j, 200, "text/plain; charset=utf-8", text, len);
}

/* ---- the workers ---- */

static void run_job(struct job *j)
{
	switch (j->kind) {
	case JOB_METRICS:
		run_metrics(j);
		break;
	case JOB_PROFILE:
		run_profile(j);
		break;
	case JOB_JSON:
		run_json(j);
		break;
	}
}

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

static void *worker(void *arg)
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
			answer_text(j, 503, "503: the server is stopping\n");
			finish_locked(j);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&s->lock);
		run_job(j);
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

static void enqueue_locked(struct serve *s, struct job *j)
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

/*
 * The deltas between their snapshots: checked every SERVE_TICK_MS, a job
 * goes back to the queue at its deadline, and is dropped as soon as its
 * client hangs up (the wait is the server's alone: the agent is free).
 */
static void *waiter(void *arg)
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
				answer_text(j, 503,
					    "503: the server is stopping\n");
			else if (now < j->deadline_ms)
				answer_text(j, 499,
					    "499: the client hung up\n");
			if (j->status) {
				finish_locked(j);
				continue;
			}
			enqueue_locked(s, j);
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

/*
 * Parse the request into j and queue it (true: a worker owns j from then
 * on, until it resumes the connection), or answer it at once (false).
 */
static bool route(struct serve *s, struct job *j, const char *url)
{
	struct MHD_Connection *c = j->c;
	const char *sec, *sym;
	const union MHD_ConnectionInfo *ci;
	bool queued;

	if (strcmp(url, "/") == 0 || strcmp(url, "/debug/pprof/") == 0) {
		answer_index(s, j);
		return false;
	}
	if (strcmp(url, "/metrics") == 0) {
		j->kind = JOB_METRICS;
	} else if (strcmp(url, "/debug/pprof/heap") == 0 ||
		   strcmp(url, "/debug/pprof/allocs") == 0) {
		j->kind = JOB_PROFILE;
	} else if (strcmp(url, "/debug/palloc/stats") == 0 ||
		   strcmp(url, "/debug/palloc/mallinfo") == 0) {
		j->kind = JOB_JSON;
	} else {
		answer_text(j, 404, "404: no such endpoint\n");
		return false;
	}
	snprintf(j->url, sizeof(j->url), "%s", url);
	if (j->kind != JOB_METRICS) {
		j->pid = request_pid(s, j);
		if (!j->pid)
			return false;
	}
	if (j->kind == JOB_PROFILE) {
		sec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						  "seconds");
		sym = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						  "symbolize");
		if (sec &&
		    (num_parse_u64(sec, false, &j->seconds) < 0 ||
		     j->seconds == 0 || j->seconds > SERVE_MAX_SECONDS)) {
			answer_text(j, 400,
				    "400: seconds must be an integer from 1 "
				    "to %d\n",
				    SERVE_MAX_SECONDS);
			return false;
		}
		j->symbolize = s->cfg.symbolize && !(sym && !strcmp(sym, "0"));
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	j->fd = ci ? ci->connect_fd : -1;
	pthread_mutex_lock(&s->lock);
	queued = !s->stopping &&
		 !(j->seconds && s->n_deltas >= SERVE_MAX_DELTAS);
	if (s->stopping) {
		answer_text(j, 503, "503: the server is stopping\n");
	} else if (j->seconds && s->n_deltas >= SERVE_MAX_DELTAS) {
		answer_text(j, 503,
			    "503: %d delta profiles are being taken; try "
			    "later\n",
			    SERVE_MAX_DELTAS);
	} else {
		if (j->seconds)
			s->n_deltas++;
		/* Suspended before a worker can resume it. */
		MHD_suspend_connection(c);
		j->suspended = true;
		s->n_suspended++;
		enqueue_locked(s, j);
	}
	pthread_mutex_unlock(&s->lock);
	return queued;
}

static void unsuspend_locked(struct job *j)
{
	if (j->suspended) {
		j->suspended = false;
		j->s->n_suspended--;
	}
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c,
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
		return send_answer(j);
	}
	if (j->state != JOB_NEW)
		return MHD_YES;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	p = ci ? ci->socket_context : NULL;
	if (!p || !p->allowed) {
		if (p && p->known)
			log_refusal(s,
				    "refused a request from uid %u: only "
				    "the server's user and root may read "
				    "(--allow-users)",
				    (unsigned)p->uid);
		else
			log_refusal(s, "refused a request from a client of "
				       "unknown user (--allow-users)");
		answer_text(j, 403,
			    "403: only the server's user and root may read "
			    "here\n");
	} else if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		answer_text(j, 405, "405: only GET is served\n");
	} else if (*upload_data_size) {
		answer_text(j, 400, "400: unexpected body\n");
	} else {
		/* j is not ours to read once queued. */
		if (route(s, j, url))
			return MHD_YES;
	}
	return send_answer(j);
}

static void request_completed(void *cls, struct MHD_Connection *c,
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

/* Parse ADDR into a socket address; loopback when no host is named. */
static int parse_addr(const char *addr, struct sockaddr_storage *ss,
		      socklen_t *sl)
{
	char host[256] = "127.0.0.1";
	const char *port = addr, *colon = strrchr(addr, ':');
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	uint64_t pv;
	int e;

	if (colon) {
		size_t hl = (size_t)(colon - addr);

		port = colon + 1;
		if (hl && addr[0] == '[' && addr[hl - 1] == ']') {
			addr++;
			hl -= 2;
		}
		if (hl >= sizeof(host))
			return msg_set("invalid address '%s'", addr);
		if (hl) {
			memcpy(host, addr, hl);
			host[hl] = '\0';
		}
	}
	if (num_parse_u64(port, false, &pv) < 0 || pv > 65535)
		return msg_set("invalid port '%s'", port);
	e = getaddrinfo(host, port, &hints, &res);
	if (e != 0 || !res)
		return msg_set("cannot resolve '%s': %s", host,
			       gai_strerror(e));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sl = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* Whether the address in ss is a loopback one (127/8, ::1). */
static bool addr_loopback(const struct sockaddr_storage *ss, socklen_t sl)
{
	struct endpoint e;

	return endpoint_of((const struct sockaddr *)ss, sl, &e) &&
	       endpoint_loopback(&e);
}

int serve_parse_access(const char *arg, struct serve_access *a)
{
	char *copy = strdup(arg), *word, *save = NULL;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	if (!copy)
		return msg_set_errno(ENOMEM, "--allow-users");
	for (word = strtok_r(copy, ",", &save); word && rc == 0;
	     word = strtok_r(NULL, ",", &save)) {
		struct passwd *pw;
		uint64_t v;

		if (strcmp(word, "any") == 0) {
			a->any = true;
			continue;
		}
		if (a->n_uids == SERVE_MAX_USERS) {
			rc = msg_set("more than %d users", SERVE_MAX_USERS);
			break;
		}
		pw = getpwnam(word);
		if (pw)
			a->uids[a->n_uids++] = pw->pw_uid;
		else if (num_parse_u64(word, false, &v) == 0 && v < (uid_t)-1)
			a->uids[a->n_uids++] = (uid_t)v;
		else
			rc = msg_set("no such user '%s'", word);
	}
	if (rc == 0 && !a->any && !a->n_uids)
		rc = msg_set("no user named");
	free(copy);
	return rc;
}

int serve_check_addr(const char *addr, const struct serve_access *a)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	if (parse_addr(addr, &ss, &sl) < 0)
		return -1;
	if (!a->any && !addr_loopback(&ss, sl))
		return msg_set("not a loopback address: the users of other "
			       "hosts cannot be told apart; "
			       "--allow-users=any serves whoever can "
			       "connect");
	return 0;
}

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
				       i ? worker : waiter, s);

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
	    parse_addr(addr, &ss, &sl) < 0)
		goto fail;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	room = connection_room();
	if (start_threads(s) < 0)
		goto fail;
	errno = 0;
	s->d = MHD_start_daemon(
		flags, 0, accept_policy, s, handler, s, MHD_OPTION_SOCK_ADDR,
		(struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT, room,
		MHD_OPTION_CONNECTION_TIMEOUT, SERVE_IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_POOL_BYTES,
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, request_completed, s,
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
