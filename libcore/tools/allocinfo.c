/* SPDX-License-Identifier: MIT */
/* What the commands know of a process under palloc, from its record. */
#include "common.h"
#include "allocinfo.h"
#include "fmt.h"
#include "json.h"
#include "msg.h"
#include "num.h"
#include "procfs.h"
#include "prom.h"
#include "record_docs.h"
#include "record_profile.h"
#include "record_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the record ---- */

/* A record copied and checked. */
struct snap {
	struct record_image im;
	struct record_view v;
	pid_t pid; /* live, or 0 */
	int64_t now_ns;
	const char *life;
	char path[PATH_MAX];
};

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void snap_free(struct snap *s)
{
	record_view_free(&s->v);
	record_image_free(&s->im);
}

/* Copy and check the record open at fd (closed here). 0 or -1. */
static int snap_fd(int fd, struct snap *s)
{
	char why[MSG_MAX];
	int rc = record_copy(fd, &s->im);

	close(fd);
	if (rc < 0)
		return -1;
	if (record_check(s->im.buf, s->im.len, NULL, &s->v) < 0) {
		const char *w = msg_last();

		if (strncmp(w, "record: ", 8) == 0)
			w += 8;
		snprintf(why, sizeof(why), "%s", w);
		record_image_free(&s->im);
		/* a file given by name is named by the command already */
		if (!s->pid)
			return msg_set("%s", why);
		return msg_set("record '%s': %s", s->path, why);
	}
	s->now_ns = realtime_ns();
	return 0;
}

/*
 * The record of the live process pid: 0, and *s to snap_free(); 1 when
 * the process maps none (msg_set() says so); -1 with msg_set() (its maps
 * not ours to read, no such process, a record refused).
 */
static int snap_live(pid_t pid, struct snap *s)
{
	int fd, e;

	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->life = "live";
	fd = record_find_live(pid, s->path, sizeof(s->path));
	if (fd < 0) {
		e = errno;
		if (e == ENOENT && strstr(msg_last(), "no record mapped"))
			return 1;
		if (e == EACCES || e == EPERM)
			return msg_set("permission denied (the process "
				       "belongs to another user)");
		if (e == ENOENT || e == ESRCH)
			return msg_set("no such process");
		return -1;
	}
	return snap_fd(fd, s);
}

/* /proc/PID/cmdline, printable (agent/output.c's title). NULL: none. */
static char *proc_title(pid_t pid)
{
	char *t = NULL;

	if (procfs_read_cmdline("", pid, &t) < 0 || !t)
		return NULL;
	for (char *c = t; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return t;
}

static struct pprof_profile *snap_profile(const struct snap *s, bool allocs)
{
	struct record_profile_opts o = {0};
	struct record_maps maps = {0};
	const struct record_header *h = s->v.h;
	struct pprof_profile *p;
	char *title = NULL;
	int64_t end = s->pid	       ? s->now_ns
		      : h->end_unix_ns ? h->end_unix_ns
				       : h->update_unix_ns;

	o.default_sample_type = allocs ? "alloc_space" : "inuse_space";
	o.time_nanos = end;
	o.duration_nanos = end > h->start_unix_ns ? end - h->start_unix_ns : 0;
	if (s->pid) {
		title = proc_title(s->pid);
		o.title = title ? title : "";
		if (record_maps_read(s->pid, &maps) == 0) {
			o.unmapped = record_maps_unmapped;
			o.unmapped_ctx = &maps;
		}
	}
	p = record_profile(&s->v, &o, NULL);
	record_maps_free(&maps);
	free(title);
	return p;
}

static json_t *snap_doc(const struct snap *s, bool mallinfo)
{
	char path[64], *maps = NULL;
	size_t len;
	json_t *j;
	struct record_docs_ctx c = {
		.pid = s->pid,
		.now_ns = s->now_ns,
		.life = s->life,
		.path = s->path,
		.inconsistent = s->im.inconsistent,
	};

	if (s->pid) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
		if (procfs_read_file(path, &maps, &len) == 0)
			c.maps = maps;
	}
	j = mallinfo ? record_docs_mallinfo(&s->v, &c)
		     : record_docs_stats(&s->v, &c);
	free(maps);
	return j;
}

/* ---- targets ---- */

enum target_kind { T_HEAP, T_ALLOCS, T_STATS, T_MALLINFO };

/* Parse target: its kind and ?seconds=N. 0, or -1 with msg_set(). */
static int parse_target(const char *target, enum target_kind *k,
			uint64_t *seconds)
{
	const char *q = strchr(target, '?');
	size_t n = q ? (size_t)(q - target) : strlen(target);
	static const char *const paths[] = {
		"/debug/pprof/heap", "/debug/pprof/allocs",
		"/debug/palloc/stats", "/debug/palloc/mallinfo"};

	*seconds = 0;
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		if (strlen(paths[i]) == n && memcmp(target, paths[i], n) == 0) {
			*k = (enum target_kind)i;
			goto query;
		}
	}
	return msg_set("no such endpoint '%s'", target);
query:
	if (q && strncmp(q, "?seconds=", 9) == 0 && *k <= T_ALLOCS) {
		if (num_parse_u64(q + 9, false, seconds) < 0 || *seconds == 0 ||
		    *seconds > 3600)
			return msg_set("seconds must be an integer from 1 "
				       "to 3600");
	} else if (q) {
		return msg_set("unknown query '%s'", q);
	}
	return 0;
}

static void sleep_seconds(uint64_t seconds)
{
	struct timespec ts = {.tv_sec = (time_t)seconds};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The profile of a live record; with seconds, the delta. 1: no record. */
static int record_get_profile(pid_t pid, bool allocs, uint64_t seconds,
			      struct pprof_profile **out)
{
	struct pprof_profile *p0, *p1;
	struct snap s;
	int rc = snap_live(pid, &s);

	*out = NULL;
	if (rc)
		return rc;
	p0 = snap_profile(&s, allocs);
	snap_free(&s);
	if (!p0 || !seconds) {
		*out = p0;
		return p0 ? 0 : -1;
	}
	sleep_seconds(seconds);
	rc = snap_live(pid, &s);
	if (rc) {
		pprof_free(p0);
		return rc > 0 ? msg_set("the record is gone") : -1;
	}
	p1 = snap_profile(&s, allocs);
	snap_free(&s);
	if (p1)
		*out = pprof_delta(NULL, p0, p1);
	pprof_free(p0);
	pprof_free(p1);
	if (*out)
		pprof_set_default_sample_type(*out, allocs ? "alloc_space"
							   : "inuse_space");
	return *out ? 0 : -1;
}

struct pprof_profile *allocinfo_get_profile(pid_t pid, const char *target,
					    int timeout_ms)
{
	struct pprof_profile *p;
	enum target_kind k;
	uint64_t seconds;
	int rc;

	if (parse_target(target, &k, &seconds) < 0)
		return NULL;
	if (k > T_ALLOCS) {
		msg_set("'%s' is not a profile", target);
		return NULL;
	}
	(void)timeout_ms;
	rc = record_get_profile(pid, k == T_ALLOCS, seconds, &p);
	return rc > 0 ? NULL : p;
}

json_t *allocinfo_get_json(pid_t pid, const char *target, int timeout_ms)
{
	enum target_kind k;
	uint64_t seconds;
	struct snap s;
	json_t *j;
	int rc;

	if (parse_target(target, &k, &seconds) < 0)
		return NULL;
	if (k < T_STATS) {
		msg_set("'%s' is not a JSON document", target);
		return NULL;
	}
	(void)timeout_ms;
	rc = snap_live(pid, &s);
	if (rc)
		return NULL;
	j = snap_doc(&s, k == T_MALLINFO);
	snap_free(&s);
	return j;
}

static void set_ctype(char *ctype, size_t cap, const char *v)
{
	if (ctype && cap)
		snprintf(ctype, cap, "%s", v);
}

int allocinfo_get_raw(pid_t pid, const char *target, int timeout_ms,
		      char **body, size_t *len, char *ctype, size_t ctype_len)
{
	enum target_kind k;
	uint64_t seconds;
	struct pprof_profile *p;
	json_t *j;
	void *buf;
	int rc;

	if (parse_target(target, &k, &seconds) < 0)
		return -1;
	if (k >= T_STATS) {
		if (!(j = allocinfo_get_json(pid, target, timeout_ms)))
			return -1;
		*body = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		if (!*body)
			return msg_set("out of memory");
		*len = strlen(*body);
		/* the agent's documents end with a newline */
		buf = realloc(*body, *len + 2);
		if (!buf) {
			free(*body);
			return msg_set("out of memory");
		}
		*body = buf;
		memcpy(*body + *len, "\n", 2);
		(*len)++;
		set_ctype(ctype, ctype_len, "application/json");
		return 0;
	}
	rc = record_get_profile(pid, k == T_ALLOCS, seconds, &p);
	if (rc)
		return -1;
	rc = pprof_encode(p, true, &buf, len);
	if (rc == 0) {
		*body = malloc(*len ? *len : 1);
		if (*body)
			memcpy(*body, buf, *len);
		else
			rc = msg_set("out of memory");
		pprof_free_buffer(p, buf);
	}
	pprof_free(p);
	if (rc == 0)
		set_ctype(ctype, ctype_len, "application/octet-stream");
	return rc;
}

/* ---- record files ---- */

bool allocinfo_is_record_file(const char *path)
{
	char magic[8];
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	bool yes;

	if (fd < 0)
		return false;
	yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	      pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
	      memcmp(magic, RECORD_MAGIC, sizeof(magic)) == 0;
	close(fd);
	return yes;
}

/* A record file by name: copied, checked, its life as record_list() says. */
static int snap_file(const char *path, struct snap *s)
{
	struct stat st;
	int fd;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	fd = record_open(path);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return msg_set_errno(errno, "cannot stat '%s'", path);
	}
	if (snap_fd(fd, s) < 0)
		return -1;
	if (s->v.h->state == RECORD_EXITED)
		s->life = "exited";
	else if (record_is_live(s->v.h->pid, s->v.h->start_ticks, st.st_dev,
				st.st_ino))
		s->life = "live";
	else
		s->life = "killed";
	return 0;
}

struct pprof_profile *allocinfo_record_file_profile(const char *path,
						    bool allocs)
{
	struct pprof_profile *p;
	struct snap s;

	if (snap_file(path, &s) < 0)
		return NULL;
	p = snap_profile(&s, allocs);
	snap_free(&s);
	return p;
}

json_t *allocinfo_record_file_stats(const char *path)
{
	struct snap s;
	json_t *j;

	if (snap_file(path, &s) < 0)
		return NULL;
	j = snap_doc(&s, false);
	snap_free(&s);
	return j;
}

/* ---- the listing ---- */

/* Room for one more entry in *v (capacity *cap). NULL on ENOMEM. */
static struct allocinfo_agent *list_add(struct allocinfo_agent **v, size_t *n,
					size_t *cap)
{
	struct allocinfo_agent *e;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *nv = realloc(*v, nc * sizeof(**v));

		if (!nv)
			return NULL;
		*v = nv;
		*cap = nc;
	}
	e = &(*v)[(*n)++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* The live processes that map a record: by /proc/PID/maps. */
static int list_records(struct allocinfo_agent **v, size_t *n, size_t *cap)
{
	pid_t *pids;
	size_t np;

	if (procfs_list_pids("", &pids, &np) < 0)
		return -1;
	for (size_t i = 0; i < np; i++) {
		struct allocinfo_agent *e;
		struct snap s;
		int rc = snap_live(pids[i], &s);

		/* not ours to read, not under palloc, gone meanwhile */
		if (rc > 0 || (rc < 0 && !s.path[0]))
			continue;
		e = list_add(v, n, cap);
		if (!e) {
			if (rc == 0)
				snap_free(&s);
			free(pids);
			return msg_set_errno(ENOMEM, "listing processes");
		}
		e->pid = pids[i];
		e->state = "live";
		snprintf(e->path, sizeof(e->path), "%s", s.path);
		if (rc < 0) {
			snprintf(e->error, sizeof(e->error), "%s", msg_last());
			continue;
		}
		e->stats = snap_doc(&s, false);
		if (!e->stats)
			snprintf(e->error, sizeof(e->error), "%s", msg_last());
		e->start_ns = s.v.h->start_unix_ns;
		fmt_copy(e->program, sizeof(e->program), s.v.h->exe,
			 sizeof(s.v.h->exe));
		snap_free(&s);
	}
	free(pids);
	return 0;
}

/* The records of the caller's directory whose process is gone. */
static int list_dead(struct allocinfo_agent **v, size_t *n, size_t *cap)
{
	struct record_listing *l;
	size_t nl;

	/* where the caller's agents write theirs (palloc(7) FILES) */
	const char *dir = getenv("PALLOC_RECORD_DIR");

	if (dir && dir[0] != '/')
		dir = NULL;
	if (record_list(dir, &l, &nl) < 0)
		return -1;
	for (size_t i = 0; i < nl; i++) {
		const struct record_header *h = &l[i].header;
		struct allocinfo_agent *e;

		if (l[i].life == RECORD_LIFE_LIVE)
			continue;
		e = list_add(v, n, cap);
		if (!e) {
			free(l);
			return msg_set_errno(ENOMEM, "listing records");
		}
		e->pid = l[i].pid;
		e->state = record_life_name(l[i].life);
		e->start_ns = l[i].start_ns;
		snprintf(e->path, sizeof(e->path), "%s", l[i].path);
		if (!l[i].valid) {
			snprintf(e->error, sizeof(e->error),
				 "not a record of this version");
			continue;
		}
		fmt_copy(e->program, sizeof(e->program), h->exe,
			 sizeof(h->exe));
		/* what palloc-mallinfo lists: the allocator at the end */
		e->stats = json_object();
		json_set(e->stats, "program", json_str_or_null(e->program));
		json_set(e->stats, "allocator",
			 json_string(record_docs_allocator_name(
				 h->allocator.kind)));
		json_set(e->stats, "allocator_allocated_bytes",
			 json_i64_or_null(h->allocator.allocated_bytes >= 0 &&
						  h->allocator.time_unix_ns,
					  h->allocator.allocated_bytes));
		e->exited = l[i].life == RECORD_LIFE_EXITED;
		e->exit_status = l[i].exit_status;
		e->end_ns = h->end_unix_ns ? h->end_unix_ns : h->update_unix_ns;
	}
	free(l);
	return 0;
}

static int cmp_agent(const void *a, const void *b)
{
	const struct allocinfo_agent *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

int allocinfo_list(struct allocinfo_agent **out, size_t *n, int timeout_ms,
		   bool dead, void (*warn)(void *ctx, const char *msg),
		   void *ctx)
{
	struct allocinfo_agent *v = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	(void)timeout_ms;
	if (list_records(&v, n, &cap) < 0) {
		allocinfo_agents_free(v, *n);
		*n = 0;
		return -1;
	}
	/* An unreadable record directory (another user's, planted) hides
	 * the dead records only: said, and the live ones still listed. */
	if (dead && list_dead(&v, n, &cap) < 0 && warn)
		warn(ctx, msg_last());
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_agent);
	*out = v ? v : calloc(1, sizeof(*v));
	if (!*out)
		return msg_set_errno(ENOMEM, "listing agents");
	return 0;
}

ssize_t allocinfo_live_pids(pid_t **out)
{
	struct allocinfo_agent *a = NULL;
	size_t n = 0, k = 0, cap = 0;

	*out = NULL;
	if (list_records(&a, &n, &cap) < 0) {
		allocinfo_agents_free(a, n);
		return -1;
	}
	*out = malloc((n + 1) * sizeof(**out));
	if (!*out) {
		allocinfo_agents_free(a, n);
		return msg_set_errno(ENOMEM, "listing processes");
	}
	if (n)
		qsort(a, n, sizeof(*a), cmp_agent);
	for (size_t i = 0; i < n; i++)
		(*out)[k++] = a[i].pid;
	allocinfo_agents_free(a, n);
	return (ssize_t)k;
}

void allocinfo_agents_free(struct allocinfo_agent *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++)
		json_decref(a[i].stats);
	free(a);
}

int64_t allocinfo_int(const json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* A metric taken from one key of one of the two documents. */
struct prom_metric {
	const char *name; /* after "palloc_" */
	const char *type;
	bool from_mallinfo; /* else from stats */
	const char *key;    /* in stats, or in mallinfo's "comparable" */
	const char *help;
};

static const struct prom_metric prom_metrics[] = {
	{"alloc_total", PROM_COUNTER, false, "alloc_count",
	 "Allocation calls seen by the agent."},
	{"free_total", PROM_COUNTER, false, "free_count",
	 "Frees of non-NULL pointers seen by the agent."},
	{"alloc_bytes_total", PROM_COUNTER, false, "alloc_bytes",
	 "Bytes requested by allocation calls."},
	{"inuse_bytes", PROM_GAUGE, false, "inuse_bytes",
	 "Live heap bytes: exact with PALLOC_EXACT=1, else the allocator's "
	 "allocated bytes."},
	{"peak_inuse_bytes", PROM_GAUGE, false, "peak_inuse_bytes",
	 "Peak of live heap bytes (exact, or of the sampled estimate)."},
	{"sampled_inuse_bytes", PROM_GAUGE, false, "sampled_inuse_bytes",
	 "Live heap bytes estimated from the sampled profile."},
	{"samples_total", PROM_COUNTER, false, "sampled_count",
	 "Allocations sampled with their stack."},
	{"dropped_samples_total", PROM_COUNTER, false, "dropped_count",
	 "Samples lost (stack table full, agent out of memory)."},
	{"stacks", PROM_GAUGE, false, "stack_count",
	 "Distinct stacks in the agent's stack table."},
	{"sample_rate_bytes", PROM_GAUGE, false, "sample_rate",
	 "Mean bytes between samples (0: sampling off)."},
	{"allocator_allocated_bytes", PROM_GAUGE, true, "allocated_bytes",
	 "Bytes allocated by the program, as the allocator counts them."},
	{"allocator_active_bytes", PROM_GAUGE, true, "active_bytes",
	 "Bytes in the allocator's pages holding live allocations."},
	{"allocator_resident_bytes", PROM_GAUGE, true, "resident_bytes",
	 "Bytes resident, as the allocator counts them."},
	{"allocator_mapped_bytes", PROM_GAUGE, true, "mapped_bytes",
	 "Bytes mapped from the kernel by the allocator."},
	{"allocator_retained_bytes", PROM_GAUGE, true, "retained_bytes",
	 "Virtual memory the allocator keeps without using it."},
	{"allocator_free_bytes", PROM_GAUGE, true, "free_bytes",
	 "Free bytes held inside the allocator's heaps."},
	{"allocator_metadata_bytes", PROM_GAUGE, true, "metadata_bytes",
	 "The allocator's own bookkeeping bytes."},
	{"allocator_arenas", PROM_GAUGE, true, "arena_count",
	 "Arenas of the allocator."},
};

/* Start the family palloc_SUFFIX (its name into name[PROM_NAME_MAX]). */
static int family(FILE *fp, char *name, const char *suffix, const char *type,
		  const char *help)
{
	prom_name(name, PROM_NAME_MAX, suffix);
	return prom_family(fp, name, type, help);
}

/* The labels of process P into l: pid (its text into pid[16]), program
 * and, unless NULL, allocator. Returns how many. */
static size_t proc_labels(struct prom_label l[3], char *pid,
			  const struct allocinfo_proc *p, const char *allocator)
{
	snprintf(pid, 16, "%d", (int)p->pid);
	l[0] = (struct prom_label){"pid", pid};
	l[1] = (struct prom_label){"program", p->program};
	l[2] = (struct prom_label){"allocator", allocator};
	return allocator ? 3 : 2;
}

int allocinfo_prom(FILE *fp, const struct allocinfo_proc *v, size_t n)
{
	char name[PROM_NAME_MAX], pid[16];
	struct prom_label l[3];

	for (size_t m = 0; m < ARRAY_SIZE(prom_metrics); m++) {
		const struct prom_metric *pm = &prom_metrics[m];

		if (family(fp, name, pm->name, pm->type, pm->help) < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			const json_t *doc =
				pm->from_mallinfo
					? json_object_get(v[i].mallinfo,
							  "comparable")
					: v[i].stats;
			int64_t val = doc ? allocinfo_int(doc, pm->key) : -1;

			if (val >= 0 &&
			    prom_sample_u64(fp, name, l,
					    proc_labels(l, pid, &v[i], NULL),
					    (uint64_t)val) < 0)
				return -1;
		}
	}
	if (family(fp, name, "uptime_seconds", PROM_GAUGE,
		   "Seconds since the agent started.") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		json_t *u = json_object_get(v[i].stats, "uptime_seconds");

		if (json_is_number(u) &&
		    prom_sample_double(fp, name, l,
				       proc_labels(l, pid, &v[i], NULL),
				       json_number_value(u)) < 0)
			return -1;
	}
	if (family(fp, name, "allocator_info", PROM_GAUGE,
		   "The allocator in use (value 1), by name.") < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *a = json_string_value(
			json_object_get(v[i].mallinfo, "allocator"));

		if (!a)
			a = json_string_value(
				json_object_get(v[i].stats, "allocator"));
		if (a && prom_sample_u64(fp, name, l,
					 proc_labels(l, pid, &v[i], a), 1) < 0)
			return -1;
	}
	return 0;
}
