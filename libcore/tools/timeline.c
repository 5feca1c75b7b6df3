/* SPDX-License-Identifier: MIT */
/* palloc-run --timeline: samples and events of the processes, NDJSON. */
#include "common.h"
#include "grow.h"
#include "bgthread.h"
#include "cgroup.h"
#include "clock.h"
#include "msg.h"
#include "procfs.h"
#include "safefile.h"
#include "record_profile.h"
#include "record_read.h"
#include "smallfile.h"
#include "timeline.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often the cgroup of a process without a limit is looked up again. */
#define CGROUP_AGAIN_MS 1000
/* A process gone without a known status: how long palloc-run may take to
 * say how it reaped it (timeline_reaped()) before the exit says null. */
#define GONE_GRACE_MS 1000
/* heap_alloc_bytes sums a copy of the whole record: one whose copy took
 * D ms is copied again D * READ_SHARE ms later at the earliest (at most
 * 1/READ_SHARE of a CPU on each), the samples between have it null. The
 * other heap figures are in the record's header, read every time. */
#define READ_SHARE 10

/* One process image seen (one record; in pid mode, the process). */
struct tl_proc {
	pid_t pid;
	int64_t start_ns;     /* the record's name: PID.START.rec */
	uint64_t start_ticks; /* /proc/PID/stat starttime */
	char path[PATH_MAX];  /* its record, "" when none yet */
	bool done;	      /* exit event written, or its image exec'd */
	long long read_ms;    /* the record's next copy (monotonic), 0: now */
	long long gone_ms;    /* first seen gone (monotonic), 0: not */
	int64_t gone_ns;      /* then (realtime) */
	/* its memory cgroup: usage of the cgroup whose limit applies
	 * (the smallest up to the root), the OOM kill count of its own */
	bool cg_known;
	long long cg_ms; /* when to look it up again */
	char usage_file[PATH_MAX + 32];
	char kills_file[PATH_MAX + 32];
	uint64_t limit; /* 0: none */
	uint64_t kills; /* the count when first seen */
	bool have_kills;
	unsigned crossed; /* bit i: percents[i] crossed */
	bool crossed_init;
};

/* A record seen once: taken at the next look (see pass_dir()). */
struct tl_pending {
	pid_t pid;
	int64_t start_ns;
};

struct tl_reaped {
	pid_t pid;
	int status;
};

struct timeline {
	int fd;
	char *path;
	struct timeline_config cfg;
	uint8_t token[16];
	bool root_seen;
	bool started; /* cfg set: the last look is to be made */
	struct bgthread looker;
	/* Taken to write a line and for what other threads change: ending,
	 * failed, reaped, oom. */
	pthread_mutex_t lock;
	bool ending, failed;
	off_t written; /* the whole lines' bytes */
	struct tl_reaped *reaped;
	size_t nreaped, capreaped;
	pid_t *oom; /* pids with an oom_kill event written */
	size_t noom, capoom;
	/* the sampling thread's (then timeline_finish()'s) */
	struct tl_proc *p;
	size_t np, capp;
	struct tl_pending *pend;
	size_t npend;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct timeline *timeline_open(const char *path)
{
	struct timeline *t;
	struct stat st;
	int fd, flags;

	fd = open(path,
		  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			  O_CLOEXEC,
		  0644);
	if (fd < 0) {
		int err = errno;

		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			msg_set("cannot write timeline '%s': a symbolic link",
				path);
		else if (err != EISDIR && lstat(path, &st) == 0 &&
			 !S_ISREG(st.st_mode))
			msg_set("cannot write timeline '%s': not a regular file",
				path);
		else
			msg_set_errno(err, "cannot write timeline '%s'", path);
		errno = err;
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		msg_set("cannot write timeline '%s': not a regular file", path);
		errno = EINVAL;
		return NULL;
	}
	flags = fcntl(fd, F_GETFL);
	if (ftruncate(fd, 0) < 0 || flags < 0 ||
	    fcntl(fd, F_SETFL, (flags & ~O_NONBLOCK) | O_APPEND) < 0) {
		int err = errno;

		close(fd);
		msg_set_errno(err, "cannot write timeline '%s'", path);
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->path = strdup(path);
	if (!t || !t->path) {
		free(t);
		close(fd);
		msg_set_errno(ENOMEM, "cannot write timeline '%s'", path);
		return NULL;
	}
	t->fd = fd;
	bgthread_init(&t->looker);
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

/* Write obj as one line, whole (one write(2) unless interrupted), and
 * free it. */
static void emit(struct timeline *t, json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	struct safefile_xfsz x;
	size_t len, done = 0;
	int err = 0;

	json_decref(obj);
	pthread_mutex_lock(&t->lock);
	if (!s) {
		if (!t->failed && t->cfg.warn)
			t->cfg.warn("timeline: a line could not be made: "
				    "out of memory");
		t->failed = true;
		goto out;
	}
	len = strlen(s);
	s[len++] = '\n'; /* over the NUL: json_dumps's buffer has it */
	/* past RLIMIT_FSIZE: EFBIG, never SIGXFSZ (which would end us) */
	safefile_xfsz_begin(&x);
	while (done < len && !t->failed) {
		ssize_t n = write(t->fd, s + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			t->failed = true;
			break;
		}
		done += (size_t)n;
	}
	safefile_xfsz_end(&x, err);
	if (!err) {
		t->written += (off_t)len;
	} else if (done) {
		/* no torn line left for a reader: the file ends at the last
		 * whole one (shrinking passes any size limit) */
		if (ftruncate(t->fd, t->written) < 0)
			err = errno;
	}
	if (err) {
		char line[PATH_MAX + 128];

		snprintf(line, sizeof(line),
			 "timeline '%s' not written further: %s", t->path,
			 strerror(err));
		if (t->cfg.warn)
			t->cfg.warn(line);
	}
out:
	pthread_mutex_unlock(&t->lock);
	free(s);
}

/* A value or null. */
static json_t *i64_or_null(bool have, int64_t v)
{
	return have ? json_integer((json_int_t)v) : json_null();
}

/* A string from outside (a record, /proc): printable ASCII kept, other
 * bytes '?', so that the line is valid JSON whatever it held. */
static json_t *outside_str(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	char *d = malloc(n + 1);
	json_t *j;

	if (!d)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		d[i] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
	}
	d[n] = '\0';
	j = json_string(d);
	free(d);
	return j;
}

/* A new event line: type, time_ns, pid, event. */
static json_t *event_new(const char *event, pid_t pid, int64_t time_ns)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "type", json_string("event"));
	json_object_set_new(o, "time_ns", json_integer(time_ns));
	json_object_set_new(o, "pid", json_integer(pid));
	json_object_set_new(o, "event", json_string(event));
	return o;
}

static void set(json_t *o, const char *key, json_t *v)
{
	if (o)
		json_object_set_new(o, key, v);
	else
		json_decref(v);
}

/* ---- the kernel's side ---- */

/*
 * /proc/PID/stat: state (field 3), starttime (22) and, for a zombie, the
 * wait status it will be reaped with (52, exit_code). false when it does
 * not read (gone).
 */
static bool proc_stat(pid_t pid, char *state, uint64_t *ticks, int *code)
{
	char path[64], buf[1024], *p, *save = NULL;
	ssize_t n;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = smallfile_read(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	buf[n < (ssize_t)sizeof(buf) ? n : (ssize_t)sizeof(buf) - 1] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return false;
	*code = -1;
	*ticks = 0;
	*state = 0;
	for (char *f = strtok_r(p + 1, " \n", &save); f;
	     f = strtok_r(NULL, " \n", &save)) {
		field++;
		if (field == 3)
			*state = f[0];
		else if (field == 22)
			*ticks = strtoull(f, NULL, 10);
		else if (field == 52)
			*code = (int)strtol(f, NULL, 10);
	}
	return field >= 22;
}

/* The "oom_kill N" line of a memory.events or memory.oom_control. */
static bool read_kills(const char *file, uint64_t *n)
{
	char buf[1024];
	ssize_t len = smallfile_read(file, buf, sizeof(buf) - 1);
	const char *p;

	if (len <= 0)
		return false;
	buf[len] = '\0';
	for (p = buf; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, "oom_kill ", 9) == 0) {
			*n = strtoull(p + 9, NULL, 10);
			return true;
		}
	}
	return false;
}

/*
 * Find p's memory cgroup (once; again every CGROUP_AGAIN_MS while it has
 * no limit): the smallest finite limit from its cgroup up to the
 * hierarchy's root, with the usage file of the cgroup holding it (its
 * own when none).
 */
static void cgroup_lookup(struct tl_proc *p)
{
	struct cgroup_mem cg;
	const char *use;
	long long now = clock_mono_ms();

	if (p->cg_known && (p->limit || now < p->cg_ms))
		return;
	p->cg_ms = now + CGROUP_AGAIN_MS;
	if (cgroup_read_pid(NULL, p->pid, &cg) < 0)
		return;
	if (!cg.dir) {
		cgroup_mem_free(&cg);
		return;
	}
	use = cg.version == 2 ? "memory.current" : "memory.usage_in_bytes";
	p->cg_known = true;
	p->limit = 0;
	snprintf(p->usage_file, sizeof(p->usage_file), "%s/%s", cg.dir, use);
	if (!p->have_kills) {
		snprintf(p->kills_file, sizeof(p->kills_file), "%s/%s", cg.dir,
			 cg.version == 2 ? "memory.events"
					 : "memory.oom_control");
		p->have_kills = read_kills(p->kills_file, &p->kills);
	}
	cgroup_effective_limit(cg.dir, cg.version, &p->limit, p->usage_file,
			       sizeof(p->usage_file));
	cgroup_mem_free(&cg);
}

/* ---- samples ---- */

/* The heap figures of a record. */
struct heap {
	bool have_inuse, have_alloc;
	int64_t inuse, alloc, resident, free;
};

/*
 * From the header h of a record (listed, or read): the inuse total the
 * stack table keeps (with weights per thread, its atomic total) and the
 * allocator's figures as the agent last took them.
 */
static void header_heap(const struct record_header *h, struct heap *hp)
{
	double in = h->inuse_bytes;

	hp->have_inuse = true;
	if (h->flags & RECORD_F_PER_THREAD)
		hp->inuse = h->pt_inuse_bytes > 0 ? h->pt_inuse_bytes : 0;
	else
		hp->inuse = in > 0 ? (int64_t)(in + 0.5) : 0;
	if (h->allocator.time_unix_ns) {
		hp->resident = h->allocator.resident_bytes;
		hp->free = h->allocator.free_bytes;
	}
}

/* The alloc total of the record at path (process pid): its copy, checked,
 * its samples summed as a profile's alloc_space. */
static void read_alloc(const char *path, pid_t pid, struct heap *hp)
{
	struct record_image im;
	struct record_view v;
	struct record_stats st;
	int fd = record_open(path);

	if (fd < 0)
		return;
	if (record_copy(fd, &im) < 0) {
		close(fd);
		return;
	}
	close(fd);
	if (record_check(im.buf, im.len, NULL, &v) == 0) {
		if (v.h->pid == pid) {
			record_stats(&v, &st);
			hp->have_alloc = true;
			hp->alloc = st.alloc_bytes_sampled;
		}
		record_view_free(&v);
	}
	record_image_free(&im);
}

/* The threshold events of p at usage (the limit's percents crossed
 * since the last look). */
static void thresholds(struct timeline *t, struct tl_proc *p, uint64_t usage,
		       int64_t ns)
{
	uint64_t tenths;

	if (!p->limit || !t->cfg.n_percents)
		return;
	tenths = (uint64_t)((double)usage * 1000.0 / (double)p->limit);
	for (size_t i = 0; i < t->cfg.n_percents; i++) {
		uint64_t at = (uint64_t)t->cfg.percents[i] * 10;
		json_t *o;

		if (tenths < at || (p->crossed & (1u << i)))
			continue;
		p->crossed |= 1u << i;
		if (!p->crossed_init)
			continue; /* crossed before it was seen */
		o = event_new("threshold", p->pid, ns);
		set(o, "percent", json_integer(t->cfg.percents[i]));
		set(o, "usage_bytes", json_integer((json_int_t)usage));
		set(o, "limit_bytes", json_integer((json_int_t)p->limit));
		emit(t, o);
	}
	p->crossed_init = true;
}

/* One sample line of p (its record at rec with header h, NULL: none),
 * and the threshold events it shows. */
static void sample(struct timeline *t, struct tl_proc *p, const char *rec,
		   const struct record_header *h)
{
	int64_t ns = now_ns();
	struct procfs_status ps;
	struct heap hp = {.resident = -1, .free = -1};
	bool have_ps, have_use = false;
	uint64_t usage = 0;
	json_t *o;

	if (h)
		header_heap(h, &hp);
	if (rec && clock_mono_ms() >= p->read_ms) {
		long long t0 = clock_mono_ms();

		read_alloc(rec, p->pid, &hp);
		p->read_ms =
			clock_mono_ms() + (clock_mono_ms() - t0) * READ_SHARE;
	}
	have_ps = procfs_read_status(NULL, p->pid, &ps) == 0;
	if (!have_ps)
		ps.have = 0;
	cgroup_lookup(p);
	if (p->cg_known)
		have_use = smallfile_u64(p->usage_file, &usage) == 0;
	o = json_object();
	set(o, "type", json_string("sample"));
	set(o, "time_ns", json_integer(ns));
	set(o, "pid", json_integer(p->pid));
	set(o, "heap_inuse_bytes", i64_or_null(hp.have_inuse, hp.inuse));
	set(o, "heap_alloc_bytes", i64_or_null(hp.have_alloc, hp.alloc));
	set(o, "allocator_resident_bytes",
	    i64_or_null(hp.resident >= 0, hp.resident));
	set(o, "allocator_free_bytes", i64_or_null(hp.free >= 0, hp.free));
#define ST(key, f)                                                             \
	set(o, key, i64_or_null(ps.have &(1u << (f)), (int64_t)ps.v[f]))
	ST("rss_bytes", PROCFS_ST_VM_RSS);
	ST("anon_bytes", PROCFS_ST_RSS_ANON);
	ST("file_bytes", PROCFS_ST_RSS_FILE);
	ST("shmem_bytes", PROCFS_ST_RSS_SHMEM);
	ST("swap_bytes", PROCFS_ST_VM_SWAP);
#undef ST
	set(o, "cgroup_usage_bytes", i64_or_null(have_use, (int64_t)usage));
	set(o, "cgroup_limit_bytes",
	    i64_or_null(p->cg_known && p->limit, (int64_t)p->limit));
	emit(t, o);
	if (have_use)
		thresholds(t, p, usage, ns);
}

/* ---- events ---- */

/* Was an oom_kill event written for pid? Marks it written. */
static bool oom_once(struct timeline *t, pid_t pid)
{
	bool seen = false;

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->noom && !seen; i++)
		seen = t->oom[i] == pid;
	if (!seen && t->noom == t->capoom) {
		pid_t *n = reallocarray(t->oom, t->capoom + 16, sizeof(*n));

		if (n) {
			t->oom = n;
			t->capoom += 16;
		}
	}
	if (!seen && t->noom < t->capoom)
		t->oom[t->noom++] = pid;
	pthread_mutex_unlock(&t->lock);
	return seen;
}

/*
 * The exit event of p at ns: status a wait status, -1 when unknown. A
 * process killed by SIGKILL (or how unknown) whose cgroup's OOM kill
 * count rose since it was first seen: an oom_kill event first.
 */
static void exit_event(struct timeline *t, struct tl_proc *p, int status,
		       int64_t ns)
{
	bool sig = status >= 0 && WIFSIGNALED(status);
	uint64_t kills;
	json_t *o;

	p->done = true;
	if ((status < 0 || (sig && WTERMSIG(status) == SIGKILL)) &&
	    p->have_kills && read_kills(p->kills_file, &kills) &&
	    kills > p->kills && !oom_once(t, p->pid)) {
		o = event_new("oom_kill", p->pid, ns);
		set(o, "limit_bytes", i64_or_null(p->limit, (int64_t)p->limit));
		emit(t, o);
	}
	o = event_new("exit", p->pid, ns);
	if (status < 0)
		set(o, "status", json_null());
	else
		set(o, "status",
		    json_integer(sig ? 128 + WTERMSIG(status)
				     : WEXITSTATUS(status)));
	set(o, "signal", sig ? json_integer(WTERMSIG(status)) : json_null());
	emit(t, o);
}

/* The wait status palloc-run reaped pid with, or -1. */
static int reaped_status(struct timeline *t, pid_t pid)
{
	int status = -1;

	pthread_mutex_lock(&t->lock);
	for (size_t i = t->nreaped; i-- > 0;)
		if (t->reaped[i].pid == pid) {
			status = t->reaped[i].status;
			break;
		}
	pthread_mutex_unlock(&t->lock);
	return status;
}

/*
 * p's record is not mapped any more and does not say it exited: killed
 * or crashed, or its image exec'd (a later record of the same process, or
 * the same process running on). The exit event once it is known gone:
 * with the status a zombie shows, or palloc-run's (waiting GONE_GRACE_MS
 * for it unless final).
 */
static void check_gone(struct timeline *t, struct tl_proc *p, bool final)
{
	uint64_t ticks;
	char state;
	int code, status;

	if (proc_stat(p->pid, &state, &ticks, &code) &&
	    ticks == p->start_ticks) {
		if (state != 'Z')
			return; /* runs on (exec'd a program without agent) */
		if (code >= 0) {
			exit_event(t, p, code, now_ns());
			return;
		}
	}
	if (!p->gone_ms) {
		p->gone_ms = clock_mono_ms();
		p->gone_ns = now_ns();
	}
	status = reaped_status(t, p->pid);
	if (status >= 0 || final ||
	    clock_mono_ms() - p->gone_ms >= GONE_GRACE_MS)
		exit_event(t, p, status, p->gone_ns);
}

static struct tl_proc *proc_find(struct timeline *t, pid_t pid, int64_t start)
{
	for (size_t i = 0; i < t->np; i++)
		if (t->p[i].pid == pid && t->p[i].start_ns == start)
			return &t->p[i];
	return NULL;
}

static struct tl_proc *proc_add(struct timeline *t, pid_t pid, int64_t start)
{
	struct tl_proc *p;

	p = grow_push(&t->p, &t->np, &t->capp, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->start_ns = start;
	return p;
}

static void exec_event(struct timeline *t, const struct record_listing *l,
		       int64_t ns)
{
	json_t *o = event_new("exec", l->pid, ns);

	set(o, "exe", outside_str(l->header.exe, sizeof(l->header.exe)));
	set(o, "cmdline",
	    outside_str(l->header.cmdline, sizeof(l->header.cmdline)));
	emit(t, o);
}

/*
 * A record seen for the first time: its process's fork (a new process but
 * the program palloc-run ran) and exec (an image that began with exec:
 * not a fork child's) events, at the agent's start.
 */
static struct tl_proc *new_record(struct timeline *t,
				  const struct record_listing *l)
{
	const struct record_header *h = &l->header;
	int64_t ns = h->start_unix_ns > 0 ? h->start_unix_ns : now_ns();
	struct tl_proc *p, *prior = NULL;

	for (size_t i = 0; i < t->np; i++)
		if (t->p[i].pid == l->pid &&
		    t->p[i].start_ticks == h->start_ticks &&
		    t->p[i].start_ns < l->start_ns)
			prior = &t->p[i];
	p = proc_add(t, l->pid, l->start_ns);
	if (!p)
		return NULL;
	p->start_ticks = h->start_ticks;
	snprintf(p->path, sizeof(p->path), "%s", l->path);
	if (prior) {
		for (size_t i = 0; i < t->np; i++)
			if (t->p[i].pid == l->pid &&
			    t->p[i].start_ticks == h->start_ticks &&
			    t->p[i].start_ns < l->start_ns)
				t->p[i].done = true;
		exec_event(t, l, ns);
		return p;
	}
	if (l->pid == t->cfg.pid && !t->root_seen) {
		t->root_seen = true;
		exec_event(t, l, ns);
		return p;
	}
	{
		pid_t parent = h->flags & RECORD_F_FORKED
				       ? h->parent_pid
				       : procfs_parent(l->pid);
		json_t *o = event_new("fork", l->pid, ns);

		set(o, "parent_pid", i64_or_null(parent > 0, parent));
		emit(t, o);
	}
	if (!(h->flags & RECORD_F_FORKED))
		exec_event(t, l, ns);
	return p;
}

static bool ours(const struct timeline *t, const struct record_listing *l)
{
	return l->valid &&
	       memcmp(l->header.token, t->token, sizeof(t->token)) == 0;
}

/* Was (pid, start) pending (seen at the last look)? */
static bool was_pending(const struct timeline *t, pid_t pid, int64_t start)
{
	for (size_t i = 0; i < t->npend; i++)
		if (t->pend[i].pid == pid && t->pend[i].start_ns == start)
			return true;
	return false;
}

/*
 * palloc-run's run: one look at the records of the run. A record is
 * taken at the second look that lists it (or the last): the agent fills
 * a new record's header without a seqcount (a fork child's starts as its
 * parent's copy), so the first may catch it half written. Then the new
 * ones first (in the listing's order, an image's exec before the
 * next's), so that an image that exec'd is not taken for one that ended.
 */
static void pass_dir(struct timeline *t, bool final)
{
	struct tl_pending *pend;
	struct record_listing *l;
	size_t n, npend = 0;

	if (record_list(t->cfg.dir, &l, &n) < 0)
		return;
	pend = calloc(n ? n : 1, sizeof(*pend));
	for (size_t i = 0; i < n; i++) {
		if (!ours(t, &l[i]) || proc_find(t, l[i].pid, l[i].start_ns))
			continue;
		if (final || !pend || was_pending(t, l[i].pid, l[i].start_ns)) {
			if (!new_record(t, &l[i]))
				break;
			continue;
		}
		pend[npend++] = (struct tl_pending){l[i].pid, l[i].start_ns};
	}
	free(t->pend);
	t->pend = pend;
	t->npend = npend;
	for (size_t i = 0; i < n; i++) {
		struct tl_proc *p =
			ours(t, &l[i]) ? proc_find(t, l[i].pid, l[i].start_ns)
				       : NULL;

		if (!p || p->done)
			continue;
		if (l[i].life == RECORD_LIFE_LIVE) {
			p->gone_ms = 0;
			if (!final)
				sample(t, p, l[i].path, &l[i].header);
		} else if (l[i].life == RECORD_LIFE_EXITED) {
			exit_event(t, p, (l[i].exit_status & 0xff) << 8,
				   l[i].header.end_unix_ns
					   ? l[i].header.end_unix_ns
					   : now_ns());
		} else {
			check_gone(t, p, final);
		}
	}
	free(l);
}

/* The header of the record at path: false when it does not read. */
static bool read_header(const char *path, struct record_header *h)
{
	int fd = record_open(path);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) &&
	     memcmp(h->magic, RECORD_MAGIC, sizeof(h->magic)) == 0;
	close(fd);
	return ok;
}

/* palloc-run -p: one look at the process and its live record. */
static void pass_pid(struct timeline *t, bool final)
{
	struct tl_proc *p = t->np ? &t->p[0] : NULL;
	struct record_header h;
	char path[PATH_MAX], state;
	uint64_t ticks;
	int fd, code;

	if (!p) {
		p = proc_add(t, t->cfg.pid, 0);
		if (!p)
			return;
		if (record_start_ticks(p->pid, &p->start_ticks) < 0) {
			p->done = true; /* no such process: nothing to say */
			return;
		}
	}
	if (p->done)
		return;
	fd = record_find_live(p->pid, path, sizeof(path));
	if (fd >= 0) {
		close(fd);
		snprintf(p->path, sizeof(p->path), "%s", path);
		if (!final)
			sample(t, p, path, read_header(path, &h) ? &h : NULL);
		return;
	}
	if (proc_stat(p->pid, &state, &ticks, &code) &&
	    ticks == p->start_ticks && state != 'Z') {
		if (!final)
			sample(t, p, NULL, NULL); /* no record (yet, or
						   * detached) */
		return;
	}
	if (p->path[0] && read_header(p->path, &h) &&
	    h.state == RECORD_EXITED && h.pid == p->pid) {
		exit_event(t, p, (h.exit_status & 0xff) << 8,
			   h.end_unix_ns ? h.end_unix_ns : now_ns());
		return;
	}
	check_gone(t, p, true);
}

static void pass(struct timeline *t, bool final)
{
	if (t->cfg.dir)
		pass_dir(t, final);
	else
		pass_pid(t, final);
}

static void *timeline_main(void *arg)
{
	struct timeline *t = arg;
	long long period = (long long)(t->cfg.period_ns / 1000000);
	long long next = clock_mono_ms();

	for (;;) {
		long long wait = next - clock_mono_ms();

		if (bgthread_sleep(&t->looker, wait > 0 ? (int)wait : 0))
			break;
		if (clock_mono_ms() < next)
			continue;
		pass(t, false);
		/* a late look is not made up for: the next is a period on */
		next += period;
		if (next <= clock_mono_ms())
			next = clock_mono_ms() + period;
	}
	return NULL;
}

static int hex_token(const char *hex, uint8_t out[16])
{
	if (!hex || strlen(hex) != 32)
		return -1;
	for (size_t i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

int timeline_start(struct timeline *t, const struct timeline_config *cfg)
{
	t->cfg = *cfg;
	if (t->cfg.period_ns < (uint64_t)TIMELINE_PERIOD_MIN_MS * 1000000)
		t->cfg.period_ns = (uint64_t)TIMELINE_PERIOD_MIN_MS * 1000000;
	if (cfg->dir && hex_token(cfg->token, t->token) < 0)
		return msg_set_errno(EINVAL, "timeline: bad token");
	t->started = true;
	return bgthread_start(&t->looker, timeline_main, t,
			      "start the timeline");
}

void timeline_profile(void *ctx, const struct collect_item *it)
{
	struct timeline *t = ctx;
	const char *kind;
	bool ending;
	json_t *o;

	pthread_mutex_lock(&t->lock);
	ending = t->ending;
	pthread_mutex_unlock(&t->lock);
	if (strcmp(it->seq, "peak") == 0)
		kind = "peak";
	else if (strncmp(it->seq, "at", 2) == 0)
		kind = "pressure";
	else
		kind = ending ? "exit" : "interval";
	o = event_new("profile", it->pid, it->written_ns);
	set(o, "path", outside_str(it->path, strlen(it->path)));
	set(o, "kind", json_string(kind));
	emit(t, o);
}

/* Stop the thread and look a last time (once). */
static void stop(struct timeline *t)
{
	bgthread_stop(&t->looker);
	if (t->started && !t->ending)
		pass(t, true);
}

void timeline_ending(struct timeline *t)
{
	if (!t)
		return;
	stop(t);
	pthread_mutex_lock(&t->lock);
	t->ending = true;
	pthread_mutex_unlock(&t->lock);
}

void timeline_reaped(struct timeline *t, pid_t pid, int status)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	if (t->nreaped == t->capreaped) {
		struct tl_reaped *n =
			reallocarray(t->reaped, t->capreaped + 64, sizeof(*n));

		if (n) {
			t->reaped = n;
			t->capreaped += 64;
		}
	}
	if (t->nreaped < t->capreaped)
		t->reaped[t->nreaped++] = (struct tl_reaped){pid, status};
	pthread_mutex_unlock(&t->lock);
}

void timeline_oom_kill(struct timeline *t, pid_t pid, int64_t time_ns,
		       uint64_t limit)
{
	json_t *o;

	if (!t || oom_once(t, pid))
		return;
	o = event_new("oom_kill", pid, time_ns);
	set(o, "limit_bytes", i64_or_null(limit, (int64_t)limit));
	emit(t, o);
}

int timeline_finish(struct timeline *t)
{
	int rc;

	if (!t)
		return 0;
	stop(t);
	rc = t->failed ? -1 : 0;
	if (close(t->fd) < 0 && !t->failed) {
		char line[PATH_MAX + 128];

		snprintf(line, sizeof(line), "timeline '%s': %s", t->path,
			 strerror(errno));
		if (t->cfg.warn)
			t->cfg.warn(line);
		rc = -1;
	}
	pthread_mutex_destroy(&t->lock);
	free(t->reaped);
	free(t->oom);
	free(t->p);
	free(t->pend);
	free(t->path);
	free(t);
	return rc;
}
