/* SPDX-License-Identifier: MIT */
/* palloc-run's records: the run's directory, profiles made from records. */
#include "common.h"
#include "bgthread.h"
#include "cgroup.h"
#include "clock.h"
#include "elfcheck.h"
#include "grow.h"
#include "msg.h"
#include "pattern.h"
#include "pprof_comments.h"
#include "record_docs.h"
#include "record_profile.h"
#include "record_read.h"
#include "runrec.h"
#include "smallfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often the watcher reads the directory (and the cgroups), and how
 * often the usage of a cgroup near a threshold (NEAR_TENTHS below it). */
#define TICK_MS 100
#define NEAR_TICK_MS 10
#define NEAR_TENTHS 150
/* How often a cgroup without a limit is looked up again. */
#define CGROUP_AGAIN_MS 1000
/* A peak profile when the peak is at least 17/16 of the last one, at
 * most once a second (as the agent did). */
#define PEAK_EVERY_MS 1000
/* Directories below the run's that runrec_free() removes. */
#define REMOVE_DEPTH 8

/* What the watcher knows of one record (one process image). */
struct watched {
	pid_t pid;
	int64_t start_ns;   /* the record's name: PID.START.rec */
	long long next_ms;  /* the next interval profile (monotonic) */
	long long peak_ms;  /* the last peak profile */
	int64_t peak_bytes; /* the peak the last peak profile showed */
	unsigned crossed;   /* bit i: dump_at[i] crossed */
	bool pressure_init; /* crossed set from the first reading */
	bool seen;	    /* in the last listing */
	bool live;	    /* its process runs, in the last listing */
	/* what write_profile() needs between listings */
	char path[PATH_MAX];
	uid_t uid;
	/* its memory cgroup: the usage file, the limit; near: within
	 * NEAR_TENTHS of the next threshold */
	char usage_file[PATH_MAX + 32];
	uint64_t limit;
	unsigned version;
	long long cgroup_ms; /* when to look the cgroup up (again) */
	bool near;
};

struct runrec {
	char dir[PATH_MAX];
	uint8_t token[16];
	char token_hex[33];
	struct collect *col;
	struct runrec_config cfg;
	struct bgthread watcher;
	struct watched *w;
	size_t nw, capw;
};

static int64_t now_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* $XDG_RUNTIME_DIR when it is an absolute path to a directory of ours
 * (not as root: see runrec.h), else /tmp. */
static const char *base_dir(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (geteuid() != 0 && x && x[0] == '/' && stat(x, &st) == 0 &&
	    S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	    strlen(x) < PATH_MAX - 64)
		return x;
	return "/tmp";
}

static int make_dir(struct runrec *r)
{
	const char *base = base_dir();
	bool root = geteuid() == 0;

	for (int tries = 0; tries < 16; tries++) {
		uint8_t rnd[16];
		char hex[33];
		int fd;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return msg_set_errno(errno ? errno : EIO,
					     "cannot get random bytes");
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(hex + 2 * i, 3, "%02x", rnd[i]);
		snprintf(r->dir, sizeof(r->dir), "%s/palloc-run.%s", base, hex);
		if (mkdir(r->dir, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return msg_set_errno(errno, "cannot create '%s'",
					     r->dir);
		}
		if (!root)
			return 0;
		/* Any user may create a file, none remove or replace
		 * another's (sticky). 1733 would hide the names too, but the
		 * agent opens the directory O_RDONLY (agent/record.c), which
		 * needs read permission. */
		fd = open(r->dir,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fchmod(fd, 01777) < 0) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			rmdir(r->dir);
			return msg_set_errno(err, "cannot set up '%s'", r->dir);
		}
		close(fd);
		return 0;
	}
	return msg_set_errno(EEXIST, "cannot create a directory in '%s'", base);
}

struct runrec *runrec_start(struct collect *col,
			    const struct runrec_config *cfg)
{
	struct runrec *r = calloc(1, sizeof(*r));

	if (!r) {
		msg_set_errno(ENOMEM, "cannot keep records");
		return NULL;
	}
	r->col = col;
	r->cfg = *cfg;
	bgthread_init(&r->watcher);
	if (getrandom(r->token, sizeof(r->token), 0) !=
	    (ssize_t)sizeof(r->token)) {
		msg_set_errno(errno ? errno : EIO, "cannot get random bytes");
		free(r);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(r->token); i++)
		snprintf(r->token_hex + 2 * i, 3, "%02x", r->token[i]);
	if (make_dir(r) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

const char *runrec_dir(const struct runrec *r)
{
	return r->dir;
}

const char *runrec_token(const struct runrec *r)
{
	return r->token_hex;
}

/* Is l a record of this run: read, and carrying its token? */
static bool ours(const struct runrec *r, const struct record_listing *l)
{
	return l->valid &&
	       memcmp(l->header.token, r->token, sizeof(r->token)) == 0;
}

/* The peak of a record's header, in bytes (rounded). */
static int64_t header_peak(const struct record_header *h)
{
	if (h->flags & RECORD_F_PER_THREAD)
		return h->pt_max_bytes;
	return h->max_inuse_bytes > 0 ? (int64_t)(h->max_inuse_bytes + 0.5) : 0;
}

/*
 * Who owns the memory malloc did not give, for the exit profile of a
 * process that is gone (record_profile_opts.unseen_owner): from the
 * objects its record lists, as record_unseen_owner() tells them from
 * /proc/PID/maps, and the Go runtime from its executable. "" when none.
 */
static void dead_owner(const struct record_view *v, const char **owner,
		       const char **hint)
{
	struct unseen u = {0};
	char exe[RECORD_STR];
	size_t len = 1;
	char *text;

	*owner = "";
	*hint = NULL;
	snprintf(exe, sizeof(exe), "%.*s", (int)strnlen(v->h->exe, sizeof(exe)),
		 v->h->exe);
	if (v->n_modules && elfcheck_is_go(v->modules[0]->path)) {
		*owner = "the Go runtime";
		*hint = "Go's heap is not malloc's; use runtime/pprof's heap "
			"profile";
		return;
	}
	for (size_t i = 0; i < v->n_modules; i++)
		len += strlen(v->modules[i]->path) + 1;
	text = malloc(len);
	if (!text)
		return;
	len = 0;
	for (size_t i = 0; i < v->n_modules; i++) {
		size_t n = strlen(v->modules[i]->path);

		memcpy(text + len, v->modules[i]->path, n);
		text[len + n] = '\n';
		len += n + 1;
	}
	text[len] = '\0';
	record_unseen_owner(&u, text, exe, NULL, 0);
	free(text);
	if (u.owner) {
		*owner = u.owner;
		*hint = u.hint;
	}
}

/* What a profile from a record is for. */
struct want {
	const char *seq;     /* NULL: the next number */
	const char *type;    /* default sample type, NULL: inuse_space */
	const char *comment; /* added, or NULL */
	bool live;	     /* the process runs: name JIT frames */
	int64_t peak_bytes;  /* out: the peak the record showed */
};

int runrec_collect(struct collect *col, const struct record_view *v,
		   const struct record_profile_opts *o,
		   const struct record_stats *st, pid_t pid, uid_t uid,
		   const char *seq, const char *comment)
{
	struct pprof_profile *p = record_profile(v, o, NULL);
	char program[64];
	int rc = -1;

	if (!p)
		return -1;
	if (!comment || pprof_add_comment(p, comment) == 0) {
		pattern_sanitize(program, sizeof(program), st->exe,
				 strlen(st->exe));
		rc = collect_add(col, pid, uid, program,
				 st->title[0] ? st->title : st->cmdline, seq, p,
				 NULL, 0);
	}
	pprof_free(p);
	return rc;
}

/*
 * Copy the record at l->path, check it and its token, make its profile
 * and write it through collect_add(). 0, 1 when discarded (/dev/null),
 * or -1 with msg_set().
 */
static int write_profile(struct runrec *r, const char *path, pid_t pid,
			 uid_t uid, struct want *wt)
{
	struct record_profile_opts o = {0};
	struct record_maps maps = {0};
	struct record_image im;
	struct record_view v;
	struct record_stats st;
	const struct record_header *h;
	int fd, rc;

	fd = record_open(path);
	if (fd < 0)
		return -1;
	rc = record_load(fd, &im, &v);
	close(fd);
	if (rc < 0)
		return -1;
	h = v.h;
	if (memcmp(h->token, r->token, sizeof(r->token)) != 0 ||
	    h->pid != pid) {
		record_loaded_free(&im, &v);
		return msg_set("record '%s': not of this run", path);
	}
	record_stats(&v, &st);
	wt->peak_bytes = st.max_inuse_bytes;
	o.default_sample_type = wt->type;
	if (wt->live) {
		o.time_nanos = now_unix_ns();
		record_maps_use(pid, &maps, &o);
	} else {
		/* Ended: the record's last change is its moment. */
		dead_owner(&v, &o.unseen_owner, &o.unseen_hint);
		o.time_nanos = h->end_unix_ns	   ? h->end_unix_ns
			       : h->update_unix_ns ? h->update_unix_ns
						   : now_unix_ns();
	}
	if (h->start_unix_ns > 0 && o.time_nanos > h->start_unix_ns)
		o.duration_nanos = o.time_nanos - h->start_unix_ns;
	rc = runrec_collect(r->col, &v, &o, &st, pid, uid, wt->seq,
			    wt->comment);
	record_maps_free(&maps);
	record_loaded_free(&im, &v);
	return rc;
}

static int write_listed(struct runrec *r, const struct record_listing *l,
			struct want *wt)
{
	return write_profile(r, l->path, l->pid, l->uid, wt);
}

/* The watcher's entry for l, made when new (NULL on ENOMEM). */
static struct watched *watched_of(struct runrec *r,
				  const struct record_listing *l)
{
	struct watched *w;

	for (size_t i = 0; i < r->nw; i++)
		if (r->w[i].pid == l->pid && r->w[i].start_ns == l->start_ns)
			return &r->w[i];
	w = grow_push(&r->w, &r->nw, &r->capw, sizeof(*w));
	if (!w)
		return NULL;
	w->pid = l->pid;
	w->start_ns = l->start_ns;
	w->next_ms =
		clock_mono_ms() + (long long)(r->cfg.interval_ns / 1000000);
	snprintf(w->path, sizeof(w->path), "%s", l->path);
	w->uid = l->uid;
	return w;
}

/* Forget the records no longer listed. */
static void watched_prune(struct runrec *r)
{
	for (size_t i = 0; i < r->nw;) {
		if (r->w[i].seen) {
			r->w[i].seen = false;
			i++;
		} else {
			r->w[i] = r->w[--r->nw];
		}
	}
}

static void warn_once(const struct runrec *r, bool *done, const char *what)
{
	if (*done || !r->cfg.warn)
		return;
	*done = true;
	r->cfg.warn(what);
}

/*
 * The effective limit of the memory cgroup at dir (version v), with the
 * usage file of the cgroup holding it: cgroup_effective_limit(). false
 * when none is finite.
 */
static bool effective_limit(struct watched *w, const char *dir, int v)
{
	w->version = (unsigned)v;
	return cgroup_effective_limit(dir, v, &w->limit, w->usage_file,
				      sizeof(w->usage_file));
}

/*
 * Memory pressure: the usage of w's memory cgroup in tenths of a percent
 * of its effective limit into *m (for the comment). The cgroup is looked
 * up once (cgroup.h; again every CGROUP_AGAIN_MS while it has no limit),
 * then only the usage file is read. false when there is no limit or it
 * does not read.
 */
static bool pressure_read(struct watched *w, struct pprof_comment_pressure *m)
{
	memset(m, 0, sizeof(*m));
	if (!w->usage_file[0]) {
		struct cgroup_mem cg;
		long long now = clock_mono_ms();

		if (now < w->cgroup_ms)
			return false;
		w->cgroup_ms = now + CGROUP_AGAIN_MS;
		if (cgroup_read_pid(NULL, w->pid, &cg) < 0)
			return false;
		if (cg.dir && !effective_limit(w, cg.dir, cg.version))
			w->usage_file[0] = '\0';
		cgroup_mem_free(&cg);
		if (!w->usage_file[0])
			return false;
	}
	if (smallfile_u64(w->usage_file, &m->usage) < 0)
		return false;
	m->version = w->version;
	m->limit = w->limit;
	m->usage_file = w->usage_file;
	m->tenths = (uint64_t)((double)m->usage * 1000.0 / (double)m->limit);
	return true;
}

/* The pressure profile of w, when its cgroup crossed a threshold. */
static void pressure_check(struct runrec *r, struct watched *w, bool *warned)
{
	struct pprof_comment_pressure m;
	char seq[16], comment[512];
	struct want wt = {.seq = seq, .live = true};
	struct timespec ts;
	size_t top = SIZE_MAX;

	w->near = false;
	if (!pressure_read(w, &m))
		return;
	for (size_t i = 0; i < r->cfg.n_dump_at; i++) {
		uint64_t at = (uint64_t)r->cfg.dump_at[i] * 10;

		if (m.tenths >= at && !(w->crossed & (1u << i)))
			top = i;
		if (m.tenths < at && m.tenths + NEAR_TENTHS >= at)
			w->near = true;
	}
	if (!w->pressure_init) {
		/* Crossed before it was seen: counts as crossed (the
		 * agent's rule). */
		w->pressure_init = true;
		for (size_t i = 0; i < r->cfg.n_dump_at; i++)
			if (m.tenths >= (uint64_t)r->cfg.dump_at[i] * 10)
				w->crossed |= 1u << i;
		return;
	}
	if (top == SIZE_MAX)
		return;
	/* A jump past several writes the highest alone. */
	for (size_t i = 0; i <= top; i++)
		w->crossed |= 1u << i;
	clock_gettime(CLOCK_REALTIME, &ts);
	m.threshold = r->cfg.dump_at[top];
	m.sec = ts.tv_sec;
	m.ms = ts.tv_nsec / 1000000;
	pprof_comment_format_pressure(comment, sizeof(comment), &m);
	wt.comment = comment;
	snprintf(seq, sizeof(seq), "at%u", r->cfg.dump_at[top]);
	if (write_profile(r, w->path, w->pid, w->uid, &wt) < 0) {
		char why[MSG_MAX + 64];

		snprintf(why, sizeof(why), "pressure profile not written: %s",
			 msg_last());
		warn_once(r, warned, why);
	}
}

/* One look at the directory: the profiles due of the live records. */
static void watch_once(struct runrec *r, bool *warned)
{
	struct record_listing *l;
	size_t n;
	long long now = clock_mono_ms();

	if (record_list(r->dir, &l, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct watched *w;

		if (!ours(r, &l[i]) || l[i].life != RECORD_LIFE_LIVE)
			continue;
		w = watched_of(r, &l[i]);
		if (!w)
			break;
		w->seen = true;
		w->live = true;
		if (r->cfg.n_dump_at)
			pressure_check(r, w, warned);
		if (r->cfg.interval_ns && now >= w->next_ms) {
			struct want wt = {.live = true};

			w->next_ms =
				now + (long long)(r->cfg.interval_ns / 1000000);
			if (write_listed(r, &l[i], &wt) < 0) {
				char why[MSG_MAX + 64];

				snprintf(why, sizeof(why),
					 "periodic profile not written: %s",
					 msg_last());
				warn_once(r, warned, why);
			}
		}
		if (r->cfg.peak && (l[i].header.flags & RECORD_F_PEAK) &&
		    now - w->peak_ms >= PEAK_EVERY_MS) {
			int64_t pk = header_peak(&l[i].header);
			struct want wt = {.seq = "peak",
					  .type = "peak_inuse_space",
					  .live = true};

			if (pk > 0 &&
			    (w->peak_bytes == 0 ||
			     pk - w->peak_bytes >= w->peak_bytes / 16) &&
			    pk > w->peak_bytes &&
			    write_listed(r, &l[i], &wt) == 0) {
				w->peak_bytes = wt.peak_bytes;
				w->peak_ms = now;
			}
		}
	}
	/* Records gone from the listing (removed) are forgotten; those
	 * of ended processes stay until runrec_finish(). */
	for (size_t i = 0; i < n; i++)
		if (ours(r, &l[i]) && l[i].life != RECORD_LIFE_LIVE) {
			struct watched *w = NULL;

			for (size_t j = 0; j < r->nw; j++)
				if (r->w[j].pid == l[i].pid &&
				    r->w[j].start_ns == l[i].start_ns)
					w = &r->w[j];
			if (w) {
				w->seen = true;
				w->live = w->near = false;
			}
		}
	watched_prune(r);
	free(l);
}

static void *watch_main(void *arg)
{
	struct runrec *r = arg;
	bool warned = false, near = false;
	long long next = clock_mono_ms() + TICK_MS;

	for (;;) {
		if (bgthread_sleep(&r->watcher, near ? NEAR_TICK_MS : TICK_MS))
			break;
		if (clock_mono_ms() >= next) {
			next = clock_mono_ms() + TICK_MS;
			watch_once(r, &warned);
		} else {
			/* Between listings: the cgroups near a threshold. */
			for (size_t i = 0; i < r->nw; i++)
				if (r->w[i].live && r->w[i].near)
					pressure_check(r, &r->w[i], &warned);
		}
		near = false;
		for (size_t i = 0; i < r->nw; i++)
			near = near || (r->w[i].live && r->w[i].near);
	}
	return NULL;
}

int runrec_watch(struct runrec *r)
{
	if (!r->cfg.interval_ns && !r->cfg.peak && !r->cfg.n_dump_at)
		return 0;
	return bgthread_start(&r->watcher, watch_main, r, "watch the records");
}

void runrec_stop(struct runrec *r)
{
	if (r)
		bgthread_stop(&r->watcher);
}

/* Is the executable of the record at path (its first MODULE) a Go
 * program? */
static bool record_is_go(const char *path)
{
	struct record_image im;
	struct record_view v;
	bool go = false;
	int fd = record_open(path);

	if (fd < 0)
		return false;
	if (record_load(fd, &im, &v) == 0) {
		go = v.n_modules && elfcheck_is_go(v.modules[0]->path);
		record_loaded_free(&im, &v);
	}
	close(fd);
	return go;
}

/*
 * Did another record of the same process (pid and start time in ticks:
 * exec keeps both) start later? Then l's image exec'd. That record need
 * not carry the token (the program may have exec'd with another
 * environment); one planted by another user can only cost l its profile.
 */
static bool superseded(const struct record_listing *v, size_t n,
		       const struct record_listing *l)
{
	for (size_t i = 0; i < n; i++)
		if (&v[i] != l && v[i].valid && v[i].pid == l->pid &&
		    v[i].header.start_ticks == l->header.start_ticks &&
		    v[i].start_ns > l->start_ns)
			return true;
	return false;
}

/*
 * Did the process of record l (one of v[n]) end, its exit profile still
 * to write? Exited: yes (under palloc-run an agent with a record file
 * writes no profile of its own). Not mapped any more: killed, unless its
 * image exec'd another program (see runrec_finish()).
 */
static bool left_without(const struct runrec *r, const struct record_listing *v,
			 size_t n, const struct record_listing *l,
			 runrec_status_fn status_fn, void *ctx)
{
	uint64_t ticks;
	int status;

	if (!ours(r, l) || l->life == RECORD_LIFE_LIVE || superseded(v, n, l))
		return false;
	if (l->life == RECORD_LIFE_EXITED)
		return true;
	status = status_fn ? status_fn(ctx, l->pid) : -1;
	/* Exited without marking its record: it exec'd a program without
	 * the agent, or it is a Go program (exit_group past every exit
	 * handler), whose record is its profile. */
	if (status >= 0 && WIFEXITED(status))
		return record_is_go(l->path);
	/* the same process runs another program */
	return record_start_ticks(l->pid, &ticks) < 0 ||
	       ticks != l->header.start_ticks;
}

size_t runrec_finish(struct runrec *r, runrec_status_fn status_fn, void *ctx,
		     void (*warn)(const char *line))
{
	struct record_listing *l;
	size_t n, written = 0;
	char line[MSG_MAX + 128];

	if (!r)
		return 0;
	runrec_stop(r);
	if (record_list(r->dir, &l, &n) < 0) {
		snprintf(line, sizeof(line), "%s", msg_last());
		if (warn)
			warn(line);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct want wt = {0};

		if (!left_without(r, l, n, &l[i], status_fn, ctx))
			continue;
		if (write_listed(r, &l[i], &wt) < 0) {
			snprintf(line, sizeof(line),
				 "no profile from the record of pid %d: %s",
				 (int)l[i].pid, msg_last());
			if (warn)
				warn(line);
			continue;
		}
		written++;
		if (r->cfg.peak && (l[i].header.flags & RECORD_F_PEAK)) {
			struct watched *w = NULL;
			struct want pk = {.seq = "peak",
					  .type = "peak_inuse_space"};

			for (size_t j = 0; j < r->nw; j++)
				if (r->w[j].pid == l[i].pid &&
				    r->w[j].start_ns == l[i].start_ns)
					w = &r->w[j];
			if (wt.peak_bytes > 0 &&
			    (!w || wt.peak_bytes > w->peak_bytes) &&
			    write_listed(r, &l[i], &pk) == 0)
				written++;
		}
	}
	free(l);
	return written;
}

/* Remove what is in directory dfd (closed), depth levels at most. */
static void remove_in(int dfd, int depth)
{
	DIR *dp = fdopendir(dfd);
	struct dirent *d;

	if (!dp) {
		close(dfd);
		return;
	}
	while ((d = readdir(dp))) {
		int sub;

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(dp), d->d_name, 0) == 0 || depth <= 0)
			continue;
		sub = openat(dirfd(dp), d->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		remove_in(sub, depth - 1);
		unlinkat(dirfd(dp), d->d_name, AT_REMOVEDIR);
	}
	closedir(dp);
}

void runrec_free(struct runrec *r)
{
	int dfd;

	if (!r)
		return;
	runrec_stop(r);
	dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0) {
		remove_in(dfd, REMOVE_DEPTH);
		rmdir(r->dir);
	}
	free(r->w);
	free(r);
}
