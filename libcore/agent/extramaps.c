/* SPDX-License-Identifier: MIT */
/* Mappings no loaded ELF object gives: unloaded objects and JIT code. */
#include "agent_int.h"
#include "search.h"
#include "agent/lines.h"
#include "pprof.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

/*
 * Every location of a profile has a mapping (palloc(7), FILES), also when its
 * address is in no object loaded at the time the profile is written:
 *
 *  - Objects unloaded by dlclose(3). The interposed dlclose copies the
 *    list of executable segments (phdr_foreach) before the real one and
 *    looks again after it: the record's MODULE entries of the segments
 *    gone get the unload gen (agent_record.h), and the stacks with a
 *    frame in them are sealed (stacktab_seal), so that a stack recorded
 *    before another object is loaded at the same address stays the old
 *    object's (record_profile() finds a frame's module by the stack's
 *    gen). Nothing is added to the allocation path: dlclose pays.
 *  - Anonymous executable memory (JIT compilers: V8, HotSpot): the region
 *    of /proc/self/maps holding the address, named as the kernel names it
 *    or "[anon:jit]" when it has no name (agent_maps_unmapped); the
 *    commands name its frames from /tmp/perf-PID.map (symbols.h). An
 *    address in no executable region at all (code freed since) gets
 *    "[unmapped]" from the reader.
 *
 * Unloads that do not go through the dynamic symbol dlclose (glibc's own
 * __libc_dlclose, for gconv modules) are not seen: such frames end up in
 * "[unmapped]" or in whatever is loaded there now.
 */

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

/* The segments of before that are gone now: their MODULE entries get the
 * new gen, the stacks with a frame there are sealed. */
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
	for (size_t i = 0; i < before->n; i++)
		if (!before->present[i])
			record_module_unloaded(
				before->v[i].start, before->v[i].limit,
				before->v[i].offset, before->v[i].path, gen);
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
 * [name]". Executable regions are appended to m. */
static void maps_line(struct agent_maps *m, const char *p, const char *end)
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
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct xregion *v = arena_alloc(&agent_arena, cap * sizeof(*v));

		if (!v)
			return;
		if (m->regions)
			memcpy(v, m->regions, m->n * sizeof(*v));
		arena_free(&agent_arena, m->regions);
		m->regions = v;
		m->cap = cap;
	}
	r.name = arena_alloc(&agent_arena, (size_t)(end - p) + 1);
	if (!r.name)
		return;
	memcpy(r.name, p, (size_t)(end - p));
	r.name[end - p] = '\0';
	m->regions[m->n++] = r;
}

static void maps_visit(const char *line, size_t len, void *arg)
{
	maps_line(arg, line, line + len);
}

uint64_t agent_maps_unmapped(void *ctx, struct pprof_profile *p, uint64_t addr)
{
	struct agent_maps *m = ctx;
	size_t lo;
	struct xregion *r;

	if (!m->read) {
		/* sorted by address, as the kernel lists them */
		m->read = true;
		agent_lines("/proc/self/maps", maps_visit, m);
	}
	lo = SEARCH_AFTER(m->regions, m->n, start, addr);
	if (lo == 0 || addr >= m->regions[lo - 1].limit)
		return 0;
	r = &m->regions[lo - 1];
	return pprof_region_mapping(p, &r->id, r->start, r->limit, r->offset,
				    r->name[0] ? r->name : "[anon:jit]");
}

void agent_maps_record(const struct agent_maps *m)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct xregion *r = &m->regions[i];

		if (r->id)
			record_module_region(r->start, r->limit, r->offset,
					     r->name[0] ? r->name
							: "[anon:jit]");
	}
}

void agent_maps_free(struct agent_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		arena_free(&agent_arena, m->regions[i].name);
	arena_free(&agent_arena, m->regions);
	memset(m, 0, sizeof(*m));
}
