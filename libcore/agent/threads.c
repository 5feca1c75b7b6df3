/* SPDX-License-Identifier: MIT */
/*
 * The thread registry: each thread's counters (agent_tls), registered on
 * its first call, summed for the profiles, folded in at thread exit and
 * reset in a fork child.
 */
#include "hooks_int.h"
#include "sampler.h"
#include "sys.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

/* In .tdata: every thread starts with free_count armed (see count_free). */
__thread struct agent_thread agent_tls
	__attribute__((tls_model("initial-exec"))) = {.free_count = UINT64_MAX};

/*
 * alloc_bytes of thread t, read from any thread: the reader half of the
 * seqcount. A writer interrupted for good inside guard_enter() (a signal
 * handler that longjmps out of it) leaves seq odd; after 1000 tries the
 * last reading is taken, off by at most one sampling interval.
 */
static uint64_t thread_alloc_bytes(const struct agent_thread *t)
{
	uint64_t base, left;

	for (int i = 0;; i++) {
		unsigned seq = __atomic_load_n(&t->seq, __ATOMIC_ACQUIRE);

		base = __atomic_load_n(&t->bytes_base, __ATOMIC_RELAXED);
		left = __atomic_load_n(&t->left, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if ((!(seq & 1) &&
		     __atomic_load_n(&t->seq, __ATOMIC_RELAXED) == seq) ||
		    i >= 1000)
			break;
		if (i >= 10)
			sched_yield();
	}
	return base - left;
}

static struct agent_thread *registry;
/* The counters of threads that have exited are agent_hdr->exited_*. */
static pthread_key_t thread_key;
static bool thread_key_ok;

/*
 * The key destructor: fold the exiting thread into the sums, unregister.
 * The program's own key destructors (thread caches) still allocate and
 * free after ours, in the same round; so we set the key again and fold in
 * the last round glibc runs (PTHREAD_DESTRUCTOR_ITERATIONS), else those
 * calls would be missing from alloc_count and free_count (t/3017).
 */
static void thread_exit(void *arg)
{
	struct agent_thread *t = arg;

	if (t != &agent_tls || t->state != AGENT_THREAD_LIVE)
		return;
	if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		/* pthread_setspecific may calloc a key page. */
		guard_enter(t);
		t->quiet++;
		pthread_setspecific(thread_key, t);
		t->quiet--;
		guard_leave(t);
		return;
	}
	struct record_rec *recs;
	struct record_header *h = agent_hdr;

	/* Its weights into the stacks' own values, in the same section as
	 * it leaves the registry: a profile sums them exactly once; a
	 * reader of the record sees the move inside header.seq. */
	agent_lock(&agent_tab_lock);
	pthread_mutex_lock(&agent_reg_lock);
	record_seq_begin();
	recs = t->recs;
	for (uint32_t i = 0; i < t->recs_cap; i++) {
		struct record_stack *s =
			recs[i].id ? stacktab_get(&agent_tab, recs[i].id)
				   : NULL;

		if (s)
			stacktab_rec_fold(s, &recs[i]);
	}
	t->recs = t->rec = NULL;
	t->recs_cap = t->recs_n = 0;
	h->exited_alloc_count += t->alloc_count;
	h->exited_free_count += thread_frees(t);
	h->exited_alloc_bytes += t->bytes_base - t->left;
	h->exited_reentries += t->reentries;
	h->exited_samples += t->samples;
	if (t->slot) {
		/* Its table, zeroed, stays with the slot for the next
		 * thread. */
		record_thread_free(t->slot);
		t->slot = NULL;
	}
	record_seq_end();
	if (record_owns(recs))
		recs = NULL;
	if (t->prev)
		t->prev->next = t->next;
	else
		registry = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	t->state = AGENT_THREAD_EXITED;
	pthread_mutex_unlock(&agent_reg_lock);
	agent_unlock(&agent_tab_lock);
	arena_free(&agent_arena, recs);
	/*
	 * The rest of this thread's teardown still allocates and frees
	 * (glibc's own TLS and stack cache). Frees of sampled blocks are still
	 * seen (they do not depend on the thread); allocations are counted in
	 * the now unregistered block, i.e. not at all, and never sampled.
	 */
	guard_enter(t);
	t->held = UINT64_MAX;
	guard_leave(t);
	t->sample_left = UINT64_MAX;
}

int agent_threads_init(void)
{
	if (pthread_key_create(&thread_key, thread_exit) != 0)
		return -1;
	thread_key_ok = true;
	return 0;
}

/*
 * With PALLOC_SEED=N (not 0), thread k of the process (k counted in the
 * order threads first reach the agent's slow path; a fork child goes on
 * counting from its parent's value) draws from the stream seeded by (N, k):
 * a program whose threads allocate the same sequence in the same order
 * then samples the same allocations in every run. Without it, the seed
 * mixes pid, tid, the clock and the TLS address.
 */
static uint64_t seed_serial;

/* Give registered thread t a slot in the record (under agent_reg_lock),
 * and the weight table a freed slot keeps. */
static void thread_attach(struct agent_thread *t)
{
	struct record_thread *s = record_thread_slot((int)sys_gettid());

	t->slot = s;
	if (s && s->recs && s->recs_cap && !t->recs) {
		t->recs = record_at(s->recs);
		t->recs_cap = s->recs_cap;
		t->recs_n = 0;
		t->rec = NULL;
	}
}

void agent_thread_setup(struct agent_thread *t)
{
	struct timespec ts;
	int saved = errno;

	if (agent_cfg.seed) {
		uint64_t k =
			__atomic_fetch_add(&seed_serial, 1, __ATOMIC_RELAXED);

		t->rng = sampler_seed(agent_cfg.seed, k, 0x9a110c);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t->rng = sampler_seed(
			(uint64_t)sys_getpid() << 32 ^ (uint64_t)sys_gettid(),
			(uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30,
			(uintptr_t)t);
	}
	t->name_time_ns = 0;
	/* The countdown goes to left at the outermost guard_leave. */
	guard_enter(t);
	if (agent_mode != AGENT_ON) {
		t->held = UINT64_MAX;
		t->sample_left = UINT64_MAX;
	} else if (agent_cfg.exact) {
		t->held = 0;
		t->sample_left = sampler_interval(&t->rng, agent_cfg.rate);
	} else {
		t->held = sampler_interval(&t->rng, agent_cfg.rate);
	}
	/* Disarm the first-free test: the frees counted before the agent
	 * started become the count (the true one while guarded). */
	if (t->held_frees == UINT64_MAX) {
		t->held_frees = t->early_frees;
		t->early_frees = 0;
	}
	guard_leave(t);
	if (t->state == AGENT_THREAD_NEW) {
		pthread_mutex_lock(&agent_reg_lock);
		t->prev = NULL;
		t->next = registry;
		if (registry)
			registry->prev = t;
		registry = t;
		t->state = AGENT_THREAD_LIVE;
		if (agent_mode == AGENT_ON)
			thread_attach(t);
		pthread_mutex_unlock(&agent_reg_lock);
		if (thread_key_ok) {
			/* pthread_setspecific may calloc a key page. */
			guard_enter(t);
			t->quiet++;
			pthread_setspecific(thread_key, t);
			t->quiet--;
			guard_leave(t);
		}
	}
	errno = saved;
}

/* The slot of stack id in a table of cap records: its own, or the empty
 * one where it goes. Ids are dense, so id mod cap spreads them. */
static struct record_rec *rec_find(struct record_rec *recs, uint32_t cap,
				   uint32_t id)
{
	uint32_t i = id & (cap - 1);

	while (recs[i].id && recs[i].id != id)
		i = (i + 1) & (cap - 1);
	return &recs[i];
}

/* Double t's table (16 records at first). The new one is published
 * under agent_reg_lock, which a profile holds while it reads the tables
 * (agent.c build_profile); the old one's entry becomes padding. */
static int recs_grow(struct agent_thread *t)
{
	uint32_t cap = t->recs_cap ? 2 * t->recs_cap : 16;
	struct record_rec *old = t->recs, *recs = NULL;

	/* In the record (a RECS entry the thread's slot names), where the
	 * profiles read it; without a slot or room there, none: the
	 * thread's weights go to the stacks' own values (weights_add). */
	if (t->slot)
		recs = record_append(RECORD_RECS, cap * sizeof(*recs), NULL);
	if (!recs)
		return -1;
	for (uint32_t i = 0; i < t->recs_cap; i++)
		if (old[i].id)
			*rec_find(recs, cap, old[i].id) = old[i];
	pthread_mutex_lock(&agent_reg_lock);
	record_seq_begin();
	t->recs = recs;
	t->recs_cap = cap;
	if (t->slot) {
		bool in = record_owns(recs);

		t->slot->recs = in ? record_offset(recs) : 0;
		t->slot->recs_cap = in ? cap : 0;
	}
	if (record_owns(old)) {
		struct record_entry *e = (struct record_entry *)old - 1;

		__atomic_store_n(&e->type, RECORD_PAD, __ATOMIC_RELAXED);
	}
	record_seq_end();
	pthread_mutex_unlock(&agent_reg_lock);
	t->rec = NULL;
	if (!record_owns(old))
		arena_free(&agent_arena, old);
	return 0;
}

struct record_rec *agent_thread_rec(struct agent_thread *t, uint32_t id)
{
	struct record_rec *r;

	if (t->state != AGENT_THREAD_LIVE || !id)
		return NULL;
	if (t->recs_cap) {
		r = rec_find(t->recs, t->recs_cap, id);
		if (r->id == id)
			return t->rec = r;
	}
	if ((t->recs_n + 1) * 2 > t->recs_cap && recs_grow(t) < 0)
		return NULL;
	r = rec_find(t->recs, t->recs_cap, id);
	__atomic_store_n(&r->id, id, __ATOMIC_RELAXED);
	t->recs_n++;
	return t->rec = r;
}

/* Is any registered thread inside unwind_backtrace() (hooks.c)? */
bool agent_threads_unwinding(void)
{
	bool any = false;

	pthread_mutex_lock(&agent_reg_lock);
	for (struct agent_thread *t = registry; t && !any; t = t->next)
		any = __atomic_load_n(&t->unwinding, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&agent_reg_lock);
	return any;
}

void agent_sum_counters(uint64_t *alloc_count, uint64_t *free_count,
			uint64_t *alloc_bytes, uint64_t *reentries,
			uint64_t *samples)
{
	uint64_t a, f, b, r, s;

	pthread_mutex_lock(&agent_reg_lock);
	a = agent_hdr->exited_alloc_count;
	f = agent_hdr->exited_free_count;
	b = agent_hdr->exited_alloc_bytes;
	r = agent_hdr->exited_reentries;
	s = agent_hdr->exited_samples;
	for (struct agent_thread *t = registry; t; t = t->next) {
		/* Plain counters written by their owner: a read may be a
		 * moment stale, never torn (aligned 64-bit loads). */
		a += __atomic_load_n(&t->alloc_count, __ATOMIC_RELAXED);
		f += thread_frees(t);
		b += thread_alloc_bytes(t);
		r += __atomic_load_n(&t->reentries, __ATOMIC_RELAXED);
		s += __atomic_load_n(&t->samples, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&agent_reg_lock);
	*alloc_count = a;
	*free_count = f;
	*alloc_bytes = b;
	*reentries = r;
	*samples = s;
}

void agent_threads_sync_all(void)
{
	pthread_mutex_lock(&agent_reg_lock);
	for (struct agent_thread *t = registry; t; t = t->next) {
		struct record_thread *s = t->slot;

		if (!s)
			continue;
		__atomic_store_n(
			&s->alloc_count,
			__atomic_load_n(&t->alloc_count, __ATOMIC_RELAXED),
			__ATOMIC_RELAXED);
		__atomic_store_n(&s->free_count, thread_frees(t),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->alloc_bytes, thread_alloc_bytes(t),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&s->samples,
				 __atomic_load_n(&t->samples, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_store_n(
			&s->reentries,
			__atomic_load_n(&t->reentries, __ATOMIC_RELAXED),
			__ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&agent_reg_lock);
}

void agent_threads_after_fork_child(void)
{
	struct agent_thread *t = &agent_tls;

	/* The other threads do not exist here; their TLS blocks are stale
	 * copies. Start over with the forking thread alone, its records
	 * zero (the stacks' ids stay). */
	record_seq_begin();
	record_slots_after_fork(t->state == AGENT_THREAD_LIVE ? t->slot : NULL,
				t->recs, t->recs_cap);
	for (struct agent_thread *o = registry; o; o = o->next) {
		if (o == t)
			continue;
		o->slot = NULL;
		if (!record_owns(o->recs))
			arena_free(&agent_arena, o->recs);
	}
	for (uint32_t i = 0; i < t->recs_cap; i++) {
		uint32_t id = t->recs[i].id;

		t->recs[i] = (struct record_rec){.id = id};
	}
	registry = NULL;
	agent_hdr->exited_alloc_count = agent_hdr->exited_free_count = 0;
	agent_hdr->exited_alloc_bytes = agent_hdr->exited_reentries = 0;
	agent_hdr->exited_samples = 0;
	/* Under the fork's guard: the counts it puts back too. */
	t->alloc_count = t->free_count = t->held_frees = t->early_frees = 0;
	t->bytes_base = t->left; /* alloc_bytes 0 */
	t->reentries = t->samples = 0;
	t->next = t->prev = NULL;
	if (t->state == AGENT_THREAD_LIVE) {
		registry = t;
		t->state = AGENT_THREAD_LIVE;
		thread_sync(t);
		if (t->slot)
			t->slot->tid = (int32_t)sys_gettid();
	}
	record_seq_end();
	t->name_time_ns = 0;
	if (t->state != AGENT_THREAD_EXITED)
		agent_thread_setup(t);
}

void agent_guard_enter(void)
{
	guard_enter(&agent_tls);
	agent_tls.quiet++;
}

void agent_guard_leave(void)
{
	agent_tls.quiet--;
	guard_leave(&agent_tls);
}
