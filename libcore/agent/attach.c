/* SPDX-License-Identifier: MIT */
/* The agent attached to a running process: GOT entries rewritten, restored. */
#include "attach.h"
#include "agent_record.h"
#include "fmt.h"
#include "hooks_int.h"
#include "msg.h"
#include "num.h"
#include "phdr.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

bool agent_attached;

#define N_HOOKED AGENT_N_HOOKED
/* The loader's functions (dlclose, dlopen, dlsym, dlmopen, dlvsym) end
 * agent_hooked[]: dlsym maps only the names before them. */
#define N_ALLOC_HOOKED AGENT_I_DLCLOSE
#define I_DLOPEN (AGENT_I_DLCLOSE + 1)
#define I_DLSYM (AGENT_I_DLCLOSE + 2)
#define I_DLMOPEN (AGENT_I_DLCLOSE + 3)
#define I_DLVSYM (AGENT_I_DLCLOSE + 4)

/* Per function: the agent's hook, where the loader binds it (the first
 * definition), the main executable's canonical PLT entry (or 0). */
static uintptr_t hook_fn[N_HOOKED], real_fn[N_HOOKED], canon_fn[N_HOOKED];

/* An entry rewritten: where, what it held, the object's load bias. */
struct slot {
	uintptr_t *addr;
	uintptr_t orig;
	uintptr_t base;
};
static struct slot *slots;
static size_t n_slots, cap_slots;
/* The agent's own load bias (its entries are never rewritten). */
static uintptr_t self_base;
static bool hooks_on;
static unsigned long long seen_adds;
static uint64_t next_check_ns;
/* palloc-run's pid: gone (killed), the agent unhooks itself */
static pid_t tracer;
static struct agent_lock attach_lock = AGENT_LOCK_INIT;

bool attach_dlopened(void)
{
	void *main_h = dlopen(NULL, RTLD_NOW | RTLD_NOLOAD);
	void *f = main_h ? dlsym(main_h, "palloc_dump") : NULL;

	/* Preloaded (or dlopened RTLD_GLOBAL), the program's global scope
	 * finds the agent's own symbols; dlopened by palloc-run, not. */
	if (main_h)
		dlclose(main_h);
	return !f;
}

/* ---- the table of an object ---- */

struct object {
	uintptr_t base, lo, hi;	      /* load bias, [lo, hi) its segments */
	uintptr_t relro_lo, relro_hi; /* read-only after relocation */
	struct phdr_dynamic dt;
};

static bool object_read(const struct dl_phdr_info *info, struct object *o)
{
	long page = sysconf(_SC_PAGESIZE);

	memset(o, 0, sizeof(*o));
	o->base = info->dlpi_addr;
	o->lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (a < o->lo)
				o->lo = a;
			if (a + ph->p_memsz > o->hi)
				o->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_GNU_RELRO) {
			/* as the loader protects it: both ends rounded down */
			o->relro_lo = a & ~(uintptr_t)(page - 1);
			o->relro_hi =
				(a + ph->p_memsz) & ~(uintptr_t)(page - 1);
		}
	}
	/* only RELA relocations are read (x86-64 has no others) */
	return o->lo < o->hi && phdr_dynamic(info, &o->dt) && o->dt.sym &&
	       o->dt.str && (!o->dt.pltrel || o->dt.pltrel == DT_RELA);
}

/* Write v into the entry at a, making a read-only (RELRO) page writable
 * for the time of the write. 0 or -1. */
static int slot_write(const struct object *o, uintptr_t *a, uintptr_t v)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t pg = (uintptr_t)a & ~(uintptr_t)(page - 1);
	bool ro = (uintptr_t)a >= o->relro_lo && (uintptr_t)a < o->relro_hi;

	if (ro && mprotect((void *)pg, (size_t)page, PROT_READ | PROT_WRITE))
		return -1;
	__atomic_store_n(a, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)pg, (size_t)page, PROT_READ);
	return 0;
}

/* Remember entry a (its original value orig), replacing an older record
 * of the same address (an object unloaded, another loaded there). */
static bool slot_add(uintptr_t *a, uintptr_t orig, uintptr_t base)
{
	for (size_t i = 0; i < n_slots; i++) {
		if (slots[i].addr == a) {
			slots[i].orig = orig;
			slots[i].base = base;
			return true;
		}
	}
	if (n_slots == cap_slots) {
		size_t cap = cap_slots ? 2 * cap_slots : 256;
		struct slot *n = arena_alloc(&agent_arena, cap * sizeof(*n));

		if (!n)
			return false;
		if (n_slots)
			memcpy(n, slots, n_slots * sizeof(*n));
		if (slots)
			arena_free(&agent_arena, slots);
		slots = n;
		cap_slots = cap;
	}
	slots[n_slots++] = (struct slot){a, orig, base};
	return true;
}

static int hooked_index(const char *name)
{
	for (size_t i = 0; i < N_HOOKED; i++)
		if (strcmp(agent_hooked[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The relocations rel[0..size) of o: rewrite those of hooked functions
 * that lead where the loader binds them. */
static unsigned patch_relocs(const struct object *o, const ElfW(Rela) *rel,
			     size_t size, bool lazy)
{
	unsigned done = 0;

	for (size_t i = 0; rel && i < size / sizeof(*rel); i++) {
		unsigned type = ELF64_R_TYPE(rel[i].r_info);
		const ElfW(Sym) *s = &o->dt.sym[ELF64_R_SYM(rel[i].r_info)];
		uintptr_t *a = (uintptr_t *)(o->base + rel[i].r_offset);
		uintptr_t cur;
		int h;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		if (!ELF64_R_SYM(rel[i].r_info) || s->st_name >= o->dt.strsz)
			continue;
		h = hooked_index(o->dt.str + s->st_name);
		if (h < 0 || !hook_fn[h])
			continue;
		if ((uintptr_t)a < o->lo || (uintptr_t)a + sizeof(*a) > o->hi)
			continue;
		cur = __atomic_load_n(a, __ATOMIC_ACQUIRE);
		if (cur == hook_fn[h])
			continue;
		if (cur != real_fn[h] && (!canon_fn[h] || cur != canon_fn[h]) &&
		    !(lazy && cur >= o->lo && cur < o->hi &&
		      s->st_shndx == SHN_UNDEF))
			continue;
		if (!slot_add(a, cur, o->base))
			break;
		if (slot_write(o, a, hook_fn[h]) == 0)
			done++;
	}
	return done;
}

/* Is this object one whose entries stay: the agent, the loader, the
 * vdso? */
static bool object_skipped(const struct dl_phdr_info *info)
{
	const char *n = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(n, '/');

	base = base ? base + 1 : n;
	return info->dlpi_addr == self_base ||
	       strncmp(base, "ld-linux", 8) == 0 ||
	       strncmp(base, "ld64.so", 7) == 0 ||
	       strncmp(base, "linux-vdso", 10) == 0 ||
	       strncmp(base, "linux-gate", 10) == 0;
}

static int patch_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned *done = arg;
	struct object o;

	(void)size;
	seen_adds = info->dlpi_adds;
	if (object_skipped(info) || !object_read(info, &o))
		return 0;
	*done += patch_relocs(&o, o.dt.jmprel, o.dt.jmprelsz, true);
	*done += patch_relocs(&o, o.dt.rela, o.dt.relasz, false);
	return 0;
}

static int unpatch_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned *done = arg;
	struct object o;

	(void)size;
	if (object_skipped(info) || !object_read(info, &o))
		return 0;
	for (size_t i = 0; i < n_slots; i++) {
		struct slot *s = &slots[i];
		uintptr_t cur;

		if (!s->addr || s->base != o.base ||
		    (uintptr_t)s->addr < o.lo || (uintptr_t)s->addr >= o.hi)
			continue;
		cur = __atomic_load_n(s->addr, __ATOMIC_ACQUIRE);
		for (size_t h = 0; h < N_HOOKED; h++) {
			if (cur != hook_fn[h])
				continue;
			if (slot_write(&o, s->addr, s->orig) == 0)
				(*done)++;
			break;
		}
		s->addr = NULL;
	}
	return 0;
}

/* ---- dlopen and dlsym ---- */

/*
 * glibc's dlopen and dlsym act for their caller, found by their return
 * address: dlopen searches its RPATH/RUNPATH for a bare name and loads
 * into its namespace, dlsym(RTLD_NEXT) looks after it. So their hooks
 * are stubs that ask a "pick" function (the caller's return address as
 * the fourth argument) which function to jump to, the stack as the
 * program left it: the real one (its caller the program's, exactly as
 * unhooked: objects it loads are patched lazily, at most 100 ms later)
 * or a wrapper (its caller the agent) when calling from the agent
 * changes nothing that matters: dlopen of NULL or of a path without
 * "$", or of a bare name from an object without RPATH/RUNPATH, from the
 * base namespace (then the new objects are patched before dlopen
 * returns, their constructors having run unhooked); dlsym of a malloc
 * family name, handle not RTLD_NEXT, from the base namespace (then the
 * loader's function found is answered with the agent's hook).
 */
static unsigned patch_all(void);
void attach_dlopen_hook(void);
void attach_dlsym_hook(void);
void *attach_dlopen_pick(const char *file, int mode, uintptr_t unused,
			 const void *caller);
void *attach_dlsym_pick(void *handle, const char *name, uintptr_t unused,
			const void *caller);

#define PICK_STUB(name, pick)                                                  \
	__asm__(".text\n"                                                      \
		".p2align 4\n"                                                 \
		".globl " #name "\n"                                           \
		".hidden " #name "\n"                                          \
		".type " #name ", @function\n" #name ":\n"                     \
		"\tendbr64\n"                                                  \
		"\tpush %rdi\n"                                                \
		"\tpush %rsi\n"                                                \
		"\tpush %rdx\n"                                                \
		"\tmov 24(%rsp), %rcx\n"                                       \
		"\tcall " #pick "\n"                                           \
		"\tpop %rdx\n"                                                 \
		"\tpop %rsi\n"                                                 \
		"\tpop %rdi\n"                                                 \
		"\tjmp *%rax\n"                                                \
		".size " #name ", .-" #name "\n")
void attach_dlmopen_hook(void);
void attach_dlvsym_hook(void);
void *attach_dlmopen_pick(Lmid_t lmid, const char *file, int mode,
			  const void *caller);
void *attach_dlvsym_pick(void *handle, const char *name, const char *version,
			 const void *caller);
PICK_STUB(attach_dlopen_hook, attach_dlopen_pick);
PICK_STUB(attach_dlsym_hook, attach_dlsym_pick);
PICK_STUB(attach_dlmopen_hook, attach_dlmopen_pick);
PICK_STUB(attach_dlvsym_hook, attach_dlvsym_pick);

/* Does calling from the agent instead of caller keep the namespace (and,
 * path_too, the library search path: caller has no RPATH/RUNPATH)? */
static bool same_as_agent(const void *caller, bool path_too)
{
	struct link_map *lm = NULL;
	Dl_info info;
	Lmid_t id = LM_ID_BASE;

	if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    dlinfo(lm, RTLD_DI_LMID, &id) != 0 || id != LM_ID_BASE)
		return false;
	for (const ElfW(Dyn) *d = lm->l_ld;
	     path_too && d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_RPATH || d->d_tag == DT_RUNPATH)
			return false;
	return true;
}

/* After a dlopen or dlmopen that returned h: the new objects patched
 * now. h is returned, errno as the call left it. */
static void *patch_loaded(void *h)
{
	int saved = errno;

	if (h && __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE)) {
		agent_guard_enter();
		agent_lock(&attach_lock);
		if (hooks_on)
			patch_all();
		agent_unlock(&attach_lock);
		agent_guard_leave();
	}
	errno = saved;
	return h;
}

static void *dlopen_wrapped(const char *file, int mode)
{
	return patch_loaded(
		((void *(*)(const char *, int))real_fn[I_DLOPEN])(file, mode));
}

void *attach_dlopen_pick(const char *file, int mode, uintptr_t unused,
			 const void *caller)
{
	int saved = errno;
	bool wrap = __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE) &&
		    (!file || (!strchr(file, '$') &&
			       same_as_agent(caller, !strchr(file, '/'))));

	(void)mode;
	(void)unused;
	errno = saved;
	return wrap ? (void *)dlopen_wrapped : (void *)real_fn[I_DLOPEN];
}

/* dlmopen into the base namespace: as dlopen (other namespaces have
 * their own C library, whose malloc the agent does not see: nothing
 * there leads to the functions hooked, nothing is patched). */
static void *dlmopen_wrapped(Lmid_t lmid, const char *file, int mode)
{
	return patch_loaded(
		((void *(*)(Lmid_t, const char *, int))real_fn[I_DLMOPEN])(
			lmid, file, mode));
}

void *attach_dlmopen_pick(Lmid_t lmid, const char *file, int mode,
			  const void *caller)
{
	int saved = errno;
	bool wrap = __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE) &&
		    lmid == LM_ID_BASE && file && !strchr(file, '$') &&
		    same_as_agent(caller, !strchr(file, '/'));

	(void)mode;
	errno = saved;
	return wrap ? (void *)dlmopen_wrapped : (void *)real_fn[I_DLMOPEN];
}

/* The agent's hook for what the loader found for name, if it is one of
 * the malloc family's real functions; else f. */
static void *hook_for(void *f, const char *name)
{
	int h = f ? hooked_index(name) : -1;

	if (h >= 0 && (size_t)h < N_ALLOC_HOOKED && hook_fn[h] &&
	    __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE) &&
	    ((uintptr_t)f == real_fn[h] || (uintptr_t)f == canon_fn[h]))
		return (void *)hook_fn[h];
	return f;
}

static void *dlvsym_wrapped(void *handle, const char *name, const char *version)
{
	void *f = ((void *(*)(void *, const char *,
			      const char *))real_fn[I_DLVSYM])(handle, name,
							       version);

	return hook_for(f, name);
}

/* Should dlsym or dlvsym of name in handle from caller go through the
 * wrapper (a malloc family name, from the base namespace)? */
static bool sym_wrapped(void *handle, const char *name, const void *caller)
{
	int saved = errno, h;
	bool wrap = false;

	if (__atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE) && name &&
	    handle != RTLD_NEXT) {
		h = hooked_index(name);
		wrap = h >= 0 && (size_t)h < N_ALLOC_HOOKED &&
		       same_as_agent(caller, false);
	}
	errno = saved;
	return wrap;
}

void *attach_dlvsym_pick(void *handle, const char *name, const char *version,
			 const void *caller)
{
	(void)version;
	return sym_wrapped(handle, name, caller) ? (void *)dlvsym_wrapped
						 : (void *)real_fn[I_DLVSYM];
}

static void *dlsym_wrapped(void *handle, const char *name)
{
	void *f = ((void *(*)(void *, const char *))real_fn[I_DLSYM])(handle,
								      name);

	return hook_for(f, name);
}

void *attach_dlsym_pick(void *handle, const char *name, uintptr_t unused,
			const void *caller)
{
	(void)unused;
	return sym_wrapped(handle, name, caller) ? (void *)dlsym_wrapped
						 : (void *)real_fn[I_DLSYM];
}

/* ---- what the hooks forward to, and the hooks ---- */

/*
 * The agent's hooks (its own exported definitions, looked up in its own
 * object) and where the loader binds each name: the first definition in
 * the search order (phdr.h), never the main executable's canonical PLT
 * entry (dlsym(RTLD_NEXT) can return that, and it leads through the
 * executable's entry, rewritten, back to the hook).
 */
static int resolve(void)
{
	Dl_info info;
	void *self;

	if (!dladdr((void *)&resolve, &info) || !info.dli_fname)
		return msg_set("cannot find the agent's own object");
	self_base = (uintptr_t)info.dli_fbase;
	self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!self)
		return msg_set("cannot open the agent's own object");
	for (size_t i = 0; i < N_HOOKED; i++) {
		struct phdr_definition def;
		void *c;

		if (i == I_DLOPEN)
			hook_fn[i] = (uintptr_t)attach_dlopen_hook;
		else if (i == I_DLSYM)
			hook_fn[i] = (uintptr_t)attach_dlsym_hook;
		else if (i == I_DLMOPEN)
			hook_fn[i] = (uintptr_t)attach_dlmopen_hook;
		else if (i == I_DLVSYM)
			hook_fn[i] = (uintptr_t)attach_dlvsym_hook;
		else
			hook_fn[i] =
				(uintptr_t)dlsym(self, agent_hooked[i].name);
		if (phdr_first_definition(agent_hooked[i].name, &def) == 0 &&
		    def.addr != hook_fn[i]) {
			real_fn[i] = def.addr;
			if (agent_hooked[i].real >= 0)
				*(uintptr_t *)((char *)&agent_real +
					       agent_hooked[i].real) = def.addr;
		} else {
			/* none (a C program's operator new): nothing leads
			 * there, nothing is rewritten */
			hook_fn[i] = 0;
		}
		c = dlsym(RTLD_DEFAULT, agent_hooked[i].name);
		if (c && (uintptr_t)c != real_fn[i] &&
		    (uintptr_t)c != hook_fn[i])
			canon_fn[i] = (uintptr_t)c;
	}
	dlclose(self);
	if (!real_fn[0] || !real_fn[1] || !real_fn[2] || !real_fn[3])
		return msg_set("no malloc, free, calloc or realloc to forward "
			       "to");
	return 0;
}

static unsigned patch_all(void)
{
	unsigned done = 0;

	dl_iterate_phdr(patch_visit, &done);
	return done;
}

/* Write every entry back; how many. Under attach_lock. */
static unsigned unhook(void)
{
	unsigned done = 0;

	if (!hooks_on)
		return 0;
	__atomic_store_n(&hooks_on, false, __ATOMIC_RELEASE);
	dl_iterate_phdr(unpatch_visit, &done);
	n_slots = 0;
	return done;
}

bool attach_hooked(void)
{
	return __atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE);
}

void attach_safe_point(void)
{
	uint64_t now;

	if (!__atomic_load_n(&hooks_on, __ATOMIC_ACQUIRE))
		return;
	now = agent_now_ns();
	if (now < __atomic_load_n(&next_check_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&next_check_ns, now + 100000000u, __ATOMIC_RELAXED);
	if (!agent_trylock(&attach_lock))
		return;
	if (hooks_on && tracer > 0 && kill(tracer, 0) < 0 && errno == ESRCH)
		unhook(); /* palloc-run was killed: nobody will detach */
	else if (hooks_on)
		patch_all();
	agent_unlock(&attach_lock);
}

/* ---- configuration ---- */

/* A second attach asked for a rate the agent cannot change to. */
static bool rate_refused;

static void apply(const char *key, size_t klen, const char *val, bool again)
{
	uint64_t u;

	if (klen == 5 && memcmp(key, "token", 5) == 0)
		record_set_place(NULL, val);
	else if (klen == 6 && memcmp(key, "tracer", 6) == 0) {
		if (num_parse_u64(val, false, &u) == 0 && u && u < INT32_MAX)
			__atomic_store_n(&tracer, (pid_t)u, __ATOMIC_RELAXED);
	} else if (klen == 4 && memcmp(key, "rate", 4) == 0) {
		if (num_parse_u64(val, true, &u) < 0 || u == agent_cfg.rate)
			return;
		if (!again) {
			agent_cfg.rate = u;
		} else if (u <= 1 || agent_cfg.rate <= 1) {
			/* rate 1 (every block, weights per thread, every free
			 * looked up) and 0 are set up at the start only */
			rate_refused = true;
		} else {
			/* each sample is weighed at the rate of its time;
			 * a thread's countdown drawn before counts once */
			__atomic_store_n(&agent_cfg.rate, u, __ATOMIC_RELAXED);
			if (agent_hdr)
				__atomic_store_n(&agent_hdr->rate, u,
						 __ATOMIC_RELAXED);
		}
	} else if (klen == 9 && memcmp(key, "max_depth", 9) == 0) {
		if (num_parse_u64(val, false, &u) == 0 && u >= 1 &&
		    u <= MAX_DEPTH_LIMIT)
			agent_cfg.max_depth = (unsigned)u;
	} else if (again) {
		return;
	} else if (klen == 6 && memcmp(key, "unwind", 6) == 0) {
		(void)unwind_parse_mode(val, &agent_cfg.unwind);
	} else if (klen == 3 && memcmp(key, "dir", 3) == 0) {
		record_set_place(val, NULL);
	}
}

/* config: "key=value" lines (attach.h); a second attach (again) takes
 * its token, rate and max_depth (the record, its directory and the
 * unwinder stay the first one's). */
static void read_attach_config(const char *config, bool again)
{
	char line[PATH_MAX + 64];

	while (config && *config) {
		size_t n = strcspn(config, "\n");
		const char *eq = memchr(config, '=', n);

		if (eq && n < sizeof(line)) {
			memcpy(line, eq + 1, n - (size_t)(eq + 1 - config));
			line[n - (size_t)(eq + 1 - config)] = '\0';
			apply(config, (size_t)(eq - config), line, again);
		}
		config += n;
		if (*config)
			config++;
	}
}

PALLOC_EXPORT int palloc_attach(const char *config)
{
	int saved = errno, rc = 0;

	agent_guard_enter();
	agent_lock(&attach_lock);
	if (!agent_attached) {
		if (agent_mode != AGENT_OFF) {
			/* preloaded already: it sees everything */
			agent_unlock(&attach_lock);
			agent_guard_leave();
			errno = saved;
			return 1;
		}
		agent_resolve_real();
		if (resolve() < 0) {
			fmt_warn("cannot attach: %s", msg_last());
			rc = -1;
			goto out;
		}
		agent_attached = true;
		agent_cfg.follow_children = false;
		agent_cfg.peak = false;
		agent_cfg.exact = false;
		agent_cfg.interval_ns = 0;
		read_attach_config(config, false);
		agent_start_attached();
		if (agent_mode != AGENT_ON) {
			rc = -1;
			goto out;
		}
	} else {
		rate_refused = false;
		read_attach_config(config, true);
		if (rate_refused) {
			rc = 2;
			goto out;
		}
	}
	if (!hooks_on) {
		__atomic_store_n(&agent_hdr->flags,
				 agent_hdr->flags | RECORD_F_ATTACHED,
				 __ATOMIC_RELEASE);
		patch_all();
		__atomic_store_n(&hooks_on, true, __ATOMIC_RELEASE);
	}
out:
	agent_unlock(&attach_lock);
	agent_guard_leave();
	errno = saved;
	return rc;
}

PALLOC_EXPORT int palloc_detach(void)
{
	int saved = errno;
	unsigned done = 0;

	agent_guard_enter();
	agent_lock(&attach_lock);
	done = unhook();
	agent_unlock(&attach_lock);
	agent_guard_leave();
	errno = saved;
	return (int)done;
}
