/* SPDX-License-Identifier: MIT */
/* bench/agent: palloc's hot path rebuilt piece by piece, to price each piece. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Built with -DLEVEL=N as an LD_PRELOAD object ("run.sh parts"). Each
 * level adds one piece of libpalloc.so's malloc/free fast path
 * (libcore/agent/hooks.c) on top of a bare forwarder, so that the time
 * difference between two levels is the price of that piece:
 *   0  forwarding, with a bootstrap-buffer and NULL check in free
 *   1  + malloc: per-thread guard test and byte countdown
 *   2  + malloc: alloc_count and alloc_bytes thread-local adds
 *   3  + free: per-thread guard test and free_count add
 *   4  + free: load of a 65536-slot uint32 filter (256 KiB) at a
 *        Fibonacci hash of the pointer, as stacktab_maybe_live()
 *   5  as 4 with a 1-bit filter (8 KiB) instead
 * Nothing is ever sampled: the countdown starts at 2^62.
 */
#ifndef LEVEL
#define LEVEL 0
#endif

struct lookalike_thread {
	uint64_t left;
	int guard;
	uint64_t alloc_count, free_count, alloc_bytes;
};

static __thread struct lookalike_thread tls
	__attribute__((tls_model("initial-exec"), unused)) = {
		.left = 1ULL << 62
	};
static void *(*next_malloc)(size_t), *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static char boot[4096] __attribute__((aligned(16))); /* dlsym's calloc */
/* hidden, as the agent's table is: no GOT load on the way */
static uint32_t lookalike_filter[1u << 16] __attribute__((used));
static uint64_t lookalike_bits[(1u << 16) / 64] __attribute__((used));

__attribute__((constructor)) static void lookalike_init(void)
{
	next_calloc = dlsym(RTLD_NEXT, "calloc");
	next_malloc = dlsym(RTLD_NEXT, "malloc");
	next_realloc = dlsym(RTLD_NEXT, "realloc");
	next_free = dlsym(RTLD_NEXT, "free");
}

void *malloc(size_t n)
{
	if (!next_malloc)
		lookalike_init();
#if LEVEL >= 1
	if (!tls.guard && n < tls.left) {
		tls.left -= n;
#if LEVEL >= 2
		tls.alloc_count++;
		tls.alloc_bytes += n;
#endif
	}
#endif
	return next_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	return next_calloc ? next_calloc(n, m) : boot;
}

void *realloc(void *p, size_t n)
{
	if (!next_realloc)
		lookalike_init();
	return next_realloc(p, n);
}

void free(void *p)
{
	size_t slot = (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ULL) >>
			       48);

	(void)slot;
	if ((uintptr_t)p - (uintptr_t)boot < sizeof(boot) || !p)
		return;
#if LEVEL >= 3
	if (!tls.guard) {
		tls.free_count++;
#if LEVEL == 4
		if (__atomic_load_n(&lookalike_filter[slot], __ATOMIC_RELAXED))
			__asm__ volatile("" ::: "memory");
#elif LEVEL >= 5
		if (__atomic_load_n(&lookalike_bits[slot >> 6],
				    __ATOMIC_RELAXED) & (1ULL << (slot & 63)))
			__asm__ volatile("" ::: "memory");
#endif
	}
#endif
	next_free(p);
}
