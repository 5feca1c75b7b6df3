/* SPDX-License-Identifier: MIT */
/* Hashing for the in-memory tables of libcore (interning, stack matching). */
#ifndef PALLOC_HASH_H
#define PALLOC_HASH_H

#include "common.h"

/*
 * FNV-1a (Fowler, Noll, Vo; the 64-bit offset basis and prime): simple and
 * good enough for short keys, but its low bits are weak, so a table index
 * is taken from hash_mix() of it. Header-only, no state: usable in the
 * agent and the commands alike, from any thread. Not for hostile keys
 * beyond what linear probing of a bounded table tolerates.
 */
#define HASH_FNV1A_INIT 0xcbf29ce484222325ULL

/* Continue FNV-1a hash H over the N bytes at P. */
static inline uint64_t hash_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* splitmix64's finalizer: spreads every input bit over the whole word. */
static inline uint64_t hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif /* PALLOC_HASH_H */
