/* SPDX-License-Identifier: MIT */
/* Stack unwinders: bounded frame-pointer walk, libunwind, and auto. */
#include "common.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "msg.h"
#include "unwind.h"
#include "sys.h"

/*
 * Set once by unwind_init() before the hooks go live, then only read: a
 * plain global is enough (no thread writes it while others unwind).
 */
static enum unwind_mode unwind_cur = UNWIND_AUTO;

/*
 * The readable memory around this thread's stack, for the fp walk: the
 * kernel VMA holding the stack pointer, from /proc/self/maps. Any address
 * in [lo, hi) can be read without a fault, so a walk that only moves up
 * inside it cannot crash however wrong the saved frame pointers are.
 * The main thread's stack VMA grows down: a stack pointer below lo makes
 * the next walk read the maps again. lo == hi == 0: not read yet.
 *
 * Why not pthread_getattr_np(): it takes the thread's own descriptor lock
 * and then mallocs (fopen of /proc/self/maps for the main thread); a
 * program that calls it itself (Rust's runtime does at start-up) would
 * re-enter it from our malloc hook and deadlock on that lock.
 */
struct unwind_stack {
	uintptr_t lo;
	uintptr_t hi;
};

static __thread struct unwind_stack unwind_stack_tls
	__attribute__((tls_model("initial-exec")));

/* The modes' names, as PALLOC_UNWIND and palloc-run --unwind take them. */
static const char *const mode_names[] = {
	[UNWIND_FP] = "fp", [UNWIND_DWARF] = "dwarf", [UNWIND_AUTO] = "auto"};

int unwind_parse_mode(const char *s, enum unwind_mode *out)
{
	for (size_t m = 0; m < ARRAY_SIZE(mode_names); m++)
		if (!strcmp(s, mode_names[m])) {
			*out = (enum unwind_mode)m;
			return 0;
		}
	return msg_set("unknown unwinder '%s': expected fp, dwarf or auto", s);
}

const char *unwind_mode_name(enum unwind_mode m)
{
	return (size_t)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "unknown";
}

/*
 * Each line of /proc/self/maps starts "lo-hi " in hex; a line may straddle
 * two reads, so the parser is a small state machine over the bytes.
 */
int unwind_find_vma(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	char buf[4096];
	uintptr_t start = 0, end = 0;
	int state = 0; /* 0: start, 1: end, 2: rest of line */
	int found = -1;
	ssize_t n;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (found < 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char c = buf[i];
			unsigned d;

			if (c == '\n') {
				state = 0;
				start = end = 0;
				continue;
			}
			if (state == 2)
				continue;
			if (c >= '0' && c <= '9')
				d = (unsigned)(c - '0');
			else if (c >= 'a' && c <= 'f')
				d = (unsigned)(c - 'a' + 10);
			else
				d = 16;
			if (d < 16 && state == 0) {
				start = start << 4 | d;
			} else if (d < 16) {
				end = end << 4 | d;
			} else if (c == '-' && state == 0) {
				state = 1;
			} else {
				state = 2;
				if (addr >= start && addr < end) {
					*lo = start;
					*hi = end;
					found = 0;
					break;
				}
			}
		}
	}
	close(fd);
	return found;
}

/*
 * Make sure unwind_stack_tls covers sp. Returns false when the stack is
 * unknown (no /proc, or sp in no VMA).
 */
static bool unwind_stack_covers(uintptr_t sp)
{
	struct unwind_stack *st = &unwind_stack_tls;

	if (likely(sp >= st->lo && sp < st->hi))
		return true;
	if (unwind_find_vma(sp, &st->lo, &st->hi) < 0) {
		st->lo = st->hi = 0;
		return false;
	}
	return true;
}

/*
 * One frame a walk found, at return address pc: counted in *walked (the
 * walks stop at UNWIND_MAX_FRAMES), then dropped while *skip lasts
 * (decremented), else stored at pcs[*n] (*n incremented; the caller
 * checks *n < max first). Inlined into both walks; async-signal-safe.
 */
static inline __attribute__((always_inline)) void
frame_keep(uintptr_t *pcs, size_t *n, size_t *walked, unsigned *skip,
	   uintptr_t pc)
{
	(*walked)++;
	if (*skip > 0)
		(*skip)--;
	else
		pcs[(*n)++] = pc;
}

/*
 * The frame-pointer walk, inlined into unwind_backtrace() so that frame 0
 * is unwind_backtrace()'s own frame, which always has a frame pointer
 * (__builtin_frame_address forces one): its saved rbp and return address
 * are always valid. Every later frame is checked before it is read:
 * 16-byte record inside the stack VMA, 8-byte aligned, strictly above the
 * previous one (the stack grows down, so callers are above callees: this
 * also bounds the loop), and a non-null return address outside the stack.
 */
static inline __attribute__((always_inline)) size_t
unwind_fp(uintptr_t *pcs, size_t max, unsigned skip)
{
	const uintptr_t *fp = __builtin_frame_address(0);
	const struct unwind_stack *st = &unwind_stack_tls;
	size_t n = 0, walked = 0;
	bool known;

	known = unwind_stack_covers((uintptr_t)fp);
	while (n < max && walked < UNWIND_MAX_FRAMES) {
		uintptr_t next = fp[0], ra = fp[1];

		if (ra < 4096 || (known && ra >= st->lo && ra < st->hi))
			break;
		frame_keep(pcs, &n, &walked, &skip, ra);
		if (!known || next <= (uintptr_t)fp || (next & 7) != 0 ||
		    next > st->hi - 2 * sizeof(uintptr_t))
			break;
		fp = (const uintptr_t *)next;
	}
	return n;
}

/*
 * libunwind's unw_step loop. The cursor starts at unwind_backtrace()'s
 * frame (unw_getcontext is called from there, since this is inlined); each
 * step moves to the caller and reads its resume address, which for a call
 * is the return address. The context is our own, not a signal context, so
 * unw_init_local (not unw_init_local2 with UNW_INIT_SIGNAL_FRAME) is right.
 */
static inline __attribute__((always_inline)) size_t
unwind_dwarf(uintptr_t *pcs, size_t max, unsigned skip)
{
	unw_context_t uc;
	unw_cursor_t cur;
	size_t n = 0, walked = 0;

	if (unw_getcontext(&uc) < 0 || unw_init_local(&cur, &uc) < 0)
		return 0;
	while (n < max && walked < UNWIND_MAX_FRAMES && unw_step(&cur) > 0) {
		unw_word_t ip;

		if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0)
			break;
		frame_keep(pcs, &n, &walked, &skip, ip);
	}
	return n;
}

/*
 * unw_backtrace(): libunwind's fast trace (x86_64 tdep_trace, with its
 * per-thread hash of frame shapes keyed by address; mmap-backed) that
 * falls back to unw_step itself on frames it cannot describe. Its first
 * entry is the address in its caller, unwind_backtrace(): dropped with the
 * skipped ones. It returns exact return addresses (libunwind 1.6; checked
 * by t/unit/unwind). It writes straight into pcs (void * and uintptr_t
 * have one representation on every Linux ABI): a local buffer would add
 * 2 KiB to a frame that runs inside malloc on threads with small stacks.
 * The price: when the walk fills pcs, its last skip + 1 slots are lost.
 */
static inline __attribute__((always_inline)) size_t
unwind_fast(uintptr_t *pcs, size_t max, unsigned skip)
{
	size_t want, got, drop = (size_t)skip + 1;
	int r;

	want = max < UNWIND_MAX_FRAMES ? max : UNWIND_MAX_FRAMES;
	r = unw_backtrace((void **)pcs, (int)want);
	got = r > 0 ? (size_t)r : 0;
	if (got <= drop)
		return 0;
	memmove(pcs, pcs + drop, (got - drop) * sizeof(*pcs));
	return got - drop;
}

static bool unwind_lib_ready_slow(void);

/* libunwind set up by unwind_lib_setup(): 0 not yet, 1 done, -1 failed. */
static int unwind_lib_state;

/* Is libunwind usable? Sets it up on the process's first walk. */
static inline bool unwind_lib_ready(void)
{
	int s = __atomic_load_n(&unwind_lib_state, __ATOMIC_ACQUIRE);

	if (likely(s > 0))
		return true;
	return s == 0 && unwind_lib_ready_slow();
}

__attribute__((noinline)) size_t unwind_backtrace(uintptr_t *pcs, size_t max,
						  unsigned skip)
{
	enum unwind_mode mode = __atomic_load_n(&unwind_cur, __ATOMIC_RELAXED);
	size_t n;

	if (max == 0)
		return 0;
	/* libunwind could not be set up: frame pointers, as unwind_init()
	 * once fell back to. */
	if (mode != UNWIND_FP && unlikely(!unwind_lib_ready()))
		mode = UNWIND_FP;
	switch (mode) {
	case UNWIND_FP:
		n = unwind_fp(pcs, max, skip);
		break;
	case UNWIND_DWARF:
		n = unwind_dwarf(pcs, max, skip);
		break;
	case UNWIND_AUTO:
	default:
		n = unwind_fast(pcs, max, skip);
		if (n == 0)
			n = unwind_dwarf(pcs, max, skip);
		break;
	}
	while (n > 0 && pcs[n - 1] == 0)
		n--;
	/* Keeps this frame alive: no tail call may drop it from a walk. */
	__asm__ volatile("" ::: "memory");
	return n;
}

/*
 * libunwind validates memory through a pipe: in libunwind 1.6.2
 * (src/x86_64/Ginit.c), access_mem() checks an address when the cursor
 * asks -- every read of unw_step() with CONSERVATIVE_CHECKS (the default,
 * Debian's build; src/x86_64/Gstep.c), frames the fast trace can only
 * guess (UNW_X86_64_FRAME_GUESSED in src/x86_64/Gtrace.c), the
 * frame-chain fallback -- by validate_mem() -> mincore_validate() ->
 * write_validate(), which reads one byte from mem_validate_pipe[0] and
 * writes the address's first byte to mem_validate_pipe[1]. open_pipe()
 * makes that pipe when libunwind initialises, on the lowest free numbers
 * (3 and 4 in a fresh process), and libunwind keeps the numbers: a
 * program that closes its descriptors and opens files that get them has
 * its input eaten and raw memory written into its output, and a read error
 * makes open_pipe() close both numbers, whoever owns them by then. Moving
 * the pipe high would not help: programs close all descriptors, and the
 * numbers libunwind holds would then name the program's files again.
 *
 * So no validation may reach that pipe. unw_get_accessors() returns the
 * very table libunwind calls through (dwarf_get() in
 * include/tdep-x86_64/libunwind_i.h, is_plt_entry() in Gstep.c; the fast
 * trace reads without access_mem unless it validates), and validate_mem()
 * has no other caller: the agent puts its own access_mem there, which
 * validates without any descriptor and reads through it
 * (process_vm_readv(2) on itself: EFAULT when unreadable; where a sandbox
 * refuses that call, rt_sigprocmask(2) with an invalid `how`, which copies
 * the 8-byte set in first, EFAULT or EINVAL with nothing changed). It
 * validates every read, asked or not (the request is a private bit of
 * libunwind's as_arg), with a per-thread cache of the pages last found
 * readable, as libunwind's own (NLGA = 4). The pipe libunwind made at
 * initialisation, which nothing uses after that, is then closed.
 */
#define UNWIND_PAGE ((uintptr_t)4096)
#define UNWIND_GOOD_PAGES 4

static __thread uintptr_t unwind_good[UNWIND_GOOD_PAGES]
	__attribute__((tls_model("initial-exec")));
static __thread unsigned unwind_good_next
	__attribute__((tls_model("initial-exec")));

/* Copy 8 bytes from addr, or return false when it is not readable. */
static bool unwind_read_checked(uintptr_t addr, unw_word_t *val)
{
	struct iovec local = {val, sizeof(*val)};
	struct iovec remote = {(void *)addr, sizeof(*val)};
	int saved = errno;
	long r;

	r = syscall(SYS_process_vm_readv, (long)sys_getpid(), &local, 1L,
		    &remote, 1L, 0L);
	if (r == (long)sizeof(*val)) {
		errno = saved;
		return true;
	}
	if (r < 0 && errno != EFAULT && errno != ESRCH) {
		/* refused (seccomp, old kernel): the sigprocmask probe */
		r = syscall(SYS_rt_sigprocmask, -1L, (void *)addr, NULL,
			    (long)sizeof(*val));
		if (!(r < 0 && errno == EFAULT)) {
			memcpy(val, (const void *)addr, sizeof(*val));
			errno = saved;
			return true;
		}
	}
	errno = saved;
	return false;
}

static int unwind_access_mem(unw_addr_space_t as PALLOC_UNUSED, unw_word_t addr,
			     unw_word_t *val, int write,
			     void *arg PALLOC_UNUSED)
{
	uintptr_t lo = (uintptr_t)addr & ~(UNWIND_PAGE - 1);
	uintptr_t hi =
		((uintptr_t)addr + sizeof(*val) - 1) & ~(UNWIND_PAGE - 1);
	bool lo_ok = false, hi_ok = false;

	if (write) {
		/* only unw_set_reg/unw_resume write; the agent calls neither */
		memcpy((void *)addr, val, sizeof(*val));
		return 0;
	}
	if (lo == 0)
		return -UNW_EINVAL;
	for (unsigned i = 0; i < UNWIND_GOOD_PAGES; i++) {
		lo_ok |= unwind_good[i] == lo;
		hi_ok |= unwind_good[i] == hi;
	}
	if (lo_ok && hi_ok) {
		memcpy(val, (const void *)addr, sizeof(*val));
		return 0;
	}
	if (!unwind_read_checked(addr, val))
		return -UNW_EINVAL;
	unwind_good[unwind_good_next++ % UNWIND_GOOD_PAGES] = lo;
	if (hi != lo)
		unwind_good[unwind_good_next++ % UNWIND_GOOD_PAGES] = hi;
	return 0;
}

/* Whether r and w are the two ends of one pipe as libunwind's open_pipe()
 * makes it: pipe2(O_CLOEXEC | O_NONBLOCK). */
static bool unwind_is_validate_pipe(int r, int w)
{
	struct stat sr, sw;
	int fr = fcntl(r, F_GETFL), fw = fcntl(w, F_GETFL);

	return fstat(r, &sr) == 0 && fstat(w, &sw) == 0 &&
	       S_ISFIFO(sr.st_mode) && sr.st_dev == sw.st_dev &&
	       sr.st_ino == sw.st_ino && fr >= 0 && fw >= 0 &&
	       (fr & O_ACCMODE) == O_RDONLY && (fw & O_ACCMODE) == O_WRONLY &&
	       (fr & O_NONBLOCK) && (fw & O_NONBLOCK) &&
	       (fcntl(r, F_GETFD) & FD_CLOEXEC) &&
	       (fcntl(w, F_GETFD) & FD_CLOEXEC);
}

/*
 * Initialise libunwind (unw_get_accessors() runs its tdep_init()), put the
 * agent's access_mem in place and close the validation pipe it opened. Its
 * numbers are the two lowest free ones, found first with a pipe of our
 * own: if another thread took them meanwhile, or libunwind was initialised
 * before (it then made no pipe now), the check fails and nothing is
 * closed. Then per-thread caches: no lock shared between threads on the
 * unwind path (the global cache takes one, with signals masked, per
 * step). Once per process (unwind_lib_once).
 */
static void unwind_lib_setup(void)
{
	unw_accessors_t *acc;
	int p[2];
	bool probed;

	probed = pipe2(p, O_CLOEXEC) == 0;
	if (probed) {
		close(p[0]);
		close(p[1]);
	}
	acc = unw_get_accessors(unw_local_addr_space);
	if (acc)
		__atomic_store_n(&acc->access_mem, unwind_access_mem,
				 __ATOMIC_RELEASE);
	if (probed && unwind_is_validate_pipe(p[0], p[1])) {
		close(p[0]);
		close(p[1]);
	}
	__atomic_store_n(&unwind_lib_state,
			 unw_set_caching_policy(unw_local_addr_space,
						UNW_CACHE_PER_THREAD) < 0
				 ? -1
				 : 1,
			 __ATOMIC_RELEASE);
}

/*
 * Not at unwind_init() but at the first walk (170,000 instructions of
 * every process's start, /bin/true's: libunwind's initialisation clears
 * its global cache, the first walk maps and fills the fast trace's hash of
 * frame shapes). The first walk runs inside a sample, as the first walk
 * of every thread always has: under the agent's guard (calls into the
 * allocator from libunwind pass through, uncounted, before the thread is
 * "warm"), inside hooks.c's fork fence (no fork while a thread is in
 * here), with no agent lock held. pthread_once makes the other threads
 * wait for the one setting up, allocates nothing and is fork-safe. The
 * pipe libunwind makes here lives for the few instructions until it is
 * closed, as it did at start; where no descriptor is left (EMFILE),
 * libunwind makes none and the check finds none.
 */
static __attribute__((noinline, cold)) bool unwind_lib_ready_slow(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, unwind_lib_setup);
	return __atomic_load_n(&unwind_lib_state, __ATOMIC_ACQUIRE) > 0;
}

int unwind_init(enum unwind_mode mode)
{
	if (mode != UNWIND_FP && mode != UNWIND_DWARF && mode != UNWIND_AUTO)
		return msg_set("unknown unwinder mode %d", (int)mode);
	unwind_cur = mode;
	return 0;
}
