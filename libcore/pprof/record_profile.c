/* SPDX-License-Identifier: MIT */
/*
 * The profile of a checked record (record_check.c): the one the agent's
 * encoder makes from its stack table (agent/encode.c), and the record's
 * figures. Both sides: no malloc but the allocator given, no stdio, no
 * qsort.
 */
#include "common.h"
#include "fmt.h"
#include "msg.h"
#include "pprof_comments.h"
#include "pprof_int.h"
#include "record_profile.h"
#include "record_profile_int.h"

#include <math.h>

/* ---- the profile ---- */

/* A sum of weights as a sample value: rounded, never negative (as the
 * agent's round_value()). */
static int64_t round_value(double v)
{
	if (!(v > 0.5))
		return 0; /* negative rounding residue, or NaN */
	if (v > 9.2e18)
		return INT64_MAX;
	return (int64_t)(v + 0.5);
}

static int64_t round_stddev(double var)
{
	return round_value(var > 0 ? sqrt(var) : 0);
}

/* A thread's records added to the stacks' sums. */
struct wsum {
	double alloc_objects, alloc_bytes, inuse_objects, inuse_bytes;
};

/* Add every live thread's records to sum[id - 1] (n stacks), or all of
 * them to sum[0] when all is set. */
static void sum_threads(const struct record_view *v, struct wsum *sum, size_t n,
			bool all)
{
	for (size_t i = 0; i < v->n_threads; i++) {
		const struct record_view_thread *t = &v->threads[i];

		/* live when checked (recs_cap 0 else) and still */
		if (LOAD(t->t->state) != RECORD_THREAD_LIVE)
			continue;
		for (uint32_t j = 0; j < t->recs_cap; j++) {
			const struct record_rec *r = &t->recs[j];
			uint32_t id = LOAD(r->id);
			struct wsum *w;

			/* A stack not in this copy yet: not yet. */
			if (!id || id > n)
				continue;
			w = &sum[all ? 0 : id - 1];
			w->alloc_objects += (double)LOAD(r->alloc_objects);
			w->alloc_bytes += (double)LOAD(r->alloc_bytes);
			w->inuse_objects += (double)LOAD(r->inuse_objects);
			w->inuse_bytes += (double)LOAD(r->inuse_bytes);
		}
	}
}

static bool any_table(const struct record_view *v)
{
	for (size_t i = 0; i < v->n_threads; i++)
		if (v->threads[i].recs_cap)
			return true;
	return false;
}

/* The counters: the exited threads' and every live one's. */
struct counters {
	uint64_t alloc_count, free_count, alloc_bytes, samples, reentries;
	size_t live;
};

static void sum_counters(const struct record_view *v, struct counters *c)
{
	const struct record_header *h = v->h;

	c->alloc_count = LOAD(h->exited_alloc_count);
	c->free_count = LOAD(h->exited_free_count);
	c->alloc_bytes = LOAD(h->exited_alloc_bytes);
	c->samples = LOAD(h->exited_samples);
	c->reentries = LOAD(h->exited_reentries);
	c->live = 0;
	for (size_t i = 0; i < v->n_threads; i++) {
		const struct record_thread *t = v->threads[i].t;

		if (LOAD(t->state) != RECORD_THREAD_LIVE)
			continue;
		c->live++;
		c->alloc_count += LOAD(t->alloc_count);
		c->free_count += LOAD(t->free_count);
		c->alloc_bytes += LOAD(t->alloc_bytes);
		c->samples += LOAD(t->samples);
		c->reentries += LOAD(t->reentries);
	}
}

/* Overlapping candidates looked at per address before giving up (only a
 * hostile record has more modules over one address). */
#define MODULE_SCAN_MAX 4096
#define MAPCACHE 1024

struct mapcache {
	uint64_t addr;
	uint32_t gen;
	uint64_t id; /* 0: empty */
};

struct build {
	struct pprof_profile *p;
	const struct record_view *v;
	const struct record_profile_opts *o;
	const struct pprof_allocator *a;
	uint64_t *mod_ids;	/* mapping id per module, 0: not added */
	uint32_t *order;	/* module indices by start */
	uint64_t *max_limit;	/* the highest limit of order[0..i] */
	struct mapcache *cache; /* by address and gen */
	uint64_t unmapped_id, unmapped_lo, unmapped_hi;
};

static bool module_before(const struct build *b, uint32_t i, uint32_t j)
{
	uint64_t si = LOAD(b->v->modules[i]->start),
		 sj = LOAD(b->v->modules[j]->start);

	return si < sj || (si == sj && i < j);
}

/* Heapsort of order[] by (start, index): O(n log n) and no allocation
 * (qsort may allocate, and a hostile record may list many modules). */
static void sift(struct build *b, uint32_t *o, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		uint32_t t;

		if (child >= n)
			return;
		if (child + 1 < n && module_before(b, o[child], o[child + 1]))
			child++;
		if (!module_before(b, o[root], o[child]))
			return;
		t = o[root];
		o[root] = o[child];
		o[child] = t;
		root = child;
	}
}

static void sort_modules(struct build *b)
{
	uint32_t *o = b->order;
	size_t n = b->v->n_modules;

	for (size_t i = 0; i < n; i++)
		o[i] = (uint32_t)i;
	for (size_t i = n / 2; i-- > 0;)
		sift(b, o, i, n);
	for (size_t end = n; end-- > 1;) {
		uint32_t t = o[0];

		o[0] = o[end];
		o[end] = t;
		sift(b, o, 0, end);
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t l = LOAD(b->v->modules[o[i]]->limit);

		b->max_limit[i] =
			i && b->max_limit[i - 1] > l ? b->max_limit[i - 1] : l;
	}
}

static uint64_t add_module(struct build *b, size_t i)
{
	const struct record_module *m = b->v->modules[i];
	const char *end = (const char *)b->v->img + b->v->len;
	char build_id[sizeof(m->build_id)], path[4096];
	struct pprof_mapping pm = {
		.start = LOAD(m->start),
		.limit = LOAD(m->limit),
		.offset = LOAD(m->offset),
		.file = path,
		.build_id = build_id,
	};

	if (b->mod_ids[i])
		return b->mod_ids[i];
	fmt_copy(build_id, sizeof(build_id), m->build_id, sizeof(m->build_id));
	fmt_copy(path, sizeof(path), m->path, (size_t)(end - m->path));
	b->mod_ids[i] = pprof_add_mapping(b->p, &pm);
	return b->mod_ids[i];
}

/* The module of a frame at addr in a stack of gen (record.h): covering
 * addr, loaded at gen, the last such entry. SIZE_MAX: none. */
static size_t find_module(const struct build *b, uint64_t addr, uint32_t gen)
{
	size_t lo = 0, hi = b->v->n_modules, best = SIZE_MAX, steps = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (LOAD(b->v->modules[b->order[mid]]->start) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && b->max_limit[j] > addr;) {
		uint32_t i = b->order[j];
		const struct record_module *m = b->v->modules[i];
		uint32_t unload = LOAD(m->unload_gen);

		if (++steps > MODULE_SCAN_MAX)
			break;
		if (addr < LOAD(m->limit) && LOAD(m->load_gen) <= gen &&
		    (unload == 0 || gen < unload) &&
		    (best == SIZE_MAX || i > best))
			best = i;
	}
	return best;
}

static uint64_t unmapped(struct build *b, uint64_t addr)
{
	uint64_t page = addr & ~(uint64_t)4095, id;

	if (b->o->unmapped) {
		id = b->o->unmapped(b->o->unmapped_ctx, b->p, addr);
		if (id)
			return id;
	}
	if (!b->unmapped_id) {
		struct pprof_mapping pm = {
			.start = page,
			.limit = page + 4096,
			.file = "[unmapped]",
			.build_id = "",
		};

		b->unmapped_id = pprof_add_mapping(b->p, &pm);
		b->unmapped_lo = page;
		b->unmapped_hi = page + 4096;
	}
	if (page < b->unmapped_lo)
		b->unmapped_lo = page;
	if (page + 4096 > b->unmapped_hi)
		b->unmapped_hi = page + 4096;
	return b->unmapped_id;
}

static uint64_t mapping_of(struct build *b, uint64_t addr, uint32_t gen)
{
	struct mapcache *c;
	size_t i;
	uint64_t id;

	/* Made at the first address: a profile without samples (a short
	 * process's at exit) does not clear its 24 KiB. */
	if (!b->cache) {
		b->cache = pprof_int_alloc(b->a, MAPCACHE, sizeof(*b->cache));
		if (!b->cache)
			return 0;
		memset(b->cache, 0, MAPCACHE * sizeof(*b->cache));
	}
	c = &b->cache[((addr >> 4) * 0x9e3779b97f4a7c15ULL + gen) >> 54];
	if (c->id && c->addr == addr && c->gen == gen)
		return c->id;
	i = find_module(b, addr, gen);
	id = i == SIZE_MAX ? unmapped(b, addr) : add_module(b, i);
	if (id) {
		c->addr = addr;
		c->gen = gen;
		c->id = id;
	}
	return id;
}

static const char *const stddev_keys[6] = {
	"alloc_objects_stddev",	     "alloc_space_stddev",
	"inuse_objects_stddev",	     "inuse_space_stddev",
	"peak_inuse_objects_stddev", "peak_inuse_space_stddev",
};

/* The base view of b (opts.base) when it is an earlier copy of the same
 * record, else NULL. */
static const struct record_view *base_of(const struct build *b)
{
	const struct record_view *base = b->o->base;
	const struct record_header *h = b->v->h;

	if (!base || LOAD(base->h->pid) != LOAD(h->pid) ||
	    LOAD(base->h->start_unix_ns) != LOAD(h->start_unix_ns) ||
	    LOAD(base->h->start_ticks) != LOAD(h->start_ticks))
		return NULL;
	return base;
}

/* The stack of the base with the id of v's stack i, if it is the same
 * stack (its hash). */
static const struct record_stack *base_stack(const struct record_view *base,
					     const struct record_view *v,
					     size_t i)
{
	const struct record_stack *bs;

	if (!base || i >= base->n_stacks)
		return NULL;
	bs = base->stacks[i].s;
	return LOAD(bs->hash) == LOAD(v->stacks[i].s->hash) ? bs : NULL;
}

static int add_sample(struct build *b, size_t i, const struct wsum *extra)
{
	const struct record_header *h = b->v->h;
	const struct record_stack *s = b->v->stacks[i].s;
	const struct record_stack *bs = base_stack(base_of(b), b->v, i);
	const size_t depth = b->v->stacks[i].depth;
	const bool peak = LOAD(h->flags) & RECORD_F_PEAK;
	const size_t n_types = peak ? 6 : 4;
	const bool stddev = LOAD(h->rate) > 1;
	const bool at_peak = LOAD(s->last_ev) <= LOAD(h->peak_ev);
	const uint32_t gen = LOAD(s->gen);
	uint64_t ids[RECORD_MAX_DEPTH];
	char thread[RECORD_THREAD_NAME];
	struct pprof_label labels[7];
	size_t n_labels = 0;
	double w[6] = {s->alloc_objects, s->alloc_bytes,  s->inuse_objects,
		       s->inuse_bytes,	 s->peak_objects, s->peak_bytes};
	double var[6] = {s->alloc_var_objects, s->alloc_var_bytes,
			 s->inuse_var_objects, s->inuse_var_bytes,
			 s->peak_var_objects,  s->peak_var_bytes};
	int64_t v[6];
	bool any = false;

	if (bs) {
		/* a later attach: what the earlier ones saw left out */
		const double bw[4] = {bs->alloc_objects, bs->alloc_bytes,
				      bs->inuse_objects, bs->inuse_bytes};
		const double bv[4] = {
			bs->alloc_var_objects, bs->alloc_var_bytes,
			bs->inuse_var_objects, bs->inuse_var_bytes};

		for (size_t k = 0; k < 4; k++) {
			w[k] -= bw[k];
			var[k] = var[k] > bv[k] ? var[k] - bv[k] : 0;
		}
	}
	if (at_peak || bs) {
		/* at the peak, and after a later attach (its window has no
		 * peak of its own), the peak pair is the inuse pair */
		w[4] = w[2];
		w[5] = w[3];
		var[4] = var[2];
		var[5] = var[3];
	}
	if (extra) {
		w[0] += extra->alloc_objects;
		w[1] += extra->alloc_bytes;
		w[2] += extra->inuse_objects;
		w[3] += extra->inuse_bytes;
	}
	for (size_t k = 0; k < 6; k++)
		v[k] = round_value(w[k]);
	/* inuse <= alloc per sample (encode.c): a copy of a live record
	 * may also catch alloc updated and inuse not yet (record.h). */
	for (size_t k = 2; k < 6; k++)
		if (v[k] > v[k % 2])
			v[k] = v[k % 2];
	for (size_t k = 0; k < n_types; k++)
		any |= v[k] != 0;
	if (!any)
		return 0;
	fmt_copy(thread, sizeof(thread), s->thread, sizeof(s->thread));
	if (thread[0])
		labels[n_labels++] = (struct pprof_label){
			.key = "thread",
			.str = thread,
			.num_unit = "",
		};
	for (size_t k = 0; stddev && k < n_types; k++)
		labels[n_labels++] = (struct pprof_label){
			.key = stddev_keys[k],
			.str = "",
			.num = round_stddev(var[k]),
			.num_unit = k % 2 ? "bytes" : "count",
		};
	for (size_t k = 0; k < depth; k++) {
		/* Return address - 1: inside the call instruction, as
		 * encode.c writes it. */
		uint64_t a = LOAD(s->pcs[k]) - 1;
		uint64_t mid = mapping_of(b, a, gen);

		ids[k] = mid ? pprof_add_location(b->p, mid, a, NULL, 0) : 0;
		if (!ids[k])
			return -1;
	}
	return pprof_add_sample(b->p, ids, depth, v, labels, n_labels);
}

static int add_samples(struct build *b)
{
	const struct record_view *v = b->v, *base = base_of(b);
	size_t n = v->n_stacks ? v->n_stacks : 1;
	struct wsum *sum = NULL, *bsum = NULL;
	int rc = 0;

	if (any_table(v) || (base && any_table(base))) {
		sum = pprof_int_alloc(b->a, n, sizeof(*sum));
		bsum = base ? pprof_int_alloc(b->a, n, sizeof(*bsum)) : NULL;
		if (!sum || (base && !bsum)) {
			pprof_int_free(b->a, sum);
			pprof_int_free(b->a, bsum);
			return -1;
		}
		memset(sum, 0, n * sizeof(*sum));
		sum_threads(v, sum, v->n_stacks, false);
	}
	if (bsum) {
		/* the earlier attaches' records of live threads, left out */
		memset(bsum, 0, n * sizeof(*bsum));
		sum_threads(base, bsum, v->n_stacks, false);
		for (size_t i = 0; i < v->n_stacks; i++) {
			if (!base_stack(base, v, i))
				continue;
			sum[i].alloc_objects -= bsum[i].alloc_objects;
			sum[i].alloc_bytes -= bsum[i].alloc_bytes;
			sum[i].inuse_objects -= bsum[i].inuse_objects;
			sum[i].inuse_bytes -= bsum[i].inuse_bytes;
		}
		pprof_int_free(b->a, bsum);
	}
	for (size_t i = 0; i < v->n_stacks && rc == 0; i++)
		rc = add_sample(b, i, sum ? &sum[i] : NULL);
	pprof_int_free(b->a, sum);
	if (rc == 0 && b->unmapped_id) {
		struct pprof_mapping *m = &b->p->mappings[b->unmapped_id - 1];

		m->start = b->unmapped_lo;
		m->limit = b->unmapped_hi;
	}
	return rc;
}

static const char *unwind_name(uint32_t u)
{
	static const char *const names[] = {"fp", "dwarf", "auto"};

	return u < ARRAY_SIZE(names) ? names[u] : "unknown";
}

/* The warning of unseen.h's unseen_text(), from the record's figures. */
static void unseen_warning(const struct record_header *h,
			   const struct record_profile_opts *o, char *buf,
			   size_t cap)
{
	const int64_t mib = 1 << 20;
	const bool at_peak = LOAD(h->rate) || (LOAD(h->flags) & RECORD_F_EXACT);
	int64_t anon = at_peak ? LOAD(h->anon_peak_bytes) : LOAD(h->anon_bytes);
	int64_t unseen = LOAD(h->unseen_bytes), heap = LOAD(h->heap_bytes);
	struct fmt_buf b;

	buf[0] = '\0';
	if (unseen < ((int64_t)16 << 20) || anon < 0 || unseen <= anon / 2 ||
	    heap < 0)
		return;
	fmt_init(&b, buf, cap);
	fmt_append(&b,
		   PPROF_COMMENT_WARNING
		   "most of this process's memory did not come through "
		   "malloc, so the profile does not show it: %lld MiB of "
		   "anonymous memory %s, %lld MiB of it not from the malloc "
		   "heap palloc saw (%lld MiB)",
		   (long long)(anon / mib + (anon % mib >= mib / 2)),
		   at_peak ? "at the peak" : "now",
		   (long long)(unseen / mib + (unseen % mib >= mib / 2)),
		   (long long)(heap / mib + (heap % mib >= mib / 2)));
	if (o->unseen_owner && o->unseen_owner[0])
		fmt_append(&b, "; likely owner: %s (%s)", o->unseen_owner,
			   o->unseen_hint ? o->unseen_hint : "");
	else if (o->unseen_owner)
		fmt_append(&b, "; it was mapped by other means (mmap, another "
			       "allocator)");
}

static int add_comments(struct build *b)
{
	const struct record_header *h = b->v->h;
	const struct record_profile_opts *o = b->o;
	struct pprof_profile *p = b->p;
	const uint64_t rate = LOAD(h->rate), seed = LOAD(h->seed);
	const uint32_t flags = LOAD(h->flags);
	const int32_t parent = LOAD(h->parent_pid);
	char buf[2400], cmdline[RECORD_LONG_STR], title[RECORD_LONG_STR];
	struct counters c;
	struct fmt_buf f;
	int rc = 0;

	sum_counters(b->v, &c);
	if (base_of(b)) {
		struct counters bc;

		sum_counters(base_of(b), &bc);
		c.alloc_count -= bc.alloc_count < c.alloc_count ? bc.alloc_count
								: c.alloc_count;
		c.free_count -= bc.free_count < c.free_count ? bc.free_count
							     : c.free_count;
		c.alloc_bytes -= bc.alloc_bytes < c.alloc_bytes ? bc.alloc_bytes
								: c.alloc_bytes;
		c.samples -= bc.samples < c.samples ? bc.samples : c.samples;
		c.reentries -=
			bc.reentries < c.reentries ? bc.reentries : c.reentries;
	}
	fmt_copy(cmdline, sizeof(cmdline), h->cmdline, sizeof(h->cmdline));
	if (o->title)
		fmt_copy(title, sizeof(title), o->title, sizeof(title));
	else
		fmt_copy(title, sizeof(title), h->title, sizeof(h->title));
#define COMMENT(...)                                                           \
	do {                                                                   \
		fmt_init(&f, buf, sizeof(buf));                                \
		fmt_append(&f, __VA_ARGS__);                                   \
		rc |= pprof_add_comment(p, buf);                               \
	} while (0)
	COMMENT("palloc agent %s", PACKAGE_VERSION);
	COMMENT("command line: %s", cmdline);
	if (title[0] && strcmp(title, cmdline) != 0)
		COMMENT("process title: %s (the program rewrote its argv)",
			title);
	rc |= pprof_comment_add_pid(p, LOAD(h->pid));
	if (parent)
		COMMENT("forked from pid %d: this profile starts at the fork",
			(int)parent);
	if (flags & RECORD_F_ATTACHED)
		COMMENT("attached to a running process (palloc-run -p): blocks "
			"allocated before the attach are unknown, their frees "
			"ignored; calls that bypass the GOT are not seen");
	if (base_of(b))
		COMMENT("this attach only: from unix time %lld.%09lld s, for "
			"%lld ms (the profile's duration); samples and "
			"counters of earlier attaches left out; inuse: blocks "
			"allocated since still in use, less those of earlier "
			"attaches freed since",
			(long long)(o->window_start_unix_ns / 1000000000),
			(long long)(o->window_start_unix_ns % 1000000000),
			(long long)(b->p->duration_nanos / 1000000));
	if (rate == 0)
		COMMENT("sample rate: 0 (stack sampling off, counters only)");
	else if (rate == 1)
		COMMENT("sample rate: 1 (every allocation)");
	else
		COMMENT("sample rate: %llu bytes (Poisson; values are "
			"unbiased estimates)",
			(unsigned long long)rate);
	if (seed && rate > 1)
		COMMENT("seed: %llu (PALLOC_SEED)", (unsigned long long)seed);
	if (rate > 1)
		COMMENT("error bars: labels TYPE_stddev per sample; a sum of "
			"samples has sqrt(sum of stddev^2)");
	COMMENT("unwinder: %s, max depth %u", unwind_name(LOAD(h->unwind)),
		LOAD(h->max_depth));
	COMMENT("values: requested bytes; inuse: sampled allocations not yet "
		"freed");
	rc |= pprof_comment_add_samples(
		p, &(const struct pprof_comment_samples){
			   .sampled = c.samples,
			   .dropped = LOAD(h->dropped),
			   .dropped_bytes =
				   (uint64_t)round_value(h->dropped_bytes),
			   .max_stacks = LOAD(h->max_stacks),
		   });
	COMMENT("counters: alloc_count %llu, free_count %llu, alloc_bytes %llu",
		(unsigned long long)c.alloc_count,
		(unsigned long long)c.free_count,
		(unsigned long long)c.alloc_bytes);
	if (flags & RECORD_F_EXACT)
		COMMENT("exact: inuse_bytes %lld, peak_inuse_bytes %lld "
			"(usable sizes)",
			(long long)LOAD(h->exact_inuse),
			(long long)LOAD(h->exact_peak));
	if ((flags & RECORD_F_PEAK) && rate == 1)
		COMMENT("peak: inuse at the heap's high-water mark (every "
			"allocation sampled: exact)");
	else if (flags & RECORD_F_PEAK)
		COMMENT("peak: inuse when the sampled inuse estimate was "
			"highest; error bars in peak_inuse_*_stddev, and the "
			"highest of a noisy estimate tends to exceed the true "
			"peak by about one stddev");
	COMMENT("reentries after warm-up: %llu",
		(unsigned long long)c.reentries);
	if (LOAD(h->anon_bytes) >= 0) {
		COMMENT("memory at exit: anonymous %lld bytes, about %lld at "
			"the peak; malloc heap seen %lld bytes; not from it "
			"%lld bytes",
			(long long)LOAD(h->anon_bytes),
			(long long)LOAD(h->anon_peak_bytes),
			(long long)LOAD(h->heap_bytes),
			(long long)LOAD(h->unseen_bytes));
		unseen_warning(h, o, buf, sizeof(buf));
		if (buf[0])
			rc |= pprof_add_comment(p, buf);
	}
	if (c.alloc_count <= LOAD(h->alloc_at_init))
		COMMENT("no allocation observed since the agent started");
#undef COMMENT
	return rc ? -1 : 0;
}

/* The loaded modules' mappings, in the file's order (the main executable
 * first), as the encoder adds what is loaded. */
static int add_loaded(struct build *b)
{
	for (size_t i = 0; i < b->v->n_modules; i++)
		if (!LOAD(b->v->modules[i]->unload_gen) && !add_module(b, i))
			return -1;
	return 0;
}

struct pprof_profile *record_profile(const struct record_view *v,
				     const struct record_profile_opts *o,
				     const struct pprof_allocator *a)
{
	static const struct pprof_value_type types[] = {
		{"alloc_objects", "count"},	 {"alloc_space", "bytes"},
		{"inuse_objects", "count"},	 {"inuse_space", "bytes"},
		{"peak_inuse_objects", "count"}, {"peak_inuse_space", "bytes"},
	};
	static const struct record_profile_opts none = {0};
	struct build b = {.v = v, .o = o ? o : &none};
	const struct record_header *h = v->h;
	size_t nm = v->n_modules ? v->n_modules : 1;
	uint64_t rate = LOAD(h->rate);
	int rc = -1;

	b.a = alloc_or_default(a);
	b.p = pprof_new(b.a);
	if (!b.p)
		return NULL;
	b.mod_ids = pprof_int_alloc(b.a, nm, sizeof(*b.mod_ids));
	b.order = pprof_int_alloc(b.a, nm, sizeof(*b.order));
	b.max_limit = pprof_int_alloc(b.a, nm, sizeof(*b.max_limit));
	if (!b.mod_ids || !b.order || !b.max_limit)
		goto out;
	memset(b.mod_ids, 0, nm * sizeof(*b.mod_ids));
	sort_modules(&b);
	if (pprof_set_sample_types(
		    b.p, types, (LOAD(h->flags) & RECORD_F_PEAK) ? 6 : 4) < 0 ||
	    pprof_set_period(b.p, "space", "bytes",
			     rate > (uint64_t)INT64_MAX ? INT64_MAX
							: (int64_t)rate) < 0 ||
	    pprof_set_default_sample_type(
		    b.p, b.o->default_sample_type ? b.o->default_sample_type
						  : "inuse_space") < 0)
		goto out;
	b.p->time_nanos = b.o->time_nanos;
	b.p->duration_nanos = b.o->duration_nanos;
	if (add_loaded(&b) < 0 || add_samples(&b) < 0 || add_comments(&b) < 0)
		goto out;
	rc = 0;
out:
	pprof_int_free(b.a, b.mod_ids);
	pprof_int_free(b.a, b.order);
	pprof_int_free(b.a, b.max_limit);
	pprof_int_free(b.a, b.cache);
	if (rc < 0) {
		pprof_free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---- figures ---- */

void record_stats(const struct record_view *v, struct record_stats *st)
{
	const struct record_header *h = v->h;
	const uint32_t flags = LOAD(h->flags);
	struct wsum w = {0};
	struct counters c;

	memset(st, 0, sizeof(*st));
	sum_counters(v, &c);
	st->pid = LOAD(h->pid);
	st->parent_pid = LOAD(h->parent_pid);
	st->uid = LOAD(h->uid);
	st->flags = flags;
	st->state = LOAD(h->state);
	st->exit_status = LOAD(h->exit_status);
	st->start_unix_ns = LOAD(h->start_unix_ns);
	st->end_unix_ns = LOAD(h->end_unix_ns);
	st->update_unix_ns = LOAD(h->update_unix_ns);
	st->start_ticks = LOAD(h->start_ticks);
	st->exe = h->exe;
	st->cmdline = h->cmdline;
	st->title = h->title;
	st->rate = LOAD(h->rate);
	st->seed = LOAD(h->seed);
	st->max_depth = LOAD(h->max_depth);
	st->unwind = LOAD(h->unwind);
	st->max_stacks = LOAD(h->max_stacks);
	st->alloc_count = c.alloc_count;
	st->free_count = c.free_count;
	st->alloc_bytes = c.alloc_bytes;
	st->samples = c.samples;
	st->reentries = c.reentries;
	st->alloc_at_init = LOAD(h->alloc_at_init);
	st->dropped = LOAD(h->dropped);
	st->dropped_bytes = round_value(h->dropped_bytes);
	st->n_stacks = v->n_stacks;
	st->n_modules = v->n_modules;
	st->live_threads = c.live;
	sum_threads(v, &w, v->n_stacks, true);
	for (size_t i = 0; i < v->n_stacks; i++) {
		const struct record_stack *s = v->stacks[i].s;

		w.alloc_objects += s->alloc_objects;
		w.alloc_bytes += s->alloc_bytes;
		w.inuse_objects += s->inuse_objects;
		w.inuse_bytes += s->inuse_bytes;
	}
	st->alloc_objects_sampled = round_value(w.alloc_objects);
	st->alloc_bytes_sampled = round_value(w.alloc_bytes);
	st->inuse_objects_sampled = round_value(w.inuse_objects);
	st->inuse_bytes_sampled = round_value(w.inuse_bytes);
	if (st->inuse_objects_sampled > st->alloc_objects_sampled)
		st->inuse_objects_sampled = st->alloc_objects_sampled;
	if (st->inuse_bytes_sampled > st->alloc_bytes_sampled)
		st->inuse_bytes_sampled = st->alloc_bytes_sampled;
	st->max_inuse_bytes = flags & RECORD_F_PER_THREAD
				      ? LOAD(h->pt_max_bytes)
				      : round_value(h->max_inuse_bytes);
	st->exact_inuse = flags & RECORD_F_EXACT ? LOAD(h->exact_inuse) : -1;
	st->exact_peak = flags & RECORD_F_EXACT ? LOAD(h->exact_peak) : -1;
	st->anon_bytes = LOAD(h->anon_bytes);
	st->anon_peak_bytes = LOAD(h->anon_peak_bytes);
	st->heap_bytes = LOAD(h->heap_bytes);
	st->unseen_bytes = LOAD(h->unseen_bytes);
	st->allocator = &h->allocator;
	st->allocator_text = v->text;
	st->allocator_text_len = v->text_len;
	st->allocator_torn = v->text_torn;
}
