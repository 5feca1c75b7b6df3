/* SPDX-License-Identifier: MIT */
/* The stack table and the table of live sampled blocks. */
#include "stacktab.h"
#include "hash.h"

static void *t_alloc(struct stacktab *t, size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total))
		return NULL;
	p = t->a.alloc(t->a.ctx, total);
	if (p)
		memset(p, 0, total);
	return p;
}

static void t_free(struct stacktab *t, void *p)
{
	if (p)
		t->a.free(t->a.ctx, p);
}

int stacktab_init(struct stacktab *t, const struct pprof_allocator *alloc,
		  size_t max_stacks)
{
	memset(t, 0, sizeof(*t));
	t->a = *alloc;
	t->max_stacks = max_stacks ? max_stacks : 65536;
	return 0;
}

void stacktab_destroy(struct stacktab *t)
{
	struct pprof_allocator a = t->a;
	size_t max = t->max_stacks;

	for (size_t i = t->n_ext; i < t->n_stacks; i++)
		t_free(t, t->stacks[i]);
	t_free(t, t->stacks);
	for (size_t i = 0; i < ARRAY_SIZE(t->old_stacks); i++)
		t_free(t, t->old_stacks[i]);
	t_free(t, t->index);
	for (size_t i = 0; i < STACKTAB_SHARDS; i++)
		t_free(t, t->shards[i].live);
	stacktab_init(t, &a, max);
}

void stacktab_reset(struct stacktab *t)
{
	for (size_t i = 0; i < t->n_stacks; i++) {
		struct record_stack *s = t->stacks[i];

		s->alloc_objects = s->alloc_bytes = 0;
		s->inuse_objects = s->inuse_bytes = 0;
		s->peak_objects = s->peak_bytes = 0;
		s->alloc_var_objects = s->alloc_var_bytes = 0;
		s->inuse_var_objects = s->inuse_var_bytes = 0;
		s->peak_var_objects = s->peak_var_bytes = 0;
		s->last_ev = 0;
	}
	for (size_t i = 0; i < STACKTAB_SHARDS; i++) {
		struct stacktab_shard *sh = &t->shards[i];

		if (sh->live)
			memset(sh->live, 0, sh->live_cap * sizeof(*sh->live));
		sh->n_live = 0;
	}
	t->n_live = 0;
	t->inuse_bytes = t->max_inuse_bytes = t->peak_bytes = 0;
	t->ev = t->peak_ev = 0;
	memset(t->filter, 0, sizeof(t->filter));
	for (size_t i = 0; i < ARRAY_SIZE(t->bits); i++)
		__atomic_store_n(&t->bits[i], t->all_live ? ~0ULL : 0,
				 __ATOMIC_RELAXED);
}

void stacktab_all_live(struct stacktab *t)
{
	t->all_live = true;
	for (size_t i = 0; i < ARRAY_SIZE(t->bits); i++)
		__atomic_store_n(&t->bits[i], ~0ULL, __ATOMIC_RELAXED);
}

/* One word into the stack hash: three instructions (xor, multiply,
 * rotate), since at rate 1 every allocation hashes its whole stack; the
 * rotation brings the product's well-mixed high bits down to where the
 * next word and the index (low bits) see them. stack_hash() finishes with
 * a full avalanche. */
static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h << 31 | h >> 33;
}

/*
 * The thread name as two words: hashing and comparing it costs two
 * operations instead of a byte loop and a strncmp call, which matters at
 * rate 1 where every allocation comes through here. The caller's buffer is
 * NUL-padded to STACKTAB_THREAD_NAME bytes (stacktab.h); the last byte is
 * forced to NUL.
 */
static void name_words(const char *thread, uint64_t w[2])
{
	memcpy(w, thread, STACKTAB_THREAD_NAME);
	w[1] &= ~(0xffULL << 56);
}

static uint64_t stack_hash(const uintptr_t *pcs, size_t n, const uint64_t w[2])
{
	uint64_t h = HASH_FNV1A_INIT ^ n;

	for (size_t i = 0; i < n; i++)
		h = mix(h, pcs[i]);
	h = mix(h, w[0]);
	h = mix(h, w[1]);
	/* Every output bit depends on every input bit, so the low bits the
	 * index uses are as good as any. */
	return hash_mix(h);
}

/* Does s hold these n frames and thread name words? (depth checked by
 * the caller) */
static bool stack_words_equal(const struct record_stack *s,
			      const uintptr_t *pcs, size_t n,
			      const uint64_t w[2])
{
	uint64_t sw[2];

	for (size_t i = 0; i < n; i++)
		if (s->pcs[i] != pcs[i])
			return false;
	memcpy(sw, s->thread, sizeof(sw));
	return sw[0] == w[0] && sw[1] == w[1];
}

/* Double the stack index (or create it), rehashing every id but the
 * sealed stacks'. */
static int grow_index(struct stacktab *t)
{
	size_t cap = t->index_cap ? t->index_cap * 2 : 1024;
	uint32_t *idx = t_alloc(t, cap, sizeof(*idx));

	if (!idx)
		return -1;
	for (size_t i = 0; i < t->n_stacks; i++) {
		size_t j = (size_t)t->stacks[i]->hash & (cap - 1);

		if (t->stacks[i]->gen != t->gen)
			continue; /* sealed: stacktab_seal() */
		while (idx[j])
			j = (j + 1) & (cap - 1);
		idx[j] = t->stacks[i]->id;
	}
	t_free(t, t->index);
	t->index = idx;
	t->index_cap = cap;
	return 0;
}

static void stack_fill(struct stacktab *t, struct record_stack *s, uint64_t h,
		       const uintptr_t *pcs, size_t n, const uint64_t w[2])
{
	s->hash = h;
	s->depth = (uint32_t)n;
	s->gen = t->gen;
	memcpy(s->pcs, pcs, n * sizeof(*pcs));
	memcpy(s->thread, w, sizeof(s->thread));
	s->id = (uint32_t)t->n_stacks + 1;
}

/* A new stack with zero weights: ext's copy while it gives one, else
 * from the table's allocator. */
static struct record_stack *new_stack(struct stacktab *t, uint64_t h,
				      const uintptr_t *pcs, size_t n,
				      const uint64_t w[2])
{
	size_t size = sizeof(struct record_stack) + n * sizeof(*pcs);
	struct record_stack *s;

	if (t->ext_stack && n <= RECORD_MAX_DEPTH) {
		union {
			struct record_stack s;
			unsigned char b[sizeof(struct record_stack) +
					RECORD_MAX_DEPTH * sizeof(uint64_t)];
		} u;

		memset(&u, 0, size);
		stack_fill(t, &u.s, h, pcs, n, w);
		if (t->ext_stack(t->ext_ctx, &u.s, size, &s) == 0) {
			t->n_ext++;
			return s;
		}
	}
	if (t->ext_only)
		return NULL;
	t->ext_stack = NULL; /* the ext stacks stay a prefix */
	s = t_alloc(t, 1, size);
	if (s)
		stack_fill(t, s, h, pcs, n, w);
	return s;
}

struct record_stack *stacktab_intern(struct stacktab *t, const uintptr_t *pcs,
				     size_t n, const char *thread)
{
	uint64_t h, w[2];
	size_t j;
	struct record_stack *s;

	static const char none[STACKTAB_THREAD_NAME];

	name_words(thread ? thread : none, w);
	/* The last stack found: a loop allocating from one site finds it
	 * here without hashing its frames (at rate 1, on every allocation);
	 * a different stack usually fails on the depth or the first frame. */
	s = t->last;
	if (s && s->depth == n && stack_words_equal(s, pcs, n, w))
		return s;
	h = stack_hash(pcs, n, w);
	if (t->index) {
		for (j = (size_t)h & (t->index_cap - 1); t->index[j];
		     j = (j + 1) & (t->index_cap - 1)) {
			s = t->stacks[t->index[j] - 1];
			if (s->hash == h && s->depth == n &&
			    stack_words_equal(s, pcs, n, w))
				return t->last = s;
		}
	}
	if (t->n_stacks >= t->max_stacks)
		return NULL;
	if ((t->n_stacks + 1) * 2 > t->index_cap && grow_index(t) < 0)
		return NULL;
	if (t->n_stacks == t->cap_stacks) {
		size_t cap = t->cap_stacks ? t->cap_stacks * 2 : 256;
		struct record_stack **st = t_alloc(t, cap, sizeof(*st));

		if (!st)
			return NULL;
		if (t->stacks)
			memcpy(st, t->stacks, t->n_stacks * sizeof(*st));
		/* Readers without the intern lock may still hold the old
		 * array: keep it until stacktab_destroy() (2^32 stacks take
		 * 24 doublings from 256). */
		for (size_t i = 0; t->stacks && i < ARRAY_SIZE(t->old_stacks);
		     i++)
			if (!t->old_stacks[i]) {
				t->old_stacks[i] = t->stacks;
				break;
			}
		__atomic_store_n(&t->stacks, st, __ATOMIC_RELEASE);
		t->cap_stacks = cap;
	}
	s = new_stack(t, h, pcs, n, w);
	if (!s)
		return NULL;
	t->stacks[t->n_stacks] = s;
	/* Published: stacktab_get() reads without the intern lock. */
	__atomic_store_n(&t->n_stacks, t->n_stacks + 1, __ATOMIC_RELEASE);
	for (j = (size_t)h & (t->index_cap - 1); t->index[j];
	     j = (j + 1) & (t->index_cap - 1))
		;
	t->index[j] = s->id;
	return t->last = s;
}

static bool stack_in_ranges(const struct record_stack *s,
			    const uintptr_t (*ranges)[2], size_t n)
{
	for (size_t i = 0; i < s->depth; i++)
		for (size_t k = 0; k < n; k++)
			if (s->pcs[i] - 1 >= ranges[k][0] &&
			    s->pcs[i] - 1 < ranges[k][1])
				return true;
	return false;
}

uint32_t stacktab_seal(struct stacktab *t, const uintptr_t (*ranges)[2],
		       size_t n)
{
	uint32_t old = t->gen;

	__atomic_store_n(&t->gen, old + 1, __ATOMIC_RELEASE);

	t->last = NULL;
	if (t->index)
		memset(t->index, 0, t->index_cap * sizeof(*t->index));
	for (size_t i = 0; i < t->n_stacks; i++) {
		struct record_stack *s = t->stacks[i];
		size_t j;

		if (s->gen != old || stack_in_ranges(s, ranges, n))
			continue;
		s->gen = t->gen;
		for (j = (size_t)s->hash & (t->index_cap - 1); t->index[j];
		     j = (j + 1) & (t->index_cap - 1))
			;
		t->index[j] = s->id;
	}
	return t->gen;
}

struct record_stack *stacktab_get(const struct stacktab *t, uint32_t id)
{
	/* The count first: an array read after it holds stack id (intern
	 * publishes the array before the count). */
	if (id == 0 || id > __atomic_load_n(&t->n_stacks, __ATOMIC_ACQUIRE))
		return NULL;
	return __atomic_load_n(&t->stacks, __ATOMIC_ACQUIRE)[id - 1];
}

/* Fibonacci hashing: the top log2(live_cap) bits of ptr times an odd
 * constant (the best-mixed bits of the product, whatever the alignment). */
static size_t live_home(const struct stacktab_shard *sh, uintptr_t ptr)
{
	return (size_t)(((uint64_t)ptr * 0x9e3779b97f4a7c15ULL) >>
			sh->live_shift);
}

/* The slot holding ptr, or the empty slot where it would go. */
static size_t live_find(const struct stacktab_shard *sh, uintptr_t ptr)
{
	size_t j = live_home(sh, ptr);

	while (sh->live[j].ptr && sh->live[j].ptr != ptr)
		j = (j + 1) & (sh->live_cap - 1);
	return j;
}

static int grow_live(struct stacktab *t, struct stacktab_shard *sh)
{
	size_t old_cap = sh->live_cap;
	struct stacktab_live *old = sh->live;
	size_t cap = old_cap ? old_cap * 2 : 1024;
	struct stacktab_live *nl = t_alloc(t, cap, sizeof(*nl));

	if (!nl)
		return -1;
	sh->live = nl;
	sh->live_cap = cap;
	sh->live_shift = (unsigned)__builtin_clzll((unsigned long long)cap) + 1;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].ptr)
			sh->live[live_find(sh, old[i].ptr)] = old[i];
	t_free(t, old);
	return 0;
}

/* Count one more (d 1) or one fewer (d -1) entry in ptr's slot, and keep
 * its bit equal to "count non-zero" (stacktab.h). */
static inline __attribute__((always_inline)) void
filter_add(struct stacktab *t, uintptr_t ptr, int d)
{
	uint32_t slot = stacktab_slot(ptr);
	uint64_t *w = &t->bits[slot / 64];
	uint64_t bit = 1ULL << (slot % 64);
	uint32_t c;

	/* Before the count's load: at rate 1 it would miss for nothing. */
	if (t->all_live)
		return;
	c = (uint32_t)((int64_t)t->filter[slot] + d);
	t->filter[slot] = c;
	if (c == 0)
		__atomic_store_n(w, *w & ~bit, __ATOMIC_RELAXED);
	else if (!(*w & bit))
		__atomic_store_n(w, *w | bit, __ATOMIC_RELAXED);
}

void stacktab_mark(struct stacktab *t, uintptr_t ptr)
{
	filter_add(t, ptr, 1);
}

/* Delete slot i by shifting later members of its probe run back. */
static void live_delete(struct stacktab_shard *sh, size_t i)
{
	size_t mask = sh->live_cap - 1;
	size_t j = i;

	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!sh->live[j].ptr)
			break;
		k = live_home(sh, sh->live[j].ptr);
		/* Keep j where it is if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		sh->live[i] = sh->live[j];
		i = j;
	}
	sh->live[i].ptr = 0;
	sh->n_live--;
}

int stacktab_live_put(struct stacktab *t, const struct stacktab_live *e,
		      struct stacktab_live *stale)
{
	struct stacktab_shard *sh = stacktab_shard(t, e->ptr);
	size_t j;

	if ((sh->n_live + 1) * 10 > sh->live_cap * 7 && grow_live(t, sh) < 0)
		return stacktab_live_take(t, e->ptr, stale) ? -2 : -1;
	/* One probe for both the stale entry and the free slot (at rate 1
	 * this runs on every allocation). */
	j = live_find(sh, e->ptr);
	if (unlikely(sh->live[j].ptr)) {
		*stale = sh->live[j];
		sh->live[j] = *e;
		return 1;
	}
	sh->live[j] = *e;
	sh->n_live++;
	return 0;
}

bool stacktab_live_take(struct stacktab *t, uintptr_t ptr,
			struct stacktab_live *out)
{
	struct stacktab_shard *sh = stacktab_shard(t, ptr);
	size_t j;

	if (!sh->live || ptr == 0)
		return false;
	j = live_find(sh, ptr);
	if (!sh->live[j].ptr)
		return false;
	*out = sh->live[j];
	live_delete(sh, j);
	return true;
}

static double live_objects(const struct stacktab_live *e)
{
	return (double)e->objects;
}

static double live_bytes(const struct stacktab_live *e)
{
	return (double)e->objects * (double)e->size;
}

/* The variance of a live entry's estimate in objects^2: o (o - 1). */
static double live_var_objects(const struct stacktab_live *e)
{
	double o = (double)e->objects;

	return o * (o - 1);
}

/* ... and in bytes^2: w (w - s) with w = o s, i.e. s^2 o (o - 1). */
static double live_var_bytes(const struct stacktab_live *e)
{
	double sz = (double)e->size;

	return sz * sz * live_var_objects(e);
}

/* If s still holds its inuse values at the peak (its last change came no
 * later than the one that set the maximum), copy them to peak_*. */
static void peak_copy(const struct stacktab *t, struct record_stack *s)
{
	if (s->last_ev <= t->peak_ev) {
		s->peak_objects = s->inuse_objects;
		s->peak_bytes = s->inuse_bytes;
		s->peak_var_objects = s->inuse_var_objects;
		s->peak_var_bytes = s->inuse_var_bytes;
	}
}

/* Before s's inuse changes: keep its value at the peak, and number the
 * change (stacktab.h, "The peak"). */
static void peak_keep(struct stacktab *t, struct record_stack *s)
{
	peak_copy(t, s);
	s->last_ev = ++t->ev;
}

/* stacktab_inuse_in() with e's stack s (NULL: none) already found. */
static void inuse_in(struct stacktab *t, struct record_stack *s,
		     const struct stacktab_live *e)
{
	double bytes = live_bytes(e);

	t->n_live++;
	filter_add(t, e->ptr, 1);
	if (s) {
		peak_keep(t, s);
		s->inuse_objects += live_objects(e);
		s->inuse_bytes += bytes;
		s->inuse_var_objects += live_var_objects(e);
		s->inuse_var_bytes += live_var_bytes(e);
	}
	t->inuse_bytes += bytes;
	if (t->inuse_bytes > t->max_inuse_bytes) {
		t->max_inuse_bytes = t->inuse_bytes;
		t->peak_ev = t->ev;
	}
}

void stacktab_inuse_in(struct stacktab *t, const struct stacktab_live *e)
{
	inuse_in(t, stacktab_get(t, e->stack_id), e);
}

void stacktab_inuse_out(struct stacktab *t, const struct stacktab_live *e)
{
	struct record_stack *s = stacktab_get(t, e->stack_id);

	t->n_live--;
	filter_add(t, e->ptr, -1);
	if (s) {
		peak_keep(t, s);
		s->inuse_objects -= live_objects(e);
		s->inuse_bytes -= live_bytes(e);
		s->inuse_var_objects -= live_var_objects(e);
		s->inuse_var_bytes -= live_var_bytes(e);
	}
	t->inuse_bytes -= live_bytes(e);
}

void stacktab_count(struct record_stack *s, const struct stacktab_live *e)
{
	/* The stored weight and its product, as stacktab_inuse_in() and
	 * stacktab_inuse_out() compute them (stacktab.h). */
	s->alloc_objects += live_objects(e);
	s->alloc_bytes += live_bytes(e);
	s->alloc_var_objects += live_var_objects(e);
	s->alloc_var_bytes += live_var_bytes(e);
}

void stacktab_count_in(struct stacktab *t, struct record_stack *s,
		       const struct stacktab_live *e)
{
	stacktab_count(s, e);
	inuse_in(t, s, e);
}

void stacktab_weights_add(struct record_stack *s, const struct stacktab_live *e,
			  bool alloc, int sign)
{
	if (alloc)
		stacktab_count(s, e);
	s->inuse_objects += sign * live_objects(e);
	s->inuse_bytes += sign * live_bytes(e);
	s->inuse_var_objects += sign * live_var_objects(e);
	s->inuse_var_bytes += sign * live_var_bytes(e);
}

void stacktab_weights_of(struct stacktab_weights *w,
			 const struct record_stack *s)
{
	w->alloc_objects = s->alloc_objects;
	w->alloc_bytes = s->alloc_bytes;
	w->inuse_objects = s->inuse_objects;
	w->inuse_bytes = s->inuse_bytes;
	w->alloc_var_objects = s->alloc_var_objects;
	w->alloc_var_bytes = s->alloc_var_bytes;
	w->inuse_var_objects = s->inuse_var_objects;
	w->inuse_var_bytes = s->inuse_var_bytes;
}

void stacktab_rec_sum(struct stacktab_weights *w, const struct record_rec *r)
{
	w->alloc_objects +=
		(double)__atomic_load_n(&r->alloc_objects, __ATOMIC_RELAXED);
	w->alloc_bytes +=
		(double)__atomic_load_n(&r->alloc_bytes, __ATOMIC_RELAXED);
	w->inuse_objects +=
		(double)__atomic_load_n(&r->inuse_objects, __ATOMIC_RELAXED);
	w->inuse_bytes +=
		(double)__atomic_load_n(&r->inuse_bytes, __ATOMIC_RELAXED);
}

void stacktab_rec_fold(struct record_stack *s, const struct record_rec *r)
{
	struct stacktab_weights w = {0};

	stacktab_rec_sum(&w, r);
	s->alloc_objects += w.alloc_objects;
	s->alloc_bytes += w.alloc_bytes;
	s->inuse_objects += w.inuse_objects;
	s->inuse_bytes += w.inuse_bytes;
}

int stacktab_add(struct stacktab *t, struct record_stack *s, uintptr_t ptr,
		 uint64_t size, double objects)
{
	struct stacktab_live stale, e = {
					    .ptr = ptr,
					    .size = size,
					    .objects = (float)objects,
					    .stack_id = s->id,
				    };
	int r;

	stacktab_count(s, &e);
	if (ptr == 0)
		return 0;
	r = stacktab_live_put(t, &e, &stale);
	if (r == 1 || r == -2)
		stacktab_inuse_out(t, &stale);
	if (r < 0)
		return -1;
	stacktab_inuse_in(t, &e);
	return 0;
}

bool stacktab_remove(struct stacktab *t, uintptr_t ptr,
		     struct stacktab_live *out)
{
	struct stacktab_live e;

	if (!stacktab_live_take(t, ptr, &e))
		return false;
	stacktab_inuse_out(t, &e);
	if (out)
		*out = e;
	return true;
}

int stacktab_restore(struct stacktab *t, const struct stacktab_live *e)
{
	struct stacktab_live stale;
	int r;

	if (!stacktab_get(t, e->stack_id))
		return -1;
	r = stacktab_live_put(t, e, &stale);
	if (r == 1 || r == -2)
		stacktab_inuse_out(t, &stale);
	if (r < 0)
		return -1;
	stacktab_inuse_in(t, e);
	return 0;
}

void stacktab_settle_peak(struct stacktab *t)
{
	size_t n = __atomic_load_n(&t->n_stacks, __ATOMIC_ACQUIRE);

	for (size_t i = 1; i <= n; i++) {
		struct record_stack *s = stacktab_get(t, (uint32_t)i);

		if (s)
			peak_copy(t, s);
	}
	t->peak_bytes = t->max_inuse_bytes;
}
