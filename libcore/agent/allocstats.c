/* SPDX-License-Identifier: MIT */
/* Allocator state read inside the target, written as the mallinfo JSON. */
#include "common.h"
#include "agent/allocstats.h"
#include "phdr.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdarg.h>
#include <unistd.h>

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*mi_process_info_fn)(size_t *, size_t *, size_t *, size_t *,
				   size_t *, size_t *, size_t *, size_t *);
typedef void (*mi_output_fn)(const char *, void *);
typedef void (*mi_stats_print_out_fn)(mi_output_fn, void *);
typedef int (*mi_version_fn)(void);
typedef int (*tc_prop_fn)(const char *, size_t *);

static struct {
	bool done;
	enum allocstats_kind kind;
	mallctl_fn mallctl;
	mi_process_info_fn mi_process_info;
	mi_stats_print_out_fn mi_stats_print_out;
	mi_version_fn mi_version;
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
	det.mi_stats_print_out =
		(mi_stats_print_out_fn)sym(h, "mi_stats_print_out");
	det.mi_version = (mi_version_fn)sym(h, "mi_version");
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

const char *allocstats_name(enum allocstats_kind k)
{
	switch (k) {
	case ALLOCSTATS_GLIBC:
		return "glibc";
	case ALLOCSTATS_JEMALLOC:
		return "jemalloc";
	case ALLOCSTATS_MIMALLOC:
		return "mimalloc";
	case ALLOCSTATS_TCMALLOC:
		return "tcmalloc";
	default:
		return "unknown";
	}
}

/* ---- text buffer ---- */

static bool abuf_reserve(struct abuf *b, size_t more)
{
	size_t cap;
	char *np;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + more + 1)
		cap *= 2;
	np = realloc(b->p, cap);
	if (!np) {
		b->oom = true;
		return false;
	}
	b->p = np;
	b->cap = cap;
	return true;
}

void abuf_printf(struct abuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!abuf_reserve(b, 256))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (!abuf_reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void abuf_json_str(struct abuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!s) {
		abuf_printf(b, "null");
		return;
	}
	abuf_printf(b, "\"");
	while (*p) {
		size_t n;

		if (*p == '"' || *p == '\\') {
			abuf_printf(b, "\\%c", *p);
			p++;
		} else if (*p < 0x20) {
			abuf_printf(b, "\\u%04x", *p);
			p++;
		} else if ((n = utf8_len(p)) == 0) {
			abuf_printf(b, "?");
			p++;
		} else {
			abuf_printf(b, "%.*s", (int)n, (const char *)p);
			p += n;
		}
	}
	abuf_printf(b, "\"");
}

void abuf_json_i64(struct abuf *b, bool comma, const char *key, int64_t v)
{
	if (v < 0)
		abuf_printf(b, "%s\"%s\":null", comma ? "," : "", key);
	else
		abuf_printf(b, "%s\"%s\":%lld", comma ? "," : "", key,
			    (long long)v);
}

void abuf_free(struct abuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- glibc ---- */

/* The malloc_info(3) XML in a malloc'd string (open_memstream), or NULL. */
static char *glibc_malloc_info(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (malloc_info(0, f) != 0) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
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

/* The numeric attribute name="N" of the tag tag[0, n), or -1. */
static int64_t xml_attr(const char *tag, size_t n, const char *name)
{
	char pat[32];
	size_t pl;
	const char *p = tag, *end = tag + n;

	pl = (size_t)snprintf(pat, sizeof(pat), " %s=\"", name);
	while (p + pl <= end) {
		if (memcmp(p, pat, pl) == 0) {
			int64_t v = 0;

			p += pl;
			if (p >= end || *p < '0' || *p > '9')
				return -1;
			while (p < end && *p >= '0' && *p <= '9') {
				if (v > (INT64_MAX - 9) / 10)
					return -1;
				v = v * 10 + (*p++ - '0');
			}
			return v;
		}
		p++;
	}
	return -1;
}

/* Whether the attribute type="val" is in tag. */
static bool xml_type_is(const char *tag, size_t n, const char *val)
{
	char pat[32];
	size_t pl = (size_t)snprintf(pat, sizeof(pat), " type=\"%s\"", val);

	for (const char *p = tag; p + pl <= tag + n; p++)
		if (memcmp(p, pat, pl) == 0)
			return true;
	return false;
}

/*
 * The totals of one <heap> (or of the document's top level), in the order
 * malloc_info writes them.
 */
struct glibc_totals {
	int64_t fast_count, fast_bytes, rest_count, rest_bytes, mmap_count,
		mmap_bytes, system_current_bytes, system_max_bytes,
		aspace_total_bytes, aspace_mprotect_bytes;
};

static void glibc_totals_json(struct abuf *b, const struct glibc_totals *t,
			      bool with_mmap)
{
	abuf_json_i64(b, false, "fast_count", t->fast_count);
	abuf_json_i64(b, true, "fast_bytes", t->fast_bytes);
	abuf_json_i64(b, true, "rest_count", t->rest_count);
	abuf_json_i64(b, true, "rest_bytes", t->rest_bytes);
	if (with_mmap) {
		abuf_json_i64(b, true, "mmap_count", t->mmap_count);
		abuf_json_i64(b, true, "mmap_bytes", t->mmap_bytes);
	}
	abuf_json_i64(b, true, "system_current_bytes", t->system_current_bytes);
	abuf_json_i64(b, true, "system_max_bytes", t->system_max_bytes);
	abuf_json_i64(b, true, "aspace_total_bytes", t->aspace_total_bytes);
	abuf_json_i64(b, true, "aspace_mprotect_bytes",
		      t->aspace_mprotect_bytes);
}

static void glibc_total_tag(struct glibc_totals *t, const char *name, size_t nl,
			    const char *tag, size_t n)
{
	int64_t count = xml_attr(tag, n, "count");
	int64_t size = xml_attr(tag, n, "size");

	if (nl == 5 && memcmp(name, "total", 5) == 0) {
		if (xml_type_is(tag, n, "fast")) {
			t->fast_count = count;
			t->fast_bytes = size;
		} else if (xml_type_is(tag, n, "rest")) {
			t->rest_count = count;
			t->rest_bytes = size;
		} else if (xml_type_is(tag, n, "mmap")) {
			t->mmap_count = count;
			t->mmap_bytes = size;
		}
	} else if (nl == 6 && memcmp(name, "system", 6) == 0) {
		if (xml_type_is(tag, n, "current"))
			t->system_current_bytes = size;
		else if (xml_type_is(tag, n, "max"))
			t->system_max_bytes = size;
	} else if (nl == 6 && memcmp(name, "aspace", 6) == 0) {
		if (xml_type_is(tag, n, "total"))
			t->aspace_total_bytes = size;
		else if (xml_type_is(tag, n, "mprotect"))
			t->aspace_mprotect_bytes = size;
	}
}

static void glibc_totals_init(struct glibc_totals *t)
{
	memset(t, 0xff, sizeof(*t)); /* every field -1: not reported */
}

/*
 * Turn malloc_info's XML into the "arenas" array and "total" object:
 * <heap nr="N"> holds <sizes> (<size from to total count/>, <unsorted/>)
 * and its totals; the totals after the last </heap> are the whole
 * process's. Returns the number of heaps.
 */
static int glibc_arenas_json(struct abuf *b, const char *xml)
{
	struct glibc_totals heap, all;
	const char *p = xml;
	bool in_heap = false, first_chunk = true;
	int heaps = 0;

	glibc_totals_init(&all);
	glibc_totals_init(&heap);
	abuf_printf(b, ",\"arenas\":[");
	while ((p = strchr(p, '<')) != NULL) {
		const char *gt = strchr(p, '>'), *name = p + 1;
		size_t n, nl;

		if (!gt)
			break;
		n = (size_t)(gt - p);
		/* A closing tag keeps its '/' in the name ("/heap"). */
		nl = (name[0] == '/') + strcspn(name + (name[0] == '/'), " />");
		if (nl == 4 && memcmp(name, "heap", 4) == 0) {
			/* A <heap> inside a <heap> (not glibc's output, but
			 * the JSON must stay valid): close the open one. */
			if (in_heap) {
				abuf_printf(b, "],");
				glibc_totals_json(b, &heap, false);
				abuf_printf(b, "}");
			}
			glibc_totals_init(&heap);
			abuf_printf(b, "%s{\"index\":%lld,\"free_chunks\":[",
				    heaps ? "," : "",
				    (long long)xml_attr(p, n, "nr"));
			in_heap = true;
			first_chunk = true;
			heaps++;
		} else if (nl == 5 && memcmp(name, "/heap", 5) == 0 &&
			   in_heap) {
			abuf_printf(b, "],");
			glibc_totals_json(b, &heap, false);
			abuf_printf(b, "}");
			in_heap = false;
		} else if (in_heap &&
			   ((nl == 4 && !memcmp(name, "size", 4)) ||
			    (nl == 8 && !memcmp(name, "unsorted", 8)))) {
			abuf_printf(b, "%s{\"kind\":\"%s\"",
				    first_chunk ? "" : ",",
				    nl == 4 ? "bin" : "unsorted");
			abuf_json_i64(b, true, "from_bytes",
				      xml_attr(p, n, "from"));
			abuf_json_i64(b, true, "to_bytes",
				      xml_attr(p, n, "to"));
			abuf_json_i64(b, true, "total_bytes",
				      xml_attr(p, n, "total"));
			abuf_json_i64(b, true, "count",
				      xml_attr(p, n, "count"));
			abuf_printf(b, "}");
			first_chunk = false;
		} else {
			glibc_total_tag(in_heap ? &heap : &all, name, nl, p, n);
		}
		p = gt + 1;
	}
	if (in_heap)
		abuf_printf(b, "]}");
	abuf_printf(b, "],\"total\":{");
	glibc_totals_json(b, &all, true);
	abuf_printf(b, "}");
	return heaps;
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

static void je_specific(struct abuf *b, const struct allocstats_comparable *c)
{
	const char *version = NULL;
	size_t sz = sizeof(version);
	int64_t page = je_size("arenas.page");
	static const char *const fields[] = {
		"stats.allocated",    "stats.active",	"stats.metadata",
		"stats.metadata_thp", "stats.resident", "stats.mapped",
		"stats.retained",
	};

	if (det.mallctl("version", &version, &sz, NULL, 0) != 0)
		version = NULL;
	abuf_printf(b, "\"version\":");
	abuf_json_str(b, version);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char key[64];

		snprintf(key, sizeof(key), "%s_bytes", fields[i] + 6);
		abuf_json_i64(b, true, key, je_size(fields[i]));
	}
	abuf_json_i64(b, true, "narenas", c->arena_count);
	abuf_json_i64(b, true, "page_bytes", page);
	abuf_printf(b, ",\"arenas\":[");
	for (int64_t i = 0; i < c->arena_count && i < 1024; i++) {
		char name[64];
		int64_t nthreads, pactive, pdirty, pmuzzy;

		snprintf(name, sizeof(name), "stats.arenas.%lld.nthreads",
			 (long long)i);
		nthreads = je_unsigned(name);
		snprintf(name, sizeof(name), "stats.arenas.%lld.pactive",
			 (long long)i);
		pactive = je_size(name);
		snprintf(name, sizeof(name), "stats.arenas.%lld.pdirty",
			 (long long)i);
		pdirty = je_size(name);
		snprintf(name, sizeof(name), "stats.arenas.%lld.pmuzzy",
			 (long long)i);
		pmuzzy = je_size(name);
		abuf_printf(b, "%s{\"index\":%lld", i ? "," : "", (long long)i);
		abuf_json_i64(b, true, "thread_count", nthreads);
		abuf_json_i64(b, true, "active_bytes",
			      pactive >= 0 && page > 0 ? pactive * page : -1);
		abuf_json_i64(b, true, "dirty_bytes",
			      pdirty >= 0 && page > 0 ? pdirty * page : -1);
		abuf_json_i64(b, true, "muzzy_bytes",
			      pmuzzy >= 0 && page > 0 ? pmuzzy * page : -1);
		abuf_printf(b, "}");
	}
	abuf_printf(b, "]");
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

static void mi_collect(const char *msg, void *arg)
{
	abuf_json_str(arg, msg);
	abuf_printf(arg, ",");
}

static void mi_specific(struct abuf *b)
{
	struct mi_info m;

	mi_get(&m);
	abuf_printf(b, "\"version\":");
	if (det.mi_version)
		abuf_printf(b, "%d", det.mi_version());
	else
		abuf_printf(b, "null");
	abuf_json_i64(b, true, "elapsed_ms", (int64_t)m.elapsed_ms);
	abuf_json_i64(b, true, "user_ms", (int64_t)m.user_ms);
	abuf_json_i64(b, true, "system_ms", (int64_t)m.system_ms);
	abuf_json_i64(b, true, "current_rss_bytes", (int64_t)m.current_rss);
	abuf_json_i64(b, true, "peak_rss_bytes", (int64_t)m.peak_rss);
	abuf_json_i64(b, true, "current_commit_bytes",
		      (int64_t)m.current_commit);
	abuf_json_i64(b, true, "peak_commit_bytes", (int64_t)m.peak_commit);
	abuf_json_i64(b, true, "page_fault_count", (int64_t)m.page_faults);
	/* mi_stats_print_out's text, one string per chunk it writes. */
	abuf_printf(b, ",\"stats_text\":[");
	if (det.mi_stats_print_out) {
		size_t mark = b->len;

		det.mi_stats_print_out(mi_collect, b);
		if (b->len > mark && !b->oom)
			b->len--; /* the trailing comma */
	}
	abuf_printf(b, "]");
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

static void tc_specific(struct abuf *b)
{
	static const char *const props[] = {
		"generic.current_allocated_bytes",
		"generic.heap_size",
		"generic.total_physical_bytes",
		"tcmalloc.pageheap_free_bytes",
		"tcmalloc.pageheap_unmapped_bytes",
		"tcmalloc.central_cache_free_bytes",
		"tcmalloc.transfer_cache_free_bytes",
		"tcmalloc.thread_cache_free_bytes",
		"tcmalloc.current_total_thread_cache_bytes",
		"tcmalloc.max_total_thread_cache_bytes",
	};

	for (size_t i = 0; i < ARRAY_SIZE(props); i++) {
		char key[64];
		const char *dot = strchr(props[i], '.');
		size_t n = strlen(dot + 1);

		/* "generic.heap_size" -> "heap_size_bytes" */
		if (n > 6 && strcmp(dot + 1 + n - 6, "_bytes") == 0)
			snprintf(key, sizeof(key), "%s", dot + 1);
		else
			snprintf(key, sizeof(key), "%s_bytes", dot + 1);
		abuf_json_i64(b, i > 0, key, tc_get(props[i]));
	}
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

static void comparable_json(struct abuf *b,
			    const struct allocstats_comparable *c)
{
	abuf_printf(b, ",\"comparable\":{");
	abuf_json_i64(b, false, "allocated_bytes", c->allocated_bytes);
	abuf_json_i64(b, true, "active_bytes", c->active_bytes);
	abuf_json_i64(b, true, "resident_bytes", c->resident_bytes);
	abuf_json_i64(b, true, "mapped_bytes", c->mapped_bytes);
	abuf_json_i64(b, true, "retained_bytes", c->retained_bytes);
	abuf_json_i64(b, true, "free_bytes", c->free_bytes);
	abuf_json_i64(b, true, "metadata_bytes", c->metadata_bytes);
	abuf_json_i64(b, true, "arena_count", c->arena_count);
	abuf_printf(b, "}");
}

void allocstats_json(struct abuf *b)
{
	enum allocstats_kind k = allocstats_detect();
	struct allocstats_comparable c;

	comparable_init(&c);
	abuf_printf(b, ",\"allocator\":\"%s\",\"allocator_object\":",
		    allocstats_name(k));
	abuf_json_str(b, det.object[0] ? det.object : NULL);
	switch (k) {
	case ALLOCSTATS_GLIBC: {
		struct mallinfo2 mi = mallinfo2();
		char *xml = glibc_malloc_info();
		struct abuf arenas = {0};
		int heaps = xml ? glibc_arenas_json(&arenas, xml) : -1;

		glibc_comparable(&c, &mi, heaps);
		comparable_json(b, &c);
		abuf_printf(b, ",\"specific\":{\"mallinfo2\":{");
		abuf_json_i64(b, false, "arena_bytes", (int64_t)mi.arena);
		abuf_json_i64(b, true, "ordblks_count", (int64_t)mi.ordblks);
		abuf_json_i64(b, true, "smblks_count", (int64_t)mi.smblks);
		abuf_json_i64(b, true, "hblks_count", (int64_t)mi.hblks);
		abuf_json_i64(b, true, "hblkhd_bytes", (int64_t)mi.hblkhd);
		abuf_json_i64(b, true, "usmblks_bytes", (int64_t)mi.usmblks);
		abuf_json_i64(b, true, "fsmblks_bytes", (int64_t)mi.fsmblks);
		abuf_json_i64(b, true, "uordblks_bytes", (int64_t)mi.uordblks);
		abuf_json_i64(b, true, "fordblks_bytes", (int64_t)mi.fordblks);
		abuf_json_i64(b, true, "keepcost_bytes", (int64_t)mi.keepcost);
		abuf_printf(b, "}");
		if (arenas.oom)
			b->oom = true;
		else if (arenas.p)
			abuf_printf(b, "%s", arenas.p);
		abuf_printf(b, "}");
		abuf_free(&arenas);
		free(xml);
		break;
	}
	case ALLOCSTATS_JEMALLOC:
		je_refresh();
		je_comparable(&c);
		comparable_json(b, &c);
		abuf_printf(b, ",\"specific\":{");
		je_specific(b, &c);
		abuf_printf(b, "}");
		break;
	case ALLOCSTATS_MIMALLOC:
		mi_comparable(&c);
		comparable_json(b, &c);
		abuf_printf(b, ",\"specific\":{");
		mi_specific(b);
		abuf_printf(b, "}");
		break;
	case ALLOCSTATS_TCMALLOC:
		tc_comparable(&c);
		comparable_json(b, &c);
		abuf_printf(b, ",\"specific\":{");
		tc_specific(b);
		abuf_printf(b, "}");
		break;
	default:
		comparable_json(b, &c);
		abuf_printf(b, ",\"specific\":{}");
		break;
	}
}
