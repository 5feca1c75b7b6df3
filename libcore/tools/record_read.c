/* SPDX-License-Identifier: MIT */
/* Finding and copying records (wire/record.h) from outside the process. */
#include "common.h"
#include "grow.h"
#include "search.h"
#include "rundir.h"
#include "msg.h"
#include "procfs.h"
#include "record_read.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* One line of /proc/PID/maps. */
struct maps_line {
	unsigned long start, limit, offset;
	char perms[8];
	unsigned major, minor;
	unsigned long inode;
	char *path; /* in the line; " (deleted)" cut, deleted set */
	bool deleted;
};

/* Parse the NUL-terminated line into *m. false when it does not read. */
static bool parse_maps_line(char *line, struct maps_line *m)
{
	int n = -1;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &m->start, &m->limit,
		   m->perms, &m->offset, &m->major, &m->minor, &m->inode,
		   &n) < 7 ||
	    n < 0)
		return false;
	m->path = line + n;
	len = strlen(m->path);
	if (len > 10 && strcmp(m->path + len - 10, " (deleted)") == 0) {
		m->path[len - 10] = '\0';
		m->deleted = true;
	}
	return true;
}

/* Does path end in "/PID.<digits>.rec"? */
static bool record_name_of(const char *path, pid_t pid)
{
	const char *base = strrchr(path, '/'), *p;
	char head[32];
	int n;

	if (!base)
		return false;
	base++;
	n = snprintf(head, sizeof(head), "%d.", (int)pid);
	if (n < 0 || strncmp(base, head, (size_t)n) != 0)
		return false;
	p = base + n;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return strcmp(p, ".rec") == 0;
}

/* Read /proc/PID/FILE whole (NUL-terminated). 0 or -1. */
static int read_proc(pid_t pid, const char *file, char **buf, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return procfs_read_file(path, buf, len);
}

/* Is uid one of the process's (the Uid: line of its status)? */
static bool process_uid(pid_t pid, uid_t uid)
{
	unsigned long u[4];
	char *buf, *line;
	size_t len;
	bool found = false;
	int n;

	if (read_proc(pid, "status", &buf, &len) < 0)
		return false;
	line = strstr(buf, "\nUid:");
	if (line) {
		n = sscanf(line + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2],
			   &u[3]);
		for (int i = 0; i < n; i++)
			found |= u[i] == (unsigned long)uid;
	}
	free(buf);
	return found;
}

/* Check the open file: regular, within RECORD_MAX_SIZE. 0 or -1. */
static int check_file(int fd, const char *what, struct stat *st)
{
	if (fstat(fd, st) < 0)
		return msg_set_errno(errno, "cannot stat record '%s'", what);
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return msg_set("record '%s' is not a regular file", what);
	}
	if ((uint64_t)st->st_size > RECORD_MAX_SIZE) {
		errno = EFBIG;
		return msg_set("record '%s' is too large: %lld bytes (at most "
			       "%llu)",
			       what, (long long)st->st_size,
			       (unsigned long long)RECORD_MAX_SIZE);
	}
	return 0;
}

int record_open(const char *path)
{
	struct stat st;
	int fd = open(path, OPEN_FLAGS);

	if (fd < 0)
		return msg_set_errno(errno, "cannot open record '%s'", path);
	if (check_file(fd, path, &st) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Open the file of maps line m of process pid: by its path, or, when
 * that is not the file mapped (deleted, or the path names another file
 * here: the process is in another mount namespace), through map_files. */
static int open_mapped(pid_t pid, const struct maps_line *m)
{
	char mf[96];
	struct stat st;
	int fd = open(m->path, OPEN_FLAGS);

	if (fd >= 0 && fstat(fd, &st) == 0 && major(st.st_dev) == m->major &&
	    minor(st.st_dev) == m->minor && st.st_ino == (ino_t)m->inode)
		return fd;
	if (fd >= 0)
		close(fd);
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%lx-%lx", (int)pid,
		 m->start, m->limit);
	/* a link to the file itself: O_NOFOLLOW would refuse it */
	return open(mf, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

int record_find_live(pid_t pid, char *path, size_t cap)
{
	struct maps_line m, found = {0};
	char *buf, *line, *nl, *keep = NULL;
	struct stat st;
	size_t len;
	int fd, e;

	if (read_proc(pid, "maps", &buf, &len) < 0) {
		e = errno;
		if (e == ENOENT || e == ESRCH)
			msg_set("no such process '%d'", (int)pid);
		errno = e;
		return -1;
	}
	for (line = buf; line < buf + len; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = buf + len;
		*nl = '\0';
		if (parse_maps_line(line, &m) && record_name_of(m.path, pid)) {
			found = m;
			keep = m.path;
		}
	}
	if (!keep) {
		free(buf);
		errno = ENOENT;
		return msg_set("no record mapped by process '%d' (not "
			       "running under palloc, or an agent without "
			       "records)",
			       (int)pid);
	}
	if (path)
		snprintf(path, cap, "%s", found.path);
	fd = open_mapped(pid, &found);
	if (fd < 0) {
		e = errno;
		msg_set_errno(e, "process '%d': cannot open record '%s'%s",
			      (int)pid, found.path,
			      found.deleted ? " (deleted)" : "");
		free(buf);
		errno = e;
		return -1;
	}
	if (check_file(fd, found.path, &st) < 0)
		goto fail;
	if (major(st.st_dev) != found.major ||
	    minor(st.st_dev) != found.minor ||
	    st.st_ino != (ino_t)found.inode) {
		errno = ESTALE;
		msg_set("process '%d': record '%s' is not the file it maps",
			(int)pid, found.path);
		goto fail;
	}
	if (st.st_uid != getuid() && st.st_uid != geteuid() &&
	    !process_uid(pid, st.st_uid)) {
		errno = EPERM;
		msg_set("process '%d': record '%s' owned by uid %u, not the "
			"process's",
			(int)pid, found.path, (unsigned)st.st_uid);
		goto fail;
	}
	free(buf);
	return fd;
fail:
	e = errno;
	close(fd);
	free(buf);
	errno = e;
	return -1;
}

/* pread all of [off, off + n) or up to EOF: the bytes read, or -1. */
static ssize_t pread_all(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r =
			pread(fd, (char *)buf + got, n - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int read_seq(int fd, uint32_t *seq)
{
	ssize_t r = pread_all(fd, seq, sizeof(*seq),
			      offsetof(struct record_header, seq));

	if (r != (ssize_t)sizeof(*seq)) {
		if (r >= 0)
			errno = EINVAL;
		return -1;
	}
	return 0;
}

int record_copy(int fd, struct record_image *im)
{
	struct stat st;
	uint32_t seq0, seq1;
	const struct record_header *h;
	ssize_t r;

	memset(im, 0, sizeof(*im));
	for (unsigned t = 0; t < RECORD_READ_TRIES; t++) {
		size_t want;
		void *nb;

		if (fstat(fd, &st) < 0)
			goto fail_errno;
		if ((uint64_t)st.st_size > RECORD_MAX_SIZE) {
			errno = EFBIG;
			msg_set("record too large: %lld bytes (at most %llu)",
				(long long)st.st_size,
				(unsigned long long)RECORD_MAX_SIZE);
			goto fail;
		}
		want = (size_t)st.st_size;
		if (want < RECORD_DATA) {
			errno = EINVAL;
			msg_set("record too short: %zu bytes (its header "
				"takes %u)",
				want, RECORD_DATA);
			goto fail;
		}
		if (read_seq(fd, &seq0) < 0)
			goto fail_errno;
		nb = realloc(im->buf, want);
		if (!nb)
			goto fail_errno;
		im->buf = nb;
		r = pread_all(fd, im->buf, want, 0);
		if (r < 0)
			goto fail_errno;
		im->len = (size_t)r;
		im->tries = t + 1;
		if (im->len < RECORD_DATA) {
			errno = EINVAL;
			msg_set("record too short: %zu bytes (its header "
				"takes %u)",
				im->len, RECORD_DATA);
			goto fail;
		}
		if (read_seq(fd, &seq1) < 0)
			goto fail_errno;
		h = im->buf;
		if (seq0 % 2 == 0 && seq0 == seq1 && h->seq == seq0 &&
		    h->size <= im->len)
			return 0;
	}
	im->inconsistent = true;
	return 0;
fail_errno:
	msg_set_errno(errno, "cannot copy the record");
fail:
	record_image_free(im);
	return -1;
}

int record_load(int fd, struct record_image *im, struct record_view *v)
{
	memset(v, 0, sizeof(*v));
	if (record_copy(fd, im) < 0)
		return -1;
	if (record_check(im->buf, im->len, NULL, v) < 0) {
		record_image_free(im);
		return -1;
	}
	return 0;
}

void record_loaded_free(struct record_image *im, struct record_view *v)
{
	record_view_free(v);
	record_image_free(im);
}

void record_image_free(struct record_image *im)
{
	if (!im)
		return;
	free(im->buf);
	memset(im, 0, sizeof(*im));
}

const char *record_life_name(enum record_life l)
{
	switch (l) {
	case RECORD_LIFE_LIVE:
		return "live";
	case RECORD_LIFE_EXITED:
		return "exited";
	case RECORD_LIFE_KILLED:
		return "killed";
	}
	return "unknown";
}

int record_start_ticks(pid_t pid, uint64_t *out)
{
	char *buf, *p;
	size_t len;
	int rc = -1;

	if (read_proc(pid, "stat", &buf, &len) < 0)
		return -1;
	p = strrchr(buf, ')');
	if (p) {
		/* fields 3 to 21, then starttime */
		p++;
		for (int f = 3; f <= 22 && p; f++) {
			while (*p == ' ')
				p++;
			if (f == 22) {
				char *end;

				errno = 0;
				*out = strtoull(p, &end, 10);
				rc = end != p && errno == 0 ? 0 : -1;
				break;
			}
			p = strchr(p, ' ');
		}
	}
	free(buf);
	return rc;
}

bool record_is_live(pid_t pid, uint64_t ticks, dev_t dev, ino_t ino)
{
	char *buf, *line, *nl;
	struct maps_line m;
	uint64_t now;
	bool mapped = false;
	size_t len;

	if (pid <= 0 || record_start_ticks(pid, &now) < 0 || now != ticks)
		return false;
	if (read_proc(pid, "maps", &buf, &len) < 0)
		return false;
	for (line = buf; line < buf + len && !mapped; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			nl = buf + len;
		*nl = '\0';
		mapped = parse_maps_line(line, &m) && m.inode == ino &&
			 m.major == major(dev) && m.minor == minor(dev);
	}
	free(buf);
	return mapped;
}

/* "PID.START.rec": pid and START. */
static bool parse_name(const char *name, pid_t *pid, int64_t *start)
{
	char *end;
	unsigned long long p, s;

	if (name[0] < '0' || name[0] > '9')
		return false;
	errno = 0;
	p = strtoull(name, &end, 10);
	if (errno || *end != '.' || p == 0 || p > INT_MAX || end[1] < '0' ||
	    end[1] > '9')
		return false;
	s = strtoull(end + 1, &end, 10);
	if (errno || strcmp(end, ".rec") != 0 || s > INT64_MAX)
		return false;
	*pid = (pid_t)p;
	*start = (int64_t)s;
	return true;
}

static void list_one(int dfd, const char *dir, const char *name,
		     struct record_listing *l)
{
	struct stat st;
	ssize_t r;
	int fd;

	int n = snprintf(l->path, sizeof(l->path), "%s/%s", dir, name);

	fd = n < 0 || (size_t)n >= sizeof(l->path)
		     ? -1
		     : openat(dfd, name, OPEN_FLAGS);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		l->pid = 0; /* skipped */
		if (fd >= 0)
			close(fd);
		return;
	}
	l->uid = st.st_uid;
	l->size = (uint64_t)st.st_size;
	r = pread_all(fd, &l->header, sizeof(l->header), 0);
	close(fd);
	l->valid = r == (ssize_t)sizeof(l->header) &&
		   memcmp(l->header.magic, RECORD_MAGIC,
			  sizeof(l->header.magic)) == 0 &&
		   l->header.version == RECORD_VERSION &&
		   l->header.pid == l->pid;
	if (!l->valid) {
		memset(&l->header, 0, sizeof(l->header));
		l->life = RECORD_LIFE_KILLED;
		return;
	}
	l->header.exe[sizeof(l->header.exe) - 1] = '\0';
	l->header.cmdline[sizeof(l->header.cmdline) - 1] = '\0';
	l->header.output[sizeof(l->header.output) - 1] = '\0';
	l->header.title[sizeof(l->header.title) - 1] = '\0';
	if (record_is_live(l->pid, l->header.start_ticks, st.st_dev, st.st_ino))
		l->life = RECORD_LIFE_LIVE;
	else if (l->header.state == RECORD_EXITED)
		l->life = RECORD_LIFE_EXITED;
	else
		l->life = RECORD_LIFE_KILLED;
	l->exit_status = l->header.exit_status;
}

static int listing_cmp(const void *pa, const void *pb)
{
	const struct record_listing *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return 0;
}

/* The user's own directory (rundir.h) must be the caller's and open to
 * nobody else, as the agent makes it: another user may have planted it
 * in /tmp first. false with msg_set() otherwise. */
static bool own_dir(int dfd, const char *dir)
{
	struct stat st;

	if (fstat(dfd, &st) < 0) {
		msg_set_errno(errno, "cannot stat '%s'", dir);
		return false;
	}
	if (st.st_uid != geteuid()) {
		msg_set("unsafe record directory '%s': owned by uid %u", dir,
			(unsigned)st.st_uid);
		return false;
	}
	if (st.st_mode & 077) {
		msg_set("unsafe record directory '%s': mode %03o", dir,
			(unsigned)(st.st_mode & 0777));
		return false;
	}
	return true;
}

int record_list(const char *dir, struct record_listing **out, size_t *n)
{
	char own[PATH_MAX];
	struct record_listing *v = NULL;
	size_t used = 0, cap = 0;
	struct dirent *d;
	DIR *dp;
	int dfd;

	*out = NULL;
	*n = 0;
	if (!dir) {
		if (rundir_path(own, sizeof(own)) < 0)
			return -1;
		dir = own;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno == ENOENT)
			return 0;
		return msg_set_errno(errno, "cannot open directory '%s'", dir);
	}
	if (dir == own && !own_dir(dfd, dir)) {
		close(dfd);
		return -1;
	}
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return msg_set_errno(errno, "cannot open directory '%s'", dir);
	}
	while ((d = readdir(dp))) {
		pid_t pid;
		int64_t start;

		if (!parse_name(d->d_name, &pid, &start))
			continue;
		if (grow_array(&v, &cap, used + 1, sizeof(*v)) < 0) {
			free(v);
			closedir(dp);
			return msg_set_errno(ENOMEM, "cannot list '%s'", dir);
		}
		memset(&v[used], 0, sizeof(v[used]));
		v[used].pid = pid;
		v[used].start_ns = start;
		list_one(dfd, dir, d->d_name, &v[used]);
		if (v[used].pid)
			used++;
	}
	closedir(dp);
	if (used > 1)
		qsort(v, used, sizeof(*v), listing_cmp);
	*out = v;
	*n = used;
	return 0;
}

struct record_maps_region {
	uint64_t start, limit, offset;
	char *name;
	uint64_t id; /* mapping id in maps->p, 0: not added */
};

int record_maps_read(pid_t pid, struct record_maps *m)
{
	char *buf, *line, *nl;
	struct maps_line ml;
	size_t len, cap = 0;

	memset(m, 0, sizeof(*m));
	if (read_proc(pid, "maps", &buf, &len) < 0)
		return -1;
	for (line = buf; line < buf + len; line = nl + 1) {
		struct record_maps_region *r;

		nl = strchr(line, '\n');
		if (!nl)
			nl = buf + len;
		*nl = '\0';
		if (!parse_maps_line(line, &ml) || strlen(ml.perms) < 3 ||
		    ml.perms[2] != 'x')
			continue;
		if (grow_array(&m->v, &cap, m->n + 1, sizeof(*m->v)) < 0)
			goto nomem;
		r = &m->v[m->n];
		r->start = ml.start;
		r->limit = ml.limit;
		r->offset = ml.offset;
		r->id = 0;
		r->name = strdup(ml.path[0] ? ml.path : "[anon:jit]");
		if (!r->name)
			goto nomem;
		m->n++;
	}
	free(buf);
	return 0;
nomem:
	free(buf);
	record_maps_free(m);
	return msg_set_errno(ENOMEM, "cannot read the maps of process '%d'",
			     (int)pid);
}

uint64_t record_maps_unmapped(void *ctx, struct pprof_profile *p, uint64_t addr)
{
	struct record_maps *m = ctx;
	size_t lo, hi = m->n;
	struct record_maps_region *r;

	if (m->p != p) { /* ids of another profile */
		for (size_t i = 0; i < m->n; i++)
			m->v[i].id = 0;
		m->p = p;
	}
	lo = SEARCH_AFTER(m->v, hi, start, addr);
	if (lo == 0 || addr >= m->v[lo - 1].limit)
		return 0;
	r = &m->v[lo - 1];
	return pprof_region_mapping(p, &r->id, r->start, r->limit, r->offset,
				    r->name);
}

void record_maps_free(struct record_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

bool record_maps_use(pid_t pid, struct record_maps *m,
		     struct record_profile_opts *o)
{
	if (record_maps_read(pid, m) < 0)
		return false;
	o->unmapped = record_maps_unmapped;
	o->unmapped_ctx = m;
	return true;
}
