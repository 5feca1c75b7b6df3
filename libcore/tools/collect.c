/* SPDX-License-Identifier: MIT */
/* palloc-run's profiles: written from its processes' records, and listed. */
#include "collect.h"
#include "msg.h"
#include "pattern.h"
#include "safefile.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

/* A profile read back larger than this is refused (the largest an agent's
 * table can make is about 380 MB unsymbolized; gzipped, far less). */
#define COLLECT_MAX_BYTES ((uint64_t)512 << 20)

/* The last number a pid's profiles got (%n). */
struct pid_seq {
	pid_t pid;
	uint64_t seq;
};

struct collect {
	char pattern[PATH_MAX];
	/* Taken by collect_add() (the watcher's thread and the main one):
	 * items, n, cap, sorted, seqs. */
	pthread_mutex_t lock;
	struct pid_seq *seqs;
	size_t nseqs, capseqs;
	struct collect_item *items;
	size_t n, cap;
	bool sorted;
	/* collect_set_hook() */
	void (*hook)(void *ctx, const struct collect_item *it);
	void *hook_ctx;
};

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
	memset(it, 0, sizeof(*it));
}

/* A new item for pid, NULL on ENOMEM. */
static struct collect_item *add_item(struct collect *c, pid_t pid, uid_t uid,
				     const char *program, const char *title)
{
	struct collect_item *it;
	char *t;

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
	it->pid = pid;
	it->uid = uid;
	pattern_sanitize(it->program, sizeof(it->program), program,
			 strlen(program));
	t = printable_dup(title ? title : "", title ? strlen(title) : 0);
	if (t) {
		snprintf(it->title, sizeof(it->title), "%s", t);
		free(t);
	}
	return it;
}

/* Forget an earlier item of a profile at path (it was replaced). */
static void drop_path(struct collect *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++) {
		struct collect_item *it = &c->items[i];

		if (strcmp(it->path, path) == 0) {
			item_free(it);
			c->items[i] = c->items[--c->n];
			return;
		}
	}
}

/*
 * The next number (%n) of pid's profiles into seq[cap]: its interval
 * profiles and its exit profile share one count per pid. "1" when memory
 * runs out for the table.
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

struct collect *collect_start(const char *pattern)
{
	struct collect *c = calloc(1, sizeof(*c));

	if (!c) {
		msg_set_errno(ENOMEM, "cannot keep the list of profiles");
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	snprintf(c->pattern, sizeof(c->pattern), "%s", pattern);
	return c;
}

int collect_add(struct collect *c, pid_t pid, uid_t uid, const char *program,
		const char *title, const char *seq,
		const struct pprof_profile *p, char *path, size_t cap)
{
	char name[PATH_MAX], num[24], prog[64];
	struct collect_item *it;
	struct timespec now;
	struct stat st;
	void *buf;
	size_t len;
	int rc = -1;

	if (pprof_encode(p, true, &buf, &len) < 0)
		return -1;
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
	it = add_item(c, pid, uid, program, title);
	if (it) {
		it->path = strdup(name);
		it->dev = st.st_dev;
		it->ino = st.st_ino;
		snprintf(it->seq, sizeof(it->seq), "%s", seq);
		clock_gettime(CLOCK_REALTIME, &now);
		it->written_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		if (!it->path)
			c->n--;
		else if (c->hook)
			c->hook(c->hook_ctx, it);
	}
	c->sorted = false;
out:
	pthread_mutex_unlock(&c->lock);
	pprof_free_buffer(p, buf);
	return rc;
}

void collect_set_hook(struct collect *c,
		      void (*hook)(void *ctx, const struct collect_item *it),
		      void *ctx)
{
	pthread_mutex_lock(&c->lock);
	c->hook = hook;
	c->hook_ctx = ctx;
	pthread_mutex_unlock(&c->lock);
}

/* In the order of their paths. */
static int by_path(const void *a, const void *b)
{
	const struct collect_item *x = a, *y = b;

	return strcmp(x->path, y->path);
}

const struct collect_item *collect_items(const struct collect *c, size_t *n)
{
	struct collect *m = (struct collect *)c;

	if (!c) {
		*n = 0;
		return NULL;
	}
	if (!m->sorted && m->n)
		qsort(m->items, m->n, sizeof(*m->items), by_path);
	m->sorted = true;
	*n = c->n;
	return c->items;
}

struct pprof_profile *collect_read(const struct collect_item *it, mode_t *mode)
{
	struct pprof_profile *p = NULL;
	struct stat st;
	int fd;

	fd = open(it->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		msg_set_errno(errno, "cannot open profile '%s'", it->path);
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != it->dev || st.st_ino != it->ino) {
		msg_set("cannot read profile '%s': it is no longer the file "
			"palloc-run wrote",
			it->path);
		goto out;
	}
	if ((uint64_t)st.st_size > COLLECT_MAX_BYTES || st.st_size == 0) {
		msg_set("cannot read profile '%s': %lld bytes", it->path,
			(long long)st.st_size);
		goto out;
	}
	/* The commands' one reader: streamed, bounded (pprof.h). */
	p = pprof_read_fd(fd, 0);
	if (!p) {
		char why[MSG_MAX];

		snprintf(why, sizeof(why), "%s", msg_last());
		msg_set("cannot decode profile '%s': %s", it->path, why);
	}
	*mode = st.st_mode & 07777;
out:
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
	for (size_t i = 0; i < c->n; i++)
		item_free(&c->items[i]);
	free(c->items);
	free(c->seqs);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
