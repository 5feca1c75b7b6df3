/* SPDX-License-Identifier: MIT */
/* An mmap-backed allocator with size classes, for the agent's own memory. */
#include "arena.h"
#include "sys.h"

#include <sys/mman.h>

#define ARENA_CHUNK ((size_t)1 << 20)
#define ARENA_MIN_SHIFT 4 /* 16 bytes */
#define ARENA_CLASSES 13  /* 16 B .. 64 KiB */
#define ARENA_BIG_CLASS 0xff

/*
 * Every block starts with this 16-byte header, so blocks stay 16-byte
 * aligned. For a big block, size is the length of its own mapping.
 */
struct arena_hdr {
	uint64_t size;
	uint32_t cls;
	uint32_t magic;
};

#define ARENA_MAGIC 0x7061616cu

static void *map(size_t n)
{
	void *p = sys_mmap(NULL, n, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The smallest class whose block (header included) holds n bytes, or
 * ARENA_CLASSES when n needs a big block. */
static unsigned size_class(size_t n)
{
	size_t total = n + sizeof(struct arena_hdr);
	unsigned c = 0;

	if (total < n)
		return ARENA_CLASSES;
	while (c < ARENA_CLASSES &&
	       ((size_t)1 << (c + ARENA_MIN_SHIFT)) < total)
		c++;
	return c;
}

static void *alloc_big(struct arena *a, size_t n)
{
	size_t page = 4096;
	size_t len = (n + sizeof(struct arena_hdr) + page - 1) & ~(page - 1);
	struct arena_hdr *h;

	if (len < n)
		return NULL;
	h = map(len);
	if (!h)
		return NULL;
	h->size = len;
	h->cls = ARENA_BIG_CLASS;
	h->magic = ARENA_MAGIC;
	pthread_mutex_lock(&a->lock);
	a->mapped += len;
	a->in_use += len;
	pthread_mutex_unlock(&a->lock);
	return h + 1;
}

void *arena_alloc(struct arena *a, size_t n)
{
	unsigned c = size_class(n);
	size_t bsize;
	struct arena_hdr *h;
	int saved = errno;

	if (c >= ARENA_CLASSES) {
		void *p = alloc_big(a, n);

		if (!p) {
			pthread_mutex_lock(&a->lock);
			a->failures++;
			pthread_mutex_unlock(&a->lock);
			errno = ENOMEM;
		}
		return p;
	}
	bsize = (size_t)1 << (c + ARENA_MIN_SHIFT);
	pthread_mutex_lock(&a->lock);
	if (a->free_list[c]) {
		h = a->free_list[c];
		a->free_list[c] = *(void **)(h + 1);
	} else {
		if (a->bump_left < bsize) {
			/* The tail of the old chunk is lost: at most 64 KiB
			 * per MiB, and only when big classes are used. */
			char *chunk = map(ARENA_CHUNK);

			if (!chunk) {
				a->failures++;
				pthread_mutex_unlock(&a->lock);
				errno = ENOMEM;
				return NULL;
			}
			a->mapped += ARENA_CHUNK;
			a->bump = chunk;
			a->bump_left = ARENA_CHUNK;
			errno = saved;
		}
		h = (struct arena_hdr *)a->bump;
		a->bump += bsize;
		a->bump_left -= bsize;
	}
	a->in_use += bsize;
	pthread_mutex_unlock(&a->lock);
	h->size = bsize;
	h->cls = c;
	h->magic = ARENA_MAGIC;
	return h + 1;
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	p = arena_alloc(a, total);
	if (!p)
		return NULL;
	/* Recycled blocks are not zero, fresh mmap pages are. */
	memset(p, 0, total);
	return p;
}

void arena_free(struct arena *a, void *p)
{
	struct arena_hdr *h;

	if (!p)
		return;
	h = (struct arena_hdr *)p - 1;
	if (h->magic != ARENA_MAGIC)
		return; /* not ours: leaking beats corrupting */
	if (h->cls == ARENA_BIG_CLASS) {
		size_t len = h->size;

		pthread_mutex_lock(&a->lock);
		a->mapped -= len;
		a->in_use -= len;
		pthread_mutex_unlock(&a->lock);
		munmap(h, len);
		return;
	}
	pthread_mutex_lock(&a->lock);
	a->in_use -= h->size;
	*(void **)(h + 1) = a->free_list[h->cls];
	a->free_list[h->cls] = h;
	pthread_mutex_unlock(&a->lock);
}

static void *hook_alloc(void *ctx, size_t size)
{
	return arena_alloc(ctx, size);
}

static void hook_free(void *ctx, void *ptr)
{
	arena_free(ctx, ptr);
}

void arena_fill_allocator(struct arena *a, struct pprof_allocator *out)
{
	out->alloc = hook_alloc;
	out->free = hook_free;
	out->ctx = a;
}

void arena_lock(struct arena *a)
{
	pthread_mutex_lock(&a->lock);
}

void arena_unlock(struct arena *a)
{
	pthread_mutex_unlock(&a->lock);
}

void arena_reset_lock(struct arena *a)
{
	pthread_mutex_init(&a->lock, NULL);
}
