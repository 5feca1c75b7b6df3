/* SPDX-License-Identifier: MIT */
/*
 * An allocator linked into a test program (t/3015, t/3137): a bump
 * allocator over a static megabyte, which the program exports because
 * the C library calls it. Included into a program compiled by the test.
 */
#include <stddef.h>

static char heap[1 << 20] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t n)
{
	void *p = heap + used;

	used += (n + 15) & ~(size_t)15;
	return used <= sizeof(heap) ? p : NULL;
}
void free(void *p)
{
	(void)p;
}
void *calloc(size_t a, size_t b)
{
	return malloc(a * b);
}
void *realloc(void *p, size_t n)
{
	(void)p;
	return malloc(n);
}
