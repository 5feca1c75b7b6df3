/* SPDX-License-Identifier: MIT */
/* The agent's record (wire/record.h): its file, header and entries. */
#include "agent_int.h"
#include "agent/allocstats.h"
#include "rundir.h"
#include "fmt.h"
#include "msg.h"
#include "num.h"
#include "pattern.h"
#include "phdr.h"
#include "record_profile.h"
#include "safefile.h"
#include "smallfile.h"
#include "sys.h"

#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESERVE RECORD_MAX_SIZE	       /* address space, once */
#define FIRST_MAP ((uint64_t)64 << 10) /* the first step of the file */
#define THREAD_ENTRY 128	       /* a slot alone on its lines */
#define SNAPSHOT_NS 1000000000	       /* allocator figures: 1 a second */
/* Idle points: the snapshots taken there may cost at most 1/IDLE_SHARE
 * of the time, with IDLE_BURST_NS of it saved up. */
#define IDLE_SHARE 50
#define IDLE_BURST_NS 100000000

static struct record_header private_hdr;
struct record_header *agent_hdr = &private_hdr;
struct agent_lock agent_rec_lock = AGENT_LOCK_INIT;
struct agent_lock agent_mod_lock = AGENT_LOCK_INIT;

/*
 * The record's state, private to the process (a fork child has its own
 * copy, so used is what the child itself knows of, whatever its parent
 * appends meanwhile). base, mapped, used, n_stacks, text, file, full,
 * path, dev, ino change under agent_rec_lock (base at init and in a fork
 * child only). The header's size, n_stacks and allocator.text are
 * published from them, never read back: a fork child's header is a copy
 * taken after the fork, which may name its parent's later entries.
 */
static struct {
	char *base;	   /* the reserved range; NULL: no record */
	uint64_t used;	   /* the entries end here */
	uint64_t mapped;   /* bytes of the file mapped at base */
	uint32_t n_stacks; /* STACK entries */
	uint64_t text;	   /* the TEXT entry's body, or 0 */
	bool file;	   /* a file backs it (else private memory) */
	bool full;	   /* an append failed: none after it */
	bool warned;
	char path[PATH_MAX]; /* the file's, or "" */
	dev_t dev;
	ino_t ino;
	/* every THREAD slot made, under agent_reg_lock */
	struct record_thread **slots;
	size_t n_slots, cap_slots;
	/* every MODULE entry, under agent_mod_lock */
	struct record_module **mods;
	size_t n_mods, cap_mods;
	unsigned long long adds; /* dlpi_adds at the last look */
	int64_t next_snapshot_ns;
	/* taken with trylock on the allocation path, waited for at idle
	 * points (record_idle_point) */
	struct agent_lock snapshot_lock;
	/* idle points' budget (monotonic ns), under snapshot_lock */
	int64_t idle_tokens_ns, idle_last_ns;
	/* from the environment at start (record_read_env) */
	bool dir_set;
	char dir[PATH_MAX];
	uint8_t token[16];
} rec;

/* Say once that there is no record file (none: the record is kept in
 * private memory, or not at all), or that it stops here. Short: under
 * `ulimit -f 1` the program's stderr may be a file of 512 bytes at most
 * (t/3090). */
static void warn_once(bool none, const char *what)
{
	if (rec.warned)
		return;
	rec.warned = true;
	fmt_warn("warning: %s: %s",
		 none ? "no record file (kept in memory)"
		      : "the record of this process stops here",
		 what);
}

/* Say that there is no record at all: what failed (err: its errno),
 * after any earlier warning. */
static void no_record(int err, const char *what)
{
	rec.warned = false;
	msg_set_errno(err, "%s (no profile can be made)", what);
	warn_once(true, msg_last());
}

static int64_t realtime_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

bool record_owns(const void *p)
{
	return rec.base && (const char *)p >= rec.base &&
	       (const char *)p < rec.base + RESERVE;
}

uint64_t record_offset(const void *p)
{
	return (uint64_t)((const char *)p - rec.base);
}

void *record_at(uint64_t off)
{
	return rec.base + off;
}

/* ---- the file ---- */

/* Give the file [off, off + len) on disk: a full file system answers
 * ENOSPC here instead of a SIGBUS at the first store. */
static int file_reserve_now(int fd, uint64_t off, uint64_t len)
{
	static const char zeros[4096];

	if (sys_fallocate(fd, 0, (off_t)off, (off_t)len) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	/* No fallocate here: write the zeros. */
	while (len) {
		size_t n = len < sizeof(zeros) ? (size_t)len : sizeof(zeros);
		ssize_t w = pwrite(fd, zeros, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (uint64_t)w;
		len -= (uint64_t)w;
	}
	return 0;
}

/* file_reserve_now() past the file size limit: EFBIG, never SIGXFSZ. */
static int file_reserve(int fd, uint64_t off, uint64_t len)
{
	struct safefile_xfsz x;
	int rc, err;

	safefile_xfsz_begin(&x);
	rc = file_reserve_now(fd, off, len);
	err = rc < 0 ? errno : 0;
	safefile_xfsz_end(&x, err);
	errno = err;
	return rc;
}

/* Map the file (fd) over [mapped, to) of the range. */
static int map_more(int fd, uint64_t to)
{
	void *p;

	if (file_reserve(fd, rec.mapped, to - rec.mapped) < 0)
		return -1;
	p = sys_mmap(rec.base + rec.mapped, to - rec.mapped,
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		     (off_t)rec.mapped);
	if (p == MAP_FAILED)
		return -1;
	rec.mapped = to;
	return 0;
}

/* Private memory over [mapped, to) of the range (no file). */
static int map_anon(uint64_t to)
{
	void *p = sys_mmap(rec.base + rec.mapped, to - rec.mapped,
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	rec.mapped = to;
	return 0;
}

/* Grow the mapping to hold need bytes: double it (the file is reopened
 * by its path, and must still be the one created). Under the lock. */
static int grow(uint64_t need)
{
	uint64_t to = rec.mapped * 2;
	struct stat st;
	int fd, rc, err;

	while (to < need)
		to *= 2;
	if (to > RESERVE)
		to = RESERVE;
	if (need > to) {
		errno = ENOSPC;
		return -1;
	}
	if (!rec.file)
		return map_anon(to);
	fd = open(rec.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (sys_fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_dev != rec.dev || st.st_ino != rec.ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	rc = map_more(fd, to);
	err = errno;
	close(fd);
	errno = err;
	return rc;
}

/*
 * Create "PID.START.rec" (0600, exclusively, never through a symbolic
 * link) in PALLOC_RECORD_DIR, used as it is, or the user's directory
 * (rundir.h), made and checked there; prune: then remove the
 * directory's dead records beyond the newest 32 (record_prune_dead).
 * Sets rec.path, dev, ino. The descriptor, or -1 with msg_set().
 */
static int create_file(pid_t pid, int64_t start_ns, bool prune)
{
	char dir[PATH_MAX], name[64];
	struct fmt_buf b;
	struct stat st;
	int dfd, fd;

	if (rec.dir_set) {
		if (!rec.dir[0])
			return msg_set("PALLOC_RECORD_DIR: empty or too long");
		memcpy(dir, rec.dir, sizeof(dir));
	} else if (rundir_path(dir, sizeof(dir)) < 0 ||
		   rundir_prepare(dir) < 0) {
		return -1;
	}
	fmt_init(&b, name, sizeof(name));
	fmt_append(&b, "%d.%lld.rec", (int)pid, (long long)start_ns);
	fmt_init(&b, rec.path, sizeof(rec.path));
	fmt_append(&b, "%s/%s", dir, name);
	if (b.truncated)
		return msg_set("'%s': name too long", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return msg_set_errno(errno, "cannot open '%s'", dir);
	fd = sys_openat(dfd, name,
			O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0) {
		msg_set_errno(errno, "cannot create '%s'", rec.path);
		close(dfd);
		return -1;
	}
	if (prune)
		record_prune_dead(dfd, name);
	close(dfd);
	/* 0600 whatever the umask left. */
	if (sys_fchmod(fd, 0600) < 0 || sys_fstat(fd, &st) < 0) {
		msg_set_errno(errno, "cannot set up '%s'", rec.path);
		close(fd);
		unlink(rec.path);
		return -1;
	}
	rec.dev = st.st_dev;
	rec.ino = st.st_ino;
	return fd;
}

/* Remove the record's file if it is still the one created. */
static void unlink_own(void)
{
	struct stat st;

	if (lstat(rec.path, &st) == 0 && st.st_dev == rec.dev &&
	    st.st_ino == rec.ino)
		unlink(rec.path);
}

/* ---- entries ---- */

void *record_append(uint32_t type, size_t size, const void *body)
{
	size_t total = (sizeof(struct record_entry) + size + 15) & ~(size_t)15;
	struct record_entry *e;
	uint64_t end;

	if (!rec.base || total > UINT32_MAX)
		return NULL;
	agent_lock(&agent_rec_lock);
	if (rec.full) {
		agent_unlock(&agent_rec_lock);
		return NULL;
	}
	if (rec.used + total > rec.mapped && grow(rec.used + total) < 0) {
		/* The entries so far stay; no stack or thread table is
		 * added after them (new stacks' samples are dropped). */
		msg_set_errno(errno, "cannot grow '%s'",
			      rec.file ? rec.path : "(private memory)");
		rec.full = true;
		agent_unlock(&agent_rec_lock);
		warn_once(false, msg_last());
		return NULL;
	}
	/* Past used the range is zero (a file's fresh pages, fallocate's
	 * or a fork child's copy's, or fresh private memory; nothing is
	 * written there but here, and a range that another process may
	 * write, map_file_private's, is full): no zeros to store, no page
	 * of a NULL body touched. */
	e = (struct record_entry *)(rec.base + rec.used);
	e->type = type;
	e->size = (uint32_t)total;
	if (body)
		memcpy(e + 1, body, size);
	end = rec.used + total;
	if (type == RECORD_TEXT && !rec.text)
		rec.text = rec.used + sizeof(*e);
	rec.used = end;
	__atomic_store_n(&agent_hdr->size, end, __ATOMIC_RELEASE);
	if (type == RECORD_STACK)
		__atomic_store_n(&agent_hdr->n_stacks, ++rec.n_stacks,
				 __ATOMIC_RELEASE);
	agent_unlock(&agent_rec_lock);
	return e + 1;
}

/* agent_tab's new stacks (stacktab.h ext_stack): STACK entries. */
static int stack_copy(void *ctx PALLOC_UNUSED, const struct record_stack *s,
		      size_t size, struct record_stack **copy)
{
	*copy = record_append(RECORD_STACK, size, s);
	return *copy ? 0 : -1;
}

void record_seq_begin(void)
{
	uint32_t *seq = &agent_hdr->seq;

	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

void record_seq_end(void)
{
	uint32_t *seq = &agent_hdr->seq;

	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

/* ---- threads ---- */

struct record_thread *record_thread_slot(int tid)
{
	union {
		struct record_thread t;
		char b[THREAD_ENTRY - sizeof(struct record_entry)];
	} u;
	struct record_thread *s;

	if (!rec.base)
		return NULL;
	for (size_t i = 0; i < rec.n_slots; i++) {
		s = rec.slots[i];
		if (s->state == RECORD_THREAD_FREE) {
			__atomic_store_n(&s->tid, tid, __ATOMIC_RELAXED);
			__atomic_store_n(&s->state, RECORD_THREAD_LIVE,
					 __ATOMIC_RELEASE);
			return s;
		}
	}
	if (rec.n_slots == rec.cap_slots) {
		size_t cap = rec.cap_slots ? 2 * rec.cap_slots : 64;
		struct record_thread **v =
			arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v)
			return NULL;
		if (rec.slots)
			memcpy(v, rec.slots, rec.n_slots * sizeof(*v));
		arena_free(&agent_arena, rec.slots);
		rec.slots = v;
		rec.cap_slots = cap;
	}
	memset(&u, 0, sizeof(u));
	u.t.state = RECORD_THREAD_LIVE;
	u.t.tid = tid;
	s = record_append(RECORD_THREAD, sizeof(u), &u);
	if (s)
		rec.slots[rec.n_slots++] = s;
	return s;
}

void record_thread_free(struct record_thread *s)
{
	if (s->recs && s->recs_cap)
		memset(record_at(s->recs), 0,
		       s->recs_cap * sizeof(struct record_rec));
	s->alloc_count = s->free_count = s->alloc_bytes = 0;
	s->samples = s->reentries = 0;
	s->tid = 0;
	__atomic_store_n(&s->state, RECORD_THREAD_FREE, __ATOMIC_RELEASE);
}

/* ---- modules ---- */

/* A MODULE entry for seg at load_gen gen. Under agent_mod_lock (or at
 * init, alone). */
static void module_add(const struct phdr_segment *seg, uint32_t gen)
{
	size_t len = strlen(seg->path) + 1;
	struct record_module *m;
	union {
		struct record_module m;
		char b[sizeof(struct record_module) + PATH_MAX];
	} u;

	if (len > PATH_MAX)
		len = PATH_MAX;
	if (rec.n_mods == rec.cap_mods) {
		size_t cap = rec.cap_mods ? 2 * rec.cap_mods : 64;
		struct record_module **v =
			arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v)
			return;
		if (rec.mods)
			memcpy(v, rec.mods, rec.n_mods * sizeof(*v));
		arena_free(&agent_arena, rec.mods);
		rec.mods = v;
		rec.cap_mods = cap;
	}
	memset(&u.m, 0, sizeof(u.m));
	u.m.start = seg->start;
	u.m.limit = seg->limit;
	u.m.offset = seg->offset;
	u.m.load_gen = gen;
	memcpy(u.m.build_id, seg->build_id,
	       strnlen(seg->build_id, sizeof(u.m.build_id) - 1));
	memcpy(u.m.path, seg->path, len - 1);
	u.m.path[len - 1] = '\0';
	m = record_append(RECORD_MODULE, sizeof(u.m) + len, &u);
	if (m)
		rec.mods[rec.n_mods++] = m;
}

/* Is seg recorded and not unloaded? */
static bool module_known(const struct phdr_segment *seg)
{
	for (size_t i = 0; i < rec.n_mods; i++) {
		const struct record_module *m = rec.mods[i];

		if (!m->unload_gen && m->start == seg->start &&
		    m->limit == seg->limit && m->offset == seg->offset &&
		    strcmp(m->path, seg->path) == 0)
			return true;
	}
	return false;
}

static int adds_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/* The loader's count of objects loaded so far. */
static unsigned long long loader_adds(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(adds_visit, &adds);
	return adds;
}

static int init_visit(const struct phdr_segment *seg, void *arg PALLOC_UNUSED)
{
	module_add(seg, 0);
	return 0;
}

void record_modules_check(void)
{
	struct agent_segs l = {0};
	unsigned long long adds;

	if (!rec.base || rec.full)
		return;
	adds = loader_adds();
	if (adds == __atomic_load_n(&rec.adds, __ATOMIC_RELAXED))
		return;
	agent_segs_copy(&l);
	if (!l.err) {
		agent_lock(&agent_mod_lock);
		for (size_t i = 0; i < l.n; i++)
			if (!module_known(&l.v[i]))
				module_add(&l.v[i],
					   __atomic_load_n(&agent_hdr->gen,
							   __ATOMIC_ACQUIRE));
		__atomic_store_n(&rec.adds, adds, __ATOMIC_RELAXED);
		agent_unlock(&agent_mod_lock);
	}
	agent_segs_free(&l);
}

void record_module_region(uintptr_t start, uintptr_t limit, uint64_t offset,
			  const char *path)
{
	struct phdr_segment seg = {
		.start = start,
		.limit = limit,
		.offset = offset,
		.path = path,
		.build_id = "",
	};

	if (!rec.base || rec.full)
		return;
	agent_lock(&agent_mod_lock);
	if (!module_known(&seg))
		module_add(&seg, 0);
	agent_unlock(&agent_mod_lock);
}

void record_module_unloaded(uintptr_t start, uintptr_t limit, uint64_t offset,
			    const char *path, uint32_t gen)
{
	if (!rec.base)
		return;
	agent_lock(&agent_mod_lock);
	for (size_t i = 0; i < rec.n_mods; i++) {
		struct record_module *m = rec.mods[i];

		if (!m->unload_gen && m->start == start && m->limit == limit &&
		    m->offset == offset && strcmp(m->path, path) == 0)
			__atomic_store_n(&m->unload_gen, gen, __ATOMIC_RELEASE);
	}
	agent_unlock(&agent_mod_lock);
}

/* ---- the header ---- */

uint64_t record_start_ticks(void)
{
	char buf[1024];
	ssize_t n = smallfile_read("/proc/self/stat", buf, sizeof(buf));
	const char *p;
	uint64_t v = 0;

	if (n <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 3 starts after ") "; 22 is 19 spaces later */
	for (int field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	return v;
}

void record_set_place(const char *dir, const char *token)
{
	if (dir) {
		rec.dir_set = true;
		if (strlen(dir) < sizeof(rec.dir))
			memcpy(rec.dir, dir, strlen(dir) + 1);
	}
	if (token &&
	    num_parse_hex_bytes(token, rec.token, sizeof(rec.token)) < 0)
		fmt_warn("PALLOC_RUN_TOKEN=%s: %s; ignored", token, msg_last());
	else if (token) /* a second attach: its palloc-run's */
		memcpy(agent_hdr->token, rec.token, sizeof(rec.token));
}

void record_read_env(void)
{
	record_set_place(getenv("PALLOC_RECORD_DIR"),
			 getenv("PALLOC_RUN_TOKEN"));
}

/* Copy s into dst[cap], cut, NUL-terminated. */
static void copy_str(char *dst, size_t cap, const char *s)
{
	size_t n = strnlen(s, cap - 1);

	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* The identity fields of a new record (at init and in a fork child). */
static void fill_identity(struct record_header *h, pid_t pid, int64_t start_ns)
{
	h->pid = pid;
	h->uid = (uint32_t)sys_geteuid();
	h->start_unix_ns = start_ns;
	h->end_unix_ns = 0;
	h->update_unix_ns = start_ns;
	h->start_ticks = record_start_ticks();
	h->state = RECORD_RUNNING;
	h->exit_status = 0;
}

void record_init(const char *cmdline, int64_t start_ns)
{
	char exe[64]; /* %e, as output.c captures it */
	struct record_header *h;
	int fd, err;
	void *p;

	/* Under palloc-run no pruning: it writes the exit profile of every
	 * record when the program is over, then removes them all. */
	fd = create_file(sys_getpid(), start_ns, !record_kept_for_run());
	if (fd < 0)
		warn_once(true, msg_last());
	p = sys_mmap(NULL, RESERVE, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		err = errno;
		if (fd >= 0) {
			close(fd);
			unlink_own();
		}
		no_record(err, "cannot reserve its address range");
		return;
	}
	rec.base = p;
	rec.file = fd >= 0;
	if (fd >= 0 && map_more(fd, FIRST_MAP) < 0) {
		/* A full file system (tmpfs): the same layout in private
		 * memory. */
		msg_set_errno(errno, "cannot map '%s'", rec.path);
		close(fd);
		unlink_own();
		fd = -1;
		rec.file = false;
		rec.mapped = 0;
		warn_once(true, msg_last());
	}
	if (fd >= 0)
		close(fd);
	else
		rec.path[0] = '\0';
	if (!rec.file && map_anon(FIRST_MAP) < 0) {
		munmap(rec.base, RESERVE);
		rec.base = NULL;
		no_record(errno, "cannot map private memory for it");
		return;
	}
	rec.used = RECORD_DATA;
	h = (struct record_header *)rec.base;
	*h = private_hdr; /* the totals so far (none, at init) */
	memcpy(h->magic, RECORD_MAGIC, sizeof(h->magic));
	h->version = RECORD_VERSION;
	h->header_size = sizeof(*h);
	h->size = RECORD_DATA;
	fill_identity(h, sys_getpid(), start_ns);
	memcpy(h->token, rec.token, sizeof(h->token));
	h->rate = agent_cfg.rate;
	h->seed = agent_cfg.seed;
	h->max_depth = agent_cfg.max_depth;
	h->unwind = (uint32_t)agent_cfg.unwind;
	h->max_stacks = (uint32_t)agent_tab.max_stacks;
	h->flags = (agent_cfg.peak ? RECORD_F_PEAK : 0) |
		   (agent_cfg.exact ? RECORD_F_EXACT : 0) |
		   (agent_per_thread ? RECORD_F_PER_THREAD : 0);
	pattern_exe_name(exe, sizeof(exe));
	copy_str(h->exe, sizeof(exe), exe); /* 64 <= RECORD_STR */
	copy_str(h->cmdline, sizeof(h->cmdline), cmdline);
	copy_str(h->output, sizeof(h->output), agent_cfg.output);
	h->anon_bytes = h->anon_peak_bytes = h->heap_bytes = -1;
	h->unseen_bytes = -1;
	__atomic_store_n(&agent_hdr, h, __ATOMIC_RELEASE);
	/* The loaded objects, the main executable first. */
	rec.adds = loader_adds();
	phdr_foreach(init_visit, NULL);
	agent_tab.ext_ctx = NULL;
	agent_tab.ext_stack = stack_copy;
	agent_tab.ext_only = true;
}

/* ---- fork ---- */

/* The file's pages over the range, copied on write (MAP_PRIVATE): no
 * copy now. 0 or -1. */
static int map_file_private(void)
{
	struct stat st;
	void *p = MAP_FAILED;
	int fd = open(rec.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (sys_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == rec.dev && st.st_ino == rec.ino &&
	    (uint64_t)st.st_size >= rec.mapped)
		p = sys_mmap(rec.base, rec.mapped, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_FIXED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? -1 : 0;
}

/* An anonymous copy of what the range holds, at the same place. 0 or
 * -1. */
static int copy_anon(void)
{
	void *tmp, *p;

	tmp = sys_mmap(NULL, rec.used, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (tmp == MAP_FAILED)
		return -1;
	memcpy(tmp, rec.base, rec.used);
	p = sys_mmap(rec.base, rec.mapped, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (p != MAP_FAILED)
		memcpy(rec.base, tmp, rec.used);
	munmap(tmp, rec.used);
	return p == MAP_FAILED ? -1 : 0;
}

/*
 * Make the range private: nothing written after reaches the parent's
 * file. exact: the child goes on profiling with what the range holds now
 * (its own file could not be made): an anonymous copy, whose cost is the
 * bytes used. Otherwise (a child that does not profile: it only must not
 * write the file, what it reads there matters to nobody) the file's pages
 * copied on write, which costs no copy: a fork from a signal handler
 * stays as quick as without the record.
 */
static void detach_private(bool exact)
{
	bool copied = exact && copy_anon() == 0;

	if (!copied && map_file_private() < 0 && !exact)
		copy_anon();
	rec.file = false;
	rec.path[0] = '\0';
	/* A profiling child's copy grows in private memory (map_anon). */
	rec.full = !copied;
}

/* The child's own file, holding the parent's used bytes, mapped at the
 * same place. 0, or -1 (the range unchanged). */
static int fork_own_file(pid_t pid, int64_t start_ns)
{
	uint64_t off = 0;
	void *p;
	int fd = create_file(pid, start_ns, false);

	if (fd < 0)
		return -1;
	if (file_reserve(fd, 0, rec.mapped) < 0)
		goto fail;
	/* Within the size just reserved: no file size limit to pass. */
	while (off < rec.used) {
		ssize_t w =
			pwrite(fd, rec.base + off, rec.used - off, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			goto fail;
		off += (uint64_t)w;
	}
	p = sys_mmap(rec.base, rec.mapped, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	close(fd);
	return 0;
fail:
	msg_set_errno(errno, "cannot write '%s'", rec.path);
	close(fd);
	unlink(rec.path);
	return -1;
}

/*
 * A fork child's copy of its parent's file was read from the mapping the
 * parent kept writing meanwhile (MAP_SHARED is inherited): the header
 * and the entries below used may name what the parent did since (its
 * size, n_stacks, seq; an allocator text appended where the child's own
 * entries go next; a module unloaded). They are set again from what the
 * child knew at the fork (rec, agent_tab: copied under the fork's
 * locks). The weights are zeroed by the caller; the threads' slots by
 * record_slots_after_fork().
 */
static void fork_repair(struct record_header *h)
{
	struct record_allocator *a = &h->allocator;

	__atomic_store_n(&h->size, rec.used, __ATOMIC_RELEASE);
	h->n_stacks = rec.n_stacks;
	h->gen = agent_tab.gen;
	h->seq &= ~1u;
	if (a->text != rec.text)
		a->text_len = 0;
	a->text = rec.text;
	a->text_cap = rec.text ? RECORD_TEXT_MAX : 0;
	a->seq &= ~1u;
	for (size_t i = 0; i < rec.n_mods; i++)
		if (rec.mods[i]->unload_gen > agent_tab.gen)
			rec.mods[i]->unload_gen = 0;
}

void record_slots_after_fork(const struct record_thread *keep,
			     const struct record_rec *recs, uint32_t cap)
{
	for (size_t i = 0; i < rec.n_slots; i++) {
		struct record_thread *s = rec.slots[i];

		if (s == keep) {
			/* Its table is the one the child writes, whatever
			 * the parent's thread made of the slot since (a
			 * larger table, the old one a PAD entry). */
			s->recs = record_owns(recs) ? record_offset(recs) : 0;
			s->recs_cap = s->recs ? cap : 0;
			if (s->recs)
				((struct record_entry *)recs - 1)->type =
					RECORD_RECS;
			continue;
		}
		/* Its table (and so its offset) may be the parent's since:
		 * none; a thread of the child that takes the slot makes
		 * one. */
		s->recs = 0;
		s->recs_cap = 0;
		s->alloc_count = s->free_count = s->alloc_bytes = 0;
		s->samples = s->reentries = 0;
		s->tid = 0;
		s->state = RECORD_THREAD_FREE;
	}
}

void record_after_fork_child(void)
{
	struct record_header *h = agent_hdr;
	int64_t start_ns = realtime_ns(CLOCK_REALTIME);
	pid_t parent = h->pid;

	if (!rec.base)
		return;
	if (!rec.file) {
		/* Private memory: the child's own copy already. */
		if (agent_mode != AGENT_ON)
			return;
	} else if (agent_mode != AGENT_ON) {
		/* A child that does not profile: out of the file. */
		detach_private(false);
		return;
	} else if (fork_own_file(sys_getpid(), start_ns) < 0) {
		detach_private(true);
		fmt_warn("warning: no record of this fork child kept: %s",
			 msg_last());
	}
	fork_repair(h);
	fill_identity(h, sys_getpid(), start_ns);
	h->parent_pid = parent;
	h->flags |= RECORD_F_FORKED;
	h->title[0] = '\0';
	h->anon_bytes = h->anon_peak_bytes = h->heap_bytes = -1;
	h->unseen_bytes = -1;
	rec.next_snapshot_ns = 0;
	rec.idle_last_ns = 0;
	agent_lock_reset(&rec.snapshot_lock);
}

/* ---- totals, allocator, exit ---- */

void record_tab_totals(void)
{
	struct record_header *h = agent_hdr;

	h->inuse_bytes = agent_tab.inuse_bytes;
	h->max_inuse_bytes = agent_tab.max_inuse_bytes;
	__atomic_store_n(&h->ev, agent_tab.ev, __ATOMIC_RELAXED);
	__atomic_store_n(&h->peak_ev, agent_tab.peak_ev, __ATOMIC_RELAXED);
}

/* The allocator's figures into the record; caller holds snapshot_lock. */
static void allocator_snapshot_locked(void)
{
	struct record_allocator *a = &agent_hdr->allocator;
	struct allocstats_comparable c;
	enum allocstats_kind kind;
	char *text = NULL;
	sigset_t all, old;
	uint32_t seq;

	/* The calls below allocate (fmemopen, jemalloc's mallctl): the
	 * agent's own, expected, not reentries. And they walk the heap: a
	 * signal handler that allocates must not change it meanwhile (a
	 * single-threaded glibc takes no lock in malloc), so signals wait
	 * until the figures are taken. */
	agent_guard_enter();
	/* Every signal (sigfillset() without its call: pthread_sigmask
	 * leaves the C library's internal ones unblocked either way). */
	memset(&all, 0xff, sizeof(all));
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* rec.text, set with the append (a fork between the two knows of
	 * the entry), not a->text (a fork child's may be its parent's). */
	if (!rec.text)
		record_append(RECORD_TEXT, RECORD_TEXT_MAX, NULL);
	if (rec.text && a->text != rec.text) {
		a->text_len = 0;
		a->text_cap = RECORD_TEXT_MAX;
		__atomic_store_n(&a->text, rec.text, __ATOMIC_RELEASE);
	}
	text = rec.text ? record_at(rec.text) : NULL;
	kind = allocstats_comparable(&c);
	seq = a->seq;
	__atomic_store_n(&a->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	a->kind = (uint32_t)kind;
	a->allocated_bytes = c.allocated_bytes;
	a->active_bytes = c.active_bytes;
	a->resident_bytes = c.resident_bytes;
	a->mapped_bytes = c.mapped_bytes;
	a->retained_bytes = c.retained_bytes;
	a->free_bytes = c.free_bytes;
	a->metadata_bytes = c.metadata_bytes;
	a->arena_count = c.arena_count;
	if (kind == ALLOCSTATS_GLIBC) {
		struct mallinfo2 mi = mallinfo2();

		a->arena = (int64_t)mi.arena;
		a->ordblks = (int64_t)mi.ordblks;
		a->smblks = (int64_t)mi.smblks;
		a->hblks = (int64_t)mi.hblks;
		a->hblkhd = (int64_t)mi.hblkhd;
		a->usmblks = (int64_t)mi.usmblks;
		a->fsmblks = (int64_t)mi.fsmblks;
		a->uordblks = (int64_t)mi.uordblks;
		a->fordblks = (int64_t)mi.fordblks;
		a->keepcost = (int64_t)mi.keepcost;
		a->text_len = text ? (uint32_t)allocstats_malloc_info_text(
					     text, a->text_cap)
				   : 0;
	} else {
		a->arena = a->ordblks = a->smblks = a->hblks = -1;
		a->hblkhd = a->usmblks = a->fsmblks = a->uordblks = -1;
		a->fordblks = a->keepcost = -1;
		a->text_len = 0;
	}
	a->time_unix_ns = realtime_ns(CLOCK_REALTIME);
	__atomic_store_n(&a->seq, seq + 2, __ATOMIC_RELEASE);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	agent_guard_leave();
}

void record_allocator_snapshot(void)
{
	if (!rec.base || !agent_trylock(&rec.snapshot_lock))
		return;
	allocator_snapshot_locked();
	agent_unlock(&rec.snapshot_lock);
}

/*
 * A thread is about to wait (idle.c) after it allocated or freed since
 * its last wait: the figures it leaves behind are taken now, so that an
 * idle process is read with current ones. Another thread taking them
 * meanwhile is waited for (its snapshot may have started before this
 * thread's last change). A budget keeps a busy server that waits between
 * requests from spending more than 1/IDLE_SHARE of its time here.
 */
void record_idle_point(void)
{
	int64_t now, end;

	if (!rec.base)
		return;
	agent_guard_enter();
	agent_lock(&rec.snapshot_lock);
	now = realtime_ns(CLOCK_MONOTONIC);
	if (!rec.idle_last_ns)
		rec.idle_tokens_ns = IDLE_BURST_NS;
	else
		rec.idle_tokens_ns += (now - rec.idle_last_ns) / IDLE_SHARE;
	if (rec.idle_tokens_ns > IDLE_BURST_NS)
		rec.idle_tokens_ns = IDLE_BURST_NS;
	rec.idle_last_ns = now;
	if (rec.idle_tokens_ns > 0) {
		allocator_snapshot_locked();
		end = realtime_ns(CLOCK_MONOTONIC);
		rec.idle_tokens_ns -= end - now;
		rec.idle_last_ns = end;
	}
	agent_unlock(&rec.snapshot_lock);
	agent_guard_leave();
}

void record_slow_point(uint64_t samples)
{
	struct record_header *h = agent_hdr;
	int64_t now;

	/* Below 4 KiB nearly every allocation comes here: the clock (some
	 * 35 instructions) is read at every 16th sample only. */
	if (agent_cfg.rate < 4096 && samples % 16)
		return;
	now = realtime_ns(CLOCK_REALTIME_COARSE);

	/* Stored only when the coarse clock moved: a line read by every
	 * thread, written a few hundred times a second at most. */
	if (__atomic_load_n(&h->update_unix_ns, __ATOMIC_RELAXED) != now)
		__atomic_store_n(&h->update_unix_ns, now, __ATOMIC_RELAXED);
	if (rec.base &&
	    now >= __atomic_load_n(&rec.next_snapshot_ns, __ATOMIC_RELAXED)) {
		__atomic_store_n(&rec.next_snapshot_ns, now + SNAPSHOT_NS,
				 __ATOMIC_RELAXED);
		record_allocator_snapshot();
	}
}

void record_exit(int status, int64_t anon_bytes, int64_t anon_peak_bytes,
		 int64_t heap_bytes, int64_t unseen_bytes)
{
	struct record_header *h = agent_hdr;

	if (!rec.base)
		return;
	h->end_unix_ns = realtime_ns(CLOCK_REALTIME);
	h->update_unix_ns = h->end_unix_ns;
	agent_output_title(h->title, sizeof(h->title));
	h->anon_bytes = anon_bytes;
	h->anon_peak_bytes = anon_peak_bytes;
	h->heap_bytes = heap_bytes;
	h->unseen_bytes = unseen_bytes;
	h->exit_status = status;
	__atomic_store_n(&h->state, RECORD_EXITED, __ATOMIC_RELEASE);
}

bool record_kept_for_run(void)
{
	for (size_t i = 0; i < sizeof(rec.token); i++)
		if (rec.token[i])
			return true;
	return false;
}

bool record_run_writes(void)
{
	return rec.base && rec.file && record_kept_for_run();
}

void record_remove(void)
{
	if (!rec.base || !rec.file || record_kept_for_run())
		return;
	agent_lock(&agent_rec_lock);
	unlink_own();
	agent_unlock(&agent_rec_lock);
}

int record_view(struct record_view *v)
{
	int rc;

	if (!rec.base) {
		memset(v, 0, sizeof(*v));
		return msg_set("no record of this process (its address range "
			       "could not be reserved)");
	}
	/* No entry appended meanwhile: header.size stays within what is
	 * mapped, and the tables checked stay where they are. */
	agent_lock(&agent_rec_lock);
	rc = record_check(rec.base, rec.mapped, &agent_alloc_hooks, v);
	agent_unlock(&agent_rec_lock);
	return rc;
}
