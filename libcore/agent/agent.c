/* SPDX-License-Identifier: MIT */
/* The agent's life cycle: configuration, profiles, dumps, fork and exit. */
#include "agent_int.h"
#include "agent/attach.h"
#include "agent/unseen.h"
#include "fmt.h"
#include "msg.h"
#include "num.h"
#include "palloc.h"
#include "pattern.h"
#include "phdr.h"
#include "pprof.h"
#include "record_profile.h"
#include "smallfile.h"
#include "sys.h"

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int agent_mode = AGENT_OFF;
struct agent_config agent_cfg = {
	.rate = 524288,
	.unwind = UNWIND_AUTO,
	.max_depth = 64,
	.follow_children = true,
};

struct agent_lock agent_dump_lock = AGENT_LOCK_INIT;
struct agent_lock agent_tab_lock = AGENT_LOCK_INIT;
struct agent_lock agent_intern_lock = AGENT_LOCK_INIT;
pthread_mutex_t agent_reg_lock = PTHREAD_MUTEX_INITIALIZER;
struct arena agent_arena = ARENA_INIT;
struct pprof_allocator agent_alloc_hooks;
struct stacktab agent_tab;
bool agent_per_thread;

/* PALLOC_INTERVAL below this is raised to it: every dump writes a file. */
#define INTERVAL_MIN_NS 100000000u /* 0.1 s */
#define EXIT_LOCK_TRIES 200 /* x 5 ms: give up on the exit dump after 1 s */

static struct {
	uint64_t start_ns;
	int64_t start_realtime_ns;
	pid_t pid;
	pid_t parent_pid;	/* a fork child: the pid it was forked from */
	uint64_t seq;		/* %n: profiles written so far */
	uint64_t alloc_at_init; /* alloc_count when the agent started */
	int exit_done;
	uint64_t next_interval_ns, next_peak_ns; /* safe point dumps */
	char cmdline[2048];
} ag;

uint64_t agent_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- configuration ---- */

static void bad_env(const char *name, const char *val, const char *why)
{
	fmt_warn("%s=%s: %s", name, val, why);
}

/* A 0/1 switch; anything else warns and keeps *out. */
static void env_bool(const char *name, bool *out)
{
	const char *v = getenv(name);

	if (!v)
		return;
	if (strcmp(v, "0") == 0)
		*out = false;
	else if (strcmp(v, "1") == 0)
		*out = true;
	else
		bad_env(name, v,
			*out ? "expected 0 or 1; using 1"
			     : "expected 0 or 1; using 0");
}

/* Make the output pattern absolute, relative to the working directory at
 * startup (a program that chdir()s still writes where it was started). */
static void set_output(const char *pattern)
{
	char cwd[PATH_MAX];

	/* An absolute pattern needs none (nor getcwd's binding) */
	if (pattern[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	pattern_absolute(agent_cfg.output, sizeof(agent_cfg.output), pattern,
			 cwd);
}

static void read_config(void)
{
	const char *v;
	uint64_t u;
	char why[MSG_MAX + 64];
	struct fmt_buf b;

	v = getenv("PALLOC_SAMPLE_RATE");
	if (v) {
		if (num_parse_u64(v, true, &u) == 0) {
			agent_cfg.rate = u;
		} else {
			fmt_init(&b, why, sizeof(why));
			fmt_append(&b, "%s; using 524288", msg_last());
			bad_env("PALLOC_SAMPLE_RATE", v, why);
		}
	}
	v = getenv("PALLOC_INTERVAL");
	if (v) {
		if (num_parse_seconds(v, &u) == 0 && u && u < INTERVAL_MIN_NS) {
			agent_cfg.interval_ns = INTERVAL_MIN_NS;
			bad_env("PALLOC_INTERVAL", v,
				"below the minimum of 0.1 seconds; using 0.1");
		} else if (num_parse_seconds(v, &u) == 0) {
			agent_cfg.interval_ns = u;
		} else {
			fmt_init(&b, why, sizeof(why));
			fmt_append(&b, "%s; using 0 (no periodic dumps)",
				   msg_last());
			bad_env("PALLOC_INTERVAL", v, why);
		}
	}
	v = getenv("PALLOC_UNWIND");
	if (v && unwind_parse_mode(v, &agent_cfg.unwind) < 0)
		bad_env("PALLOC_UNWIND", v,
			"expected fp, dwarf or auto; using auto");
	v = getenv("PALLOC_MAX_DEPTH");
	if (v) {
		if (num_parse_u64(v, false, &u) == 0 && u >= 1 &&
		    u <= MAX_DEPTH_LIMIT)
			agent_cfg.max_depth = (unsigned)u;
		else
			bad_env("PALLOC_MAX_DEPTH", v,
				"expected a number of frames from 1 to 256; "
				"using 64");
	}
	v = getenv("PALLOC_SEED");
	if (v && num_parse_u64(v, false, &agent_cfg.seed) < 0) {
		fmt_init(&b, why, sizeof(why));
		fmt_append(&b, "%s; using 0 (seeded from time, pid and tid)",
			   msg_last());
		bad_env("PALLOC_SEED", v, why);
		agent_cfg.seed = 0;
	}
	env_bool("PALLOC_FOLLOW_CHILDREN", &agent_cfg.follow_children);
	env_bool("PALLOC_PEAK", &agent_cfg.peak);
	env_bool("PALLOC_EXACT", &agent_cfg.exact);
	v = getenv("PALLOC_OUTPUT");
	if (v && pattern_invalid(v)) {
		fmt_init(&b, why, sizeof(why));
		fmt_append(&b, "%s; using %s", pattern_invalid(v),
			   PATTERN_DEFAULT);
		bad_env("PALLOC_OUTPUT", v, why);
		v = NULL;
	}
	set_output(v ? v : PATTERN_DEFAULT);
	record_read_env();
}

/*
 * PALLOC_FOLLOW_CHILDREN=0: take the agent out of LD_PRELOAD and drop the
 * PALLOC_* variables, editing environ in place (no setenv: it allocates,
 * and the strings can only get shorter), so exec'd children run without
 * the agent.
 */
static void scrub_environment(void)
{
	extern char **environ;
	Dl_info info;
	const char *self = NULL, *self_base = "libpalloc.so";
	size_t w = 0;

	if (dladdr((void *)&scrub_environment, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');

		self = info.dli_fname;
		self_base = slash ? slash + 1 : self;
	}
	for (size_t r = 0; environ && environ[r]; r++) {
		char *e = environ[r];

		if (strncmp(e, "PALLOC_", 7) == 0)
			continue;
		if (strncmp(e, "LD_PRELOAD=", 11) == 0) {
			char *src = e + 11, *dst = e + 11;

			while (*src) {
				size_t len = strcspn(src, ": ");
				const char *base = src;
				bool ours;

				for (size_t i = 0; i < len; i++)
					if (src[i] == '/')
						base = src + i + 1;
				ours = (self && len == strlen(self) &&
					memcmp(src, self, len) == 0) ||
				       ((size_t)(src + len - base) ==
						strlen(self_base) &&
					memcmp(base, self_base,
					       strlen(self_base)) == 0);
				if (!ours && len) {
					if (dst != e + 11)
						*dst++ = ':';
					memmove(dst, src, len);
					dst += len;
				}
				src += len;
				while (*src == ':' || *src == ' ')
					src++;
			}
			*dst = '\0';
			if (dst == e + 11)
				continue; /* nothing left: drop LD_PRELOAD */
		}
		environ[w++] = e;
	}
	if (environ)
		environ[w] = NULL;
}

static void read_cmdline(void)
{
	ssize_t n = smallfile_read("/proc/self/cmdline", ag.cmdline,
				   sizeof(ag.cmdline));

	if (n < 0)
		n = 0;
	while (n > 0 && ag.cmdline[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (ag.cmdline[i] == '\0')
			ag.cmdline[i] = ' ';
	ag.cmdline[n] = '\0';
}

/* ---- profiles: from the record (pprof/record_profile.h) ---- */

/* Lock l: with bounded retries when exiting (another thread may be stuck
 * holding it), blocking otherwise. 0 or -1. */
int agent_lock_bounded(struct agent_lock *l, bool bounded)
{
	struct timespec ts = {0, 5000000};

	if (!bounded) {
		agent_lock(l);
		return 0;
	}
	for (int i = 0; i < EXIT_LOCK_TRIES; i++) {
		if (agent_trylock(l))
			return 0;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* The exit's measurement of memory the agent could not see (exit_dump()
 * takes it once, the exit profiles carry it); valid when taken. */
static struct unseen exit_unseen;
static bool exit_unseen_taken;

/*
 * The peak of the malloc heap the agent saw, for unseen_measure(): the
 * exact peak, or the sampled high-water mark plus 16 bytes of allocator
 * overhead (a chunk header and rounding) per object live then; -1 when
 * sampling is off.
 */
static int64_t heap_peak_bytes(void)
{
	double bytes, objects = 0;

	if (agent_cfg.exact)
		return __atomic_load_n(&agent_hdr->exact_peak,
				       __ATOMIC_RELAXED);
	if (!agent_cfg.rate)
		return -1;
	if (agent_per_thread)
		return __atomic_load_n(&agent_hdr->pt_max_bytes,
				       __ATOMIC_RELAXED) +
		       16 * __atomic_load_n(&agent_hdr->pt_max_objects,
					    __ATOMIC_RELAXED);
	agent_lock(&agent_tab_lock);
	stacktab_settle_peak(&agent_tab);
	for (size_t i = 0; i < stacktab_n_stacks(&agent_tab); i++) {
		const struct record_stack *st =
			stacktab_get(&agent_tab, (uint32_t)i + 1);

		objects += st ? st->peak_objects : 0;
	}
	bytes = agent_tab.max_inuse_bytes;
	agent_unlock(&agent_tab_lock);
	return round_value(bytes + 16 * objects);
}

void agent_get_unseen(struct unseen *u)
{
	unseen_measure(u, heap_peak_bytes(), UNSEEN_OWNER_ALWAYS);
}

/*
 * The current profile, default sample type dflt, in the arena: the
 * agent's own record checked again (record_view: a thread's table may
 * have moved since the last profile) and made a profile by the reader the
 * commands use (record_profile), given what only the agent knows: the
 * title now, who owns the memory malloc did not give (at exit), the
 * executable regions of /proc/self/maps for JIT frames. Caller holds
 * agent_dump_lock and no other agent lock; exiting: wait for the stack
 * table's lock a bounded time only. The threads' counters are copied to
 * their slots first; the table lock (no sample changes the stacks, no
 * thread folds its records) and the registry's (no table moves) are held
 * while the record is read. maps: the executable regions read meanwhile
 * (zero-initialised; the caller frees it). frames_only: the profile is
 * wanted for maps only, so none is made (NULL, no error) when the record
 * holds no stack. NULL with msg_set() on failure.
 */
static struct pprof_profile *build_profile(bool exiting, const char *dflt,
					   struct agent_maps *maps,
					   bool frames_only)
{
	struct record_profile_opts o = {.default_sample_type = dflt};
	struct pprof_profile *p = NULL;
	struct record_view v;
	char title[RECORD_LONG_STR];

	agent_output_title(title, sizeof(title));
	o.title = title;
	o.time_nanos = realtime_ns();
	o.duration_nanos = o.time_nanos - ag.start_realtime_ns;
	if (exit_unseen_taken) {
		o.unseen_owner = exit_unseen.owner ? exit_unseen.owner : "";
		o.unseen_hint = exit_unseen.hint;
	}
	o.unmapped = agent_maps_unmapped;
	o.unmapped_ctx = maps;
	agent_threads_sync_all();
	if (agent_lock_bounded(&agent_tab_lock, exiting) < 0) {
		msg_set("the stack table stayed locked by another thread");
		return NULL;
	}
	pthread_mutex_lock(&agent_reg_lock);
	if (record_view(&v) == 0) {
		/* No stack, no frame to look up: no executable region */
		if (!frames_only || v.n_stacks)
			p = record_profile(&v, &o, &agent_alloc_hooks);
		record_view_free(&v);
	}
	pthread_mutex_unlock(&agent_reg_lock);
	agent_unlock(&agent_tab_lock);
	return p;
}

/* Build and write one profile to path (NULL: the next name of the
 * pattern); a peak profile
 * (default sample type peak_inuse_space, %n "peak") when peak is true.
 * 0, or -1 with errno and msg_set(). */
static int dump_kind(const char *path, bool exiting, bool peak,
		     const char *pressure, const char *comment, char *written,
		     size_t cap)
{
	struct pprof_profile *p;
	struct agent_maps maps = {0};
	char seq[24];
	int rc = -1, err = 0;

	agent_guard_enter();
	record_modules_check(); /* as agent_build_profile() */
	if (agent_lock_bounded(&agent_dump_lock, exiting) < 0) {
		msg_set("another dump stayed in progress");
		agent_guard_leave();
		errno = EBUSY;
		return -1;
	}
	if (!exiting && __atomic_load_n(&ag.exit_done, __ATOMIC_ACQUIRE)) {
		/* The exit profile is written: a late periodic dump would
		 * race the end of the process (and be the older one). */
		msg_set("the process is exiting");
		err = ESHUTDOWN;
		goto out;
	}
	p = build_profile(exiting, peak ? "peak_inuse_space" : "inuse_space",
			  &maps, false);
	agent_maps_free(&maps);
	if (!p) {
		err = errno ? errno : ENOMEM;
		goto out;
	}
	if (comment && pprof_add_comment(p, comment) < 0) {
		pprof_free(p);
		err = ENOMEM;
		goto out;
	}
	if (peak) {
		memcpy(seq, "peak", 5);
	} else if (pressure) {
		memcpy(seq, pressure, strnlen(pressure, sizeof(seq) - 1));
		seq[strnlen(pressure, sizeof(seq) - 1)] = '\0';
	} else {
		struct fmt_buf b;

		fmt_init(&b, seq, sizeof(seq));
		fmt_append(&b, "%llu",
			   (unsigned long long)(path ? ag.seq : ++ag.seq));
	}
	rc = agent_output_write(p, (long)ag.pid, path, seq, written, cap);
	err = errno;
	pprof_free(p);
out:
	agent_unlock(&agent_dump_lock);
	agent_guard_leave();
	if (rc < 0)
		errno = err;
	return rc;
}

static int dump_as(const char *path, bool exiting, bool peak, char *written,
		   size_t cap)
{
	return dump_kind(path, exiting, peak, NULL, NULL, written, cap);
}

int agent_dump_pressure(const char *seq, const char *comment)
{
	return dump_kind(NULL, false, false, seq, comment, NULL, 0);
}

static int dump(const char *path, bool exiting, char *written, size_t cap)
{
	return dump_as(path, exiting, false, written, cap);
}

PALLOC_EXPORT int palloc_dump(const char *path)
{
	int saved = errno, rc;

	if (agent_mode != AGENT_ON) {
		errno = EAGAIN;
		return -1;
	}
	rc = dump(path, false, NULL, 0);
	if (rc == 0)
		errno = saved;
	return rc;
}

/* ---- peak files (PALLOC_PEAK=1) ---- */

/* The snapshot total (bytes, rounded) last written to the peak file; the
 * slow paths of several threads and the exit path read and set it
 * (atomically: at worst two write the same file). */
static uint64_t peak_written;

/*
 * Write the peak file if the high-water mark of the inuse estimate (kept
 * exactly, stacktab.h "The peak") is at least 17/16 of the one last
 * written, or, when final, if it is above it at all: the file written at
 * exit holds the true peak. Called at most once a second from the slow
 * path of an allocation (agent_safe_point) and at exit.
 */
static void peak_maybe_write(bool final)
{
	uint64_t now, last;

	agent_lock(&agent_tab_lock);
	now = (uint64_t)round_value(agent_max_inuse());
	agent_unlock(&agent_tab_lock);
	last = __atomic_load_n(&peak_written, __ATOMIC_RELAXED);
	if (now == 0 || now <= last || (!final && now - last < last / 16))
		return;
	if (dump_as(NULL, final, true, NULL, 0) == 0)
		__atomic_store_n(&peak_written, now, __ATOMIC_RELAXED);
	else if (errno != ESHUTDOWN)
		fmt_warn("peak profile not written: %s", msg_last());
}

/* ---- the loader in fork children ---- */

/*
 * A fork child may inherit the loader's dl_load_write_lock held by another
 * thread of its parent (modtab.c). The parent copies the list of loaded
 * objects in its prepare handler; a child forked while other threads ran
 * answers libunwind's and its own dl_iterate_phdr calls from that copy,
 * so it unwinds and lists its mappings exactly as the parent would, until
 * the loader is seen free without waiting for it: a dl_iterate_phdr or
 * dlclose of the program's own has returned (modtab.c, extramaps.c; the
 * agent starts no thread to probe it). Objects the child loads before
 * that are missing from its stacks. A child of a process that never had a
 * second thread cannot have inherited the lock held.
 */
static bool fork_single_threaded;

static void loader_guard_child(void)
{
	if (!fork_single_threaded)
		(void)modtab_child_begin();
}

/* ---- fork ---- */

/*
 * Lock order (agent_int.h): dump, table, registry, arena. prepare takes
 * them all so the child inherits consistent tables; the guard is held
 * across fork so allocations by other prepare handlers, or glibc's own,
 * cannot come back into a locked agent.
 */
static __thread bool fork_nested __attribute__((tls_model("initial-exec")));

/*
 * No other thread inside libunwind at the fork (hooks.c unwind_fenced):
 * new ones wait, those inside finish. Bounded at 2 s: a thread stopped
 * inside (a debugger) must not hang the program's fork.
 */
static void fork_fence_unwinders(void)
{
	struct timespec ts = {0, 100000};

	__atomic_store_n(&agent_fork_pending, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 20000; i++) {
		if (!agent_threads_unwinding())
			return;
		nanosleep(&ts, NULL);
	}
}

static void fork_unfence_unwinders(void)
{
	__atomic_store_n(&agent_fork_pending, 0, __ATOMIC_SEQ_CST);
}

static void fork_prepare(void)
{
	/*
	 * A fork from a signal handler that interrupted the agent on this
	 * thread (inside free or a sample, holding the stack-table lock):
	 * taking the locks would wait for ever on ourselves. Take none; the
	 * child, whose tables may be half-updated, stops profiling and
	 * touches none of them (fork_child).
	 */
	fork_nested = agent_tls.guard > 0;
	agent_guard_enter();
	if (fork_nested)
		return;
	fork_fence_unwinders();
	agent_lock(&agent_dump_lock);
	fork_single_threaded = __libc_single_threaded;
	if (agent_mode == AGENT_ON && agent_cfg.follow_children &&
	    !fork_single_threaded)
		modtab_snapshot();
	agent_lock(&agent_tab_lock);
	agent_lock(&agent_intern_lock);
	for (size_t i = 0; i < STACKTAB_SHARDS; i++)
		agent_lock(&agent_tab.shards[i].lock);
	pthread_mutex_lock(&agent_reg_lock);
	agent_lock(&agent_mod_lock);
	agent_lock(&agent_rec_lock);
	arena_lock(&agent_arena);
}

static void fork_parent(void)
{
	if (fork_nested) {
		agent_guard_leave();
		return;
	}
	arena_unlock(&agent_arena);
	agent_unlock(&agent_rec_lock);
	agent_unlock(&agent_mod_lock);
	pthread_mutex_unlock(&agent_reg_lock);
	for (size_t i = STACKTAB_SHARDS; i-- > 0;)
		agent_unlock(&agent_tab.shards[i].lock);
	agent_unlock(&agent_intern_lock);
	agent_unlock(&agent_tab_lock);
	agent_unlock(&agent_dump_lock);
	fork_unfence_unwinders();
	agent_guard_leave();
}

/*
 * A fork child with PALLOC_FOLLOW_CHILDREN=1 (default) profiles its own
 * allocations from the fork on: its stack table and counters start at
 * zero (blocks inherited from the parent are not its allocations; their
 * frees are ignored), and it writes its own file, named with its own pid.
 * With 0, the child stops profiling and writes nothing.
 */
static void fork_child(void)
{
	if (fork_nested) {
		/* The handler's frame below still runs agent code: leave
		 * every lock and table as they are, and stay out of them. */
		if (agent_mode == AGENT_ON)
			__atomic_store_n(&agent_mode, AGENT_DISABLED,
					 __ATOMIC_RELEASE);
		/* Out of the parent's record file, though (a private copy
		 * at the same place: no lock, no table touched). */
		record_after_fork_child();
		agent_guard_leave();
		return;
	}
	arena_reset_lock(&agent_arena);
	agent_lock_reset(&agent_rec_lock);
	agent_lock_reset(&agent_mod_lock);
	pthread_mutex_init(&agent_reg_lock, NULL);
	agent_lock_reset(&agent_tab_lock);
	agent_lock_reset(&agent_intern_lock);
	for (size_t i = 0; i < STACKTAB_SHARDS; i++)
		agent_lock_reset(&agent_tab.shards[i].lock);
	agent_lock_reset(&agent_dump_lock);
	fork_unfence_unwinders();
	if (agent_mode == AGENT_ON && !agent_cfg.follow_children)
		agent_mode = AGENT_DISABLED;
	/* Before anything is written: until then the record is the
	 * parent's file (a child that does not profile leaves it). */
	record_after_fork_child();
	if (agent_mode == AGENT_ON) {
		struct record_header *h = agent_hdr;

		/* A child of palloc-run's whose record could not be made
		 * writes its own: its baseline is taken now. */
		if (!agent_attached && !record_run_writes())
			agent_pressure_start();

		record_seq_begin();
		stacktab_reset(&agent_tab);
		agent_boot_mark();
		h->dropped = 0;
		h->dropped_bytes = 0;
		h->exact_inuse = h->exact_peak = 0;
		h->pt_inuse_bytes = h->pt_inuse_objects = 0;
		h->pt_max_bytes = h->pt_max_objects = 0;
		record_tab_totals();
		h->alloc_at_init = 0;
		record_seq_end();
		ag.parent_pid = ag.pid;
		ag.pid = sys_getpid();
		ag.seq = 0;
		ag.start_ns = agent_now_ns();
		ag.start_realtime_ns = realtime_ns();
		ag.alloc_at_init = 0;
		ag.next_interval_ns = ag.start_ns + agent_cfg.interval_ns;
		ag.next_peak_ns = ag.start_ns;
	}
	agent_threads_after_fork_child();
	if (agent_mode == AGENT_ON) {
		loader_guard_child();
		peak_written = 0;
		agent_pressure_after_fork();
	}
	agent_guard_leave();
}

/* ---- the work of the slow path: the agent has no thread ---- */

/*
 * The agent starts no thread, opens no socket and keeps no descriptor:
 * a thread of its own would change the program (glibc leaves its
 * single-thread paths for good once a second thread exists: a malloc in
 * a signal handler, unsafe but common, then deadlocks; unshare
 * CLONE_NEWUSER fails with EINVAL; the program's thread count changes).
 * What needs doing besides recording (periodic, peak and memory
 * pressure profiles with LD_PRELOAD alone) is done by whichever of the
 * program's threads reaches the agent's slow path of an allocation when
 * it is due; under palloc-run, palloc-run makes those profiles from the
 * record and the agent writes none. The commands read the record from
 * outside. palloc(7) says so ("Threads").
 */

/* Claim the due time *next (monotonic ns) for the calling thread: true
 * when it was due and no other thread claimed it; *next then is
 * now + every. */
static bool claim_due(uint64_t *next, uint64_t now, uint64_t every)
{
	uint64_t due = __atomic_load_n(next, __ATOMIC_RELAXED);

	return now >= due &&
	       __atomic_compare_exchange_n(next, &due, now + every, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void agent_safe_point(void)
{
	uint64_t now;
	bool pressure;

	if (agent_attached)
		attach_safe_point();
	if (record_run_writes())
		return; /* palloc-run makes them from the record */
	pressure = agent_pressure_on();
	if (!pressure && !agent_cfg.interval_ns &&
	    !(agent_cfg.peak && agent_cfg.rate))
		return;
	now = agent_now_ns();
	if (pressure)
		agent_pressure_safe_point(now, agent_tls.bytes_base -
						       agent_tls.left);
	if (agent_cfg.interval_ns &&
	    claim_due(&ag.next_interval_ns, now, agent_cfg.interval_ns) &&
	    dump(NULL, false, NULL, 0) < 0 && errno != ESHUTDOWN)
		fmt_warn("periodic profile not written: %s", msg_last());
	if (agent_cfg.peak && agent_cfg.rate &&
	    claim_due(&ag.next_peak_ns, now, 1000000000u))
		peak_maybe_write(false);
}

/* ---- start and exit ---- */

/*
 * Under palloc-run, at exit: the executable regions no loaded object
 * covers that hold a frame (JIT code) go into the record, which
 * palloc-run reads after /proc/PID/maps is gone. The profile is built for
 * that only (record_profile() looks every frame up), then dropped.
 */
static void record_jit_regions(void)
{
	struct agent_maps maps = {0};
	struct pprof_profile *p;

	record_modules_check();
	if (agent_lock_bounded(&agent_dump_lock, true) < 0)
		return;
	p = build_profile(true, "inuse_space", &maps, true);
	agent_unlock(&agent_dump_lock);
	if (p)
		pprof_free(p);
	agent_maps_record(&maps);
	agent_maps_free(&maps);
}

/* The status exit() or _exit() was given, when the agent saw it. */
static int exit_status;

static void exit_dump(void)
{

	if (agent_mode != AGENT_ON ||
	    __atomic_exchange_n(&ag.exit_done, 1, __ATOMIC_ACQ_REL))
		return;
	agent_guard_enter();
	/* The owner only for the warning (record_profile.c names it only
	 * then): no read of /proc/self/maps at every exit; none where
	 * palloc-run makes the profile (the record holds no owner). */
	unseen_measure(&exit_unseen, heap_peak_bytes(),
		       agent_attached || record_run_writes()
			       ? UNSEEN_OWNER_NEVER
			       : UNSEEN_OWNER_IF_MOST);
	exit_unseen_taken = true;
	/* The record first: it is final even if the profile is not. The
	 * allocator's figures (no profile shows them) only in a record that
	 * stays: palloc-run's, or one whose exit profile failed. */
	agent_threads_sync_all();
	if (record_kept_for_run())
		record_allocator_snapshot();
	if (record_run_writes())
		record_jit_regions();
	record_exit(exit_status, exit_unseen.anon_bytes,
		    exit_unseen.anon_peak_bytes, exit_unseen.heap_bytes,
		    exit_unseen.unseen_bytes);
	if (agent_attached) {
		/* palloc-run -p makes the profile from the record, and
		 * removes it; detached, nobody reads it */
		if (!attach_hooked())
			record_remove();
		agent_guard_leave();
		return;
	}
	if (record_run_writes()) {
		/* palloc-run makes the exit (and peak) profile from the
		 * record marked exited, and prints what unseen found. */
		agent_guard_leave();
		return;
	}
	if (agent_cfg.peak && agent_cfg.rate)
		peak_maybe_write(true);
	if (dump(NULL, true, NULL, 0) < 0) {
		fmt_warn("profile not written: %s", msg_last());
		if (!record_kept_for_run())
			record_allocator_snapshot();
	} else {
		record_remove(); /* LD_PRELOAD alone: nothing left behind */
	}
	if (exit_unseen.most) {
		char text[512];

		unseen_text(&exit_unseen, text, sizeof(text));
		fmt_warn("warning: %s", text);
	}
	agent_guard_leave();
}

/* The exit handler: on_exit(3) passes exit()'s status (main's return
 * value too), which the record keeps. */
static void exit_handler(int status, void *arg PALLOC_UNUSED)
{
	exit_status = status;
	exit_dump();
}

/* The exit dump runs from an exit handler registered at init (so after
 * the program's own atexit handlers and static destructors, registered
 * later), and from this destructor in case exit handlers were skipped;
 * whichever runs first writes. */
__attribute__((destructor(101))) static void agent_fini(void)
{
	exit_dump();
}

/*
 * _exit and _Exit skip atexit handlers and destructors. Programs that end
 * that way (dash, the shell of most scripts and builds; daemons; forked
 * children) would write no profile, so these write it first: not in a
 * vfork child (it shares its parent's memory and locks; fork handlers do
 * not run for vfork, so its pid is not the one the agent knows), and not
 * while this thread is inside the agent (a signal handler that calls
 * _exit). Calls inside libc (posix_spawn's child) do not come here.
 * They take effect only where libpalloc.map exports them.
 */
static void (*real_exit)(int);

static PALLOC_NORETURN void exit_now(int status)
{
	if (__atomic_load_n(&agent_mode, __ATOMIC_ACQUIRE) == AGENT_ON &&
	    !agent_tls.guard && sys_getpid() == ag.pid) {
		exit_status = status;
		exit_dump();
	}
	if (real_exit)
		real_exit(status);
	syscall(SYS_exit_group, status);
	for (;;)
		syscall(SYS_exit, status);
}

PALLOC_EXPORT void _exit(int status)
{
	exit_now(status);
}

PALLOC_EXPORT void _Exit(int status)
{
	exit_now(status);
}

/* Say so when the program's malloc calls do not reach the agent. */
static void warn_malloc_definer(void)
{
	struct phdr_definition def;

	switch (agent_malloc_definer(&def)) {
	case 1:
		fmt_warn("the program '%s' defines malloc itself (an allocator "
			 "linked in statically): its allocations will not be "
			 "seen",
			 program_invocation_short_name);
		break;
	case 2:
		fmt_warn("another library defining malloc is preloaded before "
			 "the agent ('%s'): allocations will not be seen; put "
			 "libpalloc.so first in LD_PRELOAD",
			 def.path);
		break;
	}
}

/* The start, preloaded (the constructor) or attached (palloc_attach(),
 * agent_cfg set from its configuration, attach.h). Guard held. */
static void agent_start(bool attached)
{
	uint64_t ac, fc, ab, re, ns;

	ag.start_ns = agent_now_ns();
	ag.start_realtime_ns = realtime_ns();
	ag.pid = sys_getpid();
	if (getauxval(AT_SECURE)) {
		fmt_warn("setuid or otherwise secure program (AT_SECURE): not "
			 "profiling it");
		agent_mode = AGENT_DISABLED;
		return;
	}
	if (attached) {
		/* No environment to read, no pressure dumps, no output: the
		 * record is all palloc-run reads. */
		set_output(PATTERN_DEFAULT);
	} else {
		read_config();
		agent_pressure_init();
	}
	unseen_init();
	if (!attached) {
		agent_output_init();
		warn_malloc_definer();
	}
	arena_fill_allocator(&agent_arena, &agent_alloc_hooks);
	/* agent_tab is static, so zero but for the marks of the bootstrap
	 * blocks (set at resolution): stacktab_init() would clear them, and
	 * fault in its 264 KiB (some 45 page faults) for nothing. */
	agent_tab.a = agent_alloc_hooks;
	agent_tab.max_stacks = 65536;
	/* Rate 1 samples every block: every free looks (stacktab.h); so
	 * does exact mode, for the size of every block freed. */
	if (agent_cfg.rate == 1 || agent_cfg.exact)
		stacktab_all_live(&agent_tab);
	if (agent_cfg.rate == 1) {
		/* The exact peak needs the locked section's order. */
		agent_per_thread = !agent_cfg.peak;
	}
	if (!agent_cfg.follow_children)
		scrub_environment();
	read_cmdline();
	modtab_init();
	if (agent_cfg.rate && unwind_init(agent_cfg.unwind) < 0) {
		fmt_warn("unwinder '%s' failed (%s); using fp",
			 unwind_mode_name(agent_cfg.unwind), msg_last());
		agent_cfg.unwind = UNWIND_FP;
		unwind_init(UNWIND_FP);
	}
	record_init(ag.cmdline, ag.start_realtime_ns);
	/* palloc-run watches the cgroup itself (agent_safe_point()) */
	if (!attached && !record_run_writes())
		agent_pressure_start();
	agent_threads_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	on_exit(exit_handler, NULL);
	agent_sum_counters(&ac, &fc, &ab, &re, &ns);
	ag.alloc_at_init = ac + agent_tls.alloc_count *
					(agent_tls.state == AGENT_THREAD_NEW);
	agent_hdr->alloc_at_init = ag.alloc_at_init;
	__atomic_store_n(&agent_mode, AGENT_ON, __ATOMIC_RELEASE);
	agent_thread_setup(&agent_tls);
	ag.next_interval_ns = ag.start_ns + agent_cfg.interval_ns;
	ag.next_peak_ns = ag.start_ns;
}

void agent_start_attached(void)
{
	real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	agent_start(true);
}

__attribute__((constructor(101))) static void agent_init(void)
{
	agent_guard_enter();
	/* dlopened by palloc-run -p: palloc_attach() starts it */
	if (agent_mode == AGENT_OFF && attach_dlopened()) {
		agent_guard_leave();
		return;
	}
	agent_preloaded = agent_mode == AGENT_OFF;
	agent_guard_leave();
	agent_resolve_real();
	if (agent_mode != AGENT_OFF)
		return;
	real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	agent_idle_init();
	agent_guard_enter();
	agent_start(false);
	agent_guard_leave();
}
