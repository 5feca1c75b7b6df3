/* SPDX-License-Identifier: MIT */
/* palloc-explain's arithmetic: Rss or cgroup usage as a sum of named parts. */
#include "common.h"
#include "explain.h"
#include "allocinfo.h"
#include "cgroup.h"
#include "cli.h"
#include "json.h"
#include "msg.h"
#include "pprof.h"
#include "procfs.h"
#include "prom.h"
#include "report.h"
#include "symbols.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <unistd.h>

/*
 * glibc's HEAP_MAX_SIZE on 64-bit (malloc/arena.c: 2 *
 * DEFAULT_MMAP_THRESHOLD_MAX = 2 * 4 MiB * sizeof(long)): every arena but
 * the main one lives in heaps of this size, aligned to it, whose unused
 * tail is PROT_NONE.
 */
#define GLIBC_HEAP_MAX ((uint64_t)64 << 20)

/*
 * mimalloc asks the kernel for its segments at hinted, aligned addresses
 * from 2 TiB up, wrapping before 32 TiB (src/os.c: MI_HINT_BASE,
 * MI_HINT_MAX), far below where Linux puts other mmaps (near 128 TiB)
 * and the program's brk. Allocations above 1 GiB get no hint.
 */
#define MIMALLOC_HINT_BASE ((uint64_t)2 << 40)
#define MIMALLOC_HINT_END ((uint64_t)32 << 40)

/* What the per-mapping walk over smaps found, resident bytes. */
struct walk {
	uint64_t smaps_rss;
	uint64_t special, shmem, text, data, mapped, main_stack, stacks, exec;
	uint64_t brk;	  /* [heap] */
	uint64_t arena;	  /* glibc arena heaps found by their shape */
	uint64_t outside; /* other private anonymous memory */
	size_t arena_heaps;
	struct explain_doc *doc; /* the stacks found go there */
};

struct task_sp {
	pid_t tid;
	uint64_t sp;
	char comm[32];
};

/* ---- reading ---- */

/* The stack pointers of PID's threads from /proc/PID/task/TID/syscall
 * (the next-to-last field; readable by the process's owner when ptrace
 * would be allowed). Threads whose file cannot be read are left out. */
static struct task_sp *read_task_sps(const char *root, pid_t pid, size_t *n)
{
	char path[PATH_MAX];
	struct task_sp *v = NULL;
	size_t cap = 0;
	struct dirent *e;
	DIR *d;

	*n = 0;
	snprintf(path, sizeof(path), "%s/proc/%d/task", root, (int)pid);
	d = opendir(path);
	if (!d)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		char *buf = NULL, *last, *prev;
		size_t len;
		long tid = strtol(e->d_name, &last, 10);

		if (*last || tid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/proc/%d/task/%ld/syscall",
			 root, (int)pid, tid);
		if (procfs_read_file(path, &buf, &len) < 0)
			continue;
		while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
			buf[--len] = '\0';
		last = strrchr(buf, ' ');
		if (last) {
			*last = '\0';
			prev = strrchr(buf, ' ');
			if (prev && *n == cap) {
				struct task_sp *nv;

				cap = cap ? cap * 2 : 16;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(buf);
					break;
				}
				v = nv;
			}
			if (prev) {
				struct task_sp *t = &v[(*n)++];

				t->tid = (pid_t)tid;
				t->sp = strtoull(prev + 1, NULL, 0);
				procfs_read_comm(root, (pid_t)tid, t->comm,
						 sizeof(t->comm));
			}
		}
		free(buf);
	}
	closedir(d);
	return v;
}

/*
 * Resident bytes of [start, end) of PID from /proc/PID/pagemap (bit 63:
 * page present; Documentation/admin-guide/mm/pagemap.rst), or -1 when it
 * cannot be read.
 */
static int64_t pagemap_resident(const char *root, pid_t pid, uint64_t start,
				uint64_t end)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t buf[512], vpn, last, present = 0;
	char path[PATH_MAX];
	int fd;

	if (page <= 0 || root[0])
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	last = end / (uint64_t)page;
	for (vpn = start / (uint64_t)page; vpn < last;) {
		size_t want = last - vpn < 512 ? (size_t)(last - vpn) : 512;
		ssize_t got = pread(fd, buf, want * 8, (off_t)(vpn * 8));

		if (got <= 0) {
			close(fd);
			return -1;
		}
		for (size_t i = 0; i < (size_t)got / 8; i++)
			present += buf[i] >> 63;
		vpn += (uint64_t)got / 8;
	}
	close(fd);
	return (int64_t)(present * (uint64_t)page);
}

/* Whether the run of mappings with M's path (an ELF object's segments are
 * adjacent) has an executable one. */
static bool object_has_exec(const struct procfs_smaps *s, size_t i)
{
	const char *path = s->maps[i].path;
	size_t j;

	if (!path)
		return false;
	for (j = i;
	     j < s->n && s->maps[j].path && strcmp(s->maps[j].path, path) == 0;
	     j++)
		if (s->maps[j].perms[2] == 'x')
			return true;
	for (j = i;
	     j-- > 0 && s->maps[j].path && strcmp(s->maps[j].path, path) == 0;)
		if (s->maps[j].perms[2] == 'x')
			return true;
	return false;
}

/*
 * The part of anonymous rw mapping I that is a glibc arena heap: from the
 * first HEAP_MAX-aligned address A in it, when the heap's extent ends at
 * A + HEAP_MAX (the mapping alone, or its PROT_NONE tail after it).
 */
static bool glibc_heap_part(const struct procfs_smaps *s, size_t i,
			    uint64_t *from, bool *full)
{
	const struct procfs_mapping *m = &s->maps[i], *next;
	uint64_t a = (m->start + GLIBC_HEAP_MAX - 1) & ~(GLIBC_HEAP_MAX - 1);

	if (a >= m->end)
		return false;
	*from = a;
	*full = m->end - a == GLIBC_HEAP_MAX;
	if (*full)
		return true;
	if (i + 1 >= s->n)
		return false;
	next = &s->maps[i + 1];
	return !next->path && next->start == m->end &&
	       strcmp(next->perms, "---p") == 0 &&
	       next->end >= a + GLIBC_HEAP_MAX;
}

/*
 * Room for one more element of size SIZE in *V (N used): doubled when
 * full. Returns false (DOC->oom set) when out of memory.
 */
static bool grow(struct explain_doc *doc, void **v, size_t n, size_t size)
{
	void *nv;

	/* Powers of two: full at n = 0, 1, 2, 4, 8... */
	if (n & (n - 1) && n)
		return true;
	nv = realloc(*v, (n ? 2 * n : 1) * size);
	if (!nv) {
		doc->oom = true;
		return false;
	}
	*v = nv;
	return true;
}

static void add_stack(struct walk *w, const struct procfs_mapping *m,
		      const struct task_sp *t, const char *found_by)
{
	struct explain_doc *d = w->doc;
	struct explain_stack *st;

	if (!grow(d, (void **)&d->stacks, d->nstacks, sizeof(*st)))
		return;
	st = &d->stacks[d->nstacks++];
	memset(st, 0, sizeof(*st));
	st->start = m->start;
	st->end = m->end;
	st->rss = m->usage.v[PROCFS_RSS];
	st->have_tid = t != NULL;
	st->tid = t ? t->tid : 0;
	if (t)
		snprintf(st->thread, sizeof(st->thread), "%s", t->comm);
	st->found_by = found_by;
}

/* Sort every mapping of S into W's buckets. */
static void walk_maps(const struct procfs_smaps *s, const char *root, pid_t pid,
		      bool glibc, bool mimalloc, const struct task_sp *sps,
		      size_t nsps, uint64_t arena_system, struct walk *w)
{
	uint64_t from, budget = arena_system;
	bool full;

	/*
	 * A heap grown to its whole 64 MiB has no PROT_NONE tail and looks
	 * like any aligned 64 MiB mmap: take such ones only while glibc's
	 * non-main arenas (malloc_info's system bytes) have room for them
	 * after the heaps that do have a tail.
	 */
	for (size_t i = 0; glibc && i < s->n; i++)
		if (s->maps[i].kind == PROCFS_KIND_ANON &&
		    strcmp(s->maps[i].perms, "rw-p") == 0 &&
		    glibc_heap_part(s, i, &from, &full) && !full)
			budget -= budget < s->maps[i].end - from
					  ? budget
					  : s->maps[i].end - from;
	for (size_t i = 0; i < s->n; i++) {
		const struct procfs_mapping *m = &s->maps[i];
		const struct procfs_mapping *prev = i ? &s->maps[i - 1] : NULL;
		uint64_t rss = m->usage.v[PROCFS_RSS];
		const struct task_sp *t = NULL;

		w->smaps_rss += rss;
		for (size_t k = 0; k < nsps; k++)
			if (sps[k].sp >= m->start && sps[k].sp < m->end)
				t = &sps[k];
		switch (m->kind) {
		case PROCFS_KIND_SPECIAL:
			w->special += rss;
			continue;
		case PROCFS_KIND_SHMEM:
			w->shmem += rss;
			continue;
		case PROCFS_KIND_FILE:
			if (!object_has_exec(s, i))
				w->mapped += rss;
			else if (m->perms[2] == 'x')
				w->text += rss;
			else
				w->data += rss;
			continue;
		case PROCFS_KIND_HEAP:
			w->brk += rss;
			continue;
		case PROCFS_KIND_STACK:
			if (m->path && strcmp(m->path, "[stack]") == 0) {
				w->main_stack += rss;
				continue;
			}
			w->stacks += rss;
			add_stack(w, m, t, t ? "stack_pointer" : "guard_page");
			continue;
		case PROCFS_KIND_ANON:
			break;
		}
		if (t) {
			w->stacks += rss;
			add_stack(w, m, t, "stack_pointer");
		} else if (m->perms[2] == 'x') {
			w->exec += rss;
		} else if (prev && prev->kind == PROCFS_KIND_FILE &&
			   prev->end == m->start && object_has_exec(s, i - 1) &&
			   strcmp(m->perms, "rw-p") == 0) {
			w->data += rss; /* the object's .bss */
		} else if (mimalloc && m->start >= MIMALLOC_HINT_BASE &&
			   m->start < MIMALLOC_HINT_END) {
			w->arena += rss;
			w->arena_heaps++;
		} else if (glibc && strcmp(m->perms, "rw-p") == 0 &&
			   glibc_heap_part(s, i, &from, &full) &&
			   (!full || budget >= GLIBC_HEAP_MAX)) {
			if (full)
				budget -= GLIBC_HEAP_MAX;
			int64_t r = rss;

			if (from > m->start) {
				r = pagemap_resident(root, pid, from, m->end);
				if (r < 0)
					r = (int64_t)((double)rss *
						      (double)(m->end - from) /
						      (double)(m->end -
							       m->start));
				if ((uint64_t)r > rss)
					r = (int64_t)rss;
			}
			w->arena += (uint64_t)r;
			w->outside += rss - (uint64_t)r;
			w->arena_heaps++;
		} else {
			w->outside += rss;
		}
	}
}

/* ---- the document ---- */

/* A part of DOC's total (DOC->explained sums the known ones). */
static struct explain_part *part(struct explain_doc *p, const char *layer,
				 const char *name, bool have, int64_t bytes,
				 const char *basis, const char *description)
{
	static struct explain_part spare; /* past EXPLAIN_MAX_PARTS: unused */
	struct explain_part *o =
		p->nparts < EXPLAIN_MAX_PARTS ? &p->parts[p->nparts++] : &spare;

	memset(o, 0, sizeof(*o));
	o->layer = layer;
	o->name = name;
	o->have = have;
	o->bytes = have ? bytes : 0;
	o->basis = basis;
	o->description = description;
	if (have)
		p->explained += bytes;
	return o;
}

/* The sampled profile's inuse_space: total with its sigma, and the top
 * sites into SITES. Returns false when there is no profile. */
static bool profile_inuse(pid_t pid, const struct explain_opts *o, int64_t *sum,
			  double *sd, struct explain_doc *doc)
{
	struct pprof_profile *p =
		allocinfo_get_profile(pid, "/debug/pprof/heap", o->timeout_ms);
	struct report *r;
	int idx;

	if (!p)
		return false;
	if (!o->no_symbolize && o->top) {
		char root[64];

		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		symbols_symbolize(p, root, NULL);
	}
	idx = pprof_sample_type_index(p, "inuse_space");
	r = idx >= 0 ? report_by_function(p, idx) : NULL;
	pprof_free(p);
	if (!r)
		return false;
	*sum = r->sum;
	*sd = r->has_stddev ? r->sum_stddev : NAN;
	for (size_t i = 0; i < r->n_rows && i < o->top; i++) {
		const struct report_row *row = &r->rows[i];
		struct explain_site *s;
		int64_t lo = 0, hi = 0;
		bool ci = r->has_stddev &&
			  report_interval(row->flat, row->flat_stddev, true,
					  &lo, &hi);

		if (row->flat <= 0 ||
		    !grow(doc, (void **)&doc->sites, doc->nsites, sizeof(*s)))
			break;
		s = &doc->sites[doc->nsites++];
		s->function = row->name ? strdup(row->name) : NULL;
		doc->oom |= row->name && !s->function;
		s->inuse = row->flat;
		s->have_ci = ci;
		s->ci_low = ci ? lo : 0;
		s->ci_high = ci ? hi : 0;
	}
	report_free(r);
	return true;
}

/* A comparable or specific integer, or -1. */
static int64_t get_int(const json_t *obj, const char *a, const char *b)
{
	const json_t *x = json_object_get(obj, a);

	return b ? allocinfo_int(x, b) : allocinfo_int(obj, a);
}

static void add_note(struct explain_doc *doc, const char *s)
{
	char *copy;

	if (!grow(doc, (void **)&doc->notes, doc->nnotes, sizeof(char *)))
		return;
	copy = strdup(s);
	if (!copy) {
		doc->oom = true;
		return;
	}
	doc->notes[doc->nnotes++] = copy;
}

/* The per-arena lines of the allocator, as the agent gave them. */
static json_t *arenas_of(const json_t *mallinfo, bool glibc)
{
	const json_t *arenas = json_object_get(
		json_object_get(mallinfo, "specific"), "arenas");
	json_t *out = json_array();

	for (size_t i = 0; i < json_array_size(arenas); i++) {
		const json_t *a = json_array_get(arenas, i);
		json_t *o = json_object();

		json_set(o, "index", json_integer(allocinfo_int(a, "index")));
		if (glibc) {
			int64_t f = allocinfo_int(a, "fast_bytes");
			int64_t r = allocinfo_int(a, "rest_bytes");

			json_set(o, "system_bytes",
				 json_i64_or_null(
					 true,
					 allocinfo_int(
						 a, "system_current_bytes")));
			json_set(o, "free_bytes",
				 json_i64_or_null(f >= 0 && r >= 0, f + r));
		} else {
			int64_t v;

			v = allocinfo_int(a, "active_bytes");
			json_set(o, "active_bytes",
				 json_i64_or_null(v >= 0, v));
			v = allocinfo_int(a, "dirty_bytes");
			json_set(o, "dirty_bytes", json_i64_or_null(v >= 0, v));
			v = allocinfo_int(a, "muzzy_bytes");
			json_set(o, "muzzy_bytes", json_i64_or_null(v >= 0, v));
			v = allocinfo_int(a, "thread_count");
			json_set(o, "thread_count",
				 json_i64_or_null(v >= 0, v));
		}
		json_push(out, o);
	}
	return out;
}

/*
 * The sum over the allocator's arenas (mallinfo's specific.arenas) of
 * the positive values of KEY and, unless NULL, KEY2; with SKIP_MAIN only
 * over arenas whose index is above 0. Bytes; 0 without arenas. Used for
 * glibc's non-main arenas' system bytes (walk_maps' budget) and
 * jemalloc's dirty and muzzy pages.
 */
static int64_t arenas_sum(const json_t *mallinfo, const char *key,
			  const char *key2, bool skip_main)
{
	const json_t *arenas = json_object_get(
		json_object_get(mallinfo, "specific"), "arenas");
	int64_t sum = 0;

	for (size_t i = 0; i < json_array_size(arenas); i++) {
		const json_t *x = json_array_get(arenas, i);
		int64_t a = allocinfo_int(x, key);
		int64_t b = key2 ? allocinfo_int(x, key2) : 0;

		if (skip_main && allocinfo_int(x, "index") <= 0)
			continue;
		sum += (a > 0 ? a : 0) + (b > 0 ? b : 0);
	}
	return sum;
}

struct agent_view {
	json_t *stats, *mallinfo;
	const char *allocator;
	bool glibc, mimalloc;
	/* requested bytes in use */
	bool have_req;
	int64_t req;
	const char *req_source; /* "exact", "sampled" */
	double req_sd;		/* NAN unless sampled with error bars */
	bool have_sampled;
	int64_t sampled;
	/* palloc-run -p: blocks from before the attach are unknown to it */
	bool attached;
};

static void agent_fetch(pid_t pid, const struct explain_opts *o,
			struct agent_view *a, struct explain_doc *doc)
{
	char why[MSG_MAX];
	int64_t rate, sum = 0;
	double sd = NAN;

	memset(a, 0, sizeof(*a));
	a->req_sd = NAN;
	if (o->no_agent || (o->root && o->root[0]))
		return;
	a->stats =
		allocinfo_get_json(pid, "/debug/palloc/stats", o->timeout_ms);
	if (a->stats)
		a->mallinfo = allocinfo_get_json(pid, "/debug/palloc/mallinfo",
						 o->timeout_ms);
	if (!a->stats || !a->mallinfo) {
		snprintf(why, sizeof(why),
			 "no agent answered (%s): the heap and the allocator's "
			 "parts are unknown",
			 msg_last());
		add_note(doc, why);
		json_decref(a->stats);
		a->stats = NULL;
		return;
	}
	a->allocator =
		json_string_value(json_object_get(a->mallinfo, "allocator"));
	a->glibc = a->allocator && strcmp(a->allocator, "glibc") == 0;
	a->mimalloc = a->allocator && strcmp(a->allocator, "mimalloc") == 0;
	a->attached = json_is_true(json_object_get(a->stats, "attached"));
	rate = allocinfo_int(a->stats, "sample_rate");
	if (rate > 0 && profile_inuse(pid, o, &sum, &sd, doc)) {
		a->have_sampled = true;
		a->sampled = sum;
	} else if (allocinfo_int(a->stats, "sampled_inuse_bytes") >= 0 &&
		   rate > 0) {
		a->have_sampled = true;
		a->sampled = allocinfo_int(a->stats, "sampled_inuse_bytes");
	}
	if (json_is_true(json_object_get(a->stats, "exact")) &&
	    allocinfo_int(a->stats, "inuse_bytes") >= 0) {
		a->have_req = true;
		a->req = allocinfo_int(a->stats, "inuse_bytes");
		a->req_source = "exact_usable";
	} else if (a->have_sampled) {
		a->have_req = true;
		a->req = a->sampled;
		a->req_sd = sd;
		a->req_source = "sampled";
	}
}

/* The glibc heap and arenas, reconciled with the kernel's arenas. */
struct alloc_parts {
	bool have_alloc, have_free, have_meta, have_footprint;
	int64_t allocated, free, meta, footprint_outside;
	int64_t reported_free, not_resident;
	const char *free_basis, *meta_basis;
};

static void allocator_parts(const struct agent_view *a, const struct walk *w,
			    struct alloc_parts *ap, json_t *detail,
			    struct explain_doc *doc)
{
	const json_t *cmp = json_object_get(a->mallinfo, "comparable");
	int64_t allocated = get_int(cmp, "allocated_bytes", NULL);
	int64_t meta = get_int(cmp, "metadata_bytes", NULL);
	int64_t resident = get_int(cmp, "resident_bytes", NULL);
	int64_t mapped = get_int(cmp, "mapped_bytes", NULL);
	int64_t rfree = get_int(cmp, "free_bytes", NULL);
	int64_t retained = get_int(cmp, "retained_bytes", NULL);

	memset(ap, 0, sizeof(*ap));
	ap->have_alloc = allocated >= 0;
	ap->allocated = allocated;
	ap->have_meta = meta >= 0;
	ap->meta = meta;
	ap->reported_free = rfree;
	if (a->glibc) {
		const json_t *mi2 = json_object_get(
			json_object_get(a->mallinfo, "specific"), "mallinfo2");
		int64_t uord = allocinfo_int(mi2, "uordblks_bytes");
		int64_t ford = allocinfo_int(mi2, "fordblks_bytes");
		int64_t hblkhd = allocinfo_int(mi2, "hblkhd_bytes");
		int64_t k = (int64_t)(w->brk + w->arena);

		if (uord >= 0 && ford >= 0 && hblkhd >= 0) {
			int64_t f = k - uord;

			if (f < 0)
				f = 0;
			if (f > ford)
				f = ford;
			ap->have_free = true;
			ap->free = f;
			ap->not_resident = ford - f;
			ap->free_basis = "reconciled";
			ap->have_footprint = true;
			ap->footprint_outside = hblkhd < (int64_t)w->outside
							? hblkhd
							: (int64_t)w->outside;
		}
		json_set(detail, "kernel_arena_resident_bytes", json_u64(k));
		json_set(detail, "arena_heap_count",
			 json_u64(w->arena_heaps + (w->brk ? 1 : 0)));
		json_set(detail, "mmapped_bytes",
			 json_i64_or_null(hblkhd >= 0, hblkhd));
		json_set(
			detail, "arena_system_bytes",
			json_i64_or_null(allocinfo_int(mi2, "arena_bytes") >= 0,
					 allocinfo_int(mi2, "arena_bytes")));
	} else if (a->mimalloc) {
		/* Its segments, found in its hint area: resident bytes. */
		int64_t f = (int64_t)w->arena - (a->have_req ? a->req : 0);

		if (a->have_req) {
			ap->have_free = true;
			ap->free = f > 0 ? f : 0;
			ap->free_basis = "reconciled";
			ap->have_footprint = true;
			ap->footprint_outside = 0;
		}
		json_set(detail, "kernel_segment_resident_bytes",
			 json_u64(w->arena));
		json_set(detail, "segment_mapping_count",
			 json_u64(w->arena_heaps));
		add_note(doc, "mimalloc's segments are the anonymous "
			      "mappings in its address hint area (2 to 32 "
			      "TiB), a heuristic; it does not report its "
			      "allocated bytes, so its overhead is counted "
			      "in allocator_free");
	} else {
		int64_t fp = resident >= 0 ? resident : mapped;
		int64_t base = allocated >= 0 ? allocated : a->req;
		int64_t anon = (int64_t)(w->outside + w->brk);

		if (fp > anon)
			fp = anon; /* it cannot hold more than all of it */
		if (fp >= 0 && allocated >= 0 && rfree >= 0 &&
		    get_int(cmp, "active_bytes", NULL) >= 0) {
			/*
			 * jemalloc: free pages as it counts them (inside
			 * active pages, dirty and muzzy ones); its metadata
			 * counts base pages never touched, so only what the
			 * resident footprint leaves for it is resident.
			 */
			int64_t f =
				rfree + arenas_sum(a->mallinfo, "dirty_bytes",
						   "muzzy_bytes", false);
			int64_t mr = fp - allocated - f;

			ap->have_free = true;
			ap->free = f;
			ap->free_basis = "allocator";
			ap->have_meta = meta >= 0;
			ap->meta = mr < 0 ? 0 : mr > meta ? meta : mr;
			ap->meta_basis = "reconciled";
			ap->have_footprint = true;
			ap->footprint_outside = allocated + f + ap->meta;
			ap->not_resident = -1;
		} else if (fp >= 0 && (allocated >= 0 || a->have_req)) {
			int64_t f = fp - base - (meta > 0 ? meta : 0);

			ap->have_free = true;
			ap->free = f > 0 ? f : 0;
			ap->free_basis = "allocator";
			ap->have_footprint = true;
			ap->footprint_outside = fp;
			ap->not_resident = -1;
		}
		if (resident < 0 && mapped >= 0)
			add_note(doc, "the allocator reports no resident "
				      "bytes: its mapped bytes stand for "
				      "them");
		if (allocated < 0)
			add_note(doc, "the allocator does not report its "
				      "allocated bytes: its overhead is "
				      "counted in allocator_free");
	}
	json_set(detail, "allocator", json_str_or_null(a->allocator));
	json_set(detail, "allocated_bytes",
		 json_i64_or_null(allocated >= 0, allocated));
	json_set(detail, "resident_bytes",
		 json_i64_or_null(resident >= 0, resident));
	json_set(detail, "mapped_bytes", json_i64_or_null(mapped >= 0, mapped));
	json_set(detail, "retained_bytes",
		 json_i64_or_null(retained >= 0, retained));
	json_set(detail, "metadata_bytes", json_i64_or_null(meta >= 0, meta));
	json_set(detail, "reported_free_bytes",
		 json_i64_or_null(rfree >= 0, rfree));
	json_set(detail, "not_resident_free_bytes",
		 json_i64_or_null(ap->not_resident >= 0 && ap->have_free,
				  ap->not_resident));
	json_set(detail, "arenas", arenas_of(a->mallinfo, a->glibc));
}

/* The end of either document: what the parts leave unexplained, and
 * whether a list ran out of memory. */
static int finish(struct explain_doc *doc)
{
	doc->unexplained = (int64_t)doc->total - doc->explained;
	doc->time_ns = cli_now_ns();
	if (doc->oom) {
		explain_doc_free(doc);
		return msg_set("out of memory");
	}
	return 0;
}

int explain_process(pid_t pid, const struct explain_opts *o,
		    struct explain_doc *doc)
{
	const char *root = o->root ? o->root : "";
	struct procfs_usage u;
	struct procfs_smaps s;
	struct task_sp *sps;
	struct agent_view a;
	struct alloc_parts ap = {0};
	struct walk w = {.doc = doc};
	struct explain_doc *p = doc;
	size_t nsps = 0;
	bool summed = false, agent, exact;
	json_t *detail;
	struct explain_part *hp;
	int64_t outside;
	uint64_t arena_sys = 0; /* glibc's non-main arenas' system bytes */

	memset(doc, 0, sizeof(*doc));
	if (procfs_read_rollup(root, pid, &u, &summed) < 0)
		return -1;
	if (procfs_read_smaps(root, pid, &s) < 0) {
		procfs_usage_free(&u);
		return -1;
	}
	procfs_read_comm(root, pid, doc->program, sizeof(doc->program));
	detail = json_object();
	doc->process = true;
	doc->have_pid = true;
	doc->pid = pid;
	doc->have_total = true;
	doc->total = u.v[PROCFS_RSS];

	agent_fetch(pid, o, &a, doc);
	agent = a.stats != NULL;
	sps = read_task_sps(root, pid, &nsps);
	if (agent)
		arena_sys = (uint64_t)arenas_sum(
			a.mallinfo, "system_current_bytes", NULL, true);
	walk_maps(&s, root, pid, agent && a.glibc, agent && a.mimalloc, sps,
		  nsps, arena_sys, &w);
	free(sps);
	if (agent)
		allocator_parts(&a, &w, &ap, detail, doc);

	doc->rss_source = summed ? "smaps" : "smaps_rollup";
	doc->agent = agent;
	doc->attached = a.attached;
	if (agent && a.allocator)
		snprintf(doc->allocator, sizeof(doc->allocator), "%s",
			 a.allocator);
	doc->heap_inuse_source = a.have_req ? a.req_source : NULL;

	exact = a.have_req && strcmp(a.req_source, "exact_usable") == 0;
	hp = part(p, "profile", "heap_inuse", a.have_req, a.req,
		  exact ? "agent" : "profile",
		  exact ? "heap in use: live blocks' usable sizes, counted "
			  "exactly by the agent"
			: "heap in use as the program requested it (sampled "
			  "estimate)");
	{
		int64_t lo = 0, hi = 0;
		bool ci = a.have_req && strcmp(a.req_source, "sampled") == 0 &&
			  report_interval(a.req, a.req_sd, true, &lo, &hi);

		hp->heap = true;
		hp->have_ci = ci;
		hp->ci_low = ci ? lo : 0;
		hp->ci_high = ci ? hi : 0;
		hp->have_sampled = a.have_sampled;
		hp->sampled = a.have_sampled ? a.sampled : 0;
	}
	if (a.attached) {
		/* The allocator's in-use total holds the blocks from before
		 * the attach, which the agent never saw: no overhead can be
		 * told apart from them. */
		part(p, "profile", "heap_before_attach",
		     a.have_req && ap.have_alloc, ap.allocated - a.req,
		     "remainder",
		     "before the attach: blocks allocated before palloc-run "
		     "-p attached, with every block's allocator overhead "
		     "(the allocator's in-use bytes minus the heap seen)");
		part(p, "allocator", "allocator_overhead", false, 0,
		     "allocator",
		     "allocated minus requested: within heap_before_attach "
		     "for an attached process");
	} else {
		part(p, "allocator", "allocator_overhead",
		     a.have_req && ap.have_alloc, ap.allocated - a.req,
		     "allocator",
		     "allocated minus requested: size classes, headers, "
		     "alignment");
	}
	part(p, "allocator", "allocator_free", ap.have_free, ap.free,
	     ap.free_basis ? ap.free_basis : "allocator",
	     "resident memory the allocator holds free: "
	     "fragmentation, cached and dirty pages");
	part(p, "allocator", "allocator_metadata", ap.have_meta, ap.meta,
	     ap.meta_basis ? ap.meta_basis : "allocator",
	     "the allocator's own bookkeeping");
	outside = (int64_t)w.outside + (a.glibc ? 0 : (int64_t)w.brk);
	if (ap.have_footprint) {
		int64_t d = outside - ap.footprint_outside;

		part(p, "kernel", "direct_mmap", true, d > 0 ? d : 0,
		     "remainder",
		     "anonymous memory mapped outside the "
		     "allocator (mmap, brk)");
	} else {
		part(p, "kernel", "direct_mmap", false, 0, "remainder",
		     "anonymous memory mapped outside the "
		     "allocator (mmap, brk)");
		part(p, "kernel", "anonymous_unattributed", true,
		     outside + (int64_t)w.arena +
			     (a.glibc ? (int64_t)w.brk : 0),
		     "kernel",
		     "heap and anonymous mappings, not told "
		     "apart without the agent");
	}
	{
		/* The buckets of the walk over smaps, in the document's order.
		 */
		const struct {
			const char *name;
			uint64_t bytes;
			const char *description;
		} kparts[] = {
			{"anonymous_exec", w.exec,
			 "executable anonymous memory (JIT code)"},
			{"thread_stacks", w.stacks,
			 "thread stacks (guard page heuristic, stack "
			 "pointers)"},
			{"main_stack", w.main_stack, "the main thread's stack"},
			{"file_text", w.text,
			 "code of the program and its libraries"},
			{"file_data", w.data,
			 "data of the program and its libraries (rodata, "
			 "data, bss)"},
			{"mapped_files", w.mapped, "other mapped files"},
			{"shmem", w.shmem,
			 "shared memory (shmem, SysV, memfd)"},
			{"special", w.special,
			 "[vdso] and other kernel mappings"},
		};

		for (size_t i = 0; i < ARRAY_SIZE(kparts); i++)
			part(p, "kernel", kparts[i].name, true,
			     (int64_t)kparts[i].bytes, "kernel",
			     kparts[i].description);
	}
	doc->smaps_rss = w.smaps_rss;
	if (agent)
		doc->allocator_detail = detail;
	else
		json_decref(detail);
	if (doc->nstacks)
		add_note(doc,
			 "thread stacks: mappings holding a thread's stack "
			 "pointer (task/TID/syscall), else private anonymous "
			 "memory directly above a PROT_NONE guard of at most "
			 "64 KiB (a heuristic: glibc's layout)");
	json_decref(a.stats);
	json_decref(a.mallinfo);
	procfs_smaps_free(&s);
	procfs_usage_free(&u);
	doc->oom |= json_failed();
	return finish(doc);
}

/* ---- cgroup ---- */

static bool stat_get(const struct cgroup_mem *m, const char *key, int64_t *v)
{
	uint64_t x;

	if (!cgroup_stat_get(m, key, &x))
		return false;
	*v = (int64_t)x;
	return true;
}

/* A part from a memory.stat key (null when the kernel has no such key). */
static int64_t stat_part(struct explain_doc *p, const struct cgroup_mem *m,
			 const char *layer, const char *name, const char *key,
			 const char *description)
{
	int64_t v = 0;
	bool have = stat_get(m, key, &v);

	part(p, layer, name, have, v, "cgroup", description);
	return have ? v : 0;
}

/* memory.stat's keys for the page cache parts, as a version spells them. */
struct cache_keys {
	const char *anon, *active, *inactive, *shmem;
	const char *total;	/* the whole page cache */
	const char *other_desc; /* page_cache_other's description */
};

static const struct cache_keys cache_keys_v2 = {
	"anon",	 "active_file", "inactive_file",
	"shmem", "file",	"other file pages (unevictable, mlocked)",
};

static const struct cache_keys cache_keys_v1 = {
	"total_rss",   "total_active_file", "total_inactive_file",
	"total_shmem", "total_cache",	    "other cache pages (unevictable)",
};

/* The anonymous memory and page cache parts of a cgroup (either
 * version): page_cache_other is the whole page cache minus its active and
 * inactive lists and shmem, left out when the kernel has no such key. */
static void cache_parts(struct explain_doc *p, const struct cgroup_mem *m,
			const struct cache_keys *k)
{
	int64_t af, inf, sh, total, v;

	stat_part(p, m, "kernel", "anon", k->anon,
		  "anonymous memory of the processes");
	af = stat_part(p, m, "kernel", "page_cache_active", k->active,
		       "page cache, active list");
	inf = stat_part(p, m, "kernel", "page_cache_inactive", k->inactive,
			"page cache, inactive list (reclaimed first)");
	sh = stat_part(p, m, "kernel", "shmem", k->shmem,
		       "shared memory and tmpfs");
	if (stat_get(m, k->total, &total)) {
		v = total - af - inf - sh;
		part(p, "kernel", "page_cache_other", true, v > 0 ? v : 0,
		     "remainder", k->other_desc);
	}
}

/* v1's kernel memory: memory.kmem.usage_in_bytes, when accounted. */
static bool v1_kmem(const struct cgroup_mem *m, int64_t *v)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len;
	bool ok;

	snprintf(path, sizeof(path), "%s/memory.kmem.usage_in_bytes", m->dir);
	if (procfs_read_file(path, &buf, &len) < 0)
		return false;
	*v = strtoll(buf, NULL, 10);
	ok = *v >= 0;
	free(buf);
	return ok;
}

int explain_cgroup(pid_t pid, const char *dir, const struct explain_opts *o,
		   struct explain_doc *doc)
{
	const char *root = o->root ? o->root : "";
	struct explain_doc *p = doc;
	struct cgroup_mem m;
	int64_t v = 0, sum = 0, kernel = 0;
	uint64_t ws = 0, in = 0;

	memset(doc, 0, sizeof(*doc));
	if ((dir ? cgroup_read_dir(root, dir, &m)
		 : cgroup_read_pid(root, pid, &m)) < 0)
		return -1;
	doc->have_pid = !dir;
	doc->pid = dir ? 0 : pid ? pid : getpid();
	doc->cgroup_version = m.version;
	doc->cgroup_path = m.path ? strdup(m.path) : NULL;
	doc->directory = m.dir ? strdup(m.dir) : NULL;
	doc->oom |= (m.path && !doc->cgroup_path) || (m.dir && !doc->directory);
	doc->have_total = m.usage.have;
	doc->total = m.usage.have ? m.usage.bytes : 0;
	doc->have_ws = cgroup_working_set(&m, &ws, &in);
	doc->ws = ws;
	doc->have_limit = m.limit.have && !m.limit.unlimited;
	doc->limit = m.limit.bytes;
	doc->have_high = m.high.have && !m.high.unlimited;
	doc->high = m.high.bytes;
	doc->have_headroom = doc->have_limit && m.usage.have;
	doc->headroom = (int64_t)m.limit.bytes - (int64_t)doc->total;
	doc->have_high_headroom = doc->have_high && m.usage.have;
	doc->high_headroom = (int64_t)m.high.bytes - (int64_t)doc->total;
	if (m.version == 2) {
		cache_parts(p, &m, &cache_keys_v2);
		sum += stat_part(p, &m, "kernel", "slab", "slab",
				 "kernel slab objects (dentries, inodes, ...)");
		sum += stat_part(p, &m, "kernel", "kernel_stack",
				 "kernel_stack", "kernel stacks of the tasks");
		sum += stat_part(p, &m, "kernel", "pagetables", "pagetables",
				 "page tables");
		sum += stat_part(p, &m, "kernel", "percpu", "percpu",
				 "per-cpu kernel memory");
		sum += stat_part(p, &m, "kernel", "vmalloc", "vmalloc",
				 "vmalloc'd kernel memory");
		if (stat_get(&m, "kernel", &kernel)) {
			v = kernel - sum;
			part(p, "kernel", "kernel_other", true, v > 0 ? v : 0,
			     "remainder",
			     "other kernel memory (memory.stat "
			     "kernel minus its parts above)");
		} else {
			add_note(doc, "memory.stat has no 'kernel' key "
				      "(before Linux 5.18): kernel memory "
				      "outside its listed parts is "
				      "unexplained");
		}
		stat_part(p, &m, "kernel", "sock", "sock",
			  "network socket buffers");
	} else {
		bool have_k;

		cache_parts(p, &m, &cache_keys_v1);
		have_k = v1_kmem(&m, &kernel);
		part(p, "kernel", "kernel", have_k, kernel, "cgroup",
		     "kernel memory (memory.kmem.usage_in_bytes)");
		if (!have_k)
			add_note(doc, "no memory.kmem.usage_in_bytes: kernel "
				      "memory is unexplained");
		add_note(doc, "cgroup v1 usage_in_bytes is approximate "
			      "(per-cpu charge caches; cgroup-v1/memory.rst "
			      "5.5)");
	}
	cgroup_mem_free(&m);
	return finish(doc);
}
