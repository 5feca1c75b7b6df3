/* SPDX-License-Identifier: MIT */
/* The loaded objects as the parent saw them at fork, for a fork child. */
#include "common.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "agent_int.h"
#include "arena.h"
#include "phdr.h"

/*
 * glibc 2.36 does not reset the loader's dl_load_write_lock in a fork
 * child: if another thread of the parent held it at the fork (inside
 * dlopen, dlclose or dl_iterate_phdr -- libunwind's lookups of unwind
 * tables, on every thread that samples), every dl_iterate_phdr in the
 * child blocks for good. libunwind finds the unwind tables of an address
 * only that way: dwarf_find_proc_info() -> dl_iterate_phdr(dwarf_callback)
 * in src/dwarf/Gfind_proc_info-lsb.c (libunwind 1.6.2; the local-only
 * library calls it directly, not through the address space's
 * find_proc_info accessor, see tdep_find_proc_info in
 * include/tdep-x86_64/libunwind_i.h). Its own registration API
 * (_U_dyn_register with UNW_INFO_FORMAT_REMOTE_TABLE) would be consulted
 * first, but that path never frees the parsed CIE it allocates for each
 * lookup (put_unwind_info() in src/dwarf/Gparser.c calls
 * dwarf_put_unwind_info(), a no-op, for dynamic entries): a leak per
 * lookup.
 *
 * So the parent copies, in its fork prepare handler, what dl_iterate_phdr
 * reports of each object (load address, name, program headers, counters);
 * the copy is inherited by the child. While the child is not sure that
 * the loader is free, the agent's dl_iterate_phdr answers libunwind and
 * the agent itself from that copy, exactly as the loader would have: the
 * child unwinds as the parent does from its first allocation. The
 * program headers are copied too, so an entry never points into an object
 * the child unloads; the tables they lead to belong to objects that were
 * loaded at the fork, whose frames are the only ones on its stacks.
 *
 * For every other caller, and for everyone outside that window, the agent's
 * dl_iterate_phdr forwards to the C library's, unchanged: same callback,
 * same data, same result. glibc picks the namespace to report from its
 * caller's address; the forwarding call is a tail call in practice, and
 * even when it is not the agent (preloaded, so in the base namespace) is in
 * the namespace of every object that can bind to it (LD_PRELOAD does not
 * reach dlmopen namespaces).
 */
typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *),
			  void *);

struct modtab_obj {
	struct dl_phdr_info info; /* name and phdrs point into this block */
	const ElfW(Phdr) *mapped_phdr; /* the loader's: inside the object */
};

static struct {
	iterate_fn real;
	struct modtab_obj **obj;
	size_t n, cap;
	unsigned long long adds, subs;
	bool valid;
	/* callers answered from the copy: libunwind and the agent */
	uintptr_t unw_lo, unw_hi, self_lo, self_hi;
} mt;

/* In a fork child whose loader may be locked: answer from the copy. */
static bool modtab_on;

static iterate_fn modtab_real(void)
{
	iterate_fn f = __atomic_load_n(&mt.real, __ATOMIC_ACQUIRE);

	if (!f) {
		f = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
		__atomic_store_n(&mt.real, f, __ATOMIC_RELEASE);
	}
	return f;
}

int modtab_real_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *),
			void *data)
{
	iterate_fn f = modtab_real();

	return f ? f(cb, data) : 0;
}

void modtab_init(void)
{
	modtab_real();
	phdr_object_text((uintptr_t)&unw_backtrace, &mt.unw_lo, &mt.unw_hi);
	phdr_object_text((uintptr_t)&modtab_init, &mt.self_lo, &mt.self_hi);
}

static void copy_free(void)
{
	for (size_t i = 0; i < mt.n; i++)
		arena_free(&agent_arena, mt.obj[i]);
	arena_free(&agent_arena, mt.obj);
	mt.obj = NULL;
	mt.n = mt.cap = 0;
	mt.valid = false;
}

static int copy_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	size_t name_len = strlen(info->dlpi_name ? info->dlpi_name : "") + 1;
	size_t ph_len = info->dlpi_phnum * sizeof(ElfW(Phdr));
	bool *failed = arg;
	struct modtab_obj *o;
	char *p;

	if (size < sizeof(struct dl_phdr_info)) {
		*failed = true;
		return 1;
	}
	if (mt.n == mt.cap) {
		size_t cap = mt.cap ? mt.cap * 2 : 32;
		struct modtab_obj **n =
			arena_alloc(&agent_arena, cap * sizeof(*n));

		if (!n) {
			*failed = true;
			return 1;
		}
		if (mt.obj)
			memcpy(n, mt.obj, mt.n * sizeof(*n));
		arena_free(&agent_arena, mt.obj);
		mt.obj = n;
		mt.cap = cap;
	}
	o = arena_alloc(&agent_arena, sizeof(*o) + ph_len + name_len);
	if (!o) {
		*failed = true;
		return 1;
	}
	p = (char *)(o + 1);
	o->info = *info;
	o->mapped_phdr = info->dlpi_phdr;
	memcpy(p, info->dlpi_phdr, ph_len);
	o->info.dlpi_phdr = (const ElfW(Phdr) *)p;
	memcpy(p + ph_len, info->dlpi_name ? info->dlpi_name : "", name_len);
	o->info.dlpi_name = p + ph_len;
	mt.obj[mt.n++] = o;
	mt.adds = info->dlpi_adds;
	mt.subs = info->dlpi_subs;
	return 0;
}

static int same_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	bool *same = arg;

	*same = size >= sizeof(*info) && info->dlpi_adds == mt.adds &&
		info->dlpi_subs == mt.subs;
	return 1;
}

void modtab_snapshot(void)
{
	bool same = false, failed = false;

	if (__atomic_load_n(&modtab_on, __ATOMIC_ACQUIRE))
		return; /* the loader may be locked: keep the inherited copy */
	if (mt.valid) {
		modtab_real_iterate(same_visit, &same);
		if (same)
			return;
	}
	copy_free();
	modtab_real_iterate(copy_visit, &failed);
	mt.valid = !failed;
	if (failed)
		copy_free();
}

/*
 * Whether o's loadable segments are all mapped (msync fails with ENOMEM on
 * an unmapped page, without reading it) and its program headers are still
 * the ones copied: the copy is made in the prepare handler, and another
 * thread's dlclose or dlopen can still run before the fork itself (glibc
 * takes no loader lock around it), so the child may lack an object the
 * copy lists, or hold another at its address.
 */
static bool obj_present(const struct modtab_obj *o)
{
	const struct dl_phdr_info *in = &o->info;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; i < in->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &in->dlpi_phdr[i];
		uintptr_t lo, hi;

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		lo = (in->dlpi_addr + ph->p_vaddr) & ~(page - 1);
		hi = in->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (msync((void *)lo, hi - lo, MS_ASYNC) < 0)
			return false;
	}
	if (msync((void *)((uintptr_t)o->mapped_phdr & ~(page - 1)), page,
		  MS_ASYNC) < 0)
		return false;
	return memcmp(o->mapped_phdr, in->dlpi_phdr,
		      in->dlpi_phnum * sizeof(ElfW(Phdr))) == 0;
}

bool modtab_child_begin(void)
{
	size_t k = 0;

	if (!mt.valid)
		return false;
	/* Drop what the fork did not bring along (see obj_present). */
	for (size_t i = 0; i < mt.n; i++) {
		if (obj_present(mt.obj[i]))
			mt.obj[k++] = mt.obj[i];
		else
			arena_free(&agent_arena, mt.obj[i]);
	}
	mt.n = k;
	__atomic_store_n(&modtab_on, true, __ATOMIC_RELEASE);
	return true;
}

void modtab_child_end(void)
{
	__atomic_store_n(&modtab_on, false, __ATOMIC_RELEASE);
}

static int copy_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *),
			void *data)
{
	int r = 0;

	for (size_t i = 0; i < mt.n && !r; i++) {
		struct dl_phdr_info info = mt.obj[i]->info;

		r = cb(&info, sizeof(info), data);
	}
	return r;
}

PALLOC_EXPORT int
dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	int r;

	if (unlikely(__atomic_load_n(&modtab_on, __ATOMIC_ACQUIRE))) {
		uintptr_t ra = (uintptr_t)__builtin_return_address(0);

		if ((ra >= mt.unw_lo && ra < mt.unw_hi) ||
		    (ra >= mt.self_lo && ra < mt.self_hi))
			return copy_iterate(cb, data);
		/* The program's own call: once it returns, the loader is
		 * free, and the copy is needed no more (agent.c). */
		r = modtab_real_iterate(cb, data);
		modtab_child_end();
		return r;
	}
	return modtab_real_iterate(cb, data);
}
