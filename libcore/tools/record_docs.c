/* SPDX-License-Identifier: MIT */
/* The stats and mallinfo documents of a process, made from its record. */
#include "common.h"
#include "json.h"
#include "mallinfo_xml.h"
#include "msg.h"
#include "procfs.h"
#include "record_docs.h"

#include <limits.h>

const char *record_docs_allocator_name(uint32_t kind)
{
	/* allocstats.h's enum allocstats_kind, which the record keeps */
	static const char *const names[] = {"unknown", "glibc", "jemalloc",
					    "mimalloc", "tcmalloc"};

	return kind < ARRAY_SIZE(names) ? names[kind] : "unknown";
}

/* The path of the first mapping in maps whose base name starts with
 * name, into out[cap]. */
static bool maps_find(const char *maps, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);

	for (const char *p = maps; p && *p; p = strchr(p, '\n'), p += !!p) {
		const char *eol = strchr(p, '\n'), *base = NULL, *path;

		if (!eol)
			eol = p + strlen(p);
		path = memchr(p, '/', (size_t)(eol - p));
		for (const char *q = p; q < eol; q++)
			if (*q == '/')
				base = q + 1;
		if (!base || (size_t)(eol - base) < n ||
		    memcmp(base, name, n) != 0)
			continue;
		snprintf(out, cap, "%.*s", (int)(eol - path), path);
		return true;
	}
	return false;
}

uint32_t record_docs_allocator(const struct record_view *v, const char *maps,
			       char *object, size_t cap)
{
	static const char *const libs[] = {"", "libc.so", "libjemalloc",
					   "libmimalloc", "libtcmalloc"};
	uint32_t kind = v->h->allocator.kind;

	object[0] = '\0';
	if (!maps)
		return kind;
	if (!v->h->allocator.time_unix_ns) {
		kind = 0;
		for (uint32_t k = 2; k < ARRAY_SIZE(libs) && !kind; k++)
			if (maps_find(maps, libs[k], object, cap))
				kind = k;
		if (!kind && maps_find(maps, libs[1], object, cap))
			kind = 1;
		return kind;
	}
	if (kind > 0 && kind < ARRAY_SIZE(libs))
		maps_find(maps, libs[kind], object, cap);
	return kind;
}

/* ---- memory malloc did not give (agent/unseen.c, from outside) ---- */

/* "Key:   123 kB" in a /proc/PID/status text, as bytes; -1 when absent. */
static int64_t status_kb(const char *status, const char *key)
{
	size_t klen = strlen(key);
	int64_t v = 0;

	for (const char *p = status; p && *p; p = strchr(p, '\n'), p += !!p) {
		if (strncmp(p, key, klen) != 0 || p[klen] != ':')
			continue;
		p += klen + 1;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return -1;
		while (*p >= '0' && *p <= '9') {
			if (v > (INT64_MAX / 1024 - 9) / 10)
				return -1;
			v = v * 10 + (*p++ - '0');
		}
		return v * 1024;
	}
	return -1;
}

void record_unseen_compute(struct unseen *u, const char *status,
			   int64_t heap_bytes, int64_t heap_peak_bytes,
			   int64_t own_bytes)
{
	struct unseen_status st;

	if (status)
		st = (struct unseen_status){status_kb(status, "RssAnon"),
					    status_kb(status, "VmHWM"),
					    status_kb(status, "RssFile"),
					    status_kb(status, "RssShmem")};
	unseen_compute(u, status ? &st : NULL, heap_bytes, heap_peak_bytes,
		       own_bytes);
}

/* Does a line of maps name a file whose base name starts with name? */
static bool maps_has(const char *maps, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = maps; p && *p; p = strchr(p, '\n'), p += !!p) {
		const char *eol = strchr(p, '\n'), *base = NULL;

		if (!eol)
			eol = p + strlen(p);
		for (const char *q = p; q < eol; q++)
			if (*q == '/')
				base = q + 1;
		if (base && (size_t)(eol - base) >= n &&
		    memcmp(base, name, n) == 0)
			return true;
	}
	return false;
}

void record_unseen_owner(struct unseen *u, const char *maps, const char *exe,
			 const char *environ, size_t env_len)
{
	bool pymalloc_off = false;

	u->owner = u->hint = NULL;
	for (size_t i = 0; environ && i < env_len;) {
		const char *e = environ + i;
		size_t n = strnlen(e, env_len - i);

		if (n >= 18 && memcmp(e, "PYTHONMALLOC=malloc", 18) == 0)
			pymalloc_off = true;
		i += n + 1;
	}
	if (maps && maps_has(maps, "libjvm.so")) {
		u->owner = "the JVM";
		u->hint = "the Java heap is not malloc's; use the JVM's tools "
			  "(jcmd GC.heap_info, a heap dump)";
	} else if ((maps && (maps_has(maps, "libnode.so") ||
			     maps_has(maps, "libv8"))) ||
		   (exe &&
		    (strcmp(exe, "node") == 0 || strcmp(exe, "nodejs") == 0))) {
		u->owner = "V8 (node)";
		u->hint =
			"the JavaScript heap is not malloc's; use node's heap "
			"snapshots";
	} else if (!pymalloc_off && ((maps && maps_has(maps, "libpython")) ||
				     (exe && strncmp(exe, "python", 6) == 0))) {
		u->owner = "pymalloc";
		u->hint =
			"Python keeps small objects in its own arenas; run it "
			"with PYTHONMALLOC=malloc to profile them";
	}
}

/* The sampled or exact peak of the heap plus 16 bytes of overhead per
 * object, as agent/encode.c's heap_peak_bytes(); -1 at rate 0. */
static int64_t heap_peak_bytes(const struct record_view *v)
{
	const struct record_header *h = v->h;
	double bytes = 0, objects = 0;

	if (h->flags & RECORD_F_EXACT)
		return h->exact_peak;
	if (!h->rate)
		return -1;
	if (h->flags & RECORD_F_PER_THREAD)
		return h->pt_max_bytes + 16 * h->pt_max_objects;
	for (size_t i = 0; i < v->n_stacks; i++) {
		const struct record_stack *s = v->stacks[i].s;
		bool now = s->last_ev <= h->peak_ev;

		bytes += now ? s->inuse_bytes : s->peak_bytes;
		objects += now ? s->inuse_objects : s->peak_objects;
	}
	if (!(bytes + 16 * objects < 9e18) || bytes + 16 * objects < 0)
		return -1;
	return (int64_t)(bytes + 16 * objects + 0.5);
}

/* Read a small /proc file of a live process (NULL: cannot). */
static char *proc_text(pid_t pid, const char *name, size_t *len)
{
	char path[64], *buf = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if (procfs_read_file(path, &buf, &n) < 0)
		return NULL;
	if (len)
		*len = n;
	return buf;
}

static void unseen_of(const struct record_view *v,
		      const struct record_docs_ctx *c, struct unseen *u)
{
	const struct record_header *h = v->h;
	const struct record_allocator *a = &h->allocator;

	if (c->pid > 0) {
		size_t env_len = 0;
		char *status = proc_text(c->pid, "status", NULL);
		char *maps = NULL, *env = NULL;
		int64_t heap = a->mapped_bytes > a->allocated_bytes
				       ? a->mapped_bytes
				       : a->allocated_bytes;

		record_unseen_compute(u, status, heap, heap_peak_bytes(v), 0);
		if (u->most) {
			maps = proc_text(c->pid, "maps", NULL);
			env = proc_text(c->pid, "environ", &env_len);
			record_unseen_owner(u, maps, h->exe, env, env_len);
		}
		free(status);
		free(maps);
		free(env);
		return;
	}
	/* A dead record: what the agent measured at exit. */
	memset(u, 0, sizeof(*u));
	u->anon_bytes = h->anon_bytes;
	u->anon_peak_bytes = h->anon_peak_bytes;
	u->heap_bytes = h->heap_bytes;
	u->unseen_bytes = h->unseen_bytes;
	u->at_peak = h->anon_peak_bytes >= 0;
	if (u->unseen_bytes >= 0 && u->anon_peak_bytes >= 0)
		u->most = u->unseen_bytes >= UNSEEN_MIN_BYTES &&
			  u->unseen_bytes > u->anon_peak_bytes / 2;
}

/* ---- the documents ---- */

static double seconds(int64_t ns)
{
	return (double)ns / 1e9;
}

/* "format", "format_version", "pid", "program". */
static json_t *doc_head(const char *format, const struct record_view *v,
			const struct record_docs_ctx *c)
{
	json_t *j = json_top_new(format);

	json_set(j, "pid", json_integer(c->pid > 0 ? c->pid : v->h->pid));
	json_set(j, "program", json_str_or_null(v->h->exe));
	return j;
}

json_t *record_docs_stats(const struct record_view *v,
			  const struct record_docs_ctx *c)
{
	const struct record_header *h = v->h;
	struct record_stats st;
	struct unseen u;
	bool exact;
	int64_t inuse, peak, end;
	const char *peak_source;
	char text[512], object[PATH_MAX];
	json_t *j;

	record_stats(v, &st);
	exact = st.flags & RECORD_F_EXACT;
	inuse = exact ? (st.exact_inuse < 0 ? 0 : st.exact_inuse)
		      : st.allocator->allocated_bytes;
	/* As the agent's: the peak is never below what is in use now. */
	peak = exact ? st.exact_peak : st.max_inuse_bytes;
	peak_source = exact ? "exact" : "sampled";
	if (st.inuse_bytes_sampled > peak)
		peak = st.inuse_bytes_sampled;
	if (inuse > peak) {
		peak = inuse;
		peak_source = exact ? "exact" : "allocator";
	}
	end = st.end_unix_ns ? st.end_unix_ns
	      : c->pid > 0   ? c->now_ns
			     : st.update_unix_ns;
	unseen_of(v, c, &u);

	j = doc_head("palloc-stats", v, c);
	json_set(j, "uptime_seconds",
		 json_real(seconds(end - st.start_unix_ns)));
	json_set(j, "exact", json_boolean(exact));
	json_set(j, "attached", json_boolean(st.flags & RECORD_F_ATTACHED));
	json_set(j, "sample_rate", json_u64(st.rate));
	json_set(j, "alloc_count", json_u64(st.alloc_count));
	json_set(j, "free_count", json_u64(st.free_count));
	json_set(j, "alloc_bytes", json_u64(st.alloc_bytes));
	json_set_i64(j, "inuse_bytes", inuse);
	json_set(j, "inuse_source",
		 json_str_or_null(exact	       ? "exact"
				  : inuse >= 0 ? "allocator"
					       : NULL));
	json_set_i64(j, "peak_inuse_bytes", peak);
	json_set(j, "peak_inuse_source", json_string(peak_source));
	json_set_i64(j, "sampled_inuse_bytes", st.inuse_bytes_sampled);
	json_set(j, "sampled_count", json_u64(st.samples));
	json_set(j, "dropped_count", json_u64(st.dropped));
	json_set(j, "dropped_bytes",
		 json_u64(st.dropped_bytes > 0 ? (uint64_t)st.dropped_bytes
					       : 0));
	json_set(j, "stack_count", json_u64(st.n_stacks));
	json_set(j, "allocator",
		 json_string(record_docs_allocator_name(record_docs_allocator(
			 v, c->maps, object, sizeof(object)))));
	json_set_i64(j, "allocator_allocated_bytes",
		     st.allocator->allocated_bytes);
	json_set_i64(j, "anon_bytes", u.anon_bytes);
	json_set_i64(j, "anon_peak_bytes", u.anon_peak_bytes);
	json_set_i64(j, "heap_seen_bytes", u.heap_bytes);
	json_set_i64(j, "unseen_bytes", u.unseen_bytes);
	json_set(j, "unseen_owner", json_str_or_null(u.owner));
	if (u.most)
		unseen_text(&u, text, sizeof(text));
	json_set(j, "unseen_warning", json_str_or_null(u.most ? text : NULL));
	/* What the record adds. */
	json_set(j, "state", json_string(c->life ? c->life : "live"));
	json_set(j, "exit_status",
		 json_i64_or_null(st.state == RECORD_EXITED, st.exit_status));
	json_set(j, "start_time_ns", json_integer(st.start_unix_ns));
	json_set(j, "update_time_ns", json_integer(st.update_unix_ns));
	json_set(j, "end_time_ns",
		 json_i64_or_null(st.end_unix_ns != 0, st.end_unix_ns));
	json_set(j, "record_age_seconds",
		 json_real(seconds(c->now_ns - st.update_unix_ns)));
	json_set(j, "live_thread_count", json_u64(st.live_threads));
	json_set(j, "parent_pid",
		 json_i64_or_null(h->flags & RECORD_F_FORKED, st.parent_pid));
	json_set(j, "record", json_str_or_null(c->path));
	json_set(j, "record_inconsistent", json_boolean(c->inconsistent));
	if (json_failed()) {
		json_decref(j);
		return NULL;
	}
	return j;
}

#define FIELD(key, member)                                                     \
	{                                                                      \
		key, offsetof(struct record_allocator, member)                 \
	}

/* The allocator's figures every kind is asked for (allocstats.h). */
static const struct json_i64_field comparable_fields[] = {
	FIELD("allocated_bytes", allocated_bytes),
	FIELD("active_bytes", active_bytes),
	FIELD("resident_bytes", resident_bytes),
	FIELD("mapped_bytes", mapped_bytes),
	FIELD("retained_bytes", retained_bytes),
	FIELD("free_bytes", free_bytes),
	FIELD("metadata_bytes", metadata_bytes),
};

/* glibc's mallinfo2(3), under palloc-mallinfo(1)'s names. */
static const struct json_i64_field mallinfo2_fields[] = {
	FIELD("arena_bytes", arena),	   FIELD("ordblks_count", ordblks),
	FIELD("smblks_count", smblks),	   FIELD("hblks_count", hblks),
	FIELD("hblkhd_bytes", hblkhd),	   FIELD("usmblks_bytes", usmblks),
	FIELD("fsmblks_bytes", fsmblks),   FIELD("uordblks_bytes", uordblks),
	FIELD("fordblks_bytes", fordblks), FIELD("keepcost_bytes", keepcost),
};
#undef FIELD

static void comparable(json_t *j, const struct record_allocator *a,
		       int64_t arena_count)
{
	json_t *o = json_object();

	json_set_i64_fields(o, a, comparable_fields,
			    ARRAY_SIZE(comparable_fields));
	json_set_i64(o, "arena_count", arena_count);
	json_set(j, "comparable", o);
}

static json_t *glibc_specific(const struct record_view *v,
			      const struct record_allocator *a, int *heaps)
{
	json_t *s = json_object(), *mi = json_object();

	json_set_i64_fields(mi, a, mallinfo2_fields,
			    ARRAY_SIZE(mallinfo2_fields));
	json_set(s, "mallinfo2", mi);
	*heaps = mallinfo_xml_json(s, v->text, v->text_len);
	return s;
}

/* What the record keeps of the other allocators, under the names the
 * agent's document gives them (the rest: null). */
static json_t *other_specific(uint32_t kind, const struct record_allocator *a)
{
	json_t *s = json_object();

	switch (kind) {
	case 2: /* jemalloc */
		json_set(s, "version", json_null());
		json_set_i64(s, "allocated_bytes", a->allocated_bytes);
		json_set_i64(s, "active_bytes", a->active_bytes);
		json_set_i64(s, "metadata_bytes", a->metadata_bytes);
		json_set(s, "metadata_thp_bytes", json_null());
		json_set_i64(s, "resident_bytes", a->resident_bytes);
		json_set_i64(s, "mapped_bytes", a->mapped_bytes);
		json_set_i64(s, "retained_bytes", a->retained_bytes);
		json_set_i64(s, "narenas", a->arena_count);
		json_set(s, "page_bytes", json_null());
		json_set(s, "arenas", json_array());
		break;
	case 3: /* mimalloc */
		json_set(s, "version", json_null());
		json_set_i64(s, "current_commit_bytes", a->mapped_bytes);
		json_set(s, "stats_text", json_array());
		break;
	case 4: /* tcmalloc */
		json_set_i64(s, "current_allocated_bytes", a->allocated_bytes);
		json_set_i64(s, "total_physical_bytes", a->resident_bytes);
		json_set_i64(s, "pageheap_free_bytes", a->free_bytes);
		json_set_i64(s, "pageheap_unmapped_bytes", a->retained_bytes);
		break;
	default:
		break;
	}
	return s;
}

/* The figures of an agent that took none yet: every one unknown. */
static void no_figures(struct record_allocator *n)
{
	int64_t *f[] = {
		&n->allocated_bytes, &n->active_bytes,	 &n->resident_bytes,
		&n->mapped_bytes,    &n->retained_bytes, &n->free_bytes,
		&n->metadata_bytes,  &n->arena_count,	 &n->arena,
		&n->ordblks,	     &n->smblks,	 &n->hblks,
		&n->hblkhd,	     &n->usmblks,	 &n->fsmblks,
		&n->uordblks,	     &n->fordblks,	 &n->keepcost};

	for (size_t i = 0; i < ARRAY_SIZE(f); i++)
		*f[i] = -1;
}

json_t *record_docs_mallinfo(const struct record_view *v,
			     const struct record_docs_ctx *c)
{
	struct record_allocator none = v->h->allocator;
	const struct record_allocator *a = &v->h->allocator;
	json_t *j = doc_head("palloc-mallinfo", v, c), *spec;
	char object[PATH_MAX];
	uint32_t kind =
		record_docs_allocator(v, c->maps, object, sizeof(object));
	int heaps = -1;

	json_set(j, "allocator", json_string(record_docs_allocator_name(kind)));
	json_set(j, "allocator_object",
		 json_str_or_null(object[0] ? object : NULL));
	if (!a->time_unix_ns) {
		/* No snapshot yet (palloc(7) "The record"): unknown, not 0. */
		no_figures(&none);
		a = &none;
	}
	if (a->kind == 1) {
		spec = glibc_specific(v, a, &heaps);
		comparable(j, a, heaps > 0 ? heaps : -1);
	} else {
		spec = other_specific(a->kind, a);
		comparable(j, a, a->arena_count);
	}
	json_set(j, "specific", spec);
	json_set(j, "time_ns",
		 json_i64_or_null(a->time_unix_ns > 0, a->time_unix_ns));
	json_set(j, "age_seconds",
		 json_real_or_null(a->time_unix_ns > 0,
				   seconds(c->now_ns - a->time_unix_ns)));
	json_set(j, "torn", json_boolean(v->text_torn));
	if (json_failed()) {
		json_decref(j);
		return NULL;
	}
	return j;
}
