/* SPDX-License-Identifier: MIT */
/* Unit test of the stack table and the live-block table. */
#include "sampler.h"
#include "stacktab.h"
#include "tap.h"

static struct stacktab t;

/* A NUL-padded name buffer, as stacktab_intern() takes it. */
static const char *pad(const char *name)
{
	static char b[4][STACKTAB_THREAD_NAME];
	static int k;
	char *p = b[k++ % 4];

	memset(p, 0, STACKTAB_THREAD_NAME);
	memcpy(p, name, strlen(name));
	return p;
}

static void *a_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void a_free(void *ctx, void *p)
{
	(void)ctx;
	free(p);
}

/* As the agent's encoder rounds a value. */
static long long rnd(double v)
{
	return v > 0.5 ? (long long)(v + 0.5) : 0;
}

/*
 * DESIGN's invariant inuse <= alloc per sample. The weight of a live block
 * is kept as a float; alloc once summed the double weight: for sizes near
 * the rate, where float rounding of 1/p goes up, 100 live samples of one
 * size showed inuse_space one byte above alloc_space. Both now add the
 * same stored weight: with nothing freed they are equal.
 */
static void test_rounding(void)
{
	static const struct pprof_allocator hooks = {a_alloc, a_free, NULL};
	const uint64_t rate = 524288;
	unsigned bad = 0, sizes = 0;

	for (uint64_t size = rate / 2; size < 2 * rate; size += 997) {
		struct stacktab tt;
		uintptr_t pc = (uintptr_t)size;
		struct record_stack *s;
		double o, b;

		stacktab_init(&tt, &hooks, 0);
		s = stacktab_intern(&tt, &pc, 1, NULL);
		sampler_weight(rate, size, &o, &b);
		for (uintptr_t i = 1; s && i <= 100; i++)
			stacktab_add(&tt, s, i * 64, size, o);
		if (!s || rnd(s->inuse_bytes) > rnd(s->alloc_bytes) ||
		    rnd(s->inuse_objects) > rnd(s->alloc_objects) ||
		    s->inuse_bytes != s->alloc_bytes)
			bad++;
		sizes++;
		stacktab_destroy(&tt);
	}
	tap_ok(bad == 0,
	       "inuse == alloc with nothing freed, weights near the "
	       "rate: %u of %u sizes differ",
	       bad, sizes);
}

/* A tiny PRNG for the brute-force peak check. */
static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return *x >> 33;
}

/*
 * The peak is every stack's inuse when the total was highest (the exact
 * high-water mark at rate 1), not a snapshot taken now and then: random
 * allocations and frees on 8 stacks, checked after every event against a
 * brute-force copy of all stacks at each new maximum.
 */
static void test_peak(void)
{
	static const struct pprof_allocator hooks = {a_alloc, a_free, NULL};
	enum { NS = 8, NP = 512, EVENTS = 20000 };
	struct stacktab tt;
	struct record_stack *st[NS];
	double truth[NS] = {0}, now[NS] = {0}, max = 0, cur = 0;
	uint64_t live_size[NP] = {0}, x = 42;
	unsigned live_stack[NP] = {0}, wrong = 0, checks = 0, maxima = 0;

	stacktab_init(&tt, &hooks, 0);
	for (unsigned k = 0; k < NS; k++) {
		uintptr_t pc = 0x1000 + k;

		st[k] = stacktab_intern(&tt, &pc, 1, NULL);
	}
	for (unsigned e = 0; e < EVENTS; e++) {
		unsigned i = (unsigned)(lcg(&x) % NP);
		uintptr_t ptr = 0x100000 + (uintptr_t)i * 64;

		if (live_size[i]) {
			stacktab_remove(&tt, ptr, NULL);
			now[live_stack[i]] -= (double)live_size[i];
			cur -= (double)live_size[i];
			live_size[i] = 0;
		} else {
			unsigned k = (unsigned)(lcg(&x) % NS);
			uint64_t size = 1 + lcg(&x) % 5000;

			stacktab_add(&tt, st[k], ptr, size, 1);
			live_size[i] = size;
			live_stack[i] = k;
			now[k] += (double)size;
			cur += (double)size;
			if (cur > max) {
				max = cur;
				memcpy(truth, now, sizeof(truth));
				maxima++;
			}
		}
		if (lcg(&x) % 16 == 0) {
			stacktab_settle_peak(&tt);
			checks++;
			for (unsigned k = 0; k < NS; k++)
				wrong += st[k]->peak_bytes != truth[k];
			wrong += tt.peak_bytes != max;
		}
	}
	tap_ok(wrong == 0 && checks > 100 && maxima > 10,
	       "peak per stack exact at %u checks over %u maxima (%u wrong)",
	       checks, maxima, wrong);
	stacktab_destroy(&tt);
}

/*
 * The parts for several threads (stacktab.h, "Threads"): blocks of two
 * neighbouring 64 MiB regions (two glibc thread arenas) go to different
 * shards, and each part touches only its own shard; a stale entry comes
 * back from stacktab_live_put(); rate 1's all_live sets every filter bit
 * for good and writes no count; a stack found before the stacks[] array
 * grew stays readable through stacktab_get().
 */
static void test_threads(const struct pprof_allocator *hooks)
{
	static struct stacktab tt;
	const uintptr_t a = (uintptr_t)0x7f0004000000ULL, b = a + (1 << 26);
	struct stacktab_shard *sa, *sb;
	struct record_stack *s, *first;
	struct stacktab_live e, stale, out;
	uintptr_t pcs[1];
	bool ok = true;
	uint64_t sum = 0;

	stacktab_init(&tt, hooks, 0);
	stacktab_all_live(&tt);
	pcs[0] = 0x4000;
	first = s = stacktab_intern(&tt, pcs, 1, pad("t"));
	sa = stacktab_shard(&tt, a);
	sb = stacktab_shard(&tt, b);
	tap_ok(sa != sb && sa == stacktab_shard(&tt, a + (1 << 26) - 16),
	       "a 64 MiB region is one shard, its neighbour another");
	e = (struct stacktab_live){
		.ptr = a, .size = 10, .objects = 1, .stack_id = s->id};
	stacktab_count(s, &e);
	ok &= stacktab_live_put(&tt, &e, &stale) == 0;
	stacktab_inuse_in(&tt, &e);
	tap_ok(ok && sa->n_live == 1 && sb->live == NULL && sb->n_live == 0,
	       "a put touches its shard only");
	e.size = 20;
	tap_ok(stacktab_live_put(&tt, &e, &stale) == 1 && stale.size == 10 &&
		       sa->n_live == 1,
	       "a put over a stale entry hands it back");
	stacktab_inuse_out(&tt, &stale);
	stacktab_inuse_in(&tt, &e);
	tap_ok(stacktab_live_take(&tt, a, &out) && out.size == 20 &&
		       !stacktab_live_take(&tt, a, &out) && sb->live == NULL,
	       "a take finds it once, in its shard");
	stacktab_inuse_out(&tt, &out);
	tap_ok(s->inuse_objects == 0 && s->alloc_objects == 1 &&
		       tt.n_live == 0 && tt.max_inuse_bytes == 20,
	       "weights and totals through the parts");
	for (size_t i = 0; i < ARRAY_SIZE(tt.filter); i++)
		sum += tt.filter[i];
	tap_ok(sum == 0 && stacktab_maybe_live(&tt, 0x1234560) &&
		       stacktab_maybe_live(&tt, b),
	       "all_live: every bit set, no count written");
	stacktab_reset(&tt);
	tap_ok(stacktab_maybe_live(&tt, 0x98760), "all_live survives reset");
	for (int i = 1; i <= 1000 && s; i++) {
		pcs[0] = 0x4000 + (uintptr_t)i;
		s = stacktab_intern(&tt, pcs, 1, pad("t"));
	}
	tap_ok(s && stacktab_n_stacks(&tt) == 1001 &&
		       stacktab_get(&tt, first->id) == first &&
		       stacktab_matches(first, (uintptr_t[]){0x4000}, 1,
					pad("t")) &&
		       !stacktab_matches(first, pcs, 1, pad("t")),
	       "stacks stay where they were as the array grows");
	stacktab_destroy(&tt);
}

/*
 * Weights per thread: a block sampled in one record and freed in another
 * leaves the first +1 and the second -1 (negative); folded into the stack
 * or summed, the values are the stack's.
 */
static void test_recs(const struct pprof_allocator *hooks)
{
	static struct stacktab tt;
	struct record_rec r1 = {0}, r2 = {0};
	struct stacktab_weights sum;
	struct stacktab_live e = {.ptr = 0x1000, .size = 7, .objects = 1};
	struct record_stack *s;
	uintptr_t pc = 0x4000;

	stacktab_init(&tt, hooks, 0);
	s = stacktab_intern(&tt, &pc, 1, pad("t"));
	e.stack_id = r1.id = r2.id = s->id;
	stacktab_rec_add(&r1, 30, true, 1);
	stacktab_rec_add(&r1, 50, true, 1);
	stacktab_rec_add(&r2, 50, false, -1);
	tap_ok(r1.inuse_bytes == 80 && r1.alloc_objects == 2 &&
		       r2.inuse_objects == -1 && r2.inuse_bytes == -50 &&
		       r2.alloc_objects == 0,
	       "a free in another thread's record goes negative");
	stacktab_weights_add(s, &e, true, 1);
	stacktab_weights_of(&sum, s);
	stacktab_rec_sum(&sum, &r1);
	stacktab_rec_sum(&sum, &r2);
	stacktab_rec_fold(s, &r1);
	stacktab_rec_fold(s, &r2);
	tap_ok(sum.alloc_objects == 3 && sum.alloc_bytes == 87 &&
		       sum.inuse_objects == 2 && sum.inuse_bytes == 37 &&
		       s->alloc_bytes == 87 && s->inuse_bytes == 37 &&
		       s->inuse_objects == 2 && s->last_ev == 0,
	       "summed or folded, the stack's values, no peak event");
	stacktab_destroy(&tt);
}

/* ext_stack for test_ext: copies into buf while there is room (2
 * stacks), then refuses. */
static unsigned char ext_buf[2][sizeof(struct record_stack) + 8 * 8]
	__attribute__((aligned(16)));
static int ext_n;

static int ext_copy(void *ctx, const struct record_stack *s, size_t size,
		    struct record_stack **copy)
{
	(void)ctx;
	if (ext_n == 2 || size > sizeof(ext_buf[0]))
		return -1;
	memcpy(ext_buf[ext_n], s, size);
	*copy = (struct record_stack *)(void *)ext_buf[ext_n++];
	return 0;
}

/* New stacks go to ext_stack while it gives them, in id order, complete
 * when it sees them; after its first refusal, to the allocator for good
 * (a prefix); destroy frees only the allocator's. */
static void test_ext(const struct pprof_allocator *hooks)
{
	static struct stacktab tt;
	uintptr_t pcs[3] = {0x10, 0x20, 0x30};
	struct record_stack *s[4];

	stacktab_init(&tt, hooks, 0);
	tt.ext_stack = ext_copy;
	for (int i = 0; i < 3; i++) {
		pcs[0] = 0x10 + (uintptr_t)i;
		s[i] = stacktab_intern(&tt, pcs, 3, pad("x"));
	}
	tap_ok(s[0] == (void *)ext_buf[0] && s[1] == (void *)ext_buf[1] &&
		       s[2] && s[2] != (void *)ext_buf[0] &&
		       s[2] != (void *)ext_buf[1],
	       "ext gives the first stacks, the allocator the next");
	tap_ok(s[0]->id == 1 && s[1]->id == 2 && s[1]->depth == 3 &&
		       s[1]->pcs[0] == 0x11 && s[1]->pcs[2] == 0x30 &&
		       memcmp(s[1]->thread, pad("x"), 16) == 0 &&
		       tt.n_ext == 2 && !tt.ext_stack,
	       "ext's copies are complete, in id order; ext dropped after a "
	       "refusal");
	ext_n = 0; /* room again: not asked any more */
	pcs[0] = 0x99;
	s[3] = stacktab_intern(&tt, pcs, 3, pad("x"));
	tap_ok(s[3] && s[3]->id == 4 && ext_n == 0,
	       "after a refusal ext stays unused (the prefix)");
	tap_ok(stacktab_intern(&tt, pcs, 3, pad("x")) == s[3] &&
		       stacktab_get(&tt, 1) == s[0],
	       "ext's stacks are found again");
	stacktab_destroy(&tt);
}

int main(void)
{
	static const struct pprof_allocator hooks = {a_alloc, a_free, NULL};
	uintptr_t pcs1[] = {0x1000, 0x2000, 0x3000};
	uintptr_t pcs2[] = {0x1000, 0x2000, 0x3001};
	struct record_stack *s1, *s2, *s3;
	struct stacktab_live e;
	bool ok = true;

	stacktab_init(&t, &hooks, 3);
	s1 = stacktab_intern(&t, pcs1, 3, pad("main"));
	s2 = stacktab_intern(&t, pcs2, 3, pad("main"));
	s3 = stacktab_intern(&t, pcs1, 3, pad("worker"));
	tap_ok(s1 && s2 && s3 && s1 != s2 && s1 != s3 && s2 != s3,
	       "stacks differ by frames and by thread name");
	tap_ok(stacktab_intern(&t, pcs1, 3, pad("main")) == s1,
	       "same key, same stack");
	tap_ok(stacktab_intern(&t, pcs1, 2, pad("main")) == NULL,
	       "a fourth stack is refused (cap 3)");
	tap_ok(s2 && stacktab_get(&t, s2->id) == s2 &&
		       stacktab_get(&t, 99) == NULL,
	       "lookup by id");

	tap_ok(!stacktab_maybe_live(&t, 0x5000), "filter empty at first");
	stacktab_add(&t, s1, 0x5000, 100, 1);
	stacktab_add(&t, s1, 0x6000, 50, 1);
	tap_ok(stacktab_maybe_live(&t, 0x5000), "filter sees a live block");
	tap_ok(s1->alloc_objects == 2 && s1->alloc_bytes == 150 &&
		       s1->inuse_objects == 2 && s1->inuse_bytes == 150,
	       "alloc and inuse add up");
	tap_ok(stacktab_remove(&t, 0x5000, &e) && e.size == 100 &&
		       e.stack_id == s1->id,
	       "remove gives the entry");
	tap_ok(!stacktab_remove(&t, 0x5000, NULL),
	       "second remove finds nothing");
	tap_ok(s1->inuse_objects == 1 && s1->inuse_bytes == 50 &&
		       s1->alloc_objects == 2,
	       "inuse drops, alloc stays");
	tap_ok(stacktab_restore(&t, &e) == 0 && s1->inuse_bytes == 150,
	       "restore puts it back");
	/* Error bars: a sample of 10 bytes weighing 4 objects (p = 1/4)
	 * adds 4 * 3 = 12 objects^2 and 40 * (40 - 10) = 1200 bytes^2; its
	 * free takes the inuse part back out exactly. */
	{
		struct record_stack *sv = s2; /* nothing on it yet */

		tap_ok(sv && stacktab_add(&t, sv, 0x9000, 10, 4) == 0 &&
			       sv->alloc_var_objects == 12 &&
			       sv->alloc_var_bytes == 1200 &&
			       sv->inuse_var_objects == 12 &&
			       sv->inuse_var_bytes == 1200,
		       "variance w (w - s) added to alloc and inuse");
		stacktab_settle_peak(&t);
		tap_ok(sv && stacktab_remove(&t, 0x9000, NULL) &&
			       sv->inuse_var_objects == 0 &&
			       sv->inuse_var_bytes == 0 &&
			       sv->alloc_var_bytes == 1200 &&
			       sv->peak_var_bytes == 1200,
		       "free removes the inuse variance; alloc and peak keep "
		       "it");
		tap_ok(sv && stacktab_add(&t, sv, 0x9000, 64, 1) == 0 &&
			       sv->alloc_var_bytes == 1200 &&
			       sv->inuse_var_bytes == 0,
		       "weight 1 (rate 1): no variance");
		stacktab_remove(&t, 0x9000, NULL);
	}
	/* a stale pointer (its free went unseen) is replaced */
	stacktab_add(&t, s2, 0x5000, 7, 1);
	tap_ok(s1->inuse_bytes == 50 && s2->inuse_bytes == 7,
	       "re-adding a live pointer moves it");

	/* many pointers: growth and backward-shift deletion */
	for (uintptr_t i = 1; i <= 100000; i++)
		ok &= stacktab_add(&t, s3, 0x1000000 + i * 16, 1, 1) == 0;
	tap_ok(ok && t.n_live == 100002, "100000 live blocks (%zu)", t.n_live);
	for (uintptr_t i = 1; i <= 100000; i += 2)
		ok &= stacktab_remove(&t, 0x1000000 + i * 16, NULL);
	for (uintptr_t i = 2; i <= 100000; i += 2)
		ok &= stacktab_remove(&t, 0x1000000 + i * 16, NULL);
	tap_ok(ok && t.n_live == 2 && s3->inuse_objects == 0 &&
		       s3->alloc_objects == 100000,
	       "all removed, in two interleaved passes");
	{
		uint64_t sum = 0;

		for (size_t i = 0; i < ARRAY_SIZE(t.filter); i++)
			sum += t.filter[i];
		tap_ok(sum == t.n_live, "filter counts fall back (%llu)",
		       (unsigned long long)sum);
	}
	tap_ok(t.inuse_bytes == 57 && t.max_inuse_bytes >= 100057,
	       "total inuse %.0f, high-water %.0f", t.inuse_bytes,
	       t.max_inuse_bytes);
	stacktab_settle_peak(&t);
	tap_ok(s1->peak_bytes == 50 && s2->peak_bytes == 7 &&
		       s3->peak_bytes == 100000 && t.peak_bytes == 100057,
	       "peak: every stack's inuse at the high-water mark");
	stacktab_reset(&t);
	tap_ok(s1->alloc_objects == 0 && t.n_live == 0 &&
		       !stacktab_maybe_live(&t, 0x6000) &&
		       stacktab_intern(&t, pcs1, 3, pad("main")) == s1,
	       "reset zeroes counts, keeps stacks");
	stacktab_destroy(&t);
	tap_ok(t.n_stacks == 0, "destroy");
	test_rounding();
	test_peak();
	test_threads(&hooks);
	test_recs(&hooks);
	test_ext(&hooks);
	return tap_done();
}
