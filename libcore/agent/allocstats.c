/* SPDX-License-Identifier: MIT */
/* Allocator state read inside the target: its figures for the record. */
#include "common.h"
#include "agent/allocstats.h"
#include "phdr.h"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*mi_process_info_fn)(size_t *, size_t *, size_t *, size_t *,
				   size_t *, size_t *, size_t *, size_t *);
typedef int (*tc_prop_fn)(const char *, size_t *);

static struct {
	bool done;
	enum allocstats_kind kind;
	mallctl_fn mallctl;
	mi_process_info_fn mi_process_info;
	tc_prop_fn tc_prop;
	char object[256]; /* the file defining the real malloc */
} det;

/* A symbol in handle h, or anywhere (RTLD_DEFAULT) when h has none. */
static void *sym(void *h, const char *name)
{
	void *p = h ? dlsym(h, name) : NULL;

	return p ? p : dlsym(RTLD_DEFAULT, name);
}

/* Is object, a loaded object's name, the C library? */
static bool is_libc(const char *object)
{
	/* strstr() would be one more function to bind at every start */
	for (const char *p = strchr(object, '/'); p; p = strchr(p + 1, '/'))
		if (strncmp(p, "/libc.so", 8) == 0)
			return true;
	return strncmp(object, "libc.so", 7) == 0;
}

enum allocstats_kind allocstats_detect(void)
{
	void *real, *h = NULL;

	if (__atomic_load_n(&det.done, __ATOMIC_ACQUIRE))
		return det.kind;
	real = dlsym(RTLD_NEXT, "malloc");
	det.kind = ALLOCSTATS_UNKNOWN;
	/* The object's name as dladdr() gives it, without dladdr's scan of
	 * its symbol table (90,000 instructions for the C library's). */
	if (real && phdr_object_path((uintptr_t)real, det.object,
				     sizeof(det.object)) == 0) {
		/*
		 * The C library's malloc is glibc's: the library and its
		 * dependencies define none of the names asked below, and
		 * the functions found elsewhere serve the other kinds only
		 * (a dozen lookups that fail in every object saved).
		 */
		if (is_libc(det.object)) {
			det.kind = ALLOCSTATS_GLIBC;
			__atomic_store_n(&det.done, true, __ATOMIC_RELEASE);
			return det.kind;
		}
		/* The main program's dli_fname may be "": dlopen(NULL). */
		h = dlopen(det.object[0] ? det.object : NULL,
			   RTLD_LAZY | RTLD_NOLOAD);
	}
	det.mallctl = (mallctl_fn)sym(h, "mallctl");
	if (!det.mallctl)
		det.mallctl = (mallctl_fn)sym(h, "je_mallctl");
	det.mi_process_info = (mi_process_info_fn)sym(h, "mi_process_info");
	det.tc_prop = (tc_prop_fn)sym(h, "MallocExtension_GetNumericProperty");
	/*
	 * Prefer what the malloc-defining object itself has; a program may
	 * carry a second allocator's symbols (a library linked against
	 * jemalloc) without using it for malloc.
	 */
	if (h && (dlsym(h, "mallctl") || dlsym(h, "je_mallctl")))
		det.kind = ALLOCSTATS_JEMALLOC;
	else if (h && dlsym(h, "mi_process_info"))
		det.kind = ALLOCSTATS_MIMALLOC;
	else if (h && dlsym(h, "MallocExtension_GetNumericProperty"))
		det.kind = ALLOCSTATS_TCMALLOC;
	else if (is_libc(det.object))
		det.kind = ALLOCSTATS_GLIBC;
	else if (det.mallctl)
		det.kind = ALLOCSTATS_JEMALLOC;
	else if (det.mi_process_info)
		det.kind = ALLOCSTATS_MIMALLOC;
	else if (det.tc_prop)
		det.kind = ALLOCSTATS_TCMALLOC;
	if (h)
		dlclose(h);
	__atomic_store_n(&det.done, true, __ATOMIC_RELEASE);
	return det.kind;
}

size_t allocstats_malloc_info_text(char *buf, size_t cap)
{
	FILE *f;
	long pos;

	if (cap < 2)
		return 0;
	buf[0] = '\0';
	f = fmemopen(buf, cap - 1, "w");
	if (!f)
		return 0;
	/* Written through as it comes: a text cut at cap keeps its start. */
	setvbuf(f, NULL, _IONBF, 0);
	if (malloc_info(0, f) != 0) {
		fclose(f);
		buf[0] = '\0';
		return 0;
	}
	pos = ftell(f);
	fclose(f);
	if (pos < 0)
		pos = 0;
	if ((size_t)pos > cap - 1)
		pos = (long)(cap - 1);
	buf[pos] = '\0';
	return (size_t)pos;
}

static void glibc_comparable(struct allocstats_comparable *c,
			     const struct mallinfo2 *mi, int heaps)
{
	c->allocated_bytes = (int64_t)(mi->uordblks + mi->hblkhd);
	c->mapped_bytes = (int64_t)(mi->arena + mi->hblkhd);
	c->free_bytes = (int64_t)mi->fordblks;
	c->arena_count = heaps > 0 ? heaps : -1;
}

/* ---- jemalloc ---- */

static int64_t je_size(const char *name)
{
	size_t v = 0, sz = sizeof(v);

	if (!det.mallctl || det.mallctl(name, &v, &sz, NULL, 0) != 0 ||
	    sz != sizeof(v))
		return -1;
	return (int64_t)v;
}

static int64_t je_unsigned(const char *name)
{
	unsigned v = 0;
	size_t sz = sizeof(v);

	if (!det.mallctl || det.mallctl(name, &v, &sz, NULL, 0) != 0 ||
	    sz != sizeof(v))
		return -1;
	return v;
}

/* Bump "epoch" so that the stats.* values are refreshed. */
static void je_refresh(void)
{
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);

	if (det.mallctl)
		det.mallctl("epoch", &epoch, &sz, &epoch, sz);
}

static void je_comparable(struct allocstats_comparable *c)
{
	c->allocated_bytes = je_size("stats.allocated");
	c->active_bytes = je_size("stats.active");
	c->resident_bytes = je_size("stats.resident");
	c->mapped_bytes = je_size("stats.mapped");
	c->retained_bytes = je_size("stats.retained");
	c->metadata_bytes = je_size("stats.metadata");
	c->arena_count = je_unsigned("arenas.narenas");
	/* Free space inside the active pages: what fragmentation holds. */
	if (c->active_bytes >= 0 && c->allocated_bytes >= 0)
		c->free_bytes = c->active_bytes - c->allocated_bytes;
}

/* ---- mimalloc ---- */

struct mi_info {
	size_t elapsed_ms, user_ms, system_ms, current_rss, peak_rss,
		current_commit, peak_commit, page_faults;
};

static void mi_get(struct mi_info *m)
{
	memset(m, 0, sizeof(*m));
	det.mi_process_info(&m->elapsed_ms, &m->user_ms, &m->system_ms,
			    &m->current_rss, &m->peak_rss, &m->current_commit,
			    &m->peak_commit, &m->page_faults);
}

static void mi_comparable(struct allocstats_comparable *c)
{
	struct mi_info m;

	mi_get(&m);
	/*
	 * mimalloc's "current_rss" is its commit charge on Linux (it does
	 * not read /proc): resident stays null rather than repeat mapped.
	 */
	c->mapped_bytes = (int64_t)m.current_commit;
}

/* ---- tcmalloc ---- */

static int64_t tc_get(const char *name)
{
	size_t v = 0;

	if (!det.tc_prop || !det.tc_prop(name, &v))
		return -1;
	return (int64_t)v;
}

static void tc_comparable(struct allocstats_comparable *c)
{
	int64_t heap = tc_get("generic.heap_size");
	int64_t unmapped = tc_get("tcmalloc.pageheap_unmapped_bytes");

	c->allocated_bytes = tc_get("generic.current_allocated_bytes");
	c->resident_bytes = tc_get("generic.total_physical_bytes");
	c->mapped_bytes = heap >= 0 && unmapped >= 0 ? heap - unmapped : -1;
	c->retained_bytes = unmapped;
	c->free_bytes = tc_get("tcmalloc.pageheap_free_bytes");
}

/* ---- common ---- */

static void comparable_init(struct allocstats_comparable *c)
{
	memset(c, 0xff, sizeof(*c));
}

enum allocstats_kind allocstats_comparable(struct allocstats_comparable *c)
{
	enum allocstats_kind k = allocstats_detect();

	comparable_init(c);
	switch (k) {
	case ALLOCSTATS_GLIBC: {
		/* mallinfo2 only: malloc_info would walk every free list
		 * a second time just to count the arenas. */
		struct mallinfo2 mi = mallinfo2();

		glibc_comparable(c, &mi, -1);
		break;
	}
	case ALLOCSTATS_JEMALLOC:
		je_refresh();
		je_comparable(c);
		break;
	case ALLOCSTATS_MIMALLOC:
		mi_comparable(c);
		break;
	case ALLOCSTATS_TCMALLOC:
		tc_comparable(c);
		break;
	default:
		break;
	}
	return k;
}
