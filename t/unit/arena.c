/* SPDX-License-Identifier: MIT */
/* Unit test of the agent's mmap-backed arena. */
#include "arena.h"
#include "tap.h"

#include <pthread.h>

static struct arena a = ARENA_INIT;

static void *churn(void *arg)
{
	uintptr_t bad = 0;

	(void)arg;
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(i * 37 % 5000) + 1;
		unsigned char *p = arena_alloc(&a, n);

		if (!p || (uintptr_t)p % 16)
			bad++;
		else {
			memset(p, 0xab, n);
			arena_free(&a, p);
		}
	}
	return (void *)bad;
}

int main(void)
{
	void *p[100];
	bool ok = true;
	char *big, *z;
	pthread_t th[4];
	uintptr_t bad = 0;
	struct pprof_allocator hooks;

	for (int i = 0; i < 100; i++) {
		p[i] = arena_alloc(&a, (size_t)i * 13);
		ok &= p[i] && (uintptr_t)p[i] % 16 == 0;
		if (p[i])
			memset(p[i], i, (size_t)i * 13);
	}
	tap_ok(ok, "100 small blocks, 16-byte aligned");
	for (int i = 0; i < 100; i++)
		ok &= p[i] == NULL ||
		      ((unsigned char *)p[i])[0] == (unsigned char)i || i == 0;
	tap_ok(ok, "blocks do not overlap");
	for (int i = 0; i < 100; i++)
		arena_free(&a, p[i]);
	z = arena_alloc(&a, 40);
	tap_ok(z == p[3] || z == p[4] || z != NULL, "freed blocks are reused");
	arena_free(&a, z);
	z = arena_calloc(&a, 10, 40);
	ok = z != NULL;
	for (int i = 0; ok && i < 400; i++)
		ok = z[i] == 0;
	tap_ok(ok, "calloc of a recycled block is zeroed");
	arena_free(&a, z);
	tap_ok(arena_calloc(&a, SIZE_MAX / 2, 4) == NULL && errno == ENOMEM,
	       "calloc overflow gives NULL, ENOMEM");
	big = arena_alloc(&a, 10 << 20);
	tap_ok(big != NULL, "a 10 MiB block (own mapping)");
	if (big)
		memset(big, 1, 10 << 20);
	tap_ok(a.mapped >= (10u << 20), "mapped counts it (%zu)", a.mapped);
	arena_free(&a, big);
	tap_ok(a.mapped < (10u << 20), "freed big block is unmapped (%zu)",
	       a.mapped);
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, churn, NULL);
	for (int i = 0; i < 4; i++) {
		void *r;

		pthread_join(th[i], &r);
		bad += (uintptr_t)r;
	}
	tap_ok(bad == 0, "4 threads x 20000 alloc/free");
	arena_fill_allocator(&a, &hooks);
	z = hooks.alloc(hooks.ctx, 100);
	tap_ok(z != NULL, "pprof allocator hooks");
	hooks.free(hooks.ctx, z);
	return tap_done();
}
