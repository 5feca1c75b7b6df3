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
	bool interval_running;
	int interval_stop;
	bool threaded;	   /* the program has threads: agent threads run */
	bool want_threads; /* a thread was created before init */
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

const struct pprof_allocator *agent_allocator(void)
{
	return &agent_alloc_hooks;
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

	if (!getcwd(cwd, sizeof(cwd)))
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
	unseen_measure(u, heap_peak_bytes());
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
 * while the record is read. NULL with msg_set() on failure.
 */
static struct pprof_profile *build_profile(bool exiting, const char *dflt)
{
	struct record_profile_opts o = {.default_sample_type = dflt};
	struct agent_maps maps = {0};
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
	o.unmapped_ctx = &maps;
	agent_threads_sync_all();
	if (agent_lock_bounded(&agent_tab_lock, exiting) < 0) {
		msg_set("the stack table stayed locked by another thread");
		return NULL;
	}
	pthread_mutex_lock(&agent_reg_lock);
	if (record_view(&v) == 0) {
		p = record_profile(&v, &o, &agent_alloc_hooks);
		record_view_free(&v);
	}
	pthread_mutex_unlock(&agent_reg_lock);
	agent_unlock(&agent_tab_lock);
	agent_maps_free(&maps);
	return p;
}

struct pprof_profile *agent_build_profile(void)
{
	struct pprof_profile *p;

	if (agent_mode != AGENT_ON) {
		msg_set("the agent is not running");
		return NULL;
	}
	agent_guard_enter();
	/* Objects loaded since the last sample (this calls the loader:
	 * before any agent lock). */
	record_modules_check();
	agent_lock(&agent_dump_lock);
	p = build_profile(false, "inuse_space");
	agent_unlock(&agent_dump_lock);
	agent_guard_leave();
	return p;
}

/* Build and write one profile to path (NULL: the next name of the
 * pattern, delivered to palloc-run when it listens); a peak profile
 * (default sample type peak_inuse_space, %n "peak") when peak is true.
 * 0, or -1 with errno and msg_set(). */
static int dump_kind(const char *path, bool exiting, bool peak,
		     const char *pressure, const char *comment, char *written,
		     size_t cap)
{
	struct pprof_profile *p;
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
	p = build_profile(exiting, peak ? "peak_inuse_space" : "inuse_space");
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

void agent_get_stats(struct agent_stats *st)
{
	uint64_t re, ns;

	memset(st, 0, sizeof(*st));
	agent_sum_counters(&st->alloc_count, &st->free_count, &st->alloc_bytes,
			   &re, &ns);
	st->exact = agent_cfg.exact;
	agent_lock(&agent_tab_lock);
	st->sampled_count = ns;
	st->dropped_count = agent_hdr->dropped;
	st->dropped_bytes = (uint64_t)round_value(agent_hdr->dropped_bytes);
	st->stack_count = stacktab_n_stacks(&agent_tab);
	if (!st->exact)
		st->peak_inuse_bytes = (uint64_t)round_value(agent_max_inuse());
	agent_unlock(&agent_tab_lock);
	if (st->exact) {
		/*
		 * Blocks allocated before the agent started (or by the agent's
		 * own threads) and freed later are subtracted but were never
		 * added: clamp the small negative drift that can cause.
		 */
		st->inuse_bytes = __atomic_load_n(&agent_hdr->exact_inuse,
						  __ATOMIC_RELAXED);
		if (st->inuse_bytes < 0)
			st->inuse_bytes = 0;
		st->peak_inuse_bytes = (uint64_t)__atomic_load_n(
			&agent_hdr->exact_peak, __ATOMIC_RELAXED);
	} else {
		st->inuse_bytes = -1;
	}
	st->sample_rate = agent_cfg.rate;
	st->uptime_seconds = (double)(agent_now_ns() - ag.start_ns) / 1e9;
}

/* ---- periodic dumps ---- */

static void *interval_main(void *arg PALLOC_UNUSED)
{
	agent_tls.agent_thread = true;
	agent_guard_enter();
	for (;;) {
		struct timespec ts = {
			.tv_sec = (time_t)(agent_cfg.interval_ns / 1000000000u),
			.tv_nsec = (long)(agent_cfg.interval_ns % 1000000000u),
		};

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		if (__atomic_load_n(&ag.interval_stop, __ATOMIC_ACQUIRE))
			break;
		if (dump(NULL, false, NULL, 0) < 0 && errno != ESHUTDOWN)
			fmt_warn("periodic profile not written: %s",
				 msg_last());
	}
	agent_guard_leave();
	return NULL;
}

/* Start the periodic dumper with every signal blocked (signals meant for
 * the program must never land on an agent thread). */
static void start_interval_thread(void)
{
	pthread_t th;
	pthread_attr_t attr;
	sigset_t all, old;

	if (!agent_cfg.interval_ns)
		return;
	ag.interval_stop = 0;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, interval_main, NULL) == 0)
		ag.interval_running = true;
	else
		fmt_warn("cannot start the periodic dump thread");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- peak files (PALLOC_PEAK=1) ---- */

/* The snapshot total (bytes, rounded) last written to the peak file; the
 * peak thread and the exit path both read and set it (atomically: at
 * worst both write the same file). */
static uint64_t peak_written;

/*
 * Write the peak file if the high-water mark of the inuse estimate (kept
 * exactly, stacktab.h "The peak") is at least 17/16 of the one last
 * written, or, when final, if it is above it at all: the file written at
 * exit holds the true peak. Called from the peak thread and at exit,
 * never from a hook.
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

/* Once a second: at most one peak file write per second, so a heap that
 * grows steadily costs one profile a second, not one per 1/16 step. */
static void *peak_main(void *arg PALLOC_UNUSED)
{
	agent_tls.agent_thread = true;
	agent_guard_enter();
	for (;;) {
		struct timespec ts = {1, 0};

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		if (__atomic_load_n(&ag.interval_stop, __ATOMIC_ACQUIRE))
			break;
		peak_maybe_write(false);
	}
	agent_guard_leave();
	return NULL;
}

/* Start the peak thread (PALLOC_PEAK=1 with sampling on), signals
 * blocked. */
static void start_peak_thread(void)
{
	pthread_t th;
	pthread_attr_t attr;
	sigset_t all, old;

	if (!agent_cfg.peak || !agent_cfg.rate)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, peak_main, NULL) != 0)
		fmt_warn("cannot start the peak profile thread");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- the loader in fork children ---- */

/*
 * A fork child may inherit the loader's dl_load_write_lock held by another
 * thread of its parent (modtab.c). The parent copies the list of loaded
 * objects in its prepare handler; a child forked while other threads ran
 * answers libunwind's and its own dl_iterate_phdr calls from that copy,
 * so it unwinds and lists its mappings exactly as the parent would, until
 * a probe thread has seen the real dl_iterate_phdr return (then objects
 * the child loads itself are seen too). A child of a process that never
 * had a second thread cannot have inherited the lock held.
 */
static bool fork_single_threaded;
/* Set in a fork child answering lookups from the copy, until the probe
 * has seen the loader free. */
static bool loader_unsafe;

static int probe_visit(struct dl_phdr_info *info PALLOC_UNUSED,
		       size_t size PALLOC_UNUSED, void *arg PALLOC_UNUSED)
{
	return 1;
}

/* Blocks for good if the child inherited the loader lock held; exit
 * ends it then. Otherwise returns at once and ends the copy's use. */
static void *loader_probe_main(void *arg PALLOC_UNUSED)
{
	agent_tls.agent_thread = true;
	agent_guard_enter();
	modtab_real_iterate(probe_visit, NULL);
	modtab_child_end();
	__atomic_store_n(&loader_unsafe, false, __ATOMIC_RELEASE);
	agent_guard_leave();
	return NULL;
}

/*
 * In a fork child of a threaded parent: answer the unwinder's and the
 * agent's own lookups from the copy. The probe that ends this is a thread,
 * so it starts only once the child has threads of its own
 * (agent_program_threaded); a child that stays single-threaded keeps the
 * copy (objects it loads itself are then missing from its stacks).
 */
static void loader_guard_child(void)
{
	if (!fork_single_threaded && modtab_child_begin())
		__atomic_store_n(&loader_unsafe, true, __ATOMIC_RELEASE);
}

static void start_loader_probe(void)
{
	pthread_t th;
	pthread_attr_t attr;
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	(void)pthread_create(&th, &attr, loader_probe_main, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
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
		ag.pid = getpid();
		ag.seq = 0;
		ag.start_ns = agent_now_ns();
		ag.start_realtime_ns = realtime_ns();
		ag.alloc_at_init = 0;
		ag.interval_running = false;
		/* Single-threaded again: no agent thread until it has some. */
		__atomic_store_n(&ag.threaded, false, __ATOMIC_RELEASE);
		ag.next_interval_ns = ag.start_ns + agent_cfg.interval_ns;
		ag.next_peak_ns = ag.start_ns;
	}
	agent_threads_after_fork_child();
	if (agent_mode == AGENT_ON) {
		loader_guard_child();
		agent_output_after_fork();
		peak_written = 0;
		agent_pressure_after_fork();
		if (control_after_fork_child)
			control_after_fork_child();
	}
	agent_guard_leave();
}

/* ---- the agent's threads: only in a program that has threads ---- */

/*
 * A thread of the agent's would make a single-threaded program
 * multithreaded behind its back: glibc leaves its single-thread paths for
 * good (a malloc in a signal handler, unsafe but common, then deadlocks
 * on the arena lock), and unshare(CLONE_NEWUSER) fails with EINVAL. So the
 * periodic and peak dumpers, the control server and a fork child's
 * loader probe start only when the program creates a thread of its own
 * (pthread_create, below) or a thread other than the main one first
 * reaches the agent (threads.c: threads made by glibc itself or by clone).
 * Until then agent_safe_point() does their work from the program's own
 * thread, at the slow path of its allocations. palloc(7) says so.
 */
void agent_program_threaded(void)
{
	if (__atomic_load_n(&agent_mode, __ATOMIC_ACQUIRE) != AGENT_ON) {
		__atomic_store_n(&ag.want_threads, true, __ATOMIC_RELEASE);
		return;
	}
	if (agent_attached)
		return; /* attached: no thread of the agent's, ever */
	if (__atomic_exchange_n(&ag.threaded, true, __ATOMIC_ACQ_REL))
		return;
	agent_guard_enter();
	start_interval_thread();
	start_peak_thread();
	agent_pressure_start_thread();
	if (__atomic_load_n(&loader_unsafe, __ATOMIC_ACQUIRE))
		start_loader_probe();
	if (control_start_thread && control_start_thread() < 0)
		fmt_warn("control socket served from allocations only: %s",
			 msg_last());
	agent_guard_leave();
}

void agent_safe_point(void)
{
	uint64_t now;
	bool pressure;

	if (agent_attached)
		attach_safe_point();
	if (__atomic_load_n(&ag.threaded, __ATOMIC_RELAXED)) {
		agent_pressure_threaded(agent_tls.bytes_base - agent_tls.left);
		return;
	}
	if (control_serve_inline)
		control_serve_inline();
	pressure = agent_pressure_on();
	if (!pressure && !agent_cfg.interval_ns &&
	    !(agent_cfg.peak && agent_cfg.rate))
		return;
	now = agent_now_ns();
	if (pressure)
		agent_pressure_safe_point(now, agent_tls.bytes_base -
						       agent_tls.left);
	if (agent_cfg.interval_ns && now >= ag.next_interval_ns) {
		ag.next_interval_ns = now + agent_cfg.interval_ns;
		if (dump(NULL, false, NULL, 0) < 0 && errno != ESHUTDOWN)
			fmt_warn("periodic profile not written: %s",
				 msg_last());
	}
	if (agent_cfg.peak && agent_cfg.rate && now >= ag.next_peak_ns) {
		ag.next_peak_ns = now + 1000000000u;
		peak_maybe_write(false);
	}
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
				 void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;

static void resolve_pthread_create(void)
{
	pthread_create_fn f;

	if (__atomic_load_n(&real_pthread_create, __ATOMIC_ACQUIRE))
		return;
	agent_guard_enter(); /* dlsym may calloc */
	f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	agent_guard_leave();
	__atomic_store_n(&real_pthread_create, f, __ATOMIC_RELEASE);
}

/* The program's threads start the agent's first (their calls come with
 * the guard clear; the agent's own, guarded, pass straight on). */
PALLOC_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
				 void *(*fn)(void *), void *arg)
{
	resolve_pthread_create();
	if (!real_pthread_create)
		return EAGAIN;
	if (!agent_tls.guard)
		agent_program_threaded();
	return real_pthread_create(th, attr, fn, arg);
}

/* ---- start and exit ---- */

/* The status exit() or _exit() was given, when the agent saw it. */
static int exit_status;

static void exit_dump(void)
{

	if (agent_mode != AGENT_ON ||
	    __atomic_exchange_n(&ag.exit_done, 1, __ATOMIC_ACQ_REL))
		return;
	agent_guard_enter();
	__atomic_store_n(&ag.interval_stop, 1, __ATOMIC_RELEASE);
	if (control_stop)
		control_stop();
	agent_get_unseen(&exit_unseen);
	exit_unseen_taken = true;
	/* The record first: it is final even if the profile is not. The
	 * allocator's figures (no profile shows them) only in a record that
	 * stays: palloc-run's, or one whose exit profile failed. */
	agent_threads_sync_all();
	if (record_kept_for_run())
		record_allocator_snapshot();
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
	if (agent_cfg.peak && agent_cfg.rate)
		peak_maybe_write(true);
	if (dump(NULL, true, NULL, 0) < 0) {
		fmt_warn("profile not written: %s", msg_last());
		if (!record_kept_for_run())
			record_allocator_snapshot();
	} else {
		record_remove(); /* LD_PRELOAD alone: nothing left behind */
	}
	if (exit_unseen.most && !agent_output_channel()) {
		char text[512];

		/* Under palloc-run, it prints this beside the summary. */
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
	    !agent_tls.guard && getpid() == ag.pid) {
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
	ag.pid = getpid();
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
	/* Rate 1 samples every block: every free looks (stacktab.h). */
	if (agent_cfg.rate == 1) {
		stacktab_all_live(&agent_tab);
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
	if (attached)
		return;
	if (control_start)
		control_start();
	if (__atomic_load_n(&ag.want_threads, __ATOMIC_ACQUIRE))
		agent_program_threaded();
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
	agent_guard_leave();
	agent_resolve_real();
	if (agent_mode != AGENT_OFF)
		return;
	real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	resolve_pthread_create();
	agent_guard_enter();
	agent_start(false);
	agent_guard_leave();
}
