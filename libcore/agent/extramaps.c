/* SPDX-License-Identifier: MIT */
/* Mappings no loaded ELF object gives: unloaded objects and JIT code. */
#include "agent_int.h"
#include "agent/lines.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

/*
 * Every location of a profile has a mapping (palloc(7), FILES), also when its
 * address is in no object loaded at the time the profile is written:
 *
 *  - Objects unloaded by dlclose(3). The interposed dlclose copies the
 *    list of executable segments (phdr_foreach) before the real one and
 *    looks again after it: the segments gone are kept here (path, build
 *    id, range, file offset: what the mapping needs), and the stacks with
 *    a frame in them are sealed (stacktab_seal), so that a stack recorded
 *    before another object is loaded at the same address stays the old
 *    object's. Nothing is added to the allocation path: dlclose pays.
 *    A stack of gen g (stacktab.h) with a frame at a belongs to the kept
 *    segment covering a with the smallest unload gen above g, else to
 *    what is loaded now: at any moment one object at most holds a.
 *  - Anonymous executable memory (JIT compilers: V8, HotSpot): the region
 *    of /proc/self/maps holding the address, named as the kernel names it
 *    or "[anon:jit]" when it has no name; the commands name its frames
 *    from /tmp/perf-PID.map (symbols.h). An address in no executable
 *    region at all (code freed since) gets "[unmapped]".
 *
 * Unloads that do not go through the dynamic symbol dlclose (glibc's own
 * __libc_dlclose, for gconv modules) are not seen: such frames end up in
 * "[unmapped]" or in whatever is loaded there now.
 */

/* At most this many kept segments; beyond, unloads are not recorded. */
#define UNLOADED_MAX 4096

struct unloaded {
	uintptr_t start, limit;
	uint64_t offset;
	char *path, *build_id; /* agent_arena */
	uint32_t gen;	       /* the table's gen after the unload */
};

/* Written under agent_dump_lock and agent_tab_lock: either is enough to
 * read them. */
static struct unloaded *unl;
static size_t n_unl, cap_unl;

static int (*real_dlclose)(void *);

/* ---- the segments before and after a dlclose ---- */

static char *arena_dup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = arena_alloc(&agent_arena, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

static int copy_seg(const struct phdr_segment *s, void *arg)
{
	struct agent_segs *l = arg;
	struct phdr_segment c = *s;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 128;
		struct phdr_segment *v =
			arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v) {
			l->err = -1;
			return 1;
		}
		if (l->v)
			memcpy(v, l->v, l->n * sizeof(*v));
		arena_free(&agent_arena, l->v);
		l->v = v;
		l->cap = cap;
	}
	c.path = arena_dup(s->path);
	c.build_id = arena_dup(s->build_id);
	if (!c.path || !c.build_id) {
		arena_free(&agent_arena, (void *)c.path);
		arena_free(&agent_arena, (void *)c.build_id);
		l->err = -1;
		return 1;
	}
	l->v[l->n++] = c;
	return 0;
}

static bool same_seg(const struct phdr_segment *a, const struct phdr_segment *b)
{
	return a->start == b->start && a->limit == b->limit &&
	       a->offset == b->offset && strcmp(a->path, b->path) == 0 &&
	       strcmp(a->build_id, b->build_id) == 0;
}

static int mark_present(const struct phdr_segment *s, void *arg)
{
	struct agent_segs *l = arg;

	for (size_t i = 0; i < l->n; i++)
		if (!l->present[i] && same_seg(&l->v[i], s)) {
			l->present[i] = true;
			break;
		}
	return 0;
}

void agent_segs_copy(struct agent_segs *l)
{
	phdr_foreach(copy_seg, l);
}

void agent_segs_free(struct agent_segs *l)
{
	for (size_t i = 0; i < l->n; i++) {
		arena_free(&agent_arena, (void *)l->v[i].path);
		arena_free(&agent_arena, (void *)l->v[i].build_id);
	}
	arena_free(&agent_arena, l->v);
	arena_free(&agent_arena, l->present);
}

/*
 * Keep segment g, unloaded at gen: a new entry, or the newest entry over
 * the same range when it is the same segment (an object loaded and
 * unloaded again at its old address, or two threads seeing one unload):
 * its gen moves up, which changes no answer since nothing else was at
 * those addresses in between. Takes g's strings or leaves them. Locks
 * held.
 */
static void keep_segment(struct phdr_segment *g, uint32_t gen)
{
	struct unloaded *newest = NULL;

	for (size_t i = 0; i < n_unl; i++)
		if (unl[i].start < g->limit && g->start < unl[i].limit &&
		    (!newest || unl[i].gen > newest->gen))
			newest = &unl[i];
	if (newest && newest->start == g->start && newest->limit == g->limit &&
	    newest->offset == g->offset && strcmp(newest->path, g->path) == 0 &&
	    strcmp(newest->build_id, g->build_id) == 0) {
		newest->gen = gen;
		return;
	}
	if (n_unl == UNLOADED_MAX)
		return;
	if (n_unl == cap_unl) {
		size_t cap = cap_unl ? cap_unl * 2 : 16;
		struct unloaded *v =
			arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v)
			return;
		if (unl)
			memcpy(v, unl, n_unl * sizeof(*v));
		arena_free(&agent_arena, unl);
		unl = v;
		cap_unl = cap;
	}
	unl[n_unl++] = (struct unloaded){
		.start = g->start,
		.limit = g->limit,
		.offset = g->offset,
		.path = (char *)g->path,
		.build_id = (char *)g->build_id,
		.gen = gen,
	};
	g->path = g->build_id = NULL; /* taken */
}

/* The segments of before that are gone now become kept segments. */
static void record_unloads(struct agent_segs *before)
{
	uintptr_t(*ranges)[2];
	size_t n_gone = 0, k = 0;
	uint32_t gen;

	before->present = arena_calloc(&agent_arena, before->n ? before->n : 1,
				       sizeof(*before->present));
	if (!before->present)
		return;
	phdr_foreach(mark_present, before);
	for (size_t i = 0; i < before->n; i++)
		n_gone += !before->present[i];
	if (!n_gone)
		return;
	ranges = arena_alloc(&agent_arena, n_gone * sizeof(*ranges));
	if (!ranges)
		return;
	for (size_t i = 0; i < before->n; i++)
		if (!before->present[i]) {
			ranges[k][0] = before->v[i].start;
			ranges[k][1] = before->v[i].limit;
			k++;
		}
	agent_lock(&agent_dump_lock);
	agent_lock(&agent_tab_lock);
	agent_lock(&agent_intern_lock);
	gen = stacktab_seal(&agent_tab, (const uintptr_t(*)[2])ranges, n_gone);
	__atomic_store_n(&agent_hdr->gen, gen, __ATOMIC_RELEASE);
	agent_unlock(&agent_intern_lock);
	/* The record's MODULE entries first: keep_segment takes strings. */
	for (size_t i = 0; i < before->n; i++)
		if (!before->present[i])
			record_module_unloaded(
				before->v[i].start, before->v[i].limit,
				before->v[i].offset, before->v[i].path, gen);
	for (size_t i = 0; i < before->n; i++)
		if (!before->present[i])
			keep_segment(&before->v[i], gen);
	agent_unlock(&agent_tab_lock);
	agent_unlock(&agent_dump_lock);
	arena_free(&agent_arena, ranges);
}

/*
 * The program's dlclose. Not while the agent itself calls it (allocstats.c
 * pins objects with dlopen/dlclose, which unloads nothing), nor before the
 * agent is on. The guard is not held across the real dlclose: the
 * destructors it runs are the program's code, their allocations count.
 */
PALLOC_EXPORT int dlclose(void *handle)
{
	struct agent_segs before = {0};
	int rc, saved;

	if (!real_dlclose)
		real_dlclose = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!real_dlclose)
		return -1;
	if (__atomic_load_n(&agent_mode, __ATOMIC_ACQUIRE) != AGENT_ON ||
	    agent_tls.guard || !agent_cfg.rate)
		return real_dlclose(handle);
	agent_guard_enter();
	agent_segs_copy(&before);
	agent_guard_leave();
	rc = real_dlclose(handle);
	saved = errno;
	agent_guard_enter();
	/* dlclose took the loader's lock and gave it back: in a fork child
	 * still answering lookups from the copy, the loader is free, and the
	 * copy may now list what was just unmapped. */
	modtab_child_end();
	if (!before.err)
		record_unloads(&before);
	agent_segs_free(&before);
	/* Objects the destructors loaded meanwhile. */
	record_modules_check();
	agent_guard_leave();
	errno = saved;
	return rc;
}

/* ---- while a profile is built ---- */

/* An executable region of /proc/self/maps. */
struct xregion {
	uintptr_t start, limit;
	uint64_t offset;
	char *name; /* agent_arena; "" for none */
	uint64_t id;
};

static uint64_t hex_field(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else
			break;
		v = v << 4 | d;
	}
	return v;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

/* One line of /proc/self/maps: "start-limit perms offset dev inode
 * [name]". Executable regions are appended to x. */
static void maps_line(struct agent_extra *x, const char *p, const char *end)
{
	struct xregion r = {0};
	const char *perms;

	r.start = hex_field(&p, end);
	if (p == end || *p++ != '-')
		return;
	r.limit = hex_field(&p, end);
	p = skip_field(p, end);
	perms = p;
	if (end - perms < 4 || perms[2] != 'x')
		return;
	p = skip_field(p, end);
	r.offset = hex_field(&p, end);
	p = skip_field(p, end); /* offset */
	p = skip_field(p, end); /* dev */
	p = skip_field(p, end); /* inode */
	if (x->n_regions == x->cap_regions) {
		size_t cap = x->cap_regions ? x->cap_regions * 2 : 64;
		struct xregion *v = arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v)
			return;
		if (x->regions)
			memcpy(v, x->regions, x->n_regions * sizeof(*v));
		arena_free(&agent_arena, x->regions);
		x->regions = v;
		x->cap_regions = cap;
	}
	r.name = arena_alloc(&agent_arena, (size_t)(end - p) + 1);
	if (!r.name)
		return;
	memcpy(r.name, p, (size_t)(end - p));
	r.name[end - p] = '\0';
	x->regions[x->n_regions++] = r;
}

static void maps_visit(const char *line, size_t len, void *arg)
{
	maps_line(arg, line, line + len);
}

/* Read the executable regions of /proc/self/maps (sorted by address, as
 * the kernel lists them) into x->regions. */
static void read_maps(struct agent_extra *x)
{
	x->maps_read = true;
	agent_lines("/proc/self/maps", maps_visit, x);
}

int agent_extra_begin(struct agent_extra *x, struct pprof_profile *p)
{
	memset(x, 0, sizeof(*x));
	x->p = p;
	if (n_unl) {
		x->unl_ids =
			arena_calloc(&agent_arena, n_unl, sizeof(*x->unl_ids));
		if (!x->unl_ids)
			return -1;
		x->n_unl = n_unl;
	}
	return 0;
}

uint64_t agent_extra_unloaded(struct agent_extra *x, uint32_t gen,
			      uintptr_t addr)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < x->n_unl; i++)
		if (unl[i].gen > gen && addr >= unl[i].start &&
		    addr < unl[i].limit &&
		    (best == SIZE_MAX || unl[i].gen < unl[best].gen))
			best = i;
	if (best == SIZE_MAX)
		return 0;
	if (!x->unl_ids[best]) {
		struct pprof_mapping pm = {
			.start = unl[best].start,
			.limit = unl[best].limit,
			.offset = unl[best].offset,
			.file = unl[best].path,
			.build_id = unl[best].build_id,
		};

		x->unl_ids[best] = pprof_add_mapping(x->p, &pm);
	}
	return x->unl_ids[best];
}

uint64_t agent_extra_anon(struct agent_extra *x, uintptr_t addr)
{
	size_t lo = 0, hi;
	struct xregion *r;

	if (!x->maps_read)
		read_maps(x);
	hi = x->n_regions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->regions[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= x->regions[lo - 1].limit) {
		uintptr_t page = addr & ~(uintptr_t)4095;

		if (!x->unmapped_id) {
			struct pprof_mapping pm = {
				.start = page,
				.limit = page + 4096,
				.file = "[unmapped]",
				.build_id = "",
			};

			x->unmapped_id = pprof_add_mapping(x->p, &pm);
			x->unmapped_lo = page;
			x->unmapped_hi = page + 4096;
		}
		if (page < x->unmapped_lo)
			x->unmapped_lo = page;
		if (page + 4096 > x->unmapped_hi)
			x->unmapped_hi = page + 4096;
		return x->unmapped_id;
	}
	r = &x->regions[lo - 1];
	if (!r->id) {
		struct pprof_mapping pm = {
			.start = r->start,
			.limit = r->limit,
			.offset = r->offset,
			.file = r->name[0] ? r->name : "[anon:jit]",
			.build_id = "",
		};

		r->id = pprof_add_mapping(x->p, &pm);
	}
	return r->id;
}

void agent_extra_end(struct agent_extra *x)
{
	if (x->unmapped_id) {
		struct pprof_mapping *m = &x->p->mappings[x->unmapped_id - 1];

		m->start = x->unmapped_lo;
		m->limit = x->unmapped_hi;
	}
	for (size_t i = 0; i < x->n_regions; i++)
		arena_free(&agent_arena, x->regions[i].name);
	arena_free(&agent_arena, x->regions);
	arena_free(&agent_arena, x->unl_ids);
	memset(x, 0, sizeof(*x));
}
