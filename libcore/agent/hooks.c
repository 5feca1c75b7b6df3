/* SPDX-License-Identifier: MIT */
/* The interposer: the malloc family and C++ new/delete, hot paths and sampling.
 */
#include "agent_int.h"
#include "fmt.h"
#include "phdr.h"
#include "sampler.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/*
 * Hot paths. An allocation that is not sampled costs, on top of the real
 * allocator: one TLS guard test, a compare and subtract of the thread's
 * byte countdown, three thread-local adds (the exact counters) and an
 * indirect call. A free costs a NULL test, one 64-bit TLS test (the guard
 * and the thread's slow_free flag together), one thread-local add and one
 * relaxed load from the live-block filter (stacktab.h) that says whether
 * the pointer can be a sampled one, or a block of the bootstrap buffer
 * (marked there too, so the range check is off the fast path). No lock,
 * no syscall, no atomic read-modify-write, no libunwind: those happen only
 * for sampled allocations, for frees whose filter slot is non-zero, in
 * exact mode and on a thread's first call. (callgrind, malloc(32)+free
 * pairs: 16 instructions on the free path instead of 26 before.)
 */

/* In .tdata: every thread starts with slow_free set (see on_free). */
__thread struct agent_thread agent_tls
	__attribute__((tls_model("initial-exec"))) = {.slow_free = 1};

/* ---- the real functions, and the bootstrap before they are known ---- */

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*free_sized_fn)(void *, size_t);
typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);
typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);
typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_al_fn)(void *, size_t);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*del_nt_fn)(void *, const void *);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

static void *stub_malloc(size_t n);
static void stub_free(void *p);
static void *stub_calloc(size_t n, size_t size);
static void *stub_realloc(void *p, size_t n);

/*
 * Until agent_resolve_real() has run, the required pointers lead to stubs
 * that resolve first (or, while dlsym itself allocates, serve from the
 * bootstrap buffer), so the hot paths never test for NULL.
 */
static struct {
	malloc_fn malloc;
	free_fn free;
	calloc_fn calloc;
	realloc_fn realloc;
	posix_memalign_fn posix_memalign;
	memalign_fn aligned_alloc, memalign;
	malloc_fn valloc, pvalloc;
	free_sized_fn free_sized;
	free_aligned_sized_fn free_aligned_sized;
	/* C++: NULL when no later object defines them (a C program) */
	new_fn znwm, znam;
	new_nt_fn znwm_nt, znam_nt;
	new_al_fn znwm_al, znam_al;
	new_al_nt_fn znwm_al_nt, znam_al_nt;
	del_fn zdlpv, zdapv;
	del_sz_fn zdlpv_sz, zdapv_sz;
	del_nt_fn zdlpv_nt, zdapv_nt;
	del_al_fn zdlpv_al, zdapv_al;
	del_sz_al_fn zdlpv_sz_al, zdapv_sz_al;
	del_al_nt_fn zdlpv_al_nt, zdapv_al_nt;
} real = {
	.malloc = stub_malloc,
	.free = stub_free,
	.calloc = stub_calloc,
	.realloc = stub_realloc,
};

/*
 * dlsym() allocates (its error buffer, via calloc) before we know where
 * the real allocator is. Those few blocks come from here, carry their size
 * in a 16-byte header, and are never passed to the real free.
 */
#define BOOT_SIZE (64 * 1024)
static char boot_buf[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;

static inline bool is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot_buf < BOOT_SIZE;
}

static void *boot_alloc(size_t n, size_t align)
{
	size_t off, total;

	if (align < 16)
		align = 16;
	if (n > BOOT_SIZE || align > 4096) {
		errno = ENOMEM;
		return NULL;
	}
	total = (n + 15) & ~(size_t)15;
	for (;;) {
		size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);

		off = (used + 16 + align - 1) & ~(align - 1);
		if (off + total > BOOT_SIZE) {
			errno = ENOMEM;
			return NULL;
		}
		if (__atomic_compare_exchange_n(&boot_used, &used, off + total,
						false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	*(size_t *)(boot_buf + off - 16) = n;
	return boot_buf + off; /* static storage: already zero */
}

static size_t boot_size(const void *p)
{
	return *(const size_t *)((const char *)p - 16);
}

void agent_boot_mark(void)
{
	size_t used = __atomic_load_n(&boot_used, __ATOMIC_ACQUIRE);

	/*
	 * Every block boot_alloc() returns starts at a multiple of 16 inside
	 * [boot_buf, boot_buf + used): mark each such address's filter slot
	 * (a few dozen; at most 4096 slots, 6 % of the filter, if dlsym
	 * filled the whole buffer). Called while no sampled block can be
	 * added concurrently (resolution, fork child), so marking without
	 * the lock does not race with stacktab's updates under it.
	 * The marks are never removed: a sampled block or a free that
	 * hashes to a marked slot only takes the slow path.
	 */
	for (size_t off = 16; off < used; off += 16)
		stacktab_mark(&agent_tab, (uintptr_t)(boot_buf + off));
}

static int resolve_state; /* 0 not yet, 1 in progress, 2 done */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

/* Does f lie in the agent's own object? */
static bool is_self(void *f)
{
	Dl_info a, b;

	return dladdr(f, &a) && dladdr((void *)&is_self, &b) &&
	       a.dli_fbase == b.dli_fbase;
}

static void *next_sym(const char *name, bool required)
{
	void *f = dlsym(RTLD_NEXT, name);

	/*
	 * Nothing after the agent: it was preloaded after the allocator
	 * (LD_PRELOAD=libc.so.6:libpalloc.so, or jemalloc first). Then the
	 * program's calls never reach the agent anyway; use the first
	 * definition, which is not ours (agent_init warns).
	 */
	if (!f) {
		f = dlsym(RTLD_DEFAULT, name);
		if (f && is_self(f))
			f = NULL;
	}
	if (!f && required) {
		fmt_warn("cannot find the real '%s' after the agent in the "
			 "symbol search order; exiting",
			 name);
		_exit(127);
	}
	return f;
}

void agent_resolve_real(void)
{
	int zero = 0, saved;
	struct agent_thread *t = &agent_tls;

	if (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) == 2 || resolving)
		return;
	if (!__atomic_compare_exchange_n(&resolve_state, &zero, 1, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		/* Another thread resolves: wait for it (it holds the loader
		 * lock for microseconds). */
		while (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	saved = errno;
	resolving = true;
	t->guard++;
	t->quiet++;
	{
		malloc_fn m = (malloc_fn)next_sym("malloc", true);
		free_fn f = (free_fn)next_sym("free", true);
		calloc_fn c = (calloc_fn)next_sym("calloc", true);
		realloc_fn r = (realloc_fn)next_sym("realloc", true);

		real.posix_memalign =
			(posix_memalign_fn)next_sym("posix_memalign", false);
		real.aligned_alloc =
			(memalign_fn)next_sym("aligned_alloc", false);
		real.memalign = (memalign_fn)next_sym("memalign", false);
		real.valloc = (malloc_fn)next_sym("valloc", false);
		real.pvalloc = (malloc_fn)next_sym("pvalloc", false);
		real.free_sized = (free_sized_fn)next_sym("free_sized", false);
		real.free_aligned_sized = (free_aligned_sized_fn)next_sym(
			"free_aligned_sized", false);
		real.znwm = (new_fn)next_sym("_Znwm", false);
		real.znam = (new_fn)next_sym("_Znam", false);
		real.znwm_nt =
			(new_nt_fn)next_sym("_ZnwmRKSt9nothrow_t", false);
		real.znam_nt =
			(new_nt_fn)next_sym("_ZnamRKSt9nothrow_t", false);
		real.znwm_al =
			(new_al_fn)next_sym("_ZnwmSt11align_val_t", false);
		real.znam_al =
			(new_al_fn)next_sym("_ZnamSt11align_val_t", false);
		real.znwm_al_nt = (new_al_nt_fn)next_sym(
			"_ZnwmSt11align_val_tRKSt9nothrow_t", false);
		real.znam_al_nt = (new_al_nt_fn)next_sym(
			"_ZnamSt11align_val_tRKSt9nothrow_t", false);
		real.zdlpv = (del_fn)next_sym("_ZdlPv", false);
		real.zdapv = (del_fn)next_sym("_ZdaPv", false);
		real.zdlpv_sz = (del_sz_fn)next_sym("_ZdlPvm", false);
		real.zdapv_sz = (del_sz_fn)next_sym("_ZdaPvm", false);
		real.zdlpv_nt =
			(del_nt_fn)next_sym("_ZdlPvRKSt9nothrow_t", false);
		real.zdapv_nt =
			(del_nt_fn)next_sym("_ZdaPvRKSt9nothrow_t", false);
		real.zdlpv_al =
			(del_al_fn)next_sym("_ZdlPvSt11align_val_t", false);
		real.zdapv_al =
			(del_al_fn)next_sym("_ZdaPvSt11align_val_t", false);
		real.zdlpv_sz_al =
			(del_sz_al_fn)next_sym("_ZdlPvmSt11align_val_t", false);
		real.zdapv_sz_al =
			(del_sz_al_fn)next_sym("_ZdaPvmSt11align_val_t", false);
		real.zdlpv_al_nt = (del_al_nt_fn)next_sym(
			"_ZdlPvSt11align_val_tRKSt9nothrow_t", false);
		real.zdapv_al_nt = (del_al_nt_fn)next_sym(
			"_ZdaPvSt11align_val_tRKSt9nothrow_t", false);
		/* The four required ones last: until here the stubs serve.
		 * From here on frees of bootstrap blocks reach the hooks'
		 * fast path, which sees them through their filter marks. */
		agent_boot_mark();
		real.calloc = c;
		real.realloc = r;
		real.free = f;
		real.malloc = m;
	}
	t->quiet--;
	t->guard--;
	resolving = false;
	__atomic_store_n(&resolve_state, 2, __ATOMIC_RELEASE);
	errno = saved; /* dlsym may have set it */
}

static void *stub_malloc(size_t n)
{
	agent_resolve_real();
	if (real.malloc == stub_malloc)
		return boot_alloc(n, 16);
	return real.malloc(n);
}

static void stub_free(void *p)
{
	if (is_boot(p) || !p)
		return;
	agent_resolve_real();
	if (real.free != stub_free)
		real.free(p);
}

static void *stub_calloc(size_t n, size_t size)
{
	size_t total;

	agent_resolve_real();
	if (real.calloc != stub_calloc)
		return real.calloc(n, size);
	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return boot_alloc(total, 16);
}

static void *stub_realloc(void *p, size_t n)
{
	void *q;

	agent_resolve_real();
	if (real.realloc != stub_realloc && !is_boot(p))
		return real.realloc(p, n);
	q = real.malloc(n);
	if (q && p)
		memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
	return q;
}

/*
 * Not dlsym(RTLD_DEFAULT, "malloc"): for a non-PIE executable that takes
 * malloc's address (Debian's python3), that is the executable's canonical
 * PLT entry, an undefined symbol with a value, whose calls do reach the
 * agent. What decides is the first object in the search order that
 * defines malloc (phdr_first_definition).
 */
int agent_malloc_definer(struct phdr_definition *def)
{
	if (phdr_first_definition("malloc", def) < 0)
		return 0;
	if (is_self((void *)def->addr))
		return 0;
	return def->is_main ? 1 : 2;
}

void agent_real_free(void *p)
{
	if (!is_boot(p))
		real.free(p);
}

/* ---- threads: registry of per-thread counters ---- */

/*
 * Set the countdown to left and count n more requested bytes, keeping
 * alloc_bytes == bytes_base - left (agent_int.h). The writer half of a
 * seqcount (the kernel's seqcount_t, in C11 fences as in Boehm, "Can
 * seqlocks get along with programming language memory models?", 2012):
 * seq odd, release fence, the stores, seq even with release. Called by
 * the owning thread only, with its guard held (a signal handler's malloc
 * meanwhile would otherwise lower left between our read and our store).
 */
static void count_bytes(struct agent_thread *t, uint64_t n, uint64_t left)
{
	uint64_t base = t->bytes_base + n + left - t->left;
	unsigned seq = t->seq;

	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->bytes_base, base, __ATOMIC_RELAXED);
	__atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
}

/*
 * alloc_bytes of thread t, read from any thread: the reader half of the
 * seqcount. A writer interrupted for good inside count_bytes() (a signal
 * handler that longjmps out of it) leaves seq odd; after 1000 tries the
 * last reading is taken, off by at most one sampling interval.
 */
static uint64_t thread_alloc_bytes(const struct agent_thread *t)
{
	uint64_t base, left;

	for (int i = 0;; i++) {
		unsigned seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

		base = __atomic_load_n(&t->bytes_base, __ATOMIC_RELAXED);
		left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((!(seq & 1) &&
		     __atomic_load_n(&t->seq, __ATOMIC_RELAXED) == seq) ||
		    i >= 1000)
			break;
		if (i >= 10)
			sched_yield();
	}
	return base - left;
}

static struct agent_thread *registry;
/* Counters of threads that have exited (and of pre-fork threads: no). */
static uint64_t gone_alloc_count, gone_free_count, gone_alloc_bytes,
	gone_reentries, gone_samples;
static pthread_key_t thread_key;
static bool thread_key_ok;

/*
 * The key destructor: fold the exiting thread into the sums, unregister.
 * The program's own key destructors (thread caches) still allocate and
 * free after ours, in the same round; so we set the key again and fold in
 * the last round glibc runs (PTHREAD_DESTRUCTOR_ITERATIONS), else those
 * calls would be missing from alloc_count and free_count (t/3017).
 */
static void thread_exit(void *arg)
{
	struct agent_thread *t = arg;

	if (t != &agent_tls || t->state != AGENT_THREAD_LIVE)
		return;
	if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		/* pthread_setspecific may calloc a key page. */
		t->guard++;
		t->quiet++;
		pthread_setspecific(thread_key, t);
		t->quiet--;
		t->guard--;
		return;
	}
	pthread_mutex_lock(&agent_reg_lock);
	gone_alloc_count += t->alloc_count;
	gone_free_count += t->free_count;
	gone_alloc_bytes += t->bytes_base - t->left;
	gone_reentries += t->reentries;
	gone_samples += t->samples;
	if (t->prev)
		t->prev->next = t->next;
	else
		registry = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	t->state = AGENT_THREAD_EXITED;
	pthread_mutex_unlock(&agent_reg_lock);
	/*
	 * The rest of this thread's teardown still allocates and frees
	 * (glibc's own TLS and stack cache). Frees of sampled blocks are still
	 * seen (they do not depend on the thread); allocations are counted in
	 * the now unregistered block, i.e. not at all, and never sampled.
	 */
	t->guard++;
	count_bytes(t, 0, UINT64_MAX);
	t->guard--;
	t->sample_left = UINT64_MAX;
}

int agent_threads_init(void)
{
	if (pthread_key_create(&thread_key, thread_exit) != 0)
		return -1;
	thread_key_ok = true;
	return 0;
}

/*
 * With PALLOC_SEED=N (not 0), thread k of the process (k counted in the
 * order threads first reach the agent's slow path; a fork child goes on
 * counting from its parent's value) draws from the stream seeded by (N, k):
 * a program whose threads allocate the same sequence in the same order
 * then samples the same allocations in every run. Without it, the seed
 * mixes pid, tid, the clock and the TLS address.
 */
static uint64_t seed_serial;

void agent_thread_setup(struct agent_thread *t)
{
	struct timespec ts;
	int saved = errno;

	if (agent_cfg.seed) {
		uint64_t k =
			__atomic_fetch_add(&seed_serial, 1, __ATOMIC_RELAXED);

		t->rng = sampler_seed(agent_cfg.seed, k, 0x9a110c);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t->rng = sampler_seed(
			(uint64_t)getpid() << 32 ^ (uint64_t)gettid(),
			(uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30,
			(uintptr_t)t);
	}
	t->name_time_ns = 0;
	/* Exact mode sends every free to the slow path, for its size. */
	t->slow_free = agent_mode == AGENT_ON && agent_cfg.exact;
	t->guard++;
	if (agent_mode != AGENT_ON) {
		count_bytes(t, 0, UINT64_MAX);
		t->sample_left = UINT64_MAX;
	} else if (agent_cfg.exact) {
		count_bytes(t, 0, 0);
		t->sample_left = sampler_interval(&t->rng, agent_cfg.rate);
	} else {
		count_bytes(t, 0, sampler_interval(&t->rng, agent_cfg.rate));
	}
	t->guard--;
	if (t->state == AGENT_THREAD_NEW) {
		pthread_mutex_lock(&agent_reg_lock);
		t->prev = NULL;
		t->next = registry;
		if (registry)
			registry->prev = t;
		registry = t;
		t->state = AGENT_THREAD_LIVE;
		pthread_mutex_unlock(&agent_reg_lock);
		/* A second thread of the program, not made by the interposed
		 * pthread_create (C11 thrd_create, glibc's own helpers). */
		if (agent_mode == AGENT_ON && !t->agent_thread &&
		    gettid() != getpid())
			agent_program_threaded();
		if (thread_key_ok) {
			/* pthread_setspecific may calloc a key page. */
			t->guard++;
			t->quiet++;
			pthread_setspecific(thread_key, t);
			t->quiet--;
			t->guard--;
		}
	}
	errno = saved;
}

void agent_sum_counters(uint64_t *alloc_count, uint64_t *free_count,
			uint64_t *alloc_bytes, uint64_t *reentries,
			uint64_t *samples)
{
	uint64_t a, f, b, r, s;

	pthread_mutex_lock(&agent_reg_lock);
	a = gone_alloc_count;
	f = gone_free_count;
	b = gone_alloc_bytes;
	r = gone_reentries;
	s = gone_samples;
	for (struct agent_thread *t = registry; t; t = t->next) {
		/* Plain counters written by their owner: a read may be a
		 * moment stale, never torn (aligned 64-bit loads). */
		a += __atomic_load_n(&t->alloc_count, __ATOMIC_RELAXED);
		f += __atomic_load_n(&t->free_count, __ATOMIC_RELAXED);
		b += thread_alloc_bytes(t);
		r += __atomic_load_n(&t->reentries, __ATOMIC_RELAXED);
		s += __atomic_load_n(&t->samples, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&agent_reg_lock);
	*alloc_count = a;
	*free_count = f;
	*alloc_bytes = b;
	*reentries = r;
	*samples = s;
}

void agent_threads_after_fork_child(void)
{
	struct agent_thread *t = &agent_tls;

	/* The other threads do not exist here; their TLS blocks are stale
	 * copies. Start over with the forking thread alone. */
	registry = NULL;
	gone_alloc_count = gone_free_count = gone_alloc_bytes = 0;
	gone_reentries = gone_samples = 0;
	t->alloc_count = t->free_count = 0;
	t->bytes_base = t->left; /* alloc_bytes 0 */
	t->reentries = t->samples = 0;
	t->next = t->prev = NULL;
	if (t->state == AGENT_THREAD_LIVE) {
		registry = t;
		t->state = AGENT_THREAD_LIVE;
	}
	t->name_time_ns = 0;
	if (t->state != AGENT_THREAD_EXITED)
		agent_thread_setup(t);
}

void agent_guard_enter(void)
{
	agent_tls.guard++;
	agent_tls.quiet++;
}

void agent_guard_leave(void)
{
	agent_tls.quiet--;
	agent_tls.guard--;
}

/* ---- sampling ---- */

static uintptr_t self_text_start, self_text_limit;
static bool self_text_known;

/* Learn the agent's own code range, to strip its frames from stacks. */
static void find_self_text(void)
{
	uintptr_t s, l;

	if (phdr_object_text((uintptr_t)&find_self_text, &s, &l) == 0) {
		self_text_start = s;
		self_text_limit = l;
		self_text_known = true;
	}
}

/*
 * The thread name, re-read with prctl(PR_GET_NAME) when the cached copy is
 * more than 10 ms old (coarse clock: a vdso read, no syscall), so a thread
 * that names itself after starting is labelled correctly within 10 ms
 * while a thread sampling at every allocation pays the syscall at most
 * 100 times a second.
 */
static void refresh_name(struct agent_thread *t)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
	if (t->name_time_ns && now - t->name_time_ns < 10000000u)
		return;
	t->name_time_ns = now;
	memset(t->name, 0, sizeof(t->name));
	if (prctl(PR_GET_NAME, t->name, 0, 0, 0) != 0)
		t->name[0] = '\0';
	/* NUL-padded to the end, as stacktab_intern() compares it. */
	for (size_t i = strnlen(t->name, sizeof(t->name)); i < sizeof(t->name);
	     i++)
		t->name[i] = '\0';
}

int agent_fork_pending;

/*
 * unwind_backtrace() fenced against fork: a fork while another thread is
 * inside libunwind hands the child libunwind's locks held for good (the
 * child's first sample then waits for ever). fork_prepare raises
 * agent_fork_pending and waits until no registered thread has its
 * unwinding flag set (agent_threads_unwinding); a sampling thread does not
 * enter while it is raised (Dekker-style: both sides write, then read the
 * other's word, sequentially consistent). The flag is the thread's own:
 * at rate 1 every allocation passes here, and a shared counter's line
 * moved between the CPUs twice per call.
 */
static size_t unwind_fenced(struct agent_thread *t, uintptr_t *pcs, size_t max)
{
	size_t n;

	for (;;) {
		while (__atomic_load_n(&agent_fork_pending, __ATOMIC_SEQ_CST))
			sched_yield();
		__atomic_store_n(&t->unwinding, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&agent_fork_pending, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(&t->unwinding, 0, __ATOMIC_SEQ_CST);
	}
	n = unwind_backtrace(pcs, max, 0);
	__atomic_store_n(&t->unwinding, 0, __ATOMIC_RELEASE);
	return n;
}

bool agent_threads_unwinding(void)
{
	bool any = false;

	pthread_mutex_lock(&agent_reg_lock);
	for (struct agent_thread *t = registry; t && !any; t = t->next)
		any = __atomic_load_n(&t->unwinding, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&agent_reg_lock);
	return any;
}

/*
 * The stack of pcs[0..n) for thread t: the one it found last if that still
 * matches (a loop allocating from one site, at rate 1 on every call: no
 * lock, no hashing, no shared line written), else interned under
 * agent_intern_lock. NULL when the table is full.
 */
static struct stacktab_stack *thread_stack(struct agent_thread *t,
					   const uintptr_t *pcs, size_t n)
{
	struct stacktab_stack *s = t->stack;
	uint32_t gen = __atomic_load_n(&agent_tab.gen, __ATOMIC_ACQUIRE);

	if (s && t->stack_gen == gen && stacktab_matches(s, pcs, n, t->name))
		return s;
	agent_lock(&agent_intern_lock);
	s = stacktab_intern(&agent_tab, pcs, n, t->name);
	gen = agent_tab.gen;
	agent_unlock(&agent_intern_lock);
	t->stack = s;
	t->stack_gen = gen;
	return s;
}

/*
 * Record a sample of stack s (NULL: the table is full) at p: its live
 * entry goes into p's shard under that shard's lock, then the weights,
 * totals and counters change in one short section under agent_tab_lock
 * (stacktab.h, "Threads").
 */
static void record(struct stacktab_stack *s, void *p, size_t size,
		   double objects, double bytes)
{
	struct stacktab_live stale, e = {
					    .ptr = (uintptr_t)p,
					    .size = size,
					    .objects = (float)objects,
					    .stack_id = s ? s->id : 0,
				    };
	struct stacktab_shard *sh = stacktab_shard(&agent_tab, e.ptr);
	int r = -1;

	if (s) {
		agent_lock(&sh->lock);
		r = stacktab_live_put(&agent_tab, &e, &stale);
		agent_unlock(&sh->lock);
	}
	agent_lock(&agent_tab_lock);
	if (r == 1 || r == -2)
		stacktab_inuse_out(&agent_tab, &stale);
	if (r >= 0) {
		stacktab_count_in(&agent_tab, s, &e);
	} else {
		if (s)
			stacktab_count(s, &e);
		agent_dropped++;
		agent_dropped_bytes += bytes;
	}
	agent_unlock(&agent_tab_lock);
}

/* Record one sampled allocation of size bytes at p. Guard held by caller.
 * Inlined into alloc_slow(): one agent frame less for the unwinder to walk
 * and drop (about 100 instructions per sample). */
static inline __attribute__((always_inline)) void sample(struct agent_thread *t,
							 void *p, size_t size)
{
	uintptr_t pcs[UNWIND_MAX_FRAMES];
	size_t n, skip = 0, depth;
	double objects, bytes;

	if (!self_text_known)
		find_self_text();
	n = unwind_fenced(t, pcs, ARRAY_SIZE(pcs));
	while (skip < n && pcs[skip] >= self_text_start &&
	       pcs[skip] < self_text_limit)
		skip++;
	depth = n - skip;
	if (depth > agent_cfg.max_depth)
		depth = agent_cfg.max_depth;
	refresh_name(t);
	sampler_weight(agent_cfg.rate, size, &objects, &bytes);
	t->samples++;
	record(thread_stack(t, pcs + skip, depth), p, size, objects, bytes);
	t->warm = true;
}

static void exact_add(int64_t d)
{
	int64_t now =
		__atomic_add_fetch(&agent_exact_inuse, d, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&agent_exact_peak, __ATOMIC_RELAXED);

	while (now > peak &&
	       !__atomic_compare_exchange_n(&agent_exact_peak, &peak, now, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * The slow half of every allocation: the thread's first call, a sample
 * point reached, exact mode, or the agent not (or no longer) running.
 * Called after the real allocation with its result; errno is preserved.
 * Returns p, so that malloc() can tail-call it: the sampled stack then
 * walks one agent frame less (about 100 instructions of libunwind's).
 */
static __attribute__((noinline)) void *alloc_slow(struct agent_thread *t,
						  void *p, size_t n)
{
	int saved = errno;

	/* The agent takes locks and changes left here: a signal handler
	 * that allocates on this thread meanwhile must not come back in. */
	t->guard++;
	/* Before this allocation is counted: a snapshot taken here shows
	 * the heap as it was before the call. */
	if (agent_mode == AGENT_ON && t->state == AGENT_THREAD_LIVE)
		agent_safe_point();
	t->alloc_count++;
	if (agent_mode != AGENT_ON) {
		count_bytes(t, n,
			    agent_mode == AGENT_DISABLED ? UINT64_MAX
							 : t->left);
		goto out;
	}
	if (t->state == AGENT_THREAD_NEW)
		agent_thread_setup(t);
	if (t->state == AGENT_THREAD_EXITED || !p) {
		count_bytes(t, n, t->left);
		goto out;
	}
	if (agent_cfg.exact) {
		/* left stays 0: every call comes here. */
		exact_add((int64_t)malloc_usable_size(p));
		count_bytes(t, n, 0);
		if (n < t->sample_left) {
			t->sample_left -= n;
			goto out;
		}
		sample(t, p, n);
		t->sample_left = sampler_interval(&t->rng, agent_cfg.rate);
		goto out;
	}
	if (n < t->left) {
		/* As the fast path: lowering left counts the bytes. */
		t->left -= n;
		goto out;
	}
	sample(t, p, n);
	count_bytes(t, n, sampler_interval(&t->rng, agent_cfg.rate));
out:
	t->guard--;
	errno = saved;
	return p;
}

/* Count an allocation of n requested bytes that returned p. */
static inline void on_alloc(struct agent_thread *t, void *p, size_t n)
{
	if (likely(n < t->left)) {
		t->left -= n; /* counts the bytes too (agent_int.h) */
		t->alloc_count++;
		return;
	}
	alloc_slow(t, p, n);
}

/* A guarded call: the agent's own work, or C++ forwarding. */
static inline void on_guarded(struct agent_thread *t)
{
	if (!t->quiet && t->warm && !t->agent_thread)
		t->reentries++;
}

/*
 * The slow half of a free whose filter slot is non-zero: the block may
 * be a sampled one. If e is not NULL the removed entry is copied there
 * (realloc restores it on failure). Exact mode's size accounting is the
 * caller's (realloc subtracts the old size only once the call succeeded).
 */
static __attribute__((noinline)) bool free_slow(void *p,
						struct stacktab_live *e)
{
	struct agent_thread *t = &agent_tls;
	int saved = errno;
	bool found = false;

	/* A child forked inside the agent (fork_child) stays out of the
	 * tables and their lock. */
	if (agent_mode != AGENT_DISABLED &&
	    stacktab_maybe_live(&agent_tab, (uintptr_t)p)) {
		/* A signal handler's free meanwhile must not relock. */
		struct stacktab_shard *sh =
			stacktab_shard(&agent_tab, (uintptr_t)p);
		struct stacktab_live out;

		t->guard++;
		agent_lock(&sh->lock);
		found = stacktab_live_take(&agent_tab, (uintptr_t)p, &out);
		agent_unlock(&sh->lock);
		if (found) {
			agent_lock(&agent_tab_lock);
			stacktab_inuse_out(&agent_tab, &out);
			agent_unlock(&agent_tab_lock);
			if (e)
				*e = out;
		}
		t->guard--;
	}
	errno = saved;
	return found;
}

/* Put back the entry free_slow() took from a block a failed realloc
 * keeps; a drop if there is no memory for it. Guard held by the caller. */
static void agent_restore(const struct stacktab_live *e)
{
	struct stacktab_shard *sh = stacktab_shard(&agent_tab, e->ptr);
	struct stacktab_live stale;
	int r;

	agent_lock(&sh->lock);
	r = stacktab_live_put(&agent_tab, e, &stale);
	agent_unlock(&sh->lock);
	agent_lock(&agent_tab_lock);
	if (r == 1 || r == -2)
		stacktab_inuse_out(&agent_tab, &stale);
	if (r < 0)
		agent_dropped++;
	else
		stacktab_inuse_in(&agent_tab, e);
	agent_unlock(&agent_tab_lock);
}

/*
 * A free whose gate (guard or slow_free) is set: the agent's own or a
 * guarded one (forwarded untracked), a thread's first free (register it,
 * so that a thread that only frees is summed too), or exact mode. Returns
 * false when p must not reach the real free (a bootstrap block).
 */
static __attribute__((noinline)) bool free_gated(struct agent_thread *t,
						 void *p)
{
	if (is_boot(p))
		return false;
	if (t->guard)
		return true;
	if (t->state == AGENT_THREAD_NEW) {
		int mode = __atomic_load_n(&agent_mode, __ATOMIC_ACQUIRE);

		if (mode == AGENT_ON) {
			t->guard++;
			agent_thread_setup(t); /* sets slow_free */
			t->guard--;
		} else if (mode == AGENT_DISABLED) {
			t->slow_free = 0;
		}
		/* AGENT_OFF: before init; init registers this thread if it
		 * is the main one, or a later free will. */
	}
	t->free_count++;
	if (agent_cfg.exact && agent_mode == AGENT_ON) {
		int saved = errno;

		exact_add(-(int64_t)malloc_usable_size(p));
		errno = saved;
	}
	if (stacktab_maybe_live(&agent_tab, (uintptr_t)p))
		free_slow(p, NULL);
	return true;
}

/* A free whose filter slot is marked: a sampled block, a bootstrap block,
 * or a collision. Returns false for a bootstrap block (uncounted). */
static __attribute__((noinline)) bool free_marked(struct agent_thread *t,
						  void *p)
{
	if (is_boot(p)) {
		t->free_count--;
		return false;
	}
	free_slow(p, NULL);
	return true;
}

/*
 * Count a free of p (not NULL). Returns false when p must not be passed
 * to the real free (a bootstrap block). The fast path: one 64-bit TLS
 * test, one thread-local add, one filter load.
 */
static inline bool on_free(struct agent_thread *t, void *p)
{
	if (unlikely(t->gate))
		return free_gated(t, p);
	t->free_count++;
	if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return free_marked(t, p);
	return true;
}

/* ---- the C interface ---- */

/*
 * The hot entry points start on a cache line, so that the fast paths of
 * malloc (12 instructions) and free (15) sit in one 64-byte line. At
 * gcc's default 16-byte alignment malloc's straddled two, and the churn
 * loop cost 2 to 4 points more (bench/agent/README.md).
 */
#define HOT_ENTRY __attribute__((aligned(64)))

PALLOC_EXPORT HOT_ENTRY void *malloc(size_t n)
{
	struct agent_thread *t = &agent_tls;
	void *p;

	if (likely(!t->guard && n < t->left)) {
		t->left -= n; /* counts the bytes too (agent_int.h) */
		t->alloc_count++;
		return real.malloc(n);
	}
	if (t->guard) {
		on_guarded(t);
		return real.malloc(n);
	}
	p = real.malloc(n);
	return alloc_slow(t, p, n);
}

/* The cold ends of free(), reached by tail calls so that free() itself
 * needs no stack frame on its fast path. */
static __attribute__((noinline)) void free_gated_release(void *p)
{
	if (free_gated(&agent_tls, p))
		real.free(p);
}

static __attribute__((noinline)) void free_marked_release(void *p)
{
	if (free_marked(&agent_tls, p))
		real.free(p);
}

/* on_free() spelled out with tail calls: see the hot path note above. */
PALLOC_EXPORT HOT_ENTRY void free(void *p)
{
	struct agent_thread *t = &agent_tls;

	if (unlikely(!p))
		return;
	if (unlikely(t->gate))
		return free_gated_release(p);
	t->free_count++;
	if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return free_marked_release(p);
	real.free(p);
}

PALLOC_EXPORT HOT_ENTRY void *calloc(size_t n, size_t size)
{
	struct agent_thread *t = &agent_tls;
	size_t total;
	void *p;

	p = real.calloc(n, size);
	if (unlikely(t->guard)) {
		on_guarded(t);
		return p;
	}
	/* Overflow: the real calloc returned NULL with ENOMEM. */
	if (p && !__builtin_mul_overflow(n, size, &total))
		on_alloc(t, p, total);
	return p;
}

/*
 * realloc is a free of the old block and an allocation of the new one.
 * The old block leaves the live table before the real call (once the
 * real realloc has run, its address may be reused by another thread's
 * sampled malloc) and comes back if the call fails.
 */
static void *realloc_common(void *p, size_t n, size_t elem, bool array)
{
	struct agent_thread *t = &agent_tls;
	struct stacktab_live e;
	bool had = false;
	int64_t old_usable = 0;
	size_t total = n;
	void *q;

	if (array && __builtin_mul_overflow(n, elem, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(is_boot(p))) {
		/* A bootstrap block cannot be resized by the real realloc. */
		q = malloc(total);
		if (q)
			memcpy(q, p,
			       boot_size(p) < total ? boot_size(p) : total);
		return q;
	}
	if (unlikely(t->guard)) {
		on_guarded(t);
		return real.realloc(p, total);
	}
	if (p) {
		if (unlikely(agent_cfg.exact && agent_mode == AGENT_ON))
			old_usable = (int64_t)malloc_usable_size(p);
		if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
			had = free_slow(p, &e);
	}
	/* Never the real reallocarray: glibc's calls realloc through the
	 * PLT, which would count the block twice. */
	q = real.realloc(p, total);
	if (!q && p && total != 0) {
		/* Failed: the old block is still live, as it was. */
		if (had) {
			int saved = errno;

			t->guard++;
			agent_restore(&e);
			t->guard--;
			errno = saved;
		}
		return NULL;
	}
	if (p) {
		t->free_count++;
		if (old_usable)
			exact_add(-old_usable);
	}
	if (q)
		on_alloc(t, q, total);
	return q;
}

PALLOC_EXPORT HOT_ENTRY void *realloc(void *p, size_t n)
{
	return realloc_common(p, n, 1, false);
}

PALLOC_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	return realloc_common(p, n, size, true);
}

/* The common end of the aligned allocators. */
static inline void *aligned_done(struct agent_thread *t, void *p, size_t n)
{
	if (unlikely(t->guard))
		on_guarded(t);
	else if (p)
		on_alloc(t, p, n);
	return p;
}

PALLOC_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	struct agent_thread *t = &agent_tls;
	int rc;

	agent_resolve_real();
	if (!real.posix_memalign) {
		void *p = real.memalign ? real.memalign(align, n) : NULL;

		if (!p)
			return ENOMEM;
		*out = p;
		rc = 0;
	} else {
		rc = real.posix_memalign(out, align, n);
	}
	if (rc == 0)
		aligned_done(t, *out, n);
	return rc;
}

PALLOC_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!real.aligned_alloc) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, real.aligned_alloc(align, n), n);
}

PALLOC_EXPORT void *memalign(size_t align, size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!real.memalign) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, real.memalign(align, n), n);
}

PALLOC_EXPORT void *valloc(size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!real.valloc) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, real.valloc(n), n);
}

PALLOC_EXPORT void *pvalloc(size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!real.pvalloc) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, real.pvalloc(n), n);
}

/* Count a free of p by any of the free variants; false: nothing to do. */
static inline bool free_common(void *p)
{
	if (unlikely(!p))
		return false;
	return on_free(&agent_tls, p);
}

/* C23; glibc declares them from 2.39 only. */
PALLOC_EXPORT void free_sized(void *p, size_t size);
PALLOC_EXPORT void free_aligned_sized(void *p, size_t align, size_t size);

PALLOC_EXPORT void free_sized(void *p, size_t size)
{
	if (!free_common(p))
		return;
	if (real.free_sized)
		real.free_sized(p, size);
	else
		real.free(p);
}

PALLOC_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
	if (!free_common(p))
		return;
	if (real.free_aligned_sized)
		real.free_aligned_sized(p, align, size);
	else
		real.free(p);
}

/* ---- C++ operators new and delete, under their mangled names ---- */

/*
 * Each forwards to the next definition (libstdc++'s, or jemalloc's and
 * tcmalloc's own) with the guard set, so that libstdc++'s operator new,
 * which calls malloc, is not counted twice; the guard is "quiet" (such
 * calls are expected, not reentries). The guard is released by a cleanup
 * handler, which also runs when the real operator new throws bad_alloc
 * through this frame (the agent is built with -fexceptions). In a program
 * with no C++ runtime there is no next definition: the real malloc and
 * free stand in, and a failing throwing new aborts (nothing could catch).
 */
static void quiet_leave(struct agent_thread **t)
{
	(*t)->quiet--;
	(*t)->guard--;
}

#define QUIET_SCOPE(t)                                                         \
	struct agent_thread *quiet_t __attribute__((cleanup(quiet_leave))) =   \
		(t);                                                           \
	quiet_t->guard++;                                                      \
	quiet_t->quiet++

static PALLOC_NORETURN void new_failed(size_t n)
{
	fmt_warn("operator new(%zu) failed and no C++ runtime is loaded to "
		 "throw std::bad_alloc; aborting",
		 n);
	abort();
}

static void *fallback_new(size_t n, size_t align, bool nothrow)
{
	void *p;

	if (align > 16) {
		if (!real.memalign)
			p = NULL;
		else
			p = real.memalign(align, n ? n : 1);
	} else {
		p = real.malloc(n ? n : 1);
	}
	if (!p && !nothrow)
		new_failed(n);
	return p;
}

/* Allocation side: forward, then count (the forward is quiet-guarded). */
#define NEW_BODY(call, n, align, nothrow)                                      \
	struct agent_thread *t = &agent_tls;                                   \
	void *p;                                                               \
	agent_resolve_real();                                                  \
	if (unlikely(t->guard)) {                                              \
		on_guarded(t);                                                 \
		return call;                                                   \
	}                                                                      \
	{                                                                      \
		QUIET_SCOPE(t);                                                \
		p = call;                                                      \
	}                                                                      \
	if (p)                                                                 \
		on_alloc(t, p, n);                                             \
	return p

#define NEW_CALL(fn, args, n, align, nothrow)                                  \
	(real.fn ? real.fn args : fallback_new(n, align, nothrow))

PALLOC_EXPORT void *_Znwm(size_t n);
PALLOC_EXPORT HOT_ENTRY void *_Znwm(size_t n)
{
	NEW_BODY(NEW_CALL(znwm, (n), n, 0, false), n, 0, false);
}

PALLOC_EXPORT void *_Znam(size_t n);
PALLOC_EXPORT HOT_ENTRY void *_Znam(size_t n)
{
	NEW_BODY(NEW_CALL(znam, (n), n, 0, false), n, 0, false);
}

PALLOC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt);
PALLOC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
	NEW_BODY(NEW_CALL(znwm_nt, (n, nt), n, 0, true), n, 0, true);
}

PALLOC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt);
PALLOC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
	NEW_BODY(NEW_CALL(znam_nt, (n, nt), n, 0, true), n, 0, true);
}

PALLOC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al);
PALLOC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
	NEW_BODY(NEW_CALL(znwm_al, (n, al), n, al, false), n, al, false);
}

PALLOC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al);
PALLOC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al)
{
	NEW_BODY(NEW_CALL(znam_al, (n, al), n, al, false), n, al, false);
}

PALLOC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt);
PALLOC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt)
{
	NEW_BODY(NEW_CALL(znwm_al_nt, (n, al, nt), n, al, true), n, al, true);
}

PALLOC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt);
PALLOC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt)
{
	NEW_BODY(NEW_CALL(znam_al_nt, (n, al, nt), n, al, true), n, al, true);
}

/* Release side: count first (before the block can be reused), then
 * forward quietly. */
#define DELETE_BODY(fn, args)                                                  \
	struct agent_thread *t = &agent_tls;                                   \
	agent_resolve_real();                                                  \
	if (unlikely(!p) || unlikely(!on_free(t, p)))                          \
		return;                                                        \
	{                                                                      \
		QUIET_SCOPE(t);                                                \
		if (real.fn)                                                   \
			real.fn args;                                          \
		else                                                           \
			real.free(p);                                          \
	}

PALLOC_EXPORT void _ZdlPv(void *p);
PALLOC_EXPORT HOT_ENTRY void _ZdlPv(void *p)
{
	DELETE_BODY(zdlpv, (p));
}

PALLOC_EXPORT void _ZdaPv(void *p);
PALLOC_EXPORT HOT_ENTRY void _ZdaPv(void *p)
{
	DELETE_BODY(zdapv, (p));
}

PALLOC_EXPORT void _ZdlPvm(void *p, size_t n);
PALLOC_EXPORT HOT_ENTRY void _ZdlPvm(void *p, size_t n)
{
	DELETE_BODY(zdlpv_sz, (p, n));
}

PALLOC_EXPORT void _ZdaPvm(void *p, size_t n);
PALLOC_EXPORT HOT_ENTRY void _ZdaPvm(void *p, size_t n)
{
	DELETE_BODY(zdapv_sz, (p, n));
}

PALLOC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
PALLOC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	DELETE_BODY(zdlpv_nt, (p, nt));
}

PALLOC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
PALLOC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	DELETE_BODY(zdapv_nt, (p, nt));
}

PALLOC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al);
PALLOC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
	DELETE_BODY(zdlpv_al, (p, al));
}

PALLOC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al);
PALLOC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
	DELETE_BODY(zdapv_al, (p, al));
}

PALLOC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al);
PALLOC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	DELETE_BODY(zdlpv_sz_al, (p, n, al));
}

PALLOC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al);
PALLOC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	DELETE_BODY(zdapv_sz_al, (p, n, al));
}

PALLOC_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt);
PALLOC_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt)
{
	DELETE_BODY(zdlpv_al_nt, (p, al, nt));
}

PALLOC_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt);
PALLOC_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt)
{
	DELETE_BODY(zdapv_al_nt, (p, al, nt));
}
