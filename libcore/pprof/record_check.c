/* SPDX-License-Identifier: MIT */
/*
 * The reader of the record (record.h): check a copy byte by byte and index
 * it for record_profile.c (record_check, record_view_free of
 * record_profile.h). Both sides: no malloc but the allocator given, no
 * stdio.
 */
#include "common.h"
#include "msg.h"
#include "pprof_int.h"
#include "record_profile.h"
#include "record_profile_int.h"

/* Grow *arr (n used of *cap, elements of size) to hold n + 1. */
static int grow(const struct pprof_allocator *a, void **arr, size_t *cap,
		size_t n, size_t size)
{
	size_t c;
	void *v;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	v = pprof_int_alloc(a, c, size);
	if (!v)
		return -1;
	if (*arr)
		memcpy(v, *arr, n * size);
	pprof_int_free(a, *arr);
	*arr = v;
	*cap = c;
	return 0;
}

static bool has_nul(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* A RECS or TEXT entry: its body's offset and size. */
struct body {
	uint64_t off, len;
	bool taken; /* RECS: a live thread's table already */
};

/* The body at exactly offset off among b[0, n) (ascending), or NULL. */
static struct body *find_body(struct body *b, size_t n, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b[mid].off == off)
			return &b[mid];
		if (b[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct check {
	struct record_view *v;
	const struct pprof_allocator *a;
	size_t cap_stacks, cap_modules, cap_threads, cap_recs, cap_texts;
	struct body *recs, *texts;
	size_t n_recs, n_texts;
};

static int check_stack(struct check *c, size_t off, size_t blen)
{
	struct record_view *v = c->v;
	const struct record_stack *s =
		(const void *)(v->img + off + sizeof(struct record_entry));
	uint32_t id, depth;

	if (blen < sizeof(*s))
		return msg_set("record: stack entry at %zu: %zu bytes, "
			       "shorter than a stack",
			       off, blen);
	id = LOAD(s->id);
	depth = LOAD(s->depth);
	if (v->n_stacks >= RECORD_MAX_STACKS)
		return msg_set("record: more than %u stacks",
			       RECORD_MAX_STACKS);
	if (id != v->n_stacks + 1)
		return msg_set("record: stack entry at %zu: id %u where %zu "
			       "was due",
			       off, id, v->n_stacks + 1);
	if (depth > RECORD_MAX_DEPTH)
		return msg_set("record: stack %u: depth %u above %u", id, depth,
			       RECORD_MAX_DEPTH);
	if (sizeof(*s) + (size_t)depth * sizeof(s->pcs[0]) > blen)
		return msg_set("record: stack %u: %u frames do not fit in its "
			       "entry",
			       id, depth);
	if (!has_nul(s->thread, sizeof(s->thread)))
		return msg_set("record: stack %u: thread name not "
			       "NUL-terminated",
			       id);
	if (grow(c->a, (void **)&v->stacks, &c->cap_stacks, v->n_stacks,
		 sizeof(*v->stacks)) < 0)
		return -1;
	v->stacks[v->n_stacks].s = s;
	v->stacks[v->n_stacks].depth = depth;
	v->n_stacks++;
	return 0;
}

static int check_module(struct check *c, size_t off, size_t blen)
{
	struct record_view *v = c->v;
	const struct record_module *m =
		(const void *)(v->img + off + sizeof(struct record_entry));

	if (blen <= sizeof(*m))
		return msg_set("record: module entry at %zu: %zu bytes, too "
			       "short for a module",
			       off, blen);
	if (!has_nul(m->build_id, sizeof(m->build_id)))
		return msg_set("record: module entry at %zu: build id not "
			       "NUL-terminated",
			       off);
	if (!has_nul(m->path, blen - sizeof(*m)))
		return msg_set("record: module entry at %zu: path not "
			       "NUL-terminated within the entry",
			       off);
	if (LOAD(m->start) >= LOAD(m->limit))
		return msg_set("record: module entry at %zu: limit not above "
			       "start",
			       off);
	if (grow(c->a, (void **)&v->modules, &c->cap_modules, v->n_modules,
		 sizeof(*v->modules)) < 0)
		return -1;
	v->modules[v->n_modules++] = m;
	return 0;
}

static int check_thread(struct check *c, size_t off, size_t blen)
{
	struct record_view *v = c->v;
	const struct record_thread *t =
		(const void *)(v->img + off + sizeof(struct record_entry));
	struct record_view_thread *vt;
	uint32_t state;

	if (blen < sizeof(*t))
		return msg_set("record: thread entry at %zu: %zu bytes, too "
			       "short for a thread",
			       off, blen);
	state = LOAD(t->state);
	if (state != RECORD_THREAD_FREE && state != RECORD_THREAD_LIVE)
		return msg_set("record: thread entry at %zu: unknown state %u",
			       off, state);
	if (grow(c->a, (void **)&v->threads, &c->cap_threads, v->n_threads,
		 sizeof(*v->threads)) < 0)
		return -1;
	vt = &v->threads[v->n_threads++];
	vt->t = t;
	vt->live = state == RECORD_THREAD_LIVE;
	/* the table is checked once every RECS entry is known */
	vt->recs = (const void *)(uintptr_t)LOAD(t->recs);
	vt->recs_cap = LOAD(t->recs_cap);
	return 0;
}

static int add_body(struct check *c, struct body **b, size_t *n, size_t *cap,
		    size_t off, size_t blen)
{
	if (grow(c->a, (void **)b, cap, *n, sizeof(**b)) < 0)
		return -1;
	(*b)[*n].off = off + sizeof(struct record_entry);
	(*b)[*n].len = blen;
	(*b)[*n].taken = false;
	(*n)++;
	return 0;
}

/* Every thread's table: the body of a RECS entry, its records within. */
static int check_tables(struct check *c)
{
	struct record_view *v = c->v;

	for (size_t i = 0; i < v->n_threads; i++) {
		struct record_view_thread *t = &v->threads[i];
		uint64_t off = (uint64_t)(uintptr_t)t->recs;
		struct body *b;

		if (!off) {
			t->recs_cap = 0; /* no table: nothing to read */
			continue;
		}
		b = find_body(c->recs, c->n_recs, off);
		if (!b)
			return msg_set("record: thread slot %zu: its records "
				       "at %llu are not a RECS entry's body",
				       i, (unsigned long long)off);
		if ((uint64_t)t->recs_cap * sizeof(struct record_rec) > b->len)
			return msg_set("record: thread slot %zu: %u records "
				       "do not fit in its RECS entry",
				       i, t->recs_cap);
		t->recs = (const void *)(v->img + off);
		/* A free slot's table is checked but never read. Two live
		 * threads never share one: it would count twice (and a
		 * hostile record could make the reader sum one table once
		 * per slot, far more records than the file holds). */
		if (!t->live) {
			t->recs_cap = 0;
			continue;
		}
		if (b->taken && t->recs_cap)
			return msg_set("record: thread slot %zu: its records "
				       "are another live thread's",
				       i);
		b->taken = t->recs_cap != 0;
	}
	return 0;
}

static int check_text(struct check *c)
{
	struct record_view *v = c->v;
	const struct record_allocator *al = &v->h->allocator;
	uint64_t off = LOAD(al->text);
	uint32_t len = LOAD(al->text_len), cap = LOAD(al->text_cap);
	struct body *b;

	v->text_torn = LOAD(al->seq) % 2 != 0;
	if (!off)
		return 0;
	b = find_body(c->texts, c->n_texts, off);
	if (!b)
		return msg_set("record: the allocator's text at %llu is not a "
			       "TEXT entry's body",
			       (unsigned long long)off);
	if (len > cap || cap > b->len || len > RECORD_TEXT_MAX)
		return msg_set("record: the allocator's text: %u bytes of %u "
			       "do not fit in its TEXT entry of %llu",
			       len, cap, (unsigned long long)b->len);
	v->text = (const char *)v->img + off;
	v->text_len = len;
	return 0;
}

static int check_header(const struct record_header *h, size_t len,
			uint64_t *size)
{
	uint32_t version = LOAD(h->version), hsize = LOAD(h->header_size);
	uint32_t state = LOAD(h->state);

	if (memcmp(h->magic, RECORD_MAGIC, sizeof(h->magic)) != 0)
		return msg_set("record: bad magic (not a palloc record, or "
			       "another byte order)");
	if (version != RECORD_VERSION)
		return msg_set("record: version %u (this reader reads %u)",
			       version, RECORD_VERSION);
	if (hsize < sizeof(*h) || hsize > RECORD_DATA)
		return msg_set("record: header size %u (expected %zu to %u)",
			       hsize, sizeof(*h), RECORD_DATA);
	*size = LOAD(h->size);
	if (*size < RECORD_DATA || *size > len || *size > RECORD_MAX_SIZE)
		return msg_set("record: size %llu outside [%u, %zu]",
			       (unsigned long long)*size, RECORD_DATA,
			       len < RECORD_MAX_SIZE ? len
						     : (size_t)RECORD_MAX_SIZE);
	if (state != RECORD_RUNNING && state != RECORD_EXITED)
		return msg_set("record: unknown state %u", state);
	if (!has_nul(h->exe, sizeof(h->exe)) ||
	    !has_nul(h->cmdline, sizeof(h->cmdline)) ||
	    !has_nul(h->output, sizeof(h->output)) ||
	    !has_nul(h->title, sizeof(h->title)))
		return msg_set("record: a string of the header is not "
			       "NUL-terminated");
	return 0;
}

static int check_entries(struct check *c, uint64_t size)
{
	const unsigned char *img = c->v->img;
	size_t off, esz;

	for (off = RECORD_DATA; off < size; off += esz) {
		const struct record_entry *e = (const void *)(img + off);
		uint32_t type;
		size_t blen;
		int rc = 0;

		if (size - off < sizeof(*e))
			return msg_set("record: entry at %zu: past the end",
				       off);
		type = LOAD(e->type);
		esz = LOAD(e->size);
		if (esz < sizeof(*e) || esz % 16 != 0 || esz > size - off)
			return msg_set("record: entry at %zu: size %zu (a "
				       "multiple of 16 from 16 to %llu)",
				       off, esz,
				       (unsigned long long)(size - off));
		blen = esz - sizeof(*e);
		switch (type) {
		case RECORD_PAD:
			break;
		case RECORD_STACK:
			rc = check_stack(c, off, blen);
			break;
		case RECORD_MODULE:
			rc = check_module(c, off, blen);
			break;
		case RECORD_THREAD:
			rc = check_thread(c, off, blen);
			break;
		case RECORD_RECS:
			rc = add_body(c, &c->recs, &c->n_recs, &c->cap_recs,
				      off, blen);
			break;
		case RECORD_TEXT:
			rc = add_body(c, &c->texts, &c->n_texts, &c->cap_texts,
				      off, blen);
			break;
		default:
			return msg_set("record: entry at %zu: unknown type %u",
				       off, type);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int record_check(const void *img, size_t len, const struct pprof_allocator *a,
		 struct record_view *v)
{
	struct check c = {.v = v, .a = alloc_or_default(a)};
	uint64_t size = 0;
	int rc;

	memset(v, 0, sizeof(*v));
	v->a = *c.a;
	if ((uintptr_t)img % 8 != 0)
		return msg_set("record: the copy is not 8-byte aligned");
	if (len < RECORD_DATA)
		return msg_set("record: %zu bytes, shorter than its header "
			       "(%u)",
			       len, RECORD_DATA);
	v->img = img;
	v->len = len;
	v->h = img;
	rc = check_header(v->h, len, &size);
	if (rc == 0)
		rc = check_entries(&c, size);
	if (rc == 0)
		rc = check_tables(&c);
	if (rc == 0)
		rc = check_text(&c);
	pprof_int_free(c.a, c.recs);
	pprof_int_free(c.a, c.texts);
	if (rc < 0)
		record_view_free(v);
	return rc;
}

void record_view_free(struct record_view *v)
{
	struct pprof_allocator a;

	if (!v)
		return;
	a = v->a;
	if (a.free) {
		pprof_int_free(&a, v->stacks);
		pprof_int_free(&a, v->modules);
		pprof_int_free(&a, v->threads);
	}
	memset(v, 0, sizeof(*v));
	v->a = a;
}
