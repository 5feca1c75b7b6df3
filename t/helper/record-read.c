/* SPDX-License-Identifier: MIT */
/* Read an agent's record (wire/record.h) read-only and print what t/3040
 * checks: header fields, entries, and each stack's summed values. */
#include "common.h"
#include "record.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * record-read FILE prints, one per line: "key value" for the header's
 * fields and the entries' counts, then "module PATH" for each module,
 * then one line per stack as t/lib-agent.sh's check_sites expects:
 *
 *	ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE | THREAD
 *
 * (the stack's own values plus the records of every live thread,
 * rounded). Exits 1 with a message when the record is malformed, or when
 * an offset names no entry of its type: the allocator's text, a thread's
 * weight table (an entry written over another's body).
 */

static const char *me = "record-read";

static PALLOC_NORETURN void bad(const char *what)
{
	fprintf(stderr, "%s: %s\n", me, what);
	exit(1);
}

/* The body size of the entry of type whose body starts at off, or 0. */
static uint64_t body_at(const char *base, uint64_t size, uint64_t off,
			uint32_t type)
{
	for (uint64_t o = RECORD_DATA; o < size;) {
		const struct record_entry *e =
			(const struct record_entry *)(base + o);

		if (o + sizeof(*e) == off)
			return e->type == type ? e->size - sizeof(*e) : 0;
		o += e->size;
	}
	return 0;
}

static long long rnd(double v)
{
	return llround(v);
}

int main(int argc, char **argv)
{
	const struct record_header *h;
	const char *base;
	struct stat st;
	uint64_t size, off;
	size_t n_stacks = 0, n_mods = 0, n_live = 0, n_free = 0, n_recs = 0;
	size_t n_text = 0, n_pad = 0;
	uint64_t ac, fc;
	int fd;

	if (argc != 2)
		bad("usage: record-read FILE");
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		bad("cannot open the file");
	if ((uint64_t)st.st_size < RECORD_DATA ||
	    (uint64_t)st.st_size > RECORD_MAX_SIZE)
		bad("bad file size");
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		bad("cannot map the file");
	h = (const struct record_header *)base;
	if (memcmp(h->magic, RECORD_MAGIC, sizeof(h->magic)) != 0)
		bad("bad magic");
	if (h->version != RECORD_VERSION ||
	    h->header_size != sizeof(struct record_header))
		bad("bad version or header size");
	size = __atomic_load_n(&h->size, __ATOMIC_ACQUIRE);
	if (size < RECORD_DATA || size > (uint64_t)st.st_size || size % 16)
		bad("bad size");
	printf("magic ok\n");
	printf("version %u\n", h->version);
	printf("pid %d\n", h->pid);
	printf("parent_pid %d\n", h->parent_pid);
	printf("uid %u\n", h->uid);
	printf("state %u\n", h->state);
	printf("exit_status %d\n", h->exit_status);
	printf("flags %u\n", h->flags);
	printf("rate %llu\n", (unsigned long long)h->rate);
	printf("start_ticks %llu\n", (unsigned long long)h->start_ticks);
	printf("exe %.*s\n", (int)strnlen(h->exe, sizeof(h->exe)), h->exe);
	printf("cmdline %.*s\n", (int)strnlen(h->cmdline, sizeof(h->cmdline)),
	       h->cmdline);
	printf("n_stacks %u\n", h->n_stacks);
	printf("seq %u\n", h->seq);
	printf("end_set %d\n", h->end_unix_ns > 0);
	printf("allocator_kind %u\n", h->allocator.kind);
	printf("allocator_time_set %d\n", h->allocator.time_unix_ns > 0);
	printf("allocator_uordblks_set %d\n", h->allocator.uordblks >= 0);
	ac = h->exited_alloc_count;
	fc = h->exited_free_count;
	/* First pass: entries, threads' counters. */
	for (off = RECORD_DATA; off < size;) {
		const struct record_entry *e =
			(const struct record_entry *)(base + off);

		if (e->size < sizeof(*e) || e->size % 16 ||
		    e->size > size - off)
			bad("bad entry size");
		switch (e->type) {
		case RECORD_STACK: {
			const struct record_stack *s = (const void *)(e + 1);

			if (sizeof(*e) + sizeof(*s) > e->size ||
			    s->depth > RECORD_MAX_DEPTH ||
			    sizeof(*e) + sizeof(*s) + s->depth * 8 > e->size)
				bad("bad stack entry");
			if (s->id != ++n_stacks)
				bad("stack entries out of id order");
			break;
		}
		case RECORD_MODULE: {
			const struct record_module *m = (const void *)(e + 1);
			size_t room = e->size - sizeof(*e) - sizeof(*m);

			if (sizeof(*e) + sizeof(*m) > e->size ||
			    strnlen(m->path, room) == room)
				bad("bad module entry");
			printf("module %s load_gen %u unload_gen %u\n",
			       m->path[0] ? m->path : "-", m->load_gen,
			       m->unload_gen);
			n_mods++;
			break;
		}
		case RECORD_THREAD: {
			const struct record_thread *t = (const void *)(e + 1);

			if (sizeof(*e) + sizeof(*t) > e->size)
				bad("bad thread entry");
			if (t->state == RECORD_THREAD_LIVE) {
				n_live++;
				ac += t->alloc_count;
				fc += t->free_count;
			} else {
				n_free++;
			}
			break;
		}
		case RECORD_RECS:
			n_recs++;
			break;
		case RECORD_TEXT:
			n_text++;
			break;
		case RECORD_PAD:
			n_pad++;
			break;
		default:
			bad("unknown entry type");
		}
		off += e->size;
	}
	if (h->allocator.text &&
	    (h->allocator.text_cap >
		     body_at(base, size, h->allocator.text, RECORD_TEXT) ||
	     h->allocator.text_len >= h->allocator.text_cap))
		bad("the allocator's text is not in a TEXT entry");
	for (off = RECORD_DATA; off < size;) {
		const struct record_entry *e =
			(const struct record_entry *)(base + off);
		const struct record_thread *t = (const void *)(e + 1);

		off += e->size;
		if (e->type == RECORD_THREAD && t->recs &&
		    (uint64_t)t->recs_cap * sizeof(struct record_rec) >
			    body_at(base, size, t->recs, RECORD_RECS))
			bad("a thread's weights are not in a RECS entry");
	}
	printf("stack_entries %zu\n", n_stacks);
	printf("modules %zu\n", n_mods);
	printf("threads_live %zu\n", n_live);
	printf("threads_free %zu\n", n_free);
	printf("recs_entries %zu\n", n_recs);
	printf("text_entries %zu\n", n_text);
	printf("alloc_count %llu\n", (unsigned long long)ac);
	printf("free_count %llu\n", (unsigned long long)fc);
	/* Second pass: each stack, plus the live threads' records. */
	for (off = RECORD_DATA; off < size;) {
		const struct record_entry *e =
			(const struct record_entry *)(base + off);
		const struct record_stack *s = (const void *)(e + 1);
		double ao, as, io, is;

		off += e->size;
		if (e->type != RECORD_STACK)
			continue;
		ao = s->alloc_objects;
		as = s->alloc_bytes;
		io = s->inuse_objects;
		is = s->inuse_bytes;
		for (uint64_t o2 = RECORD_DATA; o2 < size;) {
			const struct record_entry *e2 =
				(const struct record_entry *)(base + o2);
			const struct record_thread *t = (const void *)(e2 + 1);
			const struct record_rec *r;

			o2 += e2->size;
			if (e2->type != RECORD_THREAD ||
			    t->state != RECORD_THREAD_LIVE || !t->recs)
				continue;
			if (t->recs < RECORD_DATA + 16 ||
			    t->recs + (uint64_t)t->recs_cap * sizeof(*r) > size)
				bad("bad recs offset");
			r = (const struct record_rec *)(base + t->recs);
			for (uint32_t i = 0; i < t->recs_cap; i++)
				if (r[i].id == s->id) {
					ao += (double)r[i].alloc_objects;
					as += (double)r[i].alloc_bytes;
					io += (double)r[i].inuse_objects;
					is += (double)r[i].inuse_bytes;
				}
		}
		printf("%lld %lld %lld %lld | %.*s\n", rnd(ao), rnd(as),
		       rnd(io), rnd(is), (int)strnlen(s->thread, 16),
		       s->thread);
	}
	return 0;
}
