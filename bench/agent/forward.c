/* SPDX-License-Identifier: MIT */
/* bench/agent: the floor, a bare LD_PRELOAD interposer that only forwards. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

static void *(*next_malloc)(size_t), *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static char boot[4096] __attribute__((aligned(16))); /* dlsym's calloc */

__attribute__((constructor)) static void forward_init(void)
{
	next_calloc = dlsym(RTLD_NEXT, "calloc");
	next_malloc = dlsym(RTLD_NEXT, "malloc");
	next_realloc = dlsym(RTLD_NEXT, "realloc");
	next_free = dlsym(RTLD_NEXT, "free");
}

void *malloc(size_t n) { if (!next_malloc) forward_init(); return next_malloc(n); }
void *calloc(size_t n, size_t m) { return next_calloc ? next_calloc(n, m) : boot; }
void *realloc(void *p, size_t n) { if (!next_realloc) forward_init(); return next_realloc(p, n); }
void free(void *p) { if ((char *)p - boot >= (long)sizeof(boot) || (char *)p < boot) next_free(p); }
