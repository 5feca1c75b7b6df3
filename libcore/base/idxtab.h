/* SPDX-License-Identifier: MIT */
/* The commands' hash table: open addressing over indices into the caller's
 * array. */
#ifndef PALLOC_IDXTAB_H
#define PALLOC_IDXTAB_H

#include "common.h"

/*
 * The elements live in the caller's array (which may be realloc'd: the
 * table keeps indices, not pointers); the table keeps index + 1 in a
 * power-of-two array of slots (0: empty), probed linearly from the hash's
 * low bits, and stays at most half full. The caller computes hashes (from
 * base/hash.h) and compares keys:
 *
 *	for (i = idxtab_first(t, h); t->slots[i]; i = idxtab_next(t, i))
 *		if (equal(&elems[t->slots[i] - 1], key))
 *			return t->slots[i] - 1;
 *	(append the element at index n)
 *	if (idxtab_put(t, i, n, elem_hash, elems) < 0)
 *		...
 *
 * In libpalloc-core only (it allocates with calloc; the agent's tables
 * are in its arena). Not thread-safe: one table per thread or a lock.
 */
struct idxtab {
	uint32_t *slots;
	size_t mask; /* slots - 1 */
	size_t used;
};

/* The hash of element idx of ctx's array, when the table grows. */
typedef uint64_t (*idxtab_hash_fn)(const void *ctx, uint32_t idx);

/* An empty table with room for expect elements (at least 512). 0, or -1
 * with msg_set (ENOMEM). */
int idxtab_init(struct idxtab *t, size_t expect);

/* Free the slots (t zeroed: idxtab_init may follow). */
void idxtab_free(struct idxtab *t);

/* The first slot to probe for hash h, and the one after slot i. */
static inline size_t idxtab_first(const struct idxtab *t, uint64_t h)
{
	return (size_t)h & t->mask;
}

static inline size_t idxtab_next(const struct idxtab *t, size_t i)
{
	return (i + 1) & t->mask;
}

/*
 * Put index idx into empty slot i (where the probe for its hash ended),
 * then double the slots if more than half are used, rehashing each
 * element with hash(ctx, index). 0, or -1 with msg_set (ENOMEM: idx is
 * in the table all the same). idx must be below UINT32_MAX.
 */
int idxtab_put(struct idxtab *t, size_t i, uint32_t idx, idxtab_hash_fn hash,
	       const void *ctx);

#endif /* PALLOC_IDXTAB_H */
