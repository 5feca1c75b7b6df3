/* SPDX-License-Identifier: MIT */
/*
 * The encoder: the stack table (stacktab.c) as a struct pprof_profile,
 * with a mapping per loaded object (phdr.c, extramaps.c), a location per
 * frame, a sample per stack with its error bars, and the comments that
 * describe the process and the agent. Called by the life cycle (agent.c)
 * and the control thread with agent_dump_lock held; allocates in the
 * arena only.
 */
#include "agent_int.h"
#include "agent/unseen.h"
#include "fmt.h"
#include "msg.h"
#include "palloc.h"
#include "phdr.h"
#include "pprof.h"
#include "pprof_comments.h"

#include <math.h>
#include <time.h>

struct seg {
	uintptr_t start, limit;
	uint64_t id;
};

struct map_ctx {
	struct pprof_profile *p;
	struct seg *segs;
	size_t n, cap;
	int err;
};

static int add_mapping(const struct phdr_segment *s, void *arg)
{
	struct map_ctx *m = arg;
	struct pprof_mapping pm = {
		.start = s->start,
		.limit = s->limit,
		.offset = s->offset,
		.file = s->path,
		.build_id = s->build_id,
	};
	uint64_t id;

	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct seg *n = arena_alloc(&agent_arena, cap * sizeof(*n));

		if (!n) {
			m->err = -1;
			return 1;
		}
		if (m->segs)
			memcpy(n, m->segs, m->n * sizeof(*n));
		arena_free(&agent_arena, m->segs);
		m->segs = n;
		m->cap = cap;
	}
	id = pprof_add_mapping(m->p, &pm);
	if (!id) {
		m->err = -1;
		return 1;
	}
	m->segs[m->n].start = s->start;
	m->segs[m->n].limit = s->limit;
	m->segs[m->n].id = id;
	m->n++;
	return 0;
}

/* Insertion sort by start: a few hundred segments, no qsort (it may
 * allocate). */
static void sort_segs(struct seg *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct seg x = s[i];
		size_t j = i;

		while (j > 0 && s[j - 1].start > x.start) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = x;
	}
}

static uint64_t find_mapping(const struct map_ctx *m, uintptr_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && addr < m->segs[lo - 1].limit)
		return m->segs[lo - 1].id;
	return 0;
}

/* The square root of a variance sum, rounded; a negative residue of the
 * subtractions at free (float rounding) counts as 0. */
static int64_t round_stddev(double var)
{
	return round_value(var > 0 ? sqrt(var) : 0);
}

/*
 * Per-sample numeric labels "TYPE_stddev" (TYPE: each sample type, unit
 * "count" or "bytes"), the standard deviation of that sample's value from
 * the sampling: the square root of the summed per-allocation variances
 * (stacktab.h, "Error bars"). Only when the rate is above 1 (at rate 1 the
 * values are exact). A reader that aggregates samples (by function, by
 * anything) must add variances, not deviations: sigma of a sum =
 * sqrt(sum of stddev^2). The labels do not change the sample types or
 * values; pprof shows them with -raw and -tags.
 */
static const char *const stddev_keys[6] = {
	"alloc_objects_stddev",	     "alloc_space_stddev",
	"inuse_objects_stddev",	     "inuse_space_stddev",
	"peak_inuse_objects_stddev", "peak_inuse_space_stddev",
};

/* The samples; sum: the weights summed over the threads' records
 * (agent_weights_sum), n_sum of them, else the stacks' own. */
static int add_samples_of(struct pprof_profile *p, const struct map_ctx *m,
			  struct agent_extra *x,
			  const struct stacktab_weights *sum, size_t n_sum)
{
	const bool peak = agent_cfg.peak;
	const size_t n_types = peak ? 6 : 4;
	const bool stddev = agent_cfg.rate > 1;
	uint64_t ids[MAX_DEPTH_LIMIT];

	if (peak)
		stacktab_settle_peak(&agent_tab);
	for (size_t i = 0; i < stacktab_n_stacks(&agent_tab); i++) {
		const struct record_stack *s =
			stacktab_get(&agent_tab, (uint32_t)i + 1);
		struct stacktab_weights w;
		int64_t v[6];
		double var[6];
		struct pprof_label labels[7];
		size_t n_labels = 0;
		bool any = false;
		size_t n;

		if (!s)
			continue;
		n = s->depth < ARRAY_SIZE(ids) ? s->depth : ARRAY_SIZE(ids);

		if (i < n_sum)
			w = sum[i];
		else
			stacktab_weights_of(&w, s);
		v[0] = round_value(w.alloc_objects);
		v[1] = round_value(w.alloc_bytes);
		v[2] = round_value(w.inuse_objects);
		v[3] = round_value(w.inuse_bytes);
		v[4] = round_value(s->peak_objects);
		v[5] = round_value(s->peak_bytes);
		/*
		 * inuse <= alloc per sample (DESIGN): both add the same
		 * stored weights (stacktab_add), but the inuse sums also
		 * subtract, and a double sum of fractional weights may end
		 * a rounding step above the alloc sum. Clamp that residue
		 * (under a byte) rather than write an impossible sample.
		 */
		for (size_t k = 2; k < 6; k++)
			if (v[k] > v[k % 2])
				v[k] = v[k % 2];
		var[0] = w.alloc_var_objects;
		var[1] = w.alloc_var_bytes;
		var[2] = w.inuse_var_objects;
		var[3] = w.inuse_var_bytes;
		var[4] = s->peak_var_objects;
		var[5] = s->peak_var_bytes;
		for (size_t k = 0; k < n_types; k++)
			any |= v[k] != 0;
		if (!any)
			continue;
		if (s->thread[0])
			labels[n_labels++] = (struct pprof_label){
				.key = "thread",
				.str = s->thread,
				.num_unit = "",
			};
		for (size_t k = 0; stddev && k < n_types; k++)
			labels[n_labels++] = (struct pprof_label){
				.key = stddev_keys[k],
				.str = "",
				.num = round_stddev(var[k]),
				.num_unit = k % 2 ? "bytes" : "count",
			};
		for (size_t k = 0; k < n; k++) {
			/* Return address - 1: inside the call instruction,
			 * as Go writes it (pprof does not adjust). */
			uintptr_t a = s->pcs[k] - 1;
			uint64_t mid = 0;

			/* a sealed stack: its frame may be in an object
			 * unloaded since (extramaps.c) */
			if (s->gen != agent_tab.gen)
				mid = agent_extra_unloaded(x, s->gen, a);
			if (!mid)
				mid = find_mapping(m, a);
			if (!mid)
				mid = agent_extra_anon(x, a);
			ids[k] = mid ? pprof_add_location(p, mid, a, NULL, 0)
				     : 0;
			if (!ids[k])
				return -1;
		}
		if (pprof_add_sample(p, ids, n, v, labels, n_labels) < 0)
			return -1;
	}
	return 0;
}

static int add_samples(struct pprof_profile *p, const struct map_ctx *m,
		       struct agent_extra *x)
{
	struct stacktab_weights *sum = NULL;
	size_t n_sum = 0;
	int rc;

	if (agent_per_thread) {
		sum = agent_weights_sum(&n_sum);
		if (!sum) {
			msg_set("no memory to sum the threads' weights");
			return -1;
		}
	}
	rc = add_samples_of(p, m, x, sum, n_sum);
	arena_free(&agent_arena, sum);
	return rc;
}

/*
 * The peak of the malloc heap the agent saw, for unseen_measure(): the
 * exact peak, or the sampled high-water mark plus 16 bytes of allocator
 * overhead (a chunk header and rounding) per object live then; -1 when
 * sampling is off.
 */
static int64_t heap_peak_bytes(void)
{
	double bytes, objects = 0;

	if (agent_cfg.exact)
		return __atomic_load_n(&agent_hdr->exact_peak,
				       __ATOMIC_RELAXED);
	if (!agent_cfg.rate)
		return -1;
	if (agent_per_thread)
		return __atomic_load_n(&agent_hdr->pt_max_bytes,
				       __ATOMIC_RELAXED) +
		       16 * __atomic_load_n(&agent_hdr->pt_max_objects,
					    __ATOMIC_RELAXED);
	agent_lock(&agent_tab_lock);
	stacktab_settle_peak(&agent_tab);
	for (size_t i = 0; i < stacktab_n_stacks(&agent_tab); i++) {
		const struct record_stack *s =
			stacktab_get(&agent_tab, (uint32_t)i + 1);

		objects += s ? s->peak_objects : 0;
	}
	bytes = agent_tab.max_inuse_bytes;
	agent_unlock(&agent_tab_lock);
	return round_value(bytes + 16 * objects);
}

void agent_get_unseen(struct unseen *u)
{
	unseen_measure(u, heap_peak_bytes());
}

static int add_comments(struct pprof_profile *p,
			const struct agent_process *proc, bool *observed)
{
	uint64_t ac, fc, ab, re, ns;
	char buf[2400], title[256];
	struct fmt_buf b;
	int rc = 0;

	agent_sum_counters(&ac, &fc, &ab, &re, &ns);
	*observed = ac > proc->alloc_at_init;
#define COMMENT(...)                                                           \
	do {                                                                   \
		fmt_init(&b, buf, sizeof(buf));                                \
		fmt_append(&b, __VA_ARGS__);                                   \
		rc |= pprof_add_comment(p, buf);                               \
	} while (0)
	COMMENT("palloc agent %s", PACKAGE_VERSION);
	COMMENT("command line: %s", proc->cmdline);
	agent_output_title(title, sizeof(title));
	if (title[0] && strcmp(title, proc->cmdline) != 0)
		COMMENT("process title: %s (the program rewrote its argv)",
			title);
	rc |= pprof_comment_add_pid(p, proc->pid);
	if (proc->parent_pid)
		COMMENT("forked from pid %d: this profile starts at the fork",
			(int)proc->parent_pid);
	if (agent_cfg.rate == 0)
		COMMENT("sample rate: 0 (stack sampling off, counters only)");
	else if (agent_cfg.rate == 1)
		COMMENT("sample rate: 1 (every allocation)");
	else
		COMMENT("sample rate: %llu bytes (Poisson; values are "
			"unbiased estimates)",
			(unsigned long long)agent_cfg.rate);
	if (agent_cfg.seed && agent_cfg.rate > 1)
		COMMENT("seed: %llu (PALLOC_SEED)",
			(unsigned long long)agent_cfg.seed);
	if (agent_cfg.rate > 1)
		COMMENT("error bars: labels TYPE_stddev per sample; a sum of "
			"samples has sqrt(sum of stddev^2)");
	COMMENT("unwinder: %s, max depth %u",
		unwind_mode_name(agent_cfg.unwind), agent_cfg.max_depth);
	COMMENT("values: requested bytes; inuse: sampled allocations not yet "
		"freed");
	rc |= pprof_comment_add_samples(
		p, &(const struct pprof_comment_samples){
			   .sampled = ns,
			   .dropped = agent_hdr->dropped,
			   .dropped_bytes = (uint64_t)round_value(
				   agent_hdr->dropped_bytes),
			   .max_stacks = agent_tab.max_stacks,
		   });
	COMMENT("counters: alloc_count %llu, free_count %llu, alloc_bytes %llu",
		(unsigned long long)ac, (unsigned long long)fc,
		(unsigned long long)ab);
	if (agent_cfg.exact)
		COMMENT("exact: inuse_bytes %lld, peak_inuse_bytes %lld "
			"(usable sizes)",
			(long long)__atomic_load_n(&agent_hdr->exact_inuse,
						   __ATOMIC_RELAXED),
			(long long)__atomic_load_n(&agent_hdr->exact_peak,
						   __ATOMIC_RELAXED));
	if (agent_cfg.peak && agent_cfg.rate == 1)
		COMMENT("peak: inuse at the heap's high-water mark (every "
			"allocation sampled: exact)");
	else if (agent_cfg.peak)
		COMMENT("peak: inuse when the sampled inuse estimate was "
			"highest; error bars in peak_inuse_*_stddev, and the "
			"highest of a noisy estimate tends to exceed the true "
			"peak by about one stddev");
	COMMENT("reentries after warm-up: %llu", (unsigned long long)re);
	if (proc->exit_unseen) {
		const struct unseen *u = proc->exit_unseen;

		COMMENT("memory at exit: anonymous %lld bytes, about %lld at "
			"the peak; malloc heap seen %lld bytes; not from it "
			"%lld bytes",
			(long long)u->anon_bytes, (long long)u->anon_peak_bytes,
			(long long)u->heap_bytes, (long long)u->unseen_bytes);
		if (u->most) {
			/* palloc-run prints "warning: " comments beside
			 * the profile's summary line. */
			fmt_init(&b, buf, sizeof(buf));
			fmt_append(&b, PPROF_COMMENT_WARNING);
			unseen_text(u, buf + b.len, sizeof(buf) - b.len);
			rc |= pprof_add_comment(p, buf);
		}
	}
	if (!*observed)
		COMMENT("no allocation observed since the agent started");
#undef COMMENT
	return rc ? -1 : 0;
}

struct pprof_profile *agent_encode(const struct agent_process *proc,
				   bool exiting, const char *dflt)
{
	static const struct pprof_value_type types[] = {
		{"alloc_objects", "count"},	 {"alloc_space", "bytes"},
		{"inuse_objects", "count"},	 {"inuse_space", "bytes"},
		{"peak_inuse_objects", "count"}, {"peak_inuse_space", "bytes"},
	};
	struct pprof_profile *p;
	struct map_ctx m = {0};
	struct agent_extra x;
	bool observed;
	int rc;

	p = pprof_new(&agent_alloc_hooks);
	if (!p)
		return NULL;
	m.p = p;
	if (pprof_set_sample_types(p, types, agent_cfg.peak ? 6 : 4) < 0 ||
	    pprof_set_period(p, "space", "bytes", (int64_t)agent_cfg.rate) <
		    0 ||
	    pprof_set_default_sample_type(p, dflt) < 0)
		goto fail;
	/* in a fork child whose loader may be locked: from the copy */
	phdr_foreach(add_mapping, &m);
	if (m.err)
		goto fail;
	sort_segs(m.segs, m.n);
	if (agent_lock_bounded(&agent_tab_lock, exiting) < 0) {
		msg_set("the stack table stayed locked by another thread");
		goto fail;
	}
	rc = agent_extra_begin(&x, p);
	if (rc == 0)
		rc = add_samples(p, &m, &x);
	agent_extra_end(&x);
	agent_unlock(&agent_tab_lock);
	if (rc < 0 || add_comments(p, proc, &observed) < 0)
		goto fail;
	arena_free(&agent_arena, m.segs);
	return p;
fail:
	arena_free(&agent_arena, m.segs);
	pprof_free(p);
	return NULL;
}
