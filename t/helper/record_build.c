/* SPDX-License-Identifier: MIT */
/* Test helper: build a record (wire/record.h) in memory, entry by entry. */
#include "common.h"
#include "record_build.h"

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort();
	return p;
}

void rb_init(struct rb *b)
{
	struct record_header *h;

	b->cap = RECORD_DATA * 2;
	b->buf = xrealloc(NULL, b->cap);
	memset(b->buf, 0, b->cap);
	b->size = RECORD_DATA;
	h = RB_HDR(b);
	memcpy(h->magic, RECORD_MAGIC, sizeof(h->magic));
	h->version = RECORD_VERSION;
	h->header_size = sizeof(*h);
	h->size = b->size;
	h->anon_bytes = h->anon_peak_bytes = h->heap_bytes = -1;
	h->unseen_bytes = -1;
	h->allocator.time_unix_ns = 0;
}

void rb_free(struct rb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

size_t rb_entry(struct rb *b, uint32_t type, size_t body_len)
{
	size_t esz = (sizeof(struct record_entry) + body_len + 15) / 16 * 16;
	struct record_entry *e;
	size_t off = b->size;

	while (b->size + esz > b->cap) {
		b->buf = xrealloc(b->buf, b->cap * 2);
		memset(b->buf + b->cap, 0, b->cap);
		b->cap *= 2;
	}
	e = RB_AT(b, off, struct record_entry);
	e->type = type;
	e->size = (uint32_t)esz;
	b->size += esz;
	RB_HDR(b)->size = b->size;
	return off + sizeof(*e);
}

size_t rb_stack(struct rb *b, const char *thread, const uint64_t *pcs,
		uint32_t depth)
{
	size_t off = rb_entry(b, RECORD_STACK,
			      sizeof(struct record_stack) + depth * 8);
	struct record_stack *s = RB_AT(b, off, struct record_stack);

	s->id = ++RB_HDR(b)->n_stacks;
	s->depth = depth;
	s->hash = s->id * 0x9e3779b97f4a7c15ULL;
	s->gen = RB_HDR(b)->gen;
	snprintf(s->thread, sizeof(s->thread), "%s", thread);
	memcpy(s->pcs, pcs, depth * sizeof(*pcs));
	return off;
}

size_t rb_module(struct rb *b, uint64_t start, uint64_t limit, uint64_t offset,
		 const char *build_id, const char *path)
{
	size_t off = rb_entry(b, RECORD_MODULE,
			      sizeof(struct record_module) + strlen(path) + 1);
	struct record_module *m = RB_AT(b, off, struct record_module);

	m->start = start;
	m->limit = limit;
	m->offset = offset;
	m->load_gen = RB_HDR(b)->gen;
	snprintf(m->build_id, sizeof(m->build_id), "%s", build_id);
	memcpy(m->path, path, strlen(path) + 1);
	return off;
}

size_t rb_thread(struct rb *b, int32_t tid)
{
	size_t off = rb_entry(b, RECORD_THREAD, sizeof(struct record_thread));
	struct record_thread *t = RB_AT(b, off, struct record_thread);

	t->state = RECORD_THREAD_LIVE;
	t->tid = tid;
	return off;
}

size_t rb_recs(struct rb *b, size_t thread, uint32_t cap)
{
	size_t off = rb_entry(b, RECORD_RECS, cap * sizeof(struct record_rec));
	struct record_thread *t = RB_AT(b, thread, struct record_thread);

	t->recs = off;
	t->recs_cap = cap;
	return off;
}

size_t rb_text(struct rb *b, const char *text)
{
	size_t n = strlen(text), off = rb_entry(b, RECORD_TEXT, n + 16);
	struct record_allocator *a = &RB_HDR(b)->allocator;

	memcpy(b->buf + off, text, n);
	a->text = off;
	a->text_len = (uint32_t)n;
	a->text_cap = (uint32_t)n + 16;
	return off;
}

/* The stacks' own weights: alloc objects, bytes, inuse objects, bytes,
 * peak objects, bytes, last_ev. */
static void weigh(struct rb *b, size_t off, double ao, double ab, double io,
		  double ib, double po, double pb, uint64_t last_ev)
{
	struct record_stack *s = RB_AT(b, off, struct record_stack);

	s->alloc_objects = ao;
	s->alloc_bytes = ab;
	s->inuse_objects = io;
	s->inuse_bytes = ib;
	s->peak_objects = po;
	s->peak_bytes = pb;
	s->last_ev = last_ev;
}

static void rec(struct rb *b, size_t recs, size_t i, uint32_t id, int64_t ao,
		int64_t ab, int64_t io, int64_t ib)
{
	struct record_rec *r = RB_AT(b, recs, struct record_rec) + i;

	r->id = id;
	r->alloc_objects = ao;
	r->alloc_bytes = ab;
	r->inuse_objects = io;
	r->inuse_bytes = ib;
}

/*
 * Modules: known (main), libc, plugin.so (unloaded at gen 1) and
 * other.so loaded at the same address at gen 1. Stacks (gen 1 unless
 * said): 1 main in known, 2 worker in libc (peak after the peak), 3 gen
 * 0 in plugin.so, 4 in other.so, 5 unmapped, 6 only a live thread's
 * records, 7 only a free thread's records (no sample), 8 inuse above
 * alloc by a rounding step. Thread A (live): counters and records for
 * stacks 1, 6 and 99 (no such stack); thread B (free): records for 2, 7.
 */
void rb_known(struct rb *b, uint64_t rate)
{
	static const uint64_t s1[] = {0x555555555201, 0x555555555101},
			      s2[] = {0x7f0000000501, 0x555555555101},
			      s3[] = {0x7f1000000101}, s5[] = {0x1001},
			      s6[] = {0x555555555301};
	struct record_header *h;
	size_t st[8], ta, tb, ra, rbb, plugin;

	rb_init(b);
	h = RB_HDR(b);
	h->pid = 4242;
	h->uid = 1000;
	h->start_unix_ns = 1700000000000000000;
	h->start_ticks = 123456;
	h->rate = rate;
	h->seed = rate > 1 ? 7 : 0;
	h->max_depth = 64;
	h->unwind = 2;
	h->max_stacks = 65536;
	h->flags = RECORD_F_PEAK | RECORD_F_PER_THREAD;
	snprintf(h->exe, sizeof(h->exe), "known");
	snprintf(h->cmdline, sizeof(h->cmdline), "./known --fill 3");
	h->exited_alloc_count = 100;
	h->exited_free_count = 40;
	h->exited_alloc_bytes = 50000;
	h->exited_samples = 10;
	h->exited_reentries = 1;
	h->alloc_at_init = 5;
	h->dropped = 2;
	h->dropped_bytes = 8191.6;
	h->peak_ev = 10;
	rb_module(b, 0x555555554000, 0x555555559000, 0, "abcdef0123456789",
		  "/usr/bin/known");
	rb_module(b, 0x7f0000000000, 0x7f0000100000, 0x1000, "00112233",
		  "/lib/x86_64-linux-gnu/libc.so.6");
	plugin = rb_module(b, 0x7f1000000000, 0x7f1000010000, 0, "",
			   "/opt/plugin.so");
	RB_AT(b, plugin, struct record_module)->unload_gen = 1;
	RB_HDR(b)->gen = 1;
	rb_module(b, 0x7f1000000000, 0x7f1000010000, 0, "", "/opt/other.so");
	st[0] = rb_stack(b, "main", s1, 2);
	st[1] = rb_stack(b, "worker", s2, 2);
	RB_HDR(b)->gen = 0;
	st[2] = rb_stack(b, "", s3, 1);
	RB_HDR(b)->gen = 1;
	st[3] = rb_stack(b, "", s3, 1);
	st[4] = rb_stack(b, "main", s5, 1);
	st[5] = rb_stack(b, "main", s6, 1);
	st[6] = rb_stack(b, "main", s6, 1);
	st[7] = rb_stack(b, "main", s1, 1);
	weigh(b, st[0], 10, 40960, 4, 16384, 0, 0, 5);
	weigh(b, st[1], 3, 3000000, 3, 3000000, 1, 1000000, 12);
	weigh(b, st[2], 100, 6400, 0, 0, 0, 0, 0);
	weigh(b, st[3], 1, 10, 0, 0, 0, 0, 0);
	weigh(b, st[4], 2, 20, 2, 20, 0, 0, 0);
	weigh(b, st[7], 1, 100, 1.4, 100.6, 0, 0, 0);
	RB_AT(b, st[0], struct record_stack)->alloc_var_bytes = 16;
	RB_AT(b, st[0], struct record_stack)->inuse_var_objects = 2.25;
	ta = rb_thread(b, 4243);
	tb = rb_thread(b, 4244);
	ra = rb_recs(b, ta, 8);
	rec(b, ra, 1, 1, 5, 100, 1, 50);
	rec(b, ra, 4, 6, 1, 8, 1, 8);
	rec(b, ra, 7, 99, 1000, 1000, 1000, 1000);
	rbb = rb_recs(b, tb, 4);
	rec(b, rbb, 0, 2, 1000, 1000, 1000, 1000);
	rec(b, rbb, 3, 7, 1, 1, 1, 1);
	*RB_AT(b, ta, struct record_thread) = (struct record_thread){
		.state = RECORD_THREAD_LIVE,
		.tid = 4243,
		.alloc_count = 50,
		.free_count = 10,
		.alloc_bytes = 1000,
		.samples = 5,
		.recs = ra,
		.recs_cap = 8,
	};
	RB_AT(b, tb, struct record_thread)->state = RECORD_THREAD_FREE;
	RB_AT(b, tb, struct record_thread)->alloc_count = 1000000;
	rb_text(b, "<malloc version=\"1\"></malloc>\n");
}

#define PART_A_END offsetof(struct record_header, exe)
#define PART_B offsetof(struct record_header, exited_alloc_count)
#define PART_B_END offsetof(struct record_header, title)
#define PART_C offsetof(struct record_header, allocator)
#define PARTS                                                                  \
	(PART_A_END + (PART_B_END - PART_B) +                                  \
	 (sizeof(struct record_header) - PART_C))

bool rb_expand(const uint8_t *data, size_t size, unsigned char **img,
	       size_t *len)
{
	struct record_header *h;
	const uint8_t *p = data + 1;
	size_t entries, slack;
	unsigned ctl;
	unsigned char *m;

	if (size < 1 + PARTS)
		return false;
	ctl = data[0];
	entries = size - 1 - PARTS;
	slack = ctl & RB_SLACK ? 64 : 0;
	*len = RECORD_DATA + entries + slack;
	m = aligned_alloc(16, (*len + 15) / 16 * 16);
	if (!m)
		abort();
	memset(m, 0, *len);
	memcpy(m, p, PART_A_END);
	p += PART_A_END;
	memcpy(m + PART_B, p, PART_B_END - PART_B);
	p += PART_B_END - PART_B;
	memcpy(m + PART_C, p, sizeof(*h) - PART_C);
	p += sizeof(*h) - PART_C;
	memcpy(m + RECORD_DATA, p, entries);
	h = (struct record_header *)(void *)m;
	if (ctl & RB_RAW_STRINGS) {
		memset(h->exe, 'x', sizeof(h->exe));
		memset(h->cmdline, 'x', sizeof(h->cmdline));
		memset(h->output, 'x', sizeof(h->output));
		memset(h->title, 'x', sizeof(h->title));
	} else {
		memcpy(h->exe, "fuzz", 5);
		memcpy(h->cmdline, "fuzz -x", 8);
		memcpy(h->title, "fuzz: title", 12);
	}
	if (!(ctl & RB_RAW_MAGIC)) {
		memcpy(h->magic, RECORD_MAGIC, sizeof(h->magic));
		h->version = RECORD_VERSION;
		h->header_size = sizeof(*h);
	}
	if (!(ctl & RB_RAW_SIZE))
		h->size = RECORD_DATA + entries;
	*img = m;
	return true;
}

void rb_compact(const struct rb *b, unsigned char **out, size_t *len)
{
	const size_t entries = b->size - RECORD_DATA;
	unsigned char *o = malloc(1 + PARTS + entries), *p = o;

	if (!o)
		abort();
	*p++ = 0;
	memcpy(p, b->buf, PART_A_END);
	p += PART_A_END;
	memcpy(p, b->buf + PART_B, PART_B_END - PART_B);
	p += PART_B_END - PART_B;
	memcpy(p, b->buf + PART_C, sizeof(struct record_header) - PART_C);
	p += sizeof(struct record_header) - PART_C;
	memcpy(p, b->buf + RECORD_DATA, entries);
	*out = o;
	*len = 1 + PARTS + entries;
}
