/* SPDX-License-Identifier: MIT */
/* palloc-run's collector: profiles delivered by its descendants' agents. */
#include "collect.h"
#include "deliver.h"
#include "msg.h"
#include "pattern.h"
#include "procfs.h"
#include "safefile.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Connections served at once (more wait in the backlog), and the bound on
 * the payload bytes held for all of them. */
#define MAX_CONN 64
#define MAX_INFLIGHT ((uint64_t)1 << 30)
#define BACKLOG 512
/* Parent links followed from a peer before giving up on finding us. */
#define MAX_ANCESTRY 4096

struct conn {
	int fd;
	pid_t pid;
	uid_t uid;
	long long deadline;
	struct deliver_header h;
	size_t got; /* bytes of header, then payload, read */
	unsigned char *payload;
};

/* The last number a pid's profiles got (%n). */
struct pid_seq {
	pid_t pid;
	uint64_t seq;
};

struct collect {
	char pattern[PATH_MAX];
	/* Taken by the thread around each message and by collect_add():
	 * items, n, cap, sorted, seqs. */
	pthread_mutex_t lock;
	struct pid_seq *seqs;
	size_t nseqs, capseqs;
	char *glob; /* the pattern with %p, %e, %n, %t as '*' */
	int lfd;
	int wake[2];
	pthread_t th;
	struct conn conns[MAX_CONN];
	size_t nconn;
	uint64_t inflight;
	struct collect_item *items;
	size_t n, cap;
	size_t refused;
	bool sorted;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The pattern as a fnmatch(3) pattern: a file an agent says it wrote must
 * match it. */
static char *make_glob(const char *pattern)
{
	size_t cap = 2 * strlen(pattern) + 1;
	char *g = malloc(cap);

	if (g && pattern_glob(g, cap, pattern) < 0) {
		free(g);
		return NULL;
	}
	return g;
}

static bool is_descendant(pid_t pid)
{
	pid_t self = getpid();

	for (int i = 0; i < MAX_ANCESTRY && pid > 1; i++) {
		pid_t pp = procfs_parent(pid);

		if (pp == self)
			return true;
		if (pp <= 0 || pp == pid)
			return false;
		pid = pp;
	}
	return false;
}

/* A copy of s[cap] (not necessarily terminated) with control
 * characters as '?', for printing. */
static char *printable_dup(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	char *d = malloc(n + 1);

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		d[i] = ch < 0x20 || ch == 0x7f ? '?' : (char)ch;
	}
	d[n] = '\0';
	return d;
}

static void item_free(struct collect_item *it)
{
	free(it->path);
	free(it->why);
	memset(it, 0, sizeof(*it));
}

/* A new record for conn k's peer, NULL on ENOMEM. */
static struct collect_item *add_item(struct collect *c, const struct conn *k,
				     enum collect_state state)
{
	struct collect_item *it;
	char *t;

	/* The pid has said more than hello: that is no longer news. */
	for (size_t i = 0; i < c->n; i++) {
		if (c->items[i].state != COLLECT_HELLO ||
		    c->items[i].pid != k->pid)
			continue;
		item_free(&c->items[i]);
		c->items[i] = c->items[--c->n];
		break;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct collect_item *n = realloc(c->items, cap * sizeof(*n));

		if (!n)
			return NULL;
		c->items = n;
		c->cap = cap;
	}
	it = &c->items[c->n++];
	memset(it, 0, sizeof(*it));
	it->state = state;
	it->pid = k->pid;
	it->uid = k->uid;
	pattern_sanitize(it->program, sizeof(it->program), k->h.program,
			 strnlen(k->h.program, sizeof(k->h.program)));
	t = printable_dup(k->h.title, sizeof(k->h.title));
	if (t) {
		snprintf(it->title, sizeof(it->title), "%s", t);
		free(t);
	}
	return it;
}

/* Forget an earlier record of a profile at path (it was replaced). */
static void drop_path(struct collect *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++) {
		struct collect_item *it = &c->items[i];

		if ((it->state == COLLECT_RECEIVED ||
		     it->state == COLLECT_ANNOUNCED) &&
		    strcmp(it->path, path) == 0) {
			item_free(it);
			c->items[i] = c->items[--c->n];
			return;
		}
	}
}

static void record_failure(struct collect *c, const struct conn *k,
			   const char *path, const char *why)
{
	struct collect_item *it = add_item(c, k, COLLECT_FAILED);

	if (!it)
		return;
	it->path = strdup(path);
	it->why = printable_dup(why, strlen(why));
	if (!it->path || !it->why) {
		item_free(it);
		c->n--;
	}
}

static void reply(const struct conn *k, int err, const char *text)
{
	struct deliver_reply r;

	memset(&r, 0, sizeof(r));
	memcpy(r.magic, DELIVER_MAGIC, sizeof(r.magic));
	r.err = err;
	memcpy(r.text, text, strnlen(text, sizeof(r.text) - 1));
	/* The socket buffer takes it at once; a peer gone is no matter. */
	(void)send(k->fd, &r, sizeof(r), MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * The next number (%n) of pid's profiles into seq[cap]: palloc-run's
 * own (interval, exit from the record) and the agents' numbered ones
 * share one count per pid. "1" when memory runs out for the table.
 */
static void next_seq(struct collect *c, pid_t pid, char *seq, size_t cap)
{
	struct pid_seq *s = NULL;

	for (size_t i = 0; i < c->nseqs; i++)
		if (c->seqs[i].pid == pid)
			s = &c->seqs[i];
	if (!s && c->nseqs == c->capseqs) {
		size_t n = c->capseqs ? 2 * c->capseqs : 64;
		struct pid_seq *m = realloc(c->seqs, n * sizeof(*m));

		if (m) {
			c->seqs = m;
			c->capseqs = n;
		}
	}
	if (!s && c->nseqs < c->capseqs) {
		s = &c->seqs[c->nseqs++];
		*s = (struct pid_seq){pid, 0};
	}
	snprintf(seq, cap, "%llu", s ? (unsigned long long)++s->seq : 1ull);
}

/* A whole profile arrived: write it as the pattern names it. */
static void take_profile(struct collect *c, struct conn *k)
{
	char path[PATH_MAX], program[64], seq[24];
	struct stat st;
	struct collect_item *it;
	int rc;

	pattern_sanitize(program, sizeof(program), k->h.program,
			 strnlen(k->h.program, sizeof(k->h.program)));
	if (!pattern_seq_valid(k->h.seq)) {
		reply(k, EINVAL, "invalid sequence");
		c->refused++;
		return;
	}
	/* Numbered: the pid's next number, palloc-run's interval profiles
	 * counted (the agent counts only its own). */
	if (k->h.seq[0] >= '0' && k->h.seq[0] <= '9')
		next_seq(c, k->pid, seq, sizeof(seq));
	else
		snprintf(seq, sizeof(seq), "%s", k->h.seq);
	if (pattern_expand(path, sizeof(path), c->pattern, (long)k->pid,
			   program, seq, (long long)time(NULL)) < 0) {
		reply(k, ENAMETOOLONG, "the profile's name is too long");
		record_failure(c, k, c->pattern, "the name is too long");
		return;
	}
	rc = safefile_write_file(path, 0600, k->payload, (size_t)k->h.length,
				 &st);
	if (rc < 0) {
		int err = errno;

		record_failure(c, k, path, msg_last());
		reply(k, err ? err : EIO, msg_last());
		return;
	}
	reply(k, 0, path);
	if (rc > 0)
		return; /* /dev/null: discarded */
	drop_path(c, path);
	it = add_item(c, k, COLLECT_RECEIVED);
	if (!it)
		return;
	snprintf(it->seq, sizeof(it->seq), "%s", seq);
	it->path = strdup(path);
	it->dev = st.st_dev;
	it->ino = st.st_ino;
	if (!it->path)
		c->n--;
}

/* The agent wrote a file itself: remember it if it is one of ours. */
static void take_written(struct collect *c, const struct conn *k)
{
	const char *path = k->h.path;
	struct collect_item *it;

	if (!c->glob || fnmatch(c->glob, path, FNM_PATHNAME | FNM_PERIOD)) {
		c->refused++;
		return;
	}
	drop_path(c, path);
	it = add_item(c, k, COLLECT_ANNOUNCED);
	if (!it)
		return;
	it->path = strdup(path);
	it->dev = (dev_t)k->h.dev;
	it->ino = (ino_t)k->h.ino;
	if (!it->path)
		c->n--;
}

static void take_locked(struct collect *c, struct conn *k)
{
	k->h.path[sizeof(k->h.path) - 1] = '\0';
	k->h.why[sizeof(k->h.why) - 1] = '\0';
	k->h.seq[sizeof(k->h.seq) - 1] = '\0';
	switch (k->h.kind) {
	case DELIVER_HELLO: {
		struct collect_item *it = add_item(c, k, COLLECT_HELLO);

		/* A note on why it may deliver nothing (a Go program). */
		if (it && k->h.why[0])
			it->why = printable_dup(k->h.why, strlen(k->h.why));
		break;
	}
	case DELIVER_PROFILE:
		take_profile(c, k);
		break;
	case DELIVER_WRITTEN:
		take_written(c, k);
		break;
	case DELIVER_FAILED:
		record_failure(c, k, k->h.path, k->h.why);
		break;
	}
}

static void take(struct collect *c, struct conn *k)
{
	pthread_mutex_lock(&c->lock);
	take_locked(c, k);
	c->sorted = false;
	pthread_mutex_unlock(&c->lock);
}

/* Close conn i; the later ones move down, keeping the order of arrival
 * (a process's hello is taken before its profile). */
static void conn_close(struct collect *c, size_t i)
{
	struct conn *k = &c->conns[i];

	close(k->fd);
	if (k->payload) {
		c->inflight -= k->h.length;
		free(k->payload);
	}
	memmove(&c->conns[i], &c->conns[i + 1],
		(c->nconn - i - 1) * sizeof(*k));
	c->nconn--;
}

/* Is the header acceptable? Then allocate the payload's room. */
static bool header_ok(struct collect *c, struct conn *k)
{
	if (memcmp(k->h.magic, DELIVER_MAGIC, sizeof(k->h.magic)) != 0 ||
	    k->h.kind < DELIVER_HELLO || k->h.kind > DELIVER_FAILED)
		return false;
	if (k->h.kind != DELIVER_PROFILE)
		return k->h.length == 0;
	if (k->h.length == 0 || k->h.length > DELIVER_MAX_PAYLOAD ||
	    c->inflight + k->h.length > MAX_INFLIGHT)
		return false;
	k->payload = malloc((size_t)k->h.length);
	if (!k->payload)
		return false;
	c->inflight += k->h.length;
	return true;
}

/* Read what conn i has; true when it is done with (closed). */
static bool conn_read(struct collect *c, size_t i)
{
	struct conn *k = &c->conns[i];
	size_t hlen = sizeof(k->h);
	size_t want = k->got < hlen ? hlen - k->got
				    : hlen + (size_t)k->h.length - k->got;
	char *dst = k->got < hlen ? (char *)&k->h + k->got
				  : (char *)k->payload + (k->got - hlen);
	ssize_t n = recv(k->fd, dst, want, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		conn_close(c, i);
		return true;
	}
	k->got += (size_t)n;
	if (k->got == hlen && !header_ok(c, k)) {
		c->refused++;
		conn_close(c, i);
		return true;
	}
	if (k->got < hlen || k->got < hlen + (size_t)k->h.length)
		return false;
	take(c, k);
	conn_close(c, i);
	return true;
}

/* Accept what is queued, while there is room. */
static void accept_all(struct collect *c)
{
	while (c->nconn < MAX_CONN) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct conn *k;
		int fd = accept4(c->lfd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    cr.pid <= 0 || !is_descendant(cr.pid)) {
			/* Gone already (a hello sent on the way out): no
			 * telling; alive and not ours: a stranger. */
			if (procfs_parent(cr.pid) > 0)
				c->refused++;
			close(fd);
			continue;
		}
		k = &c->conns[c->nconn++];
		memset(k, 0, sizeof(*k));
		k->fd = fd;
		k->pid = cr.pid;
		k->uid = cr.uid;
		k->deadline = now_ms() + COLLECT_TIMEOUT_MS;
	}
}

static void *collect_main(void *arg)
{
	struct collect *c = arg;
	bool stopping = false;

	for (;;) {
		struct pollfd pf[2 + MAX_CONN];
		long long now = now_ms(), next = -1;
		size_t np = 0, first;
		int timeout;

		pf[np++] = (struct pollfd){.fd = c->wake[0], .events = POLLIN};
		if (!stopping && c->nconn < MAX_CONN)
			pf[np++] =
				(struct pollfd){.fd = c->lfd, .events = POLLIN};
		first = np;
		for (size_t i = 0; i < c->nconn; i++) {
			pf[np++] = (struct pollfd){.fd = c->conns[i].fd,
						   .events = POLLIN};
			if (next < 0 || c->conns[i].deadline < next)
				next = c->conns[i].deadline;
		}
		if (stopping && c->nconn == 0)
			break;
		timeout = next < 0 ? -1 : next <= now ? 0 : (int)(next - now);
		if (poll(pf, np, timeout) < 0 && errno != EINTR)
			break;
		if (!stopping && (pf[0].revents & POLLIN)) {
			/* Stop: take what is queued now, then no more. */
			stopping = true;
			accept_all(c);
			continue;
		}
		if (!stopping && first == 2 && (pf[1].revents & POLLIN))
			accept_all(c);
		/* In order of arrival; i stays when conn i was closed. */
		for (size_t j = first, i = 0; j < np; j++) {
			struct conn *k = &c->conns[i];

			if (pf[j].revents && conn_read(c, i))
				continue;
			if (now_ms() >= k->deadline) {
				if (k->got >= sizeof(k->h) &&
				    k->h.kind == DELIVER_PROFILE)
					record_failure(c, k, "",
						       "its delivery took too "
						       "long");
				conn_close(c, i);
				continue;
			}
			i++;
		}
	}
	return NULL;
}

struct collect *collect_start(const char *pattern, char *env, size_t cap)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct collect *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	char name[64];
	uint64_t r = 0;
	int err;

	if (!c) {
		msg_set_errno(ENOMEM, "cannot collect profiles");
		return NULL;
	}
	c->lfd = c->wake[0] = c->wake[1] = -1;
	pthread_mutex_init(&c->lock, NULL);
	snprintf(c->pattern, sizeof(c->pattern), "%s", pattern);
	c->glob = make_glob(pattern);
	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r ^= (uint64_t)now_ms() * 0x9e3779b97f4a7c15ull;
	snprintf(name, sizeof(name), "palloc-run.%d.%016llx", (int)getpid(),
		 (unsigned long long)r);
	memcpy(sa.sun_path + 1, name, strlen(name));
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0 || !c->glob ||
	    bind(c->lfd, (struct sockaddr *)&sa,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			     strlen(name))) < 0 ||
	    listen(c->lfd, BACKLOG) < 0 || pipe2(c->wake, O_CLOEXEC) < 0)
		goto fail;
	/* The thread takes no signal: the main thread forwards them. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&c->th, NULL, collect_main, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		goto fail;
	}
	snprintf(env, cap, "@%s", name);
	return c;
fail:
	err = errno;
	msg_set_errno(err ? err : ENOMEM, "cannot listen for profiles");
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->wake[0] >= 0) {
		close(c->wake[0]);
		close(c->wake[1]);
	}
	free(c->glob);
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

void collect_stop(struct collect *c)
{
	if (!c || c->lfd < 0)
		return;
	if (write(c->wake[1], "x", 1) < 0)
		return;
	pthread_join(c->th, NULL);
	close(c->lfd);
	close(c->wake[0]);
	close(c->wake[1]);
	c->lfd = -1;
}

int collect_add(struct collect *c, pid_t pid, uid_t uid, const char *program,
		const char *title, const char *seq,
		const struct pprof_profile *p, char *path, size_t cap)
{
	char name[PATH_MAX], num[24], prog[64];
	struct conn k = {.pid = pid, .uid = uid};
	struct collect_item *it;
	struct timespec now;
	struct stat st;
	void *buf;
	size_t len;
	int rc = -1;

	if (pprof_encode(p, true, &buf, &len) < 0)
		return -1;
	snprintf(k.h.program, sizeof(k.h.program), "%s", program);
	snprintf(k.h.title, sizeof(k.h.title), "%s", title ? title : "");
	pthread_mutex_lock(&c->lock);
	if (!seq) {
		next_seq(c, pid, num, sizeof(num));
		seq = num;
	}
	pattern_sanitize(prog, sizeof(prog), program, strlen(program));
	if (pattern_expand(name, sizeof(name), c->pattern, (long)pid, prog, seq,
			   (long long)time(NULL)) < 0) {
		msg_set_errno(ENAMETOOLONG, "cannot name the profile of pid %d",
			      (int)pid);
		goto out;
	}
	rc = safefile_write_file(name, 0600, buf, len, &st);
	if (rc != 0)
		goto out;
	if (path)
		snprintf(path, cap, "%s", name);
	drop_path(c, name);
	it = add_item(c, &k, COLLECT_RECEIVED);
	if (it) {
		it->path = strdup(name);
		it->dev = st.st_dev;
		it->ino = st.st_ino;
		it->from_record = true;
		snprintf(it->seq, sizeof(it->seq), "%s", seq);
		clock_gettime(CLOCK_REALTIME, &now);
		it->written_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		if (!it->path)
			c->n--;
	}
	c->sorted = false;
out:
	pthread_mutex_unlock(&c->lock);
	pprof_free_buffer(p, buf);
	return rc;
}

static int rank(enum collect_state s)
{
	return s == COLLECT_RECEIVED || s == COLLECT_ANNOUNCED ? 0
	       : s == COLLECT_FAILED			       ? 1
							       : 2;
}

static int by_kind_path(const void *a, const void *b)
{
	const struct collect_item *x = a, *y = b;

	if (rank(x->state) != rank(y->state))
		return rank(x->state) - rank(y->state);
	if (rank(x->state) == 0)
		return strcmp(x->path, y->path);
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

const struct collect_item *collect_items(const struct collect *c, size_t *n)
{
	struct collect *m = (struct collect *)c;

	if (!c) {
		*n = 0;
		return NULL;
	}
	if (!m->sorted && m->n)
		qsort(m->items, m->n, sizeof(*m->items), by_kind_path);
	m->sorted = true;
	*n = c->n;
	return c->items;
}

bool collect_delivered(const struct collect *c, pid_t pid)
{
	for (size_t i = 0; c && i < c->n; i++) {
		const struct collect_item *it = &c->items[i];

		if (it->pid == pid && it->state != COLLECT_HELLO &&
		    !it->from_record)
			return true;
	}
	return false;
}

size_t collect_refused(const struct collect *c)
{
	return c ? c->refused : 0;
}

struct pprof_profile *collect_read(const struct collect_item *it, mode_t *mode)
{
	struct pprof_profile *p = NULL;
	unsigned char *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd;

	fd = open(it->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		msg_set_errno(errno, "cannot open profile '%s'", it->path);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != it->dev || st.st_ino != it->ino ||
	    (it->state == COLLECT_ANNOUNCED && st.st_uid != it->uid)) {
		msg_set("cannot read profile '%s': it is no longer the file "
			"the process wrote",
			it->path);
		goto out;
	}
	if ((uint64_t)st.st_size > DELIVER_MAX_PAYLOAD || st.st_size == 0) {
		msg_set("cannot read profile '%s': %lld bytes", it->path,
			(long long)st.st_size);
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		msg_set_errno(ENOMEM, "cannot read profile '%s'", it->path);
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			msg_set_errno(n < 0 ? errno : EIO,
				      "cannot read profile '%s'", it->path);
			goto out;
		}
		len += (size_t)n;
	}
	p = pprof_decode(buf, len, 0, NULL);
	if (!p) {
		char why[MSG_MAX];

		snprintf(why, sizeof(why), "%s", msg_last());
		msg_set("cannot decode profile '%s': %s", it->path, why);
	}
	*mode = st.st_mode & 07777;
out:
	free(buf);
	close(fd);
	return p;
}

int collect_rewrite(const struct collect_item *it,
		    const struct pprof_profile *p, mode_t mode)
{
	struct safefile sf;
	void *buf;
	size_t len;
	int rc;

	if (pprof_encode(p, true, &buf, &len) < 0)
		return -1;
	rc = safefile_open(&sf, it->path, mode & 0700);
	if (rc == 0) {
		/* exactly the mode it had, whatever the umask */
		if (fchmod(sf.fd, mode) < 0 ||
		    safefile_write(&sf, buf, len) < 0) {
			if (errno != EFBIG)
				msg_set_errno(errno, "cannot write '%s'",
					      it->path);
			safefile_abort(&sf);
			rc = -1;
		} else {
			rc = safefile_commit(&sf, NULL);
		}
	}
	pprof_free_buffer(p, buf);
	return rc < 0 ? -1 : 0;
}

void collect_free(struct collect *c)
{
	if (!c)
		return;
	collect_stop(c);
	for (size_t i = 0; i < c->n; i++)
		item_free(&c->items[i]);
	free(c->items);
	free(c->seqs);
	free(c->glob);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
