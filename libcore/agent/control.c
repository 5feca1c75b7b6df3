/* SPDX-License-Identifier: MIT */
/* The agent's control server: one thread answering HTTP/1.0 on a unix socket.
 */
#include "common.h"
#include "agent/agent.h"
#include "agent/allocstats.h"
#include "agent/fdhigh.h"
#include "agent/unseen.h"
#include "ctlsock.h"
#include "http.h"
#include "msg.h"
#include "pprof.h"
#include "pprof_pack.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*
 * Who serves: the socket is made at init, but a thread is started only
 * once the program has threads of its own (agent.c calls
 * control_start_thread()): an agent thread in a single-threaded program
 * would change it (glibc leaves its single-thread paths for good, unshare
 * CLONE_NEWUSER fails with EINVAL). Until then the program's own thread
 * serves, from control_serve_inline() at the agent's slow path of an
 * allocation (sample points), at most every CONTROL_INLINE_MS, without
 * waiting: only what is ready is read or written, and every phase of a
 * connection has a total deadline. palloc(7) documents both.
 *
 * One thread (or the program's thread) serves everything: the requests
 * are rare (a person, a scraper every few seconds), each costs one
 * snapshot of the stack table, and a single server bounds what the agent
 * can ever take from the program.
 *
 * The server runs with the reentrancy guard set, so every malloc it or
 * the libraries it calls make (dlopen, opendir, open_memstream, qsort)
 * goes to the real allocator untracked. Profiles are built in the agent's
 * arena (agent_build_profile, agent_allocator).
 */

#define CONTROL_BACKLOG 16
#define CONTROL_MAX_CONNS                                                      \
	16			 /* served together; then the oldest           \
				  * silent one gives its slot up */
#define CONTROL_READ_MS 2000	 /* to send the whole request */
#define CONTROL_WRITE_MS 10000	 /* to take the whole response */
#define CONTROL_MAX_SECONDS 3600 /* cap of ?seconds=N */
#define CONTROL_INLINE_MS 50	 /* inline serving: at most this often */

static struct {
	int lfd;
	pid_t pid; /* the process that bound path */
	char path[CTLSOCK_PATH_MAX];
	bool running;
	bool thread;  /* the control thread is started */
	bool serving; /* the loop runs (thread or inline) */
	long inline_ms;
	dev_t dev; /* identity of the listening socket, see still_ours() */
	ino_t ino;
} ctl = {.lfd = -1};

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- connections ---- */

/*
 * Up to CONTROL_MAX_CONNS connections are served together, by poll():
 * each is reading its request, waiting for the second snapshot of a
 * ?seconds=N request, or writing its response, and each phase has a total
 * deadline (not a per-read timeout, which a client trickling a byte at a
 * time would renew forever). A slow or silent client therefore delays no
 * other: when every slot is taken, a new connection takes the slot of the
 * one that has been reading its request longest (or else waiting
 * longest). Building a profile is the only step that serves one client at
 * a time, and it never waits on a client.
 */
enum conn_state { CONN_FREE = 0, CONN_READ, CONN_WAIT, CONN_WRITE };

struct conn {
	int state;
	int fd;
	bool eof;      /* the client half-closed (palloc-dump does) */
	bool allocs;   /* ?seconds=N on /debug/pprof/allocs */
	long since;    /* ms, accepted: eviction order */
	long deadline; /* ms: the end of the current phase */
	struct pprof_profile *p0; /* ?seconds=N: the first snapshot */
	char *out;		  /* the whole response (real malloc) */
	size_t outlen, outoff, inlen;
	char in[HTTP_HEAD_MAX];
};

static struct conn conns[CONTROL_MAX_CONNS];

static void conn_close(struct conn *c)
{
	if (c->state == CONN_FREE)
		return;
	close(c->fd);
	free(c->out);
	if (c->p0)
		pprof_free(c->p0);
	c->out = NULL;
	c->p0 = NULL;
	c->state = CONN_FREE;
}

/* Queue a response; the loop sends it by the write deadline. */
static void respond(struct conn *c, int status, const char *type,
		    const char *extra, const void *body, size_t len)
{
	char head[1024];
	int n = http_format_head(head, sizeof(head), status, type, extra, len);

	if (n >= 0)
		c->out = malloc((size_t)n + len);
	if (n < 0 || !c->out) {
		conn_close(c);
		return;
	}
	memcpy(c->out, head, (size_t)n);
	if (len)
		memcpy(c->out + n, body, len);
	c->outlen = (size_t)n + len;
	c->outoff = 0;
	c->state = CONN_WRITE;
	c->deadline = now_ms() + CONTROL_WRITE_MS;
}

static void respond_error(struct conn *c, int status, const char *detail)
{
	char body[512];
	size_t n = http_error_body(body, sizeof(body), status, detail);

	respond(c, status, "text/plain; charset=utf-8", NULL, body, n);
}

/* ---- handlers ---- */

static void send_profile(struct conn *c, struct pprof_profile *p,
			 const char *name)
{
	void *buf = NULL;
	size_t len = 0;
	char hdr[128];

	if (pprof_pack(p, true, &buf, &len) < 0) {
		respond_error(c, 500, msg_last());
		return;
	}
	snprintf(hdr, sizeof(hdr),
		 "Content-Disposition: attachment; filename=\"%s\"\r\n", name);
	respond(c, 200, "application/octet-stream", hdr, buf, len);
	pprof_pack_free(p, buf);
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

static void handle_profile(struct conn *c, const struct http_request *req,
			   bool allocs)
{
	struct pprof_profile *p0;
	char val[32];
	uint64_t seconds = 0;
	int r = http_query_get(req->query, "seconds", val, sizeof(val));

	if (r < 0 || (r > 0 && (parse_seconds(val, &seconds) < 0))) {
		respond_error(c, 400,
			      "seconds must be an integer from 1 "
			      "to 3600");
		return;
	}
	r = http_query_get(req->query, "debug", val, sizeof(val));
	if (r != 0 && strcmp(val, "0") != 0) {
		respond_error(c, 400,
			      "only debug=0 (the binary profile) "
			      "is served; palloc-dump --top "
			      "prints text");
		return;
	}
	p0 = agent_build_profile();
	if (!p0) {
		respond_error(c, 503, msg_last());
		return;
	}
	if (!seconds) {
		if (allocs)
			pprof_set_default_sample_type(p0, "alloc_space");
		send_profile(c, p0, allocs ? "allocs" : "heap");
		pprof_free(p0);
		return;
	}
	/* The loop comes back at the deadline, or drops the connection
	 * (and p0) when the client hangs up. */
	c->p0 = p0;
	c->allocs = allocs;
	c->state = CONN_WAIT;
	c->deadline = now_ms() + (long)seconds * 1000L;
}

/* ?seconds=N: the second snapshot is due. */
static void finish_delta(struct conn *c)
{
	struct pprof_profile *p0 = c->p0, *p, *d;

	c->p0 = NULL;
	p = agent_build_profile();
	if (!p) {
		pprof_free(p0);
		respond_error(c, 503, msg_last());
		return;
	}
	d = pprof_delta(agent_allocator(), p0, p);
	pprof_free(p0);
	pprof_free(p);
	if (!d) {
		respond_error(c, 500, msg_last());
		return;
	}
	if (c->allocs)
		pprof_set_default_sample_type(d, "alloc_space");
	send_profile(c, d, c->allocs ? "allocs-delta" : "heap-delta");
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

static void send_json(struct conn *c, struct abuf *b)
{
	abuf_printf(b, "}\n");
	if (b->oom)
		respond_error(c, 500, "out of memory");
	else
		respond(c, 200, "application/json", NULL, b->p, b->len);
	abuf_free(b);
}

/*
 * ,"anon_bytes":…,"anon_peak_bytes":…,"heap_seen_bytes":…,
 * "unseen_bytes":…,"unseen_owner":…,"unseen_warning":…: the anonymous
 * memory the process holds beside the malloc heap the agent saw
 * (agent/unseen.h); the warning (a string) only when most of it did not
 * come through malloc, else null.
 */
static void unseen_json(struct abuf *b)
{
	struct unseen u;
	char text[512];

	agent_get_unseen(&u);
	abuf_json_i64(b, true, "anon_bytes", u.anon_bytes);
	abuf_json_i64(b, true, "anon_peak_bytes", u.anon_peak_bytes);
	abuf_json_i64(b, true, "heap_seen_bytes", u.heap_bytes);
	abuf_json_i64(b, true, "unseen_bytes", u.unseen_bytes);
	abuf_printf(b, ",\"unseen_owner\":");
	if (u.owner)
		abuf_json_str(b, u.owner);
	else
		abuf_printf(b, "null");
	abuf_printf(b, ",\"unseen_warning\":");
	if (u.most) {
		unseen_text(&u, text, sizeof(text));
		abuf_json_str(b, text);
	} else {
		abuf_printf(b, "null");
	}
}

static void handle_stats(struct conn *c)
{
	struct agent_stats st;
	struct allocstats_comparable cmp;
	enum allocstats_kind k;
	struct abuf b = {0};
	int64_t sampled = sampled_inuse();
	int64_t inuse, peak;
	const char *peak_source;

	memset(&st, 0, sizeof(st));
	agent_get_stats(&st);
	k = allocstats_comparable(&cmp);
	inuse = st.exact ? st.inuse_bytes : cmp.allocated_bytes;
	/*
	 * The peak is never below what is in use now (palloc(7)): the
	 * sampled peak is an estimate of requested bytes, the allocator's
	 * inuse counts usable sizes and blocks from before the agent, so
	 * the higher of the three is the peak answered ("allocator" or
	 * "sampled" says which).
	 */
	peak = (int64_t)st.peak_inuse_bytes;
	peak_source = st.exact ? "exact" : "sampled";
	if (sampled > peak)
		peak = sampled;
	if (inuse > peak) {
		peak = inuse;
		peak_source = st.exact ? "exact" : "allocator";
	}
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
	abuf_json_i64(&b, true, "peak_inuse_bytes", peak);
	abuf_printf(&b, ",\"peak_inuse_source\":\"%s\"", peak_source);
	abuf_json_i64(&b, true, "sampled_inuse_bytes", sampled);
	json_u64s(&b,
		  (const char *const[]){"sampled_count", "dropped_count",
					"dropped_bytes", "stack_count"},
		  (const uint64_t[]){st.sampled_count, st.dropped_count,
				     st.dropped_bytes, st.stack_count},
		  4);
	abuf_printf(&b, ",\"allocator\":\"%s\"", allocstats_name(k));
	abuf_json_i64(&b, true, "allocator_allocated_bytes",
		      cmp.allocated_bytes);
	unseen_json(&b);
	send_json(c, &b);
}

static void handle_mallinfo(struct conn *c)
{
	struct abuf b = {0};

	json_head(&b, "palloc-mallinfo");
	allocstats_json(&b);
	send_json(c, &b);
}

static void handle_index(struct conn *c)
{
	static const char body[] = "palloc agent endpoints:\n"
				   "/debug/pprof/heap\n"
				   "/debug/pprof/heap?seconds=N\n"
				   "/debug/pprof/allocs\n"
				   "/debug/palloc/stats\n"
				   "/debug/palloc/mallinfo\n";

	respond(c, 200, "text/plain; charset=utf-8", NULL, body,
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

static void dispatch(struct conn *c, const struct http_request *req)
{
	if (strcmp(req->method, "GET") != 0)
		respond_error(c, 405, "only GET is served");
	else if (strcmp(req->path, "/debug/pprof/heap") == 0)
		handle_profile(c, req, false);
	else if (strcmp(req->path, "/debug/pprof/allocs") == 0)
		handle_profile(c, req, true);
	else if (strcmp(req->path, "/debug/palloc/stats") == 0)
		handle_stats(c);
	else if (strcmp(req->path, "/debug/palloc/mallinfo") == 0)
		handle_mallinfo(c);
	else if (strcmp(req->path, "/") == 0 ||
		 strcmp(req->path, "/debug/pprof/") == 0)
		handle_index(c);
	else
		respond_error(c, 404, "no such endpoint");
}

/* ---- the loop ---- */

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

/* Read what the client sent; answer once the request head is complete. */
static void conn_read(struct conn *c)
{
	struct http_request req;
	ssize_t n = read(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen);
	int r;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/* Gone, or said nothing: no answer. */
		if (c->inlen == 0 || n < 0)
			conn_close(c);
		else
			respond_error(c, 400, "malformed request");
		return;
	}
	c->inlen += (size_t)n;
	r = http_parse_request(c->in, c->inlen, &req);
	if (r > 0)
		dispatch(c, &req);
	else if (r < 0 || c->inlen == sizeof(c->in))
		respond_error(c, 400, "malformed request");
}

/* A client waiting for its delta: drain, and notice a half-close. */
static void conn_drain(struct conn *c)
{
	char buf[256];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n == 0)
		c->eof = true;
	else if (n < 0 && errno != EINTR && errno != EAGAIN)
		conn_close(c);
}

static void conn_write(struct conn *c)
{
	ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->outoff += (size_t)n;
	if (c->outoff == c->outlen)
		conn_close(c);
}

/* A phase's deadline passed. */
static void conn_expire(struct conn *c)
{
	if (c->state == CONN_WAIT)
		finish_delta(c);
	else if (c->state == CONN_READ && c->inlen)
		respond_error(c, 400,
			      "request not complete within the deadline");
	else
		conn_close(c);
}

/* A free slot, or the one to give up for a new client (NULL: none). */
static struct conn *free_slot(void)
{
	struct conn *victim = NULL;

	for (size_t i = 0; i < CONTROL_MAX_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->state == CONN_FREE)
			return c;
		if (c->state == CONN_WRITE)
			continue;
		if (!victim ||
		    (c->state == CONN_READ && (victim->state != CONN_READ ||
					       c->since < victim->since)) ||
		    (c->state == victim->state && c->since < victim->since))
			victim = c;
	}
	if (victim)
		conn_close(victim);
	return victim;
}

/* Accept what waits. -1 when lfd is shut down or no longer ours. */
static int accept_new(int lfd)
{
	for (int i = 0; i < CONTROL_MAX_CONNS; i++) {
		struct conn *c;
		/* moved high at once: the program owns the low numbers */
		int fd = agent_fd_high(
			accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK));

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				return 0;
			return -1; /* EINVAL after shutdown(): stopping */
		}
		if (!still_ours(lfd)) {
			close(fd);
			return -1;
		}
		c = free_slot();
		if (!c) {
			close(fd);
			return 0;
		}
		memset(c, 0, offsetof(struct conn, in));
		c->fd = fd;
		c->since = now_ms();
		c->state = CONN_READ;
		c->deadline = c->since + CONTROL_READ_MS;
		if (!peer_allowed(fd))
			respond_error(c, 403, "not the agent's user");
	}
	return 0;
}

/*
 * One round: wait up to timeout_ms (0: only what is ready) for the
 * listening socket and the connections, then serve what is ready and
 * what is due. -1 when the listening socket is gone.
 */
static int control_poll(int lfd, int timeout_ms)
{
	struct pollfd pfd[CONTROL_MAX_CONNS + 1];
	struct conn *pc[CONTROL_MAX_CONNS + 1];
	long now = now_ms(), next = now + timeout_ms;
	int n = 0, r;

	for (size_t i = 0; i < CONTROL_MAX_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->state != CONN_FREE && now >= c->deadline)
			conn_expire(c);
		if (c->state == CONN_FREE)
			continue;
		if (c->deadline < next)
			next = c->deadline;
		pfd[n].fd = c->fd;
		pfd[n].events = c->state == CONN_WRITE ? POLLOUT
				: c->eof	       ? 0
						       : POLLIN;
		pfd[n].revents = 0;
		pc[n++] = c;
	}
	pfd[n].fd = lfd;
	pfd[n].events = POLLIN;
	pfd[n].revents = 0;
	r = poll(pfd, (nfds_t)n + 1, next > now ? (int)(next - now) : 0);
	if (r < 0)
		return errno == EINTR ? 0 : -1;
	for (int i = 0; i < n; i++) {
		struct conn *c = pc[i];
		short ev = pfd[i].revents;

		if (!ev)
			continue;
		if (c->state == CONN_WAIT && (ev & (POLLHUP | POLLERR)))
			conn_close(c); /* hung up: the wait is cancelled */
		else if (c->state == CONN_WAIT)
			conn_drain(c);
		else if (c->state == CONN_READ)
			conn_read(c);
		else if (c->state == CONN_WRITE)
			conn_write(c);
	}
	if (pfd[n].revents & (POLLHUP | POLLERR | POLLNVAL))
		return -1;
	if (pfd[n].revents & POLLIN)
		return accept_new(lfd);
	return 0;
}

/* Drop every connection (a fork child's copies are the parent's). */
static void conns_drop(void)
{
	for (size_t i = 0; i < CONTROL_MAX_CONNS; i++)
		conn_close(&conns[i]);
}

/* Only one of the control thread and the program's thread (inline
 * serving) runs the loop at a time. */
static bool serving_try(void)
{
	return !__atomic_exchange_n(&ctl.serving, true, __ATOMIC_ACQUIRE);
}

static void serving_done(void)
{
	__atomic_store_n(&ctl.serving, false, __ATOMIC_RELEASE);
}

static void *control_thread(void *arg)
{
	int lfd = (int)(intptr_t)arg;

	agent_guard_enter();
	while (__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE)) {
		int r;

		if (!still_ours(lfd))
			break;
		if (!serving_try()) {
			struct timespec ts = {0, 1000000L};

			nanosleep(&ts, NULL);
			continue;
		}
		r = control_poll(lfd, 1000);
		serving_done();
		if (r < 0)
			break;
	}
	agent_guard_leave();
	return NULL;
}

void control_serve_inline(void)
{
	long now;

	if (ctl.lfd < 0 || __atomic_load_n(&ctl.thread, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE))
		return;
	now = now_ms();
	if (now - ctl.inline_ms < CONTROL_INLINE_MS && ctl.inline_ms)
		return;
	ctl.inline_ms = now;
	if (!serving_try())
		return;
	if (!still_ours(ctl.lfd) || control_poll(ctl.lfd, 0) < 0)
		__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
	serving_done();
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
	struct stat st;
	int fd;

	if (!agent_fd_room())
		return -1; /* no descriptor of ours under a tight limit */
	if (ctlsock_dir(dir, sizeof(dir)) < 0 || ctlsock_prepare_dir(dir) < 0 ||
	    ctlsock_path(dir, getpid(), ctl.path, sizeof(ctl.path)) < 0)
		goto fail;
	ctlsock_clean_stale(dir);
	/* nonblocking: accept never waits (control_poll) */
	fd = agent_fd_high(
		socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
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
	ctl.inline_ms = 0;
	__atomic_store_n(&ctl.running, true, __ATOMIC_RELEASE);
	return 0;
fail:
	control_warn();
	ctl.path[0] = '\0';
	return -1;
}

int control_start_thread(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t th;
	int rc;

	if (ctl.lfd < 0 || !__atomic_load_n(&ctl.running, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&ctl.thread, true, __ATOMIC_ACQ_REL))
		return 0;
	/* The thread inherits this mask: no program signal lands there. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	rc = pthread_create(&th, &attr, control_thread,
			    (void *)(intptr_t)ctl.lfd);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		/* The program's thread goes on serving. */
		__atomic_store_n(&ctl.thread, false, __ATOMIC_RELEASE);
		msg_set_errno(rc, "cannot start the control thread");
		return -1;
	}
	return 0;
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
	conns_drop();
	__atomic_store_n(&ctl.running, false, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl.thread, false, __ATOMIC_RELEASE);
	__atomic_store_n(&ctl.serving, false, __ATOMIC_RELEASE);
	control_start();
}
