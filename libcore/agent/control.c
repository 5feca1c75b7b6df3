/* SPDX-License-Identifier: MIT */
/* The agent's control server: one thread answering HTTP/1.0 on a unix socket.
 */
#include "common.h"
#include "agent/agent.h"
#include "agent/allocstats.h"
#include "ctlsock.h"
#include "http.h"
#include "msg.h"
#include "pprof.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*
 * Why one thread, serving one connection at a time: the requests are rare
 * (a person, a scraper every few seconds), each costs one snapshot of the
 * stack table, and a single thread bounds what the agent can ever take
 * from the program. A ?seconds=N request holds the thread for N seconds;
 * other clients wait in the listen backlog meanwhile (N is capped).
 *
 * The thread runs with the reentrancy guard set for its whole life, so
 * every malloc it or the libraries it calls make (dlopen, opendir,
 * open_memstream, qsort) goes to the real allocator untracked. Profiles
 * are built in the agent's arena (agent_build_profile, agent_allocator).
 */

#define CONTROL_BACKLOG 16
#define CONTROL_HEAD_TIMEOUT_MS 2000 /* a silent client is dropped */
#define CONTROL_SEND_TIMEOUT_S 10    /* a client that stops reading */
#define CONTROL_MAX_SECONDS 3600     /* cap of ?seconds=N */

static struct {
	int lfd;
	pid_t pid; /* the process that bound path */
	char path[CTLSOCK_PATH_MAX];
	bool running;
	dev_t dev; /* identity of the listening socket, see still_ours() */
	ino_t ino;
} ctl = {.lfd = -1};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- handlers ---- */

static void send_profile(int fd, struct pprof_profile *p, const char *name)
{
	void *buf = NULL;
	size_t len = 0;
	char hdr[128];

	if (pprof_encode(p, true, &buf, &len) < 0) {
		http_write_error(fd, 500, msg_last());
		return;
	}
	snprintf(hdr, sizeof(hdr),
		 "Content-Disposition: attachment; filename=\"%s\"\r\n", name);
	http_write_response(fd, 200, "application/octet-stream", hdr, buf, len);
	pprof_free_buffer(p, buf);
}

/* Sleep seconds, in steps, giving up early when the agent is stopping. */
static bool wait_seconds(unsigned seconds)
{
	long end = now_ms() + seconds * 1000L;

	while (__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE)) {
		long left = end - now_ms();
		struct timespec ts;

		if (left <= 0)
			return true;
		if (left > 200)
			left = 200;
		ts.tv_sec = 0;
		ts.tv_nsec = left * 1000000L;
		nanosleep(&ts, NULL);
	}
	return false;
}

/* A decimal from 1 to CONTROL_MAX_SECONDS (num.c is not in the agent). */
static int parse_seconds(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > CONTROL_MAX_SECONDS)
			return -1;
	}
	if (v == 0)
		return -1;
	*out = v;
	return 0;
}

static void handle_profile(int fd, const struct http_request *req, bool allocs)
{
	struct pprof_profile *p, *p0, *d;
	char val[32];
	uint64_t seconds = 0;
	int r = http_query_get(req->query, "seconds", val, sizeof(val));

	if (r < 0 || (r > 0 && (parse_seconds(val, &seconds) < 0))) {
		http_write_error(fd, 400,
				 "seconds must be an integer from 1 "
				 "to 3600");
		return;
	}
	r = http_query_get(req->query, "debug", val, sizeof(val));
	if (r != 0 && strcmp(val, "0") != 0) {
		http_write_error(fd, 400,
				 "only debug=0 (the binary profile) "
				 "is served; palloc-dump --top "
				 "prints text");
		return;
	}
	p0 = agent_build_profile();
	if (!p0) {
		http_write_error(fd, 503, msg_last());
		return;
	}
	if (!seconds) {
		if (allocs)
			pprof_set_default_sample_type(p0, "alloc_space");
		send_profile(fd, p0, allocs ? "allocs" : "heap");
		pprof_free(p0);
		return;
	}
	if (!wait_seconds((unsigned)seconds)) {
		pprof_free(p0);
		http_write_error(fd, 503, "the agent is stopping");
		return;
	}
	p = agent_build_profile();
	if (!p) {
		pprof_free(p0);
		http_write_error(fd, 503, msg_last());
		return;
	}
	d = pprof_delta(agent_allocator(), p0, p);
	pprof_free(p0);
	pprof_free(p);
	if (!d) {
		http_write_error(fd, 500, msg_last());
		return;
	}
	if (allocs)
		pprof_set_default_sample_type(d, "alloc_space");
	send_profile(fd, d, allocs ? "allocs-delta" : "heap-delta");
	pprof_free(d);
}

/* The sum of inuse_space over the samples of a fresh snapshot, or -1. */
static int64_t sampled_inuse(void)
{
	struct pprof_profile *p = agent_build_profile();
	int64_t sum = 0;
	int idx;

	if (!p)
		return -1;
	idx = pprof_sample_type_index(p, "inuse_space");
	if (idx < 0) {
		pprof_free(p);
		return -1;
	}
	for (size_t i = 0; i < p->n_samples; i++)
		sum += p->samples[i].values[idx];
	pprof_free(p);
	return sum;
}

static void json_head(struct abuf *b, const char *format)
{
	abuf_printf(b,
		    "{\"format\":\"%s\",\"format_version\":1,\"pid\":%d,"
		    "\"program\":",
		    format, (int)getpid());
	abuf_json_str(b, agent_program_name());
}

/* ,"KEY":V for each of the n keys and unsigned values. */
static void json_u64s(struct abuf *b, const char *const *keys,
		      const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		abuf_printf(b, ",\"%s\":%llu", keys[i],
			    (unsigned long long)v[i]);
}

static void send_json(int fd, struct abuf *b)
{
	abuf_printf(b, "}\n");
	if (b->oom)
		http_write_error(fd, 500, "out of memory");
	else
		http_write_response(fd, 200, "application/json", NULL, b->p,
				    b->len);
	abuf_free(b);
}

static void handle_stats(int fd)
{
	struct agent_stats st;
	struct allocstats_comparable c;
	enum allocstats_kind k;
	struct abuf b = {0};
	int64_t sampled = sampled_inuse();
	int64_t inuse;

	memset(&st, 0, sizeof(st));
	agent_get_stats(&st);
	k = allocstats_comparable(&c);
	inuse = st.exact ? st.inuse_bytes : c.allocated_bytes;
	json_head(&b, "palloc-stats");
	abuf_printf(&b, ",\"uptime_seconds\":%.3f,\"exact\":%s",
		    st.uptime_seconds, st.exact ? "true" : "false");
	json_u64s(&b,
		  (const char *const[]){"sample_rate", "alloc_count",
					"free_count", "alloc_bytes"},
		  (const uint64_t[]){st.sample_rate, st.alloc_count,
				     st.free_count, st.alloc_bytes},
		  4);
	abuf_json_i64(&b, true, "inuse_bytes", inuse);
	abuf_printf(&b, ",\"inuse_source\":%s",
		    st.exact	 ? "\"exact\""
		    : inuse >= 0 ? "\"allocator\""
				 : "null");
	abuf_json_i64(&b, true, "peak_inuse_bytes",
		      (int64_t)st.peak_inuse_bytes);
	abuf_printf(&b, ",\"peak_inuse_source\":\"%s\"",
		    st.exact ? "exact" : "sampled");
	abuf_json_i64(&b, true, "sampled_inuse_bytes", sampled);
	json_u64s(&b,
		  (const char *const[]){"sampled_count", "dropped_count",
					"dropped_bytes", "stack_count"},
		  (const uint64_t[]){st.sampled_count, st.dropped_count,
				     st.dropped_bytes, st.stack_count},
		  4);
	abuf_printf(&b, ",\"allocator\":\"%s\"", allocstats_name(k));
	abuf_json_i64(&b, true, "allocator_allocated_bytes", c.allocated_bytes);
	send_json(fd, &b);
}

static void handle_mallinfo(int fd)
{
	struct abuf b = {0};

	json_head(&b, "palloc-mallinfo");
	allocstats_json(&b);
	send_json(fd, &b);
}

static void handle_index(int fd)
{
	static const char body[] = "palloc agent endpoints:\n"
				   "/debug/pprof/heap\n"
				   "/debug/pprof/heap?seconds=N\n"
				   "/debug/pprof/allocs\n"
				   "/debug/palloc/stats\n"
				   "/debug/palloc/mallinfo\n";

	http_write_response(fd, 200, "text/plain; charset=utf-8", NULL, body,
			    sizeof(body) - 1);
}

/* Only the socket's own user (and root) may talk to the agent. */
static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	return cr.uid == 0 || cr.uid == geteuid();
}

/*
 * Read the request head: at most HTTP_HEAD_MAX bytes within
 * CONTROL_HEAD_TIMEOUT_MS in total, so a slow or silent client cannot hold
 * the thread. Returns 1 parsed, 0 nothing came, -1 malformed or too slow.
 */
static int read_request(int fd, struct http_request *req)
{
	char buf[HTTP_HEAD_MAX];
	size_t len = 0;
	long deadline = now_ms() + CONTROL_HEAD_TIMEOUT_MS;

	while (len < sizeof(buf)) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		long left = deadline - now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return len ? -1 : 0;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return len ? -1 : 0;
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return len ? -1 : 0;
		len += (size_t)n;
		r = http_parse_request(buf, len, req);
		if (r != 0)
			return r;
	}
	return -1;
}

static void serve_one(int fd)
{
	struct http_request req;
	struct timeval tv = {.tv_sec = CONTROL_HEAD_TIMEOUT_MS / 1000};
	int r;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = CONTROL_SEND_TIMEOUT_S;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (!peer_allowed(fd)) {
		http_write_error(fd, 403, "not the agent's user");
		return;
	}
	r = read_request(fd, &req);
	if (r == 0)
		return;
	if (r < 0) {
		http_write_error(fd, 400, "malformed request");
		return;
	}
	if (strcmp(req.method, "GET") != 0) {
		http_write_error(fd, 405, "only GET is served");
		return;
	}
	if (strcmp(req.path, "/debug/pprof/heap") == 0)
		handle_profile(fd, &req, false);
	else if (strcmp(req.path, "/debug/pprof/allocs") == 0)
		handle_profile(fd, &req, true);
	else if (strcmp(req.path, "/debug/palloc/stats") == 0)
		handle_stats(fd);
	else if (strcmp(req.path, "/debug/palloc/mallinfo") == 0)
		handle_mallinfo(fd);
	else if (strcmp(req.path, "/") == 0 ||
		 strcmp(req.path, "/debug/pprof/") == 0)
		handle_index(fd);
	else
		http_write_error(fd, 404, "no such endpoint");
}

/*
 * Whether lfd is still the socket control_start() made. A daemon that
 * closes every descriptor and opens its own listener may get our number
 * back: accepting on it would steal the program's connections, so the
 * thread stops as soon as the descriptor is something else.
 */
static bool still_ours(int lfd)
{
	struct stat st;

	return fstat(lfd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       st.st_dev == ctl.dev && st.st_ino == ctl.ino;
}

static void *control_thread(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	agent_guard_enter();
	while (__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE)) {
		int fd;

		if (!still_ours(lfd))
			break;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				struct timespec ts = {0, 100000000L};

				nanosleep(&ts, NULL);
				continue;
			}
			break; /* EINVAL after shutdown(): stopping */
		}
		if (!still_ours(lfd)) {
			close(fd);
			break;
		}
		serve_one(fd);
		close(fd);
	}
	agent_guard_leave();
	return NULL;
}

/* "palloc: control socket disabled: why" on stderr, in one write(2). */
static void control_warn(void)
{
	char line[MSG_MAX + 64];
	int n = snprintf(line, sizeof(line),
			 "palloc: control socket disabled: %s\n", msg_last());

	if (n > 0)
		(void)!write(STDERR_FILENO, line,
			     (size_t)n < sizeof(line) ? (size_t)n
						      : sizeof(line) - 1);
}

int control_start(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[CTLSOCK_PATH_MAX];
	sigset_t all, old;
	pthread_attr_t attr;
	struct stat st;
	pthread_t th;
	int fd, rc;

	if (ctlsock_dir(dir, sizeof(dir)) < 0 || ctlsock_prepare_dir(dir) < 0 ||
	    ctlsock_path(dir, getpid(), ctl.path, sizeof(ctl.path)) < 0)
		goto fail;
	ctlsock_clean_stale(dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		msg_set_errno(errno, "socket");
		goto fail;
	}
	memcpy(sa.sun_path, ctl.path, strlen(ctl.path) + 1);
	unlink(ctl.path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		msg_set_errno(errno, "cannot bind '%s'", ctl.path);
		close(fd);
		goto fail;
	}
	/* The directory is 0700 already; the socket mode is belt and braces. */
	chmod(ctl.path, 0600);
	if (listen(fd, CONTROL_BACKLOG) < 0) {
		msg_set_errno(errno, "cannot listen on '%s'", ctl.path);
		unlink(ctl.path);
		close(fd);
		goto fail;
	}
	if (fstat(fd, &st) < 0) {
		msg_set_errno(errno, "cannot stat the socket");
		unlink(ctl.path);
		close(fd);
		goto fail;
	}
	ctl.dev = st.st_dev;
	ctl.ino = st.st_ino;
	ctl.lfd = fd;
	ctl.pid = getpid();
	__atomic_store_n(&ctl.running, true, __ATOMIC_RELEASE);
	/* The thread inherits this mask: no program signal lands there. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&th, &attr, control_thread, (void *)(intptr_t)fd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		msg_set_errno(rc, "cannot start the control thread");
		__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
		unlink(ctl.path);
		close(fd);
		ctl.lfd = -1;
		goto fail;
	}
	return 0;
fail:
	control_warn();
	ctl.path[0] = '\0';
	return -1;
}

void control_stop(void)
{
	if (ctl.lfd < 0)
		return;
	__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
	/* Only the process that bound the socket removes it. */
	if (ctl.pid == getpid() && ctl.path[0])
		unlink(ctl.path);
	/*
	 * shutdown() wakes the thread blocked in accept (close() would not);
	 * the fd stays open so its number cannot be reused under the thread
	 * while the process exits.
	 */
	shutdown(ctl.lfd, SHUT_RDWR);
}

void control_after_fork_child(void)
{
	/*
	 * The parent's thread does not exist here. Close (never shutdown:
	 * that would act on the parent's listening socket too) and start
	 * over with our own pid's socket.
	 */
	if (ctl.lfd >= 0)
		close(ctl.lfd);
	ctl.lfd = -1;
	ctl.path[0] = '\0';
	__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
	control_start();
}
