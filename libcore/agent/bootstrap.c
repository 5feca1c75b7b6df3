/* SPDX-License-Identifier: MIT */
/*
 * The real allocator: its functions found after the agent with
 * dlsym(RTLD_NEXT), and the bootstrap buffer that serves the allocations
 * dlsym itself makes meanwhile.
 */
#include "hooks_int.h"
#include "fmt.h"
#include "phdr.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

/*
 * The functions the agent hooks (hooks_int.h): where each real one goes
 * in agent_real, -1 when not there (reallocarray forwards to realloc;
 * dlclose's forwarding extramaps.c finds itself; the loader's functions
 * are hooked through attach.c's stubs).
 */
#define REAL(f) ((int)offsetof(struct agent_real, f))
const struct agent_hook_name agent_hooked[AGENT_N_HOOKED] = {
	{"malloc", REAL(malloc)},
	{"free", REAL(free)},
	{"calloc", REAL(calloc)},
	{"realloc", REAL(realloc)},
	{"reallocarray", -1},
	{"posix_memalign", REAL(posix_memalign)},
	{"aligned_alloc", REAL(aligned_alloc)},
	{"memalign", REAL(memalign)},
	{"valloc", REAL(valloc)},
	{"pvalloc", REAL(pvalloc)},
	{"free_sized", REAL(free_sized)},
	{"free_aligned_sized", REAL(free_aligned_sized)},
	{"_Znwm", REAL(cxx.znwm)},
	{"_Znam", REAL(cxx.znam)},
	{"_ZnwmRKSt9nothrow_t", REAL(cxx.znwm_nt)},
	{"_ZnamRKSt9nothrow_t", REAL(cxx.znam_nt)},
	{"_ZnwmSt11align_val_t", REAL(cxx.znwm_al)},
	{"_ZnamSt11align_val_t", REAL(cxx.znam_al)},
	{"_ZnwmSt11align_val_tRKSt9nothrow_t", REAL(cxx.znwm_al_nt)},
	{"_ZnamSt11align_val_tRKSt9nothrow_t", REAL(cxx.znam_al_nt)},
	{"_ZdlPv", REAL(cxx.zdlpv)},
	{"_ZdaPv", REAL(cxx.zdapv)},
	{"_ZdlPvm", REAL(cxx.zdlpv_sz)},
	{"_ZdaPvm", REAL(cxx.zdapv_sz)},
	{"_ZdlPvRKSt9nothrow_t", REAL(cxx.zdlpv_nt)},
	{"_ZdaPvRKSt9nothrow_t", REAL(cxx.zdapv_nt)},
	{"_ZdlPvSt11align_val_t", REAL(cxx.zdlpv_al)},
	{"_ZdaPvSt11align_val_t", REAL(cxx.zdapv_al)},
	{"_ZdlPvmSt11align_val_t", REAL(cxx.zdlpv_sz_al)},
	{"_ZdaPvmSt11align_val_t", REAL(cxx.zdapv_sz_al)},
	{"_ZdlPvSt11align_val_tRKSt9nothrow_t", REAL(cxx.zdlpv_al_nt)},
	{"_ZdaPvSt11align_val_tRKSt9nothrow_t", REAL(cxx.zdapv_al_nt)},
	{"dlclose", -1},
	/* not exported (a preloaded agent must not interpose them): hooked
	 * through the stubs below */
	{"dlopen", -1},
	{"dlsym", -1},
	{"dlmopen", -1},
	{"dlvsym", -1},
};
#undef REAL
_Static_assert(sizeof(agent_hooked) / sizeof(agent_hooked[0]) == AGENT_N_HOOKED,
	       "AGENT_N_HOOKED counts agent_hooked[]");

static void *stub_malloc(size_t n);
static void stub_free(void *p);
static void *stub_calloc(size_t n, size_t size);
static void *stub_realloc(void *p, size_t n);

struct agent_real agent_real = {
	.malloc = stub_malloc,
	.free = stub_free,
	.calloc = stub_calloc,
	.realloc = stub_realloc,
};

char agent_boot_buf[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;
/* Where the first BOOT_STARTS blocks start (offsets, 0: not yet written),
 * for agent_boot_mark(); boot_nstart counts every block. */
#define BOOT_STARTS 64
static uint32_t boot_start[BOOT_STARTS];
static unsigned boot_nstart;

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
	*(size_t *)(agent_boot_buf + off - 16) = n;
	total = __atomic_fetch_add(&boot_nstart, 1, __ATOMIC_ACQ_REL);
	if (total < BOOT_STARTS)
		__atomic_store_n(&boot_start[total], (uint32_t)off,
				 __ATOMIC_RELEASE);
	return agent_boot_buf + off; /* static storage: already zero */
}

void agent_boot_mark(void)
{
	size_t used = __atomic_load_n(&boot_used, __ATOMIC_ACQUIRE);
	unsigned n = __atomic_load_n(&boot_nstart, __ATOMIC_ACQUIRE);
	uint32_t start[BOOT_STARTS];

	/*
	 * Mark the filter slot of every block boot_alloc() returned: the
	 * blocks recorded in boot_start[] (dlsym's two or three). Called
	 * while no sampled block can be added concurrently (resolution,
	 * fork child), so marking without the lock does not race with
	 * stacktab's updates under it. The marks are never removed: a
	 * sampled block or a free that hashes to a marked slot only takes
	 * the slow path. Each mark writes a count in a 256 KiB table, so
	 * marking every multiple of 16 of the 3 KiB dlsym uses cost some 60
	 * page faults, 0.2 ms of every process's start.
	 */
	for (unsigned i = 0; i < n && n <= BOOT_STARTS; i++) {
		start[i] = __atomic_load_n(&boot_start[i], __ATOMIC_ACQUIRE);
		if (!start[i])
			n = BOOT_STARTS + 1; /* a block being recorded */
	}
	if (n <= BOOT_STARTS) {
		for (unsigned i = 0; i < n; i++)
			stacktab_mark(&agent_tab,
				      (uintptr_t)(agent_boot_buf + start[i]));
		return;
	}
	/* More blocks than recorded: each starts at a multiple of 16 inside
	 * [agent_boot_buf, agent_boot_buf + used), at most 4096 slots. */
	for (size_t off = 16; off < used; off += 16)
		stacktab_mark(&agent_tab, (uintptr_t)(agent_boot_buf + off));
}

static int resolve_state; /* 0 not yet, 1 in progress, 2 done */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

/*
 * The agent's own object spans its ELF header to the end of its .bss (the
 * linker defines both; hidden, they are this object's). Loaded objects do
 * not overlap, so an address in there is the agent's. Not dladdr(): it
 * scans the object's symbol table, 1,500 to 90,000 instructions a call.
 */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char _end[] __attribute__((visibility("hidden")));

/* Does f lie in the agent's own object? */
static bool is_self(void *f)
{
	return (uintptr_t)f >= (uintptr_t)__ehdr_start &&
	       (uintptr_t)f < (uintptr_t)_end;
}

/* Is f in libstdc++ (whose operator new is a loop around malloc, and
 * operator delete free)? */
static bool is_libstdcxx(void *f)
{
	Dl_info a;
	const char *base;

	if (!f || !dladdr(f, &a) || !a.dli_fname)
		return false;
	base = strrchr(a.dli_fname, '/');
	base = base ? base + 1 : a.dli_fname;
	return strncmp(base, "libstdc++.so", 12) == 0;
}

/* Is the first definition of name in the symbol search order the
 * agent's (the one the program and libstdc++ call)? */
static bool first_is_self(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	return f && is_self(f);
}

bool agent_preloaded;
/* malloc was found after the agent (the usual order): set by the first
 * next_sym(), that of malloc. */
static bool allocator_after;

static void *next_sym(const char *name, bool required)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (required && f)
		allocator_after = true;
	/*
	 * Nothing after the agent: it was preloaded after the allocator
	 * (LD_PRELOAD=libc.so.6:libpalloc.so, or jemalloc first). Then the
	 * program's calls never reach the agent anyway; use the first
	 * definition, which is not ours (agent_init warns). An optional one
	 * (free_sized, operator new) missing after the allocator of a
	 * preloaded agent: any definition before the agent takes the
	 * program's calls itself, the agent's is the first or unreached
	 * (the lookup, 1,200 instructions each, is not made). Dlopened by
	 * palloc-run -p, RTLD_NEXT sees only the agent's own dependencies:
	 * libstdc++'s operator new is found by the second lookup.
	 */
	if (!f && (required || !allocator_after || !agent_preloaded)) {
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

/* The optional ones of agent_hooked[FROM, TO): after the agent, else
 * anywhere else, else NULL. */
static void resolve_optional(size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		void *f;

		if (agent_hooked[i].real < 0)
			continue;
		f = next_sym(agent_hooked[i].name, false);
		memcpy((char *)&agent_real + agent_hooked[i].real, &f,
		       sizeof(f));
	}
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
	guard_enter(t);
	t->quiet++;
	{
		malloc_fn m = (malloc_fn)next_sym("malloc", true);
		free_fn f = (free_fn)next_sym("free", true);
		calloc_fn c = (calloc_fn)next_sym("calloc", true);
		realloc_fn r = (realloc_fn)next_sym("realloc", true);

		/* the allocator's others, and _Znwm */
		resolve_optional(AGENT_N_REQUIRED, AGENT_I_ZNWM + 1);
		/*
		 * No operator new anywhere but the agent's: no C++ runtime is
		 * loaded (a C program), and every C++ runtime or allocator
		 * defines new with the deletes. The other 19 lookups would
		 * each fail twice (some 60,000 instructions of every
		 * process's start): they stay NULL, as they would.
		 */
		if (agent_real.cxx.znwm)
			resolve_optional(AGENT_I_ZNWM + 1, AGENT_I_DLCLOSE);
		agent_boot_mark();
		/* The four required ones last: until here the stubs serve.
		 * From here on frees of bootstrap blocks reach the hooks'
		 * fast path, which sees them through their filter marks. */
		agent_real.calloc = c;
		agent_real.realloc = r;
		agent_real.free = f;
		agent_real.malloc = m;
		agent_cxx_resolve(is_libstdcxx((void *)agent_real.cxx.znwm) &&
					  first_is_self("malloc") &&
					  first_is_self("_Znwm"),
				  is_libstdcxx((void *)agent_real.cxx.zdlpv) &&
					  first_is_self("free") &&
					  first_is_self("_ZdlPv"));
	}
	t->quiet--;
	guard_leave(t);
	resolving = false;
	__atomic_store_n(&resolve_state, 2, __ATOMIC_RELEASE);
	errno = saved; /* dlsym may have set it */
}

static void *stub_malloc(size_t n)
{
	agent_resolve_real();
	if (agent_real.malloc == stub_malloc)
		return boot_alloc(n, 16);
	return agent_real.malloc(n);
}

static void stub_free(void *p)
{
	if (is_boot(p) || !p)
		return;
	agent_resolve_real();
	if (agent_real.free != stub_free)
		agent_real.free(p);
}

static void *stub_calloc(size_t n, size_t size)
{
	size_t total;

	agent_resolve_real();
	if (agent_real.calloc != stub_calloc)
		return agent_real.calloc(n, size);
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
	if (agent_real.realloc != stub_realloc && !is_boot(p))
		return agent_real.realloc(p, n);
	q = agent_real.malloc(n);
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
		agent_real.free(p);
}
